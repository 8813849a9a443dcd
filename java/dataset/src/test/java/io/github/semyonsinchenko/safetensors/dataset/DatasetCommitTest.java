package io.github.semyonsinchenko.safetensors.dataset;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.dataset.DatasetCommit.Operation;
import io.github.semyonsinchenko.safetensors.dataset.KvWriter.Row;
import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The commit protocol on the local file system, with a concurrent commit injected right before this
 * one claims its version (the {@code beforeClaim} seam): appends rebase, everything else fails with the
 * rule it breaks, and nothing of a failed commit stays.
 */
class DatasetCommitTest {
    @TempDir
    java.nio.file.Path tmp;
    Configuration conf;
    Path root;
    FileSystem fs;
    KvWriter writer;

    @BeforeEach
    void setUp() throws IOException {
        conf = HadoopConfs.of(Map.of());
        root = new Path(tmp.resolve("ds").toUri());
        fs = root.getFileSystem(conf);
        writer = new KvWriter(conf, root, CommitPolicy.DEFAULT, true);
    }

    static List<Row> rows(String prefix, int n) {
        List<Row> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(new Row(prefix + i, i, prefix.hashCode()));
        }
        return out;
    }

    /** A commit of {@code rows} that lets {@code meanwhile} commit first, right before it claims. */
    private DatasetCommit.Committed racing(Operation op, List<Row> rows, IoAction meanwhile) throws IOException {
        String job = "racer-" + UUID.randomUUID();
        DatasetCommit commit = new DatasetCommit(conf, root, CommitPolicy.DEFAULT, job);
        boolean[] once = {false};
        commit.beforeClaim = v -> {
            if (!once[0]) {
                once[0] = true;
                try {
                    meanwhile.run();
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }
        };
        return writer.run(commit, writer.stage(op, job, List.of(rows)), job);
    }

    interface IoAction {
        void run() throws IOException;
    }

    private Set<String> shardFilesOnDisk() throws IOException {
        try (Stream<java.nio.file.Path> s = Files.list(tmp.resolve("ds"))) {
            return new TreeSet<>(s.map(p -> p.getFileName().toString()).filter(DatasetLayout::isShardName).toList());
        }
    }

    @Test
    void versionsCountCommitsAndTheManifestIsACopyOfTheNewestEntry() throws IOException {
        assertEquals(1, writer.commit(Operation.CREATE, List.of(rows("a", 3))).version());
        assertEquals(2, writer.commit(Operation.APPEND, List.of(rows("b", 2))).version());
        DatasetCommit.Committed v3 = writer.commit(Operation.APPEND, List.of(rows("c", 1), rows("d", 1)));
        assertEquals(3, v3.version());
        assertEquals(1, v3.attempts());
        assertArrayEquals(Files.readAllBytes(tmp.resolve("ds/_manifests/" + DatasetLayout.historyName(3))),
                Files.readAllBytes(tmp.resolve("ds/" + DatasetLayout.MANIFEST)));
        assertEquals(7, KvWriter.read(conf, root).size());
        assertEquals(7, TensorIndexFile.of(fs, conf, root, Manifest.read(fs, root)).size());
        DatasetException e = assertThrows(DatasetException.class,
                () -> writer.commit(Operation.CREATE, List.of(rows("e", 1))));
        assertEquals(DatasetRule.ALREADY_EXISTS, e.rule());
        assertEquals(3, writer.commit(Operation.CREATE_OR_SKIP, List.of(rows("e", 1))).version());
        assertEquals(7, KvWriter.read(conf, root).size());
        assertEquals(3 + 1, shardFilesOnDisk().size(), "the skipped and the failed writes left no shard");
    }

    @Test
    void anAppendThatLosesTheRaceToAnotherAppendRebasesAndKeepsBoth() throws IOException {
        writer.commit(Operation.CREATE, List.of(rows("a", 3)));
        DatasetCommit.Committed mine = racing(Operation.APPEND, rows("mine", 4),
                () -> writer.commit(Operation.APPEND, List.of(rows("theirs", 5))));
        assertEquals(3, mine.version(), "version 2 was taken, the rebased append is 3");
        assertEquals(2, mine.attempts());
        Map<String, float[]> all = KvWriter.read(conf, root);
        assertEquals(12, all.size());
        assertTrue(all.containsKey("mine3") && all.containsKey("theirs4") && all.containsKey("a2"));
        assertEquals(12, TensorIndexFile.of(fs, conf, root, Manifest.read(fs, root)).size(),
                "the rebased index holds both appends");
        assertEquals(Set.of("mine3"), Set.copyOf(List.of("mine3")));
        assertEquals(Set.of(mine.manifest().shards().get(2).file()), TensorIndexFile.filesHoldingKeys(fs, conf,
                root, Manifest.read(fs, root), Set.of("mine0")));
    }

    @Test
    void anOverwriteThatLosesTheRaceFailsNamingBothVersionsAndLeavesNothing() throws IOException {
        writer.commit(Operation.CREATE, List.of(rows("a", 3)));
        Set<String> before = shardFilesOnDisk();
        CommitConflictException e = assertThrows(CommitConflictException.class, () -> racing(Operation.OVERWRITE,
                rows("o", 2), () -> writer.commit(Operation.APPEND, List.of(rows("theirs", 5)))));
        assertEquals(1, e.readVersion());
        assertEquals(2, e.conflictingVersion());
        assertTrue(e.getMessage().contains("read version 1") && e.getMessage().contains("made version 2"),
                e.getMessage());
        assertEquals(8, KvWriter.read(conf, root).size(), "the append that won stays; the overwrite is not there");
        Set<String> after = shardFilesOnDisk();
        after.removeAll(before);
        assertEquals(1, after.size(), "only the winning append's shard was added: " + after);
    }

    @Test
    void anAppendThatLosesToAnOverwriteFailsInsteadOfBringingOldRowsBack() throws IOException {
        writer.commit(Operation.CREATE, List.of(rows("a", 3)));
        CommitConflictException e = assertThrows(CommitConflictException.class, () -> racing(Operation.APPEND,
                rows("late", 2), () -> writer.commit(Operation.OVERWRITE, List.of(rows("new", 4)))));
        assertTrue(e.getMessage().contains("no longer holds"), e.getMessage());
        assertEquals(Set.of("new0", "new1", "new2", "new3"), KvWriter.read(conf, root).keySet());
    }

    @Test
    void anAppendThatMeetsAChangedSchemaFails() throws IOException {
        // An empty dataset (an empty DataFrame written): no shards, no columns, so any columns fit.
        new DatasetCommit(conf, root, CommitPolicy.DEFAULT, "empty").commit(new DatasetCommit.Change(
                Operation.CREATE, Layout.kv("key", "__"), List.of("x"), Map.of(), List.of(), null, false));
        Manifest empty = Manifest.read(fs, root);
        assertTrue(empty.schema().isEmpty() && empty.shards().isEmpty());
        String job = "racer";
        DatasetCommit commit = new DatasetCommit(conf, root, CommitPolicy.DEFAULT, job);
        DatasetCommit.Change f64 = new DatasetCommit.Change(Operation.APPEND, Layout.kv("key", "__"), List.of("x"),
                Map.of("x", new ColumnSchema("F64", new long[] {2})), writer.stage(Operation.APPEND, job,
                        List.of(rows("m", 1))).shards(), null, false);
        commit.beforeClaim = v -> {
            try {
                if (v == 2) {
                    writer.commit(Operation.APPEND, List.of(rows("f32-", 1)));
                }
            } catch (IOException io) {
                throw new java.io.UncheckedIOException(io);
            }
        };
        CommitConflictException e = assertThrows(CommitConflictException.class, () -> writer.run(commit, f64, job));
        assertTrue(e.getMessage().contains("changed what an append must fit"), e.getMessage());
        assertEquals(Set.of("f32-0"), KvWriter.read(conf, root).keySet());
    }

    @Test
    void aKeyAppendedConcurrentlyTwiceIsADuplicateNotASilentCopy() throws IOException {
        writer.commit(Operation.CREATE, List.of(rows("a", 1)));
        DatasetException e = assertThrows(DatasetException.class, () -> racing(Operation.APPEND, rows("dup", 1),
                () -> writer.commit(Operation.APPEND, List.of(rows("dup", 1)))));
        assertEquals(DatasetRule.DUPLICATE_KEY, e.rule());
        assertTrue(e.getMessage().contains("key 'dup0'"), e.getMessage());
        assertEquals(Set.of("a0", "dup0"), KvWriter.read(conf, root).keySet());
    }

    @Test
    void aCreateThatLosesFindsTheDatasetAndIgnoreSkips() throws IOException {
        DatasetException e = assertThrows(DatasetException.class, () -> racing(Operation.CREATE, rows("me", 1),
                () -> writer.commit(Operation.CREATE, List.of(rows("first", 1)))));
        assertEquals(DatasetRule.ALREADY_EXISTS, e.rule());
        assertEquals(Set.of("first0"), KvWriter.read(conf, root).keySet());
        assertEquals(1, shardFilesOnDisk().size());
        root = new Path(tmp.resolve("ds2").toUri());
        writer = new KvWriter(conf, root, CommitPolicy.DEFAULT, true);
        DatasetCommit.Committed skipped = racing(Operation.CREATE_OR_SKIP, rows("me", 1),
                () -> writer.commit(Operation.CREATE, List.of(rows("second", 1))));
        assertFalse(skipped.committed());
        assertEquals(Set.of("second0"), KvWriter.read(conf, root).keySet());
        try (Stream<java.nio.file.Path> s = Files.list(tmp.resolve("ds2"))) {
            assertEquals(1, s.filter(p -> DatasetLayout.isShardName(p.getFileName().toString())).count());
        }
    }

    @Test
    void anAppendGivesUpAfterItsAttemptsWithATypedError() throws IOException {
        writer = new KvWriter(conf, root, CommitPolicy.parse(Map.of("commit_attempts", "3")), true);
        writer.commit(Operation.CREATE, List.of(rows("a", 1)));
        String job = "unlucky";
        DatasetCommit commit = new DatasetCommit(conf, root, CommitPolicy.parse(Map.of("commit_attempts", "3")), job);
        int[] n = {0};
        commit.beforeClaim = v -> {
            try {
                writer.commit(Operation.APPEND, List.of(rows("other" + n[0]++ + "-", 1)));
            } catch (IOException io) {
                throw new java.io.UncheckedIOException(io);
            }
        };
        CommitConflictException e = assertThrows(CommitConflictException.class,
                () -> writer.run(commit, writer.stage(Operation.APPEND, job, List.of(rows("me", 1))), job));
        assertTrue(e.getMessage().contains("gave up after 3 attempts"), e.getMessage());
        assertEquals(4, KvWriter.read(conf, root).size(), "a0 and the three others, not mine");
    }

    @Test
    void aCommitThatCrashedAfterItsClaimIsTheCurrentVersionAndTheNextCommitFixesTheManifest() throws IOException {
        writer.commit(Operation.CREATE, List.of(rows("a", 1)));
        writer.commit(Operation.APPEND, List.of(rows("b", 1)));
        // What a crash right after the claim of version 2 leaves: dataset_manifest.json still at version 1.
        Manifest v1 = Manifest.readFile(fs, DatasetVersions.history(root, 1));
        KvWriter.overwrite(fs, new Path(root, DatasetLayout.MANIFEST), v1.toBytes());
        assertEquals(2, DatasetVersions.latest(fs, root).version());
        assertEquals(Set.of("a0", "b0"), KvWriter.read(conf, root).keySet());
        assertEquals(3, writer.commit(Operation.APPEND, List.of(rows("c", 1))).version());
        assertEquals(3, Manifest.readFile(fs, new Path(root, DatasetLayout.MANIFEST)).version());
        // And without any dataset_manifest.json (a first commit that crashed after its claim).
        fs.delete(new Path(root, DatasetLayout.MANIFEST), false);
        assertEquals(3, Manifest.read(fs, root).version());
    }

    @Test
    void aManifestThatCannotBeReadIsNeverTakenForAnAbsentOne() throws IOException {
        writer.commit(Operation.CREATE, List.of(rows("a", 40)));
        Configuration denied = new Configuration(conf);
        denied.set("fs.file.impl", DenyingFileSystem.class.getName());
        denied.set(DenyingFileSystem.DENY, "dataset_manifest\\.json");
        for (Operation op : Operation.values()) {
            KvWriter w = new KvWriter(denied, root, CommitPolicy.DEFAULT, true);
            DatasetException e = assertThrows(DatasetException.class, () -> w.commit(op, List.of(rows("b", 10))), op
                    .name());
            assertEquals(DatasetRule.MANIFEST_UNREADABLE, e.rule(), op.name());
            assertTrue(e.getMessage().contains("Permission denied"), e.getMessage());
        }
        assertEquals(40, KvWriter.read(conf, root).size());
        assertEquals(1, Manifest.read(fs, root).version());
        assertEquals(1, shardFilesOnDisk().size(), "no failed write left a shard");
        FileSystem deniedFs = root.getFileSystem(denied);
        DatasetException e = assertThrows(DatasetException.class, () -> Vacuum.run(denied, root, CommitPolicy.DEFAULT,
                true));
        assertEquals(DatasetRule.MANIFEST_UNREADABLE, e.rule());
        assertTrue(DatasetVersions.exists(deniedFs, root), "an unreadable manifest still means a dataset is there");
    }

    @Test
    void absentMeansAbsent() throws IOException {
        assertNull(Manifest.read(fs, root));
        assertFalse(DatasetVersions.exists(fs, root));
        assertNull(Manifest.readFile(fs, new Path(root, DatasetLayout.MANIFEST)));
    }
}
