package io.github.semyonsinchenko.safetensors.spark.write;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.dataset.CrashPoints;
import io.github.semyonsinchenko.safetensors.dataset.DatasetLayout;
import io.github.semyonsinchenko.safetensors.dataset.Manifest;
import java.io.File;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Crash-point matrix: for every SaveMode and every step of the write and commit, a child JVM
 * ({@link CrashChild}, driving the connector's task writers and job commit directly) writes
 * version 2 of a dataset and halts ({@link Runtime#halt}: no cleanup, no shutdown hooks) when it
 * reaches the step. Then this JVM checks that the path holds exactly
 * the old state (before the manifest replace) or exactly the new one (after it): the same rows and
 * values, by full read and by index pushdown, nothing else. Finally a later append must succeed and
 * its commit must remove every leftover of the crash.
 *
 * <p>Old state: overwrite and append start from version 1 (6 rows); errorifexists and ignore from
 * a path that holds only the staging directory of an earlier crashed job (no committed dataset:
 * reading it is an AnalysisException). Version 2 has 10 rows in two shards.
 */
class CrashPointMatrixTest {
    static final List<String> POINTS = List.of(CrashPoints.TASK_RUNNING, CrashPoints.TASK_STAGED,
            CrashPoints.COMMIT_START, CrashPoints.SHARD_RENAMED + ":1", CrashPoints.SHARD_RENAMED + ":2",
            CrashPoints.INDEX_WRITTEN, CrashPoints.BEFORE_CLAIM, CrashPoints.CLAIMED, CrashPoints.AFTER_MANIFEST,
            CrashPoints.INDEX_COPIED, CrashPoints.STAGING_REMOVED, CrashPoints.CLEANUP_DELETED);
    /** Points after which the new version is the committed one (the history entry is the commit point). */
    static final Set<String> COMMITTED = Set.of(CrashPoints.CLAIMED, CrashPoints.AFTER_MANIFEST,
            CrashPoints.INDEX_COPIED, CrashPoints.STAGING_REMOVED, CrashPoints.CLEANUP_DELETED);
    static final List<String> MODES = List.of("errorifexists", "ignore", "overwrite", "append");
    static final int V1_ROWS = 6;
    static final int V2_ROWS = 10;
    static final int V3_ROWS = 4;

    @TempDir
    static Path tmp;
    static SparkSession spark;
    static Path template;

    @BeforeAll
    static void start() {
        spark = SparkSession.builder().master("local[2]").appName("safetensors-crash-matrix")
                .config("spark.ui.enabled", "false")
                .config("spark.sql.shuffle.partitions", "2")
                .getOrCreate();
        spark.sparkContext().setLogLevel("ERROR");
        template = tmp.resolve("template-v1");
        CrashChild.writeWithSpark(spark, template.toString(), "errorifexists", 1, V1_ROWS, "1", "1d");
    }

    @AfterAll
    static void stop() {
        if (spark != null) {
            spark.stop();
            spark = null;
        }
    }

    @Test
    void everyCrashLeavesTheOldOrTheNewDatasetAndALaterCommitCleansUp() throws Exception {
        Map<String, Map<String, String>> matrix = new LinkedHashMap<>();
        long started = System.nanoTime();
        // Two children at a time: a child is one short-lived JVM, mostly starting up.
        ExecutorService pool = Executors.newFixedThreadPool(2);
        Map<String, Map<String, Future<String>>> futures = new LinkedHashMap<>();
        try {
            for (String point : POINTS) {
                for (String mode : MODES) {
                    futures.computeIfAbsent(point, p -> new LinkedHashMap<>())
                            .put(mode, pool.submit(() -> runCase("direct", point, mode)));
                }
            }
            for (var byPoint : futures.entrySet()) {
                for (var byMode : byPoint.getValue().entrySet()) {
                    try {
                        matrix.computeIfAbsent(byPoint.getKey(), p -> new LinkedHashMap<>())
                                .put(byMode.getKey(), byMode.getValue().get());
                    } catch (ExecutionException e) {
                        throw e.getCause() instanceof Error err ? err : new AssertionError(e.getCause());
                    }
                }
            }
        } finally {
            pool.shutdownNow();
        }
        StringBuilder table = new StringBuilder(String.format(Locale.ROOT, "%-24s", "crash point"));
        for (String m : MODES) {
            table.append(String.format(Locale.ROOT, " %-14s", m));
        }
        table.append('\n');
        matrix.forEach((p, row) -> {
            table.append(String.format(Locale.ROOT, "%-24s", p));
            row.values().forEach(v -> table.append(String.format(Locale.ROOT, " %-14s", v)));
            table.append('\n');
        });
        table.append(String.format(Locale.ROOT, "%d crashes in %.0f s%n", POINTS.size() * MODES.size(),
                (System.nanoTime() - started) / 1e9));
        System.out.print(table);
        Files.writeString(Path.of("target", "crash-matrix.txt"), table);
    }

    /**
     * The same through {@code df.write} in a real local Spark session in the child, for the crash
     * that lost data before (an overwrite between moving the shards and the manifest) and one in
     * a running task. Slower (a session per crash), so only these two.
     */
    @Test
    void crashesOfARealSparkWriteLeaveTheOldDataset() throws Exception {
        assertEquals("old", runCase("spark", CrashPoints.SHARD_RENAMED + ":1", "overwrite"));
        assertEquals("old", runCase("spark", CrashPoints.TASK_RUNNING, "append"));
    }

    /** Runs one crash and its checks; returns what the reader saw afterwards ("old" or "new"). */
    private String runCase(String driver, String point, String mode) throws Exception {
        String name = (driver + "-" + point + "-" + mode).replace(':', '_');
        Path root = tmp.resolve(name);
        boolean fromV1 = mode.equals("overwrite") || mode.equals("append");
        if (fromV1) {
            copyTree(template, root);
        } else {
            leaveCrashedStaging(root);
        }
        int status = child(driver, root.toString(), mode, point, tmp.resolve(name + ".log"));
        assertEquals(CrashPoints.EXIT_STATUS, status, name + ": the child did not halt at the crash point (status "
                + status + "); its log:\n" + tail(tmp.resolve(name + ".log")));

        boolean committed = COMMITTED.contains(point.replaceAll(":.*", ""));
        Set<String> old = fromV1 ? rows(1, V1_ROWS) : null;
        Set<String> expected;
        if (!committed) {
            expected = old;
        } else {
            expected = rows(2, V2_ROWS);
            if (mode.equals("append")) {
                expected.addAll(old);
            }
        }
        check(name, root, expected);

        // A later commit (orphans count as old at once here) must succeed and leave nothing behind.
        CrashChild.writeDirect(root.toString(), "append", 3, V3_ROWS, "0", "0s");
        Set<String> after = expected == null ? new TreeSet<>() : new TreeSet<>(expected);
        after.addAll(rows(3, V3_ROWS));
        check(name + " + append v3", root, after);
        assertOnlyCurrentFiles(name, root);
        return committed ? "new" : fromV1 ? "old" : "old (none)";
    }

    /** The dataset at root reads exactly {@code expected} (null: no committed dataset, an AnalysisException). */
    private void check(String name, Path root, Set<String> expected) {
        if (expected == null) {
            Exception e = assertThrows(Exception.class, () -> read(root), name + ": a path without a committed "
                    + "dataset must not read");
            assertTrue(e instanceof AnalysisException, name + ": " + e);
            return;
        }
        assertEquals(expected, read(root), name);
        // Index pushdown sees the same version: one key of each version, in one query.
        Set<String> keys = new TreeSet<>();
        for (Row r : spark.read().format("safetensors").option("inferSchema", "true").load(root.toString())
                .where("tensor_key in ('v1-3', 'v2-3', 'v3-3')").select("tensor_key").collectAsList()) {
            keys.add(r.getString(0));
        }
        Set<String> want = new TreeSet<>();
        for (String k : List.of("v1-3", "v2-3", "v3-3")) {
            if (expected.stream().anyMatch(r -> r.startsWith(k + "="))) {
                want.add(k);
            }
        }
        assertEquals(want, keys, name + ": keys found through the index");
    }

    private static Set<String> read(Path root) {
        Set<String> out = new TreeSet<>();
        for (Row r : spark.read().format("safetensors").option("inferSchema", "true").load(root.toString())
                .collectAsList()) {
            ByteBuffer b = ByteBuffer.wrap(r.getStruct(r.fieldIndex("vec")).getAs("data"))
                    .order(ByteOrder.LITTLE_ENDIAN);
            out.add(r.getString(r.fieldIndex("tensor_key")) + "=" + (int) b.getFloat() + "," + (int) b.getFloat());
        }
        return out;
    }

    static Set<String> rows(int version, int n) {
        Set<String> out = new TreeSet<>();
        for (int i = 0; i < n; i++) {
            out.add("v" + version + "-" + i + "=" + version + "," + i);
        }
        return out;
    }

    /** After a commit with retain_versions=0 and orphan_age=0: exactly the current manifest's files. */
    private static void assertOnlyCurrentFiles(String name, Path root) throws IOException {
        Configuration conf = new Configuration();
        conf.set("fs.file.impl", RawLocalFileSystem.class.getName());
        conf.setBoolean("fs.file.impl.disable.cache", true);
        org.apache.hadoop.fs.Path r = new org.apache.hadoop.fs.Path(root.toUri());
        Manifest m = Manifest.readFile(FileSystem.get(r.toUri(), conf), new org.apache.hadoop.fs.Path(r,
                DatasetLayout.MANIFEST));
        Set<String> want = currentFiles(m);
        Set<String> have = new TreeSet<>();
        try (Stream<Path> s = Files.walk(root)) {
            s.filter(Files::isRegularFile).forEach(p -> have.add(root.relativize(p).toString()));
        }
        assertEquals(want, have, name + ": leftovers after the next commit");
        assertFalse(Files.exists(root.resolve(DatasetLayout.STAGING)), name + ": staging left");
    }

    /** What a dataset holds after a commit that kept no earlier version and no orphan: its version's files. */
    static Set<String> currentFiles(Manifest m) {
        Set<String> want = new TreeSet<>(m.files());
        want.add(DatasetLayout.MANIFEST);
        want.add(DatasetLayout.HISTORY + "/" + DatasetLayout.historyName(m.version()));
        if (m.hasIndex()) {
            want.add(DatasetLayout.INDEX_FILE); // the copy for other tools
        }
        return want;
    }

    /** A path with no dataset but the staging directory of a job that crashed two days ago. */
    private static void leaveCrashedStaging(Path root) throws IOException {
        Path attempt = root.resolve(DatasetLayout.STAGING).resolve("crashed-job").resolve("attempt-00000-0");
        Files.createDirectories(attempt);
        Path shard = attempt.resolve(DatasetLayout.shardName(0, 0, UUID.randomUUID()));
        Files.write(shard, new byte[1024]);
        FileTime old = FileTime.fromMillis(System.currentTimeMillis() - TimeUnit.DAYS.toMillis(2));
        for (Path p : List.of(shard, attempt, attempt.getParent())) {
            Files.setLastModifiedTime(p, old);
        }
    }

    private static void copyTree(Path from, Path to) throws IOException {
        try (Stream<Path> s = Files.walk(from)) {
            for (Path p : (Iterable<Path>) s::iterator) {
                Path dst = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(dst);
                } else {
                    Files.copy(p, dst);
                }
            }
        }
    }

    /** Runs CrashChild in a new JVM with this JVM's flags and class path; returns its exit status. */
    static int child(String driver, String root, String mode, String point, Path log) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (!a.startsWith("-Xmx") && !a.startsWith("-agentlib") && !a.startsWith("-javaagent")) {
                cmd.add(a);
            }
        }
        cmd.add("-Xmx768m");
        cmd.add("-XX:TieredStopAtLevel=1"); // a short-lived JVM: C1 only, serial GC, starts faster
        cmd.add("-XX:+UseSerialGC");
        cmd.add("-D" + CrashPoints.PROPERTY + "=" + point);
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(CrashChild.class.getName());
        cmd.addAll(List.of(driver, root, mode, "2", Integer.toString(V2_ROWS), "0", "1h"));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        if (!p.waitFor(180, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("the child JVM did not finish in 180 s: " + tail(log));
        }
        return p.exitValue();
    }

    static String tail(Path log) throws IOException {
        List<String> lines = Files.readAllLines(log);
        return String.join(File.separator.equals("/") ? "\n" : "\r\n",
                lines.subList(Math.max(0, lines.size() - 40), lines.size()));
    }
}
