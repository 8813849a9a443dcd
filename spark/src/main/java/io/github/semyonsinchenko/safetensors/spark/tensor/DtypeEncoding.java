package io.github.semyonsinchenko.safetensors.spark.tensor;

import static io.github.semyonsinchenko.safetensors.format.LittleEndian.F32;
import static io.github.semyonsinchenko.safetensors.format.LittleEndian.F64;
import static io.github.semyonsinchenko.safetensors.format.LittleEndian.I16;
import static io.github.semyonsinchenko.safetensors.format.LittleEndian.I32;
import static io.github.semyonsinchenko.safetensors.format.LittleEndian.I64;
import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.kernels.Conversion;
import io.github.semyonsinchenko.safetensors.kernels.Kernels;
import io.github.semyonsinchenko.safetensors.kernels.Narrowing;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Locale;
import org.apache.spark.sql.catalyst.util.ArrayData;

/**
 * The one encoding of numbers into tensor bytes, shared by the writer's {@code dtype} option and
 * the SQL functions ({@code arr_to_st}, {@code st_convert}), so both give the same bits:
 *
 * <ul>
 *   <li>a flat Spark array of any {@link ElementType} to any float or integer dtype
 *       ({@link #encode}): F32/F16/BF16 results and F64 to F32 come from the {@link Kernels} in
 *       bulk, straight from Spark's array memory; integers go to integer dtypes exactly
 *       (range-checked, never wrapped); doubles and longs narrow to 16-bit floats with one rounding
 *       (the kernels' {@link Narrowing} rules);
 *   <li>tensor bytes of one float dtype to another ({@link #convertFloats}): kernels where one
 *       exists, else widen exactly and round once.
 * </ul>
 *
 * Rounding is to nearest even, or toward zero when {@code truncate}. A value that does not fit is
 * an {@link IllegalArgumentException} with the detail only; callers add where it came from.
 */
public final class DtypeEncoding {
    static final ValueLayout.OfByte I8 = ValueLayout.JAVA_BYTE;

    private DtypeEncoding() {}

    /**
     * Whether {@link #convertFloats} converts from or to {@code d}: the floats of 16 bits and more
     * (F16, BF16, F32, F64).
     *
     * @param d a dtype
     * @return true for F16, BF16, F32 and F64
     */
    public static boolean isConvertibleFloat(Dtype d) {
        return d.isFloatingPoint() && d.bits() >= 16;
    }

    // ------------------------------------------------------------------ numeric arrays

    /**
     * Writes the elements of the flat array {@code a} as {@code target} into {@code out} at
     * {@code pos}. A float element type needs a float target.
     *
     * @param a the array; no element may be null (the caller checks)
     * @param e the array's element type
     * @param target the dtype written
     * @param truncate true to round toward zero, false to round to nearest even
     * @param out the destination, with room for {@code a}'s elements in {@code target}
     * @param pos the byte offset in {@code out} to write at
     * @return the offset after the written bytes
     * @throws IllegalArgumentException with the detail only, when an integer does not fit an integer
     *     {@code target}
     */
    public static long encode(ArrayData a, ElementType e, Dtype target, boolean truncate, MemorySegment out,
            long pos) {
        int n = a.numElements();
        MemorySegment src = SparkMemory.elements(a, e.natural.byteSize());
        if (src == null) {
            src = copy(a, e);
        }
        long bytes = target.storageBytes(n);
        encode(src, e, target, truncate, out.asSlice(pos, bytes), n);
        return pos + bytes;
    }

    /** A generic (non-Unsafe) array's elements in a heap array: one copy, then the same bulk path. */
    private static MemorySegment copy(ArrayData a, ElementType e) {
        return switch (e) {
            case BYTE -> MemorySegment.ofArray(a.toByteArray());
            case SHORT -> MemorySegment.ofArray(a.toShortArray());
            case INT -> MemorySegment.ofArray(a.toIntArray());
            case LONG -> MemorySegment.ofArray(a.toLongArray());
            case FLOAT -> MemorySegment.ofArray(a.toFloatArray());
            case DOUBLE -> MemorySegment.ofArray(a.toDoubleArray());
        };
    }

    /** {@code n} little-endian elements of type {@code e} in {@code src} to {@code target} in {@code dst}. */
    static void encode(MemorySegment src, ElementType e, Dtype target, boolean truncate, MemorySegment dst, int n) {
        if (target == e.natural) {
            MemorySegment.copy(src, 0, dst, 0, (long) n * target.byteSize());
            return;
        }
        switch (e) {
            case FLOAT -> fromFloats(src, target, truncate, dst, n);
            case DOUBLE -> fromDoubles(src, target, truncate, dst, n);
            default -> fromIntegers(src, e, target, truncate, dst, n);
        }
    }

    private static void fromFloats(MemorySegment src, Dtype target, boolean truncate, MemorySegment dst, long n) {
        switch (target) {
            case F32 -> MemorySegment.copy(src, 0, dst, 0, n * 4);
            case F64 -> {
                for (long i = 0; i < n; i++) {
                    dst.set(F64, i * 8, src.get(F32, i * 4));
                }
            }
            case F16, BF16 -> Kernels.convert(Conversion.of(Dtype.F32, target, truncate).orElseThrow(), src, dst, n);
            default -> throw new IllegalStateException("floats to " + target);
        }
    }

    private static void fromDoubles(MemorySegment src, Dtype target, boolean truncate, MemorySegment dst, long n) {
        switch (target) {
            case F64 -> MemorySegment.copy(src, 0, dst, 0, n * 8);
            case F32 -> {
                if (truncate) {
                    for (long i = 0; i < n; i++) {
                        dst.set(F32, i * 4, Narrowing.towardZero(src.get(F64, i * 8)));
                    }
                } else {
                    Kernels.convert(Conversion.F64_TO_F32, src, dst, n);
                }
            }
            case F16, BF16 -> {
                Conversion c = Conversion.of(Dtype.F32, target, truncate).orElseThrow();
                for (long i = 0; i < n; i++) {
                    dst.set(I16, i * 2, Narrowing.toHalfBits(c, src.get(F64, i * 8)));
                }
            }
            default -> throw new IllegalStateException("doubles to " + target);
        }
    }

    /** Integers go to integer dtypes exactly (range-checked, never wrapped), to float dtypes rounded once. */
    private static void fromIntegers(MemorySegment src, ElementType e, Dtype target, boolean truncate,
            MemorySegment dst, int n) {
        Conversion c = target == Dtype.F16 || target == Dtype.BF16
                ? Conversion.of(Dtype.F32, target, truncate).orElseThrow() : null;
        int width = target.byteSize();
        for (int i = 0; i < n; i++) {
            long v = switch (e) {
                case BYTE -> src.get(I8, i);
                case SHORT -> src.get(I16, i * 2L);
                case INT -> src.get(I32, i * 4L);
                case LONG -> src.get(I64, i * 8L);
                default -> throw new IllegalStateException(e + " is not an integer type");
            };
            long at = (long) i * width;
            switch (target) {
                case I8 -> dst.set(I8, at, (byte) range(v, Byte.MIN_VALUE, Byte.MAX_VALUE, target));
                case U8 -> dst.set(I8, at, (byte) range(v, 0, 0xFF, target));
                case I16 -> dst.set(I16, at, (short) range(v, Short.MIN_VALUE, Short.MAX_VALUE, target));
                case U16 -> dst.set(I16, at, (short) range(v, 0, 0xFFFF, target));
                case I32 -> dst.set(I32, at, (int) range(v, Integer.MIN_VALUE, Integer.MAX_VALUE, target));
                case U32 -> dst.set(I32, at, (int) range(v, 0, 0xFFFF_FFFFL, target));
                case I64 -> dst.set(I64, at, v);
                case U64 -> dst.set(I64, at, range(v, 0, Long.MAX_VALUE, target));
                case F64 -> dst.set(F64, at, (double) v);
                case F32 -> dst.set(F32, at, truncate ? Narrowing.towardZero(Narrowing.roundToOdd(v)) : (float) v);
                case F16, BF16 -> dst.set(I16, at, Narrowing.toHalfBits(c, Narrowing.roundToOdd(v)));
                default -> throw new IllegalStateException("integers to " + target);
            }
        }
    }

    private static long range(long v, long min, long max, Dtype target) {
        if (v < min || v > max) {
            throw new IllegalArgumentException(String.format(Locale.ROOT,
                    "value %d does not fit %s [%d, %d]; integers are never wrapped or clamped", v, target, min, max));
        }
        return v;
    }

    // ------------------------------------------------------------------ float tensor bytes

    /**
     * Converts {@code src}, a whole number of {@code from} elements, to {@code to} in {@code dst};
     * both are float dtypes. Widening is exact; narrowing rounds once.
     *
     * @param src the source bytes, little-endian
     * @param from the source dtype, one of {@link #isConvertibleFloat}
     * @param dst the destination, with room for as many {@code to} elements
     * @param to the destination dtype, one of {@link #isConvertibleFloat}
     * @param truncate true to round toward zero, false to round to nearest even
     */
    public static void convertFloats(MemorySegment src, Dtype from, MemorySegment dst, Dtype to, boolean truncate) {
        long n = src.byteSize() / from.byteSize();
        if (from == to) {
            MemorySegment.copy(src, 0, dst, 0, src.byteSize());
        } else if (from == Dtype.F64) {
            fromDoubles(src, to, truncate, dst, n);
        } else if (from == Dtype.F32) {
            fromFloats(src, to, truncate, dst, n);
        } else {
            // F16 or BF16: to F32 or to the other 16-bit format directly when a kernel does it in one
            // rounding; otherwise widen exactly to F32 first.
            Conversion direct = Conversion.of(from, to, truncate).orElse(null);
            if (direct != null) {
                Kernels.convert(direct, src, dst, n);
            } else if (to == Dtype.F64) {
                Conversion widen = Conversion.toF32(from).orElseThrow();
                for (long i = 0; i < n; i++) {
                    int bits = (int) Kernels.convertBits(widen, src.get(I16, i * 2));
                    dst.set(F64, i * 8, Float.intBitsToFloat(bits));
                }
            } else {
                float[] wide = new float[Math.toIntExact(n)];
                Kernels.convert(Conversion.toF32(from).orElseThrow(), src, MemorySegment.ofArray(wide), n);
                fromFloats(MemorySegment.ofArray(wide), to, truncate, dst, n);
            }
        }
    }
}
