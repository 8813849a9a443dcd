package io.github.semyonsinchenko.safetensors.loader;

import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * Which chunk reads start when. Chunks are read in plan order ahead of the one the consumer waits
 * for, at most {@link LoaderConfig#prefetchDepth()} ahead, {@link LoaderConfig#maxConcurrentChunks()}
 * at once and within {@link LoaderConfig#byteBudget()} of resident bytes; the consumer's chunk, and a
 * chunk a lookup by name waits for, are always admitted, so memory stays within the budget plus one
 * chunk. Holds every chunk's {@link ChunkBuffer} and the hand-out claims on their tensors; one lock
 * ({@code this}) guards all of that state.
 */
final class ChunkScheduler {
    /** A tensor claimed for hand-out: tensor {@code index} of {@code buffer}'s chunk. */
    record Claim(ChunkBuffer buffer, int index) {}

    private final LoaderConfig config;
    private final ChunkReader reader;
    private final LoadStats stats;
    private final ChunkBuffer[] buffers;

    // Guarded by "this".
    private int nextToSubmit;
    private int consumePos;
    private int inFlight;
    private long residentBytes;
    private long peakResidentBytes;
    private boolean closed;

    ChunkScheduler(LoaderConfig config, List<Chunk> chunks, ChunkReader reader, LoadStats stats) {
        this.config = config;
        this.reader = reader;
        this.stats = stats;
        this.buffers = new ChunkBuffer[chunks.size()];
        for (int i = 0; i < buffers.length; i++) {
            buffers[i] = new ChunkBuffer(chunks.get(i), this, config.hugePages());
        }
    }

    /** {@return the chunk bytes held now (loaded or loading, not yet freed)} */
    synchronized long residentBytes() {
        return residentBytes;
    }

    /** {@return the most chunk bytes held at once so far} */
    synchronized long peakResidentBytes() {
        return peakResidentBytes;
    }

    synchronized void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("the loader is closed");
        }
    }

    synchronized boolean isClosed() {
        return closed;
    }

    /**
     * Claims the next tensor in plan order not handed out yet, starting the reads the rules allow.
     *
     * @return the claim, or null when every tensor is handed out
     */
    synchronized Claim claimNext() {
        ensureOpen();
        while (consumePos < buffers.length && buffers[consumePos].remaining == 0) {
            consumePos++;
        }
        if (consumePos >= buffers.length) {
            return null;
        }
        pump();
        ChunkBuffer buffer = buffers[consumePos];
        return new Claim(buffer, buffer.claimNext());
    }

    /**
     * Claims tensor {@code index} of chunk {@code chunk} (whose name is {@code name}), starting its
     * chunk's read now if it has not started: waited for now, it is admitted like the consumer's.
     *
     * @throws IllegalStateException if it was already handed out
     */
    synchronized Claim claim(int chunk, int index, String name) {
        ensureOpen();
        ChunkBuffer buffer = buffers[chunk];
        if (buffer.handed[index]) {
            throw new IllegalStateException("tensor \"" + name + "\" of " + buffer.chunk.file()
                    + " was already handed out");
        }
        buffer.claim(index);
        if (buffer.future == null) {
            submit(buffer);
        }
        return new Claim(buffer, index);
    }

    /** Gives a claim back: its tensor was not handed out. */
    synchronized void unclaim(Claim claim) {
        claim.buffer().unclaim(claim.index());
    }

    /** Starts reads while the rules allow; the consumer's chunk is always admitted. Caller holds the lock. */
    private void pump() {
        while (!closed && nextToSubmit < buffers.length) {
            if (buffers[nextToSubmit].future != null) {
                nextToSubmit++; // submitted out of order by a lookup
                continue;
            }
            Chunk c = buffers[nextToSubmit].chunk;
            boolean needed = nextToSubmit == consumePos;
            boolean withinDepth = nextToSubmit - consumePos <= config.prefetchDepth();
            boolean fits = residentBytes + c.byteSize() <= config.byteBudget();
            if (!needed && !(withinDepth && fits && inFlight < config.maxConcurrentChunks())) {
                return;
            }
            submit(buffers[nextToSubmit++]);
        }
    }

    private void submit(ChunkBuffer buffer) {
        Chunk c = buffer.chunk;
        inFlight++;
        residentBytes += c.byteSize();
        peakResidentBytes = Math.max(peakResidentBytes, residentBytes);
        buffer.refs.set(c.tensors().size());
        buffer.future = reader.read(buffer, this::isClosed).whenComplete((v, e) -> {
            if (e == null) {
                stats.chunksLoaded.incrementAndGet();
            }
            synchronized (this) {
                inFlight--;
                pump();
            }
        });
    }

    /** A buffer was freed: a read held back by the budget may start. */
    synchronized void released() {
        pump();
    }

    /** A submitted buffer's bytes are no longer resident. Caller holds the lock. */
    void unaccount(long bytes) {
        residentBytes -= bytes;
    }

    /**
     * Starts no read from now on.
     *
     * @return false if it was already closed
     */
    synchronized boolean close() {
        if (closed) {
            return false;
        }
        closed = true;
        return true;
    }

    /** Waits for every read started; their failures were reported to the consumer, or never asked for. */
    void awaitReads() {
        for (ChunkBuffer b : buffers) {
            CompletableFuture<Void> f = b.future;
            if (f != null) {
                try {
                    f.join();
                } catch (CompletionException | CancellationException ignored) {
                    // already reported to the consumer, or never asked for
                }
            }
        }
    }

    /** Frees every buffer; the tensors still holding one throw on access afterwards. */
    void freeAll() {
        for (ChunkBuffer b : buffers) {
            b.free();
        }
    }
}
