/*
 * safetensors_native: SIMD dtype conversion and row-gather kernels.
 *
 * Contract (shared by every ISA variant, which must agree bit for bit with the
 * scalar oracle):
 *   - Pointers and lengths in, a status code out. No I/O, no allocation, no abort.
 *   - Lengths count ELEMENTS unless the parameter name says bytes.
 *   - Buffers may be unaligned. Source and destination must not overlap.
 *   - The caller (the Java Kernels facade) has already checked every bound; the
 *     library checks again where it is cheap (NULL with n > 0, gather indices)
 *     and returns an error instead of touching memory it was not given.
 *
 * Rounding and NaN rules (the "why" is in docs of each function):
 *   - "rne"   = IEEE round-to-nearest-even, independent of MXCSR.
 *   - "trunc" = IEEE round-toward-zero (for BF16 that is "keep the top 16 bits"
 *               for every finite value; F16 finite overflow saturates to
 *               +-65504, i.e. 0x7BFF/0xFBFF; infinities stay infinite).
 *   - Widening (BF16->F32, F16->F32) is exact for every bit pattern, NaNs
 *     included: sign and payload are kept and a signalling NaN stays signalling.
 *   - F32->BF16 (rne and trunc): NaN -> 0x7FC0 or 0xFFC0 (canonical quiet NaN,
 *     sign kept), never Inf. Non-NaN rne results equal PyTorch/ml_dtypes.
 *   - F32->F16 (rne and trunc): NaN -> sign | 0x7E00 | (mantissa >> 13)
 *     (quiet bit forced, top payload bits kept), the F16C hardware rule.
 *   - F16<->BF16 go through F32 (exact widening, then one rounding), so they are
 *     correctly rounded and follow the NaN rule of the narrowing step.
 *   - Integer/F64 -> F32 follow C's (float) cast in the default rounding mode,
 *     i.e. numpy astype(float32): round-to-nearest-even; F64 NaN keeps sign and
 *     the top payload bits and is quieted; F64 overflow gives +-Inf.
 */
#ifndef SAFETENSORS_NATIVE_H
#define SAFETENSORS_NATIVE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define ST_API __declspec(dllexport)
#else
#define ST_API __attribute__((visibility("default")))
#endif

/* Status codes. */
#define ST_OK 0
#define ST_ERR_NULL 1          /* a NULL pointer with a non-zero length */
#define ST_ERR_INDEX 2         /* a gather index < 0 or >= n_rows */
#define ST_ERR_UNSUPPORTED 3   /* the selected ISA cannot run on this CPU / unknown ISA name */
#define ST_ERR_ARGUMENT 4      /* any other bad argument (e.g. row_bytes == 0 with rows) */
#define ST_ERR_FAULT 5         /* reading or writing caller memory faulted (SIGBUS/SIGSEGV), e.g. a
                                  mapped file truncated by another process; dst may be partly written */

/* ABI version of this header; bumped on any incompatible change. Java refuses a mismatch. */
#define ST_ABI_VERSION 3

/* Library version string, e.g. "0.1.0". Never NULL. */
ST_API const char *st_version(void);
/* ST_ABI_VERSION the library was built with. */
ST_API int st_abi_version(void);

/*
 * Memory faults. At load (Linux x86-64 and aarch64) the library installs a
 * SIGBUS/SIGSEGV handler that turns a fault raised by one of its own
 * instructions during a kernel call into the status ST_ERR_FAULT; every other
 * signal is passed to the handler installed before (in a JVM, the JVM's), with
 * the same arguments. SAFETENSORS_NATIVE_FAULT_GUARD=0 at load leaves the
 * signal handlers alone (then a fault ends the process, as before ABI 2).
 * Faults are caught on the reads and writes of the kernels and of the index
 * checks; a memory area that another thread unmaps or remaps during a call is
 * still the caller's responsibility (it may read someone else's memory).
 */
/* 1 if calls are guarded: the handler is installed, still the one the process
   has, and not switched off. */
ST_API int st_fault_guard_active(void);
/*
 * Switches the guard on (on != 0) or off for the kernel calls that start after
 * it returns, in every thread; returns st_fault_guard_active(). Off, a fault in
 * a kernel ends the process as without the guard. It can be switched on only
 * where the handler was installed at load. The switch exists to measure the
 * guard's cost inside one process, where everything else stays the same.
 */
ST_API int st_fault_guard_enable(int on);
/* The address of the last fault this thread turned into ST_ERR_FAULT (0 if none). */
ST_API uintptr_t st_last_fault_address(void);

/*
 * ISA dispatch. At load the best supported level is chosen once by cpuid, in
 * priority order "avx512bf16" (avx512 + AVX512_DQ + AVX512_BF16), "avx512"
 * (AVX-512 F+BW+VL), "avx2" (AVX2+F16C+FMA), "scalar". The environment
 * variable SAFETENSORS_NATIVE_ISA (scalar|avx2|avx512|avx512bf16) forces
 * a level; an unknown or unsupported name selects "unsupported", in which every
 * kernel returns ST_ERR_UNSUPPORTED (the library never aborts or prints).
 * Names are lower case; an empty variable counts as unset. Under "unsupported"
 * the NULL/argument checks still come first, and n == 0 also gives
 * ST_ERR_UNSUPPORTED.
 */
ST_API const char *st_isa_name(void);
/* 1 if the named level can run on this CPU, else 0. */
ST_API int st_isa_supported(const char *name);
/* Switch the active level at run time (tests and benchmarks). ST_OK or ST_ERR_UNSUPPORTED. Not thread-safe against concurrent kernel calls.
   On ST_ERR_UNSUPPORTED the active level is unchanged. */
ST_API int st_select_isa(const char *name);

/* ---- 16 <-> 32 bit float conversions; n = element count ---- */
ST_API int st_bf16_to_f32(float *dst, const uint16_t *src, size_t n);
ST_API int st_f32_to_bf16_rne(uint16_t *dst, const float *src, size_t n);
ST_API int st_f32_to_bf16_trunc(uint16_t *dst, const float *src, size_t n);
ST_API int st_f16_to_f32(float *dst, const uint16_t *src, size_t n);
ST_API int st_f32_to_f16_rne(uint16_t *dst, const float *src, size_t n);
ST_API int st_f32_to_f16_trunc(uint16_t *dst, const float *src, size_t n);
ST_API int st_f16_to_bf16(uint16_t *dst, const uint16_t *src, size_t n);   /* rne */
ST_API int st_bf16_to_f16(uint16_t *dst, const uint16_t *src, size_t n);   /* rne */

/* ---- widening to F32 (numpy astype(float32) semantics) ---- */
ST_API int st_i8_to_f32(float *dst, const int8_t *src, size_t n);
ST_API int st_u8_to_f32(float *dst, const uint8_t *src, size_t n);
ST_API int st_i16_to_f32(float *dst, const int16_t *src, size_t n);
ST_API int st_u16_to_f32(float *dst, const uint16_t *src, size_t n);
ST_API int st_i32_to_f32(float *dst, const int32_t *src, size_t n);
ST_API int st_u32_to_f32(float *dst, const uint32_t *src, size_t n);
ST_API int st_i64_to_f32(float *dst, const int64_t *src, size_t n);
ST_API int st_u64_to_f32(float *dst, const uint64_t *src, size_t n);
ST_API int st_f64_to_f32(float *dst, const double *src, size_t n);

/*
 * ---- gather ----
 * dst[i*row_bytes .. +row_bytes) = table[idx[i]*row_bytes .. +row_bytes) for i < n_idx.
 * Every index is checked against n_rows before anything is written; on a bad
 * index the call returns ST_ERR_INDEX and dst is untouched.
 * Indices another thread changes during the call: the copy loop loads each
 * index once, checks that value and uses it, so a racing writer can make rows
 * wrong but never makes the kernel read outside the table; an index that became
 * bad after the first check gives ST_ERR_INDEX with dst partly written.
 * With n_idx > 0 the checks run in this order, all before any write: NULL dst
 * or idx, or NULL table with n_rows > 0 -> ST_ERR_NULL; row_bytes (row_elems)
 * == 0, or a table/dst byte size that overflows size_t -> ST_ERR_ARGUMENT; a bad
 * index -> ST_ERR_INDEX. n_idx == 0 writes nothing and returns ST_OK whatever
 * the other arguments (ST_ERR_UNSUPPORTED under "unsupported").
 */
ST_API int st_gather_u32(void *dst, const void *table, size_t n_rows, size_t row_bytes,
                         const uint32_t *idx, size_t n_idx);
ST_API int st_gather_i64(void *dst, const void *table, size_t n_rows, size_t row_bytes,
                         const int64_t *idx, size_t n_idx);

/* Gather-and-convert: table holds n_rows rows of row_elems 16-bit values; dst gets n_idx*row_elems floats. */
ST_API int st_gather_f16_to_f32_u32(float *dst, const uint16_t *table, size_t n_rows, size_t row_elems,
                                    const uint32_t *idx, size_t n_idx);
ST_API int st_gather_f16_to_f32_i64(float *dst, const uint16_t *table, size_t n_rows, size_t row_elems,
                                    const int64_t *idx, size_t n_idx);
ST_API int st_gather_bf16_to_f32_u32(float *dst, const uint16_t *table, size_t n_rows, size_t row_elems,
                                     const uint32_t *idx, size_t n_idx);
ST_API int st_gather_bf16_to_f32_i64(float *dst, const uint16_t *table, size_t n_rows, size_t row_elems,
                                     const int64_t *idx, size_t n_idx);

#ifdef __cplusplus
}
#endif
#endif /* SAFETENSORS_NATIVE_H */
