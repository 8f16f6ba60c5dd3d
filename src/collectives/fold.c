/* fold.c: acc = to_apply(acc, x) elementwise, the step of every reduction.
 * Trivial reducers (one add/multiply/maximum/minimum/and/or of the two
 * parameters) take the interpreter's vectorised kernel; any other to_apply is
 * run by the interpreter element by element.  Both round to the element type
 * after every step, so the fold order alone fixes the bits. */
#include "coll_internal.h"

#include <string.h>

static const IrComputation *reducer(const IrInstr *instr)
{
    return instr->comps[IR_COMP_TO_APPLY];
}

static bool fold_general(Interp *it, const IrInstr *instr, IrElemType t, void *acc, const void *x,
                         int64_t n, Error *err)
{
    const IrComputation *comp = reducer(instr);
    if (comp->n_params != 2 || comp->params[0]->shape->type != t || comp->params[1]->shape->type != t ||
        comp->params[0]->shape->rank != 0)
        return error_set(err, ERR_SHAPE, instr->loc, "%s: to_apply=%s does not take two %s scalars",
                         ir_opcode_name(instr->op), comp->name, ir_type_name(t));
    Value *a = value_new_array(comp->params[0]->shape, err);
    Value *b = a ? value_new_array(comp->params[1]->shape, err) : NULL;
    size_t es = (size_t)ir_type_storage_bytes(t);
    bool ok = b != NULL;
    for (int64_t i = 0; i < n && ok; i++) {
        memcpy(a->data, (char *)acc + i * es, es);
        memcpy(b->data, (const char *)x + i * es, es);
        Value *args[2] = { a, b }, *r = NULL;
        ok = interp_call(it, comp, args, 2, &r, err);
        if (ok)
            memcpy((char *)acc + i * es, r->data, es);
        value_release(r);
    }
    value_release(a);
    value_release(b);
    return ok;
}

bool coll_fold(Interp *it, const IrInstr *instr, IrElemType t, void *acc, const void *x, int64_t n,
               Error *err)
{
    const IrComputation *comp = reducer(instr);
    if (!comp)
        return error_set(err, ERR_SHAPE, instr->loc, "%s has no to_apply", ir_opcode_name(instr->op));
    IrOpcode op = interp_trivial_reducer(comp);
    if (op != IR_OP_COUNT && comp->root->shape->type == t)
        return interp_binary_kernel(op, t, acc, acc, x, n, err);
    return fold_general(it, instr, t, acc, x, n, err);
}
