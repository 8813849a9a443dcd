package io.github.semyonsinchenko.safetensors.spark.read;

import io.github.semyonsinchenko.safetensors.spark.conf.SparkHadoopConfs;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/** The provider's {@code inferSchema}: only with {@code inferSchema=true}, else a clear error. */
public final class ReadSchemas {
    private ReadSchemas() {}

    /**
     * The provider's {@code inferSchema}: the schema inferred from the manifest, the tensor index or
     * the first file's header. Without {@code inferSchema=true} it throws Spark's
     * {@code AnalysisException} asking for a schema.
     *
     * @param options the read's options
     * @return the inferred schema
     */
    public static StructType infer(CaseInsensitiveStringMap options) {
        ReadOptions read = ReadOptions.parse(options);
        if (!read.inferSchema()) {
            throw Errors.analysis("format(\"safetensors\") needs a schema: pass .schema(...) (each column a tensor"
                    + " struct<data: binary, shape: array<int>, dtype: string>, plus tensor_key string for the kv"
                    + " layout) or set .option(\"inferSchema\", \"true\") to infer it from the manifest, the tensor"
                    + " index or the first file's header");
        }
        var conf = SparkHadoopConfs.of(SparkSession.active(), options.asCaseSensitiveMap());
        return SchemaInference.infer(DatasetResolver.resolve(options, read, null, conf, false), conf, read.ignoreCorruptFiles());
    }
}
