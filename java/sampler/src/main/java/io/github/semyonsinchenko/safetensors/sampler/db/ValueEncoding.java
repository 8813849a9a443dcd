package io.github.semyonsinchenko.safetensors.sampler.db;

import java.time.LocalDateTime;
import java.time.ZoneOffset;

/**
 * How cell values are encoded in table and task files (spec §4): z-scores and the 15 timestamp
 * features. Shared by the reader (temporal filtering) and by writers.
 */
public final class ValueEncoding {
    private ValueEncoding() {}

    // chrono's NaiveDateTime range; the reference maps anything outside it to the epoch.
    private static final int MIN_YEAR = -262_144;
    private static final int MAX_YEAR = 262_143;

    /** {@code (v - mean) / std} in f64, cast to f32; 0 when {@code std <= 0} or NaN. */
    public static float zScore(double v, double mean, double std) {
        if (!(std > 0)) {
            return 0f;
        }
        return (float) ((v - mean) / std);
    }

    /**
     * Raw epoch microseconds back from slot 14 of a timestamp cell, exactly as the reference
     * decodes it for temporal filtering: {@code (long) ((double) z * std + mean)}.
     */
    public static long decodeMicros(float z, double globalMeanUs, double globalStdUs) {
        return (long) ((double) z * globalStdUs + globalMeanUs);
    }

    /** Writes the 15 features of epoch-microsecond {@code us} to {@code out[off .. off + 14]}. */
    public static void timestampFeatures(long us, double globalMeanUs, double globalStdUs, float[] out, int off) {
        long seconds = Math.floorDiv(us, 1_000_000L);
        LocalDateTime t;
        try {
            t = LocalDateTime.ofEpochSecond(seconds, 0, ZoneOffset.UTC);
            if (t.getYear() < MIN_YEAR || t.getYear() > MAX_YEAR) {
                t = LocalDateTime.ofEpochSecond(0, 0, ZoneOffset.UTC);
            }
        } catch (java.time.DateTimeException e) {
            t = LocalDateTime.ofEpochSecond(0, 0, ZoneOffset.UTC);
        }
        cyclic(t.getSecond(), 60, out, off);
        cyclic(t.getMinute(), 60, out, off + 2);
        cyclic(t.getHour(), 24, out, off + 4);
        cyclic(t.getDayOfWeek().getValue() - 1, 7, out, off + 6);
        cyclic(t.getDayOfMonth() - 1, 31, out, off + 8);
        cyclic(t.getMonthValue() - 1, 12, out, off + 10);
        cyclic(t.getDayOfYear() - 1, 366, out, off + 12);
        out[off + 14] = globalStdUs > 0 ? (float) ((us - globalMeanUs) / globalStdUs) : 0f;
    }

    private static void cyclic(int v, int period, float[] out, int off) {
        double angle = 2.0 * Math.PI * v / period;
        out[off] = (float) Math.sin(angle);
        out[off + 1] = (float) Math.cos(angle);
    }
}
