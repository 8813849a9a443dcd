package io.github.semyonsinchenko.safetensors.mlflow;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What lineage needs from a {@code dataset_manifest.json}: versions, totals, shards and schema.
 *
 * <p>A deliberately small, isolated reader: it accepts both this project's current manifest
 * fields (shard {@code file}) and the original connector's ({@code shard_path}), so lineage does
 * not depend on which of the two wrote the dataset. The Python package reads the same fields the
 * same way ({@code safetensors_spark._manifest}).
 */
public record ManifestSummary(String formatVersion, String safetensorsVersion, long totalSamples, long totalBytes,
        List<Shard> shards, ObjectNode schema) {

    /** One shard: its path relative to the dataset root, samples and bytes. */
    public record Shard(String path, long samplesCount, long bytes) {}

    private static final ObjectMapper JSON = new ObjectMapper();

    /** Parses manifest bytes; {@code where} names the file in errors. */
    public static ManifestSummary parse(byte[] manifest, String where) throws IOException {
        JsonNode root;
        try {
            root = JSON.readTree(manifest);
        } catch (IOException e) {
            throw new IOException(where + ": not valid JSON: " + e.getMessage(), e);
        }
        if (root == null || !root.isObject()) {
            throw new IOException(where + ": a manifest is a JSON object");
        }
        List<Shard> shards = new ArrayList<>();
        JsonNode list = root.path("shards");
        if (!list.isArray()) {
            throw new IOException(where + ": 'shards' must be an array");
        }
        for (int i = 0; i < list.size(); i++) {
            JsonNode s = list.get(i);
            JsonNode path = s.has("shard_path") ? s.get("shard_path") : s.get("file");
            if (path == null || !path.isTextual()) {
                throw new IOException(String.format(Locale.ROOT,
                        "%s: shard %d has neither 'file' nor 'shard_path'", where, i));
            }
            shards.add(new Shard(path.asText(), count(s, "samples_count", where), count(s, "bytes", where)));
        }
        JsonNode schema = root.get("schema");
        return new ManifestSummary(text(root, "format_version", where), text(root, "safetensors_version", where),
                count(root, "total_samples", where), count(root, "total_bytes", where), List.copyOf(shards),
                schema != null && schema.isObject() ? (ObjectNode) schema : JsonNodeFactory.instance.objectNode());
    }

    private static String text(JsonNode node, String field, String where) throws IOException {
        JsonNode v = node.get(field);
        if (v == null || !(v.isTextual() || v.isNumber())) {
            throw new IOException(where + ": '" + field + "' is missing or not a string");
        }
        return v.asText();
    }

    private static long count(JsonNode node, String field, String where) throws IOException {
        JsonNode v = node.get(field);
        if (v == null || !v.canConvertToLong() || !v.isIntegralNumber() || v.asLong() < 0) {
            throw new IOException(where + ": '" + field + "' is missing or not a non-negative integer");
        }
        return v.asLong();
    }
}
