package io.github.semyonsinchenko.safetensors.preprocess.stats;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.preprocess.Fixture;
import io.github.semyonsinchenko.safetensors.preprocess.PreprocessException;
import io.github.semyonsinchenko.safetensors.preprocess.Preprocessor;
import io.github.semyonsinchenko.safetensors.preprocess.SparkTestSession;
import io.github.semyonsinchenko.safetensors.preprocess.embed.EmbedderSpec;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Statistics values held on the driver (the tables within its budget, one job) or fetched per pass
 * from cached chunks (the others): every mix gives headwater's output.
 */
class StatisticsDriverTest {

    @TempDir
    Path dataDir;

    private static boolean reports(List<String> progress, String table, String what) {
        return progress.stream().anyMatch(m -> m.contains(table + ":") && m.contains(what));
    }

    @Test
    void everyTableOverTheBudgetIsFetchedPerPassWithTheSameOutput() throws IOException {
        SparkSession spark = SparkTestSession.get();
        spark.conf().set(ColumnStatistics.DRIVER_VALUES_CONF, "0");
        try {
            List<String> progress = Fixture.buildAndCompare(spark, dataDir, 97);
            for (String t : List.of("users", "posts", "comments", "votes")) {
                assertTrue(reports(progress, t, "statistics values fetched per pass"), progress::toString);
            }
        } finally {
            spark.conf().unset(ColumnStatistics.DRIVER_VALUES_CONF);
        }
    }

    @Test
    void heldAndFetchedTablesMixWithTheSameOutput() throws IOException {
        SparkSession spark = SparkTestSession.get();
        // users: 100 rows x 5 statistics columns, posts 350 x 4, comments 600 x 2: the first two
        // fit 2000 values (and stay held for the global timestamp pass), the others do not.
        spark.conf().set(ColumnStatistics.DRIVER_VALUES_CONF, "2000");
        try {
            List<String> progress = Fixture.buildAndCompare(spark, dataDir, 1_000_000);
            assertTrue(reports(progress, "users", "held on the driver"), progress::toString);
            assertTrue(reports(progress, "posts", "held on the driver"), progress::toString);
            assertTrue(reports(progress, "comments", "fetched per pass"), progress::toString);
            assertTrue(reports(progress, "votes", "fetched per pass"), progress::toString);
        } finally {
            spark.conf().unset(ColumnStatistics.DRIVER_VALUES_CONF);
        }
    }

    @Test
    void aBudgetThatIsNoNumberIsRefused() throws IOException {
        SparkSession spark = SparkTestSession.get();
        spark.conf().set(ColumnStatistics.DRIVER_VALUES_CONF, "lots");
        try {
            Fixture.copyInput(dataDir);
            PreprocessException e = assertThrows(PreprocessException.class, () -> Preprocessor.run(spark, dataDir,
                    Fixture.DATASET, Preprocessor.Options.defaults(EmbedderSpec.none()).withProgress(m -> { })));
            assertTrue(e.getMessage().contains(ColumnStatistics.DRIVER_VALUES_CONF) && e.getMessage().contains("lots"),
                    e.getMessage());
        } finally {
            spark.conf().unset(ColumnStatistics.DRIVER_VALUES_CONF);
        }
    }
}
