/* custom_call.c: the custom-call targets the interpreter knows: identity
 * markers (one operand, same shape), and the XLA-internal targets of its
 * optimized modules (what an HloSnapshot holds), each with the semantics of
 * the op XLA lowered into it.  Any other target is reported as
 * unsupported, never skipped, unless the caller gives an opaque hook
 * (InterpOptions.opaque). */
#include "eval.h"

#include <string.h>

static const char *const identity_targets[] = {
    /* Neuron: marks weights for a static-ring transfer; values unchanged. */
    "AwsNeuronTransferWithStaticRing",
    /* XLA host offloading: moves a buffer between device and host memory. */
    "MoveToHost",
    "MoveToDevice",
};

typedef bool (*CustomCallFn)(const IrInstr *instr, Value *const *args, Value **out, Error *err);

static const struct {
    const char *target;
    CustomCallFn eval;
} computed_targets[] = {
    /* XLA's DynamicPadder: where a static array becomes dynamic and back. */
    { "SliceToDynamic", eval_slice_to_dynamic },
    { "PadToStatic", eval_pad_to_static },
    /* XLA:CPU's lowering of topk (largest=true). */
    { "TopK", eval_topk_custom_call },
};

bool interp_custom_call_is_identity(const char *target)
{
    for (size_t i = 0; i < sizeof identity_targets / sizeof identity_targets[0]; i++)
        if (strcmp(target, identity_targets[i]) == 0)
            return true;
    return false;
}

static CustomCallFn computed(const char *target)
{
    for (size_t i = 0; i < sizeof computed_targets / sizeof computed_targets[0]; i++)
        if (strcmp(target, computed_targets[i].target) == 0)
            return computed_targets[i].eval;
    return NULL;
}

bool interp_custom_call_known(const char *target)
{
    return interp_custom_call_is_identity(target) || computed(target);
}

bool eval_known_custom_call(const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    const char *target = instr->info->words[IR_WORD_CUSTOM_CALL_TARGET];
    CustomCallFn fn = target ? computed(target) : NULL;
    if (fn)
        return fn(instr, args, out, err);
    if (!target || !interp_custom_call_is_identity(target))
        return error_set(err, ERR_UNSUPPORTED, instr->info->loc,
                         "unsupported op: custom-call with target \"%s\"", target ? target : "");
    if (instr->n_operands != 1 || !ir_shape_equal(instr->shape, args[0]->shape))
        return error_set(err, ERR_UNSUPPORTED, instr->info->loc,
                         "custom-call \"%s\" is an identity marker but its shape changes", target);
    *out = value_retain(args[0]);
    return true;
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
