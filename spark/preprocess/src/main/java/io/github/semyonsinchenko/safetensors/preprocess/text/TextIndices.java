package io.github.semyonsinchenko.safetensors.preprocess.text;

import io.github.semyonsinchenko.safetensors.preprocess.BuildContext;
import io.github.semyonsinchenko.safetensors.preprocess.partition.IdPartitioner;
import io.github.semyonsinchenko.safetensors.preprocess.partition.RowRanges;
import io.github.semyonsinchenko.safetensors.preprocess.partition.U32Pairs;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.function.IntToLongFunction;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.api.java.function.Function2;
import org.apache.spark.broadcast.Broadcast;
import scala.Tuple2;

/**
 * A table's text indices laid out like its ordered rows ({@link RowRanges}): partition {@code p}
 * holds, per text column, the (row, index) pairs of the rows of partition {@code p} as sorted
 * {@link U32Pairs}, so the encoder reads them alongside the rows with one cursor per column.
 * Every non-null cell has a pair (a cut value's index is {@link #NO_INDEX}), so a row without one
 * is a null: the encoder takes the null bits from here and never reads the text columns. The whole
 * rows are never shuffled for their text: only the pairs move, from the vocabulary's partitions, in
 * few large records (one per vocabulary partition, column and target partition) rather than one per
 * cell.
 */
public final class TextIndices {
    private TextIndices() {}

    /**
     * The index of a non-null cell that finds none (a value longer than the cut): the encoder
     * writes 0 for it. No string has it: the vocabulary fails above {@link BuildContext#U32_LIMIT}
     * strings, so its indices end below it.
     */
    public static final long NO_INDEX = BuildContext.U32_LIMIT;

    /** Some pairs of text column {@code slot} bound for one target partition. */
    record Piece(int slot, long[] packed) implements Serializable {}

    /** Where a vocabulary element's non-null cells are and how each finds its index. */
    interface Cells<T> extends Serializable {
        /** The element's non-null cells, as {@link U32Pairs} (global column, row). */
        long[] at(T element);

        /**
         * Per cell of {@code element}, in partition {@code partition} of the vocabulary's RDD, its
         * index, or {@link #NO_INDEX}.
         */
        IntToLongFunction indices(int partition, T element);
    }

    /** Cells ranked within their cell range: a cell's index is its range's offset plus its rank (none when cut). */
    record RankedCells(long[] offsets) implements Cells<FirstOccurrences.Ranked> {
        @Override
        public long[] at(FirstOccurrences.Ranked r) {
            return r.at();
        }

        @Override
        public IntToLongFunction indices(int range, FirstOccurrences.Ranked r) {
            long offset = offsets[range];
            int[] rank = r.rank();
            return i -> rank[i] == FirstOccurrences.CUT ? NO_INDEX : offset + rank[i];
        }
    }

    /** Cells with their firsts' ordinals: the broadcast {@link FirstOccurrences.FirstIndex} gives the index. */
    record LocatedCells(Broadcast<FirstOccurrences.FirstIndex> index) implements Cells<FirstOccurrences.Located> {
        @Override
        public long[] at(FirstOccurrences.Located l) {
            return l.at();
        }

        @Override
        public IntToLongFunction indices(int partition, FirstOccurrences.Located l) {
            FirstOccurrences.FirstIndex firsts = index.value();
            int[] first = l.first();
            return i -> first[i] == FirstOccurrences.CUT ? NO_INDEX : firsts.indexOf(first[i]);
        }
    }

    /**
     * Per partition of {@code ranges} one element: per text column (slot) its packed pairs in row order.
     *
     * @param vocabulary the vocabulary's whole cells, as {@code cells} reads them
     * @param colStart the table's first global column
     * @param slotOf per column of the table its slot, or -1 when it is not one of the text columns wanted
     */
    static <T> JavaRDD<long[][]> byPartition(JavaRDD<T> vocabulary, Cells<T> cells, int colStart, int[] slotOf,
            int slots, RowRanges ranges) {
        JavaPairRDD<Integer, Piece> pieces = JavaPairRDD.fromJavaRDD(vocabulary.mapPartitionsWithIndex(
                new Split<>(cells, colStart, slotOf, slots, ranges), true));
        return pieces.partitionBy(new IdPartitioner(ranges.partitions())).mapPartitions(new Merge(slots), true);
    }

    /** Buckets one vocabulary partition's cells of the table by slot and target partition (two passes: arrays of exact size). */
    private record Split<T>(Cells<T> cells, int colStart, int[] slotOf, int slots, RowRanges ranges)
            implements Function2<Integer, Iterator<T>, Iterator<Tuple2<Integer, Piece>>> {
        @Override
        public Iterator<Tuple2<Integer, Piece>> call(Integer partition, Iterator<T> it) {
            int targets = ranges.partitions();
            List<Tuple2<Integer, Piece>> out = new ArrayList<>();
            while (it.hasNext()) {
                T element = it.next();
                long[] at = cells.at(element);
                IntToLongFunction indexOf = cells.indices(partition, element);
                int[] bucket = new int[at.length]; // slot * targets + target partition, or -1
                int[] size = new int[slots * targets];
                for (int i = 0; i < at.length; i++) {
                    int j = (int) U32Pairs.first(at[i]) - colStart;
                    int slot = j >= 0 && j < slotOf.length ? slotOf[j] : -1;
                    bucket[i] = slot < 0 ? -1 : slot * targets + ranges.partitionOf(U32Pairs.second(at[i]));
                    if (bucket[i] >= 0) {
                        size[bucket[i]]++;
                    }
                }
                long[][] packed = new long[size.length][];
                for (int b = 0; b < size.length; b++) {
                    packed[b] = size[b] == 0 ? null : new long[size[b]];
                }
                int[] fill = new int[size.length];
                for (int i = 0; i < at.length; i++) {
                    int b = bucket[i];
                    if (b >= 0) {
                        long index = indexOf.applyAsLong(i);
                        packed[b][fill[b]++] = U32Pairs.pack(U32Pairs.second(at[i]), index);
                    }
                }
                for (int b = 0; b < packed.length; b++) {
                    if (packed[b] != null) {
                        out.add(new Tuple2<>(b % targets, new Piece(b / targets, packed[b])));
                    }
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
                U32Pairs.sort(all);
                out[k] = all;
            }
            return List.<long[][]>of(out).iterator();
        }
    }
}
