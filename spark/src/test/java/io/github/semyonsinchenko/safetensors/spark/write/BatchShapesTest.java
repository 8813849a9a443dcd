package io.github.semyonsinchenko.safetensors.spark.write;

import static io.github.semyonsinchenko.safetensors.spark.write.WriteTestSupport.manifest;
import static io.github.semyonsinchenko.safetensors.spark.write.WriteTestSupport.shards;
import static io.github.semyonsinchenko.safetensors.spark.write.WriteTestSupport.tensorsByFile;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.github.semyonsinchenko.safetensors.SafetensorsExtensions;
import io.github.semyonsinchenko.safetensors.spark.write.WriteTestSupport.Read;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Batch mode with rows whose shapes differ within a column (the original connector's suite,
 * test_skewed_data_distribution): rows of each shape are batched apart, every file is a valid
 * safetensors file whose tensors hold rows of one shape, and every row is written exactly once.
 */
class BatchShapesTest {
    static SparkSession spark;

    @TempDir
    Path tmp;

    @BeforeAll
    static void start() {
        spark = SparkSession.builder().master("local[2]").appName("safetensors-batch-shapes-test")
                .config("spark.ui.enabled", "false")
                .config("spark.sql.extensions", SafetensorsExtensions.class.getName())
                .getOrCreate();
    }

    @AfterAll
    static void stop() {
        spark.stop();
    }

    /**
     * The original's case: 10 rows of 10 floats and 100 rows of 1000, shapes interleaved in every
     * partition; each element of row {@code id} is {@code id}.
     */
    static Dataset<Row> skewed() {
        return spark.range(0, 110, 1, 3).selectExpr("id",
                "array_repeat(cast(id as float), if(id % 11 = 0, 10, 1000)) as vec");
    }

    /** Row id -> its length, from a read with unbatch=true; fails on a row read twice or with mixed values. */
    static Map<Integer, Integer> readBack(Path out) {
        Map<Integer, Integer> rows = new TreeMap<>();
        for (Row r : spark.read().format("safetensors").option("inferSchema", "true")
                .option("unbatch", "true").load(out.toString())
                .selectExpr("st_to_array(vec) as v").collectAsList()) {
            List<Float> v = r.getList(0);
            int id = Math.round(v.get(0));
            assertTrue(v.stream().allMatch(x -> x == id), "row " + id + " mixes values of several rows");
            assertEquals(null, rows.put(id, v.size()), "row " + id + " read twice");
        }
        return rows;
    }

    static Map<Integer, Integer> expected() {
        Map<Integer, Integer> out = new TreeMap<>();
        for (int id = 0; id < 110; id++) {
            out.put(id, id % 11 == 0 ? 10 : 1000);
        }
        return out;
    }

    @Test
    void rowsOfEachShapeAreBatchedApart() throws Exception {
        Path out = tmp.resolve("skewed");
        skewed().select("vec").write().format("safetensors").option("batch_size", "10")
                .option("tail_strategy", "write").save(out.toString());
        JsonNode m = manifest(out);
        assertEquals(110, m.get("total_samples").asLong());
        assertEquals("F32", m.get("schema").get("vec").get("dtype").asText());
        assertFalse(m.get("schema").get("vec").has("shape"), "shapes vary: no per-sample shape");
        // Every file is valid and holds one batch of one shape: [rows, 10] or [rows, 1000].
        Map<String, Read> tensors = tensorsByFile(out);
        assertEquals(shards(out).size(), tensors.size());
        long rows = 0;
        for (Read r : tensors.values()) {
            assertEquals(2, r.shape().length);
            assertTrue(r.shape()[1] == 10 || r.shape()[1] == 1000, java.util.Arrays.toString(r.shape()));
            assertTrue(r.shape()[0] >= 1 && r.shape()[0] <= 10, java.util.Arrays.toString(r.shape()));
            rows += r.shape()[0];
        }
        assertEquals(110, rows);
        assertEquals(expected(), readBack(out));
    }

    @Test
    void packedPaddedTailsOfEveryShapeEndTheirFiles() throws Exception {
        Path out = tmp.resolve("packed-pad");
        skewed().select("vec").write().format("safetensors").option("batch_size", "4")
                .option("tail_strategy", "pad").option("pack_batches", "true").save(out.toString());
        assertEquals(110, manifest(out).get("total_samples").asLong(), "padding rows are not counted");
        // A packed file holds the batches of one shape, so its padded tail can only be its last batch.
        Map<String, List<Long>> widthsByFile = new TreeMap<>();
        for (Map.Entry<String, Read> e : tensorsByFile(out).entrySet()) {
            String file = e.getKey().substring(0, e.getKey().indexOf("::"));
            widthsByFile.computeIfAbsent(file, f -> new ArrayList<>()).add(e.getValue().shape()[1]);
            assertEquals(4, e.getValue().shape()[0], "pad fills every batch to batch_size");
        }
        for (List<Long> widths : widthsByFile.values()) {
            assertEquals(1, widths.stream().distinct().count(), "one shape per packed file: " + widths);
        }
        assertEquals(expected(), readBack(out));
    }

    @Test
    void moreShapesThanOpenStreamsCloseTheLeastRecentlyUsed() throws Exception {
        int shapes = ShardDataWriter.MAX_OPEN_SHAPES * 2 + 1;
        Path out = tmp.resolve("many");
        // One partition, shapes cycling: every row of a new shape evicts the least recently used one.
        spark.range(0, shapes * 5L, 1, 1).selectExpr("id",
                        "array_repeat(cast(id as float), cast(id % " + shapes + " + 1 as int)) as vec")
                .select("vec").write().format("safetensors").option("batch_size", "3")
                .option("tail_strategy", "write").save(out.toString());
        assertEquals(shapes * 5L, manifest(out).get("total_samples").asLong());
        Map<Integer, Integer> back = readBack(out);
        assertEquals(shapes * 5, back.size());
        back.forEach((id, length) -> assertEquals(id % shapes + 1, length, "row " + id));
    }

    @Test
    void aDatasetWhoseShapesVaryTakesAppendsOfAnyShapeOfItsDtype() throws Exception {
        Path out = tmp.resolve("append");
        skewed().select("vec").write().format("safetensors").option("batch_size", "10").save(out.toString());
        spark.range(110, 113).selectExpr("array_repeat(cast(id as float), 7) as vec").write().format("safetensors")
                .mode("append").option("batch_size", "10").save(out.toString());
        assertEquals(113, manifest(out).get("total_samples").asLong());
        Map<Integer, Integer> want = expected();
        for (int id = 110; id < 113; id++) {
            want.put(id, 7);
        }
        assertEquals(want, readBack(out));
    }
}
