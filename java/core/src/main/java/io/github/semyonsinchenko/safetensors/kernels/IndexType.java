package io.github.semyonsinchenko.safetensors.kernels;

/** The element type of a gather's index array (little-endian, like every source of {@link Kernels}). */
public enum IndexType {
    /** Unsigned 32-bit indices ({@code int[]} on the heap, read as unsigned). */
    U32(4),
    /** Signed 64-bit indices ({@code long[]} on the heap); a negative index is out of range. */
    I64(8);

    private final int bytes;

    IndexType(int bytes) {
        this.bytes = bytes;
    }

    /** {@return bytes per index} */
    public int bytes() {
        return bytes;
    }
}
