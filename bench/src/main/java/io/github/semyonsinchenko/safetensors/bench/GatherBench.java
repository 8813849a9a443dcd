package io.github.semyonsinchenko.safetensors.bench;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.kernels.Conversion;
import io.github.semyonsinchenko.safetensors.kernels.IndexType;
import io.github.semyonsinchenko.safetensors.kernels.Kernels;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Locale;
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
 * Row gathers from an F16 embedding table [V, 256] of {@code tableBytes} bytes (1 GiB: V = 2^21
 * rows of 512 bytes) with {@code indices} uniformly random row indices (65,536 per call, so
 * 32 MiB gathered, or 64 MiB written as F32 by gather-and-convert). The indices are drawn once
 * per trial with a fixed seed; every call gathers the same rows, but 32 MiB of random rows out
 * of 1 GiB do not stay in cache.
 *
 * <p>{@code memory=heap} puts the table ({@code short[]}), the indices ({@code int[]} or
 * {@code long[]}) and the destination in Java arrays; {@code offheap} puts all three off-heap.
 * Each call includes the facade's checks, which read every index once.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--add-modules=jdk.incubator.vector",
        "--sun-misc-unsafe-memory-access=allow", "-Xmx4g"})
public class GatherBench {
    /** F16 values per row: 512-byte rows. */
    static final long ROW_ELEMS = 256;

    @Param({"u32", "i64"})
    public String index;

    @Param({"scalar", "vector", "native"})
    public String path;

    @Param({"heap", "offheap"})
    public String memory;

    @Param({"1073741824"})
    public long tableBytes;

    @Param({"65536"})
    public int indices;

    private Arena arena;
    private MemorySegment table;
    private MemorySegment idx;
    private IndexType type;
    private MemorySegment rowsOut;
    private MemorySegment floatsOut;

    @Setup(Level.Trial)
    public void setUp() {
        Buffers.selectPath(path);
        boolean heap = Buffers.heap(memory);
        type = IndexType.valueOf(index.toUpperCase(Locale.ROOT));
        arena = Arena.ofShared();
        long rowBytes = ROW_ELEMS * 2;
        long rows = tableBytes / rowBytes;
        table = Buffers.allocate(Dtype.F16, rows * rowBytes, heap, arena);
        Buffers.fillF16Table(table, 7);
        idx = Buffers.randomIndices(type, indices, rows, heap, arena);
        rowsOut = Buffers.allocate(Dtype.F16, indices * rowBytes, heap, arena);
        floatsOut = Buffers.allocate(Dtype.F32, indices * ROW_ELEMS * 4, heap, arena);
        rowsOut.fill((byte) 1);
        floatsOut.fill((byte) 1);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        arena.close();
    }

    /** {@code indices} rows of 512 bytes, copied as bytes. */
    @Benchmark
    public void gather() {
        Kernels.gather(table, ROW_ELEMS * 2, idx, type, rowsOut);
    }

    /** The same rows, written as F32 (F16 to F32 on the way). */
    @Benchmark
    public void gatherF16ToF32() {
        Kernels.gatherConvert(Conversion.F16_TO_F32, table, ROW_ELEMS, idx, type, floatsOut);
    }
}
