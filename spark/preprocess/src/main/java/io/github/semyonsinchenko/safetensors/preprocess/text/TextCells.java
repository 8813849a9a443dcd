package io.github.semyonsinchenko.safetensors.preprocess.text;

import io.github.semyonsinchenko.safetensors.format.LittleEndian;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Iterator;
import java.util.NoSuchElementException;
import org.apache.spark.api.java.function.PairFlatMapFunction;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.hash.Murmur3_x86_32;
import org.apache.spark.unsafe.types.UTF8String;
import scala.Tuple2;

/**
 * The text vocabulary's exchange of the text cells, as blocks of packed cells rather than one
 * Spark row each: a scan partition cuts each non-null value (UTF-8 bytes, never a Java String),
 * hashes the cut bytes once, and appends the cell to the block of the key partition the hash
 * picks; the key partition reads the hash back instead of hashing again. A cell is
 * {@code at} (8 bytes), the hash (4), the cut length with the sign bit set when the value was cut
 * (4), then the cut bytes; numbers little-endian ({@link LittleEndian}).
 */
final class TextCells {
    private TextCells() {}

    private static final int HEADER = 16;
    private static final int SEED = 42;
    /** A block is sent once it holds this many bytes. */
    static final int BLOCK = 256 * 1024;
    /** A scan partition holds at most about this many bytes in unsent blocks, whatever the partition count. */
    static final long BUFFERED = 32L << 20;

    /** The hash of a cut string's bytes: it picks the key partition and the key partition's slot. */
    static int hash(Object base, long offset, int length) {
        return Murmur3_x86_32.hashUnsafeBytes(base, offset, length, SEED);
    }

    /**
     * Scan partition (rows of {@code at} and the value, a string or null) to blocks of its
     * non-null cells, keyed by key partition; blocks are made as the rows are read.
     */
    record Blocks(int partitions) implements PairFlatMapFunction<Iterator<InternalRow>, Integer, byte[]> {
        @Override
        public Iterator<Tuple2<Integer, byte[]>> call(Iterator<InternalRow> rows) {
            return blocks(rows, partitions, BUFFERED);
        }
    }

    /** The blocks of {@code rows}, all open blocks sent whenever they hold more than {@code buffered} bytes. */
    static Iterator<Tuple2<Integer, byte[]>> blocks(Iterator<InternalRow> rows, int partitions, long buffered) {
        return new BlockIterator(rows, partitions, buffered);
    }

    private static final class BlockIterator implements Iterator<Tuple2<Integer, byte[]>> {
        private final Iterator<InternalRow> rows;
        private final byte[][] open;
        private final int[] fill;
        private final ArrayDeque<Tuple2<Integer, byte[]>> ready = new ArrayDeque<>();
        private final long budget;
        private long buffered;
        private boolean drained;

        BlockIterator(Iterator<InternalRow> rows, int partitions, long budget) {
            this.rows = rows;
            this.open = new byte[partitions][];
            this.fill = new int[partitions];
            this.budget = budget;
        }

        @Override
        public boolean hasNext() {
            while (ready.isEmpty() && !drained) {
                if (rows.hasNext()) {
                    add(rows.next());
                } else {
                    for (int p = 0; p < open.length; p++) {
                        send(p);
                    }
                    drained = true;
                }
            }
            return !ready.isEmpty();
        }

        @Override
        public Tuple2<Integer, byte[]> next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            return ready.poll();
        }

        private void add(InternalRow r) {
            if (r.isNullAt(1)) {
                return;
            }
            long at = r.getLong(0);
            UTF8String v = r.getUTF8String(1);
            Object base = v.getBaseObject();
            long offset = v.getBaseOffset();
            int n = v.numBytes();
            int cut = Utf8.cutLength(base, offset, n, Utf8.MAX_VOCAB_BYTES);
            int h = hash(base, offset, cut);
            int p = Math.floorMod(h, open.length);
            int need = HEADER + cut;
            byte[] block = open[p];
            if (block == null || block.length - fill[p] < need) {
                int size = block == null ? 4096 : block.length;
                while (size - fill[p] < need) {
                    size *= 2;
                }
                buffered += size - (block == null ? 0 : block.length);
                open[p] = block = block == null ? new byte[size] : Arrays.copyOf(block, size);
            }
            int at0 = fill[p];
            LittleEndian.I64_IN_BYTES.set(block, at0, at);
            LittleEndian.I32_IN_BYTES.set(block, at0 + 8, h);
            LittleEndian.I32_IN_BYTES.set(block, at0 + 12, cut < n ? cut | Integer.MIN_VALUE : cut);
            Platform.copyMemory(base, offset, block, Platform.BYTE_ARRAY_OFFSET + at0 + HEADER, cut);
            fill[p] = at0 + need;
            if (fill[p] >= BLOCK) {
                send(p);
            } else if (buffered > budget) {
                for (int q = 0; q < open.length; q++) {
                    send(q);
                }
            }
        }

        private void send(int p) {
            if (fill[p] > 0) {
                ready.add(new Tuple2<>(p, Arrays.copyOf(open[p], fill[p])));
            }
            if (open[p] != null) {
                buffered -= open[p].length;
            }
            open[p] = null;
            fill[p] = 0;
        }
    }

    /** Reads the cells of a key partition's blocks one by one into its fields. */
    static final class Reader {
        private final Iterator<Tuple2<Integer, byte[]>> blocks;
        private int end;
        private int next;
        /** The current cell's block; its bytes start at {@link #offset}. */
        byte[] block;
        int offset;
        int length;
        int hash;
        long at;
        boolean whole;

        Reader(Iterator<Tuple2<Integer, byte[]>> blocks) {
            this.blocks = blocks;
        }

        /** Moves to the next cell; false when there is none. */
        boolean next() {
            while (block == null || next >= end) {
                if (!blocks.hasNext()) {
                    return false;
                }
                block = blocks.next()._2();
                next = 0;
                end = block.length;
            }
            at = (long) LittleEndian.I64_IN_BYTES.get(block, next);
            hash = (int) LittleEndian.I32_IN_BYTES.get(block, next + 8);
            int len = (int) LittleEndian.I32_IN_BYTES.get(block, next + 12);
            whole = len >= 0;
            length = len & Integer.MAX_VALUE;
            offset = next + HEADER;
            next = offset + length;
            return true;
        }
    }
}
