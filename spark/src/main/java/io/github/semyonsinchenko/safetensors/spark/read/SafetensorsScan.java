package io.github.semyonsinchenko.safetensors.spark.read;

import io.github.semyonsinchenko.safetensors.dataset.TensorIndexFile;
import io.github.semyonsinchenko.safetensors.spark.conf.SparkHadoopConfs;
import io.github.semyonsinchenko.safetensors.spark.entry.CheckedInputPartition;
import io.github.semyonsinchenko.safetensors.spark.entry.CheckedReaderFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.internal.connector.SupportsMetadata;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.util.SerializableConfiguration;
import scala.jdk.javaapi.CollectionConverters;

/**
 * An immutable description of one read: the files, the exact struct to emit, and the pushed
 * predicates. Planning picks the files (with the tensor index when a {@code tensor_key} filter
 * allows it); everything per file happens in {@link SafetensorsReaderFactory} on executors.
 */
public final class SafetensorsScan implements Scan, Batch, SupportsMetadata {
    private final ResolvedDataset dataset;
    private final StructType tableSchema;
    private final StructType readSchema;
    private final ReadOptions options;
    private final Map<String, String> rawOptions;
    private final Predicate[] pushed;
    private final MetaFilter filter;
    private transient List<DatasetFile> planned;
    private transient boolean usedIndex;

    SafetensorsScan(ResolvedDataset dataset, StructType tableSchema, StructType readSchema, ReadOptions options,
                    Map<String, String> rawOptions, Predicate[] pushed, MetaFilter filter) {
        this.dataset = dataset;
        this.tableSchema = tableSchema;
        this.readSchema = readSchema;
        this.options = options;
        this.rawOptions = rawOptions;
        this.pushed = pushed;
        this.filter = filter;
    }

    @Override
    public StructType readSchema() {
        return readSchema;
    }

    @Override
    public Batch toBatch() {
        return this;
    }

    /**
     * The files to read; with an index and a {@code tensor_key} restriction, only those holding the
     * keys (unless the index is of another commit, then all of them).
     */
    synchronized List<DatasetFile> plannedFiles() {
        if (planned == null) {
            Set<String> keys = MetaFilter.keyRestriction(filter);
            planned = dataset.files();
            if (keys != null && dataset.layout() == ReadOptions.Layout.KV && dataset.indexed() != null
                    && options.useIndex()) {
                List<DatasetFile> fromIndex = filesFromIndex(keys);
                if (fromIndex != null) {
                    planned = fromIndex;
                    usedIndex = true;
                }
            }
        }
        return planned;
    }

    /**
     * The files holding {@code keys}, or null when the index cannot be used: it is checked against the
     * manifest and the shards it selects ({@link TensorIndexFile#filesHoldingKeys}), so a damaged or
     * stale index means reading every file (same rows), never fewer rows.
     */
    private List<DatasetFile> filesFromIndex(Set<String> keys) {
        if (keys.isEmpty()) {
            return List.of();
        }
        Path root = new Path(dataset.indexRoot());
        Configuration conf = hadoopConf(SparkSession.active());
        Set<String> wanted = new HashSet<>();
        try {
            Set<String> holding = TensorIndexFile.filesHoldingKeys(root.getFileSystem(conf), conf, root,
                    dataset.indexed(), keys);
            if (holding == null) {
                return null;
            }
            for (String f : holding) {
                wanted.add(new Path(root, f).toString());
            }
        } catch (java.io.IOException e) {
            return null; // the file system of the root is unreachable: let the full scan report it
        }
        List<DatasetFile> out = new ArrayList<>();
        for (DatasetFile f : dataset.files()) {
            if (wanted.contains(f.path())) {
                out.add(f);
            }
        }
        return out;
    }

    /** Each partition wrapped so that an executor below JDK 25 says so (see {@link CheckedInputPartition}). */
    @Override
    public InputPartition[] planInputPartitions() {
        return plannedFiles().stream().map(f -> new CheckedInputPartition(new SafetensorsInputPartition(f)))
                .toArray(InputPartition[]::new);
    }

    @Override
    public PartitionReaderFactory createReaderFactory() {
        SparkSession spark = SparkSession.active();
        Configuration conf = hadoopConf(spark);
        Broadcast<SerializableConfiguration> broadcast = SparkHadoopConfs.broadcast(spark, conf);
        return new CheckedReaderFactory(new SafetensorsReaderFactory(broadcast, dataset, tableSchema, readSchema,
                options, filter));
    }

    /** See {@link SparkHadoopConfs}. */
    private Configuration hadoopConf(SparkSession spark) {
        return SparkHadoopConfs.of(spark, rawOptions);
    }

    private String pushedString() {
        return Arrays.stream(pushed).map(Predicate::toString).collect(Collectors.joining(", ", "[", "]"));
    }

    @Override
    public String description() {
        return "SafetensorsScan layout=" + dataset.layout().name().toLowerCase(java.util.Locale.ROOT)
                + (options.unbatch() ? " unbatch" : "")
                + ", files=" + dataset.files().size()
                + ", PushedFilters: " + pushedString()
                + ", ReadSchema: " + readSchema.simpleString();
    }

    @Override
    public scala.collection.immutable.Map<String, String> getMetaData() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("Format", "safetensors");
        m.put("Layout", dataset.layout().name().toLowerCase(java.util.Locale.ROOT));
        m.put("Unbatch", String.valueOf(options.unbatch()));
        m.put("Files", String.valueOf(dataset.files().size()));
        m.put("Index", dataset.indexed() == null ? "none" : dataset.indexed().indexFile());
        m.put("PushedFilters", pushedString());
        m.put("ReadSchema", readSchema.simpleString());
        return scala.collection.immutable.Map.from(CollectionConverters.asScala(m));
    }

    /** Whether planning used the tensor index (for tests and EXPLAIN readers). */
    boolean usedIndex() {
        plannedFiles();
        return usedIndex;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof SafetensorsScan s && dataset.equals(s.dataset) && readSchema.equals(s.readSchema)
                && options.equals(s.options) && pushedString().equals(s.pushedString());
    }

    @Override
    public int hashCode() {
        return Objects.hash(dataset, readSchema, options, pushedString());
    }
}
