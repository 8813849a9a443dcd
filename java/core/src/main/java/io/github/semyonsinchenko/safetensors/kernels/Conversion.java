package io.github.semyonsinchenko.safetensors.kernels;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import java.util.Optional;

/**
 * The element-wise conversions of {@link Kernels}, one per kernel of the native C API. Every path
 * (native, Vector API, scalar Java) gives the same bits for every input; the rules are:
 *
 * <ul>
 *   <li>Widening BF16/F16 to F32 is exact for every bit pattern: sign and NaN payload are kept, a
 *       signalling NaN stays signalling.
 *   <li>{@code _RNE} rounds to nearest, ties to even; {@code _TRUNC} rounds toward zero (for BF16:
 *       keep the top 16 bits of every finite value; for F16 a finite value beyond the range
 *       saturates to +-65504 while infinities stay infinite).
 *   <li>F32 to BF16: a NaN becomes the quiet NaN {@code 0x7FC0}/{@code 0xFFC0} (sign kept), never
 *       an infinity.
 *   <li>F32 to F16: a NaN becomes {@code sign | 0x7E00 | (mantissa >> 13)} (quiet bit set, top
 *       payload bits kept), the F16C hardware rule.
 *   <li>F16 to BF16 and BF16 to F16 widen exactly to F32 and then round once (RNE), so they are
 *       correctly rounded.
 *   <li>Integers and F64 to F32 follow a C {@code (float)} cast in the default rounding mode (and
 *       numpy {@code astype(float32)}): round to nearest even, U64 included; an F64 NaN keeps its
 *       sign and top payload bits and is quieted; an F64 beyond the F32 range becomes +-Inf.
 *   <li>The 8-bit floats widen to F32 exactly, with the values of ml_dtypes ({@code float8_e4m3fn},
 *       {@code float8_e5m2}, {@code float8_e8m0fnu}, {@code float8_e4m3fnuz}, {@code float8_e5m2fnuz}):
 *       F8_E5M2 is the top byte of an F16 and widens like it (infinities stay infinite, a NaN keeps
 *       its sign and payload); the formats without infinities have one NaN pattern per sign
 *       ({@code S.1111.111} for F8_E4M3, {@code 0xFF} for F8_E8M0, {@code 0x80} for the FNUZ
 *       formats), which becomes the quiet NaN {@code 0x7FC00000} with the pattern's sign bit.
 *   <li>F32 to F64 is exact; a NaN keeps its sign and payload (a signalling NaN stays signalling).
 *       I32 and U32 to F64 are exact; I64 and U64 to F64 round to nearest even.
 * </ul>
 *
 * <p>Source bytes are little-endian, as in a safetensors file. The conversions whose
 * {@link #nativeSymbol()} is null (the 8-bit floats and the F64 targets) run on the Java path
 * whatever path {@link Kernels} chose: a table lookup or a cast per element, which the native
 * library would not make faster by much.
 */
public enum Conversion {
    /** BF16 to F32, exact. */
    BF16_TO_F32(Dtype.BF16, Dtype.F32, "st_bf16_to_f32"),
    /** F32 to BF16, round to nearest even; NaN to 0x7FC0 with the sign kept. */
    F32_TO_BF16_RNE(Dtype.F32, Dtype.BF16, "st_f32_to_bf16_rne"),
    /** F32 to BF16, toward zero (top 16 bits); NaN to 0x7FC0 with the sign kept. */
    F32_TO_BF16_TRUNC(Dtype.F32, Dtype.BF16, "st_f32_to_bf16_trunc"),
    /** F16 to F32, exact (a signalling NaN stays signalling). */
    F16_TO_F32(Dtype.F16, Dtype.F32, "st_f16_to_f32"),
    /** F32 to F16, round to nearest even (65520 and up become Inf); NaN to {@code sign | 0x7E00 | (mant >> 13)}. */
    F32_TO_F16_RNE(Dtype.F32, Dtype.F16, "st_f32_to_f16_rne"),
    /** F32 to F16, toward zero (finite overflow saturates to +-65504); NaN to {@code sign | 0x7E00 | (mant >> 13)}. */
    F32_TO_F16_TRUNC(Dtype.F32, Dtype.F16, "st_f32_to_f16_trunc"),
    /** F16 to BF16 through F32, round to nearest even. */
    F16_TO_BF16(Dtype.F16, Dtype.BF16, "st_f16_to_bf16"),
    /** BF16 to F16 through F32, round to nearest even. */
    BF16_TO_F16(Dtype.BF16, Dtype.F16, "st_bf16_to_f16"),
    /** I8 to F32, exact. */
    I8_TO_F32(Dtype.I8, Dtype.F32, "st_i8_to_f32"),
    /** U8 to F32, exact. */
    U8_TO_F32(Dtype.U8, Dtype.F32, "st_u8_to_f32"),
    /** I16 to F32, exact. */
    I16_TO_F32(Dtype.I16, Dtype.F32, "st_i16_to_f32"),
    /** U16 to F32, exact. */
    U16_TO_F32(Dtype.U16, Dtype.F32, "st_u16_to_f32"),
    /** I32 to F32, round to nearest even. */
    I32_TO_F32(Dtype.I32, Dtype.F32, "st_i32_to_f32"),
    /** U32 to F32, round to nearest even. */
    U32_TO_F32(Dtype.U32, Dtype.F32, "st_u32_to_f32"),
    /** I64 to F32, round to nearest even. */
    I64_TO_F32(Dtype.I64, Dtype.F32, "st_i64_to_f32"),
    /** U64 to F32, round to nearest even (correctly rounded over the whole unsigned range). */
    U64_TO_F32(Dtype.U64, Dtype.F32, "st_u64_to_f32"),
    /** F64 to F32, round to nearest even, overflow to +-Inf; a NaN is quieted keeping sign and top payload bits. */
    F64_TO_F32(Dtype.F64, Dtype.F32, "st_f64_to_f32"),
    /** F8_E4M3 ({@code float8_e4m3fn}: bias 7, no infinities) to F32, exact; {@code S.1111.111} is NaN. */
    F8_E4M3_TO_F32(Dtype.F8_E4M3, Dtype.F32, null),
    /** F8_E5M2 (bias 15, with infinities) to F32, exact, as the F16 whose top byte it is. */
    F8_E5M2_TO_F32(Dtype.F8_E5M2, Dtype.F32, null),
    /** F8_E8M0 ({@code float8_e8m0fnu}: unsigned powers of two 2^(e-127)) to F32, exact; {@code 0xFF} is NaN. */
    F8_E8M0_TO_F32(Dtype.F8_E8M0, Dtype.F32, null),
    /** F8_E4M3FNUZ (bias 8, no infinities, no -0) to F32, exact; {@code 0x80} is NaN. */
    F8_E4M3FNUZ_TO_F32(Dtype.F8_E4M3FNUZ, Dtype.F32, null),
    /** F8_E5M2FNUZ (bias 16, no infinities, no -0) to F32, exact; {@code 0x80} is NaN. */
    F8_E5M2FNUZ_TO_F32(Dtype.F8_E5M2FNUZ, Dtype.F32, null),
    /** F32 to F64, exact; a NaN keeps its sign and payload (a signalling NaN stays signalling). */
    F32_TO_F64(Dtype.F32, Dtype.F64, null),
    /** I32 to F64, exact. */
    I32_TO_F64(Dtype.I32, Dtype.F64, null),
    /** U32 to F64, exact. */
    U32_TO_F64(Dtype.U32, Dtype.F64, null),
    /** I64 to F64, round to nearest even. */
    I64_TO_F64(Dtype.I64, Dtype.F64, null),
    /** U64 to F64, round to nearest even (correctly rounded over the whole unsigned range). */
    U64_TO_F64(Dtype.U64, Dtype.F64, null);

    private final Dtype source;
    private final Dtype target;
    private final String symbol;

    Conversion(Dtype source, Dtype target, String symbol) {
        this.source = source;
        this.target = target;
        this.symbol = symbol;
    }

    /** {@return the element type read} */
    public Dtype source() {
        return source;
    }

    /** {@return the element type written} */
    public Dtype target() {
        return target;
    }

    /** {@return bytes per source element} */
    public int sourceBytes() {
        return source.byteSize();
    }

    /** {@return bytes per target element} */
    public int targetBytes() {
        return target.byteSize();
    }

    /**
     * The C function of {@code safetensors_native.h} that implements this conversion, or null when
     * only the Java path implements it (see the class comment).
     *
     * @return the symbol, or null
     */
    public String nativeSymbol() {
        return symbol;
    }

    /** {@return whether the native library has a kernel for this conversion ({@link #nativeSymbol()} is not null)} */
    public boolean hasNativeKernel() {
        return symbol != null;
    }

    /**
     * The conversion of {@code dtype} to F32, if there is a kernel for it (F32 itself has none).
     *
     * @param dtype the source dtype
     * @return the conversion, or empty
     */
    public static Optional<Conversion> toF32(Dtype dtype) {
        return of(dtype, Dtype.F32);
    }

    /**
     * The kernel that widens {@code dtype} to F32 exactly: every value of a dtype of at most 16 bits
     * is an F32 (F16, BF16, the F8 formats, I8, U8, I16, U16). Empty for other dtypes (I32 to F32,
     * for one, rounds).
     *
     * @param dtype the source dtype
     * @return the conversion, or empty
     */
    public static Optional<Conversion> exactToF32(Dtype dtype) {
        return dtype.bits() <= 16 ? toF32(dtype) : Optional.empty();
    }

    /**
     * The kernel from {@code source} to {@code target}: the exact or round-to-nearest-even one, or
     * the round-toward-zero one when {@code truncate} (which exists only for F32 to F16/BF16).
     * Empty when no single kernel does it, e.g. F64 to F16 (two roundings) or BF16 to F64 (widen to
     * F32, then F32 to F64: both exact).
     *
     * @param source the dtype read
     * @param target the dtype written
     * @param truncate round toward zero instead of to nearest even
     * @return the conversion, or empty
     */
    public static Optional<Conversion> of(Dtype source, Dtype target, boolean truncate) {
        for (Conversion c : values()) {
            if (c.source == source && c.target == target && c.name().endsWith("_TRUNC") == truncate) {
                return Optional.of(c);
            }
        }
        return Optional.empty();
    }

    /**
     * {@link #of(Dtype, Dtype, boolean)} without truncation.
     *
     * @param source the dtype read
     * @param target the dtype written
     * @return the conversion, or empty
     */
    public static Optional<Conversion> of(Dtype source, Dtype target) {
        return of(source, target, false);
    }
}
