package io.github.semyonsinchenko.safetensors.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.io.SafetensorsFile;
import io.github.semyonsinchenko.safetensors.io.Tensor;
import io.github.semyonsinchenko.safetensors.sampler.Batch;
import io.github.semyonsinchenko.safetensors.sampler.BatchBuilder;
import io.github.semyonsinchenko.safetensors.sampler.SamplerConfig;
import io.github.semyonsinchenko.safetensors.sampler.Split;
import io.github.semyonsinchenko.safetensors.sampler.db.Database;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SamplerCommandTest {
    @TempDir
    static Path tmp;

    static Path db;

    @BeforeAll
    static void generate() {
        db = tmp.resolve("db");
        CliTest.Result r = CliTest.run("sampler", "generate", db.toString(), "--rows", "3000", "--seed", "5");
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().contains("3,000 rows"), r.out());
    }

    @Test
    void infoListsTablesAndTasks() {
        CliTest.Result r = CliTest.run("sampler", "info", db.toString());
        assertEquals(0, r.exit(), r.err());
        for (String s : List.of("users", "posts", "comments", "votes", "post_score_30d", "user_is_active", "vote_kind",
                "train", "val", "test")) {
            assertTrue(r.out().contains(s), s + " in\n" + r.out());
        }
    }

    @Test
    void splitsTsvAgreesWithTheLibrary() throws Exception {
        CliTest.Result r = CliTest.run("sampler", "splits", db.toString(), "--task", "vote_kind", "--limit", "50");
        assertEquals(0, r.exit(), r.err());
        List<String> lines = r.out().lines().toList();
        assertEquals("task\tseed_idx\tanchor_row\tsplit", lines.get(0));
        assertEquals(51, lines.size());
        try (Database d = Database.open(db)) {
            int t = d.metadata().taskIndex("vote_kind");
            for (int i = 0; i < 50; i++) {
                String[] f = lines.get(i + 1).split("\t");
                assertEquals("vote_kind", f[0]);
                assertEquals(i, Integer.parseInt(f[1]));
                assertEquals(d.task(t).anchorRow(i), Integer.parseInt(f[2]));
                assertEquals(Split.assign(t, d.task(t).anchorRow(i), 123, 0.8f, 0.1f).label(), f[3]);
            }
        }
        CliTest.Result bad = CliTest.run("sampler", "splits", db.toString(), "--task", "nope");
        assertEquals(SafetensorsCli.EXIT_USAGE, bad.exit());
        assertTrue(bad.err().contains("vote_kind"), bad.err());
    }

    @Test
    void batchesWritesTheProducersFirstBatches() throws Exception {
        Path out = tmp.resolve("batches");
        CliTest.Result r = CliTest.run("sampler", "batches", db.toString(), "--split", "val", "--batch", "4", "--seq",
                "128", "--count", "2", "--threads", "2", "--out", out.toString());
        assertEquals(0, r.exit(), r.err());
        SamplerConfig config = SamplerConfig.builder().batchSize(4).sequenceLength(128).threads(1).build();
        try (Database d = Database.open(db); BatchBuilder builder = new BatchBuilder(d, config)) {
            BatchBuilder.Stream val = builder.stream(Split.VAL);
            for (int i = 0; i < 2; i++) {
                try (Batch expected = val.next();
                        SafetensorsFile f = SafetensorsFile.open(out.resolve("batch-0000" + i + ".safetensors"))) {
                    assertEquals(expected.tensors().size(), f.size());
                    for (Tensor t : f) {
                        assertEquals(-1, t.data().mismatch(expected.data(t.name())), t.name());
                    }
                }
            }
        }
        assertEquals(SafetensorsCli.EXIT_USAGE, CliTest.run("sampler", "batches", db.toString(), "--seq", "70000",
                "--out", out.toString()).exit());
        assertEquals(SafetensorsCli.EXIT_USAGE, CliTest.run("sampler", "batches", db.toString(), "--split", "test",
                "--out", out.toString()).exit());
    }

    @Test
    void benchReportsThroughput() {
        CliTest.Result r = CliTest.run("sampler", "bench", db.toString(), "--batch", "4", "--seq", "256",
                "--batches", "3", "--warmup", "1", "--threads", "1");
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().contains("samples/s"), r.out());
        assertTrue(r.out().contains("timed  [#"), "progress bar in\n" + r.out());
    }

    @Test
    void aFileTruncatedUnderARunningBenchIsOneLineNamingTheFileAndTheByte() throws Exception {
        Path copy = tmp.resolve("truncated-under-bench");
        assertEquals(0, CliTest.run("sampler", "generate", copy.toString(), "--rows", "3000", "--seed", "5").exit());
        java.io.StringWriter out = new java.io.StringWriter();
        java.io.StringWriter err = new java.io.StringWriter();
        var bench = java.util.concurrent.CompletableFuture.supplyAsync(() -> SafetensorsCli.newCommandLine()
                .setOut(new java.io.PrintWriter(out, true)).setErr(new java.io.PrintWriter(err, true))
                .execute("sampler", "bench", copy.toString(), "--batch", "4", "--seq", "256", "--batches",
                        "1000000", "--warmup", "1", "--threads", "2"));
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (!out.toString().contains("timed ") && !bench.isDone() && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertTrue(out.toString().contains("timed "), "the bench is running: " + out + err);
        Path graph = copy.resolve("graph.bin");
        try (java.nio.channels.FileChannel f = java.nio.channels.FileChannel.open(graph,
                java.nio.file.StandardOpenOption.WRITE)) {
            f.truncate(0);
        }
        int exit = bench.get(60, java.util.concurrent.TimeUnit.SECONDS);
        assertEquals(SafetensorsCli.EXIT_INVALID, exit, out + "\n" + err);
        assertTrue(err.toString().startsWith("error: " + graph + ": the file was truncated"), err.toString());
        assertTrue(err.toString().contains("bytes 0 to "), err.toString());
        assertEquals(1, err.toString().lines().count(), "one line, no stack trace: " + err);
    }

    @Test
    void brokenDatabaseIsOneLineNamingTheFile() throws Exception {
        Path broken = tmp.resolve("broken");
        CliTest.run("sampler", "generate", broken.toString(), "--rows", "100");
        Files.write(broken.resolve("graph.bin"), new byte[] {1, 2, 3});
        CliTest.Result r = CliTest.run("sampler", "info", broken.toString());
        assertEquals(SafetensorsCli.EXIT_INVALID, r.exit());
        assertTrue(r.err().startsWith("error: " + broken.resolve("graph.bin")), r.err());
        assertTrue(r.err().contains("FILE_TOO_SHORT"), r.err());
    }
}
