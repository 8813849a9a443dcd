package io.github.semyonsinchenko.safetensors.preprocess.task;

import io.github.semyonsinchenko.safetensors.preprocess.keys.PrimaryKeyMaps;
import io.github.semyonsinchenko.safetensors.preprocess.partition.Parts;
import io.github.semyonsinchenko.safetensors.sampler.db.DatabaseLayout;
import io.github.semyonsinchenko.safetensors.sampler.db.SectionReader;
import io.github.semyonsinchenko.safetensors.sampler.db.SectionWriter;
import io.github.semyonsinchenko.safetensors.sampler.db.SemanticType;
import io.github.semyonsinchenko.safetensors.sampler.db.ValueEncoding;
import java.io.IOException;
import java.io.Serializable;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import org.apache.spark.api.java.function.Function2;
import org.apache.spark.api.java.function.VoidFunction;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * The two passes that write a task's parts (stage 7). The seed pass resolves the seeds' anchor
 * keys (unless a join did) and writes every section; a target whose encoding needs the target's
 * own statistics (z-scores, timestamp features) is written raw and encoded by the value pass, file
 * to file, once the driver has the statistics. So the seeds are computed once and never cached.
 */
final class TaskParts {
    private TaskParts() {}

    static final int ROWS = 0;
    static final int TIMES = 1;
    static final int VALID = 2;
    static final int VALUES = 3;

    /**
     * What the seed pass saw in one partition.
     *
     * @param first the first seed's position in the query result ({@code seq}), -1 when empty
     * @param last the last seed's position
     * @param nulls seeds without a target value
     * @param trues boolean targets that are true
     * @param falses boolean targets that are false
     * @param categories a categorical target's distinct values in first-seen order
     */
    record Piece(Parts.Info info, long first, long last, long nulls, long trues, long falses, String[] categories)
            implements Serializable {}

    /** One partition for the value pass. */
    record Pending(int partition, long rows) implements Serializable {}

    /**
     * The seed pass over rows (seq, key, obs, target) in query order. With {@code anchor}, column 1
     * is the anchor key, resolved here (a seed whose key is null or not in the map is dropped), and
     * with {@code anchorTime} the observation time is the anchor row's temporal value; without,
     * column 1 is the anchor row a join resolved (and obs its time where it applies). Raw values: a
     * numerical target's non-null f64 bits, a timestamp's non-null µs; a boolean target is final
     * already, and so is a categorical one: its vocabulary index by {@code categoryIndex} (0 for a
     * null or a value not in it). Fails if {@code seq} does not increase: the file would not be in
     * query order.
     */
    record SeedPartition(String task, SemanticType stype, String dir, Broadcast<PrimaryKeyMaps.Anchor> anchor,
            boolean anchorTime, HashMap<String, Integer> categoryIndex)
            implements Function2<Integer, Iterator<InternalRow>, Iterator<Piece>> {
        @Override
        public Iterator<Piece> call(Integer partition, Iterator<InternalRow> rows) throws IOException {
            PrimaryKeyMaps.Anchor map = anchor == null ? null : anchor.value();
            if (anchorTime && (map == null || map.times() == null)) {
                throw new IllegalStateException("task '" + task + "': observation times from an anchor map without them");
            }
            long n = 0;
            long first = -1;
            long last = -1;
            long nulls = 0;
            long trues = 0;
            long falses = 0;
            HashMap<UTF8String, Integer> local = new HashMap<>();
            List<String> seen = new ArrayList<>();
            try (Parts.Out out = new Parts.Out(dir, partition, 4)) {
                while (rows.hasNext()) {
                    InternalRow r = rows.next();
                    long prow;
                    long time;
                    if (map != null) {
                        prow = r.isNullAt(1) ? -1 : map.keys().get(r.getLong(1));
                        if (prow < 0) {
                            continue; // unresolved: no seed, as headwater
                        }
                        time = anchorTime ? map.time(prow) : r.isNullAt(2) ? DatabaseLayout.NO_OBSERVATION_TIME
                                : r.getLong(2);
                    } else {
                        prow = r.getLong(1);
                        time = r.isNullAt(2) ? DatabaseLayout.NO_OBSERVATION_TIME : r.getLong(2);
                    }
                    long seq = r.getLong(0);
                    if (n > 0 && seq <= last) {
                        throw new IllegalStateException(String.format(Locale.ROOT, "task '%s': seed %d follows seed %d"
                                + " in partition %d; the seeds are not in query order", task, seq, last, partition));
                    }
                    if (n == 0) {
                        first = seq;
                    }
                    last = seq;
                    out.section(ROWS).u32((int) prow);
                    out.section(TIMES).i64(time);
                    boolean valid = !r.isNullAt(3);
                    out.section(VALID).bit(valid);
                    if (!valid) {
                        nulls++;
                    }
                    SectionWriter values = out.section(VALUES);
                    switch (stype) {
                        case NUMERICAL -> {
                            if (valid) {
                                values.i64(Double.doubleToRawLongBits(r.getDouble(3)));
                            }
                        }
                        case TIMESTAMP -> {
                            if (valid) {
                                values.i64(r.getLong(3));
                            }
                        }
                        case BOOLEAN -> {
                            boolean b = valid && r.getBoolean(3);
                            values.bit(b);
                            if (b) {
                                trues++;
                            } else if (valid) {
                                falses++;
                            }
                        }
                        case CATEGORICAL -> {
                            int index = 0;
                            if (valid) {
                                UTF8String v = r.getUTF8String(3);
                                Integer known = local.get(v);
                                if (known == null) {
                                    String s = v.toString();
                                    seen.add(s);
                                    known = categoryIndex.getOrDefault(s, 0);
                                    local.put(v.clone(), known); // the row's bytes are reused by the next row
                                }
                                index = known;
                            }
                            values.u32(index);
                        }
                        default -> throw new IllegalStateException(stype.toString());
                    }
                    n++;
                }
                return List.of(new Piece(out.commit(n), first, last, nulls, trues, falses,
                        seen.toArray(String[]::new))).iterator();
            }
        }
    }

    /** The value pass for one partition: its raw target values to the encoded ones (section 0 of {@code outDir}). */
    record ValuePartition(SemanticType stype, double mean, double std, double tsMean, double tsStd, String dir,
            String outDir) implements VoidFunction<Pending> {
        @Override
        public void call(Pending p) throws IOException {
            Path in = Path.of(dir);
            float[] ts = new float[DatabaseLayout.TIMESTAMP_DIM];
            try (Parts.Out out = new Parts.Out(outDir, p.partition(), 1);
                    SectionReader valid = new SectionReader(Parts.partFile(in, VALID, p.partition()));
                    SectionReader values = new SectionReader(Parts.partFile(in, VALUES, p.partition()))) {
                SectionWriter s = out.section(0);
                for (long i = 0; i < p.rows(); i++) {
                    boolean v = valid.bit();
                    switch (stype) {
                        case NUMERICAL -> s.f32(v ? ValueEncoding.zScore(Double.longBitsToDouble(values.i64()), mean, std)
                                : 0f);
                        case TIMESTAMP -> {
                            if (v) {
                                ValueEncoding.timestampFeatures(values.i64(), tsMean, tsStd, ts, 0);
                            } else {
                                Arrays.fill(ts, 0f);
                            }
                            for (float f : ts) {
                                s.f32(f);
                            }
                        }
                        default -> throw new IllegalStateException(stype.toString());
                    }
                }
                out.commit(p.rows());
            }
        }
    }
}
