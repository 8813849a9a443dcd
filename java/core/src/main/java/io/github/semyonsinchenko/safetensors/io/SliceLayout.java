package io.github.semyonsinchenko.safetensors.io;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.format.TensorInfo;
import java.lang.foreign.MemorySegment;
import java.util.AbstractList;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.RandomAccess;

/**
 * Where the bytes of a {@link Slice} of one tensor are: the result's shape, and the contiguous byte
 * runs of the tensor's data that hold it, in the result's row-major order (Hugging Face's
 * {@code SliceIterator}). A pure description computed from the header entry alone, so the same
 * layout serves a mapped file, a buffer in memory and a remote reader that fetches only these runs.
 *
 * <p>All runs have the same length. They follow a regular pattern: run {@code i}'s offset is
 * {@link #firstOffset()} plus, for each loop {@code k} (innermost first), digit {@code k} of
 * {@code i} in the mixed radix {@link #loopCounts()} times {@link #loopStrides()}{@code [k]}. Inner
 * dimensions taken whole merge into longer runs, and loops whose runs follow each other evenly merge
 * into one, so {@code [:, 0:128]} of a {@code [4096, 4096]} matrix is 4096 runs of 128 elements, and
 * {@code [0:128, :]} is one run ({@link #isContiguous()}), readable without a copy.
 *
 * <p>Offsets and lengths are in bytes, relative to the tensor's first byte. A sub-byte dtype (F4,
 * F6) can be sliced only where every run starts and ends on a whole byte.
 */
public final class SliceLayout {
    /**
     * One contiguous run of the tensor's bytes.
     *
     * @param offset the first byte, relative to the tensor's first byte
     * @param length bytes in the run
     */
    public record Run(long offset, long length) {
        /** {@return one past the last byte} */
        public long end() {
            return offset + length;
        }
    }

    private final String tensor;
    private final Dtype dtype;
    private final long[] tensorShape;
    private final long tensorBytes;
    private final Slice slice;
    private final long[] shape;
    private final long elementCount;
    private final long runBytes;
    private final long runCount;
    private final long firstOffset;
    private final long[] counts;
    private final long[] strides;

    private SliceLayout(String tensor, Dtype dtype, long[] tensorShape, long tensorBytes, Slice slice, long[] shape,
                        long elementCount, long runBytes, long runCount, long firstOffset, long[] counts,
                        long[] strides) {
        this.tensor = tensor;
        this.dtype = dtype;
        this.tensorShape = tensorShape;
        this.tensorBytes = tensorBytes;
        this.slice = slice;
        this.shape = shape;
        this.elementCount = elementCount;
        this.runBytes = runBytes;
        this.runCount = runCount;
        this.firstOffset = firstOffset;
        this.counts = counts;
        this.strides = strides;
    }

    /**
     * The layout of {@code slice} applied to the tensor {@code info} describes.
     *
     * @param info the tensor's header entry
     * @param slice what to take of it
     * @return the layout
     * @throws SliceOutOfBoundsException if an index is outside its dimension
     * @throws IllegalArgumentException if the slice has more indexes than the tensor has dimensions,
     *     or cuts a sub-byte dtype off a byte boundary
     */
    public static SliceLayout of(TensorInfo info, Slice slice) {
        return of(info.name(), info.dtype(), info.shape(), slice);
    }

    /**
     * The layout of {@code slice} applied to a tensor {@code name} of {@code dtype} and {@code shape}.
     *
     * @param name the tensor's name, for messages
     * @param dtype its element type
     * @param shape its shape
     * @param slice what to take of it
     * @return the layout
     * @throws SliceOutOfBoundsException if an index is outside its dimension
     * @throws IllegalArgumentException if the slice has more indexes than the tensor has dimensions,
     *     or cuts a sub-byte dtype off a byte boundary, or the shape is negative or too large
     */
    public static SliceLayout of(String name, Dtype dtype, long[] shape, Slice slice) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(dtype, "dtype");
        Objects.requireNonNull(slice, "slice");
        long[] dims = shape.clone();
        int rank = dims.length;
        long tensorElements = 1;
        for (long d : dims) {
            if (d < 0) {
                throw new IllegalArgumentException(String.format(Locale.ROOT, "tensor \"%s\": shape %s has a"
                        + " negative dimension", name, Arrays.toString(dims)));
            }
            tensorElements = Math.multiplyExact(tensorElements, d);
        }
        long tensorBytes = dtype.storageBytes(tensorElements);
        List<Slice.Index> indexes = expand(name, dims, slice);
        long[] start = new long[rank];
        long[] count = new long[rank];
        long[] step = new long[rank];
        List<Long> kept = new ArrayList<>(rank);
        long elements = 1;
        for (int d = 0; d < rank; d++) {
            Slice.Index index = d < indexes.size() ? indexes.get(d) : Slice.all();
            long n = dims[d];
            if (index instanceof Slice.At at) {
                long j = at.index() < 0 ? at.index() + n : at.index();
                if (j < 0 || j >= n) {
                    throw new SliceOutOfBoundsException(name, dims, d, index, "is outside [-" + n + ", " + n + ")");
                }
                start[d] = j;
                count[d] = 1;
                step[d] = 1;
            } else {
                Slice.Range r = (Slice.Range) index;
                long s = r.start() == null ? 0 : r.start() < 0 ? r.start() + n : r.start();
                long e = r.stop() == null ? n : r.stop() < 0 ? r.stop() + n : r.stop();
                if (s < 0 || s > n) {
                    throw new SliceOutOfBoundsException(name, dims, d, index, "starts outside [0, " + n + "]");
                }
                if (e < 0 || e > n) {
                    throw new SliceOutOfBoundsException(name, dims, d, index, "stops outside [0, " + n + "]");
                }
                if (e < s) {
                    throw new SliceOutOfBoundsException(name, dims, d, index, "stops before it starts (steps are"
                            + " positive; an empty range has stop == start)");
                }
                start[d] = s;
                count[d] = e == s ? 0 : (e - s - 1) / r.step() + 1;
                step[d] = r.step();
                kept.add(count[d]);
            }
            elements *= count[d]; // at most the tensor's element count
        }
        long[] resultShape = kept.stream().mapToLong(Long::longValue).toArray();
        if (elements == 0) {
            return new SliceLayout(name, dtype, dims, tensorBytes, slice, resultShape, 0, 0, 0, 0, new long[0],
                    new long[0]);
        }
        // Element strides of the tensor, then runs grown from the innermost dimension outward: a
        // dimension extends the run while the run covers all of the dimensions inside it.
        long[] elementStride = new long[rank];
        long stride = 1;
        for (int d = rank - 1; d >= 0; d--) {
            elementStride[d] = stride;
            stride *= dims[d];
        }
        long base = 0;
        for (int d = 0; d < rank; d++) {
            base += start[d] * elementStride[d];
        }
        long runElements = 1;
        List<long[]> loops = new ArrayList<>(); // {count, stride in elements}, innermost first
        for (int d = rank - 1; d >= 0; d--) {
            if (loops.isEmpty() && step[d] == 1 && runElements == elementStride[d]) {
                runElements *= count[d];
                continue;
            }
            if (count[d] == 1) {
                continue;
            }
            long loopStride = step[d] * elementStride[d];
            long[] last = loops.isEmpty() ? null : loops.getLast();
            if (last != null && last[0] * last[1] == loopStride) {
                last[0] *= count[d]; // the runs of this loop follow the inner loop's evenly
            } else {
                loops.add(new long[] {count[d], loopStride});
            }
        }
        int bits = dtype.bits();
        long[] loopCounts = new long[loops.size()];
        long[] loopStrides = new long[loops.size()];
        long runs = 1;
        boolean aligned = (base * bits) % 8 == 0 && (runElements * bits) % 8 == 0;
        for (int k = 0; k < loops.size(); k++) {
            loopCounts[k] = loops.get(k)[0];
            loopStrides[k] = loops.get(k)[1] * bits / 8;
            aligned &= (loops.get(k)[1] * bits) % 8 == 0;
            runs *= loopCounts[k];
        }
        if (!aligned) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "tensor \"%s\" %s %s: slice %s does not"
                    + " fall on byte boundaries (every run of %d-bit elements must start and end on a whole byte)",
                    name, dtype, Arrays.toString(dims), slice, bits));
        }
        return new SliceLayout(name, dtype, dims, tensorBytes, slice, resultShape, elements,
                runElements * bits / 8, runs, base * bits / 8, loopCounts, loopStrides);
    }

    /** The slice's indexes with {@code ...} replaced by whole ranges; checks the count against the rank. */
    private static List<Slice.Index> expand(String name, long[] dims, Slice slice) {
        List<Slice.Index> given = slice.indexes();
        int ellipsis = -1;
        for (int i = 0; i < given.size(); i++) {
            if (given.get(i) instanceof Slice.Ellipsis) {
                ellipsis = i;
            }
        }
        int named = given.size() - (ellipsis >= 0 ? 1 : 0);
        if (named > dims.length) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "tensor \"%s\" %s has %d dimension(s),"
                    + " but slice %s has %d indexes", name, Arrays.toString(dims), dims.length, slice, named));
        }
        if (ellipsis < 0) {
            return given;
        }
        List<Slice.Index> out = new ArrayList<>(dims.length);
        out.addAll(given.subList(0, ellipsis));
        for (int i = 0; i < dims.length - named; i++) {
            out.add(Slice.all());
        }
        out.addAll(given.subList(ellipsis + 1, given.size()));
        return out;
    }

    /** {@return the tensor's name} */
    public String tensor() {
        return tensor;
    }

    /** {@return the element type, the tensor's} */
    public Dtype dtype() {
        return dtype;
    }

    /** {@return a copy of the tensor's shape} */
    public long[] tensorShape() {
        return tensorShape.clone();
    }

    /** {@return the slice this layout resolves} */
    public Slice slice() {
        return slice;
    }

    /** {@return a copy of the result's shape: one entry per range of the slice and per dimension left out} */
    public long[] shape() {
        return shape.clone();
    }

    /** {@return elements in the result} */
    public long elementCount() {
        return elementCount;
    }

    /** {@return bytes in the result: {@link #runCount()} times {@link #runBytes()}} */
    public long byteSize() {
        return runCount * runBytes;
    }

    /** {@return bytes in each run; 0 when the result is empty} */
    public long runBytes() {
        return runBytes;
    }

    /** {@return how many runs; 0 when the result is empty} */
    public long runCount() {
        return runCount;
    }

    /** {@return whether the result is one run of the tensor's bytes (or empty), so a view needs no copy} */
    public boolean isContiguous() {
        return runCount <= 1;
    }

    /** {@return whether the slice takes the whole tensor} */
    public boolean isWhole() {
        return runCount == 1 && runBytes == tensorBytes || tensorBytes == 0;
    }

    /** {@return the first run's offset} */
    public long firstOffset() {
        return firstOffset;
    }

    /** {@return one past the last byte of the last run: the runs lie in {@code [firstOffset(), endOffset())}} */
    public long endOffset() {
        return runCount == 0 ? firstOffset : runOffset(runCount - 1) + runBytes;
    }

    /** {@return a copy of the loops' counts, innermost first; their product is {@link #runCount()}} */
    public long[] loopCounts() {
        return counts.clone();
    }

    /** {@return a copy of the loops' strides in bytes, innermost first} */
    public long[] loopStrides() {
        return strides.clone();
    }

    /**
     * The offset of run {@code i}, in O(loops).
     *
     * @param i the run, in {@code [0, runCount())}
     * @return its offset from the tensor's first byte
     */
    public long runOffset(long i) {
        Objects.checkIndex(i, runCount);
        long off = firstOffset;
        for (int k = 0; k < counts.length && i > 0; k++) {
            off += (i % counts[k]) * strides[k];
            i /= counts[k];
        }
        return off;
    }

    /** {@return the runs in order, computed on access (no list of runs is stored)} */
    public List<Run> runs() {
        return new Runs();
    }

    private final class Runs extends AbstractList<Run> implements RandomAccess {
        @Override
        public Run get(int i) {
            return new Run(runOffset(i), runBytes);
        }

        @Override
        public int size() {
            return Math.toIntExact(runCount);
        }
    }

    /**
     * The runs merged wherever the gap between two runs is at most {@code maxGapBytes}, as a reader
     * that fetches bytes in ranges would request them; each merged range holds whole runs, in order.
     * Computed from the loops, not run by run: a loop whose gaps fit merges whole, so a strided slice
     * with small gaps is one range however many runs it has.
     *
     * @param maxGapBytes the largest gap of unneeded bytes a range may span (&ge; 0)
     * @return the ranges in offset order, each with the index of its first run
     */
    public List<MergedRange> mergedRanges(long maxGapBytes) {
        if (maxGapBytes < 0) {
            throw new IllegalArgumentException("maxGapBytes must be >= 0, got " + maxGapBytes);
        }
        if (runCount == 0) {
            return List.of();
        }
        // Grow a block from the innermost loop outward while the gaps between blocks fit.
        long block = runBytes;
        long runsPerBlock = 1;
        int k = 0;
        while (k < counts.length && strides[k] - block <= maxGapBytes) {
            block = (counts[k] - 1) * strides[k] + block;
            runsPerBlock *= counts[k];
            k++;
        }
        long blocks = runCount / runsPerBlock;
        List<MergedRange> out = new ArrayList<>((int) Math.min(blocks, 1 << 16));
        for (long b = 0; b < blocks; b++) {
            long firstRun = b * runsPerBlock;
            out.add(new MergedRange(runOffset(firstRun), block, firstRun, runsPerBlock));
        }
        return out;
    }

    /**
     * Bytes {@code [offset, offset + length)} of the tensor holding runs
     * {@code [firstRun, firstRun + runs)} and the gaps between them.
     *
     * @param offset the first byte, relative to the tensor's first byte
     * @param length bytes from the first run's start to the last run's end
     * @param firstRun the index of the first run it holds
     * @param runs how many runs it holds
     */
    public record MergedRange(long offset, long length, long firstRun, long runs) {
        /** {@return one past the last byte} */
        public long end() {
            return offset + length;
        }
    }

    // ------------------------------------------------------------------ copies

    /**
     * Copies the slice out of the tensor's bytes into {@code dst}, in one pass: the result's bytes,
     * row-major, from {@code dst}'s first byte.
     *
     * @param tensorData the tensor's bytes (e.g. {@link Tensor#data()}), at least as many as the tensor has
     * @param dst at least {@link #byteSize()} bytes, writable, not overlapping {@code tensorData}
     */
    public void copy(MemorySegment tensorData, MemorySegment dst) {
        copy(tensorData, dst, dtype);
    }

    /**
     * Copies the slice out of the tensor's bytes into {@code dst}, converting each element to
     * {@code target} on the way (no intermediate copy of the slice), e.g. a BF16 slice to F32.
     * The conversions are those of
     * {@link io.github.semyonsinchenko.safetensors.kernels.Kernels#convert(Dtype, Dtype, MemorySegment,
     * MemorySegment, long)}, with its rounding rules.
     *
     * @param tensorData the tensor's bytes, at least as many as the tensor has
     * @param dst at least {@code elementCount() * target.byteSize()} bytes
     * @param target the dtype written
     * @throws UnsupportedOperationException if no kernel converts this dtype to {@code target}
     */
    public void copy(MemorySegment tensorData, MemorySegment dst, Dtype target) {
        Objects.requireNonNull(tensorData, "tensorData");
        if (tensorData.byteSize() < tensorBytes) {
            throw new IndexOutOfBoundsException(String.format(Locale.ROOT, "tensor \"%s\": tensorData is %d bytes,"
                    + " but %s %s needs %d", tensor, tensorData.byteSize(), dtype, Arrays.toString(tensorShape),
                    tensorBytes));
        }
        copyRuns(tensorData, 0, 0, runCount, dst, 0, target);
    }

    /**
     * Copies runs {@code [fromRun, toRun)} to {@code dst} at {@code dstOffset}, converted to
     * {@code target}, from a buffer holding part of the tensor's bytes: byte 0 of {@code src} is byte
     * {@code srcStart} of the tensor. For readers that fetched only some ranges of a tensor
     * ({@link #mergedRanges}): each range's runs are copied from where the range landed. Run
     * {@code fromRun} lands at {@code dstOffset}, the next ones after it.
     *
     * @param src bytes of the tensor
     * @param srcStart which byte of the tensor {@code src} starts with
     * @param fromRun the first run copied
     * @param toRun one past the last run copied
     * @param dst where the runs go
     * @param dstOffset where run {@code fromRun} goes in {@code dst}
     * @param target the dtype written
     * @throws IndexOutOfBoundsException if a run lies outside {@code src} or the output outside {@code dst}
     * @throws UnsupportedOperationException if no kernel converts this dtype to {@code target}
     */
    public void copyRuns(MemorySegment src, long srcStart, long fromRun, long toRun, MemorySegment dst,
                         long dstOffset, Dtype target) {
        Objects.requireNonNull(src, "src");
        Objects.requireNonNull(dst, "dst");
        Objects.requireNonNull(target, "target");
        Objects.checkFromToIndex(fromRun, toRun, runCount);
        if (fromRun == toRun) {
            return;
        }
        long firstByte = runOffset(fromRun) - srcStart;
        long lastEnd = runOffset(toRun - 1) + runBytes - srcStart;
        if (firstByte < 0 || lastEnd > src.byteSize()) {
            throw new IndexOutOfBoundsException(String.format(Locale.ROOT, "tensor \"%s\": runs [%d, %d) span bytes"
                    + " [%d, %d) of the tensor, but src holds bytes [%d, %d)", tensor, fromRun, toRun,
                    firstByte + srcStart, lastEnd + srcStart, srcStart, srcStart + src.byteSize()));
        }
        SliceCopy.copy(this, src, srcStart, fromRun, toRun, dst, dstOffset, target);
    }

    /** Equal when the same slice is applied to a tensor of the same name, dtype and shape. */
    @Override
    public boolean equals(Object o) {
        return o instanceof SliceLayout l && l.tensor.equals(tensor) && l.dtype == dtype
                && Arrays.equals(l.tensorShape, tensorShape) && l.slice.equals(slice);
    }

    @Override
    public int hashCode() {
        return (tensor.hashCode() * 31 + Arrays.hashCode(tensorShape)) * 31 + slice.hashCode();
    }

    @Override
    public String toString() {
        return String.format(Locale.ROOT, "%s%s of %s %s: shape %s, %d run(s) of %d bytes from byte %d", tensor,
                slice, dtype, Arrays.toString(tensorShape), Arrays.toString(shape), runCount, runBytes, firstOffset);
    }
}
