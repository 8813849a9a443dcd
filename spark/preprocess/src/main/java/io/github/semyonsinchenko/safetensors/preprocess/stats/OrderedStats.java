package io.github.semyonsinchenko.safetensors.preprocess.stats;

import io.github.semyonsinchenko.safetensors.sampler.db.ColumnStats;

/**
 * Numerical and timestamp statistics folded in row order: the f64 sums are sequential, left to
 * right, exactly as headwater's loops add them, so the result does not depend on how Spark
 * partitioned the rows and equals headwater's to the bit. Only non-null values are fed in.
 */
public final class OrderedStats {
    private OrderedStats() {}

    /** First pass over a numerical column: count, sum, min, max. */
    public static final class Numerical {
        long count;
        double sum;
        double min = Double.MAX_VALUE;
        double max = -Double.MAX_VALUE;
        double varSum;
        double mean;

        /** Adds the next values, in row order. */
        public void add(double[] values) {
            for (double v : values) {
                sum += v;
                count++;
                if (v < min) {
                    min = v;
                }
                if (v > max) {
                    max = v;
                }
            }
        }

        /** Ends the first pass: the mean is known. */
        public void endFirstPass() {
            mean = count > 0 ? sum / count : 0.0;
        }

        /** Second pass: adds the next values' squared deviations from the mean, in row order. */
        public void addSquares(double[] values) {
            for (double v : values) {
                double d = v - mean;
                varSum += d * d;
            }
        }

        /** The statistics, with {@code numNulls} nulls. */
        public ColumnStats.Numerical stats(long numNulls) {
            double std = count > 1 ? Math.sqrt(varSum / (count - 1)) : 1.0;
            return new ColumnStats.Numerical(numNulls, count > 0 ? min : 0.0, count > 0 ? max : 0.0, mean, std);
        }
    }

    /** The same for a timestamp column (i64 µs; sums of the values cast to f64). */
    public static final class Timestamp {
        long count;
        double sum;
        long min = Long.MAX_VALUE;
        long max = Long.MIN_VALUE;
        double varSum;
        double mean;

        /** Adds the next values, in row order. */
        public void add(long[] values) {
            for (long v : values) {
                sum += (double) v;
                count++;
                if (v < min) {
                    min = v;
                }
                if (v > max) {
                    max = v;
                }
            }
        }

        /** Ends the first pass: the mean is known. */
        public void endFirstPass() {
            mean = count > 0 ? sum / count : 0.0;
        }

        /** Second pass: adds the next values' squared deviations from the mean, in row order. */
        public void addSquares(long[] values) {
            for (long v : values) {
                double d = (double) v - mean;
                varSum += d * d;
            }
        }

        /** The statistics, with {@code numNulls} nulls. */
        public ColumnStats.Timestamp stats(long numNulls) {
            double std = count > 1 ? Math.sqrt(varSum / (count - 1)) : 1.0;
            return new ColumnStats.Timestamp(numNulls, count > 0 ? min : 0, count > 0 ? max : 0, mean, std);
        }
    }

    /** The global timestamp statistics: Σ of per-column sums, then one running sum of squares over all cells. */
    static final class Global {
        long count;
        double sum;
        double varSum;
        double mean;

        void addColumn(Timestamp column) {
            sum += column.sum;
            count += column.count;
        }

        /** Ends the first pass: the mean is known. */
        public void endFirstPass() {
            mean = count > 0 ? sum / count : 0.0;
        }

        public void addSquares(long[] values) {
            for (long v : values) {
                double d = (double) v - mean;
                varSum += d * d;
            }
        }

        double std() {
            return count > 1 ? Math.sqrt(varSum / (count - 1)) : 1.0;
        }
    }
}
