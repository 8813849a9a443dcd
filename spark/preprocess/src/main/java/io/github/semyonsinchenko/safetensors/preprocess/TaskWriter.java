package io.github.semyonsinchenko.safetensors.preprocess;

import static io.github.semyonsinchenko.safetensors.preprocess.SparkColumns.ref;
import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.monotonically_increasing_id;
import static org.apache.spark.sql.functions.sum;
import static org.apache.spark.sql.functions.when;

import io.github.semyonsinchenko.safetensors.sampler.db.ColumnStats;
import io.github.semyonsinchenko.safetensors.sampler.db.DatabaseLayout;
import io.github.semyonsinchenko.safetensors.sampler.db.SemanticType;
import io.github.semyonsinchenko.safetensors.sampler.db.TaskMetadata;
import io.github.semyonsinchenko.safetensors.sampler.db.ValueEncoding;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.function.Function2;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * Stage 7, one task file (spec §5.3): the query's rows whose anchor key resolves, in query order
 * (Q16), with observation times and the encoded target; the target statistics over the kept rows.
 */
final class TaskWriter {
    private TaskWriter() {}

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
        // The query's order is the seed order (Q16); an id taken right after the query keeps it.
        Dataset<Row> seeds = result.select(monotonically_increasing_id().as("seq"),
                SparkColumns.key(ref(task.anchorKey()), rs.apply(task.anchorKey()).dataType(), where + ", anchor key")
                        .as("key"), obs.as("obs"), target.as("target"));
        Dataset<Row> resolved = seeds.join(pkMaps.of(anchor), col("key").equalTo(col("pk"))); // unresolved anchors drop
        Column observation;
        if (task.observationTimeColumn() != null) {
            observation = col("obs");
        } else if (anchor.schema().temporalColumn() != null) {
            if (!anchor.hasTemporal()) {
                throw new PreprocessException(where + ": temporal column '" + anchor.schema().temporalColumn()
                        + "' of anchor table '" + anchor.schema().name() + "' is not in its Parquet data");
            }
            observation = col("ptc"); // the anchor row's temporal value, carried by the key map
        } else {
            observation = lit(null).cast(DataTypes.LongType);
        }
        Dataset<Row> kept = ctx.persist(resolved.select(col("seq"), col("prow"), observation.as("obs"),
                col("target")));
        long n = kept.count();
        Dataset<Row> ordered = ctx.persist(kept.repartitionByRange(ctx.partitions(n), col("seq"))
                .sortWithinPartitions("seq"));
        if (n == 0) {
            ctx.info(task.name() + ": no seed resolves to an anchor row; skipped (as headwater, later tasks shift down)");
            return null;
        }
        SemanticType stype = task.targetStype();
        ColumnStats targetStats;
        HashMap<String, Integer> cats = null;
        switch (stype) {
            case NUMERICAL -> {
                OrderedStats.Numerical acc = new OrderedStats.Numerical();
                JavaRDD<StatChunks.Chunk> chunks = targetChunks(ctx, ordered, false);
                ctx.forEachInOrder(chunks, c -> acc.add((double[]) c.values()[0]));
                acc.endFirstPass();
                ctx.forEachInOrder(chunks, c -> acc.addSquares((double[]) c.values()[0]));
                targetStats = acc.stats(n - acc.count);
            }
            case TIMESTAMP -> {
                OrderedStats.Timestamp acc = new OrderedStats.Timestamp();
                JavaRDD<StatChunks.Chunk> chunks = targetChunks(ctx, ordered, true);
                ctx.forEachInOrder(chunks, c -> acc.add((long[]) c.values()[0]));
                acc.endFirstPass();
                ctx.forEachInOrder(chunks, c -> acc.addSquares((long[]) c.values()[0]));
                targetStats = acc.stats(n - acc.count);
            }
            case BOOLEAN -> {
                Row c = ordered.agg(sum(when(col("target").isNull(), 1L).otherwise(0L)),
                        sum(when(col("target").equalTo(true), 1L).otherwise(0L)),
                        sum(when(col("target").equalTo(false), 1L).otherwise(0L))).first();
                targetStats = new ColumnStats.Boolean(c.getLong(0), c.getLong(1), c.getLong(2));
            }
            case CATEGORICAL -> {
                long nulls = ordered.where(col("target").isNull()).count();
                List<String> categories = categories(ordered, "target");
                cats = categorical.indices(task.targetColumn(), categories);
                int start = categories.isEmpty() ? 0 : cats.get(categories.getFirst());
                targetStats = new ColumnStats.Categorical(nulls, categories, start);
            }
            default -> throw new IllegalStateException(stype.toString());
        }
        Path dir = ctx.parts.resolve("task-" + task.name().hashCode() + "-" + UUID.randomUUID());
        ColumnStats.Numerical num = targetStats instanceof ColumnStats.Numerical x ? x : null;
        List<Parts.Info> infos = ordered.select("prow", "obs", "target").javaRDD().mapPartitionsWithIndex(
                new EncodePartition(stype, num == null ? 0.0 : num.mean(), num == null ? 1.0 : num.std(),
                        statistics.globalTsMean(), statistics.globalTsStd(), cats, dir.toString()), true).collect();
        Path file = DatabaseLayout.taskFile(ctx.work, task.name());
        try (Parts.Assembler a = new Parts.Assembler(file)) {
            a.u32(n);
            a.u32(0);
            for (int section = 0; section < 4; section++) {
                boolean bits = section == 2 || (section == 3 && stype == SemanticType.BOOLEAN);
                for (Parts.Info info : Parts.inOrder(infos)) {
                    Path part = Parts.partFile(dir, section, info.partition());
                    if (bits) {
                        a.appendBits(part, info.rows());
                    } else {
                        a.appendBytes(part);
                    }
                }
                a.endBits();
                a.pad8();
            }
        }
        Parts.checkSize(file, DatabaseLayout.taskFileSize(stype, n));
        ctx.info(String.format(Locale.ROOT, "%s: %d seeds", task.name(), n));
        return new TaskMetadata(task.name(), anchorIdx, stype, (int) n, targetStats);
    }

    /** The target's non-null values per ordered partition (field 1 of (seq, target)). */
    private static JavaRDD<StatChunks.Chunk> targetChunks(BuildContext ctx, Dataset<Row> ordered, boolean timestamp) {
        SemanticType stype = timestamp ? SemanticType.TIMESTAMP : SemanticType.NUMERICAL;
        return ctx.persist(ordered.select("seq", "target").javaRDD().mapPartitions(new StatChunks(
                new SemanticType[] {stype}, new int[] {-1}, new int[] {1}, new int[] {0})));
    }

    /** Distinct non-null values sorted by UTF-8 bytes; they go into metadata.json, so the driver holds them anyway. */
    private static List<String> categories(Dataset<Row> df, String column) {
        List<String> values = new ArrayList<>();
        for (Row r : df.select(col(column)).where(col(column).isNotNull()).distinct().collectAsList()) {
            values.add(r.getString(0));
        }
        values.sort(Utf8.BYTE_ORDER);
        return values;
    }

    /** Encodes one ordered partition of a task's seeds. */
    private record EncodePartition(SemanticType stype, double mean, double std, double tsMean, double tsStd,
            HashMap<String, Integer> categories, String dir)
            implements Function2<Integer, Iterator<Row>, Iterator<Parts.Info>> {
        @Override
        public Iterator<Parts.Info> call(Integer partition, Iterator<Row> rows) throws IOException {
            float[] ts = new float[DatabaseLayout.TIMESTAMP_DIM];
            long n = 0;
            try (Parts.Out out = new Parts.Out(dir, partition, 4)) {
                while (rows.hasNext()) {
                    Row r = rows.next();
                    out.section(0).u32((int) r.getLong(0));
                    out.section(1).i64(r.isNullAt(1) ? DatabaseLayout.NO_OBSERVATION_TIME : r.getLong(1));
                    boolean valid = !r.isNullAt(2);
                    out.section(2).bit(valid);
                    Parts.Section values = out.section(3);
                    switch (stype) {
                        case NUMERICAL -> values.f32(valid ? ValueEncoding.zScore(r.getDouble(2), mean, std) : 0f);
                        case TIMESTAMP -> {
                            if (valid) {
                                ValueEncoding.timestampFeatures(r.getLong(2), tsMean, tsStd, ts, 0);
                            } else {
                                Arrays.fill(ts, 0f);
                            }
                            for (float f : ts) {
                                values.f32(f);
                            }
                        }
                        case BOOLEAN -> values.bit(valid && r.getBoolean(2));
                        case CATEGORICAL -> values.u32(valid ? categories.getOrDefault(r.getString(2), 0) : 0);
                        default -> throw new IllegalStateException(stype.toString());
                    }
                    n++;
                }
                return List.of(out.commit(n)).iterator();
            }
        }
    }
}
