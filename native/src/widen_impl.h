/*
 * Integer -> F32 widening loops, included by each kernels_*.c so that -O3
 * auto-vectorizes them for that file's ISA. C's (float) cast is the rule
 * (round to nearest even; u64 is correctly rounded by the compiler's sequence).
 */
#ifndef STN_WIDEN_IMPL_H
#define STN_WIDEN_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "safetensors_native.h"

#define STN_WIDEN_ONE(PREFIX, NAME, T)                                                     \
    static int PREFIX##_##NAME(float *restrict dst, const T *restrict src, size_t n)       \
    {                                                                                      \
        for (size_t i = 0; i < n; i++)                                                     \
            dst[i] = (float)src[i];                                                        \
        return ST_OK;                                                                      \
    }

/* Defines PREFIX_i8_to_f32 ... PREFIX_u64_to_f32. */
#define STN_DEFINE_WIDEN(PREFIX)                                                           \
    STN_WIDEN_ONE(PREFIX, i8_to_f32, int8_t)                                               \
    STN_WIDEN_ONE(PREFIX, u8_to_f32, uint8_t)                                              \
    STN_WIDEN_ONE(PREFIX, i16_to_f32, int16_t)                                             \
    STN_WIDEN_ONE(PREFIX, u16_to_f32, uint16_t)                                            \
    STN_WIDEN_ONE(PREFIX, i32_to_f32, int32_t)                                             \
    STN_WIDEN_ONE(PREFIX, u32_to_f32, uint32_t)                                            \
    STN_WIDEN_ONE(PREFIX, i64_to_f32, int64_t)                                             \
    STN_WIDEN_ONE(PREFIX, u64_to_f32, uint64_t)

/* Table initializer fragment for the eight entries defined above. */
#define STN_WIDEN_ENTRIES(PREFIX)                                                          \
    .i8_to_f32 = PREFIX##_i8_to_f32, .u8_to_f32 = PREFIX##_u8_to_f32,                      \
    .i16_to_f32 = PREFIX##_i16_to_f32, .u16_to_f32 = PREFIX##_u16_to_f32,                  \
    .i32_to_f32 = PREFIX##_i32_to_f32, .u32_to_f32 = PREFIX##_u32_to_f32,                  \
    .i64_to_f32 = PREFIX##_i64_to_f32, .u64_to_f32 = PREFIX##_u64_to_f32

#endif /* STN_WIDEN_IMPL_H */
