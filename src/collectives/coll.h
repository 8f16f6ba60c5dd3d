/* coll.h: collectives across MPI ranks, one rank per device.  The only
 * module that includes mpi.h.  It gives the interpreter an InterpComm whose
 * all-gather, reduce-scatter, all-reduce (and friends) run over real MPI
 * communicators, with replica groups and channel modes as XLA defines them
 * and reductions folded deterministically in group order.  send/recv move
 * data between the devices their _xla_send_recv_source_target_pairs name; a
 * -done that waits for its peer longer than HLOCHECK_P2P_TIMEOUT seconds
 * (default 120) ends with an error (p2p.c). */
#ifndef COLL_H
#define COLL_H

#include "interp.h"

typedef struct Coll Coll;    /* opaque: MPI state and communicator cache */

/* MPI_Init (safe to call when mpirun did not start us: a world of one). */
Coll *coll_init(int *argc, char ***argv);
int  coll_rank(const Coll *c);
int  coll_world(const Coll *c);
/* Replica count x partitions for m on this world: from the header, or the
 * overrides (> 0), or, with no header values, world replicas (and a note
 * in *note, else note[0] = 0).  A world size that does not match is an
 * input error (ERR_MISMATCH). */
bool coll_setup_devices(Coll *c, const IrModule *m, int replicas, int partitions,
                        InterpDevice *dev, char *note, size_t note_size, Error *err);
/* How many devices take part in each group of instr with R replicas x P
 * partitions (hlo-reference.md 6.3): the largest group's size when they
 * differ (all-reduce); -1 when its groups are invalid. */
int coll_group_size(const IrInstr *instr, int replicas, int partitions);
/* The same when every group has that size; -1 when sizes differ or the
 * groups are invalid. */
int coll_uniform_group_size(const IrInstr *instr, int replicas, int partitions);
/* The hook the interpreter calls for every collective instruction. */
const InterpComm *coll_comm(Coll *c);

/* Per-collective statistics gathered while running (for --time). */
typedef struct CollStat {
    IrOpcode op;
    char name[96];          /* the instruction's name (a copy) */
    int group_size;
    int64_t bytes;          /* result bytes on this rank */
    double seconds;
    long calls;
} CollStat;
int coll_stats(const Coll *c, const CollStat **stats);

/* True on every rank iff ok is true on every rank (a collective: all ranks
 * must call it, at the same point). */
bool coll_all_ok(Coll *c, bool ok);
/* The same after a run, when a failing rank cannot know whether the others
 * are stuck in a collective waiting for it: a rank with ok=false waits at
 * most timeout_s; *agreed is false when the others did not all answer (the
 * caller then reports its own error and aborts the job).  Ranks with ok=true
 * wait as long as it takes. */
bool coll_agree(Coll *c, bool ok, double timeout_s, bool *agreed);
/* How long a failed rank waits in coll_agree for the others, everywhere. */
#define COLL_AGREE_SECONDS 5.0
/* Ends the job: MPI_Finalize then exit(code) when every rank stops the same
 * way; coll_abort for an error only this rank has (MPI_Abort(code)). */
void coll_finish(Coll *c, int code) __attribute__((noreturn));
void coll_abort(Coll *c, int code) __attribute__((noreturn));
void coll_barrier(Coll *c);

/* Small reductions and broadcasts across all ranks (collectives: every rank
 * calls them at the same point). */
typedef enum CollOp { COLL_SUM, COLL_MAX, COLL_MIN } CollOp;
void coll_allreduce_f64(Coll *c, double *v, int n, CollOp op);
void coll_allreduce_i64(Coll *c, int64_t *v, int n, CollOp op);
/* n bytes from root to every rank (any n: sent in pieces MPI can count). */
void coll_bcast(Coll *c, void *buf, size_t n, int root);
/* Every rank's n values, rank by rank, into all (world * n). */
void coll_allgather_u64(Coll *c, const uint64_t *mine, int n, uint64_t *all);

/* Narrows the job to its first n ranks (a collective on every rank): on
 * them, coll_world() is n and every collective and agreement runs among
 * them alone; the others get false and must do nothing with c until
 * coll_widen(), which every rank calls to get the whole job back.  One
 * level: hlo-check --local runs a region on the ranks it needs. */
bool coll_narrow(Coll *c, int n);
void coll_widen(Coll *c);

/* The hosts of the job: how many distinct ones, and the name of the one
 * rank r (of the whole job) runs on.  coll_rank_name: "rank R", or "rank R
 * on HOST" when the job spans more than one host. */
#define COLL_HOST_NAME 64
int coll_hosts(const Coll *c);
const char *coll_host(const Coll *c, int rank);
void coll_rank_name(const Coll *c, int rank, char *buf, size_t n);

/* How many ranks of the job run on this rank's node (an MPI shared-memory
 * communicator split), and this node's physical memory in bytes. */
int coll_node_ranks(Coll *c);
int64_t coll_node_memory(void);

/* coll_report.c: what every rank has to say, said by rank 0 */

/* Collective: every rank's text, written to out by rank 0 in rank order. */
void coll_print_in_rank_order(Coll *c, const char *text, size_t len, FILE *out);
/* Collective: --time's tables on rank 0: time per instruction kind (its
 * timings, the slowest rank's) and per collective (nccl-tests' algbw and
 * busbw). */
void coll_print_times(Coll *c, const Interp *it, FILE *out);
/* Collective: standard input, read by rank 0 (mpirun forwards it there
 * only), its bytes on every rank (malloc'd, *len of them); NULL with
 * ERR_IO on every rank when it cannot be read. */
char *coll_read_stdin(Coll *c, size_t *len, Error *err);

#endif /* COLL_H */
