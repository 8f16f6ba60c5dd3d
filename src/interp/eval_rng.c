/* eval_rng.c: rng, rng-bit-generator and stochastic-convert.
 * Not implemented yet: reported as unsupported, never skipped. */
#include "eval.h"

bool eval_rng(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    (void)it, (void)args, (void)out;
    return eval_unsupported(instr, err);
}

bool eval_rng_bit_generator(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    (void)it, (void)args, (void)out;
    return eval_unsupported(instr, err);
}

bool eval_stochastic_convert(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    (void)it, (void)args, (void)out;
    return eval_unsupported(instr, err);
}
