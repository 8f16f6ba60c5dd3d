/* flip_all_gather_dynamic_slice.c: #92,
 * dynamic-slice(all-gather(x), i...) => all-gather(dynamic-slice(x, i..., sizes')).
 * Why: slicing before the gather moves less data.
 * Matches (seed) when the result has rank >= 3 (the seed tests the tagged
 * dims header array_state()[0] = rank<<1 | inline bit > 5, which is rank >= 3
 * whatever the bit), more than one dim is really cut (slice size != operand
 * size) and the gather dim d is not one of them.  sizes'[d] is x's local
 * extent, so d is gathered whole again.
 * After the flip each participant cuts its own shard at its own indices;
 * before, every shard was cut at the reader's.  Equal only when the index
 * operands agree on every participant: partition-id, replica-id or
 * per-device parameters break it (spec section 4).
 * Needs: a verified module.  Keeps: verifier clean; channel_id reused; the
 * dynamic-slice's metadata.
 * Sound mode adds: every index operand is a constant or computed only from
 * constants. */
#include "expand.h"

#include <stdlib.h>

/* Deterministic, device-independent ops that may sit between a constant
 * and an index.  Anything else (a reduce, a call: ops that run a
 * computation) ends the walk unproved and sound mode declines the site;
 * so does a walk of more than 256 steps (it does not share the visits of
 * a DAG): narrower than "computed only from constants", never unsound
 * (docs/fuzz-coverage.md, "Rulings"). */
static bool is_pure(IrOpcode op)
{
    unsigned flags = ir_op_info[op].flags;
    if (flags & (OPF_SIDE_EFFECT | OPF_COLLECTIVE))
        return false;
    if (flags & OPF_ELEMENTWISE)
        return true;
    switch ((int)op) {
    case IR_OP_RESHAPE: case IR_OP_BITCAST: case IR_OP_TRANSPOSE: case IR_OP_BROADCAST:
    case IR_OP_SLICE: case IR_OP_DYNAMIC_SLICE: case IR_OP_CONCATENATE: case IR_OP_PAD:
    case IR_OP_REVERSE: case IR_OP_TUPLE: case IR_OP_GET_TUPLE_ELEMENT:
        return true;
    default:
        return false;
    }
}

/* Every leaf under x is a constant; budget bounds the walk. */
static bool from_constants(const IrInstr *x, int *budget)
{
    if (--*budget < 0)
        return false;
    if (x->op == IR_OP_CONSTANT)
        return true;
    if (x->n_operands == 0 || !is_pure(x->op))
        return false;
    for (int k = 0; k < x->n_operands; k++)
        if (!from_constants(x->operands[k], budget))
            return false;
    return true;
}

static bool indices_from_constants(const IrInstr *ds)
{
    int budget = 256;
    for (int k = 1; k < ds->n_operands; k++)
        if (!from_constants(ds->operands[k], &budget))
            return false;
    return true;
}

/* find_slice_dimensions: how many dims the slice really cuts, and whether
 * the gather dim d is one of them. */
static int cut_dims(const IrInstr *ds, int64_t d, bool *cuts_d)
{
    const IrShape *in = ds->operands[0]->shape;
    const IrIntList *sizes = &ds->lists[IR_LIST_DYNAMIC_SLICE_SIZES];
    int n = 0;
    *cuts_d = false;
    for (int i = 0; i < in->rank && i < sizes->n; i++)
        if (sizes->v[i] != in->dims[i]) {
            n++;
            *cuts_d |= i == d;
        }
    return n;
}

static bool match(const IrInstr *instr, ExpandCtx *ctx)
{
    if (instr->op != IR_OP_DYNAMIC_SLICE || !ir_op_is(instr->operands[0], IR_OP_ALL_GATHER))
        return false;
    const IrInstr *g = instr->operands[0];
    if (g->n_operands != 1 || g->lists[IR_LIST_DIMENSIONS].n != 1 || instr->shape->rank < 3)
        return false;
    bool cuts_d;
    if (cut_dims(instr, g->lists[IR_LIST_DIMENSIONS].v[0], &cuts_d) <= 1 || cuts_d)
        return false;
    if (expand_sound(ctx) && !indices_from_constants(instr))
        return expand_decline(ctx, "index operands not computed from constants alone");
    return true;
}

static IrInstr *build(IrInstr *ds, ExpandCtx *ctx, Error *err)
{
    (void)err;
    IrModule *m = ctx->m;
    IrInstr *g = ds->operands[0], *x = g->operands[0];
    int64_t d = g->lists[IR_LIST_DIMENSIONS].v[0], local = x->shape->dims[d];
    IrShape *shape = ir_shape_clone(m->arena, ds->shape);
    IrInstr **ops = xmalloc_try((size_t)ds->n_operands * sizeof *ops);
    if (!shape || !ops) {
        free(ops);
        return ir_module_noted(m, NULL);
    }
    shape->dims[d] = local;
    ops[0] = x;
    for (int k = 1; k < ds->n_operands; k++)
        ops[k] = ds->operands[k];
    IrInstr *slice = expand_new(ds, IR_OP_DYNAMIC_SLICE, shape, ds->n_operands, ops);
    free(ops);
    expand_copy_typed_attrs(m, slice, ds);
    if (!slice || m->nomem)
        return NULL;
    slice->lists[IR_LIST_DYNAMIC_SLICE_SIZES].v[d] = local;
    IrInstr *ng = expand_new(ds, IR_OP_ALL_GATHER, ir_shape_clone(m->arena, ds->shape), 1, &slice);
    expand_copy_typed_attrs(m, ng, g);
    return ng;
}

PassResult pass_flip_all_gather_dynamic_slice(IrModule *m, const PassOptions *opt, PassStats *stats, Error *err)
{
    return pass_expand(m, opt, stats, match, build, NULL, err);
}
