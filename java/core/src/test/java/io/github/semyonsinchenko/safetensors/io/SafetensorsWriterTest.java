package io.github.semyonsinchenko.safetensors.io;

import io.github.semyonsinchenko.safetensors.format.LittleEndian;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.format.Header;
import io.github.semyonsinchenko.safetensors.format.SafetensorsException;
import io.github.semyonsinchenko.safetensors.format.TensorInfo;
import io.github.semyonsinchenko.safetensors.format.Violation;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.Channels;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SafetensorsWriterTest {
    @TempDir
    Path dir;

    private static SafetensorsWriter mixed() {
        return new SafetensorsWriter()
                .metadata("k", "v")
                .add("b", Dtype.U8, new long[] {3}, new byte[] {1, 2, 3})
                .add("a", Dtype.F32, new long[] {2}, new float[] {1.5f, -2f})
                .add("c", Dtype.F32, new long[] {1}, new float[] {7f})
                .add("h", Dtype.BF16, new long[] {1}, new short[] {0x3F80})
                .add("z", Dtype.I64, new long[] {}, new long[] {42L});
    }

    @Test
    void layoutFollowsTheReferenceDescendingAlignmentThenName() throws IOException {
        Header h = mixed().header();
        // I64 > F32 > BF16 > U8 in the reference's Dtype order; equal dtypes sorted by name.
        assertEquals(List.of("z", "a", "c", "h", "b"), h.tensors().stream().map(TensorInfo::name).toList());
        assertEquals(0, h.headerLength() % 8, "the header is padded to a multiple of 8");
        assertEquals(0, h.dataOffset() % 8);
    }

    @Test
    void keepInsertionOrderKeepsIt() throws IOException {
        Header h = mixed().keepInsertionOrder(true).header();
        assertEquals(List.of("b", "a", "c", "h", "z"), h.tensors().stream().map(TensorInfo::name).toList());
    }

    @Test
    void headerJsonHasTheReferenceShapeAndSpacePadding() throws IOException {
        byte[] bytes = mixed().header().toBytes();
        long n = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).getLong();
        String json = new String(bytes, 8, (int) n, StandardCharsets.UTF_8);
        assertTrue(json.startsWith("{\"__metadata__\":{\"k\":\"v\"},\"z\":{\"dtype\":\"I64\",\"shape\":[],"
                + "\"data_offsets\":[0,8]}"), json);
        assertTrue(json.stripTrailing().endsWith("}"));
        assertTrue(json.substring(json.lastIndexOf('}') + 1).chars().allMatch(c -> c == ' '));
    }

    @Test
    void pathChannelAndStreamTargetsProduceTheSameBytes() throws IOException {
        Path p = dir.resolve("m.safetensors");
        mixed().write(p);
        ByteArrayOutputStream viaStream = new ByteArrayOutputStream();
        mixed().write(viaStream);
        ByteArrayOutputStream viaChannel = new ByteArrayOutputStream();
        mixed().write(Channels.newChannel(viaChannel));
        byte[] fromFile = Files.readAllBytes(p);
        assertArrayEquals(fromFile, viaStream.toByteArray());
        assertArrayEquals(fromFile, viaChannel.toByteArray());
        try (SafetensorsFile f = SafetensorsFile.open(p)) {
            assertArrayEquals(new float[] {1.5f, -2f}, f.tensor("a").toFloatArray());
            assertEquals(42L, f.tensor("z").getLong(0));
            assertEquals("v", f.metadata().get("k"));
        }
    }

    /**
     * Many small segment tensors (kv datasets of embeddings) through a channel: the same bytes as
     * the stream path, in a few large write calls rather than one per tensor; a large tensor among
     * them is still written whole from its own memory.
     */
    @Test
    void smallTensorsAreGatheredIntoFewChannelWrites() throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            SafetensorsWriter w = new SafetensorsWriter().keepInsertionOrder(true);
            int small = 5000;
            for (int i = 0; i < small; i++) {
                MemorySegment s = arena.allocate(512);
                s.fill((byte) i);
                w.add("t" + i, Dtype.F32, new long[] {128}, s);
                if (i == small / 2) {
                    MemorySegment big = arena.allocate(3 << 20);
                    big.fill((byte) 0x5A);
                    w.add("big", Dtype.F32, new long[] {3 << 18}, big);
                }
            }
            ByteArrayOutputStream viaStream = new ByteArrayOutputStream();
            w.write(viaStream);
            ByteArrayOutputStream viaChannel = new ByteArrayOutputStream();
            int[] calls = {0};
            var sink = Channels.newChannel(viaChannel);
            Header h = w.write(new java.nio.channels.WritableByteChannel() {
                @Override
                public int write(ByteBuffer src) throws IOException {
                    calls[0]++;
                    return sink.write(src);
                }

                @Override
                public boolean isOpen() {
                    return true;
                }

                @Override
                public void close() {}
            });
            assertArrayEquals(viaStream.toByteArray(), viaChannel.toByteArray());
            assertEquals(h.fileSize(), viaChannel.size());
            // 2.5 MB of small tensors and header in 1 MiB batches, one write for the big one.
            assertTrue(calls[0] <= 8, calls[0] + " write calls for " + (small + 1) + " tensors");
            Path p = dir.resolve("small.safetensors");
            w.write(p);
            assertArrayEquals(viaStream.toByteArray(), Files.readAllBytes(p));
        }
    }

    @Test
    void segmentsAndByteSourcesWriteTheSameAsHeapArrays() throws IOException {
        float[] values = new float[1000];
        for (int i = 0; i < values.length; i++) {
            values[i] = i * 0.25f - 3;
        }
        Path fromArray = dir.resolve("array.safetensors");
        new SafetensorsWriter().add("x", Dtype.F32, new long[] {10, 100}, values).write(fromArray);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment off = arena.allocate(4000);
            for (int i = 0; i < values.length; i++) {
                off.setAtIndex(LittleEndian.F32, i, values[i]);
            }
            Path fromSegment = dir.resolve("segment.safetensors");
            new SafetensorsWriter().add("x", Dtype.F32, new long[] {10, 100}, off).write(fromSegment);
            Path fromSource = dir.resolve("source.safetensors");
            new SafetensorsWriter().add("x", Dtype.F32, new long[] {10, 100}, out -> {
                for (int row = 0; row < 10; row++) {
                    out.write(off.asSlice(row * 400L, 400).asByteBuffer());
                }
            }).write(fromSource);
            assertArrayEquals(Files.readAllBytes(fromArray), Files.readAllBytes(fromSegment));
            assertArrayEquals(Files.readAllBytes(fromArray), Files.readAllBytes(fromSource));
        }
    }

    @Test
    void wrongDataLengthIsRejectedBeforeAnythingIsWritten() {
        Path p = dir.resolve("bad.safetensors");
        SafetensorsException e = assertThrows(SafetensorsException.class, () -> new SafetensorsWriter()
                .add("w", Dtype.F32, new long[] {2, 2}, new float[3]).write(p));
        assertEquals(Violation.SIZE_MISMATCH, e.violation());
        assertEquals("w", e.tensor());
        assertTrue(e.getMessage().contains("has 12 bytes but F32 [2, 2] needs 16"), e.getMessage());
        assertTrue(Files.notExists(p));
    }

    @Test
    void aShortByteSourceFailsAndLeavesNoFileBehind() throws IOException {
        Path p = dir.resolve("x.safetensors");
        Files.writeString(p, "previous contents");
        SafetensorsException e = assertThrows(SafetensorsException.class, () -> new SafetensorsWriter()
                .add("w", Dtype.U8, new long[] {10}, out -> out.write(ByteBuffer.allocate(9))).write(p));
        assertEquals(Violation.SIZE_MISMATCH, e.violation());
        assertEquals("previous contents", Files.readString(p), "a failed write must not touch the target");
        try (Stream<Path> files = Files.list(dir)) {
            assertEquals(List.of(p), files.toList(), "no temporary file may remain");
        }
    }

    @Test
    void aThrowingSourceLeavesTheTargetAndNoTemporaryFile() throws IOException {
        Path p = dir.resolve("y.safetensors");
        IOException e = assertThrows(IOException.class, () -> new SafetensorsWriter()
                .add("w", Dtype.U8, new long[] {10}, out -> {
                    out.write(ByteBuffer.allocate(5));
                    throw new IOException("disk on fire");
                }).write(p));
        assertEquals("disk on fire", e.getMessage());
        try (Stream<Path> files = Files.list(dir)) {
            assertEquals(0, files.count());
        }
    }

    @Test
    void rewritingAFileWhileItIsMappedKeepsTheOldMappingIntact() throws IOException {
        Path p = dir.resolve("live.safetensors");
        new SafetensorsWriter().add("w", Dtype.F32, new long[] {2}, new float[] {1, 2}).write(p);
        try (SafetensorsFile old = SafetensorsFile.open(p)) {
            new SafetensorsWriter().add("w", Dtype.F32, new long[] {3}, new float[] {7, 8, 9}).write(p);
            assertArrayEquals(new float[] {1, 2}, old.tensor("w").toFloatArray());
        }
        try (SafetensorsFile now = SafetensorsFile.open(p)) {
            assertArrayEquals(new float[] {7, 8, 9}, now.tensor("w").toFloatArray());
        }
    }

    @Test
    void duplicateAndReservedNamesAreRejected() {
        SafetensorsWriter w = new SafetensorsWriter().add("a", Dtype.U8, new long[] {1}, new byte[1]);
        assertThrows(IllegalArgumentException.class, () -> w.add("a", Dtype.U8, new long[] {1}, new byte[1]));
        SafetensorsException e = assertThrows(SafetensorsException.class, () -> new SafetensorsWriter()
                .add("__metadata__", Dtype.U8, new long[] {1}, new byte[1]).header());
        assertEquals(Violation.TENSOR_FIELDS, e.violation());
    }

    @Test
    void subByteDtypesMustFillWholeBytes() throws IOException {
        assertEquals(2, new SafetensorsWriter().add("f4", Dtype.F4, new long[] {4}, new byte[2]).header()
                .tensor("f4").byteSize());
        SafetensorsException e = assertThrows(SafetensorsException.class, () -> new SafetensorsWriter()
                .add("f4", Dtype.F4, new long[] {3}, new byte[2]).header());
        assertEquals(Violation.MISALIGNED_SIZE, e.violation());
    }

    @Test
    void emptyFileHasAnEmptyObjectHeader() throws IOException {
        Path p = dir.resolve("empty.safetensors");
        new SafetensorsWriter().write(p);
        byte[] bytes = Files.readAllBytes(p);
        assertEquals(16, bytes.length);
        assertEquals("{}      ", new String(bytes, 8, 8, StandardCharsets.UTF_8));
        try (SafetensorsFile f = SafetensorsFile.open(p)) {
            assertEquals(0, f.size());
        }
    }

    @Test
    void bigSegmentsAreWrittenInChunksWithoutHeapStaging() throws IOException {
        long size = (3L << 20) + 5;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment data = arena.allocate(size);
            for (long i = 0; i < size; i += 4096) {
                data.set(ValueLayout.JAVA_BYTE, i, (byte) (i >>> 12));
            }
            Path p = dir.resolve("big.safetensors");
            new SafetensorsWriter().add("blob", Dtype.U8, new long[] {size}, data).write(p);
            try (SafetensorsFile f = SafetensorsFile.open(p)) {
                assertEquals(-1, f.tensor("blob").data().mismatch(data));
            }
        }
    }
}
