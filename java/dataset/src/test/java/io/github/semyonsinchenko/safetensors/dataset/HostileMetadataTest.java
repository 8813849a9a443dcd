package io.github.semyonsinchenko.safetensors.dataset;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.github.semyonsinchenko.safetensors.dataset.DatasetCommit.Operation;
import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.format.Header;
import io.github.semyonsinchenko.safetensors.io.SafetensorsWriter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Metadata is checked, never trusted: paths, duplicate shards and write modes in the manifest, the
 * shards' own metadata against the manifest, and the index against the manifest and its shards.
 */
class HostileMetadataTest {
    @TempDir
    java.nio.file.Path tmp;
    Configuration conf;
    Path root;
    FileSystem fs;
    KvWriter writer;

    @BeforeEach
    void setUp() throws IOException {
        conf = HadoopConfs.of(Map.of());
        root = new Path(tmp.resolve("ds").toUri());
        fs = root.getFileSystem(conf);
        writer = new KvWriter(conf, root, CommitPolicy.DEFAULT, true);
    }

    static Stream<JsonNode> paths() {
        return Vectors.cases("shard_paths.json", "cases").stream();
    }

    @ParameterizedTest
    @MethodSource("paths")
    void pathsAreNormalisedOrRefusedAsTheVectorsSay(JsonNode c) {
        String path = c.get("path").asText();
        String normalised = Vectors.text(c, "normalised");
        if (normalised == null) {
            DatasetException e = assertThrows(DatasetException.class, () -> DatasetLayout.relativePath(path, "m"));
            assertEquals(DatasetRule.PATH_OUTSIDE_ROOT, e.rule());
            assertTrue(e.getMessage().contains(path), e.getMessage());
        } else {
            assertEquals(normalised, assertDoesNotThrowPath(path));
        }
    }

    private static String assertDoesNotThrowPath(String path) {
        try {
            return DatasetLayout.relativePath(path, "m");
        } catch (DatasetException e) {
            throw new AssertionError(e);
        }
    }

    static Stream<Arguments> manifests() throws IOException {
        List<Arguments> out = new ArrayList<>();
        for (String line : Files.readAllLines(Vectors.dir().resolve("manifests/expected.tsv"))) {
            if (!line.isBlank() && !line.startsWith("#")) {
                String[] f = line.split("\t");
                out.add(Arguments.of(f[0], f[2]));
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0}: {1}")
    @MethodSource("manifests")
    void sharedManifestsGetTheReaderVerdictTheyList(String file, String verdict) throws IOException {
        byte[] bytes = Files.readAllBytes(Vectors.dir().resolve("manifests").resolve(file));
        if (verdict.equals("ok")) {
            Manifest m = Manifest.parse(bytes, file);
            for (Shard s : m.shards()) {
                assertEquals(s.file(), DatasetLayout.relativePath(s.file(), file), "kept normalised");
            }
        } else {
            DatasetException e = assertThrows(DatasetException.class, () -> Manifest.parse(bytes, file));
            assertEquals(DatasetRule.valueOf(verdict), e.rule(), e.getMessage());
            assertTrue(e.getMessage().startsWith(file + ": "), e.getMessage());
        }
    }

    /** The manifest as JSON, edited by {@code edit}, written back (both the pointer and its history entry). */
    private void editManifest(java.util.function.Consumer<ObjectNode> edit) throws IOException {
        Manifest m = Manifest.read(fs, root);
        ObjectNode json = (ObjectNode) Vectors.JSON.readTree(m.toBytes());
        edit.accept(json);
        byte[] bytes = Vectors.JSON.writeValueAsBytes(json);
        KvWriter.overwrite(fs, new Path(root, DatasetLayout.MANIFEST), bytes);
        KvWriter.overwrite(fs, DatasetVersions.history(root, m.version()), bytes);
    }

    @Test
    void vacuumComparesNormalisedNamesAndKeepsAShardTheManifestSpellsDifferently() throws IOException {
        writer.commit(Operation.CREATE, List.of(DatasetCommitTest.rows("k", 100)));
        editManifest(j -> j.withArray("shards").forEach(s -> ((ObjectNode) s).put("shard_path",
                "./" + s.get("shard_path").asText())));
        try (Stream<java.nio.file.Path> s = Files.walk(tmp.resolve("ds"))) {
            for (java.nio.file.Path p : s.toList()) {
                Files.setLastModifiedTime(p, FileTime.fromMillis(System.currentTimeMillis() - 86_400_000L * 3));
            }
        }
        Vacuum.Report r = Vacuum.run(conf, root, CommitPolicy.parse(Map.of("orphan_age", "0s", "retain_versions",
                "0")), false);
        assertTrue(r.deletions().stream().noneMatch(d -> d.reason() == Vacuum.Reason.ORPHAN_SHARD), r.toString());
        assertEquals(100, KvWriter.read(conf, root).size());
        // And the next commit's cleanup (orphans count at once) keeps it too.
        writer = new KvWriter(conf, root, CommitPolicy.parse(Map.of("orphan_age", "0s", "retain_versions", "0")),
                true);
        writer.commit(Operation.APPEND, List.of(DatasetCommitTest.rows("m", 1)));
        assertEquals(101, KvWriter.read(conf, root).size());
    }

    /** A one-shard kv dataset whose shard records {@code separator} and holds {@code x} of {@code dtype}. */
    private void datasetWithShard(String separator, Dtype dtype) throws IOException {
        writer.commit(Operation.CREATE, List.of(DatasetCommitTest.rows("k", 2)));
        Manifest m = Manifest.read(fs, root);
        SafetensorsWriter w = new SafetensorsWriter().metadata(Manifest.META_WRITE_MODE, Layout.KV)
                .metadata(Manifest.META_KV_SEPARATOR, separator);
        for (int i = 0; i < 2; i++) {
            w.add("k" + i + separator + "x", dtype, new long[] {2}, new byte[(int) dtype.storageBytes(2)]);
        }
        w.write(java.nio.file.Path.of(new Path(root, m.shards().get(0).file()).toUri()));
    }

    private Header firstShardHeader() throws IOException {
        Manifest m = Manifest.read(fs, root);
        Path p = new Path(root, m.shards().get(0).file());
        try (var in = fs.open(p)) {
            return Header.read(in, fs.getFileStatus(p).getLen(), p.toString());
        }
    }

    @Test
    void aShardWhoseSeparatorDisagreesWithTheManifestIsALayoutMismatch() throws IOException {
        datasetWithShard("::", Dtype.F32);
        ShardCheck check = ShardCheck.of(Manifest.read(fs, root));
        DatasetException e = assertThrows(DatasetException.class, () -> check.check(firstShardHeader(), "s"));
        assertEquals(DatasetRule.LAYOUT_MISMATCH, e.rule());
        assertTrue(e.getMessage().contains("'::'") && e.getMessage().contains("'__'"), e.getMessage());
    }

    @Test
    void aShardWhoseDtypeOrColumnsDisagreeWithTheManifestIsASchemaMismatch() throws IOException {
        datasetWithShard("__", Dtype.F16);
        ShardCheck check = ShardCheck.of(Manifest.read(fs, root));
        DatasetException e = assertThrows(DatasetException.class, () -> check.check(firstShardHeader(), "s"));
        assertEquals(DatasetRule.SCHEMA_MISMATCH, e.rule());
        assertTrue(e.getMessage().contains("F16") && e.getMessage().contains("F32"), e.getMessage());

        ShardCheck otherColumns = new ShardCheck(Layout.kv("key", "__"), Map.of("y", new ColumnSchema("F16", null)));
        e = assertThrows(DatasetException.class, () -> otherColumns.check(firstShardHeader(), "s"));
        assertTrue(e.getMessage().contains("belongs to none of the manifest's columns [y]"), e.getMessage());
        ShardCheck batch = new ShardCheck(Layout.batch(4, "write", false), Map.of("x", new ColumnSchema("F16",
                null)));
        e = assertThrows(DatasetException.class, () -> batch.check(firstShardHeader(), "s"));
        assertEquals(DatasetRule.LAYOUT_MISMATCH, e.rule());
    }

    @Test
    void aShardThatAgreesPasses() throws IOException {
        writer.commit(Operation.CREATE, List.of(DatasetCommitTest.rows("k", 3)));
        ShardCheck.of(Manifest.read(fs, root)).check(firstShardHeader(), "s");
        assertNull(ShardCheck.of(Manifest.parse(("{\"shards\": []}").getBytes(), "original")));
    }

    // ------------------------------------------------------------------ the index

    /** Two shards: k0..k4 and m0..m4, with an index. */
    private Manifest indexedDataset() throws IOException {
        writer.commit(Operation.CREATE, List.of(DatasetCommitTest.rows("k", 5), DatasetCommitTest.rows("m", 5)));
        return Manifest.read(fs, root);
    }

    @Test
    void aCheckedIndexPicksExactlyTheShardsHoldingTheKeys() throws IOException {
        Manifest m = indexedDataset();
        assertEquals(Set.of(m.shards().get(1).file()), TensorIndexFile.filesHoldingKeys(fs, conf, root, m,
                Set.of("m3")));
        assertEquals(Set.of(), TensorIndexFile.filesHoldingKeys(fs, conf, root, m, Set.of("absent")));
        assertNotNull(m.index().sha256());
        assertEquals(10, m.index().rows());
    }

    /** The index file rewritten with {@code rows} (its footer keeps the commit id). */
    private void rewriteIndex(Manifest m, java.util.function.UnaryOperator<List<IndexEntry>> change)
            throws IOException {
        List<IndexEntry> entries = change.apply(new ArrayList<>(TensorIndexFile.of(fs, conf, root, m)));
        Manifest.IndexRef written = TensorIndexFile.write(fs, conf, root, entries, m.commitId(), m.version(),
                CommitPolicy.DEFAULT);
        fs.delete(new Path(root, m.indexFile()), false);
        fs.rename(new Path(root, written.file()), new Path(root, m.indexFile()));
    }

    @Test
    void anIndexWithADroppedEntryIsNotUsed() throws IOException {
        Manifest m = indexedDataset();
        rewriteIndex(m, l -> {
            l.removeIf(e -> e.tensorKey().equals("k3"));
            return l;
        });
        assertNull(TensorIndexFile.filesHoldingKeys(fs, conf, root, m, Set.of("k3")), "its hash no longer matches");
        DatasetException e = assertThrows(DatasetException.class, () -> TensorIndexFile.scanChecked(fs, conf, root, m,
                List.of("tensor_key"), g -> {}));
        assertEquals(DatasetRule.INDEX_MISMATCH, e.rule());
        assertTrue(e.getMessage().contains("SHA-256"), e.getMessage());
        assertEquals(10, TensorIndexFile.of(fs, conf, root, m).size(), "rebuilt from the shards");
    }

    @Test
    void anIndexThatMovesAKeyToAnotherShardIsNotUsedEvenWithoutAHash() throws IOException {
        Manifest m = indexedDataset();
        String other = m.shards().get(1).file();
        rewriteIndex(m, l -> l.stream().map(e -> e.tensorKey().equals("k3") ? new IndexEntry(e.tensorKey(), e.column(),
                e.tensorName(), other, e.shape(), e.dtype(), e.begin(), e.end()) : e).toList());
        // A manifest of an earlier version records no hash or row count: the shards' headers catch it.
        Manifest noHash = new Manifest(m.layout(), m.schema(), m.shards(), new Manifest.IndexRef(m.indexFile(),
                m.commitId(), null, -1), m.version(), m.commitId(), m.formatVersion(), m.safetensorsVersion());
        assertNull(TensorIndexFile.filesHoldingKeys(fs, conf, root, noHash, Set.of("k3")));
        assertEquals(Set.of(other), TensorIndexFile.filesHoldingKeys(fs, conf, root, noHash, Set.of("m1")),
                "keys it places right are still found");
    }

    @Test
    void aTruncatedOrCorruptIndexIsNotUsedAndNeverARawParquetException() throws IOException {
        Manifest m = indexedDataset();
        Path index = new Path(root, m.indexFile());
        byte[] whole;
        try (var in = fs.open(index)) {
            whole = in.readAllBytes();
        }
        Manifest noHash = new Manifest(m.layout(), m.schema(), m.shards(), new Manifest.IndexRef(m.indexFile(),
                m.commitId(), null, -1), m.version(), m.commitId(), m.formatVersion(), m.safetensorsVersion());
        for (byte[] damaged : List.of(java.util.Arrays.copyOf(whole, whole.length / 2), new byte[100],
                "not parquet".getBytes())) {
            KvWriter.overwrite(fs, index, damaged);
            for (Manifest version : List.of(m, noHash)) {
                assertNull(TensorIndexFile.filesHoldingKeys(fs, conf, root, version, Set.of("k1")));
                DatasetException e = assertThrows(DatasetException.class, () -> TensorIndexFile.scanChecked(fs, conf,
                        root, version, List.of("tensor_key"), g -> {}));
                assertEquals(DatasetRule.INDEX_MISMATCH, e.rule());
                assertEquals(10, TensorIndexFile.of(fs, conf, root, version).size());
            }
        }
        // An append on top of a damaged index rebuilds it from the shards: nothing is lost.
        writer.commit(Operation.APPEND, List.of(DatasetCommitTest.rows("z", 2)));
        Manifest after = Manifest.read(fs, root);
        assertEquals(12, TensorIndexFile.of(fs, conf, root, after).size());
        assertEquals(Set.of(after.shards().get(0).file()), TensorIndexFile.filesHoldingKeys(fs, conf, root, after,
                Set.of("k1")));
    }

    @Test
    void anIndexNamingAFileThatIsNoShardIsNotUsed() throws IOException {
        Manifest m = indexedDataset();
        rewriteIndex(m, l -> l.stream().map(e -> new IndexEntry(e.tensorKey(), e.column(), e.tensorName(),
                "../elsewhere.safetensors", e.shape(), e.dtype(), e.begin(), e.end())).toList());
        Manifest noHash = new Manifest(m.layout(), m.schema(), m.shards(), new Manifest.IndexRef(m.indexFile(),
                m.commitId(), null, -1), m.version(), m.commitId(), m.formatVersion(), m.safetensorsVersion());
        DatasetException e = assertThrows(DatasetException.class, () -> TensorIndexFile.scanChecked(fs, conf, root,
                noHash, List.of("tensor_key"), g -> {}));
        assertTrue(e.getMessage().contains("not a shard of version 1"), e.getMessage());
    }
}
