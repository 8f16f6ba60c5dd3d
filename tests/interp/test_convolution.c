/* test_convolution.c: convolution (src/interp/eval_convolution.c).
 *
 * Small cases worked by hand (every window feature, both group counts, 0
 * spatial dims, each float type, complex, wrapping integers), then large
 * random convolutions (several im2col chunks, the in-place and the
 * buffered output paths) against a naive loop written here from XLA's
 * definition, summing in double. */
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

/* The module convolution(x, k) -> out with the given attributes. */
static const char *conv_module(const char *x, const char *k, const char *out, const char *attrs)
{
    static char text[1024];
    snprintf(text, sizeof text,
             "HloModule m\n\nENTRY e {\n  x = %s parameter(0)\n  k = %s parameter(1)\n"
             "  ROOT c = %s convolution(x, k), %s\n}\n", x, k, out, attrs);
    return text;
}

/* Runs an f32 convolution and compares its result bit for bit. */
static void expect_f32(const char *x, const float *xv, const char *k, const float *kv, const char *out,
                       const char *attrs, const float *want, int64_t n)
{
    TestRun run;
    const void *params[] = { xv, kv };
    assert_f32_array(test_run_ok(&run, conv_module(x, k, out, attrs), params), want, n);
    test_run_free(&run);
}

/* ------------------------------------------------------------------ */
/* By hand: one spatial dim, x = 1 2 3 4, kernel taps 1 10               */

static const float x4[] = { 1, 2, 3, 4 }, k2[] = { 1, 10 };

static void test_conv_1d_valid(void **state)
{
    (void)state;
    const float want[] = { 21, 32, 43 };        /* x[i] + 10 x[i+1] */
    expect_f32("f32[1,4,1]", x4, "f32[2,1,1]", k2, "f32[1,3,1]", "window={size=2}, dim_labels=b0f_0io->b0f", want,
               3);
}

static void test_conv_1d_padding_and_stride(void **state)
{
    (void)state;
    const float padded[] = { 10, 21, 32, 43, 4 };    /* 0 1 2 3 4 0 */
    expect_f32("f32[1,4,1]", x4, "f32[2,1,1]", k2, "f32[1,5,1]", "window={size=2 pad=1_1}, dim_labels=b0f_0io->b0f",
               padded, 5);
    const float strided[] = { 10, 32, 4 };
    expect_f32("f32[1,4,1]", x4, "f32[2,1,1]", k2, "f32[1,3,1]",
               "window={size=2 stride=2 pad=1_1}, dim_labels=b0f_0io->b0f", strided, 3);
    const float cut[] = { 32, 43 };                  /* negative padding drops x[0] */
    expect_f32("f32[1,4,1]", x4, "f32[2,1,1]", k2, "f32[1,2,1]", "window={size=2 pad=-1_0}, dim_labels=b0f_0io->b0f",
               cut, 2);
}

/* Padding and dilation holes add nothing, even against an inf or NaN in the
 * kernel (operation_semantics' pseudo-code skips them; 0 x inf would be
 * NaN), while a real element, zero included, meets it.  Kernel taps inf, 1,
 * 1 over x = 1 2 3 4 padded by one each side: position 0's inf tap reads
 * padding (1 + 2 = 3), every other position's inf tap a real element. */
static void test_conv_holes_skip_nonfinite_kernel(void **state)
{
    (void)state;
    const float k3[] = { INFINITY, 1, 1 };
    const float padded[] = { 3, INFINITY, INFINITY, INFINITY };
    expect_f32("f32[1,4,1]", x4, "f32[3,1,1]", k3, "f32[1,4,1]", "window={size=3 pad=1_1}, dim_labels=b0f_0io->b0f",
               padded, 4);
    const float z4[] = { 0, 2, 3, 4 }, nan_k[] = { NAN, 1, 1 };
    TestRun run;
    const void *params[] = { z4, nan_k };
    const float *got = test_run_ok(&run, conv_module("f32[1,4,1]", "f32[3,1,1]", "f32[1,4,1]",
                                                     "window={size=3 pad=1_1}, dim_labels=b0f_0io->b0f"),
                                   params)->data;
    assert_true(got[0] == 2 && isnan(got[1]) && isnan(got[2]) && isnan(got[3]));    /* 0 x NaN is NaN */
    test_run_free(&run);
    /* lhs_dilate=2: over 1 _ 2 _ 3 _ 4 the middle tap (inf) lands on a hole
     * at odd positions: 1 + 2 = 3, 2 + 3 = 5, 3 + 4 = 7 there. */
    const float kd[] = { 1, INFINITY, 1 };
    const float dil[] = { INFINITY, 3, INFINITY, 5, INFINITY, 7, INFINITY };
    expect_f32("f32[1,4,1]", x4, "f32[3,1,1]", kd, "f32[1,7,1]",
               "window={size=3 pad=1_1 lhs_dilate=2}, dim_labels=b0f_0io->b0f", dil, 7);
}

static void test_conv_1d_lhs_dilate_is_transposed(void **state)
{
    (void)state;
    const float want[] = { 1, 20, 2, 30, 3, 40 };    /* over 1 0 2 0 3 0 4 */
    expect_f32("f32[1,4,1]", x4, "f32[2,1,1]", k2, "f32[1,6,1]",
               "window={size=2 lhs_dilate=2}, dim_labels=b0f_0io->b0f", want, 6);
}

static void test_conv_1d_rhs_dilate_and_reversal(void **state)
{
    (void)state;
    const float atrous[] = { 31, 42 };               /* x[i] + 10 x[i+2] */
    expect_f32("f32[1,4,1]", x4, "f32[2,1,1]", k2, "f32[1,2,1]",
               "window={size=2 rhs_dilate=2}, dim_labels=b0f_0io->b0f", atrous, 2);
    const float reversed[] = { 12, 23, 34 };         /* 10 x[i] + x[i+1] */
    expect_f32("f32[1,4,1]", x4, "f32[2,1,1]", k2, "f32[1,3,1]",
               "window={size=2 rhs_reversal=1}, dim_labels=b0f_0io->b0f", reversed, 3);
}

/* NCHW input 1x2x2x2, OIHW kernel 1x2x2x1: each output sums a 2x1 column
 * of both channels. */
static void test_conv_2d_nchw(void **state)
{
    (void)state;
    const float x[] = { 1, 2, 3, 4, /* channel 1 */ 10, 20, 30, 40 }, k[] = { 1, 1, /* channel 1 */ 2, 2 };
    const float want[] = { 1 + 3 + 20 + 60, 2 + 4 + 40 + 80 };
    expect_f32("f32[1,2,2,2]", x, "f32[1,2,2,1]", k, "f32[1,1,1,2]", "window={size=2x1}, dim_labels=bf01_oi01->bf01",
               want, 2);
}

static void test_conv_feature_groups(void **state)
{
    (void)state;
    /* two features, two groups of one: output feature g sees feature g only */
    const float x[] = { 1, 2, 3, 4 }, k[] = { 3, 5 };   /* x [1,2 positions,2 features]; k [1,1,2] */
    const float want[] = { 3, 10, 9, 20 };
    expect_f32("f32[1,2,2]", x, "f32[1,1,2]", k, "f32[1,2,2]",
               "window={size=1}, dim_labels=b0f_0io->b0f, feature_group_count=2", want, 4);
}

static void test_conv_batch_groups(void **state)
{
    (void)state;
    /* batch 2 in two groups: output feature g sums over input batch g */
    const float x[] = { 1, 2, /* batch 1 */ 3, 4 }, k[] = { 3, 5, /* tap 1 */ 7, 11 };   /* x [2,2,1]; k [2,1,2] */
    const float want[] = { 1 * 3 + 2 * 7, 3 * 5 + 4 * 11 };
    expect_f32("f32[2,2,1]", x, "f32[2,1,2]", k, "f32[1,1,2]",
               "window={size=2}, dim_labels=b0f_0io->b0f, batch_group_count=2", want, 2);
}

/* No spatial dims and no window: a matrix product. */
static void test_conv_0d_is_a_matmul(void **state)
{
    (void)state;
    const float x[] = { 1, 2, 3, 4 }, k[] = { 1, 2, 3, 4 };
    const float want[] = { 7, 10, 15, 22 };
    expect_f32("f32[2,2]", x, "f32[2,2]", k, "f32[2,2]", "dim_labels=bf_io->bf", want, 4);
}

/* A window that never fits gives an empty result; no input features give zeros. */
static void test_conv_empty_window_and_features(void **state)
{
    (void)state;
    TestRun run;
    const float ones[8] = { 1, 1, 1, 1, 1, 1, 1, 1 };
    const void *params[] = { x4, ones };
    Value *v = test_run_ok(&run, conv_module("f32[1,1,4]", "f32[2,4,1]", "f32[1,0,1]",
                                             "window={size=2}, dim_labels=b0f_0io->b0f"), params);
    assert_int_equal(value_elements(v), 0);
    test_run_free(&run);
    const float none[1] = { 0 }, zeros[3] = { 0, 0, 0 };
    const void *empty[] = { none, none };
    v = test_run_ok(&run, conv_module("f32[1,4,0]", "f32[2,0,1]", "f32[1,3,1]",
                                      "window={size=2}, dim_labels=b0f_0io->b0f"), empty);
    assert_f32_array(v, zeros, 3);
    test_run_free(&run);
    /* a 2^40 window over no features: one empty sum, nothing allocated for the window */
    v = test_run_ok(&run, conv_module("f32[1,1,0]", "f32[1099511627776,0,1]", "f32[1,1,1]",
                                      "window={size=1099511627776 pad=1099511627775_0}, dim_labels=b0f_0io->b0f"),
                    empty);
    assert_f32_array(v, zeros, 1);
    test_run_free(&run);
}

/* ------------------------------------------------------------------ */
/* By hand: types                                                       */

static void test_conv_f64(void **state)
{
    (void)state;
    const double x[] = { 1, 0x1p-40, 3 }, k[] = { 1, 1 }, want[] = { 1 + 0x1p-40, 3 + 0x1p-40 };
    TestRun run;
    const void *params[] = { x, k };
    Value *v = test_run_ok(&run, conv_module("f64[1,3,1]", "f64[2,1,1]", "f64[1,2,1]",
                                             "window={size=2}, dim_labels=b0f_0io->b0f"), params);
    assert_memory_equal(v->data, want, sizeof want);   /* 2^-40 is lost in f32 */
    test_run_free(&run);
}

/* 1 + 2^-9 + 2^-9 summed in f32 is 1 + 2^-8, a bf16 (and an f16): rounding
 * after every step would give 1 (ties to even). */
static void test_conv_narrow_floats_round_once(void **state)
{
    (void)state;
    static const IrElemType types[] = { IR_TYPE_BF16, IR_TYPE_F16 };
    for (int t = 0; t < 2; t++) {
        uint16_t x[3], k[3], want;
        const double xv[] = { 1, 0x1p-9, 0x1p-9 };
        for (int i = 0; i < 3; i++) {
            ir_elem_set_f64(types[t], &x[i], xv[i]);
            ir_elem_set_f64(types[t], &k[i], 1);
        }
        ir_elem_set_f64(types[t], &want, 1 + 0x1p-8);
        char xs[32], ks[32], os[32];
        snprintf(xs, sizeof xs, "%s[1,3]", ir_type_name(types[t]));
        snprintf(ks, sizeof ks, "%s[3,1]", ir_type_name(types[t]));
        snprintf(os, sizeof os, "%s[1,1]", ir_type_name(types[t]));
        TestRun run;
        const void *params[] = { x, k };
        Value *v = test_run_ok(&run, conv_module(xs, ks, os, "dim_labels=bf_io->bf"), params);
        assert_int_equal(*(const uint16_t *)v->data, want);
        test_run_free(&run);
    }
}

static void test_conv_bf16_to_f32(void **state)
{
    (void)state;
    uint16_t x[2], k[2];
    for (int i = 0; i < 2; i++) {
        x[i] = ir_f32_to_bf16(i ? 0x1p-20f : 1.0f);
        k[i] = ir_f32_to_bf16(1.0f);
    }
    const float want[] = { 1.0f + 0x1p-20f };       /* kept in the f32 result */
    TestRun run;
    const void *params[] = { x, k };
    assert_f32_array(test_run_ok(&run, conv_module("bf16[1,2]", "bf16[2,1]", "f32[1,1]", "dim_labels=bf_io->bf"),
                                 params), want, 1);
    test_run_free(&run);
}

static void test_conv_c64(void **state)
{
    (void)state;
    const float x[] = { 1, 2, 0, 1 }, k[] = { 3, 4, 2, 0 };    /* (1+2i)(3+4i) + i*2 = -5+12i */
    const float want[] = { -5, 12 };
    TestRun run;
    const void *params[] = { x, k };
    Value *v = test_run_ok(&run, conv_module("c64[1,2]", "c64[2,1]", "c64[1,1]", "dim_labels=bf_io->bf"), params);
    assert_memory_equal(v->data, want, sizeof want);
    test_run_free(&run);
}

static void test_conv_integers_wrap(void **state)
{
    (void)state;
    const int32_t x[] = { 65536, 1, 7 }, k[] = { 65536, 1 };
    const int32_t want32[] = { 1, 65536 + 7 };     /* 2^32 + 1 wraps to 1 */
    TestRun run;
    const void *params[] = { x, k };
    Value *v = test_run_ok(&run, conv_module("s32[1,3,1]", "s32[2,1,1]", "s32[1,2,1]",
                                             "window={size=2}, dim_labels=b0f_0io->b0f"), params);
    assert_s32_array(v, want32, 2);
    test_run_free(&run);
    const int8_t x8[] = { 100, 100 }, k8[] = { 1, 1 };
    const void *p8[] = { x8, k8 };
    v = test_run_ok(&run, conv_module("s8[1,2]", "s8[2,1]", "s8[1,1]", "dim_labels=bf_io->bf"), p8);
    assert_int_equal(*(const int8_t *)v->data, -56);     /* 200 wraps; XLA's evaluator would saturate */
    test_run_free(&run);
    v = test_run_ok(&run, conv_module("s8[1,2]", "s8[2,1]", "s32[1,1]", "dim_labels=bf_io->bf"), p8);
    assert_int_equal(*(const int32_t *)v->data, 200);    /* widened first */
    test_run_free(&run);
}

static void test_conv_reports_unsupported(void **state)
{
    (void)state;
    const float x[] = { 1, 2 }, k[] = { 1, 2 };
    const void *params[] = { x, k };
    TestRun run;
    assert_false(test_run(&run, conv_module("f32[1,2]", "f32[2,1]", "f32[1,1]",
                                            "dim_labels=bf_io->bf, operand_precision={packed_nibble,packed_nibble}"),
                          params));
    assert_int_equal(run.err.code, ERR_UNSUPPORTED);
    test_run_free(&run);
    const uint8_t p[] = { 1, 1 };
    const void *preds[] = { p, p };
    assert_false(test_run(&run, conv_module("pred[1,2]", "pred[2,1]", "pred[1,1]", "dim_labels=bf_io->bf"), preds));
    assert_int_equal(run.err.code, ERR_UNSUPPORTED);
    test_run_free(&run);
}

/* ------------------------------------------------------------------ */
/* Large random convolutions against a naive loop                       */

enum { NS = 2 };    /* spatial dims of the large cases */

typedef struct Big {
    const char *labels;             /* dim_labels */
    int64_t batch, features, spatial[NS], kout;
    int64_t size[NS], stride[NS], lo[NS], hi[NS], lhs_dilate[NS], rhs_dilate[NS];
    bool reversal[NS];
    int64_t fgc, bgc;
} Big;

/* Where role a, role b and digits 0.. sit in one part of the labels. */
static void label_dims(const char *part, char a, char b, int *da, int *db, int *ds)
{
    for (int i = 0; i < NS + 2; i++) {
        if (part[i] == a)
            *da = i;
        else if (part[i] == b)
            *db = i;
        else
            ds[part[i] - '0'] = i;
    }
}

typedef struct Dims {
    int ib, if_, is[NS], ko, ki, ks[NS], ob, of, os[NS];
    int64_t in[NS + 2], ker[NS + 2], out[NS + 2];
} Dims;

static int64_t out_size(const Big *c, int s)
{
    int64_t base = (c->spatial[s] - 1) * c->lhs_dilate[s] + 1, win = (c->size[s] - 1) * c->rhs_dilate[s] + 1;
    int64_t padded = c->lo[s] + base + c->hi[s];
    return padded < win ? 0 : (padded - win) / c->stride[s] + 1;
}

static void big_dims(const Big *c, Dims *d)
{
    label_dims(c->labels, 'b', 'f', &d->ib, &d->if_, d->is);
    label_dims(c->labels + NS + 3, 'o', 'i', &d->ko, &d->ki, d->ks);
    label_dims(strstr(c->labels, "->") + 2, 'b', 'f', &d->ob, &d->of, d->os);
    d->in[d->ib] = c->batch, d->in[d->if_] = c->features;
    d->ker[d->ko] = c->kout, d->ker[d->ki] = c->features / c->fgc;
    d->out[d->ob] = c->batch / c->bgc, d->out[d->of] = c->kout;
    for (int s = 0; s < NS; s++) {
        d->in[d->is[s]] = c->spatial[s];
        d->ker[d->ks[s]] = c->size[s];
        d->out[d->os[s]] = out_size(c, s);
    }
}

static int64_t at(const int64_t *dims, const int64_t *idx)
{
    int64_t off = 0;
    for (int i = 0; i < NS + 2; i++)
        off = off * dims[i] + idx[i];
    return off;
}

static void shape_text(char *buf, size_t size, const int64_t *dims)
{
    snprintf(buf, size, "f32[%lld,%lld,%lld,%lld]", (long long)dims[0], (long long)dims[1], (long long)dims[2],
             (long long)dims[3]);
}

/* One output element by the definition: ref[o] and sum |terms| in mag[o]. */
static void ref_element(const Big *c, const Dims *d, const float *x, const float *k, const int64_t *oi,
                        double *ref, double *mag)
{
    int64_t og = c->kout / (c->fgc * c->bgc), ki = c->features / c->fgc, o = oi[d->of], g = o / og;
    int64_t w[NS], xi[NS + 2], kk[NS + 2];
    *ref = *mag = 0;
    for (w[0] = 0; w[0] < c->size[0]; w[0]++)
        for (w[1] = 0; w[1] < c->size[1]; w[1]++) {
            bool hit = true;
            for (int s = 0; s < NS; s++) {
                int64_t u = oi[d->os[s]] * c->stride[s] + w[s] * c->rhs_dilate[s] - c->lo[s];
                hit = hit && u >= 0 && u % c->lhs_dilate[s] == 0 && u / c->lhs_dilate[s] < c->spatial[s];
                xi[d->is[s]] = hit ? u / c->lhs_dilate[s] : 0;
                kk[d->ks[s]] = c->reversal[s] ? c->size[s] - 1 - w[s] : w[s];
            }
            for (int64_t i = 0; hit && i < ki; i++) {
                xi[d->ib] = oi[d->ob] + (c->bgc > 1 ? g * (c->batch / c->bgc) : 0);
                xi[d->if_] = (c->fgc > 1 ? g * ki : 0) + i;
                kk[d->ko] = o, kk[d->ki] = i;
                double t = (double)x[at(d->in, xi)] * (double)k[at(d->ker, kk)];
                *ref += t;
                *mag += fabs(t);
            }
        }
}

static float *random_floats(int64_t n, uint32_t seed)
{
    float *p = malloc((size_t)n * sizeof *p);
    for (int64_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        p[i] = (float)(seed >> 8) / 8388608.0f - 1.0f;
    }
    return p;
}

/* Runs the case on random data and checks every element within the f32
 * summation bound (K+1) 2^-24 sum|terms|; returns the result's bytes. */
static void *check_big(const Big *c)
{
    Dims d;
    big_dims(c, &d);
    char xs[64], ks[64], os[64], attrs[400];
    shape_text(xs, sizeof xs, d.in);
    shape_text(ks, sizeof ks, d.ker);
    shape_text(os, sizeof os, d.out);
    snprintf(attrs, sizeof attrs,
             "window={size=%lldx%lld stride=%lldx%lld pad=%lld_%lldx%lld_%lld lhs_dilate=%lldx%lld rhs_dilate=%lldx%lld "
             "rhs_reversal=%dx%d}, dim_labels=%s, feature_group_count=%lld, batch_group_count=%lld",
             (long long)c->size[0], (long long)c->size[1], (long long)c->stride[0], (long long)c->stride[1],
             (long long)c->lo[0], (long long)c->hi[0], (long long)c->lo[1], (long long)c->hi[1],
             (long long)c->lhs_dilate[0], (long long)c->lhs_dilate[1], (long long)c->rhs_dilate[0],
             (long long)c->rhs_dilate[1], c->reversal[0], c->reversal[1], c->labels, (long long)c->fgc,
             (long long)c->bgc);
    int64_t nx = d.in[0] * d.in[1] * d.in[2] * d.in[3], nk = d.ker[0] * d.ker[1] * d.ker[2] * d.ker[3];
    int64_t n = d.out[0] * d.out[1] * d.out[2] * d.out[3], K = c->size[0] * c->size[1] * c->features / c->fgc;
    float *x = random_floats(nx, 1), *k = random_floats(nk, 2);
    TestRun run;
    const void *params[] = { x, k };
    Value *v = test_run_ok(&run, conv_module(xs, ks, os, attrs), params);
    assert_int_equal(value_elements(v), n);
    const float *got = v->data;
    int64_t oi[NS + 2] = { 0 }, nonzero = 0;
    for (int64_t e = 0; e < n; e++) {
        for (int64_t r = e, i = NS + 1; i >= 0; i--) {
            oi[i] = r % d.out[i];
            r /= d.out[i];
        }
        double ref, mag;
        ref_element(c, &d, x, k, oi, &ref, &mag);
        nonzero += ref != 0;
        if (fabs((double)got[e] - ref) > (double)(K + 1) * 0x1p-24 * mag)
            fail_msg("%s: element %lld: got %.9g, want %.9g", c->labels, (long long)e, (double)got[e], ref);
    }
    assert_true(nonzero > n / 2);       /* the case reads the input */
    void *bytes = malloc(value_bytes(v));
    memcpy(bytes, v->data, value_bytes(v));
    test_run_free(&run);
    free(x);
    free(k);
    return bytes;
}

/* NHWC x HWIO -> NHWC with K = 400: several 2 MB chunks, products in place. */
static const Big big_nhwc = { "b01f_01io->b01f", 2, 16, { 40, 40 }, 8, { 5, 5 }, { 1, 1 }, { 2, 2 }, { 2, 2 },
                              { 1, 1 }, { 1, 1 }, { false, false }, 1, 1 };

/* NCHW x OIHW -> NCHW (the buffered store, two chunks), grouped, with every
 * window feature: in dim 0 only odd window positions meet input elements,
 * so the reversal moves them. */
static const Big big_nchw = { "bf01_oi01->bf01", 17, 12, { 30, 27 }, 6, { 4, 4 }, { 2, 1 }, { -1, 3 }, { 2, -2 },
                              { 2, 1 }, { 1, 2 }, { true, false }, 3, 1 };

/* The weight-gradient form: batch groups, permuted labels. */
static const Big big_bgc = { "f01b_i01o->01bf", 8, 5, { 20, 20 }, 8, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1 },
                             { 1, 1 }, { 1, 1 }, { false, true }, 1, 4 };

static void test_conv_large_nhwc_matches_reference(void **state)
{
    (void)state;
    free(check_big(&big_nhwc));
}

static void test_conv_large_nchw_groups_matches_reference(void **state)
{
    (void)state;
    free(check_big(&big_nchw));
}

static void test_conv_large_batch_groups_matches_reference(void **state)
{
    (void)state;
    free(check_big(&big_bgc));
}

static void test_conv_is_bitwise_reproducible(void **state)
{
    (void)state;
    Dims d;
    big_dims(&big_nchw, &d);
    void *a = check_big(&big_nchw), *b = check_big(&big_nchw);
    assert_memory_equal(a, b, (size_t)(d.out[0] * d.out[1] * d.out[2] * d.out[3]) * sizeof(float));
    free(a);
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_1d_valid),
        cmocka_unit_test(test_conv_1d_padding_and_stride),
        cmocka_unit_test(test_conv_holes_skip_nonfinite_kernel),
        cmocka_unit_test(test_conv_1d_lhs_dilate_is_transposed),
        cmocka_unit_test(test_conv_1d_rhs_dilate_and_reversal),
        cmocka_unit_test(test_conv_2d_nchw),
        cmocka_unit_test(test_conv_feature_groups),
        cmocka_unit_test(test_conv_batch_groups),
        cmocka_unit_test(test_conv_0d_is_a_matmul),
        cmocka_unit_test(test_conv_empty_window_and_features),
        cmocka_unit_test(test_conv_f64),
        cmocka_unit_test(test_conv_narrow_floats_round_once),
        cmocka_unit_test(test_conv_bf16_to_f32),
        cmocka_unit_test(test_conv_c64),
        cmocka_unit_test(test_conv_integers_wrap),
        cmocka_unit_test(test_conv_reports_unsupported),
        cmocka_unit_test(test_conv_large_nhwc_matches_reference),
        cmocka_unit_test(test_conv_large_nchw_groups_matches_reference),
        cmocka_unit_test(test_conv_large_batch_groups_matches_reference),
        cmocka_unit_test(test_conv_is_bitwise_reproducible),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
