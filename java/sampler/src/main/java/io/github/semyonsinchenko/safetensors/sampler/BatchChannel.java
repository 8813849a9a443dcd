package io.github.semyonsinchenko.safetensors.sampler;

import io.github.semyonsinchenko.safetensors.mmap.MappedFileFaultException;
import java.util.ArrayDeque;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A bounded hand-over from one producer to its consumers, with the two things a plain queue lacks:
 * closing wakes everyone (producers blocked in {@link #put}, consumers in {@link #take}), and a
 * producer failure is passed on to consumers. Capacity 0 is a rendezvous: {@code put} returns once
 * a consumer has taken the batch (or the channel is closed).
 */
final class BatchChannel {
    private final String name;
    private final int capacity;
    private final ArrayDeque<Batch> items = new ArrayDeque<>();
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private long taken;
    private boolean closed;
    private boolean producerDone;
    private Throwable failure;

    BatchChannel(String name, int capacity) {
        this.name = name;
        this.capacity = capacity;
    }

    /** Hands {@code b} over; false if the channel was closed first (the caller still owns {@code b}). */
    boolean put(Batch b) throws InterruptedException {
        lock.lockInterruptibly();
        try {
            while (!closed && items.size() >= Math.max(capacity, 1)) {
                changed.await();
            }
            if (closed) {
                return false;
            }
            items.addLast(b);
            long ticket = taken + items.size();
            changed.signalAll();
            if (capacity == 0) {
                while (!closed && taken < ticket) {
                    changed.await();
                }
                // A closed rendezvous with the batch still queued: the closer drains and frees it.
            }
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** The next batch; blocks until one is there, the producer failed, or the channel is closed. */
    Batch take() throws InterruptedException {
        lock.lockInterruptibly();
        try {
            while (true) {
                Batch b = items.pollFirst();
                if (b != null) {
                    taken++;
                    changed.signalAll();
                    return b;
                }
                if (failure != null) {
                    // The typed fault's message names the file and the rule; its class name adds nothing.
                    String why = failure instanceof MappedFileFaultException ? failure.getMessage() : failure.toString();
                    throw new SamplerException("the " + name + " producer failed: " + why, failure);
                }
                if (closed || producerDone) {
                    throw new SamplerShutdownException("the sampler has been shut down (no more " + name
                            + " batches)");
                }
                changed.await();
            }
        } finally {
            lock.unlock();
        }
    }

    void fail(Throwable t) {
        lock.lock();
        try {
            if (failure == null) {
                failure = t;
            }
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    void producerDone() {
        lock.lock();
        try {
            producerDone = true;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Closes the channel, wakes every waiter and frees the batches nobody took. Idempotent. */
    void close() {
        ArrayDeque<Batch> left;
        lock.lock();
        try {
            closed = true;
            left = new ArrayDeque<>(items);
            items.clear();
            changed.signalAll();
        } finally {
            lock.unlock();
        }
        for (Batch b : left) {
            b.close();
        }
    }

    /** Batches waiting to be taken. */
    int size() {
        lock.lock();
        try {
            return items.size();
        } finally {
            lock.unlock();
        }
    }
}
