package io.github.semyonsinchenko.safetensors.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.kernels.Conversion;
import io.github.semyonsinchenko.safetensors.kernels.Kernels;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * {@link SliceLayout} and its copies against a naive oracle that walks every element of the result:
 * seeded random shapes of rank 0 to 5, random indexes (negative, stepped, single, {@code ...}), every
 * byte-aligned dtype, with and without conversion; plus the rules (bounds, rank, steps, sub-byte
 * alignment) and the run structure (merging, {@link SliceLayout#mergedRanges}). The Python interop
 * suite holds the same copies to numpy.
 */
class SliceLayoutTest {
    private static final ValueLayout.OfByte B = ValueLayout.JAVA_BYTE;

    /** The per-dimension selection, resolved the long way: {start, step, count, kept}. */
    static long[][] resolve(long[] shape, Slice slice) {
        List<Slice.Index> idx = new ArrayList<>(slice.indexes());
        int e = idx.indexOf(Slice.ELLIPSIS);
        if (e >= 0) {
            idx.remove(e);
            int missing = shape.length - idx.size();
            for (int i = 0; i < missing; i++) {
                idx.add(e, Slice.all());
            }
        }
        long[][] r = new long[shape.length][];
        for (int d = 0; d < shape.length; d++) {
            Slice.Index i = d < idx.size() ? idx.get(d) : Slice.all();
            long n = shape[d];
            if (i instanceof Slice.At at) {
                long j = at.index() < 0 ? at.index() + n : at.index();
                r[d] = new long[] {j, 1, 1, 0};
            } else {
                Slice.Range g = (Slice.Range) i;
                long s = g.start() == null ? 0 : g.start() < 0 ? g.start() + n : g.start();
                long t = g.stop() == null ? n : g.stop() < 0 ? g.stop() + n : g.stop();
                long count = 0;
                for (long k = s; k < t; k += g.step()) {
                    count++;
                }
                r[d] = new long[] {s, g.step(), count, 1};
            }
        }
        return r;
    }

    /** The slice's bytes, element by element in row-major order of the result. */
    static byte[] oracle(byte[] tensor, int elementBytes, long[] shape, Slice slice) {
        long[][] r = resolve(shape, slice);
        long total = 1;
        for (long[] d : r) {
            total *= d[2];
        }
        byte[] out = new byte[(int) (total * elementBytes)];
        long[] pos = new long[shape.length];
        for (long k = 0; k < total; k++) {
            long rem = k;
            for (int d = shape.length - 1; d >= 0; d--) {
                pos[d] = rem % r[d][2];
                rem /= r[d][2];
            }
            long src = 0;
            for (int d = 0; d < shape.length; d++) {
                src = src * shape[d] + r[d][0] + pos[d] * r[d][1];
            }
            System.arraycopy(tensor, (int) (src * elementBytes), out, (int) (k * elementBytes), elementBytes);
        }
        return out;
    }

    static long[] resultShape(long[] shape, Slice slice) {
        long[][] r = resolve(shape, slice);
        return Arrays.stream(r).filter(d -> d[3] == 1).mapToLong(d -> d[2]).toArray();
    }

    /**
     * A random valid slice of {@code shape}: some dimensions indexed, ranged, stepped, or left out;
     * sometimes a {@code ...} standing for whole dimensions between the leading and trailing indexes.
     */
    static Slice randomSlice(long[] shape, SplittableRandom rnd) {
        int rank = shape.length;
        boolean ellipsis = rnd.nextInt(6) == 0;
        int before = rank == 0 ? 0 : rnd.nextInt(3) == 0 ? rnd.nextInt(rank + 1) : rank - rnd.nextInt(Math.min(2, rank));
        int after = ellipsis && rank - before > 0 ? rnd.nextInt(rank - before + 1) : 0;
        List<Slice.Index> idx = new ArrayList<>();
        for (int d = 0; d < before; d++) {
            idx.add(randomIndex(shape[d], rnd));
        }
        if (ellipsis) {
            idx.add(Slice.ELLIPSIS);
            for (int d = rank - after; d < rank; d++) {
                idx.add(randomIndex(shape[d], rnd));
            }
        }
        return Slice.of(idx);
    }

    static Slice.Index randomIndex(long n, SplittableRandom rnd) {
        int kind = rnd.nextInt(6);
        if (kind == 0 && n > 0) {
            long j = rnd.nextLong(n);
            return Slice.at(rnd.nextBoolean() ? j : j - n);
        }
        if (kind == 1) {
            return Slice.all();
        }
        boolean empty = n == 0 || rnd.nextInt(8) == 0;
        long s = empty ? rnd.nextLong(n + 1) : rnd.nextLong(n);
        long t = empty ? s : s + 1 + rnd.nextLong(n - s);
        long step = rnd.nextInt(4) == 0 ? 1 + rnd.nextLong(Math.max(1, n)) : 1 + rnd.nextInt(2);
        Long start = rnd.nextInt(5) == 0 && s == 0 ? null : rnd.nextInt(4) == 0 && s < n ? s - n : s;
        Long stop = rnd.nextInt(5) == 0 && t == n ? null : t;
        return new Slice.Range(start, stop, step);
    }

    private static final Dtype[] BYTE_ALIGNED = Arrays.stream(Dtype.values()).filter(Dtype::isByteAligned)
            .toArray(Dtype[]::new);

    @Test
    void randomSlicesOfEveryDtypeAndRankMatchTheOracle() {
        SplittableRandom rnd = new SplittableRandom(31);
        int cases = 0;
        int strided = 0;
        try (Arena arena = Arena.ofConfined()) {
            for (int iter = 0; iter < 3000; iter++) {
                Dtype dtype = BYTE_ALIGNED[iter % BYTE_ALIGNED.length];
                int rank = iter % 6;
                long[] shape = new long[rank];
                for (int d = 0; d < rank; d++) {
                    shape[d] = rnd.nextInt(25) == 0 ? 0 : 1 + rnd.nextInt(rank >= 4 ? 4 : 9);
                    if (rnd.nextInt(10) == 0) {
                        shape[d] = 1;
                    }
                }
                long n = Arrays.stream(shape).reduce(1, (a, b) -> a * b);
                byte[] bytes = new byte[(int) (n * dtype.byteSize())];
                rnd.nextBytes(bytes);
                Tensor t = Tensor.of("t", dtype, shape, bytes);
                Slice slice = randomSlice(shape, rnd);
                // Round trip through the text form.
                assertEquals(slice, Slice.parse(slice.toString()), slice.toString());
                TensorSlice ts = t.slice(slice);
                SliceLayout layout = ts.layout();
                byte[] want = oracle(bytes, dtype.byteSize(), shape, slice);
                String what = dtype + " " + Arrays.toString(shape) + slice + " -> " + layout;
                assertArrayEquals(resultShape(shape, slice), ts.shape(), what);
                assertEquals(want.length, layout.byteSize(), what);
                assertArrayEquals(want, ts.toByteArray(), what);
                // Into the middle of a larger segment: bytes outside stay untouched.
                MemorySegment dst = arena.allocate(want.length + 16L);
                dst.fill((byte) 0x77);
                layout.copyRuns(t.data(), 0, 0, layout.runCount(), dst, 8, dtype);
                assertArrayEquals(want, dst.asSlice(8, want.length).toArray(B), what);
                assertEquals((byte) 0x77, dst.get(B, 7));
                assertEquals((byte) 0x77, dst.get(B, 8L + want.length));
                // The runs, concatenated, are the result; contiguous ones are a view.
                ByteArrayCollector runs = new ByteArrayCollector();
                ts.runs().forEach(runs::add);
                assertArrayEquals(want, runs.bytes(), what);
                if (ts.isContiguous()) {
                    assertArrayEquals(want, ts.view().toArray(B), what);
                } else {
                    strided++;
                    assertThrows(IllegalStateException.class, ts::view);
                }
                checkRunsAreOrderedAndDisjoint(layout, what);
                checkMergedRanges(layout, rnd, what);
                checkConversion(t, ts, want, arena, what);
                cases++;
            }
        }
        assertEquals(3000, cases);
        assertTrue(strided > 300, strided + " strided cases");
    }

    /** Widening to F32 and F64, where a kernel does it, equals widening the oracle's bytes element by element. */
    private static void checkConversion(Tensor t, TensorSlice ts, byte[] want, Arena arena, String what) {
        for (Dtype target : new Dtype[] {Dtype.F32, Dtype.F64, Dtype.BF16}) {
            if (!Kernels.canConvert(t.dtype(), target)) {
                assertThrows(UnsupportedOperationException.class, () -> ts.to(target, arena), what);
                continue;
            }
            long count = ts.elementCount();
            MemorySegment expected = arena.allocate(Math.max(1, count * target.byteSize()));
            Kernels.convert(t.dtype(), target, MemorySegment.ofArray(want), expected, count);
            Tensor converted = ts.to(target, arena);
            assertEquals(target, converted.dtype());
            assertArrayEquals(ts.shape(), converted.shape());
            assertArrayEquals(expected.asSlice(0, count * target.byteSize()).toArray(B), converted.toByteArray(),
                    what + " to " + target);
        }
    }

    private static void checkRunsAreOrderedAndDisjoint(SliceLayout layout, String what) {
        long prevEnd = -1;
        for (SliceLayout.Run r : layout.runs()) {
            assertTrue(r.offset() >= prevEnd, what);
            assertEquals(layout.runBytes(), r.length(), what);
            prevEnd = r.end();
        }
        if (layout.runCount() > 0) {
            assertEquals(prevEnd, layout.endOffset(), what);
        }
    }

    /** Every run in exactly one merged range, in order; a range's gaps are at most the threshold. */
    private static void checkMergedRanges(SliceLayout layout, SplittableRandom rnd, String what) {
        long maxGap = rnd.nextInt(3) == 0 ? 0 : rnd.nextLong(64);
        List<SliceLayout.MergedRange> merged = layout.mergedRanges(maxGap);
        long run = 0;
        long prevEnd = Long.MIN_VALUE;
        for (SliceLayout.MergedRange m : merged) {
            assertEquals(run, m.firstRun(), what);
            assertEquals(layout.runOffset(run), m.offset(), what);
            long end = layout.runOffset(run + m.runs() - 1) + layout.runBytes();
            assertEquals(end, m.end(), what);
            for (long i = run + 1; i < run + m.runs(); i++) {
                long gap = layout.runOffset(i) - (layout.runOffset(i - 1) + layout.runBytes());
                assertTrue(gap <= maxGap, what + ": gap " + gap + " > " + maxGap);
            }
            if (prevEnd != Long.MIN_VALUE) {
                assertTrue(m.offset() >= prevEnd, what);
            }
            prevEnd = m.end();
            run += m.runs();
        }
        assertEquals(layout.runCount(), run, what);
    }

    private static final class ByteArrayCollector {
        private final java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();

        void add(MemorySegment run) {
            out.writeBytes(run.toArray(B));
        }

        byte[] bytes() {
            return out.toByteArray();
        }
    }

    // ------------------------------------------------------------------ structure

    @Test
    void wholeInnerDimensionsMergeIntoLongRunsAndEvenLoopsMerge() {
        long[] shape = {4, 3, 5};
        SliceLayout rows = SliceLayout.of("w", Dtype.F32, shape, Slice.parse("1:3"));
        assertTrue(rows.isContiguous());
        assertEquals(1, rows.runCount());
        assertEquals(2 * 15 * 4, rows.runBytes());
        assertEquals(15 * 4, rows.firstOffset());

        SliceLayout cols = SliceLayout.of("w", Dtype.F32, shape, Slice.parse(":, :, 1:3"));
        assertEquals(12, cols.runCount(), "dims 0 and 1 merge into one loop of 12");
        assertArrayEquals(new long[] {12}, cols.loopCounts());
        assertArrayEquals(new long[] {20}, cols.loopStrides());
        assertEquals(8, cols.runBytes());

        SliceLayout layer = SliceLayout.of("w", Dtype.BF16, shape, Slice.parse("2"));
        assertArrayEquals(new long[] {3, 5}, layer.shape());
        assertTrue(layer.isContiguous());

        SliceLayout stepped = SliceLayout.of("w", Dtype.U8, new long[] {10}, Slice.parse("::3"));
        assertArrayEquals(new long[] {4}, stepped.shape());
        assertEquals(List.of(new SliceLayout.Run(0, 1), new SliceLayout.Run(3, 1), new SliceLayout.Run(6, 1),
                new SliceLayout.Run(9, 1)), stepped.runs());
        assertEquals(1, stepped.mergedRanges(2).size(), "gaps of 2 bytes merge at a threshold of 2");
        assertEquals(4, stepped.mergedRanges(1).size());

        SliceLayout scalar = SliceLayout.of("s", Dtype.F64, new long[] {}, Slice.whole());
        assertArrayEquals(new long[] {}, scalar.shape());
        assertEquals(8, scalar.byteSize());
        assertTrue(scalar.isWhole());

        SliceLayout empty = SliceLayout.of("w", Dtype.F32, shape, Slice.parse(":, 2:2"));
        assertArrayEquals(new long[] {4, 0, 5}, empty.shape());
        assertEquals(0, empty.runCount());
        assertEquals(0, empty.byteSize());
        assertTrue(empty.isContiguous());
        assertEquals(List.of(), empty.mergedRanges(1 << 20));
    }

    @Test
    void boundsRankStepsAndSubByteAlignmentAreChecked() {
        long[] shape = {4, 6};
        SliceOutOfBoundsException e = assertThrows(SliceOutOfBoundsException.class,
                () -> SliceLayout.of("model.w", Dtype.F32, shape, Slice.parse(":, 0:7")));
        assertEquals("model.w", e.tensor());
        assertEquals(1, e.dimension());
        assertEquals(6, e.dimensionSize());
        assertEquals("0:7", e.index());
        assertTrue(e.getMessage().contains("tensor \"model.w\" [4, 6]: dimension 1 (size 6): 0:7 stops outside"),
                e.getMessage());
        assertThrows(SliceOutOfBoundsException.class, () -> SliceLayout.of("w", Dtype.F32, shape, Slice.parse("4")));
        assertThrows(SliceOutOfBoundsException.class, () -> SliceLayout.of("w", Dtype.F32, shape, Slice.parse("-5")));
        assertThrows(SliceOutOfBoundsException.class, () -> SliceLayout.of("w", Dtype.F32, shape, Slice.parse("3:1")));
        assertThrows(SliceOutOfBoundsException.class, () -> SliceLayout.of("w", Dtype.F32, shape, Slice.parse("5:")));
        SliceLayout last = SliceLayout.of("w", Dtype.F32, shape, Slice.parse("-1"));
        assertArrayEquals(new long[] {6}, last.shape());
        assertEquals(3 * 6 * 4, last.firstOffset());
        IllegalArgumentException rank = assertThrows(IllegalArgumentException.class,
                () -> SliceLayout.of("w", Dtype.F32, shape, Slice.parse("0, 0, 0")));
        assertTrue(rank.getMessage().contains("has 2 dimension(s), but slice [0, 0, 0] has 3 indexes"),
                rank.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Slice.parse("::0"));
        assertThrows(IllegalArgumentException.class, () -> Slice.parse("::-1"));
        assertThrows(IllegalArgumentException.class, () -> Slice.parse("1:2:3:4"));
        assertThrows(IllegalArgumentException.class, () -> Slice.parse("a"));
        assertThrows(IllegalArgumentException.class, () -> Slice.parse("..., ..."));
        // F4: two elements a byte. Whole bytes slice; half bytes do not.
        long[] f4 = {4, 4};
        SliceLayout ok = SliceLayout.of("q", Dtype.F4, f4, Slice.parse(":, 2:4"));
        assertEquals(1, ok.runBytes());
        assertEquals(4, ok.runCount());
        IllegalArgumentException half = assertThrows(IllegalArgumentException.class,
                () -> SliceLayout.of("q", Dtype.F4, f4, Slice.parse(":, 1:3")));
        assertTrue(half.getMessage().contains("byte boundaries"), half.getMessage());
    }

    @Test
    void sub_byteSlicesCopyWholeBytes() {
        byte[] packed = new byte[8]; // F4 [4, 4]: two bytes a row
        for (int i = 0; i < packed.length; i++) {
            packed[i] = (byte) (0x10 * i + i);
        }
        Tensor t = Tensor.of("q", Dtype.F4, new long[] {4, 4}, packed);
        assertArrayEquals(new byte[] {packed[1], packed[3], packed[5], packed[7]}, t.slice(":, 2:4").toByteArray());
        assertArrayEquals(new byte[] {packed[2], packed[3]}, t.slice("1").toByteArray());
        assertThrows(UnsupportedOperationException.class, () -> t.slice("1").toFloatArray());
    }

    @Test
    void stridedSlicesOfLargeRowsAreCopiedRunByRunAndShortOnesGathered() {
        // Every copy path against the oracle: gathered short runs (and the fused BF16 gather-and-convert),
        // runs copied one by one into the conversion buffer, and runs long enough to convert one by one.
        SplittableRandom rnd = new SplittableRandom(5);
        for (long[] shape : new long[][] {{300, 8}, {300, 1000}, {12, 40000}}) {
            byte[] bytes = new byte[(int) (shape[0] * shape[1] * 2)];
            rnd.nextBytes(bytes);
            Tensor t = Tensor.of("e", Dtype.BF16, shape, bytes);
            for (String s : new String[] {":, 1:5", "::3, 2:", "1:10:7, ::2", "..., -3"}) {
                Slice slice = Slice.parse(s);
                byte[] want = oracle(bytes, 2, shape, slice);
                TensorSlice ts = t.slice(slice);
                assertArrayEquals(want, ts.toByteArray(), s);
                float[] widened = ts.toFloatArray();
                for (int i = 0; i < widened.length; i++) {
                    short h = (short) ((want[2 * i] & 0xFF) | want[2 * i + 1] << 8);
                    int bits = (int) Kernels.convertBits(Conversion.BF16_TO_F32, h);
                    assertEquals(bits, Float.floatToRawIntBits(widened[i]), s + " element " + i);
                }
            }
        }
    }

    @Test
    void copyRunsFromAPartialBuffer() {
        // A reader that fetched only the merged ranges copies each range's runs from where it landed.
        byte[] bytes = new byte[20 * 50 * 4];
        new SplittableRandom(2).nextBytes(bytes);
        long[] shape = {20, 50};
        Slice slice = Slice.parse("::4, 10:30");
        SliceLayout layout = SliceLayout.of("w", Dtype.F32, shape, slice);
        byte[] want = oracle(bytes, 4, shape, slice);
        MemorySegment out = MemorySegment.ofArray(new byte[want.length]);
        long dst = 0;
        for (SliceLayout.MergedRange m : layout.mergedRanges(0)) {
            MemorySegment fetched = MemorySegment.ofArray(Arrays.copyOfRange(bytes, (int) m.offset(), (int) m.end()));
            layout.copyRuns(fetched, m.offset(), m.firstRun(), m.firstRun() + m.runs(), out, dst, Dtype.F32);
            dst += m.runs() * layout.runBytes();
        }
        assertArrayEquals(want, out.toArray(B));
        MemorySegment tooShort = MemorySegment.ofArray(new byte[8]);
        assertThrows(IndexOutOfBoundsException.class,
                () -> layout.copyRuns(tooShort, 40, 0, 2, out, 0, Dtype.F32));
        assertFalse(layout.isContiguous());
    }
}
