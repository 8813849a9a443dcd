/*
 * F32 inputs for the narrowing tests: every special class and rounding boundary
 * of BF16 and F16, each with both signs and (for boundaries) +-1 ulp.
 */
#ifndef STN_TEST_SPECIALS_H
#define STN_TEST_SPECIALS_H

#include <stdint.h>
#include <stdlib.h>

static uint32_t *g_special;
static size_t g_n_special, g_cap_special;

static inline void special_add(uint32_t u)
{
    if (g_n_special + 2 > g_cap_special) {
        g_cap_special = g_cap_special ? 2 * g_cap_special : 4096;
        g_special = realloc(g_special, g_cap_special * sizeof *g_special);
        if (!g_special)
            exit(1);
    }
    g_special[g_n_special++] = u;              /* both signs of everything */
    g_special[g_n_special++] = u ^ 0x80000000u;
}

/* x and its neighbours one F32 ulp away (same sign, bit patterns +-1). */
static inline void special_add3(uint32_t u)
{
    special_add(u);
    if ((u & 0x7FFFFFFFu) != 0)
        special_add(u - 1);
    if ((u & 0x7FFFFFFFu) < 0x7F800000u)
        special_add(u + 1);
}

static inline void build_specials(void)
{
    /* zeros, subnormals, normal extremes, infinities */
    uint32_t fixed[] = {0x00000000, 0x00000001, 0x00000002, 0x00400000, 0x007FFFFF, 0x00800000,
                        0x00800001, 0x3F800000, 0x7F7FFFFF, 0x7F7F7FFF, 0x7F7F8000, 0x7F800000};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        special_add(fixed[i]);
    /* quiet and signalling NaNs with various payloads */
    uint32_t nans[] = {0x7FC00000, 0x7FC00001, 0x7FFFFFFF, 0x7FE00000, 0x7FC02000, 0x7FD55555,
                       0x7F800001, 0x7F801FFF, 0x7F802000, 0x7FA00000, 0x7FBFFFFF, 0x7F8FFFFF,
                       0x7F800100, 0x7F810000, 0x7FAAAAAA};
    for (size_t i = 0; i < sizeof nans / sizeof nans[0]; i++)
        special_add(nans[i]);

    /* BF16 ties (low 16 bits = 0x8000) and their neighbours in every binade,
       including mantissa 0x7F, whose round-up carries into the next binade
       (and into Inf from the top binade). */
    for (uint32_t e = 0; e < 255; e++) {
        uint32_t ms[] = {0x00, 0x01, 0x02, 0x3F, 0x40, 0x7E, 0x7F};
        for (size_t j = 0; j < sizeof ms / sizeof ms[0]; j++) {
            special_add3((e << 23) | (ms[j] << 16) | 0x8000u);
            special_add3((e << 23) | (ms[j] << 16));
        }
    }

    /* F16 normal range ties (low 13 bits = 0x1000), F32 exponents 113..142 */
    for (uint32_t e = 113; e <= 142; e++) {
        uint32_t ms[] = {0x000, 0x001, 0x002, 0x1FF, 0x200, 0x3FE, 0x3FF};
        for (size_t j = 0; j < sizeof ms / sizeof ms[0]; j++) {
            special_add3((e << 23) | (ms[j] << 13) | 0x1000u);
            special_add3((e << 23) | (ms[j] << 13));
        }
    }
    /* F16 subnormal range: ties of 2^-24 units, F32 exponents 103..112 (102, i.e.
       [2^-25, 2^-24), has its one tie 2^-25 in the edge list below) */
    for (uint32_t e = 103; e <= 112; e++) {
        uint32_t shift = 126 - e; /* 24-bit significand >> shift = units of 2^-24 */
        uint32_t qlo = 1u << (23 - shift), qhi = (1u << (24 - shift)) - 1u;
        uint32_t qs[] = {qlo, qlo + 1, (qlo + qhi) / 2, qhi - 1, qhi};
        for (size_t j = 0; j < sizeof qs / sizeof qs[0]; j++) {
            if (qs[j] < qlo || qs[j] > qhi)
                continue;
            uint32_t m = (qs[j] << shift) | (1u << (shift - 1)); /* exact tie */
            special_add3((e << 23) | (m & 0x7FFFFFu));
            special_add3((e << 23) | ((qs[j] << shift) & 0x7FFFFFu));
        }
    }
    /* F16 overflow threshold and subnormal edges */
    uint32_t f16edges[] = {
        0x477FE000, /* 65504, max F16 */
        0x477FF000, /* 65520: tie between 65504 and 65536 -> Inf (rne), 0x7BFF (trunc) */
        0x477FFFFF, 0x47800000, /* 65536 */
        0x47FFE000, 0x4F000000,
        0x33800000, /* 2^-24, smallest F16 subnormal */
        0x33000000, /* 2^-25: tie -> 0 */
        0x33400000, /* 1.5 * 2^-25 -> 0x0001 */
        0x33C00000, /* 1.5 * 2^-24: tie -> 0x0002 */
        0x32FFFFFF, 0x38800000, /* 2^-14, smallest F16 normal */
        0x387FC000, /* largest F16 subnormal */
        0x387FE000, /* tie between largest subnormal and smallest normal */
        0x387FF000, 0x337FFFFF,
    };
    for (size_t i = 0; i < sizeof f16edges / sizeof f16edges[0]; i++)
        special_add3(f16edges[i]);
}

#endif /* STN_TEST_SPECIALS_H */
