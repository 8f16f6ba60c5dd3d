/* hlo_opt.c: hlo-opt, the module rewriter (spec/tools.md).  Reads an HLO
 * module, verifies it, runs the requested passes and writes the result, to
 * standard output or atomically to -o FILE.
 * Exit status: 0 done, 2 bad usage or bad input, 3 internal error. */
#include "ir.h"
#include "pass.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXIT_USAGE 2

typedef struct Options {
    const char *passes;    /* "default", "none" or names separated by commas */
    const char *pass_mode; /* "faithful" or "sound" */
    bool iterate;
    int64_t combine_threshold_bytes; /* <= 0 turns the combiners off */
    int64_t combine_threshold_count; /* <= 0 turns the combiners off */
    bool combine_by_dim;
    bool neuron_fsdp;
    bool stats;
    bool list_passes;
    bool help;
    const char *out_path; /* NULL or "-": standard output */
    const char *in_path;  /* "-": standard input; NULL until given */
} Options;

typedef enum FlagKind {
    FLAG_SWITCH, /* --name */
    FLAG_BOOL,   /* --name=true|false */
    FLAG_INT,    /* --name=N, a signed 64-bit integer */
    FLAG_STRING, /* --name=TEXT */
    FLAG_CHOICE, /* --name=WORD, WORD one of the '|'-separated words in metavar */
    FLAG_FILE    /* -o FILE: the value is the next argument */
} FlagKind;

typedef struct Flag {
    const char *name;
    FlagKind kind;
    size_t offset;       /* of the field in Options */
    const char *metavar; /* as shown by --help, after the name */
    const char *deflt;   /* as shown by --help; "" when there is none */
    const char *help;
} Flag;

#define OPT(field) offsetof(Options, field)

/* Every flag, once: the parser and --help both read this table. */
static const Flag flags[] = {
    {"--passes", FLAG_STRING, OPT(passes), "=default|none|P1,P2,...", "default",
     "the passes to run, in order; see --list-passes"},
    {"--pass-mode", FLAG_CHOICE, OPT(pass_mode), "=faithful|sound", "faithful",
     "faithful: the Neuron compiler's matchers as they are; sound: add the soundness guards"},
    {"--iterate", FLAG_SWITCH, OPT(iterate), "", "off",
     "repeat the whole pipeline until nothing changes, at most 16 rounds"},
    {"--collective-combine-threshold-in-bytes", FLAG_INT, OPT(combine_threshold_bytes), "=N",
     "1073741824", "combiners: largest combined result in bytes (<= 0: combine nothing)"},
    {"--collective-combine-threshold-count", FLAG_INT, OPT(combine_threshold_count), "=N", "256",
     "combiners: most instructions combined into one (<= 0: combine nothing)"},
    {"--collective-combine-by-dim", FLAG_BOOL, OPT(combine_by_dim), "=true|false", "true",
     "combiners: combine only collectives that gather or scatter the same dimension"},
    {"--neuron-fsdp", FLAG_BOOL, OPT(neuron_fsdp), "=true|false", "false",
     "all-gather and reduce-scatter combiners skip while-loop bodies"},
    {"--stats", FLAG_SWITCH, OPT(stats), "", "off",
     "print what each pass did and the module's size to standard error"},
    {"--list-passes", FLAG_SWITCH, OPT(list_passes), "", "", "list the registered passes and exit"},
    {"-o", FLAG_FILE, OPT(out_path), " FILE", "standard output",
     "write the module to FILE (a temporary file, then rename; FILE may be the input)"},
    {"--help", FLAG_SWITCH, OPT(help), "", "", "show this help and exit"},
};

static void set_defaults(Options *opt)
{
    *opt = (Options){
        .passes = "default",
        .pass_mode = "faithful",
        .combine_threshold_bytes = 1073741824,
        .combine_threshold_count = 256,
        .combine_by_dim = true,
    };
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

/* Is word one of the '|'-separated words in list? */
static bool word_in_list(const char *word, const char *list)
{
    size_t n = strlen(word);
    for (const char *p = list; *p;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && strncmp(p, word, n) == 0)
            return true;
        p += bar ? len + 1 : len;
    }
    return false;
}

static bool parse_int64(const Flag *f, const char *value, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(value, &end, 10);
    if (value[0] == '\0' || *end != '\0' || errno == ERANGE)
        return usage_error("%s=%s: not a 64-bit integer; see --help", f->name, value);
    *out = (int64_t)v;
    return true;
}

/* Stores one flag's value (NULL when the argument had no '=') into opt. */
static bool set_flag(const Flag *f, const char *value, Options *opt)
{
    void *field = (char *)opt + f->offset;
    if (f->kind == FLAG_SWITCH) {
        if (value)
            return usage_error("%s takes no value; see --help", f->name);
        *(bool *)field = true;
        return true;
    }
    if (!value)
        return usage_error("%s needs a value: %s%s; see --help", f->name, f->name, f->metavar);
    switch (f->kind) {
    case FLAG_BOOL:
        if (!word_in_list(value, "true|false"))
            return usage_error("%s=%s: expected true or false; see --help", f->name, value);
        *(bool *)field = strcmp(value, "true") == 0;
        return true;
    case FLAG_INT:
        return parse_int64(f, value, (int64_t *)field);
    case FLAG_CHOICE:
        if (!word_in_list(value, f->metavar + 1))
            return usage_error("%s=%s: expected one of %s; see --help", f->name, value,
                               f->metavar + 1);
        *(const char **)field = value;
        return true;
    case FLAG_STRING:
    case FLAG_FILE:
        *(const char **)field = value;
        return true;
    case FLAG_SWITCH:
        break;
    }
    return usage_error("internal error: flag kind %d", (int)f->kind);
}

static const Flag *find_flag(const char *arg, size_t name_len)
{
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        if (strlen(flags[i].name) == name_len && strncmp(flags[i].name, arg, name_len) == 0)
            return &flags[i];
    return NULL;
}

/* Parses argv[*i], a flag; a FLAG_FILE flag also consumes the next argument. */
static bool parse_flag(int argc, char **argv, int *i, Options *opt)
{
    const char *arg = argv[*i];
    const char *eq = strchr(arg, '=');
    size_t name_len = eq ? (size_t)(eq - arg) : strlen(arg);
    const Flag *f = find_flag(arg, name_len);
    if (!f)
        return usage_error("unknown flag '%s'; see --help", arg);
    if (f->kind != FLAG_FILE)
        return set_flag(f, eq ? eq + 1 : NULL, opt);
    if (eq || *i + 1 >= argc || argv[*i + 1][0] == '\0')
        return usage_error("%s needs a file name: %s FILE; see --help", f->name, f->name);
    *i += 1;
    return set_flag(f, argv[*i], opt);
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
    bool only_inputs = false; /* after "--" */
    set_defaults(opt);
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        bool is_flag = !only_inputs && arg[0] == '-' && arg[1] != '\0';
        if (is_flag && strcmp(arg, "--") == 0) {
            only_inputs = true;
        } else if (is_flag) {
            if (!parse_flag(argc, argv, &i, opt))
                return false;
        } else if (opt->in_path) {
            return usage_error("more than one input ('%s' and '%s'); see --help", opt->in_path,
                               arg);
        } else {
            opt->in_path = arg;
        }
    }
    if (opt->help || opt->list_passes)
        return true;
    if (!opt->in_path)
        return usage_error("no input module (give a file, or - for standard input); see --help");
    return check_pass_list(opt->passes);
}

static void print_help(FILE *out)
{
    fputs("usage: hlo-opt [flags] in.hlo        (in.hlo '-' reads standard input)\n"
          "\n"
          "Reads an HLO module, verifies it, runs the passes and prints the module.\n"
          "\n",
          out);
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
        const Flag *f = &flags[i];
        fprintf(out, "  %s%s\n      %s", f->name, f->metavar, f->help);
        if (f->deflt[0])
            fprintf(out, " (default: %s)", f->deflt);
        fputc('\n', out);
    }
    fputs("\nExit status: 0 done, 2 bad usage or bad input, 3 internal error.\n", out);
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

static void to_pass_options(const Options *opt, PassOptions *po)
{
    pass_options_default(po);
    po->mode = strcmp(opt->pass_mode, "sound") == 0 ? PASS_MODE_SOUND : PASS_MODE_FAITHFUL;
    po->combine_threshold_bytes = opt->combine_threshold_bytes;
    po->combine_threshold_count = opt->combine_threshold_count;
    po->combine_by_dim = opt->combine_by_dim;
    po->neuron_fsdp = opt->neuron_fsdp;
    po->iterate = opt->iterate;
}

/* Runs the pass list, then verifies the result: a pass that breaks the
 * module is a bug (exit 3), not the user's input. */
static bool run_passes(IrModule *m, const Options *opt, PipelineStats *stats, Error *err)
{
    const Pass *list[64];
    int n = 0;
    PassOptions po;
    bool changed = false;
    to_pass_options(opt, &po);
    if (!pass_parse_list(opt->passes, list, &n, err) ||
        !pass_run_pipeline(m, list, n, &po, stats, &changed, err))
        return false;
    Error verr = {.code = ERR_OK};
    if (n > 0 && !ir_verify_module(m, &verr))
        return error_set(err, ERR_INTERNAL, verr.loc, "the passes left an invalid module: %s", verr.msg);
    return true;
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
    int status = 0;
    PipelineStats *stats = xcalloc(1, sizeof *stats);
    if (!ir_verify_module(m, &err) || !run_passes(m, opt, stats, &err) ||
        !ir_write_module_file(m, opt->out_path, &err))
        status = report(&err);
    else if (opt->stats)
        print_stats(m, stats, stderr);
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
