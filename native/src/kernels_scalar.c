/*
 * Scalar reference kernels: portable C11, the oracle every SIMD level must match
 * bit for bit. Compiled without ISA flags so this level runs on any 64-bit CPU.
 */
#include "convert_scalar.h"
#include "gather_impl.h"
#include "kernels_internal.h"
#include "widen_impl.h"

static int bf16_to_f32(float *restrict dst, const uint16_t *restrict src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        stn_store_f32_bits(dst + i, stn_bf16_to_f32_bits(src[i]));
    return ST_OK;
}

static int f16_to_f32(float *restrict dst, const uint16_t *restrict src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        stn_store_f32_bits(dst + i, stn_f16_to_f32_bits(src[i]));
    return ST_OK;
}

/* Narrowing F32 -> 16-bit: one loop shape, four rounding rules. */
#define NARROW(NAME, ELEM)                                                                 \
    static int NAME(uint16_t *restrict dst, const float *restrict src, size_t n)           \
    {                                                                                      \
        for (size_t i = 0; i < n; i++)                                                     \
            dst[i] = ELEM(stn_load_f32_bits(src + i));                                     \
        return ST_OK;                                                                      \
    }
NARROW(f32_to_bf16_rne, stn_f32_to_bf16_rne_bits)
NARROW(f32_to_bf16_trunc, stn_f32_to_bf16_trunc_bits)
NARROW(f32_to_f16_rne, stn_f32_to_f16_rne_bits)
NARROW(f32_to_f16_trunc, stn_f32_to_f16_trunc_bits)
#undef NARROW

static int f16_to_bf16(uint16_t *restrict dst, const uint16_t *restrict src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = stn_f16_to_bf16_bits(src[i]);
    return ST_OK;
}

static int bf16_to_f16(uint16_t *restrict dst, const uint16_t *restrict src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = stn_bf16_to_f16_bits(src[i]);
    return ST_OK;
}

STN_DEFINE_WIDEN(scalar)

static int f64_to_f32(float *restrict dst, const double *restrict src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = stn_f64_to_f32(src + i);
    return ST_OK;
}

STN_DEFINE_GATHERS(scalar, f16_to_f32, bf16_to_f32)

const struct stn_kernels stn_kernels_scalar = {
    .name = "scalar",
    .bf16_to_f32 = bf16_to_f32,
    .f32_to_bf16_rne = f32_to_bf16_rne,
    .f32_to_bf16_trunc = f32_to_bf16_trunc,
    .f16_to_f32 = f16_to_f32,
    .f32_to_f16_rne = f32_to_f16_rne,
    .f32_to_f16_trunc = f32_to_f16_trunc,
    .f16_to_bf16 = f16_to_bf16,
    .bf16_to_f16 = bf16_to_f16,
    STN_WIDEN_ENTRIES(scalar),
    .f64_to_f32 = f64_to_f32,
    STN_GATHER_ENTRIES(scalar),
};
