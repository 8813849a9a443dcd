package io.github.semyonsinchenko.safetensors.spark.read;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The parts of {@code dataset_manifest.json} the read path uses (see {@code spark/DATASET.md}). */
public record Manifest(String writeMode, LinkedHashMap<String, ColumnSpec> schema, List<String> shardFiles,
                       List<Long> shardSamples, String indexFile, long totalSamples) {

    public static final String FILE_NAME = "dataset_manifest.json";
    public static final String DEFAULT_INDEX_FILE = "_tensor_index.parquet";

    /** Per-sample dtype and shape of one serialized column. */
    public record ColumnSpec(String dtype, long[] shape) implements Serializable {}

    private static final ObjectMapper MAPPER = new ObjectMapper();

    public boolean isBatch() {
        return "batch".equals(writeMode);
    }

    public boolean isKv() {
        return "kv".equals(writeMode);
    }

    public static Manifest parse(InputStream in, String source) throws IOException {
        JsonNode root;
        try {
            root = MAPPER.readTree(in);
        } catch (IOException e) {
            throw new IOException(source + ": not a valid dataset manifest: " + e.getMessage(), e);
        }
        if (root == null || !root.isObject()) {
            throw new IOException(source + ": not a valid dataset manifest: expected a JSON object");
        }
        String mode = root.path("write_mode").asText(null);
        LinkedHashMap<String, ColumnSpec> schema = new LinkedHashMap<>();
        JsonNode s = root.path("schema");
        if (s.isObject()) {
            Iterator<Map.Entry<String, JsonNode>> it = s.properties().iterator();
            while (it.hasNext()) {
                Map.Entry<String, JsonNode> e = it.next();
                JsonNode shape = e.getValue().path("shape");
                long[] dims = new long[shape.isArray() ? shape.size() : 0];
                for (int i = 0; i < dims.length; i++) {
                    dims[i] = shape.get(i).asLong();
                }
                schema.put(e.getKey(), new ColumnSpec(e.getValue().path("dtype").asText(null), dims));
            }
        }
        List<String> shards = new ArrayList<>();
        List<Long> samples = new ArrayList<>();
        JsonNode sh = root.path("shards");
        if (!sh.isArray()) {
            throw new IOException(source + ": not a valid dataset manifest: \"shards\" must be an array");
        }
        for (JsonNode n : sh) {
            String f = n.path("file").asText(null);
            if (f == null || f.isEmpty()) {
                throw new IOException(source + ": not a valid dataset manifest: a shard has no \"file\"");
            }
            shards.add(f);
            samples.add(n.has("samples_count") ? n.path("samples_count").asLong(-1) : -1L);
        }
        JsonNode idx = root.path("index");
        String indexFile = idx.isObject() ? idx.path("file").asText(null) : null;
        return new Manifest(mode, schema, shards, samples, indexFile, root.path("total_samples").asLong(-1));
    }
}
