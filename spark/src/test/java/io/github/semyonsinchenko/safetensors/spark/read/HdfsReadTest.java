package io.github.semyonsinchenko.safetensors.spark.read;

import static org.apache.spark.sql.functions.col;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.io.SafetensorsWriter;
import io.github.semyonsinchenko.safetensors.testkit.MiniHdfs;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Reads from a real HDFS (MiniDFSCluster through the shared {@code MiniHdfs} test harness, which
 * runs it in its own class loader): the same rows as the local read, for every layout, plus
 * pushdown and shape-only projections, whether tensors are fetched in coalesced reads or one by one.
 */
class HdfsReadTest extends SparkTestBase {
    @TempDir
    static Path tmp;
    static MiniHdfs hdfs;
    static String uri;

    @BeforeAll
    static void startHdfs() throws Exception {
        hdfs = MiniHdfs.start(tmp.resolve("dfs"));
        uri = hdfs.uri();
    }

    @AfterAll
    static void stopHdfs() throws Exception {
        if (hdfs != null) {
            hdfs.close();
        }
    }

    /** Copies a local dataset directory to HDFS and returns its hdfs:// path. */
    static String upload(Path local, String name) throws Exception {
        FileSystem fs = FileSystem.get(URI.create(uri), new Configuration());
        org.apache.hadoop.fs.Path dst = new org.apache.hadoop.fs.Path(uri + "/data/" + name);
        fs.copyFromLocalFile(false, true, new org.apache.hadoop.fs.Path(local.toUri()), dst);
        return dst.toString();
    }

    static Dataset<Row> read(String path) {
        return spark.read().format("safetensors").option("inferSchema", "true").load(path);
    }

    @Test
    void everyLayoutReadsTheSameFromHdfsAsLocally() throws Exception {
        Path plain = TestData.plain(tmp.resolve("plain"));
        Path batch = TestData.batch(tmp.resolve("batch"));
        Path kv = TestData.kv(tmp.resolve("kv"));
        TestData.kvIndex(spark, kv, List.of("image", "label"));
        for (Path p : List.of(plain, batch, kv)) {
            String remote = upload(p, p.getFileName().toString());
            assertTrue(remote.startsWith("hdfs://"), remote);
            assertEquals(canonical(read(p.toString())), canonical(read(remote)), remote);
        }
        String remoteBatch = uri + "/data/batch";
        assertEquals(7, spark.read().format("safetensors").option("inferSchema", "true").option("unbatch", "true")
                .load(remoteBatch).count());

        String remoteKv = uri + "/data/kv";
        Dataset<Row> one = read(remoteKv).where(col("tensor_key").equalTo("k4"));
        assertTrue(one.queryExecution().executedPlan().toString().contains("tensor_key = 'k4'"));
        assertEquals(canonical(read(kv.toString()).where(col("tensor_key").equalTo("k4"))), canonical(one));
        assertEquals(7, read(remoteKv).select(col("image.shape")).count());
        assertEquals(7, read(remoteKv).count());
    }

    @Test
    void coalescedAndPerTensorReadsGiveTheLocalValues() throws Exception {
        Path many = Files.createDirectories(tmp.resolve("many"));
        SafetensorsWriter w = new SafetensorsWriter().keepInsertionOrder(true);
        for (int i = 0; i < CoalescedReadTest.N; i++) {
            w.add(CoalescedReadTest.name(i), Dtype.U8, new long[] {1000}, CoalescedReadTest.values(i, 1000));
        }
        w.write(many.resolve("m.safetensors"));
        Path batch = TestData.batch(tmp.resolve("batch-coalesced"));
        for (Path p : List.of(many, batch)) {
            String remote = upload(p, "coalesced-" + p.getFileName());
            for (String unbatch : p == batch ? List.of("false", "true") : List.of("false")) {
                List<String> local = canonical(spark.read().format("safetensors").option("inferSchema", "true")
                        .option("unbatch", unbatch).load(p.toString()));
                for (String[] o : List.of(new String[] {"max_read_bytes", "16777216"},
                        new String[] {"max_read_bytes", "0"}, new String[] {"max_read_bytes", "2500"},
                        new String[] {"coalesce_gap_bytes", "0"})) {
                    assertEquals(local, canonical(spark.read().format("safetensors").option("inferSchema", "true")
                            .option("unbatch", unbatch).option(o[0], o[1]).load(remote)),
                            remote + " " + o[0] + "=" + o[1] + " unbatch=" + unbatch);
                }
            }
        }
        // a selection of every third tensor: the values of exactly those columns
        List<Row> rows = read(uri + "/data/coalesced-many").select(col("t00.data"), col("t03.data"), col("t39.data"))
                .collectAsList();
        assertArrayEquals(CoalescedReadTest.values(0, 1000), (byte[]) rows.getFirst().get(0));
        assertArrayEquals(CoalescedReadTest.values(3, 1000), (byte[]) rows.getFirst().get(1));
        assertArrayEquals(CoalescedReadTest.values(39, 1000), (byte[]) rows.getFirst().get(2));
    }
}
