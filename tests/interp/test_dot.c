/* test_dot.c: dot (src/interp/eval_dot.c) against a naive reference.
 *
 * Every case describes a dot by its operand dims and dimension numbers; the
 * test writes the HLO text, runs it through the interpreter, and computes
 * the expected result itself with a plain loop over output and contracting
 * indices, summing in double (floats) or exactly in int64 and wrapping
 * (integers).  Small integer-valued inputs make float sums exact, so those
 * cases compare bits; random inputs compare with a tight relative bound. */
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
/* A dot described by its dims                                          */

enum { MAXR = 8 };

typedef struct Spec {
    int lrank, rrank;
    int64_t ldims[MAXR], rdims[MAXR];
    int nb, nc;                     /* batch pairs, contracting pairs */
    int lb[MAXR], rb[MAXR], lc[MAXR], rc[MAXR];
    IrElemType lt, rt, ot;
} Spec;

static int64_t elems(const int64_t *dims, int rank)
{
    int64_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= dims[i];
    return n;
}

static bool in_list(const int *l, int n, int d)
{
    for (int i = 0; i < n; i++)
        if (l[i] == d)
            return true;
    return false;
}

/* Result dims: batch (lhs order), lhs free ascending, rhs free ascending. */
static int out_dims(const Spec *s, int64_t *dims)
{
    int n = 0;
    for (int i = 0; i < s->nb; i++)
        dims[n++] = s->ldims[s->lb[i]];
    for (int d = 0; d < s->lrank; d++)
        if (!in_list(s->lb, s->nb, d) && !in_list(s->lc, s->nc, d))
            dims[n++] = s->ldims[d];
    for (int d = 0; d < s->rrank; d++)
        if (!in_list(s->rb, s->nb, d) && !in_list(s->rc, s->nc, d))
            dims[n++] = s->rdims[d];
    return n;
}

static void put_shape(char *buf, size_t size, IrElemType t, const int64_t *dims, int rank)
{
    int len = snprintf(buf, size, "%s[", ir_type_name(t));
    for (int i = 0; i < rank; i++)
        len += snprintf(buf + len, size - (size_t)len, "%s%lld", i ? "," : "", (long long)dims[i]);
    snprintf(buf + len, size - (size_t)len, "]");
}

static void put_list(char *buf, size_t size, const char *name, const int *l, int n)
{
    int len = snprintf(buf, size, ", %s={", name);
    for (int i = 0; i < n; i++)
        len += snprintf(buf + len, size - (size_t)len, "%s%d", i ? "," : "", l[i]);
    snprintf(buf + len, size - (size_t)len, "}");
}

/* The HLO module computing the dot of parameters 0 and 1. */
static const char *module_text(const Spec *s)
{
    static char text[2048];
    char ls[128], rs[128], os[128], lb[64], rb[64], lc[64], rc[64];
    int64_t od[2 * MAXR];
    put_shape(ls, sizeof ls, s->lt, s->ldims, s->lrank);
    put_shape(rs, sizeof rs, s->rt, s->rdims, s->rrank);
    put_shape(os, sizeof os, s->ot, od, out_dims(s, od));
    put_list(lb, sizeof lb, "lhs_batch_dims", s->lb, s->nb);
    put_list(rb, sizeof rb, "rhs_batch_dims", s->rb, s->nb);
    put_list(lc, sizeof lc, "lhs_contracting_dims", s->lc, s->nc);
    put_list(rc, sizeof rc, "rhs_contracting_dims", s->rc, s->nc);
    snprintf(text, sizeof text,
             "HloModule m\n\nENTRY e {\n  a = %s parameter(0)\n  b = %s parameter(1)\n"
             "  ROOT d = %s dot(a, b)%s%s%s%s\n}\n",
             ls, rs, os, s->nb ? lb : "", s->nb ? rb : "", lc, rc);
    return text;
}

/* ------------------------------------------------------------------ */
/* Inputs                                                               */

static uint64_t rng_state = 88172645463325252ull;

static uint64_t rng_next(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Small integers in [-range, range]. */
static double small_int(int range)
{
    return (double)(int64_t)(rng_next() % (uint64_t)(2 * range + 1)) - range;
}

/* Uniform in [-1, 1). */
static double uniform(void)
{
    return (double)(rng_next() >> 11) * 0x1p-52 - 1.0;
}

/* A buffer of n elements of type t holding gen() (rounded to t). */
static void *make_input(IrElemType t, int64_t n, double (*gen)(void))
{
    int bytes = ir_type_storage_bytes(t);
    char *buf = calloc((size_t)(n ? n : 1), (size_t)bytes);
    for (int64_t i = 0; i < n; i++)
        ir_elem_set_f64(t, buf + i * bytes, gen());
    return buf;
}

static double small_int3(void) { return small_int(3); }
static double small_int9(void) { return small_int(9); }

/* ------------------------------------------------------------------ */
/* The naive reference                                                  */

/* Row-major linear index of coords in dims. */
static int64_t linear(const int64_t *dims, const int64_t *coords, int rank)
{
    int64_t at = 0;
    for (int i = 0; i < rank; i++)
        at = at * dims[i] + coords[i];
    return at;
}

/* Splits output index o into lhs and rhs coordinates (contracting left 0). */
static void split_output(const Spec *s, int64_t o, int64_t *lco, int64_t *rco)
{
    int64_t od[2 * MAXR], oc[2 * MAXR];
    int n = out_dims(s, od), j = 0;
    for (int i = n - 1; i >= 0; i--) {
        oc[i] = o % od[i];
        o /= od[i];
    }
    memset(lco, 0, MAXR * sizeof *lco);
    memset(rco, 0, MAXR * sizeof *rco);
    for (int i = 0; i < s->nb; i++, j++)
        lco[s->lb[i]] = rco[s->rb[i]] = oc[j];
    for (int d = 0; d < s->lrank; d++)
        if (!in_list(s->lb, s->nb, d) && !in_list(s->lc, s->nc, d))
            lco[d] = oc[j++];
    for (int d = 0; d < s->rrank; d++)
        if (!in_list(s->rb, s->nb, d) && !in_list(s->rc, s->nc, d))
            rco[d] = oc[j++];
}

/* Sets contracting coordinates from flat contracting index k. */
static void set_contracting(const Spec *s, int64_t k, int64_t *lco, int64_t *rco)
{
    for (int i = s->nc - 1; i >= 0; i--) {
        int64_t size = s->ldims[s->lc[i]];
        lco[s->lc[i]] = rco[s->rc[i]] = k % size;
        k /= size;
    }
}

static int64_t contracting_size(const Spec *s)
{
    int64_t k = 1;
    for (int i = 0; i < s->nc; i++)
        k *= s->ldims[s->lc[i]];
    return k;
}

/* out[o] = sum_k lhs * rhs in double; mag[o] = sum_k |lhs * rhs|. */
static void ref_dot_f64(const Spec *s, const void *lhs, const void *rhs, double *out, double *mag)
{
    int64_t od[2 * MAXR], lco[MAXR], rco[MAXR];
    int64_t n = elems(od, out_dims(s, od)), K = contracting_size(s);
    int lbytes = ir_type_storage_bytes(s->lt), rbytes = ir_type_storage_bytes(s->rt);
    for (int64_t o = 0; o < n; o++) {
        split_output(s, o, lco, rco);
        out[o] = mag[o] = 0;
        for (int64_t k = 0; k < K; k++) {
            set_contracting(s, k, lco, rco);
            double x = ir_elem_get_f64(s->lt, (const char *)lhs + lbytes * linear(s->ldims, lco, s->lrank));
            double y = ir_elem_get_f64(s->rt, (const char *)rhs + rbytes * linear(s->rdims, rco, s->rrank));
            out[o] += x * y;
            mag[o] += fabs(x * y);
        }
    }
}

/* The same for integers: exact in int64 (inputs are small). */
static void ref_dot_i64(const Spec *s, const void *lhs, const void *rhs, int64_t *out)
{
    int64_t od[2 * MAXR], lco[MAXR], rco[MAXR];
    int64_t n = elems(od, out_dims(s, od)), K = contracting_size(s);
    int lbytes = ir_type_storage_bytes(s->lt), rbytes = ir_type_storage_bytes(s->rt);
    for (int64_t o = 0; o < n; o++) {
        split_output(s, o, lco, rco);
        out[o] = 0;
        for (int64_t k = 0; k < K; k++) {
            set_contracting(s, k, lco, rco);
            int64_t x = ir_elem_get_i64(s->lt, (const char *)lhs + lbytes * linear(s->ldims, lco, s->lrank));
            int64_t y = ir_elem_get_i64(s->rt, (const char *)rhs + rbytes * linear(s->rdims, rco, s->rrank));
            out[o] += x * y;
        }
    }
}

/* ------------------------------------------------------------------ */
/* Running and checking                                                 */

static int64_t out_elems(const Spec *s)
{
    int64_t od[2 * MAXR];
    return elems(od, out_dims(s, od));
}

static Value *run_spec(TestRun *run, const Spec *s, const void *lhs, const void *rhs)
{
    const void *params[2] = { lhs, rhs };
    Value *v = test_run_ok(run, module_text(s), params);
    assert_int_equal(v->shape->type, s->ot);
    assert_int_equal(value_elements(v), out_elems(s));
    return v;
}

/* Float result: each element equals the double sum rounded once to the
 * result type (exact), or lies within rel_tol * sum|products| of it. */
static void check_float(const Spec *s, const void *lhs, const void *rhs, double rel_tol)
{
    int64_t n = out_elems(s);
    double *want = calloc((size_t)(n ? n : 1), sizeof *want), *mag = calloc((size_t)(n ? n : 1), sizeof *mag);
    ref_dot_f64(s, lhs, rhs, want, mag);
    TestRun run;
    Value *v = run_spec(&run, s, lhs, rhs);
    int bytes = ir_type_storage_bytes(s->ot);
    for (int64_t i = 0; i < n; i++) {
        double got = ir_elem_get_f64(s->ot, (const char *)v->data + bytes * i);
        char rounded[16];
        ir_elem_set_f64(s->ot, rounded, want[i]);
        double exact = ir_elem_get_f64(s->ot, rounded);
        if (rel_tol == 0 ? got != exact : fabs(got - want[i]) > rel_tol * mag[i] + 1e-30)
            fail_msg("element %lld: got %.17g, want %.17g (mag %g)", (long long)i, got, want[i], mag[i]);
    }
    test_run_free(&run);
    free(want);
    free(mag);
}

/* Integer result: the exact sum wrapped to the result type. */
static void check_int(const Spec *s, const void *lhs, const void *rhs)
{
    int64_t n = out_elems(s);
    int64_t *want = calloc((size_t)(n ? n : 1), sizeof *want);
    ref_dot_i64(s, lhs, rhs, want);
    TestRun run;
    Value *v = run_spec(&run, s, lhs, rhs);
    int bytes = ir_type_storage_bytes(s->ot);
    for (int64_t i = 0; i < n; i++) {
        char wrapped[8];
        ir_elem_set_i64(s->ot, wrapped, want[i]);
        int64_t w = ir_elem_get_i64(s->ot, wrapped);
        int64_t got = ir_elem_get_i64(s->ot, (const char *)v->data + bytes * i);
        if (got != w)
            fail_msg("element %lld: got %lld, want %lld", (long long)i, (long long)got, (long long)w);
    }
    test_run_free(&run);
    free(want);
}

/* Random-free inputs for s, checked against the reference. */
static void check_spec(const Spec *s, double (*gen)(void), double rel_tol)
{
    void *lhs = make_input(s->lt, elems(s->ldims, s->lrank), gen);
    void *rhs = make_input(s->rt, elems(s->rdims, s->rrank), gen);
    if (ir_type_is_float(s->ot))
        check_float(s, lhs, rhs, rel_tol);
    else
        check_int(s, lhs, rhs);
    free(lhs);
    free(rhs);
}

#define F32 IR_TYPE_F32
#define EXACT 0.0
#define TIGHT 1e-6      /* f32 sums of up to a few hundred terms */

/* ------------------------------------------------------------------ */
/* Shapes                                                               */

static void test_dot_matrix_matrix(void **state)
{
    (void)state;
    Spec s = { 2, 2, { 3, 4 }, { 4, 5 }, 0, 1, { 0 }, { 0 }, { 1 }, { 0 }, F32, F32, F32 };
    check_spec(&s, small_int9, EXACT);
}

static void test_dot_matrix_vector(void **state)
{
    (void)state;
    Spec s = { 2, 1, { 7, 5 }, { 5 }, 0, 1, { 0 }, { 0 }, { 1 }, { 0 }, F32, F32, F32 };
    check_spec(&s, small_int9, EXACT);
    Spec t = { 1, 2, { 5 }, { 5, 6 }, 0, 1, { 0 }, { 0 }, { 0 }, { 0 }, F32, F32, F32 };    /* vector-matrix */
    check_spec(&t, small_int9, EXACT);
}

static void test_dot_vector_vector_gives_scalar(void **state)
{
    (void)state;
    Spec s = { 1, 1, { 6 }, { 6 }, 0, 1, { 0 }, { 0 }, { 0 }, { 0 }, F32, F32, F32 };
    check_spec(&s, small_int9, EXACT);
}

static void test_dot_outer_product_without_contracting_dims(void **state)
{
    (void)state;
    Spec s = { 1, 2, { 3 }, { 2, 4 }, 0, 0, { 0 }, { 0 }, { 0 }, { 0 }, F32, F32, F32 };
    check_spec(&s, small_int9, EXACT);
}

static void test_dot_one_batch_dim(void **state)
{
    (void)state;
    Spec s = { 3, 3, { 2, 3, 4 }, { 2, 4, 5 }, 1, 1, { 0 }, { 0 }, { 2 }, { 1 }, F32, F32, F32 };
    check_spec(&s, small_int9, EXACT);
}

static void test_dot_two_batch_dims(void **state)
{
    (void)state;
    Spec s = { 4, 4, { 2, 3, 4, 5 }, { 2, 3, 5, 6 }, 2, 1, { 0, 1 }, { 0, 1 }, { 3 }, { 2 }, F32, F32, F32 };
    check_spec(&s, small_int9, EXACT);
}

/* Batch dims in the middle or last, and paired out of order. */
static void test_dot_batch_dims_anywhere(void **state)
{
    (void)state;
    Spec s = { 3, 3, { 3, 2, 4 }, { 4, 5, 2 }, 1, 1, { 1 }, { 2 }, { 2 }, { 0 }, F32, F32, F32 };
    check_spec(&s, small_int9, EXACT);
    Spec t = { 4, 4, { 2, 3, 4, 5 }, { 3, 5, 2, 6 }, 2, 1, { 1, 0 }, { 0, 2 }, { 3 }, { 1 }, F32, F32, F32 };
    check_spec(&t, small_int9, EXACT);
}

/* lhs stored [K,M] and rhs [N,K]: read transposed, no copy. */
static void test_dot_transposed_operands(void **state)
{
    (void)state;
    Spec s = { 2, 2, { 4, 3 }, { 5, 4 }, 0, 1, { 0 }, { 0 }, { 0 }, { 1 }, F32, F32, F32 };
    check_spec(&s, small_int9, EXACT);
    Spec t = { 3, 3, { 2, 4, 3 }, { 2, 5, 4 }, 1, 1, { 0 }, { 0 }, { 1 }, { 2 }, F32, F32, F32 };
    check_spec(&t, small_int9, EXACT);
}

/* Neither group of the lhs has unit stride ([M,K,B]): gathered, with the
 * blocked copy crossing several 32x32 tiles. */
static void test_dot_operand_needing_a_copy(void **state)
{
    (void)state;
    Spec s = { 3, 3, { 3, 4, 2 }, { 2, 4, 5 }, 1, 1, { 2 }, { 0 }, { 1 }, { 1 }, F32, F32, F32 };
    check_spec(&s, small_int9, EXACT);
    Spec t = { 3, 3, { 37, 41, 35 }, { 35, 41, 33 }, 1, 1, { 2 }, { 0 }, { 1 }, { 1 }, F32, F32, F32 };
    check_spec(&t, uniform, TIGHT);
}

static void test_dot_two_contracting_dims(void **state)
{
    (void)state;
    Spec s = { 3, 3, { 3, 4, 5 }, { 4, 5, 6 }, 0, 2, { 0 }, { 0 }, { 1, 2 }, { 0, 1 }, F32, F32, F32 };
    check_spec(&s, small_int9, EXACT);
    /* Pairs listed in reverse: sorting them avoids every copy. */
    Spec t = { 3, 3, { 3, 4, 5 }, { 4, 5, 6 }, 0, 2, { 0 }, { 0 }, { 2, 1 }, { 1, 0 }, F32, F32, F32 };
    check_spec(&t, small_int9, EXACT);
    /* Contracting dims interleaved with a free dim on the rhs: a gather. */
    Spec u = { 3, 3, { 3, 4, 5 }, { 4, 6, 5 }, 0, 2, { 0 }, { 0 }, { 1, 2 }, { 0, 2 }, F32, F32, F32 };
    check_spec(&u, small_int9, EXACT);
}

static void test_dot_random_f32_within_tolerance(void **state)
{
    (void)state;
    Spec s = { 2, 2, { 67, 130 }, { 130, 45 }, 0, 1, { 0 }, { 0 }, { 1 }, { 0 }, F32, F32, F32 };
    check_spec(&s, uniform, TIGHT);
    Spec t = { 3, 3, { 3, 40, 70 }, { 3, 50, 70 }, 1, 1, { 0 }, { 0 }, { 2 }, { 2 }, F32, F32, F32 };
    check_spec(&t, uniform, TIGHT);
}

/* ------------------------------------------------------------------ */
/* Element types                                                        */

static void test_dot_bf16_operands_f32_result(void **state)
{
    (void)state;
    Spec s = { 2, 2, { 5, 9 }, { 9, 4 }, 0, 1, { 0 }, { 0 }, { 1 }, { 0 }, IR_TYPE_BF16, IR_TYPE_BF16, F32 };
    check_spec(&s, small_int9, EXACT);
    Spec t = { 2, 2, { 20, 90 }, { 40, 90 }, 0, 1, { 0 }, { 0 }, { 1 }, { 1 }, IR_TYPE_BF16, IR_TYPE_BF16, F32 };
    check_spec(&t, uniform, TIGHT);
}

/* f16 operands become f32 through the element-wise codec, 256 at a time:
 * rows read in place (unit stride) and columns gathered first (the lhs
 * contracted over its dim 0, the rhs over its dim 1), rows and columns
 * longer than a block, f16 and f32 results. */
static void test_dot_f16_operands(void **state)
{
    (void)state;
    static const IrElemType outs[] = { IR_TYPE_F16, F32 };
    for (int o = 0; o < 2; o++) {
        IrElemType F16 = IR_TYPE_F16, ot = outs[o];
        Spec s = { 2, 2, { 7, 300 }, { 300, 5 }, 0, 1, { 0 }, { 0 }, { 1 }, { 0 }, F16, F16, ot };
        check_spec(&s, small_int3, EXACT);
        Spec t = { 2, 2, { 300, 9 }, { 6, 300 }, 0, 1, { 0 }, { 0 }, { 0 }, { 1 }, F16, F16, ot };
        check_spec(&t, small_int3, EXACT);
        Spec u = { 2, 2, { 520, 33 }, { 520, 4 }, 0, 1, { 0 }, { 0 }, { 0 }, { 0 }, F16, F16, ot };
        check_spec(&u, uniform, ot == F32 ? TIGHT : 1e-3);
    }
}

static double bf16_pattern(void)
{
    static int i;
    return i++ % 5 == 0 ? 1.0 : 0x1p-8;     /* 1, 2^-8, 2^-8, 2^-8, 2^-8, 1, ... */
}

/* 1 + 4 * 2^-8 = 1 + 2^-6 is a bf16, but adding 2^-8 to 1 in bf16 is a tie
 * that rounds back to 1: accumulating in bf16 would give 1. */
static void test_dot_bf16_result_rounded_once(void **state)
{
    (void)state;
    Spec s = { 1, 1, { 5 }, { 5 }, 0, 1, { 0 }, { 0 }, { 0 }, { 0 }, IR_TYPE_BF16, IR_TYPE_BF16, IR_TYPE_BF16 };
    uint16_t ones[5] = { 0x3f80, 0x3f80, 0x3f80, 0x3f80, 0x3f80 };
    void *lhs = make_input(IR_TYPE_BF16, 5, bf16_pattern);
    TestRun run;
    Value *v = run_spec(&run, &s, lhs, ones);
    uint16_t got;
    memcpy(&got, v->data, 2);
    assert_int_equal(got, 0x3f82);      /* 1 + 2^-6: exponent 127, mantissa 0b0000010 */
    test_run_free(&run);
    free(lhs);
    Spec t = { 2, 2, { 4, 6 }, { 6, 3 }, 0, 1, { 0 }, { 0 }, { 1 }, { 0 }, IR_TYPE_BF16, IR_TYPE_BF16, IR_TYPE_BF16 };
    check_spec(&t, small_int9, EXACT);
}

/* f32 operands of a bf16 dot are rounded to bf16 first (convert to the
 * result type), then summed in f32: 1 + 2^-8 is a tie that rounds to 1, so
 * the sum is 1 + 2^-8, another tie, giving 1.  Without the operand rounding
 * the sum would be 1 + 2^-7. */
static void test_dot_f32_operands_bf16_result_round_operands(void **state)
{
    (void)state;
    Spec s = { 1, 1, { 2 }, { 2 }, 0, 1, { 0 }, { 0 }, { 0 }, { 0 }, F32, F32, IR_TYPE_BF16 };
    float lhs[2] = { 1.0f + 0x1p-8f, 1.0f }, rhs[2] = { 1.0f, 0x1p-8f };
    TestRun run;
    Value *v = run_spec(&run, &s, lhs, rhs);
    uint16_t got;
    memcpy(&got, v->data, 2);
    assert_int_equal(got, 0x3f80);
    test_run_free(&run);
}

static void test_dot_f16_result(void **state)
{
    (void)state;
    Spec s = { 2, 2, { 3, 8 }, { 8, 2 }, 0, 1, { 0 }, { 0 }, { 1 }, { 0 }, IR_TYPE_F16, IR_TYPE_F16, IR_TYPE_F16 };
    check_spec(&s, small_int9, EXACT);
}

static void test_dot_f8_operands_f32_result(void **state)
{
    (void)state;
    Spec s = { 2, 2, { 3, 8 }, { 8, 2 }, 0, 1, { 0 }, { 0 }, { 1 }, { 0 }, IR_TYPE_F8E4M3FN, IR_TYPE_F8E5M2, F32 };
    check_spec(&s, small_int3, EXACT);
}

static double dyadic(void)
{
    return small_int(1000) / 64.0;
}

static void test_dot_f64(void **state)
{
    (void)state;
    Spec s = { 3, 3, { 2, 3, 7 }, { 2, 7, 4 }, 1, 1, { 0 }, { 0 }, { 2 }, { 1 }, IR_TYPE_F64, IR_TYPE_F64,
               IR_TYPE_F64 };
    check_spec(&s, dyadic, EXACT);
    Spec t = { 2, 2, { 33, 60 }, { 47, 60 }, 0, 1, { 0 }, { 0 }, { 1 }, { 1 }, IR_TYPE_F64, IR_TYPE_F64,
               IR_TYPE_F64 };
    check_spec(&t, uniform, 1e-14);
}

static void test_dot_s32_wraps_on_overflow(void **state)
{
    (void)state;
    Spec s = { 2, 2, { 1, 2 }, { 2, 1 }, 0, 1, { 0 }, { 0 }, { 1 }, { 0 }, IR_TYPE_S32, IR_TYPE_S32, IR_TYPE_S32 };
    int32_t lhs[2] = { 2147483647, 3 }, rhs[2] = { 2, 5 };
    TestRun run;
    Value *v = run_spec(&run, &s, lhs, rhs);
    int32_t got;
    memcpy(&got, v->data, 4);
    assert_int_equal(got, 13);      /* 4294967294 + 15 = 2^32 + 13 */
    test_run_free(&run);
}

static double big_s8(void)
{
    return rng_next() % 2 ? 127 : -128;
}

static void test_dot_s8_operands_s32_result(void **state)
{
    (void)state;
    Spec s = { 2, 2, { 3, 64 }, { 64, 5 }, 0, 1, { 0 }, { 0 }, { 1 }, { 0 }, IR_TYPE_S8, IR_TYPE_S8, IR_TYPE_S32 };
    check_spec(&s, big_s8, EXACT);
    Spec t = { 3, 3, { 2, 70, 3 }, { 2, 4, 70 }, 1, 1, { 0 }, { 0 }, { 1 }, { 2 }, IR_TYPE_S8, IR_TYPE_S8,
               IR_TYPE_S32 };
    check_spec(&t, small_int9, EXACT);
}

/* Narrow and wide integer results wrap modulo 2^bits. */
static void test_dot_integer_results_wrap(void **state)
{
    (void)state;
    Spec s = { 2, 2, { 4, 9 }, { 9, 3 }, 0, 1, { 0 }, { 0 }, { 1 }, { 0 }, IR_TYPE_S8, IR_TYPE_S8, IR_TYPE_S8 };
    check_spec(&s, big_s8, EXACT);
    Spec t = { 2, 2, { 2, 9 }, { 9, 3 }, 0, 1, { 0 }, { 0 }, { 1 }, { 0 }, IR_TYPE_U8, IR_TYPE_U8, IR_TYPE_U16 };
    check_spec(&t, big_s8, EXACT);
    Spec u = { 2, 2, { 2, 9 }, { 9, 3 }, 0, 1, { 0 }, { 0 }, { 1 }, { 0 }, IR_TYPE_S16, IR_TYPE_S16, IR_TYPE_S64 };
    check_spec(&u, big_s8, EXACT);
}

static void test_dot_c64(void **state)
{
    (void)state;
    Spec s = { 2, 2, { 2, 3 }, { 3, 2 }, 0, 1, { 0 }, { 0 }, { 1 }, { 0 }, IR_TYPE_C64, IR_TYPE_C64, IR_TYPE_C64 };
    /* lhs = [[1+i, 2, 0], [0, i, 1]], rhs = [[1, 0], [i, 1], [2, 1-i]] */
    float lhs[12] = { 1, 1, 2, 0, 0, 0, 0, 0, 0, 1, 1, 0 };
    float rhs[12] = { 1, 0, 0, 0, 0, 1, 1, 0, 2, 0, 1, -1 };
    float want[8] = { 1, 3, 2, 0, 1, 0, 1, 0 };     /* [[1+3i, 2], [1, 1]] */
    TestRun run;
    Value *v = run_spec(&run, &s, lhs, rhs);
    for (int i = 0; i < 8; i++)
        assert_true(((const float *)v->data)[i] == want[i]);
    test_run_free(&run);
}

/* Integer operands of a float dot are converted to it first (one rounding). */
static void test_dot_int_operands_float_result(void **state)
{
    (void)state;
    Spec s = { 2, 2, { 3, 6 }, { 6, 2 }, 0, 1, { 0 }, { 0 }, { 1 }, { 0 }, IR_TYPE_S32, IR_TYPE_U8, F32 };
    check_spec(&s, small_int9, EXACT);
    Spec t = { 1, 1, { 1 }, { 1 }, 0, 1, { 0 }, { 0 }, { 0 }, { 0 }, IR_TYPE_S32, IR_TYPE_S32, F32 };
    int32_t lhs[1] = { 16777217 }, rhs[1] = { 1 };     /* 2^24 + 1 rounds to 2^24 in f32 */
    TestRun run;
    Value *v = run_spec(&run, &t, lhs, rhs);
    assert_true(*(const float *)v->data == 16777216.0f);
    test_run_free(&run);
    /* 2^60 + 2^36 + 1 rounds up to 2^60 + 2^37 in f32; through f64 it would
     * lose the 1 first and then tie down to 2^60. */
    Spec u = { 1, 1, { 1 }, { 1 }, 0, 1, { 0 }, { 0 }, { 0 }, { 0 }, IR_TYPE_S64, IR_TYPE_S64, F32 };
    int64_t big[1] = { (1LL << 60) + (1LL << 36) + 1 }, one[1] = { 1 };
    v = run_spec(&run, &u, big, one);
    assert_true(*(const float *)v->data == 0x1p60f + 0x1p37f);
    test_run_free(&run);
}

/* Float operands of an integer dot convert as convert does: truncate toward
 * zero, saturate; then the integer sum wraps. */
static void test_dot_float_operands_int_result(void **state)
{
    (void)state;
    Spec s = { 1, 1, { 3 }, { 3 }, 0, 1, { 0 }, { 0 }, { 0 }, { 0 }, F32, F32, IR_TYPE_S32 };
    float lhs[3] = { 2.7f, -3.9f, 3e9f }, rhs[3] = { 3.5f, 1.0f, 2.0f };
    TestRun run;
    Value *v = run_spec(&run, &s, lhs, rhs);
    int32_t got;
    memcpy(&got, v->data, 4);
    assert_int_equal(got, 1);       /* 2*3 + (-3)*1 + 2147483647*2 = 2^32 + 1 */
    test_run_free(&run);
}

static void test_dot_f32_operands_f64_result(void **state)
{
    (void)state;
    Spec s = { 2, 2, { 9, 31 }, { 31, 7 }, 0, 1, { 0 }, { 0 }, { 1 }, { 0 }, F32, F32, IR_TYPE_F64 };
    check_spec(&s, uniform, 1e-14);
}

/* f64 operand laid out [M,K,B]: an 8-byte gather. */
static void test_dot_f64_operand_needing_a_copy(void **state)
{
    (void)state;
    Spec s = { 3, 3, { 5, 6, 3 }, { 3, 6, 4 }, 1, 1, { 2 }, { 0 }, { 1 }, { 1 }, IR_TYPE_F64, IR_TYPE_F64,
               IR_TYPE_F64 };
    check_spec(&s, dyadic, EXACT);
}

static void test_dot_c128(void **state)
{
    (void)state;
    Spec s = { 2, 2, { 2, 3 }, { 3, 2 }, 0, 1, { 0 }, { 0 }, { 1 }, { 0 }, IR_TYPE_C128, IR_TYPE_C128,
               IR_TYPE_C128 };
    double lhs[12] = { 1, 1, 2, 0, 0, 0, 0, 0, 0, 1, 1, 0 };
    double rhs[12] = { 1, 0, 0, 0, 0, 1, 1, 0, 2, 0, 1, -1 };
    double want[8] = { 1, 3, 2, 0, 1, 0, 1, 0 };
    TestRun run;
    Value *v = run_spec(&run, &s, lhs, rhs);
    for (int i = 0; i < 8; i++)
        assert_true(((const double *)v->data)[i] == want[i]);
    test_run_free(&run);
}

/* Complex reference: out[2o], out[2o+1] = re, im of sum lhs * rhs, the
 * operands read as (re, im) pairs of f32 (c64) or f64 (c128). */
static void ref_dot_complex(const Spec *s, const void *lhs, const void *rhs, double *out)
{
    int64_t od[2 * MAXR], lco[MAXR], rco[MAXR];
    int64_t n = elems(od, out_dims(s, od)), K = contracting_size(s);
    IrElemType part = s->ot == IR_TYPE_C64 ? F32 : IR_TYPE_F64;
    int pb = ir_type_storage_bytes(part);
    for (int64_t o = 0; o < n; o++) {
        split_output(s, o, lco, rco);
        out[2 * o] = out[2 * o + 1] = 0;
        for (int64_t k = 0; k < K; k++) {
            set_contracting(s, k, lco, rco);
            const char *x = (const char *)lhs + 2 * pb * linear(s->ldims, lco, s->lrank);
            const char *y = (const char *)rhs + 2 * pb * linear(s->rdims, rco, s->rrank);
            double a = ir_elem_get_f64(part, x), b = ir_elem_get_f64(part, x + pb);
            double c = ir_elem_get_f64(part, y), d = ir_elem_get_f64(part, y + pb);
            out[2 * o] += a * c - b * d;
            out[2 * o + 1] += a * d + b * c;
        }
    }
}

/* Complex operands that need a gather (batch dim last): 8- and 16-byte copies. */
static void test_dot_complex_operand_needing_a_copy(void **state)
{
    (void)state;
    for (int t = 0; t < 2; t++) {
        IrElemType ct = t ? IR_TYPE_C128 : IR_TYPE_C64, part = t ? IR_TYPE_F64 : F32;
        Spec s = { 3, 3, { 3, 4, 2 }, { 2, 4, 5 }, 1, 1, { 2 }, { 0 }, { 1 }, { 1 }, ct, ct, ct };
        void *lhs = make_input(part, 2 * 24, small_int3), *rhs = make_input(part, 2 * 40, small_int3);
        double want[2 * 30];
        ref_dot_complex(&s, lhs, rhs, want);
        TestRun run;
        Value *v = run_spec(&run, &s, lhs, rhs);
        for (int i = 0; i < 60; i++)
            assert_true(ir_elem_get_f64(part, (const char *)v->data + i * ir_type_storage_bytes(part)) == want[i]);
        test_run_free(&run);
        free(lhs);
        free(rhs);
    }
}

/* Size-1 dims anywhere, and rank-0 operands. */
static void test_dot_unit_dims_and_scalars(void **state)
{
    (void)state;
    Spec s = { 4, 3, { 1, 3, 1, 4 }, { 4, 1, 5 }, 0, 1, { 0 }, { 0 }, { 3 }, { 0 }, F32, F32, F32 };
    check_spec(&s, small_int9, EXACT);
    Spec t = { 3, 3, { 3, 1, 4 }, { 1, 4, 2 }, 0, 2, { 0 }, { 0 }, { 1, 2 }, { 0, 1 }, F32, F32, F32 };
    check_spec(&t, small_int9, EXACT);
    Spec u = { 0, 0, { 0 }, { 0 }, 0, 0, { 0 }, { 0 }, { 0 }, { 0 }, IR_TYPE_S32, IR_TYPE_S32, IR_TYPE_S32 };
    check_spec(&u, small_int9, EXACT);
    Spec v = { 0, 1, { 0 }, { 5 }, 0, 0, { 0 }, { 0 }, { 0 }, { 0 }, F32, F32, F32 };
    check_spec(&v, small_int9, EXACT);
}

/* ------------------------------------------------------------------ */
/* Degenerate sizes, errors, determinism                                */

static void test_dot_empty_contraction_gives_zeros(void **state)
{
    (void)state;
    Spec s = { 2, 2, { 3, 0 }, { 0, 4 }, 0, 1, { 0 }, { 0 }, { 1 }, { 0 }, F32, F32, F32 };
    check_spec(&s, small_int9, EXACT);
    Spec t = { 2, 2, { 3, 0 }, { 0, 4 }, 0, 1, { 0 }, { 0 }, { 1 }, { 0 }, IR_TYPE_S8, IR_TYPE_S8, IR_TYPE_S32 };
    check_spec(&t, small_int9, EXACT);
    Spec u = { 2, 2, { 3, 0 }, { 0, 4 }, 0, 1, { 0 }, { 0 }, { 1 }, { 0 }, IR_TYPE_BF16, IR_TYPE_BF16,
               IR_TYPE_BF16 };
    check_spec(&u, small_int9, EXACT);
}

static void test_dot_empty_result(void **state)
{
    (void)state;
    Spec s = { 2, 2, { 0, 4 }, { 4, 5 }, 0, 1, { 0 }, { 0 }, { 1 }, { 0 }, F32, F32, F32 };
    check_spec(&s, small_int9, EXACT);
    Spec t = { 3, 3, { 0, 2, 4 }, { 0, 4, 5 }, 1, 1, { 0 }, { 0 }, { 2 }, { 1 }, F32, F32, F32 };
    check_spec(&t, small_int9, EXACT);
    Spec u = { 2, 2, { 3, 4 }, { 4, 0 }, 0, 1, { 0 }, { 0 }, { 1 }, { 0 }, IR_TYPE_S32, IR_TYPE_S32, IR_TYPE_S32 };
    check_spec(&u, small_int9, EXACT);
}

/* NaN and inf propagate as IEEE says: NaN * 0 and inf * 0 are NaN. */
static void test_dot_propagates_nan_and_inf(void **state)
{
    (void)state;
    Spec s = { 2, 2, { 2, 2 }, { 2, 2 }, 0, 1, { 0 }, { 0 }, { 1 }, { 0 }, F32, F32, F32 };
    float lhs[4] = { NAN, 1, INFINITY, 0 }, rhs[4] = { 1, 0, 0, 1 };
    TestRun run;
    const float *got = run_spec(&run, &s, lhs, rhs)->data;
    assert_true(isnan(got[0]) && isnan(got[1]) && isnan(got[3]));
    assert_true(got[2] == INFINITY);
    test_run_free(&run);
}

static void test_dot_pred_is_unsupported(void **state)
{
    (void)state;
    Spec s = { 2, 2, { 2, 2 }, { 2, 2 }, 0, 1, { 0 }, { 0 }, { 1 }, { 0 }, IR_TYPE_PRED, IR_TYPE_PRED,
               IR_TYPE_PRED };
    uint8_t a[4] = { 1, 0, 1, 1 }, b[4] = { 0, 1, 1, 0 };
    const void *params[2] = { a, b };
    TestRun run;
    assert_false(test_run(&run, module_text(&s), params));
    assert_int_equal(run.err.code, ERR_UNSUPPORTED);
    assert_int_equal(run.err.loc.line, 6);
    assert_non_null(strstr(run.err.msg, "pred"));
    test_run_free(&run);
}

static void test_dot_same_dot_twice_gives_same_bits(void **state)
{
    (void)state;
    Spec s = { 2, 2, { 150, 300 }, { 300, 170 }, 0, 1, { 0 }, { 0 }, { 1 }, { 0 }, F32, F32, F32 };
    void *lhs = make_input(F32, 150 * 300, uniform), *rhs = make_input(F32, 300 * 170, uniform);
    TestRun r1, r2;
    Value *a = run_spec(&r1, &s, lhs, rhs);
    Value *b = run_spec(&r2, &s, lhs, rhs);
    assert_true(value_bits_equal(a, b));
    test_run_free(&r1);
    test_run_free(&r2);
    free(lhs);
    free(rhs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dot_matrix_matrix),
        cmocka_unit_test(test_dot_matrix_vector),
        cmocka_unit_test(test_dot_vector_vector_gives_scalar),
        cmocka_unit_test(test_dot_outer_product_without_contracting_dims),
        cmocka_unit_test(test_dot_one_batch_dim),
        cmocka_unit_test(test_dot_two_batch_dims),
        cmocka_unit_test(test_dot_batch_dims_anywhere),
        cmocka_unit_test(test_dot_transposed_operands),
        cmocka_unit_test(test_dot_operand_needing_a_copy),
        cmocka_unit_test(test_dot_two_contracting_dims),
        cmocka_unit_test(test_dot_random_f32_within_tolerance),
        cmocka_unit_test(test_dot_bf16_operands_f32_result),
        cmocka_unit_test(test_dot_f16_operands),
        cmocka_unit_test(test_dot_bf16_result_rounded_once),
        cmocka_unit_test(test_dot_f32_operands_bf16_result_round_operands),
        cmocka_unit_test(test_dot_f16_result),
        cmocka_unit_test(test_dot_f8_operands_f32_result),
        cmocka_unit_test(test_dot_f64),
        cmocka_unit_test(test_dot_s32_wraps_on_overflow),
        cmocka_unit_test(test_dot_s8_operands_s32_result),
        cmocka_unit_test(test_dot_integer_results_wrap),
        cmocka_unit_test(test_dot_c64),
        cmocka_unit_test(test_dot_int_operands_float_result),
        cmocka_unit_test(test_dot_float_operands_int_result),
        cmocka_unit_test(test_dot_f32_operands_f64_result),
        cmocka_unit_test(test_dot_f64_operand_needing_a_copy),
        cmocka_unit_test(test_dot_c128),
        cmocka_unit_test(test_dot_complex_operand_needing_a_copy),
        cmocka_unit_test(test_dot_unit_dims_and_scalars),
        cmocka_unit_test(test_dot_empty_contraction_gives_zeros),
        cmocka_unit_test(test_dot_empty_result),
        cmocka_unit_test(test_dot_propagates_nan_and_inf),
        cmocka_unit_test(test_dot_pred_is_unsupported),
        cmocka_unit_test(test_dot_same_dot_twice_gives_same_bits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
