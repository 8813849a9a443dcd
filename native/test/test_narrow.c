/*
 * F32 -> BF16 / F16 (rne and trunc): every special class and rounding boundary,
 * then >= 10 million random bit patterns per kernel. A SIMD level is compared
 * with the scalar oracle; the scalar level with the independent reference of
 * test_ref.h (comparing the oracle with itself would prove nothing).
 */
#include "test_util.h"
#include "test_ref.h"
#include "test_specials.h"

#define N_RANDOM 10000000u  /* required minimum per kernel and level */
#define N_F16_RANGE 2000000u /* extra: exponents where F16 rounding happens */
#define BATCH 65536u

struct narrow {
    const char *name;
    uint16_t (*ref)(uint32_t);
};

static uint16_t ref_bf16_rne(uint32_t u) { return ref_f32_to_bf16(u, 1); }
static uint16_t ref_bf16_trunc(uint32_t u) { return ref_f32_to_bf16(u, 0); }
static uint16_t ref_f16_rne(uint32_t u) { return ref_f32_to_f16(u, 1); }
static uint16_t ref_f16_trunc(uint32_t u) { return ref_f32_to_f16(u, 0); }

static const struct narrow NARROW[] = {
    {"f32_to_bf16_rne", ref_bf16_rne},
    {"f32_to_bf16_trunc", ref_bf16_trunc},
    {"f32_to_f16_rne", ref_f16_rne},
    {"f32_to_f16_trunc", ref_f16_trunc},
};

static uint16_t *g_exp, *g_act;

/* Level vs oracle (or, at the scalar level, oracle vs reference) on src[0..n). */
static void check_batch(const struct narrow *k, const uint32_t *src, size_t n, int with_ref)
{
    const struct kernel *kk = kernel_by_name(k->name);
    const float *f = (const float *)(const void *)src;
    if (strcmp(g_level, "scalar") != 0) {
        compare_kernel(kk, f, n, g_exp, g_act);
        if (!with_ref)
            return;
    }
    use_oracle();
    check_rc(kk->fn(g_act, f, n), ST_OK, k->name);
    for (size_t i = 0; i < n; i++) {
        uint16_t want = k->ref(src[i]);
        if (g_act[i] != want)
            fail("%s (oracle vs reference): in=0x%08x expected=0x%04x actual=0x%04x", k->name,
                 src[i], want, g_act[i]);
    }
}

int main(int argc, char **argv)
{
    test_begin(argc, argv, "narrow");
    build_specials();
    printf("%zu special inputs, %u random + %u F16-range random per kernel\n", g_n_special,
           N_RANDOM, N_F16_RANGE);
    g_exp = xmalloc((g_n_special > BATCH ? g_n_special : BATCH) * sizeof(uint16_t));
    g_act = xmalloc((g_n_special > BATCH ? g_n_special : BATCH) * sizeof(uint16_t));
    uint32_t *buf = xmalloc(BATCH * sizeof(uint32_t));
    int scalar = strcmp(g_level, "scalar") == 0;

    for (size_t k = 0; k < sizeof NARROW / sizeof NARROW[0]; k++) {
        long before = g_failures;
        check_batch(&NARROW[k], g_special, g_n_special, 1);
        for (uint32_t done = 0; done < N_RANDOM; done += BATCH) {
            uint32_t n = N_RANDOM - done < BATCH ? N_RANDOM - done : BATCH;
            for (uint32_t i = 0; i < n; i++)
                buf[i] = rnd32();
            check_batch(&NARROW[k], buf, n, scalar);
        }
        /* exponents 100..147 only: where F16 normal/subnormal rounding happens */
        for (uint32_t done = 0; done < N_F16_RANGE; done += BATCH) {
            uint32_t n = N_F16_RANGE - done < BATCH ? N_F16_RANGE - done : BATCH;
            for (uint32_t i = 0; i < n; i++) {
                uint64_t r = rnd64();
                buf[i] = ((uint32_t)r & 0x807FFFFFu) | ((100u + (uint32_t)(r >> 40) % 48u) << 23);
            }
            check_batch(&NARROW[k], buf, n, scalar);
        }
        printf("  %-18s %s\n", NARROW[k].name, g_failures == before ? "ok" : "FAILED");
    }
    free(buf);
    free(g_exp);
    free(g_act);
    free(g_special);
    return test_end("narrow");
}
