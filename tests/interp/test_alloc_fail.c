/* test_alloc_fail.c: the Nth allocation fails (xmalloc_fail_after), for
 * every N from the first to past the last one of parsing, verifying, the
 * default pipeline in both modes and one interpreter run of a module that
 * has a loop, a conditional, a dot, a reduce and a collective the passes
 * rewrite.  Each N runs in a child process: it must end with a clean
 * outcome (success, an error returned, or the one-line out-of-memory exit
 * 3 of xmalloc), never a signal or another status; the ones that return
 * an error are run once more in this process, so that the ASan build's
 * leak check covers their error paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "interp.h"
#include "pass.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *const text =
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
    "  r = f32[4] reduce(y, zero), dimensions={1}, to_apply=%add\n"
    "  ROOT out = (bf16[4,4], f32[4]) tuple(c, r)\n}\n";

/* The whole walk of one N, in this (child) process: 0 done, 2 an error
 * returned (the out-of-memory exit of xmalloc is 3, from inside). */
static int one_run(void)
{
    Error err = { 0 };
    int code = 2;
    IrModule *m = ir_parse_module(text, strlen(text), "walk.hlo", &err), *c = NULL;
    Interp *it = NULL;
    Value *x = NULL, *out = NULL;
    const Pass *passes[64];
    int n = 0;
    if (!m || !ir_verify_module(m, &err) || !pass_parse_list("default", passes, &n, &err))
        goto done;
    for (int mode = 0; mode < 2; mode++) {
        c = ir_module_copy(m, &err);
        PassOptions opt;
        pass_options_default(&opt);
        opt.mode = mode ? PASS_MODE_SOUND : PASS_MODE_FAITHFUL;
        bool changed;
        if (!c || !pass_run_pipeline(c, passes, n, &opt, NULL, &changed, &err))
            goto done;
        ir_module_free(c);
        c = NULL;
    }
    it = interp_new(m, NULL, &err);
    x = it ? value_new_array(m->entry->params[0]->shape, &err) : NULL;
    if (!x)
        goto done;
    for (int i = 0; i < 16; i++)
        ((float *)x->data)[i] = 0.1f * (float)i;
    code = interp_run(it, &x, 1, &out, &err) ? 0 : 2;   /* takes x */
    x = NULL;
done:
    value_release(x);
    value_release(out);
    interp_free(it);
    if (c)
        ir_module_free(c);
    if (m)
        ir_module_free(m);
    return code;
}

static void every_allocation_may_fail_cleanly(void **state)
{
    (void)state;
    assert_int_equal(one_run(), 0);     /* the walk itself works */
    long n, returned[4096];
    int statuses[4] = { 0 }, n_returned = 0;
    for (n = 1; n < 200000; n++) {
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
            xmalloc_fail_after(n);
            _exit(one_run());
        }
        int st = 0;
        assert_int_equal(waitpid(pid, &st, 0), pid);
        if (!WIFEXITED(st))
            fail_msg("allocation %ld failing: signal %d", n, WIFSIGNALED(st) ? WTERMSIG(st) : -1);
        int code = WEXITSTATUS(st);
        if (code != 0 && code != 2 && code != 3)
            fail_msg("allocation %ld failing: exit %d", n, code);
        statuses[code]++;
        if (code == 2 && n_returned < 4096)
            returned[n_returned++] = n;
        if (code == 0)
            break;                      /* N is past the last allocation */
    }
    assert_true(n < 200000);
    /* The failures that come back as errors, again in this process: under
     * ASan, LeakSanitizer then checks that those error paths free what
     * they took. */
    for (int k = 0; k < n_returned; k++) {
        xmalloc_fail_after(returned[k]);
        assert_int_equal(one_run(), 2);
        xmalloc_fail_after(0);
    }
    assert_true(statuses[3] + statuses[2] > 100);   /* the walk went through many allocations */
    print_message("  %ld allocations walked: %d returned an error, %d ended out of memory\n", n - 1,
                  statuses[2], statuses[3]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_allocation_may_fail_cleanly),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
