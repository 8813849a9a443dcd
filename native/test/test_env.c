/*
 * SAFETENSORS_NATIVE_ISA, set by ctest for this process: a usable level name
 * selects it; an unset or empty variable selects the best level; anything else
 * (unknown name, or a level this CPU lacks) selects "unsupported", whose
 * kernels all return ST_ERR_UNSUPPORTED without touching memory.
 */
#include "test_util.h"

static const char *best_level(void)
{
    return st_isa_supported("avx512bf16") ? "avx512bf16"
           : st_isa_supported("avx512")   ? "avx512"
           : st_isa_supported("avx2")     ? "avx2"
                                          : "scalar";
}

static void check_all_unsupported(void)
{
    unsigned char src[64], dst[64], before[64];
    uint32_t iu = 0;
    int64_t is = 0;
    fill_random(src, sizeof src);
    fill_random(dst, sizeof dst);
    memcpy(before, dst, sizeof dst);
    for (size_t k = 0; k < N_KERNELS; k++) {
        check_rc(KERNELS[k].fn(dst, src, 4), ST_ERR_UNSUPPORTED, KERNELS[k].name);
        check_rc(KERNELS[k].fn(dst, src, 0), ST_ERR_UNSUPPORTED, KERNELS[k].name);
    }
    const uint16_t *t16 = (const uint16_t *)(const void *)src;
    float *f = (float *)(void *)dst;
    check_rc(st_gather_u32(dst, src, 4, 4, &iu, 1), ST_ERR_UNSUPPORTED, "gather_u32");
    check_rc(st_gather_i64(dst, src, 4, 4, &is, 1), ST_ERR_UNSUPPORTED, "gather_i64");
    check_rc(st_gather_f16_to_f32_u32(f, t16, 4, 2, &iu, 1), ST_ERR_UNSUPPORTED, "gather_f16_to_f32_u32");
    check_rc(st_gather_f16_to_f32_i64(f, t16, 4, 2, &is, 1), ST_ERR_UNSUPPORTED, "gather_f16_to_f32_i64");
    check_rc(st_gather_bf16_to_f32_u32(f, t16, 4, 2, &iu, 1), ST_ERR_UNSUPPORTED, "gather_bf16_to_f32_u32");
    check_rc(st_gather_bf16_to_f32_i64(f, t16, 4, 2, &is, 1), ST_ERR_UNSUPPORTED, "gather_bf16_to_f32_i64");
    if (memcmp(dst, before, sizeof dst) != 0)
        fail("an unsupported kernel wrote to dst");
    /* argument errors are still reported as such */
    check_rc(st_f16_to_f32(NULL, t16, 4), ST_ERR_NULL, "f16_to_f32 NULL under unsupported");
}

int main(void)
{
    const char *env = getenv("SAFETENSORS_NATIVE_ISA");
    g_level = "env";
    const char *want;
    if (env == NULL || env[0] == '\0')
        want = best_level();
    else if (st_isa_supported(env))
        want = env;
    else
        want = "unsupported";
    printf("env: SAFETENSORS_NATIVE_ISA=%s%s%s -> expecting level %s\n", env ? "\"" : "(unset)",
           env ? env : "", env ? "\"" : "", want);

    if (strcmp(st_isa_name(), want) != 0)
        fail("st_isa_name() = \"%s\", expected \"%s\"", st_isa_name(), want);
    if (strcmp(want, "unsupported") == 0) {
        check_all_unsupported();
        /* st_select_isa still switches to a real level */
        check_rc(st_select_isa("scalar"), ST_OK, "st_select_isa(scalar) after unsupported");
        if (strcmp(st_isa_name(), "scalar") != 0)
            fail("after st_select_isa(scalar): st_isa_name() = \"%s\"", st_isa_name());
        uint16_t h = 0x3C00;
        float f = 0;
        check_rc(st_f16_to_f32(&f, &h, 1), ST_OK, "f16_to_f32 after switching to scalar");
        if (f != 1.0f)
            fail("f16_to_f32(0x3C00) after switching = %g", (double)f);
    } else {
        uint16_t h = 0x3C00;
        float f = 0;
        check_rc(st_f16_to_f32(&f, &h, 1), ST_OK, "f16_to_f32");
        if (f != 1.0f)
            fail("f16_to_f32(0x3C00) = %g", (double)f);
    }
    /* SAFETENSORS_NATIVE_FAULT_GUARD=0 leaves the signal handlers alone (the calls above then ran
       unguarded); otherwise the guard is in place where it exists (Linux x86-64, aarch64). */
    const char *guard = getenv("SAFETENSORS_NATIVE_FAULT_GUARD");
    int guard_wanted = !(guard != NULL && strcmp(guard, "0") == 0);
#if defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__))
    if (st_fault_guard_active() != guard_wanted)
        fail("st_fault_guard_active() = %d with SAFETENSORS_NATIVE_FAULT_GUARD=%s", st_fault_guard_active(),
             guard ? guard : "(unset)");
    /* Without the handler the switch cannot turn the guard on. */
    if (!guard_wanted && st_fault_guard_enable(1) != 0)
        fail("st_fault_guard_enable(1) turned the guard on with SAFETENSORS_NATIVE_FAULT_GUARD=0");
#else
    (void)guard_wanted;
#endif
    return test_end("env");
}
