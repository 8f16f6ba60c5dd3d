/* check.c: are two modules the same function?  Runs both on the same seeded
 * inputs on every rank for every trial and compares every output element;
 * when the rewrite changed a reduction's accumulation type it judges them by
 * accuracy against the f64 oracle instead, and measures each such site. */
#include "check.h"
#include "coll.h"
#include "check_internal.h"
#include "prove_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void check_options_default(CheckOptions *opt)
{
    *opt = (CheckOptions){ .trials = 8, .seed = 0, .dist = CHECK_DIST_MIXED,
                           .tol = { CHECK_AUTO, 0, 0, 0 }, .oracle = -1, .opaque_custom_calls = true };
}

/* Trial t's seed: one splitmix64 step of seed + t, so trials are unrelated
 * streams and trial 0 of seed s is reproducible with hlo-run --seed. */
uint64_t check_trial_seed(uint64_t seed, int trial)
{
    uint64_t z = seed + 0x9e3779b97f4a7c15ull * (uint64_t)(trial + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* ---- One side of the check: a module, its interpreter, what it observes */

/* The values one instruction took during a trial (every execution, in
 * order), kept by the interpreter's observer. */
typedef struct Watch {
    const IrInstr *instr;   /* in the side's module */
    Value **seen;
    int n, cap;
} Watch;

typedef struct Side {
    IrModule *m;            /* owned: the side's copy (after's with the exact probes) */
    Interp *it;
    Watch *watch;           /* before: one per measured site; after: three (value, exact, sum|x|) */
    int n_watch;
} Side;

static void side_observe(void *ctx, const IrInstr *instr, Value *v)
{
    Side *s = ctx;
    for (int i = 0; i < s->n_watch; i++) {
        Watch *w = &s->watch[i];
        if (w->instr != instr)
            continue;
        if (w->n == w->cap) {
            w->cap = w->cap ? 2 * w->cap : 8;
            w->seen = xrealloc(w->seen, (size_t)w->cap * sizeof *w->seen);
        }
        w->seen[w->n++] = value_retain(v);
    }
}

/* Forgets what the side observed in a trial. */
static void side_forget(Side *s)
{
    for (int i = 0; i < s->n_watch; i++) {
        for (int k = 0; k < s->watch[i].n; k++)
            value_release(s->watch[i].seen[k]);
        s->watch[i].n = 0;
    }
}

/* A side running m (copied) and observing, for each measured site, the
 * instruction holding its value (before's or after's probe, as after_side
 * says); the after side also redoes each measured site's reduction exactly
 * and observes that too. */
static bool side_new(Side *s, const IrModule *m, CheckSite *sites, int n_sites, bool after_side, InterpOptions io,
                     Error *err)
{
    s->m = ir_module_copy(m, err);
    if (s->m && after_side && !check_add_exact_probes(s->m, sites, n_sites, err))
        return false;
    if (!s->m)
        return false;
    int n = 0;
    for (int i = 0; i < n_sites; i++)
        n += sites[i].measured * (after_side ? 3 : 1);
    s->watch = xcalloc((size_t)n + 1, sizeof *s->watch);
    for (int i = 0; i < n_sites; i++)
        if (sites[i].measured)
            s->watch[s->n_watch++].instr =
                check_site_instr(s->m, &sites[i], after_side ? sites[i].after_probe : sites[i].before_probe);
    for (int i = 0; after_side && i < n_sites; i++)
        if (sites[i].measured) {
            s->watch[s->n_watch++].instr = check_site_instr(s->m, &sites[i], sites[i].exact_probe);
            s->watch[s->n_watch++].instr = check_site_instr(s->m, &sites[i], sites[i].abs_sum_probe);
        }
    for (int i = 0; i < s->n_watch; i++)
        if (!s->watch[i].instr)
            return error_set(err, ERR_INTERNAL, s->m->entry->loc, "probe %d of a site is not in the module", i);
    if (s->n_watch) {
        io.observe = side_observe;
        io.observe_ctx = s;
    }
    s->it = interp_new(s->m, &io, err);
    return s->it != NULL;
}

static void side_free(Side *s)
{
    side_forget(s);
    for (int i = 0; i < s->n_watch; i++)
        free(s->watch[i].seen);
    free(s->watch);
    interp_free(s->it);
    ir_module_free(s->m);
}

static void name_leaves(const IrShape *s, CheckOutput *out, int *k)
{
    if (s->type != IR_TYPE_TUPLE) {
        snprintf(out[(*k)++].shape, sizeof out->shape, "%s", ir_shape_str(s));
        return;
    }
    for (int i = 0; i < s->n_elements; i++)
        name_leaves(s->elements[i], out, k);
}

static int shape_leaves(const IrShape *s)
{
    if (s->type != IR_TYPE_TUPLE)
        return 1;
    int n = 0;
    for (int i = 0; i < s->n_elements; i++)
        n += shape_leaves(s->elements[i]);
    return n;
}

/* ---- Input errors found before running */

static bool signatures_match(const IrModule *a, const IrModule *b, Error *err)
{
    const IrComputation *ea = a->entry, *eb = b->entry;
    int n = ea->n_params < eb->n_params ? ea->n_params : eb->n_params;
    for (int i = 0; i < n; i++) {
        const IrShape *sa = ea->params[i]->shape, *sb = eb->params[i]->shape;
        if (!ir_shape_equal(sa, sb)) {
            char first[160];
            snprintf(first, sizeof first, "%s", ir_shape_str(sa));
            return error_set(err, ERR_MISMATCH, eb->params[i]->info->loc,
                             "parameter %d differs: %s is %s in the first module, %s is %s in the second", i,
                             ea->params[i]->name, first, eb->params[i]->name, ir_shape_str(sb));
        }
    }
    if (ea->n_params != eb->n_params)
        return error_set(err, ERR_MISMATCH, eb->loc, "the first module takes %d parameters, the second %d",
                         ea->n_params, eb->n_params);
    if (!ir_shape_equal(ea->root->shape, eb->root->shape)) {
        char first[160];
        snprintf(first, sizeof first, "%s", ir_shape_str(ea->root->shape));
        return error_set(err, ERR_MISMATCH, eb->root->info->loc, "the results differ: %s in the first module, %s in the second",
                         first, ir_shape_str(eb->root->shape));
    }
    return true;
}

/* ---- State of a run */

typedef struct Run {
    Coll *c;
    const CheckOptions *opt;
    CheckReport *rep;
    Side before, after, oracle;
    bool have_oracle;
    CheckTolerance tol;
    int n_out;              /* leaves of the original result */
    int n_probes;           /* measured sites */
    int rank;
    CheckDist trial_dist;   /* the kind the current trial's inputs are drawn from */
    bool lean;              /* before's outputs kept as a digest only, for memory (digest.c) */
    InterpOptions io;       /* what the sides run with (the proof runs so too) */
} Run;

static bool resolve_mode(Run *r, const IrModule *before, const IrModule *after)
{
    CheckReport *rep = r->rep;
    rep->n_sites = check_find_sites(before, after, &rep->sites);
    rep->precision_changing = rep->n_sites > 0;
    r->tol = r->opt->tol;
    rep->by_accuracy = r->tol.mode == CHECK_AUTO && rep->precision_changing;
    if (r->tol.mode == CHECK_AUTO)
        r->tol.mode = CHECK_EXACT;
    rep->mode = rep->by_accuracy ? CHECK_AUTO : r->tol.mode;
    rep->oracle = r->opt->oracle == 1 || (r->opt->oracle == -1 && rep->by_accuracy);
    /* Accuracy is measured on values of the program's kind, not on the
     * boundary kinds, where both sides' errors are infinities and NaNs. */
    rep->dist = r->opt->dist == CHECK_DIST_MIXED && rep->by_accuracy ? CHECK_DIST_UNIFORM : r->opt->dist;
    return true;
}

/* The sites' group sizes for the devices of this run. */
static void set_group_sizes(CheckReport *rep, const IrModule *after)
{
    for (int s = 0; s < rep->n_sites; s++) {
        const IrInstr *r = check_site_instr(after, &rep->sites[s], rep->sites[s].after_reduction);
        if (r)
            rep->sites[s].group_size = coll_group_size(r, rep->replicas, rep->partitions);
    }
}

/* A trial holds the inputs, before's outputs while after runs, both while
 * the oracle (its own widened copy of the inputs) runs. */
void check_pair_need(const IrModule *before, const IrModule *after, const IrModule *oracle, InterpMemory *out)
{
    InterpMemory b, a, o = { 0 }, need;
    interp_estimate_memory(before, &b);
    interp_estimate_memory(after, &a);
    if (oracle)
        interp_estimate_memory(oracle, &o);
    need = b;
    if (a.peak + b.outputs > need.peak) {
        need = a;
        need.peak = a.peak + b.outputs;
    }
    if (oracle && b.parameters + b.outputs + a.outputs + o.peak > need.peak) {
        need = o;
        need.peak = b.parameters + b.outputs + a.outputs + o.peak;
    }
    *out = need;
}

void check_pair_lean_need(const IrModule *before, const IrModule *after, InterpMemory *out)
{
    InterpMemory b, a;
    interp_estimate_memory(before, &b);
    interp_estimate_memory(after, &a);
    *out = a.peak > b.peak ? a : b;
}

/* When both modules' outputs do not fit beside each other, a bitwise
 * comparison keeps before's as a digest (r->lean). */
static bool fits_memory(Run *r, Error *err)
{
    if (r->opt->max_memory <= 0)
        return true;
    InterpMemory need, lean;
    check_pair_need(r->before.m, r->after.m, r->have_oracle ? r->oracle.m : NULL, &need);
    if (need.peak <= r->opt->max_memory)
        return true;
    check_pair_lean_need(r->before.m, r->after.m, &lean);
    if (!r->have_oracle && !r->rep->by_accuracy && r->tol.mode == CHECK_EXACT && lean.peak <= r->opt->max_memory) {
        r->lean = r->rep->by_digest = true;
        return true;
    }
    return check_memory_fits("checking the pair", &need, r->opt->max_memory, r->opt->max_memory_why, err);
}


static bool setup(Run *r, const IrModule *before, const IrModule *after, Error *err)
{
    InterpDevice dev;
    char note[256];
    CheckReport *rep = r->rep;
    if (!signatures_match(before, after, err) ||
        !coll_setup_devices(r->c, before, r->opt->replicas, r->opt->partitions, &dev, note, sizeof note, err))
        return false;
    if (note[0] && r->rank == 0)
        fprintf(stderr, "%s\n", note);
    rep->world = dev.world;
    rep->replicas = dev.replica_count;
    rep->partitions = dev.num_partitions;
    resolve_mode(r, before, after);
    set_group_sizes(rep, after);
    /* The oracle runs the modules widened to f64: an opaque custom call
     * there is fed other bytes and gives unrelated outputs, so whatever
     * depends on one would be judged against noise. */
    /* Judging by accuracy without the oracle would judge nothing. */
    if (rep->by_accuracy && !rep->oracle)
        return error_set(err, ERR_MISMATCH, after->entry->loc,
                         "a reduction's accumulation type changed, so the pair is judged by accuracy against the f64 "
                         "oracle: --oracle=none goes with --compare=exact, tol or ulp");
    if (rep->oracle && rep->n_opaque)
        return error_set(err, ERR_UNSUPPORTED, before->entry->loc,
                         "the f64 oracle cannot see through opaque custom calls (%s%s): no accuracy judgement; "
                         "compare with --compare=exact, tol or ulp, or --oracle=none", rep->opaque[0],
                         rep->n_opaque > 1 ? ", ..." : "");
    int n_probes = 0;
    for (int i = 0; i < rep->n_sites; i++) {
        CheckSite *site = &rep->sites[i];
        site->measured = rep->oracle && site->before_probe[0];
        n_probes += site->measured;
    }
    InterpOptions io = { .device = dev, .comm = coll_comm(r->c),
                         .opaque = r->opt->opaque_custom_calls ? check_opaque_custom_call : NULL };
    r->n_probes = n_probes;
    r->io = io;
    bool ok = side_new(&r->before, before, rep->sites, rep->n_sites, false, io, err) &&
              side_new(&r->after, after, rep->sites, rep->n_sites, true, io, err);
    if (ok && rep->oracle) {
        IrModule *wide = check_widen_module(r->before.m, err);
        ok = wide && (r->have_oracle = side_new(&r->oracle, wide, NULL, 0, false, io, err));
        ir_module_free(wide);
    }
    ok = ok && fits_memory(r, err);
    r->n_out = shape_leaves(before->entry->root->shape);
    rep->n_outputs = r->n_out;
    rep->outputs = xcalloc((size_t)r->n_out + 1, sizeof *rep->outputs);
    int k = 0;
    name_leaves(before->entry->root->shape, rep->outputs, &k);
    return ok;
}

/* ---- One trial */


/* The first difference, element index of output out: the two elements at
 * before_elem and after_elem (of the output's type). */
static void note_difference_at(Run *r, int trial, uint64_t seed, int out, const IrShape *s, const void *before_elem,
                               const void *after_elem, int64_t index)
{
    CheckDifference *d = &r->rep->diff;
    if (d->found)
        return;
    *d = (CheckDifference){ .found = true, .trial = trial, .rank = r->rank, .output = out, .seed = seed,
                            .dist = r->trial_dist, .index = index };
    check_where_text(s, index, d->where, sizeof d->where);
    ir_elem_format(s->type, before_elem, true, d->before, sizeof d->before);
    ir_elem_format(s->type, after_elem, true, d->after, sizeof d->after);
}

static void note_difference(Run *r, int trial, uint64_t seed, int out, Value *b, Value *a, int64_t index)
{
    size_t e = (size_t)ir_type_storage_bytes(b->shape->type);
    note_difference_at(r, trial, seed, out, b->shape, (const char *)b->data + (size_t)index * e,
                       (const char *)a->data + (size_t)index * e, index);
    CheckDifference *d = &r->rep->diff;
    if (d->index == index && d->output == out && d->trial == trial) {
        if (!check_within_sizes(b, index))
            snprintf(d->before, sizeof d->before, "none (past its runtime size)");
        if (!check_within_sizes(a, index))
            snprintf(d->after, sizeof d->after, "none (past its runtime size)");
    }
}

static void compare_outputs(Run *r, int trial, uint64_t seed, Value **lb, Value **la)
{
    for (int i = 0; i < r->n_out; i++) {
        int64_t k = check_first_difference(lb[i], la[i], &r->tol);
        if (k >= 0) {
            note_difference(r, trial, seed, i, lb[i], la[i], k);
            return;
        }
    }
}

/* A site's error against the exact sum, in ulps of its value type at the
 * magnitude of the terms (sum|x_i|): near-cancelling sums would otherwise
 * turn a tiny absolute error into an enormous count of ulps of a tiny
 * result.  Also the largest error / (gamma(n-1) * sum|x_i|) over the
 * elements, into *bound, with gamma(k) = k*u / (1 - k*u) and u the unit
 * roundoff of the accumulation type acc: how much of the textbook bound of
 * an n-term sequential sum the observed error uses. */
static void site_error_add(CheckAccuracy *acc, double *bound, const Value *v, const Value *exact,
                           const Value *abs_sum, IrElemType acc_type, int n_terms)
{
    double u = ldexp(1.0, -(ir_type_info[acc_type].mantissa_bits + 1)), k = (double)(n_terms > 1 ? n_terms - 1 : 0);
    double gamma = k * u / (1 - k * u), worst = *bound;
    const double *e = exact->data, *a = abs_sum->data;
    IrElemType t = v->shape->type;
    double *xs = check_values_f64(v);
    CheckAccuracy r = *acc;
    for (int64_t i = 0, n = value_elements(v); i < n; i++) {
        double x = xs[i], err = fabs(x - e[i]), bnd = gamma * a[i];
        r.n++;
        if (!isfinite(x) || !isfinite(e[i])) {     /* a miss unless both are the same non-finite */
            r.nonfinite += !(x == e[i] || (isnan(x) && isnan(e[i])));
            continue;
        }
        if (bnd > 0 && isfinite(err) && err / bnd > worst)
            worst = err / bnd;
        double ulp = err / check_ulp_of(t, a[i]);
        r.sum_abs += err;
        r.sum_ulp += ulp;
        r.max_abs = fmax(r.max_abs, err);
        r.max_ulp = fmax(r.max_ulp, ulp);
        r.max_rel = fmax(r.max_rel, a[i] > 0 ? err / a[i] : 0);
    }
    *acc = r;
    *bound = worst;
    free(xs);
}

static void judge_outputs(Run *r, Value **lb, Value **la, Value **lo)
{
    for (int i = 0; i < r->n_out; i++) {
        if (!ir_type_is_float(lb[i]->shape->type))
            continue;
        CheckOutput *o = &r->rep->outputs[i];
        check_judge_add(&o->before, &o->after, &o->duel, lb[i], la[i], lo[i]);
    }
    /* Each execution of a site (every iteration of the loop it sits in) is
     * measured against its own exact reduction. */
    int probe = 0;
    for (int s = 0; s < r->rep->n_sites; s++) {
        CheckSite *site = &r->rep->sites[s];
        if (!site->measured)
            continue;
        const Watch *wb = &r->before.watch[probe], *wa = &r->after.watch[probe],
                    *we = &r->after.watch[r->n_probes + 2 * probe], *ws = &r->after.watch[r->n_probes + 2 * probe + 1];
        probe++;
        if (wb->n != wa->n || we->n != wa->n || ws->n != wa->n) {
            site->unmatched = true;
            continue;
        }
        site->executions += wa->n;
        for (int k = 0; k < wa->n; k++) {
            site_error_add(&site->before, &site->before_bound, wb->seen[k], we->seen[k], ws->seen[k],
                           site->before_type, site->group_size);
            site_error_add(&site->after, &site->after_bound, wa->seen[k], we->seen[k], ws->seen[k],
                           site->after_type, site->group_size);
        }
    }
}

static bool run_side(Side *s, uint64_t seed, Value **inputs, int n, Value **out, Error *err)
{
    interp_set_rng_seed(s->it, seed);      /* the trial's seed, as hlo-run --seed gives it */
    for (int i = 0; i < n; i++)
        value_retain(inputs[i]);
    return interp_run(s->it, inputs, n, out, err);
}

static bool run_oracle(Run *r, uint64_t seed, Value **inputs, int n, Value **out, Error *err)
{
    interp_set_rng_seed(r->oracle.it, seed);
    Value **wide = xcalloc((size_t)n + 1, sizeof *wide);
    bool ok = true;
    for (int i = 0; i < n && ok; i++)
        ok = (wide[i] = check_widen_value(inputs[i], r->oracle.m->entry->params[i]->shape, err)) != NULL;
    if (ok)
        ok = interp_run(r->oracle.it, wide, n, out, err);
    else
        for (int i = 0; i < n; i++)
            value_release(wide[i]);
    free(wide);
    return ok;
}

/* This rank's inputs for a trial: the given ones, or drawn from seed as
 * kind dist. */
static bool trial_inputs(Run *r, uint64_t seed, CheckDist dist, Value **in, Error *err)
{
    const IrModule *m = r->before.m;
    if (!r->opt->inputs)
        return check_random_inputs(m, r->rank, seed, dist, in, err);
    if (r->opt->n_inputs != m->entry->n_params) {
        error_set(err, ERR_MISMATCH, m->entry->loc, "%d inputs given for %d parameters", r->opt->n_inputs,
                  m->entry->n_params);
        return false;
    }
    for (int i = 0; i < r->opt->n_inputs; i++)
        in[i] = value_retain(r->opt->inputs[i]);
    return true;
}

/* A lean trial: before's outputs as a digest, freed before after runs; on
 * a block whose hashes differ, that block of after's output is kept and
 * before is run again to find the first element that differs in it. */
static bool lean_trial(Run *r, int t, uint64_t seed, Value **in, int n, Error *err)
{
    int cap = r->n_out + 1;
    Value *vb = NULL, *va = NULL, **lb = xcalloc((size_t)cap, sizeof *lb), **la = xcalloc((size_t)cap, sizeof *la);
    CheckDigest *d = NULL;
    bool ok = run_side(&r->before, seed, in, n, &vb, err);
    if (ok) {
        value_leaves(vb, lb, cap);
        d = check_digest_new(lb, r->n_out);
        value_release(vb);
        vb = NULL;
        ok = run_side(&r->after, seed, in, n, &va, err);
    }
    int leaf;
    int64_t first, count;
    if (ok && (value_leaves(va, la, cap), check_digest_first_mismatch(d, la, r->n_out, &leaf, &first, &count))) {
        const IrShape *s = la[leaf]->shape;
        size_t e = (size_t)ir_type_storage_bytes(s->type);
        char *block = xmalloc((size_t)count * e + 1);
        memcpy(block, (const char *)la[leaf]->data + (size_t)first * e, (size_t)count * e);
        value_release(va);
        va = NULL;
        ok = run_side(&r->before, seed, in, n, &vb, err);
        if (ok) {
            value_leaves(vb, lb, cap);
            const char *bb = (const char *)lb[leaf]->data + (size_t)first * e;
            int64_t k = 0;
            while (k < count && check_elements_agree(s->type, bb + (size_t)k * e, block + (size_t)k * e, &r->tol))
                k++;
            if (k < count)
                note_difference_at(r, t, seed, leaf, s, bb + (size_t)k * e, block + (size_t)k * e, first + k);
            else
                ok = error_set(err, ERR_INTERNAL, r->before.m->entry->loc,
                               "output %d: digests differ but no element does (elements %lld..%lld)", leaf,
                               (long long)first, (long long)(first + count - 1));
        }
        free(block);
    }
    check_digest_free(d);
    value_release(vb);
    value_release(va);
    free(lb);
    free(la);
    return ok;
}

static bool trial(Run *r, int t, Error *err)
{
    const IrModule *m = r->before.m;
    int n = m->entry->n_params, cap = r->n_out + 1;
    uint64_t seed = check_trial_seed(r->opt->seed, t);
    r->trial_dist = check_trial_dist(r->rep->dist, t);
    Value **in = xcalloc((size_t)n + 1, sizeof *in), *vb = NULL, *va = NULL, *vo = NULL;
    Value **lb = xcalloc((size_t)cap, sizeof *lb), **la = xcalloc((size_t)cap, sizeof *la),
          **lo = xcalloc((size_t)cap, sizeof *lo);
    bool ok = trial_inputs(r, seed, r->trial_dist, in, err);
    if (ok && r->lean) {
        ok = lean_trial(r, t, seed, in, n, err);
        for (int i = 0; i < n; i++)
            value_release(in[i]);
        free(in);
        free(lb);
        free(la);
        free(lo);
        return ok;
    }
    ok = ok && run_side(&r->before, seed, in, n, &vb, err) && run_side(&r->after, seed, in, n, &va, err) &&
         (!r->have_oracle || run_oracle(r, seed, in, n, &vo, err));
    if (ok) {
        value_leaves(vb, lb, cap);
        value_leaves(va, la, cap);
        if (!r->rep->by_accuracy)
            compare_outputs(r, t, seed, lb, la);
        if (vo) {
            value_leaves(vo, lo, cap);
            judge_outputs(r, lb, la, lo);
        }
    }
    side_forget(&r->before);
    side_forget(&r->after);
    for (int i = 0; i < n; i++)
        value_release(in[i]);
    value_release(vb);
    value_release(va);
    value_release(vo);
    free(in);
    free(lb);
    free(la);
    free(lo);
    return ok;
}

/* ---- Agreement across ranks */

/* The difference with the lowest (trial, rank) becomes everyone's. */
static void agree_difference(Run *r)
{
    CheckDifference *d = &r->rep->diff;
    int64_t key = d->found ? (int64_t)d->trial * 65536 + d->rank : INT64_MAX;
    coll_allreduce_i64(r->c, &key, 1, COLL_MIN);
    if (key == INT64_MAX)
        return;
    int owner = (int)(key % 65536);
    coll_bcast(r->c, d, sizeof *d, owner);
}

static void agree_accuracy(Run *r, CheckAccuracy *a)
{
    double sums[3] = { a->sum_abs, a->sum_ulp, a->sum_abs_paired }, maxes[3] = { a->max_abs, a->max_rel, a->max_ulp };
    int64_t counts[2] = { a->n, a->nonfinite };
    coll_allreduce_f64(r->c, sums, 3, COLL_SUM);
    coll_allreduce_f64(r->c, maxes, 3, COLL_MAX);
    coll_allreduce_i64(r->c, counts, 2, COLL_SUM);
    *a = (CheckAccuracy){ .n = counts[0], .max_abs = maxes[0], .sum_abs = sums[0], .max_rel = maxes[1],
                          .max_ulp = maxes[2], .sum_ulp = sums[1], .nonfinite = counts[1], .paired = a->paired,
                          .sum_abs_paired = sums[2] };
}

static void agree_all(Run *r)
{
    CheckReport *rep = r->rep;
    agree_difference(r);
    for (int i = 0; i < rep->n_outputs; i++) {
        CheckOutput *o = &rep->outputs[i];
        agree_accuracy(r, &o->before);
        agree_accuracy(r, &o->after);
        int64_t duel[3] = { o->duel.better, o->duel.equal, o->duel.worse };
        coll_allreduce_i64(r->c, duel, 3, COLL_SUM);
        o->duel = (CheckDuel){ duel[0], duel[1], duel[2] };
    }
    for (int s = 0; s < rep->n_sites; s++) {
        CheckSite *site = &rep->sites[s];
        agree_accuracy(r, &site->before);
        agree_accuracy(r, &site->after);
        double bounds[2] = { site->before_bound, site->after_bound };
        coll_allreduce_f64(r->c, bounds, 2, COLL_MAX);
        site->before_bound = bounds[0];
        site->after_bound = bounds[1];
        int64_t runs[2] = { site->executions, site->unmatched };
        coll_allreduce_i64(r->c, runs, 2, COLL_SUM);
        site->executions = runs[0];
        site->unmatched = runs[1] > 0;
        site->measured = site->measured && !site->unmatched;
    }
}

/* After is at least as accurate as before: on every output and every site,
 * its mean absolute error against the oracle is no larger and it has no more
 * non-finite misses.  (The mean absolute error, not the mean ulps: ulps of a
 * near-zero oracle value are huge for any error and would decide alone.)
 * The means are over every element each side got finite, so an element
 * only before missed counts against after: conservative, as a verdict of
 * "at least as accurate" must be (the report adds the means over the
 * elements both got finite). */
bool check_no_less_accurate(const CheckAccuracy *b, const CheckAccuracy *a)
{
    double mb = b->n ? b->sum_abs / (double)b->n : 0, ma = a->n ? a->sum_abs / (double)a->n : 0;
    return ma <= mb * (1 + 1e-9) + 1e-300 && a->nonfinite <= b->nonfinite;
}

bool check_output_no_less_accurate(const CheckOutput *o, bool sites_decide)
{
    double changed = (double)(o->duel.worse + o->duel.better);
    return check_no_less_accurate(&o->before, &o->after) ||
           (sites_decide && o->after.nonfinite <= o->before.nonfinite &&
            (double)(o->duel.worse - o->duel.better) <= 3 * sqrt(changed));
}

static void verdict(CheckReport *rep)
{
    bool sites_decide = rep->n_sites > 0;
    for (int s = 0; s < rep->n_sites; s++)
        sites_decide &= rep->sites[s].measured && rep->sites[s].executions > 0 &&
                        check_no_less_accurate(&rep->sites[s].before, &rep->sites[s].after);
    rep->accuracy_ok = true;
    for (int i = 0; i < rep->n_outputs; i++) {
        CheckOutput *o = &rep->outputs[i];
        bool ok = check_output_no_less_accurate(o, sites_decide);
        o->by_sites = ok && !check_no_less_accurate(&o->before, &o->after);
        rep->accuracy_ok &= ok;
    }
    for (int s = 0; s < rep->n_sites; s++)
        rep->accuracy_ok &= check_no_less_accurate(&rep->sites[s].before, &rep->sites[s].after);
    rep->equivalent = rep->by_accuracy ? rep->accuracy_ok : !rep->diff.found;
}

/* ---- Counterexamples */

static bool save_inputs(Run *r, const char *dir, Error *err)
{
    const IrModule *m = r->before.m;
    int n = m->entry->n_params;
    if (!ir_make_dirs(dir, err))
        return false;
    Value **in = xcalloc((size_t)n + 1, sizeof *in);
    bool ok = trial_inputs(r, r->rep->diff.seed, r->rep->diff.dist, in, err);
    for (int i = 0; i < n && ok; i++)
        ok = npy_write_param(dir, i, r->rank, in[i], err);
    for (int i = 0; i < n; i++)
        value_release(in[i]);
    free(in);
    return ok;
}

/* ---- The proof (prove.c) on trial 0's inputs, and its status */

static bool prove(Run *r, const IrModule *before, const IrModule *after, Error *err)
{
    CheckReport *rep = r->rep;
    CheckProof *p = &rep->proof;
    if (rep->precision_changing) {
        p->status = CHECK_PROOF_NOT_EXACT;
        snprintf(p->why, sizeof p->why, "%d reduction%s accumulate%s in another type after the rewrite (%s): a "
                 "precision change, judged by accuracy, not proved", rep->n_sites, rep->n_sites == 1 ? "" : "s",
                 rep->n_sites == 1 ? "s" : "", rep->sites[0].before_name);
        return true;
    }
    if (check_prove_unsupported(before, rep->replicas, rep->partitions, p->why, sizeof p->why) ||
        check_prove_unsupported(after, rep->replicas, rep->partitions, p->why, sizeof p->why)) {
        p->status = CHECK_PROOF_NOT_PROVED;
        return true;
    }
    int64_t need = check_prove_need(before, after, rep->replicas, rep->partitions);
    if (r->opt->max_memory > 0 && need > r->opt->max_memory) {
        char a[32], b[32];
        interp_format_bytes(need, a, sizeof a);
        interp_format_bytes(r->opt->max_memory, b, sizeof b);
        snprintf(p->why, sizeof p->why, "the proof would need an estimated %s per rank (values with 16-byte hashes "
                 "beside them), over the %s this rank may use (%s): not run", a, b,
                 r->opt->max_memory_why ? r->opt->max_memory_why : "--max-memory");
        p->status = CHECK_PROOF_NOT_PROVED;
        return true;
    }
    int n = before->entry->n_params;
    Value **in = xcalloc((size_t)n + 1, sizeof *in);
    bool ok = trial_inputs(r, check_trial_seed(r->opt->seed, 0), check_trial_dist(rep->dist, 0), in, err) &&
              check_prove_pair(r->c, before, after, &r->io, in, n, p, err);
    for (int i = 0; i < n; i++)
        value_release(in[i]);
    free(in);
    if (!ok)
        return false;
    if (!p->differs && rep->diff.found)
        return error_set(err, ERR_INTERNAL, after->entry->loc,
                         "--prove: every output hash is equal, yet trial %d differs at output %d %s on rank %d: a "
                         "hashing rule is unsound (please report this module pair)", rep->diff.trial,
                         rep->diff.output, rep->diff.where, rep->diff.rank);
    p->status = !p->differs ? CHECK_PROOF_PROVED : rep->diff.found ? CHECK_PROOF_REFUTED : CHECK_PROOF_NOT_PROVED;
    if (p->status == CHECK_PROOF_NOT_PROVED)
        snprintf(p->why, sizeof p->why, "the two compute different expressions (%lld output element%s on rank %d "
                 "first), yet no trial found a bitwise difference", (long long)p->n_differ,
                 p->n_differ == 1 ? "" : "s", p->rank);
    return true;
}

/* ---- The whole check */

static void progress(const Run *r, int done)
{
    if (r->opt->progress && r->rank == 0 && isatty(2))
        fprintf(stderr, "\rhlo-check: trial %d/%d%s", done, r->opt->trials, done == r->opt->trials ? "\n" : "");
}

/* The custom-call targets of either module that run as opaque functions. */
static void note_opaque(CheckReport *rep, const IrModule *before, const IrModule *after)
{
    const int max = (int)(sizeof rep->opaque / sizeof rep->opaque[0]);
    rep->n_opaque = interp_unknown_custom_calls(before, rep->opaque, max);
    const char *more[16];
    int n = interp_unknown_custom_calls(after, more, max);
    for (int i = 0; i < n && rep->n_opaque < max; i++) {
        bool seen = false;
        for (int k = 0; k < rep->n_opaque && !seen; k++)
            seen = strcmp(rep->opaque[k], more[i]) == 0;
        if (!seen)
            rep->opaque[rep->n_opaque++] = more[i];
    }
}

bool check_modules(Coll *c, const IrModule *before, const IrModule *after, const CheckOptions *opt,
                   CheckReport *rep, Error *err)
{
    memset(rep, 0, sizeof *rep);
    Run r = { .c = c, .opt = opt, .rep = rep, .rank = coll_rank(c) };
    rep->inputs_given = opt->inputs != NULL;
    if (opt->opaque_custom_calls)
        note_opaque(rep, before, after);
    bool ok = setup(&r, before, after, err);
    for (int t = 0; ok && t < opt->trials; t++) {
        ok = trial(&r, t, err);
        rep->trials_run = t + 1;
        progress(&r, t + 1);
        /* Stop at the first difference anywhere: every rank must agree. */
        if (ok && !rep->by_accuracy && !coll_all_ok(c, !rep->diff.found))
            break;
    }
    if (ok) {
        agree_all(&r);
        verdict(rep);
        if (opt->prove)
            ok = prove(&r, before, after, err);
        if (opt->save_dir && rep->diff.found)
            ok = save_inputs(&r, opt->save_dir, err);
    }
    side_free(&r.before);
    side_free(&r.after);
    if (r.have_oracle)
        side_free(&r.oracle);
    return ok;
}

void check_report_free(CheckReport *rep)
{
    free(rep->outputs);
    free(rep->sites);
    memset(rep, 0, sizeof *rep);
}
