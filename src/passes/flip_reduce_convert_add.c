/* flip_reduce_convert_add.c: #102, the gradient-accumulation idiom
 *   add(convert(R(g)), get-tuple-element(parameter))   (either operand order)
 *   => add(R'(convert(g)), get-tuple-element(parameter))
 * with R a reduce-scatter or all-reduce and R' the same collective in the
 * convert's element type.
 * Why: the cross-device reduction runs in the accumulator's (wider) type,
 * and the collective's result needs no convert before the add.
 * R' keeps R's groups, flags and scatter dimension; its reduction is a new
 * computation, R's retyped to the wide type (R's own is left for its other
 * users); its channel_id is fresh (the seed's NextChannelId), so with no
 * channel_id and num_partitions > 1 it takes in more devices: declined for
 * a reduce-scatter (the shape would change) in both modes, done for an
 * all-reduce in faithful mode only (the seed's behaviour, unsound).
 * The result differs in rounding: more precise when the convert widens,
 * less when it narrows (spec section 4).
 * Needs: a verified module.  Keeps: verifier clean; the add's metadata.
 * Sound mode adds: only a widening float convert. */
#include "expand.h"

typedef struct Parts {
    IrInstr *convert, *gte, *reduce;
} Parts;

static IrInstr *operand_of(const IrInstr *instr, IrOpcode op)
{
    for (int k = 0; k < instr->n_operands; k++)
        if (instr->operands[k]->op == op)
            return instr->operands[k];
    return NULL;
}

/* The seed's matcher: the first convert operand, the first gte operand. */
static bool find_parts(const IrInstr *add, Parts *p)
{
    if (add->op != IR_OP_ADD || add->n_operands != 2)
        return false;
    p->convert = operand_of(add, IR_OP_CONVERT);
    p->gte = operand_of(add, IR_OP_GET_TUPLE_ELEMENT);
    if (!p->convert || !p->gte || !ir_op_is(p->gte->operands[0], IR_OP_PARAMETER))
        return false;
    p->reduce = p->convert->operands[0];
    return (p->reduce->op == IR_OP_REDUCE_SCATTER || p->reduce->op == IR_OP_ALL_REDUCE) &&
           p->reduce->n_operands == 1;
}

/* R's reduction in type `to`: R's own when the type does not change. */
static IrComputation *wide_reducer(ExpandCtx *ctx, const Parts *p)
{
    IrComputation *comp = p->reduce->info->comps[IR_COMP_TO_APPLY];
    IrElemType from = p->reduce->shape->type, to = p->convert->shape->type;
    return from == to ? comp : expand_retyped_reducer(ctx->m, comp, from, to, ctx->state);
}

static bool match(const IrInstr *instr, ExpandCtx *ctx)
{
    Parts p;
    if (!find_parts(instr, &p))
        return false;
    bool sound = expand_sound(ctx);
    if (sound && !expand_is_widening_float(p.reduce->shape->type, p.convert->shape->type))
        return expand_decline(ctx, "convert is not a widening float convert");
    if (expand_fresh_channel_widens(ctx->m, p.reduce) && (sound || p.reduce->op == IR_OP_REDUCE_SCATTER))
        return expand_decline(ctx, "no channel_id and num_partitions > 1: a fresh one would change the group");
    if (!wide_reducer(ctx, &p))
        return expand_decline(ctx, "reduction computation cannot be retyped");
    return true;
}

static IrInstr *build(IrInstr *add, ExpandCtx *ctx, Error *err)
{
    (void)err;
    IrModule *m = ctx->m;
    Parts p;
    find_parts(add, &p);
    IrElemType wide = p.convert->shape->type;
    IrInstr *g = p.reduce->operands[0];
    IrInstr *cg = expand_new(add, IR_OP_CONVERT, ir_shape_with_type(m->arena, g->shape, wide), 1, &g);
    IrShape *shape = ir_shape_with_type(m->arena, p.reduce->shape, wide);
    IrInstr *r = expand_new(add, p.reduce->op, shape, 1, &cg);
    expand_copy_typed_attrs(m, r, p.reduce);
    if (!r)
        return NULL;
    r->info->comps[IR_COMP_TO_APPLY] = wide_reducer(ctx, &p);
    expand_adopt_computation(m, r->info->comps[IR_COMP_TO_APPLY]);
    ir_set_channel_id(m, r, ir_fresh_channel_id(m));
    IrInstr *ops[2] = { r, p.gte };
    return expand_new(add, IR_OP_ADD, ir_shape_clone(m->arena, add->shape), 2, ops);
}

PassResult pass_flip_reduce_convert_add(IrModule *m, const PassOptions *opt, PassStats *stats, Error *err)
{
    ExpandReducerCache cache = { 0 };
    return pass_expand(m, opt, stats, match, build, &cache, err);
}
