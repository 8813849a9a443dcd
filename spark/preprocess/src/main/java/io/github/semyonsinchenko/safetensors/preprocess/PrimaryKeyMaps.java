package io.github.semyonsinchenko.safetensors.preprocess;

import static io.github.semyonsinchenko.safetensors.preprocess.BuildContext.ROW;
import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.max;
import static org.apache.spark.sql.functions.max_by;

import java.util.HashMap;
import java.util.Map;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.RelationalGroupedDataset;
import org.apache.spark.sql.Row;

/**
 * Per table with a primary key, its map from key (i64) to global row as a cached Dataset
 * ({@code pk}, {@code prow}, and with a temporal column {@code ptc}, the
 * temporal value of row {@code prow}); the graph resolves FKs and the tasks resolve anchors through it.
 */
final class PrimaryKeyMaps {
    private final BuildContext ctx;
    private final Map<String, Dataset<Row>> maps = new HashMap<>();

    PrimaryKeyMaps(BuildContext ctx) {
        this.ctx = ctx;
    }

    Dataset<Row> of(LoadedTable t) {
        // Duplicate keys: the last row wins, as in headwater's HashMap inserts; its temporal value
        // rides along (max_by keeps a hash aggregation), so tasks need no join for observation times.
        return maps.computeIfAbsent(t.schema().name(), name -> {
            Column prow = max(col(ROW).plus(t.rowStart())).as("prow");
            RelationalGroupedDataset keyed = t.df().where(col("__pk").isNotNull()).groupBy(col("__pk").as("pk"));
            return ctx.persist(t.hasTemporal() ? keyed.agg(prow, max_by(col("__tc"), col(ROW)).as("ptc"))
                    : keyed.agg(prow));
        });
    }
}
