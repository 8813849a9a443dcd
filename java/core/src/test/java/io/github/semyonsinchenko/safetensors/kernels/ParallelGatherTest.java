package io.github.semyonsinchenko.safetensors.kernels;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.github.semyonsinchenko.safetensors.format.LittleEndian;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The parallel gathers against the single-threaded ones on every path, index type and memory
 * kind; a bad index in the last range; and the range runner's promise that every range has ended
 * when the call returns or throws.
 */
class ParallelGatherTest {
    static final int ROWS = 101;
    static ExecutorService pool;

    @BeforeAll
    static void start() {
        pool = Executors.newFixedThreadPool(3);
    }

    @AfterAll
    static void stop() {
        pool.shutdownNow();
        KernelPath.restoreNativeIsa();
    }

    static MemorySegment indices(SplittableRandom rnd, int count, IndexType type, boolean heap, Arena arena) {
        MemorySegment s = heap ? MemorySegment.ofArray(new long[count]) : arena.allocate((long) count * 8, 8);
        for (int i = 0; i < count; i++) {
            int v = rnd.nextInt(ROWS);
            if (type == IndexType.U32) {
                s.set(LittleEndian.I32, i * 4L, v);
            } else {
                s.set(LittleEndian.I64, i * 8L, v);
            }
        }
        return s.asSlice(0, (long) count * type.bytes());
    }

    static MemorySegment out(long bytes, boolean heap, Arena arena) {
        MemorySegment s = heap ? MemorySegment.ofArray(new byte[(int) bytes]) : arena.allocate(bytes, 64);
        s.fill(GatherTest.FILL);
        return s;
    }

    @Test
    void parallelGathersEqualTheSingleThreadedOnesOnEveryPath() {
        SplittableRandom rnd = new SplittableRandom(31);
        int split = 0;
        try (Arena arena = Arena.ofShared()) {
            for (KernelPath path : KernelPath.all()) {
                path.activate();
                for (IndexType type : IndexType.values()) {
                    for (boolean heap : new boolean[] {false, true}) {
                        for (int parallelism : new int[] {2, 3, 4}) {
                            // 257-byte rows, an index count that does not divide evenly: about 1.3 MiB out
                            int rowBytes = 257;
                            int count = 5003;
                            MemorySegment table = GatherTest.randomBytes(rnd, (long) ROWS * rowBytes, heap, arena);
                            MemorySegment idx = indices(rnd, count, type, !heap, arena);
                            assertTrue(GatherSlices.count(count, rowBytes, parallelism) > 1);
                            MemorySegment want = out((long) count * rowBytes, false, arena);
                            MemorySegment got = out((long) count * rowBytes, heap, arena);
                            Kernels.gather(path.backend(), table, rowBytes, idx, type, want);
                            Kernels.gather(path.backend(), table, rowBytes, idx, type, got, pool, parallelism);
                            assertSame(want, got, path + " gather " + type + " heap=" + heap + " p=" + parallelism);

                            for (Conversion c : List.of(Conversion.F16_TO_F32, Conversion.BF16_TO_F32)) {
                                int rowElems = 67;
                                MemorySegment t16 = GatherTest.randomBytes(rnd, (long) ROWS * rowElems * 2, heap, arena);
                                long outBytes = (long) count * rowElems * 4;
                                assertTrue(GatherSlices.count(count, rowElems * 4L, parallelism) > 1);
                                MemorySegment wantF = out(outBytes, false, arena);
                                MemorySegment gotF = out(outBytes, heap, arena);
                                Kernels.gatherConvert(path.backend(), c, t16, rowElems, idx, type, wantF);
                                Kernels.gatherConvert(path.backend(), c, t16, rowElems, idx, type, gotF, pool,
                                        parallelism);
                                assertSame(wantF, gotF, path + " " + c + " " + type + " heap=" + heap + " p="
                                        + parallelism);
                            }
                            split++;
                        }
                    }
                }
            }
        } finally {
            KernelPath.restoreNativeIsa();
        }
        assertEquals(KernelPath.all().size() * 2 * 2 * 3, split);
    }

    private static void assertSame(MemorySegment want, MemorySegment got, String what) {
        long m = want.mismatch(got);
        if (m >= 0) {
            fail(what + ": byte " + m + " differs");
        }
    }

    @Test
    void aBadIndexInTheLastRangeIsRejectedBeforeAnyWrite() {
        int count = 40_000; // 40,000 x 32 bytes = 1.25 MiB: four ranges at parallelism 4
        assertEquals(4, GatherSlices.count(count, 32, 4));
        try (Arena arena = Arena.ofShared()) {
            MemorySegment table = arena.allocate(ROWS * 32L);
            for (KernelPath path : KernelPath.all()) {
                path.activate();
                for (IndexType type : IndexType.values()) {
                    MemorySegment idx = indices(new SplittableRandom(5), count, type, false, arena);
                    int pos = count - 1;
                    if (type == IndexType.U32) {
                        idx.set(LittleEndian.I32, pos * 4L, ROWS);
                    } else {
                        idx.set(LittleEndian.I64, pos * 8L, -1L);
                    }
                    MemorySegment dst = out(count * 64L, false, arena); // room for the F32 rows too
                    IndexOutOfBoundsException e = assertThrows(IndexOutOfBoundsException.class,
                            () -> Kernels.gather(path.backend(), table, 32, idx, type, dst, pool, 4));
                    assertTrue(e.getMessage().contains("indices[" + pos + "]"), e.getMessage());
                    GatherTest.assertUntouched(dst, path + " parallel gather " + type);
                    e = assertThrows(IndexOutOfBoundsException.class, () -> Kernels.gatherConvert(path.backend(),
                            Conversion.BF16_TO_F32, table, 16, idx, type, dst, pool, 4));
                    assertTrue(e.getMessage().contains("indices[" + pos + "]"), e.getMessage());
                    GatherTest.assertUntouched(dst, path + " parallel gatherConvert " + type);
                }
            }
        } finally {
            KernelPath.restoreNativeIsa();
        }
    }

    @Test
    void smallGathersStayOnTheCallingThread() {
        assertEquals(1, GatherSlices.count(1000, 64, 8)); // 64 KB: below one range's minimum
        assertEquals(2, GatherSlices.count(8192, 64, 8)); // 512 KiB: two ranges
        assertEquals(8, GatherSlices.count(1 << 20, 64, 8));
        assertEquals(3, GatherSlices.count(3, 1 << 20, 8)); // never more ranges than indices
    }

    @Test
    void everyRangeHasEndedWhenAFailingCallThrows() {
        AtomicInteger ended = new AtomicInteger();
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> GatherSlices.run(4 * GatherSlices.MIN_SLICE_BYTES, 1, pool, 4, (from, n) -> {
                    if (from == 0) {
                        throw new IllegalStateException("range 0");
                    }
                    try {
                        Thread.sleep(200);
                    } catch (InterruptedException ie) {
                        Thread.currentThread().interrupt();
                    }
                    ended.incrementAndGet();
                    if (from == 3 * GatherSlices.MIN_SLICE_BYTES) {
                        throw new IllegalStateException("range 3");
                    }
                }));
        assertEquals("range 0", e.getMessage()); // the lowest range's error, the others suppressed
        assertEquals(1, e.getSuppressed().length);
        assertEquals(3, ended.get(), "the call threw before every range had ended");
    }

    @Test
    void rangesTheExecutorRejectsRunOnTheCaller() {
        AtomicInteger covered = new AtomicInteger();
        GatherSlices.run(3 * GatherSlices.MIN_SLICE_BYTES, 1, r -> {
            throw new RejectedExecutionException("full");
        }, 3, (from, n) -> covered.addAndGet((int) n));
        assertEquals(3 * GatherSlices.MIN_SLICE_BYTES, covered.get());
    }

    @Test
    void parallelismIsChecked() {
        try (Arena arena = Arena.ofShared()) {
            MemorySegment table = arena.allocate(64);
            MemorySegment idx = arena.allocate(8);
            MemorySegment dst = arena.allocate(8);
            assertThrows(IllegalArgumentException.class,
                    () -> Kernels.gather(table, 8, idx, IndexType.I64, dst, pool, 0));
            assertThrows(NullPointerException.class,
                    () -> Kernels.gather(table, 8, idx, IndexType.I64, dst, null, 2));
            Kernels.gather(table, 8, idx, IndexType.I64, dst, null, 1); // one thread needs no executor
        }
        try (Arena confined = Arena.ofConfined()) {
            MemorySegment table = confined.allocate(64);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Kernels.gather(table, 8,
                    MemorySegment.ofArray(new long[1]), IndexType.I64, MemorySegment.ofArray(new byte[8]), pool, 2));
            assertTrue(e.getMessage().contains("table belongs to a confined arena"), e.getMessage());
        }
    }
}
