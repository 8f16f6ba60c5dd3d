/* expand.h: the match-and-expand driver the six flip passes share
 * (spec/passes.md section 1, STYLE.md section 6), the helpers their
 * rewrites build with, and the few pure functions the unit tests reach. */
#ifndef EXPAND_H
#define EXPAND_H

#include "pass.h"

typedef struct ExpandSweep ExpandSweep;   /* expand.c: one sweep's pending edits */

typedef struct ExpandCtx {
    IrModule *m;
    const PassOptions *opt;
    PassStats *stats;
    void *state;                /* the pass's own, e.g. #102's retyped reducers */
    ExpandSweep *sweep;         /* the sweep under way */
} ExpandCtx;

/* Does instr match?  A sound-mode guard that refuses a faithful match calls
 * expand_decline() and returns false. */
typedef bool (*ExpandMatch)(const IrInstr *instr, ExpandCtx *ctx);
/* Builds the replacement of instr, inserted before it; NULL with err set
 * on failure (the pass then fails). */
typedef IrInstr *(*ExpandBuild)(IrInstr *instr, ExpandCtx *ctx, Error *err);

/* The driver.  For each non-fusion computation, callees first: snapshot its
 * instructions in post order; for each, test match (at that moment, so an
 * instruction whose operand an earlier rewrite replaced sees the new one);
 * on a match build the replacement, give it the matched instruction's
 * metadata and control predecessors, redirect every use to it and count
 * stats->fired.  Instructions built in the sweep are not in the snapshot.
 * The pipeline removes the dead originals afterwards. */
PassResult pass_expand(IrModule *m, const PassOptions *opt, PassStats *stats, ExpandMatch match,
                       ExpandBuild build, void *state, Error *err);

/* ---- Helpers for match */

bool expand_sound(const ExpandCtx *ctx);
/* Counts a declined match under reason (a static string); returns false. */
bool expand_decline(ExpandCtx *ctx, const char *reason);
/* Every value of from is exactly a value of to, and to is another float
 * type: bf16 -> f32, f16 -> f32, f32 -> f64, f8 -> bf16 ... */
bool expand_is_widening_float(IrElemType from, IrElemType to);
/* The seeds mint a fresh channel_id (#98, #102).  When the original had none
 * and the header says num_partitions > 1, that id changes the collective from
 * cross-replica to cross-replica-and-partition: more participants. */
bool expand_fresh_channel_widens(const IrModule *m, const IrInstr *collective);
/* The reducer can be copied with another element type: parameters,
 * scalar constants and elementwise ops, no called computations. */
bool expand_reducer_retypable(const IrComputation *comp);

/* ---- Helpers for build */

/* A new instruction named after its opcode (unique in the computation),
 * inserted before `before`, at its location. */
IrInstr *expand_new(IrInstr *before, IrOpcode op, IrShape *shape, int n_operands,
                    IrInstr *const *operands);
/* Copies src's typed attributes onto dst (for a collective: dimensions,
 * replica groups, flags, channel_id, to_apply), not its raw ones
 * (metadata, sharding, backend_config ...), as the seeds' Create* calls do. */
void expand_copy_typed_attrs(IrModule *m, IrInstr *dst, const IrInstr *src);
/* A copy of the reducer comp with every `from` element type made `to`
 * (scalar constants converted), named <comp>.<to>; NULL when comp is not
 * expand_reducer_retypable, its parameters are not `from` scalars, or the
 * copy does not verify (say `and` over floats).  The copy is not yet in
 * the module: expand_adopt_computation puts it there.  cache keeps the
 * copies (and refusals) of one pass run, so equal requests share one. */
#define EXPAND_CACHE_MAX 64
typedef struct ExpandReducerCache {
    int n;
    const IrComputation *orig[EXPAND_CACHE_MAX];
    IrElemType to[EXPAND_CACHE_MAX];
    IrComputation *copy[EXPAND_CACHE_MAX];   /* NULL: cannot be retyped */
} ExpandReducerCache;
IrComputation *expand_retyped_reducer(IrModule *m, IrComputation *comp, IrElemType from, IrElemType to,
                                      ExpandReducerCache *cache);
/* Inserts comp first in m->computations (callees before callers) unless
 * it is there already. */
void expand_adopt_computation(IrModule *m, IrComputation *comp);

/* ---- Pure functions, exposed for tests/passes/test_flips.c */

/* flip_all_gather_reshape.c: XLA's CommonFactors(a, b): the pairs (i, j)
 * with product(a[0..i)) == product(b[0..j)) that bound the smallest blocks;
 * out has room for na + nb + 2 pairs; returns their count. */
int flip_common_factors(const int64_t *a, int na, const int64_t *b, int nb, int64_t (*out)[2]);
/* The seed's GetReshapeDimMapping for a reshape from dims in[n_in] to
 * out[n_out]: for input dim k, the output dims of its common-factor block
 * are first[k] .. first[k] + count[k] - 1; block[k] numbers the block.
 * only_merge: every block has exactly one output dim. */
typedef struct ReshapeDimMap {
    int first[IR_MAX_RANK], count[IR_MAX_RANK], block[IR_MAX_RANK];
    bool only_merge;
} ReshapeDimMap;
void flip_reshape_dim_map(const int64_t *in, int n_in, const int64_t *out, int n_out, ReshapeDimMap *map);

/* flip_reduce_scatter_transpose.c: d' with perm[d'] == d, or -1. */
int64_t flip_scatter_dim_after_transpose(const int64_t *perm, int n, int64_t d);

#endif /* EXPAND_H */
