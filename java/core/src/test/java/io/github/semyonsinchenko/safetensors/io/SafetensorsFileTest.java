package io.github.semyonsinchenko.safetensors.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.format.Header;
import io.github.semyonsinchenko.safetensors.format.SafetensorsException;
import io.github.semyonsinchenko.safetensors.format.Violation;
import io.github.semyonsinchenko.safetensors.mmap.MappedFile;
import io.github.semyonsinchenko.safetensors.mmap.MappedFileFaultException;
import io.github.semyonsinchenko.safetensors.mmap.MappedFiles;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SafetensorsFileTest {
    @TempDir
    Path dir;

    /** The reference crate's documentation example, byte for byte: one I32 [2,2] tensor of zeros. */
    private static byte[] referenceExample() {
        String json = "{\"test\":{\"dtype\":\"I32\",\"shape\":[2,2],\"data_offsets\":[0,16]}}";
        byte[] h = json.getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(8 + h.length + 16).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(h.length).put(h);
        return b.array();
    }

    private Path writeSample() throws IOException {
        Path p = dir.resolve("sample.safetensors");
        new SafetensorsWriter()
                .metadata("format", "pt")
                .metadata("author", "tests")
                .add("f32", Dtype.F32, new long[] {2, 3}, new float[] {1, 2, 3, 4, 5, -6.5f})
                .add("i64", Dtype.I64, new long[] {2}, new long[] {Long.MIN_VALUE, Long.MAX_VALUE})
                .add("bf16", Dtype.BF16, new long[] {2}, new short[] {(short) 0x3F80, (short) 0xC000})
                .add("f16", Dtype.F16, new long[] {1}, new short[] {Float.floatToFloat16(0.5f)})
                .add("u8", Dtype.U8, new long[] {3}, new byte[] {1, (byte) 200, 3})
                .add("scalar", Dtype.F64, new long[] {}, new double[] {Math.PI})
                .add("empty", Dtype.I32, new long[] {0, 4}, new int[0])
                .add("u32", Dtype.U32, new long[] {1}, new int[] {-1})
                .write(p);
        return p;
    }

    @Test
    void readsTheReferenceDocumentationExample() throws IOException {
        Path p = dir.resolve("ref.safetensors");
        Files.write(p, referenceExample());
        try (SafetensorsFile f = SafetensorsFile.open(p)) {
            Tensor t = f.tensor("test");
            assertEquals(Dtype.I32, t.dtype());
            assertArrayEquals(new long[] {2, 2}, t.shape());
            assertArrayEquals(new int[4], t.toIntArray());
            assertTrue(f.metadata().isEmpty());
        }
    }

    @Test
    void tensorsAreSlicesOfTheMappingWithTypedViews() throws IOException {
        try (SafetensorsFile f = SafetensorsFile.open(writeSample())) {
            assertEquals(8, f.size());
            Tensor f32 = f.tensor("f32");
            assertArrayEquals(new float[] {1, 2, 3, 4, 5, -6.5f}, f32.toFloatArray());
            assertEquals(-6.5f, f32.getFloat(5));
            assertTrue(f32.data().isMapped(), "tensor data must be the mmapped file, not a heap copy");
            assertTrue(f32.data().isReadOnly());
            assertEquals(Long.MIN_VALUE, f.tensor("i64").getLong(0));
            assertEquals(-2.0, f.tensor("bf16").getAsDouble(1));
            assertEquals(1.0, f.tensor("bf16").getAsDouble(0));
            assertEquals(0.5, f.tensor("f16").getAsDouble(0));
            assertEquals(200.0, f.tensor("u8").getAsDouble(1));
            assertEquals(4294967295.0, f.tensor("u32").getAsDouble(0));
            assertEquals(Math.PI, f.tensor("scalar").getDouble(0));
            assertEquals(0, f.tensor("scalar").rank());
            assertEquals(1, f.tensor("scalar").elementCount());
            assertEquals(0, f.tensor("empty").byteSize());
            assertEquals(List.of("format", "author"), List.copyOf(f.metadata().keySet()));
        }
    }

    @Test
    void typedViewsRefuseTheWrongDtype() throws IOException {
        try (SafetensorsFile f = SafetensorsFile.open(writeSample())) {
            // A float holds every I64 only approximately: getFloat refuses, getAsDouble rounds.
            UnsupportedOperationException e =
                    assertThrows(UnsupportedOperationException.class, () -> f.tensor("i64").getFloat(0));
            assertTrue(e.getMessage().contains("\"i64\" is I64, not F32 or a dtype that widens"), e.getMessage());
            assertThrows(UnsupportedOperationException.class, () -> f.tensor("f32").toIntArray());
            assertThrows(UnsupportedOperationException.class, () -> f.tensor("u32").toFloatArray());
            assertThrows(UnsupportedOperationException.class, () -> f.tensor("i64").getDouble(0));
            // BF16 and F16 widen exactly (they used to be refused).
            assertEquals(-2.0f, f.tensor("bf16").getFloat(1));
            assertEquals(0.5f, f.tensor("f16").getFloat(0));
        }
    }

    @Test
    void iteratesInOffsetOrder() throws IOException {
        try (SafetensorsFile f = SafetensorsFile.open(writeSample())) {
            long previousEnd = 0;
            for (Tensor t : f) {
                assertEquals(previousEnd, t.info().begin(), t.name());
                previousEnd = t.info().end();
            }
            assertEquals(f.header().dataSize(), previousEnd);
        }
    }

    @Test
    void unknownNameIsAClearError() throws IOException {
        Path p = writeSample();
        try (SafetensorsFile f = SafetensorsFile.open(p)) {
            NoSuchElementException e = assertThrows(NoSuchElementException.class, () -> f.tensor("nope"));
            assertTrue(e.getMessage().contains(p.toString()) && e.getMessage().contains("\"nope\""), e.getMessage());
            assertFalse(f.contains("nope"));
        }
    }

    @Test
    void useAfterCloseFailsCleanlyAndCloseIsIdempotent() throws IOException {
        Path p = writeSample();
        SafetensorsFile f = SafetensorsFile.open(p);
        Tensor t = f.tensor("f32");
        MemorySegment held = t.data();
        f.close();
        f.close();
        assertFalse(f.isOpen());
        String closed = p + " is closed";
        for (org.junit.jupiter.api.function.Executable use : List.<org.junit.jupiter.api.function.Executable>of(
                t::data, () -> t.getFloat(0), () -> t.getAsDouble(0), t::toFloatArray, () -> f.tensor("f32"),
                f::tensors)) {
            IllegalStateException e = assertThrows(IllegalStateException.class, use);
            assertTrue(e.getMessage().startsWith(closed), e.getMessage());
        }
        assertTrue(assertThrows(IllegalStateException.class, () -> t.getAsDouble(0)).getMessage()
                .endsWith("(reading tensor \"f32\")"));
        // A segment obtained before close is invalidated by the arena: the JDK throws, nothing crashes.
        assertThrows(IllegalStateException.class, () -> held.get(ValueLayout.JAVA_BYTE, 0));
        assertEquals(8, f.header().size(), "the header stays readable after close");
    }

    @Test
    void sharedFilesAreReadableFromOtherThreadsConfinedOnesAreNot() throws Exception {
        Path p = writeSample();
        try (SafetensorsFile shared = SafetensorsFile.open(p, MappedFile.Sharing.SHARED)) {
            float v = CompletableFuture.supplyAsync(() -> shared.tensor("f32").getFloat(1)).get();
            assertEquals(2f, v);
        }
        try (SafetensorsFile confined = SafetensorsFile.open(p, MappedFile.Sharing.CONFINED)) {
            Tensor t = confined.tensor("f32");
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> CompletableFuture.supplyAsync(() -> t.getFloat(1)).get());
            assertTrue(e.getCause() instanceof WrongThreadException, e.getCause().toString());
            assertEquals(2f, t.getFloat(1));
        }
    }

    @Test
    void headerOnlyFromAChannelReadsNothingPastTheHeader() throws IOException {
        Path p = writeSample();
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ);
                SafetensorsFile f = SafetensorsFile.open(p)) {
            Header h = Header.read(ch, p.toString());
            assertEquals(h.dataOffset(), ch.position(), "the channel must stop right after 8 + N");
            assertEquals(f.header().tensors(), h.tensors());
            assertEquals(f.header().metadata(), h.metadata());
        }
    }

    @Test
    void headerOnlyFromAStreamConsumesExactly8PlusN() throws IOException {
        byte[] bytes = Files.readAllBytes(writeSample());
        InputStream in = new ByteArrayInputStream(bytes);
        Header h = Header.read(in, bytes.length, "stream");
        assertEquals(bytes.length - h.dataOffset(), in.available());
        // Without the size the end-of-file rule cannot be checked, but everything else is.
        Header unsized = Header.read(new ByteArrayInputStream(bytes, 0, (int) h.dataOffset()), -1, "prefix");
        assertEquals(h.tensors(), unsized.tensors());
    }

    @Test
    void streamHeaderErrorsNameTheSource() {
        byte[] bytes = referenceExample();
        SafetensorsException e = assertThrows(SafetensorsException.class,
                () -> Header.read(new ByteArrayInputStream(bytes, 0, 20), -1, "s3://bucket/x.safetensors"));
        assertEquals(Violation.HEADER_PAST_EOF, e.violation());
        assertTrue(e.getMessage().startsWith("s3://bucket/x.safetensors: "), e.getMessage());
    }

    @Test
    void openingAMalformedFileNamesTheFileTheTensorAndTheRule() throws IOException {
        byte[] bytes = referenceExample();
        byte[] bad = new byte[bytes.length - 4]; // drop 4 data bytes
        System.arraycopy(bytes, 0, bad, 0, bad.length);
        Path p = dir.resolve("short.safetensors");
        Files.write(p, bad);
        SafetensorsException e = assertThrows(SafetensorsException.class, () -> SafetensorsFile.open(p));
        assertEquals(Violation.DATA_TRUNCATED, e.violation());
        assertTrue(e.getMessage().contains(p.toString()), e.getMessage());
        assertTrue(e.getMessage().contains("ends before the last tensor"), e.getMessage());
    }

    @Test
    void aTruncationWithoutAFaultNamesTheFileAndTheTensorItCutInto() throws IOException {
        Path p = writeSample();
        try (SafetensorsFile f = SafetensorsFile.open(p)) {
            Tensor u8 = f.tensor("u8");
            List<MemorySegment> read = List.of(f.tensor("f32").data(), u8.data());
            assertEquals(null, MappedFiles.truncation("reading", read), "the file is whole");
            long cut = f.header().dataOffset() + u8.info().begin() + 1;
            try (FileChannel ch = FileChannel.open(p, StandardOpenOption.WRITE)) {
                ch.truncate(cut); // inside a page: the lost bytes read back as zeros, no fault
            }
            MappedFileFaultException e = MappedFiles.truncation("reading", read);
            assertEquals(p.toString(), e.source());
            assertEquals("u8", e.tensor());
            assertTrue(e.getMessage().contains("the file is now " + cut + " bytes"), e.getMessage());
        }
    }
}
