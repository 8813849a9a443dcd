package io.github.semyonsinchenko.safetensors.spark.write;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.spark.tensor.ElementType;
import java.io.Serial;
import java.io.Serializable;

/**
 * How one DataFrame column becomes tensors: where it is in the row, what kind of value it holds
 * and which dtype and per-sample shape the tensors get (both may come from the data instead).
 *
 * @param name        the column name (also the tensor name's column part)
 * @param ordinal     the column's position in the written rows
 * @param kind        Tensor Struct or (possibly nested) numeric array
 * @param element     the array's element type; null for Tensor Struct
 * @param depth       array nesting depth (1 for {@code array<float>}); 0 for Tensor Struct
 * @param dtype       target dtype; null means "the struct's own dtype"
 * @param fixedShape  per-sample shape from the {@code shapes} option; null means "from the data"
 */
record ColumnSpec(String name, int ordinal, Kind kind, ElementType element, int depth, Dtype dtype, long[] fixedShape)
        implements Serializable {
    @Serial
    private static final long serialVersionUID = 1L;

    enum Kind { TENSOR_STRUCT, NUMERIC_ARRAY }
}
