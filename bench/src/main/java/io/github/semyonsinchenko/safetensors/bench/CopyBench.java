package io.github.semyonsinchenko.safetensors.bench;

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
 * The same-byte baseline: {@link MemorySegment#copy(MemorySegment, long, MemorySegment, long,
 * long)} of {@code bytes} bytes, heap ({@code byte[]} to {@code byte[]}) and off-heap. The sizes
 * are every byte count a kernel of the other benchmarks reads or writes, so the report can set
 * each kernel against a copy of exactly as many bytes as it writes (and as it reads):
 * 2, 4 and 8 KiB for the 4 KiB conversions; 32, 64, 128 and 256 MiB for the 64 MiB
 * conversions and the gathers (65,536 rows of 512 bytes = 32 MiB, as F32 = 64 MiB).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--add-modules=jdk.incubator.vector",
        "--sun-misc-unsafe-memory-access=allow", "-Xmx4g"})
public class CopyBench {
    @Param({"2048", "4096", "8192", "33554432", "67108864", "134217728", "268435456"})
    public long bytes;

    @Param({"heap", "offheap"})
    public String memory;

    private Arena arena;
    private MemorySegment src;
    private MemorySegment dst;

    @Setup(Level.Trial)
    public void setUp() {
        boolean heap = Buffers.heap(memory);
        arena = Arena.ofShared();
        src = heap ? MemorySegment.ofArray(new byte[Math.toIntExact(bytes)]) : arena.allocate(bytes, 64);
        dst = heap ? MemorySegment.ofArray(new byte[Math.toIntExact(bytes)]) : arena.allocate(bytes, 64);
        src.fill((byte) 1);
        dst.fill((byte) 2);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        arena.close();
    }

    @Benchmark
    public void copy() {
        MemorySegment.copy(src, 0, dst, 0, bytes);
    }
}
