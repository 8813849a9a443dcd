package io.github.semyonsinchenko.safetensors.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.dataset.ColumnSchema;
import io.github.semyonsinchenko.safetensors.dataset.CommitPolicy;
import io.github.semyonsinchenko.safetensors.dataset.DatasetCommit;
import io.github.semyonsinchenko.safetensors.dataset.DatasetLayout;
import io.github.semyonsinchenko.safetensors.dataset.HadoopConfs;
import io.github.semyonsinchenko.safetensors.dataset.Layout;
import io.github.semyonsinchenko.safetensors.dataset.Manifest;
import io.github.semyonsinchenko.safetensors.dataset.Shard;
import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.io.SafetensorsWriter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code safetensors vacuum}: a dry run by default, deletions with {@code --apply}, refusals with exit codes. */
class VacuumCommandTest {
    @TempDir
    Path tmp;

    /** Commits one kv version of {@code rows} rows (one shard) on top of whatever {@code root} holds. */
    private static Manifest commit(Path root, String mode, int rows) throws IOException {
        org.apache.hadoop.fs.Path r = new org.apache.hadoop.fs.Path(root.toUri());
        String commitId = "cli-test-" + UUID.randomUUID();
        Path staging = Files.createDirectories(root.resolve(DatasetLayout.STAGING).resolve(commitId));
        String name = DatasetLayout.shardName(0, 0, UUID.randomUUID());
        SafetensorsWriter w = new SafetensorsWriter().metadata("write_mode", "kv").metadata("kv_separator", "__");
        for (int i = 0; i < rows; i++) {
            w.add("k" + i + "__x", Dtype.F32, new long[] {1}, new float[] {i});
        }
        w.write(staging.resolve(name));
        DatasetCommit commit = new DatasetCommit(HadoopConfs.of(Map.of()), r, CommitPolicy.DEFAULT, commitId);
        DatasetCommit.Change change = new DatasetCommit.Change(mode.equals("append") ? DatasetCommit.Operation.APPEND
                : DatasetCommit.Operation.OVERWRITE, Layout.kv("key", "__"), List.of("x"),
                Map.of("x", new ColumnSchema("F32", new long[] {1})), List.of(new DatasetCommit.Staged(
                        new org.apache.hadoop.fs.Path(staging.resolve(name).toUri()),
                        new Shard(name, rows, Files.size(staging.resolve(name))))), null, false);
        Manifest m = commit.commit(change).manifest();
        Files.delete(staging);
        Files.delete(staging.getParent());
        return m;
    }

    private static Set<String> allFiles(Path root) throws IOException {
        try (Stream<Path> s = Files.walk(root)) {
            return new TreeSet<>(s.filter(Files::isRegularFile).map(p -> root.relativize(p).toString()).toList());
        }
    }

    private static void age(Path p) throws IOException {
        Files.setLastModifiedTime(p, FileTime.fromMillis(System.currentTimeMillis() - TimeUnit.DAYS.toMillis(3)));
    }

    @Test
    void aDryRunListsAndApplyDeletesWhatNoRetainedVersionNames() throws Exception {
        Path root = tmp.resolve("ds");
        Manifest v1 = commit(root, "overwrite", 3);
        Manifest v2 = commit(root, "overwrite", 4);
        Manifest v3 = commit(root, "overwrite", 5);
        Path orphan = root.resolve(DatasetLayout.shardName(7, 0, UUID.randomUUID()));
        Files.write(orphan, new byte[200]);
        age(orphan);
        Files.writeString(root.resolve("notes.txt"), "not ours");

        Set<String> before = allFiles(root);
        CliTest.Result dry = CliTest.run("vacuum", root.toString());
        assertEquals(0, dry.exit(), dry.err());
        assertEquals(before, allFiles(root), "a dry run deletes nothing");
        assertTrue(dry.out().contains("would delete") && dry.out().contains("ORPHAN_SHARD")
                && dry.out().contains(orphan.getFileName().toString()), dry.out());
        assertTrue(dry.out().contains("SUPERSEDED") && dry.out().contains(v1.shards().get(0).file()), dry.out());
        assertTrue(dry.out().contains("dry run: nothing deleted; add --apply to delete"), dry.out());

        byte[] committed = Files.readAllBytes(root.resolve(DatasetLayout.MANIFEST));
        // History entries keep their version numbers taken until orphan_age has passed.
        try (Stream<Path> s = Files.list(root.resolve(DatasetLayout.HISTORY))) {
            for (Path h : s.toList()) {
                age(h);
            }
        }
        CliTest.Result applied = CliTest.run("vacuum", root.toString(), "--apply", "--retain-versions", "0");
        assertEquals(0, applied.exit(), applied.err());
        assertTrue(applied.out().contains("deleted") && applied.out().contains("HISTORY"), applied.out());
        Set<String> want = new TreeSet<>(List.of(DatasetLayout.MANIFEST, "notes.txt", v3.shards().get(0).file(),
                DatasetLayout.HISTORY + "/" + DatasetLayout.historyName(3)));
        assertEquals(want, allFiles(root));
        assertArrayEquals(committed, Files.readAllBytes(root.resolve(DatasetLayout.MANIFEST)),
                "vacuum never touches the committed version");
        assertEquals(3, v3.version());
        assertEquals(2, v2.version());
    }

    @Test
    void aPathWithoutADatasetAndBadArgumentsAreRefused() throws Exception {
        Path empty = Files.createDirectories(tmp.resolve("empty"));
        Files.write(empty.resolve(DatasetLayout.shardName(0, 0, UUID.randomUUID())), new byte[4]);
        CliTest.Result none = CliTest.run("vacuum", empty.toString(), "--apply");
        assertEquals(SafetensorsCli.EXIT_INVALID, none.exit(), none.out());
        assertTrue(none.err().contains("no dataset_manifest.json"), none.err());
        assertEquals(1, allFiles(empty).size());

        CliTest.Result noPath = CliTest.run("vacuum");
        assertEquals(SafetensorsCli.EXIT_USAGE, noPath.exit());
        assertTrue(noPath.err().contains("PATH"), noPath.err());
        CliTest.Result badAge = CliTest.run("vacuum", empty.toString(), "--orphan-age", "soon");
        assertEquals(SafetensorsCli.EXIT_USAGE, badAge.exit());
        assertTrue(badAge.err().contains("Invalid value for option '--orphan-age': 'soon'; allowed: a duration such as"
                + " 90s"), badAge.err());
        CliTest.Result badRetain = CliTest.run("vacuum", empty.toString(), "--retain-versions", "-1");
        assertEquals(SafetensorsCli.EXIT_USAGE, badRetain.exit());
        assertTrue(badRetain.err().contains("Invalid value for option '--retain-versions': '-1'; allowed: a whole"
                + " number of versions at least 0 (default 1)"), badRetain.err());
    }
}
