package io.github.semyonsinchenko.safetensors.format;

import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * The value layouts of the format's byte order: safetensors stores every element little-endian,
 * and the modules read and write tensor bytes, database columns and batch buffers through these.
 * Unaligned on purpose: a tensor's data is only byte-aligned in general (the header length decides
 * where it starts), and an unaligned layout spares the hot getters FFM's alignment check.
 */
public final class LittleEndian {
    /** i16 (and u16, f16, bf16 bits) values in memory. */
    public static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    /** i32 (and u32) values in memory. */
    public static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    /** i64 (and u64) values in memory. */
    public static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    /** f32 values in memory. */
    public static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    /** f64 values in memory. */
    public static final ValueLayout.OfDouble F64 = ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /*
     * The same byte order on byte arrays, for writers and readers that buffer values in a byte[]
     * (the sampler database's sections, the preprocessor's exchange blocks): coordinates (byte[],
     * int offset). C2 compiles a view VarHandle to a plain store or load, where a heap
     * MemorySegment's accessor costs more per value.
     */
    /** i32 (and u32) values in a {@code byte[]}. */
    public static final VarHandle I32_IN_BYTES =
            MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);
    /** i64 values in a {@code byte[]}. */
    public static final VarHandle I64_IN_BYTES =
            MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    /** f32 values in a {@code byte[]}. */
    public static final VarHandle F32_IN_BYTES =
            MethodHandles.byteArrayViewVarHandle(float[].class, ByteOrder.LITTLE_ENDIAN);

    /** The format's byte order, for APIs that take a {@link ByteOrder} (e.g. the Vector API's loads and stores). */
    public static final ByteOrder ORDER = ByteOrder.LITTLE_ENDIAN;

    /**
     * Whether this platform's native order is the format's, so that memory holding Java values (heap
     * arrays, Spark's unsafe rows and arrays) already holds them as the format's bytes.
     */
    public static final boolean IS_NATIVE_ORDER = ByteOrder.nativeOrder() == ORDER;

    /**
     * The unaligned little-endian form of any value layout, for copies whose element type varies.
     *
     * @param element a value layout of any order and alignment
     * @return the same carrier, byte-aligned and little-endian
     */
    public static ValueLayout of(ValueLayout element) {
        return element.withByteAlignment(1).withOrder(ORDER);
    }

    private LittleEndian() {}
}
