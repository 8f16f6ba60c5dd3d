/* all_reduce.c: every member receives the reduction over its group, folded
 * in group order.  Reduce-scatter then all-gather, as bandwidth-optimal
 * implementations do: each operand is cut into n chunks, member k collects
 * chunk k from everyone (MPI_Alltoallv), folds it in group order, and the
 * folded chunks are gathered back (MPI_Allgatherv).  Every member ends with
 * the same bits, whatever algorithm MPI uses underneath.  Groups may differ
 * in size ({{0},{1,2},{3}}): each runs in its own communicator with its own
 * n, and a group of one keeps its value. */
#include "coll_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Elements [first(k), first(k+1)) of an operand of e elements go to member k. */
static int64_t first(int64_t e, int n, int k)
{
    return e * k / n;
}

typedef struct Plan {
    int n, me, n_args;
    int64_t *elems;         /* per operand */
    size_t *esize;          /* per operand */
    int *counts, *displs;   /* per member: bytes of its chunks of all operands */
} Plan;

static bool plan_new(Plan *p, Value *const *args, int n_args, int n, int me, const IrInstr *instr, Error *err)
{
    p->n = n;
    p->me = me;
    p->n_args = n_args;
    p->elems = xcalloc((size_t)n_args, sizeof *p->elems);
    p->esize = xcalloc((size_t)n_args, sizeof *p->esize);
    p->counts = xcalloc((size_t)n, sizeof *p->counts);
    p->displs = xcalloc((size_t)n + 1, sizeof *p->displs);
    size_t total = 0;
    for (int i = 0; i < n_args; i++) {
        p->elems[i] = value_elements(args[i]);
        p->esize[i] = (size_t)ir_type_storage_bytes(args[i]->shape->type);
        total += value_bytes(args[i]);
    }
    if (total > INT_MAX)
        return error_set(err, ERR_UNSUPPORTED, instr->info->loc, "all-reduce of %zu bytes: above 2 GiB", total);
    for (int k = 0; k < n; k++) {
        size_t bytes = 0;
        for (int i = 0; i < n_args; i++)
            bytes += (size_t)(first(p->elems[i], n, k + 1) - first(p->elems[i], n, k)) * p->esize[i];
        p->counts[k] = (int)bytes;
        p->displs[k + 1] = p->displs[k] + (int)bytes;
    }
    return true;
}

static void plan_free(Plan *p)
{
    free(p->elems);
    free(p->esize);
    free(p->counts);
    free(p->displs);
}

/* Chunk k of every operand, back to back, at buf + displs[k]; or the reverse. */
static void copy_chunks(const Plan *p, Value *const *vals, char *buf, bool to_buf)
{
    for (int k = 0; k < p->n; k++) {
        char *at = buf + p->displs[k];
        for (int i = 0; i < p->n_args; i++) {
            int64_t lo = first(p->elems[i], p->n, k), hi = first(p->elems[i], p->n, k + 1);
            size_t bytes = (size_t)(hi - lo) * p->esize[i];
            char *data = (char *)vals[i]->data + (size_t)lo * p->esize[i];
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
    for (int i = 0; i < p->n_args; i++) {
        int64_t count = first(p->elems[i], p->n, p->me + 1) - first(p->elems[i], p->n, p->me);
        IrElemType t = args[i]->shape->type;
        for (int j = 1; j < p->n; j++)
            if (!coll_fold(it, instr, t, recv + offset, recv + (size_t)j * stride + offset, count, err))
                return false;
        offset += (size_t)count * p->esize[i];
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

/* With one operand its chunks lie in order in its own buffer, and the
 * gathered chunks in order are the result: no packing copies. */
bool coll_all_reduce(Coll *c, Interp *it, const IrInstr *instr, const IrShape *result,
                     Value *const *args, int n_args, Value **out, Error *err)
{
    CollComm comm;
    if (!coll_group_comm(c, instr, &comm, err))
        return false;
    if (!coll_check_same_shapes(instr, result, args, n_args, err))
        return false;
    Plan p = { 0 };
    bool ok = plan_new(&p, args, n_args, comm.size, comm.position, instr, err);
    bool single = n_args == 1 && result->type != IR_TYPE_TUPLE;
    size_t total = ok ? (size_t)p.displs[p.n] : 0;
    Value **leaves = xcalloc((size_t)n_args, sizeof *leaves);
    if (ok)
        ok = coll_new_leaves(result, n_args, leaves, err);
    char *send = single ? (ok ? args[0]->data : NULL) : xmalloc(total + 1);
    char *gathered = single ? (ok ? leaves[0]->data : NULL) : xmalloc(total + 1);
    char *recv = xmalloc((size_t)p.counts[ok ? p.me : 0] * (size_t)p.n + 1);
    if (ok && !single)
        copy_chunks(&p, args, send, true);
    if (ok)
        ok = p.n == 1 ? (memcpy(recv, send, total), true) : exchange(&p, instr, comm.comm, send, recv, err);
    ok = ok && fold_mine(it, instr, &p, args, recv, err);
    if (ok && p.n > 1)
        ok = coll_mpi_ok(MPI_Allgatherv(recv, p.counts[p.me], MPI_BYTE, gathered, p.counts, p.displs, MPI_BYTE,
                                        comm.comm), instr, "MPI_Allgatherv", err);
    else if (ok)
        memcpy(gathered, recv, total);
    if (ok && !single)
        copy_chunks(&p, leaves, gathered, false);
    ok = coll_result(result, leaves, n_args, ok, out, err);
    free(leaves);
    if (!single) {
        free(send);
        free(gathered);
    }
    free(recv);
    plan_free(&p);
    return ok;
}
