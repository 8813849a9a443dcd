package io.github.semyonsinchenko.safetensors.spark.write;

import java.math.BigDecimal;

/**
 * Round-to-nearest-even encoders to F16 and BF16, and the round-to-odd narrowing that makes
 * double -> F32 -> F16/BF16 exact (no double rounding).
 *
 * <p>A Java stand-in: the {@code Kernels} facade will provide vectorized versions of the same
 * conversions; only {@link #toBf16(float)} and {@link #toF16(float)} would change.
 */
final class HalfFloats {
    private HalfFloats() {}

    /** F32 -> BF16, round to nearest even; NaN becomes the quiet NaN with the input's sign. */
    static short toBf16(float f) {
        int bits = Float.floatToRawIntBits(f);
        if (Float.isNaN(f)) {
            return (short) (0x7FC0 | ((bits >>> 16) & 0x8000));
        }
        return (short) ((bits + 0x7FFF + ((bits >>> 16) & 1)) >>> 16);
    }

    /** F32 -> F16, round to nearest even (the JDK's conversion is IEEE round-to-nearest-even). */
    static short toF16(float f) {
        return Float.floatToFloat16(f);
    }

    static float bf16ToFloat(short h) {
        return Float.intBitsToFloat((h & 0xFFFF) << 16);
    }

    /**
     * Narrows a double to float rounding to odd: truncate toward zero, then set the last bit if
     * anything was lost. A later round-to-nearest-even to a format at least two bits narrower than
     * F32 (F16, BF16) then gives exactly the correctly rounded result of the double.
     */
    static float toFloatRoundToOdd(double d) {
        float f = (float) d;
        if (Float.isNaN(f) || (double) f == d) {
            return f;
        }
        int bits = Float.floatToRawIntBits(f);
        if (Float.isInfinite(f) || Math.abs((double) f) > Math.abs(d)) {
            bits -= 1; // rounded away from zero (or overflowed): step back toward zero
        }
        return Float.intBitsToFloat(bits | 1);
    }

    /** A long as a double, rounded to odd when it does not fit 53 bits (see {@link #toFloatRoundToOdd}). */
    static double toDoubleRoundToOdd(long v) {
        double d = (double) v;
        if (Math.abs(v) < (1L << 53) && v != Long.MIN_VALUE) {
            return d; // exact
        }
        int cmp = new BigDecimal(d).compareTo(BigDecimal.valueOf(v));
        if (cmp == 0) {
            return d;
        }
        long bits = Double.doubleToRawLongBits(d);
        boolean awayFromZero = (cmp > 0) == (v > 0);
        if (awayFromZero) {
            bits -= 1;
        }
        return Double.longBitsToDouble(bits | 1);
    }
}
