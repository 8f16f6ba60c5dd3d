/* hlo_check.c: hlo-check (spec/tools.md).  Are two modules the same
 * function?  Either two modules, or one module and --passes (rewritten here,
 * -o keeps the rewritten text).  Runs both on the same seeded inputs on every
 * MPI rank for --trials trials and compares every output element, or, when
 * the rewrite changes a reduction's accumulation type, judges accuracy
 * against the f64 oracle.
 * Exit status: 0 equivalent, 1 different (or less accurate), 2 bad input,
 * 3 internal error. */
#include "check.h"
#include "cli.h"
#include "coll.h"
#include "pass.h"
#include "pass_flags.h"
#include "run_flags.h"
#include "startup.h"
#include "watchdog.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct Options {
    const char *passes;
    const char *pass_mode;      /* becomes pass.mode */
    PassOptions pass;
    int64_t trials;
    uint64_t seed;
    const char *dist, *compare, *oracle;
    double atol, rtol, ulp;
    const char *save_dir, *json, *junit, *out_path, *inputs, *regions_dir;
    int64_t replicas, partitions;
    bool per_pass, shrink, opaque_custom_calls, fill_elided, local, help, prove, require_proof;
    int64_t max_memory;         /* 0: the default */
    double timeout;             /* --timeout, 0: none */
    int64_t threads;            /* --threads, 0: the default */
    int64_t region;             /* --local: only this region (1-based); 0: all */
} Options;

#define OPT(field) offsetof(Options, field)

static const CliFlag flags[] = {
    {"--passes", CLI_STRING, OPT(passes), "=P1,P2,...|default", "",
     "check one module against itself rewritten by these passes (else give two modules)"},
    {"-o", CLI_STRING, OPT(out_path), " FILE", "", "with --passes: also write the rewritten module to FILE"},
    PASS_CLI_FLAGS(Options),
    {"--trials", CLI_INT, OPT(trials), "=T", "8", "trials, each with new random inputs"},
    {"--seed", CLI_UINT64, OPT(seed), "=S", "0", "seed of the trials' input streams"},
    {"--dist", CLI_CHOICE, OPT(dist), "=mixed|uniform|normal|wide|special|copies|pairs|edges|small|extreme", "mixed",
     "input distribution; mixed: trial t draws the t-th of uniform, copies (parameters of one type hold the same "
     "values), edges (NaN, -0, inf, subnormals, max), pairs (parameters share values, negations, +-0 pairs), small "
     "(small integers, halves, powers of two, bit widths), extreme (integer limits, the whole float range), wide, "
     "special; a pair judged by accuracy draws uniform"},
    {"--compare", CLI_CHOICE, OPT(compare), "=auto|exact|tol|ulp", "auto",
     "auto: bitwise unless a reduction's accumulation type changed, then accuracy against the f64 oracle"},
    {"--atol", CLI_DOUBLE, OPT(atol), "=A", "0", "--compare=tol: absolute tolerance"},
    {"--rtol", CLI_DOUBLE, OPT(rtol), "=R", "0", "--compare=tol: relative tolerance"},
    {"--ulp", CLI_DOUBLE, OPT(ulp), "=U", "0", "--compare=ulp: units in the last place allowed"},
    {"--oracle", CLI_CHOICE, OPT(oracle), "=auto|f64|none", "auto", "judge both modules against the f64 oracle"},
    {"--save-counterexample", CLI_STRING, OPT(save_dir), "=DIR", "", "on a difference, write its inputs as .npy"},
    {"--inputs", CLI_STRING, OPT(inputs), " DIR|SNAPSHOT[,...]", "",
     "one trial on the inputs in DIR (param<p>.rank<r>.npy, as --save-counterexample and --shrink write them), "
     "or on the arguments an HloSnapshot recorded (XLA's *.snapshot.pb; with N ranks N snapshots, rank r "
     "taking the r-th), instead of drawn ones"},
    {"--json", CLI_STRING, OPT(json), "=FILE", "", "write the report as JSON"},
    {"--junit", CLI_STRING, OPT(junit), "=FILE", "", "write the report as JUnit XML"},
    {"--prove", CLI_SWITCH, OPT(prove), "", "off",
     "also run both modules on expression hashes (every element carries a 128-bit hash of how it was computed, "
     "decisions taken from trial 0's run): PROVED EQUIVALENT for all inputs, REFUTED with the two expressions, or "
     "NOT PROVED (the sampled verdict stands)"},
    {"--require-proof", CLI_SWITCH, OPT(require_proof), "", "off", "with --prove: exit 1 unless PROVED EQUIVALENT"},
    DEVICE_CLI_FLAGS(Options),
    {"--per-pass", CLI_SWITCH, OPT(per_pass), "", "off",
     "with --passes: check after every pass that changes the module and name the first one that breaks equivalence"},
    {"--shrink", CLI_SWITCH, OPT(shrink), "", "off",
     "on a difference, cut both modules down to the failing output and the instructions whose values differ "
     "(the rest become parameters or constants holding their values) and write the pair, its inputs and the "
     "command to --save-counterexample DIR (default: shrunk); an element-wise pair shrinks to the failing element, "
     "and to one rank when nothing rank-dependent is left (no collective, no replica-id); with --per-pass, the pair "
     "across the first pass that breaks equivalence, alone"},
    OPAQUE_CLI_FLAG(Options, "true"),
    {"--local", CLI_SWITCH, OPT(local), "", "off",
     "check each region where the modules differ on its own, at its real shapes: what both compute alike is cut "
     "away and enters the region as parameters (index arithmetic on constants and device ids stays in); "
     "one line per region, and the pair is equivalent when every region is"},
    {"--region", CLI_INT, OPT(region), "=N", "all", "with --local: check region N only (as numbered by --local)"},
    {"--regions-dir", CLI_STRING, OPT(regions_dir), "=DIR", "",
     "with --local: also write each region's two sides as DIR/region<N>.before.hlo and .after.hlo, modules that "
     "hlo-check and hlo-run take on their own"},
    RUN_CLI_FLAGS(Options),
    {"--help", CLI_SWITCH, OPT(help), "", "", "show this help and exit"},
};
#define N_FLAGS ((int)(sizeof flags / sizeof flags[0]))

static const char usage[] =
    "usage: mpirun -np N hlo-check before.hlo after.hlo [flags]\n"
    "       mpirun -np N hlo-check --passes=P1,P2 module.hlo [flags]\n\n"
    "Runs both modules on the same random inputs on every rank and compares every output.\n"
    "Exit status: 0 equivalent, 1 different or less accurate, 2 bad input, 3 internal error.\n\n";

typedef struct Tool {
    Coll *c;
    int rank;
    Options o;
    char max_memory_why[160];
    bool max_memory_given;      /* --max-memory was on the command line */
    const char *inputs[2];
    int n_inputs;
    Value **given;          /* --inputs: this rank's values for before's parameters */
    int n_given;
} Tool;

static void defaults(Options *o)
{
    *o = (Options){ .pass_mode = "faithful", .trials = 8, .dist = "mixed", .compare = "auto", .oracle = "auto",
                    .opaque_custom_calls = true };
    pass_options_default(&o->pass);
}

/* Errors every rank has alike: rank 0 says it, everyone exits. */
__attribute__((noreturn)) static void fail_all(Tool *t, const Error *err)
{
    if (t->rank == 0)
        error_print(err, stderr);
    coll_finish(t->c, error_exit_code(err));
}

__attribute__((noreturn)) static void usage_error(Tool *t, const char *msg)
{
    if (t->rank == 0)
        fprintf(stderr, "hlo-check: %s\n", msg);
    coll_finish(t->c, 2);
}

static void parse_args(Tool *t, int argc, char **argv)
{
    char msg[512];
    defaults(&t->o);
    if (!cli_parse(flags, N_FLAGS, argc, argv, &t->o, t->inputs, 2, &t->n_inputs, msg, sizeof msg))
        usage_error(t, msg);
    if (t->o.help) {
        if (t->rank == 0)
            cli_print_help(stdout, usage, flags, N_FLAGS);
        coll_finish(t->c, 0);
    }
    if (t->o.per_pass && !t->o.passes)
        usage_error(t, "--per-pass needs --passes; see --help");
    if (t->o.local && (t->o.per_pass || t->o.shrink || t->o.inputs))
        usage_error(t, "--local does not go with --per-pass, --shrink or --inputs; see --help");
    if ((t->o.region || t->o.regions_dir) && !t->o.local)
        usage_error(t, "--region and --regions-dir need --local; see --help");
    int want = t->o.passes ? 1 : 2;
    if (t->n_inputs != want) {
        snprintf(msg, sizeof msg, "%s; see --help",
                 t->o.passes ? "with --passes give one module" : "give two modules, or one module and --passes");
        usage_error(t, msg);
    }
    if (t->o.trials < 1)
        usage_error(t, "--trials must be at least 1");
    if (t->o.timeout < 0)
        usage_error(t, "--timeout must be positive");
    if (t->o.atol < 0 || t->o.rtol < 0)
        usage_error(t, "--atol and --rtol take a tolerance of at least 0");
    if (!startup_threads_ok(t->o.threads, msg, sizeof msg))
        usage_error(t, msg);
    const char *outs[] = { t->o.out_path, t->o.json, t->o.junit };
    static const char *const out_flags[] = { "-o", "--json", "--junit" };
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < t->n_inputs; i++)
            if (cli_same_file(t->inputs[i], outs[k])) {
                snprintf(msg, sizeof msg, "%s %s is an input module: refusing to write over it", out_flags[k],
                         outs[k]);
                usage_error(t, msg);
            }
    /* Rank 0 writes the files: it alone tries, and tells the others. */
    int64_t writable = 1;
    msg[0] = 0;
    for (int k = 0; k < 3 && t->rank == 0 && writable; k++)
        writable = cli_can_create(outs[k], msg, sizeof msg);
    coll_bcast(t->c, &writable, sizeof writable, 0);
    if (!writable)
        usage_error(t, msg);
    t->max_memory_given = t->o.max_memory != 0;
    if (t->o.max_memory)
        snprintf(t->max_memory_why, sizeof t->max_memory_why, "as given");
    else
        t->o.max_memory = check_default_max_memory(t->c, t->max_memory_why, sizeof t->max_memory_why);
}

/* Every rank has the same modules, flags and input files, or none starts. */
static void agree_at_startup(Tool *t, int argc, char **argv)
{
    static const char *const outputs[] = { "-o", "--json", "--junit", "--save-counterexample", "--regions-dir",
                                           RUN_FLAGS_NO_AGREEMENT, NULL };
    StartupItem items[] = {
        { "module files (by content)", startup_hash_file(t->inputs[0]) ^ (startup_hash_file(t->inputs[1]) * 31) },
        { "flags", startup_hash_flags(argc, argv, flags, N_FLAGS, outputs) },
        { "--inputs files (how many DIR/param<p>.rank<r>.npy, and their sizes)", startup_hash_inputs(t->o.inputs, t->rank) },
    };
    char msg[1024];
    if (!startup_agree(t->c, items, 3, msg, sizeof msg))
        usage_error(t, msg);
}

static IrModule *load(Tool *t, const char *path)
{
    Error err = { 0 };
    IrModule *m = ir_parse_file(path, &err);
    if (!m || !ir_verify_module(m, &err))
        fail_all(t, &err);
    if (t->rank == 0)
        ir_note_source(m, "hlo-check", path, stderr);
    char note[1024];
    if (t->o.fill_elided && check_fill_elided_constants(m, t->o.seed, note, sizeof note, &err) < 0)
        fail_all(t, &err);
    if (t->o.fill_elided && note[0] && t->rank == 0)
        fprintf(stderr, "hlo-check: note: %s\n", note);
    return m;
}

static void pass_options(const Tool *t, PassOptions *po)
{
    *po = t->o.pass;
    po->mode = pass_mode_from_name(t->o.pass_mode);
}

/* before rewritten by passes[0..n), verified (a broken result is a bug). */
static IrModule *rewrite_with(Tool *t, const IrModule *before, const Pass *const *passes, int n, bool *changed)
{
    Error err = { 0 };
    PassOptions po;
    pass_options(t, &po);
    IrModule *after = check_rewrite(before, passes, n, &po, changed, &err);
    if (!after)
        fail_all(t, &err);
    return after;
}

static int parse_passes(Tool *t, const Pass **list)
{
    Error err = { 0 };
    int n = 0;
    if (!pass_parse_list(t->o.passes, list, &n, &err))
        usage_error(t, err.msg);
    return n;
}

/* The second module: the first rewritten by --passes, written to -o on rank 0. */
static IrModule *rewrite(Tool *t, const IrModule *before)
{
    Error err = { 0 };
    const Pass *list[64];
    int n = parse_passes(t, list);
    bool changed = false;
    IrModule *after = rewrite_with(t, before, list, n, &changed);
    if (t->o.out_path && t->rank == 0 && !ir_write_module_file(after, t->o.out_path, &err))
        fail_all(t, &err);
    return after;
}

static void check_options(const Tool *t, CheckOptions *co)
{
    check_options_default(co);
    co->trials = (int)t->o.trials;
    co->seed = t->o.seed;
    check_dist_from_name(t->o.dist, &co->dist);
    const char *c = t->o.compare;
    co->tol.mode = strcmp(c, "exact") == 0 ? CHECK_EXACT : strcmp(c, "tol") == 0 ? CHECK_TOL
                 : strcmp(c, "ulp") == 0   ? CHECK_ULP : CHECK_AUTO;
    co->tol.atol = t->o.atol;
    co->tol.rtol = t->o.rtol;
    co->tol.ulp = t->o.ulp;
    co->oracle = strcmp(t->o.oracle, "f64") == 0 ? 1 : strcmp(t->o.oracle, "none") == 0 ? 0 : -1;
    co->replicas = (int)t->o.replicas;
    co->partitions = (int)t->o.partitions;
    co->save_dir = t->o.save_dir;
    co->progress = isatty(2);
    co->inputs = t->given;
    co->n_inputs = t->n_given;
    co->opaque_custom_calls = t->o.opaque_custom_calls;
    co->max_memory = t->o.max_memory;
    co->max_memory_why = t->max_memory_why;
    co->prove = t->o.prove || t->o.require_proof;
}

/* A run-time error: when every rank has it, rank 0 reports once; when some
 * rank is stuck in a collective waiting for this one, report and abort. */
__attribute__((noreturn)) static void fail_run(Tool *t, const Error *err)
{
    bool agreed;
    coll_agree(t->c, false, 5.0, &agreed);
    if (agreed)
        fail_all(t, err);
    fprintf(stderr, "rank %d: ", t->rank);
    error_print(err, stderr);
    coll_abort(t->c, error_exit_code(err));
}

static void write_reports(Tool *t, const CheckReport *rep, const char *bn, const char *an)
{
    Error err = { 0 };
    if (t->rank != 0)
        return;
    check_print_report(stdout, rep, bn, an);
    if ((t->o.json && !check_write_json(t->o.json, rep, bn, an, &err)) ||
        (t->o.junit && !check_write_junit(t->o.junit, rep, bn, an, &err)))
        error_print(&err, stderr);
}

/* One check of before against after with co; fails the job on errors.
 * With keep, the report is left there for the caller to free. */
static bool check_with(Tool *t, const CheckOptions *co, const IrModule *before, const IrModule *after,
                       const char *before_name, const char *after_name, bool report, CheckReport *keep)
{
    CheckReport rep;
    Error err = { 0 };
    if (!check_modules(t->c, before, after, co, &rep, &err))
        fail_run(t, &err);
    bool agreed;
    coll_agree(t->c, true, 0, &agreed);
    if (report || !rep.equivalent)
        write_reports(t, &rep, before_name, after_name);
    bool equivalent = rep.equivalent;
    if (keep)
        *keep = rep;
    else
        check_report_free(&rep);
    return equivalent;
}

static bool check_one(Tool *t, const IrModule *before, const IrModule *after, const char *after_name, bool report)
{
    CheckOptions co;
    check_options(t, &co);
    return check_with(t, &co, before, after, t->inputs[0], after_name, report, NULL);
}

/* ---- --inputs */

/* --inputs F0.snapshot.pb[,F1...]: this rank's snapshot (the r-th; one
 * for a run of one rank), its recorded arguments as m's parameters. */
static bool given_from_snapshot(Tool *t, const IrModule *m, Error *err)
{
    const char *list = t->o.inputs;
    int n, world = coll_world(t->c);
    char *path = cli_list_item(list, t->rank, &n);
    if (n != world) {
        free(path);
        return error_set(err, ERR_MISMATCH, (IrLoc){ list, 0, 0 }, "--inputs %s: %d snapshot%s for %d rank%s: a "
                         "snapshot records one device's run, so give one per rank (F0,F1,...)", list, n,
                         n == 1 ? "" : "s", world, world == 1 ? "" : "s");
    }
    if (!path)
        return error_set(err, ERR_MISMATCH, (IrLoc){ list, 0, 0 }, "--inputs %s: an empty file name", list);
    IrModule *sm = ir_parse_file(path, err);
    bool ok = sm != NULL;
    if (ok && !sm->snapshot)
        ok = error_set(err, ERR_MISMATCH, (IrLoc){ path, 0, 0 }, "--inputs %s: neither a directory of .npy "
                       "inputs nor an HloSnapshot (it is %s)", path, sm->source_kind ? sm->source_kind : "HLO text");
    if (ok && check_snapshot_params(sm->snapshot, m, t->given, err))
        t->n_given = m->entry->n_params;
    else
        ok = false;
    ir_module_free(sm);
    free(path);
    return ok;
}

/* This rank's values for m's parameters from DIR (or from snapshots); a
 * file missing or not matching its parameter on any rank stops every rank. */
static void load_given(Tool *t, const IrModule *m)
{
    const IrComputation *e = m->entry;
    Error err = { 0 };
    t->given = xcalloc((size_t)e->n_params + 1, sizeof *t->given);
    struct stat st;
    if ((stat(t->o.inputs, &st) == 0 && !S_ISDIR(st.st_mode)) || strchr(t->o.inputs, ',')) {
        if (!given_from_snapshot(t, m, &err))
            fail_run(t, &err);
        t->o.trials = 1;
        return;
    }
    bool ok = true;
    for (int p = 0; p < e->n_params && ok; p++) {
        bool rounded = false;
        t->given[p] = npy_read_param(t->o.inputs, p, t->rank, e->params[p]->shape, &rounded, &err);
        ok = t->given[p] != NULL;
        t->n_given = p + 1;
    }
    if (!ok)
        fail_run(t, &err);
    t->o.trials = 1;    /* the inputs are fixed: one trial says it all */
}

static void free_given(Tool *t)
{
    for (int p = 0; p < t->n_given; p++)
        value_release(t->given[p]);
    free(t->given);
    t->given = NULL;
    t->n_given = 0;
}

/* ---- --shrink */

static void write_text(Tool *t, const IrModule *m, const char *dir, const char *name)
{
    char path[4096];
    Error err = { 0 };
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (!ir_write_module_file(m, path, &err))
        fail_run(t, &err);      /* rank 0 alone writes: the others must not wait in the next collective */
}

/* rep: the failing check.  Shrinks the pair on the failing trial's inputs
 * (check_shrink_pair), checks the result again on them with the report,
 * and writes the pair, its inputs and the command to DIR. */
__attribute__((noreturn)) static void shrink(Tool *t, const IrModule *before, const IrModule *after,
                                             const CheckReport *rep)
{
    const char *dir = t->o.save_dir ? t->o.save_dir : "shrunk";
    CheckOptions co;
    check_options(t, &co);
    co.prove = false;
    CheckShrunk sh;
    Error err = { 0 };
    if (!check_shrink_pair(t->c, before, after, &co, rep, &sh, &err))
        fail_run(t, &err);
    const CheckShrink *s = &sh.s;
    const char *compare = co.tol.mode == CHECK_AUTO ? "exact" : t->o.compare;
    if (co.tol.mode == CHECK_AUTO)
        co.tol.mode = CHECK_EXACT;
    co.trials = 1;
    co.save_dir = NULL;
    co.progress = false;
    if (t->rank == 0) {
        printf("\nhlo-check: shrinking: kept output %d of %d; %d instructions replaced by parameters, %d by "
               "constants; %d unused parameters dropped", rep->diff.output, rep->n_outputs, s->to_parameters,
               s->to_constants, s->parameters_dropped);
        if (sh.element)
            printf("; element-wise: cut to element %s of the output, as scalars", sh.where);
        if (sh.box)
            printf("; shapes cut to what element %s of the output depends on", sh.where);
        printf("\n");
    }
    char bn[4096], an[4096];
    snprintf(bn, sizeof bn, "%s/before.hlo", dir);
    snprintf(an, sizeof an, "%s/after.hlo", dir);
    co.inputs = s->inputs;
    co.n_inputs = s->n_inputs;
    /* After a rank cut the pair runs on the first sh.ranks ranks alone. */
    bool narrowed = sh.ranks < coll_world(t->c), still = true;
    if (narrowed)
        co.replicas = co.partitions = 0;
    if (!narrowed || coll_narrow(t->c, sh.ranks))
        still = !check_with(t, &co, s->before, s->after, bn, an, true, NULL);
    if (narrowed)
        coll_widen(t->c);
    int64_t still64 = still;
    coll_bcast(t->c, &still64, sizeof still64, 0);
    still = still64 != 0;
    if (!check_shrunk_write(t->c, &sh, dir, compare, &err))
        fail_run(t, &err);
    if (t->rank == 0) {
        printf("hlo-check: shrunk from %d + %d to %d + %d instructions (%s)", s->instrs[0][0], s->instrs[1][0],
               s->instrs[0][1], s->instrs[1][1], still ? "still different" : "NOT reproduced: please report this");
        if (sh.alone)
            printf(" and from %d ranks to 1 (rank %d's inputs alone show it)", coll_world(t->c), sh.failing_rank);
        else if (narrowed)
            printf(" and from %d ranks to %d (the ranks the failing one hears from, renumbered; it is rank %d)",
                   coll_world(t->c), sh.ranks, sh.failing_rank);
        printf(", written with its inputs and the command to %s/\n", dir);
    }
    check_shrink_free(&sh.s);
    coll_finish(t->c, still ? 1 : 3);
}

/* --per-pass --shrink: the pair across the guilty pass alone (the pipeline
 * before it, against the pipeline up to it) is checked and shrunk. */
__attribute__((noreturn)) static void shrink_one_pass(Tool *t, const IrModule *before, const Pass *const *list, int k)
{
    bool changed = false;
    IrModule *b = rewrite_with(t, before, list, k, &changed);
    IrModule *a = rewrite_with(t, before, list, k + 1, &changed);
    CheckOptions co;
    check_options(t, &co);
    co.save_dir = NULL;
    co.prove = false;
    CheckReport rep;
    char bn[512], an[512];
    snprintf(bn, sizeof bn, "%s before #%d %s", t->inputs[0], list[k]->number, list[k]->name);
    snprintf(an, sizeof an, "%s after #%d %s", t->inputs[0], list[k]->number, list[k]->name);
    if (t->rank == 0)
        printf("\nhlo-check: --shrink: the pair across #%d %s alone\n", list[k]->number, list[k]->name);
    bool equivalent = check_with(t, &co, b, a, bn, an, false, &rep);
    if (equivalent || !rep.diff.found) {
        if (t->rank == 0)
            printf("hlo-check: --shrink: %s, with no bitwise difference to keep; --compare=exact shrinks one\n",
                   equivalent ? "the pass alone shows no difference on these trials" : "the pair was judged by accuracy");
        check_report_free(&rep);
        coll_finish(t->c, 1);
    }
    shrink(t, b, a, &rep);
}

/* --per-pass: the pipeline one pass longer at a time (check_per_pass); the
 * first prefix that fails names the pass to blame. */
__attribute__((noreturn)) static void per_pass(Tool *t, const IrModule *before)
{
    const Pass *list[64];
    int n = parse_passes(t, list);
    PassOptions po;
    pass_options(t, &po);
    CheckOptions co;
    check_options(t, &co);
    CheckPerPass pp;
    Error err = { 0 };
    if (!check_per_pass(t->c, before, list, n, &po, &co, &pp, &err))
        fail_run(t, &err);
    bool agreed;
    coll_agree(t->c, true, 0, &agreed);
    for (int k = 0; k < pp.n_steps && t->rank == 0; k++) {
        const CheckPassStep *s = &pp.steps[k];
        if (!s->checked)
            continue;
        if (!s->equivalent) {
            char name[512];
            snprintf(name, sizeof name, "%s after the passes up to #%d %s", t->inputs[0], s->pass->number,
                     s->pass->name);
            write_reports(t, &s->report, t->inputs[0], name);
        }
        printf("hlo-check: after #%-3d %-42s %s\n", s->pass->number, s->pass->name,
               s->equivalent ? "equivalent" : "NOT EQUIVALENT");
    }
    int code = pp.broken >= 0;
    if (t->rank == 0 && code)
        printf("hlo-check: the first pass that breaks equivalence is #%d %s\n", pp.steps[pp.broken].pass->number,
               pp.steps[pp.broken].pass->name);
    else if (t->rank == 0)
        printf("hlo-check: EQUIVALENT after every pass of --passes=%s\n", t->o.passes);
    int k = pp.broken;
    check_per_pass_free(&pp);
    if (code && t->o.shrink)
        shrink_one_pass(t, before, list, k);
    coll_finish(t->c, code);
}

/* ---- --local */

/* One region checked with co, or its need reported; *verdict gets 1
 * equivalent, 0 differs (on free inputs), -1 not run here. */
/* The estimated need of checking a region: both sides' outputs held, or
 * before's as a digest when that is what fits (check.c does the same). */
static void region_need(const CheckOptions *co, const CheckRegion *r, int64_t limit, InterpMemory *need)
{
    check_pair_need(r->before, r->after, NULL, need);
    CheckSite *sites = NULL;
    int n_sites = check_find_sites(r->before, r->after, &sites);
    free(sites);
    bool bitwise = co->tol.mode == CHECK_EXACT || (co->tol.mode == CHECK_AUTO && n_sites == 0);
    if (limit > 0 && need->peak > limit && bitwise && co->oracle != 1)
        check_pair_lean_need(r->before, r->after, need);
}

/* The region checked on the ranks it needs (the job narrowed to them when
 * fewer; one group of its devices when one stands for all), or the reason
 * it cannot run here.  *verdict: 1 equivalent, 0 differs (on free inputs),
 * -1 not run; the same on every rank. */
/* Does the region hold one of the pair's sites (a reduction whose
 * accumulation type the rewrite changed)? */
static bool holds_site(const CheckRegion *r, const CheckSite *sites, int n_sites)
{
    for (int i = 0; i < n_sites; i++) {
        char name[96];
        snprintf(name, sizeof name, "%s", sites[i].before_name);
        char *bracket = strchr(name, '[');      /* "name[i]": operand i of a variadic reduction */
        if (bracket)
            *bracket = 0;
        for (int c = 0; c < r->before->n_computations; c++)
            if (ir_computation_find(r->before->computations[c], name))
                return true;
    }
    return false;
}

static void check_region(Tool *t, const CheckOptions *co, CheckRegion *r, int index, int n, const CheckSite *sites,
                         int n_sites, int *verdict)
{
    Error err = { 0 };
    int world = coll_world(t->c), devices = check_module_devices(r->before, world);
    bool one = r->group_size > 1 && r->group_size < devices;
    if (one && !check_region_one_group(r, &err))
        fail_all(t, &err);
    int ranks = one ? r->group_size : devices;
    if (t->rank == 0) {
        printf("region %d/%d in %s: %s: %d -> %d instructions, %d inputs, %d outputs", index + 1, n, r->where,
               r->what, r->instrs[0], r->instrs[1], r->n_inputs, r->n_outputs);
        if (one)
            printf(", one group of %d of its %d devices stands for all (every collective on the same groups, "
                   "no device id)", r->group_size, devices);
        fflush(stdout);
    }
    int64_t status[2] = { -1, 0 };      /* verdict; why not run: 0 ran, 1 p2p, 2 ranks, 3 memory */
    InterpMemory need = { 0 };
    int64_t limit = co->max_memory;
    char why_limit[160] = "as given", bytes[32], lim[32];
    if (r->point_to_point)
        status[1] = 1;
    else if (ranks > world)
        status[1] = 2;
    bool active = status[1] == 0 && (ranks == world || coll_narrow(t->c, ranks));
    if (active) {
        if (!t->max_memory_given) {     /* the default over the ranks working now */
            limit = check_default_max_memory(t->c, why_limit, sizeof why_limit);
            coll_allreduce_i64(t->c, &limit, 1, COLL_MIN);
        }
        region_need(co, r, limit, &need);
        if (limit > 0 && need.peak > limit)
            status[1] = 3;
    }
    interp_format_bytes(need.peak, bytes, sizeof bytes);
    interp_format_bytes(limit, lim, sizeof lim);
    if (t->rank == 0 && (status[1] == 0 || status[1] == 3))
        printf(", %s per rank x %d ranks", bytes, ranks);
    if (active && status[1] == 0) {
        CheckReport rep;
        CheckOptions quiet = *co;
        quiet.progress = false;
        quiet.max_memory = limit;
        quiet.max_memory_why = why_limit;
        if (t->rank == 0) {
            printf(": ");
            fflush(stdout);
        }
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        if (!check_modules(t->c, r->before, r->after, &quiet, &rep, &err))
            fail_run(t, &err);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        /* A region around a reduction whose accumulation type changed
         * differs by design; its accuracy is judged on the whole pair. */
        bool precision = !rep.equivalent && holds_site(r, sites, n_sites);
        status[0] = precision ? 2 : rep.equivalent;
        if (t->rank == 0) {
            printf("%s (%d trials, %.1f s)\n",
                   precision ? "CHANGES PRECISION (an accumulation type changed here: judged on the whole pair)"
                   : rep.equivalent ? (rep.by_accuracy ? "AT LEAST AS ACCURATE" : "EQUIVALENT")
                                    : (rep.by_accuracy ? "LESS ACCURATE on free inputs" : "DIFFERS on free inputs"),
                   rep.trials_run, (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
            if (!rep.equivalent && !precision)
                check_print_report(stdout, &rep, "the region before", "the region after");
        }
        check_report_free(&rep);
    }
    if (ranks < world && status[1] != 1 && status[1] != 2)
        coll_widen(t->c);
    coll_bcast(t->c, status, sizeof status, 0);
    *verdict = (int)status[0];
    if (t->rank != 0 || status[1] == 0)
        return;
    if (status[1] == 1)
        printf(": NOT RUN: it holds send/recv, which cannot be cut out of the module: check the module whole\n");
    else if (status[1] == 2)
        printf(": NOT RUN: needs %d ranks, this job has %d; on a machine that has them: mpirun -np %d hlo-check "
               "--local --region=%d ...\n", ranks, world, ranks, index + 1);
    else {
        /* On nodes like this one, as many ranks a node as their need allows. */
        int64_t per_node = need.peak > 0 ? coll_node_memory() / need.peak : 0;
        if (per_node < 1)
            printf(": NOT RUN: needs %d x %s, more than --max-memory=%s per rank (%s), and more than this whole "
                   "node has: on nodes with at least %s each, mpirun -np %d --map-by ppr:1:node hlo-check --local "
                   "--region=%d ...\n", ranks, bytes, lim, why_limit, bytes, ranks, index + 1);
        else
            printf(": NOT RUN: needs %d x %s, more than --max-memory=%s per rank (%s); on %lld nodes like this one: "
                   "mpirun -np %d --map-by ppr:%lld:node hlo-check --local --region=%d ...\n", ranks, bytes, lim,
                   why_limit, (long long)((ranks + per_node - 1) / per_node), ranks, (long long)per_node, index + 1);
    }
}

__attribute__((noreturn)) static void local_check(Tool *t, const IrModule *before, const IrModule *after,
                                                  const char *after_name)
{
    CheckRegion *regions = NULL;
    int n = 0;
    Error err = { 0 };
    if (!check_find_regions(before, after, &regions, &n, &err))
        fail_all(t, &err);
    if (t->o.region > n)
        usage_error(t, "--region: there are fewer regions than that");
    if (t->rank == 0)
        printf("hlo-check --local: %s vs %s: %d region%s where they differ\n", t->inputs[0], after_name, n,
               n == 1 ? "" : "s");
    if (t->o.regions_dir && t->rank == 0) {
        if (!ir_make_dirs(t->o.regions_dir, &err))
            fail_run(t, &err);      /* rank 0 alone: the others must not wait in the next collective */
        for (int i = 0; i < n; i++) {
            char name[64];
            snprintf(name, sizeof name, "region%d.before.hlo", i + 1);
            write_text(t, regions[i].before, t->o.regions_dir, name);
            snprintf(name, sizeof name, "region%d.after.hlo", i + 1);
            write_text(t, regions[i].after, t->o.regions_dir, name);
        }
    }
    CheckOptions co;
    check_options(t, &co);
    CheckSite *sites = NULL;
    int n_sites = check_find_sites(before, after, &sites);
    int equivalent = 0, differ = 0, precision = 0, not_run = 0;
    for (int i = 0; i < n; i++) {
        if (t->o.region && i + 1 != t->o.region)
            continue;
        int v;
        check_region(t, &co, &regions[i], i, n, sites, n_sites, &v);
        equivalent += v == 1;
        differ += v == 0;
        precision += v == 2;
        not_run += v == -1;
    }
    free(sites);
    check_regions_free(regions, n);
    int code = 0;
    if (differ || precision) {
        /* A region may differ only on inputs the module never gives it, and
         * a precision change is judged by accuracy on the module's own
         * values: decide on the whole pair when it fits. */
        InterpMemory need;
        check_pair_need(before, after, NULL, &need);
        bool fits = co.max_memory <= 0 || need.peak <= co.max_memory;
        char b[32];
        interp_format_bytes(need.peak, b, sizeof b);
        if (fits && !t->o.region) {
            if (t->rank == 0)
                printf("hlo-check --local: %d region%s differ%s on free inputs, %d change%s precision; checking the "
                       "whole pair, which fits, on its own values\n", differ, differ == 1 ? "" : "s",
                       differ == 1 ? "s" : "", precision, precision == 1 ? "s" : "");
            code = check_one(t, before, after, after_name, true) ? 0 : 1;
            if (t->rank == 0 && code == 0 && differ)
                printf("hlo-check --local: the differences do not occur on the module's own values\n");
        } else if (differ) {
            if (t->rank == 0)
                printf("hlo-check: DIFFERENT on free inputs in %d region%s (not confirmed on the module's own values: "
                       "the whole pair needs %s per rank)\n", differ, differ == 1 ? "" : "s", b);
            code = 1;
        } else {
            if (t->rank == 0)
                printf("hlo-check: NOT CHECKED: %d region%s change an accumulation type, which is judged by accuracy "
                       "on the whole pair: it needs %s per rank%s\n", precision, precision == 1 ? "" : "s", b,
                       t->o.region ? " (and --region checks one region only)" : "");
            code = 2;
        }
    } else if (not_run) {
        if (t->rank == 0)
            printf("hlo-check: NOT CHECKED: %d of %d region%s could not run here (%d equivalent)\n", not_run,
                   equivalent + not_run, equivalent + not_run == 1 ? "" : "s", equivalent);
        code = 2;
    } else if (t->rank == 0 && t->o.region) {
        printf("hlo-check: EQUIVALENT in region %d (--local --region: the other regions were not checked)\n",
               (int)t->o.region);
    } else if (t->rank == 0) {
        printf("hlo-check: EQUIVALENT (--local: %d region%s, each equivalent; what is outside them is computed alike "
               "in both modules)\n", equivalent, equivalent == 1 ? "" : "s");
    }
    coll_finish(t->c, code);
}

int main(int argc, char **argv)
{
    Tool t = { 0 };
    t.c = coll_init(&argc, &argv);
    t.rank = coll_rank(t.c);
    parse_args(&t, argc, argv);
    watchdog_start("hlo-check", t.rank, t.o.timeout);
    agree_at_startup(&t, argc, argv);
    startup_threads(t.c, t.o.threads);
    IrModule *before = load(&t, t.inputs[0]);
    if (t.o.inputs)
        load_given(&t, before);
    if (t.o.per_pass)
        per_pass(&t, before);
    IrModule *after = t.o.passes ? rewrite(&t, before) : load(&t, t.inputs[1]);
    char after_name[512];
    snprintf(after_name, sizeof after_name, "%s", t.inputs[1] ? t.inputs[1] : "");
    if (t.o.passes)
        snprintf(after_name, sizeof after_name, "%s after --passes=%s", t.inputs[0], t.o.passes);
    if (t.o.local)
        local_check(&t, before, after, after_name);
    CheckOptions co;
    check_options(&t, &co);
    if (t.o.shrink)
        co.save_dir = NULL;     /* the shrunk pair and its inputs go there instead */
    CheckReport rep;
    int code = check_with(&t, &co, before, after, t.inputs[0], after_name, true, &rep) ? 0 : 1;
    if (code == 0 && t.o.require_proof && rep.proof.status != CHECK_PROOF_PROVED) {
        code = 1;
        if (t.rank == 0)
            printf("hlo-check: --require-proof: the pair is not proved equivalent\n");
    }
    if (code == 1 && t.o.shrink && rep.diff.found)
        shrink(&t, before, after, &rep);
    if (code == 1 && t.o.shrink && t.rank == 0)
        printf("hlo-check: --shrink: the pair was judged by accuracy, with no bitwise difference to keep; "
               "--compare=exact shrinks the first element that differs\n");
    check_report_free(&rep);
    free_given(&t);
    ir_module_free(before);
    ir_module_free(after);
    coll_finish(t.c, code);
}
