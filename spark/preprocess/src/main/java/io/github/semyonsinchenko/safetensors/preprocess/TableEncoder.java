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
import org.apache.spark.api.java.function.Function2;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;

/** Stage 5, one table's column store (spec §4 and §5.2), encoded by the partitions of its ordered rows. */
final class TableEncoder {
    private TableEncoder() {}

    /** What an executor needs to encode one column. */
    private record ColumnPlan(SemanticType stype, boolean present, int validField, int valueField, int textField,
            double mean, double std, HashMap<String, Integer> categories) implements Serializable {

        int sections() {
            return switch (stype) {
                case IGNORED -> 0;
                case IDENTIFIER -> 1;
                default -> 2;
            };
        }
    }

    static void encode(BuildContext ctx, LoadedTable t, Dataset<Row> ordered, ColumnStatistics statistics,
            CategoricalVocabulary categorical) throws IOException {
        List<InputSchema.Column> columns = t.schema().columns();
        List<String> fields = Arrays.asList(ordered.columns());
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
                    fields.indexOf("t" + j), mean, std, cats);
            sections += plans[j].sections();
        }
        Path dir = ctx.parts.resolve("table-" + t.index());
        List<Parts.Info> infos = ordered.javaRDD().mapPartitionsWithIndex(new EncodePartition(plans, sections,
                statistics.globalTsMean(), statistics.globalTsStd(), dir.toString()), true).collect();
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

    /** Encodes one ordered partition of a table: every column's sections. */
    private record EncodePartition(ColumnPlan[] plans, int sections, double tsMean, double tsStd, String dir)
            implements Function2<Integer, Iterator<Row>, Iterator<Parts.Info>> {
        @Override
        public Iterator<Parts.Info> call(Integer partition, Iterator<Row> rows) throws IOException {
            float[] ts = new float[DatabaseLayout.TIMESTAMP_DIM];
            long n = 0;
            try (Parts.Out out = new Parts.Out(dir, partition, sections)) {
                while (rows.hasNext()) {
                    Row r = rows.next();
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
                            // A text index is only found for a non-null value.
                            case TEXT -> values.u32(p.present() && !r.isNullAt(p.textField())
                                    ? (int) r.getLong(p.textField()) : 0);
                            default -> throw new IllegalStateException(p.stype().toString());
                        }
                        section += 2;
                    }
                    n++;
                }
                return List.of(out.commit(n)).iterator();
            }
        }
    }
}
