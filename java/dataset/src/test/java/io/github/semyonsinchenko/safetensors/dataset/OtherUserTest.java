package io.github.semyonsinchenko.safetensors.dataset;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.dataset.DatasetCommit.Operation;
import java.io.File;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Issue 28's second observation with a real other user: a dataset of 40 rows whose manifest (mode
 * 600) belongs to root, in a directory everyone may write; an append by user {@code nobody} (a child
 * JVM started with {@code setpriv}) must fail with "cannot be read" and leave the 40 rows alone, where
 * it used to commit a version of its 10 rows only. Runs only where the test can switch users (as root,
 * with {@code setpriv}); {@link DatasetCommitTest} covers the same with a file system that denies the
 * read, everywhere.
 */
class OtherUserTest {
    static final String NOBODY = "65534";

    @Test
    void anAppendByAUserWhoMayNotReadTheManifestFailsAndTheRowsStay() throws Exception {
        Assumptions.assumeTrue("root".equals(System.getProperty("user.name")),
                "SKIPPED: switching users needs root; DatasetCommitTest covers this with a denying file system");
        java.nio.file.Path setpriv = java.nio.file.Path.of("/usr/bin/setpriv");
        Assumptions.assumeTrue(Files.isExecutable(setpriv), "SKIPPED: no setpriv to switch users with");

        // Under /tmp, not the JUnit temporary directory (mode 700): nobody must reach the dataset.
        java.nio.file.Path base = Files.createTempDirectory(java.nio.file.Path.of("/tmp"), "other-user-",
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
        try {
            java.nio.file.Path dir = base.resolve("ds");
            Configuration conf = HadoopConfs.of(Map.of());
            Path root = new Path(dir.toUri());
            new KvWriter(conf, root, CommitPolicy.DEFAULT, true).commit(Operation.CREATE,
                    List.of(DatasetCommitTest.rows("k", 40)));
            // Everyone may write the directories; only the owner may read the manifests.
            try (Stream<java.nio.file.Path> s = Files.walk(dir)) {
                for (java.nio.file.Path p : s.toList()) {
                    boolean manifest = p.getFileName().toString().endsWith(".json");
                    Files.setPosixFilePermissions(p, PosixFilePermissions.fromString(Files.isDirectory(p) ? "rwxrwxrwx"
                            : manifest ? "rw-------" : "rw-r--r--"));
                }
            }
            String classPath = readableClassPath(base.resolve("cp"));
            List<String> cmd = new ArrayList<>(List.of(setpriv.toString(), "--reuid=" + NOBODY, "--regid=" + NOBODY,
                    "--clear-groups", java.nio.file.Path.of(System.getProperty("java.home"), "bin", "java").toString()));
            for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
                if (!a.startsWith("-Xmx") && !a.startsWith("-agentlib") && !a.startsWith("-javaagent")) {
                    cmd.add(a);
                }
            }
            cmd.addAll(List.of("-Xmx256m", "-Duser.home=/tmp", "-cp", classPath, ConcurrentWriter.class.getName(),
                    root.toString(), "9", "1", "10", "append"));
            java.nio.file.Path log = base.resolve("child.log");
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new AssertionError("the child did not finish: " + Files.readString(log));
            }
            String out = Files.readString(log);
            assertEquals(0, p.exitValue(), out);
            assertTrue(out.contains("FAIL 0 APPEND MANIFEST_UNREADABLE") && out.contains("Permission denied"), out);

            assertEquals(40, KvWriter.read(conf, root).size());
            assertEquals(1, Manifest.read(root.getFileSystem(conf), root).version());
        } finally {
            try (Stream<java.nio.file.Path> s = Files.walk(base)) {
                for (java.nio.file.Path p : s.sorted(java.util.Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }

    /**
     * This JVM's class path as another user can read it: jars under a directory only root may enter
     * (the local Maven repository under /root) are hard-linked (or copied) into {@code dir}.
     */
    private static String readableClassPath(java.nio.file.Path dir) throws IOException {
        Files.createDirectories(dir);
        List<String> out = new ArrayList<>();
        int i = 0;
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            java.nio.file.Path p = java.nio.file.Path.of(entry);
            if (Files.isDirectory(p) || !entry.startsWith(System.getProperty("user.home"))) {
                out.add(entry);
                continue;
            }
            java.nio.file.Path link = dir.resolve((i++) + "-" + p.getFileName());
            try {
                Files.createLink(link, p);
            } catch (IOException | UnsupportedOperationException e) {
                Files.copy(p, link);
            }
            out.add(link.toString());
        }
        return String.join(File.pathSeparator, out);
    }
}
