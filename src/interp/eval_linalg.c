/* eval_linalg.c: cholesky and triangular-solve on f32, f64, c64, c128.
 *
 * Both take batches of matrices: every dimension but the last two is a
 * batch dimension, and each matrix is solved on its own.  Arithmetic is in
 * the element type, one rounding per operation, in the order given here, so
 * results are the same bits on every run and machine (gcc -std=c11 does not
 * contract a*b-c into an fma).  Complex products are (ac-bd) + (ad+bc)i;
 * complex quotients use Smith's algorithm as XLA's CPU and GPU emitters
 * write it, with their rule for a zero divisor (infinite operands follow the
 * plain formula).
 *
 * cholesky(a), lower=true|false (absent: false), after XLA's
 * CholeskyExpander, which XLA's CPU backend runs:
 *  - lower: l with a = l l^H, read from a's lower triangle only.  Upper: u
 *    with a = u^H u, read from a's upper triangle only; computed as the
 *    lower factor of transpose(a), transposed (XLA's way).
 *  - The other triangle of the result is zero.
 *  - Row by row (Cholesky-Banachiewicz): for j < i,
 *      s = 0; s += l[i][k] * conj(l[j][k]) for k = 0 .. j-1;
 *      l[i][j] = (a[i][j] - s) / l[j][j]      (a division by the real l[j][j])
 *    and l[i][i] = sqrt(re(a[i][i]) - re(s)) (s over k < i, as above), imaginary
 *    part 0: the imaginary part of a complex diagonal is not read.
 *  - A matrix for which any of those square roots is NaN (not positive
 *    definite, or NaN in the triangle read) becomes all NaN (complex:
 *    NaN + 0i), as XLA's expander does; the other matrices of the batch are
 *    not affected.  A zero pivot on the last row is no error (XLA's rule):
 *    semidefinite matrices can give a zero diagonal or infinities.
 *
 * triangular-solve(a, b), left_side, lower, unit_diagonal (true|false,
 * absent: false), transpose_a=NO_TRANSPOSE|TRANSPOSE|ADJOINT: solves
 * op(a) x = b (left_side) or x op(a) = b for x, shaped like b.
 *  - Only the triangle of a that lower names is read; with unit_diagonal
 *    the diagonal is taken as 1 and not read either.
 *  - Each right-hand side vector (a column of b for left_side, a row of b
 *    otherwise) solves t y = c, t being op(a) (left_side) or its transpose,
 *    by forward substitution when t is lower triangular, back substitution
 *    when upper:
 *      s = c[i]; s -= t[i][k] * y[k] for k ascending over the solved
 *      entries (k < i forward, k > i back); y[i] = s / t[i][i] (or s).
 *    A zero diagonal divides by zero (infinities or NaN, no error).
 *
 * f16, bf16 and the narrower floats are valid HLO we do not run
 * (ERR_UNSUPPORTED); so are dynamic shapes. */
#include "eval.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct C64 { float re, im; } C64;       /* the storage layout of c64 */
typedef struct C128 { double re, im; } C128;

/* ------------------------------------------------------------------ */
/* Scalar arithmetic for each element type                              */

static inline float add_f32(float a, float b) { return a + b; }
static inline double add_f64(double a, double b) { return a + b; }
static inline C64 add_c64(C64 a, C64 b) { return (C64){a.re + b.re, a.im + b.im}; }
static inline C128 add_c128(C128 a, C128 b) { return (C128){a.re + b.re, a.im + b.im}; }

static inline float sub_f32(float a, float b) { return a - b; }
static inline double sub_f64(double a, double b) { return a - b; }
static inline C64 sub_c64(C64 a, C64 b) { return (C64){a.re - b.re, a.im - b.im}; }
static inline C128 sub_c128(C128 a, C128 b) { return (C128){a.re - b.re, a.im - b.im}; }

static inline float mul_f32(float a, float b) { return a * b; }
static inline double mul_f64(double a, double b) { return a * b; }
static inline C64 mul_c64(C64 a, C64 b) { return (C64){a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}; }
static inline C128 mul_c128(C128 a, C128 b)
{
    return (C128){a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}

static inline float conj_f32(float a) { return a; }
static inline double conj_f64(double a) { return a; }
static inline C64 conj_c64(C64 a) { return (C64){a.re, -a.im}; }
static inline C128 conj_c128(C128 a) { return (C128){a.re, -a.im}; }

static inline float div_f32(float a, float b) { return a / b; }
static inline double div_f64(double a, double b) { return a / b; }

/* Smith's algorithm, (a + bi) / (c + di) with x = a + bi, y = c + di, as
 * XLA's emitters write it; a zero divisor gives (a/c, b/c), which is XLA's
 * (copysign(inf, c) a, copysign(inf, c) b). */
#define SMITH_DIV(T, R, x, y)                                                      \
    do {                                                                           \
        if ((y).re == 0 && (y).im == 0)                                            \
            return (T){(x).re / (y).re, (x).im / (y).re};                          \
        if (fabs((double)(y).re) >= fabs((double)(y).im)) {                        \
            R r = (y).im / (y).re, den = (y).re + (y).im * r;                      \
            return (T){((x).re + (x).im * r) / den, ((x).im - (x).re * r) / den};  \
        }                                                                          \
        R r = (y).re / (y).im, den = (y).im + (y).re * r;                          \
        return (T){((x).re * r + (x).im) / den, ((x).im * r - (x).re) / den};      \
    } while (0)
static inline C64 div_c64(C64 x, C64 y) { SMITH_DIV(C64, float, x, y); }
static inline C128 div_c128(C128 x, C128 y) { SMITH_DIV(C128, double, x, y); }

/* Division by a real. */
static inline float rdiv_f32(float a, float d) { return a / d; }
static inline double rdiv_f64(double a, double d) { return a / d; }
static inline C64 rdiv_c64(C64 a, float d) { return (C64){a.re / d, a.im / d}; }
static inline C128 rdiv_c128(C128 a, double d) { return (C128){a.re / d, a.im / d}; }

static inline float re_f32(float a) { return a; }
static inline double re_f64(double a) { return a; }
static inline float re_c64(C64 a) { return a.re; }
static inline double re_c128(C128 a) { return a.re; }

static inline float from_re_f32(float r) { return r; }
static inline double from_re_f64(double r) { return r; }
static inline C64 from_re_c64(float r) { return (C64){r, 0.0f}; }
static inline C128 from_re_c128(double r) { return (C128){r, 0.0}; }

/* ------------------------------------------------------------------ */
/* Cholesky                                                             */

/* One n x n matrix into out (see the file comment).  at(i, j) is where
 * element (i, j) of the lower factor lives, in a and in out alike: row
 * major for lower, transposed for upper.  false when a square root was NaN
 * (out then holds a partial factor). */
#define DEFINE_CHOLESKY(S, T, R, SQRT)                                             \
    static bool cholesky_##S(const T *a, T *out, int64_t n, bool lower)            \
    {                                                                              \
        int64_t si = lower ? n : 1, sj = lower ? 1 : n;                            \
        for (int64_t i = 0; i < n; i++) {                                          \
            for (int64_t j = 0; j <= i; j++) {                                     \
                T s = from_re_##S(0);                                              \
                for (int64_t k = 0; k < j; k++)                                    \
                    s = add_##S(s, mul_##S(out[i * si + k * sj], conj_##S(out[j * si + k * sj]))); \
                if (j < i) {                                                       \
                    T v = sub_##S(a[i * si + j * sj], s);                          \
                    out[i * si + j * sj] = rdiv_##S(v, re_##S(out[j * si + j * sj])); \
                    continue;                                                      \
                }                                                                  \
                R d = SQRT(re_##S(a[i * si + i * sj]) - re_##S(s));                \
                if (isnan(d))                                                      \
                    return false;                                                  \
                out[i * si + i * sj] = from_re_##S(d);                             \
            }                                                                      \
            for (int64_t j = i + 1; j < n; j++)                                    \
                out[i * si + j * sj] = from_re_##S(0);                             \
        }                                                                          \
        return true;                                                               \
    }                                                                              \
    static void cholesky_batch_##S(const void *a, void *out, int64_t batch, int64_t n, bool lower) \
    {                                                                              \
        const T *pa = a;                                                           \
        T *po = out;                                                               \
        for (int64_t b = 0; b < batch; b++, pa += n * n, po += n * n)              \
            if (!cholesky_##S(pa, po, n, lower))                                   \
                for (int64_t e = 0; e < n * n; e++)                                \
                    po[e] = from_re_##S(NAN);                                      \
    }

DEFINE_CHOLESKY(f32, float, float, sqrtf)
DEFINE_CHOLESKY(f64, double, double, sqrt)
DEFINE_CHOLESKY(c64, C64, float, sqrtf)
DEFINE_CHOLESKY(c128, C128, double, sqrt)

/* ------------------------------------------------------------------ */
/* Triangular solve                                                     */

typedef enum Transpose { TRANSPOSE_NONE, TRANSPOSE_PLAIN, TRANSPOSE_ADJOINT } Transpose;

/* One solve, reduced to t y = c for each right-hand side vector. */
typedef struct Solve {
    int64_t m;          /* order of a */
    int64_t nrhs;       /* right-hand side vectors per matrix */
    bool left;          /* left_side: vectors are b's columns (stride nrhs), else its rows */
    bool t_lower;       /* t = op(a) (or its transpose) is lower triangular */
    bool unit;          /* unit_diagonal */
    bool conj;          /* t's elements are conjugates of a's (ADJOINT) */
    int64_t ti, tj;     /* t[i][j] is a[i * ti + j * tj] (before conj) */
} Solve;

/* Rows of x in solving order (forward for lower t, back for upper); for a
 * row i, the solved rows k in ascending order.  Left side: whole rows of x
 * (nrhs columns) at a time, each element in the documented order. */
#define DEFINE_SOLVE(S, T)                                                         \
    static inline T t_at_##S(const Solve *p, const T *a, int64_t i, int64_t j)     \
    {                                                                              \
        T v = a[i * p->ti + j * p->tj];                                            \
        return p->conj ? conj_##S(v) : v;                                          \
    }                                                                              \
    static void solve_left_##S(const Solve *p, const T *a, T *x)                   \
    {                                                                              \
        int64_t m = p->m, w = p->nrhs;                                             \
        for (int64_t step = 0; step < m; step++) {                                 \
            int64_t i = p->t_lower ? step : m - 1 - step;                          \
            int64_t k0 = p->t_lower ? 0 : i + 1, k1 = p->t_lower ? i : m;          \
            T *xi = x + i * w;                                                     \
            for (int64_t k = k0; k < k1; k++) {                                    \
                T t = t_at_##S(p, a, i, k);                                        \
                const T *xk = x + k * w;                                           \
                for (int64_t c = 0; c < w; c++)                                    \
                    xi[c] = sub_##S(xi[c], mul_##S(t, xk[c]));                     \
            }                                                                      \
            if (p->unit)                                                           \
                continue;                                                          \
            T d = t_at_##S(p, a, i, i);                                            \
            for (int64_t c = 0; c < w; c++)                                        \
                xi[c] = div_##S(xi[c], d);                                         \
        }                                                                          \
    }                                                                              \
    static void solve_right_##S(const Solve *p, const T *a, T *x)                  \
    {                                                                              \
        int64_t m = p->m;                                                          \
        for (int64_t r = 0; r < p->nrhs; r++, x += m)                              \
            for (int64_t step = 0; step < m; step++) {                             \
                int64_t i = p->t_lower ? step : m - 1 - step;                      \
                int64_t k0 = p->t_lower ? 0 : i + 1, k1 = p->t_lower ? i : m;      \
                T s = x[i];                                                        \
                for (int64_t k = k0; k < k1; k++)                                  \
                    s = sub_##S(s, mul_##S(t_at_##S(p, a, i, k), x[k]));           \
                x[i] = p->unit ? s : div_##S(s, t_at_##S(p, a, i, i));             \
            }                                                                      \
    }                                                                              \
    static void solve_batch_##S(const Solve *p, const void *a, void *x, int64_t batch) \
    {                                                                              \
        const T *pa = a;                                                           \
        T *px = x;                                                                 \
        for (int64_t b = 0; b < batch; b++, pa += p->m * p->m, px += p->m * p->nrhs) \
            (p->left ? solve_left_##S : solve_right_##S)(p, pa, px);               \
    }

DEFINE_SOLVE(f32, float)
DEFINE_SOLVE(f64, double)
DEFINE_SOLVE(c64, C64)
DEFINE_SOLVE(c128, C128)

/* ------------------------------------------------------------------ */
/* Attributes and shapes                                                */

static bool linalg_error(const IrInstr *instr, ErrCode code, const char *what, Error *err)
{
    return error_set(err, code, instr->info->loc, "%s: %s", ir_opcode_name(instr->op), what);
}

/* A raw true/false attribute; absent is false. */
static bool raw_bool(const IrInstr *instr, const char *name, bool *v, Error *err)
{
    const char *text = ir_raw_attr_get(instr, name);
    *v = text && strcmp(text, "true") == 0;
    if (!text || *v || strcmp(text, "false") == 0)
        return true;
    return error_set(err, ERR_SHAPE, instr->info->loc, "%s: %s=%s must be true or false",
                     ir_opcode_name(instr->op), name, text);
}

static bool read_transpose(const IrInstr *instr, Transpose *t, Error *err)
{
    const char *text = ir_raw_attr_get(instr, "transpose_a");
    if (text && strcmp(text, "NO_TRANSPOSE") == 0)
        *t = TRANSPOSE_NONE;
    else if (text && strcmp(text, "TRANSPOSE") == 0)
        *t = TRANSPOSE_PLAIN;
    else if (text && strcmp(text, "ADJOINT") == 0)
        *t = TRANSPOSE_ADJOINT;
    else
        return linalg_error(instr, ERR_SHAPE, "transpose_a must be NO_TRANSPOSE, TRANSPOSE or ADJOINT", err);
    return true;
}

/* s is a static array of one of the four element types we run, with at
 * least two dims; *batch is the product of all dims but the last two. */
static bool matrix_shape(const IrInstr *instr, const IrShape *s, int64_t *batch, Error *err)
{
    if (!ir_shape_is_array(s) || s->rank < 2)
        return error_set(err, ERR_SHAPE, instr->info->loc, "%s: %s is not a batch of matrices",
                         ir_opcode_name(instr->op), ir_shape_str(s));
    if (s->type != IR_TYPE_F32 && s->type != IR_TYPE_F64 && s->type != IR_TYPE_C64 && s->type != IR_TYPE_C128)
        return error_set(err, ERR_UNSUPPORTED, instr->info->loc, "%s: element type %s (only f32, f64, c64, c128)",
                         ir_opcode_name(instr->op), ir_type_name(s->type));
    *batch = 1;
    for (int d = 0; d < s->rank; d++) {
        if (s->dims[d] < 0 || (s->dim_kind && s->dim_kind[d] != IR_DIM_STATIC))
            return error_set(err, ERR_UNSUPPORTED, instr->info->loc, "%s: dynamic shape %s",
                             ir_opcode_name(instr->op), ir_shape_str(s));
        if (d < s->rank - 2)
            *batch *= s->dims[d];
    }
    return true;
}

/* ------------------------------------------------------------------ */
/* Evaluators                                                           */

typedef void CholeskyFn(const void *a, void *out, int64_t batch, int64_t n, bool lower);
typedef void SolveFn(const Solve *p, const void *a, void *x, int64_t batch);

static CholeskyFn *cholesky_for(IrElemType t)
{
    return t == IR_TYPE_F32 ? cholesky_batch_f32 : t == IR_TYPE_F64 ? cholesky_batch_f64
         : t == IR_TYPE_C64 ? cholesky_batch_c64 : cholesky_batch_c128;
}

static SolveFn *solve_for(IrElemType t)
{
    return t == IR_TYPE_F32 ? solve_batch_f32 : t == IR_TYPE_F64 ? solve_batch_f64
         : t == IR_TYPE_C64 ? solve_batch_c64 : solve_batch_c128;
}

bool eval_cholesky(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    (void)it;
    const IrShape *a = args[0]->shape, *s = instr->shape;
    int64_t batch = 0;
    bool lower = false;
    if (!matrix_shape(instr, a, &batch, err) || !raw_bool(instr, "lower", &lower, err))
        return false;
    int64_t n = a->dims[a->rank - 1];
    if (a->dims[a->rank - 2] != n || !ir_shape_is_array(s) || !ir_shape_equal(s, a))
        return linalg_error(instr, ERR_SHAPE, "operand and result must be the same batch of square matrices", err);
    Value *v = value_new_array(s, err);
    if (!v)
        return false;
    if (batch > 0 && n > 0)
        cholesky_for(a->type)(args[0]->data, v->data, batch, n, lower);
    *out = v;
    return true;
}

/* The Solve for a's order m and the raw attributes (see Solve). */
static bool solve_plan(const IrInstr *instr, const IrShape *b, int64_t m, Solve *p, Error *err)
{
    bool lower = false;
    Transpose tr = TRANSPOSE_NONE;
    if (!raw_bool(instr, "left_side", &p->left, err) || !raw_bool(instr, "lower", &lower, err) ||
        !raw_bool(instr, "unit_diagonal", &p->unit, err) || !read_transpose(instr, &tr, err))
        return false;
    /* t = op(a) for left_side, op(a)^T otherwise: t[i][j] is a[j][i] when
     * exactly one of the two transposes applies. */
    bool swap = p->left == (tr != TRANSPOSE_NONE);
    p->m = m;
    p->nrhs = b->dims[b->rank - (p->left ? 1 : 2)];
    p->t_lower = lower != swap;
    p->conj = tr == TRANSPOSE_ADJOINT;
    p->ti = swap ? 1 : m;
    p->tj = swap ? m : 1;
    if (b->dims[b->rank - (p->left ? 2 : 1)] != m)
        return linalg_error(instr, ERR_SHAPE, "b does not match the order of a", err);
    return true;
}

bool eval_triangular_solve(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    (void)it;
    const IrShape *a = args[0]->shape, *b = args[1]->shape, *s = instr->shape;
    int64_t batch = 0, b_batch = 0;
    if (!matrix_shape(instr, a, &batch, err) || !matrix_shape(instr, b, &b_batch, err))
        return false;
    int64_t m = a->dims[a->rank - 1];
    bool batch_ok = a->rank == b->rank && a->type == b->type && a->dims[a->rank - 2] == m;
    for (int d = 0; batch_ok && d < a->rank - 2; d++)
        batch_ok = a->dims[d] == b->dims[d];
    if (!batch_ok || !ir_shape_is_array(s) || !ir_shape_equal(s, b))
        return linalg_error(instr, ERR_SHAPE, "a, b and the result do not match", err);
    Solve p;
    if (!solve_plan(instr, b, m, &p, err))
        return false;
    Value *v = value_new_array(s, err);
    if (!v)
        return false;
    if (value_bytes(v) == 0) {
        *out = v;
        return true;
    }
    memcpy(v->data, args[1]->data, value_bytes(v));
    if (m > 0)
        solve_for(a->type)(&p, args[0]->data, v->data, batch);
    *out = v;
    return true;
}
