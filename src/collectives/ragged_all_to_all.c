/* ragged_all_to_all.c: ragged-all-to-all(input, output, input_offsets,
 * send_sizes, output_offsets, recv_sizes), as XLA defines it.
 *
 * Rows are slices along dimension 0.  For a group of n the four metadata
 * operands hold n*U entries each (U updates per peer; any integer type, s32
 * or s64 in practice; rank 1 or 2, read row-major).  Entry k = j*U + u is
 * update u between this member and member j (position j in the group):
 *   this member sends its input rows [input_offsets[k], +send_sizes[k]) to
 *   member j, which writes them at its own output rows
 *   [output_offsets[k], +send_sizes[k]): output offsets name rows of the
 *   receiver's output, not of the sender's;
 *   recv_sizes[k] is how many rows this member receives from member j in
 *   update u, and must be what member j sends.
 * The result starts as the output operand: rows nobody writes keep it.
 * Writes that overlap land in (member, update) order, the last one winning
 * (XLA leaves that unspecified).
 *
 * Each member first sends every peer its sizes and output offsets for that
 * peer (MPI_Alltoall), checks all its ranges, and the group agrees on the
 * verdict before any row moves, so bad metadata on one member ends with an
 * error on all of them instead of a hang.  The rows then travel in one
 * MPI_Alltoallv. */
#include "coll_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

typedef struct Ragged {
    int n, me;
    int64_t u;                  /* updates per peer */
    int64_t in_rows, out_rows;
    size_t row_bytes;
    int64_t *meta[4];           /* this member's input_offsets, send_sizes, output_offsets, recv_sizes */
    int64_t *got_sizes;         /* n*u: rows member j sends this member in update u */
    int64_t *got_offsets;       /* n*u: where in this member's output they go */
} Ragged;

enum { IN_OFF, SEND, OUT_OFF, RECV };

static const char *const meta_name[4] = { "input_offsets", "send_sizes", "output_offsets", "recv_sizes" };

/* input and output: arrays of one element type whose rows have one shape. */
static bool check_data(const IrInstr *instr, const IrShape *in, const IrShape *out, const IrShape *result,
                       Error *err)
{
    bool ok = in->type != IR_TYPE_TUPLE && in->type == out->type && in->rank >= 1 && in->rank == out->rank &&
              ir_shape_equal(result, out);
    for (int d = 1; ok && d < in->rank; d++)
        ok = in->dims[d] == out->dims[d];
    if (!ok)
        return error_set(err, ERR_SHAPE, instr->info->loc,
                         "ragged-all-to-all: input %s and output %s must be arrays of one type whose rows (all "
                         "but dimension 0) match, and the result must be the output's shape",
                         ir_shape_str(in), ir_shape_str(out));
    return true;
}

static bool check_shapes(const IrInstr *instr, const IrShape *result, Value *const *args, int n_args, int n,
                         Error *err)
{
    if (n_args != 6)
        return error_set(err, ERR_SHAPE, instr->info->loc, "ragged-all-to-all takes 6 operands, not %d", n_args);
    if (!check_data(instr, args[0]->shape, args[1]->shape, result, err))
        return false;
    int64_t e = value_elements(args[2]);
    for (int i = 2; i < 6; i++)
        if (args[i]->shape->type == IR_TYPE_TUPLE || !ir_type_is_int(args[i]->shape->type) || value_elements(args[i]) != e)
            return error_set(err, ERR_SHAPE, instr->info->loc,
                             "ragged-all-to-all: %s %s must be integers, as many as input_offsets has", meta_name[i - 2],
                             ir_shape_str(args[i]->shape));
    if (e % n)
        return error_set(err, ERR_SHAPE, instr->info->loc,
                         "ragged-all-to-all: %lld offsets and sizes do not split among a group of %d",
                         (long long)e, n);
    return true;
}

static void read_meta(Ragged *r, Value *const *args)
{
    int64_t e = (int64_t)r->n * r->u;
    for (int m = 0; m < 4; m++) {
        const Value *v = args[2 + m];
        size_t es = (size_t)ir_type_storage_bytes(v->shape->type);
        r->meta[m] = xcalloc((size_t)(e ? e : 1), sizeof(int64_t));
        for (int64_t k = 0; k < e; k++)
            r->meta[m][k] = ir_elem_get_i64(v->shape->type, (const char *)v->data + (size_t)k * es);
    }
}

static void ragged_free(Ragged *r)
{
    for (int m = 0; m < 4; m++)
        free(r->meta[m]);
    free(r->got_sizes);
    free(r->got_offsets);
}

/* Member j learns the sizes and output offsets of what this member sends it. */
static bool exchange_meta(Ragged *r, const IrInstr *instr, MPI_Comm comm, Error *err)
{
    int64_t u = r->u, e = (int64_t)r->n * u;
    if (2 * u * (int64_t)sizeof(int64_t) > INT_MAX)
        return error_set(err, ERR_UNSUPPORTED, instr->info->loc, "ragged-all-to-all: %lld updates per peer",
                         (long long)u);
    int64_t *send = xcalloc((size_t)(2 * e + 1), sizeof *send), *recv = xcalloc((size_t)(2 * e + 1), sizeof *recv);
    for (int j = 0; j < r->n; j++) {
        memcpy(send + 2 * j * u, r->meta[SEND] + j * u, (size_t)u * sizeof *send);
        memcpy(send + 2 * j * u + u, r->meta[OUT_OFF] + j * u, (size_t)u * sizeof *send);
    }
    int bytes = (int)(2 * u * (int64_t)sizeof(int64_t));
    bool ok = coll_mpi_ok(MPI_Alltoall(send, bytes, MPI_BYTE, recv, bytes, MPI_BYTE, comm), instr, "MPI_Alltoall",
                          err);
    r->got_sizes = xcalloc((size_t)(e + 1), sizeof(int64_t));
    r->got_offsets = xcalloc((size_t)(e + 1), sizeof(int64_t));
    for (int j = 0; j < r->n && ok; j++) {
        memcpy(r->got_sizes + j * u, recv + 2 * j * u, (size_t)u * sizeof *recv);
        memcpy(r->got_offsets + j * u, recv + 2 * j * u + u, (size_t)u * sizeof *recv);
    }
    free(send);
    free(recv);
    return ok;
}

/* [offset, offset + size) lies within [0, rows). */
static bool in_range(int64_t offset, int64_t size, int64_t rows)
{
    return offset >= 0 && size >= 0 && offset <= rows && size <= rows - offset;
}

/* This member's ranges, and its recv_sizes against what the peers send. */
static bool check_meta(const Ragged *r, const IrInstr *instr, Error *err)
{
    for (int64_t k = 0; k < (int64_t)r->n * r->u; k++) {
        int j = (int)(k / r->u);
        if (!in_range(r->meta[IN_OFF][k], r->meta[SEND][k], r->in_rows))
            return error_set(err, ERR_MISMATCH, instr->info->loc,
                             "ragged-all-to-all: input_offsets[%lld]=%lld with send_sizes[%lld]=%lld leave the %lld "
                             "input rows", (long long)k, (long long)r->meta[IN_OFF][k], (long long)k,
                             (long long)r->meta[SEND][k], (long long)r->in_rows);
        if (r->meta[RECV][k] != r->got_sizes[k])
            return error_set(err, ERR_MISMATCH, instr->info->loc,
                             "ragged-all-to-all: recv_sizes[%lld]=%lld, but member %d of the group sends %lld rows "
                             "in update %lld", (long long)k, (long long)r->meta[RECV][k], j,
                             (long long)r->got_sizes[k], (long long)(k % r->u));
        if (!in_range(r->got_offsets[k], r->got_sizes[k], r->out_rows))
            return error_set(err, ERR_MISMATCH, instr->info->loc,
                             "ragged-all-to-all: member %d of the group writes %lld rows at output offset %lld, "
                             "outside this member's %lld output rows", j, (long long)r->got_sizes[k],
                             (long long)r->got_offsets[k], (long long)r->out_rows);
    }
    return true;
}

/* Every member's verdict: false on all of them when one found bad metadata. */
static bool agree(bool mine, const IrInstr *instr, MPI_Comm comm, Error *err)
{
    int ok = mine, all = 0;
    if (!coll_mpi_ok(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, comm), instr, "MPI_Allreduce", err))
        return false;
    if (mine && !all)
        return error_set(err, ERR_MISMATCH, instr->info->loc,
                         "ragged-all-to-all: another member of the group found its offsets or sizes invalid");
    return mine && all;
}

/* Bytes per member of rows (sizes k = j*u + 0..u-1) and their displacements. */
static bool counts(const Ragged *r, const int64_t *sizes, int *count, int *displ, const IrInstr *instr, Error *err)
{
    int64_t total = 0;
    for (int j = 0; j < r->n; j++) {
        int64_t rows = 0;
        for (int64_t v = 0; v < r->u; v++)
            rows += sizes[j * r->u + v];
        displ[j] = (int)total;
        if (rows > (INT_MAX - total) / (int64_t)(r->row_bytes ? r->row_bytes : 1))
            return error_set(err, ERR_UNSUPPORTED, instr->info->loc, "ragged-all-to-all of more than 2 GiB");
        count[j] = (int)(rows * (int64_t)r->row_bytes);
        total += count[j];
    }
    return true;
}

static void pack(const Ragged *r, const Value *input, char *buf)
{
    for (int64_t k = 0; k < (int64_t)r->n * r->u; k++) {
        size_t bytes = (size_t)r->meta[SEND][k] * r->row_bytes;
        memcpy(buf, (const char *)input->data + (size_t)r->meta[IN_OFF][k] * r->row_bytes, bytes);
        buf += bytes;
    }
}

static void unpack(const Ragged *r, const char *buf, Value *res)
{
    for (int64_t k = 0; k < (int64_t)r->n * r->u; k++) {
        size_t bytes = (size_t)r->got_sizes[k] * r->row_bytes;
        memcpy((char *)res->data + (size_t)r->got_offsets[k] * r->row_bytes, buf, bytes);
        buf += bytes;
    }
}

static bool move_rows(const Ragged *r, const IrInstr *instr, MPI_Comm comm, Value *const *args, Value *res, Error *err)
{
    int n = r->n;
    int *sc = xcalloc((size_t)n, sizeof *sc), *sd = xcalloc((size_t)n, sizeof *sd);
    int *rc = xcalloc((size_t)n, sizeof *rc), *rd = xcalloc((size_t)n, sizeof *rd);
    bool ok = counts(r, r->meta[SEND], sc, sd, instr, err) && counts(r, r->got_sizes, rc, rd, instr, err);
    char *send = ok ? xmalloc((size_t)sd[n - 1] + (size_t)sc[n - 1] + 1) : NULL;
    char *recv = ok ? xmalloc((size_t)rd[n - 1] + (size_t)rc[n - 1] + 1) : NULL;
    if (ok)
        pack(r, args[0], send);
    ok = ok && coll_mpi_ok(MPI_Alltoallv(send, sc, sd, MPI_BYTE, recv, rc, rd, MPI_BYTE, comm), instr,
                           "MPI_Alltoallv", err);
    if (ok)
        unpack(r, recv, res);
    free(send); free(recv); free(sc); free(sd); free(rc); free(rd);
    return ok;
}

static void setup(Ragged *r, const CollComm *comm, Value *const *args)
{
    const IrShape *in = args[0]->shape, *out = args[1]->shape;
    memset(r, 0, sizeof *r);
    r->n = comm->size;
    r->me = comm->position;
    r->u = value_elements(args[2]) / comm->size;
    r->in_rows = in->dims[0];
    r->out_rows = out->dims[0];
    r->row_bytes = (size_t)ir_type_storage_bytes(in->type);
    for (int d = 1; d < in->rank; d++)
        r->row_bytes *= (size_t)in->dims[d];
}

bool coll_ragged_all_to_all(Coll *c, Interp *it, const IrInstr *instr, const IrShape *result,
                            Value *const *args, int n_args, Value **out, Error *err)
{
    (void)it;
    CollComm comm;
    if (!coll_group_comm(c, instr, &comm, err) || !check_shapes(instr, result, args, n_args, comm.size, err))
        return false;
    Ragged r;
    setup(&r, &comm, args);
    read_meta(&r, args);
    bool ok = exchange_meta(&r, instr, comm.comm, err);
    if (ok) {
        Error mine = { 0 };
        ok = agree(check_meta(&r, instr, &mine), instr, comm.comm, err);
        if (mine.code != ERR_OK && err)
            *err = mine;
    }
    Value *res = ok ? value_copy(args[1], err) : NULL;
    ok = res && move_rows(&r, instr, comm.comm, args, res, err);
    ragged_free(&r);
    if (!ok) {
        value_release(res);
        return false;
    }
    *out = res;
    return true;
}
