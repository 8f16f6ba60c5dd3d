/* test_local.c: the regions of hlo-check --local (src/check/local_values.c
 * and local_regions.c), under mpirun at 2, 3, 4 and 8 ranks (it runs
 * regions over MPI).
 * What each test pins: which instructions a region holds, what becomes its
 * inputs, and that checking the regions catches a broken rewrite wherever
 * it is (the soundness claim: a rewrite that changes any value the module
 * returns leaves some region whose two sides differ). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "check.h"
#include "coll.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static Coll *coll;

static IrModule *parse(const char *text)
{
    Error err = { 0 };
    IrModule *m = ir_parse_module(text, strlen(text), "t.hlo", &err);
    if (!m || !ir_verify_module(m, &err)) {
        error_print(&err, stderr);
        fail_msg("parse: %s", err.msg);
    }
    return m;
}

static int regions_of(const char *before, const char *after, CheckRegion **r, IrModule **b, IrModule **a)
{
    Error err = { 0 };
    *b = parse(before);
    *a = parse(after);
    int n = -1;
    if (!check_find_regions(*b, *a, r, &n, &err)) {
        error_print(&err, stderr);
        fail_msg("regions: %s", err.msg);
    }
    return n;
}

/* Are the region's two sides equivalent on a world of one (2 trials)? */
static bool region_equivalent(const CheckRegion *r)
{
    CheckOptions opt;
    check_options_default(&opt);
    opt.trials = 2;
    CheckReport rep;
    Error err = { 0 };
    if (!check_modules(coll, r->before, r->after, &opt, &rep, &err)) {
        error_print(&err, stderr);
        fail_msg("check: %s", err.msg);
    }
    bool eq = rep.equivalent;
    check_report_free(&rep);
    return eq;
}

static bool has_instr(const IrModule *m, const char *name)
{
    return ir_computation_find(m->entry, name) != NULL;
}

#define ADD "%add { x = f32[] parameter(0)\n y = f32[] parameter(1)\n ROOT s = f32[] add(x, y) }\n"

/* The two all-reduces a combiner merges, consumed downstream. */
#define PAIR_BEFORE \
    "HloModule m\n" ADD "ENTRY e {\n  p = f32[8] parameter(0)\n  q = f32[8] parameter(1)\n" \
    "  n = f32[8] negate(p)\n  e = f32[8] exponential(q)\n" \
    "  a0 = f32[8] all-reduce(n), replica_groups={}, to_apply=%add\n" \
    "  a1 = f32[8] all-reduce(e), replica_groups={}, to_apply=%add\n" \
    "  m = f32[8] multiply(a0, a1)\n  ROOT r = f32[8] add(m, p)\n}\n"
#define PAIR_AFTER(i0, i1) \
    "HloModule m\n" ADD "ENTRY e {\n  p = f32[8] parameter(0)\n  q = f32[8] parameter(1)\n" \
    "  n = f32[8] negate(p)\n  e = f32[8] exponential(q)\n" \
    "  c = (f32[8], f32[8]) all-reduce(n, e), replica_groups={}, to_apply=%add\n" \
    "  a0 = f32[8] get-tuple-element(c), index=" i0 "\n  a1 = f32[8] get-tuple-element(c), index=" i1 "\n" \
    "  m = f32[8] multiply(a0, a1)\n  ROOT r = f32[8] add(m, p)\n}\n"

static void test_identical_modules_have_no_region(void **state)
{
    (void)state;
    CheckRegion *r;
    IrModule *b, *a;
    assert_int_equal(regions_of(PAIR_BEFORE, PAIR_BEFORE, &r, &b, &a), 0);
    check_regions_free(r, 0);
    ir_module_free(b);
    ir_module_free(a);
}

static void test_combined_collectives_are_one_region(void **state)
{
    (void)state;
    CheckRegion *r;
    IrModule *b, *a;
    int n = regions_of(PAIR_BEFORE, PAIR_AFTER("0", "1"), &r, &b, &a);
    assert_int_equal(n, 1);
    /* The collectives and their tuple pieces only: what feeds them (n, e)
     * are its inputs, what reads them (m, r) is the same in both. */
    assert_int_equal(r[0].instrs[0], 2);
    assert_int_equal(r[0].instrs[1], 3);
    assert_int_equal(r[0].n_inputs, 2);
    assert_int_equal(r[0].n_outputs, 2);
    assert_true(has_instr(r[0].before, "a0") && has_instr(r[0].before, "a1"));
    assert_false(has_instr(r[0].before, "m") || has_instr(r[0].after, "m") || has_instr(r[0].after, "n"));
    assert_true(has_instr(r[0].after, "c"));
    assert_int_equal(r[0].before->entry->n_params, 2);
    assert_true(region_equivalent(&r[0]));
    check_regions_free(r, n);
    ir_module_free(b);
    ir_module_free(a);
}

/* A combiner that swaps its outputs: the region holds the mistake. */
static void test_swapped_outputs_differ_in_the_region(void **state)
{
    (void)state;
    CheckRegion *r;
    IrModule *b, *a;
    int n = regions_of(PAIR_BEFORE, PAIR_AFTER("1", "0"), &r, &b, &a);
    assert_int_equal(n, 1);
    assert_false(region_equivalent(&r[0]));
    check_regions_free(r, n);
    ir_module_free(b);
    ir_module_free(a);
}

/* A rewrite that changes an ordinary op far from any collective is a
 * region too, and differs there. */
static void test_a_change_anywhere_is_a_region(void **state)
{
    (void)state;
    static const char broken[] =
        "HloModule m\n" ADD "ENTRY e {\n  p = f32[8] parameter(0)\n  q = f32[8] parameter(1)\n"
        "  n = f32[8] negate(p)\n  e = f32[8] exponential(q)\n"
        "  c = (f32[8], f32[8]) all-reduce(n, e), replica_groups={}, to_apply=%add\n"
        "  a0 = f32[8] get-tuple-element(c), index=0\n  a1 = f32[8] get-tuple-element(c), index=1\n"
        "  m = f32[8] multiply(a0, a1)\n  ROOT r = f32[8] subtract(m, p)\n}\n";
    CheckRegion *r;
    IrModule *b, *a;
    int n = regions_of(PAIR_BEFORE, broken, &r, &b, &a);
    /* The roots differ, and nothing below them was matched from above: one
     * region from the root up to the inputs, which differs. */
    assert_int_equal(n, 1);
    assert_true(has_instr(r[0].after, "r") && has_instr(r[0].after, "c"));
    assert_false(region_equivalent(&r[0]));
    check_regions_free(r, n);
    ir_module_free(b);
    ir_module_free(a);
}

/* A loop whose body the rewrite changed: the region lies in the body, and
 * the loop and what reads its result stay out of every region. */
#define LOOP(body_collectives)                                                                                   \
    "HloModule m\n" ADD                                                                                          \
    "%cond (s: (s32[], f32[4], f32[4])) -> pred[] {\n  s = (s32[], f32[4], f32[4]) parameter(0)\n"               \
    "  i = s32[] get-tuple-element(s), index=0\n  k = s32[] constant(3)\n"                                      \
    "  ROOT lt = pred[] compare(i, k), direction=LT\n}\n"                                                        \
    "%body (s: (s32[], f32[4], f32[4])) -> (s32[], f32[4], f32[4]) {\n  s = (s32[], f32[4], f32[4]) parameter(0)\n" \
    "  i = s32[] get-tuple-element(s), index=0\n  x = f32[4] get-tuple-element(s), index=1\n"                    \
    "  y = f32[4] get-tuple-element(s), index=2\n  one = s32[] constant(1)\n  j = s32[] add(i, one)\n"           \
    body_collectives "  ROOT t = (s32[], f32[4], f32[4]) tuple(j, x2, y2)\n}\n"                                  \
    "ENTRY e {\n  p = f32[4] parameter(0)\n  z = s32[] constant(0)\n  t = (s32[], f32[4], f32[4]) tuple(z, p, p)\n" \
    "  w = (s32[], f32[4], f32[4]) while(t), condition=%cond, body=%body\n"                                      \
    "  o = f32[4] get-tuple-element(w), index=1\n  ROOT d = f32[4] multiply(o, o)\n}\n"

static void test_a_changed_loop_body_is_its_own_pair(void **state)
{
    (void)state;
    static const char before[] = LOOP(
        "  x2 = f32[4] all-reduce(x), replica_groups={}, to_apply=%add\n"
        "  y2 = f32[4] all-reduce(y), replica_groups={}, to_apply=%add\n");
    static const char after[] = LOOP(
        "  c = (f32[4], f32[4]) all-reduce(x, y), replica_groups={}, to_apply=%add\n"
        "  x2 = f32[4] get-tuple-element(c), index=0\n  y2 = f32[4] get-tuple-element(c), index=1\n");
    CheckRegion *r;
    IrModule *b, *a;
    int n = regions_of(before, after, &r, &b, &a);
    assert_int_equal(n, 1);
    assert_non_null(strstr(r[0].where, "body"));
    assert_int_equal(r[0].instrs[0], 2);
    assert_int_equal(r[0].instrs[1], 3);
    assert_true(region_equivalent(&r[0]));
    check_regions_free(r, n);
    ir_module_free(b);
    ir_module_free(a);
}

/* A loop counter read by a region enters it as a parameter drawn from the
 * values the loop gives it; the arithmetic on it stays inside. */
#define COUNTED(use)                                                                                             \
    "HloModule m\n"                                                                                              \
    "%cond (s: (s32[], f32[6,4])) -> pred[] {\n  s = (s32[], f32[6,4]) parameter(0)\n"                           \
    "  i = s32[] get-tuple-element(s), index=0\n  n = s32[] constant(5)\n"                                       \
    "  ROOT lt = pred[] compare(i, n), direction=LT\n}\n"                                                        \
    "%body (s: (s32[], f32[6,4])) -> (s32[], f32[6,4]) {\n  s = (s32[], f32[6,4]) parameter(0)\n"                \
    "  i = s32[] get-tuple-element(s), index=0\n  w = f32[6,4] get-tuple-element(s), index=1\n"                 \
    "  one = s32[] constant(1)\n  z = s32[] constant(0)\n" use                                                  \
    "  r = f32[1,4] dynamic-slice(w, k, z), dynamic_slice_sizes={1,4}\n"                                         \
    "  u = f32[6,4] dynamic-update-slice(w, r, z, z)\n  j = s32[] add(i, one)\n"                                \
    "  ROOT t = (s32[], f32[6,4]) tuple(j, u)\n}\n"                                                              \
    "ENTRY e {\n  p = f32[6,4] parameter(0)\n  start = s32[] constant(2)\n"                                       \
    "  t = (s32[], f32[6,4]) tuple(start, p)\n"                                                                  \
    "  ROOT w = (s32[], f32[6,4]) while(t), condition=%cond, body=%body\n}\n"

static void test_loop_counters_keep_their_range(void **state)
{
    (void)state;
    static const char before[] = COUNTED("  k = s32[] add(i, one)\n");
    static const char after[] = COUNTED("  mone = s32[] constant(-1)\n  k = s32[] subtract(i, mone)\n");
    CheckRegion *r;
    IrModule *b, *a;
    int n = regions_of(before, after, &r, &b, &a);
    assert_int_equal(n, 1);
    assert_non_null(strstr(r[0].where, "body"));
    /* The region is the offset, i + 1 against i - (-1): its one input is
     * the counter i, in [2, 5); the constants stay inside. */
    assert_int_equal(r[0].n_inputs, 1);
    const IrInstr *p = r[0].after->entry->params[0];
    int64_t lo, hi;
    assert_true(check_param_range(p, &lo, &hi));
    assert_int_equal(lo, 2);
    assert_int_equal(hi, 5);
    bool seen[3] = { false };
    for (uint64_t seed = 0; seed < 64; seed++) {
        Error err = { 0 };
        Value *v = check_random_input(r[0].after, 0, 0, seed, CHECK_DIST_UNIFORM, &err);
        int32_t x = *(const int32_t *)v->data;
        assert_true(x >= 2 && x < 5);
        seen[x - 2] = true;
        value_release(v);
    }
    assert_true(seen[0] && seen[1] && seen[2]);
    assert_true(region_equivalent(&r[0]));
    check_regions_free(r, n);
    ir_module_free(b);
    ir_module_free(a);
    /* The same loop as i <= 4: the same values, [2, 5). */
    char *le[2] = { strdup(before), strdup(after) };
    for (int s = 0; s < 2; s++) {
        char *at = strstr(le[s], "constant(5)");
        at[strlen("constant(")] = '4';
        at = strstr(le[s], "direction=LT");
        at[strlen("direction=L")] = 'E';
    }
    n = regions_of(le[0], le[1], &r, &b, &a);
    assert_int_equal(n, 1);
    assert_true(check_param_range(r[0].after->entry->params[0], &lo, &hi));
    assert_int_equal(lo, 2);
    assert_int_equal(hi, 5);
    check_regions_free(r, n);
    ir_module_free(b);
    ir_module_free(a);
    free(le[0]);
    free(le[1]);
}

/* Index arithmetic on partition-id stays in the region (its value and its
 * range), the data it indexes comes in as an input. */
static void test_parameter_free_inputs_stay_inside(void **state)
{
    (void)state;
#define DS(op)                                                                                              \
    "HloModule m\n" ADD "ENTRY e {\n  p = f32[8] parameter(0)\n  id = u32[] partition-id()\n" \
    "  two = u32[] constant(2)\n  off = u32[] multiply(id, two)\n"                                            \
    "  s = f32[2] dynamic-slice(p, off), dynamic_slice_sizes={2}\n" op "}\n"
    static const char before[] = DS("  ROOT r = f32[2] all-reduce(s), replica_groups={}, to_apply=%add\n");
    static const char after[] = DS("  n = f32[2] negate(s)\n  ROOT r = f32[2] negate(n)\n");
    CheckRegion *r;
    IrModule *b, *a;
    int n = regions_of(before, after, &r, &b, &a);
    assert_int_equal(n, 1);
    assert_int_equal(r[0].n_inputs, 1);          /* s; not off, two or id */
    assert_false(has_instr(r[0].before, "off"));
    assert_true(r[0].device_ids == false);       /* s is an input: nothing of the ids is read */
    check_regions_free(r, n);
    ir_module_free(b);
    ir_module_free(a);
    static const char before2[] = DS("  ROOT r = f32[2] all-reduce(s), replica_groups={}, to_apply=%add\n");
    static const char after2[] =
        "HloModule m\n" ADD "ENTRY e {\n  p = f32[8] parameter(0)\n  id = u32[] partition-id()\n"
        "  two = u32[] constant(2)\n  off = u32[] multiply(id, two)\n  one = u32[] constant(1)\n"
        "  off1 = u32[] add(off, one)\n  s = f32[2] dynamic-slice(p, off1), dynamic_slice_sizes={2}\n"
        "  ROOT r = f32[2] all-reduce(s), replica_groups={}, to_apply=%add\n}\n";
    n = regions_of(before2, after2, &r, &b, &a);
    /* The slices and the all-reduces match; the offsets are the output
     * pair, and their region is all index arithmetic on the partition id:
     * no free input at all. */
    assert_int_equal(n, 1);
    assert_true(has_instr(r[0].after, "off1") && has_instr(r[0].after, "off") && has_instr(r[0].after, "id"));
    assert_false(has_instr(r[0].after, "s"));
    assert_int_equal(r[0].n_inputs, 0);
    assert_true(r[0].device_ids);
    assert_false(region_equivalent(&r[0]));      /* an off-by-one slice: caught in the region */
    check_regions_free(r, n);
    ir_module_free(b);
    ir_module_free(a);
}

/* One group stands for all only when every collective of the region is on
 * the same groups covering every device, and no device id is read. */
static void test_one_group_stands_for_all(void **state)
{
    (void)state;
#define GROUPS(g1, g2)                                                                                  \
    "HloModule m, replica_count=8\n" ADD "ENTRY e {\n  p = f32[8] parameter(0)\n  q = f32[8] parameter(1)\n" \
    "  a0 = f32[8] all-reduce(p), replica_groups=" g1 ", to_apply=%add\n"                                \
    "  a1 = f32[8] all-reduce(q), replica_groups=" g2 ", to_apply=%add\n"                                \
    "  ROOT t = (f32[8], f32[8]) tuple(a0, a1)\n}\n"
#define GROUPS_AFTER(g)                                                                                 \
    "HloModule m, replica_count=8\n" ADD "ENTRY e {\n  p = f32[8] parameter(0)\n  q = f32[8] parameter(1)\n" \
    "  c = (f32[8], f32[8]) all-reduce(p, q), replica_groups=" g ", to_apply=%add\n"                     \
    "  a0 = f32[8] get-tuple-element(c), index=0\n  a1 = f32[8] get-tuple-element(c), index=1\n"         \
    "  ROOT t = (f32[8], f32[8]) tuple(a0, a1)\n}\n"
    CheckRegion *r;
    IrModule *b, *a;
    int n = regions_of(GROUPS("[4,2]<=[2,4]T(1,0)", "[4,2]<=[2,4]T(1,0)"), GROUPS_AFTER("[4,2]<=[2,4]T(1,0)"), &r, &b, &a);
    assert_int_equal(n, 1);
    assert_int_equal(r[0].group_size, 2);
    Error err = { 0 };
    assert_true(check_region_one_group(&r[0], &err));
    assert_int_equal(r[0].before->replica_count.v, 2);
    assert_int_equal(check_module_devices(r[0].after, 1), 2);
    check_regions_free(r, n);
    ir_module_free(b);
    ir_module_free(a);
    /* groups that differ between the collectives: no */
    n = regions_of(GROUPS("{{0,1},{2,3},{4,5},{6,7}}", "{{0,2},{1,3},{4,6},{5,7}}"),
                   GROUPS_AFTER("{{0,1},{2,3},{4,5},{6,7}}"), &r, &b, &a);
    assert_int_equal(n, 1);
    assert_int_equal(r[0].group_size, 0);
    check_regions_free(r, n);
    ir_module_free(b);
    ir_module_free(a);
}

/* Constants over 4 kB are keyed by hashes of their bytes: one element
 * changed is a region; the same values are shared; elided ones never are. */
static char *big_constant_module(int changed, bool elided)
{
    size_t cap = 64 * 1024, n = 0;
    char *t = malloc(cap);
    n += (size_t)snprintf(t + n, cap - n, "HloModule m\nENTRY e {\n  p = f32[1100] parameter(0)\n  c = f32[1100] constant(");
    if (elided) {
        n += (size_t)snprintf(t + n, cap - n, "{...}");
    } else {
        n += (size_t)snprintf(t + n, cap - n, "{");
        for (int i = 0; i < 1100; i++)
            n += (size_t)snprintf(t + n, cap - n, "%s%d", i ? ", " : "", i == changed ? -1 : i);
        n += (size_t)snprintf(t + n, cap - n, "}");
    }
    snprintf(t + n, cap - n, ")\n  ROOT r = f32[1100] add(p, c)\n}\n");
    return t;
}

static void test_big_constants_by_their_bytes(void **state)
{
    (void)state;
    char *same = big_constant_module(-1, false), *other = big_constant_module(1000, false);
    char *elided = big_constant_module(-1, true);
    CheckRegion *r;
    IrModule *b, *a;
    assert_int_equal(regions_of(same, same, &r, &b, &a), 0);
    check_regions_free(r, 0);
    ir_module_free(b);
    ir_module_free(a);
    int n = regions_of(same, other, &r, &b, &a);
    assert_int_equal(n, 1);
    assert_false(region_equivalent(&r[0]));
    check_regions_free(r, n);
    ir_module_free(b);
    ir_module_free(a);
    n = regions_of(elided, elided, &r, &b, &a);
    assert_int_equal(n, 1);         /* the same text, but nothing says the values are */
    check_regions_free(r, n);
    ir_module_free(b);
    ir_module_free(a);
    free(same);
    free(other);
    free(elided);
}

/* Modules over two entry parameters p, q: f32[16]; body is the rest. */
#define PQ(body) \
    "HloModule m\nENTRY e {\n  p = f32[16] parameter(0)\n  q = f32[16] parameter(1)\n" body "}\n"

/* Every region of the pair builds and verifies, and the regions decide
 * the pair: some region differs when want_differ, none when not. */
static void regions_decide(const char *before, const char *after, bool want_differ)
{
    CheckRegion *r;
    IrModule *b, *a;
    int n = regions_of(before, after, &r, &b, &a);
    assert_true(n >= 1);
    bool differ = false;
    for (int i = 0; i < n; i++)
        differ |= !region_equivalent(&r[i]);
    if (differ != want_differ)
        fail_msg("regions %s, expected %s:\n%s\nagainst\n%s", differ ? "differ" : "agree",
                 want_differ ? "a difference" : "none", before, after);
    check_regions_free(r, n);
    ir_module_free(b);
    ir_module_free(a);
}

/* Swapped operands that are entry parameters: the output pairs are the
 * parameters themselves, which enter the region as inputs (the region once
 * kept the parameter instructions and did not verify). */
static void test_swapped_parameters_are_a_region(void **state)
{
    (void)state;
    static const char *const non_commutative[] = { "subtract", "divide", "power", "atan2", "remainder" };
    for (size_t i = 0; i < sizeof non_commutative / sizeof *non_commutative; i++) {
        char b[512], a[512];
        snprintf(b, sizeof b, PQ("  ROOT r = f32[16] %s(p, q)\n"), non_commutative[i]);
        snprintf(a, sizeof a, PQ("  ROOT r = f32[16] %s(q, p)\n"), non_commutative[i]);
        regions_decide(b, a, true);
    }
    /* add(p, q) against add(q, p) gives the same regions: they differ on
     * free inputs, and hlo-check then decides on the whole pair
     * (scripts/test_checker.sh). */
}

/* The value numbering keeps operand order: subtract(e, n) is not
 * subtract(n, e), though e and n are computed alike in both. */
static void test_operand_order_is_kept(void **state)
{
    (void)state;
#define SWAP(x, y) PQ("  e = f32[16] exponential(p)\n  n = f32[16] negate(q)\n  ROOT r = f32[16] subtract(" x ", " y ")\n")
    regions_decide(SWAP("e", "n"), SWAP("n", "e"), true);
#undef SWAP
}

/* A root that is a parameter, regions with no instruction left on either
 * side, and a region that is the whole module. */
static void test_regions_of_parameters_and_whole_modules(void **state)
{
    (void)state;
    /* The root is the parameter itself on one side. */
    regions_decide(PQ("  ROOT t = (f32[16], f32[16]) tuple(p, q)\n"),
                   PQ("  n = f32[16] negate(p)\n  m = f32[16] negate(n)\n  ROOT t = (f32[16], f32[16]) tuple(m, q)\n"),
                   false);
    regions_decide(PQ("  ROOT t = (f32[16], f32[16]) tuple(p, q)\n"),
                   PQ("  n = f32[16] negate(p)\n  ROOT t = (f32[16], f32[16]) tuple(n, q)\n"), true);
    /* Nothing computed on either side: the outputs are swapped inputs. */
    regions_decide(PQ("  ROOT t = (f32[16], f32[16]) tuple(p, q)\n"), PQ("  ROOT t = (f32[16], f32[16]) tuple(q, p)\n"),
                   true);
    regions_decide(PQ("  ROOT t = (f32[16], f32[16]) tuple(p, p)\n"), PQ("  ROOT t = (f32[16], f32[16]) tuple(p, q)\n"),
                   true);
    /* The whole module on both sides. */
    regions_decide(PQ("  a = f32[16] add(p, q)\n  ROOT m = f32[16] multiply(a, a)\n"),
                   PQ("  a = f32[16] subtract(p, q)\n  ROOT m = f32[16] multiply(a, p)\n"), true);
}

/* rng draws are not functions of their operands: the same text in both
 * modules is no evidence of the same values, so it is a region. */
static void test_rng_is_never_shared(void **state)
{
    (void)state;
    static const char m[] = PQ("  lo = f32[] constant(0)\n  hi = f32[] constant(1)\n"
                               "  g = f32[16] rng(lo, hi), distribution=rng_uniform\n  ROOT r = f32[16] add(g, p)\n");
    CheckRegion *r;
    IrModule *b, *a;
    int n = regions_of(m, m, &r, &b, &a);
    assert_int_equal(n, 1);
    assert_true(has_instr(r[0].before, "g"));
    check_regions_free(r, n);
    ir_module_free(b);
    ir_module_free(a);
}

/* check_local, the library's --local, on a pair: its counts, verdict and
 * whether it took the whole pair's word. */
static CheckLocal local_of(const char *before, const char *after, int region, int64_t max_memory)
{
    IrModule *b = parse(before), *a = parse(after);
    CheckOptions co;
    check_options_default(&co);
    co.trials = 2;
    co.max_memory = max_memory;
    CheckLocalOptions lo = { .region = region, .max_memory_given = max_memory != 0, .before_name = "b",
                             .after_name = "a" };
    CheckLocal l;
    Error err = { 0 };
    if (!check_local(coll, b, a, &co, &lo, &l, &err)) {
        error_print(&err, stderr);
        fail_msg("check_local: %s", err.msg);
    }
    assert_false(l.stopped);
    ir_module_free(b);
    ir_module_free(a);
    return l;
}

#define SUB_BEFORE \
    "HloModule m\n" ADD "ENTRY e {\n  p = f32[8] parameter(0)\n  q = f32[8] parameter(1)\n" \
    "  a0 = f32[8] all-reduce(p), replica_groups={}, to_apply=%add\n" \
    "  a1 = f32[8] all-reduce(q), replica_groups={}, to_apply=%add\n" \
    "  ROOT m = f32[8] subtract(a0, a1)\n}\n"
#define SUB_AFTER(i0, i1) \
    "HloModule m\n" ADD "ENTRY e {\n  p = f32[8] parameter(0)\n  q = f32[8] parameter(1)\n" \
    "  c = (f32[8], f32[8]) all-reduce(p, q), replica_groups={}, to_apply=%add\n" \
    "  a0 = f32[8] get-tuple-element(c), index=" i0 "\n  a1 = f32[8] get-tuple-element(c), index=" i1 "\n" \
    "  ROOT m = f32[8] subtract(a0, a1)\n}\n"

/* check_local on pairs whose outcome is known, one row each: the counts of
 * regions by verdict, whether the whole pair was taken, and the code. */
static void test_check_local_verdicts(void **state)
{
    (void)state;
    static const struct {
        const char *why, *before, *after;
        int region;
        int64_t max_memory;
        int equivalent, differ, not_run;
        bool whole_checked;
        int code;
    } rows[] = {
        { "a faithful combine: one region, equivalent, no need of the whole pair", PAIR_BEFORE,
          PAIR_AFTER("0", "1"), 0, 0, 1, 0, 0, false, 0 },
        /* The region differs on free inputs; the module's own values never
         * show it (a0 * a1 = a1 * a0), so the whole pair decides. */
        { "swapped outputs feeding a multiply", PAIR_BEFORE, PAIR_AFTER("1", "0"), 0, 0, 0, 1, 0, true, 0 },
        { "swapped outputs feeding a subtract", SUB_BEFORE, SUB_AFTER("1", "0"), 0, 0, 0, 1, 0, true, 1 },
        /* The other regions were not checked, so the whole pair is not
         * taken: DIFFERENT on free inputs. */
        { "--region=1 of a differing pair", SUB_BEFORE, SUB_AFTER("1", "0"), 1, 0, 0, 1, 0, false, 1 },
        /* Nothing fits: not run, and never called equivalent. */
        { "a limit of one byte", SUB_BEFORE, SUB_AFTER("1", "0"), 0, 1, 0, 0, 1, false, 2 },
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        CheckLocal l = local_of(rows[i].before, rows[i].after, rows[i].region, rows[i].max_memory);
        if (l.n_regions != 1 || l.equivalent != rows[i].equivalent || l.differ != rows[i].differ ||
            l.not_run != rows[i].not_run || l.precision != 0 || l.whole_checked != rows[i].whole_checked ||
            l.code != rows[i].code)
            fail_msg("%s: %d regions: %d equivalent, %d differ, %d not run, %d precision, whole %d, code %d",
                     rows[i].why, l.n_regions, l.equivalent, l.differ, l.not_run, l.precision, l.whole_checked,
                     l.code);
        if (l.whole_checked)
            assert_int_equal(l.whole.equivalent, l.code == 0);
        check_local_free(&l);
    }
}

/* --region past the last region is an error on every rank alike. */
static void test_check_local_region_out_of_range(void **state)
{
    (void)state;
    IrModule *b = parse(SUB_BEFORE), *a = parse(SUB_AFTER("0", "1"));
    CheckOptions co;
    check_options_default(&co);
    CheckLocalOptions lo = { .region = 2 };
    CheckLocal l;
    Error err = { 0 };
    assert_false(check_local(coll, b, a, &co, &lo, &l, &err));
    assert_int_equal(err.code, ERR_MISMATCH);
    assert_non_null(strstr(err.msg, "--region=2"));
    ir_module_free(b);
    ir_module_free(a);
}

int main(int argc, char **argv)
{
    coll = coll_init(&argc, &argv);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_identical_modules_have_no_region),
        cmocka_unit_test(test_combined_collectives_are_one_region),
        cmocka_unit_test(test_swapped_outputs_differ_in_the_region),
        cmocka_unit_test(test_a_change_anywhere_is_a_region),
        cmocka_unit_test(test_a_changed_loop_body_is_its_own_pair),
        cmocka_unit_test(test_loop_counters_keep_their_range),
        cmocka_unit_test(test_parameter_free_inputs_stay_inside),
        cmocka_unit_test(test_one_group_stands_for_all),
        cmocka_unit_test(test_big_constants_by_their_bytes),
        cmocka_unit_test(test_swapped_parameters_are_a_region),
        cmocka_unit_test(test_operand_order_is_kept),
        cmocka_unit_test(test_regions_of_parameters_and_whole_modules),
        cmocka_unit_test(test_rng_is_never_shared),
        cmocka_unit_test(test_check_local_verdicts),
        cmocka_unit_test(test_check_local_region_out_of_range),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    coll_finish(coll, rc);
}
