package io.github.semyonsinchenko.safetensors.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.format.SafetensorsException;
import io.github.semyonsinchenko.safetensors.format.Violation;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Parsing from memory ({@link SafetensorsBuffer}) and the one-call helpers ({@link Safetensors}):
 * the same tensors, metadata and API as a mapped file, no copy of tensor bytes, the lifetime rule
 * (the memory is borrowed), and byte-identical output of the save helpers and the writer. Malformed
 * images are rejected like files by {@code MalformedCorpusTest.memoryImageRejects}.
 */
class SafetensorsBufferTest {
    @TempDir
    Path tmp;

    private Path writeSample() throws IOException {
        Path p = tmp.resolve("sample.safetensors");
        new SafetensorsWriter()
                .metadata("format", "pt")
                .metadata("author", "me")
                .add("f32", Dtype.F32, new long[] {2, 3}, new float[] {1, 2, 3, 4, 5, -6.5f})
                .add("bf16", Dtype.BF16, new long[] {2, 2}, new short[] {0x3F80, (short) 0xC000, 0x4040, 0x7F80})
                .add("u8", Dtype.U8, new long[] {3}, new byte[] {1, (byte) 200, 3})
                .add("scalar", Dtype.F64, new long[] {}, new double[] {Math.PI})
                .add("empty", Dtype.I32, new long[] {0, 4}, new int[0])
                .write(p);
        return p;
    }

    @Test
    void anImageInMemoryReadsLikeTheMappedFileWithoutCopies() throws IOException {
        Path p = writeSample();
        byte[] bytes = Files.readAllBytes(p);
        try (SafetensorsFile file = SafetensorsFile.open(p);
             SafetensorsBuffer image = SafetensorsBuffer.of(bytes, "http://host/sample.safetensors")) {
            assertEquals(file.header().tensors(), image.header().tensors());
            assertEquals(List.copyOf(file.metadata().entrySet()), List.copyOf(image.metadata().entrySet()));
            assertEquals(List.copyOf(file.asMap().keySet()), List.copyOf(image.asMap().keySet()));
            for (Tensor t : file) {
                Tensor m = image.tensor(t.name());
                assertArrayEquals(t.toByteArray(), m.toByteArray(), t.name());
                assertArrayEquals(t.shape(), m.shape());
                assertEquals(t.dtype(), m.dtype());
            }
            assertArrayEquals(new float[] {1, -2, 3, Float.POSITIVE_INFINITY}, image.tensor("bf16").toFloatArray());
            assertArrayEquals(new float[] {4, 5, -6.5f}, image.tensor("f32").slice("1").toFloatArray());
            // No copy: the tensor's bytes are the array's bytes.
            MemorySegment data = image.tensor("f32").data();
            assertTrue(data.isReadOnly());
            assertEquals(image.header().dataOffset() + image.header().tensor("f32").begin(),
                    data.address() - MemorySegment.ofArray(bytes).address());
            bytes[(int) (image.header().dataOffset() + image.header().tensor("u8").begin())] = 42;
            assertEquals(42, image.tensor("u8").getByte(0), "a view, not a copy");
            NoSuchElementException missing = assertThrows(NoSuchElementException.class, () -> image.tensor("nope"));
            assertTrue(missing.getMessage().contains("http://host/sample.safetensors: no tensor \"nope\""));
        }
    }

    @Test
    void aBorrowedSegmentLivesAsLongAsItsArena() throws IOException {
        byte[] bytes = Files.readAllBytes(writeSample());
        Arena arena = Arena.ofShared();
        MemorySegment image = arena.allocate(bytes.length);
        image.copyFrom(MemorySegment.ofArray(bytes));
        SafetensorsBuffer buffer = SafetensorsBuffer.of(image, "segment");
        Tensor f32 = buffer.tensor("f32");
        assertEquals(image.address() + buffer.header().dataOffset() + buffer.header().tensor("f32").begin(),
                f32.data().address(), "a view of the caller's segment");
        assertEquals(-6.5f, f32.getFloat(5));
        // Closing the buffer frees nothing: the caller's arena still owns the bytes.
        buffer.close();
        assertFalse(buffer.isOpen());
        assertThrows(IllegalStateException.class, f32::data);
        assertThrows(IllegalStateException.class, () -> buffer.tensor("f32"));
        assertEquals(bytes[0], image.get(ValueLayout.JAVA_BYTE, 0), "close leaves the caller's memory alone");
        // A second buffer over the same memory; closing the arena ends every view, cleanly.
        SafetensorsBuffer again = SafetensorsBuffer.of(image, "segment");
        Tensor t = again.tensor("f32");
        arena.close();
        IllegalStateException closed = assertThrows(IllegalStateException.class, () -> t.getFloat(0));
        assertTrue(closed.getMessage().contains("closed") || closed.getMessage().contains("Already"),
                closed.getMessage());
        assertThrows(IllegalStateException.class, t::toFloatArray);
    }

    @Test
    void loadFileCopiesIntoTheCallersArenaAndKeepsNothingOpen() throws IOException {
        Path p = writeSample();
        byte[] expected;
        try (SafetensorsFile file = SafetensorsFile.open(p)) {
            expected = file.tensor("bf16").toByteArray();
        }
        try (Arena arena = Arena.ofConfined()) {
            Map<String, Tensor> tensors = Safetensors.loadFile(p, arena);
            Files.delete(p); // nothing refers to the file any more
            assertEquals(List.of("scalar", "f32", "empty", "bf16", "u8"), List.copyOf(tensors.keySet()),
                    "offset order");
            assertArrayEquals(expected, tensors.get("bf16").toByteArray());
            assertEquals(Math.PI, tensors.get("scalar").getDouble(0));
            SafetensorsBuffer withMetadata = SafetensorsBuffer.read(writeSample(), arena);
            assertEquals("me", withMetadata.metadata().get("author"));
        }
        SafetensorsException bad = assertThrows(SafetensorsException.class, () -> {
            Path trailing = tmp.resolve("trailing.safetensors");
            Files.write(trailing, concat(Files.readAllBytes(writeSample()), new byte[] {0}));
            try (Arena arena = Arena.ofConfined()) {
                Safetensors.loadFile(trailing, arena);
            }
        });
        assertEquals(Violation.TRAILING_BYTES, bad.violation());
    }

    @Test
    void saveHelpersWriteWhatTheWriterWritesAndRoundTrip() throws IOException {
        Path viaWriter = writeSample();
        Map<String, Tensor> tensors;
        try (Arena arena = Arena.ofConfined()) {
            SafetensorsBuffer loaded = SafetensorsBuffer.read(viaWriter, arena);
            tensors = loaded.asMap();
            Path viaHelper = tmp.resolve("helper.safetensors");
            Safetensors.saveFile(tensors, loaded.metadata(), viaHelper);
            assertArrayEquals(Files.readAllBytes(viaWriter), Files.readAllBytes(viaHelper));
            byte[] bytes = Safetensors.save(tensors, loaded.metadata());
            assertArrayEquals(Files.readAllBytes(viaWriter), bytes);
            Map<String, Tensor> back = Safetensors.load(bytes);
            for (var e : tensors.entrySet()) {
                assertArrayEquals(e.getValue().toByteArray(), back.get(e.getKey()).toByteArray(), e.getKey());
            }
            try (SafetensorsBuffer d = Safetensors.deserialize(bytes)) {
                assertEquals("pt", d.metadata().get("format"));
            }
        }
        // Tensors made over Java arrays; the map's keys name them.
        Map<String, Tensor> made = Map.of(
                "weight", Tensor.of("ignored", new long[] {2, 2}, new float[] {1, 2, 3, 4}),
                "ids", Tensor.of("ids", Dtype.I64, new long[] {3}, new long[] {7, 8, 9}),
                "half", Tensor.of("half", Dtype.F16, new long[] {1}, new short[] {Float.floatToFloat16(0.25f)}));
        Path out = tmp.resolve("made.safetensors");
        Safetensors.saveFile(made, out);
        try (SafetensorsFile f = SafetensorsFile.open(out)) {
            assertEquals(List.of("ids", "weight", "half"), f.tensors().stream().map(Tensor::name).toList(),
                    "the reference's layout: descending alignment, then name");
            assertArrayEquals(new float[] {1, 2, 3, 4}, f.tensor("weight").toFloatArray());
            assertArrayEquals(new long[] {7, 8, 9}, f.tensor("ids").toLongArray());
            assertEquals(0.25f, f.tensor("half").getFloat(0));
            assertTrue(f.metadata().isEmpty());
        }
        IllegalArgumentException wrongSize = assertThrows(IllegalArgumentException.class,
                () -> Tensor.of("w", new long[] {3}, new float[] {1, 2}));
        assertTrue(wrongSize.getMessage().contains("tensor \"w\": data has 8 bytes, but F32 [3] needs 12"));
        assertThrows(IllegalArgumentException.class, () -> Tensor.of("w", Dtype.F32, new long[] {-1},
                MemorySegment.ofArray(new byte[0])));
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = new byte[a.length + b.length];
        System.arraycopy(a, 0, out, 0, a.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
