/*
 * Large conversions (4 MiB of output and more) take the streaming-store path on
 * the SIMD levels: F32 -> BF16/F16 narrowing and BF16/F16 -> F32 widening. Results against the scalar oracle at several destination
 * alignments (the path first steps dst to a vector boundary), with guard bytes
 * on both sides.
 */
#include "test_util.h"

#define N ((size_t)(5u << 20) / 2 + 37) /* > 4 MiB of output for 2- and 4-byte elements, odd tail */

int main(int argc, char **argv)
{
    test_begin(argc, argv, "stream");
    static const char *NAMES[] = {"f32_to_bf16_rne", "f32_to_bf16_trunc", "f32_to_f16_rne", "f32_to_f16_trunc",
                                  "bf16_to_f32", "f16_to_f32"};
    uint32_t *src = xmalloc(N * sizeof(uint32_t));
    unsigned char *want = xmalloc(N * 4);
    unsigned char *raw = xmalloc(N * 4 + 128);
    /* random bits (NaN/subnormal lanes in about a fifth of all 32-lane steps),
       then normal floats with a zero, subnormal or NaN every 37 elements: steps
       with none, with only a zero, and with one that needs the slow way */
    for (int input = 0; input < 2; input++)
    for (size_t k = 0; k < sizeof NAMES / sizeof NAMES[0]; k++) {
        static const uint32_t SPARSE[] = {0x00000000, 0x80000000, 0x00000001, 0x807FFFFF, 0x7FC00000, 0xFF800001};
        for (size_t i = 0; i < N; i++)
            src[i] = input == 0 ? rnd32()
                     : i % 37 == 0 ? SPARSE[(i / 37) % 6]
                                   : (rnd32() & 0x83FFFFFFu) | 0x3C000000u; /* |x| in [2^-7, 2) */
        const struct kernel *kn = kernel_by_name(NAMES[k]);
        size_t bytes = N * kn->dst_size;
        use_oracle();
        check_rc(kn->fn(want, src, N), ST_OK, kn->name);
        use_level();
        static const size_t SHIFT[] = {0, 1, 3, 8, 15, 24}; /* in elements of dst */
        for (size_t s = 0; s < sizeof SHIFT / sizeof SHIFT[0]; s++) {
            unsigned char *dst = raw + 16 + SHIFT[s] * kn->dst_size;
            memset(raw, 0xA5, N * 4 + 128);
            check_rc(kn->fn(dst, src, N), ST_OK, kn->name);
            if (memcmp(dst, want, bytes) != 0)
                fail("%s input %d, dst+%zu elements: differs from the oracle", kn->name, input, SHIFT[s]);
            if (dst[bytes] != 0xA5 || dst[-1] != 0xA5)
                fail("%s input %d, dst+%zu elements: wrote outside dst", kn->name, input, SHIFT[s]);
        }
    }
    free(src);
    free(want);
    free(raw);
    return test_end("stream");
}
