/*
 * Indices changed by another thread during a gather: each index is loaded once,
 * checked and used, so the status is ST_OK or ST_ERR_INDEX and no row outside
 * the table is ever read. The table ends right before a PROT_NONE page, so an
 * unchecked read past it would fault (ST_ERR_FAULT, which fails the test; under
 * ASan the exact-size heap copy catches it too).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <unistd.h>

#include "test_util.h"

#define N_ROWS 64
#define N_IDX 4096
#define ROUNDS 400

static int64_t g_i64[N_IDX];
static uint32_t g_u32[N_IDX];
static atomic_int g_stop;

/* Flips every index between a good row and a bad value, as fast as it can. */
static void *writer(void *arg)
{
    (void)arg;
    static const int64_t BAD[] = {N_ROWS, -1, INT64_MAX, (int64_t)1 << 40};
    uint64_t k = 0;
    while (!atomic_load_explicit(&g_stop, memory_order_relaxed)) {
        for (size_t i = 0; i < N_IDX; i += 7) {
            int64_t v = (k & 1) ? BAD[(k >> 1) & 3] : (int64_t)(i % N_ROWS);
            __atomic_store_n(&g_i64[i], v, __ATOMIC_RELAXED);
            __atomic_store_n(&g_u32[i], (uint32_t)v, __ATOMIC_RELAXED);
        }
        k++;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    test_begin(argc, argv, "race");
    use_level();
    static const size_t ROWS[] = {1, 2, 6, 12, 24, 40, 512}; /* elements of 2 bytes: rows of 2..1024 bytes */
    long page = sysconf(_SC_PAGESIZE);
    size_t span = ((N_ROWS * 1024 + (size_t)page - 1) / (size_t)page + 1) * (size_t)page;
    unsigned char *region = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (region == MAP_FAILED || mprotect(region + span - page, page, PROT_NONE) != 0) {
        printf("FATAL: mmap/mprotect failed\n");
        return 1;
    }
    for (size_t i = 0; i < N_IDX; i++)
        g_i64[i] = (int64_t)(g_u32[i] = (uint32_t)(i % N_ROWS));
    pthread_t t;
    pthread_create(&t, NULL, writer, NULL);
    long ok = 0, bad = 0;
    for (size_t r = 0; r < sizeof ROWS / sizeof ROWS[0]; r++) {
        size_t rb = ROWS[r] * 2;
        const unsigned char *table = region + span - page - N_ROWS * rb; /* ends at the guard page */
        unsigned char *heap = xmalloc(N_ROWS * rb);                    /* exact size for ASan */
        memcpy(heap, table, N_ROWS * rb);
        float *dst = xmalloc(N_IDX * rb * 2);
        for (int round = 0; round < ROUNDS; round++) {
            const void *tab = (round & 1) ? (const void *)heap : (const void *)table;
            int rcs[4] = {
                st_gather_u32(dst, tab, N_ROWS, rb, g_u32, N_IDX),
                st_gather_i64(dst, tab, N_ROWS, rb, g_i64, N_IDX),
                st_gather_f16_to_f32_u32(dst, tab, N_ROWS, rb / 2, g_u32, N_IDX),
                st_gather_bf16_to_f32_i64(dst, tab, N_ROWS, rb / 2, g_i64, N_IDX),
            };
            for (int c = 0; c < 4; c++) {
                if (rcs[c] == ST_OK)
                    ok++;
                else if (rcs[c] == ST_ERR_INDEX)
                    bad++;
                else
                    fail("row_bytes=%zu call %d: status %d (a read outside the table?)", rb, c, rcs[c]);
            }
        }
        free(heap);
        free(dst);
    }
    atomic_store(&g_stop, 1);
    pthread_join(t, NULL);
    printf("race: %ld calls saw stable indices, %ld saw a bad one\n", ok, bad);
    if (bad == 0)
        fail("the writer never made an index bad during a call; the test proves nothing");
    return test_end("race");
}
