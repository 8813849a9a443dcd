import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.storage.StorageLevel;

/**
 * Write throughput of format("safetensors") against Parquet of the same DataFrame, in one run.
 *
 * <p>Three cached inputs of the same F32 tensor bytes: {@code struct} (a key and a Tensor Struct
 * of 1 MiB per row whose data is the raw bytes), {@code array} (a key and an {@code array<float>}
 * of 262,144 values per row) and {@code small} (a key and an {@code array<float>} of 128 values per
 * row, 2,048 times as many rows). Each is written in the kv layout ({@code name_col=key}) and in the
 * batch layout ({@code batch_size=8}, 2048 for the small rows: 1 MiB batches), and as Parquet
 * (uncompressed, like safetensors) from the same cached DataFrame. Every repetition writes each case's safetensors and Parquet back to back, alternating
 * which goes first; the first repetition is a warm-up; the median of the rest is reported, with
 * the ratio safetensors throughput / Parquet throughput (= Parquet time / safetensors time).
 *
 * <p>Args: workDir GiB repeats resultDir [only the cases whose name contains this]
 */
public final class SparkWriteBench {
    static final int FLOATS = 1 << 18; // 1 MiB of F32 per row
    static final int SMALL_FLOATS = 128; // 512 bytes per row

    record Case(String name, String input, Map<String, String> options) {}

    public static void main(String[] args) throws Exception {
        Path work = Path.of(args[0]);
        double gib = Double.parseDouble(args[1]);
        int repeats = Integer.parseInt(args[2]);
        Path resultDir = Path.of(args[3]);
        String only = args.length > 4 ? args[4] : ""; // run only the cases whose name contains this
        int rows = (int) Math.round(gib * 1024);
        String loadBefore = Files.readString(Path.of("/proc/loadavg")).trim();

        SparkSession spark = SparkSession.builder().master("local[2]").appName("spark-write-bench")
                .config("spark.ui.enabled", "false")
                .config("spark.sql.parquet.compression.codec", "uncompressed")
                .config("spark.sql.warehouse.dir", work.resolve("warehouse").toString())
                .getOrCreate();
        spark.sparkContext().setLogLevel("WARN");

        List<Case> cases = List.of(
                new Case("kv, Tensor Struct", "struct", Map.of("name_col", "key")),
                new Case("batch, Tensor Struct", "struct", Map.of("batch_size", "8", "columns", "t")),
                new Case("kv, array<float>", "array", Map.of("name_col", "key", "dtype", "F32")),
                new Case("batch, array<float>", "array", Map.of("batch_size", "8", "columns", "v", "dtype", "F32")),
                new Case("kv, array<float>[128]", "small", Map.of("name_col", "key")),
                new Case("batch, array<float>[128]", "small", Map.of("batch_size", "2048", "columns", "v")));
        cases = cases.stream().filter(c -> c.name.contains(only)).toList();
        // Row bytes differ per row (no constant pages); 4 partitions -> 2 tasks per core. Only the
        // inputs of the selected cases are built and cached.
        long smallRows = (long) rows * (FLOATS / SMALL_FLOATS);
        Map<String, Dataset<Row>> inputs = new LinkedHashMap<>();
        for (Case c : cases) {
            if (inputs.containsKey(c.input)) {
                continue;
            }
            Dataset<Row> df = switch (c.input) {
                case "struct" -> spark.range(0, rows, 1, 4).selectExpr("concat('k', id) as key",
                        "named_struct('data', cast(repeat(sha2(cast(id as string), 256), 16384) as binary), "
                                + "'shape', array(" + FLOATS + "), 'dtype', 'F32') as t");
                case "array" -> spark.range(0, rows, 1, 4).selectExpr("concat('k', id) as key",
                        "transform(sequence(0, " + (FLOATS - 1) + "), i -> cast(id * 7 + i as float)) as v");
                // The same tensor bytes as 512-byte rows (128 floats, an embedding's size).
                default -> spark.range(0, smallRows, 1, 4).selectExpr("concat('k', id) as key",
                        "transform(sequence(0, " + (SMALL_FLOATS - 1) + "), i -> cast(id * 7 + i as float)) as v");
            };
            df.persist(StorageLevel.MEMORY_ONLY());
            check(df.count() == (c.input.equals("small") ? smallRows : rows), "cached input " + c.input);
            inputs.put(c.input, df);
        }
        long tensorBytes = (long) rows * FLOATS * 4;
        Map<Case, double[][]> times = new LinkedHashMap<>();
        Map<Case, long[]> sizes = new LinkedHashMap<>();
        for (Case c : cases) {
            times.put(c, new double[2][repeats]);
        }
        for (int r = 0; r <= repeats; r++) {
            for (Case c : cases) {
                Dataset<Row> df = inputs.get(c.input);
                Path st = work.resolve("st");
                Path pq = work.resolve("pq");
                // Each write starts from an empty path (deleting is not timed): the same work for both.
                deleteTree(st);
                deleteTree(pq);
                double tSt;
                double tPq;
                if (r % 2 == 0) {
                    tSt = time(() -> df.write().format("safetensors").options(c.options).mode("overwrite")
                            .save(st.toString()));
                    tPq = time(() -> df.write().mode("overwrite").parquet(pq.toString()));
                } else {
                    tPq = time(() -> df.write().mode("overwrite").parquet(pq.toString()));
                    tSt = time(() -> df.write().format("safetensors").options(c.options).mode("overwrite")
                            .save(st.toString()));
                }
                sizes.put(c, new long[] {bytes(st, ".safetensors"), bytes(pq, ".parquet")});
                check(sizes.get(c)[0] >= tensorBytes, c.name + ": safetensors wrote " + sizes.get(c)[0] + " bytes");
                System.out.printf(Locale.ROOT, "rep %d%s %-22s safetensors %.3f s  parquet %.3f s%n", r,
                        r == 0 ? " (warm-up)" : "", c.name, tSt, tPq);
                if (r > 0) {
                    times.get(c)[0][r - 1] = tSt;
                    times.get(c)[1][r - 1] = tPq;
                }
            }
        }
        String loadAfter = Files.readString(Path.of("/proc/loadavg")).trim();

        StringBuilder md = new StringBuilder();
        StringBuilder json = new StringBuilder("{\"cases\": [");
        md.append("| case | safetensors (s) | Parquet (s) | GB/s safetensors / Parquet | safetensors / Parquet throughput |\n");
        md.append("|---|---|---|---|---|\n");
        for (Case c : cases) {
            double st = median(times.get(c)[0]);
            double pq = median(times.get(c)[1]);
            md.append(String.format(Locale.ROOT, "| %s | %.3f | %.3f | %.2f / %.2f | **%.2fx** |%n", c.name, st, pq,
                    tensorBytes / st / 1e9, tensorBytes / pq / 1e9, pq / st));
            json.append(json.charAt(json.length() - 1) == '[' ? "" : ", ").append(String.format(Locale.ROOT,
                    "{\"name\": \"%s\", \"safetensors_s\": %s, \"parquet_s\": %s, \"safetensors_bytes\": %d, "
                            + "\"parquet_bytes\": %d}", c.name, Arrays.toString(times.get(c)[0]),
                    Arrays.toString(times.get(c)[1]), sizes.get(c)[0], sizes.get(c)[1]));
        }
        json.append(String.format(Locale.ROOT, "], \"tensor_bytes\": %d, \"repeats\": %d, \"load_before\": \"%s\", "
                + "\"load_after\": \"%s\", \"spark\": \"%s\", \"java\": \"%s\", \"cores\": %d, \"when\": \"%s\"}%n",
                tensorBytes, repeats, loadBefore, loadAfter, spark.version(), System.getProperty("java.version"),
                Runtime.getRuntime().availableProcessors(), Instant.now()));
        Files.createDirectories(resultDir.resolve("raw"));
        Files.writeString(resultDir.resolve("raw/spark-write.json"), json.toString());
        Files.writeString(work.resolve("table.md"), md.toString());
        System.out.println(md);
        System.out.println("load average before: " + loadBefore + "; after: " + loadAfter);
        spark.stop();
        deleteTree(work.resolve("st"));
        deleteTree(work.resolve("pq"));
    }

    interface Action {
        void run() throws Exception;
    }

    static double time(Action a) throws Exception {
        long t0 = System.nanoTime();
        a.run();
        return (System.nanoTime() - t0) / 1e9;
    }

    static double median(double[] t) {
        double[] s = t.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }

    static long bytes(Path dir, String suffix) throws IOException {
        try (Stream<Path> s = Files.walk(dir)) {
            return s.filter(p -> p.toString().endsWith(suffix) && !p.toString().contains("_staging"))
                    .mapToLong(p -> p.toFile().length()).sum();
        }
    }

    static void deleteTree(Path dir) throws IOException {
        if (Files.exists(dir)) {
            try (Stream<Path> s = Files.walk(dir)) {
                s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    static void check(boolean ok, String what) {
        if (!ok) {
            throw new IllegalStateException("benchmark result is wrong: " + what);
        }
    }
}
