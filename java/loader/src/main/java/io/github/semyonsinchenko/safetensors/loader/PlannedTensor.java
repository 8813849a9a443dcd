package io.github.semyonsinchenko.safetensors.loader;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.format.TensorInfo;
import io.github.semyonsinchenko.safetensors.io.SliceLayout;
import java.util.List;

/**
 * A tensor as the plan places it: its header entry, the slice of it to load, and where the bytes
 * of that slice land in its chunk's buffer.
 *
 * @param info the header entry (name, dtype, shape)
 * @param slice the slice to load and its byte runs ({@link SliceLayout#isWhole()} for a whole tensor)
 * @param fileOffset absolute offset of the tensor's first byte in the file
 * @param parts the slice's runs, merged as they are read, each with where it lands in the chunk's
 *     buffer; in order, none for an empty slice
 */
public record PlannedTensor(TensorInfo info, SliceLayout slice, long fileOffset, List<Part> parts) {
    /** Copies the parts. */
    public PlannedTensor {
        parts = List.copyOf(parts);
    }

    /**
     * Runs {@code [firstRun, firstRun + runs)} of the slice, bytes {@code [tensorOffset,
     * tensorOffset + length)} of the tensor, read to {@code bufferOffset} of the chunk's buffer.
     *
     * @param firstRun the first run's index in the slice's layout
     * @param runs how many runs
     * @param tensorOffset the first run's offset in the tensor
     * @param length bytes from the first run's start to the last run's end (gaps included)
     * @param bufferOffset where {@code tensorOffset} lands in the chunk's buffer
     */
    public record Part(long firstRun, long runs, long tensorOffset, long length, long bufferOffset) {
    }

    /** {@return the tensor's name} */
    public String name() {
        return info.name();
    }

    /** {@return the tensor's dtype} */
    public Dtype dtype() {
        return info.dtype();
    }

    /** {@return bytes handed out: the slice's, in the stored dtype (the whole tensor's when not sliced)} */
    public long byteSize() {
        return slice.byteSize();
    }

    /** {@return where the slice's first byte lands in the chunk's buffer (0 for an empty slice)} */
    public long offsetInChunk() {
        return parts.isEmpty() ? 0 : parts.getFirst().bufferOffset();
    }

    /** {@return whether the slice's bytes sit in the buffer as one run, so it is handed out without a copy} */
    public boolean isContiguousInChunk() {
        return slice.isContiguous();
    }
}
