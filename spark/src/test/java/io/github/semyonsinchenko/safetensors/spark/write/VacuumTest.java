package io.github.semyonsinchenko.safetensors.spark.write;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.dataset.CommitPolicy;
import io.github.semyonsinchenko.safetensors.dataset.DatasetLayout;
import io.github.semyonsinchenko.safetensors.dataset.Manifest;
import io.github.semyonsinchenko.safetensors.dataset.Vacuum;
import io.github.semyonsinchenko.safetensors.options.Options;
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
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Retention at commit time and {@link Vacuum} on request, on datasets the connector wrote. The
 * writes go through the connector's task writers and job commit without a Spark session
 * ({@link CrashChild#writeDirect}); the CLI's {@code vacuum} command has its own tests.
 */
class VacuumTest {
    @TempDir
    Path tmp;

    private static Manifest manifest(Path root) throws IOException {
        Configuration conf = new Configuration();
        conf.set("fs.file.impl", RawLocalFileSystem.class.getName());
        conf.setBoolean("fs.file.impl.disable.cache", true);
        org.apache.hadoop.fs.Path r = new org.apache.hadoop.fs.Path(root.toUri());
        return Manifest.readFile(FileSystem.get(r.toUri(), conf), new org.apache.hadoop.fs.Path(r,
                DatasetLayout.MANIFEST));
    }

    private static Set<String> shardsOnDisk(Path root) throws IOException {
        try (Stream<Path> s = Files.list(root)) {
            return new TreeSet<>(s.map(p -> p.getFileName().toString()).filter(DatasetLayout::isShardName).toList());
        }
    }

    private static Set<String> allFiles(Path root) throws IOException {
        try (Stream<Path> s = Files.walk(root)) {
            return new TreeSet<>(s.filter(Files::isRegularFile).map(p -> root.relativize(p).toString()).toList());
        }
    }

    private static void age(Path p) throws IOException {
        Files.setLastModifiedTime(p, FileTime.fromMillis(System.currentTimeMillis() - TimeUnit.DAYS.toMillis(3)));
    }

    private static String vacuum(Path root, CommitPolicy policy, boolean dryRun) throws IOException {
        Configuration conf = new Configuration();
        conf.set("fs.file.impl", RawLocalFileSystem.class.getName());
        conf.setBoolean("fs.file.impl.disable.cache", true);
        return Vacuum.run(conf, new org.apache.hadoop.fs.Path(root.toUri()), policy, dryRun).toString();
    }

    @Test
    void overwritesKeepThePreviousVersionAndVacuumReportsThenDeletesLeftovers() throws Exception {
        Path root = tmp.resolve("ds");
        String r = root.toString();
        CrashChild.writeDirect(r, "errorifexists", 1, 6, "1", "1d");
        Set<String> v1 = new TreeSet<>(manifest(root).shardFiles());
        CrashChild.writeDirect(r, "overwrite", 2, 8, "1", "1d");
        Set<String> v2 = new TreeSet<>(manifest(root).shardFiles());
        Set<String> both = new TreeSet<>(v1);
        both.addAll(v2);
        assertEquals(both, shardsOnDisk(root), "the previous version's shards stay after an overwrite");

        CrashChild.writeDirect(r, "overwrite", 3, 4, "1", "1d");
        Manifest v3m = manifest(root);
        assertEquals(3, v3m.version());
        Set<String> v3 = new TreeSet<>(v3m.shardFiles());
        Set<String> kept = new TreeSet<>(v2);
        kept.addAll(v3);
        assertEquals(kept, shardsOnDisk(root), "version 1 is superseded twice: its shards are gone");

        // Leftovers of crashed jobs, a young orphan (a job may still be writing it) and foreign files.
        Path attempt = root.resolve("_staging/dead-job/attempt-00000-0");
        Files.createDirectories(attempt);
        Path staged = attempt.resolve(DatasetLayout.shardName(0, 0, UUID.randomUUID()));
        Files.write(staged, new byte[100]);
        for (Path p : List.of(staged, attempt, attempt.getParent())) {
            age(p);
        }
        Path oldOrphan = root.resolve(DatasetLayout.shardName(7, 0, UUID.randomUUID()));
        Files.write(oldOrphan, new byte[200]);
        age(oldOrphan);
        Path youngOrphan = root.resolve(DatasetLayout.shardName(8, 0, UUID.randomUUID()));
        Files.write(youngOrphan, new byte[10]);
        Path temp = root.resolve(DatasetLayout.tempName(DatasetLayout.MANIFEST));
        Files.write(temp, new byte[5]);
        age(temp);
        Files.writeString(root.resolve("notes.txt"), "not ours");
        Files.write(root.resolve("model.safetensors"), new byte[16]);
        age(root.resolve("model.safetensors"));

        Set<String> before = allFiles(root);
        String dry = vacuum(root, CommitPolicy.DEFAULT, true);
        assertEquals(before, allFiles(root), "a dry run deletes nothing");
        assertTrue(dry.contains("would delete 3 path(s), 305 bytes"), dry);
        assertTrue(dry.contains("STAGING") && dry.contains("dead-job"), dry);
        assertTrue(dry.contains("ORPHAN_SHARD") && dry.contains(oldOrphan.getFileName().toString()), dry);
        assertTrue(dry.contains("TEMPORARY"), dry);

        byte[] committed = Files.readAllBytes(root.resolve(DatasetLayout.MANIFEST));
        // History entries keep their version numbers taken until orphan_age has passed.
        try (Stream<Path> s = Files.list(root.resolve(DatasetLayout.HISTORY))) {
            for (Path h : s.toList()) {
                age(h);
            }
        }
        String applied = vacuum(root, CommitPolicy.parse(Map.of("retain_versions", "0")), false);
        assertTrue(applied.contains("SUPERSEDED") && applied.contains("HISTORY"), applied);
        Set<String> want = new TreeSet<>(v3);
        want.add(v3m.indexFile());
        want.addAll(List.of(DatasetLayout.MANIFEST, DatasetLayout.INDEX_FILE, "notes.txt", "model.safetensors",
                youngOrphan.getFileName().toString(), DatasetLayout.HISTORY + "/" + DatasetLayout.historyName(3)));
        assertEquals(want, allFiles(root));
        assertArrayEquals(committed, Files.readAllBytes(root.resolve(DatasetLayout.MANIFEST)),
                "vacuum never touches the committed version");
    }
}
