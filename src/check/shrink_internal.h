/* shrink_internal.h: private to the shrinker (shrink*.c): the cuts and
 * copies shrink_loop.c drives, by the file that defines each.  The public
 * --shrink API (check_shrink, check_shrink_pair, check_shrunk_write, the
 * cuts the tests try) is in check.h. */
#ifndef SHRINK_INTERNAL_H
#define SHRINK_INTERNAL_H

#include "check.h"

/* ---- shrink.c: copies, fresh modules and rank-free pairs */
/* A deep copy (modules through their text, inputs bound to the copy). */
bool check_shrink_copy(const CheckShrink *s, CheckShrink *copy, Error *err);
/* m through its text (fresh name maps, as a user reads the written file),
 * verified; m is freed.  NULL with err when it does not verify. */
IrModule *check_shrink_fresh(IrModule *m, Error *err);
/* Replaces s's pair and inputs (one reference each, taken over). */
void check_shrink_install(CheckShrink *s, IrModule *before, IrModule *after, Value **inputs);
/* Whether m's result on one device depends on nothing but that
 * device's inputs: no collective, no replica-id / partition-id, no async or
 * custom-call op anywhere in it. */
bool check_rank_free(const IrModule *m);
/* Runs before and after as device 0 of 1 on inputs (borrowed) and says
 * whether some output differs bitwise: a rank-free pair's difference on
 * one rank, shown without the others. */
bool check_differs_alone(const IrModule *before, const IrModule *after, Value *const *inputs, int n,
                         bool *differs, Error *err);

/* ---- shrink_shape.c */
/* Cuts a shrunk pair of array instructions to what element
 * `index` of its root depends on: every instruction computes only the box
 * of its value that element reads (slices, transposes, reshapes,
 * broadcasts, concatenates, reductions, all-gathers, reduce-scatters and
 * element-wise ops given smaller shapes, inputs cut to their boxes, slices
 * where an op computes more).  False (s unchanged) when nothing gets
 * smaller; a heuristic: the caller checks the result again. */
bool check_shrink_to_box(CheckShrink *s, int64_t index, Error *err);

/* ---- shrink_ranks.c */
/* The ranks rank's results depend on in before and after
 * (rank, closed under every collective's replica groups), ascending in
 * ranks[] (world entries); their count when fewer than world and the pair
 * can be run on them alone (one partition, explicit or iota groups, no
 * replica-id / partition-id / point-to-point op), else 0. */
int check_rank_subset(const IrModule *before, const IrModule *after, int world, int rank, int *ranks);
/* m for ranks[0..n) alone, renumbered 0..n-1: the groups inside them kept
 * with their ids mapped, the header saying n replicas; verified. */
IrModule *check_renumber_ranks(const IrModule *m, const int *ranks, int n, Error *err);

#endif /* SHRINK_INTERNAL_H */
