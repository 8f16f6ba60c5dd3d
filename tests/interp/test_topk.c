/* test_topk.c: topk (src/interp/eval_topk.c).
 *
 * Expected values are worked out by hand for the orderings (ties, NaNs,
 * signed zeros, integer extremes); on long rows topk is also checked bit for
 * bit against XLA's own decomposition of it, run through our interpreter: a
 * stable sort by a TOTALORDER GT/LT compare of (values, iota) and slices. */
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

/* topk(x) of x: t[rows, n], k, largest; the result a tuple. */
static const char *topk_module(char *buf, const char *t, int rows, int n, int k, bool largest)
{
    snprintf(buf, TEXT_MAX,
             "HloModule m\nENTRY e {\n  x = %s[%d,%d] parameter(0)\n"
             "  ROOT t = (%s[%d,%d], s32[%d,%d]) topk(x), k=%d, largest=%s\n}\n",
             t, rows, n, t, rows, k, rows, k, k, largest ? "true" : "false");
    return buf;
}

/* The same through TopkDecomposer's rewrite: a stable sort of (x, iota)
 * along the last dim by compare(a, b) GT (LT), type=TOTALORDER for floats,
 * sliced to k. */
static const char *decomposed_module(char *buf, const char *t, int rows, int n, int k, bool largest)
{
    bool is_float = t[0] == 'f' || t[0] == 'b';
    int len = snprintf(buf, TEXT_MAX,
                       "HloModule m\ncmp {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n"
                       "  c = s32[] parameter(2)\n  d = s32[] parameter(3)\n"
                       "  ROOT r = pred[] compare(a, b), direction=%s%s\n}\n",
                       t, t, largest ? "GT" : "LT", is_float ? ", type=TOTALORDER" : "");
    len += snprintf(buf + len, TEXT_MAX - (size_t)len,
                    "ENTRY e {\n  x = %s[%d,%d] parameter(0)\n  i = s32[%d,%d] iota(), iota_dimension=1\n"
                    "  s = (%s[%d,%d], s32[%d,%d]) sort(x, i), dimensions={1}, is_stable=true, to_apply=cmp\n",
                    t, rows, n, rows, n, t, rows, n, rows, n);
    len += snprintf(buf + len, TEXT_MAX - (size_t)len,
                    "  v = %s[%d,%d] get-tuple-element(s), index=0\n  j = s32[%d,%d] get-tuple-element(s), index=1\n"
                    "  vs = %s[%d,%d] slice(v), slice={[0:%d], [0:%d]}\n"
                    "  js = s32[%d,%d] slice(j), slice={[0:%d], [0:%d]}\n"
                    "  ROOT t = (%s[%d,%d], s32[%d,%d]) tuple(vs, js)\n}\n",
                    t, rows, n, rows, n, t, rows, k, rows, k, rows, k, rows, k, t, rows, k, rows, k);
    assert_true(len < TEXT_MAX);
    return buf;
}

static float f32_from(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Ties keep the lower index first in both directions; +NaN is the largest
 * value, -NaN the smallest, -0 comes before +0. */
static void test_topk_orders_ties_nans_and_zeros(void **state)
{
    (void)state;
    const float qnan = f32_from(0x7fc00000u), nqnan = f32_from(0xffc00000u);
    const float x[] = { 1, qnan, -0.0f, 2, 0.0f, 1, nqnan, -INFINITY, 2, INFINITY };
    const void *params[] = { x };
    char text[TEXT_MAX];
    TestRun run;
    Value *v = test_run_ok(&run, topk_module(text, "f32", 1, 10, 10, true), params);
    const float want[] = { qnan, INFINITY, 2, 2, 1, 1, 0.0f, -0.0f, -INFINITY, nqnan };
    const int32_t widx[] = { 1, 9, 3, 8, 0, 5, 4, 2, 7, 6 };
    assert_f32_array(v->elements[0], want, 10);
    assert_s32_array(v->elements[1], widx, 10);
    test_run_free(&run);
    v = test_run_ok(&run, topk_module(text, "f32", 1, 10, 4, false), params);
    const float wsmall[] = { nqnan, -INFINITY, -0.0f, 0.0f };
    const int32_t wsidx[] = { 6, 7, 2, 4 };
    assert_f32_array(v->elements[0], wsmall, 4);
    assert_s32_array(v->elements[1], wsidx, 4);
    test_run_free(&run);
}

/* k = 1 is the first maximum of each row (batch rows are independent). */
static void test_topk_k1_per_row(void **state)
{
    (void)state;
    const float x[] = { 3, 7, 7, 1, /* */ -1, -2, -3, -1, /* */ 0, 0, 0, 0 };
    const void *params[] = { x };
    char text[TEXT_MAX];
    TestRun run;
    Value *v = test_run_ok(&run, topk_module(text, "f32", 3, 4, 1, true), params);
    const float want[] = { 7, -1, 0 };
    const int32_t widx[] = { 1, 0, 0 };
    assert_f32_array(v->elements[0], want, 3);
    assert_s32_array(v->elements[1], widx, 3);
    test_run_free(&run);
}

/* Integers by value: u64 above 2^63 is large, s8 -128 small. */
static void test_topk_integer_extremes(void **state)
{
    (void)state;
    const uint64_t u[] = { 1, UINT64_MAX, UINT64_C(1) << 63, 0, (UINT64_C(1) << 63) - 1 };
    const void *pu[] = { u };
    char text[TEXT_MAX];
    TestRun run;
    Value *v = test_run_ok(&run, topk_module(text, "u64", 1, 5, 3, true), pu);
    const uint64_t *got = v->elements[0]->data;
    assert_true(got[0] == UINT64_MAX && got[1] == UINT64_C(1) << 63 && got[2] == (UINT64_C(1) << 63) - 1);
    test_run_free(&run);
    const int8_t s[] = { 0, -128, 127, -1, -128 };
    const void *ps[] = { s };
    v = test_run_ok(&run, topk_module(text, "s8", 1, 5, 3, false), ps);
    const int8_t *gs = v->elements[0]->data;
    const int32_t widx[] = { 1, 4, 3 };
    assert_true(gs[0] == -128 && gs[1] == -128 && gs[2] == -1);
    assert_s32_array(v->elements[1], widx, 3);
    test_run_free(&run);
}

/* k = 0: empty results, no crash. */
static void test_topk_k0(void **state)
{
    (void)state;
    const float x[] = { 1, 2, 3 };
    const void *params[] = { x };
    char text[TEXT_MAX];
    TestRun run;
    Value *v = test_run_ok(&run, topk_module(text, "f32", 1, 3, 0, true), params);
    assert_int_equal(value_elements(v->elements[0]), 0);
    assert_int_equal(value_elements(v->elements[1]), 0);
    test_run_free(&run);
}

/* Rows of 300 with many ties and, for floats, NaNs of both signs and signed
 * zeros: topk equals its decomposition for k = 1, 7, 150, 300. */
static void test_topk_matches_its_decomposition(void **state)
{
    (void)state;
    static const char *const types[] = { "f32", "f64", "f16", "bf16", "s32", "u16" };
    enum { ROWS = 3, N = 300 };
    static const int ks[] = { 1, 7, 150, 300 };
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        IrElemType t = ir_type_from_name(types[ti], strlen(types[ti]));
        size_t es = (size_t)ir_type_storage_bytes(t);
        unsigned char *x = calloc(ROWS * N, es);
        uint32_t r = 12345u + (uint32_t)ti;
        for (int i = 0; i < ROWS * N; i++) {
            r = r * 1664525u + 1013904223u;
            int v = (int)(r >> 24) % 41 - 20;
            double d = v == 20 ? NAN : v == -20 ? -NAN : v == 19 ? -0.0 : v / 2.0;
            ir_elem_set_f64(t, x + (size_t)i * es, ir_type_is_float(t) ? d : v);
        }
        const void *params[] = { x };
        for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++)
            for (int largest = 0; largest < 2; largest++) {
                char a[TEXT_MAX], b[TEXT_MAX];
                TestRun ra, rb;
                Value *va = test_run_ok(&ra, topk_module(a, types[ti], ROWS, N, ks[ki], largest), params);
                Value *vb = test_run_ok(&rb, decomposed_module(b, types[ti], ROWS, N, ks[ki], largest), params);
                if (!value_bits_equal(va, vb))
                    fail_msg("topk %s k=%d largest=%d differs from its decomposition", types[ti], ks[ki], largest);
                test_run_free(&ra);
                test_run_free(&rb);
            }
        free(x);
    }
}

/* XLA:CPU's optimized modules carry topk as custom-call "TopK" (largest,
 * k from the result): it gives the op's result bit for bit, NaNs, ties and
 * signed zeros included; a result that is no (values, indices) pair, and
 * an operand of dynamic size, are refused. */
static void test_topk_custom_call_is_the_op(void **state)
{
    (void)state;
    enum { ROWS = 2, N = 40 };
    float x[ROWS * N];
    uint32_t r = 777u;
    for (int i = 0; i < ROWS * N; i++) {
        r = r * 1664525u + 1013904223u;
        int v = (int)(r >> 24) % 13 - 6;
        x[i] = v == 6 ? NAN : v == -6 ? -NAN : v == 5 ? -0.0f : (float)v;
    }
    const void *params[] = { x };
    for (int k = 0; k <= N; k += 9) {
        char a[TEXT_MAX], b[TEXT_MAX];
        snprintf(b, sizeof b,
                 "HloModule m\nENTRY e {\n  x = f32[%d,%d] parameter(0)\n"
                 "  ROOT t = (f32[%d,%d], s32[%d,%d]) custom-call(x), custom_call_target=\"TopK\"\n}\n",
                 ROWS, N, ROWS, k, ROWS, k);
        TestRun ra, rb;
        Value *va = test_run_ok(&ra, topk_module(a, "f32", ROWS, N, k, true), params);
        Value *vb = test_run_ok(&rb, b, params);
        if (!value_bits_equal(va, vb))
            fail_msg("custom-call TopK k=%d differs from topk largest=true", k);
        test_run_free(&ra);
        test_run_free(&rb);
    }
    TestRun run;
    assert_false(test_run(&run, "HloModule m\nENTRY e {\n  x = f32[2,4] parameter(0)\n"
                                "  ROOT t = f32[2,2] custom-call(x), custom_call_target=\"TopK\"\n}\n", params));
    assert_int_equal(run.err.code, ERR_SHAPE);
    assert_non_null(strstr(run.err.msg, "custom-call TopK: the result must be (values, indices)"));
    test_run_free(&run);
    int32_t n = 3;
    const void *dyn[] = { x, &n };
    assert_false(test_run(&run, "HloModule m\nENTRY e {\n  x = f32[8] parameter(0)\n  n = s32[] parameter(1)\n"
                                "  d = f32[<=8] set-dimension-size(x, n), dimensions={0}\n"
                                "  ROOT t = (f32[<=2], s32[<=2]) custom-call(d), custom_call_target=\"TopK\"\n}\n",
                          dyn));
    assert_int_equal(run.err.code, ERR_UNSUPPORTED);
    assert_non_null(strstr(run.err.msg, "custom-call TopK of an operand of dynamic size"));
    test_run_free(&run);
}

/* XLA's parser reads a topk without largest= as largest=true, and both
 * print it either way: a module written without it takes the largest, and
 * largest=false survives a print and a parse (it used to be left out of
 * the print, which XLA then read as largest=true). */
static void test_topk_largest_defaults_to_true_and_is_printed(void **state)
{
    (void)state;
    const float x[4] = { 1, 4, 2, 3 };
    const void *params[] = { x };
    const char *absent = "HloModule m\nENTRY e {\n  x = f32[1,4] parameter(0)\n"
                         "  ROOT t = (f32[1,2], s32[1,2]) topk(x), k=2\n}\n";
    TestRun run;
    Value *v = test_run_ok(&run, absent, params);
    const float *got = v->elements[0]->data;
    assert_true(got[0] == 4 && got[1] == 3);
    test_run_free(&run);
    for (int largest = 0; largest < 2; largest++) {
        char text[TEXT_MAX];
        Error err = { 0 };
        topk_module(text, "f32", 1, 4, 2, largest);
        IrModule *m = ir_parse_module(text, strlen(text), "t.hlo", &err);
        assert_non_null(m);
        StrBuf b;
        strbuf_init(&b);
        ir_print_module(&b, m);
        assert_non_null(strstr(b.s, largest ? "largest=true" : "largest=false"));
        strbuf_free(&b);
        ir_module_free(m);
    }
}

/* A complex operand passes the verifier but has no order here. */
static void test_topk_complex_is_unsupported(void **state)
{
    (void)state;
    const float x[4] = { 0 };
    const void *params[] = { x };
    char text[TEXT_MAX];
    TestRun run;
    assert_false(test_run(&run, topk_module(text, "c64", 1, 2, 1, true), params));
    assert_int_equal(run.err.code, ERR_UNSUPPORTED);
    test_run_free(&run);
}

/* The verifier refuses k beyond the last dimension. */
static void test_topk_k_too_large_is_refused(void **state)
{
    (void)state;
    char text[TEXT_MAX];
    topk_module(text, "f32", 2, 3, 4, true);
    Error err = { 0 };
    IrModule *m = ir_parse_module(text, strlen(text), "t.hlo", &err);
    assert_non_null(m);
    assert_false(ir_verify_module(m, &err));
    assert_int_equal(err.code, ERR_SHAPE);
    assert_non_null(strstr(err.msg, "k=4 out of range"));
    ir_module_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_topk_orders_ties_nans_and_zeros),
        cmocka_unit_test(test_topk_k1_per_row),
        cmocka_unit_test(test_topk_integer_extremes),
        cmocka_unit_test(test_topk_k0),
        cmocka_unit_test(test_topk_matches_its_decomposition),
        cmocka_unit_test(test_topk_largest_defaults_to_true_and_is_printed),
        cmocka_unit_test(test_topk_custom_call_is_the_op),
        cmocka_unit_test(test_topk_complex_is_unsupported),
        cmocka_unit_test(test_topk_k_too_large_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
