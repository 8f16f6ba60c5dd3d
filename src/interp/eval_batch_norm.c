/* eval_batch_norm.c: batch-norm-training, -inference and -grad.
 *
 * The arithmetic is that of XLA's CPU path, whose BatchNormExpander rewrites
 * each op into elementwise ops, broadcasts and add-reduces in the operand's
 * element type before anything runs.  We compute that sequence of ops, each
 * rounded to the element type, so every result has the bits our interpreter
 * gives for the expanded module (tests/interp/test_batch_norm.c checks it).
 *
 * With the operand seen as [outer, F, inner] (F the feature dim), N the
 * number of elements per feature (an s32 count converted to the type; in
 * f16 more than 65504 becomes inf, as in XLA), eps the epsilon attribute (an
 * f32, as XLA stores it, converted to the type) and each sum a left fold from
 * 0 over the non-feature positions in row-major order (what reduce does):
 *
 *   training   mean = sum(x) / N
 *              var  = sum(x * x) / N - mean * mean      E[x^2] - E[x]^2, not
 *                     the mean of squared deviations: it cancels, and can come
 *                     out below zero, when then var + eps < 0 gives NaN (XLA too)
 *              out  = (x - mean) * rsqrt(var + eps) * scale + offset
 *   inference  k = scale * rsqrt(var + eps),  out = x * k + (offset - mean * k)
 *   grad       r = rsqrt(var + eps),  xm = x - mean,  s = sum(dy * xm)
 *              grad_offset = sum(dy),  grad_scale = s * r
 *              grad_x = (scale * r / N) * ((dy * N - grad_offset) - s * xm / (var + eps))
 *
 * evaluated left to right as written, every op rounded to the type.  rsqrt is
 * the interpreter's: 1 / sqrt in f32 (in f64 for f64), rounded twice, then to
 * the type.  f16 and bf16 are not widened for the whole computation: like
 * every kernel here they compute each op in f32 and round to the type once
 * per op (the sums too: each step of a fold is rounded).  We compute each op
 * in f64 and round it once to the type, which gives the same bits as f32 then
 * the type, or as native f32: for + - * / and sqrt a double rounding through
 * a format of at least 2p + 2 bits is innocuous.
 * Element types: f16, bf16, f32, f64 (the other floats are unsupported). */
#include "eval.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The operand seen as [outer, features, inner]. */
typedef struct BatchNorm {
    IrElemType t;
    int64_t outer, features, inner;
    double n;           /* elements per feature, converted to t */
    double eps;         /* epsilon converted to t */
} BatchNorm;

/* ------------------------------------------------------------------ */
/* Element access and rounding                                          */

static double ld(IrElemType t, const void *p, int64_t i)
{
    switch ((int)t) {
    case IR_TYPE_F16: return ir_f16_to_f32(((const uint16_t *)p)[i]);
    case IR_TYPE_BF16: return ir_bf16_to_f32(((const uint16_t *)p)[i]);
    case IR_TYPE_F32: return ((const float *)p)[i];
    default: return ((const double *)p)[i];
    }
}

/* v is a value of t (rnd has been applied), so narrowing is exact. */
static void st(IrElemType t, void *p, int64_t i, double v)
{
    switch ((int)t) {
    case IR_TYPE_F16: ((uint16_t *)p)[i] = ir_f64_to_f16(v); break;
    case IR_TYPE_BF16: ((uint16_t *)p)[i] = ir_f64_to_bf16(v); break;
    case IR_TYPE_F32: ((float *)p)[i] = (float)v; break;
    default: ((double *)p)[i] = v; break;
    }
}

/* v rounded to nearest even in t (overflow to inf), as a double. */
static double rnd(IrElemType t, double v)
{
    switch ((int)t) {
    case IR_TYPE_F16: return ir_f16_to_f32(ir_f64_to_f16(v));
    case IR_TYPE_BF16: return ir_bf16_to_f32(ir_f64_to_bf16(v));
    case IR_TYPE_F32: return (float)v;
    default: return v;
    }
}

/* The interpreter's rsqrt of a value of t: 1 / sqrt in f32 (f64 for f64). */
static double rsqrt_t(IrElemType t, double v)
{
    if (t == IR_TYPE_F64)
        return 1 / sqrt(v);
    float s = sqrtf((float)v);
    return rnd(t, 1.0f / s);
}

/* ------------------------------------------------------------------ */
/* Operands and results                                                 */

static bool bn_type_ok(IrElemType t)
{
    return t == IR_TYPE_F16 || t == IR_TYPE_BF16 || t == IR_TYPE_F32 || t == IR_TYPE_F64;
}

/* epsilon=: a float, kept as XLA keeps it (an f32 read through a double). */
static bool parse_epsilon(const IrInstr *instr, float *eps, Error *err)
{
    const char *text = ir_raw_attr_get(instr, "epsilon");
    char *end = NULL;
    double v = text ? strtod(text, &end) : 0;
    if (!text || end == text || *end != '\0')
        return error_set(err, ERR_SHAPE, instr->info->loc, "%s: epsilon= must be a float, got '%s'",
                         ir_opcode_name(instr->op), text ? text : "(none)");
    *eps = (float)v;
    return true;
}

static bool bad_operands(const IrInstr *instr, Error *err)
{
    return error_set(err, ERR_SHAPE, instr->info->loc, "%s: operands do not fit feature_index=%lld",
                     ir_opcode_name(instr->op), (long long)instr->ints[IR_INT_FEATURE_INDEX].v);
}

/* Operand k is per feature ([F] of type t) or, when whole, shaped like x. */
static bool operand_ok(const Value *x, const Value *v, bool whole, int64_t features)
{
    const IrShape *s = v->shape;
    if (s->type != x->shape->type)
        return false;
    if (whole)
        return ir_shape_equal_dims(s, x->shape);
    return s->rank == 1 && s->dims[0] == features;
}

/* Checks the n operands (x first; whole[k] says which are shaped like x)
 * and fills bn. */
static bool bn_setup(const IrInstr *instr, Value *const *args, int n, const bool *whole, BatchNorm *bn,
                     Error *err)
{
    const Value *x = args[0];
    const IrOptInt fi = instr->ints[IR_INT_FEATURE_INDEX];
    if (instr->n_operands != n)
        return bad_operands(instr, err);
    for (int k = 0; k < n; k++)
        if (args[k]->shape->type == IR_TYPE_TUPLE)
            return bad_operands(instr, err);
    if (!bn_type_ok(x->shape->type))
        return error_set(err, ERR_UNSUPPORTED, instr->info->loc, "%s: element type %s is not supported",
                         ir_opcode_name(instr->op), ir_type_name(x->shape->type));
    if (!fi.present || fi.v < 0 || fi.v >= x->shape->rank)
        return bad_operands(instr, err);
    memset(bn, 0, sizeof *bn);
    bn->t = x->shape->type;
    bn->outer = bn->inner = 1;
    bn->features = x->shape->dims[fi.v];
    for (int d = 0; d < x->shape->rank; d++)
        if (d != fi.v)
            *(d < fi.v ? &bn->outer : &bn->inner) *= x->shape->dims[d];
    for (int k = 1; k < n; k++)
        if (!operand_ok(x, args[k], whole[k], bn->features))
            return bad_operands(instr, err);
    int64_t count = bn->outer * bn->inner;
    if (count > INT32_MAX)
        return error_set(err, ERR_UNSUPPORTED, instr->info->loc,
                         "%s: %lld elements per feature overflow XLA's s32 count", ir_opcode_name(instr->op),
                         (long long)count);
    float eps = 0;
    if (!parse_epsilon(instr, &eps, err))
        return false;
    bn->n = rnd(bn->t, (double)count);
    bn->eps = rnd(bn->t, eps);
    return true;
}

/* Result part i: the shape itself when the result is an array (n == 1). */
static const IrShape *result_part(const IrInstr *instr, int n, int i)
{
    const IrShape *s = instr->shape;
    if (n == 1)
        return s->type == IR_TYPE_TUPLE ? NULL : s;
    return s->type == IR_TYPE_TUPLE && s->n_elements == n ? s->elements[i] : NULL;
}

/* Allocates the results: part 0 shaped like x, the others [F]. */
static bool new_results(const IrInstr *instr, const Value *x, const BatchNorm *bn, int n, Value **parts,
                        Error *err)
{
    for (int i = 0; i < n; i++) {
        const IrShape *s = result_part(instr, n, i);
        bool ok = s && s->type == bn->t &&
                  (i == 0 ? ir_shape_equal_dims(s, x->shape) : s->rank == 1 && s->dims[0] == bn->features);
        if (!ok)
            return error_set(err, ERR_SHAPE, instr->info->loc, "%s: result %s does not fit its operands",
                             ir_opcode_name(instr->op), ir_shape_str(instr->shape));
    }
    for (int i = 0; i < n; i++)
        if (!(parts[i] = value_new_array(result_part(instr, n, i), err))) {
            for (int k = 0; k < i; k++)
                value_release(parts[k]);
            return false;
        }
    return true;
}

/* Hands the parts over (an array, or a tuple of n), or releases them. */
static bool finish(const IrInstr *instr, int n, Value **parts, bool ok, Value **out, Error *err)
{
    if (!ok) {
        for (int i = 0; i < n; i++)
            value_release(parts[i]);
        return false;
    }
    if (n == 1) {
        *out = parts[0];
        return true;
    }
    *out = value_new_tuple(instr->shape, n, parts, err);
    return *out != NULL;
}

/* m per-feature scratch rows of F doubles, row r at (*rows) + r * F. */
static double *feature_rows(const IrInstr *instr, const BatchNorm *bn, int m, Error *err)
{
    size_t n = (size_t)(bn->features > 0 ? bn->features : 1) * (size_t)m;
    double *p = xmalloc_try(n * sizeof *p);
    if (!p)
        error_set(err, ERR_NOMEM, instr->info->loc, "%s: out of memory", ir_opcode_name(instr->op));
    return p;
}

static void load_feature(const BatchNorm *bn, const Value *v, double *dst)
{
    for (int64_t f = 0; f < bn->features; f++)
        dst[f] = ld(bn->t, v->data, f);
}

static void store_feature(const BatchNorm *bn, const double *src, Value *v)
{
    for (int64_t f = 0; f < bn->features; f++)
        st(bn->t, v->data, f, src[f]);
}

/* ------------------------------------------------------------------ */
/* The three ops                                                        */

/* mean and var of x per feature, by E[x^2] - E[x]^2. */
static void moments(const BatchNorm *bn, const void *x, double *mean, double *var)
{
    IrElemType t = bn->t;
    int64_t F = bn->features;
    for (int64_t f = 0; f < F; f++)
        mean[f] = var[f] = 0;           /* the sums, until the last loop */
    for (int64_t o = 0, idx = 0; o < bn->outer; o++)
        for (int64_t f = 0; f < F; f++)
            for (int64_t i = 0; i < bn->inner; i++, idx++) {
                double v = ld(t, x, idx);
                mean[f] = rnd(t, mean[f] + v);
                var[f] = rnd(t, var[f] + rnd(t, v * v));
            }
    for (int64_t f = 0; f < F; f++) {
        double m = rnd(t, mean[f] / bn->n), e2 = rnd(t, var[f] / bn->n);
        mean[f] = m;
        var[f] = rnd(t, e2 - rnd(t, m * m));
    }
}

bool eval_batch_norm_training(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    (void)it;
    static const bool whole[3] = { true, false, false };
    BatchNorm bn;
    Value *parts[3];
    if (!bn_setup(instr, args, 3, whole, &bn, err) || !new_results(instr, args[0], &bn, 3, parts, err))
        return false;
    int64_t F = bn.features;
    double *w = feature_rows(instr, &bn, 5, err);
    if (!w)
        return finish(instr, 3, parts, false, out, err);
    double *mean = w, *var = w + F, *rs = w + 2 * F, *scale = w + 3 * F, *offset = w + 4 * F;
    IrElemType t = bn.t;
    moments(&bn, args[0]->data, mean, var);
    load_feature(&bn, args[1], scale);
    load_feature(&bn, args[2], offset);
    for (int64_t f = 0; f < F; f++)
        rs[f] = rsqrt_t(t, rnd(t, var[f] + bn.eps));
    const void *x = args[0]->data;
    void *y = parts[0]->data;
    for (int64_t o = 0, idx = 0; o < bn.outer; o++)
        for (int64_t f = 0; f < F; f++)
            for (int64_t i = 0; i < bn.inner; i++, idx++) {
                double v = rnd(t, rnd(t, ld(t, x, idx) - mean[f]) * rs[f]);
                st(t, y, idx, rnd(t, rnd(t, v * scale[f]) + offset[f]));
            }
    store_feature(&bn, mean, parts[1]);
    store_feature(&bn, var, parts[2]);
    free(w);
    return finish(instr, 3, parts, true, out, err);
}

bool eval_batch_norm_inference(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    (void)it;
    static const bool whole[5] = { true, false, false, false, false };
    BatchNorm bn;
    Value *res;
    if (!bn_setup(instr, args, 5, whole, &bn, err) || !new_results(instr, args[0], &bn, 1, &res, err))
        return false;
    int64_t F = bn.features;
    double *w = feature_rows(instr, &bn, 4, err);
    if (!w)
        return finish(instr, 1, &res, false, out, err);
    double *k = w, *shift = w + F, *tmp = w + 2 * F, *var = w + 3 * F;
    IrElemType t = bn.t;
    load_feature(&bn, args[1], k);          /* scale, then scale * rsqrt(var + eps) */
    load_feature(&bn, args[2], shift);      /* offset, then offset - mean * k */
    load_feature(&bn, args[3], tmp);        /* mean */
    load_feature(&bn, args[4], var);
    for (int64_t f = 0; f < F; f++) {
        k[f] = rnd(t, k[f] * rsqrt_t(t, rnd(t, var[f] + bn.eps)));
        shift[f] = rnd(t, shift[f] - rnd(t, tmp[f] * k[f]));
    }
    const void *x = args[0]->data;
    void *y = res->data;
    for (int64_t o = 0, idx = 0; o < bn.outer; o++)
        for (int64_t f = 0; f < F; f++)
            for (int64_t i = 0; i < bn.inner; i++, idx++)
                st(t, y, idx, rnd(t, rnd(t, ld(t, x, idx) * k[f]) + shift[f]));
    free(w);
    return finish(instr, 1, &res, true, out, err);
}

/* Per-feature values of batch-norm-grad, rows of F doubles. */
typedef struct GradRows {
    double *mean, *ve;      /* ve: var + eps */
    double *s;              /* sum(dy * (x - mean)) */
    double *sum_dy;
    double *c;              /* scale * rsqrt(var + eps) / N */
} GradRows;

/* The two sums, in one pass (each its own left fold). */
static void grad_sums(const BatchNorm *bn, const void *x, const void *dy, const GradRows *g)
{
    IrElemType t = bn->t;
    for (int64_t f = 0; f < bn->features; f++)
        g->s[f] = g->sum_dy[f] = 0;
    for (int64_t o = 0, idx = 0; o < bn->outer; o++)
        for (int64_t f = 0; f < bn->features; f++)
            for (int64_t i = 0; i < bn->inner; i++, idx++) {
                double d = ld(t, dy, idx);
                double xm = rnd(t, ld(t, x, idx) - g->mean[f]);
                g->s[f] = rnd(t, g->s[f] + rnd(t, d * xm));
                g->sum_dy[f] = rnd(t, g->sum_dy[f] + d);
            }
}

static void grad_x(const BatchNorm *bn, const void *x, const void *dy, const GradRows *g, void *gx)
{
    IrElemType t = bn->t;
    for (int64_t o = 0, idx = 0; o < bn->outer; o++)
        for (int64_t f = 0; f < bn->features; f++)
            for (int64_t i = 0; i < bn->inner; i++, idx++) {
                double xm = rnd(t, ld(t, x, idx) - g->mean[f]);
                double i5 = rnd(t, rnd(t, g->s[f] * xm) / g->ve[f]);
                double i1 = rnd(t, ld(t, dy, idx) * bn->n);
                double i6 = rnd(t, rnd(t, i1 - g->sum_dy[f]) - i5);
                st(t, gx, idx, rnd(t, g->c[f] * i6));
            }
}

bool eval_batch_norm_grad(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    (void)it;
    static const bool whole[5] = { true, false, false, false, true };
    BatchNorm bn;
    Value *parts[3];
    if (!bn_setup(instr, args, 5, whole, &bn, err) || !new_results(instr, args[0], &bn, 3, parts, err))
        return false;
    int64_t F = bn.features;
    double *w = feature_rows(instr, &bn, 6, err);
    if (!w)
        return finish(instr, 3, parts, false, out, err);
    GradRows g = { w, w + F, w + 2 * F, w + 3 * F, w + 4 * F };
    double *rs = w + 5 * F;
    IrElemType t = bn.t;
    load_feature(&bn, args[1], g.c);        /* scale, then scale * rs / N */
    load_feature(&bn, args[2], g.mean);
    load_feature(&bn, args[3], g.ve);       /* var, then var + eps */
    for (int64_t f = 0; f < F; f++) {
        g.ve[f] = rnd(t, g.ve[f] + bn.eps);
        rs[f] = rsqrt_t(t, g.ve[f]);
        g.c[f] = rnd(t, rnd(t, g.c[f] * rs[f]) / bn.n);
    }
    grad_sums(&bn, args[0]->data, args[4]->data, &g);
    grad_x(&bn, args[0]->data, args[4]->data, &g, parts[0]->data);
    for (int64_t f = 0; f < F; f++)
        rs[f] = rnd(t, g.s[f] * rs[f]);     /* grad_scale */
    store_feature(&bn, rs, parts[1]);
    store_feature(&bn, g.sum_dy, parts[2]);
    free(w);
    return finish(instr, 3, parts, true, out, err);
}
