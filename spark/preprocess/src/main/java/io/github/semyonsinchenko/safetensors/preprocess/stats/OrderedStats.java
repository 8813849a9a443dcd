package io.github.semyonsinchenko.safetensors.preprocess.stats;

import io.github.semyonsinchenko.safetensors.sampler.db.ColumnStats;

/**
 * Numerical and timestamp statistics folded in row order: the f64 sums are sequential, left to
 * right, exactly as headwater's loops add them, so the result does not depend on how Spark
 * partitioned the rows and equals headwater's to the bit. Only non-null values are fed in.
 */
public final class OrderedStats {
    private OrderedStats() {}

    /** The folds every statistic shares: count and sum (first pass), squared deviations (second). */
    abstract static class Sums {
        long count;
        double sum;
        double varSum;
        double mean;

        final void addValue(double v) {
            sum += v;
            count++;
        }

        /** Ends the first pass: the mean is known. */
        public void endFirstPass() {
            mean = count > 0 ? sum / count : 0.0;
        }

        final void addSquare(double v) {
            double d = v - mean;
            varSum += d * d;
        }

        /** The sample standard deviation, 1.0 for fewer than two values. */
        double std() {
            return count > 1 ? Math.sqrt(varSum / (count - 1)) : 1.0;
        }
    }

    /** A numerical column: count, sum, min and max, then the squared deviations. */
    public static final class Numerical extends Sums {
        double min = Double.MAX_VALUE;
        double max = -Double.MAX_VALUE;

        /** Adds the next values, in row order. */
        public void add(double[] values) {
            for (double v : values) {
                addValue(v);
                min = v < min ? v : min;
                max = v > max ? v : max;
            }
        }

        /** Second pass: adds the next values' squared deviations from the mean, in row order. */
        public void addSquares(double[] values) {
            for (double v : values) {
                addSquare(v);
            }
        }

        /** The statistics, with {@code numNulls} nulls. */
        public ColumnStats.Numerical stats(long numNulls) {
            return new ColumnStats.Numerical(numNulls, count > 0 ? min : 0.0, count > 0 ? max : 0.0, mean, std());
        }
    }

    /** The same for a timestamp column (i64 µs; sums of the values cast to f64). */
    public static final class Timestamp extends Sums {
        long min = Long.MAX_VALUE;
        long max = Long.MIN_VALUE;

        /** Adds the next values, in row order. */
        public void add(long[] values) {
            for (long v : values) {
                addValue((double) v);
                min = Math.min(min, v);
                max = Math.max(max, v);
            }
        }

        /** Second pass: adds the next values' squared deviations from the mean, in row order. */
        public void addSquares(long[] values) {
            for (long v : values) {
                addSquare((double) v);
            }
        }

        /** The statistics, with {@code numNulls} nulls. */
        public ColumnStats.Timestamp stats(long numNulls) {
            return new ColumnStats.Timestamp(numNulls, count > 0 ? min : 0, count > 0 ? max : 0, mean, std());
        }
    }

    /** The global timestamp statistics: Σ of per-column sums, then one running sum of squares over all cells. */
    static final class Global extends Sums {
        void addColumn(Timestamp column) {
            sum += column.sum;
            count += column.count;
        }

        void addSquares(long[] values) {
            for (long v : values) {
                addSquare((double) v);
            }
        }
    }
}
