package io.github.semyonsinchenko.safetensors.loader;

import io.github.semyonsinchenko.safetensors.io.RetryFailedException;
import java.io.IOException;

/**
 * A chunk could not be read, after every retry: names the file, the byte range and the tensors it
 * holds, how many attempts were made and the last error. None of those tensors was handed out.
 */
public final class ChunkReadException extends IOException {
    private static final long serialVersionUID = 1L;

    private final transient Chunk chunk;
    /** Requests made for the failed range; 0 when it failed before any. */
    private final int attempts;

    /** The retries of one of the chunk's requests were exhausted. */
    ChunkReadException(Chunk chunk, RetryFailedException failure) {
        super(failure.getMessage(), failure.getCause());
        this.chunk = chunk;
        this.attempts = failure.attempts();
    }

    /** The chunk failed otherwise (its memory could not be allocated, the read was cancelled). */
    ChunkReadException(Chunk chunk, Throwable cause) {
        super("reading " + chunk.describe() + " failed: " + cause, cause);
        this.chunk = chunk;
        this.attempts = 0;
    }

    /** {@code failure} again, with the stack of the thread that rethrows it (the consumer's); same message. */
    ChunkReadException(ChunkReadException failure) {
        super(failure.getMessage(), failure);
        this.chunk = failure.chunk;
        this.attempts = failure.attempts;
    }

    /** {@return the chunk that failed: file, byte range, tensors} */
    public Chunk chunk() {
        return chunk;
    }

    /** {@return the requests made for the range that failed, the last one included; 0 when it failed before any} */
    public int attempts() {
        return attempts;
    }
}
