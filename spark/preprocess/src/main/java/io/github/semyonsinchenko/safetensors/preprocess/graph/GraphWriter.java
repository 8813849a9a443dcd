package io.github.semyonsinchenko.safetensors.preprocess.graph;

import static io.github.semyonsinchenko.safetensors.preprocess.BuildContext.ROW;
import static org.apache.spark.sql.functions.col;

import io.github.semyonsinchenko.safetensors.preprocess.BuildContext;
import io.github.semyonsinchenko.safetensors.preprocess.PreprocessException;
import io.github.semyonsinchenko.safetensors.preprocess.input.InputSchema;
import io.github.semyonsinchenko.safetensors.preprocess.input.LoadedTable;
import io.github.semyonsinchenko.safetensors.preprocess.keys.KeyMap;
import io.github.semyonsinchenko.safetensors.preprocess.keys.PrimaryKeyMaps;
import io.github.semyonsinchenko.safetensors.preprocess.partition.IdPartitioner;
import io.github.semyonsinchenko.safetensors.preprocess.partition.LongList;
import io.github.semyonsinchenko.safetensors.preprocess.partition.Parts;
import io.github.semyonsinchenko.safetensors.preprocess.partition.U32Pairs;
import io.github.semyonsinchenko.safetensors.preprocess.stats.OrderedTable;
import io.github.semyonsinchenko.safetensors.sampler.db.DatabaseWriter;
import io.github.semyonsinchenko.safetensors.sampler.db.SectionReader;
import io.github.semyonsinchenko.safetensors.sampler.db.SectionWriter;
import java.io.IOException;
import java.io.Serializable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.stream.IntStream;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.api.java.function.Function2;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;
import scala.Tuple2;

/**
 * Stage 6, {@code graph.bin}: every FK edge (row -> the target's row of its key) in both CSR
 * directions. When every FK target table has at most {@link PrimaryKeyMaps#broadcastLimit} rows,
 * its key map is broadcast and one pass over each table's ordered rows resolves all of a row's
 * FK columns: it writes the outgoing lists in row order (no sort) and scatters the edges by
 * target row range to the partitions that write the incoming lists (a counting sort, no
 * comparison sort). Above the limit, the edges come from shuffled joins against the key-map
 * Datasets and each direction is range-sorted.
 */
public final class GraphWriter {
    private GraphWriter() {}

    /** Where each direction's parts are and in which order they concatenate. */
    private record Csr(Path outDir, int[] outParts, Path inDir, int[] inParts, long edges) {}

    /** Writes {@code graph.bin} from every table's resolvable foreign keys. */
    public static void write(BuildContext ctx, List<LoadedTable> tables, List<OrderedTable> ordered, PrimaryKeyMaps pkMaps)
            throws IOException {
        // Per table, its FK columns that can resolve (schema index) and each one's target table.
        int[][] fkColumns = new int[tables.size()][];
        int[][] fkTargets = new int[tables.size()][];
        boolean[] targets = new boolean[tables.size()];
        boolean anyFk = false;
        for (LoadedTable t : tables) {
            List<Integer> cols = new ArrayList<>();
            List<Integer> tgts = new ArrayList<>();
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
                cols.add(j);
                tgts.add(target);
                targets[target] = true;
                anyFk = true;
            }
            fkColumns[t.index()] = cols.stream().mapToInt(Integer::intValue).toArray();
            fkTargets[t.index()] = tgts.stream().mapToInt(Integer::intValue).toArray();
        }
        long nodes = tables.isEmpty() ? 0 : tables.getLast().rowEnd();
        if (!anyFk) {
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
            if (targets[t.index()] && t.rows() > limit && tooBig == null) {
                tooBig = t.schema().name();
            }
        }
        Csr csr;
        if (tooBig == null) {
            csr = broadcastCsr(ctx, tables, ordered, pkMaps, fkColumns, fkTargets, targets);
        } else {
            ctx.info(String.format(Locale.ROOT, "FK target '%s' has more than %d rows (%s): edges by shuffled joins",
                    tooBig, limit, PrimaryKeyMaps.BROADCAST_LIMIT_CONF));
            csr = shuffledCsr(ctx, tables, fkColumns, fkTargets, pkMaps);
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

    /** Broadcast key maps, one pass per table writing the outgoing parts, and a scatter to the incoming parts. */
    private static Csr broadcastCsr(BuildContext ctx, List<LoadedTable> tables, List<OrderedTable> ordered,
            PrimaryKeyMaps pkMaps, int[][] fkColumns, int[][] fkTargets, boolean[] targets) throws IOException {
        KeyMap[] maps = pkMaps.keyMaps(tables, ordered, targets);
        InRanges in = InRanges.of(ctx, tables, fkTargets, targets);
        List<String> sizes = new ArrayList<>();
        for (LoadedTable t : tables) {
            if (maps[t.index()] != null) {
                sizes.add(t.schema().name() + " " + maps[t.index()].size());
            }
        }
        ctx.info(String.format(Locale.ROOT, "key maps broadcast (%s keys); incoming lists in %d partitions",
                String.join(", ", sizes), in.partitions()));
        Path outDir = ctx.parts.resolve("graph-out");
        Path inDir = ctx.parts.resolve("graph-in");
        Broadcast<KeyMap[]> b = JavaSparkContext.fromSparkContext(ctx.spark.sparkContext()).broadcast(maps);
        try {
            JavaPairRDD<Integer, Bucket> edges = null;
            int outParts = 0;
            for (LoadedTable t : tables) {
                int[] cols = fkColumns[t.index()];
                if (cols.length == 0) {
                    continue;
                }
                Column[] select = new Column[cols.length + 1];
                select[0] = col(ROW);
                for (int c = 0; c < cols.length; c++) {
                    select[c + 1] = col("k" + cols[c]);
                }
                // Spark's own rows: no conversion to external Rows with boxed longs.
                JavaRDD<InternalRow> rows = ordered.get(t.index()).rows().select(select).queryExecution().toRdd()
                        .toJavaRDD();
                JavaPairRDD<Integer, Bucket> e = JavaPairRDD.fromJavaRDD(rows.mapPartitionsWithIndex(
                        new OutPartition(outDir.toString(), outParts, t.rowStart(), fkTargets[t.index()], b, in), true));
                outParts += rows.getNumPartitions();
                edges = edges == null ? e : edges.union(e);
            }
            List<Parts.Info> inInfos = edges.partitionBy(new IdPartitioner(in.partitions()))
                    .mapPartitionsWithIndex(new InPartition(inDir.toString(), in), true).collect();
            long numEdges = 0;
            for (Parts.Info info : inInfos) {
                numEdges += info.rows();
            }
            long outEdges = 0;
            for (int p = 0; p < outParts; p++) {
                Path part = Parts.partFile(outDir, 0, p);
                if (!Files.exists(part)) {
                    throw new IllegalStateException("graph: outgoing part " + part + " is missing");
                }
                outEdges += Files.size(part) / 4;
            }
            if (outEdges != numEdges) {
                throw new IllegalStateException(String.format(Locale.ROOT,
                        "graph: %d outgoing edges written but %d incoming", outEdges, numEdges));
            }
            return new Csr(outDir, IntStream.range(0, outParts).toArray(), inDir, ids(inInfos), numEdges);
        } finally {
            b.destroy();
        }
    }

    /** The edges from shuffled joins against the key-map Datasets, then a range sort per direction. */
    private static Csr shuffledCsr(BuildContext ctx, List<LoadedTable> tables, int[][] fkColumns, int[][] fkTargets,
            PrimaryKeyMaps pkMaps) {
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
        return new Csr(outDir, ids(outParts), inDir, ids(inParts), numEdges);
    }

    private static int[] ids(List<Parts.Info> infos) {
        return Parts.inOrder(infos).stream().mapToInt(Parts.Info::partition).toArray();
    }

    /** One CSR direction: the packed edges range-partitioned and sorted, each partition writing its parts. */
    private static List<Parts.Info> csr(Dataset<Row> packed, int partitions, Path dir) {
        return packed.repartitionByRange(partitions, col("e")).sortWithinPartitions("e").javaRDD()
                .mapPartitionsWithIndex(new CsrPartition(dir.toString()), true).collect();
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

    /** One source partition's edges bound for one incoming partition, as {@link U32Pairs} (dst, src), in source order. */
    record Bucket(int source, long[] edges) implements Serializable {}

    /**
     * The target rows each incoming partition owns: partition {@code p} holds rows
     * {@code start[p]} to {@code end[p] - 1}, ascending; only FK target tables have ranges.
     */
    record InRanges(long[] start, long[] end) implements Serializable {

        /**
         * Each target table's rows split evenly into as many ranges as its possible incoming
         * edges (the rows of the FK columns pointing at it) or its rows need partitions, so a
         * partition's edges and its per-row counts both stay near {@code rowsPerPartition}.
         */
        static InRanges of(BuildContext ctx, List<LoadedTable> tables, int[][] fkTargets, boolean[] targets) {
            long[] incoming = new long[tables.size()];
            for (LoadedTable t : tables) {
                for (int target : fkTargets[t.index()]) {
                    incoming[target] += t.rows();
                }
            }
            LongList starts = new LongList();
            LongList ends = new LongList();
            for (LoadedTable t : tables) {
                if (!targets[t.index()] || t.rows() == 0) {
                    continue;
                }
                int k = ctx.partitions(Math.max(incoming[t.index()], t.rows()));
                for (int i = 0; i < k; i++) {
                    long s = t.rowStart() + t.rows() * i / k;
                    long e = t.rowStart() + t.rows() * (i + 1) / k;
                    if (e > s) {
                        starts.add(s);
                        ends.add(e);
                    }
                }
            }
            long[] start = starts.toArray();
            return start.length == 0 ? new InRanges(new long[] {0}, new long[] {0})
                    : new InRanges(start, ends.toArray());
        }

        int partitions() {
            return start.length;
        }

        /** The partition owning target row {@code row}. */
        int partitionOf(long row) {
            int p = Arrays.binarySearch(start, row);
            p = p >= 0 ? p : -p - 2;
            if (p < 0 || row >= end[p]) {
                throw new IllegalArgumentException("row " + row + " is in no FK target table");
            }
            return p;
        }
    }

    /**
     * One partition of a table's ordered rows ({@code __row}, then its FK keys): resolves each
     * row's keys, writes the row's neighbours (ascending; Q9 leaves the order free) to section 0
     * and (row, count) runs to section 1 of outgoing part {@code offset + partition}, and returns
     * the edges bucketed by incoming partition. The part is written before any edge is returned,
     * so a recomputed partition rewrites the same part.
     */
    private record OutPartition(String dir, int offset, long rowStart, int[] targets, Broadcast<KeyMap[]> maps,
            InRanges in) implements Function2<Integer, Iterator<InternalRow>, Iterator<Tuple2<Integer, Bucket>>> {
        @Override
        public Iterator<Tuple2<Integer, Bucket>> call(Integer partition, Iterator<InternalRow> rows)
                throws IOException {
            KeyMap[] m = maps.value();
            LongList[] buckets = new LongList[in.partitions()];
            long[] dsts = new long[targets.length];
            int part = offset + partition;
            long n = 0;
            long previous = -1;
            try (Parts.Out out = new Parts.Out(dir, part, 2)) {
                SectionWriter neighbours = out.section(0);
                SectionWriter runs = out.section(1);
                while (rows.hasNext()) {
                    InternalRow r = rows.next();
                    long src = r.getLong(0) + rowStart;
                    if (src <= previous) {
                        throw new IllegalStateException(String.format(Locale.ROOT,
                                "graph: row %d after row %d in ordered partition %d", src, previous, partition));
                    }
                    previous = src;
                    int k = 0;
                    for (int c = 0; c < targets.length; c++) {
                        if (!r.isNullAt(c + 1)) {
                            long dst = m[targets[c]].get(r.getLong(c + 1));
                            if (dst >= 0) {
                                dsts[k++] = dst;
                            }
                        }
                    }
                    if (k == 0) {
                        continue;
                    }
                    Arrays.sort(dsts, 0, k);
                    for (int i = 0; i < k; i++) {
                        neighbours.u32((int) dsts[i]);
                        int p = in.partitionOf(dsts[i]);
                        if (buckets[p] == null) {
                            buckets[p] = new LongList();
                        }
                        buckets[p].add(U32Pairs.pack(dsts[i], src));
                    }
                    runs.u32((int) src);
                    runs.u32(k);
                    n += k;
                }
                out.commit(n);
            }
            List<Tuple2<Integer, Bucket>> result = new ArrayList<>();
            for (int p = 0; p < buckets.length; p++) {
                if (buckets[p] != null) {
                    result.add(new Tuple2<>(p, new Bucket(part, buckets[p].toArray())));
                }
            }
            return result.iterator();
        }
    }

    /**
     * One incoming partition: its buckets in source-partition order (so sources ascend), then a
     * stable counting sort by target row; section 0 the source lists, section 1 (row, count) runs.
     */
    private record InPartition(String dir, InRanges in)
            implements Function2<Integer, Iterator<Tuple2<Integer, Bucket>>, Iterator<Parts.Info>> {
        @Override
        public Iterator<Parts.Info> call(Integer partition, Iterator<Tuple2<Integer, Bucket>> it) throws IOException {
            List<Bucket> buckets = new ArrayList<>();
            long total = 0;
            while (it.hasNext()) {
                Bucket b = it.next()._2();
                buckets.add(b);
                total += b.edges().length;
            }
            if (total > Integer.MAX_VALUE - 8) {
                throw new IllegalStateException(String.format(Locale.ROOT,
                        "graph: %d incoming edges in one partition; lower rowsPerPartition", total));
            }
            buckets.sort(Comparator.comparingInt(Bucket::source));
            long start = in.start()[partition];
            int width = (int) (in.end()[partition] - start);
            int[] next = new int[width + 1];
            for (Bucket b : buckets) {
                for (long e : b.edges()) {
                    next[(int) (U32Pairs.first(e) - start) + 1]++;
                }
            }
            for (int d = 0; d < width; d++) {
                next[d + 1] += next[d];
            }
            int[] sources = new int[(int) total];
            for (Bucket b : buckets) {
                for (long e : b.edges()) {
                    sources[next[(int) (U32Pairs.first(e) - start)]++] = (int) U32Pairs.second(e);
                }
            }
            try (Parts.Out out = new Parts.Out(dir, partition, 2)) {
                out.section(0).u32s(sources, 0, sources.length);
                SectionWriter runs = out.section(1);
                int from = 0; // after the scatter, next[d] is where row d's list ends
                for (int d = 0; d < width; d++) {
                    if (next[d] > from) {
                        runs.u32((int) (start + d));
                        runs.u32(next[d] - from);
                        from = next[d];
                    }
                }
                return List.of(out.commit(total)).iterator();
            }
        }
    }
}
