package io.github.semyonsinchenko.safetensors.preprocess;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.preprocess.embed.EmbedderSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Bad input fails early with a message naming what is wrong, and leaves an older database as it was. */
class FailureTest {

    @TempDir
    Path dataDir;

    private Path previous() throws IOException {
        Path old = dataDir.resolve("processed").resolve(Fixture.DATASET);
        Files.createDirectories(old);
        Files.writeString(old.resolve("metadata.json"), "older database");
        return old;
    }

    private void assertUntouched(Path old) throws IOException {
        assertEquals("older database", Files.readString(old.resolve("metadata.json")));
        try (var entries = Files.list(dataDir.resolve("processed"))) {
            assertEquals(List.of(old), entries.toList(), "no temporary directory left");
        }
    }

    private PreprocessException run() {
        return assertThrows(PreprocessException.class, () -> Preprocessor.run(SparkTestSession.get(), dataDir,
                Fixture.DATASET, Preprocessor.Options.defaults(EmbedderSpec.none()).withProgress(m -> { })));
    }

    @Test
    void aQuerySparkSqlCannotRunFailsBeforeAnyHeavyStage() throws IOException {
        Fixture.copyInput(dataDir);
        Path schema = dataDir.resolve("metadata").resolve(Fixture.DATASET + ".json");
        // DataFusion with normalization off is case-sensitive, and so are we: "id" is not "Id".
        Files.writeString(schema, Files.readString(schema).replace("SELECT Id, VoteTypeId", "SELECT id, VoteTypeId"));
        Path old = previous();
        PreprocessException e = run();
        assertTrue(e.getMessage().startsWith("task 'predict_vote_type': Spark SQL cannot run the query")
                && e.getMessage().contains("DataFusion") && e.getMessage().contains("FROM \"votes\""), e.getMessage());
        assertUntouched(old);
    }

    @Test
    void aMissingTableFileIsNamed() throws IOException {
        Fixture.copyInput(dataDir);
        Files.delete(dataDir.resolve("raw").resolve(Fixture.DATASET).resolve("comments.parquet"));
        Path old = previous();
        PreprocessException e = run();
        assertTrue(e.getMessage().contains("comments.parquet: missing") && e.getMessage().contains("'comments'"),
                e.getMessage());
        assertUntouched(old);
    }

    @Test
    void anUnreadableColumnTypeIsNamed() throws IOException {
        Fixture.copyInput(dataDir);
        Path schema = dataDir.resolve("metadata").resolve(Fixture.DATASET + ".json");
        // LastAccessDate is a timestamp in the Parquet file; as text Spark would format it unlike Arrow.
        String json = Files.readString(schema);
        int at = json.indexOf("\"LastAccessDate\"");
        json = json.substring(0, at) + json.substring(at).replaceFirst("\"timestamp\"", "\"text\"");
        Files.writeString(schema, json);
        PreprocessException e = run();
        assertTrue(e.getMessage().contains("table 'users', column 'LastAccessDate'")
                && e.getMessage().contains("Text") && e.getMessage().contains("timestamp"), e.getMessage());
    }

    @Test
    void aTaskQueryFailingAtRunTimeFailsTheBuildWithItsErrorAndLeavesTheOldDatabase() throws IOException {
        // Analysis passes in stage 1; the error is raised by the query's rows in stage 7, after
        // every other file of the build is written.
        Fixture.copyInput(dataDir);
        Path schema = dataDir.resolve("metadata").resolve(Fixture.DATASET + ".json");
        Files.writeString(schema, Files.readString(schema).replace("SELECT Id, VoteTypeId FROM",
                "SELECT Id, IF(Id > 0, raise_error('no votes today'), VoteTypeId) AS VoteTypeId FROM"));
        Path old = previous();
        Exception e = assertThrows(Exception.class, () -> Preprocessor.run(SparkTestSession.get(), dataDir,
                Fixture.DATASET, Preprocessor.Options.defaults(EmbedderSpec.none()).withProgress(m -> { })));
        Throwable cause = e;
        while (cause != null && (cause.getMessage() == null || !cause.getMessage().contains("no votes today"))) {
            cause = cause.getCause();
        }
        assertTrue(cause != null, () -> "the query's own error, not " + e);
        assertUntouched(old);
    }
}
