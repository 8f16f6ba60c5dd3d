/* test_p2p.c: send / recv / send-done / recv-done, collective-broadcast,
 * ragged-all-to-all and all-reduce over groups of different sizes, over real
 * MPI ranks.  Runs under mpirun with 2, 3, 4 and 8 ranks
 * (scripts/run_unit.sh); every module is written for the world size it
 * finds.  Expected values are computed here from the semantics (XLA's
 * send/recv thunks, StableHLO's collective_broadcast, XLA's
 * ragged-all-to-all), never by the code under test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "coll_internal.h"

static Coll *coll;
static int rank, world;

/* ---- Building and running modules */

static char text[65536];
static size_t text_len;

static void put(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void put(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(text + text_len, sizeof text - text_len, fmt, ap);
    va_end(ap);
    assert_true(n >= 0 && (size_t)n < sizeof text - text_len);
    text_len += (size_t)n;
}

static void start_text(void)
{
    text_len = 0;
    text[0] = 0;
}

/* {{0,1},{1,2},...}: pairs[i] = { src[i], dst[i] } */
static void put_pairs(const int *src, const int *dst, int n)
{
    put("\"{");
    for (int i = 0; i < n; i++)
        put("%s{%d,%d}", i ? "," : "", src[i], dst[i]);
    put("}\"");
}

typedef struct Run {
    IrModule *m;
    Interp *it;
    Value *out;
    Error err;
    bool ok;
} Run;

static IrModule *parse_verified(const char *t)
{
    Error err = { 0 };
    IrModule *m = ir_parse_module(t, strlen(t), "t.hlo", &err);
    if (!m || !ir_verify_module(m, &err)) {
        error_print(&err, stderr);
        fprintf(stderr, "%s", t);
        fail_msg("%s", err.msg);
    }
    return m;
}

/* Runs m on this rank with raw params (one buffer per entry parameter),
 * through the collectives when with_comm, else on one device. */
static void run_module(Run *r, IrModule *m, const void *const *params, bool with_comm)
{
    memset(r, 0, sizeof *r);
    r->m = m;
    InterpOptions opt = { 0 };
    if (with_comm) {
        char note[256];
        if (!coll_setup_devices(coll, m, 0, 0, &opt.device, note, sizeof note, &r->err))
            fail_msg("%s", r->err.msg);
        opt.comm = coll_comm(coll);
    }
    r->it = interp_new(m, &opt, &r->err);
    Value *args[8];
    for (int i = 0; i < m->entry->n_params; i++) {
        args[i] = value_new_array(m->entry->params[i]->shape, &r->err);
        memcpy(args[i]->data, params[i], value_bytes(args[i]));
    }
    r->ok = interp_run(r->it, args, m->entry->n_params, &r->out, &r->err);
}

static void run(Run *r, const void *const *params)
{
    run_module(r, parse_verified(text), params, true);
    if (!r->ok) {
        error_print(&r->err, stderr);
        fail_msg("rank %d: %s", rank, r->err.msg);
    }
}

static void done(Run *r)
{
    value_release(r->out);
    interp_free(r->it);
    ir_module_free(r->m);
}

static const float *leaf(const Run *r, int i)
{
    return r->out->shape->type == IR_TYPE_TUPLE ? r->out->elements[i]->data : r->out->data;
}

/* ---- send / recv */

#define P2P_TYPES "(f32[3], u32[], token[])"

/* A pipeline ring over all ranks as the collective pipeliner writes it:
 * the send and recv of iteration i are posted at its end and done at the
 * start of iteration i+1, their values carried through the loop state;
 * acc = 2*acc + received, then acc goes on to the next partition. */
static void ring_module(int iterations)
{
    int src[64], dst[64];
    for (int i = 0; i < world; i++) {
        src[i] = i;
        dst[i] = (i + 1) % world;
    }
    const char *state = "(u32[], f32[3], " P2P_TYPES ", " P2P_TYPES ")";
    start_text();
    put("HloModule ring, num_partitions=%d\n\n", world);
    put("cond {\n  s = %s parameter(0)\n  i = u32[] get-tuple-element(s), index=0\n"
        "  n = u32[] constant(%d)\n  ROOT lt = pred[] compare(i, n), direction=LT\n}\n\n", state, iterations);
    put("body {\n  s = %s parameter(0)\n  i = u32[] get-tuple-element(s), index=0\n"
        "  acc = f32[3] get-tuple-element(s), index=1\n  r = " P2P_TYPES " get-tuple-element(s), index=2\n"
        "  sn = " P2P_TYPES " get-tuple-element(s), index=3\n"
        "  rd = (f32[3], token[]) recv-done(r), channel_id=5\n  sd = token[] send-done(sn), channel_id=5\n"
        "  got = f32[3] get-tuple-element(rd), index=0\n  two = f32[3] constant({2, 2, 2})\n"
        "  twice = f32[3] multiply(acc, two)\n  acc2 = f32[3] add(twice, got)\n  t = token[] after-all()\n", state);
    put("  r2 = " P2P_TYPES " recv(t), channel_id=5, frontend_attributes={_xla_send_recv_source_target_pairs=");
    put_pairs(src, dst, world);
    put("}\n  s2 = " P2P_TYPES " send(acc2, t), channel_id=5, frontend_attributes={_xla_send_recv_source_target_pairs=");
    put_pairs(src, dst, world);
    put("}\n  one = u32[] constant(1)\n  i2 = u32[] add(i, one)\n  ROOT out = %s tuple(i2, acc2, r2, s2)\n}\n\n",
        state);
    put("ENTRY e {\n  p = f32[3] parameter(0)\n  t = token[] after-all()\n");
    put("  r = " P2P_TYPES " recv(t), channel_id=5, frontend_attributes={_xla_send_recv_source_target_pairs=");
    put_pairs(src, dst, world);
    put("}\n  s = " P2P_TYPES " send(p, t), channel_id=5, frontend_attributes={_xla_send_recv_source_target_pairs=");
    put_pairs(src, dst, world);
    put("}\n  zero = u32[] constant(0)\n  init = %s tuple(zero, p, r, s)\n"
        "  w = %s while(init), condition=cond, body=body\n"
        "  rl = " P2P_TYPES " get-tuple-element(w), index=2\n  sl = " P2P_TYPES " get-tuple-element(w), index=3\n"
        "  rdl = (f32[3], token[]) recv-done(rl), channel_id=5\n  sdl = token[] send-done(sl), channel_id=5\n"
        "  last = f32[3] get-tuple-element(rdl), index=0\n  acc = f32[3] get-tuple-element(w), index=1\n"
        "  ROOT o = (f32[3], f32[3]) tuple(acc, last)\n}\n", state, state);
}

static void test_send_recv_pipeline_ring_in_while_loop(void **state)
{
    (void)state;
    enum { ITER = 4 };
    ring_module(ITER);
    float in[3];
    for (int e = 0; e < 3; e++)
        in[e] = (float)(10 * rank + e);
    const void *params[] = { in };
    Run r;
    run(&r, params);
    /* Every partition's acc, iteration by iteration, from the pairs. */
    float acc[64][3], sent[64][3];
    for (int d = 0; d < world; d++)
        for (int e = 0; e < 3; e++)
            acc[d][e] = sent[d][e] = (float)(10 * d + e);
    for (int it = 0; it < ITER; it++) {
        float got[64][3];
        for (int d = 0; d < world; d++)
            memcpy(got[d], sent[(d + world - 1) % world], sizeof got[d]);
        for (int d = 0; d < world; d++)
            for (int e = 0; e < 3; e++)
                sent[d][e] = acc[d][e] = 2 * acc[d][e] + got[d][e];
    }
    for (int e = 0; e < 3; e++) {
        assert_true(leaf(&r, 0)[e] == acc[rank][e]);
        assert_true(leaf(&r, 1)[e] == sent[(rank + world - 1) % world][e]);
    }
    done(&r);
}

/* A chain 0 -> 1 -> ... -> W-1 over replica ids (channel_id=0): replica 0
 * is no target and receives zeros.  Two sends on one channel before their
 * dones arrive in order. */
static void test_recv_with_no_source_gets_zeros_and_order_holds(void **state)
{
    (void)state;
    int src[64], dst[64];
    for (int i = 0; i + 1 < world; i++) {
        src[i] = i;
        dst[i] = i + 1;
    }
    start_text();
    put("HloModule chain, replica_count=%d\nENTRY e {\n  a = f32[3] parameter(0)\n  b = f32[3] parameter(1)\n"
        "  t = token[] after-all()\n", world);
    const char *names[2][2] = { { "s1", "a" }, { "s2", "b" } };
    for (int k = 0; k < 2; k++) {
        put("  %s = " P2P_TYPES " send(%s, t), channel_id=0, frontend_attributes={_xla_send_recv_source_target_pairs=",
            names[k][0], names[k][1]);
        put_pairs(src, dst, world - 1);
        put("}\n");
    }
    for (int k = 1; k <= 2; k++) {
        put("  r%d = " P2P_TYPES " recv(t), channel_id=0, frontend_attributes={_xla_send_recv_source_target_pairs=", k);
        put_pairs(src, dst, world - 1);
        put("}\n");
    }
    put("  rd1 = (f32[3], token[]) recv-done(r1), channel_id=0\n  rd2 = (f32[3], token[]) recv-done(r2), channel_id=0\n"
        "  sd2 = token[] send-done(s2), channel_id=0\n  sd1 = token[] send-done(s1), channel_id=0\n"
        "  g1 = f32[3] get-tuple-element(rd1), index=0\n  g2 = f32[3] get-tuple-element(rd2), index=0\n"
        "  ROOT o = (f32[3], f32[3]) tuple(g1, g2)\n}\n");
    float a[3], b[3];
    for (int e = 0; e < 3; e++) {
        a[e] = (float)(100 * rank + e + 1);
        b[e] = -(float)(100 * rank + e + 1);
    }
    const void *params[] = { a, b };
    Run r;
    run(&r, params);
    for (int e = 0; e < 3; e++) {
        float want1 = rank == 0 ? 0.0f : (float)(100 * (rank - 1) + e + 1);
        assert_true(leaf(&r, 0)[e] == want1);
        assert_true(leaf(&r, 1)[e] == -want1);
    }
    done(&r);
}

/* R x 2 devices: with a channel_id above 0 the pair {0,1} names partitions
 * (each replica's partition 0 sends to its partition 1); with channel_id=0
 * the pair {1,0} names replicas (replica 1 to replica 0, in each partition). */
static void test_send_recv_pairs_name_partitions_or_replicas(void **state)
{
    (void)state;
    if (world % 2 || world < 4)
        skip();
    start_text();
    put("HloModule m, replica_count=%d, num_partitions=2\nENTRY e {\n  p = f32[3] parameter(0)\n"
        "  t = token[] after-all()\n", world / 2);
    const char *pairs[2] = { "\"{{0,1}}\"", "\"{{1,0}}\"" };
    for (int k = 0; k < 2; k++) {
        int ch = k == 0 ? 3 : 0;
        put("  r%d = " P2P_TYPES " recv(t), channel_id=%d, frontend_attributes={_xla_send_recv_source_target_pairs=%s}\n"
            "  s%d = " P2P_TYPES " send(p, t), channel_id=%d, frontend_attributes={_xla_send_recv_source_target_pairs=%s}\n"
            "  rd%d = (f32[3], token[]) recv-done(r%d), channel_id=%d\n  sd%d = token[] send-done(s%d), channel_id=%d\n"
            "  g%d = f32[3] get-tuple-element(rd%d), index=0\n",
            k, ch, pairs[k], k, ch, pairs[k], k, k, ch, k, k, ch, k, k);
    }
    put("  ROOT o = (f32[3], f32[3]) tuple(g0, g1)\n}\n");
    float in[3];
    for (int e = 0; e < 3; e++)
        in[e] = (float)(10 * rank + e + 1);
    const void *params[] = { in };
    Run r;
    run(&r, params);
    int rep = rank / 2, part = rank % 2;
    for (int e = 0; e < 3; e++) {
        float from_part0 = part == 1 ? (float)(10 * (rep * 2) + e + 1) : 0.0f;
        float from_rep1 = rep == 0 ? (float)(10 * (1 * 2 + part) + e + 1) : 0.0f;
        assert_true(leaf(&r, 0)[e] == from_part0);
        assert_true(leaf(&r, 1)[e] == from_rep1);
    }
    done(&r);
}

/* A module with one recv (data shape recv_shape) from partition 0 to 1
 * and one send with send_pairs. */
static void mismatch_module(const char *recv_shape, const char *send_pairs)
{
    start_text();
    put("HloModule m, num_partitions=%d\nENTRY e {\n  p = f32[2] parameter(0)\n  t = token[] after-all()\n"
        "  r = (%s, u32[], token[]) recv(t), channel_id=1, frontend_attributes={_xla_send_recv_source_target_pairs=\"{{0,1}}\"}\n"
        "  s = (f32[2], u32[], token[]) send(p, t), channel_id=1, frontend_attributes={_xla_send_recv_source_target_pairs=\"%s\"}\n"
        "  rd = (%s, token[]) recv-done(r), channel_id=1\n  sd = token[] send-done(s), channel_id=1\n"
        "  ROOT d = %s get-tuple-element(rd), index=0\n}\n",
        world, recv_shape, send_pairs, recv_shape, recv_shape);
}

static void expect_run(const void *const *params, bool ok, ErrCode code, const char *msg_part)
{
    Run r;
    run_module(&r, parse_verified(text), params, true);
    if (r.ok != ok || (!ok && (r.err.code != code || !strstr(r.err.msg, msg_part))))
        fail_msg("rank %d: ok=%d code=%d msg=%s", rank, r.ok, (int)r.err.code, r.err.msg);
    done(&r);
}

/* A message of the wrong size ends the recv-done with an error; a recv
 * whose channel has no matching send fails before it waits. */
static void test_send_recv_mismatches_end_with_errors(void **state)
{
    (void)state;
    float in[2] = { 1, 2 };
    const void *params[] = { in };
    mismatch_module("f32[3]", "{{0,1}}");
    expect_run(params, rank != 1, ERR_MISMATCH, "partition 0 sent 8 bytes on channel 1, but the recv takes f32[3]");
    mismatch_module("f32[1]", "{{0,1}}");
    expect_run(params, rank != 1, ERR_MISMATCH, "sent more than the 4 bytes of f32[1]");
    mismatch_module("f32[2]", "{{1,0}}");
    expect_run(params, rank != 1, ERR_SHAPE, "channel 1 has no send that moves partition 0's data to partition 1");
    coll_barrier(coll);
}

/* A device whose peer takes another path through the program (the send
 * sits in a branch no device takes) waits the p2p timeout, then fails; the
 * receive is called off, so the channel is clean for what follows. */
static void test_recv_whose_send_never_comes_times_out(void **state)
{
    (void)state;
    start_text();
    put("HloModule m, num_partitions=%d\n\n"
        "yes {\n  a = (f32[2], token[]) parameter(0)\n  d = f32[2] get-tuple-element(a), index=0\n"
        "  t = token[] get-tuple-element(a), index=1\n"
        "  s = (f32[2], u32[], token[]) send(d, t), channel_id=1, frontend_attributes={_xla_send_recv_source_target_pairs=\"{{1,0}}\"}\n"
        "  ROOT sd = token[] send-done(s), channel_id=1\n}\n\n"
        "no {\n  a = (f32[2], token[]) parameter(0)\n  ROOT t = token[] get-tuple-element(a), index=1\n}\n\n"
        "ENTRY e {\n  p = f32[2] parameter(0)\n  t = token[] after-all()\n  id = u32[] partition-id()\n"
        "  never = u32[] constant(99)\n  c = pred[] compare(id, never), direction=EQ\n"
        "  arg = (f32[2], token[]) tuple(p, t)\n"
        "  x = token[] conditional(c, arg, arg), true_computation=yes, false_computation=no\n"
        "  r = (f32[2], u32[], token[]) recv(x), channel_id=1, frontend_attributes={_xla_send_recv_source_target_pairs=\"{{1,0}}\"}\n"
        "  rd = (f32[2], token[]) recv-done(r), channel_id=1\n  ROOT d = f32[2] get-tuple-element(rd), index=0\n}\n",
        world);
    float in[2] = { 1, 2 };
    const void *params[] = { in };
    CollP2p *p = coll_p2p(coll);
    double saved = p->timeout;
    int pending = p->n_ops;     /* what failed runs before left behind */
    p->timeout = 1.0;
    double t0 = MPI_Wtime();
    expect_run(params, rank != 0, ERR_MISMATCH, "waited 1 s on channel 1 for partition 1, whose matching send never came");
    if (rank == 0)
        assert_true(MPI_Wtime() - t0 >= 1.0);
    p->timeout = saved;
    assert_int_equal(p->n_ops, pending);
    coll_barrier(coll);
    /* The same channel works afterwards. */
    mismatch_module("f32[2]", "{{0,1}}");
    expect_run(params, true, ERR_OK, "");
    coll_barrier(coll);
}

/* Every device refuses the same way: no peer can be left waiting. */
static void test_host_transfers_and_missing_pairs_are_refused(void **state)
{
    (void)state;
    float in[2] = { 1, 2 };
    const void *params[] = { in };
    start_text();
    put("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  t = token[] after-all()\n"
        "  s = (f32[2], u32[], token[]) send(p, t), channel_id=1, is_host_transfer=true\n"
        "  ROOT sd = token[] send-done(s), channel_id=1, is_host_transfer=true\n}\n");
    expect_run(params, false, ERR_UNSUPPORTED, "is_host_transfer=true");
    start_text();
    put("HloModule m\nENTRY e {\n  t = token[] after-all()\n  r = (f32[2], u32[], token[]) recv(t), channel_id=1\n"
        "  rd = (f32[2], token[]) recv-done(r), channel_id=1\n  ROOT d = f32[2] get-tuple-element(rd), index=0\n}\n");
    expect_run(params, false, ERR_UNSUPPORTED, "without frontend_attributes");
}

/* Without the collectives: a device sending to itself works, anything
 * else needs more devices. */
static void test_single_device_send_recv(void **state)
{
    (void)state;
    start_text();
    put("HloModule m\nENTRY e {\n  p = f32[3] parameter(0)\n  t = token[] after-all()\n"
        "  r = " P2P_TYPES " recv(t), channel_id=2, frontend_attributes={_xla_send_recv_source_target_pairs=\"{{0,0}}\"}\n"
        "  s = " P2P_TYPES " send(p, t), channel_id=2, frontend_attributes={_xla_send_recv_source_target_pairs=\"{{0,0}}\"}\n"
        "  rd = (f32[3], token[]) recv-done(r), channel_id=2\n  sd = token[] send-done(s), channel_id=2\n"
        "  r9 = " P2P_TYPES " recv(t), channel_id=9, frontend_attributes={_xla_send_recv_source_target_pairs=\"{}\"}\n"
        "  rd9 = (f32[3], token[]) recv-done(r9), channel_id=9\n"
        "  g = f32[3] get-tuple-element(rd), index=0\n  z = f32[3] get-tuple-element(rd9), index=0\n"
        "  ROOT o = (f32[3], f32[3]) tuple(g, z)\n}\n");
    float in[3] = { 4, 5, 6 };
    const void *params[] = { in };
    Run r;
    run_module(&r, parse_verified(text), params, false);
    assert_true(r.ok);
    for (int e = 0; e < 3; e++) {
        assert_true(leaf(&r, 0)[e] == in[e]);
        assert_true(leaf(&r, 1)[e] == 0.0f);
    }
    done(&r);
    mismatch_module("f32[2]", "{{0,1}}");
    run_module(&r, parse_verified(text), params, false);
    assert_false(r.ok);
    assert_int_equal(r.err.code, ERR_UNSUPPORTED);
    assert_non_null(strstr(r.err.msg, "needs more than one device"));
    done(&r);
}

/* ---- collective-broadcast */

/* Groups over all ranks but the one after the first: {W-1, 0, 2, 3, ...}
 * broadcast from replica W-1; with a tuple of two operands. */
static void test_broadcast_from_non_zero_first_member(void **state)
{
    (void)state;
    int group[64], n = 0, left_out = world >= 3 ? 1 : -1;
    group[n++] = world - 1;
    for (int i = 0; i < world - 1; i++)
        if (i != left_out)
            group[n++] = i;
    start_text();
    put("HloModule m, replica_count=%d\nENTRY e {\n  a = f32[3] parameter(0)\n  b = f32[2] parameter(1)\n"
        "  ROOT c = (f32[3], f32[2]) collective-broadcast(a, b), replica_groups={{", world);
    for (int i = 0; i < n; i++)
        put("%s%d", i ? "," : "", group[i]);
    put("}}\n}\n");
    float a[3], b[2];
    for (int e = 0; e < 3; e++)
        a[e] = (float)(7 * rank + e + 1);
    b[0] = (float)-rank;
    b[1] = 0.5f * (float)rank;
    const void *params[] = { a, b };
    Run r;
    run(&r, params);
    int root = world - 1;
    for (int e = 0; e < 3; e++)
        assert_true(leaf(&r, 0)[e] == (rank == left_out ? 0.0f : (float)(7 * root + e + 1)));
    assert_true(leaf(&r, 1)[0] == (rank == left_out ? 0.0f : (float)-root));
    assert_true(leaf(&r, 1)[1] == (rank == left_out ? 0.0f : 0.5f * (float)root));
    done(&r);
}

/* Cross-partition (channel_id): groups of partition ids within each replica. */
static void test_broadcast_cross_partition(void **state)
{
    (void)state;
    if (world % 2 || world < 4)
        skip();
    start_text();
    put("HloModule m, replica_count=%d, num_partitions=2\nENTRY e {\n  a = f32[2] parameter(0)\n"
        "  ROOT c = f32[2] collective-broadcast(a), channel_id=4, replica_groups={{1,0}}\n}\n", world / 2);
    float a[2] = { (float)rank, (float)(rank * 3) };
    const void *params[] = { a };
    Run r;
    run(&r, params);
    int src = (rank / 2) * 2 + 1;
    assert_true(leaf(&r, 0)[0] == (float)src && leaf(&r, 0)[1] == (float)(src * 3));
    done(&r);
}

/* ---- ragged-all-to-all */

/* Rows rank r sends member j in update u (0, 1 or 2: uneven, some empty). */
static int64_t ragged_size(int r, int j, int u)
{
    return (r + 2 * j + u) % 3;
}

typedef struct RaggedCase {
    int updates;            /* per peer */
    bool reversed;          /* group {W-1, ..., 0}: member j is rank W-1-j */
    const char *type;       /* of the metadata */
    int cols;               /* elements per row */
} RaggedCase;

static int member_rank(const RaggedCase *c, int j)
{
    return c->reversed ? world - 1 - j : j;
}

static int member_of(const RaggedCase *c, int r)
{
    return c->reversed ? world - 1 - r : r;
}

/* Input rows of rank r: the updates for (j, u) in order, one blank row
 * before each.  Output rows of rank j: senders in reverse member order,
 * after two rows nothing writes. */
static int64_t input_offset(const RaggedCase *c, int r, int j, int u)
{
    int64_t off = 0;
    for (int k = 0; k < j * c->updates + u; k++)
        off += ragged_size(r, k / c->updates, k % c->updates) + 1;
    return off + 1;
}

static int64_t output_offset(const RaggedCase *c, int r, int j, int u)
{
    int64_t off = 2;
    int me = member_of(c, r);
    for (int s = world - 1; s >= 0; s--)
        for (int v = 0; v < c->updates; v++) {
            if (s == me && v == u)
                return off;
            off += ragged_size(member_rank(c, s), j, v);
        }
    return off;
}

static void ragged_run(const RaggedCase *c)
{
    int rows_in = 3 * world * c->updates + 1, rows_out = 3 * world * c->updates + 3, e = world * c->updates;
    start_text();
    put("HloModule m, replica_count=%d\nENTRY e {\n  x = f32[%d,%d] parameter(0)\n  y = f32[%d,%d] parameter(1)\n",
        world, rows_in, c->cols, rows_out, c->cols);
    const char *names[4] = { "io", "ss", "oo", "rs" };
    for (int m = 0; m < 4; m++)
        put("  %s = %s[%d] parameter(%d)\n", names[m], c->type, e, 2 + m);
    put("  ROOT r = f32[%d,%d] ragged-all-to-all(x, y, io, ss, oo, rs), replica_groups={{", rows_out, c->cols);
    for (int j = 0; j < world; j++)
        put("%s%d", j ? "," : "", member_rank(c, j));
    put("}}\n}\n");
    float *x = calloc((size_t)rows_in * (size_t)c->cols, sizeof *x), *y = calloc((size_t)rows_out * (size_t)c->cols, sizeof *y);
    for (int i = 0; i < rows_in * c->cols; i++)
        x[i] = (float)(1000 * rank + i);
    for (int i = 0; i < rows_out * c->cols; i++)
        y[i] = (float)(-1 - i);
    int64_t meta[4][64];
    int me = member_of(c, rank);
    for (int j = 0; j < world; j++)
        for (int u = 0; u < c->updates; u++) {
            int k = j * c->updates + u;
            meta[0][k] = input_offset(c, rank, j, u);
            meta[1][k] = ragged_size(rank, j, u);
            meta[2][k] = output_offset(c, rank, j, u);
            meta[3][k] = ragged_size(member_rank(c, j), me, u);
        }
    bool wide = strcmp(c->type, "s64") == 0;
    int32_t meta32[4][64];
    for (int m = 0; m < 4; m++)
        for (int k = 0; k < e; k++)
            meta32[m][k] = (int32_t)meta[m][k];
    const void *params[6] = { x, y };
    for (int m = 0; m < 4; m++)
        params[2 + m] = wide ? (const void *)meta[m] : (const void *)meta32[m];
    Run r;
    run(&r, params);
    /* The output operand, then every sender's rows at their offsets. */
    float *want = malloc((size_t)rows_out * (size_t)c->cols * sizeof *want);
    memcpy(want, y, (size_t)rows_out * (size_t)c->cols * sizeof *want);
    for (int s = 0; s < world; s++)
        for (int u = 0; u < c->updates; u++) {
            int sender = member_rank(c, s);
            int64_t n = ragged_size(sender, me, u), in = input_offset(c, sender, me, u);
            int64_t out = output_offset(c, sender, me, u);
            for (int64_t row = 0; row < n; row++)
                for (int col = 0; col < c->cols; col++)
                    want[(out + row) * c->cols + col] = (float)(1000 * sender + (in + row) * c->cols + col);
        }
    assert_memory_equal(leaf(&r, 0), want, (size_t)rows_out * (size_t)c->cols * sizeof *want);
    free(want);
    free(x);
    free(y);
    done(&r);
}

static void test_ragged_all_to_all_uneven_sizes_and_offsets(void **state)
{
    (void)state;
    RaggedCase plain = { 1, false, "s32", 1 }, wide = { 2, true, "s64", 3 };
    ragged_run(&plain);
    ragged_run(&wide);
}

/* One member's bad offsets end it on every member of the group. */
static void test_ragged_all_to_all_bad_offsets_fail_everywhere(void **state)
{
    (void)state;
    start_text();
    put("HloModule m, replica_count=%d\nENTRY e {\n  x = f32[4] parameter(0)\n  y = f32[4] parameter(1)\n"
        "  io = s32[%d] parameter(2)\n  ss = s32[%d] parameter(3)\n  oo = s32[%d] parameter(4)\n  rs = s32[%d] parameter(5)\n"
        "  ROOT r = f32[4] ragged-all-to-all(x, y, io, ss, oo, rs), replica_groups={}\n}\n",
        world, world, world, world, world);
    float x[4] = { 0 }, y[4] = { 0 };
    int32_t io[64] = { 0 }, ss[64] = { 0 }, oo[64] = { 0 }, rs[64] = { 0 };
    if (rank == 0) {
        io[0] = 3;
        ss[0] = 2;      /* rows 3..4 of 4 */
        rs[0] = 2;
    }
    const void *params[] = { x, y, io, ss, oo, rs };
    expect_run(params, false, ERR_MISMATCH,
               rank == 0 ? "input_offsets[0]=3 with send_sizes[0]=2 leave the 4 input rows"
                         : "another member of the group found its offsets or sizes invalid");
}

/* ---- all-reduce over groups of different sizes */

static const char *ADD = "%add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                         "  ROOT s = f32[] add(a, b)\n}\n";

/* {{0},{1,2},{3},{4,...}} (as far as the world goes), all-reduce and
 * all-reduce-start; each group folds on its own. */
static void test_all_reduce_groups_of_different_sizes(void **state)
{
    (void)state;
    if (world < 3)
        skip();
    int gid[64];
    char groups[512] = "{{0},{1,2}";
    gid[0] = 0;
    gid[1] = gid[2] = 1;
    if (world > 3)
        snprintf(groups + strlen(groups), sizeof groups - strlen(groups), ",{3}");
    if (world > 3)
        gid[3] = 2;
    if (world > 4) {
        snprintf(groups + strlen(groups), sizeof groups - strlen(groups), ",{");
        for (int i = 4; i < world; i++) {
            snprintf(groups + strlen(groups), sizeof groups - strlen(groups), "%s%d", i > 4 ? "," : "", i);
            gid[i] = 3;
        }
        snprintf(groups + strlen(groups), sizeof groups - strlen(groups), "}");
    }
    snprintf(groups + strlen(groups), sizeof groups - strlen(groups), "}");
    start_text();
    put("HloModule m, replica_count=%d\n%sENTRY e {\n  p = f32[2] parameter(0)\n"
        "  r = f32[2] all-reduce(p), replica_groups=%s, to_apply=%%add\n"
        "  s = f32[2] all-reduce-start(p), replica_groups=%s, to_apply=%%add\n"
        "  d = f32[2] all-reduce-done(s)\n  ROOT t = (f32[2], f32[2]) tuple(r, d)\n}\n", world, ADD, groups, groups);
    float in[2] = { (float)(rank + 1), (float)(10 * (rank + 1)) };
    const void *params[] = { in };
    Run r;
    run(&r, params);
    float want[2] = { 0, 0 };
    for (int i = 0; i < world; i++)
        if (gid[i] == gid[rank]) {
            want[0] += (float)(i + 1);
            want[1] += (float)(10 * (i + 1));
        }
    for (int k = 0; k < 2; k++)
        for (int e = 0; e < 2; e++)
            assert_true(leaf(&r, k)[e] == want[e]);
    done(&r);
}

/* Values for which the f32 sum depends on the order: a left fold in the
 * listed order of {{W-1, 0, 1, ...}, {singletons}} gives a different
 * result than rank order. */
static float fold_value(int k)
{
    static const float v[] = { -1e8f, 1.0f, 3.0f, 0.25f, -2.0f, 7.0f, 0.5f, 1e8f };
    return k == world - 1 ? 1e8f : v[k % 7];
}

static void test_all_reduce_uneven_fold_is_left_fold_in_group_order(void **state)
{
    (void)state;
    if (world < 3)
        skip();
    /* Group A = {W-1, 0, 1, ..., W-3}; W-2 alone. */
    int a[64], n = 0;
    a[n++] = world - 1;
    for (int i = 0; i < world - 2; i++)
        a[n++] = i;
    char groups[512] = "{{";
    for (int i = 0; i < n; i++)
        snprintf(groups + strlen(groups), sizeof groups - strlen(groups), "%s%d", i ? "," : "", a[i]);
    snprintf(groups + strlen(groups), sizeof groups - strlen(groups), "},{%d}}", world - 2);
    start_text();
    put("HloModule m, replica_count=%d\n%sENTRY e {\n  p = f32[1] parameter(0)\n"
        "  s = f32[1] all-reduce-start(p), replica_groups=%s, to_apply=%%add\n"
        "  ROOT d = f32[1] all-reduce-done(s)\n}\n", world, ADD, groups);
    float in = fold_value(rank);
    const void *params[] = { &in };
    Run r;
    run(&r, params);
    volatile float acc = fold_value(a[0]), sorted = fold_value(0);
    for (int i = 1; i < n; i++)
        acc = acc + fold_value(a[i]);
    for (int i = 1; i < world - 2; i++)
        sorted = sorted + fold_value(i);
    sorted = sorted + fold_value(world - 1);
    float want = rank == world - 2 ? fold_value(rank) : acc;
    assert_true(leaf(&r, 0)[0] == want);
    if (rank != world - 2 && n >= 3)
        assert_true(acc != sorted);     /* the order is what is tested (two terms commute) */
    done(&r);
}

/* Collectives whose result shape depends on the group size refuse groups
 * of different sizes: the verifier at its location, and the run on every
 * device alike (before anything moves) when the verifier was skipped. */
static void test_uneven_groups_refused_where_shape_depends_on_size(void **state)
{
    (void)state;
    const char *ops[] = {
        "  ROOT g = f32[4] all-gather(p), replica_groups={{0},{1,2}}, dimensions={0}\n",
        "  ROOT g = f32[2] all-to-all(p), replica_groups={{0},{1,2}}, dimensions={0}\n",
    };
    for (int i = 0; i < 2; i++) {
        start_text();
        put("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n%s}\n", ops[i]);
        Error err = { 0 };
        IrModule *m = ir_parse_module(text, strlen(text), "t.hlo", &err);
        assert_non_null(m);
        assert_false(ir_verify_module(m, &err));
        assert_int_equal(err.code, ERR_SHAPE);
        assert_int_equal(err.loc.line, 4);
        assert_non_null(strstr(err.msg, "replica groups must have the same size"));
        if (world == 3) {
            float in[2] = { 0, 0 };
            const void *params[] = { in };
            Run r;
            run_module(&r, m, params, true);
            assert_false(r.ok);
            assert_non_null(strstr(r.err.msg, "replica groups of different sizes (1 and 2)"));
            done(&r);
        } else {
            ir_module_free(m);
        }
    }
}

int main(int argc, char **argv)
{
    coll = coll_init(&argc, &argv);
    rank = coll_rank(coll);
    world = coll_world(coll);
    if (world > 64)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_send_recv_pipeline_ring_in_while_loop),
        cmocka_unit_test(test_recv_with_no_source_gets_zeros_and_order_holds),
        cmocka_unit_test(test_send_recv_pairs_name_partitions_or_replicas),
        cmocka_unit_test(test_send_recv_mismatches_end_with_errors),
        cmocka_unit_test(test_recv_whose_send_never_comes_times_out),
        cmocka_unit_test(test_host_transfers_and_missing_pairs_are_refused),
        cmocka_unit_test(test_single_device_send_recv),
        cmocka_unit_test(test_broadcast_from_non_zero_first_member),
        cmocka_unit_test(test_broadcast_cross_partition),
        cmocka_unit_test(test_ragged_all_to_all_uneven_sizes_and_offsets),
        cmocka_unit_test(test_ragged_all_to_all_bad_offsets_fail_everywhere),
        cmocka_unit_test(test_all_reduce_groups_of_different_sizes),
        cmocka_unit_test(test_all_reduce_uneven_fold_is_left_fold_in_group_order),
        cmocka_unit_test(test_uneven_groups_refused_where_shape_depends_on_size),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    int any = 0;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    coll_finish(coll, any ? 1 : 0);
}
