package io.github.semyonsinchenko.safetensors.preprocess.stats;

import io.github.semyonsinchenko.safetensors.preprocess.partition.LongList;
import io.github.semyonsinchenko.safetensors.preprocess.partition.RowRanges;
import io.github.semyonsinchenko.safetensors.sampler.db.SemanticType;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.stream.IntStream;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * One pass over an ordered partition of a table yielding everything {@link ColumnStatistics} needs
 * from it: per statistics column its non-null values in row order ({@code long[]} for timestamps,
 * {@code double[]} otherwise), for {@link OrderedStats} to fold on the driver partition by
 * partition; and per numerical, timestamp, boolean and categorical column the order-free counts
 * (nulls, true/false, distinct categories), summed on the driver. It reads Spark's own rows
 * (no conversion to {@code Row}, categories compared as UTF-8 bytes) holding only the fields it
 * reads; identifier and text columns are not among them ({@link ColumnStatistics}).
 *
 * @param rowField the field of the row position, or -1
 * @param stypes per schema column its semantic type
 * @param validFields per column the field of {@code v<j>}, or -1 (boolean and categorical columns have one)
 * @param valueFields per column the field of {@code c<j>}, or -1 (numerical, timestamp, boolean and categorical columns have one)
 * @param statColumns the schema columns whose values are folded in order
 */
record StatChunks(int rowField, SemanticType[] stypes, int[] validFields, int[] valueFields, int[] statColumns)
        implements FlatMapFunction<Iterator<InternalRow>, StatChunks.Chunk> {

    /** Without a row position: {@link Chunk#seen} is null. */
    StatChunks(SemanticType[] stypes, int[] validFields, int[] valueFields, int[] statColumns) {
        this(-1, stypes, validFields, valueFields, statColumns);
    }

    /**
     * One partition's result.
     *
     * @param values per statistics column its non-null values in row order
     * @param nulls per column its null count (numerical, timestamp: no value; boolean, categorical:
     *     no source value; 0 for the columns not read)
     * @param trues per boolean column its true count
     * @param falses per boolean column its false count
     * @param categories per categorical column its distinct values, otherwise null
     * @param seen which rows the partition held, to check they are in order (null without a row field)
     */
    record Chunk(Object[] values, long[] nulls, long[] trues, long[] falses, String[][] categories,
            RowRanges.Seen seen)
            implements Serializable {}

    @Override
    public Iterator<Chunk> call(Iterator<InternalRow> rows) {
        return call(TaskContext.getPartitionId(), rows);
    }

    /**
     * The same for partition {@code partition} of the RDD this runs on: within a union of RDDs the
     * task's partition id is the union's, so such callers pass the index themselves.
     */
    Iterator<Chunk> call(int partition, Iterator<InternalRow> rows) {
        int k = statColumns.length;
        int m = stypes.length;
        LongList[] longs = new LongList[k];
        DoubleList[] doubles = new DoubleList[k];
        int[] statFields = new int[k];
        for (int i = 0; i < k; i++) {
            statFields[i] = valueFields[statColumns[i]];
            if (stypes[statColumns[i]] == SemanticType.TIMESTAMP) {
                longs[i] = new LongList();
            } else {
                doubles[i] = new DoubleList();
            }
        }
        // The columns by what is counted, so the per-row loops have no switch.
        int[] valueNulls = columns(SemanticType.NUMERICAL, SemanticType.TIMESTAMP);
        int[] bools = columns(SemanticType.BOOLEAN, SemanticType.BOOLEAN);
        int[] cats = columns(SemanticType.CATEGORICAL, SemanticType.CATEGORICAL);
        long[] nulls = new long[m];
        long[] trues = new long[m];
        long[] falses = new long[m];
        List<HashSet<UTF8String>> categories = new ArrayList<>();
        for (int c = 0; c < cats.length; c++) {
            categories.add(new HashSet<>());
        }
        long first = -1;
        long count = 0;
        boolean consecutive = true;
        while (rows.hasNext()) {
            InternalRow r = rows.next();
            long row = rowField < 0 ? count : r.getLong(rowField);
            if (count == 0) {
                first = row;
            } else if (row != first + count) {
                consecutive = false;
            }
            count++;
            for (int j : valueNulls) {
                if (r.isNullAt(valueFields[j])) {
                    nulls[j]++;
                }
            }
            for (int j : bools) {
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
            for (int c = 0; c < cats.length; c++) {
                int j = cats[c];
                if (!r.getBoolean(validFields[j])) {
                    nulls[j]++;
                }
                if (!r.isNullAt(valueFields[j])) {
                    UTF8String v = r.getUTF8String(valueFields[j]);
                    HashSet<UTF8String> seen = categories.get(c);
                    if (!seen.contains(v)) {
                        seen.add(v.copy()); // the row's bytes are reused for the next row
                    }
                }
            }
            for (int i = 0; i < k; i++) {
                int field = statFields[i];
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
        for (int c = 0; c < cats.length; c++) {
            distinct[cats[c]] = categories.get(c).stream().map(UTF8String::toString).toArray(String[]::new);
        }
        return List.of(new Chunk(values, nulls, trues, falses, distinct,
                rowField < 0 ? null : new RowRanges.Seen(partition, first, count, consecutive)))
                .iterator();
    }

    /** The schema columns of type {@code a} or {@code b}. */
    private int[] columns(SemanticType a, SemanticType b) {
        return IntStream.range(0, stypes.length).filter(j -> stypes[j] == a || stypes[j] == b).toArray();
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
