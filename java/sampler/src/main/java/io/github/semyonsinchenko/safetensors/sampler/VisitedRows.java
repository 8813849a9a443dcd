package io.github.semyonsinchenko.safetensors.sampler;

import java.util.Arrays;

/**
 * The rows one sequence has visited and their sequence ids: an open-addressing hash table with
 * linear probing, sized for {@code maxRows} entries at a load of at most a quarter. A sequence holds
 * at most a few hundred rows, so the table stays in the core's first-level cache, where an array
 * indexed by global row (megabytes for a large database) cost a cache miss per neighbour looked up.
 * Entries carry the generation of the sequence that wrote them, so {@link #clear()} is O(1).
 */
final class VisitedRows {
    private final int[] rows;
    private final int[] ids;
    private final int[] generations;
    private final int mask;
    private final int shift;
    private int generation = 1;

    VisitedRows(int maxRows) {
        int capacity = Integer.highestOneBit(Math.max(16, maxRows) * 4 - 1) << 1;
        rows = new int[capacity];
        ids = new int[capacity];
        generations = new int[capacity];
        mask = capacity - 1;
        shift = 32 - Integer.numberOfTrailingZeros(capacity);
    }

    /** Forgets every row. */
    void clear() {
        if (++generation == 0) {
            Arrays.fill(generations, 0);
            generation = 1;
        }
    }

    private int slot(int row) {
        return (row * 0x9E3779B9) >>> shift;
    }

    /** The sequence id of {@code row}, or -1 if it was not visited. */
    int id(int row) {
        int gen = generation;
        for (int s = slot(row); generations[s] == gen; s = (s + 1) & mask) {
            if (rows[s] == row) {
                return ids[s];
            }
        }
        return -1;
    }

    boolean contains(int row) {
        return id(row) >= 0;
    }

    /** Records {@code row} with sequence id {@code id}; false (and no change) if it was already there. */
    boolean add(int row, int id) {
        int gen = generation;
        int s = slot(row);
        while (generations[s] == gen) {
            if (rows[s] == row) {
                return false;
            }
            s = (s + 1) & mask;
        }
        generations[s] = gen;
        rows[s] = row;
        ids[s] = id;
        return true;
    }
}
