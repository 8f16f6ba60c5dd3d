/* all_to_all.c: all-to-all and collective-permute, which real dumps contain.
 * all-to-all with dimensions={d}: each member cuts its operand into n blocks
 * along d, sends block k to member k, and concatenates what it receives along
 * d in group order.  Without dimensions (tuple form), operand k goes to
 * member k and result element j comes from member j.
 * collective-permute: each (source, target) pair moves the source's operand
 * to the target; a device that is no target receives zeros. */
#include "coll_internal.h"

#include <stdlib.h>
#include <string.h>

/* Operand as [outer][n][block]: bytes of one block and the outer count. */
static void blocks(const IrShape *s, int dim, int n, int64_t *outer, size_t *block)
{
    *outer = 1;
    *block = (size_t)ir_type_storage_bytes(s->type);
    for (int d = 0; d < s->rank; d++) {
        if (d < dim)
            *outer *= s->dims[d];
        else
            *block *= (size_t)(d == dim ? s->dims[d] / n : s->dims[d]);
    }
}

static bool split_concat(const IrInstr *instr, CollComm *comm, Value *arg, Value *res, Error *err)
{
    int n = comm->size, dim = (int)instr->lists[IR_LIST_DIMENSIONS].v[0];
    int64_t outer;
    size_t block;
    blocks(arg->shape, dim, n, &outer, &block);
    size_t per = (size_t)outer * block;
    char *send = xmalloc(per * (size_t)n + 1), *recv = xmalloc(per * (size_t)n + 1);
    for (int k = 0; k < n; k++)
        for (int64_t o = 0; o < outer; o++)
            memcpy(send + (size_t)k * per + (size_t)o * block,
                   (char *)arg->data + ((size_t)o * (size_t)n + (size_t)k) * block, block);
    bool ok = n == 1 ? (memcpy(recv, send, per), true)
                     : coll_mpi_ok(MPI_Alltoall(send, (int)per, MPI_BYTE, recv, (int)per, MPI_BYTE, comm->comm),
                                   instr, "MPI_Alltoall", err);
    for (int k = 0; k < n && ok; k++)
        for (int64_t o = 0; o < outer; o++)
            memcpy((char *)res->data + ((size_t)o * (size_t)n + (size_t)k) * block,
                   recv + (size_t)k * per + (size_t)o * block, block);
    free(send);
    free(recv);
    return ok;
}

static bool tuple_exchange(const IrInstr *instr, CollComm *comm, Value *const *args, Value **res, Error *err)
{
    int n = comm->size;
    int *sc = xcalloc((size_t)n, sizeof *sc), *sd = xcalloc((size_t)n, sizeof *sd);
    int *rc = xcalloc((size_t)n, sizeof *rc), *rd = xcalloc((size_t)n, sizeof *rd);
    size_t stot = 0, rtot = 0;
    for (int k = 0; k < n; k++) {
        sd[k] = (int)stot;
        sc[k] = (int)value_bytes(args[k]);
        stot += (size_t)sc[k];
        rd[k] = (int)rtot;
        rc[k] = (int)value_bytes(res[k]);
        rtot += (size_t)rc[k];
    }
    char *send = xmalloc(stot + 1), *recv = xmalloc(rtot + 1);
    for (int k = 0; k < n; k++)
        memcpy(send + sd[k], args[k]->data, (size_t)sc[k]);
    bool ok = coll_mpi_ok(MPI_Alltoallv(send, sc, sd, MPI_BYTE, recv, rc, rd, MPI_BYTE, comm->comm), instr,
                          "MPI_Alltoallv", err);
    for (int k = 0; k < n && ok; k++)
        memcpy(res[k]->data, recv + rd[k], (size_t)rc[k]);
    free(send); free(recv); free(sc); free(sd); free(rc); free(rd);
    return ok;
}

bool coll_all_to_all(Coll *c, Interp *it, const IrInstr *instr, const IrShape *result,
                     Value *const *args, int n_args, Value **out, Error *err)
{
    (void)it;
    CollComm comm;
    if (!coll_group_comm(c, instr, &comm, err))
        return false;
    bool split = instr->lists[IR_LIST_DIMENSIONS].present && instr->lists[IR_LIST_DIMENSIONS].n == 1;
    if (split && n_args == 1) {
        int dim = (int)instr->lists[IR_LIST_DIMENSIONS].v[0];
        if (!ir_shape_equal(result, args[0]->shape) || args[0]->shape->dims[dim] % comm.size)
            return error_set(err, ERR_SHAPE, instr->info->loc, "all-to-all: dimension %d of %s does not split into %d",
                             dim, ir_shape_str(args[0]->shape), comm.size);
        if (!(*out = value_new_array(result, err)))
            return false;
        return split_concat(instr, &comm, args[0], *out, err);
    }
    if (split || n_args != comm.size || result->type != IR_TYPE_TUPLE)
        return error_set(err, ERR_UNSUPPORTED, instr->info->loc,
                         "all-to-all: this form (%d operands, group of %d) is not supported", n_args, comm.size);
    Value **res = xcalloc((size_t)n_args, sizeof *res);
    bool ok = coll_new_leaves(result, n_args, res, err) && tuple_exchange(instr, &comm, args, res, err);
    ok = coll_result(result, res, n_args, ok, out, err);
    free(res);
    return ok;
}

/* Pair ids are replica ids (no channel: within this partition) or partition
 * ids (with a channel: within this replica). */
static int flat_id(const IrInstr *instr, const InterpDevice *d, int64_t id)
{
    int r = d->rank / d->num_partitions, p = d->rank % d->num_partitions;
    if (instr->ints[IR_INT_CHANNEL_ID].present)
        return r * d->num_partitions + (int)id;
    return (int)id * d->num_partitions + p;
}

static bool check_pairs(const IrInstr *instr, const InterpDevice *d, Error *err)
{
    int64_t limit = instr->ints[IR_INT_CHANNEL_ID].present ? d->num_partitions : d->replica_count;
    for (int i = 0; i < instr->info->n_source_target_pairs; i++)
        for (int k = 0; k < 2; k++)
            if (instr->info->source_target_pairs[i][k] < 0 || instr->info->source_target_pairs[i][k] >= limit)
                return error_set(err, ERR_SHAPE, instr->info->loc, "collective-permute: id %lld out of range [0, %lld)",
                                 (long long)instr->info->source_target_pairs[i][k], (long long)limit);
    return true;
}

bool coll_collective_permute(Coll *c, Interp *it, const IrInstr *instr, const IrShape *result,
                             Value *const *args, int n_args, Value **out, Error *err)
{
    (void)it;
    const InterpDevice *d = coll_device(c);
    if (n_args != 1 || result->type == IR_TYPE_TUPLE)
        return error_set(err, ERR_UNSUPPORTED, instr->info->loc, "collective-permute with %d operands", n_args);
    if (!check_pairs(instr, d, err) || !(*out = value_new_zeroed(result, err)))
        return false;
    int n = instr->info->n_source_target_pairs, n_req = 0;
    MPI_Request *req = xcalloc((size_t)(n + 1), sizeof *req);
    bool ok = true;
    for (int i = 0; i < n && ok; i++) {
        int src = flat_id(instr, d, instr->info->source_target_pairs[i][0]);
        int dst = flat_id(instr, d, instr->info->source_target_pairs[i][1]);
        if (dst == d->rank && src == d->rank)
            memcpy((*out)->data, args[0]->data, value_bytes(args[0]));
        else if (dst == d->rank)
            ok = coll_mpi_ok(MPI_Irecv((*out)->data, (int)value_bytes(*out), MPI_BYTE, src, 77, coll_mpi_comm(c),
                                       &req[n_req++]), instr, "MPI_Irecv", err);
        else if (src == d->rank)
            ok = coll_mpi_ok(MPI_Isend(args[0]->data, (int)value_bytes(args[0]), MPI_BYTE, dst, 77,
                                       coll_mpi_comm(c), &req[n_req++]), instr, "MPI_Isend", err);
    }
    ok = ok && coll_mpi_ok(MPI_Waitall(n_req, req, MPI_STATUSES_IGNORE), instr, "MPI_Waitall", err);
    free(req);
    if (!ok) {
        value_release(*out);
        *out = NULL;
    }
    return ok;
}
