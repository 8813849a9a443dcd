/*
 * The "unsupported" level: selected when SAFETENSORS_NATIVE_ISA names a level
 * that is unknown or cannot run here. Every kernel reports ST_ERR_UNSUPPORTED
 * instead of aborting, so the Java side can fail with a clear message.
 */
#include "kernels_internal.h"

/* One stub per distinct signature; the parameters are unused on purpose. */
#define UNSUPPORTED(NAME, DST_T, SRC_T)                                                    \
    static int NAME(DST_T *dst, const SRC_T *src, size_t n)                                \
    {                                                                                      \
        (void)dst;                                                                         \
        (void)src;                                                                         \
        (void)n;                                                                           \
        return ST_ERR_UNSUPPORTED;                                                         \
    }
UNSUPPORTED(u16_f32, float, uint16_t)
UNSUPPORTED(f32_u16, uint16_t, float)
UNSUPPORTED(u16_u16, uint16_t, uint16_t)
UNSUPPORTED(i8_f32, float, int8_t)
UNSUPPORTED(u8_f32, float, uint8_t)
UNSUPPORTED(i16_f32, float, int16_t)
UNSUPPORTED(i32_f32, float, int32_t)
UNSUPPORTED(u32_f32, float, uint32_t)
UNSUPPORTED(i64_f32, float, int64_t)
UNSUPPORTED(u64_f32, float, uint64_t)
UNSUPPORTED(f64_f32, float, double)
#undef UNSUPPORTED

#define UNSUPPORTED_GATHER(NAME, DST_T, TAB_T, IDX_T)                                      \
    static int NAME(DST_T *dst, const TAB_T *table, size_t n_rows, size_t row,             \
                    const IDX_T *idx, size_t n)                                            \
    {                                                                                      \
        (void)dst;                                                                         \
        (void)table;                                                                       \
        (void)n_rows;                                                                      \
        (void)row;                                                                         \
        (void)idx;                                                                         \
        (void)n;                                                                           \
        return ST_ERR_UNSUPPORTED;                                                         \
    }
UNSUPPORTED_GATHER(gather_u32, void, void, uint32_t)
UNSUPPORTED_GATHER(gather_i64, void, void, int64_t)
UNSUPPORTED_GATHER(gather_cvt_u32, float, uint16_t, uint32_t)
UNSUPPORTED_GATHER(gather_cvt_i64, float, uint16_t, int64_t)
#undef UNSUPPORTED_GATHER

const struct stn_kernels stn_kernels_unsupported = {
    .name = "unsupported",
    .bf16_to_f32 = u16_f32,
    .f32_to_bf16_rne = f32_u16,
    .f32_to_bf16_trunc = f32_u16,
    .f16_to_f32 = u16_f32,
    .f32_to_f16_rne = f32_u16,
    .f32_to_f16_trunc = f32_u16,
    .f16_to_bf16 = u16_u16,
    .bf16_to_f16 = u16_u16,
    .i8_to_f32 = i8_f32,
    .u8_to_f32 = u8_f32,
    .i16_to_f32 = i16_f32,
    .u16_to_f32 = u16_f32,
    .i32_to_f32 = i32_f32,
    .u32_to_f32 = u32_f32,
    .i64_to_f32 = i64_f32,
    .u64_to_f32 = u64_f32,
    .f64_to_f32 = f64_f32,
    .gather_u32 = gather_u32,
    .gather_i64 = gather_i64,
    .gather_f16_to_f32_u32 = gather_cvt_u32,
    .gather_f16_to_f32_i64 = gather_cvt_i64,
    .gather_bf16_to_f32_u32 = gather_cvt_u32,
    .gather_bf16_to_f32_i64 = gather_cvt_i64,
};
