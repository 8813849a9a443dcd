package io.github.semyonsinchenko.safetensors.spark;

import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import io.github.semyonsinchenko.safetensors.spark.conf.SparkHadoopConfs;
import io.github.semyonsinchenko.safetensors.spark.read.DatasetResolver;
import io.github.semyonsinchenko.safetensors.spark.read.ReadOptions;
import io.github.semyonsinchenko.safetensors.spark.read.SafetensorsScanBuilder;
import io.github.semyonsinchenko.safetensors.spark.write.SafetensorsWriteBuilder;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * A safetensors dataset at a path. Read and write builders live in their own packages; this class
 * only wires them up and declares capabilities.
 */
public final class SafetensorsTable implements Table, SupportsRead, SupportsWrite {
    private final StructType schema;
    private final Map<String, String> properties;

    SafetensorsTable(StructType schema, Map<String, String> properties) {
        this.schema = schema;
        this.properties = Map.copyOf(properties);
    }

    @Override
    public String name() {
        return "safetensors:" + properties.getOrDefault("path", "?");
    }

    // Deprecated in Spark for columns(), whose default still derives the columns from schema().
    @Override
    @SuppressWarnings("deprecation")
    public StructType schema() {
        return schema;
    }

    @Override
    public Map<String, String> properties() {
        return properties;
    }

    @Override
    public Set<TableCapability> capabilities() {
        Set<TableCapability> caps = EnumSet.of(TableCapability.BATCH_READ);
        // Write capabilities only behind the SaveMode front door (see write.SaveModeWrite).
        caps.addAll(SafetensorsWriteBuilder.capabilities(properties));
        return caps;
    }

    @Override
    public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
        ReadOptions read = ReadOptions.parse(options);
        var conf = SparkHadoopConfs.of(SparkSession.active(), options.asCaseSensitiveMap());
        return new SafetensorsScanBuilder(DatasetResolver.resolve(options, read, schema, conf, true), schema, read, options);
    }

    @Override
    public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
        return new SafetensorsWriteBuilder(info);
    }
}
