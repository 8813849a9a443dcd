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
 * The rest of the facade's conversions (the two round-toward-zero narrowings, the integer and F64
 * widenings to F32) at one size, 64 MiB of source, off-heap only, to keep the default run short:
 * the heap/off-heap and in-cache differences are measured on the 16/32-bit conversions by
 * {@link ConvertBench}, which this class mirrors (same {@code size} meaning, same call).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--add-modules=jdk.incubator.vector",
        "--sun-misc-unsafe-memory-access=allow", "-Xmx4g"})
public class ConvertOtherBench {
    @Param({"F32_TO_BF16_TRUNC", "F32_TO_F16_TRUNC", "I8_TO_F32", "U8_TO_F32", "I16_TO_F32", "U16_TO_F32",
            "I32_TO_F32", "U32_TO_F32", "I64_TO_F32", "U64_TO_F32", "F64_TO_F32"})
    public String conversion;

    @Param({"scalar", "vector", "native"})
    public String path;

    @Param({"offheap"})
    public String memory;

    @Param({"67108864"})
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
