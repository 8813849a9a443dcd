package io.github.semyonsinchenko.safetensors.spark.write;

import java.util.Locale;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.core.config.Configurator;
import org.apache.spark.sql.SparkSession;

/**
 * A Spark application of {@link ConcurrentSparkAppsTest}: a local[2] session that appends
 * {@code rounds} times {@code rows} rows to one dataset with {@code df.write.mode("append")}, keys
 * {@code a<app>-r<round>-<i>}, vec {@code [app, round * 1000 + i]}. It prints {@code ACK <round>} per
 * acknowledged append; the commit's own log lines (a rebase after a lost race) go to its log.
 *
 * <p>args: root, app id, rounds, rows
 */
public final class SparkAppender {
    private SparkAppender() {}

    public static void main(String[] args) {
        String root = args[0];
        int app = Integer.parseInt(args[1]);
        int rounds = Integer.parseInt(args[2]);
        int rows = Integer.parseInt(args[3]);
        SparkSession spark = SparkSession.builder().master("local[2]").appName("safetensors-appender-" + app)
                .config("spark.ui.enabled", "false")
                .config("spark.sql.shuffle.partitions", "2")
                .getOrCreate();
        spark.sparkContext().setLogLevel("WARN");
        Configurator.setLevel("io.github.semyonsinchenko.safetensors.dataset.DatasetCommit", Level.INFO);
        for (int round = 0; round < rounds; round++) {
            spark.range(0, rows, 1, 2).selectExpr(
                    String.format(Locale.ROOT, "concat('a%d-r%d-', id) as key", app, round),
                    String.format(Locale.ROOT, "array(cast(%d as float), cast(%d * 1000 + id as float)) as vec", app,
                            round)).write().format("safetensors").mode("append").option("name_col", "key")
                    .option("generate_index", "true").option("commit_attempts", "100").save(root);
            System.out.println("ACK " + round);
        }
        spark.stop();
        System.exit(0);
    }
}
