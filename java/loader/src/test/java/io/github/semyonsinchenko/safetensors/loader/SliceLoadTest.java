package io.github.semyonsinchenko.safetensors.loader;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.format.TensorInfo;
import io.github.semyonsinchenko.safetensors.io.SafetensorsFile;
import io.github.semyonsinchenko.safetensors.io.Slice;
import io.github.semyonsinchenko.safetensors.io.SliceLayout;
import io.github.semyonsinchenko.safetensors.io.SliceOutOfBoundsException;
import io.github.semyonsinchenko.safetensors.io.Tensor;
import java.lang.foreign.Arena;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Random;
import java.util.Set;
import java.util.function.Function;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Selections and slices through the loader on the local file system (behind the counting,
 * fault-injecting filter): what is handed out equals core's slice of the mapped file, bit for bit;
 * what is read is only what the slices need (exactly, with no gap allowed); lookups by name;
 * tensor-parallel ranks covering every byte of every split tensor exactly once; conversions of
 * slices; failures and retries of sliced chunks.
 */
class SliceLoadTest {
    @TempDir
    Path tmp;

    @BeforeEach
    void reset() {
        FaultyFileSystem.reset();
    }

    private LoaderConfig.Builder config() {
        return LoaderConfig.builder().hadoopConf(FaultyFileSystem.conf()).metadataCache(new MetadataCache(100))
                .chunkBytes(48 * 1024).workerThreads(3).retries(4, Duration.ofMillis(1), Duration.ofMillis(4));
    }

    private static String uri(Path p) {
        return p.toUri().toString();
    }

    /** A random slice of a tensor: rows, columns, steps, a single index, or whole. */
    static Slice randomSlice(TensorInfo t, Random rnd) {
        if (t.rank() == 0 || rnd.nextInt(6) == 0) {
            return Slice.whole();
        }
        List<Slice.Index> idx = new ArrayList<>();
        int given = 1 + rnd.nextInt(t.rank());
        for (int d = 0; d < given; d++) {
            long n = t.dim(d);
            if (n == 0) {
                idx.add(Slice.all());
                continue;
            }
            switch (rnd.nextInt(4)) {
                case 0 -> idx.add(Slice.at(rnd.nextInt((int) n)));
                case 1 -> idx.add(Slice.all());
                default -> {
                    long s = rnd.nextInt((int) n);
                    long e = s + 1 + rnd.nextInt((int) (n - s));
                    idx.add(Slice.range(s, e, 1 + rnd.nextInt(3)));
                }
            }
        }
        return Slice.of(idx);
    }

    /** Expected bytes of every selected tensor's slice, from core's reader of the local files. */
    static Map<String, byte[]> expected(List<Path> files, TensorSelection selection) throws Exception {
        Map<String, byte[]> out = new HashMap<>();
        for (Path p : files) {
            try (SafetensorsFile f = SafetensorsFile.open(p)) {
                for (Tensor t : f) {
                    if (selection.selects(t.name())) {
                        out.put(t.name(), t.slice(selection.sliceOf(t.info())).toByteArray());
                    }
                }
            }
        }
        return out;
    }

    @Test
    void selectionsAndSlicesAreBitExactAndReadOnlyWhatTheyNeed() throws Exception {
        List<Path> files = TestCheckpoints.writeMatrices(tmp.resolve("ckpt"), 2, 6, 70, 7);
        Map<String, TensorInfo> infos = new HashMap<>();
        for (Path p : files) {
            try (SafetensorsFile f = SafetensorsFile.open(p)) {
                f.tensors().forEach(t -> infos.put(t.name(), t.info()));
            }
        }
        Random rnd = new Random(11);
        for (int iter = 0; iter < 24; iter++) {
            Map<String, Slice> slices = new HashMap<>();
            infos.forEach((n, t) -> slices.put(n, randomSlice(t, rnd)));
            TensorSelection selection = switch (iter % 4) {
                case 0 -> TensorSelection.all();
                case 1 -> TensorSelection.globs("model.layers.[13579].*", "*.scale");
                case 2 -> TensorSelection.names(infos.keySet().stream().filter(n -> rnd.nextBoolean()).toList());
                default -> TensorSelection.matching(n -> n.contains("proj"));
            };
            selection = selection.slices(t -> slices.get(t.name()));
            long gap = iter % 3 == 0 ? 0 : iter % 3 == 1 ? 64 : 1 << 20;
            Map<String, byte[]> want = expected(files, selection);
            FaultyFileSystem.reset();
            LoaderConfig config = config().gapBytes(gap).legacy(iter % 7 == 6).build();
            String what = "iteration " + iter + ", gap " + gap + ", " + selection;
            try (SafetensorsLoader loader = SafetensorsLoader.open(config, selection, List.of(uri(tmp.resolve("ckpt"))))) {
                Set<String> seen = new HashSet<>();
                long needed = 0;
                LoadedTensor t;
                while ((t = loader.next()) != null) {
                    try (LoadedTensor closing = t) {
                        assertTrue(seen.add(t.name()), what + ": " + t.name() + " twice");
                        assertArrayEquals(want.get(t.name()), t.data().toArray(ValueLayout.JAVA_BYTE), what + " " + t.name());
                        SliceLayout layout = SliceLayout.of(infos.get(t.name()), slices.get(t.name()));
                        assertArrayEquals(layout.shape(), t.shape(), t.name());
                        assertEquals(slices.get(t.name()), t.slice());
                        assertArrayEquals(infos.get(t.name()).shape(), t.tensorShape());
                        assertTrue(t.data().isReadOnly());
                        needed += layout.byteSize();
                    }
                }
                assertEquals(want.keySet(), seen, what);
                LoadStats s = loader.stats();
                assertEquals(needed, s.bytesHandedOut(), what);
                assertEquals(loader.plan().totalBytes(), s.dataBytes(), what);
                assertEquals(s.dataBytes() + s.headerBytes(), FaultyFileSystem.BYTES.get(), what);
                if (gap == 0) {
                    assertEquals(needed, s.dataBytes(), "with no gap allowed, exactly the needed bytes are read; " + what);
                } else {
                    assertTrue(s.dataBytes() >= needed, what);
                }
                checkReadsSpanOnlySmallGaps(loader, gap, what);
            }
        }
    }

    /** Every byte a request reads is needed by a slice, or lies in a gap of at most {@code gap} bytes. */
    private static void checkReadsSpanOnlySmallGaps(SafetensorsLoader loader, long gap, String what) {
        for (Chunk c : loader.plan().chunks()) {
            List<long[]> needed = new ArrayList<>();
            for (PlannedTensor t : c.tensors()) {
                for (SliceLayout.Run r : t.slice().runs()) {
                    needed.add(new long[] {t.fileOffset() + r.offset(), t.fileOffset() + r.end()});
                }
            }
            for (Chunk.Range range : c.ranges()) {
                long at = range.offset();
                for (long[] n : needed) {
                    if (n[1] <= at || n[0] >= range.end()) {
                        continue;
                    }
                    assertTrue(n[0] - at <= gap, what + ": a request reads " + (n[0] - at) + " unneeded bytes");
                    at = Math.max(at, n[1]);
                }
                assertTrue(range.end() <= at, what + ": a request reads past the last needed byte");
            }
        }
    }

    @Test
    void tensorsAreLookedUpByNameInAnyOrderAndEachHandedOutOnce() throws Exception {
        List<Path> files = TestCheckpoints.writeMatrices(tmp.resolve("ckpt"), 1, 8, 50, 3);
        Map<String, byte[]> reference = TestCheckpoints.reference(files);
        String ckpt = uri(tmp.resolve("ckpt"));
        try (SafetensorsLoader loader = SafetensorsLoader.open(config().chunkBytes(4096).prefetchDepth(0).build(),
                ckpt)) {
            List<PlannedTensor> all = loader.plan().chunks().stream().flatMap(c -> c.tensors().stream()).toList();
            assertTrue(loader.plan().chunks().size() > 4);
            // The last tensor first: its chunk is read out of order.
            String last = all.getLast().name();
            String middle = all.get(all.size() / 2).name();
            for (String name : List.of(last, middle)) {
                try (LoadedTensor t = loader.tensor(name)) {
                    assertArrayEquals(reference.get(name), t.data().toArray(ValueLayout.JAVA_BYTE), name);
                }
            }
            IllegalStateException twice = assertThrows(IllegalStateException.class, () -> loader.tensor(last));
            assertTrue(twice.getMessage().contains("already handed out"), twice.getMessage());
            NoSuchElementException unknown = assertThrows(NoSuchElementException.class, () -> loader.tensor("nope"));
            assertTrue(unknown.getMessage().contains("no file of the checkpoint has it"), unknown.getMessage());
            // Iteration hands out every other tensor, skipping the two.
            Set<String> rest = new HashSet<>(TestCheckpoints.loadAndCheck(loader, reference));
            assertEquals(all.size() - 2, rest.size());
            assertFalse(rest.contains(last) || rest.contains(middle));
            assertNull(loader.next());
            assertEquals(all.size(), loader.stats().tensorsHandedOut());
        }
        // Owner mode: another rank's tensor, and one the selection left out, say why.
        TensorSelection layer0 = TensorSelection.globs("model.layers.0.*");
        try (SafetensorsLoader loader = SafetensorsLoader.open(config().rank(1, 2).build(), layer0,
                List.of(ckpt))) {
            String other = loader.plan().owned(0, 2).getFirst().tensors().getFirst().name();
            NoSuchElementException e = assertThrows(NoSuchElementException.class, () -> loader.tensor(other));
            assertTrue(e.getMessage().contains("belongs to rank 0 of 2"), e.getMessage());
            NoSuchElementException left = assertThrows(NoSuchElementException.class,
                    () -> loader.tensor("model.layers.1.scale"));
            assertTrue(left.getMessage().contains("the selection does not select it"), left.getMessage());
            Map<String, LoadedTensor> mine = loader.loadAll();
            assertTrue(mine.keySet().stream().allMatch(n -> n.startsWith("model.layers.0.")), mine.keySet().toString());
            mine.values().forEach(LoadedTensor::close);
        }
    }

    @Test
    void selectionErrorsAreReportedAtOpen() throws Exception {
        TestCheckpoints.writeMatrices(tmp.resolve("ckpt"), 1, 2, 10, 4);
        String ckpt = uri(tmp.resolve("ckpt"));
        NoSuchElementException missing = assertThrows(NoSuchElementException.class, () -> SafetensorsLoader.open(
                config().build(), TensorSelection.names(List.of("model.layers.0.scale", "lm_head.weight")),
                List.of(ckpt)));
        assertTrue(missing.getMessage().contains("no tensor [lm_head.weight] in the checkpoint"), missing.getMessage());
        SliceOutOfBoundsException oob = assertThrows(SliceOutOfBoundsException.class, () -> SafetensorsLoader.open(
                config().build(), TensorSelection.all().slice("model.layers.0.input_layernorm.weight",
                        Slice.parse("0:100000")), List.of(ckpt)));
        assertEquals("model.layers.0.input_layernorm.weight", oob.tensor());
        assertEquals(0, oob.dimension());
        IllegalArgumentException notSelected = assertThrows(IllegalArgumentException.class,
                () -> SafetensorsLoader.open(config().build(), TensorSelection.globs("*.q_proj.*")
                        .slice("model.layers.0.scale", Slice.whole()), List.of(ckpt)));
        assertTrue(notSelected.getMessage().contains("given a slice but not selected"), notSelected.getMessage());
    }

    /** In-process ranks of a tensor-parallel group cover every byte of every split tensor exactly once. */
    @Test
    void tensorParallelRanksCoverEverySplitTensorExactlyOnce() throws Exception {
        List<Path> files = TestCheckpoints.writeMatrices(tmp.resolve("ckpt"), 2, 5, 40, 9);
        Map<String, byte[]> reference = TestCheckpoints.reference(files);
        Map<String, TensorInfo> infos = new HashMap<>();
        for (Path p : files) {
            try (SafetensorsFile f = SafetensorsFile.open(p)) {
                f.tensors().forEach(t -> infos.put(t.name(), t.info()));
            }
        }
        for (int world : new int[] {1, 2, 3, 4}) {
            for (Function<TensorParallel, TensorParallel> rule : List.<Function<TensorParallel, TensorParallel>>of(
                    tp -> tp, tp -> tp.rowParallel("*.o_proj.weight", "*.down_proj.weight").splitVectors("*.bias"))) {
                Map<String, int[]> cover = new HashMap<>();
                reference.forEach((n, b) -> cover.put(n, new int[b.length]));
                long split = 0;
                for (int rank = 0; rank < world; rank++) {
                    TensorParallel tp = rule.apply(TensorParallel.of(world, rank));
                    try (SafetensorsLoader loader = SafetensorsLoader.open(config().gapBytes(256).build(),
                            tp.selection(), List.of(uri(tmp.resolve("ckpt"))))) {
                        LoadedTensor t;
                        while ((t = loader.next()) != null) {
                            try (LoadedTensor closing = t) {
                                TensorInfo info = infos.get(t.name());
                                SliceLayout layout = SliceLayout.of(info, t.slice());
                                byte[] got = t.data().toArray(ValueLayout.JAVA_BYTE);
                                int at = 0;
                                for (SliceLayout.Run r : layout.runs()) {
                                    for (long b = r.offset(); b < r.end(); b++) {
                                        cover.get(t.name())[(int) b]++;
                                        assertEquals(reference.get(t.name())[(int) b], got[at++], t.name());
                                    }
                                }
                                int d = tp.splitDim(info);
                                if (d >= 0) {
                                    split++;
                                    long[] block = Slice.blockRange(info.dim(d), world, rank);
                                    assertEquals(block[1] - block[0], t.shape()[d], t.name());
                                } else {
                                    assertTrue(t.slice().isWhole(), t.name());
                                }
                            }
                        }
                    }
                }
                for (var e : cover.entrySet()) {
                    boolean isSplit = rule.apply(TensorParallel.of(world, 0)).splitDim(infos.get(e.getKey())) >= 0;
                    int expect = isSplit ? 1 : world;
                    for (int c : e.getValue()) {
                        assertEquals(expect, c, e.getKey() + " world " + world + ": every byte exactly "
                                + (isSplit ? "once" : "once per rank"));
                    }
                }
                assertTrue(world == 1 || split > 0);
            }
        }
    }

    @Test
    void slicesConvertOnTheWayAndFailuresHandOutNothing() throws Exception {
        List<Path> files = TestCheckpoints.writeMatrices(tmp.resolve("ckpt"), 1, 6, 60, 21);
        String ckpt = uri(tmp.resolve("ckpt"));
        TensorSelection cols = TensorSelection.all().slices(t -> t.rank() == 2 ? Slice.parse(":, 1::2") : null);
        Map<String, Tensor> expectF32 = new HashMap<>();
        try (Arena arena = Arena.ofConfined(); SafetensorsFile f = SafetensorsFile.open(files.get(0))) {
            for (Tensor t : f) {
                Dtype target = new TensorHandOut(Dtype.F32).target(t.dtype());
                expectF32.put(t.name(), t.slice(cols.sliceOf(t.info())).to(target, arena));
            }
            try (SafetensorsLoader loader = SafetensorsLoader.open(config().convertTo(Dtype.F32).build(), cols,
                    List.of(ckpt))) {
                int converted = 0;
                for (LoadedTensor t : loader) {
                    try (t) {
                        Tensor want = expectF32.get(t.name());
                        assertEquals(want.dtype(), t.dtype(), t.name());
                        assertArrayEquals(want.toByteArray(), t.data().toArray(ValueLayout.JAVA_BYTE), t.name());
                        converted += t.dtype() != t.storedDtype() ? 1 : 0;
                        if (t.dtype() == Dtype.F32) {
                            assertArrayEquals(want.toFloatArray(), t.asTensor().toFloatArray(), t.name());
                        }
                    }
                }
                assertTrue(converted > 3, converted + " converted");
            }
        }
        // A failing request of a sliced chunk: retried; if it keeps failing, none of the chunk's tensors is handed out.
        Map<String, byte[]> want = expected(files, cols);
        SafetensorsLoader probe = SafetensorsLoader.open(config().build(), cols, List.of(ckpt));
        Chunk doomed = probe.plan().chunks().get(1);
        probe.close();
        long doomedAt = doomed.ranges().getFirst().offset();
        java.util.concurrent.atomic.AtomicInteger failures = new java.util.concurrent.atomic.AtomicInteger();
        FaultyFileSystem.faults = (offset, length, i) -> offset == doomedAt && failures.incrementAndGet() <= 2
                ? FaultyFileSystem.Fault.FAIL : FaultyFileSystem.Fault.NONE;
        try (SafetensorsLoader loader = SafetensorsLoader.open(config().build(), cols, List.of(ckpt))) {
            LoadedTensor t;
            while ((t = loader.next()) != null) {
                try (LoadedTensor closing = t) {
                    assertArrayEquals(want.get(t.name()), t.data().toArray(ValueLayout.JAVA_BYTE), t.name());
                }
            }
            assertEquals(2, loader.stats().retries());
        }
        FaultyFileSystem.faults = (offset, length, i) -> offset == doomedAt ? FaultyFileSystem.Fault.TRUNCATE
                : FaultyFileSystem.Fault.NONE;
        try (SafetensorsLoader loader = SafetensorsLoader.open(config().build(), cols, List.of(ckpt))) {
            Set<String> handed = new HashSet<>();
            ChunkReadException e = assertThrows(ChunkReadException.class, () -> {
                LoadedTensor t;
                while ((t = loader.next()) != null) {
                    try (LoadedTensor closing = t) {
                        handed.add(t.name());
                    }
                }
            });
            assertEquals(doomed, e.chunk());
            for (PlannedTensor t : doomed.tensors()) {
                assertFalse(handed.contains(t.name()), t.name() + " of the failed chunk was handed out");
                assertThrows(ChunkReadException.class, () -> loader.tensor(t.name()));
            }
        }
    }
}
