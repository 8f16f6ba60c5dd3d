/* test_elementwise.c: the element-wise evaluators (src/interp/eval_elementwise.c,
 * and convert, bitcast-convert and reduce-precision in eval_convert.c) run
 * through whole modules, and interp_binary_kernel called directly.
 *
 * Expected values are independent of the code under test: bit patterns
 * derived by hand from each format's definition (the comment beside a case
 * shows the derivation), C's double arithmetic and libm rounded once to f32,
 * or dtype.c's reference conversions applied element by element. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "interp_test_util.h"

#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Helpers                                                              */

#define UNARY_HLO(IN, OUT, OP) \
    "HloModule m\nENTRY e {\n a = " IN " parameter(0)\n ROOT r = " OUT " " OP "(a)\n}\n"
#define BINARY_HLO(IN, OUT, OP, ATTRS)                                            \
    "HloModule m\nENTRY e {\n a = " IN " parameter(0)\n b = " IN " parameter(1)\n" \
    " ROOT r = " OUT " " OP "(a, b)" ATTRS "\n}\n"

static float f32_from(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Runs hlo on params and compares the result's bytes with expected. */
static void check_bytes(const char *hlo, const void *const *params, const void *expected, size_t bytes)
{
    TestRun run;
    Value *v = test_run_ok(&run, hlo, params);
    assert_int_equal(value_bytes(v), bytes);
    if (bytes)
        assert_memory_equal(v->data, expected, bytes);
    test_run_free(&run);
}

/* The same for f32 results, naming the first differing element. */
static void check_f32(const char *hlo, const void *const *params, const uint32_t *expected, int n)
{
    TestRun run;
    Value *v = test_run_ok(&run, hlo, params);
    assert_int_equal(value_elements(v), n);
    const float *got = v->data;
    for (int i = 0; i < n; i++)
        if (f32_bits(got[i]) != expected[i])
            fail_msg("element %d: got 0x%08x (%g), want 0x%08x (%g)", i, f32_bits(got[i]),
                     (double)got[i], expected[i], (double)f32_from(expected[i]));
    test_run_free(&run);
}

/* Runs hlo expecting failure with code and a message containing text. */
static void check_error(const char *hlo, const void *const *params, ErrCode code, const char *text)
{
    TestRun run;
    assert_false(test_run(&run, hlo, params));
    assert_int_equal(run.err.code, code);
    if (!strstr(run.err.msg, text))
        fail_msg("error \"%s\" does not mention \"%s\"", run.err.msg, text);
    test_run_free(&run);
}

static const uint32_t NEG_QNAN = 0xffc00000u;
static const uint32_t PINF = 0x7f800000u, NINF = 0xff800000u;
static const uint32_t NEG_ZERO = 0x80000000u;

/* ------------------------------------------------------------------ */
/* Float arithmetic                                                     */

static void test_f32_arithmetic_and_signed_zeros(void **state)
{
    (void)state;
    float a[6] = { -0.0f, -0.0f, 1.5f, -1.0f, 1.0f, 0.0f };
    float b[6] = { -0.0f, 0.0f, 2.25f, 0.0f, 0.0f, 0.0f };
    const void *p[] = { a, b };
    /* -0 + -0 = -0; -0 + +0 = +0 under round-to-nearest. */
    uint32_t add[6] = { NEG_ZERO, 0, f32_bits(3.75f), f32_bits(-1.0f), f32_bits(1.0f), 0 };
    check_f32(BINARY_HLO("f32[6]", "f32[6]", "add", ""), p, add, 6);
    uint32_t mul[6] = { 0, NEG_ZERO, f32_bits(3.375f), NEG_ZERO, 0, 0 };
    check_f32(BINARY_HLO("f32[6]", "f32[6]", "multiply", ""), p, mul, 6);
    /* 1/0 = inf, -1/0 = -inf, 0/0 = NaN (x86 produces the negative default NaN). */
    uint32_t div[6] = { 0, 0, 0, NINF, PINF, 0 };
    TestRun run;
    Value *v = test_run_ok(&run, BINARY_HLO("f32[6]", "f32[6]", "divide", ""), p);
    const float *d = v->data;
    assert_true(isnan(d[0]) && isnan(d[1]) && isnan(d[5]));
    assert_int_equal(f32_bits(d[2]), f32_bits(1.5f / 2.25f));
    assert_int_equal(f32_bits(d[3]), div[3]);
    assert_int_equal(f32_bits(d[4]), div[4]);
    test_run_free(&run);
    uint32_t neg[6] = { 0, 0, f32_bits(-1.5f), f32_bits(1.0f), f32_bits(-1.0f), NEG_ZERO };
    check_f32(UNARY_HLO("f32[6]", "f32[6]", "negate"), p, neg, 6);
}

static void test_f32_max_min_propagate_nan_in_both_orders(void **state)
{
    (void)state;
    uint32_t nan1 = 0x7fc00001u, nan2 = 0xffc00002u;    /* distinct payloads and signs */
    float a[6] = { f32_from(nan1), 1.0f, f32_from(nan1), -0.0f, 0.0f, 2.0f };
    float b[6] = { 1.0f, f32_from(nan2), f32_from(nan2), 0.0f, -0.0f, -3.0f };
    const void *p[] = { a, b };
    /* A NaN operand is the result, lhs first; of two zeros, maximum gives +0
     * and minimum -0 in either order (IEEE 754-2019, StableHLO). */
    uint32_t max[6] = { nan1, nan2, nan1, 0, 0, f32_bits(2.0f) };
    uint32_t min[6] = { nan1, nan2, nan1, NEG_ZERO, NEG_ZERO, f32_bits(-3.0f) };
    check_f32(BINARY_HLO("f32[6]", "f32[6]", "maximum", ""), p, max, 6);
    check_f32(BINARY_HLO("f32[6]", "f32[6]", "minimum", ""), p, min, 6);
}

static void test_f64_max_nan_and_remainder(void **state)
{
    (void)state;
    double a[4] = { NAN, 5.5, -5.5, 7.0 };
    double b[4] = { 1.0, 2.0, 2.0, -0.0 };
    const void *p[] = { a, b };
    TestRun run;
    Value *v = test_run_ok(&run, BINARY_HLO("f64[4]", "f64[4]", "maximum", ""), p);
    const double *d = v->data;
    assert_true(isnan(d[0]));
    assert_true(d[1] == 5.5 && d[2] == 2.0 && d[3] == 7.0);
    test_run_free(&run);
    /* fmod: sign of the dividend; x rem 0 is NaN. */
    v = test_run_ok(&run, BINARY_HLO("f64[4]", "f64[4]", "remainder", ""), p);
    d = v->data;
    assert_true(isnan(d[0]) && d[1] == 1.5 && d[2] == -1.5 && isnan(d[3]));
    test_run_free(&run);
}

static void test_f32_power_special_cases(void **state)
{
    (void)state;
    float a[5] = { NAN, 1.0f, 2.0f, 0.0f, 4.0f };
    float b[5] = { 0.0f, NAN, 0.5f, 0.0f, -0.5f };
    const void *p[] = { a, b };
    /* x^0 = 1 and 1^y = 1 even for NaN; 2^0.5 = sqrt(2) = 1.41421356... ->
     * 0x3fb504f3; 4^-0.5 = 0.5. */
    uint32_t want[5] = { f32_bits(1.0f), f32_bits(1.0f), 0x3fb504f3u, f32_bits(1.0f), f32_bits(0.5f) };
    check_f32(BINARY_HLO("f32[5]", "f32[5]", "power", ""), p, want, 5);
}

/* Rounded from the double-precision libm result (correct to well under
 * half an f32 ulp) to f32; f32 libm is within an ulp of that. */
static void check_f32_fn_near(const char *hlo, float x, double (*fn)(double), int max_ulps)
{
    float a[1] = { x };
    const void *p[] = { a };
    TestRun run;
    Value *v = test_run_ok(&run, hlo, p);
    float got = *(const float *)v->data;
    float want = (float)fn(x);
    long diff = labs((long)f32_bits(got) - (long)f32_bits(want));
    if (diff > max_ulps)
        fail_msg("%s(%g): got %.9g, want %.9g", hlo, (double)x, (double)got, (double)want);
    test_run_free(&run);
}

static double logistic_ref(double x)
{
    return 1.0 / (1.0 + exp(-x));
}

static double rsqrt_ref(double x)
{
    return 1.0 / sqrt(x);
}

static void test_f32_transcendentals_match_libm(void **state)
{
    (void)state;
    check_f32_fn_near(UNARY_HLO("f32[1]", "f32[1]", "exponential"), 1.0f, exp, 1);
    check_f32_fn_near(UNARY_HLO("f32[1]", "f32[1]", "log"), 2.0f, log, 1);
    check_f32_fn_near(UNARY_HLO("f32[1]", "f32[1]", "sine"), 1.0f, sin, 1);
    check_f32_fn_near(UNARY_HLO("f32[1]", "f32[1]", "cosine"), 1.0f, cos, 1);
    check_f32_fn_near(UNARY_HLO("f32[1]", "f32[1]", "sqrt"), 2.0f, sqrt, 0);
    check_f32_fn_near(UNARY_HLO("f32[1]", "f32[1]", "tanh"), 0.5f, tanh, 1);
    check_f32_fn_near(UNARY_HLO("f32[1]", "f32[1]", "tan"), 1.0f, tan, 1);
    check_f32_fn_near(UNARY_HLO("f32[1]", "f32[1]", "exponential-minus-one"), 1e-3f, expm1, 1);
    check_f32_fn_near(UNARY_HLO("f32[1]", "f32[1]", "log-plus-one"), 1e-3f, log1p, 1);
    check_f32_fn_near(UNARY_HLO("f32[1]", "f32[1]", "cbrt"), 27.0f, cbrt, 0);
    check_f32_fn_near(UNARY_HLO("f32[1]", "f32[1]", "erf"), 0.5f, erf, 1);
    check_f32_fn_near(UNARY_HLO("f32[1]", "f32[1]", "logistic"), 1.0f, logistic_ref, 1);
    check_f32_fn_near(UNARY_HLO("f32[1]", "f32[1]", "rsqrt"), 3.0f, rsqrt_ref, 1);
    check_f32_fn_near(UNARY_HLO("f32[1]", "f32[1]", "acosh"), 2.0f, acosh, 1);
    check_f32_fn_near(UNARY_HLO("f32[1]", "f32[1]", "atanh"), 0.5f, atanh, 1);
    float y[1] = { 1.0f }, x[1] = { 1.0f };
    const void *p[] = { y, x };
    uint32_t quarter_pi[1] = { f32_bits((float)atan2(1.0, 1.0)) };     /* 0x3f490fdb */
    check_f32(BINARY_HLO("f32[1]", "f32[1]", "atan2", ""), p, quarter_pi, 1);
}

static void test_f32_sign_and_rounding(void **state)
{
    (void)state;
    float a[8] = { -0.0f, 0.0f, f32_from(0xffc00001u), -3.0f, INFINITY, 2.5f, -2.5f, -0.5f };
    const void *p[] = { a };
    /* sign keeps NaN (bits too) and both zeros, else +-1. */
    uint32_t sign[8] = { NEG_ZERO, 0, 0xffc00001u, f32_bits(-1.0f), f32_bits(1.0f), f32_bits(1.0f),
                         f32_bits(-1.0f), f32_bits(-1.0f) };
    check_f32(UNARY_HLO("f32[8]", "f32[8]", "sign"), p, sign, 8);
    float r[6] = { 2.5f, -2.5f, 3.5f, 0.5f, -0.5f, -1.5f };
    const void *q[] = { r };
    uint32_t afz[6] = { f32_bits(3.0f), f32_bits(-3.0f), f32_bits(4.0f), f32_bits(1.0f), f32_bits(-1.0f),
                        f32_bits(-2.0f) };
    uint32_t even[6] = { f32_bits(2.0f), f32_bits(-2.0f), f32_bits(4.0f), 0, NEG_ZERO, f32_bits(-2.0f) };
    uint32_t floor_[6] = { f32_bits(2.0f), f32_bits(-3.0f), f32_bits(3.0f), 0, f32_bits(-1.0f), f32_bits(-2.0f) };
    uint32_t ceil_[6] = { f32_bits(3.0f), f32_bits(-2.0f), f32_bits(4.0f), f32_bits(1.0f), NEG_ZERO, f32_bits(-1.0f) };
    check_f32(UNARY_HLO("f32[6]", "f32[6]", "round-nearest-afz"), q, afz, 6);
    check_f32(UNARY_HLO("f32[6]", "f32[6]", "round-nearest-even"), q, even, 6);
    check_f32(UNARY_HLO("f32[6]", "f32[6]", "floor"), q, floor_, 6);
    check_f32(UNARY_HLO("f32[6]", "f32[6]", "ceil"), q, ceil_, 6);
}

static void test_is_finite_f32_and_bf16(void **state)
{
    (void)state;
    float a[5] = { 1.0f, INFINITY, -INFINITY, NAN, -0.0f };
    const void *p[] = { a };
    uint8_t want[5] = { 1, 0, 0, 0, 1 };
    check_bytes(UNARY_HLO("f32[5]", "pred[5]", "is-finite"), p, want, 5);
    uint16_t h[5] = { 0x3f80, 0x7f80, 0xff80, 0x7fc1, 0x8000 };   /* 1, inf, -inf, NaN, -0 */
    const void *q[] = { h };
    check_bytes(UNARY_HLO("bf16[5]", "pred[5]", "is-finite"), q, want, 5);
}

/* ------------------------------------------------------------------ */
/* Narrow floats: computed in f32, rounded once per op                  */

static void test_bf16_add_rounds_each_op_to_even(void **state)
{
    (void)state;
    /* 1 + 2^-8: halfway between 1 (0x3f80) and 1 + 2^-7 (0x3f81), ties to
     * the even 0x3f80.  0x3f81 + 2^-8 ties between 0x3f81 and 0x3f82: even
     * 0x3f82.  1 + 1.5 * 2^-8 is past halfway: 0x3f81. */
    uint16_t a[3] = { 0x3f80, 0x3f81, 0x3f80 };
    uint16_t b[3] = { 0x3b80, 0x3b80, 0x3bc0 };     /* 2^-8, 2^-8, 1.5 * 2^-8 */
    const void *p[] = { a, b };
    uint16_t want[3] = { 0x3f80, 0x3f82, 0x3f81 };
    check_bytes(BINARY_HLO("bf16[3]", "bf16[3]", "add", ""), p, want, sizeof want);
}

static void test_bf16_chain_differs_from_f32_accumulation(void **state)
{
    (void)state;
    /* (1 + 2^-8) + 2^-8 in bf16: the first add rounds back to 1, so the
     * result is 1 (0x3f80); in f32 the sum is 1 + 2^-7 (0x3f81 in bf16). */
    const char *hlo = "HloModule m\nENTRY e {\n a = bf16[1] parameter(0)\n b = bf16[1] parameter(1)\n"
                      " s = bf16[1] add(a, b)\n ROOT r = bf16[1] add(s, b)\n}\n";
    uint16_t a[1] = { 0x3f80 }, b[1] = { 0x3b80 };
    const void *p[] = { a, b };
    uint16_t want[1] = { 0x3f80 };
    check_bytes(hlo, p, want, sizeof want);
    const char *f32 = "HloModule m\nENTRY e {\n a = f32[1] parameter(0)\n b = f32[1] parameter(1)\n"
                      " s = f32[1] add(a, b)\n t = f32[1] add(s, b)\n ROOT r = bf16[1] convert(t)\n}\n";
    float fa[1] = { 1.0f }, fb[1] = { 0x1p-8f };
    const void *q[] = { fa, fb };
    uint16_t want_f32[1] = { 0x3f81 };
    check_bytes(f32, q, want_f32, sizeof want_f32);
}

static void test_f16_overflow_and_subnormal_results(void **state)
{
    (void)state;
    /* 300 * 300 = 90000 > 65504: inf (0x7c00).  2^-14 * 0.5 = 2^-15, the
     * subnormal 0x0200.  2^-24 * 0.5 = 2^-25: a tie between 0 and 2^-24,
     * to the even 0.  1 * 65504 = 65504 (0x7bff). */
    uint16_t a[4] = { 0x5cb0, 0x0400, 0x0001, 0x3c00 };    /* 300, 2^-14, 2^-24, 1 */
    uint16_t b[4] = { 0x5cb0, 0x3800, 0x3800, 0x7bff };    /* 300, 0.5, 0.5, 65504 */
    const void *p[] = { a, b };
    uint16_t want[4] = { 0x7c00, 0x0200, 0x0000, 0x7bff };
    check_bytes(BINARY_HLO("f16[4]", "f16[4]", "multiply", ""), p, want, sizeof want);
}

static void test_f8e4m3fn_add_overflows_to_nan(void **state)
{
    (void)state;
    /* e4m3fn: bias 7, no inf.  448 = 1.75 * 2^8 = 0 1111 110 (0x7e) is the
     * largest; 448 + 32 = 480 is 1.875 * 2^8, the NaN pattern, so the
     * result is NaN (0x7f).  1 + 1 = 2 (0x40).  -448 - 64 = -512 -> NaN
     * with the sign (0xff). */
    uint8_t a[3] = { 0x7e, 0x38, 0xfe };
    uint8_t b[3] = { 0x60, 0x38, 0xe8 };        /* 32 = 0 1100 000, 1 = 0 0111 000, -64 = 1 1101 000 */
    const void *p[] = { a, b };
    uint8_t want[3] = { 0x7f, 0x40, 0xff };
    check_bytes(BINARY_HLO("f8e4m3fn[3]", "f8e4m3fn[3]", "add", ""), p, want, sizeof want);
}

/* Every 16-bit pattern (NaNs, infinities, zeros, subnormals included) as
 * the lhs of bf16 and f16 add, subtract and multiply, against dtype.c's
 * reference conversions around the f32 op; the rhs walks other patterns.
 * Bit for bit, except that a NaN may come out with either sign: which
 * operand's NaN x86 passes on depends on the order the compiler puts the
 * operands of a commutative op in (IEEE leaves it open; the interpreter's
 * paths agree with each other because they share one f32 loop per op,
 * which test_reduce.c checks). */
static void check_all_patterns(const char *type, const char *op, float (*dec)(uint16_t),
                               uint16_t (*enc)(float))
{
    enum { N = 65536 };
    uint16_t *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b), *want = malloc(N * sizeof *want);
    for (int i = 0; i < N; i++) {
        a[i] = (uint16_t)i;
        b[i] = (uint16_t)(i * 40503u + 0x3c00u);
        float x = dec(a[i]), y = dec(b[i]);
        float r = strcmp(op, "add") == 0 ? x + y : strcmp(op, "subtract") == 0 ? x - y : x * y;
        want[i] = enc(r);
    }
    char hlo[256];
    snprintf(hlo, sizeof hlo,
             "HloModule m\nENTRY e {\n a = %s[65536] parameter(0)\n b = %s[65536] parameter(1)\n"
             " ROOT r = %s[65536] %s(a, b)\n}\n", type, type, type, op);
    const void *p[] = { a, b };
    TestRun run;
    Value *v = test_run_ok(&run, hlo, p);
    const uint16_t *got = v->data;
    for (int i = 0; i < N; i++)
        if (got[i] != want[i] && !(isnan(dec(got[i])) && (got[i] & 0x7fffu) == (want[i] & 0x7fffu)))
            fail_msg("%s %s of 0x%04x and 0x%04x: got 0x%04x, want 0x%04x", type, op, a[i], b[i], got[i],
                     want[i]);
    test_run_free(&run);
    free(a);
    free(b);
    free(want);
}

static void test_narrow_add_subtract_multiply_every_pattern(void **state)
{
    (void)state;
    const char *ops[] = { "add", "subtract", "multiply" };
    for (int k = 0; k < 3; k++) {
        check_all_patterns("bf16", ops[k], ir_bf16_to_f32, ir_f32_to_bf16);
        check_all_patterns("f16", ops[k], ir_f16_to_f32, ir_f32_to_f16);
    }
}

/* A long bf16 array (several blocks plus a tail) against dtype.c's
 * reference conversions applied element by element. */
static void test_bf16_multiply_long_array_matches_reference(void **state)
{
    (void)state;
    enum { N = 3001 };
    uint16_t *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b), *want = malloc(N * sizeof *want);
    for (int i = 0; i < N; i++) {
        a[i] = (uint16_t)(i * 40503u);
        b[i] = (uint16_t)(0x3f00u + (unsigned)i * 7u);
        want[i] = ir_f32_to_bf16(ir_bf16_to_f32(a[i]) * ir_bf16_to_f32(b[i]));
    }
    const void *p[] = { a, b };
    check_bytes(BINARY_HLO("bf16[3001]", "bf16[3001]", "multiply", ""), p, want, N * sizeof *want);
    free(a);
    free(b);
    free(want);
}

/* ------------------------------------------------------------------ */
/* Integers                                                             */

static void test_int_add_multiply_wrap(void **state)
{
    (void)state;
    int32_t a[3] = { INT32_MAX, 65536, INT32_MIN };
    int32_t b[3] = { 1, 65536, -1 };
    const void *p[] = { a, b };
    int32_t add[3] = { INT32_MIN, 131072, INT32_MAX };
    int32_t mul[3] = { INT32_MAX, 0, INT32_MIN };      /* 2^32 wraps to 0; INT_MIN * -1 = INT_MIN */
    check_bytes(BINARY_HLO("s32[3]", "s32[3]", "add", ""), p, add, sizeof add);
    check_bytes(BINARY_HLO("s32[3]", "s32[3]", "multiply", ""), p, mul, sizeof mul);
    int8_t c[2] = { 127, -128 }, d[2] = { 1, -1 };
    const void *q[] = { c, d };
    int8_t add8[2] = { -128, 127 };
    check_bytes(BINARY_HLO("s8[2]", "s8[2]", "add", ""), q, add8, sizeof add8);
    uint16_t e[2] = { 65535, 40000 }, f[2] = { 65535, 2 };
    const void *r[] = { e, f };
    uint16_t mul16[2] = { 1, 14464 };      /* 65535^2 = 4294836225 = 1 mod 2^16; 80000 - 65536 */
    check_bytes(BINARY_HLO("u16[2]", "u16[2]", "multiply", ""), r, mul16, sizeof mul16);
    int32_t g[2] = { INT32_MIN, -5 };
    const void *s[] = { g };
    int32_t neg[2] = { INT32_MIN, 5 }, abs_[2] = { INT32_MIN, 5 };
    check_bytes(UNARY_HLO("s32[2]", "s32[2]", "negate"), s, neg, sizeof neg);
    check_bytes(UNARY_HLO("s32[2]", "s32[2]", "abs"), s, abs_, sizeof abs_);
}

static void test_int_divide_and_remainder_edge_cases(void **state)
{
    (void)state;
    int32_t a[6] = { 7, -7, INT32_MIN, 7, -7, 7 };
    int32_t b[6] = { 0, 0, -1, -2, 2, 2 };
    const void *p[] = { a, b };
    int32_t div[6] = { -1, -1, INT32_MIN, -3, -3, 3 };
    int32_t rem[6] = { 7, -7, 0, 1, -1, 1 };
    check_bytes(BINARY_HLO("s32[6]", "s32[6]", "divide", ""), p, div, sizeof div);
    check_bytes(BINARY_HLO("s32[6]", "s32[6]", "remainder", ""), p, rem, sizeof rem);
    uint32_t c[2] = { 7, 7 }, d[2] = { 0, 2 };
    const void *q[] = { c, d };
    uint32_t udiv[2] = { UINT32_MAX, 3 }, urem[2] = { 7, 1 };
    check_bytes(BINARY_HLO("u32[2]", "u32[2]", "divide", ""), q, udiv, sizeof udiv);
    check_bytes(BINARY_HLO("u32[2]", "u32[2]", "remainder", ""), q, urem, sizeof urem);
    int64_t e[2] = { INT64_MIN, INT64_MIN }, f[2] = { -1, 0 };
    const void *r[] = { e, f };
    int64_t div64[2] = { INT64_MIN, -1 }, rem64[2] = { 0, INT64_MIN };
    check_bytes(BINARY_HLO("s64[2]", "s64[2]", "divide", ""), r, div64, sizeof div64);
    check_bytes(BINARY_HLO("s64[2]", "s64[2]", "remainder", ""), r, rem64, sizeof rem64);
    int8_t g[1] = { INT8_MIN }, h[1] = { -1 };
    const void *s[] = { g, h };
    int8_t div8[1] = { INT8_MIN };
    check_bytes(BINARY_HLO("s8[1]", "s8[1]", "divide", ""), s, div8, sizeof div8);
}

static void test_int_shifts_by_width_or_more(void **state)
{
    (void)state;
    int32_t a[6] = { 1, 1, 1, -8, 8, -8 };
    int32_t b[6] = { 31, 32, -1, 40, 40, 1 };       /* -1 is 2^32-1 as unsigned */
    const void *p[] = { a, b };
    int32_t shl[6] = { INT32_MIN, 0, 0, 0, 0, -16 };
    int32_t sra[6] = { 0, 0, 0, -1, 0, -4 };
    int32_t srl[6] = { 0, 0, 0, 0, 0, 0x7ffffffc };
    check_bytes(BINARY_HLO("s32[6]", "s32[6]", "shift-left", ""), p, shl, sizeof shl);
    check_bytes(BINARY_HLO("s32[6]", "s32[6]", "shift-right-arithmetic", ""), p, sra, sizeof sra);
    check_bytes(BINARY_HLO("s32[6]", "s32[6]", "shift-right-logical", ""), p, srl, sizeof srl);
    /* Unsigned arithmetic shifts copy the top bit, as XLA's evaluator does. */
    uint8_t c[4] = { 0x80, 0x80, 0x40, 0xff }, d[4] = { 1, 9, 9, 8 };
    const void *q[] = { c, d };
    uint8_t usra[4] = { 0xc0, 0xff, 0x00, 0xff };
    uint8_t ushl[4] = { 0x00, 0x00, 0x00, 0x00 };
    check_bytes(BINARY_HLO("u8[4]", "u8[4]", "shift-right-arithmetic", ""), q, usra, sizeof usra);
    check_bytes(BINARY_HLO("u8[4]", "u8[4]", "shift-left", ""), q, ushl, sizeof ushl);
    uint64_t e[2] = { 1, 1 }, f[2] = { 63, 64 };
    const void *r[] = { e, f };
    uint64_t shl64[2] = { UINT64_C(1) << 63, 0 };
    check_bytes(BINARY_HLO("u64[2]", "u64[2]", "shift-left", ""), r, shl64, sizeof shl64);
}

static void test_int_power_by_squaring(void **state)
{
    (void)state;
    /* A negative exponent truncates 1 / a^-b toward zero: +-1 for the base
     * -1 by the exponent's parity, 1 for 1, else 0. */
    int32_t a[12] = { 2, 2, 2, -2, 1, -1, 2, 0, 3, -1, -1, -2 };
    int32_t b[12] = { 10, 31, 32, 3, -5, -1, -1, 0, 0, 3, -4, -1 };
    const void *p[] = { a, b };
    int32_t want[12] = { 1024, INT32_MIN, 0, -8, 1, -1, 0, 1, 1, -1, 1, 0 };
    check_bytes(BINARY_HLO("s32[12]", "s32[12]", "power", ""), p, want, sizeof want);
    uint8_t c[2] = { 3, 2 }, d[2] = { 5, 200 };
    const void *q[] = { c, d };
    uint8_t upow[2] = { 243, 0 };
    check_bytes(BINARY_HLO("u8[2]", "u8[2]", "power", ""), q, upow, sizeof upow);
}

static void test_int_bitwise_popcnt_clz_sign(void **state)
{
    (void)state;
    int32_t a[4] = { -1, 0, 1, 0x00f0f000 };
    const void *p[] = { a };
    int32_t pop[4] = { 32, 0, 1, 8 }, clz[4] = { 0, 32, 31, 8 }, not_[4] = { 0, -1, -2, (int32_t)0xff0f0fff };
    int32_t sign[4] = { -1, 0, 1, 1 };
    check_bytes(UNARY_HLO("s32[4]", "s32[4]", "popcnt"), p, pop, sizeof pop);
    check_bytes(UNARY_HLO("s32[4]", "s32[4]", "count-leading-zeros"), p, clz, sizeof clz);
    check_bytes(UNARY_HLO("s32[4]", "s32[4]", "not"), p, not_, sizeof not_);
    check_bytes(UNARY_HLO("s32[4]", "s32[4]", "sign"), p, sign, sizeof sign);
    int8_t c[2] = { -1, 1 };
    const void *q[] = { c };
    int8_t pop8[2] = { 8, 1 }, clz8[2] = { 0, 7 };
    check_bytes(UNARY_HLO("s8[2]", "s8[2]", "popcnt"), q, pop8, sizeof pop8);
    check_bytes(UNARY_HLO("s8[2]", "s8[2]", "count-leading-zeros"), q, clz8, sizeof clz8);
    uint64_t d[1] = { 1 };
    const void *r[] = { d };
    uint64_t clz64[1] = { 63 };
    check_bytes(UNARY_HLO("u64[1]", "u64[1]", "count-leading-zeros"), r, clz64, sizeof clz64);
    uint32_t e[2] = { 0xf0f0f0f0u, 0xffff0000u }, f[2] = { 0xff00ff00u, 0x0000ffffu };
    const void *s[] = { e, f };
    uint32_t and_[2] = { 0xf000f000u, 0 }, or_[2] = { 0xfff0fff0u, 0xffffffffu }, xor_[2] = { 0x0ff00ff0u, 0xffffffffu };
    check_bytes(BINARY_HLO("u32[2]", "u32[2]", "and", ""), s, and_, sizeof and_);
    check_bytes(BINARY_HLO("u32[2]", "u32[2]", "or", ""), s, or_, sizeof or_);
    check_bytes(BINARY_HLO("u32[2]", "u32[2]", "xor", ""), s, xor_, sizeof xor_);
}

static void test_pred_logic_and_power(void **state)
{
    (void)state;
    uint8_t a[4] = { 0, 0, 1, 1 }, b[4] = { 0, 1, 0, 1 };
    const void *p[] = { a, b };
    uint8_t and_[4] = { 0, 0, 0, 1 }, or_[4] = { 0, 1, 1, 1 }, xor_[4] = { 0, 1, 1, 0 };
    uint8_t pow_[4] = { 1, 0, 1, 1 };           /* a || !b */
    check_bytes(BINARY_HLO("pred[4]", "pred[4]", "and", ""), p, and_, 4);
    check_bytes(BINARY_HLO("pred[4]", "pred[4]", "or", ""), p, or_, 4);
    check_bytes(BINARY_HLO("pred[4]", "pred[4]", "xor", ""), p, xor_, 4);
    check_bytes(BINARY_HLO("pred[4]", "pred[4]", "power", ""), p, pow_, 4);
    check_bytes(BINARY_HLO("pred[4]", "pred[4]", "add", ""), p, or_, 4);
    uint8_t not_[4] = { 1, 1, 0, 0 };
    check_bytes(UNARY_HLO("pred[4]", "pred[4]", "not"), p, not_, 4);
}

static void test_s4_and_u4_wrap_to_their_width(void **state)
{
    (void)state;
    /* Stored one per byte, s4 sign-extended and u4 zero-extended. */
    int8_t a[3] = { 7, -8, -8 }, b[3] = { 1, -1, 0 };
    const void *p[] = { a, b };
    int8_t add[3] = { -8, 7, -8 }, div[3] = { 7, -8, -1 };
    check_bytes(BINARY_HLO("s4[3]", "s4[3]", "add", ""), p, add, sizeof add);
    check_bytes(BINARY_HLO("s4[3]", "s4[3]", "divide", ""), p, div, sizeof div);
    uint8_t c[2] = { 15, 3 }, d[2] = { 1, 0 };
    const void *q[] = { c, d };
    uint8_t uadd[2] = { 0, 3 }, unot[2] = { 0, 12 };
    check_bytes(BINARY_HLO("u4[2]", "u4[2]", "add", ""), q, uadd, sizeof uadd);
    check_bytes(UNARY_HLO("u4[2]", "u4[2]", "not"), q, unot, sizeof unot);
}

/* ------------------------------------------------------------------ */
/* compare, select, clamp                                               */

static void test_compare_total_order_zeros_and_nans(void **state)
{
    (void)state;
    float a[6] = { -0.0f, 0.0f, NAN, f32_from(NEG_QNAN), -INFINITY, NAN };
    float b[6] = { 0.0f, -0.0f, INFINITY, -INFINITY, f32_from(NEG_QNAN), NAN };
    const void *p[] = { a, b };
    /* -NaN < -inf < -0 < +0 < +inf < +NaN */
    uint8_t lt[6] = { 1, 0, 0, 1, 0, 0 };
    uint8_t eq[6] = { 0, 0, 0, 0, 0, 1 };
    uint8_t gt[6] = { 0, 1, 1, 0, 1, 0 };
    check_bytes(BINARY_HLO("f32[6]", "pred[6]", "compare", ", direction=LT, type=TOTALORDER"), p, lt, 6);
    check_bytes(BINARY_HLO("f32[6]", "pred[6]", "compare", ", direction=EQ, type=TOTALORDER"), p, eq, 6);
    check_bytes(BINARY_HLO("f32[6]", "pred[6]", "compare", ", direction=GT, type=TOTALORDER"), p, gt, 6);
    /* IEEE: -0 == +0; NaN only satisfies NE. */
    uint8_t feq[6] = { 1, 1, 0, 0, 0, 0 }, fne[6] = { 0, 0, 1, 1, 1, 1 };
    check_bytes(BINARY_HLO("f32[6]", "pred[6]", "compare", ", direction=EQ"), p, feq, 6);
    check_bytes(BINARY_HLO("f32[6]", "pred[6]", "compare", ", direction=NE"), p, fne, 6);
}

static void test_compare_ints_signed_unsigned_and_narrow_floats(void **state)
{
    (void)state;
    int32_t a[3] = { -1, 5, 5 }, b[3] = { 1, 5, 6 };
    const void *p[] = { a, b };
    uint8_t lt[3] = { 1, 0, 1 }, ult[3] = { 0, 0, 1 }, ge[3] = { 0, 1, 0 }, le[3] = { 1, 1, 1 };
    check_bytes(BINARY_HLO("s32[3]", "pred[3]", "compare", ", direction=LT"), p, lt, 3);
    check_bytes(BINARY_HLO("s32[3]", "pred[3]", "compare", ", direction=LT, type=UNSIGNED"), p, ult, 3);
    check_bytes(BINARY_HLO("s32[3]", "pred[3]", "compare", ", direction=GE"), p, ge, 3);
    check_bytes(BINARY_HLO("s32[3]", "pred[3]", "compare", ", direction=LE"), p, le, 3);
    uint16_t c[3] = { 0x8000, 0x7fc0, 0x3f80 }, d[3] = { 0x0000, 0x7fc0, 0x4000 };  /* -0/+0, NaN, 1 < 2 */
    const void *q[] = { c, d };
    uint8_t beq[3] = { 1, 0, 0 }, blt_total[3] = { 1, 0, 1 };
    check_bytes(BINARY_HLO("bf16[3]", "pred[3]", "compare", ", direction=EQ"), q, beq, 3);
    check_bytes(BINARY_HLO("bf16[3]", "pred[3]", "compare", ", direction=LT, type=TOTALORDER"), q, blt_total, 3);
}

static void test_select_array_and_scalar_predicate(void **state)
{
    (void)state;
    uint8_t pr[4] = { 1, 0, 0, 1 };
    float a[4] = { 1, 2, 3, 4 }, b[4] = { -1, -2, -3, -4 };
    const void *p[] = { pr, a, b };
    const char *hlo = "HloModule m\nENTRY e {\n p = pred[4] parameter(0)\n a = f32[4] parameter(1)\n"
                      " b = f32[4] parameter(2)\n ROOT r = f32[4] select(p, a, b)\n}\n";
    float want[4] = { 1, -2, -3, 4 };
    check_bytes(hlo, p, want, sizeof want);
    const char *scalar = "HloModule m\nENTRY e {\n p = pred[] parameter(0)\n a = f32[4] parameter(1)\n"
                         " b = f32[4] parameter(2)\n ROOT r = f32[4] select(p, a, b)\n}\n";
    uint8_t yes[1] = { 1 }, no[1] = { 0 };
    const void *py[] = { yes, a, b }, *pn[] = { no, a, b };
    check_bytes(scalar, py, a, sizeof a);
    check_bytes(scalar, pn, b, sizeof b);
    const char *c128 = "HloModule m\nENTRY e {\n p = pred[2] parameter(0)\n a = c128[2] parameter(1)\n"
                       " b = c128[2] parameter(2)\n ROOT r = c128[2] select(p, a, b)\n}\n";
    double x[4] = { 1, 2, 3, 4 }, y[4] = { 5, 6, 7, 8 }, wc[4] = { 5, 6, 3, 4 };
    uint8_t pc[2] = { 0, 1 };
    const void *q[] = { pc, x, y };
    check_bytes(c128, q, wc, sizeof wc);
}

static void test_clamp_scalar_bounds_and_nan_order(void **state)
{
    (void)state;
    const char *hlo = "HloModule m\nENTRY e {\n lo = f32[] parameter(0)\n x = f32[5] parameter(1)\n"
                      " hi = f32[] parameter(2)\n ROOT r = f32[5] clamp(lo, x, hi)\n}\n";
    float lo[1] = { 0.0f }, hi[1] = { 1.0f };
    float x[5] = { -1.0f, 0.5f, 2.0f, f32_from(0x7fc00005u), -0.0f };
    const void *p[] = { lo, x, hi };
    /* -0 vs lo=+0: maximum(-0, +0) = +0 (IEEE), then min(+0, 1) = +0. */
    uint32_t want[5] = { 0, f32_bits(0.5f), f32_bits(1.0f), 0x7fc00005u, 0 };
    check_f32(hlo, p, want, 5);
    float nlo[1] = { f32_from(0x7fc00007u) };
    const void *q[] = { nlo, x, hi };
    uint32_t lo_nan[5] = { 0x7fc00007u, 0x7fc00007u, 0x7fc00007u, 0x7fc00007u, 0x7fc00007u };
    check_f32(hlo, q, lo_nan, 5);
    const char *ints = "HloModule m\nENTRY e {\n lo = s32[3] parameter(0)\n x = s32[3] parameter(1)\n"
                       " hi = s32[] parameter(2)\n ROOT r = s32[3] clamp(lo, x, hi)\n}\n";
    int32_t ilo[3] = { 0, -5, 2 }, ix[3] = { -3, 3, 100 }, ihi[1] = { 10 };
    const void *r[] = { ilo, ix, ihi };
    int32_t iwant[3] = { 0, 3, 10 };
    check_bytes(ints, r, iwant, sizeof iwant);
}

/* ------------------------------------------------------------------ */
/* convert, bitcast-convert, reduce-precision                           */

static void test_convert_float_to_int_saturates_nan_to_zero(void **state)
{
    (void)state;
    float a[8] = { 3e9f, -3e9f, NAN, -2.7f, 2.7f, INFINITY, -INFINITY, 2147483520.0f };
    const void *p[] = { a };
    int32_t want[8] = { INT32_MAX, INT32_MIN, 0, -2, 2, INT32_MAX, INT32_MIN, 2147483520 };
    check_bytes(UNARY_HLO("f32[8]", "s32[8]", "convert"), p, want, sizeof want);
    float b[5] = { 300.0f, -5.0f, 255.9f, NAN, -0.5f };
    const void *q[] = { b };
    uint8_t u8[5] = { 255, 0, 255, 0, 0 };
    check_bytes(UNARY_HLO("f32[5]", "u8[5]", "convert"), q, u8, sizeof u8);
    double c[3] = { 1e19, -1e19, 9007199254740993.0 };
    const void *r[] = { c };
    int64_t s64[3] = { INT64_MAX, INT64_MIN, 9007199254740992 };     /* the double is 2^53 */
    check_bytes(UNARY_HLO("f64[3]", "s64[3]", "convert"), r, s64, sizeof s64);
    uint16_t h[3] = { 0x7c00, 0xfc00, 0x7e00 };         /* f16 inf, -inf, NaN */
    const void *s[] = { h };
    int16_t s16[3] = { INT16_MAX, INT16_MIN, 0 };
    check_bytes(UNARY_HLO("f16[3]", "s16[3]", "convert"), s, s16, sizeof s16);
}

static void test_convert_pred_and_int_to_int(void **state)
{
    (void)state;
    float a[4] = { 0.0f, -0.0f, NAN, 0.5f };
    const void *p[] = { a };
    uint8_t pred[4] = { 0, 0, 1, 1 };
    check_bytes(UNARY_HLO("f32[4]", "pred[4]", "convert"), p, pred, 4);
    uint8_t b[2] = { 1, 0 };
    const void *q[] = { b };
    float f[2] = { 1.0f, 0.0f };
    check_bytes(UNARY_HLO("pred[2]", "f32[2]", "convert"), q, f, sizeof f);
    int32_t c[3] = { 300, -129, -1 };
    const void *r[] = { c };
    int8_t s8[3] = { 44, 127, -1 };
    uint64_t u64[3] = { 300, (uint64_t)-129, UINT64_MAX };
    check_bytes(UNARY_HLO("s32[3]", "s8[3]", "convert"), r, s8, sizeof s8);
    check_bytes(UNARY_HLO("s32[3]", "u64[3]", "convert"), r, u64, sizeof u64);
    uint32_t d[1] = { UINT32_MAX };
    const void *s[] = { d };
    int32_t s32[1] = { -1 };
    check_bytes(UNARY_HLO("u32[1]", "s32[1]", "convert"), s, s32, sizeof s32);
}

static void test_convert_int_to_float_rounds_to_even(void **state)
{
    (void)state;
    /* 2^24 + 1 ties between 2^24 and 2^24 + 2: even 2^24; 2^24 + 3 -> + 4. */
    int32_t a[2] = { 16777217, 16777219 };
    const void *p[] = { a };
    float f[2] = { 16777216.0f, 16777220.0f };
    check_bytes(UNARY_HLO("s32[2]", "f32[2]", "convert"), p, f, sizeof f);
    uint64_t b[1] = { UINT64_MAX };
    const void *q[] = { b };
    float g[1] = { 0x1p64f };
    check_bytes(UNARY_HLO("u64[1]", "f32[1]", "convert"), q, g, sizeof g);
    /* 257 = 1.00390625 * 2^8 ties in bf16 to 256 (0x4380); 259 -> 260 (0x4382). */
    int32_t c[2] = { 257, 259 };
    const void *r[] = { c };
    uint16_t bf[2] = { 0x4380, 0x4382 };
    check_bytes(UNARY_HLO("s32[2]", "bf16[2]", "convert"), r, bf, sizeof bf);
}

static void test_convert_f32_to_bf16_ties_to_even(void **state)
{
    (void)state;
    uint32_t in[7] = {
        0x3f808000u,    /* 1 + 2^-8: tie, to even 0x3f80 */
        0x3f818000u,    /* tie, to even 0x3f82 */
        0x3f808001u,    /* just past the tie: 0x3f81 */
        0x7f7fffffu,    /* FLT_MAX rounds up past the largest bf16: inf */
        0x7f7f7fffu,    /* below the halfway point: 0x7f7f */
        0x7fc00001u,    /* NaN: the quiet NaN */
        0xff800001u,    /* negative signalling NaN: negative quiet NaN */
    };
    const void *p[] = { in };
    uint16_t want[7] = { 0x3f80, 0x3f82, 0x3f81, 0x7f80, 0x7f7f, 0x7fc0, 0xffc0 };
    check_bytes(UNARY_HLO("f32[7]", "bf16[7]", "convert"), p, want, sizeof want);
    uint16_t back_in[3] = { 0x3f81, 0xff80, 0x0001 };
    const void *q[] = { back_in };
    uint32_t back[3] = { 0x3f810000u, 0xff800000u, 0x00010000u };
    check_f32(UNARY_HLO("bf16[3]", "f32[3]", "convert"), q, back, 3);
}

static void test_convert_f64_to_bf16_rounds_once(void **state)
{
    (void)state;
    /* 1 + 2^-8 + 2^-30 is just above the bf16 tie, so it rounds up to
     * 0x3f81; through f32 it would first round to 1 + 2^-8 and then tie
     * down to 0x3f80. */
    double a[2] = { 1.0 + 0x1p-8 + 0x1p-30, 1.0 + 0x1p-8 };
    const void *p[] = { a };
    uint16_t want[2] = { 0x3f81, 0x3f80 };
    check_bytes(UNARY_HLO("f64[2]", "bf16[2]", "convert"), p, want, sizeof want);
    /* f16: 1 + 2^-11 + 2^-40 is above the tie: 0x3c01. */
    double b[1] = { 1.0 + 0x1p-11 + 0x1p-40 };
    const void *q[] = { b };
    uint16_t h[1] = { 0x3c01 };
    check_bytes(UNARY_HLO("f64[1]", "f16[1]", "convert"), q, h, sizeof h);
}

static void test_convert_to_f8_overflow(void **state)
{
    (void)state;
    /* f8e4m3fn (no inf): 448 = 1.110b * 2^8 (0x7e) is the largest.  The
     * next step, 480 = 1.111b * 2^8, is the NaN pattern.  464 ties between
     * them and goes to the even 448; 470 rounds up to 480: overflow, NaN
     * (0x7f); so do 1e6 and inf, with their sign.  NaN -> 0x7f. */
    float a[8] = { 448.0f, 460.0f, 464.0f, 470.0f, 1e6f, -1e6f, INFINITY, NAN };
    const void *p[] = { a };
    uint8_t e4[8] = { 0x7e, 0x7e, 0x7e, 0x7f, 0x7f, 0xff, 0x7f, 0x7f };
    check_bytes(UNARY_HLO("f32[8]", "f8e4m3fn[8]", "convert"), p, e4, sizeof e4);
    /* f8e5m2 (IEEE-like): 57344 = 1.75 * 2^15 = 0 11110 11 (0x7b) is the
     * largest; 60000 rounds to it, 61440 ties to the even 65536 = inf (0x7c);
     * 1e6 -> inf, -1e6 -> -inf (0xfc); inf -> 0x7c; NaN -> quiet 0x7e. */
    float b[7] = { 57344.0f, 60000.0f, 61440.0f, 1e6f, -1e6f, INFINITY, NAN };
    const void *q[] = { b };
    uint8_t e5[7] = { 0x7b, 0x7b, 0x7c, 0x7c, 0xfc, 0x7c, 0x7e };
    check_bytes(UNARY_HLO("f32[7]", "f8e5m2[7]", "convert"), q, e5, sizeof e5);
    /* And back: 0x7e e4m3fn = 448; 0x01 = 2^-9 (subnormal: 1 * 2^(1-7-3)). */
    uint8_t c[2] = { 0x7e, 0x01 };
    const void *r[] = { c };
    uint32_t f[2] = { f32_bits(448.0f), f32_bits(0x1p-9f) };
    check_f32(UNARY_HLO("f8e4m3fn[2]", "f32[2]", "convert"), r, f, 2);
    /* f64 -> e5m2: 1.125 ties between 1 and 1.25, to the even 1.0 (0x3c).
     * e5m2 -> e4m3fn: 57344 does not fit e4m3fn: NaN. */
    double d[1] = { 1.0 + 0x1p-3 };
    const void *s[] = { d };
    uint8_t e5d[1] = { 0x3c };
    check_bytes(UNARY_HLO("f64[1]", "f8e5m2[1]", "convert"), s, e5d, 1);
    uint8_t big[1] = { 0x7b };
    const void *t[] = { big };
    uint8_t nan4[1] = { 0x7f };
    check_bytes(UNARY_HLO("f8e5m2[1]", "f8e4m3fn[1]", "convert"), t, nan4, 1);
}

static void test_convert_complex(void **state)
{
    (void)state;
    float a[2] = { 1.5f, -2.0f };
    const void *p[] = { a };
    float c64[4] = { 1.5f, 0.0f, -2.0f, 0.0f };
    check_bytes(UNARY_HLO("f32[2]", "c64[2]", "convert"), p, c64, sizeof c64);
    const void *q[] = { c64 };
    double c128[4] = { 1.5, 0.0, -2.0, 0.0 };
    check_bytes(UNARY_HLO("c64[2]", "c128[2]", "convert"), q, c128, sizeof c128);
    int32_t b[2] = { 3, -4 };
    const void *r[] = { b };
    double c128i[4] = { 3.0, 0.0, -4.0, 0.0 };
    check_bytes(UNARY_HLO("s32[2]", "c128[2]", "convert"), r, c128i, sizeof c128i);
}

static void test_bitcast_convert_f32_to_u16_and_back(void **state)
{
    (void)state;
    float a[2] = { 1.0f, -2.0f };           /* 0x3f800000, 0xc0000000 */
    const void *p[] = { a };
    uint16_t halves[4] = { 0x0000, 0x3f80, 0x0000, 0xc000 };    /* little-endian: low half first */
    check_bytes(UNARY_HLO("f32[2]", "u16[2,2]", "bitcast-convert"), p, halves, sizeof halves);
    const void *q[] = { halves };
    check_bytes(UNARY_HLO("u16[2,2]", "f32[2]", "bitcast-convert"), q, a, sizeof a);
    int32_t i[1] = { 0x3f800000 };
    const void *r[] = { i };
    float one[1] = { 1.0f };
    check_bytes(UNARY_HLO("s32[1]", "f32[1]", "bitcast-convert"), r, one, sizeof one);
    uint8_t u[2] = { 2, 0 };
    const void *s[] = { u };
    uint8_t pred[2] = { 1, 0 };
    check_bytes(UNARY_HLO("u8[2]", "pred[2]", "bitcast-convert"), s, pred, 2);
}

static void test_reduce_precision_f16_range(void **state)
{
    (void)state;
    const char *f16 = "HloModule m\nENTRY e {\n a = f32[6] parameter(0)\n"
                      " ROOT r = f32[6] reduce-precision(a), exponent_bits=5, mantissa_bits=10\n}\n";
    /* 65520 rounds up to 65536, past the largest f16 exponent: inf; 65519
     * rounds to 65504; 2^-14 (the smallest normal) stays; 1e-5 < 2^-14
     * flushes to +0 and -1e-5 to -0 (no subnormals); 1 + 2^-11 ties to 1. */
    float a[6] = { 65520.0f, 65519.0f, 0x1p-14f, 1e-5f, -1e-5f, 1.0f + 0x1p-11f };
    const void *p[] = { a };
    uint32_t want[6] = { PINF, f32_bits(65504.0f), f32_bits(0x1p-14f), 0, NEG_ZERO, f32_bits(1.0f) };
    check_f32(f16, p, want, 6);
    const char *m0 = "HloModule m\nENTRY e {\n a = f32[4] parameter(0)\n"
                     " ROOT r = f32[4] reduce-precision(a), exponent_bits=8, mantissa_bits=0\n}\n";
    /* No mantissa bits: the exponent's lowest bit is the last kept one.
     * 1.5 = 1.1b * 2^0 ties; exponent field 127 is odd, so up to 2.
     * 3 = 1.1b * 2^1 ties; field 128 is even, so down to 2.  1.25 -> 1.
     * A NaN stays a NaN ("NaN values are retained", operation_semantics),
     * though no NaN has a mantissa bit left to be kept in (it used to
     * become +inf). */
    float b[4] = { 1.5f, 3.0f, 1.25f, NAN };
    const void *q[] = { b };
    uint32_t want0[4] = { f32_bits(2.0f), f32_bits(2.0f), f32_bits(1.0f), f32_bits(NAN) };
    check_f32(m0, q, want0, 4);
    /* exponent_bits=8, mantissa_bits=7 is bf16's precision: 1 + 2^-8 ties
     * to 1; 1 + 1.5 * 2^-8 rounds to 1 + 2^-7; a NaN keeps its payload. */
    const char *bf = "HloModule m\nENTRY e {\n a = f32[3] parameter(0)\n"
                     " ROOT r = f32[3] reduce-precision(a), exponent_bits=8, mantissa_bits=7\n}\n";
    uint32_t c[3] = { 0x3f808000u, 0x3f80c000u, 0x7fc00123u };
    const void *r[] = { c };
    uint32_t wantbf[3] = { 0x3f800000u, 0x3f810000u, 0x7fc00123u };
    check_f32(bf, r, wantbf, 3);
}

/* ------------------------------------------------------------------ */
/* Complex                                                              */

/* The complex transcendentals against identities, not against the libm
 * they call: exp(i pi) = -1, log(exp(z)) = z, sqrt(-4) = 2i, rsqrt(4) = 1/2,
 * tan = sin / cos, expm1 and log1p of a tiny z are z (exp(z) - 1 would be
 * all rounding error), 2^3 = 8, z^0 = 1 even for z = 0. */
static void test_complex_transcendentals(void **state)
{
    (void)state;
    static const char *const ops[] = { "exponential", "log", "sqrt", "rsqrt", "sine", "cosine", "tan",
                                       "tanh", "exponential-minus-one", "log-plus-one" };
    double z[8][2] = { { 0, 3.14159265358979323846 }, { 1, 2 }, { -4, 0 }, { 4, 0 }, { 0.3, -0.7 }, { 1e-10, 1e-10 }, { -2, 0.5 },
                       { 0, 0 } };
    double want_exp_ipi[2] = { -1, 0 };
    const void *p[] = { z };
    double *r[10];
    TestRun run[10];
    for (int k = 0; k < 10; k++) {
        char text[256];
        snprintf(text, sizeof text, UNARY_HLO("c128[8]", "c128[8]", "%s"), ops[k]);
        r[k] = test_run_ok(&run[k], text, p)->data;
    }
    assert_true(fabs(r[0][0] - want_exp_ipi[0]) < 1e-15 && fabs(r[0][1] - want_exp_ipi[1]) < 1e-15);
    double e1[2] = { r[0][2], r[0][3] };                    /* exp(1+2i) */
    const void *q[] = { e1 };
    TestRun lr;
    double *l = test_run_ok(&lr, UNARY_HLO("c128[1]", "c128[1]", "log"), q)->data;
    assert_true(fabs(l[0] - 1) < 1e-15 && fabs(l[1] - 2) < 1e-15);
    test_run_free(&lr);
    assert_true(r[2][4] == 0 && r[2][5] == 2);              /* sqrt(-4) */
    assert_true(r[3][6] == 0.5 && r[3][7] == 0);            /* rsqrt(4) */
    double complex s = r[4][8] + r[4][9] * I, c = r[5][8] + r[5][9] * I, t = r[6][8] + r[6][9] * I;
    assert_true(cabs(s / c - t) < 1e-15);
    assert_true(cabs(r[7][8] + r[7][9] * I - ctanh(0.3 - 0.7 * I)) < 1e-15);
    for (int k = 8; k < 10; k++)                            /* expm1, log1p at 1e-10 (1 + i) */
        assert_true(fabs(r[k][10] - 1e-10) < 2e-20 && fabs(r[k][11] - 1e-10) < 2e-20);   /* z's square is 2e-20 i */
    for (int k = 0; k < 10; k++)
        test_run_free(&run[k]);
    double a[4] = { 2, 0, 0, 0 }, b[4] = { 3, 0, 0, 0 };
    const void *pw[] = { a, b };
    TestRun pr;
    double *w = test_run_ok(&pr, BINARY_HLO("c128[2]", "c128[2]", "power", ""), pw)->data;
    assert_true(fabs(w[0] - 8) < 1e-14 && fabs(w[1]) < 1e-14 && w[2] == 1 && w[3] == 0);
    test_run_free(&pr);
}

/* popcnt and count-leading-zeros of sub-byte integers count in the type's
 * own width (the byte's sign extension is not counted). */
static void test_sub_byte_popcnt_clz(void **state)
{
    (void)state;
    int8_t s4[4] = { -1, -8, 3, 0 }, s2[2] = { -1, 1 };
    uint8_t u4[4] = { 15, 8, 1, 0 };
    const void *p4[] = { s4 }, *pu[] = { u4 }, *p2[] = { s2 };
    int8_t pop_s4[4] = { 4, 1, 2, 0 }, clz_s4[4] = { 0, 0, 2, 4 };
    uint8_t pop_u4[4] = { 4, 1, 1, 0 }, clz_u4[4] = { 0, 0, 3, 4 };
    int8_t pop_s2[2] = { -2, 1 };           /* 2 wraps to -2 in s2 */
    check_bytes(UNARY_HLO("s4[4]", "s4[4]", "popcnt"), p4, pop_s4, sizeof pop_s4);
    check_bytes(UNARY_HLO("s4[4]", "s4[4]", "count-leading-zeros"), p4, clz_s4, sizeof clz_s4);
    check_bytes(UNARY_HLO("u4[4]", "u4[4]", "popcnt"), pu, pop_u4, sizeof pop_u4);
    check_bytes(UNARY_HLO("u4[4]", "u4[4]", "count-leading-zeros"), pu, clz_u4, sizeof clz_u4);
    check_bytes(UNARY_HLO("s2[2]", "s2[2]", "popcnt"), p2, pop_s2, sizeof pop_s2);
}

static void test_complex_arithmetic_abs_real_imag(void **state)
{
    (void)state;
    float a[4] = { 1, 2, 3, -4 }, b[4] = { 3, 4, 0, 1 };
    const void *p[] = { a, b };
    float add[4] = { 4, 6, 3, -3 };
    float mul[4] = { 1 * 3 - 2 * 4, 1 * 4 + 2 * 3, 3 * 0 - (-4) * 1, 3 * 1 + (-4) * 0 };
    check_bytes(BINARY_HLO("c64[2]", "c64[2]", "add", ""), p, add, sizeof add);
    check_bytes(BINARY_HLO("c64[2]", "c64[2]", "multiply", ""), p, mul, sizeof mul);
    float absv[2] = { sqrtf(5.0f), 5.0f };
    check_bytes(UNARY_HLO("c64[2]", "f32[2]", "abs"), p, absv, sizeof absv);
    float re[2] = { 1, 3 }, im[2] = { 2, -4 };
    check_bytes(UNARY_HLO("c64[2]", "f32[2]", "real"), p, re, sizeof re);
    check_bytes(UNARY_HLO("c64[2]", "f32[2]", "imag"), p, im, sizeof im);
    float neg[4] = { -1, -2, -3, 4 };
    check_bytes(UNARY_HLO("c64[2]", "c64[2]", "negate"), p, neg, sizeof neg);
    const void *q[] = { re, im };
    check_bytes(BINARY_HLO("f32[2]", "c64[2]", "complex", ""), q, a, sizeof a);
    uint8_t eq[2] = { 0, 0 };
    check_bytes(BINARY_HLO("c64[2]", "pred[2]", "compare", ", direction=EQ"), p, eq, 2);
    const void *same[] = { a, a };
    uint8_t eq2[2] = { 1, 1 };
    check_bytes(BINARY_HLO("c64[2]", "pred[2]", "compare", ", direction=EQ"), same, eq2, 2);
}

static void test_unsupported_op_names_op_and_type(void **state)
{
    (void)state;
    float a[4] = { 1, 2, 3, 4 };
    const void *p[] = { a, a };
    check_error(UNARY_HLO("c64[2]", "c64[2]", "cbrt"), p, ERR_UNSUPPORTED,
                "unsupported op: cbrt on c64");
    check_error(BINARY_HLO("c64[2]", "c64[2]", "maximum", ""), p, ERR_UNSUPPORTED,
                "unsupported op: maximum on c64");
    check_error(BINARY_HLO("c64[2]", "pred[2]", "compare", ", direction=LT"), p, ERR_UNSUPPORTED,
                "unsupported op: compare on c64");
    check_error(UNARY_HLO("c64[2]", "f32[2]", "convert"), p, ERR_UNSUPPORTED,
                "unsupported op: convert from c64 to f32");
}

/* ------------------------------------------------------------------ */
/* Shapes: rank 0, empty, degenerate                                    */

static void test_rank0_empty_and_degenerate_shapes(void **state)
{
    (void)state;
    float s[1] = { 2.0f }, t[1] = { 3.0f };
    const void *p[] = { s, t };
    uint32_t five[1] = { f32_bits(5.0f) };
    check_f32(BINARY_HLO("f32[]", "f32[]", "add", ""), p, five, 1);
    const void *none[] = { s, t };
    check_bytes(BINARY_HLO("f32[0]", "f32[0]", "add", ""), none, NULL, 0);
    check_bytes(UNARY_HLO("f32[3,0,2]", "f32[3,0,2]", "negate"), none, NULL, 0);
    check_bytes(BINARY_HLO("bf16[0]", "bf16[0]", "multiply", ""), none, NULL, 0);
    check_bytes(BINARY_HLO("f32[0,4]", "pred[0,4]", "compare", ", direction=LT"), none, NULL, 0);
    check_bytes(UNARY_HLO("f32[0]", "s8[0]", "convert"), none, NULL, 0);
    check_bytes(UNARY_HLO("f32[0]", "u16[0,2]", "bitcast-convert"), none, NULL, 0);
    const char *clamp = "HloModule m\nENTRY e {\n lo = f64[0] parameter(0)\n x = f64[0] parameter(1)\n"
                        " hi = f64[0] parameter(2)\n ROOT r = f64[0] clamp(lo, x, hi)\n}\n";
    const void *three[] = { s, s, s };
    check_bytes(clamp, three, NULL, 0);
    const char *sel = "HloModule m\nENTRY e {\n p = pred[0] parameter(0)\n a = s64[0] parameter(1)\n"
                      " b = s64[0] parameter(2)\n ROOT r = s64[0] select(p, a, b)\n}\n";
    check_bytes(sel, three, NULL, 0);
    float d[3] = { 1, 2, 3 }, e[3] = { 4, 5, 6 };
    const void *q[] = { d, e };
    uint32_t mul[3] = { f32_bits(4.0f), f32_bits(10.0f), f32_bits(18.0f) };
    check_f32(BINARY_HLO("f32[1,3,1]", "f32[1,3,1]", "multiply", ""), q, mul, 3);
}

/* Counts past one vector block and one narrow block, with a tail. */
static void test_f32_long_array_tail(void **state)
{
    (void)state;
    enum { N = 1037 };
    float *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
    uint32_t *want = malloc(N * sizeof *want);
    for (int i = 0; i < N; i++) {
        a[i] = (float)i * 0.25f;
        b[i] = (float)(N - i);
        want[i] = f32_bits(a[i] - b[i]);
    }
    const void *p[] = { a, b };
    check_f32(BINARY_HLO("f32[1037]", "f32[1037]", "subtract", ""), p, want, N);
    free(a);
    free(b);
    free(want);
}

/* ------------------------------------------------------------------ */
/* The narrow codecs against dtype.c, and interp_binary_kernel          */

/* Every f16 and bf16 pattern through convert to f32 and back. */
static void test_f16_bf16_codecs_match_dtype_on_every_pattern(void **state)
{
    (void)state;
    enum { N = 65536 };
    uint16_t *h = malloc(N * sizeof *h);
    uint32_t *f16 = malloc(N * sizeof *f16), *bf16 = malloc(N * sizeof *bf16);
    for (int i = 0; i < N; i++) {
        h[i] = (uint16_t)i;
        f16[i] = f32_bits(ir_f16_to_f32(h[i]));
        bf16[i] = f32_bits(ir_bf16_to_f32(h[i]));
    }
    const void *p[] = { h };
    check_f32(UNARY_HLO("f16[65536]", "f32[65536]", "convert"), p, f16, N);
    check_f32(UNARY_HLO("bf16[65536]", "f32[65536]", "convert"), p, bf16, N);
    free(h);
    free(f16);
    free(bf16);
}

/* f32 -> f16 / bf16 on a spread of patterns: every exponent, the rounding
 * boundaries around each half-ulp, subnormals, specials. */
static void test_f32_to_f16_bf16_match_dtype(void **state)
{
    (void)state;
    enum { N = 1 << 18 };
    uint32_t *in = malloc(N * sizeof *in);
    uint16_t *want16 = malloc(N * sizeof *want16), *wantb = malloc(N * sizeof *wantb);
    /* 512 patterns for each sign and exponent: half with random
     * mantissas, half within 32 of a rounding boundary (f16's half ulp
     * 0x1000 with the kept lsb 0 or 1, bf16's 0x8000 likewise). */
    static const uint32_t boundary[4] = { 0x1000u, 0x3000u, 0x8000u, 0x18000u };
    for (uint32_t i = 0; i < N; i++) {
        uint32_t j = i & 511, hash = i * 2654435761u;
        uint32_t mant = hash & 0x7fffffu;
        if (j >= 256)
            mant = (hash & 0x7e0000u) | (boundary[(j >> 6) & 3] + (j & 63) - 32);
        in[i] = ((i >> 9) << 23) | mant;
        want16[i] = ir_f32_to_f16(f32_from(in[i]));
        wantb[i] = ir_f32_to_bf16(f32_from(in[i]));
    }
    const void *p[] = { in };
    check_bytes(UNARY_HLO("f32[262144]", "f16[262144]", "convert"), p, want16, N * sizeof *want16);
    check_bytes(UNARY_HLO("f32[262144]", "bf16[262144]", "convert"), p, wantb, N * sizeof *wantb);
    free(in);
    free(want16);
    free(wantb);
}

static void test_binary_kernel_in_place_matches_module(void **state)
{
    (void)state;
    float a[40], b[40], want[40];
    for (int i = 0; i < 40; i++) {
        a[i] = (float)i - 7.5f;
        b[i] = 3.0f - (float)i * 0.5f;
        want[i] = a[i] > b[i] ? a[i] : b[i];
    }
    Error err = { 0 };
    assert_true(interp_binary_kernel(IR_OP_MAXIMUM, IR_TYPE_F32, a, a, b, 40, &err));
    assert_memory_equal(a, want, sizeof want);
    uint16_t x[3] = { 0x3f80, 0x3f81, 0x3f80 }, y[3] = { 0x3b80, 0x3b80, 0x3bc0 };
    uint16_t bf[3] = { 0x3f80, 0x3f82, 0x3f81 };
    assert_true(interp_binary_kernel(IR_OP_ADD, IR_TYPE_BF16, y, x, y, 3, &err));
    assert_memory_equal(y, bf, sizeof bf);
    int32_t s[2] = { 7, INT32_MIN }, t[2] = { 0, -1 }, q[2] = { -1, INT32_MIN };
    assert_true(interp_binary_kernel(IR_OP_DIVIDE, IR_TYPE_S32, s, s, t, 2, &err));
    assert_memory_equal(s, q, sizeof q);
    assert_false(interp_binary_kernel(IR_OP_SHIFT_LEFT, IR_TYPE_F32, a, a, b, 40, &err));
    assert_int_equal(err.code, ERR_UNSUPPORTED);
    assert_non_null(strstr(err.msg, "shift-left on f32"));
}

static void test_select_scalar_predicate_on_tuples(void **state)
{
    (void)state;
    const char *hlo = "HloModule m\nENTRY e {\n p = pred[] parameter(0)\n a = f32[2] parameter(1)\n"
                      " b = s32[] parameter(2)\n t = (f32[2], s32[]) tuple(a, b)\n"
                      " u = (f32[2], s32[]) tuple(a, b)\n"
                      " ROOT r = (f32[2], s32[]) select(p, t, u)\n}\n";
    uint8_t yes[1] = { 1 };
    float a[2] = { 1.5f, -2.0f };
    int32_t b[1] = { 42 };
    const void *p[] = { yes, a, b };
    TestRun run;
    Value *v = test_run_ok(&run, hlo, p);
    assert_int_equal(v->n_elements, 2);
    assert_memory_equal(v->elements[0]->data, a, sizeof a);
    assert_memory_equal(v->elements[1]->data, b, sizeof b);
    test_run_free(&run);
}

static void test_convert_sub_byte_ints(void **state)
{
    (void)state;
    float a[4] = { 100.0f, -100.0f, -3.7f, NAN };
    const void *p[] = { a };
    int8_t s4[4] = { 7, -8, -3, 0 };                   /* saturate to [-8, 7], truncate, NaN -> 0 */
    check_bytes(UNARY_HLO("f32[4]", "s4[4]", "convert"), p, s4, sizeof s4);
    const void *q[] = { s4 };
    float back[4] = { 7.0f, -8.0f, -3.0f, 0.0f };
    check_bytes(UNARY_HLO("s4[4]", "f32[4]", "convert"), q, back, sizeof back);
    uint8_t u8[2] = { 20, 255 };
    const void *r[] = { u8 };
    uint8_t u4[2] = { 4, 15 };                         /* wrap: the low 4 bits */
    check_bytes(UNARY_HLO("u8[2]", "u4[2]", "convert"), r, u4, sizeof u4);
    int8_t s4b[2] = { -1, 7 };
    const void *t[] = { s4b };
    uint8_t u4b[2] = { 15, 7 };                        /* bitcast: same 4 bits, zero-extended */
    check_bytes(UNARY_HLO("s4[2]", "u4[2]", "bitcast-convert"), t, u4b, sizeof u4b);
}

static void test_reduce_precision_f64_and_bf16(void **state)
{
    (void)state;
    const char *f64 = "HloModule m\nENTRY e {\n a = f64[4] parameter(0)\n"
                      " ROOT r = f64[4] reduce-precision(a), exponent_bits=8, mantissa_bits=23\n}\n";
    /* f32's precision and range inside f64: 1 + 2^-24 ties to 1; 1e39 is
     * past f32's exponents: inf; 1e-39 is below f32's normals: 0; a value
     * already in f32 stays. */
    double a[4] = { 1.0 + 0x1p-24, 1e39, -1e-39, 0.1f };
    const void *p[] = { a };
    double want[4] = { 1.0, INFINITY, -0.0, 0.1f };
    check_bytes(f64, p, want, sizeof want);
    const char *bf = "HloModule m\nENTRY e {\n a = bf16[2] parameter(0)\n"
                     " ROOT r = bf16[2] reduce-precision(a), exponent_bits=5, mantissa_bits=2\n}\n";
    /* 1.5 (0x3fc0) fits 2 mantissa bits; 1 + 2^-3 + 2^-4 (0x3f98) rounds to
     * 1.25 (0x3fa0). */
    uint16_t b[2] = { 0x3fc0, 0x3f98 };
    const void *q[] = { b };
    uint16_t wb[2] = { 0x3fc0, 0x3fa0 };
    check_bytes(bf, q, wb, sizeof wb);
}

static void test_clamp_bf16_scalar_bounds(void **state)
{
    (void)state;
    const char *hlo = "HloModule m\nENTRY e {\n lo = bf16[] parameter(0)\n x = bf16[4] parameter(1)\n"
                      " hi = bf16[] parameter(2)\n ROOT r = bf16[4] clamp(lo, x, hi)\n}\n";
    uint16_t lo[1] = { 0xbf80 }, hi[1] = { 0x4000 };        /* -1, 2 */
    uint16_t x[4] = { 0xc040, 0x3f00, 0x4080, 0x7fc1 };     /* -3, 0.5, 4, NaN */
    const void *p[] = { lo, x, hi };
    uint16_t want[4] = { 0xbf80, 0x3f00, 0x4000, 0x7fc0 };  /* NaN comes back as the quiet NaN */
    check_bytes(hlo, p, want, sizeof want);
}

/* The kernel the collectives use gives eval_binary's bits, op by op and
 * type by type, on arbitrary bit patterns (NaNs, zeros, extremes). */
static void test_binary_kernel_matches_eval_binary(void **state)
{
    (void)state;
    static const char *const ops[] = { "add", "subtract", "multiply", "divide", "remainder",
                                       "maximum", "minimum", "power" };
    static const char *const types[] = { "f32", "f64", "bf16", "f16", "f8e5m2", "s32", "u8", "s64" };
    enum { N = 300 };
    uint8_t a[N * 8], b[N * 8], got[N * 8];
    for (int i = 0; i < N * 8; i++) {
        a[i] = (uint8_t)(i * 131u + 7u);
        b[i] = (uint8_t)(i * 29u + (unsigned)(i >> 3));
    }
    for (size_t t = 0; t < sizeof types / sizeof *types; t++)
        for (size_t o = 0; o < sizeof ops / sizeof *ops; o++) {
            char hlo[512];
            snprintf(hlo, sizeof hlo,
                     "HloModule m\nENTRY e {\n a = %s[300] parameter(0)\n b = %s[300] parameter(1)\n"
                     " ROOT r = %s[300] %s(a, b)\n}\n", types[t], types[t], types[t], ops[o]);
            const void *p[] = { a, b };
            TestRun run;
            Value *v = test_run_ok(&run, hlo, p);
            Error err = { 0 };
            IrElemType et = v->shape->type;
            assert_true(interp_binary_kernel(run.m->entry->root->op, et, got, a, b, N, &err));
            if (memcmp(got, v->data, value_bytes(v)) != 0)
                fail_msg("%s on %s: kernel and evaluator differ", ops[o], types[t]);
            test_run_free(&run);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_f32_arithmetic_and_signed_zeros),
        cmocka_unit_test(test_f32_max_min_propagate_nan_in_both_orders),
        cmocka_unit_test(test_f64_max_nan_and_remainder),
        cmocka_unit_test(test_f32_power_special_cases),
        cmocka_unit_test(test_f32_transcendentals_match_libm),
        cmocka_unit_test(test_f32_sign_and_rounding),
        cmocka_unit_test(test_is_finite_f32_and_bf16),
        cmocka_unit_test(test_bf16_add_rounds_each_op_to_even),
        cmocka_unit_test(test_bf16_chain_differs_from_f32_accumulation),
        cmocka_unit_test(test_f16_overflow_and_subnormal_results),
        cmocka_unit_test(test_f8e4m3fn_add_overflows_to_nan),
        cmocka_unit_test(test_bf16_multiply_long_array_matches_reference),
        cmocka_unit_test(test_narrow_add_subtract_multiply_every_pattern),
        cmocka_unit_test(test_int_add_multiply_wrap),
        cmocka_unit_test(test_int_divide_and_remainder_edge_cases),
        cmocka_unit_test(test_int_shifts_by_width_or_more),
        cmocka_unit_test(test_int_power_by_squaring),
        cmocka_unit_test(test_int_bitwise_popcnt_clz_sign),
        cmocka_unit_test(test_pred_logic_and_power),
        cmocka_unit_test(test_s4_and_u4_wrap_to_their_width),
        cmocka_unit_test(test_compare_total_order_zeros_and_nans),
        cmocka_unit_test(test_compare_ints_signed_unsigned_and_narrow_floats),
        cmocka_unit_test(test_select_array_and_scalar_predicate),
        cmocka_unit_test(test_clamp_scalar_bounds_and_nan_order),
        cmocka_unit_test(test_convert_float_to_int_saturates_nan_to_zero),
        cmocka_unit_test(test_convert_pred_and_int_to_int),
        cmocka_unit_test(test_convert_int_to_float_rounds_to_even),
        cmocka_unit_test(test_convert_f32_to_bf16_ties_to_even),
        cmocka_unit_test(test_convert_f64_to_bf16_rounds_once),
        cmocka_unit_test(test_convert_to_f8_overflow),
        cmocka_unit_test(test_convert_complex),
        cmocka_unit_test(test_bitcast_convert_f32_to_u16_and_back),
        cmocka_unit_test(test_reduce_precision_f16_range),
        cmocka_unit_test(test_complex_arithmetic_abs_real_imag),
        cmocka_unit_test(test_complex_transcendentals),
        cmocka_unit_test(test_sub_byte_popcnt_clz),
        cmocka_unit_test(test_unsupported_op_names_op_and_type),
        cmocka_unit_test(test_rank0_empty_and_degenerate_shapes),
        cmocka_unit_test(test_f32_long_array_tail),
        cmocka_unit_test(test_f16_bf16_codecs_match_dtype_on_every_pattern),
        cmocka_unit_test(test_f32_to_f16_bf16_match_dtype),
        cmocka_unit_test(test_binary_kernel_in_place_matches_module),
        cmocka_unit_test(test_select_scalar_predicate_on_tuples),
        cmocka_unit_test(test_convert_sub_byte_ints),
        cmocka_unit_test(test_reduce_precision_f64_and_bf16),
        cmocka_unit_test(test_clamp_bf16_scalar_bounds),
        cmocka_unit_test(test_binary_kernel_matches_eval_binary),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
