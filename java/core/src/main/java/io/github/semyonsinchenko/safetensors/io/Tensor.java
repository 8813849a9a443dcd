package io.github.semyonsinchenko.safetensors.io;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.format.LittleEndian;
import io.github.semyonsinchenko.safetensors.format.TensorInfo;
import io.github.semyonsinchenko.safetensors.kernels.HugePages;
import io.github.semyonsinchenko.safetensors.mmap.MappedFiles;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;

/**
 * One tensor of an open {@link SafetensorsFile}: its header entry and a read-only slice of the
 * mapping. A borrowed view: it is valid while its file is open and has no {@code close()}.
 *
 * <p>Typed accessors read little-endian, unaligned elements (safetensors does not promise
 * alignment) and check that the dtype matches, so a BF16 tensor is never silently read as I16.
 * Bounds and the file being open are checked by the segment access itself (no second check here);
 * a closed file is an {@link IllegalStateException} naming it, and a page lost because the file
 * was truncated while mapped is a
 * {@link io.github.semyonsinchenko.safetensors.mmap.MappedFileFaultException}: always for the
 * array copies, and for the single-element getters unless the JIT has compiled them. In compiled
 * code the JDK raises its {@link InternalError} for the fault asynchronously, and for a one-element
 * read that usually happens after the getter returned, in its caller; catching it there would cost
 * a call into the VM per element. Bulk reads ({@code toXArray}, the {@code Kernels} calls) always
 * name the file.
 */
public final class Tensor {
    private final SafetensorsFile file;
    private final TensorInfo info;
    private final MemorySegment data;

    Tensor(SafetensorsFile file, TensorInfo info, MemorySegment data) {
        this.file = file;
        this.info = info;
        this.data = data;
    }

    public TensorInfo info() {
        return info;
    }

    public String name() {
        return info.name();
    }

    public Dtype dtype() {
        return info.dtype();
    }

    /** A copy of the shape; {@code []} for a scalar. */
    public long[] shape() {
        return info.shape();
    }

    public int rank() {
        return info.rank();
    }

    public long elementCount() {
        return info.elementCount();
    }

    public long byteSize() {
        return info.byteSize();
    }

    /** The tensor's bytes: a read-only slice of the file mapping, exactly as stored (little-endian). */
    public MemorySegment data() {
        file.ensureOpen();
        return data;
    }

    // ---- typed element access (flat row-major index) ----

    /** One byte of a BOOL, U8, I8 or F8_* tensor. */
    public byte getByte(long index) {
        if (!(info.dtype().isByteAligned() && info.dtype().bits() == 8)) {
            throw wrongType("8-bit");
        }
        try {
            return data.get(ValueLayout.JAVA_BYTE, index);
        } catch (IllegalStateException | InternalError e) {
            throw file.accessFailure(this, e);
        }
    }

    /** Raw 16 bits of an I16, U16, F16 or BF16 element. */
    public short getShort(long index) {
        if (info.dtype().bits() != 16) {
            throw wrongType("16-bit");
        }
        try {
            return data.getAtIndex(LittleEndian.I16, index);
        } catch (IllegalStateException | InternalError e) {
            throw file.accessFailure(this, e);
        }
    }

    /** An I32 or U32 element (U32 as its bit pattern). */
    public int getInt(long index) {
        if (!(info.dtype() == Dtype.I32 || info.dtype() == Dtype.U32)) {
            throw wrongType("I32 or U32");
        }
        try {
            return data.getAtIndex(LittleEndian.I32, index);
        } catch (IllegalStateException | InternalError e) {
            throw file.accessFailure(this, e);
        }
    }

    /** An I64 or U64 element (U64 as its bit pattern). */
    public long getLong(long index) {
        if (!(info.dtype() == Dtype.I64 || info.dtype() == Dtype.U64)) {
            throw wrongType("I64 or U64");
        }
        try {
            return data.getAtIndex(LittleEndian.I64, index);
        } catch (IllegalStateException | InternalError e) {
            throw file.accessFailure(this, e);
        }
    }

    /** An F32 element. */
    public float getFloat(long index) {
        if (info.dtype() != Dtype.F32) {
            throw wrongType("F32");
        }
        try {
            return data.getAtIndex(LittleEndian.F32, index);
        } catch (IllegalStateException | InternalError e) {
            throw file.accessFailure(this, e);
        }
    }

    /** An F64 element. */
    public double getDouble(long index) {
        if (info.dtype() != Dtype.F64) {
            throw wrongType("F64");
        }
        try {
            return data.getAtIndex(LittleEndian.F64, index);
        } catch (IllegalStateException | InternalError e) {
            throw file.accessFailure(this, e);
        }
    }

    /**
     * Any real numeric element widened to double: BOOL, U8, I8, I16, U16, I32, U32, I64, U64 (may
     * round), F16, BF16, F32, F64. Not for the F4/F6/F8 families or C64.
     */
    public double getAsDouble(long index) {
        try {
            return asDouble(index);
        } catch (IllegalStateException | InternalError e) {
            throw file.accessFailure(this, e);
        }
    }

    private double asDouble(long index) {
        return switch (info.dtype()) {
            case BOOL, U8 -> Byte.toUnsignedInt(data.get(ValueLayout.JAVA_BYTE, index));
            case I8 -> data.get(ValueLayout.JAVA_BYTE, index);
            case I16 -> data.getAtIndex(LittleEndian.I16, index);
            case U16 -> Short.toUnsignedInt(data.getAtIndex(LittleEndian.I16, index));
            case F16 -> Float.float16ToFloat(data.getAtIndex(LittleEndian.I16, index));
            case BF16 -> Float.intBitsToFloat(data.getAtIndex(LittleEndian.I16, index) << 16);
            case I32 -> data.getAtIndex(LittleEndian.I32, index);
            case U32 -> Integer.toUnsignedLong(data.getAtIndex(LittleEndian.I32, index));
            case F32 -> data.getAtIndex(LittleEndian.F32, index);
            case I64 -> data.getAtIndex(LittleEndian.I64, index);
            case U64 -> unsignedToDouble(data.getAtIndex(LittleEndian.I64, index));
            case F64 -> data.getAtIndex(LittleEndian.F64, index);
            default -> throw new UnsupportedOperationException(
                    file.path() + ": tensor \"" + name() + "\": " + dtype() + " has no scalar double view");
        };
    }

    /**
     * A copy of the bytes in memory owned by {@code arena}, in transparent huge pages where the OS
     * offers them ({@link HugePages}): for tables read at random rows, such as embeddings fed to
     * {@code Kernels.gather}, which then miss the TLB far less than on the mapping's 4 KiB pages.
     * Any size; the copy stays valid after the file is closed (until {@code arena} is).
     */
    public MemorySegment load(Arena arena) {
        try {
            return HugePages.copyOf(data, arena);
        } catch (IllegalStateException | InternalError e) {
            throw file.accessFailure(this, e);
        }
    }

    /** A heap copy of the bytes; only for tensors under 2 GiB. */
    public byte[] toByteArray() {
        try {
            var copy = data.toArray(ValueLayout.JAVA_BYTE);
            MappedFiles.raisePendingFault();
            return copy;
        } catch (IllegalStateException | InternalError e) {
            throw file.accessFailure(this, e);
        }
    }

    /** A heap copy of an F32 tensor. */
    public float[] toFloatArray() {
        if (info.dtype() != Dtype.F32) {
            throw wrongType("F32");
        }
        try {
            var copy = data.toArray(LittleEndian.F32);
            MappedFiles.raisePendingFault();
            return copy;
        } catch (IllegalStateException | InternalError e) {
            throw file.accessFailure(this, e);
        }
    }

    /** A heap copy of an F64 tensor. */
    public double[] toDoubleArray() {
        if (info.dtype() != Dtype.F64) {
            throw wrongType("F64");
        }
        try {
            var copy = data.toArray(LittleEndian.F64);
            MappedFiles.raisePendingFault();
            return copy;
        } catch (IllegalStateException | InternalError e) {
            throw file.accessFailure(this, e);
        }
    }

    /** A heap copy of an I32 or U32 tensor. */
    public int[] toIntArray() {
        if (!(info.dtype() == Dtype.I32 || info.dtype() == Dtype.U32)) {
            throw wrongType("I32 or U32");
        }
        try {
            var copy = data.toArray(LittleEndian.I32);
            MappedFiles.raisePendingFault();
            return copy;
        } catch (IllegalStateException | InternalError e) {
            throw file.accessFailure(this, e);
        }
    }

    /** A heap copy of an I64 or U64 tensor. */
    public long[] toLongArray() {
        if (!(info.dtype() == Dtype.I64 || info.dtype() == Dtype.U64)) {
            throw wrongType("I64 or U64");
        }
        try {
            var copy = data.toArray(LittleEndian.I64);
            MappedFiles.raisePendingFault();
            return copy;
        } catch (IllegalStateException | InternalError e) {
            throw file.accessFailure(this, e);
        }
    }

    /** A heap copy of a 16-bit tensor's raw bits (I16, U16, F16, BF16). */
    public short[] toShortArray() {
        if (info.dtype().bits() != 16) {
            throw wrongType("16-bit");
        }
        try {
            var copy = data.toArray(LittleEndian.I16);
            MappedFiles.raisePendingFault();
            return copy;
        } catch (IllegalStateException | InternalError e) {
            throw file.accessFailure(this, e);
        }
    }

    private static double unsignedToDouble(long v) {
        double d = (double) (v >>> 1 | (v & 1)); // keep the sticky bit so rounding stays correct
        return v >= 0 ? (double) v : d * 2.0;
    }

    private UnsupportedOperationException wrongType(String what) {
        return new UnsupportedOperationException(file.path() + ": tensor \"" + name() + "\" is " + dtype()
                + ", not " + what);
    }

    @Override
    public String toString() {
        return name() + ": " + dtype() + " " + Arrays.toString(info.shape()) + " (" + byteSize() + " bytes)";
    }
}
