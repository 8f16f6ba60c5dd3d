/* test_compare.c: comparisons and accuracy against the oracle
 * (src/check/compare.c).  The ulp of a value is checked against the
 * textbook definition (ilogb/ldexp) over every float type and the edges of
 * each (zero, subnormals, the largest finite, infinities, NaN); accuracy
 * figures against hand-computed ones. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "check.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static Arena *arena;

static int setup(void **state)
{
    (void)state;
    arena = arena_new(0);
    return arena ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    arena_free(arena);
    return 0;
}

/* A vector value of type t holding xs (rounded to t). */
static Value *vec(IrElemType t, const double *xs, int n)
{
    int64_t dims[1] = { n };
    Error err = { 0 };
    Value *v = value_new_array(ir_shape_new_array(arena, t, 1, dims), &err);
    assert_non_null(v);
    size_t es = (size_t)ir_type_storage_bytes(t);
    for (int i = 0; i < n; i++)
        ir_elem_set_f64(t, (char *)v->data + (size_t)i * es, xs[i]);
    return v;
}

/* The definition: 2^(max(ilogb(x), emin) - mantissa bits). */
static double reference_ulp(IrElemType t, double x)
{
    const IrTypeInfo *ti = &ir_type_info[t];
    int emin = 1 - ti->bias;
    int e = x == 0 || !isfinite(x) ? emin : ilogb(x);
    return ldexp(1.0, (e < emin ? emin : e) - ti->mantissa_bits);
}

static void ulp_of_matches_the_definition(void **state)
{
    (void)state;
    const IrElemType types[] = { IR_TYPE_F64, IR_TYPE_F32, IR_TYPE_BF16, IR_TYPE_F16, IR_TYPE_F8E4M3FN,
                                 IR_TYPE_F8E5M2 };
    const double edges[] = { 0.0, -0.0, 1.0, -1.0, 1.5, 3.0, 0.1, 1e-3, 65504.0, 448.0, 57344.0, 3.4e38, 1e-38,
                             1e-45, 6e-8, 1e-300, DBL_MIN, DBL_MIN / 2, DBL_TRUE_MIN, DBL_MAX, -DBL_MAX,
                             INFINITY, -INFINITY, NAN };
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
        for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
            assert_true(check_ulp_of(types[k], edges[i]) == reference_ulp(types[k], edges[i]));
        /* Powers of two and their neighbours across the whole double range. */
        for (int e = -1074; e <= 1023; e += 7) {
            double x = ldexp(1.0, e);
            assert_true(check_ulp_of(types[k], x) == reference_ulp(types[k], x));
            assert_true(check_ulp_of(types[k], nextafter(x, 0)) == reference_ulp(types[k], nextafter(x, 0)));
            assert_true(check_ulp_of(types[k], -x) == reference_ulp(types[k], -x));
        }
    }
    assert_true(check_ulp_of(IR_TYPE_S32, 12345.0) == 1.0);
    assert_true(check_ulp_of(IR_TYPE_F32, 1.0) == 0x1p-23);
    assert_true(check_ulp_of(IR_TYPE_BF16, 1.0) == 0x1p-7);
    assert_true(check_ulp_of(IR_TYPE_F32, 0.0) == 0x1p-149);     /* the smallest subnormal */
}

static void ulp_distance_counts_representable_values(void **state)
{
    (void)state;
    float a = 1.0f, b = nextafterf(nextafterf(1.0f, 2.0f), 2.0f), pz = 0.0f, nz = -0.0f;
    float tiny = nextafterf(0.0f, 1.0f), ntiny = -tiny, nan = NAN;
    assert_true(check_ulp_distance(IR_TYPE_F32, &a, &b) == 2);
    assert_true(check_ulp_distance(IR_TYPE_F32, &pz, &nz) == 0);
    assert_true(check_ulp_distance(IR_TYPE_F32, &tiny, &ntiny) == 2);
    assert_true(check_ulp_distance(IR_TYPE_F32, &nan, &nan) == 0);
    assert_true(isinf(check_ulp_distance(IR_TYPE_F32, &nan, &a)));
}

static void elements_agree_by_mode(void **state)
{
    (void)state;
    float x = 1.0f, y = nextafterf(1.0f, 2.0f), nan1 = NAN, nan2 = -NAN;
    CheckTolerance exact = { CHECK_EXACT, 0, 0, 0 }, ulp1 = { CHECK_ULP, 0, 0, 1 },
                   tol = { CHECK_TOL, 2e-7, 0, 0 }, tight = { CHECK_TOL, 1e-7, 0, 0 };
    assert_false(check_elements_agree(IR_TYPE_F32, &x, &y, &exact));
    assert_true(check_elements_agree(IR_TYPE_F32, &nan1, &nan2, &exact));
    assert_true(check_elements_agree(IR_TYPE_F32, &x, &y, &ulp1));
    assert_true(check_elements_agree(IR_TYPE_F32, &x, &y, &tol));
    assert_false(check_elements_agree(IR_TYPE_F32, &x, &y, &tight));
}

static void accuracy_against_the_oracle(void **state)
{
    (void)state;
    /* bf16 values 1, 2, 4 against an oracle off by 1/128, 0 and 1/16. */
    const double vals[] = { 1.0, 2.0, 4.0 }, oracle_vals[] = { 1.0 + 1.0 / 128, 2.0, 4.0 - 1.0 / 16 };
    Value *v = vec(IR_TYPE_BF16, vals, 3), *o = vec(IR_TYPE_F64, oracle_vals, 3);
    CheckAccuracy acc = { 0 };
    check_accuracy_add(&acc, v, o);
    assert_int_equal(acc.n, 3);
    assert_int_equal(acc.nonfinite, 0);
    assert_true(acc.max_abs == 1.0 / 16);
    assert_true(acc.sum_abs == 1.0 / 128 + 1.0 / 16);
    /* ulps of bf16 at the oracle: 1/128 at 1.0078 is one ulp (2^-7); 1/16 at
     * 3.9375 is 4 ulps (2^-6 each). */
    assert_true(acc.max_ulp == 4.0);
    assert_true(acc.sum_ulp == 5.0);
    assert_true(acc.max_rel == (1.0 / 16) / (4.0 - 1.0 / 16));
    value_release(v);
    value_release(o);
}

static void nonfinite_misses_are_counted(void **state)
{
    (void)state;
    const double vals[] = { INFINITY, NAN, 1.0, INFINITY }, oracle_vals[] = { 1.0, NAN, INFINITY, INFINITY };
    Value *v = vec(IR_TYPE_F32, vals, 4), *o = vec(IR_TYPE_F64, oracle_vals, 4);
    CheckAccuracy acc = { 0 };
    check_accuracy_add(&acc, v, o);
    assert_int_equal(acc.n, 4);
    assert_int_equal(acc.nonfinite, 2);     /* inf vs 1 and 1 vs inf; NaN/NaN and inf/inf agree */
    assert_true(acc.sum_abs == 0);
    value_release(v);
    value_release(o);
}

static void judge_equals_the_separate_figures(void **state)
{
    (void)state;
    enum { N = 257 };
    double b[N], a[N], o[N];
    for (int i = 0; i < N; i++) {
        o[i] = sin(i * 0.37) * ldexp(1.0, i % 40 - 20);
        b[i] = o[i] * (1 + (i % 5 - 2) * 0x1p-8);
        a[i] = o[i] * (1 + (i % 3 - 1) * 0x1p-12);
    }
    Value *vb = vec(IR_TYPE_BF16, b, N), *va = vec(IR_TYPE_F32, a, N), *vo = vec(IR_TYPE_F64, o, N);
    CheckAccuracy b1 = { 0 }, a1 = { 0 }, b2 = { 0 }, a2 = { 0 };
    CheckDuel d1 = { 0 }, d2 = { 0 };
    check_accuracy_add(&b1, vb, vo);
    check_accuracy_add(&a1, va, vo);
    check_duel_add(&d1, vb, va, vo);
    check_judge_add(&b2, &a2, &d2, vb, va, vo);
    /* every element finite: the paired sums are the sums themselves */
    assert_true(b2.paired && a2.paired);
    assert_true(b2.sum_abs_paired == b2.sum_abs && a2.sum_abs_paired == a2.sum_abs);
    b2.paired = a2.paired = false;
    b2.sum_abs_paired = a2.sum_abs_paired = 0;
    assert_memory_equal(&b1, &b2, sizeof b1);
    assert_memory_equal(&a1, &a2, sizeof a1);
    assert_memory_equal(&d1, &d2, sizeof d1);
    assert_int_equal(d1.better + d1.equal + d1.worse, N);
    assert_true(d1.better > d1.worse);      /* f32 within 2^-12 beats bf16 within 2^-7 */
    value_release(vb);
    value_release(va);
    value_release(vo);
}

/* An element only before missed (a narrow result that overflowed where
 * the wide one did not): one miss fewer after, and the paired means leave
 * it out on both sides, while the verdict, reading the whole means, stays
 * conservative and calls after less accurate. */
static void an_element_only_before_missed(void **state)
{
    (void)state;
    double o[4] = { 1, 2, 70000, 4 }, b[4] = { 1, 2, INFINITY, 4 }, a[4] = { 1, 2, 70000.5, 4 };
    Value *vb = vec(IR_TYPE_F32, b, 4), *va = vec(IR_TYPE_F32, a, 4), *vo = vec(IR_TYPE_F64, o, 4);
    CheckAccuracy bb = { 0 }, aa = { 0 };
    CheckDuel d = { 0 };
    check_judge_add(&bb, &aa, &d, vb, va, vo);
    assert_int_equal(bb.nonfinite, 1);
    assert_int_equal(aa.nonfinite, 0);
    assert_true(aa.sum_abs == 0.5 && aa.sum_abs_paired == 0 && bb.sum_abs_paired == 0);
    assert_true(check_judged_mean(&aa) == 0 && check_judged_mean(&bb) == 0);
    assert_false(check_no_less_accurate(&bb, &aa));
    value_release(vb);
    value_release(va);
    value_release(vo);
}

/* Values of dynamic size: the padding past the runtime sizes is no part of
 * them; a different size is a difference, at the first element that only
 * one of them holds. */
static void runtime_sizes_are_compared(void **state)
{
    (void)state;
    static const double xs[6] = { 1, 2, 3, 4, 5, 6 }, ys[6] = { 1, 2, 3, 9, 9, 9 };
    Value *a = vec(IR_TYPE_F32, xs, 6), *b = vec(IR_TYPE_F32, ys, 6);
    CheckTolerance tol = { .mode = CHECK_EXACT };
    assert_int_equal(check_first_difference(a, b, &tol), 3);       /* no sizes: the whole array */
    a->sizes = xcalloc(1, sizeof *a->sizes);
    b->sizes = xcalloc(1, sizeof *b->sizes);
    a->sizes[0] = b->sizes[0] = 3;
    assert_int_equal(check_first_difference(a, b, &tol), -1);      /* only the padding differs */
    assert_false(check_within_sizes(a, 3));
    assert_true(check_within_sizes(a, 2));
    b->sizes[0] = 2;
    assert_int_equal(check_first_difference(a, b, &tol), 2);       /* b holds 2 elements, a 3 */
    free(b->sizes);
    b->sizes = NULL;                                               /* b full, a of size 3 */
    assert_int_equal(check_first_difference(a, b, &tol), 3);
    value_release(a);
    value_release(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ulp_of_matches_the_definition),
        cmocka_unit_test(ulp_distance_counts_representable_values),
        cmocka_unit_test(elements_agree_by_mode),
        cmocka_unit_test(accuracy_against_the_oracle),
        cmocka_unit_test(nonfinite_misses_are_counted),
        cmocka_unit_test(judge_equals_the_separate_figures),
        cmocka_unit_test(an_element_only_before_missed),
        cmocka_unit_test(runtime_sizes_are_compared),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
