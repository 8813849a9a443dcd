/*
 * All 65,536 input patterns of the 16-bit-input kernels: the level against the
 * scalar oracle, and the oracle against the independent reference.
 */
#include "test_util.h"
#include "test_ref.h"

#define N16 65536u

int main(int argc, char **argv)
{
    test_begin(argc, argv, "exhaustive16");
    uint16_t *src = xmalloc(N16 * sizeof *src);
    uint32_t *exp = xmalloc(N16 * sizeof *exp), *act = xmalloc(N16 * sizeof *act);
    for (uint32_t i = 0; i < N16; i++)
        src[i] = (uint16_t)i;

    const char *names[] = {"bf16_to_f32", "f16_to_f32", "f16_to_bf16", "bf16_to_f16", "u16_to_f32"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        long before = g_failures;
        const struct kernel *kk = kernel_by_name(names[k]);
        compare_kernel(kk, src, N16, exp, act); /* exp = oracle output */

        for (uint32_t i = 0; i < N16; i++) {
            uint16_t h = (uint16_t)i;
            uint32_t want;
            switch (k) {
            case 0: want = ref_bf16_to_f32(h); break;
            case 1: want = ref_f16_to_f32(h); break;
            case 2: want = ref_f16_to_bf16(h); break;
            case 3: want = ref_bf16_to_f16(h); break;
            default: want = f32_bits((float)h); break;
            }
            uint32_t got = kk->dst_size == 2 ? ((uint16_t *)exp)[i] : exp[i];
            if (got != want)
                fail("%s (oracle vs reference): in=0x%04x expected=0x%0*x actual=0x%0*x", names[k],
                     i, (int)(2 * kk->dst_size), want, (int)(2 * kk->dst_size), got);
        }
        printf("  %-12s %s\n", names[k], g_failures == before ? "ok" : "FAILED");
    }
    free(src);
    free(exp);
    free(act);
    return test_end("exhaustive16");
}
