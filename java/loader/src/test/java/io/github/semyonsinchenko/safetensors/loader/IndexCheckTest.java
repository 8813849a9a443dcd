package io.github.semyonsinchenko.safetensors.loader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.io.SafetensorsFile;
import io.github.semyonsinchenko.safetensors.io.SafetensorsWriter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Hugging Face {@code model.safetensors.index.json} is checked against the headers of the shards
 * it names before anything is read: every defect is a {@link CheckpointIndexException} naming the
 * index, the tensor and the shards involved (they used to load with a silently wrong set of tensors).
 */
class IndexCheckTest {
    static final String SHARD1 = "model-00001-of-00002.safetensors";
    static final String SHARD2 = "model-00002-of-00002.safetensors";

    @TempDir
    Path tmp;

    Path dir;
    Map<String, byte[]> reference;

    @BeforeEach
    void checkpoint() throws IOException {
        FaultyFileSystem.reset();
        dir = tmp.resolve("ckpt");
        reference = TestCheckpoints.reference(TestCheckpoints.write(dir, 2, 4, 10, 7));
    }

    private static LoaderConfig config() {
        return LoaderConfig.builder().hadoopConf(FaultyFileSystem.conf()).metadataCache(new MetadataCache(0))
                .workerThreads(2).retries(2, Duration.ofMillis(1), Duration.ofMillis(1)).build();
    }

    /** The index HF would write: every tensor of both shards, the real total size. */
    private Map<String, String> weightMap() throws IOException {
        Map<String, String> map = new LinkedHashMap<>();
        for (String shard : List.of(SHARD1, SHARD2)) {
            try (SafetensorsFile f = SafetensorsFile.open(dir.resolve(shard))) {
                for (var t : f) {
                    map.put(t.name(), shard);
                }
            }
        }
        return map;
    }

    private long totalSize() throws IOException {
        long total = 0;
        for (String shard : List.of(SHARD1, SHARD2)) {
            try (SafetensorsFile f = SafetensorsFile.open(dir.resolve(shard))) {
                total += f.header().dataSize();
            }
        }
        return total;
    }

    private Path writeIndex(Map<String, String> map, Long total) throws IOException {
        StringBuilder json = new StringBuilder("{\n");
        if (total != null) {
            json.append("  \"metadata\": {\"total_size\": ").append(total).append("},\n");
        }
        json.append("  \"weight_map\": {");
        String sep = "\n";
        for (var e : map.entrySet()) {
            json.append(sep).append("    \"").append(e.getKey()).append("\": \"").append(e.getValue()).append('"');
            sep = ",\n";
        }
        Path index = dir.resolve("model.safetensors.index.json");
        Files.writeString(index, json.append("\n  }\n}\n").toString());
        return index;
    }

    private CheckpointIndexException refused(Path index) {
        return assertThrows(CheckpointIndexException.class,
                () -> SafetensorsLoader.open(config(), index.toUri().toString()).close());
    }

    private static void assertNames(CheckpointIndexException e, String... parts) {
        assertTrue(e.getMessage().startsWith(e.index() + ": "), e.getMessage());
        assertTrue(e.index().endsWith("model.safetensors.index.json"), e.index());
        for (String p : parts) {
            assertTrue(e.getMessage().contains(p), "\"" + p + "\" in: " + e.getMessage());
        }
    }

    @Test
    void aConsistentIndexLoadsEveryTensorOnce() throws Exception {
        Path index = writeIndex(weightMap(), totalSize());
        try (SafetensorsLoader loader = SafetensorsLoader.open(config(), index.toUri().toString())) {
            List<String> names = TestCheckpoints.loadAndCheck(loader, reference);
            assertEquals(reference.keySet(), new HashSet<>(names));
            assertEquals(reference.size(), names.size());
        }
        // Without "metadata" there is no total to check; the tensors still are.
        Path bare = writeIndex(weightMap(), null);
        try (SafetensorsLoader loader = SafetensorsLoader.open(config(), bare.toUri().toString())) {
            assertEquals(reference.size(), TestCheckpoints.loadAndCheck(loader, reference).size());
        }
    }

    @Test
    void aTensorTheIndexListsButItsShardLacksIsRefused() throws Exception {
        Map<String, String> map = weightMap();
        map.put("lm_head.weight", SHARD1);
        CheckpointIndexException e = refused(writeIndex(map, totalSize()));
        assertEquals(CheckpointIndexException.Rule.NOT_IN_SHARD, e.rule());
        assertEquals("lm_head.weight", e.tensor());
        assertEquals(List.of(SHARD1), e.shards());
        assertNames(e, "tensor \"lm_head.weight\"", SHARD1, "no shard in " + dir.getFileName());
    }

    @Test
    void aTensorMappedToTheWrongShardIsRefusedNamingBoth() throws Exception {
        // Only shard 1 is named, so shard 2 (where the tensor really is) would not even be read.
        Map<String, String> map = new LinkedHashMap<>();
        weightMap().forEach((name, shard) -> map.put(name, SHARD1));
        CheckpointIndexException e = refused(writeIndex(map, totalSize()));
        assertEquals(CheckpointIndexException.Rule.WRONG_SHARD, e.rule());
        assertTrue(e.tensor().startsWith("layer1."), e.tensor());
        assertEquals(List.of(SHARD1, SHARD2), e.shards());
        assertNames(e, "tensor \"" + e.tensor() + "\"", "lists it in " + SHARD1, "it is in " + SHARD2);
    }

    @Test
    void aTensorInTwoShardsIsRefusedNamingBoth() throws Exception {
        // Shard 2 also holds shard 1's first tensor.
        String dup = "layer0.0.weight";
        SafetensorsWriter w = new SafetensorsWriter();
        try (SafetensorsFile one = SafetensorsFile.open(dir.resolve(SHARD1));
                SafetensorsFile two = SafetensorsFile.open(dir.resolve(SHARD2))) {
            for (var t : two) {
                w.add(t.name(), t.dtype(), t.shape(), t.data());
            }
            var d = one.tensor(dup);
            w.add(dup, d.dtype(), d.shape(), d.data());
            w.write(dir.resolve("rewritten.safetensors"));
        }
        Files.move(dir.resolve("rewritten.safetensors"), dir.resolve(SHARD2),
                java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        CheckpointIndexException e = refused(writeIndex(weightMap(), totalSize()));
        assertEquals(CheckpointIndexException.Rule.IN_TWO_SHARDS, e.rule());
        assertEquals(dup, e.tensor());
        assertEquals(List.of(SHARD1, SHARD2), e.shards());
        assertNames(e, "tensor \"" + dup + "\"", SHARD1, SHARD2);
    }

    @Test
    void aDirectoryOrGlobWithTwoCopiesOfATensorIsRefusedNamingBothFiles() throws Exception {
        // No index: a directory (or a glob) that takes in a second copy of a shard.
        Path copies = Files.createDirectories(tmp.resolve("copies"));
        Files.copy(dir.resolve(SHARD1), copies.resolve("a.safetensors"));
        Files.copy(dir.resolve(SHARD1), copies.resolve("b.safetensors"));
        String first;
        try (SafetensorsFile f = SafetensorsFile.open(copies.resolve("a.safetensors"))) {
            first = f.iterator().next().name();
        }
        for (String input : List.of(copies.toUri().toString(), copies.toUri() + "*.safetensors")) {
            TensorInTwoFilesException e = assertThrows(TensorInTwoFilesException.class,
                    () -> SafetensorsLoader.open(config(), input).close(), input);
            assertEquals(first, e.tensor());
            assertEquals(2, e.files().size());
            assertTrue(e.files().get(0).endsWith("a.safetensors") && e.files().get(1).endsWith("b.safetensors"),
                    e.files().toString());
            assertTrue(e.getMessage().startsWith("tensor \"" + first + "\" is in "), e.getMessage());
        }
        // One copy alone loads.
        try (SafetensorsLoader loader = SafetensorsLoader.open(config(), copies.resolve("a.safetensors").toUri()
                .toString())) {
            assertEquals(1, loader.files().size());
        }
    }

    @Test
    void aShardTensorTheIndexDoesNotListIsRefused() throws Exception {
        Map<String, String> map = weightMap();
        map.remove("layer1.2.weight");
        CheckpointIndexException e = refused(writeIndex(map, totalSize()));
        assertEquals(CheckpointIndexException.Rule.NOT_LISTED, e.rule());
        assertEquals("layer1.2.weight", e.tensor());
        assertEquals(List.of(SHARD2), e.shards());
        assertNames(e, "tensor \"layer1.2.weight\"", SHARD2, "does not list it");
    }

    @Test
    void aWrongTotalSizeIsRefused() throws Exception {
        long real = totalSize();
        CheckpointIndexException e = refused(writeIndex(weightMap(), real + 32));
        assertEquals(CheckpointIndexException.Rule.TOTAL_SIZE, e.rule());
        assertNull(e.tensor());
        assertEquals(List.of(SHARD1, SHARD2), e.shards());
        assertNames(e, "total_size " + (real + 32), real + " bytes", SHARD1, SHARD2);
    }

    @Test
    void aTensorListedTwiceIsRefusedNamingBothShards() throws Exception {
        Path index = writeIndex(weightMap(), totalSize());
        String json = Files.readString(index).replace("\"layer1.1.weight\": \"" + SHARD2 + "\"",
                "\"layer1.1.weight\": \"" + SHARD2 + "\",\n    \"layer1.1.weight\": \"" + SHARD1 + "\"");
        Files.writeString(index, json);
        int line = lineOf(json, "\"layer1.1.weight\": \"" + SHARD1);
        CheckpointIndexException e = refused(index);
        assertEquals(CheckpointIndexException.Rule.LISTED_TWICE, e.rule());
        assertEquals("layer1.1.weight", e.tensor());
        assertEquals(List.of(SHARD2, SHARD1), e.shards());
        assertNames(e, "tensor \"layer1.1.weight\"", SHARD1, SHARD2, "line " + line + ", column 5");
    }

    @Test
    void malformedJsonNamesTheFileLineAndColumn() throws Exception {
        Path index = writeIndex(weightMap(), totalSize());
        String json = Files.readString(index);
        Files.writeString(index, json.substring(0, json.indexOf("layer1.1.weight") + 5));
        CheckpointIndexException e = refused(index);
        assertEquals(CheckpointIndexException.Rule.MALFORMED, e.rule());
        assertNames(e, "invalid JSON at line " + lineOf(json, "layer1.1.weight") + ", column ",
                "ends inside an unclosed object, array or string");
        Files.writeString(index, "{\"weight_map\": {\"a\": \"" + SHARD1 + "\",}}");
        e = refused(index);
        assertNames(e, "invalid JSON at line 1, column ", "(a trailing comma?)");
        Files.writeString(index, "{\"weight_map\": {\"a\": 3}}");
        e = refused(index);
        assertEquals(CheckpointIndexException.Rule.NOT_AN_INDEX, e.rule());
        assertNames(e, "weight_map[\"a\"] must be a shard file name", "line 1, column ");
    }

    /** The 1-based line of {@code json} where {@code text} first occurs. */
    private static int lineOf(String json, String text) {
        return (int) json.substring(0, json.indexOf(text)).chars().filter(c -> c == '\n').count() + 1;
    }
}
