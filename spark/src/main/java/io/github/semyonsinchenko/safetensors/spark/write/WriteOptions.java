package io.github.semyonsinchenko.safetensors.spark.write;

import static io.github.semyonsinchenko.safetensors.spark.write.WriteErrors.analysis;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.dataset.AppendRules;
import io.github.semyonsinchenko.safetensors.dataset.CommitPolicy;
import io.github.semyonsinchenko.safetensors.dataset.Layout;
import io.github.semyonsinchenko.safetensors.dataset.TensorNames;
import io.github.semyonsinchenko.safetensors.options.OptionException;
import io.github.semyonsinchenko.safetensors.options.Options;
import io.github.semyonsinchenko.safetensors.spark.conf.SparkOptions;
import java.io.Serial;
import java.io.Serializable;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.SequencedMap;
import java.util.Set;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The write options, parsed and checked once on the driver ({@link #parse}); every problem is an
 * {@link AnalysisException} that names the option, the bad value and what is allowed. The result
 * is immutable and travels to the tasks inside the writer factory.
 */
final class WriteOptions implements Serializable {
    @Serial
    private static final long serialVersionUID = 1L;

    static final String COLUMNS = "columns";
    static final String DTYPE = "dtype";
    static final String SHAPES = "shapes";
    static final String BATCH_SIZE = "batch_size";
    static final String NAME_COL = "name_col";
    static final String TAIL_STRATEGY = "tail_strategy";
    static final String DUPLICATES_STRATEGY = "duplicatesStrategy";
    static final String GENERATE_INDEX = "generate_index";
    static final String TARGET_SHARD_SIZE_MB = "target_shard_size_mb";
    static final String KV_SEPARATOR = "kv_separator";
    static final String PACK_BATCHES = "pack_batches";

    /** Every option the write reads ({@code path} is Spark's). */
    static final Set<String> KNOWN = knownOptions();

    private static Set<String> knownOptions() {
        Set<String> k = new java.util.HashSet<>(Set.of("path", COLUMNS, DTYPE, SHAPES, BATCH_SIZE, NAME_COL,
                TAIL_STRATEGY, DUPLICATES_STRATEGY, GENERATE_INDEX, TARGET_SHARD_SIZE_MB, KV_SEPARATOR, PACK_BATCHES));
        k.addAll(CommitPolicy.OPTIONS);
        return Set.copyOf(k);
    }

    static final int DEFAULT_SHARD_MB = 300;
    static final int MIN_SHARD_MB = 50;
    static final int MAX_SHARD_MB = 1000;

    /** Dtypes numeric input can be encoded into, in the order messages list them. */
    static final List<Dtype> TARGET_DTYPES = List.of(Dtype.F16, Dtype.BF16, Dtype.F32, Dtype.F64, Dtype.I8, Dtype.I16,
            Dtype.I32, Dtype.I64, Dtype.U8, Dtype.U16, Dtype.U32, Dtype.U64);

    enum Mode { BATCH, KV }

    enum Tail { WRITE, DROP, PAD }

    enum Duplicates { FAIL, LAST_WIN }

    final String path;
    final Mode mode;
    @SuppressWarnings("serial") // always a List.copyOf, which serializes
    final List<ColumnSpec> columns;
    final int batchSize;          // batch mode
    final Tail tail;              // batch mode
    final boolean packBatches;    // batch mode: several batches per file (else one file per batch)
    final String nameCol;         // kv mode
    final int nameOrdinal;        // kv mode
    final Duplicates duplicates;  // kv mode
    final String kvSeparator;     // kv mode
    final boolean generateIndex;
    final long targetShardBytes;
    final SaveMode saveMode;
    final CommitPolicy commitPolicy;

    private WriteOptions(String path, Mode mode, List<ColumnSpec> columns, int batchSize, Tail tail,
                         boolean packBatches, String nameCol, int nameOrdinal, Duplicates duplicates,
                         String kvSeparator, boolean generateIndex, long targetShardBytes, SaveMode saveMode,
                         CommitPolicy commitPolicy) {
        this.path = path;
        this.mode = mode;
        this.columns = List.copyOf(columns);
        this.batchSize = batchSize;
        this.tail = tail;
        this.packBatches = packBatches;
        this.nameCol = nameCol;
        this.nameOrdinal = nameOrdinal;
        this.duplicates = duplicates;
        this.kvSeparator = kvSeparator;
        this.generateIndex = generateIndex;
        this.targetShardBytes = targetShardBytes;
        this.saveMode = saveMode;
        this.commitPolicy = commitPolicy;
    }

    /** The write's layout, as the manifest records it. */
    Layout layout() {
        return mode == Mode.BATCH ? Layout.batch(batchSize, tail.name().toLowerCase(Locale.ROOT), packBatches)
                : Layout.kv(nameCol, kvSeparator);
    }

    /** Why this write cannot append to {@code old}, or null (the one rule: {@link AppendRules}). */
    String appendProblem(io.github.semyonsinchenko.safetensors.dataset.Manifest old) {
        return AppendRules.layoutProblem(old, layout(), columns.stream().map(ColumnSpec::name).toList());
    }

    /** Spellings of {@link #TAIL_STRATEGY}. */
    private static final SequencedMap<String, Tail> TAILS = Options.lowerCaseNames(Tail.class);
    /** Spellings of {@link #DUPLICATES_STRATEGY}. */
    private static final SequencedMap<String, Duplicates> DUPLICATE_RULES = new LinkedHashMap<>();
    /** Spellings of {@link #DTYPE}: the dtypes numeric input can be encoded into. */
    private static final SequencedMap<String, Dtype> DTYPES = new LinkedHashMap<>();

    static {
        DUPLICATE_RULES.put("fail", Duplicates.FAIL);
        DUPLICATE_RULES.put("lastWin", Duplicates.LAST_WIN);
        for (Dtype d : TARGET_DTYPES) {
            DTYPES.put(d.name(), d);
        }
    }

    /**
     * Parses and validates everything that can be known before a task runs.
     *
     * @throws AnalysisException for an unknown option, a bad value or options that do not go together
     */
    static WriteOptions parse(CaseInsensitiveStringMap raw, StructType schema, SaveMode saveMode)
            throws AnalysisException {
        try {
            return parse(SparkOptions.of("safetensors write", raw.asCaseSensitiveMap(), KNOWN), schema, saveMode);
        } catch (OptionException e) {
            throw analysis(e.getMessage());
        }
    }

    private static WriteOptions parse(Options options, StructType schema, SaveMode saveMode)
            throws AnalysisException {
        String path = options.string("path", null);
        if (path == null || path.isBlank()) {
            throw analysis("no output path: use .save(path) or .option(\"path\", ...)");
        }

        // mode: exactly one of batch_size / name_col
        if (options.has(BATCH_SIZE) == options.has(NAME_COL)) {
            throw analysis("set exactly one of '" + BATCH_SIZE + "' (batch mode: stack N rows per tensor) or '"
                    + NAME_COL + "' (key-value mode: one tensor per row, named by that column); got "
                    + (options.has(BATCH_SIZE) ? "both" : "neither"));
        }
        Mode mode = options.has(BATCH_SIZE) ? Mode.BATCH : Mode.KV;
        refuseOtherModesOptions(options, mode);
        int batchSize = options.intValue(BATCH_SIZE, 0, 1, Integer.MAX_VALUE, "rows");
        String nameCol = options.string(NAME_COL, null);
        int nameOrdinal = mode == Mode.KV ? keyColumn(schema, nameCol) : -1;
        if (mode == Mode.KV) {
            nameCol = schema.fields()[nameOrdinal].name();
        }
        boolean packBatches = options.bool(PACK_BATCHES, false);
        String kvSeparator = mode == Mode.KV ? options.string(KV_SEPARATOR, TensorNames.DEFAULT_KV_SEPARATOR) : null;
        Tail tail = options.choice(TAIL_STRATEGY, Tail.WRITE, TAILS);
        Duplicates duplicates = options.choice(DUPLICATES_STRATEGY, Duplicates.FAIL, DUPLICATE_RULES);
        boolean generateIndex = options.bool(GENERATE_INDEX, false);
        int shardMb = options.intValue(TARGET_SHARD_SIZE_MB, DEFAULT_SHARD_MB, MIN_SHARD_MB, MAX_SHARD_MB, "MiB");
        Dtype dtype = options.choice(DTYPE, null, DTYPES);

        List<ColumnSpec> specs = ColumnSpecs.resolve(schema, options.string(COLUMNS, null),
                options.string(SHAPES, null), dtype, mode, nameCol, kvSeparator, packBatches);
        return new WriteOptions(path, mode, specs, batchSize, tail, packBatches, nameCol, nameOrdinal, duplicates,
                kvSeparator, generateIndex, shardMb * (1L << 20), saveMode, CommitPolicy.parse(options));
    }

    /** The key column's ordinal: {@code name_col} must name a string column. */
    private static int keyColumn(StructType schema, String nameCol) throws AnalysisException {
        int ordinal = ColumnSpecs.fieldIndex(schema, nameCol, NAME_COL);
        DataType t = schema.fields()[ordinal].dataType();
        if (t != DataTypes.StringType) {
            throw analysis("'" + NAME_COL + "' column '" + nameCol + "' is " + t.simpleString()
                    + "; the key column must be a string");
        }
        return ordinal;
    }

    /** The options of one mode must not be given to the other. */
    private static void refuseOtherModesOptions(Options options, Mode mode) throws AnalysisException {
        for (String batchOnly : new String[] {TAIL_STRATEGY, PACK_BATCHES}) {
            if (mode == Mode.KV && options.has(batchOnly)) {
                throw analysis("'" + batchOnly + "' applies to batch mode ('" + BATCH_SIZE + "') only, not to '"
                        + NAME_COL + "'");
            }
        }
        for (String kvOnly : new String[] {DUPLICATES_STRATEGY, KV_SEPARATOR}) {
            if (mode == Mode.BATCH && options.has(kvOnly)) {
                throw analysis("'" + kvOnly + "' applies to key-value mode ('" + NAME_COL
                        + "') only, not to '" + BATCH_SIZE + "'");
            }
        }
    }
}
