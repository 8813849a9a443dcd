package io.github.semyonsinchenko.safetensors.preprocess;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.preprocess.embed.EmbedderSpec;
import io.github.semyonsinchenko.safetensors.sampler.db.ColumnStats;
import io.github.semyonsinchenko.safetensors.sampler.db.Database;
import io.github.semyonsinchenko.safetensors.sampler.db.DatabaseLayout;
import io.github.semyonsinchenko.safetensors.sampler.db.DatabaseMetadata;
import io.github.semyonsinchenko.safetensors.sampler.db.SemanticType;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The generator's output (several Parquet files per table) through the preprocessor with the hashed embedder. */
class GeneratedDataTest {

    @TempDir
    Path dataDir;

    @Test
    void generatedDatasetBuildsADatabaseTheSamplerOpens() throws IOException {
        SparkSession spark = SparkTestSession.get();
        DataGenerator.Sizes sizes = DataGenerator.generate(spark, dataDir, "gen", 3_000, 7, 3);
        try (var files = Files.list(dataDir.resolve("raw/gen/posts.parquet"))) {
            assertEquals(3, files.filter(f -> f.toString().endsWith(".parquet")).count(), "three files per table");
        }
        DatabaseMetadata m = Preprocessor.run(spark, dataDir, "gen",
                Preprocessor.Options.defaults(EmbedderSpec.hashed()).withRowsPerPartition(250).withProgress(x -> { }));
        Path out = dataDir.resolve("processed/gen");
        try (Database db = Database.open(out)) { // validates every size and index
            assertEquals(sizes.total(), db.numRows());
            assertEquals(m, db.metadata());
            assertEquals(3, db.numTasks());
        }
        for (SemanticType t : SemanticType.values()) {
            assertTrue(m.columns().stream().anyMatch(c -> c.stype() == t), "the generator covers " + t);
        }
        // Nulls where the generator makes them; vocabularies filled by the hashed embedder.
        int location = 5;
        assertTrue(m.columnStats().get(location) instanceof ColumnStats.Categorical c && c.numNulls() > 0
                && c.categories().size() == 10);
        assertTrue(Files.size(out.resolve(DatabaseLayout.TEXT_EMBEDDINGS_FILE)) > 0);
        assertFalse(DatabaseFiles.allZero(Files.readAllBytes(out.resolve(DatabaseLayout.TEXT_EMBEDDINGS_FILE))));
        assertTranspose(DatabaseFiles.ints(Files.readAllBytes(out.resolve(DatabaseLayout.GRAPH_FILE))));
        try (var left = Files.list(dataDir.resolve("processed"))) {
            assertEquals(1, left.count(), "no temporary directories left next to the database");
        }
    }

    /** Incoming lists are the exact transpose of the outgoing ones, each in ascending source order. */
    static void assertTranspose(int[] g) {
        int n = g[0];
        int e = g[1];
        assertTrue(e > 0);
        int outPtr = 4;
        int outIdx = outPtr + n + 1;
        int inPtr = outIdx + e;
        int inIdx = inPtr + n + 1;
        Map<Long, Integer> edges = new HashMap<>();
        for (int r = 0; r < n; r++) {
            for (int k = g[outPtr + r]; k < g[outPtr + r + 1]; k++) {
                edges.merge(((long) r << 32) | g[outIdx + k], 1, Integer::sum);
            }
        }
        for (int d = 0; d < n; d++) {
            int previous = -1;
            for (int k = g[inPtr + d]; k < g[inPtr + d + 1]; k++) {
                int src = g[inIdx + k];
                assertTrue(src >= previous, "ascending sources");
                previous = src;
                edges.merge(((long) src << 32) | d, -1, Integer::sum);
            }
        }
        assertTrue(edges.values().stream().allMatch(c -> c == 0), "same edge multiset both ways");
        assertEquals(e, g[outPtr + n]);
        assertEquals(e, g[inPtr + n]);
    }
}
