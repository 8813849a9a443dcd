package io.github.semyonsinchenko.safetensors.preprocess.table;

import static org.apache.spark.sql.functions.col;

import io.github.semyonsinchenko.safetensors.preprocess.BuildContext;
import io.github.semyonsinchenko.safetensors.preprocess.input.InputSchema;
import io.github.semyonsinchenko.safetensors.preprocess.input.LoadedTable;
import io.github.semyonsinchenko.safetensors.preprocess.partition.Parts;
import io.github.semyonsinchenko.safetensors.preprocess.partition.RowRanges;
import io.github.semyonsinchenko.safetensors.preprocess.partition.U32Pairs;
import io.github.semyonsinchenko.safetensors.preprocess.stats.CategoricalVocabulary;
import io.github.semyonsinchenko.safetensors.preprocess.stats.ColumnStatistics;
import io.github.semyonsinchenko.safetensors.preprocess.stats.OrderedTable;
import io.github.semyonsinchenko.safetensors.preprocess.text.TextIndices;
import io.github.semyonsinchenko.safetensors.sampler.db.ColumnStats;
import io.github.semyonsinchenko.safetensors.sampler.db.DatabaseLayout;
import io.github.semyonsinchenko.safetensors.sampler.db.DatabaseWriter;
import io.github.semyonsinchenko.safetensors.sampler.db.SectionWriter;
import io.github.semyonsinchenko.safetensors.sampler.db.SemanticType;
import io.github.semyonsinchenko.safetensors.sampler.db.ValueEncoding;
import java.io.IOException;
import java.io.Serializable;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.unsafe.types.UTF8String;
import scala.Tuple2;

/**
 * Stage 5, each table's column store (spec §4 and §5.2), encoded by the partitions of its ordered
 * rows, read as Spark's own rows holding only the fields encoded (no conversion to {@code Row},
 * categories looked up by their UTF-8 bytes). Text columns are not read: their indices and null
 * bits come from the vocabulary ({@link TextIndices}). It also counts the nulls of identifier and
 * text columns, which stage 3 does not read ({@link ColumnStatistics#setEncodedNulls}).
 */
public final class TableEncoder {
    private TableEncoder() {}

    /** What an executor needs to encode one column. */
    private record ColumnPlan(SemanticType stype, boolean present, int validField, int valueField, int textSlot,
            double mean, double std, HashMap<String, Integer> categories) implements Serializable {

        int sections() {
            return DatabaseLayout.columnSections(stype).size();
        }
    }

    /** A partition's result, tagged with its table, with its null counts per column (identifier and text columns). */
    private record Encoded(int table, Parts.Info info, long[] nulls) implements Serializable {}

    /** One table's plan and its encoding RDD (one element per partition). */
    private record TableJob(LoadedTable table, ColumnPlan[] plans, Path dir, JavaRDD<Encoded> encoded) {

        /** Cells encoded: rows times columns not ignored. */
        long cells() {
            return table.rows() * Arrays.stream(plans).filter(p -> p.stype() != SemanticType.IGNORED).count();
        }
    }

    /**
     * Encodes every table in one Spark job (a union of the tables' partitions: one job's fixed
     * cost instead of one per table, and small tables fill the cores while large ones run), then
     * assembles each table's file on the driver. The union starts with the table with the most
     * cells: a table of one Parquet row group (headwater's input) is one task, and with few tasks
     * on few cores, a large one started last decides when the job ends.
     */
    public static void encodeAll(BuildContext ctx, List<LoadedTable> tables, ColumnStatistics statistics,
            CategoricalVocabulary categorical) throws IOException {
        List<TableJob> jobs = new ArrayList<>();
        for (int ti = 0; ti < tables.size(); ti++) {
            jobs.add(plan(ctx, tables.get(ti), statistics.orderedTables().get(ti), statistics, categorical));
        }
        if (jobs.isEmpty()) {
            return;
        }
        List<TableJob> largestFirst = new ArrayList<>(jobs);
        largestFirst.sort(Comparator.comparingLong(TableJob::cells).reversed());
        JavaRDD<Encoded> all = largestFirst.getFirst().encoded();
        for (int k = 1; k < largestFirst.size(); k++) {
            all = all.union(largestFirst.get(k).encoded());
        }
        List<List<Parts.Info>> infos = new ArrayList<>();
        List<long[]> nulls = new ArrayList<>();
        for (TableJob job : jobs) {
            infos.add(new ArrayList<>());
            nulls.add(new long[job.table().schema().columns().size()]);
        }
        for (Encoded e : all.collect()) {
            infos.get(e.table()).add(e.info());
            long[] sum = nulls.get(e.table());
            for (int j = 0; j < sum.length; j++) {
                sum[j] += e.nulls()[j];
            }
        }
        for (int k = 0; k < jobs.size(); k++) {
            statistics.setEncodedNulls(jobs.get(k).table(), nulls.get(k));
            assemble(ctx, jobs.get(k), infos.get(k));
        }
    }

    private static TableJob plan(BuildContext ctx, LoadedTable t, OrderedTable ordered, ColumnStatistics statistics,
            CategoricalVocabulary categorical) {
        List<InputSchema.Column> columns = t.schema().columns();
        List<Column> fields = new ArrayList<>(List.of(col(BuildContext.ROW)));
        int[] textSlots = new int[columns.size()];
        Arrays.fill(textSlots, -1);
        for (int k = 0; k < ordered.textColumns().length; k++) {
            textSlots[ordered.textColumns()[k]] = k;
        }
        ColumnPlan[] plans = new ColumnPlan[columns.size()];
        int sections = 0;
        for (int j = 0; j < columns.size(); j++) {
            InputSchema.Column c = columns.get(j);
            ColumnStats s = statistics.stats().get(t.colStart() + j);
            double mean = s instanceof ColumnStats.Numerical n ? n.mean() : 0.0;
            double std = s instanceof ColumnStats.Numerical n ? n.std() : 1.0;
            HashMap<String, Integer> cats = s instanceof ColumnStats.Categorical cat
                    ? categorical.indices(c.name(), cat.categories()) : null;
            int valid = -1;
            int value = -1;
            // A text column's null bits come with its indices (TextIndices), so its values, the
            // bulk of the Parquet bytes, are not decoded again.
            if (c.stype() == SemanticType.TEXT && t.present()[j] && t.rows() > 0 && textSlots[j] < 0) {
                throw new IllegalStateException("table '" + t.schema().name() + "', column '" + c.name()
                        + "': no text indices");
            }
            if (c.stype() != SemanticType.IGNORED && c.stype() != SemanticType.TEXT) {
                valid = fields.size();
                fields.add(col("v" + j));
            }
            // Text columns carry their index (from the text RDD) instead of the value.
            if (c.stype() != SemanticType.IGNORED && c.stype() != SemanticType.IDENTIFIER
                    && c.stype() != SemanticType.TEXT) {
                value = fields.size();
                fields.add(col("c" + j));
            }
            plans[j] = new ColumnPlan(c.stype(), t.present()[j], valid, value, textSlots[j], mean, std, cats);
            sections += plans[j].sections();
        }
        Path dir = ctx.parts.resolve("table-" + t.index());
        EncodePartition encoder = new EncodePartition(t.index(), t.schema().name(), 0, plans, sections,
                ordered.ranges(), statistics.globalTsMean(), statistics.globalTsStd(), dir.toString());
        JavaRDD<InternalRow> rows = ordered.rows().select(fields.toArray(Column[]::new)).queryExecution().toRdd()
                .toJavaRDD();
        JavaRDD<Encoded> encoded;
        if (ordered.text() == null) {
            encoded = rows.mapPartitionsWithIndex((p, it) -> one(encoder.call(p, it, new long[0][])), true);
        } else {
            // Same partition count, and partition p of both covers the same rows (RowRanges). The
            // index comes from the text RDD's own partition: within the union, TaskContext's
            // partition id is the union's.
            JavaRDD<Tuple2<Integer, long[][]>> text = ordered.text().mapPartitionsWithIndex(
                    (p, it) -> List.of(new Tuple2<>(p, it.next())).iterator(), true);
            encoded = rows.zipPartitions(text, (it, tx) -> {
                Tuple2<Integer, long[][]> x = tx.next();
                return one(encoder.call(x._1(), it, x._2()));
            });
        }
        return new TableJob(t, plans, dir, encoded);
    }

    private static Iterator<Encoded> one(Encoded e) {
        return List.of(e).iterator();
    }

    private static void assemble(BuildContext ctx, TableJob job, List<Parts.Info> infos) throws IOException {
        LoadedTable t = job.table();
        List<Parts.Info> ordered = Parts.inOrder(infos);
        long[] rows = Parts.rows(ordered);
        try (SectionWriter w = DatabaseWriter.openTable(ctx.work, t.schema().name(), t.rows(),
                t.schema().columns().stream().map(InputSchema.Column::stype).toList())) {
            int section = 0;
            for (ColumnPlan plan : job.plans()) {
                for (DatabaseLayout.Section s : DatabaseLayout.columnSections(plan.stype())) {
                    w.appendSection(s, Parts.files(job.dir(), section++, ordered), rows);
                }
            }
            w.finish();
        }
        ctx.info(String.format(Locale.ROOT, "%s: %d rows in %d partitions", t.schema().name(), t.rows(), infos.size()));
    }

    /** A text cell without a pair: null (or a column missing from the Parquet data). */
    private static final long TEXT_NULL = -1;

    /**
     * Encodes one ordered partition of a table: every column's sections.
     *
     * @param rowField the field of the row position, checked against {@code ranges}
     */
    private record EncodePartition(int tableIndex, String table, int rowField, ColumnPlan[] plans, int sections,
            RowRanges ranges, double tsMean, double tsStd, String dir) implements Serializable {

        /** {@code text}: per text slot its packed (row, index) pairs for this partition's rows, sorted. */
        Encoded call(int partition, Iterator<InternalRow> rows, long[][] text) throws IOException {
            float[] ts = new float[DatabaseLayout.TIMESTAMP_DIM];
            int[] cursor = new int[text.length];
            long[] nulls = new long[plans.length];
            List<HashMap<UTF8String, Integer>> categories = new ArrayList<>();
            for (ColumnPlan p : plans) {
                HashMap<UTF8String, Integer> byBytes = null;
                if (p.categories() != null) {
                    byBytes = new HashMap<>();
                    for (var e : p.categories().entrySet()) {
                        byBytes.put(UTF8String.fromString(e.getKey()), e.getValue());
                    }
                }
                categories.add(byBytes);
            }
            long first = ranges.first()[partition];
            long n = 0;
            try (Parts.Out out = new Parts.Out(dir, partition, sections)) {
                while (rows.hasNext()) {
                    InternalRow r = rows.next();
                    long row = r.getLong(rowField);
                    if (row != first + n) { // the text indices are laid out for exactly these rows
                        throw new IllegalStateException(String.format(Locale.ROOT,
                                "table '%s', partition %d: row %d where row %d was expected", table, partition, row,
                                first + n));
                    }
                    int section = 0;
                    for (int j = 0; j < plans.length; j++) {
                        ColumnPlan p = plans[j];
                        if (p.stype() == SemanticType.IGNORED) {
                            continue;
                        }
                        long textIndex = p.textSlot() >= 0 ? textIndex(text[p.textSlot()], cursor, p.textSlot(), row)
                                : TEXT_NULL;
                        boolean valid = p.stype() == SemanticType.TEXT ? textIndex != TEXT_NULL
                                : p.present() && r.getBoolean(p.validField());
                        out.section(section).bit(valid);
                        if (!valid) {
                            nulls[j]++; // the driver reads those of identifier and text columns
                        }
                        if (p.stype() == SemanticType.IDENTIFIER) {
                            section++;
                            continue;
                        }
                        SectionWriter values = out.section(section + 1);
                        boolean hasValue = p.present() && p.valueField() >= 0 && !r.isNullAt(p.valueField());
                        switch (p.stype()) {
                            case NUMERICAL -> values.f32(hasValue
                                    ? ValueEncoding.zScore(r.getDouble(p.valueField()), p.mean(), p.std()) : 0f);
                            case TIMESTAMP -> {
                                if (hasValue) {
                                    ValueEncoding.timestampFeatures(r.getLong(p.valueField()), tsMean, tsStd, ts, 0);
                                } else {
                                    Arrays.fill(ts, 0f);
                                }
                                for (float f : ts) {
                                    values.f32(f);
                                }
                            }
                            case BOOLEAN -> values.bit(hasValue && r.getBoolean(p.valueField()));
                            case CATEGORICAL -> values.u32(hasValue
                                    ? categories.get(j).getOrDefault(r.getUTF8String(p.valueField()), 0) : 0);
                            // A null or cut value finds no index.
                            case TEXT -> values.u32(valid && textIndex != TextIndices.NO_INDEX ? (int) textIndex : 0);
                            default -> throw new IllegalStateException(p.stype().toString());
                        }
                        section += 2;
                    }
                    n++;
                }
                if (n != ranges.count()[partition]) {
                    throw new IllegalStateException(String.format(Locale.ROOT,
                            "table '%s', partition %d: %d rows where %d were expected", table, partition, n,
                            ranges.count()[partition]));
                }
                return new Encoded(tableIndex, out.commit(n), nulls);
            }
        }

        /**
         * The index of {@code row} in a slot's sorted pairs (rows ascend, so a cursor suffices), or
         * {@link #TEXT_NULL} when the row has no pair: its value is null.
         */
        private static long textIndex(long[] packed, int[] cursor, int slot, long row) {
            int c = cursor[slot];
            while (c < packed.length && U32Pairs.first(packed[c]) < row) {
                c++;
            }
            cursor[slot] = c;
            return c < packed.length && U32Pairs.first(packed[c]) == row ? U32Pairs.second(packed[c]) : TEXT_NULL;
        }
    }
}
