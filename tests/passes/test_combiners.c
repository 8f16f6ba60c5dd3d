/* test_combiners.c: the combining engine (src/passes/combine.c) and the
 * three combiners (combine_all_gather.c, combine_reduce_scatter.c,
 * combine_all_reduce.c).
 *
 * 1. Every combiner case of ../shared/peer-corpus/ run with the options of
 *    its .expect.md sidecar, asserting the upstream result (how many
 *    collectives remain, their operand counts, the transposes that replace
 *    upstream's bitcasts), except where the Neuron key must differ: each
 *    such case says why next to its expectation.
 * 2. Key equality, the trivial-reducer test and the dimension choice.
 * 3. The reachability guard: chains, long chains, transitive paths through
 *    another group, and the cross-key case that plain reachability gets wrong.
 * 4. Scale: a generated 20,000-instruction module combines in one sweep.
 * Every rewritten module must pass ir_verify_module. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "combine.h"
#include "ir.h"
#include "pass.h"

/* ------------------------------------------------------------------ */
/* Helpers                                                              */

static IrModule *parse_text(const char *text)
{
    Error err = { 0 };
    IrModule *m = ir_parse_module(text, strlen(text), "t.hlo", &err);
    if (!m) {
        error_print(&err, stderr);
        fail_msg("the test module does not parse");
    }
    return m;
}

static IrModule *parse_peer(const char *dir, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "../shared/peer-corpus/%s/%s.hlo", dir, name);
    if (access("../shared/peer-corpus", F_OK) != 0) {
        /* The peer modules are read in place, never copied into the repo:
         * a clone without them beside it skips these cases (as the
         * scripts do), it does not fail them. */
        print_message("skip: ../shared/peer-corpus not found next to the repo\n");
        skip();
    }
    Error err = { 0 };
    IrModule *m = ir_parse_file(path, &err);
    if (!m) {
        error_print(&err, stderr);
        fail_msg("%s does not parse", path);
    }
    return m;
}

static void expect_verifies(const IrModule *m)
{
    Error err = { 0 };
    if (!ir_verify_module(m, &err)) {
        error_print(&err, stderr);
        fail_msg("the module does not verify");
    }
}

/* Runs one pass (by registry name) with opt; returns its result. */
static PassResult run_pass(IrModule *m, const char *name, const PassOptions *opt, PassStats *stats)
{
    const Pass *p = pass_find(name);
    assert_non_null(p);
    Error err = { 0 };
    PassResult r = p->run(m, opt, stats, &err);
    if (r == PASS_FAILED)
        error_print(&err, stderr);
    assert_int_not_equal(r, PASS_FAILED);
    expect_verifies(m);
    return r;
}

static int count_op(const IrModule *m, IrOpcode op)
{
    int n = 0;
    for (int c = 0; c < m->n_computations; c++)
        for (int i = 0; i < m->computations[c]->n_instrs; i++)
            n += m->computations[c]->instrs[i]->op == op;
    return n;
}

static int cmp_int(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

/* "1,2,3": the operand counts of every op instruction, ascending. */
static void operand_counts(const IrModule *m, IrOpcode op, char *out, size_t size)
{
    int counts[256], n = 0;
    for (int c = 0; c < m->n_computations; c++)
        for (int i = 0; i < m->computations[c]->n_instrs && n < 256; i++)
            if (m->computations[c]->instrs[i]->op == op)
                counts[n++] = m->computations[c]->instrs[i]->n_operands;
    qsort(counts, (size_t)n, sizeof *counts, cmp_int);
    out[0] = '\0';
    for (int i = 0; i < n; i++)
        snprintf(out + strlen(out), size - strlen(out), "%s%d", i ? "," : "", counts[i]);
}

static IrInstr *find_instr(const IrModule *m, const char *name)
{
    for (int c = 0; c < m->n_computations; c++)
        for (int i = 0; i < m->computations[c]->n_instrs; i++)
            if (strcmp(m->computations[c]->instrs[i]->name, name) == 0)
                return m->computations[c]->instrs[i];
    fail_msg("no instruction %s", name);
    return NULL;
}

/* ------------------------------------------------------------------ */
/* 1. The peer corpus                                                   */

typedef struct PeerCase {
    const char *dir, *name;     /* ../shared/peer-corpus/<dir>/<name>.hlo */
    const char *pass;
    int64_t bytes, count;       /* the sidecar's thresholds */
    bool by_dim, fsdp;
    bool changed;
    IrOpcode op;                /* the collective counted afterwards */
    const char *operands;       /* operand counts of the remaining ops, ascending */
    int transposes;             /* upstream's bitcasts, as transposes */
} PeerCase;

static void run_peer(const PeerCase *pc)
{
    IrModule *m = parse_peer(pc->dir, pc->name);
    expect_verifies(m);
    PassOptions opt;
    pass_options_default(&opt);
    opt.combine_threshold_bytes = pc->bytes;
    opt.combine_threshold_count = pc->count;
    opt.combine_by_dim = pc->by_dim;
    opt.neuron_fsdp = pc->fsdp;
    PassStats stats = { 0 };
    PassResult r = run_pass(m, pc->pass, &opt, &stats);
    assert_int_equal(r, pc->changed ? PASS_CHANGED : PASS_UNCHANGED);
    char got[512];
    operand_counts(m, pc->op, got, sizeof got);
    assert_string_equal(got, pc->operands);
    assert_int_equal(count_op(m, IR_OP_TRANSPOSE), pc->transposes);
    ir_module_free(m);
}

#define MIB 1048576
#define AG IR_OP_ALL_GATHER
#define AR IR_OP_ALL_REDUCE
#define RS IR_OP_REDUCE_SCATTER
#define PEER(fn, ...)                        \
    static void fn(void **state)             \
    {                                        \
        (void)state;                         \
        run_peer(&(PeerCase){ __VA_ARGS__ }); \
    }

/* all_gather_combiner_test */
PEER(test_peer_ag_combine_all_gathers, "all_gather_combiner_test", "CombineAllGathers",
     "all-gather-combiner", MIB, 256, true, false, true, AG, "2", 0)
PEER(test_peer_ag_combine_by_dim, "all_gather_combiner_test", "CombineAllGathersByDim",
     "all-gather-combiner", MIB, 256, true, false, true, AG, "2,3", 0)
/* Upstream: one all-gather(param0, bitcast(param1)) and a bitcast back; here
 * the bitcasts are transposes (spec 2). */
PEER(test_peer_ag_different_dims, "all_gather_combiner_test", "CombineAllGathersDifferentDims",
     "all-gather-combiner", MIB, 256, false, false, true, AG, "2", 2)
/* The dim-keyed default keeps the two dimensions apart (the sidecar's variant note). */
PEER(test_peer_ag_different_dims_by_dim, "all_gather_combiner_test", "CombineAllGathersDifferentDims",
     "all-gather-combiner", MIB, 256, true, false, false, AG, "1,1", 0)
/* Upstream runs this with combine_different_dtypes=false; the Neuron key
 * always holds the element type, so it never combines f32 with s32. */
PEER(test_peer_ag_different_dtypes, "all_gather_combiner_test", "CombineDifferentDtypes",
     "all-gather-combiner", MIB, 256, true, false, false, AG, "1,1", 0)
/* NEURON DELTA: upstream gives 3 -> 2 because allgather1 sits in another
 * sharding domain.  Spec 2: there is no sharding-domain machinery, every
 * domain id is 0, so all three share a key and combine into one. */
PEER(test_peer_ag_two_domains, "all_gather_combiner_test", "CombineFromTwoDomainsWithSameMetadata",
     "all-gather-combiner", MIB, 256, true, false, true, AG, "3", 0)
/* Upstream: one all-gather of five, dims 0 and 1 normalised to 0 (2 bitcasts each). */
PEER(test_peer_ag_many_different_dims, "all_gather_combiner_test", "CombineManyAllGathersDifferentDims",
     "all-gather-combiner", MIB, 256, false, false, true, AG, "5", 4)
PEER(test_peer_ag_many_different_dims_by_dim, "all_gather_combiner_test", "CombineManyAllGathersDifferentDims",
     "all-gather-combiner", MIB, 256, true, false, true, AG, "2,3", 0)
PEER(test_peer_ag_up_to_threshold, "all_gather_combiner_test", "CombineUpToThreshold",
     "all-gather-combiner", 256, 256, true, false, true, AG, "2", 0)
/* One byte less: the same module must not combine (DoNotCombineOverThreshold). */
PEER(test_peer_ag_over_threshold, "all_gather_combiner_test", "CombineUpToThreshold",
     "all-gather-combiner", 255, 256, true, false, false, AG, "1,1", 0)
/* Upstream's combine_while_loops=false is --neuron-fsdp=true here. */
PEER(test_peer_ag_while_loop, "all_gather_combiner_test", "DoNotCombineInWhileLoop",
     "all-gather-combiner", MIB, 256, true, true, false, AG, "1,1", 0)
/* Without the skip the body's f32 and s32 all-gathers still differ in key. */
PEER(test_peer_ag_while_loop_no_skip, "all_gather_combiner_test", "DoNotCombineInWhileLoop",
     "all-gather-combiner", MIB, 256, true, false, false, AG, "1,1", 0)
/* NEURON DELTA: upstream keeps the two apart by sharding domain; every
 * domain id is 0 here (spec 2), so they combine. */
PEER(test_peer_ag_domain, "all_gather_combiner_test", "DomainPreventsCombining",
     "all-gather-combiner", MIB, 256, true, false, true, AG, "2", 0)
PEER(test_peer_ag_replica_groups, "all_gather_combiner_test", "NoDifferentReplicaGroupsCombination",
     "all-gather-combiner", MIB, 256, true, false, false, AG, "1,1", 0)

/* all_reduce_combiner_test */
/* NEURON DELTA: upstream gives 4 -> 2, pairing by sharding domain.  With
 * every domain id 0 all four share a key (f32 add, channel present, {{0}})
 * and combine into one all-reduce of four. */
PEER(test_peer_ar_cross_core, "all_reduce_combiner_test", "CrossCoreAllReduce",
     "all-reduce-combiner", MIB, 256, true, false, true, AR, "4", 0)
PEER(test_peer_ar_cross_shard_and_replica, "all_reduce_combiner_test", "DoNotCombineCrossShardAndCrossReplicaInSPMD",
     "all-reduce-combiner", MIB, 256, true, false, false, AR, "1,1", 0)
PEER(test_peer_ar_control_dependencies, "all_reduce_combiner_test", "DoNotCombineWithControlDependencies",
     "all-reduce-combiner", MIB, 256, true, false, false, AR, "1,1,1", 0)
/* NEURON DELTA: combined here, kept apart by domain upstream (see above). */
PEER(test_peer_ar_domain, "all_reduce_combiner_test", "DomainPreventsCombining",
     "all-reduce-combiner", MIB, 256, true, false, true, AR, "2", 0)
PEER(test_peer_ar_preserves_metadata, "all_reduce_combiner_test", "PreservesMetadata",
     "all-reduce-combiner", MIB, 256, true, false, true, AR, "2", 0)

/* reduce_scatter_combiner_test */
PEER(test_peer_rs_different_dimensions, "reduce_scatter_combiner_test", "DifferentDimensions",
     "reduce-scatter-combiner", 10 * MIB, 256, false, false, true, RS, "4", 4)
/* The Neuron default keys on the scatter dim: one combined op per dim. */
PEER(test_peer_rs_different_dimensions_by_dim, "reduce_scatter_combiner_test", "DifferentDimensions",
     "reduce-scatter-combiner", 10 * MIB, 256, true, false, true, RS, "2,2", 0)
PEER(test_peer_rs_dimensions_and_ranks, "reduce_scatter_combiner_test", "DifferentDimensionsAndRanks",
     "reduce-scatter-combiner", 10 * MIB, 256, false, false, true, RS, "3", 4)
PEER(test_peer_rs_dimensions_and_ranks_by_dim, "reduce_scatter_combiner_test", "DifferentDimensionsAndRanks",
     "reduce-scatter-combiner", 10 * MIB, 256, true, false, true, RS, "1,2", 0)
PEER(test_peer_rs_mismatched, "reduce_scatter_combiner_test", "DoNotCombineMismatched",
     "reduce-scatter-combiner", 10 * MIB, 256, true, false, false, RS, "1,1", 0)
PEER(test_peer_rs_without_reduction_kind, "reduce_scatter_combiner_test", "DoNotCombineWithoutReductionKind",
     "reduce-scatter-combiner", 10 * MIB, 256, true, false, false, RS, "1,1", 0)
/* The threshold is the exact sum of the four result sizes (inclusive). */
PEER(test_peer_rs_high_threshold, "reduce_scatter_combiner_test", "HighThreshold",
     "reduce-scatter-combiner", 201326592, 256, false, false, true, RS, "4", 2)
/* One byte less: the fourth closes the group on bytes. */
PEER(test_peer_rs_high_threshold_minus_one, "reduce_scatter_combiner_test", "HighThreshold",
     "reduce-scatter-combiner", 201326591, 256, false, false, true, RS, "1,3", 2)
PEER(test_peer_rs_high_threshold_by_dim, "reduce_scatter_combiner_test", "HighThreshold",
     "reduce-scatter-combiner", 201326592, 256, true, false, true, RS, "1,3", 0)
PEER(test_peer_rs_simple, "reduce_scatter_combiner_test", "Simple",
     "reduce-scatter-combiner", 10 * MIB, 256, true, false, true, RS, "2", 0)

/* The combined all-reduce carries the first member's metadata (upstream
 * PreservesMetadata); each get-tuple-element keeps its member's. */
static void test_peer_ar_metadata_is_the_first_members(void **state)
{
    (void)state;
    IrModule *m = parse_peer("all_reduce_combiner_test", "PreservesMetadata");
    PassOptions opt;
    pass_options_default(&opt);
    run_pass(m, "all-reduce-combiner", &opt, NULL);
    IrInstr *c = find_instr(m, "all-reduce.combined");
    assert_string_equal(ir_raw_attr_get(c, "metadata"), "{op_type=\"test_type0\" op_name=\"test_name0\"}");
    IrInstr *g = find_instr(m, "all-reduce.1");
    assert_int_equal(g->op, IR_OP_GET_TUPLE_ELEMENT);
    assert_string_equal(ir_raw_attr_get(g, "metadata"), "{op_type=\"test_type1\" op_name=\"test_name1\"}");
    ir_module_free(m);
}

/* NEURON DELTA: upstream's MergeMetadata joins the members' op names and
 * source files ("(op0:op1)", "test.py:42,test.py:50").  The seed names no
 * merge and spec 2 takes attributes from the first member, so the combined
 * op keeps ag0's metadata and each replacement its own member's. */
static void test_peer_merge_metadata_keeps_the_first(void **state)
{
    (void)state;
    IrModule *m = parse_peer("collective_combiner_utils_test", "MergeMetadataMultipleInstructions");
    PassOptions opt;
    pass_options_default(&opt);
    opt.combine_by_dim = false;
    assert_int_equal(run_pass(m, "all-gather-combiner", &opt, NULL), PASS_CHANGED);
    IrInstr *c = find_instr(m, "all-gather.combined");
    assert_int_equal(c->n_operands, 2);
    assert_int_equal(c->lists[IR_LIST_DIMENSIONS].v[0], 0);     /* a tie: the smaller dim */
    assert_string_equal(ir_raw_attr_get(c, "metadata"),
                        "{op_name=\"op0\" source_file=\"test.py\" source_line=42}");
    IrInstr *back = find_instr(m, "ag1");
    assert_int_equal(back->op, IR_OP_TRANSPOSE);
    assert_string_equal(ir_raw_attr_get(back, "metadata"),
                        "{op_name=\"op1\" source_file=\"test.py\" source_line=50}");
    ir_module_free(m);
}

/* ------------------------------------------------------------------ */
/* 2. Keys, reducers, dimensions                                        */

#define ADD_F32 "add {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n\n"

static void test_key_equal_field_by_field(void **state)
{
    (void)state;
    IrModule *m = parse_text("HloModule m, replica_count=4\n\nENTRY e {\n"
                             "  p = f32[4] parameter(0)\n"
                             "  a = f32[8] all-gather(p), replica_groups=[2,2]<=[4], dimensions={0}\n"
                             "  b = f32[8] all-gather(p), replica_groups={{0,1},{2,3}}, dimensions={0}\n"
                             "  c = f32[8] all-gather(p), replica_groups={{0,2},{1,3}}, dimensions={0}\n"
                             "  ROOT t = (f32[8], f32[8], f32[8]) tuple(a, b, c)\n}\n");
    const IrReplicaGroups *iota = &find_instr(m, "a")->info->replica_groups;
    const IrReplicaGroups *explicit = &find_instr(m, "b")->info->replica_groups;
    const IrReplicaGroups *other = &find_instr(m, "c")->info->replica_groups;
    CombineKey k = { .op = IR_OP_ADD, .type = IR_TYPE_F32, .flag0 = true, .has_dim = true, .dim = 1,
                     .groups = iota };
    strcpy(k.tag, "dtype=f32");
    CombineKey same = k;
    same.groups = explicit;                 /* the iota form's expansion */
    assert_true(combine_key_equal(&k, &same));
    CombineKey d = k;
    d.groups = other;
    assert_false(combine_key_equal(&k, &d));
    d = k, d.op = IR_OP_MAXIMUM;
    assert_false(combine_key_equal(&k, &d));
    d = k, d.type = IR_TYPE_BF16;
    assert_false(combine_key_equal(&k, &d));
    d = k, d.domain = 1;
    assert_false(combine_key_equal(&k, &d));
    d = k, d.flag0 = false;
    assert_false(combine_key_equal(&k, &d));
    d = k, d.flag1 = true;
    assert_false(combine_key_equal(&k, &d));
    d = k, d.has_dim = false;
    assert_false(combine_key_equal(&k, &d));
    d = k, d.dim = 0;
    assert_false(combine_key_equal(&k, &d));
    d = k, d.has_channel_flag = true;
    assert_false(combine_key_equal(&k, &d));
    d = k, strcpy(d.tag, "dtype=bf16");
    assert_false(combine_key_equal(&k, &d));
    ir_module_free(m);
}

static IrOpcode reducer_of(const char *comp_text)
{
    char text[1024];
    snprintf(text, sizeof text, "HloModule m\n\n%s\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n", comp_text);
    IrModule *m = parse_text(text);
    IrOpcode op = combine_trivial_reducer(m->computations[0]);
    ir_module_free(m);
    return op;
}

static void test_trivial_reducer(void **state)
{
    (void)state;
    assert_int_equal(reducer_of(ADD_F32), IR_OP_ADD);
    assert_int_equal(reducer_of("r {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
                                "  ROOT m = f32[] minimum(y, x)\n}\n"), IR_OP_MINIMUM);
    assert_int_equal(reducer_of("r {\n  x = pred[] parameter(0)\n  y = pred[] parameter(1)\n"
                                "  ROOT o = pred[] or(x, y)\n}\n"), IR_OP_OR);
    assert_int_equal(reducer_of("r {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
                                "  ROOT d = f32[] subtract(x, y)\n}\n"), IR_OP_COUNT);
    assert_int_equal(reducer_of("r {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
                                "  ROOT d = f32[] add(x, x)\n}\n"), IR_OP_COUNT);
    assert_int_equal(reducer_of("r {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
                                "  c = f32[] constant(1)\n  ROOT d = f32[] add(x, y)\n}\n"), IR_OP_COUNT);
    assert_int_equal(reducer_of("r {\n  x = bf16[] parameter(0)\n  y = bf16[] parameter(1)\n"
                                "  a = f32[] convert(x)\n  b = f32[] convert(y)\n  s = f32[] add(a, b)\n"
                                "  ROOT r = bf16[] convert(s)\n}\n"), IR_OP_COUNT);
}

static void test_most_frequent_dim(void **state)
{
    (void)state;
    IrModule *m = parse_text("HloModule m\n\nENTRY e {\n"
                             "  a = f32[2,4] parameter(0)\n  b = f32[2,4] parameter(1)\n"
                             "  c = f32[4] parameter(2)\n"
                             "  g0 = f32[2,4] all-gather(a), dimensions={1}\n"
                             "  g1 = f32[2,4] all-gather(b), dimensions={0}\n"
                             "  g2 = f32[2,4] all-gather(b), dimensions={1}\n"
                             "  g3 = f32[4] all-gather(c), dimensions={0}\n"
                             "  ROOT t = (f32[2,4], f32[2,4], f32[2,4], f32[4]) tuple(g0, g1, g2, g3)\n}\n");
    IrInstr *g[4] = { find_instr(m, "g0"), find_instr(m, "g1"), find_instr(m, "g2"), find_instr(m, "g3") };
    assert_int_equal(combine_most_frequent_dim(g, 2), 0);      /* 1 and 0 tie: the smaller */
    assert_int_equal(combine_most_frequent_dim(g, 3), 1);      /* 1, 0, 1 */
    IrInstr *clamp[3] = { g[0], g[2], g[3] };                   /* 1, 1 but a rank-1 member */
    assert_int_equal(combine_most_frequent_dim(clamp, 3), 0);
    ir_module_free(m);
}

/* ------------------------------------------------------------------ */
/* 3. The reachability guard                                            */

static PassStats run_ar(IrModule *m)
{
    PassOptions opt;
    pass_options_default(&opt);
    PassStats stats = { 0 };
    run_pass(m, "all-reduce-combiner", &opt, &stats);
    return stats;
}

/* ar1 reaches ar0 through a long chain of negates: split, then ar1 and ar2. */
static void test_guard_long_chain_splits(void **state)
{
    (void)state;
    StrBuf b;
    strbuf_init(&b);
    strbuf_puts(&b, "HloModule m, replica_count=2\n\n" ADD_F32 "ENTRY e {\n"
                    "  p0 = f32[4] parameter(0)\n  p1 = f32[4] parameter(1)\n"
                    "  ar0 = f32[4] all-reduce(p0), replica_groups={{0,1}}, to_apply=add\n"
                    "  n0 = f32[4] negate(ar0)\n");
    for (int i = 1; i < 2000; i++)
        strbuf_printf(&b, "  n%d = f32[4] negate(n%d)\n", i, i - 1);
    strbuf_puts(&b, "  ar1 = f32[4] all-reduce(n1999), replica_groups={{0,1}}, to_apply=add\n"
                    "  ar2 = f32[4] all-reduce(p1), replica_groups={{0,1}}, to_apply=add\n"
                    "  ROOT t = (f32[4], f32[4]) tuple(ar1, ar2)\n}\n");
    IrModule *m = parse_text(b.s);
    strbuf_free(&b);
    PassStats s = run_ar(m);
    assert_int_equal(s.closed[CLOSE_REACHABILITY], 1);
    assert_int_equal(s.groups_formed, 1);
    assert_int_equal(s.singletons, 1);
    IrInstr *c = find_instr(m, "all-reduce.combined");
    assert_string_equal(c->operands[0]->name, "n1999");
    assert_string_equal(c->operands[1]->name, "p1");
    assert_int_equal(find_instr(m, "ar0")->op, IR_OP_ALL_REDUCE);
    ir_module_free(m);
}

/* Independent all-reduces that share an operand are not reachable. */
static void test_guard_shared_operand_is_not_a_dependency(void **state)
{
    (void)state;
    IrModule *m = parse_text("HloModule m, replica_count=2\n\n" ADD_F32 "ENTRY e {\n"
                             "  p = f32[4] parameter(0)\n  x = f32[4] exponential(p)\n"
                             "  a = f32[4] all-reduce(x), replica_groups={{0,1}}, to_apply=add\n"
                             "  b = f32[4] all-reduce(x), replica_groups={{0,1}}, to_apply=add\n"
                             "  c = f32[4] all-reduce(p), replica_groups={{0,1}}, to_apply=add\n"
                             "  ROOT t = (f32[4], f32[4], f32[4]) tuple(a, b, c)\n}\n");
    PassStats s = run_ar(m);
    assert_int_equal(s.closed[CLOSE_REACHABILITY], 0);
    assert_int_equal(find_instr(m, "all-reduce.combined")->n_operands, 3);
    ir_module_free(m);
}

/* b depends on a only through an all-gather (another pass's opcode) and a
 * control edge free path: still reachable. */
static void test_guard_sees_through_other_collectives(void **state)
{
    (void)state;
    IrModule *m = parse_text("HloModule m, replica_count=2\n\n" ADD_F32 "ENTRY e {\n"
                             "  p = f32[4] parameter(0)\n  q = f32[4] parameter(1)\n"
                             "  a = f32[4] all-reduce(p), replica_groups={{0,1}}, to_apply=add\n"
                             "  g = f32[8] all-gather(a), replica_groups={{0,1}}, dimensions={0}\n"
                             "  s = f32[4] slice(g), slice={[0:4]}\n"
                             "  b = f32[4] all-reduce(s), replica_groups={{0,1}}, to_apply=add\n"
                             "  c = f32[4] all-reduce(q), replica_groups={{0,1}}, to_apply=add\n"
                             "  ROOT t = (f32[4], f32[4]) tuple(b, c)\n}\n");
    PassStats s = run_ar(m);
    assert_int_equal(s.closed[CLOSE_REACHABILITY], 1);
    assert_int_equal(s.groups_formed, 1);
    ir_module_free(m);
}

/* Two keys, each group depending on the other's member: plain reachability
 * would combine {a1, a2} and {b0, b1} into a cycle.  The guard treats every
 * group as one node, so b1 (which reaches group A, which reaches b0) closes B. */
static void test_guard_cross_key_cycle(void **state)
{
    (void)state;
    IrModule *m = parse_text("HloModule m, replica_count=2\n\n" ADD_F32
                             "add16 {\n  x = bf16[] parameter(0)\n  y = bf16[] parameter(1)\n"
                             "  ROOT s = bf16[] add(x, y)\n}\n\nENTRY e {\n"
                             "  p0 = f32[8] parameter(0)\n  q0 = bf16[8] parameter(1)\n"
                             "  a1 = f32[8] all-reduce(p0), replica_groups={{0,1}}, to_apply=add\n"
                             "  b0 = bf16[8] all-reduce(q0), replica_groups={{0,1}}, to_apply=add16\n"
                             "  c0 = f32[8] convert(b0)\n"
                             "  a2 = f32[8] all-reduce(c0), replica_groups={{0,1}}, to_apply=add\n"
                             "  c1 = bf16[8] convert(a1)\n"
                             "  b1 = bf16[8] all-reduce(c1), replica_groups={{0,1}}, to_apply=add16\n"
                             "  ROOT t = (f32[8], bf16[8], f32[8], bf16[8]) tuple(a1, b0, a2, b1)\n}\n");
    PassStats s = run_ar(m);
    assert_int_equal(s.closed[CLOSE_REACHABILITY], 1);
    assert_int_equal(s.groups_formed, 1);
    assert_int_equal(s.singletons, 2);
    assert_int_equal(find_instr(m, "b1")->op, IR_OP_ALL_REDUCE);
    ir_module_free(m);
}

/* A closed group still passes dependencies on: x reaches group A's combined
 * op (closed by count), whose member a1 read b0, so b1 must not join b0. */
static void test_guard_through_closed_group(void **state)
{
    (void)state;
    IrModule *m = parse_text("HloModule m, replica_count=2\n\n" ADD_F32
                             "add16 {\n  x = bf16[] parameter(0)\n  y = bf16[] parameter(1)\n"
                             "  ROOT s = bf16[] add(x, y)\n}\n\nENTRY e {\n"
                             "  p0 = f32[8] parameter(0)\n  p1 = f32[8] parameter(1)\n  q0 = bf16[8] parameter(2)\n"
                             "  a0 = f32[8] all-reduce(p0), replica_groups={{0,1}}, to_apply=add\n"
                             "  b0 = bf16[8] all-reduce(q0), replica_groups={{0,1}}, to_apply=add16\n"
                             "  c0 = f32[8] convert(b0)\n"
                             "  a1 = f32[8] all-reduce(c0), replica_groups={{0,1}}, to_apply=add\n"
                             "  a2 = f32[8] all-reduce(p1), replica_groups={{0,1}}, to_apply=add\n"
                             "  c1 = bf16[8] convert(a0)\n"
                             "  b1 = bf16[8] all-reduce(c1), replica_groups={{0,1}}, to_apply=add16\n"
                             "  ROOT t = (f32[8], bf16[8], f32[8], f32[8], bf16[8]) tuple(a0, b0, a1, a2, b1)\n}\n");
    PassOptions opt;
    pass_options_default(&opt);
    opt.combine_threshold_count = 2;
    PassStats s = { 0 };
    run_pass(m, "all-reduce-combiner", &opt, &s);
    assert_int_equal(s.closed[CLOSE_COUNT], 1);             /* {a0, a1} full when a2 comes */
    assert_int_equal(s.closed[CLOSE_REACHABILITY], 1);      /* b1 reaches b0 through {a0, a1} */
    assert_int_equal(find_instr(m, "b0")->op, IR_OP_ALL_REDUCE);
    assert_int_equal(find_instr(m, "b1")->op, IR_OP_ALL_REDUCE);
    ir_module_free(m);
}

/* An instruction bigger than the byte limit is never combined and closes nothing. */
static void test_oversized_instruction_is_skipped(void **state)
{
    (void)state;
    IrModule *m = parse_text("HloModule m, replica_count=2\n\n" ADD_F32 "ENTRY e {\n"
                             "  p = f32[4] parameter(0)\n  q = f32[64] parameter(1)\n"
                             "  a = f32[4] all-reduce(p), replica_groups={{0,1}}, to_apply=add\n"
                             "  big = f32[64] all-reduce(q), replica_groups={{0,1}}, to_apply=add\n"
                             "  b = f32[4] all-reduce(p), replica_groups={{0,1}}, to_apply=add\n"
                             "  ROOT t = (f32[4], f32[64], f32[4]) tuple(a, big, b)\n}\n");
    PassOptions opt;
    pass_options_default(&opt);
    opt.combine_threshold_bytes = 32;
    PassStats s = { 0 };
    run_pass(m, "all-reduce-combiner", &opt, &s);
    assert_int_equal(s.groups_formed, 1);
    assert_int_equal(s.closed[CLOSE_BYTES], 0);
    assert_int_equal(find_instr(m, "big")->op, IR_OP_ALL_REDUCE);
    ir_module_free(m);
}

/* ------------------------------------------------------------------ */
/* 4. Scale                                                             */

static IrInstr *append(IrComputation *c, IrOpcode op, const char *name, IrShape *shape, int n,
                       IrInstr *const *operands)
{
    IrInstr *x = ir_instr_new(c->module, op, name, shape, n, operands);
    ir_computation_append(c, x);
    return x;
}

static IrInstr *all_reduce(IrComputation *c, IrComputation *add, const char *name, IrInstr *x)
{
    IrInstr *ar = append(c, IR_OP_ALL_REDUCE, name, x->shape, 1, &x);
    ar->info->comps[IR_COMP_TO_APPLY] = add;
    return ar;
}

/* chains chains of negate -> all-reduce -> negate -> all-reduce, laid out
 * layer by layer: 4 instructions a chain, 5,000 chains = 20,002 instructions. */
static IrModule *build_chains(int chains, bool scheduled)
{
    IrModule *m = ir_module_new("scale");
    m->is_scheduled = scheduled;
    m->replica_count = (IrOptInt){ true, 2 };
    IrComputation *add = ir_computation_new(m, "add");
    ir_module_insert_computation(m, add, -1);
    IrShape *scalar = ir_shape_new_array(m->arena, IR_TYPE_F32, 0, NULL);
    IrInstr *x = append(add, IR_OP_PARAMETER, "x", scalar, 0, NULL);
    IrInstr *y = ir_instr_new(m, IR_OP_PARAMETER, "y", scalar, 0, NULL);
    y->info->parameter_number = 1;
    ir_computation_append(add, y);
    add->root = append(add, IR_OP_ADD, "s", scalar, 2, (IrInstr *[]){ x, y });
    IrComputation *e = ir_computation_new(m, "main");
    ir_module_insert_computation(m, e, -1);
    m->entry = e;
    e->is_entry = true;
    IrShape *vec = ir_shape_new_array(m->arena, IR_TYPE_F32, 1, (int64_t[]){ 8 });
    IrInstr *p = append(e, IR_OP_PARAMETER, "p", vec, 0, NULL);
    IrInstr **last = xmalloc((size_t)chains * sizeof *last);
    char name[64];
    for (int c = 0; c < chains; c++)
        last[c] = p;
    for (int layer = 0; layer < 2; layer++)
        for (int c = 0; c < chains; c++) {
            snprintf(name, sizeof name, "n%d_%d", layer, c);
            IrInstr *n = append(e, IR_OP_NEGATE, name, vec, 1, &last[c]);
            snprintf(name, sizeof name, "ar%d_%d", layer, c);
            last[c] = all_reduce(e, add, name, n);
        }
    IrShape **elems = xmalloc((size_t)chains * sizeof *elems);
    for (int c = 0; c < chains; c++)
        elems[c] = vec;
    e->root = append(e, IR_OP_TUPLE, "t", ir_shape_new_tuple(m->arena, chains, elems), chains, last);
    free(elems);
    free(last);
    return m;
}

static void run_scale(bool scheduled)
{
    IrModule *m = build_chains(5000, scheduled);
    assert_true(m->entry->n_instrs >= 20000);
    expect_verifies(m);
    PassStats s = run_ar(m);
    assert_true(s.groups_formed > 0);
    int left = count_op(m, IR_OP_ALL_REDUCE);
    assert_true(left < 10000);
    /* Every all-reduce is either still there or an operand of a combined one. */
    int operands = 0;
    for (int i = 0; i < m->entry->n_instrs; i++)
        if (m->entry->instrs[i]->op == IR_OP_ALL_REDUCE)
            operands += m->entry->instrs[i]->n_operands;
    assert_int_equal(operands, 10000);
    ir_module_free(m);
}

/* Chain by chain, the post order puts each chain's two all-reduces next to
 * each other: reachability closes a group at every chain. */
static void test_scale_20000_instructions_chain_order(void **state)
{
    (void)state;
    run_scale(false);
}

/* Layer by layer (a schedule): groups fill up to the count limit. */
static void test_scale_20000_instructions_scheduled(void **state)
{
    (void)state;
    run_scale(true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_peer_ag_combine_all_gathers),
        cmocka_unit_test(test_peer_ag_combine_by_dim),
        cmocka_unit_test(test_peer_ag_different_dims),
        cmocka_unit_test(test_peer_ag_different_dims_by_dim),
        cmocka_unit_test(test_peer_ag_different_dtypes),
        cmocka_unit_test(test_peer_ag_two_domains),
        cmocka_unit_test(test_peer_ag_many_different_dims),
        cmocka_unit_test(test_peer_ag_many_different_dims_by_dim),
        cmocka_unit_test(test_peer_ag_up_to_threshold),
        cmocka_unit_test(test_peer_ag_over_threshold),
        cmocka_unit_test(test_peer_ag_while_loop),
        cmocka_unit_test(test_peer_ag_while_loop_no_skip),
        cmocka_unit_test(test_peer_ag_domain),
        cmocka_unit_test(test_peer_ag_replica_groups),
        cmocka_unit_test(test_peer_ar_cross_core),
        cmocka_unit_test(test_peer_ar_cross_shard_and_replica),
        cmocka_unit_test(test_peer_ar_control_dependencies),
        cmocka_unit_test(test_peer_ar_domain),
        cmocka_unit_test(test_peer_ar_preserves_metadata),
        cmocka_unit_test(test_peer_ar_metadata_is_the_first_members),
        cmocka_unit_test(test_peer_rs_different_dimensions),
        cmocka_unit_test(test_peer_rs_different_dimensions_by_dim),
        cmocka_unit_test(test_peer_rs_dimensions_and_ranks),
        cmocka_unit_test(test_peer_rs_dimensions_and_ranks_by_dim),
        cmocka_unit_test(test_peer_rs_mismatched),
        cmocka_unit_test(test_peer_rs_without_reduction_kind),
        cmocka_unit_test(test_peer_rs_high_threshold),
        cmocka_unit_test(test_peer_rs_high_threshold_minus_one),
        cmocka_unit_test(test_peer_rs_high_threshold_by_dim),
        cmocka_unit_test(test_peer_rs_simple),
        cmocka_unit_test(test_peer_merge_metadata_keeps_the_first),
        cmocka_unit_test(test_key_equal_field_by_field),
        cmocka_unit_test(test_trivial_reducer),
        cmocka_unit_test(test_most_frequent_dim),
        cmocka_unit_test(test_guard_long_chain_splits),
        cmocka_unit_test(test_guard_shared_operand_is_not_a_dependency),
        cmocka_unit_test(test_guard_sees_through_other_collectives),
        cmocka_unit_test(test_guard_cross_key_cycle),
        cmocka_unit_test(test_guard_through_closed_group),
        cmocka_unit_test(test_oversized_instruction_is_skipped),
        cmocka_unit_test(test_scale_20000_instructions_chain_order),
        cmocka_unit_test(test_scale_20000_instructions_scheduled),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
