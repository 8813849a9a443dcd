package io.github.semyonsinchenko.safetensors.kernels;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.util.SplittableRandom;
import jdk.incubator.vector.Float16;
import org.junit.jupiter.api.Test;

/** The two-step narrowings round once: against the JDK's direct double to F16 and exact arithmetic. */
class NarrowingTest {
    /** Doubles spread over F16's range and beyond, many of them next to an F16 rounding boundary. */
    private static double sample(SplittableRandom r) {
        double d = switch (r.nextInt(3)) {
            case 0 -> Double.longBitsToDouble(r.nextLong()); // any double
            case 1 -> Math.scalb(1 + r.nextDouble(), r.nextInt(-30, 20)); // F16's exponents
            default -> {
                // an F16 value plus or minus half an F16 ulp, nudged by a few double ulps
                double h = Float16.valueOf(Math.scalb(1 + r.nextDouble(), r.nextInt(-26, 16))).doubleValue();
                double f16Ulp = Math.scalb(1.0, Math.max(Math.getExponent(h), -14) - 10);
                yield h + f16Ulp / 2 * (r.nextBoolean() ? 1 : -1) + Math.ulp(h) * r.nextInt(-3, 4);
            }
        };
        return r.nextBoolean() ? d : -d;
    }

    @Test
    void doubleToF16RoundsOnceToNearestEven() {
        SplittableRandom r = new SplittableRandom(29);
        for (int i = 0; i < 2_000_000; i++) {
            double d = sample(r);
            if (Double.isNaN(d)) {
                continue;
            }
            short expected = Float16.float16ToRawShortBits(Float16.valueOf(d));
            assertEquals(expected, Narrowing.toHalfBits(Conversion.F32_TO_F16_RNE, d), () -> Double.toString(d));
        }
    }

    @Test
    void doubleToF16TruncatesOnce() {
        SplittableRandom r = new SplittableRandom(30);
        for (int i = 0; i < 200_000; i++) {
            double d = sample(r);
            if (Double.isNaN(d) || Double.isInfinite(d) || Math.abs(d) >= 65520) {
                continue; // toward zero from beyond the largest F16 is the largest F16, as F32_TO_F16_TRUNC says
            }
            // The largest F16 whose magnitude does not exceed |d|: the nearest-even one, stepped back if above.
            Float16 nearest = Float16.valueOf(d);
            short bits = Float16.float16ToRawShortBits(nearest);
            if (Math.abs(nearest.doubleValue()) > Math.abs(d)) {
                bits--;
            }
            assertEquals(bits, Narrowing.toHalfBits(Conversion.F32_TO_F16_TRUNC, d), () -> Double.toString(d));
        }
    }

    @Test
    void longToDoubleRoundsToOdd() {
        SplittableRandom r = new SplittableRandom(31);
        for (int i = 0; i < 200_000; i++) {
            long v = r.nextLong() >> r.nextInt(0, 12);
            double odd = Narrowing.roundToOdd(v);
            BigDecimal off = new BigDecimal(odd).subtract(BigDecimal.valueOf(v)).abs();
            // One of the two doubles around v (less than an ulp away), the odd one whenever v is not a double.
            assertTrue(off.compareTo(new BigDecimal(Math.ulp(odd))) < 0, () -> v + " -> " + odd);
            if (off.signum() != 0) {
                assertEquals(1, Double.doubleToRawLongBits(odd) & 1, () -> v + " -> " + odd);
            }
        }
        assertEquals(-0x1p63, Narrowing.roundToOdd(Long.MIN_VALUE));
    }

    @Test
    void onlyF32ToHalfKernelsAreTaken() {
        assertThrows(IllegalArgumentException.class, () -> Narrowing.toHalfBits(Conversion.F64_TO_F32, 1.0));
        assertThrows(IllegalArgumentException.class, () -> Narrowing.toHalfBits(Conversion.BF16_TO_F32, 1.0));
    }
}
