package io.github.semyonsinchenko.safetensors.preprocess;

import static io.github.semyonsinchenko.safetensors.preprocess.BuildContext.ROW;
import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.max;

import java.util.HashMap;
import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;

/**
 * Per table with a primary key, its map from key (i64) to global row as a cached Dataset
 * ({@code pk}, {@code prow}); the graph resolves FKs and the tasks resolve anchors through it.
 */
final class PrimaryKeyMaps {
    private final BuildContext ctx;
    private final Map<String, Dataset<Row>> maps = new HashMap<>();

    PrimaryKeyMaps(BuildContext ctx) {
        this.ctx = ctx;
    }

    Dataset<Row> of(LoadedTable t) {
        // Duplicate keys: the last row wins, as in headwater's HashMap inserts.
        return maps.computeIfAbsent(t.schema().name(), name -> ctx.persist(t.df().where(col("__pk").isNotNull())
                .groupBy(col("__pk").as("pk")).agg(max(col(ROW).plus(t.rowStart())).as("prow"))));
    }
}
