package io.github.semyonsinchenko.safetensors.spark.write;

import static io.github.semyonsinchenko.safetensors.spark.write.WriteErrors.analysis;
import static io.github.semyonsinchenko.safetensors.spark.write.WriteOptions.COLUMNS;
import static io.github.semyonsinchenko.safetensors.spark.write.WriteOptions.DTYPE;
import static io.github.semyonsinchenko.safetensors.spark.write.WriteOptions.NAME_COL;
import static io.github.semyonsinchenko.safetensors.spark.write.WriteOptions.SHAPES;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.github.semyonsinchenko.safetensors.dataset.TensorNames;
import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.format.JsonErrors;
import io.github.semyonsinchenko.safetensors.spark.tensor.DtypeEncoding;
import io.github.semyonsinchenko.safetensors.spark.tensor.ElementType;
import io.github.semyonsinchenko.safetensors.spark.tensor.TensorStruct;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * Which DataFrame columns a write serializes and how ({@link ColumnSpec}), from the schema and the
 * {@code columns}, {@code shapes} and {@code dtype} options; checked on the driver, every problem an
 * {@link AnalysisException} naming the option, the column and what is allowed.
 */
final class ColumnSpecs {
    private ColumnSpecs() {}

    /**
     * The serialized columns: those {@code colOpt} (the {@code columns} option) lists (comma-separated), else every column but
     * the key column, each with its kind, target dtype and fixed shape.
     */
    static List<ColumnSpec> resolve(StructType schema, String colOpt, String shapesOpt, Dtype dtype,
            WriteOptions.Mode mode, String nameCol, String kvSeparator, boolean packBatches)
            throws AnalysisException {
        List<String> names = new ArrayList<>();
        if (colOpt == null) {
            for (StructField f : schema.fields()) {
                if (mode == WriteOptions.Mode.BATCH || !f.name().equals(nameCol)) {
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
        String ambiguity = mode == WriteOptions.Mode.KV ? TensorNames.kvAmbiguity(names, kvSeparator)
                : packBatches ? TensorNames.packedAmbiguity(names) : null;
        if (ambiguity != null) {
            throw analysis(ambiguity);
        }

        Map<String, long[]> shapes = parseShapes(shapesOpt, names);

        List<ColumnSpec> specs = new ArrayList<>();
        for (String name : names) {
            int ordinal = schema.fieldIndex(name);
            specs.add(columnSpec(schema.fields()[ordinal], ordinal, dtype, shapes.get(name)));
        }
        return specs;
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
        if (element.floating && !DtypeEncoding.isConvertibleFloat(target)) {
            throw analysis("column '" + field.name() + "' is " + type.simpleString() + " and '" + DTYPE + "' is "
                    + target + ": floating-point values are never truncated to integers; use F16, BF16, F32 or F64");
        }
        return new ColumnSpec(field.name(), ordinal, ColumnSpec.Kind.NUMERIC_ARRAY, element, depth, target, shape);
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

    static int fieldIndex(StructType schema, String name, String option) throws AnalysisException {
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
