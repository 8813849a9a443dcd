package io.github.semyonsinchenko.safetensors.kernels;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * Every conversion on every path at every length 0..257 (so every vector tail), from starts 0..3
 * elements into a larger segment and from an odd byte address, on heap, off-heap and mixed
 * (off-heap source, heap destination) segments, which take turns. The destination is handed
 * over with room to spare and surrounded by guard bytes, which must come back unchanged.
 */
class LengthsAndGuardsTest {
    static final int MAX_N = 257;
    static final int GUARD = 64;
    static final byte FILL = (byte) 0xA5;

    @AfterAll
    static void restore() {
        KernelPath.restoreNativeIsa();
    }

    enum Memory { OFF_HEAP, HEAP, NATIVE_TO_HEAP }

    /** A segment of {@code bytes} bytes with {@code content}, on or off the heap. */
    static MemorySegment place(byte[] content, boolean heap, Arena arena) {
        if (heap) {
            return MemorySegment.ofArray(content.clone());
        }
        MemorySegment s = arena.allocate(content.length, 1);
        MemorySegment.copy(MemorySegment.ofArray(content), 0, s, 0, content.length);
        return s;
    }

    /**
     * The starts tried at length {@code n}: all five near the ends of the range (no, one and two
     * whole 512-bit vectors plus every tail; the longest calls), one in turn in between.
     */
    static int[] starts(int n) {
        return n <= 40 || n >= MAX_N - 7 ? new int[] {0, 1, 2, 3, 4} : new int[] {n % 5};
    }

    @Test
    void everyLengthOffsetAndMemoryKind() {
        SplittableRandom rnd = new SplittableRandom(11);
        List<KernelPath> paths = KernelPath.all();
        int calls = 0;
        try (Arena arena = Arena.ofConfined()) {
            for (Conversion c : Conversion.values()) {
                int sb = c.sourceBytes();
                int tb = c.targetBytes();
                byte[] srcBytes = new byte[(MAX_N + 4) * sb + 1];
                rnd.nextBytes(srcBytes);
                int dstLen = GUARD + (MAX_N + 4) * tb + 1 + GUARD;
                MemorySegment[] srcs = new MemorySegment[Memory.values().length];
                MemorySegment[] dsts = new MemorySegment[Memory.values().length];
                for (Memory mem : Memory.values()) {
                    srcs[mem.ordinal()] = place(srcBytes, mem == Memory.HEAP, arena);
                    dsts[mem.ordinal()] = place(new byte[dstLen], mem != Memory.OFF_HEAP, arena);
                }
                MemorySegment want = arena.allocate(dstLen);
                for (int n = 0; n <= MAX_N; n++) {
                    for (int start : starts(n)) {
                        // starts 0..3 are element offsets; 4 means "one byte in", unaligned for all.
                        long srcOff = start < 4 ? (long) start * sb : 1;
                        long dstOff = GUARD + (start < 4 ? (long) start * tb : 1);
                        want.fill(FILL);
                        ScalarBackend.convertRange(c, srcs[0].asSlice(srcOff, (long) n * sb), want.asSlice(dstOff), 0, n);
                        for (int k = 0; k < paths.size(); k++) {
                            KernelPath path = paths.get(k).activate();
                            // The memory kinds take turns.
                            Memory mem = Memory.values()[(n + start + k) % Memory.values().length];
                            MemorySegment s = srcs[mem.ordinal()].asSlice(srcOff, (long) n * sb);
                            MemorySegment dst = dsts[mem.ordinal()];
                            dst.fill(FILL);
                            // dst extends to the end of the buffer: bytes past n must stay untouched.
                            Kernels.convert(path.backend(), c, s, dst.asSlice(dstOff, dstLen - GUARD - dstOff), n);
                            long m = want.mismatch(dst);
                            if (m >= 0) {
                                fail(String.format("%s %s %s n=%d start=%d: byte %d (region [%d, %d)) expected %02X"
                                        + " got %02X", path, c, mem, n, start, m, dstOff, dstOff + (long) n * tb,
                                        want.get(ScalarKernels.I8, m), dst.get(ScalarKernels.I8, m)));
                            }
                            calls++;
                        }
                    }
                }
            }
        } finally {
            KernelPath.restoreNativeIsa();
        }
        int perPath = 0;
        for (int n = 0; n <= MAX_N; n++) {
            perPath += starts(n).length;
        }
        assertEquals(paths.size() * Conversion.values().length * perPath, calls);
    }

    // ------------------------------------------------------------------ the public heap-array overloads

    /** Calls the typed array overload for {@code c} (on the selected path) and returns the dst array. */
    static Object callArrayOverload(Conversion c, Object src, int srcOff, Object dst, int dstOff, int n) {
        switch (src) {
            case short[] s when dst instanceof float[] d -> Kernels.convert(c, s, srcOff, d, dstOff, n);
            case short[] s when dst instanceof short[] d -> Kernels.convert(c, s, srcOff, d, dstOff, n);
            case float[] s when dst instanceof double[] d -> Kernels.convert(c, s, srcOff, d, dstOff, n);
            case float[] s -> Kernels.convert(c, s, srcOff, (short[]) dst, dstOff, n);
            case byte[] s -> Kernels.convert(c, s, srcOff, (float[]) dst, dstOff, n);
            case int[] s when dst instanceof double[] d -> Kernels.convert(c, s, srcOff, d, dstOff, n);
            case int[] s -> Kernels.convert(c, s, srcOff, (float[]) dst, dstOff, n);
            case long[] s when dst instanceof double[] d -> Kernels.convert(c, s, srcOff, d, dstOff, n);
            case long[] s -> Kernels.convert(c, s, srcOff, (float[]) dst, dstOff, n);
            case double[] s -> Kernels.convert(c, s, srcOff, (float[]) dst, dstOff, n);
            default -> throw new AssertionError(src.getClass());
        }
        return dst;
    }

    static Object newArray(int bytesPerElement, boolean floating, int length) {
        return switch (bytesPerElement) {
            case 1 -> new byte[length];
            case 2 -> new short[length];
            case 4 -> floating ? new float[length] : new int[length];
            case 8 -> floating ? new double[length] : new long[length];
            default -> throw new AssertionError(bytesPerElement);
        };
    }

    static boolean floating(io.github.semyonsinchenko.safetensors.format.Dtype d) {
        return d.name().startsWith("F") && d.byteSize() >= 4;
    }

    @Test
    void arrayOverloadsAtEveryLengthAndOffset() {
        SplittableRandom rnd = new SplittableRandom(12);
        for (Conversion c : Conversion.values()) {
            int sb = c.sourceBytes();
            int tb = c.targetBytes();
            int len = MAX_N + 8;
            Object src = newArray(sb, floating(c.source()), len);
            byte[] raw = new byte[len * sb];
            rnd.nextBytes(raw);
            MemorySegment.copy(MemorySegment.ofArray(raw), 0, heapSegment(src), 0, raw.length);
            for (int n = 0; n <= MAX_N; n++) {
                // Element offsets only (arrays have no odd byte address), as in starts(n).
                int[] offsets = starts(n).length > 1 ? new int[] {0, 1, 2, 3} : new int[] {n % 4};
                for (int off : offsets) {
                    Object dst = newArray(tb, floating(c.target()), len);
                    MemorySegment d = heapSegment(dst);
                    d.fill(FILL);
                    MemorySegment want = MemorySegment.ofArray(new byte[len * tb]);
                    want.fill(FILL);
                    ScalarBackend.convertRange(c, heapSegment(src).asSlice((long) off * sb),
                            want.asSlice((long) (off + 1) * tb), 0, n);
                    callArrayOverload(c, src, off, dst, off + 1, n);
                    long m = want.mismatch(d);
                    if (m >= 0) {
                        fail(c + " arrays n=" + n + " off=" + off + ": byte " + m + " differs");
                    }
                }
            }
        }
    }

    static MemorySegment heapSegment(Object array) {
        return switch (array) {
            case byte[] a -> MemorySegment.ofArray(a);
            case short[] a -> MemorySegment.ofArray(a);
            case int[] a -> MemorySegment.ofArray(a);
            case long[] a -> MemorySegment.ofArray(a);
            case float[] a -> MemorySegment.ofArray(a);
            case double[] a -> MemorySegment.ofArray(a);
            default -> throw new AssertionError(array.getClass());
        };
    }

    /** The two-argument form converts a whole segment and reports the count. */
    @Test
    void wholeSegmentForm() {
        short[] src = {0x3F80, (short) 0xC000, 0x7F80};
        float[] dst = new float[4];
        long n = Kernels.convert(Conversion.BF16_TO_F32, MemorySegment.ofArray(src), MemorySegment.ofArray(dst));
        assertEquals(3, n);
        assertEquals(1.0f, dst[0]);
        assertEquals(-2.0f, dst[1]);
        assertEquals(Float.POSITIVE_INFINITY, dst[2]);
        assertEquals(0.0f, dst[3]);
    }
}
