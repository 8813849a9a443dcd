/* The "avx512bf16" level: the avx512 kernels, plus AVX512_BF16 (and DQ) for
   F32 -> BF16 RNE where the instruction meets the rule (see avx512_impl.h). */
#define STN_AVX512_TABLE stn_kernels_avx512bf16
#define STN_AVX512_NAME "avx512bf16"
#define STN_AVX512_BF16 1
#include "avx512_impl.h"
