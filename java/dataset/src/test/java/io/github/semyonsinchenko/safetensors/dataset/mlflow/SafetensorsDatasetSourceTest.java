package io.github.semyonsinchenko.safetensors.dataset.mlflow;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The MLflow dataset source of the original connector's manifest and of broken or missing ones (the
 * Spark connector's tests check the source of a dataset a Spark write produced).
 */
class SafetensorsDatasetSourceTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path tmp;

    @Test
    void originalConnectorManifestFieldsAreAccepted() throws Exception {
        Files.writeString(tmp.resolve("dataset_manifest.json"), """
                {"format_version": "1.0", "safetensors_version": "1.0", "total_samples": 7, "total_bytes": 300,
                 "shards": [{"shard_path": "part-00000-a.safetensors", "samples_count": 4, "bytes": 100},
                            {"shard_path": "part-00001-b.safetensors", "samples_count": 3, "bytes": 200}],
                 "schema": {"x": {"dtype": "F32", "shape": [2]}}}
                """, StandardCharsets.UTF_8);
        JsonNode json = JSON.readTree(SafetensorsDatasetSource.fromPath(tmp.toString(), new Configuration()).toJson());
        assertEquals("1.0", json.get("format_version").asText());
        assertEquals(2, json.get("num_shards").asInt());
        assertEquals("part-00001-b.safetensors", json.get("shards").get(1).get("path").asText());
        assertEquals(3, json.get("shards").get(1).get("samples_count").asLong());
        assertEquals("F32", json.get("schema").get("x").get("dtype").asText());
    }

    @Test
    void missingManifestIsAFileNotFoundNamingIt() {
        FileNotFoundException e = assertThrows(FileNotFoundException.class,
                () -> SafetensorsDatasetSource.fromPath(tmp.toString(), new Configuration()));
        assertTrue(e.getMessage().contains("dataset_manifest.json not found at"), e.getMessage());
    }

    @Test
    void brokenManifestNamesTheFileAndTheField() throws Exception {
        Files.writeString(tmp.resolve("dataset_manifest.json"),
                "{\"format_version\": \"1\", \"safetensors_version\": \"0.8\", \"shards\": []}");
        IOException e = assertThrows(IOException.class,
                () -> SafetensorsDatasetSource.fromPath(tmp.toString(), new Configuration()));
        assertTrue(e.getMessage().contains("dataset_manifest.json") && e.getMessage().contains("total_samples"),
                e.getMessage());
    }
}
