package io.github.semyonsinchenko.safetensors.preprocess;

import static io.github.semyonsinchenko.safetensors.preprocess.BuildContext.ROW;
import static org.apache.spark.sql.functions.call_function;
import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.octet_length;
import static org.apache.spark.sql.functions.udf;
import static org.apache.spark.sql.functions.when;

import io.github.semyonsinchenko.safetensors.sampler.db.SemanticType;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.types.DataTypes;

/**
 * Stage 2, the text vocabulary: the first occurrence of each cut string, in column-then-row order,
 * gets the next index. The text is exchanged once: the cells are hash-partitioned by their cut
 * string, and each partition finds its strings' first occurrences in a hash map
 * ({@link FirstOccurrences}). From then on only longs move: each first occurrence and each cell
 * (as its first's position) go to the range ({@link CellRanges}) of that first, where the sorted
 * firsts rank the cells; a range's offset is the count of firsts in the ranges before it, the one
 * small result the driver collects. Nothing else is collected.
 */
final class TextVocabulary {
    private static final String UTF8_CUT = "st_preprocess_utf8_cut";

    /** Per range, its whole cells with their rank in the range (persisted), or null without text columns. */
    private final JavaRDD<FirstOccurrences.Ranked> ranked;
    /** Per range, the index of its first first occurrence. */
    private final long[] offsets;
    private final JavaRDD<String> ordered;
    private final long size;

    private TextVocabulary(JavaRDD<FirstOccurrences.Ranked> ranked, long[] offsets, JavaRDD<String> ordered,
            long size) {
        this.ranked = ranked;
        this.offsets = offsets;
        this.ordered = ordered;
        this.size = size;
    }

    /** The number of distinct (cut) strings. */
    long size() {
        return size;
    }

    /** The strings in index order (computed only when read), or null when there are no text columns. */
    JavaRDD<String> ordered() {
        return ordered;
    }

    static TextVocabulary build(BuildContext ctx, List<LoadedTable> tables) {
        // Non-nullable: it is only applied to non-null values.
        ctx.spark.udf().register(UTF8_CUT, udf((UDF1<String, String>) s -> s == null ? null : Utf8.truncate(s,
                Utf8.MAX_VOCAB_BYTES), DataTypes.StringType).asNonNullable());
        Dataset<Row> cells = null;
        long rows = 0;
        List<Integer> columns = new ArrayList<>();
        List<Long> columnRows = new ArrayList<>();
        for (LoadedTable t : tables) {
            int[] textColumns = textColumns(t);
            for (int j : textColumns) {
                // (global column, row) packed into one long, high bits the column: its order is
                // column-then-row.
                long column = (long) (t.colStart() + j) << 32;
                Column value = col("c" + j);
                // Only a value longer than the cut calls it (a UDF converts every value to a Java
                // String and back). Such a value finds no index (0), as in headwater, whose lookup
                // uses the uncut value against the cut keys; it still adds its cut string.
                Column fits = octet_length(value).leq(lit(Utf8.MAX_VOCAB_BYTES));
                Dataset<Row> c = t.df().where(value.isNotNull()).select(col(ROW).plus(column).as("at"),
                        when(fits, value).otherwise(call_function(UTF8_CUT, value)).as("key"), fits.as("whole"));
                cells = cells == null ? c : cells.unionAll(c);
                columns.add(t.colStart() + j);
                columnRows.add(t.rows());
            }
            rows += textColumns.length * t.rows();
        }
        TextVocabulary vocab;
        if (cells == null) {
            vocab = new TextVocabulary(null, new long[0], null, 0);
        } else {
            int partitions = ctx.partitions(rows);
            CellRanges ranges = CellRanges.of(columns.stream().mapToInt(Integer::intValue).toArray(),
                    columnRows.stream().mapToLong(Long::longValue).toArray(), partitions);
            // The one exchange of the text, as Spark's rows (the strings are not turned into Java Strings).
            JavaRDD<InternalRow> byKey = cells.repartition(partitions, col("key")).queryExecution().toRdd()
                    .toJavaRDD();
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
            // Only the embedder reads it: the key partitions again (the exchange is reused), now with their strings.
            JavaRDD<String> orderedKeys = byKey.mapPartitionsToPair(new FirstOccurrences.KeysToRanges(ranges))
                    .partitionBy(new IdPartitioner(ranges.count()))
                    .mapPartitions(new FirstOccurrences.KeysInOrder(), true);
            vocab = new TextVocabulary(ranked, offsets, orderedKeys, distinct);
        }
        ctx.info(String.format(Locale.ROOT, "%d text strings", vocab.size()));
        if (vocab.size() > BuildContext.U32_LIMIT) {
            throw new PreprocessException(vocab.size() + " text strings exceed the format's 32-bit text index");
        }
        return vocab;
    }

    /** The table's text columns present in its Parquet data, in schema order. */
    static int[] textColumns(LoadedTable t) {
        List<Integer> js = new ArrayList<>();
        for (int j = 0; j < t.schema().columns().size(); j++) {
            if (t.schema().columns().get(j).stype() == SemanticType.TEXT && t.present()[j]) {
                js.add(j);
            }
        }
        return js.stream().mapToInt(Integer::intValue).toArray();
    }

    /** The table without its text values {@code c<j>}: no later stage reads them, only their indices. */
    static Dataset<Row> withoutText(LoadedTable t) {
        Dataset<Row> df = t.df();
        for (int j : textColumns(t)) {
            df = df.drop("c" + j);
        }
        return df;
    }

    /**
     * The indices of the table's text columns {@code textColumns} (as {@link #textColumns} gives
     * them), laid out like its ordered rows: see {@link TextIndices}.
     */
    JavaRDD<long[][]> byPartition(LoadedTable t, int[] textColumns, RowRanges rowRanges) {
        if (ranked == null) {
            throw new IllegalStateException("table '" + t.schema().name() + "': no text vocabulary was built");
        }
        int[] slotOf = new int[t.schema().columns().size()];
        Arrays.fill(slotOf, -1);
        for (int k = 0; k < textColumns.length; k++) {
            slotOf[textColumns[k]] = k;
        }
        return TextIndices.byPartition(ranked, offsets, t.colStart(), slotOf, textColumns.length, rowRanges);
    }
}
