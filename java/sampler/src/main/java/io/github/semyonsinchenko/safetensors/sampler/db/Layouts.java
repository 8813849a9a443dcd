package io.github.semyonsinchenko.safetensors.sampler.db;

import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/** Little-endian value layouts for the database files and batch buffers (aligned: see spec §1). */
public final class Layouts {
    private Layouts() {}

    public static final ValueLayout.OfByte U8 = ValueLayout.JAVA_BYTE;
    public static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT.withOrder(ByteOrder.LITTLE_ENDIAN);
    public static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT.withOrder(ByteOrder.LITTLE_ENDIAN);
    public static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT.withOrder(ByteOrder.LITTLE_ENDIAN);
    public static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG.withOrder(ByteOrder.LITTLE_ENDIAN);
    public static final ValueLayout.OfShort U16_UNALIGNED = U16.withByteAlignment(1);
    public static final ValueLayout.OfInt U32_UNALIGNED = U32.withByteAlignment(1);
    public static final ValueLayout.OfLong I64_UNALIGNED = I64.withByteAlignment(1);
}
