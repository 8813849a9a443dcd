package io.github.semyonsinchenko.safetensors.preprocess;

import io.github.semyonsinchenko.safetensors.preprocess.embed.EmbedderSpec;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.SparkSession;

/** headwater's tiny fixture (test resources of the sampler module, put on our class path by the pom). */
public final class Fixture {
    private Fixture() {}

    public static final String DATASET = "synth-tiny";

    public static Path root() {
        try {
            Path schema = Path.of(Fixture.class.getResource("/headwater-tiny/input/metadata/synth-tiny.json").toURI());
            return schema.getParent().getParent().getParent();
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    public static Path expectedDb() {
        return root().resolve("expected/db");
    }

    /** Copies the fixture's input into {@code dataDir} in headwater's layout (metadata/, raw/). */
    public static void copyInput(Path dataDir) throws IOException {
        Path input = root().resolve("input");
        try (var walk = Files.walk(input)) {
            for (Path p : walk.toList()) {
                Path target = dataDir.resolve(input.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(p, target, StandardCopyOption.REPLACE_EXISTING);
                }
            }
        }
    }

    /**
     * Builds the fixture's input, copied into {@code dataDir}, without embeddings, checks the result
     * against headwater's output and returns the progress lines.
     */
    public static List<String> buildAndCompare(SparkSession spark, Path dataDir, long rowsPerPartition) throws IOException {
        copyInput(dataDir);
        List<String> progress = new ArrayList<>();
        Preprocessor.run(spark, dataDir, DATASET, Preprocessor.Options.defaults(EmbedderSpec.none())
                .withRowsPerPartition(rowsPerPartition).withProgress(progress::add));
        DatabaseFiles.assertSameDatabase(expectedDb(), dataDir.resolve("processed").resolve(DATASET), false);
        return progress;
    }
}
