package io.github.semyonsinchenko.safetensors.spark.write;

import io.github.semyonsinchenko.safetensors.dataset.DatasetLayout;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.HashMap;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SQLContext;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.sources.BaseRelation;
import org.apache.spark.sql.types.StructType;

/**
 * How {@code df.write.format("safetensors").mode(m).save(path)} gets all four SaveModes.
 *
 * <p>In Spark 4.2 {@code DataFrameWriter.save} hands a plain {@code TableProvider} whose table
 * supports {@code BATCH_WRITE} only Append and Overwrite; ErrorIfExists (the default) and Ignore
 * fail with "does not support ... mode". The alternatives are {@code SupportsCatalogOptions} (every
 * save and load then goes through a catalog, and {@code spark.read.schema(...)} is rejected) or
 * Spark's V1 fallback. We use the fallback, and only as a front door:
 *
 * <ol>
 *   <li>The table of a user's {@code save} declares no write capability, so Spark calls the
 *       provider's {@code CreatableRelationProvider.createRelation} with the SaveMode.</li>
 *   <li>{@link #save} decides the mode against the path: ErrorIfExists fails and Ignore returns when
 *       a committed dataset (its manifest) is there.</li>
 *   <li>Otherwise it runs the real DataSource V2 write as an append of the same DataFrame, passing
 *       the user's SaveMode in an internal option. Tables carrying that option declare
 *       {@code BATCH_WRITE}; the V2 {@code BatchWrite} re-checks the mode at commit (the path may
 *       have changed while the job ran) and implements overwrite and append on the manifest.</li>
 * </ol>
 *
 * So there is one write implementation (V2: staging, commit coordinator, job commit); the V1 hop
 * only carries the SaveMode, which the V2 API does not pass to a path-based provider.
 */
public final class SaveModeWrite {
    private SaveModeWrite() {}

    /**
     * Runs the write with the user's SaveMode. A missing path, or ErrorIfExists on a path holding a
     * committed dataset, is Spark's {@code AnalysisException}; Ignore on such a path writes nothing.
     *
     * @param sqlContext the caller's context
     * @param mode the user's SaveMode
     * @param parameters the write's options, {@code path} included
     * @param data the rows to write
     * @param provider the DataSource class the V2 write is addressed to (the caller's own, passed in
     *     so this package does not import the one above it)
     * @return a relation over the written schema, which Spark only uses to refresh caches
     * @throws java.io.UncheckedIOException if the path cannot be inspected
     */
    public static BaseRelation save(SQLContext sqlContext, SaveMode mode, Map<String, String> parameters,
                                    Dataset<Row> data, String provider) {
        String path = parameters.entrySet().stream().filter(e -> e.getKey().equalsIgnoreCase("path"))
                .map(Map.Entry::getValue).findFirst().orElse(null);
        if (path == null || path.isBlank()) {
            throw SafetensorsWriteBuilder.sneaky(
                    WriteErrors.analysis("no output path: use .save(path) or .option(\"path\", ...)"));
        }
        if (mode == SaveMode.ErrorIfExists || mode == SaveMode.Ignore) {
            Configuration conf = DatasetFiles.hadoopConf(sqlContext.sparkSession(), parameters);
            boolean exists;
            try {
                exists = DatasetFiles.isCommitted(DatasetFiles.qualifiedRoot(path, conf), conf);
            } catch (IOException e) {
                throw new UncheckedIOException("[safetensors] cannot inspect " + path + ": " + e.getMessage(), e);
            }
            if (exists && mode == SaveMode.ErrorIfExists) {
                throw SafetensorsWriteBuilder.sneaky(WriteErrors.analysis("path " + path + " already holds a "
                        + "safetensors dataset (" + DatasetLayout.MANIFEST + "); SaveMode ErrorIfExists (the default) "
                        + "refuses to write; use .mode(\"overwrite\"), .mode(\"append\") or .mode(\"ignore\")"));
            }
            if (exists) {
                return relation(sqlContext, data.schema()); // Ignore: leave the dataset as it is
            }
        }
        Map<String, String> options = new HashMap<>(parameters);
        options.put(SafetensorsWriteBuilder.SAVE_MODE_OPTION, mode.name());
        data.write().format(provider).mode(SaveMode.Append).options(options).save();
        return relation(sqlContext, data.schema());
    }

    /** What createRelation must return; nothing reads it (Spark only uses it to refresh caches). */
    private static BaseRelation relation(SQLContext sqlContext, StructType schema) {
        return new BaseRelation() {
            @Override
            public SQLContext sqlContext() {
                return sqlContext;
            }

            @Override
            public StructType schema() {
                return schema;
            }
        };
    }

}
