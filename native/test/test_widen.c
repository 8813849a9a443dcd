/*
 * Integer / F64 -> F32: edge values and random inputs. A SIMD level is compared
 * with the scalar oracle; every level also with C's (float) cast done here (the
 * contract's definition), with the F64 NaN rule spelled out.
 */
#include "test_util.h"

#define N_RANDOM 1000000u
#define BATCH 65536u

static const uint64_t EDGES[] = {
    0, 1, 2, 0x7F, 0x80, 0xFF, 0x7FFF, 0x8000, 0xFFFF,
    0x00FFFFFF, 0x01000000, 0x01000001, 0x01000002, 0x01000003, 0x7FFFFFBF, 0x7FFFFFC0,
    0x7FFFFFFF, 0x80000000, 0x80000001, 0x80000080, 0x80000081, 0xFFFFFF7F, 0xFFFFFF80,
    0xFFFFFFFF, 0x100000000ull, 0x001FFFFFFFFFFFFFull, 0x0020000000000000ull,
    0x0020000000000001ull, 0x1000001000000001ull, 0x7FFFFF7FFFFFFFFFull, 0x7FFFFF8000000000ull,
    0x7FFFFFFFFFFFFFFFull, 0x8000000000000000ull, 0x8000000000000001ull, 0x8000008000000000ull,
    0x8000008000000001ull, 0x8000018000000000ull, 0xFFFFFF7FFFFFFFFFull, 0xFFFFFF8000000000ull,
    0xFFFFFFFFFFFFFFFEull, 0xFFFFFFFFFFFFFFFFull,
    /* as F64: +-0, subnormals, F32 limits, ties, Inf, NaNs */
    0x0000000000000001ull, 0x000FFFFFFFFFFFFFull, 0x0010000000000000ull, 0x3690000000000000ull,
    0x3690000000000001ull, 0x36A0000000000000ull, 0x380FFFFFFFFFFFFFull, 0x3810000000000000ull,
    0x3FF0000010000000ull, 0x3FF0000030000000ull, 0x3FF0000010000001ull, 0x47EFFFFFE0000000ull,
    0x47EFFFFFF0000000ull, 0x47EFFFFFEFFFFFFFull, 0x7FEFFFFFFFFFFFFFull, 0x7FF0000000000000ull,
    0x7FF0000000000001ull, 0x7FF4000020000000ull, 0x7FF8000000000000ull, 0x7FFFFFFFFFFFFFFFull,
    0x7FF00000FFFFFFFFull, 0xFFF8000000000001ull, 0xFFF0000000000000ull, 0x8000000000000000ull,
};

/* Expected value of element i of src for kernel k, computed with a C cast here. */
static uint32_t cast_here(const struct kernel *k, const void *src, size_t i)
{
    const char *p = (const char *)src + i * k->src_size;
    int8_t i8; uint8_t u8; int16_t i16; uint16_t u16; int32_t i32; uint32_t u32;
    int64_t i64; uint64_t u64; double d;
    switch (k->name[0] == 'f' ? 'f' : k->name[0] == 'i' ? 'i' : 'u') {
    case 'f':
        memcpy(&u64, p, 8);
        if ((u64 & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull) /* NaN: quiet, keep top bits */
            return (uint32_t)(u64 >> 32 & 0x80000000u) | 0x7FC00000u | (uint32_t)(u64 >> 29 & 0x3FFFFFu);
        memcpy(&d, p, 8);
        return f32_bits((float)d);
    case 'i':
        switch (k->src_size) {
        case 1: memcpy(&i8, p, 1); return f32_bits((float)i8);
        case 2: memcpy(&i16, p, 2); return f32_bits((float)i16);
        case 4: memcpy(&i32, p, 4); return f32_bits((float)i32);
        default: memcpy(&i64, p, 8); return f32_bits((float)i64);
        }
    default:
        switch (k->src_size) {
        case 1: memcpy(&u8, p, 1); return f32_bits((float)u8);
        case 2: memcpy(&u16, p, 2); return f32_bits((float)u16);
        case 4: memcpy(&u32, p, 4); return f32_bits((float)u32);
        default: memcpy(&u64, p, 8); return f32_bits((float)u64);
        }
    }
}

static void check(const struct kernel *k, const void *src, size_t n, uint32_t *exp, uint32_t *act)
{
    compare_kernel(k, src, n, exp, act);
    for (size_t i = 0; i < n; i++) {
        uint32_t want = cast_here(k, src, i);
        if (act[i] != want)
            fail("%s (vs C cast): in=0x%0*llx expected=0x%08x actual=0x%08x", k->name,
                 (int)(2 * k->src_size), elem_bits((const char *)src + i * k->src_size, k->src_size),
                 want, act[i]);
    }
}

int main(int argc, char **argv)
{
    test_begin(argc, argv, "widen");
    const char *names[] = {"i8_to_f32", "u8_to_f32", "i16_to_f32", "u16_to_f32", "i32_to_f32",
                           "u32_to_f32", "i64_to_f32", "u64_to_f32", "f64_to_f32"};
    unsigned char *src = xmalloc(BATCH * 8);
    uint32_t *exp = xmalloc(BATCH * 4), *act = xmalloc(BATCH * 4);

    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        const struct kernel *kk = kernel_by_name(names[k]);
        long before = g_failures;
        /* edges: each value truncated to the element size, and negated for the signed view */
        size_t n = 0;
        for (size_t i = 0; i < sizeof EDGES / sizeof EDGES[0]; i++) {
            uint64_t v[2] = {EDGES[i], 0 - EDGES[i]};
            for (int j = 0; j < 2; j++)
                memcpy(src + kk->src_size * n++, &v[j], kk->src_size); /* little-endian */
        }
        check(kk, src, n, exp, act);
        /* random bits, and random values with a random number of high bits cleared
           (to cover every magnitude, not just the huge ones) */
        for (uint32_t done = 0; done < N_RANDOM; done += BATCH) {
            for (uint32_t i = 0; i < BATCH; i++) {
                uint64_t r = rnd64();
                if (i & 1)
                    r >>= rnd64() % 64;
                memcpy(src + kk->src_size * i, &r, kk->src_size);
            }
            check(kk, src, BATCH, exp, act);
        }
        printf("  %-11s %s\n", names[k], g_failures == before ? "ok" : "FAILED");
    }
    free(src);
    free(exp);
    free(act);
    return test_end("widen");
}
