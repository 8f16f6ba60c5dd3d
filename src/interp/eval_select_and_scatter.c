/* eval_select_and_scatter.c: select-and-scatter(operand, source, init).
 *
 * The semantics, as XLA's evaluator and CPU emitter run it: the output starts
 * as init everywhere.  Then for each source element, in row-major order, the
 * window it stands for is placed over the operand (position
 * s * stride + w * rhs_dilate - pad_lo along each dim, w the window index)
 * and walked in row-major order of the window, skipping positions in the
 * padding (or between base elements, with lhs_dilate): the first valid
 * position is selected, and each later valid candidate c replaces the
 * selection x when select(x, c) is false.  With select = GE that keeps the
 * first of equal maxima, with GT the last; a NaN is replaced by the next
 * candidate (NaN >= c is false) and replaces the selection (x >= NaN is
 * false).  Then output[selected] = scatter(output[selected], source element):
 * the current output first, as XLA's CPU and GPU emitters call it (XLA's
 * HloEvaluator passes the two the other way round; for add, the case that
 * matters, that makes no difference).  A window that lies wholly in the
 * padding selects nothing and its source element is dropped.
 *
 * Two phases: every source element's selection (an operand offset, -1 for
 * none), then the scatter in source order.  Fast paths: a select that is one
 * compare(p0, p1) (or (p1, p0)) GE/GT/LE/LT with the operand type's default
 * comparison, on floats of at most 64 bits or integers of at most 32 (read
 * exactly as doubles), and a scatter that is add(p0, p1) on f16, bf16, f32,
 * f64 or 8- to 64-bit integers: plain typed loops.  Everything else calls
 * the computations per element through eval_call_scalar(); both give the
 * same bits. */
#include "eval.h"

#include <stdlib.h>
#include <string.h>

#define MAX_ELEM_BYTES 16   /* c128 */

typedef struct SasGeom {
    int rank;
    const IrWindowDim *w;
    int64_t in_dims[IR_MAX_RANK], in_strides[IR_MAX_RANK];
    int64_t src_dims[IR_MAX_RANK];      /* one source element per window */
    int64_t win_dims[IR_MAX_RANK];
    int64_t n_src, n_win;
} SasGeom;

/* ------------------------------------------------------------------ */
/* Operands and geometry                                                */

static bool bad(const IrInstr *instr, Error *err, const char *what)
{
    return error_set(err, ERR_SHAPE, instr->info->loc, "select-and-scatter: %s", what);
}

static bool type_ok(IrElemType t)
{
    return t > IR_TYPE_INVALID && t < IR_TYPE_TOKEN && ir_type_storage_bytes(t) <= MAX_ELEM_BYTES;
}

/* Windows along one dim: those that fit the padded, dilated base; -1 when
 * the dilated base is too long to compute with. */
static int64_t window_count(int64_t in, const IrWindowDim *w)
{
    if (in > 0 && in - 1 > (INT64_MAX / 4) / w->lhs_dilate)
        return -1;
    int64_t base = in == 0 ? 0 : (in - 1) * w->lhs_dilate + 1;
    int64_t padded = base + w->pad_lo + w->pad_hi;
    int64_t span = (w->size - 1) * w->rhs_dilate + 1;
    return padded < span ? 0 : (padded - span) / w->stride + 1;
}

/* Sizes, strides and dilations >= 1, and every number small enough that
 * the position arithmetic cannot overflow. */
static bool window_dim_ok(const IrWindowDim *w)
{
    const int64_t lim = INT32_MAX;
    return w->size >= 1 && w->size <= lim && w->stride >= 1 && w->stride <= lim && w->lhs_dilate >= 1 &&
           w->lhs_dilate <= lim && w->rhs_dilate >= 1 && w->rhs_dilate <= lim && w->pad_lo >= -lim &&
           w->pad_lo <= lim && w->pad_hi >= -lim && w->pad_hi <= lim && !w->reversal;
}

static bool sas_geom(const IrInstr *instr, Value *const *args, SasGeom *g, Error *err)
{
    const IrShape *x = args[0]->shape, *src = args[1]->shape, *init = args[2]->shape;
    if (x->type == IR_TYPE_TUPLE || src->type == IR_TYPE_TUPLE || init->type == IR_TYPE_TUPLE || !type_ok(x->type))
        return error_set(err, ERR_UNSUPPORTED, instr->info->loc, "select-and-scatter: operand %s is not supported",
                         ir_shape_str(x));
    if (src->type != x->type || init->type != x->type || init->rank != 0 || src->rank != x->rank)
        return bad(instr, err, "source and init must have the operand's type, init be a scalar");
    if (instr->info->n_window != x->rank || (x->rank > 0 && !instr->info->has_window))
        return bad(instr, err, "the window must have one dimension per operand dimension");
    if (instr->shape->type != x->type || !ir_shape_equal_dims(instr->shape, x))
        return bad(instr, err, "the result must have the operand's shape");
    memset(g, 0, sizeof *g);
    g->rank = x->rank;
    g->w = instr->info->window;
    g->n_src = g->n_win = 1;
    eval_strides(x, g->in_strides);
    for (int d = 0; d < x->rank; d++) {
        const IrWindowDim *w = &g->w[d];
        if (!window_dim_ok(w) || g->n_win > INT32_MAX / w->size)
            return error_set(err, ERR_UNSUPPORTED, instr->info->loc,
                             "select-and-scatter: window dimension %d is not supported", d);
        g->in_dims[d] = x->dims[d];
        g->src_dims[d] = window_count(x->dims[d], w);
        g->win_dims[d] = w->size;
        if (g->src_dims[d] < 0)
            return error_set(err, ERR_UNSUPPORTED, instr->info->loc,
                             "select-and-scatter: window dimension %d is not supported", d);
        if (src->dims[d] != g->src_dims[d])
            return bad(instr, err, "the source must have one element per window");
        g->n_src *= g->src_dims[d];
        g->n_win *= w->size;
    }
    return true;
}

/* A computation taking two scalars of type t and returning a scalar of ret. */
static bool scalar_callee(const IrInstr *instr, IrCompAttr which, IrElemType t, IrElemType ret, Error *err)
{
    const IrComputation *c = instr->info->comps[which];
    bool ok = c && c->n_params == 2 && c->root && c->root->shape->type == ret && c->root->shape->rank == 0;
    for (int k = 0; ok && k < 2; k++)
        ok = c->params[k] && c->params[k]->shape->type == t && c->params[k]->shape->rank == 0;
    if (!ok)
        return error_set(err, ERR_SHAPE, instr->info->loc, "select-and-scatter: %s must be (%s[], %s[]) -> %s[]",
                         ir_comp_attr_name[which], ir_type_name(t), ir_type_name(t), ir_type_name(ret));
    return true;
}

/* The operand offsets of the valid positions of the window of source
 * element s, in row-major window order; returns how many. */
static int64_t window_offsets(const SasGeom *g, const int64_t *s, int64_t *offs)
{
    int64_t wi[IR_MAX_RANK] = { 0 }, n = 0;
    for (int64_t k = 0; k < g->n_win; k++, eval_next_index(g->rank, g->win_dims, wi)) {
        int64_t off = 0;
        int d = 0;
        for (; d < g->rank; d++) {
            const IrWindowDim *w = &g->w[d];
            int64_t p = s[d] * w->stride + wi[d] * w->rhs_dilate - w->pad_lo;
            if (p < 0 || p % w->lhs_dilate || p / w->lhs_dilate >= g->in_dims[d])
                break;
            off += p / w->lhs_dilate * g->in_strides[d];
        }
        if (d == g->rank)
            offs[n++] = off;
    }
    return n;
}

/* ------------------------------------------------------------------ */
/* Selection                                                            */

/* The fast select: x is kept while (x dir c) holds. */
typedef struct FastSelect {
    IrElemType t;
    const void *x;
    IrCompareDir dir;
} FastSelect;

static IrCompareDir swap_dir(IrCompareDir d)
{
    switch (d) {
    case IR_CMP_GE: return IR_CMP_LE;
    case IR_CMP_GT: return IR_CMP_LT;
    case IR_CMP_LE: return IR_CMP_GE;
    case IR_CMP_LT: return IR_CMP_GT;
    case IR_CMP_NONE: case IR_CMP_EQ: case IR_CMP_NE: break;
    }
    return IR_CMP_NONE;
}

/* Element types whose values a double holds exactly, compared as the
 * default comparison (ct) of the type does. */
static bool fast_select_type(IrElemType t, IrCompareType ct)
{
    switch ((int)t) {
    case IR_TYPE_F16: case IR_TYPE_BF16: case IR_TYPE_F32: case IR_TYPE_F64:
        return ct == IR_CMPT_DEFAULT || ct == IR_CMPT_FLOAT;
    case IR_TYPE_S8: case IR_TYPE_S16: case IR_TYPE_S32:
        return ct == IR_CMPT_DEFAULT || ct == IR_CMPT_SIGNED;
    case IR_TYPE_PRED: case IR_TYPE_U8: case IR_TYPE_U16: case IR_TYPE_U32:
        return ct == IR_CMPT_DEFAULT || ct == IR_CMPT_UNSIGNED;
    default:
        return false;
    }
}

/* select is `ROOT compare(p0, p1)` (or (p1, p0)) GE, GT, LE or LT. */
static bool fast_select_plan(const IrComputation *c, IrElemType t, FastSelect *f)
{
    const IrInstr *root = c->root;
    if (root->op != IR_OP_COMPARE || root->n_operands != 2 || !fast_select_type(t, root->info->compare_type))
        return false;
    const IrInstr *a = root->operands[0], *b = root->operands[1];
    if (a->op != IR_OP_PARAMETER || b->op != IR_OP_PARAMETER || a == b)
        return false;
    IrCompareDir dir = root->info->direction;
    if (dir != IR_CMP_GE && dir != IR_CMP_GT && dir != IR_CMP_LE && dir != IR_CMP_LT)
        return false;
    f->t = t;
    f->dir = a->info->parameter_number == 0 ? dir : swap_dir(dir);
    return true;
}

static double key_at(IrElemType t, const void *p, int64_t i)
{
    switch ((int)t) {
    case IR_TYPE_F32: return ((const float *)p)[i];
    case IR_TYPE_F64: return ((const double *)p)[i];
    case IR_TYPE_F16: return ir_f16_to_f32(((const uint16_t *)p)[i]);
    case IR_TYPE_BF16: return ir_bf16_to_f32(((const uint16_t *)p)[i]);
    case IR_TYPE_S8: return ((const int8_t *)p)[i];
    case IR_TYPE_S16: return ((const int16_t *)p)[i];
    case IR_TYPE_S32: return ((const int32_t *)p)[i];
    case IR_TYPE_U16: return ((const uint16_t *)p)[i];
    case IR_TYPE_U32: return ((const uint32_t *)p)[i];
    default: return ((const uint8_t *)p)[i];           /* pred, u8 */
    }
}

static bool holds(IrCompareDir dir, double a, double b)
{
    switch ((int)dir) {
    case IR_CMP_GE: return a >= b;
    case IR_CMP_GT: return a > b;
    case IR_CMP_LE: return a <= b;
    default: return a < b;          /* LT: fast_select_plan admits no other */
    }
}

static int64_t select_fast(const FastSelect *f, const int64_t *offs, int64_t n)
{
    int64_t best = offs[0];
    double x = key_at(f->t, f->x, best);
    for (int64_t j = 1; j < n; j++) {
        double c = key_at(f->t, f->x, offs[j]);
        if (!holds(f->dir, x, c)) {
            x = c;
            best = offs[j];
        }
    }
    return best;
}

static bool select_slow(Interp *it, const IrInstr *instr, const Value *x, const int64_t *offs, int64_t n,
                        int64_t *best, Error *err)
{
    IrElemType t = x->shape->type, types[2] = { t, t };
    size_t es = (size_t)ir_type_storage_bytes(t);
    const unsigned char *base = x->data;
    *best = offs[0];
    for (int64_t j = 1; j < n; j++) {
        const void *args[2] = { base + (size_t)*best * es, base + (size_t)offs[j] * es };
        uint8_t keep = 0;
        void *res[1] = { &keep };
        if (!eval_call_scalar(it, instr->info->comps[IR_COMP_SELECT], types, args, 2, res, 1, err))
            return false;
        if (!keep)
            *best = offs[j];
    }
    return true;
}

/* sel[i]: the operand offset source element i scatters to, -1 for none. */
static bool select_all(Interp *it, const IrInstr *instr, const SasGeom *g, const Value *x, int64_t *sel,
                       int64_t *offs, Error *err)
{
    FastSelect f = { x->shape->type, x->data, IR_CMP_NONE };
    bool fast = fast_select_plan(instr->info->comps[IR_COMP_SELECT], x->shape->type, &f);
    int64_t s[IR_MAX_RANK] = { 0 };
    for (int64_t i = 0; i < g->n_src; i++, eval_next_index(g->rank, g->src_dims, s)) {
        int64_t n = window_offsets(g, s, offs);
        sel[i] = -1;
        if (n == 0)
            continue;
        if (fast)
            sel[i] = select_fast(&f, offs, n);
        else if (!select_slow(it, instr, x, offs, n, &sel[i], err))
            return false;
    }
    return true;
}

/* ------------------------------------------------------------------ */
/* Scatter                                                              */

#define SCATTER_ADD(T, U)                                                                  \
    do {                                                                                   \
        T *o_ = out;                                                                       \
        const T *s_ = src;                                                                 \
        for (int64_t i = 0; i < n; i++)                                                    \
            if (sel[i] >= 0)                                                               \
                o_[sel[i]] = (T)((U)o_[sel[i]] + (U)s_[i]);                                \
    } while (0)

/* out[sel[i]] += src[i] in source order, as the interpreter's add rounds
 * (narrow floats through f32, integers wrapping); false for other types. */
static bool scatter_add_fast(IrElemType t, void *out, const void *src, const int64_t *sel, int64_t n)
{
    uint16_t *o16 = out;
    const uint16_t *s16 = src;
    switch ((int)t) {
    case IR_TYPE_F32: SCATTER_ADD(float, float); return true;
    case IR_TYPE_F64: SCATTER_ADD(double, double); return true;
    case IR_TYPE_S8: case IR_TYPE_U8: SCATTER_ADD(uint8_t, uint32_t); return true;
    case IR_TYPE_S16: case IR_TYPE_U16: SCATTER_ADD(uint16_t, uint32_t); return true;
    case IR_TYPE_S32: case IR_TYPE_U32: SCATTER_ADD(uint32_t, uint32_t); return true;
    case IR_TYPE_S64: case IR_TYPE_U64: SCATTER_ADD(uint64_t, uint64_t); return true;
    case IR_TYPE_F16:
        for (int64_t i = 0; i < n; i++)
            if (sel[i] >= 0)
                o16[sel[i]] = ir_f32_to_f16(ir_f16_to_f32(o16[sel[i]]) + ir_f16_to_f32(s16[i]));
        return true;
    case IR_TYPE_BF16:
        for (int64_t i = 0; i < n; i++)
            if (sel[i] >= 0)
                o16[sel[i]] = ir_f32_to_bf16(ir_bf16_to_f32(o16[sel[i]]) + ir_bf16_to_f32(s16[i]));
        return true;
    default:
        return false;
    }
}

static bool scatter_slow(Interp *it, const IrInstr *instr, IrElemType t, void *out, const void *src,
                         const int64_t *sel, int64_t n, Error *err)
{
    IrElemType types[2] = { t, t };
    size_t es = (size_t)ir_type_storage_bytes(t);
    for (int64_t i = 0; i < n; i++) {
        if (sel[i] < 0)
            continue;
        void *dst = (unsigned char *)out + (size_t)sel[i] * es;
        const void *args[2] = { dst, (const unsigned char *)src + (size_t)i * es };
        void *res[1] = { dst };         /* eval_call_scalar copies the arguments first */
        if (!eval_call_scalar(it, instr->info->comps[IR_COMP_SCATTER], types, args, 2, res, 1, err))
            return false;
    }
    return true;
}

static void fill(void *dst, const void *v, int64_t n, size_t es)
{
    unsigned char *d = dst;
    for (int64_t i = 0; i < n; i++)
        memcpy(d + (size_t)i * es, v, es);
}

bool eval_select_and_scatter(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    SasGeom g;
    if (instr->n_operands != 3)
        return bad(instr, err, "expects operand, source and init value");
    if (!sas_geom(instr, args, &g, err))
        return false;
    IrElemType t = args[0]->shape->type;
    if (!scalar_callee(instr, IR_COMP_SELECT, t, IR_TYPE_PRED, err) ||
        !scalar_callee(instr, IR_COMP_SCATTER, t, t, err))
        return false;
    Value *res = value_new_array(instr->shape, err);
    /* distinct window positions are distinct operand positions */
    int64_t n_x = value_elements(args[0]), n_offs = g.n_win < n_x ? g.n_win : n_x;
    int64_t *sel = xmalloc_try((size_t)(g.n_src + n_offs + 1) * sizeof *sel);
    if (!res || !sel) {
        value_release(res);
        free(sel);
        return res ? error_set(err, ERR_NOMEM, instr->info->loc, "select-and-scatter: out of memory") : false;
    }
    size_t es = (size_t)ir_type_storage_bytes(t);
    fill(res->data, args[2]->data, value_elements(res), es);
    bool ok = select_all(it, instr, &g, args[0], sel, sel + g.n_src, err);
    bool add = interp_trivial_reducer(instr->info->comps[IR_COMP_SCATTER]) == IR_OP_ADD;
    if (ok && !(add && scatter_add_fast(t, res->data, args[1]->data, sel, g.n_src)))
        ok = scatter_slow(it, instr, t, res->data, args[1]->data, sel, g.n_src, err);
    free(sel);
    if (!ok) {
        value_release(res);
        return false;
    }
    *out = res;
    return true;
}
