/* all_reduce.c: every member receives the reduction over its group, folded
 * in group order.  Reduce-scatter then all-gather, as bandwidth-optimal
 * implementations do: each operand is cut into n chunks, member k collects
 * chunk k from everyone (MPI_Alltoallv), folds it in group order, and the
 * folded chunks are gathered back (MPI_Allgatherv).  Every member ends with
 * the same bits, whatever algorithm MPI uses underneath; operands of any
 * size go in rounds of at most 64 MiB (next_round).  Groups may differ
 * in size ({{0},{1,2},{3}}): each runs in its own communicator with its own
 * n, and a group of one keeps its value. */
#include "coll_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Elements [first(k), first(k+1)) of a segment of e elements go to member k. */
static int64_t first(int64_t e, int n, int k)
{
    return e * k / n;
}

/* Operands are reduced in rounds of at most ROUND_BYTES, each round a list
 * of segments (a range of one operand's elements; small operands share a
 * round, a big one spans several), so the exchange buffers stay small and
 * every MPI count fits an int however big the operands are.  Each element
 * is folded on its own, so the rounds change no bits. */
#define ROUND_BYTES ((int64_t)64 << 20)

typedef struct Segment {
    int arg;                /* operand */
    int64_t base, elems;    /* its elements [base, base + elems) */
    size_t esize;
} Segment;

typedef struct Plan {
    int n, me;
    Segment *seg;           /* this round's */
    int n_seg;
    int *counts, *displs;   /* per member: bytes of its chunks of every segment */
} Plan;

static void plan_round(Plan *p)
{
    p->displs[0] = 0;
    for (int k = 0; k < p->n; k++) {
        size_t bytes = 0;
        for (int s = 0; s < p->n_seg; s++)
            bytes += (size_t)(first(p->seg[s].elems, p->n, k + 1) - first(p->seg[s].elems, p->n, k)) * p->seg[s].esize;
        p->counts[k] = (int)bytes;
        p->displs[k + 1] = p->displs[k] + (int)bytes;
    }
}

/* The next round from operand *arg, element *at on: fills p->seg. */
static void next_round(Plan *p, Value *const *args, int n_args, int *arg, int64_t *at)
{
    int64_t room = ROUND_BYTES;
    p->n_seg = 0;
    while (*arg < n_args && room > 0) {
        size_t esize = (size_t)ir_type_storage_bytes(args[*arg]->shape->type);
        int64_t left = value_elements(args[*arg]) - *at;
        int64_t take = left < room / (int64_t)esize ? left : room / (int64_t)esize;
        if (take == 0 && left > 0 && p->n_seg > 0)
            break;                      /* the round is full */
        if (take == 0 && left > 0)
            take = 1;
        p->seg[p->n_seg++] = (Segment){ *arg, *at, take, esize };
        room -= take * (int64_t)esize;
        *at += take;
        if (*at == value_elements(args[*arg])) {
            (*arg)++;
            *at = 0;
        }
    }
    plan_round(p);
}

/* Chunk k of every segment, back to back, at buf + displs[k]; or the reverse. */
static void copy_chunks(const Plan *p, Value *const *vals, char *buf, bool to_buf)
{
    for (int k = 0; k < p->n; k++) {
        char *at = buf + p->displs[k];
        for (int s = 0; s < p->n_seg; s++) {
            const Segment *g = &p->seg[s];
            int64_t lo = first(g->elems, p->n, k), hi = first(g->elems, p->n, k + 1);
            size_t bytes = (size_t)(hi - lo) * g->esize;
            char *data = (char *)vals[g->arg]->data + (size_t)(g->base + lo) * g->esize;
            if (to_buf)
                memcpy(at, data, bytes);
            else
                memcpy(data, at, bytes);
            at += bytes;
        }
    }
}

/* recv holds my chunk from each member j at j * counts[me]; fold them in
 * place into member 0's slot, in group order. */
static bool fold_mine(Interp *it, const IrInstr *instr, const Plan *p, Value *const *args, char *recv,
                      Error *err)
{
    size_t stride = (size_t)p->counts[p->me], offset = 0;
    for (int s = 0; s < p->n_seg; s++) {
        const Segment *g = &p->seg[s];
        int64_t count = first(g->elems, p->n, p->me + 1) - first(g->elems, p->n, p->me);
        IrElemType t = args[g->arg]->shape->type;
        for (int j = 1; j < p->n; j++)
            if (!coll_fold(it, instr, t, recv + offset, recv + (size_t)j * stride + offset, count, err))
                return false;
        offset += (size_t)count * g->esize;
    }
    return true;
}

static bool exchange(const Plan *p, const IrInstr *instr, MPI_Comm comm, char *send, char *recv, Error *err)
{
    int *rcounts = xcalloc((size_t)p->n, sizeof *rcounts), *rdispls = xcalloc((size_t)p->n, sizeof *rdispls);
    for (int j = 0; j < p->n; j++) {
        rcounts[j] = p->counts[p->me];
        rdispls[j] = j * p->counts[p->me];
    }
    bool ok = coll_mpi_ok(MPI_Alltoallv(send, p->counts, p->displs, MPI_BYTE, recv, rcounts, rdispls,
                                        MPI_BYTE, comm), instr, "MPI_Alltoallv", err);
    free(rcounts);
    free(rdispls);
    return ok;
}

/* A round of one segment whose member's chunks (n of its size) fit in the
 * leaf's own range takes them there: the leaf is written once, and no
 * exchange buffer is touched (64 MiB of fresh pages a call otherwise).
 * Members may differ in this (chunk sizes differ by an element); each
 * then moves its folded chunk into the leaf for the in-place gather. */
static bool exchanges_in_leaf(const Plan *p)
{
    return p->n_seg == 1 && p->n > 1 && (size_t)p->counts[p->me] * (size_t)p->n <= (size_t)p->displs[p->n];
}

/* One round: its chunks exchanged, folded, gathered back into the leaves.
 * A round of one segment has its chunks in order in its operand's and its
 * leaf's own buffers: no packing copies. */
static bool reduce_round(Interp *it, const IrInstr *instr, const Plan *p, MPI_Comm comm, Value *const *args,
                         Value **leaves, char *send, char *recv, char *gathered, Error *err)
{
    size_t total = (size_t)p->displs[p->n];
    bool packed = p->n_seg != 1, in_leaf = exchanges_in_leaf(p);
    if (!packed) {
        const Segment *g = &p->seg[0];
        send = (char *)args[g->arg]->data + (size_t)g->base * g->esize;
        gathered = (char *)leaves[g->arg]->data + (size_t)g->base * g->esize;
    } else {
        copy_chunks(p, args, send, true);
    }
    if (in_leaf)
        recv = gathered;
    bool ok = p->n == 1 ? (memcpy(recv, send, total), true) : exchange(p, instr, comm, send, recv, err);
    ok = ok && fold_mine(it, instr, p, args, recv, err);
    if (ok && p->n > 1) {
        /* My folded chunk to its place, then everyone's around it (in
         * place on every member, as MPI asks, whichever buffer each folded
         * in). */
        memmove(gathered + p->displs[p->me], recv, (size_t)p->counts[p->me]);
        ok = coll_mpi_ok(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, gathered, p->counts, p->displs,
                                        MPI_BYTE, comm), instr, "MPI_Allgatherv", err);
    } else if (ok) {
        memcpy(gathered, recv, total);
    }
    if (ok && packed)
        copy_chunks(p, leaves, gathered, false);
    return ok;
}

bool coll_all_reduce(Coll *c, Interp *it, const IrInstr *instr, const IrShape *result,
                     Value *const *args, int n_args, Value **out, Error *err)
{
    CollComm comm;
    if (!coll_group_comm(c, instr, &comm, err))
        return false;
    if (!coll_check_same_shapes(instr, result, args, n_args, err))
        return false;
    Plan p = { .n = comm.size, .me = comm.position };
    p.seg = xcalloc((size_t)n_args + 1, sizeof *p.seg);
    p.counts = xcalloc((size_t)p.n, sizeof *p.counts);
    p.displs = xcalloc((size_t)p.n + 1, sizeof *p.displs);
    Value **leaves = xcalloc((size_t)n_args, sizeof *leaves);
    bool ok = coll_new_leaves(result, n_args, leaves, err);
    char *send = NULL, *recv = NULL, *gathered = NULL;
    size_t cap = 0, recv_cap = 0;
    int arg = 0;
    int64_t at = 0;
    while (ok && arg < n_args) {
        next_round(&p, args, n_args, &arg, &at);
        size_t total = (size_t)p.displs[p.n] + 1, mine = (size_t)p.counts[p.me] * (size_t)p.n + 1;
        if (total > cap) {      /* the buffers of the biggest round so far */
            free(send);
            free(gathered);
            send = xmalloc(total);
            gathered = xmalloc(total);
            cap = total;
        }
        if (mine > recv_cap && !exchanges_in_leaf(&p)) {
            free(recv);
            recv = xmalloc(mine);
            recv_cap = mine;
        }
        ok = reduce_round(it, instr, &p, comm.comm, args, leaves, send, recv, gathered, err);
    }
    ok = coll_result(result, leaves, n_args, ok, out, err);
    free(leaves);
    free(send);
    free(recv);
    free(gathered);
    free(p.seg);
    free(p.counts);
    free(p.displs);
    return ok;
}
