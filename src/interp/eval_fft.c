/* eval_fft.c: fft, fft_type=FFT|IFFT|RFFT|IRFFT, fft_length={...}.
 *
 * Semantics (XLA's operation semantics and HLO evaluator): a transform over
 * the last r = size(fft_length) dims (1 <= r <= 3), once per index of the
 * dims before them; along each transformed dim of length n
 *   FFT   X[k] = sum_j x[j] exp(-2 pi i jk/n)            c64/c128 -> same
 *   IFFT  x[j] = 1/n sum_k X[k] exp(+2 pi i jk/n)        c64/c128 -> same
 *   RFFT  FFT of real input, keeping k = 0 .. n/2 of the last dim
 *         (f32 -> c64, f64 -> c128); the last dim is transformed first
 *   IRFFT the inverse of RFFT (c64 -> f32, c128 -> f64): the other dims are
 *         inverse transformed first, then the last, whose n/2+1 inputs are
 *         extended to n by X[n-k] = conj(X[k]) and whose output keeps the
 *         real part (so the imaginary parts of X[0] and, for even n, of
 *         X[n/2] do not matter), as XLA's evaluator and numpy's irfftn do.
 * RFFT and IRFFT dims must equal fft_length (n/2+1 for the complex side's
 * last dim), as XLA's shape inference and our verifier require.  FFT and
 * IFFT keep the operand's shape and may differ from fft_length in a
 * transformed dim, as XLA's shape inference allows: as XLA's evaluator does,
 * the input is cut to fft_length or padded with zeros, transformed at
 * fft_length, and the output cut to the operand's dims or padded with
 * zeros (XLA:CPU itself returns garbage or aborts there:
 * docs/xla-differences.md).
 *
 * Numerics: whatever the element type, everything is computed in double
 * and rounded once to the result type (c64 and f32 results are one
 * rounding of the double result).  One-dimensional transforms are O(n log n):
 * iterative radix-2 decimation in time for powers of two, Bluestein's chirp-z
 * for every other length (a cyclic convolution of power-of-two size
 * m >= 2n-1, done with the radix-2 transform).  Twiddles and chirps are
 * cos/sin of exactly reduced angles (k^2 mod 2n for the chirp).  The
 * inverse is conj(FFT(conj(x))); the 1/N of IFFT and IRFFT (N the product
 * of fft_length) is applied once, on output. */
#include "eval.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PI 3.14159265358979323846

typedef struct Cx { double re, im; } Cx;

static inline Cx cx_mul(Cx a, Cx b)
{
    return (Cx){a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}

static inline Cx cx_conj(Cx a)
{
    return (Cx){a.re, -a.im};
}

/* exp(-2 pi i num/den) for 0 <= num < den. */
static Cx unit_root(int64_t num, int64_t den)
{
    double t = 2.0 * PI * (double)num / (double)den;
    return (Cx){cos(t), -sin(t)};
}

/* ------------------------------------------------------------------ */
/* One-dimensional transforms                                           */

typedef struct FftPlan {
    int64_t n;          /* transform length */
    int64_t m;          /* radix-2 length: n, or Bluestein's m >= 2n-1 */
    Cx *twiddle;        /* m/2 entries: exp(-2 pi i k/m) */
    Cx *chirp;          /* Bluestein only, n entries: exp(-pi i k^2/n) */
    Cx *kernel;         /* Bluestein only, m entries: FFT of the conjugate chirp, times 1/m */
    Cx *scratch;        /* Bluestein only, m entries */
} FftPlan;

static bool is_pow2(int64_t n)
{
    return n > 0 && (n & (n - 1)) == 0;
}

/* In-place forward transform of x[0..m-1], m a power of two. */
static void radix2(Cx *x, int64_t m, const Cx *twiddle)
{
    for (int64_t i = 1, j = 0; i < m; i++) {
        int64_t bit = m >> 1;
        for (; j & bit; bit >>= 1)
            j ^= bit;
        j |= bit;
        if (i < j) {
            Cx t = x[i];
            x[i] = x[j];
            x[j] = t;
        }
    }
    for (int64_t len = 2; len <= m; len <<= 1) {
        int64_t half = len / 2, step = m / len;
        for (int64_t i = 0; i < m; i += len)
            for (int64_t k = 0; k < half; k++) {
                Cx u = x[i + k], v = cx_mul(x[i + k + half], twiddle[k * step]);
                x[i + k] = (Cx){u.re + v.re, u.im + v.im};
                x[i + k + half] = (Cx){u.re - v.re, u.im - v.im};
            }
    }
}

static void radix2_inverse_unscaled(Cx *x, int64_t m, const Cx *twiddle)
{
    for (int64_t i = 0; i < m; i++)
        x[i] = cx_conj(x[i]);
    radix2(x, m, twiddle);
    for (int64_t i = 0; i < m; i++)
        x[i] = cx_conj(x[i]);
}

static void plan_free(FftPlan *p)
{
    free(p->twiddle);
    free(p->chirp);
    free(p->kernel);
    free(p->scratch);
    memset(p, 0, sizeof *p);
}

static Cx *cx_alloc(int64_t n)
{
    if (n < 0 || (uint64_t)n > SIZE_MAX / sizeof(Cx))
        return NULL;
    return xmalloc_try((size_t)(n ? n : 1) * sizeof(Cx));
}

/* Bluestein's tables: the chirp, and the transformed kernel b with
 * b[k] = b[m-k] = conj(chirp[k]) for 0 <= k < n, zero elsewhere. */
static void bluestein_tables(FftPlan *p)
{
    int64_t n = p->n, m = p->m;
    for (int64_t k = 0, q = 0; k < n; k++) {
        /* q = k^2 mod 2n, kept exact; exp(-pi i q/n) = exp(-2 pi i q/(2n)) */
        p->chirp[k] = unit_root(q, 2 * n);
        q += 2 * k + 1;
        if (q >= 2 * n)
            q -= 2 * n;
    }
    memset(p->kernel, 0, (size_t)m * sizeof(Cx));
    p->kernel[0] = cx_conj(p->chirp[0]);
    for (int64_t k = 1; k < n; k++)
        p->kernel[k] = p->kernel[m - k] = cx_conj(p->chirp[k]);
    radix2(p->kernel, m, p->twiddle);
    for (int64_t k = 0; k < m; k++)
        p->kernel[k] = (Cx){p->kernel[k].re / (double)m, p->kernel[k].im / (double)m};
}

/* false when out of memory (or n absurdly large). */
static bool plan_init(FftPlan *p, int64_t n)
{
    memset(p, 0, sizeof *p);
    p->n = n;
    if (n <= 1)
        return true;
    int64_t m = n;
    if (!is_pow2(n))
        for (m = 1; m < 2 * n - 1; m <<= 1)
            if (m > INT64_MAX / 4)
                return false;
    p->m = m;
    p->twiddle = cx_alloc(m / 2);
    if (!p->twiddle)
        return false;
    for (int64_t k = 0; k < m / 2; k++)
        p->twiddle[k] = unit_root(k, m);
    if (m == n)
        return true;
    p->chirp = cx_alloc(n);
    p->kernel = cx_alloc(m);
    p->scratch = cx_alloc(m);
    if (!p->chirp || !p->kernel || !p->scratch)
        return false;
    bluestein_tables(p);
    return true;
}

/* In-place forward transform of x[0..n-1]. */
static void plan_forward(FftPlan *p, Cx *x)
{
    int64_t n = p->n, m = p->m;
    if (n <= 1)
        return;
    if (m == n) {
        radix2(x, n, p->twiddle);
        return;
    }
    Cx *s = p->scratch;
    for (int64_t k = 0; k < n; k++)
        s[k] = cx_mul(x[k], p->chirp[k]);
    memset(s + n, 0, (size_t)(m - n) * sizeof(Cx));
    radix2(s, m, p->twiddle);
    for (int64_t k = 0; k < m; k++)
        s[k] = cx_mul(s[k], p->kernel[k]);
    radix2_inverse_unscaled(s, m, p->twiddle);
    for (int64_t k = 0; k < n; k++)
        x[k] = cx_mul(s[k], p->chirp[k]);
}

/* In-place inverse transform without the 1/n. */
static void plan_inverse(FftPlan *p, Cx *x)
{
    for (int64_t k = 0; k < p->n; k++)
        x[k] = cx_conj(x[k]);
    plan_forward(p, x);
    for (int64_t k = 0; k < p->n; k++)
        x[k] = cx_conj(x[k]);
}

/* ------------------------------------------------------------------ */
/* The multi-dimensional transform                                      */

typedef enum FftType { FFT_FORWARD, FFT_INVERSE, FFT_REAL_FORWARD, FFT_REAL_INVERSE } FftType;

/* One instruction's transform.  The work array holds one batch item as
 * complex doubles, dims len[0..r-2] then width (len[r-1], or len[r-1]/2+1
 * for RFFT and IRFFT). */
typedef struct Fft {
    FftType type;
    int r;                      /* transformed dims */
    int64_t len[3];             /* fft_length */
    int64_t width;              /* last dim of the work array */
    int64_t io[3];              /* FFT, IFFT: the operand's (and result's) transformed dims */
    int64_t io_elems;           /* their product: the complex elements of one batch item */
    int64_t work_elems;         /* elements of the work array */
    int64_t rows;               /* work_elems / width */
    int64_t batch;              /* product of the dims before the transformed ones */
    double scale;               /* 1, or 1/N for the inverses */
    FftPlan plan[3];
    Cx *work, *line;            /* line: max(len) entries */
} Fft;

static void fft_free(Fft *f)
{
    for (int i = 0; i < 3; i++)
        plan_free(&f->plan[i]);
    free(f->work);
    free(f->line);
}

/* Transforms the work array along dim d (< r-1, or the last for FFT and
 * IFFT), every line of it. */
static void sweep(Fft *f, int d, bool inverse)
{
    int64_t n = f->len[d], stride = 1;
    for (int e = d + 1; e < f->r; e++)
        stride *= e == f->r - 1 ? f->width : f->len[e];
    int64_t outer = f->work_elems / (n * stride);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t s = 0; s < stride; s++) {
            Cx *base = f->work + o * n * stride + s;
            for (int64_t k = 0; k < n; k++)
                f->line[k] = base[k * stride];
            (inverse ? plan_inverse : plan_forward)(&f->plan[d], f->line);
            for (int64_t k = 0; k < n; k++)
                base[k * stride] = f->line[k];
        }
}

/* RFFT's last dim: each real row of n values into width = n/2+1 bins. */
static void real_rows_forward(Fft *f, const void *src, IrElemType t, int64_t item)
{
    int64_t n = f->len[f->r - 1];
    for (int64_t row = 0; row < f->rows; row++) {
        int64_t at = (item * f->rows + row) * n;
        for (int64_t k = 0; k < n; k++)
            f->line[k] = (Cx){t == IR_TYPE_F32 ? ((const float *)src)[at + k] : ((const double *)src)[at + k], 0};
        plan_forward(&f->plan[f->r - 1], f->line);
        memcpy(f->work + row * f->width, f->line, (size_t)f->width * sizeof(Cx));
    }
}

/* IRFFT's last dim: each row of width = n/2+1 bins, extended by conjugate
 * symmetry, into n real values (times scale). */
static void real_rows_inverse(Fft *f, void *dst, IrElemType t, int64_t item)
{
    int64_t n = f->len[f->r - 1], h = f->width;
    for (int64_t row = 0; row < f->rows; row++) {
        const Cx *w = f->work + row * h;
        for (int64_t k = 0; k < h && k < n; k++)
            f->line[k] = w[k];
        for (int64_t k = 1; k <= n - h; k++)
            f->line[n - k] = cx_conj(w[k]);
        plan_inverse(&f->plan[f->r - 1], f->line);
        int64_t at = (item * f->rows + row) * n;
        for (int64_t k = 0; k < n; k++) {
            double v = f->line[k].re * f->scale;
            if (t == IR_TYPE_F32)
                ((float *)dst)[at + k] = (float)v;
            else
                ((double *)dst)[at + k] = v;
        }
    }
}

/* The work array's element of item element e (row-major over f->io), or
 * -1 when fft_length cuts it off.  The work array's dims are f->len (the
 * last one f->width, equal to len for FFT and IFFT). */
static int64_t work_index(const Fft *f, int64_t e)
{
    int64_t w = 0, stride = 1;
    for (int i = f->r - 1; i >= 0; i--) {
        int64_t k = e % f->io[i], n = i == f->r - 1 ? f->width : f->len[i];
        e /= f->io[i];
        if (k >= n)
            return -1;
        w += k * stride;
        stride *= n;
    }
    return w;
}

/* Complex input (FFT, IFFT, IRFFT) of one batch item into the work array,
 * cut to fft_length or padded with zeros. */
static void load_complex(Fft *f, const void *src, IrElemType t)
{
    if (f->io_elems != f->work_elems)
        memset(f->work, 0, (size_t)f->work_elems * sizeof(Cx));
    for (int64_t e = 0; e < f->io_elems; e++) {
        int64_t w = f->io_elems == f->work_elems ? e : work_index(f, e);
        if (w >= 0)
            f->work[w] = t == IR_TYPE_C64 ? (Cx){((const float *)src)[2 * e], ((const float *)src)[2 * e + 1]}
                                          : (Cx){((const double *)src)[2 * e], ((const double *)src)[2 * e + 1]};
    }
}

/* The work array (times scale) as complex output of one batch item, cut to
 * the result's dims or padded with zeros. */
static void store_complex(const Fft *f, void *dst, IrElemType t)
{
    for (int64_t e = 0; e < f->io_elems; e++) {
        int64_t w = f->io_elems == f->work_elems ? e : work_index(f, e);
        double re = w >= 0 ? f->work[w].re * f->scale : 0, im = w >= 0 ? f->work[w].im * f->scale : 0;
        if (t == IR_TYPE_C64) {
            ((float *)dst)[2 * e] = (float)re;
            ((float *)dst)[2 * e + 1] = (float)im;
        } else {
            ((double *)dst)[2 * e] = re;
            ((double *)dst)[2 * e + 1] = im;
        }
    }
}

/* The bytes of one batch item of the complex side (IRFFT's input, RFFT's
 * output, FFT's and IFFT's both). */
static size_t item_bytes(const Fft *f, IrElemType t)
{
    return (size_t)f->io_elems * (size_t)ir_type_storage_bytes(t);
}

/* One batch item, from src (of type in) to dst (of type out). */
static void fft_item(Fft *f, const char *src, IrElemType in, char *dst, IrElemType out, int64_t item)
{
    int last = f->r - 1;
    if (f->type == FFT_REAL_FORWARD)
        real_rows_forward(f, src, in, item);
    else
        load_complex(f, src + (size_t)item * item_bytes(f, in), in);
    bool inverse = f->type == FFT_INVERSE || f->type == FFT_REAL_INVERSE;
    for (int d = 0; d < last; d++)
        sweep(f, d, inverse);
    if (f->type == FFT_FORWARD || f->type == FFT_INVERSE)
        sweep(f, last, inverse);
    if (f->type == FFT_REAL_INVERSE)
        real_rows_inverse(f, dst, out, item);
    else
        store_complex(f, dst + (size_t)item * item_bytes(f, out), out);
}

/* ------------------------------------------------------------------ */
/* Attributes and shapes                                                */

static bool fft_error(const IrInstr *instr, ErrCode code, const char *what, Error *err)
{
    return error_set(err, code, instr->info->loc, "fft: %s", what);
}

static bool read_type(const IrInstr *instr, FftType *t, Error *err)
{
    static const char *const names[] = {"FFT", "IFFT", "RFFT", "IRFFT"};
    const char *w = instr->info->words[IR_WORD_FFT_TYPE];
    for (int i = 0; w && i < 4; i++)
        if (strcmp(w, names[i]) == 0) {
            *t = (FftType)i;
            return true;
        }
    return fft_error(instr, ERR_SHAPE, "fft_type must be FFT, IFFT, RFFT or IRFFT", err);
}

/* The element types the verifier allows for f->type. */
static bool types_ok(const Fft *f, IrElemType in, IrElemType out)
{
    switch (f->type) {
    case FFT_FORWARD: case FFT_INVERSE:
        return (in == IR_TYPE_C64 || in == IR_TYPE_C128) && out == in;
    case FFT_REAL_FORWARD:
        return (in == IR_TYPE_F32 && out == IR_TYPE_C64) || (in == IR_TYPE_F64 && out == IR_TYPE_C128);
    case FFT_REAL_INVERSE:
        return (in == IR_TYPE_C64 && out == IR_TYPE_F32) || (in == IR_TYPE_C128 && out == IR_TYPE_F64);
    }
    return false;
}

static bool is_static(const IrShape *s)
{
    for (int d = 0; d < s->rank; d++)
        if (s->dims[d] < 0 || (s->dim_kind && s->dim_kind[d] != IR_DIM_STATIC))
            return false;
    return true;
}

/* Dims of x and out against fft_length (see the file comment); fills the
 * sizes of f.  An empty array anywhere leaves f->batch or f->rows at 0. */
static bool fft_dims(Fft *f, const IrShape *x, const IrShape *out)
{
    int first = x->rank - f->r;
    if (out->rank != x->rank || first < 0)
        return false;
    f->batch = 1;
    for (int d = 0; d < first; d++) {
        if (out->dims[d] != x->dims[d])
            return false;
        f->batch *= x->dims[d];
    }
    int64_t n = f->len[f->r - 1];
    bool halved = f->type == FFT_REAL_FORWARD || f->type == FFT_REAL_INVERSE;
    f->width = halved && n ? n / 2 + 1 : n;
    const IrShape *complex_side = f->type == FFT_REAL_FORWARD ? out : x;
    const IrShape *real_side = f->type == FFT_REAL_FORWARD ? x : out;
    f->rows = 1;
    f->io_elems = 1;
    for (int i = 0; i < f->r; i++) {
        int d = first + i;
        int64_t want = i == f->r - 1 ? f->width : f->len[i];
        bool irfft_zero = f->type == FFT_REAL_INVERSE && i == f->r - 1 && n == 0 && x->dims[d] == 1;
        if (!halved) {      /* FFT, IFFT: any operand dim, kept by the result */
            if (out->dims[d] != x->dims[d])
                return false;
        } else if ((complex_side->dims[d] != want && !irfft_zero) || real_side->dims[d] != f->len[i]) {
            return false;
        }
        f->io[i] = halved ? complex_side->dims[d] : x->dims[d];
        f->io_elems *= f->io[i];
        if (i < f->r - 1)
            f->rows *= f->len[i];
    }
    f->work_elems = f->rows * f->width;
    return true;
}

/* Reads the instruction into f (plans and buffers not yet made). */
static bool fft_setup(Fft *f, const IrInstr *instr, const IrShape *x, Error *err)
{
    const IrShape *out = instr->shape;
    const IrIntList *len = &instr->lists[IR_LIST_FFT_LENGTH];
    memset(f, 0, sizeof *f);
    if (!read_type(instr, &f->type, err))
        return false;
    if (len->n < 1 || len->n > 3)
        return fft_error(instr, ERR_SHAPE, "fft_length must have 1 to 3 entries", err);
    f->r = len->n;
    for (int i = 0; i < f->r; i++) {
        if (len->v[i] < 0)
            return fft_error(instr, ERR_SHAPE, "fft_length has a negative entry", err);
        f->len[i] = len->v[i];
    }
    if (!ir_shape_is_array(x) || !ir_shape_is_array(out) || !is_static(x) || !is_static(out))
        return fft_error(instr, ERR_UNSUPPORTED, "operand and result must be arrays of static shape", err);
    if (!types_ok(f, x->type, out->type))
        return error_set(err, ERR_SHAPE, instr->info->loc, "fft: element types %s -> %s do not fit fft_type=%s",
                         ir_type_name(x->type), ir_type_name(out->type), instr->info->words[IR_WORD_FFT_TYPE]);
    if (!fft_dims(f, x, out))
        return fft_error(instr, ERR_SHAPE, "operand and result dimensions do not match fft_length", err);
    return true;
}

/* Plans for each transformed dim, the work array and the line buffer. */
static bool fft_alloc(Fft *f, const IrInstr *instr, Error *err)
{
    int64_t longest = 1;
    for (int i = 0; i < f->r; i++) {
        if (!plan_init(&f->plan[i], f->len[i]))
            return fft_error(instr, ERR_NOMEM, "out of memory for the transform tables", err);
        longest = f->len[i] > longest ? f->len[i] : longest;
    }
    f->work = cx_alloc(f->work_elems);
    f->line = cx_alloc(longest);
    if (!f->work || !f->line)
        return fft_error(instr, ERR_NOMEM, "out of memory for the work array", err);
    return true;
}

bool eval_fft(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    (void)it;
    Fft f;
    const IrShape *x = args[0]->shape;
    if (!fft_setup(&f, instr, x, err))
        return false;
    Value *v = value_new_array(instr->shape, err);
    if (!v)
        return false;
    if (value_bytes(v) == 0) {
        *out = v;
        return true;
    }
    if (f.rows * f.width == 0) {    /* a transform of length 0: every output element a padded zero */
        memset(v->data, 0, value_bytes(v));
        *out = v;
        return true;
    }
    int64_t n_total = f.rows * f.len[f.r - 1];
    bool inverse = f.type == FFT_INVERSE || f.type == FFT_REAL_INVERSE;
    f.scale = inverse ? 1.0 / (double)n_total : 1.0;
    if (!fft_alloc(&f, instr, err)) {
        fft_free(&f);
        value_release(v);
        return false;
    }
    for (int64_t item = 0; item < f.batch; item++)
        fft_item(&f, args[0]->data, x->type, v->data, instr->shape->type, item);
    fft_free(&f);
    *out = v;
    return true;
}
