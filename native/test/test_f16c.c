/*
 * The scalar oracle against the F16C instructions, which implement IEEE
 * conversion in hardware: F32 -> F16 with rne and toward-zero immediates on the
 * special inputs and >= 10 million random patterns (NaNs included: the
 * contract's F16 NaN rule is the F16C rule), and F16 -> F32 on all 65,536
 * patterns (where the hardware differs only by quieting signalling NaNs).
 * x86 with F16C only; otherwise SKIPPED.
 */
#include "test_util.h"
#include "test_specials.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#define N_RANDOM 10000000u
#define BATCH 65536u

/* Only these functions use F16C; main() stays baseline so a CPU without it can skip. */
__attribute__((target("avx,f16c"))) static void hw_f32_to_f16(uint16_t *dst, const uint32_t *src, size_t n,
                                                                int rne)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps((const float *)(const void *)(src + i));
        __m128i h = rne ? _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
                        : _mm256_cvtps_ph(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        _mm_storeu_si128((__m128i *)(void *)(dst + i), h);
    }
    for (; i < n; i++) {
        __m128 v = _mm_castsi128_ps(_mm_cvtsi32_si128((int)src[i]));
        __m128i h = rne ? _mm_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
                        : _mm_cvtps_ph(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        dst[i] = (uint16_t)_mm_extract_epi16(h, 0);
    }
}

__attribute__((target("avx,f16c"))) static void hw_f16_to_f32(uint32_t *dst, const uint16_t *src, size_t n)
{
    for (size_t i = 0; i + 8 <= n; i += 8) {
        __m256 f = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(src + i)));
        _mm256_storeu_ps((float *)(void *)(dst + i), f);
    }
}

static uint16_t *g_hw, *g_lib;

static void compare_narrow(const uint32_t *src, size_t n, int rne)
{
    const float *f = (const float *)(const void *)src;
    hw_f32_to_f16(g_hw, src, n, rne);
    check_rc(rne ? st_f32_to_f16_rne(g_lib, f, n) : st_f32_to_f16_trunc(g_lib, f, n), ST_OK, "f32_to_f16");
    for (size_t i = 0; i < n; i++)
        if (g_hw[i] != g_lib[i])
            fail("f32_to_f16_%s vs F16C: in=0x%08x F16C=0x%04x oracle=0x%04x", rne ? "rne" : "trunc", src[i],
                 g_hw[i], g_lib[i]);
}

int main(void)
{
    g_level = "scalar";
    if (!st_isa_supported("avx2")) { /* the avx2 level implies F16C */
        printf("SKIPPED f16c: this CPU has no F16C\n");
        return SKIP_CODE;
    }
    use_oracle();
    build_specials();
    size_t cap = g_n_special > BATCH ? g_n_special : BATCH;
    g_hw = xmalloc(cap * 2);
    g_lib = xmalloc(cap * 2);
    uint32_t *buf = xmalloc(BATCH * 4);

    for (int rne = 1; rne >= 0; rne--) {
        compare_narrow(g_special, g_n_special, rne);
        for (uint32_t done = 0; done < N_RANDOM; done += BATCH) {
            uint32_t n = N_RANDOM - done < BATCH ? N_RANDOM - done : BATCH;
            for (uint32_t i = 0; i < n; i++)
                buf[i] = rnd32();
            compare_narrow(buf, n, rne);
        }
    }

    /* F16 -> F32: equal except that the hardware quiets signalling NaNs */
    uint16_t *h = xmalloc(65536 * 2);
    uint32_t *hw = xmalloc(65536 * 4), *lib = xmalloc(65536 * 4);
    for (uint32_t i = 0; i < 65536; i++)
        h[i] = (uint16_t)i;
    hw_f16_to_f32(hw, h, 65536);
    check_rc(st_f16_to_f32((float *)(void *)lib, h, 65536), ST_OK, "f16_to_f32");
    unsigned quieted = 0;
    for (uint32_t i = 0; i < 65536; i++) {
        int snan = (i & 0x7C00) == 0x7C00 && (i & 0x3FF) != 0 && (i & 0x200) == 0;
        if (hw[i] == lib[i])
            continue;
        if (snan && hw[i] == (lib[i] | 0x00400000u))
            quieted++;
        else
            fail("f16_to_f32 vs F16C: in=0x%04x F16C=0x%08x oracle=0x%08x", i, hw[i], lib[i]);
    }
    printf("F16C vcvtph2ps quieted %u of 1022 signalling NaNs (the library keeps them signalling)\n",
           quieted);
    free(h);
    free(hw);
    free(lib);
    free(buf);
    free(g_hw);
    free(g_lib);
    free(g_special);
    return test_end("f16c");
}

#else
int main(void)
{
    printf("SKIPPED f16c: not an x86 build\n");
    return SKIP_CODE;
}
#endif
