/*
 * The 16-bit float kernels must not depend on MXCSR: with the rounding mode set
 * to toward-zero / up / down and with FTZ+DAZ on (as some host code leaves it),
 * results must equal those under the default MXCSR. (The integer/F64 widening
 * kernels follow the current rounding mode by contract and are not checked.)
 * x86 only; otherwise SKIPPED.
 */
#include "test_util.h"
#include "test_specials.h"

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>

#define N_RANDOM 1000000u

static const char *KERNEL_NAMES[] = {"f32_to_bf16_rne", "f32_to_bf16_trunc", "f32_to_f16_rne",
                                     "f32_to_f16_trunc", "bf16_to_f32", "f16_to_f32",
                                     "f16_to_bf16", "bf16_to_f16"};
#define N_K (sizeof KERNEL_NAMES / sizeof KERNEL_NAMES[0])

static const struct { unsigned bits; const char *name; } MODES[] = {
    {0x6000, "round toward zero"}, {0x4000, "round up"}, {0x2000, "round down"},
    {0x8040, "FTZ+DAZ"},           {0xE040, "toward zero + FTZ+DAZ"},
};

int main(int argc, char **argv)
{
    test_begin(argc, argv, "mxcsr");
    use_level();
    build_specials();
    size_t n32 = g_n_special + N_RANDOM;
    uint32_t *in32 = xmalloc(n32 * 4);
    memcpy(in32, g_special, g_n_special * 4);
    for (size_t i = g_n_special; i < n32; i++)
        in32[i] = rnd32();
    uint16_t *in16 = xmalloc(65536 * 2);
    for (uint32_t i = 0; i < 65536; i++)
        in16[i] = (uint16_t)i;

    void *want[N_K], *got = xmalloc(n32 * 4);
    size_t len[N_K];
    for (size_t k = 0; k < N_K; k++) {
        const struct kernel *kk = kernel_by_name(KERNEL_NAMES[k]);
        const void *src = kk->src_size == 4 ? (const void *)in32 : (const void *)in16;
        len[k] = kk->src_size == 4 ? n32 : 65536;
        want[k] = xmalloc(len[k] * kk->dst_size);
        check_rc(kk->fn(want[k], src, len[k]), ST_OK, kk->name);
    }

    unsigned saved = _mm_getcsr();
    for (size_t m = 0; m < sizeof MODES / sizeof MODES[0]; m++) {
        for (size_t k = 0; k < N_K; k++) {
            const struct kernel *kk = kernel_by_name(KERNEL_NAMES[k]);
            const void *src = kk->src_size == 4 ? (const void *)in32 : (const void *)in16;
            _mm_setcsr((saved & ~0xE040u) | MODES[m].bits);
            int rc = kk->fn(got, src, len[k]);
            _mm_setcsr(saved);
            check_rc(rc, ST_OK, kk->name);
            for (size_t i = 0; i < len[k]; i++) {
                const char *e = (const char *)want[k] + i * kk->dst_size, *a = (const char *)got + i * kk->dst_size;
                if (memcmp(e, a, kk->dst_size) != 0) {
                    fail("%s under %s: in=0x%0*llx expected=0x%0*llx actual=0x%0*llx", kk->name, MODES[m].name,
                         (int)(2 * kk->src_size), elem_bits((const char *)src + i * kk->src_size, kk->src_size),
                         (int)(2 * kk->dst_size), elem_bits(e, kk->dst_size), (int)(2 * kk->dst_size),
                         elem_bits(a, kk->dst_size));
                }
            }
        }
    }
    for (size_t k = 0; k < N_K; k++)
        free(want[k]);
    free(got);
    free(in32);
    free(in16);
    free(g_special);
    return test_end("mxcsr");
}

#else
int main(void)
{
    printf("SKIPPED mxcsr: not an x86 build\n");
    return SKIP_CODE;
}
#endif
