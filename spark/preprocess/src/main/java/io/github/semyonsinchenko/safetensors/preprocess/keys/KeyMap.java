package io.github.semyonsinchenko.safetensors.preprocess.keys;

import io.github.semyonsinchenko.safetensors.preprocess.BuildContext;
import java.io.Serializable;
import java.util.Locale;

/**
 * A primary-key map small enough to broadcast: i64 key to global row (u32), in primitive arrays,
 * so a few million keys cost tens of MiB and no object per entry. Keys that fill most of their
 * range (surrogate ids, the usual primary key) index the rows directly: one int per key in the
 * range, which for a few million keys stays in the processor's cache, where the graph's millions
 * of random lookups of foreign keys then hit. Other keys go in an open-addressing table.
 */
public final class KeyMap implements Serializable {
    private static final long serialVersionUID = 2L;
    private static final long MIX = 0x9E37_79B9_7F4A_7C15L;
    private static final int MAX_BITS = 30;

    /** The hash table's keys; null when the rows are indexed by {@code key - base}. */
    private final long[] keys;
    /** {@code row + 1} as an unsigned int; 0 marks an empty slot (rows stay below 2^32 - 1). */
    private final int[] rows;
    private final long base;
    private final int mask;
    private final int shift;
    private int size;

    /** A hash map with room for {@code capacity} keys (at most half its slots used). */
    KeyMap(long capacity) {
        int bits = slotBits(capacity);
        if (bits > MAX_BITS) {
            throw new IllegalArgumentException(String.format(Locale.ROOT,
                    "%d keys are too many for a broadcast key map", capacity));
        }
        keys = new long[1 << bits];
        rows = new int[1 << bits];
        base = 0;
        mask = (1 << bits) - 1;
        shift = 64 - bits;
    }

    private KeyMap(long base, int range) {
        keys = null;
        rows = new int[range];
        this.base = base;
        mask = 0;
        shift = 0;
    }

    /**
     * A map for {@code count} keys between {@code min} and {@code max}: indexed directly when that
     * takes no more memory than the hash table would ({@link #bytes}), else the hash table.
     */
    static KeyMap forKeys(long count, long min, long max) {
        return indexable(count, min, max) ? new KeyMap(min, (int) (max - min + 1)) : new KeyMap(count);
    }

    /**
     * Whether {@link #forKeys} indexes: the range takes no more bytes than the hash table and no
     * more slots than the largest table ({@code 2^MAX_BITS}, an array Java can allocate).
     */
    static boolean indexable(long count, long min, long max) {
        long range = max - min + 1; // overflows to <= 0 for the widest spans: then not direct
        long hashed = bytes(count);
        return count > 0 && range > 0 && range <= 1L << MAX_BITS && hashed != Long.MAX_VALUE
                && range <= hashed / Integer.BYTES;
    }

    /** Whether the rows are indexed by key (else hashed); for tests. */
    boolean direct() {
        return keys == null;
    }

    /** Maps {@code key} to {@code row} unless it maps to a later row: duplicate keys, the last row wins. */
    void putLast(long key, long row) {
        if (row < 0 || row >= BuildContext.U32_LIMIT) {
            throw new IllegalArgumentException("row " + row + " is not a u32 row index");
        }
        if (keys == null) {
            long at = key - base;
            if (at < 0 || at >= rows.length) {
                throw new IllegalStateException(String.format(Locale.ROOT,
                        "key %d is outside the key map's range [%d, %d]", key, base, base + rows.length - 1));
            }
            int i = (int) at;
            if (rows[i] == 0) {
                size++;
            }
            if (Integer.toUnsignedLong(rows[i]) - 1 < row) { // an empty slot reads as row -1
                rows[i] = (int) (row + 1);
            }
            return;
        }
        int i = slot(key);
        while (rows[i] != 0) {
            if (keys[i] == key) {
                if (Integer.toUnsignedLong(rows[i]) - 1 < row) {
                    rows[i] = (int) (row + 1);
                }
                return;
            }
            i = (i + 1) & mask;
        }
        if (2L * (size + 1) > rows.length) {
            throw new IllegalStateException("key map full: more keys than its capacity " + rows.length / 2);
        }
        keys[i] = key;
        rows[i] = (int) (row + 1);
        size++;
    }

    /** The row of {@code key}, or -1 when the key is not in the map. */
    public long get(long key) {
        if (keys == null) {
            long at = key - base;
            return at < 0 || at >= rows.length ? -1 : Integer.toUnsignedLong(rows[(int) at]) - 1;
        }
        int i = slot(key);
        while (rows[i] != 0) {
            if (keys[i] == key) {
                return Integer.toUnsignedLong(rows[i]) - 1;
            }
            i = (i + 1) & mask;
        }
        return -1;
    }

    /** The number of keys. */
    public int size() {
        return size;
    }

    /** The bytes of the arrays of a map with room for {@code capacity} keys (beyond the largest: Long.MAX_VALUE). */
    static long bytes(long capacity) {
        int bits = slotBits(capacity);
        return bits > MAX_BITS ? Long.MAX_VALUE : (Long.BYTES + Integer.BYTES) * (1L << bits);
    }

    private static int slotBits(long capacity) {
        return Math.max(2, 64 - Long.numberOfLeadingZeros(Math.max(1, 2 * Math.min(capacity, 1L << 40) - 1)));
    }

    private int slot(long key) {
        return (int) ((key * MIX) >>> shift); // Fibonacci hashing: consecutive keys spread over the slots
    }
}
