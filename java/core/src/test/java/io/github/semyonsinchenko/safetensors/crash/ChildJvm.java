package io.github.semyonsinchenko.safetensors.crash;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs a main class in a fresh JVM with this test JVM's class path, so that code which might crash
 * the JVM fails a test instead of killing the test runner.
 */
record ChildJvm(int exitCode, String output) {
    /** Runs {@code main} in {@code dir} (where a crash report would land) with {@code args}. */
    static ChildJvm run(Path dir, Class<?> main, List<String> jvmArgs, String... args)
            throws IOException, InterruptedException {
        return run(dir, main, jvmArgs, null, args);
    }

    /** The same with {@code preload} in the child's {@code LD_PRELOAD} (e.g. the JDK's libjsig). */
    static ChildJvm run(Path dir, Class<?> main, List<String> jvmArgs, Path preload)
            throws IOException, InterruptedException {
        return run(dir, main, jvmArgs, preload, new String[0]);
    }

    private static ChildJvm run(Path dir, Class<?> main, List<String> jvmArgs, Path preload, String[] args)
            throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xmx512m");
        cmd.add("--enable-native-access=ALL-UNNAMED");
        cmd.add("--add-modules=jdk.incubator.vector");
        cmd.add("-XX:-CreateCoredumpOnCrash");
        cmd.add("-XX:ErrorFile=" + dir.resolve("hs_err_%p.log"));
        cmd.addAll(jvmArgs);
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(main.getName());
        cmd.addAll(List.of(args));
        File log = File.createTempFile("child-jvm", ".log");
        try {
            ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true)
                    .redirectOutput(log);
            if (preload != null) {
                pb.environment().put("LD_PRELOAD", preload.toString());
            }
            Process p = pb.start();
            if (!p.waitFor(5, TimeUnit.MINUTES)) {
                p.destroyForcibly().waitFor();
                throw new AssertionError("the child JVM did not finish in 5 minutes: " + cmd);
            }
            return new ChildJvm(p.exitValue(), Files.readString(log.toPath(), StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(log.toPath());
        }
    }
}
