/**
 * Chunked, coalesced loading of safetensors checkpoints from any Hadoop {@code FileSystem}: one
 * metadata pass over the headers, a deterministic plan of large contiguous chunks, few large ranged
 * reads into off-heap memory, and tensors handed out as read-only slices.
 */
package io.github.semyonsinchenko.safetensors.loader;
