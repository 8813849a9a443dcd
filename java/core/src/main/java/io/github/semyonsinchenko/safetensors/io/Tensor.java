package io.github.semyonsinchenko.safetensors.io;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.format.LittleEndian;
import io.github.semyonsinchenko.safetensors.format.TensorInfo;
import io.github.semyonsinchenko.safetensors.kernels.Conversion;
import io.github.semyonsinchenko.safetensors.kernels.HugePages;
import io.github.semyonsinchenko.safetensors.kernels.Kernels;
import io.github.semyonsinchenko.safetensors.mmap.MappedFiles;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.Locale;
import java.util.Objects;

/**
 * One tensor: its header entry and a read-only view of its bytes, which belong to an open
 * {@link SafetensorsFile} (a slice of the mapping), a {@link SafetensorsBuffer} (a slice of an image
 * in memory) or, for a tensor made with {@link #of}, to the caller. A borrowed view: it is valid
 * while its file or buffer is open (and the memory under it alive) and has no {@code close()}.
 *
 * <p>Typed accessors read little-endian, unaligned elements (safetensors does not promise
 * alignment). They never reinterpret: a BF16 tensor is never read as I16. The float accessors
 * ({@link #getFloat}, {@link #toFloatArray}, {@link #getDouble}, {@link #toDoubleArray}) widen the
 * dtypes that convert exactly (F16, BF16, the F8 formats and the small integers) by the kernels'
 * rules ({@link Conversion}); {@link #to} also rounds. Bounds and the owner being open are checked
 * by the segment access itself (no second check here); a closed owner is an
 * {@link IllegalStateException} naming it, and a page lost because the file was truncated while
 * mapped is a {@link io.github.semyonsinchenko.safetensors.mmap.MappedFileFaultException}: always
 * for the array copies, and for the single-element getters unless the JIT has compiled them. In
 * compiled code the JDK raises its {@link InternalError} for the fault asynchronously, and for a
 * one-element read that usually happens after the getter returned, in its caller; catching it there
 * would cost a call into the VM per element. Bulk reads ({@code toXArray}, {@link #to}, slices, the
 * {@code Kernels} calls) always name the file.
 */
public final class Tensor {
    private final TensorOwner owner;
    private final TensorInfo info;
    private final MemorySegment data;

    Tensor(TensorOwner owner, TensorInfo info, MemorySegment data) {
        this.owner = owner;
        this.info = info;
        this.data = data;
    }

    /**
     * A tensor over {@code data}, memory the caller owns (a borrowed view, valid while that memory
     * is): for building tensors to save ({@link Safetensors#saveFile}) or to read with this API.
     *
     * @param name the tensor's name
     * @param dtype its element type
     * @param shape its shape
     * @param data exactly the bytes {@code dtype} and {@code shape} need, little-endian; viewed
     *     read-only, not copied
     * @return the tensor
     * @throws IllegalArgumentException if the shape is not valid or {@code data} has another size
     */
    public static Tensor of(String name, Dtype dtype, long[] shape, MemorySegment data) {
        Objects.requireNonNull(data, "data");
        TensorInfo info = TensorInfo.of(name, dtype, shape);
        if (data.byteSize() != info.byteSize()) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "tensor \"%s\": data has %d bytes, but"
                    + " %s %s needs %d", name, data.byteSize(), dtype, Arrays.toString(shape), info.byteSize()));
        }
        return new Tensor(TensorOwner.BORROWED, info, data.asReadOnly());
    }

    /**
     * An F32 tensor over {@code values} (not copied); needs a little-endian JVM, as the format does.
     *
     * @param name the tensor's name
     * @param shape its shape
     * @param values its elements, row-major
     * @return the tensor
     */
    public static Tensor of(String name, long[] shape, float[] values) {
        return of(name, Dtype.F32, shape, heap(MemorySegment.ofArray(values)));
    }

    /**
     * An F64 tensor over {@code values} (not copied); needs a little-endian JVM.
     *
     * @param name the tensor's name
     * @param shape its shape
     * @param values its elements, row-major
     * @return the tensor
     */
    public static Tensor of(String name, long[] shape, double[] values) {
        return of(name, Dtype.F64, shape, heap(MemorySegment.ofArray(values)));
    }

    /**
     * An I32 or U32 tensor over {@code values} (not copied); needs a little-endian JVM.
     *
     * @param name the tensor's name
     * @param dtype I32 or U32
     * @param shape its shape
     * @param values its elements, row-major
     * @return the tensor
     */
    public static Tensor of(String name, Dtype dtype, long[] shape, int[] values) {
        return of(name, dtype, shape, heap(MemorySegment.ofArray(values)));
    }

    /**
     * An I64 or U64 tensor over {@code values} (not copied); needs a little-endian JVM.
     *
     * @param name the tensor's name
     * @param dtype I64 or U64
     * @param shape its shape
     * @param values its elements, row-major
     * @return the tensor
     */
    public static Tensor of(String name, Dtype dtype, long[] shape, long[] values) {
        return of(name, dtype, shape, heap(MemorySegment.ofArray(values)));
    }

    /**
     * A 16-bit tensor (F16, BF16, I16, U16) over the raw bits in {@code values} (not copied); little-endian JVM.
     *
     * @param name the tensor's name
     * @param dtype F16, BF16, I16 or U16
     * @param shape its shape
     * @param values its elements' bits, row-major
     * @return the tensor
     */
    public static Tensor of(String name, Dtype dtype, long[] shape, short[] values) {
        return of(name, dtype, shape, heap(MemorySegment.ofArray(values)));
    }

    /**
     * A tensor over raw little-endian bytes (any dtype, sub-byte ones packed), not copied.
     *
     * @param name the tensor's name
     * @param dtype its element type
     * @param shape its shape
     * @param bytes exactly its bytes
     * @return the tensor
     */
    public static Tensor of(String name, Dtype dtype, long[] shape, byte[] bytes) {
        return of(name, dtype, shape, MemorySegment.ofArray(bytes));
    }

    private static MemorySegment heap(MemorySegment array) {
        if (!LittleEndian.IS_NATIVE_ORDER) {
            throw new UnsupportedOperationException("a tensor over a Java array of multi-byte elements needs a"
                    + " little-endian JVM; pass little-endian bytes instead");
        }
        return array;
    }

    /** {@return the header entry: name, dtype, shape and offsets in its file (0 to its size for {@link #of})} */
    public TensorInfo info() {
        return info;
    }

    /** {@return the tensor's name} */
    public String name() {
        return info.name();
    }

    /** {@return the element type} */
    public Dtype dtype() {
        return info.dtype();
    }

    /** {@return a copy of the shape; {@code []} for a scalar} */
    public long[] shape() {
        return info.shape();
    }

    /** {@return the number of dimensions} */
    public int rank() {
        return info.rank();
    }

    /** {@return product of the shape (1 for a scalar, 0 for an empty tensor)} */
    public long elementCount() {
        return info.elementCount();
    }

    /** {@return bytes of data} */
    public long byteSize() {
        return info.byteSize();
    }

    /** {@return the tensor's bytes: a read-only view (of the file mapping, for a file), exactly as stored (little-endian)} */
    public MemorySegment data() {
        owner.ensureOpen();
        return data;
    }

    /** The bytes without the open check, for error reporting. */
    MemorySegment rawData() {
        return data;
    }

    /** Names the file or image the tensor belongs to, for messages. */
    String source() {
        return owner.source();
    }

    // ---- slices ----

    /**
     * The part of this tensor {@code slice} selects: a zero-copy view when it is contiguous, else
     * its byte runs and a one-pass copy (see {@link TensorSlice}). Hugging Face's
     * {@code get_slice(name)[...]}.
     *
     * @param slice what to take
     * @return the slice, not read yet
     * @throws SliceOutOfBoundsException if an index is outside its dimension
     * @throws IllegalArgumentException if the slice has more indexes than the tensor has dimensions,
     *     or cuts a sub-byte dtype off a byte boundary
     */
    public TensorSlice slice(Slice slice) {
        return new TensorSlice(this, SliceLayout.of(info, slice));
    }

    /**
     * {@link #slice(Slice)} of {@link Slice#parse}, e.g. {@code tensor.slice(":, 0:128")}.
     *
     * @param numpySlice the slice in numpy's syntax
     * @return the slice, not read yet
     */
    public TensorSlice slice(String numpySlice) {
        return slice(Slice.parse(numpySlice));
    }

    // ---- typed element access (flat row-major index) ----

    /**
     * One byte of a BOOL, U8, I8 or F8_* tensor.
     *
     * @param index the element, row-major
     * @return its byte
     */
    public byte getByte(long index) {
        if (!(info.dtype().isByteAligned() && info.dtype().bits() == 8)) {
            throw wrongType("8-bit");
        }
        try {
            return data.get(ValueLayout.JAVA_BYTE, index);
        } catch (IllegalStateException | InternalError e) {
            throw owner.accessFailure(this, e);
        }
    }

    /**
     * Raw 16 bits of an I16, U16, F16 or BF16 element.
     *
     * @param index the element, row-major
     * @return its 16 bits
     */
    public short getShort(long index) {
        if (info.dtype().bits() != 16) {
            throw wrongType("16-bit");
        }
        try {
            return data.getAtIndex(LittleEndian.I16, index);
        } catch (IllegalStateException | InternalError e) {
            throw owner.accessFailure(this, e);
        }
    }

    /**
     * An I32 or U32 element (U32 as its bit pattern).
     *
     * @param index the element, row-major
     * @return its value
     */
    public int getInt(long index) {
        if (!(info.dtype() == Dtype.I32 || info.dtype() == Dtype.U32)) {
            throw wrongType("I32 or U32");
        }
        try {
            return data.getAtIndex(LittleEndian.I32, index);
        } catch (IllegalStateException | InternalError e) {
            throw owner.accessFailure(this, e);
        }
    }

    /**
     * An I64 or U64 element (U64 as its bit pattern).
     *
     * @param index the element, row-major
     * @return its value
     */
    public long getLong(long index) {
        if (!(info.dtype() == Dtype.I64 || info.dtype() == Dtype.U64)) {
            throw wrongType("I64 or U64");
        }
        try {
            return data.getAtIndex(LittleEndian.I64, index);
        } catch (IllegalStateException | InternalError e) {
            throw owner.accessFailure(this, e);
        }
    }

    /**
     * An element as a float: F32 as stored; F16, BF16, the F8 formats, I8, U8, I16 and U16 widened
     * exactly by the kernels' rules (a NaN keeps its sign, and its payload where the format has one).
     *
     * @param index the element, row-major
     * @return its value
     * @throws UnsupportedOperationException for the dtypes a float cannot hold exactly (I32, I64,
     *     F64, ...): use {@link #getDouble} or {@link #to}
     */
    public float getFloat(long index) {
        Dtype d = info.dtype();
        try {
            if (d == Dtype.F32) {
                return data.getAtIndex(LittleEndian.F32, index);
            }
            Conversion widen = Conversion.exactToF32(d).orElse(null);
            if (widen == null) {
                throw wrongType("F32 or a dtype that widens to it exactly (F16, BF16, F8_*, I8, U8, I16, U16)");
            }
            return Float.intBitsToFloat((int) Kernels.convertBits(widen, rawBits(d, index)));
        } catch (IllegalStateException | InternalError e) {
            throw owner.accessFailure(this, e);
        }
    }

    /**
     * An element of a floating-point tensor as a double: F64 as stored, F32, F16, BF16 and the F8
     * formats widened exactly by the kernels' rules. {@link #getAsDouble} also takes integers.
     *
     * @param index the element, row-major
     * @return its value
     */
    public double getDouble(long index) {
        Dtype d = info.dtype();
        try {
            if (d == Dtype.F64) {
                return data.getAtIndex(LittleEndian.F64, index);
            }
            if (d == Dtype.F32 || Conversion.exactToF32(d).isPresent() && d.isFloatingPoint()) {
                return widenF32(d, index);
            }
            throw wrongType("a floating-point dtype (F64, F32, F16, BF16, F8_*)");
        } catch (IllegalStateException | InternalError e) {
            throw owner.accessFailure(this, e);
        }
    }

    /**
     * Any real numeric element widened to double: BOOL, U8, I8, I16, U16, I32, U32, I64, U64 (the
     * 64-bit integers round to nearest even past 2^53), F16, BF16, the F8 formats, F32, F64. Not
     * for F4, F6 or C64.
     *
     * @param index the element, row-major
     * @return its value
     */
    public double getAsDouble(long index) {
        try {
            return asDouble(index);
        } catch (IllegalStateException | InternalError e) {
            throw owner.accessFailure(this, e);
        }
    }

    private double asDouble(long index) {
        Dtype d = info.dtype();
        return switch (d) {
            case BOOL, U8 -> Byte.toUnsignedInt(data.get(ValueLayout.JAVA_BYTE, index));
            case I8 -> data.get(ValueLayout.JAVA_BYTE, index);
            case I16 -> data.getAtIndex(LittleEndian.I16, index);
            case U16 -> Short.toUnsignedInt(data.getAtIndex(LittleEndian.I16, index));
            case I32 -> data.getAtIndex(LittleEndian.I32, index);
            case U32 -> Integer.toUnsignedLong(data.getAtIndex(LittleEndian.I32, index));
            case I64 -> bitsToDouble(Conversion.I64_TO_F64, data.getAtIndex(LittleEndian.I64, index));
            case U64 -> bitsToDouble(Conversion.U64_TO_F64, data.getAtIndex(LittleEndian.I64, index));
            case F64 -> data.getAtIndex(LittleEndian.F64, index);
            case F32, F16, BF16, F8_E4M3, F8_E5M2, F8_E8M0, F8_E4M3FNUZ, F8_E5M2FNUZ -> widenF32(d, index);
            default -> throw new UnsupportedOperationException(owner.source() + ": tensor \"" + name() + "\": " + d
                    + " has no scalar double view");
        };
    }

    /** A float dtype's element as F32 bits, then to F64 by the kernels' rule (keeps NaN payloads). */
    private double widenF32(Dtype d, long index) {
        int f32 = d == Dtype.F32 ? data.getAtIndex(LittleEndian.I32, index)
                : (int) Kernels.convertBits(Conversion.exactToF32(d).orElseThrow(), rawBits(d, index));
        return bitsToDouble(Conversion.F32_TO_F64, f32);
    }

    private static double bitsToDouble(Conversion c, long bits) {
        return Double.longBitsToDouble(Kernels.convertBits(c, bits));
    }

    private long rawBits(Dtype d, long index) {
        return d.bits() == 8 ? data.get(ValueLayout.JAVA_BYTE, index) : data.getAtIndex(LittleEndian.I16, index);
    }

    // ---- copies ----

    /**
     * A copy of the bytes in memory owned by {@code arena}, in transparent huge pages where the OS
     * offers them ({@link HugePages}): for tables read at random rows, such as embeddings fed to
     * {@code Kernels.gather}, which then miss the TLB far less than on the mapping's 4 KiB pages.
     * Any size; the copy stays valid after the file is closed (until {@code arena} is).
     *
     * @param arena owns the copy
     * @return the copy
     */
    public MemorySegment load(Arena arena) {
        try {
            return HugePages.copyOf(data(), arena);
        } catch (IllegalStateException | InternalError e) {
            throw owner.accessFailure(this, e);
        }
    }

    /**
     * This tensor converted to {@code target} in memory owned by {@code arena}: a tensor of the same
     * name and shape that stays valid after the file is closed (until {@code arena} is). The same
     * dtype is a copy; the conversions and their rounding are those of
     * {@link Kernels#convert(Dtype, Dtype, MemorySegment, MemorySegment, long)} (e.g. BF16 to F32
     * exactly, F32 to BF16 rounding to nearest even, F8 to F32, integers to F32 or F64). torch's
     * {@code tensor.to(dtype)}.
     *
     * @param target the dtype of the result
     * @param arena owns the result's memory
     * @return the converted tensor
     * @throws UnsupportedOperationException if {@link Kernels#canConvert} is false for this dtype and {@code target}
     */
    public Tensor to(Dtype target, Arena arena) {
        return slice(Slice.whole()).to(target, arena);
    }

    /** {@return a heap copy of the bytes; only for tensors under 2 GiB} */
    public byte[] toByteArray() {
        try {
            var copy = data().toArray(ValueLayout.JAVA_BYTE);
            MappedFiles.raisePendingFault();
            return copy;
        } catch (IllegalStateException | InternalError e) {
            throw owner.accessFailure(this, e);
        }
    }

    /**
     * A heap copy as floats: F32 as stored; F16, BF16, the F8 formats, I8, U8, I16 and U16 widened
     * exactly by the kernels ({@link Conversion}), without an intermediate copy.
     *
     * @return the elements as floats, row-major
     * @throws UnsupportedOperationException for the dtypes a float cannot hold exactly (I32, I64,
     *     F64, ...): {@link #to} converts them with rounding
     */
    public float[] toFloatArray() {
        return slice(Slice.whole()).toFloatArray();
    }

    /**
     * A heap copy as doubles: F64 as stored; every other real numeric dtype but BOOL widened by the
     * kernels (exactly, except I64 and U64 past 2^53, which round to nearest even).
     *
     * @return the elements as doubles, row-major
     */
    public double[] toDoubleArray() {
        return slice(Slice.whole()).toDoubleArray();
    }

    /** {@return a heap copy of an I32 or U32 tensor} */
    public int[] toIntArray() {
        if (!(info.dtype() == Dtype.I32 || info.dtype() == Dtype.U32)) {
            throw wrongType("I32 or U32");
        }
        try {
            var copy = data().toArray(LittleEndian.I32);
            MappedFiles.raisePendingFault();
            return copy;
        } catch (IllegalStateException | InternalError e) {
            throw owner.accessFailure(this, e);
        }
    }

    /** {@return a heap copy of an I64 or U64 tensor} */
    public long[] toLongArray() {
        if (!(info.dtype() == Dtype.I64 || info.dtype() == Dtype.U64)) {
            throw wrongType("I64 or U64");
        }
        try {
            var copy = data().toArray(LittleEndian.I64);
            MappedFiles.raisePendingFault();
            return copy;
        } catch (IllegalStateException | InternalError e) {
            throw owner.accessFailure(this, e);
        }
    }

    /** {@return a heap copy of a 16-bit tensor's raw bits (I16, U16, F16, BF16)} */
    public short[] toShortArray() {
        if (info.dtype().bits() != 16) {
            throw wrongType("16-bit");
        }
        try {
            var copy = data().toArray(LittleEndian.I16);
            MappedFiles.raisePendingFault();
            return copy;
        } catch (IllegalStateException | InternalError e) {
            throw owner.accessFailure(this, e);
        }
    }

    RuntimeException accessFailure(Throwable e) {
        return owner.accessFailure(this, e);
    }

    UnsupportedOperationException wrongType(String what) {
        return new UnsupportedOperationException(owner.source() + ": tensor \"" + name() + "\" is " + dtype()
                + ", not " + what);
    }

    @Override
    public String toString() {
        return name() + ": " + dtype() + " " + Arrays.toString(info.shape()) + " (" + byteSize() + " bytes)";
    }
}
