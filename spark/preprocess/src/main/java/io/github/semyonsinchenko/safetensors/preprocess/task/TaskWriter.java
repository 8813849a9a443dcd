package io.github.semyonsinchenko.safetensors.preprocess.task;

import static io.github.semyonsinchenko.safetensors.preprocess.input.SparkColumns.ref;
import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.monotonically_increasing_id;

import io.github.semyonsinchenko.safetensors.preprocess.BuildContext;
import io.github.semyonsinchenko.safetensors.preprocess.PreprocessException;
import io.github.semyonsinchenko.safetensors.preprocess.input.InputSchema;
import io.github.semyonsinchenko.safetensors.preprocess.input.LoadedTable;
import io.github.semyonsinchenko.safetensors.preprocess.input.SparkColumns;
import io.github.semyonsinchenko.safetensors.preprocess.keys.PrimaryKeyMaps;
import io.github.semyonsinchenko.safetensors.preprocess.partition.Parts;
import io.github.semyonsinchenko.safetensors.preprocess.stats.CategoricalVocabulary;
import io.github.semyonsinchenko.safetensors.preprocess.stats.ColumnStatistics;
import io.github.semyonsinchenko.safetensors.preprocess.stats.OrderedStats;
import io.github.semyonsinchenko.safetensors.preprocess.text.Utf8;
import io.github.semyonsinchenko.safetensors.sampler.db.ColumnStats;
import io.github.semyonsinchenko.safetensors.sampler.db.DatabaseLayout;
import io.github.semyonsinchenko.safetensors.sampler.db.DatabaseWriter;
import io.github.semyonsinchenko.safetensors.sampler.db.SectionReader;
import io.github.semyonsinchenko.safetensors.sampler.db.SectionWriter;
import io.github.semyonsinchenko.safetensors.sampler.db.SemanticType;
import io.github.semyonsinchenko.safetensors.sampler.db.TaskMetadata;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * Stage 7, one task file (spec §5.3): the query's rows whose anchor key resolves, in query order
 * (Q16), with observation times and the encoded target; the target statistics over the kept rows.
 *
 * <p>An anchor table below the bounds ({@link PrimaryKeyMaps#ANCHOR_BYTES_CONF}, {@link PrimaryKeyMaps#broadcastLimit})
 * has its key map and its rows' temporal values broadcast as primitive arrays
 * ({@link PrimaryKeyMaps.Anchor}, built with the graph's maps): one pass over the query's
 * partitions, in their order, resolves the keys and writes the parts ({@link TaskParts}), so the
 * seeds are in query order without a join or a sort; a final ORDER BY is then sorted in one
 * partition ({@link TaskQueries#sortedInOnePartition}). A larger table's key map is joined by a
 * shuffle and the seeds are sorted back by their position in the query result. Either way the seed
 * pass checks that order. The driver folds the statistics from the parts, as it assembles the file
 * from them.
 */
public final class TaskWriter {
    private TaskWriter() {}

    /** Every task's file, in schema order, and the metadata of those written (a task no seed resolves is left out). */
    public static List<TaskMetadata> writeAll(BuildContext ctx, List<LoadedTable> tables, PrimaryKeyMaps pkMaps,
            CategoricalVocabulary categorical, ColumnStatistics statistics) throws IOException {
        List<TaskMetadata> written = new ArrayList<>();
        try {
            for (InputSchema.Task task : ctx.schema.tasks()) {
                TaskMetadata m = materialize(ctx, task, tables, pkMaps, categorical, statistics);
                if (m != null) {
                    written.add(m);
                }
            }
        } finally {
            pkMaps.releaseAnchors();
        }
        return written;
    }

    /** Writes the task's file and returns its metadata, or null when no seed resolves (the task is skipped). */
    static TaskMetadata materialize(BuildContext ctx, InputSchema.Task task, List<LoadedTable> tables,
            PrimaryKeyMaps pkMaps, CategoricalVocabulary categorical, ColumnStatistics statistics) throws IOException {
        String where = "task '" + task.name() + "'";
        int anchorIdx = ctx.schema.tableIndex(task.anchorTable());
        if (anchorIdx < 0) {
            throw new PreprocessException(where + ": anchor_table '" + task.anchorTable() + "' is not in the schema");
        }
        if (!task.targetStype().isTaskTarget()) {
            throw new PreprocessException(where + ": target_stype must be numerical, timestamp, boolean or"
                    + " categorical, was " + task.targetStype().jsonName());
        }
        LoadedTable anchor = tables.get(anchorIdx);
        if (!anchor.hasPk()) {
            throw new PreprocessException(where + ": anchor table '" + task.anchorTable() + "' has no primary key"
                    + " column in its Parquet data, so seeds cannot be resolved");
        }
        Dataset<Row> result = TaskQueries.analyze(ctx, tables, task);
        StructType rs = result.schema();
        for (String c : new String[] {task.anchorKey(), task.targetColumn(), task.observationTimeColumn()}) {
            if (c != null && !SparkColumns.hasField(rs, c)) {
                throw new PreprocessException(String.format(Locale.ROOT, "%s: the query result has no column '%s'"
                        + " (it has %s)", where, c, String.join(", ", rs.fieldNames())));
            }
        }
        Column obs;
        if (task.observationTimeColumn() != null) {
            obs = SparkColumns.micros(ref(task.observationTimeColumn()),
                    rs.apply(task.observationTimeColumn()).dataType(), where + ", observation time");
        } else {
            obs = lit(null).cast(DataTypes.LongType);
        }
        Column target = SparkColumns.value(task.targetStype(), ref(task.targetColumn()),
                rs.apply(task.targetColumn()).dataType(), where + ", target '" + task.targetColumn() + "'");
        Column observation;
        boolean anchorTime = false;
        if (task.observationTimeColumn() != null) {
            observation = col("obs");
        } else if (anchor.schema().temporalColumn() != null) {
            if (!anchor.hasTemporal()) {
                throw new PreprocessException(where + ": temporal column '" + anchor.schema().temporalColumn()
                        + "' of anchor table '" + anchor.schema().name() + "' is not in its Parquet data");
            }
            observation = col("ptc"); // the anchor row's temporal value, carried by the key map
            anchorTime = true;
        } else {
            observation = lit(null).cast(DataTypes.LongType);
        }
        Broadcast<PrimaryKeyMaps.Anchor> map = pkMaps.anchor(anchor, tables, statistics.orderedTables());
        Dataset<Row> query = map != null ? TaskQueries.sortedInOnePartition(result) : result;
        // The query's order is the seed order (Q16); an id taken right after the query keeps it. Being
        // nondeterministic, it also keeps the optimizer from dropping the query's sort under a join.
        Dataset<Row> seeds = query.select(monotonically_increasing_id().as("seq"),
                SparkColumns.key(ref(task.anchorKey()), rs.apply(task.anchorKey()).dataType(), where + ", anchor key")
                        .as("key"), obs.as("obs"), target.as("target"));
        // Spark's own rows (InternalRow), not Row objects: no seed is converted on its way in.
        JavaRDD<InternalRow> ordered;
        if (map != null) {
            // the seed pass resolves the keys: a narrow map keeps the query's order
            ordered = seeds.queryExecution().toRdd().toJavaRDD();
        } else {
            Dataset<Row> keyMap = anchorTime ? pkMaps.of(anchor).select("pk", "prow", "ptc")
                    : pkMaps.of(anchor).select("pk", "prow");
            Column[] kept = {col("seq"), col("prow"), observation.as("obs"), col("target")};
            Dataset<Row> resolved = ctx.persist(seeds.join(keyMap, col("key").equalTo(col("pk"))).select(kept));
            ordered = resolved.repartitionByRange(ctx.partitions(resolved.count()), col("seq"))
                    .sortWithinPartitions("seq").queryExecution().toRdd().toJavaRDD();
        }
        SemanticType stype = task.targetStype();
        HashMap<String, Integer> categoryIndex = stype == SemanticType.CATEGORICAL
                ? categoryIndex(categorical, task.targetColumn()) : null;
        Path dir = ctx.parts.resolve("task-" + task.name().hashCode() + "-" + UUID.randomUUID());
        List<TaskParts.Piece> pieces = new ArrayList<>(ordered.mapPartitionsWithIndex(new TaskParts.SeedPartition(
                task.name(), stype, dir.toString(), map, map != null && anchorTime, categoryIndex), true).collect());
        pieces.sort((a, b) -> Integer.compare(a.info().partition(), b.info().partition()));
        pieces.removeIf(p -> p.info().rows() == 0);
        long n = 0;
        long last = -1;
        for (TaskParts.Piece p : pieces) {
            if (p.first() <= last) {
                throw new IllegalStateException(String.format(Locale.ROOT, "%s: partition %d starts at seed %d, not"
                        + " after seed %d; the seeds are not in query order", where, p.info().partition(), p.first(), last));
            }
            last = p.last();
            n += p.info().rows();
        }
        if (n == 0) {
            ctx.info(task.name() + ": no seed resolves to an anchor row; skipped (as headwater, later tasks shift down)");
            return null;
        }
        long nulls = pieces.stream().mapToLong(TaskParts.Piece::nulls).sum();
        ColumnStats targetStats;
        double mean = 0.0;
        double std = 1.0;
        switch (stype) {
            case NUMERICAL -> {
                OrderedStats.Numerical acc = new OrderedStats.Numerical();
                foldValues(dir, pieces, v -> acc.add(Arrays.stream(v).mapToDouble(Double::longBitsToDouble).toArray()));
                acc.endFirstPass();
                foldValues(dir, pieces, v -> acc.addSquares(Arrays.stream(v).mapToDouble(Double::longBitsToDouble)
                        .toArray()));
                ColumnStats.Numerical num = acc.stats(nulls);
                targetStats = num;
                mean = num.mean();
                std = num.std();
            }
            case TIMESTAMP -> {
                OrderedStats.Timestamp acc = new OrderedStats.Timestamp();
                foldValues(dir, pieces, acc::add);
                acc.endFirstPass();
                foldValues(dir, pieces, acc::addSquares);
                targetStats = acc.stats(nulls);
            }
            case BOOLEAN -> targetStats = new ColumnStats.Boolean(nulls,
                    pieces.stream().mapToLong(TaskParts.Piece::trues).sum(),
                    pieces.stream().mapToLong(TaskParts.Piece::falses).sum());
            case CATEGORICAL -> { // the seed pass wrote the vocabulary indices already
                LinkedHashSet<String> distinct = new LinkedHashSet<>();
                for (TaskParts.Piece p : pieces) {
                    distinct.addAll(Arrays.asList(p.categories()));
                }
                List<String> categories = new ArrayList<>(distinct);
                categories.sort(Utf8.BYTE_ORDER);
                int start = categories.isEmpty() ? 0 : categoryIndex.getOrDefault(categories.getFirst(), 0);
                targetStats = new ColumnStats.Categorical(nulls, categories, start);
            }
            default -> throw new IllegalStateException(stype.toString());
        }
        Path encoded = null;
        if (stype == SemanticType.NUMERICAL || stype == SemanticType.TIMESTAMP) {
            List<TaskParts.Pending> pending = new ArrayList<>();
            for (TaskParts.Piece p : pieces) {
                pending.add(new TaskParts.Pending(p.info().partition(), p.info().rows()));
            }
            encoded = dir.resolve("encoded");
            JavaSparkContext.fromSparkContext(ctx.spark.sparkContext()).parallelize(pending, pending.size())
                    .foreach(new TaskParts.ValuePartition(stype, mean, std, statistics.globalTsMean(),
                            statistics.globalTsStd(), dir.toString(), encoded.toString()));
        }
        List<Parts.Info> infos = pieces.stream().map(TaskParts.Piece::info).toList();
        long[] rows = Parts.rows(infos);
        try (SectionWriter w = DatabaseWriter.openTask(ctx.work, task.name(), n, stype)) {
            List<DatabaseLayout.Section> sections = DatabaseLayout.taskSections(stype);
            for (int section = 0; section < sections.size(); section++) {
                w.appendSection(sections.get(section), section == TaskParts.VALUES && encoded != null
                        ? Parts.files(encoded, 0, infos) : Parts.files(dir, section, infos), rows);
            }
            w.finish();
        }
        ctx.info(String.format(Locale.ROOT, "%s: %d seeds, key map %s", task.name(), n,
                map != null ? "broadcast" : "shuffled"));
        return new TaskMetadata(task.name(), anchorIdx, stype, (int) n, targetStats);
    }

    /**
     * A categorical target's value to its vocabulary index: the strings {@code "<column> is <value>"}
     * of the vocabulary, looked up uncut as {@link CategoricalVocabulary#indices} does (a value not
     * in it gets 0). Known before the seed pass, so that pass writes the final indices.
     */
    static HashMap<String, Integer> categoryIndex(CategoricalVocabulary categorical, String column) {
        String prefix = column + " is ";
        List<String> strings = categorical.strings();
        HashMap<String, Integer> index = new HashMap<>();
        for (int i = 0; i < strings.size(); i++) {
            if (strings.get(i).startsWith(prefix)) {
                index.putIfAbsent(strings.get(i).substring(prefix.length()), i);
            }
        }
        return index;
    }

    @FunctionalInterface
    private interface LongsSink {
        void accept(long[] values);
    }

    /** Feeds the non-null raw target values to {@code sink} in seed order, streaming the parts. */
    private static void foldValues(Path dir, List<TaskParts.Piece> pieces, LongsSink sink) throws IOException {
        long[] buf = new long[8192];
        for (TaskParts.Piece p : pieces) {
            try (SectionReader in = new SectionReader(Parts.partFile(dir, TaskParts.VALUES, p.info().partition()))) {
                for (long left = p.info().rows() - p.nulls(); left > 0; ) {
                    int k = (int) Math.min(left, buf.length);
                    for (int i = 0; i < k; i++) {
                        buf[i] = in.i64();
                    }
                    sink.accept(k == buf.length ? buf : Arrays.copyOf(buf, k));
                    left -= k;
                }
            }
        }
    }
}
