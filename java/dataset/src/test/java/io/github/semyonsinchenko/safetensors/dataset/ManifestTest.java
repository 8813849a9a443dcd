package io.github.semyonsinchenko.safetensors.dataset;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.Test;

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
}
