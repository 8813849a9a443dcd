package io.github.semyonsinchenko.safetensors.dataset;

import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.RawLocalFileSystem;

/**
 * The one recipe for the Hadoop configuration a dataset is read or written with: a base
 * configuration (a Spark session's, with its {@code spark.hadoop.*} settings, or a plain one) plus
 * the options of the read or write, as Spark's own file sources do, so options reach every
 * file-system call (listing, manifest, index, shards). The local file system writes no {@code .crc}
 * side files next to shards and manifests, unless the options or the base name another
 * implementation for {@code file:} ({@link NoChecksumLocalFileSystem}: still a {@code LocalFileSystem},
 * as S3A's disk buffers require).
 */
public final class HadoopConfs {
    private HadoopConfs() {}

    /** The local file-system key this recipe sets. */
    static final String FILE_IMPL = "fs.file.impl";

    /**
     * A copy of {@code base} with {@code options} set on it ({@code path} and {@code paths}, which
     * name the dataset, and null values are skipped).
     *
     * @param base the configuration to start from (a Spark session's, or a plain one)
     * @param options the read's or write's options
     * @return the configuration
     */
    public static Configuration of(Configuration base, Map<String, String> options) {
        Configuration conf = new Configuration(base);
        for (Map.Entry<String, String> e : options.entrySet()) {
            String k = e.getKey();
            if (!k.equalsIgnoreCase("path") && !k.equalsIgnoreCase("paths") && e.getValue() != null) {
                conf.set(k, e.getValue());
            }
        }
        String local = conf.get(FILE_IMPL);
        if (local == null || local.equals(LocalFileSystem.class.getName())
                || local.equals(RawLocalFileSystem.class.getName())) {
            conf.set(FILE_IMPL, NoChecksumLocalFileSystem.class.getName());
        }
        // Hadoop caches one file system per scheme, whatever the configuration: without this a read or
        // write would get the instance of an earlier one (another implementation, other settings).
        conf.setBoolean("fs.file.impl.disable.cache", true);
        return conf;
    }

    /**
     * A configuration for a dataset without Spark: Hadoop's defaults (and site files) plus the options.
     *
     * @param options Hadoop settings and options
     * @return a configuration for a dataset without Spark: Hadoop's defaults (and site files) plus the options
     */
    public static Configuration of(Map<String, String> options) {
        return of(new Configuration(), options);
    }
}
