/*
 * Row gather bodies, included by each kernels_*.c so that the per-row copy and
 * conversion are compiled (and inlined) for that file's ISA. Indices are
 * already validated by dispatch.c.
 */
#ifndef STN_GATHER_IMPL_H
#define STN_GATHER_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "safetensors_native.h"

#define STN_INLINE static inline __attribute__((always_inline))

/* wide is a compile-time constant at every call, so the branch folds away. */
STN_INLINE size_t stn_idx_at(const void *idx, size_t i, int wide)
{
    return wide ? (size_t)((const int64_t *)idx)[i] : (size_t)((const uint32_t *)idx)[i];
}

/*
 * Rows of 1..32 bytes: a memcpy with a variable size is a library call per row,
 * so copy them as two fixed-size chunks, one from each end of the row (they
 * overlap when the row is not a power of two; both stay inside the row).
 */
STN_INLINE void stn_gather_two_chunks(unsigned char *d, const unsigned char *t, size_t rb,
                                      const void *idx, size_t n, int wide, size_t chunk)
{
    for (size_t i = 0; i < n; i++) {
        const unsigned char *s = t + stn_idx_at(idx, i, wide) * rb;
        unsigned char *o = d + i * rb;
        memcpy(o, s, chunk);
        memcpy(o + rb - chunk, s + rb - chunk, chunk);
    }
}

STN_INLINE void stn_gather_rows(void *dst, const void *table, size_t rb, const void *idx,
                                size_t n, int wide)
{
    unsigned char *d = (unsigned char *)dst;
    const unsigned char *t = (const unsigned char *)table;

    if (rb == 1) {
        for (size_t i = 0; i < n; i++)
            d[i] = t[stn_idx_at(idx, i, wide)];
    } else if (rb <= 4) {
        stn_gather_two_chunks(d, t, rb, idx, n, wide, 2);
    } else if (rb <= 8) {
        stn_gather_two_chunks(d, t, rb, idx, n, wide, 4);
    } else if (rb <= 16) {
        stn_gather_two_chunks(d, t, rb, idx, n, wide, 8);
    } else if (rb <= 32) {
        stn_gather_two_chunks(d, t, rb, idx, n, wide, 16);
    } else {
        for (size_t i = 0; i < n; i++)
            memcpy(d + i * rb, t + stn_idx_at(idx, i, wide) * rb, rb);
    }
}

/* Gather-and-convert: one call of the level's own conversion kernel per row. */
STN_INLINE int stn_gather_convert(float *dst, const uint16_t *table, size_t re, const void *idx,
                                  size_t n, int wide,
                                  int (*cvt)(float *, const uint16_t *, size_t))
{
    for (size_t i = 0; i < n; i++)
        cvt(dst + i * re, table + stn_idx_at(idx, i, wide) * re, re);
    return ST_OK;
}

/*
 * Defines the six gather entry points of one level, named PREFIX_gather_*,
 * from that level's f16_to_f32 and bf16_to_f32 kernels.
 */
#define STN_DEFINE_GATHERS(PREFIX, F16_TO_F32, BF16_TO_F32)                                  \
    static int PREFIX##_gather_u32(void *dst, const void *table, size_t rb,                  \
                                   const uint32_t *idx, size_t n)                            \
    {                                                                                         \
        stn_gather_rows(dst, table, rb, idx, n, 0);                                           \
        return ST_OK;                                                                         \
    }                                                                                         \
    static int PREFIX##_gather_i64(void *dst, const void *table, size_t rb,                  \
                                   const int64_t *idx, size_t n)                             \
    {                                                                                         \
        stn_gather_rows(dst, table, rb, idx, n, 1);                                           \
        return ST_OK;                                                                         \
    }                                                                                         \
    static int PREFIX##_gather_f16_u32(float *dst, const uint16_t *table, size_t re,         \
                                       const uint32_t *idx, size_t n)                        \
    {                                                                                         \
        return stn_gather_convert(dst, table, re, idx, n, 0, F16_TO_F32);                     \
    }                                                                                         \
    static int PREFIX##_gather_f16_i64(float *dst, const uint16_t *table, size_t re,         \
                                       const int64_t *idx, size_t n)                         \
    {                                                                                         \
        return stn_gather_convert(dst, table, re, idx, n, 1, F16_TO_F32);                     \
    }                                                                                         \
    static int PREFIX##_gather_bf16_u32(float *dst, const uint16_t *table, size_t re,        \
                                        const uint32_t *idx, size_t n)                       \
    {                                                                                         \
        return stn_gather_convert(dst, table, re, idx, n, 0, BF16_TO_F32);                    \
    }                                                                                         \
    static int PREFIX##_gather_bf16_i64(float *dst, const uint16_t *table, size_t re,        \
                                        const int64_t *idx, size_t n)                        \
    {                                                                                         \
        return stn_gather_convert(dst, table, re, idx, n, 1, BF16_TO_F32);                    \
    }

/* Table initializer fragment for the six entries defined above. */
#define STN_GATHER_ENTRIES(PREFIX)                                                            \
    .gather_u32 = PREFIX##_gather_u32, .gather_i64 = PREFIX##_gather_i64,                     \
    .gather_f16_to_f32_u32 = PREFIX##_gather_f16_u32,                                         \
    .gather_f16_to_f32_i64 = PREFIX##_gather_f16_i64,                                         \
    .gather_bf16_to_f32_u32 = PREFIX##_gather_bf16_u32,                                       \
    .gather_bf16_to_f32_i64 = PREFIX##_gather_bf16_i64

#endif /* STN_GATHER_IMPL_H */
