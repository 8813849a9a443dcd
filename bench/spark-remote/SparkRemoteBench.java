import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.crc32;
import static org.apache.spark.sql.functions.length;
import static org.apache.spark.sql.functions.sum;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.io.SafetensorsWriter;
import io.github.semyonsinchenko.safetensors.loader.S3ProxyServer;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.zip.CRC32;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.statistics.IOStatisticsSupport;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * Spark's remote read path on S3 (s3proxy with a fixed delay per request, S3A classic stream):
 * the selected tensors of each file fetched one request per tensor ({@code max_read_bytes=0}) vs
 * coalesced into few ranged reads (the defaults), for all tensors and for a pushed-down tenth of
 * them. GETs from S3A's IOStatistics; every run's byte count and CRC sum checked against the local
 * files.
 *
 * <p>Usage: {@code SparkRemoteBench <work dir> <files> <tensors per file> <latency ms> <repeats> <out md>};
 * run by bench/spark-remote/run.sh.
 */
public final class SparkRemoteBench {
    public static void main(String[] args) throws Exception {
        Path work = Files.createDirectories(Path.of(args[0]));
        int files = Integer.parseInt(args[1]);
        int tensors = Integer.parseInt(args[2]);
        int latencyMs = Integer.parseInt(args[3]);
        int repeats = Integer.parseInt(args[4]);
        Path outMd = Path.of(args[5]);
        String loadBefore = Files.readString(Path.of("/proc/loadavg")).trim();

        // Mixed sizes as in a checkpoint: 60% 4-64 KiB, 35% 64-256 KiB, 5% 1-2 MiB; keys t000, t001, ...
        Path local = Files.createDirectories(work.resolve("data"));
        SplittableRandom rnd = new SplittableRandom(20261123L);
        long[] all = new long[2];
        long[] tenth = new long[2];
        long fileBytes = 0;
        for (int f = 0; f < files; f++) {
            SafetensorsWriter w = new SafetensorsWriter().keepInsertionOrder(true);
            for (int i = 0; i < tensors; i++) {
                int p = rnd.nextInt(100);
                int n = p < 60 ? rnd.nextInt(4 << 10, 64 << 10) : p < 95 ? rnd.nextInt(64 << 10, 256 << 10)
                        : rnd.nextInt(1 << 20, 2 << 20);
                byte[] b = new byte[n];
                rnd.nextBytes(b);
                String key = String.format(Locale.ROOT, "t%03d", i);
                w.add(key, Dtype.U8, new long[] {n}, b);
                CRC32 crc = new CRC32();
                crc.update(b);
                all[0] += n;
                all[1] += crc.getValue();
                if (key.endsWith("0")) {
                    tenth[0] += n;
                    tenth[1] += crc.getValue();
                }
            }
            Path file = local.resolve(String.format(Locale.ROOT, "f%02d.safetensors", f));
            w.write(file);
            fileBytes += Files.size(file);
        }

        Map<String, String> latency = new LinkedHashMap<>();
        latency.put("s3proxy.latency-blobstore", "true");
        latency.put("s3proxy.latency-blobstore.*.latency", Integer.toString(latencyMs));
        Path s3dir = work.resolve("s3");
        deleteTree(s3dir);
        List<String> lines = new ArrayList<>();
        try (S3ProxyServer s3 = S3ProxyServer.start(s3dir, List.of("bench"), latency)) {
            SparkSession.Builder b = SparkSession.builder().master("local[2]").appName("spark-remote-bench")
                    .config("spark.ui.enabled", "false");
            s3.s3aSettings().forEach((k, v) -> b.config("spark.hadoop." + k, v));
            SparkSession spark = b.getOrCreate();
            spark.sparkContext().setLogLevel("WARN");
            FileSystem fs = FileSystem.get(URI.create("s3a://bench/"), spark.sparkContext().hadoopConfiguration());
            try (var list = Files.list(local)) {
                for (Path p : list.sorted().toList()) {
                    // create + copy, not copyFromLocalFile (that needs the async SDK client we leave out)
                    try (var out = fs.create(new org.apache.hadoop.fs.Path("s3a://bench/data/" + p.getFileName()))) {
                        Files.copy(p, out);
                    }
                }
            }
            String uri = "s3a://bench/data/";
            Map<String, Map<String, String>> variants = new LinkedHashMap<>();
            variants.put("per tensor (max_read_bytes=0)", Map.of("max_read_bytes", "0"));
            variants.put("coalesced (defaults)", Map.of());
            Map<String, long[]> selections = new LinkedHashMap<>();
            selections.put("all tensors", all);
            selections.put("a tenth (tensor_key ends with 0, pushed down)", tenth);
            run(spark, uri, variants.get("coalesced (defaults)"), null); // untimed warm-up
            Map<String, List<double[]>> results = new LinkedHashMap<>();
            for (int rep = 1; rep <= repeats; rep++) {
                for (var sel : selections.entrySet()) {
                    for (var v : variants.entrySet()) {
                        Map<String, Long> before = counters(fs);
                        long t0 = System.nanoTime();
                        Row r = run(spark, uri, v.getValue(), sel.getValue() == tenth ? "0" : null);
                        double secs = (System.nanoTime() - t0) / 1e9;
                        Map<String, Long> after = counters(fs);
                        if (r.getLong(0) != sel.getValue()[0] || r.getLong(1) != sel.getValue()[1]) {
                            throw new IllegalStateException(v.getKey() + " / " + sel.getKey() + ": read " + r
                                    + ", expected bytes " + sel.getValue()[0] + " crc sum " + sel.getValue()[1]);
                        }
                        long gets = delta(before, after, "action_http_get_request");
                        long heads = delta(before, after, "action_http_head_request");
                        results.computeIfAbsent(sel.getKey() + "|" + v.getKey(), k -> new ArrayList<>())
                                .add(new double[] {gets, heads, secs, sel.getValue()[0]});
                        System.out.printf(Locale.ROOT, "%-48s %-30s rep %d: %5d GETs %3d HEADs %7.2f s%n",
                                sel.getKey(), v.getKey(), rep, gets, heads, secs);
                    }
                }
            }
            spark.stop();
            String loadAfter = Files.readString(Path.of("/proc/loadavg")).trim();
            lines.add("# Spark remote reads: per-tensor vs coalesced ranged reads on S3 (s3proxy)");
            lines.add("");
            lines.add(String.format(Locale.ROOT, "%d files of %d tensors (%.1f MiB in all; mixed sizes: 60%% 4-64 KiB,"
                    + " 35%% 64-256 KiB, 5%% 1-2 MiB) on s3proxy 4.1.0 (filesystem backend, loopback) with %d ms added"
                    + " to every request, read by `format(\"safetensors\")` with `layout=kv` (one row per tensor)"
                    + " through S3A (classic input stream), `local[2]`; each query sums the length and CRC-32 of"
                    + " `tensor.data`, checked against the local files. GETs and HEADs are S3A's IOStatistics of the"
                    + " whole query (listing and schema inference included). Median of %d repeats, variants"
                    + " alternated; `bench/spark-remote/run.sh %d %d %d %d`.", files, tensors, fileBytes / 1048576.0,
                    latencyMs, repeats, files, tensors, latencyMs, repeats));
            lines.add("");
            lines.add("Machine: 2 cores, shared with other jobs while this ran (load average before: " + loadBefore
                    + "; after: " + loadAfter + "); seconds are noisy, request counts are not.");
            lines.add("");
            lines.add("| selection | variant | GET requests | HEAD | seconds | MB/s | × faster than per tensor | runs (s) |");
            lines.add("|---|---|---:|---:|---:|---:|---:|---|");
            for (String sel : selections.keySet()) {
                double base = 0;
                for (String v : variants.keySet()) {
                    List<double[]> rs = results.get(sel + "|" + v);
                    double med = median(rs.stream().mapToDouble(x -> x[2]).toArray());
                    if (base == 0) {
                        base = med;
                    }
                    StringBuilder runs = new StringBuilder();
                    for (double[] x : rs) {
                        runs.append(runs.isEmpty() ? "" : ", ").append(String.format(Locale.ROOT, "%.2f", x[2]));
                    }
                    lines.add(String.format(Locale.ROOT, "| %s | %s | %d | %d | %.2f | %.1f | %.1f | %s |", sel, v,
                            (long) rs.getFirst()[0], (long) rs.getFirst()[1], med, rs.getFirst()[3] / 1e6 / med,
                            base / med, runs));
                }
            }
            lines.add("");
            lines.add("*per tensor*: `max_read_bytes=0`, one ranged GET per selected tensor (the read path before"
                    + " coalescing); *coalesced*: the defaults (`coalesce_gap_bytes` 1 MiB, `max_read_bytes` 16 MiB),"
                    + " the selected tensors of a file grouped by the loader's `ReadCoalescing` into few GETs; a tenth"
                    + " of the tensors leaves gaps, some over 1 MiB, which split reads.");
        }
        Files.writeString(outMd, String.join("\n", lines) + "\n");
        System.out.println("==> " + outMd);
    }

    static Row run(SparkSession spark, String uri, Map<String, String> options, String keySuffix) {
        Dataset<Row> df = spark.read().format("safetensors").option("inferSchema", "true").option("layout", "kv")
                .options(options).load(uri);
        if (keySuffix != null) {
            df = df.where(col("tensor_key").endsWith(keySuffix));
        }
        return df.agg(sum(length(col("tensor.data"))).cast("long"), sum(crc32(col("tensor.data"))).cast("long"))
                .collectAsList().getFirst();
    }

    static double median(double[] xs) {
        double[] s = xs.clone();
        java.util.Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }

    static Map<String, Long> counters(FileSystem fs) {
        return new HashMap<>(IOStatisticsSupport.retrieveIOStatistics(fs).counters());
    }

    static long delta(Map<String, Long> before, Map<String, Long> after, String key) {
        return after.getOrDefault(key, 0L) - before.getOrDefault(key, 0L);
    }

    static void deleteTree(Path p) throws java.io.IOException {
        if (!Files.exists(p)) {
            return;
        }
        try (var walk = Files.walk(p)) {
            for (Path x : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(x);
            }
        }
    }
}
