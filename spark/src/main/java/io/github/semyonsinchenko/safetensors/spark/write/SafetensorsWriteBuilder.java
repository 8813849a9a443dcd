package io.github.semyonsinchenko.safetensors.spark.write;

import io.github.semyonsinchenko.safetensors.dataset.DatasetException;
import io.github.semyonsinchenko.safetensors.dataset.Manifest;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.SupportsTruncate;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriteBuilder;

/**
 * Driver side, planning time: validates every option against the input schema (and, on append,
 * against the existing manifest) before any task runs, then describes the write.
 */
public final class SafetensorsWriteBuilder implements WriteBuilder, SupportsTruncate {
    /**
     * Internal option set by {@link SaveModeWrite}: the user's SaveMode, already checked against the
     * path. Only tables carrying it declare batch-write capabilities (see SaveModeWrite).
     */
    public static final String SAVE_MODE_OPTION = "__safetensors_save_mode";

    private final LogicalWriteInfo info;
    private boolean truncate;

    /**
     * A write described by Spark; nothing is checked until {@link #build()}, which throws Spark's
     * {@code AnalysisException} for a bad option or an append the existing dataset refuses.
     *
     * @param info the query's schema and options
     */
    public SafetensorsWriteBuilder(LogicalWriteInfo info) {
        this.info = info;
    }

    /**
     * The write capabilities of a table with these properties: none unless the write was reached
     * through {@link SaveModeWrite}, so that a plain {@code save} goes through the SaveMode front
     * door.
     *
     * @param tableProperties the table's properties (the write's options)
     * @return {@code BATCH_WRITE} and {@code TRUNCATE}, or nothing
     */
    public static Set<TableCapability> capabilities(Map<String, String> tableProperties) {
        boolean resolved = tableProperties.keySet().stream().anyMatch(k -> k.equalsIgnoreCase(SAVE_MODE_OPTION));
        return resolved ? EnumSet.of(TableCapability.BATCH_WRITE, TableCapability.TRUNCATE)
                : EnumSet.noneOf(TableCapability.class);
    }

    @Override
    public WriteBuilder truncate() {
        truncate = true;
        return this;
    }

    @Override
    public Write build() {
        SaveMode mode = saveMode();
        WriteOptions options;
        try {
            options = WriteOptions.parse(info.options(), info.schema(), mode);
        } catch (AnalysisException e) {
            throw sneaky(e);
        }
        SparkSession session = SparkSession.active();
        Configuration conf = DatasetFiles.hadoopConf(session, info.options().asCaseSensitiveMap());
        boolean collectIndex = options.generateIndex;
        Path root;
        try {
            root = DatasetFiles.qualifiedRoot(options.path, conf);
            if (mode == SaveMode.Append) {
                Manifest old = Manifest.read(root.getFileSystem(conf), root);
                if (old != null) {
                    checkAppendEarly(old, options);
                    collectIndex |= old.hasIndex();
                }
            }
        } catch (DatasetException e) {
            // e.g. a manifest that exists but cannot be read: never written over as if absent
            throw sneaky(WriteErrors.analysis("cannot write to " + options.path + ": " + e.getMessage()));
        } catch (IOException e) {
            throw new UncheckedIOException("[safetensors] cannot inspect " + options.path + ": " + e.getMessage(), e);
        }
        return new SafetensorsWrite(options, conf, collectIndex, root, info.queryId());
    }

    private SaveMode saveMode() {
        if (truncate) {
            return SaveMode.Overwrite;
        }
        String v = info.options().get(SAVE_MODE_OPTION);
        if (v == null) {
            return SaveMode.Append; // reached as a plain V2 append (no SaveModeWrite in front)
        }
        for (SaveMode m : SaveMode.values()) {
            if (m.name().equalsIgnoreCase(v)) {
                return m;
            }
        }
        throw new IllegalArgumentException("unknown save mode " + v);
    }

    /** What can be checked against an existing dataset before the data is seen (the commit asks again). */
    private static void checkAppendEarly(Manifest old, WriteOptions options) {
        String problem = options.appendProblem(old);
        if (problem != null) {
            throw sneaky(WriteErrors.analysis("cannot append to " + options.path + ": " + problem));
        }
    }

    /** AnalysisException is checked in Java's eyes; Spark's interfaces throw it from Scala freely. */
    @SuppressWarnings("unchecked")
    static <E extends Throwable> RuntimeException sneaky(Throwable e) throws E {
        throw (E) e;
    }
}
