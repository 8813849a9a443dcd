package io.github.semyonsinchenko.safetensors.dataset;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.github.semyonsinchenko.safetensors.format.Header;
import io.github.semyonsinchenko.safetensors.options.OptionException;
import io.github.semyonsinchenko.safetensors.options.Options;
import java.io.IOException;
import java.io.InputStream;
import java.io.Serial;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * {@code dataset_manifest.json} and each {@code _manifests/<version>.json}: what a committed version
 * of a dataset holds (format/dataset.md). The fields and values the original connector writes
 * ({@code format_version}/{@code safetensors_version} "1.0", shards' {@code shard_path},
 * {@code samples_count}, {@code bytes}, totals, {@code schema}) plus this connector's extras; it also
 * reads what earlier versions of this connector wrote ({@code file}, {@code format_version} "1", the
 * mode options only in the shards' {@code __metadata__}).
 *
 * <p>Parsing checks what every reader relies on, never trusting the file blindly: every path stays
 * inside the dataset root and is kept normalised ({@link DatasetLayout#relativePath}), no shard is
 * listed twice, {@code write_mode} is one this format knows. A violation is a {@link DatasetException}.
 *
 * @param layout the mode and its options ({@link Layout#UNRECORDED} for the original connector's)
 * @param schema column to per-sample dtype and shape (empty when the manifest has none)
 * @param shards the shards, paths normalised, in manifest order
 * @param index the version's tensor index, or null without one
 * @param version the commit counter: 1 for the first commit of a path, +1 per commit (0: written
 *     before versions existed)
 * @param commitId the job that committed it; the index carries the same id (null: written before
 *     commit ids existed)
 * @param formatVersion as read ({@value #FORMAT_VERSION} when written)
 * @param safetensorsVersion as read ({@value #SAFETENSORS_VERSION} when written)
 */
public record Manifest(Layout layout, Map<String, ColumnSchema> schema, List<Shard> shards, IndexRef index,
                       long version, String commitId, String formatVersion, String safetensorsVersion)
        implements Serializable {
    @Serial
    private static final long serialVersionUID = 1L;

    /** The manifest format version written. */
    public static final String FORMAT_VERSION = "1.0";
    /** The safetensors format version the shards follow. */
    public static final String SAFETENSORS_VERSION = "1.0";
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    /** Mode options: top-level manifest extras and shard {@code __metadata__} keys (format/dataset.md). */
    public static final String META_WRITE_MODE = "write_mode";
    /** See {@link #META_WRITE_MODE}. */
    public static final String META_BATCH_SIZE = "batch_size";
    /** See {@link #META_WRITE_MODE}. */
    public static final String META_TAIL_STRATEGY = "tail_strategy";
    /** See {@link #META_WRITE_MODE}. */
    public static final String META_PACK_BATCHES = "pack_batches";
    /** See {@link #META_WRITE_MODE}. */
    public static final String META_NAME_COL = "name_col";
    /** See {@link #META_WRITE_MODE}. */
    public static final String META_KV_SEPARATOR = "kv_separator";
    /** Shard {@code __metadata__}: the writer's name and version. */
    public static final String META_CREATED_BY = "created_by";

    /**
     * The tensor index of a version.
     *
     * @param file the index file, relative to the root and normalised
     * @param commitId the commit that wrote it (its Parquet footer holds the same), or null
     * @param sha256 the SHA-256 of the file's bytes, hex (null in manifests of earlier versions)
     * @param rows the number of rows (tensors) it holds, or -1 when not recorded
     */
    public record IndexRef(String file, String commitId, String sha256, long rows) implements Serializable {
        @Serial
        private static final long serialVersionUID = 1L;
    }

    /** Copies the schema and the shards. */
    public Manifest {
        schema = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(schema));
        shards = List.copyOf(shards);
    }

    /**
     * A manifest this connector writes now.
     *
     * @param layout the mode and its options
     * @param schema column to per-sample dtype and shape, in column order
     * @param shards every shard of the version
     * @param index the version's index, or null
     * @param version the version this manifest commits
     * @param commitId the committing job
     * @return the manifest
     */
    public static Manifest of(Layout layout, Map<String, ColumnSchema> schema, List<Shard> shards, IndexRef index,
                              long version, String commitId) {
        return new Manifest(layout, schema, shards, index, version, commitId, FORMAT_VERSION, SAFETENSORS_VERSION);
    }

    /** {@return {@code write_mode}, or null} */
    public String writeMode() {
        return layout.writeMode();
    }

    /** {@return batch mode's {@code batch_size}, or null} */
    public Integer batchSize() {
        return layout.batchSize();
    }

    /** {@return batch mode's {@code tail_strategy}, or null} */
    public String tailStrategy() {
        return layout.tailStrategy();
    }

    /** {@return batch mode's {@code pack_batches}, or null} */
    public Boolean packBatches() {
        return layout.packBatches();
    }

    /** {@return kv mode's {@code name_col}, or null} */
    public String nameCol() {
        return layout.nameCol();
    }

    /** {@return kv mode's {@code kv_separator}, or null} */
    public String kvSeparator() {
        return layout.kvSeparator();
    }

    /** {@return the index file relative to the root, or null without an index} */
    public String indexFile() {
        return index == null ? null : index.file();
    }

    /** {@return whether the version has a tensor index} */
    public boolean hasIndex() {
        return index != null;
    }

    /** {@return whether this is a batch dataset} */
    public boolean isBatch() {
        return layout.isBatch();
    }

    /** {@return whether this is a kv dataset} */
    public boolean isKv() {
        return layout.isKv();
    }

    /** {@return the sum of the shards' samples} */
    public long totalSamples() {
        return shards.stream().mapToLong(Shard::samples).sum();
    }

    /** {@return the sum of the shards' bytes} */
    public long totalBytes() {
        return shards.stream().mapToLong(Shard::bytes).sum();
    }

    /** {@return every file of the dataset this manifest names, relative to the root (shards, then the index)} */
    public Set<String> files() {
        Set<String> out = new LinkedHashSet<>();
        for (Shard s : shards) {
            out.add(s.file());
        }
        if (index != null) {
            out.add(index.file());
        }
        return out;
    }

    /** {@return the names of the shards, normalised, in manifest order} */
    public Set<String> shardFiles() {
        Set<String> out = new LinkedHashSet<>();
        for (Shard s : shards) {
            out.add(s.file());
        }
        return out;
    }

    /** {@return what this library writes as {@code created_by}} */
    public static String createdBy() {
        String v = Manifest.class.getPackage().getImplementationVersion();
        return "safetensors-jvm " + (v == null ? "dev" : v);
    }

    /** {@return the {@code schema} object as written: column to dtype and per-sample shape (absent when it varies)} */
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
        root.put(META_WRITE_MODE, layout.writeMode());
        if (layout.batchSize() != null) {
            root.put(META_BATCH_SIZE, layout.batchSize());
        }
        if (layout.tailStrategy() != null) {
            root.put(META_TAIL_STRATEGY, layout.tailStrategy());
        }
        if (layout.packBatches() != null) {
            root.put(META_PACK_BATCHES, layout.packBatches());
        }
        if (layout.nameCol() != null) {
            root.put(META_NAME_COL, layout.nameCol());
        }
        if (layout.kvSeparator() != null) {
            root.put(META_KV_SEPARATOR, layout.kvSeparator());
        }
        if (index != null) {
            ObjectNode idx = root.putObject("index").put("file", index.file());
            if (index.commitId() != null) {
                idx.put("commit_id", index.commitId());
            }
            if (index.sha256() != null) {
                idx.put("sha256", index.sha256());
            }
            if (index.rows() >= 0) {
                idx.put("rows", index.rows());
            }
        }
        return root;
    }

    /**
     * The manifest as the UTF-8 JSON bytes every commit writes.
     *
     * @return the manifest as the UTF-8 JSON bytes every commit writes
     * @throws IOException if Jackson fails (never for these values)
     */
    public byte[] toBytes() throws IOException {
        return JSON.writeValueAsBytes(toJson());
    }

    /** Parses a manifest; a missing {@code schema} is an empty one (the reader accepts it too). */
    static Manifest fromJson(JsonNode root, String source) throws DatasetException {
        if (root == null || !root.isObject()) {
            throw invalid(source, "expected a JSON object");
        }
        Map<String, ColumnSchema> schema = new LinkedHashMap<>();
        JsonNode schemaNode = root.path("schema");
        if (schemaNode.isObject()) {
            for (var it = schemaNode.properties().iterator(); it.hasNext(); ) {
                var e = it.next();
                JsonNode dtype = e.getValue().path("dtype");
                if (!dtype.isTextual()) {
                    throw invalid(source, "column \"" + e.getKey() + "\" has no dtype");
                }
                JsonNode shapeNode = e.getValue().path("shape");
                long[] shape = null;
                if (shapeNode.isArray()) {
                    shape = new long[shapeNode.size()];
                    for (int i = 0; i < shape.length; i++) {
                        JsonNode d = shapeNode.get(i);
                        if (!d.isIntegralNumber() || !d.canConvertToLong() || d.asLong() < 0) {
                            throw invalid(source, "column \"" + e.getKey() + "\" has shape " + shapeNode);
                        }
                        shape[i] = d.asLong();
                    }
                } else if (!shapeNode.isMissingNode() && !shapeNode.isNull()) {
                    throw invalid(source, "column \"" + e.getKey() + "\" has shape " + shapeNode);
                }
                schema.put(e.getKey(), new ColumnSchema(dtype.asText(), shape));
            }
        } else if (!schemaNode.isMissingNode() && !schemaNode.isNull()) {
            throw invalid(source, "\"schema\" must be an object");
        }
        JsonNode shardsNode = root.path("shards");
        if (!shardsNode.isArray()) {
            throw invalid(source, "\"shards\" must be an array");
        }
        List<Shard> shards = new ArrayList<>();
        Map<String, Integer> position = new HashMap<>();
        for (JsonNode sh : shardsNode) {
            // "shard_path" (the original connector's, and ours now) or "file" (ours before).
            JsonNode name = sh.has("shard_path") ? sh.get("shard_path") : sh.path("file");
            if (!name.isTextual()) {
                throw invalid(source, "shard " + shards.size() + " has no \"shard_path\" (or \"file\")");
            }
            String file = DatasetLayout.relativePath(name.asText(), source);
            Integer before = position.putIfAbsent(file, shards.size());
            if (before != null) {
                throw new DatasetException(DatasetRule.DUPLICATE_SHARD, source, file + " at positions " + before
                        + " and " + shards.size());
            }
            shards.add(new Shard(file, sh.path("samples_count").asLong(-1), sh.path("bytes").asLong(-1)));
        }
        String writeMode = text(root, META_WRITE_MODE);
        if (writeMode != null && !writeMode.equals(Layout.BATCH) && !writeMode.equals(Layout.KV)) {
            throw new DatasetException(DatasetRule.UNKNOWN_WRITE_MODE, source, "\"" + writeMode + "\"");
        }
        JsonNode index = root.path("index");
        IndexRef indexRef = null;
        if (index.isObject()) {
            String file = DatasetLayout.relativePath(index.path("file").asText(DatasetLayout.INDEX), source);
            indexRef = new IndexRef(file, text(index, "commit_id"), text(index, "sha256"),
                    index.path("rows").canConvertToLong() ? index.path("rows").asLong() : -1);
        }
        Layout layout = new Layout(writeMode,
                root.hasNonNull(META_BATCH_SIZE) ? root.get(META_BATCH_SIZE).asInt() : null,
                text(root, META_TAIL_STRATEGY),
                root.hasNonNull(META_PACK_BATCHES) ? root.get(META_PACK_BATCHES).asBoolean() : null,
                text(root, META_NAME_COL), text(root, META_KV_SEPARATOR));
        return new Manifest(layout, schema, shards, indexRef, root.path("version").asLong(0),
                text(root, "commit_id"), text(root, "format_version"), text(root, "safetensors_version"));
    }

    private static DatasetException invalid(String source, String detail) {
        return new DatasetException(DatasetRule.MANIFEST_INVALID, source, detail);
    }

    private static String text(JsonNode root, String field) {
        return root.hasNonNull(field) ? root.get(field).asText() : null;
    }

    /**
     * Parses manifest bytes and requires what the manifest schema requires: the versions, the
     * totals and each shard's {@code samples_count} and {@code bytes} (lineage reports them as
     * written). The dataset reader is more lenient ({@link #parse}).
     *
     * @param bytes the manifest's bytes
     * @param source names the manifest in errors
     * @return the manifest
     * @throws DatasetException when a field is missing or of the wrong type
     */
    public static Manifest parseComplete(byte[] bytes, String source) throws DatasetException {
        JsonNode root = tree(bytes, source);
        if (root == null || !root.isObject()) {
            throw invalid(source, "a manifest is a JSON object");
        }
        for (String f : List.of("format_version", "safetensors_version")) {
            JsonNode v = root.get(f);
            if (v == null || !(v.isTextual() || v.isNumber())) {
                throw invalid(source, "'" + f + "' is missing or not a string");
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

    private static void requireCount(JsonNode node, String field, String source) throws DatasetException {
        JsonNode v = node.get(field);
        if (v == null || !v.isIntegralNumber() || !v.canConvertToLong() || v.asLong() < 0) {
            throw invalid(source, "'" + field + "' is missing or not a non-negative integer");
        }
    }

    private static JsonNode tree(byte[] bytes, String source) throws DatasetException {
        try {
            return JSON.readTree(bytes);
        } catch (IOException e) {
            String why = e instanceof com.fasterxml.jackson.core.JsonProcessingException j ? j.getOriginalMessage()
                    : e.toString();
            throw new DatasetException(DatasetRule.MANIFEST_INVALID, source, "not valid JSON: " + why, e);
        }
    }

    /**
     * Parses manifest bytes.
     *
     * @param bytes the manifest's bytes
     * @param source names the manifest in errors
     * @return the manifest
     * @throws DatasetException when it breaks a rule
     */
    public static Manifest parse(byte[] bytes, String source) throws DatasetException {
        return fromJson(tree(bytes, source), source);
    }

    /**
     * Parses a manifest file, or returns null when there is none. A file that exists but cannot be read
     * (permission denied arrives from the local file system as a {@code FileNotFoundException} too) is
     * never taken for an absent one: {@link DatasetRule#MANIFEST_UNREADABLE}.
     *
     * @param fs the file system
     * @param file the manifest or history entry
     * @return the manifest, or null when the file does not exist
     * @throws DatasetException when it exists but cannot be read or parsed
     * @throws IOException when the file system fails otherwise
     */
    public static Manifest readFile(FileSystem fs, Path file) throws IOException {
        byte[] bytes = readBytes(fs, file);
        return bytes == null ? null : parse(bytes, file.toString());
    }

    /**
     * A manifest file's bytes, or null when it does not exist.
     *
     * @param fs the file system
     * @param file the manifest or history entry
     * @return its bytes, or null
     * @throws DatasetException {@link DatasetRule#MANIFEST_UNREADABLE} when it exists but cannot be read
     * @throws IOException when the file system cannot tell whether the file exists
     */
    public static byte[] bytesOf(FileSystem fs, Path file) throws IOException {
        return readBytes(fs, file);
    }

    static byte[] readBytes(FileSystem fs, Path file) throws IOException {
        IOException last = null;
        // dataset_manifest.json is replaced while others read it: on HDFS a read of the replaced file can
        // fail after its open. Reading again gets the new one; only a failure that stays is "cannot read".
        for (int attempt = 0; attempt < 3; attempt++) {
            try (InputStream in = fs.open(file)) {
                return in.readAllBytes();
            } catch (java.io.FileNotFoundException e) {
                if (Probe.absent(fs, file)) {
                    return null;
                }
                last = e;
            } catch (IOException e) {
                last = e;
            }
        }
        throw new DatasetException(DatasetRule.MANIFEST_UNREADABLE, file.toString(), reason(last), last);
    }

    private static String reason(IOException e) {
        String m = e.getMessage();
        return e.getClass().getSimpleName() + (m == null ? "" : ": " + m);
    }

    /**
     * The committed manifest of the dataset at {@code root} (its newest version, see
     * {@link DatasetVersions}), or null when there is none. A manifest of an earlier version of this
     * connector has its mode options only in the shards' {@code __metadata__}: they are taken from its
     * first shard.
     *
     * @param fs the file system
     * @param root the dataset root
     * @return the newest committed manifest, or null
     * @throws IOException when it cannot be read or breaks a rule
     */
    public static Manifest read(FileSystem fs, Path root) throws IOException {
        DatasetVersions.Snapshot s = DatasetVersions.latest(fs, root);
        return s == null ? null : withShardOptions(fs, root, s.manifest());
    }

    /** A manifest of an earlier version of this connector, completed with the first shard's mode options. */
    static Manifest withShardOptions(FileSystem fs, Path root, Manifest m) throws IOException {
        if (m.shards().isEmpty() || m.writeMode() == null || m.batchSize() != null || m.nameCol() != null) {
            return m;
        }
        Path first = new Path(root, m.shards().get(0).file());
        Map<String, String> meta;
        try (InputStream in = fs.open(first)) {
            meta = Header.read(in, fs.getFileStatus(first).getLen(), first.toString()).metadata();
        }
        // Read as strictly as options are: a shard's metadata is checked, never trusted.
        Options shardMeta = Options.of("shard metadata of " + first, meta);
        Layout layout;
        try {
            layout = new Layout(m.writeMode(),
                    meta.containsKey(META_BATCH_SIZE)
                            ? shardMeta.intValue(META_BATCH_SIZE, 1, 1, Integer.MAX_VALUE, "rows") : null,
                    meta.get(META_TAIL_STRATEGY),
                    meta.containsKey(META_PACK_BATCHES) ? shardMeta.bool(META_PACK_BATCHES, false) : null,
                    meta.get(META_NAME_COL), meta.get(META_KV_SEPARATOR));
        } catch (OptionException e) {
            throw new DatasetException(DatasetRule.MANIFEST_INVALID, first.toString(), e.getMessage(), e);
        }
        return new Manifest(layout, m.schema(), m.shards(), m.index(), m.version(), m.commitId(), m.formatVersion(),
                m.safetensorsVersion());
    }
}
