/* hlo_fuzz.c: hlo-fuzz (spec/tools.md and issue 13).  Generates modules
 * aimed at the passes' matchers, each site with the outcome the spec gives
 * it, runs the passes, checks every site and the rewritten function, and
 * keeps going until the budget ends.  The work is in src/fuzz/.
 * Exit status: 0 nothing unexpected, 1 findings (each saved), 2 bad usage,
 * 3 an error of hlo-fuzz itself. */
#include "check.h"
#include "cli.h"
#include "coll.h"
#include "fuzz.h"
#include "startup.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct Options {
    const char *passes, *pass_mode, *out_dir, *json, *recipe;
    double seconds, pass_timeout;
    int64_t count, trials, index;
    uint64_t seed;
    bool print, help, guided, count_blocks;
} Options;

#define OPT(field) offsetof(Options, field)

static const CliFlag flags[] = {
    {"--passes", CLI_STRING, OPT(passes), "=P1,P2,...|default", "default", "the passes to aim at (names or aliases)"},
    {"--pass-mode", CLI_CHOICE, OPT(pass_mode), "=faithful|sound|both", "both", "the modes to run each pass in"},
    {"--seconds", CLI_DOUBLE, OPT(seconds), "=S", "60", "stop starting modules after S seconds"},
    {"--count", CLI_INT, OPT(count), "=N", "", "run N modules instead (overrides --seconds)"},
    {"--seed", CLI_UINT64, OPT(seed), "=S", "1", "module k of seed S is the same on any machine"},
    {"--index", CLI_INT, OPT(index), "=K", "", "run only module K (as a finding's command.txt says)"},
    {"--print", CLI_SWITCH, OPT(print), "", "off", "with --index: print the module and its recipe, run nothing"},
    {"--guided", CLI_SWITCH, OPT(guided), "", "off",
     "keep the recipes that reach new code in the passes and mutate them (a build with GUIDED=1: make fuzz-guided)"},
    {"--count-blocks", CLI_SWITCH, OPT(count_blocks), "", "off",
     "count the blocks of the passes reached, without --guided's feedback (a build with GUIDED=1)"},
    {"--recipe", CLI_STRING, OPT(recipe), "=FILE", "", "with --index: the module's draws (a --guided finding's draws.txt)"},
    {"--out", CLI_STRING, OPT(out_dir), " DIR", "fuzz-findings", "save each finding in DIR/<pass>-<n>/"},
    {"--json", CLI_STRING, OPT(json), "=FILE", "", "write the summary and findings as JSON"},
    {"--trials", CLI_INT, OPT(trials), "=T", "4", "checker trials per module and mode"},
    {"--pass-timeout", CLI_DOUBLE, OPT(pass_timeout), "=S", "30", "a pass that takes longer has hung"},
    {"--help", CLI_SWITCH, OPT(help), "", "", "show this help and exit"},
};
#define N_FLAGS ((int)(sizeof flags / sizeof flags[0]))

static const char usage[] =
    "usage: mpirun -np N hlo-fuzz [--passes=P,...|default] [--pass-mode=faithful|sound|both]\n"
    "                             [--seconds S | --count N] [--seed S] [--out DIR] [--json F]\n\n"
    "Generates modules whose sites (instances of a pass's pattern, or near misses) each carry the\n"
    "outcome spec/passes.md gives them, runs the pass, and checks every site and, with the checker\n"
    "on every rank, the rewritten function.  Modules take turns among the passes.\n"
    "Exit status: 0 nothing unexpected, 1 findings (saved under --out), 2 bad usage, 3 internal error.\n\n";

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

__attribute__((noreturn)) static void usage_error(Coll *c, const char *msg)
{
    if (coll_rank(c) == 0)
        fprintf(stderr, "hlo-fuzz: %s\n", msg);
    coll_finish(c, 2);
}

static void parse(Coll *c, int argc, char **argv, Options *o, FuzzConfig *cfg)
{
    *o = (Options){ .passes = "default", .pass_mode = "both", .seconds = 60, .seed = 1, .out_dir = "fuzz-findings",
                    .trials = 4, .pass_timeout = 30, .index = -1, .count = -1 };
    char msg[512];
    int n_pos = 0;
    const char *pos[1];
    if (!cli_parse(flags, N_FLAGS, argc, argv, o, pos, 1, &n_pos, msg, sizeof msg))
        usage_error(c, msg);
    if (o->help) {
        if (coll_rank(c) == 0)
            cli_print_help(stdout, usage, flags, N_FLAGS);
        coll_finish(c, 0);
    }
    if (n_pos)
        usage_error(c, "hlo-fuzz takes no module files; see --help");
    if (o->trials < 1 || o->pass_timeout <= 0 || o->seconds < 0)
        usage_error(c, "--trials must be at least 1, --pass-timeout and --seconds positive");
    if (o->print && o->index < 0)
        usage_error(c, "--print needs --index");
    if (o->recipe && o->index < 0)
        usage_error(c, "--recipe needs --index");
    if ((o->guided || o->count_blocks) && (o->index >= 0 || o->recipe))
        usage_error(c, "--guided and --count-blocks draw their own recipes: not with --index or --recipe");
    if ((o->guided || o->count_blocks) && !fuzz_guide_available())
        usage_error(c, "--guided and --count-blocks need the passes built with coverage hooks: "
                       "make fuzz-guided (GUIDED=1, in build-guided/)");
    memset(cfg, 0, sizeof *cfg);
    const Pass *list[64];
    int n = 0;
    Error err = { 0 };
    if (!pass_parse_list(o->passes, list, &n, &err))
        usage_error(c, err.msg);
    if (n == 0)
        usage_error(c, "--passes names no pass");
    for (int i = 0; i < n; i++) {
        if (!fuzz_has_generator(list[i]->number)) {
            snprintf(msg, sizeof msg, "no site generator for %s (#%d) yet", list[i]->name, list[i]->number);
            usage_error(c, msg);
        }
        bool seen = false;
        for (int j = 0; j < cfg->n_passes; j++)
            seen |= cfg->passes[j] == list[i];
        if (!seen && cfg->n_passes < 16)
            cfg->passes[cfg->n_passes++] = list[i];
    }
    cfg->modes[PASS_MODE_FAITHFUL] = strcmp(o->pass_mode, "sound") != 0;
    cfg->modes[PASS_MODE_SOUND] = strcmp(o->pass_mode, "faithful") != 0;
    cfg->seed = o->seed;
    cfg->out_dir = o->out_dir;
    cfg->trials = (int)o->trials;
    cfg->pass_timeout = o->pass_timeout;
}

static void print_summary(FILE *out, const FuzzConfig *cfg, const FuzzTally *t, int world, double secs)
{
    fprintf(out, "%-42s %-8s %8s %8s %9s %9s\n", "pass", "mode", "modules", "sites", "rewrites", "findings");
    for (int i = 0; i < cfg->n_passes; i++)
        for (int m = 0; m < 2; m++) {
            if (!cfg->modes[m])
                continue;
            const FuzzPassTally *p = &t->pass[i][m];
            fprintf(out, "#%-3d %-37s %-8s %8ld %8ld %9ld %9ld\n", cfg->passes[i]->number, cfg->passes[i]->name,
                    m ? "sound" : "faithful", p->modules, p->sites, p->rewrites, p->findings);
        }
    if (t->pipeline_modules)
        fprintf(out, "%-42s %-8s %8ld %8s %9s %9ld\n", "the whole pipeline of --passes", "sound", t->pipeline_modules,
                "", "", t->pipeline_findings);
    if (t->structure_only)
        fprintf(out, "hlo-fuzz: %ld modules with an unbounded dim (?), which no interpreter can run: their sites "
                "checked, their function not\n", t->structure_only);
    fprintf(out, "hlo-fuzz: %ld modules on %d ranks in %.1f s (seed %llu): %ld findings%s%s\n", t->modules, world,
            secs, (unsigned long long)cfg->seed, t->findings, t->findings ? ", saved under " : "",
            t->findings ? cfg->out_dir : "");
}

/* Written beside path and renamed over it (ir_atomic_open): an interrupted
 * run leaves the old file. */
static void write_json(const char *path, const FuzzConfig *cfg, const FuzzTally *t, int world, double secs)
{
    IrAtomicFile a;
    Error err = { 0 };
    if (!ir_atomic_open(&a, path, &err)) {
        fprintf(stderr, "hlo-fuzz: %s\n", err.msg);
        return;
    }
    FILE *f = a.f;
    fprintf(f, "{\"seed\": %llu, \"ranks\": %d, \"seconds\": %.3f, \"modules\": %ld, \"findings\": %ld,\n",
            (unsigned long long)cfg->seed, world, secs, t->modules, t->findings);
    fprintf(f, " \"passes\": [");
    bool first = true;
    for (int i = 0; i < cfg->n_passes; i++)
        for (int m = 0; m < 2; m++) {
            if (!cfg->modes[m])
                continue;
            const FuzzPassTally *p = &t->pass[i][m];
            fprintf(f, "%s\n  {\"pass\": \"%s\", \"number\": %d, \"mode\": \"%s\", \"modules\": %ld, \"sites\": %ld, "
                    "\"rewrites\": %ld, \"findings\": %ld}", first ? "" : ",", cfg->passes[i]->name,
                    cfg->passes[i]->number, m ? "sound" : "faithful", p->modules, p->sites, p->rewrites, p->findings);
            first = false;
        }
    fprintf(f, "],\n \"pipeline\": {\"modules\": %ld, \"findings\": %ld},\n", t->pipeline_modules,
            t->pipeline_findings);
    fprintf(f, " \"structure_only\": %ld,\n", t->structure_only);
    fprintf(f, " \"finding_list\": [");
    for (int k = 0; k < t->n_notes; k++) {
        const FuzzNote *n = &t->notes[k];
        fprintf(f, "%s\n  {\"pass\": %d, \"mode\": \"%s\", \"module\": %ld, \"kind\": ", k ? "," : "", n->pass,
                n->mode ? "sound" : "faithful", n->index);
        check_json_string(f, n->kind);
        fprintf(f, ", \"message\": ");
        check_json_string(f, n->msg);
        fprintf(f, ", \"dir\": ");
        check_json_string(f, n->dir);
        fputc('}', f);
    }
    fprintf(f, "]}\n");
    if (!ir_atomic_close(&a, true, &err))
        fprintf(stderr, "hlo-fuzz: %s\n", err.msg);
}

int main(int argc, char **argv)
{
    Coll *c = startup_coll_init("hlo-fuzz", &argc, &argv);
    Options o;
    FuzzConfig cfg;
    parse(c, argc, argv, &o, &cfg);
    int rank = coll_rank(c), world = coll_world(c);
    static const char *const outputs[] = { "--out", "--json", NULL };
    StartupItem items[] = { { "flags", startup_hash_flags(argc, argv, flags, N_FLAGS, outputs), NULL } };
    char msg[1024];
    if (!startup_agree(c, items, 1, msg, sizeof msg))
        usage_error(c, msg);
    if (world > FUZZ_MAX_DEVICES)
        usage_error(c, "hlo-fuzz runs on at most 64 ranks");
    Error err = { 0 };
    FuzzRecipe recipe = { 0 };
    if (o.recipe) {
        bool ok = fuzz_recipe_load(&recipe, o.recipe, &err);
        if (!ok)
            error_print(&err, stderr);      /* every rank: the file may be missing on one host only */
        if (!coll_all_ok(c, ok))
            coll_finish(c, 2);
        cfg.recipe = &recipe;
    }
    if (o.print) {
        bool ok = rank != 0 || fuzz_print_module(&cfg, world, o.index, (int)(o.index % cfg.n_passes), stdout, &err);
        if (!ok)
            error_print(&err, stderr);
        coll_finish(c, ok ? 0 : 3);
    }
    FuzzGuide *guide = NULL;
    if ((o.guided || o.count_blocks) && !(guide = fuzz_guide_new(cfg.seed, cfg.n_passes, o.guided, &err))) {
        if (rank == 0)
            error_print(&err, stderr);
        coll_finish(c, 3);
    }
    FuzzTally *t = xcalloc(1, sizeof *t);
    double t0 = now();
    bool tty = rank == 0 && isatty(2);
    for (long k = o.index >= 0 ? o.index : 0;; k++) {
        int64_t go = 1;
        if (o.index >= 0)
            go = k == o.index;
        else if (o.count >= 0)
            go = k < o.count;
        else
            go = now() - t0 < o.seconds;
        coll_bcast(c, &go, sizeof go, 0);   /* rank 0's clock decides for all */
        if (!go)
            break;
        int which = (int)(k % cfg.n_passes);
        if (guide)
            cfg.recipe = fuzz_guide_next(guide, which);
        if (!fuzz_run_one(c, &cfg, k, which, t, &err)) {
            if (rank == 0)
                error_print(&err, stderr);
            coll_finish(c, 3);
        }
        if (guide)
            fuzz_guide_learn(guide, c, which);
        if (tty)
            fprintf(stderr, "\rhlo-fuzz: %ld modules, %ld findings, %.0f s ", t->modules, t->findings, now() - t0);
    }
    if (tty)
        fprintf(stderr, "\n");
    double secs = now() - t0;
    if (rank == 0) {
        print_summary(stdout, &cfg, t, world, secs);
        if (guide) {
            long blocks, kept, mutated;
            fuzz_guide_stats(guide, &blocks, &kept, &mutated);
            printf("hlo-fuzz %s: %ld blocks of the passes reached; %ld modules reached new ones; "
                   "%ld of the %ld modules were kept recipes mutated\n", o.guided ? "--guided" : "--count-blocks",
                   blocks, kept, mutated, t->modules);
        }
        if (o.json)
            write_json(o.json, &cfg, t, world, secs);
    }
    int code = t->findings ? 1 : 0;
    free(t);
    fuzz_guide_free(guide);
    fuzz_recipe_free(&recipe);
    coll_finish(c, code);
}
