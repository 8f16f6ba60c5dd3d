/* reduce_scatter.c: member k of the group receives block k (along the
 * scatter dimension) of the reduction over the group.  Moved bandwidth-
 * optimally and folded deterministically: one MPI_Alltoall hands every member
 * the k-th blocks of all members, then each member folds them locally in
 * group order, acc = ((b_0 op b_1) op b_2) ..., rounding after every step. */
#include "coll_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Operand viewed as [outer][n][block]: block k of every outer row. */
typedef struct Blocks {
    int64_t outer;
    size_t block;           /* bytes of one member's block in one outer row */
    size_t per_dest;        /* outer * block */
} Blocks;

/* A scalar (Neuron's token beside the arrays) has no blocks: it is not sent
 * and comes back as this member's own value. */
static Blocks blocks_of(const IrShape *s, int dim, int n)
{
    Blocks b = { 1, (size_t)ir_type_storage_bytes(s->type), 0 };
    if (s->rank == 0)
        return (Blocks){ 0, 0, 0 };
    for (int d = 0; d < s->rank; d++) {
        if (d < dim)
            b.outer *= s->dims[d];
        else
            b.block *= (size_t)(d == dim ? s->dims[d] / n : s->dims[d]);
    }
    b.per_dest = (size_t)b.outer * b.block;
    return b;
}

/* send[k] = for each operand, block k of every outer row, back to back. */
static void pack(Value *const *args, int n_args, const Blocks *b, int n, size_t per_dest, char *send)
{
    for (int k = 0; k < n; k++) {
        char *dst = send + (size_t)k * per_dest;
        for (int i = 0; i < n_args; i++) {
            const char *src = args[i]->data;
            for (int64_t o = 0; o < b[i].outer; o++) {
                memcpy(dst, src + ((size_t)o * (size_t)n + (size_t)k) * b[i].block, b[i].block);
                dst += b[i].block;
            }
        }
    }
}

/* Result i = fold over members j of recv[j]'s part i. */
static bool fold_blocks(Interp *it, const IrInstr *instr, Value *const *args, int n_args, const Blocks *b,
                        int n, size_t per_dest, const char *recv, Value **leaves, const IrShape *result,
                        Error *err)
{
    size_t offset = 0;
    for (int i = 0; i < n_args; i++) {
        const IrShape *rs = result->type == IR_TYPE_TUPLE ? result->elements[i] : result;
        IrElemType t = args[i]->shape->type;
        if (!(leaves[i] = value_new_array(rs, err)))
            return false;
        if (rs->rank == 0) {
            memcpy(leaves[i]->data, args[i]->data, value_bytes(args[i]));
            continue;
        }
        memcpy(leaves[i]->data, recv + offset, b[i].per_dest);
        int64_t count = (int64_t)(b[i].per_dest / (size_t)ir_type_storage_bytes(t));
        for (int j = 1; j < n; j++)
            if (!coll_fold(it, instr, t, leaves[i]->data, recv + (size_t)j * per_dest + offset, count, err))
                return false;
        offset += b[i].per_dest;
    }
    return true;
}

bool coll_reduce_scatter(Coll *c, Interp *it, const IrInstr *instr, const IrShape *result,
                         Value *const *args, int n_args, Value **out, Error *err)
{
    CollComm comm;
    if (!coll_group_comm(c, instr, &comm, err))
        return false;
    int n = comm.size, dim = (int)instr->lists[IR_LIST_DIMENSIONS].v[0];
    if (!coll_check_shapes(instr, result, args, n_args, dim, n, false, err))
        return false;
    Blocks *b = xcalloc((size_t)n_args, sizeof *b);
    size_t per_dest = 0;
    for (int i = 0; i < n_args; i++) {
        b[i] = blocks_of(args[i]->shape, dim, n);
        per_dest += b[i].per_dest;
    }
    bool ok = per_dest <= INT_MAX ||
              error_set(err, ERR_UNSUPPORTED, instr->info->loc, "reduce-scatter block of %zu bytes: above 2 GiB",
                        per_dest);
    char *send = xmalloc(per_dest * (size_t)n + 1), *recv = xmalloc(per_dest * (size_t)n + 1);
    if (ok)
        pack(args, n_args, b, n, per_dest, send);
    if (ok && n > 1)
        ok = coll_mpi_ok(MPI_Alltoall(send, (int)per_dest, MPI_BYTE, recv, (int)per_dest, MPI_BYTE, comm.comm),
                         instr, "MPI_Alltoall", err);
    else if (ok)
        memcpy(recv, send, per_dest);
    Value **leaves = xcalloc((size_t)n_args, sizeof *leaves);
    ok = ok && fold_blocks(it, instr, args, n_args, b, n, per_dest, recv, leaves, result, err);
    ok = coll_result(result, leaves, n_args, ok, out, err);
    free(leaves);
    free(send);
    free(recv);
    free(b);
    return ok;
}
