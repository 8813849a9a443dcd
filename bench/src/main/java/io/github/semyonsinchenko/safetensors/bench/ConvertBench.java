package io.github.semyonsinchenko.safetensors.bench;

import io.github.semyonsinchenko.safetensors.kernels.Conversion;
import io.github.semyonsinchenko.safetensors.kernels.Kernels;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The 16/32-bit float conversions through {@link Kernels#convert(Conversion, MemorySegment,
 * MemorySegment, long)}, on each path, heap and off-heap, in cache and memory-bound.
 *
 * <p>{@code size} is the number of SOURCE bytes (the tensor as it sits in the file): 4096 (in
 * L1/L2) and 64 MiB (memory-bound). The destination is {@code size / sourceBytes * targetBytes}.
 * Each call includes the facade's argument checks, as a user's call does.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--add-modules=jdk.incubator.vector",
        "--sun-misc-unsafe-memory-access=allow", "-Xmx4g"})
public class ConvertBench {
    @Param({"BF16_TO_F32", "F16_TO_F32", "F32_TO_BF16_RNE", "F32_TO_F16_RNE", "F16_TO_BF16", "BF16_TO_F16"})
    public String conversion;

    @Param({"scalar", "vector", "native"})
    public String path;

    @Param({"heap", "offheap"})
    public String memory;

    @Param({"4096", "67108864"})
    public long size;

    private Arena arena;
    private Conversion c;
    private MemorySegment src;
    private MemorySegment dst;
    private long count;

    @Setup(Level.Trial)
    public void setUp() {
        Buffers.selectPath(path);
        c = Conversion.valueOf(conversion);
        arena = Arena.ofShared();
        Buffers.ConversionBuffers b = Buffers.conversion(c, size, Buffers.heap(memory), arena);
        src = b.src();
        dst = b.dst();
        count = b.count();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        arena.close();
    }

    @Benchmark
    public void convert() {
        Kernels.convert(c, src, dst, count);
    }
}
