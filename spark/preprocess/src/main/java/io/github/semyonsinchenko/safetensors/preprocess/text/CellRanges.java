package io.github.semyonsinchenko.safetensors.preprocess.text;

import io.github.semyonsinchenko.safetensors.preprocess.partition.U32Pairs;
import java.io.Serializable;
import java.util.Arrays;
import java.util.Locale;

/**
 * Contiguous ranges of the text cells' positions in column-then-row order, of equal size: the
 * range of a position {@code at} ({@link U32Pairs} (global column, row)) never decreases as
 * {@code at} grows, so ranges in order hold the first occurrences in vocabulary order, and
 * partitioning by range needs no sample of the data.
 *
 * @param columns the text columns' global indices, ascending
 * @param bases per column, the cells of the columns before it
 * @param perRange cells per range (the last may hold fewer)
 * @param count the number of ranges, at least one
 */
record CellRanges(int[] columns, long[] bases, long perRange, int count) implements Serializable {

    /** About {@code wanted} ranges over the cells of {@code columns}, which have {@code rows[k]} cells each. */
    static CellRanges of(int[] columns, long[] rows, int wanted) {
        long[] bases = new long[columns.length];
        long total = 0;
        for (int k = 0; k < columns.length; k++) {
            if (k > 0 && columns[k] <= columns[k - 1]) {
                throw new IllegalArgumentException("text columns out of order: " + Arrays.toString(columns));
            }
            bases[k] = total;
            total += rows[k];
        }
        long per = Math.max(1, (total + wanted - 1) / Math.max(1, wanted));
        int count = (int) Math.max(1, (total + per - 1) / per);
        return new CellRanges(columns, bases, per, count);
    }

    /** The range of the cell at {@code at}. */
    int rangeOf(long at) {
        return (int) Math.min(count - 1, ordinal(at) / perRange);
    }

    /**
     * The position of the cell at {@code at} in the dense order of all text cells (column by
     * column, each column's rows in order, nulls included): the order of {@code at} without gaps.
     */
    long ordinal(long at) {
        int k = Arrays.binarySearch(columns, (int) U32Pairs.first(at));
        if (k < 0) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "cell %d: column %d is not a text column",
                    at, U32Pairs.first(at)));
        }
        return bases[k] + U32Pairs.second(at);
    }
}
