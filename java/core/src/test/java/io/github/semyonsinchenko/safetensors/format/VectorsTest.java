package io.github.semyonsinchenko.safetensors.format;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.github.semyonsinchenko.safetensors.io.SafetensorsFile;
import io.github.semyonsinchenko.safetensors.io.SafetensorsWriter;
import io.github.semyonsinchenko.safetensors.io.Tensor;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SequencedMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The hex vectors in {@code format/vectors/} (written by {@code format/vectors/generate.py}, an
 * independent model of the layout rules): our reader reads each file back to the listed tensors and
 * metadata, and for {@code writer_exact} vectors our writer, given the same input, produces exactly
 * the file's bytes.
 */
class VectorsTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HexFormat HEX = HexFormat.of();

    record TensorSpec(String name, Dtype dtype, long[] shape, byte[] data) {}

    record Vector(String name, boolean writerExact, SequencedMap<String, String> metadata, List<TensorSpec> tensors,
                  byte[] file) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Path vectorsDir() {
        String root = System.getProperty("safetensors.repo.root", "../..");
        Path dir = Path.of(root).resolve("format/vectors");
        assertTrue(Files.isDirectory(dir), "no vectors directory at " + dir);
        return dir;
    }

    static List<Vector> vectors() {
        List<Vector> out = new ArrayList<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(vectorsDir(), "*.json")) {
            for (Path p : files) {
                out.add(load(p));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        out.sort((a, b) -> a.name().compareTo(b.name()));
        return out;
    }

    private static Vector load(Path p) throws IOException {
        JsonNode doc = JSON.readTree(p.toFile());
        SequencedMap<String, String> metadata = new LinkedHashMap<>();
        doc.get("metadata").properties().forEach(e -> metadata.put(e.getKey(), e.getValue().asText()));
        List<TensorSpec> tensors = new ArrayList<>();
        for (JsonNode t : doc.get("tensors")) {
            long[] shape = new long[t.get("shape").size()];
            for (int i = 0; i < shape.length; i++) {
                shape[i] = t.get("shape").get(i).asLong();
            }
            tensors.add(new TensorSpec(t.get("name").asText(), Dtype.valueOf(t.get("dtype").asText()), shape,
                    HEX.parseHex(t.get("data").asText())));
        }
        StringBuilder hex = new StringBuilder();
        doc.get("file").forEach(line -> hex.append(line.asText()));
        String name = p.getFileName().toString().replaceFirst("\\.json$", "");
        return new Vector(name, doc.get("writer_exact").asBoolean(), metadata, tensors,
                HEX.parseHex(hex.toString()));
    }

    @Test
    void theVectorsAreThere() {
        List<String> names = vectors().stream().map(Vector::name).toList();
        assertTrue(names.containsAll(List.of("reference_doc_example", "reference_f32", "empty", "empty_with_metadata",
                "scalar", "empty_tensors", "layout_order", "every_dtype")), names.toString());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("vectors")
    void headerParserReadsTheVector(Vector v) throws SafetensorsException {
        long n = java.nio.ByteBuffer.wrap(v.file(), 0, 8).order(java.nio.ByteOrder.LITTLE_ENDIAN).getLong();
        Header h = Header.parse(Arrays.copyOfRange(v.file(), 8, 8 + (int) n), v.file().length, v.name());
        assertEquals(v.file().length, h.fileSize());
        assertEquals(List.copyOf(v.metadata().entrySet()), List.copyOf(h.metadata().entrySet()));
        assertEquals(v.tensors().size(), h.size());
        for (TensorSpec spec : v.tensors()) {
            TensorInfo info = h.tensor(spec.name());
            assertEquals(spec.dtype(), info.dtype(), spec.name());
            assertArrayEquals(spec.shape(), info.shape(), spec.name());
            byte[] stored = Arrays.copyOfRange(v.file(), (int) (h.dataOffset() + info.begin()),
                    (int) (h.dataOffset() + info.end()));
            assertArrayEquals(spec.data(), stored, spec.name());
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("vectors")
    void fileReaderReadsTheVector(Vector v, @TempDir Path tmp) throws IOException {
        Path file = tmp.resolve(v.name() + ".safetensors");
        Files.write(file, v.file());
        try (SafetensorsFile f = SafetensorsFile.open(file)) {
            assertEquals(List.copyOf(v.metadata().entrySet()), List.copyOf(f.metadata().entrySet()));
            assertEquals(v.tensors().size(), f.size());
            for (TensorSpec spec : v.tensors()) {
                Tensor t = f.tensor(spec.name());
                assertEquals(spec.dtype(), t.dtype());
                assertArrayEquals(spec.shape(), t.shape());
                assertArrayEquals(spec.data(), t.toByteArray(), spec.name());
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("vectors")
    void writerProducesExactlyTheVector(Vector v, @TempDir Path tmp) throws IOException {
        if (!v.writerExact()) {
            // A reader-only vector: our writer must still produce a file that differs at most in padding.
            Header mine = writer(v).header();
            assertEquals(0, mine.headerLength() % 8);
            return;
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        writer(v).write(out);
        assertArrayEquals(v.file(), out.toByteArray(), () -> v.name() + ": got\n" + HEX.formatHex(out.toByteArray())
                + "\nexpected\n" + HEX.formatHex(v.file()));
        Path file = tmp.resolve("written.safetensors");
        writer(v).write(file);
        assertArrayEquals(v.file(), Files.readAllBytes(file), v.name() + " written to a path");
    }

    private static SafetensorsWriter writer(Vector v) {
        SafetensorsWriter w = new SafetensorsWriter();
        for (Map.Entry<String, String> e : v.metadata().entrySet()) {
            w.metadata(e.getKey(), e.getValue());
        }
        for (TensorSpec t : v.tensors()) {
            w.add(t.name(), t.dtype(), t.shape(), t.data());
        }
        return w;
    }
}
