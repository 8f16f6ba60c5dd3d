/* combine_all_reduce.c: #79 all-reduce-combiner (spec/passes.md section 2).
 * Merges all-reduces with equal keys into one variadic all-reduce.  Key:
 * XLA's all-reduce key (reducer root opcode, reducer type, domain id 0, has
 * channel_id, use_global_device_ids, replica groups after expansion), then
 * the Neuron delta "dtype=<element type>": stock XLA leaves that string
 * empty, so unlike stock XLA all-reduces of different element types never
 * share a group.  Only all-reduces whose reduction is one add, multiply,
 * maximum, minimum, and, or over the two scalar parameters get a key.
 * While bodies are always processed (this combiner has no while switch).
 * Needs: a verified module.  Keeps: verifier clean, no new channel ids. */
#include "combine.h"

#include <stdio.h>

static bool all_reduce_key(const IrInstr *instr, const PassOptions *opt, CombineKey *out)
{
    (void)opt;
    if (!combine_base_key(instr, out))
        return false;
    snprintf(out->tag, sizeof out->tag, "dtype=%s", ir_type_name(instr->shape->type));
    return true;
}

static const Combiner all_reduce_combiner = {
    .op = IR_OP_ALL_REDUCE,
    .skips_while_under_fsdp = false,
    .key = all_reduce_key,
    .dimension = NULL,
};

PassResult pass_all_reduce_combiner(IrModule *m, const PassOptions *opt, PassStats *stats, Error *err)
{
    return combine_pass(m, &all_reduce_combiner, opt, stats, err);
}
