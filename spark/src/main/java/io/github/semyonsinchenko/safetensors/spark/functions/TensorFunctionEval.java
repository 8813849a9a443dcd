package io.github.semyonsinchenko.safetensors.spark.functions;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.kernels.Conversion;
import io.github.semyonsinchenko.safetensors.kernels.Kernels;
import io.github.semyonsinchenko.safetensors.spark.tensor.DtypeEncoding;
import io.github.semyonsinchenko.safetensors.spark.tensor.ElementType;
import io.github.semyonsinchenko.safetensors.spark.tensor.SparkMemory;
import io.github.semyonsinchenko.safetensors.spark.tensor.TensorStruct;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.Locale;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeArrayData;
import org.apache.spark.sql.catalyst.util.ArrayData;
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
public final class TensorFunctionEval {
    private static final Dtype[] DTYPES = Dtype.values();
    private static final ElementType[] ELEMENTS = ElementType.values();

    private TensorFunctionEval() {}

    // ------------------------------------------------------------------ arr_to_st

    /**
     * {@code arr_to_st}: a flat numeric array and a shape to a Tensor Struct in {@code dtype}.
     *
     * @param values the array; no element may be null
     * @param shape the dimensions; their product must equal the array's length
     * @param element the {@link ElementType} ordinal of the array's elements
     * @param dtype the {@link Dtype} ordinal of the result
     * @param truncate true to round toward zero, false to round to nearest even
     * @return the Tensor Struct
     * @throws IllegalArgumentException naming the function and the values when the shape does not
     *     match, an element is null, a value does not fit the dtype or the result exceeds one binary
     *     value
     */
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
        int nullAt = SparkMemory.firstNull(values);
        if (nullAt >= 0) {
            throw error(fn, "the array has a null element at index %d; tensors have no nulls", nullAt);
        }
        byte[] out = new byte[outputBytes(fn, n, target)];
        try {
            DtypeEncoding.encode(values, e, target, truncate, MemorySegment.ofArray(out), 0);
        } catch (IllegalArgumentException bad) {
            throw error(fn, "%s", bad.getMessage());
        }
        return tensor(out, UnsafeArrayData.fromPrimitiveArray(dims), target);
    }

    // ------------------------------------------------------------------ st_to_array

    /**
     * {@code st_to_array}: a Tensor Struct to a flat {@code array<float>} in row-major order, widened
     * by the kernels.
     *
     * @param tensor a Tensor Struct
     * @return the elements as floats
     * @throws IllegalArgumentException naming the function when a field is null, the dtype cannot be
     *     read as floats or the data length does not match the shape
     */
    public static ArrayData stToArray(InternalRow tensor) {
        String fn = TensorFunction.ST_TO_ARRAY.sqlName;
        Dtype dtype = dtype(fn, tensor);
        Conversion widen = dtype == Dtype.F32 ? null : Conversion.toF32(dtype).orElseThrow(() -> error(fn,
                "dtype %s cannot be read as floats; supported: F16, BF16, F32, F64, the F8 formats, I8, U8, I16, "
                        + "U16, I32, U32, I64, U64", dtype));
        int n = count(fn, tensor, dtype);
        UnsafeArrayData out = UnsafeArrayData.createFreshArray(n, 4);
        MemorySegment dst = SparkMemory.elements(out, 4);
        MemorySegment src = SparkMemory.data(tensor);
        if (widen == null) {
            MemorySegment.copy(src, 0, dst, 0, (long) n * 4);
        } else {
            Kernels.convert(widen, src, dst, n);
        }
        return out;
    }

    // ------------------------------------------------------------------ st_convert

    /**
     * {@code st_convert}: a float Tensor Struct to another float dtype, same shape.
     *
     * @param tensor a Tensor Struct of dtype F16, BF16, F32 or F64
     * @param dtype the {@link Dtype} ordinal of the result, a float dtype
     * @param truncate true to round toward zero, false to round to nearest even
     * @return the converted Tensor Struct
     * @throws IllegalArgumentException naming the function when a field is null, the tensor is not a
     *     float tensor or the data length does not match the shape
     */
    public static InternalRow stConvert(InternalRow tensor, int dtype, boolean truncate) {
        String fn = TensorFunction.ST_CONVERT.sqlName;
        Dtype source = dtype(fn, tensor);
        Dtype target = DTYPES[dtype];
        if (!TensorFunction.FLOAT_DTYPES.contains(source)) {
            throw error(fn, "the tensor's dtype is %s; only float tensors (F16, BF16, F32, F64) are converted",
                    source);
        }
        int n = count(fn, tensor, source);
        byte[] out = new byte[outputBytes(fn, n, target)];
        DtypeEncoding.convertFloats(SparkMemory.data(tensor), source, MemorySegment.ofArray(out), target, truncate);
        int[] dims = dims(fn, tensor.getArray(TensorStruct.SHAPE_ORDINAL));
        return tensor(out, UnsafeArrayData.fromPrimitiveArray(dims), target);
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
        long actual = SparkMemory.dataLength(tensor);
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

    static IllegalArgumentException error(String fn, String format, Object... args) {
        return new IllegalArgumentException("[safetensors] " + fn + ": " + String.format(Locale.ROOT, format, args));
    }
}
