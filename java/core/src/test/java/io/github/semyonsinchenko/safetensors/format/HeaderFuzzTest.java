package io.github.semyonsinchenko.safetensors.format;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.code_intelligence.jazzer.junit.DictionaryEntries;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.github.semyonsinchenko.safetensors.io.SafetensorsFile;
import io.github.semyonsinchenko.safetensors.io.Tensor;
import io.github.semyonsinchenko.safetensors.mmap.MappedFile;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Fuzzes the header validation with Jazzer. The only exception any reader may throw on any input
 * is {@link SafetensorsException}; anything else (a Jackson or JDK exception, an
 * {@link AssertionError} from the checks below, a {@link StackOverflowError}) fails the test and
 * Jazzer keeps the input.
 *
 * <p>The first input byte picks a mode; the rest is the payload:
 * <ul>
 *   <li>even: the payload is a whole file, read by {@link Header#read(java.nio.channels.SeekableByteChannel,
 *       String)} on an in-memory channel, {@link Header#read(java.io.InputStream, long, String)} and
 *       {@link SafetensorsFile#open} on a temporary file. All three must agree.</li>
 *   <li>odd: the payload is the header text. It is parsed on its own (file size unknown), then framed
 *       with a correct length prefix and, if accepted, the data section it asks for, and read as a whole
 *       file, which must give the same outcome. This lets the fuzzer work on JSON without having to
 *       guess a matching 8-byte length.</li>
 * </ul>
 * An accepted header must be consistent (offsets tile from 0, sizes match dtype and shape, the file
 * size is implied exactly) and must survive a round trip through the writer's layout.
 *
 * <p>{@code mvn test} runs only the inputs in {@code HeaderFuzzTestInputs/readAnything/}. Real
 * fuzzing needs {@code JAZZER_FUZZ=1}; the core module's {@code fuzz} profile sets it, selects this
 * class and bounds the run (see the profile in {@code java/core/pom.xml}).
 */
class HeaderFuzzTest {
    private static final String SOURCE = "fuzz-input";
    /** Largest data section the header-text mode materialises. */
    private static final long MAX_DATA = 1 << 20;
    private static Path file;

    /** Either the header a reader accepted or the exception it threw. */
    private record Outcome(Header header, SafetensorsException error) {
        @Override
        public String toString() {
            return header != null ? "accepted " + header.tensors() : "rejected " + error.getMessage();
        }
    }

    private interface Read {
        Header read() throws IOException;
    }

    @FuzzTest(maxDuration = "90s")
    @DictionaryEntries({
        "{", "}", "[", "]", ":", ",", "\"", "\\u0000", "\\ud800", "-0", "1.0", "1e2", "null", "true",
        "\"__metadata__\"", "\"dtype\"", "\"shape\"", "\"data_offsets\"", "[0,0]", "[]", "[2,2]",
        "281474976710655", "281474976710656", "9223372036854775807", "18446744073709551616",
        "\"BOOL\"", "\"F4\"", "\"F6_E2M3\"", "\"F6_E3M2\"", "\"U8\"", "\"I8\"", "\"F8_E5M2\"", "\"F8_E4M3\"",
        "\"F8_E8M0\"", "\"F8_E4M3FNUZ\"", "\"F8_E5M2FNUZ\"", "\"I16\"", "\"U16\"", "\"F16\"", "\"BF16\"",
        "\"I32\"", "\"U32\"", "\"F32\"", "\"C64\"", "\"F64\"", "\"I64\"", "\"U64\""
    })
    void readAnything(byte[] input) throws IOException {
        if (input.length == 0) {
            wholeFile(input);
            return;
        }
        byte[] payload = Arrays.copyOfRange(input, 1, input.length);
        if ((input[0] & 1) == 0) {
            wholeFile(payload);
        } else {
            headerText(payload);
        }
    }

    // ---------------------------------------------------------------- modes

    /** Reads {@code bytes} as a file three ways; returns the (common) outcome. */
    private static Outcome wholeFile(byte[] bytes) throws IOException {
        Outcome channel = attempt(() -> Header.read(new ByteArrayChannel(bytes), SOURCE));
        Outcome stream = attempt(() -> Header.read(new ByteArrayInputStream(bytes), bytes.length, SOURCE));
        Path path = tempFile();
        Files.write(path, bytes);
        Outcome mapped = attempt(() -> {
            try (SafetensorsFile f = SafetensorsFile.open(path, MappedFile.Sharing.CONFINED)) {
                checkTensors(f, bytes);
                return f.header();
            }
        });
        assertSame(channel, stream, "channel vs stream");
        assertSame(channel, mapped, "channel vs mapped file");
        if (channel.header() != null) {
            checkConsistent(channel.header(), bytes);
            checkRoundTrip(channel.header());
        }
        return channel;
    }

    private static void headerText(byte[] header) throws IOException {
        Outcome alone = attempt(() -> Header.parse(header, -1, SOURCE));
        long data = alone.header() == null ? 0 : alone.header().dataSize();
        if (data > MAX_DATA) {
            return;
        }
        byte[] file = new byte[Math.toIntExact(Header.PREFIX_BYTES + header.length + data)];
        ByteBuffer.wrap(file).order(ByteOrder.LITTLE_ENDIAN).putLong(header.length);
        System.arraycopy(header, 0, file, Header.PREFIX_BYTES, header.length);
        for (int i = Header.PREFIX_BYTES + header.length; i < file.length; i++) {
            file[i] = (byte) i;
        }
        assertSame(alone, wholeFile(file), "header alone vs framed file");
    }

    // ---------------------------------------------------------------- checks

    /** Runs a reader; only SafetensorsException is an allowed failure, and it must be well-formed. */
    private static Outcome attempt(Read read) throws IOException {
        try {
            Header h = read.read();
            assertNotNull(h);
            return new Outcome(h, null);
        } catch (SafetensorsException e) {
            assertNotNull(e.violation());
            assertTrue(SOURCE.equals(e.source()) || e.source().endsWith(".safetensors"), e.getMessage());
            assertTrue(e.getMessage().startsWith(e.source() + ": "), e.getMessage());
            assertTrue(e.getMessage().contains(e.violation().rule()), e.getMessage());
            if (e.tensor() != null) {
                assertTrue(e.getMessage().contains("tensor \"" + e.tensor() + "\""), e.getMessage());
            }
            return new Outcome(null, e);
        }
    }

    private static void assertSame(Outcome a, Outcome b, String what) {
        if (a.header() != null && b.header() != null) {
            assertEquals(a.header().tensors(), b.header().tensors(), what);
            assertEquals(List.copyOf(a.header().metadata().entrySet()), List.copyOf(b.header().metadata().entrySet()),
                    what);
            assertEquals(a.header().fileSize(), b.header().fileSize(), what);
        } else if (a.error() != null && b.error() != null) {
            assertEquals(a.error().violation(), b.error().violation(), () -> what + ": " + a + " / " + b);
            assertEquals(a.error().tensor(), b.error().tensor(), () -> what + ": " + a + " / " + b);
        } else {
            fail(what + " disagree: " + a + " / " + b);
        }
    }

    /** What every accepted header must satisfy, checked without the parser's help. */
    private static void checkConsistent(Header h, byte[] file) {
        long n = ByteBuffer.wrap(file, 0, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
        assertEquals(n, h.headerLength());
        assertTrue(n >= 2 && n <= Header.MAX_HEADER_BYTES, "N = " + n);
        assertEquals(file.length, h.fileSize());
        assertEquals(file.length, h.dataOffset() + h.dataSize());
        Set<String> names = new HashSet<>();
        long offset = 0;
        for (TensorInfo t : h.tensors()) {
            assertTrue(names.add(t.name()), "duplicate " + t.name());
            assertNotEquals(Header.METADATA_KEY, t.name());
            assertEquals(offset, t.begin(), t.name());
            long count = 1;
            for (long d : t.shape()) {
                assertTrue(d >= 0 && d <= Header.MAX_DIMENSION, t.toString());
                count = Math.multiplyExact(count, d);
            }
            assertEquals(count, t.elementCount(), t.toString());
            long bits = Math.multiplyExact(count, (long) t.dtype().bits());
            assertEquals(0, bits % 8, t.toString());
            assertEquals(bits / 8, t.byteSize(), t.toString());
            assertEquals(t, h.tensor(t.name()));
            offset = t.end();
        }
        assertEquals(h.dataSize(), offset);
        assertEquals(names.size(), h.size());
    }

    /** The header the writer lays out from an accepted header's content parses back to the same tensors. */
    private static void checkRoundTrip(Header h) {
        List<Header.Entry> entries = new ArrayList<>();
        for (TensorInfo t : h.tensors()) {
            entries.add(new Header.Entry(t.name(), t.dtype(), t.shape()));
        }
        try {
            Header written = Header.layout(h.metadata(), entries, true, "round trip");
            assertEquals(0, written.headerLength() % 8);
            byte[] bytes = written.toBytes();
            Header reread = Header.parse(Arrays.copyOfRange(bytes, Header.PREFIX_BYTES, bytes.length),
                    written.fileSize(), "round trip");
            assertEquals(h.tensors(), reread.tensors());
            assertEquals(List.copyOf(h.metadata().entrySet()), List.copyOf(reread.metadata().entrySet()));
            assertEquals(h.dataSize(), reread.dataSize());
        } catch (SafetensorsException e) {
            throw new AssertionError("the writer rejects a header the reader accepted: " + e.getMessage(), e);
        }
    }

    /** The mapped tensors are the file's bytes at the header's offsets. */
    private static void checkTensors(SafetensorsFile f, byte[] bytes) {
        for (Tensor t : f) {
            int from = Math.toIntExact(f.header().dataOffset() + t.info().begin());
            assertArrayEquals(Arrays.copyOfRange(bytes, from, from + (int) t.byteSize()), t.toByteArray(), t.name());
        }
    }

    private static synchronized Path tempFile() {
        if (file == null) {
            try {
                file = Files.createTempFile("header-fuzz-", ".safetensors");
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            file.toFile().deleteOnExit();
        }
        return file;
    }
}
