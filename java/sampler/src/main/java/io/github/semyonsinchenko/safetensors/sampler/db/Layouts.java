package io.github.semyonsinchenko.safetensors.sampler.db;

import io.github.semyonsinchenko.safetensors.format.LittleEndian;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The database files' and batch buffers' names for the format's little-endian layouts
 * ({@link LittleEndian}): the spec (§1) speaks of u16/u32 columns, so the sampler code does too.
 */
public final class Layouts {
    private Layouts() {}

    /** An unsigned byte (read it with {@code Byte.toUnsignedInt}). */
    public static final ValueLayout.OfByte U8 = ValueLayout.JAVA_BYTE;
    /** A little-endian u16 (read it with {@code Short.toUnsignedInt}). */
    public static final ValueLayout.OfShort U16 = LittleEndian.I16;
    /** A little-endian u32 (read it with {@link #u32} when it may exceed 2^31 - 1). */
    public static final ValueLayout.OfInt U32 = LittleEndian.I32;
    /** A little-endian f32. */
    public static final ValueLayout.OfFloat F32 = LittleEndian.F32;
    /** A little-endian i64. */
    public static final ValueLayout.OfLong I64 = LittleEndian.I64;

    /**
     * The u32 at {@code offset} of {@code s}, as the unsigned value it is.
     *
     * @param s the memory
     * @param offset the byte offset
     * @return the value, in [0, 2^32)
     */
    public static long u32(MemorySegment s, long offset) {
        return Integer.toUnsignedLong(s.get(U32, offset));
    }
}
