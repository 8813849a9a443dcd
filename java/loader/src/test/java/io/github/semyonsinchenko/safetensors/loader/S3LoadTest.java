package io.github.semyonsinchenko.safetensors.loader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.statistics.IOStatisticsSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The loader against a real S3 endpoint (s3proxy on loopback) through S3A: request counts from
 * S3A's own IOStatistics, values bit-exact against the local files.
 */
class S3LoadTest {
    @TempDir
    static Path tmp;
    static S3ProxyServer s3;
    static Configuration conf;
    static FileSystem fs;
    static List<Path> files;
    static Map<String, byte[]> reference;
    static final String CKPT = "s3a://models/ckpt";

    @BeforeAll
    static void start() throws Exception {
        s3 = S3ProxyServer.start(tmp.resolve("s3"), List.of("models"), Map.of());
        conf = s3.s3aConf();
        files = TestCheckpoints.write(tmp.resolve("local"), 3, 60, 20_000, 21);
        reference = TestCheckpoints.reference(files);
        fs = FileSystem.get(URI.create("s3a://models/"), conf);
        for (Path p : files) {
            upload(fs, p, CKPT + "/" + p.getFileName());
        }
    }

    /** A plain create + copy (S3A's copyFromLocalFile needs commons-collections4, which we do not ship). */
    static void upload(FileSystem fs, Path local, String target) throws java.io.IOException {
        try (var out = fs.create(new org.apache.hadoop.fs.Path(target), true)) {
            java.nio.file.Files.copy(local, out);
        }
    }

    @AfterAll
    static void stop() throws Exception {
        if (fs != null) {
            fs.close();
        }
        if (s3 != null) {
            s3.close();
        }
    }

    static Map<String, Long> counters() {
        return new HashMap<>(IOStatisticsSupport.retrieveIOStatistics(fs).counters());
    }

    static long delta(Map<String, Long> before, Map<String, Long> after, String key) {
        return after.getOrDefault(key, 0L) - before.getOrDefault(key, 0L);
    }

    private LoaderConfig.Builder config() {
        return LoaderConfig.builder().hadoopConf(conf).metadataCache(new MetadataCache(0)).chunkBytes(256 * 1024)
                .workerThreads(4);
    }

    @Test
    void eachRankIssuesOneGetPerOwnedChunkAndNoHead() throws Exception {
        int world = 2;
        List<String> all = new java.util.ArrayList<>();
        for (int rank = 0; rank < world; rank++) {
            Map<String, Long> before = counters();
            try (SafetensorsLoader loader = SafetensorsLoader.open(config().rank(rank, world).build(), CKPT)) {
                List<String> names = TestCheckpoints.loadAndCheck(loader, reference);
                all.addAll(names);
                Map<String, Long> after = counters();
                String seen = "rank " + rank + ": " + S3ProxyServer.describe(after);
                long owned = loader.chunksToRead().size();
                assertTrue(owned > 2, seen);
                assertEquals(owned + files.size(), delta(before, after, "action_http_get_request"),
                        "one GET per owned chunk plus one per header; " + seen);
                assertEquals(0, delta(before, after, "action_http_head_request"), "no HEAD; " + seen);
                assertEquals(loader.stats().dataBytes() + loader.stats().headerBytes(),
                        delta(before, after, "stream_read_bytes"), seen);
                assertEquals(loader.chunksToRead().stream().mapToLong(Chunk::byteSize).sum(),
                        loader.stats().dataBytes());
            }
        }
        assertEquals(reference.size(), all.size(), "every tensor exactly once across ranks");
        assertEquals(reference.keySet(), new HashSet<>(all));
    }

    @Test
    void worldSizeProcessesTogetherLoadEveryTensorExactlyOnce() throws Exception {
        int world = 3;
        List<Process> procs = new java.util.ArrayList<>();
        List<Path> outs = new java.util.ArrayList<>();
        for (int rank = 0; rank < world; rank++) {
            Path out = tmp.resolve("rank-" + rank + ".txt");
            outs.add(out);
            List<String> cmd = new java.util.ArrayList<>(List.of(
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m",
                    "-XX:+UseSerialGC", "--enable-native-access=ALL-UNNAMED",
                    "-cp", System.getProperty("java.class.path"), RankMain.class.getName(),
                    Integer.toString(rank), Integer.toString(world), out.toString(), CKPT));
            s3.s3aSettings().forEach((k, v) -> cmd.add(k + "=" + v));
            procs.add(new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectOutput(tmp.resolve("rank-" + rank + ".log").toFile()).start());
        }
        Map<String, String> sha = new HashMap<>();
        for (var e : reference.entrySet()) {
            sha.put(e.getKey(), RankMain.sha256(e.getValue()));
        }
        Map<String, Integer> seen = new HashMap<>();
        for (int rank = 0; rank < world; rank++) {
            Process p = procs.get(rank);
            assertTrue(p.waitFor(120, java.util.concurrent.TimeUnit.SECONDS), "rank " + rank + " hung");
            assertEquals(0, p.exitValue(), "rank " + rank + ": "
                    + java.nio.file.Files.readString(tmp.resolve("rank-" + rank + ".log")));
            for (String line : java.nio.file.Files.readAllLines(outs.get(rank))) {
                String[] f = line.split("\t");
                if (f[0].equals("#requests")) {
                    long chunks = Long.parseLong(f[3]);
                    assertEquals(chunks + Long.parseLong(f[4]), Long.parseLong(f[1]), "GETs of rank " + rank);
                    assertEquals(0, Long.parseLong(f[2]), "HEADs of rank " + rank);
                } else {
                    assertEquals(sha.get(f[0]), f[1], f[0] + " from rank " + rank);
                    seen.merge(f[0], 1, Integer::sum);
                }
            }
        }
        assertEquals(reference.keySet(), seen.keySet());
        assertTrue(seen.values().stream().allMatch(n -> n == 1), "each tensor exactly once: " + seen);
    }

    /**
     * Three rank JVMs of a tensor-parallel group over S3A: together they hold every byte of every
     * split tensor exactly once (and every other tensor whole each), bit-exact; each issues one GET
     * per planned request plus one per header and no HEAD, and reads exactly the bytes its slices
     * need (gapBytes 0).
     */
    @Test
    void tensorParallelRanksInSeparateProcessesCoverEverySplitByteOnce() throws Exception {
        List<Path> local = TestCheckpoints.writeMatrices(tmp.resolve("tp-local"), 2, 3, 80, 41);
        Map<String, byte[]> ref = TestCheckpoints.reference(local);
        Map<String, io.github.semyonsinchenko.safetensors.format.TensorInfo> infos = new HashMap<>();
        for (Path p : local) {
            upload(fs, p, "s3a://models/tp/" + p.getFileName());
            try (var f = io.github.semyonsinchenko.safetensors.io.SafetensorsFile.open(p)) {
                f.tensors().forEach(t -> infos.put(t.name(), t.info()));
            }
        }
        int world = 3;
        List<Process> procs = new java.util.ArrayList<>();
        for (int rank = 0; rank < world; rank++) {
            List<String> cmd = new java.util.ArrayList<>(List.of(
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m",
                    "-XX:+UseSerialGC", "--enable-native-access=ALL-UNNAMED", "-Drank.tensorParallel=true",
                    "-cp", System.getProperty("java.class.path"), RankMain.class.getName(),
                    Integer.toString(rank), Integer.toString(world), tmp.resolve("tp-" + rank + ".safetensors").toString(),
                    "s3a://models/tp"));
            s3.s3aSettings().forEach((k, v) -> cmd.add(k + "=" + v));
            procs.add(new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectOutput(tmp.resolve("tp-" + rank + ".log").toFile()).start());
        }
        Map<String, int[]> cover = new HashMap<>();
        ref.forEach((n, b) -> cover.put(n, new int[b.length]));
        int splitTensors = 0;
        for (int rank = 0; rank < world; rank++) {
            Process p = procs.get(rank);
            assertTrue(p.waitFor(180, java.util.concurrent.TimeUnit.SECONDS), "rank " + rank + " hung");
            assertEquals(0, p.exitValue(), "rank " + rank + ": "
                    + java.nio.file.Files.readString(tmp.resolve("tp-" + rank + ".log")));
            try (var f = io.github.semyonsinchenko.safetensors.io.SafetensorsFile.open(
                    tmp.resolve("tp-" + rank + ".safetensors"))) {
                var md = f.metadata();
                assertEquals(Long.parseLong(md.get("#planned")), Long.parseLong(md.get("#gets")),
                        "rank " + rank + ": one GET per planned request and header");
                assertEquals(0, Long.parseLong(md.get("#heads")), "rank " + rank);
                long needed = 0;
                assertEquals(ref.keySet(), f.asMap().keySet(), "rank " + rank + " holds every tensor (its part)");
                for (var t : f) {
                    var slice = io.github.semyonsinchenko.safetensors.io.Slice.parse(md.get(t.name()));
                    var layout = io.github.semyonsinchenko.safetensors.io.SliceLayout.of(infos.get(t.name()), slice);
                    assertEquals(java.util.Arrays.toString(layout.shape()), java.util.Arrays.toString(t.shape()));
                    byte[] got = t.toByteArray();
                    int at = 0;
                    for (var r : layout.runs()) {
                        for (long b = r.offset(); b < r.end(); b++) {
                            cover.get(t.name())[(int) b]++;
                            assertEquals(ref.get(t.name())[(int) b], got[at++], t.name() + " rank " + rank);
                        }
                    }
                    needed += layout.byteSize();
                    splitTensors += slice.isWhole() ? 0 : 1;
                }
                assertEquals(needed, Long.parseLong(md.get("#read")), "rank " + rank + " reads exactly the bytes"
                        + " of its slices (no gap allowed)");
            }
        }
        TensorParallel rule = TensorParallel.of(world, 0).rowParallel("*.o_proj.weight", "*.down_proj.weight")
                .splitVectors("*.bias");
        for (var e : cover.entrySet()) {
            int expect = rule.splitDim(infos.get(e.getKey())) >= 0 ? 1 : world;
            for (int c : e.getValue()) {
                assertEquals(expect, c, e.getKey() + ": each byte " + (expect == 1 ? "once" : "once per rank"));
            }
        }
        assertTrue(splitTensors > 10, splitTensors + " split tensors");
    }

    @Test
    void legacyIssuesOneGetPerTensor() throws Exception {
        Map<String, Long> before = counters();
        try (SafetensorsLoader loader = SafetensorsLoader.open(config().legacy(true).build(), CKPT)) {
            TestCheckpoints.loadAndCheck(loader, reference);
            long nonEmpty = reference.values().stream().filter(b -> b.length > 0).count();
            assertEquals(nonEmpty + files.size(), delta(before, counters(), "action_http_get_request"));
        }
    }

    @Test
    void splitChunksAndIndexFilesWork() throws Exception {
        Map<String, Long> before = counters();
        try (SafetensorsLoader loader = SafetensorsLoader.open(config().chunkBytes(1 << 20).requestBytes(100_000)
                .build(), CKPT + "/*.safetensors")) {
            assertEquals(reference.size(), TestCheckpoints.loadAndCheck(loader, reference).size());
            long ranges = loader.plan().chunks().stream().mapToLong(c -> c.ranges().size()).sum();
            assertTrue(ranges > loader.plan().chunks().size());
            assertEquals(ranges + files.size(), delta(before, counters(), "action_http_get_request"));
            assertEquals(0, delta(before, counters(), "action_http_head_request"));
        }
    }

    /** A chunk large enough for on-demand memory, filled by concurrent sub-range GETs, arrives bit-exact. */
    @Test
    void largeChunksFilledBySubRangeGetsAreBitExact() throws Exception {
        List<Path> big = TestCheckpoints.write(tmp.resolve("big"), 1, 8, 2_000_000, 14);
        Map<String, byte[]> bigReference = TestCheckpoints.reference(big);
        String uri = "s3a://models/big/" + big.get(0).getFileName();
        upload(fs, big.get(0), uri);
        Map<String, Long> before = counters();
        try (SafetensorsLoader loader = SafetensorsLoader.open(config().chunkBytes(64 << 20).requestBytes(3 << 20)
                .build(), uri)) {
            Chunk only = loader.plan().chunks().getFirst();
            assertEquals(1, loader.plan().chunks().size());
            assertTrue(only.byteSize() >= ChunkBuffer.HUGE_PAGE_MIN_BYTES, only.byteSize() + " bytes");
            assertTrue(only.ranges().size() >= 3, only.ranges().size() + " ranges");
            assertEquals(bigReference.size(), TestCheckpoints.loadAndCheck(loader, bigReference).size());
            Map<String, Long> after = counters();
            assertEquals(only.ranges().size() + 1L, delta(before, after, "action_http_get_request"),
                    "one GET per sub-range plus the header; " + S3ProxyServer.describe(after));
            assertEquals(0, delta(before, after, "action_http_head_request"));
            assertEquals(only.byteSize(), loader.stats().dataBytes());
        }
    }
}
