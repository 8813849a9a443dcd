package io.github.semyonsinchenko.safetensors.sampler.db;

import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Little-endian value layouts for the database files and batch buffers. Byte-aligned on purpose:
 * every offset the format produces is naturally aligned anyway (spec §1), and an unaligned layout
 * spares the hot path the per-access alignment check.
 */
public final class Layouts {
    private Layouts() {}

    public static final ValueLayout.OfByte U8 = ValueLayout.JAVA_BYTE;
    public static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    public static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    public static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    public static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
}
