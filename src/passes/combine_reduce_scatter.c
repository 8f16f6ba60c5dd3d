/* combine_reduce_scatter.c: #78 reduce-scatter-combiner (spec/passes.md
 * section 2).  Merges reduce-scatters with equal keys into one variadic
 * reduce-scatter.  Key: the all-reduce base key (reducer root opcode,
 * reducer type, domain id 0, has channel_id, use_global_device_ids, replica
 * groups), then the Neuron delta: the scatter dimension when
 * --collective-combine-by-dim (default true), else -1; then an empty string.
 * With combine-by-dim off, members scattering along another dimension than
 * the group's most frequent one are transposed to it and back.  Skips while
 * bodies and conditions under --neuron-fsdp.
 * Needs: a verified module.  Keeps: verifier clean, no new channel ids. */
#include "combine.h"

static bool reduce_scatter_key(const IrInstr *instr, const PassOptions *opt, CombineKey *out)
{
    if (!combine_base_key(instr, out))
        return false;
    const IrIntList *d = &instr->lists[IR_LIST_DIMENSIONS];
    if (d->n != 1)
        return false;
    out->has_dim = true;
    out->dim = opt->combine_by_dim ? d->v[0] : -1;
    return true;
}

static const Combiner reduce_scatter_combiner = {
    .op = IR_OP_REDUCE_SCATTER,
    .skips_while_under_fsdp = true,
    .key = reduce_scatter_key,
    .dimension = combine_most_frequent_dim,
};

PassResult pass_reduce_scatter_combiner(IrModule *m, const PassOptions *opt, PassStats *stats, Error *err)
{
    return combine_pass(m, &reduce_scatter_combiner, opt, stats, err);
}
