package io.github.semyonsinchenko.safetensors.bench;

import io.github.semyonsinchenko.safetensors.sampler.BatchBuilder;
import io.github.semyonsinchenko.safetensors.sampler.SamplerConfig;
import io.github.semyonsinchenko.safetensors.sampler.Split;
import io.github.semyonsinchenko.safetensors.sampler.db.Database;
import io.github.semyonsinchenko.safetensors.sampler.synth.SyntheticDatabase;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Sampler throughput (plain harness, not JMH: one batch takes tens to hundreds of milliseconds, so
 * per-batch timing is coarse enough). For B in {32, 128} and threads in {1, 2} at S = 1024 it
 * builds warm-up batches, then times a fixed number of train batches, recording wall-clock
 * samples/s, samples per CPU-second of the process, heap bytes allocated per batch (all threads)
 * and the load average. When {@code HEADWATER_BENCH_CMD} names a program, it runs that program on
 * the same database in the same run as the baseline:
 * {@code $HEADWATER_BENCH_CMD <db> <batch> <seq> <threads> <batches>} must print a line
 * {@code samples_per_s=<number>} (and may print {@code samples_per_cpu_s=<number>}). Without it the report says the baseline is absent.
 *
 * <p>Usage: {@code SamplerBench <db dir> <out.json> [rows-if-generating] [timed-batches-at-B32]}.
 * The database is generated (seed 1, random unit embeddings) when the directory does not exist.
 */
public final class SamplerBench {
    private SamplerBench() {}

    public static void main(String[] args) throws Exception {
        Path db = Path.of(args[0]);
        Path out = Path.of(args[1]);
        int rows = args.length > 2 ? Integer.parseInt(args[2]) : 2_000_000;
        int timedAt32 = args.length > 3 ? Integer.parseInt(args[3]) : 48;
        if (!Files.exists(db)) {
            long t0 = System.nanoTime();
            SyntheticDatabase.Summary s = SyntheticDatabase.generate(db, rows, 1, SyntheticDatabase.Embeddings.RANDOM_UNIT);
            System.out.printf(Locale.ROOT, "generated %s: %d rows, %d edges in %.1f s%n", db, s.rows(), s.edges(),
                    (System.nanoTime() - t0) / 1e9);
        }
        String headwater = System.getenv("HEADWATER_BENCH_CMD");
        List<String> records = new ArrayList<>();
        try (Database d = Database.open(db)) {
            System.out.printf(Locale.ROOT, "database: %d rows, %d edges, %d tasks%n", d.numRows(), d.graph().numEdges(),
                    d.numTasks());
            // JIT warm-up on the same code paths, so that the first configuration is not penalized.
            measure(d, 32, 1024, 2, 0, timedAt32);
            for (int batch : new int[] {32, 128}) {
                for (int threads : new int[] {1, 2}) {
                    int timed = Math.max(4, timedAt32 * 32 / batch);
                    records.add(measure(d, batch, 1024, threads, Math.max(3, timed / 4), timed));
                    if (headwater != null) {
                        records.add(runHeadwater(headwater, db, batch, 1024, threads, timed));
                    }
                }
            }
            String json = "{\n  \"database\": {\"rows\": " + d.numRows() + ", \"edges\": " + d.graph().numEdges()
                    + ", \"tasks\": " + d.numTasks() + "},\n  \"cpus\": " + Runtime.getRuntime().availableProcessors()
                    + ",\n  \"jvm\": \"" + Runtime.version() + "\",\n  \"headwater\": "
                    + (headwater == null ? "null" : "\"" + programName(headwater) + "\"")
                    + ",\n  \"results\": [\n    " + String.join(",\n    ", records) + "\n  ]\n}\n";
            Files.createDirectories(out.toAbsolutePath().getParent());
            Files.writeString(out, json);
        }
        if (headwater == null) {
            System.out.println("HEADWATER_BENCH_CMD is not set: no headwater baseline in this run");
        }
    }

    private static String measure(Database d, int batch, int seq, int threads, int warmup, int timed) {
        SamplerConfig config = SamplerConfig.builder().batchSize(batch).sequenceLength(seq).threads(threads).build();
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        try (BatchBuilder builder = new BatchBuilder(d, config)) {
            BatchBuilder.Stream stream = builder.stream(Split.TRAIN);
            for (int i = 0; i < warmup; i++) {
                stream.next().close();
            }
            double loadBefore = os.getSystemLoadAverage();
            long alloc0 = mx.getTotalThreadAllocatedBytes();
            long cpu0 = os.getProcessCpuTime();
            long t0 = System.nanoTime();
            for (int i = 0; i < timed; i++) {
                stream.next().close();
            }
            long wall = System.nanoTime() - t0;
            long cpu = os.getProcessCpuTime() - cpu0;
            long alloc = mx.getTotalThreadAllocatedBytes() - alloc0;
            double samples = (double) timed * batch;
            String r = String.format(Locale.ROOT,
                    "{\"impl\": \"java\", \"batch\": %d, \"seq\": %d, \"threads\": %d, \"batches\": %d,"
                            + " \"seconds\": %.3f, \"samples_per_s\": %.1f, \"samples_per_cpu_s\": %.1f,"
                            + " \"alloc_bytes_per_batch\": %d, \"buffers_created\": %d, \"load_before\": %.2f,"
                            + " \"load_after\": %.2f}",
                    batch, seq, threads, timed, wall / 1e9, samples / (wall / 1e9), samples / (cpu / 1e9),
                    alloc / timed, builder.buffersCreated(), loadBefore, os.getSystemLoadAverage());
            System.out.println(r);
            return r;
        }
    }

    /** The program's file name only: the report must not carry machine paths. */
    private static String programName(String cmd) {
        return Path.of(cmd.trim().split(" ")[0]).getFileName().toString().replace("\"", "'");
    }

    private static String number(double v) {
        return Double.isNaN(v) ? "null" : String.format(Locale.ROOT, "%.1f", v);
    }

    private static String runHeadwater(String cmd, Path db, int batch, int seq, int threads, int timed)
            throws IOException, InterruptedException {
        List<String> argv = new ArrayList<>(List.of(cmd.split(" ")));
        argv.addAll(List.of(db.toString(), Integer.toString(batch), Integer.toString(seq), Integer.toString(threads),
                Integer.toString(timed)));
        Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
        double rate = Double.NaN;
        double cpuRate = Double.NaN;
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = r.readLine()) != null; ) {
                if (line.startsWith("samples_per_s=")) {
                    rate = Double.parseDouble(line.substring("samples_per_s=".length()).trim());
                } else if (line.startsWith("samples_per_cpu_s=")) {
                    cpuRate = Double.parseDouble(line.substring("samples_per_cpu_s=".length()).trim());
                }
            }
        }
        int exit = p.waitFor();
        String rec = String.format(Locale.ROOT,
                "{\"impl\": \"headwater\", \"batch\": %d, \"seq\": %d, \"threads\": %d, \"batches\": %d,"
                        + " \"samples_per_s\": %s, \"samples_per_cpu_s\": %s, \"exit\": %d}",
                batch, seq, threads, timed, number(rate), number(cpuRate), exit);
        System.out.println(rec);
        return rec;
    }
}
