package io.github.semyonsinchenko.safetensors.spark.read;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.connector.read.SupportsPushDownV2Filters;
import org.apache.spark.sql.types.StructType;

/**
 * Driver side: decides what is pushed. A predicate is accepted when it can be decided from headers
 * alone ({@code tensor_key}, a tensor's presence, {@code dtype}, {@code shape}; see
 * {@link MetaFilter}); it is then applied exactly by every partition reader (and, for
 * {@code tensor_key}, also used with the index to pick files), so Spark is not asked to re-check it.
 * Everything else is returned as a post-scan filter. Required columns, nested fields included, are
 * taken as given: the scan emits exactly that struct.
 */
public final class SafetensorsScanBuilder implements ScanBuilder, SupportsPushDownRequiredColumns,
        SupportsPushDownV2Filters {
    private final ResolvedDataset dataset;
    private final StructType tableSchema;
    private final ReadOptions options;
    private final Map<String, String> rawOptions;
    private StructType requiredSchema;
    private final List<Predicate> pushed = new ArrayList<>();
    private final List<MetaFilter> filters = new ArrayList<>();

    /**
     * A scan of a resolved dataset; Spark then pushes required columns and filters.
     *
     * @param dataset the files and naming rules resolved on the driver
     * @param tableSchema the table's schema (given or inferred)
     * @param options the parsed read options
     * @param rawOptions the read's options as given, for the Hadoop configuration
     */
    public SafetensorsScanBuilder(ResolvedDataset dataset, StructType tableSchema, ReadOptions options,
                                  Map<String, String> rawOptions) {
        this.dataset = dataset;
        this.tableSchema = tableSchema;
        this.options = options;
        this.rawOptions = Map.copyOf(rawOptions);
        this.requiredSchema = tableSchema;
    }

    @Override
    public Predicate[] pushPredicates(Predicate[] predicates) {
        List<Predicate> postScan = new ArrayList<>();
        boolean kv = dataset.layout() == ReadOptions.Layout.KV;
        for (Predicate p : predicates) {
            MetaFilter f = MetaFilter.convert(p, tableSchema, kv);
            if (f == null) {
                postScan.add(p);
            } else {
                pushed.add(p);
                filters.add(f);
            }
        }
        return postScan.toArray(Predicate[]::new);
    }

    @Override
    public Predicate[] pushedPredicates() {
        return pushed.toArray(Predicate[]::new);
    }

    @Override
    public void pruneColumns(StructType required) {
        this.requiredSchema = required;
    }

    @Override
    public Scan build() {
        return new SafetensorsScan(dataset, tableSchema, requiredSchema, options, rawOptions,
                pushed.toArray(Predicate[]::new), MetaFilter.and(filters));
    }
}
