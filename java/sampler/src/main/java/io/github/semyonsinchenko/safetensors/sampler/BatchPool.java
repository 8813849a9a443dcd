package io.github.semyonsinchenko.safetensors.sampler;

import java.util.ArrayDeque;

/**
 * Reusable {@link BatchBuffers} of one shape: a batch takes a set and {@link Batch#close()} gives
 * it back, so steady-state sampling allocates no batch memory. The pool creates a new set only
 * when all are in use (the consumer holds more batches than before); it keeps at most
 * {@code maxIdle} idle sets and frees the rest. After {@link #close()} returned sets are freed.
 */
final class BatchPool implements AutoCloseable {
    private final int batch;
    private final int seqLen;
    private final int maxRows;
    private final long textRows;
    private final int maxIdle;
    private final ArrayDeque<BatchBuffers> idle = new ArrayDeque<>();
    private int created;
    private boolean closed;

    BatchPool(int batch, int seqLen, int maxRows, long textRows, int maxIdle) {
        this.batch = batch;
        this.seqLen = seqLen;
        this.maxRows = maxRows;
        this.textRows = textRows;
        this.maxIdle = maxIdle;
    }

    synchronized BatchBuffers acquire() {
        if (closed) {
            throw new IllegalStateException("the batch pool is closed");
        }
        BatchBuffers b = idle.pollFirst();
        if (b == null) {
            b = new BatchBuffers(batch, seqLen, maxRows, textRows);
            created++;
        }
        return b;
    }

    void release(BatchBuffers b) {
        boolean free;
        synchronized (this) {
            free = closed || idle.size() >= maxIdle;
            if (!free) {
                idle.addFirst(b);
            }
        }
        if (free) {
            b.close();
        }
    }

    /** Buffer sets created so far (a steady-state consumer keeps this constant). */
    synchronized int created() {
        return created;
    }

    @Override
    public void close() {
        ArrayDeque<BatchBuffers> toFree;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            toFree = new ArrayDeque<>(idle);
            idle.clear();
        }
        for (BatchBuffers b : toFree) {
            b.close();
        }
    }
}
