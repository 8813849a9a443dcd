package io.github.semyonsinchenko.safetensors.spark.functions;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.kernels.Conversion;
import io.github.semyonsinchenko.safetensors.kernels.Kernels;
import io.github.semyonsinchenko.safetensors.spark.TensorStruct;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Locale;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeArrayData;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * The per-row work of the tensor functions: one static method per function, called from the code
 * Spark generates (see {@link TensorExpression}). Values are read in place from Spark's memory
 * (UnsafeArrayData elements, UnsafeRow binary fields) and converted by {@link Kernels} straight
 * into the result's backing array; there is no per-element boxing.
 *
 * <p>Arguments that were literals in the query (element type, dtype, rounding) arrive as ints and
 * a boolean already checked at analysis. Errors that depend on the row are
 * {@link IllegalArgumentException}s naming the function and the offending values.
 */
public final class TensorCodec {
    private static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfDouble DOUBLE =
            ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final boolean LITTLE_ENDIAN = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;
    private static final Dtype[] DTYPES = Dtype.values();
    private static final ElementType[] ELEMENTS = ElementType.values();

    private TensorCodec() {}

    // ------------------------------------------------------------------ arr_to_st

    /** {@code arr_to_st}: a flat numeric array and a shape to a Tensor Struct in {@code dtype}. */
    public static InternalRow arrToSt(ArrayData values, ArrayData shape, int element, int dtype, boolean truncate) {
        String fn = TensorFunction.ARR_TO_ST.sqlName;
        ElementType e = ELEMENTS[element];
        Dtype target = DTYPES[dtype];
        int[] dims = dims(fn, shape);
        int n = values.numElements();
        long count = product(dims);
        if (count != n) {
            throw error(fn, "shape %s has %d elements but the array has %d", Arrays.toString(dims), count, n);
        }
        int nullAt = firstNull(values);
        if (nullAt >= 0) {
            throw error(fn, "the array has a null element at index %d; tensors have no nulls", nullAt);
        }
        byte[] out = new byte[outputBytes(fn, n, target)];
        MemorySegment dst = MemorySegment.ofArray(out);
        switch (e) {
            case FLOAT -> encodeFloats(floatElements(values), target, truncate, dst, n);
            case DOUBLE -> encodeDoubles(doubleElements(values), target, truncate, dst, n);
            default -> encodeIntegers(fn, values, e, target, truncate, dst, n);
        }
        return tensor(out, UnsafeArrayData.fromPrimitiveArray(dims), target);
    }

    private static void encodeFloats(MemorySegment src, Dtype target, boolean truncate, MemorySegment dst, int n) {
        switch (target) {
            case F32 -> MemorySegment.copy(src, 0, dst, 0, (long) n * 4);
            case F64 -> {
                for (long i = 0; i < n; i++) {
                    dst.set(DOUBLE, i * 8, src.get(FLOAT, i * 4));
                }
            }
            default -> Kernels.convert(Conversion.of(Dtype.F32, target, truncate).orElseThrow(), src, dst, n);
        }
    }

    private static void encodeDoubles(MemorySegment src, Dtype target, boolean truncate, MemorySegment dst, int n) {
        switch (target) {
            case F64 -> MemorySegment.copy(src, 0, dst, 0, (long) n * 8);
            case F32 -> {
                if (truncate) {
                    for (long i = 0; i < n; i++) {
                        dst.set(FLOAT, i * 4, Narrowing.towardZero(src.get(DOUBLE, i * 8)));
                    }
                } else {
                    Kernels.convert(Conversion.F64_TO_F32, src, dst, n);
                }
            }
            default -> {
                float[] narrowed = new float[n];
                for (int i = 0; i < n; i++) {
                    double d = src.get(DOUBLE, i * 8L);
                    narrowed[i] = truncate ? Narrowing.towardZero(d) : Narrowing.roundToOdd(d);
                }
                Kernels.convert(Conversion.of(Dtype.F32, target, truncate).orElseThrow(),
                        MemorySegment.ofArray(narrowed), dst, n);
            }
        }
    }

    /** Integers go to integer dtypes exactly (range-checked, never wrapped), to float dtypes rounded once. */
    private static void encodeIntegers(String fn, ArrayData a, ElementType e, Dtype target, boolean truncate,
            MemorySegment dst, int n) {
        if (target == Dtype.F16 || target == Dtype.BF16) {
            float[] narrowed = new float[n];
            for (int i = 0; i < n; i++) {
                double d = Narrowing.roundToOdd(e.get(a, i));
                narrowed[i] = truncate ? Narrowing.towardZero(d) : Narrowing.roundToOdd(d);
            }
            Kernels.convert(Conversion.of(Dtype.F32, target, truncate).orElseThrow(),
                    MemorySegment.ofArray(narrowed), dst, n);
            return;
        }
        for (int i = 0; i < n; i++) {
            long v = e.get(a, i);
            long at = (long) i * target.byteSize();
            switch (target) {
                case I8 -> dst.set(ValueLayout.JAVA_BYTE, at, (byte) range(fn, v, Byte.MIN_VALUE, Byte.MAX_VALUE, target));
                case U8 -> dst.set(ValueLayout.JAVA_BYTE, at, (byte) range(fn, v, 0, 0xFF, target));
                case I16 -> dst.set(SHORT, at, (short) range(fn, v, Short.MIN_VALUE, Short.MAX_VALUE, target));
                case U16 -> dst.set(SHORT, at, (short) range(fn, v, 0, 0xFFFF, target));
                case I32 -> dst.set(INT, at, (int) range(fn, v, Integer.MIN_VALUE, Integer.MAX_VALUE, target));
                case U32 -> dst.set(INT, at, (int) range(fn, v, 0, 0xFFFF_FFFFL, target));
                case I64 -> dst.set(LONG, at, v);
                case U64 -> dst.set(LONG, at, range(fn, v, 0, Long.MAX_VALUE, target));
                case F64 -> dst.set(DOUBLE, at, (double) v);
                case F32 -> dst.set(FLOAT, at, truncate ? Narrowing.towardZero(Narrowing.roundToOdd(v)) : (float) v);
                default -> throw new IllegalStateException("integers to " + target);
            }
        }
    }

    private static long range(String fn, long v, long min, long max, Dtype target) {
        if (v < min || v > max) {
            throw error(fn, "value %d does not fit %s [%d, %d]; integers are never wrapped or clamped",
                    v, target, min, max);
        }
        return v;
    }

    // ------------------------------------------------------------------ st_to_array

    /** {@code st_to_array}: a Tensor Struct to a flat {@code array<float>}, widened by the kernels. */
    public static ArrayData stToArray(InternalRow tensor) {
        String fn = TensorFunction.ST_TO_ARRAY.sqlName;
        Dtype dtype = dtype(fn, tensor);
        Conversion widen = dtype == Dtype.F32 ? null : Conversion.toF32(dtype).orElseThrow(() -> error(fn,
                "dtype %s cannot be read as floats; supported: F16, BF16, F32, F64, I8, U8, I16, U16, I32, U32, "
                        + "I64, U64", dtype));
        int n = count(fn, tensor, dtype);
        UnsafeArrayData out = UnsafeArrayData.createFreshArray(n, 4);
        MemorySegment dst = unsafeElements(out, (long) n * 4);
        MemorySegment src = data(tensor);
        if (widen == null) {
            MemorySegment.copy(src, 0, dst, 0, (long) n * 4);
        } else {
            Kernels.convert(widen, src, dst, n);
        }
        return out;
    }

    // ------------------------------------------------------------------ st_convert

    /** {@code st_convert}: a float Tensor Struct to another float dtype, same shape. */
    public static InternalRow stConvert(InternalRow tensor, int dtype, boolean truncate) {
        String fn = TensorFunction.ST_CONVERT.sqlName;
        Dtype source = dtype(fn, tensor);
        Dtype target = DTYPES[dtype];
        if (!TensorFunction.FLOAT_DTYPES.contains(source)) {
            throw error(fn, "the tensor's dtype is %s; only float tensors (F16, BF16, F32, F64) are converted",
                    source);
        }
        int n = count(fn, tensor, source);
        MemorySegment src = data(tensor);
        byte[] out = new byte[outputBytes(fn, n, target)];
        MemorySegment dst = MemorySegment.ofArray(out);
        if (source == target) {
            MemorySegment.copy(src, 0, dst, 0, out.length);
        } else if (target == Dtype.F64) {
            for (long i = 0; i < n; i++) {
                dst.set(DOUBLE, i * 8, readExact(src, source, i));
            }
        } else if (source == Dtype.F64) {
            encodeDoubles(src, target, truncate, dst, n);
        } else if (source == Dtype.F32) {
            encodeFloats(src, target, truncate, dst, n);
        } else {
            // F16 <-> BF16 or a 16-bit float to F32: widen exactly; narrow once if needed.
            Conversion direct = Conversion.of(source, target).orElse(null);
            if (direct != null && (!truncate || target == Dtype.F32)) {
                Kernels.convert(direct, src, dst, n);
            } else {
                float[] wide = new float[n];
                Kernels.convert(Conversion.toF32(source).orElseThrow(), src, MemorySegment.ofArray(wide), n);
                encodeFloats(MemorySegment.ofArray(wide), target, truncate, dst, n);
            }
        }
        int[] dims = dims(fn, tensor.getArray(TensorStruct.SHAPE_ORDINAL));
        return tensor(out, UnsafeArrayData.fromPrimitiveArray(dims), target);
    }

    private static double readExact(MemorySegment src, Dtype dtype, long i) {
        return switch (dtype) {
            case F32 -> src.get(FLOAT, i * 4);
            case F16 -> Float.float16ToFloat(src.get(SHORT, i * 2));
            case BF16 -> Float.intBitsToFloat((src.get(SHORT, i * 2) & 0xFFFF) << 16);
            case F64 -> src.get(DOUBLE, i * 8);
            default -> throw new IllegalStateException("not a float dtype: " + dtype);
        };
    }

    // ------------------------------------------------------------------ Tensor Struct access

    private static InternalRow tensor(byte[] data, ArrayData shape, Dtype dtype) {
        return new GenericInternalRow(new Object[] {data, shape, UTF8String.fromString(dtype.name())});
    }

    private static Dtype dtype(String fn, InternalRow tensor) {
        for (int i = 0; i < 3; i++) {
            if (tensor.isNullAt(i)) {
                throw error(fn, "Tensor Struct field '%s' is null", TensorStruct.TYPE.fields()[i].name());
            }
        }
        String name = tensor.getUTF8String(TensorStruct.DTYPE_ORDINAL).toString();
        Dtype d = Dtype.fromName(name);
        if (d == null) {
            throw error(fn, "Tensor Struct dtype '%s' is not a safetensors dtype", name);
        }
        return d;
    }

    /** The element count from the shape, checked against the data length. */
    private static int count(String fn, InternalRow tensor, Dtype dtype) {
        int[] dims = dims(fn, tensor.getArray(TensorStruct.SHAPE_ORDINAL));
        long count = product(dims);
        long expected = (long) dtype.byteSize() * count;
        long actual = dataLength(tensor);
        if (actual != expected) {
            throw error(fn, "Tensor Struct data has %d bytes but %s %s needs %d", actual, dtype,
                    Arrays.toString(dims), expected);
        }
        if (count > Integer.MAX_VALUE - 15) {
            throw error(fn, "%d elements do not fit one Spark array", count);
        }
        return (int) count;
    }

    private static int[] dims(String fn, ArrayData shape) {
        int[] dims = new int[shape.numElements()];
        for (int i = 0; i < dims.length; i++) {
            if (shape.isNullAt(i) || shape.getInt(i) < 0) {
                throw error(fn, "shape %s has a null or negative dimension", shape.isNullAt(i) ? "with null"
                        : Arrays.toString(shape.toIntArray()));
            }
            dims[i] = shape.getInt(i);
        }
        return dims;
    }

    private static long product(int[] dims) {
        long p = 1;
        for (int d : dims) {
            p = Math.multiplyExact(p, d);
        }
        return p;
    }

    private static int outputBytes(String fn, long n, Dtype dtype) {
        long bytes = n * dtype.byteSize();
        if (bytes > Integer.MAX_VALUE - 15) {
            throw error(fn, "%d elements of %s are %d bytes, more than one Spark binary value holds", n, dtype,
                    bytes);
        }
        return (int) bytes;
    }

    // ------------------------------------------------------------------ Spark memory

    /** The Tensor Struct's data bytes, read in place when the struct is an UnsafeRow. */
    private static MemorySegment data(InternalRow s) {
        if (s instanceof UnsafeRow u) {
            long offsetAndSize = u.getLong(TensorStruct.DATA_ORDINAL);
            MemorySegment view = view(u.getBaseObject(), u.getBaseOffset() + (int) (offsetAndSize >> 32),
                    (int) offsetAndSize);
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

    private static MemorySegment floatElements(ArrayData a) {
        MemorySegment view = LITTLE_ENDIAN && a instanceof UnsafeArrayData u ? unsafeElements(u, a.numElements() * 4L)
                : null;
        return view != null ? view : MemorySegment.ofArray(a.toFloatArray());
    }

    private static MemorySegment doubleElements(ArrayData a) {
        MemorySegment view = LITTLE_ENDIAN && a instanceof UnsafeArrayData u ? unsafeElements(u, a.numElements() * 8L)
                : null;
        return view != null ? view : MemorySegment.ofArray(a.toDoubleArray());
    }

    private static MemorySegment unsafeElements(UnsafeArrayData u, long bytes) {
        long start = u.getBaseOffset() + UnsafeArrayData.calculateHeaderPortionInBytes(u.numElements());
        return view(u.getBaseObject(), start, bytes);
    }

    /** A segment over Spark's memory: a byte[] or long[] base (on-heap) or a raw address (off-heap). */
    private static MemorySegment view(Object base, long offset, long bytes) {
        if (base instanceof byte[] arr) {
            return MemorySegment.ofArray(arr).asSlice(offset - Platform.BYTE_ARRAY_OFFSET, bytes);
        }
        if (base instanceof long[] arr) {
            return MemorySegment.ofArray(arr).asSlice(offset - Platform.LONG_ARRAY_OFFSET, bytes);
        }
        if (base == null) {
            return MemorySegment.ofAddress(offset).reinterpret(bytes);
        }
        return null;
    }

    private static int firstNull(ArrayData a) {
        if (a instanceof UnsafeArrayData u) {
            // The null bits follow the 8-byte element count; all-zero words mean no nulls.
            long words = (UnsafeArrayData.calculateHeaderPortionInBytes(u.numElements()) - 8) / 8;
            boolean any = false;
            for (long w = 0; w < words && !any; w++) {
                any = Platform.getLong(u.getBaseObject(), u.getBaseOffset() + 8 + w * 8) != 0;
            }
            if (!any) {
                return -1;
            }
        }
        for (int i = 0; i < a.numElements(); i++) {
            if (a.isNullAt(i)) {
                return i;
            }
        }
        return -1;
    }

    static IllegalArgumentException error(String fn, String format, Object... args) {
        return new IllegalArgumentException("[safetensors] " + fn + ": " + String.format(Locale.ROOT, format, args));
    }
}
