package io.github.semyonsinchenko.safetensors.preprocess;

import static org.apache.spark.sql.functions.col;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.preprocess.embed.EmbedderSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A table whose scan does not yield its rows in order takes the sort, and the output stays
 * headwater's; tables read from one file in order skip it.
 */
class RowOrderTest {

    @TempDir
    Path dataDir;

    @TempDir
    Path scratch;

    @Test
    void aScanOutOfRowOrderIsSortedAndTheOutputIsUnchanged() throws IOException {
        Fixture.copyInput(dataDir);
        SparkSession spark = SparkTestSession.get();
        Path posts = dataDir.resolve("raw").resolve(Fixture.DATASET).resolve("posts.parquet");
        Dataset<Row> rows = spark.read().parquet(posts.toString()).select(col("*"), col("_metadata.row_index").as("i"));
        // Two files in path order, the first small: Spark reads the larger first, so the scan is out of order.
        Path head = single(rows.where(col("i").lt(10)).drop("i"), scratch.resolve("head"));
        Path tail = single(rows.where(col("i").geq(10)).drop("i"), scratch.resolve("tail"));
        assertTrue(Files.size(tail) > Files.size(head));
        Files.delete(posts);
        Files.createDirectories(posts);
        Files.move(head, posts.resolve("part-0.parquet"));
        Files.move(tail, posts.resolve("part-1.parquet"));

        List<String> progress = new ArrayList<>();
        Preprocessor.run(spark, dataDir, Fixture.DATASET, Preprocessor.Options.defaults(EmbedderSpec.none())
                .withRowsPerPartition(97).withProgress(progress::add));

        DatabaseFiles.assertSameDatabase(Fixture.expectedDb(), dataDir.resolve("processed")
                .resolve(Fixture.DATASET), false);
        assertTrue(progress.stream().anyMatch(m -> m.contains("posts:") && m.contains("rows sorted")), progress::toString);
        assertTrue(progress.stream().anyMatch(m -> m.contains("users:") && m.contains("rows in scan order")),
                progress::toString);
    }

    /** Writes {@code df} as one Parquet file and returns it. */
    private static Path single(Dataset<Row> df, Path dir) throws IOException {
        df.coalesce(1).write().parquet(dir.toString());
        try (Stream<Path> files = Files.list(dir)) {
            List<Path> parts = files.filter(f -> f.getFileName().toString().endsWith(".parquet")).toList();
            assertEquals(1, parts.size());
            return parts.getFirst();
        }
    }
}
