package io.github.semyonsinchenko.safetensors.preprocess;

import static org.apache.spark.sql.functions.col;

import io.github.semyonsinchenko.safetensors.preprocess.input.InputSchema;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.storage.StorageLevel;

/**
 * What every stage of one build shares: the session, the input, where files go, the options, and
 * the cached Datasets and RDDs, which {@link #release} unpersists when the build ends.
 */
public final class BuildContext {
    /** A table's row position within its Parquet data (file-path order, then file order). */
    public static final String ROW = "__row";
    /** The largest row, edge or vocabulary count the format's u32 fields hold. */
    public static final long U32_LIMIT = 0xFFFF_FFFFL;

    /** The session every stage runs its jobs in. */
    public final SparkSession spark;
    /** The input's schema, {@code D/metadata/X.json}. */
    public final InputSchema schema;
    /** The input tables' directory, {@code D/raw/X}. */
    public final Path rawDir;
    /** The temporary database directory the stages write, published when the build succeeds. */
    public final Path work;
    /** Part files written by executors, concatenated into {@link #work} and deleted at the end. */
    public final Path parts;
    /** How to run: the embedder, rows per partition, the progress sink. */
    public final Preprocessor.Options options;

    private final List<Dataset<?>> cached = new ArrayList<>();
    private final List<JavaRDD<?>> cachedRdds = new ArrayList<>();

    /** The context of one build writing into {@code work}. */
    public BuildContext(SparkSession spark, InputSchema schema, Path rawDir, Path work,
            Preprocessor.Options options) {
        this.spark = spark;
        this.schema = schema;
        this.rawDir = rawDir;
        this.work = work;
        this.parts = work.resolve(".parts");
        this.options = options;
    }

    /** Reports a detail of the current stage to the progress sink. */
    public void info(String what) {
        options.progress().accept("  " + what);
    }

    /** Partitions for {@code rows} rows at {@code rowsPerPartition} each. */
    public int partitions(long rows) {
        return (int) Math.max(1, Math.min(100_000, (rows + options.rowsPerPartition() - 1) / options.rowsPerPartition()));
    }

    /** {@code d} cached in memory and on disk until {@link #release}. */
    public <T> Dataset<T> persist(Dataset<T> d) {
        Dataset<T> p = d.persist(StorageLevel.MEMORY_AND_DISK());
        cached.add(p);
        return p;
    }

    /** {@code r} cached in memory and on disk until {@link #release}. */
    public <T> JavaRDD<T> persist(JavaRDD<T> r) {
        JavaRDD<T> p = r.persist(StorageLevel.MEMORY_AND_DISK());
        cachedRdds.add(p);
        return p;
    }

    /** A table's rows in order, {@code rowsPerPartition} to a partition, cached for the stages that stream it. */
    public Dataset<Row> ordered(Dataset<Row> df, long rows) {
        return persist(df.repartitionByRange(partitions(rows), col(ROW)).sortWithinPartitions(ROW));
    }

    /** Unpersists everything {@link #persist} cached. */
    public void release() {
        for (Dataset<?> d : cached) {
            d.unpersist(false);
        }
        for (JavaRDD<?> r : cachedRdds) {
            r.unpersist(false);
        }
    }
}
