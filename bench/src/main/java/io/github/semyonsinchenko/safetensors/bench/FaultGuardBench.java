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
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.runner.IterationType;

/**
 * What the native fault guard costs a conversion: {@link ConvertBench}'s native off-heap calls,
 * with the guard switched on and off in turn inside one fork ({@link Kernels#nativeFaultGuard}).
 * Both sides then share the JVM, its compiled code, the buffers and the environment, and differ in
 * the guard alone. Run as two JVMs (one with {@code SAFETENSORS_NATIVE_FAULT_GUARD=0}), the sides
 * differed by 24% one way in every round of one report and by 19% the other way in every round of
 * the next: where code and data landed, not the guard.
 *
 * <p>Measured iterations go on, off, off, on, and so on ({@link #guardOn(int)}), which cancels a
 * steady drift within each group of four; bench/python/report.py splits JMH's raw iteration data
 * by that order. Warm-up iterations alternate too, so both branches are compiled and warm.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--add-modules=jdk.incubator.vector",
        "--sun-misc-unsafe-memory-access=allow", "-Xmx4g"})
public class FaultGuardBench {
    @Param({"BF16_TO_F32", "F32_TO_BF16_RNE"})
    public String conversion;

    @Param({"4096", "67108864"})
    public long size;

    private Arena arena;
    private Conversion c;
    private MemorySegment src;
    private MemorySegment dst;
    private long count;
    private int warmups;
    private int measured;

    /** Whether measured iteration {@code i} (from 0) runs with the guard: on, off, off, on, repeated. */
    public static boolean guardOn(int i) {
        return i % 4 == 0 || i % 4 == 3;
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
    }

    @Setup(Level.Iteration)
    public void switchGuard(IterationParams iteration) {
        boolean on = iteration.getType() == IterationType.MEASUREMENT ? guardOn(measured++) : warmups++ % 2 == 0;
        if (Kernels.nativeFaultGuard(on) != on) {
            throw new IllegalStateException("could not switch the native fault guard " + (on ? "on" : "off"));
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        Kernels.nativeFaultGuard(true);
        arena.close();
    }

    @Benchmark
    public void convert() {
        Kernels.convert(c, src, dst, count);
    }
}
