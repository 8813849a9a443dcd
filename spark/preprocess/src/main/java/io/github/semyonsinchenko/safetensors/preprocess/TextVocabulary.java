package io.github.semyonsinchenko.safetensors.preprocess;

import static io.github.semyonsinchenko.safetensors.preprocess.BuildContext.ROW;
import static org.apache.spark.sql.functions.call_function;
import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.min;

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
 * gets the next index. Held as a Dataset (key, idx) for lookups and as the keys in index order for
 * embedding; neither is collected.
 *
 * @param lookup {@code key} (the cut string) and {@code idx}
 * @param ordered the keys in index order, or null when there are none
 */
record TextVocabulary(Dataset<Row> lookup, JavaRDD<String> ordered, long size) {
    private static final String UTF8_CUT = "st_preprocess_utf8_cut";

    static TextVocabulary build(BuildContext ctx, List<LoadedTable> tables) {
        ctx.spark.udf().register(UTF8_CUT, (UDF1<String, String>) s -> s == null ? null : Utf8.truncate(s,
                Utf8.MAX_VOCAB_BYTES), DataTypes.StringType);
        Dataset<Row> cells = null;
        for (LoadedTable t : tables) {
            for (int j = 0; j < t.schema().columns().size(); j++) {
                if (t.schema().columns().get(j).stype() != SemanticType.TEXT || !t.present()[j]) {
                    continue;
                }
                // (global column, row) packed into one long, high bits the column: its order is
                // column-then-row, and min() over a long stays a hash aggregation (a struct would sort).
                long column = (long) (t.colStart() + j) << 32;
                Dataset<Row> c = t.df().where(col("c" + j).isNotNull()).select(col(ROW).plus(column).as("at"),
                        call_function(UTF8_CUT, col("c" + j)).as("key"));
                cells = cells == null ? c : cells.unionAll(c);
            }
        }
        StructType vocabSchema = new StructType(new StructField[] {
            DataTypes.createStructField("key", DataTypes.StringType, false),
            DataTypes.createStructField("idx", DataTypes.LongType, false)});
        TextVocabulary vocab;
        if (cells == null) {
            vocab = new TextVocabulary(ctx.spark.createDataFrame(List.of(), vocabSchema), null, 0);
        } else {
            Dataset<Row> firsts = ctx.persist(cells.groupBy("key").agg(min(col("at")).as("first")));
            long distinct = firsts.count();
            // Cached: zipWithIndex, the lookup's count and the embedder each walk it; a recompute re-sorts.
            JavaRDD<String> orderedKeys = ctx.persist(firsts.repartitionByRange(ctx.partitions(distinct), col("first"))
                    .sortWithinPartitions("first").select("key").javaRDD().map(r -> r.getString(0)));
            JavaRDD<Row> indexed = orderedKeys.zipWithIndex().map(p -> RowFactory.create(p._1(), p._2()));
            Dataset<Row> lookup = ctx.persist(ctx.spark.createDataFrame(indexed, vocabSchema));
            vocab = new TextVocabulary(lookup, orderedKeys, lookup.count());
        }
        ctx.info(String.format(Locale.ROOT, "%d text strings", vocab.size()));
        if (vocab.size() > BuildContext.U32_LIMIT) {
            throw new PreprocessException(vocab.size() + " text strings exceed the format's 32-bit text index");
        }
        return vocab;
    }

    /**
     * The table with {@code t<j>}, the text index, in place of each text column's value {@code c<j>}.
     * The lookup uses the uncut value against cut keys: longer values find nothing (index 0), as in
     * headwater. Only (row, value) pairs are shuffled to the lookup, and only (row, index) pairs come
     * back by row: the text itself never travels with the whole row, nor is it cached with it.
     */
    Dataset<Row> withIndices(LoadedTable t) {
        List<Integer> textColumns = new ArrayList<>();
        for (int j = 0; j < t.schema().columns().size(); j++) {
            if (t.schema().columns().get(j).stype() == SemanticType.TEXT && t.present()[j]) {
                textColumns.add(j);
            }
        }
        Dataset<Row> df = t.df();
        for (int j : textColumns) {
            df = df.drop("c" + j);
        }
        for (int j : textColumns) {
            // Shuffled hash joins: sorting every cell by a string key cost more than the rest.
            Dataset<Row> v = lookup.select(col("key").as("tk" + j), col("idx").as("t" + j)).hint("shuffle_hash");
            Dataset<Row> found = t.df().where(col("c" + j).isNotNull())
                    .select(col(ROW).as("tr" + j), col("c" + j))
                    .join(v, col("c" + j).equalTo(col("tk" + j)))
                    .select(col("tr" + j), col("t" + j)).hint("shuffle_hash");
            df = df.join(found, col(ROW).equalTo(col("tr" + j)), "left").drop("tr" + j);
        }
        return df;
    }
}
