/* test_reduce.c: reduce, reduce-window, map (src/interp/eval_reduce.c) and
 * sort (src/interp/eval_sort.c).
 * Expected values are derived by hand (or by a closed form written next to
 * the case); fast-path results are also checked bit for bit against the
 * same op run through a non-trivial computation that computes the same
 * thing per element (the slow path). */
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

/* ------------------------------------------------------------------ */
/* Helpers                                                              */

static float f32_from(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Deterministic f32 values of widely varying magnitude, exact in f32
 * (an integer in [-1000, 1000] times a power of two), so that the order
 * of a sum matters. */
static void fill_varied(float *x, int64_t n, uint32_t seed)
{
    uint32_t r = seed;
    for (int64_t i = 0; i < n; i++) {
        r = r * 1664525u + 1013904223u;
        int mant = (int)((r >> 8) % 2001) - 1000;
        int exp = (int)((r >> 20) % 24) - 12;
        x[i] = ldexpf((float)mant, exp);
    }
}

/* Runs kept alive until done(): their results' shapes live in the module. */
#define MAX_HELD 16
static TestRun *held[MAX_HELD];

/* Runs text on params and returns its result; release it with done(). */
static Value *run_copy(const char *text, const void *const *params)
{
    for (int i = 0; i < MAX_HELD; i++)
        if (!held[i]) {
            held[i] = calloc(1, sizeof *held[i]);
            return test_run_ok(held[i], text, params);
        }
    fail_msg("too many results held");
    return NULL;
}

static void done(Value *v)
{
    for (int i = 0; i < MAX_HELD; i++)
        if (held[i] && held[i]->result == v) {
            test_run_free(held[i]);
            free(held[i]);
            held[i] = NULL;
            return;
        }
    fail_msg("done() on a value not held");
}

static void assert_runs_agree(const char *a, const char *b, const void *const *params)
{
    Value *va = run_copy(a, params), *vb = run_copy(b, params);
    if (!value_bits_equal(va, vb))
        fail_msg("fast and slow paths differ for:\n%s", a);
    done(va);
    done(vb);
}

#define COMP_ADD_F32                                                           \
    "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"             \
    "  ROOT r = f32[] add(a, b)\n}\n\n"
/* The same sum per element, written so interp_trivial_reducer rejects it:
 * the f64 round trip is exact, so it is add in f32. */
#define COMP_ADD_F32_SLOW                                                      \
    "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"             \
    "  wa = f64[] convert(a)\n  na = f32[] convert(wa)\n"                     \
    "  ROOT r = f32[] add(na, b)\n}\n\n"
#define COMP_MAX_F32                                                           \
    "max {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"             \
    "  ROOT r = f32[] maximum(a, b)\n}\n\n"
/* maximum with the accumulator on the right: for floats a different
 * function (ties between -0 and +0, and which NaN wins, favour x). */
#define COMP_MAX_F32_SWAPPED                                                   \
    "max {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"             \
    "  ROOT r = f32[] maximum(b, a)\n}\n\n"
#define COMP_MAX_F32_SWAPPED_SLOW                                              \
    "max {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"             \
    "  wb = f64[] convert(b)\n  nb = f32[] convert(wb)\n"                     \
    "  ROOT r = f32[] maximum(nb, a)\n}\n\n"
#define COMP_MAX_F32_SLOW                                                      \
    "max {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"             \
    "  wa = f64[] convert(a)\n  na = f32[] convert(wa)\n"                     \
    "  ROOT r = f32[] maximum(na, b)\n}\n\n"

/* A module reducing f32[in_dims] over dims with computation comp (named add
 * or max) and init. */
static void reduce_module(char *buf, size_t n, const char *comp, const char *name, const char *in_dims,
                          const char *out_dims, const char *dims, const char *init)
{
    snprintf(buf, n,
             "HloModule m\n\n%s"
             "ENTRY e {\n  p = f32[%s] parameter(0)\n  z = f32[] constant(%s)\n"
             "  ROOT r = f32[%s] reduce(p, z), dimensions={%s}, to_apply=%s\n}\n",
             comp, in_dims, init, out_dims, dims, name);
}

static Value *run_reduce_f32(const char *comp, const char *in_dims, const char *out_dims, const char *dims,
                             const char *init, const float *x)
{
    char text[2048];
    reduce_module(text, sizeof text, comp, "add", in_dims, out_dims, dims, init);
    const void *params[] = { x };
    return run_copy(text, params);
}

/* ------------------------------------------------------------------ */
/* reduce                                                               */

static const float X23[] = { 1, 2, 3, 4, 5, 6 };   /* [[1,2,3],[4,5,6]] */

static void test_reduce_over_dim0(void **state)
{
    (void)state;
    static const float want[] = { 5, 7, 9 };
    Value *fast = run_reduce_f32(COMP_ADD_F32, "2,3", "3", "0", "0", X23);
    Value *slow = run_reduce_f32(COMP_ADD_F32_SLOW, "2,3", "3", "0", "0", X23);
    assert_f32_array(fast, want, 3);
    assert_f32_array(slow, want, 3);
    done(fast);
    done(slow);
}

static void test_reduce_over_minor_dim(void **state)
{
    (void)state;
    static const float want[] = { 6, 15 };
    Value *fast = run_reduce_f32(COMP_ADD_F32, "2,3", "2", "1", "0", X23);
    Value *slow = run_reduce_f32(COMP_ADD_F32_SLOW, "2,3", "2", "1", "0", X23);
    assert_f32_array(fast, want, 2);
    assert_f32_array(slow, want, 2);
    done(fast);
    done(slow);
}

static void test_reduce_over_all_dims_in_any_listed_order(void **state)
{
    (void)state;
    static const float want[] = { 31 };    /* 1+...+6 = 21, plus init 10 */
    Value *a = run_reduce_f32(COMP_ADD_F32, "2,3", "", "0,1", "10", X23);
    Value *b = run_reduce_f32(COMP_ADD_F32, "2,3", "", "1,0", "10", X23);
    Value *c = run_reduce_f32(COMP_ADD_F32_SLOW, "2,3", "", "0,1", "10", X23);
    assert_f32_array(a, want, 1);
    assert_f32_array(b, want, 1);
    assert_f32_array(c, want, 1);
    done(a);
    done(b);
    done(c);
}

/* x[a][b][c] = 100a + 10b + c over b (3 values): 300a + 30 + 3c. */
static void test_reduce_over_middle_dim_of_3d(void **state)
{
    (void)state;
    float x[2 * 3 * 4], want[2 * 4];
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 3; b++)
            for (int c = 0; c < 4; c++)
                x[(a * 3 + b) * 4 + c] = (float)(100 * a + 10 * b + c);
    for (int a = 0; a < 2; a++)
        for (int c = 0; c < 4; c++)
            want[a * 4 + c] = (float)(300 * a + 30 + 3 * c);
    Value *fast = run_reduce_f32(COMP_ADD_F32, "2,3,4", "2,4", "1", "0", x);
    Value *slow = run_reduce_f32(COMP_ADD_F32_SLOW, "2,3,4", "2,4", "1", "0", x);
    assert_f32_array(fast, want, 8);
    assert_f32_array(slow, want, 8);
    done(fast);
    done(slow);
}

/* s32 x[a][b][c][d] = 1000a + 100b + 10c + d over b and c (3 x 4 values):
 * 12(1000a + d) + 100*4*(0+1+2) + 10*3*(0+1+2+3) = 12000a + 12d + 1380. */
static void test_reduce_over_middle_dims_of_4d_s32(void **state)
{
    (void)state;
    int32_t x[2 * 3 * 4 * 5], want[2 * 5];
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 3; b++)
            for (int c = 0; c < 4; c++)
                for (int d = 0; d < 5; d++)
                    x[((a * 3 + b) * 4 + c) * 5 + d] = 1000 * a + 100 * b + 10 * c + d;
    for (int a = 0; a < 2; a++)
        for (int d = 0; d < 5; d++)
            want[a * 5 + d] = 12000 * a + 12 * d + 1380;
    static const char *text =
        "HloModule m\n\nadd {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n"
        "  ROOT r = s32[] add(a, b)\n}\n\n"
        "ENTRY e {\n  p = s32[2,3,4,5] parameter(0)\n  z = s32[] constant(0)\n"
        "  ROOT r = s32[2,5] reduce(p, z), dimensions={1,2}, to_apply=add\n}\n";
    const void *params[] = { x };
    Value *v = run_copy(text, params);
    assert_s32_array(v, want, 10);
    done(v);
}

/* Integer sums wrap: u8 200 + 100 + 50 + 6 = 356 = 100 (mod 256). */
static void test_reduce_u8_sum_wraps(void **state)
{
    (void)state;
    static const uint8_t x[] = { 200, 100, 50, 6, 1, 2, 3, 4 };
    static const char *text =
        "HloModule m\n\nadd {\n  a = u8[] parameter(0)\n  b = u8[] parameter(1)\n"
        "  ROOT r = u8[] add(a, b)\n}\n\n"
        "ENTRY e {\n  p = u8[2,4] parameter(0)\n  z = u8[] constant(0)\n"
        "  ROOT r = u8[2] reduce(p, z), dimensions={1}, to_apply=add\n}\n";
    const void *params[] = { x };
    Value *v = run_copy(text, params);
    const uint8_t *got = v->data;
    assert_int_equal(got[0], 100);
    assert_int_equal(got[1], 10);
    done(v);
}

/* Variadic argmax over dim 1: the larger value wins, ties go to the
 * smaller index.  Rows [3,7,7,1] and [9,2,9,0]: (7,1) and (9,0). */
static void test_reduce_variadic_argmax(void **state)
{
    (void)state;
    static const float vals[] = { 3, 7, 7, 1, 9, 2, 9, 0 };
    static const int32_t idx[] = { 0, 1, 2, 3, 0, 1, 2, 3 };
    static const char *text =
        "HloModule m\n\n"
        "argmax {\n  av = f32[] parameter(0)\n  ai = s32[] parameter(1)\n"
        "  bv = f32[] parameter(2)\n  bi = s32[] parameter(3)\n"
        "  gt = pred[] compare(av, bv), direction=GT\n  eq = pred[] compare(av, bv), direction=EQ\n"
        "  lt = pred[] compare(ai, bi), direction=LT\n  tie = pred[] and(eq, lt)\n"
        "  keep = pred[] or(gt, tie)\n  v = f32[] select(keep, av, bv)\n"
        "  i = s32[] select(keep, ai, bi)\n  ROOT t = (f32[], s32[]) tuple(v, i)\n}\n\n"
        "ENTRY e {\n  p = f32[2,4] parameter(0)\n  q = s32[2,4] parameter(1)\n"
        "  ninf = f32[] constant(-inf)\n  zero = s32[] constant(0)\n"
        "  ROOT r = (f32[2], s32[2]) reduce(p, q, ninf, zero), dimensions={1}, to_apply=argmax\n}\n";
    const void *params[] = { vals, idx };
    TestRun run;
    Value *v = test_run_ok(&run, text, params);
    assert_int_equal(v->n_elements, 2);
    static const float want_v[] = { 7, 9 };
    static const int32_t want_i[] = { 1, 0 };
    assert_f32_array(v->elements[0], want_v, 2);
    assert_s32_array(v->elements[1], want_i, 2);
    test_run_free(&run);
}

/* {1e8, 1, -1e8, 1} folded left in f32: 1e8 + 1 rounds to 1e8 (the spacing
 * there is 8), minus 1e8 is 0, plus 1 is 1.  (Exact: 2; pairwise: 0.)
 * The same four values along every kind of reduced dim. */
static void test_reduce_f32_left_fold_order(void **state)
{
    (void)state;
    static const float seq[] = { 1e8f, 1, -1e8f, 1 };
    float rows[300 * 4], cols[4 * 3], want[300];
    for (int i = 0; i < 300; i++) {
        memcpy(rows + 4 * i, seq, sizeof seq);
        want[i] = 1.0f;
    }
    for (int k = 0; k < 4; k++)
        for (int j = 0; j < 3; j++)
            cols[k * 3 + j] = seq[k];
    const char *comps[] = { COMP_ADD_F32, COMP_ADD_F32_SLOW };
    for (int c = 0; c < 2; c++) {
        Value *a = run_reduce_f32(comps[c], "4", "", "0", "0", seq);
        Value *b = run_reduce_f32(comps[c], "4,3", "3", "0", "0", cols);
        Value *d = run_reduce_f32(comps[c], "3,4", "3", "1", "0", rows);
        Value *e = run_reduce_f32(comps[c], "300,4", "300", "1", "0", rows);
        assert_f32_array(a, want, 1);
        assert_f32_array(b, want, 3);
        assert_f32_array(d, want, 3);
        assert_f32_array(e, want, 300);
        done(a);
        done(b);
        done(d);
        done(e);
    }
}

#define BF16_ROUNDS_FMT                                                                    \
    "HloModule m\n\nadd {\n  a = bf16[] parameter(0)\n  b = bf16[] parameter(1)\n%s}\n\n"    \
    "ENTRY e {\n  p = bf16[%s] parameter(0)\n  z = bf16[] constant(0)\n"                    \
    "  ROOT r = bf16[2] reduce(p, z), dimensions={%s}, to_apply=add\n}\n"

/* bf16 accumulates in bf16, rounding after every add.  At 1.0 the bf16
 * spacing is 2^-7, so 1 + 2^-8 is a tie and rounds to even: 1.0 (0x3F80).
 * Row 0 {1, 2^-8, 2^-8, 2^-8}: every step ties back to 1.0 -> 0x3F80
 * (the exact sum 1 + 3*2^-8 would round to 1 + 2^-6 = 0x3F82).
 * Row 1 {1, 3*2^-8, 2^-8, 0}: 1 + 1.5*2^-7 ties to mantissa 2 -> 0x3F82;
 * + 2^-8 is 1 + 2.5*2^-7, ties to mantissa 2 -> 0x3F82; + 0 -> 0x3F82.
 * bf16 bits: 1.0 = 0x3F80, 2^-8 = 0x3B80, 3*2^-8 = 1.5*2^-7 = 0x3C40. */
static void test_reduce_bf16_rounds_every_step(void **state)
{
    (void)state;
    static const uint16_t x[] = { 0x3F80, 0x3B80, 0x3B80, 0x3B80, 0x3F80, 0x3C40, 0x3B80, 0x0000 };
    static const uint16_t xt[] = { 0x3F80, 0x3F80, 0x3B80, 0x3C40, 0x3B80, 0x3B80, 0x3B80, 0x0000 };
    static const char *roots[] = { "  ROOT r = bf16[] add(a, b)\n",
                                   "  wa = f32[] convert(a)\n  na = bf16[] convert(wa)\n  ROOT r = bf16[] add(na, b)\n" };
    for (int c = 0; c < 2; c++)
        for (int layout = 0; layout < 2; layout++) {
            char text[1024];
            snprintf(text, sizeof text, BF16_ROUNDS_FMT, roots[c], layout ? "4,2" : "2,4", layout ? "0" : "1");
            const void *params[] = { layout ? xt : x };
            Value *v = run_copy(text, params);
            const uint16_t *got = v->data;
            assert_int_equal(got[0], 0x3F80);
            assert_int_equal(got[1], 0x3F82);
            done(v);
        }
}

/* The trivial reducer (fast path) and the same op written non-trivially
 * (slow path) give identical bits on sums whose order matters. */
static void test_reduce_fast_and_slow_paths_agree(void **state)
{
    (void)state;
    static const struct { const char *in, *out, *dims; } cases[] = {
        { "64,37", "37", "0" }, { "64,37", "64", "1" }, { "64,37", "", "0,1" },
        { "5,6,7", "5,7", "1" }, { "5,6,7", "6", "0,2" }, { "5,6,7", "5,6", "2" },
        { "3,700", "3", "1" }, { "700,3", "3", "0" }, { "2,3,2,300", "2,2,300", "1" },
        { "4200", "", "0" }, { "2,2100", "2", "1" }, { "300,14", "300", "1" }, { "21,200", "21", "1" },
        { "3,1400", "1400", "0" }, { "7,20,30", "7,30", "1" }, { "7,20,30", "20", "0,2" },
    };
    float *x = malloc(4200 * sizeof *x);
    fill_varied(x, 4200, 7);
    const void *params[] = { x };
    /* Signed zeros and NaNs: with distinct NaN payloads for maximum, where
     * the first NaN (lhs before rhs) must win; with one NaN pattern for add,
     * since which payload IEEE add keeps when both operands are NaN is
     * unspecified (and differs between interp_binary_kernel's scalar and
     * vector loops). */
    float *y = malloc(4200 * sizeof *y), *z = malloc(4200 * sizeof *z);
    memcpy(y, x, 4200 * sizeof *y);
    for (int i = 0; i < 4200; i += 7)
        y[i] = i % 3 ? 0.0f : -0.0f;
    memcpy(z, y, 4200 * sizeof *z);
    for (int i = 3; i < 4200; i += 97) {
        y[i] = f32_from(i % 2 ? 0x7FC00001u : 0xFFC00002u);
        z[i] = f32_from(0x7FC00000u);
    }
    const void *params_special[] = { y }, *params_one_nan[] = { z };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char fast[2048], slow[2048];
        reduce_module(fast, sizeof fast, COMP_ADD_F32, "add", cases[i].in, cases[i].out, cases[i].dims, "0.5");
        reduce_module(slow, sizeof slow, COMP_ADD_F32_SLOW, "add", cases[i].in, cases[i].out, cases[i].dims, "0.5");
        assert_runs_agree(fast, slow, params);
        assert_runs_agree(fast, slow, params_one_nan);
        reduce_module(fast, sizeof fast, COMP_MAX_F32, "max", cases[i].in, cases[i].out, cases[i].dims, "-inf");
        reduce_module(slow, sizeof slow, COMP_MAX_F32_SLOW, "max", cases[i].in, cases[i].out, cases[i].dims, "-inf");
        assert_runs_agree(fast, slow, params);
        assert_runs_agree(fast, slow, params_special);
        reduce_module(fast, sizeof fast, COMP_MAX_F32_SWAPPED, "max", cases[i].in, cases[i].out, cases[i].dims, "-inf");
        reduce_module(slow, sizeof slow, COMP_MAX_F32_SWAPPED_SLOW, "max", cases[i].in, cases[i].out, cases[i].dims,
                      "-inf");
        assert_runs_agree(fast, slow, params_special);
    }
    free(x);
    free(y);
    free(z);
}

#define TYPED_AGREE_FMT                                                                    \
    "HloModule m\n\nf {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n%s}\n\n"          \
    "ENTRY e {\n  p = %s[%s] parameter(0)\n  z = %s[] constant(%s)\n"                       \
    "  ROOT r = %s[%s] reduce(p, z), dimensions={%s}, to_apply=f\n}\n"

/* Rows reduced over their contiguous dim, 8 outputs at a time (with AVX2:
 * the rows' elements transposed into vector lanes, each lane folding its
 * own row in order): f32 and f64, add and multiply, row lengths around
 * the vector width, against the slow path's one element at a time. */
static void test_reduce_grouped_rows_fold_in_order(void **state)
{
    (void)state;
    static const struct { const char *in, *out; } shapes[] = {
        { "8,8", "8" }, { "16,7", "16" }, { "64,37", "64" }, { "9,100", "9" }, { "24,1000", "24" }, { "17,4", "17" },
    };
    static const char *const types[] = { "f32", "f64" };
    static const struct { const char *op, *init; } ops[] = { { "add", "0.25" }, { "multiply", "1" } };
    enum { N = 24000 };
    float *xf = malloc(N * sizeof *xf), *mf = malloc(N * sizeof *mf);
    double *xd = malloc(N * sizeof *xd), *md = malloc(N * sizeof *md);
    fill_varied(xf, N, 11);
    for (int i = 0; i < N; i++) {
        mf[i] = 1.0f + ldexpf(xf[i], -22);        /* near 1: products stay finite and keep changing */
        xd[i] = (double)xf[i] * 0x1p-30 + 1e-3 * (i % 7);
        md[i] = 1.0 + ldexp((double)xf[i], -40);
    }
    for (size_t t = 0; t < 2; t++)
        for (size_t o = 0; o < 2; o++)
            for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
                const char *ty = types[t];
                char fast_body[160], slow_body[256], fast[1024], slow[1024];
                snprintf(fast_body, sizeof fast_body, "  ROOT r = %s[] %s(a, b)\n", ty, ops[o].op);
                snprintf(slow_body, sizeof slow_body,
                         "  wa = f64[] convert(a)\n  na = %s[] convert(wa)\n  ROOT r = %s[] %s(na, b)\n", ty, ty,
                         ops[o].op);
                snprintf(fast, sizeof fast, TYPED_AGREE_FMT, ty, ty, fast_body, ty, shapes[k].in, ty, ops[o].init,
                         ty, shapes[k].out, "1");
                snprintf(slow, sizeof slow, TYPED_AGREE_FMT, ty, ty, slow_body, ty, shapes[k].in, ty, ops[o].init,
                         ty, shapes[k].out, "1");
                const void *params[] = { t == 0 ? (const void *)(o ? mf : xf) : (const void *)(o ? md : xd) };
                assert_runs_agree(fast, slow, params);
            }
    free(xf);
    free(mf);
    free(xd);
    free(md);
}

/* Reduces over a leading dim (each output a column, its steps four rows a
 * pass): rows counts around the pass of four, columns past one block of
 * outputs (16384), f32 and f64, add, multiply and maximum, against the
 * slow path's one element at a time.  Then the accumulator's NaN: a
 * column -inf, +inf, NaN makes the accumulator the default NaN
 * (0xFFC00000) at the second step, and the third must keep it, as the
 * contiguous fold does, though the input NaN has another sign. */
static void test_reduce_over_leading_dims_folds_columns_in_order(void **state)
{
    (void)state;
    static const char *const rows[] = { "1", "3", "4", "5", "9" };
    static const char *const types[] = { "f32", "f64" };
    static const struct { const char *op, *init; } ops[] = {
        { "add", "0.25" }, { "multiply", "1" }, { "maximum", "-inf" } };
    enum { COLS = 16400, N = 9 * COLS };
    float *xf = malloc(N * sizeof *xf);
    double *xd = malloc(N * sizeof *xd);
    fill_varied(xf, N, 5);
    for (int i = 0; i < N; i++) {
        xf[i] = i % 3 == 2 ? 1.0f + ldexpf(xf[i], -22) : xf[i];
        xd[i] = (double)xf[i] * (1 + 0x1p-40 * (i % 5));
    }
    for (size_t t = 0; t < 2; t++)
        for (size_t o = 0; o < 3; o++)
            for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
                const char *ty = types[t];
                char in[32], fast_body[160], slow_body[256], fast[1024], slow[1024];
                snprintf(in, sizeof in, "%s,%d", rows[r], (int)COLS);
                snprintf(fast_body, sizeof fast_body, "  ROOT r = %s[] %s(a, b)\n", ty, ops[o].op);
                snprintf(slow_body, sizeof slow_body,
                         "  wa = f64[] convert(a)\n  na = %s[] convert(wa)\n  ROOT r = %s[] %s(na, b)\n", ty, ty,
                         ops[o].op);
                snprintf(fast, sizeof fast, TYPED_AGREE_FMT, ty, ty, fast_body, ty, in, ty, ops[o].init, ty,
                         "16400", "0");
                snprintf(slow, sizeof slow, TYPED_AGREE_FMT, ty, ty, slow_body, ty, in, ty, ops[o].init, ty,
                         "16400", "0");
                const void *params[] = { t == 0 ? (const void *)xf : (const void *)xd };
                assert_runs_agree(fast, slow, params);
            }
    free(xf);
    free(xd);

    const float ninf = -INFINITY, pinf = INFINITY, nan = f32_from(0x7FC00001u);
    const float cols[] = { ninf, ninf, pinf, pinf, nan, nan };      /* [3,2]: two equal columns */
    const float rows_of[] = { ninf, pinf, nan, ninf, pinf, nan };   /* [2,3]: two equal rows */
    Value *a = run_reduce_f32(COMP_ADD_F32, "3,2", "2", "0", "0", cols);
    Value *b = run_reduce_f32(COMP_ADD_F32, "2,3", "2", "1", "0", rows_of);
    for (int j = 0; j < 2; j++) {
        uint32_t ua, ub;
        memcpy(&ua, (const float *)a->data + j, sizeof ua);
        memcpy(&ub, (const float *)b->data + j, sizeof ub);
        assert_int_equal(ua, 0xFFC00000u);
        assert_int_equal(ub, 0xFFC00000u);
    }
    done(a);
    done(b);
}

#define BF16_AGREE_FMT                                                                     \
    "HloModule m\n\nf {\n  a = bf16[] parameter(0)\n  b = bf16[] parameter(1)\n%s}\n\n"      \
    "ENTRY e {\n  p = bf16[%s] parameter(0)\n  z = bf16[] constant(%s)\n"                   \
    "  ROOT r = bf16[%s] reduce(p, z), dimensions={%s}, to_apply=f\n}\n"

/* The same for bf16, whose reductions go through the kernel (blocks of
 * rows transposed, segments of a long row for maximum, one element at a
 * time for a lone row of adds).  NaNs included: the kernel makes every
 * NaN result bf16's canonical NaN. */
static void test_reduce_bf16_fast_and_slow_paths_agree(void **state)
{
    (void)state;
    static const struct { const char *in, *out, *dims; } cases[] = {
        { "64,37", "37", "0" }, { "64,37", "64", "1" }, { "64,37", "", "0,1" }, { "3,700", "3", "1" },
        { "2100", "", "0" }, { "5,6,7", "6", "0,2" }, { "300,7", "300", "1" },
    };
    static const char *ops[][3] = {
        { "  ROOT r = bf16[] add(a, b)\n",
          "  wa = f32[] convert(a)\n  na = bf16[] convert(wa)\n  ROOT r = bf16[] add(na, b)\n", "0.5" },
        { "  ROOT r = bf16[] maximum(a, b)\n",
          "  wa = f32[] convert(a)\n  na = bf16[] convert(wa)\n  ROOT r = bf16[] maximum(na, b)\n", "-inf" },
        { "  ROOT r = bf16[] multiply(a, b)\n",
          "  wa = f32[] convert(a)\n  na = bf16[] convert(wa)\n  ROOT r = bf16[] multiply(na, b)\n", "1" },
    };
    float *x = malloc(2400 * sizeof *x);
    uint16_t *h = malloc(2400 * sizeof *h);
    fill_varied(x, 2400, 5);
    for (int i = 0; i < 2400; i++)
        h[i] = i % 131 == 7 ? (uint16_t)(i % 2 ? 0x7FC1 : 0xFFC2) : i % 11 == 3 ? (uint16_t)(i % 2 ? 0x8000 : 0)
                                                                            : ir_f32_to_bf16(x[i]);
    const void *params[] = { h };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int k = 0; k < 3; k++) {
            char fast[2048], slow[2048];
            snprintf(fast, sizeof fast, BF16_AGREE_FMT, ops[k][0], cases[i].in, ops[k][2], cases[i].out, cases[i].dims);
            snprintf(slow, sizeof slow, BF16_AGREE_FMT, ops[k][1], cases[i].in, ops[k][2], cases[i].out, cases[i].dims);
            assert_runs_agree(fast, slow, params);
        }
    free(x);
    free(h);
}

/* f16 add and multiply: a lone row, and a few rows, fold each element in
 * order (rounded to f16 after each step) without a call per element; many
 * rows go through the kernel's transposed blocks.  Against the slow path,
 * with +inf, subnormals, values that overflow f16 and one NaN pattern
 * (which of two NaNs an add keeps is the hardware's). */
static void test_reduce_f16_fast_and_slow_paths_agree(void **state)
{
    (void)state;
    static const struct { const char *in, *out, *dims; } cases[] = {
        { "2100", "", "0" }, { "3,700", "3", "1" }, { "64,37", "64", "1" }, { "64,37", "37", "0" },
    };
    static const char *ops[][3] = {
        { "  ROOT r = f16[] add(a, b)\n",
          "  wa = f32[] convert(a)\n  na = f16[] convert(wa)\n  ROOT r = f16[] add(na, b)\n", "0.5" },
        { "  ROOT r = f16[] multiply(a, b)\n",
          "  wa = f32[] convert(a)\n  na = f16[] convert(wa)\n  ROOT r = f16[] multiply(na, b)\n", "1" },
    };
    float *x = malloc(2400 * sizeof *x);
    uint16_t *h = malloc(2400 * sizeof *h), *m = malloc(2400 * sizeof *m), *plain = malloc(2400 * sizeof *plain);
    fill_varied(x, 2400, 9);
    for (int i = 0; i < 2400; i++) {
        /* within f16's range (no -inf, whose sum with +inf is a NaN of the other sign), but for values
         * near its top, which overflow to +inf, and a subnormal */
        float v = i % 97 == 5 ? 6.0e4f : i % 89 == 2 ? 3.0e-7f : ldexpf(x[i], -12);
        h[i] = i % 331 == 7 ? 0x7E00 : i % 223 == 9 ? 0x7C00 : ir_f32_to_f16(v);   /* +inf only: inf - inf is a NaN of
                                                                                    the other sign */
        m[i] = ir_f32_to_f16(1.0f + ldexpf(x[i], -12));                      /* products that keep changing */
        plain[i] = ir_f32_to_f16(ldexpf(x[i], -12));                          /* sums rounded at every step */
    }
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int k = 0; k < 2; k++) {
            char fast[2048], slow[2048];
            snprintf(fast, sizeof fast, TYPED_AGREE_FMT, "f16", "f16", ops[k][0], "f16", cases[i].in, "f16", ops[k][2],
                     "f16", cases[i].out, cases[i].dims);
            snprintf(slow, sizeof slow, TYPED_AGREE_FMT, "f16", "f16", ops[k][1], "f16", cases[i].in, "f16", ops[k][2],
                     "f16", cases[i].out, cases[i].dims);
            const void *params[] = { k ? m : h }, *params_plain[] = { plain };
            assert_runs_agree(fast, slow, params);
            if (k == 0)
                assert_runs_agree(fast, slow, params_plain);
        }
    free(x);
    free(h);
    free(m);
    free(plain);
}

/* A zero-size reduced dim leaves every output at init; a zero-size kept dim
 * gives an empty result. */
static void test_reduce_empty_gives_init(void **state)
{
    (void)state;
    static const float want[] = { 5, 5, 5 };
    static const float none[] = { 0 };
    const char *comps[] = { COMP_ADD_F32, COMP_ADD_F32_SLOW };
    for (int c = 0; c < 2; c++) {
        Value *a = run_reduce_f32(comps[c], "0,3", "3", "0", "5", none);
        Value *b = run_reduce_f32(comps[c], "3,0", "3", "1", "5", none);
        Value *d = run_reduce_f32(comps[c], "0,3", "0", "1", "5", none);
        assert_f32_array(a, want, 3);
        assert_f32_array(b, want, 3);
        assert_int_equal(value_elements(d), 0);
        done(a);
        done(b);
        done(d);
    }
}

/* Rank 0: dimensions={} folds the single element once: init 2 + 3 = 5. */
static void test_reduce_rank0(void **state)
{
    (void)state;
    static const float x[] = { 3 };
    static const float want[] = { 5 };
    Value *a = run_reduce_f32(COMP_ADD_F32, "", "", "", "2", x);
    Value *b = run_reduce_f32(COMP_ADD_F32_SLOW, "", "", "", "2", x);
    assert_f32_array(a, want, 1);
    assert_f32_array(b, want, 1);
    done(a);
    done(b);
}

/* ------------------------------------------------------------------ */
/* reduce-window                                                        */

static const float X34[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };   /* [[1..4],[5..8],[9..12]] */

static Value *run_window(const char *comp, const char *name, const char *in_dims, const char *out_dims,
                         const char *window, const char *init, const float *x)
{
    char text[2048];
    snprintf(text, sizeof text,
             "HloModule m\n\n%s"
             "ENTRY e {\n  p = f32[%s] parameter(0)\n  z = f32[] constant(%s)\n"
             "  ROOT r = f32[%s] reduce-window(p, z), window={%s}, to_apply=%s\n}\n",
             comp, in_dims, init, out_dims, window, name);
    const void *params[] = { x };
    return run_copy(text, params);
}

/* Window 2x2, stride 2x2, rows padded 0 low 1 high, cols 1 low 1 high:
 * padded 4 x 6 -> output 2 x 3.  Windows cover rows {0,1} / {2,pad} and
 * cols {pad,0} / {1,2} / {3,pad}:
 *   [1+5, 2+3+6+7, 4+8]  = [6, 18, 12]
 *   [9,   10+11,   12]   = [9, 21, 12]
 * Padding is skipped, not folded: with init 100 each output gains 100 once. */
static void test_reduce_window_sum_stride_padding(void **state)
{
    (void)state;
    static const float want0[] = { 6, 18, 12, 9, 21, 12 };
    static const float want100[] = { 106, 118, 112, 109, 121, 112 };
    const char *comps[] = { COMP_ADD_F32, COMP_ADD_F32_SLOW };
    for (int c = 0; c < 2; c++) {
        Value *a = run_window(comps[c], "add", "3,4", "2,3", "size=2x2 stride=2x2 pad=0_1x1_1", "0", X34);
        Value *b = run_window(comps[c], "add", "3,4", "2,3", "size=2x2 stride=2x2 pad=0_1x1_1", "100", X34);
        assert_f32_array(a, want0, 6);
        assert_f32_array(b, want100, 6);
        done(a);
        done(b);
    }
}

/* Max, window 2x2, stride 2x1, rows padded 1 low: padded rows 4 -> 2
 * outputs (rows {pad,0} and {1,2}); cols 4 -> 3 outputs.
 *   [max(1,2), max(2,3), max(3,4)] = [2, 3, 4]
 *   [max(5,6,9,10), ...]           = [10, 11, 12]
 * No padding, stride 1: the bottom-right of each 2x2 block. */
static void test_reduce_window_max(void **state)
{
    (void)state;
    static const float want_pad[] = { 2, 3, 4, 10, 11, 12 };
    static const float want_plain[] = { 6, 7, 8, 10, 11, 12 };
    const char *comps[] = { COMP_MAX_F32, COMP_MAX_F32_SLOW };
    for (int c = 0; c < 2; c++) {
        Value *a = run_window(comps[c], "max", "3,4", "2,3", "size=2x2 stride=2x1 pad=1_0x0_0", "-inf", X34);
        Value *b = run_window(comps[c], "max", "3,4", "2,3", "size=2x2", "-inf", X34);
        assert_f32_array(a, want_pad, 6);
        assert_f32_array(b, want_plain, 6);
        done(a);
        done(b);
    }
}

/* Base dilation 2 on [1,2,3] gives [1,_,2,_,3]; windows of 2 each hold
 * exactly one element: [1,2,2,3].  Window dilation 2 on [1,2,3,4,5] with
 * size 2 spans 3: [1+3, 2+4, 3+5] = [4,6,8]. */
static void test_reduce_window_dilations(void **state)
{
    (void)state;
    static const float x3[] = { 1, 2, 3 }, x5[] = { 1, 2, 3, 4, 5 };
    static const float want_base[] = { 1, 2, 2, 3 }, want_win[] = { 4, 6, 8 };
    const char *comps[] = { COMP_ADD_F32, COMP_ADD_F32_SLOW };
    for (int c = 0; c < 2; c++) {
        Value *a = run_window(comps[c], "add", "3", "4", "size=2 lhs_dilate=2", "0", x3);
        Value *b = run_window(comps[c], "add", "5", "3", "size=2 rhs_dilate=2", "0", x5);
        assert_f32_array(a, want_base, 4);
        assert_f32_array(b, want_win, 3);
        done(a);
        done(b);
    }
}

#define WINDOW_AGREE_FMT                                                                   \
    "HloModule m\n\n%s"                                                                       \
    "ENTRY e {\n  p = f32[%s] parameter(0)\n  z = f32[] constant(0.25)\n"                    \
    "  ROOT r = f32[%s] reduce-window(p, z), window={%s}, to_apply=add\n}\n"

static void test_reduce_window_fast_and_slow_paths_agree(void **state)
{
    (void)state;
    static const struct { const char *in, *out, *window; } cases[] = {
        { "9,11", "4,12", "size=3x2 stride=2x1 pad=1_1x0_2 rhs_dilate=2x1" },
        { "9,11", "3,3", "size=3x3 stride=3x3" },
        { "4,5,6", "4,3,6", "size=1x3x1 stride=1x2x1 pad=0_0x1_1x0_0" },
        { "40", "13", "size=4 stride=3 pad=0_1" },
        { "2,7,6,3", "2,4,3,3", "size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0" },
        { "9,11", "9,11", "size=1x1" },
        { "3,4,5,6", "3,4,3,6", "size=1x2x3x1 stride=1x1x1x1 pad=0_0x1_0x0_0x0_0" },
    };
    float x[400];
    fill_varied(x, 400, 11);
    const void *params[] = { x };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char fast[2048], slow[2048];
        snprintf(fast, sizeof fast, WINDOW_AGREE_FMT, COMP_ADD_F32, cases[i].in, cases[i].out, cases[i].window);
        snprintf(slow, sizeof slow, WINDOW_AGREE_FMT, COMP_ADD_F32_SLOW, cases[i].in, cases[i].out, cases[i].window);
        assert_runs_agree(fast, slow, params);
    }
}

/* Variadic: (max value, its first index) over windows of 2, stride 1, on
 * values {1,5,2,5,3}: (1,5)->(5,1), (5,2)->(5,1), (2,5)->(5,3),
 * (5,3)->(5,3). */
static void test_reduce_window_variadic_argmax(void **state)
{
    (void)state;
    static const float vals[] = { 1, 5, 2, 5, 3 };
    static const int32_t idx[] = { 0, 1, 2, 3, 4 };
    static const char *text =
        "HloModule m\n\n"
        "argmax {\n  av = f32[] parameter(0)\n  ai = s32[] parameter(1)\n"
        "  bv = f32[] parameter(2)\n  bi = s32[] parameter(3)\n"
        "  gt = pred[] compare(av, bv), direction=GT\n  eq = pred[] compare(av, bv), direction=EQ\n"
        "  lt = pred[] compare(ai, bi), direction=LT\n  tie = pred[] and(eq, lt)\n"
        "  keep = pred[] or(gt, tie)\n  v = f32[] select(keep, av, bv)\n"
        "  i = s32[] select(keep, ai, bi)\n  ROOT t = (f32[], s32[]) tuple(v, i)\n}\n\n"
        "ENTRY e {\n  p = f32[5] parameter(0)\n  q = s32[5] parameter(1)\n"
        "  ninf = f32[] constant(-inf)\n  zero = s32[] constant(0)\n"
        "  ROOT r = (f32[4], s32[4]) reduce-window(p, q, ninf, zero), window={size=2}, to_apply=argmax\n}\n";
    const void *params[] = { vals, idx };
    TestRun run;
    Value *v = test_run_ok(&run, text, params);
    static const float want_v[] = { 5, 5, 5, 5 };
    static const int32_t want_i[] = { 1, 1, 3, 3 };
    assert_int_equal(v->n_elements, 2);
    assert_f32_array(v->elements[0], want_v, 4);
    assert_s32_array(v->elements[1], want_i, 4);
    test_run_free(&run);
}

/* ------------------------------------------------------------------ */
/* map                                                                  */

/* One operand, any computation: map(x) with x -> 2 - x. */
static void test_map_one_operand(void **state)
{
    (void)state;
    static const float x[] = { 1, -2, 0.5f };
    static const float want[] = { 1, 4, 1.5f };
    static const char *text =
        "HloModule m\n\nf {\n  x = f32[] parameter(0)\n  two = f32[] constant(2)\n"
        "  ROOT r = f32[] subtract(two, x)\n}\n\n"
        "ENTRY e {\n  p = f32[3] parameter(0)\n  ROOT r = f32[3] map(p), dimensions={0}, to_apply=f\n}\n";
    const void *params[] = { x };
    Value *v = run_copy(text, params);
    assert_f32_array(v, want, 3);
    done(v);
}

#define MAP_FMT                                                                            \
    "HloModule m\n\nf {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n%s}\n\n"      \
    "ENTRY e {\n  p = f32[2,2] parameter(0)\n  q = f32[2,2] parameter(1)\n"                 \
    "  ROOT r = f32[2,2] map(p, q), dimensions={0,1}, to_apply=f\n}\n"

/* multiply (one kernel call) and a*b + 1 (per element). */
static void test_map(void **state)
{
    (void)state;
    static const float a[] = { 1, 2, 3, 4 }, b[] = { 5, 6, 7, -8 };
    static const float want_mul[] = { 5, 12, 21, -32 }, want_fma[] = { 6, 13, 22, -31 };
    char text[1024];
    const void *params[] = { a, b };
    snprintf(text, sizeof text, MAP_FMT, "  ROOT m = f32[] multiply(x, y)\n");
    Value *mul = run_copy(text, params);
    snprintf(text, sizeof text, MAP_FMT,
             "  m = f32[] multiply(x, y)\n  one = f32[] constant(1)\n  ROOT s = f32[] add(m, one)\n");
    Value *fma = run_copy(text, params);
    snprintf(text, sizeof text, MAP_FMT, "  ROOT m = f32[] subtract(y, x)\n");
    Value *sub = run_copy(text, params);
    static const float want_sub[] = { 4, 4, 4, -12 };
    assert_f32_array(mul, want_mul, 4);
    assert_f32_array(fma, want_fma, 4);
    assert_f32_array(sub, want_sub, 4);
    done(mul);
    done(fma);
    done(sub);
}

/* ------------------------------------------------------------------ */
/* sort                                                                 */

/* A one-operand sort of f32[dims] along dim with comparator root text. */
static Value *run_sort_f32(const char *dims, int dim, const char *root, const float *x)
{
    char text[2048];
    snprintf(text, sizeof text,
             "HloModule m\n\nless {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n%s}\n\n"
             "ENTRY e {\n  p = f32[%s] parameter(0)\n"
             "  ROOT r = f32[%s] sort(p), dimensions={%d}, is_stable=true, to_apply=less\n}\n",
             root, dims, dims, dim);
    const void *params[] = { x };
    return run_copy(text, params);
}

#define LT_ROOT "  ROOT c = pred[] compare(a, b), direction=LT\n"
#define GT_ROOT "  ROOT c = pred[] compare(a, b), direction=GT\n"
#define LT_SWAPPED_ROOT "  ROOT c = pred[] compare(b, a), direction=GT\n"
#define LT_SLOW_ROOT "  c = pred[] compare(a, b), direction=LT\n  ROOT d = pred[] and(c, c)\n"
#define LT_TOTAL_ROOT "  ROOT c = pred[] compare(a, b), direction=LT, type=TOTALORDER\n"
#define LT_TOTAL_SLOW_ROOT "  c = pred[] compare(a, b), direction=LT, type=TOTALORDER\n  ROOT d = pred[] or(c, c)\n"

static void test_sort_ascending_and_descending(void **state)
{
    (void)state;
    static const float x[] = { 3, 1, 2, 5, 4, 0, -1, 7, 7, 2 };
    static const float up[] = { -1, 0, 1, 2, 2, 3, 4, 5, 7, 7 }, down[] = { 7, 7, 5, 4, 3, 2, 2, 1, 0, -1 };
    Value *a = run_sort_f32("10", 0, LT_ROOT, x);
    Value *b = run_sort_f32("10", 0, LT_SLOW_ROOT, x);
    Value *c = run_sort_f32("10", 0, GT_ROOT, x);
    Value *d = run_sort_f32("10", 0, LT_SWAPPED_ROOT, x);
    assert_f32_array(a, up, 10);
    assert_f32_array(b, up, 10);
    assert_f32_array(c, down, 10);
    assert_f32_array(d, up, 10);
    done(a);
    done(b);
    done(c);
    done(d);
}

/* [[3,1,2],[0,5,4]] along dim 0: columns sorted -> [[0,1,2],[3,5,4]];
 * along dim 1: rows sorted -> [[1,2,3],[0,4,5]]. */
static void test_sort_2d_along_each_dim(void **state)
{
    (void)state;
    static const float x[] = { 3, 1, 2, 0, 5, 4 };
    static const float want0[] = { 0, 1, 2, 3, 5, 4 }, want1[] = { 1, 2, 3, 0, 4, 5 };
    const char *roots[] = { LT_ROOT, LT_SLOW_ROOT };
    for (int c = 0; c < 2; c++) {
        Value *a = run_sort_f32("2,3", 0, roots[c], x);
        Value *b = run_sort_f32("2,3", 1, roots[c], x);
        assert_f32_array(a, want0, 6);
        assert_f32_array(b, want1, 6);
        done(a);
        done(b);
    }
}

/* Three dims, sorting along the middle one and along the last one (two
 * outer dims).  x = [[[5,1],[3,4],[0,2]], [[9,8],[7,6],[8,7]]] as [2,3,2]:
 * the columns (a, c) sort to [0,3,5] [1,2,4] [7,8,9] [6,7,8].  The same
 * twelve values as [2,2,3] have rows [5,1,3] [4,0,2] [9,8,7] [6,8,7]. */
static void test_sort_3d_along_middle_and_last_dim(void **state)
{
    (void)state;
    static const float x[] = { 5, 1, 3, 4, 0, 2, 9, 8, 7, 6, 8, 7 };
    static const float want_mid[] = { 0, 1, 3, 2, 5, 4, 7, 6, 8, 7, 9, 8 };
    static const float want_last[] = { 1, 3, 5, 0, 2, 4, 7, 8, 9, 6, 7, 8 };
    const char *roots[] = { LT_ROOT, LT_SLOW_ROOT };
    for (int c = 0; c < 2; c++) {
        Value *a = run_sort_f32("2,3,2", 1, roots[c], x);
        Value *b = run_sort_f32("2,2,3", 2, roots[c], x);
        assert_f32_array(a, want_mid, 12);
        assert_f32_array(b, want_last, 12);
        done(a);
        done(b);
    }
}

#define KEY_VALUE_FMT                                                                      \
    "HloModule m\n\nless {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n"          \
    "  c = f32[] parameter(2)\n  d = f32[] parameter(3)\n%s}\n\n"                           \
    "ENTRY e {\n  k = s32[5] parameter(0)\n  v = f32[5] parameter(1)\n"                     \
    "  ROOT r = (s32[5], f32[5]) sort(k, v), dimensions={0}, is_stable=true, to_apply=less\n}\n"

/* Keys {3,1,3,2,1} with values {10,20,30,40,50}, sorted by key only: equal
 * keys keep their order -> keys {1,1,2,3,3}, values {20,50,40,10,30}. */
static void test_sort_key_value_is_stable(void **state)
{
    (void)state;
    static const int32_t keys[] = { 3, 1, 3, 2, 1 };
    static const float vals[] = { 10, 20, 30, 40, 50 };
    static const int32_t want_k[] = { 1, 1, 2, 3, 3 };
    static const float want_v[] = { 20, 50, 40, 10, 30 };
    static const char *roots[] = { "  ROOT x = pred[] compare(a, b), direction=LT\n",
                                   "  x = pred[] compare(a, b), direction=LT\n  ROOT y = pred[] and(x, x)\n" };
    const void *params[] = { keys, vals };
    for (int c = 0; c < 2; c++) {
        char text[1024];
        snprintf(text, sizeof text, KEY_VALUE_FMT, roots[c]);
        TestRun run;
        Value *v = test_run_ok(&run, text, params);
        assert_s32_array(v->elements[0], want_k, 5);
        assert_f32_array(v->elements[1], want_v, 5);
        test_run_free(&run);
    }
}

/* Two keys, lexicographic (slow comparator): (k0, k1) pairs
 * (2,1) (1,9) (2,0) (1,3) -> (1,3) (1,9) (2,0) (2,1). */
static void test_sort_lexicographic_comparator(void **state)
{
    (void)state;
    static const int32_t k0[] = { 2, 1, 2, 1 }, k1[] = { 1, 9, 0, 3 };
    static const int32_t want0[] = { 1, 1, 2, 2 }, want1[] = { 3, 9, 0, 1 };
    static const char *text =
        "HloModule m\n\nless {\n  a0 = s32[] parameter(0)\n  b0 = s32[] parameter(1)\n"
        "  a1 = s32[] parameter(2)\n  b1 = s32[] parameter(3)\n"
        "  lt0 = pred[] compare(a0, b0), direction=LT\n  eq0 = pred[] compare(a0, b0), direction=EQ\n"
        "  lt1 = pred[] compare(a1, b1), direction=LT\n  t = pred[] and(eq0, lt1)\n"
        "  ROOT r = pred[] or(lt0, t)\n}\n\n"
        "ENTRY e {\n  p = s32[4] parameter(0)\n  q = s32[4] parameter(1)\n"
        "  ROOT r = (s32[4], s32[4]) sort(p, q), dimensions={0}, to_apply=less\n}\n";
    const void *params[] = { k0, k1 };
    TestRun run;
    Value *v = test_run_ok(&run, text, params);
    assert_s32_array(v->elements[0], want0, 4);
    assert_s32_array(v->elements[1], want1, 4);
    test_run_free(&run);
}

/* TOTALORDER: -NaN < -inf < -1 < -0 < +0 < 1 < inf < +NaN. */
static void test_sort_total_order_places_nans(void **state)
{
    (void)state;
    const float pnan = f32_from(0x7FC00000u), nnan = f32_from(0xFFC00000u);
    const float x[] = { pnan, 1, nnan, -INFINITY, 0.0f, -0.0f, INFINITY, -1 };
    const float want[] = { nnan, -INFINITY, -1, -0.0f, 0.0f, 1, INFINITY, pnan };
    Value *a = run_sort_f32("8", 0, LT_TOTAL_ROOT, x);
    Value *b = run_sort_f32("8", 0, LT_TOTAL_SLOW_ROOT, x);
    assert_f32_array(a, want, 8);
    assert_f32_array(b, want, 8);
    done(a);
    done(b);
}

/* Fast and slow comparators agree bit for bit, including the FLOAT
 * comparator on NaNs (not a strict weak order: the merge decides). */
static void test_sort_fast_and_slow_paths_agree(void **state)
{
    (void)state;
    float x[6 * 50];
    fill_varied(x, 300, 3);
    for (int i = 0; i < 300; i += 17)
        x[i] = i % 2 ? f32_from(0x7FC00000u) : -0.0f;
    for (int i = 5; i < 300; i += 23)
        x[i] = x[i - 1];
    static const struct { const char *fast, *slow; } roots[] = {
        { LT_ROOT, LT_SLOW_ROOT }, { LT_TOTAL_ROOT, LT_TOTAL_SLOW_ROOT },
        { GT_ROOT, "  c = pred[] compare(a, b), direction=GT\n  ROOT d = pred[] and(c, c)\n" },
    };
    for (size_t r = 0; r < sizeof roots / sizeof roots[0]; r++)
        for (int dim = 0; dim < 2; dim++) {
            Value *a = run_sort_f32("6,50", dim, roots[r].fast, x);
            Value *b = run_sort_f32("6,50", dim, roots[r].slow, x);
            if (!value_bits_equal(a, b))
                fail_msg("sort fast/slow differ: root %zu dim %d", r, dim);
            done(a);
            done(b);
        }
}

/* ------------------------------------------------------------------ */
/* Errors                                                               */

/* c64 has no order: the comparator fails, and the error comes back clean. */
static void test_sort_complex_is_unsupported(void **state)
{
    (void)state;
    static const float x[] = { 1, 0, 2, 0 };
    static const char *text =
        "HloModule m\n\nless {\n  a = c64[] parameter(0)\n  b = c64[] parameter(1)\n"
        "  ROOT c = pred[] compare(a, b), direction=LT\n}\n\n"
        "ENTRY e {\n  p = c64[2] parameter(0)\n"
        "  ROOT r = c64[2] sort(p), dimensions={0}, to_apply=less\n}\n";
    const void *params[] = { x };
    TestRun run;
    bool ok = test_run(&run, text, params);
    if (ok)
        fail_msg("sorting c64 succeeded");
    assert_true(run.err.code == ERR_UNSUPPORTED || run.err.code == ERR_SHAPE);
    test_run_free(&run);
}

/* A reduce-window whose declared result does not fit its window. */
static void test_reduce_window_bad_result_shape_is_an_error(void **state)
{
    (void)state;
    static const char *text =
        "HloModule m\n\n" COMP_ADD_F32
        "ENTRY e {\n  p = f32[4] parameter(0)\n  z = f32[] constant(0)\n"
        "  ROOT r = f32[7] reduce-window(p, z), window={size=2}, to_apply=add\n}\n";
    static const float x[] = { 1, 2, 3, 4 };
    const void *params[] = { x };
    TestRun run;
    assert_false(test_run(&run, text, params));
    assert_int_equal(run.err.code, ERR_SHAPE);
    test_run_free(&run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reduce_over_dim0),
        cmocka_unit_test(test_reduce_over_minor_dim),
        cmocka_unit_test(test_reduce_over_all_dims_in_any_listed_order),
        cmocka_unit_test(test_reduce_over_middle_dim_of_3d),
        cmocka_unit_test(test_reduce_over_middle_dims_of_4d_s32),
        cmocka_unit_test(test_reduce_u8_sum_wraps),
        cmocka_unit_test(test_reduce_variadic_argmax),
        cmocka_unit_test(test_reduce_f32_left_fold_order),
        cmocka_unit_test(test_reduce_grouped_rows_fold_in_order),
        cmocka_unit_test(test_reduce_over_leading_dims_folds_columns_in_order),
        cmocka_unit_test(test_reduce_bf16_rounds_every_step),
        cmocka_unit_test(test_reduce_fast_and_slow_paths_agree),
        cmocka_unit_test(test_reduce_bf16_fast_and_slow_paths_agree),
        cmocka_unit_test(test_reduce_f16_fast_and_slow_paths_agree),
        cmocka_unit_test(test_reduce_empty_gives_init),
        cmocka_unit_test(test_reduce_rank0),
        cmocka_unit_test(test_reduce_window_sum_stride_padding),
        cmocka_unit_test(test_reduce_window_max),
        cmocka_unit_test(test_reduce_window_dilations),
        cmocka_unit_test(test_reduce_window_fast_and_slow_paths_agree),
        cmocka_unit_test(test_reduce_window_variadic_argmax),
        cmocka_unit_test(test_map),
        cmocka_unit_test(test_map_one_operand),
        cmocka_unit_test(test_sort_ascending_and_descending),
        cmocka_unit_test(test_sort_2d_along_each_dim),
        cmocka_unit_test(test_sort_3d_along_middle_and_last_dim),
        cmocka_unit_test(test_sort_key_value_is_stable),
        cmocka_unit_test(test_sort_lexicographic_comparator),
        cmocka_unit_test(test_sort_total_order_places_nans),
        cmocka_unit_test(test_sort_fast_and_slow_paths_agree),
        cmocka_unit_test(test_sort_complex_is_unsupported),
        cmocka_unit_test(test_reduce_window_bad_result_shape_is_an_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
