/*
 * The fault guard: every kernel and gather reading (or writing) a mapping whose
 * file was truncated under it returns ST_ERR_FAULT instead of dying by SIGBUS,
 * and reports the faulting address; a PROT_NONE page (SIGSEGV) likewise; the
 * thread keeps working afterwards (signal mask restored, the caller's locals
 * intact, also after a handler on an alternate stack), and a fault outside
 * the library still reaches the previous handler (checked in a child process).
 */
#define _GNU_SOURCE
#include <pthread.h>
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

/* The jump back from the handler skips the kernel's own epilogue: the values the
   caller keeps in callee-saved registers across the call must come back intact,
   fault after fault (a signal mask left blocked would kill the second one). */
static void test_caller_state_survives(void)
{
    map_truncated(0);
    size_t n = (MAP_BYTES - 64) / 2;
    float *dst = xmalloc(n * sizeof(float));
    volatile uint64_t seed = 0x0123456789abcdefull;
    uint64_t a = seed, b = a * 3, c = b ^ 0x55, d = c + a, e = d * 7, f = e ^ b, g = f + c, h = g * 5;
    const uint64_t want = a + b + c + d + e + f + g + h + 36 * 200;
    for (int i = 0; i < 200; i++) {
        int rc = i % 2 ? st_bf16_to_f32(dst, (const uint16_t *)(g_map + 64), n)
                       : st_f32_to_bf16_rne((uint16_t *)dst, (const float *)(g_map + 64), n / 2);
        if (rc != ST_ERR_FAULT) {
            fail("repeated fault %d: status %d, expected ST_ERR_FAULT", i, rc);
            break;
        }
        a += 1, b += 2, c += 3, d += 4, e += 5, f += 6, g += 7, h += 8;
    }
    if (a + b + c + d + e + f + g + h != want)
        fail("the caller's locals changed across faulting calls");
    free(dst);
    unmap();
}

/* The handler may run on an alternate signal stack (SA_ONSTACK, set by this
   library over a default disposition, or by a sanitizer's handler it chains):
   the jump must leave that stack, and the faulting signal unblocked. */
static void test_alternate_signal_stack(void)
{
    stack_t alt, old, now;
    memset(&alt, 0, sizeof alt);
    alt.ss_size = 256 * 1024;
    alt.ss_sp = xmalloc(alt.ss_size);
    if (sigaltstack(&alt, &old) != 0) {
        printf("FATAL: sigaltstack failed\n");
        exit(1);
    }
    struct sigaction cur;
    sigaction(SIGBUS, NULL, &cur);
    if (!(cur.sa_flags & SA_ONSTACK))
        fail("the SIGBUS handler lacks SA_ONSTACK: this test would not use the alternate stack");
    map_truncated(0);
    float *dst = xmalloc(MAP_BYTES * 2);
    for (int i = 0; i < 50; i++)
        check_fault(st_bf16_to_f32(dst, (const uint16_t *)g_map, MAP_BYTES / 2), "bf16_to_f32 on the alternate stack",
                    g_map + KEEP_BYTES, MAP_BYTES - KEEP_BYTES);
    if (sigaltstack(NULL, &now) != 0 || (now.ss_flags & SS_ONSTACK))
        fail("still on the alternate signal stack after the fault");
    sigset_t mask;
    pthread_sigmask(SIG_SETMASK, NULL, &mask);
    if (sigismember(&mask, SIGBUS) || sigismember(&mask, SIGSEGV))
        fail("SIGBUS/SIGSEGV left blocked after the fault");
    free(dst);
    unmap();
    if (sigaltstack(&old, NULL) != 0)
        fail("cannot restore the previous alternate stack");
    free(alt.ss_sp);
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

/* st_fault_guard_enable(0): a kernel's fault is no longer caught, so it ends the
   process (checked in a child); switched on again, it is ST_ERR_FAULT again. */
static void test_switch(void)
{
    if (st_fault_guard_enable(0) != 0 || st_fault_guard_active())
        fail("st_fault_guard_enable(0) left the guard active");
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        map_truncated(0);
        float *dst = xmalloc(MAP_BYTES * 2);
        int rc = st_bf16_to_f32(dst, (const uint16_t *)g_map, MAP_BYTES / 2);
        _exit(rc == ST_ERR_FAULT ? 3 : 0); /* reached only if the fault did not end the child */
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 3))
        fail("with the guard switched off, a kernel's fault %s", WEXITSTATUS(status) == 3
             ? "was still turned into ST_ERR_FAULT" : "did not happen");
    if (st_fault_guard_enable(1) != 1 || !st_fault_guard_active())
        fail("st_fault_guard_enable(1) did not switch the guard back on");
    map_truncated(0);
    float *dst = xmalloc(MAP_BYTES * 2);
    check_fault(st_bf16_to_f32(dst, (const uint16_t *)g_map, MAP_BYTES / 2), "bf16_to_f32 after switching back on",
                g_map + KEEP_BYTES, MAP_BYTES - KEEP_BYTES);
    free(dst);
    unmap();
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
    test_caller_state_survives();
    test_alternate_signal_stack();
    test_foreign_fault_passed_on();
    test_switch();
    return test_end("fault");
}
