package io.github.semyonsinchenko.safetensors.spark;

import java.util.Map;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * Entry point of {@code format("safetensors")}. Thin on purpose: schema inference belongs to the
 * read side, everything else to {@link SafetensorsTable}.
 */
public final class SafetensorsDataSource implements TableProvider, DataSourceRegister {
    public static final String SHORT_NAME = "safetensors";

    @Override
    public String shortName() {
        return SHORT_NAME;
    }

    @Override
    public StructType inferSchema(CaseInsensitiveStringMap options) {
        return io.github.semyonsinchenko.safetensors.spark.read.ReadSchemas.infer(options);
    }

    @Override
    public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
        return new SafetensorsTable(schema, properties);
    }

    @Override
    public boolean supportsExternalMetadata() {
        return true; // users may pass .schema(...)
    }
}
