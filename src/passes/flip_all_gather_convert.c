/* flip_all_gather_convert.c: #96, convert(all-gather(x)) => all-gather(convert(x)).
 * Why: the all-gather combiner keys on the element type; gathering after a
 * convert to a common type gives sibling gathers equal keys (and a narrowing
 * convert moves fewer bytes).
 * Needs: a verified module.  Keeps: verifier clean; the new all-gather takes
 * the old one's dimension, groups, flags and channel_id (reused), the
 * convert's element type and the convert's metadata.  A convert is
 * elementwise, so the flip is exact in both modes: the seed has no other
 * guard and sound mode adds none. */
#include "expand.h"

/* The new all-gather takes the convert's shape, so the two must have the
 * same dimensions, bounded ones included: a convert may declare static
 * dimensions where the gather's result is dynamic (f32[8,8] of
 * bf16[<=8,8], which XLA's verifier takes: it compares shapes without
 * their dynamic marks), and the gather built from them would claim a size
 * its operand and groups do not give (found by make fuzz).  With the same
 * marks the flip is exact, padding and all, so it is done (the spec's "no
 * other guard"; docs/fuzz-coverage.md, "Rulings"). */
static bool match(const IrInstr *instr, ExpandCtx *ctx)
{
    (void)ctx;
    return instr->op == IR_OP_CONVERT && ir_op_is(instr->operands[0], IR_OP_ALL_GATHER) &&
           instr->operands[0]->n_operands == 1 && ir_shape_equal_dims(instr->shape, instr->operands[0]->shape) &&
           ir_shape_same_dim_kinds(instr->shape, instr->operands[0]->shape);
}

static IrInstr *build(IrInstr *convert, ExpandCtx *ctx, Error *err)
{
    (void)err;
    IrModule *m = ctx->m;
    IrInstr *gather = convert->operands[0], *x = gather->operands[0];
    IrShape *local = ir_shape_with_type(m->arena, x->shape, convert->shape->type);
    IrInstr *converted = expand_new(convert, IR_OP_CONVERT, local, 1, &x);
    IrInstr *g = expand_new(convert, IR_OP_ALL_GATHER, ir_shape_clone(m->arena, convert->shape), 1, &converted);
    expand_copy_typed_attrs(m, g, gather);
    return g;
}

PassResult pass_flip_all_gather_convert(IrModule *m, const PassOptions *opt, PassStats *stats, Error *err)
{
    return pass_expand(m, opt, stats, match, build, NULL, err);
}
