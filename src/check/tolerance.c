/* tolerance.c: how far another implementation of XLA's semantics may lie
 * from hlo-run on one output, by the kinds of computation the output's cone
 * holds.  This is the table scripts/xla/tolerance.py (with hlo_cone.py)
 * applies when hlo-run meets XLA:CPU; here hlo-run --snapshot holds a
 * snapshot's recorded result to it (scripts/xla/snapshots.py checks that
 * the two give every output of the modules it replays the same class).
 *
 *   class           measure        tolerance  what the other side may do
 *   exact           bitwise        0          HLO fixes the bits
 *   contraction     ulp            2          fuse a multiply and an add (one rounding)
 *   transcendental  ulp            4          its own exp, log, tanh, sin, pow, erf, ...
 *   complex         magnitude ulp  16         its own complex divide, abs, sqrt, exp, ...
 *   accumulation    scaled ulp     64         its own order of a float sum or product
 *   batch-norm      scaled ulp     1024       its own expansion of batch-norm-*
 *   complex-power   magnitude ulp  4096       complex power, exp(b log a)
 *   unspecified     not compared   -          rng's values (and its state) are the implementation's
 *
 * An output takes the loosest class of its cone.  Integer and pred outputs
 * are always compared bitwise.  Everywhere two NaNs agree, a NaN against a
 * number or infinities against anything else differ. */
#include "check.h"
#include "check_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name;
    enum { BITWISE, ULP, SCALED_ULP, MAGNITUDE_ULP, NOT_COMPARED } measure;
    double tolerance;
} table[CHECK_TOL_COUNT] = {
    [CHECK_TOL_EXACT] = { "exact", BITWISE, 0 },
    [CHECK_TOL_CONTRACTION] = { "contraction", ULP, 2 },
    [CHECK_TOL_TRANSCENDENTAL] = { "transcendental", ULP, 4 },
    [CHECK_TOL_COMPLEX] = { "complex", MAGNITUDE_ULP, 16 },
    [CHECK_TOL_ACCUMULATION] = { "accumulation", SCALED_ULP, 64 },
    [CHECK_TOL_BATCH_NORM] = { "batch-norm", SCALED_ULP, 1024 },
    [CHECK_TOL_COMPLEX_POWER] = { "complex-power", MAGNITUDE_ULP, 4096 },
    [CHECK_TOL_UNSPECIFIED] = { "unspecified", NOT_COMPARED, 0 },
};

const char *check_tol_class_name(CheckTolClass c)
{
    return c >= 0 && c < CHECK_TOL_COUNT ? table[c].name : "?";
}

double check_tol_class_tolerance(CheckTolClass c)
{
    return table[c].tolerance;
}

const char *check_tol_class_measure(CheckTolClass c)
{
    static const char *const names[] = { "bitwise", "ulp", "scaled ulp", "magnitude ulp", "not compared" };
    return names[table[c].measure];
}

/* ---- The cone's classes */

/* What a cone holds: class bits, whether a float multiply and a float add or
 * subtract occur (a contraction), and the float types it accumulates in. */
typedef struct Tags {
    unsigned classes;           /* 1 << CheckTolClass */
    bool fmul, fadd;
    uint64_t acc_types;         /* 1 << IrElemType */
} Tags;

static void tags_or(Tags *a, const Tags *b)
{
    a->classes |= b->classes;
    a->fmul |= b->fmul;
    a->fadd |= b->fadd;
    a->acc_types |= b->acc_types;
}

static bool is_floaty(IrElemType t)
{
    return ir_type_is_float(t) || ir_type_is_complex(t);
}

/* Float leaf types of s, as a mask; whether any is complex. */
static uint64_t float_types(const IrShape *s, bool *complex)
{
    if (s->type == IR_TYPE_TUPLE) {
        uint64_t m = 0;
        for (int i = 0; i < s->n_elements; i++)
            m |= float_types(s->elements[i], complex);
        return m;
    }
    if (ir_type_is_complex(s->type))
        *complex = true;
    return is_floaty(s->type) ? (uint64_t)1 << s->type : 0;
}

static bool op_in(IrOpcode op, const IrOpcode *set, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (set[i] == op)
            return true;
    return false;
}
#define OP_IN(op, set) op_in(op, set, sizeof set / sizeof set[0])

static const IrOpcode transcendental[] = {
    IR_OP_EXP, IR_OP_EXPM1, IR_OP_LOG, IR_OP_LOG1P, IR_OP_LOGISTIC, IR_OP_TANH,
    IR_OP_SIN, IR_OP_COS, IR_OP_TAN, IR_OP_ATAN2, IR_OP_POWER, IR_OP_ERF, IR_OP_RSQRT, IR_OP_CBRT,
    IR_OP_ACOS, IR_OP_ACOSH, IR_OP_ASIN, IR_OP_ASINH, IR_OP_ATANH, IR_OP_COSH, IR_OP_SINH,
};
static const IrOpcode always_accumulate[] = {
    IR_OP_DOT, IR_OP_CONVOLUTION, IR_OP_FFT, IR_OP_CHOLESKY, IR_OP_TRIANGULAR_SOLVE,
};
static const IrOpcode batch_norm[] = {
    IR_OP_BATCH_NORM_TRAINING, IR_OP_BATCH_NORM_INFERENCE, IR_OP_BATCH_NORM_GRAD,
};
static const IrOpcode accumulate_with_reducer[] = {
    IR_OP_REDUCE, IR_OP_REDUCE_WINDOW, IR_OP_ALL_REDUCE, IR_OP_ALL_REDUCE_START, IR_OP_REDUCE_SCATTER,
    IR_OP_SCATTER, IR_OP_SELECT_AND_SCATTER,
};
/* Complex ops whose algorithm is each implementation's own. */
static const IrOpcode complex_own_algorithm[] = {
    IR_OP_DIVIDE, IR_OP_ABS, IR_OP_SIGN, IR_OP_SQRT, IR_OP_RSQRT, IR_OP_EXP, IR_OP_EXPM1,
    IR_OP_LOG, IR_OP_LOG1P, IR_OP_SIN, IR_OP_COS, IR_OP_TAN, IR_OP_TANH,
};

typedef struct Classifier {
    const IrModule *m;
    Tags *comp_tags;            /* by computation id */
    char *comp_state;           /* 0 new, 1 in progress, 2 done */
    int n_comps;
} Classifier;

static void instr_tags(Classifier *k, const IrInstr *in, Tags *out);

static void computation_tags(Classifier *k, const IrComputation *c, Tags *out)
{
    if (c->id < 0 || c->id >= k->n_comps || k->comp_state[c->id] == 1)
        return;                                 /* a cycle adds nothing new */
    if (k->comp_state[c->id] == 0) {
        k->comp_state[c->id] = 1;
        Tags t = { 0 };
        for (int i = 0; i < c->n_instrs; i++)
            if (!c->instrs[i]->dead)
                instr_tags(k, c->instrs[i], &t);
        k->comp_tags[c->id] = t;
        k->comp_state[c->id] = 2;
    }
    tags_or(out, &k->comp_tags[c->id]);
}

static void instr_tags(Classifier *k, const IrInstr *in, Tags *out)
{
    bool complex = false;
    uint64_t types = float_types(in->shape, &complex);
    bool is_float = types != 0;
    if (in->n_operands > 0) {
        bool c0 = false;
        float_types(in->operands[0]->shape, &c0);
        complex |= c0;
    }
    IrComputation *called[16];
    int n_called = ir_instr_called(in, called, 16);
    Tags inner = { 0 };
    for (int i = 0; i < n_called && i < 16; i++)
        computation_tags(k, called[i], &inner);
    IrOpcode op = in->op;
    /* rng's values, and those XLA makes of it from its own global state
     * (rng-get-and-update-state), are each implementation's. */
    if (op == IR_OP_RNG || op == IR_OP_RNG_GET_AND_UPDATE_STATE)
        out->classes |= 1u << CHECK_TOL_UNSPECIFIED;
    if (is_float && OP_IN(op, transcendental))
        out->classes |= 1u << CHECK_TOL_TRANSCENDENTAL;
    if (complex && OP_IN(op, complex_own_algorithm))
        out->classes |= 1u << CHECK_TOL_COMPLEX;
    if (complex && op == IR_OP_POWER)
        out->classes |= 1u << CHECK_TOL_COMPLEX_POWER;
    if (is_float && OP_IN(op, batch_norm))
        out->classes |= 1u << CHECK_TOL_BATCH_NORM;
    bool acc = is_float && OP_IN(op, always_accumulate);
    if (OP_IN(op, accumulate_with_reducer) && n_called > 0)
        acc = acc || inner.fmul || inner.fadd;
    if (acc) {
        out->classes |= 1u << CHECK_TOL_ACCUMULATION;
        out->acc_types |= types;
    }
    if (is_float && op == IR_OP_MULTIPLY)
        out->fmul = true;
    if (is_float && (op == IR_OP_ADD || op == IR_OP_SUBTRACT))
        out->fadd = true;
    tags_or(out, &inner);
}

/* The tags of the cone of in: in and everything it reads, in its computation. */
static Tags cone_tags(Classifier *k, const IrInstr *root)
{
    Tags t = { 0 };
    int lo = 0, span = ir_computation_id_span(root->parent, &lo);
    char *seen = xcalloc((size_t)(span > 0 ? span : 1), 1);
    const IrInstr **stack = xmalloc((size_t)(span > 0 ? span : 1) * sizeof *stack);
    int top = 0;
    stack[top++] = root;
    seen[root->id - lo] = 1;
    while (top > 0) {
        const IrInstr *in = stack[--top];
        instr_tags(k, in, &t);
        for (int i = 0; i < in->n_operands; i++) {
            const IrInstr *o = in->operands[i];
            if (!seen[o->id - lo]) {
                seen[o->id - lo] = 1;
                stack[top++] = o;
            }
        }
    }
    free(seen);
    free(stack);
    return t;
}

static int mantissa_bits(IrElemType t)
{
    if (t == IR_TYPE_C64)
        return 24;
    if (t == IR_TYPE_C128)
        return 53;
    return ir_type_info[t].mantissa_bits + 1;
}

static CheckLeafTolerance leaf_tolerance(const Tags *t, IrElemType type)
{
    unsigned classes = t->classes;
    if (t->fmul && t->fadd)
        classes |= 1u << CHECK_TOL_CONTRACTION;
    CheckLeafTolerance out = { CHECK_TOL_EXACT, type };
    for (int c = CHECK_TOL_COUNT - 1; c >= 0; c--)
        if (classes & (1u << c)) {
            out.cls = (CheckTolClass)c;         /* the loosest: the table is in that order */
            break;
        }
    /* An accumulation is measured in ulps of the narrowest type it works in
     * (a bf16 sum in another order is a bf16 ulp off, and an f32 output
     * computed from it inherits that). */
    if (is_floaty(type))
        for (int a = 0; a < IR_TYPE_COUNT; a++)
            if ((t->acc_types >> a & 1) && mantissa_bits((IrElemType)a) < mantissa_bits(out.measure_type))
                out.measure_type = (IrElemType)a;
    return out;
}

static int leaves(Classifier *k, const IrInstr *in, const IrShape *s, CheckLeafTolerance *out, int n, int max)
{
    if (in->op == IR_OP_TUPLE && s == in->shape) {
        for (int i = 0; i < in->n_operands; i++)
            n = leaves(k, in->operands[i], in->operands[i]->shape, out, n, max);
        return n;
    }
    if (s->type == IR_TYPE_TUPLE) {
        for (int i = 0; i < s->n_elements; i++)
            n = leaves(k, in, s->elements[i], out, n, max);
        return n;
    }
    if (n < max) {
        Tags t = cone_tags(k, in);
        out[n] = leaf_tolerance(&t, s->type);
    }
    return n + 1;
}

int check_output_tolerances(const IrModule *m, CheckLeafTolerance *out, int max)
{
    Classifier k = { .m = m, .n_comps = ir_module_max_computation_id(m) + 1 };
    k.comp_tags = xcalloc((size_t)k.n_comps, sizeof *k.comp_tags);
    k.comp_state = xcalloc((size_t)k.n_comps, 1);
    const IrInstr *root = m->entry->root;
    int n = leaves(&k, root, root->shape, out, 0, max);
    free(k.comp_tags);
    free(k.comp_state);
    return n;
}

/* ---- Measuring */

/* The elements of array v as doubles, complex ones as (re, im) pairs. */
static double *parts_f64(const Value *v, int64_t *n)
{
    IrElemType t = v->shape->type;
    int64_t count = value_elements(v);
    if (!ir_type_is_complex(t)) {
        *n = count;
        return check_values_f64(v);
    }
    *n = 2 * count;
    double *d = xmalloc((size_t)(*n ? *n : 1) * sizeof *d);
    for (int64_t i = 0; i < *n; i++)
        d[i] = t == IR_TYPE_C64 ? ((const float *)v->data)[i] : ((const double *)v->data)[i];
    return d;
}

/* x as an integer ordered like the values, in steps of one ulp of a type
 * with mant mantissa bits; -0 and +0 both 0. */
static int64_t ordered(double x, int mant)
{
    int64_t i;
    memcpy(&i, &x, sizeof i);
    if (i < 0)
        i = -(i & INT64_MAX);
    int shift = 53 - mant;
    if (shift <= 0)
        return i;
    /* floor division, as an arithmetic shift would do */
    return i >= 0 ? i >> shift : -((-i + ((int64_t)1 << shift) - 1) >> shift);
}

/* The spacing of a type with mant mantissa bits at |x| (x finite). */
static double ulp_at(double x, int mant)
{
    double a = fabs(x);
    if (a < 0x1p-1022)
        a = 0x1p-1022;
    int e;
    frexp(a, &e);                   /* a = f * 2^e, f in [0.5, 1): floor(log2 a) = e - 1 */
    return ldexp(1.0, e - 1 - (mant - 1));
}

bool check_leaf_within(const CheckLeafTolerance *t, const Value *got, const Value *want, CheckLeafDistance *d)
{
    *d = (CheckLeafDistance){ .first = -1 };
    IrElemType type = got->shape->type;
    if (type != want->shape->type || !ir_shape_equal_dims(got->shape, want->shape)) {
        d->shape_differs = true;
        return false;
    }
    int measure = table[t->cls].measure;
    if (measure == NOT_COMPARED)
        return true;
    int64_t n = value_elements(got);
    if (!is_floaty(type) || measure == BITWISE) {
        CheckTolerance exact = { .mode = CHECK_EXACT };
        size_t es = (size_t)ir_type_storage_bytes(type);
        for (int64_t i = 0; i < n; i++)
            if (!check_elements_agree(type, (const char *)got->data + (size_t)i * es,
                                      (const char *)want->data + (size_t)i * es, &exact)) {
                if (d->first < 0)
                    d->first = i;
                d->n_bad++;
            }
        d->worst = d->n_bad ? INFINITY : 0;
        return d->n_bad == 0;
    }
    bool complex = ir_type_is_complex(type);
    if (measure == MAGNITUDE_ULP && !complex)
        measure = ULP;                          /* a real output of a complex op (abs): per element */
    int mant = mantissa_bits(t->measure_type);
    int64_t np;
    double *a = parts_f64(got, &np), *b = parts_f64(want, &np);
    double scale = 1;
    if (measure == SCALED_ULP) {                /* ulps of the output's largest finite magnitude */
        double big = -1;
        for (int64_t i = 0; i < np; i++)
            if (isfinite(a[i]) && fabs(a[i]) > big)
                big = fabs(a[i]);
        scale = ulp_at(big >= 0 ? big : 1.0, mant);
    }
    int64_t last_bad = -1;
    for (int64_t i = 0; i < np; i++) {
        double x = a[i], y = b[i], dist = 0;
        bool bad;
        if (isnan(x) || isnan(y)) {
            bad = isnan(x) != isnan(y);
        } else if (!isfinite(x) || !isfinite(y)) {
            bad = x != y;
        } else {
            if (measure == ULP) {
                dist = fabs((double)(ordered(x, mant) - ordered(y, mant)));
            } else if (measure == SCALED_ULP) {
                dist = fabs(x - y) / scale;
            } else {                            /* each part in ulps of its element's larger part */
                int64_t e0 = i & ~(int64_t)1;
                double big = 0;
                for (int64_t j = e0; j < e0 + 2; j++)
                    if (isfinite(a[j]) && fabs(a[j]) > big)
                        big = fabs(a[j]);
                dist = fabs(x - y) / ulp_at(big > 0 ? big : 0x1p-1022, mant);
            }
            bad = dist > table[t->cls].tolerance;
        }
        if (dist > d->worst)
            d->worst = dist;
        int64_t elem = complex ? i / 2 : i;
        if (bad && elem != last_bad) {         /* a complex element counts once */
            if (d->first < 0)
                d->first = elem;
            d->n_bad++;
            last_bad = elem;
        }
    }
    free(a);
    free(b);
    return d->n_bad == 0;
}
