/* per_pass.c: hlo-check --per-pass.  The pipeline one pass longer at a
 * time, each prefix that changes the module checked against the original;
 * the first prefix that is not equivalent names the pass to blame.  A
 * prefix whose module prints as the previous one's is not checked again. */
#include "check.h"
#include "coll.h"
#include "pass.h"

#include <stdlib.h>

IrModule *check_rewrite(const IrModule *before, const Pass *const *passes, int n, const PassOptions *po,
                        bool *changed, Error *err)
{
    Error verr = { 0 };
    IrModule *after = ir_module_copy(before, err);
    if (!after)
        return NULL;
    if (!pass_run_pipeline(after, passes, n, po, NULL, changed, err)) {
        ir_module_free(after);
        return NULL;
    }
    if (!ir_verify_module(after, &verr)) {
        ir_module_free(after);
        error_set(err, ERR_INTERNAL, verr.loc, "the passes left an invalid module: %s", verr.msg);
        return NULL;
    }
    return after;
}

bool check_per_pass(Coll *c, const IrModule *before, const Pass *const *passes, int n, const PassOptions *po,
                    const CheckOptions *co, CheckPerPass *out, Error *err)
{
    out->n_steps = 0;
    out->broken = -1;
    out->steps = xcalloc((size_t)(n ? n : 1), sizeof *out->steps);
    IrModule *prev = NULL;
    for (int k = 1; k <= n; k++) {
        bool changed = false;
        IrModule *after = check_rewrite(before, passes, k, po, &changed, err);
        if (!after) {
            ir_module_free(prev);
            return false;
        }
        bool same = prev && ir_module_text_equal(prev, after);
        ir_module_free(prev);
        prev = after;
        CheckPassStep *s = &out->steps[out->n_steps++];
        s->pass = passes[k - 1];
        s->checked = k == 1 || !same;
        if (!s->checked)
            continue;
        if (!check_modules(c, before, after, co, &s->report, err)) {
            ir_module_free(prev);
            return false;
        }
        s->equivalent = s->report.equivalent;
        if (!s->equivalent) {
            out->broken = out->n_steps - 1;
            out->after = prev;     /* the failing prefix's module, for the report */
            return true;
        }
    }
    ir_module_free(prev);
    return true;
}

void check_per_pass_free(CheckPerPass *p)
{
    for (int i = 0; i < p->n_steps; i++)
        if (p->steps[i].checked)
            check_report_free(&p->steps[i].report);
    free(p->steps);
    ir_module_free(p->after);
    *p = (CheckPerPass){ 0 };
}

void check_print_pass_step(FILE *out, const CheckPassStep *s)
{
    fprintf(out, "hlo-check: after #%-3d %-42s %s\n", s->pass->number, s->pass->name,
            s->equivalent ? "equivalent" : "NOT EQUIVALENT");
}

void check_print_per_pass_verdict(FILE *out, const CheckPerPass *pp, const char *passes)
{
    if (pp->broken >= 0)
        fprintf(out, "hlo-check: the first pass that breaks equivalence is #%d %s\n",
                pp->steps[pp->broken].pass->number, pp->steps[pp->broken].pass->name);
    else
        fprintf(out, "hlo-check: EQUIVALENT after every pass of --passes=%s\n", passes);
}
