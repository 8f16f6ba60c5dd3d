/* locate.c: the first instruction whose values differ (check.h), for the
 * picture of a pair that is not equivalent.  The check says which output
 * element differs; the regions (local_regions.c) say where the modules
 * compute differently.  The pair map names, for each instruction of after
 * outside the regions, the instruction of before that computes the same
 * value (the same op on corresponding operands), and each region names
 * the values its two versions hand on: every such pair is a value the
 * rewrite claims unchanged.  Running both modules once more on the failing
 * trial's inputs and comparing those pairs in before's order finds the
 * first claim that fails: the instruction to look at.  (A pair of the
 * region's inputs that the correspondence paired, add(p, q) against
 * add(q, p), is no claim: only the values a region computes itself are.)
 *
 * Two runs: the first keeps a hash of every watched value (the first
 * MAX_EXECUTIONS executions of each, for loop bodies), which is all a
 * module as large as the check could run needs; the second keeps the
 * values of the first few pairs whose hashes differ, to compare them under
 * the check's comparison and report the element. */
#include "check_internal.h"
#include "coll.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum {
    MAX_EXECUTIONS = 16,        /* of one instruction (a loop body's, per iteration) */
    MAX_SUSPECTS = 8,           /* pairs whose values the second run keeps */
};
#define SUSPECT_BYTES ((int64_t)1 << 30)  /* ... while they hold at most this much (but one always) */

/* One claimed pair, and where it sits in the order "first" means. */
typedef struct Pair {
    int region, output;         /* a region's output pair; output -1: computed alike outside the regions,
                                   -2: the same name in a region around an accumulation change */
    int ids[2];
    int comp_order, pos;        /* its computation's place among the regions'; its place in before's */
} Pair;

static int cmp_pair(const void *a, const void *b)
{
    const Pair *x = a, *y = b;
    if (x->comp_order != y->comp_order)
        return x->comp_order < y->comp_order ? -1 : 1;
    if (x->pos != y->pos)
        return x->pos < y->pos ? -1 : 1;
    return (x->output < y->output) - (x->output > y->output);
}

/* ---- The claims */

typedef struct Claims {
    Pair *p;
    int n, cap;
} Claims;

static void add(Claims *cl, Pair p)
{
    if (cl->n == cl->cap) {
        cl->cap = cl->cap ? 2 * cl->cap : 64;
        cl->p = xrealloc(cl->p, (size_t)cl->cap * sizeof *cl->p);
    }
    cl->p[cl->n++] = p;
}

/* below[i] for c->instrs[i]: i is one of the sites' reductions or reads
 * one, so its value differs by design in a pair judged by accuracy.  In a
 * loop body (one tuple parameter, a tuple root) what the root hands on
 * comes back as the next iteration's state: a state element whose root
 * operand is below is below too, to a fixed point. */
static bool *below_sites(const IrComputation *c, const CheckSite *sites, int n_sites)
{
    bool *below = xcalloc((size_t)c->n_instrs + 1, sizeof *below);
    int *pos = xcalloc((size_t)c->module->next_instr_id + 1, sizeof *pos);
    const IrInstr *root = c->root;
    bool loop = c->n_params == 1 && root && root->op == IR_OP_TUPLE && c->params[0]->shape->type == IR_TYPE_TUPLE;
    for (bool changed = true; changed;) {
        changed = false;
        for (int i = 0; i < c->n_instrs; i++) {
            const IrInstr *x = c->instrs[i];
            pos[x->id] = i + 1;
            if (below[i])
                continue;
            for (int k = 0; k < n_sites && !below[i]; k++) {
                size_t len = strcspn(sites[k].before_name, "[");
                below[i] = strcmp(sites[k].comp, c->name) == 0 && strlen(x->name) == len &&
                           strncmp(x->name, sites[k].before_name, len) == 0;
            }
            for (int o = 0; o < x->n_operands && !below[i]; o++)
                below[i] = pos[x->operands[o]->id] && below[pos[x->operands[o]->id] - 1];
            int64_t index;
            if (!below[i] && loop && n_sites > 0 && check_gte_of_param(x, c, &index) && index < root->n_operands) {
                const IrInstr *back = root->operands[index];
                below[i] = pos[back->id] && below[pos[back->id] - 1];
            }
            changed |= below[i];
        }
    }
    free(pos);
    return below;
}

/* The claims of one computation pair (that of region r0, order), before's
 * schedule giving pos.  With sites (a pair judged by accuracy), what reads
 * a site's reduction is left out, and a region holding a site claims,
 * instead of its outputs, its instructions that keep their name and shape. */
static void claims_of(const CheckPairMap *map, int r0, int order, const CheckSite *sites, int n_sites, Claims *cl)
{
    const IrComputation *cb = map->regions[r0].comp[0], *ca = map->regions[r0].comp[1];
    int *pos = xcalloc((size_t)cb->module->next_instr_id + 1, sizeof *pos);
    for (int i = 0; i < cb->n_instrs; i++)
        pos[cb->instrs[i]->id] = i + 1;
    bool *below = below_sites(cb, sites, n_sites);
    /* Computed alike outside the regions. */
    for (int i = 0; i < ca->n_instrs; i++) {
        const IrInstr *y = ca->instrs[i];
        int b = map->before_of[y->id] - 1;
        if (b >= 0 && pos[b] && !below[pos[b] - 1] && !map->region_of[1][y->id] && ir_shape_is_array(y->shape))
            add(cl, (Pair){ -1, -1, { b, y->id }, order, pos[b] - 1 });
    }
    for (int r = r0; r < map->n_regions; r++) {
        const CheckRegion *g = &map->regions[r];
        if (g->comp[0] != cb || g->comp[1] != ca)
            continue;
        if (!check_region_holds_site(g, sites, n_sites)) {
            /* Its outputs that it computes itself. */
            for (int j = 0; j < g->n_outputs; j++) {
                int b = g->outputs[0][j];
                if (pos[b] && map->region_of[0][b] == r + 1 && !below[pos[b] - 1])
                    add(cl, (Pair){ r, j, { b, g->outputs[1][j] }, order, pos[b] - 1 });
            }
            continue;
        }
        for (int i = 0; i < g->n_members[0]; i++) {
            int p = pos[g->members[0][i]] - 1;
            const IrInstr *x = p >= 0 ? cb->instrs[p] : NULL;
            const IrInstr *y = x ? ir_computation_find(ca, x->name) : NULL;
            if (y && !below[p] && map->region_of[1][y->id] == r + 1 && ir_shape_is_array(x->shape) &&
                ir_shape_equal(x->shape, y->shape))
                add(cl, (Pair){ r, -2, { x->id, y->id }, order, p });
        }
    }
    free(below);
    free(pos);
}

/* Every claim, sorted: computation pairs in the map's order (the entry's
 * first), then before's schedule. */
static Pair *list_claims(const CheckPairMap *map, const CheckSite *sites, int n_sites, int *n_out)
{
    Claims cl = { 0 };
    for (int r = 0; r < map->n_regions; r++) {
        bool seen = false;
        for (int q = 0; q < r && !seen; q++)
            seen = map->regions[q].comp[0] == map->regions[r].comp[0] &&
                   map->regions[q].comp[1] == map->regions[r].comp[1];
        if (!seen)
            claims_of(map, r, r, sites, n_sites, &cl);
    }
    if (cl.n)
        qsort(cl.p, (size_t)cl.n, sizeof *cl.p, cmp_pair);
    *n_out = cl.n;
    return cl.p;
}

/* ---- Watching values */

/* What a run keeps of each watched instruction (watch[id]): a hash of
 * each of its first executions and when each was computed (tick: the
 * run's values counted in order), and the value of execution keep[id] - 1
 * (keep[id] > 0: one value per instruction, whatever the loop count). */
typedef struct Watch {
    const bool *watch;
    const int *keep;
    uint64_t (*hash)[MAX_EXECUTIONS];
    Value *(*value)[MAX_EXECUTIONS];
    int64_t (*tick)[MAX_EXECUTIONS];
    int *n;
    int64_t ticks;
} Watch;

static uint64_t value_hash(const Value *v)
{
    uint64_t h = check_hash_bytes(0x6c6f6361746521ULL, v->shape->dims, (size_t)v->shape->rank * sizeof(int64_t));
    h = check_hash_bytes(h, &v->shape->type, sizeof v->shape->type);
    return check_hash_bytes(h, v->data, value_bytes(v));
}

static void observe(void *ctx, const IrInstr *instr, Value *v)
{
    Watch *w = ctx;
    int id = instr->id;
    w->ticks++;
    if (!w->watch[id] || w->n[id] >= MAX_EXECUTIONS || !ir_shape_is_array(v->shape))
        return;
    w->tick[id][w->n[id]] = w->ticks;
    if (w->keep && w->keep[id] == w->n[id] + 1)
        w->value[id][w->n[id]] = value_retain(v);
    else if (!w->keep)
        w->hash[id][w->n[id]] = value_hash(v);
    w->n[id]++;
}

static void watch_new(Watch *w, const IrModule *m, const bool *watch, const int *keep)
{
    size_t n = (size_t)m->next_instr_id + 1;
    *w = (Watch){ watch, keep, xcalloc(n, sizeof *w->hash), keep ? xcalloc(n, sizeof *w->value) : NULL,
                  xcalloc(n, sizeof *w->tick), xcalloc(n, sizeof(int)), 0 };
}

static void watch_free(Watch *w, const IrModule *m)
{
    for (int i = 0; w->value && i <= m->next_instr_id; i++)
        for (int e = 0; e < w->n[i]; e++)
            value_release(w->value[i][e]);
    free(w->hash);
    free(w->value);
    free(w->tick);
    free(w->n);
}

/* Runs m on inputs (the caller keeps its references), watching. */
static bool run_watched(const IrModule *m, InterpOptions io, uint64_t seed, Value **inputs, int n, Watch *w,
                        Error *err)
{
    io.observe = observe;
    io.observe_ctx = w;
    Interp *it = interp_new(m, &io, err);
    if (!it)
        return false;
    interp_set_rng_seed(it, seed);
    for (int i = 0; i < n; i++)
        value_retain(inputs[i]);
    Value *result = NULL;
    bool ok = interp_run(it, inputs, n, &result, err);
    value_release(result);
    interp_free(it);
    return ok;
}

/* Both modules on inputs, watching the ids the masks name (keep: one
 * value each rather than hashes); w[0] before's, w[1] after's. */
static bool run_both(const IrModule *const m[2], const InterpOptions *io, uint64_t seed, Value **inputs, int n,
                     bool *const watch[2], int *const keep[2], Watch w[2], Error *err)
{
    watch_new(&w[0], m[0], watch[0], keep ? keep[0] : NULL);
    watch_new(&w[1], m[1], watch[1], keep ? keep[1] : NULL);
    return run_watched(m[0], *io, seed, inputs, n, &w[0], err) && run_watched(m[1], *io, seed, inputs, n, &w[1], err);
}

/* The first execution where the pair's hashes differ; -1 when none does
 * (executions one side did not make are a difference of control flow,
 * which the values feeding it show first). */
static int hashes_differ(const Watch w[2], const int ids[2])
{
    int n = w[0].n[ids[0]] < w[1].n[ids[1]] ? w[0].n[ids[0]] : w[1].n[ids[1]];
    for (int e = 0; e < n; e++)
        if (w[0].hash[ids[0]][e] != w[1].hash[ids[1]][e])
            return e;
    return -1;
}

/* The first element (returned) where the pair's values of execution e
 * differ under tol; -1 when they agree (or were not kept). */
static int64_t values_differ(const Watch w[2], const int ids[2], int e, const CheckTolerance *tol)
{
    if (e < 0 || e >= w[0].n[ids[0]] || e >= w[1].n[ids[1]])
        return -1;
    const Value *b = w[0].value[ids[0]][e], *a = w[1].value[ids[1]][e];
    if (!b || !a || !ir_shape_equal(b->shape, a->shape))
        return -1;
    return check_first_difference(b, a, tol);
}

/* ---- The search */

const IrInstr *check_instr_by_id(const IrModule *m, int id)
{
    for (int c = 0; c < m->n_computations; c++)
        for (int i = 0; i < m->computations[c]->n_instrs; i++)
            if (m->computations[c]->instrs[i]->id == id)
                return m->computations[c]->instrs[i];
    return NULL;
}

/* The first claim that fails on inputs (list_claims with sites), into
 * *out (found false when none does).  Collective on c. */
static bool search(Coll *c, const IrModule *const m[2], const CheckPairMap *map, const InterpOptions *io,
                   uint64_t seed, Value **inputs, int n_in, const CheckTolerance *tol, const CheckSite *sites,
                   int n_sites, CheckLocated *out, Error *err)
{
    int n = 0, rank = coll_rank(c);
    Pair *pairs = list_claims(map, sites, n_sites, &n);
    bool *watch[2];
    int *keep[2];
    for (int s = 0; s < 2; s++) {
        watch[s] = xcalloc((size_t)m[s]->next_instr_id + 1, sizeof(bool));
        keep[s] = xcalloc((size_t)m[s]->next_instr_id + 1, sizeof(int));
        for (int k = 0; k < n; k++)
            watch[s][pairs[k].ids[s]] = true;
    }
    /* Run 1: when each claim first fails (the tick of before's value), by
     * its hashes, on any rank; the same schedule ticks alike on every rank. */
    Watch w[2] = { { 0 }, { 0 } };
    bool ok = run_both(m, io, seed, inputs, n_in, watch, NULL, w, err);
    int64_t *when = xcalloc((size_t)n + 1, sizeof *when);
    int *exec = xcalloc((size_t)n + 1, sizeof *exec);      /* this rank's first differing execution */
    for (int k = 0; k < n; k++) {
        exec[k] = ok ? hashes_differ(w, pairs[k].ids) : -1;
        when[k] = exec[k] >= 0 ? w[0].tick[pairs[k].ids[0]][exec[k]] : INT64_MAX;
    }
    for (int s = 0; s < 2; s++)
        if (w[s].n)
            watch_free(&w[s], m[s]);
    if (!coll_all_ok(c, ok)) {
        ok = false;
        goto done;
    }
    coll_allreduce_i64(c, when, n, COLL_MIN);
    /* Run 2: the earliest few, by value, under the check's comparison, at
     * the execution where this rank saw them part (one value each, the
     * first always, the others while they stay under SUSPECT_BYTES). */
    int suspects[MAX_SUSPECTS], n_suspects = 0;
    for (int k = 0; k < n; k++) {
        if (when[k] == INT64_MAX)
            continue;
        int j;
        if (n_suspects == MAX_SUSPECTS) {
            if (when[k] >= when[suspects[MAX_SUSPECTS - 1]])
                continue;
            j = MAX_SUSPECTS - 1;
        } else {
            j = n_suspects++;
        }
        suspects[j] = k;
        for (; j > 0 && when[suspects[j]] < when[suspects[j - 1]]; j--) {
            int t = suspects[j];
            suspects[j] = suspects[j - 1];
            suspects[j - 1] = t;
        }
    }
    int64_t bytes = 0;
    for (int j = 0; j < n_suspects; j++) {
        const IrInstr *x = check_instr_by_id(m[0], pairs[suspects[j]].ids[0]);
        bytes += 2 * (x ? ir_shape_byte_size(x->shape) : 0);
        if (j > 0 && bytes > SUSPECT_BYTES)
            n_suspects = j;
    }
    if (n_suspects == 0)
        goto done;
    for (int s = 0; s < 2; s++) {
        memset(watch[s], 0, (size_t)m[s]->next_instr_id + 1);
        for (int j = 0; j < n_suspects; j++) {
            int k = suspects[j], id = pairs[k].ids[s];
            watch[s][id] = true;
            if (exec[k] >= 0 && (!keep[s][id] || keep[s][id] > exec[k] + 1))
                keep[s][id] = exec[k] + 1;
        }
    }
    memset(w, 0, sizeof w);
    ok = run_both(m, io, seed, inputs, n_in, watch, keep, w, err);
    /* key: tick * 65536 + rank, the earliest failure and the lowest rank showing it. */
    int64_t key[MAX_SUSPECTS], index[MAX_SUSPECTS];
    for (int j = 0; j < n_suspects; j++) {
        const Pair *p = &pairs[suspects[j]];
        int e = exec[suspects[j]];
        index[j] = ok ? values_differ(w, p->ids, e, tol) : -1;
        key[j] = index[j] >= 0 ? w[0].tick[p->ids[0]][e] * 65536 + rank : INT64_MAX;
    }
    if (coll_all_ok(c, ok)) {
        coll_allreduce_i64(c, key, n_suspects, COLL_MIN);
        int best = -1;
        for (int j = 0; j < n_suspects; j++)
            if (key[j] != INT64_MAX && (best < 0 || key[j] < key[best]))
                best = j;
        if (best >= 0) {
            const Pair *p = &pairs[suspects[best]];
            *out = (CheckLocated){ .found = true, .region = p->region, .output = p->output,
                                   .before_id = p->ids[0], .after_id = p->ids[1], .rank = (int)(key[best] % 65536),
                                   .beside_precision = n_sites > 0 };
            if (rank == out->rank) {
                int e = out->execution = exec[suspects[best]];
                const Value *b = w[0].value[p->ids[0]][e], *a = w[1].value[p->ids[1]][e];
                size_t es = (size_t)ir_type_storage_bytes(b->shape->type);
                check_where_text(b->shape, index[best], out->where, sizeof out->where);
                ir_elem_format(b->shape->type, (const char *)b->data + (size_t)index[best] * es, true, out->before,
                               sizeof out->before);
                ir_elem_format(a->shape->type, (const char *)a->data + (size_t)index[best] * es, true, out->after,
                               sizeof out->after);
            }
            int64_t execution = out->execution;
            coll_bcast(c, &execution, sizeof execution, out->rank);
            out->execution = (int)execution;
            coll_bcast(c, out->where, sizeof out->where, out->rank);
            coll_bcast(c, out->before, sizeof out->before, out->rank);
            coll_bcast(c, out->after, sizeof out->after, out->rank);
        }
    } else {
        ok = false;
    }
    for (int s = 0; s < 2; s++)
        if (w[s].n)
            watch_free(&w[s], m[s]);
done:
    for (int s = 0; s < 2; s++) {
        free(watch[s]);
        free(keep[s]);
    }
    free(when);
    free(exec);
    free(pairs);
    return ok;
}

bool check_locate(Coll *c, const IrModule *before, const IrModule *after, const CheckPairMap *map,
                  const CheckOptions *opt, const CheckReport *rep, CheckLocated *out, Error *err)
{
    memset(out, 0, sizeof *out);
    /* A pair judged by accuracy differs by design below its sites: the
     * first trial's inputs, bitwise, leaving those out; when nothing else
     * differs, where the accumulation changed is the difference. */
    bool beside = !rep->diff.found && rep->by_accuracy && !rep->equivalent;
    if ((!rep->diff.found && !beside) || map->n_regions == 0)
        return true;
    uint64_t seed = beside ? check_trial_seed(opt->seed, 0) : rep->diff.seed;
    CheckDist dist = beside ? rep->dist : rep->diff.dist;
    CheckTolerance tol = opt->tol;
    tol.mode = beside || rep->mode == CHECK_AUTO ? CHECK_EXACT : rep->mode;
    const IrModule *m[2] = { before, after };
    int rank = coll_rank(c), n_in = before->entry->n_params;
    Value **inputs = xcalloc((size_t)n_in + 1, sizeof *inputs);
    InterpDevice dev;
    char note[256];
    bool ok = coll_setup_devices(c, before, opt->replicas, opt->partitions, &dev, note, sizeof note, err);
    if (ok && opt->inputs) {
        ok = opt->n_inputs == n_in ||
             error_set(err, ERR_MISMATCH, before->entry->loc, "%d inputs given for %d parameters", opt->n_inputs, n_in);
        for (int i = 0; ok && i < n_in; i++)
            inputs[i] = value_retain(opt->inputs[i]);
    } else if (ok) {
        ok = check_random_inputs(before, rank, seed, dist, inputs, err);
    }
    InterpOptions io = { .device = dev, .comm = coll_comm(c),
                         .opaque = opt->opaque_custom_calls ? check_opaque_custom_call : NULL };
    if (!coll_all_ok(c, ok)) {
        ok = false;
    } else {
        ok = search(c, m, map, &io, seed, inputs, n_in, &tol, rep->sites, beside ? rep->n_sites : 0, out, err);
        if (ok && beside && !out->found) {
            ok = search(c, m, map, &io, seed, inputs, n_in, &tol, NULL, 0, out, err);
            out->by_design = out->beside_precision = out->found;
        }
    }
    for (int i = 0; i < n_in; i++)
        value_release(inputs[i]);
    free(inputs);
    return ok;
}
