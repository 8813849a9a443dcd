package io.github.semyonsinchenko.safetensors.sampler.db;

import static io.github.semyonsinchenko.safetensors.sampler.db.Layouts.u32;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

/**
 * The checks of {@code graph.bin} (spec §3) at open: its header (N and E, each twice), its size,
 * the node count against the tables' rows, and the ones the reference skips: both CSR directions'
 * row pointers non-decreasing from 0 to E, and every column index a node.
 */
final class GraphChecks {
    private GraphChecks() {}

    /**
     * The graph of the mapped {@code graph.bin} {@code s}, checked.
     *
     * @throws SamplerDatabaseException naming {@code p} and the first rule it breaks
     */
    static Graph read(Path p, MemorySegment s, int numRows) throws SamplerDatabaseException {
        if (s.byteSize() < DatabaseLayout.GRAPH_HEADER_BYTES) {
            throw new SamplerDatabaseException(DatabaseRule.FILE_TOO_SHORT, p,
                    "at least " + DatabaseLayout.GRAPH_HEADER_BYTES + " bytes", s.byteSize() + " bytes");
        }
        long n = u32(s, 0);
        long e = u32(s, 4);
        long n2 = u32(s, 8);
        long e2 = u32(s, 12);
        if (n != n2 || e != e2) {
            throw new SamplerDatabaseException(DatabaseRule.GRAPH_HEADER, p, "N, E repeated: " + n + ", " + e,
                    n2 + ", " + e2);
        }
        long size = DatabaseLayout.graphFileSize(n, e);
        if (s.byteSize() != size) {
            throw new SamplerDatabaseException(DatabaseRule.FILE_SIZE, p,
                    size + " bytes for N=" + n + ", E=" + e, s.byteSize() + " bytes");
        }
        if (n != numRows) {
            throw new SamplerDatabaseException(DatabaseRule.NODE_COUNT, p, numRows + " nodes (the rows of all tables)",
                    n + " nodes");
        }
        if (e > Integer.MAX_VALUE) {
            throw new SamplerDatabaseException(DatabaseRule.FILE_SIZE, p, "fewer than 2^31 edges", e + " edges");
        }
        Graph g = new Graph(s, (int) n, (int) e);
        long[] offs = g.arrayOffsets();
        checkRowPointers(p, s, offs[0], n, e, "out_row_ptr");
        checkColumnIndices(p, s, offs[1], e, n, "out_col_idx");
        checkRowPointers(p, s, offs[2], n, e, "in_row_ptr");
        checkColumnIndices(p, s, offs[3], e, n, "in_col_idx");
        return g;
    }

    private static void checkRowPointers(Path p, MemorySegment s, long off, long n, long e, String name)
            throws SamplerDatabaseException {
        long prev = u32(s, off);
        if (prev != 0) {
            throw new SamplerDatabaseException(DatabaseRule.ROW_POINTERS, p, name + "[0] = 0", Long.toString(prev));
        }
        for (long i = 1; i <= n; i++) {
            long v = u32(s, off + 4 * i);
            if (v < prev) {
                throw new SamplerDatabaseException(DatabaseRule.ROW_POINTERS, p,
                        name + "[" + i + "] >= " + prev, Long.toString(v));
            }
            prev = v;
        }
        if (prev != e) {
            throw new SamplerDatabaseException(DatabaseRule.ROW_POINTERS, p, name + "[" + n + "] = E = " + e,
                    Long.toString(prev));
        }
    }

    private static void checkColumnIndices(Path p, MemorySegment s, long off, long e, long n, String name)
            throws SamplerDatabaseException {
        for (long k = 0; k < e; k++) {
            long v = u32(s, off + 4 * k);
            if (v >= n) {
                throw new SamplerDatabaseException(DatabaseRule.INDEX_RANGE, p, name + "[" + k + "] < N = " + n,
                        Long.toString(v));
            }
        }
    }
}
