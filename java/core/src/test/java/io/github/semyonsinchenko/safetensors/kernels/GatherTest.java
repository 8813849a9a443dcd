package io.github.semyonsinchenko.safetensors.kernels;

import io.github.semyonsinchenko.safetensors.format.LittleEndian;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * Gather and gather-and-convert on every path against a plain copy loop (and the scalar
 * conversion oracle), for many row sizes and index counts, both index types, heap and off-heap
 * tables and destinations, with guard bytes; and every bad index rejected on every path with the
 * destination untouched.
 */
class GatherTest {
    static final int ROWS = 37;
    static final int GUARD = 32;
    static final byte FILL = (byte) 0xA5;
    static final int[] ROW_BYTES = {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 15, 16, 17, 24, 31, 32, 33, 48, 63, 64, 65, 100, 257};
    static final int[] ROW_ELEMS = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64, 100};
    static final int[] INDEX_COUNTS = {0, 1, 2, 3, 7, 8, 15, 16, 17, 31, 32, 33, 64, 70};

    @AfterAll
    static void restore() {
        KernelPath.restoreNativeIsa();
    }

    static MemorySegment randomBytes(SplittableRandom rnd, long n, boolean heap, Arena arena) {
        byte[] b = new byte[(int) n];
        rnd.nextBytes(b);
        if (heap) {
            return MemorySegment.ofArray(b);
        }
        MemorySegment s = arena.allocate(n, 1);
        MemorySegment.copy(MemorySegment.ofArray(b), 0, s, 0, n);
        return s;
    }

    /** {@code count} indices in {@code [0, ROWS)}, both ends included, as U32 or I64. */
    static MemorySegment indices(SplittableRandom rnd, int count, IndexType type, boolean heap, Arena arena) {
        MemorySegment s = heap ? MemorySegment.ofArray(new long[count]) : arena.allocate((long) count * 8, 1);
        for (int i = 0; i < count; i++) {
            int v = i == 0 ? ROWS - 1 : i == 1 ? 0 : rnd.nextInt(ROWS);
            if (type == IndexType.U32) {
                s.set(LittleEndian.I32, i * 4L, v);
            } else {
                s.set(LittleEndian.I64, i * 8L, v);
            }
        }
        return s.asSlice(0, (long) count * type.bytes());
    }

    static long index(MemorySegment idx, IndexType type, long i) {
        return type == IndexType.U32 ? Integer.toUnsignedLong(idx.get(LittleEndian.I32, i * 4))
                : idx.get(LittleEndian.I64, i * 8);
    }

    @Test
    void gatherMatchesACopyLoopOnEveryPath() {
        SplittableRandom rnd = new SplittableRandom(21);
        int checks = 0;
        try (Arena arena = Arena.ofConfined()) {
            for (KernelPath path : KernelPath.all()) {
                path.activate();
                for (int rowBytes : ROW_BYTES) {
                    for (int k = 0; k < INDEX_COUNTS.length; k++) {
                        int count = INDEX_COUNTS[k];
                        boolean heap = (k + rowBytes) % 2 == 0;
                        IndexType type = k % 2 == 0 ? IndexType.U32 : IndexType.I64;
                        MemorySegment table = randomBytes(rnd, (long) ROWS * rowBytes, heap, arena);
                        MemorySegment idx = indices(rnd, count, type, !heap, arena);
                        long out = (long) count * rowBytes;
                        MemorySegment dst = heap ? MemorySegment.ofArray(new byte[(int) out + 2 * GUARD])
                                : arena.allocate(out + 2 * GUARD, 1);
                        MemorySegment want = arena.allocate(out + 2 * GUARD, 1);
                        dst.fill(FILL);
                        want.fill(FILL);
                        for (int i = 0; i < count; i++) {
                            MemorySegment.copy(table, index(idx, type, i) * rowBytes, want, GUARD + (long) i * rowBytes,
                                    rowBytes);
                        }
                        Kernels.gather(path.backend(), table, rowBytes, idx, type, dst.asSlice(GUARD, out + GUARD));
                        long m = want.mismatch(dst);
                        if (m >= 0) {
                            fail(path + " gather rowBytes=" + rowBytes + " count=" + count + " " + type + " heap=" + heap
                                    + ": byte " + m + " differs");
                        }
                        checks++;
                    }
                }
            }
        } finally {
            KernelPath.restoreNativeIsa();
        }
        assertEquals(KernelPath.all().size() * ROW_BYTES.length * INDEX_COUNTS.length, checks);
    }

    @Test
    void gatherConvertMatchesTheOracleOnEveryPath() {
        SplittableRandom rnd = new SplittableRandom(22);
        try (Arena arena = Arena.ofConfined()) {
            for (KernelPath path : KernelPath.all()) {
                path.activate();
                for (Conversion c : List.of(Conversion.F16_TO_F32, Conversion.BF16_TO_F32)) {
                    for (int rowElems : ROW_ELEMS) {
                        for (int k = 0; k < INDEX_COUNTS.length; k++) {
                            int count = INDEX_COUNTS[k];
                            boolean heap = (k + rowElems) % 2 == 1;
                            IndexType type = k % 2 == 1 ? IndexType.U32 : IndexType.I64;
                            MemorySegment table = randomBytes(rnd, (long) ROWS * rowElems * 2, heap, arena);
                            MemorySegment idx = indices(rnd, count, type, heap, arena);
                            long out = (long) count * rowElems * 4;
                            MemorySegment dst = heap ? MemorySegment.ofArray(new byte[(int) out + 2 * GUARD])
                                    : arena.allocate(out + 2 * GUARD, 1);
                            MemorySegment want = arena.allocate(out + 2 * GUARD, 1);
                            dst.fill(FILL);
                            want.fill(FILL);
                            for (int i = 0; i < count; i++) {
                                long r = index(idx, type, i);
                                ScalarBackend.convertRange(c, table.asSlice(r * rowElems * 2, rowElems * 2L),
                                        want.asSlice(GUARD + (long) i * rowElems * 4), 0, rowElems);
                            }
                            Kernels.gatherConvert(path.backend(), c, table, rowElems, idx, type, dst.asSlice(GUARD,
                                    out + GUARD));
                            long m = want.mismatch(dst);
                            if (m >= 0) {
                                fail(path + " " + c + " rowElems=" + rowElems + " count=" + count + " " + type
                                        + ": byte " + m + " differs");
                            }
                        }
                    }
                }
            }
        } finally {
            KernelPath.restoreNativeIsa();
        }
    }

    @Test
    void arrayIndexOverloads() {
        short[] table = new short[ROWS * 3];
        for (int i = 0; i < table.length; i++) {
            table[i] = (short) (0x3F80 + i); // BF16 bits
        }
        MemorySegment t = MemorySegment.ofArray(table);
        int[] u32 = {9, 5, 36, 0, 7};
        long[] i64 = {9, 5, 36, 0, 7};
        float[] a = new float[2 + 3 * 3];
        float[] b = new float[2 + 3 * 3];
        Kernels.gatherConvert(Conversion.BF16_TO_F32, t, 3, u32, 1, 3, a, 2);
        Kernels.gatherConvert(Conversion.BF16_TO_F32, t, 3, i64, 1, 3, b, 2);
        for (float[] out : List.of(a, b)) {
            assertEquals(0f, out[0]);
            assertEquals(0f, out[1]);
            for (int r = 0; r < 3; r++) {
                for (int e = 0; e < 3; e++) {
                    int row = (int) i64[1 + r];
                    assertEquals(Float.intBitsToFloat((0x3F80 + row * 3 + e) << 16), out[2 + r * 3 + e]);
                }
            }
        }
        short[] raw = new short[3 * 2];
        Kernels.gather(t, 6, u32, 3, 2, MemorySegment.ofArray(raw));
        assertEquals(table[0], raw[0]);
        assertEquals(table[7 * 3 + 2], raw[5]);
        Kernels.gather(t, 6, i64, 0, 1, MemorySegment.ofArray(raw));
        assertEquals(table[9 * 3], raw[0]);
    }

    /** Heap gathers writing more than one critical call's worth: split into chunks of indices. */
    @Test
    void heapGathersSpanningSeveralCriticalChunks() {
        SplittableRandom rnd = new SplittableRandom(23);
        int rowElems = 1024; // 4 KiB of floats per row: 1024 rows per 4 MiB chunk
        int count = 2500;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment table = randomBytes(rnd, (long) ROWS * rowElems * 2, false, arena);
            MemorySegment idx = indices(rnd, count, IndexType.I64, true, arena);
            MemorySegment want = MemorySegment.ofArray(new float[count * rowElems]);
            MemorySegment wantRaw = MemorySegment.ofArray(new short[count * rowElems]);
            for (int i = 0; i < count; i++) {
                long r = index(idx, IndexType.I64, i);
                ScalarBackend.convertRange(Conversion.BF16_TO_F32, table.asSlice(r * rowElems * 2, rowElems * 2L),
                        want.asSlice((long) i * rowElems * 4), 0, rowElems);
                MemorySegment.copy(table, r * rowElems * 2, wantRaw, (long) i * rowElems * 2, rowElems * 2L);
            }
            for (KernelPath path : KernelPath.all()) {
                path.activate();
                MemorySegment dst = MemorySegment.ofArray(new float[count * rowElems]);
                Kernels.gatherConvert(path.backend(), Conversion.BF16_TO_F32, table, rowElems, idx, IndexType.I64, dst);
                assertEquals(-1, want.mismatch(dst), path.name());
                MemorySegment raw = MemorySegment.ofArray(new short[count * rowElems]);
                Kernels.gather(path.backend(), table, rowElems * 2L, idx, IndexType.I64, raw);
                assertEquals(-1, wantRaw.mismatch(raw), path.name());
            }
        } finally {
            KernelPath.restoreNativeIsa();
        }
    }

    // ------------------------------------------------------------------ bad indices

    /** Bad U32 indices (as unsigned) and I64 indices for a table of ROWS rows. */
    static final long[] BAD_U32 = {ROWS, ROWS + 1, 0xFFFFFFFFL, 0x80000000L, 0x7FFFFFFFL};
    static final long[] BAD_I64 = {-1, ROWS, Long.MAX_VALUE, Long.MIN_VALUE, 1L << 32, -ROWS};

    @Test
    void badIndicesAreRejectedOnEveryPathBeforeAnyWrite() {
        int rejected = 0;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment table = arena.allocate(ROWS * 8L);
            for (KernelPath path : KernelPath.all()) {
                path.activate();
                for (IndexType type : IndexType.values()) {
                    for (long bad : type == IndexType.U32 ? BAD_U32 : BAD_I64) {
                        for (int pos : new int[] {0, 5, 19}) { // first, middle, last of 20
                            for (boolean heap : new boolean[] {false, true}) {
                                MemorySegment idx = heap ? MemorySegment.ofArray(new long[20])
                                        : arena.allocate(20 * 8L);
                                idx = idx.asSlice(0, 20L * type.bytes());
                                for (int i = 0; i < 20; i++) {
                                    long v = i == pos ? bad : i % ROWS;
                                    if (type == IndexType.U32) {
                                        idx.set(LittleEndian.I32, i * 4L, (int) v);
                                    } else {
                                        idx.set(LittleEndian.I64, i * 8L, v);
                                    }
                                }
                                MemorySegment dst = heap ? MemorySegment.ofArray(new byte[20 * 16])
                                        : arena.allocate(20 * 16L);
                                dst.fill(FILL);
                                MemorySegment finalIdx = idx;
                                IndexOutOfBoundsException e = assertThrows(IndexOutOfBoundsException.class,
                                        () -> Kernels.gather(path.backend(), table, 8, finalIdx, type, dst));
                                assertTrue(e.getMessage().contains("indices[" + pos + "]"), e.getMessage());
                                assertUntouched(dst, path + " gather " + type + " " + bad);
                                e = assertThrows(IndexOutOfBoundsException.class,
                                        () -> Kernels.gatherConvert(path.backend(), Conversion.F16_TO_F32, table, 4,
                                                finalIdx, type, dst));
                                assertTrue(e.getMessage().contains("indices[" + pos + "]"), e.getMessage());
                                assertUntouched(dst, path + " gatherConvert " + type + " " + bad);
                                rejected += 2;
                            }
                        }
                    }
                }
            }
        } finally {
            KernelPath.restoreNativeIsa();
        }
        assertTrue(rejected > 0);
    }

    static void assertUntouched(MemorySegment dst, String what) {
        for (long i = 0; i < dst.byteSize(); i++) {
            if (dst.get(ScalarKernels.I8, i) != FILL) {
                fail(what + ": dst byte " + i + " was written");
            }
        }
    }

    /**
     * The library checks indices again; calling the native backend directly (past the Java
     * checks) shows its ST_ERR_INDEX arriving as an exception, with nothing written.
     */
    @Test
    void nativeStatusCodesBecomeExceptions() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment table = arena.allocate(ROWS * 8L);
            for (KernelPath path : KernelPath.all()) {
                if (path.isa() == null) {
                    continue;
                }
                path.activate();
                for (boolean heap : new boolean[] {false, true}) {
                    MemorySegment idx = heap ? MemorySegment.ofArray(new long[] {1, ROWS, 2})
                            : arena.allocate(24).copyFrom(MemorySegment.ofArray(new long[] {1, ROWS, 2}));
                    MemorySegment dst = heap ? MemorySegment.ofArray(new byte[24]) : arena.allocate(24);
                    dst.fill(FILL);
                    IndexOutOfBoundsException e = assertThrows(IndexOutOfBoundsException.class,
                            () -> path.backend().gather(table, ROWS, 8, idx, IndexType.I64, 3, dst));
                    assertTrue(e.getMessage().contains("ST_ERR_INDEX"), e.getMessage());
                    assertUntouched(dst, path + " direct native gather");
                    MemorySegment fdst = heap ? MemorySegment.ofArray(new byte[48]) : arena.allocate(48);
                    fdst.fill(FILL);
                    e = assertThrows(IndexOutOfBoundsException.class, () -> path.backend().gatherConvert(
                            Conversion.BF16_TO_F32, table, ROWS, 4, idx, IndexType.I64, 3, fdst));
                    assertTrue(e.getMessage().contains("st_gather_bf16_to_f32_i64"), e.getMessage());
                    assertUntouched(fdst, path + " direct native gatherConvert");
                }
            }
        } finally {
            KernelPath.restoreNativeIsa();
        }
    }
}
