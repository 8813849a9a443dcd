package io.github.semyonsinchenko.safetensors.dataset;

import java.io.Serial;
import java.io.Serializable;
import java.util.Arrays;

/**
 * A column's per-sample dtype and shape (batch mode: without the batch dimension).
 *
 * @param dtype the safetensors dtype name
 * @param shape null when the rows of a column have different shapes (kv: each row is its own
 *     tensor; batch: rows of each shape are batched apart)
 */
public record ColumnSchema(String dtype, long[] shape) implements Serializable {
    @Serial
    private static final long serialVersionUID = 1L;

    /**
     * Whether dtype and shape are equal.
     *
     * @param o another column's schema
     * @return whether dtype and shape are equal
     */
    public boolean sameAs(ColumnSchema o) {
        return dtype.equals(o.dtype) && Arrays.equals(shape, o.shape);
    }

    /**
     * The schema of a column holding rows of both (kv, or batch, whose rows of each shape are batched
     * apart): the dtype must agree, differing shapes give no shape.
     *
     * @param o the schema of more rows of the same column (same dtype)
     * @return the merged schema
     */
    public ColumnSchema mergeKv(ColumnSchema o) {
        return Arrays.equals(shape, o.shape) ? this : new ColumnSchema(dtype, null);
    }

    @Override
    public String toString() {
        return dtype + " " + (shape == null ? "(shapes vary)" : Arrays.toString(shape));
    }
}
