package io.github.semyonsinchenko.safetensors.preprocess.partition;

import java.io.Serializable;
import java.util.Arrays;
import java.util.List;

/**
 * Which rows of a table each partition of its ordered Dataset holds: partition {@code p} holds rows
 * {@code first[p]} to {@code first[p] + count[p] - 1}, ascending, and the partitions follow each
 * other in row order. A Parquet scan of one file already is such a Dataset, so when the check in
 * {@link #of} passes, the table needs no sort.
 */
public record RowRanges(long[] first, long[] count) implements Serializable {

    /** What one partition saw: its first row, its row count, and whether each row was the previous plus one. */
    public record Seen(int partition, long first, long count, boolean consecutive) implements Serializable {}

    /**
     * The ranges when the partitions, in partition order, hold rows 0 to {@code rows - 1} each
     * once and in order (empty partitions anywhere) and none more than {@code maxPerPartition}
     * rows; otherwise null.
     */
    public static RowRanges of(List<Seen> seen, long rows, long maxPerPartition) {
        Seen[] byPartition = seen.toArray(Seen[]::new);
        Arrays.sort(byPartition, (a, b) -> Integer.compare(a.partition(), b.partition()));
        long[] first = new long[byPartition.length];
        long[] count = new long[byPartition.length];
        long next = 0;
        for (int p = 0; p < byPartition.length; p++) {
            Seen s = byPartition[p];
            if (s.partition() != p) {
                return null;
            }
            if (s.count() > maxPerPartition || s.count() > 0 && (!s.consecutive() || s.first() != next)) {
                return null;
            }
            first[p] = next;
            count[p] = s.count();
            next += s.count();
        }
        return next == rows ? new RowRanges(first, count) : null;
    }

    /** The number of partitions. */
    public int partitions() {
        return first.length;
    }

    /** The partition holding {@code row}: the last non-empty partition starting at or before it. */
    public int partitionOf(long row) {
        int lo = 0;
        int hi = first.length - 1;
        int found = -1;
        while (lo <= hi) { // the last p with first[p] <= row
            int mid = (lo + hi) >>> 1;
            if (first[mid] <= row) {
                found = mid;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        while (found >= 0 && count[found] == 0) { // empty partitions share their successor's start
            found--;
        }
        if (found < 0 || row >= first[found] + count[found]) {
            throw new IllegalArgumentException("row " + row + " is in no partition");
        }
        return found;
    }
}
