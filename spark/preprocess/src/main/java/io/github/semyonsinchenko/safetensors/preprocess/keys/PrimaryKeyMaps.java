package io.github.semyonsinchenko.safetensors.preprocess.keys;

import static io.github.semyonsinchenko.safetensors.preprocess.BuildContext.ROW;
import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.max;
import static org.apache.spark.sql.functions.max_by;

import io.github.semyonsinchenko.safetensors.preprocess.BuildContext;
import io.github.semyonsinchenko.safetensors.preprocess.PreprocessSettings;
import io.github.semyonsinchenko.safetensors.preprocess.input.InputSchema;
import io.github.semyonsinchenko.safetensors.preprocess.input.LoadedTable;
import io.github.semyonsinchenko.safetensors.preprocess.partition.LongList;
import io.github.semyonsinchenko.safetensors.preprocess.stats.OrderedTable;
import io.github.semyonsinchenko.safetensors.preprocess.task.TaskWriter;
import io.github.semyonsinchenko.safetensors.sampler.db.DatabaseLayout;
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
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.RelationalGroupedDataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;

/**
 * Per table with a primary key, its map from key (i64) to global row: as a cached Dataset
 * ({@code pk}, {@code prow}, and with a temporal column {@code ptc}, the temporal value of row
 * {@code prow}), through which the graph's shuffled joins and the tasks above the bound resolve
 * keys; and, for tables of at most {@link #broadcastLimit} rows, as {@link KeyMap}s: the graph
 * broadcasts its FK targets' maps, the tasks their anchor tables' ({@link Anchor}). One job builds
 * both kinds. A table whose key map showed no duplicate key needs no aggregation for its Dataset.
 */
public final class PrimaryKeyMaps {
    /**
     * The session setting for the most rows a table may have for its key map to be collected and
     * broadcast; for a larger FK target the graph resolves its edges with shuffled joins instead,
     * and for a larger task anchor table its tasks join their anchors by a shuffle.
     */
    public static final String BROADCAST_LIMIT_CONF = "spark.safetensors.preprocess.broadcastKeyRows";
    /** About 50 MiB per map on the driver and as much again for its broadcast copy. */
    public static final long DEFAULT_BROADCAST_LIMIT = 4_000_000;
    /**
     * The session setting for the largest anchor map, in bytes ({@link #anchorBytes}), broadcast to
     * resolve a task's anchors.
     */
    public static final String ANCHOR_BYTES_CONF = "spark.safetensors.preprocess.taskBroadcastBytes";
    /** The default of {@link #ANCHOR_BYTES_CONF}. */
    public static final long DEFAULT_ANCHOR_BYTES = 512L << 20;

    private final BuildContext ctx;
    private final Map<String, Dataset<Row>> maps = new HashMap<>();
    /** Tables whose keys {@link #keyMaps} found each once: their key map is the table's own rows. */
    private final Set<String> uniqueKeys = new HashSet<>();
    /** By table index, the task anchors' maps once built (null: not an anchor, or above the bound). */
    private Anchor[] anchors;
    /** One broadcast per anchor table, shared by its tasks. */
    private final Map<Integer, Broadcast<Anchor>> broadcasts = new HashMap<>();

    /** The key maps of one build; built when a stage first asks. */
    public PrimaryKeyMaps(BuildContext ctx) {
        this.ctx = ctx;
    }

    /**
     * A task anchor table's key map and, when one of its tasks takes the observation time from the
     * anchor row, the temporal value of each row by its index within the table
     * ({@link DatabaseLayout#NO_OBSERVATION_TIME} for a null, which a task file writes for it anyway).
     */
    public record Anchor(KeyMap keys, long rowStart, long[] times) implements Serializable {
        /** The temporal value of global row {@code row}, a row {@link #keys} returned. */
        public long time(long row) {
            return times[(int) (row - rowStart)];
        }
    }

    /** Table {@code t}'s key map as a cached Dataset ({@code pk}, {@code prow}, and {@code ptc} with a temporal column). */
    public Dataset<Row> of(LoadedTable t) {
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

    /** The {@link #BROADCAST_LIMIT_CONF} bound. */
    public long broadcastLimit() {
        return PreprocessSettings.of(ctx.spark).count(BROADCAST_LIMIT_CONF, DEFAULT_BROADCAST_LIMIT, 0, "rows");
    }

    /** The {@link #ANCHOR_BYTES_CONF} bound. */
    long anchorBytesLimit() {
        return PreprocessSettings.of(ctx.spark).count(ANCHOR_BYTES_CONF, DEFAULT_ANCHOR_BYTES, 0, "bytes");
    }

    /**
     * The key maps of {@code targets} (each with a primary key and at most {@link #broadcastLimit}
     * rows), indexed by table index (null for other tables), from one job over their ordered rows.
     * The same job builds the task anchors' maps, kept for {@link #anchor}.
     */
    public KeyMap[] keyMaps(List<LoadedTable> tables, List<OrderedTable> ordered, boolean[] targets) {
        boolean[] wanted = targets.clone();
        int n = tables.size();
        Plan plan = anchors == null ? anchorPlan(tables) : new Plan(new boolean[n], new boolean[n]);
        for (int ti = 0; ti < wanted.length; ti++) {
            wanted[ti] |= plan.keys()[ti];
        }
        Built built = build(tables, ordered, wanted, plan.times());
        if (anchors == null) {
            keepAnchors(tables, plan, built);
        }
        KeyMap[] out = new KeyMap[tables.size()];
        for (int ti = 0; ti < out.length; ti++) {
            if (targets[ti]) {
                out[ti] = built.maps()[ti];
            }
        }
        return out;
    }

    /**
     * The broadcast anchor map of task anchor table {@code t}, built by {@link #keyMaps} or else
     * now (one job for every anchor table), broadcast once for all its tasks; null when the table
     * is above the bound ({@link #broadcastLimit} rows, {@link #ANCHOR_BYTES_CONF}).
     */
    public Broadcast<Anchor> anchor(LoadedTable t, List<LoadedTable> tables, List<OrderedTable> ordered) {
        if (anchors == null) {
            Plan plan = anchorPlan(tables);
            keepAnchors(tables, plan, build(tables, ordered, plan.keys(), plan.times()));
        }
        Anchor a = anchors[t.index()];
        if (a == null) {
            return null;
        }
        return broadcasts.computeIfAbsent(t.index(),
                i -> JavaSparkContext.fromSparkContext(ctx.spark.sparkContext()).broadcast(a));
    }

    /** Destroys the anchors' broadcasts and drops the maps once the tasks are written. */
    public void releaseAnchors() {
        for (Broadcast<Anchor> b : broadcasts.values()) {
            b.destroy();
        }
        broadcasts.clear();
        if (anchors != null) {
            Arrays.fill(anchors, null);
        }
    }

    /** Which tables the tasks anchor at and need maps for, and which of those need their rows' temporal values. */
    private record Plan(boolean[] keys, boolean[] times) {}

    private Plan anchorPlan(List<LoadedTable> tables) {
        boolean[] keys = new boolean[tables.size()];
        boolean[] times = new boolean[tables.size()];
        for (InputSchema.Task task : ctx.schema.tasks()) {
            int ti = ctx.schema.tableIndex(task.anchorTable());
            if (ti < 0 || !tables.get(ti).hasPk()) {
                continue; // the task fails in TaskWriter, naming the problem
            }
            keys[ti] = true;
            times[ti] |= task.observationTimeColumn() == null && tables.get(ti).hasTemporal();
        }
        long limit = broadcastLimit();
        long bytes = anchorBytesLimit();
        for (LoadedTable t : tables) {
            int ti = t.index();
            if (keys[ti] && (t.rows() > limit || anchorBytes(t.rows(), times[ti]) > bytes)) {
                keys[ti] = false;
                times[ti] = false;
            }
        }
        return new Plan(keys, times);
    }

    /** The bytes of an anchor map of a table of {@code rows} rows: the key map, and 8 per row for times. */
    static long anchorBytes(long rows, boolean times) {
        long map = KeyMap.bytes(rows);
        return map == Long.MAX_VALUE ? map : map + (times ? Long.BYTES * rows : 0);
    }

    private void keepAnchors(List<LoadedTable> tables, Plan plan, Built built) {
        anchors = new Anchor[tables.size()];
        List<String> sizes = new ArrayList<>();
        for (LoadedTable t : tables) {
            int ti = t.index();
            if (plan.keys()[ti]) {
                anchors[ti] = new Anchor(built.maps()[ti], t.rowStart(), built.times()[ti]);
                sizes.add(String.format(Locale.ROOT, "%s %d keys%s", t.schema().name(), built.maps()[ti].size(),
                        plan.times()[ti] ? " with row times" : ""));
            }
        }
        if (!sizes.isEmpty()) {
            ctx.info("task anchor key maps: " + String.join(", ", sizes));
        }
    }

    /** Key maps by table index, and by table index the rows' temporal values where asked for. */
    private record Built(KeyMap[] maps, long[][] times) {}

    /** The key maps of the {@code wanted} tables, with their rows' temporal values where {@code timed}: one job. */
    private Built build(List<LoadedTable> tables, List<OrderedTable> ordered, boolean[] wanted, boolean[] timed) {
        JavaRDD<KeyChunk> chunks = null;
        for (LoadedTable t : tables) {
            int ti = t.index();
            if (!wanted[ti]) {
                continue;
            }
            Column[] cols = timed[ti] ? new Column[] {col(ROW), col("__pk"), col("__tc")}
                    : new Column[] {col(ROW), col("__pk")};
            JavaRDD<KeyChunk> c = ordered.get(ti).rows().select(cols).queryExecution().toRdd().toJavaRDD()
                    .mapPartitions(new Chunks(ti, t.rowStart(), timed[ti]));
            chunks = chunks == null ? c : chunks.union(c);
        }
        KeyMap[] maps = new KeyMap[tables.size()];
        long[][] times = new long[tables.size()][];
        if (chunks == null) {
            return new Built(maps, times);
        }
        List<KeyChunk> all = new ArrayList<>(chunks.collect());
        long[] counts = new long[tables.size()];
        long[] minKey = new long[tables.size()];
        long[] maxKey = new long[tables.size()];
        Arrays.fill(minKey, Long.MAX_VALUE);
        Arrays.fill(maxKey, Long.MIN_VALUE);
        for (KeyChunk c : all) {
            int ti = c.table();
            counts[ti] += c.keys().length;
            for (long k : c.keys()) {
                minKey[ti] = Math.min(minKey[ti], k);
                maxKey[ti] = Math.max(maxKey[ti], k);
            }
        }
        for (LoadedTable t : tables) {
            if (wanted[t.index()]) {
                maps[t.index()] = KeyMap.forKeys(counts[t.index()], minKey[t.index()], maxKey[t.index()]);
            }
            if (timed[t.index()]) {
                times[t.index()] = new long[Math.toIntExact(t.rows())];
            }
        }
        for (int i = 0; i < all.size(); i++) {
            KeyChunk c = all.get(i);
            KeyMap m = maps[c.table()];
            for (int k = 0; k < c.keys().length; k++) {
                m.putLast(c.keys()[k], c.rows()[k]);
            }
            if (c.times() != null) {
                long[] t = times[c.table()];
                long rowStart = tables.get(c.table()).rowStart();
                for (int k = 0; k < c.rows().length; k++) {
                    t[(int) (c.rows()[k] - rowStart)] = c.times()[k];
                }
            }
            all.set(i, null); // the chunks' arrays go as the maps fill
        }
        for (LoadedTable t : tables) {
            if (maps[t.index()] != null && maps[t.index()].size() == counts[t.index()]) {
                uniqueKeys.add(t.schema().name());
            }
        }
        return new Built(maps, times);
    }

    /** A partition's non-null keys, their global rows and, when asked for, their rows' temporal values. */
    record KeyChunk(int table, long[] rows, long[] keys, long[] times) implements Serializable {}

    private record Chunks(int table, long rowStart, boolean timed)
            implements FlatMapFunction<Iterator<InternalRow>, KeyChunk> {
        @Override
        public Iterator<KeyChunk> call(Iterator<InternalRow> it) {
            LongList rows = new LongList();
            LongList keys = new LongList();
            LongList times = timed ? new LongList() : null;
            while (it.hasNext()) {
                InternalRow r = it.next();
                if (!r.isNullAt(1)) {
                    rows.add(r.getLong(0) + rowStart);
                    keys.add(r.getLong(1));
                    if (timed) {
                        times.add(r.isNullAt(2) ? DatabaseLayout.NO_OBSERVATION_TIME : r.getLong(2));
                    }
                }
            }
            return List.of(new KeyChunk(table, rows.toArray(), keys.toArray(), timed ? times.toArray() : null))
                    .iterator();
        }
    }
}
