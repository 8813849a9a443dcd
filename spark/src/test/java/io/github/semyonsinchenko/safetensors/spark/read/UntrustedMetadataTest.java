package io.github.semyonsinchenko.safetensors.spark.read;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.github.semyonsinchenko.safetensors.dataset.DatasetLayout;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.example.ExampleParquetWriter;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.apache.parquet.hadoop.util.HadoopOutputFile;
import org.apache.parquet.schema.MessageType;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 28's items 2 to 5, through Spark: a manifest the writer may not read is never taken for an
 * absent one; vacuum compares normalised names; a manifest is checked (paths inside the root, no
 * duplicate shard, a known write mode, a separator and schema its shards agree with); a damaged or
 * wrong index never makes a key filter return fewer rows than the full scan, nor a raw Parquet error.
 */
class UntrustedMetadataTest extends SparkTestBase {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path tmp;

    /** kv dataset: keys k0..k{n-1}, vec = [id, id*2] as float, in 4 shards, with the index. */
    private Path dataset(String name, int n) {
        Path root = tmp.resolve(name);
        spark.range(0, n, 1, 4).selectExpr("concat('k', id) as key", "array(cast(id as float), cast(id * 2 as float))"
                + " as vec").write().format("safetensors").option("name_col", "key").option("generate_index", "true")
                .save(root.toString());
        return root;
    }

    private Dataset<Row> read(Path root, String... options) {
        var r = spark.read().format("safetensors").option("inferSchema", "true");
        for (int i = 0; i < options.length; i += 2) {
            r = r.option(options[i], options[i + 1]);
        }
        return r.load(root.toString());
    }

    private static String causes(Throwable e) {
        StringBuilder sb = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            sb.append(t.getClass().getSimpleName()).append(": ").append(t.getMessage()).append('\n');
        }
        return sb.toString();
    }

    private static void editManifest(Path root, Consumer<ObjectNode> edit) throws IOException {
        Path m = root.resolve(DatasetLayout.MANIFEST);
        ObjectNode json = (ObjectNode) JSON.readTree(m.toFile());
        edit.accept(json);
        Files.write(m, JSON.writeValueAsBytes(json));
    }

    // ------------------------------------------------------------------ item 2: unreadable manifest

    @Test
    void anAppendThatCannotReadTheManifestFailsAndTheDatasetKeepsItsRows() throws IOException {
        Path root = dataset("denied", 40);
        String[] deny = {"fs.file.impl", DenyingLocalFileSystem.class.getName(), DenyingLocalFileSystem.DENY,
            "dataset_manifest\\.json"};
        for (String mode : List.of("append", "overwrite")) {
            Exception e = assertThrows(Exception.class, () -> spark.range(100, 110, 1, 2)
                    .selectExpr("concat('k', id) as key", "array(cast(id as float), 0f) as vec").write()
                    .format("safetensors").mode(mode).option("name_col", "key").option(deny[0], deny[1])
                    .option(deny[2], deny[3]).save(root.toString()), mode);
            String all = causes(e);
            assertTrue(all.contains("cannot be read") && all.contains("Permission denied"), mode + ": " + all);
        }
        AnalysisException e = assertThrows(AnalysisException.class, () -> read(root, deny));
        assertTrue(e.getMessage().contains("cannot be read") && !e.getMessage().contains("has no"), e.getMessage());
        assertEquals(40, read(root).count());
    }

    // ------------------------------------------------------------------ item 3: vacuum and spelling

    @Test
    void vacuumKeepsAShardTheManifestSpellsWithDotSlash() throws IOException {
        Path root = dataset("dotslash", 100);
        editManifest(root, j -> j.withArray("shards").forEach(s -> ((ObjectNode) s).put("shard_path",
                "./" + s.get("shard_path").asText())));
        try (Stream<Path> s = Files.walk(root)) {
            for (Path p : s.toList()) {
                Files.setLastModifiedTime(p, FileTime.fromMillis(System.currentTimeMillis() - 3 * 86_400_000L));
            }
        }
        Configuration conf = new Configuration();
        conf.set("fs.file.impl", org.apache.hadoop.fs.RawLocalFileSystem.class.getName());
        conf.setBoolean("fs.file.impl.disable.cache", true);
        io.github.semyonsinchenko.safetensors.dataset.Vacuum.run(conf, new org.apache.hadoop.fs.Path(root.toUri()),
                io.github.semyonsinchenko.safetensors.dataset.CommitPolicy.parse(Map.of("orphan_age", "0s",
                        "retain_versions", "0")), false);
        assertEquals(100, read(root).count());
        spark.range(100, 101).selectExpr("concat('k', id) as key", "array(cast(id as float), 0f) as vec").write()
                .format("safetensors").mode("append").option("name_col", "key").option("orphan_age", "0s")
                .option("retain_versions", "0").save(root.toString());
        assertEquals(101, read(root).count(), "the append's cleanup kept the shards too");
    }

    // ------------------------------------------------------------------ item 4: the manifest is checked

    private void assertRefused(Path root, String... expected) {
        AnalysisException e = assertThrows(AnalysisException.class, () -> read(root).count());
        for (String s : expected) {
            assertTrue(e.getMessage().contains(s), "missing '" + s + "' in: " + e.getMessage());
        }
    }

    @Test
    void shardPathsOutsideTheRootAreRefusedNamingThem() throws IOException {
        Path outside = dataset("outside", 10);
        String foreign = Files.list(outside).map(p -> p.getFileName().toString()).filter(DatasetLayout::isShardName)
                .findFirst().orElseThrow();
        Path root = dataset("escapes", 20);
        byte[] original = Files.readAllBytes(root.resolve(DatasetLayout.MANIFEST));
        for (String path : List.of("../outside/" + foreign, outside.resolve(foreign).toString(),
                outside.resolve(foreign).toUri().toString())) {
            editManifest(root, j -> ((ObjectNode) j.withArray("shards").get(0)).put("shard_path", path));
            assertRefused(root, "stay inside the dataset root", path);
            Files.write(root.resolve(DatasetLayout.MANIFEST), original);
        }
        assertEquals(20, read(root).count());
    }

    @Test
    void aDuplicateShardEntryIsRefused() throws IOException {
        Path root = dataset("dup", 100);
        editManifest(root, j -> {
            ArrayNode shards = j.withArray("shards");
            shards.add(shards.get(0).deepCopy());
        });
        assertRefused(root, "listed more than once");
    }

    @Test
    void aSeparatorOrSchemaTheShardsDisagreeWithIsRefused() throws IOException {
        Path root = dataset("layout", 20);
        byte[] original = Files.readAllBytes(root.resolve(DatasetLayout.MANIFEST));
        editManifest(root, j -> j.put("kv_separator", "::"));
        assertRefused(root, "kv_separator '__'", "'::'");
        Files.write(root.resolve(DatasetLayout.MANIFEST), original);
        editManifest(root, j -> {
            JsonNode col = ((ObjectNode) j.get("schema")).remove("vec");
            ((ObjectNode) j.get("schema")).set("emb", col);
        });
        assertRefused(root, "belongs to none of the manifest's columns [emb]");
        Files.write(root.resolve(DatasetLayout.MANIFEST), original);
        editManifest(root, j -> ((ObjectNode) ((ObjectNode) j.get("schema")).get("vec")).put("dtype", "F64"));
        assertRefused(root, "is F32", "is F64");
        Files.write(root.resolve(DatasetLayout.MANIFEST), original);
        editManifest(root, j -> j.put("write_mode", "rows"));
        assertRefused(root, "write_mode must be batch or kv", "rows");
        Files.write(root.resolve(DatasetLayout.MANIFEST), original);
        assertEquals(20, read(root).count());
    }

    // ------------------------------------------------------------------ item 5: the index is checked

    private static Path indexOf(Path root) throws IOException {
        return root.resolve(JSON.readTree(root.resolve(DatasetLayout.MANIFEST).toFile()).get("index").get("file")
                .asText());
    }

    /** The index rewritten row by row ({@code edit} returns the rows to write), keeping its footer metadata. */
    private static void rewriteIndex(Path index, java.util.function.UnaryOperator<List<Group>> edit)
            throws IOException {
        Configuration conf = new Configuration();
        org.apache.hadoop.fs.Path p = new org.apache.hadoop.fs.Path(index.toUri());
        MessageType schema;
        Map<String, String> meta;
        List<Group> rows = new ArrayList<>();
        try (ParquetFileReader r = ParquetFileReader.open(HadoopInputFile.fromPath(p, conf))) {
            schema = r.getFooter().getFileMetaData().getSchema();
            meta = r.getFooter().getFileMetaData().getKeyValueMetaData();
        }
        try (org.apache.parquet.hadoop.ParquetReader<Group> r = org.apache.parquet.hadoop.ParquetReader.builder(
                new org.apache.parquet.hadoop.example.GroupReadSupport(), p).withConf(conf).build()) {
            for (Group g = r.read(); g != null; g = r.read()) {
                rows.add(g);
            }
        }
        List<Group> out = edit.apply(rows);
        Files.delete(index);
        try (ParquetWriter<Group> w = ExampleParquetWriter.builder(HadoopOutputFile.fromPath(p, conf))
                .withType(schema).withConf(conf).withExtraMetaData(Map.of(
                        io.github.semyonsinchenko.safetensors.dataset.TensorIndexFile.COMMIT_ID_KEY,
                        meta.get(io.github.semyonsinchenko.safetensors.dataset.TensorIndexFile.COMMIT_ID_KEY)))
                .build()) {
            for (Group g : out) {
                w.write(g);
            }
        }
    }

    private long keyCount(Path root, String key) {
        return read(root).where("tensor_key = '" + key + "'").count();
    }

    @Test
    void anIndexThatDropsOrMovesAKeyNeverHidesRows() throws IOException {
        Path root = dataset("index-drop", 100);
        assertEquals(1, keyCount(root, "k5"));
        rewriteIndex(indexOf(root), rows -> rows.stream().filter(g -> !g.getString("tensor_key", 0).equals("k5"))
                .toList());
        assertEquals(1, keyCount(root, "k5"), "a dropped entry: the full scan finds it");
        assertEquals(100, read(root).count());

        Path moved = dataset("index-move", 100);
        List<String> files = new ArrayList<>();
        for (JsonNode s : JSON.readTree(moved.resolve(DatasetLayout.MANIFEST).toFile()).get("shards")) {
            files.add(s.get("shard_path").asText());
        }
        rewriteIndex(indexOf(moved), rows -> rows.stream()
                .map(g -> !g.getString("tensor_key", 0).equals("k5") ? g : relocated(g, files)).toList());
        assertEquals(1, keyCount(moved, "k5"), "an entry pointing at another shard: the full scan finds it");
        assertEquals(List.of("k5", "k6"), read(moved).where("tensor_key in ('k5', 'k6')").select("tensor_key")
                .orderBy("tensor_key").as(org.apache.spark.sql.Encoders.STRING()).collectAsList());
    }

    /** A copy of index row {@code g} whose file_name is another shard of {@code files}. */
    private static Group relocated(Group g, List<String> files) {
        String here = g.getString("file_name", 0);
        String other = files.stream().filter(f -> !f.equals(here)).findFirst().orElseThrow();
        org.apache.parquet.example.data.simple.SimpleGroupFactory f =
                new org.apache.parquet.example.data.simple.SimpleGroupFactory(
                        new MessageType("tensor_index", g.getType().getFields()));
        Group out = f.newGroup().append("tensor_key", g.getString("tensor_key", 0))
                .append("column", g.getString("column", 0)).append("tensor_name", g.getString("tensor_name", 0))
                .append("file_name", other);
        Group shape = out.addGroup("shape");
        Group src = g.getGroup("shape", 0);
        for (int i = 0; i < src.getFieldRepetitionCount("list"); i++) {
            shape.addGroup("list").append("element", src.getGroup("list", i).getInteger("element", 0));
        }
        return out.append("dtype", g.getString("dtype", 0)).append("begin", g.getLong("begin", 0))
                .append("end", g.getLong("end", 0));
    }

    @Test
    void aTruncatedOrCorruptIndexMeansAFullScanNotAParquetError() throws IOException {
        Path root = dataset("index-broken", 100);
        Path index = indexOf(root);
        byte[] whole = Files.readAllBytes(index);
        for (byte[] damaged : List.of(java.util.Arrays.copyOf(whole, whole.length / 2), "garbage".getBytes())) {
            Files.write(index, damaged);
            assertEquals(1, keyCount(root, "k5"));
            assertEquals(3, read(root).where("tensor_key in ('k1', 'k50', 'k99')").count());
        }
        Files.delete(index);
        assertEquals(1, keyCount(root, "k5"), "a missing index too");
    }
}
