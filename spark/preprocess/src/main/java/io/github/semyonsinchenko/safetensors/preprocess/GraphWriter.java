package io.github.semyonsinchenko.safetensors.preprocess;

import static io.github.semyonsinchenko.safetensors.preprocess.BuildContext.ROW;
import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.shiftleft;
import static org.apache.spark.sql.functions.shiftrightunsigned;

import io.github.semyonsinchenko.safetensors.sampler.db.DatabaseLayout;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import org.apache.spark.api.java.function.Function2;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;

/**
 * Stage 6, {@code graph.bin}: FK edges resolved by joins against the primary-key maps, then both
 * CSR directions, each from the partitions of the edges sorted by (source, target).
 */
final class GraphWriter {
    private GraphWriter() {}

    static void write(BuildContext ctx, List<LoadedTable> tables, PrimaryKeyMaps pkMaps) throws IOException {
        Dataset<Row> edges = null;
        for (LoadedTable t : tables) {
            for (int j = 0; j < t.schema().columns().size(); j++) {
                InputSchema.Column c = t.schema().columns().get(j);
                if (c.foreignKey() == null || c.foreignTable() == null || !t.present()[j]) {
                    continue;
                }
                int target = ctx.schema.tableIndex(c.foreignTable());
                if (target < 0 || !tables.get(target).hasPk()) {
                    ctx.info(String.format(Locale.ROOT, "FK %s.%s -> %s: the target table has no primary key map;"
                            + " no edges (as headwater)", t.schema().name(), c.name(), c.foreignKey()));
                    continue;
                }
                // Q10: the column after the '.' is ignored; keys always match the target's primary key.
                Dataset<Row> e = t.df().where(col("k" + j).isNotNull())
                        .select(col(ROW).plus(t.rowStart()).as("src"), col("k" + j).as("key"))
                        .join(pkMaps.of(tables.get(target)).select("pk", "prow"), col("key").equalTo(col("pk")))
                        .select(col("src"), col("prow").as("dst"));
                edges = edges == null ? e : edges.unionAll(e);
            }
        }
        long nodes = tables.isEmpty() ? 0 : tables.getLast().rowEnd();
        Path file = ctx.work.resolve(DatabaseLayout.GRAPH_FILE);
        if (edges == null) {
            try (Parts.Assembler a = new Parts.Assembler(file)) {
                a.u32(nodes);
                a.u32(0);
                a.u32(nodes);
                a.u32(0);
                a.zeros(4 * 2 * (nodes + 1));
            }
            ctx.info("0 edges");
            return;
        }
        // One packed long per edge: a single-column sort key Spark sorts by its prefix alone (radix sort).
        Dataset<Row> packed = ctx.persist(edges.select(pack(col("src"), col("dst")).as("e")));
        long numEdges = packed.count();
        if (numEdges > BuildContext.U32_LIMIT) {
            throw new PreprocessException(numEdges + " FK edges exceed the format's 32-bit edge count");
        }
        int partitions = ctx.partitions(numEdges);
        // Outgoing: by source, then target (Q9: headwater's order within a row is an unstable sort's).
        Path outDir = ctx.parts.resolve("graph-out");
        List<Parts.Info> outParts = csr(packed, partitions, outDir);
        // Incoming: the transpose, each list in ascending source order (a counting sort's result).
        Path inDir = ctx.parts.resolve("graph-in");
        List<Parts.Info> inParts = csr(packed.select(transpose(col("e")).as("e")), partitions, inDir);
        try (Parts.Assembler a = new Parts.Assembler(file)) {
            a.u32(nodes);
            a.u32(numEdges);
            a.u32(nodes);
            a.u32(numEdges);
            writeCsr(a, outDir, Parts.inOrder(outParts), nodes);
            writeCsr(a, inDir, Parts.inOrder(inParts), nodes);
        }
        Parts.checkSize(file, DatabaseLayout.graphFileSize(nodes, numEdges));
        ctx.info(String.format(Locale.ROOT, "%d nodes, %d edges", nodes, numEdges));
    }

    /**
     * (a, b) as one long ordered as the pair (both are u32): {@code a << 32 | b} with the sign bit
     * flipped, so signed order is unsigned order even for rows of 2^31 and above.
     */
    static Column pack(Column a, Column b) {
        return shiftleft(a, 32).bitwiseOR(b).bitwiseXOR(lit(Long.MIN_VALUE));
    }

    /** The packed (b, a) of a packed (a, b). */
    static Column transpose(Column packed) {
        Column u = packed.bitwiseXOR(lit(Long.MIN_VALUE));
        return shiftrightunsigned(u, 32).bitwiseOR(shiftleft(u, 32)).bitwiseXOR(lit(Long.MIN_VALUE));
    }

    /** One CSR direction: the packed edges range-partitioned and sorted, each partition writing its parts. */
    private static List<Parts.Info> csr(Dataset<Row> packed, int partitions, Path dir) {
        return packed.repartitionByRange(partitions, col("e")).sortWithinPartitions("e").javaRDD()
                .mapPartitionsWithIndex(new CsrPartition(dir.toString()), true).collect();
    }

    /** Row pointers from the (row, count) runs of the parts, then the neighbour lists. */
    private static void writeCsr(Parts.Assembler a, Path dir, List<Parts.Info> infos, long nodes) throws IOException {
        long[] state = new long[3]; // next row to write, running edge count, pending row of a (row, count) pair
        state[2] = -1;
        for (Parts.Info info : infos) {
            Parts.Assembler.readU32s(Parts.partFile(dir, 1, info.partition()), v -> {
                if (state[2] < 0) {
                    state[2] = v;
                    return;
                }
                long row = state[2];
                state[2] = -1;
                while (state[0] <= row) {
                    a.u32(state[1]);
                    state[0]++;
                }
                state[1] += v;
            });
        }
        while (state[0] <= nodes) {
            a.u32(state[1]);
            state[0]++;
        }
        for (Parts.Info info : infos) {
            a.appendBytes(Parts.partFile(dir, 0, info.partition()));
        }
    }

    /** One ordered partition of packed (src, dst) edges: section 0 the dst list, section 1 (src, count) runs. */
    private record CsrPartition(String dir) implements Function2<Integer, Iterator<Row>, Iterator<Parts.Info>> {
        @Override
        public Iterator<Parts.Info> call(Integer partition, Iterator<Row> rows) throws IOException {
            long n = 0;
            try (Parts.Out out = new Parts.Out(dir, partition, 2)) {
                long run = -1;
                int runCount = 0;
                while (rows.hasNext()) {
                    long e = rows.next().getLong(0) ^ Long.MIN_VALUE;
                    long src = e >>> 32;
                    out.section(0).u32((int) e);
                    if (src != run) {
                        if (runCount > 0) {
                            out.section(1).u32((int) run);
                            out.section(1).u32(runCount);
                        }
                        run = src;
                        runCount = 0;
                    }
                    runCount++;
                    n++;
                }
                if (runCount > 0) {
                    out.section(1).u32((int) run);
                    out.section(1).u32(runCount);
                }
                return List.of(out.commit(n)).iterator();
            }
        }
    }
}
