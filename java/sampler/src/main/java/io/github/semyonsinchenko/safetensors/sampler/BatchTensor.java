package io.github.semyonsinchenko.safetensors.sampler;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * One output tensor of a {@link Batch}: its dict key, dtype, shape and little-endian bytes (a
 * read-only view of the batch's buffer, valid until the batch is closed).
 */
public record BatchTensor(String name, Dtype dtype, long[] shape, MemorySegment data) {
    public BatchTensor {
        shape = shape.clone();
    }

    @Override
    public long[] shape() {
        return shape.clone();
    }

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
