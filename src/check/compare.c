/* compare.c: how two outputs are compared (exact, tolerance, ulps) and how
 * far an output is from the f64 oracle. */
#include "check.h"
#include "check_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Float bits as an integer that orders like the values: sign-magnitude to
 * two's complement, so +0 and -0 both map to 0. */
static int64_t ordered_bits(IrElemType t, const void *p)
{
    const IrTypeInfo *ti = &ir_type_info[t];
    int bytes = ti->storage_bytes;
    uint64_t bits = 0;
    memcpy(&bits, p, (size_t)bytes);
    if (!ti->has_sign)
        return (int64_t)bits;
    int width = bytes * 8;
    uint64_t sign = 1ull << (width - 1);
    int64_t mag = (int64_t)(bits & (sign - 1));
    return bits & sign ? -mag : mag;
}

static bool is_nan(IrElemType t, const void *p)
{
    return isnan(ir_elem_get_f64(t, p));
}

double check_ulp_distance(IrElemType t, const void *a, const void *b)
{
    bool na = is_nan(t, a), nb = is_nan(t, b);
    if (na || nb)
        return na && nb ? 0 : INFINITY;
    int64_t d = ordered_bits(t, a) - ordered_bits(t, b);
    return (double)(d < 0 ? -d : d);
}

/* check_ulp_of for a float type, from the bits of x: called once per
 * element of every output, so no ilogb/ldexp.  A subnormal double has
 * biased exponent 0, below every type's smallest normal: clamped. */
static inline double ulp_of_float(int min_exp, int mantissa_bits, double x)
{
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    int biased = (int)((bits >> 52) & 0x7ff);
    int e = biased == 0x7ff ? min_exp : biased - 1023;
    if (e < min_exp)
        e = min_exp;
    int p = e - mantissa_bits;
    if (p < -1022)
        return ldexp(1.0, p);               /* f64 near its subnormals only */
    uint64_t u = (uint64_t)(p + 1023) << 52;
    double r;
    memcpy(&r, &u, sizeof r);
    return r;
}

double check_ulp_of(IrElemType t, double x)
{
    const IrTypeInfo *ti = &ir_type_info[t];
    if (!ir_type_is_float(t))
        return 1.0;
    return ulp_of_float(1 - ti->bias, ti->mantissa_bits, x);    /* 1 - bias: the smallest normal's exponent */
}

bool check_elements_agree(IrElemType t, const void *a, const void *b, const CheckTolerance *tol)
{
    size_t es = (size_t)ir_type_storage_bytes(t);
    bool is_float = ir_type_is_float(t);
    if (tol->mode == CHECK_EXACT || tol->mode == CHECK_AUTO || !(is_float || ir_type_is_int(t)))
        return memcmp(a, b, es) == 0 || (is_float && is_nan(t, a) && is_nan(t, b));
    if (tol->mode == CHECK_ULP && is_float)
        return check_ulp_distance(t, a, b) <= tol->ulp;
    double x = ir_elem_get_f64(t, a), y = ir_elem_get_f64(t, b);
    if (isnan(x) || isnan(y))
        return isnan(x) && isnan(y);
    if (isinf(x) || isinf(y))
        return x == y;
    return fabs(x - y) <= tol->atol + tol->rtol * fabs(y);
}

bool check_within_sizes(const Value *v, int64_t i)
{
    const IrShape *s = v->shape;
    if (!v->sizes)
        return true;
    for (int d = s->rank - 1; d >= 0; d--) {
        int64_t dim = s->dims[d] ? s->dims[d] : 1;
        if (i % dim >= v->sizes[d])
            return false;
        i /= dim;
    }
    return true;
}

/* Values of dynamic size: they differ where an element lies within the
 * runtime sizes of one and not of the other, or within both and differs;
 * the padding past the sizes is no part of either. */
static int64_t first_difference_sized(const Value *a, const Value *b, const CheckTolerance *tol)
{
    IrElemType t = a->shape->type;
    size_t es = (size_t)ir_type_storage_bytes(t);
    for (int64_t i = 0, n = value_elements(a); i < n; i++) {
        bool in_a = check_within_sizes(a, i), in_b = check_within_sizes(b, i);
        if (in_a != in_b)
            return i;
        if (in_a && !check_elements_agree(t, (const char *)a->data + i * (int64_t)es,
                                          (const char *)b->data + i * (int64_t)es, tol))
            return i;
    }
    return -1;
}

int64_t check_first_difference(const Value *a, const Value *b, const CheckTolerance *tol)
{
    IrElemType t = a->shape->type;
    size_t es = (size_t)ir_type_storage_bytes(t);
    int64_t n = value_elements(a);
    if (a->sizes || b->sizes)
        return first_difference_sized(a, b, tol);
    if (tol->mode == CHECK_EXACT && memcmp(a->data, b->data, (size_t)n * es) == 0)
        return -1;      /* the common case, at memcmp speed */
    for (int64_t i = 0; i < n; i++)
        if (!check_elements_agree(t, (const char *)a->data + i * (int64_t)es,
                                  (const char *)b->data + i * (int64_t)es, tol))
            return i;
    return -1;
}

/* ---- Values as doubles */

double *check_values_f64(const Value *v)
{
    IrElemType t = v->shape->type;
    int64_t n = value_elements(v);
    double *d = xmalloc((size_t)(n ? n : 1) * sizeof *d);
    switch ((int)t) {
    case IR_TYPE_F64:
        memcpy(d, v->data, (size_t)n * sizeof *d);
        break;
    case IR_TYPE_F32:
        for (int64_t i = 0; i < n; i++)
            d[i] = ((const float *)v->data)[i];
        break;
    case IR_TYPE_BF16:
        for (int64_t i = 0; i < n; i++)
            d[i] = ir_bf16_to_f32(((const uint16_t *)v->data)[i]);
        break;
    default: {
        size_t es = (size_t)ir_type_storage_bytes(t);
        for (int64_t i = 0; i < n; i++)
            d[i] = ir_elem_get_f64(t, (const char *)v->data + (size_t)i * es);
    }
    }
    return d;
}

/* ---- Accuracy against the oracle */

static void accuracy_add_f64(CheckAccuracy *acc, IrElemType t, const double *x, const double *o, int64_t n)
{
    bool is_float = ir_type_is_float(t);
    int min_exp = 1 - ir_type_info[t].bias, mb = ir_type_info[t].mantissa_bits;
    CheckAccuracy a = *acc;
    for (int64_t i = 0; i < n; i++) {
        double v = x[i], w = o[i];
        a.n++;
        if (!isfinite(w) || !isfinite(v)) {
            a.nonfinite += !(v == w || (isnan(v) && isnan(w)));
            continue;
        }
        double e = fabs(v - w);
        double rel = w != 0 ? e / fabs(w) : (e != 0 ? INFINITY : 0);
        double ulp = e / (is_float ? ulp_of_float(min_exp, mb, w) : 1.0);
        a.sum_abs += e;
        a.sum_ulp += ulp;
        if (e > a.max_abs)
            a.max_abs = e;
        if (rel > a.max_rel)
            a.max_rel = rel;
        if (ulp > a.max_ulp)
            a.max_ulp = ulp;
    }
    *acc = a;
}

void check_accuracy_add(CheckAccuracy *acc, const Value *v, const Value *oracle)
{
    double *x = check_values_f64(v);
    accuracy_add_f64(acc, v->shape->type, x, oracle->data, value_elements(v));
    free(x);
}

static void duel_add_f64(CheckDuel *duel, const double *xb, const double *xa, const double *o, int64_t n)
{
    CheckDuel d = *duel;
    for (int64_t i = 0; i < n; i++) {
        double b = fabs(xb[i] - o[i]), a = fabs(xa[i] - o[i]);
        if (isnan(a) || isnan(b) || a == b)
            d.equal++;
        else if (a < b)
            d.better++;
        else
            d.worse++;
    }
    *duel = d;
}

void check_duel_add(CheckDuel *duel, const Value *before, const Value *after, const Value *oracle)
{
    double *xb = check_values_f64(before), *xa = check_values_f64(after);
    duel_add_f64(duel, xb, xa, oracle->data, value_elements(before));
    free(xb);
    free(xa);
}

void check_judge_add(CheckAccuracy *acc_before, CheckAccuracy *acc_after, CheckDuel *duel, const Value *before,
                     const Value *after, const Value *oracle)
{
    int64_t n = value_elements(before);
    double *xb = check_values_f64(before), *xa = check_values_f64(after);
    const double *o = oracle->data;
    accuracy_add_f64(acc_before, before->shape->type, xb, o, n);
    accuracy_add_f64(acc_after, after->shape->type, xa, o, n);
    duel_add_f64(duel, xb, xa, o, n);
    double pb = 0, pa = 0;
    for (int64_t i = 0; i < n; i++)
        if (isfinite(o[i]) && isfinite(xb[i]) && isfinite(xa[i])) {
            pb += fabs(xb[i] - o[i]);
            pa += fabs(xa[i] - o[i]);
        }
    acc_before->paired = acc_after->paired = true;
    acc_before->sum_abs_paired += pb;
    acc_after->sum_abs_paired += pa;
    free(xb);
    free(xa);
}

void check_accuracy_merge(CheckAccuracy *a, const CheckAccuracy *b)
{
    a->n += b->n;
    a->sum_abs += b->sum_abs;
    a->sum_ulp += b->sum_ulp;
    a->nonfinite += b->nonfinite;
    a->max_abs = fmax(a->max_abs, b->max_abs);
    a->max_rel = fmax(a->max_rel, b->max_rel);
    a->max_ulp = fmax(a->max_ulp, b->max_ulp);
    a->paired = a->paired || b->paired;
    a->sum_abs_paired += b->sum_abs_paired;
}

double check_judged_mean(const CheckAccuracy *a)
{
    if (!a->n)
        return 0;
    return (a->paired ? a->sum_abs_paired : a->sum_abs) / (double)a->n;
}

void check_where_text(const IrShape *s, int64_t index, char *out, size_t n)
{
    int64_t idx[IR_MAX_RANK];
    for (int d = s->rank - 1; d >= 0; d--) {
        idx[d] = s->dims[d] ? index % s->dims[d] : 0;
        index = s->dims[d] ? index / s->dims[d] : 0;
    }
    size_t len = (size_t)snprintf(out, n, "[");
    for (int d = 0; d < s->rank && len < n; d++)
        len += (size_t)snprintf(out + len, n - len, "%s%lld", d ? "," : "", (long long)idx[d]);
    if (len < n)
        snprintf(out + len, n - len, "]");
}
