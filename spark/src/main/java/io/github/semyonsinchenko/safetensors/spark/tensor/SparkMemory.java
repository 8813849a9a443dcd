package io.github.semyonsinchenko.safetensors.spark.tensor;

import io.github.semyonsinchenko.safetensors.format.LittleEndian;
import java.lang.foreign.MemorySegment;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeArrayData;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.unsafe.Platform;

/**
 * Segments over Spark's own memory, so tensor bytes are read in place (no temporary heap copy):
 * the elements of an {@link UnsafeArrayData} and the {@code data} field of a Tensor Struct held in
 * an {@link UnsafeRow}. Other representations fall back to a copy.
 */
public final class SparkMemory {
    private SparkMemory() {}

    /**
     * The {@code elementBytes}-wide elements of {@code a} as one segment, without copying: a view when
     * {@code a} is an {@link UnsafeArrayData} (its elements are little-endian, as in a safetensors
     * file, on the little-endian platforms Spark and the kernels run on). Valid only while Spark keeps
     * {@code a}.
     *
     * @param a a Spark array
     * @param elementBytes the width of one element, in bytes
     * @return a view of the elements, or null when {@code a} is another representation (then copy
     *     them)
     */
    public static MemorySegment elements(ArrayData a, int elementBytes) {
        if (!LittleEndian.IS_NATIVE_ORDER || !(a instanceof UnsafeArrayData u)) {
            return null;
        }
        long start = u.getBaseOffset() + UnsafeArrayData.calculateHeaderPortionInBytes(u.numElements());
        return view(u.getBaseObject(), start, (long) u.numElements() * elementBytes);
    }

    /**
     * The Tensor Struct's data bytes: read in place when the struct is an {@link UnsafeRow}, else a
     * copy.
     *
     * @param tensor a Tensor Struct whose {@code data} field is not null
     * @return the bytes, valid while Spark keeps the row
     */
    public static MemorySegment data(InternalRow tensor) {
        if (tensor instanceof UnsafeRow u) {
            long offsetAndSize = u.getLong(TensorStruct.DATA_ORDINAL);
            MemorySegment view = view(u.getBaseObject(), u.getBaseOffset() + (int) (offsetAndSize >> 32),
                    (int) offsetAndSize);
            if (view != null) {
                return view;
            }
        }
        return MemorySegment.ofArray(tensor.getBinary(TensorStruct.DATA_ORDINAL));
    }

    /**
     * The length of the Tensor Struct's data bytes, without copying them.
     *
     * @param tensor a Tensor Struct whose {@code data} field is not null
     * @return the number of data bytes
     */
    public static long dataLength(InternalRow tensor) {
        if (tensor instanceof UnsafeRow u) {
            return (int) u.getLong(TensorStruct.DATA_ORDINAL);
        }
        return tensor.getBinary(TensorStruct.DATA_ORDINAL).length;
    }

    /**
     * The first null element of {@code a}; tensors have none.
     *
     * @param a a Spark array
     * @return its index, or -1 when no element is null
     */
    public static int firstNull(ArrayData a) {
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
}
