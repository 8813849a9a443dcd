/*
 * The fault guard: every kernel and gather reading (or writing) a mapping whose
 * file was truncated under it returns ST_ERR_FAULT instead of dying by SIGBUS,
 * and reports the faulting address; a PROT_NONE page (SIGSEGV) likewise; the
 * thread keeps working afterwards (signal mask restored), and a fault outside
 * the library still reaches the previous handler (checked in a child process).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"

#define MAP_BYTES (1u << 20)
#define KEEP_BYTES 4096u /* what is left of the file after truncation */

static unsigned char *g_map;
static int g_fd;

/* A 1 MiB file mapped shared, then truncated to one page: everything past the
   first page raises SIGBUS on access. */
static void map_truncated(int writable)
{
    const char *dir = getenv("TMPDIR");
    char name[4096];
    snprintf(name, sizeof name, "%s/stn_fault_XXXXXX", dir != NULL && dir[0] != '\0' ? dir : P_tmpdir);
    g_fd = mkstemp(name);
    if (g_fd < 0 || ftruncate(g_fd, MAP_BYTES) != 0) {
        printf("FATAL: cannot create %s\n", name);
        exit(1);
    }
    unlink(name);
    g_map = mmap(NULL, MAP_BYTES, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, g_fd, 0);
    if (g_map == MAP_FAILED) {
        printf("FATAL: mmap failed\n");
        exit(1);
    }
    if (ftruncate(g_fd, KEEP_BYTES) != 0) {
        printf("FATAL: truncate failed\n");
        exit(1);
    }
}

static void unmap(void)
{
    munmap(g_map, MAP_BYTES);
    close(g_fd);
}

static void check_fault(int rc, const char *what, const void *lo, size_t len)
{
    if (rc != ST_ERR_FAULT) {
        fail("%s: status %d, expected ST_ERR_FAULT", what, rc);
        return;
    }
    uintptr_t a = st_last_fault_address();
    if (a < (uintptr_t)lo || a >= (uintptr_t)lo + len)
        fail("%s: fault address %#lx is outside the truncated part", what, (unsigned long)a);
}

static void test_convert_reads(void)
{
    map_truncated(0);
    size_t bytes = MAP_BYTES - 64; /* starts inside the live page, runs into the lost ones */
    for (size_t k = 0; k < N_KERNELS; k++) {
        size_t n = bytes / KERNELS[k].src_size;
        void *dst = xmalloc(n * KERNELS[k].dst_size);
        check_fault(KERNELS[k].fn(dst, g_map + 64, n), KERNELS[k].name, g_map + KEEP_BYTES,
                    MAP_BYTES - KEEP_BYTES);
        /* The thread goes on: the same kernel on readable memory works. */
        check_rc(KERNELS[k].fn(dst, g_map, KEEP_BYTES / KERNELS[k].src_size), ST_OK, KERNELS[k].name);
        free(dst);
    }
    unmap();
}

static void test_convert_writes(void)
{
    map_truncated(1);
    size_t n = (MAP_BYTES - 256) / 4;
    float *src = xmalloc(n * sizeof(float));
    memset(src, 0, n * sizeof(float));
    check_fault(st_f32_to_bf16_rne((uint16_t *)(g_map + 256), src, n / 2 * 2), "f32_to_bf16_rne into lost pages",
                g_map + KEEP_BYTES, MAP_BYTES - KEEP_BYTES);
    check_fault(st_bf16_to_f32((float *)(g_map + 256), (const uint16_t *)src, n), "bf16_to_f32 into lost pages",
                g_map + KEEP_BYTES, MAP_BYTES - KEEP_BYTES);
    free(src);
    unmap();
}

static void test_gathers(void)
{
    map_truncated(0);
    static const size_t ROWS[] = {1, 3, 8, 16, 24, 32, 48, 512};
    for (size_t r = 0; r < sizeof ROWS / sizeof ROWS[0]; r++) {
        size_t rb = ROWS[r] * 2, n_rows = MAP_BYTES / rb;
        uint32_t iu[4] = {0, 1, (uint32_t)(n_rows - 1), 2};
        int64_t is[4] = {0, 1, (int64_t)(n_rows - 1), 2};
        float *dst = xmalloc(4 * rb * 2);
        check_fault(st_gather_u32(dst, g_map, n_rows, rb, iu, 4), "gather_u32", g_map + KEEP_BYTES, MAP_BYTES);
        check_fault(st_gather_i64(dst, g_map, n_rows, rb, is, 4), "gather_i64", g_map + KEEP_BYTES, MAP_BYTES);
        check_fault(st_gather_f16_to_f32_u32(dst, (const uint16_t *)g_map, n_rows, rb / 2, iu, 4),
                    "gather_f16_to_f32_u32", g_map + KEEP_BYTES, MAP_BYTES);
        check_fault(st_gather_bf16_to_f32_i64(dst, (const uint16_t *)g_map, n_rows, rb / 2, is, 4),
                    "gather_bf16_to_f32_i64", g_map + KEEP_BYTES, MAP_BYTES);
        free(dst);
    }
    /* Indices that live in the lost pages: the index check itself faults. */
    unsigned char table[64];
    memset(table, 0, sizeof table);
    float out[64];
    check_fault(st_gather_i64(out, table, 8, 8, (const int64_t *)(g_map + KEEP_BYTES), 4),
                "gather_i64 with indices in lost pages", g_map + KEEP_BYTES, MAP_BYTES);
    unmap();
}

/* SIGSEGV: a page the process may not read. */
static void test_protected_page(void)
{
    long page = sysconf(_SC_PAGESIZE);
    unsigned char *p = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED || mprotect(p + page, page, PROT_NONE) != 0) {
        printf("FATAL: mmap/mprotect failed\n");
        exit(1);
    }
    float dst[1024];
    check_fault(st_bf16_to_f32(dst, (const uint16_t *)(p + page - 64), 512), "bf16_to_f32 into PROT_NONE",
                p + page, page);
    munmap(p, 2 * page);
}

/* A fault in this program's own code is not the library's: it must reach the
   handler that was there before (the default action here, or the sanitizer's),
   so the child must not survive it. */
static void test_foreign_fault_passed_on(void)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        map_truncated(0);
        volatile unsigned char v = g_map[MAP_BYTES - 1];
        (void)v;
        _exit(0); /* reached only if the fault was swallowed */
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        fail("a fault outside the library was swallowed instead of passed on");
    if (!st_fault_guard_active())
        fail("st_fault_guard_active() is 0 after the child's fault (the parent's handler changed?)");
}

int main(int argc, char **argv)
{
    test_begin(argc, argv, "fault");
    use_level();
    if (!st_fault_guard_active()) {
        printf("FAIL: the fault guard is not installed\n");
        return 1;
    }
    test_convert_reads();
    test_convert_writes();
    test_gathers();
    test_protected_page();
    test_foreign_fault_passed_on();
    return test_end("fault");
}
