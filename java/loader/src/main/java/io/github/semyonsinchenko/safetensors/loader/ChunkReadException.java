package io.github.semyonsinchenko.safetensors.loader;

import java.io.IOException;
import java.util.Locale;

/**
 * A chunk could not be read, after every retry: names the file, the byte range and the tensors it
 * holds. None of those tensors was handed out.
 */
public final class ChunkReadException extends IOException {
    private static final long serialVersionUID = 1L;

    private final transient Chunk chunk;

    ChunkReadException(Chunk chunk, int attempts, Throwable cause) {
        super(String.format(Locale.ROOT, "reading %s failed after %d attempt(s): %s", chunk.describe(), attempts,
                cause.getMessage()), cause);
        this.chunk = chunk;
    }

    /** {@return the chunk that failed: file, byte range, tensors} */
    public Chunk chunk() {
        return chunk;
    }
}
