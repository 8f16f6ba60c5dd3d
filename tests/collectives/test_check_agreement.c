/* test_check_agreement.c: hlo-check's verdict is the same on every rank,
 * under mpirun at 2, 3, 4 and 8 ranks.  A pair that differs on the last
 * rank only is DIFFERENT on every rank, with that rank's first difference,
 * and the check stops at the trial that found it; --shrink keeps what
 * differs on any rank (an instruction equal on the other ranks is not
 * replaced by their value), so its pair still differs; --prove hashes each
 * rank's own reduce-scatter chunk. */
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

/* o = p + q, but on the last device p + q + 1; the root reads o. */
static void modules(IrModule **b, IrModule **a)
{
    char before[512], after[1024];
    snprintf(before, sizeof before,
             "HloModule b\nENTRY e {\n  p = f32[16] parameter(0)\n  q = f32[16] parameter(1)\n"
             "  o = f32[16] add(p, q)\n  ROOT r = f32[16] multiply(o, o)\n}\n");
    snprintf(after, sizeof after,
             "HloModule a\nENTRY e {\n  p = f32[16] parameter(0)\n  q = f32[16] parameter(1)\n"
             "  s = f32[16] add(p, q)\n  one = f32[] constant(1)\n  ob = f32[16] broadcast(one), dimensions={}\n"
             "  t = f32[16] add(s, ob)\n  id = u32[] replica-id()\n  last = u32[] constant(%d)\n"
             "  is = pred[] compare(id, last), direction=EQ\n  m = pred[16] broadcast(is), dimensions={}\n"
             "  o = f32[16] select(m, t, s)\n  ROOT r = f32[16] multiply(o, o)\n}\n",
             coll_world(coll) - 1);
    *b = parse(before);
    *a = parse(after);
}

/* The check, then --shrink of the same report. */
static void test_a_difference_on_one_rank_is_everyones(void **state)
{
    (void)state;
    IrModule *b, *a;
    modules(&b, &a);
    CheckOptions opt;
    check_options_default(&opt);
    CheckReport rep;
    Error err = { 0 };
    assert_true(check_modules(coll, b, a, &opt, &rep, &err));
    assert_false(rep.equivalent);
    assert_true(rep.diff.found);
    assert_int_equal(rep.diff.rank, coll_world(coll) - 1);
    assert_int_equal(rep.diff.trial, 0);
    assert_int_equal(rep.trials_run, rep.diff.trial + 1);     /* stopped at the first difference */
    /* --shrink keeps what differs on any rank: the shrunk pair, on its own
     * inputs as a user replays it, still differs on the last rank. */
    CheckShrunk sh;
    assert_true(check_shrink_pair(coll, b, a, &opt, &rep, &sh, &err));
    CheckOptions again;
    check_options_default(&again);
    again.inputs = sh.s.inputs;
    again.n_inputs = sh.s.n_inputs;
    again.trials = 1;
    CheckReport rep2;
    assert_int_equal(sh.ranks, coll_world(coll));      /* replica-id keeps every rank */
    assert_true(check_modules(coll, sh.s.before, sh.s.after, &again, &rep2, &err));
    assert_false(rep2.equivalent);
    assert_int_equal(rep2.diff.rank, coll_world(coll) - 1);
    /* check_shrink_pair's own re-check says the same, on every rank. */
    assert_true(sh.still);
    assert_true(sh.rechecked);
    assert_false(sh.recheck.equivalent);
    assert_int_equal(sh.recheck.diff.rank, rep2.diff.rank);
    check_report_free(&rep2);
    check_shrunk_free(&sh);
    check_report_free(&rep);
    ir_module_free(b);
    ir_module_free(a);
}

/* --prove hashes each rank's own chunk of a reduce-scatter: against the
 * all-reduce's first chunk (right on rank 0 only) it is REFUTED, never
 * proved; against the all-reduce sliced at the rank's own chunk the
 * sampled check finds nothing. */
static void test_reduce_scatter_chunks_in_the_proof(void **state)
{
    (void)state;
    int w = coll_world(coll);
    char before[1024], wrong[1024], right[1024];
    char h[512];
    snprintf(h, sizeof h, "HloModule m\n%%add (a: f32[], b: f32[]) -> f32[] {\n  a = f32[] parameter(0)\n"
             "  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\nENTRY e {\n  p = f32[%d] parameter(0)\n", 4 * w);
    snprintf(before, sizeof before, "%s  ROOT r = f32[4] reduce-scatter(p), replica_groups={}, dimensions={0}, "
             "to_apply=%%add\n}\n", h);
    snprintf(wrong, sizeof wrong, "%s  ar = f32[%d] all-reduce(p), replica_groups={}, to_apply=%%add\n"
             "  ROOT r = f32[4] slice(ar), slice={[0:4]}\n}\n", h, 4 * w);
    snprintf(right, sizeof right, "%s  ar = f32[%d] all-reduce(p), replica_groups={}, to_apply=%%add\n"
             "  id = u32[] replica-id()\n  four = u32[] constant(4)\n  at = u32[] multiply(id, four)\n"
             "  ROOT r = f32[4] dynamic-slice(ar, at), dynamic_slice_sizes={4}\n}\n", h, 4 * w);
    IrModule *b = parse(before), *x = parse(wrong), *y = parse(right);
    CheckOptions opt;
    check_options_default(&opt);
    opt.prove = true;
    CheckReport rep;
    Error err = { 0 };
    assert_true(check_modules(coll, b, x, &opt, &rep, &err));
    assert_false(rep.equivalent);
    assert_int_equal(rep.proof.status, CHECK_PROOF_REFUTED);
    check_report_free(&rep);
    assert_true(check_modules(coll, b, y, &opt, &rep, &err));
    assert_true(rep.equivalent);
    assert_int_not_equal(rep.proof.status, CHECK_PROOF_REFUTED);
    check_report_free(&rep);
    ir_module_free(b);
    ir_module_free(x);
    ir_module_free(y);
}

int main(int argc, char **argv)
{
    coll = coll_init(&argc, &argv);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_difference_on_one_rank_is_everyones),
        cmocka_unit_test(test_reduce_scatter_chunks_in_the_proof),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    coll_finish(coll, rc);
}
