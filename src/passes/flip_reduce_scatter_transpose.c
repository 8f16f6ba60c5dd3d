/* flip_reduce_scatter_transpose.c: #104,
 *   transpose([convert](reduce-scatter(X))) => reduce-scatter(transpose([convert](X)))
 * for a single-operand reduce-scatter whose operand is
 * reshape(dynamic-update-slice(...)) or add(...) with a
 * get-tuple-element(parameter) operand (the seed's two producer idioms).
 * Why: the scatter axis becomes contiguous and the transpose can fuse into
 * the producer.
 * The new reduce-scatter scatters dim d' with perm[d'] == d, so its output
 * shape is the transpose's; not finding d' is an internal error (the seed's
 * FATAL), never a silent skip.  channel_id reused.  With a convert that
 * changes the type, the reduction runs in the convert's type, so it gets a
 * copy of the reduction computation retyped to it (the seed reuses the
 * narrow one, which then no longer takes the operand's type).
 * Exact without a convert; with one the rounding changes as in #102.
 * Needs: a verified module.  Keeps: verifier clean; the transpose's metadata.
 * Sound mode adds: a convert must be a widening float convert. */
#include "expand.h"

int64_t flip_scatter_dim_after_transpose(const int64_t *perm, int n, int64_t d)
{
    for (int i = 0; i < n; i++)
        if (perm[i] == d)
            return i;
    return -1;
}

typedef struct Chain {
    IrInstr *convert;           /* NULL when there is none */
    IrInstr *rs;
} Chain;

static bool is_gte_of_parameter(const IrInstr *x)
{
    return x->op == IR_OP_GET_TUPLE_ELEMENT && ir_op_is(x->operands[0], IR_OP_PARAMETER);
}

static bool producer_matches(const IrInstr *src)
{
    if (src->op == IR_OP_RESHAPE)
        return ir_op_is(src->operands[0], IR_OP_DYNAMIC_UPDATE_SLICE);
    if (src->op == IR_OP_ADD)
        return is_gte_of_parameter(src->operands[0]) || is_gte_of_parameter(src->operands[1]);
    return false;
}

static bool find_chain(const IrInstr *t, Chain *c)
{
    if (t->op != IR_OP_TRANSPOSE)
        return false;
    IrInstr *op = t->operands[0];
    c->convert = NULL;
    if (op->op == IR_OP_CONVERT) {
        c->convert = op;
        op = op->operands[0];
    }
    c->rs = op;
    return op->op == IR_OP_REDUCE_SCATTER && op->n_operands == 1 && producer_matches(op->operands[0]);
}

/* The reduction in the type the new reduce-scatter runs in. */
static IrComputation *reducer_for(ExpandCtx *ctx, const Chain *c)
{
    IrComputation *comp = c->rs->info->comps[IR_COMP_TO_APPLY];
    IrElemType from = c->rs->shape->type, to = c->convert ? c->convert->shape->type : from;
    return from == to ? comp : expand_retyped_reducer(ctx->m, comp, from, to, ctx->state);
}

static bool match(const IrInstr *instr, ExpandCtx *ctx)
{
    Chain c;
    if (!find_chain(instr, &c))
        return false;
    if (c.convert && expand_sound(ctx) && !expand_is_widening_float(c.rs->shape->type, c.convert->shape->type))
        return expand_decline(ctx, "convert is not a widening float convert");
    if (!reducer_for(ctx, &c))
        return expand_decline(ctx, "reduction computation cannot be retyped");
    return true;
}

/* transpose(src) by the old transpose's permutation. */
static IrInstr *transpose_of(IrInstr *t, IrInstr *src, IrModule *m)
{
    const IrIntList *perm = &t->lists[IR_LIST_DIMENSIONS];
    IrShape *shape = ir_shape_with_type(m->arena, t->shape, src->shape->type);
    if (!shape)
        return ir_module_noted(m, NULL);
    for (int i = 0; i < perm->n; i++)
        shape->dims[i] = src->shape->dims[perm->v[i]];
    IrInstr *tr = expand_new(t, IR_OP_TRANSPOSE, shape, 1, &src);
    expand_copy_typed_attrs(m, tr, t);
    return tr;
}

static IrInstr *build(IrInstr *t, ExpandCtx *ctx, Error *err)
{
    IrModule *m = ctx->m;
    Chain c;
    find_chain(t, &c);
    const IrIntList *perm = &t->lists[IR_LIST_DIMENSIONS];
    int64_t d = c.rs->lists[IR_LIST_DIMENSIONS].v[0];
    int64_t nd = flip_scatter_dim_after_transpose(perm->v, perm->n, d);
    if (nd < 0) {
        error_set(err, ERR_INTERNAL, t->info->loc, "Failed to find new scatter dim in pass "
                  "FlipReduceScatterTranspose: dimension %lld is not in the permutation of %s",
                  (long long)d, t->name);
        return NULL;
    }
    IrInstr *src = c.rs->operands[0];
    if (c.convert)
        src = expand_new(t, IR_OP_CONVERT, ir_shape_with_type(m->arena, src->shape, c.convert->shape->type), 1, &src);
    IrInstr *tr = transpose_of(t, src, m);
    IrInstr *rs = expand_new(t, IR_OP_REDUCE_SCATTER, ir_shape_clone(m->arena, t->shape), 1, &tr);
    expand_copy_typed_attrs(m, rs, c.rs);
    if (!rs || m->nomem)
        return NULL;
    rs->lists[IR_LIST_DIMENSIONS].v[0] = nd;
    rs->info->comps[IR_COMP_TO_APPLY] = reducer_for(ctx, &c);
    expand_adopt_computation(m, rs->info->comps[IR_COMP_TO_APPLY]);
    return rs;
}

PassResult pass_flip_reduce_scatter_transpose(IrModule *m, const PassOptions *opt, PassStats *stats, Error *err)
{
    ExpandReducerCache cache = { 0 };
    return pass_expand(m, opt, stats, match, build, &cache, err);
}
