/* eval_select_and_scatter.c: select-and-scatter.
 * Not implemented yet: reported as unsupported, never skipped. */
#include "eval.h"

bool eval_select_and_scatter(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    (void)it, (void)args, (void)out;
    return eval_unsupported(instr, err);
}
