/*
 * Large narrowing conversions (4 MiB of output and more) take the streaming
 * store path on the SIMD levels: results against the scalar oracle at several
 * destination alignments (the path first steps dst to a 32-byte boundary), with
 * a guard element after the end.
 */
#include "test_util.h"

#define N ((size_t)(5u << 20) / 2 + 37) /* > 4 MiB of 16-bit output, odd tail */

int main(int argc, char **argv)
{
    test_begin(argc, argv, "stream");
    static const char *NAMES[] = {"f32_to_bf16_rne", "f32_to_bf16_trunc", "f32_to_f16_rne", "f32_to_f16_trunc"};
    uint32_t *src = xmalloc(N * sizeof(uint32_t));
    for (size_t i = 0; i < N; i++)
        src[i] = rnd32();
    uint16_t *want = xmalloc(N * sizeof(uint16_t));
    uint16_t *raw = xmalloc((N + 32) * sizeof(uint16_t));
    for (size_t k = 0; k < sizeof NAMES / sizeof NAMES[0]; k++) {
        const struct kernel *kn = kernel_by_name(NAMES[k]);
        use_oracle();
        check_rc(kn->fn(want, src, N), ST_OK, kn->name);
        use_level();
        static const size_t SHIFT[] = {0, 1, 3, 8, 15};
        for (size_t s = 0; s < sizeof SHIFT / sizeof SHIFT[0]; s++) {
            uint16_t *dst = raw + SHIFT[s];
            memset(raw, 0xA5, (N + 32) * sizeof(uint16_t));
            check_rc(kn->fn(dst, src, N), ST_OK, kn->name);
            if (memcmp(dst, want, N * sizeof(uint16_t)) != 0)
                fail("%s dst+%zu elements: differs from the oracle", kn->name, SHIFT[s]);
            if (dst[N] != 0xA5A5 || (SHIFT[s] > 0 && dst[-1] != 0xA5A5))
                fail("%s dst+%zu elements: wrote outside dst", kn->name, SHIFT[s]);
        }
    }
    free(src);
    free(want);
    free(raw);
    return test_end("stream");
}
