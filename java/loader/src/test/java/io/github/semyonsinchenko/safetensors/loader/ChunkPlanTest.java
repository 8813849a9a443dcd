package io.github.semyonsinchenko.safetensors.loader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.format.Header;
import io.github.semyonsinchenko.safetensors.format.TensorInfo;
import io.github.semyonsinchenko.safetensors.io.Slice;
import io.github.semyonsinchenko.safetensors.io.SliceLayout;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Properties of the chunk plan over many seeded random checkpoints (a plain loop, no property library). */
class ChunkPlanTest {
    private static final Dtype[] DTYPES = {Dtype.F32, Dtype.BF16, Dtype.F16, Dtype.I64, Dtype.U8, Dtype.F64};

    /** A random checkpoint: 1-4 files of 0-40 tensors, sizes from empty to large. */
    static List<CheckpointFile> randomCheckpoint(Random rnd) throws Exception {
        int files = 1 + rnd.nextInt(4);
        List<CheckpointFile> out = new ArrayList<>();
        for (int f = 0; f < files; f++) {
            int n = rnd.nextInt(41);
            List<Header.Entry> entries = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                Dtype d = DTYPES[rnd.nextInt(DTYPES.length)];
                long elems = switch (rnd.nextInt(4)) {
                    case 0 -> 0;
                    case 1 -> 1 + rnd.nextInt(16);
                    case 2 -> 1 + rnd.nextInt(5_000);
                    default -> 1 + rnd.nextInt(200_000);
                };
                entries.add(new Header.Entry("t" + f + "." + i, d, new long[] {elems}));
            }
            Header h = Header.layout(Map.of(), entries, rnd.nextBoolean(), "f" + f);
            out.add(new CheckpointFile("mem://ckpt/model-" + f + ".safetensors", h.fileSize(), 0, h));
        }
        return out;
    }

    @Test
    void planPropertiesHoldOnRandomCheckpoints() throws Exception {
        Random rnd = new Random(20261123L);
        for (int iter = 0; iter < 500; iter++) {
            List<CheckpointFile> files = randomCheckpoint(rnd);
            long limit = 1 + rnd.nextInt(rnd.nextBoolean() ? 64 : 4_000_000);
            int rangeLimit = 1 + rnd.nextInt(rnd.nextBoolean() ? 1_000 : 3_000_000);
            boolean legacy = rnd.nextInt(5) == 0;
            ChunkPlan plan = ChunkPlan.of(files, limit, rangeLimit, legacy);
            String ctx = "iteration " + iter + ", limit " + limit + ", range " + rangeLimit + ", legacy " + legacy;
            checkPlan(files, plan, limit, rangeLimit, legacy, ctx);

            // Deterministic: the order files are given in does not matter.
            List<CheckpointFile> shuffled = new ArrayList<>(files);
            Collections.shuffle(shuffled, rnd);
            assertEquals(plan, ChunkPlan.of(shuffled, limit, rangeLimit, legacy), ctx);

            for (int world = 1; world <= 6; world++) {
                Set<Integer> seen = new HashSet<>();
                for (int rank = 0; rank < world; rank++) {
                    for (Chunk c : plan.owned(rank, world)) {
                        assertEquals(rank, ChunkPlan.owner(c.index(), world), ctx);
                        assertTrue(seen.add(c.index()), "chunk " + c.index() + " owned twice; " + ctx);
                    }
                }
                assertEquals(plan.chunks().size(), seen.size(), "every chunk owned once; " + ctx);
            }
        }
    }

    private static void checkPlan(List<CheckpointFile> files, ChunkPlan plan, long limit, int rangeLimit,
                                  boolean legacy, String ctx) {
        // Storage order: files by path, tensors by offset, nothing lost, nothing repeated.
        List<CheckpointFile> byPath = new ArrayList<>(files);
        byPath.sort((a, b) -> a.path().compareTo(b.path()));
        List<String> expected = new ArrayList<>();
        for (CheckpointFile f : byPath) {
            for (TensorInfo t : f.header().tensors()) {
                expected.add(f.path() + "#" + t.name());
            }
        }
        List<String> actual = new ArrayList<>();
        Chunk previous = null;
        for (int i = 0; i < plan.chunks().size(); i++) {
            Chunk c = plan.chunks().get(i);
            assertEquals(i, c.index(), ctx);
            assertTrue(!c.tensors().isEmpty(), ctx);
            CheckpointFile file = byPath.stream().filter(f -> f.path().equals(c.file())).findFirst().orElseThrow();
            long base = file.header().dataOffset();
            // Contiguous, never split: the tensors tile [start, end) exactly.
            long at = c.start();
            for (PlannedTensor t : c.tensors()) {
                actual.add(c.file() + "#" + t.name());
                assertEquals(at, t.fileOffset(), ctx);
                assertEquals(base + t.info().begin(), t.fileOffset(), ctx);
                assertEquals(t.fileOffset() - c.start(), t.offsetInChunk(), ctx);
                at += t.byteSize();
            }
            assertEquals(c.end(), at, ctx);
            // Limits: only a lone tensor may exceed the limit; legacy is one tensor per chunk.
            if (legacy) {
                assertEquals(1, c.tensors().size(), ctx);
            } else if (c.tensors().size() > 1) {
                assertTrue(c.byteSize() <= limit, "chunk " + c.index() + " of " + c.byteSize() + " bytes; " + ctx);
            }
            // Greedy: a chunk ends only because the next tensor of the same file did not fit.
            if (!legacy && previous != null && previous.file().equals(c.file())) {
                assertTrue(previous.byteSize() + c.tensors().getFirst().byteSize() > limit, ctx);
            }
            // Ranges: consecutive, each within the range limit, covering the chunk exactly.
            long r = c.start();
            for (Chunk.Range range : c.ranges()) {
                assertEquals(r, range.offset(), ctx);
                assertTrue(range.length() > 0 && range.length() <= rangeLimit, ctx);
                r = range.end();
            }
            assertEquals(c.end(), r, ctx);
            assertEquals((c.byteSize() + rangeLimit - 1) / rangeLimit, c.ranges().size(), ctx);
            previous = c;
        }
        assertEquals(expected, actual, ctx);
    }

    /** A random checkpoint of 2-D, 1-D and 3-D tensors for slicing. */
    static List<CheckpointFile> randomMatrices(Random rnd) throws Exception {
        List<CheckpointFile> out = new ArrayList<>();
        int files = 1 + rnd.nextInt(3);
        for (int f = 0; f < files; f++) {
            List<Header.Entry> entries = new ArrayList<>();
            int n = rnd.nextInt(25);
            for (int i = 0; i < n; i++) {
                Dtype d = DTYPES[rnd.nextInt(DTYPES.length)];
                long[] shape = switch (rnd.nextInt(4)) {
                    case 0 -> new long[] {rnd.nextInt(300)};
                    case 1 -> new long[] {1 + rnd.nextInt(40), 1 + rnd.nextInt(3), 1 + rnd.nextInt(50)};
                    default -> new long[] {rnd.nextInt(200), 1 + rnd.nextInt(200)};
                };
                entries.add(new Header.Entry("t" + f + "." + i, d, shape));
            }
            Header h = Header.layout(Map.of(), entries, rnd.nextBoolean(), "f" + f);
            out.add(new CheckpointFile("mem://ckpt/model-" + f + ".safetensors", h.fileSize(), 0, h));
        }
        return out;
    }

    /** Selections and slices: only needed bytes (and small gaps) are read, each run lands where its part says. */
    @Test
    void selectedSlicesArePlannedExactly() throws Exception {
        Random rnd = new Random(77);
        for (int iter = 0; iter < 300; iter++) {
            List<CheckpointFile> files = randomMatrices(rnd);
            Map<String, Slice> slices = new java.util.HashMap<>();
            for (CheckpointFile f : files) {
                for (TensorInfo t : f.header().tensors()) {
                    slices.put(t.name(), SliceLoadTest.randomSlice(t, rnd));
                }
            }
            TensorSelection selection = TensorSelection.matching(n -> n.hashCode() % 3 != 0)
                    .slices(t -> slices.get(t.name()));
            long limit = 1 + rnd.nextInt(rnd.nextBoolean() ? 2_000 : 200_000);
            int rangeLimit = 1 + rnd.nextInt(rnd.nextBoolean() ? 500 : 100_000);
            long gap = rnd.nextInt(3) == 0 ? 0 : rnd.nextInt(2_000);
            boolean legacy = rnd.nextInt(6) == 0;
            ChunkPlan plan = ChunkPlan.of(files, selection, limit, rangeLimit, gap, legacy);
            String ctx = "iteration " + iter + ", limit " + limit + ", range " + rangeLimit + ", gap " + gap;
            assertEquals(plan, ChunkPlan.of(new ArrayList<>(files), selection, limit, rangeLimit, gap, legacy), ctx);
            List<String> expected = new ArrayList<>();
            List<CheckpointFile> byPath = new ArrayList<>(files);
            byPath.sort((a, b) -> a.path().compareTo(b.path()));
            for (CheckpointFile f : byPath) {
                for (TensorInfo t : f.header().tensors()) {
                    if (selection.selects(t.name())) {
                        expected.add(t.name());
                    }
                }
            }
            List<String> actual = new ArrayList<>();
            for (Chunk c : plan.chunks()) {
                long buffer = 0;
                long previousEnd = Long.MIN_VALUE;
                for (Chunk.Range r : c.ranges()) {
                    assertTrue(r.length() > 0 && r.length() <= rangeLimit, ctx);
                    assertEquals(buffer, r.bufferOffset(), "requests fill the buffer in order; " + ctx);
                    assertTrue(r.offset() >= previousEnd, ctx);
                    buffer += r.length();
                    previousEnd = r.end();
                }
                assertEquals(buffer, c.byteSize(), ctx);
                if (legacy) {
                    assertEquals(1, c.tensors().size(), ctx);
                } else if (c.tensors().size() > 1) {
                    assertTrue(c.byteSize() <= limit, ctx);
                }
                List<long[]> needed = new ArrayList<>();
                for (PlannedTensor t : c.tensors()) {
                    actual.add(t.name());
                    assertEquals(SliceLayout.of(t.info(), slices.get(t.name())), t.slice(), ctx);
                    long runs = 0;
                    for (PlannedTensor.Part p : t.parts()) {
                        assertEquals(runs, p.firstRun(), ctx);
                        runs += p.runs();
                        for (long i = p.firstRun(); i < p.firstRun() + p.runs(); i++) {
                            long runOffset = t.slice().runOffset(i);
                            long abs = t.fileOffset() + runOffset;
                            long buf = p.bufferOffset() + runOffset - p.tensorOffset();
                            // Both ends of the run are read, to the buffer position the part implies.
                            for (long b : new long[] {abs, abs + t.slice().runBytes() - 1}) {
                                Chunk.Range r = c.ranges().stream().filter(x -> b >= x.offset() && b < x.end())
                                        .findFirst().orElseThrow(() -> new AssertionError("byte " + b + " not read; " + ctx));
                                assertEquals(buf + (b - abs), r.bufferOffset() + (b - r.offset()), ctx);
                            }
                            needed.add(new long[] {abs, abs + t.slice().runBytes()});
                        }
                    }
                    assertEquals(t.slice().runCount(), runs, ctx);
                }
                // Each contiguous stretch of requests (one coalesced read) starts and ends with needed bytes
                // and skips no gap larger than `gap` between them.
                List<long[]> stretches = new ArrayList<>();
                for (Chunk.Range r : c.ranges()) {
                    if (!stretches.isEmpty() && stretches.getLast()[1] == r.offset()) {
                        stretches.getLast()[1] = r.end();
                    } else {
                        stretches.add(new long[] {r.offset(), r.end()});
                    }
                }
                for (long[] st : stretches) {
                    List<long[]> inside = needed.stream().filter(n -> n[0] < st[1] && n[1] > st[0]).toList();
                    assertTrue(!inside.isEmpty(), "a read of no needed byte; " + ctx);
                    assertEquals(st[0], inside.getFirst()[0], ctx);
                    assertEquals(st[1], inside.getLast()[1], ctx);
                    for (int i = 1; i < inside.size(); i++) {
                        long g = inside.get(i)[0] - inside.get(i - 1)[1];
                        assertTrue(g >= 0 && g <= gap, "a gap of " + g + " bytes read; " + ctx);
                    }
                }
            }
            assertEquals(expected, actual, ctx);
        }
    }

    @Test
    void oversizeTensorGetsItsOwnChunkReadInSeveralRanges() throws Exception {
        Header h = Header.layout(Map.of(), List.of(
                new Header.Entry("small", Dtype.U8, new long[] {10}),
                new Header.Entry("huge", Dtype.U8, new long[] {2500}),
                new Header.Entry("tail", Dtype.U8, new long[] {5})), true, "x");
        ChunkPlan plan = ChunkPlan.of(List.of(new CheckpointFile("p", h.fileSize(), 0, h)), 1000, 1000, false);
        assertEquals(3, plan.chunks().size());
        Chunk huge = plan.chunks().get(1);
        assertEquals(List.of("huge"), huge.tensors().stream().map(PlannedTensor::name).toList());
        assertEquals(List.of(1000, 1000, 500), huge.ranges().stream().map(Chunk.Range::length).toList());
        assertEquals(h.dataOffset() + 10, huge.start());
    }

    @Test
    void badArgumentsAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> ChunkPlan.of(List.of(), 0, 1, false));
        assertThrows(IllegalArgumentException.class, () -> ChunkPlan.of(List.of(), 1, 0, false));
        assertThrows(IllegalArgumentException.class, () -> ChunkPlan.owner(3, 0));
        ChunkPlan empty = ChunkPlan.of(List.of(), 1, 1, false);
        assertThrows(IllegalArgumentException.class, () -> empty.owned(2, 2));
        assertEquals(List.of(), empty.owned(1, 2));
    }
}
