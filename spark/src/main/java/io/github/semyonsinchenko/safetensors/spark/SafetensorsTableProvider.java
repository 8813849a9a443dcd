package io.github.semyonsinchenko.safetensors.spark;

import io.github.semyonsinchenko.safetensors.spark.write.SaveModeWrite;
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
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The provider behind {@code format("safetensors")}: Spark reaches it through
 * {@link SafetensorsDataSource} (the registered name), which checks the Java version first. Thin on
 * purpose: schema inference belongs to the read side, everything else to {@link SafetensorsTable}.
 */
public final class SafetensorsTableProvider implements TableProvider, CreatableRelationProvider {
    /** Created by reflection from {@link SafetensorsDataSource} once the Java version is checked. */
    public SafetensorsTableProvider() {}

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

    /** {@code df.write...save(path)}: the SaveMode front door of the V2 write (see {@link SaveModeWrite}). */
    @Override
    public BaseRelation createRelation(SQLContext sqlContext, SaveMode mode,
                                       scala.collection.immutable.Map<String, String> parameters, Dataset<Row> data) {
        return SaveModeWrite.save(sqlContext, mode, scala.jdk.javaapi.CollectionConverters.asJava(parameters), data,
                SafetensorsDataSource.class.getName());
    }
}
