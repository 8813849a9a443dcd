/* The store fence that ends every use of non-temporal stores. */
#ifndef STN_STORE_FENCE_H
#define STN_STORE_FENCE_H

/* Orders non-temporal stores before the caller's next stores; kernels that
   stream call it before they return, and the fault path calls it too. */
static inline void stn_store_fence(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_sfence();
#endif
}

#endif /* STN_STORE_FENCE_H */
