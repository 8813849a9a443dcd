package io.github.semyonsinchenko.safetensors.preprocess.input;

import static org.apache.spark.sql.functions.col;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.preprocess.DatabaseFiles;
import io.github.semyonsinchenko.safetensors.preprocess.Fixture;
import io.github.semyonsinchenko.safetensors.preprocess.Preprocessor;
import io.github.semyonsinchenko.safetensors.preprocess.SparkTestSession;
import io.github.semyonsinchenko.safetensors.preprocess.embed.EmbedderSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tables split into several files whose names Spark URL-encodes (a space, '%', '#', non-ASCII),
 * one of them in partition directories: rows are numbered in path order from the footers' row
 * counts, and the output stays headwater's, with footers read on the driver and by a job.
 */
class MultiFileInputTest {

    @TempDir
    Path dataDir;

    @TempDir
    Path scratch;

    @Test
    void encodedAndNestedFileNamesKeepTheRowOrder() throws IOException {
        Fixture.copyInput(dataDir);
        SparkSession spark = SparkTestSession.get();
        Path raw = dataDir.resolve("raw").resolve(Fixture.DATASET);
        // Each name sorts (as the URI Spark makes of it) where its rows belong.
        split(spark, raw.resolve("posts.parquet"), new long[] {7, 20},
                "part 0 #x.parquet", "part 1 %41.parquet", "part 2 \u00e9.parquet");
        split(spark, raw.resolve("users.parquet"), new long[] {5}, "k=0/u #1.parquet", "k=1/\u00fc v.parquet");
        spark.conf().set(ParquetFiles.DRIVER_FILES_CONF, "2"); // posts' three footers by a job, users' two on the driver
        List<String> progress = new ArrayList<>();
        try {
            Preprocessor.run(spark, dataDir, Fixture.DATASET, Preprocessor.Options.defaults(EmbedderSpec.none())
                    .withRowsPerPartition(97).withProgress(progress::add));
        } finally {
            spark.conf().unset(ParquetFiles.DRIVER_FILES_CONF);
        }
        DatabaseFiles.assertSameDatabase(Fixture.expectedDb(), dataDir.resolve("processed")
                .resolve(Fixture.DATASET), false);
        assertTrue(progress.stream().anyMatch(m -> m.contains("posts:") && m.contains("3 file(s)")), progress::toString);
        assertTrue(progress.stream().anyMatch(m -> m.contains("users:") && m.contains("2 file(s)")), progress::toString);
    }

    /** Replaces the one-file table {@code file} by a directory of files holding its rows cut at {@code cuts}. */
    private void split(SparkSession spark, Path file, long[] cuts, String... names) throws IOException {
        Dataset<Row> rows = spark.read().parquet(file.toString()).select(col("*"), col("_metadata.row_index").as("i"))
                .cache();
        rows.count(); // read before the file goes
        Files.delete(file);
        for (int k = 0; k < names.length; k++) {
            Dataset<Row> part = rows;
            if (k > 0) {
                part = part.where(col("i").geq(cuts[k - 1]));
            }
            if (k < cuts.length) {
                part = part.where(col("i").lt(cuts[k]));
            }
            ParquetFilesTest.writeFile(spark, part.orderBy("i").drop("i"), file.resolve(names[k]), scratch);
        }
        rows.unpersist();
    }
}
