package io.github.semyonsinchenko.safetensors.preprocess;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.Partitioner;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.api.java.function.PairFlatMapFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import scala.Tuple2;

/**
 * A table's text indices laid out like its ordered rows ({@link RowRanges}): partition {@code p}
 * holds, per text column, the (row, index) pairs of the rows of partition {@code p}, packed as
 * {@code row << 32 | index} and sorted, so the encoder reads them alongside the rows with one
 * cursor per column. The whole rows are never shuffled for their text: only the pairs move, and
 * in few large records (one per source and target partition) rather than one per cell.
 */
final class TextIndices {
    private TextIndices() {}

    /** Some pairs of text column {@code slot} bound for one target partition. */
    record Piece(int slot, long[] packed) implements Serializable {}

    /**
     * Per partition of {@code ranges} one element: per text column (in the order of {@code pairs})
     * its packed pairs in row order.
     *
     * @param pairs per text column a Dataset of {@code row} and {@code idx}
     */
    static JavaRDD<long[][]> byPartition(List<Dataset<Row>> pairs, RowRanges ranges) {
        JavaPairRDD<Integer, Piece> pieces = null;
        for (int slot = 0; slot < pairs.size(); slot++) {
            JavaPairRDD<Integer, Piece> p = pairs.get(slot).javaRDD().mapPartitionsToPair(new Split(slot, ranges));
            pieces = pieces == null ? p : pieces.union(p);
        }
        return pieces.partitionBy(new ById(ranges.partitions())).mapPartitions(new Merge(pairs.size()), true);
    }

    /** Row {@code row << 32 | index} in unsigned row order: Arrays.sort is signed, so the sign bit is flipped around it. */
    static void sortByRow(long[] packed) {
        for (int i = 0; i < packed.length; i++) {
            packed[i] ^= Long.MIN_VALUE;
        }
        Arrays.sort(packed);
        for (int i = 0; i < packed.length; i++) {
            packed[i] ^= Long.MIN_VALUE;
        }
    }

    /** Buckets one source partition's pairs by target partition. */
    private record Split(int slot, RowRanges ranges) implements PairFlatMapFunction<Iterator<Row>, Integer, Piece> {
        @Override
        public Iterator<Tuple2<Integer, Piece>> call(Iterator<Row> rows) {
            StatChunks.LongList[] buckets = new StatChunks.LongList[ranges.partitions()];
            while (rows.hasNext()) {
                Row r = rows.next();
                long row = r.getLong(0);
                int p = ranges.partitionOf(row);
                if (buckets[p] == null) {
                    buckets[p] = new StatChunks.LongList();
                }
                buckets[p].add(row << 32 | (r.getLong(1) & 0xFFFF_FFFFL));
            }
            List<Tuple2<Integer, Piece>> out = new ArrayList<>();
            for (int p = 0; p < buckets.length; p++) {
                if (buckets[p] != null) {
                    out.add(new Tuple2<>(p, new Piece(slot, buckets[p].toArray())));
                }
            }
            return out.iterator();
        }
    }

    /** Joins a target partition's pieces per column and sorts them by row; one element even when empty. */
    private record Merge(int slots) implements FlatMapFunction<Iterator<Tuple2<Integer, Piece>>, long[][]> {
        @Override
        public Iterator<long[][]> call(Iterator<Tuple2<Integer, Piece>> pieces) {
            List<List<long[]>> bySlot = new ArrayList<>();
            for (int k = 0; k < slots; k++) {
                bySlot.add(new ArrayList<>());
            }
            while (pieces.hasNext()) {
                Piece piece = pieces.next()._2();
                bySlot.get(piece.slot()).add(piece.packed());
            }
            long[][] out = new long[slots][];
            for (int k = 0; k < slots; k++) {
                int n = 0;
                for (long[] a : bySlot.get(k)) {
                    n += a.length;
                }
                long[] all = new long[n];
                int at = 0;
                for (long[] a : bySlot.get(k)) {
                    System.arraycopy(a, 0, all, at, a.length);
                    at += a.length;
                }
                sortByRow(all);
                out[k] = all;
            }
            return List.<long[][]>of(out).iterator();
        }
    }

    /** The partition is the key itself. */
    private static final class ById extends Partitioner {
        private static final long serialVersionUID = 1L;
        private final int n;

        ById(int n) {
            this.n = n;
        }

        @Override
        public int numPartitions() {
            return n;
        }

        @Override
        public int getPartition(Object key) {
            return (Integer) key;
        }
    }
}
