package io.github.semyonsinchenko.safetensors.spark.read;

import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** One local[2] session per test class. */
abstract class SparkTestBase {
    static SparkSession spark;

    @BeforeAll
    static void startSpark() {
        spark = SparkSession.builder()
                .master("local[2]")
                .appName("safetensors-read-test")
                .config("spark.ui.enabled", "false")
                .config("spark.sql.shuffle.partitions", "2")
                .config("spark.hadoop.fs." + CountingFileSystem.SCHEME + ".impl", CountingFileSystem.class.getName())
                .config("spark.sql.warehouse.dir", warehouse())
                .getOrCreate();
        spark.sparkContext().setLogLevel("WARN");
    }

    private static String warehouse() {
        try {
            return java.nio.file.Files.createTempDirectory("spark-warehouse").toString();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @AfterAll
    static void stopSpark() {
        if (spark != null) {
            spark.stop();
            spark = null;
        }
    }

    /** Rows as comparable strings (binary as hex), sorted. */
    static List<String> canonical(Dataset<Row> df) {
        List<String> out = new ArrayList<>();
        for (Row r : df.collectAsList()) {
            out.add(canonical(r));
        }
        out.sort(null);
        return out;
    }

    static String canonical(Object v) {
        if (v == null) {
            return "null";
        }
        if (v instanceof byte[] b) {
            return HexFormat.of().formatHex(b);
        }
        if (v instanceof Row r) {
            StringBuilder sb = new StringBuilder("{");
            for (int i = 0; i < r.length(); i++) {
                sb.append(i == 0 ? "" : ", ").append(canonical(r.get(i)));
            }
            return sb.append('}').toString();
        }
        if (v instanceof scala.collection.Seq<?> s) {
            return canonical(scala.jdk.javaapi.CollectionConverters.asJava(s));
        }
        if (v instanceof List<?> l) {
            StringBuilder sb = new StringBuilder("[");
            for (int i = 0; i < l.size(); i++) {
                sb.append(i == 0 ? "" : ", ").append(canonical(l.get(i)));
            }
            return sb.append(']').toString();
        }
        return v.toString();
    }
}
