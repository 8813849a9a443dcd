package io.github.semyonsinchenko.safetensors.preprocess;

import static io.github.semyonsinchenko.safetensors.preprocess.BuildContext.ROW;
import static org.apache.spark.sql.functions.call_function;
import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.min;
import static org.apache.spark.sql.functions.udf;
import static org.apache.spark.sql.functions.when;

import io.github.semyonsinchenko.safetensors.sampler.db.SemanticType;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * Stage 2, the text vocabulary: the first occurrence of each cut string, in column-then-row order,
 * gets the next index. The text cells are hash-partitioned by their cut string, so each string's
 * first occurrence is found (a hash aggregation) and tagged onto its cells (a hash join) without a
 * further exchange; from then on only numbers move: the firsts are sorted to number them, and each
 * cell gets its index by a join on the first occurrence (a long). The later stages never shuffle
 * text. Nothing is collected.
 *
 * @param cells {@code at} (global column {@code << 32 |} row) and {@code idx}, one per text cell
 *     whose value is in the vocabulary uncut
 * @param ordered the keys in index order (computed only when read), or null when there are none
 */
record TextVocabulary(Dataset<Row> cells, JavaRDD<String> ordered, long size) {
    private static final String UTF8_CUT = "st_preprocess_utf8_cut";

    static TextVocabulary build(BuildContext ctx, List<LoadedTable> tables) {
        // Non-nullable (it is only applied to non-null values): otherwise the join on its result
        // makes Spark infer an isnotnull filter that calls it once more per cell.
        ctx.spark.udf().register(UTF8_CUT, udf((UDF1<String, String>) s -> s == null ? null : Utf8.truncate(s,
                Utf8.MAX_VOCAB_BYTES), DataTypes.StringType).asNonNullable());
        Dataset<Row> cells = null;
        long rows = 0;
        for (LoadedTable t : tables) {
            int[] textColumns = textColumns(t);
            for (int j : textColumns) {
                // (global column, row) packed into one long, high bits the column: its order is
                // column-then-row, and min() over a long stays a hash aggregation (a struct would sort).
                long column = (long) (t.colStart() + j) << 32;
                // A value longer than the cut finds no index (0), as in headwater, whose lookup
                // uses the uncut value against the cut keys; it still adds its cut string. Two
                // selects: Spark does not merge them, as that would call the cut twice.
                Dataset<Row> c = t.df().where(col("c" + j).isNotNull()).select(col(ROW).plus(column).as("at"),
                        col("c" + j).as("value"), call_function(UTF8_CUT, col("c" + j)).as("key"))
                        .select(col("at"), col("key"), col("key").equalTo(col("value")).as("whole"));
                cells = cells == null ? c : cells.unionAll(c);
            }
            rows += textColumns.length * t.rows();
        }
        StructType indexSchema = new StructType(new StructField[] {
            DataTypes.createStructField("first", DataTypes.LongType, false),
            DataTypes.createStructField("idx", DataTypes.LongType, false)});
        TextVocabulary vocab;
        if (cells == null) {
            vocab = new TextVocabulary(ctx.spark.createDataFrame(List.of(), new StructType()
                    .add("at", DataTypes.LongType, false).add("idx", DataTypes.LongType, false)), null, 0);
        } else {
            // The join below needs no exchange: both sides are partitioned by key into the same
            // partitions. (Spark prunes the aggregation's input to (at, key), so that side is a
            // second exchange of the cells rather than a reuse of this one.)
            Dataset<Row> byKey = cells.repartition(ctx.partitions(rows), col("key"));
            Dataset<Row> firsts = byKey.groupBy("key").agg(min(col("at")).as("first"));
            Dataset<Row> tagged = ctx.persist(byKey.join(firsts.hint("shuffle_hash"), "key")
                    .select(col("at"), col("first"), col("whole"), when(col("at").equalTo(col("first")), col("key"))
                            .as("key")));
            Dataset<Row> firstCells = tagged.where(col("key").isNotNull());
            long distinct = firstCells.count();
            // Index = rank of the first occurrence; only the longs are sorted.
            JavaRDD<Long> sortedFirsts = ctx.persist(firstCells.select("first")
                    .repartitionByRange(ctx.partitions(distinct), col("first")).sortWithinPartitions("first")
                    .javaRDD().map(r -> r.getLong(0)));
            Dataset<Row> indexOfFirst = ctx.spark.createDataFrame(sortedFirsts.zipWithIndex()
                    .map(p -> RowFactory.create(p._1(), p._2())), indexSchema);
            Dataset<Row> indexed = ctx.persist(tagged.where(col("whole")).select("at", "first")
                    .join(indexOfFirst.hint("shuffle_hash"), "first").select("at", "idx"));
            JavaRDD<String> orderedKeys = firstCells.select("first", "key")
                    .repartitionByRange(ctx.partitions(distinct), col("first")).sortWithinPartitions("first")
                    .select("key").javaRDD().map(r -> r.getString(0));
            vocab = new TextVocabulary(indexed, orderedKeys, distinct);
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

    /** Column {@code j}'s (row, index) pairs, {@code row} and {@code idx}, one per cell with an index. */
    Dataset<Row> indices(LoadedTable t, int j) {
        long column = (long) (t.colStart() + j) << 32;
        return cells.where(col("at").geq(column).and(col("at").lt(column + (1L << 32))))
                .select(col("at").minus(column).as("row"), col("idx"));
    }
}
