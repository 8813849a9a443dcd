package io.github.semyonsinchenko.safetensors.spark.write;

import io.github.semyonsinchenko.safetensors.spark.conf.SparkHadoopConfs;
import io.github.semyonsinchenko.safetensors.dataset.DatasetLayout;
import io.github.semyonsinchenko.safetensors.dataset.DatasetVersions;
import java.io.IOException;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.SparkSession;

/** The write path's Hadoop configuration and root (the layout itself: {@link DatasetLayout}). */
final class DatasetFiles {
    private DatasetFiles() {}

    /** See {@link SparkHadoopConfs}. */
    static Configuration hadoopConf(SparkSession session, Map<String, String> options) {
        return SparkHadoopConfs.of(session, options);
    }

    static Path qualifiedRoot(String path, Configuration conf) throws IOException {
        Path p = new Path(path);
        return p.getFileSystem(conf).makeQualified(p);
    }

    /** True when {@code root} holds a committed dataset (see {@link DatasetVersions#exists}). */
    static boolean isCommitted(Path root, Configuration conf) throws IOException {
        return DatasetVersions.exists(root.getFileSystem(conf), root);
    }
}
