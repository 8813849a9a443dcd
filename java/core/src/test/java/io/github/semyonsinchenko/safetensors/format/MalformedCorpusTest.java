package io.github.semyonsinchenko.safetensors.format;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.github.semyonsinchenko.safetensors.io.SafetensorsBuffer;
import io.github.semyonsinchenko.safetensors.io.SafetensorsFile;
import io.github.semyonsinchenko.safetensors.mmap.MappedFile;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every file under {@code malformed/} must be rejected by every reader with the {@link Violation},
 * tensor and message fragment listed in {@code malformed/expected.tsv}. The files and the TSV are
 * written by {@link MalformedCorpusGenerator}; {@link #committedCorpusIsWhatTheGeneratorWrites()}
 * keeps them in step.
 */
class MalformedCorpusTest {

    /** One line of expected.tsv. */
    record Expected(String file, Violation violation, String tensor, String fragment) {
        @Override
        public String toString() {
            return file;
        }
    }

    static Path corpusDir() {
        URL url = MalformedCorpusTest.class.getResource("/malformed/expected.tsv");
        assertNotNull(url, "malformed/expected.tsv is not on the test class path");
        try {
            return Path.of(url.toURI()).getParent();
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    static List<Expected> expectations() {
        try {
            List<Expected> rows = new ArrayList<>();
            for (String line : Files.readAllLines(corpusDir().resolve("expected.tsv"), StandardCharsets.UTF_8)) {
                if (line.isEmpty() || line.startsWith("#")) {
                    continue;
                }
                String[] f = line.split("\t", -1);
                assertEquals(4, f.length, "expected.tsv line: " + line);
                rows.add(new Expected(f[0], Violation.valueOf(f[1]), f[2].equals("-") ? null : f[2], f[3]));
            }
            return rows;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void check(Expected e, Path file, String source, Executable read) {
        SafetensorsException ex = assertThrows(SafetensorsException.class, read, e.file());
        assertSame(SafetensorsException.class, ex.getClass());
        assertEquals(e.violation(), ex.violation(), () -> e.file() + ": " + ex.getMessage());
        assertEquals(e.tensor(), ex.tensor(), () -> e.file() + ": " + ex.getMessage());
        assertEquals(source, ex.source());
        assertTrue(ex.getMessage().contains(file.getFileName().toString()), ex::getMessage);
        assertTrue(ex.getMessage().contains(e.violation().rule()), ex::getMessage);
        assertTrue(ex.getMessage().contains(e.fragment()),
                () -> e.file() + ": message lacks \"" + e.fragment() + "\": " + ex.getMessage());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("expectations")
    void openRejects(Expected e) {
        Path file = corpusDir().resolve(e.file());
        check(e, file, file.toString(), () -> {
            try (SafetensorsFile f = SafetensorsFile.open(file)) {
                fail("opened " + f);
            }
        });
        check(e, file, file.toString(), () -> {
            try (SafetensorsFile f = SafetensorsFile.open(file, MappedFile.Sharing.CONFINED)) {
                fail("opened " + f);
            }
        });
    }

    /** An image already in memory is held to every rule a file is: bytes, a native segment, a file read whole. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("expectations")
    void memoryImageRejects(Expected e) throws IOException {
        Path file = corpusDir().resolve(e.file());
        byte[] bytes = Files.readAllBytes(file);
        String source = file.toString();
        check(e, file, source, () -> SafetensorsBuffer.of(bytes, source));
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment image = arena.allocate(Math.max(1, bytes.length)).asSlice(0, bytes.length);
            image.copyFrom(MemorySegment.ofArray(bytes));
            check(e, file, source, () -> SafetensorsBuffer.of(image, source));
            check(e, file, source, () -> SafetensorsBuffer.read(file, arena));
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("expectations")
    void channelHeaderReaderRejects(Expected e) {
        Path file = corpusDir().resolve(e.file());
        String source = "channel " + file;
        check(e, file, source, () -> {
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
                Header.read(ch, source);
            }
        });
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("expectations")
    void streamHeaderReaderRejects(Expected e) {
        Path file = corpusDir().resolve(e.file());
        String source = "stream " + file;
        check(e, file, source, () -> {
            try (InputStream in = Files.newInputStream(file)) {
                Header.read(in, Files.size(file), source);
            }
        });
    }

    /** Positioned reads (how the Spark reader reads headers on any Hadoop FileSystem). */
    @ParameterizedTest(name = "{0}")
    @MethodSource("expectations")
    void positionedHeaderReaderRejects(Expected e) {
        Path file = corpusDir().resolve(e.file());
        String source = "positioned " + file;
        check(e, file, source, () -> {
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
                HeaderFraming.read((position, buffer) -> {
                    java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(buffer);
                    while (b.hasRemaining()) {
                        if (ch.read(b, position + b.position()) < 0) {
                            throw new java.io.EOFException("read past the end at " + (position + b.position()));
                        }
                    }
                }, ch.size(), source);
            }
        });
    }

    /**
     * Without the file size a stream reader cannot check where the data ends: truncated data and
     * trailing bytes go unnoticed, and a short header shows up as the stream ending early. Every
     * other rule is checked the same way.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("expectations")
    void streamHeaderReaderWithoutSize(Expected e) throws IOException {
        Path file = corpusDir().resolve(e.file());
        String source = "sizeless stream " + file;
        switch (e.violation()) {
            case DATA_TRUNCATED, TRAILING_BYTES -> {
                try (InputStream in = Files.newInputStream(file)) {
                    Header h = Header.read(in, -1, source);
                    assertTrue(h.fileSize() != Files.size(file), e.file());
                }
            }
            case HEADER_PAST_EOF -> {
                Expected past = new Expected(e.file(), e.violation(), e.tensor(), "the stream ended after");
                check(past, file, source, () -> {
                    try (InputStream in = Files.newInputStream(file)) {
                        Header.read(in, -1, source);
                    }
                });
            }
            case HEADER_LENGTH_TRUNCATED -> {
                Expected shortStream = new Expected(e.file(), e.violation(), e.tensor(),
                        e.fragment().replace("has only", "the stream has only"));
                check(shortStream, file, source, () -> {
                    try (InputStream in = Files.newInputStream(file)) {
                        Header.read(in, -1, source);
                    }
                });
            }
            default -> check(e, file, source, () -> {
                try (InputStream in = Files.newInputStream(file)) {
                    Header.read(in, -1, source);
                }
            });
        }
    }

    /**
     * Adding a Violation without a corpus file that triggers it fails here. A file at rest cannot
     * change under its mapping: that one is tested by {@code crash.TruncatedFileTest}.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(value = Violation.class, names = "FILE_CHANGED_WHILE_MAPPED", mode = EnumSource.Mode.EXCLUDE)
    void everyViolationHasACorpusFile(Violation v) {
        assertTrue(expectations().stream().anyMatch(e -> e.violation() == v),
                "no file under malformed/ is expected to produce " + v + "; add one to MalformedCorpusGenerator");
    }

    @Test
    void corpusIsLargeEnough() {
        assertTrue(expectations().size() >= 40, "only " + expectations().size() + " malformed files");
    }

    /**
     * The committed files and expected.tsv are exactly what the generator writes now (in the source
     * tree, not just the build's copy). Regenerate with the command in the generator's comment.
     */
    @Test
    void committedCorpusIsWhatTheGeneratorWrites() throws IOException {
        String root = System.getProperty("safetensors.repo.root");
        Path dir = root != null
                ? Path.of(root).resolve("java/core/src/test/resources/malformed")
                : corpusDir();
        List<MalformedCorpusGenerator.Case> cases = MalformedCorpusGenerator.cases();
        assertEquals(MalformedCorpusGenerator.expectedTsv(cases),
                Files.readString(dir.resolve("expected.tsv"), StandardCharsets.UTF_8), "expected.tsv is stale");
        Set<String> generated = new TreeSet<>();
        for (MalformedCorpusGenerator.Case c : cases) {
            generated.add(c.file());
            Path p = dir.resolve(c.file());
            assertTrue(Files.isRegularFile(p), "missing " + p.getFileName() + "; regenerate the corpus");
            assertArrayEquals(c.bytes(), Files.readAllBytes(p), c.file() + " differs from the generator's output");
        }
        Set<String> onDisk = new TreeSet<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "*.safetensors")) {
            files.forEach(p -> onDisk.add(p.getFileName().toString()));
        }
        assertEquals(generated, onDisk, "files under malformed/ that the generator does not write");
    }
}
