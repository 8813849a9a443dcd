package io.github.semyonsinchenko.safetensors.spark.write;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.github.semyonsinchenko.safetensors.format.Header;
import io.github.semyonsinchenko.safetensors.spark.write.ShardCommitMessage.ColumnSchema;
import io.github.semyonsinchenko.safetensors.spark.write.ShardCommitMessage.Shard;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * {@code dataset_manifest.json}: what a committed dataset holds (spark/DATASET.md). Written last by
 * the job commit, through a temporary file renamed over the old one, so its presence means
 * "committed" and readers never see half a manifest.
 */
record Manifest(String writeMode, Map<String, ColumnSchema> schema, List<Shard> shards, Integer batchSize,
                String tailStrategy, String nameCol, boolean hasIndex) {

    static final String FORMAT_VERSION = "1";
    static final String SAFETENSORS_VERSION = "0.8";
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    long totalSamples() {
        return shards.stream().mapToLong(Shard::samples).sum();
    }

    long totalBytes() {
        return shards.stream().mapToLong(Shard::bytes).sum();
    }

    static String createdBy() {
        String v = Manifest.class.getPackage().getImplementationVersion();
        return "safetensors-jvm " + (v == null ? "dev" : v);
    }

    ObjectNode toJson() {
        ObjectNode root = JSON.createObjectNode();
        root.put("format_version", FORMAT_VERSION);
        root.put("safetensors_version", SAFETENSORS_VERSION);
        root.put("created_by", createdBy());
        root.put("write_mode", writeMode);
        root.put("total_samples", totalSamples());
        root.put("total_bytes", totalBytes());
        ObjectNode s = root.putObject("schema");
        for (Map.Entry<String, ColumnSchema> e : schema.entrySet()) {
            ObjectNode c = s.putObject(e.getKey());
            c.put("dtype", e.getValue().dtype());
            ArrayNode shape = c.putArray("shape");
            for (long d : e.getValue().shape()) {
                shape.add(d);
            }
        }
        ArrayNode arr = root.putArray("shards");
        for (Shard sh : shards) {
            ObjectNode o = arr.addObject();
            o.put("file", sh.file());
            o.put("samples_count", sh.samples());
            o.put("bytes", sh.bytes());
        }
        if (hasIndex) {
            root.putObject("index").put("file", DatasetFiles.INDEX);
        }
        return root;
    }

    static Manifest fromJson(JsonNode root, String source) throws IOException {
        try {
            Map<String, ColumnSchema> schema = new LinkedHashMap<>();
            for (var it = root.get("schema").properties().iterator(); it.hasNext(); ) {
                var e = it.next();
                JsonNode shapeNode = e.getValue().get("shape");
                long[] shape = new long[shapeNode.size()];
                for (int i = 0; i < shape.length; i++) {
                    shape[i] = shapeNode.get(i).asLong();
                }
                schema.put(e.getKey(), new ColumnSchema(e.getValue().get("dtype").asText(), shape));
            }
            List<Shard> shards = new ArrayList<>();
            for (JsonNode sh : root.get("shards")) {
                shards.add(new Shard(sh.get("file").asText(), sh.get("samples_count").asLong(), sh.get("bytes").asLong()));
            }
            return new Manifest(root.get("write_mode").asText(), schema, shards, null, null, null, root.has("index"));
        } catch (RuntimeException e) {
            throw new IOException(source + ": not a valid dataset manifest (" + e + ")", e);
        }
    }

    /** The manifest under {@code root}, or null when there is none. */
    static Manifest read(FileSystem fs, Path root) throws IOException {
        Path p = new Path(root, DatasetFiles.MANIFEST);
        if (!fs.exists(p)) {
            return null;
        }
        Manifest m;
        try (InputStream in = fs.open(p)) {
            m = fromJson(JSON.readTree(in), p.toString());
        }
        if (m.shards().isEmpty()) {
            return m;
        }
        // The mode options live in every shard's __metadata__ (the manifest schema has no place for them).
        Path first = new Path(root, m.shards().get(0).file());
        Map<String, String> meta;
        try (InputStream in = fs.open(first)) {
            meta = Header.read(in, fs.getFileStatus(first).getLen(), first.toString()).metadata();
        }
        return new Manifest(m.writeMode(), m.schema(), m.shards(),
                meta.containsKey(META_BATCH_SIZE) ? Integer.valueOf(meta.get(META_BATCH_SIZE)) : null,
                meta.get(META_TAIL_STRATEGY), meta.get(META_NAME_COL), m.hasIndex());
    }

    /** Shard {@code __metadata__} keys (spark/DATASET.md). */
    static final String META_WRITE_MODE = "write_mode";
    static final String META_BATCH_SIZE = "batch_size";
    static final String META_TAIL_STRATEGY = "tail_strategy";
    static final String META_NAME_COL = "name_col";
    static final String META_CREATED_BY = "created_by";

    void write(FileSystem fs, Path root) throws IOException {
        Path tmp = new Path(root, "." + DatasetFiles.MANIFEST + "." + UUID.randomUUID() + ".tmp");
        try {
            try (OutputStream out = fs.create(tmp, false)) {
                JSON.writeValue(out, toJson());
            }
            DatasetFiles.renameOverwrite(fs, tmp, new Path(root, DatasetFiles.MANIFEST));
        } finally {
            fs.delete(tmp, false);
        }
    }
}
