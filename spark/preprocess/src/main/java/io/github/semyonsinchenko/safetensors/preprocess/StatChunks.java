package io.github.semyonsinchenko.safetensors.preprocess;

import io.github.semyonsinchenko.safetensors.sampler.db.SemanticType;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.sql.Row;

/**
 * One pass over an ordered partition of a table yielding everything {@link ColumnStatistics} needs
 * from it: per statistics column its non-null values in row order ({@code long[]} for timestamps,
 * {@code double[]} otherwise), for {@link OrderedStats} to fold on the driver partition by
 * partition; and per column the order-free counts (nulls, true/false, distinct categories), summed
 * on the driver. One scan instead of a separate aggregation over the Parquet data.
 *
 * @param rowField the field of the row position, or -1
 * @param stypes per schema column its semantic type
 * @param validFields per column the field of {@code v<j>}, or -1
 * @param valueFields per column the field of {@code c<j>}, or -1
 * @param statColumns the schema columns whose values are folded in order
 */
record StatChunks(int rowField, SemanticType[] stypes, int[] validFields, int[] valueFields, int[] statColumns)
        implements FlatMapFunction<Iterator<Row>, StatChunks.Chunk> {

    /** Without a row position: {@link Chunk#seen} is null. */
    StatChunks(SemanticType[] stypes, int[] validFields, int[] valueFields, int[] statColumns) {
        this(-1, stypes, validFields, valueFields, statColumns);
    }

    /**
     * One partition's result.
     *
     * @param values per statistics column its non-null values in row order
     * @param nulls per column its null count (numerical, timestamp: no value; others: no source value)
     * @param trues per boolean column its true count
     * @param falses per boolean column its false count
     * @param categories per categorical column its distinct values, otherwise null
     * @param seen which rows the partition held, to check they are in order (null without a row field)
     */
    record Chunk(Object[] values, long[] nulls, long[] trues, long[] falses, String[][] categories,
            RowRanges.Seen seen)
            implements Serializable {}

    @Override
    public Iterator<Chunk> call(Iterator<Row> rows) {
        return call(TaskContext.getPartitionId(), rows);
    }

    /**
     * The same for partition {@code partition} of the RDD this runs on: within a union of RDDs the
     * task's partition id is the union's, so such callers pass the index themselves.
     */
    Iterator<Chunk> call(int partition, Iterator<Row> rows) {
        int k = statColumns.length;
        int m = stypes.length;
        LongList[] longs = new LongList[k];
        DoubleList[] doubles = new DoubleList[k];
        for (int i = 0; i < k; i++) {
            if (stypes[statColumns[i]] == SemanticType.TIMESTAMP) {
                longs[i] = new LongList();
            } else {
                doubles[i] = new DoubleList();
            }
        }
        long[] nulls = new long[m];
        long[] trues = new long[m];
        long[] falses = new long[m];
        List<HashSet<String>> categories = new ArrayList<>();
        for (int j = 0; j < m; j++) {
            categories.add(stypes[j] == SemanticType.CATEGORICAL ? new HashSet<>() : null);
        }
        long first = -1;
        long count = 0;
        boolean consecutive = true;
        while (rows.hasNext()) {
            Row r = rows.next();
            long row = rowField < 0 ? count : r.getLong(rowField);
            if (count == 0) {
                first = row;
            } else if (row != first + count) {
                consecutive = false;
            }
            count++;
            for (int j = 0; j < m; j++) {
                switch (stypes[j]) {
                    case IGNORED -> { }
                    case NUMERICAL, TIMESTAMP -> {
                        if (r.isNullAt(valueFields[j])) {
                            nulls[j]++;
                        }
                    }
                    case IDENTIFIER, TEXT -> {
                        if (!r.getBoolean(validFields[j])) {
                            nulls[j]++;
                        }
                    }
                    case BOOLEAN -> {
                        if (!r.getBoolean(validFields[j])) {
                            nulls[j]++;
                        }
                        if (!r.isNullAt(valueFields[j])) {
                            if (r.getBoolean(valueFields[j])) {
                                trues[j]++;
                            } else {
                                falses[j]++;
                            }
                        }
                    }
                    case CATEGORICAL -> {
                        if (!r.getBoolean(validFields[j])) {
                            nulls[j]++;
                        }
                        if (!r.isNullAt(valueFields[j])) {
                            categories.get(j).add(r.getString(valueFields[j]));
                        }
                    }
                }
            }
            for (int i = 0; i < k; i++) {
                int field = valueFields[statColumns[i]];
                if (!r.isNullAt(field)) {
                    if (longs[i] != null) {
                        longs[i].add(r.getLong(field));
                    } else {
                        doubles[i].add(r.getDouble(field));
                    }
                }
            }
        }
        Object[] values = new Object[k];
        for (int i = 0; i < k; i++) {
            values[i] = longs[i] != null ? longs[i].toArray() : doubles[i].toArray();
        }
        String[][] distinct = new String[m][];
        for (int j = 0; j < m; j++) {
            distinct[j] = categories.get(j) == null ? null : categories.get(j).toArray(String[]::new);
        }
        return List.of(new Chunk(values, nulls, trues, falses, distinct,
                rowField < 0 ? null : new RowRanges.Seen(partition, first, count, consecutive)))
                .iterator();
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
