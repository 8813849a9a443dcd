package io.github.semyonsinchenko.safetensors.format;

import java.util.HashMap;
import java.util.Map;

/**
 * Every element type of the reference implementation (safetensors 0.8), declared in the
 * reference's order. That order is the writer's alignment order: tensors are laid out by
 * descending {@link #ordinal()}, then by name, exactly as the reference writer does.
 *
 * <p>The official JSON schema's dtype pattern {@code ([UIF])(8|16|32|64|128|256)} is unanchored
 * and does not describe this list: BOOL, C64, F4 and the two F6 types do not match it, and BF16 and
 * the F8 types match only because the pattern finds "F16" or "F8" inside them ({@code
 * HeaderSchemaTest} pins this down). We accept what the reference code accepts.
 */
public enum Dtype {
    /** Booleans, one byte each (0 or 1). */
    BOOL(8),
    /** 4-bit float (E2M1, as in MX formats), two elements per byte. */
    F4(4),
    /** 6-bit float with 2 exponent and 3 mantissa bits (MX FP6). */
    F6_E2M3(6),
    /** 6-bit float with 3 exponent and 2 mantissa bits (MX FP6). */
    F6_E3M2(6),
    /** Unsigned 8-bit integer. */
    U8(8),
    /** Signed 8-bit integer. */
    I8(8),
    /** 8-bit float with 5 exponent and 2 mantissa bits (IEEE-like: infinities and NaNs). */
    F8_E5M2(8),
    /** 8-bit float with 4 exponent and 3 mantissa bits (OCP E4M3FN: no infinities; S.1111.111 is NaN). */
    F8_E4M3(8),
    /** 8-bit unsigned power-of-two scale (MX E8M0: exponent only, 0xFF is NaN). */
    F8_E8M0(8),
    /** 8-bit float E4M3 without negative zero or infinities (0x80 is the only NaN). */
    F8_E4M3FNUZ(8),
    /** 8-bit float E5M2 without negative zero or infinities (0x80 is the only NaN). */
    F8_E5M2FNUZ(8),
    /** Signed 16-bit integer. */
    I16(16),
    /** Unsigned 16-bit integer. */
    U16(16),
    /** IEEE 754 half precision. */
    F16(16),
    // The official schema's regex matches BF16 only by accident, finding "F16" inside it (see class comment).
    /** bfloat16: the upper 16 bits of an F32. */
    BF16(16),
    /** Signed 32-bit integer. */
    I32(32),
    /** Unsigned 32-bit integer. */
    U32(32),
    /** IEEE 754 single precision. */
    F32(32),
    /** Complex number of two F32 (real, then imaginary). */
    C64(64),
    /** IEEE 754 double precision. */
    F64(64),
    /** Signed 64-bit integer. */
    I64(64),
    /** Unsigned 64-bit integer. */
    U64(64);

    private static final Map<String, Dtype> BY_NAME = new HashMap<>();

    static {
        for (Dtype d : values()) {
            BY_NAME.put(d.name(), d);
        }
    }

    private final int bits;

    Dtype(int bits) {
        this.bits = bits;
    }

    /** {@return bits per element; 4 and 6 for the sub-byte float formats} */
    public int bits() {
        return bits;
    }

    /** {@return whether an element fills whole bytes, so single elements are addressable} */
    public boolean isByteAligned() {
        return bits % 8 == 0;
    }

    /**
     * {@return bytes per element}
     *
     * @throws UnsupportedOperationException for a sub-byte dtype (not {@link #isByteAligned()})
     */
    public int byteSize() {
        if (!isByteAligned()) {
            throw new UnsupportedOperationException(this + " is " + bits + " bits per element, not whole bytes");
        }
        return bits / 8;
    }

    /**
     * True for the floating-point dtypes: F4, the F6 and F8 formats, F16, BF16, F32 and F64 (not
     * BOOL, the integers or the complex C64).
     *
     * @return whether elements are floating-point numbers
     */
    public boolean isFloatingPoint() {
        return switch (this) {
            case F4, F6_E2M3, F6_E3M2, F8_E5M2, F8_E4M3, F8_E8M0, F8_E4M3FNUZ, F8_E5M2FNUZ, F16, BF16, F32, F64 -> true;
            default -> false;
        };
    }

    /**
     * Looks a dtype up by its header spelling; case-sensitive, as the format is.
     *
     * @param name the name as in a header ("F16", "F8_E4M3", ...)
     * @return the dtype, or null if no dtype is spelled so
     */
    public static Dtype fromName(String name) {
        return BY_NAME.get(name);
    }

    /**
     * Bytes taken by {@code elementCount} elements, with the reference's rules: the bit count must
     * not overflow and must be a whole number of bytes.
     *
     * @param elementCount the number of elements, at least 0
     * @return their size in bytes
     * @throws ArithmeticException if the bit count overflows a long
     * @throws IllegalArgumentException if the bit count is not a multiple of 8
     */
    public long storageBytes(long elementCount) {
        long totalBits = Math.multiplyExact(elementCount, (long) bits);
        if (totalBits % 8 != 0) {
            throw new IllegalArgumentException(elementCount + " elements of " + this + " are " + totalBits
                    + " bits, not a whole number of bytes");
        }
        return totalBits / 8;
    }
}
