/* combine_all_gather.c: #77 all-gather-combiner (spec/passes.md section 2).
 * Merges all-gathers with equal keys into one variadic all-gather.  Key, in
 * the seed's order: element type, the gather dimension when
 * --collective-combine-by-dim (default true) else none, domain id 0,
 * constrain_layout, use_global_device_ids, replica groups after expansion.
 * The seed's key has no channel_id presence (stock XLA's has); with
 * --pass-mode=sound it is keyed too, since the combined op takes the first
 * member's channel_id and with it the group mode of every member.  In
 * faithful mode it is keyed when num_partitions is > 1 or absent: there a member with
 * and one without a channel_id have groups of different sizes, and the
 * combined op would not verify (hlo-fuzz found it; #98 and #102 decline
 * the same way where a fresh channel_id would widen a group).
 * The combined all-gather runs along the group's most frequent gather
 * dimension (ties to the smaller; 0 if not a dimension of the lowest-rank
 * member); with combine-by-dim off, members on another dimension are
 * transposed to it and back.  Skips while bodies and conditions under
 * --neuron-fsdp.
 * Needs: a verified module.  Keeps: verifier clean, no new channel ids. */
#include "combine.h"

static bool all_gather_key(const IrInstr *instr, const PassOptions *opt, CombineKey *out)
{
    const IrIntList *d = &instr->lists[IR_LIST_DIMENSIONS];
    if (d->n != 1)
        return false;
    /* Absent num_partitions is taken as "maybe more than one": the verifier
     * cannot size a cross-replica-and-partition group without it, so a
     * member's group could change unseen (libFuzzer found such a module). */
    const IrModule *m = instr->parent->module;
    bool partitions = !m->num_partitions.present || m->num_partitions.v > 1;
    bool keyed = opt->mode == PASS_MODE_SOUND || partitions;
    *out = (CombineKey){
        .op = IR_OP_ALL_GATHER,
        .type = instr->shape->type,
        .has_dim = opt->combine_by_dim,
        .dim = opt->combine_by_dim ? d->v[0] : 0,
        .domain = 0,
        .flag0 = instr->info->bools[IR_BOOL_CONSTRAIN_LAYOUT],
        .flag1 = instr->info->bools[IR_BOOL_USE_GLOBAL_DEVICE_IDS],
        .has_channel_flag = keyed,
        .channel = keyed && instr->ints[IR_INT_CHANNEL_ID].present,
        .groups = &instr->info->replica_groups,
    };
    return true;
}

static const Combiner all_gather_combiner = {
    .op = IR_OP_ALL_GATHER,
    .skips_while_under_fsdp = true,
    .key = all_gather_key,
    .dimension = combine_most_frequent_dim,
};

PassResult pass_all_gather_combiner(IrModule *m, const PassOptions *opt, PassStats *stats, Error *err)
{
    return combine_pass(m, &all_gather_combiner, opt, stats, err);
}
