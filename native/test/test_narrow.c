/*
 * F32 -> BF16 / F16 (rne and trunc): every special class and rounding boundary,
 * then >= 10 million random bit patterns per kernel. A SIMD level is compared
 * with the scalar oracle; the scalar level with the independent reference of
 * test_ref.h (comparing the oracle with itself would prove nothing).
 *
 * A SIMD level may take a fast instruction for a whole step of 16 or 32 lanes
 * and redo the step another way when one lane needs it (avx512bf16: a
 * subnormal or NaN among normals; a zero must not count). "Blocks" puts one
 * such value at every position of a window of normals, and a zero next to it,
 * at every start offset, so that every lane of every step sees it.
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

#define WINDOW 64u

/* One odd value at position p of a window of WINDOW values, every p, for every
   odd value, on three backgrounds: normals, normals with a zero after p, and
   zeros (a lane mix-up in the "only zeros" test then shows); each kernel runs
   from start offsets 0..31, and in calls of 20 elements around each odd value. */
static void check_blocks(void)
{
    static const uint32_t ODD[] = {0x00000001, 0x007FFFFF, 0x00008000, 0x00018000, 0x00400000,
                                   0x7F800001, 0x7FC00000, 0x7FFFFFFF, 0x7FA00001, 0x00000000,
                                   0x7F800000, 0x7F7FFFFF, 0x7F7F8000, 0x00800000};
    size_t n_odd = sizeof ODD / sizeof ODD[0];
    size_t n = 2 * 3 * n_odd * WINDOW * WINDOW + 32;
    uint32_t *src = xmalloc(n * sizeof *src);
    uint16_t *exp = xmalloc(n * sizeof *exp), *act = xmalloc(n * sizeof *act);
    size_t at = 0;
    for (uint32_t sign = 0; sign < 2; sign++)
        for (int bg = 0; bg < 3; bg++)
            for (size_t v = 0; v < n_odd; v++)
                for (uint32_t p = 0; p < WINDOW; p++)
                    for (uint32_t i = 0; i < WINDOW; i++) {
                        /* normals with ties (low half 0x8000), odd and even kept lsb */
                        uint32_t u = ((rnd32() & 0x80FF0000u) | 0x3F008000u) ^ (rnd32() & 0x10000u);
                        if (i == p)
                            u = ODD[v] ^ (sign << 31);
                        else if (bg == 2 || (bg == 1 && i == (p + 1) % WINDOW))
                            u = sign << 31;
                        src[at++] = u;
                    }
    while (at < n)
        src[at++] = 0x3F808000u;
    for (size_t k = 0; k < sizeof NARROW / sizeof NARROW[0]; k++) {
        long before = g_failures;
        const struct kernel *kk = kernel_by_name(NARROW[k].name);
        for (size_t off = 0; off < 32 && g_failures == before; off++)
            compare_kernel(kk, src + off, n - off, exp, act);
        /* short calls: the odd value in a lone 16-lane step or in the masked tail */
        for (size_t w = 1; w < (n - 32) / WINDOW && g_failures == before; w++) {
            size_t p = (w % WINDOW), odd_at = w * WINDOW + p;
            static const size_t BEFORE[] = {0, 7, 15, 16, 19};
            for (size_t j = 0; j < sizeof BEFORE / sizeof BEFORE[0]; j++)
                compare_kernel(kk, src + odd_at - BEFORE[j], 20, exp, act);
        }
        printf("  %-18s blocks %s\n", NARROW[k].name, g_failures == before ? "ok" : "FAILED");
    }
    free(src);
    free(exp);
    free(act);
}

int main(int argc, char **argv)
{
    test_begin(argc, argv, "narrow");
    if (strcmp(g_level, "scalar") != 0)
        check_blocks();
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
