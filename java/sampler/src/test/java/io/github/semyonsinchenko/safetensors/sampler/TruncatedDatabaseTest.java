package io.github.semyonsinchenko.safetensors.sampler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Every file of a database truncated under a running sampler, on 1, 2 and 4 threads: the consumer
 * gets the typed {@code MappedFileFaultException} naming the file (through the producer hand-off, a
 * {@link SamplerException} carrying it), and the JVM neither crashes nor leaves an {@code hs_err}
 * file. It used to be a bare {@code InternalError} from {@code SequenceWorker.build}. Each case runs
 * in a child JVM ({@link TruncatedDatabaseChild}) so that a crash fails the test, not the runner.
 */
class TruncatedDatabaseTest {
    /** Every file of the fixture database that is mapped. */
    static final List<String> FILES = List.of("graph.bin", "tables/comments.bin", "tables/posts.bin",
            "tables/users.bin", "tables/votes.bin", "tasks/predict_has_accepted_answer.bin",
            "tasks/predict_num_comments_30d.bin", "tasks/predict_vote_type.bin", "column_embeddings.bin",
            "categorical_embeddings.bin", "text_embeddings.bin");

    @TempDir
    Path dir;

    @ParameterizedTest(name = "{0} on {1} thread(s), truncated to {2}")
    @CsvSource({"sampler, 1, 0", "sampler, 2, half", "sampler, 4, 0", "stream, 1, half", "stream, 2, 0",
            "stream, 4, half"})
    void everyFileTruncatedUnderARunningSamplerIsTheTypedErrorNamingIt(String mode, int threads, String length)
            throws Exception {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx512m", "--enable-native-access=ALL-UNNAMED", "-XX:-CreateCoredumpOnCrash",
                "-XX:ErrorFile=" + dir.resolve("hs_err_%p.log"), "-cp", System.getProperty("java.class.path"),
                TruncatedDatabaseChild.class.getName(), dir.toString(), mode, Integer.toString(threads), length));
        cmd.addAll(FILES);
        File log = dir.resolve("child.log").toFile();
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).redirectOutput(log)
                .start();
        assertTrue(p.waitFor(5, TimeUnit.MINUTES), "the child JVM hung");
        String output = Files.readString(log.toPath(), StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), output);
        assertEquals(List.of(), crashReports(), output);
        assertTrue(output.contains("CHILD DONE"), output);
        for (String file : FILES) {
            String line = output.lines().filter(l -> l.startsWith("FILE " + file + " ")).findFirst().orElse("");
            String expected = mode.equals("sampler") ? "GOT SamplerException CAUSE MappedFileFaultException"
                    : "GOT MappedFileFaultException CAUSE SafetensorsException";
            assertTrue(line.contains(expected), file + ": " + line + "\n" + output);
            assertTrue(line.contains("SOURCE " + dir.resolve("round")) && line.contains(file + " MESSAGE "), line);
            String message = line.substring(line.indexOf(" MESSAGE "));
            assertTrue(message.contains(file), "the message names the file: " + line);
            assertTrue(message.matches(".*(bytes \\d+ to \\d+ are gone|byte \\d+ of the file).*"),
                    "the message names the byte: " + line);
        }
    }

    private List<Path> crashReports() throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(f -> f.getFileName().toString().startsWith("hs_err")).toList();
        }
    }
}
