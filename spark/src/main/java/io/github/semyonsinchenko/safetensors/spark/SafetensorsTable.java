package io.github.semyonsinchenko.safetensors.spark;

import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.types.StructType;

/**
 * A safetensors dataset at a path. Read and write builders live in their own packages; this class
 * only wires them up and declares capabilities.
 */
public final class SafetensorsTable implements Table {
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

    @Override
    public StructType schema() {
        return schema;
    }

    @Override
    public Map<String, String> properties() {
        return properties;
    }

    @Override
    public Set<TableCapability> capabilities() {
        return EnumSet.noneOf(TableCapability.class);
    }
}
