package io.github.semyonsinchenko.safetensors.kernels;

import java.lang.foreign.MemorySegment;

/**
 * One implementation of the kernels. {@link Kernels} has checked every argument before calling
 * one of these methods: counts are positive, segments are sliced to exactly the bytes the call
 * reads or writes, the destination is writable and overlaps no source, and every gather index is
 * in {@code [0, nRows)}.
 */
abstract class Backend {
    abstract Implementation implementation();

    /** Throws when this path cannot run at all (see {@link UnavailableBackend}); checked before anything else. */
    void ensureUsable() {}

    /** {@code src} holds {@code n} source elements, {@code dst} room for {@code n} target elements. */
    abstract void convert(Conversion c, MemorySegment src, MemorySegment dst, long n);

    /** {@code table} is {@code nRows * rowBytes} bytes, {@code dst} is {@code nIdx * rowBytes} bytes. */
    abstract void gather(MemorySegment table, long nRows, long rowBytes, MemorySegment indices, IndexType type,
            long nIdx, MemorySegment dst);

    /**
     * {@code c} is {@link Conversion#F16_TO_F32} or {@link Conversion#BF16_TO_F32}; {@code table} is
     * {@code nRows * rowElems} 16-bit values, {@code dst} is {@code nIdx * rowElems} floats.
     */
    abstract void gatherConvert(Conversion c, MemorySegment table, long nRows, long rowElems, MemorySegment indices,
            IndexType type, long nIdx, MemorySegment dst);

    /**
     * Called by {@link Kernels} right after a call, inside its fault handling: the Java paths make
     * the JDK raise a pending memory-fault error now (see {@link io.github.semyonsinchenko.safetensors.mmap.MappedFiles#raisePendingFault}).
     */
    void afterCall() {}

    /** A short description for logs and diagnostics. */
    String describe() {
        return implementation().name();
    }
}
