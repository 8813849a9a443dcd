package io.github.semyonsinchenko.safetensors.kernels;

import static io.github.semyonsinchenko.safetensors.format.LittleEndian.F32;
import static io.github.semyonsinchenko.safetensors.format.LittleEndian.F64;
import java.lang.foreign.ValueLayout;

/**
 * One element at a time, on raw bits: the definition of every conversion's result (the scalar
 * path, the tails of the Vector path, and the oracle the tests hold the other paths to). Only
 * integer operations touch floats that may be NaN, so no payload is ever changed by the JVM or
 * the CPU; in particular {@link Float#float16ToFloat} is not used, because it quiets signalling
 * NaNs.
 */
final class ScalarKernels {
    private ScalarKernels() {}

    static final ValueLayout.OfByte I8 = ValueLayout.JAVA_BYTE;

    // ---- 16 <-> 32 bit floats; ints and shorts carry raw bits ----

    static int bf16ToF32(short h) {
        return (h & 0xFFFF) << 16;
    }

    static boolean isNaN(int f32) {
        return (f32 & 0x7FFFFFFF) > 0x7F800000;
    }

    /** Canonical quiet BF16 NaN with the sign of {@code f32}. */
    private static short bf16NaN(int f32) {
        return (short) (((f32 >>> 16) & 0x8000) | 0x7FC0);
    }

    static short f32ToBf16Rne(int u) {
        if (isNaN(u)) {
            return bf16NaN(u);
        }
        // Just under half an ulp, plus one when the kept lsb is odd: ties go to even. A carry into
        // the exponent is the right round-up (to Inf at the top).
        return (short) ((u + 0x7FFF + ((u >>> 16) & 1)) >>> 16);
    }

    static short f32ToBf16Trunc(int u) {
        return isNaN(u) ? bf16NaN(u) : (short) (u >>> 16);
    }

    /** Exact for every pattern, NaN payload and signalling bit included. */
    static int f16ToF32(short h) {
        int sign = (h & 0x8000) << 16;
        int exp = (h >>> 10) & 0x1F;
        int mant = h & 0x3FF;
        if (exp == 0x1F) {
            return sign | 0x7F800000 | (mant << 13);
        }
        if (exp != 0) {
            return sign | ((exp + 112) << 23) | (mant << 13);
        }
        if (mant == 0) {
            return sign;
        }
        // Subnormal mant * 2^-24: move the leading one up to the implicit bit.
        int e = -14;
        while ((mant & 0x400) == 0) {
            mant <<= 1;
            e--;
        }
        return sign | ((e + 127) << 23) | ((mant & 0x3FF) << 13);
    }

    /** sign | 0x7E00 | top 9 payload bits: the F16C rule. */
    private static short f16NaN(int u) {
        return (short) (((u >>> 16) & 0x8000) | 0x7E00 | ((u >>> 13) & 0x3FF));
    }

    /** |x| below 2^-14 (F16 subnormal or zero): the significand in units of 2^-24, rounded. */
    private static int f16Tiny(int a, boolean rne) {
        int e = a >>> 23; // biased F32 exponent, at most 112 here
        if (e < 102) { // |x| < 2^-25
            return 0;
        }
        int m = (a & 0x7FFFFF) | 0x800000;
        int shift = 126 - e; // 14..24
        int q = m >>> shift;
        if (rne) {
            int rem = m & ((1 << shift) - 1);
            int half = 1 << (shift - 1);
            if (rem > half || (rem == half && (q & 1) != 0)) {
                q++; // 0x400 is the smallest normal: still the right bits
            }
        }
        return q;
    }

    static short f32ToF16Rne(int u) {
        int sign = (u >>> 16) & 0x8000;
        int a = u & 0x7FFFFFFF;
        if (a > 0x7F800000) {
            return f16NaN(u);
        }
        if (a >= 0x477FF000) { // >= 65520, half-way between 65504 and 65536: ties to even = Inf
            return (short) (sign | 0x7C00);
        }
        if (a >= 0x38800000) { // >= 2^-14: a normal F16
            int r = a - 0x38000000; // rebias 127 -> 15
            return (short) (sign | ((r + 0xFFF + ((r >>> 13) & 1)) >>> 13));
        }
        return (short) (sign | f16Tiny(a, true));
    }

    static short f32ToF16Trunc(int u) {
        int sign = (u >>> 16) & 0x8000;
        int a = u & 0x7FFFFFFF;
        if (a > 0x7F800000) {
            return f16NaN(u);
        }
        if (a == 0x7F800000) {
            return (short) (sign | 0x7C00);
        }
        if (a >= 0x47800000) { // finite >= 65536: saturate to 65504
            return (short) (sign | 0x7BFF);
        }
        if (a >= 0x38800000) {
            return (short) (sign | ((a - 0x38000000) >>> 13));
        }
        return (short) (sign | f16Tiny(a, false));
    }

    static short f16ToBf16(short h) {
        return f32ToBf16Rne(f16ToF32(h));
    }

    static short bf16ToF16(short h) {
        return f32ToF16Rne(bf16ToF32(h));
    }

    // ---- widening to F32; results are never NaN except for F64, which returns bits ----

    static float u32ToF32(int v) {
        return (float) Integer.toUnsignedLong(v);
    }

    /** Correctly rounded: halve with the lost bit kept as a sticky bit, round once, double exactly. */
    static float u64ToF32(long v) {
        if (v >= 0) {
            return (float) v;
        }
        return (float) ((v >>> 1) | (v & 1)) * 2.0f;
    }

    /** The bits of {@code (float) d}; a NaN keeps its sign and top 22 payload bits and is quieted. */
    static int f64ToF32(long bits) {
        if ((bits & 0x7FFFFFFFFFFFFFFFL) > 0x7FF0000000000000L) {
            return (int) ((bits >>> 32) & 0x80000000L) | 0x7FC00000 | (int) ((bits >>> 29) & 0x3FFFFF);
        }
        return Float.floatToRawIntBits((float) Double.longBitsToDouble(bits));
    }
    // ---- 8-bit floats to F32: tables of all 256 results, built from the formats' definitions ----

    /** F32 bits of every F8_E4M3 pattern (float8_e4m3fn: bias 7, 3 mantissa bits, S.1111.111 NaN). */
    static final int[] F8_E4M3 = f8Table(4, 3, 7, false, false);
    /** F32 bits of every F8_E5M2 pattern (bias 15, 2 mantissa bits, IEEE infinities and NaNs). */
    static final int[] F8_E5M2 = f8Table(5, 2, 15, true, false);
    /** F32 bits of every F8_E4M3FNUZ pattern (bias 8, 0x80 NaN, no -0, no infinities). */
    static final int[] F8_E4M3FNUZ = f8Table(4, 3, 8, false, true);
    /** F32 bits of every F8_E5M2FNUZ pattern (bias 16, 0x80 NaN, no -0, no infinities). */
    static final int[] F8_E5M2FNUZ = f8Table(5, 2, 16, false, true);
    /** F32 bits of every F8_E8M0 pattern (float8_e8m0fnu: 2^(e-127), 0xFF NaN). */
    static final int[] F8_E8M0 = e8m0Table();

    private static final int QUIET_NAN = 0x7FC00000;

    /**
     * One signed 8-bit float format: 1 sign bit, {@code expBits} exponent bits, {@code mantBits}
     * mantissa bits. With {@code ieee} the top exponent holds infinities (mantissa 0) and NaNs whose
     * payload is kept, as F16 to F32 keeps it (E5M2 is the top byte of an F16); otherwise the all-ones
     * pattern of each sign is NaN (E4M3FN), or with {@code fnuz} only 0x80 is (and there is no -0).
     */
    private static int[] f8Table(int expBits, int mantBits, int bias, boolean ieee, boolean fnuz) {
        int[] table = new int[256];
        int maxExp = (1 << expBits) - 1;
        int mantMask = (1 << mantBits) - 1;
        for (int b = 0; b < 256; b++) {
            int sign = (b & 0x80) << 24;
            int exp = (b >>> mantBits) & maxExp;
            int mant = b & mantMask;
            if (fnuz && b == 0x80) {
                table[b] = sign | QUIET_NAN;
            } else if (ieee && exp == maxExp) {
                table[b] = sign | 0x7F800000 | (mant << (23 - mantBits));
            } else if (!ieee && !fnuz && exp == maxExp && mant == mantMask) {
                table[b] = sign | QUIET_NAN;
            } else {
                // Every value of these formats is an F32, so scaling the significand is exact.
                int significand = exp == 0 ? mant : (1 << mantBits) | mant;
                int scale = (exp == 0 ? 1 : exp) - bias - mantBits;
                table[b] = sign | Float.floatToRawIntBits(Math.scalb((float) significand, scale));
            }
        }
        return table;
    }

    private static int[] e8m0Table() {
        int[] table = new int[256];
        for (int e = 0; e < 255; e++) {
            table[e] = Float.floatToRawIntBits(Math.scalb(1.0f, e - 127)); // e = 0: the F32 subnormal 2^-127
        }
        table[255] = QUIET_NAN;
        return table;
    }

    // ---- to F64 ----

    /** Exact; a NaN keeps its sign and its 23 payload bits at the top of the F64 mantissa. */
    static long f32ToF64(int f) {
        if ((f & 0x7FFFFFFF) > 0x7F800000) {
            return ((long) (f & 0x80000000) << 32) | 0x7FF0000000000000L | ((long) (f & 0x7FFFFF) << 29);
        }
        return Double.doubleToRawLongBits(Float.intBitsToFloat(f));
    }

    /** Correctly rounded, as {@link #u64ToF32}. */
    static double u64ToF64(long v) {
        if (v >= 0) {
            return (double) v;
        }
        return (double) ((v >>> 1) | (v & 1)) * 2.0;
    }
}
