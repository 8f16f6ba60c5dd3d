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
 * partition the world, except collective-broadcast's, which may leave
 * devices out (those get zeros).  Only all-reduce and collective-broadcast
 * take groups of different sizes: every other collective's result shape
 * depends on the group size. */
typedef struct CollGroups {
    int n_groups;
    int size;               /* the size of every group; -1 when they differ */
    int max_size;
    int *start;             /* n_groups + 1 entries: group k is ids[start[k] .. start[k+1]) */
    int *ids;               /* start[n_groups] flattened ids */
} CollGroups;

CollMode coll_mode(const IrInstr *instr);
/* Expands instr's replica groups for R replicas x P partitions and checks
 * that they partition the participants.  Errors are ERR_SHAPE at instr->loc.
 * out->start and out->ids are heap memory (coll_groups_free). */
bool coll_expand_groups(const IrInstr *instr, int replicas, int partitions, CollGroups *out,
                        Error *err);
void coll_groups_free(CollGroups *g);
bool coll_groups_equal(const CollGroups *a, const CollGroups *b);
/* The group holding device `rank` and rank's position in it (-1 and -1 if
 * none). */
int coll_find(const CollGroups *g, int rank, int *position);

/* ---- coll.c: communicators */

/* Before MPI_Init, when no launcher started this process (an MPI
 * singleton): Open MPI's quick start-up for a job of one, unless the
 * environment already chose. */
void coll_singleton_defaults(void);

typedef struct CollComm {
    MPI_Comm comm;          /* ranks ordered by position in the group; MPI_COMM_NULL in no group */
    int size, position;     /* 0 and -1 in no group */
} CollComm;

/* The communicator of this rank's group in instr's groups (created once per
 * distinct group set and cached).  Must be reached by every rank. */
bool coll_group_comm(Coll *c, const IrInstr *instr, CollComm *out, Error *err);
const InterpDevice *coll_device(const Coll *c);
bool coll_mpi_ok(int rc, const IrInstr *instr, const char *what, Error *err);
double coll_now_seconds(void);

/* ---- the collectives; args/out as in InterpComm.run, result = result shape */

/* Leaves of a value (an array, or a tuple's arrays in order). */
int coll_leaves(Value *v, Value **out, int max);
/* New arrays for the n result leaves of a collective (result itself when it
 * is not a tuple); false when one cannot be made (the rest stay NULL). */
bool coll_new_leaves(const IrShape *result, int n, Value **leaves, Error *err);
/* Ends a collective: when ok, *out = the leaves (one array, or a tuple taking
 * them over); otherwise releases them.  Returns whether *out was set. */
bool coll_result(const IrShape *result, Value **leaves, int n, bool ok, Value **out, Error *err);

/* One file each (all_gather.c, reduce_scatter.c, all_reduce.c, all_to_all.c, broadcast.c, ragged_all_to_all.c) */
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
bool coll_collective_broadcast(Coll *c, Interp *it, const IrInstr *instr, const IrShape *result,
                               Value *const *args, int n_args, Value **out, Error *err);
bool coll_ragged_all_to_all(Coll *c, Interp *it, const IrInstr *instr, const IrShape *result,
                            Value *const *args, int n_args, Value **out, Error *err);

/* coll.c: result leaf i (the result itself when it is no tuple) has operand
 * i's shape, as all-reduce and collective-broadcast keep them.  ERR_SHAPE. */
bool coll_check_same_shapes(const IrInstr *instr, const IrShape *result, Value *const *args, int n_args,
                            Error *err);

/* ---- p2p.c: send, recv, send-done, recv-done */

typedef struct P2pOp P2pOp;
typedef struct CollP2p {
    MPI_Comm comm;          /* a duplicate of MPI_COMM_WORLD; the tag of a message is its channel_id */
    int tag_ub;
    double timeout;         /* seconds a -done waits for its peer (HLOCHECK_P2P_TIMEOUT) */
    P2pOp *ops;             /* posted and not done yet */
    int n_ops, cap_ops;
    uint32_t next_id;
} CollP2p;

/* Collectives over MPI_COMM_WORLD: every rank calls them (coll_init,
 * coll_finish). */
void coll_p2p_init(CollP2p *p);
void coll_p2p_free(CollP2p *p);
/* coll.c: this rank's point-to-point state (in its Coll). */
CollP2p *coll_p2p(Coll *c);
/* p2p.c: the four ops, each posted or completed on this rank alone. */
bool coll_send(Coll *c, Interp *it, const IrInstr *instr, const IrShape *result, Value *const *args, int n_args,
               Value **out, Error *err);
bool coll_recv(Coll *c, Interp *it, const IrInstr *instr, const IrShape *result, Value *const *args, int n_args,
               Value **out, Error *err);
bool coll_p2p_done(Coll *c, Interp *it, const IrInstr *instr, const IrShape *result, Value *const *args,
                   int n_args, Value **out, Error *err);

/* groups.c: checks the result shapes of a gather-like (factor n along dim,
 * grow=true) or scatter-like (grow=false) collective against the group size found at run
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

/* coll.c: the communicator of the ranks working now (coll_narrow). */
MPI_Comm coll_mpi_comm(const Coll *c);

#endif /* COLL_INTERNAL_H */
