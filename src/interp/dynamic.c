/* dynamic.c: ops on bounded dynamic shapes (f32[<=8]) whose operands hold
 * fewer elements than their bounds, as XLA's dynamic padder defines them:
 * the op computes on the arrays of the runtime shapes, and padding never
 * takes part.
 *
 * A value keeps its bounded shape and carries its runtime sizes
 * (Value.sizes; eval_dynamic_shape.c makes them).  For an op with such an
 * operand:
 *   1. every operand is compacted: its valid box copied into an array of
 *      its runtime shape (padding dropped, so it cannot leak), cut further
 *      where the op pairs elements of two operands (below);
 *   2. the result's runtime dims are derived from the operands' runtime
 *      dims and the op's attributes (result_dims below: what XLA's shape
 *      inference gives for those shapes); a dimension the result declares
 *      static must come out at its declared size;
 *   3. the op's own evaluator runs on the compacted operands, with a copy
 *      of the instruction whose shapes are the runtime shapes;
 *   4. the result is embedded in its bounded shape, zeros past the runtime
 *      sizes, which it carries.
 * So reduce over a dynamic dimension folds only the valid elements (XLA
 * masks the rest with the init), dot and convolution sum only valid
 * elements (XLA masks with zeros), concatenate packs the valid parts one
 * after the other, slice and pad see the valid part only, reshape reshapes
 * the valid elements in row-major order.
 *
 * Element-wise ops take the smallest runtime size of their operands in each
 * dimension, dot and convolution the smallest of the two contracted sizes
 * (a static operand against a dynamic one: XLA masks the rest with zeros).
 *
 * A few ops index into the bounded buffer itself, as XLA runs them (its
 * dynamic padder leaves them as they are): dynamic-slice and
 * dynamic-update-slice clamp their start indices by the bound, so an
 * update at the runtime size lands in the padding (a stack's push), and a
 * slice whose size is the bound carries the operand's runtime size (a
 * smaller one reads the bounded buffer: past the runtime size that is
 * padding, which a program asks for by its indices);
 * scatter into a dynamic operand and the collectives compute on the
 * bounded arrays and carry their operands' sizes.  A dynamic update or
 * scatter update, and a collective whose gathered or split dimension is
 * dynamic, are refused: their result's sizes are not derived here.
 *
 * gather, too, reads the bounded buffer: its batch dimensions take the
 * indices' sizes, an offset dimension sliced whole the operand's.
 *
 * Ops whose result shape cannot be derived here (custom calls, rng, ...)
 * stay unsupported on such operands, saying so. */
#include "eval.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static bool arg_dynamic(const Value *v)
{
    return v && (v->sizes || ir_shape_is_dynamic(v->shape));
}

static int64_t size_at(const Value *v, int d)
{
    return v->sizes ? v->sizes[d] : v->shape->dims[d];
}

/* Whether v is below its bound in dimension d. */
static bool short_at(const Value *v, int d)
{
    return v->sizes && v->sizes[d] < v->shape->dims[d];
}

/* A shape like s (arrays and tuples of them) with every dimension static. */
static IrShape *static_shape(Arena *a, const IrShape *s)
{
    if (ir_shape_is_tuple(s)) {
        IrShape **el = arena_alloc(a, (size_t)(s->n_elements ? s->n_elements : 1) * sizeof *el);
        for (int i = 0; i < s->n_elements; i++)
            el[i] = static_shape(a, s->elements[i]);
        return ir_shape_new_tuple(a, s->n_elements, el);
    }
    if (!ir_shape_is_array(s))
        return (IrShape *)s;
    return ir_shape_new_array(a, s->type, s->rank, s->dims);
}

/* Runtime dims of the result leaf (shape decl, rank decl->rank) of in, on
 * the compacted operands c; false (ERR_UNSUPPORTED) for an op whose
 * result this cannot derive. */
static bool result_dims(const IrInstr *in, Value *const *c, int leaf, const IrShape *decl, int64_t *out,
                        Error *err)
{
    const IrShape *x = c[0]->shape;
    const IrIntList *dims = &in->lists[IR_LIST_DIMENSIONS];
    int rank = decl->rank;
    for (int d = 0; d < rank; d++)
        out[d] = decl->dims[d];
    switch ((int)in->op) {
    case IR_OP_CONVERT: case IR_OP_REDUCE_PRECISION: case IR_OP_COPY: case IR_OP_REVERSE: case IR_OP_MAP:
    case IR_OP_ALL_REDUCE: case IR_OP_COLLECTIVE_PERMUTE: case IR_OP_DYNAMIC_UPDATE_SLICE: case IR_OP_SORT:
        x = c[leaf < in->n_operands ? leaf : 0]->shape;
        goto same;
    case IR_OP_SCATTER:
        x = c[leaf]->shape;
        goto same;
    case IR_OP_CLAMP:
        x = c[1]->shape;
        goto same;
    case IR_OP_BROADCAST:
        for (int k = 0; k < dims->n && k < x->rank; k++)
            out[dims->v[k]] = x->dims[k];
        return true;
    case IR_OP_TRANSPOSE:
        for (int d = 0; d < rank && d < dims->n; d++)
            out[d] = x->dims[dims->v[d]];
        return true;
    case IR_OP_REDUCE: {
        x = c[leaf]->shape;
        int j = 0;
        for (int d = 0; d < x->rank; d++) {
            bool reduced = false;
            for (int k = 0; k < dims->n; k++)
                reduced = reduced || dims->v[k] == d;
            if (!reduced && j < rank)
                out[j++] = x->dims[d];
        }
        return true;
    }
    case IR_OP_REDUCE_WINDOW:
        x = c[leaf]->shape;
        for (int d = 0; d < rank && d < in->info->n_window; d++) {
            const IrWindowDim *w = &in->info->window[d];
            int64_t base = x->dims[d] == 0 ? 0 : (x->dims[d] - 1) * w->lhs_dilate + 1;
            int64_t padded = base + w->pad_lo + w->pad_hi, span = (w->size - 1) * w->rhs_dilate + 1;
            out[d] = padded < span ? 0 : (padded - span) / w->stride + 1;
        }
        return true;
    case IR_OP_SLICE:
        for (int d = 0; d < rank && d < in->info->n_slice; d++) {
            const IrSliceDim *sl = &in->info->slice[d];
            int64_t limit = sl->limit < x->dims[d] ? sl->limit : x->dims[d];
            out[d] = limit <= sl->start ? 0 : (limit - sl->start + sl->stride - 1) / sl->stride;
        }
        return true;
    case IR_OP_PAD:
        for (int d = 0; d < rank && d < in->info->n_padding; d++) {
            const IrPadDim *p = &in->info->padding[d];
            int64_t n = x->dims[d];
            out[d] = p->lo + p->hi + n + (n > 0 ? (n - 1) * p->interior : 0);
        }
        return true;
    case IR_OP_CONCATENATE:
        for (int d = 0; d < rank; d++)
            out[d] = x->dims[d];
        if (dims->n == 1 && dims->v[0] < rank) {
            out[dims->v[0]] = 0;
            for (int k = 0; k < in->n_operands; k++)
                out[dims->v[0]] += c[k]->shape->dims[dims->v[0]];
        }
        return true;
    case IR_OP_DOT: {
        const IrShape *y = c[1]->shape;
        const IrIntList *lb = &in->lists[IR_LIST_LHS_BATCH_DIMS], *lc = &in->lists[IR_LIST_LHS_CONTRACTING_DIMS];
        const IrIntList *rb = &in->lists[IR_LIST_RHS_BATCH_DIMS], *rc = &in->lists[IR_LIST_RHS_CONTRACTING_DIMS];
        int j = 0;
        for (int k = 0; k < lb->n && j < rank; k++)
            out[j++] = x->dims[lb->v[k]];
        for (int side = 0; side < 2; side++) {
            const IrShape *s = side ? y : x;
            const IrIntList *b = side ? rb : lb, *cc = side ? rc : lc;
            for (int d = 0; d < s->rank && j < rank; d++) {
                bool skip = false;
                for (int k = 0; k < b->n; k++)
                    skip = skip || b->v[k] == d;
                for (int k = 0; k < cc->n; k++)
                    skip = skip || cc->v[k] == d;
                if (!skip)
                    out[j++] = s->dims[d];
            }
        }
        return true;
    }
    case IR_OP_CONVOLUTION: {
        const IrConvDims *cd = in->info->conv_dims;
        IrOptInt bgc = in->ints[IR_INT_BATCH_GROUP_COUNT];
        if (!cd)
            break;
        out[cd->output_batch] = x->dims[cd->input_batch] / (bgc.present && bgc.v > 1 ? bgc.v : 1);
        for (int k = 0; k < cd->n_spatial && k < in->info->n_window; k++) {
            const IrWindowDim *w = &in->info->window[k];
            int64_t n = x->dims[cd->input_spatial[k]];
            int64_t base = n == 0 ? 0 : (n - 1) * w->lhs_dilate + 1;
            int64_t padded = base + w->pad_lo + w->pad_hi, span = (w->size - 1) * w->rhs_dilate + 1;
            out[cd->output_spatial[k]] = padded < span ? 0 : (padded - span) / w->stride + 1;
        }
        return true;
    }
    case IR_OP_RESHAPE: {
        int dyn = -1;
        int64_t rest = 1, total = value_elements(c[0]);
        for (int d = 0; d < rank; d++) {
            if (decl->dim_kind && decl->dim_kind[d] != IR_DIM_STATIC && dyn < 0)
                dyn = d;
            else
                rest *= decl->dims[d];
        }
        if (dyn < 0 || (rest == 0 ? total != 0 : total % rest != 0))
            return error_set(err, ERR_UNSUPPORTED, in->info->loc,
                             "reshape: %lld elements of %s do not fill %s with one dynamic dimension",
                             (long long)total, ir_shape_str(x), ir_shape_str(decl));
        out[dyn] = rest ? total / rest : 0;
        return true;
    }
    case IR_OP_ALL_GATHER: case IR_OP_REDUCE_SCATTER:
        for (int d = 0; d < rank; d++)
            out[d] = x->dims[d];
        if (dims->n == 1 && dims->v[0] < rank) {
            int g = (int)dims->v[0];
            int64_t bound_in = in->operands[0]->shape->dims[g], bound_out = decl->dims[g];
            if (in->op == IR_OP_ALL_GATHER && bound_in > 0)
                out[g] = x->dims[g] * (bound_out / bound_in);
            else if (bound_out > 0)
                out[g] = x->dims[g] / (bound_in / bound_out);
        }
        return true;
    case IR_OP_DYNAMIC_SLICE: case IR_OP_IOTA:
        return true;
    default:
        if (ir_op_info[in->op].flags & OPF_ELEMENTWISE) {
            for (int k = 0; k < in->n_operands; k++)
                if (ir_shape_is_array(c[k]->shape) && c[k]->shape->rank == rank) {
                    x = c[k]->shape;
                    goto same;
                }
        }
        break;
    }
    return error_set(err, ERR_UNSUPPORTED, in->info->loc,
                     "unsupported op: %s on an operand of dynamic size (its result shape at runtime sizes is not "
                     "derived here)", ir_opcode_name(in->op));
same:
    for (int d = 0; d < rank && d < x->rank; d++)
        out[d] = x->dims[d];
    return true;
}

/* Whether runtime dims dims fit the declared leaf dl: within its bounds,
 * and equal to a dimension it declares static. */
static bool dims_fit(const IrInstr *in, const IrShape *dl, const int64_t *dims, Error *err)
{
    for (int d = 0; d < dl->rank; d++) {
        bool dynamic = dl->dim_kind && dl->dim_kind[d] != IR_DIM_STATIC;
        if (dims[d] < 0 || dims[d] > dl->dims[d] || (!dynamic && dims[d] != dl->dims[d]))
            return error_set(err, ERR_SHAPE, in->info->loc,
                             "%s: at runtime sizes the result's dimension %d holds %lld, which %s does not allow",
                             ir_opcode_name(in->op), d, (long long)dims[d], ir_shape_str(dl));
    }
    return true;
}

static const IrShape *leaf_of(const IrShape *s, int i)
{
    return ir_shape_is_tuple(s) ? s->elements[i] : s;
}

/* The runtime shape of the result (a tuple of arrays, or an array). */
static IrShape *result_shape(Arena *a, const IrInstr *in, Value *const *c, Error *err)
{
    const IrShape *decl = in->shape;
    int n = ir_shape_is_tuple(decl) ? decl->n_elements : 1;
    IrShape **leaves = arena_alloc(a, (size_t)(n ? n : 1) * sizeof *leaves);
    for (int i = 0; i < n; i++) {
        const IrShape *dl = leaf_of(decl, i);
        int64_t dims[IR_MAX_RANK];
        if (!ir_shape_is_array(dl))
            return error_set(err, ERR_UNSUPPORTED, in->info->loc, "%s: a non-array result of dynamic size",
                             ir_opcode_name(in->op)), NULL;
        if (!result_dims(in, c, i, dl, dims, err) || !dims_fit(in, dl, dims, err))
            return NULL;
        leaves[i] = ir_shape_new_array(a, dl->type, dl->rank, dims);
    }
    return ir_shape_is_tuple(decl) ? ir_shape_new_tuple(a, n, leaves) : leaves[0];
}

/* r (the runtime shape's data, or the whole bounded array) in the bounded
 * shape s, zeros past r's dims; sizes[leaf] (NULL: r's dims) become its
 * sizes unless they are all full. */
typedef struct Embed {
    Value *r;
    int64_t (*sizes)[IR_MAX_RANK];
} Embed;

static Value *embed(const IrShape *s, Value *r, const int64_t *sizes, Error *err);

static Value *embed_element(void *ctx, int i, const IrShape *element, Error *err)
{
    Embed *e = ctx;
    return embed(element, e->r->elements[i], e->sizes ? e->sizes[i] : NULL, err);
}

static Value *embed(const IrShape *s, Value *r, const int64_t *sizes, Error *err)
{
    if (ir_shape_is_tuple(s))
        return value_build_tuple(s, embed_element, &(Embed){ r, (int64_t (*)[IR_MAX_RANK])sizes }, err);
    Value *v = value_new_zeroed(s, err);
    if (!v)
        return NULL;
    const IrShape *rs = r->shape;
    value_copy_box(v->data, s->dims, r->data, rs->dims, rs->dims, s->rank, (size_t)ir_type_storage_bytes(s->type));
    if (!sizes)
        sizes = rs->dims;
    bool full = true;
    for (int d = 0; d < s->rank; d++)
        full = full && sizes[d] == s->dims[d];
    if (!full) {
        v->sizes = xmalloc_try((size_t)s->rank * sizeof *v->sizes);
        if (!v->sizes) {
            value_release(v);
            error_set(err, ERR_NOMEM, (IrLoc){ 0 }, "out of memory");
            return NULL;
        }
        memcpy(v->sizes, sizes, (size_t)s->rank * sizeof *v->sizes);
    }
    return v;
}

/* ---- The ops that run on the bounded buffers */

bool eval_dynamic_collective(IrOpcode op)
{
    switch ((int)op) {
    case IR_OP_ALL_REDUCE: case IR_OP_COLLECTIVE_PERMUTE: case IR_OP_COLLECTIVE_BROADCAST:
    case IR_OP_ALL_GATHER: case IR_OP_REDUCE_SCATTER: case IR_OP_ALL_TO_ALL:
        return true;
    default:
        return false;
    }
}

static bool runs_bounded(IrOpcode op)
{
    return op == IR_OP_DYNAMIC_SLICE || op == IR_OP_DYNAMIC_UPDATE_SLICE || op == IR_OP_SCATTER ||
           op == IR_OP_GATHER || eval_dynamic_collective(op);
}

static bool list_has(const IrIntList *l, int64_t v)
{
    for (int k = 0; k < l->n; k++)
        if (l->v[k] == v)
            return true;
    return false;
}

static bool refuse(const IrInstr *in, int k, int d, const char *why, Error *err)
{
    return error_set(err, ERR_UNSUPPORTED, in->info->loc,
                     "unsupported op: %s with operand %d of dynamic size in dimension %d (%s)",
                     ir_opcode_name(in->op), k, d, why);
}

/* The runtime sizes of result leaf `leaf` (declared dl) of a bounded op. */
static bool bounded_sizes(const IrInstr *in, Value *const *args, int leaf, const IrShape *dl, int64_t *out,
                          Error *err)
{
    const IrIntList *dims = &in->lists[IR_LIST_DIMENSIONS];
    int n = in->n_operands;
    const Value *x = args[leaf < n ? leaf : 0];
    for (int d = 0; d < dl->rank; d++)
        out[d] = dl->dims[d];
    switch ((int)in->op) {
    case IR_OP_DYNAMIC_SLICE:
        x = args[0];
        for (int d = 0; d < dl->rank; d++)
            if (dl->dims[d] == x->shape->dims[d])
                out[d] = size_at(x, d);
        break;
    case IR_OP_DYNAMIC_UPDATE_SLICE:
        for (int d = 0; args[1]->sizes && d < args[1]->shape->rank; d++)
            if (short_at(args[1], d))
                return refuse(in, 1, d, "an update of dynamic size", err);
        x = args[0];
        for (int d = 0; d < dl->rank; d++)
            out[d] = size_at(x, d);
        break;
    case IR_OP_SCATTER:
        for (int k = n / 2; k < n; k++)
            for (int d = 0; args[k]->sizes && d < args[k]->shape->rank; d++)
                if (short_at(args[k], d))
                    return refuse(in, k, d, "scatter indices or updates of dynamic size", err);
        for (int d = 0; d < dl->rank; d++)
            out[d] = size_at(x, d);
        break;
    case IR_OP_GATHER: {
        /* Result dimensions are batch dimensions (those of the indices, in
         * order, but the index vector's) and offset dimensions (the
         * operand's, in order, but the collapsed and batching ones); an
         * offset dimension whose slice is the operand's whole bound takes
         * the operand's size. */
        const Value *op = args[0], *idx = args[1];
        const IrIntList *offs = &in->lists[IR_LIST_OFFSET_DIMS], *ss = &in->lists[IR_LIST_SLICE_SIZES];
        const IrIntList *coll = &in->lists[IR_LIST_COLLAPSED_SLICE_DIMS];
        const IrIntList *obat = &in->lists[IR_LIST_OPERAND_BATCHING_DIMS];
        IrOptInt ivd = in->ints[IR_INT_INDEX_VECTOR_DIM];
        int iv = ivd.present ? (int)ivd.v : idx->shape->rank;
        if (iv < idx->shape->rank && short_at(idx, iv))
            return refuse(in, 1, iv, "the index vector dimension", err);
        int b = 0, w = 0;
        for (int o = 0; o < dl->rank; o++) {
            if (list_has(offs, o)) {
                while (w < op->shape->rank && (list_has(coll, w) || list_has(obat, w)))
                    w++;
                if (w < op->shape->rank && w < ss->n && ss->v[w] == op->shape->dims[w])
                    out[o] = size_at(op, w);
                w++;
            } else {
                if (b == iv)
                    b++;
                if (b < idx->shape->rank)
                    out[o] = size_at(idx, b);
                b++;
            }
        }
        break;
    }
    default:        /* the collectives */
        if (!ir_shape_is_array(x->shape) || x->shape->rank != dl->rank)
            break;
        for (int d = 0; d < dl->rank; d++) {
            bool moved = in->op == IR_OP_ALL_GATHER || in->op == IR_OP_REDUCE_SCATTER || in->op == IR_OP_ALL_TO_ALL;
            bool named = dims->n == 0;
            for (int k = 0; k < dims->n; k++)
                named = named || dims->v[k] == d;
            if (short_at(x, d) && moved && named)
                return refuse(in, leaf < n ? leaf : 0, d, "the dimension the collective gathers or splits", err);
            if (short_at(x, d))
                out[d] = x->sizes[d];
        }
        break;
    }
    return dims_fit(in, dl, out, err);
}

/* Copies of instr's operands into c, each array cut to its box (box NULL:
 * the whole bounded array), with every dimension static, and copies of the
 * operand instructions in ops whose shapes are theirs (op_ptrs: their
 * addresses, the operand list of the instruction fn is given). */
static bool copy_operands(Arena *a, const IrInstr *instr, Value *const *args, int64_t (*box)[IR_MAX_RANK],
                          Value **c, IrInstr *ops, IrInstr **op_ptrs, Error *err)
{
    for (int k = 0; k < instr->n_operands; k++) {
        const IrShape *s = args[k]->shape;
        if (!(c[k] = ir_shape_is_array(s) ? value_box_copy(a, args[k], box ? box[k] : s->dims, err)
                                          : value_retain(args[k])))
            return false;
        ops[k] = *instr->operands[k];
        ops[k].shape = (IrShape *)c[k]->shape;
        op_ptrs[k] = &ops[k];
    }
    return true;
}

/* fn on static copies of the bounded operands; the result carries the
 * sizes bounded_sizes derives. */
static bool run_bounded(Interp *it, const IrInstr *instr, EvalFn fn, Value *const *args, Value **out, Arena *a,
                        Value **c, IrInstr *ops, IrInstr **op_ptrs, Error *err)
{
    const IrShape *decl = instr->shape;
    int leaves = ir_shape_is_tuple(decl) ? decl->n_elements : 1;
    int64_t (*sizes)[IR_MAX_RANK] = arena_alloc(a, (size_t)(leaves ? leaves : 1) * sizeof *sizes);
    for (int i = 0; i < leaves; i++) {
        const IrShape *dl = leaf_of(decl, i);
        if (!ir_shape_is_array(dl))
            continue;
        if (!bounded_sizes(instr, args, i, dl, sizes[i], err))
            return false;
    }
    if (!copy_operands(a, instr, args, NULL, c, ops, op_ptrs, err))
        return false;
    IrInstr tmp = *instr;
    tmp.shape = static_shape(a, decl);
    tmp.operands = op_ptrs;
    Value *r = NULL;
    bool ok = fn(it, &tmp, c, &r, err) && (*out = embed(decl, r, sizes[0], err)) != NULL;
    value_release(r);
    return ok;
}

/* ---- The ops that run on the arrays of the runtime shapes */

/* The box each operand is cut to: its runtime sizes, made equal where the
 * op combines elements of two operands position by position. */
static void operand_boxes(const IrInstr *in, Value *const *args, int64_t (*box)[IR_MAX_RANK])
{
    int n = in->n_operands;
    for (int k = 0; k < n; k++)
        if (ir_shape_is_array(args[k]->shape))
            for (int d = 0; d < args[k]->shape->rank; d++)
                box[k][d] = size_at(args[k], d);
    bool elementwise = (ir_op_info[in->op].flags & OPF_ELEMENTWISE) || in->op == IR_OP_SELECT ||
                       in->op == IR_OP_CLAMP || in->op == IR_OP_MAP || in->op == IR_OP_COMPARE;
    if (elementwise && ir_shape_is_array(in->shape)) {
        int rank = in->shape->rank;
        for (int d = 0; d < rank; d++) {
            int64_t m = INT64_MAX;
            for (int k = 0; k < n; k++)
                if (ir_shape_is_array(args[k]->shape) && args[k]->shape->rank == rank && box[k][d] < m)
                    m = box[k][d];
            for (int k = 0; k < n; k++)
                if (ir_shape_is_array(args[k]->shape) && args[k]->shape->rank == rank)
                    box[k][d] = m;
        }
    } else if (in->op == IR_OP_DOT && n == 2) {
        const IrIntList *lc = &in->lists[IR_LIST_LHS_CONTRACTING_DIMS], *rc = &in->lists[IR_LIST_RHS_CONTRACTING_DIMS];
        for (int k = 0; k < lc->n && k < rc->n; k++) {
            int64_t *l = &box[0][lc->v[k]], *r = &box[1][rc->v[k]];
            *l = *r = *l < *r ? *l : *r;
        }
    } else if (in->op == IR_OP_CONVOLUTION && n == 2 && in->info->conv_dims) {
        const IrConvDims *cd = in->info->conv_dims;
        IrOptInt fgc = in->ints[IR_INT_FEATURE_GROUP_COUNT], bgc = in->ints[IR_INT_BATCH_GROUP_COUNT];
        if ((!fgc.present || fgc.v == 1) && (!bgc.present || bgc.v == 1)) {
            int64_t *l = &box[0][cd->input_feature], *r = &box[1][cd->kernel_input_feature];
            *l = *r = *l < *r ? *l : *r;
        }
    }
}

/* A copy of in's slice ranges with each limit cut to the runtime size of
 * the operand (x): the slice takes only what the operand holds. */
static IrInstrInfo *cut_slice(Arena *a, const IrInstr *in, const IrShape *x)
{
    IrInstrInfo *info = arena_alloc(a, sizeof *info);
    *info = *in->info;
    if (in->info->n_slice > 0) {
        info->slice = arena_alloc(a, (size_t)in->info->n_slice * sizeof *info->slice);
        for (int d = 0; d < in->info->n_slice; d++) {
            IrSliceDim sl = in->info->slice[d];
            if (d < x->rank && sl.limit > x->dims[d])
                sl.limit = x->dims[d] > sl.start ? x->dims[d] : sl.start;
            info->slice[d] = sl;
        }
    }
    return info;
}

static bool run_runtime(Interp *it, const IrInstr *instr, EvalFn fn, Value *const *args, Value **out, Arena *a,
                        Value **c, IrInstr *ops, IrInstr **op_ptrs, Error *err)
{
    int n = instr->n_operands;
    int64_t (*box)[IR_MAX_RANK] = arena_alloc(a, (size_t)(n ? n : 1) * sizeof *box);
    operand_boxes(instr, args, box);
    if (!copy_operands(a, instr, args, box, c, ops, op_ptrs, err))
        return false;
    IrShape *rs = result_shape(a, instr, c, err);
    if (!rs)
        return false;
    IrInstr tmp = *instr;
    tmp.shape = rs;
    tmp.operands = op_ptrs;
    if (instr->op == IR_OP_SLICE && n == 1)
        tmp.info = cut_slice(a, instr, c[0]->shape);
    Value *r = NULL;
    bool ok = fn(it, &tmp, c, &r, err) && (*out = embed(instr->shape, r, NULL, err)) != NULL;
    value_release(r);
    return ok;
}

bool eval_dynamic(Interp *it, const IrInstr *instr, EvalFn fn, Value *const *args, Value **out, Error *err)
{
    int n = instr->n_operands;
    bool dynamic = ir_shape_is_dynamic(instr->shape);
    for (int k = 0; k < n && !dynamic; k++)
        dynamic = arg_dynamic(args[k]);
    if (!dynamic || eval_dynamic_passes_sizes(instr->op))
        return fn(it, instr, args, out, err);
    Arena *a = arena_new(4096);
    Value **c = xcalloc((size_t)(n ? n : 1), sizeof *c);
    /* IrInstr is cache-line aligned; its size is a multiple of that. */
    IrInstr *ops = aligned_alloc(_Alignof(IrInstr), (size_t)(n ? n : 1) * sizeof *ops);
    IrInstr **op_ptrs = xcalloc((size_t)(n ? n : 1), sizeof *op_ptrs);
    bool ok;
    if (!ops)
        ok = error_set(err, ERR_NOMEM, instr->info->loc, "out of memory");
    else if (runs_bounded(instr->op))
        ok = run_bounded(it, instr, fn, args, out, a, c, ops, op_ptrs, err);
    else
        ok = run_runtime(it, instr, fn, args, out, a, c, ops, op_ptrs, err);
    for (int k = 0; k < n; k++)
        value_release(c[k]);
    free(c);
    free(ops);
    free(op_ptrs);
    arena_free(a);
    return ok;
}
