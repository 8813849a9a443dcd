package io.github.semyonsinchenko.safetensors.loader;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Groups byte ranges of one file into few coalesced reads: the planning behind every "read the
 * selected tensors of a file in few requests" path (the Spark connector's remote reads among them) and
 * of the loader's chunks ({@link ChunkPlan}: a checkpoint's tensors coalesced with no gap).
 *
 * <p>A pure, deterministic function. Ranges are taken in offset order; a range joins the current
 * read when the unrequested gap before it is at most {@code maxGapBytes} and the read would then
 * span at most {@code maxReadBytes}; otherwise it starts a new read. A range is never split, so a
 * range longer than {@code maxReadBytes} is a read of its own. Overlapping or repeated ranges are
 * allowed (they share bytes, never cost a second request when they fit one read).
 */
public final class ReadCoalescing {
    private ReadCoalescing() {
    }

    /**
     * A wanted byte range: {@code length} bytes from absolute offset {@code offset}.
     *
     * @param offset the first byte
     * @param length bytes wanted
     */
    public record Range(long offset, long length) {
        /** Checks that offset and length are not negative. */
        public Range {
            if (offset < 0 || length < 0) {
                throw new IllegalArgumentException("a range needs offset >= 0 and length >= 0, got offset " + offset
                        + ", length " + length);
            }
        }

        /** {@return one past the last byte} */
        public long end() {
            return offset + length;
        }
    }

    /**
     * One request: bytes {@code [offset, offset + length)}, covering the ranges it serves.
     *
     * @param offset the first byte read
     * @param length bytes read
     * @param members indexes into the input list of the ranges this read serves, in offset order
     */
    public record Read(long offset, long length, List<Integer> members) {
        /** Copies the members. */
        public Read {
            members = List.copyOf(members);
        }

        /** {@return one past the last byte} */
        public long end() {
            return offset + length;
        }
    }

    /**
     * Plans the reads for {@code ranges} (any order).
     *
     * @param ranges the wanted ranges
     * @param maxGapBytes the largest run of unwanted bytes a read may span to serve two ranges (&ge; 0)
     * @param maxReadBytes the largest read serving more than one range (&ge; 0; 0: one read per range)
     * @return the reads in offset order; every input index is a member of exactly one read
     */
    public static List<Read> coalesce(List<Range> ranges, long maxGapBytes, long maxReadBytes) {
        if (maxGapBytes < 0) {
            throw new IllegalArgumentException("maxGapBytes must be >= 0, got " + maxGapBytes);
        }
        if (maxReadBytes < 0) {
            throw new IllegalArgumentException("maxReadBytes must be >= 0, got " + maxReadBytes);
        }
        List<Integer> order = new ArrayList<>(ranges.size());
        for (int i = 0; i < ranges.size(); i++) {
            order.add(i);
        }
        // Ties broken by length then input index: the plan depends only on the ranges.
        order.sort(Comparator.<Integer>comparingLong(i -> ranges.get(i).offset())
                .thenComparingLong(i -> ranges.get(i).length()).thenComparingInt(i -> i));
        List<Read> reads = new ArrayList<>();
        List<Integer> members = new ArrayList<>();
        long start = 0;
        long end = 0;
        for (int i : order) {
            Range r = ranges.get(i);
            if (!members.isEmpty()) {
                long newEnd = Math.max(end, r.end());
                boolean joins = r.offset() - end <= maxGapBytes && newEnd - start <= maxReadBytes;
                if (joins) {
                    members.add(i);
                    end = newEnd;
                    continue;
                }
                reads.add(new Read(start, end - start, members));
                members = new ArrayList<>();
            }
            members.add(i);
            start = r.offset();
            end = r.end();
        }
        if (!members.isEmpty()) {
            reads.add(new Read(start, end - start, members));
        }
        return reads;
    }
}
