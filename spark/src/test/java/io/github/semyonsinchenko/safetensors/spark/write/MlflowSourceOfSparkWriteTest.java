package io.github.semyonsinchenko.safetensors.spark.write;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.github.semyonsinchenko.safetensors.dataset.mlflow.SafetensorsDatasetSource;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import org.apache.hadoop.conf.Configuration;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The MLflow dataset source (dataset module) of a dataset a Spark write produced. */
class MlflowSourceOfSparkWriteTest {
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
            SafetensorsDatasetSource viaSession = SafetensorsDatasetSource.fromPath(out.toString(),
                    spark.sparkContext().hadoopConfiguration());
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
            // A default Hadoop configuration and a file: URI give the same document.
            assertEquals(viaSession.toJson(),
                    SafetensorsDatasetSource.fromPath(out.toUri().toString(), new Configuration()).toJson());
        } finally {
            spark.stop();
        }
    }
}
