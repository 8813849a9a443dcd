package io.github.semyonsinchenko.safetensors.dataset;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import io.github.semyonsinchenko.safetensors.dataset.DatasetCommit.Operation;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.io.TempDir;

/**
 * The crash points of a commit that lost the race and rebased ({@link RacingCrashChild}: append A
 * loses version 2 to append B and tries version 3): a JVM halted there leaves B's version or A's
 * rebased one, never a mix, and the next commit removes A's leftovers. (The Spark connector's
 * {@code CrashPointMatrixTest} covers every other step, for every save mode.)
 */
class CommitCrashTest {
    @TempDir
    java.nio.file.Path tmp;

    @ParameterizedTest(name = "{0}")
    @CsvSource({
        "commit.rebased, 2, 2",          // A lost and re-read the dataset: B's version, A nowhere
        "commit.indexWritten:3, 2, 2",   // A's rebased index written (B's commit wrote the 2nd): still B's
        "commit.beforeClaim:3, 2, 2",    // A about to claim version 3
        "commit.claimed:2, 3, 2",        // A claimed version 3; dataset_manifest.json still says 2
        "commit.afterManifest:2, 3, 3"   // A's manifest copied
    })
    void aRebasedCommitCrashedAtEachStepLeavesOneVersion(String point, long version, long pointer) throws Exception {
        Configuration conf = HadoopConfs.of(Map.of());
        Path root = new Path(tmp.resolve("ds").toUri());
        FileSystem fs = root.getFileSystem(conf);
        new KvWriter(conf, root, CommitPolicy.DEFAULT, true).commit(Operation.CREATE,
                List.of(DatasetCommitTest.rows("seed", 2)));

        List<String> cmd = new ArrayList<>();
        cmd.add(java.nio.file.Path.of(System.getProperty("java.home"), "bin", "java").toString());
        for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (!a.startsWith("-Xmx") && !a.startsWith("-agentlib") && !a.startsWith("-javaagent")) {
                cmd.add(a);
            }
        }
        cmd.addAll(List.of("-Xmx256m", "-XX:TieredStopAtLevel=1", "-D" + CrashPoints.PROPERTY + "=" + point, "-cp",
                System.getProperty("java.class.path"), RacingCrashChild.class.getName(), root.toString()));
        java.nio.file.Path log = tmp.resolve("child.log");
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("the child did not finish: " + Files.readString(log));
        }
        assertEquals(CrashPoints.EXIT_STATUS, p.exitValue(), Files.readString(log));

        Set<String> expected = new TreeSet<>(List.of("seed0", "seed1", "b0", "b1", "b2"));
        if (version == 3) {
            expected.addAll(List.of("a0", "a1", "a2", "a3"));
        }
        assertEquals(version, DatasetVersions.latest(fs, root).version(), point);
        assertEquals(pointer, Manifest.readFile(fs, new Path(root, DatasetLayout.MANIFEST)).version(), point);
        assertEquals(expected, KvWriter.read(conf, root).keySet(), point);
        Manifest current = Manifest.read(fs, root);
        assertEquals(expected.size(), TensorIndexFile.of(fs, conf, root, current).size(), point);
        assertNotNull(TensorIndexFile.filesHoldingKeys(fs, conf, root, current, expected),
                point + ": the index of the current version passes its checks");

        // The next commit (orphans count at once, no earlier version kept) leaves only its own version.
        Manifest next = new KvWriter(conf, root, CommitPolicy.parse(Map.of("orphan_age", "0s", "retain_versions",
                "0")), true).commit(Operation.APPEND, List.of(DatasetCommitTest.rows("c", 1))).manifest();
        Set<String> want = new TreeSet<>(next.files());
        want.add(DatasetLayout.MANIFEST);
        want.add(DatasetLayout.INDEX_FILE);
        want.add(DatasetLayout.HISTORY + "/" + DatasetLayout.historyName(next.version()));
        Set<String> have = new TreeSet<>();
        java.nio.file.Path dir = tmp.resolve("ds");
        try (Stream<java.nio.file.Path> s = Files.walk(dir)) {
            s.filter(Files::isRegularFile).forEach(f -> have.add(dir.relativize(f).toString()));
        }
        assertEquals(want, have, point + ": leftovers after the next commit");
    }
}
