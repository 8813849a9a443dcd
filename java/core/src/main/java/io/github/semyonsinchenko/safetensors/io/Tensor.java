package io.github.semyonsinchenko.safetensors.io;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.format.TensorInfo;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * One tensor of an open {@link SafetensorsFile}: its header entry and a read-only slice of the
 * mapping. A borrowed view: it is valid while its file is open and has no {@code close()}.
 *
 * <p>Typed accessors read little-endian, unaligned elements (safetensors does not promise
 * alignment) and check that the dtype matches, so a BF16 tensor is never silently read as I16.
 */
public final class Tensor {
    static final ValueLayout.OfShort LE_SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfInt LE_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfLong LE_LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfFloat LE_FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfDouble LE_DOUBLE =
            ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

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
        require(info.dtype().isByteAligned() && info.dtype().bits() == 8, "8-bit");
        try {
            return data.get(ValueLayout.JAVA_BYTE, index);
        } catch (IllegalStateException e) {
            throw closed(e);
        }
    }

    /** Raw 16 bits of an I16, U16, F16 or BF16 element. */
    public short getShort(long index) {
        require(info.dtype().bits() == 16, "16-bit");
        try {
            return data.getAtIndex(LE_SHORT, index);
        } catch (IllegalStateException e) {
            throw closed(e);
        }
    }

    /** An I32 or U32 element (U32 as its bit pattern). */
    public int getInt(long index) {
        require(info.dtype() == Dtype.I32 || info.dtype() == Dtype.U32, "I32 or U32");
        try {
            return data.getAtIndex(LE_INT, index);
        } catch (IllegalStateException e) {
            throw closed(e);
        }
    }

    /** An I64 or U64 element (U64 as its bit pattern). */
    public long getLong(long index) {
        require(info.dtype() == Dtype.I64 || info.dtype() == Dtype.U64, "I64 or U64");
        try {
            return data.getAtIndex(LE_LONG, index);
        } catch (IllegalStateException e) {
            throw closed(e);
        }
    }

    /** An F32 element. */
    public float getFloat(long index) {
        require(info.dtype() == Dtype.F32, "F32");
        try {
            return data.getAtIndex(LE_FLOAT, index);
        } catch (IllegalStateException e) {
            throw closed(e);
        }
    }

    /** An F64 element. */
    public double getDouble(long index) {
        require(info.dtype() == Dtype.F64, "F64");
        try {
            return data.getAtIndex(LE_DOUBLE, index);
        } catch (IllegalStateException e) {
            throw closed(e);
        }
    }

    /**
     * Any real numeric element widened to double: BOOL, U8, I8, I16, U16, I32, U32, I64, U64 (may
     * round), F16, BF16, F32, F64. Not for the F4/F6/F8 families or C64.
     */
    public double getAsDouble(long index) {
        try {
            return asDouble(index);
        } catch (IllegalStateException e) {
            throw closed(e);
        }
    }

    private double asDouble(long index) {
        return switch (info.dtype()) {
            case BOOL, U8 -> Byte.toUnsignedInt(data.get(ValueLayout.JAVA_BYTE, index));
            case I8 -> data.get(ValueLayout.JAVA_BYTE, index);
            case I16 -> data.getAtIndex(LE_SHORT, index);
            case U16 -> Short.toUnsignedInt(data.getAtIndex(LE_SHORT, index));
            case F16 -> Float.float16ToFloat(data.getAtIndex(LE_SHORT, index));
            case BF16 -> Float.intBitsToFloat(data.getAtIndex(LE_SHORT, index) << 16);
            case I32 -> data.getAtIndex(LE_INT, index);
            case U32 -> Integer.toUnsignedLong(data.getAtIndex(LE_INT, index));
            case F32 -> data.getAtIndex(LE_FLOAT, index);
            case I64 -> data.getAtIndex(LE_LONG, index);
            case U64 -> unsignedToDouble(data.getAtIndex(LE_LONG, index));
            case F64 -> data.getAtIndex(LE_DOUBLE, index);
            default -> throw new UnsupportedOperationException(
                    file.path() + ": tensor \"" + name() + "\": " + dtype() + " has no scalar double view");
        };
    }

    /** A heap copy of the bytes; only for tensors under 2 GiB. */
    public byte[] toByteArray() {
        return data().toArray(ValueLayout.JAVA_BYTE);
    }

    /** A heap copy of an F32 tensor. */
    public float[] toFloatArray() {
        require(info.dtype() == Dtype.F32, "F32");
        return data().toArray(LE_FLOAT);
    }

    /** A heap copy of an F64 tensor. */
    public double[] toDoubleArray() {
        require(info.dtype() == Dtype.F64, "F64");
        return data().toArray(LE_DOUBLE);
    }

    /** A heap copy of an I32 or U32 tensor. */
    public int[] toIntArray() {
        require(info.dtype() == Dtype.I32 || info.dtype() == Dtype.U32, "I32 or U32");
        return data().toArray(LE_INT);
    }

    /** A heap copy of an I64 or U64 tensor. */
    public long[] toLongArray() {
        require(info.dtype() == Dtype.I64 || info.dtype() == Dtype.U64, "I64 or U64");
        return data().toArray(LE_LONG);
    }

    /** A heap copy of a 16-bit tensor's raw bits (I16, U16, F16, BF16). */
    public short[] toShortArray() {
        require(info.dtype().bits() == 16, "16-bit");
        return data().toArray(LE_SHORT);
    }

    private static double unsignedToDouble(long v) {
        double d = (double) (v >>> 1 | (v & 1)); // keep the sticky bit so rounding stays correct
        return v >= 0 ? (double) v : d * 2.0;
    }

    /** The dtype check; whether the file is open is left to FFM, which checks every access anyway. */
    private void require(boolean ok, String what) {
        if (!ok) {
            throw new UnsupportedOperationException(file.path() + ": tensor \"" + name() + "\" is " + dtype()
                    + ", not " + what);
        }
    }

    /** FFM's "Already closed" does not say which file; once the file is closed, say it. */
    private RuntimeException closed(IllegalStateException e) {
        return file.isOpen() ? e : new IllegalStateException(file.closedMessage() + " (reading tensor \"" + name()
                + "\")", e);
    }

    @Override
    public String toString() {
        return name() + ": " + dtype() + " " + Arrays.toString(info.shape()) + " (" + byteSize() + " bytes)";
    }
}
