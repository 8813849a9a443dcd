package io.github.semyonsinchenko.safetensors.spark.dataset;

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
 * {@code dataset_manifest.json}: what a committed dataset holds (spark/DATASET.md). Replacing it is
 * the commit point of every write ({@link DatasetCommit}).
 *
 * @param indexFile the index, relative to the root ({@code index.file}), or null without one
 * @param version the commit counter: 1 for the first commit of a path, +1 per commit (0: written
 *     before versions existed)
 * @param commitId the job that committed it; the index carries the same id, so a reader can tell
 *     an index of another version (null: written before commit ids existed)
 */
public record Manifest(String writeMode, Map<String, ColumnSchema> schema, List<Shard> shards, Integer batchSize,
                       String tailStrategy, String nameCol, String indexFile, long version, String commitId) {

    static final String FORMAT_VERSION = "1";
    static final String SAFETENSORS_VERSION = "0.8";
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    /** Shard {@code __metadata__} keys (spark/DATASET.md). */
    public static final String META_WRITE_MODE = "write_mode";
    public static final String META_BATCH_SIZE = "batch_size";
    public static final String META_TAIL_STRATEGY = "tail_strategy";
    public static final String META_NAME_COL = "name_col";
    public static final String META_CREATED_BY = "created_by";

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

    ObjectNode toJson() {
        ObjectNode root = JSON.createObjectNode();
        root.put("format_version", FORMAT_VERSION);
        root.put("safetensors_version", SAFETENSORS_VERSION);
        root.put("created_by", createdBy());
        root.put("version", version);
        if (commitId != null) {
            root.put("commit_id", commitId);
        }
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
                    long[] shape = new long[shapeNode.size()];
                    for (int i = 0; i < shape.length; i++) {
                        shape[i] = shapeNode.get(i).asLong();
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
                // "shard_path": the original Scala connector's name for the same field.
                String file = sh.path("file").asText(sh.path("shard_path").asText(""));
                if (file.isEmpty()) {
                    throw new IllegalArgumentException("a shard has no \"file\" (or \"shard_path\")");
                }
                shards.add(new Shard(file, sh.path("samples_count").asLong(-1), sh.path("bytes").asLong(-1)));
            }
            String commitId = root.hasNonNull("commit_id") ? root.get("commit_id").asText() : null;
            JsonNode index = root.path("index");
            String indexFile = index.isObject() ? index.path("file").asText(DatasetLayout.INDEX) : null;
            return new Manifest(root.path("write_mode").asText(null), schema, shards, null, null, null,
                    indexFile, root.path("version").asLong(0), commitId);
        } catch (RuntimeException e) {
            throw new IOException(source + ": not a valid dataset manifest (" + e.getMessage() + ")", e);
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
     * The committed manifest under {@code root} with the mode options of its first shard's
     * {@code __metadata__}, or null when there is none.
     */
    public static Manifest read(FileSystem fs, Path root) throws IOException {
        Manifest m = readFile(fs, new Path(root, DatasetLayout.MANIFEST));
        if (m == null || m.shards().isEmpty()) {
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
                meta.get(META_TAIL_STRATEGY), meta.get(META_NAME_COL), m.indexFile(), m.version(), m.commitId());
    }
}
