/* test_alloc_fail.c: the Nth allocation fails (xmalloc_fail_after), for
 * every N from the first to past the last one of parsing, verifying, the
 * default pipeline in both modes on a copy, printing the result, and one
 * interpreter run of it.  Two modules: one with a loop, a conditional, a
 * dot, a reduce and a collective the passes rewrite; one that every pass
 * of the default pipeline rewrites (the six flips and the three
 * combiners).  Each N runs in a child process and must end in success
 * (past the last allocation, or one whose failure was absorbed) or in an
 * ERR_NOMEM error that says "out of memory": never a signal, the
 * out-of-memory exit of xmalloc, or another error.  The Ns that return an
 * error are run once more in this process, so that the ASan build's leak
 * check covers their error paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "interp.h"
#include "pass.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *const loop_text =
    "HloModule walk, replica_count=1\n"
    "%add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
    "%cond { p = (s32[], f32[4,4]) parameter(0)\n i = s32[] get-tuple-element(p), index=0\n"
    "  k = s32[] constant(3)\n ROOT lt = pred[] compare(i, k), direction=LT }\n"
    "%body { p = (s32[], f32[4,4]) parameter(0)\n i = s32[] get-tuple-element(p), index=0\n"
    "  x = f32[4,4] get-tuple-element(p), index=1\n one = s32[] constant(1)\n n = s32[] add(i, one)\n"
    "  d = f32[4,4] dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "  ROOT t = (s32[], f32[4,4]) tuple(n, d) }\n"
    "ENTRY %main {\n  x = f32[4,4] parameter(0)\n  z = s32[] constant(0)\n"
    "  init = (s32[], f32[4,4]) tuple(z, x)\n"
    "  w = (s32[], f32[4,4]) while(init), condition=%cond, body=%body\n"
    "  y = f32[4,4] get-tuple-element(w), index=1\n"
    "  ag = f32[4,4] all-gather(y), replica_groups={{0}}, dimensions={0}\n"
    "  c = bf16[4,4] convert(ag)\n  zero = f32[] constant(0)\n"
    "  r = f32[4] reduce(y, zero), dimensions={1}, to_apply=%add\n  d = f64[4] convert(r)\n"
    "  ROOT out = (bf16[4,4], f32[4], f64[4]) tuple(c, r, d)\n}\n";

/* Every pass of the default pipeline fires on this one, in both modes (the
 * shapes of the corpus's flip modules and the combiners' golden cases, at
 * one device):
 * #98 add(ag.a, ag.b), #96 convert(ag.c), #97 reshape(ag.r), #104
 * transpose(convert(reduce-scatter(add(h, gte(state))))), #102
 * add(convert(all-reduce(h)), gte(state)), #92 a rank-3 dynamic-slice of
 * ag.v; the all-gather, reduce-scatter and all-reduce combiners then each
 * merge two. */
#define GROUP "replica_groups={{0}}, use_global_device_ids=true"
static const char *const rewrite_text =
    "HloModule rewrite, replica_count=1\n\n"
    "%add (x: f32[], y: f32[]) -> f32[] {\n"
    "  %x = f32[] parameter(0)\n  %y = f32[] parameter(1)\n  ROOT %s = f32[] add(%x, %y)\n}\n\n"
    "%add.bf16 (x: bf16[], y: bf16[]) -> bf16[] {\n"
    "  %x = bf16[] parameter(0)\n  %y = bf16[] parameter(1)\n  ROOT %s = bf16[] add(%x, %y)\n}\n\n"
    "ENTRY %main (a: f32[4,8], b: f32[4,8], g: f32[8,4], h: bf16[8,4],\n"
    "             state: (f32[8,4], bf16[8,4], f32[8,4]), v: f32[2,4,8])\n"
    "    -> (f32[4,8], bf16[4,8], f32[32], f32[4,8], f32[8,4], f32[2,2,4], f32[8,4], f32[8,4]) {\n"
    "  %a = f32[4,8] parameter(0)\n  %b = f32[4,8] parameter(1)\n  %g = f32[8,4] parameter(2)\n"
    "  %h = bf16[8,4] parameter(3)\n  %state = (f32[8,4], bf16[8,4], f32[8,4]) parameter(4)\n"
    "  %v = f32[2,4,8] parameter(5)\n"
    "  %acc = f32[8,4] get-tuple-element(%state), index=0\n"
    "  %mb = bf16[8,4] get-tuple-element(%state), index=1\n"
    "  %m = f32[8,4] get-tuple-element(%state), index=2\n"
    "  %ag.a = f32[4,8] all-gather(%a), replica_groups={{0}}, dimensions={0}\n"
    "  %ag.b = f32[4,8] all-gather(%b), replica_groups={{0}}, dimensions={0}\n"
    "  %sum = f32[4,8] add(%ag.a, %ag.b)\n"
    "  %ag.c = f32[4,8] all-gather(%a), channel_id=3, " GROUP ", dimensions={0}\n"
    "  %c16 = bf16[4,8] convert(%ag.c)\n"
    "  %ag.r = f32[4,8] all-gather(%b), channel_id=4, " GROUP ", dimensions={0}\n"
    "  %r = f32[32] reshape(%ag.r)\n"
    "  %u = bf16[8,4] add(%h, %mb)\n"
    "  %rs = bf16[8,4] reduce-scatter(%u), channel_id=5, " GROUP ", dimensions={0}, to_apply=%add.bf16\n"
    "  %rs32 = f32[8,4] convert(%rs)\n"
    "  %t = f32[4,8] transpose(%rs32), dimensions={1,0}\n"
    "  %ar = bf16[8,4] all-reduce(%h), channel_id=6, " GROUP ", to_apply=%add.bf16\n"
    "  %ar32 = f32[8,4] convert(%ar)\n"
    "  %acc.new = f32[8,4] add(%ar32, %acc)\n"
    "  %ag.v = f32[2,4,8] all-gather(%v), channel_id=7, " GROUP ", dimensions={0}\n"
    "  %i0 = s32[] constant(0)\n  %i1 = s32[] constant(2)\n  %i2 = s32[] constant(4)\n"
    "  %ds = f32[2,2,4] dynamic-slice(%ag.v, %i0, %i1, %i2), dynamic_slice_sizes={2,2,4}\n"
    "  %ar2 = f32[8,4] all-reduce(%g), channel_id=8, " GROUP ", to_apply=%add\n"
    "  %rs2 = f32[8,4] reduce-scatter(%g), channel_id=9, " GROUP ", dimensions={0}, to_apply=%add\n"
    "  %rs3 = f32[8,4] reduce-scatter(%m), channel_id=11, " GROUP ", dimensions={0}, to_apply=%add\n"
    "  %ar3 = f32[8,4] all-reduce(%m), channel_id=12, " GROUP ", to_apply=%add\n"
    "  %p = f32[8,4] multiply(%ar2, %rs2)\n  %p3 = f32[8,4] multiply(%p, %ar3)\n"
    "  %q = f32[8,4] add(%p3, %rs3)\n"
    "  %ag.s = f32[8,4] all-gather(%g), channel_id=10, " GROUP ", dimensions={1}\n"
    "  ROOT %out = (f32[4,8], bf16[4,8], f32[32], f32[4,8], f32[8,4], f32[2,2,4], f32[8,4], f32[8,4])\n"
    "      tuple(%sum, %c16, %r, %t, %acc.new, %ds, %q, %ag.s)\n}\n";

/* How one N ended; the child's exit status. */
enum { RUN_DONE, RUN_ABSORBED, RUN_NOMEM, RUN_XMALLOC_EXIT, RUN_OTHER_ERROR, RUN_OUTCOMES };

static const char *const outcome_name[RUN_OUTCOMES] = {
    "succeeded past the last allocation", "succeeded, the failure absorbed", "returned out of memory",
    "ended in xmalloc's out-of-memory exit", "returned another error",
};

static Value *input(const IrShape *s, Error *err);

static Value *input_element(void *ctx, int i, const IrShape *element, Error *err)
{
    (void)ctx;
    (void)i;
    return input(element, err);
}

/* A value of shape s: zeros, f32 arrays counting up by 0.1. */
static Value *input(const IrShape *s, Error *err)
{
    if (s->type == IR_TYPE_TUPLE)
        return value_build_tuple(s, input_element, NULL, err);
    Value *v = value_new_zeroed(s, err);
    if (v && s->type == IR_TYPE_F32)
        for (int64_t i = 0; i < ir_shape_elements(s); i++)
            ((float *)v->data)[i] = 0.1f * (float)i;
    return v;
}

/* The rewritten module in the last mode: through pipelines in both modes
 * on copies of m, each printed; NULL with err on failure. */
static IrModule *rewrite_both_ways(const IrModule *m, Error *err)
{
    const Pass *passes[64];
    int n = 0;
    if (!pass_parse_list("default", passes, &n, err))
        return NULL;
    IrModule *c = NULL;
    for (int mode = 0; mode < 2; mode++) {
        ir_module_free(c);
        PassOptions opt;
        pass_options_default(&opt);
        opt.mode = mode ? PASS_MODE_SOUND : PASS_MODE_FAITHFUL;
        bool changed;
        StrBuf text;
        strbuf_init_may_fail(&text);
        c = ir_module_copy(m, err);
        bool ok = c && pass_run_pipeline(c, passes, n, &opt, NULL, &changed, err) && changed;
        if (ok)
            ir_print_module(&text, c);
        ok = ok && strbuf_check(&text, err);
        strbuf_free(&text);
        if (!ok) {
            ir_module_free(c);
            return NULL;
        }
    }
    return c;
}

/* One interpreter run of m on counting inputs. */
static bool run_once(const IrModule *m, Error *err)
{
    Interp *it = interp_new(m, NULL, err);
    Value *params[8] = { 0 }, *out = NULL;
    int n = m->entry->n_params;
    bool ok = it != NULL;
    for (int i = 0; ok && i < n; i++)
        ok = (params[i] = input(m->entry->params[i]->shape, err)) != NULL;
    if (ok)
        ok = interp_run(it, params, n, &out, err);      /* takes params */
    else
        for (int i = 0; i < n; i++)
            value_release(params[i]);
    value_release(out);
    interp_free(it);
    return ok;
}

/* The whole walk of one N for text, in this process. */
static int one_run(const char *text)
{
    Error err = { 0 };
    IrModule *m = ir_parse_module(text, strlen(text), "walk.hlo", &err), *c = NULL;
    bool ok = m && ir_verify_module(m, &err) && (c = rewrite_both_ways(m, &err)) && run_once(c, &err);
    ir_module_free(c);
    ir_module_free(m);
    if (ok)
        return RUN_DONE;
    if (err.code == ERR_NOMEM && strstr(err.msg, "out of memory"))
        return RUN_NOMEM;
    error_print(&err, stderr);
    return RUN_OTHER_ERROR;
}

/* N = 1, 2, ... until one past the last allocation, each in a child. */
static void walk(const char *name, const char *text)
{
    assert_int_equal(one_run(text), RUN_DONE);     /* the walk itself works */
    static long returned[1 << 14];
    long n;
    int outcomes[RUN_OUTCOMES] = { 0 }, n_returned = 0;
    for (n = 1; n < 200000; n++) {
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
            /* cmocka's handlers would turn a crash into a test failure here */
            static const int crashes[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
            for (size_t i = 0; i < sizeof crashes / sizeof *crashes; i++)
                signal(crashes[i], SIG_DFL);
            xmalloc_fail_after(n);
            int code = one_run(text);
            _exit(code == RUN_DONE && !xmalloc_fail_pending() ? RUN_ABSORBED : code);
        }
        int st = 0;
        assert_int_equal(waitpid(pid, &st, 0), pid);
        if (!WIFEXITED(st))
            fail_msg("%s: allocation %ld failing: signal %d", name, n, WIFSIGNALED(st) ? WTERMSIG(st) : -1);
        int code = WEXITSTATUS(st);
        if (code >= RUN_OUTCOMES)
            fail_msg("%s: allocation %ld failing: exit %d", name, n, code);
        if (code == RUN_XMALLOC_EXIT || code == RUN_OTHER_ERROR)
            fail_msg("%s: allocation %ld failing: %s", name, n, outcome_name[code]);
        outcomes[code]++;
        if (code == RUN_NOMEM && n_returned < (int)(sizeof returned / sizeof *returned))
            returned[n_returned++] = n;
        if (code == RUN_DONE)
            break;
    }
    assert_true(n < 200000);
    /* The failures that come back as errors, again in this process: under
     * ASan, LeakSanitizer then checks that those error paths free what
     * they took. */
    for (int k = 0; k < n_returned; k++) {
        xmalloc_fail_after(returned[k]);
        assert_int_equal(one_run(text), RUN_NOMEM);
        xmalloc_fail_after(0);
    }
    assert_true(outcomes[RUN_NOMEM] > 100);     /* the walk went through many allocations */
    print_message("  %s: %ld allocations walked: %d returned out of memory, %d absorbed the failure\n", name,
                  n - 1, outcomes[RUN_NOMEM], outcomes[RUN_ABSORBED]);
}

static void every_allocation_may_fail_cleanly_loop_module(void **state)
{
    (void)state;
    walk("loop module", loop_text);
}

static void every_pass_rewrites_the_rewritten_module(void **state)
{
    (void)state;
    Error err = { 0 };
    IrModule *m = ir_parse_module(rewrite_text, strlen(rewrite_text), "rewrite.hlo", &err);
    const Pass *passes[64];
    int n = 0;
    assert_non_null(m);
    assert_true(pass_parse_list("default", passes, &n, &err));
    for (int mode = 0; mode < 2; mode++) {
        IrModule *c = ir_module_copy(m, &err);
        PassOptions opt;
        pass_options_default(&opt);
        opt.mode = mode ? PASS_MODE_SOUND : PASS_MODE_FAITHFUL;
        PipelineStats stats;
        bool changed;
        assert_non_null(c);
        assert_true(pass_run_pipeline(c, passes, n, &opt, &stats, &changed, &err));
        for (int i = 0; i < n; i++)
            if (stats.stats[i].fired == 0)
                fail_msg("mode %d: %s did not fire", mode, passes[i]->name);
        ir_module_free(c);
    }
    ir_module_free(m);
}

static void every_allocation_may_fail_cleanly_rewritten_module(void **state)
{
    (void)state;
    walk("rewritten module", rewrite_text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_allocation_may_fail_cleanly_loop_module),
        cmocka_unit_test(every_pass_rewrites_the_rewritten_module),
        cmocka_unit_test(every_allocation_may_fail_cleanly_rewritten_module),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
