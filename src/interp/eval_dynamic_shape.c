/* eval_dynamic_shape.c: get-dimension-size, set-dimension-size, dynamic-reshape.
 * Not implemented yet: reported as unsupported, never skipped. */
#include "eval.h"

bool eval_get_dimension_size(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    (void)it, (void)args, (void)out;
    return eval_unsupported(instr, err);
}

bool eval_set_dimension_size(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    (void)it, (void)args, (void)out;
    return eval_unsupported(instr, err);
}

bool eval_dynamic_reshape(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    (void)it, (void)args, (void)out;
    return eval_unsupported(instr, err);
}
