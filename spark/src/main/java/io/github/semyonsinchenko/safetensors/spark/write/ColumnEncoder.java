package io.github.semyonsinchenko.safetensors.spark.write;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.spark.tensor.DtypeEncoding;
import io.github.semyonsinchenko.safetensors.spark.tensor.SparkMemory;
import io.github.semyonsinchenko.safetensors.spark.tensor.TensorStruct;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.util.ArrayData;

/**
 * Turns one column's value into tensor bytes, in two steps so the caller can place the bytes:
 * {@link #inspect} finds the dtype, shape and size (and checks the value), {@link #encode} writes
 * the little-endian bytes into a slice of the off-heap shard buffer, through
 * {@link DtypeEncoding} (the same encoding as the SQL functions). Spark's UnsafeRow and
 * UnsafeArrayData memory is read in place, so bytes are not copied through temporary heap arrays.
 *
 * <p>Errors are {@link IllegalArgumentException}s with the detail only; the caller adds the
 * column and row.
 */
final class ColumnEncoder {
    final ColumnSpec spec;

    // Result of the last inspect(): valid until the next call.
    Dtype dtype;
    long[] shape;
    long byteSize;
    private Dtype sourceDtype;
    private InternalRow struct;
    private ArrayData array;

    ColumnEncoder(ColumnSpec spec) {
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
        long dataBytes = SparkMemory.dataLength(s);
        long expected = src.storageBytes(count);
        if (dataBytes != expected) {
            throw new IllegalArgumentException("Tensor Struct data has " + dataBytes + " bytes but " + src + " "
                    + Arrays.toString(natural) + " needs " + expected);
        }
        Dtype target = spec.dtype() == null ? src : spec.dtype();
        if (target != src
                && !(DtypeEncoding.isConvertibleFloat(src) && DtypeEncoding.isConvertibleFloat(target))) {
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
            if (SparkMemory.firstNull(a) >= 0) {
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
            DtypeEncoding.convertFloats(SparkMemory.data(struct), sourceDtype, out, dtype, false);
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
        return DtypeEncoding.encode(a, spec.element(), dtype, false, out, pos);
    }

    static long product(long[] shape) {
        long p = 1;
        for (long d : shape) {
            p = Math.multiplyExact(p, d);
        }
        return p;
    }
}
