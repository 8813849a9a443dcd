package io.github.semyonsinchenko.safetensors.bench;

import static io.github.semyonsinchenko.safetensors.format.LittleEndian.F32;
import static io.github.semyonsinchenko.safetensors.format.LittleEndian.F64;
import static io.github.semyonsinchenko.safetensors.format.LittleEndian.I16;
import static io.github.semyonsinchenko.safetensors.format.LittleEndian.I32;
import static io.github.semyonsinchenko.safetensors.format.LittleEndian.I64;
import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.kernels.Conversion;
import io.github.semyonsinchenko.safetensors.kernels.Implementation;
import io.github.semyonsinchenko.safetensors.kernels.IndexType;
import io.github.semyonsinchenko.safetensors.kernels.Kernels;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * What every benchmark shares: choosing the kernel path of the forked JVM, allocating heap or
 * off-heap buffers, and filling them with realistic values.
 *
 * <p><b>Heap</b> buffers are {@link MemorySegment#ofArray} views of a Java array of the element's
 * own type ({@code short[]} for F16/BF16, {@code float[]} for F32, ...), which is what a caller
 * holding arrays passes. <b>Off-heap</b> buffers come from an {@link Arena#ofShared()} arena,
 * 64-byte aligned, like an mmap slice or a buffer a reader allocated.
 */
final class Buffers {
    private Buffers() {}


    /**
     * Makes every {@link Kernels} call of this JVM run {@code path} ("scalar", "vector", "native")
     * through the public switch {@value Kernels#PATH_PROPERTY}. JMH forks one JVM per parameter
     * combination, so the property is set before the facade picks its path; with {@code -f 0} (one
     * JVM for everything) the second path would silently be the first, so that fails here instead.
     */
    static void selectPath(String path) {
        Implementation want = Implementation.valueOf(path.toUpperCase(Locale.ROOT));
        System.setProperty(Kernels.PATH_PROPERTY, path);
        Implementation got = Kernels.implementation();
        if (got != want) {
            throw new IllegalStateException("asked for the " + want + " kernels but this JVM already runs " + got
                    + " (the path is fixed per JVM: do not run the benchmarks with -f 0)");
        }
    }

    static boolean heap(String memory) {
        return switch (memory) {
            case "heap" -> true;
            case "offheap" -> false;
            default -> throw new IllegalArgumentException("memory must be heap or offheap, got " + memory);
        };
    }

    /** {@code bytes} bytes for elements of {@code d}: an array of d's Java type, or off-heap memory. */
    static MemorySegment allocate(Dtype d, long bytes, boolean heap, Arena arena) {
        if (!heap) {
            return arena.allocate(bytes, 64);
        }
        long n = bytes / d.byteSize();
        if (n * d.byteSize() != bytes || n > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException(bytes + " bytes do not fit one " + d + " array");
        }
        int len = (int) n;
        return switch (d) {
            case I8, U8 -> MemorySegment.ofArray(new byte[len]);
            case I16, U16, F16, BF16 -> MemorySegment.ofArray(new short[len]);
            case I32, U32 -> MemorySegment.ofArray(new int[len]);
            case F32 -> MemorySegment.ofArray(new float[len]);
            case I64, U64 -> MemorySegment.ofArray(new long[len]);
            case F64 -> MemorySegment.ofArray(new double[len]);
            default -> throw new IllegalArgumentException("no benchmark buffer for " + d);
        };
    }

    /** The buffers of a conversion benchmark: {@code count} source elements and room for their results. */
    record ConversionBuffers(MemorySegment src, MemorySegment dst, long count) {}

    /**
     * The source ({@code size} bytes, filled with seed 42) and destination (filled with seed 43, so
     * every page is touched before timing) of conversion {@code c}: every conversion benchmark
     * measures the same data.
     */
    static ConversionBuffers conversion(Conversion c, long size, boolean heap, Arena arena) {
        long count = size / c.sourceBytes();
        MemorySegment src = allocate(c.source(), size, heap, arena);
        MemorySegment dst = allocate(c.target(), count * c.targetBytes(), heap, arena);
        fill(src, c.source(), 42);
        fill(dst, c.target(), 43);
        return new ConversionBuffers(src, dst, count);
    }

    /** AnonHugePages of this process in kB (from /proc/self/smaps_rollup), or -1 when unknown. */
    static long anonHugePagesKb() {
        try {
            for (String line : java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/self/smaps_rollup"))) {
                if (line.startsWith("AnonHugePages:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", ""));
                }
            }
        } catch (java.io.IOException | RuntimeException e) {
            return -1;
        }
        return -1;
    }

    /**
     * Fills {@code seg} with values of {@code d} such as a model holds: finite floats of mixed sign
     * and magnitude (no NaN, Inf or subnormal, which would only exercise the rare branches of the
     * scalar path), and integers over their whole range. Deterministic for a seed.
     */
    static void fill(MemorySegment seg, Dtype d, long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        long n = seg.byteSize() / d.byteSize();
        switch (d) {
            case F32 -> {
                for (long i = 0; i < n; i++) {
                    seg.set(F32, i * 4, value(rnd));
                }
            }
            case BF16 -> {
                for (long i = 0; i < n; i++) {
                    seg.set(I16, i * 2, (short) (Float.floatToRawIntBits(value(rnd)) >>> 16));
                }
            }
            case F16 -> {
                for (long i = 0; i < n; i++) {
                    seg.set(I16, i * 2, Float.floatToFloat16(value(rnd)));
                }
            }
            case F64 -> {
                for (long i = 0; i < n; i++) {
                    seg.set(F64, i * 8,
                            (double) value(rnd) * (1 + rnd.nextDouble() * 0x1p-20));
                }
            }
            default -> {
                // Integers: random bits over the whole range, 8 bytes at a time.
                long i = 0;
                for (; i + 8 <= seg.byteSize(); i += 8) {
                    seg.set(I64, i, rnd.nextLong());
                }
                for (; i < seg.byteSize(); i++) {
                    seg.set(ValueLayout.JAVA_BYTE, i, (byte) rnd.nextInt());
                }
            }
        }
    }

    /** A finite F32 of random sign, mantissa and magnitude in [2^-12, 2^12): normal in F16 and BF16. */
    private static float value(SplittableRandom rnd) {
        int bits = rnd.nextInt();
        int exp = 127 - 12 + rnd.nextInt(24);
        return Float.intBitsToFloat((bits & 0x807FFFFF) | (exp << 23));
    }

    /**
     * Fills a large table fast: random bits, then the F16 exponent of every 16-bit value clamped
     * below 31 so none is Inf or NaN (the gathers copy bytes; gather-and-convert reads the values).
     */
    static void fillF16Table(MemorySegment seg, long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        for (long i = 0; i + 8 <= seg.byteSize(); i += 8) {
            // Bit 14 of each F16 cleared: exponent <= 15, so every value is finite, |x| < 2.
            seg.set(I64, i, rnd.nextLong() & 0xBFFF_BFFF_BFFF_BFFFL);
        }
    }

    /** {@code count} gather indices drawn uniformly from {@code [0, rows)} with a fixed seed, as U32 or I64. */
    static MemorySegment randomIndices(IndexType type, int count, long rows, boolean heap, Arena arena) {
        MemorySegment idx = allocate(type == IndexType.U32 ? Dtype.U32 : Dtype.I64, (long) count * type.bytes(), heap,
                arena);
        SplittableRandom rnd = new SplittableRandom(11);
        for (long i = 0; i < count; i++) {
            long r = rnd.nextLong(rows);
            if (type == IndexType.U32) {
                idx.set(I32, i * 4, (int) r);
            } else {
                idx.set(I64, i * 8, r);
            }
        }
        return idx;
    }
}
