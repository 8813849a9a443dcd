/*
 * AVX2 + F16C (+FMA) kernels. This file alone is compiled with -mavx2 -mf16c
 * -mfma (see CMakeLists.txt); dispatch.c calls into it only after cpuid said so.
 * 8 lanes per step; tails use the scalar element helpers, so they agree by
 * construction.
 */
#include <immintrin.h>

#include "convert_scalar.h"
/* Non-temporal row stores for large gathers (see gather_impl.h). */
#define STN_STREAM32(d, s) \
    _mm256_stream_si256((__m256i *)(void *)(d), _mm256_loadu_si256((const __m256i *)(const void *)(s)))
#include "gather_impl.h"
#include "kernels_internal.h"
#include "widen_impl.h"

/* F16C takes its rounding from the immediate, never from MXCSR. */
#define RNE_IMM (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define TRUNC_IMM (_MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC)

static inline __m128i load8_u16(const uint16_t *p)
{
    return _mm_loadu_si128((const __m128i *)p);
}

static inline void store8_u16(uint16_t *p, __m128i v)
{
    _mm_storeu_si128((__m128i *)p, v);
}

/* Eight u32 lanes, each <= 0xFFFF, to eight u16 (packus keeps them unchanged). */
static inline __m128i narrow_u32(__m256i r)
{
    return _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
}

/* vcvtph2ps quiets a signalling NaN; the contract wants it kept, so clear the
   quiet bit again in lanes whose F16 input was an SNaN (exp 0x1F, mant 1..0x1FF). */
static inline __m256 f16x8_to_f32(__m128i h)
{
    __m256 f = _mm256_cvtph_ps(h);
    __m128i a = _mm_and_si128(h, _mm_set1_epi16(0x7FFF));
    __m128i snan = _mm_and_si128(_mm_cmpgt_epi16(a, _mm_set1_epi16(0x7C00)),
                                 _mm_cmplt_epi16(a, _mm_set1_epi16(0x7E00)));
    __m256i clear = _mm256_and_si256(_mm256_cvtepi16_epi32(snan), _mm256_set1_epi32(0x00400000));
    return _mm256_castsi256_ps(_mm256_andnot_si256(clear, _mm256_castps_si256(f)));
}

/* F32 bits -> BF16 in u32 lanes: NaN -> sign|0x7FC0, else the given rounding. */
static inline __m256i bf16_nan_fix(__m256i u, __m256i r)
{
    __m256i a = _mm256_and_si256(u, _mm256_set1_epi32(0x7FFFFFFF));
    __m256i nan = _mm256_cmpgt_epi32(a, _mm256_set1_epi32(0x7F800000));
    __m256i q = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x8000)),
                                _mm256_set1_epi32(0x7FC0));
    return _mm256_blendv_epi8(r, q, nan);
}

static inline __m256i bf16_rne_u32(__m256i u)
{
    __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    __m256i r = _mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7FFF)), lsb);
    return bf16_nan_fix(u, _mm256_srli_epi32(r, 16));
}

static inline __m256i bf16_trunc_u32(__m256i u)
{
    return bf16_nan_fix(u, _mm256_srli_epi32(u, 16));
}

/* Widening of large outputs (4 MiB and more, 4-byte aligned dst): scalar
   elements up to a 32-byte boundary, then streaming stores, then fenced. */
#define WIDEN_STREAM_MIN_OUT ((size_t)4 << 20)
#define WIDEN_STREAM_HEAD(SCALAR)                                                          \
    if (n * sizeof(float) >= WIDEN_STREAM_MIN_OUT && ((uintptr_t)dst & 3) == 0) {          \
        for (; i < n && ((uintptr_t)(dst + i) & 31) != 0; i++)                             \
            stn_store_f32_bits(dst + i, SCALAR(src[i]));                                   \
        for (; i + 8 <= n; i += 8)                                                         \
            _mm256_stream_ps(dst + i, WIDEN8(src + i));                                    \
        stn_store_fence();                                                                 \
    }

static inline __m256 bf16x8_to_f32(const uint16_t *p)
{
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(load8_u16(p)), 16));
}

static int bf16_to_f32(float *restrict dst, const uint16_t *restrict src, size_t n)
{
    size_t i = 0;
#define WIDEN8 bf16x8_to_f32
    WIDEN_STREAM_HEAD(stn_bf16_to_f32_bits)
#undef WIDEN8
    for (; i + 8 <= n; i += 8) {
        __m256i u = _mm256_slli_epi32(_mm256_cvtepu16_epi32(load8_u16(src + i)), 16);
        _mm256_storeu_si256((__m256i *)(dst + i), u);
    }
    for (; i < n; i++)
        stn_store_f32_bits(dst + i, stn_bf16_to_f32_bits(src[i]));
    return ST_OK;
}

static inline __m256 f16x8_load_to_f32(const uint16_t *p)
{
    return f16x8_to_f32(load8_u16(p));
}

static int f16_to_f32(float *restrict dst, const uint16_t *restrict src, size_t n)
{
    size_t i = 0;
#define WIDEN8 f16x8_load_to_f32
    WIDEN_STREAM_HEAD(stn_f16_to_f32_bits)
#undef WIDEN8
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(dst + i, f16x8_to_f32(load8_u16(src + i)));
    for (; i < n; i++)
        stn_store_f32_bits(dst + i, stn_f16_to_f32_bits(src[i]));
    return ST_OK;
}

/*
 * F32 -> 16-bit narrowing. Large outputs (STREAM_MIN_OUT bytes and more, at a
 * 2-byte aligned dst) are written once, so after scalar elements up to a 16-byte
 * boundary they go out with non-temporal stores, which skip reading each
 * destination line first, then fenced.
 */
#define STREAM_MIN_OUT ((size_t)4 << 20)

#define NARROW_LOOP(EXPR8, SCALAR)                                                         \
    size_t i = 0;                                                                          \
    if (n * sizeof(uint16_t) >= STREAM_MIN_OUT && ((uintptr_t)dst & 1) == 0) {             \
        for (; i < n && ((uintptr_t)(dst + i) & 15) != 0; i++)                             \
            dst[i] = SCALAR(stn_load_f32_bits(src + i));                                   \
        for (; i + 8 <= n; i += 8)                                                         \
            _mm_stream_si128((__m128i *)(void *)(dst + i), EXPR8(src + i));                 \
        stn_store_fence();                                                                 \
    }                                                                                      \
    for (; i + 8 <= n; i += 8)                                                             \
        store8_u16(dst + i, EXPR8(src + i));                                               \
    for (; i < n; i++)                                                                     \
        dst[i] = SCALAR(stn_load_f32_bits(src + i));                                       \
    return ST_OK

static inline __m128i bf16_rne8(const float *p)
{
    return narrow_u32(bf16_rne_u32(_mm256_loadu_si256((const __m256i *)(const void *)p)));
}

static inline __m128i bf16_trunc8(const float *p)
{
    return narrow_u32(bf16_trunc_u32(_mm256_loadu_si256((const __m256i *)(const void *)p)));
}

/* vcvtps2ph already gives NaN -> sign|0x7E00|mant>>13 and IEEE rounding of
   subnormal results (the tests compare it with the scalar oracle). */
static inline __m128i f16_rne8(const float *p)
{
    return _mm256_cvtps_ph(_mm256_loadu_ps(p), RNE_IMM);
}

static inline __m128i f16_trunc8(const float *p)
{
    return _mm256_cvtps_ph(_mm256_loadu_ps(p), TRUNC_IMM);
}

static int f32_to_bf16_rne(uint16_t *restrict dst, const float *restrict src, size_t n)
{
    NARROW_LOOP(bf16_rne8, stn_f32_to_bf16_rne_bits);
}

static int f32_to_bf16_trunc(uint16_t *restrict dst, const float *restrict src, size_t n)
{
    NARROW_LOOP(bf16_trunc8, stn_f32_to_bf16_trunc_bits);
}

static int f32_to_f16_rne(uint16_t *restrict dst, const float *restrict src, size_t n)
{
    NARROW_LOOP(f16_rne8, stn_f32_to_f16_rne_bits);
}

static int f32_to_f16_trunc(uint16_t *restrict dst, const float *restrict src, size_t n)
{
    NARROW_LOOP(f16_trunc8, stn_f32_to_f16_trunc_bits);
}

/* F16 -> F32 is exact, so the SNaN quieting does not matter: BF16 NaNs are canonical. */
static int f16_to_bf16(uint16_t *restrict dst, const uint16_t *restrict src, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i u = _mm256_castps_si256(_mm256_cvtph_ps(load8_u16(src + i)));
        store8_u16(dst + i, narrow_u32(bf16_rne_u32(u)));
    }
    for (; i < n; i++)
        dst[i] = stn_f16_to_bf16_bits(src[i]);
    return ST_OK;
}

static int bf16_to_f16(uint16_t *restrict dst, const uint16_t *restrict src, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i u = _mm256_slli_epi32(_mm256_cvtepu16_epi32(load8_u16(src + i)), 16);
        store8_u16(dst + i, _mm256_cvtps_ph(_mm256_castsi256_ps(u), RNE_IMM));
    }
    for (; i < n; i++)
        dst[i] = stn_bf16_to_f16_bits(src[i]);
    return ST_OK;
}

/* vcvtpd2ps already quiets NaN keeping sign and top payload bits (the rule). */
static int f64_to_f32(float *restrict dst, const double *restrict src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = (float)src[i];
    return ST_OK;
}

STN_DEFINE_WIDEN(avx2)
STN_DEFINE_GATHERS(avx2, f16_to_f32, bf16_to_f32)

const struct stn_kernels stn_kernels_avx2 = {
    .name = "avx2",
    .bf16_to_f32 = bf16_to_f32,
    .f32_to_bf16_rne = f32_to_bf16_rne,
    .f32_to_bf16_trunc = f32_to_bf16_trunc,
    .f16_to_f32 = f16_to_f32,
    .f32_to_f16_rne = f32_to_f16_rne,
    .f32_to_f16_trunc = f32_to_f16_trunc,
    .f16_to_bf16 = f16_to_bf16,
    .bf16_to_f16 = bf16_to_f16,
    STN_WIDEN_ENTRIES(avx2),
    .f64_to_f32 = f64_to_f32,
    STN_GATHER_ENTRIES(avx2),
};
