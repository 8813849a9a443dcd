/*
 * An independent reference for the 16-bit float conversions, written a
 * different way from the library: by value, in double arithmetic (floor and
 * compare), not by bit tricks. The scalar oracle is checked against it.
 * Assumes the default FP environment (round to nearest, no FTZ/DAZ).
 */
#ifndef STN_TEST_REF_H
#define STN_TEST_REF_H

#include <math.h>
#include <string.h>
#include <stdint.h>

/* Formats: sign + ebits + mbits = 16. */
#define F16_EBITS 5
#define F16_MBITS 10
#define BF16_EBITS 8
#define BF16_MBITS 7

/* F32 bits -> 16-bit float bits; rne or toward zero (F16 overflow saturates). */
static inline uint16_t ref_narrow(uint32_t u, int ebits, int mbits, int rne)
{
    uint16_t sign = (u >> 31) ? 0x8000 : 0;
    uint32_t a = u & 0x7FFFFFFFu;
    int bias = (1 << (ebits - 1)) - 1, emin = 1 - bias, emax = bias;
    uint16_t inf = (uint16_t)(((1u << ebits) - 1u) << mbits);

    if (a > 0x7F800000u) /* NaN rules of the contract */
        return ebits == BF16_EBITS ? (uint16_t)(sign | 0x7FC0)
                                   : (uint16_t)(sign | 0x7E00 | ((a >> 13) & 0x3FF));
    if (a == 0x7F800000u)
        return sign | inf;

    float f;
    memcpy(&f, &a, 4);
    double x = f;                                     /* exact */
    int e = (a >> 23) ? (int)(a >> 23) - 127 : -127;  /* F32 subnormals: below any emin */
    int E = e > emin ? e : emin;                      /* exponent of the target grid */
    double q = ldexp(x, mbits - E);                   /* x in units of the target ulp, exact */
    double fl = floor(q), frac = q - fl;
    if (rne && (frac > 0.5 || (frac == 0.5 && fmod(fl, 2.0) == 1.0)))
        fl += 1.0;
    double one = ldexp(1.0, mbits);
    if (fl >= 2.0 * one) { /* rounded up into the next binade */
        fl /= 2.0;
        E++;
    }
    if (E > emax)
        return rne ? (uint16_t)(sign | inf) : (uint16_t)(sign | (inf - 1)); /* Inf / max finite */
    if (fl < one) /* subnormal (E == emin) */
        return (uint16_t)(sign | (uint16_t)fl);
    return (uint16_t)(sign | (((unsigned)(E + bias) << mbits) + (unsigned)(fl - one)));
}

/* 16-bit float bits -> F32 bits, by value (NaN/Inf: the contract's bit rule). */
static inline uint32_t ref_widen(uint16_t h, int ebits, int mbits)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    int bias = (1 << (ebits - 1)) - 1;
    unsigned exp = (h >> mbits) & ((1u << ebits) - 1u), mant = h & ((1u << mbits) - 1u);
    if (exp == (1u << ebits) - 1u)
        return sign | 0x7F800000u | (mant << (23 - mbits));
    double v = exp == 0 ? ldexp(mant, 1 - bias - mbits)
                        : ldexp((double)((1u << mbits) + mant), (int)exp - bias - mbits);
    float f = (float)v; /* exact: every 16-bit value is an F32 */
    uint32_t u;
    memcpy(&u, &f, 4);
    return sign | u;
}

static inline uint16_t ref_f32_to_f16(uint32_t u, int rne) { return ref_narrow(u, F16_EBITS, F16_MBITS, rne); }
static inline uint16_t ref_f32_to_bf16(uint32_t u, int rne) { return ref_narrow(u, BF16_EBITS, BF16_MBITS, rne); }
static inline uint32_t ref_f16_to_f32(uint16_t h) { return ref_widen(h, F16_EBITS, F16_MBITS); }
static inline uint32_t ref_bf16_to_f32(uint16_t h) { return ref_widen(h, BF16_EBITS, BF16_MBITS); }
static inline uint16_t ref_f16_to_bf16(uint16_t h) { return ref_f32_to_bf16(ref_f16_to_f32(h), 1); }
static inline uint16_t ref_bf16_to_f16(uint16_t h) { return ref_f32_to_f16(ref_bf16_to_f32(h), 1); }

#endif /* STN_TEST_REF_H */
