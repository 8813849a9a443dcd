package io.github.semyonsinchenko.safetensors.preprocess;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.collect_set;
import static org.apache.spark.sql.functions.count;
import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.sum;
import static org.apache.spark.sql.functions.when;

import io.github.semyonsinchenko.safetensors.sampler.db.ColumnStats;
import io.github.semyonsinchenko.safetensors.sampler.db.SemanticType;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;

/**
 * Stage 3, per-column statistics in global column order and the global timestamp statistics.
 * Counts and category sets are order-free Spark aggregations; numerical and timestamp sums are
 * folded by {@link OrderedStats} in row order, so they do not depend on the partitioning.
 *
 * @param stats one per global column (categorical {@code cat_emb_start} still 0)
 * @param orderedTables per table, its rows in order with the text indices joined, cached for encoding
 */
record ColumnStatistics(List<ColumnStats> stats, List<Dataset<Row>> orderedTables, double globalTsMean,
        double globalTsStd) {

    /** A timestamp column's chunks, for the global second pass. */
    private record TimestampColumn(JavaRDD<Object[]> chunks, int chunkIndex) {}

    static ColumnStatistics compute(BuildContext ctx, List<LoadedTable> tables, TextVocabulary text) {
        List<ColumnStats> stats = new ArrayList<>();
        List<Dataset<Row>> orderedTables = new ArrayList<>();
        List<TimestampColumn> tsColumns = new ArrayList<>(); // in global column order
        OrderedStats.Global global = new OrderedStats.Global();
        for (LoadedTable t : tables) {
            List<InputSchema.Column> columns = t.schema().columns();
            List<Column> aggs = orderFreeCounts(columns);
            Row counts = t.df().agg(aggs.getFirst(), aggs.subList(1, aggs.size()).toArray(Column[]::new)).first();
            Dataset<Row> ordered = ctx.ordered(text.withIndices(t), t.rows());
            orderedTables.add(ordered);
            List<String> fieldNames = Arrays.asList(ordered.columns());
            OrderedStats.Numerical[] nums = new OrderedStats.Numerical[columns.size()];
            OrderedStats.Timestamp[] tss = new OrderedStats.Timestamp[columns.size()];
            int[] statCols = t.statColumns();
            if (statCols.length > 0) {
                boolean[] isTimestamp = new boolean[statCols.length];
                for (int k = 0; k < statCols.length; k++) {
                    int j = statCols[k];
                    isTimestamp[k] = columns.get(j).stype() == SemanticType.TIMESTAMP;
                    if (isTimestamp[k]) {
                        tss[j] = new OrderedStats.Timestamp();
                    } else {
                        nums[j] = new OrderedStats.Numerical();
                    }
                }
                int[] statFields = Arrays.stream(statCols).map(j -> fieldNames.indexOf("c" + j)).toArray();
                JavaRDD<Object[]> chunks = ctx.persist(ordered.javaRDD().mapPartitions(
                        new StatChunks(isTimestamp, statFields)));
                ctx.forEachInOrder(chunks, chunk -> {
                    for (int k = 0; k < statCols.length; k++) {
                        int j = statCols[k];
                        if (nums[j] != null) {
                            nums[j].add((double[]) chunk[k]);
                        } else {
                            tss[j].add((long[]) chunk[k]);
                        }
                    }
                });
                for (int j : statCols) {
                    if (nums[j] != null) {
                        nums[j].endFirstPass();
                    } else {
                        tss[j].endFirstPass();
                    }
                }
                ctx.forEachInOrder(chunks, chunk -> {
                    for (int k = 0; k < statCols.length; k++) {
                        int j = statCols[k];
                        if (nums[j] != null) {
                            nums[j].addSquares((double[]) chunk[k]);
                        } else {
                            tss[j].addSquares((long[]) chunk[k]);
                        }
                    }
                });
                for (int k = 0; k < statCols.length; k++) {
                    if (isTimestamp[k]) {
                        tsColumns.add(new TimestampColumn(chunks, k));
                    }
                }
            }
            int a = 1;
            for (int j = 0; j < columns.size(); j++) {
                InputSchema.Column c = columns.get(j);
                long nulls = t.present()[j] ? counts.getLong(a) : 0L;
                a++;
                ColumnStats s = switch (c.stype()) {
                    case IGNORED -> new ColumnStats.Ignored();
                    case IDENTIFIER -> new ColumnStats.Identifier(nulls);
                    case TEXT -> new ColumnStats.Text(nulls);
                    case NUMERICAL -> nums[j] != null ? nums[j].stats(nulls)
                            : new ColumnStats.Numerical(0, 0.0, 0.0, 0.0, 1.0);
                    case TIMESTAMP -> {
                        if (tss[j] == null) {
                            yield new ColumnStats.Timestamp(0, 0, 0, 0.0, 1.0);
                        }
                        global.addColumn(tss[j]);
                        yield tss[j].stats(nulls);
                    }
                    case BOOLEAN -> {
                        long numTrue = counts.getLong(a++);
                        long numFalse = counts.getLong(a++);
                        yield t.present()[j] ? new ColumnStats.Boolean(nulls, numTrue, numFalse)
                                : new ColumnStats.Boolean(0, 0, 0);
                    }
                    case CATEGORICAL -> {
                        List<String> categories = new ArrayList<>(counts.<String>getList(a++));
                        categories.sort(Utf8.BYTE_ORDER);
                        yield new ColumnStats.Categorical(nulls, t.present()[j] ? categories : List.of(), 0);
                    }
                };
                stats.add(s);
            }
            ctx.info(String.format(Locale.ROOT, "%s: %d columns", t.schema().name(), columns.size()));
        }
        // Global timestamp statistics: the mean from the per-column sums, then one running sum of squares.
        global.endFirstPass();
        for (TimestampColumn ts : tsColumns) {
            int k = ts.chunkIndex();
            ctx.forEachInOrder(ts.chunks().map(c -> (long[]) c[k]), global::addSquares);
        }
        ctx.info(String.format(Locale.ROOT, "global timestamps: %d cells, mean %s us, std %s us", global.count,
                global.mean, global.std()));
        return new ColumnStatistics(stats, orderedTables, global.mean, global.std());
    }

    /**
     * One aggregation per table: the row count, then per column its null count, plus true and
     * false counts for booleans and the distinct values for categoricals (they go into
     * metadata.json, so the driver holds them anyway).
     */
    private static List<Column> orderFreeCounts(List<InputSchema.Column> columns) {
        List<Column> aggs = new ArrayList<>();
        aggs.add(count(lit(1)));
        for (int j = 0; j < columns.size(); j++) {
            SemanticType s = columns.get(j).stype();
            if (s == SemanticType.IGNORED) {
                aggs.add(lit(0L));
                continue;
            }
            Column isNull = (s == SemanticType.NUMERICAL || s == SemanticType.TIMESTAMP) ? col("c" + j).isNull()
                    : col("v" + j).equalTo(false);
            aggs.add(sum(when(isNull, 1L).otherwise(0L)));
            if (s == SemanticType.BOOLEAN) {
                aggs.add(sum(when(col("c" + j).equalTo(true), 1L).otherwise(0L)));
                aggs.add(sum(when(col("c" + j).equalTo(false), 1L).otherwise(0L)));
            }
            if (s == SemanticType.CATEGORICAL) {
                aggs.add(collect_set(col("c" + j)));
            }
        }
        return aggs;
    }
}
