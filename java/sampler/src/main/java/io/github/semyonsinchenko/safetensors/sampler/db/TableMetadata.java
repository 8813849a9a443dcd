package io.github.semyonsinchenko.safetensors.sampler.db;

/**
 * One table of {@code metadata.json}: its global column range {@code [colStart, colEnd)} and row
 * range {@code [rowStart, rowEnd)}; {@code pkeyCol} and {@code temporalCol} are global column
 * indices or -1 (JSON null or absent). Indices are unsigned 32-bit on disk; values past
 * {@link Integer#MAX_VALUE} are rejected when the metadata is read.
 */
public record TableMetadata(String name, int colStart, int colEnd, int rowStart, int rowEnd, int pkeyCol,
        int temporalCol) {

    public int numColumns() {
        return colEnd - colStart;
    }

    public int numRows() {
        return rowEnd - rowStart;
    }

    public boolean hasTemporalColumn() {
        return temporalCol >= 0;
    }
}
