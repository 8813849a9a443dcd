package io.github.semyonsinchenko.safetensors.io;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.kernels.Conversion;
import io.github.semyonsinchenko.safetensors.kernels.Kernels;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.AbstractList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.RandomAccess;

/**
 * A {@link Slice} of a {@link Tensor}, read in place: Hugging Face's
 * {@code safe_open(...).get_slice(name)[...]}. Nothing is read until asked:
 * <ul>
 *   <li>{@link #view()}: the bytes without a copy, when the slice is contiguous (a block of rows,
 *       one layer of a stacked tensor, the whole tensor);</li>
 *   <li>{@link #runs()}: the contiguous byte runs holding it, in order, as views (Rust's
 *       {@code SliceIterator});</li>
 *   <li>{@link #copyTo(MemorySegment, Dtype)}, {@link #to}, {@link #toFloatArray()}: one pass over
 *       the runs into a destination, converted on the way (a BF16 slice to F32 with no BF16 copy in
 *       between); short runs go through the kernels' gather.</li>
 * </ul>
 * A borrowed view like its tensor: valid while the tensor's file or buffer is open.
 */
public final class TensorSlice {
    private static final long MAX_ARRAY = Integer.MAX_VALUE - 8;

    private final Tensor tensor;
    private final SliceLayout layout;

    TensorSlice(Tensor tensor, SliceLayout layout) {
        this.tensor = tensor;
        this.layout = layout;
    }

    /** {@return the tensor sliced} */
    public Tensor tensor() {
        return tensor;
    }

    /** {@return where the slice's bytes are in the tensor} */
    public SliceLayout layout() {
        return layout;
    }

    /** {@return the slice} */
    public Slice slice() {
        return layout.slice();
    }

    /** {@return the tensor's name} */
    public String name() {
        return tensor.name();
    }

    /** {@return the element type, the tensor's} */
    public Dtype dtype() {
        return tensor.dtype();
    }

    /** {@return a copy of the result's shape} */
    public long[] shape() {
        return layout.shape();
    }

    /** {@return elements in the result} */
    public long elementCount() {
        return layout.elementCount();
    }

    /** {@return bytes in the result, in the tensor's dtype} */
    public long byteSize() {
        return layout.byteSize();
    }

    /** {@return whether {@link #view()} works: the slice is one run of the tensor's bytes, or empty} */
    public boolean isContiguous() {
        return layout.isContiguous();
    }

    /**
     * The slice's bytes without a copy: a read-only view of the tensor's bytes.
     *
     * @return a read-only view of the tensor's bytes
     * @throws IllegalStateException if the slice is not contiguous ({@link #isContiguous()}); copy it
     *     with {@link #copyTo} or {@link #to} instead
     */
    public MemorySegment view() {
        if (!layout.isContiguous()) {
            throw new IllegalStateException(String.format(Locale.ROOT, "%s: tensor \"%s\": slice %s is %d runs of"
                    + " %d bytes, not one; copy it (copyTo, to, toFloatArray) instead of viewing it", tensor.source(),
                    name(), slice(), layout.runCount(), layout.runBytes()));
        }
        return tensor.data().asSlice(layout.firstOffset(), layout.byteSize());
    }

    /** {@return the runs of the tensor's bytes holding the slice, in order, each a read-only view (made on access)} */
    public List<MemorySegment> runs() {
        MemorySegment data = tensor.data();
        return new Runs(data);
    }

    private final class Runs extends AbstractList<MemorySegment> implements RandomAccess {
        private final MemorySegment data;

        Runs(MemorySegment data) {
            this.data = data;
        }

        @Override
        public MemorySegment get(int i) {
            return data.asSlice(layout.runOffset(i), layout.runBytes());
        }

        @Override
        public int size() {
            return Math.toIntExact(layout.runCount());
        }
    }

    /**
     * Copies the slice into {@code dst} (at least {@link #byteSize()} bytes), row-major, in one pass.
     *
     * @param dst where the slice's bytes go
     */
    public void copyTo(MemorySegment dst) {
        copyTo(dst, dtype());
    }

    /**
     * Copies the slice into {@code dst}, converting every element to {@code target} on the way, in
     * one pass: {@code elementCount() * target.byteSize()} bytes. The conversions and their rounding
     * are those of {@link Kernels#convert(Dtype, Dtype, MemorySegment, MemorySegment, long)}.
     *
     * @param dst where the converted elements go
     * @param target the dtype written
     * @throws UnsupportedOperationException if {@link Kernels#canConvert} is false for the dtypes
     * @throws IndexOutOfBoundsException if {@code dst} is too short
     */
    public void copyTo(MemorySegment dst, Dtype target) {
        try {
            layout.copy(tensor.data(), dst, target);
        } catch (IllegalStateException | InternalError e) {
            throw tensor.accessFailure(e);
        }
    }

    /**
     * The slice as a tensor of its own, in {@code target}, in memory owned by {@code arena}: same
     * name, the slice's shape; valid after the file is closed, until {@code arena} is.
     *
     * @param target the dtype of the result
     * @param arena owns the result's memory
     * @return the slice as a tensor
     * @throws UnsupportedOperationException if {@link Kernels#canConvert} is false for the dtypes
     */
    public Tensor to(Dtype target, Arena arena) {
        if (!Kernels.canConvert(dtype(), target)) {
            throw new UnsupportedOperationException(String.format(Locale.ROOT, "%s: tensor \"%s\": no kernel"
                    + " converts %s to %s", tensor.source(), name(), dtype(), target));
        }
        long bytes = target.storageBytes(elementCount());
        MemorySegment out = arena.allocate(Math.max(1, bytes), 64).asSlice(0, bytes);
        copyTo(out, target);
        return Tensor.of(name(), target, shape(), out);
    }

    /**
     * The slice as a tensor of its own in the tensor's dtype, in memory owned by {@code arena}.
     *
     * @param arena owns the copy
     * @return the slice as a tensor
     */
    public Tensor copy(Arena arena) {
        return to(dtype(), arena);
    }

    /** {@return a heap copy of the slice's bytes; only under 2 GiB} */
    public byte[] toByteArray() {
        byte[] out = new byte[arrayLength(byteSize(), "bytes")];
        copyTo(MemorySegment.ofArray(out));
        return out;
    }

    /**
     * A heap copy as floats: F32 as stored; F16, BF16, the F8 formats, I8, U8, I16 and U16 widened
     * exactly by the kernels, without an intermediate copy.
     *
     * @return the elements as floats, row-major
     * @throws UnsupportedOperationException for the dtypes a float cannot hold exactly (I32, I64,
     *     F64, ...): {@link #to} converts them with rounding
     */
    public float[] toFloatArray() {
        if (dtype() != Dtype.F32 && Conversion.exactToF32(dtype()).isEmpty()) {
            throw tensor.wrongType("F32 or a dtype that widens to it exactly (F16, BF16, F8_*, I8, U8, I16, U16);"
                    + " to(Dtype.F32, arena) converts with rounding");
        }
        float[] out = new float[arrayLength(elementCount(), "floats")];
        copyTo(MemorySegment.ofArray(out), Dtype.F32);
        return out;
    }

    /**
     * A heap copy as doubles: F64 as stored; every other real numeric dtype but BOOL widened by the
     * kernels (exactly, except I64 and U64 past 2^53, which round to nearest even).
     *
     * @return the elements as doubles, row-major
     */
    public double[] toDoubleArray() {
        if (!Kernels.canConvert(dtype(), Dtype.F64)) {
            throw tensor.wrongType("a real numeric dtype that converts to F64");
        }
        double[] out = new double[arrayLength(elementCount(), "doubles")];
        copyTo(MemorySegment.ofArray(out), Dtype.F64);
        return out;
    }

    private int arrayLength(long n, String what) {
        if (n > MAX_ARRAY) {
            throw new UnsupportedOperationException(String.format(Locale.ROOT, "%s: tensor \"%s\": %d %s do not fit"
                    + " in a Java array; use copyTo or to(dtype, arena)", tensor.source(), name(), n, what));
        }
        return (int) n;
    }

    @Override
    public String toString() {
        return name() + slice() + ": " + dtype() + " " + Arrays.toString(shape()) + " ("
                + layout.runCount() + " run(s) of " + layout.runBytes() + " bytes)";
    }
}
