/* simd.h: vector helpers that more than one kernel file uses (private to
 * src/interp; simd.c decides at run time which of them may run). */
#ifndef SIMD_H
#define SIMD_H

#include "eval.h"

#ifdef INTERP_HAVE_AVX2
#include <immintrin.h>

/* The arrays must become registers: unroll every loop. */
#define SIMD_UNROLL _Pragma("GCC unroll 16")

/* r[a] (8 floats each) becomes column a of the 8 x 8 square. */
__attribute__((target("avx2"))) static inline void simd_transpose8_ps(__m256 *r)
{
    __m256 t[8], u[8];
    SIMD_UNROLL for (int i = 0; i < 4; i++) {
        t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    SIMD_UNROLL for (int i = 0; i < 2; i++) {
        u[4 * i] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
        u[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
        u[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
        u[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
    }
    SIMD_UNROLL for (int a = 0; a < 4; a++) {
        r[a] = _mm256_permute2f128_ps(u[a], u[a + 4], 0x20);
        r[a + 4] = _mm256_permute2f128_ps(u[a], u[a + 4], 0x31);
    }
}

#endif /* INTERP_HAVE_AVX2 */

#endif /* SIMD_H */
