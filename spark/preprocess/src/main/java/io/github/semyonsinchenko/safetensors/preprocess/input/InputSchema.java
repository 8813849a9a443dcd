package io.github.semyonsinchenko.safetensors.preprocess.input;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.github.semyonsinchenko.safetensors.preprocess.PreprocessException;
import io.github.semyonsinchenko.safetensors.sampler.db.SemanticType;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * headwater's input schema, {@code D/metadata/X.json}: tables (key order = table order), their
 * columns (key order = column order) and tasks (key order = task order). Unknown keys are ignored,
 * as serde does.
 */
public record InputSchema(String name, List<Table> tables, List<Task> tasks) {

    public InputSchema {
        tables = List.copyOf(tables);
        tasks = List.copyOf(tasks);
    }

    /** {@code primaryKey} and {@code temporalColumn} are null when absent. */
    public record Table(String name, String primaryKey, String temporalColumn, List<Column> columns) {
        public Table {
            columns = List.copyOf(columns);
        }

        /** Position of {@code column} in this table, or -1. */
        public int columnIndex(String column) {
            for (int i = 0; i < columns.size(); i++) {
                if (columns.get(i).name().equals(column)) {
                    return i;
                }
            }
            return -1;
        }
    }

    /** {@code foreignKey} ("table.column") and {@code description} are null when absent. */
    public record Column(String name, SemanticType stype, String foreignKey, String description) {
        /** The table part of {@code foreignKey} (before the first '.'), or null. */
        public String foreignTable() {
            if (foreignKey == null) {
                return null;
            }
            int dot = foreignKey.indexOf('.');
            return dot < 0 ? null : foreignKey.substring(0, dot);
        }

        /** The column part of {@code foreignKey} (after the first '.'), or null. */
        public String foreignColumn() {
            if (foreignKey == null) {
                return null;
            }
            int dot = foreignKey.indexOf('.');
            return dot < 0 ? null : foreignKey.substring(dot + 1);
        }
    }

    /** {@code observationTimeColumn} is null when absent; {@code targetStype} as parsed. */
    public record Task(String name, String query, String anchorTable, String anchorKey, String targetColumn,
            SemanticType targetStype, String observationTimeColumn) {}

    /** The index of {@code table} in table order, or -1. */
    public int tableIndex(String table) {
        for (int i = 0; i < tables.size(); i++) {
            if (tables.get(i).name().equals(table)) {
                return i;
            }
        }
        return -1;
    }

    /**
     * headwater's stype parsing: lowercase, case-insensitive; unknown values become Ignored (headwater
     * logs a warning and carries on).
     */
    public static SemanticType parseStype(String s) {
        return switch (s.toLowerCase(Locale.ROOT)) {
            case "identifier" -> SemanticType.IDENTIFIER;
            case "numerical" -> SemanticType.NUMERICAL;
            case "timestamp" -> SemanticType.TIMESTAMP;
            case "boolean" -> SemanticType.BOOLEAN;
            case "categorical" -> SemanticType.CATEGORICAL;
            case "text" -> SemanticType.TEXT;
            default -> SemanticType.IGNORED;
        };
    }

    /** Reads and parses {@code file}. */
    public static InputSchema read(Path file) {
        JsonNode root;
        try {
            root = new ObjectMapper().readTree(file.toFile());
        } catch (IOException e) {
            throw new PreprocessException(file + ": cannot read the schema JSON: " + e.getMessage(), e);
        }
        return parse(root, file.toString());
    }

    static InputSchema parse(JsonNode root, String file) {
        Fields r = new Fields(file);
        r.object(root, "the top level");
        List<Table> tables = new ArrayList<>();
        for (Map.Entry<String, JsonNode> t : r.object(r.field(root, "tables", ""), "tables").properties()) {
            String at = "tables." + t.getKey();
            JsonNode table = r.object(t.getValue(), at);
            List<Column> columns = new ArrayList<>();
            for (Map.Entry<String, JsonNode> c : r.object(r.field(table, "columns", at), at + ".columns").properties()) {
                String cat = at + ".columns." + c.getKey();
                JsonNode col = r.object(c.getValue(), cat);
                columns.add(new Column(c.getKey(), parseStype(r.string(col, "stype", cat)),
                        r.optionalString(col, "foreign_key", cat), r.optionalString(col, "description", cat)));
            }
            tables.add(new Table(t.getKey(), r.optionalString(table, "primary_key", at),
                    r.optionalString(table, "temporal_column", at), columns));
        }
        List<Task> tasks = new ArrayList<>();
        for (Map.Entry<String, JsonNode> t : r.object(r.field(root, "tasks", ""), "tasks").properties()) {
            String at = "tasks." + t.getKey();
            JsonNode task = r.object(t.getValue(), at);
            tasks.add(new Task(t.getKey(), r.string(task, "query", at), r.string(task, "anchor_table", at),
                    r.string(task, "anchor_key", at), r.string(task, "target_column", at),
                    parseStype(r.string(task, "target_stype", at)),
                    r.optionalString(task, "observation_time_column", at)));
        }
        return new InputSchema(r.string(root, "name", ""), tables, tasks);
    }

    /** Typed field access whose errors name the file and the JSON path. */
    private record Fields(String file) {
        PreprocessException error(String at, String expected, JsonNode found) {
            return new PreprocessException(String.format(Locale.ROOT, "%s: expected %s at %s, found %s", file, expected,
                    at.isEmpty() ? "the top level" : at, found == null ? "nothing" : found.toString()));
        }

        JsonNode object(JsonNode n, String at) {
            if (n == null || !n.isObject()) {
                throw error(at, "an object", n);
            }
            return n;
        }

        JsonNode field(JsonNode obj, String key, String at) {
            JsonNode v = obj.get(key);
            if (v == null) {
                throw error(at.isEmpty() ? key : at + "." + key, "a key \"" + key + "\"", null);
            }
            return v;
        }

        String string(JsonNode obj, String key, String at) {
            JsonNode v = field(obj, key, at);
            if (!v.isTextual()) {
                throw error(at.isEmpty() ? key : at + "." + key, "a string", v);
            }
            return v.textValue();
        }

        String optionalString(JsonNode obj, String key, String at) {
            JsonNode v = obj.get(key);
            if (v == null || v.isNull()) {
                return null;
            }
            if (!v.isTextual()) {
                throw error(at + "." + key, "a string or null", v);
            }
            return v.textValue();
        }
    }
}
