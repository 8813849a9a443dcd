package io.github.semyonsinchenko.safetensors.preprocess.stats;

import io.github.semyonsinchenko.safetensors.preprocess.partition.RowRanges;
import io.github.semyonsinchenko.safetensors.preprocess.text.TextIndices;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;

/**
 * A table's rows in order, as stage 3 and the encoder read them.
 *
 * @param rows the rows without their text values, partitioned as {@code ranges} says
 * @param ranges which rows each partition holds
 * @param textColumns the schema columns whose indices {@code text} holds, in its order
 * @param text per partition of {@code rows} the packed text indices ({@link TextIndices}), or null without text columns
 */
public record OrderedTable(Dataset<Row> rows, RowRanges ranges, int[] textColumns, JavaRDD<long[][]> text) {}
