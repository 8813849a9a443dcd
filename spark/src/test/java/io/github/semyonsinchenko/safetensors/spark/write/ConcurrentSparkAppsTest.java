package io.github.semyonsinchenko.safetensors.spark.write;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 28's first observation, as it was made: two Spark applications append to one local dataset at
 * the same time (here 5 rounds x 60 rows each on 300 seed rows). Before optimistic commits both
 * reported success every time and whole appends vanished; now every acknowledged append is read back
 * exactly once with its values.
 */
class ConcurrentSparkAppsTest {
    static final int APPS = 2;
    static final int ROUNDS = 5;
    static final int ROWS = 60;
    static final int SEED = 300;

    @TempDir
    Path tmp;

    @Test
    void twoSparkApplicationsAppendingAtOnceLoseNothing() throws Exception {
        Path root = tmp.resolve("ds");
        SparkSession spark = SparkSession.builder().master("local[2]").appName("safetensors-concurrent-apps")
                .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2").getOrCreate();
        try {
            spark.range(0, SEED, 1, 2).selectExpr("concat('seed-', id) as key", "array(-1f, cast(id as float)) as vec")
                    .write().format("safetensors").option("name_col", "key").option("generate_index", "true")
                    .save(root.toString());

            long started = System.nanoTime();
            List<Process> apps = new ArrayList<>();
            List<Path> logs = new ArrayList<>();
            for (int a = 0; a < APPS; a++) {
                List<String> cmd = new ArrayList<>();
                cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
                for (String arg : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
                    if (!arg.startsWith("-Xmx") && !arg.startsWith("-agentlib") && !arg.startsWith("-javaagent")) {
                        cmd.add(arg);
                    }
                }
                cmd.addAll(List.of("-Xmx1g", "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"),
                        SparkAppender.class.getName(), root.toString(), Integer.toString(a), Integer.toString(ROUNDS),
                        Integer.toString(ROWS)));
                Path log = tmp.resolve("app-" + a + ".log");
                logs.add(log);
                apps.add(new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start());
            }
            int acked = 0;
            int rebases = 0;
            for (int a = 0; a < APPS; a++) {
                if (!apps.get(a).waitFor(300, TimeUnit.SECONDS)) {
                    apps.forEach(Process::destroyForcibly);
                    throw new AssertionError("app " + a + " did not finish in 300 s");
                }
                String log = Files.readString(logs.get(a));
                assertEquals(0, apps.get(a).exitValue(), "app " + a + ":\n" + log);
                acked += (int) log.lines().filter(l -> l.startsWith("ACK ")).count();
                rebases += (int) log.lines().filter(l -> l.contains("rebasing this append")).count();
            }
            double seconds = (System.nanoTime() - started) / 1e9;
            assertEquals(APPS * ROUNDS, acked);

            Map<String, float[]> found = new HashMap<>();
            for (Row r : spark.read().format("safetensors").option("inferSchema", "true").load(root.toString())
                    .collectAsList()) {
                ByteBuffer b = ByteBuffer.wrap(r.getStruct(r.fieldIndex("vec")).getAs("data"))
                        .order(ByteOrder.LITTLE_ENDIAN);
                float[] prev = found.put(r.getString(r.fieldIndex("tensor_key")), new float[] {b.getFloat(),
                    b.getFloat()});
                assertTrue(prev == null, "a key read twice: " + r);
            }
            int expected = SEED + APPS * ROUNDS * ROWS;
            for (int a = 0; a < APPS; a++) {
                for (int round = 0; round < ROUNDS; round++) {
                    for (int i = 0; i < ROWS; i++) {
                        float[] v = found.get("a" + a + "-r" + round + "-" + i);
                        assertTrue(v != null && v[0] == a && v[1] == round * 1000 + i, "a" + a + "-r" + round + "-" + i);
                    }
                }
            }
            assertEquals(expected, found.size());
            assertEquals(1, spark.read().format("safetensors").option("inferSchema", "true").load(root.toString())
                    .where("tensor_key = 'a1-r4-59'").count(), "the index finds the last append");
            String figures = String.format(Locale.ROOT, "spark  apps %d x rounds %d: %d acknowledged appends, %d"
                    + " rebases after a lost race; rows expected %d, found %d; %.1f s", APPS, ROUNDS, acked, rebases,
                    expected, found.size(), seconds);
            System.out.println(figures);
            Files.writeString(Path.of("target", "concurrency-spark.txt"), figures + "\n");
        } finally {
            spark.stop();
        }
    }
}
