package io.github.semyonsinchenko.safetensors.kernels;

import io.github.semyonsinchenko.safetensors.format.LittleEndian;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/** Every bad argument is an exception naming it, thrown before anything is written, on every path. */
class KernelsChecksTest {
    static final byte FILL = (byte) 0xA5;

    @AfterAll
    static void restore() {
        KernelPath.restoreNativeIsa();
    }

    static <T extends Throwable> T expect(Class<T> type, String fragment, Executable call) {
        T e = assertThrows(type, call);
        assertTrue(e.getMessage() != null && e.getMessage().contains(fragment),
                () -> "message '" + e.getMessage() + "' lacks '" + fragment + "'");
        return e;
    }

    @Test
    void convertArgumentsOnEveryPath() {
        try (Arena arena = Arena.ofConfined()) {
            for (KernelPath p : KernelPath.all()) {
                p.activate();
                Backend b = p.backend();
                MemorySegment src = arena.allocate(64);
                MemorySegment dst = arena.allocate(64).fill(FILL);
                Conversion c = Conversion.BF16_TO_F32;
                expect(IllegalArgumentException.class, "count must not be negative, got -1",
                        () -> Kernels.convert(b, c, src, dst, -1));
                expect(IllegalArgumentException.class, "overflows",
                        () -> Kernels.convert(b, c, src, dst, Long.MAX_VALUE / 2));
                expect(IndexOutOfBoundsException.class, "src is 64 bytes; count=33 needs 66",
                        () -> Kernels.convert(b, c, src, arena.allocate(1024), 33));
                expect(IndexOutOfBoundsException.class, "dst is 64 bytes; count=17 needs 68",
                        () -> Kernels.convert(b, c, src, dst, 17));
                expect(IllegalArgumentException.class, "dst is read-only",
                        () -> Kernels.convert(b, c, src, dst.asReadOnly(), 1));
                expect(IllegalArgumentException.class, "src and dst overlap",
                        () -> Kernels.convert(b, c, dst.asSlice(0, 32), dst.asSlice(8), 8));
                short[] same = new short[16];
                expect(IllegalArgumentException.class, "src and dst overlap",
                        () -> Kernels.convert(b, Conversion.F16_TO_BF16, MemorySegment.ofArray(same),
                                MemorySegment.ofArray(same).asSlice(2), 8));
                assertThrows(NullPointerException.class, () -> Kernels.convert(b, c, null, dst, 1));
                assertThrows(NullPointerException.class, () -> Kernels.convert(b, null, src, dst, 1));
                for (int i = 0; i < 64; i++) {
                    assertEquals(FILL, dst.get(ScalarKernels.I8, i), p + ": dst written by a rejected call");
                }
                // Count 0 is fine with empty segments (and NULL ones).
                Kernels.convert(b, c, MemorySegment.NULL, MemorySegment.NULL, 0);
            }
        } finally {
            KernelPath.restoreNativeIsa();
        }
    }

    @Test
    void wholeSegmentNeedsWholeElements() {
        expect(IllegalArgumentException.class, "src is 7 bytes, not a whole number of BF16 elements (2 bytes each)",
                () -> Kernels.convert(Conversion.BF16_TO_F32, MemorySegment.ofArray(new byte[7]),
                        MemorySegment.ofArray(new float[4])));
        expect(IllegalArgumentException.class, "not a whole number of F64 elements",
                () -> Kernels.convert(Conversion.F64_TO_F32, MemorySegment.ofArray(new byte[12]),
                        MemorySegment.ofArray(new float[4])));
    }

    @Test
    void arrayOverloadChecks() {
        float[] f = new float[8];
        Arrays.fill(f, 7f);
        short[] s = new short[8];
        expect(IndexOutOfBoundsException.class, "src: offset 6 and count 3 are outside an array of length 8",
                () -> Kernels.convert(Conversion.BF16_TO_F32, s, 6, f, 0, 3));
        expect(IndexOutOfBoundsException.class, "dst: offset -1",
                () -> Kernels.convert(Conversion.BF16_TO_F32, s, 0, f, -1, 3));
        expect(IndexOutOfBoundsException.class, "count -2",
                () -> Kernels.convert(Conversion.BF16_TO_F32, s, 0, f, 0, -2));
        expect(IllegalArgumentException.class, "F32_TO_BF16_RNE reads float[] and writes short[], not short[] and float[]",
                () -> Kernels.convert(Conversion.F32_TO_BF16_RNE, s, 0, f, 0, 1));
        expect(IllegalArgumentException.class, "F64_TO_F32 reads double[]",
                () -> Kernels.convert(Conversion.F64_TO_F32, new long[1], 0, f, 0, 1));
        expect(IllegalArgumentException.class, "src and dst overlap",
                () -> Kernels.convert(Conversion.F16_TO_BF16, s, 0, s, 1, 4));
        float[] untouched = new float[8];
        Arrays.fill(untouched, 7f);
        assertArrayEquals(untouched, f);
    }

    @Test
    void gatherArgumentsOnEveryPath() {
        try (Arena arena = Arena.ofConfined()) {
            for (KernelPath p : KernelPath.all()) {
                p.activate();
                Backend b = p.backend();
                MemorySegment table = arena.allocate(10 * 8);
                MemorySegment idx = arena.allocate(4 * 4); // 4 U32 zeros
                MemorySegment dst = arena.allocate(4 * 8).fill(FILL);
                expect(IllegalArgumentException.class, "rowBytes must be positive, got 0",
                        () -> Kernels.gather(b, table, 0, idx, IndexType.U32, dst));
                expect(IllegalArgumentException.class, "table is 80 bytes, not a whole number of rows of rowBytes=7",
                        () -> Kernels.gather(b, table, 7, idx, IndexType.U32, dst));
                expect(IllegalArgumentException.class, "indices is 12 bytes, not a whole number of I64 elements (8 bytes each)",
                        () -> Kernels.gather(b, table, 8, idx.asSlice(0, 12), IndexType.I64, dst));
                expect(IndexOutOfBoundsException.class, "dst is 31 bytes; 4 rows of rowBytes=8 need 32",
                        () -> Kernels.gather(b, table, 8, idx, IndexType.U32, dst.asSlice(0, 31)));
                expect(IllegalArgumentException.class, "dst is read-only",
                        () -> Kernels.gather(b, table, 8, idx, IndexType.U32, dst.asReadOnly()));
                expect(IllegalArgumentException.class, "table and dst overlap",
                        () -> Kernels.gather(b, table, 8, idx, IndexType.U32, table.asSlice(40)));
                MemorySegment shared = arena.allocate(64);
                expect(IllegalArgumentException.class, "indices and dst overlap",
                        () -> Kernels.gather(b, table, 8, shared.asSlice(0, 8), IndexType.U32, shared.asSlice(4, 16)));
                expect(IllegalArgumentException.class, "has no gather kernel",
                        () -> Kernels.gatherConvert(b, Conversion.I16_TO_F32, table, 4, idx, IndexType.U32, dst));
                expect(IllegalArgumentException.class, "rowElems must be positive, got -3",
                        () -> Kernels.gatherConvert(b, Conversion.F16_TO_F32, table, -3, idx, IndexType.U32, dst));
                expect(IllegalArgumentException.class, "table is 80 bytes, not a whole number of rows of rowElems=3",
                        () -> Kernels.gatherConvert(b, Conversion.F16_TO_F32, table, 3, idx, IndexType.U32, dst));
                expect(IndexOutOfBoundsException.class, "dst is 32 bytes; 4 rows of rowElems=4 floats need 64",
                        () -> Kernels.gatherConvert(b, Conversion.F16_TO_F32, table, 4, idx, IndexType.U32, dst));
                for (int i = 0; i < 32; i++) {
                    assertEquals(FILL, dst.get(ScalarKernels.I8, i), p + ": dst written by a rejected call");
                }
                // No indices: nothing to do, any dst.
                Kernels.gather(b, table, 8, MemorySegment.NULL, IndexType.I64, MemorySegment.NULL);
            }
        } finally {
            KernelPath.restoreNativeIsa();
        }
    }

    @Test
    void gatherArrayOverloadChecks() {
        MemorySegment table = MemorySegment.ofArray(new float[40]);
        expect(IndexOutOfBoundsException.class, "indices: offset 2 and count 5 are outside an array of length 4",
                () -> Kernels.gather(table, 16, new int[4], 2, 5, MemorySegment.ofArray(new byte[100])));
        expect(IndexOutOfBoundsException.class, "indices[1] = -1 is outside [0, 10)",
                () -> Kernels.gather(table, 16, new long[] {0, -1}, 0, 2, MemorySegment.ofArray(new byte[100])));
        expect(IndexOutOfBoundsException.class, "indices[0] = 4294967295 is outside [0, 10)",
                () -> Kernels.gather(table, 16, new int[] {-1}, 0, 1, MemorySegment.ofArray(new byte[100])));
        expect(IndexOutOfBoundsException.class, "dst: offset 9",
                () -> Kernels.gatherConvert(Conversion.F16_TO_F32, table, 4, new int[] {1}, 0, 1, new float[8], 9));
        expect(IndexOutOfBoundsException.class, "floats need 16",
                () -> Kernels.gatherConvert(Conversion.F16_TO_F32, table, 4, new int[] {1}, 0, 1, new float[8], 5));
    }

    /** A read-only mmap slice is a fine source, and a read-only mapping is refused as a destination. */
    @Test
    void readOnlyMappedFiles(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("bf16.bin");
        Files.write(file, new byte[] {(byte) 0x80, 0x3F, 0x00, (byte) 0xC0, 0, 0});
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ); Arena arena = Arena.ofConfined()) {
            MemorySegment mapped = ch.map(FileChannel.MapMode.READ_ONLY, 0, 6, arena);
            assertTrue(mapped.isReadOnly());
            for (KernelPath p : KernelPath.all()) {
                p.activate();
                float[] out = new float[3];
                Kernels.convert(p.backend(), Conversion.BF16_TO_F32, mapped.asSlice(0, 4), MemorySegment.ofArray(out), 2);
                assertArrayEquals(new float[] {1f, -2f, 0f}, out, p.name());
                MemorySegment offHeap = arena.allocate(8);
                Kernels.convert(p.backend(), Conversion.BF16_TO_F32, mapped.asSlice(0, 4), offHeap, 2);
                assertEquals(-2f, offHeap.get(LittleEndian.F32, 4));
                expect(IllegalArgumentException.class, "dst is read-only",
                        () -> Kernels.convert(p.backend(), Conversion.F32_TO_BF16_RNE,
                                MemorySegment.ofArray(new float[1]), mapped, 1));
            }
        } finally {
            KernelPath.restoreNativeIsa();
        }
    }

    @Test
    void closedMemoryIsRefusedByFfm() {
        Arena arena = Arena.ofConfined();
        MemorySegment src = arena.allocate(64);
        arena.close();
        for (KernelPath p : KernelPath.all()) {
            p.activate();
            assertThrows(IllegalStateException.class,
                    () -> Kernels.convert(p.backend(), Conversion.BF16_TO_F32, src, MemorySegment.ofArray(new float[16]),
                            16));
        }
        KernelPath.restoreNativeIsa();
    }
}
