/* flip_all_gathers_binary.c: #98, op(all-gather(a), all-gather(b)) => all-gather(op(a, b))
 * for op in {add, and, divide, maximum, minimum, multiply, or, remainder,
 * subtract}.
 * Why: two collectives become one in the rewrite itself.
 * The two all-gathers must agree on everything but their operand: shape
 * (with layout), dimension, replica groups, constrain_layout,
 * use_global_device_ids, sharding and channel_id (the seed's
 * IdenticalInternal runs with ignore_channel_id_values off).  The new
 * all-gather takes a fresh channel_id, as the seed's NextChannelId does even
 * when the originals had none; where that would change the group
 * (no channel_id, num_partitions > 1: cross-replica becomes
 * cross-replica-and-partition, and the shape would no longer verify) the
 * match is declined in both modes.
 * Needs: a verified module.  Keeps: verifier clean; the binary's metadata.
 * Exact (elementwise op, same shard order): sound mode adds no guard. */
#include "expand.h"

#include <string.h>

static bool is_flippable_binary(IrOpcode op)
{
    switch ((int)op) {
    case IR_OP_ADD: case IR_OP_AND: case IR_OP_DIVIDE: case IR_OP_MAXIMUM: case IR_OP_MINIMUM:
    case IR_OP_MULTIPLY: case IR_OP_OR: case IR_OP_REMAINDER: case IR_OP_SUBTRACT:
        return true;
    default:
        return false;
    }
}

static bool same_text(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* Dimension i of a's minor_to_major; an absent layout is the default one,
 * {rank-1,...,0} (hlo-reference.md 5.6; XLA's parser fills it in, so the
 * seed's IdenticalInternal sees `f32[4,8]` and `f32[4,8]{1,0}` as equal). */
static int64_t minor_to_major_at(const IrShape *a, int i)
{
    return a->has_layout ? a->minor_to_major[i] : a->rank - 1 - i;
}

static bool same_layout(const IrShape *a, const IrShape *b)
{
    for (int i = 0; i < a->rank; i++)
        if (minor_to_major_at(a, i) != minor_to_major_at(b, i))
            return false;
    return same_text(a->has_layout ? a->layout_tail : NULL, b->has_layout ? b->layout_tail : NULL);
}

static bool same_list(const IrIntList *a, const IrIntList *b)
{
    return a->n == b->n && (a->n == 0 || memcmp(a->v, b->v, (size_t)a->n * sizeof *a->v) == 0);
}

/* Everything but the operand, as IdenticalInternal compares it. */
static bool identical_but_operand(const IrInstr *a, const IrInstr *b)
{
    const IrOptInt ca = a->ints[IR_INT_CHANNEL_ID], cb = b->ints[IR_INT_CHANNEL_ID];
    return a->n_operands == 1 && b->n_operands == 1 && ir_shape_equal(a->shape, b->shape) &&
           same_layout(a->shape, b->shape) &&
           same_list(&a->lists[IR_LIST_DIMENSIONS], &b->lists[IR_LIST_DIMENSIONS]) &&
           ir_replica_groups_equal(&a->info->replica_groups, &b->info->replica_groups) &&
           a->info->bools[IR_BOOL_CONSTRAIN_LAYOUT] == b->info->bools[IR_BOOL_CONSTRAIN_LAYOUT] &&
           a->info->bools[IR_BOOL_USE_GLOBAL_DEVICE_IDS] == b->info->bools[IR_BOOL_USE_GLOBAL_DEVICE_IDS] &&
           ca.present == cb.present && (!ca.present || ca.v == cb.v) &&
           same_text(ir_raw_attr_get(a, "sharding"), ir_raw_attr_get(b, "sharding"));
}

static bool match(const IrInstr *instr, ExpandCtx *ctx)
{
    if (!is_flippable_binary(instr->op) || instr->n_operands != 2)
        return false;
    const IrInstr *a = instr->operands[0], *b = instr->operands[1];
    if (!ir_op_is(a, IR_OP_ALL_GATHER) || !ir_op_is(b, IR_OP_ALL_GATHER) || !identical_but_operand(a, b))
        return false;
    if (expand_fresh_channel_widens(ctx->m, a))
        return expand_decline(ctx, "no channel_id and num_partitions > 1: a fresh one would change the group");
    return true;
}

static IrInstr *build(IrInstr *bin, ExpandCtx *ctx, Error *err)
{
    (void)err;
    IrModule *m = ctx->m;
    IrInstr *g = bin->operands[0];
    IrInstr *ab[2] = { g->operands[0], bin->operands[1]->operands[0] };
    IrShape *local = ir_shape_with_type(m->arena, ab[0]->shape, bin->shape->type);
    IrInstr *op = expand_new(bin, bin->op, local, 2, ab);
    IrInstr *ng = expand_new(bin, IR_OP_ALL_GATHER, ir_shape_clone(m->arena, bin->shape), 1, &op);
    expand_copy_typed_attrs(m, ng, g);
    ir_set_channel_id(m, ng, ir_fresh_channel_id(m));
    return ng;
}

PassResult pass_flip_all_gathers_binary(IrModule *m, const PassOptions *opt, PassStats *stats, Error *err)
{
    return pass_expand(m, opt, stats, match, build, NULL, err);
}
