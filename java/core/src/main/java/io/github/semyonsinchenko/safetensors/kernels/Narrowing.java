package io.github.semyonsinchenko.safetensors.kernels;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import java.math.BigDecimal;

/**
 * Narrowing of doubles and longs such that one rounding happens, though two steps are taken: a
 * double to F16 or BF16 goes to float first and then through the F32 kernel, a long to F32 goes to
 * double first. The first step rounds to odd when the final rounding is to nearest even, and toward
 * zero when it is truncation; both F16 and BF16 keep at most 11 significant bits and F32 24, at least
 * two fewer than the intermediate type, which is what makes round-to-odd exact. The nearest float
 * (and every NaN) comes from the {@link Conversion#F64_TO_F32} kernel's rule; only the step back
 * toward zero is done here.
 */
public final class Narrowing {
    private Narrowing() {}

    /**
     * A double as F16 or BF16 bits rounded once, as {@code f32ToHalf} rounds: to nearest even, or
     * toward zero for the truncating kernels.
     *
     * @param f32ToHalf one of the F32 to F16 or BF16 kernels
     * @param d the value
     * @return the 16 bits
     */
    public static short toHalfBits(Conversion f32ToHalf, double d) {
        if (f32ToHalf.source() != Dtype.F32 || f32ToHalf.target().bits() != 16) {
            throw new IllegalArgumentException(f32ToHalf + " is not an F32 to F16/BF16 kernel");
        }
        boolean truncate = f32ToHalf == Conversion.F32_TO_F16_TRUNC || f32ToHalf == Conversion.F32_TO_BF16_TRUNC;
        float f = truncate ? towardZero(d) : roundToOdd(d);
        return (short) Kernels.convertBits(f32ToHalf, Float.floatToRawIntBits(f));
    }

    /**
     * The double as a float rounded to odd: toward zero, with the last bit set if anything was lost.
     *
     * @param d the value
     * @return the float
     */
    public static float roundToOdd(double d) {
        float f = nearest(d);
        if (Float.isNaN(f) || (double) f == d) {
            return f;
        }
        return Float.intBitsToFloat(Float.floatToRawIntBits(towardZero(d, f)) | 1);
    }

    /**
     * The double as a float rounded toward zero (a finite value never becomes infinite).
     *
     * @param d the value
     * @return the float
     */
    public static float towardZero(double d) {
        float f = nearest(d);
        if (Float.isNaN(f) || (double) f == d) {
            return f;
        }
        return towardZero(d, f);
    }

    /** The double as the nearest float: the {@link Conversion#F64_TO_F32} kernel's bits. */
    private static float nearest(double d) {
        return Float.intBitsToFloat((int) Kernels.convertBits(Conversion.F64_TO_F32, Double.doubleToRawLongBits(d)));
    }

    private static float towardZero(double d, float nearest) {
        if (Float.isInfinite(nearest) || Math.abs((double) nearest) > Math.abs(d)) {
            // Rounded away from zero (or overflowed): one step back toward zero.
            return Float.intBitsToFloat(Float.floatToRawIntBits(nearest) - 1);
        }
        return nearest;
    }

    /**
     * The long as a double, exact or rounded to odd when it needs more than 53 bits.
     *
     * @param v the value
     * @return the double
     */
    public static double roundToOdd(long v) {
        double d = (double) v;
        if (Math.abs(v) < (1L << 53) && v != Long.MIN_VALUE) {
            return d;
        }
        int cmp = new BigDecimal(d).compareTo(BigDecimal.valueOf(v));
        if (cmp == 0) {
            return d;
        }
        long bits = Double.doubleToRawLongBits(d);
        if ((cmp > 0) == (v > 0)) {
            bits -= 1; // rounded away from zero: step back
        }
        return Double.longBitsToDouble(bits | 1);
    }
}
