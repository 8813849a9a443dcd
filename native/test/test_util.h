/*
 * Shared helpers for the C tests: level selection (exit 77 = skipped), a seeded
 * PRNG, failure reporting, bit casts and a table of all element-wise kernels.
 */
#ifndef STN_TEST_UTIL_H
#define STN_TEST_UTIL_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "safetensors_native.h"

#define SKIP_CODE 77
#define MAX_REPORTED 40 /* failures printed in full; the rest are only counted */

static const char *g_level = "scalar";
static long g_failures;

/* Every test gets its level as argv[1]; a level this CPU lacks is a skip. */
static inline void test_begin(int argc, char **argv, const char *test)
{
    g_level = argc > 1 ? argv[1] : "scalar";
    if (!st_isa_supported(g_level)) {
        printf("SKIPPED %s: ISA level '%s' is not supported on this CPU\n", test, g_level);
        exit(SKIP_CODE);
    }
    printf("%s: level %s\n", test, g_level);
}

static inline void select_level(const char *name)
{
    if (st_select_isa(name) != ST_OK || strcmp(st_isa_name(), name) != 0) {
        printf("FATAL: cannot select ISA level '%s' (active: %s)\n", name, st_isa_name());
        exit(1);
    }
}

static inline void use_oracle(void) { select_level("scalar"); }
static inline void use_level(void) { select_level(g_level); }

static inline void fail(const char *fmt, ...)
{
    if (g_failures++ < MAX_REPORTED) {
        va_list ap;
        va_start(ap, fmt);
        printf("FAIL [%s] ", g_level);
        vprintf(fmt, ap);
        printf("\n");
        va_end(ap);
    }
}

static inline void check_rc(int rc, int want, const char *what)
{
    if (rc != want)
        fail("%s: status %d, expected %d", what, rc, want);
}

static inline int test_end(const char *test)
{
    if (g_failures) {
        printf("%s [%s]: %ld failure(s)\n", test, g_level, g_failures);
        return 1;
    }
    printf("%s [%s]: all passed\n", test, g_level);
    return 0;
}

/* xorshift64* (fixed seed: failures reproduce). */
static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static inline uint64_t rnd64(void)
{
    g_rng ^= g_rng >> 12;
    g_rng ^= g_rng << 25;
    g_rng ^= g_rng >> 27;
    return g_rng * 0x2545F4914F6CDD1Dull;
}
static inline uint32_t rnd32(void) { return (uint32_t)(rnd64() >> 32); }

static inline void fill_random(void *p, size_t bytes)
{
    unsigned char *b = (unsigned char *)p;
    for (size_t i = 0; i < bytes; i++)
        b[i] = (unsigned char)(rnd64() >> 56);
}

static inline uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static inline float bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static inline void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        printf("FATAL: out of memory\n");
        exit(1);
    }
    return p;
}

/* ---- every element-wise kernel behind one signature, for generic tests ---- */
typedef int (*any_kernel)(void *dst, const void *src, size_t n);

#define WRAP(NAME, DT, ST)                                                                 \
    static inline int w_##NAME(void *d, const void *s, size_t n) { return st_##NAME((DT *)d, (const ST *)s, n); }
WRAP(bf16_to_f32, float, uint16_t)
WRAP(f32_to_bf16_rne, uint16_t, float)
WRAP(f32_to_bf16_trunc, uint16_t, float)
WRAP(f16_to_f32, float, uint16_t)
WRAP(f32_to_f16_rne, uint16_t, float)
WRAP(f32_to_f16_trunc, uint16_t, float)
WRAP(f16_to_bf16, uint16_t, uint16_t)
WRAP(bf16_to_f16, uint16_t, uint16_t)
WRAP(i8_to_f32, float, int8_t)
WRAP(u8_to_f32, float, uint8_t)
WRAP(i16_to_f32, float, int16_t)
WRAP(u16_to_f32, float, uint16_t)
WRAP(i32_to_f32, float, int32_t)
WRAP(u32_to_f32, float, uint32_t)
WRAP(i64_to_f32, float, int64_t)
WRAP(u64_to_f32, float, uint64_t)
WRAP(f64_to_f32, float, double)
#undef WRAP

struct kernel {
    const char *name;
    any_kernel fn;
    size_t dst_size, src_size; /* element sizes in bytes */
};

#define K(NAME, DT, ST) {#NAME, w_##NAME, sizeof(DT), sizeof(ST)}
static const struct kernel KERNELS[] = {
    K(bf16_to_f32, float, uint16_t),     K(f32_to_bf16_rne, uint16_t, float),
    K(f32_to_bf16_trunc, uint16_t, float), K(f16_to_f32, float, uint16_t),
    K(f32_to_f16_rne, uint16_t, float),  K(f32_to_f16_trunc, uint16_t, float),
    K(f16_to_bf16, uint16_t, uint16_t),  K(bf16_to_f16, uint16_t, uint16_t),
    K(i8_to_f32, float, int8_t),         K(u8_to_f32, float, uint8_t),
    K(i16_to_f32, float, int16_t),       K(u16_to_f32, float, uint16_t),
    K(i32_to_f32, float, int32_t),       K(u32_to_f32, float, uint32_t),
    K(i64_to_f32, float, int64_t),       K(u64_to_f32, float, uint64_t),
    K(f64_to_f32, float, double),
};
#undef K
#define N_KERNELS (sizeof KERNELS / sizeof KERNELS[0])

/* Hex of an element of the given size, for failure lines. */
static inline unsigned long long elem_bits(const void *p, size_t size)
{
    unsigned long long v = 0;
    memcpy(&v, p, size); /* little-endian x86/arm64: low bytes first */
    return v;
}

/* Runs k on the oracle and on the level; reports every differing element. */
static inline void compare_kernel(const struct kernel *k, const void *src, size_t n, void *exp, void *act)
{
    use_oracle();
    check_rc(k->fn(exp, src, n), ST_OK, k->name);
    use_level();
    check_rc(k->fn(act, src, n), ST_OK, k->name);
    if (memcmp(exp, act, n * k->dst_size) == 0)
        return;
    for (size_t i = 0; i < n; i++) {
        const char *e = (const char *)exp + i * k->dst_size, *a = (const char *)act + i * k->dst_size;
        if (memcmp(e, a, k->dst_size) != 0)
            fail("%s: in=0x%0*llx expected=0x%0*llx actual=0x%0*llx", k->name,
                 (int)(2 * k->src_size), elem_bits((const char *)src + i * k->src_size, k->src_size),
                 (int)(2 * k->dst_size), elem_bits(e, k->dst_size), (int)(2 * k->dst_size),
                 elem_bits(a, k->dst_size));
    }
}

static inline const struct kernel *kernel_by_name(const char *name)
{
    for (size_t i = 0; i < N_KERNELS; i++)
        if (strcmp(KERNELS[i].name, name) == 0)
            return &KERNELS[i];
    printf("FATAL: no kernel %s\n", name);
    exit(1);
}

#endif /* STN_TEST_UTIL_H */
