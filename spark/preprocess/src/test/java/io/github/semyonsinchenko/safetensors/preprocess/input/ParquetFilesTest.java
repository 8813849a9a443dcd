package io.github.semyonsinchenko.safetensors.preprocess.input;

import static org.apache.spark.sql.functions.col;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.preprocess.Fixture;
import io.github.semyonsinchenko.safetensors.preprocess.PreprocessException;
import io.github.semyonsinchenko.safetensors.preprocess.SparkTestSession;
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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Row counts per file come from the Parquet footers, under the names Spark gives
 * {@code _metadata.file_path}, even for names Spark must URL-encode; on the driver and, above
 * Spark's listing threshold, in a job.
 */
class ParquetFilesTest {

    @TempDir
    Path dir;

    @TempDir
    Path scratch;

    /** Writes {@code rows} as one Parquet file at {@code target}. */
    static void writeFile(SparkSession spark, Dataset<Row> rows, Path target, Path scratch) throws IOException {
        Path out = scratch.resolve("w" + System.nanoTime());
        rows.coalesce(1).write().parquet(out.toString());
        try (Stream<Path> files = Files.list(out)) {
            List<Path> parts = files.filter(f -> f.getFileName().toString().endsWith(".parquet")).toList();
            assertEquals(1, parts.size());
            Files.createDirectories(target.getParent());
            Files.move(parts.getFirst(), target);
        }
    }

    /** What the Spark job this replaced computed: rows per {@code _metadata.file_path}, in path order. */
    private static List<ParquetFiles.File> byScan(Dataset<Row> raw) {
        List<ParquetFiles.File> out = new ArrayList<>();
        for (Row r : raw.select(col("_metadata.file_path").as("f")).groupBy("f").count().collectAsList()) {
            out.add(new ParquetFiles.File(r.getString(0), r.getLong(1)));
        }
        out.sort(Comparator.comparing(ParquetFiles.File::path));
        return out;
    }

    private Path table(SparkSession spark) throws IOException {
        Path t = dir.resolve("t.parquet");
        String[] names = {"a b.parquet", "c%41.parquet", "d#e.parquet", "\u00e9 \u00fc.parquet", "z.parquet"};
        long[] counts = {3, 5, 1, 4, 0};
        long id = 0;
        for (int i = 0; i < names.length; i++) {
            writeFile(spark, spark.range(id, id + counts[i]).toDF(), t.resolve(names[i]), scratch);
            id += counts[i];
        }
        return t;
    }

    @Test
    void namesAreSparksFilePathsAndCountsComeFromTheFooters() throws IOException {
        SparkSession spark = SparkTestSession.get();
        Dataset<Row> raw = spark.read().parquet(table(spark).toString());
        List<ParquetFiles.File> expected = byScan(raw);
        assertEquals(4, expected.size(), expected::toString); // the empty file has no row to group
        assertTrue(expected.stream().anyMatch(f -> f.path().contains("%20")), expected::toString);
        assertEquals(expected, ParquetFiles.of(spark, raw, "table 't'"));
        spark.conf().set(ParquetFiles.DRIVER_FILES_CONF, "0"); // every file by the job
        try {
            assertEquals(expected, ParquetFiles.of(spark, raw, "table 't'"));
        } finally {
            spark.conf().unset(ParquetFiles.DRIVER_FILES_CONF);
        }
    }

    @Test
    void filesInPartitionDirectoriesAreListed() throws IOException {
        SparkSession spark = SparkTestSession.get();
        Path t = dir.resolve("p.parquet");
        writeFile(spark, spark.range(0, 6).toDF(), t.resolve("k=0").resolve("x #1.parquet"), scratch);
        writeFile(spark, spark.range(6, 8).toDF(), t.resolve("k=1").resolve("\u00fc.parquet"), scratch);
        Dataset<Row> raw = spark.read().parquet(t.toString());
        List<ParquetFiles.File> expected = byScan(raw);
        assertEquals(List.of(6L, 2L), expected.stream().map(ParquetFiles.File::rows).toList(), expected::toString);
        assertEquals(expected, ParquetFiles.of(spark, raw, "table 'p'"));
    }

    @Test
    void anUnreadableFooterNamesTheTableAndTheFile() throws IOException {
        SparkSession spark = SparkTestSession.get();
        Path t = table(spark);
        Dataset<Row> raw = spark.read().parquet(t.toString());
        Files.writeString(t.resolve("d#e.parquet"), "not Parquet"); // after the listing, as a concurrent writer might
        for (String driverFiles : new String[] {"32", "0"}) {
            spark.conf().set(ParquetFiles.DRIVER_FILES_CONF, driverFiles);
            try {
                PreprocessException e = assertThrows(PreprocessException.class,
                        () -> ParquetFiles.of(spark, raw, "table 't'"));
                assertTrue(e.getMessage().startsWith("table 't': ") && e.getMessage().contains("d#e.parquet")
                        && e.getMessage().contains("Parquet footer"), e.getMessage());
            } finally {
                spark.conf().unset(ParquetFiles.DRIVER_FILES_CONF);
            }
        }
    }

    @Test
    void aSingleFileGetsTheSchemaSparkInfersAndItsRowCount() throws IOException {
        SparkSession spark = SparkTestSession.get();
        List<Path> files = new ArrayList<>();
        try (Stream<Path> fixture = Files.list(Fixture.root().resolve("input").resolve("raw").resolve(Fixture.DATASET))) {
            files.addAll(fixture.sorted().toList()); // headwater's files: no Spark schema in their metadata
        }
        Path typed = dir.resolve("typed.parquet"); // Spark's own file, with its schema in the metadata
        writeFile(spark, spark.sql("SELECT id, CAST(id AS INT) AS i, id / 3.0D AS d, CAST(id AS STRING) AS s,"
                + " id % 2 = 0 AS b, timestamp_seconds(1577836800 + id) AS ts,"
                + " DATE'2020-01-01' + CAST(id AS INT) AS dt, CAST(id AS DECIMAL(12, 2)) AS dec,"
                + " IF(id = 1, NULL, id) AS n FROM range(5)"), typed, scratch);
        files.add(typed);
        for (Path f : files) {
            ParquetFiles.Input in = ParquetFiles.read(spark, f, "table 'x'");
            Dataset<Row> inferred = spark.read().parquet(f.toString());
            assertEquals(inferred.schema(), in.raw().schema(), f.toString());
            assertEquals(byScan(inferred), in.files(), f.toString());
        }
    }

    @Test
    void anUnreadableSingleFileNamesTheTable() throws IOException {
        Path bad = dir.resolve("bad.parquet");
        Files.writeString(bad, "not Parquet at all");
        PreprocessException e = assertThrows(PreprocessException.class,
                () -> ParquetFiles.read(SparkTestSession.get(), bad, "table 'bad'"));
        assertTrue(e.getMessage().startsWith("table 'bad': ") && e.getMessage().contains("bad.parquet")
                && e.getMessage().contains("Parquet footer"), e.getMessage());
    }
}
