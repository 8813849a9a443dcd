/*
 * Row gather bodies, included by each kernels_*.c so that the per-row copy and
 * conversion are compiled (and inlined) for that file's ISA.
 *
 * dispatch.c validated every index before the call, but the indices are caller
 * memory that another thread may be writing. So each index is loaded exactly
 * once (an atomic relaxed load: the compiler may not load it again), checked
 * against n_rows, and that same value is used for the prefetch and the copy. A
 * racing writer can make rows wrong, never make the kernel read outside the
 * table; an index gone bad returns ST_ERR_INDEX (dst then partly written).
 *
 * Rows are copied by this file's own loads and stores, never by a call to the C
 * library's memcpy: a fault on a truncated mapping must happen at an
 * instruction of this library for the fault guard to recognise it.
 */
#ifndef STN_GATHER_IMPL_H
#define STN_GATHER_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "safetensors_native.h"
#include "store_fence.h"

#define STN_INLINE static inline __attribute__((always_inline))

/* wide is a compile-time constant at every call, so the branch folds away. */
STN_INLINE size_t stn_load_idx(const void *idx, size_t i, int wide)
{
    return wide ? (size_t)__atomic_load_n(&((const int64_t *)idx)[i], __ATOMIC_RELAXED)
                : (size_t)__atomic_load_n(&((const uint32_t *)idx)[i], __ATOMIC_RELAXED);
}

/*
 * Random rows of a large table miss every cache level, and a plain copy loop
 * waits for one row at a time. Touching the row STN_PREFETCH_AHEAD positions
 * ahead keeps that many misses in flight. Only the first STN_PREFETCH_BYTES of
 * a row are requested: the hardware streams the rest of a long row once its
 * first lines arrive, and asking for whole rows overflows the miss buffers
 * (native/README.md, "Tuning measurements"). The indices loaded ahead wait in a
 * ring until their row is copied, so each is read once.
 */
#define STN_PREFETCH_AHEAD 16
#define STN_PREFETCH_BYTES 128

struct stn_idx_ring {
    size_t row[STN_PREFETCH_AHEAD];
};

STN_INLINE void stn_prefetch_row(const unsigned char *t, size_t rb, size_t r)
{
    const unsigned char *row = t + r * rb;
    size_t bytes = rb < STN_PREFETCH_BYTES ? rb : STN_PREFETCH_BYTES;
    for (size_t off = 0; off < bytes; off += 64)
        __builtin_prefetch(row + off, 0, 3);
}

/* Loads, checks and prefetches the first indices; 0 if one is bad. */
STN_INLINE int stn_ring_fill(struct stn_idx_ring *q, const unsigned char *t, size_t rb,
                             size_t n_rows, const void *idx, size_t n, int wide)
{
    for (size_t j = 0; j < STN_PREFETCH_AHEAD && j < n; j++) {
        size_t r = stn_load_idx(idx, j, wide);
        if (r >= n_rows)
            return 0;
        q->row[j] = r;
        stn_prefetch_row(t, rb, r);
    }
    return 1;
}

/* The row for position i (loaded earlier), after loading position i + AHEAD in
   its place; SIZE_MAX if that new index is bad. */
STN_INLINE size_t stn_ring_next(struct stn_idx_ring *q, const unsigned char *t, size_t rb,
                                size_t n_rows, const void *idx, size_t i, size_t n, int wide)
{
    size_t slot = i % STN_PREFETCH_AHEAD;
    size_t r = q->row[slot];
    if (i + STN_PREFETCH_AHEAD < n) {
        size_t ahead = stn_load_idx(idx, i + STN_PREFETCH_AHEAD, wide);
        if (ahead >= n_rows)
            return SIZE_MAX;
        q->row[slot] = ahead;
        stn_prefetch_row(t, rb, ahead);
    }
    return r;
}

/* Fixed-size copies: the compiler turns these into plain moves. */
#define STN_COPY_FIXED(N)                                                                     \
    STN_INLINE void stn_copy##N(unsigned char *d, const unsigned char *s)                     \
    {                                                                                         \
        unsigned char tmp[N];                                                                 \
        __builtin_memcpy(tmp, s, N);                                                          \
        __builtin_memcpy(d, tmp, N);                                                          \
    }
STN_COPY_FIXED(2)
STN_COPY_FIXED(4)
STN_COPY_FIXED(8)
STN_COPY_FIXED(16)
STN_COPY_FIXED(32)
#undef STN_COPY_FIXED

/* The 128-byte steps of a row copy: four 32-byte MOVEs each (why four: see
   stn_stream_row). Leaves OFF at the first byte not yet copied. */
#define STN_COPY_128_STEPS(MOVE, D, S, RB, OFF)                                               \
    for (; (OFF) + 128 <= (RB); (OFF) += 128) {                                               \
        MOVE((D) + (OFF), (S) + (OFF));                                                       \
        MOVE((D) + (OFF) + 32, (S) + (OFF) + 32);                                             \
        MOVE((D) + (OFF) + 64, (S) + (OFF) + 64);                                             \
        MOVE((D) + (OFF) + 96, (S) + (OFF) + 96);                                             \
    }

/*
 * A row of rb > 32 bytes: 128-byte steps of four 32-byte copies (two moves of
 * 16 each on the scalar level, one wide move where the ISA has it), 32-byte
 * steps, then one copy that ends exactly at the row's end (it may overlap
 * bytes already copied; both stay inside the row). Four copies per step for
 * the reason given at stn_stream_row, which holds for an unaligned dst too.
 */
STN_INLINE void stn_copy_row(unsigned char *d, const unsigned char *s, size_t rb)
{
    size_t off = 0;
    STN_COPY_128_STEPS(stn_copy32, d, s, rb, off);
    for (; off + 32 <= rb; off += 32)
        stn_copy32(d + off, s + off);
    if (off < rb)
        stn_copy32(d + rb - 32, s + rb - 32);
}

/*
 * Large outputs with whole 32-byte rows at an aligned destination: the ISA file
 * may define STN_STREAM32(dst, src) (a non-temporal 32-byte store of a 32-byte
 * load; the streaming gather fences before it returns, error returns included).
 * Streaming stores skip reading each destination
 * line before writing it and keep the output from evicting the table's rows
 * from the cache: a gather's output is written once and read later by others.
 */
#define STN_STREAM_MIN_BYTES ((size_t)4 << 20)

/*
 * Four moves per step: a loop of one 32-byte move ran at a speed that depended
 * on where the compiler happened to place it (a copy of the loop that crossed a
 * 64-byte code boundary was the slow one); with four moves per step the
 * placement no longer matters and every copy is faster (native/README.md,
 * "Tuning measurements").
 */
#ifdef STN_STREAM32
STN_INLINE void stn_stream_row(unsigned char *d, const unsigned char *s, size_t rb)
{
    size_t off = 0;
    STN_COPY_128_STEPS(STN_STREAM32, d, s, rb, off);
    for (; off < rb; off += 32)
        STN_STREAM32(d + off, s + off);
}
#endif

/* Rows of 2..32 bytes are two fixed-size chunks, one from each end of the row
   (they overlap when the row is not a power of two). */
#define STN_GATHER_LOOP(COPY)                                                                 \
    do {                                                                                      \
        struct stn_idx_ring q;                                                                \
        if (!stn_ring_fill(&q, t, rb, n_rows, idx, n, wide))                                  \
            return ST_ERR_INDEX;                                                              \
        for (size_t i = 0; i < n; i++) {                                                      \
            size_t r = stn_ring_next(&q, t, rb, n_rows, idx, i, n, wide);                     \
            if (r == SIZE_MAX)                                                                \
                return ST_ERR_INDEX;                                                          \
            const unsigned char *s = t + r * rb;                                              \
            unsigned char *o = d + i * rb;                                                    \
            COPY;                                                                             \
        }                                                                                     \
    } while (0)

#ifdef STN_STREAM32
STN_INLINE int stn_gather_stream(unsigned char *d, const unsigned char *t, size_t n_rows, size_t rb,
                                 const void *idx, size_t n, int wide)
{
    STN_GATHER_LOOP(stn_stream_row(o, s, rb));
    return ST_OK;
}
#endif

STN_INLINE int stn_gather_rows(void *dst, const void *table, size_t n_rows, size_t rb,
                               const void *idx, size_t n, int wide)
{
    unsigned char *d = (unsigned char *)dst;
    const unsigned char *t = (const unsigned char *)table;

    if (rb == 1) {
        for (size_t i = 0; i < n; i++) {
            size_t r = stn_load_idx(idx, i, wide);
            if (r >= n_rows)
                return ST_ERR_INDEX;
            d[i] = t[r];
        }
    } else if (rb <= 4) {
        STN_GATHER_LOOP((stn_copy2(o, s), stn_copy2(o + rb - 2, s + rb - 2)));
    } else if (rb <= 8) {
        STN_GATHER_LOOP((stn_copy4(o, s), stn_copy4(o + rb - 4, s + rb - 4)));
    } else if (rb <= 16) {
        STN_GATHER_LOOP((stn_copy8(o, s), stn_copy8(o + rb - 8, s + rb - 8)));
    } else if (rb <= 32) {
        STN_GATHER_LOOP((stn_copy16(o, s), stn_copy16(o + rb - 16, s + rb - 16)));
    } else {
#ifdef STN_STREAM32
        if (rb % 32 == 0 && ((uintptr_t)d & 31) == 0 && n * rb >= STN_STREAM_MIN_BYTES) {
            int rc = stn_gather_stream(d, t, n_rows, rb, idx, n, wide);
            stn_store_fence();
            return rc;
        }
#endif
        STN_GATHER_LOOP(stn_copy_row(o, s, rb));
    }
    return ST_OK;
}

/* Gather-and-convert: one call of the level's own conversion kernel per row. */
STN_INLINE int stn_gather_convert(float *dst, const uint16_t *table, size_t n_rows, size_t re,
                                  const void *idx, size_t n, int wide,
                                  int (*cvt)(float *, const uint16_t *, size_t))
{
    const unsigned char *t = (const unsigned char *)table;
    size_t rb = re * sizeof(uint16_t);
    struct stn_idx_ring q;
    if (!stn_ring_fill(&q, t, rb, n_rows, idx, n, wide))
        return ST_ERR_INDEX;
    for (size_t i = 0; i < n; i++) {
        size_t r = stn_ring_next(&q, t, rb, n_rows, idx, i, n, wide);
        if (r == SIZE_MAX)
            return ST_ERR_INDEX;
        cvt(dst + i * re, table + r * re, re);
    }
    return ST_OK;
}

/*
 * Defines the six gather entry points of one level, named PREFIX_gather_*,
 * from that level's f16_to_f32 and bf16_to_f32 kernels.
 */
#define STN_DEFINE_GATHERS(PREFIX, F16_TO_F32, BF16_TO_F32)                                  \
    static int PREFIX##_gather_u32(void *dst, const void *table, size_t nr, size_t rb,       \
                                   const uint32_t *idx, size_t n)                            \
    {                                                                                         \
        return stn_gather_rows(dst, table, nr, rb, idx, n, 0);                                \
    }                                                                                         \
    static int PREFIX##_gather_i64(void *dst, const void *table, size_t nr, size_t rb,       \
                                   const int64_t *idx, size_t n)                             \
    {                                                                                         \
        return stn_gather_rows(dst, table, nr, rb, idx, n, 1);                                \
    }                                                                                         \
    static int PREFIX##_gather_f16_u32(float *dst, const uint16_t *table, size_t nr,         \
                                       size_t re, const uint32_t *idx, size_t n)             \
    {                                                                                         \
        return stn_gather_convert(dst, table, nr, re, idx, n, 0, F16_TO_F32);                 \
    }                                                                                         \
    static int PREFIX##_gather_f16_i64(float *dst, const uint16_t *table, size_t nr,         \
                                       size_t re, const int64_t *idx, size_t n)              \
    {                                                                                         \
        return stn_gather_convert(dst, table, nr, re, idx, n, 1, F16_TO_F32);                 \
    }                                                                                         \
    static int PREFIX##_gather_bf16_u32(float *dst, const uint16_t *table, size_t nr,        \
                                        size_t re, const uint32_t *idx, size_t n)            \
    {                                                                                         \
        return stn_gather_convert(dst, table, nr, re, idx, n, 0, BF16_TO_F32);                \
    }                                                                                         \
    static int PREFIX##_gather_bf16_i64(float *dst, const uint16_t *table, size_t nr,        \
                                        size_t re, const int64_t *idx, size_t n)             \
    {                                                                                         \
        return stn_gather_convert(dst, table, nr, re, idx, n, 1, BF16_TO_F32);                \
    }

/* Table initializer fragment for the six entries defined above. */
#define STN_GATHER_ENTRIES(PREFIX)                                                            \
    .gather_u32 = PREFIX##_gather_u32, .gather_i64 = PREFIX##_gather_i64,                     \
    .gather_f16_to_f32_u32 = PREFIX##_gather_f16_u32,                                         \
    .gather_f16_to_f32_i64 = PREFIX##_gather_f16_i64,                                         \
    .gather_bf16_to_f32_u32 = PREFIX##_gather_bf16_u32,                                       \
    .gather_bf16_to_f32_i64 = PREFIX##_gather_bf16_i64

#endif /* STN_GATHER_IMPL_H */
