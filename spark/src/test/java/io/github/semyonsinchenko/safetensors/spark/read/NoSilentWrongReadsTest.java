package io.github.semyonsinchenko.safetensors.spark.read;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.io.SafetensorsWriter;
import io.github.semyonsinchenko.safetensors.dataset.DatasetLayout;
import io.github.semyonsinchenko.safetensors.spark.write.CrashChild;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Regression tests of issue 8's observed defects 2 to 5 and 10: a dataset directory without its
 * manifest, ignoreCorruptFiles swallowing vanished files, a mapped file truncated under a reader,
 * schema inference and ignoreCorruptFiles, and the error for a deleted shard.
 */
class NoSilentWrongReadsTest extends SparkTestBase {
    @TempDir
    Path tmp;

    private Dataset<Row> read(Path root, String... options) {
        var r = spark.read().format("safetensors").option("inferSchema", "true");
        for (int i = 0; i < options.length; i += 2) {
            r = r.option(options[i], options[i + 1]);
        }
        return r.load(root.toString());
    }

    private static List<Path> shards(Path root) throws IOException {
        try (Stream<Path> s = Files.list(root)) {
            return s.filter(p -> DatasetLayout.isShardName(p.getFileName().toString())).sorted().toList();
        }
    }

    private static String causes(Throwable e) {
        StringBuilder sb = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            sb.append(t.getClass().getSimpleName()).append(": ").append(t.getMessage()).append('\n');
        }
        return sb.toString();
    }

    @Test
    void aDatasetWithoutItsManifestIsAnAnalysisErrorUnlessLooseFilesAreAsked() throws Exception {
        Path root = tmp.resolve("ds");
        CrashChild.writeWithSpark(spark, root.toString(), "errorifexists", 1, 20, "1", "1d");
        assertEquals(20, read(root).count());
        // Without dataset_manifest.json the history says which version is current (the commit point).
        Files.move(root.resolve(DatasetLayout.MANIFEST), tmp.resolve("saved-manifest"));
        assertEquals(20, read(root).count());
        // Without both, nothing says which files form a version.
        Files.move(root.resolve(DatasetLayout.HISTORY), tmp.resolve("saved-history"));
        Files.createDirectories(root.resolve(DatasetLayout.STAGING));

        AnalysisException e = assertThrows(AnalysisException.class, () -> read(root));
        assertTrue(e.getMessage().contains("is or was a safetensors dataset") && e.getMessage().contains(
                "_staging/") && e.getMessage().contains("2 shard file(s)") && e.getMessage().contains("looseFiles"),
                e.getMessage());
        // Asked for explicitly: the files, one row per file (wide layout of plain files).
        assertEquals(2, read(root, "looseFiles", "true").count());

        // Only the staging directory of a crashed first write: no dataset, still not loose files.
        Path crashed = tmp.resolve("crashed");
        Files.createDirectories(crashed.resolve("_staging/job/attempt-00000-0"));
        Files.copy(shards(root).get(0), crashed.resolve("_staging/job/attempt-00000-0/x.safetensors"));
        assertThrows(AnalysisException.class, () -> read(crashed));
    }

    @Test
    void ignoreCorruptFilesDoesNotSkipAShardDeletedAfterPlanning() throws Exception {
        Path root = tmp.resolve("gone");
        CrashChild.writeWithSpark(spark, root.toString(), "errorifexists", 1, 20, "1", "1d");
        for (String mmap : List.of("true", "false")) {
            Dataset<Row> planned = read(root, "ignoreCorruptFiles", "true", "mmap", mmap);
            Dataset<Row> plannedMissingOk = read(root, "ignoreMissingFiles", "true", "mmap", mmap);
            // Plan now (the manifest is read and the files listed), read after the deletion.
            planned.queryExecution().executedPlan();
            plannedMissingOk.queryExecution().executedPlan();
            Path victim = shards(root).get(0);
            Path saved = tmp.resolve("saved-" + mmap);
            Files.move(victim, saved);
            try {
                Exception e = assertThrows(Exception.class, planned::collectAsList);
                String all = causes(e);
                assertTrue(all.contains("cannot read ") && all.contains(victim.getFileName().toString()), all);
                assertTrue(all.contains("does not exist any more") && all.contains("ignoreMissingFiles"), all);
                // ignoreMissingFiles: the other shard's rows, and the reason is logged.
                assertEquals(10, plannedMissingOk.collectAsList().size(), "mmap=" + mmap);
            } finally {
                Files.move(saved, victim);
            }
        }
    }

    @Test
    void aMappedFileTruncatedUnderTheReaderIsAnIoExceptionNamingIt() throws Exception {
        Path file = tmp.resolve("t.safetensors");
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            new SafetensorsWriter().add("x", Dtype.U8, new long[] {1 << 20}, MemorySegment.ofArray(new byte[1 << 20]))
                    .write(ch);
        }
        try (TensorSource src = TensorSource.open(new DatasetFile(file.toUri().toString(), Files.size(file)),
                new org.apache.hadoop.conf.Configuration(), true, true)) {
            assertTrue(src instanceof TensorSource.Mapped);
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
                ch.truncate(4096);
            }
            var info = src.header().tensors().get(0);
            IOException e = assertThrows(IOException.class, () -> src.read(info, 0, info.byteSize()));
            assertTrue(e.getMessage().startsWith(file.toString()) && e.getMessage().contains("truncated"),
                    e.getMessage());
            assertTrue(e.getCause() instanceof InternalError, String.valueOf(e.getCause()));
        }
    }

    @Test
    void schemaInferenceSkipsACorruptFirstFileOnlyWithIgnoreCorruptFiles() throws Exception {
        Path dir = Files.createDirectories(tmp.resolve("loose"));
        Files.write(dir.resolve("a.safetensors"), new byte[0]);
        try (FileChannel ch = FileChannel.open(dir.resolve("b.safetensors"), StandardOpenOption.CREATE_NEW,
                StandardOpenOption.WRITE)) {
            new SafetensorsWriter().add("w", Dtype.F32, new long[] {2}, MemorySegment.ofArray(new byte[8])).write(ch);
        }
        AnalysisException e = assertThrows(AnalysisException.class, () -> read(dir));
        assertTrue(e.getMessage().contains("a.safetensors"), e.getMessage());
        Dataset<Row> df = read(dir, "ignoreCorruptFiles", "true");
        assertEquals(List.of("w"), List.of(df.schema().fieldNames()));
        List<Row> rows = new ArrayList<>(df.collectAsList());
        assertEquals(1, rows.size());
    }
}
