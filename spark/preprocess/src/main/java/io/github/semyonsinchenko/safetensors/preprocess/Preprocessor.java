package io.github.semyonsinchenko.safetensors.preprocess;

import io.github.semyonsinchenko.safetensors.preprocess.embed.EmbedderSpec;
import io.github.semyonsinchenko.safetensors.preprocess.embed.EmbeddingFiles;
import io.github.semyonsinchenko.safetensors.preprocess.graph.GraphWriter;
import io.github.semyonsinchenko.safetensors.preprocess.input.InputSchema;
import io.github.semyonsinchenko.safetensors.preprocess.input.LoadedTable;
import io.github.semyonsinchenko.safetensors.preprocess.keys.PrimaryKeyMaps;
import io.github.semyonsinchenko.safetensors.preprocess.partition.Parts;
import io.github.semyonsinchenko.safetensors.preprocess.stats.CategoricalVocabulary;
import io.github.semyonsinchenko.safetensors.preprocess.stats.ColumnStatistics;
import io.github.semyonsinchenko.safetensors.preprocess.stats.OrderedStats;
import io.github.semyonsinchenko.safetensors.preprocess.table.TableEncoder;
import io.github.semyonsinchenko.safetensors.preprocess.task.TaskQueries;
import io.github.semyonsinchenko.safetensors.preprocess.task.TaskWriter;
import io.github.semyonsinchenko.safetensors.preprocess.text.TextVocabulary;
import io.github.semyonsinchenko.safetensors.sampler.db.ColumnMetadata;
import io.github.semyonsinchenko.safetensors.sampler.db.DatabaseLayout;
import io.github.semyonsinchenko.safetensors.sampler.db.DatabaseMetadata;
import io.github.semyonsinchenko.safetensors.sampler.db.DatabaseWriter;
import io.github.semyonsinchenko.safetensors.sampler.db.TableMetadata;
import io.github.semyonsinchenko.safetensors.sampler.db.TaskMetadata;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.function.Consumer;
import org.apache.spark.sql.SparkSession;

/**
 * Builds a relational-sampler database (headwater's format, guide in docs/preprocess.md) from headwater's
 * input, {@code D/metadata/X.json} and {@code D/raw/X/<table>.parquet}, with Spark.
 *
 * <p>Every per-row step runs in Spark: casts, vocabularies, text lookups, FK resolution, the CSR
 * transpose, task queries and the encoding of every cell. Each output file is written by the
 * partitions of an ordered Dataset, one part per partition, then concatenated in order on the
 * driver ({@link Parts}); no step collects a table. The driver folds two things in row order,
 * streaming one partition at a time: the f64 sums of numerical and timestamp statistics
 * ({@link OrderedStats}: sequential, so the bits equal headwater's whatever the partitioning) and
 * the row pointers of the graph. The stages, in order: {@link LoadedTable}, {@link TextVocabulary},
 * {@link ColumnStatistics} and {@link CategoricalVocabulary}, {@link EmbeddingFiles},
 * {@link TableEncoder}, {@link GraphWriter}, {@link TaskWriter}, then {@code metadata.json}.
 */
public final class Preprocessor {

    /** How to run: the embedder, rows per Spark partition for ordered stages, and a progress sink. */
    public record Options(EmbedderSpec embedder, long rowsPerPartition, Consumer<String> progress) {
        public Options {
            if (rowsPerPartition < 1) {
                throw new IllegalArgumentException("rowsPerPartition must be positive, was " + rowsPerPartition);
            }
        }

        /** {@code embedder}, 500,000 rows per partition, progress on stderr. */
        public static Options defaults(EmbedderSpec embedder) {
            return new Options(embedder, 500_000, msg -> System.err.println("[preprocess] " + msg));
        }

        /** These options with {@code rows} rows per partition. */
        public Options withRowsPerPartition(long rows) {
            return new Options(embedder, rows, progress);
        }

        /** These options reporting progress to {@code sink}. */
        public Options withProgress(Consumer<String> sink) {
            return new Options(embedder, rowsPerPartition, sink);
        }
    }

    private static final int STAGES = 8;

    /** The session settings task queries and casts rely on; restored afterwards. */
    private static final Map<String, String> SESSION_CONF = Map.of(
            "spark.sql.session.timeZone", "UTC",
            "spark.sql.caseSensitive", "true", // DataFusion runs with identifier normalization off
            "spark.sql.ansi.enabled", "true",
            "spark.sql.ansi.doubleQuotedIdentifiers", "true", // "t" is an identifier, as in DataFusion
            "spark.sql.optimizer.canChangeCachedPlanOutputPartitioning", "true"); // AQE may coalesce cached stages

    /**
     * Speed settings, each applied only when the session has not set it, and restored afterwards.
     * The cached Datasets of a build are read once or twice, so compressing the columnar cache
     * costs more than it saves (a profile of the graph stage spent a share of its samples building
     * the compression statistics: bench/results/preprocess.md).
     */
    private static final Map<String, String> TUNING_CONF = Map.of(
            "spark.sql.inMemoryColumnarStorage.compressed", "false");

    static final String SHUFFLE_PARTITIONS = "spark.sql.shuffle.partitions";

    private Preprocessor() {}

    /**
     * headwater's layout: reads {@code dataDir/metadata/<dataset>.json} and
     * {@code dataDir/raw/<dataset>/}, writes {@code dataDir/processed/<dataset>/}.
     */
    public static DatabaseMetadata run(SparkSession spark, Path dataDir, String dataset, Options options) {
        InputSchema schema = InputSchema.read(dataDir.resolve("metadata").resolve(dataset + ".json"));
        return build(spark, schema, dataDir.resolve("raw").resolve(dataset),
                dataDir.resolve("processed").resolve(dataset), options);
    }

    /**
     * Builds the database into {@code outDir}. The files are written into a sibling temporary
     * directory that replaces {@code outDir} only when everything succeeded; a failure leaves
     * {@code outDir} as it was. A {@code spark.safetensors.preprocess.*} setting no stage reads is
     * refused first ({@link PreprocessSettings}).
     */
    public static DatabaseMetadata build(SparkSession spark, InputSchema schema, Path rawDir, Path outDir,
            Options options) {
        PreprocessSettings.of(spark); // a misspelt setting is refused before any work
        Path out = outDir.toAbsolutePath();
        Path work = out.resolveSibling("." + out.getFileName() + ".tmp-" + UUID.randomUUID());
        Map<String, String> saved = new HashMap<>();
        for (Map.Entry<String, String> e : SESSION_CONF.entrySet()) {
            saved.put(e.getKey(), spark.conf().get(e.getKey(), null));
            spark.conf().set(e.getKey(), e.getValue());
        }
        for (Map.Entry<String, String> e : TUNING_CONF.entrySet()) {
            if (!spark.conf().contains(e.getKey())) {
                saved.put(e.getKey(), null);
                spark.conf().set(e.getKey(), e.getValue());
            }
        }
        // Spark's default, 200 per shuffle, makes every map task write 200 pieces; set again from
        // the row count once the tables are loaded.
        boolean tunePartitions = !spark.conf().contains(SHUFFLE_PARTITIONS);
        if (tunePartitions) {
            saved.put(SHUFFLE_PARTITIONS, null);
            spark.conf().set(SHUFFLE_PARTITIONS, Integer.toString(shufflePartitions(spark, 0, options)));
        }
        BuildContext ctx = new BuildContext(spark, schema, rawDir.toAbsolutePath(), work, options);
        boolean done = false;
        try {
            Files.createDirectories(work.resolve(DatabaseLayout.TABLES_DIR));
            Files.createDirectories(work.resolve(DatabaseLayout.TASKS_DIR));
            DatabaseMetadata metadata = buildAll(ctx, tunePartitions);
            deleteTree(ctx.parts);
            replace(work, out);
            done = true;
            return metadata;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            ctx.release();
            for (Map.Entry<String, String> e : saved.entrySet()) {
                if (e.getValue() == null) {
                    spark.conf().unset(e.getKey());
                } else {
                    spark.conf().set(e.getKey(), e.getValue());
                }
            }
            if (!done) {
                deleteTree(work);
            }
        }
    }

    private static void stage(BuildContext ctx, int n, String what) {
        ctx.options.progress().accept(String.format(Locale.ROOT, "stage %d/%d: %s", n, STAGES, what));
    }

    /**
     * Shuffle partitions when the session leaves them to us: two per core, or one per
     * {@code rowsPerPartition} input rows when that is more, so a cluster's shuffles grow with the data.
     */
    static int shufflePartitions(SparkSession spark, long rows, Preprocessor.Options options) {
        long byRows = (rows + options.rowsPerPartition() - 1) / options.rowsPerPartition();
        return (int) Math.min(100_000, Math.max(2L * spark.sparkContext().defaultParallelism(), byRows));
    }

    private static DatabaseMetadata buildAll(BuildContext ctx, boolean tunePartitions) throws IOException {
        InputSchema schema = ctx.schema;
        stage(ctx, 1, "loading " + schema.tables().size() + " tables, checking " + schema.tasks().size()
                + " task queries");
        List<LoadedTable> tables = LoadedTable.loadAll(ctx);
        if (tunePartitions) {
            long rows = tables.stream().mapToLong(LoadedTable::rows).sum();
            int n = shufflePartitions(ctx.spark, rows, ctx.options);
            ctx.spark.conf().set(SHUFFLE_PARTITIONS, Integer.toString(n));
            ctx.info(String.format(Locale.ROOT, "%d shuffle partitions (%d rows, %d cores)", n, rows,
                    ctx.spark.sparkContext().defaultParallelism()));
        }
        for (InputSchema.Task task : schema.tasks()) {
            TaskQueries.analyze(ctx, tables, task); // a query Spark SQL cannot run fails before any heavy stage
        }
        stage(ctx, 2, "text vocabulary");
        TextVocabulary text = TextVocabulary.build(ctx, tables);
        stage(ctx, 3, "column statistics, categories and the categorical vocabulary");
        ColumnStatistics statistics = ColumnStatistics.compute(ctx, tables, text);
        CategoricalVocabulary categorical = CategoricalVocabulary.build(ctx, tables, statistics.stats());
        stage(ctx, 4, "embeddings (" + ctx.options.embedder() + ")");
        EmbeddingFiles.write(ctx, tables, categorical, text);
        stage(ctx, 5, "encoding tables");
        TableEncoder.encodeAll(ctx, tables, statistics, categorical);
        stage(ctx, 6, "graph");
        PrimaryKeyMaps pkMaps = new PrimaryKeyMaps(ctx);
        GraphWriter.write(ctx, tables, statistics.orderedTables(), pkMaps);
        stage(ctx, 7, "tasks");
        List<TaskMetadata> tasks = TaskWriter.writeAll(ctx, tables, pkMaps, categorical, statistics);
        stage(ctx, 8, "metadata.json");
        DatabaseMetadata metadata = new DatabaseMetadata(tableMetadata(tables), columnMetadata(schema, tables),
                statistics.stats(), tasks, statistics.globalTsMean(), statistics.globalTsStd());
        DatabaseWriter.writeMetadata(ctx.work, metadata); // validates it first
        return metadata;
    }

    private static List<TableMetadata> tableMetadata(List<LoadedTable> tables) {
        List<TableMetadata> out = new ArrayList<>();
        for (LoadedTable t : tables) {
            InputSchema.Table s = t.schema();
            int pk = s.primaryKey() == null ? -1 : s.columnIndex(s.primaryKey());
            int tc = s.temporalColumn() == null ? -1 : s.columnIndex(s.temporalColumn());
            out.add(new TableMetadata(s.name(), t.colStart(), t.colStart() + s.columns().size(), (int) t.rowStart(),
                    (int) t.rowEnd(), pk < 0 ? -1 : t.colStart() + pk, tc < 0 ? -1 : t.colStart() + tc));
        }
        return out;
    }

    private static List<ColumnMetadata> columnMetadata(InputSchema schema, List<LoadedTable> tables) {
        List<ColumnMetadata> out = new ArrayList<>();
        for (LoadedTable t : tables) {
            for (InputSchema.Column c : t.schema().columns()) {
                int target = -1;
                if (c.foreignTable() != null) {
                    int ti = schema.tableIndex(c.foreignTable());
                    if (ti >= 0) {
                        int cj = schema.tables().get(ti).columnIndex(c.foreignColumn());
                        target = cj < 0 ? -1 : tables.get(ti).colStart() + cj;
                    }
                }
                out.add(new ColumnMetadata(c.name(), c.stype(), target));
            }
        }
        return out;
    }

    /** Moves {@code work} to {@code out}, replacing an older database there. */
    private static void replace(Path work, Path out) throws IOException {
        Path old = null;
        if (Files.exists(out)) {
            old = out.resolveSibling("." + out.getFileName() + ".old-" + UUID.randomUUID());
            Files.move(out, old, StandardCopyOption.ATOMIC_MOVE);
        }
        Files.move(work, out, StandardCopyOption.ATOMIC_MOVE);
        if (old != null) {
            deleteTree(old);
        }
    }

    static void deleteTree(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (var walk = Files.walk(dir)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete " + dir, e);
        }
    }
}
