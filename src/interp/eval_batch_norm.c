/* eval_batch_norm.c: batch-norm-training, -inference and -grad.
 * Not implemented yet: reported as unsupported, never skipped. */
#include "eval.h"

bool eval_batch_norm_training(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    (void)it, (void)args, (void)out;
    return eval_unsupported(instr, err);
}

bool eval_batch_norm_inference(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    (void)it, (void)args, (void)out;
    return eval_unsupported(instr, err);
}

bool eval_batch_norm_grad(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    (void)it, (void)args, (void)out;
    return eval_unsupported(instr, err);
}
