/**
 * Tensors in Spark's terms: the Tensor Struct type
 * ({@link io.github.semyonsinchenko.safetensors.spark.tensor.TensorStruct}), the numeric array
 * element types, the one encoding of numbers into tensor bytes shared by the writer and the SQL
 * functions, and views of Spark's own memory that let tensor bytes be read in place.
 */
package io.github.semyonsinchenko.safetensors.spark.tensor;
