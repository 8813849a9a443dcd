package io.github.semyonsinchenko.safetensors.sampler.db;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The timestamp features against the formula they stand for (spec §4), computed per value. */
class ValueEncodingTest {

    /** The 15 features straight from their definition: sin and cos of each calendar field, then the z-score. */
    private static float[] direct(long us, double mean, double std) {
        LocalDateTime t;
        try {
            t = LocalDateTime.ofEpochSecond(Math.floorDiv(us, 1_000_000L), 0, ZoneOffset.UTC);
            if (t.getYear() < -262_144 || t.getYear() > 262_143) {
                t = LocalDateTime.ofEpochSecond(0, 0, ZoneOffset.UTC);
            }
        } catch (java.time.DateTimeException e) {
            t = LocalDateTime.ofEpochSecond(0, 0, ZoneOffset.UTC);
        }
        int[] values = {t.getSecond(), t.getMinute(), t.getHour(), t.getDayOfWeek().getValue() - 1,
            t.getDayOfMonth() - 1, t.getMonthValue() - 1, t.getDayOfYear() - 1};
        int[] periods = {60, 60, 24, 7, 31, 12, 366};
        float[] f = new float[15];
        for (int k = 0; k < values.length; k++) {
            double angle = 2.0 * Math.PI * values[k] / periods[k];
            f[2 * k] = (float) Math.sin(angle);
            f[2 * k + 1] = (float) Math.cos(angle);
        }
        f[14] = std > 0 ? (float) ((us - mean) / std) : 0f;
        return f;
    }

    private static void assertSameBits(long us, double mean, double std) {
        float[] want = direct(us, mean, std);
        float[] got = new float[17];
        ValueEncoding.timestampFeatures(us, mean, std, got, 2);
        for (int k = 0; k < want.length; k++) {
            assertEquals(Float.floatToRawIntBits(want[k]), Float.floatToRawIntBits(got[2 + k]),
                    "feature " + k + " of " + us + " us");
        }
    }

    @Test
    void everyCalendarFieldValueGivesTheFormulasBits() {
        double mean = 1.6e15;
        double std = 2.7e13;
        // Every second of a day, every day of a leap year and of a common year.
        long day = 86_400L * 1_000_000L;
        long leap = LocalDateTime.of(2024, 1, 1, 0, 0).toEpochSecond(ZoneOffset.UTC) * 1_000_000L;
        for (long s = 0; s < 86_400; s++) {
            assertSameBits(leap + s * 1_000_000L + 123, mean, std);
        }
        for (long d = 0; d < 2 * 366; d++) {
            assertSameBits(leap + d * day + 37_000_001L * (d % 97), mean, std);
        }
        SplittableRandom rnd = new SplittableRandom(13);
        for (int i = 0; i < 100_000; i++) {
            assertSameBits(rnd.nextLong(-4_000_000_000_000_000L, 4_000_000_000_000_000L), mean, std);
        }
    }

    @Test
    void timesOutsideTheCalendarRangeAreTheEpochs() {
        // chrono's first and last second, one microsecond either side of them, and the extremes.
        long first = LocalDateTime.of(-262_144, 1, 1, 0, 0).toEpochSecond(ZoneOffset.UTC) * 1_000_000L;
        long last = LocalDateTime.of(262_143, 12, 31, 23, 59, 59).toEpochSecond(ZoneOffset.UTC) * 1_000_000L;
        for (long us : new long[] {first - 1, first, first + 1, last - 1, last, last + 999_999, last + 1_000_000,
            Long.MIN_VALUE, Long.MAX_VALUE, -1, 0, 1, -86_400_000_001L, 9_000_000_000_000_000L}) {
            assertSameBits(us, 0.0, 1.0);
            assertSameBits(us, 0.0, 0.0);
        }
    }
}
