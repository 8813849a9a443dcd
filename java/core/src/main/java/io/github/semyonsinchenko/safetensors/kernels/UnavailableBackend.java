package io.github.semyonsinchenko.safetensors.kernels;

import java.lang.foreign.MemorySegment;

/**
 * Stands in when {@code -Dsafetensors.kernels} asks for a path this JVM cannot run (or names no
 * path): every use throws the same {@link IllegalStateException}, instead of silently running
 * another path.
 */
final class UnavailableBackend extends Backend {
    private final String message;

    UnavailableBackend(String message) {
        this.message = message;
    }

    String message() {
        return message;
    }

    private IllegalStateException failure() {
        return new IllegalStateException(message);
    }

    @Override
    void ensureUsable() {
        throw failure();
    }

    @Override
    Implementation implementation() {
        throw failure();
    }

    @Override
    String describe() {
        return "UNAVAILABLE: " + message;
    }

    @Override
    void convert(Conversion c, MemorySegment src, MemorySegment dst, long n) {
        throw failure();
    }

    @Override
    void gather(MemorySegment table, long nRows, long rowBytes, MemorySegment indices, IndexType type, long nIdx,
            MemorySegment dst) {
        throw failure();
    }

    @Override
    void gatherConvert(Conversion c, MemorySegment table, long nRows, long rowElems, MemorySegment indices,
            IndexType type, long nIdx, MemorySegment dst) {
        throw failure();
    }
}
