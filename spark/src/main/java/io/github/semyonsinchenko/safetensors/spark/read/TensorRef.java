package io.github.semyonsinchenko.safetensors.spark.read;

import io.github.semyonsinchenko.safetensors.format.TensorInfo;

/**
 * One cell of a row: a whole tensor, or (with {@code unbatch}) one sample of it.
 *
 * @param info the tensor in the file
 * @param offset where the cell's bytes start, relative to the tensor's first byte
 * @param length the cell's byte count
 * @param shape the cell's shape (the tensor's, or the tensor's without its leading dimension)
 */
record TensorRef(TensorInfo info, long offset, long length, int[] shape) {
    String dtype() {
        return info.dtype().name();
    }
}
