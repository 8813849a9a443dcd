package io.github.semyonsinchenko.safetensors.preprocess;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.api.java.function.PairFlatMapFunction;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.unsafe.types.UTF8String;
import scala.Tuple2;

/**
 * The partition functions of the text vocabulary ({@link TextVocabulary}). The cells arrive
 * hash-partitioned by their cut string, as rows of {@code at} (long), {@code key} (string) and
 * {@code whole} (boolean): every occurrence of a string is in one partition, so a hash map there
 * finds its first occurrence (smallest {@code at}) without a further exchange of the text. Then
 * only longs move, to the range ({@link CellRanges}) of each first occurrence, where the sorted
 * firsts give each cell its rank within the range.
 */
final class FirstOccurrences {
    private FirstOccurrences() {}

    /** Field positions in the key-partitioned rows. */
    private static final int AT = 0;
    private static final int KEY = 1;
    private static final int WHOLE = 2;

    /** One key partition's pieces for one range: first occurrences, and the whole cells (their first, their at). */
    record ToRange(long[] firsts, long[] cellFirsts, long[] cellAts) implements Serializable {}

    /**
     * One range's whole cells with their rank among the range's first occurrences (the index
     * without the range's offset), and how many first occurrences the range holds.
     */
    record Ranked(long firsts, long[] at, int[] rank) implements Serializable {}

    /** One key partition's first occurrences of one range, with their strings. */
    record KeysToRange(long[] firsts, String[] keys) implements Serializable {}

    /** A partition's distinct strings, numbered as they come, with each one's smallest {@code at}. */
    private static final class Firsts {
        private final HashMap<UTF8String, Integer> ids = new HashMap<>();
        private final List<UTF8String> keys = new ArrayList<>();
        private long[] first = new long[1024];

        /** Records an occurrence; returns the string's number. */
        int add(UTF8String key, long at) {
            Integer id = ids.get(key);
            if (id == null) {
                int n = keys.size();
                UTF8String own = key.clone(); // the row, and so its string, is reused by the reader
                ids.put(own, n);
                keys.add(own);
                if (n == first.length) {
                    first = Arrays.copyOf(first, n * 2);
                }
                first[n] = at;
                return n;
            }
            if (at < first[id]) {
                first[id] = at;
            }
            return id;
        }

        int size() {
            return keys.size();
        }
    }

    /** Growable primitive arrays (the partition's whole cells). */
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

    /** Key partition to ranges: every distinct string's first occurrence and every whole cell, by its first's range. */
    record ToRanges(CellRanges ranges) implements PairFlatMapFunction<Iterator<InternalRow>, Integer, ToRange> {
        @Override
        public Iterator<Tuple2<Integer, ToRange>> call(Iterator<InternalRow> rows) {
            Firsts keys = new Firsts();
            Longs cellAt = new Longs();
            Ints cellId = new Ints();
            while (rows.hasNext()) {
                InternalRow r = rows.next();
                long at = r.getLong(AT);
                int id = keys.add(r.getUTF8String(KEY), at);
                // A cut cell adds its cut string but finds no index (headwater looks the uncut value up).
                if (r.getBoolean(WHOLE)) {
                    cellAt.add(at);
                    cellId.add(id);
                }
            }
            // Counting sort by range into arrays of exact size.
            int n = keys.size();
            long[] first = keys.first;
            int[] rangeOf = new int[n];
            int[] nFirsts = new int[ranges.count()];
            int[] nCells = new int[ranges.count()];
            for (int id = 0; id < n; id++) {
                rangeOf[id] = ranges.rangeOf(first[id]);
                nFirsts[rangeOf[id]]++;
            }
            for (int i = 0; i < cellId.n; i++) {
                nCells[rangeOf[cellId.a[i]]]++;
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
                int id = cellId.a[i];
                ToRange t = out[rangeOf[id]];
                int k = fill[rangeOf[id]]++;
                t.cellFirsts()[k] = first[id];
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

    /** One range: its first occurrences sorted, each whole cell ranked by its first; always one element. */
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
    record KeysToRanges(CellRanges ranges) implements PairFlatMapFunction<Iterator<InternalRow>, Integer, KeysToRange> {
        @Override
        public Iterator<Tuple2<Integer, KeysToRange>> call(Iterator<InternalRow> rows) {
            Firsts keys = new Firsts();
            while (rows.hasNext()) {
                InternalRow r = rows.next();
                keys.add(r.getUTF8String(KEY), r.getLong(AT));
            }
            int n = keys.size();
            int[] rangeOf = new int[n];
            int[] count = new int[ranges.count()];
            for (int id = 0; id < n; id++) {
                rangeOf[id] = ranges.rangeOf(keys.first[id]);
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
                out[rangeOf[id]].firsts()[k] = keys.first[id];
                out[rangeOf[id]].keys()[k] = keys.keys.get(id).toString();
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
