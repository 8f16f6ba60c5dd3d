/* compare.c: how two outputs are compared (exact, tolerance, ulps) and how
 * far an output is from the f64 oracle. */
#include "check.h"

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

double check_ulp_of(IrElemType t, double x)
{
    const IrTypeInfo *ti = &ir_type_info[t];
    if (!ir_type_is_float(t))
        return 1.0;
    int min_exp = 1 - ti->bias;             /* exponent of the smallest normal */
    int e = x == 0 || !isfinite(x) ? min_exp : ilogb(x);
    if (e < min_exp)
        e = min_exp;
    return ldexp(1.0, e - ti->mantissa_bits);
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

int64_t check_first_difference(const Value *a, const Value *b, const CheckTolerance *tol)
{
    IrElemType t = a->shape->type;
    size_t es = (size_t)ir_type_storage_bytes(t);
    int64_t n = value_elements(a);
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

static double element_error(IrElemType t, double v, double o, double *rel, double *ulp, bool *bad)
{
    *bad = false;
    if (!isfinite(o) || !isfinite(v)) {
        *bad = !(v == o || (isnan(v) && isnan(o)));
        *rel = *ulp = 0;
        return 0;
    }
    double abs_err = fabs(v - o);
    *rel = o != 0 ? abs_err / fabs(o) : (abs_err != 0 ? INFINITY : 0);
    *ulp = abs_err / check_ulp_of(t, o);
    return abs_err;
}

void check_accuracy_add(CheckAccuracy *acc, const Value *v, const Value *oracle)
{
    IrElemType t = v->shape->type;
    const double *o = oracle->data;
    double *x = check_values_f64(v);
    int64_t n = value_elements(v);
    for (int64_t i = 0; i < n; i++) {
        double rel, ulp;
        bool bad;
        double e = element_error(t, x[i], o[i], &rel, &ulp, &bad);
        acc->n++;
        if (bad) {
            acc->nonfinite++;
            continue;
        }
        acc->sum_abs += e;
        acc->sum_ulp += ulp;
        acc->max_abs = fmax(acc->max_abs, e);
        acc->max_rel = fmax(acc->max_rel, rel);
        acc->max_ulp = fmax(acc->max_ulp, ulp);
    }
    free(x);
}

void check_duel_add(CheckDuel *duel, const Value *before, const Value *after, const Value *oracle)
{
    const double *o = oracle->data;
    double *xb = check_values_f64(before), *xa = check_values_f64(after);
    int64_t n = value_elements(before);
    for (int64_t i = 0; i < n; i++) {
        double b = fabs(xb[i] - o[i]), a = fabs(xa[i] - o[i]);
        if (isnan(a) || isnan(b) || a == b)
            duel->equal++;
        else if (a < b)
            duel->better++;
        else
            duel->worse++;
    }
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
}
