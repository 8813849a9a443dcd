package io.github.semyonsinchenko.safetensors.bench;

import io.github.semyonsinchenko.safetensors.kernels.Conversion;
import io.github.semyonsinchenko.safetensors.kernels.Kernels;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.AuxCounters;
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
 * What the native fault guard costs a conversion: {@link ConvertBench}'s native off-heap calls, timed
 * in blocks of about {@value #BLOCK_BYTES} source bytes with the guard switched on and off in turn
 * ({@link Kernels#nativeFaultGuard}).
 *
 * <p>Each invocation is one group of four blocks, guard on, off, off, on, each block timed alone;
 * {@link Sides} adds the times up per side, and JMH reports the sums of each iteration as secondary
 * results, which bench/python/report.py reads. Blocks tens of microseconds apart see the same
 * machine, whereas iterations apart, or two JVMs (one started with
 * {@code SAFETENSORS_NATIVE_FAULT_GUARD=0}), differed by more than the guard can cost: where code and
 * data landed, not the guard (bench/README.md, "Targets", the fault guard). So both sides share the
 * JVM, the compiled code and the buffers.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--add-modules=jdk.incubator.vector",
        "--sun-misc-unsafe-memory-access=allow", "-Xmx4g"})
public class FaultGuardBench {
    /** Source bytes per timed block: 256 calls of 4 KiB, one call of 64 MiB. */
    static final long BLOCK_BYTES = 1L << 20;

    @Param({"BF16_TO_F32", "F32_TO_BF16_RNE"})
    public String conversion;

    @Param({"4096", "67108864"})
    public long size;

    private Arena arena;
    private Conversion c;
    private MemorySegment src;
    private MemorySegment dst;
    private long count;
    private int callsPerBlock;

    /** Nanoseconds and calls per side, summed over one iteration (reset by JMH's iteration set-up). */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class Sides {
        public long onNanos;
        public long offNanos;
        public long callsPerSide;

        @Setup(Level.Iteration)
        public void reset() {
            onNanos = 0;
            offNanos = 0;
            callsPerSide = 0;
        }
    }

    @Setup(Level.Trial)
    public void setUp() {
        Buffers.selectPath("native");
        if (!Kernels.nativeFaultGuardActive()) {
            throw new IllegalStateException("the native fault guard is not active here (is"
                    + " SAFETENSORS_NATIVE_FAULT_GUARD=0 set?): nothing to measure");
        }
        c = Conversion.valueOf(conversion);
        arena = Arena.ofShared();
        Buffers.ConversionBuffers b = Buffers.conversion(c, size, false, arena);
        src = b.src();
        dst = b.dst();
        count = b.count();
        callsPerBlock = (int) Math.max(1, BLOCK_BYTES / size);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        Kernels.nativeFaultGuard(true);
        arena.close();
    }

    /** One group: blocks with the guard on, off, off, on. */
    @Benchmark
    public void pairedGroup(Sides sides) {
        long on = block(true);
        long off = block(false);
        off += block(false);
        on += block(true);
        sides.onNanos += on;
        sides.offNanos += off;
        sides.callsPerSide += 2L * callsPerBlock;
    }

    private long block(boolean guard) {
        if (Kernels.nativeFaultGuard(guard) != guard) {
            throw new IllegalStateException("could not switch the native fault guard " + (guard ? "on" : "off"));
        }
        long t0 = System.nanoTime();
        for (int i = 0; i < callsPerBlock; i++) {
            Kernels.convert(c, src, dst, count);
        }
        return System.nanoTime() - t0;
    }
}
