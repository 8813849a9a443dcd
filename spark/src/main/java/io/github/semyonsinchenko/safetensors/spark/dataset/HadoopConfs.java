package io.github.semyonsinchenko.safetensors.spark.dataset;

import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.spark.sql.SparkSession;

/**
 * The one recipe for the Hadoop configuration of a read or a write: the session's (with its
 * {@code spark.hadoop.*} and SQL settings) plus the options of the read or write, as Spark's own
 * file sources do, so options reach every file-system call (listing, manifest, index, shards).
 * The local file system is the raw one: no {@code .crc} side files next to shards and manifests.
 */
public final class HadoopConfs {
    private HadoopConfs() {}

    public static Configuration of(SparkSession session, Map<String, String> options) {
        Configuration conf = ((org.apache.spark.sql.classic.SparkSession) session).sessionState().newHadoopConf();
        for (Map.Entry<String, String> e : options.entrySet()) {
            String k = e.getKey();
            if (!k.equalsIgnoreCase("path") && !k.equalsIgnoreCase("paths") && e.getValue() != null) {
                conf.set(k, e.getValue());
            }
        }
        conf.set("fs.file.impl", RawLocalFileSystem.class.getName());
        conf.setBoolean("fs.file.impl.disable.cache", true);
        return conf;
    }
}
