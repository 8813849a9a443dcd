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

    /**
     * The number of nodes, one per row of every table.
     *
     * @return {@code N}
     */
    public int numNodes() {
        return nodes;
    }

    /**
     * The number of foreign-key edges (each stored once per direction).
     *
     * @return {@code E}
     */
    public int numEdges() {
        return edges;
    }

    /**
     * Start (inclusive) of {@code row}'s outgoing neighbours in {@link #outNeighbour}.
     *
     * @param row a global row
     * @return the first edge index
     */
    public int outStart(int row) {
        return segment.get(U32, outPtr + 4L * row);
    }

    /**
     * End (exclusive) of {@code row}'s outgoing neighbours in {@link #outNeighbour}.
     *
     * @param row a global row
     * @return one past the last edge index
     */
    public int outEnd(int row) {
        return segment.get(U32, outPtr + 4L * row + 4);
    }

    /**
     * The parent at outgoing edge {@code k}.
     *
     * @param k an edge index, in {@code [0, numEdges())}
     * @return the global row pointed to
     */
    public int outNeighbour(int k) {
        return segment.get(U32, outIdx + 4L * k);
    }

    /**
     * Start (inclusive) of {@code row}'s incoming neighbours in {@link #inNeighbour}.
     *
     * @param row a global row
     * @return the first edge index
     */
    public int inStart(int row) {
        return segment.get(U32, inPtr + 4L * row);
    }

    /**
     * End (exclusive) of {@code row}'s incoming neighbours in {@link #inNeighbour}.
     *
     * @param row a global row
     * @return one past the last edge index
     */
    public int inEnd(int row) {
        return segment.get(U32, inPtr + 4L * row + 4);
    }

    /**
     * The child at incoming edge {@code k}; a row's children are ascending.
     *
     * @param k an edge index, in {@code [0, numEdges())}
     * @return the global row pointing here
     */
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
