/*
 * Exported st_* entry points: cheap argument checks, then a call through the
 * active level's table. The level is chosen once at load (constructor, with a
 * first-use fallback) from cpuid or SAFETENSORS_NATIVE_ISA.
 */
/* sigsetjmp and sigset_t need POSIX; the library is otherwise plain C11. */
#define _POSIX_C_SOURCE 200809L
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "fault_guard.h"
#include "kernels_internal.h"

#define STN_VERSION "0.1.0"

/* A level by its public name, or NULL if the name is unknown. */
static const struct stn_kernels *level_by_name(const char *name)
{
    if (name == NULL)
        return NULL;
    if (strcmp(name, "scalar") == 0)
        return &stn_kernels_scalar;
#if defined(STN_X86)
    if (strcmp(name, "avx2") == 0)
        return &stn_kernels_avx2;
    if (strcmp(name, "avx512") == 0)
        return &stn_kernels_avx512;
    if (strcmp(name, "avx512bf16") == 0)
        return &stn_kernels_avx512bf16;
#endif
    return NULL;
}

static int level_runs_here(const struct stn_kernels *k)
{
    if (k == &stn_kernels_scalar)
        return 1;
#if defined(STN_X86)
    if (k == &stn_kernels_avx2)
        return stn_cpu_has_avx2();
    if (k == &stn_kernels_avx512)
        return stn_cpu_has_avx512();
    if (k == &stn_kernels_avx512bf16)
        return stn_cpu_has_avx512bf16();
#endif
    return 0;
}

static const struct stn_kernels *best_level(void)
{
#if defined(STN_X86)
    if (stn_cpu_has_avx512bf16())
        return &stn_kernels_avx512bf16;
    if (stn_cpu_has_avx512())
        return &stn_kernels_avx512;
    if (stn_cpu_has_avx2())
        return &stn_kernels_avx2;
#endif
    return &stn_kernels_scalar;
}

/* An unset or empty variable means "choose by cpuid". */
static const struct stn_kernels *initial_level(void)
{
    const char *env = getenv("SAFETENSORS_NATIVE_ISA");
    if (env == NULL || env[0] == '\0')
        return best_level();
    const struct stn_kernels *k = level_by_name(env);
    return (k != NULL && level_runs_here(k)) ? k : &stn_kernels_unsupported;
}

static _Atomic(const struct stn_kernels *) active_level;

static const struct stn_kernels *active(void)
{
    const struct stn_kernels *k = atomic_load_explicit(&active_level, memory_order_acquire);
    if (k == NULL) { /* only if called before the constructor ran */
        const struct stn_kernels *none = NULL;
        k = initial_level();
        if (!atomic_compare_exchange_strong(&active_level, &none, k))
            k = none; /* another thread (or st_select_isa) got there first */
    }
    return k;
}

__attribute__((constructor)) static void stn_init(void)
{
    (void)active();
    stn_guard_install();
}

ST_API const char *st_version(void)
{
    return STN_VERSION;
}

ST_API int st_abi_version(void)
{
    return ST_ABI_VERSION;
}

ST_API const char *st_isa_name(void)
{
    return active()->name;
}

ST_API int st_isa_supported(const char *name)
{
    const struct stn_kernels *k = level_by_name(name);
    return k != NULL && level_runs_here(k);
}

/* On failure the active level stays as it was. */
ST_API int st_select_isa(const char *name)
{
    const struct stn_kernels *k = level_by_name(name);
    if (k == NULL || !level_runs_here(k))
        return ST_ERR_UNSUPPORTED;
    atomic_store_explicit(&active_level, k, memory_order_release);
    return ST_OK;
}

/* ---- element-wise conversions ---- */


/* Even n == 0 goes through the table, so the "unsupported" level says so. */
#define CONVERT(NAME, DST_T, SRC_T)                                                        \
    ST_API int st_##NAME(DST_T *dst, const SRC_T *src, size_t n)                           \
    {                                                                                      \
        if (n != 0 && (dst == NULL || src == NULL))                                        \
            return ST_ERR_NULL;                                                            \
        int rc;                                                                            \
        STN_GUARDED(rc, active()->NAME(dst, src, n));                                      \
        return rc;                                                                         \
    }
CONVERT(bf16_to_f32, float, uint16_t)
CONVERT(f32_to_bf16_rne, uint16_t, float)
CONVERT(f32_to_bf16_trunc, uint16_t, float)
CONVERT(f16_to_f32, float, uint16_t)
CONVERT(f32_to_f16_rne, uint16_t, float)
CONVERT(f32_to_f16_trunc, uint16_t, float)
CONVERT(f16_to_bf16, uint16_t, uint16_t)
CONVERT(bf16_to_f16, uint16_t, uint16_t)
CONVERT(i8_to_f32, float, int8_t)
CONVERT(u8_to_f32, float, uint8_t)
CONVERT(i16_to_f32, float, int16_t)
CONVERT(u16_to_f32, float, uint16_t)
CONVERT(i32_to_f32, float, int32_t)
CONVERT(u32_to_f32, float, uint32_t)
CONVERT(i64_to_f32, float, int64_t)
CONVERT(u64_to_f32, float, uint64_t)
CONVERT(f64_to_f32, float, double)
#undef CONVERT

/* ---- gather ---- */

/* Largest index, so one compare checks them all (a negative i64 becomes huge). */
static int indices_ok_u32(const uint32_t *idx, size_t n, size_t n_rows)
{
    uint32_t max = 0;
    for (size_t i = 0; i < n; i++)
        max = idx[i] > max ? idx[i] : max;
    return (size_t)max < n_rows;
}

static int indices_ok_i64(const int64_t *idx, size_t n, size_t n_rows)
{
    uint64_t max = 0;
    for (size_t i = 0; i < n; i++)
        max = (uint64_t)idx[i] > max ? (uint64_t)idx[i] : max;
    return max < (uint64_t)n_rows;
}

/* ST_OK if a gather with these sizes can be done: pointers present, a non-empty
   row, and neither the table nor dst larger than the address space. */
static int gather_args(const void *dst, const void *table, size_t n_rows, size_t row_bytes,
                       const void *idx, size_t n_idx)
{
    if (dst == NULL || idx == NULL || (table == NULL && n_rows != 0))
        return ST_ERR_NULL;
    if (row_bytes == 0)
        return ST_ERR_ARGUMENT;
    if (n_rows > SIZE_MAX / row_bytes || n_idx > SIZE_MAX / row_bytes)
        return ST_ERR_ARGUMENT;
    return ST_OK;
}

/* Same for gather-and-convert: 2-byte source and 4-byte destination elements. */
static int gather_convert_args(const void *dst, const void *table, size_t n_rows,
                               size_t row_elems, const void *idx, size_t n_idx)
{
    if (row_elems > SIZE_MAX / sizeof(float))
        return ST_ERR_ARGUMENT;
    int rc = gather_args(dst, table, n_rows, row_elems * sizeof(uint16_t), idx, n_idx);
    if (rc == ST_OK && n_idx > SIZE_MAX / (row_elems * sizeof(float)))
        rc = ST_ERR_ARGUMENT;
    return rc;
}

/* The checks that read caller memory (indices) and the copy, under one guard. */
#define GATHER_BODY(NAME, DST_T, TAB_T, IDX_T, INDICES_OK)                                  \
    static int NAME##_body(const struct stn_kernels *k, DST_T *dst, const TAB_T *table,     \
                           size_t n_rows, size_t row, const IDX_T *idx, size_t n_idx)       \
    {                                                                                      \
        if (n_idx != 0 && !INDICES_OK(idx, n_idx, n_rows))                                \
            return ST_ERR_INDEX;                                                           \
        return k->NAME(dst, table, n_rows, row, idx, n_idx);                               \
    }

/* Order: NULL, ARGUMENT, INDEX (all before any write); n_idx == 0 goes straight
   to the table, so it is ST_OK whatever the pointers (or UNSUPPORTED). */
#define GATHER(NAME, DST_T, TAB_T, IDX_T, ARGS_OK, INDICES_OK)                            \
    GATHER_BODY(NAME, DST_T, TAB_T, IDX_T, INDICES_OK)                                      \
    ST_API int st_##NAME(DST_T *dst, const TAB_T *table, size_t n_rows, size_t row,         \
                         const IDX_T *idx, size_t n_idx)                                    \
    {                                                                                      \
        if (n_idx != 0) {                                                                  \
            int rc = ARGS_OK(dst, table, n_rows, row, idx, n_idx);                         \
            if (rc != ST_OK)                                                               \
                return rc;                                                                 \
        }                                                                                  \
        int rc;                                                                            \
        STN_GUARDED(rc, NAME##_body(active(), dst, table, n_rows, row, idx, n_idx));       \
        return rc;                                                                         \
    }
GATHER(gather_u32, void, void, uint32_t, gather_args, indices_ok_u32)
GATHER(gather_i64, void, void, int64_t, gather_args, indices_ok_i64)
GATHER(gather_f16_to_f32_u32, float, uint16_t, uint32_t, gather_convert_args, indices_ok_u32)
GATHER(gather_f16_to_f32_i64, float, uint16_t, int64_t, gather_convert_args, indices_ok_i64)
GATHER(gather_bf16_to_f32_u32, float, uint16_t, uint32_t, gather_convert_args, indices_ok_u32)
GATHER(gather_bf16_to_f32_i64, float, uint16_t, int64_t, gather_convert_args, indices_ok_i64)
#undef GATHER
#undef GATHER_BODY
