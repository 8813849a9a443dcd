package io.github.semyonsinchenko.safetensors.io;

import java.util.Arrays;
import java.util.Locale;

/**
 * A {@link Slice} index outside its tensor's dimension: a start, stop or index past the dimension
 * (after counting negative values from the end), or a stop before its start. Names the tensor, the
 * dimension, its size and the index, e.g. {@code tensor "w" [4096, 4096]: dimension 1 (size 4096):
 * 0:5000 stops past the end}.
 */
public final class SliceOutOfBoundsException extends IndexOutOfBoundsException {
    private static final long serialVersionUID = 1L;

    /** The tensor's name. */
    private final String tensor;
    /** The dimension out of bounds. */
    private final int dimension;
    /** Its size. */
    private final long dimensionSize;
    /** The index as written. */
    private final String index;

    SliceOutOfBoundsException(String tensor, long[] shape, int dimension, Slice.Index index, String problem) {
        super(String.format(Locale.ROOT, "tensor \"%s\" %s: dimension %d (size %d): %s %s", tensor,
                Arrays.toString(shape), dimension, shape[dimension], index, problem));
        this.tensor = tensor;
        this.dimension = dimension;
        this.dimensionSize = shape[dimension];
        this.index = index.toString();
    }

    /** {@return the tensor's name} */
    public String tensor() {
        return tensor;
    }

    /** {@return the dimension (0 is the first) whose index is out of bounds} */
    public int dimension() {
        return dimension;
    }

    /** {@return that dimension's size} */
    public long dimensionSize() {
        return dimensionSize;
    }

    /** {@return the index as written in a slice, e.g. {@code 0:5000} or {@code -7}} */
    public String index() {
        return index;
    }
}
