package io.github.semyonsinchenko.safetensors.preprocess.input;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.expr;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.preprocess.SparkTestSession;
import java.util.List;
import java.util.Locale;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;

/** Epoch microseconds of each timestamp type as Spark's own cast computes them in UTC (the build's zone). */
class SparkColumnsTest {
    @Test
    void microsOfEachTimestampTypeAreSparksInUtc() {
        SparkSession spark = SparkTestSession.get();
        String zone = spark.conf().get("spark.sql.session.timeZone");
        spark.conf().set("spark.sql.session.timeZone", "UTC");
        try {
            // Before and after 1970, microsecond precision, every 7th null.
            Dataset<Row> in = spark.range(0, 500, 1, 2).selectExpr(
                    "IF(id % 7 = 0, NULL, make_timestamp_ntz(1900 + id % 200, 1 + id % 12, 1 + id % 28, id % 24,"
                            + " id % 60, (id * 1000003 % 60000000) / 1e6)) AS ntz")
                    .selectExpr("ntz", "CAST(ntz AS TIMESTAMP) AS ltz", "CAST(ntz AS DATE) AS d");
            for (String c : List.of("ntz", "ltz", "d")) {
                Dataset<Row> both = in.select(
                        SparkColumns.micros(col(c), in.schema().apply(c).dataType(), "test").as("ours"),
                        expr("unix_micros(CAST(" + c + " AS TIMESTAMP))").as("spark"));
                List<Row> rows = both.collectAsList();
                long nulls = rows.stream().filter(r -> r.isNullAt(1)).count();
                assertTrue(nulls > 50 && nulls < rows.size(), c);
                for (Row r : rows) {
                    assertEquals(r.get(1), r.get(0), c);
                }
            }
            // NTZ's are its own longs: no cast to TIMESTAMP (a java.time conversion per value) and unix_micros.
            String plan = ((org.apache.spark.sql.classic.Dataset<Row>) in.select(SparkColumns.micros(col("ntz"),
                    in.schema().apply("ntz").dataType(), "test"))).queryExecution().optimizedPlan().toString()
                    .toLowerCase(Locale.ROOT);
            assertTrue(plan.contains("static_invoke(java.lang.math.addexact(") && !plan.contains("unix_micros"), plan);
        } finally {
            spark.conf().set("spark.sql.session.timeZone", zone);
        }
    }
}
