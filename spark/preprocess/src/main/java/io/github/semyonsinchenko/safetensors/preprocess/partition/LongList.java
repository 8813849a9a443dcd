package io.github.semyonsinchenko.safetensors.preprocess.partition;

import java.util.Arrays;

/** A growable array of longs (no boxing): what a partition collects before it knows how many. */
public final class LongList {
    private long[] a = new long[1024];
    private int n;

    /** Appends {@code v}. */
    public void add(long v) {
        if (n == a.length) {
            a = Arrays.copyOf(a, n * 2);
        }
        a[n++] = v;
    }

    /** The values added, in order. */
    public long[] toArray() {
        return Arrays.copyOf(a, n);
    }
}
