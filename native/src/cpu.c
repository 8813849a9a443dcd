/*
 * CPU feature detection by cpuid, plus the OS check (XGETBV): an instruction set
 * is only usable if the kernel saves its registers on a context switch.
 * Compiled without ISA flags: this runs before any level is chosen.
 */
#include <stdatomic.h>

#include "kernels_internal.h"

#if defined(STN_X86)
#include <cpuid.h>

enum { LEVEL_SCALAR = 1, LEVEL_AVX2 = 2, LEVEL_AVX512 = 3, LEVEL_AVX512BF16 = 4 };

static uint64_t read_xcr0(void)
{
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}

static int detect_level(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d))
        return LEVEL_SCALAR;
    int fma = (c >> 12) & 1, osxsave = (c >> 27) & 1, avx = (c >> 28) & 1, f16c = (c >> 29) & 1;
    if (!(fma && osxsave && avx && f16c))
        return LEVEL_SCALAR;
    uint64_t xcr0 = read_xcr0();
    if ((xcr0 & 0x6) != 0x6) /* SSE and AVX (YMM) state */
        return LEVEL_SCALAR;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
        return LEVEL_SCALAR;
    int avx2 = (b >> 5) & 1;
    int avx512f = (b >> 16) & 1, avx512bw = (b >> 30) & 1, avx512vl = (b >> 31) & 1;
    if (!avx2)
        return LEVEL_SCALAR;
    if (!(avx512f && avx512bw && avx512vl && (xcr0 & 0xE6) == 0xE6)) /* + opmask, ZMM state */
        return LEVEL_AVX2;
    int avx512dq = (b >> 17) & 1;
    unsigned a1, b1, c1, d1;
    if (avx512dq && a >= 1 && __get_cpuid_count(7, 1, &a1, &b1, &c1, &d1) && ((a1 >> 5) & 1)) /* AVX512_BF16 */
        return LEVEL_AVX512BF16;
    return LEVEL_AVX512;
}

/* cpuid traps to the hypervisor in a VM, so ask once. 0 = not asked yet. */
static _Atomic int cached_level;

static int cpu_level(void)
{
    int l = atomic_load_explicit(&cached_level, memory_order_relaxed);
    if (l == 0) {
        l = detect_level();
        atomic_store_explicit(&cached_level, l, memory_order_relaxed);
    }
    return l;
}

int stn_cpu_has_avx2(void)
{
    return cpu_level() >= LEVEL_AVX2;
}

int stn_cpu_has_avx512(void)
{
    return cpu_level() >= LEVEL_AVX512;
}

int stn_cpu_has_avx512bf16(void)
{
    return cpu_level() >= LEVEL_AVX512BF16;
}

#else /* not x86: only the scalar level exists */

int stn_cpu_has_avx2(void)
{
    return 0;
}

int stn_cpu_has_avx512(void)
{
    return 0;
}

int stn_cpu_has_avx512bf16(void)
{
    return 0;
}

#endif
