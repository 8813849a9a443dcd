package io.github.semyonsinchenko.safetensors.preprocess;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.preprocess.embed.EmbedderSpec;
import io.github.semyonsinchenko.safetensors.preprocess.input.InputSchema;
import io.github.semyonsinchenko.safetensors.preprocess.keys.PrimaryKeyMaps;
import io.github.semyonsinchenko.safetensors.preprocess.text.TextVocabulary;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.spark.SparkConf;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The speed settings a build applies only when the session has not set them, and restores; the
 * preprocessor's own settings read strictly.
 */
class SessionSettingsTest {

    private static final String COMPRESSED = "spark.sql.inMemoryColumnarStorage.compressed";

    @TempDir
    Path dataDir;

    @Test
    void unsetSpeedSettingsAreAppliedDuringTheBuildOnlyAndSetOnesAreKept() throws IOException {
        SparkSession spark = SparkTestSession.get();
        String partitions = spark.conf().get(Preprocessor.SHUFFLE_PARTITIONS);
        spark.conf().unset(Preprocessor.SHUFFLE_PARTITIONS);
        spark.conf().unset(COMPRESSED);
        try {
            List<String> progress = Fixture.buildAndCompare(spark, dataDir, 97);
            // 2000 rows at 97 per partition: 21, more than two per core of local[2].
            assertTrue(progress.stream().anyMatch(m -> m.contains("21 shuffle partitions (2000 rows, 2 cores)")),
                    progress::toString);
            assertFalse(spark.conf().contains(Preprocessor.SHUFFLE_PARTITIONS), "restored: unset again");
            assertFalse(spark.conf().contains(COMPRESSED), "restored: unset again");
        } finally {
            spark.conf().set(Preprocessor.SHUFFLE_PARTITIONS, partitions);
        }
        spark.conf().set(COMPRESSED, "true");
        try {
            List<String> progress = Fixture.buildAndCompare(spark, dataDir, 1_000_000);
            assertFalse(progress.stream().anyMatch(m -> m.contains("shuffle partitions")), progress::toString);
            assertEquals(partitions, spark.conf().get(Preprocessor.SHUFFLE_PARTITIONS), "the session's own value");
            assertEquals("true", spark.conf().get(COMPRESSED), "the session's own value");
        } finally {
            spark.conf().unset(COMPRESSED);
        }
    }

    @Test
    void shufflePartitionsGrowWithTheRowsAndNeverFallBelowTwoPerCore() {
        SparkSession spark = SparkTestSession.get(); // local[2]
        Preprocessor.Options options = Preprocessor.Options.defaults(EmbedderSpec.none());
        assertEquals(4, Preprocessor.shufflePartitions(spark, 0, options));
        assertEquals(4, Preprocessor.shufflePartitions(spark, 1_000_000, options));
        assertEquals(10, Preprocessor.shufflePartitions(spark, 5_000_000, options));
        assertEquals(11, Preprocessor.shufflePartitions(spark, 5_000_001, options));
    }

    @Test
    void theCommandLineTurnsTheWebUiOffUnlessSet() {
        assertEquals(Map.of("spark.ui.enabled", "false"), PreprocessMain.sessionDefaults(new SparkConf(false)));
        assertEquals(Map.of(), PreprocessMain.sessionDefaults(new SparkConf(false).set("spark.ui.enabled", "true")));
    }

    @Test
    void aMisspeltPreprocessorSettingIsRefusedBeforeAnyWorkNamingTheClosest() {
        SparkSession spark = SparkTestSession.get();
        String typo = "spark.safetensors.preprocess.broadcastTextCell";
        spark.conf().set(typo, "10");
        try {
            PreprocessException e = assertThrows(PreprocessException.class, () -> Preprocessor.build(spark,
                    new InputSchema("t", List.of(), List.of()), dataDir.resolve("raw"), dataDir.resolve("out"),
                    Preprocessor.Options.defaults(EmbedderSpec.none())));
            assertTrue(e.getMessage().contains("'" + typo + "'")
                    && e.getMessage().contains("did you mean '" + TextVocabulary.BROADCAST_CELLS_CONF + "'"),
                    e.getMessage());
            assertFalse(Files.exists(dataDir.resolve("out")), "nothing written");
        } finally {
            spark.conf().unset(typo);
        }
    }

    @Test
    void settingsAreWholeNumbersInTheirRangeWithUnderscoresAllowed() {
        SparkSession spark = SparkTestSession.get();
        spark.conf().set(PrimaryKeyMaps.ANCHOR_BYTES_CONF, "64_000_000");
        spark.conf().set(PrimaryKeyMaps.BROADCAST_LIMIT_CONF, "-1");
        try {
            PreprocessSettings settings = PreprocessSettings.of(spark);
            assertEquals(64_000_000L, settings.count(PrimaryKeyMaps.ANCHOR_BYTES_CONF, 1, 0, "bytes"));
            PreprocessException e = assertThrows(PreprocessException.class,
                    () -> settings.count(PrimaryKeyMaps.BROADCAST_LIMIT_CONF, 1, 0, "rows"));
            assertTrue(e.getMessage().contains(PrimaryKeyMaps.BROADCAST_LIMIT_CONF) && e.getMessage().contains("'-1'")
                    && e.getMessage().contains("a whole number of rows at least 0"), e.getMessage());
        } finally {
            spark.conf().unset(PrimaryKeyMaps.ANCHOR_BYTES_CONF);
            spark.conf().unset(PrimaryKeyMaps.BROADCAST_LIMIT_CONF);
        }
    }
}
