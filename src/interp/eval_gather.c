/* eval_gather.c: gather and scatter with XLA's dimension numbers.
 *
 * Both ops pair an index array with an "other" array (gather: the result;
 * scatter: the updates).  The other array's dims split into batch dims, one
 * per index-array dim except index_vector_dim (in order), and window dims,
 * which walk the operand dims that are neither collapsed/inserted nor
 * batching (in ascending order).  For each batch position G:
 *   start[start_index_map[k]] = indices[G with index_vector_dim = k]
 *   start[operand_batching_dims[i]] = G at start_indices_batching_dims[i]
 * gather clamps start[d] to [0, operand_dim - slice_size] and copies the
 * slice; scatter skips the whole window when any part of it falls outside
 * the operand (XLA's evaluator), and otherwise folds operand = f(operand,
 * update) in update order: batch positions row-major, then the window
 * row-major.  Indices are read as signed 64-bit, as dynamic-slice reads
 * them and XLA's evaluator does (a u64 of 2^64-1 is -1).
 *
 * Fast paths: gather copies whole rows (memcpy when both sides are
 * contiguous); scatter with a combiner that returns the update assigns rows,
 * and one that interp_trivial_reducer() recognises combines rows with
 * interp_binary_kernel().  Any other combiner runs per element through
 * eval_call_scalar().
 *
 * Threads (parallel.h): gather's windows are disjoint parts of the result,
 * so its batch positions split over the pool; scatter keeps update order on
 * one thread, since its windows may overlap (a long row's kernel call may
 * still split by element). */
#include "eval.h"
#include "parallel.h"

#include <stdlib.h>
#include <string.h>

#define MAX_VARIADIC 8      /* eval_call_scalar takes at most 16 arguments */
#define R IR_MAX_RANK

/* How index vectors are read from the index array. */
typedef struct IndexMap {
    int64_t ivd;                /* index_vector_dim; == rank: a trailing dim of 1 */
    int64_t n_index;            /* entries of one index vector */
    int64_t vec_stride;         /* element stride of ivd (unused when ivd == rank) */
    int n_batch;                /* index-array dims other than ivd */
    int64_t batch_dims[R], batch_strides[R];
    int64_t n_positions;        /* product of batch_dims */
} IndexMap;

typedef struct Plan {
    const IrInstr *instr;
    IndexMap ix;
    int op_rank;
    const int64_t *op_dims;
    int64_t op_strides[R];
    const IrIntList *start_map;     /* index vector entry k -> operand dim */
    int batch_from[R];              /* operand dim -> batch position it copies, -1 if none */
    int64_t extent[R];              /* per operand dim: the window's extent */
    bool skip[R];                   /* operand dims with no window dim (collapsed/inserted, batching) */
    int n_win;
    int win_op_dim[R];
    int64_t win_sizes[R], win_op_strides[R], win_other_strides[R];
    int64_t batch_other_strides[R]; /* per batch position */
} Plan;

static bool plan_fail(const Plan *p, const char *what, Error *err)
{
    return error_set(err, ERR_SHAPE, p->instr->info->loc, "%s: %s", ir_opcode_name(p->instr->op), what);
}

static bool type_ok(IrElemType t)
{
    return t > IR_TYPE_INVALID && t < IR_TYPE_TOKEN;
}

static size_t elem_bytes(const Value *v)
{
    return (size_t)ir_type_storage_bytes(v->shape->type);
}

static bool need_array(const IrInstr *instr, const Value *v, const char *what, Error *err)
{
    if (v->shape->type == IR_TYPE_TUPLE || v->shape->rank > R || !type_ok(v->shape->type))
        return error_set(err, ERR_UNSUPPORTED, instr->info->loc, "%s: %s %s is not supported",
                         ir_opcode_name(instr->op), what, ir_shape_str(v->shape));
    return true;
}

/* ------------------------------------------------------------------ */
/* Planning: check the dimension numbers against the shapes            */

static bool index_map_init(Plan *p, const IrShape *idx, Error *err)
{
    IndexMap *ix = &p->ix;
    int64_t strides[R];
    IrOptInt ivd = p->instr->ints[IR_INT_INDEX_VECTOR_DIM];
    if (!ir_type_is_int(idx->type))
        return plan_fail(p, "indices must be integers", err);
    ix->ivd = ivd.present ? ivd.v : idx->rank;
    if (ix->ivd < 0 || ix->ivd > idx->rank)
        return plan_fail(p, "index_vector_dim out of range", err);
    eval_strides(idx, strides);
    ix->n_index = ix->ivd < idx->rank ? idx->dims[ix->ivd] : 1;
    ix->vec_stride = ix->ivd < idx->rank ? strides[ix->ivd] : 0;
    ix->n_positions = 1;
    for (int d = 0; d < idx->rank; d++)
        if (d != ix->ivd) {
            ix->batch_dims[ix->n_batch] = idx->dims[d];
            ix->batch_strides[ix->n_batch++] = strides[d];
            ix->n_positions *= idx->dims[d];
        }
    return true;
}

/* Marks the dims of list in mask: in [0, rank), distinct, not yet marked. */
static bool mark_dims(const Plan *p, IrListAttr which, int rank, bool *mask, Error *err)
{
    const IrIntList *l = &p->instr->lists[which];
    for (int i = 0; i < l->n; i++) {
        if (l->v[i] < 0 || l->v[i] >= rank || mask[l->v[i]])
            return error_set(err, ERR_SHAPE, p->instr->info->loc, "%s: bad %s", ir_opcode_name(p->instr->op),
                             ir_list_attr_name[which]);
        mask[l->v[i]] = true;
    }
    return true;
}

/* Operand batching dims and their partners in the index array. */
static bool plan_batching(Plan *p, IrListAttr op_list, IrListAttr idx_list, const IrShape *idx, Error *err)
{
    const IrIntList *ob = &p->instr->lists[op_list], *ib = &p->instr->lists[idx_list];
    bool idx_seen[R] = { false };
    if (ob->n != ib->n)
        return plan_fail(p, "batching dims differ in number", err);
    if (!mark_dims(p, op_list, p->op_rank, p->skip, err) || !mark_dims(p, idx_list, idx->rank, idx_seen, err))
        return false;
    for (int d = 0; d < p->op_rank; d++)
        p->batch_from[d] = -1;
    for (int i = 0; i < ob->n; i++) {
        if (ib->v[i] == p->ix.ivd || idx->dims[ib->v[i]] != p->op_dims[ob->v[i]])
            return plan_fail(p, "batching dims do not pair up", err);
        p->batch_from[ob->v[i]] = (int)(ib->v[i] - (ib->v[i] > p->ix.ivd ? 1 : 0));
    }
    return true;
}

/* The start map: one operand dim per index-vector entry, none batching. */
static bool plan_start_map(Plan *p, IrListAttr which, Error *err)
{
    bool seen[R] = { false };
    p->start_map = &p->instr->lists[which];
    if (p->start_map->n != p->ix.n_index)
        return plan_fail(p, "the index vector and the start map differ in length", err);
    for (int k = 0; k < p->start_map->n; k++) {
        int64_t d = p->start_map->v[k];
        if (d < 0 || d >= p->op_rank || seen[d] || p->batch_from[d] >= 0)
            return plan_fail(p, "bad start map", err);
        seen[d] = true;
    }
    return true;
}

static bool plan_common(Plan *p, const IrInstr *instr, const Value *x, const Value *idx, Error *err)
{
    memset(p, 0, sizeof *p);
    p->instr = instr;
    if (!need_array(instr, x, "operand", err) || !need_array(instr, idx, "indices", err))
        return false;
    p->op_rank = x->shape->rank;
    p->op_dims = x->shape->dims;
    eval_strides(x->shape, p->op_strides);
    return index_map_init(p, idx->shape, err);
}

/* Window dims (win, ascending dims of other) walk the operand dims not in
 * p->skip, in order; the remaining dims of other are the batch positions. */
static bool plan_other(Plan *p, const IrShape *other, const IrIntList *win, Error *err)
{
    int64_t ostr[R];
    bool is_win[R] = { false };
    if (other->type == IR_TYPE_TUPLE || other->rank > R || other->rank != p->ix.n_batch + win->n)
        return plan_fail(p, "rank does not fit the dimension numbers", err);
    eval_strides(other, ostr);
    for (int k = 0; k < win->n; k++) {
        if (win->v[k] < 0 || win->v[k] >= other->rank || (k > 0 && win->v[k] <= win->v[k - 1]))
            return plan_fail(p, "window dims must be ascending and in range", err);
        is_win[win->v[k]] = true;
    }
    for (int d = 0; d < p->op_rank; d++) {
        if (p->skip[d])
            continue;
        int k = p->n_win++;
        if (k >= win->n)
            return plan_fail(p, "too few window dims", err);
        p->win_op_dim[k] = d;
        p->win_sizes[k] = other->dims[win->v[k]];
        p->win_op_strides[k] = p->op_strides[d];
        p->win_other_strides[k] = ostr[win->v[k]];
    }
    if (p->n_win != win->n)
        return plan_fail(p, "too many window dims", err);
    for (int d = 0, q = 0; d < other->rank; d++)
        if (!is_win[d]) {
            if (other->dims[d] != p->ix.batch_dims[q])
                return plan_fail(p, "batch dims do not match the indices", err);
            p->batch_other_strides[q++] = ostr[d];
        }
    return true;
}

static bool plan_gather(const IrInstr *instr, Value *const *args, Plan *p, Error *err)
{
    const IrIntList *sizes = &instr->lists[IR_LIST_SLICE_SIZES];
    if (!plan_common(p, instr, args[0], args[1], err) ||
        !plan_batching(p, IR_LIST_OPERAND_BATCHING_DIMS, IR_LIST_START_INDICES_BATCHING_DIMS, args[1]->shape, err) ||
        !plan_start_map(p, IR_LIST_START_INDEX_MAP, err) ||
        !mark_dims(p, IR_LIST_COLLAPSED_SLICE_DIMS, p->op_rank, p->skip, err) ||
        !plan_other(p, instr->shape, &instr->lists[IR_LIST_OFFSET_DIMS], err))
        return false;
    if (sizes->n != p->op_rank)
        return plan_fail(p, "slice_sizes must have one entry per operand dim", err);
    for (int d = 0; d < p->op_rank; d++) {
        p->extent[d] = sizes->v[d];
        if (sizes->v[d] < 0 || sizes->v[d] > p->op_dims[d] || (p->skip[d] && sizes->v[d] != 1))
            return plan_fail(p, "bad slice_sizes", err);
    }
    for (int k = 0; k < p->n_win; k++)
        if (p->win_sizes[k] != sizes->v[p->win_op_dim[k]])
            return plan_fail(p, "offset dims do not match slice_sizes", err);
    if (instr->shape->type != args[0]->shape->type)
        return plan_fail(p, "result type differs from the operand's", err);
    return true;
}

static bool plan_scatter(const IrInstr *instr, Value *const *args, int n, Plan *p, Error *err)
{
    const IrShape *upd = args[n + 1]->shape;
    if (!plan_common(p, instr, args[0], args[n], err) ||
        !plan_batching(p, IR_LIST_INPUT_BATCHING_DIMS, IR_LIST_SCATTER_INDICES_BATCHING_DIMS, args[n]->shape, err) ||
        !plan_start_map(p, IR_LIST_SCATTER_DIMS_TO_OPERAND_DIMS, err) ||
        !mark_dims(p, IR_LIST_INSERTED_WINDOW_DIMS, p->op_rank, p->skip, err) ||
        !plan_other(p, upd, &instr->lists[IR_LIST_UPDATE_WINDOW_DIMS], err))
        return false;
    for (int d = 0; d < p->op_rank; d++)
        p->extent[d] = 1;
    for (int k = 0; k < p->n_win; k++) {
        p->extent[p->win_op_dim[k]] = p->win_sizes[k];
        if (p->win_sizes[k] > p->op_dims[p->win_op_dim[k]])
            return plan_fail(p, "update window larger than the operand", err);
    }
    for (int k = 0; k < n; k++) {
        const IrShape *xk = args[k]->shape, *uk = args[n + 1 + k]->shape;
        if (!need_array(instr, args[k], "operand", err) || !need_array(instr, args[n + 1 + k], "updates", err))
            return false;
        if (xk->type != uk->type || !ir_shape_equal_dims(xk, args[0]->shape) || !ir_shape_equal_dims(uk, upd))
            return plan_fail(p, "operands and updates must match", err);
    }
    return true;
}

/* ------------------------------------------------------------------ */
/* Walking the windows                                                  */

static int64_t read_index(const Value *idx, int64_t off)
{
    IrElemType t = idx->shape->type;
    /* By value, as dynamic-slice: an unsigned index is never negative (XLA's
     * evaluator reads u64 as signed; docs/xla-differences.md). */
    return ir_elem_get_index(t, (const unsigned char *)idx->data + (size_t)off * elem_bytes(idx));
}

/* The unclamped window start of batch position g. */
static void window_start(const Plan *p, const Value *idx, const int64_t *g, int64_t *start)
{
    int64_t off = 0;
    for (int q = 0; q < p->ix.n_batch; q++)
        off += g[q] * p->ix.batch_strides[q];
    for (int d = 0; d < p->op_rank; d++)
        start[d] = p->batch_from[d] >= 0 ? g[p->batch_from[d]] : 0;
    for (int k = 0; k < p->start_map->n; k++)
        start[p->start_map->v[k]] = read_index(idx, off + k * p->ix.vec_stride);
}

/* Called per row of a window: operand and other offsets (elements), length. */
typedef bool (*RunFn)(void *ctx, int64_t op_off, int64_t other_off, int64_t len, Error *err);

static bool walk_window(const Plan *p, int64_t op_off, int64_t other_off, RunFn fn, void *ctx, Error *err)
{
    if (p->n_win == 0)
        return fn(ctx, op_off, other_off, 1, err);
    int last = p->n_win - 1;
    int64_t rows = 1, idx[R] = { 0 };
    for (int k = 0; k <= last; k++)
        rows *= p->win_sizes[k];
    rows = rows ? rows / p->win_sizes[last] : 0;
    for (int64_t r = 0; r < rows; r++) {
        if (!fn(ctx, op_off, other_off, p->win_sizes[last], err))
            return false;
        for (int k = last - 1; k >= 0; k--) {
            if (++idx[k] < p->win_sizes[k]) {
                op_off += p->win_op_strides[k];
                other_off += p->win_other_strides[k];
                break;
            }
            op_off -= (p->win_sizes[k] - 1) * p->win_op_strides[k];
            other_off -= (p->win_sizes[k] - 1) * p->win_other_strides[k];
            idx[k] = 0;
        }
    }
    return true;
}

/* For batch positions [begin, end) in row-major order: the window's start
 * (clamped when clamp, else windows reaching outside the operand are
 * skipped), then its rows. */
static bool windows_in_range(const Plan *p, const Value *idx, bool clamp, RunFn fn, void *ctx, int64_t begin,
                             int64_t end, Error *err)
{
    int64_t g[R] = { 0 }, start[R], pos = begin;
    if (begin >= end)       /* no positions: a batch dim may be 0, which the odometer below divides by */
        return true;
    for (int q = p->ix.n_batch - 1; q >= 0; q--) {
        g[q] = pos % p->ix.batch_dims[q];
        pos /= p->ix.batch_dims[q];
    }
    for (int64_t i = begin; i < end; i++, eval_next_index(p->ix.n_batch, p->ix.batch_dims, g)) {
        window_start(p, idx, g, start);
        bool inside = true;
        for (int d = 0; d < p->op_rank; d++) {
            int64_t hi = p->op_dims[d] - p->extent[d];
            if (clamp)
                start[d] = start[d] < 0 ? 0 : start[d] > hi ? hi : start[d];
            inside = inside && start[d] >= 0 && start[d] <= hi;
        }
        if (!inside)
            continue;
        int64_t op_off = 0, other_off = 0;
        for (int d = 0; d < p->op_rank; d++)
            op_off += start[d] * p->op_strides[d];
        for (int q = 0; q < p->ix.n_batch; q++)
            other_off += g[q] * p->batch_other_strides[q];
        if (!walk_window(p, op_off, other_off, fn, ctx, err))
            return false;
    }
    return true;
}

static bool for_each_window(const Plan *p, const Value *idx, bool clamp, RunFn fn, void *ctx, Error *err)
{
    return windows_in_range(p, idx, clamp, fn, ctx, 0, p->ix.n_positions, err);
}

/* dst[j * ds] = src[j * ss] for n elements of es bytes. */
static void copy_strided(unsigned char *dst, int64_t ds, const unsigned char *src, int64_t ss, int64_t n, size_t es)
{
    if (ds == 1 && ss == 1) {
        memcpy(dst, src, (size_t)n * es);
        return;
    }
    switch (es) {
    case 1: for (int64_t j = 0; j < n; j++) dst[j * ds] = src[j * ss]; break;
    case 2: for (int64_t j = 0; j < n; j++) memcpy(dst + 2 * j * ds, src + 2 * j * ss, 2); break;
    case 4: for (int64_t j = 0; j < n; j++) memcpy(dst + 4 * j * ds, src + 4 * j * ss, 4); break;
    case 8: for (int64_t j = 0; j < n; j++) memcpy(dst + 8 * j * ds, src + 8 * j * ss, 8); break;
    default:
        for (int64_t j = 0; j < n; j++)
            memcpy(dst + es * (size_t)(j * ds), src + es * (size_t)(j * ss), es);
        break;
    }
}

/* ------------------------------------------------------------------ */
/* gather                                                               */

typedef struct CopyRun {
    unsigned char *dst;
    const unsigned char *src;
    size_t es;
    int64_t dst_stride, src_stride;     /* of the innermost window dim */
    bool to_operand;                    /* scatter assigns: dst is the operand */
} CopyRun;

static bool copy_run(void *ctx, int64_t op_off, int64_t other_off, int64_t len, Error *err)
{
    const CopyRun *c = ctx;
    int64_t d_off = c->to_operand ? op_off : other_off, s_off = c->to_operand ? other_off : op_off;
    (void)err;
    copy_strided(c->dst + (size_t)d_off * c->es, c->dst_stride, c->src + (size_t)s_off * c->es, c->src_stride,
                 len, c->es);
    return true;
}

static int64_t last_stride(const Plan *p, const int64_t *strides)
{
    return p->n_win ? strides[p->n_win - 1] : 1;
}

/* Gather's windows land in disjoint parts of the result, one per batch
 * position, so the positions split over the pool (parallel.h). */
typedef struct GatherJob {
    const Plan *p;
    const Value *idx;
    CopyRun *c;
} GatherJob;

static void gather_range(void *ctx, int64_t begin, int64_t end)
{
    const GatherJob *j = ctx;
    Error err = { .code = ERR_OK };       /* copy_run cannot fail */
    windows_in_range(j->p, j->idx, true, copy_run, j->c, begin, end, &err);
}

bool eval_gather(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    Plan p;
    (void)it;
    if (instr->n_operands != 2)
        return error_set(err, ERR_SHAPE, instr->info->loc, "gather takes an operand and indices");
    if (!plan_gather(instr, args, &p, err))
        return false;
    Value *res = value_new_array(instr->shape, err);
    if (!res)
        return false;
    CopyRun c = { res->data, args[0]->data, elem_bytes(args[0]), last_stride(&p, p.win_other_strides),
                  last_stride(&p, p.win_op_strides), false };
    int64_t window = 1;
    for (int k = 0; k < p.n_win; k++)
        window *= p.win_sizes[k];
    parallel_for(p.ix.n_positions, 2 * window * (int64_t)c.es + 8, 1, gather_range,
                 &(GatherJob){ &p, args[1], &c });
    *out = res;
    return true;
}

/* ------------------------------------------------------------------ */
/* scatter                                                              */

/* operand = operand op update over a row, through scratch when strided. */
typedef struct KernelRun {
    IrOpcode op;
    IrElemType t;
    size_t es;
    unsigned char *operand;
    const unsigned char *updates;
    int64_t op_stride, upd_stride;
    unsigned char *s1, *s2;         /* one row each */
} KernelRun;

static bool kernel_run(void *ctx, int64_t op_off, int64_t upd_off, int64_t len, Error *err)
{
    const KernelRun *k = ctx;
    unsigned char *dst = k->operand + (size_t)op_off * k->es;
    const unsigned char *src = k->updates + (size_t)upd_off * k->es;
    if (k->op_stride == 1 && k->upd_stride == 1)
        return interp_binary_kernel(k->op, k->t, dst, dst, src, len, err);
    copy_strided(k->s1, 1, dst, k->op_stride, len, k->es);
    copy_strided(k->s2, 1, src, k->upd_stride, len, k->es);
    if (!interp_binary_kernel(k->op, k->t, k->s1, k->s1, k->s2, len, err))
        return false;
    copy_strided(dst, k->op_stride, k->s1, 1, len, k->es);
    return true;
}

/* (operand_0..operand_{n-1}, update_0..update_{n-1}) -> operands, per element. */
typedef struct SlowRun {
    Interp *it;
    const IrComputation *comp;
    int n;
    unsigned char *operand[MAX_VARIADIC];
    const unsigned char *updates[MAX_VARIADIC];
    size_t es[MAX_VARIADIC];
    int64_t op_stride, upd_stride;
    IrElemType types[2 * MAX_VARIADIC];
} SlowRun;

static bool slow_run(void *ctx, int64_t op_off, int64_t upd_off, int64_t len, Error *err)
{
    const SlowRun *s = ctx;
    const void *args[2 * MAX_VARIADIC];
    void *results[MAX_VARIADIC];
    for (int64_t j = 0; j < len; j++) {
        for (int k = 0; k < s->n; k++) {
            results[k] = s->operand[k] + (size_t)(op_off + j * s->op_stride) * s->es[k];
            args[k] = results[k];
            args[s->n + k] = s->updates[k] + (size_t)(upd_off + j * s->upd_stride) * s->es[k];
        }
        if (!eval_call_scalar(s->it, s->comp, s->types, args, 2 * s->n, results, s->n, err))
            return false;
    }
    return true;
}

typedef enum ScatterMode { SCATTER_SLOW, SCATTER_ASSIGN, SCATTER_KERNEL } ScatterMode;

static ScatterMode scatter_mode(const IrComputation *c, int n, IrElemType t, IrOpcode *op)
{
    const IrInstr *root = c->root;
    *op = IR_OP_COUNT;
    if (n != 1 || root->shape->type != t || root->shape->rank != 0)
        return SCATTER_SLOW;
    if (root->op == IR_OP_PARAMETER && root->info->parameter_number == 1)
        return SCATTER_ASSIGN;
    *op = interp_trivial_reducer(c);
    if (*op == IR_OP_COUNT || ir_type_is_complex(t))
        return SCATTER_SLOW;
    /* op(update, operand) is another function for float maximum/minimum
     * (ties between -0 and +0, and two NaNs, resolve towards the update). */
    bool swapped = root->operands[0]->info->parameter_number != 0;
    bool order_matters = ir_type_is_float(t) && (*op == IR_OP_MAXIMUM || *op == IR_OP_MINIMUM);
    return swapped && order_matters ? SCATTER_SLOW : SCATTER_KERNEL;
}

static bool scatter_kernel(const Plan *p, IrOpcode op, Value *res, Value *const *args, Error *err)
{
    const Value *upd = args[2];
    KernelRun k = { op, res->shape->type, elem_bytes(res), res->data, upd->data,
                    last_stride(p, p->win_op_strides), last_stride(p, p->win_other_strides), NULL, NULL };
    int64_t row = p->n_win ? p->win_sizes[p->n_win - 1] : 1;
    k.s1 = xmalloc_try((size_t)(row ? row : 1) * k.es);
    k.s2 = xmalloc_try((size_t)(row ? row : 1) * k.es);
    bool ok = (k.s1 && k.s2) || error_set(err, ERR_NOMEM, p->instr->info->loc, "scatter: out of memory");
    ok = ok && for_each_window(p, args[1], false, kernel_run, &k, err);
    free(k.s1);
    free(k.s2);
    return ok;
}

static bool scatter_slow(Interp *it, const Plan *p, int n, Value **res, Value *const *args, Error *err)
{
    SlowRun s;
    memset(&s, 0, sizeof s);
    s.it = it;
    s.comp = p->instr->info->comps[IR_COMP_TO_APPLY];
    s.n = n;
    s.op_stride = last_stride(p, p->win_op_strides);
    s.upd_stride = last_stride(p, p->win_other_strides);
    for (int k = 0; k < n; k++) {
        s.operand[k] = res[k]->data;
        s.updates[k] = args[n + 1 + k]->data;
        s.es[k] = elem_bytes(res[k]);
        s.types[k] = s.types[n + k] = res[k]->shape->type;
    }
    return for_each_window(p, args[n], false, slow_run, &s, err);
}

static bool scatter_apply(Interp *it, const Plan *p, int n, Value **res, Value *const *args, Error *err)
{
    IrOpcode op;
    switch (scatter_mode(p->instr->info->comps[IR_COMP_TO_APPLY], n, res[0]->shape->type, &op)) {
    case SCATTER_ASSIGN: {
        CopyRun c = { res[0]->data, args[2]->data, elem_bytes(res[0]), last_stride(p, p->win_op_strides),
                      last_stride(p, p->win_other_strides), true };
        return for_each_window(p, args[1], false, copy_run, &c, err);
    }
    case SCATTER_KERNEL:
        return scatter_kernel(p, op, res[0], args, err);
    case SCATTER_SLOW:
        return scatter_slow(it, p, n, res, args, err);
    }
    return false;
}

/* Result k: a copy of operand k, in the result's shape. */
static bool scatter_results(const IrInstr *instr, int n, Value *const *args, Value **res, Error *err)
{
    const IrShape *s = instr->shape;
    bool tuple = s->type == IR_TYPE_TUPLE;
    if (tuple ? s->n_elements != n : n != 1)
        return error_set(err, ERR_SHAPE, instr->info->loc, "scatter: result %s does not fit %d operands",
                         ir_shape_str(s), n);
    for (int k = 0; k < n; k++) {
        const IrShape *sk = tuple ? s->elements[k] : s;
        if (sk->type == IR_TYPE_TUPLE || sk->type != args[k]->shape->type || !ir_shape_equal_dims(sk, args[k]->shape))
            return error_set(err, ERR_SHAPE, instr->info->loc, "scatter: result %s does not match operand %s",
                             ir_shape_str(sk), ir_shape_str(args[k]->shape));
        if (!(res[k] = value_new_array(sk, err)))
            return false;
        memcpy(res[k]->data, args[k]->data, value_bytes(res[k]));
    }
    return true;
}

bool eval_scatter(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    int n = (instr->n_operands - 1) / 2;
    Plan p;
    Value *res[MAX_VARIADIC] = { 0 };
    const IrComputation *comp = instr->info->comps[IR_COMP_TO_APPLY];
    if (instr->n_operands % 2 == 0 || n < 1 || n > MAX_VARIADIC)
        return error_set(err, ERR_UNSUPPORTED, instr->info->loc, "scatter with %d operands is not supported",
                         instr->n_operands);
    if (!comp || comp->n_params != 2 * n)
        return error_set(err, ERR_SHAPE, instr->info->loc, "scatter: to_apply must take %d parameters", 2 * n);
    bool ok = plan_scatter(instr, args, n, &p, err) && scatter_results(instr, n, args, res, err) &&
              scatter_apply(it, &p, n, res, args, err);
    if (!ok) {
        for (int k = 0; k < n; k++)
            value_release(res[k]);
        return false;
    }
    if (instr->shape->type != IR_TYPE_TUPLE) {
        *out = res[0];
        return true;
    }
    *out = value_new_tuple(instr->shape, n, res, err);
    return *out != NULL;
}
