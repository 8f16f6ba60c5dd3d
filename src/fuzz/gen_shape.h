/* gen_shape.h: the rules gen_shape.c reads its expectations from (#97's
 * common-factor blocks, #92's start indices per device), open to its
 * unit test. */
#ifndef FUZZ_GEN_SHAPE_H
#define FUZZ_GEN_SHAPE_H

#include "gen.h"

/* ---- #97 */

/* XLA's CommonFactors(in, out): the points (i, j) where the products of
 * in[0..i) and out[0..j) meet, from (0, 0) to (n_in, n_out), into bounds
 * (room for n_in + n_out + 1).  A block is the shortest run of dims on
 * each side whose products meet; a 1 where a block would start is a block
 * of its own (paired with a 1 on the other side when that side has one
 * there), a 1 inside a block belongs to it.  Shapes with a 0 follow
 * CommonFactors' own rule for them (gen_shape.c).  Returns the count; -1
 * when the products differ or a dim is negative. */
int gen_common_factors(const int64_t *in, int n_in, const int64_t *out, int n_out, int (*bounds)[2]);

/* What #97 makes of reshape(all-gather(x)), gathered to `in` along d by a
 * group of n and reshaped to out. */
typedef struct GenReshapeRule {
    int in0, in1, out0, out1;   /* d's block: operand dims [in0, in1), output dims [out0, out1) */
    bool only_merge;            /* every block has one output dim */
    bool accept;                /* the seed's matcher accepts and n divides out[out0] */
    bool sound;                 /* accepted, and every dim before d in its block is 1 */
    bool empty_shard;           /* in[d] is 0: no group size to read off the shapes, declined */
} GenReshapeRule;

/* False when the shapes have no blocks (see gen_common_factors). */
bool gen_reshape_rule(const int64_t *in, int n_in, const int64_t *out, int n_out, int d, int n,
                      GenReshapeRule *rule);

/* ---- #92 */

typedef enum GenIndexKind {
    GEN_INDEX_CONSTANT,         /* constant(offset) */
    GEN_INDEX_FOLDED,           /* offset from constants through pure ops */
    GEN_INDEX_PARTITION,        /* partition-id * scale + offset */
    GEN_INDEX_REPLICA,          /* replica-id * scale + offset */
    GEN_INDEX_PARAMETER,        /* an s32 entry parameter drawn in [lo, hi) per rank */
    GEN_INDEX_PERMUTED,         /* collective-permute(constant(offset)) along replicas 0 -> 1 -> .. -> scale:
                                   offset on replicas 1..scale, 0 on the others (no pair sends to them) */
    GEN_INDEX_UNLISTED,         /* offset from constants, but through an op or a walk the sound guard does not
                                   follow (docs/fuzz-coverage.md, "Rulings"): form 0 reduce(broadcast(constant))
                                   by maximum, form 1 maximum(m, m) ten deep over constant(offset) */
    GEN_INDEX_KINDS
} GenIndexKind;

typedef struct GenIndex {
    GenIndexKind kind;
    int64_t scale, offset;
    int form;                   /* GEN_INDEX_FOLDED: 0 add(constant(scale), constant(offset - scale)),
                                   1 convert(s64 constant(offset)); GEN_INDEX_UNLISTED: as above */
    int lo, hi;                 /* GEN_INDEX_PARAMETER */
} GenIndex;

/* The start XLA uses: start clamped to [0, dim - size]. */
int64_t gen_clamp_start(int64_t start, int64_t dim, int64_t size);

typedef enum GenAgree {
    GEN_AGREE,                  /* every participant of every group starts where its reader does */
    GEN_MAY_DIFFER,             /* only per-rank parameters on a cut dim in a group of two or more */
    GEN_DIFFER,                 /* some participant starts elsewhere on a cut dim */
} GenAgree;

/* Whether, on every device d = r*P + p, every participant of d's gather
 * group in g has d's clamped start indices (operand dims, slice sizes,
 * one index per dim). */
GenAgree gen_starts_agree(const FuzzGroups *g, int replicas, int partitions, int rank, const int64_t *dims,
                          const int64_t *sizes, const GenIndex *idx);

#endif /* FUZZ_GEN_SHAPE_H */
