package io.github.semyonsinchenko.safetensors.preprocess.stats;

import static org.apache.spark.sql.functions.col;

import io.github.semyonsinchenko.safetensors.preprocess.BuildContext;
import io.github.semyonsinchenko.safetensors.preprocess.PreprocessSettings;
import io.github.semyonsinchenko.safetensors.preprocess.input.InputSchema;
import io.github.semyonsinchenko.safetensors.preprocess.input.LoadedTable;
import io.github.semyonsinchenko.safetensors.preprocess.partition.RowRanges;
import io.github.semyonsinchenko.safetensors.preprocess.text.TextVocabulary;
import io.github.semyonsinchenko.safetensors.preprocess.text.Utf8;
import io.github.semyonsinchenko.safetensors.sampler.db.ColumnStats;
import io.github.semyonsinchenko.safetensors.sampler.db.SemanticType;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.function.Consumer;
import java.util.stream.IntStream;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;

/**
 * Stage 3, per-column statistics in global column order and the global timestamp statistics, from
 * one scan per table of its ordered rows ({@link StatChunks}). Counts and category sets are
 * order-free sums; numerical and timestamp sums are folded by {@link OrderedStats} in row order, so
 * they do not depend on the partitioning. The driver folds values it holds ({@link #DRIVER_VALUES_CONF})
 * or fetches from the executors' cache.
 *
 * <p>The scan reads only the columns the encoding needs statistics of (numerical, timestamp,
 * categorical) and the small boolean ones: decoding the text and key columns is most of the cost
 * of a scan, stage 5 decodes the key columns anyway, and the text columns' nulls come with their
 * indices. So the null counts of identifier and text columns are 0 here until the encoder, which
 * counts them, sets them ({@link #setEncodedNulls}).
 *
 * @param stats one per global column (categorical {@code cat_emb_start} still 0)
 * @param orderedTables per table, its rows in order and its text indices, for encoding
 */
public record ColumnStatistics(List<ColumnStats> stats, List<OrderedTable> orderedTables, double globalTsMean,
        double globalTsStd) {

    /**
     * Most rows a scan partition may hold to serve as ordered rows: the encoder holds a
     * partition's text indices (8 bytes per cell) and the driver a partition's statistics values
     * in memory, so a huge split is sorted into smaller partitions instead.
     */
    static final long MAX_SCAN_PARTITION_ROWS = 4_000_000;

    /** Rows of statistics values the driver fetches per job (at least one partition). */
    private static final long FETCH_ROWS = 2_000_000;

    /**
     * Session setting: how many statistics values (8 bytes each, counted as rows times numerical
     * and timestamp columns) the driver may hold. The tables that fit, taken in schema order, are
     * scanned together by one job, and their values stay on the driver for both passes and the
     * global timestamp pass; each other table is cached on the executors and fetched once per pass,
     * {@link #FETCH_ROWS} rows at a time. Default: a 16th of the driver heap, at most a quarter of
     * {@code spark.driver.maxResultSize}.
     */
    public static final String DRIVER_VALUES_CONF = "spark.safetensors.preprocess.statisticsDriverValues";

    /** A timestamp column's chunks, for the global second pass. */
    private record TimestampColumn(Scan scan, int chunkIndex) {}

    /**
     * One table's statistics chunks and their row ranges: either {@code held} on the driver (one
     * job, nothing cached) or {@code cached} on the executors and fetched in order for each pass.
     */
    private record Scan(RowRanges ranges, List<StatChunks.Chunk> held, JavaRDD<StatChunks.Chunk> cached) {

        void forEach(Consumer<StatChunks.Chunk> sink) {
            if (held != null) {
                held.forEach(sink);
            } else {
                inOrder(cached, ranges, sink);
            }
        }

        /** Statistics column {@code k}'s values per partition, in order (a fetch moves only those). */
        void forEachValues(int k, Consumer<Object> sink) {
            if (held != null) {
                held.forEach(c -> sink.accept(c.values()[k]));
            } else {
                inOrder(cached.map(c -> c.values()[k]), ranges, sink);
            }
        }

        boolean onDriver() {
            return held != null;
        }
    }

    /** One table's statistics pass: its scan, its columns and whether its values are held on the driver. */
    private record TablePass(LoadedTable table, Dataset<Row> scan, Column[] fields, StatChunks pass,
            SemanticType[] stypes, int[] statColumns, boolean hold) {

        /** Cells the pass reads: rows times fields. */
        long cells() {
            return table.rows() * fields.length;
        }

        /** The pass over {@code rows} (the scan or its sorted copy), reading only {@code fields} as Spark's rows. */
        JavaRDD<StatChunks.Chunk> chunks(Dataset<Row> rows) {
            StatChunks p = pass;
            return rows.select(fields).queryExecution().toRdd().toJavaRDD()
                    .mapPartitionsWithIndex((i, it) -> p.call(i, it), true);
        }
    }

    /** Scans every table once and folds its statistics; the tables' ordered rows come with them. */
    public static ColumnStatistics compute(BuildContext ctx, List<LoadedTable> tables, TextVocabulary text) {
        List<ColumnStats> stats = new ArrayList<>();
        List<OrderedTable> orderedTables = new ArrayList<>();
        List<TimestampColumn> tsColumns = new ArrayList<>(); // in global column order
        OrderedStats.Global global = new OrderedStats.Global();
        long budget = driverValues(ctx);
        long held = 0;
        List<TablePass> passes = new ArrayList<>();
        for (LoadedTable t : tables) {
            List<InputSchema.Column> columns = t.schema().columns();
            int m = columns.size();
            // The scan itself, when its partitions already hold the rows in order (one Parquet file
            // does); otherwise, checked after the statistics pass, a range sort.
            Dataset<Row> scan = TextVocabulary.withoutText(t);
            List<Column> fields = new ArrayList<>(List.of(col(BuildContext.ROW)));
            SemanticType[] stypes = new SemanticType[m];
            int[] validFields = new int[m];
            int[] valueFields = new int[m];
            for (int j = 0; j < m; j++) {
                stypes[j] = columns.get(j).stype();
                validFields[j] = -1;
                valueFields[j] = -1;
                if (stypes[j] == SemanticType.BOOLEAN || stypes[j] == SemanticType.CATEGORICAL) {
                    validFields[j] = fields.size();
                    fields.add(col("v" + j));
                }
                if (stypes[j] != SemanticType.IGNORED && stypes[j] != SemanticType.IDENTIFIER
                        && stypes[j] != SemanticType.TEXT) {
                    valueFields[j] = fields.size();
                    fields.add(col("c" + j));
                }
            }
            int[] statCols = t.statColumns();
            // At most this many values (nulls are not counted in advance).
            long values = t.rows() * statCols.length;
            boolean hold = held + values <= budget;
            if (hold) {
                held += values;
            }
            // One scan of the ordered rows: the first pass of the ordered sums and every order-free count.
            StatChunks pass = new StatChunks(0, stypes, validFields, valueFields, statCols);
            passes.add(new TablePass(t, scan, fields.toArray(Column[]::new), pass, stypes, statCols, hold));
        }
        ctx.info(String.format(Locale.ROOT, "statistics values: %d of the driver's %d held", held, budget));
        // Every held table in one job: one job's fixed cost, and the tables' partitions share the cores.
        List<List<StatChunks.Chunk>> heldChunks = collectHeld(passes);
        for (int ti = 0; ti < passes.size(); ti++) {
            TablePass tp = passes.get(ti);
            LoadedTable t = tp.table();
            int m = t.schema().columns().size();
            SemanticType[] stypes = tp.stypes();
            int[] statCols = tp.statColumns();
            OrderedStats.Numerical[] nums = new OrderedStats.Numerical[m];
            OrderedStats.Timestamp[] tss = new OrderedStats.Timestamp[m];
            for (int j : statCols) {
                if (stypes[j] == SemanticType.TIMESTAMP) {
                    tss[j] = new OrderedStats.Timestamp();
                } else {
                    nums[j] = new OrderedStats.Numerical();
                }
            }
            Dataset<Row> ordered = tp.scan();
            Scan scan = tp.hold() ? heldScan(heldChunks.get(ti), t.rows(), MAX_SCAN_PARTITION_ROWS)
                    : cachedScan(ctx, tp.chunks(ordered), t.rows(), MAX_SCAN_PARTITION_ROWS);
            heldChunks.set(ti, null);
            boolean resorted = scan == null;
            if (resorted) {
                ordered = ctx.ordered(ordered, t.rows());
                scan = tp.hold() ? heldScan(tp.chunks(ordered).collect(), t.rows(), Long.MAX_VALUE)
                        : cachedScan(ctx, tp.chunks(ordered), t.rows(), Long.MAX_VALUE);
                if (scan == null) {
                    throw new IllegalStateException("table '" + t.schema().name() + "': sorted rows are not in order");
                }
            }
            RowRanges ranges = scan.ranges();
            orderedTables.add(orderedTable(text, t, ordered, ranges));
            long[] nulls = new long[m];
            long[] trues = new long[m];
            long[] falses = new long[m];
            List<HashSet<String>> categories = new ArrayList<>();
            for (int j = 0; j < m; j++) {
                categories.add(new HashSet<>());
            }
            scan.forEach(chunk -> {
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
                scan.forEach(chunk -> {
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
                        tsColumns.add(new TimestampColumn(scan, k));
                    }
                }
            }
            for (int j = 0; j < m; j++) {
                long numNulls = t.present()[j] ? nulls[j] : 0L;
                ColumnStats s = switch (stypes[j]) {
                    case IGNORED -> new ColumnStats.Ignored();
                    case IDENTIFIER -> new ColumnStats.Identifier(0); // counted by the encoder
                    case TEXT -> new ColumnStats.Text(0);
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
            ctx.info(String.format(Locale.ROOT, "%s: %d columns, %d partitions, %s, statistics values %s",
                    t.schema().name(), m, ranges.partitions(),
                    resorted ? "rows sorted (the scan is not in row order)" : "rows in scan order",
                    scan.onDriver() ? "held on the driver" : "fetched per pass"));
        }
        // Global timestamp statistics: the mean from the per-column sums, then one running sum of squares.
        global.endFirstPass();
        for (TimestampColumn ts : tsColumns) {
            ts.scan().forEachValues(ts.chunkIndex(), v -> global.addSquares((long[]) v));
        }
        ctx.info(String.format(Locale.ROOT, "global timestamps: %d cells, mean %s us, std %s us", global.count,
                global.mean, global.std()));
        return new ColumnStatistics(stats, orderedTables, global.mean, global.std());
    }

    /**
     * The chunks of every held table from one job (a union of their scans), per table in
     * partition order; null for tables not held. The union starts with the table with the most
     * cells read: a table of one Parquet row group (headwater's input) is one task, and with few
     * tasks on few cores, a large one started last decides when the job ends.
     */
    private static List<List<StatChunks.Chunk>> collectHeld(List<TablePass> passes) {
        List<List<StatChunks.Chunk>> out = new ArrayList<>();
        List<Integer> order = new ArrayList<>();
        for (int ti = 0; ti < passes.size(); ti++) {
            out.add(null);
            if (passes.get(ti).hold()) {
                order.add(ti);
            }
        }
        order.sort(Comparator.comparingLong((Integer ti) -> passes.get(ti).cells()).reversed());
        JavaRDD<StatChunks.Chunk> union = null;
        List<Integer> counts = new ArrayList<>();
        for (int ti : order) {
            JavaRDD<StatChunks.Chunk> c = passes.get(ti).chunks(passes.get(ti).scan());
            counts.add(c.getNumPartitions());
            union = union == null ? c : union.union(c);
        }
        if (union == null) {
            return out;
        }
        // A union's partitions are its parts' in order, each yielding one chunk: split by counts.
        List<StatChunks.Chunk> all = union.collect();
        int at = 0;
        for (int k = 0; k < order.size(); k++) {
            int n = counts.get(k);
            out.set(order.get(k), new ArrayList<>(all.subList(at, at + n)));
            at += n;
        }
        if (at != all.size()) {
            throw new IllegalStateException(String.format(Locale.ROOT, "%d statistics chunks for %d partitions",
                    all.size(), at));
        }
        return out;
    }

    /** Held chunks as a scan, or null when their partitions are not the rows in order. */
    private static Scan heldScan(List<StatChunks.Chunk> chunks, long rows, long maxPerPartition) {
        RowRanges ranges = RowRanges.of(chunks.stream().map(StatChunks.Chunk::seen).toList(), rows, maxPerPartition);
        return ranges == null ? null : new Scan(ranges, chunks, null);
    }

    /**
     * The chunks cached on the executors, a first job collecting only their row ranges; null
     * (and uncached) when the partitions are not the rows in order.
     */
    private static Scan cachedScan(BuildContext ctx, JavaRDD<StatChunks.Chunk> chunks, long rows,
            long maxPerPartition) {
        JavaRDD<StatChunks.Chunk> cached = ctx.persist(chunks);
        RowRanges ranges = RowRanges.of(cached.map(StatChunks.Chunk::seen).collect(), rows, maxPerPartition);
        if (ranges == null) {
            cached.unpersist(false);
            return null;
        }
        return new Scan(ranges, null, cached);
    }

    /**
     * The null counts of table {@code t}'s identifier and text columns, which the encoder counts
     * (per column of the table; columns missing from the Parquet data have none).
     */
    public void setEncodedNulls(LoadedTable t, long[] nulls) {
        for (int j = 0; j < t.schema().columns().size(); j++) {
            long n = t.present()[j] ? nulls[j] : 0L;
            switch (t.schema().columns().get(j).stype()) {
                case IDENTIFIER -> stats.set(t.colStart() + j, new ColumnStats.Identifier(n));
                case TEXT -> stats.set(t.colStart() + j, new ColumnStats.Text(n));
                default -> { }
            }
        }
    }

    /** The driver's budget of statistics values ({@link #DRIVER_VALUES_CONF}). */
    static long driverValues(BuildContext ctx) {
        PreprocessSettings settings = PreprocessSettings.of(ctx.spark);
        if (settings.has(DRIVER_VALUES_CONF)) {
            return settings.count(DRIVER_VALUES_CONF, 0, 0, "values");
        }
        long bytes = Runtime.getRuntime().maxMemory() / 16;
        long maxResult = ctx.spark.sparkContext().getConf().getSizeAsBytes("spark.driver.maxResultSize", "1g");
        if (maxResult > 0) { // 0: unlimited
            bytes = Math.min(bytes, maxResult / 4);
        }
        return bytes / Long.BYTES;
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
