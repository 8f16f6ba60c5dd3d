/* hlo_opt.c: hlo-opt, the module rewriter (spec/tools.md).  Reads an HLO
 * module, verifies it, runs the requested passes and writes the result, to
 * standard output or atomically to -o FILE.
 * Exit status: 0 done, 2 bad usage or bad input, 3 internal error. */
#include "ir.h"
#include "check.h"
#include "cli.h"
#include "pass.h"
#include "pass_flags.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXIT_USAGE 2

typedef struct Options {
    const char *passes;    /* "default", "none" or names separated by commas */
    const char *pass_mode; /* "faithful" or "sound": becomes pass.mode */
    PassOptions pass;
    bool stats;
    bool fill_elided;
    uint64_t seed;
    bool list_passes;
    bool help;
    const char *out_path; /* NULL or "-": standard output */
    const char *output_format; /* NULL (by -o's suffix), "text" or "proto" */
    const char *in_path;  /* "-": standard input; NULL until given */
    const char *graph;    /* --graph: the picture's file, or NULL */
    int64_t graph_radius;
} Options;

#define OPT(field) offsetof(Options, field)

/* Every flag, once: the parser and --help both read this table. */
static const CliFlag flags[] = {
    {"--passes", CLI_STRING, OPT(passes), "=default|none|P1,P2,...", "default",
     "the passes to run, in order; see --list-passes"},
    PASS_CLI_FLAGS(Options),
    {"--stats", CLI_SWITCH, OPT(stats), "", "off",
     "print what each pass did and the module's size to standard error"},
    {"--fill-elided", CLI_SWITCH, OPT(fill_elided), "", "off (kept elided)",
     "give each elided constant ({...}) the values hlo-run --fill-elided and hlo-check --fill-elided give it "
     "with the same --seed, and print them, so that another implementation can run the module on the same "
     "constants"},
    {"--seed", CLI_UINT64, OPT(seed), "=S", "0", "the seed of --fill-elided"},
    {"--list-passes", CLI_SWITCH, OPT(list_passes), "", "", "list the registered passes and exit"},
    {"-o", CLI_STRING, OPT(out_path), " FILE", "standard output",
     "write the module to FILE (a temporary file, then rename; FILE may be the input)"},
    {"--output-format", CLI_CHOICE, OPT(output_format), "=text|proto", "proto when -o names a *.pb file, else text",
     "write HLO text, or a serialized HloModuleProto (XLA's field numbers; what the Neuron compiler takes as "
     "*.hlo_module.pb)"},
    {"--graph", CLI_STRING, OPT(graph), "=FILE", "off",
     "draw the module before and after the passes side by side, each instruction a pass made, changed or removed "
     "coloured by that pass, the rest faded (--stats as a picture; with --passes=none the module alone): "
     "Graphviz DOT when FILE ends in .dot, else the DOT beside FILE and Graphviz's dot drawing it in FILE's "
     "format (.svg, .png, .pdf)"},
    {"--graph-radius", CLI_INT, OPT(graph_radius), "=N", "2",
     "with --graph: draw the instructions within N operand or user steps of a change (-1: all)"},
    {"--help", CLI_SWITCH, OPT(help), "", "", "show this help and exit"},
};
#define N_FLAGS ((int)(sizeof flags / sizeof flags[0]))

static void set_defaults(Options *opt)
{
    *opt = (Options){
        .passes = "default",
        .pass_mode = "faithful",
        .graph_radius = 2,
    };
    pass_options_default(&opt->pass);
}

/* Prints "hlo-opt: MESSAGE" on standard error; returns false. */
static bool usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static bool usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("hlo-opt: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return false;
}

/* --passes: "default", "none", or registered names separated by commas. */
static bool check_pass_list(const char *list)
{
    if (strcmp(list, "default") == 0 || strcmp(list, "none") == 0)
        return true;
    for (const char *p = list;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == 0)
            return usage_error("--passes=%s: empty pass name; see --list-passes", list);
        if ((len == 4 && strncmp(p, "none", 4) == 0) || (len == 7 && strncmp(p, "default", 7) == 0))
            return usage_error("--passes=%s: '%.*s' cannot be combined with other passes", list,
                               (int)len, p);
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)(len < 127 ? len : 127), p);
        if (!pass_find(name))
            return usage_error("unknown pass '%.*s'; see --list-passes", (int)len, p);
        if (!comma)
            return true;
        p = comma + 1;
    }
}

static bool parse_args(int argc, char **argv, Options *opt)
{
    char msg[512];
    const char *inputs[2];
    int n_inputs = 0;
    set_defaults(opt);
    if (!cli_parse(flags, N_FLAGS, argc, argv, opt, inputs, 2, &n_inputs, msg, sizeof msg))
        return usage_error("%s", msg);
    if (opt->help || opt->list_passes)
        return true;
    if (n_inputs > 1)
        return usage_error("more than one input ('%s' and '%s'); see --help", inputs[0], inputs[1]);
    if (n_inputs == 0)
        return usage_error("no input module (give a file, or - for standard input); see --help");
    opt->in_path = inputs[0];
    if (cli_same_file(opt->in_path, opt->out_path))
        return usage_error("-o %s is the input module: refusing to write over it", opt->out_path);
    char dot[4096];
    if (opt->graph)
        ir_graph_dot_path(opt->graph, dot, sizeof dot);
    if (opt->graph && (!opt->graph[0] || cli_same_file(opt->in_path, opt->graph) ||
                       cli_same_file(opt->out_path, opt->graph) || cli_same_file(opt->in_path, dot) ||
                       cli_same_file(opt->out_path, dot)))
        return usage_error("--graph %s: the picture and its DOT (%s) need files of their own, not the input or -o",
                           opt->graph, dot);
    return check_pass_list(opt->passes);
}

static void print_help(FILE *out)
{
    cli_print_help(out,
                   "usage: hlo-opt [flags] in.hlo        (in.hlo '-' reads standard input)\n\n"
                   "Reads an HLO module, verifies it, runs the passes and prints the module.\n"
                   "Exit status: 0 done, 2 bad usage or bad input, 3 internal error.\n\n",
                   flags, N_FLAGS);
}

static void list_passes(FILE *out)
{
    const Pass *passes;
    int n = pass_registry(&passes);
    fputs("The registry, in default-pipeline order (--passes=default):\n", out);
    for (int i = 0; i < n; i++)
        fprintf(out, "  #%-3d %-42s alias %-24s%s\n", passes[i].number, passes[i].name, passes[i].alias,
                passes[i].precision_changing ? " (may change rounding)" : "");
}

/* Runs the pass list, then verifies the result: a pass that breaks the
 * module is a bug (exit 3), not the user's input. */
static bool run_passes(IrModule *m, const Options *opt, PipelineStats *stats, Error *err)
{
    const Pass *list[64];
    int n = 0;
    PassOptions po = opt->pass;
    bool changed = false;
    po.mode = pass_mode_from_name(opt->pass_mode);
    if (!pass_parse_list(opt->passes, list, &n, err))
        return false;
    /* --graph: the module as given, and which pass touched what. */
    IrModule *before = opt->graph ? ir_module_copy(m, err) : NULL;
    PassProvenance *prov = before ? pass_provenance_new(m) : NULL;
    if (opt->graph && !before)
        return false;
    po.on_change = prov ? pass_provenance_record : NULL;
    po.on_change_ctx = prov;
    bool ok = pass_run_pipeline(m, list, n, &po, stats, &changed, err);
    Error verr = {.code = ERR_OK};
    if (ok && n > 0 && !ir_verify_module(m, &verr))
        ok = error_set(err, ERR_INTERNAL, verr.loc, "the passes left an invalid module: %s", verr.msg);
    if (ok && before) {
        char note[1200];
        ok = pass_draw_rewrite(before, n > 0 ? m : NULL, prov, list, n, opt->graph, (int)opt->graph_radius, note,
                               sizeof note, err);
        if (ok && note[0])
            fprintf(stderr, "hlo-opt: note: --graph %s not drawn: %s\n", opt->graph, note);
    }
    pass_provenance_free(prov);
    if (before)
        ir_module_free(before);
    return ok;
}

static void print_stats(const IrModule *m, const PipelineStats *stats, FILE *out)
{
    long n_instrs = 0;
    for (int c = 0; c < m->n_computations; c++)
        n_instrs += m->computations[c]->n_instrs;
    pass_print_stats(out, stats);
    fprintf(out, "hlo-opt: module %s: %d computations, %ld instructions after the passes\n",
            m->name ? m->name : "(unnamed)", m->n_computations, n_instrs);
}

/* Prints err and returns its exit status; a failure without an error is a bug. */
static int report(const Error *err)
{
    if (err->code == ERR_OK) {
        fputs("hlo-opt: internal error: a step failed without saying why\n", stderr);
        return 3;
    }
    error_print(err, stderr);
    return error_exit_code(err);
}

static int run(const Options *opt)
{
    Error err = {.code = ERR_OK};
    IrModule *m = ir_parse_file(opt->in_path, &err);
    if (!m)
        return report(&err);
    ir_note_source(m, "hlo-opt", opt->in_path, stderr);
    int status = 0;
    char note[1024];
    IrFormat fmt = opt->output_format ? (strcmp(opt->output_format, "proto") == 0 ? IR_FORMAT_PROTO : IR_FORMAT_TEXT)
                                      : ir_format_of_path(opt->out_path);
    StrBuf dropped;
    strbuf_init(&dropped);
    PipelineStats *stats = xcalloc(1, sizeof *stats);
    if (!ir_verify_module(m, &err) ||
        (opt->fill_elided && check_fill_elided_constants(m, opt->seed, note, sizeof note, &err) < 0) ||
        !run_passes(m, opt, stats, &err) ||
        !ir_write_module_file_as(m, opt->out_path, fmt, &dropped, &err))
        status = report(&err);
    else if (fmt == IR_FORMAT_PROTO)
        fprintf(stderr, "hlo-opt: note: %s: written as an HloModuleProto%s%s\n",
                opt->out_path && strcmp(opt->out_path, "-") ? opt->out_path : "standard output",
                dropped.len ? "; " : "", dropped.len ? dropped.s : "");
    strbuf_free(&dropped);
    if (status == 0 && opt->stats)
        print_stats(m, stats, stderr);
    if (status == 0 && opt->fill_elided && note[0])
        fprintf(stderr, "hlo-opt: note: %s\n", note);
    free(stats);
    ir_module_free(m);
    if (status == 0 && (fflush(stdout) != 0 || ferror(stdout))) {
        fputs("hlo-opt: error: could not write standard output\n", stderr);
        status = 2;
    }
    return status;
}

int main(int argc, char **argv)
{
    Options opt;
    if (!parse_args(argc, argv, &opt))
        return EXIT_USAGE;
    if (opt.help) {
        print_help(stdout);
        return 0;
    }
    if (opt.list_passes) {
        list_passes(stdout);
        return 0;
    }
    return run(&opt);
}
