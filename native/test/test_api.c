/*
 * API rules at the given level: versions, ISA names, st_select_isa errors,
 * NULL with n > 0 -> ST_ERR_NULL, NULL with n == 0 -> ST_OK (dst untouched).
 */
#include "test_util.h"

static void check_detection(void)
{
#if defined(STN_X86)
    /* Cross-check cpu.c's cpuid/xgetbv code with the compiler's own detection. */
    __builtin_cpu_init();
    int avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    int avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                 __builtin_cpu_supports("avx512vl");
    if (st_isa_supported("avx2") != avx2)
        fail("st_isa_supported(avx2)=%d but the compiler's detection says %d", st_isa_supported("avx2"), avx2);
    if (st_isa_supported("avx512") != avx512)
        fail("st_isa_supported(avx512)=%d but the compiler's detection says %d", st_isa_supported("avx512"),
             avx512);
    int avx512bf16 = avx512 && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bf16");
    if (st_isa_supported("avx512bf16") != avx512bf16)
        fail("st_isa_supported(avx512bf16)=%d but the compiler's detection says %d",
             st_isa_supported("avx512bf16"), avx512bf16);
#endif
}

int main(int argc, char **argv)
{
    test_begin(argc, argv, "api");
    use_level();

    if (strcmp(st_version(), "0.1.0") != 0)
        fail("st_version() = \"%s\", expected \"0.1.0\"", st_version());
    if (st_abi_version() != ST_ABI_VERSION)
        fail("st_abi_version() = %d, expected %d", st_abi_version(), ST_ABI_VERSION);

    if (st_isa_supported("scalar") != 1)
        fail("st_isa_supported(scalar) != 1");
    const char *not_levels[] = {"bogus", "unsupported", "AVX2", "", "scalar ", "avx"};
    for (size_t i = 0; i < sizeof not_levels / sizeof not_levels[0]; i++) {
        if (st_isa_supported(not_levels[i]) != 0)
            fail("st_isa_supported(\"%s\") != 0", not_levels[i]);
        check_rc(st_select_isa(not_levels[i]), ST_ERR_UNSUPPORTED, "st_select_isa(non-level)");
        if (strcmp(st_isa_name(), g_level) != 0)
            fail("a failed st_select_isa(\"%s\") changed the level to %s", not_levels[i], st_isa_name());
    }
    if (st_isa_supported(NULL) != 0)
        fail("st_isa_supported(NULL) != 0");
    check_rc(st_select_isa(NULL), ST_ERR_UNSUPPORTED, "st_select_isa(NULL)");
    check_detection();

    unsigned char src[64], dst[64], before[64];
    fill_random(src, sizeof src);
    fill_random(dst, sizeof dst);
    memcpy(before, dst, sizeof dst);
    for (size_t k = 0; k < N_KERNELS; k++) {
        const struct kernel *kk = &KERNELS[k];
        check_rc(kk->fn(NULL, src, 5), ST_ERR_NULL, kk->name);
        check_rc(kk->fn(dst, NULL, 5), ST_ERR_NULL, kk->name);
        check_rc(kk->fn(NULL, NULL, 1), ST_ERR_NULL, kk->name);
        check_rc(kk->fn(NULL, NULL, 0), ST_OK, kk->name);
        check_rc(kk->fn(dst, NULL, 0), ST_OK, kk->name);
        check_rc(kk->fn(NULL, src, 0), ST_OK, kk->name);
        check_rc(kk->fn(dst, src, 0), ST_OK, kk->name);
        if (memcmp(dst, before, sizeof dst) != 0)
            fail("%s: an error or n == 0 call wrote to dst", kk->name);
    }
    return test_end("api");
}
