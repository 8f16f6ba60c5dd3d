/* pipeline.c: the pass registry (from passes.def), --passes= parsing, the
 * pipeline with dead-code removal and --iterate, the orders the passes walk,
 * and the statistics behind hlo-opt --stats. */
#include "pass.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static const Pass registry[] = {
#define PASS(num, c, name, alias, prec, clean) { num, name, alias, pass_##c, prec, clean },
#include "passes.def"
#undef PASS
};
#define N_PASSES ((int)(sizeof registry / sizeof registry[0]))

void pass_options_default(PassOptions *opt)
{
    *opt = (PassOptions){
        .mode = PASS_MODE_FAITHFUL,
        .combine_threshold_bytes = 1073741824,
        .combine_threshold_count = 256,
        .combine_by_dim = true,
        .neuron_fsdp = false,
        .iterate = false,
    };
}

PassMode pass_mode_from_name(const char *name)
{
    return name && strcmp(name, "sound") == 0 ? PASS_MODE_SOUND : PASS_MODE_FAITHFUL;
}

void pass_stats_decline(PassStats *stats, const char *reason)
{
    if (!stats)
        return;
    for (int i = 0; i < stats->n_reasons; i++)
        if (strcmp(stats->reason[i], reason) == 0) {
            stats->declined[i]++;
            return;
        }
    if (stats->n_reasons < PASS_MAX_REASONS) {
        stats->reason[stats->n_reasons] = reason;
        stats->declined[stats->n_reasons++] = 1;
    }
}

int pass_registry(const Pass **passes)
{
    *passes = registry;
    return N_PASSES;
}

const Pass *pass_find(const char *name)
{
    for (int i = 0; i < N_PASSES; i++)
        if (strcmp(registry[i].name, name) == 0 || strcmp(registry[i].alias, name) == 0)
            return &registry[i];
    return NULL;
}

bool pass_parse_list(const char *spec, const Pass **out, int *n, Error *err)
{
    *n = 0;
    if (!spec || !*spec || strcmp(spec, "none") == 0)
        return true;
    if (strcmp(spec, "default") == 0) {
        for (int i = 0; i < N_PASSES; i++)
            out[(*n)++] = &registry[i];
        return true;
    }
    char *copy = xmalloc_try(strlen(spec) + 1), *save = NULL;
    if (!copy)
        return error_nomem(err, (IrLoc){ 0 });
    strcpy(copy, spec);
    bool ok = true;
    for (char *tok = strtok_r(copy, ",", &save); tok && ok; tok = strtok_r(NULL, ",", &save)) {
        const Pass *p = pass_find(tok);
        if (!p)
            ok = error_set(err, ERR_MISMATCH, (IrLoc){ 0 }, "unknown pass '%s'; see --list-passes", tok);
        else if (*n == 64)
            ok = error_set(err, ERR_MISMATCH, (IrLoc){ 0 }, "more than 64 passes in --passes");
        else
            out[(*n)++] = p;
    }
    free(copy);
    return ok;
}

/* ---- Orders */

typedef struct Walk {
    IrInstr **out;
    int n;
    char *state;            /* by position: 0 new, 1 on the stack, 2 emitted */
    int *pos;               /* instruction id - lo -> position */
    int lo;
} Walk;

/* Iterative DFS: control predecessors first, then operands in order.
 * False when out of memory. */
static bool visit(Walk *w, const IrComputation *comp, IrInstr *start)
{
    int cap = 64, top = 0;
    IrInstr **stack = xmalloc_try((size_t)cap * sizeof *stack);
    if (!stack)
        return false;
    stack[top++] = start;
    while (top > 0) {
        IrInstr *instr = stack[top - 1];
        int p = w->pos[instr->id - w->lo];
        if (w->state[p] == 2) {
            top--;
            continue;
        }
        w->state[p] = 1;
        bool pushed = false;
        int n_deps = instr->n_control_predecessors + instr->n_operands;
        /* Push in reverse so the first dependency is visited first. */
        for (int k = n_deps - 1; k >= 0; k--) {
            IrInstr *dep = k < instr->n_control_predecessors ? instr->control_predecessors[k]
                                                              : instr->operands[k - instr->n_control_predecessors];
            if (dep->parent != comp || dep->dead || w->state[w->pos[dep->id - w->lo]] != 0)
                continue;
            if (top == cap && !xgrow_try((void **)&stack, (size_t)(cap *= 2), sizeof *stack)) {
                free(stack);
                return false;
            }
            stack[top++] = dep;
            pushed = true;
        }
        if (!pushed) {
            w->state[p] = 2;
            w->out[w->n++] = instr;
            top--;
        }
    }
    free(stack);
    return true;
}

int pass_post_order(const IrComputation *comp, IrInstr **out)
{
    if (comp->module->is_scheduled) {
        memcpy(out, comp->instrs, (size_t)comp->n_instrs * sizeof *out);
        return comp->n_instrs;
    }
    int lo, span = ir_computation_id_span(comp, &lo);
    Walk w = { out, 0, xcalloc_try((size_t)comp->n_instrs + 1, 1), xcalloc_try((size_t)span + 1, sizeof(int)),
               lo };
    int *users = xcalloc_try((size_t)comp->n_instrs + 1, sizeof *users);
    if (!w.state || !w.pos || !users)
        w.n = -1;
    for (int i = 0; i < comp->n_instrs && w.n >= 0; i++)
        w.pos[comp->instrs[i]->id - lo] = i;
    for (int i = 0; i < comp->n_instrs && w.n >= 0; i++) {
        IrInstr *instr = comp->instrs[i];
        int n_deps = instr->n_operands + instr->n_control_predecessors;
        for (int k = 0; k < n_deps; k++) {
            const IrInstr *d = k < instr->n_operands ? instr->operands[k]
                                                     : instr->control_predecessors[k - instr->n_operands];
            if (d->parent == comp && !d->dead)
                users[w.pos[d->id - lo]]++;
        }
    }
    for (int i = 0; i < comp->n_instrs && w.n >= 0; i++)
        if (users[i] == 0 && !visit(&w, comp, comp->instrs[i]))
            w.n = -1;
    /* Anything left (cannot happen in a verified module) keeps text order. */
    for (int i = 0; i < comp->n_instrs && w.n >= 0; i++)
        if (w.state[i] != 2)
            w.out[w.n++] = comp->instrs[i];
    free(users);
    free(w.state);
    free(w.pos);
    return w.n;
}

static void mark(bool *marks, const IrComputation *c)
{
    if (c)
        marks[c->id] = true;
}

/* One scan of the module (on big modules every scan is a trip through
 * memory, so everything a pass needs first is gathered in one). */
bool pass_scan(const IrModule *m, IrOpcode op, PassScan *s, Error *err)
{
    bool *fused = xcalloc_try((size_t)m->next_computation_id + 1, sizeof *fused);
    *s = (PassScan){ .comps = xmalloc_try(((size_t)m->n_computations + 1) * sizeof *s->comps),
                     .in_while = xcalloc_try((size_t)m->next_computation_id + 1, sizeof *s->in_while) };
    if (!fused || !s->comps || !s->in_while) {
        free(fused);
        pass_scan_free(s);
        return error_nomem(err, (IrLoc){ m->file, 0, 0 });
    }
    for (int i = 0; i < m->n_computations; i++) {
        const IrComputation *c = m->computations[i];
        for (int k = 0; k < c->n_instrs; k++) {
            const IrInstr *instr = c->instrs[k];
            if (instr->op == IR_OP_FUSION) {
                mark(fused, instr->info->comps[IR_COMP_CALLS]);
            } else if (instr->op == IR_OP_WHILE) {
                mark(s->in_while, instr->info->comps[IR_COMP_BODY]);
                mark(s->in_while, instr->info->comps[IR_COMP_CONDITION]);
            } else if (instr->op == op && instr->info->bools[IR_BOOL_CONSTRAIN_LAYOUT]) {
                s->constrained = true;
            }
        }
    }
    for (int i = 0; i < m->n_computations; i++)
        if (!fused[m->computations[i]->id])
            s->comps[s->n_comps++] = m->computations[i];
    free(fused);
    return true;
}

void pass_scan_free(PassScan *s)
{
    free(s->comps);
    free(s->in_while);
}

/* Between passes nothing holds an id or an instruction: once a third of
 * the instruction arena is removed instructions the live ones are moved
 * together and renumbered (ir_module_compact; on a 100k-instruction module
 * one compaction costs about 9 ms and saves the passes after it about 25).
 * Every id ever given is an instruction in the arena, so ids stay below
 * 1.5 times the live instructions too.  Out of memory, the module stays as
 * it is. */
static void compact_if_sparse(IrModule *m)
{
    size_t live = 0;
    for (int c = 0; c < m->n_computations; c++)
        live += (size_t)m->computations[c]->n_instrs;
    if (arena_bytes_used(m->instr_arena) > live * sizeof(IrInstr) / 2 * 3)
        ir_module_compact(m);
}

int pass_remove_dead_code(IrModule *m)
{
    int removed = ir_module_remove_dead(m);
    if (removed >= 0)
        compact_if_sparse(m);
    return removed;
}

/* ---- The pipeline */

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* *dead_free: the module has no dead code (a whole-module removal ran and
 * only passes that leave none ran since). */
/* A module a pass left invalid is that pass's bug, never the input's: the
 * error is internal (exit 3), names the pass, and gives the verifier's
 * location only as the instruction the broken one came from. */
static bool verify_after(IrModule *m, const Pass *p, Error *err)
{
    Error verr = { 0 };
    if (ir_verify_module(m, &verr))
        return true;
    if (verr.code == ERR_NOMEM)
        return error_nomem(err, verr.loc);
    char where[300] = "";
    if (verr.file[0] && verr.loc.line > 0)
        snprintf(where, sizeof where, " (near %s:%d:%d)", verr.file, verr.loc.line, verr.loc.col);
    return error_set(err, ERR_INTERNAL, (IrLoc){ 0 },
                     "pass %s (#%d) left an invalid module, a bug in the pass, not in the input%s: %s", p->name,
                     p->number, where, verr.msg);
}

static bool run_once(IrModule *m, const Pass *const *passes, int n, const PassOptions *opt,
                     PipelineStats *stats, bool *changed, bool *dead_free, Error *err)
{
    for (int i = 0; i < n; i++) {
        PassStats *st = stats ? &stats->stats[i] : NULL;
        PassStats scratch = { 0 };
        double t0 = now_seconds();
        PassResult r = passes[i]->run(m, opt, st ? st : &scratch, err);
        if (r == PASS_FAILED || !ir_module_check_memory(m, err))
            return false;
        if (r == PASS_CHANGED) {
            *changed = true;
            if (*dead_free && passes[i]->leaves_no_dead_code)
                compact_if_sparse(m);
            else
                pass_remove_dead_code(m);
            *dead_free = true;
            if (!ir_module_check_memory(m, err) || !verify_after(m, passes[i], err))
                return false;
            if (opt->on_change)
                opt->on_change(m, i, opt->on_change_ctx);
        }
        if (st)
            st->seconds += now_seconds() - t0;
    }
    return true;
}

bool pass_run_pipeline(IrModule *m, const Pass *const *passes, int n, const PassOptions *opt,
                       PipelineStats *stats, bool *changed, Error *err)
{
    if (stats) {
        memset(stats, 0, sizeof *stats);
        stats->n = n;
        for (int i = 0; i < n; i++)
            stats->pass[i] = passes[i];
    }
    *changed = false;
    int rounds = 0;
    bool dead_free = false;
    for (bool again = true; again && rounds < 16; rounds++) {
        bool round_changed = false;
        if (!run_once(m, passes, n, opt, stats, &round_changed, &dead_free, err))
            return false;
        *changed |= round_changed;
        again = opt->iterate && round_changed;
    }
    if (stats)
        stats->rounds = rounds;
    return true;
}

static const char *const close_names[CLOSE_COUNT_OF] = { "reachability", "count", "bytes", "end" };

void pass_print_stats(FILE *out, const PipelineStats *stats)
{
    fprintf(out, "passes: %d, rounds: %d\n", stats->n, stats->rounds);
    for (int i = 0; i < stats->n; i++) {
        const PassStats *s = &stats->stats[i];
        const Pass *p = stats->pass[i];
        fprintf(out, "  #%-3d %-42s fired %ld", p->number, p->name, s->fired);
        if (strstr(p->name, "combiner")) {
            fprintf(out, ", groups %ld, left alone %ld, closed by:", s->groups_formed, s->singletons);
            for (int k = 0; k < CLOSE_COUNT_OF; k++)
                fprintf(out, " %s %ld", close_names[k], s->closed[k]);
            if (s->skipped)
                fprintf(out, ", gated off");
        }
        for (int k = 0; k < s->n_reasons; k++)
            fprintf(out, "%s%s %ld", k ? ", " : ", declined: ", s->reason[k], s->declined[k]);
        fprintf(out, " (%.1f ms)\n", 1e3 * s->seconds);
    }
}
