/* report.c: the checker's report as text (for people), JSON (for
 * dashboards) and JUnit XML (for CI systems that gate on it).  Every rank
 * holds the same report; the tool prints it on rank 0. */
#include "check.h"
#include "check_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static double mean(double sum, int64_t n)
{
    return n ? sum / (double)n : 0;
}

static const char *mode_text(const CheckReport *rep)
{
    if (rep->by_accuracy)
        return "accuracy against the f64 oracle (a reduction's accumulation type changed)";
    switch (rep->mode) {
    case CHECK_EXACT: return "exact (bitwise; NaN equals NaN)";
    case CHECK_TOL: return "within tolerance (--atol/--rtol)";
    case CHECK_ULP: return "within --ulp units in the last place";
    case CHECK_AUTO: return "auto";
    }
    return "?";
}

static void print_output(FILE *out, int i, const CheckOutput *o)
{
    const CheckAccuracy *b = &o->before, *a = &o->after;
    fprintf(out, "  out%d %s: max abs err %.3g -> %.3g, mean %.3g -> %.3g, max rel %.3g -> %.3g, "
                 "max %.3g -> %.3g ulp, mean %.3g -> %.3g ulp; after is better/equal/worse on %lld/%lld/%lld",
            i, o->shape, b->max_abs, a->max_abs, mean(b->sum_abs, b->n), mean(a->sum_abs, a->n), b->max_rel,
            a->max_rel, b->max_ulp, a->max_ulp, mean(b->sum_ulp, b->n), mean(a->sum_ulp, a->n),
            (long long)o->duel.better, (long long)o->duel.equal, (long long)o->duel.worse);
    if (b->nonfinite || a->nonfinite)
        fprintf(out, "; non-finite misses %lld -> %lld", (long long)b->nonfinite, (long long)a->nonfinite);
    if (b->paired && a->paired && (b->sum_abs_paired != b->sum_abs || a->sum_abs_paired != a->sum_abs))
        fprintf(out, "; mean %.3g -> %.3g on the elements both got finite",
                check_judged_mean(b), check_judged_mean(a));
    if (o->by_sites)
        fputs("; its mean error grew, but no more elements got worse than chance allows: the sites decide", out);
    fputc('\n', out);
}

static void print_site(FILE *out, const CheckSite *s, int world)
{
    fprintf(out, "  %s: %s -> %s accumulation (%s %s -> %s)", s->before_name, ir_type_name(s->before_type),
            ir_type_name(s->after_type), ir_opcode_name(s->op), s->before_name, s->after_name);
    if (s->measured)
        fprintf(out, ", max error %.3g -> %.3g ulp, mean %.3g -> %.3g ulp (%s ulps at the terms' magnitude "
                     "sum|x|, %d ranks, %lld executions); error / bound gamma(n-1)*sum|x|: %.3f -> %.3f",
                s->before.max_ulp, s->after.max_ulp, mean(s->before.sum_ulp, s->before.n),
                mean(s->after.sum_ulp, s->after.n), ir_type_name(s->value_type), world, (long long)s->executions,
                s->before_bound, s->after_bound);
    else if (s->unmatched)
        fputs(", not measured (the two modules ran it a different number of times)", out);
    else
        fputs(", not measured (no oracle, or not a plain add/max/min)", out);
    bool narrower = ir_type_info[s->after_type].bits < ir_type_info[s->before_type].bits;
    fputs(narrower ? " -- NARROWER: a loss\n" : "\n", out);
}

static const char *proof_status_json(CheckProofStatus s)
{
    switch (s) {
    case CHECK_PROOF_PROVED: return "proved";
    case CHECK_PROOF_REFUTED: return "refuted";
    case CHECK_PROOF_NOT_PROVED: return "not_proved";
    case CHECK_PROOF_NOT_EXACT: return "not_exact";
    case CHECK_PROOF_OFF: return "off";
    }
    return "?";
}

static void print_proof(FILE *out, const CheckReport *rep)
{
    const CheckProof *p = &rep->proof;
    if (p->status == CHECK_PROOF_NOT_EXACT || (p->status == CHECK_PROOF_NOT_PROVED && !p->hashes)) {
        fprintf(out, "proof: %s\n", p->why);
        return;
    }
    fprintf(out, "proof: both modules run on 128-bit expression hashes on every rank (%lld hashes, %.1f s); the "
                 "chance that two different expressions share a hash is below 2^%.0f\n",
            (long long)p->hashes, p->seconds, ceil(p->collision_log2));
    if (p->n_opaque) {
        fputs("proof: custom calls treated as uninterpreted functions:", out);
        for (int i = 0; i < p->n_opaque; i++)
            fprintf(out, "%s %s", i ? "," : "", p->opaque[i][0] ? p->opaque[i] : "(no target)");
        fputc('\n', out);
    }
    if (p->decisions)
        fprintf(out, "proof: %lld decision%s depended on the inputs (the first: %s); the proof holds for the "
                     "inputs that make the same ones\n",
                (long long)p->decisions, p->decisions == 1 ? "" : "s", p->first_decision);
    if (p->differs) {
        fprintf(out, "proof: %lld output element%s compute%s different expressions; the first: rank %d, output %d, "
                     "element %s\n", (long long)p->n_differ, p->n_differ == 1 ? "" : "s",
                p->n_differ == 1 ? "s" : "", p->rank, p->output, p->where);
        fprintf(out, "  before: %s\n  after:  %s\n", p->before_expr, p->after_expr);
        fprintf(out, "  they part at before %s / after %s\n", p->before_at, p->after_at);
    }
    if (p->status == CHECK_PROOF_NOT_PROVED)
        fprintf(out, "proof: NOT PROVED: %s\n", p->why);
}

static void summary_line(FILE *out, const CheckReport *rep)
{
    const CheckProof *p = &rep->proof;
    if (p->status == CHECK_PROOF_PROVED) {
        if (p->unconditional)
            fprintf(out, "hlo-check: PROVED EQUIVALENT for all inputs (%d rank%s, unconditional)\n", rep->world,
                    rep->world == 1 ? "" : "s");
        else
            fprintf(out, "hlo-check: PROVED EQUIVALENT for all inputs that take the run's %lld recorded decision%s "
                         "(%d rank%s, conditional)\n", (long long)p->decisions, p->decisions == 1 ? "" : "s",
                    rep->world, rep->world == 1 ? "" : "s");
        return;
    }
    if (p->status == CHECK_PROOF_REFUTED) {
        fprintf(out, "hlo-check: REFUTED (%d trials x %d ranks: a bitwise difference; the expressions above)\n",
                rep->trials_run, rep->world);
        return;
    }
    const char *what = rep->by_accuracy ? (rep->equivalent ? "AT LEAST AS ACCURATE" : "LESS ACCURATE")
                                        : (rep->equivalent ? "EQUIVALENT" : "DIFFERENT");
    fprintf(out, "hlo-check: %s (%d trials x %d ranks, %s)\n", what, rep->trials_run, rep->world,
            rep->by_accuracy ? "judged by accuracy" : rep->mode == CHECK_EXACT ? "bitwise" : "with tolerance");
}

void check_print_report(FILE *out, const CheckReport *rep, const char *before_name, const char *after_name)
{
    fprintf(out, "hlo-check: %s vs %s on %d ranks (%d replicas x %d partitions), %d trials\n", before_name,
            after_name, rep->world, rep->replicas, rep->partitions, rep->trials_run);
    fprintf(out, "comparison: %s\n", mode_text(rep));
    if (!rep->inputs_given) {
        char kinds[200];
        check_trial_dists_text(rep->dist, rep->trials_run, kinds, sizeof kinds);
        fprintf(out, "inputs: %s%s%s%s%s\n", check_dist_name(rep->dist), rep->dist == CHECK_DIST_MIXED ? " (" : "",
                rep->dist == CHECK_DIST_MIXED ? kinds : "", rep->dist == CHECK_DIST_MIXED ? ")" : "",
                rep->by_accuracy && rep->dist == CHECK_DIST_UNIFORM
                    ? " (accuracy is measured on values of the program's kind, not on the boundary kinds; --dist "
                      "chooses another)"
                    : "");
    }
    if (rep->by_digest)
        fputs("memory: both modules' outputs do not fit --max-memory together, so before's are kept as 64-bit "
              "digests of 2^20-element blocks (a difference hides with a chance of 2^-64 per block)\n", out);
    if (rep->n_opaque) {
        fputs("opaque custom calls (each a deterministic function of its operands' bytes, target and "
              "backend_config; the verdict holds for any implementation that is one):", out);
        for (int i = 0; i < rep->n_opaque; i++)
            fprintf(out, "%s %s", i ? "," : "", rep->opaque[i][0] ? rep->opaque[i] : "(no target)");
        fputc('\n', out);
    }
    if (rep->n_sites) {
        fputs("reductions whose accumulation type changed (flip-reduce-convert-add, transpose flip):\n", out);
        for (int s = 0; s < rep->n_sites; s++)
            print_site(out, &rep->sites[s], rep->world);
    }
    if (rep->oracle) {
        fputs("outputs against the f64 oracle (before -> after):\n", out);
        for (int i = 0; i < rep->n_outputs; i++)
            print_output(out, i, &rep->outputs[i]);
    }
    if (rep->diff.found) {
        const CheckDifference *d = &rep->diff;
        char from[64];
        if (rep->inputs_given)
            snprintf(from, sizeof from, "given inputs");
        else
            snprintf(from, sizeof from, "input seed %llu, %s", (unsigned long long)d->seed, check_dist_name(d->dist));
        fprintf(out, "difference: trial %d (%s), rank %d, output %d, element %s: before %s, after %s\n", d->trial,
                from, d->rank, d->output, d->where, d->before, d->after);
    }
    if (rep->proof.status != CHECK_PROOF_OFF)
        print_proof(out, rep);
    summary_line(out, rep);
    if (rep->proof.status == CHECK_PROOF_NOT_PROVED || rep->proof.status == CHECK_PROOF_NOT_EXACT)
        fprintf(out, "hlo-check: %s (the verdict above is sampled, not a proof)\n",
                rep->proof.status == CHECK_PROOF_NOT_EXACT ? "NOT EXACT" : "NOT PROVED");
}

/* ---- JSON */

void check_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(f, "\\u%04x", *s);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

static void json_number(FILE *f, double x)
{
    if (isfinite(x))
        fprintf(f, "%.17g", x);
    else
        fputs("null", f);
}

static void json_accuracy(FILE *f, const char *key, const CheckAccuracy *a)
{
    fprintf(f, "\"%s\": {\"max_abs\": ", key);
    json_number(f, a->max_abs);
    fputs(", \"mean_abs\": ", f);
    json_number(f, mean(a->sum_abs, a->n));
    fputs(", \"max_rel\": ", f);
    json_number(f, a->max_rel);
    fputs(", \"max_ulp\": ", f);
    json_number(f, a->max_ulp);
    fputs(", \"mean_ulp\": ", f);
    json_number(f, mean(a->sum_ulp, a->n));
    fprintf(f, ", \"elements\": %lld, \"nonfinite_misses\": %lld}", (long long)a->n, (long long)a->nonfinite);
}

static void json_body(FILE *f, const CheckReport *rep, const char *bn, const char *an)
{
    fputs("{\n  \"before\": ", f);
    check_json_string(f, bn);
    fputs(", \"after\": ", f);
    check_json_string(f, an);
    fprintf(f, ",\n  \"ranks\": %d, \"replicas\": %d, \"partitions\": %d, \"trials\": %d, \"inputs\": \"%s\",\n",
            rep->world, rep->replicas, rep->partitions, rep->trials_run,
            rep->inputs_given ? "given" : check_dist_name(rep->dist));
    fprintf(f, "  \"judged_by\": \"%s\", \"equivalent\": %s, \"accuracy_ok\": %s,\n",
            rep->by_accuracy ? "accuracy" : "comparison", rep->equivalent ? "true" : "false",
            rep->accuracy_ok ? "true" : "false");
    fputs("  \"opaque_custom_calls\": [", f);
    for (int i = 0; i < rep->n_opaque; i++) {
        fputs(i ? ", " : "", f);
        check_json_string(f, rep->opaque[i]);
    }
    fputs("],\n  \"outputs\": [", f);
    for (int i = 0; i < rep->n_outputs && rep->oracle; i++) {
        const CheckOutput *o = &rep->outputs[i];
        fprintf(f, "%s\n    {\"index\": %d, \"shape\": ", i ? "," : "", i);
        check_json_string(f, o->shape);
        fputs(", ", f);
        json_accuracy(f, "before", &o->before);
        fputs(", ", f);
        json_accuracy(f, "after", &o->after);
        fprintf(f, ", \"better\": %lld, \"equal\": %lld, \"worse\": %lld, \"by_sites\": %s}",
                (long long)o->duel.better, (long long)o->duel.equal, (long long)o->duel.worse,
                o->by_sites ? "true" : "false");
    }
    fputs("],\n  \"sites\": [", f);
    for (int s = 0; s < rep->n_sites; s++) {
        const CheckSite *x = &rep->sites[s];
        fprintf(f, "%s\n    {\"before\": ", s ? "," : "");
        check_json_string(f, x->before_name);
        fputs(", \"after\": ", f);
        check_json_string(f, x->after_name);
        fprintf(f, ", \"accumulation_before\": \"%s\", \"accumulation_after\": \"%s\", \"measured\": %s",
                ir_type_name(x->before_type), ir_type_name(x->after_type), x->measured ? "true" : "false");
        fprintf(f, ", \"executions\": %lld", (long long)x->executions);
        fputs(", ", f);
        json_accuracy(f, "error_before", &x->before);
        fputs(", ", f);
        json_accuracy(f, "error_after", &x->after);
        fputs(", \"bound_fraction_before\": ", f);
        json_number(f, x->before_bound);
        fputs(", \"bound_fraction_after\": ", f);
        json_number(f, x->after_bound);
        fputc('}', f);
    }
    fputs("],\n", f);
    if (rep->proof.status != CHECK_PROOF_OFF) {
        const CheckProof *p = &rep->proof;
        fprintf(f, "  \"proof\": {\"status\": \"%s\", \"unconditional\": %s, \"decisions\": %lld, \"opaque_targets\": [",
                proof_status_json(p->status), p->unconditional && p->hashes ? "true" : "false",
                (long long)p->decisions);
        for (int i = 0; i < p->n_opaque; i++) {
            fputs(i ? ", " : "", f);
            check_json_string(f, p->opaque[i]);
        }
        fprintf(f, "], \"hashes\": %lld, \"collision_bound_log2\": ", (long long)p->hashes);
        json_number(f, p->hashes ? p->collision_log2 : NAN);
        fputs(", \"why\": ", f);
        check_json_string(f, p->why);
        if (p->differs) {
            fprintf(f, ", \"rank\": %d, \"output\": %d, \"index\": %lld, \"where\": ", p->rank, p->output,
                    (long long)p->index);
            check_json_string(f, p->where);
            fputs(", \"before_expr\": ", f);
            check_json_string(f, p->before_expr);
            fputs(", \"after_expr\": ", f);
            check_json_string(f, p->after_expr);
            fputs(", \"before_at\": ", f);
            check_json_string(f, p->before_at);
            fputs(", \"after_at\": ", f);
            check_json_string(f, p->after_at);
        }
        fputs("},\n", f);
    }
    fputs("  \"difference\": ", f);
    if (!rep->diff.found) {
        fputs("null\n}\n", f);
        return;
    }
    const CheckDifference *d = &rep->diff;
    fprintf(f, "{\"trial\": %d, \"seed\": %llu, \"inputs\": \"%s\", \"rank\": %d, \"output\": %d, \"index\": %lld, "
            "\"where\": ", d->trial, (unsigned long long)d->seed, check_dist_name(d->dist), d->rank, d->output,
            (long long)d->index);
    check_json_string(f, d->where);
    fputs(", \"before\": ", f);
    check_json_string(f, d->before);
    fputs(", \"after\": ", f);
    check_json_string(f, d->after);
    fputs("}\n}\n", f);
}

bool check_write_json(const char *path, const CheckReport *rep, const char *bn, const char *an, Error *err)
{
    IrAtomicFile a;
    if (!ir_atomic_open(&a, path, err))
        return false;
    json_body(a.f, rep, bn, an);
    return ir_atomic_close(&a, true, err);
}

/* ---- JUnit: one test case per output and per accumulation site */

static void xml_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

static void junit_case(FILE *f, const char *name, const char *failure)
{
    fputs("    <testcase classname=\"hlo-check\" name=\"", f);
    xml_text(f, name);
    fputs("\">", f);
    if (failure) {
        fputs("<failure message=\"", f);
        xml_text(f, failure);
        fputs("\"/>", f);
    }
    fputs("</testcase>\n", f);
}

static void junit_outputs(FILE *f, const CheckReport *rep)
{
    for (int i = 0; i < rep->n_outputs; i++) {
        char name[224], why[256];
        snprintf(name, sizeof name, "out%d %s", i, rep->outputs[i].shape);
        const char *failure = NULL;
        if (rep->diff.found && rep->diff.output == i) {
            snprintf(why, sizeof why, "trial %d rank %d element %s: before %s, after %s", rep->diff.trial,
                     rep->diff.rank, rep->diff.where, rep->diff.before, rep->diff.after);
            failure = why;
        } else if (rep->by_accuracy && !rep->accuracy_ok) {
            const CheckOutput *o = &rep->outputs[i];
            if (mean(o->after.sum_ulp, o->after.n) > mean(o->before.sum_ulp, o->before.n)) {
                snprintf(why, sizeof why, "less accurate: mean %.3g -> %.3g ulp", mean(o->before.sum_ulp, o->before.n),
                         mean(o->after.sum_ulp, o->after.n));
                failure = why;
            }
        }
        junit_case(f, name, failure);
    }
}

bool check_write_junit(const char *path, const CheckReport *rep, const char *bn, const char *an, Error *err)
{
    IrAtomicFile a;
    if (!ir_atomic_open(&a, path, err))
        return false;
    FILE *f = a.f;
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite name=\"", f);
    xml_text(f, bn);
    fputs(" vs ", f);
    xml_text(f, an);
    fprintf(f, "\" tests=\"%d\" failures=\"%d\">\n", rep->n_outputs + rep->n_sites, rep->equivalent ? 0 : 1);
    junit_outputs(f, rep);
    for (int s = 0; s < rep->n_sites; s++) {
        const CheckSite *x = &rep->sites[s];
        char name[256], why[160];
        snprintf(name, sizeof name, "%s: %s -> %s accumulation", x->before_name, ir_type_name(x->before_type),
                 ir_type_name(x->after_type));
        bool worse = x->measured && mean(x->after.sum_ulp, x->after.n) > mean(x->before.sum_ulp, x->before.n);
        snprintf(why, sizeof why, "less accurate: max %.3g -> %.3g ulp", x->before.max_ulp, x->after.max_ulp);
        junit_case(f, name, worse ? why : NULL);
    }
    fputs("  </testsuite>\n</testsuites>\n", f);
    return ir_atomic_close(&a, true, err);
}

/* ---- --local */

void check_print_local_head(FILE *out, const char *before_name, const char *after_name, int n)
{
    fprintf(out, "hlo-check --local: %s vs %s: %d region%s where they differ\n", before_name, after_name, n,
            n == 1 ? "" : "s");
}

void check_print_region_head(FILE *out, const CheckRegion *r, const CheckRegionResult *res)
{
    fprintf(out, "region %d/%d in %s: %s: %d -> %d instructions, %d inputs, %d outputs", res->index + 1, res->n,
            r->where, r->what, r->instrs[0], r->instrs[1], r->n_inputs, r->n_outputs);
    if (res->one_group)
        fprintf(out, ", one group of %d of its %d devices stands for all (every collective on the same groups, "
                "no device id)", r->group_size, res->devices);
    fflush(out);
}

void check_print_region_need(FILE *out, const CheckRegionResult *res, bool with_need)
{
    char bytes[32];
    interp_format_bytes(res->need.peak, bytes, sizeof bytes);
    if (with_need)
        fprintf(out, ", %s per rank x %d ranks", bytes, res->ranks);
    fflush(out);        /* said before a region's run, which may be long */
}

void check_print_region_verdict(FILE *out, const CheckRegionResult *res, const CheckReport *rep)
{
    bool precision = res->verdict == CHECK_REGION_PRECISION;
    fprintf(out, ": %s (%d trials, %.1f s)\n",
            precision ? "CHANGES PRECISION (an accumulation type changed here: judged on the whole pair)"
            : rep->equivalent ? (rep->by_accuracy ? "AT LEAST AS ACCURATE" : "EQUIVALENT")
                              : (rep->by_accuracy ? "LESS ACCURATE on free inputs" : "DIFFERS on free inputs"),
            rep->trials_run, res->seconds);
    if (!rep->equivalent && !precision)
        check_print_report(out, rep, "the region before", "the region after");
}

void check_print_region_not_run(FILE *out, const CheckRegionResult *res, int64_t node_memory)
{
    int ranks = res->ranks, region = res->index + 1;
    char bytes[32], lim[32];
    interp_format_bytes(res->need.peak, bytes, sizeof bytes);
    interp_format_bytes(res->limit, lim, sizeof lim);
    if (res->not_run == CHECK_NOT_RUN_P2P) {
        fputs(": NOT RUN: it holds send/recv, which cannot be cut out of the module: check the module whole\n", out);
    } else if (res->not_run == CHECK_NOT_RUN_RANKS) {
        fprintf(out, ": NOT RUN: needs %d ranks, this job has %d; on a machine that has them: mpirun -np %d "
                "hlo-check --local --region=%d ...\n", ranks, res->world, ranks, region);
    } else {
        /* On nodes like this one, as many ranks a node as their need allows. */
        int64_t per_node = res->need.peak > 0 ? node_memory / res->need.peak : 0;
        if (per_node < 1) {
            fprintf(out, ": NOT RUN: needs %d x %s, more than --max-memory=%s per rank (%s), and more than a "
                    "whole node has: on nodes with at least %s each, mpirun -np %d --map-by ppr:1:node hlo-check "
                    "--local --region=%d ...\n", ranks, bytes, lim, res->limit_why, bytes, ranks, region);
            return;
        }
        if (per_node > ranks)
            per_node = ranks;
        long long nodes = (ranks + per_node - 1) / per_node, ppr = (long long)per_node;
        char nb[32];
        interp_format_bytes(node_memory, nb, sizeof nb);
        fprintf(out, ": NOT RUN: needs %d x %s, more than --max-memory=%s per rank (%s); on %lld node%s of %s, "
                "%lld rank%s each: mpirun -np %d --map-by ppr:%lld:node hlo-check --local --region=%d ...\n", ranks,
                bytes, lim, res->limit_why, nodes, nodes == 1 ? "" : "s", nb, ppr, ppr == 1 ? "" : "s", ranks, ppr,
                region);
        fprintf(out, "  with a hostfile of %lld node%s (one line each: NAME slots=%lld): mpirun --hostfile HOSTFILE "
                "-np %d --map-by ppr:%lld:node hlo-check --local --region=%d ...\n", nodes, nodes == 1 ? "" : "s",
                ppr, ranks, ppr, region);
        fprintf(out, "  under Slurm: srun --mpi=pmix --nodes=%lld --ntasks=%d --ntasks-per-node=%lld hlo-check "
                "--local --region=%d ...\n", nodes, ranks, ppr, region);
    }
}

static const char *plural(int n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

void check_print_local_whole(FILE *out, const CheckLocal *l)
{
    fprintf(out, "hlo-check --local: %d region%s differ%s on free inputs, %d change%s precision; checking the "
            "whole pair, which fits, on its own values\n", l->differ, plural(l->differ, "", "s"),
            plural(l->differ, "s", ""), l->precision, plural(l->precision, "s", ""));
}

void check_print_local_verdict(FILE *out, const CheckLocal *l)
{
    char b[32];
    interp_format_bytes(l->whole_need.peak, b, sizeof b);
    if (l->whole_checked) {
        if (l->code == 0 && l->differ)
            fputs("hlo-check --local: the differences do not occur on the module's own values\n", out);
    } else if (l->differ) {
        fprintf(out, "hlo-check: DIFFERENT on free inputs in %d region%s (not confirmed on the module's own "
                "values: the whole pair needs %s per rank)\n", l->differ, plural(l->differ, "", "s"), b);
    } else if (l->precision) {
        fprintf(out, "hlo-check: NOT CHECKED: %d region%s change an accumulation type, which is judged by "
                "accuracy on the whole pair: it needs %s per rank%s\n", l->precision,
                plural(l->precision, "", "s"), b, l->region ? " (and --region checks one region only)" : "");
    } else if (l->not_run) {
        int n = l->equivalent + l->not_run;
        fprintf(out, "hlo-check: NOT CHECKED: %d of %d region%s could not run here (%d equivalent)\n", l->not_run,
                n, plural(n, "", "s"), l->equivalent);
    } else if (l->region) {
        fprintf(out, "hlo-check: EQUIVALENT in region %d (--local --region: the other regions were not checked)\n",
                l->region);
    } else {
        fprintf(out, "hlo-check: EQUIVALENT (--local: %d region%s, each equivalent; what is outside them is "
                "computed alike in both modules)\n", l->equivalent, plural(l->equivalent, "", "s"));
    }
}

/* ---- --shrink */

void check_print_shrinking(FILE *out, const CheckReport *rep, const CheckShrunk *sh)
{
    const CheckShrink *s = &sh->s;
    fprintf(out, "\nhlo-check: shrinking: kept output %d of %d; %d instructions replaced by parameters, %d by "
            "constants; %d unused parameters dropped", rep->diff.output, rep->n_outputs, s->to_parameters,
            s->to_constants, s->parameters_dropped);
    if (sh->element)
        fprintf(out, "; element-wise: cut to element %s of the output, as scalars", sh->where);
    if (sh->box)
        fprintf(out, "; shapes cut to what element %s of the output depends on", sh->where);
    fputc('\n', out);
}

void check_print_shrunk(FILE *out, const CheckShrunk *sh, int world, const char *dir)
{
    const CheckShrink *s = &sh->s;
    fprintf(out, "hlo-check: shrunk from %d + %d to %d + %d instructions (%s)", s->instrs[0][0], s->instrs[1][0],
            s->instrs[0][1], s->instrs[1][1], sh->still ? "still different" : "NOT reproduced: please report this");
    if (sh->alone)
        fprintf(out, " and from %d ranks to 1 (rank %d's inputs alone show it)", world, sh->failing_rank);
    else if (sh->ranks < world)
        fprintf(out, " and from %d ranks to %d (the ranks the failing one hears from, renumbered; it is rank %d)",
                world, sh->ranks, sh->failing_rank);
    fprintf(out, ", written with its inputs and the command to %s/\n", dir);
}
