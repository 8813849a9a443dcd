package io.github.semyonsinchenko.safetensors.preprocess.graph;

import static io.github.semyonsinchenko.safetensors.preprocess.BuildContext.ROW;
import static org.apache.spark.sql.functions.col;

import io.github.semyonsinchenko.safetensors.preprocess.BuildContext;
import io.github.semyonsinchenko.safetensors.preprocess.input.LoadedTable;
import io.github.semyonsinchenko.safetensors.preprocess.keys.KeyMap;
import io.github.semyonsinchenko.safetensors.preprocess.keys.PrimaryKeyMaps;
import io.github.semyonsinchenko.safetensors.preprocess.partition.IdPartitioner;
import io.github.semyonsinchenko.safetensors.preprocess.partition.LongList;
import io.github.semyonsinchenko.safetensors.preprocess.partition.Parts;
import io.github.semyonsinchenko.safetensors.preprocess.partition.U32Pairs;
import io.github.semyonsinchenko.safetensors.preprocess.stats.OrderedTable;
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
import org.apache.spark.sql.catalyst.InternalRow;
import scala.Tuple2;

/**
 * The edges when every FK target's key map is broadcast: one pass over each table's ordered rows
 * resolves all of a row's FK columns and writes the outgoing lists in row order (no sort), and
 * scatters the edges by target row range to the partitions that write the incoming lists (a
 * counting sort, no comparison sort).
 */
final class BroadcastEdges {
    private BroadcastEdges() {}

    /** Broadcast key maps, one pass per table writing the outgoing parts, and a scatter to the incoming parts. */
    static Csr write(BuildContext ctx, List<LoadedTable> tables, List<OrderedTable> ordered,
            PrimaryKeyMaps pkMaps, ForeignKeys fks) throws IOException {
        int[][] fkColumns = fks.columns();
        int[][] fkTargets = fks.targets();
        boolean[] targets = fks.isTarget();
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
            return new Csr(outDir, IntStream.range(0, outParts).toArray(), inDir, Csr.ids(inInfos), numEdges);
        } finally {
            b.destroy();
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
