package io.github.semyonsinchenko.safetensors.preprocess;

import static io.github.semyonsinchenko.safetensors.preprocess.BuildContext.ROW;
import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.max;
import static org.apache.spark.sql.functions.max_by;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.RelationalGroupedDataset;
import org.apache.spark.sql.Row;

/**
 * Per table with a primary key, its map from key (i64) to global row: as a cached Dataset
 * ({@code pk}, {@code prow}, and with a temporal column {@code ptc}, the
 * temporal value of row {@code prow}), through which the tasks resolve anchors; and, for tables of
 * at most {@link #broadcastLimit} rows, as {@link KeyMap}s the graph broadcasts. A table whose
 * key map showed no duplicate key needs no aggregation for its Dataset.
 */
final class PrimaryKeyMaps {
    /**
     * The session setting for the most rows a table may have for its key map to be collected and
     * broadcast; a larger FK target makes the graph resolve its edges with shuffled joins instead.
     */
    static final String BROADCAST_LIMIT_CONF = "spark.safetensors.preprocess.broadcastKeyRows";
    /** About 50 MiB per map on the driver and as much again for its broadcast copy. */
    static final long DEFAULT_BROADCAST_LIMIT = 4_000_000;

    private final BuildContext ctx;
    private final Map<String, Dataset<Row>> maps = new HashMap<>();
    /** Tables whose keys {@link #keyMaps} found each once: their key map is the table's own rows. */
    private final Set<String> uniqueKeys = new HashSet<>();

    PrimaryKeyMaps(BuildContext ctx) {
        this.ctx = ctx;
    }

    Dataset<Row> of(LoadedTable t) {
        // Duplicate keys: the last row wins, as in headwater's HashMap inserts; its temporal value
        // rides along (max_by keeps a hash aggregation), so tasks need no join for observation times.
        return maps.computeIfAbsent(t.schema().name(), name -> {
            if (uniqueKeys.contains(name)) { // no duplicate to drop: a projection of the scan, no aggregation
                Column[] cols = {col("__pk").as("pk"), col(ROW).plus(t.rowStart()).as("prow"), col("__tc").as("ptc")};
                return t.df().where(col("__pk").isNotNull()).select(t.hasTemporal() ? cols : Arrays.copyOf(cols, 2));
            }
            Column prow = max(col(ROW).plus(t.rowStart())).as("prow");
            RelationalGroupedDataset keyed = t.df().where(col("__pk").isNotNull()).groupBy(col("__pk").as("pk"));
            return ctx.persist(t.hasTemporal() ? keyed.agg(prow, max_by(col("__tc"), col(ROW)).as("ptc"))
                    : keyed.agg(prow));
        });
    }

    long broadcastLimit() {
        String v = ctx.spark.conf().get(BROADCAST_LIMIT_CONF, Long.toString(DEFAULT_BROADCAST_LIMIT));
        try {
            return Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new PreprocessException(String.format(Locale.ROOT, "%s must be a row count, was '%s'",
                    BROADCAST_LIMIT_CONF, v));
        }
    }

    /**
     * The key maps of {@code targets} (each with a primary key and at most {@link #broadcastLimit}
     * rows), indexed by table index (null for other tables), from one job over their ordered rows.
     */
    KeyMap[] keyMaps(List<LoadedTable> tables, List<OrderedTable> ordered, boolean[] targets) {
        JavaRDD<KeyChunk> chunks = null;
        for (LoadedTable t : tables) {
            if (!targets[t.index()]) {
                continue;
            }
            JavaRDD<KeyChunk> c = ordered.get(t.index()).rows().select(col(ROW), col("__pk")).javaRDD()
                    .mapPartitions(new Chunks(t.index(), t.rowStart()));
            chunks = chunks == null ? c : chunks.union(c);
        }
        KeyMap[] out = new KeyMap[tables.size()];
        if (chunks == null) {
            return out;
        }
        List<KeyChunk> all = new ArrayList<>(chunks.collect());
        long[] counts = new long[tables.size()];
        for (KeyChunk c : all) {
            counts[c.table()] += c.keys().length;
        }
        for (int ti = 0; ti < tables.size(); ti++) {
            if (targets[ti]) {
                out[ti] = new KeyMap(counts[ti]);
            }
        }
        for (int i = 0; i < all.size(); i++) {
            KeyChunk c = all.get(i);
            for (int k = 0; k < c.keys().length; k++) {
                out[c.table()].putLast(c.keys()[k], c.rows()[k]);
            }
            all.set(i, null); // the chunks' arrays go as the map fills
        }
        for (LoadedTable t : tables) {
            if (out[t.index()] != null && out[t.index()].size() == counts[t.index()]) {
                uniqueKeys.add(t.schema().name());
            }
        }
        return out;
    }

    /** A partition's non-null keys and their global rows. */
    record KeyChunk(int table, long[] rows, long[] keys) implements Serializable {}

    private record Chunks(int table, long rowStart) implements FlatMapFunction<Iterator<Row>, KeyChunk> {
        @Override
        public Iterator<KeyChunk> call(Iterator<Row> it) {
            StatChunks.LongList rows = new StatChunks.LongList();
            StatChunks.LongList keys = new StatChunks.LongList();
            while (it.hasNext()) {
                Row r = it.next();
                if (!r.isNullAt(1)) {
                    rows.add(r.getLong(0) + rowStart);
                    keys.add(r.getLong(1));
                }
            }
            return List.of(new KeyChunk(table, rows.toArray(), keys.toArray())).iterator();
        }
    }
}
