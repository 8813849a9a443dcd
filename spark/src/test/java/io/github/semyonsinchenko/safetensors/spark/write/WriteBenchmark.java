package io.github.semyonsinchenko.safetensors.spark.write;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.storage.StorageLevel;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Write throughput: the same cached DataFrame of Tensor Structs (1 MiB of tensor bytes per row,
 * {@code bench.gib} GiB in total) written with format("safetensors") and as Parquet (the same
 * struct, so the tensor bytes are a binary column; uncompressed, like safetensors), in one run.
 * Off unless {@code -Dbench.spark.write=true}; see bench/spark-write.sh.
 */
@EnabledIfSystemProperty(named = "bench.spark.write", matches = "true")
class WriteBenchmark {

    @Test
    void safetensorsVersusParquet() throws Exception {
        int gib = Integer.getInteger("bench.gib", 1);
        int rounds = Integer.getInteger("bench.rounds", 3);
        int rows = gib * 1024;
        SparkSession spark = SparkSession.builder().master("local[2]").appName("safetensors-write-bench")
                .config("spark.ui.enabled", "false")
                .config("spark.sql.parquet.compression.codec", "uncompressed")
                .getOrCreate();
        Path dir = Files.createTempDirectory("st-write-bench");
        try {
            // 1 MiB per row: 262144 F32 values whose bytes differ per row (not a constant page).
            Dataset<Row> df = spark.range(0, rows, 1, 4).selectExpr("concat('k', id) as key",
                    "named_struct('data', cast(repeat(sha2(cast(id as string), 256), 16384) as binary), "
                            + "'shape', array(262144), 'dtype', 'F32') as t")
                    .persist(StorageLevel.MEMORY_ONLY());
            long bytes = (long) rows << 20;
            System.out.println("rows cached: " + df.count() + ", tensor bytes: " + bytes);
            List<double[]> results = new ArrayList<>();
            for (int r = 0; r < rounds + 1; r++) {
                double st = time(() -> df.write().format("safetensors").mode("overwrite").option("name_col", "key")
                        .save(dir.resolve("st").toString()));
                long stBytes = size(dir.resolve("st"));
                double pq = time(() -> df.write().mode("overwrite").parquet(dir.resolve("pq").toString()));
                long pqBytes = size(dir.resolve("pq"));
                System.out.printf("round %d%s: safetensors %.2f s (%d bytes on disk), parquet %.2f s (%d bytes)%n",
                        r, r == 0 ? " (warm-up)" : "", st, stBytes, pq, pqBytes);
                if (r > 0) {
                    results.add(new double[] {st, pq});
                }
            }
            double st = results.stream().mapToDouble(a -> a[0]).min().orElseThrow();
            double pq = results.stream().mapToDouble(a -> a[1]).min().orElseThrow();
            double gb = bytes / 1e9;
            System.out.printf("RESULT best of %d: safetensors %.3f GB/s, parquet %.3f GB/s, ratio %.2fx "
                    + "(%.2f GiB of tensor bytes, local[2], java %s)%n", rounds, gb / st, gb / pq, pq / st, bytes / (double) (1L << 30),
                    System.getProperty("java.version"));
        } finally {
            spark.stop();
            try (Stream<Path> s = Files.walk(dir)) {
                s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    private interface Action {
        void run() throws Exception;
    }

    private static double time(Action a) throws Exception {
        long t0 = System.nanoTime();
        a.run();
        return (System.nanoTime() - t0) / 1e9;
    }

    private static long size(Path dir) throws IOException {
        try (Stream<Path> s = Files.walk(dir)) {
            return s.filter(Files::isRegularFile).mapToLong(p -> p.toFile().length()).sum();
        }
    }
}
