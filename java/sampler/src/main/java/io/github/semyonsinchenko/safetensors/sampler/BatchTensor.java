package io.github.semyonsinchenko.safetensors.sampler;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * One output tensor of a {@link Batch}: its dict key, dtype, shape and little-endian bytes (a
 * read-only view of the batch's buffer, valid until the batch is closed).
 *
 * @param name the dict key, e.g. {@link Batch#FK_ADJ}
 * @param dtype the element type
 * @param shape the dimensions (copied in and out)
 * @param data the bytes, little-endian
 */
public record BatchTensor(String name, Dtype dtype, long[] shape, MemorySegment data) {
    /** Copies the shape. */
    public BatchTensor {
        shape = shape.clone();
    }

    /**
     * The dimensions.
     *
     * @return a copy of the shape
     */
    @Override
    public long[] shape() {
        return shape.clone();
    }

    /**
     * The number of elements, the product of the dimensions.
     *
     * @return the element count (1 for a scalar shape)
     */
    public long elementCount() {
        long n = 1;
        for (long d : shape) {
            n *= d;
        }
        return n;
    }

    @Override
    public String toString() {
        return name + " " + dtype + " " + Arrays.toString(shape);
    }
}
