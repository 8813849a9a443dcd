package io.github.semyonsinchenko.safetensors.io;

import io.github.semyonsinchenko.safetensors.mmap.MappedFiles;

/**
 * What a {@link Tensor} needs from whatever holds its bytes: whether it is still open, a name for
 * messages, and what a failed access means. A {@link SafetensorsFile} (its mapping), a
 * {@link SafetensorsBuffer} (a borrowed image), or {@link #BORROWED} for a tensor made over memory
 * the caller owns ({@link Tensor#of}).
 */
abstract class TensorOwner {
    /** Memory the caller owns: always open as far as we know; the segment's own checks do the rest. */
    static final TensorOwner BORROWED = new TensorOwner() {
        @Override
        void ensureOpen() {
        }

        @Override
        String source() {
            return "<memory>";
        }

        @Override
        RuntimeException accessFailure(Tensor t, Throwable e) {
            return rethrowOrFault(t, e);
        }
    };

    /** Throws {@link IllegalStateException} naming the owner when it was closed. */
    abstract void ensureOpen();

    /** Names the file or image in messages. */
    abstract String source();

    /**
     * What a failed access to {@code t}'s bytes means: a closed owner, a fault on a page lost to a
     * truncation; anything else is rethrown unchanged.
     */
    abstract RuntimeException accessFailure(Tensor t, Throwable e);

    static RuntimeException rethrowOrFault(Tensor t, Throwable e) {
        if (MappedFiles.isMemoryFault(e)) {
            return MappedFiles.faultDuring("reading tensor \"" + t.name() + "\"", e, "tensor", t.rawData());
        }
        if (e instanceof RuntimeException r) {
            return r;
        }
        throw (Error) e;
    }
}
