/* test_batch_norm.c: batch-norm-training, -inference and -grad
 * (src/interp/eval_batch_norm.c).
 *
 * The main check: each op gives, bit for bit, what the interpreter gives for
 * the module XLA's BatchNormExpander rewrites it into (written out here op
 * by op: reduce, multiply, divide, rsqrt, broadcasts), in f16, bf16, f32 and
 * f64 and for feature dims first, middle and last.  Then closed forms worked
 * out by hand, the E[x^2] - E[x]^2 variance going negative where a two-pass
 * one would not, and the errors.  numpy checks against the mathematics live
 * in scripts/interp_families/batch_norm.py. */
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
/* Module text                                                          */

#define TEXT_MAX 8192

typedef struct Geometry {
    const char *t;          /* element type */
    int rank;
    int64_t dims[4];
    int fi;                 /* feature_index */
} Geometry;

static int64_t features(const Geometry *g)
{
    return g->dims[g->fi];
}

static int64_t elements(const Geometry *g)
{
    int64_t n = 1;
    for (int d = 0; d < g->rank; d++)
        n *= g->dims[d];
    return n;
}

/* "t[d0,d1,...]" */
static const char *shape(const Geometry *g, char *buf)
{
    int n = sprintf(buf, "%s[", g->t);
    for (int d = 0; d < g->rank; d++)
        n += sprintf(buf + n, "%s%lld", d ? "," : "", (long long)g->dims[d]);
    sprintf(buf + n, "]");
    return buf;
}

/* The dims other than the feature dim, "{0,2}". */
static const char *others(const Geometry *g, char *buf)
{
    int n = sprintf(buf, "{");
    for (int d = 0, k = 0; d < g->rank; d++)
        if (d != g->fi)
            n += sprintf(buf + n, "%s%d", k++ ? "," : "", d);
    sprintf(buf + n, "}");
    return buf;
}

/* Appends a formatted line to text. */
static void line(char *text, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line(char *text, const char *fmt, ...)
{
    size_t n = strlen(text);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text + n, TEXT_MAX - n, fmt, ap);
    va_end(ap);
    assert_true(strlen(text) < TEXT_MAX - 1);
}

/* Header, the add computation, the ENTRY line and the parameters: x and dy
 * shaped like the operand, the others t[F]. */
static void begin(char *text, const Geometry *g, const char *const *params, int n_params)
{
    char x[64];
    snprintf(text, TEXT_MAX,
             "HloModule bn\n\n%%add (a: %s[], b: %s[]) -> %s[] {\n  %%a = %s[] parameter(0)\n"
             "  %%b = %s[] parameter(1)\n  ROOT %%c = %s[] add(%%a, %%b)\n}\n\nENTRY %%main {\n",
             g->t, g->t, g->t, g->t, g->t, g->t);
    for (int i = 0; i < n_params; i++) {
        bool whole = strcmp(params[i], "x") == 0 || strcmp(params[i], "dy") == 0;
        if (whole)
            line(text, "  %%%s = %s parameter(%d)\n", params[i], shape(g, x), i);
        else
            line(text, "  %%%s = %s[%lld] parameter(%d)\n", params[i], g->t, (long long)features(g), i);
    }
}

/* The batch-norm op itself. */
static void op_module(char *text, const Geometry *g, const char *op)
{
    static const char *const tr[] = { "x", "scale", "offset" };
    static const char *const inf[] = { "x", "scale", "offset", "mean", "var" };
    static const char *const gr[] = { "x", "scale", "mean", "var", "dy" };
    bool is_inf = strcmp(op, "inference") == 0, is_grad = strcmp(op, "grad") == 0;
    const char *const *ps = is_inf ? inf : is_grad ? gr : tr;
    int n = is_inf || is_grad ? 5 : 3;
    char x[64], res[160];
    shape(g, x);
    if (is_inf)
        snprintf(res, sizeof res, "%s", x);
    else
        snprintf(res, sizeof res, "(%s, %s[%lld], %s[%lld])", x, g->t, (long long)features(g), g->t,
                 (long long)features(g));
    begin(text, g, ps, n);
    line(text, "  ROOT %%bn = %s batch-norm-%s(", res, op);
    for (int i = 0; i < n; i++)
        line(text, "%s%%%s", i ? ", " : "", ps[i]);
    line(text, "), epsilon=0.25, feature_index=%d\n}\n", g->fi);
}

/* Broadcasts of per-feature value v to the operand's shape as %v_b. */
static void bcast(char *text, const Geometry *g, const char *v)
{
    char x[64];
    line(text, "  %%%s_b = %s broadcast(%%%s), dimensions={%d}\n", v, shape(g, x), v, g->fi);
}

/* Shared by the expansions: zero, eps, n, as scalars, per feature and whole. */
static void constants(char *text, const Geometry *g)
{
    char x[64];
    int64_t F = features(g), n = elements(g) / F;
    line(text, "  %%zero = %s[] constant(0)\n  %%eps = %s[] constant(0.25)\n  %%n = %s[] constant(%lld)\n",
         g->t, g->t, g->t, (long long)n);
    line(text, "  %%eps_f = %s[%lld] broadcast(%%eps), dimensions={}\n", g->t, (long long)F);
    line(text, "  %%n_f = %s[%lld] broadcast(%%n), dimensions={}\n", g->t, (long long)F);
    line(text, "  %%eps_x = %s broadcast(%%eps), dimensions={}\n", shape(g, x));
    line(text, "  %%n_x = %s broadcast(%%n), dimensions={}\n", shape(g, x));
}

/* "%dst = <x shape> op(%a, %b)" and the per-feature form. */
static void ew(char *text, const Geometry *g, const char *dst, const char *op, const char *a, const char *b)
{
    char x[64];
    line(text, "  %%%s = %s %s(%%%s%s%s)\n", dst, shape(g, x), op, a, b ? ", %" : "", b ? b : "");
}

static void ewf(char *text, const Geometry *g, const char *dst, const char *op, const char *a, const char *b)
{
    line(text, "  %%%s = %s[%lld] %s(%%%s%s%s)\n", dst, g->t, (long long)features(g), op, a, b ? ", %" : "",
         b ? b : "");
}

static void reduce(char *text, const Geometry *g, const char *dst, const char *src)
{
    char o[64];
    line(text, "  %%%s = %s[%lld] reduce(%%%s, %%zero), dimensions=%s, to_apply=%%add\n", dst, g->t,
         (long long)features(g), src, others(g, o));
}

/* BatchNormExpander's rewrite of batch-norm-training. */
static void training_expansion(char *text, const Geometry *g)
{
    static const char *const ps[] = { "x", "scale", "offset" };
    begin(text, g, ps, 3);
    constants(text, g);
    ew(text, g, "sq", "multiply", "x", "x");
    reduce(text, g, "sum", "x");
    reduce(text, g, "sqsum", "sq");
    ewf(text, g, "mean", "divide", "sum", "n_f");
    ewf(text, g, "e2", "divide", "sqsum", "n_f");
    ewf(text, g, "msq", "multiply", "mean", "mean");
    ewf(text, g, "var", "subtract", "e2", "msq");
    bcast(text, g, "var");
    bcast(text, g, "mean");
    bcast(text, g, "scale");
    bcast(text, g, "offset");
    ew(text, g, "vpe", "add", "var_b", "eps_x");
    ew(text, g, "rs", "rsqrt", "vpe", NULL);
    ew(text, g, "xm", "subtract", "x", "mean_b");
    ew(text, g, "nrm", "multiply", "xm", "rs");
    ew(text, g, "sc", "multiply", "nrm", "scale_b");
    ew(text, g, "out", "add", "sc", "offset_b");
    line(text, "  ROOT %%t = tuple(%%out, %%mean, %%var)\n}\n");
}

static void inference_expansion(char *text, const Geometry *g)
{
    static const char *const ps[] = { "x", "scale", "offset", "mean", "var" };
    begin(text, g, ps, 5);
    constants(text, g);
    ewf(text, g, "ve", "add", "var", "eps_f");
    ewf(text, g, "r", "rsqrt", "ve", NULL);
    ewf(text, g, "k", "multiply", "scale", "r");
    ewf(text, g, "mk", "multiply", "mean", "k");
    ewf(text, g, "sh", "subtract", "offset", "mk");
    bcast(text, g, "k");
    bcast(text, g, "sh");
    ew(text, g, "xk", "multiply", "x", "k_b");
    ew(text, g, "out", "add", "xk", "sh_b");
    line(text, "  ROOT %%t = tuple(%%out)\n}\n");
}

static void grad_expansion(char *text, const Geometry *g)
{
    static const char *const ps[] = { "x", "scale", "mean", "var", "dy" };
    begin(text, g, ps, 5);
    constants(text, g);
    bcast(text, g, "scale");
    bcast(text, g, "var");
    bcast(text, g, "mean");
    ew(text, g, "vpe", "add", "var_b", "eps_x");
    ew(text, g, "rsb", "rsqrt", "vpe", NULL);
    ewf(text, g, "vpef", "add", "var", "eps_f");
    ewf(text, g, "rsf", "rsqrt", "vpef", NULL);
    ew(text, g, "xm", "subtract", "x", "mean_b");
    ew(text, g, "gxm", "multiply", "dy", "xm");
    reduce(text, g, "s", "gxm");
    reduce(text, g, "gb", "dy");
    ewf(text, g, "gs", "multiply", "s", "rsf");
    bcast(text, g, "gb");
    bcast(text, g, "s");
    ew(text, g, "i4", "multiply", "s_b", "xm");
    ew(text, g, "i5", "divide", "i4", "vpe");
    ew(text, g, "st", "multiply", "scale_b", "rsb");
    ew(text, g, "st2", "divide", "st", "n_x");
    ew(text, g, "i1", "multiply", "dy", "n_x");
    ew(text, g, "i12", "subtract", "i1", "gb_b");
    ew(text, g, "i6", "subtract", "i12", "i5");
    ew(text, g, "gx", "multiply", "st2", "i6");
    line(text, "  ROOT %%t = tuple(%%gx, %%gs, %%gb)\n}\n");
}

/* ------------------------------------------------------------------ */
/* Data                                                                 */

static IrElemType type_of(const char *t)
{
    return ir_type_from_name(t, strlen(t));
}

/* n deterministic values of type t, roughly mu + sigma * [-2, 2]. */
static void *values(const char *t, int64_t n, double mu, double sigma, uint32_t seed)
{
    IrElemType et = type_of(t);
    size_t es = (size_t)ir_type_storage_bytes(et);
    unsigned char *p = calloc((size_t)n, es);
    uint32_t r = seed;
    for (int64_t i = 0; i < n; i++) {
        r = r * 1664525u + 1013904223u;
        double u = ((r >> 8) & 0xffff) / 65535.0 * 4 - 2;
        ir_elem_set_f64(et, p + (size_t)i * es, mu + sigma * u);
    }
    return p;
}

/* Runs the op and its expansion on the same parameters; the results must
 * be equal to the bit. */
static void check_matches_expansion(const Geometry *g, const char *op)
{
    static char a[TEXT_MAX], b[TEXT_MAX];
    op_module(a, g, op);
    bool is_inf = strcmp(op, "inference") == 0, is_grad = strcmp(op, "grad") == 0;
    (is_inf ? inference_expansion : is_grad ? grad_expansion : training_expansion)(b, g);
    int64_t n = elements(g), F = features(g);
    void *params[5];
    params[0] = values(g->t, n, 0.5, 2, 1);
    params[1] = values(g->t, F, 1, 0.5, 2);
    params[2] = values(g->t, F, 0.25, 1, 3);                       /* offset or mean */
    params[3] = is_inf || is_grad ? values(g->t, F, 2, 0.75, 4) : NULL;   /* mean or var */
    params[4] = is_inf ? values(g->t, F, 2, 0.75, 5) : is_grad ? values(g->t, n, 0, 1, 6) : NULL;
    if (is_grad) {                          /* mean, var: the variance must be positive */
        void *mean = values(g->t, F, 0.5, 0.25, 7);
        free(params[2]);
        params[2] = mean;
    }
    TestRun ra, rb;
    Value *va = test_run_ok(&ra, a, (const void *const *)params);
    Value *vb = test_run_ok(&rb, b, (const void *const *)params);
    if (is_inf) {
        assert_true(value_bits_equal(va, vb->elements[0]));
    } else if (!value_bits_equal(va, vb)) {
        fail_msg("batch-norm-%s on %s, feature_index=%d differs from its expansion:\n%s", op, g->t, g->fi, b);
    }
    test_run_free(&ra);
    test_run_free(&rb);
    for (int i = 0; i < 5; i++)
        free(params[i]);
}

static const Geometry geometries[] = {
    { "f32", 3, { 3, 4, 5 }, 1 },
    { "f32", 1, { 7 }, 0 },
    { "f64", 2, { 6, 3 }, 0 },
    { "f16", 4, { 2, 3, 2, 4 }, 3 },
    { "bf16", 3, { 5, 2, 3 }, 2 },
    { "bf16", 2, { 16, 3 }, 1 },
};

static void test_batch_norm_training_matches_its_expansion(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof geometries / sizeof geometries[0]; i++)
        check_matches_expansion(&geometries[i], "training");
}

static void test_batch_norm_inference_matches_its_expansion(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof geometries / sizeof geometries[0]; i++)
        check_matches_expansion(&geometries[i], "inference");
}

static void test_batch_norm_grad_matches_its_expansion(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof geometries / sizeof geometries[0]; i++)
        check_matches_expansion(&geometries[i], "grad");
}

/* ------------------------------------------------------------------ */
/* Closed forms                                                         */

#define TRAINING_4X1(eps)                                                                           \
    "HloModule m\nENTRY e {\n  x = f32[4,1] parameter(0)\n  s = f32[1] parameter(1)\n"              \
    "  o = f32[1] parameter(2)\n"                                                                   \
    "  ROOT bn = (f32[4,1], f32[1], f32[1]) batch-norm-training(x, s, o), epsilon=" eps ", feature_index=1\n}\n"

/* x = 1 1 5 5: mean 3, E[x^2] 13, var 13 - 9 = 4, rsqrt(4 + 0) = 1/2, so
 * out = (x - 3) / 2 * 2 + 1 = -1 -1 3 3. */
static void test_batch_norm_training_by_hand(void **state)
{
    (void)state;
    const float x[] = { 1, 1, 5, 5 }, s[] = { 2 }, o[] = { 1 };
    const void *params[] = { x, s, o };
    TestRun run;
    Value *v = test_run_ok(&run, TRAINING_4X1("0"), params);
    const float out[] = { -1, -1, 3, 3 }, mean[] = { 3 }, var[] = { 4 };
    assert_f32_array(v->elements[0], out, 4);
    assert_f32_array(v->elements[1], mean, 1);
    assert_f32_array(v->elements[2], var, 1);
    test_run_free(&run);
}

/* epsilon is added to the variance: var 4 + 5 = 9, rsqrt 1/3, and for
 * x = 3 3 3 3 (var 0) the result is the offset exactly. */
static void test_batch_norm_training_epsilon(void **state)
{
    (void)state;
    const float x[] = { 1, 1, 5, 5 }, c[] = { 3, 3, 3, 3 }, s[] = { 3 }, o[] = { 0.5f };
    const void *params[] = { x, s, o }, *cparams[] = { c, s, o };
    TestRun run;
    Value *v = test_run_ok(&run, TRAINING_4X1("5"), params);
    float r = 1.0f / sqrtf(9.0f), lo = -2 * r * 3 + 0.5f, hi = 2 * r * 3 + 0.5f;
    const float out[] = { lo, lo, hi, hi };
    assert_f32_array(v->elements[0], out, 4);
    test_run_free(&run);
    v = test_run_ok(&run, TRAINING_4X1("5"), cparams);
    const float flat[] = { 0.5f, 0.5f, 0.5f, 0.5f }, zero[] = { 0 };
    assert_f32_array(v->elements[0], flat, 4);
    assert_f32_array(v->elements[2], zero, 1);
    test_run_free(&run);
}

/* Values near 3000 that differ by a few units in the last place: in f32,
 * sum(x^2)/n - (sum(x)/n)^2 comes out negative (a two-pass variance never
 * does), and with epsilon 0 the outputs are NaN.  The expected variance is
 * the formula in plain float arithmetic, folded in the same order. */
static void test_batch_norm_training_variance_is_e_x2_minus_e2_x(void **state)
{
    (void)state;
    enum { N = 64 };
    static const char *const text =
        "HloModule m\nENTRY e {\n  x = f32[64,1] parameter(0)\n  s = f32[1] parameter(1)\n"
        "  o = f32[1] parameter(2)\n"
        "  ROOT bn = (f32[64,1], f32[1], f32[1]) batch-norm-training(x, s, o), epsilon=0, feature_index=1\n}\n";
    float x[N], s[] = { 1 }, o[] = { 0 };
    float var = 0;
    for (uint32_t seed = 1; var >= 0 && seed < 100; seed++) {
        uint32_t r = seed;
        float sum = 0, sq = 0;
        for (int i = 0; i < N; i++) {
            r = r * 1664525u + 1013904223u;
            x[i] = 3000.0f + (float)((int)(r >> 24) % 100 - 50) * 0.001f;
            sum += x[i];
            sq += x[i] * x[i];
        }
        float mean = sum / N;
        var = sq / N - mean * mean;
    }
    assert_true(var < 0);
    const void *params[] = { x, s, o };
    TestRun run;
    Value *v = test_run_ok(&run, text, params);
    assert_f32_array(v->elements[2], &var, 1);
    assert_true(isnan(((const float *)v->elements[0]->data)[0]));
    test_run_free(&run);
}

/* inference with mean 1, var 3, eps 1 (rsqrt(4) = 1/2), scale 4, offset -1:
 * k = 2, shift = -1 - 2 = -3, out = 2 x - 3. */
static void test_batch_norm_inference_by_hand(void **state)
{
    (void)state;
    static const char *const text =
        "HloModule m\nENTRY e {\n  x = f64[2,3] parameter(0)\n  s = f64[2] parameter(1)\n"
        "  o = f64[2] parameter(2)\n  m = f64[2] parameter(3)\n  v = f64[2] parameter(4)\n"
        "  ROOT bn = f64[2,3] batch-norm-inference(x, s, o, m, v), epsilon=1, feature_index=0\n}\n";
    const double x[] = { 0, 1, 2.5, -1, 4, 0.25 }, s[] = { 4, 1 }, o[] = { -1, 0 }, m[] = { 1, 0 },
                 v[] = { 3, 15 };
    const void *params[] = { x, s, o, m, v };
    TestRun run;
    Value *r = test_run_ok(&run, text, params);
    const double *got = r->data;
    const double want[] = { -3, -1, 2, -0.25, 1, 0.0625 };      /* row 1: x / 4 */
    for (int i = 0; i < 6; i++)
        assert_true(got[i] == want[i]);
    test_run_free(&run);
}

/* grad with x = 1 1 5 5 (mean 3, var 4, eps 0: r = 1/2), scale 2, dy = 1 0 0 -1:
 * grad_offset = 0, s = sum(dy (x - mean)) = -2 - 2 = -4, grad_scale = -2,
 * grad_x = (2 * 1/2 / 4) * (4 dy - 0 - (x - 3) * -4 / 4)
 *        = 1/4 * (4 dy + (x - 3)) = 1/4 * (2, -2, 2, -2). */
static void test_batch_norm_grad_by_hand(void **state)
{
    (void)state;
    static const char *const text =
        "HloModule m\nENTRY e {\n  x = f32[4,1] parameter(0)\n  s = f32[1] parameter(1)\n"
        "  m = f32[1] parameter(2)\n  v = f32[1] parameter(3)\n  dy = f32[4,1] parameter(4)\n"
        "  ROOT bn = (f32[4,1], f32[1], f32[1]) batch-norm-grad(x, s, m, v, dy), epsilon=0, feature_index=1\n}\n";
    const float x[] = { 1, 1, 5, 5 }, s[] = { 2 }, m[] = { 3 }, v[] = { 4 }, dy[] = { 1, 0, 0, -1 };
    const void *params[] = { x, s, m, v, dy };
    TestRun run;
    Value *r = test_run_ok(&run, text, params);
    const float gx[] = { 0.5f, -0.5f, 0.5f, -0.5f }, gs[] = { -2 }, go[] = { 0 };
    assert_f32_array(r->elements[0], gx, 4);
    assert_f32_array(r->elements[1], gs, 1);
    assert_f32_array(r->elements[2], go, 1);
    test_run_free(&run);
}

/* epsilon is an f32, as XLA stores it: epsilon=0.1 on f64 adds (double)0.1f. */
static void test_batch_norm_epsilon_is_an_f32(void **state)
{
    (void)state;
    static const char *const text =
        "HloModule m\nENTRY e {\n  x = f64[1,1] parameter(0)\n  s = f64[1] parameter(1)\n"
        "  o = f64[1] parameter(2)\n  m = f64[1] parameter(3)\n  v = f64[1] parameter(4)\n"
        "  ROOT bn = f64[1,1] batch-norm-inference(x, s, o, m, v), epsilon=0.1, feature_index=1\n}\n";
    const double x[] = { 1 }, s[] = { 1 }, o[] = { 0 }, m[] = { 0 }, v[] = { 0 };
    const void *params[] = { x, s, o, m, v };
    TestRun run;
    Value *r = test_run_ok(&run, text, params);
    double k = 1 * (1 / sqrt(0 + (double)0.1f));
    assert_true(((const double *)r->data)[0] == 1 * k + (0 - 0 * k));
    assert_true(((const double *)r->data)[0] != 1 / sqrt(0.1));
    test_run_free(&run);
}

/* f8 floats pass the verifier (XLA's rule is "floating point") but are not
 * run: ERR_UNSUPPORTED, not a crash. */
static void test_batch_norm_f8_is_unsupported(void **state)
{
    (void)state;
    static const char *const text =
        "HloModule m\nENTRY e {\n  x = f8e4m3fn[2,2] parameter(0)\n  s = f8e4m3fn[2] parameter(1)\n"
        "  o = f8e4m3fn[2] parameter(2)\n"
        "  ROOT bn = (f8e4m3fn[2,2], f8e4m3fn[2], f8e4m3fn[2]) batch-norm-training(x, s, o), epsilon=0.001, "
        "feature_index=1\n}\n";
    const uint8_t x[4] = { 0 }, s[2] = { 0 }, o[2] = { 0 };
    const void *params[] = { x, s, o };
    TestRun run;
    assert_false(test_run(&run, text, params));
    assert_int_equal(run.err.code, ERR_UNSUPPORTED);
    test_run_free(&run);
}

/* The verifier rejects a wrong per-feature shape, with the location. */
static void test_batch_norm_wrong_scale_is_refused(void **state)
{
    (void)state;
    static const char *const text =
        "HloModule m\nENTRY e {\n  x = f32[2,3] parameter(0)\n  s = f32[2] parameter(1)\n"
        "  o = f32[3] parameter(2)\n"
        "  ROOT bn = (f32[2,3], f32[3], f32[3]) batch-norm-training(x, s, o), epsilon=0.001, feature_index=1\n}\n";
    Error err = { 0 };
    IrModule *m = ir_parse_module(text, strlen(text), "t.hlo", &err);
    assert_non_null(m);
    assert_false(ir_verify_module(m, &err));
    assert_int_equal(err.code, ERR_SHAPE);
    assert_int_equal(err.loc.line, 6);
    assert_non_null(strstr(err.msg, "scale f32[2] must be f32[3]"));
    ir_module_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batch_norm_training_matches_its_expansion),
        cmocka_unit_test(test_batch_norm_inference_matches_its_expansion),
        cmocka_unit_test(test_batch_norm_grad_matches_its_expansion),
        cmocka_unit_test(test_batch_norm_training_by_hand),
        cmocka_unit_test(test_batch_norm_training_epsilon),
        cmocka_unit_test(test_batch_norm_training_variance_is_e_x2_minus_e2_x),
        cmocka_unit_test(test_batch_norm_inference_by_hand),
        cmocka_unit_test(test_batch_norm_grad_by_hand),
        cmocka_unit_test(test_batch_norm_epsilon_is_an_f32),
        cmocka_unit_test(test_batch_norm_f8_is_unsupported),
        cmocka_unit_test(test_batch_norm_wrong_scale_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
