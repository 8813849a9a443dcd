package io.github.semyonsinchenko.safetensors.preprocess.task;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.preprocess.SparkTestSession;
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
 * sample it), and a query that does not end in a global sort is left as it is. And its
 * TIMESTAMP_NTZ interval arithmetic done as additions, with Spark's results.
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

    /** How many additions of microseconds the optimized plan of {@code ds} has. */
    private static int additions(Dataset<Row> ds) {
        String plan = ((org.apache.spark.sql.classic.Dataset<Row>) ds).queryExecution().optimizedPlan().toString()
                .toLowerCase(Locale.ROOT);
        return plan.split("static_invoke\\(java\\.lang\\.math\\.addexact\\(", -1).length - 1;
    }

    /**
     * Runs {@code sql} as Spark computes it and with the NTZ rewrite, under a zone with summer time;
     * the rewritten plan has {@code n} additions.
     */
    private static void assertNtzArithmeticAsSpark(String sql, int n) {
        String zone = spark.conf().get("spark.sql.session.timeZone");
        spark.conf().set("spark.sql.session.timeZone", "America/New_York");
        try {
            Dataset<Row> query = spark.sql(sql);
            Dataset<Row> rewritten = TaskQueries.withNtzIntervalArithmetic(query);
            assertEquals(0, additions(query));
            assertEquals(n, additions(rewritten));
            assertEquals(query.schema(), rewritten.schema());
            List<Row> expected = query.collectAsList();
            assertTrue(expected.size() > 10, sql);
            assertEquals(expected, rewritten.collectAsList(), sql);
        } finally {
            spark.conf().set("spark.sql.session.timeZone", zone);
        }
    }

    @Test
    void ntzIntervalArithmeticIsAdditionAndAgreesWithSpark() {
        // Local times on and around the days New York's clocks change, every 10th null.
        spark.range(0, 2000, 1, 3).selectExpr("id", "id % 17 AS g",
                "CASE WHEN id % 10 = 0 THEN NULL ELSE make_timestamp_ntz(2021, IF(id % 2 = 0, 3, 11),"
                        + " 6 + id % 3, id % 24, (id * 7) % 60, (id * 13) % 60) END AS ts")
                .createOrReplaceTempView("tq_ntz");
        try {
            assertNtzArithmeticAsSpark("SELECT id, ts + INTERVAL '30 days' AS a,"
                    + " ts - INTERVAL '1 02:03:04.000005' DAY TO SECOND AS b,"
                    + " ts + make_dt_interval(id % 3, 1, 0, 0) AS c FROM tq_ntz"
                    + " WHERE ts + INTERVAL '1' HOUR > TIMESTAMP_NTZ'2021-03-07 02:30:00' ORDER BY id", 4);
            assertNtzArithmeticAsSpark("SELECT a.id, COUNT(b.id) AS n FROM tq_ntz a LEFT JOIN tq_ntz b ON b.g = a.g"
                    + " AND b.ts <= a.ts + INTERVAL '2 days' GROUP BY a.id ORDER BY a.id", 1);
            // With a time zone (TIMESTAMP) the length of a day depends on the zone: left to Spark.
            Dataset<Row> ltz = spark.sql("SELECT CAST(ts AS TIMESTAMP) + INTERVAL '1' DAY FROM tq_ntz");
            assertSame(ltz, TaskQueries.withNtzIntervalArithmetic(ltz));
            // An overflow fails either way, as no silently wrapped value.
            String overflow = "SELECT make_timestamp_ntz(294000, 1, 1, 0, 0, 0)"
                    + " + make_dt_interval(id * 100000, 0, 0, 0) FROM tq_ntz";
            assertThrows(Exception.class, () -> spark.sql(overflow).collectAsList());
            Dataset<Row> rewritten = TaskQueries.withNtzIntervalArithmetic(spark.sql(overflow));
            assertNotSame(spark.sql(overflow), rewritten);
            Exception e = assertThrows(Exception.class, rewritten::collectAsList);
            assertTrue(rootCause(e) instanceof ArithmeticException, rootCause(e).toString());
        } finally {
            spark.catalog().dropTempView("tq_ntz");
        }
    }

    private static Throwable rootCause(Throwable t) {
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t;
    }

    @Test
    void queryRewriteQuotesTableNames() {
        assertEquals("SELECT * FROM \"postHistory\" h JOIN \"posts\" p",
                TaskQueries.rewrite("SELECT * FROM 'postHistory.parquet' h JOIN 'posts.parquet' p",
                        List.of("posts", "postHistory")));
    }
}
