package io.github.semyonsinchenko.safetensors.spark.write;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.github.semyonsinchenko.safetensors.format.Header;
import io.github.semyonsinchenko.safetensors.format.TensorInfo;
import io.github.semyonsinchenko.safetensors.testkit.MiniHdfs;
import io.github.semyonsinchenko.safetensors.dataset.DatasetLayout;
import io.github.semyonsinchenko.safetensors.dataset.Manifest;
import io.github.semyonsinchenko.safetensors.dataset.TensorIndexFile;
import java.io.InputStream;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Writes to a real HDFS (MiniDFSCluster in its own class loader) through Spark's Hadoop client. */
class HdfsWriteTest {
    @TempDir
    static Path dfsDir;

    static MiniHdfs hdfs;
    static SparkSession spark;
    static FileSystem fs;

    @BeforeAll
    static void start() throws Exception {
        hdfs = MiniHdfs.start(dfsDir);
        spark = SparkSession.builder().master("local[2]").appName("safetensors-hdfs-write-test")
                .config("spark.ui.enabled", "false")
                .getOrCreate();
        fs = FileSystem.get(URI.create(hdfs.uri()), new Configuration());
    }

    @AfterAll
    static void stop() throws Exception {
        if (spark != null) {
            spark.stop();
        }
        if (hdfs != null) {
            hdfs.close();
        }
    }

    private static JsonNode manifest(String root) throws Exception {
        try (InputStream in = fs.open(new org.apache.hadoop.fs.Path(root, DatasetLayout.MANIFEST))) {
            return new ObjectMapper().readTree(in);
        }
    }

    /** Tensor bytes by name of the manifest's shards, read with the core header parser from HDFS streams. */
    private static Map<String, byte[]> tensors(String root) throws Exception {
        Map<String, byte[]> out = new HashMap<>();
        for (Map.Entry<String, byte[]> e : tensorList(root)) {
            if (out.put(e.getKey(), e.getValue()) != null) {
                throw new AssertionError("tensor " + e.getKey() + " in two shards");
            }
        }
        return out;
    }

    /** (name, bytes) of every tensor, in the manifest's shard order. */
    private static java.util.List<Map.Entry<String, byte[]>> tensorList(String root) throws Exception {
        java.util.List<Map.Entry<String, byte[]>> out = new java.util.ArrayList<>();
        for (JsonNode shard : manifest(root).get("shards")) {
            FileStatus st = fs.getFileStatus(new org.apache.hadoop.fs.Path(root, shard.get("shard_path").asText()));
            try (FSDataInputStream in = fs.open(st.getPath())) {
                Header h = Header.read(in, st.getLen(), st.getPath().toString());
                for (TensorInfo t : h.tensors()) {
                    byte[] b = new byte[(int) t.byteSize()];
                    in.readFully(h.dataOffset() + t.begin(), b);
                    out.add(Map.entry(t.name(), b));
                }
            }
        }
        return out;
    }

    @Test
    void kvWriteAppendAndOverwriteOnHdfs() throws Exception {
        String root = hdfs.uri() + "/datasets/kv";
        spark.range(0, 8, 1, 2).selectExpr("concat('k', id) as key", "array(cast(id as float), 1.5f) as vec")
                .write().format("safetensors").option("name_col", "key").option("generate_index", "true").save(root);
        JsonNode m = manifest(root);
        assertEquals(8, m.get("total_samples").asLong());
        long total = 0;
        for (JsonNode s : m.get("shards")) {
            long len = fs.getFileStatus(new org.apache.hadoop.fs.Path(root, s.get("shard_path").asText())).getLen();
            assertEquals(len, s.get("bytes").asLong());
            total += len;
        }
        assertEquals(total, m.get("total_bytes").asLong());
        Map<String, byte[]> t = tensors(root);
        assertEquals(8, t.size());
        ByteBuffer k5 = ByteBuffer.wrap(t.get("k5__vec")).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(5.0f, k5.getFloat());
        assertEquals(1.5f, k5.getFloat());
        assertTrue(fs.exists(new org.apache.hadoop.fs.Path(root, DatasetLayout.INDEX)));
        assertFalse(fs.exists(new org.apache.hadoop.fs.Path(root, DatasetLayout.STAGING)));

        // append merges (manifest and index are replaced by rename-with-overwrite on HDFS)
        spark.range(8, 10, 1, 1).selectExpr("concat('k', id) as key", "array(cast(id as float), 1.5f) as vec")
                .write().format("safetensors").mode("append").option("name_col", "key").save(root);
        assertEquals(10, manifest(root).get("total_samples").asLong());
        assertEquals(10, tensors(root).size());
        assertEquals(10, TensorIndexFile.of(fs, fs.getConf(), new org.apache.hadoop.fs.Path(root), Manifest.read(fs, new org.apache.hadoop.fs.Path(root))).size());

        // overwrite replaces
        spark.range(0, 3, 1, 1).selectExpr("concat('z', id) as key", "array(cast(id as float), 1.5f) as vec")
                .write().format("safetensors").mode("overwrite").option("name_col", "key").save(root);
        assertEquals(3, manifest(root).get("total_samples").asLong());
        assertEquals(3, tensors(root).size());
        // The appended version's shards stay for its readers (retain_versions=1), nothing else.
        long onDisk = java.util.Arrays.stream(fs.listStatus(new org.apache.hadoop.fs.Path(root)))
                .filter(st -> st.getPath().getName().endsWith(".safetensors")).count();
        assertEquals(manifest(root).get("shards").size() + 3, onDisk);
    }

    @Test
    void batchWriteOnHdfs() throws Exception {
        String root = hdfs.uri() + "/datasets/batch";
        spark.range(0, 10, 1, 1).selectExpr("transform(sequence(0, 3), i -> cast(id * 4 + i as int)) as x")
                .write().format("safetensors").option("batch_size", "4").save(root);
        // one file per batch, each tensor named after the column
        java.util.List<Map.Entry<String, byte[]>> t = tensorList(root);
        assertEquals(java.util.List.of("x", "x", "x"), t.stream().map(Map.Entry::getKey).toList());
        ByteBuffer b = ByteBuffer.wrap(t.get(2).getValue()).order(ByteOrder.LITTLE_ENDIAN);
        int[] tail = new int[8];
        for (int i = 0; i < 8; i++) {
            tail[i] = b.getInt();
        }
        assertArrayEquals(new int[] {32, 33, 34, 35, 36, 37, 38, 39}, tail);
    }
}
