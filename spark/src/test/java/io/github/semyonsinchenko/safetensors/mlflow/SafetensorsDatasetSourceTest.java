package io.github.semyonsinchenko.safetensors.mlflow;

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
import java.security.MessageDigest;
import java.util.HexFormat;
import org.apache.hadoop.conf.Configuration;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The MLflow dataset source of a dataset written by the connector, and of the original connector's manifest. */
class SafetensorsDatasetSourceTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path tmp;

    @Test
    void sourceOfADatasetWrittenBySpark() throws Exception {
        Path out = tmp.resolve("ds");
        SparkSession spark = SparkSession.builder().master("local[2]").appName("mlflow-source-test")
                .config("spark.ui.enabled", "false").getOrCreate();
        try {
            spark.range(0, 10, 1, 2).selectExpr("concat('k', id) key", "array(cast(id as float), 1f) v")
                    .write().format("safetensors").option("name_col", "key").save(out.toString());
            SafetensorsDatasetSource viaSession = SafetensorsDatasetSource.fromPath(out.toString());
            JsonNode json = JSON.readTree(viaSession.toJson());
            JsonNode manifest = JSON.readTree(out.resolve("dataset_manifest.json").toFile());
            String root = "file://" + out.toAbsolutePath();
            assertEquals(root + "/dataset_manifest.json", json.get("uri").asText());
            assertEquals(root, json.get("dataset_uri").asText());
            assertEquals(10, json.get("total_samples").asLong());
            assertEquals(manifest.get("total_bytes").asLong(), json.get("total_bytes").asLong());
            assertEquals(manifest.get("shards").size(), json.get("num_shards").asInt());
            assertEquals(manifest.get("shards").size(), json.get("shards").size());
            long samples = 0;
            for (JsonNode s : json.get("shards")) {
                assertTrue(Files.isRegularFile(out.resolve(s.get("path").asText())), s.toString());
                samples += s.get("samples_count").asLong();
            }
            assertEquals(10, samples);
            assertEquals(manifest.get("schema"), json.get("schema"));
            byte[] bytes = Files.readAllBytes(out.resolve("dataset_manifest.json"));
            assertEquals(HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes)).substring(0, 16),
                    json.get("digest").asText());
            // An explicit Hadoop configuration and a file: URI give the same document.
            assertEquals(viaSession.toJson(),
                    SafetensorsDatasetSource.fromPath(out.toUri().toString(), new Configuration()).toJson());
        } finally {
            spark.stop();
        }
    }

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
