package io.github.semyonsinchenko.safetensors.sampler.db;

import io.github.semyonsinchenko.safetensors.mmap.MappedFiles;
import java.lang.foreign.MemorySegment;

/** An embedding file: {@code rows} rows of 256 f16 values (little-endian bit patterns), no header. */
public final class EmbeddingTable {
    private final MemorySegment segment;
    private final long rows;

    EmbeddingTable(MemorySegment segment, long rows) {
        this.segment = segment;
        this.rows = rows;
    }

    /**
     * The number of embedding rows.
     *
     * @return the row count
     */
    public long rows() {
        return rows;
    }

    /**
     * All rows: {@code rows * 512} bytes (a trailing partial row of the column file is excluded). A
     * read-only view of the mapping, valid while the database is open.
     *
     * @return the rows' bytes
     */
    public MemorySegment segment() {
        return segment;
    }

    /**
     * Copies all rows into {@code dst}, e.g. memory owned by another runtime: a page the file lost to
     * a truncation is the typed
     * {@link io.github.semyonsinchenko.safetensors.mmap.MappedFileFaultException} naming the file,
     * never a crash of this process or the JDK's {@link InternalError}.
     *
     * @param dst at least {@code rows * 512} writable bytes
     */
    public void copyTo(MemorySegment dst) {
        MappedFiles.copy(segment, 0, dst, 0, segment.byteSize());
    }

    /**
     * Row {@code i}: 512 bytes, 256 f16 values.
     *
     * @param i the row, in {@code [0, rows())}
     * @return a view of the row
     * @throws IndexOutOfBoundsException if there is no such row
     */
    public MemorySegment row(long i) {
        return segment.asSlice(i * DatabaseLayout.EMBEDDING_ROW_BYTES, DatabaseLayout.EMBEDDING_ROW_BYTES);
    }
}
