package io.github.semyonsinchenko.safetensors.dataset;

import io.github.semyonsinchenko.safetensors.dataset.DatasetCommit.Operation;
import io.github.semyonsinchenko.safetensors.dataset.KvWriter.Row;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;

/**
 * A child process of the concurrency tests: one writer that commits {@code rounds} times to one
 * dataset, each commit one shard of {@code rows} rows keyed {@code w<writer>-r<round>-<i>} with the
 * values {@code [writer, round * 1000 + i]}, through the dataset module's commit (as a Spark job commit
 * would, without Spark). Each commit reports one line on stdout:
 * {@code ACK <round> <op> <version> <attempts>} or {@code FAIL <round> <op> <rule or class> <message>}.
 *
 * <p>args: root URI, writer id, rounds, rows per round, ops (a comma list cycled per round: append,
 * overwrite), then Hadoop settings {@code key=value}.
 */
public final class ConcurrentWriter {
    private ConcurrentWriter() {}

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        Path root = new Path(args[0]);
        int writer = Integer.parseInt(args[1]);
        int rounds = Integer.parseInt(args[2]);
        int rows = Integer.parseInt(args[3]);
        String[] ops = args[4].split(",");
        Map<String, String> settings = new HashMap<>();
        for (int i = 5; i < args.length; i++) {
            int eq = args[i].indexOf('=');
            settings.put(args[i].substring(0, eq), args[i].substring(eq + 1));
        }
        Configuration conf = HadoopConfs.of(settings);
        KvWriter kv = new KvWriter(conf, root, CommitPolicy.parse(settings), true);
        for (int round = 0; round < rounds; round++) {
            Operation op = ops[round % ops.length].equals("overwrite") ? Operation.OVERWRITE : Operation.APPEND;
            try {
                DatasetCommit.Committed done = kv.commit(op, List.of(rows(writer, round, rows)));
                out.println(String.format(Locale.ROOT, "ACK %d %s %d %d", round, op, done.version(), done.attempts()));
            } catch (DatasetException e) {
                out.println(String.format(Locale.ROOT, "FAIL %d %s %s %s", round, op, e.rule(),
                        e.getMessage().replace('\n', ' ')));
            }
        }
        System.exit(0);
    }

    /** The rows writer {@code writer} commits in {@code round}. */
    public static List<Row> rows(int writer, int round, int n) {
        List<Row> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(new Row(key(writer, round, i), writer, round * 1000 + i));
        }
        return out;
    }

    public static String key(int writer, int round, int i) {
        return "w" + writer + "-r" + round + "-" + i;
    }
}
