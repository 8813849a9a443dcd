package io.github.semyonsinchenko.safetensors.loader;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.format.TensorInfo;

/**
 * A tensor as the plan places it: its header entry and where its bytes sit in the file and in its
 * chunk.
 *
 * @param info the header entry (name, dtype, shape)
 * @param fileOffset absolute offset of the first byte in the file
 * @param offsetInChunk offset of the first byte within the chunk's buffer
 */
public record PlannedTensor(TensorInfo info, long fileOffset, long offsetInChunk) {
    public String name() {
        return info.name();
    }

    public Dtype dtype() {
        return info.dtype();
    }

    public long byteSize() {
        return info.byteSize();
    }
}
