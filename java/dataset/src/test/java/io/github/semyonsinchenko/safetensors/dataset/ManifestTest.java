package io.github.semyonsinchenko.safetensors.dataset;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.github.semyonsinchenko.safetensors.io.Safetensors;
import java.io.IOException;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ManifestTest {
    private static Manifest parse(String json) throws DatasetException, IOException {
        return Manifest.fromJson(new ObjectMapper().readTree(json), "m.json");
    }

    @Test
    void aManifestWithoutSchemaOrVersionParses() throws IOException {
        Manifest m = parse("{\"write_mode\": \"kv\", \"shards\": [{\"file\": \"a.safetensors\", \"samples_count\": 3,"
                + " \"bytes\": 10}]}");
        assertTrue(m.schema().isEmpty());
        assertEquals(0, m.version());
        assertNull(m.commitId());
        assertEquals(3, m.totalSamples());
        assertEquals(List.of("a.safetensors"), List.copyOf(m.files()));
    }

    @Test
    void theOriginalConnectorsShardPathIsRead() throws IOException {
        Manifest m = parse("{\"format_version\": \"1.0\", \"safetensors_version\": \"1.0\", \"total_samples\": 2,"
                + " \"total_bytes\": 5, \"shards\": [{\"shard_path\": \"part-00000-x.safetensors\","
                + " \"samples_count\": 2, \"bytes\": 5}], \"schema\": {\"t\": {\"dtype\": \"F32\", \"shape\": [2]}}}");
        assertEquals("part-00000-x.safetensors", m.shards().get(0).file());
        assertEquals("F32 [2]", m.schema().get("t").toString());
    }

    @Test
    void aShardWithoutANameIsAnErrorNamingTheFile() {
        DatasetException e = assertThrows(DatasetException.class, () -> parse("{\"shards\": [{\"bytes\": 1}]}"));
        assertEquals(DatasetRule.MANIFEST_INVALID, e.rule());
        assertTrue(e.getMessage().startsWith("m.json: the manifest is not a valid dataset manifest"), e.getMessage());
    }

    @TempDir
    java.nio.file.Path tmp;

    /**
     * A batch manifest of an earlier version of the connector (no mode options of its own), completed
     * from its first shard's metadata {@code shardMetadata}.
     */
    private Manifest completedFromShard(Map<String, String> shardMetadata) throws IOException {
        java.nio.file.Path shard = tmp.resolve("part-00000.safetensors");
        Safetensors.saveFile(Map.of(), shardMetadata, shard);
        Manifest old = new Manifest(new Layout(Layout.BATCH, null, null, null, null, null), Map.of(),
                List.of(new Shard(shard.getFileName().toString(), 0, Files.size(shard))), null, 0, null, "1.0", "1.0");
        Path root = new Path(tmp.toUri());
        FileSystem fs = root.getFileSystem(HadoopConfs.of(Map.of()));
        return Manifest.withShardOptions(fs, root, old);
    }

    @Test
    void anEarlierManifestTakesItsModeOptionsFromTheFirstShard() throws IOException {
        Layout layout = completedFromShard(Map.of(Manifest.META_BATCH_SIZE, "4", Manifest.META_PACK_BATCHES, "TRUE",
                Manifest.META_TAIL_STRATEGY, "pad")).layout();
        assertEquals(4, layout.batchSize());
        assertEquals(Boolean.TRUE, layout.packBatches());
        assertEquals("pad", layout.tailStrategy());
        assertNull(completedFromShard(Map.of(Manifest.META_BATCH_SIZE, "4")).layout().packBatches());
    }

    /** A shard's metadata is read as strictly as options: "yes" is not a boolean, "four" not a size. */
    @Test
    void aShardsModeOptionsAreCheckedNotGuessed() {
        for (Map<String, String> bad : List.of(Map.of(Manifest.META_BATCH_SIZE, "4", Manifest.META_PACK_BATCHES, "yes"),
                Map.of(Manifest.META_BATCH_SIZE, "four"), Map.of(Manifest.META_BATCH_SIZE, "0"))) {
            DatasetException e = assertThrows(DatasetException.class, () -> completedFromShard(bad));
            assertEquals(DatasetRule.MANIFEST_INVALID, e.rule());
            String value = bad.containsKey(Manifest.META_PACK_BATCHES) ? "yes" : bad.get(Manifest.META_BATCH_SIZE);
            assertTrue(e.getMessage().contains("part-00000.safetensors") && e.getMessage().contains("'" + value + "'"),
                    e.getMessage());
        }
    }
}
