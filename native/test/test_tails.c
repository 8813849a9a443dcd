/*
 * Every element-wise kernel at lengths 0..257 with src and dst shifted by 0..3
 * elements inside larger buffers (unaligned starts, every tail length), checked
 * against the scalar oracle; the guard bytes around dst must stay untouched.
 * src is allocated at its exact size so that the sanitizer build catches reads
 * past its end.
 */
#include "test_util.h"

#define MAX_LEN 257
#define MAX_OFF 3
#define GUARD 64 /* bytes of guard before and after the dst region */
#define GUARD_BYTE 0xA5

int main(int argc, char **argv)
{
    test_begin(argc, argv, "tails");
    size_t dst_bytes = GUARD + (MAX_LEN + MAX_OFF) * 4 + GUARD;
    unsigned char *dst = xmalloc(dst_bytes), *exp = xmalloc(MAX_LEN * 4);

    for (size_t k = 0; k < N_KERNELS; k++) {
        const struct kernel *kk = &KERNELS[k];
        long before = g_failures;
        for (size_t len = 0; len <= MAX_LEN; len++) {
            for (size_t soff = 0; soff <= MAX_OFF; soff++) {
                size_t src_bytes = (soff + len) * kk->src_size;
                unsigned char *src = xmalloc(src_bytes);
                fill_random(src, src_bytes);
                const unsigned char *s = src + soff * kk->src_size;
                for (size_t doff = 0; doff <= MAX_OFF; doff++) {
                    unsigned char *d = dst + GUARD + doff * kk->dst_size;
                    use_oracle();
                    check_rc(kk->fn(exp, s, len), ST_OK, kk->name);
                    memset(dst, GUARD_BYTE, dst_bytes);
                    use_level();
                    check_rc(kk->fn(d, s, len), ST_OK, kk->name);

                    for (size_t i = 0; i < len; i++)
                        if (memcmp(d + i * kk->dst_size, exp + i * kk->dst_size, kk->dst_size) != 0)
                            fail("%s len=%zu soff=%zu doff=%zu [%zu]: in=0x%0*llx expected=0x%0*llx actual=0x%0*llx",
                                 kk->name, len, soff, doff, i, (int)(2 * kk->src_size),
                                 elem_bits(s + i * kk->src_size, kk->src_size), (int)(2 * kk->dst_size),
                                 elem_bits(exp + i * kk->dst_size, kk->dst_size), (int)(2 * kk->dst_size),
                                 elem_bits(d + i * kk->dst_size, kk->dst_size));
                    size_t lo = (size_t)(d - dst), hi = lo + len * kk->dst_size;
                    for (size_t b = 0; b < dst_bytes; b++)
                        if ((b < lo || b >= hi) && dst[b] != GUARD_BYTE) {
                            fail("%s len=%zu soff=%zu doff=%zu: byte %td outside dst changed to 0x%02x",
                                 kk->name, len, soff, doff, (ptrdiff_t)b - (ptrdiff_t)lo, dst[b]);
                            break;
                        }
                }
                free(src);
            }
        }
        printf("  %-18s %s\n", kk->name, g_failures == before ? "ok" : "FAILED");
    }
    free(dst);
    free(exp);
    return test_end("tails");
}
