package io.github.semyonsinchenko.safetensors.preprocess;

import io.github.semyonsinchenko.safetensors.sampler.db.ColumnStats;
import io.github.semyonsinchenko.safetensors.sampler.db.SemanticType;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.HashSet;
import java.util.function.Consumer;
import java.util.stream.IntStream;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;

/**
 * Stage 3, per-column statistics in global column order and the global timestamp statistics, from
 * one scan per table of its ordered rows ({@link StatChunks}). Counts and category sets are
 * order-free sums; numerical and timestamp sums are folded by {@link OrderedStats} in row order, so
 * they do not depend on the partitioning.
 *
 * @param stats one per global column (categorical {@code cat_emb_start} still 0)
 * @param orderedTables per table, its rows in order and its text indices, for encoding
 */
record ColumnStatistics(List<ColumnStats> stats, List<OrderedTable> orderedTables, double globalTsMean,
        double globalTsStd) {

    /**
     * Most rows a scan partition may hold to serve as ordered rows: the encoder holds a
     * partition's text indices (8 bytes per cell) and the driver a partition's statistics values
     * in memory, so a huge split is sorted into smaller partitions instead.
     */
    static final long MAX_SCAN_PARTITION_ROWS = 4_000_000;

    /** Rows of statistics values the driver fetches per job (at least one partition). */
    private static final long FETCH_ROWS = 2_000_000;

    /** A timestamp column's chunks, for the global second pass. */
    private record TimestampColumn(JavaRDD<StatChunks.Chunk> chunks, RowRanges ranges, int chunkIndex) {}

    static ColumnStatistics compute(BuildContext ctx, List<LoadedTable> tables, TextVocabulary text) {
        List<ColumnStats> stats = new ArrayList<>();
        List<OrderedTable> orderedTables = new ArrayList<>();
        List<TimestampColumn> tsColumns = new ArrayList<>(); // in global column order
        OrderedStats.Global global = new OrderedStats.Global();
        for (LoadedTable t : tables) {
            List<InputSchema.Column> columns = t.schema().columns();
            int m = columns.size();
            // The scan itself, when its partitions already hold the rows in order (one Parquet file
            // does); otherwise, checked after the statistics pass, a range sort.
            Dataset<Row> ordered = TextVocabulary.withoutText(t);
            List<String> fieldNames = Arrays.asList(ordered.columns());
            SemanticType[] stypes = new SemanticType[m];
            int[] validFields = new int[m];
            int[] valueFields = new int[m];
            for (int j = 0; j < m; j++) {
                stypes[j] = columns.get(j).stype();
                validFields[j] = fieldNames.indexOf("v" + j);
                valueFields[j] = fieldNames.indexOf("c" + j);
            }
            OrderedStats.Numerical[] nums = new OrderedStats.Numerical[m];
            OrderedStats.Timestamp[] tss = new OrderedStats.Timestamp[m];
            int[] statCols = t.statColumns();
            for (int j : statCols) {
                if (stypes[j] == SemanticType.TIMESTAMP) {
                    tss[j] = new OrderedStats.Timestamp();
                } else {
                    nums[j] = new OrderedStats.Numerical();
                }
            }
            // One scan of the ordered rows: the first pass of the ordered sums and every order-free count.
            StatChunks pass = new StatChunks(fieldNames.indexOf(BuildContext.ROW), stypes, validFields, valueFields,
                    statCols);
            JavaRDD<StatChunks.Chunk> chunks = ctx.persist(ordered.javaRDD().mapPartitions(pass));
            RowRanges ranges = RowRanges.of(chunks.map(StatChunks.Chunk::seen).collect(), t.rows(),
                    MAX_SCAN_PARTITION_ROWS);
            boolean resorted = ranges == null;
            if (resorted) {
                chunks.unpersist(false);
                ordered = ctx.ordered(ordered, t.rows());
                chunks = ctx.persist(ordered.javaRDD().mapPartitions(pass));
                ranges = RowRanges.of(chunks.map(StatChunks.Chunk::seen).collect(), t.rows(), Long.MAX_VALUE);
                if (ranges == null) {
                    throw new IllegalStateException("table '" + t.schema().name() + "': sorted rows are not in order");
                }
            }
            orderedTables.add(orderedTable(text, t, ordered, ranges));
            long[] nulls = new long[m];
            long[] trues = new long[m];
            long[] falses = new long[m];
            List<HashSet<String>> categories = new ArrayList<>();
            for (int j = 0; j < m; j++) {
                categories.add(new HashSet<>());
            }
            inOrder(chunks, ranges, chunk -> {
                for (int j = 0; j < m; j++) {
                    nulls[j] += chunk.nulls()[j];
                    trues[j] += chunk.trues()[j];
                    falses[j] += chunk.falses()[j];
                    if (chunk.categories()[j] != null) {
                        categories.get(j).addAll(Arrays.asList(chunk.categories()[j]));
                    }
                }
                for (int k = 0; k < statCols.length; k++) {
                    int j = statCols[k];
                    if (nums[j] != null) {
                        nums[j].add((double[]) chunk.values()[k]);
                    } else {
                        tss[j].add((long[]) chunk.values()[k]);
                    }
                }
            });
            if (statCols.length > 0) {
                for (int j : statCols) {
                    if (nums[j] != null) {
                        nums[j].endFirstPass();
                    } else {
                        tss[j].endFirstPass();
                    }
                }
                inOrder(chunks, ranges, chunk -> {
                    for (int k = 0; k < statCols.length; k++) {
                        int j = statCols[k];
                        if (nums[j] != null) {
                            nums[j].addSquares((double[]) chunk.values()[k]);
                        } else {
                            tss[j].addSquares((long[]) chunk.values()[k]);
                        }
                    }
                });
                for (int k = 0; k < statCols.length; k++) {
                    if (stypes[statCols[k]] == SemanticType.TIMESTAMP) {
                        tsColumns.add(new TimestampColumn(chunks, ranges, k));
                    }
                }
            }
            for (int j = 0; j < m; j++) {
                long numNulls = t.present()[j] ? nulls[j] : 0L;
                ColumnStats s = switch (stypes[j]) {
                    case IGNORED -> new ColumnStats.Ignored();
                    case IDENTIFIER -> new ColumnStats.Identifier(numNulls);
                    case TEXT -> new ColumnStats.Text(numNulls);
                    case NUMERICAL -> nums[j] != null ? nums[j].stats(numNulls)
                            : new ColumnStats.Numerical(0, 0.0, 0.0, 0.0, 1.0);
                    case TIMESTAMP -> {
                        if (tss[j] == null) {
                            yield new ColumnStats.Timestamp(0, 0, 0, 0.0, 1.0);
                        }
                        global.addColumn(tss[j]);
                        yield tss[j].stats(numNulls);
                    }
                    case BOOLEAN -> t.present()[j] ? new ColumnStats.Boolean(numNulls, trues[j], falses[j])
                            : new ColumnStats.Boolean(0, 0, 0);
                    case CATEGORICAL -> {
                        List<String> sorted = new ArrayList<>(categories.get(j));
                        sorted.sort(Utf8.BYTE_ORDER);
                        yield new ColumnStats.Categorical(numNulls, t.present()[j] ? sorted : List.of(), 0);
                    }
                };
                stats.add(s);
            }
            ctx.info(String.format(Locale.ROOT, "%s: %d columns, %d partitions, %s", t.schema().name(), m,
                    ranges.partitions(), resorted ? "rows sorted (the scan is not in row order)" : "rows in scan order"));
        }
        // Global timestamp statistics: the mean from the per-column sums, then one running sum of squares.
        global.endFirstPass();
        for (TimestampColumn ts : tsColumns) {
            int k = ts.chunkIndex();
            inOrder(ts.chunks().map(c -> (long[]) c.values()[k]), ts.ranges(), global::addSquares);
        }
        ctx.info(String.format(Locale.ROOT, "global timestamps: %d cells, mean %s us, std %s us", global.count,
                global.mean, global.std()));
        return new ColumnStatistics(stats, orderedTables, global.mean, global.std());
    }

    /**
     * Feeds an RDD partitioned like {@code ranges} to {@code sink} in partition order, grouping
     * partitions by their row counts (scan partitions differ in size) so one fetch holds about
     * {@link #FETCH_ROWS} rows.
     */
    private static <T> void inOrder(JavaRDD<T> rdd, RowRanges ranges, Consumer<T> sink) {
        int n = rdd.getNumPartitions();
        int from = 0;
        while (from < n) {
            int to = from;
            long rows = 0;
            do {
                rows += ranges.count()[to++];
            } while (to < n && rows + ranges.count()[to] <= FETCH_ROWS);
            for (List<T> part : rdd.collectPartitions(IntStream.range(from, to).toArray())) {
                part.forEach(sink);
            }
            from = to;
        }
    }

    private static OrderedTable orderedTable(TextVocabulary text, LoadedTable t, Dataset<Row> rows, RowRanges ranges) {
        int[] textColumns = TextVocabulary.textColumns(t);
        if (textColumns.length == 0 || t.rows() == 0) {
            return new OrderedTable(rows, ranges, new int[0], null);
        }
        return new OrderedTable(rows, ranges, textColumns, text.byPartition(t, textColumns, ranges));
    }
}
