/* eval_linalg.c: cholesky and triangular-solve.
 * Not implemented yet: reported as unsupported, never skipped. */
#include "eval.h"

bool eval_cholesky(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    (void)it, (void)args, (void)out;
    return eval_unsupported(instr, err);
}

bool eval_triangular_solve(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    (void)it, (void)args, (void)out;
    return eval_unsupported(instr, err);
}
