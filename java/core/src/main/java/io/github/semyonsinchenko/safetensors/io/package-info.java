/**
 * Reading and writing safetensors files and images: a memory-mapped file
 * ({@link io.github.semyonsinchenko.safetensors.io.SafetensorsFile}), an image already in memory
 * ({@link io.github.semyonsinchenko.safetensors.io.SafetensorsBuffer}), the streaming, atomic
 * writer ({@link io.github.semyonsinchenko.safetensors.io.SafetensorsWriter}), one-call load and save
 * ({@link io.github.semyonsinchenko.safetensors.io.Safetensors}), the tensors they hand out with
 * their slices and conversions ({@link io.github.semyonsinchenko.safetensors.io.Tensor},
 * {@link io.github.semyonsinchenko.safetensors.io.Slice}), name patterns, and the retry policy of
 * remote reads.
 */
package io.github.semyonsinchenko.safetensors.io;
