package io.github.semyonsinchenko.safetensors.sampler.db;

import static io.github.semyonsinchenko.safetensors.sampler.db.Layouts.F32;
import static io.github.semyonsinchenko.safetensors.sampler.db.Layouts.U32;
import static io.github.semyonsinchenko.safetensors.sampler.db.Layouts.U8;

import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * {@code tables/<name>.bin}: one table's column store. Columns are addressed by their local index
 * ({@code global - colStart}) and rows by their local index ({@code global - rowStart}). A view of
 * the mapping; valid while the {@link Database} is open.
 */
public final class TableData {
    private final TableMetadata metadata;
    private final MemorySegment segment;
    private final SemanticType[] types;
    private final long[] validityOffset;
    private final long[] valuesOffset;

    TableData(TableMetadata metadata, MemorySegment segment, List<SemanticType> types) {
        this.metadata = metadata;
        this.segment = segment;
        this.types = types.toArray(SemanticType[]::new);
        int n = metadata.numRows();
        this.validityOffset = new long[this.types.length];
        this.valuesOffset = new long[this.types.length];
        long off = DatabaseLayout.TABLE_HEADER_BYTES;
        for (int c = 0; c < this.types.length; c++) {
            validityOffset[c] = off;
            valuesOffset[c] = off + DatabaseLayout.valuesOffsetInSection(n);
            off += DatabaseLayout.columnSectionBytes(this.types[c], n);
        }
    }

    /**
     * The table's entry in {@code metadata.json}.
     *
     * @return the table's metadata
     */
    public TableMetadata metadata() {
        return metadata;
    }

    /**
     * The table's rows.
     *
     * @return the row count
     */
    public int numRows() {
        return metadata.numRows();
    }

    /**
     * The stype of a column.
     *
     * @param col a local column index
     * @return its semantic type
     */
    public SemanticType type(int col) {
        return types[col];
    }

    /**
     * The mapping of the whole file, read-only.
     *
     * @return the file's bytes
     */
    public MemorySegment segment() {
        return segment;
    }

    /**
     * Validity (or, for Identifier, presence) of a cell. Ignored columns have no bitmap.
     *
     * @param col a local column index, not Ignored
     * @param row a local row index
     * @return true if the cell holds a value
     */
    public boolean isValid(int col, int row) {
        return (segment.get(U8, validityOffset[col] + (row >>> 3)) >> (row & 7) & 1) != 0;
    }

    /**
     * A Numerical cell's z-score (0 for a null cell).
     *
     * @param col a local index of a Numerical column
     * @param row a local row index
     * @return the z-score
     */
    public float numerical(int col, int row) {
        return segment.get(F32, valuesOffset[col] + 4L * row);
    }

    /**
     * Byte offset in {@link #segment()} of a timestamp cell's 15 floats.
     *
     * @param col a local index of a Timestamp column
     * @param row a local row index
     * @return the offset of the cell's first float
     */
    public long timestampOffset(int col, int row) {
        return valuesOffset[col] + 4L * DatabaseLayout.TIMESTAMP_DIM * row;
    }

    /**
     * Slot 14 of a timestamp cell: the z-scored epoch time.
     *
     * @param col a local index of a Timestamp column
     * @param row a local row index
     * @return the z-score
     */
    public float timestampZ(int col, int row) {
        return segment.get(F32, timestampOffset(col, row) + 4L * DatabaseLayout.TIMESTAMP_ZSCORE_SLOT);
    }

    /**
     * A Boolean cell's value (false for a null cell).
     *
     * @param col a local index of a Boolean column
     * @param row a local row index
     * @return the value
     */
    public boolean bool(int col, int row) {
        return (segment.get(U8, valuesOffset[col] + (row >>> 3)) >> (row & 7) & 1) != 0;
    }

    /**
     * A Categorical or Text cell's global embedding index (unsigned; below 2^31 once validated).
     *
     * @param col a local index of a Categorical or Text column
     * @param row a local row index
     * @return the row of the categorical or text embeddings
     */
    public int embeddingIndex(int col, int row) {
        return segment.get(U32, valuesOffset[col] + 4L * row);
    }
}
