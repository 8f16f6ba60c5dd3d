/* p2p.c: send, recv, send-done and recv-done between devices, as XLA's
 * pipelines use them (the collective pipeliner's send/recv in while loops):
 *
 *   s  = (data, u32[], token[]) send(data, token), channel_id=N,
 *          frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1},{1,2}}"}
 *   sd = token[] send-done(s), channel_id=N
 *   r  = (data, u32[], token[]) recv(token), channel_id=N, frontend_attributes={...}
 *   rd = (data, token[]) recv-done(r), channel_id=N
 *
 * Each pair {a,b} moves device a's send data to device b's recv.  The ids
 * are partition ids within this replica when channel_id > 0 and replica ids
 * within this partition otherwise (XLA's send/recv thunks).  A device that
 * is no source sends nothing; a device that is no target receives zeros
 * (XLA leaves its buffer as it was: zeros are our choice, the same as
 * collective-permute's).  _xla_send_recv_validation is not read: it only
 * says on which loop iterations the data is used, and moving it on every
 * iteration changes no value XLA defines.  is_host_transfer=true (a
 * transfer to the host) is not supported.
 *
 * send and recv post MPI_Isend / MPI_Irecv and return at once; send-done
 * and recv-done wait for them.  So both ends running the same program in
 * program order never deadlock, however the posts and waits interleave,
 * as long as each -done comes after the posts it waits for (XLA's
 * schedules).  Messages travel on a communicator of their own with the
 * channel_id as tag: MPI keeps the order of messages between two ranks on
 * one tag, so the k-th send on a channel from a to b meets the k-th recv
 * on that channel at b from a, loop iteration after loop iteration.  The
 * u32[] context of a send's or recv's result names its pending transfer,
 * which holds a reference to the data until its -done.
 *
 * No hang on a mismatch: before posting, each device checks that the
 * module (the same on every device) has a recv for its send, or a send for
 * its recv, with the same channel and pair; a message of the wrong size
 * ends its recv-done with an error; and a -done that waits longer than
 * HLOCHECK_P2P_TIMEOUT seconds (default 120) for its peer ends with an
 * error naming the channel and the peer. */
#include "coll_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEFAULT_TIMEOUT 120.0   /* seconds */

struct P2pOp {
    bool is_send;
    Value *ctx;             /* the u32[] of the send's or recv's result: finds the op at its -done */
    Value *data;            /* the array sent, or received into (one reference) */
    MPI_Request req;        /* MPI_REQUEST_NULL when this device has no peer */
    int peer;               /* world rank; -1 none */
    int64_t peer_id, channel;   /* peer_id: the pair's replica or partition id */
    bool partitions;        /* the ids are partition ids */
};

void coll_p2p_init(CollP2p *p)
{
    memset(p, 0, sizeof *p);
    MPI_Comm_dup(MPI_COMM_WORLD, &p->comm);
    MPI_Comm_set_errhandler(p->comm, MPI_ERRORS_RETURN);
    int *ub = NULL, flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    p->tag_ub = flag && ub ? *ub : 32767;
    const char *text = getenv("HLOCHECK_P2P_TIMEOUT");
    char *end = NULL;
    double t = text ? strtod(text, &end) : 0;
    p->timeout = text && end != text && t > 0 ? t : DEFAULT_TIMEOUT;
}

/* Transfers never done (a run that failed): receives are cancelled, so
 * MPI writes nowhere once the job ends.  Their values are left to the
 * exit: their shapes belong to a module the caller may have freed. */
void coll_p2p_free(CollP2p *p)
{
    for (int i = 0; i < p->n_ops; i++) {
        P2pOp *op = &p->ops[i];
        if (op->req != MPI_REQUEST_NULL && !op->is_send) {
            MPI_Cancel(&op->req);
            MPI_Wait(&op->req, MPI_STATUS_IGNORE);
        }
    }
    free(p->ops);
    p->ops = NULL;
    p->n_ops = p->cap_ops = 0;
}

/* ---- Who talks to whom */

typedef struct Pairs {
    int n;
    int64_t (*v)[2];
    bool partitions;        /* ids are partition ids (else replica ids) */
    int64_t me, count;      /* this device's id, and how many ids there are */
} Pairs;

static bool host_transfer(const IrInstr *instr)
{
    const char *v = ir_raw_attr_get(instr, "is_host_transfer");
    return v && strcmp(v, "true") == 0;
}

static bool pairs_in_range(const IrInstr *instr, const Pairs *p, Error *err)
{
    const char *kind = p->partitions ? "partition" : "replica";
    for (int i = 0; i < p->n; i++)
        for (int k = 0; k < 2; k++)
            if (p->v[i][k] < 0 || p->v[i][k] >= p->count)
                return error_set(err, ERR_SHAPE, instr->info->loc,
                                 "%s: _xla_send_recv_source_target_pairs names %s %lld, but there %s %lld %s%s%s",
                                 ir_opcode_name(instr->op), kind, (long long)p->v[i][k],
                                 p->count == 1 ? "is" : "are", (long long)p->count, kind, p->count == 1 ? "" : "s",
                                 p->partitions ? " (with a channel_id above 0 the pairs name partitions: "
                                                 "num_partitions in the header, or hlo-run --partitions)" : "");
    return true;
}

static bool read_pairs(const IrInstr *instr, const InterpDevice *d, Pairs *p, Error *err)
{
    memset(p, 0, sizeof *p);
    const char *name = ir_opcode_name(instr->op);
    int n = ir_send_recv_pairs(instr, NULL, 0);
    if (n == -1)
        return error_set(err, ERR_UNSUPPORTED, instr->info->loc,
                         "%s without frontend_attributes={_xla_send_recv_source_target_pairs=...}: which devices "
                         "it connects is not known", name);
    if (n < 0)
        return error_set(err, ERR_SHAPE, instr->info->loc,
                         "%s: _xla_send_recv_source_target_pairs is not a list of {source,target} pairs", name);
    p->n = n;
    p->v = xcalloc((size_t)(n ? n : 1), sizeof *p->v);
    ir_send_recv_pairs(instr, p->v, n);
    p->partitions = instr->ints[IR_INT_CHANNEL_ID].v > 0;
    p->me = p->partitions ? d->rank % d->num_partitions : d->rank / d->num_partitions;
    p->count = p->partitions ? d->num_partitions : d->replica_count;
    if (!pairs_in_range(instr, p, err)) {
        free(p->v);
        return false;
    }
    return true;
}

/* This device's target (send) or source (recv); -1 when it has none. */
static int64_t peer_of(const Pairs *p, bool send)
{
    for (int i = 0; i < p->n; i++)
        if (p->v[i][send ? 0 : 1] == p->me)
            return p->v[i][send ? 1 : 0];
    return -1;
}

static int world_rank(const InterpDevice *d, const Pairs *p, int64_t id)
{
    int r = d->rank / d->num_partitions, q = d->rank % d->num_partitions;
    return p->partitions ? r * d->num_partitions + (int)id : (int)id * d->num_partitions + q;
}

static bool lists_pair(const IrInstr *x, int64_t src, int64_t dst)
{
    int64_t local[16][2], (*v)[2] = local;
    int n = ir_send_recv_pairs(x, local, 16);
    if (n > 16) {
        v = xcalloc((size_t)n, sizeof *v);
        ir_send_recv_pairs(x, v, n);
    }
    bool found = false;
    for (int i = 0; i < n && !found; i++)
        found = v[i][0] == src && v[i][1] == dst;
    if (v != local)
        free(v);
    return found;
}

/* Some `op` of module m on channel moves src's data to dst. */
static bool partner_listed(const IrModule *m, IrOpcode op, int64_t channel, int64_t src, int64_t dst)
{
    for (int c = 0; c < m->n_computations; c++)
        for (int i = 0; i < m->computations[c]->n_instrs; i++) {
            const IrInstr *x = m->computations[c]->instrs[i];
            if (!x->dead && x->op == op && x->ints[IR_INT_CHANNEL_ID].present &&
                x->ints[IR_INT_CHANNEL_ID].v == channel && !host_transfer(x) && lists_pair(x, src, dst))
                return true;
        }
    return false;
}

static bool check_partner(const Interp *it, const IrInstr *instr, const Pairs *p, int64_t peer, Error *err)
{
    bool send = instr->op == IR_OP_SEND;
    int64_t channel = instr->ints[IR_INT_CHANNEL_ID].v, src = send ? p->me : peer, dst = send ? peer : p->me;
    if (partner_listed(interp_module(it), send ? IR_OP_RECV : IR_OP_SEND, channel, src, dst))
        return true;
    const char *kind = p->partitions ? "partition" : "replica";
    return error_set(err, ERR_SHAPE, instr->info->loc,
                     "%s: channel %lld has no %s that moves %s %lld's data to %s %lld, so this %s would wait forever",
                     ir_opcode_name(instr->op), (long long)channel, send ? "recv" : "send", kind, (long long)src,
                     kind, (long long)dst, ir_opcode_name(instr->op));
}

/* ---- Posting */

static P2pOp *new_op(CollP2p *p)
{
    if (p->n_ops == p->cap_ops) {
        p->cap_ops = p->cap_ops ? 2 * p->cap_ops : 8;
        p->ops = xrealloc(p->ops, (size_t)p->cap_ops * sizeof *p->ops);
    }
    P2pOp *op = &p->ops[p->n_ops++];
    memset(op, 0, sizeof *op);
    op->req = MPI_REQUEST_NULL;
    op->peer = -1;
    return op;
}

/* The (data, u32[], token[]) a send or recv returns; the u32 is the op's id. */
static bool start_result(CollP2p *p, const IrShape *result, P2pOp *op, Value **out, Error *err)
{
    Value *el[3] = { value_retain(op->data), value_new_array(result->elements[1], err),
                     value_new_zeroed(result->elements[2], err) };
    if (el[1])
        ir_elem_set_i64(el[1]->shape->type, el[1]->data, ++p->next_id);
    op->ctx = value_retain(el[1]);
    if (!el[1] || !el[2]) {
        for (int i = 0; i < 3; i++)
            value_release(el[i]);
        return false;
    }
    return (*out = value_new_tuple(result, 3, el, err)) != NULL;
}

static bool check_start(const IrInstr *instr, const IrShape *result, const CollP2p *p, const Value *data, Error *err)
{
    const char *name = ir_opcode_name(instr->op);
    if (host_transfer(instr))
        return error_set(err, ERR_UNSUPPORTED, instr->info->loc,
                         "%s with is_host_transfer=true (a transfer to the host) is not supported", name);
    if (!instr->ints[IR_INT_CHANNEL_ID].present)
        return error_set(err, ERR_SHAPE, instr->info->loc, "%s needs a channel_id", name);
    if (result->type != IR_TYPE_TUPLE || result->n_elements != 3 || result->elements[0]->type == IR_TYPE_TUPLE)
        return error_set(err, ERR_UNSUPPORTED, instr->info->loc, "%s of %s: only arrays are sent and received",
                         name, ir_shape_str(result));
    int64_t channel = instr->ints[IR_INT_CHANNEL_ID].v;
    if (channel < 0 || channel > p->tag_ub)
        return error_set(err, ERR_UNSUPPORTED, instr->info->loc, "%s: channel_id %lld is outside MPI's tags 0..%d",
                         name, (long long)channel, p->tag_ub);
    if (data && value_bytes(data) > INT_MAX)
        return error_set(err, ERR_UNSUPPORTED, instr->info->loc, "%s of %zu bytes: above 2 GiB", name,
                         value_bytes(data));
    return true;
}

/* Posts the send or receive of data to or from peer (none when -1). */
static bool post(Coll *c, Interp *it, const IrInstr *instr, const IrShape *result, Value *data, Value **out,
                 Error *err)
{
    CollP2p *p = coll_p2p(c);
    const InterpDevice *d = coll_device(c);
    bool send = instr->op == IR_OP_SEND;
    Pairs pairs;
    if (!read_pairs(instr, d, &pairs, err))
        return false;
    int64_t peer = peer_of(&pairs, send);
    bool ok = peer < 0 || check_partner(it, instr, &pairs, peer, err);
    int64_t channel = instr->ints[IR_INT_CHANNEL_ID].v;
    int rank = peer >= 0 ? world_rank(d, &pairs, peer) : -1;
    free(pairs.v);
    if (!ok)
        return false;
    MPI_Request req = MPI_REQUEST_NULL;
    int bytes = (int)value_bytes(data), tag = (int)channel;
    if (peer < 0 && !send)
        memset(data->data, 0, value_bytes(data));   /* no source: zeros */
    if (peer >= 0 && send)
        ok = coll_mpi_ok(MPI_Isend(data->data, bytes, MPI_BYTE, rank, tag, p->comm, &req), instr, "MPI_Isend", err);
    else if (peer >= 0)
        ok = coll_mpi_ok(MPI_Irecv(data->data, bytes, MPI_BYTE, rank, tag, p->comm, &req), instr, "MPI_Irecv", err);
    if (!ok)
        return false;
    P2pOp *op = new_op(p);
    *op = (P2pOp){ send, NULL, value_retain(data), req, rank, peer, channel, pairs.partitions };
    return start_result(p, result, op, out, err);   /* on failure the op stays: MPI may be using its buffer */
}

bool coll_send(Coll *c, Interp *it, const IrInstr *instr, const IrShape *result, Value *const *args, int n_args,
               Value **out, Error *err)
{
    if (n_args != 2)
        return error_set(err, ERR_SHAPE, instr->info->loc, "send takes data and a token, not %d operands", n_args);
    return check_start(instr, result, coll_p2p(c), args[0], err) && post(c, it, instr, result, args[0], out, err);
}

bool coll_recv(Coll *c, Interp *it, const IrInstr *instr, const IrShape *result, Value *const *args, int n_args,
               Value **out, Error *err)
{
    (void)args;
    (void)n_args;
    if (!check_start(instr, result, coll_p2p(c), NULL, err))
        return false;
    Value *data = value_new_array(result->elements[0], err);     /* filled by MPI, or zeroed by post */
    if (!data)
        return false;
    bool ok = (size_t)value_bytes(data) <= INT_MAX ||
              error_set(err, ERR_UNSUPPORTED, instr->info->loc, "recv of %zu bytes: above 2 GiB", value_bytes(data));
    ok = ok && post(c, it, instr, result, data, out, err);
    value_release(data);
    return ok;
}

/* ---- Waiting */

static void pause_a_little(int spins)
{
    if (spins < 64)
        return;
    long ns = spins < 256 ? 1000 : spins < 1024 ? 50000 : 1000000;
    struct timespec t = { 0, ns };
    nanosleep(&t, NULL);
}

static const char *id_kind(const P2pOp *op)
{
    return op->partitions ? "partition" : "replica";
}

static bool transfer_failed(const IrInstr *instr, const P2pOp *op, int rc, Error *err)
{
    int cls = 0;
    MPI_Error_class(rc, &cls);
    if (cls == MPI_ERR_TRUNCATE)
        return error_set(err, ERR_MISMATCH, instr->info->loc,
                         "recv-done: %s %lld sent more than the %zu bytes of %s on channel %lld", id_kind(op),
                         (long long)op->peer_id, value_bytes(op->data), ir_shape_str(op->data->shape),
                         (long long)op->channel);
    return coll_mpi_ok(rc, instr, "MPI_Test", err);
}

/* Waits for op within the timeout; *done says whether MPI is through with
 * its buffer (a send that timed out may still be read from). */
static bool wait_op(const CollP2p *p, const IrInstr *instr, P2pOp *op, bool *done, Error *err)
{
    MPI_Status st;
    *done = op->req == MPI_REQUEST_NULL;
    if (*done)
        return true;    /* no peer: nothing moved */
    double deadline = coll_now_seconds() + p->timeout;
    for (int spins = 0;; spins++) {
        int flag = 0, rc = MPI_Test(&op->req, &flag, &st);
        if (rc != MPI_SUCCESS) {
            *done = true;
            return transfer_failed(instr, op, rc, err);
        }
        if (flag)
            break;
        if (coll_now_seconds() > deadline) {
            if (!op->is_send) {     /* a receive can be called off: nothing will write its buffer later */
                MPI_Cancel(&op->req);
                MPI_Wait(&op->req, MPI_STATUS_IGNORE);
                *done = true;
            }
            return error_set(err, ERR_MISMATCH, instr->info->loc,
                             "%s: waited %g s on channel %lld for %s %lld, whose matching %s never came: does it "
                             "take another path through the program? (HLOCHECK_P2P_TIMEOUT sets the wait)",
                             ir_opcode_name(instr->op), p->timeout, (long long)op->channel, id_kind(op),
                             (long long)op->peer_id, op->is_send ? "recv" : "send");
        }
        pause_a_little(spins);
    }
    *done = true;
    int count = 0;
    if (!op->is_send && MPI_Get_count(&st, MPI_BYTE, &count) == MPI_SUCCESS && (size_t)count != value_bytes(op->data))
        return error_set(err, ERR_MISMATCH, instr->info->loc,
                         "recv-done: %s %lld sent %d bytes on channel %lld, but the recv takes %s (%zu bytes)",
                         id_kind(op), (long long)op->peer_id, count, (long long)op->channel,
                         ir_shape_str(op->data->shape), value_bytes(op->data));
    return true;
}

/* The pending op whose result's context is ctx. */
static int find_op(const CollP2p *p, const Value *ctx)
{
    for (int i = 0; i < p->n_ops; i++)
        if (p->ops[i].ctx == ctx)
            return i;
    return -1;
}

static bool done_result(const IrInstr *instr, const IrShape *result, Value *data, Value **out, Error *err)
{
    if (instr->op == IR_OP_SEND_DONE)
        return (*out = value_new_zeroed(result, err)) != NULL;
    if (result->type != IR_TYPE_TUPLE || result->n_elements != 2)
        return error_set(err, ERR_SHAPE, instr->info->loc, "recv-done: result %s is not (data, token[])",
                         ir_shape_str(result));
    Value *el[2] = { value_retain(data), value_new_zeroed(result->elements[1], err) };
    if (!el[1]) {
        value_release(el[0]);
        return false;
    }
    return (*out = value_new_tuple(result, 2, el, err)) != NULL;
}

bool coll_p2p_done(Coll *c, Interp *it, const IrInstr *instr, const IrShape *result, Value *const *args,
                   int n_args, Value **out, Error *err)
{
    (void)it;
    CollP2p *p = coll_p2p(c);
    bool send = instr->op == IR_OP_SEND_DONE;
    const Value *start = n_args == 1 ? args[0] : NULL;
    int i = start && start->shape->type == IR_TYPE_TUPLE && start->n_elements == 3 ? find_op(p, start->elements[1])
                                                                                  : -1;
    if (i < 0 || p->ops[i].is_send != send)
        return error_set(err, ERR_UNSUPPORTED, instr->info->loc,
                         "%s: its operand is no %s still in flight (each one is done once)",
                         ir_opcode_name(instr->op), send ? "send" : "recv");
    bool done = false;
    bool ok = wait_op(p, instr, &p->ops[i], &done, err);
    if (!done)
        return false;   /* still posted: the op keeps its buffer */
    P2pOp op = p->ops[i];
    p->ops[i] = p->ops[--p->n_ops];
    ok = ok && done_result(instr, result, op.data, out, err);
    value_release(op.data);
    value_release(op.ctx);
    return ok;
}
