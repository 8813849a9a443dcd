package io.github.semyonsinchenko.safetensors.kernels;

import io.github.semyonsinchenko.safetensors.format.LittleEndian;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Locale;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * {@link Kernels#convertBits}, the one-element entry point, against the bulk
 * {@link Kernels#convert} on every path, bit for bit: every 8- and 16-bit source pattern (all
 * 65,536 F16 and BF16 values, NaN payloads included; every F8 pattern), the F32 specials and rounding ties of
 * {@link ConversionPathsTest#specialFloats}, integer and F64 boundaries, and seeded random values.
 */
class ConvertBitsTest {
    @AfterAll
    static void restore() {
        KernelPath.restoreNativeIsa();
    }

    @Test
    void every16BitPatternOfEverySixteenBitSource() {
        long[] all = new long[0x10000];
        for (int h = 0; h < all.length; h++) {
            all[h] = h;
        }
        int checked = 0;
        for (Conversion c : Conversion.values()) {
            if (c.sourceBytes() == 2) {
                check(c, all);
                checked++;
            }
        }
        assertEquals(6, checked, "BF16/F16/I16/U16 to F32, F16<->BF16");
    }

    @Test
    void every8BitPattern() {
        long[] all = new long[256];
        for (int b = 0; b < all.length; b++) {
            all[b] = b;
        }
        int checked = 0;
        for (Conversion c : Conversion.values()) {
            if (c.sourceBytes() == 1) {
                check(c, all);
                checked++;
            }
        }
        assertEquals(7, checked, "I8, U8 and the five F8 formats to F32");
    }

    @Test
    void f32SpecialsTiesAndRandomValues() {
        int[] specials = ConversionPathsTest.specialFloats();
        SplittableRandom random = new SplittableRandom(20261123);
        long[] values = new long[specials.length + (1 << 16)];
        for (int i = 0; i < values.length; i++) {
            values[i] = Integer.toUnsignedLong(i < specials.length ? specials[i] : random.nextInt());
        }
        for (Conversion c : Conversion.values()) {
            if (c.sourceBytes() == 4) {
                check(c, values);
            }
        }
    }

    @Test
    void sixtyFourBitSources() {
        long[] fixed = {
            0, 1, -1, Long.MAX_VALUE, Long.MIN_VALUE, (1L << 53) + 1, (1L << 24) + 1, -(1L << 24) - 1,
            0x8000_0080_0000_0000L, 0xFFFF_FF7F_FFFF_FFFFL, 0xFFFF_FF80_0000_0000L, 0x7FFF_FF80_0000_0001L,
            Double.doubleToRawLongBits(-0.0), Double.doubleToRawLongBits(Double.POSITIVE_INFINITY),
            Double.doubleToRawLongBits(Double.NEGATIVE_INFINITY), Double.doubleToRawLongBits(Double.MIN_VALUE),
            Double.doubleToRawLongBits(Float.MAX_VALUE * 2.0), Double.doubleToRawLongBits(Float.MIN_VALUE / 2.0),
            Double.doubleToRawLongBits(1.0 + 0x1p-24), Double.doubleToRawLongBits(1.0 + 0x1p-24 + 0x1p-52),
            0x7FF0_0000_0000_0001L, 0x7FF8_0000_0000_0000L, 0xFFF4_0000_2000_0001L, 0x7FFF_FFFF_FFFF_FFFFL,
        };
        SplittableRandom random = new SplittableRandom(7);
        long[] values = new long[fixed.length + (1 << 16)];
        System.arraycopy(fixed, 0, values, 0, fixed.length);
        for (int i = fixed.length; i < values.length; i++) {
            values[i] = random.nextLong();
        }
        check(Conversion.I64_TO_F32, values);
        check(Conversion.U64_TO_F32, values);
        check(Conversion.F64_TO_F32, values);
        check(Conversion.I64_TO_F64, values);
        check(Conversion.U64_TO_F64, values);
    }

    @Test
    void resultsAreZeroExtendedTargetBits() {
        assertEquals(0xFFC0L, Kernels.convertBits(Conversion.F32_TO_BF16_RNE, 0xFF800001L), "negative NaN");
        assertEquals(0xBF800000L, Kernels.convertBits(Conversion.BF16_TO_F32, 0xBF80L), "-1.0");
        assertEquals(0xBF800000L, Kernels.convertBits(Conversion.BF16_TO_F32, 0xFFFF_BF80L), "high bits ignored");
        assertEquals(0x7F802000L, Kernels.convertBits(Conversion.F16_TO_F32, 0x7C01L), "signalling NaN kept");
    }

    /** Every value of {@code sources} (raw bits) per element and in bulk on every path: same bits. */
    private static void check(Conversion c, long[] sources) {
        int n = sources.length;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment src = arena.allocate((long) n * c.sourceBytes());
            MemorySegment expected = arena.allocate((long) n * c.targetBytes());
            for (int i = 0; i < n; i++) {
                put(src, i, c.sourceBytes(), sources[i]);
                put(expected, i, c.targetBytes(), Kernels.convertBits(c, sources[i]));
            }
            MemorySegment bulk = arena.allocate((long) n * c.targetBytes());
            for (KernelPath p : KernelPath.all()) {
                bulk.fill((byte) 0x5A);
                p.activate();
                Kernels.convert(p.backend(), c, src, bulk, n);
                long m = expected.mismatch(bulk);
                if (m >= 0) {
                    long i = m / c.targetBytes();
                    throw new AssertionError(String.format(Locale.ROOT, "%s on %s, element %d (source 0x%X): "
                            + "convertBits gives 0x%X, the bulk kernel 0x%X", c, p, i, sources[(int) i],
                            get(expected, i, c.targetBytes()), get(bulk, i, c.targetBytes())));
                }
            }
            assertTrue(n > 0);
        } finally {
            KernelPath.restoreNativeIsa();
        }
    }

    private static void put(MemorySegment s, long i, int bytes, long bits) {
        switch (bytes) {
            case 1 -> s.set(ValueLayout.JAVA_BYTE, i, (byte) bits);
            case 2 -> s.set(LittleEndian.I16, i * 2, (short) bits);
            case 4 -> s.set(LittleEndian.I32, i * 4, (int) bits);
            default -> s.set(LittleEndian.I64, i * 8, bits);
        }
    }

    private static long get(MemorySegment s, long i, int bytes) {
        return switch (bytes) {
            case 2 -> s.get(LittleEndian.I16, i * 2) & 0xFFFFL;
            case 4 -> Integer.toUnsignedLong(s.get(LittleEndian.I32, i * 4));
            default -> s.get(LittleEndian.I64, i * 8);
        };
    }
}
