package io.github.semyonsinchenko.safetensors.kernels;

import io.github.semyonsinchenko.safetensors.format.LittleEndian;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * Every conversion on every path (Java Vector, native at each ISA level this CPU runs) against
 * the scalar Java oracle, bit for bit: exhaustively over every 8- and 16-bit source pattern, over
 * every special class and rounding boundary of F32, and over at least ten million seeded random
 * floats per narrowing kernel and path. Both off-heap and heap segments are used.
 */
class ConversionPathsTest {
    private static final int CHUNK = 1 << 20;
    private static final int RANDOM_CHUNKS = 10; // 10 * 2^20 > 10 million floats per kernel and path

    @AfterAll
    static void restore() {
        KernelPath.restoreNativeIsa();
    }

    @Test
    void allPathsArePresent() {
        List<String> names = KernelPath.all().stream().map(KernelPath::name).toList();
        assertTrue(names.contains("java-vector"), names::toString);
        assertTrue(names.contains("native-scalar"), names::toString);
        if (NativeBackend.isaSupported("avx512")) {
            assertTrue(names.contains("native-avx512"), names::toString);
        }
        if (NativeBackend.isaSupported("avx512bf16")) {
            assertTrue(names.contains("native-avx512bf16"), names::toString);
        }
    }

    /** Runs {@code c} over {@code src} on every candidate path and compares with the oracle. */
    static void checkAllPaths(Conversion c, MemorySegment src, long n, String what) {
        checkPaths(KernelPath.all(), c, src, n, what);
    }

    static void checkPaths(List<KernelPath> paths, Conversion c, MemorySegment src, long n, String what) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment expected = arena.allocate(n * c.targetBytes());
            ScalarBackend.convertRange(c, src, expected, 0, n);
            MemorySegment actual = arena.allocate(n * c.targetBytes());
            for (KernelPath p : paths) {
                actual.fill((byte) 0x5A);
                p.activate();
                Kernels.convert(p.backend(), c, src, actual, n);
                compare(c, src, expected, actual, n, p + " " + what);
            }
        } finally {
            KernelPath.restoreNativeIsa();
        }
    }

    static void compare(Conversion c, MemorySegment src, MemorySegment expected, MemorySegment actual, long n,
            String what) {
        long m = expected.mismatch(actual.asSlice(0, expected.byteSize()));
        if (m >= 0) {
            long i = m / c.targetBytes();
            fail(String.format("%s %s: element %d of %d, input 0x%s: expected 0x%s, got 0x%s", c, what, i, n,
                    hex(src, i * c.sourceBytes(), c.sourceBytes()), hex(expected, i * c.targetBytes(), c.targetBytes()),
                    hex(actual, i * c.targetBytes(), c.targetBytes())));
        }
    }

    /** Little-endian bytes as a hex number. */
    static String hex(MemorySegment s, long offset, int bytes) {
        StringBuilder b = new StringBuilder();
        for (int k = bytes - 1; k >= 0; k--) {
            b.append(String.format("%02X", s.get(ScalarKernels.I8, offset + k)));
        }
        return b.toString();
    }

    // ------------------------------------------------------------------ exhaustive small sources

    @Test
    void every16BitPattern() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment src = arena.allocate(0x10000 * 2L);
            for (int h = 0; h < 0x10000; h++) {
                src.set(LittleEndian.I16, h * 2L, (short) h);
            }
            short[] heap = new short[0x10000];
            for (int h = 0; h < heap.length; h++) {
                heap[h] = (short) h;
            }
            for (Conversion c : Conversion.values()) {
                if (c.sourceBytes() == 2) {
                    checkAllPaths(c, src, 0x10000, "off-heap");
                    checkAllPaths(c, MemorySegment.ofArray(heap), 0x10000, "heap");
                }
            }
        }
    }

    @Test
    void every8BitPattern() {
        byte[] all = new byte[256 * 3];
        for (int i = 0; i < all.length; i++) {
            all[i] = (byte) i;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment src = arena.allocate(all.length);
            MemorySegment.copy(MemorySegment.ofArray(all), 0, src, 0, all.length);
            for (Conversion c : List.of(Conversion.I8_TO_F32, Conversion.U8_TO_F32)) {
                checkAllPaths(c, src, all.length, "off-heap");
                checkAllPaths(c, MemorySegment.ofArray(all), all.length, "heap");
            }
        }
    }

    // ------------------------------------------------------------------ F32 sources

    /** Every special class of F32 and every tie the 16-bit formats have, both signs. */
    static int[] specialFloats() {
        List<Integer> v = new ArrayList<>();
        int[] base = {
            0x00000000, 0x00000001, 0x00000002, 0x00000003, 0x00008000, 0x00018000, 0x007FFFFF, 0x00800000,
            0x00800001, 0x7F7FFFFF, 0x7F7F8000, 0x7F7F7FFF, 0x7F7EFFFF, 0x3F800000, 0x3F808000, 0x3F818000,
            0x3F808001, 0x3F807FFF, 0x7F800000, 0x7FC00000, 0x7F800001, 0x7FBFFFFF, 0x7FFFFFFF, 0x7FC00001,
            0x7F802000, 0x7F801FFF, 0x7FA00000, 0x7FE12345,
            0x477FE000, 0x477FEFFF, 0x477FF000, 0x477FF001, 0x477FFFFF, 0x47800000, 0x47800001, 0x4F000000,
            0x38800000, 0x387FFFFF, 0x387FE000, 0x387FC000, 0x38801000, 0x38803000, 0x33800000, 0x33000000,
            0x33000001, 0x32FFFFFF, 0x33C00000, 0x34200000, 0x337FFFFF, 0x33800001, 0x2F800000,
        };
        for (int b : base) {
            v.add(b);
        }
        // BF16 ties (and neighbours) at every exponent, kept lsb even and odd.
        for (int e = 0; e < 255; e++) {
            for (int m7 : new int[] {0, 1, 0x7E, 0x7F}) {
                int tie = (e << 23) | (m7 << 16) | 0x8000;
                v.add(tie);
                v.add(tie - 1);
                v.add(tie + 1);
            }
        }
        // F16 normal ties at every F16 exponent (F32 exponents 113..142).
        for (int e = 113; e <= 142; e++) {
            for (int m10 : new int[] {0, 1, 0x3FE, 0x3FF}) {
                int tie = (e << 23) | (m10 << 13) | 0x1000;
                v.add(tie);
                v.add(tie - 1);
                v.add(tie + 1);
            }
        }
        // F16 subnormal ties: remainder exactly half a 2^-24 step, F32 exponents 102..112.
        for (int e = 102; e <= 112; e++) {
            int shift = 126 - e;
            for (int q : new int[] {0, 1, 2, 3, 0x3FE, 0x3FF}) {
                long m = ((long) q << shift) | (1L << (shift - 1));
                if ((m >>> 23) != 1) {
                    continue; // not representable with this exponent
                }
                int tie = (e << 23) | (int) (m & 0x7FFFFF);
                v.add(tie);
                v.add(tie - 1);
                v.add(tie + 1);
            }
        }
        int[] out = new int[v.size() * 2];
        for (int i = 0; i < v.size(); i++) {
            out[2 * i] = v.get(i);
            out[2 * i + 1] = v.get(i) | 0x80000000;
        }
        return out;
    }

    @Test
    void specialFloatsOnEveryPath() {
        int[] specials = specialFloats();
        assertTrue(specials.length > 1000);
        try (Arena arena = Arena.ofConfined()) {
            // Three copies, shifted, so each value lands in a vector body and in different lanes.
            for (int shift = 0; shift < 3; shift++) {
                int n = specials.length + shift;
                MemorySegment src = arena.allocate(n * 4L);
                int[] heap = new int[n];
                for (int i = 0; i < specials.length; i++) {
                    heap[i + shift] = specials[i];
                }
                MemorySegment.copy(MemorySegment.ofArray(heap), 0, src, 0, n * 4L);
                for (Conversion c : Conversion.values()) {
                    if (c.sourceBytes() == 4) { // F32 sources, plus I32/U32 on the same bits
                        checkAllPaths(c, src, n, "specials off-heap, shift " + shift);
                        checkAllPaths(c, MemorySegment.ofArray(heap), n, "specials heap, shift " + shift);
                    }
                }
            }
        }
    }

    /**
     * One odd value (subnormal, NaN, zero, infinity, the largest finite, a tie) at every position of
     * a window of 64 normal ties, of normals with a zero next to it, or of zeros: a SIMD path that
     * takes a fast instruction for a whole vector step and redoes the step when a lane needs it
     * (native avx512bf16) must see every lane. Long enough (over 4 MiB of BF16) for the native
     * streaming-store loop; the shifts move the windows across vector steps.
     */
    @Test
    void oddLanesAmongNormalsAndZeros() {
        int[] odd = {0x00000001, 0x007FFFFF, 0x00008000, 0x00018000, 0x7F800001, 0x7FC00000, 0x7FFFFFFF,
            0x00000000, 0x7F800000, 0x7F7FFFFF, 0x7F7F8000, 0x00800000};
        SplittableRandom rnd = new SplittableRandom(7);
        int window = 64;
        int[] block = new int[2 * 3 * odd.length * window * window];
        int at = 0;
        for (int sign = 0; sign < 2; sign++) {
            for (int background = 0; background < 3; background++) {
                for (int v : odd) {
                    for (int p = 0; p < window; p++) {
                        for (int i = 0; i < window; i++) {
                            int u = ((rnd.nextInt() & 0x80FF0000) | 0x3F008000) ^ (rnd.nextInt() & 0x10000);
                            if (i == p) {
                                u = v;
                            } else if (background == 2 || (background == 1 && i == (p + 1) % window)) {
                                u = 0;
                            }
                            block[at++] = u | (sign << 31);
                        }
                    }
                }
            }
        }
        int n = 3 * (1 << 20); // 6 MiB of 16-bit output
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment src = arena.allocate((n + 32) * 4L, 64);
            for (int i = 0; i < n + 32; i++) {
                src.set(LittleEndian.I32, i * 4L, block[i % block.length]);
            }
            for (int shift : new int[] {0, 5, 16, 31}) {
                for (Conversion c : List.of(Conversion.F32_TO_BF16_RNE, Conversion.F32_TO_F16_RNE)) {
                    checkAllPaths(c, src.asSlice(shift * 4L, n * 4L), n, "odd lanes, shift " + shift);
                }
            }
        }
    }

    @Test
    void tenMillionRandomFloatsPerNarrowingKernel() {
        List<Conversion> narrowing = List.of(Conversion.F32_TO_BF16_RNE, Conversion.F32_TO_BF16_TRUNC,
                Conversion.F32_TO_F16_RNE, Conversion.F32_TO_F16_TRUNC);
        SplittableRandom rnd = new SplittableRandom(0x5AFE7E45L);
        List<KernelPath> candidates = KernelPath.candidates();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment src = arena.allocate(CHUNK * 4L);
            for (int chunk = 0; chunk < RANDOM_CHUNKS; chunk++) {
                int[] values = ScalarOracleTest.interestingFloats(rnd, CHUNK);
                MemorySegment.copy(MemorySegment.ofArray(values), 0, src, 0, CHUNK * 4L);
                for (Conversion c : narrowing) {
                    // The scalar path is the oracle's own loop; the other tests cover its plumbing.
                    checkPaths(candidates, c, src, CHUNK, "random chunk " + chunk);
                }
            }
        }
    }

    @Test
    void randomWideSources() {
        SplittableRandom rnd = new SplittableRandom(42);
        int n = 1 << 19;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment src = arena.allocate(n * 8L);
            for (long i = 0; i < n; i++) {
                long v = rnd.nextLong();
                v = switch ((int) (i % 4)) {
                    case 0 -> v >>> rnd.nextInt(64); // all magnitudes
                    case 1 -> (v & ~0xFFFFFFFFFFL) | 0x8000000000L; // u64/i64 ties
                    case 2 -> (v & 0x800FFFFFFFFFFFFFL) | ((long) (1023 - 160 + rnd.nextInt(300)) << 52); // F32-range doubles
                    default -> v;
                };
                src.set(LittleEndian.I64, i * 8, v);
            }
            for (Conversion c : List.of(Conversion.I64_TO_F32, Conversion.U64_TO_F32, Conversion.F64_TO_F32)) {
                checkAllPaths(c, src, n, "random");
            }
            // The same bits as 32-bit integers (twice as many).
            for (Conversion c : List.of(Conversion.I32_TO_F32, Conversion.U32_TO_F32)) {
                checkAllPaths(c, src, 2L * n, "random");
            }
        }
    }

    /** Heap conversions bigger than one critical call: the native path splits them into 4 MiB chunks. */
    @Test
    void heapConversionsSpanningSeveralCriticalChunks() {
        int n = (int) (2 * NativeBackend.CRITICAL_CHUNK_BYTES / 4 + 12345); // F32 source: 2 full chunks and a bit
        int[] bits = ScalarOracleTest.interestingFloats(new SplittableRandom(8), n);
        checkAllPaths(Conversion.F32_TO_BF16_RNE, MemorySegment.ofArray(bits), n, "heap, 3 chunks");
        short[] halves = new short[n];
        for (int i = 0; i < n; i++) {
            halves[i] = (short) bits[i];
        }
        checkAllPaths(Conversion.F16_TO_F32, MemorySegment.ofArray(halves), n, "heap, 3 chunks of dst");
    }

    @Test
    void f64NaNsAndInfinities() {
        long[] values = {0x7FF0000000000001L, 0x7FF4000000000000L, 0xFFF8000000000000L, 0x7FFFFFFFFFFFFFFFL,
            0xFFF0000000000001L, 0x7FF8000000000001L, 0x7FF0000020000000L, 0x7FF000001FFFFFFFL, 0x7FF0000000000000L,
            0xFFF0000000000000L, 0x47EFFFFFE0000000L, 0x47EFFFFFF0000000L, 0x47EFFFFFEFFFFFFFL, 0x0000000000000001L,
            0x36A0000000000000L, 0x36A0000000000001L, 0x3690000000000000L, 0x8000000000000000L};
        long[] data = new long[values.length * 4];
        for (int i = 0; i < data.length; i++) {
            data[i] = values[i % values.length] ^ (i >= values.length * 2 ? Long.MIN_VALUE : 0);
        }
        checkAllPaths(Conversion.F64_TO_F32, MemorySegment.ofArray(data), data.length, "F64 specials heap");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment src = arena.allocate(data.length * 8L);
            MemorySegment.copy(MemorySegment.ofArray(data), 0, src, 0, data.length * 8L);
            checkAllPaths(Conversion.F64_TO_F32, src, data.length, "F64 specials off-heap");
        }
        assertFalse(KernelPath.all().isEmpty());
    }
}
