/*
 * Large conversions (4 MiB of output and more) take the streaming-store path on
 * the SIMD levels: F32 -> BF16/F16 narrowing (both levels) and BF16/F16 -> F32
 * widening (both levels). Results against the scalar oracle at several destination
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
    for (size_t i = 0; i < N; i++)
        src[i] = rnd32();
    unsigned char *want = xmalloc(N * 4);
    unsigned char *raw = xmalloc(N * 4 + 128);
    for (size_t k = 0; k < sizeof NAMES / sizeof NAMES[0]; k++) {
        const struct kernel *kn = kernel_by_name(NAMES[k]);
        size_t bytes = N * kn->dst_size;
        use_oracle();
        check_rc(kn->fn(want, src, N), ST_OK, kn->name);
        use_level();
        static const size_t SHIFT[] = {0, 1, 3, 8, 15}; /* in elements of dst */
        for (size_t s = 0; s < sizeof SHIFT / sizeof SHIFT[0]; s++) {
            unsigned char *dst = raw + 16 + SHIFT[s] * kn->dst_size;
            memset(raw, 0xA5, N * 4 + 128);
            check_rc(kn->fn(dst, src, N), ST_OK, kn->name);
            if (memcmp(dst, want, bytes) != 0)
                fail("%s dst+%zu elements: differs from the oracle", kn->name, SHIFT[s]);
            if (dst[bytes] != 0xA5 || dst[-1] != 0xA5)
                fail("%s dst+%zu elements: wrote outside dst", kn->name, SHIFT[s]);
        }
    }
    free(src);
    free(want);
    free(raw);
    return test_end("stream");
}
