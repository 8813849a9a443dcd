package io.github.semyonsinchenko.safetensors.spark.write;

import static io.github.semyonsinchenko.safetensors.spark.write.WriteErrors.analysis;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.format.JsonErrors;
import io.github.semyonsinchenko.safetensors.spark.tensor.ElementType;
import io.github.semyonsinchenko.safetensors.spark.tensor.TensorEncoding;
import io.github.semyonsinchenko.safetensors.spark.tensor.TensorStruct;
import io.github.semyonsinchenko.safetensors.dataset.AppendRules;
import io.github.semyonsinchenko.safetensors.dataset.CommitPolicy;
import io.github.semyonsinchenko.safetensors.dataset.Layout;
import io.github.semyonsinchenko.safetensors.dataset.OptionNames;
import io.github.semyonsinchenko.safetensors.dataset.TensorNames;
import java.io.Serial;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
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

    /** Dtypes numeric input can be encoded into. */
    static final Set<Dtype> TARGET_DTYPES = Set.of(Dtype.F16, Dtype.BF16, Dtype.F32, Dtype.F64, Dtype.I8, Dtype.I16,
            Dtype.I32, Dtype.I64, Dtype.U8, Dtype.U16, Dtype.U32, Dtype.U64);
    static final String TARGET_DTYPE_LIST = "F16, BF16, F32, F64, I8, I16, I32, I64, U8, U16, U32, U64";

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

    /** Parses and validates everything that can be known before a task runs. */
    static WriteOptions parse(CaseInsensitiveStringMap options, StructType schema, SaveMode saveMode)
            throws AnalysisException {
        try {
            OptionNames.check(options.keySet(), KNOWN, "safetensors write");
        } catch (IllegalArgumentException e) {
            throw analysis(e.getMessage());
        }
        String path = options.get("path");
        if (path == null || path.isBlank()) {
            throw analysis("no output path: use .save(path) or .option(\"path\", ...)");
        }

        // --- mode: exactly one of batch_size / name_col
        String batchOpt = options.get(BATCH_SIZE);
        String nameCol = options.get(NAME_COL);
        if ((batchOpt == null) == (nameCol == null)) {
            throw analysis("set exactly one of '" + BATCH_SIZE + "' (batch mode: stack N rows per tensor) or '"
                    + NAME_COL + "' (key-value mode: one tensor per row, named by that column); got "
                    + (batchOpt == null ? "neither" : "both"));
        }
        Mode mode = batchOpt != null ? Mode.BATCH : Mode.KV;
        int batchSize = 0;
        if (mode == Mode.BATCH) {
            batchSize = parseInt(BATCH_SIZE, batchOpt, 1, Integer.MAX_VALUE, "a positive integer");
        }
        int nameOrdinal = -1;
        if (mode == Mode.KV) {
            nameOrdinal = fieldIndex(schema, nameCol, NAME_COL);
            DataType t = schema.fields()[nameOrdinal].dataType();
            if (t != DataTypes.StringType) {
                throw analysis("'" + NAME_COL + "' column '" + nameCol + "' is " + t.simpleString()
                        + "; the key column must be a string");
            }
            nameCol = schema.fields()[nameOrdinal].name();
        }

        // --- mode-specific options must not be given to the other mode
        String tailOpt = options.get(TAIL_STRATEGY);
        String dupOpt = options.get(DUPLICATES_STRATEGY);
        String packOpt = options.get(PACK_BATCHES);
        String sepOpt = options.get(KV_SEPARATOR);
        for (String[] only : new String[][] {{TAIL_STRATEGY, tailOpt}, {PACK_BATCHES, packOpt}}) {
            if (mode == Mode.KV && only[1] != null) {
                throw analysis("'" + only[0] + "' applies to batch mode ('" + BATCH_SIZE + "') only, not to '"
                        + NAME_COL + "'");
            }
        }
        for (String[] only : new String[][] {{DUPLICATES_STRATEGY, dupOpt}, {KV_SEPARATOR, sepOpt}}) {
            if (mode == Mode.BATCH && only[1] != null) {
                throw analysis("'" + only[0] + "' applies to key-value mode ('" + NAME_COL
                        + "') only, not to '" + BATCH_SIZE + "'");
            }
        }
        boolean packBatches = switch (packOpt == null ? "false" : packOpt.toLowerCase(Locale.ROOT)) {
            case "true" -> true;
            case "false" -> false;
            default -> throw analysis("'" + PACK_BATCHES + "' is '" + packOpt + "'; allowed: true, false (default)");
        };
        String kvSeparator = mode == Mode.KV ? (sepOpt == null ? TensorNames.DEFAULT_KV_SEPARATOR : sepOpt) : null;
        Tail tail = switch (tailOpt == null ? "write" : tailOpt.toLowerCase(Locale.ROOT)) {
            case "write" -> Tail.WRITE;
            case "drop" -> Tail.DROP;
            case "pad" -> Tail.PAD;
            default -> throw analysis("'" + TAIL_STRATEGY + "' is '" + tailOpt + "'; allowed: write (default), drop, pad");
        };
        Duplicates duplicates = switch (dupOpt == null ? "fail" : dupOpt.toLowerCase(Locale.ROOT)) {
            case "fail" -> Duplicates.FAIL;
            case "lastwin" -> Duplicates.LAST_WIN;
            default -> throw analysis("'" + DUPLICATES_STRATEGY + "' is '" + dupOpt
                    + "'; allowed: fail (default), lastWin");
        };

        String indexOpt = options.get(GENERATE_INDEX);
        boolean generateIndex = switch (indexOpt == null ? "false" : indexOpt.toLowerCase(Locale.ROOT)) {
            case "true" -> true;
            case "false" -> false;
            default -> throw analysis("'" + GENERATE_INDEX + "' is '" + indexOpt + "'; allowed: true, false (default)");
        };

        String shardOpt = options.get(TARGET_SHARD_SIZE_MB);
        int shardMb = shardOpt == null ? DEFAULT_SHARD_MB
                : parseInt(TARGET_SHARD_SIZE_MB, shardOpt, MIN_SHARD_MB, MAX_SHARD_MB,
                        "an integer from " + MIN_SHARD_MB + " to " + MAX_SHARD_MB + " (MiB)");

        // --- target dtype
        String dtypeOpt = options.get(DTYPE);
        Dtype dtype = null;
        if (dtypeOpt != null) {
            dtype = Dtype.fromName(dtypeOpt.trim().toUpperCase(Locale.ROOT));
            if (dtype == null || !TARGET_DTYPES.contains(dtype)) {
                throw analysis("'" + DTYPE + "' is '" + dtypeOpt + "'; allowed: " + TARGET_DTYPE_LIST);
            }
        }

        // --- columns
        List<String> names = new ArrayList<>();
        String colOpt = options.get(COLUMNS);
        if (colOpt == null) {
            for (StructField f : schema.fields()) {
                if (mode == Mode.BATCH || !f.name().equals(nameCol)) {
                    names.add(f.name());
                }
            }
        } else {
            Set<String> seen = new LinkedHashSet<>();
            for (String part : colOpt.split(",", -1)) {
                String c = part.trim();
                if (c.isEmpty()) {
                    throw analysis("'" + COLUMNS + "' is '" + colOpt + "': empty column name; give a comma-separated "
                            + "list of columns of " + schema.simpleString());
                }
                String resolved = schema.fields()[fieldIndex(schema, c, COLUMNS)].name();
                if (resolved.equals(nameCol)) {
                    throw analysis("'" + COLUMNS + "' lists the key column '" + nameCol + "' ('" + NAME_COL
                            + "'); the key names tensors, it is not serialized");
                }
                if (!seen.add(resolved)) {
                    throw analysis("'" + COLUMNS + "' lists '" + resolved + "' twice");
                }
            }
            names.addAll(seen);
        }
        if (names.isEmpty()) {
            throw analysis("nothing to serialize: the DataFrame has no column besides the key column '" + nameCol + "'");
        }
        // The reader splits tensor names back into columns: they must be unambiguous.
        String ambiguity = mode == Mode.KV ? TensorNames.kvAmbiguity(names, kvSeparator)
                : packBatches ? TensorNames.packedAmbiguity(names) : null;
        if (ambiguity != null) {
            throw analysis(ambiguity);
        }

        // --- shapes
        Map<String, long[]> shapes = parseShapes(options.get(SHAPES), names);

        // --- per-column kind and dtype
        List<ColumnSpec> specs = new ArrayList<>();
        for (String name : names) {
            int ordinal = schema.fieldIndex(name);
            specs.add(columnSpec(schema.fields()[ordinal], ordinal, dtype, shapes.get(name)));
        }

        CommitPolicy policy;
        try {
            policy = CommitPolicy.parse(options.asCaseSensitiveMap());
        } catch (IllegalArgumentException e) {
            throw analysis(e.getMessage());
        }
        return new WriteOptions(path, mode, specs, batchSize, tail, packBatches, nameCol, nameOrdinal, duplicates,
                kvSeparator, generateIndex, shardMb * (1L << 20), saveMode, policy);
    }

    private static ColumnSpec columnSpec(StructField field, int ordinal, Dtype dtype, long[] shape)
            throws AnalysisException {
        DataType type = field.dataType();
        if (TensorStruct.is(type)) {
            return new ColumnSpec(field.name(), ordinal, ColumnSpec.Kind.TENSOR_STRUCT, null, 0, dtype, shape);
        }
        int depth = 0;
        DataType t = type;
        while (t instanceof ArrayType a) {
            depth++;
            t = a.elementType();
        }
        ElementType element = depth > 0 ? ElementType.of(t) : null;
        if (element == null) {
            throw analysis("column '" + field.name() + "' is " + type.simpleString() + ", which cannot be written as a "
                    + "tensor; allowed: the Tensor Struct " + TensorStruct.TYPE.simpleString()
                    + " or (nested) arrays of float, double, int, long, short, byte"
                    + " (choose the columns to write with '" + COLUMNS + "')");
        }
        Dtype target = dtype == null ? element.natural : dtype;
        if (element.floating && !isFloat(target)) {
            throw analysis("column '" + field.name() + "' is " + type.simpleString() + " and '" + DTYPE + "' is "
                    + target + ": floating-point values are never truncated to integers; use F16, BF16, F32 or F64");
        }
        return new ColumnSpec(field.name(), ordinal, ColumnSpec.Kind.NUMERIC_ARRAY, element, depth, target, shape);
    }

    static boolean isFloat(Dtype d) {
        return TensorEncoding.isFloat(d);
    }

    private static Map<String, long[]> parseShapes(String json, List<String> columns) throws AnalysisException {
        Map<String, long[]> out = new LinkedHashMap<>();
        if (json == null) {
            return out;
        }
        String allowed = "a JSON object mapping serialized columns to per-sample shapes, e.g. "
                + "{\"image\": [3, 224, 224], \"label\": []}";
        JsonNode root;
        try {
            root = new ObjectMapper().readTree(json);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw analysis("'" + SHAPES + "' is not valid JSON (" + JsonErrors.describe(e) + "); expected " + allowed);
        }
        if (root == null || !root.isObject()) {
            throw analysis("'" + SHAPES + "' is " + json + "; expected " + allowed);
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = root.properties().iterator(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            String col = columns.stream().filter(c -> c.equalsIgnoreCase(e.getKey())).findFirst().orElse(null);
            if (col == null) {
                throw analysis("'" + SHAPES + "' names '" + e.getKey() + "', which is not a serialized column; "
                        + "serialized columns: " + columns);
            }
            JsonNode v = e.getValue();
            if (!v.isArray()) {
                throw analysis("'" + SHAPES + "' for '" + col + "' is " + v + "; expected a list of non-negative "
                        + "integers ([] for a scalar)");
            }
            long[] shape = new long[v.size()];
            for (int i = 0; i < shape.length; i++) {
                JsonNode d = v.get(i);
                if (!d.canConvertToLong() || !d.isIntegralNumber() || d.asLong() < 0) {
                    throw analysis("'" + SHAPES + "' for '" + col + "' is " + v + "; dimensions must be "
                            + "non-negative integers");
                }
                shape[i] = d.asLong();
            }
            out.put(col, shape);
        }
        return out;
    }

    private static int parseInt(String option, String value, int min, int max, String allowed)
            throws AnalysisException {
        try {
            long v = Long.parseLong(value.trim());
            if (v >= min && v <= max) {
                return (int) v;
            }
        } catch (NumberFormatException ignored) {
            // reported below
        }
        throw analysis("'" + option + "' is '" + value + "'; allowed: " + allowed);
    }

    private static int fieldIndex(StructType schema, String name, String option) throws AnalysisException {
        StructField[] fields = schema.fields();
        for (int i = 0; i < fields.length; i++) {
            if (fields[i].name().equals(name)) {
                return i;
            }
        }
        for (int i = 0; i < fields.length; i++) {
            if (fields[i].name().equalsIgnoreCase(name)) {
                return i;
            }
        }
        throw analysis("'" + option + "' names column '" + name + "', which does not exist; columns: "
                + List.of(schema.fieldNames()));
    }
}
