package io.github.semyonsinchenko.safetensors.preprocess;

import io.github.semyonsinchenko.safetensors.sampler.db.ColumnStats;
import io.github.semyonsinchenko.safetensors.sampler.db.DatabaseLayout;
import io.github.semyonsinchenko.safetensors.sampler.db.SemanticType;
import io.github.semyonsinchenko.safetensors.sampler.db.ValueEncoding;
import java.io.IOException;
import java.io.Serializable;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;

/** Stage 5, one table's column store (spec §4 and §5.2), encoded by the partitions of its ordered rows. */
final class TableEncoder {
    private TableEncoder() {}

    /** What an executor needs to encode one column. */
    private record ColumnPlan(SemanticType stype, boolean present, int validField, int valueField, int textSlot,
            double mean, double std, HashMap<String, Integer> categories) implements Serializable {

        int sections() {
            return switch (stype) {
                case IGNORED -> 0;
                case IDENTIFIER -> 1;
                default -> 2;
            };
        }
    }

    static void encode(BuildContext ctx, LoadedTable t, OrderedTable ordered, ColumnStatistics statistics,
            CategoricalVocabulary categorical) throws IOException {
        List<InputSchema.Column> columns = t.schema().columns();
        List<String> fields = Arrays.asList(ordered.rows().columns());
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
            plans[j] = new ColumnPlan(c.stype(), t.present()[j], fields.indexOf("v" + j), fields.indexOf("c" + j),
                    textSlots[j], mean, std, cats);
            sections += plans[j].sections();
        }
        Path dir = ctx.parts.resolve("table-" + t.index());
        EncodePartition encoder = new EncodePartition(t.schema().name(), fields.indexOf(BuildContext.ROW), plans,
                sections, ordered.ranges(), statistics.globalTsMean(), statistics.globalTsStd(), dir.toString());
        JavaRDD<Row> rows = ordered.rows().javaRDD();
        List<Parts.Info> infos;
        if (ordered.text() == null) {
            infos = rows.mapPartitionsWithIndex((p, it) -> encoder.call(p, it, new long[0][]), true).collect();
        } else {
            // Same partition count, and partition p of both covers the same rows (RowRanges).
            infos = rows.zipPartitions(ordered.text(), (it, text) -> encoder.call(TaskContext.getPartitionId(), it,
                    text.next())).collect();
        }
        Path file = DatabaseLayout.tableFile(ctx.work, t.schema().name());
        try (Parts.Assembler a = new Parts.Assembler(file)) {
            a.u32(t.rows());
            a.u32(columns.size());
            int section = 0;
            for (ColumnPlan plan : plans) {
                for (int k = 0; k < plan.sections(); k++, section++) {
                    boolean bits = k == 0 || plan.stype() == SemanticType.BOOLEAN;
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
        }
        long expected = DatabaseLayout.tableFileSize(columns.stream().map(InputSchema.Column::stype).toList(), t.rows());
        Parts.checkSize(file, expected);
        ctx.info(String.format(Locale.ROOT, "%s: %d rows in %d partitions", t.schema().name(), t.rows(), infos.size()));
    }

    /**
     * Encodes one ordered partition of a table: every column's sections.
     *
     * @param rowField the field of the row position, checked against {@code ranges}
     */
    private record EncodePartition(String table, int rowField, ColumnPlan[] plans, int sections, RowRanges ranges,
            double tsMean, double tsStd, String dir) implements Serializable {

        /** {@code text}: per text slot its packed (row, index) pairs for this partition's rows, sorted. */
        Iterator<Parts.Info> call(int partition, Iterator<Row> rows, long[][] text) throws IOException {
            float[] ts = new float[DatabaseLayout.TIMESTAMP_DIM];
            int[] cursor = new int[text.length];
            long first = ranges.first()[partition];
            long n = 0;
            try (Parts.Out out = new Parts.Out(dir, partition, sections)) {
                while (rows.hasNext()) {
                    Row r = rows.next();
                    long row = r.getLong(rowField);
                    if (row != first + n) { // the text indices are laid out for exactly these rows
                        throw new IllegalStateException(String.format(Locale.ROOT,
                                "table '%s', partition %d: row %d where row %d was expected", table, partition, row,
                                first + n));
                    }
                    int section = 0;
                    for (ColumnPlan p : plans) {
                        if (p.stype() == SemanticType.IGNORED) {
                            continue;
                        }
                        boolean valid = p.present() && r.getBoolean(p.validField());
                        out.section(section).bit(valid);
                        if (p.stype() == SemanticType.IDENTIFIER) {
                            section++;
                            continue;
                        }
                        Parts.Section values = out.section(section + 1);
                        // Text columns carry their index (t<j>) instead of the value (c<j>).
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
                                    ? p.categories().getOrDefault(r.getString(p.valueField()), 0) : 0);
                            // A text index is only found for a non-null value in the vocabulary.
                            case TEXT -> values.u32(p.textSlot() >= 0 ? textIndex(text[p.textSlot()], cursor,
                                    p.textSlot(), row) : 0);
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
                return List.of(out.commit(n)).iterator();
            }
        }

        /** The index of {@code row} in a slot's sorted pairs (rows ascend, so a cursor suffices), or 0. */
        private static int textIndex(long[] packed, int[] cursor, int slot, long row) {
            int c = cursor[slot];
            while (c < packed.length && (packed[c] >>> 32) < row) {
                c++;
            }
            cursor[slot] = c;
            return c < packed.length && (packed[c] >>> 32) == row ? (int) packed[c] : 0;
        }
    }
}
