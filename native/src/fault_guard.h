/*
 * Turns a memory fault (SIGBUS, SIGSEGV) inside one of this library's kernels
 * into the status ST_ERR_FAULT instead of a process abort. The typical cause is
 * a file truncated by another process while the caller has it mapped: reading a
 * page past the new end of file raises SIGBUS.
 *
 * How: at load, the library installs one handler for SIGBUS and SIGSEGV and
 * keeps the handler it replaced (in a JVM: the JVM's own). A signal is taken
 * over only when all hold:
 *   - it was raised by a memory access (si_code > 0), not sent by kill/raise,
 *   - the faulting instruction lies in this library's executable segment, and
 *   - the thread is inside a guarded kernel call (a thread-local pointer to the
 *     call's jump buffer is set);
 * the handler then jumps back to the call's entry, which returns ST_ERR_FAULT.
 * Every other signal (a JVM's implicit null checks, safepoint polls, stack
 * banging, a bug anywhere else) goes to the previous handler with the same
 * arguments, so that handler sees exactly what it would have seen alone.
 *
 * The jump: with GCC on x86-64 the entry saves its context with
 * __builtin_setjmp, three stores (frame pointer, stack pointer, resume
 * address), instead of calling glibc's sigsetjmp, which was nearly all of the
 * guard's per-call cost (native/README.md, "Tuning measurements"; the kernel
 * report measures what the guard costs a call: bench/results/kernels.md). That
 * is enough to come back: GCC treats every callee-saved register
 * as lost at the resume address, so the entry keeps its caller's ones in its
 * own frame (its epilogue restores them) and reloads its locals from that
 * frame; restoring the stack and frame pointers recovers both (x86-64 SysV has
 * no callee-saved vector registers, so the kernels' AVX state does not
 * matter). The handler jumps from its own frame, possibly on an alternate
 * signal stack: the builtin switches to the entry's stack, which takes the
 * thread off the alternate one, and the signal mask, still the handler's, is
 * set back after landing (stn_guard_landed) as after siglongjmp with no saved
 * mask. Under ASan the handler first tells the runtime that the skipped frames
 * are gone (what its siglongjmp interceptor does). Other compilers and targets
 * keep sigsetjmp/siglongjmp.
 */
#ifndef STN_FAULT_GUARD_H
#define STN_FAULT_GUARD_H

#include <setjmp.h>
#include <signal.h>
#include <stdint.h>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define STN_GUARD_BUILTIN_JMP 1
typedef intptr_t stn_jmp_buf[5]; /* the size GCC documents for the builtins */
#define STN_SETJMP(env) __builtin_setjmp(env)
#else
typedef sigjmp_buf stn_jmp_buf;
#define STN_SETJMP(env) sigsetjmp(env, 0) /* without the mask: no syscall per call */
#endif

struct stn_guard {
    stn_jmp_buf env;
    sigset_t mask;       /* the mask at the fault, restored after the jump */
    void *fault_address; /* si_addr of the fault */
};

/* The guard of the current thread's kernel call, or NULL. */
extern __thread struct stn_guard *stn_guard_current __attribute__((tls_model("initial-exec")));

/* 1 when calls are guarded: set by the library constructor once its handlers
   are installed, and switched by st_fault_guard_enable. 0 with
   SAFETENSORS_NATIVE_FAULT_GUARD=0, where installing failed, or switched off:
   calls then run unguarded, without the setjmp, which is the baseline for
   measuring what the guard costs. Read once per call (relaxed atomic: the
   switch orders nothing else). */
extern int stn_guard_on;

/* Restores the signal mask after a jump out of the handler and records the fault. */
void stn_guard_landed(struct stn_guard *g);

/*
 * Runs the expression CALL (an int status) with the guard set and stores its
 * result in RC, or ST_ERR_FAULT if it faulted. RC is assigned only after the
 * jump target, so it needs no volatile.
 */
#define STN_GUARDED(RC, CALL)                                                              \
    do {                                                                                   \
        struct stn_guard stn_g_;                                                           \
        if (!__atomic_load_n(&stn_guard_on, __ATOMIC_RELAXED)) {                           \
            (RC) = (CALL);                                                                 \
        } else if (STN_SETJMP(stn_g_.env) == 0) {                                          \
            stn_guard_current = &stn_g_;                                                   \
            __atomic_signal_fence(__ATOMIC_SEQ_CST);                                       \
            (RC) = (CALL);                                                                 \
            __atomic_signal_fence(__ATOMIC_SEQ_CST);                                       \
            stn_guard_current = NULL;                                                      \
        } else {                                                                           \
            stn_guard_landed(&stn_g_);                                                     \
            (RC) = ST_ERR_FAULT;                                                           \
        }                                                                                  \
    } while (0)

#endif /* STN_FAULT_GUARD_H */
