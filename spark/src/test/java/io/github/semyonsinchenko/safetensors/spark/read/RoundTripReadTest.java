package io.github.semyonsinchenko.safetensors.spark.read;

import static org.apache.spark.sql.functions.col;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.spark.TensorStruct;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every write mode of the connector read back through the read path: kv (one and two columns,
 * with and without the index, append), batch with each tail strategy read with and without
 * unbatch.
 */
class RoundTripReadTest extends SparkTestBase {
    @TempDir
    static Path tmp;

    static final StructType SOURCE = new StructType()
            .add("key", DataTypes.StringType, false)
            .add("image", TensorStruct.TYPE, false)
            .add("label", TensorStruct.TYPE, false);

    /** n rows: image F32 [2, 2], label I64 scalar, in 3 partitions. */
    static Dataset<Row> source(int n) {
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            rows.add(RowFactory.create("k" + i,
                    RowFactory.create(TestData.le(TestData.image(i)), scalaInts(2, 2), "F32"),
                    RowFactory.create(TestData.le(TestData.label(i)), scalaInts(), "I64")));
        }
        return spark.createDataFrame(rows, SOURCE).repartition(3);
    }

    static Object scalaInts(Integer... v) {
        return scala.jdk.javaapi.CollectionConverters.asScala(List.of(v)).toSeq();
    }

    static Dataset<Row> read(Path p) {
        return spark.read().format("safetensors").option("inferSchema", "true").load(p.toString());
    }

    @Test
    void kvWritesReadBackOneRowPerWrittenRowWithAndWithoutIndex() {
        Dataset<Row> src = source(10);
        for (boolean index : List.of(false, true)) {
            Path out = tmp.resolve("kv-" + index);
            src.write().format("safetensors").option("name_col", "key").option("generate_index", String.valueOf(index))
                    .save(out.toString());
            Dataset<Row> back = read(out);
            assertEquals(List.of("tensor_key", "image", "label"), List.of(back.schema().fieldNames()));
            assertEquals(canonical(src), canonical(back.withColumnRenamed("tensor_key", "key")));
            assertEquals(10, back.count());
            assertEquals(10, back.select(col("image.shape")).count());
            assertEquals(1, back.where(col("tensor_key").equalTo("k7")).count());
            assertEquals(canonical(src.where(col("key").isin("k1", "k8")).drop("key")),
                    canonical(back.where(col("tensor_key").isin("k1", "k8")).drop("tensor_key")));
        }
    }

    @Test
    void kvWithOneColumnAndAppend() {
        Path out = tmp.resolve("kv-one");
        source(4).select("key", "image").write().format("safetensors").option("name_col", "key").save(out.toString());
        source(8).where(col("key").isin("k4", "k5", "k6", "k7")).select("key", "image").write().format("safetensors")
                .option("name_col", "key").mode("append").save(out.toString());
        Dataset<Row> back = read(out);
        assertEquals(List.of("tensor_key", "image"), List.of(back.schema().fieldNames()));
        assertEquals(canonical(source(8).select("key", "image")),
                canonical(back.withColumnRenamed("tensor_key", "key")));
    }

    @Test
    void batchWritesReadBackAsBatchesAndUnbatchToTheOriginalRows() {
        Dataset<Row> src = source(10).select("image", "label");
        for (String tail : List.of("write", "drop", "pad")) {
          for (boolean pack : List.of(false, true)) { // a file per batch, or packed c/<b> tensors
            Path out = tmp.resolve("batch-" + tail + "-" + pack);
            src.coalesce(1).write().format("safetensors").option("batch_size", "4").option("tail_strategy", tail)
                    .option("pack_batches", String.valueOf(pack)).save(out.toString());
            Dataset<Row> batches = read(out);
            assertFalse(batches.schema().apply("image").nullable());
            assertEquals(tail.equals("drop") ? 2 : 3, batches.count(), tail);
            Dataset<Row> back = spark.read().format("safetensors").option("inferSchema", "true")
                    .option("unbatch", "true").load(out.toString());
            if (tail.equals("drop")) {
                assertEquals(8, back.count());
                assertTrue(canonical(src).containsAll(canonical(back)));
            } else {
                assertEquals(canonical(src), canonical(back), tail);
            }
            back.select(col("image.shape"), col("label.shape")).collectAsList().forEach(r -> {
                assertEquals(List.of(2, 2), r.getList(0));
                assertEquals(List.of(), r.getList(1));
            });
          }
        }
    }

    @Test
    void kvWithAnotherSeparatorAndRowsOfDifferentShapes() {
        Path out = tmp.resolve("kv-ragged");
        Dataset<Row> src = spark.sql("select concat('k', id) as key, sequence(0, cast(id as int)) as v,"
                + " array(id) as w from range(5)");
        src.write().format("safetensors").option("name_col", "key").option("kv_separator", "--")
                .option("dtype", "I32").save(out.toString());
        Dataset<Row> back = read(out).orderBy("tensor_key");
        assertEquals(List.of("tensor_key", "v", "w"), List.of(back.schema().fieldNames()));
        List<Row> rows = back.select(col("tensor_key"), col("v.shape"), col("w.shape")).collectAsList();
        for (int i = 0; i < 5; i++) {
            assertEquals("k" + i, rows.get(i).getString(0));
            assertEquals(List.of(i + 1), rows.get(i).getList(1));
            assertEquals(List.of(1), rows.get(i).getList(2));
        }
        assertEquals(1, read(out).where(col("tensor_key").equalTo("k3")).count());
    }
}
