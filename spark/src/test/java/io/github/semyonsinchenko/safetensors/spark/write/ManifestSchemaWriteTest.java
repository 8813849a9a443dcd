package io.github.semyonsinchenko.safetensors.spark.write;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.networknt.schema.Error;
import com.networknt.schema.InputFormat;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import io.github.semyonsinchenko.safetensors.dataset.DatasetLayout;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The manifests real Spark writes produce, and every history entry beside them, validate against
 * {@code format/dataset_manifest.schema.json}: batch (plain, packed, padded), kv (with the index,
 * ragged shapes), appends and overwrites, and a write of an empty DataFrame.
 */
class ManifestSchemaWriteTest {
    static SparkSession spark;
    static Schema schema;

    @TempDir
    static Path tmp;

    @BeforeAll
    static void start() throws IOException {
        spark = SparkSession.builder().master("local[2]").appName("safetensors-manifest-schema")
                .config("spark.ui.enabled", "false")
                .config("spark.sql.shuffle.partitions", "2")
                .getOrCreate();
        Path root = Path.of(System.getProperty("safetensors.repo.root", "..")).toAbsolutePath().normalize();
        schema = SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12).getSchema(
                Files.readString(root.resolve("format/dataset_manifest.schema.json"), StandardCharsets.UTF_8),
                InputFormat.JSON);
    }

    @AfterAll
    static void stop() {
        spark.stop();
    }

    static Dataset<Row> rows(int n) {
        return spark.range(0, n, 1, 2).selectExpr("concat('k', id) as key",
                "transform(sequence(0, 2), i -> cast(id * 10 + i as float)) as vec",
                "array(cast(id as long)) as label",
                "transform(sequence(0, cast(id % 3 as int)), i -> cast(i as double)) as ragged");
    }

    /** The manifest and every history entry of the dataset at root; each must validate. */
    static int validate(Path root) throws IOException {
        List<Path> manifests = new ArrayList<>(List.of(root.resolve(DatasetLayout.MANIFEST)));
        try (Stream<Path> s = Files.list(root.resolve(DatasetLayout.HISTORY))) {
            s.filter(p -> DatasetLayout.historyVersion(p.getFileName().toString()).isPresent())
                    .forEach(manifests::add);
        }
        for (Path m : manifests) {
            String json = Files.readString(m, StandardCharsets.UTF_8);
            List<Error> errors = schema.validate(json, InputFormat.JSON);
            assertTrue(errors.isEmpty(), () -> m + ": " + errors + "\n" + json);
        }
        return manifests.size();
    }

    @Test
    void batchWritesValidate() throws IOException {
        String plain = tmp.resolve("batch").toString();
        rows(10).select("vec", "label").write().format("safetensors").option("batch_size", "4").save(plain);
        rows(6).select("vec", "label").write().format("safetensors").mode("append").option("batch_size", "4")
                .save(plain);
        assertEquals(3, validate(Path.of(plain)), "manifest and versions 1, 2");

        String packed = tmp.resolve("packed").toString();
        rows(10).select("vec").write().format("safetensors").option("batch_size", "3")
                .option("tail_strategy", "pad").option("pack_batches", "true").option("generate_index", "true")
                .save(packed);
        assertEquals(2, validate(Path.of(packed)), "manifest and version 1");
    }

    @Test
    void kvWritesValidate() throws IOException {
        String kv = tmp.resolve("kv").toString();
        rows(9).write().format("safetensors").option("name_col", "key").option("generate_index", "true").save(kv);
        rows(9).selectExpr("concat(key, '-b') as key", "vec", "label", "ragged").write().format("safetensors")
                .mode("append").option("name_col", "key").save(kv);
        rows(4).write().format("safetensors").mode("overwrite").option("name_col", "key")
                .option("kv_separator", "::").save(kv);
        assertEquals(4, validate(Path.of(kv)), "manifest and versions 1-3 (a history entry stays until orphan_age)");
    }

    @Test
    void aWriteOfAnEmptyDataFrameValidates() throws IOException {
        String empty = tmp.resolve("empty").toString();
        rows(0).write().format("safetensors").option("name_col", "key").save(empty);
        assertEquals(2, validate(Path.of(empty)), "manifest and version 1");
    }
}
