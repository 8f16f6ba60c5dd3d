/* test_dynamic_shape.c: get-dimension-size, set-dimension-size and
 * dynamic-reshape (src/interp/eval_dynamic_shape.c), the runtime sizes
 * values carry (Value.sizes), and the other ops on operands below their
 * bounds (src/interp/dynamic.c).  Expected values are worked by hand. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "interp_test_util.h"

#include <stdio.h>
#include <string.h>

static const float iota8[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };

/* The error a module gives (parse, verify or run) and its code. */
static void expect_error(const char *text, const void *const *params, ErrCode code, const char *part)
{
    TestRun run;
    bool ok = test_run(&run, text, params);
    if (ok || run.err.code != code || !strstr(run.err.msg, part))
        fail_msg("expected error %d containing \"%s\", got %s%d: \"%s\"", code, part, ok ? "success " : "",
                 run.err.code, run.err.msg);
    test_run_free(&run);
}

static int32_t s32_leaf(const Value *v, int i)
{
    return *(const int32_t *)v->elements[i]->data;
}

/* A static dimension's size is the dimension; a bounded parameter is full
 * (the inputs are whole arrays). */
static void test_get_dimension_size_static_and_bounded(void **unused)
{
    (void)unused;
    static const char text[] =
        "HloModule t\n\nENTRY %m (x: f32[2,3], y: f32[<=8]) -> (s32[], s32[], s32[]) {\n"
        "  %x = f32[2,3] parameter(0)\n  %y = f32[<=8] parameter(1)\n"
        "  %a = s32[] get-dimension-size(f32[2,3] %x), dimensions={0}\n"
        "  %b = s32[] get-dimension-size(f32[2,3] %x), dimensions={1}\n"
        "  %c = s32[] get-dimension-size(f32[<=8] %y), dimensions={0}\n"
        "  ROOT %t = (s32[], s32[], s32[]) tuple(s32[] %a, s32[] %b, s32[] %c)\n}\n";
    float x[6] = { 0 };
    const void *params[] = { x, iota8 };
    TestRun run;
    Value *v = test_run_ok(&run, text, params);
    assert_int_equal(s32_leaf(v, 0), 2);
    assert_int_equal(s32_leaf(v, 1), 3);
    assert_int_equal(s32_leaf(v, 2), 8);
    test_run_free(&run);
}

/* set-dimension-size changes the size only: the data (and so the padding
 * past the size) is the operand's; the size passes through tuple and
 * get-tuple-element; setting it back to the bound makes the value full. */
static void test_set_then_get(void **unused)
{
    (void)unused;
    static const char text[] =
        "HloModule t\n\nENTRY %m (x: f32[8], n: s32[]) -> (f32[<=8], s32[], s32[], f32[8]) {\n"
        "  %x = f32[8] parameter(0)\n  %n = s32[] parameter(1)\n"
        "  %d = f32[<=8] set-dimension-size(f32[8] %x, s32[] %n), dimensions={0}\n"
        "  %t0 = (f32[<=8]) tuple(f32[<=8] %d)\n"
        "  %g = f32[<=8] get-tuple-element((f32[<=8]) %t0), index=0\n"
        "  %s = s32[] get-dimension-size(f32[<=8] %g), dimensions={0}\n"
        "  %eight = s32[] constant(8)\n"
        "  %f = f32[<=8] set-dimension-size(f32[<=8] %g, s32[] %eight), dimensions={0}\n"
        "  %s8 = s32[] get-dimension-size(f32[<=8] %f), dimensions={0}\n"
        "  %sum = f32[8] add(f32[<=8] %f, f32[<=8] %f)\n"
        "  ROOT %t = (f32[<=8], s32[], s32[], f32[8]) tuple(f32[<=8] %d, s32[] %s, s32[] %s8, f32[8] %sum)\n}\n";
    int32_t n = 3;
    const void *params[] = { iota8, &n };
    TestRun run;
    Value *v = test_run_ok(&run, text, params);
    assert_f32_array(v->elements[0], iota8, 8);               /* padding: the operand's elements */
    assert_non_null(v->elements[0]->sizes);
    assert_int_equal(v->elements[0]->sizes[0], 3);
    assert_int_equal(s32_leaf(v, 1), 3);
    assert_int_equal(s32_leaf(v, 2), 8);
    static const float twice[8] = { 2, 4, 6, 8, 10, 12, 14, 16 };
    assert_f32_array(v->elements[3], twice, 8);
    test_run_free(&run);
}

/* XLA's DynamicPadder custom calls: SliceToDynamic(data, sizes...) is the
 * data with those runtime sizes (the padding: data's elements); PadToStatic
 * gives the bounded buffer back as a static array and the sizes.  Sizes
 * outside [0, bound], a static dimension not given whole, and shapes that
 * do not fit are refused. */
static void test_slice_to_dynamic_and_pad_to_static(void **unused)
{
    (void)unused;
    static const char text[] =
        "HloModule t\n\nENTRY %m (x: f32[2,4], n: s32[]) -> (f32[2,<=4], f32[2,4], s32[], s32[], f32[]) {\n"
        "  %x = f32[2,4] parameter(0)\n  %n = s32[] parameter(1)\n  %two = s32[] constant(2)\n"
        "  %d = f32[2,<=4] custom-call(%x, %two, %n), custom_call_target=\"SliceToDynamic\"\n"
        "  %p = (f32[2,4], s32[], s32[]) custom-call(%d), custom_call_target=\"PadToStatic\"\n"
        "  %a = f32[2,4] get-tuple-element(%p), index=0\n"
        "  %s0 = s32[] get-tuple-element(%p), index=1\n  %s1 = s32[] get-tuple-element(%p), index=2\n"
        "  %z = f32[] constant(0)\n"
        "  %sum = f32[] reduce(%d, %z), dimensions={0,1}, to_apply=%add\n"
        "  ROOT %t = (f32[2,<=4], f32[2,4], s32[], s32[], f32[]) tuple(%d, %a, %s0, %s1, %sum)\n}\n";
    static const char add[] = "HloModule t\n\n%add (a: f32[], b: f32[]) -> f32[] {\n"
                              "  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n"
                              "  ROOT %c = f32[] add(%a, %b)\n}\n\n";
    char module[2048];
    snprintf(module, sizeof module, "%s%s", add, text + strlen("HloModule t\n\n"));
    int32_t n = 3;
    const void *params[] = { iota8, &n };
    TestRun run;
    Value *v = test_run_ok(&run, module, params);
    assert_non_null(v->elements[0]->sizes);
    assert_int_equal(v->elements[0]->sizes[0], 2);
    assert_int_equal(v->elements[0]->sizes[1], 3);
    assert_f32_array(v->elements[1], iota8, 8);               /* the bounded buffer, padding and all */
    assert_null(v->elements[1]->sizes);
    assert_int_equal(s32_leaf(v, 2), 2);
    assert_int_equal(s32_leaf(v, 3), 3);
    assert_true(*(const float *)v->elements[4]->data == 1 + 2 + 3 + 5 + 6 + 7);   /* the valid elements only */
    test_run_free(&run);
    n = 5;
    expect_error(module, params, ERR_SHAPE, "custom-call SliceToDynamic: size 5 is outside [0, 4] for dimension 1");
    static const char static_dim[] =
        "HloModule t\n\nENTRY %m (x: f32[2,4], n: s32[]) -> f32[2,<=4] {\n"
        "  %x = f32[2,4] parameter(0)\n  %n = s32[] parameter(1)\n"
        "  ROOT %d = f32[2,<=4] custom-call(%x, %n, %n), custom_call_target=\"SliceToDynamic\"\n}\n";
    n = 1;
    expect_error(static_dim, params, ERR_SHAPE, "size 1 is outside [2, 2] for dimension 0");
    static const char missing[] =
        "HloModule t\n\nENTRY %m (x: f32[2,4], n: s32[]) -> f32[2,<=4] {\n"
        "  %x = f32[2,4] parameter(0)\n  %n = s32[] parameter(1)\n"
        "  ROOT %d = f32[2,<=4] custom-call(%x, %n), custom_call_target=\"SliceToDynamic\"\n}\n";
    expect_error(missing, params, ERR_SHAPE, "one size per dimension of f32[2,<=4], got f32[2,4] and 1 sizes");
    static const char bad_pad[] =
        "HloModule t\n\nENTRY %m (x: f32[2,4]) -> (f32[2,3], s32[], s32[]) {\n"
        "  %x = f32[2,4] parameter(0)\n"
        "  ROOT %p = (f32[2,3], s32[], s32[]) custom-call(%x), custom_call_target=\"PadToStatic\"\n}\n";
    expect_error(bad_pad, params, ERR_SHAPE, "custom-call PadToStatic: f32[2,4] to (f32[2,3], s32[], s32[])");
}

static void test_set_dimension_size_range(void **unused)
{
    (void)unused;
    static const char text[] =
        "HloModule t\n\nENTRY %m (x: f32[8], n: s32[]) -> f32[<=8] {\n"
        "  %x = f32[8] parameter(0)\n  %n = s32[] parameter(1)\n"
        "  ROOT %d = f32[<=8] set-dimension-size(f32[8] %x, s32[] %n), dimensions={0}\n}\n";
    int32_t n = 9;
    const void *params[] = { iota8, &n };
    expect_error(text, params, ERR_SHAPE, "set-dimension-size: size 9 is outside [0, 8] for dimension 0 of f32[<=8]");
    n = -1;
    expect_error(text, params, ERR_SHAPE, "size -1 is outside [0, 8]");
    n = 0;                                  /* an empty size is fine */
    TestRun run;
    assert_int_equal(test_run_ok(&run, text, params)->sizes[0], 0);
    test_run_free(&run);
}

/* The first n elements of a rank-1 f32 value (the rest is padding). */
static void assert_f32_array_prefix(const Value *v, const float *want, int64_t n)
{
    assert_true(value_elements(v) >= n);
    const float *got = v->data;
    for (int64_t i = 0; i < n; i++)
        if (got[i] != want[i])
            fail_msg("element %lld: got %.9g, want %.9g", (long long)i, (double)got[i], (double)want[i]);
}

static const char add_comp[] = "HloModule t\n\n%add (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n"
                               "  %b = f32[] parameter(1)\n  ROOT %s = f32[] add(f32[] %a, f32[] %b)\n}\n\n";

/* A module of add_comp and an entry computing body on %d = the first n of
 * x: f32[8] (padding: the rest of x), returning ret. */
static void run_on_prefix(TestRun *run, const char *ret, const char *body, int32_t n, const float *x)
{
    static char text[4096];
    snprintf(text, sizeof text,
             "%sENTRY %%m (x: f32[8], n: s32[]) -> %s {\n  %%x = f32[8] parameter(0)\n  %%n = s32[] parameter(1)\n"
             "  %%d = f32[<=8] set-dimension-size(f32[8] %%x, s32[] %%n), dimensions={0}\n  %%z = f32[] constant(0)\n"
             "%s}\n", add_comp, ret, body);
    const void *params[] = { x, &n };
    if (!test_run(run, text, params))
        fail_msg("%s: %s", text, run->err.msg);
}

static void assert_sizes(const Value *v, int64_t size0)
{
    if (size0 == v->shape->dims[0]) {
        assert_null(v->sizes);
        return;
    }
    assert_non_null(v->sizes);
    assert_int_equal(v->sizes[0], size0);
}

/* Element-wise ops and reduce compute on the first n elements only: the
 * padding (here x's own elements 6..8) takes no part. */
static void test_elementwise_and_reduce_on_runtime_size(void **unused)
{
    (void)unused;
    TestRun run;
    run_on_prefix(&run, "(f32[<=8], f32[])",
                  "  %e = f32[<=8] add(f32[<=8] %d, f32[<=8] %d)\n"
                  "  %r = f32[] reduce(f32[<=8] %e, f32[] %z), dimensions={0}, to_apply=%add\n"
                  "  ROOT %t = (f32[<=8], f32[]) tuple(f32[<=8] %e, f32[] %r)\n", 5, iota8);
    Value *v = run.result;
    static const float twice[5] = { 2, 4, 6, 8, 10 };
    assert_f32_array_prefix(v->elements[0], twice, 5);
    assert_sizes(v->elements[0], 5);
    assert_true(*(float *)v->elements[1]->data == 30.0f);   /* 2+4+6+8+10, not the 72 of all 8 */
    test_run_free(&run);
}

/* A static operand against a dynamic one: the result has the dynamic
 * size (each dimension the smallest runtime size); a scalar broadcast into
 * a dynamic dimension is full. */
static void test_elementwise_mixed_sizes(void **unused)
{
    (void)unused;
    TestRun run;
    run_on_prefix(&run, "(f32[], s32[])",
                  "  %four = f32[] constant(4)\n  %b = f32[<=8] broadcast(f32[] %four), dimensions={}\n"
                  "  %gt = pred[<=8] compare(f32[<=8] %d, f32[<=8] %b), direction=GT\n"
                  "  %s = f32[<=8] select(pred[<=8] %gt, f32[<=8] %d, f32[<=8] %b)\n"
                  "  %r = f32[] reduce(f32[<=8] %s, f32[] %z), dimensions={0}, to_apply=%add\n"
                  "  %g = s32[] get-dimension-size(f32[<=8] %b), dimensions={0}\n"
                  "  ROOT %t = (f32[], s32[]) tuple(f32[] %r, s32[] %g)\n", 6, iota8);
    /* max(x, 4) over 1..6: 4+4+4+4+5+6 */
    assert_true(*(float *)run.result->elements[0]->data == 27.0f);
    assert_int_equal(s32_leaf(run.result, 1), 8);
    test_run_free(&run);
}

/* concatenate packs the valid parts one after the other; slice and pad
 * see the valid part only; a dot against a static operand sums the valid
 * elements only. */
static void test_movement_and_dot_on_runtime_size(void **unused)
{
    (void)unused;
    TestRun run;
    run_on_prefix(&run, "(f32[<=16], f32[<=4], f32[<=12], f32[])",
                  "  %c = f32[<=16] concatenate(f32[<=8] %d, f32[<=8] %d), dimensions={0}\n"
                  "  %s = f32[<=4] slice(f32[<=8] %d), slice={[1:5]}\n"
                  "  %p = f32[<=12] pad(f32[<=8] %d, f32[] %z), padding=1_3\n"
                  "  %w = f32[8] constant({1, 10, 100, 1000, 1, 1, 1, 1})\n"
                  "  %dot = f32[] dot(f32[<=8] %d, f32[8] %w), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n"
                  "  ROOT %t = (f32[<=16], f32[<=4], f32[<=12], f32[]) tuple(%c, %s, %p, %dot)\n", 3, iota8);
    Value *v = run.result;
    static const float cat[6] = { 1, 2, 3, 1, 2, 3 }, sl[2] = { 2, 3 }, pad[7] = { 0, 1, 2, 3, 0, 0, 0 };
    assert_f32_array_prefix(v->elements[0], cat, 6);
    assert_sizes(v->elements[0], 6);
    assert_f32_array_prefix(v->elements[1], sl, 2);         /* [1:5] of 3 elements: 2 */
    assert_sizes(v->elements[1], 2);
    assert_f32_array_prefix(v->elements[2], pad, 7);        /* 1 + 3 + 3 */
    assert_sizes(v->elements[2], 7);
    assert_true(*(float *)v->elements[3]->data == 321.0f);  /* 1 + 20 + 300: the 4000 is padding */
    test_run_free(&run);
}

/* dynamic-update-slice indexes the bounded buffer (start clamped by the
 * bound): an update at the runtime size lands in the padding, and growing
 * the size takes it in (a stack's push).  A dynamic-slice of the whole
 * bound carries the operand's size. */
static void test_dynamic_update_slice_pushes(void **unused)
{
    (void)unused;
    TestRun run;
    run_on_prefix(&run, "(f32[<=8], f32[<=8])",
                  "  %u = f32[1] constant({42})\n"
                  "  %pushed = f32[<=8] dynamic-update-slice(f32[<=8] %d, f32[1] %u, s32[] %n)\n"
                  "  %one = s32[] constant(1)\n  %n1 = s32[] add(s32[] %n, s32[] %one)\n"
                  "  %grown = f32[<=8] set-dimension-size(f32[<=8] %pushed, s32[] %n1), dimensions={0}\n"
                  "  %zero = s32[] constant(0)\n"
                  "  %all = f32[<=8] dynamic-slice(f32[<=8] %grown, s32[] %zero), dynamic_slice_sizes={8}\n"
                  "  ROOT %t = (f32[<=8], f32[<=8]) tuple(%pushed, %all)\n", 3, iota8);
    Value *v = run.result;
    static const float before[3] = { 1, 2, 3 }, after[4] = { 1, 2, 3, 42 };
    assert_f32_array_prefix(v->elements[0], before, 3);
    assert_sizes(v->elements[0], 3);
    assert_f32_array_prefix(v->elements[1], after, 4);
    assert_sizes(v->elements[1], 4);
    test_run_free(&run);
}

/* What the runtime sizes are not derived for is refused, saying so. */
static void test_refusals_name_the_op(void **unused)
{
    (void)unused;
    int32_t n = 5;
    const void *params[] = { iota8, &n };
    char text[2048];
    snprintf(text, sizeof text,
             "HloModule t\n\nENTRY %%m (x: f32[8], n: s32[]) -> f32[8] {\n"
             "  %%x = f32[8] parameter(0)\n  %%n = s32[] parameter(1)\n"
             "  %%d = f32[<=8] set-dimension-size(f32[8] %%x, s32[] %%n), dimensions={0}\n"
             "  %%i = s32[] constant(0)\n"
             "  ROOT %%r = f32[8] dynamic-update-slice(f32[8] %%x, f32[<=8] %%d, s32[] %%i)\n}\n");
    expect_error(text, params, ERR_UNSUPPORTED,
                 "unsupported op: dynamic-update-slice with operand 1 of dynamic size in dimension 0 (an update of "
                 "dynamic size)");
    /* A result declared static that the runtime sizes would make smaller. */
    expect_error("HloModule t\n\nENTRY %m (x: f32[8], n: s32[]) -> f32[8] {\n"
                 "  %x = f32[8] parameter(0)\n  %n = s32[] parameter(1)\n"
                 "  %d = f32[<=8] set-dimension-size(f32[8] %x, s32[] %n), dimensions={0}\n"
                 "  ROOT %a = f32[8] add(f32[<=8] %d, f32[8] %x)\n}\n",
                 params, ERR_SHAPE, "add: at runtime sizes the result's dimension 0 holds 5, which f32[8] does not allow");
}

/* dynamic-reshape of a full operand to full sizes is a reshape. */
static void test_dynamic_reshape_static(void **unused)
{
    (void)unused;
    static const char text[] =
        "HloModule t\n\nENTRY %m (x: f32[8]) -> f32[2,4] {\n  %x = f32[8] parameter(0)\n"
        "  %a = s32[] constant(2)\n  %b = s32[] constant(4)\n"
        "  ROOT %r = f32[2,4] dynamic-reshape(f32[8] %x, s32[] %a, s32[] %b)\n}\n";
    const void *params[] = { iota8 };
    TestRun run;
    Value *v = test_run_ok(&run, text, params);
    assert_f32_array(v, iota8, 8);
    assert_null(v->sizes);
    test_run_free(&run);
}

/* The logical elements of the operand (5 of <=8) laid out as [<=3 x 2]
 * sizes {3, 2}... and as [<=2, <=4] sizes {2, 2} from 4 of them: row-major
 * order, zeros in the padding; the sizes come back from get-dimension-size. */
static void test_dynamic_reshape_dynamic(void **unused)
{
    (void)unused;
    static const char text[] =
        "HloModule t\n\nENTRY %m (x: f32[8], n: s32[], a: s32[], b: s32[]) -> (f32[<=2,<=4], s32[], s32[], f32[<=8]) {\n"
        "  %x = f32[8] parameter(0)\n  %n = s32[] parameter(1)\n"
        "  %a = s32[] parameter(2)\n  %b = s32[] parameter(3)\n"
        "  %d = f32[<=8] set-dimension-size(f32[8] %x, s32[] %n), dimensions={0}\n"
        "  %r = f32[<=2,<=4] dynamic-reshape(f32[<=8] %d, s32[] %a, s32[] %b)\n"
        "  %s0 = s32[] get-dimension-size(f32[<=2,<=4] %r), dimensions={0}\n"
        "  %s1 = s32[] get-dimension-size(f32[<=2,<=4] %r), dimensions={1}\n"
        "  %k = s32[] multiply(s32[] %s0, s32[] %s1)\n"
        "  %back = f32[<=8] dynamic-reshape(f32[<=2,<=4] %r, s32[] %k)\n"
        "  ROOT %t = (f32[<=2,<=4], s32[], s32[], f32[<=8]) tuple(f32[<=2,<=4] %r, s32[] %s0, s32[] %s1, f32[<=8] %back)\n}\n";
    int32_t n = 4, a = 2, b = 2;
    const void *params[] = { iota8, &n, &a, &b };
    TestRun run;
    Value *v = test_run_ok(&run, text, params);
    static const float laid[8] = { 1, 2, 0, 0, 3, 4, 0, 0 }, back[8] = { 1, 2, 3, 4, 0, 0, 0, 0 };
    assert_f32_array(v->elements[0], laid, 8);
    assert_int_equal(s32_leaf(v, 1), 2);
    assert_int_equal(s32_leaf(v, 2), 2);
    assert_f32_array(v->elements[3], back, 8);
    assert_int_equal(v->elements[3]->sizes[0], 4);
    test_run_free(&run);

    n = 6, a = 2, b = 3;
    v = test_run_ok(&run, text, params);
    static const float laid6[8] = { 1, 2, 3, 0, 4, 5, 6, 0 };
    assert_f32_array(v->elements[0], laid6, 8);
    test_run_free(&run);

    n = 5;          /* 5 elements cannot be 2 x 3 */
    expect_error(text, params, ERR_SHAPE, "dynamic-reshape: the sizes hold 6 elements, the operand f32[<=8] holds 5");
    n = 8, a = 1, b = 8;
    expect_error(text, params, ERR_SHAPE, "dynamic-reshape: size 8 does not fit dimension 1 of f32[<=2,<=4]");
}

/* A static result dimension must get exactly its size. */
static void test_dynamic_reshape_static_dimension(void **unused)
{
    (void)unused;
    static const char text[] =
        "HloModule t\n\nENTRY %m (x: f32[8], a: s32[]) -> f32[2,4] {\n  %x = f32[8] parameter(0)\n"
        "  %a = s32[] parameter(1)\n  %b = s32[] constant(4)\n"
        "  ROOT %r = f32[2,4] dynamic-reshape(f32[8] %x, s32[] %a, s32[] %b)\n}\n";
    int32_t a = 1;
    const void *params[] = { iota8, &a };
    expect_error(text, params, ERR_SHAPE, "dynamic-reshape: size 1 does not fit dimension 0 of f32[2,4]");
}

static void test_verify_rules(void **unused)
{
    (void)unused;
    int32_t n = 1;
    const void *params[] = { iota8, &n };
    expect_error("HloModule t\n\nENTRY %m (x: f32[8]) -> s64[] {\n  %x = f32[8] parameter(0)\n"
                 "  ROOT %s = s64[] get-dimension-size(f32[8] %x), dimensions={0}\n}\n",
                 params, ERR_SHAPE, "get-dimension-size: result s64[] must be s32[]");
    expect_error("HloModule t\n\nENTRY %m (x: f32[8], n: s64[]) -> f32[<=8] {\n  %x = f32[8] parameter(0)\n"
                 "  %n = s64[] parameter(1)\n"
                 "  ROOT %d = f32[<=8] set-dimension-size(f32[8] %x, s64[] %n), dimensions={0}\n}\n",
                 params, ERR_SHAPE, "set-dimension-size: size s64[] must be s32[]");
    expect_error("HloModule t\n\nENTRY %m (x: f32[8]) -> f32[3,3] {\n  %x = f32[8] parameter(0)\n"
                 "  %a = s32[] constant(3)\n"
                 "  ROOT %r = f32[3,3] dynamic-reshape(f32[8] %x, s32[] %a, s32[] %a)\n}\n",
                 params, ERR_SHAPE, "dynamic-reshape: result f32[3,3] does not have the 8 elements of operand f32[8]");
    expect_error("HloModule t\n\nENTRY %m (x: f32[8]) -> f32[2,4] {\n  %x = f32[8] parameter(0)\n"
                 "  %a = s32[] constant(2)\n"
                 "  ROOT %r = f32[2,4] dynamic-reshape(f32[8] %x, s32[] %a)\n}\n",
                 params, ERR_SHAPE, "dynamic-reshape: result f32[2,4] needs 2 sizes, got 1");
    expect_error("HloModule t\n\nENTRY %m (x: f32[8]) -> f32[2,4] {\n  %x = f32[8] parameter(0)\n"
                 "  %a = s64[] constant(2)\n  %b = s32[] constant(4)\n"
                 "  ROOT %r = f32[2,4] dynamic-reshape(f32[8] %x, s64[] %a, s32[] %b)\n}\n",
                 params, ERR_SHAPE, "dynamic-reshape: size 0 is s64[], not s32[]");
    expect_error("HloModule t\n\nENTRY %m (x: f32[8]) -> s32[2,4] {\n  %x = f32[8] parameter(0)\n"
                 "  %a = s32[] constant(2)\n  %b = s32[] constant(4)\n"
                 "  ROOT %r = s32[2,4] dynamic-reshape(f32[8] %x, s32[] %a, s32[] %b)\n}\n",
                 params, ERR_SHAPE, "dynamic-reshape: element type of s32[2,4] differs from f32[8]");
}

/* Runtime sizes are part of a value's identity. */
static void test_sizes_in_value_equality(void **unused)
{
    (void)unused;
    static const char text[] =
        "HloModule t\n\nENTRY %m (x: f32[8], n: s32[]) -> f32[<=8] {\n"
        "  %x = f32[8] parameter(0)\n  %n = s32[] parameter(1)\n"
        "  ROOT %d = f32[<=8] set-dimension-size(f32[8] %x, s32[] %n), dimensions={0}\n}\n";
    int32_t n3 = 3, n4 = 4;
    const void *p3[] = { iota8, &n3 }, *p4[] = { iota8, &n4 };
    TestRun a, b, c;
    Value *va = test_run_ok(&a, text, p3), *vb = test_run_ok(&b, text, p4), *vc = test_run_ok(&c, text, p3);
    assert_false(value_bits_equal(va, vb));
    assert_true(value_bits_equal(va, vc));
    Error err = { 0 };
    Value *copy = value_copy(va, &err);
    assert_non_null(copy);
    assert_true(value_bits_equal(copy, va));
    value_release(copy);
    test_run_free(&a);
    test_run_free(&b);
    test_run_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_get_dimension_size_static_and_bounded),
        cmocka_unit_test(test_set_then_get),
        cmocka_unit_test(test_set_dimension_size_range),
        cmocka_unit_test(test_slice_to_dynamic_and_pad_to_static),
        cmocka_unit_test(test_elementwise_and_reduce_on_runtime_size),
        cmocka_unit_test(test_elementwise_mixed_sizes),
        cmocka_unit_test(test_movement_and_dot_on_runtime_size),
        cmocka_unit_test(test_dynamic_update_slice_pushes),
        cmocka_unit_test(test_refusals_name_the_op),
        cmocka_unit_test(test_dynamic_reshape_static),
        cmocka_unit_test(test_dynamic_reshape_dynamic),
        cmocka_unit_test(test_dynamic_reshape_static_dimension),
        cmocka_unit_test(test_verify_rules),
        cmocka_unit_test(test_sizes_in_value_equality),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
