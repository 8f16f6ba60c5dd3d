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
#include "fail.h"
#include "pass.h"
#include "pass_flags.h"
#include "run_flags.h"
#include "startup.h"
#include "watchdog.h"

#include <stdlib.h>
#include <string.h>
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
    const char *graph;          /* --graph: the picture's file, or NULL */
    int64_t graph_radius;
    int64_t replicas, partitions;
    bool per_pass, shrink, opaque_custom_calls, fill_elided, local, help, prove, require_proof;
    int64_t max_memory;         /* 0: the default */
    int64_t node_memory;        /* --local's launch lines: 0, this node's */
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
    {"--node-memory", CLI_BYTES, OPT(node_memory), "=SIZE", "this node's physical memory",
     "with --local: the memory of the nodes the mpirun and srun lines for regions that do not fit are sized for "
     "(a cluster's compute nodes, when they differ from this one)"},
    {"--regions-dir", CLI_STRING, OPT(regions_dir), "=DIR", "",
     "with --local: also write each region's two sides as DIR/region<N>.before.hlo and .after.hlo, modules that "
     "hlo-check and hlo-run take on their own"},
    RUN_CLI_FLAGS(Options),
    {"--graph", CLI_STRING, OPT(graph), "=FILE", "off",
     "after the check, draw the pair: what both compute alike once and faded, each region where they differ boxed "
     "with its two versions side by side (and, with --local, its verdict), the first instruction whose values "
     "differ marked with its two values (with --prove, the two expressions above); Graphviz DOT when FILE ends in "
     ".dot, else the DOT beside FILE and Graphviz's dot drawing it (.svg, .png, .pdf); --shrink draws the shrunk "
     "pair as DIR/pair.svg with or without it"},
    {"--graph-radius", CLI_INT, OPT(graph_radius), "=N", "2",
     "with --graph: draw the instructions within N operand or user steps of a region (-1: all)"},
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
                    .opaque_custom_calls = true, .graph_radius = 2 };
    pass_options_default(&o->pass);
}

/* Errors follow fail.h: every rank the same way. */
__attribute__((noreturn)) static void usage_error(Tool *t, const char *msg)
{
    fail_usage(t->c, "hlo-check", msg);
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
    if (t->o.graph && !t->o.graph[0])
        usage_error(t, "--graph needs a file name (.svg, .png, .pdf or .dot)");
    if (t->o.graph_radius < -1)
        usage_error(t, "--graph-radius takes -1 (all) or a number of steps from 0");
    char dot[4096] = "";
    if (t->o.graph)
        ir_graph_dot_path(t->o.graph, dot, sizeof dot);
    const char *outs[] = { t->o.out_path, t->o.json, t->o.junit, t->o.graph, dot[0] ? dot : NULL };
    static const char *const out_flags[] = { "-o", "--json", "--junit", "--graph", "--graph's DOT" };
    if (!startup_outputs_ok(t->c, t->inputs, t->n_inputs, outs, out_flags, 5, msg, sizeof msg))
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
    char msg[1024];
    if (!startup_agree_job(t->c, t->inputs, t->n_inputs, t->o.inputs, argc, argv, flags, N_FLAGS, outputs, msg,
                           sizeof msg))
        usage_error(t, msg);
}

static IrModule *load(Tool *t, const char *path)
{
    Error err = { 0 };
    IrModule *m = ir_parse_file(path, &err);
    if (!m || !ir_verify_module(m, &err))
        fail_all(t->c, &err);
    if (t->rank == 0)
        ir_note_source(m, "hlo-check", path, stderr);
    char note[1024];
    if (t->o.fill_elided && check_fill_elided_constants(m, t->o.seed, note, sizeof note, &err) < 0)
        fail_all(t->c, &err);
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
        fail_all(t->c, &err);
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
        fail_all(t->c, &err);
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
    fail_unless_run(t->c, check_modules(t->c, before, after, co, &rep, &err), &err);
    if (report || !rep.equivalent)
        write_reports(t, &rep, before_name, after_name);
    bool equivalent = rep.equivalent;
    if (keep)
        *keep = rep;
    else
        check_report_free(&rep);
    return equivalent;
}

/* ---- --graph: the pair drawn */

/* Rank 0: where the picture is (or why it is not) and the first difference
 * in words. */
static void say_drawn(const Tool *t, const IrModule *before, const IrModule *after, const char *path,
                      const CheckLocated *loc, const char *note)
{
    (void)t;
    if (note[0])
        fprintf(stderr, "hlo-check: note: --graph %s not drawn: %s\n", path, note);
    else
        printf("hlo-check: the pair is drawn in %s\n", path);
    if (loc->found) {
        char where[512];
        check_located_text(before, after, loc, where, sizeof where);
        printf("hlo-check: the first instruction whose values differ: %s\n", where);
    }
}

/* Draws before and after into path after their check (rep, or NULL) or
 * --local (l, or NULL), locating the first difference again with co
 * (rerun: the job's ranks run the pair). */
static void draw_pair(Tool *t, const IrModule *before, const IrModule *after, const char *before_name,
                      const char *after_name, const char *path, const CheckOptions *co, const CheckReport *rep,
                      const CheckLocal *l)
{
    CheckPicture pic = { .path = path, .radius = (int)t->o.graph_radius, .before_name = before_name,
                         .after_name = after_name, .rep = rep, .local = l };
    char note[1024];
    Error err = { 0 };
    CheckLocated loc;
    fail_unless_run(t->c, check_draw_pair(t->c, before, after, co, &pic, &loc, note, sizeof note, &err), &err);
    if (t->rank == 0)
        say_drawn(t, before, after, path, &loc, note);
}

/* ---- --inputs: given values instead of drawn ones, one trial on them */

static void load_given(Tool *t, const IrModule *m)
{
    Error err = { 0 };
    bool ok = check_given_inputs(t->o.inputs, t->rank, coll_world(t->c), m, &t->given, &t->n_given, &err);
    fail_unless(t->c, ok, &err);
    t->o.trials = 1;    /* the inputs are fixed: one trial says it all */
}

/* ---- --shrink */

/* rep: the failing check.  Shrinks the pair on the failing trial's inputs
 * (check_shrink_pair, which checks the result once more), and writes the
 * pair, its inputs and the command to DIR. */
__attribute__((noreturn)) static void shrink(Tool *t, const IrModule *before, const IrModule *after,
                                             const CheckReport *rep)
{
    const char *dir = t->o.save_dir ? t->o.save_dir : "shrunk";
    CheckOptions co;
    check_options(t, &co);
    co.prove = false;
    CheckShrunk sh;
    Error err = { 0 };
    fail_unless_run(t->c, check_shrink_pair(t->c, before, after, &co, rep, &sh, &err), &err);
    const char *compare = co.tol.mode == CHECK_AUTO ? "exact" : t->o.compare;
    if (t->rank == 0) {
        check_print_shrinking(stdout, rep, &sh);
        char bn[4096], an[4096];
        snprintf(bn, sizeof bn, "%s/before.hlo", dir);
        snprintf(an, sizeof an, "%s/after.hlo", dir);
        write_reports(t, &sh.recheck, bn, an);
    }
    fail_unless_run(t->c, check_shrunk_write(t->c, &sh, dir, compare, &err), &err);
    if (t->rank == 0)
        check_print_shrunk(stdout, &sh, coll_world(t->c), dir);
    /* The shrunk pair drawn beside it, its first difference located on its
     * own inputs. */
    char picture[4096], bn[4096], an[4096];
    snprintf(picture, sizeof picture, "%s/pair.svg", dir);
    snprintf(bn, sizeof bn, "%s/before.hlo", dir);
    snprintf(an, sizeof an, "%s/after.hlo", dir);
    CheckPicture pic = { .path = picture, .radius = (int)t->o.graph_radius, .before_name = bn, .after_name = an,
                         .rep = sh.rechecked ? &sh.recheck : NULL };
    CheckLocated loc;
    char note[1024];
    fail_unless_run(t->c, check_draw_shrunk(t->c, &sh, &co, &pic, &loc, note, sizeof note, &err), &err);
    if (t->rank == 0)
        say_drawn(t, sh.s.before, sh.s.after, picture, &loc, note);
    int code = sh.still ? 1 : 3;
    check_shrunk_free(&sh);
    coll_finish(t->c, code);
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
    fail_unless_run(t->c, check_per_pass(t->c, before, list, n, &po, &co, &pp, &err), &err);
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
        check_print_pass_step(stdout, s);
    }
    if (t->rank == 0)
        check_print_per_pass_verdict(stdout, &pp, t->o.passes);
    if (t->o.graph && pp.broken >= 0) {
        char name[512];
        snprintf(name, sizeof name, "%s after the passes up to #%d %s", t->inputs[0], pp.steps[pp.broken].pass->number,
                 pp.steps[pp.broken].pass->name);
        draw_pair(t, before, pp.after, t->inputs[0], name, t->o.graph, &co, &pp.steps[pp.broken].report, NULL);
    } else if (t->o.graph && t->rank == 0) {
        printf("hlo-check: --graph: no pass breaks equivalence, so there is no broken pair to draw\n");
    }
    int k = pp.broken, code = k >= 0;
    check_per_pass_free(&pp);
    if (code && t->o.shrink)
        shrink_one_pass(t, before, list, k);
    coll_finish(t->c, code);
}

/* ---- --local */

__attribute__((noreturn)) static void local_check(Tool *t, const IrModule *before, const IrModule *after,
                                                  const char *after_name)
{
    CheckOptions co;
    check_options(t, &co);
    CheckLocalOptions lo = { .region = (int)t->o.region, .max_memory_given = t->max_memory_given,
                             .node_memory = t->o.node_memory, .regions_dir = t->o.regions_dir,
                             .before_name = t->inputs[0],
                             .after_name = after_name, .out = stdout };
    CheckLocal l;
    Error err = { 0 };
    fail_unless_run(t->c, check_local(t->c, before, after, &co, &lo, &l, &err), &err);
    if (l.whole_checked)
        write_reports(t, &l.whole, t->inputs[0], after_name);
    if (t->rank == 0)
        check_print_local_verdict(stdout, &l);
    if (t->o.graph)
        draw_pair(t, before, after, t->inputs[0], after_name, t->o.graph, &co, l.whole_checked ? &l.whole : NULL,
                  &l);
    int code = l.code;
    check_local_free(&l);
    coll_finish(t->c, code);
}

int main(int argc, char **argv)
{
    Tool t = { 0 };
    t.c = startup_coll_init("hlo-check", &argc, &argv);
    t.rank = coll_rank(t.c);
    parse_args(&t, argc, argv);
    char who[COLL_HOST_NAME + 32];
    coll_rank_name(t.c, t.rank, who, sizeof who);
    watchdog_start("hlo-check", who, t.o.timeout);
    agree_at_startup(&t, argc, argv);
    startup_threads(t.c, t.o.threads, "hlo-check");
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
    if (t.o.graph)
        draw_pair(&t, before, after, t.inputs[0], after_name, t.o.graph, &co, &rep, NULL);
    if (code == 1 && t.o.shrink && rep.diff.found)
        shrink(&t, before, after, &rep);
    if (code == 1 && t.o.shrink && t.rank == 0)
        printf("hlo-check: --shrink: the pair was judged by accuracy, with no bitwise difference to keep; "
               "--compare=exact shrinks the first element that differs\n");
    check_report_free(&rep);
    check_given_free(t.given, t.n_given);
    ir_module_free(before);
    ir_module_free(after);
    coll_finish(t.c, code);
}
