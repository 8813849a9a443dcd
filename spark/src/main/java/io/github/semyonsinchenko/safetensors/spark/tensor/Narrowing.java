package io.github.semyonsinchenko.safetensors.spark.tensor;

import io.github.semyonsinchenko.safetensors.kernels.Conversion;
import io.github.semyonsinchenko.safetensors.kernels.Kernels;
import java.math.BigDecimal;

/**
 * Narrowing of doubles and longs to float such that a following F32 to F16/BF16 kernel rounds
 * exactly once: round-to-odd when the final rounding is to nearest even, toward zero when it is
 * truncation. Both F16 and BF16 keep at most 11 significant bits, at least two fewer than F32,
 * which is what makes round-to-odd exact. The nearest float (and every NaN) comes from the
 * kernels' F64 to F32 rule; only the step back toward zero is done here.
 */
final class Narrowing {
    private Narrowing() {}

    /** The double as a float rounded to odd: toward zero, with the last bit set if anything was lost. */
    static float roundToOdd(double d) {
        float f = nearest(d);
        if (Float.isNaN(f) || (double) f == d) {
            return f;
        }
        return Float.intBitsToFloat(Float.floatToRawIntBits(towardZero(d, f)) | 1);
    }

    /** The double as a float rounded toward zero (a finite value never becomes infinite). */
    static float towardZero(double d) {
        float f = nearest(d);
        if (Float.isNaN(f) || (double) f == d) {
            return f;
        }
        return towardZero(d, f);
    }

    /** The double as the nearest float: the {@link Conversion#F64_TO_F32} kernel's bits. */
    static float nearest(double d) {
        return Float.intBitsToFloat((int) Kernels.convertBits(Conversion.F64_TO_F32, Double.doubleToRawLongBits(d)));
    }

    private static float towardZero(double d, float nearest) {
        if (Float.isInfinite(nearest) || Math.abs((double) nearest) > Math.abs(d)) {
            // Rounded away from zero (or overflowed): one step back toward zero.
            return Float.intBitsToFloat(Float.floatToRawIntBits(nearest) - 1);
        }
        return nearest;
    }

    /** The long as a double, exact or rounded to odd when it needs more than 53 bits. */
    static double roundToOdd(long v) {
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
