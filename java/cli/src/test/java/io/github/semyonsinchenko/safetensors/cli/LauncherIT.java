package io.github.semyonsinchenko.safetensors.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.io.SafetensorsWriter;
import io.github.semyonsinchenko.safetensors.jdk.JdkFloor;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The command line as a newcomer types it: the packaged jar under an old default {@code java}, and
 * {@code bin/safetensors}, which finds a JDK 25 itself. Runs after packaging (failsafe).
 */
class LauncherIT {
    static final Path ROOT = Path.of(System.getProperty("safetensors.repo.root")).toAbsolutePath().normalize();
    static final Path JAR = Path.of(System.getProperty("safetensors.cli.jar"));
    static final Path WRAPPER = ROOT.resolve("bin/safetensors");
    static final Path CURRENT_JAVA = Path.of(System.getProperty("java.home"), "bin", "java");

    @TempDir
    static Path tmp;
    static Path model;

    record Run(int exit, String out, String err) {}

    @BeforeAll
    static void writeModel() throws IOException {
        model = tmp.resolve("model.safetensors");
        new SafetensorsWriter().add("embeddings.weight", Dtype.F32, new long[] {2, 2}, new float[] {1, 2, 3, 4})
                .write(model);
    }

    /** A JDK older than the floor among the usual install locations, e.g. a distribution's default 17. */
    static Optional<Path> oldJdk() throws IOException {
        Path jvms = Path.of("/usr/lib/jvm");
        if (!Files.isDirectory(jvms)) {
            return Optional.empty();
        }
        try (Stream<Path> homes = Files.list(jvms)) {
            return homes.filter(h -> Files.isExecutable(h.resolve("bin/java")))
                    .filter(h -> feature(h) > 0 && feature(h) < JdkFloor.MIN_JDK)
                    .sorted()
                    .findFirst();
        }
    }

    /** JAVA_VERSION from the JDK's release file ("17.0.9" -> 17, "1.8.0_392" -> 8), 0 if unknown. */
    static int feature(Path home) {
        try {
            for (String line : Files.readAllLines(home.resolve("release"))) {
                if (line.startsWith("JAVA_VERSION=")) {
                    return JdkFloor.feature(line.substring("JAVA_VERSION=".length()).replace("\"", ""));
                }
            }
        } catch (IOException e) {
            return 0;
        }
        return 0;
    }

    static Run run(Map<String, String> env, String... command) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(command);
        pb.environment().putAll(env);
        Path out = Files.createTempFile(tmp, "out", ".txt");
        Path err = Files.createTempFile(tmp, "err", ".txt");
        pb.redirectOutput(out.toFile()).redirectError(err.toFile());
        Process p = pb.start();
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "timed out: " + Arrays.toString(command));
        return new Run(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
                Files.readString(err, StandardCharsets.UTF_8));
    }

    static Path requireOldJdk() throws IOException {
        Optional<Path> old = oldJdk();
        Assumptions.assumeTrue(old.isPresent(), "no JDK older than " + JdkFloor.MIN_JDK + " under /usr/lib/jvm");
        return old.get();
    }

    @Test
    void anOldJavaPrintsOneLineNamingTheJdkAndWhereToFindIt() throws Exception {
        Path old = requireOldJdk();
        Run r = run(Map.of(), old.resolve("bin/java").toString(), "-jar", JAR.toString(), "inspect",
                model.toString());
        assertEquals(Launcher.EXIT_OLD_JVM, r.exit(), r.err());
        assertEquals("", r.out());
        List<String> lines = r.err().lines().toList();
        assertEquals(1, lines.size(), r.err());
        String line = lines.get(0);
        assertTrue(line.contains("JDK " + JdkFloor.MIN_JDK + " or newer"), line);
        assertTrue(line.contains("runs on Java " + feature(old)), line);
        assertTrue(line.contains("bin/java -jar") && line.contains("bin/safetensors") && line.contains("JAVA_HOME")
                && line.contains("/usr/lib/jvm"), line);
        assertTrue(!line.contains("UnsupportedClassVersionError") && !line.contains("Exception"), line);
    }

    @Test
    void theSameJarOnJdk25RunsTheCommand() throws Exception {
        Run r = run(Map.of(), CURRENT_JAVA.toString(), "-jar", JAR.toString(), "inspect", model.toString());
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().contains("embeddings.weight"), r.out());
    }

    @Test
    void theLauncherPassesTheCliExitCodeThrough() throws Exception {
        Path bad = Files.write(tmp.resolve("bad.safetensors"), new byte[] {1, 2, 3});
        Run r = run(Map.of(), CURRENT_JAVA.toString(), "-jar", JAR.toString(), "verify", bad.toString());
        assertEquals(SafetensorsCli.EXIT_INVALID, r.exit(), r.err() + r.out());
        assertTrue((r.out() + r.err()).contains(bad.toString()), r.out() + r.err());
    }

    @Test
    void binSafetensorsFindsJdk25EvenWhenJavaHomeAndPathPointAtAnOldOne() throws Exception {
        Path old = requireOldJdk();
        Run r = run(Map.of("JAVA_HOME", old.toString(), "PATH", old.resolve("bin") + ":/usr/bin:/bin",
                        "SAFETENSORS_CLI_JAR", JAR.toString()),
                WRAPPER.toString(), "inspect", model.toString());
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().contains("embeddings.weight"), r.out());
    }

    @Test
    void binSafetensorsUsesJavaHomeWhenItIsNewEnough() throws Exception {
        Run r = run(Map.of("JAVA_HOME", System.getProperty("java.home"), "ST_JDK_SEARCH", tmp.toString(),
                        "SAFETENSORS_CLI_JAR", JAR.toString()),
                WRAPPER.toString(), "inspect", "--json", model.toString());
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().contains("\"embeddings.weight\""), r.out());
    }

    @Test
    void binSafetensorsSaysWhereItLookedWhenThereIsNoJdk25() throws Exception {
        Path empty = Files.createDirectories(tmp.resolve("no-jdks"));
        Run r = run(Map.of("JAVA_HOME", empty.toString(), "ST_JDK_SEARCH", empty + "/*",
                        "SAFETENSORS_CLI_JAR", JAR.toString()),
                WRAPPER.toString(), "inspect", model.toString());
        assertEquals(1, r.exit(), r.err());
        assertEquals("", r.out());
        assertTrue(r.err().contains("needs JDK " + JdkFloor.MIN_JDK + " or newer"), r.err());
        assertTrue(r.err().contains(empty + "/*"), r.err());
    }
}
