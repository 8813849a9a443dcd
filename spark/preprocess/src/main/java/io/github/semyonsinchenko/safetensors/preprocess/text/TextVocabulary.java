package io.github.semyonsinchenko.safetensors.preprocess.text;

import static io.github.semyonsinchenko.safetensors.preprocess.BuildContext.ROW;
import static org.apache.spark.sql.functions.col;

import io.github.semyonsinchenko.safetensors.preprocess.BuildContext;
import io.github.semyonsinchenko.safetensors.preprocess.PreprocessSettings;
import io.github.semyonsinchenko.safetensors.preprocess.PreprocessException;
import io.github.semyonsinchenko.safetensors.preprocess.input.LoadedTable;
import io.github.semyonsinchenko.safetensors.preprocess.partition.IdPartitioner;
import io.github.semyonsinchenko.safetensors.preprocess.partition.RowRanges;
import io.github.semyonsinchenko.safetensors.preprocess.partition.U32Pairs;
import io.github.semyonsinchenko.safetensors.sampler.db.SemanticType;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;

/**
 * Stage 2, the text vocabulary: the first occurrence of each cut string, in column-then-row order,
 * gets the next index. The text is exchanged once: the cells are hash-partitioned by their cut
 * string, in blocks of packed cells ({@link TextCells}), and each partition finds its strings'
 * first occurrences in a hash map ({@link FirstOccurrences}). From then on only numbers move.
 * While the text cells (rows times text columns, nulls included) number at most
 * {@link #BROADCAST_CELLS_CONF}, the cells stay in
 * their key partitions and the driver collects the first occurrences alone, as cell ordinals:
 * their bitmap, broadcast, gives each cell its index (the number of firsts before its first).
 * Above it, each first occurrence and each cell (as its first's position) go to the range
 * ({@link CellRanges}) of that first, where the sorted firsts rank the cells; a range's offset is
 * the count of firsts in the ranges before it. Nothing else is collected.
 */
public final class TextVocabulary {
    /**
     * The session setting for the most text cells whose first occurrences the driver ranks with a
     * bitmap it broadcasts (3 bytes per 16 cells; it also collects 4 bytes per distinct string);
     * more cells are ranked by a shuffle to cell ranges.
     */
    public static final String BROADCAST_CELLS_CONF = "spark.safetensors.preprocess.broadcastTextCells";
    /** 12 MiB of bitmap and counts at most. */
    public static final long DEFAULT_BROADCAST_CELLS = 1L << 26;

    /** The vocabulary's non-null cells (persisted) and how they find their indices, or null without text columns. */
    private final IndexedCells<?> cells;
    private final JavaRDD<String> ordered;
    private final long size;

    private TextVocabulary(IndexedCells<?> cells, JavaRDD<String> ordered, long size) {
        this.cells = cells;
        this.ordered = ordered;
        this.size = size;
    }

    /** Persisted non-null cells, one element per partition, with the way their elements give indices. */
    private record IndexedCells<T>(JavaRDD<T> rdd, TextIndices.Cells<T> reader) {
        public JavaRDD<long[][]> byPartition(int colStart, int[] slotOf, int slots, RowRanges rowRanges) {
            return TextIndices.byPartition(rdd, reader, colStart, slotOf, slots, rowRanges);
        }
    }

    /** The number of distinct (cut) strings. */
    public long size() {
        return size;
    }

    /** The strings in index order (computed only when read), or null when there are no text columns. */
    public JavaRDD<String> ordered() {
        return ordered;
    }

    /** Numbers every distinct cut text string by its first occurrence. */
    public static TextVocabulary build(BuildContext ctx, List<LoadedTable> tables) {
        List<JavaRDD<InternalRow>> scans = new ArrayList<>();
        long rows = 0;
        List<Integer> columns = new ArrayList<>();
        List<Long> columnRows = new ArrayList<>();
        for (LoadedTable t : tables) {
            int[] textColumns = textColumns(t);
            for (int j : textColumns) {
                // The cell's position is the pair (global column, row), so positions order
                // column-then-row. The values stay Spark's UTF-8 bytes (TextCells cuts and hashes them).
                long column = U32Pairs.pack(t.colStart() + j, 0);
                scans.add(t.df().select(col(ROW).plus(column).as("at"), col("c" + j)).queryExecution().toRdd()
                        .toJavaRDD());
                columns.add(t.colStart() + j);
                columnRows.add(t.rows());
            }
            rows += textColumns.length * t.rows();
        }
        TextVocabulary vocab;
        if (scans.isEmpty()) {
            vocab = new TextVocabulary(null, null, 0);
        } else {
            int partitions = ctx.partitions(rows);
            CellRanges ranges = CellRanges.of(columns.stream().mapToInt(Integer::intValue).toArray(),
                    columnRows.stream().mapToLong(Long::longValue).toArray(), partitions);
            JavaSparkContext jsc = JavaSparkContext.fromSparkContext(ctx.spark.sparkContext());
            // The one exchange of the text, in blocks of packed cells (not a Spark row per cell).
            JavaRDD<InternalRow> scan = scans.getFirst();
            for (int k = 1; k < scans.size(); k++) {
                scan = scan.union(scans.get(k));
            }
            JavaPairRDD<Integer, byte[]> byKey = scan.mapPartitionsToPair(new TextCells.Blocks(partitions))
                    .partitionBy(new IdPartitioner(partitions));
            // Only the embedder reads it: the key partitions again (the exchange is reused), now with their strings.
            JavaRDD<String> orderedKeys = byKey.mapPartitionsToPair(new FirstOccurrences.KeysToRanges(ranges))
                    .partitionBy(new IdPartitioner(ranges.count()))
                    .mapPartitions(new FirstOccurrences.KeysInOrder(), true);
            long cellCount = rows;
            if (cellCount <= Math.min(broadcastCells(ctx), Integer.MAX_VALUE)) {
                JavaRDD<FirstOccurrences.Located> located = ctx.persist(
                        byKey.mapPartitions(new FirstOccurrences.ToLocated(ranges)));
                FirstOccurrences.FirstIndex index = FirstOccurrences.FirstIndex.of(
                        located.map(FirstOccurrences.Located::firsts).collect(), cellCount);
                // Not destroyed here: the encoder reads it; Spark's cleaner drops it with this vocabulary.
                Broadcast<FirstOccurrences.FirstIndex> b = jsc.broadcast(index);
                ctx.info(String.format(Locale.ROOT, "first occurrences of %d text cells ranked on the driver",
                        cellCount));
                vocab = new TextVocabulary(new IndexedCells<>(located, new TextIndices.LocatedCells(b)), orderedKeys,
                        index.size());
            } else {
                JavaRDD<FirstOccurrences.Ranked> ranked = ctx.persist(byKey
                        .mapPartitionsToPair(new FirstOccurrences.ToRanges(ranges))
                        .partitionBy(new IdPartitioner(ranges.count()))
                        .mapPartitions(new FirstOccurrences.Rank(), true));
                List<Long> counts = ranked.map(FirstOccurrences.Ranked::firsts).collect(); // in range order
                long[] offsets = new long[counts.size()];
                long distinct = 0;
                for (int r = 0; r < offsets.length; r++) {
                    offsets[r] = distinct;
                    distinct += counts.get(r);
                }
                ctx.info(String.format(Locale.ROOT, "first occurrences of %d text cells ranked in %d cell ranges"
                        + " (more than %s)", cellCount, ranges.count(), BROADCAST_CELLS_CONF));
                vocab = new TextVocabulary(new IndexedCells<>(ranked, new TextIndices.RankedCells(offsets)),
                        orderedKeys, distinct);
            }
        }
        ctx.info(String.format(Locale.ROOT, "%d text strings", vocab.size()));
        if (vocab.size() > BuildContext.U32_LIMIT) {
            throw new PreprocessException(vocab.size() + " text strings exceed the format's 32-bit text index");
        }
        return vocab;
    }

    /** The table's text columns present in its Parquet data, in schema order. */
    public static int[] textColumns(LoadedTable t) {
        List<Integer> js = new ArrayList<>();
        for (int j = 0; j < t.schema().columns().size(); j++) {
            if (t.schema().columns().get(j).stype() == SemanticType.TEXT && t.present()[j]) {
                js.add(j);
            }
        }
        return js.stream().mapToInt(Integer::intValue).toArray();
    }

    /**
     * The table without its text columns (values {@code c<j>} and null flags {@code v<j>}): no later
     * stage reads them, only their indices, which also tell the nulls ({@link TextIndices}).
     */
    public static Dataset<Row> withoutText(LoadedTable t) {
        Dataset<Row> df = t.df();
        for (int j : textColumns(t)) {
            df = df.drop("c" + j, "v" + j);
        }
        return df;
    }

    /**
     * The indices of the table's text columns {@code textColumns} (as {@link #textColumns} gives
     * them), laid out like its ordered rows: see {@link TextIndices}.
     */
    public JavaRDD<long[][]> byPartition(LoadedTable t, int[] textColumns, RowRanges rowRanges) {
        if (cells == null) {
            throw new IllegalStateException("table '" + t.schema().name() + "': no text vocabulary was built");
        }
        int[] slotOf = new int[t.schema().columns().size()];
        Arrays.fill(slotOf, -1);
        for (int k = 0; k < textColumns.length; k++) {
            slotOf[textColumns[k]] = k;
        }
        return cells.byPartition(t.colStart(), slotOf, textColumns.length, rowRanges);
    }

    /** {@link #BROADCAST_CELLS_CONF}, or its default. */
    static long broadcastCells(BuildContext ctx) {
        return PreprocessSettings.of(ctx.spark).count(BROADCAST_CELLS_CONF, DEFAULT_BROADCAST_CELLS, 0, "text cells");
    }
}
