/* custom_call.c: the custom-call targets the interpreter knows.  Every one
 * here is an identity on values (one operand, same shape); any other target
 * is reported as unsupported, never skipped, unless the caller gives an
 * opaque hook (InterpOptions.opaque). */
#include "interp.h"

#include <string.h>

static const char *const identity_targets[] = {
    /* Neuron: marks weights for a static-ring transfer; values unchanged. */
    "AwsNeuronTransferWithStaticRing",
    /* XLA host offloading: moves a buffer between device and host memory. */
    "MoveToHost",
    "MoveToDevice",
};

bool interp_custom_call_known(const char *target)
{
    for (size_t i = 0; i < sizeof identity_targets / sizeof identity_targets[0]; i++)
        if (strcmp(target, identity_targets[i]) == 0)
            return true;
    return false;
}

int interp_unknown_custom_calls(const IrModule *m, const char **out, int max)
{
    int n = 0;
    for (int c = 0; c < m->n_computations; c++) {
        const IrComputation *comp = m->computations[c];
        for (int i = 0; i < comp->n_instrs; i++) {
            const IrInstr *in = comp->instrs[i];
            const char *t = in->op == IR_OP_CUSTOM_CALL ? in->info->words[IR_WORD_CUSTOM_CALL_TARGET] : NULL;
            if (!t)
                t = in->op == IR_OP_CUSTOM_CALL ? "" : NULL;
            if (!t || interp_custom_call_known(t))
                continue;
            bool seen = false;
            for (int k = 0; k < n && !seen; k++)
                seen = strcmp(out[k], t) == 0;
            if (seen)
                continue;
            if (n == max)
                return n;
            out[n++] = t;
        }
    }
    return n;
}
