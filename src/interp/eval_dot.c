/* eval_dot.c: dot with any batch and contracting dimensions (§5.8 of
 * hlo-reference.md).  The only file that includes cblas.h.
 *
 * Every dot is a batch of matrix products C[b] = A[b] x B[b], where A is
 * M x K (lhs free dims x contracting dims), B is K x N (contracting dims x
 * rhs free dims) and C is M x N.  That is exactly the row-major result
 * layout (batch, lhs free, rhs free), so C is always written in place.  An
 * operand whose row dims and column dims each form one evenly strided run,
 * one of the two with unit stride, goes to BLAS as it is: CblasTrans covers
 * an lhs stored [K,M] and an rhs stored [N,K], and batch dims may have any
 * strides (an odometer walks them).  Any other operand is gathered once
 * into a contiguous [B,R,C] buffer (a cache-blocked copy when the source is
 * transposed).
 *
 * Arithmetic, by result type:
 *   f32, f64        operands converted to the result type (exact for the
 *                   narrow floats), then cblas_sgemm / cblas_dgemm.
 *   bf16, f16, f8*  operands converted to the result type and widened
 *                   exactly to f32, summed by sgemm in f32, and the sum
 *                   rounded once to the result type.  This is what XLA's CPU
 *                   backend does for these types.
 *   integers        exact, wrapping modulo 2^bits of the result: operands
 *                   converted to the result type, products and sums in an
 *                   unsigned word at least that wide (u32 or u64), since
 *                   wrapping commutes with + and x.
 *   c64, c128       cblas_cgemm / cblas_zgemm, operands of the result type.
 *   pred and the rest: ERR_UNSUPPORTED.
 * With several contracting dims the order of the K index (and so the float
 * summation order) follows the pairing that lets both operands skip a copy;
 * it is fixed for a given dot, so results are reproducible.
 *
 * Determinism and threads: the checker compares runs bit for bit, at any
 * --threads.  OpenBLAS's own threading gives other bits than its one-thread
 * result (95 of 138 sgemm shapes tried differed at 2 or 3 threads), so the
 * interpreter pins OpenBLAS to one thread when it starts (interp_new,
 * interp_set_threads: eval_blas_single_thread) and the pool (parallel.h)
 * shares out fixed tiles of C instead (pieces of the larger side), each one
 * single-threaded BLAS call: the tiles are a function of the shapes only,
 * never of the thread count or of the kernel OpenBLAS chose for the CPU,
 * so neither changes a bit; tests/interp/test_threads.c checks it.
 * Known gap: an s64/u64 operand beyond 2^53 converted to a narrow float
 * result may be rounded twice (through f64). */
#include "eval.h"
#include "parallel.h"

#include <assert.h>
#include <cblas.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* OpenBLAS's cblas.h declares this and netlib's does not; an identical
 * repeated declaration is harmless. */
void openblas_set_num_threads(int num_threads);

typedef enum Compute {
    COMPUTE_F32, COMPUTE_F64, COMPUTE_C64, COMPUTE_C128, COMPUTE_U32, COMPUTE_U64
} Compute;

static const int compute_bytes[] = {
    [COMPUTE_F32] = 4, [COMPUTE_F64] = 8, [COMPUTE_C64] = 8,
    [COMPUTE_C128] = 16, [COMPUTE_U32] = 4, [COMPUTE_U64] = 8,
};

/* How one operand's elements become compute elements. */
typedef struct Conv {
    IrElemType from;        /* the operand's type */
    IrElemType result;      /* the dot's result type */
    Compute compute;
    bool via_result;        /* narrow float result: round through it first */
} Conv;

/* One operand seen as a batch of R x C matrices. */
typedef struct Operand {
    const IrShape *shape;
    const char *data;
    Conv conv;
    int n_batch, n_rows, n_cols;
    int batch[IR_MAX_RANK];     /* in *_batch_dims order */
    int rows[IR_MAX_RANK];      /* lhs: free dims ascending; rhs: contracting */
    int cols[IR_MAX_RANK];      /* lhs: contracting; rhs: free dims ascending */
} Operand;

/* Where the kernels find one operand's matrices. */
typedef struct MatView {
    const char *data;
    void *owned;                        /* gathered copy to free, or NULL */
    int64_t batch_stride[IR_MAX_RANK];  /* elements, per batch dim */
    int64_t ld;                         /* leading dimension, elements */
    bool trans;                         /* stored as C x R */
} MatView;

typedef struct Dot {
    const IrInstr *instr;
    IrElemType result;
    Compute compute;
    Operand lhs, rhs;
    int n_batch;
    int64_t batch_size[IR_MAX_RANK];
    int64_t B, M, K, N;
} Dot;

/* ---- Types */

static bool is_narrow_float(IrElemType t)
{
    return ir_type_is_float(t) && t != IR_TYPE_F32 && t != IR_TYPE_F64;
}

static bool is_real(IrElemType t)
{
    return t == IR_TYPE_PRED || ir_type_is_int(t) || ir_type_is_float(t);
}

/* The compute type of a product of lt x rt elements giving r elements. */
static bool pick_compute(IrElemType lt, IrElemType rt, IrElemType r, const IrInstr *instr, Compute *out,
                         Error *err)
{
    bool real = is_real(lt) && is_real(rt);
    if (r == IR_TYPE_C64 && lt == r && rt == r)
        *out = COMPUTE_C64;
    else if (r == IR_TYPE_C128 && lt == r && rt == r)
        *out = COMPUTE_C128;
    else if (real && ir_type_is_float(r))
        *out = r == IR_TYPE_F64 ? COMPUTE_F64 : COMPUTE_F32;
    else if (real && ir_type_is_int(r))
        *out = ir_type_info[r].bits <= 32 ? COMPUTE_U32 : COMPUTE_U64;
    else
        return error_set(err, ERR_UNSUPPORTED, instr->info->loc, "unsupported %s: %s x %s -> %s",
                         ir_opcode_name(instr->op), ir_type_name(lt), ir_type_name(rt), ir_type_name(r));
    return true;
}

static Conv make_conv(IrElemType from, IrElemType result, Compute compute)
{
    return (Conv){ from, result, compute, is_narrow_float(result) && from != result };
}

/* True when conversion leaves the bits alone. */
static bool conv_is_copy(const Conv *c)
{
    int bits = ir_type_info[c->from].bits;
    switch (c->compute) {
    case COMPUTE_F32: return c->from == IR_TYPE_F32 && !c->via_result;
    case COMPUTE_F64: return c->from == IR_TYPE_F64;
    case COMPUTE_C64: case COMPUTE_C128: return true;
    case COMPUTE_U32: return ir_type_is_int(c->from) && bits == 32;
    case COMPUTE_U64: return ir_type_is_int(c->from) && bits == 64;
    }
    return false;
}

/* ---- Element conversion: HLO's convert(from -> result), then widened
 * exactly to the compute type. */

static float elem_to_f32(const Conv *c, const char *p)
{
    if (c->via_result) {
        char tmp[16];
        ir_elem_set_f64(c->result, tmp, ir_elem_get_f64(c->from, p));
        return (float)ir_elem_get_f64(c->result, tmp);     /* exact */
    }
    if (ir_type_is_signed_int(c->from))
        return (float)ir_elem_get_i64(c->from, p);          /* one rounding */
    if (ir_type_is_unsigned_int(c->from))
        return (float)(uint64_t)ir_elem_get_i64(c->from, p);
    return (float)ir_elem_get_f64(c->from, p);              /* exact in f64: one rounding */
}

static uint64_t elem_to_u64(const Conv *c, const char *p)
{
    if (!ir_type_is_float(c->from))
        return (uint64_t)ir_elem_get_i64(c->from, p);
    char tmp[16];       /* float -> int saturates, NaN -> 0, as convert does */
    ir_elem_set_f64(c->result, tmp, ir_elem_get_f64(c->from, p));
    return (uint64_t)ir_elem_get_i64(c->result, tmp);
}

static void convert_elem(const Conv *c, char *dst, const char *src)
{
    float f;
    double x;
    uint64_t u;
    uint32_t w;
    switch (c->compute) {
    case COMPUTE_F32: f = elem_to_f32(c, src); memcpy(dst, &f, 4); return;
    case COMPUTE_F64: x = ir_elem_get_f64(c->from, src); memcpy(dst, &x, 8); return;
    case COMPUTE_U64: u = elem_to_u64(c, src); memcpy(dst, &u, 8); return;
    case COMPUTE_U32: w = (uint32_t)elem_to_u64(c, src); memcpy(dst, &w, 4); return;
    case COMPUTE_C64: case COMPUTE_C128:
        memcpy(dst, src, (size_t)compute_bytes[c->compute]);
        return;
    }
}

/* Copies n elements of `bytes` each, reading every stride-th source element. */
static void copy_run(char *dst, const char *src, int64_t n, int64_t stride, int bytes)
{
    if (stride == 1) {
        memcpy(dst, src, (size_t)(n * bytes));
        return;
    }
    int64_t step = stride * bytes;
    if (bytes == 4)
        for (int64_t i = 0; i < n; i++)
            memcpy(dst + 4 * i, src + step * i, 4);
    else if (bytes == 8)
        for (int64_t i = 0; i < n; i++)
            memcpy(dst + 8 * i, src + step * i, 8);
    else
        for (int64_t i = 0; i < n; i++)
            memcpy(dst + bytes * i, src + step * i, (size_t)bytes);
}

static void bf16_run(char *dst, const char *src, int64_t n, int64_t stride)
{
    for (int64_t i = 0; i < n; i++) {
        uint16_t h;
        memcpy(&h, src + 2 * stride * i, 2);
        uint32_t bits = (uint32_t)h << 16;     /* bf16 is the top half of an f32 */
        memcpy(dst + 4 * i, &bits, 4);
    }
}

/* f16 to f32 (exact) through the element-wise codec, a block at a time:
 * strided elements are gathered first.  The generic per-element path took
 * 1.4 s for the 65M elements of one lm-head operand; this takes a few ms. */
static void f16_run(char *dst, const char *src, int64_t n, int64_t stride)
{
    static const Narrow f16 = { .type = IR_TYPE_F16, .bytes = 2 };
    uint16_t block[256];
    for (int64_t i = 0; i < n; i += 256) {
        int64_t k = n - i < 256 ? n - i : 256;
        const void *from = src + 2 * stride * i;
        if (stride != 1) {
            for (int64_t j = 0; j < k; j++)
                memcpy(&block[j], src + 2 * stride * (i + j), 2);
            from = block;
        }
        eval_narrow_decode(&f16, from, (float *)(void *)(dst + 4 * i), k);
    }
}

/* Converts n operand elements, stride apart, into contiguous compute elements. */
static void convert_run(const Conv *c, char *dst, const char *src, int64_t n, int64_t stride)
{
    int sb = ir_type_storage_bytes(c->from), db = compute_bytes[c->compute];
    if (conv_is_copy(c))
        copy_run(dst, src, n, stride, db);
    else if (c->from == IR_TYPE_BF16 && c->compute == COMPUTE_F32 && !c->via_result)
        bf16_run(dst, src, n, stride);
    else if (c->from == IR_TYPE_F16 && c->compute == COMPUTE_F32 && !c->via_result)
        f16_run(dst, src, n, stride);
    else
        for (int64_t i = 0; i < n; i++)
            convert_elem(c, dst + db * i, src + sb * stride * i);
}

/* ---- Odometer: walks a multi-index, keeping two linear offsets. */

typedef struct Odometer {
    int n;
    int64_t size[IR_MAX_RANK], a[IR_MAX_RANK], b[IR_MAX_RANK], idx[IR_MAX_RANK];
    int64_t off_a, off_b;
} Odometer;

/* Steps to the next index; false after the last.  Every size must be >= 1. */
static bool odo_next(Odometer *o)
{
    for (int i = o->n - 1; i >= 0; i--) {
        o->off_a += o->a[i];
        o->off_b += o->b[i];
        if (++o->idx[i] < o->size[i])
            return true;
        o->off_a -= o->a[i] * o->size[i];
        o->off_b -= o->b[i] * o->size[i];
        o->idx[i] = 0;
    }
    return false;
}

static void odo_add(Odometer *o, int64_t size, int64_t a, int64_t b)
{
    o->size[o->n] = size;
    o->a[o->n] = a;
    o->b[o->n] = b;
    o->idx[o->n++] = 0;
}

/* ---- Gather: copy an operand into a contiguous buffer in another dim order. */

/* The copy after dropping unit dims and merging dims that stay adjacent. */
typedef struct Walk {
    int rank;
    int64_t dims[IR_MAX_RANK];
    int64_t src[IR_MAX_RANK];   /* source strides, elements */
    int64_t dst[IR_MAX_RANK];   /* destination strides, elements */
} Walk;

static void build_walk(const IrShape *s, const int *order, int n, Walk *w)
{
    int64_t strides[IR_MAX_RANK];
    eval_strides(s, strides);
    w->rank = 0;
    for (int t = 0; t < n; t++) {
        int64_t d = s->dims[order[t]], st = strides[order[t]];
        if (d == 1)
            continue;
        if (w->rank > 0 && w->src[w->rank - 1] == st * d) {
            w->dims[w->rank - 1] *= d;
            w->src[w->rank - 1] = st;
            continue;
        }
        w->dims[w->rank] = d;
        w->src[w->rank++] = st;
    }
    if (w->rank == 0) {
        w->dims[0] = w->src[0] = 1;
        w->rank = 1;
    }
    int64_t acc = 1;
    for (int t = w->rank - 1; t >= 0; t--) {
        w->dst[t] = acc;
        acc *= w->dims[t];
    }
}

enum { TILE = 32 };

/* A 2-D blocked copy of dims p (unit source stride) and last (unit
 * destination stride): both sides stay in cache within a tile. */
static void tile_copy(const Conv *c, char *dst, const char *src, const Walk *w, int p)
{
    int last = w->rank - 1, sb = ir_type_storage_bytes(c->from), db = compute_bytes[c->compute];
    for (int64_t i0 = 0; i0 < w->dims[p]; i0 += TILE)
        for (int64_t j0 = 0; j0 < w->dims[last]; j0 += TILE) {
            int64_t i1 = i0 + TILE < w->dims[p] ? i0 + TILE : w->dims[p];
            int64_t nj = j0 + TILE < w->dims[last] ? TILE : w->dims[last] - j0;
            for (int64_t i = i0; i < i1; i++)
                convert_run(c, dst + db * (i * w->dst[p] + j0), src + sb * (i + j0 * w->src[last]), nj,
                            w->src[last]);
        }
}

/* The dim (not the last) whose source stride is 1, or -1. */
static int unit_source_dim(const Walk *w)
{
    if (w->src[w->rank - 1] == 1)
        return -1;
    for (int t = 0; t < w->rank - 1; t++)
        if (w->src[t] == 1)
            return t;
    return -1;
}

static void gather(const Conv *c, char *dst, const char *src, const Walk *w)
{
    int p = unit_source_dim(w), last = w->rank - 1;
    int sb = ir_type_storage_bytes(c->from), db = compute_bytes[c->compute];
    Odometer o = { 0 };
    for (int t = 0; t < last; t++)
        if (t != p)
            odo_add(&o, w->dims[t], w->src[t], w->dst[t]);
    do {
        if (p >= 0)
            tile_copy(c, dst + db * o.off_b, src + sb * o.off_a, w, p);
        else
            convert_run(c, dst + db * o.off_b, src + sb * o.off_a, w->dims[last], w->src[last]);
    } while (odo_next(&o));
}

/* ---- Operand views */

/* Size and stride of a group of dims read as one row-major index.  False
 * when the dims are not one evenly strided run.  Stride 0: the group has a
 * single index, so any stride will do. */
static bool group_run(const IrShape *s, const int64_t *strides, const int *dims, int n, int64_t *size,
                      int64_t *stride)
{
    *size = 1;
    *stride = 0;
    for (int i = 0; i < n; i++) {
        int64_t d = s->dims[dims[i]];
        *size *= d;
        if (d == 1)
            continue;
        if (*stride && *stride != strides[dims[i]] * d)
            return false;
        *stride = strides[dims[i]];
    }
    return true;
}

/* Picks BLAS's transpose flag and leading dimension for an R x C matrix
 * with element (r, c) at r*sr + c*sc; false when BLAS cannot read it. */
static bool pick_layout(int64_t R, int64_t sr, int64_t C, int64_t sc, MatView *v)
{
    if (C == 1 || sc == 1) {
        v->trans = false;
        v->ld = R == 1 ? C : sr;
        return v->ld >= C && v->ld <= INT_MAX;
    }
    if (R == 1 || sr == 1) {
        v->trans = true;
        v->ld = sc;
        return v->ld >= R && v->ld <= INT_MAX;
    }
    return false;
}

/* The operand's own buffer as a view, if BLAS can read it so. */
static bool view_direct(const Operand *op, MatView *v)
{
    int64_t strides[IR_MAX_RANK], R, sr, C, sc;
    eval_strides(op->shape, strides);
    if (!conv_is_copy(&op->conv) || !group_run(op->shape, strides, op->rows, op->n_rows, &R, &sr) ||
        !group_run(op->shape, strides, op->cols, op->n_cols, &C, &sc) || !pick_layout(R, sr, C, sc, v))
        return false;
    v->data = op->data;
    v->owned = NULL;
    for (int i = 0; i < op->n_batch; i++)
        v->batch_stride[i] = strides[op->batch[i]];
    return true;
}

static void *alloc_elems(int64_t n, int bytes, const IrInstr *instr, Error *err)
{
    void *p = (uint64_t)n <= SIZE_MAX / (size_t)bytes ? xmalloc_try((size_t)(n ? n : 1) * (size_t)bytes) : NULL;
    if (!p)
        error_set(err, ERR_NOMEM, instr->info->loc, "dot: out of memory for %lld elements", (long long)n);
    return p;
}

/* A contiguous [batch..., rows, cols] copy of the operand, as a view. */
static bool view_gathered(const Dot *d, const Operand *op, int64_t R, int64_t C, MatView *v, Error *err)
{
    int order[IR_MAX_RANK], n = 0;
    for (int i = 0; i < op->n_batch; i++)
        order[n++] = op->batch[i];
    for (int i = 0; i < op->n_rows; i++)
        order[n++] = op->rows[i];
    for (int i = 0; i < op->n_cols; i++)
        order[n++] = op->cols[i];
    v->owned = alloc_elems(d->B * R * C, compute_bytes[d->compute], d->instr, err);
    if (!v->owned)
        return false;
    Walk w;
    build_walk(op->shape, order, n, &w);
    gather(&op->conv, v->owned, op->data, &w);
    v->data = v->owned;
    v->trans = false;
    v->ld = C;
    int64_t acc = R * C;
    for (int i = op->n_batch - 1; i >= 0; i--) {
        v->batch_stride[i] = acc;
        acc *= d->batch_size[i];
    }
    return true;
}

/* Integer kernels read only contiguous row-major matrices. */
static bool make_view(const Dot *d, const Operand *op, int64_t R, int64_t C, MatView *v, Error *err)
{
    bool blas = d->compute != COMPUTE_U32 && d->compute != COMPUTE_U64;
    if (blas && view_direct(op, v))
        return true;
    return view_gathered(d, op, R, C, v, err);
}

/* ---- Dimension bookkeeping */

static const IrIntList *dims_list(const Dot *d, IrListAttr a)
{
    return &d->instr->lists[a];
}

static bool is_listed(const IrIntList *l, int dim)
{
    for (int i = 0; i < l->n; i++)
        if (l->v[i] == dim)
            return true;
    return false;
}

/* Free dims (neither batch nor contracting), ascending. */
static int free_dims(const IrShape *s, const IrIntList *batch, const IrIntList *contract, int *out)
{
    int n = 0;
    for (int i = 0; i < s->rank; i++)
        if (!is_listed(batch, i) && !is_listed(contract, i))
            out[n++] = i;
    return n;
}

static void init_operand(Dot *d, Operand *op, const Value *v, IrListAttr batch, IrListAttr contract,
                         bool is_lhs)
{
    const IrIntList *b = dims_list(d, batch), *c = dims_list(d, contract);
    op->shape = v->shape;
    op->data = v->data;
    op->conv = make_conv(v->shape->type, d->result, d->compute);
    op->n_batch = b->n;
    for (int i = 0; i < b->n; i++)
        op->batch[i] = (int)b->v[i];
    int *free_out = is_lhs ? op->rows : op->cols;
    int n_free = free_dims(v->shape, b, c, free_out);
    op->n_rows = is_lhs ? n_free : c->n;
    op->n_cols = is_lhs ? c->n : n_free;
}

/* Contracting pair k is the k-th entry of order; fills lhs cols and rhs rows. */
static void set_pair_order(Dot *d, const int *order)
{
    const IrIntList *lc = dims_list(d, IR_LIST_LHS_CONTRACTING_DIMS);
    const IrIntList *rc = dims_list(d, IR_LIST_RHS_CONTRACTING_DIMS);
    for (int k = 0; k < lc->n; k++) {
        d->lhs.cols[k] = (int)lc->v[order[k]];
        d->rhs.rows[k] = (int)rc->v[order[k]];
    }
}

static void sort_pairs_by(const IrIntList *key, int *order)
{
    for (int i = 0; i < key->n; i++)
        order[i] = i;
    for (int i = 1; i < key->n; i++)
        for (int j = i; j > 0 && key->v[order[j - 1]] > key->v[order[j]]; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
}

static int copies_avoided(const Dot *d)
{
    MatView v;
    return view_direct(&d->lhs, &v) + view_direct(&d->rhs, &v);
}

/* Several contracting dims: pairs in the order given, or sorted by lhs or by
 * rhs dim, whichever lets more operands skip the copy (first wins ties). */
static void choose_pair_order(Dot *d)
{
    int orders[3][IR_MAX_RANK], best = 0, best_score = -1;
    const IrIntList *lc = dims_list(d, IR_LIST_LHS_CONTRACTING_DIMS);
    for (int i = 0; i < lc->n; i++)
        orders[0][i] = i;
    sort_pairs_by(lc, orders[1]);
    sort_pairs_by(dims_list(d, IR_LIST_RHS_CONTRACTING_DIMS), orders[2]);
    for (int c = 0; c < 3 && lc->n > 1; c++) {
        set_pair_order(d, orders[c]);
        int score = copies_avoided(d);
        if (score > best_score)
            best = c, best_score = score;
    }
    set_pair_order(d, orders[best]);
}

static int64_t product(const IrShape *s, const int *dims, int n)
{
    int64_t p = 1;
    for (int i = 0; i < n; i++)
        p *= s->dims[dims[i]];
    return p;
}

static bool init_dot(Dot *d, const IrInstr *instr, Value *const *args, Error *err)
{
    memset(d, 0, sizeof *d);
    d->instr = instr;
    d->result = instr->shape->type;
    d->lhs.shape = args[0]->shape;
    d->rhs.shape = args[1]->shape;
    if (!pick_compute(d->lhs.shape->type, d->rhs.shape->type, d->result, instr, &d->compute, err))
        return false;
    init_operand(d, &d->lhs, args[0], IR_LIST_LHS_BATCH_DIMS, IR_LIST_LHS_CONTRACTING_DIMS, true);
    init_operand(d, &d->rhs, args[1], IR_LIST_RHS_BATCH_DIMS, IR_LIST_RHS_CONTRACTING_DIMS, false);
    choose_pair_order(d);
    d->n_batch = d->lhs.n_batch;
    for (int i = 0; i < d->n_batch; i++)
        d->batch_size[i] = d->lhs.shape->dims[d->lhs.batch[i]];
    d->B = product(d->lhs.shape, d->lhs.batch, d->lhs.n_batch);
    d->M = product(d->lhs.shape, d->lhs.rows, d->lhs.n_rows);
    d->K = product(d->lhs.shape, d->lhs.cols, d->lhs.n_cols);
    d->N = product(d->rhs.shape, d->rhs.cols, d->rhs.n_cols);
    return true;
}

/* ---- Kernels */

/* Exact integer matrix product, wrapping in T; C = A (M x K) x B (K x N),
 * all row-major.  Blocked over k and n so a panel of B stays in cache. */
#define INT_GEMM(NAME, T)                                                                         \
    static void NAME##_block(int64_t M, int64_t k0, int64_t k1, int64_t n0, int64_t n1, const T *a, \
                             int64_t lda, const T *b, int64_t ldb, T *c, int64_t ldc)            \
    {                                                                                             \
        for (int64_t m = 0; m < M; m++)                                                           \
            for (int64_t k = k0; k < k1; k++) {                                                   \
                T x = a[m * lda + k];                                                             \
                const T *brow = b + k * ldb;                                                      \
                T *crow = c + m * ldc;                                                            \
                for (int64_t n = n0; n < n1; n++)                                                 \
                    crow[n] += x * brow[n];                                                       \
            }                                                                                     \
    }                                                                                             \
    static void NAME(int64_t M, int64_t N, int64_t K, const T *a, int64_t lda, const T *b,        \
                     int64_t ldb, T *c, int64_t ldc)                                              \
    {                                                                                             \
        for (int64_t m = 0; m < M; m++)                                                           \
            memset(c + m * ldc, 0, (size_t)N * sizeof(T));                                        \
        for (int64_t k0 = 0; k0 < K; k0 += 128)                                                   \
            for (int64_t n0 = 0; n0 < N; n0 += 512)                                               \
                NAME##_block(M, k0, k0 + 128 < K ? k0 + 128 : K, n0, n0 + 512 < N ? n0 + 512 : N, a, \
                             lda, b, ldb, c, ldc);                                                \
    }

INT_GEMM(gemm_u32, uint32_t)
INT_GEMM(gemm_u64, uint64_t)

/* OpenBLAS's pthread build starts its worker threads when it is loaded,
 * and they spin (sched_yield) for a while before they sleep: on a busy
 * core that is time taken from the pool's own threads.  This build exports
 * the call that ends them (re-made on demand, which a one-thread OpenBLAS
 * never asks); other builds (OpenMP, serial) have no such symbol. */
extern int blas_thread_shutdown_(void) __attribute__((weak));

void eval_blas_single_thread(void)
{
    static bool done;       /* interpreters run one per process, single-threaded */
    if (!done) {
        openblas_set_num_threads(1);
        if (blas_thread_shutdown_)
            blas_thread_shutdown_();
        done = true;
    }
}

/* The tiles of C: a product is cut along the larger of M and N (M on a
 * tie) into pieces, whatever the thread count and whatever kernel OpenBLAS
 * picked for this CPU.  Each piece is one single-threaded call, so an
 * element's sum depends on the shapes alone.  Every piece packs the whole
 * of the other operand again, and that repacking is what a split costs one
 * thread: measured against one unsplit sgemm (SkylakeX kernels, 2 cores,
 * medians of interleaved runs), pieces 512 wide lose 4-6%, 1024 wide 4-6%,
 * 2048 wide 0-2% (2048^3, 4096^3, 8192x1024x1024, 1024x4096x4096); the old
 * fixed 512 x 1024 tiles lost 13-15% at 2048^3 and 4096^3.  So a side of
 * GEMM_SPLIT_MIN or more is cut in two, and one of 4 x GEMM_PIECE or more
 * into a power of two of pieces at least GEMM_PIECE wide: even counts keep
 * two threads balanced.  1024^3 pays its 4% for the second thread (2.0x at
 * 2 threads).  The limit: a product uses at most side / GEMM_PIECE threads.
 * Piece widths are multiples of 64, so that every piece but the last starts
 * on a whole block of any kernel's unrolling. */
enum { GEMM_SPLIT_MIN = 1024, GEMM_PIECE = 2048, GEMM_PIECE_ALIGN = 64 };

/* The width of the pieces a side of `side` elements is cut into. */
static int64_t gemm_piece_width(int64_t side)
{
    if (side < GEMM_SPLIT_MIN)
        return side > 0 ? side : 1;
    int64_t pieces = 2;
    while (pieces * 2 * GEMM_PIECE <= side)
        pieces *= 2;
    int64_t width = (side + pieces - 1) / pieces;
    return (width + GEMM_PIECE_ALIGN - 1) / GEMM_PIECE_ALIGN * GEMM_PIECE_ALIGN;
}

/* C (M x N, rows ldc apart) = A (M x K) x B (K x N) in compute type cp,
 * A and B row-major unless ta / tb (then stored K x M and N x K). */
static void gemm_raw(Compute cp, bool ta, bool tb, int64_t M, int64_t N, int64_t K, const void *a, int64_t lda,
                     const void *b, int64_t ldb, void *c, int64_t ldc)
{
    int m = (int)M, n = (int)N, k = (int)K, la = (int)lda, lb = (int)ldb, lc = (int)ldc;
    enum CBLAS_TRANSPOSE tra = ta ? CblasTrans : CblasNoTrans, trb = tb ? CblasTrans : CblasNoTrans;
    static const double one[2] = { 1, 0 }, zero[2] = { 0, 0 };
    static const float onef[2] = { 1, 0 }, zerof[2] = { 0, 0 };
    switch (cp) {
    case COMPUTE_F32:
        cblas_sgemm(CblasRowMajor, tra, trb, m, n, k, 1.0f, a, la, b, lb, 0.0f, c, lc);
        return;
    case COMPUTE_F64:
        cblas_dgemm(CblasRowMajor, tra, trb, m, n, k, 1.0, a, la, b, lb, 0.0, c, lc);
        return;
    case COMPUTE_C64:
        cblas_cgemm(CblasRowMajor, tra, trb, m, n, k, onef, a, la, b, lb, zerof, c, lc);
        return;
    case COMPUTE_C128:
        cblas_zgemm(CblasRowMajor, tra, trb, m, n, k, one, a, la, b, lb, zero, c, lc);
        return;
    case COMPUTE_U32:
        assert(!ta && !tb);
        gemm_u32(M, N, K, a, lda, b, ldb, c, ldc);
        return;
    case COMPUTE_U64:
        assert(!ta && !tb);
        gemm_u64(M, N, K, a, lda, b, ldb, c, ldc);
        return;
    }
}

/* What one row of C costs, in parallel_for's bytes: 2NK flops at roughly
 * five flops in the time memcpy moves a byte. */
static int64_t gemm_row_cost(int64_t N, int64_t K)
{
    return 2 * N * K / 5 + 1;
}

/* Products C = A x B (gemm_raw's arguments), tile by tile: tile t is
 * product t / per (a dot's batch, found through d's batch strides; one
 * product when d is NULL), then row of tiles, then column. */
typedef struct TileJob {
    Compute cp;
    bool ta, tb;
    int64_t M, N, K, lda, ldb, ldc;
    const char *a, *b;
    char *c;
    int64_t tile_m, tile_n;     /* a tile's rows and columns (the last ones smaller) */
    int64_t rows, cols;         /* tiles per product, down and across */
    const Dot *d;               /* batches: their sizes */
    const MatView *av, *bv;     /* and strides */
} TileJob;

/* The element offsets of batch i's A and B (mixed radix over the batch
 * dims, the last fastest, as the batches of C are laid out). */
static void batch_offsets(const TileJob *j, int64_t i, int64_t *oa, int64_t *ob)
{
    *oa = *ob = 0;
    for (int k = j->d->n_batch - 1; k >= 0; k--) {
        int64_t size = j->d->batch_size[k], at = i % size;
        i /= size;
        *oa += at * j->av->batch_stride[k];
        *ob += at * j->bv->batch_stride[k];
    }
}

static void gemm_tiles(void *ctx, int64_t t0, int64_t t1)
{
    const TileJob *j = ctx;
    int eb = compute_bytes[j->cp];
    int64_t per = j->rows * j->cols;
    for (int64_t t = t0; t < t1; t++) {
        int64_t batch = t / per, r = t % per / j->cols * j->tile_m, q = t % j->cols * j->tile_n, oa = 0, ob = 0;
        int64_t m = j->M - r < j->tile_m ? j->M - r : j->tile_m;
        int64_t n = j->N - q < j->tile_n ? j->N - q : j->tile_n;
        if (j->d)
            batch_offsets(j, batch, &oa, &ob);
        oa += j->ta ? r : r * j->lda;       /* rows r.. of A (stored K x M when transposed) */
        ob += j->tb ? q * j->ldb : q;       /* columns q.. of B (stored N x K when transposed) */
        char *c = j->c + (batch * j->M * j->N + r * j->ldc + q) * eb;
        gemm_raw(j->cp, j->ta, j->tb, m, n, j->K, j->a + oa * eb, j->lda, j->b + ob * eb, j->ldb, c, j->ldc);
    }
}

/* n_products products of j's shape, tile by tile, the tiles
 * shared by the pool. */
static void gemm_tiled(TileJob *j, int64_t n_products)
{
    bool cut_rows = j->M >= j->N;
    j->tile_m = cut_rows ? gemm_piece_width(j->M) : (j->M > 0 ? j->M : 1);
    j->tile_n = cut_rows ? (j->N > 0 ? j->N : 1) : gemm_piece_width(j->N);
    j->rows = (j->M + j->tile_m - 1) / j->tile_m;
    j->cols = (j->N + j->tile_n - 1) / j->tile_n;
    parallel_for(n_products * j->rows * j->cols, j->tile_m * gemm_row_cost(j->tile_n, j->K), 1, gemm_tiles, j);
}

/* Every batch's product of the dot (C batches contiguous, M x N each). */
static void gemm_batches(const Dot *d, const MatView *a, const MatView *b, char *c)
{
    TileJob j = { .cp = d->compute, .ta = a->trans, .tb = b->trans, .M = d->M, .N = d->N, .K = d->K,
                  .lda = a->ld, .ldb = b->ld, .ldc = d->N, .a = a->data, .b = b->data, .c = c, .d = d,
                  .av = a, .bv = b };
    gemm_tiled(&j, d->B);
}

/* ---- Result */

/* The compute buffer has the result's exact bits. */
static bool output_is_direct(IrElemType result, Compute compute)
{
    int bits = ir_type_info[result].bits;
    switch (compute) {
    case COMPUTE_F32: return result == IR_TYPE_F32;
    case COMPUTE_F64: case COMPUTE_C64: case COMPUTE_C128: return true;
    case COMPUTE_U32: return bits == 32;
    case COMPUTE_U64: return bits == 64;
    }
    return false;
}

/* Rounds n f32 sums to a narrow float result, or wraps u32 sums to a
 * narrower integer result (the only compute buffers that are not direct),
 * writing every stride-th result element. */
static void store_result(IrElemType r, Compute compute, char *out, int64_t stride, const char *c, int64_t n)
{
    int64_t step = (int64_t)ir_type_storage_bytes(r) * stride;
    assert(compute == COMPUTE_F32 || compute == COMPUTE_U32);
    for (int64_t i = 0; i < n; i++) {
        float f;
        uint32_t w;
        if (compute == COMPUTE_F32) {
            memcpy(&f, c + 4 * i, 4);
            ir_elem_set_f64(r, out + step * i, f);     /* f32 is exact in f64: one rounding */
        } else {
            memcpy(&w, c + 4 * i, 4);
            ir_elem_set_i64(r, out + step * i, (int64_t)w);
        }
    }
}

static bool run_dot(const Dot *d, char *out, Error *err)
{
    int64_t n_out = d->B * d->M * d->N;
    int eb = compute_bytes[d->compute];
    if (n_out == 0)
        return true;
    bool direct = output_is_direct(d->result, d->compute);
    char *c = direct ? out : alloc_elems(n_out, eb, d->instr, err);
    MatView a = { 0 }, b = { 0 };
    bool ok = c != NULL;
    if (ok && d->K == 0)
        memset(c, 0, (size_t)(n_out * eb));
    else if (ok)
        ok = make_view(d, &d->lhs, d->M, d->K, &a, err) && make_view(d, &d->rhs, d->K, d->N, &b, err);
    if (ok && d->K > 0)
        gemm_batches(d, &a, &b, c);
    if (ok && !direct)
        store_result(d->result, d->compute, out, 1, c, n_out);
    free(a.owned);
    free(b.owned);
    if (!direct)
        free(c);
    return ok;
}

static bool check_blas_sizes(const Dot *d, Error *err)
{
    bool blas = d->compute != COMPUTE_U32 && d->compute != COMPUTE_U64;
    if (blas && (d->M > INT_MAX || d->N > INT_MAX || d->K > INT_MAX))
        return error_set(err, ERR_UNSUPPORTED, d->instr->info->loc,
                         "dot: %lld x %lld x %lld is too large for BLAS", (long long)d->M,
                         (long long)d->K, (long long)d->N);
    return true;
}

bool eval_dot(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    (void)it;
    Dot d;
    if (!init_dot(&d, instr, args, err) || !check_blas_sizes(&d, err))
        return false;
    Value *result = value_new_array(instr->shape, err);
    if (!result)
        return false;
    if (!run_dot(&d, result->data, err)) {
        value_release(result);
        return false;
    }
    *out = result;
    return true;
}

/* ---- Dot's arithmetic for other kernels (eval.h) */

bool eval_matmul_init(EvalMatmul *mm, const IrInstr *instr, IrElemType lhs, IrElemType rhs, Error *err)
{
    Compute cp;
    if (!pick_compute(lhs, rhs, instr->shape->type, instr, &cp, err))
        return false;
    mm->result = instr->shape->type;
    mm->compute = (int)cp;
    mm->elem_bytes = compute_bytes[cp];
    mm->direct = output_is_direct(mm->result, cp);
    return true;
}

void eval_matmul_load(const EvalMatmul *mm, IrElemType from, void *dst, const void *src, int64_t n, int64_t stride)
{
    Conv c = make_conv(from, mm->result, (Compute)mm->compute);
    convert_run(&c, dst, src, n, stride);
}

void eval_matmul_gemm(const EvalMatmul *mm, int64_t M, int64_t N, int64_t K, const void *a, int64_t lda,
                      const void *b, int64_t ldb, void *c, int64_t ldc)
{
    if (M == 0 || N == 0)
        return;
    if (K == 0) {
        for (int64_t m = 0; m < M; m++)
            memset((char *)c + m * ldc * mm->elem_bytes, 0, (size_t)(N * mm->elem_bytes));
        return;
    }
    TileJob j = { .cp = (Compute)mm->compute, .M = M, .N = N, .K = K, .lda = lda, .ldb = ldb, .ldc = ldc,
                  .a = a, .b = b, .c = c };
    gemm_tiled(&j, 1);
}

int eval_matmul_real_float_bytes(const EvalMatmul *mm)
{
    return mm->compute == COMPUTE_F32 ? 4 : mm->compute == COMPUTE_F64 ? 8 : 0;
}

void eval_matmul_store(const EvalMatmul *mm, void *dst, int64_t stride, const void *src, int64_t n)
{
    if (!mm->direct) {
        store_result(mm->result, (Compute)mm->compute, dst, stride, src, n);
        return;
    }
    size_t eb = (size_t)mm->elem_bytes;
    if (stride == 1) {
        memcpy(dst, src, (size_t)n * eb);
        return;
    }
    for (int64_t i = 0; i < n; i++)
        memcpy((char *)dst + (size_t)(i * stride) * eb, (const char *)src + (size_t)i * eb, eb);
}
