package io.github.semyonsinchenko.safetensors.spark.write;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.github.semyonsinchenko.safetensors.testkit.MiniHdfs;
import io.github.semyonsinchenko.safetensors.dataset.CrashPoints;
import io.github.semyonsinchenko.safetensors.dataset.DatasetLayout;
import io.github.semyonsinchenko.safetensors.dataset.Manifest;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.FileUtil;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.RemoteIterator;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The commit protocol on HDFS (MiniDFSCluster): an overwrite whose child JVM halts around the
 * manifest replace (HDFS renames, {@code FileContext.rename(OVERWRITE)}) leaves the old or the new
 * version, and the next commit removes the leftovers.
 */
class HdfsCommitTest {
    static final List<String> POINTS = List.of(CrashPoints.SHARD_RENAMED + ":1", CrashPoints.INDEX_WRITTEN,
            CrashPoints.BEFORE_CLAIM, CrashPoints.CLAIMED, CrashPoints.AFTER_MANIFEST);

    @TempDir
    static Path tmp;
    static MiniHdfs hdfs;
    static SparkSession spark;
    static FileSystem fs;

    @BeforeAll
    static void start() throws Exception {
        hdfs = MiniHdfs.start(tmp.resolve("dfs"));
        fs = FileSystem.get(URI.create(hdfs.uri()), new Configuration());
        spark = SparkSession.builder().master("local[2]").appName("safetensors-hdfs-commit")
                .config("spark.ui.enabled", "false").getOrCreate();
        spark.sparkContext().setLogLevel("ERROR");
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

    private static Set<String> read(String root) {
        Set<String> out = new TreeSet<>();
        for (Row r : spark.read().format("safetensors").option("inferSchema", "true").load(root).collectAsList()) {
            ByteBuffer b = ByteBuffer.wrap(r.getStruct(r.fieldIndex("vec")).getAs("data"))
                    .order(ByteOrder.LITTLE_ENDIAN);
            out.add(r.getString(r.fieldIndex("tensor_key")) + "=" + (int) b.getFloat() + "," + (int) b.getFloat());
        }
        return out;
    }

    @Test
    void anOverwriteCrashedAroundTheManifestReplaceLeavesOneVersionOnHdfs() throws Exception {
        String template = hdfs.uri() + "/data/template";
        CrashChild.writeDirect(template, "errorifexists", 1, 6, "1", "1d");
        for (String point : POINTS) {
            String root = hdfs.uri() + "/data/" + point.replace(':', '_');
            FileUtil.copy(fs, new org.apache.hadoop.fs.Path(template), fs, new org.apache.hadoop.fs.Path(root), false,
                    fs.getConf());
            Path log = tmp.resolve(point.replace(':', '_') + ".log");
            int status = CrashPointMatrixTest.child("direct", root, "overwrite", point, log);
            assertEquals(CrashPoints.EXIT_STATUS, status, point + ": " + CrashPointMatrixTest.tail(log));
            boolean committed = point.equals(CrashPoints.CLAIMED) || point.equals(CrashPoints.AFTER_MANIFEST);
            Set<String> expected = committed ? CrashPointMatrixTest.rows(2, 10) : CrashPointMatrixTest.rows(1, 6);
            assertEquals(expected, read(root), point);

            CrashChild.writeDirect(root, "append", 3, 4, "0", "0s");
            Set<String> after = new TreeSet<>(expected);
            after.addAll(CrashPointMatrixTest.rows(3, 4));
            assertEquals(after, read(root), point + " + append");
            Manifest m = Manifest.readFile(fs, new org.apache.hadoop.fs.Path(root, DatasetLayout.MANIFEST));
            Set<String> want = CrashPointMatrixTest.currentFiles(m);
            Set<String> have = new TreeSet<>();
            String prefix = fs.makeQualified(new org.apache.hadoop.fs.Path(root)).toString() + "/";
            RemoteIterator<LocatedFileStatus> it = fs.listFiles(new org.apache.hadoop.fs.Path(root), true);
            while (it.hasNext()) {
                have.add(it.next().getPath().toString().substring(prefix.length()));
            }
            assertEquals(want, have, point + ": leftovers after the next commit");
        }
    }
}
