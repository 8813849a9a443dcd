package io.github.semyonsinchenko.safetensors.preprocess.graph;

import io.github.semyonsinchenko.safetensors.preprocess.BuildContext;
import io.github.semyonsinchenko.safetensors.preprocess.PreprocessException;
import io.github.semyonsinchenko.safetensors.preprocess.input.LoadedTable;
import io.github.semyonsinchenko.safetensors.preprocess.keys.PrimaryKeyMaps;
import io.github.semyonsinchenko.safetensors.preprocess.partition.Parts;
import io.github.semyonsinchenko.safetensors.preprocess.stats.OrderedTable;
import io.github.semyonsinchenko.safetensors.sampler.db.DatabaseWriter;
import io.github.semyonsinchenko.safetensors.sampler.db.SectionReader;
import io.github.semyonsinchenko.safetensors.sampler.db.SectionWriter;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * Stage 6, {@code graph.bin}: every FK edge (row -> the target's row of its key) in both CSR
 * directions. The edges' parts come from {@link BroadcastEdges} when every FK target table has at
 * most {@link PrimaryKeyMaps#broadcastLimit} rows, else from {@link ShuffledEdges}; this class
 * chooses, then writes the file: each direction's row pointers from the parts' (row, count) runs,
 * then its neighbour lists.
 */
public final class GraphWriter {
    private GraphWriter() {}

    /** Writes {@code graph.bin} from every table's resolvable foreign keys. */
    public static void write(BuildContext ctx, List<LoadedTable> tables, List<OrderedTable> ordered, PrimaryKeyMaps pkMaps)
            throws IOException {
        ForeignKeys fks = ForeignKeys.of(ctx, tables);
        long nodes = tables.isEmpty() ? 0 : tables.getLast().rowEnd();
        if (!fks.any()) {
            try (SectionWriter w = DatabaseWriter.openGraph(ctx.work, nodes, 0)) {
                w.zeros(4 * 2 * (nodes + 1));
                w.finish();
            }
            ctx.info("0 edges");
            return;
        }
        long limit = pkMaps.broadcastLimit();
        String tooBig = null;
        for (LoadedTable t : tables) {
            if (fks.isTarget()[t.index()] && t.rows() > limit && tooBig == null) {
                tooBig = t.schema().name();
            }
        }
        Csr csr;
        if (tooBig == null) {
            csr = BroadcastEdges.write(ctx, tables, ordered, pkMaps, fks);
        } else {
            ctx.info(String.format(Locale.ROOT, "FK target '%s' has more than %d rows (%s): edges by shuffled joins",
                    tooBig, limit, PrimaryKeyMaps.BROADCAST_LIMIT_CONF));
            csr = ShuffledEdges.write(ctx, tables, fks, pkMaps);
        }
        if (csr.edges() > BuildContext.U32_LIMIT) {
            throw new PreprocessException(csr.edges() + " FK edges exceed the format's 32-bit edge count");
        }
        try (SectionWriter w = DatabaseWriter.openGraph(ctx.work, nodes, csr.edges())) {
            writeCsr(w, csr.outDir(), csr.outParts(), nodes);
            writeCsr(w, csr.inDir(), csr.inParts(), nodes);
            w.finish();
        }
        ctx.info(String.format(Locale.ROOT, "%d nodes, %d edges", nodes, csr.edges()));
    }

    /** Row pointers from the (row, count) runs of the parts, then the neighbour lists. */
    private static void writeCsr(SectionWriter w, Path dir, int[] parts, long nodes) throws IOException {
        RowPointers pointers = new RowPointers(w);
        long edges = 0; // the running edge count
        for (int part : parts) {
            Path file = Parts.partFile(dir, 1, part);
            int[] runs = SectionReader.u32s(file);
            if (runs.length % 2 != 0) {
                throw new IllegalStateException("graph: " + file + " holds half a (row, count) pair");
            }
            for (int i = 0; i < runs.length; i += 2) {
                long row = Integer.toUnsignedLong(runs[i]);
                // A row's run may continue in the next part (range partitions split a row's edges);
                // a run before the last row written means parts out of order, which would shift lists.
                if (row < pointers.next - 1 || row >= nodes) {
                    throw new IllegalStateException(String.format(Locale.ROOT,
                            "graph: run of row %d after row %d in %s (%d nodes)", row, pointers.next - 1, dir, nodes));
                }
                pointers.upTo(row, edges);
                edges += Integer.toUnsignedLong(runs[i + 1]);
            }
        }
        pointers.upTo(nodes, edges);
        for (int part : parts) {
            w.appendBytes(Parts.partFile(dir, 0, part));
        }
    }

    /** graph.bin's row pointers, written as the runs of the parts reach each row. */
    private static final class RowPointers {
        private final SectionWriter w;
        /** The next row whose pointer is written. */
        long next;

        RowPointers(SectionWriter w) {
            this.w = w;
        }

        /** Writes {@code edges} as the pointer of every row from {@link #next} to {@code row}. */
        void upTo(long row, long edges) throws IOException {
            for (; next <= row; next++) {
                w.u32((int) edges);
            }
        }
    }
}
