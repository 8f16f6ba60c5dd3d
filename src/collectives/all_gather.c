/* all_gather.c: every member's operands, concatenated along the gather
 * dimension in group order.  (Neuron's variadic all-gathers carry a scalar
 * token beside the arrays, which has no dimension to gather along: a scalar
 * operand comes back as this member's own value.)  All operands of a variadic all-gather travel
 * in one MPI_Allgather: each rank packs its operands back to back, and each
 * gathered block is then placed at its member's slot along the dimension. */
#include "coll_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Bytes of one member's shard that stay contiguous when gathering along
 * dim: everything from dim inward.  outer counts the runs. */
static void split_at(const IrShape *s, int dim, int64_t *outer, size_t *run)
{
    int64_t o = 1, in = 1;
    for (int d = 0; d < s->rank; d++) {
        if (d < dim)
            o *= s->dims[d];
        else
            in *= s->dims[d];
    }
    *outer = o;
    *run = (size_t)in * (size_t)ir_type_storage_bytes(s->type);
}

/* out[o][k][run] = gathered[k][offset + o*run] for every member k. */
static void place(const char *gathered, size_t per_member, size_t offset, int n, int64_t outer,
                  size_t run, char *out)
{
    for (int64_t o = 0; o < outer; o++)
        for (int k = 0; k < n; k++)
            memcpy(out + ((size_t)o * (size_t)n + (size_t)k) * run,
                   gathered + (size_t)k * per_member + offset + (size_t)o * run, run);
}

/* One array operand whose shards stay contiguous (every dim before the
 * gather dim has size 1): MPI gathers straight into the result. */
static bool gather_direct(CollComm *comm, const IrInstr *instr, const IrShape *result, Value *arg, Value **out,
                          Error *err)
{
    size_t bytes = value_bytes(arg);
    if (!(*out = value_new_array(result, err)))
        return false;
    bool ok = comm->size == 1 ? (memcpy((*out)->data, arg->data, bytes), true)
                              : coll_mpi_ok(MPI_Allgather(arg->data, (int)bytes, MPI_BYTE, (*out)->data, (int)bytes,
                                                          MPI_BYTE, comm->comm), instr, "MPI_Allgather", err);
    if (!ok) {
        value_release(*out);
        *out = NULL;
    }
    return ok;
}

static bool is_direct(Value *const *args, int n_args, int dim, const IrShape *result)
{
    if (n_args != 1 || result->type == IR_TYPE_TUPLE || args[0]->shape->rank == 0 || value_bytes(args[0]) > INT_MAX)
        return false;
    for (int d = 0; d < dim; d++)
        if (args[0]->shape->dims[d] != 1)
            return false;
    return true;
}

bool coll_all_gather(Coll *c, Interp *it, const IrInstr *instr, const IrShape *result,
                     Value *const *args, int n_args, Value **out, Error *err)
{
    (void)it;
    CollComm comm;
    if (!coll_group_comm(c, instr, &comm, err))
        return false;
    int dim = (int)instr->lists[IR_LIST_DIMENSIONS].v[0];
    if (!coll_check_shapes(instr, result, args, n_args, dim, comm.size, true, err))
        return false;
    if (is_direct(args, n_args, dim, result))
        return gather_direct(&comm, instr, result, args[0], out, err);
    size_t per_member = 0;
    for (int i = 0; i < n_args; i++)
        per_member += value_bytes(args[i]);
    if (per_member > INT_MAX)
        return error_set(err, ERR_UNSUPPORTED, instr->info->loc, "all-gather of %zu bytes per rank: above 2 GiB",
                         per_member);
    char *send = xmalloc(per_member ? per_member : 1), *recv = xmalloc(per_member * (size_t)comm.size + 1);
    for (size_t i = 0, off = 0; i < (size_t)n_args; off += value_bytes(args[i]), i++)
        memcpy(send + off, args[i]->data, value_bytes(args[i]));
    bool ok = comm.size == 1 ||
              coll_mpi_ok(MPI_Allgather(send, (int)per_member, MPI_BYTE, recv, (int)per_member, MPI_BYTE,
                                        comm.comm), instr, "MPI_Allgather", err);
    if (comm.size == 1)
        memcpy(recv, send, per_member);
    Value **leaves = xcalloc((size_t)n_args, sizeof *leaves);
    size_t offset = 0;
    for (int i = 0; i < n_args && ok; i++) {
        const IrShape *rs = result->type == IR_TYPE_TUPLE ? result->elements[i] : result;
        int64_t outer;
        size_t run;
        split_at(args[i]->shape, dim, &outer, &run);
        ok = (leaves[i] = value_new_array(rs, err)) != NULL;
        if (ok && rs->rank == 0)
            memcpy(leaves[i]->data, args[i]->data, value_bytes(args[i]));
        else if (ok)
            place(recv, per_member, offset, comm.size, outer, run, leaves[i]->data);
        offset += value_bytes(args[i]);
    }
    ok = coll_result(result, leaves, n_args, ok, out, err);
    free(leaves);
    free(send);
    free(recv);
    return ok;
}
