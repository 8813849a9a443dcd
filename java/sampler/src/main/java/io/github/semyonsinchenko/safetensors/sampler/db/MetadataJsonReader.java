package io.github.semyonsinchenko.safetensors.sampler.db;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Reads {@code metadata.json}: typed access to its tree, with errors that name the file, the JSON
 * path and the rule ({@link DatabaseRule#METADATA_JSON}, {@link DatabaseRule#METADATA_SCHEMA}).
 */
record MetadataJsonReader(Path file) {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final long U32_MAX = 0xFFFF_FFFFL;

    /** Parses {@code json}; {@code file} names the source in errors. */
    static DatabaseMetadata parse(byte[] json, Path file) throws SamplerDatabaseException {
        JsonNode root;
        try {
            root = MAPPER.readTree(json);
        } catch (JsonProcessingException e) {
            throw new SamplerDatabaseException(DatabaseRule.METADATA_JSON, file, "a JSON document",
                    e.getOriginalMessage(), e);
        } catch (IOException e) {
            throw new SamplerDatabaseException(DatabaseRule.METADATA_JSON, file, "a JSON document", e.toString(), e);
        }
        MetadataJsonReader r = new MetadataJsonReader(file);
        JsonNode top = r.object(root, "the top level");
        List<TableMetadata> tables = new ArrayList<>();
        JsonNode tableArray = r.array(top, "table_metadata");
        for (int i = 0; i < tableArray.size(); i++) {
            String at = "table_metadata[" + i + "]";
            JsonNode t = r.object(tableArray.get(i), at);
            int[] cols = r.range(t, "col_range", at);
            int[] rows = r.range(t, "row_range", at);
            tables.add(new TableMetadata(r.string(t, "name", at), cols[0], cols[1], rows[0], rows[1],
                    r.optionalIndex(t, "pkey_col", at), r.optionalIndex(t, "temporal_col", at)));
        }
        List<ColumnMetadata> columns = new ArrayList<>();
        JsonNode columnArray = r.array(top, "column_metadata");
        for (int i = 0; i < columnArray.size(); i++) {
            String at = "column_metadata[" + i + "]";
            JsonNode c = r.object(columnArray.get(i), at);
            columns.add(new ColumnMetadata(r.string(c, "name", at), r.stype(c, "stype", at),
                    r.optionalIndex(c, "fkey_target_col", at)));
        }
        List<ColumnStats> stats = new ArrayList<>();
        JsonNode statsArray = r.array(top, "column_stats");
        for (int i = 0; i < statsArray.size(); i++) {
            stats.add(r.stats(statsArray.get(i), "column_stats[" + i + "]"));
        }
        List<TaskMetadata> tasks = new ArrayList<>();
        JsonNode taskArray = r.array(top, "task_metadata");
        for (int i = 0; i < taskArray.size(); i++) {
            String at = "task_metadata[" + i + "]";
            JsonNode t = r.object(taskArray.get(i), at);
            tasks.add(new TaskMetadata(r.string(t, "name", at), r.index(t, "anchor_table", at),
                    r.stype(t, "target_stype", at), r.index(t, "num_seeds", at),
                    r.stats(r.field(t, "target_stats", at), at + ".target_stats")));
        }
        return new DatabaseMetadata(tables, columns, stats, tasks, r.f64(top, "global_ts_mean_us", "the top level"),
                r.f64(top, "global_ts_std_us", "the top level"));
    }

    SamplerDatabaseException schema(String expected, String at, JsonNode found) {
        String actual = found == null || found.isMissingNode() ? "nothing" : found.getNodeType() + " " + abbreviate(found);
        return new SamplerDatabaseException(DatabaseRule.METADATA_SCHEMA, file, expected + " at " + at, actual);
    }

    static String abbreviate(JsonNode n) {
        String s = n.toString();
        return s.length() > 60 ? s.substring(0, 60) + "..." : s;
    }

    JsonNode object(JsonNode n, String at) throws SamplerDatabaseException {
        if (n == null || !n.isObject()) {
            throw schema("an object", at, n);
        }
        return n;
    }

    JsonNode field(JsonNode obj, String key, String at) throws SamplerDatabaseException {
        JsonNode v = obj.get(key);
        if (v == null) {
            throw schema("a key \"" + key + "\"", at, null);
        }
        return v;
    }

    JsonNode array(JsonNode obj, String key) throws SamplerDatabaseException {
        JsonNode v = field(obj, key, "the top level");
        if (!v.isArray()) {
            throw schema("an array", key, v);
        }
        return v;
    }

    String string(JsonNode obj, String key, String at) throws SamplerDatabaseException {
        JsonNode v = field(obj, key, at);
        if (!v.isTextual()) {
            throw schema("a string", at + "." + key, v);
        }
        return v.textValue();
    }

    long u64(JsonNode v, String at) throws SamplerDatabaseException {
        if (v == null || !v.isIntegralNumber() || v.bigIntegerValue().signum() < 0
                || v.bigIntegerValue().bitLength() > 64) {
            throw schema("an unsigned 64-bit integer", at, v);
        }
        return v.bigIntegerValue().longValue();
    }

    long i64(JsonNode v, String at) throws SamplerDatabaseException {
        if (v == null || !v.isIntegralNumber() || !v.canConvertToLong()) {
            throw schema("a 64-bit integer", at, v);
        }
        return v.longValue();
    }

    /** A u32 index; values past Integer.MAX_VALUE cannot be addressed on the JVM and are refused. */
    int index(JsonNode v, String at) throws SamplerDatabaseException {
        if (v == null || !v.isIntegralNumber() || !v.canConvertToLong() || v.longValue() < 0
                || v.longValue() > U32_MAX) {
            throw schema("an unsigned 32-bit integer", at, v);
        }
        if (v.longValue() > Integer.MAX_VALUE) {
            throw schema("an index below 2^31 (the JVM's array limit)", at, v);
        }
        return v.intValue();
    }

    int index(JsonNode obj, String key, String at) throws SamplerDatabaseException {
        return index(field(obj, key, at), at + "." + key);
    }

    int optionalIndex(JsonNode obj, String key, String at) throws SamplerDatabaseException {
        JsonNode v = obj.get(key);
        if (v == null || v.isNull()) {
            return -1;
        }
        return index(v, at + "." + key);
    }

    int[] range(JsonNode obj, String key, String at) throws SamplerDatabaseException {
        JsonNode v = field(obj, key, at);
        if (!v.isArray() || v.size() != 2) {
            throw schema("a [start, end] pair", at + "." + key, v);
        }
        return new int[] {index(v.get(0), at + "." + key + "[0]"), index(v.get(1), at + "." + key + "[1]")};
    }

    double f64(JsonNode obj, String key, String at) throws SamplerDatabaseException {
        JsonNode v = field(obj, key, at);
        if (v.isNull()) {
            return Double.NaN;
        }
        if (!v.isNumber()) {
            throw schema("a number", at + "." + key, v);
        }
        return v.doubleValue();
    }

    SemanticType stype(JsonNode obj, String key, String at) throws SamplerDatabaseException {
        JsonNode v = field(obj, key, at);
        SemanticType t = v.isTextual() ? SemanticType.ofJsonName(v.textValue()) : null;
        if (t == null) {
            throw schema("a semantic type (Identifier, Numerical, Timestamp, Boolean, Categorical, Text,"
                    + " Ignored)", at + "." + key, v);
        }
        return t;
    }

    ColumnStats stats(JsonNode n, String at) throws SamplerDatabaseException {
        if (n != null && n.isTextual() && n.textValue().equals("Ignored")) {
            return new ColumnStats.Ignored();
        }
        if (n == null || !n.isObject() || n.size() != 1) {
            throw schema("\"Ignored\" or a one-key object {\"<Variant>\": {...}}", at, n);
        }
        Map.Entry<String, JsonNode> e = n.properties().iterator().next();
        String variant = e.getKey();
        String vat = at + "." + variant;
        JsonNode f = object(e.getValue(), vat);
        long nulls = u64(field(f, "num_nulls", vat), vat + ".num_nulls");
        return switch (variant) {
            case "Identifier" -> new ColumnStats.Identifier(nulls);
            case "Text" -> new ColumnStats.Text(nulls);
            case "Numerical" -> new ColumnStats.Numerical(nulls, f64(f, "min", vat), f64(f, "max", vat),
                    f64(f, "mean", vat), f64(f, "std", vat));
            case "Timestamp" -> new ColumnStats.Timestamp(nulls, i64(field(f, "min_us", vat), vat + ".min_us"),
                    i64(field(f, "max_us", vat), vat + ".max_us"), f64(f, "mean_us", vat), f64(f, "std_us", vat));
            case "Boolean" -> new ColumnStats.Boolean(nulls, u64(field(f, "num_true", vat), vat + ".num_true"),
                    u64(field(f, "num_false", vat), vat + ".num_false"));
            case "Categorical" -> {
                JsonNode cats = field(f, "categories", vat);
                if (!cats.isArray()) {
                    throw schema("an array of strings", vat + ".categories", cats);
                }
                List<String> list = new ArrayList<>(cats.size());
                for (JsonNode c : cats) {
                    if (!c.isTextual()) {
                        throw schema("a string", vat + ".categories", c);
                    }
                    list.add(c.textValue());
                }
                yield new ColumnStats.Categorical(nulls, list, index(field(f, "cat_emb_start", vat),
                        vat + ".cat_emb_start"));
            }
            default -> throw schema("a stats variant (Identifier, Numerical, Timestamp, Boolean, Categorical,"
                    + " Text)", at, n);
        };
    }
}
