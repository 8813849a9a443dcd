/* The "avx512" level: AVX-512 F+BW+VL (the kernels are in avx512_impl.h). */
#define STN_AVX512_TABLE stn_kernels_avx512
#define STN_AVX512_NAME "avx512"
#define STN_AVX512_BF16 0
#include "avx512_impl.h"
