package io.github.semyonsinchenko.safetensors.sampler.db;

/**
 * The rules a database directory must satisfy, checked when it is opened (spec §6, plus the checks
 * the reference skips and would otherwise trip over while sampling). Each failure is one
 * {@link SamplerDatabaseException} carrying one of these.
 */
public enum DatabaseRule {
    FILE_MISSING("a required file is missing or unreadable"),
    METADATA_JSON("metadata.json is not valid JSON"),
    METADATA_SCHEMA("metadata.json lacks a key or has a value of the wrong type"),
    METADATA_CONSISTENCY("metadata.json is inconsistent (ranges, indices, counts)"),
    TEMPORAL_COLUMN("a temporal column must be a Timestamp column of its own table"),
    TARGET_STYPE("a task's target stype must be Numerical, Timestamp, Boolean or Categorical"),
    FILE_TOO_SHORT("the file is shorter than its header"),
    GRAPH_HEADER("graph.bin's repeated header words differ"),
    NODE_COUNT("graph.bin's node count differs from the total row count"),
    FILE_SIZE("the file size differs from the size its header and the metadata imply"),
    COLUMN_COUNT("a table file's column count differs from its col_range"),
    ROW_COUNT("a table file's row count differs from its row_range"),
    SEED_COUNT("a task file's seed count differs from num_seeds in the metadata"),
    ROW_POINTERS("a CSR row-pointer array must start at 0, never decrease and end at the edge count"),
    INDEX_RANGE("an index (row, embedding) is out of range"),
    EMBEDDING_SIZE("an embedding file is not a whole number of 256 x f16 rows, or has the wrong row count");

    private final String description;

    DatabaseRule(String description) {
        this.description = description;
    }

    public String description() {
        return description;
    }
}
