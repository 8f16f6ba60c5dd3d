/* simd.c: which vector instructions the kernels may use.
 *
 * The build targets plain x86-64 (SSE2), so that the binaries run on any
 * x86-64 machine; a few kernels that gain most from wider registers (the
 * 4-byte transpose, the bf16/f16 codecs) have AVX2 versions chosen here at
 * run time.  HLOCHECK_SIMD=sse2 in the environment keeps to the SSE2 ones:
 * the unit tests run once each way (scripts/run_unit.sh), so both stay
 * tested on machines that have AVX2.  The fused bf16 arithmetic also has an
 * AVX-512 version; HLOCHECK_SIMD=avx2 keeps to AVX2. */
#include "eval.h"

#include <stdlib.h>
#include <string.h>

bool interp_use_avx2(void)
{
    static int use = -1;
    if (use < 0) {
        const char *force = getenv("HLOCHECK_SIMD");
#if defined(__GNUC__) && defined(__x86_64__)
        use = !(force && strcmp(force, "sse2") == 0) && __builtin_cpu_supports("avx2");
#else
        (void)force;
        use = 0;
#endif
    }
    return use != 0;
}

/* AVX-512 (F, BW, VL) for the few loops that have such a version; also off
 * with HLOCHECK_SIMD=avx2, which keeps the AVX2 versions testable on
 * machines that have AVX-512. */
bool interp_use_avx512(void)
{
    static int use = -1;
    if (use < 0) {
        const char *force = getenv("HLOCHECK_SIMD");
#if defined(__GNUC__) && defined(__x86_64__)
        use = interp_use_avx2() && !(force && strcmp(force, "avx2") == 0) && __builtin_cpu_supports("avx512f") &&
              __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
#else
        (void)force;
        use = 0;
#endif
    }
    return use != 0;
}
