package io.github.semyonsinchenko.safetensors.preprocess;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Locale;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A task query's final ORDER BY sorted in one partition: the rows come out in the order of Spark's
 * own global sort, the plan has no range partitioning (so nothing runs the query's input twice to
 * sample it), and a query that does not end in a global sort is left as it is.
 */
class TaskQueriesTest {

    private static SparkSession spark;

    @BeforeAll
    static void views() {
        spark = SparkTestSession.get();
        // Keys spread over 7 partitions out of order, so a sort has work to do in each.
        spark.range(0, 3000, 1, 7).selectExpr("(id * 7919) % 3000 AS k", "id % 11 AS g", "id AS v")
                .createOrReplaceTempView("tq_rows");
        spark.range(0, 300, 1, 3).selectExpr("(id * 31) % 300 AS g2", "id AS w").createOrReplaceTempView("tq_other");
    }

    @AfterAll
    static void drop() {
        spark.catalog().dropTempView("tq_rows");
        spark.catalog().dropTempView("tq_other");
    }

    private static String plan(Dataset<Row> ds) {
        return ((org.apache.spark.sql.classic.Dataset<Row>) ds).queryExecution().executedPlan().toString()
                .toLowerCase(Locale.ROOT);
    }

    private static void assertSameRowsAndOrder(String sql) {
        Dataset<Row> query = spark.sql(sql);
        Dataset<Row> sorted = TaskQueries.sortedInOnePartition(query);
        assertTrue(plan(query).contains("rangepartitioning"), plan(query));
        assertFalse(plan(sorted).contains("rangepartitioning"), plan(sorted));
        assertEquals(query.schema(), sorted.schema());
        List<Row> expected = query.collectAsList();
        assertEquals(expected, sorted.collectAsList());
        assertEquals(1, sorted.javaRDD().getNumPartitions());
    }

    @Test
    void orderByKey() {
        assertSameRowsAndOrder("SELECT k, v FROM tq_rows ORDER BY k");
    }

    @Test
    void orderByAfterJoinAndAggregationDescending() {
        assertSameRowsAndOrder("SELECT r.k, COUNT(o.w) AS n FROM tq_rows r LEFT JOIN tq_other o ON o.g2 = r.g"
                + " AND o.w <= r.v GROUP BY r.k ORDER BY r.k DESC");
    }

    @Test
    void orderByAColumnTheQueryDoesNotReturn() {
        // Analyzed as a projection over the sort.
        assertSameRowsAndOrder("SELECT v FROM tq_rows ORDER BY k");
    }

    @Test
    void otherQueriesAreLeftAlone() {
        for (String sql : new String[] {"SELECT k, v FROM tq_rows", "SELECT k FROM tq_rows ORDER BY k LIMIT 5",
                "SELECT k, v FROM tq_rows SORT BY k"}) {
            Dataset<Row> query = spark.sql(sql);
            assertSame(query, TaskQueries.sortedInOnePartition(query), sql);
        }
    }
}
