/*
 * Internal: one table of kernel entry points per ISA level. The exported st_*
 * functions (dispatch.c) check arguments, then call through the active table.
 * Table entries may assume: pointers are valid when n > 0 and gather indices
 * have already been validated (dispatch.c does both).
 */
#ifndef STN_KERNELS_INTERNAL_H
#define STN_KERNELS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "safetensors_native.h"

typedef int (*stn_u16_f32_fn)(float *dst, const uint16_t *src, size_t n);
typedef int (*stn_f32_u16_fn)(uint16_t *dst, const float *src, size_t n);
typedef int (*stn_u16_u16_fn)(uint16_t *dst, const uint16_t *src, size_t n);

/* dispatch.c validated every index already, but another thread may change
   them since: gathers load each index once, check it against n_rows and use
   that value (ST_ERR_INDEX if it went bad). */
typedef int (*stn_gather_u32_fn)(void *dst, const void *table, size_t n_rows, size_t row_bytes,
                                 const uint32_t *idx, size_t n_idx);
typedef int (*stn_gather_i64_fn)(void *dst, const void *table, size_t n_rows, size_t row_bytes,
                                 const int64_t *idx, size_t n_idx);
typedef int (*stn_gather_cvt_u32_fn)(float *dst, const uint16_t *table, size_t n_rows,
                                     size_t row_elems, const uint32_t *idx, size_t n_idx);
typedef int (*stn_gather_cvt_i64_fn)(float *dst, const uint16_t *table, size_t n_rows,
                                     size_t row_elems, const int64_t *idx, size_t n_idx);

struct stn_kernels {
    const char *name;

    stn_u16_f32_fn bf16_to_f32;
    stn_f32_u16_fn f32_to_bf16_rne;
    stn_f32_u16_fn f32_to_bf16_trunc;
    stn_u16_f32_fn f16_to_f32;
    stn_f32_u16_fn f32_to_f16_rne;
    stn_f32_u16_fn f32_to_f16_trunc;
    stn_u16_u16_fn f16_to_bf16;
    stn_u16_u16_fn bf16_to_f16;

    int (*i8_to_f32)(float *dst, const int8_t *src, size_t n);
    int (*u8_to_f32)(float *dst, const uint8_t *src, size_t n);
    int (*i16_to_f32)(float *dst, const int16_t *src, size_t n);
    stn_u16_f32_fn u16_to_f32;
    int (*i32_to_f32)(float *dst, const int32_t *src, size_t n);
    int (*u32_to_f32)(float *dst, const uint32_t *src, size_t n);
    int (*i64_to_f32)(float *dst, const int64_t *src, size_t n);
    int (*u64_to_f32)(float *dst, const uint64_t *src, size_t n);
    int (*f64_to_f32)(float *dst, const double *src, size_t n);

    stn_gather_u32_fn gather_u32;
    stn_gather_i64_fn gather_i64;
    stn_gather_cvt_u32_fn gather_f16_to_f32_u32;
    stn_gather_cvt_i64_fn gather_f16_to_f32_i64;
    stn_gather_cvt_u32_fn gather_bf16_to_f32_u32;
    stn_gather_cvt_i64_fn gather_bf16_to_f32_i64;
};

extern const struct stn_kernels stn_kernels_scalar;
extern const struct stn_kernels stn_kernels_unsupported;
#if defined(STN_X86)
extern const struct stn_kernels stn_kernels_avx2;
extern const struct stn_kernels stn_kernels_avx512;
extern const struct stn_kernels stn_kernels_avx512bf16;
#endif

/* fault_guard.c: installs the SIGBUS/SIGSEGV handler (library constructor). */
void stn_guard_install(void);

/* cpu.c: 1 if the CPU and the OS (saved register state) support the level. */
int stn_cpu_has_avx2(void);
int stn_cpu_has_avx512(void);
int stn_cpu_has_avx512bf16(void); /* avx512 + AVX512_DQ + AVX512_BF16 */

#endif /* STN_KERNELS_INTERNAL_H */
