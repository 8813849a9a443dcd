package io.github.semyonsinchenko.safetensors.bench;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.kernels.Conversion;
import io.github.semyonsinchenko.safetensors.kernels.HugePages;
import io.github.semyonsinchenko.safetensors.kernels.IndexType;
import io.github.semyonsinchenko.safetensors.kernels.Kernels;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
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
 * {@link GatherBench} on the native path with the table in transparent huge pages (memory
 * "offheap-thp"): the 1 GiB table comes from the library's {@link HugePages#allocate} (anonymous
 * mmap advised {@code MADV_HUGEPAGE}), as a loader puts a table it reads at random rows. numpy
 * does the same for every array of 4 MiB or more on Linux, so its {@code numpy.take} reads a
 * table with 2 MiB pages, while a plain {@code Arena} allocation (or the Java heap without
 * {@code -XX:+UseTransparentHugePages}) has 4 KiB pages and a TLB miss on nearly every random row.
 * The indices and destination are ordinary off-heap memory.
 *
 * <p>{@code threads} 2 is the parallel gather ({@code Kernels.gather} with an executor): the
 * calling thread and one pool thread each gather half the indices. {@code memory} "offheap" puts
 * the table in ordinary 4 KiB pages instead, for the report's information rows.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--add-modules=jdk.incubator.vector",
        "--sun-misc-unsafe-memory-access=allow", "-Xmx4g"})
public class GatherThpBench {
    @Param({"u32", "i64"})
    public String index;

    @Param({"native"})
    public String path;

    @Param({"offheap-thp", "offheap"})
    public String memory;

    @Param({"1", "2"})
    public int threads;

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
    private ExecutorService pool;

    @Setup(Level.Trial)
    public void setUp() {
        Buffers.selectPath(path);
        type = IndexType.valueOf(index.toUpperCase(Locale.ROOT));
        arena = Arena.ofShared();
        long rowBytes = GatherBench.ROW_ELEMS * 2;
        long rows = tableBytes / rowBytes;
        table = switch (memory) {
            case "offheap-thp" -> HugePages.allocate(arena, rows * rowBytes);
            case "offheap" -> arena.allocate(rows * rowBytes, 64);
            default -> throw new IllegalArgumentException("memory must be offheap-thp or offheap, got " + memory);
        };
        pool = threads > 1 ? Executors.newFixedThreadPool(threads - 1) : null;
        Buffers.fillF16Table(table, 7);
        // Evidence that the advice took: about 1 GiB here means the table is in 2 MiB pages.
        System.err.println("GatherThpBench: AnonHugePages " + Buffers.anonHugePagesKb() + " kB after filling the table");
        idx = Buffers.randomIndices(type, indices, rows, false, arena);
        rowsOut = Buffers.allocate(Dtype.F16, indices * rowBytes, false, arena);
        floatsOut = Buffers.allocate(Dtype.F32, indices * GatherBench.ROW_ELEMS * 4, false, arena);
        rowsOut.fill((byte) 1);
        floatsOut.fill((byte) 1);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        if (pool != null) {
            pool.shutdownNow();
        }
        arena.close();
    }

    @Benchmark
    public void gather() {
        Kernels.gather(table, GatherBench.ROW_ELEMS * 2, idx, type, rowsOut, pool, threads);
    }

    @Benchmark
    public void gatherF16ToF32() {
        Kernels.gatherConvert(Conversion.F16_TO_F32, table, GatherBench.ROW_ELEMS, idx, type, floatsOut, pool,
                threads);
    }
}
