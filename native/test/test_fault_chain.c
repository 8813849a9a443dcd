/*
 * Chaining, as in a JVM: a handler installed BEFORE the library loads (here by
 * this program; in a JVM by the JVM) must still receive every fault that is
 * not a kernel's, with the same signal number, address and context (it moves
 * the PC past the faulting load, as a JVM does for an implicit null check), and
 * must not see the faults a kernel turns into ST_ERR_FAULT.
 * argv[1] is the library file (loaded with dlopen after the handler is set).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "safetensors_native.h"

static volatile sig_atomic_t g_calls;
static volatile sig_atomic_t g_last_sig;
static void *volatile g_last_addr;

/* One load whose length the handler knows: x86-64 `movzbl (%rdi),%eax` is 3 bytes
   (0f b6 07), aarch64 `ldrb w0, [x1]` is 4. Written in assembly so that no
   compiler (or sanitizer instrumentation) changes the instruction. */
__attribute__((noinline)) static int probe(const volatile unsigned char *p)
{
    int v;
#if defined(__x86_64__)
    __asm__ volatile("movzbl (%%rdi), %%eax" : "=a"(v) : "D"(p) : "memory");
#elif defined(__aarch64__)
    register const volatile unsigned char *x1 __asm__("x1") = p;
    register long x0 __asm__("x0");
    __asm__ volatile("ldrb w0, [x1]" : "=r"(x0) : "r"(x1) : "memory");
    v = (int)x0;
#endif
    return v;
}

static void prior_handler(int sig, siginfo_t *info, void *ucv)
{
    ucontext_t *uc = ucv;
    g_calls++;
    g_last_sig = sig;
    g_last_addr = info->si_addr;
    /* Resume after the load with a result of 0x5A, as a JVM resumes at its stub. */
#if defined(__x86_64__)
    uc->uc_mcontext.gregs[REG_RAX] = 0x5A;
    uc->uc_mcontext.gregs[REG_RIP] += 3;
#elif defined(__aarch64__)
    uc->uc_mcontext.regs[0] = 0x5A;
    uc->uc_mcontext.pc += 4;
#endif
}

int main(int argc, char **argv)
{
#if !defined(__linux__) || !(defined(__x86_64__) || defined(__aarch64__))
    printf("SKIPPED: no fault guard on this platform\n");
    return 77;
#else
    if (argc < 2) {
        printf("usage: test_fault_chain <library>\n");
        return 2;
    }
    struct sigaction act;
    memset(&act, 0, sizeof act);
    act.sa_sigaction = prior_handler;
    act.sa_flags = SA_SIGINFO;
    sigemptyset(&act.sa_mask);
    sigaction(SIGSEGV, &act, NULL);
    sigaction(SIGBUS, &act, NULL);

    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        printf("FAIL: dlopen: %s\n", dlerror());
        return 1;
    }
    int (*active)(void) = (int (*)(void))dlsym(lib, "st_fault_guard_active");
    int (*bf16_to_f32)(float *, const uint16_t *, size_t) =
        (int (*)(float *, const uint16_t *, size_t))dlsym(lib, "st_bf16_to_f32");
    if (active == NULL || bf16_to_f32 == NULL || !active()) {
        printf("FAIL: the library did not install its handler over ours\n");
        return 1;
    }
    int failures = 0;

    long page = sysconf(_SC_PAGESIZE);
    unsigned char *p = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    mprotect(p + page, page, PROT_NONE);

    /* 1. A fault in this program: the prior handler runs, with our address, and resumes us. */
    int v = probe(p + page + 8);
    if (g_calls != 1 || g_last_sig != SIGSEGV || g_last_addr != p + page + 8 || v != 0x5A) {
        printf("FAIL: foreign SIGSEGV: calls=%d sig=%d addr=%p (want %p) value=%#x\n", (int)g_calls,
               (int)g_last_sig, g_last_addr, (void *)(p + page + 8), v);
        failures++;
    }
    /* 2. A fault in a kernel: ST_ERR_FAULT, and the prior handler is not called. */
    float dst[1024];
    int rc = bf16_to_f32(dst, (const uint16_t *)(p + page - 64), 512);
    if (rc != ST_ERR_FAULT || g_calls != 1) {
        printf("FAIL: kernel fault: status %d (want %d), prior handler calls %d (want 1)\n", rc, ST_ERR_FAULT,
               (int)g_calls);
        failures++;
    }
    /* 3. And again a foreign fault afterwards: still passed on. */
    v = probe(p + page + 16);
    if (g_calls != 2 || g_last_addr != p + page + 16 || v != 0x5A) {
        printf("FAIL: second foreign SIGSEGV: calls=%d value=%#x\n", (int)g_calls, v);
        failures++;
    }
    printf(failures ? "fault_chain: %d failure(s)\n" : "fault_chain: all passed\n", failures);
    return failures != 0;
#endif
}
