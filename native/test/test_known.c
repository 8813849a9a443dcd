/*
 * Hand-checked answers (worked out from the IEEE formats, not from the
 * library), run at the given level. Each input is repeated REP times so that
 * both the vector body and the tail of a SIMD kernel see it.
 */
#include "test_util.h"

#define REP 37

struct v16 { uint16_t in, out; const char *why; };
struct v32to16 { uint32_t in; uint16_t rne, trunc; const char *why; };
struct v16to32 { uint16_t in; uint32_t out; const char *why; };

static const struct v32to16 BF16[] = {
    {0x3F800000, 0x3F80, 0x3F80, "1.0"},
    {0x3F808000, 0x3F80, 0x3F80, "tie, lsb even: stays"},
    {0x3F818000, 0x3F82, 0x3F81, "tie, lsb odd: up to even"},
    {0x3F808001, 0x3F81, 0x3F80, "just above a tie"},
    {0x3F807FFF, 0x3F80, 0x3F80, "just below a tie"},
    {0xBFC00000, 0xBFC0, 0xBFC0, "-1.5"},
    {0x40490FDB, 0x4049, 0x4049, "pi"},
    {0x3F81FFFF, 0x3F82, 0x3F81, "trunc keeps the top 16 bits"},
    {0x7F7FFFFF, 0x7F80, 0x7F7F, "FLT_MAX: rne overflows to Inf"},
    {0x7F7F8000, 0x7F80, 0x7F7F, "top-binade tie, lsb odd: Inf"},
    {0x00000001, 0x0000, 0x0000, "smallest subnormal"},
    {0x00008000, 0x0000, 0x0000, "subnormal tie to even 0"},
    {0x00018000, 0x0002, 0x0001, "subnormal tie to even 2"},
    {0x00008001, 0x0001, 0x0000, "subnormal above tie"},
    {0x007FFFFF, 0x0080, 0x007F, "largest subnormal rounds to smallest normal"},
    {0x00000000, 0x0000, 0x0000, "+0"},
    {0x80000000, 0x8000, 0x8000, "-0"},
    {0x7F800000, 0x7F80, 0x7F80, "+Inf"},
    {0xFF800000, 0xFF80, 0xFF80, "-Inf"},
    {0x7FC00000, 0x7FC0, 0x7FC0, "qNaN"},
    {0xFFC00001, 0xFFC0, 0xFFC0, "-qNaN with payload: canonical, sign kept"},
    {0x7F800001, 0x7FC0, 0x7FC0, "sNaN: must not become Inf"},
    {0xFF800001, 0xFFC0, 0xFFC0, "-sNaN"},
    {0x7FFFFFFF, 0x7FC0, 0x7FC0, "NaN: naive rounding would carry into the sign"},
    {0x7FBF0000, 0x7FC0, 0x7FC0, "sNaN with top payload"},
};

static const struct v32to16 F16[] = {
    {0x3F800000, 0x3C00, 0x3C00, "1.0"},
    {0xC0000000, 0xC000, 0xC000, "-2.0"},
    {0x3DCCCCCD, 0x2E66, 0x2E66, "0.1"},
    {0x40490FDB, 0x4248, 0x4248, "pi"},
    {0x3F801000, 0x3C00, 0x3C00, "tie 1 / 1+2^-10: even"},
    {0x3F801001, 0x3C01, 0x3C00, "just above the tie"},
    {0x3F803000, 0x3C02, 0x3C01, "tie, lsb odd: up"},
    {0x477FE000, 0x7BFF, 0x7BFF, "65504 = F16 max"},
    {0x477FEF00, 0x7BFF, 0x7BFF, "65519"},
    {0x477FF000, 0x7C00, 0x7BFF, "65520: tie -> Inf; trunc saturates"},
    {0x47800000, 0x7C00, 0x7BFF, "65536"},
    {0x501502F9, 0x7C00, 0x7BFF, "1e10"},
    {0xC7800000, 0xFC00, 0xFBFF, "-65536"},
    {0x7F800000, 0x7C00, 0x7C00, "+Inf stays Inf in trunc too"},
    {0xFF800000, 0xFC00, 0xFC00, "-Inf"},
    {0x33800000, 0x0001, 0x0001, "2^-24, smallest subnormal"},
    {0x33000000, 0x0000, 0x0000, "2^-25: tie to even 0"},
    {0x33400000, 0x0001, 0x0000, "1.5*2^-25"},
    {0x33C00000, 0x0002, 0x0001, "1.5*2^-24: tie to even 2"},
    {0x34200000, 0x0002, 0x0002, "2.5*2^-24: tie to even 2"},
    {0xB3C00000, 0x8002, 0x8001, "-1.5*2^-24"},
    {0x387FC000, 0x03FF, 0x03FF, "largest subnormal"},
    {0x387FE000, 0x0400, 0x03FF, "tie largest subnormal / smallest normal"},
    {0x38800000, 0x0400, 0x0400, "2^-14, smallest normal"},
    {0x00000001, 0x0000, 0x0000, "F32 subnormal"},
    {0x80000001, 0x8000, 0x8000, "-F32 subnormal"},
    {0x7FC00000, 0x7E00, 0x7E00, "qNaN"},
    {0x7F800001, 0x7E00, 0x7E00, "sNaN, payload below F16 bits: quiet bit forced"},
    {0x7FA00000, 0x7F00, 0x7F00, "sNaN payload kept (mant >> 13)"},
    {0xFF802000, 0xFE01, 0xFE01, "-sNaN lowest F16 payload bit"},
    {0x7FFFFFFF, 0x7FFF, 0x7FFF, "all-ones NaN"},
};

static const struct v16to32 F16W[] = {
    {0x0001, 0x33800000, "2^-24"},
    {0x8001, 0xB3800000, "-2^-24"},
    {0x03FF, 0x387FC000, "largest subnormal"},
    {0x0400, 0x38800000, "smallest normal"},
    {0x3C00, 0x3F800000, "1.0"},
    {0x7BFF, 0x477FE000, "65504"},
    {0x7C00, 0x7F800000, "+Inf"},
    {0xFC00, 0xFF800000, "-Inf"},
    {0x8000, 0x80000000, "-0"},
    {0x7C01, 0x7F802000, "sNaN stays signalling"},
    {0xFDFF, 0xFFBFE000, "-sNaN max payload"},
    {0x7E00, 0x7FC00000, "qNaN"},
    {0x7FFF, 0x7FFFE000, "qNaN all ones"},
};

static const struct v16to32 BF16W[] = {
    {0x3F80, 0x3F800000, "1.0"},
    {0x0001, 0x00010000, "subnormal"},
    {0x7F81, 0x7F810000, "sNaN stays signalling"},
    {0xFFC0, 0xFFC00000, "-qNaN"},
};

static const struct v16 F16_TO_BF16[] = {
    {0x3C00, 0x3F80, "1.0"},
    {0x0001, 0x3380, "2^-24"},
    {0x3C01, 0x3F80, "1+2^-10: below half a BF16 ulp"},
    {0x3C04, 0x3F80, "1+2^-8: tie to even"},
    {0x3C0C, 0x3F82, "1+3*2^-8: tie up to even"},
    {0x7BFF, 0x4780, "65504 -> 65536"},
    {0x7C01, 0x7FC0, "sNaN -> canonical"},
    {0xFE00, 0xFFC0, "-qNaN -> canonical, sign kept"},
    {0xFC00, 0xFF80, "-Inf"},
};

static const struct v16 BF16_TO_F16[] = {
    {0x3F80, 0x3C00, "1.0"},
    {0x4780, 0x7C00, "65536 -> Inf"},
    {0x477F, 0x7BF8, "65280"},
    {0x0001, 0x0000, "BF16 subnormal -> +0"},
    {0x8001, 0x8000, "-BF16 subnormal -> -0"},
    {0x3380, 0x0001, "2^-24"},
    {0x3300, 0x0000, "2^-25: tie to even 0"},
    {0x3340, 0x0001, "1.5*2^-25"},
    {0x7F81, 0x7E08, "sNaN: quiet bit forced, payload kept"},
    {0xFFC0, 0xFE00, "-qNaN"},
    {0x7F80, 0x7C00, "+Inf"},
};

static void run32to16(const char *kname, uint32_t in, uint16_t want, const char *why)
{
    const struct kernel *k = kernel_by_name(kname);
    uint32_t src[REP];
    uint16_t dst[REP];
    for (int i = 0; i < REP; i++)
        src[i] = in;
    check_rc(k->fn(dst, src, REP), ST_OK, kname);
    for (int i = 0; i < REP; i++)
        if (dst[i] != want) {
            fail("%s (%s): in=0x%08x expected=0x%04x actual=0x%04x at [%d]", kname, why, in, want,
                 dst[i], i);
            break;
        }
}

static void run16to32(const char *kname, uint16_t in, uint32_t want, const char *why)
{
    const struct kernel *k = kernel_by_name(kname);
    uint16_t src[REP];
    uint32_t dst[REP];
    for (int i = 0; i < REP; i++)
        src[i] = in;
    check_rc(k->fn(dst, src, REP), ST_OK, kname);
    for (int i = 0; i < REP; i++)
        if (dst[i] != want) {
            fail("%s (%s): in=0x%04x expected=0x%08x actual=0x%08x at [%d]", kname, why, in, want,
                 dst[i], i);
            break;
        }
}

static void run16to16(const char *kname, uint16_t in, uint16_t want, const char *why)
{
    const struct kernel *k = kernel_by_name(kname);
    uint16_t src[REP], dst[REP];
    for (int i = 0; i < REP; i++)
        src[i] = in;
    check_rc(k->fn(dst, src, REP), ST_OK, kname);
    for (int i = 0; i < REP; i++)
        if (dst[i] != want) {
            fail("%s (%s): in=0x%04x expected=0x%04x actual=0x%04x at [%d]", kname, why, in, want,
                 dst[i], i);
            break;
        }
}

/* Widening: one generic runner; the input is given as raw bits of its type. */
struct vwide { const char *kernel; uint64_t in; uint32_t out; const char *why; };

static const struct vwide WIDE[] = {
    {"i8_to_f32", 0x80, 0xC3000000, "-128"},
    {"i8_to_f32", 0x7F, 0x42FE0000, "127"},
    {"u8_to_f32", 0xFF, 0x437F0000, "255"},
    {"i16_to_f32", 0x8000, 0xC7000000, "-32768"},
    {"u16_to_f32", 0xFFFF, 0x477FFF00, "65535"},
    {"i32_to_f32", 0x01000001, 0x4B800000, "2^24+1: tie to even 2^24"},
    {"i32_to_f32", 0x01000003, 0x4B800002, "2^24+3: tie up to 2^24+4"},
    {"i32_to_f32", 0x80000000, 0xCF000000, "INT32_MIN"},
    {"i32_to_f32", 0x7FFFFFFF, 0x4F000000, "INT32_MAX -> 2^31"},
    {"i32_to_f32", 0xFEFFFFFF, 0xCB800000, "-(2^24+1)"},
    {"u32_to_f32", 0xFFFFFFFF, 0x4F800000, "UINT32_MAX -> 2^32"},
    {"u32_to_f32", 0x80000080, 0x4F000000, "2^31+128: tie to even"},
    {"u32_to_f32", 0x80000081, 0x4F000001, "2^31+129: above tie"},
    {"i64_to_f32", 0x8000000000000000ull, 0xDF000000, "INT64_MIN"},
    {"i64_to_f32", 0x7FFFFFFFFFFFFFFFull, 0x5F000000, "INT64_MAX -> 2^63"},
    {"i64_to_f32", 0x0020000000000001ull, 0x5A000000, "2^53+1"},
    {"i64_to_f32", 0x1000001000000001ull, 0x5D800001, "2^60+2^36+1: via double would tie to 2^60"},
    {"i64_to_f32", 0xFFFFFFFFFEFFFFFFull, 0xCB800000, "-(2^24+1)"},
    {"u64_to_f32", 0xFFFFFFFFFFFFFFFFull, 0x5F800000, "UINT64_MAX -> 2^64"},
    {"u64_to_f32", 0x8000008000000000ull, 0x5F000000, "2^63+2^39: tie to even"},
    {"u64_to_f32", 0x8000008000000001ull, 0x5F000001, "2^63+2^39+1: sticky bit"},
    {"u64_to_f32", 0x8000018000000000ull, 0x5F000002, "2^63+3*2^39: tie up"},
    {"u64_to_f32", 0x1000001000000001ull, 0x5D800001, "2^60+2^36+1"},
    {"u64_to_f32", 0x0000000001000001ull, 0x4B800000, "2^24+1"},
    {"f64_to_f32", 0x3FF0000000000000ull, 0x3F800000, "1.0"},
    {"f64_to_f32", 0x3FB999999999999Aull, 0x3DCCCCCD, "0.1"},
    {"f64_to_f32", 0x3FF0000010000000ull, 0x3F800000, "1+2^-24: tie to even"},
    {"f64_to_f32", 0x3FF0000030000000ull, 0x3F800002, "1+3*2^-24: tie up"},
    {"f64_to_f32", 0x7FEFFFFFFFFFFFFFull, 0x7F800000, "DBL_MAX -> Inf"},
    {"f64_to_f32", 0xFFEFFFFFFFFFFFFFull, 0xFF800000, "-DBL_MAX -> -Inf"},
    {"f64_to_f32", 0x36A0000000000000ull, 0x00000001, "2^-149, smallest F32 subnormal"},
    {"f64_to_f32", 0x3690000000000000ull, 0x00000000, "2^-150: tie to even 0"},
    {"f64_to_f32", 0x7FF0000000000000ull, 0x7F800000, "+Inf"},
    {"f64_to_f32", 0x7FF0000000000001ull, 0x7FC00000, "sNaN is quieted"},
    {"f64_to_f32", 0xFFF8000000000000ull, 0xFFC00000, "-qNaN"},
    {"f64_to_f32", 0x7FF4000020000000ull, 0x7FE00001, "NaN: top payload bits kept"},
};

static void run_wide(const struct vwide *v)
{
    const struct kernel *k = kernel_by_name(v->kernel);
    unsigned char src[REP * 8];
    uint32_t dst[REP];
    for (int i = 0; i < REP; i++)
        memcpy(src + i * k->src_size, &v->in, k->src_size); /* little-endian */
    check_rc(k->fn(dst, src, REP), ST_OK, v->kernel);
    for (int i = 0; i < REP; i++)
        if (dst[i] != v->out) {
            fail("%s (%s): in=0x%llx expected=0x%08x actual=0x%08x at [%d]", v->kernel, v->why,
                 (unsigned long long)v->in, v->out, dst[i], i);
            break;
        }
}

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

int main(int argc, char **argv)
{
    test_begin(argc, argv, "known");
    use_level();
    for (size_t i = 0; i < COUNT(BF16); i++) {
        run32to16("f32_to_bf16_rne", BF16[i].in, BF16[i].rne, BF16[i].why);
        run32to16("f32_to_bf16_trunc", BF16[i].in, BF16[i].trunc, BF16[i].why);
    }
    for (size_t i = 0; i < COUNT(F16); i++) {
        run32to16("f32_to_f16_rne", F16[i].in, F16[i].rne, F16[i].why);
        run32to16("f32_to_f16_trunc", F16[i].in, F16[i].trunc, F16[i].why);
    }
    for (size_t i = 0; i < COUNT(F16W); i++)
        run16to32("f16_to_f32", F16W[i].in, F16W[i].out, F16W[i].why);
    for (size_t i = 0; i < COUNT(BF16W); i++)
        run16to32("bf16_to_f32", BF16W[i].in, BF16W[i].out, BF16W[i].why);
    for (size_t i = 0; i < COUNT(F16_TO_BF16); i++)
        run16to16("f16_to_bf16", F16_TO_BF16[i].in, F16_TO_BF16[i].out, F16_TO_BF16[i].why);
    for (size_t i = 0; i < COUNT(BF16_TO_F16); i++)
        run16to16("bf16_to_f16", BF16_TO_F16[i].in, BF16_TO_F16[i].out, BF16_TO_F16[i].why);
    for (size_t i = 0; i < COUNT(WIDE); i++)
        run_wide(&WIDE[i]);
    printf("%zu hand-checked vectors\n", 2 * COUNT(BF16) + 2 * COUNT(F16) + COUNT(F16W) + COUNT(BF16W) +
                                            COUNT(F16_TO_BF16) + COUNT(BF16_TO_F16) + COUNT(WIDE));
    return test_end("known");
}
