package io.github.semyonsinchenko.safetensors.preprocess;

import static io.github.semyonsinchenko.safetensors.preprocess.SparkColumns.ref;
import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.collect_set;
import static org.apache.spark.sql.functions.count;
import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.max;
import static org.apache.spark.sql.functions.min;
import static org.apache.spark.sql.functions.monotonically_increasing_id;
import static org.apache.spark.sql.functions.struct;
import static org.apache.spark.sql.functions.sum;
import static org.apache.spark.sql.functions.when;

import io.github.semyonsinchenko.safetensors.sampler.db.ColumnMetadata;
import io.github.semyonsinchenko.safetensors.sampler.db.ColumnStats;
import io.github.semyonsinchenko.safetensors.sampler.db.DatabaseLayout;
import io.github.semyonsinchenko.safetensors.sampler.db.DatabaseMetadata;
import io.github.semyonsinchenko.safetensors.sampler.db.DatabaseWriter;
import io.github.semyonsinchenko.safetensors.sampler.db.SemanticType;
import io.github.semyonsinchenko.safetensors.sampler.db.TableMetadata;
import io.github.semyonsinchenko.safetensors.sampler.db.TaskMetadata;
import io.github.semyonsinchenko.safetensors.sampler.db.ValueEncoding;
import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.function.Consumer;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.api.java.function.Function2;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.storage.StorageLevel;

/**
 * Builds a relational-sampler database (headwater's format, spec in the README) from headwater's
 * input, {@code D/metadata/X.json} and {@code D/raw/X/<table>.parquet}, with Spark.
 *
 * <p>Every per-row step runs in Spark: casts, vocabularies, text lookups, FK resolution, the CSR
 * transpose, task queries and the encoding of every cell. Each output file is written by the
 * partitions of an ordered Dataset, one part per partition, then concatenated in order on the
 * driver; no step collects a table. The driver folds two things in row order, streaming one
 * partition at a time: the f64 sums of numerical and timestamp statistics (sequential, so the
 * bits equal headwater's whatever the partitioning) and the row pointers of the graph.
 */
public final class Preprocessor {

    /** How to run: the embedder, rows per Spark partition for ordered stages, and a progress sink. */
    public record Options(EmbedderSpec embedder, long rowsPerPartition, Consumer<String> progress) {
        public Options {
            if (rowsPerPartition < 1) {
                throw new IllegalArgumentException("rowsPerPartition must be positive, was " + rowsPerPartition);
            }
        }

        public static Options defaults(EmbedderSpec embedder) {
            return new Options(embedder, 500_000, msg -> System.err.println("[preprocess] " + msg));
        }

        public Options withRowsPerPartition(long rows) {
            return new Options(embedder, rows, progress);
        }

        public Options withProgress(Consumer<String> sink) {
            return new Options(embedder, rowsPerPartition, sink);
        }
    }

    private static final String ROW = "__row";
    private static final String UTF8_CUT = "st_preprocess_utf8_cut";
    private static final long U32_LIMIT = 0xFFFF_FFFFL;
    private static final int STAGES = 8;

    /** The session settings task queries and casts rely on; restored afterwards. */
    private static final Map<String, String> SESSION_CONF = Map.of(
            "spark.sql.session.timeZone", "UTC",
            "spark.sql.caseSensitive", "true", // DataFusion runs with identifier normalization off
            "spark.sql.ansi.enabled", "true",
            "spark.sql.ansi.doubleQuotedIdentifiers", "true", // "t" is an identifier, as in DataFusion
            "spark.sql.optimizer.canChangeCachedPlanOutputPartitioning", "true"); // AQE may coalesce cached stages

    private final SparkSession spark;
    private final InputSchema schema;
    private final Path rawDir;
    private final Options options;
    private final Path work;
    private final Path parts;

    private final List<Loaded> tables = new ArrayList<>();
    private final List<ColumnStats> stats = new ArrayList<>();
    private final Map<String, Dataset<Row>> pkMaps = new HashMap<>();
    private final List<Dataset<?>> cached = new ArrayList<>();
    private double globalTsMean;
    private double globalTsStd;
    private LinkedHashMap<String, Integer> catVocab = new LinkedHashMap<>();
    private Dataset<Row> textVocab;
    private JavaRDD<String> textVocabOrdered;
    private long textVocabSize;

    private Preprocessor(SparkSession spark, InputSchema schema, Path rawDir, Path work, Options options) {
        this.spark = spark;
        this.schema = schema;
        this.rawDir = rawDir;
        this.options = options;
        this.work = work;
        this.parts = work.resolve(".parts");
    }

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
     * {@code outDir} as it was.
     */
    public static DatabaseMetadata build(SparkSession spark, InputSchema schema, Path rawDir, Path outDir,
            Options options) {
        Path out = outDir.toAbsolutePath();
        Path work = out.resolveSibling("." + out.getFileName() + ".tmp-" + UUID.randomUUID());
        Map<String, String> saved = new HashMap<>();
        for (Map.Entry<String, String> e : SESSION_CONF.entrySet()) {
            saved.put(e.getKey(), spark.conf().get(e.getKey(), null));
            spark.conf().set(e.getKey(), e.getValue());
        }
        Preprocessor p = new Preprocessor(spark, schema, rawDir.toAbsolutePath(), work, options);
        boolean done = false;
        try {
            Files.createDirectories(work.resolve(DatabaseLayout.TABLES_DIR));
            Files.createDirectories(work.resolve(DatabaseLayout.TASKS_DIR));
            DatabaseMetadata metadata = p.buildAll();
            deleteTree(p.parts);
            replace(work, out);
            done = true;
            return metadata;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            p.release();
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

    private void stage(int n, String what) {
        options.progress().accept(String.format(Locale.ROOT, "stage %d/%d: %s", n, STAGES, what));
    }

    private void info(String what) {
        options.progress().accept("  " + what);
    }

    private DatabaseMetadata buildAll() throws IOException {
        spark.udf().register(UTF8_CUT, (UDF1<String, String>) s -> s == null ? null : Utf8.truncate(s,
                Utf8.MAX_VOCAB_BYTES), DataTypes.StringType);
        stage(1, "loading " + schema.tables().size() + " tables, checking " + schema.tasks().size() + " task queries");
        loadTables();
        for (InputSchema.Task task : schema.tasks()) {
            taskQuery(task); // analysis only: a query Spark SQL cannot run fails before any heavy stage
        }
        stage(2, "text vocabulary");
        buildTextVocabulary();
        stage(3, "column statistics, categories and the categorical vocabulary");
        computeStats();
        buildCategoricalVocabulary();
        stage(4, "embeddings (" + options.embedder() + ")");
        writeEmbeddings();
        stage(5, "encoding tables");
        for (int ti = 0; ti < tables.size(); ti++) {
            encodeTable(tables.get(ti), orderedTables.get(ti));
        }
        stage(6, "graph");
        writeGraph();
        stage(7, "tasks");
        List<TaskMetadata> tasks = new ArrayList<>();
        for (InputSchema.Task task : schema.tasks()) {
            TaskMetadata m = materializeTask(task);
            if (m != null) {
                tasks.add(m);
            }
        }
        stage(8, "metadata.json");
        DatabaseMetadata metadata = new DatabaseMetadata(tableMetadata(), columnMetadata(), stats, tasks,
                globalTsMean, globalTsStd);
        DatabaseWriter.writeMetadata(work, metadata); // validates it first
        return metadata;
    }

    // ---------------------------------------------------------------- stage 1: tables

    /** One input table: its normalized Dataset (see {@link #loadTables}) and where it sits globally. */
    private record Loaded(int index, InputSchema.Table schema, Dataset<Row> df, long rows, long rowStart,
            int colStart, boolean[] present, boolean hasPk, boolean hasTemporal) {}

    /**
     * Per table a Dataset with {@code __row} (position in the Parquet file, or in the files of a
     * directory sorted by path) and, per schema column {@code j}: {@code v<j>} (source non-null),
     * {@code c<j>} (the cast value), {@code k<j>} (an FK cast to i64); plus {@code __pk} and
     * {@code __tc} (the temporal column in µs) when the Parquet data has them.
     */
    private void loadTables() {
        long rowStart = 0;
        int colStart = 0;
        for (int ti = 0; ti < schema.tables().size(); ti++) {
            InputSchema.Table t = schema.tables().get(ti);
            Path path = rawDir.resolve(t.name() + ".parquet");
            if (!Files.exists(path)) {
                throw new PreprocessException(path + ": missing; table '" + t.name() + "' of the schema has no Parquet"
                        + " file or directory");
            }
            Dataset<Row> raw = spark.read().parquet(path.toString());
            StructType rawSchema = raw.schema();
            Dataset<Row> withMeta = raw.select(col("*"), col("_metadata.file_path").as("__file"),
                    col("_metadata.row_index").as("__ri"));
            List<Row> files = withMeta.groupBy("__file").count().collectAsList();
            List<Row> sortedFiles = new ArrayList<>(files);
            sortedFiles.sort(Comparator.comparing(r -> r.getString(0)));
            long rows = 0;
            Column rowIndex = col("__ri");
            if (sortedFiles.size() > 1) {
                Column offset = null;
                for (Row f : sortedFiles) {
                    offset = offset == null ? when(col("__file").equalTo(f.getString(0)), lit(rows))
                            : offset.when(col("__file").equalTo(f.getString(0)), lit(rows));
                    rows += f.getLong(1);
                }
                rowIndex = rowIndex.plus(offset);
            } else if (sortedFiles.size() == 1) {
                rows = sortedFiles.getFirst().getLong(1);
            }
            if (rowStart + rows > U32_LIMIT) {
                throw new PreprocessException(String.format(Locale.ROOT,
                        "%s: %d rows in all exceeds the format's 32-bit row index", path, rowStart + rows));
            }
            List<Column> cols = new ArrayList<>();
            cols.add(rowIndex.as(ROW));
            boolean[] present = new boolean[t.columns().size()];
            for (int j = 0; j < t.columns().size(); j++) {
                InputSchema.Column c = t.columns().get(j);
                String where = "table '" + t.name() + "', column '" + c.name() + "'";
                present[j] = hasField(rawSchema, c.name());
                DataType type = present[j] ? rawSchema.apply(c.name()).dataType() : DataTypes.NullType;
                Column src = present[j] ? ref(c.name()) : lit(null);
                if (c.stype() != SemanticType.IGNORED) {
                    cols.add(src.isNotNull().as("v" + j));
                }
                if (c.stype() != SemanticType.IGNORED && c.stype() != SemanticType.IDENTIFIER) {
                    cols.add(SparkColumns.value(c.stype(), src, type, where).as("c" + j));
                }
                if (c.foreignKey() != null && present[j]) {
                    cols.add(SparkColumns.key(src, type, where).as("k" + j));
                }
            }
            boolean hasPk = t.primaryKey() != null && hasField(rawSchema, t.primaryKey());
            if (hasPk) {
                cols.add(SparkColumns.key(ref(t.primaryKey()), rawSchema.apply(t.primaryKey()).dataType(),
                        "table '" + t.name() + "', primary key '" + t.primaryKey() + "'").as("__pk"));
            }
            boolean hasTemporal = t.temporalColumn() != null && hasField(rawSchema, t.temporalColumn());
            if (hasTemporal) {
                cols.add(SparkColumns.micros(ref(t.temporalColumn()), rawSchema.apply(t.temporalColumn()).dataType(),
                        "table '" + t.name() + "', temporal column '" + t.temporalColumn() + "'").as("__tc"));
            }
            Dataset<Row> df = withMeta.select(cols.toArray(Column[]::new));
            tables.add(new Loaded(ti, t, df, rows, rowStart, colStart, present, hasPk, hasTemporal));
            info(String.format(Locale.ROOT, "%s: %d rows, %d columns (rows [%d, %d), columns [%d, %d)), %d file(s)",
                    t.name(), rows, t.columns().size(), rowStart, rowStart + rows, colStart,
                    colStart + t.columns().size(), sortedFiles.size()));
            rowStart += rows;
            colStart += t.columns().size();
        }
    }

    private static boolean hasField(StructType s, String name) {
        return Arrays.asList(s.fieldNames()).contains(name);
    }

    /** The table's rows in order, {@code rowsPerPartition} to a partition, cached for the stages that stream it. */
    private int partitions(long rows) {
        return (int) Math.max(1, Math.min(100_000, (rows + options.rowsPerPartition() - 1) / options.rowsPerPartition()));
    }

    private Dataset<Row> ordered(Dataset<Row> df, long rows) {
        Dataset<Row> o = df.repartitionByRange(partitions(rows), col(ROW)).sortWithinPartitions(ROW)
                .persist(StorageLevel.MEMORY_AND_DISK());
        cached.add(o);
        return o;
    }

    // ---------------------------------------------------------------- stage 2: statistics

    /** Per table: its rows in order with the text indices joined, cached for statistics and encoding. */
    private final List<Dataset<Row>> orderedTables = new ArrayList<>();

    private Dataset<Row> withTextIndices(Loaded t) {
        Dataset<Row> df = t.df();
        for (int j = 0; j < t.schema().columns().size(); j++) {
            if (t.schema().columns().get(j).stype() == SemanticType.TEXT && t.present()[j]) {
                // The lookup uses the uncut value against cut keys: longer values find nothing (index 0), as in headwater.
                Dataset<Row> v = textVocab.select(col("key").as("tk" + j), col("idx").as("t" + j));
                df = df.join(v, col("c" + j).equalTo(col("tk" + j)), "left");
            }
        }
        return df;
    }

    private void computeStats() {
        List<Object[]> tsColumns = new ArrayList<>(); // {Loaded, j, Timestamp accumulator} in global column order
        OrderedStats.Global global = new OrderedStats.Global();
        for (Loaded t : tables) {
            List<InputSchema.Column> columns = t.schema().columns();
            // Order-free counts in one aggregation.
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
                    // Categories go into metadata.json, so the driver holds them anyway.
                    aggs.add(collect_set(col("c" + j)));
                }
            }
            Row counts = t.df().agg(aggs.getFirst(), aggs.subList(1, aggs.size()).toArray(Column[]::new)).first();
            Dataset<Row> ordered = ordered(withTextIndices(t), t.rows());
            orderedTables.add(ordered);
            List<String> fieldNames = Arrays.asList(ordered.columns());
            OrderedStats.Numerical[] nums = new OrderedStats.Numerical[columns.size()];
            OrderedStats.Timestamp[] tss = new OrderedStats.Timestamp[columns.size()];
            int[] statCols = statColumns(t);
            if (statCols.length > 0) {
                for (int j : statCols) {
                    if (columns.get(j).stype() == SemanticType.NUMERICAL) {
                        nums[j] = new OrderedStats.Numerical();
                    } else {
                        tss[j] = new OrderedStats.Timestamp();
                    }
                }
                int[] statFields = Arrays.stream(statCols).map(j -> fieldNames.indexOf("c" + j)).toArray();
                JavaRDD<Object[]> chunks = ordered.javaRDD().mapPartitions(new StatChunks(statTypes(t, statCols),
                        statFields))
                        .persist(StorageLevel.MEMORY_AND_DISK());
                forEachInOrder(chunks, chunk -> {
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
                forEachInOrder(chunks, chunk -> {
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
                    if (tss[statCols[k]] != null) {
                        tsColumns.add(new Object[] {chunks, k, tss[statCols[k]]});
                    }
                }
                chunkRdds.add(chunks);
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
            info(String.format(Locale.ROOT, "%s: %d columns", t.schema().name(), columns.size()));
        }
        // Global timestamp statistics: the mean from the per-column sums, then one running sum of squares.
        global.endFirstPass();
        for (Object[] ts : tsColumns) {
            @SuppressWarnings("unchecked")
            JavaRDD<Object[]> chunks = (JavaRDD<Object[]>) ts[0];
            int k = (Integer) ts[1];
            forEachInOrder(chunks.map(c -> (long[]) c[k]), global::addSquares);
        }
        globalTsMean = global.mean;
        globalTsStd = global.std();
        info(String.format(Locale.ROOT, "global timestamps: %d cells, mean %s us, std %s us", global.count,
                globalTsMean, globalTsStd));
    }

    private final List<JavaRDD<?>> chunkRdds = new ArrayList<>();

    /** Partitions fetched per job when the driver streams an ordered RDD (bounds driver memory to ~2M values). */
    private int partitionsPerFetch() {
        return (int) Math.max(1, Math.min(10_000, 2_000_000 / options.rowsPerPartition()));
    }

    /** Feeds an RDD's elements to {@code sink} in partition order, a bounded group of partitions per job. */
    private <T> void forEachInOrder(JavaRDD<T> rdd, Consumer<T> sink) {
        int n = rdd.getNumPartitions();
        int step = partitionsPerFetch();
        for (int from = 0; from < n; from += step) {
            int[] ids = java.util.stream.IntStream.range(from, Math.min(n, from + step)).toArray();
            for (List<T> part : rdd.collectPartitions(ids)) {
                part.forEach(sink);
            }
        }
    }

    /** Numerical and timestamp columns present in the Parquet data. */
    private static int[] statColumns(Loaded t) {
        List<Integer> js = new ArrayList<>();
        for (int j = 0; j < t.schema().columns().size(); j++) {
            SemanticType s = t.schema().columns().get(j).stype();
            if (t.present()[j] && (s == SemanticType.NUMERICAL || s == SemanticType.TIMESTAMP)) {
                js.add(j);
            }
        }
        return js.stream().mapToInt(Integer::intValue).toArray();
    }

    private static boolean[] statTypes(Loaded t, int[] statCols) {
        boolean[] isTimestamp = new boolean[statCols.length];
        for (int k = 0; k < statCols.length; k++) {
            isTimestamp[k] = t.schema().columns().get(statCols[k]).stype() == SemanticType.TIMESTAMP;
        }
        return isTimestamp;
    }

    /** Per partition: one array per statistics column with its non-null values, in row order. */
    private record StatChunks(boolean[] isTimestamp, int[] fields) implements FlatMapFunction<Iterator<Row>, Object[]> {
        @Override
        public Iterator<Object[]> call(Iterator<Row> rows) {
            int k = isTimestamp.length;
            LongList[] longs = new LongList[k];
            DoubleList[] doubles = new DoubleList[k];
            for (int i = 0; i < k; i++) {
                if (isTimestamp[i]) {
                    longs[i] = new LongList();
                } else {
                    doubles[i] = new DoubleList();
                }
            }
            while (rows.hasNext()) {
                Row r = rows.next();
                for (int i = 0; i < k; i++) {
                    if (!r.isNullAt(fields[i])) {
                        if (isTimestamp[i]) {
                            longs[i].add(r.getLong(fields[i]));
                        } else {
                            doubles[i].add(r.getDouble(fields[i]));
                        }
                    }
                }
            }
            Object[] chunk = new Object[k];
            for (int i = 0; i < k; i++) {
                chunk[i] = isTimestamp[i] ? longs[i].toArray() : doubles[i].toArray();
            }
            return List.<Object[]>of(chunk).iterator();
        }
    }

    static final class LongList {
        private long[] a = new long[1024];
        private int n;

        void add(long v) {
            if (n == a.length) {
                a = Arrays.copyOf(a, n * 2);
            }
            a[n++] = v;
        }

        long[] toArray() {
            return Arrays.copyOf(a, n);
        }
    }

    static final class DoubleList {
        private double[] a = new double[1024];
        private int n;

        void add(double v) {
            if (n == a.length) {
                a = Arrays.copyOf(a, n * 2);
            }
            a[n++] = v;
        }

        double[] toArray() {
            return Arrays.copyOf(a, n);
        }
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

    // ---------------------------------------------------------------- stage 3: vocabularies

    private void buildCategoricalVocabulary() {
        int ci = 0;
        for (Loaded t : tables) {
            for (InputSchema.Column c : t.schema().columns()) {
                if (stats.get(ci) instanceof ColumnStats.Categorical cat) {
                    int start = catVocab.size();
                    for (String v : cat.categories()) {
                        catVocab.putIfAbsent(Utf8.truncate(c.name() + " is " + v, Utf8.MAX_VOCAB_BYTES),
                                catVocab.size());
                    }
                    stats.set(ci, new ColumnStats.Categorical(cat.numNulls(), cat.categories(), start));
                }
                ci++;
            }
        }
        info(String.format(Locale.ROOT, "%d column strings, %d categorical strings", stats.size(), catVocab.size()));
    }

    /** Text: the first occurrence of each cut string, in column-then-row order, gets the next index. */
    private void buildTextVocabulary() {
        Dataset<Row> cells = null;
        for (Loaded t : tables) {
            for (int j = 0; j < t.schema().columns().size(); j++) {
                if (t.schema().columns().get(j).stype() != SemanticType.TEXT || !t.present()[j]) {
                    continue;
                }
                Dataset<Row> c = t.df().where(col("c" + j).isNotNull()).select(lit(t.colStart() + j).as("ci"),
                        col(ROW), org.apache.spark.sql.functions.call_function(UTF8_CUT, col("c" + j)).as("key"));
                cells = cells == null ? c : cells.unionAll(c);
            }
        }
        StructType vocabSchema = new StructType(new StructField[] {
            DataTypes.createStructField("key", DataTypes.StringType, false),
            DataTypes.createStructField("idx", DataTypes.LongType, false)});
        if (cells == null) {
            textVocab = spark.createDataFrame(List.of(), vocabSchema);
            textVocabOrdered = null;
            textVocabSize = 0;
        } else {
            Dataset<Row> firsts = cells.groupBy("key").agg(min(struct(col("ci"), col(ROW))).as("first"))
                    .persist(StorageLevel.MEMORY_AND_DISK());
            cached.add(firsts);
            long distinct = firsts.count();
            JavaRDD<String> orderedKeys = firsts.repartitionByRange(partitions(distinct), col("first"))
                    .sortWithinPartitions("first").select("key").javaRDD().map(r -> r.getString(0));
            JavaRDD<Row> indexed = orderedKeys.zipWithIndex().map(p -> RowFactory.create(p._1(), p._2()));
            textVocab = spark.createDataFrame(indexed, vocabSchema).persist(StorageLevel.MEMORY_AND_DISK());
            cached.add(textVocab);
            textVocabSize = textVocab.count();
            textVocabOrdered = orderedKeys;
        }
        info(String.format(Locale.ROOT, "%d text strings", textVocabSize));
        if (textVocabSize > U32_LIMIT) {
            throw new PreprocessException(textVocabSize + " text strings exceed the format's 32-bit text index");
        }
    }

    // ---------------------------------------------------------------- stage 4: embeddings

    private void writeEmbeddings() throws IOException {
        List<String> columnStrings = new ArrayList<>();
        for (Loaded t : tables) {
            for (InputSchema.Column c : t.schema().columns()) {
                columnStrings.add(c.description() != null ? c.name() + " of " + t.schema().name() + ": " + c.description()
                        : c.name() + " of " + t.schema().name());
            }
        }
        embedOnDriver(columnStrings, work.resolve(DatabaseLayout.COLUMN_EMBEDDINGS_FILE));
        embedOnDriver(new ArrayList<>(catVocab.keySet()), work.resolve(DatabaseLayout.CATEGORICAL_EMBEDDINGS_FILE));
        Path textFile = work.resolve(DatabaseLayout.TEXT_EMBEDDINGS_FILE);
        if (textVocabOrdered == null || options.embedder().kind() == EmbedderSpec.Kind.NONE) {
            try (Parts.Assembler a = new Parts.Assembler(textFile)) {
                a.zeros(textVocabSize * DatabaseLayout.EMBEDDING_ROW_BYTES);
            }
            return;
        }
        Path dir = parts.resolve("text-embeddings");
        List<Parts.Info> infos = textVocabOrdered.mapPartitionsWithIndex(
                new EmbedPartition(options.embedder(), dir.toString()), true).collect();
        try (Parts.Assembler a = new Parts.Assembler(textFile)) {
            for (Parts.Info info : sorted(infos)) {
                a.appendBytes(Parts.partFile(dir, 0, info.partition()));
            }
        }
        info(String.format(Locale.ROOT, "embedded %d text strings in %d partitions", textVocabSize, infos.size()));
    }

    private void embedOnDriver(List<String> strings, Path file) throws IOException {
        short[] rows = new short[strings.size() * Embedder.DIM];
        try (Embedder e = options.embedder().create()) {
            e.embed(strings, rows, 0);
        }
        byte[] bytes = new byte[rows.length * 2];
        for (int i = 0; i < rows.length; i++) {
            bytes[2 * i] = (byte) rows[i];
            bytes[2 * i + 1] = (byte) (rows[i] >>> 8);
        }
        Files.write(file, bytes);
    }

    /** Embeds a partition of vocabulary strings, in order, into one part of F16 rows. */
    private record EmbedPartition(EmbedderSpec spec, String dir)
            implements Function2<Integer, Iterator<String>, Iterator<Parts.Info>> {
        @Override
        public Iterator<Parts.Info> call(Integer partition, Iterator<String> strings) throws IOException {
            int chunk = spec.batchSize() * 8;
            List<String> batch = new ArrayList<>(chunk);
            short[] rows = new short[chunk * Embedder.DIM];
            long n = 0;
            try (Embedder e = spec.create(); Parts.Out out = new Parts.Out(dir, partition, 1)) {
                Parts.Section s = out.section(0);
                while (strings.hasNext()) {
                    batch.add(strings.next());
                    if (batch.size() == chunk || !strings.hasNext()) {
                        e.embed(batch, rows, 0);
                        for (int i = 0; i < batch.size() * Embedder.DIM; i++) {
                            s.u16(rows[i]);
                        }
                        n += batch.size();
                        batch.clear();
                    }
                }
                return List.of(out.commit(n)).iterator();
            }
        }
    }

    // ---------------------------------------------------------------- stage 5: tables

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

    private void encodeTable(Loaded t, Dataset<Row> ordered) throws IOException {
        List<InputSchema.Column> columns = t.schema().columns();
        List<String> fields = Arrays.asList(ordered.columns());
        ColumnPlan[] plans = new ColumnPlan[columns.size()];
        int sections = 0;
        for (int j = 0; j < columns.size(); j++) {
            InputSchema.Column c = columns.get(j);
            ColumnStats s = stats.get(t.colStart() + j);
            double mean = s instanceof ColumnStats.Numerical n ? n.mean() : 0.0;
            double std = s instanceof ColumnStats.Numerical n ? n.std() : 1.0;
            HashMap<String, Integer> cats = null;
            if (s instanceof ColumnStats.Categorical cat) {
                cats = new HashMap<>();
                for (String v : cat.categories()) {
                    Integer idx = catVocab.get(c.name() + " is " + v); // uncut lookup, as headwater
                    cats.put(v, idx == null ? 0 : idx);
                }
            }
            plans[j] = new ColumnPlan(c.stype(), t.present()[j], fields.indexOf("v" + j), fields.indexOf("c" + j),
                    fields.indexOf("t" + j), mean, std, cats);
            sections += plans[j].sections();
        }
        Path dir = parts.resolve("table-" + t.index());
        List<Parts.Info> infos = ordered.javaRDD().mapPartitionsWithIndex(
                new EncodeTable(plans, sections, globalTsMean, globalTsStd, dir.toString()), true).collect();
        Path file = DatabaseLayout.tableFile(work, t.schema().name());
        try (Parts.Assembler a = new Parts.Assembler(file)) {
            a.u32(t.rows());
            a.u32(columns.size());
            int section = 0;
            for (ColumnPlan plan : plans) {
                for (int k = 0; k < plan.sections(); k++, section++) {
                    boolean bits = k == 0 || plan.stype() == SemanticType.BOOLEAN;
                    for (Parts.Info info : sorted(infos)) {
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
        checkSize(file, expected);
        info(String.format(Locale.ROOT, "%s: %d rows in %d partitions", t.schema().name(), t.rows(), infos.size()));
    }

    private static void checkSize(Path file, long expected) throws IOException {
        long actual = Files.size(file);
        if (actual != expected) {
            throw new IllegalStateException(String.format(Locale.ROOT, "%s: wrote %d bytes, the format needs %d", file,
                    actual, expected));
        }
    }

    private static List<Parts.Info> sorted(List<Parts.Info> infos) {
        List<Parts.Info> s = new ArrayList<>(infos);
        s.sort(Comparator.comparingInt(Parts.Info::partition));
        return s;
    }

    /** Encodes one ordered partition of a table: every column's sections, as in spec §4 and §5.2. */
    private record EncodeTable(ColumnPlan[] plans, int sections, double tsMean, double tsStd, String dir)
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
                        boolean hasValue = p.present() && !r.isNullAt(p.valueField());
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
                            case TEXT -> values.u32(hasValue && !r.isNullAt(p.textField())
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

    // ---------------------------------------------------------------- stage 6: graph

    private Dataset<Row> pkMap(Loaded t) {
        return pkMaps.computeIfAbsent(t.schema().name(), name -> {
            // Duplicate keys: the last row wins, as in headwater's HashMap inserts.
            Dataset<Row> m = t.df().where(col("__pk").isNotNull()).groupBy(col("__pk").as("pk"))
                    .agg(max(col(ROW).plus(t.rowStart())).as("prow")).persist(StorageLevel.MEMORY_AND_DISK());
            cached.add(m);
            return m;
        });
    }

    private void writeGraph() throws IOException {
        Dataset<Row> edges = null;
        for (Loaded t : tables) {
            for (int j = 0; j < t.schema().columns().size(); j++) {
                InputSchema.Column c = t.schema().columns().get(j);
                if (c.foreignKey() == null || c.foreignTable() == null || !t.present()[j]) {
                    continue;
                }
                int target = schema.tableIndex(c.foreignTable());
                if (target < 0 || !tables.get(target).hasPk()) {
                    info(String.format(Locale.ROOT, "FK %s.%s -> %s: the target table has no primary key map; no edges"
                            + " (as headwater)", t.schema().name(), c.name(), c.foreignKey()));
                    continue;
                }
                // Q10: the column after the '.' is ignored; keys always match the target's primary key.
                Dataset<Row> e = t.df().where(col("k" + j).isNotNull())
                        .select(col(ROW).plus(t.rowStart()).as("src"), col("k" + j).as("key"))
                        .join(pkMap(tables.get(target)), col("key").equalTo(col("pk")))
                        .select(col("src"), col("prow").as("dst"));
                edges = edges == null ? e : edges.unionAll(e);
            }
        }
        long nodes = tables.isEmpty() ? 0 : tables.getLast().rowStart() + tables.getLast().rows();
        Path file = work.resolve(DatabaseLayout.GRAPH_FILE);
        if (edges == null) {
            try (Parts.Assembler a = new Parts.Assembler(file)) {
                a.u32(nodes);
                a.u32(0);
                a.u32(nodes);
                a.u32(0);
                a.zeros(4 * 2 * (nodes + 1));
            }
            info("0 edges");
            return;
        }
        edges = edges.persist(StorageLevel.MEMORY_AND_DISK());
        cached.add(edges);
        long numEdges = edges.count();
        if (numEdges > U32_LIMIT) {
            throw new PreprocessException(numEdges + " FK edges exceed the format's 32-bit edge count");
        }
        int partitions = partitions(numEdges);
        // Outgoing: by source, then target (Q9: headwater's order within a row is an unstable sort's).
        Path outDir = parts.resolve("graph-out");
        List<Parts.Info> outParts = edges.repartitionByRange(partitions, col("src"), col("dst"))
                .sortWithinPartitions("src", "dst").javaRDD()
                .mapPartitionsWithIndex(new CsrPartition(outDir.toString()), true).collect();
        // Incoming: the transpose, each list in ascending source order (a counting sort's result).
        Path inDir = parts.resolve("graph-in");
        List<Parts.Info> inParts = edges.select(col("dst").as("src"), col("src").as("dst"))
                .repartitionByRange(partitions, col("src"), col("dst")).sortWithinPartitions("src", "dst").javaRDD()
                .mapPartitionsWithIndex(new CsrPartition(inDir.toString()), true).collect();
        try (Parts.Assembler a = new Parts.Assembler(file)) {
            a.u32(nodes);
            a.u32(numEdges);
            a.u32(nodes);
            a.u32(numEdges);
            writeCsr(a, outDir, sorted(outParts), nodes);
            writeCsr(a, inDir, sorted(inParts), nodes);
        }
        checkSize(file, DatabaseLayout.graphFileSize(nodes, numEdges));
        info(String.format(Locale.ROOT, "%d nodes, %d edges", nodes, numEdges));
    }

    /** Row pointers from the (row, count) runs of the parts, then the neighbour lists. */
    private static void writeCsr(Parts.Assembler a, Path dir, List<Parts.Info> infos, long nodes) throws IOException {
        long[] state = new long[3]; // next row to write, running edge count, pending row of a (row, count) pair
        state[2] = -1;
        for (Parts.Info info : infos) {
            Parts.Assembler.readU32s(Parts.partFile(dir, 1, info.partition()), v -> {
                if (state[2] < 0) {
                    state[2] = v;
                    return;
                }
                long row = state[2];
                state[2] = -1;
                while (state[0] <= row) {
                    a.u32(state[1]);
                    state[0]++;
                }
                state[1] += v;
            });
        }
        while (state[0] <= nodes) {
            a.u32(state[1]);
            state[0]++;
        }
        for (Parts.Info info : infos) {
            a.appendBytes(Parts.partFile(dir, 0, info.partition()));
        }
    }

    /** One ordered partition of (src, dst) edges: section 0 the dst list, section 1 (src, count) runs. */
    private record CsrPartition(String dir) implements Function2<Integer, Iterator<Row>, Iterator<Parts.Info>> {
        @Override
        public Iterator<Parts.Info> call(Integer partition, Iterator<Row> rows) throws IOException {
            long n = 0;
            try (Parts.Out out = new Parts.Out(dir, partition, 2)) {
                long run = -1;
                int runCount = 0;
                while (rows.hasNext()) {
                    Row r = rows.next();
                    long src = r.getLong(0);
                    out.section(0).u32((int) r.getLong(1));
                    if (src != run) {
                        if (runCount > 0) {
                            out.section(1).u32((int) run);
                            out.section(1).u32(runCount);
                        }
                        run = src;
                        runCount = 0;
                    }
                    runCount++;
                    n++;
                }
                if (runCount > 0) {
                    out.section(1).u32((int) run);
                    out.section(1).u32(runCount);
                }
                return List.of(out.commit(n)).iterator();
            }
        }
    }

    // ---------------------------------------------------------------- stage 7: tasks

    /** headwater's rewrite: {@code '<table>.parquet'} literals become the quoted table name. */
    static String rewriteQuery(String query, List<String> tableNames) {
        String q = query;
        for (String t : tableNames) {
            q = q.replace("'" + t + ".parquet'", "\"" + t + "\"");
        }
        return q;
    }

    /** The task's query as a Dataset over the raw Parquet tables (registered as temporary views while analyzing). */
    private Dataset<Row> taskQuery(InputSchema.Task task) {
        String where = "task '" + task.name() + "'";
        List<String> names = schema.tables().stream().map(InputSchema.Table::name).toList();
        for (InputSchema.Table t : schema.tables()) {
            spark.read().parquet(rawDir.resolve(t.name() + ".parquet").toString()).createOrReplaceTempView(t.name());
        }
        String query = rewriteQuery(task.query(), names);
        try {
            return spark.sql(query); // analyzed now; the plan keeps the relations, not the view names
        } catch (Exception e) { // ParseException, AnalysisException
            throw new PreprocessException(String.format(Locale.ROOT, "%s: Spark SQL cannot run the query (headwater"
                    + " runs task queries in DataFusion and the dialects differ in places, e.g. some function"
                    + " names; here identifiers are case-sensitive and \"double quotes\" quote identifiers): %s%n"
                    + "query: %s", where, e.getMessage(), query), e);
        } finally {
            for (String t : names) {
                spark.catalog().dropTempView(t);
            }
        }
    }

    private TaskMetadata materializeTask(InputSchema.Task task) throws IOException {
        String where = "task '" + task.name() + "'";
        int anchorIdx = schema.tableIndex(task.anchorTable());
        if (anchorIdx < 0) {
            throw new PreprocessException(where + ": anchor_table '" + task.anchorTable() + "' is not in the schema");
        }
        if (!task.targetStype().isTaskTarget()) {
            throw new PreprocessException(where + ": target_stype must be numerical, timestamp, boolean or"
                    + " categorical, was " + task.targetStype().jsonName());
        }
        Loaded anchor = tables.get(anchorIdx);
        if (!anchor.hasPk()) {
            throw new PreprocessException(where + ": anchor table '" + task.anchorTable() + "' has no primary key"
                    + " column in its Parquet data, so seeds cannot be resolved");
        }
        Dataset<Row> result = taskQuery(task);
        StructType rs = result.schema();
        for (String c : new String[] {task.anchorKey(), task.targetColumn(), task.observationTimeColumn()}) {
            if (c != null && !hasField(rs, c)) {
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
        Dataset<Row> resolved = seeds.join(pkMap(anchor), col("key").equalTo(col("pk"))); // unresolved anchors drop
        Column observation;
        if (task.observationTimeColumn() != null) {
            observation = col("obs");
        } else if (anchor.schema().temporalColumn() != null) {
            if (!anchor.hasTemporal()) {
                throw new PreprocessException(where + ": temporal column '" + anchor.schema().temporalColumn()
                        + "' of anchor table '" + anchor.schema().name() + "' is not in its Parquet data");
            }
            Dataset<Row> times = anchor.df().select(col(ROW).plus(anchor.rowStart()).as("trow"), col("__tc"));
            resolved = resolved.join(times, col("prow").equalTo(col("trow")), "left");
            observation = col("__tc");
        } else {
            observation = lit(null).cast(DataTypes.LongType);
        }
        Dataset<Row> kept = resolved.select(col("seq"), col("prow"), observation.as("obs"), col("target"))
                .persist(StorageLevel.MEMORY_AND_DISK());
        cached.add(kept);
        long n = kept.count();
        Dataset<Row> ordered = kept.repartitionByRange(partitions(n), col("seq")).sortWithinPartitions("seq")
                .persist(StorageLevel.MEMORY_AND_DISK());
        cached.add(ordered);
        if (n == 0) {
            info(task.name() + ": no seed resolves to an anchor row; skipped (as headwater, later tasks shift down)");
            return null;
        }
        SemanticType stype = task.targetStype();
        ColumnStats targetStats;
        HashMap<String, Integer> cats = null;
        switch (stype) {
            case NUMERICAL -> {
                OrderedStats.Numerical acc = new OrderedStats.Numerical();
                JavaRDD<Object[]> chunks = targetChunks(ordered, false);
                forEachInOrder(chunks, c -> acc.add((double[]) c[0]));
                acc.endFirstPass();
                forEachInOrder(chunks, c -> acc.addSquares((double[]) c[0]));
                targetStats = acc.stats(n - acc.count);
            }
            case TIMESTAMP -> {
                OrderedStats.Timestamp acc = new OrderedStats.Timestamp();
                JavaRDD<Object[]> chunks = targetChunks(ordered, true);
                forEachInOrder(chunks, c -> acc.add((long[]) c[0]));
                acc.endFirstPass();
                forEachInOrder(chunks, c -> acc.addSquares((long[]) c[0]));
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
                cats = new HashMap<>();
                for (String v : categories) {
                    Integer idx = catVocab.get(task.targetColumn() + " is " + v); // uncut lookup, as headwater
                    cats.put(v, idx == null ? 0 : idx);
                }
                int start = categories.isEmpty() ? 0 : cats.get(categories.getFirst());
                targetStats = new ColumnStats.Categorical(nulls, categories, start);
            }
            default -> throw new IllegalStateException(stype.toString());
        }
        Path dir = parts.resolve("task-" + task.name().hashCode() + "-" + UUID.randomUUID());
        ColumnStats.Numerical num = targetStats instanceof ColumnStats.Numerical x ? x : null;
        List<Parts.Info> infos = ordered.select("prow", "obs", "target").javaRDD().mapPartitionsWithIndex(
                new EncodeTask(stype, num == null ? 0.0 : num.mean(), num == null ? 1.0 : num.std(), globalTsMean,
                        globalTsStd, cats, dir.toString()), true).collect();
        Path file = DatabaseLayout.taskFile(work, task.name());
        try (Parts.Assembler a = new Parts.Assembler(file)) {
            a.u32(n);
            a.u32(0);
            for (int section = 0; section < 4; section++) {
                boolean bits = section == 2 || (section == 3 && stype == SemanticType.BOOLEAN);
                for (Parts.Info info : sorted(infos)) {
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
        checkSize(file, DatabaseLayout.taskFileSize(stype, n));
        info(String.format(Locale.ROOT, "%s: %d seeds", task.name(), n));
        return new TaskMetadata(task.name(), anchorIdx, stype, (int) n, targetStats);
    }

    private JavaRDD<Object[]> targetChunks(Dataset<Row> ordered, boolean timestamp) {
        JavaRDD<Object[]> chunks = ordered.select("seq", "target").javaRDD()
                .mapPartitions(new StatChunks(new boolean[] {timestamp}, new int[] {1}))
                .persist(StorageLevel.MEMORY_AND_DISK());
        chunkRdds.add(chunks);
        return chunks;
    }

    /** Encodes one ordered partition of a task's seeds (spec §5.3). */
    private record EncodeTask(SemanticType stype, double mean, double std, double tsMean, double tsStd,
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

    // ---------------------------------------------------------------- metadata

    private List<TableMetadata> tableMetadata() {
        List<TableMetadata> out = new ArrayList<>();
        for (Loaded t : tables) {
            InputSchema.Table s = t.schema();
            int pk = s.primaryKey() == null ? -1 : s.columnIndex(s.primaryKey());
            int tc = s.temporalColumn() == null ? -1 : s.columnIndex(s.temporalColumn());
            out.add(new TableMetadata(s.name(), t.colStart(), t.colStart() + s.columns().size(), (int) t.rowStart(),
                    (int) (t.rowStart() + t.rows()), pk < 0 ? -1 : t.colStart() + pk, tc < 0 ? -1 : t.colStart() + tc));
        }
        return out;
    }

    private List<ColumnMetadata> columnMetadata() {
        List<ColumnMetadata> out = new ArrayList<>();
        for (Loaded t : tables) {
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

    // ---------------------------------------------------------------- files

    private void release() {
        for (Dataset<?> d : cached) {
            if (d != null) {
                d.unpersist(false);
            }
        }
        for (JavaRDD<?> r : chunkRdds) {
            r.unpersist(false);
        }
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
