package io.github.semyonsinchenko.safetensors.format;

import java.util.Arrays;

/**
 * One validated header entry. Offsets are relative to the start of the data section, as in the
 * file. Instances are immutable; {@link #shape()} returns a copy.
 */
public final class TensorInfo {
    private final String name;
    private final Dtype dtype;
    private final long[] shape;
    private final long begin;
    private final long end;
    private final long elementCount;

    TensorInfo(String name, Dtype dtype, long[] shape, long begin, long end, long elementCount) {
        this.name = name;
        this.dtype = dtype;
        this.shape = shape;
        this.begin = begin;
        this.end = end;
        this.elementCount = elementCount;
    }

    /**
     * The entry of a tensor held on its own (not in a file): offsets 0 to its byte size. Checked by
     * the format's rules for shapes and sizes.
     *
     * @param name the tensor's name
     * @param dtype its element type
     * @param shape its shape
     * @return the entry
     * @throws IllegalArgumentException if a dimension is negative or above 2^48-1, the element count
     *     overflows, or the size is not a whole number of bytes
     */
    public static TensorInfo of(String name, Dtype dtype, long[] shape) {
        java.util.Objects.requireNonNull(name, "name");
        java.util.Objects.requireNonNull(dtype, "dtype");
        long[] dims = shape.clone();
        try {
            long count = HeaderRules.elementCount(name, dims, "<memory>");
            long bytes = HeaderRules.storageBytes(name, dtype, dims, count, "<memory>");
            return new TensorInfo(name, dtype, dims, 0, bytes, count);
        } catch (SafetensorsException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
    }

    /** {@return the tensor's name (its key in the header)} */
    public String name() {
        return name;
    }

    /** {@return the element type} */
    public Dtype dtype() {
        return dtype;
    }

    /** {@return a copy of the shape; {@code []} for a scalar} */
    public long[] shape() {
        return shape.clone();
    }

    /** {@return the number of dimensions (0 for a scalar)} */
    public int rank() {
        return shape.length;
    }

    /**
     * Size of dimension {@code i}.
     *
     * @param i the dimension
     * @return its size
     */
    public long dim(int i) {
        return shape[i];
    }

    /** {@return product of the shape (1 for a scalar, 0 for an empty tensor)} */
    public long elementCount() {
        return elementCount;
    }

    /** {@return start of the tensor's bytes, relative to the data section} */
    public long begin() {
        return begin;
    }

    /** {@return one past the end of the tensor's bytes, relative to the data section} */
    public long end() {
        return end;
    }

    /** {@return bytes of data: {@code end() - begin()}} */
    public long byteSize() {
        return end - begin;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TensorInfo t && name.equals(t.name) && dtype == t.dtype
                && Arrays.equals(shape, t.shape) && begin == t.begin && end == t.end;
    }

    @Override
    public int hashCode() {
        return name.hashCode() * 31 + Arrays.hashCode(shape);
    }

    @Override
    public String toString() {
        return name + ": " + dtype + " " + Arrays.toString(shape) + " @ [" + begin + ", " + end + ")";
    }
}
