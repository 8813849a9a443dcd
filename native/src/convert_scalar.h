/*
 * Per-element conversions on raw bits, integer-only so the result never depends
 * on MXCSR/FPCR (rounding mode, FTZ, DAZ) or on how a CPU treats NaNs. They
 * define the rules of safetensors_native.h; the scalar kernels are loops over
 * them and the SIMD kernels use them for their tails.
 */
#ifndef STN_CONVERT_SCALAR_H
#define STN_CONVERT_SCALAR_H

#include <stdint.h>
#include <string.h>

/* Bits of src[i] without loading it as a float (an x87 load would quiet SNaN). */
static inline uint32_t stn_load_f32_bits(const float *p)
{
    uint32_t u;
    memcpy(&u, p, sizeof u);
    return u;
}

static inline void stn_store_f32_bits(float *p, uint32_t u)
{
    memcpy(p, &u, sizeof u);
}

static inline uint32_t stn_bf16_to_f32_bits(uint16_t h)
{
    return (uint32_t)h << 16;
}

/* Exact for every pattern; a NaN keeps sign and payload (SNaN stays SNaN). */
static inline uint32_t stn_f16_to_f32_bits(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1Fu;
    uint32_t mant = h & 0x3FFu;

    if (exp == 0x1F) /* Inf or NaN */
        return sign | 0x7F800000u | (mant << 13);
    if (exp != 0) /* normal: rebias 15 -> 127 */
        return sign | ((exp + 112u) << 23) | (mant << 13);
    if (mant == 0)
        return sign;
    /* subnormal m * 2^-24: shift the leading 1 up to the implicit-bit position */
    int e = -14;
    while ((mant & 0x400u) == 0) {
        mant <<= 1;
        e--;
    }
    return sign | ((uint32_t)(e + 127) << 23) | ((mant & 0x3FFu) << 13);
}

static inline int stn_f32_bits_is_nan(uint32_t u)
{
    return (u & 0x7FFFFFFFu) > 0x7F800000u;
}

/* NaN -> canonical quiet NaN 0x7FC0 with the sign kept. */
static inline uint16_t stn_bf16_nan(uint32_t u)
{
    return (uint16_t)(((u >> 16) & 0x8000u) | 0x7FC0u);
}

static inline uint16_t stn_f32_to_bf16_rne_bits(uint32_t u)
{
    if (stn_f32_bits_is_nan(u))
        return stn_bf16_nan(u);
    /* add just under half an ulp, plus 1 if the kept lsb is odd: ties go to even;
       a carry into the exponent is the correct round-up (up to Inf). */
    return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

static inline uint16_t stn_f32_to_bf16_trunc_bits(uint32_t u)
{
    if (stn_f32_bits_is_nan(u))
        return stn_bf16_nan(u);
    return (uint16_t)(u >> 16);
}

/* NaN -> sign | 0x7E00 | top 9 payload bits (the F16C rule). */
static inline uint16_t stn_f16_nan(uint32_t u)
{
    return (uint16_t)(((u >> 16) & 0x8000u) | 0x7E00u | ((u >> 13) & 0x3FFu));
}

/* |x| < 2^-14 (F16 subnormal or zero): shift the 24-bit significand right to
   units of 2^-24, rounding to nearest even (rne) or toward zero. */
static inline uint16_t stn_f16_tiny(uint32_t a, int rne)
{
    uint32_t e = a >> 23; /* biased F32 exponent, <= 112 here */
    if (e < 102)          /* |x| < 2^-25: below half the smallest subnormal */
        return 0;
    uint32_t m = (a & 0x7FFFFFu) | 0x800000u;
    uint32_t shift = 126u - e; /* 14..24 */
    uint32_t q = m >> shift;
    if (rne) {
        uint32_t rem = m & ((1u << shift) - 1u);
        uint32_t half = 1u << (shift - 1u);
        if (rem > half || (rem == half && (q & 1u)))
            q++; /* may become 0x400, the smallest normal: still the right bits */
    }
    return (uint16_t)q;
}

static inline uint16_t stn_f32_to_f16_rne_bits(uint32_t u)
{
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t a = u & 0x7FFFFFFFu;

    if (a > 0x7F800000u)
        return stn_f16_nan(u);
    if (a >= 0x477FF000u) /* >= 65520 (half-way 65504..65536, ties to even = Inf), Inf */
        return sign | 0x7C00u;
    if (a >= 0x38800000u) { /* >= 2^-14: normal F16 */
        uint32_t r = a - 0x38000000u; /* rebias 127 -> 15 */
        return (uint16_t)(sign | ((r + 0xFFFu + ((r >> 13) & 1u)) >> 13));
    }
    return sign | stn_f16_tiny(a, 1);
}

static inline uint16_t stn_f32_to_f16_trunc_bits(uint32_t u)
{
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t a = u & 0x7FFFFFFFu;

    if (a > 0x7F800000u)
        return stn_f16_nan(u);
    if (a == 0x7F800000u)
        return sign | 0x7C00u;
    if (a >= 0x47800000u) /* finite >= 65536: saturate to 65504 */
        return sign | 0x7BFFu;
    if (a >= 0x38800000u)
        return (uint16_t)(sign | ((a - 0x38000000u) >> 13));
    return sign | stn_f16_tiny(a, 0);
}

static inline uint16_t stn_f16_to_bf16_bits(uint16_t h)
{
    return stn_f32_to_bf16_rne_bits(stn_f16_to_f32_bits(h));
}

static inline uint16_t stn_bf16_to_f16_bits(uint16_t h)
{
    return stn_f32_to_f16_rne_bits(stn_bf16_to_f32_bits(h));
}

/* (float) cast, but with the NaN rule spelled out (quiet bit set, sign and the
   top 22 payload bits kept) instead of trusting the CPU's NaN propagation. */
static inline float stn_f64_to_f32(const double *p)
{
    uint64_t b;
    memcpy(&b, p, sizeof b);
    if ((b & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull) {
        uint32_t u = (uint32_t)(b >> 32) & 0x80000000u;
        u |= 0x7FC00000u | (uint32_t)((b >> 29) & 0x3FFFFFu);
        float f;
        memcpy(&f, &u, sizeof f);
        return f;
    }
    return (float)*p;
}

#endif /* STN_CONVERT_SCALAR_H */
