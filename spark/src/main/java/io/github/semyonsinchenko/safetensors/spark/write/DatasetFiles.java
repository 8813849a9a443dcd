package io.github.semyonsinchenko.safetensors.spark.write;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileContext;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Options;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.UnsupportedFileSystemException;
import org.apache.spark.sql.SparkSession;

/** The dataset's file names (spark/DATASET.md) and the driver-side file operations on them. */
final class DatasetFiles {
    static final String MANIFEST = "dataset_manifest.json";
    static final String INDEX = "_tensor_index.parquet";
    static final String STAGING = "_staging";

    private DatasetFiles() {}

    /**
     * The session's Hadoop configuration plus the write options (as Spark's file sources do), with
     * the local file system switched to its raw form so no {@code .crc} side files appear.
     */
    static Configuration hadoopConf(SparkSession session, Map<String, String> options) {
        Configuration conf = ((org.apache.spark.sql.classic.SparkSession) session).sessionState().newHadoopConf();
        for (Map.Entry<String, String> e : options.entrySet()) {
            if (!e.getKey().equalsIgnoreCase("path") && e.getValue() != null) {
                conf.set(e.getKey(), e.getValue());
            }
        }
        conf.set("fs.file.impl", RawLocalFileSystem.class.getName());
        conf.setBoolean("fs.file.impl.disable.cache", true);
        return conf;
    }

    static Path qualifiedRoot(String path, Configuration conf) throws IOException {
        Path p = new Path(path);
        return p.getFileSystem(conf).makeQualified(p);
    }

    /** True when {@code root} holds a committed dataset: its manifest exists. */
    static boolean isCommitted(Path root, Configuration conf) throws IOException {
        return root.getFileSystem(conf).exists(new Path(root, MANIFEST));
    }

    /** Renames {@code src} over {@code dst} atomically where the file system can (HDFS, local). */
    static void renameOverwrite(FileSystem fs, Path src, Path dst) throws IOException {
        if (fs instanceof RawLocalFileSystem) {
            // rename(2) replaces the target atomically.
            if (!fs.rename(src, dst)) {
                throw new IOException("could not rename " + src + " to " + dst);
            }
            return;
        }
        try {
            FileContext.getFileContext(fs.getUri(), fs.getConf()).rename(src, dst, Options.Rename.OVERWRITE);
        } catch (UnsupportedFileSystemException e) {
            fs.delete(dst, false);
            if (!fs.rename(src, dst)) {
                throw new IOException("could not rename " + src + " to " + dst, e);
            }
        }
    }

    /** Moves a committed shard from staging into the dataset root; the target must not exist. */
    static void move(FileSystem fs, Path src, Path dst) throws IOException {
        if (!fs.rename(src, dst)) {
            throw new IOException("could not move " + src + " to " + dst
                    + (fs.exists(dst) ? " (the target exists)" : fs.exists(src) ? "" : " (the source is missing)"));
        }
    }

    /** Deletes the job's staging directory, and {@code _staging} itself once no other job uses it. */
    static void removeStaging(FileSystem fs, Path root, Path jobStaging) throws IOException {
        fs.delete(jobStaging, true);
        Path staging = new Path(root, STAGING);
        try {
            FileStatus[] left = fs.listStatus(staging);
            if (left.length == 0) {
                fs.delete(staging, false);
            }
        } catch (FileNotFoundException ignored) {
            // already gone
        }
    }
}
