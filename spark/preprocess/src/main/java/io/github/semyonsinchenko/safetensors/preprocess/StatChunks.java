package io.github.semyonsinchenko.safetensors.preprocess;

import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.sql.Row;

/**
 * Per ordered partition: one array per statistics column with its non-null values in row order
 * ({@code long[]} for timestamps, {@code double[]} otherwise), for {@link OrderedStats} to fold on
 * the driver partition by partition.
 */
record StatChunks(boolean[] isTimestamp, int[] fields) implements FlatMapFunction<Iterator<Row>, Object[]> {
    @Override
    public Iterator<Object[]> call(Iterator<Row> rows) {
        int k = isTimestamp.length;
        LongList[] longs = new LongList[k];
        DoubleList[] doubles = new DoubleList[k];
        for (int i = 0; i < k; i++) {
            if (isTimestamp[i]) {
                longs[i] = new LongList();
            } else {
                doubles[i] = new DoubleList();
            }
        }
        while (rows.hasNext()) {
            Row r = rows.next();
            for (int i = 0; i < k; i++) {
                if (!r.isNullAt(fields[i])) {
                    if (isTimestamp[i]) {
                        longs[i].add(r.getLong(fields[i]));
                    } else {
                        doubles[i].add(r.getDouble(fields[i]));
                    }
                }
            }
        }
        Object[] chunk = new Object[k];
        for (int i = 0; i < k; i++) {
            chunk[i] = isTimestamp[i] ? longs[i].toArray() : doubles[i].toArray();
        }
        return List.<Object[]>of(chunk).iterator();
    }

    static final class LongList {
        private long[] a = new long[1024];
        private int n;

        void add(long v) {
            if (n == a.length) {
                a = Arrays.copyOf(a, n * 2);
            }
            a[n++] = v;
        }

        long[] toArray() {
            return Arrays.copyOf(a, n);
        }
    }

    static final class DoubleList {
        private double[] a = new double[1024];
        private int n;

        void add(double v) {
            if (n == a.length) {
                a = Arrays.copyOf(a, n * 2);
            }
            a[n++] = v;
        }

        double[] toArray() {
            return Arrays.copyOf(a, n);
        }
    }
}
