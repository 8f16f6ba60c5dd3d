/* coll_internal.h: private to src/collectives/. */
#ifndef COLL_INTERNAL_H
#define COLL_INTERNAL_H

#include <mpi.h>

#include "coll.h"

/* ---- groups.c: who takes part, in which order (hlo-reference.md 6.3) */

typedef enum CollMode {
    COLL_CROSS_REPLICA,
    COLL_CROSS_PARTITION,
    COLL_CROSS_REPLICA_AND_PARTITION,
    COLL_FLATTENED
} CollMode;

/* Every group of flattened device ids, in participant order.  The groups
 * partition the world. */
typedef struct CollGroups {
    int n_groups;
    int size;               /* every group has the same size */
    int *ids;               /* n_groups * size flattened ids */
} CollGroups;

CollMode coll_mode(const IrInstr *instr);
/* Expands instr's replica groups for R replicas x P partitions and checks
 * that they partition the participants.  Errors are ERR_SHAPE at instr->loc.
 * out->ids is heap memory (free it). */
bool coll_expand_groups(const IrInstr *instr, int replicas, int partitions, CollGroups *out,
                        Error *err);
/* The group holding device `rank` and rank's position in it (-1 if none). */
int coll_find(const CollGroups *g, int rank, int *position);

/* ---- coll.c: communicators */

typedef struct CollComm {
    MPI_Comm comm;          /* ranks ordered by position in the group */
    int size, position;
} CollComm;

/* The communicator of this rank's group in instr's groups (created once per
 * distinct group set and cached).  Must be reached by every rank. */
bool coll_group_comm(Coll *c, const IrInstr *instr, CollComm *out, Error *err);
const InterpDevice *coll_device(const Coll *c);
bool coll_mpi_ok(int rc, const IrInstr *instr, const char *what, Error *err);

/* ---- the collectives; args/out as in InterpComm.run, result = result shape */

/* Leaves of a value (an array, or a tuple's arrays in order). */
int coll_leaves(Value *v, Value **out, int max);
/* New arrays for the n result leaves of a collective (result itself when it
 * is not a tuple); false when one cannot be made (the rest stay NULL). */
bool coll_new_leaves(const IrShape *result, int n, Value **leaves, Error *err);
/* Ends a collective: when ok, *out = the leaves (one array, or a tuple taking
 * them over); otherwise releases them.  Returns whether *out was set. */
bool coll_result(const IrShape *result, Value **leaves, int n, bool ok, Value **out, Error *err);

bool coll_all_gather(Coll *c, Interp *it, const IrInstr *instr, const IrShape *result,
                     Value *const *args, int n_args, Value **out, Error *err);
bool coll_reduce_scatter(Coll *c, Interp *it, const IrInstr *instr, const IrShape *result,
                         Value *const *args, int n_args, Value **out, Error *err);
bool coll_all_reduce(Coll *c, Interp *it, const IrInstr *instr, const IrShape *result,
                     Value *const *args, int n_args, Value **out, Error *err);
bool coll_all_to_all(Coll *c, Interp *it, const IrInstr *instr, const IrShape *result,
                     Value *const *args, int n_args, Value **out, Error *err);
bool coll_collective_permute(Coll *c, Interp *it, const IrInstr *instr, const IrShape *result,
                             Value *const *args, int n_args, Value **out, Error *err);

/* Checks the result shapes of a gather-like (factor n along dim, grow=true)
 * or scatter-like (grow=false) collective against the group size found at run
 * time: a module without device counts in its header can only be checked
 * here.  ERR_SHAPE at instr->loc. */
bool coll_check_shapes(const IrInstr *instr, const IrShape *result, Value *const *args, int n_args, int dim,
                       int n, bool grow, Error *err);

/* fold.c: acc = acc op x, n elements, with instr's to_apply: the vectorised
 * kernel for trivial reducers, the interpreter otherwise. */
bool coll_fold(Interp *it, const IrInstr *instr, IrElemType t, void *acc, const void *x, int64_t n,
               Error *err);
/* Frees the reducers compiled for blocks (coll_finish calls it). */
void coll_fold_cache_free(void);

#endif /* COLL_INTERNAL_H */
