package io.github.semyonsinchenko.safetensors.spark.write;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;

class ShardBufferTest {

    @Test
    void aClosedBuffersChunksServeTheNextBufferWithoutNewMemory() {
        long address;
        try (ShardBuffer first = new ShardBuffer()) {
            MemorySegment s = first.allocate(1000);
            s.set(ValueLayout.JAVA_BYTE, 0, (byte) 42);
            address = s.address();
        }
        long pooled = ShardBuffer.pooledBytes();
        assertTrue(pooled >= ShardBuffer.CHUNK_BYTES, "the chunk went back to the pool: " + pooled);
        try (ShardBuffer second = new ShardBuffer()) {
            MemorySegment s = second.allocate(1000);
            // The pool hands out the most recently returned chunk first.
            assertEquals(address, s.address());
            assertEquals(pooled - ShardBuffer.CHUNK_BYTES, ShardBuffer.pooledBytes());
        }
    }

    @Test
    void slicesWithinAShardDoNotOverlapAndResetReusesTheMemory() {
        try (ShardBuffer b = new ShardBuffer()) {
            MemorySegment a = b.allocate(13);
            MemorySegment c = b.allocate(8);
            assertTrue(c.address() >= a.address() + 13 && c.address() % 8 == 0, "8-byte aligned, after a");
            MemorySegment big = b.allocate(ShardBuffer.CHUNK_BYTES + 1); // larger than a chunk: its own chunk
            assertEquals(ShardBuffer.CHUNK_BYTES + 1, big.byteSize());
            b.reset();
            assertEquals(a.address(), b.allocate(13).address());
        }
    }
}
