package io.github.semyonsinchenko.safetensors.spark.read;

import static org.apache.spark.sql.functions.col;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.io.SafetensorsWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Datasets laid out exactly as the original Scala connector writes them (SemyonSinchenko/
 * safetensors-spark at 4b55429): {@code part-<task:05d>-<shard:04d>-<uuid>} files, one file per
 * batch with tensors named after the columns, kv tensors {@code <key>__<column>}, a manifest with
 * {@code format_version}/{@code safetensors_version} "1.0", {@code shard_path}, a schema keyed by
 * tensor name, and no {@code write_mode}. Built here with the core writer (the original connector
 * is Scala and not built by this project); its reader reads them as plain files.
 */
class OriginalLayoutReadTest extends SparkTestBase {
    @TempDir
    static Path tmp;

    static final String UUID = "3e1f6c0a-5d7b-4c2e-9a41-0b8f2d6e7c15";

    static String shard(int task, int index) {
        return String.format(java.util.Locale.ROOT, "part-%05d-%04d-%s.safetensors", task, index, UUID);
    }

    static void manifest(Path dir, String shards, long samples, long bytes, String schema) throws Exception {
        Files.writeString(dir.resolve("dataset_manifest.json"), "{\n  \"format_version\" : \"1.0\",\n"
                + "  \"safetensors_version\" : \"1.0\",\n  \"total_samples\" : " + samples + ",\n  \"total_bytes\" : "
                + bytes + ",\n  \"shards\" : [ " + shards + " ],\n  \"schema\" : " + schema + "\n}");
    }

    @Test
    void batchDatasetReadsOneRowPerBatchFileAndUnbatches() throws Exception {
        Path dir = Files.createDirectories(tmp.resolve("batch"));
        StringBuilder shards = new StringBuilder();
        long bytes = 0;
        for (int b = 0; b < 2; b++) {
            float[] x = new float[2 * 3];
            for (int i = 0; i < x.length; i++) {
                x[i] = b * 100 + i;
            }
            Path f = dir.resolve(shard(0, b));
            new SafetensorsWriter().add("x", Dtype.F32, new long[] {2, 3}, x)
                    .add("y", Dtype.I64, new long[] {2}, new long[] {b * 2, b * 2 + 1}).write(f);
            shards.append(b == 0 ? "" : ", ").append("{\"shard_path\" : \"").append(f.getFileName())
                    .append("\", \"samples_count\" : 2, \"bytes\" : ").append(Files.size(f)).append('}');
            bytes += Files.size(f);
        }
        manifest(dir, shards.toString(), 4, bytes,
                "{\"x\" : {\"dtype\" : \"F32\", \"shape\" : [2, 3]}, \"y\" : {\"dtype\" : \"I64\", \"shape\" : [2]}}");

        Dataset<Row> batches = spark.read().format("safetensors").option("inferSchema", "true").load(dir.toString());
        assertEquals(java.util.Set.of("x", "y"), java.util.Set.of(batches.schema().fieldNames()));
        org.apache.spark.sql.AnalysisException append = org.junit.jupiter.api.Assertions.assertThrows(
                org.apache.spark.sql.AnalysisException.class, () -> batches.select("x").write().format("safetensors")
                        .mode("append").option("batch_size", "2").save(dir.toString()));
        org.junit.jupiter.api.Assertions.assertTrue(append.getMessage().contains("records no write_mode"),
                append.getMessage());
        assertEquals(2, batches.count());
        Dataset<Row> rows = spark.read().format("safetensors").option("inferSchema", "true").option("unbatch", "true")
                .load(dir.toString());
        List<Row> got = rows.select(col("y.data"), col("x.shape")).collectAsList();
        assertEquals(4, got.size());
        for (int i = 0; i < 4; i++) {
            assertArrayEquals(TestData.le(new long[] {i}), (byte[]) got.get(i).get(0));
            assertEquals(List.of(3), got.get(i).getList(1));
        }
    }

    @Test
    void kvDatasetReadsWithLayoutKvKeyedByTheFullTensorName() throws Exception {
        Path dir = Files.createDirectories(tmp.resolve("kv"));
        Path f = dir.resolve(shard(3, 0));
        new SafetensorsWriter().add("a__emb", Dtype.F32, new long[] {2}, new float[] {1, 2})
                .add("b__emb", Dtype.F32, new long[] {3}, new float[] {3, 4, 5}).write(f);
        manifest(dir, "{\"shard_path\" : \"" + f.getFileName() + "\", \"samples_count\" : 2, \"bytes\" : "
                + Files.size(f) + "}", 2, Files.size(f), "{\"a__emb\" : {\"dtype\" : \"F32\", \"shape\" : [2]},"
                + " \"b__emb\" : {\"dtype\" : \"F32\", \"shape\" : [3]}}");
        List<Row> got = spark.read().format("safetensors").option("inferSchema", "true").option("layout", "kv")
                .load(dir.toString()).orderBy("tensor_key").select(col("tensor_key"), col("tensor.shape"))
                .collectAsList();
        assertEquals(List.of("a__emb", "b__emb"), got.stream().map(r -> r.getString(0)).toList());
        assertEquals(List.of(List.of(2), List.of(3)), got.stream().map(r -> r.getList(1)).toList());
    }
}
