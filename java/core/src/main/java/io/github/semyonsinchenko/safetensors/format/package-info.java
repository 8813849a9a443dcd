/**
 * The safetensors format itself: the element types ({@link
 * io.github.semyonsinchenko.safetensors.format.Dtype}), the validated header and its entries
 * ({@link io.github.semyonsinchenko.safetensors.format.Header},
 * {@link io.github.semyonsinchenko.safetensors.format.TensorInfo}), every rule a file must keep,
 * each broken rule a named {@link io.github.semyonsinchenko.safetensors.format.Violation} inside a
 * {@link io.github.semyonsinchenko.safetensors.format.SafetensorsException}, and the format's byte
 * order ({@link io.github.semyonsinchenko.safetensors.format.LittleEndian}). No file access beyond
 * reading a header; readers and writers live in {@code io}.
 */
package io.github.semyonsinchenko.safetensors.format;
