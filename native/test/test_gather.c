/*
 * Row gather and gather-and-convert: results against a naive copy, u32 and i64
 * indices, bad indices (n_rows, -1, huge) -> ST_ERR_INDEX with dst untouched,
 * n_idx == 0, argument errors, and gather-and-convert == gather + convert.
 */
#include "test_util.h"

#define N_ROWS 37
#define MAX_IDX 100
#define DST_FILL 0x5A

static const size_t ROW_BYTES[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64, 160, 161, 300, 512, 4096};
static const size_t N_IDX[] = {0, 1, 2, 5, 17, MAX_IDX};

static void make_indices(uint32_t *u, int64_t *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        u[i] = (uint32_t)(rnd64() % N_ROWS);
        s[i] = (int64_t)u[i];
    }
    if (n > 2) { /* always include the first and last row */
        u[0] = 0, s[0] = 0;
        u[n - 1] = N_ROWS - 1, s[n - 1] = N_ROWS - 1;
    }
}

static int all_bytes(const unsigned char *p, size_t n, unsigned char v)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != v)
            return 0;
    return 1;
}

static void test_copy(void)
{
    uint32_t iu[MAX_IDX];
    int64_t is[MAX_IDX];
    for (size_t r = 0; r < sizeof ROW_BYTES / sizeof ROW_BYTES[0]; r++) {
        size_t rb = ROW_BYTES[r];
        unsigned char *table = xmalloc(N_ROWS * rb); /* exact sizes: ASan sees overruns */
        fill_random(table, N_ROWS * rb);
        for (size_t t = 0; t < sizeof N_IDX / sizeof N_IDX[0]; t++) {
            size_t n = N_IDX[t];
            make_indices(iu, is, n);
            unsigned char *want = xmalloc(n * rb + 1), *dst = xmalloc(n * rb + 1);
            for (size_t i = 0; i < n; i++)
                memcpy(want + i * rb, table + iu[i] * rb, rb);
            for (int wide = 0; wide < 2; wide++) {
                memset(dst, DST_FILL, n * rb + 1);
                int rc = wide ? st_gather_i64(dst, table, N_ROWS, rb, is, n)
                              : st_gather_u32(dst, table, N_ROWS, rb, iu, n);
                check_rc(rc, ST_OK, wide ? "gather_i64" : "gather_u32");
                if (memcmp(dst, want, n * rb) != 0)
                    fail("gather_%s row_bytes=%zu n_idx=%zu: rows differ from a plain copy",
                         wide ? "i64" : "u32", rb, n);
                if (dst[n * rb] != DST_FILL)
                    fail("gather_%s row_bytes=%zu n_idx=%zu: wrote past dst", wide ? "i64" : "u32", rb, n);
            }
            free(want);
            free(dst);
        }
        free(table);
    }
}

/* One bad index at the front, middle or end: error, and not a byte of dst written. */
static void test_bad_indices(void)
{
    const size_t rb = 8, n = 9;
    uint64_t table64[N_ROWS]; /* N_ROWS rows of 8 bytes, or of 4 16-bit values */
    unsigned char *table = (unsigned char *)table64, dst[9 * 8];
    float fdst[9 * 4];
    fill_random(table64, sizeof table64);
    const uint32_t bad_u[] = {N_ROWS, N_ROWS + 1, 0x80000000u, UINT32_MAX};
    const int64_t bad_s[] = {N_ROWS, -1, INT64_MIN, INT64_MAX, (int64_t)1 << 32, -(int64_t)N_ROWS};
    for (size_t pos = 0; pos < n; pos += 4) {
        for (size_t b = 0; b < sizeof bad_u / sizeof bad_u[0]; b++) {
            uint32_t idx[9] = {0, 1, 2, 3, 4, 5, 6, 7, N_ROWS - 1};
            idx[pos] = bad_u[b];
            memset(dst, DST_FILL, sizeof dst);
            memset(fdst, DST_FILL, sizeof fdst);
            check_rc(st_gather_u32(dst, table, N_ROWS, rb, idx, n), ST_ERR_INDEX, "gather_u32 bad index");
            check_rc(st_gather_f16_to_f32_u32(fdst, (const uint16_t *)table, N_ROWS, 4, idx, n),
                     ST_ERR_INDEX, "gather_f16_to_f32_u32 bad index");
            check_rc(st_gather_bf16_to_f32_u32(fdst, (const uint16_t *)table, N_ROWS, 4, idx, n),
                     ST_ERR_INDEX, "gather_bf16_to_f32_u32 bad index");
            if (!all_bytes(dst, sizeof dst, DST_FILL) || !all_bytes((unsigned char *)fdst, sizeof fdst, DST_FILL))
                fail("u32 bad index 0x%x at %zu: dst was written", bad_u[b], pos);
        }
        for (size_t b = 0; b < sizeof bad_s / sizeof bad_s[0]; b++) {
            int64_t idx[9] = {0, 1, 2, 3, 4, 5, 6, 7, N_ROWS - 1};
            idx[pos] = bad_s[b];
            memset(dst, DST_FILL, sizeof dst);
            memset(fdst, DST_FILL, sizeof fdst);
            check_rc(st_gather_i64(dst, table, N_ROWS, rb, idx, n), ST_ERR_INDEX, "gather_i64 bad index");
            check_rc(st_gather_f16_to_f32_i64(fdst, (const uint16_t *)table, N_ROWS, 4, idx, n),
                     ST_ERR_INDEX, "gather_f16_to_f32_i64 bad index");
            check_rc(st_gather_bf16_to_f32_i64(fdst, (const uint16_t *)table, N_ROWS, 4, idx, n),
                     ST_ERR_INDEX, "gather_bf16_to_f32_i64 bad index");
            if (!all_bytes(dst, sizeof dst, DST_FILL) || !all_bytes((unsigned char *)fdst, sizeof fdst, DST_FILL))
                fail("i64 bad index %lld at %zu: dst was written", (long long)bad_s[b], pos);
        }
    }
    /* n_rows == 0: every index is out of range */
    uint32_t zero = 0;
    check_rc(st_gather_u32(dst, NULL, 0, rb, &zero, 1), ST_ERR_INDEX, "gather_u32 n_rows=0");
    /* n_rows above UINT32_MAX: every u32 index is in range (only the check, rows 0 and 1 are real) */
    uint32_t two[2] = {1, 0};
    check_rc(st_gather_u32(dst, table, (size_t)1 << 33, 1, two, 2), ST_OK, "gather_u32 n_rows>2^32");
    if (dst[0] != table[1] || dst[1] != table[0])
        fail("gather_u32 n_rows>2^32: wrong rows");
}

static void test_args(void)
{
    uint16_t table[8] = {0};
    unsigned char dst[16];
    float fdst[16];
    uint32_t iu = 0;
    int64_t is = 0;
    /* n_idx == 0: nothing to do, whatever the pointers */
    check_rc(st_gather_u32(NULL, NULL, 0, 0, NULL, 0), ST_OK, "gather_u32 n_idx=0");
    check_rc(st_gather_i64(NULL, NULL, 5, 7, NULL, 0), ST_OK, "gather_i64 n_idx=0");
    check_rc(st_gather_f16_to_f32_u32(NULL, NULL, 0, 0, NULL, 0), ST_OK, "gather_f16 n_idx=0");
    check_rc(st_gather_bf16_to_f32_i64(NULL, NULL, 0, 0, NULL, 0), ST_OK, "gather_bf16 n_idx=0");
    /* NULL with work to do */
    check_rc(st_gather_u32(NULL, table, 1, 1, &iu, 1), ST_ERR_NULL, "gather_u32 dst=NULL");
    check_rc(st_gather_u32(dst, NULL, 1, 1, &iu, 1), ST_ERR_NULL, "gather_u32 table=NULL");
    check_rc(st_gather_u32(dst, table, 1, 1, NULL, 1), ST_ERR_NULL, "gather_u32 idx=NULL");
    check_rc(st_gather_i64(NULL, table, 1, 1, &is, 1), ST_ERR_NULL, "gather_i64 dst=NULL");
    check_rc(st_gather_i64(dst, table, 1, 1, NULL, 1), ST_ERR_NULL, "gather_i64 idx=NULL");
    check_rc(st_gather_f16_to_f32_u32(NULL, table, 1, 1, &iu, 1), ST_ERR_NULL, "gather_f16 dst=NULL");
    check_rc(st_gather_bf16_to_f32_i64(fdst, NULL, 1, 1, &is, 1), ST_ERR_NULL, "gather_bf16 table=NULL");
    /* row_bytes == 0 with rows to gather; sizes beyond the address space */
    check_rc(st_gather_u32(dst, table, 1, 0, &iu, 1), ST_ERR_ARGUMENT, "gather_u32 row_bytes=0");
    check_rc(st_gather_f16_to_f32_i64(fdst, table, 1, 0, &is, 1), ST_ERR_ARGUMENT,
             "gather_f16 row_elems=0");
    check_rc(st_gather_i64(dst, table, SIZE_MAX / 2, 4, &is, 1), ST_ERR_ARGUMENT, "gather_i64 table too big");
    check_rc(st_gather_f16_to_f32_u32(fdst, table, 1, SIZE_MAX / 4 + 1, &iu, 1), ST_ERR_ARGUMENT,
             "gather_f16 row too big");
}

/* Gather-and-convert == gather the 16-bit rows, then convert them (same level). */
static void test_convert(void)
{
    static const size_t ROW_ELEMS[] = {1, 2, 3, 7, 8, 15, 16, 17, 33, 256};
    uint32_t iu[MAX_IDX];
    int64_t is[MAX_IDX];
    for (size_t r = 0; r < sizeof ROW_ELEMS / sizeof ROW_ELEMS[0]; r++) {
        size_t re = ROW_ELEMS[r];
        uint16_t *table = xmalloc(N_ROWS * re * 2);
        fill_random(table, N_ROWS * re * 2);
        for (size_t t = 0; t < sizeof N_IDX / sizeof N_IDX[0]; t++) {
            size_t n = N_IDX[t];
            make_indices(iu, is, n);
            uint16_t *rows = xmalloc(n * re * 2);
            float *want = xmalloc(n * re * 4), *got = xmalloc(n * re * 4 + 4);
            check_rc(st_gather_u32(rows, table, N_ROWS, re * 2, iu, n), ST_OK, "gather_u32");
            for (int bf = 0; bf < 2; bf++) {
                check_rc(bf ? st_bf16_to_f32(want, rows, n * re) : st_f16_to_f32(want, rows, n * re), ST_OK,
                         "convert");
                for (int wide = 0; wide < 2; wide++) {
                    memset(got, DST_FILL, n * re * 4 + 4);
                    int rc = bf ? (wide ? st_gather_bf16_to_f32_i64(got, table, N_ROWS, re, is, n)
                                        : st_gather_bf16_to_f32_u32(got, table, N_ROWS, re, iu, n))
                                : (wide ? st_gather_f16_to_f32_i64(got, table, N_ROWS, re, is, n)
                                        : st_gather_f16_to_f32_u32(got, table, N_ROWS, re, iu, n));
                    check_rc(rc, ST_OK, "gather convert");
                    if (memcmp(got, want, n * re * 4) != 0)
                        fail("gather_%s_to_f32_%s row_elems=%zu n_idx=%zu: differs from gather+convert",
                             bf ? "bf16" : "f16", wide ? "i64" : "u32", re, n);
                    if (!all_bytes((unsigned char *)(got + n * re), 4, DST_FILL))
                        fail("gather_%s_to_f32 row_elems=%zu n_idx=%zu: wrote past dst", bf ? "bf16" : "f16",
                             re, n);
                }
            }
            free(rows);
            free(want);
            free(got);
        }
        free(table);
    }
}

/* Outputs of 4 MiB and more take the streaming-store path on the SIMD levels
   (aligned dst, rows a multiple of 32 bytes; 480 and 544 end in 32-byte
   moves after the 128-byte steps); also an unaligned dst, which must not. */
static void test_large(void)
{
    static const size_t RB[] = {480, 512, 544, 1024};
    const size_t n_rows = 1000, n = (5u << 20) / 512;
    for (size_t r = 0; r < sizeof RB / sizeof RB[0]; r++) {
        size_t rb = RB[r];
        unsigned char *table = xmalloc(n_rows * rb);
        fill_random(table, n_rows * rb);
        int64_t *idx = xmalloc(n * sizeof(int64_t));
        for (size_t i = 0; i < n; i++)
            idx[i] = (int64_t)(rnd64() % n_rows);
        unsigned char *want = xmalloc(n * rb);
        for (size_t i = 0; i < n; i++)
            memcpy(want + i * rb, table + (size_t)idx[i] * rb, rb);
        unsigned char *raw = aligned_alloc(64, n * rb + 64);
        for (size_t shift = 0; shift <= 8; shift += 8) {
            unsigned char *dst = raw + shift;
            memset(dst, 0, n * rb);
            check_rc(st_gather_i64(dst, table, n_rows, rb, idx, n), ST_OK, "large gather_i64");
            if (memcmp(dst, want, n * rb) != 0)
                fail("large gather row_bytes=%zu dst+%zu: rows differ from a plain copy", rb, shift);
        }
        free(raw);
        free(want);
        free(idx);
        free(table);
    }
}

int main(int argc, char **argv)
{
    test_begin(argc, argv, "gather");
    use_level();
    test_copy();
    test_bad_indices();
    test_args();
    test_convert();
    test_large();
    return test_end("gather");
}
