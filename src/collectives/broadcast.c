/* broadcast.c: collective-broadcast.  Every member of a group gets the value
 * of the group's first member as listed (group[0]), whatever its replica or
 * partition id; a device in no group gets zeros (StableHLO's
 * collective_broadcast, which XLA's follows).  Groups are cross-replica
 * without a channel_id and cross-partition with one (hlo-reference.md 6.3).
 * One MPI_Bcast per operand, rooted at position 0 of the group's
 * communicator; the root keeps its operand itself (values never change). */
#include "coll_internal.h"

#include <limits.h>
#include <stdlib.h>

/* Leaf i of the result on this device. */
static bool broadcast_leaf(const IrInstr *instr, const CollComm *comm, const IrShape *rs, Value *arg, Value **leaf,
                           Error *err)
{
    if (comm->comm == MPI_COMM_NULL)
        return (*leaf = value_new_zeroed(rs, err)) != NULL;
    size_t bytes = value_bytes(arg);
    if (bytes > INT_MAX)
        return error_set(err, ERR_UNSUPPORTED, instr->info->loc, "collective-broadcast of %zu bytes: above 2 GiB",
                         bytes);
    bool root = comm->position == 0;
    *leaf = root ? value_retain(arg) : value_new_array(rs, err);
    if (!*leaf)
        return false;
    if (comm->size == 1)
        return true;
    return coll_mpi_ok(MPI_Bcast(root ? arg->data : (*leaf)->data, (int)bytes, MPI_BYTE, 0, comm->comm), instr,
                       "MPI_Bcast", err);
}

bool coll_collective_broadcast(Coll *c, Interp *it, const IrInstr *instr, const IrShape *result,
                               Value *const *args, int n_args, Value **out, Error *err)
{
    (void)it;
    CollComm comm;
    if (!coll_group_comm(c, instr, &comm, err) || !coll_check_same_shapes(instr, result, args, n_args, err))
        return false;
    Value **leaves = xcalloc((size_t)(n_args ? n_args : 1), sizeof *leaves);
    bool ok = true;
    for (int i = 0; i < n_args && ok; i++)
        ok = broadcast_leaf(instr, &comm, result->type == IR_TYPE_TUPLE ? result->elements[i] : result, args[i],
                            &leaves[i], err);
    ok = coll_result(result, leaves, n_args, ok, out, err);
    free(leaves);
    return ok;
}
