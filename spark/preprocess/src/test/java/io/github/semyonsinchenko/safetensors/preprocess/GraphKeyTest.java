package io.github.semyonsinchenko.safetensors.preprocess;

import static org.apache.spark.sql.functions.col;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;

/** The packed edge keys the graph sorts by: pair order for every u32 row, and an exact transpose. */
class GraphKeyTest {

    @Test
    void packedKeysSortAsUnsignedPairsAndTransposeExactly() {
        long max = BuildContext.U32_LIMIT - 1; // the largest row index a database can have
        long[][] pairs = {{0, 0}, {0, max}, {1, 0}, {(1L << 31) - 1, 5}, {1L << 31, 0}, {1L << 31, 1L << 31},
            {max, 0}, {max, max}, {7, (1L << 31) + 3}, {(1L << 32) - 2, 1}};
        List<Row> rows = new ArrayList<>();
        for (long[] p : pairs) {
            rows.add(RowFactory.create(p[0], p[1]));
        }
        Dataset<Row> edges = SparkTestSession.get().createDataFrame(rows,
                new StructType().add("src", "long").add("dst", "long"));
        Dataset<Row> packed = edges.select(col("src"), col("dst"), GraphWriter.pack(col("src"), col("dst")).as("e"),
                GraphWriter.transpose(GraphWriter.pack(col("src"), col("dst"))).as("t"),
                GraphWriter.pack(col("dst"), col("src")).as("want_t"));
        List<Row> sorted = packed.orderBy("e").collectAsList();
        List<long[]> expected = new ArrayList<>(List.of(pairs));
        expected.sort(Comparator.<long[]>comparingLong(p -> p[0]).thenComparingLong(p -> p[1]));
        for (int i = 0; i < expected.size(); i++) {
            Row r = sorted.get(i);
            assertEquals(expected.get(i)[0], r.getLong(0), "src of sorted edge " + i);
            assertEquals(expected.get(i)[1], r.getLong(1), "dst of sorted edge " + i);
            long u = r.getLong(2) ^ Long.MIN_VALUE; // what CsrPartition decodes
            assertEquals(expected.get(i)[0], u >>> 32, "decoded src of edge " + i);
            assertEquals(expected.get(i)[1], u & BuildContext.U32_LIMIT, "decoded dst of edge " + i);
            assertEquals(r.getLong(4), r.getLong(3), "transpose of edge " + i);
        }
        assertEquals(pairs.length, packed.select("e").distinct().as(Encoders.LONG()).count());
    }
}
