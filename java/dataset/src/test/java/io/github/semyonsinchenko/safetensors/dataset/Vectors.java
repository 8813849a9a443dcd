package io.github.semyonsinchenko.safetensors.dataset;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** The shared dataset test vectors under {@code format/vectors/dataset/}. */
final class Vectors {
    private Vectors() {}

    static final ObjectMapper JSON = new ObjectMapper();

    static Path repoRoot() {
        return Path.of(System.getProperty("safetensors.repo.root", "../..")).toAbsolutePath().normalize();
    }

    static Path dir() {
        return repoRoot().resolve("format/vectors/dataset");
    }

    static JsonNode read(String file) {
        try {
            return JSON.readTree(dir().resolve(file).toFile());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The elements of an array field of a vector file. */
    static List<JsonNode> cases(String file, String field) {
        List<JsonNode> out = new ArrayList<>();
        read(file).path(field).forEach(out::add);
        if (out.isEmpty()) {
            throw new IllegalStateException(file + " has no \"" + field + "\" cases");
        }
        return out;
    }

    static List<String> strings(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asText()));
        return out;
    }

    /** A nullable string field. */
    static String text(JsonNode node, String field) {
        JsonNode v = node.get(field);
        return v == null || v.isNull() ? null : v.asText();
    }
}
