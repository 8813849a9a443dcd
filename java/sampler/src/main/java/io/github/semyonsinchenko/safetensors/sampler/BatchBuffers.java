package io.github.semyonsinchenko.safetensors.sampler;

import io.github.semyonsinchenko.safetensors.sampler.db.DatabaseLayout;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The native memory of one batch, reused from batch to batch by {@link BatchPool}. Owns two shared
 * arenas: one for the fixed-size tensors, one for the text-embedding rows, which grows (rarely)
 * when a batch has more distinct texts than ever before.
 */
final class BatchBuffers implements AutoCloseable {
    final int batch;
    final int seqLen;
    final int maxRows;
    private final Arena arena;

    final MemorySegment semanticTypes;
    final MemorySegment columnIds;
    final MemorySegment seqRowIds;
    final MemorySegment numericValues;
    final MemorySegment timestampValues;
    final MemorySegment boolValues;
    final MemorySegment categoricalIds;
    final MemorySegment textIds;
    final MemorySegment isNull;
    final MemorySegment isTarget;
    final MemorySegment isPadding;
    final MemorySegment fkAdj;
    final MemorySegment colPerm;
    final MemorySegment outPerm;
    final MemorySegment inPerm;
    final MemorySegment targetStype;
    final MemorySegment taskIdx;
    final MemorySegment catEmbStart;
    final MemorySegment catEmbCount;

    /** Cells per sequence of the batch being built (positions {@code [0, cells)} are non-padding). */
    final int[] cells;
    /** Distinct global text indices of the batch, in first-occurrence order. */
    int[] uniqueTexts;

    private final long maxTextRows;
    private Arena textArena;
    private MemorySegment textEmbeddings;

    BatchBuffers(int batch, int seqLen, int maxRows, long textRowsInDb) {
        this.batch = batch;
        this.seqLen = seqLen;
        this.maxRows = maxRows;
        this.arena = Arena.ofShared();
        long cellsTotal = (long) batch * seqLen;
        semanticTypes = arena.allocate(cellsTotal, 8);
        columnIds = arena.allocate(cellsTotal * 4, 8);
        seqRowIds = arena.allocate(cellsTotal * 2, 8);
        numericValues = arena.allocate(cellsTotal * 4, 8);
        timestampValues = arena.allocate(cellsTotal * 4 * DatabaseLayout.TIMESTAMP_DIM, 8);
        boolValues = arena.allocate(cellsTotal, 8);
        categoricalIds = arena.allocate(cellsTotal * 4, 8);
        textIds = arena.allocate(cellsTotal * 4, 8);
        isNull = arena.allocate(cellsTotal, 8);
        isTarget = arena.allocate(cellsTotal, 8);
        isPadding = arena.allocate(cellsTotal, 8);
        fkAdj = arena.allocate((long) batch * maxRows * maxRows, 8);
        colPerm = arena.allocate(cellsTotal * 2, 8);
        outPerm = arena.allocate(cellsTotal * 2, 8);
        inPerm = arena.allocate(cellsTotal * 2, 8);
        targetStype = arena.allocate(1, 8);
        taskIdx = arena.allocate(4, 8);
        catEmbStart = arena.allocate(4, 8);
        catEmbCount = arena.allocate(4, 8);
        cells = new int[batch];
        uniqueTexts = new int[Math.min(1024, (int) Math.min(cellsTotal, Integer.MAX_VALUE - 8))];
        maxTextRows = Math.min(textRowsInDb, cellsTotal);
        ensureTextRows(Math.min(maxTextRows, 256));
    }

    /** Text-embedding storage for at least {@code rows} rows (grows by doubling, keeps no contents). */
    MemorySegment ensureTextRows(long rows) {
        long have = textEmbeddings == null ? -1 : textEmbeddings.byteSize() / DatabaseLayout.EMBEDDING_ROW_BYTES;
        if (rows > have) {
            long want = Math.max(rows, Math.min(maxTextRows, Math.max(1, have) * 2));
            Arena next = Arena.ofShared();
            MemorySegment seg = next.allocate(want * DatabaseLayout.EMBEDDING_ROW_BYTES, 8);
            if (textArena != null) {
                textArena.close();
            }
            textArena = next;
            textEmbeddings = seg;
        }
        return textEmbeddings;
    }

    MemorySegment textEmbeddings() {
        return textEmbeddings;
    }

    // Fill sources shared by every batch: copying from them clears a slice without creating slice objects.
    private static final MemorySegment ZEROS = Arena.global().allocate(1 << 16, 8);
    private static final MemorySegment ONES = Arena.global().allocate(1 << 16, 8).fill((byte) 1);

    private static void fill(MemorySegment source, MemorySegment dst, long offset, long length) {
        while (length > 0) {
            long n = Math.min(length, source.byteSize());
            MemorySegment.copy(source, 0, dst, offset, n);
            offset += n;
            length -= n;
        }
    }

    /** Clears sequence {@code b}'s slices: zeros everywhere, padding flags 1. */
    void clearSequence(int b) {
        long c = (long) b * seqLen;
        long s = seqLen;
        fill(ZEROS, semanticTypes, c, s);
        fill(ZEROS, columnIds, c * 4, s * 4);
        fill(ZEROS, seqRowIds, c * 2, s * 2);
        fill(ZEROS, numericValues, c * 4, s * 4);
        fill(ZEROS, timestampValues, c * 60, s * 60);
        fill(ZEROS, boolValues, c, s);
        fill(ZEROS, categoricalIds, c * 4, s * 4);
        fill(ZEROS, textIds, c * 4, s * 4);
        fill(ZEROS, isNull, c, s);
        fill(ZEROS, isTarget, c, s);
        fill(ONES, isPadding, c, s);
        long rr = (long) maxRows * maxRows;
        fill(ZEROS, fkAdj, b * rr, rr);
    }

    @Override
    public void close() {
        arena.close();
        if (textArena != null) {
            textArena.close();
        }
    }
}
