package io.github.semyonsinchenko.safetensors.spark;

import io.github.semyonsinchenko.safetensors.spark.entry.EntryCheck;
import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SQLContext;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.sources.BaseRelation;
import org.apache.spark.sql.sources.CreatableRelationProvider;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The data source {@code format("safetensors")} (registered as a {@link DataSourceRegister}
 * service).
 *
 * <p>Compiled for Java 17 (Spark 4's floor). Spark's service lookup instantiates every registered
 * source to ask its {@link #shortName()}, so this class must load and answer on any Java Spark runs
 * on, or a JDK 17 session could not even read Parquet with the connector's jar on its class path.
 * Everything else first checks for JDK 25 and then delegates to the real provider.
 */
public final class SafetensorsDataSource implements TableProvider, DataSourceRegister, CreatableRelationProvider {
    /** The name in {@code format("safetensors")}. */
    public static final String SHORT_NAME = "safetensors";

    private static final String IMPLEMENTATION = "io.github.semyonsinchenko.safetensors.spark.SafetensorsTableProvider";

    private TableProvider provider;

    /** Created by Spark's service lookup. */
    public SafetensorsDataSource() {}

    private synchronized TableProvider provider() {
        if (provider == null) {
            provider = EntryCheck.driverSide(IMPLEMENTATION, TableProvider.class);
        }
        return provider;
    }

    @Override
    public String shortName() {
        return SHORT_NAME;
    }

    @Override
    public StructType inferSchema(CaseInsensitiveStringMap options) {
        return provider().inferSchema(options);
    }

    @Override
    public Transform[] inferPartitioning(CaseInsensitiveStringMap options) {
        return provider().inferPartitioning(options);
    }

    @Override
    public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
        return provider().getTable(schema, partitioning, properties);
    }

    @Override
    public boolean supportsExternalMetadata() {
        return provider().supportsExternalMetadata();
    }

    @Override
    public BaseRelation createRelation(SQLContext sqlContext, SaveMode mode,
                                       scala.collection.immutable.Map<String, String> parameters, Dataset<Row> data) {
        return ((CreatableRelationProvider) provider()).createRelation(sqlContext, mode, parameters, data);
    }
}
