package io.github.semyonsinchenko.safetensors.spark.read;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A reader keeps the version it resolved: a query planned on version 1 returns version 1's rows, by
 * full scan and through version 1's own index, after an append and an overwrite committed versions 2
 * and 3 (the default retention keeps version 1's files while version 2 names them).
 */
class ResolvedVersionTest extends SparkTestBase {
    @TempDir
    Path tmp;

    private void write(Path root, String mode, long from, long to) {
        spark.range(from, to, 1, 2).selectExpr("concat('k', id) as key", "array(cast(id as float)) as vec").write()
                .format("safetensors").mode(mode).option("name_col", "key").option("generate_index", "true")
                .save(root.toString());
    }

    private static List<String> keys(Dataset<Row> df) {
        return df.select("tensor_key").orderBy("tensor_key").as(Encoders.STRING()).collectAsList();
    }

    /** The keys a query planned before returns now (the same Dataset: its plan is not made again). */
    private static List<String> plannedKeys(Dataset<Row> planned) {
        return planned.collectAsList().stream().map(r -> r.getString(0)).sorted().toList();
    }

    @Test
    void aPlannedQueryReadsTheVersionItResolvedWhileOthersCommit() {
        Path root = tmp.resolve("ds");
        write(root, "errorifexists", 0, 4);
        Dataset<Row> read = spark.read().format("safetensors").option("inferSchema", "true").load(root.toString());
        Dataset<Row> all = read.select("tensor_key");
        Dataset<Row> some = read.where("tensor_key in ('k1', 'k5', 'k9')").select("tensor_key");
        all.queryExecution().executedPlan();
        some.queryExecution().executedPlan();

        write(root, "append", 4, 8);
        write(root, "overwrite", 8, 10);

        assertEquals(List.of("k0", "k1", "k2", "k3"), plannedKeys(all));
        assertEquals(List.of("k1"), plannedKeys(some), "through version 1's own index");
        Dataset<Row> now = spark.read().format("safetensors").option("inferSchema", "true").load(root.toString());
        assertEquals(List.of("k8", "k9"), keys(now));
        assertEquals(List.of("k9"), keys(now.where("tensor_key in ('k1', 'k5', 'k9')")));
    }
}
