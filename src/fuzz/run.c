/* run.c: one generated module, end to end.
 *
 * 1. The module is drawn from (seed, index): its device split, its sites
 *    (each from a stream of its own, so one site can be rebuilt alone),
 *    the combiner flags.  It must parse and verify: if not, the generator
 *    is wrong, an error of hlo-fuzz itself.
 * 2. The pass runs on rank 0 in a child process, so that a crash or a hang
 *    in the pass is a finding and not the end of the run; the rewritten
 *    text comes back through a pipe and is broadcast.  A pass that leaves
 *    an invalid module fails in the pipeline's own verification (exit 3
 *    naming the pass), which is a finding too.
 * 3. Every site is read off the rewritten module: its result is an operand
 *    of a known root tuple, so its new form says whether it was rewritten
 *    (combiners: which combined collective took it), against what the
 *    site's generator expected.
 * 4. The checker runs both modules on every rank: bitwise when every site
 *    is exact; by accuracy when some site reduces in another type; a known
 *    unsoundness that the spec says shows at this world must be refuted.
 * 5. With several passes configured, a module whose every site is exact in
 *    sound mode goes through the whole sound pipeline too, and must come
 *    out bitwise the same (the passes acting on each other's results).
 * Each finding is saved under out_dir with the modules, the recipe, the
 * inputs of the failing trial, the shrunk pair when the checker can shrink
 * it, and the commands that reproduce it. */
#include "fuzz_internal.h"
#include "coll.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static uint64_t mix(uint64_t a, uint64_t b)
{
    FuzzRng r = { .s = a ^ (b * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull) };
    return fuzz_u64(&r);
}

/* Combiner members with a sharding, as real dumps' collectives carry: no
 * key holds one (spec/passes.md section 2), so the same members combine,
 * and the combined collective carries the members' shardings as a tuple
 * of them.  Each member gets none, {replicated} or {maximal device=0};
 * returns how many got one. */
static int give_shardings(FuzzRng *r, FuzzBuild *b, const FuzzSite *sites, int n)
{
    static const char *const kinds[] = { ", sharding={replicated}", ", sharding={maximal device=0}" };
    int given = 0;
    for (int i = 0; i < n; i++) {
        int k = fuzz_below(r, 3);
        if (sites[i].is_coll && k > 0) {
            fuzz_add_attr(b, sites[i].instr, kinds[k - 1]);
            given++;
        }
    }
    return given;
}

typedef struct Module {
    uint64_t seed;
    long index;
    int number;                     /* the pass aimed at */
    int replicas, partitions;
    bool bare_root;                 /* the entry's root is the one site's result */
    bool scheduled;                 /* is_scheduled=true */
    bool layouts;                   /* shapes written with their layouts */
    int shardings;                  /* combiner members given a sharding */
    bool metadata;                  /* each site's instruction has metadata */
    bool no_partitions;             /* the header leaves out num_partitions=1 */
    bool unrunnable;                /* FuzzGen.unrunnable: the sites are read, the function is not run */
    PassOptions opt;
    FuzzBuild *b;
    FuzzSite sites[FUZZ_MAX_SITES];
    int n_sites;
    char *text;
    IrModule *m;
} Module;

static void module_free(Module *mod)
{
    fuzz_build_free(mod->b);
    free(mod->text);
    if (mod->m)
        ir_module_free(mod->m);
    memset(mod, 0, sizeof *mod);
}

static bool is_combiner(int number)
{
    return number == 77 || number == 78 || number == 79;
}

/* Stream k's tape of the configured recipe, rewound; NULL without one. */
static FuzzTape *tape(const FuzzConfig *cfg, int k)
{
    if (!cfg->recipe || k >= FUZZ_STREAMS)
        return NULL;
    cfg->recipe->t[k].pos = 0;
    return &cfg->recipe->t[k];
}

/* Draws module `index`; with only >= 0 keeps that site alone (the others
 * are drawn and dropped, so the kept one is the same). */
static bool generate(const FuzzConfig *cfg, int world, long index, int number, int only, Module *mod, Error *err)
{
    memset(mod, 0, sizeof *mod);
    mod->seed = mix(cfg->seed, (uint64_t)index);
    mod->index = index;
    mod->number = number;
    FuzzRng r = { mod->seed, tape(cfg, 0) };
    mod->replicas = fuzz_divisor(&r, world);
    mod->partitions = world / mod->replicas;
    pass_options_default(&mod->opt);
    char name[64];
    snprintf(name, sizeof name, "fuzz_%d_%ld", number, index);
    mod->b = fuzz_build_new(mod->replicas, mod->partitions, name);
    bool bare = fuzz_chance(&r, 25);
    FuzzGen g = { .rng = &r, .b = mod->b, .opt = &mod->opt, .world = world, .sites = mod->sites };
    int n = 1 + fuzz_below(&r, is_combiner(number) ? 8 : 5);
    /* One flip module in twelve is large: enough sites in one computation
     * that a sweep's new instructions outgrow their first buffers. */
    if (!is_combiner(number) && fuzz_chance(&r, 8))
        n = 6 + fuzz_below(&r, 9);
    /* One module in twenty-five of a combiner or a reduce flip is huge:
     * every site in the entry, 16 clusters of members (more than 64 new
     * instructions in one combiner rewrite) or 80 reduce flips that all
     * match, each with a reduction computation of its own (more than 64
     * retyped in a run). */
    if ((is_combiner(number) || number == 102 || number == 104) && fuzz_chance(&r, 4)) {
        g.huge = true;
        n = is_combiner(number) ? 16 : FUZZ_MAX_SITES;
    }
    for (int k = 0; k < n; k++) {
        FuzzRng sr = { mix(mod->seed, 1000 + (uint64_t)k), tape(cfg, 1 + k) };
        g.rng = &sr;
        if (only >= 0 && k != only) {
            if (k < only) {             /* drawn into a scratch module: what it leaves in g shapes later sites */
                FuzzSite scratch_sites[FUZZ_MAX_SITES];
                FuzzGen sg = g;
                sg.b = fuzz_build_new(mod->replicas, mod->partitions, name);
                sg.sites = scratch_sites;
                sg.n_sites = 0;
                fuzz_gen_site(&sg, number);
                g.odd_site_taken = sg.odd_site_taken;
                g.reduce_pair = sg.reduce_pair;
                fuzz_build_free(sg.b);
            }
            continue;
        }
        fuzz_gen_site(&g, number);
        if (g.last)
            break;
    }
    g.rng = &r;
    /* Drawn after every other draw of the module's stream, so that the
     * modules seed and index gave before scheduling was drawn only gain
     * the header. */
    mod->scheduled = fuzz_chance(&r, 25);
    fuzz_build_scheduled(mod->b, mod->scheduled);
    mod->layouts = fuzz_chance(&r, 25);        /* drawn last for the same reason */
    fuzz_build_layouts(mod->b, mod->layouts);
    if (is_combiner(number) && fuzz_chance(&r, 25))     /* drawn last too */
        mod->shardings = give_shardings(&r, mod->b, mod->sites, g.n_sites);
    if (fuzz_chance(&r, 20)) {          /* metadata on each site's instruction, as every real dump has */
        mod->metadata = true;
        for (int i = 0; i < g.n_sites; i++) {
            char md[96];
            snprintf(md, sizeof md, ", metadata={op_name=\"jit(step)/site_%d\" source_file=\"gen.py\" source_line=%d}",
                     i, 10 + i);
            fuzz_add_attr(mod->b, mod->sites[i].instr, md);
        }
    }
    /* One partition written as no num_partitions at all (XLA's default is
     * one); not for the combiners, whose all-gather key takes an absent
     * count as "maybe more than one". */
    mod->no_partitions = !is_combiner(number) && mod->partitions == 1 && fuzz_chance(&r, 25);
    fuzz_build_omit_partitions(mod->b, mod->no_partitions);
    /* A lone entry output as the root itself: the rewrite then replaces the root. */
    int live = 0;
    for (int k = 0; k < g.n_sites; k++)
        live += !mod->sites[k].unread;
    mod->bare_root = bare && live == 1 && mod->sites[g.n_sites - 1].place == FUZZ_IN_ENTRY &&
                     fuzz_entry_outputs(mod->b) == 1;
    fuzz_build_bare_root(mod->b, mod->bare_root);
    if (is_combiner(number))
        fuzz_model_combiner(&g, number, &mod->opt);
    mod->n_sites = g.n_sites;
    mod->unrunnable = g.unrunnable;
    mod->text = fuzz_build_text(mod->b);
    if (!mod->text)
        return error_set(err, ERR_INTERNAL, (IrLoc){ 0 }, "hlo-fuzz: module %ld outgrew the builder's limits", index);
    mod->m = ir_parse_module(mod->text, strlen(mod->text), name, err);
    if (!mod->m || !ir_verify_module(mod->m, err)) {
        fprintf(stderr, "hlo-fuzz: the generator wrote an invalid module (a bug in hlo-fuzz):\n%s\n", mod->text);
        return false;
    }
    return true;
}

/* ------------------------------------------------------------------ */
/* Reading the sites                                                    */

typedef struct Finding {
    char kind[48];
    char msg[1200];
    int site;                       /* the site it is about, -1: the module */
} Finding;

typedef struct Outcome {
    Finding f[8];
    int n;
    long rewrites;
    int site;                       /* the site findings added now are about, -1: none */
} Outcome;

static void add_finding(Outcome *o, const char *kind, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void add_finding(Outcome *o, const char *kind, const char *fmt, ...)
{
    if (o->n == 8)
        return;
    Finding *f = &o->f[o->n++];
    f->site = o->site;
    snprintf(f->kind, sizeof f->kind, "%s", kind);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->msg, sizeof f->msg, fmt, ap);
    va_end(ap);
}

static bool is_op(const IrInstr *x, IrOpcode op)
{
    return x && x->op == op;
}

/* What became of a flip site whose result is now x: 1 rewritten, 0 kept as
 * it was (its opcode is kept_op), -1 neither. */
static int flip_state(int number, const IrInstr *x, IrOpcode kept_op)
{
    const IrInstr *o = x->n_operands > 0 ? x->operands[0] : NULL;
    switch (number) {
    case 92: if (is_op(x, IR_OP_ALL_GATHER) && is_op(o, IR_OP_DYNAMIC_SLICE)) return 1; break;
    case 96: if (is_op(x, IR_OP_ALL_GATHER) && is_op(o, IR_OP_CONVERT)) return 1; break;
    case 97: if (is_op(x, IR_OP_ALL_GATHER) && is_op(o, IR_OP_RESHAPE)) return 1; break;
    case 98: if (is_op(x, IR_OP_ALL_GATHER) && o && (ir_op_info[o->op].flags & OPF_ELEMENTWISE)) return 1; break;
    case 104: if (is_op(x, IR_OP_REDUCE_SCATTER) && is_op(o, IR_OP_TRANSPOSE)) return 1; break;
    case 102:                       /* add(R'(convert(g)), acc) */
        if (is_op(x, IR_OP_ADD))
            for (int k = 0; k < x->n_operands; k++)
                if ((is_op(x->operands[k], IR_OP_ALL_REDUCE) || is_op(x->operands[k], IR_OP_REDUCE_SCATTER)) &&
                    is_op(x->operands[k]->operands[0], IR_OP_CONVERT))
                    return 1;
        break;
    default: break;
    }
    return x->op == kept_op ? 0 : -1;
}

/* The combined collective a member's result now comes from, or NULL. */
static const IrInstr *combined_into(const IrInstr *x, IrOpcode op)
{
    if (is_op(x, IR_OP_TRANSPOSE))
        x = x->operands[0];
    if (is_op(x, IR_OP_GET_TUPLE_ELEMENT) && is_op(x->operands[0], op) && x->operands[0]->shape->type == IR_TYPE_TUPLE)
        return x->operands[0];
    return NULL;
}

static IrOpcode combiner_op(int number)
{
    return number == 77 ? IR_OP_ALL_GATHER : number == 78 ? IR_OP_REDUCE_SCATTER : IR_OP_ALL_REDUCE;
}

static const IrInstr *site_result(const Module *mod, const IrModule *m, const FuzzSite *s)
{
    const IrComputation *comp = ir_module_find_computation(m, fuzz_comp_name(mod->b, s->comp));
    if (!comp || !comp->root)
        return NULL;
    if (mod->bare_root && comp == m->entry)    /* the site's result is the root itself */
        return comp->root;
    if (!is_op(comp->root, IR_OP_TUPLE) || s->out >= comp->root->n_operands)
        return NULL;
    return comp->root->operands[s->out];
}

static void read_sites(const Module *mod, const IrModule *after, PassMode mode, Outcome *o)
{
    const IrInstr *into[FUZZ_MAX_SITES] = { 0 };
    for (int k = 0; k < mod->n_sites; k++) {
        const FuzzSite *s = &mod->sites[k];
        if (s->unread)                  /* a dead member: its partner, read back, says whether they combined */
            continue;
        const IrInstr *before = site_result(mod, mod->m, s), *x = site_result(mod, after, s);
        o->site = k;
        if (!before || !x) {
            add_finding(o, "site-lost", "site %d (%s): its result is no longer where it was", k, s->what);
            continue;
        }
        bool want = s->expect[mode] != FUZZ_KEEP;
        if (s->is_coll) {
            into[k] = combined_into(x, combiner_op(mod->number));
            o->rewrites += into[k] != NULL;
            if ((into[k] != NULL) != (s->group[mode] >= 0))
                add_finding(o, want ? "not-combined" : "combined", "site %d (%s): %s, but the spec's engine %s", k,
                            s->what, into[k] ? "combined" : "left alone",
                            s->group[mode] >= 0 ? "combines it" : "leaves it alone");
            const IrIntList *d = into[k] ? &into[k]->lists[IR_LIST_DIMENSIONS] : NULL;
            if (d && s->group_dim[mode] >= 0 && (d->n != 1 || d->v[0] != s->group_dim[mode]))
                add_finding(o, "wrong-dim", "site %d (%s): combined along dimension %lld, but the spec's rule "
                            "(most frequent, ties to the smaller, 0 past the lowest rank) gives %d", k, s->what,
                            d->n ? (long long)d->v[0] : -1LL, s->group_dim[mode]);
            continue;
        }
        int st = flip_state(s->pass, x, before->op);
        o->rewrites += st == 1;
        if (st < 0)
            add_finding(o, "site-mangled", "site %d (%s): became %s, neither kept nor the expected rewrite", k,
                        s->what, ir_opcode_name(x->op));
        else if ((st == 1) != want)
            add_finding(o, want ? "not-rewritten" : "rewritten", "site %d (%s): %s, but the spec says %s", k,
                        s->what, st == 1 ? "rewritten" : "left alone",
                        want ? "it must be rewritten" : "it must be left alone");
    }
    o->site = -1;
    /* Members the model groups together must share one combined op, and no two groups one op. */
    for (int i = 0; i < mod->n_sites; i++)
        for (int j = i + 1; j < mod->n_sites; j++) {
            const FuzzSite *a = &mod->sites[i], *b = &mod->sites[j];
            if (!a->is_coll || !b->is_coll || !into[i] || !into[j] || a->group[mode] < 0 || b->group[mode] < 0)
                continue;
            bool same = into[i] == into[j], want = a->group[mode] == b->group[mode];
            if (same != want)
                add_finding(o, "wrong-group", "sites %d and %d (%s / %s): %s, but the spec's engine %s", i, j,
                            a->what, b->what, same ? "combined together" : "combined apart",
                            want ? "puts them in one group" : "puts them in different groups");
        }
}

/* ------------------------------------------------------------------ */
/* Saving                                                               */

/* dir/name written ("w") or added to ("a"). */
static void put_file(const char *dir, const char *name, const char *text, const char *how)
{
    char path[8400];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, how);
    if (!f)
        return;
    fputs(text, f);
    fclose(f);
}

static void write_file(const char *dir, const char *name, const char *text)
{
    put_file(dir, name, text, "w");
}

static void recipe_text(const Module *mod, const FuzzConfig *cfg, PassMode mode, StrBuf *sb)
{
    const PassOptions *o = &mod->opt;
    strbuf_printf(sb, "# hlo-fuzz recipe: module %ld of seed %llu, pass #%d, mode %s\n", mod->index,
                  (unsigned long long)cfg->seed, mod->number, mode == PASS_MODE_SOUND ? "sound" : "faithful");
    strbuf_printf(sb, "devices: %d replicas x %d partitions%s%s%s%s%s\n", mod->replicas, mod->partitions,
                  mod->scheduled ? "; scheduled (is_scheduled=true: the text order is the schedule)" : "",
                  mod->layouts ? "; shapes with their layouts" : "",
                  mod->shardings ? "; combiner members with a sharding" : "",
                  mod->metadata ? "; sites with metadata" : "",
                  mod->no_partitions ? "; no num_partitions in the header" : "");
    strbuf_printf(sb, "flags: --collective-combine-threshold-in-bytes=%lld --collective-combine-threshold-count=%lld "
                  "--collective-combine-by-dim=%s --neuron-fsdp=%s\n", (long long)o->combine_threshold_bytes,
                  (long long)o->combine_threshold_count, o->combine_by_dim ? "true" : "false",
                  o->neuron_fsdp ? "true" : "false");
    for (int k = 0; k < mod->n_sites; k++) {
        const FuzzSite *s = &mod->sites[k];
        strbuf_printf(sb, "site %d: %s\n  expect: faithful %s%s, sound %s%s", k, s->what,
                      fuzz_expect_name(s->expect[0]), s->must_differ[0] ? " (must differ)" : "",
                      fuzz_expect_name(s->expect[1]), s->must_differ[1] ? " (must differ)" : "");
        if (s->is_coll)
            strbuf_printf(sb, "; group faithful %d, sound %d", s->group[0], s->group[1]);
        strbuf_printf(sb, "; result: operand %d of %%%s's root\n", s->out, fuzz_comp_name(mod->b, s->comp));
    }
}

/* With a recipe of draws (hlo-fuzz --guided, --recipe), the module is
 * not what seed and index alone draw: its draws are saved in the finding's
 * directory (draws.txt, rank 0) and the command names them. */
static const char *draws_flag(const FuzzConfig *cfg, const char *dir)
{
    static char flag[4200];
    if (!cfg->recipe)
        return "";
    StrBuf sb;
    strbuf_init(&sb);
    fuzz_recipe_write(cfg->recipe, &sb);
    write_file(dir, "draws.txt", sb.s);
    strbuf_free(&sb);
    snprintf(flag, sizeof flag, " --recipe=%s/draws.txt", dir);
    return flag;
}

static void flag_text(const Module *mod, PassMode mode, const Pass *pass, char *buf, size_t n)
{
    const PassOptions *o = &mod->opt;
    snprintf(buf, n, "--passes=%s --pass-mode=%s --collective-combine-threshold-in-bytes=%lld "
             "--collective-combine-threshold-count=%lld --collective-combine-by-dim=%s --neuron-fsdp=%s",
             pass->name, mode == PASS_MODE_SOUND ? "sound" : "faithful", (long long)o->combine_threshold_bytes,
             (long long)o->combine_threshold_count, o->combine_by_dim ? "true" : "false",
             o->neuron_fsdp ? "true" : "false");
}

/* out_dir/<prefix>-<n>: made by rank 0; its name is broadcast. */
static bool finding_dir(Coll *c, const FuzzConfig *cfg, const char *prefix, FuzzTally *t, char *dir, size_t n)
{
    int64_t ok = 0;
    if (coll_rank(c) == 0 && cfg->out_dir) {
        mkdir(cfg->out_dir, 0777);
        for (int k = t->saved + 1; k < 100000 && !ok; k++) {
            snprintf(dir, n, "%s/%s-%d", cfg->out_dir, prefix, k);
            if (mkdir(dir, 0777) == 0) {
                ok = 1;
                t->saved = k;
            } else if (errno != EEXIST) {
                break;
            }
        }
    }
    coll_bcast(c, &ok, sizeof ok, 0);
    coll_bcast(c, dir, n, 0);
    return ok != 0;
}

/* The checker's shrink of a pair that differs, written beside the finding. */
static void save_shrunk(Coll *c, const Module *mod, const IrModule *after, const CheckOptions *co,
                        const CheckReport *rep, const char *dir)
{
    CheckShrink s;
    Error err = { 0 };
    CheckOptions q = *co;
    q.save_dir = NULL;
    if (!coll_all_ok(c, check_shrink(c, mod->m, after, &q, rep, &s, &err)))
        return;
    char sub[4200];
    snprintf(sub, sizeof sub, "%s/shrunk", dir);
    if (coll_rank(c) == 0)
        mkdir(sub, 0777);
    coll_all_ok(c, true);
    bool ok = true;
    for (int p = 0; p < s.n_inputs && ok; p++)
        ok = npy_write_param(sub, p, coll_rank(c), s.inputs[p], &err);
    if (coll_rank(c) == 0) {
        char path[4400];
        snprintf(path, sizeof path, "%s/before.hlo", sub);
        ir_write_module_file(s.before, path, &err);
        snprintf(path, sizeof path, "%s/after.hlo", sub);
        ir_write_module_file(s.after, path, &err);
        StrBuf sb;
        strbuf_init(&sb);
        strbuf_printf(&sb, "mpirun --oversubscribe -np %d hlo-check %s/before.hlo %s/after.hlo --inputs %s "
                      "--compare=exact\n", coll_world(c), sub, sub, sub);
        write_file(sub, "command.txt", sb.s);
        strbuf_free(&sb);
    }
    check_shrink_free(&s);
}

static void save_finding(Coll *c, const FuzzConfig *cfg, const Module *mod, const Pass *pass, PassMode mode,
                         const PassRun *run, const IrModule *after, const Outcome *o, const CheckOptions *co,
                         const CheckReport *rep, FuzzTally *t, char *dir, size_t dir_n)
{
    if (!finding_dir(c, cfg, pass->alias, t, dir, dir_n))
        return;
    if (coll_rank(c) == 0) {
        write_file(dir, "before.hlo", mod->text);
        if (run->len)                   /* also the invalid module a failing pass left */
            write_file(dir, "after.hlo", run->text);
        StrBuf sb;
        strbuf_init(&sb);
        recipe_text(mod, cfg, mode, &sb);
        strbuf_puts(&sb, "findings:\n");
        for (int k = 0; k < o->n; k++)
            strbuf_printf(&sb, "  %s: %s\n", o->f[k].kind, o->f[k].msg);
        write_file(dir, "recipe.txt", sb.s);
        strbuf_free(&sb);
        char flags[600];
        flag_text(mod, mode, pass, flags, sizeof flags);
        strbuf_init(&sb);
        strbuf_printf(&sb, "hlo-opt %s --stats %s/before.hlo -o after.hlo\n", flags, dir);
        strbuf_printf(&sb, "mpirun --oversubscribe -np %d hlo-check %s --seed=%llu --trials=%d %s/before.hlo\n",
                      coll_world(c), flags, (unsigned long long)co->seed, co->trials, dir);
        strbuf_printf(&sb, "mpirun --oversubscribe -np %d hlo-fuzz --passes=%s --pass-mode=%s --seed=%llu --index=%ld%s\n",
                      coll_world(c), pass->alias, mode == PASS_MODE_SOUND ? "sound" : "faithful",
                      (unsigned long long)cfg->seed, mod->index, draws_flag(cfg, dir));
        write_file(dir, "command.txt", sb.s);
        strbuf_free(&sb);
    }
    if (after && rep && rep->diff.found) {
        /* the failing trial's inputs, as hlo-check --save-counterexample writes them */
        for (int p = 0; p < mod->m->entry->n_params; p++) {
            Error err = { 0 };
            Value *v = co->inputs ? NULL
                                  : check_random_input(mod->m, p, coll_rank(c), rep->diff.seed, rep->diff.dist, &err);
            if (v) {
                npy_write_param(dir, p, coll_rank(c), v, &err);
                value_release(v);
            }
        }
        save_shrunk(c, mod, after, co, rep, dir);
    }
}

/* ------------------------------------------------------------------ */


static double mean_abs(const CheckAccuracy *a)
{
    return check_judged_mean(a);
}

/* The checker calls a pair less accurate as soon as some output's mean
 * error grew, which for a widening rewrite happens by chance on small
 * outputs: an output mixes the widened reduction with roundings both
 * modules share, and the narrow module's extra rounding can land nearer
 * the exact value (hlo-fuzz met pairs whose every widened reduction was
 * exact after, yet an output's mean error grew 1.6 times on 16 elements).
 * Its means also count against after an element only before missed (a
 * narrow result that overflowed, or went NaN, where the wide one did
 * not).  That is a conservative verdict, not a fault of the pass.  A
 * finding is what no rounding explains: a measured reduction less
 * accurate, more non-finite results, or an output's mean error over the
 * elements both got finite more than doubled. */
static void widening_less_accurate(const CheckReport *rep, Outcome *o)
{
    for (int s = 0; s < rep->n_sites; s++) {
        const CheckSite *x = &rep->sites[s];
        if (x->measured && mean_abs(&x->after) > mean_abs(&x->before) * (1 + 1e-9) + 1e-300) {
            add_finding(o, "less-accurate", "the widened reduction %s is less accurate than %s: mean %.3g -> %.3g",
                        x->after_name, x->before_name, mean_abs(&x->before), mean_abs(&x->after));
            return;
        }
    }
    for (int i = 0; i < rep->n_outputs; i++) {
        const CheckOutput *x = &rep->outputs[i];
        if (x->after.nonfinite > x->before.nonfinite || mean_abs(&x->after) > 2 * mean_abs(&x->before) + 1e-300) {
            add_finding(o, "less-accurate", "a widening rewrite made output %d (%s) worse than any rounding explains: "
                        "mean error %.3g -> %.3g, non-finite %lld -> %lld", i, x->shape, mean_abs(&x->before),
                        mean_abs(&x->after), (long long)x->before.nonfinite, (long long)x->after.nonfinite);
            return;
        }
    }
}

/* The checker on before/after, judged against what the sites expect. */
static void check_function(Coll *c, const Module *mod, const IrModule *after, PassMode mode, const FuzzConfig *cfg,
                           Outcome *o, CheckOptions *co, CheckReport *rep, bool *have_rep)
{
    bool wider = false, narrower = false, unsound = false, must_differ = false;
    for (int k = 0; k < mod->n_sites; k++) {
        FuzzExpect e = mod->sites[k].expect[mode];
        wider |= e == FUZZ_WIDER;
        narrower |= e == FUZZ_NARROWER;
        unsound |= e == FUZZ_UNSOUND;
        must_differ |= e == FUZZ_UNSOUND && mod->sites[k].must_differ[mode];
    }
    check_options_default(co);
    co->trials = cfg->trials;
    co->seed = mod->seed;
    co->tol.mode = wider || narrower ? CHECK_AUTO : CHECK_EXACT;
    co->opaque_custom_calls = false;
    Error err = { 0 };
    *have_rep = check_modules(c, mod->m, after, co, rep, &err);
    if (!*have_rep) {
        add_finding(o, "check-error", "the checker could not run the pair: %s", err.msg);
        return;
    }
    if (co->tol.mode == CHECK_EXACT) {
        if (rep->diff.found && !unsound)
            add_finding(o, "differs", "an exact rewrite changed the result: output %d element %s on rank %d "
                        "(trial %d): before %s, after %s", rep->diff.output, rep->diff.where, rep->diff.rank,
                        rep->diff.trial, rep->diff.before, rep->diff.after);
        if (!rep->diff.found && must_differ)
            add_finding(o, "not-refuted", "a known-unsound rewrite was not refuted in %d trials at %d devices",
                        rep->trials_run, coll_world(c));
    } else if (!rep->equivalent && wider && !narrower && !unsound) {
        widening_less_accurate(rep, o);
    }
}

/* Instructions other than parameters whose value nothing reads (no
 * operand use, not a root), over every computation: what dead-code
 * removal keeps because another instruction waits for it. */
static int unread_values(const IrModule *m)
{
    int n = 0;
    for (int c = 0; c < m->n_computations; c++) {
        const IrComputation *comp = m->computations[c];
        int lo, span = ir_computation_id_span(comp, &lo);
        unsigned char *read = xcalloc((size_t)span + 1, 1);
        for (int i = 0; i < comp->n_instrs; i++)
            for (int k = 0; k < comp->instrs[i]->n_operands; k++) {
                int id = comp->instrs[i]->operands[k]->id - lo;
                if (id >= 0 && id < span)
                    read[id] = 1;
            }
        for (int i = 0; i < comp->n_instrs; i++) {
            int id = comp->instrs[i]->id - lo;
            n += comp->instrs[i] != comp->root && comp->instrs[i]->op != IR_OP_PARAMETER &&
                 (id < 0 || id >= span || !read[id]);
        }
        free(read);
    }
    return n;
}

/* The module's outcome in one mode: the pass run, the rewritten module
 * (NULL when there is none to read), the sites read; the function is
 * checked only when full. */
static IrModule *outcome(Coll *c, const FuzzConfig *cfg, const Module *mod, const Pass *pass, PassMode mode,
                         PassRun *run, Outcome *o)
{
    PassOptions po = mod->opt;
    po.mode = mode;
    fuzz_run_pass(c, mod->m, &pass, 1, &po, cfg->pass_timeout, run);
    memset(o, 0, sizeof *o);
    o->site = -1;
    IrModule *after = NULL;
    switch (run->status) {
    case RUN_HUNG:
        add_finding(o, "hang", "the pass did not finish in %.0f s", cfg->pass_timeout);
        break;
    case RUN_CRASHED:
        add_finding(o, "crash", "%s", run->msg);
        break;
    case RUN_FAILED:
        add_finding(o, "pass-error", "%s", run->msg);
        break;
    case RUN_UNCHANGED:
        after = mod->m;
        break;
    case RUN_CHANGED: {
        Error perr = { 0 };
        after = ir_parse_module(run->text, run->len, "<rewritten>", &perr);
        if (after && !ir_verify_module(after, &perr)) {
            ir_module_free(after);
            after = NULL;
        }
        if (!after)
            add_finding(o, "reparse", "the rewritten module, printed, does not parse back: %s", perr.msg);
        break;
    }
    }
    if (after)
        read_sites(mod, after, mode, o);
    /* A rewrite replaces what it moves (spec 2-3) and the pipeline removes
     * what is dead, so nothing the input read becomes unread; an old
     * instruction still waited for by a control edge would. */
    int unread_before = after && after != mod->m ? unread_values(mod->m) : 0;
    int unread_after = after && after != mod->m ? unread_values(after) : 0;
    if (unread_after > unread_before) {
        o->site = -1;
        add_finding(o, "unread", "the rewritten module holds %d instructions whose value nothing reads, the input %d: "
                    "a replaced instruction was kept (a control edge left on it?)", unread_after, unread_before);
    }
    return after;
}

/* A finding cut down to one site: the module rebuilt with only that site
 * (its own stream draws it the same) and the same kind of finding again.
 * Returns the one-site module's text, or NULL. */
static char *shrink_to_site(Coll *c, const FuzzConfig *cfg, const Module *mod, const Pass *pass, PassMode mode,
                            const Outcome *o, int *site)
{
    if (is_combiner(mod->number) || mod->n_sites < 2)
        return NULL;
    for (int k = 0; k < mod->n_sites; k++) {
        bool named = false, anywhere = false;
        for (int i = 0; i < o->n; i++) {
            named |= o->f[i].site == k;
            anywhere |= o->f[i].site < 0;
        }
        if (!named && !anywhere)
            continue;
        Module one;
        Error err = { 0 };
        if (!coll_all_ok(c, generate(cfg, coll_world(c), mod->index, mod->number, k, &one, &err))) {
            module_free(&one);
            continue;
        }
        PassRun run;
        Outcome o2;
        IrModule *after = outcome(c, cfg, &one, pass, mode, &run, &o2);
        bool same = false;
        for (int i = 0; i < o2.n; i++)
            for (int j = 0; j < o->n; j++)
                same |= strcmp(o2.f[i].kind, o->f[j].kind) == 0;
        char *text = same ? xstrdup(one.text) : NULL;
        if (after && after != one.m)
            ir_module_free(after);
        free(run.text);
        free(run.msg);
        module_free(&one);
        if (text) {
            *site = k;
            return text;
        }
    }
    return NULL;
}

/* The whole pipeline of the configured passes in sound mode, on a module
 * whose every site is kept or rewritten exactly there: whatever the passes
 * make of each other's output (a flip's new all-gather combined, say), the
 * result must be bitwise the same function.  Every other module runs it
 * with --iterate (the pipeline again until a round changes nothing). */
static bool check_pipeline(Coll *c, const FuzzConfig *cfg, const Module *mod, Outcome *o)
{
    for (int k = 0; k < mod->n_sites; k++)
        if (mod->sites[k].expect[PASS_MODE_SOUND] != FUZZ_KEEP && mod->sites[k].expect[PASS_MODE_SOUND] != FUZZ_EXACT)
            return false;
    PassOptions po = mod->opt;
    po.mode = PASS_MODE_SOUND;
    po.iterate = mod->index % 2 == 1;
    PassRun run;
    fuzz_run_pass(c, mod->m, cfg->passes, cfg->n_passes, &po, cfg->pass_timeout, &run);
    o->site = -1;
    if (run.status == RUN_HUNG || run.status == RUN_CRASHED || run.status == RUN_FAILED) {
        add_finding(o, "pipeline-error", "the sound pipeline of every --passes pass: %s",
                    run.status == RUN_HUNG ? "hung" : run.msg);
    } else if (run.status == RUN_CHANGED) {
        Error perr = { 0 };
        IrModule *after = ir_parse_module(run.text, run.len, "<pipeline>", &perr);
        if (after && ir_verify_module(after, &perr)) {
            CheckOptions co;
            check_options_default(&co);
            co.trials = cfg->trials;
            co.seed = mod->seed;
            co.tol.mode = CHECK_EXACT;
            co.opaque_custom_calls = false;
            CheckReport rep;
            if (!check_modules(c, mod->m, after, &co, &rep, &perr))
                add_finding(o, "check-error", "the checker could not run the pipeline's pair: %s", perr.msg);
            else if (rep.diff.found && (check_report_free(&rep), true))
                add_finding(o, "pipeline-differs", "the sound pipeline of every --passes pass changed the result of "
                            "a module of exact sites: output %d element %s on rank %d: before %s, after %s",
                            rep.diff.output, rep.diff.where, rep.diff.rank, rep.diff.before, rep.diff.after);
            else
                check_report_free(&rep);
        } else {
            add_finding(o, "reparse", "the pipeline's module, printed, does not parse back: %s", perr.msg);
        }
        if (after)
            ir_module_free(after);
    }
    free(run.text);
    free(run.msg);
    return true;
}

static void save_pipeline_finding(Coll *c, const FuzzConfig *cfg, const Module *mod, const Outcome *o, FuzzTally *t,
                                  char *dir, size_t dir_n)
{
    if (!finding_dir(c, cfg, "pipeline", t, dir, dir_n) || coll_rank(c) != 0)
        return;
    write_file(dir, "before.hlo", mod->text);
    StrBuf sb, list;
    strbuf_init(&sb);
    strbuf_init(&list);
    for (int i = 0; i < cfg->n_passes; i++)
        strbuf_printf(&list, "%s%s", i ? "," : "", cfg->passes[i]->alias);
    recipe_text(mod, cfg, PASS_MODE_SOUND, &sb);
    strbuf_printf(&sb, "pipeline: --passes=%s, sound mode\nfindings:\n", list.s);
    for (int k = 0; k < o->n; k++)
        strbuf_printf(&sb, "  %s: %s\n", o->f[k].kind, o->f[k].msg);
    write_file(dir, "recipe.txt", sb.s);
    strbuf_free(&sb);
    strbuf_init(&sb);
    strbuf_printf(&sb, "mpirun --oversubscribe -np %d hlo-check --passes=%s --pass-mode=sound --seed=%llu --trials=%d "
                  "%s/before.hlo\n", coll_world(c), list.s, (unsigned long long)mod->seed, cfg->trials, dir);
    strbuf_printf(&sb, "mpirun --oversubscribe -np %d hlo-fuzz --passes=%s --pass-mode=sound --seed=%llu --index=%ld%s\n",
                  coll_world(c), list.s, (unsigned long long)cfg->seed, mod->index, draws_flag(cfg, dir));
    write_file(dir, "command.txt", sb.s);
    strbuf_free(&sb);
    strbuf_free(&list);
}

bool fuzz_run_one(Coll *c, const FuzzConfig *cfg, long index, int which, FuzzTally *t, Error *err)
{
    const Pass *pass = cfg->passes[which];
    Module mod;
    if (!coll_all_ok(c, generate(cfg, coll_world(c), index, pass->number, -1, &mod, err))) {
        if (!err->msg[0])
            error_set(err, ERR_INTERNAL, (IrLoc){ 0 }, "hlo-fuzz: module %ld: another rank failed to build it", index);
        module_free(&mod);
        return false;
    }
    t->modules++;
    t->structure_only += mod.unrunnable;
    for (int mode = 0; mode < 2; mode++) {
        if (!cfg->modes[mode])
            continue;
        FuzzPassTally *pt = &t->pass[which][mode];
        pt->modules++;
        pt->sites += mod.n_sites;
        PassRun run;
        Outcome o;
        IrModule *after = outcome(c, cfg, &mod, pass, (PassMode)mode, &run, &o);
        CheckOptions co;
        CheckReport rep;
        bool have_rep = false;
        if (after && run.status == RUN_CHANGED && !mod.unrunnable)
            check_function(c, &mod, after, (PassMode)mode, cfg, &o, &co, &rep, &have_rep);
        pt->rewrites += o.rewrites;
        if (o.n > 0) {
            pt->findings++;
            t->findings++;
            char dir[4096] = "";
            save_finding(c, cfg, &mod, pass, (PassMode)mode, &run, after, &o, &co, have_rep ? &rep : NULL, t, dir,
                         sizeof dir);
            int site = -1;
            char *one = dir[0] ? shrink_to_site(c, cfg, &mod, pass, (PassMode)mode, &o, &site) : NULL;
            if (one && coll_rank(c) == 0) {
                char note[200];
                write_file(dir, "site.hlo", one);
                snprintf(note, sizeof note, "shrunk: site %d alone (site.hlo) shows it too\n", site);
                put_file(dir, "recipe.txt", note, "a");
            }
            free(one);
            if (coll_rank(c) == 0) {
                fprintf(stderr, "hlo-fuzz: finding in #%d (%s mode), module %ld%s%s:\n", pass->number,
                        mode == PASS_MODE_SOUND ? "sound" : "faithful", index, dir[0] ? ", saved in " : "", dir);
                for (int k = 0; k < o.n; k++)
                    fprintf(stderr, "  %s: %s\n", o.f[k].kind, o.f[k].msg);
            }
            fuzz_tally_note(t, pass, (PassMode)mode, index, o.f[0].kind, o.f[0].msg, dir);
        }
        if (have_rep)
            check_report_free(&rep);
        if (after && after != mod.m)
            ir_module_free(after);
        free(run.text);
        free(run.msg);
    }
    if (cfg->n_passes > 1 && cfg->modes[PASS_MODE_SOUND] && !mod.unrunnable) {
        Outcome o = { .site = -1 };
        t->pipeline_modules += check_pipeline(c, cfg, &mod, &o);
        if (o.n > 0) {
            char dir[4096] = "";
            t->pipeline_findings++;
            t->findings++;
            save_pipeline_finding(c, cfg, &mod, &o, t, dir, sizeof dir);
            if (coll_rank(c) == 0) {
                fprintf(stderr, "hlo-fuzz: finding in the sound pipeline, module %ld%s%s:\n", index,
                        dir[0] ? ", saved in " : "", dir);
                for (int k = 0; k < o.n; k++)
                    fprintf(stderr, "  %s: %s\n", o.f[k].kind, o.f[k].msg);
            }
            fuzz_tally_note(t, pass, PASS_MODE_SOUND, index, o.f[0].kind, o.f[0].msg, dir);
        }
    }
    module_free(&mod);
    return true;
}

void fuzz_tally_note(FuzzTally *t, const Pass *pass, PassMode mode, long index, const char *kind, const char *msg,
                     const char *dir)
{
    if (t->n_notes == FUZZ_MAX_NOTES)
        return;
    FuzzNote *n = &t->notes[t->n_notes++];
    n->pass = pass->number;
    n->mode = mode;
    n->index = index;
    snprintf(n->kind, sizeof n->kind, "%s", kind);
    snprintf(n->msg, sizeof n->msg, "%s", msg);
    snprintf(n->dir, sizeof n->dir, "%s", dir);
}

bool fuzz_print_module(const FuzzConfig *cfg, int world, long index, int which, FILE *out, Error *err)
{
    Module mod;
    bool ok = generate(cfg, world, index, cfg->passes[which]->number, -1, &mod, err);
    if (ok) {
        StrBuf sb;
        strbuf_init(&sb);
        recipe_text(&mod, cfg, PASS_MODE_FAITHFUL, &sb);
        for (char *line = strtok(sb.s, "\n"); line; line = strtok(NULL, "\n"))
            fprintf(out, "// %s\n", line);
        strbuf_free(&sb);
        fputs(mod.text, out);
    }
    module_free(&mod);
    return ok;
}
