/* combine.h: the one combining engine behind the three combiners
 * (spec/passes.md section 2), private to src/passes/.  Each combiner file
 * supplies a Combiner: its opcode, its key function and how it picks the
 * dimension of the combined op; combine.c owns everything else (the gate,
 * the post-order grouping, the reachability guard, the limits, the rewrite). */
#ifndef COMBINE_H
#define COMBINE_H

#include "pass.h"

/* The union of the three key tuples.  A key function fills the fields its
 * pass uses and leaves the rest zero; combine_key_equal compares them all. */
typedef struct CombineKey {
    IrOpcode op;                    /* AR/RS: the reducer's root opcode (add...); AG: ALL_GATHER */
    IrElemType type;                /* AR/RS: the reducer's root type; AG: the result type */
    int64_t domain;                 /* sharding domain id: always 0 here (spec 2) */
    bool flag0;                     /* AR/RS: has a channel_id; AG: constrain_layout */
    bool flag1;                     /* use_global_device_ids */
    bool has_dim;                   /* AG: combine-by-dim is on; RS: always true */
    int64_t dim;                    /* AG: gather dim; RS: scatter dim, or -1 when not by dim */
    bool has_channel_flag;          /* AG in sound mode: channel_id presence is keyed too */
    bool channel;                   /* ... and that presence */
    const IrReplicaGroups *groups;  /* compared after expansion (ir_replica_groups_equal) */
    char tag[32];                   /* AR: "dtype=<type>"; RS: ""; AG: "" */
} CombineKey;

typedef struct Combiner {
    IrOpcode op;                    /* the collective it combines */
    bool skips_while_under_fsdp;    /* AG, RS: skip while bodies/conditions with --neuron-fsdp */
    /* False: the instruction takes no part.  The engine has already checked
     * the opcode, one operand, an array result and no control edges. */
    bool (*key)(const IrInstr *instr, const PassOptions *opt, CombineKey *out);
    /* The dimension the combined op works along; members on another
     * dimension are transposed to it.  NULL: no dimension (all-reduce). */
    int64_t (*dimension)(IrInstr *const *group, int n);
} Combiner;

typedef struct CombineLimits {
    int64_t max_count;              /* members per group */
    int64_t max_bytes;              /* result bytes per group, inclusive */
} CombineLimits;

/* The driver (spec 2 "Driver gate"): the signed <= 0 gate, the
 * constrain_layout bail-out, the while-body skip, then combine_run over
 * every non-fusion computation. */
PassResult combine_pass(IrModule *m, const Combiner *c, const PassOptions *opt, PassStats *stats,
                        Error *err);
/* The engine on one computation; *changed is set when a group was combined. */
bool combine_run(IrComputation *comp, const Combiner *c, const PassOptions *opt, CombineLimits limits,
                 PassStats *stats, bool *changed, Error *err);

bool combine_key_equal(const CombineKey *a, const CombineKey *b);

/* The AR/RS base key (XLA's GetAllReduceKey): false unless the reduction
 * computation is trivial. */
bool combine_base_key(const IrInstr *instr, CombineKey *out);
/* add, multiply, maximum, minimum, and, or over the two scalar parameters
 * (either order) and nothing else: its opcode, else IR_OP_COUNT. */
IrOpcode combine_trivial_reducer(const IrComputation *comp);
/* The most frequent dimensions={d} in the group, ties to the smaller; 0 if
 * that is not a dimension of the lowest-rank member (XLA's
 * FindMostFrequentGatherDim / ScatterDim). */
int64_t combine_most_frequent_dim(IrInstr *const *group, int n);

#endif /* COMBINE_H */
