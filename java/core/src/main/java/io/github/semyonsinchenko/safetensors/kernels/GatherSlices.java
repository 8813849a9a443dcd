package io.github.semyonsinchenko.safetensors.kernels;

import java.lang.foreign.MemorySegment;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * Splits a checked gather into contiguous index ranges, each written to its own part of the
 * destination: the caller runs the first range, the executor the others, and the call waits for
 * every range (even after one failed) before it returns or throws, so no range runs on afterwards.
 */
final class GatherSlices {
    /**
     * The least output a range is given. Handing a range to another thread costs tens of
     * microseconds; a copy of 256 KiB takes about as long, so smaller ranges would lose time.
     */
    static final long MIN_SLICE_BYTES = 256L << 10;

    /** One range: indices {@code [from, from + count)}, written to rows {@code [from, from + count)}. */
    interface Range {
        void run(long from, long count);
    }

    private GatherSlices() {}

    /** A thread that never runs: a segment it may access is one any thread may access. */
    private static final Thread OTHER_THREAD = Thread.ofPlatform().unstarted(() -> {});

    static void requireParallelism(Executor executor, int parallelism, MemorySegment... segments) {
        if (parallelism < 1) {
            throw new IllegalArgumentException(String.format(Locale.ROOT,
                    "gather: parallelism must be at least 1, got %d", parallelism));
        }
        if (parallelism > 1) {
            Objects.requireNonNull(executor, "executor (needed when parallelism > 1)");
            String[] names = {"table", "indices", "dst"};
            for (int i = 0; i < segments.length; i++) {
                if (segments[i] != null && !segments[i].isAccessibleBy(OTHER_THREAD)) {
                    throw new IllegalArgumentException(String.format(Locale.ROOT, "gather: %s belongs to a confined"
                            + " arena, so the executor's threads cannot read or write it; a parallel gather needs"
                            + " segments of a shared, automatic or global arena, a mapping or a heap array",
                            names[i]));
                }
            }
        }
    }

    /** How many ranges {@code nIdx} rows of {@code dstRowBytes} output bytes are split into. */
    static int count(long nIdx, long dstRowBytes, int parallelism) {
        long bySize = Math.max(1, nIdx * dstRowBytes / MIN_SLICE_BYTES); // checked for overflow by Arguments
        return (int) Math.min(Math.min(parallelism, bySize), nIdx);
    }

    static void run(long nIdx, long dstRowBytes, Executor executor, int parallelism, Range range) {
        int n = count(nIdx, dstRowBytes, parallelism);
        if (n == 1) {
            range.run(0, nIdx);
            return;
        }
        long per = nIdx / n;
        long extra = nIdx % n; // the first `extra` ranges get one more index
        CompletableFuture<?>[] others = new CompletableFuture<?>[n];
        for (int k = 1; k < n; k++) {
            long from = k * per + Math.min(k, extra);
            long count = per + (k < extra ? 1 : 0);
            try {
                others[k] = CompletableFuture.runAsync(() -> range.run(from, count), executor);
            } catch (RejectedExecutionException e) {
                others[k] = null; // run on the caller below instead
            }
        }
        Throwable first = null;
        for (int k = 0; k < n; k++) {
            try {
                if (k == 0 || others[k] == null) {
                    range.run(k * per + Math.min(k, extra), per + (k < extra ? 1 : 0));
                } else {
                    others[k].join();
                }
            } catch (CompletionException e) {
                first = collect(first, e.getCause() == null ? e : e.getCause());
            } catch (RuntimeException | Error e) {
                first = collect(first, e);
            }
        }
        if (first instanceof RuntimeException r) {
            throw r;
        }
        if (first instanceof Error err) {
            throw err;
        }
        if (first != null) {
            throw new IllegalStateException("gather: a range failed", first);
        }
    }

    /** The error of the lowest range wins; later ones are attached as suppressed. */
    private static Throwable collect(Throwable first, Throwable next) {
        if (first == null) {
            return next;
        }
        if (first != next) {
            first.addSuppressed(next);
        }
        return first;
    }
}
