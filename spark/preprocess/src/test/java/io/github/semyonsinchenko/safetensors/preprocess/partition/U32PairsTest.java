package io.github.semyonsinchenko.safetensors.preprocess.partition;

import static org.apache.spark.sql.functions.col;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.github.semyonsinchenko.safetensors.preprocess.BuildContext;
import io.github.semyonsinchenko.safetensors.preprocess.SparkTestSession;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;

/** Pairs of u32 values in a long: pair order for every u32 value, in Java's sort and in Spark's. */
class U32PairsTest {

    @Test
    void javaSortIsPairOrderAndTheHalvesComeBack() {
        long[] packed = {U32Pairs.pack(3, 7), U32Pairs.pack(0xFFFF_FFFEL, 1), U32Pairs.pack(1, 0xFFFF_FFFFL),
            U32Pairs.pack(2, 0), U32Pairs.pack(1L << 31, 0), U32Pairs.pack((1L << 31) - 1, 9)};
        U32Pairs.sort(packed);
        long[][] want = {{1, 0xFFFF_FFFFL}, {2, 0}, {3, 7}, {(1L << 31) - 1, 9}, {1L << 31, 0}, {0xFFFF_FFFEL, 1}};
        long[][] got = new long[packed.length][];
        for (int i = 0; i < packed.length; i++) {
            got[i] = new long[] {U32Pairs.first(packed[i]), U32Pairs.second(packed[i])};
        }
        assertArrayEquals(want, got);
        assertEquals(1L << 32 | 7, U32Pairs.pack(1, 0xF_0000_0007L), "a second value keeps only its low 32 bits");
    }

    @Test
    void sparkSortIsPairOrderAndTheSwapIsExact() {
        long max = BuildContext.U32_LIMIT - 1; // the largest row index a database can have
        long[][] pairs = {{0, 0}, {0, max}, {1, 0}, {(1L << 31) - 1, 5}, {1L << 31, 0}, {1L << 31, 1L << 31},
            {max, 0}, {max, max}, {7, (1L << 31) + 3}, {(1L << 32) - 2, 1}};
        List<Row> rows = new ArrayList<>();
        for (long[] p : pairs) {
            rows.add(RowFactory.create(p[0], p[1]));
        }
        Dataset<Row> edges = SparkTestSession.get().createDataFrame(rows,
                new StructType().add("src", "long").add("dst", "long"));
        Dataset<Row> packed = edges.select(col("src"), col("dst"), U32Pairs.sortable(col("src"), col("dst")).as("e"),
                U32Pairs.swapSortable(U32Pairs.sortable(col("src"), col("dst"))).as("t"),
                U32Pairs.sortable(col("dst"), col("src")).as("want_t"));
        List<Row> sorted = packed.orderBy("e").collectAsList();
        List<long[]> expected = new ArrayList<>(List.of(pairs));
        expected.sort(Comparator.<long[]>comparingLong(p -> p[0]).thenComparingLong(p -> p[1]));
        for (int i = 0; i < expected.size(); i++) {
            Row r = sorted.get(i);
            assertEquals(expected.get(i)[0], r.getLong(0), "src of sorted edge " + i);
            assertEquals(expected.get(i)[1], r.getLong(1), "dst of sorted edge " + i);
            long pair = U32Pairs.fromSortable(r.getLong(2));
            assertEquals(expected.get(i)[0], U32Pairs.first(pair), "decoded src of edge " + i);
            assertEquals(expected.get(i)[1], U32Pairs.second(pair), "decoded dst of edge " + i);
            assertEquals(r.getLong(4), r.getLong(3), "transpose of edge " + i);
        }
        assertEquals(pairs.length, packed.select("e").distinct().as(Encoders.LONG()).count());
    }
}
