package io.github.semyonsinchenko.safetensors.sampler.db;

/**
 * One table of {@code metadata.json}: its global column range {@code [colStart, colEnd)} and row
 * range {@code [rowStart, rowEnd)}; {@code pkeyCol} and {@code temporalCol} are global column
 * indices or -1 (JSON null or absent). Indices are unsigned 32-bit on disk; values past
 * {@link Integer#MAX_VALUE} are rejected when the metadata is read.
 *
 * @param name the table's name, also its file's name
 * @param colStart its first global column
 * @param colEnd one past its last global column
 * @param rowStart its first global row
 * @param rowEnd one past its last global row
 * @param pkeyCol the global index of its primary key column, or -1
 * @param temporalCol the global index of the Timestamp column that dates its rows, or -1
 */
public record TableMetadata(String name, int colStart, int colEnd, int rowStart, int rowEnd, int pkeyCol,
        int temporalCol) {

    /**
     * The number of columns.
     *
     * @return {@code colEnd - colStart}
     */
    public int numColumns() {
        return colEnd - colStart;
    }

    /**
     * The number of rows.
     *
     * @return {@code rowEnd - rowStart}
     */
    public int numRows() {
        return rowEnd - rowStart;
    }

    /**
     * Whether the table's rows are dated (the sampler's temporal filter applies to them as children).
     *
     * @return true if {@code temporalCol} is set
     */
    public boolean hasTemporalColumn() {
        return temporalCol >= 0;
    }
}
