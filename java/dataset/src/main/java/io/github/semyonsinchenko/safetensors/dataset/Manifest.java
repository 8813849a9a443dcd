package io.github.semyonsinchenko.safetensors.dataset;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.github.semyonsinchenko.safetensors.format.Header;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * {@code dataset_manifest.json}: what a committed dataset holds (format/dataset.md). Replacing it is
 * the commit point of every write ({@link DatasetCommit}). The fields and values the original
 * connector writes ({@code format_version}/{@code safetensors_version} "1.0", shards'
 * {@code shard_path}, {@code samples_count}, {@code bytes}, totals, {@code schema}) plus this
 * connector's extras; it also reads what earlier versions of this connector wrote ({@code file},
 * {@code format_version} "1", the mode options only in the shards' {@code __metadata__}).
 *
 * @param batchSize {@code tailStrategy}, {@code packBatches}: batch mode (else null)
 * @param nameCol {@code kvSeparator}: kv mode (else null); a null separator in a kv dataset means
 *     the names of earlier versions ({@link TensorNames#parseKv})
 * @param indexFile the index, relative to the root ({@code index.file}), or null without one
 * @param version the commit counter: 1 for the first commit of a path, +1 per commit (0: written
 *     before versions existed)
 * @param commitId the job that committed it; the index carries the same id, so a reader can tell
 *     an index of another version (null: written before commit ids existed)
 * @param formatVersion as read ({@value #FORMAT_VERSION} when written)
 */
public record Manifest(String writeMode, Map<String, ColumnSchema> schema, List<Shard> shards, Integer batchSize,
                       String tailStrategy, Boolean packBatches, String nameCol, String kvSeparator,
                       String indexFile, long version, String commitId, String formatVersion,
                       String safetensorsVersion) {

    public static final String FORMAT_VERSION = "1.0";
    public static final String SAFETENSORS_VERSION = "1.0";
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    /** Mode options: top-level manifest extras and shard {@code __metadata__} keys (format/dataset.md). */
    public static final String META_WRITE_MODE = "write_mode";
    public static final String META_BATCH_SIZE = "batch_size";
    public static final String META_TAIL_STRATEGY = "tail_strategy";
    public static final String META_PACK_BATCHES = "pack_batches";
    public static final String META_NAME_COL = "name_col";
    public static final String META_KV_SEPARATOR = "kv_separator";
    public static final String META_CREATED_BY = "created_by";

    /** A manifest this connector writes now. */
    public static Manifest of(String writeMode, Map<String, ColumnSchema> schema, List<Shard> shards,
                              Integer batchSize, String tailStrategy, Boolean packBatches, String nameCol,
                              String kvSeparator, String indexFile, long version, String commitId) {
        return new Manifest(writeMode, schema, shards, batchSize, tailStrategy, packBatches, nameCol, kvSeparator,
                indexFile, version, commitId, FORMAT_VERSION, SAFETENSORS_VERSION);
    }

    public boolean hasIndex() {
        return indexFile != null;
    }

    public boolean isBatch() {
        return "batch".equals(writeMode);
    }

    public boolean isKv() {
        return "kv".equals(writeMode);
    }

    public long totalSamples() {
        return shards.stream().mapToLong(Shard::samples).sum();
    }

    public long totalBytes() {
        return shards.stream().mapToLong(Shard::bytes).sum();
    }

    /** Every file of the dataset this manifest names, relative to the root (shards, then the index). */
    public Set<String> files() {
        Set<String> out = new LinkedHashSet<>();
        for (Shard s : shards) {
            out.add(s.file());
        }
        if (indexFile != null) {
            out.add(indexFile);
        }
        return out;
    }

    public static String createdBy() {
        String v = Manifest.class.getPackage().getImplementationVersion();
        return "safetensors-jvm " + (v == null ? "dev" : v);
    }

    /** The {@code schema} object as written: column to dtype and per-sample shape (absent when it varies). */
    public ObjectNode schemaJson() {
        ObjectNode s = JSON.createObjectNode();
        for (Map.Entry<String, ColumnSchema> e : schema.entrySet()) {
            ObjectNode c = s.putObject(e.getKey());
            c.put("dtype", e.getValue().dtype());
            if (e.getValue().shape() != null) {
                ArrayNode shape = c.putArray("shape");
                for (long d : e.getValue().shape()) {
                    shape.add(d);
                }
            }
        }
        return s;
    }

    ObjectNode toJson() {
        ObjectNode root = JSON.createObjectNode();
        root.put("format_version", FORMAT_VERSION);
        root.put("safetensors_version", SAFETENSORS_VERSION);
        root.put("total_samples", totalSamples());
        root.put("total_bytes", totalBytes());
        ArrayNode arr = root.putArray("shards");
        for (Shard sh : shards) {
            ObjectNode o = arr.addObject();
            o.put("shard_path", sh.file());
            o.put("samples_count", sh.samples());
            o.put("bytes", sh.bytes());
        }
        root.set("schema", schemaJson());
        // This connector's extras.
        root.put("created_by", createdBy());
        root.put("version", version);
        if (commitId != null) {
            root.put("commit_id", commitId);
        }
        root.put(META_WRITE_MODE, writeMode);
        if (batchSize != null) {
            root.put(META_BATCH_SIZE, batchSize);
        }
        if (tailStrategy != null) {
            root.put(META_TAIL_STRATEGY, tailStrategy);
        }
        if (packBatches != null) {
            root.put(META_PACK_BATCHES, packBatches);
        }
        if (nameCol != null) {
            root.put(META_NAME_COL, nameCol);
        }
        if (kvSeparator != null) {
            root.put(META_KV_SEPARATOR, kvSeparator);
        }
        if (indexFile != null) {
            ObjectNode index = root.putObject("index").put("file", indexFile);
            if (commitId != null) {
                index.put("commit_id", commitId);
            }
        }
        return root;
    }

    byte[] toBytes() throws IOException {
        return JSON.writeValueAsBytes(toJson());
    }

    /** Parses a manifest; a missing {@code schema} is an empty one (the reader accepts it too). */
    static Manifest fromJson(JsonNode root, String source) throws IOException {
        try {
            if (root == null || !root.isObject()) {
                throw new IllegalArgumentException("expected a JSON object");
            }
            Map<String, ColumnSchema> schema = new LinkedHashMap<>();
            JsonNode schemaNode = root.path("schema");
            if (schemaNode.isObject()) {
                for (var it = schemaNode.properties().iterator(); it.hasNext(); ) {
                    var e = it.next();
                    JsonNode shapeNode = e.getValue().path("shape");
                    long[] shape = null;
                    if (shapeNode.isArray()) {
                        shape = new long[shapeNode.size()];
                        for (int i = 0; i < shape.length; i++) {
                            shape[i] = shapeNode.get(i).asLong();
                        }
                    }
                    schema.put(e.getKey(), new ColumnSchema(e.getValue().path("dtype").asText(null), shape));
                }
            }
            JsonNode shardsNode = root.path("shards");
            if (!shardsNode.isArray()) {
                throw new IllegalArgumentException("\"shards\" must be an array");
            }
            List<Shard> shards = new ArrayList<>();
            for (JsonNode sh : shardsNode) {
                // "shard_path" (the original connector's, and ours now) or "file" (ours before).
                String file = sh.path("shard_path").asText(sh.path("file").asText(""));
                if (file.isEmpty()) {
                    throw new IllegalArgumentException("a shard has no \"shard_path\" (or \"file\")");
                }
                shards.add(new Shard(file, sh.path("samples_count").asLong(-1), sh.path("bytes").asLong(-1)));
            }
            JsonNode index = root.path("index");
            String indexFile = index.isObject() ? index.path("file").asText(DatasetLayout.INDEX) : null;
            return new Manifest(text(root, META_WRITE_MODE), schema, shards,
                    root.hasNonNull(META_BATCH_SIZE) ? root.get(META_BATCH_SIZE).asInt() : null,
                    text(root, META_TAIL_STRATEGY),
                    root.hasNonNull(META_PACK_BATCHES) ? root.get(META_PACK_BATCHES).asBoolean() : null,
                    text(root, META_NAME_COL), text(root, META_KV_SEPARATOR), indexFile,
                    root.path("version").asLong(0), text(root, "commit_id"), text(root, "format_version"),
                    text(root, "safetensors_version"));
        } catch (RuntimeException e) {
            throw new IOException(source + ": not a valid dataset manifest (" + e.getMessage() + ")", e);
        }
    }

    private static String text(JsonNode root, String field) {
        return root.hasNonNull(field) ? root.get(field).asText() : null;
    }

    /**
     * Parses manifest bytes and requires what the manifest schema requires: the versions, the
     * totals and each shard's {@code samples_count} and {@code bytes} (lineage reports them as
     * written). The dataset reader is more lenient ({@link #readFile}).
     */
    public static Manifest parseComplete(byte[] bytes, String source) throws IOException {
        JsonNode root;
        try {
            root = JSON.readTree(bytes);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IOException(source + ": not valid JSON: " + e.getOriginalMessage(), e);
        }
        if (root == null || !root.isObject()) {
            throw new IOException(source + ": a manifest is a JSON object");
        }
        for (String f : List.of("format_version", "safetensors_version")) {
            JsonNode v = root.get(f);
            if (v == null || !(v.isTextual() || v.isNumber())) {
                throw new IOException(source + ": '" + f + "' is missing or not a string");
            }
        }
        requireCount(root, "total_samples", source);
        requireCount(root, "total_bytes", source);
        JsonNode shards = root.path("shards");
        for (int i = 0; i < shards.size(); i++) {
            requireCount(shards.get(i), "samples_count", source + " (shard " + i + ")");
            requireCount(shards.get(i), "bytes", source + " (shard " + i + ")");
        }
        return fromJson(root, source);
    }

    private static void requireCount(JsonNode node, String field, String source) throws IOException {
        JsonNode v = node.get(field);
        if (v == null || !v.isIntegralNumber() || !v.canConvertToLong() || v.asLong() < 0) {
            throw new IOException(source + ": '" + field + "' is missing or not a non-negative integer");
        }
    }

    /** Parses manifest bytes ({@code source} names them in errors). */
    public static Manifest parse(byte[] bytes, String source) throws IOException {
        try {
            return fromJson(JSON.readTree(bytes), source);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IOException(source + ": not a valid dataset manifest (" + e.getOriginalMessage() + ")", e);
        }
    }

    /** Parses a manifest file, or returns null when there is none. */
    public static Manifest readFile(FileSystem fs, Path file) throws IOException {
        JsonNode node;
        try (InputStream in = fs.open(file)) {
            node = JSON.readTree(in);
        } catch (FileNotFoundException e) {
            return null;
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IOException(file + ": not a valid dataset manifest (" + e.getOriginalMessage() + ")", e);
        }
        return fromJson(node, file.toString());
    }

    /**
     * The committed manifest under {@code root}, or null when there is none. A manifest of an
     * earlier version of this connector has its mode options only in the shards'
     * {@code __metadata__}: they are taken from its first shard.
     */
    public static Manifest read(FileSystem fs, Path root) throws IOException {
        Manifest m = readFile(fs, new Path(root, DatasetLayout.MANIFEST));
        if (m == null || m.shards().isEmpty() || m.writeMode() == null
                || (m.batchSize() != null || m.nameCol() != null)) {
            return m;
        }
        Path first = new Path(root, m.shards().get(0).file());
        Map<String, String> meta;
        try (InputStream in = fs.open(first)) {
            meta = Header.read(in, fs.getFileStatus(first).getLen(), first.toString()).metadata();
        }
        return new Manifest(m.writeMode(), m.schema(), m.shards(),
                meta.containsKey(META_BATCH_SIZE) ? Integer.valueOf(meta.get(META_BATCH_SIZE)) : null,
                meta.get(META_TAIL_STRATEGY),
                meta.containsKey(META_PACK_BATCHES) ? Boolean.valueOf(meta.get(META_PACK_BATCHES)) : null,
                meta.get(META_NAME_COL), meta.get(META_KV_SEPARATOR), m.indexFile(), m.version(), m.commitId(),
                m.formatVersion(), m.safetensorsVersion());
    }
}
