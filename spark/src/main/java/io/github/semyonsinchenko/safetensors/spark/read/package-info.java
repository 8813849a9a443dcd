/**
 * The read side of {@code format("safetensors")}: on the driver, a dataset (or loose files) resolved
 * into a schema and a list of files, and filters on {@code tensor_key}, tensor presence, dtype or
 * shape pushed down to be decided from headers and the tensor index; on executors, tensors read as
 * Tensor Structs with coalesced ranged reads.
 */
package io.github.semyonsinchenko.safetensors.spark.read;
