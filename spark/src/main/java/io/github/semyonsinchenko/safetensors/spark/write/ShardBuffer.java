package io.github.semyonsinchenko.safetensors.spark.write;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * Off-heap memory for the tensors of the shard being built. A shard's header lists every tensor,
 * so the bytes wait here until the shard is closed and streamed to the file. Memory comes in large
 * chunks that are reused for the task's next shard and freed when the task ends.
 */
final class ShardBuffer implements AutoCloseable {
    static final long CHUNK_BYTES = 64L << 20;

    private final Arena arena = Arena.ofShared();
    private final List<MemorySegment> chunks = new ArrayList<>();
    private int current;
    private long position;

    /** A slice of {@code bytes} contiguous bytes, valid until {@link #reset()}. Contents are undefined. */
    MemorySegment allocate(long bytes) {
        while (true) {
            if (current == chunks.size()) {
                chunks.add(arena.allocate(Math.max(CHUNK_BYTES, bytes), 64));
            }
            MemorySegment chunk = chunks.get(current);
            long aligned = (position + 7) & ~7L;
            if (aligned + bytes <= chunk.byteSize()) {
                position = aligned + bytes;
                return chunk.asSlice(aligned, bytes);
            }
            if (position == 0) {
                // A reused chunk too small for this tensor: put a big enough one in its place.
                chunks.add(current, arena.allocate(bytes, 64));
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

    long reservedBytes() {
        long total = 0;
        for (MemorySegment c : chunks) {
            total += c.byteSize();
        }
        return total;
    }

    @Override
    public void close() {
        arena.close();
    }
}
