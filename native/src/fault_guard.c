/* See fault_guard.h for what the handler takes over and what it passes on. */
#define _GNU_SOURCE
#include "fault_guard.h"

#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/asan_interface.h>
#endif

#include "kernels_internal.h"
#include "store_fence.h"

__thread struct stn_guard *stn_guard_current __attribute__((tls_model("initial-exec")));
static __thread void *last_fault __attribute__((tls_model("initial-exec")));

/* This library's executable segment: the only PCs whose faults are ours. */
static uintptr_t code_lo, code_hi;
static struct sigaction previous[2]; /* SIGBUS, SIGSEGV as they were before us */
static int handlers_installed;       /* 1 once both handlers are ours */
int stn_guard_on;                    /* see fault_guard.h */

#if defined(__linux__) && defined(__x86_64__)
#define STN_FAULT_PC(uc) ((uintptr_t)(uc)->uc_mcontext.gregs[REG_RIP])
#elif defined(__linux__) && defined(__aarch64__)
#define STN_FAULT_PC(uc) ((uintptr_t)(uc)->uc_mcontext.pc)
#endif

static struct sigaction *previous_for(int sig)
{
    return &previous[sig == SIGBUS ? 0 : 1];
}

/*
 * The previous handler, called as the kernel would have called it. A default
 * (or ignored) disposition is restored and the fault re-executed, which then
 * takes the default action (for a fault, SIG_IGN is not honoured either).
 */
static void pass_on(int sig, siginfo_t *info, void *uc)
{
    struct sigaction *old = previous_for(sig);
    if (old->sa_flags & SA_SIGINFO) {
        old->sa_sigaction(sig, info, uc);
        return;
    }
    if (old->sa_handler == SIG_DFL || old->sa_handler == SIG_IGN) {
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        sigaction(sig, &dfl, NULL);
        if (info->si_code <= 0) /* sent by kill/raise, not a fault: nothing re-executes */
            raise(sig);
        return;
    }
    old->sa_handler(sig);
}

#ifdef STN_FAULT_PC
static void on_fault(int sig, siginfo_t *info, void *ucv)
{
    ucontext_t *uc = (ucontext_t *)ucv;
    uintptr_t pc = STN_FAULT_PC(uc);
    /* The PC test comes first: it needs no memory but two globals, so the
       signals of other code pay almost nothing before they are passed on. */
    /* si_code > 0: raised by the CPU for an access, not sent with kill/raise. */
    if (pc >= code_lo && pc < code_hi && info->si_code > 0) {
        struct stn_guard *g = stn_guard_current;
        if (g != NULL) {
            stn_guard_current = NULL;
            g->mask = uc->uc_sigmask;
            g->fault_address = info->si_addr;
#ifdef STN_GUARD_BUILTIN_JMP
#ifdef __SANITIZE_ADDRESS__
            __asan_handle_no_return(); /* unpoison the frames the jump skips */
#endif
            __builtin_longjmp(g->env, 1);
#else
            siglongjmp(g->env, 1);
#endif
        }
    }
    pass_on(sig, info, ucv);
}

static int find_segment(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    uintptr_t self = (uintptr_t)data;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        uintptr_t hi = lo + ph->p_memsz;
        if (self >= lo && self < hi) {
            code_lo = lo;
            code_hi = hi;
            return 1;
        }
    }
    return 0;
}

static int install_one(int sig)
{
    struct sigaction act, old;
    if (sigaction(sig, NULL, &old) != 0)
        return 0;
    memset(&act, 0, sizeof act);
    act.sa_sigaction = on_fault;
    /* The previous handler's mask and flags (its stack included), so that passing
       a signal on changes nothing it can see; never one-shot. A default
       disposition gets SA_ONSTACK, so a fault from a stack overflow can still be
       delivered where the thread has an alternate stack. */
    act.sa_mask = old.sa_mask;
    int dfl = !(old.sa_flags & SA_SIGINFO) && (old.sa_handler == SIG_DFL || old.sa_handler == SIG_IGN);
    act.sa_flags = (old.sa_flags & ~SA_RESETHAND) | SA_SIGINFO | (dfl ? SA_ONSTACK : 0);
    *previous_for(sig) = old;
    return sigaction(sig, &act, NULL) == 0;
}
#endif

/* Called once from the library constructor. */
void stn_guard_install(void)
{
#ifdef STN_FAULT_PC
    const char *env = getenv("SAFETENSORS_NATIVE_FAULT_GUARD");
    if (env != NULL && strcmp(env, "0") == 0)
        return;
    if (!dl_iterate_phdr(find_segment, (void *)(uintptr_t)stn_guard_install))
        return;
    handlers_installed = install_one(SIGBUS) && install_one(SIGSEGV);
    __atomic_store_n(&stn_guard_on, handlers_installed, __ATOMIC_RELAXED);
#endif
}

void stn_guard_landed(struct stn_guard *g)
{
    stn_store_fence(); /* the kernel may have been streaming when it faulted */
    pthread_sigmask(SIG_SETMASK, &g->mask, NULL);
    last_fault = g->fault_address;
}

ST_API int st_fault_guard_enable(int on)
{
    /* The handlers stay installed either way: a call already inside the guard
       when it is switched off keeps its protection to the end. */
    __atomic_store_n(&stn_guard_on, on != 0 && handlers_installed, __ATOMIC_RELAXED);
    return st_fault_guard_active();
}

ST_API int st_fault_guard_active(void)
{
#ifdef STN_FAULT_PC
    if (!__atomic_load_n(&stn_guard_on, __ATOMIC_RELAXED))
        return 0;
    /* Someone may have installed a handler over ours since (checked on demand). */
    struct sigaction bus, segv;
    if (sigaction(SIGBUS, NULL, &bus) != 0 || sigaction(SIGSEGV, NULL, &segv) != 0)
        return 0;
    return (bus.sa_flags & SA_SIGINFO) && bus.sa_sigaction == on_fault &&
           (segv.sa_flags & SA_SIGINFO) && segv.sa_sigaction == on_fault;
#else
    return 0;
#endif
}

ST_API uintptr_t st_last_fault_address(void)
{
    return (uintptr_t)last_fault;
}
