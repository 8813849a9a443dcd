package io.github.semyonsinchenko.safetensors.sampler.db;

import static io.github.semyonsinchenko.safetensors.sampler.db.Layouts.U32;

import java.lang.foreign.MemorySegment;

/**
 * {@code graph.bin}: the FK edges as two CSR arrays over global rows. Outgoing neighbours of a row
 * are the rows its FK cells point to (parents); incoming ones are the rows pointing at it
 * (children, ascending). A view of the mapping; valid while the {@link Database} is open.
 */
public final class Graph {
    private final MemorySegment segment;
    private final int nodes;
    private final int edges;
    private final long outPtr;
    private final long outIdx;
    private final long inPtr;
    private final long inIdx;

    Graph(MemorySegment segment, int nodes, int edges) {
        this.segment = segment;
        this.nodes = nodes;
        this.edges = edges;
        this.outPtr = DatabaseLayout.GRAPH_HEADER_BYTES;
        this.outIdx = outPtr + 4L * (nodes + 1);
        this.inPtr = outIdx + 4L * edges;
        this.inIdx = inPtr + 4L * (nodes + 1);
    }

    public int numNodes() {
        return nodes;
    }

    public int numEdges() {
        return edges;
    }

    /** Start (inclusive) of {@code row}'s outgoing neighbours in {@link #outNeighbour}. */
    public int outStart(int row) {
        return segment.get(U32, outPtr + 4L * row);
    }

    public int outEnd(int row) {
        return segment.get(U32, outPtr + 4L * row + 4);
    }

    public int outNeighbour(int k) {
        return segment.get(U32, outIdx + 4L * k);
    }

    public int inStart(int row) {
        return segment.get(U32, inPtr + 4L * row);
    }

    public int inEnd(int row) {
        return segment.get(U32, inPtr + 4L * row + 4);
    }

    public int inNeighbour(int k) {
        return segment.get(U32, inIdx + 4L * k);
    }

    /** Offsets of the four arrays in the file, in order: out_row_ptr, out_col_idx, in_row_ptr, in_col_idx. */
    long[] arrayOffsets() {
        return new long[] {outPtr, outIdx, inPtr, inIdx};
    }

    MemorySegment segment() {
        return segment;
    }
}
