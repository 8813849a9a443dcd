package io.github.semyonsinchenko.safetensors.loader;

import io.github.semyonsinchenko.safetensors.format.LittleEndian;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.format.SafetensorsException;
import java.io.FileNotFoundException;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The loader on the local file system, through a counting, fault-injecting filter. */
class LocalLoadTest {
    @TempDir
    Path tmp;

    @BeforeEach
    void resetCounters() {
        FaultyFileSystem.reset();
    }

    private LoaderConfig.Builder config() {
        return LoaderConfig.builder().hadoopConf(FaultyFileSystem.conf()).metadataCache(new MetadataCache(100))
                .chunkBytes(64 * 1024).workerThreads(4)
                .retries(4, Duration.ofMillis(1), Duration.ofMillis(4));
    }

    private static String uri(Path p) {
        return p.toUri().toString();
    }

    private static int requests(List<Chunk> chunks) {
        return chunks.stream().mapToInt(c -> c.ranges().size()).sum();
    }

    @Test
    void aDirectoryLoadsBitExactInOneRequestPerChunkWithoutStatusCalls() throws Exception {
        List<Path> files = TestCheckpoints.write(tmp.resolve("ckpt"), 3, 40, 5000, 1);
        Map<String, byte[]> reference = TestCheckpoints.reference(files);
        try (SafetensorsLoader loader = SafetensorsLoader.open(config().build(), uri(tmp.resolve("ckpt")))) {
            ChunkPlan plan = loader.plan();
            assertTrue(plan.chunks().size() > 3 && plan.chunks().size() < plan.tensorCount() / 4, plan.chunks().size()
                    + " chunks for " + plan.tensorCount() + " tensors");
            List<String> names = TestCheckpoints.loadAndCheck(loader, reference);
            assertEquals(reference.keySet(), new HashSet<>(names));
            assertEquals(reference.size(), names.size(), "each tensor once");
            LoadStats s = loader.stats();
            assertEquals(requests(plan.chunks()), s.dataRequests());
            assertEquals(3, s.headerRequests(), "one speculative read per header");
            assertEquals(plan.totalBytes(), s.dataBytes());
            // What the file system saw: the same requests, two listings (parent, directory), no status call.
            assertEquals(s.requests(), FaultyFileSystem.READS.get());
            assertEquals(0, FaultyFileSystem.STATUS_CALLS.get());
            assertEquals(2, FaultyFileSystem.LISTINGS.get());
        }
    }

    @Test
    void legacyIssuesOneRequestPerTensor() throws Exception {
        List<Path> files = TestCheckpoints.write(tmp.resolve("ckpt"), 1, 30, 3000, 2);
        Map<String, byte[]> reference = TestCheckpoints.reference(files);
        try (SafetensorsLoader loader = SafetensorsLoader.open(config().legacy(true).build(), uri(files.get(0)))) {
            assertEquals(30, loader.plan().chunks().size());
            TestCheckpoints.loadAndCheck(loader, reference);
            long nonEmpty = reference.values().stream().filter(b -> b.length > 0).count();
            assertEquals(nonEmpty, loader.stats().dataRequests());
        }
    }

    @Test
    void ranksTogetherLoadEveryTensorExactlyOnce() throws Exception {
        List<Path> files = TestCheckpoints.write(tmp.resolve("ckpt"), 2, 50, 4000, 3);
        Map<String, byte[]> reference = TestCheckpoints.reference(files);
        for (int world : new int[] {1, 2, 3, 5}) {
            List<String> all = new ArrayList<>();
            for (int rank = 0; rank < world; rank++) {
                try (SafetensorsLoader loader = SafetensorsLoader.open(config().rank(rank, world).build(),
                        uri(tmp.resolve("ckpt")))) {
                    List<Chunk> mine = loader.plan().owned(rank, world);
                    assertEquals(mine, loader.chunksToRead());
                    all.addAll(TestCheckpoints.loadAndCheck(loader, reference));
                    assertEquals(requests(mine), loader.stats().dataRequests(), "rank " + rank + " of " + world);
                }
            }
            assertEquals(reference.size(), all.size(), "world " + world);
            assertEquals(reference.keySet(), new HashSet<>(all), "world " + world);
        }
        // All-ranks mode reads everything whatever the rank.
        try (SafetensorsLoader loader = SafetensorsLoader.open(config().rank(1, 3).readAll(true).build(),
                uri(tmp.resolve("ckpt")))) {
            assertEquals(reference.size(), TestCheckpoints.loadAndCheck(loader, reference).size());
        }
    }

    @Test
    void globsIndexFilesAndSingleFilesResolve() throws Exception {
        List<Path> files = TestCheckpoints.write(tmp.resolve("ckpt"), 3, 10, 100, 4);
        Map<String, byte[]> reference = TestCheckpoints.reference(files);
        // An HF index naming two of the three shards.
        Map<String, byte[]> indexed = new HashMap<>();
        StringBuilder map = new StringBuilder();
        for (Path p : files.subList(0, 2)) {
            for (String name : TestCheckpoints.reference(List.of(p)).keySet()) {
                map.append(indexed.isEmpty() ? "" : ",").append('"').append(name).append("\": \"")
                        .append(p.getFileName()).append('"');
                indexed.put(name, reference.get(name));
            }
        }
        long total = indexed.values().stream().mapToLong(b -> b.length).sum();
        Files.writeString(tmp.resolve("ckpt/model.safetensors.index.json"),
                "{\"metadata\": {\"total_size\": " + total + "}, \"weight_map\": {" + map + "}}");
        try (SafetensorsLoader loader = SafetensorsLoader.open(config().build(),
                uri(tmp.resolve("ckpt/model.safetensors.index.json")))) {
            assertEquals(2, loader.files().size());
            assertEquals(indexed.keySet(), new HashSet<>(TestCheckpoints.loadAndCheck(loader, reference)));
        }
        try (SafetensorsLoader loader = SafetensorsLoader.open(config().build(),
                uri(tmp.resolve("ckpt")) + "/model-0000[23]-*.safetensors")) {
            assertEquals(2, loader.files().size());
        }
        try (SafetensorsLoader loader = SafetensorsLoader.open(config().build(), uri(files.get(2)), uri(files.get(2)))) {
            assertEquals(1, loader.files().size(), "the same file named twice is loaded once");
            assertEquals(10, TestCheckpoints.loadAndCheck(loader, reference).size());
        }
        assertEquals(0, FaultyFileSystem.STATUS_CALLS.get());
        FileNotFoundException missing = assertThrows(FileNotFoundException.class,
                () -> SafetensorsLoader.open(config().build(), uri(tmp.resolve("ckpt/nope.safetensors"))));
        assertTrue(missing.getMessage().contains("nope.safetensors"), missing.getMessage());
        Files.writeString(tmp.resolve("ckpt/bad.index.json"), "{\"weight_map\": {\"a\": \"gone.safetensors\"}}");
        FileNotFoundException shard = assertThrows(FileNotFoundException.class,
                () -> SafetensorsLoader.open(config().build(), uri(tmp.resolve("ckpt/bad.index.json"))));
        assertTrue(shard.getMessage().contains("gone.safetensors"), shard.getMessage());
    }

    @Test
    void subRangeRequestsSplitAChunk() throws Exception {
        List<Path> files = TestCheckpoints.write(tmp.resolve("ckpt"), 1, 20, 20_000, 5);
        Map<String, byte[]> reference = TestCheckpoints.reference(files);
        try (SafetensorsLoader loader = SafetensorsLoader.open(config().chunkBytes(1 << 20).requestBytes(7_777).build(),
                uri(files.get(0)))) {
            Chunk first = loader.plan().chunks().get(0);
            assertTrue(first.ranges().size() > 5, first.ranges().size() + " ranges");
            TestCheckpoints.loadAndCheck(loader, reference);
            assertEquals(requests(loader.plan().chunks()), loader.stats().dataRequests());
        }
    }

    @Test
    void prefetchStaysWithinTheByteBudgetAndNeverStalls() throws Exception {
        List<Path> files = TestCheckpoints.write(tmp.resolve("ckpt"), 1, 60, 8000, 6);
        Map<String, byte[]> reference = TestCheckpoints.reference(files);
        long budget = 100_000;
        try (SafetensorsLoader loader = SafetensorsLoader.open(config().chunkBytes(40_000).byteBudget(budget)
                .prefetchDepth(3).build(), uri(files.get(0)))) {
            long largest = loader.plan().chunks().stream().mapToLong(Chunk::byteSize).max().orElseThrow();
            TestCheckpoints.loadAndCheck(loader, reference);
            assertTrue(loader.peakResidentBytes() <= budget + largest,
                    loader.peakResidentBytes() + " > " + budget + " + " + largest);
            assertEquals(0, loader.residentBytes(), "every chunk freed once its tensors were closed");
        }
        // A consumer that keeps every tensor: over budget, yet each next chunk is still admitted.
        try (SafetensorsLoader loader = SafetensorsLoader.open(config().chunkBytes(40_000).byteBudget(1).build(),
                uri(files.get(0)))) {
            List<LoadedTensor> held = new ArrayList<>();
            LoadedTensor t;
            while ((t = loader.next()) != null) {
                held.add(t);
            }
            assertEquals(60, held.size());
            assertEquals(loader.plan().totalBytes(), loader.residentBytes());
            held.forEach(LoadedTensor::close);
            assertEquals(0, loader.residentBytes());
            assertThrows(IllegalStateException.class, () -> held.get(0).data());
        }
    }

    @Test
    void withHugePagesLargeChunksLiveInHugePageAlignedMemory() throws Exception {
        List<Path> files = TestCheckpoints.write(tmp.resolve("ckpt"), 1, 8, 2_000_000, 14);
        Map<String, byte[]> reference = TestCheckpoints.reference(files);
        try (SafetensorsLoader loader = SafetensorsLoader.open(config().chunkBytes(64 << 20).hugePages(true).build(),
                uri(files.get(0)))) {
            Chunk only = loader.plan().chunks().getFirst();
            assertEquals(1, loader.plan().chunks().size());
            assertTrue(only.byteSize() >= ChunkBuffer.HUGE_PAGE_MIN_BYTES, only.byteSize() + " bytes");
            LoadedTensor first = loader.next();
            if (!io.github.semyonsinchenko.safetensors.kernels.HugePages.status().startsWith("unavailable")) {
                assertEquals(0, first.data().address() % io.github.semyonsinchenko.safetensors.kernels.HugePages.HUGE_PAGE_BYTES,
                        "the chunk starts on a huge page");
            }
            assertTrue(java.util.Arrays.equals(reference.get(first.name()), first.data().toArray(ValueLayout.JAVA_BYTE)));
            first.close();
            assertEquals(7, TestCheckpoints.loadAndCheck(loader, reference).size());
        }
    }

    @Test
    void tensorsHeldPastCloseFailCleanly() throws Exception {
        List<Path> files = TestCheckpoints.write(tmp.resolve("ckpt"), 1, 20, 3000, 7);
        SafetensorsLoader loader = SafetensorsLoader.open(config().build(), uri(files.get(0)));
        LoadedTensor t = loader.next();
        var segment = t.data();
        loader.close();
        assertThrows(IllegalStateException.class, () -> segment.get(ValueLayout.JAVA_BYTE, 0));
        t.close(); // after the loader: harmless
        assertThrows(IllegalStateException.class, loader::next);
        loader.close(); // idempotent
    }

    @Test
    void floatTensorsConvertToF32OnTheWayOut() throws Exception {
        List<Path> files = TestCheckpoints.write(tmp.resolve("ckpt"), 1, 40, 2000, 8);
        Map<String, byte[]> reference = TestCheckpoints.reference(files);
        int converted = 0;
        try (SafetensorsLoader loader = SafetensorsLoader.open(config().convertTo(Dtype.F32).build(),
                uri(files.get(0)))) {
            LoadedTensor t;
            while ((t = loader.next()) != null) {
                try (LoadedTensor closing = t) {
                    ByteBuffer src = ByteBuffer.wrap(reference.get(t.name())).order(ByteOrder.LITTLE_ENDIAN);
                    switch (t.storedDtype()) {
                        case BF16, F16 -> {
                            assertEquals(Dtype.F32, t.dtype());
                            long n = TestCheckpoints.product(t.shape());
                            assertEquals(n * 4, t.byteSize());
                            for (int i = 0; i < n; i++) {
                                short bits = src.getShort(i * 2);
                                float expected = t.storedDtype() == Dtype.BF16
                                        ? Float.intBitsToFloat(bits << 16) : f16ToF32(bits);
                                float actual = t.data().get(LittleEndian.F32, i * 4L);
                                assertEquals(Float.floatToRawIntBits(expected), Float.floatToRawIntBits(actual),
                                        t.name() + "[" + i + "]");
                            }
                            converted++;
                        }
                        default -> {
                            assertEquals(t.storedDtype(), t.dtype(), "integers and F32 pass through: " + t.name());
                            assertEquals(reference.get(t.name()).length, t.byteSize());
                        }
                    }
                }
            }
            assertEquals(0, loader.residentBytes());
        }
        assertTrue(converted > 5, converted + " converted");
    }

    /** Exact widening; unlike Float.float16ToFloat, a signalling NaN stays signalling (the kernels' rule). */
    private static float f16ToF32(short bits) {
        if ((bits & 0x7C00) == 0x7C00 && (bits & 0x3FF) != 0) {
            return Float.intBitsToFloat(((bits & 0x8000) << 16) | 0x7F800000 | ((bits & 0x3FF) << 13));
        }
        return Float.float16ToFloat(bits);
    }

    @Test
    void theMetadataCacheSkipsHeadersUntilTheFileChanges() throws Exception {
        List<Path> files = TestCheckpoints.write(tmp.resolve("ckpt"), 2, 10, 100, 9);
        MetadataCache cache = new MetadataCache(10);
        LoaderConfig cfg = config().metadataCache(cache).build();
        try (SafetensorsLoader loader = SafetensorsLoader.open(cfg, uri(tmp.resolve("ckpt")))) {
            assertEquals(2, loader.stats().headerRequests());
        }
        try (SafetensorsLoader loader = SafetensorsLoader.open(cfg, uri(tmp.resolve("ckpt")))) {
            assertEquals(0, loader.stats().headerRequests());
            assertEquals(2, loader.stats().cachedHeaders());
        }
        Path other = TestCheckpoints.write(tmp.resolve("other"), 1, 12, 100, 10).get(0);
        Files.copy(other, files.get(0), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        Map<String, byte[]> reference = TestCheckpoints.reference(List.of(files.get(0)));
        try (SafetensorsLoader loader = SafetensorsLoader.open(cfg, uri(files.get(0)))) {
            assertEquals(1, loader.stats().headerRequests(), "a changed file's header is read again");
            assertEquals(12, TestCheckpoints.loadAndCheck(loader, reference).size());
        }
    }

    @Test
    void aLargeHeaderTakesASecondReadAndABadOneIsCoresTypedError() throws Exception {
        List<Path> files = TestCheckpoints.write(tmp.resolve("ckpt"), 1, 30, 100, 11);
        Map<String, byte[]> reference = TestCheckpoints.reference(files);
        try (SafetensorsLoader loader = SafetensorsLoader.open(config().speculativeHeaderBytes(64).build(),
                uri(files.get(0)))) {
            assertEquals(2, loader.stats().headerRequests());
            assertEquals(30, TestCheckpoints.loadAndCheck(loader, reference).size());
        }
        Path bad = tmp.resolve("bad.safetensors");
        byte[] bytes = Files.readAllBytes(files.get(0));
        bytes[12] = '#'; // inside the JSON
        Files.write(bad, bytes);
        SafetensorsException e = assertThrows(SafetensorsException.class,
                () -> SafetensorsLoader.open(config().build(), uri(bad)));
        assertTrue(e.getMessage().contains("bad.safetensors"), e.getMessage());
        Files.write(bad, new byte[] {1, 2, 3});
        assertThrows(SafetensorsException.class, () -> SafetensorsLoader.open(config().build(), uri(bad)));
    }

    @Test
    void transientFailuresAndTruncationsAreRetried() throws Exception {
        List<Path> files = TestCheckpoints.write(tmp.resolve("ckpt"), 1, 40, 5000, 12);
        Map<String, byte[]> reference = TestCheckpoints.reference(files);
        // The header read is read 0; fail reads 1 and 2, truncate reads 4 and 6.
        FaultyFileSystem.faults = (offset, length, i) -> switch (i) {
            case 1, 2 -> FaultyFileSystem.Fault.FAIL;
            case 4, 6 -> FaultyFileSystem.Fault.TRUNCATE;
            default -> FaultyFileSystem.Fault.NONE;
        };
        try (SafetensorsLoader loader = SafetensorsLoader.open(config().build(), uri(files.get(0)))) {
            assertEquals(40, TestCheckpoints.loadAndCheck(loader, reference).size());
            assertEquals(4, loader.stats().retries());
            assertEquals(requests(loader.plan().chunks()) + 4, loader.stats().dataRequests());
        }
    }

    @Test
    void aPersistentFailureNamesFileRangeAndTensorsAndHandsOutNothingOfThem() throws Exception {
        List<Path> files = TestCheckpoints.write(tmp.resolve("ckpt"), 1, 40, 5000, 13);
        Map<String, byte[]> reference = TestCheckpoints.reference(files);
        SafetensorsLoader probe = SafetensorsLoader.open(config().build(), uri(files.get(0)));
        Chunk doomed = probe.plan().chunks().get(2);
        probe.close();
        for (FaultyFileSystem.Fault kind : List.of(FaultyFileSystem.Fault.FAIL, FaultyFileSystem.Fault.TRUNCATE)) {
            FaultyFileSystem.faults = (offset, length, i) -> offset == doomed.start() ? kind : FaultyFileSystem.Fault.NONE;
            try (SafetensorsLoader loader = SafetensorsLoader.open(config().build(), uri(files.get(0)))) {
                Set<String> handed = new HashSet<>();
                ChunkReadException e = assertThrows(ChunkReadException.class, () -> {
                    LoadedTensor t;
                    while ((t = loader.next()) != null) {
                        try (LoadedTensor closing = t) {
                            assertTrue(java.util.Arrays.equals(reference.get(t.name()),
                                    t.data().toArray(ValueLayout.JAVA_BYTE)), t.name());
                            handed.add(t.name());
                        }
                    }
                });
                assertEquals(doomed, e.chunk());
                String msg = e.getMessage();
                assertTrue(msg.contains(files.get(0).getFileName().toString()), msg);
                assertTrue(msg.contains("[" + doomed.start() + ", " + doomed.end() + ")"), msg);
                assertTrue(msg.contains(doomed.tensors().getFirst().name()), msg);
                // One count, the real one (it used to read "failed after -1 attempt(s): ... failed after 4 attempt(s)").
                assertTrue(msg.startsWith("reading " + doomed.describe() + " failed after 4 attempts: "), msg);
                assertEquals(msg.indexOf("failed after"), msg.lastIndexOf("failed after"), msg);
                assertEquals(4, e.attempts());
                for (PlannedTensor t : doomed.tensors()) {
                    assertFalse(handed.contains(t.name()), t.name() + " of the failed chunk was handed out");
                }
                assertEquals(doomed.tensors().getFirst().fileOffset(),
                        loader.plan().chunks().get(2).start());
            }
        }
    }

    /** A large chunk (memory mapped on demand) whose one sub-range stays short: typed error, nothing handed out, memory freed. */
    @Test
    void aShortSubRangeOfALargeChunkFailsItWholeAndFreesIt() throws Exception {
        List<Path> files = TestCheckpoints.write(tmp.resolve("big"), 1, 8, 2_000_000, 15);
        Map<String, byte[]> reference = TestCheckpoints.reference(files);
        LoaderConfig.Builder big = config().chunkBytes(64 << 20).requestBytes(3 << 20);
        Chunk doomed;
        try (SafetensorsLoader probe = SafetensorsLoader.open(big.build(), uri(files.get(0)))) {
            doomed = probe.plan().chunks().getFirst();
        }
        assertTrue(doomed.byteSize() >= ChunkBuffer.HUGE_PAGE_MIN_BYTES, doomed.byteSize() + " bytes");
        assertTrue(doomed.ranges().size() >= 3, doomed.ranges().size() + " ranges");
        long shortOne = doomed.ranges().get(1).offset();
        FaultyFileSystem.faults = (offset, length, i) -> offset == shortOne ? FaultyFileSystem.Fault.TRUNCATE
                : FaultyFileSystem.Fault.NONE;
        SafetensorsLoader loader = SafetensorsLoader.open(big.build(), uri(files.get(0)));
        try {
            ChunkReadException e = assertThrows(ChunkReadException.class, loader::next,
                    "no tensor of a chunk with a short range may be handed out");
            assertEquals(doomed, e.chunk());
            String msg = e.getMessage();
            assertTrue(msg.contains(files.get(0).getFileName().toString()), msg);
            assertTrue(msg.contains("[" + doomed.start() + ", " + doomed.end() + ")"), msg);
            assertTrue(msg.contains(doomed.tensors().getFirst().name()), msg);
            assertTrue(msg.startsWith("reading " + doomed.describe() + " failed after 4 attempts: "), msg);
            assertEquals(msg.indexOf("failed after"), msg.lastIndexOf("failed after"), msg);
        } finally {
            loader.close();
        }
        assertEquals(0, loader.residentBytes(), "the failed chunk's memory is freed at close");
        FaultyFileSystem.faults = (offset, length, i) -> FaultyFileSystem.Fault.NONE;
        try (SafetensorsLoader again = SafetensorsLoader.open(big.build(), uri(files.get(0)))) {
            assertEquals(reference.size(), TestCheckpoints.loadAndCheck(again, reference).size());
        }
    }

    @Test
    void configurationComesFromPropertiesThenEnvironment() {
        Map<String, String> props = Map.of("safetensors.loader.chunkBytes", "1_000_000",
                "safetensors.loader.legacy", "true");
        Map<String, String> env = Map.of("SAFETENSORS_LOADER_CHUNK_BYTES", "5",
                "SAFETENSORS_LOADER_MAX_CONCURRENT_CHUNKS", "9", "SAFETENSORS_LOADER_PREFETCH_DEPTH", "0",
                "SAFETENSORS_LOADER_HUGE_PAGES", "TRUE");
        LoaderConfig c = LoaderConfig.fromEnvironment(props, env).build();
        assertEquals(1_000_000, c.chunkBytes());
        assertTrue(c.legacy());
        assertEquals(9, c.maxConcurrentChunks());
        assertEquals(0, c.prefetchDepth());
        assertEquals(0, c.workerThreads());
        assertTrue(c.hugePages());
        LoaderConfig d = LoaderConfig.builder().build();
        assertEquals(2_000_000_000L, d.chunkBytes());
        assertEquals(0, d.requestBytes());
        // 0: sub-range requests on object stores, one request per chunk elsewhere
        assertEquals(LoaderConfig.OBJECT_STORE_REQUEST_BYTES,
                d.requestBytesFor(List.of("hdfs://nn/a.safetensors", "s3a://bucket/m/b.safetensors")));
        assertEquals(LoaderConfig.OBJECT_STORE_REQUEST_BYTES, d.requestBytesFor(List.of("GS://bucket/b.safetensors")));
        assertEquals(Integer.MAX_VALUE, d.requestBytesFor(List.of("hdfs://nn/a.safetensors", "file:/tmp/my dir/b",
                "/tmp/c.safetensors")));
        assertEquals(1000, LoaderConfig.builder().requestBytes(1000).build()
                .requestBytesFor(List.of("s3a://bucket/b.safetensors")));
        // 0: more requests in flight on object stores, where each one mostly waits on the store
        assertEquals(LoaderConfig.OBJECT_STORE_WORKER_THREADS,
                d.workerThreadsFor(List.of("/tmp/a.safetensors", "s3a://bucket/m/")));
        assertEquals(LoaderConfig.DEFAULT_WORKER_THREADS, d.workerThreadsFor(List.of("hdfs://nn/m/", "/tmp/m/*")));
        assertEquals(3, LoaderConfig.builder().workerThreads(3).build().workerThreadsFor(List.of("s3a://b/m/")));
        assertThrows(IllegalArgumentException.class, () -> LoaderConfig.builder().workerThreads(-1).build());
        assertNull(d.convertTo());
        assertFalse(d.hugePages(), "huge pages are opt-in: their first touch can stall on compaction");
        assertNotNull(d.hadoopConf());
        IllegalArgumentException bad = assertThrows(IllegalArgumentException.class,
                () -> LoaderConfig.fromEnvironment(Map.of(), Map.of("SAFETENSORS_LOADER_BYTE_BUDGET", "lots")));
        assertTrue(bad.getMessage().contains("option 'byteBudget' is 'lots'; allowed: a whole number of bytes"),
                bad.getMessage());
        IllegalArgumentException notBool = assertThrows(IllegalArgumentException.class,
                () -> LoaderConfig.fromEnvironment(Map.of(), Map.of("SAFETENSORS_LOADER_HUGE_PAGES", "yes")));
        assertTrue(notBool.getMessage().contains("option 'hugePages' is 'yes'; allowed: true, false (default)"),
                notBool.getMessage());
        // A misspelt knob is refused, not ignored, whichever way it is set.
        IllegalArgumentException misspelt = assertThrows(IllegalArgumentException.class,
                () -> LoaderConfig.fromEnvironment(Map.of(), Map.of("SAFETENSORS_LOADER_CHUNK_BYTE", "5")));
        assertTrue(misspelt.getMessage().contains("'chunkByte'; did you mean 'chunkBytes'?"), misspelt.getMessage());
        misspelt = assertThrows(IllegalArgumentException.class, () -> LoaderConfig.fromEnvironment(
                Map.of("safetensors.loader.prefetchdepht", "1"), Map.of()));
        assertTrue(misspelt.getMessage().contains("did you mean 'prefetchDepth'?"), misspelt.getMessage());
        assertEquals(3, LoaderConfig.fromEnvironment(Map.of("safetensors.loader.PREFETCHDEPTH", "3"), Map.of(
                "OTHER_TOOL_SETTING", "x")).build().prefetchDepth(), "names are case-insensitive; others ignored");
        assertThrows(IllegalArgumentException.class, () -> LoaderConfig.builder().rank(2, 2).build());
        assertThrows(IllegalArgumentException.class, () -> LoaderConfig.builder().chunkBytes(0).build());
        assertThrows(IllegalArgumentException.class,
                () -> LoaderConfig.builder().retries(3, Duration.ofMillis(-1), Duration.ofSeconds(1)).build());
        // A cap below the first wait is the first wait.
        assertEquals(Duration.ofSeconds(1), LoaderConfig.builder().retries(3, Duration.ofSeconds(1),
                Duration.ofMillis(10)).build().retryPolicy().backoff(3));
        assertEquals(Duration.ofMillis(400), LoaderConfig.builder().build().retryPolicy().backoff(3));
    }
}
