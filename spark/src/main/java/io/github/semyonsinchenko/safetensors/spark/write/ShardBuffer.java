package io.github.semyonsinchenko.safetensors.spark.write;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Off-heap memory for the tensors of the shard being built. A shard's header lists every tensor,
 * so the bytes wait here until the shard is closed and streamed to the file. Memory comes in large
 * chunks that are reused for the task's next shard and, when the task ends, handed to the next
 * task of this JVM through a small pool.
 *
 * <p>Why a pool: fresh native memory is zero-filled by {@link Arena#allocate} and page-faulted in
 * 4 KiB at a time, which dominated a profile of the write when every task allocated its own chunks
 * (bench/results/spark-write.md, last note). The pool keeps at most 1 GiB of idle chunks
 * per JVM (system property {@code safetensors.spark.write.poolBytes}); anything beyond is freed.
 */
final class ShardBuffer implements AutoCloseable {
    static final long CHUNK_BYTES = 64L << 20;
    static final String POOL_PROPERTY = "safetensors.spark.write.poolBytes";
    private static final long MAX_POOLED_BYTES = Long.getLong(POOL_PROPERTY, 1L << 30);

    /** A chunk with its own arena, so it can be freed on its own when the pool is full. */
    private record Chunk(Arena arena, MemorySegment segment) {
        static Chunk allocate(long bytes) {
            Arena arena = Arena.ofShared();
            return new Chunk(arena, arena.allocate(bytes, 64));
        }

        long size() {
            return segment.byteSize();
        }
    }

    private static final ConcurrentLinkedDeque<Chunk> POOL = new ConcurrentLinkedDeque<>();
    private static final AtomicLong POOLED_BYTES = new AtomicLong();

    private final long chunkBytes;
    private final List<Chunk> chunks = new ArrayList<>();
    private int current;
    private long position;
    private boolean closed;

    ShardBuffer() {
        this(CHUNK_BYTES);
    }

    /** A buffer taking memory in chunks of at least {@code chunkBytes} (larger for larger slices). */
    ShardBuffer(long chunkBytes) {
        this.chunkBytes = chunkBytes;
    }

    /** A slice of {@code bytes} contiguous bytes, valid until {@link #reset()}. Contents are undefined. */
    MemorySegment allocate(long bytes) {
        while (true) {
            if (current == chunks.size()) {
                chunks.add(take(Math.max(chunkBytes, bytes)));
            }
            MemorySegment chunk = chunks.get(current).segment();
            long aligned = (position + 7) & ~7L;
            if (aligned + bytes <= chunk.byteSize()) {
                position = aligned + bytes;
                return chunk.asSlice(aligned, bytes);
            }
            if (position == 0) {
                // A reused chunk too small for this tensor: put a big enough one in its place.
                chunks.add(current, take(bytes));
                continue;
            }
            current++;
            position = 0;
        }
    }

    /** Forgets every slice; the memory is reused by later {@link #allocate} calls. */
    void reset() {
        current = 0;
        position = 0;
    }

    /** Hands the chunks to the pool (or frees them when it is full). Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (Chunk c : chunks) {
            give(c);
        }
        chunks.clear();
    }

    /** A pooled chunk of at least {@code bytes}, else a new one. */
    private static Chunk take(long bytes) {
        for (Iterator<Chunk> it = POOL.iterator(); it.hasNext(); ) {
            Chunk c = it.next();
            if (c.size() >= bytes && POOL.removeFirstOccurrence(c)) {
                POOLED_BYTES.addAndGet(-c.size());
                return c;
            }
        }
        return Chunk.allocate(bytes);
    }

    private static void give(Chunk c) {
        if (POOLED_BYTES.addAndGet(c.size()) <= MAX_POOLED_BYTES) {
            POOL.push(c);
        } else {
            POOLED_BYTES.addAndGet(-c.size());
            c.arena().close();
        }
    }

    /** Idle pooled bytes in this JVM (tests). */
    static long pooledBytes() {
        return POOLED_BYTES.get();
    }
}
