package io.github.semyonsinchenko.safetensors.kernels;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.format.LittleEndian;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The 8-bit float widenings against ml_dtypes, all 256 patterns of each format, on every path:
 * the expected F32 bits are {@code resources/kernels/f8-to-f32-ml_dtypes.tsv}, written by ml_dtypes
 * (its first line says how). Every non-NaN value is bit-exact; a NaN is a NaN of the same sign, and
 * bit-exact too except for F8_E5M2, whose NaN payload we keep as F16 to F32 keeps it (ml_dtypes
 * returns the canonical quiet NaN).
 */
class EightBitFloatsTest {
    private static final Map<Conversion, String> COLUMNS = Map.of(
            Conversion.F8_E4M3_TO_F32, "float8_e4m3fn",
            Conversion.F8_E5M2_TO_F32, "float8_e5m2",
            Conversion.F8_E8M0_TO_F32, "float8_e8m0fnu",
            Conversion.F8_E4M3FNUZ_TO_F32, "float8_e4m3fnuz",
            Conversion.F8_E5M2FNUZ_TO_F32, "float8_e5m2fnuz");

    static Map<String, int[]> expected;

    @BeforeAll
    static void readFixture() throws IOException {
        expected = new LinkedHashMap<>();
        try (var in = EightBitFloatsTest.class.getResourceAsStream("/kernels/f8-to-f32-ml_dtypes.tsv");
             var reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            List<String> lines = reader.lines().filter(l -> !l.startsWith("#")).toList();
            String[] names = lines.get(0).split("\t");
            for (int c = 1; c < names.length; c++) {
                expected.put(names[c], new int[256]);
            }
            assertEquals(257, lines.size());
            for (String line : lines.subList(1, lines.size())) {
                String[] f = line.split("\t");
                int b = Integer.parseInt(f[0], 16);
                for (int c = 1; c < names.length; c++) {
                    expected.get(names[c])[b] = Integer.parseUnsignedInt(f[c], 16);
                }
            }
        }
    }

    @AfterAll
    static void restore() {
        KernelPath.restoreNativeIsa();
    }

    static void assertSame(Conversion c, int pattern, int want, int got, String where) {
        String what = String.format(Locale.ROOT, "%s %s pattern %02x: expected %08x, got %08x", where, c, pattern,
                want, got);
        if (Float.isNaN(Float.intBitsToFloat(want))) {
            assertTrue(Float.isNaN(Float.intBitsToFloat(got)), what);
            assertEquals(want >>> 31, got >>> 31, "the sign of the NaN; " + what);
            if (c == Conversion.F8_E5M2_TO_F32) {
                int f16 = (int) Kernels.convertBits(Conversion.F16_TO_F32, pattern << 8);
                assertEquals(f16, got, "F8_E5M2 NaN widens as the F16 it is the top byte of; " + what);
            } else {
                assertEquals(want, got, what);
            }
        } else {
            assertEquals(want, got, what);
        }
    }

    @Test
    void everyPatternOnEveryPathMatchesMlDtypes() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment src = arena.allocate(256);
            for (int b = 0; b < 256; b++) {
                src.set(ScalarKernels.I8, b, (byte) b);
            }
            MemorySegment dst = arena.allocate(256 * 4);
            int checked = 0;
            for (var e : COLUMNS.entrySet()) {
                Conversion c = e.getKey();
                int[] want = expected.get(e.getValue());
                assertEquals(Dtype.F32, c.target());
                for (int b = 0; b < 256; b++) {
                    assertSame(c, b, want[b], (int) Kernels.convertBits(c, b), "convertBits");
                    assertSame(c, b, want[b], (int) Kernels.convertBits(c, b | 0xFFFFFF00L), "convertBits, high bits set");
                }
                for (KernelPath path : KernelPath.all()) {
                    path.activate();
                    dst.fill((byte) 0x5A);
                    Kernels.convert(path.backend(), c, src, dst, 256);
                    for (int b = 0; b < 256; b++) {
                        assertSame(c, b, want[b], dst.get(LittleEndian.I32, b * 4L), path.name());
                    }
                    // Heap arrays through the public overload.
                    byte[] heapSrc = src.toArray(ScalarKernels.I8);
                    float[] heapDst = new float[258];
                    Kernels.convert(c, heapSrc, 0, heapDst, 1, 256);
                    for (int b = 0; b < 256; b++) {
                        assertSame(c, b, want[b], Float.floatToRawIntBits(heapDst[b + 1]), path.name() + " heap");
                    }
                    checked++;
                }
            }
            assertEquals(COLUMNS.size() * KernelPath.all().size(), checked);
        } finally {
            KernelPath.restoreNativeIsa();
        }
    }

    @Test
    void f32ToF64KeepsEveryValueAndNaNPayload() {
        int[] specials = ConversionPathsTest.specialFloats();
        for (int f : specials) {
            long got = Kernels.convertBits(Conversion.F32_TO_F64, f);
            float x = Float.intBitsToFloat(f);
            if (Float.isNaN(x)) {
                assertTrue(Double.isNaN(Double.longBitsToDouble(got)));
                assertEquals(f >>> 31, (int) (got >>> 63), "sign");
                assertEquals(f & 0x7FFFFF, (int) ((got >>> 29) & 0x7FFFFF), "payload");
                assertEquals(0, got & ((1L << 29) - 1), "low payload bits");
            } else {
                assertEquals(Double.doubleToRawLongBits(x), got, Integer.toHexString(f));
            }
        }
        // A signalling NaN stays signalling (the quiet bit is the top mantissa bit).
        assertEquals(0x7FF4_0000_0000_0000L, Kernels.convertBits(Conversion.F32_TO_F64, 0x7FA00000));
    }

    @Test
    void integersToF64() {
        long[] values = {0, 1, -1, Integer.MAX_VALUE, Integer.MIN_VALUE, 0xFFFF_FFFFL, Long.MAX_VALUE, Long.MIN_VALUE,
                (1L << 53) + 1, (1L << 54) + 2, (1L << 54) + 6, -(1L << 53) - 1, 0xFFFF_FFFF_FFFF_FC00L,
                0xFFFF_FFFF_FFFF_FBFFL, 0x8000_0000_0000_0401L};
        for (long v : values) {
            assertEquals((double) (int) v, bits(Conversion.I32_TO_F64, v), Long.toHexString(v));
            assertEquals((double) (v & 0xFFFF_FFFFL), bits(Conversion.U32_TO_F64, v), Long.toHexString(v));
            assertEquals((double) v, bits(Conversion.I64_TO_F64, v), Long.toHexString(v));
            double unsigned = new java.math.BigDecimal(Long.toUnsignedString(v)).doubleValue(); // correctly rounded
            assertEquals(unsigned, bits(Conversion.U64_TO_F64, v), Long.toUnsignedString(v));
        }
    }

    private static double bits(Conversion c, long v) {
        return Double.longBitsToDouble(Kernels.convertBits(c, v));
    }
}
