package io.github.semyonsinchenko.safetensors.spark.dataset;

import java.io.Serial;
import java.io.Serializable;
import java.util.Arrays;

/** A column's per-sample dtype and shape (batch mode: without the batch dimension). */
public record ColumnSchema(String dtype, long[] shape) implements Serializable {
    @Serial
    private static final long serialVersionUID = 1L;

    public boolean sameAs(ColumnSchema o) {
        return dtype.equals(o.dtype) && Arrays.equals(shape, o.shape);
    }

    @Override
    public String toString() {
        return dtype + " " + Arrays.toString(shape);
    }
}
