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
    BOOL(8),
    F4(4),
    F6_E2M3(6),
    F6_E3M2(6),
    U8(8),
    I8(8),
    F8_E5M2(8),
    F8_E4M3(8),
    F8_E8M0(8),
    F8_E4M3FNUZ(8),
    F8_E5M2FNUZ(8),
    I16(16),
    U16(16),
    F16(16),
    // The official schema's regex matches BF16 only by accident, finding "F16" inside it (see class comment).
    BF16(16),
    I32(32),
    U32(32),
    F32(32),
    C64(64),
    F64(64),
    I64(64),
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

    /** Bits per element; 4 and 6 for the sub-byte float formats. */
    public int bits() {
        return bits;
    }

    /** True when an element fills whole bytes, so single elements are addressable. */
    public boolean isByteAligned() {
        return bits % 8 == 0;
    }

    /** Bytes per element; only defined for {@link #isByteAligned()} dtypes. */
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

    /** The dtype spelled exactly as in a header ("F16", "F8_E4M3", ...), or null if unknown. */
    public static Dtype fromName(String name) {
        return BY_NAME.get(name);
    }

    /**
     * Bytes taken by {@code elementCount} elements, with the reference's rules: the bit count must
     * not overflow and must be a whole number of bytes.
     *
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
