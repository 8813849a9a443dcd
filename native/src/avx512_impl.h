/*
 * AVX-512 F+BW+VL kernels, compiled by two level files with their own ISA
 * flags (see CMakeLists.txt): kernels_avx512.c ("avx512") and
 * kernels_avx512bf16.c ("avx512bf16", the same plus AVX512_BF16 and DQ, which
 * sets STN_AVX512_BF16). dispatch.c calls a level only after cpuid said so.
 * 16 lanes per step; the tail is one masked step (masked-off lanes are neither
 * read nor written, so no fault past the end of a buffer).
 *
 * F32 -> BF16 rounds with integers. VCVTNE2PS2BF16 (AVX512_BF16) rounds to
 * nearest even as our rule does for zeros, normals and infinities, but it
 * flushes subnormal inputs to zero and keeps NaN payloads; the avx512bf16 level
 * uses it for a step whose lanes hold neither (integer tests, see
 * bf16_zero_or_nan_32), and the integer rounding otherwise.
 */
#if !defined(STN_AVX512_TABLE) || !defined(STN_AVX512_NAME) || !defined(STN_AVX512_BF16)
#error "define STN_AVX512_TABLE, STN_AVX512_NAME and STN_AVX512_BF16 before including avx512_impl.h"
#endif

#include <immintrin.h>

/* Non-temporal row stores for large gathers (see gather_impl.h). */
#define STN_STREAM32(d, s) \
    _mm256_stream_si256((__m256i *)(void *)(d), _mm256_loadu_si256((const __m256i *)(const void *)(s)))
#include "gather_impl.h"
#include "kernels_internal.h"
#include "widen_impl.h"

#define RNE_IMM (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define TRUNC_IMM (_MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC)

static inline __mmask16 tail_mask(size_t left)
{
    return (__mmask16)((1u << left) - 1u); /* left <= 16 */
}

/* vcvtph2ps quiets a signalling NaN: clear the quiet bit again in lanes whose
   F16 input was an SNaN (exp 0x1F, mantissa 1..0x1FF). */
static inline __m512 f16x16_to_f32(__m256i h)
{
    __m512 f = _mm512_cvtph_ps(h);
    __m256i a = _mm256_and_si256(h, _mm256_set1_epi16(0x7FFF));
    __mmask16 snan = _mm256_cmpgt_epi16_mask(a, _mm256_set1_epi16(0x7C00)) &
                     _mm256_cmplt_epi16_mask(a, _mm256_set1_epi16(0x7E00));
    __m512i u = _mm512_castps_si512(f);
    u = _mm512_mask_andnot_epi32(u, snan, _mm512_set1_epi32(0x00400000), u);
    return _mm512_castsi512_ps(u);
}

/* F32 bits -> BF16 in u32 lanes: NaN -> sign|0x7FC0, else the given rounding. */
static inline __m512i bf16_nan_fix(__m512i u, __m512i r)
{
    __m512i a = _mm512_and_si512(u, _mm512_set1_epi32(0x7FFFFFFF));
    __mmask16 nan = _mm512_cmpgt_epu32_mask(a, _mm512_set1_epi32(0x7F800000));
    __m512i q = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x8000)),
                                _mm512_set1_epi32(0x7FC0));
    return _mm512_mask_mov_epi32(r, nan, q);
}

/* u + 0x7FFF, plus 1 where the kept lsb (bit 16) is odd: ties go to even; the
   result is the upper half of each lane. A NaN lane (rare: one test and a
   branch) becomes sign|0x7FC0 there. */
static inline __m512i bf16_rne_hi(__m512i u)
{
    __mmask16 odd = _mm512_test_epi32_mask(u, _mm512_set1_epi32(0x10000));
    __m512i r = _mm512_add_epi32(u, _mm512_set1_epi32(0x7FFF));
    r = _mm512_mask_add_epi32(r, odd, r, _mm512_set1_epi32(1));
    __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_slli_epi32(u, 1), _mm512_set1_epi32((int)0xFF000000u));
    if (__builtin_expect(nan != 0, 0)) {
        __m512i q = _mm512_or_si512(_mm512_and_si512(u, _mm512_set1_epi32((int)0x80000000u)),
                                    _mm512_set1_epi32(0x7FC00000));
        r = _mm512_mask_mov_epi32(r, nan, q);
    }
    return r;
}

static inline __m256i bf16_rne_16(__m512i u)
{
    return _mm512_cvtepi32_epi16(_mm512_srli_epi32(bf16_rne_hi(u), 16));
}

static inline __m256i bf16_trunc_16(__m512i u)
{
    return _mm512_cvtepi32_epi16(bf16_nan_fix(u, _mm512_srli_epi32(u, 16)));
}

static inline __m512i bf16x16_to_f32_bits(__m256i h)
{
    return _mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16);
}

/*
 * Loop skeletons: full 16-lane steps, then one masked step. OP maps the loaded
 * vector to the result vector.
 */
#define LOOP_U16_TO_F32(OP)                                                                \
    size_t i = 0;                                                                          \
    for (; i + 16 <= n; i += 16) {                                                         \
        __m256i h = _mm256_loadu_si256((const __m256i *)(src + i));                        \
        _mm512_storeu_ps(dst + i, OP(h));                                                  \
    }                                                                                      \
    if (i < n) {                                                                           \
        __mmask16 m = tail_mask(n - i);                                                    \
        __m256i h = _mm256_maskz_loadu_epi16(m, src + i);                                  \
        _mm512_mask_storeu_ps(dst + i, m, OP(h));                                          \
    }                                                                                      \
    return ST_OK

#define LOOP_F32_TO_U16(OP)                                                                \
    size_t i = 0;                                                                          \
    for (; i + 16 <= n; i += 16) {                                                         \
        __m512 f = _mm512_loadu_ps(src + i);                                               \
        _mm256_storeu_si256((__m256i *)(dst + i), OP(f));                                  \
    }                                                                                      \
    if (i < n) {                                                                           \
        __mmask16 m = tail_mask(n - i);                                                    \
        __m512 f = _mm512_maskz_loadu_ps(m, src + i);                                      \
        _mm256_mask_storeu_epi16(dst + i, m, OP(f));                                       \
    }                                                                                      \
    return ST_OK

/*
 * Narrowing F32 -> 16-bit of large arrays: the output (half the input) is
 * written once, so it goes out with non-temporal stores, which skip reading
 * every destination line first. One masked step brings dst to a 32-byte
 * boundary; then two aligned streaming stores per iteration; the masked tail as
 * above. Only for a 2-byte aligned dst (any real u16 array) of STREAM_MIN_OUT
 * bytes or more; it fences before returning.
 */
#define STREAM_MIN_OUT ((size_t)4 << 20)

/* The streaming narrowings prefetch their source 2 KiB (512 floats) ahead.
   Hardware prefetch alone left them slower than a copy: a
   step's loads wait in the reorder buffer, so few lines are in flight
   (native/README.md, "Tuning measurements"). -D overrides the distance for
   such comparisons. */
#ifndef STN_NARROW_PREFETCH_FLOATS
#define STN_NARROW_PREFETCH_FLOATS 512
#endif
#if STN_NARROW_PREFETCH_FLOATS > 0
#define NARROW_PREFETCH(p)                                                                 \
    do {                                                                                   \
        _mm_prefetch((const char *)((p) + STN_NARROW_PREFETCH_FLOATS), _MM_HINT_T0);       \
        _mm_prefetch((const char *)((p) + STN_NARROW_PREFETCH_FLOATS + 16), _MM_HINT_T0);  \
    } while (0)
#else
#define NARROW_PREFETCH(p) ((void)0)
#endif

#define LOOP_F32_TO_U16_STREAM(OP)                                                         \
    size_t i = 0;                                                                          \
    size_t head = ((32 - ((uintptr_t)dst & 31)) & 31) / 2;                                 \
    if (head != 0) {                                                                       \
        __mmask16 m = tail_mask(head);                                                     \
        __m512 f = _mm512_maskz_loadu_ps(m, src);                                          \
        _mm256_mask_storeu_epi16(dst, m, OP(f));                                           \
        i = head;                                                                          \
    }                                                                                      \
    for (; i + 32 <= n; i += 32) {                                                         \
        NARROW_PREFETCH(src + i);                                                          \
        __m256i a = OP(_mm512_loadu_ps(src + i));                                          \
        __m256i b = OP(_mm512_loadu_ps(src + i + 16));                                     \
        _mm256_stream_si256((__m256i *)(void *)(dst + i), a);                               \
        _mm256_stream_si256((__m256i *)(void *)(dst + i + 16), b);                          \
    }                                                                                      \
    for (; i + 16 <= n; i += 16)                                                           \
        _mm256_storeu_si256((__m256i *)(dst + i), OP(_mm512_loadu_ps(src + i)));           \
    if (i < n) {                                                                           \
        __mmask16 m = tail_mask(n - i);                                                    \
        __m512 f = _mm512_maskz_loadu_ps(m, src + i);                                      \
        _mm256_mask_storeu_epi16(dst + i, m, OP(f));                                       \
    }                                                                                      \
    stn_store_fence();                                                                     \
    return ST_OK

#define STREAMS(dst, n) ((n) * sizeof(uint16_t) >= STREAM_MIN_OUT && ((uintptr_t)(dst) & 1) == 0)

/* 32 lanes per step, for an OP with a 32-lane form OP##_32 (two 16-lane inputs,
   one result of 32 u16): then 16 lanes, then a masked step. */
#define LOOP_F32_TO_U16_32(OP)                                                             \
    size_t i = 0;                                                                          \
    for (; i + 32 <= n; i += 32)                                                           \
        _mm512_storeu_si512(dst + i, OP##_32(_mm512_loadu_ps(src + i),                     \
                                             _mm512_loadu_ps(src + i + 16)));              \
    if (i + 16 <= n) {                                                                     \
        _mm256_storeu_si256((__m256i *)(dst + i), OP(_mm512_loadu_ps(src + i)));           \
        i += 16;                                                                           \
    }                                                                                      \
    if (i < n) {                                                                           \
        __mmask16 m = tail_mask(n - i);                                                    \
        __m512 f = _mm512_maskz_loadu_ps(m, src + i);                                      \
        _mm256_mask_storeu_epi16(dst + i, m, OP(f));                                       \
    }                                                                                      \
    return ST_OK

/* Its streaming form: masked steps to a 64-byte boundary, then one whole line
   (32 results) per streaming store. */
#define LOOP_F32_TO_U16_32_STREAM(OP)                                                      \
    size_t i = 0;                                                                          \
    size_t head = ((64 - ((uintptr_t)dst & 63)) & 63) / 2;                                 \
    while (i < head) {                                                                     \
        __mmask16 m = tail_mask(head - i < 16 ? head - i : 16);                            \
        __m512 f = _mm512_maskz_loadu_ps(m, src + i);                                      \
        _mm256_mask_storeu_epi16(dst + i, m, OP(f));                                       \
        i += head - i < 16 ? head - i : 16;                                                \
    }                                                                                      \
    for (; i + 32 <= n; i += 32) {                                                         \
        NARROW_PREFETCH(src + i);                                                          \
        _mm512_stream_si512((void *)(dst + i),                                             \
                            OP##_32(_mm512_loadu_ps(src + i),                              \
                                    _mm512_loadu_ps(src + i + 16)));                       \
    }                                                                                      \
    if (i + 16 <= n) {                                                                     \
        _mm256_storeu_si256((__m256i *)(dst + i), OP(_mm512_loadu_ps(src + i)));           \
        i += 16;                                                                           \
    }                                                                                      \
    if (i < n) {                                                                           \
        __mmask16 m = tail_mask(n - i);                                                    \
        __m512 f = _mm512_maskz_loadu_ps(m, src + i);                                      \
        _mm256_mask_storeu_epi16(dst + i, m, OP(f));                                       \
    }                                                                                      \
    stn_store_fence();                                                                     \
    return ST_OK

#define LOOP_U16_TO_U16(OP)                                                                \
    size_t i = 0;                                                                          \
    for (; i + 16 <= n; i += 16) {                                                         \
        __m256i h = _mm256_loadu_si256((const __m256i *)(src + i));                        \
        _mm256_storeu_si256((__m256i *)(dst + i), OP(h));                                  \
    }                                                                                      \
    if (i < n) {                                                                           \
        __mmask16 m = tail_mask(n - i);                                                    \
        __m256i h = _mm256_maskz_loadu_epi16(m, src + i);                                  \
        _mm256_mask_storeu_epi16(dst + i, m, OP(h));                                       \
    }                                                                                      \
    return ST_OK

static inline __m512 op_bf16_to_f32(__m256i h)
{
    return _mm512_castsi512_ps(bf16x16_to_f32_bits(h));
}

#if STN_AVX512_BF16
/*
 * Where VCVTNE(2)PS2BF16 may break the rule: a subnormal or NaN input lane.
 * First, cheaply, on the result: such lanes give ±0 or NaN there, which no
 * normal or infinite input gives (r + r drops the sign; + 0xFE moves zero and
 * subnormal results to 0xFE..0x1FC and NaN results to 0x00..0xFC, every other
 * result to 0x1FE and above); of those, the lanes with a nonzero input are the
 * subnormal and NaN ones, so a step whose only such lanes are zeros keeps the
 * instruction's result. Integer tests only: VFPCLASSPS follows MXCSR.DAZ.
 */
static inline __mmask32 bf16_zero_or_nan_32(__m512i r)
{
    __m512i t = _mm512_add_epi16(_mm512_add_epi16(r, r), _mm512_set1_epi16(0xFE));
    return _mm512_cmplt_epu16_mask(t, _mm512_set1_epi16(0x1FE));
}

static inline __mmask16 bf16_zero_or_nan_16(__m256i r)
{
    __m256i t = _mm256_add_epi16(_mm256_add_epi16(r, r), _mm256_set1_epi16(0xFE));
    return _mm256_cmplt_epu16_mask(t, _mm256_set1_epi16(0x1FE));
}

/* Lanes of nonzero magnitude. */
static inline __mmask16 f32_nonzero(__m512i u)
{
    return _mm512_test_epi32_mask(u, _mm512_set1_epi32(0x7FFFFFFF));
}
#endif

static inline __m256i op_f32_to_bf16_rne(__m512 f)
{
    __m512i u = _mm512_castps_si512(f);
#if STN_AVX512_BF16
    __m256i r = (__m256i)_mm512_cvtneps_pbh(f);
    if (__builtin_expect((bf16_zero_or_nan_16(r) & f32_nonzero(u)) == 0, 1))
        return r;
#endif
    return bf16_rne_16(u);
}


/* 32 lanes: a gives results 0..15, b 16..31. */
static inline __m512i op_f32_to_bf16_rne_32(__m512 a, __m512 b)
{
    __m512i ua = _mm512_castps_si512(a), ub = _mm512_castps_si512(b);
#if STN_AVX512_BF16
    __m512i r = (__m512i)_mm512_cvtne2ps_pbh(b, a);
    __mmask32 odd = bf16_zero_or_nan_32(r);
    if (__builtin_expect(odd == 0, 1) || (odd & _mm512_kunpackw(f32_nonzero(ub), f32_nonzero(ua))) == 0)
        return r;
#endif
    /* the upper halves of a's lanes, then of b's: odd 16-bit words of the pair */
    const __m512i odd_words = _mm512_set_epi16(63, 61, 59, 57, 55, 53, 51, 49, 47, 45, 43, 41, 39, 37, 35, 33,
                                               31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
    return _mm512_permutex2var_epi16(bf16_rne_hi(ua), odd_words, bf16_rne_hi(ub));
}

static inline __m256i op_f32_to_bf16_trunc(__m512 f)
{
    return bf16_trunc_16(_mm512_castps_si512(f));
}

/* vcvtps2ph already gives NaN -> sign|0x7E00|mant>>13 (checked by the tests). */
static inline __m256i op_f32_to_f16_rne(__m512 f)
{
    return _mm512_cvtps_ph(f, RNE_IMM);
}

static inline __m256i op_f32_to_f16_trunc(__m512 f)
{
    return _mm512_cvtps_ph(f, TRUNC_IMM);
}

/* Exact widening first; BF16 NaNs are canonical, so quieting does not matter. */
static inline __m256i op_f16_to_bf16(__m256i h)
{
    return op_f32_to_bf16_rne(_mm512_cvtph_ps(h));
}

static inline __m256i op_bf16_to_f16(__m256i h)
{
    return _mm512_cvtps_ph(_mm512_castsi512_ps(bf16x16_to_f32_bits(h)), RNE_IMM);
}

/* Widening of large arrays (STREAM_MIN_OUT bytes of output and more, at a
   4-byte aligned dst): one masked step to a 64-byte boundary, then streaming
   stores, as the narrowing below. */
#define LOOP_U16_TO_F32_STREAM(OP)                                                         \
    size_t i = 0;                                                                          \
    size_t head = ((64 - ((uintptr_t)dst & 63)) & 63) / 4;                                 \
    if (head != 0) {                                                                       \
        __mmask16 m = tail_mask(head);                                                     \
        __m256i h = _mm256_maskz_loadu_epi16(m, src);                                      \
        _mm512_mask_storeu_ps(dst, m, OP(h));                                              \
        i = head;                                                                          \
    }                                                                                      \
    for (; i + 16 <= n; i += 16)                                                           \
        _mm512_stream_ps(dst + i, OP(_mm256_loadu_si256((const __m256i *)(src + i))));     \
    if (i < n) {                                                                           \
        __mmask16 m = tail_mask(n - i);                                                    \
        __m256i h = _mm256_maskz_loadu_epi16(m, src + i);                                  \
        _mm512_mask_storeu_ps(dst + i, m, OP(h));                                          \
    }                                                                                      \
    stn_store_fence();                                                                     \
    return ST_OK

#define WIDEN_STREAMS(dst, n) ((n) * sizeof(float) >= STREAM_MIN_OUT && ((uintptr_t)(dst) & 3) == 0)

static int bf16_to_f32_stream(float *restrict dst, const uint16_t *restrict src, size_t n)
{
    LOOP_U16_TO_F32_STREAM(op_bf16_to_f32);
}

static int f16_to_f32_stream(float *restrict dst, const uint16_t *restrict src, size_t n)
{
    LOOP_U16_TO_F32_STREAM(f16x16_to_f32);
}

static int bf16_to_f32(float *restrict dst, const uint16_t *restrict src, size_t n)
{
    if (WIDEN_STREAMS(dst, n))
        return bf16_to_f32_stream(dst, src, n);
    LOOP_U16_TO_F32(op_bf16_to_f32);
}

static int f16_to_f32(float *restrict dst, const uint16_t *restrict src, size_t n)
{
    if (WIDEN_STREAMS(dst, n))
        return f16_to_f32_stream(dst, src, n);
    LOOP_U16_TO_F32(f16x16_to_f32);
}

static int f32_to_bf16_rne_stream(uint16_t *restrict dst, const float *restrict src, size_t n)
{
    LOOP_F32_TO_U16_32_STREAM(op_f32_to_bf16_rne);
}

static int f32_to_bf16_rne(uint16_t *restrict dst, const float *restrict src, size_t n)
{
    if (STREAMS(dst, n))
        return f32_to_bf16_rne_stream(dst, src, n);
    LOOP_F32_TO_U16_32(op_f32_to_bf16_rne);
}

static int f32_to_bf16_trunc_stream(uint16_t *restrict dst, const float *restrict src, size_t n)
{
    LOOP_F32_TO_U16_STREAM(op_f32_to_bf16_trunc);
}

static int f32_to_bf16_trunc(uint16_t *restrict dst, const float *restrict src, size_t n)
{
    if (STREAMS(dst, n))
        return f32_to_bf16_trunc_stream(dst, src, n);
    LOOP_F32_TO_U16(op_f32_to_bf16_trunc);
}

static int f32_to_f16_rne_stream(uint16_t *restrict dst, const float *restrict src, size_t n)
{
    LOOP_F32_TO_U16_STREAM(op_f32_to_f16_rne);
}

static int f32_to_f16_rne(uint16_t *restrict dst, const float *restrict src, size_t n)
{
    if (STREAMS(dst, n))
        return f32_to_f16_rne_stream(dst, src, n);
    LOOP_F32_TO_U16(op_f32_to_f16_rne);
}

static int f32_to_f16_trunc_stream(uint16_t *restrict dst, const float *restrict src, size_t n)
{
    LOOP_F32_TO_U16_STREAM(op_f32_to_f16_trunc);
}

static int f32_to_f16_trunc(uint16_t *restrict dst, const float *restrict src, size_t n)
{
    if (STREAMS(dst, n))
        return f32_to_f16_trunc_stream(dst, src, n);
    LOOP_F32_TO_U16(op_f32_to_f16_trunc);
}

static int f16_to_bf16(uint16_t *restrict dst, const uint16_t *restrict src, size_t n)
{
    LOOP_U16_TO_U16(op_f16_to_bf16);
}

static int bf16_to_f16(uint16_t *restrict dst, const uint16_t *restrict src, size_t n)
{
    LOOP_U16_TO_U16(op_bf16_to_f16);
}

/* vcvtpd2ps already quiets NaN keeping sign and top payload bits (the rule). */
static int f64_to_f32(float *restrict dst, const double *restrict src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = (float)src[i];
    return ST_OK;
}

STN_DEFINE_WIDEN(avx512)
STN_DEFINE_GATHERS(avx512, f16_to_f32, bf16_to_f32)

const struct stn_kernels STN_AVX512_TABLE = {
    .name = STN_AVX512_NAME,
    .bf16_to_f32 = bf16_to_f32,
    .f32_to_bf16_rne = f32_to_bf16_rne,
    .f32_to_bf16_trunc = f32_to_bf16_trunc,
    .f16_to_f32 = f16_to_f32,
    .f32_to_f16_rne = f32_to_f16_rne,
    .f32_to_f16_trunc = f32_to_f16_trunc,
    .f16_to_bf16 = f16_to_bf16,
    .bf16_to_f16 = bf16_to_f16,
    STN_WIDEN_ENTRIES(avx512),
    .f64_to_f32 = f64_to_f32,
    STN_GATHER_ENTRIES(avx512),
};
