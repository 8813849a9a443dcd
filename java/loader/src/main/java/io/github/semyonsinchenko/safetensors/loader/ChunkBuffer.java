package io.github.semyonsinchenko.safetensors.loader;

import io.github.semyonsinchenko.safetensors.kernels.HugePages;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One chunk's memory while it is read and handed out: its buffer, which of its tensors were
 * claimed for hand-out, and how many handed-out tensors still hold it. The buffer is freed when the
 * last of them lets go, or when the loader closes. Its claims and its memory's state are guarded by
 * the scheduler's lock, which also does the resident-byte accounting.
 */
final class ChunkBuffer {
    /** With {@code hugePages}, chunks from this size on go into transparent huge pages (where core's HugePages gets them). */
    static final long HUGE_PAGE_MIN_BYTES = 4 * HugePages.HUGE_PAGE_BYTES;

    final Chunk chunk;
    final AtomicInteger refs = new AtomicInteger();
    /** Claimed for hand-out (guarded by the scheduler's lock). */
    final boolean[] handed;
    /** Tensors not claimed yet (guarded by the scheduler's lock). */
    int remaining;
    /** The read of the chunk, once the scheduler started it. */
    volatile CompletableFuture<Void> future;
    private final ChunkScheduler scheduler;
    private final boolean hugePages;
    private Arena arena;
    private MemorySegment segment;
    private boolean freed;

    ChunkBuffer(Chunk chunk, ChunkScheduler scheduler, boolean hugePages) {
        this.chunk = chunk;
        this.scheduler = scheduler;
        this.hugePages = hugePages;
        this.handed = new boolean[chunk.tensors().size()];
        this.remaining = handed.length;
    }

    /** {@return the chunk's bytes; set once {@link #allocate} ran, filled once {@link #future} completed} */
    MemorySegment segment() {
        return segment;
    }

    /** Claims the first tensor not handed out; the caller checked that one remains. */
    int claimNext() {
        for (int k = 0; k < handed.length; k++) {
            if (!handed[k]) {
                claim(k);
                return k;
            }
        }
        throw new IllegalStateException("no tensor left in chunk " + chunk.index());
    }

    void claim(int k) {
        handed[k] = true;
        remaining--;
    }

    void unclaim(int k) {
        handed[k] = false;
        remaining++;
    }

    /** Waits for the chunk's read; a failure is a {@link ChunkReadException} thrown on this thread. */
    void await() throws IOException {
        try {
            future.join();
        } catch (CompletionException | CancellationException e) {
            Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
            if (cause instanceof ChunkReadException cre) {
                throw new ChunkReadException(cre); // this thread's stack, same message
            }
            throw new ChunkReadException(chunk, cause);
        }
    }

    void allocate() {
        Arena a = Arena.ofShared();
        MemorySegment s;
        try {
            // Large chunks are mapped on demand: the read fills them at once, so Arena.allocate's
            // zeroing pass (the largest client CPU cost in the profile) would only delay the GETs.
            if (chunk.byteSize() < HUGE_PAGE_MIN_BYTES) {
                s = a.allocate(Math.max(1, chunk.byteSize()), 64).asSlice(0, chunk.byteSize());
            } else if (hugePages) {
                s = HugePages.allocate(a, chunk.byteSize());
            } else {
                s = HugePages.allocateOnDemand(a, chunk.byteSize());
            }
        } catch (RuntimeException | Error e) {
            a.close();
            throw e;
        }
        synchronized (scheduler) {
            if (freed) { // closed before the read started
                a.close();
                throw new CancellationException("the loader was closed");
            }
            arena = a;
            segment = s;
        }
    }

    /** One handed-out tensor lets go; the last one frees the buffer, which may admit the next read. */
    void release() {
        if (refs.decrementAndGet() == 0) {
            free();
            scheduler.released();
        }
    }

    void free() {
        Arena a;
        synchronized (scheduler) {
            if (freed) {
                return;
            }
            freed = true;
            a = arena;
            arena = null;
            if (future != null) {
                scheduler.unaccount(chunk.byteSize());
            }
        }
        if (a != null) {
            a.close();
        }
    }
}
