package io.github.semyonsinchenko.safetensors.preprocess.graph;

import static io.github.semyonsinchenko.safetensors.preprocess.BuildContext.ROW;
import static org.apache.spark.sql.functions.col;

import io.github.semyonsinchenko.safetensors.preprocess.BuildContext;
import io.github.semyonsinchenko.safetensors.preprocess.PreprocessException;
import io.github.semyonsinchenko.safetensors.preprocess.input.LoadedTable;
import io.github.semyonsinchenko.safetensors.preprocess.keys.PrimaryKeyMaps;
import io.github.semyonsinchenko.safetensors.preprocess.partition.Parts;
import io.github.semyonsinchenko.safetensors.preprocess.partition.U32Pairs;
import io.github.semyonsinchenko.safetensors.sampler.db.SectionWriter;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.api.java.function.Function2;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;

/**
 * The edges when an FK target is too large to broadcast its key map: shuffled joins against the
 * key-map Datasets, then each CSR direction range-sorted.
 */
final class ShuffledEdges {
    private ShuffledEdges() {}

    /** The edges from shuffled joins against the key-map Datasets, then a range sort per direction. */
    static Csr write(BuildContext ctx, List<LoadedTable> tables, ForeignKeys fks, PrimaryKeyMaps pkMaps) {
        int[][] fkColumns = fks.columns();
        int[][] fkTargets = fks.targets();
        Dataset<Row> edges = null;
        for (LoadedTable t : tables) {
            for (int c = 0; c < fkColumns[t.index()].length; c++) {
                int j = fkColumns[t.index()][c];
                Dataset<Row> e = t.df().where(col("k" + j).isNotNull())
                        .select(col(ROW).plus(t.rowStart()).as("src"), col("k" + j).as("key"))
                        .join(pkMaps.of(tables.get(fkTargets[t.index()][c])).select("pk", "prow"),
                                col("key").equalTo(col("pk")))
                        .select(col("src"), col("prow").as("dst"));
                edges = edges == null ? e : edges.unionAll(e);
            }
        }
        // One packed long per edge: a single-column sort key Spark sorts by its prefix alone (radix sort).
        Dataset<Row> packed = ctx.persist(edges.select(U32Pairs.sortable(col("src"), col("dst")).as("e")));
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
        List<Parts.Info> inParts = csr(packed.select(U32Pairs.swapSortable(col("e")).as("e")), partitions, inDir);
        return new Csr(outDir, Csr.ids(outParts), inDir, Csr.ids(inParts), numEdges);
    }

    /** One CSR direction: the packed edges range-partitioned and sorted, each partition writing its parts. */
    private static List<Parts.Info> csr(Dataset<Row> packed, int partitions, Path dir) {
        return packed.repartitionByRange(partitions, col("e")).sortWithinPartitions("e").javaRDD()
                .mapPartitionsWithIndex(new CsrPartition(dir.toString()), true).collect();
    }

    /** One ordered partition of packed (src, dst) edges: section 0 the dst list, section 1 (src, count) runs. */
    private record CsrPartition(String dir) implements Function2<Integer, Iterator<Row>, Iterator<Parts.Info>> {
        @Override
        public Iterator<Parts.Info> call(Integer partition, Iterator<Row> rows) throws IOException {
            long n = 0;
            try (Parts.Out out = new Parts.Out(dir, partition, 2)) {
                SectionWriter neighbours = out.section(0);
                SectionWriter runs = out.section(1);
                long run = -1;
                int runCount = 0;
                while (rows.hasNext()) {
                    long e = U32Pairs.fromSortable(rows.next().getLong(0));
                    long src = U32Pairs.first(e);
                    neighbours.u32((int) U32Pairs.second(e));
                    if (src != run) {
                        if (runCount > 0) {
                            runs.u32((int) run);
                            runs.u32(runCount);
                        }
                        run = src;
                        runCount = 0;
                    }
                    runCount++;
                    n++;
                }
                if (runCount > 0) {
                    runs.u32((int) run);
                    runs.u32(runCount);
                }
                return List.of(out.commit(n)).iterator();
            }
        }
    }
}
