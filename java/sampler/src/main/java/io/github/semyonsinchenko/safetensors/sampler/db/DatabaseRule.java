package io.github.semyonsinchenko.safetensors.sampler.db;

/**
 * The rules a database directory must satisfy, checked when it is opened (spec §6, plus the checks
 * the reference skips and would otherwise trip over while sampling). Each failure is one
 * {@link SamplerDatabaseException} carrying one of these.
 */
public enum DatabaseRule {
    /** A required file is missing or unreadable. */
    FILE_MISSING("a required file is missing or unreadable"),
    /** {@code metadata.json} is not valid JSON. */
    METADATA_JSON("metadata.json is not valid JSON"),
    /** {@code metadata.json} lacks a key or has a value of the wrong type. */
    METADATA_SCHEMA("metadata.json lacks a key or has a value of the wrong type"),
    /** {@code metadata.json} is inconsistent (ranges, indices, counts). */
    METADATA_CONSISTENCY("metadata.json is inconsistent (ranges, indices, counts)"),
    /** A temporal column must be a Timestamp column of its own table. */
    TEMPORAL_COLUMN("a temporal column must be a Timestamp column of its own table"),
    /** A task's target stype must be Numerical, Timestamp, Boolean or Categorical. */
    TARGET_STYPE("a task's target stype must be Numerical, Timestamp, Boolean or Categorical"),
    /** The file is shorter than its header. */
    FILE_TOO_SHORT("the file is shorter than its header"),
    /** {@code graph.bin}'s repeated header words differ. */
    GRAPH_HEADER("graph.bin's repeated header words differ"),
    /** {@code graph.bin}'s node count differs from the total row count. */
    NODE_COUNT("graph.bin's node count differs from the total row count"),
    /** The file size differs from the size its header and the metadata imply. */
    FILE_SIZE("the file size differs from the size its header and the metadata imply"),
    /** A table file's column count differs from its {@code col_range}. */
    COLUMN_COUNT("a table file's column count differs from its col_range"),
    /** A table file's row count differs from its {@code row_range}. */
    ROW_COUNT("a table file's row count differs from its row_range"),
    /** A task file's seed count differs from {@code num_seeds} in the metadata. */
    SEED_COUNT("a task file's seed count differs from num_seeds in the metadata"),
    /** A CSR row-pointer array must start at 0, never decrease and end at the edge count. */
    ROW_POINTERS("a CSR row-pointer array must start at 0, never decrease and end at the edge count"),
    /** An index (row, embedding) is out of range. */
    INDEX_RANGE("an index (row, embedding) is out of range"),
    /** An embedding file is not a whole number of 256 x f16 rows, or has the wrong row count. */
    EMBEDDING_SIZE("an embedding file is not a whole number of 256 x f16 rows, or has the wrong row count");

    private final String description;

    DatabaseRule(String description) {
        this.description = description;
    }

    /**
     * The rule in words, as error messages state it.
     *
     * @return a short sentence
     */
    public String description() {
        return description;
    }
}
