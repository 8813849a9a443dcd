package io.github.semyonsinchenko.safetensors.sampler.db;

import java.time.LocalDate;

/**
 * How cell values are encoded in table and task files (spec §4): z-scores and the 15 timestamp
 * features. Shared by the reader (temporal filtering) and by writers.
 */
public final class ValueEncoding {
    private ValueEncoding() {}

    // chrono's NaiveDateTime range; the reference maps anything outside it to the epoch.
    private static final int MIN_YEAR = -262_144;
    private static final int MAX_YEAR = 262_143;

    /**
     * {@code (v - mean) / std} in f64, cast to f32.
     *
     * @param v the value
     * @param mean the column's mean
     * @param std the column's standard deviation
     * @return the z-score; 0 when {@code std <= 0} or NaN
     */
    public static float zScore(double v, double mean, double std) {
        if (!(std > 0)) {
            return 0f;
        }
        return (float) ((v - mean) / std);
    }

    /**
     * Raw epoch microseconds back from slot 14 of a timestamp cell, exactly as the reference decodes
     * it for temporal filtering: {@code (long) ((double) z * std + mean)}.
     *
     * @param z the cell's slot 14
     * @param globalMeanUs {@code global_ts_mean_us} of the metadata
     * @param globalStdUs {@code global_ts_std_us} of the metadata
     * @return epoch microseconds
     */
    public static long decodeMicros(float z, double globalMeanUs, double globalStdUs) {
        return (long) ((double) z * globalStdUs + globalMeanUs);
    }

    /** chrono's range as days since the epoch: its first and last day. */
    private static final long MIN_DAY = LocalDate.of(MIN_YEAR, 1, 1).toEpochDay();
    private static final long MAX_DAY = LocalDate.of(MAX_YEAR, 12, 31).toEpochDay();

    /**
     * Writes the 15 features of a timestamp: sine and cosine of second, minute, hour, weekday, day of
     * month, month and day of year (UTC), then the z-scored time. Times outside chrono's calendar
     * range encode as the epoch.
     *
     * @param us epoch microseconds
     * @param globalMeanUs {@code global_ts_mean_us} of the metadata
     * @param globalStdUs {@code global_ts_std_us} of the metadata
     * @param out the destination
     * @param off where the 15 floats start in {@code out}
     */
    public static void timestampFeatures(long us, double globalMeanUs, double globalStdUs, float[] out, int off) {
        // The UTC calendar fields: the day and the second within it, the time fields by arithmetic
        // (one LocalDate per cell, no LocalDateTime and LocalTime).
        long seconds = Math.floorDiv(us, 1_000_000L);
        long day = Math.floorDiv(seconds, 86_400L);
        int secondOfDay = (int) Math.floorMod(seconds, 86_400L);
        if (day < MIN_DAY || day > MAX_DAY) {
            day = 0;
            secondOfDay = 0;
        }
        LocalDate date = LocalDate.ofEpochDay(day);
        SIXTY.put(secondOfDay % 60, out, off);
        SIXTY.put(secondOfDay / 60 % 60, out, off + 2);
        HOURS.put(secondOfDay / 3600, out, off + 4);
        WEEKDAYS.put((int) Math.floorMod(day + 3, 7L), out, off + 6); // 1970-01-01 was a Thursday (3, Monday 0)
        MONTH_DAYS.put(date.getDayOfMonth() - 1, out, off + 8);
        MONTHS.put(date.getMonthValue() - 1, out, off + 10);
        YEAR_DAYS.put(date.getDayOfYear() - 1, out, off + 12);
        out[off + 14] = globalStdUs > 0 ? (float) ((us - globalMeanUs) / globalStdUs) : 0f;
    }

    /**
     * The sine and cosine of {@code 2π v / period} as f32 for every {@code v} of one period, computed
     * once: the same expression per cell, so the same bits, where per-cell trigonometry (14 calls per
     * timestamp) was a visible part of encoding millions of timestamps.
     */
    private static final class Cycle {
        private final float[] sin;
        private final float[] cos;

        Cycle(int period) {
            sin = new float[period];
            cos = new float[period];
            for (int v = 0; v < period; v++) {
                double angle = 2.0 * Math.PI * v / period;
                sin[v] = (float) Math.sin(angle);
                cos[v] = (float) Math.cos(angle);
            }
        }

        void put(int v, float[] out, int off) {
            out[off] = sin[v];
            out[off + 1] = cos[v];
        }
    }

    private static final Cycle SIXTY = new Cycle(60);
    private static final Cycle HOURS = new Cycle(24);
    private static final Cycle WEEKDAYS = new Cycle(7);
    private static final Cycle MONTH_DAYS = new Cycle(31);
    private static final Cycle MONTHS = new Cycle(12);
    private static final Cycle YEAR_DAYS = new Cycle(366);
}
