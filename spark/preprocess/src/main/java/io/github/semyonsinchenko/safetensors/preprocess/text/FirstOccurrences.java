package io.github.semyonsinchenko.safetensors.preprocess.text;

import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.api.java.function.PairFlatMapFunction;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.array.ByteArrayMethods;
import org.apache.spark.unsafe.types.UTF8String;
import scala.Tuple2;

/**
 * The partition functions of the text vocabulary ({@link TextVocabulary}). The cells arrive
 * hash-partitioned by their cut string, in blocks ({@link TextCells}) of {@code at}, the cut
 * string, its hash and whether the value was cut: every occurrence of a string is in one
 * partition, so a hash map there finds its first occurrence (smallest {@code at}) without a
 * further exchange of the text. Then
 * either the cells stay where they are and only the firsts go to the driver, as cell ordinals
 * ({@link ToLocated}, {@link FirstIndex}), or only longs move, to the range ({@link CellRanges})
 * of each first occurrence, where the sorted firsts give each cell its rank within the range
 * ({@link ToRanges}, {@link Rank}).
 */
final class FirstOccurrences {
    private FirstOccurrences() {}

    /**
     * One key partition's pieces for one range: first occurrences, and the non-null cells (their
     * first, or {@link #CUT} for a cut value, and their at).
     */
    record ToRange(long[] firsts, long[] cellFirsts, long[] cellAts) implements Serializable {}

    /**
     * One range's non-null cells with their rank among the range's first occurrences (the index
     * without the range's offset; {@link #CUT} for a cut value), and how many first occurrences the
     * range holds.
     */
    record Ranked(long firsts, long[] at, int[] rank) implements Serializable {}

    /**
     * One key partition's non-null cells, each with its string's first occurrence as a cell ordinal
     * ({@link #ordinal}), or {@link #CUT} for a cut value (no index), and the ordinals of the first
     * occurrences the partition found: the driver's {@link FirstIndex} of all partitions' firsts
     * turns a cell's first into its index.
     */
    record Located(long[] at, int[] first, int[] firsts) implements Serializable {}

    /**
     * A cut cell's first (in {@link Located}) or rank (in {@link Ranked}): it adds its cut string
     * but finds no index, as headwater looks the uncut value up; the cell still is non-null.
     */
    static final int CUT = -1;

    /**
     * The first occurrences of all strings as a bitmap over the cell ordinals, with the number of
     * firsts before each 64-bit word: a first's index is the number of firsts before it.
     */
    record FirstIndex(long[] bits, int[] before, long size) implements Serializable {

        /** From every partition's first occurrences (distinct cell ordinals below {@code cells}). */
        static FirstIndex of(List<int[]> firsts, long cells) {
            long[] bits = new long[(int) ((cells + 63) >>> 6)];
            for (int[] f : firsts) {
                for (int o : f) {
                    bits[o >>> 6] |= 1L << o;
                }
            }
            int[] before = new int[bits.length];
            long n = 0;
            for (int w = 0; w < bits.length; w++) {
                before[w] = (int) n; // at most the cells, which fit an int on this path
                n += Long.bitCount(bits[w]);
            }
            return new FirstIndex(bits, before, n);
        }

        /** The index of the string whose first occurrence is cell ordinal {@code first}. */
        long indexOf(int first) {
            long word = bits[first >>> 6];
            if ((word & 1L << first) == 0) {
                throw new IllegalStateException("text vocabulary: cell " + first + " is no first occurrence");
            }
            return before[first >>> 6] + Long.bitCount(word & ((1L << first) - 1));
        }
    }

    /**
     * A key partition's cells, read once: its strings with their first occurrences, and per non-null
     * cell its at and its string's number ({@code ~id}, negative, for a cut cell).
     */
    private static final class PartitionCells {
        final Firsts keys = new Firsts();
        final Longs at = new Longs();
        final Ints ids = new Ints();

        PartitionCells(Iterator<Tuple2<Integer, byte[]>> blocks) {
            TextCells.Reader cell = new TextCells.Reader(blocks);
            while (cell.next()) {
                int id = keys.add(cell.block, cell.offset, cell.length, cell.hash, cell.at);
                at.add(cell.at);
                ids.add(cell.whole ? id : ~id);
            }
        }
    }

    /** Key partition to its non-null cells, located by their firsts' ordinals (no further exchange). */
    record ToLocated(CellRanges ranges) implements FlatMapFunction<Iterator<Tuple2<Integer, byte[]>>, Located> {
        @Override
        public Iterator<Located> call(Iterator<Tuple2<Integer, byte[]>> blocks) {
            PartitionCells cells = new PartitionCells(blocks);
            Firsts keys = cells.keys;
            Longs cellAt = cells.at;
            Ints cellId = cells.ids;
            int[] firsts = new int[keys.size()];
            for (int id = 0; id < firsts.length; id++) {
                firsts[id] = (int) ranges.ordinal(keys.first(id));
            }
            long[] at = Arrays.copyOf(cellAt.a, cellAt.n);
            int[] first = new int[cellId.n];
            for (int i = 0; i < first.length; i++) {
                int id = cellId.a[i];
                first[i] = id < 0 ? CUT : firsts[id];
            }
            return List.of(new Located(at, first, firsts)).iterator();
        }
    }

    /** One key partition's first occurrences of one range, with their strings. */
    record KeysToRange(long[] firsts, String[] keys) implements Serializable {}

    /**
     * A partition's distinct strings, numbered as they come, with each one's smallest {@code at}:
     * an open-addressing table over primitive arrays, the strings' bytes copied into large pages,
     * so a string costs no objects (no boxed number, no string copy, no map entry).
     */
    static final class Firsts {
        /** Bytes per page; a longer string (never from the vocabulary's cut) gets a page of its own. */
        private static final int PAGE = 1 << 20;
        private static final int MIX = 0x9E37_79B9;

        private final List<byte[]> pages = new ArrayList<>();
        private byte[] page;
        private int pageFill;
        /** Per string: page index << 32 | offset in the page, byte length, hash, smallest at. */
        private long[] where = new long[1024];
        private int[] length = new int[1024];
        private int[] hash = new int[1024];
        private long[] first = new long[1024];
        private int size;
        /** Per slot, the string's number plus one; 0 marks an empty slot. */
        private int[] slots = new int[2048];
        private int shift = 32 - 11;

        /** Records an occurrence; returns the string's number. */
        int add(UTF8String key, long at) {
            return addAt(key.getBaseObject(), key.getBaseOffset(), key.numBytes(), key.hashCode(), at);
        }

        /** Records an occurrence of the {@code n} bytes at {@code offset} of {@code block}, whose hash is {@code h}. */
        int add(byte[] block, int offset, int n, int h, long at) {
            return addAt(block, Platform.BYTE_ARRAY_OFFSET + (long) offset, n, h, at);
        }

        /** Records an occurrence of the bytes at {@code base} and {@code offset} (Spark's unsafe addressing). */
        private int addAt(Object base, long offset, int n, int h, long at) {
            int mask = slots.length - 1;
            for (int i = slot(h); ; i = (i + 1) & mask) {
                int id = slots[i] - 1;
                if (id < 0) {
                    id = insert(base, offset, h, n, at);
                    slots[i] = id + 1;
                    if (2 * size > slots.length) {
                        rehash();
                    }
                    return id;
                }
                if (hash[id] == h && length[id] == n && ByteArrayMethods.arrayEquals(base, offset,
                        pages.get((int) (where[id] >>> 32)),
                        Platform.BYTE_ARRAY_OFFSET + (int) where[id], n)) {
                    if (at < first[id]) {
                        first[id] = at;
                    }
                    return id;
                }
            }
        }

        /** Copies the string's bytes (a row, and so its bytes, is reused by its reader). */
        private int insert(Object base, long offset, int h, int n, long at) {
            if (size == first.length) {
                int grown = Math.multiplyExact(size, 2);
                where = Arrays.copyOf(where, grown);
                length = Arrays.copyOf(length, grown);
                hash = Arrays.copyOf(hash, grown);
                first = Arrays.copyOf(first, grown);
            }
            if (pages.isEmpty() || n > page.length - pageFill) {
                page = new byte[Math.max(PAGE, n)];
                pages.add(page);
                pageFill = 0;
            }
            Platform.copyMemory(base, offset, page, Platform.BYTE_ARRAY_OFFSET + pageFill, n);
            int id = size++;
            where[id] = (long) (pages.size() - 1) << 32 | pageFill;
            length[id] = n;
            hash[id] = h;
            first[id] = at;
            pageFill += n;
            return id;
        }

        private void rehash() {
            if (shift == 2) {
                throw new IllegalStateException("text vocabulary: too many distinct strings in one partition");
            }
            int[] grown = new int[slots.length * 2];
            shift--;
            int mask = grown.length - 1;
            for (int id = 0; id < size; id++) {
                int i = slot(hash[id]);
                while (grown[i] != 0) {
                    i = (i + 1) & mask;
                }
                grown[i] = id + 1;
            }
            slots = grown;
        }

        /**
         * The slot of a hash: its high bits after a multiply. The low bits of Spark's string hash
         * are not spread here: the partitioner chose this partition from the same hash.
         */
        private int slot(int h) {
            return (h * MIX) >>> shift;
        }

        int size() {
            return size;
        }

        /** The smallest {@code at} of string {@code id}. */
        long first(int id) {
            return first[id];
        }

        /** String {@code id}. */
        String string(int id) {
            return new String(pages.get((int) (where[id] >>> 32)), (int) where[id], length[id], StandardCharsets.UTF_8);
        }
    }

    /** Growable primitive arrays (the partition's non-null cells). */
    private static final class Longs {
        long[] a = new long[1024];
        int n;

        void add(long v) {
            if (n == a.length) {
                a = Arrays.copyOf(a, n * 2);
            }
            a[n++] = v;
        }
    }

    /** A string's number from a cell's entry in the partition's cell list (negative, {@code ~id}, for a cut cell). */
    private static int idOf(int entry) {
        return entry < 0 ? ~entry : entry;
    }

    private static final class Ints {
        int[] a = new int[1024];
        int n;

        void add(int v) {
            if (n == a.length) {
                a = Arrays.copyOf(a, n * 2);
            }
            a[n++] = v;
        }
    }

    /**
     * Key partition to ranges: every distinct string's first occurrence and every non-null cell,
     * by its string's first's range.
     */
    record ToRanges(CellRanges ranges)
            implements PairFlatMapFunction<Iterator<Tuple2<Integer, byte[]>>, Integer, ToRange> {
        @Override
        public Iterator<Tuple2<Integer, ToRange>> call(Iterator<Tuple2<Integer, byte[]>> blocks) {
            PartitionCells cells = new PartitionCells(blocks);
            Firsts keys = cells.keys;
            Longs cellAt = cells.at;
            Ints cellId = cells.ids;
            // Counting sort by range into arrays of exact size.
            int n = keys.size();
            long[] first = new long[n];
            for (int id = 0; id < n; id++) {
                first[id] = keys.first(id);
            }
            int[] rangeOf = new int[n];
            int[] nFirsts = new int[ranges.count()];
            int[] nCells = new int[ranges.count()];
            for (int id = 0; id < n; id++) {
                rangeOf[id] = ranges.rangeOf(first[id]);
                nFirsts[rangeOf[id]]++;
            }
            for (int i = 0; i < cellId.n; i++) {
                nCells[rangeOf[idOf(cellId.a[i])]]++; // a cut cell goes with its string's first
            }
            ToRange[] out = new ToRange[ranges.count()];
            for (int r = 0; r < out.length; r++) {
                if (nFirsts[r] > 0) { // a cell's first is in its range, so no cells without firsts
                    out[r] = new ToRange(new long[nFirsts[r]], new long[nCells[r]], new long[nCells[r]]);
                }
            }
            int[] fill = new int[out.length];
            for (int id = 0; id < n; id++) {
                out[rangeOf[id]].firsts()[fill[rangeOf[id]]++] = first[id];
            }
            Arrays.fill(fill, 0);
            for (int i = 0; i < cellId.n; i++) {
                int id = idOf(cellId.a[i]);
                ToRange t = out[rangeOf[id]];
                int k = fill[rangeOf[id]]++;
                t.cellFirsts()[k] = cellId.a[i] < 0 ? CUT : first[id]; // a first is a cell's at, never negative
                t.cellAts()[k] = cellAt.a[i];
            }
            List<Tuple2<Integer, ToRange>> pieces = new ArrayList<>();
            for (int r = 0; r < out.length; r++) {
                if (out[r] != null) {
                    pieces.add(new Tuple2<>(r, out[r]));
                }
            }
            return pieces.iterator();
        }
    }

    /**
     * One range: its first occurrences sorted, each non-null cell ranked by its first (a cut one
     * without a rank); always one element.
     */
    record Rank() implements FlatMapFunction<Iterator<Tuple2<Integer, ToRange>>, Ranked> {
        @Override
        public Iterator<Ranked> call(Iterator<Tuple2<Integer, ToRange>> pieces) {
            List<ToRange> all = new ArrayList<>();
            int nFirsts = 0;
            int nCells = 0;
            while (pieces.hasNext()) {
                ToRange t = pieces.next()._2();
                all.add(t);
                nFirsts = Math.addExact(nFirsts, t.firsts().length);
                nCells = Math.addExact(nCells, t.cellAts().length);
            }
            long[] firsts = new long[nFirsts];
            long[] at = new long[nCells];
            int[] rank = new int[nCells];
            int f = 0;
            for (ToRange t : all) {
                System.arraycopy(t.firsts(), 0, firsts, f, t.firsts().length);
                f += t.firsts().length;
            }
            Arrays.sort(firsts); // distinct: each is the position of a different cell
            int c = 0;
            for (ToRange t : all) {
                for (int i = 0; i < t.cellAts().length; i++) {
                    if (t.cellFirsts()[i] == CUT) {
                        at[c] = t.cellAts()[i];
                        rank[c++] = CUT;
                        continue;
                    }
                    int k = Arrays.binarySearch(firsts, t.cellFirsts()[i]);
                    if (k < 0) {
                        throw new IllegalStateException(String.format(Locale.ROOT,
                                "text vocabulary: first occurrence %d of cell %d is not in its range", t.cellFirsts()[i],
                                t.cellAts()[i]));
                    }
                    at[c] = t.cellAts()[i];
                    rank[c++] = k;
                }
            }
            return List.of(new Ranked(nFirsts, at, rank)).iterator();
        }
    }

    /** Key partition to ranges, for the embedder: every distinct string with its first occurrence. */
    record KeysToRanges(CellRanges ranges)
            implements PairFlatMapFunction<Iterator<Tuple2<Integer, byte[]>>, Integer, KeysToRange> {
        @Override
        public Iterator<Tuple2<Integer, KeysToRange>> call(Iterator<Tuple2<Integer, byte[]>> blocks) {
            Firsts keys = new Firsts();
            TextCells.Reader cell = new TextCells.Reader(blocks);
            while (cell.next()) {
                keys.add(cell.block, cell.offset, cell.length, cell.hash, cell.at);
            }
            int n = keys.size();
            int[] rangeOf = new int[n];
            int[] count = new int[ranges.count()];
            for (int id = 0; id < n; id++) {
                rangeOf[id] = ranges.rangeOf(keys.first(id));
                count[rangeOf[id]]++;
            }
            KeysToRange[] out = new KeysToRange[ranges.count()];
            for (int r = 0; r < out.length; r++) {
                if (count[r] > 0) {
                    out[r] = new KeysToRange(new long[count[r]], new String[count[r]]);
                }
            }
            int[] fill = new int[out.length];
            for (int id = 0; id < n; id++) {
                int k = fill[rangeOf[id]]++;
                out[rangeOf[id]].firsts()[k] = keys.first(id);
                out[rangeOf[id]].keys()[k] = keys.string(id);
            }
            List<Tuple2<Integer, KeysToRange>> pieces = new ArrayList<>();
            for (int r = 0; r < out.length; r++) {
                if (out[r] != null) {
                    pieces.add(new Tuple2<>(r, out[r]));
                }
            }
            return pieces.iterator();
        }
    }

    /** One range's strings in the order of their first occurrences: the vocabulary's order. */
    record KeysInOrder() implements FlatMapFunction<Iterator<Tuple2<Integer, KeysToRange>>, String> {
        @Override
        public Iterator<String> call(Iterator<Tuple2<Integer, KeysToRange>> pieces) {
            List<KeysToRange> all = new ArrayList<>();
            int n = 0;
            while (pieces.hasNext()) {
                KeysToRange k = pieces.next()._2();
                all.add(k);
                n = Math.addExact(n, k.firsts().length);
            }
            long[] firsts = new long[n];
            String[] keys = new String[n];
            int at = 0;
            for (KeysToRange k : all) {
                System.arraycopy(k.firsts(), 0, firsts, at, k.firsts().length);
                System.arraycopy(k.keys(), 0, keys, at, k.keys().length);
                at += k.firsts().length;
            }
            Integer[] order = new Integer[n];
            for (int i = 0; i < n; i++) {
                order[i] = i;
            }
            Arrays.sort(order, (a, b) -> Long.compare(firsts[a], firsts[b]));
            List<String> out = new ArrayList<>(n);
            for (int i : order) {
                out.add(keys[i]);
            }
            return out.iterator();
        }
    }
}
