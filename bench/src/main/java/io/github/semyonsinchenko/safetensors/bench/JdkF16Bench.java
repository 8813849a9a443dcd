package io.github.semyonsinchenko.safetensors.bench;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.format.LittleEndian;
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
 * The JDK baseline for F16 (path "jdk" in the report): a plain loop over
 * {@link Float#float16ToFloat} / {@link Float#floatToFloat16}, which HotSpot intrinsifies (and
 * may auto-vectorize). This is what a Java user writes without the kernels. Same sizes and
 * meaning of {@code size} (source bytes) as {@link ConvertBench}.
 *
 * <p>Heap: {@code short[]} to {@code float[]} (and back) by index, the loop the JIT handles best.
 * Off-heap: the same loop on {@link MemorySegment} get/set with little-endian unaligned layouts.
 * It skips what the facade does (argument checks, exact NaN payloads), so it is a lower bound on
 * a "plain JDK" conversion's cost.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--add-modules=jdk.incubator.vector",
        "--sun-misc-unsafe-memory-access=allow", "-Xmx4g"})
public class JdkF16Bench {
    @Param({"F16_TO_F32", "F32_TO_F16_RNE"})
    public String conversion;

    @Param({"heap", "offheap"})
    public String memory;

    @Param({"4096", "67108864"})
    public long size;

    private Arena arena;
    private boolean widen;
    private boolean heap;
    private short[] halfs;
    private float[] floats;
    private MemorySegment halfSeg;
    private MemorySegment floatSeg;
    private int count;

    @Setup(Level.Trial)
    public void setUp() {
        widen = switch (conversion) {
            case "F16_TO_F32" -> true;
            case "F32_TO_F16_RNE" -> false;
            default -> throw new IllegalArgumentException("no JDK loop for " + conversion);
        };
        heap = Buffers.heap(memory);
        count = Math.toIntExact(size / (widen ? 2 : 4));
        arena = Arena.ofShared();
        halfSeg = Buffers.allocate(Dtype.F16, 2L * count, heap, arena);
        floatSeg = Buffers.allocate(Dtype.F32, 4L * count, heap, arena);
        Buffers.fill(halfSeg, Dtype.F16, 42);
        Buffers.fill(floatSeg, Dtype.F32, 43);
        if (heap) {
            halfs = (short[]) halfSeg.heapBase().orElseThrow();
            floats = (float[]) floatSeg.heapBase().orElseThrow();
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        arena.close();
    }

    @Benchmark
    public void convert() {
        if (heap) {
            if (widen) {
                heapWiden(halfs, floats, count);
            } else {
                heapNarrow(floats, halfs, count);
            }
        } else if (widen) {
            segmentWiden(halfSeg, floatSeg, count);
        } else {
            segmentNarrow(floatSeg, halfSeg, count);
        }
    }

    private static void heapWiden(short[] src, float[] dst, int n) {
        for (int i = 0; i < n; i++) {
            dst[i] = Float.float16ToFloat(src[i]);
        }
    }

    private static void heapNarrow(float[] src, short[] dst, int n) {
        for (int i = 0; i < n; i++) {
            dst[i] = Float.floatToFloat16(src[i]);
        }
    }

    private static void segmentWiden(MemorySegment src, MemorySegment dst, long n) {
        for (long i = 0; i < n; i++) {
            dst.set(LittleEndian.F32, i * 4, Float.float16ToFloat(src.get(LittleEndian.I16, i * 2)));
        }
    }

    private static void segmentNarrow(MemorySegment src, MemorySegment dst, long n) {
        for (long i = 0; i < n; i++) {
            dst.set(LittleEndian.I16, i * 2, Float.floatToFloat16(src.get(LittleEndian.F32, i * 4)));
        }
    }
}
