package io.github.semyonsinchenko.safetensors.sampler.synth;

import io.github.semyonsinchenko.safetensors.sampler.db.SemanticType;
import io.github.semyonsinchenko.safetensors.sampler.synth.SyntheticData.Column;
import io.github.semyonsinchenko.safetensors.sampler.synth.SyntheticData.Table;

/**
 * Mean, sample standard deviation (1.0 for at most one value), min and max of the valid values
 * (min and max 0 when there is none), summed left to right.
 */
record Moments(double mean, double std, double min, double max) {
    /** The moments of the values of {@code v} where {@code valid} holds. */
    static Moments of(double[] v, boolean[] valid) {
        double sum = 0;
        long count = 0;
        double min = Double.POSITIVE_INFINITY;
        double max = Double.NEGATIVE_INFINITY;
        for (int i = 0; i < v.length; i++) {
            if (valid[i]) {
                sum += v[i];
                count++;
                min = Math.min(min, v[i]);
                max = Math.max(max, v[i]);
            }
        }
        double mean = count == 0 ? 0.0 : sum / count;
        double sq = 0;
        for (int i = 0; i < v.length; i++) {
            if (valid[i]) {
                sq += (v[i] - mean) * (v[i] - mean);
            }
        }
        double std = count <= 1 ? 1.0 : Math.sqrt(sq / (count - 1));
        return new Moments(mean, std, count == 0 ? 0.0 : min, count == 0 ? 0.0 : max);
    }

    /** The moments of every non-null timestamp cell of the dataset, in table then column then row order. */
    static Moments globalTimestamps(SyntheticData data) {
        int cells = 0;
        for (Table t : data.tables()) {
            for (Column c : t.columns()) {
                cells += c.stype() == SemanticType.TIMESTAMP ? t.rows() : 0;
            }
        }
        double[] all = new double[cells];
        boolean[] valid = new boolean[cells];
        int k = 0;
        for (Table t : data.tables()) {
            for (Column c : t.columns()) {
                for (int i = 0; i < t.rows() && c.stype() == SemanticType.TIMESTAMP; i++, k++) {
                    all[k] = (double) c.micros(i);
                    valid[k] = c.isValid(i);
                }
            }
        }
        return of(all, valid);
    }

    /** The column's validity as an array. */
    static boolean[] validity(Column c, int rows) {
        boolean[] valid = new boolean[rows];
        for (int i = 0; i < rows; i++) {
            valid[i] = c.isValid(i);
        }
        return valid;
    }

    /** The nulls among {@code valid}. */
    static long nulls(boolean[] valid) {
        long k = 0;
        for (boolean v : valid) {
            if (!v) {
                k++;
            }
        }
        return k;
    }
}
