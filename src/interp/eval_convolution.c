/* eval_convolution.c: convolution, as XLA's operation semantics ("Conv")
 * and its evaluator define it: any dim_labels, 0 or more spatial dims,
 * window stride, padding (negative too), lhs_dilate (transposed
 * convolution), rhs_dilate (atrous), window reversal, and
 * feature_group_count / batch_group_count.
 *
 * Output element (b, o, p) is the sum, over the window positions w and the
 * kernel input features i, of
 *     lhs[b', g*ki + i, x] * rhs[w', i, o]     with, per spatial dim,
 *     x = (p*stride + w*rhs_dilate - pad_lo) / lhs_dilate
 * where a position x that is not a whole index (it falls between dilated
 * input elements) or lies outside the input adds nothing, and w' = size-1-w
 * where the window is reversed.  Groups: output features split into G equal
 * ranges, and range g sees input features [g*ki, (g+1)*ki) under
 * feature_group_count G (so g = 0 always reads all ki = C features
 * otherwise), or the input batch b' = b + g * N/G under batch_group_count G
 * (b' = b otherwise).
 *
 * Method: im2col.  Per group, the receptive field of each output position
 * (batch, spatial..., in row-major order) is gathered into one row of K =
 * window positions x ki elements (window position major, feature minor),
 * padding and dilation resolved in the gather as zeros, and the rows are
 * multiplied by the kernel gathered once as a [K, O/G] matrix per group.
 * A zero that stands for padding or a hole must add nothing, even against
 * an inf or NaN kernel element (0 x inf would be NaN): such kernel elements
 * are taken out of the GEMM (made zero) and their products added after it,
 * only for the rows where their window position reads a real element
 * (add_nonfinite_taps; as operation_semantics' pseudo-code, XLA's evaluator
 * and XLA:CPU skip padding).
 * Feature groups are gathered together: each window position's features of
 * all groups are loaded in one run and dealt out to the groups' matrices,
 * so a depthwise convolution does not pay a call per element.
 * The product is dot's (eval_matmul_*, eval_dot.c): f32/f64 through
 * sgemm/dgemm, bf16/f16/f8 widened exactly to f32, summed by sgemm and
 * rounded once, complex through cgemm/zgemm, integers exact and wrapping
 * (XLA's evaluator instead sums s8..s32 in 64 bits and saturates; the
 * compiled backends wrap, as dot does).  Rows are gathered in chunks of at
 * most CHUNK_BYTES, so memory stays bounded whatever the batch.  When the
 * output is laid out (batch, spatial 0..n-1, feature) and the compute type
 * holds the result's own bits, the products land in the output in place;
 * otherwise each chunk goes through a small buffer.
 *
 * The shapes are the verifier's (ir_verify_instr: XLA's InferConvolveShape,
 * overflow checked), so every index below stays in range, and with a
 * non-empty result and kernel input features every size below is at most
 * an operand's or the result's element count.  The chunking and
 * so the summation order depend on the shapes alone: results are the same
 * bits on every run. */
#include "eval.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { CHUNK_BYTES = 2 << 20 };     /* im2col rows (and their products) per GEMM */

typedef struct Geom {
    int n;                          /* spatial dims */
    const IrWindowDim *win;         /* n entries */
    int64_t groups;                 /* G: the group count above 1, else 1 */
    bool by_batch;                  /* the groups split the batch (batch_group_count) */
    int64_t batch_out, ki, og, o;   /* output batch, kernel input features, output features per group, in all */
    int64_t kwin, k, rows;          /* window positions; K = kwin x ki; output positions */
    int64_t in_size[IR_MAX_RANK], dilated[IR_MAX_RANK], out_size[IR_MAX_RANK];
    /* element strides of each role's dims */
    int64_t in_b, in_f, in_s[IR_MAX_RANK];
    int64_t k_i, k_o, k_s[IR_MAX_RANK];
    int64_t out_b, out_f, out_s[IR_MAX_RANK];
    bool out_rows;                  /* output dims are (batch, spatial 0..n-1, feature) in order */
} Geom;

/* The convolution's own data, for the kernels below. */
typedef struct ConvRun {
    const Geom *g;
    const EvalMatmul *mm;
    IrElemType lhs_type, rhs_type;
    const char *lhs, *rhs;
    char *out;
    int64_t **taps;                 /* taps[s][w]: input offset of window position w, or -1 */
    int64_t n_nonfinite;            /* kernel elements that are inf or NaN (real float compute) */
    struct NonFinite *nonfinite;    /* them, taken out of the kernel matrix */
} ConvRun;

/* An inf or NaN element of the kernel matrix: group, row k (window position
 * k / ki), column o, and its value (f32 or f64 compute). */
typedef struct NonFinite {
    int64_t group, k, o;
    double v;
} NonFinite;

/* ---- Geometry */

static void init_geom(Geom *g, const IrInstr *instr, const IrShape *l, const IrShape *r, const IrShape *out)
{
    const IrConvDims *d = instr->info->conv_dims;
    int64_t ls[IR_MAX_RANK], rs[IR_MAX_RANK], os[IR_MAX_RANK];
    IrOptInt fgc = instr->ints[IR_INT_FEATURE_GROUP_COUNT], bgc = instr->ints[IR_INT_BATCH_GROUP_COUNT];
    eval_strides(l, ls);
    eval_strides(r, rs);
    eval_strides(out, os);
    memset(g, 0, sizeof *g);
    g->n = d->n_spatial;
    g->win = instr->info->window;
    g->by_batch = bgc.present && bgc.v > 1;
    g->groups = g->by_batch ? bgc.v : fgc.present ? fgc.v : 1;
    g->batch_out = out->dims[d->output_batch];
    g->ki = r->dims[d->kernel_input_feature];
    g->o = out->dims[d->output_feature];
    g->og = g->o / g->groups;
    g->in_b = ls[d->input_batch], g->in_f = ls[d->input_feature];
    g->k_i = rs[d->kernel_input_feature], g->k_o = rs[d->kernel_output_feature];
    g->out_b = os[d->output_batch], g->out_f = os[d->output_feature];
    g->out_rows = d->output_batch == 0 && d->output_feature == g->n + 1;
    g->kwin = 1;
    g->rows = g->batch_out;
    for (int s = 0; s < g->n; s++) {
        const IrWindowDim *w = &g->win[s];
        g->in_size[s] = l->dims[d->input_spatial[s]];
        g->dilated[s] = g->in_size[s] == 0 ? 0 : (g->in_size[s] - 1) * w->lhs_dilate + 1;
        g->out_size[s] = out->dims[d->output_spatial[s]];
        g->in_s[s] = ls[d->input_spatial[s]];
        g->k_s[s] = rs[d->kernel_spatial[s]];
        g->out_s[s] = os[d->output_spatial[s]];
        g->out_rows = g->out_rows && d->output_spatial[s] == s + 1;
        g->kwin *= w->size;
        g->rows *= g->out_size[s];
    }
    g->k = g->kwin * g->ki;
}

/* An output position: batch index and spatial indices, odometer order. */
typedef struct RowPos {
    int64_t b, p[IR_MAX_RANK];
} RowPos;

static void rowpos_at(const Geom *g, int64_t row, RowPos *rp)
{
    for (int s = g->n - 1; s >= 0; s--) {
        rp->p[s] = row % g->out_size[s];
        row /= g->out_size[s];
    }
    rp->b = row;
}

static void rowpos_next(const Geom *g, RowPos *rp)
{
    for (int s = g->n - 1; s >= 0; s--) {
        if (++rp->p[s] < g->out_size[s])
            return;
        rp->p[s] = 0;
    }
    rp->b++;
}

/* Steps the window position w (last dim fastest); false after the last. */
static bool window_next(const Geom *g, int64_t *w)
{
    for (int s = g->n - 1; s >= 0; s--) {
        if (++w[s] < g->win[s].size)
            return true;
        w[s] = 0;
    }
    return false;
}

/* ---- im2col */

/* How many matrices one gather fills: every feature group's (their
 * features sit side by side in the input), or one batch group's. */
static int64_t gather_mats(const Geom *g)
{
    return g->by_batch ? 1 : g->groups;
}

/* taps[w] for output index p of spatial dim s: the input offset window
 * position w reads, or -1 where it reads padding or a dilation hole.  The
 * padded position u - pad_lo is taken modulo 2^64: any true value outside
 * [0, dilated) lands at or above it, so one unsigned compare tests both ends
 * without overflow (u itself is below the padded size, which fits int64). */
static void fill_taps(const Geom *g, int s, int64_t p, int64_t *taps)
{
    const IrWindowDim *w = &g->win[s];
    uint64_t dilated = (uint64_t)g->dilated[s], lhs_dilate = (uint64_t)w->lhs_dilate;
    for (int64_t k = 0; k < w->size; k++) {
        uint64_t x = (uint64_t)(p * w->stride + k * w->rhs_dilate) - (uint64_t)w->pad_lo;
        bool hit = x < dilated && (lhs_dilate == 1 || x % lhs_dilate == 0);
        taps[k] = hit ? (int64_t)(x / lhs_dilate) * g->in_s[s] : -1;
    }
}

/* Copies a run of n bytes: a fixed-size copy for the short runs of grouped
 * convolutions (one feature per group in a depthwise one). */
static void copy_bytes(char *dst, const char *src, size_t n)
{
    switch (n) {
    case 2: memcpy(dst, src, 2); return;
    case 4: memcpy(dst, src, 4); return;
    case 8: memcpy(dst, src, 8); return;
    case 16: memcpy(dst, src, 16); return;
    default: memcpy(dst, src, n); return;
    }
}

/* One im2col row of each of the row's matrices (dst, dst + plane, ...):
 * for each window position, the features at base plus the position's taps
 * are loaded once, or zeros, and dealt out ki to a matrix. */
static void gather_row(const ConvRun *cv, int64_t base, char *dst, int64_t plane, char *deal)
{
    const Geom *g = cv->g;
    int64_t w[IR_MAX_RANK] = { 0 }, n_mats = gather_mats(g);
    size_t run = (size_t)(g->ki * cv->mm->elem_bytes);
    int lb = ir_type_storage_bytes(cv->lhs_type);
    do {
        char *to = n_mats == 1 ? dst : deal;
        int64_t off = base;
        bool hit = true;
        for (int s = 0; s < g->n && hit; s++) {
            int64_t t = cv->taps[s][w[s]];
            hit = t >= 0;
            off += t;
        }
        if (hit)
            eval_matmul_load(cv->mm, cv->lhs_type, to, cv->lhs + off * lb, n_mats * g->ki, g->in_f);
        else
            memset(to, 0, run * (size_t)n_mats);
        for (int64_t m = 0; m < n_mats && n_mats > 1; m++)
            copy_bytes(dst + m * plane, deal + (size_t)m * run, run);
        dst += run;
    } while (window_next(g, w));
}

/* Rows r0 .. r0+nr-1 of the im2col matrices: of every feature group at once
 * (group g's at a + g*plane), or of one batch group. */
static void gather_rows(const ConvRun *cv, int64_t group, int64_t r0, int64_t nr, char *a, int64_t plane,
                        char *deal)
{
    const Geom *g = cv->g;
    RowPos rp;
    rowpos_at(g, r0, &rp);
    int64_t batch0 = g->by_batch ? group * g->batch_out : 0;
    for (int64_t i = 0; i < nr; i++) {
        for (int s = 0; s < g->n; s++)
            fill_taps(g, s, rp.p[s], cv->taps[s]);
        gather_row(cv, (batch0 + rp.b) * g->in_b, a + i * g->k * cv->mm->elem_bytes, plane, deal);
        rowpos_next(g, &rp);
    }
}

/* The kernel as G matrices [K, O/G]: row (window position, input feature),
 * the window position reversed where the window is. */
static void gather_kernel(const ConvRun *cv, char *kb)
{
    const Geom *g = cv->g;
    int rb = ir_type_storage_bytes(cv->rhs_type), eb = cv->mm->elem_bytes;
    for (int64_t group = 0; group < g->groups; group++) {
        int64_t w[IR_MAX_RANK] = { 0 };
        do {
            int64_t off = group * g->og * g->k_o;
            for (int s = 0; s < g->n; s++)
                off += (g->win[s].reversal ? g->win[s].size - 1 - w[s] : w[s]) * g->k_s[s];
            for (int64_t i = 0; i < g->ki; i++, kb += g->og * eb)
                eval_matmul_load(cv->mm, cv->rhs_type, kb, cv->rhs + (off + i * g->k_i) * rb, g->og, g->k_o);
        } while (window_next(g, w));
    }
}

/* ---- Non-finite kernel elements against padding */

static void *alloc_bytes(int64_t n, int64_t size, const IrInstr *instr, Error *err);

/* Finds the inf and NaN elements of the kernel matrices (real float
 * compute), records them in cv and makes them zero there; false only when
 * out of memory. */
static bool take_nonfinite(ConvRun *cv, char *kb, const IrInstr *instr, Error *err)
{
    const Geom *g = cv->g;
    int fb = eval_matmul_real_float_bytes(cv->mm);
    int64_t n = g->groups * g->k * g->og, count = 0;
    for (int pass = 0; fb && pass < 2; pass++) {
        for (int64_t e = 0; e < n; e++) {
            double v = fb == 4 ? (double)((float *)(void *)kb)[e] : ((double *)(void *)kb)[e];
            if (isfinite(v))
                continue;
            if (pass == 1) {
                cv->nonfinite[count] = (NonFinite){ e / (g->k * g->og), e / g->og % g->k, e % g->og, v };
                if (fb == 4)
                    ((float *)(void *)kb)[e] = 0;
                else
                    ((double *)(void *)kb)[e] = 0;
            }
            count++;
        }
        if (pass == 0 && count) {
            cv->nonfinite = alloc_bytes(count, sizeof *cv->nonfinite, instr, err);
            if (!cv->nonfinite)
                return false;
            count = 0;
        }
    }
    cv->n_nonfinite = count;
    return true;
}

/* Whether window position w (its index in window_next's order) of the row
 * whose taps are in cv->taps reads a real input element. */
static bool window_hits(const ConvRun *cv, int64_t w)
{
    const Geom *g = cv->g;
    for (int s = g->n - 1; s >= 0; s--) {
        if (cv->taps[s][w % g->win[s].size] < 0)
            return false;
        w /= g->win[s].size;
    }
    return true;
}

/* Adds the taken-out products a[row][k] * v to c (rows ldc elements apart)
 * for rows r0 .. r0+nr-1 of group, where k's window position reads a real
 * element; where it reads padding or a hole the product is no term of the
 * sum. */
static void add_nonfinite_taps(const ConvRun *cv, int64_t group, int64_t r0, int64_t nr, const char *a, char *c,
                               int64_t ldc)
{
    const Geom *g = cv->g;
    int fb = eval_matmul_real_float_bytes(cv->mm);
    RowPos rp;
    rowpos_at(g, r0, &rp);
    for (int64_t i = 0; i < nr; i++, rowpos_next(g, &rp)) {
        for (int s = 0; s < g->n; s++)
            fill_taps(g, s, rp.p[s], cv->taps[s]);
        for (int64_t j = 0; j < cv->n_nonfinite; j++) {
            const NonFinite *nf = &cv->nonfinite[j];
            if (nf->group != group || !window_hits(cv, nf->k / g->ki))
                continue;
            int64_t ai = i * g->k + nf->k, ci = i * ldc + nf->o;
            if (fb == 4)
                ((float *)(void *)c)[ci] += ((const float *)(const void *)a)[ai] * (float)nf->v;
            else
                ((double *)(void *)c)[ci] += ((const double *)(const void *)a)[ai] * nf->v;
        }
    }
}

/* Products of rows r0 .. r0+nr-1 ([nr, O/G], compute elements) into the
 * output, wherever its layout puts them. */
static void store_rows(const ConvRun *cv, int64_t group, int64_t r0, int64_t nr, const char *c)
{
    const Geom *g = cv->g;
    int ob = ir_type_storage_bytes(cv->mm->result), eb = cv->mm->elem_bytes;
    RowPos rp;
    rowpos_at(g, r0, &rp);
    for (int64_t i = 0; i < nr; i++) {
        int64_t off = rp.b * g->out_b + group * g->og * g->out_f;
        for (int s = 0; s < g->n; s++)
            off += rp.p[s] * g->out_s[s];
        eval_matmul_store(cv->mm, cv->out + off * ob, g->out_f, c + i * g->og * eb, g->og);
        rowpos_next(g, &rp);
    }
}

/* ---- Driver */

typedef struct Buffers {
    char *kernel;                   /* [G][K][O/G] */
    char *a;                        /* [gather_mats][chunk][K] */
    char *c;                        /* [chunk][O/G], NULL when the products land in place */
    char *deal;                     /* one window position's features of all groups */
    int64_t **taps, *tap_space;
} Buffers;

static void *alloc_bytes(int64_t n, int64_t size, const IrInstr *instr, Error *err)
{
    void *p = n >= 0 && size > 0 && (uint64_t)n <= SIZE_MAX / (uint64_t)size ? xmalloc_try((size_t)(n ? n * size : 1))
                                                                              : NULL;
    if (!p)
        error_set(err, ERR_NOMEM, instr->info->loc, "convolution: out of memory for %lld x %lld bytes",
                  (long long)n, (long long)size);
    return p;
}

/* Every buffer, or false (ERR_NOMEM) with the ones made so far in b. */
static bool alloc_buffers(const Geom *g, const EvalMatmul *mm, bool in_place, int64_t chunk, Buffers *b,
                          const IrInstr *instr, Error *err)
{
    int64_t eb = mm->elem_bytes, n_taps = 0;
    for (int s = 0; s < g->n; s++)
        n_taps += g->win[s].size;
    memset(b, 0, sizeof *b);
    if (!(b->kernel = alloc_bytes(g->k * g->o, eb, instr, err)) ||
        !(b->a = alloc_bytes(gather_mats(g) * chunk * g->k, eb, instr, err)) ||
        (!in_place && !(b->c = alloc_bytes(chunk * g->og, eb, instr, err))) ||
        !(b->deal = alloc_bytes(gather_mats(g) * g->ki, eb, instr, err)) ||
        !(b->taps = alloc_bytes(g->n, sizeof *b->taps, instr, err)) ||
        !(b->tap_space = alloc_bytes(n_taps, sizeof *b->tap_space, instr, err)))
        return false;
    int64_t at = 0;
    for (int s = 0; s < g->n; at += g->win[s].size, s++)
        b->taps[s] = b->tap_space + at;
    return true;
}

static void free_buffers(Buffers *b)
{
    free(b->kernel);
    free(b->a);
    free(b->c);
    free(b->deal);
    free(b->taps);
    free(b->tap_space);
}

/* Rows per GEMM: CHUNK_BYTES of im2col rows and products, at least one. */
static int64_t chunk_rows(const Geom *g, const EvalMatmul *mm, bool in_place)
{
    int64_t per_row = (gather_mats(g) * g->k + (in_place ? 0 : g->og)) * mm->elem_bytes;
    int64_t n = per_row > 0 ? CHUNK_BYTES / per_row : g->rows;
    n = n < 1 ? 1 : n;
    return n < g->rows ? n : g->rows;
}

/* Group's products of rows r0 .. r0+nr-1, from its im2col matrix a. */
static void multiply(const ConvRun *cv, const Buffers *b, int64_t group, int64_t r0, int64_t nr, const char *a,
                     bool in_place)
{
    const Geom *g = cv->g;
    const EvalMatmul *mm = cv->mm;
    int64_t eb = mm->elem_bytes;
    const char *kg = b->kernel + group * g->k * g->og * eb;
    if (in_place) {
        char *c = cv->out + (r0 * g->o + group * g->og) * eb;
        eval_matmul_gemm(mm, nr, g->og, g->k, a, g->k, kg, g->og, c, g->o);
        if (cv->n_nonfinite)
            add_nonfinite_taps(cv, group, r0, nr, a, c, g->o);
        return;
    }
    eval_matmul_gemm(mm, nr, g->og, g->k, a, g->k, kg, g->og, b->c, g->og);
    if (cv->n_nonfinite)
        add_nonfinite_taps(cv, group, r0, nr, a, b->c, g->og);
    store_rows(cv, group, r0, nr, b->c);
}

static bool run_conv(ConvRun *cv, const IrInstr *instr, Error *err)
{
    const Geom *g = cv->g;
    bool in_place = g->out_rows && cv->mm->direct;
    int64_t chunk = chunk_rows(g, cv->mm, in_place), plane = chunk * g->k * cv->mm->elem_bytes;
    Buffers b;
    bool ok = alloc_buffers(g, cv->mm, in_place, chunk, &b, instr, err);
    cv->taps = b.taps;
    if (ok)
        gather_kernel(cv, b.kernel);
    ok = ok && take_nonfinite(cv, b.kernel, instr, err);
    for (int64_t r0 = 0; ok && r0 < g->rows; r0 += chunk) {
        int64_t nr = g->rows - r0 < chunk ? g->rows - r0 : chunk;
        if (!g->by_batch)
            gather_rows(cv, 0, r0, nr, b.a, plane, b.deal);
        for (int64_t group = 0; group < g->groups; group++) {
            if (g->by_batch)
                gather_rows(cv, group, r0, nr, b.a, plane, b.deal);
            multiply(cv, &b, group, r0, nr, b.a + (g->by_batch ? 0 : group * plane), in_place);
        }
    }
    free_buffers(&b);
    free(cv->nonfinite);
    return ok;
}

/* The operands have the shapes the instruction declares, which the
 * verifier checked against the attributes. */
static bool check_operands(const IrInstr *instr, Value *const *args, Error *err)
{
    for (int i = 0; i < 2; i++) {
        const IrShape *want = instr->operands[i]->shape, *got = args[i]->shape;
        bool same = got->type == want->type && got->rank == want->rank;
        for (int d = 0; same && d < got->rank; d++)
            same = got->dims[d] == want->dims[d];
        if (!same)
            return error_set(err, ERR_SHAPE, instr->info->loc, "convolution: operand %d is not its declared %s", i,
                             ir_shape_str(want));
    }
    return true;
}

/* The products fit BLAS's int sizes (rows per product are CHUNK_BYTES at most). */
static bool check_blas_sizes(const IrInstr *instr, const Geom *g, Error *err)
{
    if (g->k <= INT_MAX && g->o <= INT_MAX)
        return true;
    return error_set(err, ERR_UNSUPPORTED, instr->info->loc,
                     "convolution: %lld window elements x %lld features is too large for BLAS", (long long)g->k,
                     (long long)g->o);
}

static bool is_packed_nibble(const IrInstr *instr)
{
    const char *p = ir_raw_attr_get(instr, "operand_precision");
    return p && strstr(p, "packed_nibble");
}

bool eval_convolution(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    (void)it;
    EvalMatmul mm;
    if (!ir_verify_instr(instr, err) || !check_operands(instr, args, err))
        return false;
    if (is_packed_nibble(instr))
        return error_set(err, ERR_UNSUPPORTED, instr->info->loc, "convolution: packed_nibble operands");
    if (!eval_matmul_init(&mm, instr, args[0]->shape->type, args[1]->shape->type, err))
        return false;
    Value *result = value_new_array(instr->shape, err);
    if (!result)
        return false;
    /* No kernel input features: every sum is empty (and the window sizes
     * need not multiply to anything that fits). */
    bool empty_sums = args[1]->shape->dims[instr->info->conv_dims->kernel_input_feature] == 0;
    if (empty_sums)
        memset(result->data, 0, value_bytes(result));
    if (!empty_sums && value_elements(result) > 0) {
        Geom g;
        init_geom(&g, instr, args[0]->shape, args[1]->shape, instr->shape);
        ConvRun cv = { &g, &mm, args[0]->shape->type, args[1]->shape->type, args[0]->data, args[1]->data,
                       result->data, NULL, 0, NULL };
        if (!check_blas_sizes(instr, &g, err) || !run_conv(&cv, instr, err)) {
            value_release(result);
            return false;
        }
    }
    *out = result;
    return true;
}
