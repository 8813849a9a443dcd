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

    /** Clears sequence {@code b}'s slices: zeros everywhere, padding flags 1. */
    void clearSequence(int b) {
        long c = (long) b * seqLen;
        long s = seqLen;
        semanticTypes.asSlice(c, s).fill((byte) 0);
        columnIds.asSlice(c * 4, s * 4).fill((byte) 0);
        seqRowIds.asSlice(c * 2, s * 2).fill((byte) 0);
        numericValues.asSlice(c * 4, s * 4).fill((byte) 0);
        timestampValues.asSlice(c * 60, s * 60).fill((byte) 0);
        boolValues.asSlice(c, s).fill((byte) 0);
        categoricalIds.asSlice(c * 4, s * 4).fill((byte) 0);
        textIds.asSlice(c * 4, s * 4).fill((byte) 0);
        isNull.asSlice(c, s).fill((byte) 0);
        isTarget.asSlice(c, s).fill((byte) 0);
        isPadding.asSlice(c, s).fill((byte) 1);
        long rr = (long) maxRows * maxRows;
        fkAdj.asSlice(b * rr, rr).fill((byte) 0);
    }

    @Override
    public void close() {
        arena.close();
        if (textArena != null) {
            textArena.close();
        }
    }
}
