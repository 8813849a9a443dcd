package io.github.semyonsinchenko.safetensors.spark.write;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.kernels.Conversion;
import io.github.semyonsinchenko.safetensors.kernels.Kernels;
import io.github.semyonsinchenko.safetensors.spark.TensorStruct;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Arrays;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeArrayData;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.unsafe.Platform;

/**
 * Turns one column's value into tensor bytes, in two steps so the caller can place the bytes:
 * {@link #inspect} finds the dtype, shape and size (and checks the value), {@link #encode} writes
 * the little-endian bytes into a slice of the off-heap shard buffer. Spark's UnsafeRow and
 * UnsafeArrayData memory is read in place, so bytes are not copied through temporary heap arrays.
 *
 * <p>Errors are {@link IllegalArgumentException}s with the detail only; the caller adds the
 * column and row.
 */
final class TensorEncoder {
    private static final boolean LITTLE_ENDIAN = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;
    private static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfDouble DOUBLE =
            ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    final ColumnSpec spec;

    // Result of the last inspect(): valid until the next call.
    Dtype dtype;
    long[] shape;
    long byteSize;
    private Dtype sourceDtype;
    private InternalRow struct;
    private ArrayData array;

    TensorEncoder(ColumnSpec spec) {
        this.spec = spec;
    }

    /** Reads the value's dtype and shape and checks it; {@code row} stays referenced until encode. */
    void inspect(InternalRow row) {
        if (row.isNullAt(spec.ordinal())) {
            throw new IllegalArgumentException("the value is null; every tensor must be present");
        }
        if (spec.kind() == ColumnSpec.Kind.TENSOR_STRUCT) {
            inspectStruct(row.getStruct(spec.ordinal(), 3));
        } else {
            inspectArray(row.getArray(spec.ordinal()));
        }
    }

    private void inspectStruct(InternalRow s) {
        for (int i = 0; i < 3; i++) {
            if (s.isNullAt(i)) {
                throw new IllegalArgumentException("Tensor Struct field '" + TensorStruct.TYPE.fields()[i].name()
                        + "' is null");
            }
        }
        String name = s.getUTF8String(TensorStruct.DTYPE_ORDINAL).toString();
        Dtype src = Dtype.fromName(name);
        if (src == null) {
            throw new IllegalArgumentException("Tensor Struct dtype '" + name + "' is not a safetensors dtype");
        }
        ArrayData dims = s.getArray(TensorStruct.SHAPE_ORDINAL);
        long[] natural = new long[dims.numElements()];
        for (int i = 0; i < natural.length; i++) {
            if (dims.isNullAt(i) || dims.getInt(i) < 0) {
                throw new IllegalArgumentException("Tensor Struct shape " + dims + " has a null or negative dimension");
            }
            natural[i] = dims.getInt(i);
        }
        long count = product(natural);
        long dataBytes = dataLength(s);
        long expected = src.storageBytes(count);
        if (dataBytes != expected) {
            throw new IllegalArgumentException("Tensor Struct data has " + dataBytes + " bytes but " + src + " "
                    + Arrays.toString(natural) + " needs " + expected);
        }
        Dtype target = spec.dtype() == null ? src : spec.dtype();
        if (target != src && !(WriteOptions.isFloat(src) && WriteOptions.isFloat(target))) {
            throw new IllegalArgumentException("Tensor Struct dtype is " + src + " but 'dtype' is " + target
                    + "; bytes are converted only between float dtypes (F16, BF16, F32, F64), never relabeled");
        }
        this.struct = s;
        this.array = null;
        this.sourceDtype = src;
        finish(target, natural, count);
    }

    private void inspectArray(ArrayData a) {
        long[] natural = new long[spec.depth()];
        arrayShape(a, 0, natural);
        this.array = a;
        this.struct = null;
        this.sourceDtype = null;
        finish(spec.dtype(), natural, product(natural));
    }

    private void finish(Dtype target, long[] natural, long count) {
        long[] fixed = spec.fixedShape();
        if (fixed != null && product(fixed) != count) {
            throw new IllegalArgumentException("the value has shape " + Arrays.toString(natural) + " (" + count
                    + " elements) but 'shapes' says " + Arrays.toString(fixed) + " (" + product(fixed) + ")");
        }
        this.dtype = target;
        this.shape = fixed != null ? fixed : natural;
        this.byteSize = target.storageBytes(count);
    }

    /** Fills {@code shape[level..]} from a nested array, checking it is rectangular and null-free. */
    private void arrayShape(ArrayData a, int level, long[] shape) {
        int n = a.numElements();
        shape[level] = n;
        if (level == shape.length - 1) {
            if (hasNulls(a)) {
                throw new IllegalArgumentException("the array contains null elements");
            }
            return;
        }
        long[] first = null;
        for (int i = 0; i < n; i++) {
            if (a.isNullAt(i)) {
                throw new IllegalArgumentException("the array contains a null sub-array");
            }
            arrayShape(a.getArray(i), level + 1, shape);
            if (first == null) {
                first = shape.clone();
            } else if (!Arrays.equals(first, level + 1, shape.length, shape, level + 1, shape.length)) {
                throw new IllegalArgumentException("the nested array is ragged: sub-arrays of shape "
                        + Arrays.toString(Arrays.copyOfRange(first, level + 1, shape.length)) + " and "
                        + Arrays.toString(Arrays.copyOfRange(shape, level + 1, shape.length)));
            }
        }
        if (n == 0) {
            Arrays.fill(shape, level + 1, shape.length, 0);
        }
    }

    /** Writes the inspected value into {@code out}, which is exactly {@link #byteSize} bytes. */
    void encode(MemorySegment out) {
        if (struct != null) {
            MemorySegment src = dataSegment(struct);
            if (sourceDtype == dtype) {
                MemorySegment.copy(src, 0, out, 0, byteSize);
            } else {
                convertFloats(src, sourceDtype, out, dtype);
            }
        } else {
            encodeArray(array, 0, out, 0);
        }
        struct = null;
        array = null;
    }

    private long encodeArray(ArrayData a, int level, MemorySegment out, long pos) {
        if (level < spec.depth() - 1) {
            for (int i = 0; i < a.numElements(); i++) {
                pos = encodeArray(a.getArray(i), level + 1, out, pos);
            }
            return pos;
        }
        int n = a.numElements();
        ColumnSpec.Element e = spec.element();
        if (LITTLE_ENDIAN && a instanceof UnsafeArrayData u) {
            Conversion kernel = e == ColumnSpec.Element.FLOAT ? kernel(Dtype.F32, dtype) : null;
            if (dtype == e.natural || kernel != null) {
                MemorySegment elements = unsafeElements(u, (long) n * e.natural.byteSize());
                if (elements != null) {
                    long bytes = (long) n * dtype.byteSize();
                    if (kernel == null) {
                        MemorySegment.copy(elements, 0, out, pos, bytes);
                    } else {
                        Kernels.convert(kernel, elements, out.asSlice(pos, bytes), n);
                    }
                    return pos + bytes;
                }
            }
        }
        int width = dtype.byteSize();
        for (int i = 0; i < n; i++, pos += width) {
            switch (e) {
                case FLOAT -> writeFloat(out, pos, a.getFloat(i));
                case DOUBLE -> writeDouble(out, pos, a.getDouble(i));
                case BYTE -> writeLong(out, pos, a.getByte(i));
                case SHORT -> writeLong(out, pos, a.getShort(i));
                case INT -> writeLong(out, pos, a.getInt(i));
                case LONG -> writeLong(out, pos, a.getLong(i));
            }
        }
        return pos;
    }

    private void writeFloat(MemorySegment out, long pos, float v) {
        switch (dtype) {
            case F32 -> out.set(FLOAT, pos, v);
            case F64 -> out.set(DOUBLE, pos, v);
            case F16 -> out.set(SHORT, pos, HalfFloats.toF16(v));
            case BF16 -> out.set(SHORT, pos, HalfFloats.toBf16(v));
            default -> throw new IllegalStateException("float to " + dtype);
        }
    }

    private void writeDouble(MemorySegment out, long pos, double v) {
        switch (dtype) {
            case F64 -> out.set(DOUBLE, pos, v);
            case F32 -> out.set(FLOAT, pos, (float) v);
            case F16 -> out.set(SHORT, pos, HalfFloats.toF16(HalfFloats.toFloatRoundToOdd(v)));
            case BF16 -> out.set(SHORT, pos, HalfFloats.toBf16(HalfFloats.toFloatRoundToOdd(v)));
            default -> throw new IllegalStateException("double to " + dtype);
        }
    }

    /** Integers go to integer dtypes exactly (range-checked), to float dtypes correctly rounded. */
    private void writeLong(MemorySegment out, long pos, long v) {
        switch (dtype) {
            case I8 -> out.set(ValueLayout.JAVA_BYTE, pos, (byte) checkRange(v, Byte.MIN_VALUE, Byte.MAX_VALUE));
            case U8 -> out.set(ValueLayout.JAVA_BYTE, pos, (byte) checkRange(v, 0, 0xFF));
            case I16 -> out.set(SHORT, pos, (short) checkRange(v, Short.MIN_VALUE, Short.MAX_VALUE));
            case U16 -> out.set(SHORT, pos, (short) checkRange(v, 0, 0xFFFF));
            case I32 -> out.set(INT, pos, (int) checkRange(v, Integer.MIN_VALUE, Integer.MAX_VALUE));
            case U32 -> out.set(INT, pos, (int) checkRange(v, 0, 0xFFFF_FFFFL));
            case I64 -> out.set(LONG, pos, v);
            case U64 -> out.set(LONG, pos, checkRange(v, 0, Long.MAX_VALUE));
            case F64 -> out.set(DOUBLE, pos, (double) v);
            case F32 -> out.set(FLOAT, pos, (float) v);
            case F16, BF16 -> writeDouble(out, pos, HalfFloats.toDoubleRoundToOdd(v));
            default -> throw new IllegalStateException("integer to " + dtype);
        }
    }

    private long checkRange(long v, long min, long max) {
        if (v < min || v > max) {
            throw new IllegalArgumentException("value " + v + " does not fit " + dtype + " [" + min + ", " + max
                    + "]; integers are never wrapped or clamped");
        }
        return v;
    }

    /**
     * The SIMD kernel for a float conversion, or null where there is none. Conversions to F64 and
     * from F64 to 16 bits stay in Java: the latter must round once from double (round-to-odd).
     */
    private static Conversion kernel(Dtype from, Dtype to) {
        return Conversion.of(from, to).orElse(null);
    }

    /** Float-to-float conversion of Tensor Struct bytes: decode exactly, encode correctly rounded. */
    private void convertFloats(MemorySegment src, Dtype from, MemorySegment out, Dtype to) {
        long n = src.byteSize() / from.byteSize();
        Conversion kernel = kernel(from, to);
        if (kernel != null) {
            Kernels.convert(kernel, src, out, n);
            return;
        }
        int wf = from.byteSize();
        int wt = to.byteSize();
        for (long i = 0; i < n; i++) {
            double v = switch (from) {
                case F64 -> src.get(DOUBLE, i * wf);
                case F32 -> src.get(FLOAT, i * wf);
                case F16 -> Float.float16ToFloat(src.get(SHORT, i * wf));
                case BF16 -> HalfFloats.bf16ToFloat(src.get(SHORT, i * wf));
                default -> throw new IllegalStateException("from " + from);
            };
            writeDouble(out, i * wt, v);
        }
    }

    private static boolean hasNulls(ArrayData a) {
        if (a instanceof UnsafeArrayData u) {
            // The null bits follow the 8-byte element count; all-zero words mean no nulls.
            long words = (UnsafeArrayData.calculateHeaderPortionInBytes(u.numElements()) - 8) / 8;
            for (long w = 0; w < words; w++) {
                if (Platform.getLong(u.getBaseObject(), u.getBaseOffset() + 8 + w * 8) != 0) {
                    return true;
                }
            }
            return false;
        }
        for (int i = 0; i < a.numElements(); i++) {
            if (a.isNullAt(i)) {
                return true;
            }
        }
        return false;
    }

    private static MemorySegment unsafeElements(UnsafeArrayData u, long bytes) {
        long start = u.getBaseOffset() + UnsafeArrayData.calculateHeaderPortionInBytes(u.numElements());
        return view(u.getBaseObject(), start, bytes);
    }

    /** The Tensor Struct's data bytes, read in place when the struct is an UnsafeRow. */
    private static MemorySegment dataSegment(InternalRow s) {
        if (s instanceof UnsafeRow u) {
            long offsetAndSize = u.getLong(TensorStruct.DATA_ORDINAL);
            int offset = (int) (offsetAndSize >> 32);
            int size = (int) offsetAndSize;
            MemorySegment view = view(u.getBaseObject(), u.getBaseOffset() + offset, size);
            if (view != null) {
                return view;
            }
        }
        return MemorySegment.ofArray(s.getBinary(TensorStruct.DATA_ORDINAL));
    }

    private static long dataLength(InternalRow s) {
        if (s instanceof UnsafeRow u) {
            return (int) u.getLong(TensorStruct.DATA_ORDINAL);
        }
        return s.getBinary(TensorStruct.DATA_ORDINAL).length;
    }

    /** A segment over Spark's memory: a byte[] base (on-heap rows) or a raw address (off-heap). */
    private static MemorySegment view(Object base, long offset, long bytes) {
        if (base instanceof byte[] arr) {
            return MemorySegment.ofArray(arr).asSlice(offset - Platform.BYTE_ARRAY_OFFSET, bytes);
        }
        if (base == null) {
            return MemorySegment.ofAddress(offset).reinterpret(bytes);
        }
        if (base instanceof long[] arr) {
            return MemorySegment.ofArray(arr).asSlice(offset - Platform.LONG_ARRAY_OFFSET, bytes);
        }
        return null;
    }

    static long product(long[] shape) {
        long p = 1;
        for (long d : shape) {
            p = Math.multiplyExact(p, d);
        }
        return p;
    }
}
