package io.github.semyonsinchenko.safetensors.sampler.db;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The contents of {@code metadata.json}: tables, columns (with their stats), tasks and the global
 * timestamp statistics. {@link MetadataJson} reads and writes it; {@link #validate} checks that
 * it is self-consistent (the checks that need no other file).
 *
 * @param tables the tables, in order of their (contiguous) column and row ranges
 * @param columns every column, by global column index
 * @param columnStats each column's statistics, by global column index
 * @param tasks the prediction tasks, by task index
 * @param globalTsMeanUs the mean of every timestamp cell, epoch microseconds (NaN when the JSON has
 *     {@code null})
 * @param globalTsStdUs their standard deviation, in microseconds (NaN when the JSON has {@code null})
 */
public record DatabaseMetadata(List<TableMetadata> tables, List<ColumnMetadata> columns,
        List<ColumnStats> columnStats, List<TaskMetadata> tasks, double globalTsMeanUs, double globalTsStdUs) {

    /** Copies the lists. */
    public DatabaseMetadata {
        tables = List.copyOf(tables);
        columns = List.copyOf(columns);
        columnStats = List.copyOf(columnStats);
        tasks = List.copyOf(tasks);
    }

    /**
     * Total rows, i.e. the last table's row end (0 without tables).
     *
     * @return the row count over all tables
     */
    public int numRows() {
        return tables.isEmpty() ? 0 : tables.getLast().rowEnd();
    }

    /**
     * The number of columns over all tables.
     *
     * @return the column count
     */
    public int numColumns() {
        return columns.size();
    }

    /**
     * The index of the task called {@code name}.
     *
     * @param name a task's name
     * @return its index, or -1 if there is no such task
     */
    public int taskIndex(String name) {
        for (int i = 0; i < tasks.size(); i++) {
            if (tasks.get(i).name().equals(name)) {
                return i;
            }
        }
        return -1;
    }

    /**
     * The tasks' names, by task index.
     *
     * @return a new list of the names
     */
    public List<String> taskNames() {
        List<String> names = new ArrayList<>(tasks.size());
        for (TaskMetadata t : tasks) {
            names.add(t.name());
        }
        return names;
    }

    /**
     * The stypes of a table's columns, in {@code col_range} order (Ignored included).
     *
     * @param table one of this metadata's tables
     * @return the stypes, one per column
     */
    public List<SemanticType> columnTypes(TableMetadata table) {
        SemanticType[] types = new SemanticType[table.numColumns()];
        for (int c = table.colStart(); c < table.colEnd(); c++) {
            types[c - table.colStart()] = columns.get(c).stype();
        }
        return Arrays.asList(types);
    }

    /**
     * Checks what {@code metadata.json} alone can tell: tables contiguous and ordered in both ranges,
     * column and stats counts, every column index in range, temporal columns that are Timestamp
     * columns of their own table, task anchors and target stypes.
     *
     * @param file the file the metadata came from, named in the error
     * @throws SamplerDatabaseException naming {@code file} and the broken rule
     */
    public void validate(java.nio.file.Path file) throws SamplerDatabaseException {
        int c = columns.size();
        if (columnStats.size() != c) {
            throw inconsistent(file, "column_stats has one entry per column (" + c + ")",
                    columnStats.size() + " entries");
        }
        int expectCol = 0;
        int expectRow = 0;
        for (int i = 0; i < tables.size(); i++) {
            TableMetadata t = tables.get(i);
            String where = "table " + i + " (" + t.name() + ")";
            if (t.name().isEmpty() || t.name().contains("/") || t.name().contains("\\") || t.name().equals(".")
                    || t.name().equals("..")) {
                throw inconsistent(file, where + ": a plain file name", "\"" + t.name() + "\"");
            }
            if (t.colStart() != expectCol || t.colEnd() < t.colStart()) {
                throw inconsistent(file, where + ": col_range starting at " + expectCol + " and not decreasing",
                        "[" + t.colStart() + ", " + t.colEnd() + "]");
            }
            if (t.rowStart() != expectRow || t.rowEnd() < t.rowStart()) {
                throw inconsistent(file, where + ": row_range starting at " + expectRow + " and not decreasing",
                        "[" + t.rowStart() + ", " + t.rowEnd() + "]");
            }
            expectCol = t.colEnd();
            expectRow = t.rowEnd();
            if (t.pkeyCol() >= 0 && (t.pkeyCol() < t.colStart() || t.pkeyCol() >= t.colEnd())) {
                throw inconsistent(file, where + ": pkey_col in [" + t.colStart() + ", " + t.colEnd() + ")",
                        Integer.toString(t.pkeyCol()));
            }
            if (t.temporalCol() >= 0) {
                if (t.temporalCol() < t.colStart() || t.temporalCol() >= t.colEnd()
                        || t.temporalCol() >= c || columns.get(t.temporalCol()).stype() != SemanticType.TIMESTAMP) {
                    String found = t.temporalCol() < c
                            ? t.temporalCol() + " (" + columns.get(t.temporalCol()).stype().jsonName() + ")"
                            : Integer.toString(t.temporalCol());
                    throw new SamplerDatabaseException(DatabaseRule.TEMPORAL_COLUMN, file,
                            where + ": a Timestamp column in [" + t.colStart() + ", " + t.colEnd() + ")", found);
                }
            }
        }
        if (expectCol != c) {
            throw inconsistent(file, "col_ranges covering all " + c + " columns", "they end at " + expectCol);
        }
        for (int i = 0; i < c; i++) {
            ColumnMetadata col = columns.get(i);
            if (col.fkeyTargetCol() >= c) {
                throw inconsistent(file, "column " + i + " (" + col.name() + "): fkey_target_col < " + c,
                        Integer.toString(col.fkeyTargetCol()));
            }
        }
        for (int i = 0; i < tasks.size(); i++) {
            TaskMetadata task = tasks.get(i);
            String where = "task " + i + " (" + task.name() + ")";
            if (task.name().isEmpty() || task.name().contains("/") || task.name().contains("\\")
                    || task.name().equals(".") || task.name().equals("..")) {
                throw inconsistent(file, where + ": a plain file name", "\"" + task.name() + "\"");
            }
            if (task.anchorTable() < 0 || task.anchorTable() >= tables.size()) {
                throw inconsistent(file, where + ": anchor_table < " + tables.size(),
                        Integer.toString(task.anchorTable()));
            }
            if (!task.targetStype().isTaskTarget()) {
                throw new SamplerDatabaseException(DatabaseRule.TARGET_STYPE, file,
                        where + ": Numerical, Timestamp, Boolean or Categorical", task.targetStype().jsonName());
            }
        }
    }

    private static SamplerDatabaseException inconsistent(java.nio.file.Path file, String expected, String actual) {
        return new SamplerDatabaseException(DatabaseRule.METADATA_CONSISTENCY, file, expected, actual);
    }
}
