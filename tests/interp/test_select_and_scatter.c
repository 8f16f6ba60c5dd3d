/* test_select_and_scatter.c: select-and-scatter
 * (src/interp/eval_select_and_scatter.c).
 *
 * Expected values are worked out by hand next to each case; the fast paths
 * (a single compare as select, add as scatter) are also checked bit for bit
 * against the same op through computations that compute the same thing but
 * are not recognised (the slow path), in every float type and s32. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "interp_test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEXT_MAX 4096

/* select=%sel and scatter=%sc for type T: the fast forms. */
#define FAST_COMPS(T, DIR)                                                                   \
    "sel {\n  a = " T "[] parameter(0)\n  b = " T "[] parameter(1)\n"                         \
    "  ROOT c = pred[] compare(a, b), direction=" DIR "\n}\n"                               \
    "sc {\n  a = " T "[] parameter(0)\n  b = " T "[] parameter(1)\n  ROOT c = " T "[] add(a, b)\n}\n"

/* A module with FAST_COMPS-like select/scatter text comps, operand x of
 * shape xs, source of shape ss, init a parameter, and window w. */
static const char *module(char *buf, const char *comps, const char *t, const char *xs, const char *ss,
                          const char *w)
{
    snprintf(buf, TEXT_MAX,
             "HloModule m\n%s"
             "ENTRY e {\n  x = %s%s parameter(0)\n  s = %s%s parameter(1)\n  i = %s[] parameter(2)\n"
             "  ROOT r = %s%s select-and-scatter(x, s, i), window={%s}, select=sel, scatter=sc\n}\n",
             comps, t, xs, t, ss, t, t, xs, w);
    return buf;
}

/* Runs an f32 module built by module() on x, s and init; the result must be
 * want (n elements), bit for bit. */
static void check_f32(const char *comps, const char *xs, const char *ss, const char *w, const float *x,
                      const float *s, float init, const float *want, int64_t n)
{
    char text[TEXT_MAX];
    const void *params[] = { x, s, &init };
    TestRun run;
    Value *v = test_run_ok(&run, module(text, comps, "f32", xs, ss, w), params);
    assert_f32_array(v, want, n);
    test_run_free(&run);
}

/* The classic max-pool gradient: 2x2 windows, stride 2; each source value
 * lands on its window's maximum. */
static void test_select_and_scatter_maxpool_by_hand(void **state)
{
    (void)state;
    const float x[] = {
        1, 5, 2, 0,
        3, 4, 8, 8,
        0, 0, 7, 1,
        -1, 6, 2, 9,
    };
    const float s[] = { 10, 20, 30, 40 }, init = 0;
    const float want[] = {
        0, 10, 0, 0,
        0, 0, 20, 0,            /* 8 and 8 tie: GE keeps the first in row-major order */
        0, 0, 0, 0,
        0, 30, 0, 40,
    };
    check_f32(FAST_COMPS("f32", "GE"), "[4,4]", "[2,2]", "size=2x2 stride=2x2", x, s, init, want, 16);
}

/* GT replaces the selection on ties, so the last of equal maxima wins. */
static void test_select_and_scatter_gt_keeps_the_last_tie(void **state)
{
    (void)state;
    const float x[] = { 2, 2, 1, 2 }, s[] = { 5 }, init = 0.5f;
    const float want[] = { 0.5f, 0.5f, 0.5f, 5.5f };
    check_f32(FAST_COMPS("f32", "GT"), "[4]", "[1]", "size=4", x, s, init, want, 4);
}

/* 3-wide windows, stride 1, padding 1 on each side: windows overlap, the
 * 9 is selected by all three windows that see it and gets their sum, in
 * source order; the padding is never selected even though init is 100. */
static void test_select_and_scatter_overlap_and_padding(void **state)
{
    (void)state;
    const float x[] = { -5, 9, -7 }, s[] = { 1, 2, 4 }, init = 100;
    const float want[] = { 100, 107, 100 };
    check_f32(FAST_COMPS("f32", "GE"), "[3]", "[3]", "size=3 pad=1_1", x, s, init, want, 3);
}

/* Windows that lie wholly in the padding select nothing: their source
 * elements are dropped.  x has 2 elements, padding 3 before and 1 after,
 * window 2 stride 2: windows start at -3, -1, 1; only the last two see x. */
static void test_select_and_scatter_window_in_padding_is_dropped(void **state)
{
    (void)state;
    const float x[] = { 1, 2 }, s[] = { 1000, 10, 1 }, init = 0;
    const float want[] = { 10, 1 };
    check_f32(FAST_COMPS("f32", "GE"), "[2]", "[3]", "size=2 stride=2 pad=3_1", x, s, init, want, 2);
}

/* The scatter computation gets (current output, source): with subtract and
 * init 100, a position selected twice ends as (100 - 1) - 2. */
static void test_select_and_scatter_scatter_gets_the_output_first(void **state)
{
    (void)state;
    static const char *const comps =
        "sel {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
        "  ROOT c = pred[] compare(a, b), direction=GE\n}\n"
        "sc {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] subtract(a, b)\n}\n";
    const float x[] = { 0, 9, 0 }, s[] = { 1, 2 }, init = 100;
    const float want[] = { 100, 97, 100 };
    check_f32(comps, "[3]", "[2]", "size=2", x, s, init, want, 3);
}

/* select(x, c) false replaces x: a NaN is replaced by the next candidate
 * (NaN >= c is false) and a NaN candidate replaces x (x >= NaN is false). */
static void test_select_and_scatter_nan_follows_the_rule(void **state)
{
    (void)state;
    const float x[] = { NAN, 1, 3, 2, NAN, 0 }, s[] = { 1, 10 }, init = 0;
    /* window 0: NaN -> 1 (NaN >= 1 false) -> 3 (1 >= 3 false): index 2.
     * window 1: 2 -> NaN (2 >= NaN false) -> 0 (NaN >= 0 false): index 5. */
    const float want[] = { 0, 0, 1, 0, 0, 10 };
    check_f32(FAST_COMPS("f32", "GE"), "[6]", "[2]", "size=3 stride=3", x, s, init, want, 6);
}

/* Slow-path forms of the same select and scatter: not(compare LT) is GE
 * without NaNs, add(b, a) is add(a, b) without NaNs, neither recognised. */
#define SLOW_COMPS(T)                                                                        \
    "sel {\n  a = " T "[] parameter(0)\n  b = " T "[] parameter(1)\n"                         \
    "  lt = pred[] compare(a, b), direction=LT\n  ROOT c = pred[] not(lt)\n}\n"              \
    "sc {\n  a = " T "[] parameter(0)\n  b = " T "[] parameter(1)\n  ROOT c = " T "[] add(b, a)\n}\n"

/* Deterministic values of type t with ties and varied magnitudes. */
static void *values(IrElemType t, int64_t n, uint32_t seed, bool small)
{
    size_t es = (size_t)ir_type_storage_bytes(t);
    unsigned char *p = calloc((size_t)n, es);
    uint32_t r = seed;
    for (int64_t i = 0; i < n; i++) {
        r = r * 1664525u + 1013904223u;
        double mant = (double)((int)(r >> 16) % 2001 - 1000);
        double v = small ? (double)((int)(r >> 24) % 5 - 2) : ldexp(mant, (int)(r >> 8) % 16 - 12);
        ir_elem_set_f64(t, p + (size_t)i * es, v);
    }
    return p;
}

static void test_select_and_scatter_fast_and_slow_paths_agree(void **state)
{
    (void)state;
    static const struct { const char *t, *fast, *slow; } types[] = {
        { "f32", FAST_COMPS("f32", "GE"), SLOW_COMPS("f32") },
        { "f64", FAST_COMPS("f64", "GE"), SLOW_COMPS("f64") },
        { "f16", FAST_COMPS("f16", "GE"), SLOW_COMPS("f16") },
        { "bf16", FAST_COMPS("bf16", "GE"), SLOW_COMPS("bf16") },
        { "s32", FAST_COMPS("s32", "GE"), SLOW_COMPS("s32") },
        { "u8", FAST_COMPS("u8", "GE"), SLOW_COMPS("u8") },
    };
    /* 3x3 windows, stride 2, padding 1 on NHWC-like [2,7,9,3] (size 1 on N and C) */
    const char *w = "size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0";
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
        IrElemType t = ir_type_from_name(types[k].t, strlen(types[k].t));
        void *x = values(t, 2 * 7 * 9 * 3, 7, true), *s = values(t, 2 * 4 * 5 * 3, 11, false);
        void *init = values(t, 1, 13, false);
        const void *params[] = { x, s, init };
        char a[TEXT_MAX], b[TEXT_MAX];
        TestRun ra, rb;
        Value *va = test_run_ok(&ra, module(a, types[k].fast, types[k].t, "[2,7,9,3]", "[2,4,5,3]", w), params);
        Value *vb = test_run_ok(&rb, module(b, types[k].slow, types[k].t, "[2,7,9,3]", "[2,4,5,3]", w), params);
        if (!value_bits_equal(va, vb))
            fail_msg("fast and slow select-and-scatter differ on %s", types[k].t);
        test_run_free(&ra);
        test_run_free(&rb);
        free(x);
        free(s);
        free(init);
    }
}

/* LE and a swapped compare(b, a) GE both select the first minimum. */
static void test_select_and_scatter_min_and_swapped_compare(void **state)
{
    (void)state;
    static const char *const swapped =
        "sel {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n"
        "  ROOT c = pred[] compare(b, a), direction=GE\n}\n"
        "sc {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  ROOT c = s32[] add(a, b)\n}\n";
    const int32_t x[] = { 4, -1, -1, 3, 0, 7 }, s[] = { 1, 2 }, init = 0;
    const void *params[] = { x, s, &init };
    const int32_t want[] = { 0, 1, 0, 0, 2, 0 };
    char text[TEXT_MAX];
    TestRun run;
    Value *v = test_run_ok(&run, module(text, FAST_COMPS("s32", "LE"), "s32", "[6]", "[2]", "size=3 stride=3"),
                           params);
    assert_s32_array(v, want, 6);
    test_run_free(&run);
    v = test_run_ok(&run, module(text, swapped, "s32", "[6]", "[2]", "size=3 stride=3"), params);
    assert_s32_array(v, want, 6);
    test_run_free(&run);
}

/* The add scatter wraps in s32 and rounds every step in bf16.  Windows of
 * 2 with padding 1 before x = {5, 0}: the first two both select x[0]. */
static void test_select_and_scatter_sums_round_each_step(void **state)
{
    (void)state;
    char text[TEXT_MAX];
    const int32_t xi[] = { 5, 0 }, si[] = { INT32_MAX, 2 }, ii = 0;
    const void *pi[] = { xi, si, &ii };
    TestRun run;
    Value *v = test_run_ok(&run, module(text, FAST_COMPS("s32", "GE"), "s32", "[2]", "[2]", "size=2 pad=1_0"), pi);
    const int32_t wi[] = { INT32_MIN + 1, 0 };
    assert_s32_array(v, wi, 2);
    test_run_free(&run);
    /* With padding 1_1 a third window selects x[1].  In bf16 (8 bits of
     * significand) 256 + 1 rounds back to 256, twice; a wider sum would
     * give 258.  x[1] gets 256 + 2 = 258. */
    const uint16_t xb[] = { ir_f32_to_bf16(5), ir_f32_to_bf16(0) };
    const uint16_t sb[] = { ir_f32_to_bf16(1), ir_f32_to_bf16(1), ir_f32_to_bf16(2) }, ib = ir_f32_to_bf16(256);
    const void *pb[] = { xb, sb, &ib };
    v = test_run_ok(&run, module(text, FAST_COMPS("bf16", "GE"), "bf16", "[2]", "[3]", "size=2 pad=1_1"), pb);
    const uint16_t *got = v->data;
    assert_true(ir_bf16_to_f32(got[0]) == 256);
    assert_true(ir_bf16_to_f32(got[1]) == 258);
    test_run_free(&run);
}

/* Window dilation: size 2 with rhs_dilate 3 sees x[p] and x[p + 3]. */
static void test_select_and_scatter_window_dilation(void **state)
{
    (void)state;
    const float x[] = { 1, 8, 3, 4, 2, 6 }, s[] = { 1, 2, 4 }, init = 0;
    /* windows {x0, x3} -> x3, {x1, x4} -> x1, {x2, x5} -> x5 */
    const float want[] = { 0, 2, 0, 1, 0, 4 };
    check_f32(FAST_COMPS("f32", "GE"), "[6]", "[3]", "size=2 rhs_dilate=3", x, s, init, want, 6);
}

/* A reversed window is valid HLO we do not run: ERR_UNSUPPORTED. */
static void test_select_and_scatter_reversal_is_unsupported(void **state)
{
    (void)state;
    char text[TEXT_MAX];
    const float x[] = { 1, 2 }, s[] = { 1 }, init = 0;
    const void *params[] = { x, s, &init };
    TestRun run;
    assert_false(test_run(&run, module(text, FAST_COMPS("f32", "GE"), "f32", "[2]", "[1]", "size=2 rhs_reversal=1"),
                          params));
    assert_int_equal(run.err.code, ERR_UNSUPPORTED);
    test_run_free(&run);
}

/* The verifier refuses a source that does not have one element per window. */
static void test_select_and_scatter_wrong_source_is_refused(void **state)
{
    (void)state;
    char text[TEXT_MAX];
    module(text, FAST_COMPS("f32", "GE"), "f32", "[4,4]", "[2,3]", "size=2x2 stride=2x2");
    Error err = { 0 };
    IrModule *m = ir_parse_module(text, strlen(text), "t.hlo", &err);
    assert_non_null(m);
    assert_false(ir_verify_module(m, &err));
    assert_int_equal(err.code, ERR_SHAPE);
    assert_non_null(strstr(err.msg, "must be f32[2,2]"));
    ir_module_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_select_and_scatter_maxpool_by_hand),
        cmocka_unit_test(test_select_and_scatter_gt_keeps_the_last_tie),
        cmocka_unit_test(test_select_and_scatter_overlap_and_padding),
        cmocka_unit_test(test_select_and_scatter_window_in_padding_is_dropped),
        cmocka_unit_test(test_select_and_scatter_scatter_gets_the_output_first),
        cmocka_unit_test(test_select_and_scatter_nan_follows_the_rule),
        cmocka_unit_test(test_select_and_scatter_fast_and_slow_paths_agree),
        cmocka_unit_test(test_select_and_scatter_min_and_swapped_compare),
        cmocka_unit_test(test_select_and_scatter_sums_round_each_step),
        cmocka_unit_test(test_select_and_scatter_window_dilation),
        cmocka_unit_test(test_select_and_scatter_reversal_is_unsupported),
        cmocka_unit_test(test_select_and_scatter_wrong_source_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
