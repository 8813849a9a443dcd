package io.github.semyonsinchenko.safetensors.dataset;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.dataset.DatasetCommit.Operation;
import io.github.semyonsinchenko.safetensors.loader.S3ProxyServer;
import io.github.semyonsinchenko.safetensors.testkit.MiniHdfs;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Concurrent writers in separate processes, on the local file system, HDFS (MiniDFSCluster) and S3
 * (s3proxy through S3A): every acknowledged append is in the dataset exactly once with its values,
 * nothing else is; with an overwriter among the appenders, every commit either succeeds or fails with
 * a {@link CommitConflictException}, and the final dataset is what the successful ones give applied
 * in their version order (a serial order). The figures go to stdout and
 * {@code target/concurrency-<file system>.txt}.
 */
class ConcurrentCommitTest {
    static final int WRITERS = 3;
    static final int ROUNDS = 5;
    static final int ROWS = 20;
    static final int SEED = 30;

    @TempDir
    java.nio.file.Path tmp;

    /** One commit of one child, as it reported it. */
    record Outcome(int writer, int round, Operation op, boolean acked, long version, int attempts, String rule) {}

    /** Figures of one run, for the report. */
    record Figures(String fs, int writers, int rounds, int acked, int failed, int retries, long rowsExpected,
                   long rowsFound, double seconds) {
        @Override
        public String toString() {
            return String.format(Locale.ROOT, "%-6s writers %d x rounds %d: %d acknowledged, %d failed with a typed"
                    + " conflict, %d retries (lost claims rebased); rows expected %d, found %d; %.1f s", fs, writers,
                    rounds, acked, failed, retries, rowsExpected, rowsFound, seconds);
        }
    }

    /** Starts one child per entry of {@code opsPerWriter} at once and returns what they reported. */
    private List<Outcome> runWriters(String root, List<String> opsPerWriter, Map<String, String> settings)
            throws Exception {
        List<Process> children = new ArrayList<>();
        List<java.nio.file.Path> logs = new ArrayList<>();
        for (int w = 0; w < opsPerWriter.size(); w++) {
            List<String> cmd = new ArrayList<>();
            cmd.add(java.nio.file.Path.of(System.getProperty("java.home"), "bin", "java").toString());
            for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
                if (!a.startsWith("-Xmx") && !a.startsWith("-agentlib") && !a.startsWith("-javaagent")) {
                    cmd.add(a);
                }
            }
            cmd.addAll(List.of("-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp",
                    System.getProperty("java.class.path"), ConcurrentWriter.class.getName(), root, Integer.toString(w),
                    Integer.toString(ROUNDS), Integer.toString(ROWS), opsPerWriter.get(w)));
            settings.forEach((k, v) -> cmd.add(k + "=" + v));
            java.nio.file.Path log = tmp.resolve("writer-" + w + ".log");
            logs.add(log);
            children.add(new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start());
        }
        List<Outcome> out = new ArrayList<>();
        for (int w = 0; w < children.size(); w++) {
            Process p = children.get(w);
            if (!p.waitFor(240, TimeUnit.SECONDS)) {
                children.forEach(Process::destroyForcibly);
                throw new AssertionError("writer " + w + " did not finish in 240 s:\n" + Files.readString(logs.get(w)));
            }
            String log = Files.readString(logs.get(w));
            assertEquals(0, p.exitValue(), "writer " + w + ":\n" + log);
            for (String line : log.split("\n")) {
                String[] f = line.split(" ", 6);
                if (f[0].equals("ACK")) {
                    out.add(new Outcome(w, Integer.parseInt(f[1]), Operation.valueOf(f[2]), true, Long.parseLong(f[3]),
                            Integer.parseInt(f[4]), null));
                } else if (f[0].equals("FAIL")) {
                    out.add(new Outcome(w, Integer.parseInt(f[1]), Operation.valueOf(f[2]), false, -1, 0,
                            f[3] + (f.length > 4 ? " " + f[4] + (f.length > 5 ? " " + f[5] : "") : "")));
                }
            }
            assertEquals(ROUNDS, out.stream().filter(o -> o.writer() == children.indexOf(p)).count(),
                    "writer " + w + " reported every round:\n" + log);
        }
        return out;
    }

    /** The keys and values a child commits in a round. */
    private static Map<String, float[]> rowsOf(Outcome o) {
        Map<String, float[]> out = new LinkedHashMap<>();
        for (KvWriter.Row r : ConcurrentWriter.rows(o.writer(), o.round(), ROWS)) {
            out.put(r.key(), new float[] {r.a(), r.b()});
        }
        return out;
    }

    private static Map<String, float[]> seedRows() {
        Map<String, float[]> out = new LinkedHashMap<>();
        for (KvWriter.Row r : DatasetCommitTest.rows("seed", SEED)) {
            out.put(r.key(), new float[] {r.a(), r.b()});
        }
        return out;
    }

    /**
     * Seeds the dataset, runs the writers, and checks that the final dataset is the seed followed by
     * the acknowledged commits applied in their version order, each version made by exactly one of them.
     */
    private Figures run(String fsName, Configuration conf, Path root, Map<String, String> settings,
                        List<String> opsPerWriter) throws Exception {
        new KvWriter(conf, root, CommitPolicy.parse(settings), true).commit(Operation.CREATE,
                List.of(DatasetCommitTest.rows("seed", SEED)));
        long started = System.nanoTime();
        List<Outcome> outcomes = runWriters(root.toString(), opsPerWriter, settings);
        double seconds = (System.nanoTime() - started) / 1e9;

        TreeMap<Long, Outcome> byVersion = new TreeMap<>();
        int failed = 0;
        int retries = 0;
        for (Outcome o : outcomes) {
            if (o.acked()) {
                Outcome before = byVersion.put(o.version(), o);
                assertTrue(before == null, "version " + o.version() + " acknowledged twice: " + before + ", " + o);
                retries += o.attempts() - 1;
            } else {
                failed++;
                assertTrue(o.rule().startsWith("COMMIT_CONFLICT "), "a failed commit fails with the typed conflict: "
                        + o);
            }
        }
        long newest = DatasetVersions.latest(root.getFileSystem(conf), root).version();
        assertEquals(1 + byVersion.size(), newest, "every version after the seed is one acknowledged commit");
        assertEquals(List.copyOf(byVersion.keySet()), java.util.stream.LongStream.rangeClosed(2, newest).boxed()
                .toList());

        // Replay the acknowledged commits in version order: the serial order the dataset must equal.
        Map<String, float[]> expected = seedRows();
        for (Outcome o : byVersion.values()) {
            if (o.op() == Operation.OVERWRITE) {
                expected.clear();
            }
            expected.putAll(rowsOf(o));
        }
        Map<String, float[]> found = KvWriter.read(conf, root);
        assertEquals(new TreeSet<>(expected.keySet()), new TreeSet<>(found.keySet()));
        for (Map.Entry<String, float[]> e : expected.entrySet()) {
            float[] v = found.get(e.getKey());
            assertTrue(v[0] == e.getValue()[0] && v[1] == e.getValue()[1], e.getKey() + ": values");
        }
        // The index of the newest version agrees with its shards.
        Manifest m = Manifest.read(root.getFileSystem(conf), root);
        assertEquals(found.size(), TensorIndexFile.of(root.getFileSystem(conf), conf, root, m).size());
        assertTrue(TensorIndexFile.filesHoldingKeys(root.getFileSystem(conf), conf, root, m,
                Set.copyOf(found.keySet())) != null, "the index passes its checks");

        Figures figures = new Figures(fsName, opsPerWriter.size(), ROUNDS, byVersion.size(), failed, retries,
                expected.size(), found.size(), seconds);
        System.out.println(figures);
        Files.writeString(java.nio.file.Path.of("target", "concurrency-" + fsName + ".txt"), figures + "\n",
                java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
        return figures;
    }

    private static List<String> appenders() {
        return java.util.Collections.nCopies(WRITERS, "append");
    }

    private static Map<String, String> settings(Map<String, String> fs) {
        Map<String, String> s = new HashMap<>(fs);
        s.put(CommitPolicy.COMMIT_ATTEMPTS, "100");
        return s;
    }

    @Test
    void appendersInSeparateProcessesOnTheLocalFileSystemLoseNothing() throws Exception {
        Path root = new Path(tmp.resolve("local").toUri());
        Figures f = run("local", HadoopConfs.of(Map.of()), root, settings(Map.of()), appenders());
        assertEquals(WRITERS * ROUNDS, f.acked(), "appends on top of appends all commit");
        assertEquals(0, f.failed());
        assertEquals(SEED + WRITERS * ROUNDS * ROWS, f.rowsFound());
    }

    @Test
    void anOverwriterAmongAppendersGivesASerialOrderOnTheLocalFileSystem() throws Exception {
        Path root = new Path(tmp.resolve("local-overwrite").toUri());
        Map<String, String> s = settings(Map.of(CommitPolicy.RETAIN_VERSIONS, "1000"));
        Figures f = run("local", HadoopConfs.of(Map.of()), root, s, List.of("append", "append",
                "overwrite,append"));
        assertTrue(f.acked() >= 2 * ROUNDS, f.toString());
    }

    @Test
    void appendersInSeparateProcessesOnHdfsLoseNothing() throws Exception {
        try (MiniHdfs hdfs = MiniHdfs.start(tmp.resolve("dfs"))) {
            Path root = new Path(hdfs.uri() + "/datasets/concurrent");
            Configuration conf = HadoopConfs.of(Map.of());
            Figures f = run("hdfs", conf, root, settings(Map.of()), appenders());
            assertEquals(WRITERS * ROUNDS, f.acked());
            assertEquals(SEED + WRITERS * ROUNDS * ROWS, f.rowsFound());
        }
    }

    @Test
    void appendersAndAnOverwriterInSeparateProcessesOnS3LoseNothing() throws Exception {
        try (S3ProxyServer s3 = S3ProxyServer.start(tmp.resolve("s3"), List.of("datasets"), Map.of())) {
            Map<String, String> s = settings(s3.s3aSettings());
            Configuration conf = HadoopConfs.of(s);
            Figures f = run("s3", conf, new Path("s3a://datasets/concurrent"), s, appenders());
            assertEquals(WRITERS * ROUNDS, f.acked());
            assertEquals(SEED + WRITERS * ROUNDS * ROWS, f.rowsFound());
            s.put(CommitPolicy.RETAIN_VERSIONS, "1000");
            Figures o = run("s3", conf, new Path("s3a://datasets/overwrite"), s, List.of("append", "append",
                    "overwrite,append"));
            assertTrue(o.acked() >= 2 * ROUNDS, o.toString());
        }
    }
}
