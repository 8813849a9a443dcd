package io.github.semyonsinchenko.safetensors.spark.write;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.github.semyonsinchenko.safetensors.io.SafetensorsFile;
import io.github.semyonsinchenko.safetensors.io.Tensor;
import io.github.semyonsinchenko.safetensors.dataset.DatasetLayout;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/** Reads a written dataset back with the core reader, for assertions. */
final class WriteTestSupport {
    private WriteTestSupport() {}

    static JsonNode manifest(Path root) throws IOException {
        return new ObjectMapper().readTree(root.resolve(DatasetLayout.MANIFEST).toFile());
    }

    /** The shards the committed manifest names (other shard files may be kept for retention). */
    static List<Path> shards(Path root) throws IOException {
        if (!Files.exists(root.resolve(DatasetLayout.MANIFEST))) {
            return shardFilesOnDisk(root);
        }
        return names(manifest(root).get("shards")).stream().map(root::resolve).sorted().toList();
    }

    /** Every shard file in the root, named by the manifest or not. */
    static List<Path> shardFilesOnDisk(Path root) throws IOException {
        try (Stream<Path> s = Files.list(root)) {
            return s.filter(p -> p.getFileName().toString().endsWith(".safetensors")).sorted().toList();
        }
    }

    /** Every file under root, relative, sorted (to spot leftovers). */
    static List<String> allFiles(Path root) throws IOException {
        if (!Files.exists(root)) {
            return List.of();
        }
        try (Stream<Path> s = Files.walk(root)) {
            return s.filter(Files::isRegularFile).map(p -> root.relativize(p).toString()).sorted().toList();
        }
    }

    record Read(String dtype, long[] shape, byte[] bytes, String file) {}

    /** All tensors of all shards by name (a duplicate name across shards fails). */
    static Map<String, Read> tensors(Path root) throws IOException {
        Map<String, Read> out = new LinkedHashMap<>();
        for (Path p : shards(root)) {
            try (SafetensorsFile f = SafetensorsFile.open(p)) {
                for (Tensor t : f) {
                    Read prev = out.put(t.name(), new Read(t.dtype().name(), t.shape(), t.toByteArray(),
                            p.getFileName().toString()));
                    if (prev != null) {
                        throw new AssertionError("tensor " + t.name() + " in " + prev.file() + " and " + p);
                    }
                }
            }
        }
        return out;
    }

    /** All tensors of all shards by "file::name" (batch names repeat across shards). */
    static Map<String, Read> tensorsByFile(Path root) throws IOException {
        Map<String, Read> out = new LinkedHashMap<>();
        for (Path p : shards(root)) {
            try (SafetensorsFile f = SafetensorsFile.open(p)) {
                for (Tensor t : f) {
                    String file = p.getFileName().toString();
                    out.put(file + "::" + t.name(), new Read(t.dtype().name(), t.shape(), t.toByteArray(), file));
                }
            }
        }
        return out;
    }

    static List<String> names(JsonNode shardsNode) {
        List<String> out = new ArrayList<>();
        shardsNode.forEach(n -> out.add(n.has("shard_path") ? n.get("shard_path").asText() : n.get("file").asText()));
        return out;
    }
}
