/* hlo_run.c: hlo-run, the interpreter's command line (spec/tools.md).
 * Under `mpirun -np N` every rank runs the entry computation as one device
 * (rank r is device r), on seeded random inputs or on .npy files, and the
 * per-rank results are printed in rank order or written as .npy files.
 *
 * Failures never hang the job: after each step the ranks settle whether
 * all succeeded (fail.h, the protocol every tool shares).
 * Exit status: 0 done, 2 bad usage or bad input, 3 internal error. */
#include "check.h"
#include "cli.h"
#include "coll.h"
#include "fail.h"
#include "interp.h"
#include "parallel.h"
#include "run_flags.h"
#include "startup.h"
#include "watchdog.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define EXIT_USAGE 2
#define PRINT_LIMIT 1000            /* elements: larger results print only with --print */
#define PATH_SIZE 4096              /* bytes for an .npy file name */

typedef struct Options {
    uint64_t seed;
    const char *dist;       /* a CheckDist name */
    const char *inputs;     /* NULL: random inputs */
    const char *save_inputs;    /* NULL: off */
    bool print;
    const char *outputs;    /* NULL: print */
    int64_t replicas;       /* 0: from the module */
    int64_t partitions;     /* 0: from the module */
    bool time;
    bool opaque_custom_calls;
    bool fill_elided;
    int64_t max_memory;     /* 0: the default */
    double timeout;         /* --timeout, 0: none */
    int64_t threads;        /* --threads, 0: the default */
    bool help;
    const char *snapshot;   /* --snapshot: one HloSnapshot per rank, comma-separated; NULL: off */
    const char *in_path;    /* "-": standard input; the one positional argument (with --snapshot, this rank's) */
} Options;

#define OPT(field) offsetof(Options, field)

/* Every flag, once: cli_parse and --help both read this table.  A value
 * may follow after '=' (--seed=7) or as the next argument (--seed 7). */
static const CliFlag flags[] = {
    {"--seed", CLI_UINT64, OPT(seed), "=S", "0",
     "seed of the random inputs (0 to 2^64-1): parameter p on rank r draws from the stream (S, r, p); "
     "also the seed of the rng ops"},
    {"--dist", CLI_CHOICE, OPT(dist), "=uniform|normal|wide|special|copies|pairs|edges|small|extreme", "uniform",
     "random inputs: uniform in [-1,1), standard normal, wide (many binades), special values (NaN, inf, -0, "
     "subnormals, ties) mixed in, or one of the kinds hlo-check's trials draw (hlo-check --help, --dist): copies, "
     "pairs, edges, small, extreme"},
    {"--inputs", CLI_STRING, OPT(inputs), "=DIR", "random inputs",
     "read parameter p on rank r from DIR/param<p>.rank<r>.npy"},
    {"--save-inputs", CLI_STRING, OPT(save_inputs), "=DIR", "off",
     "write the inputs the run uses (drawn or read) to DIR/param<p>.rank<r>.npy, the files --inputs reads, so "
     "that another run or another implementation can take the same inputs (DIR is created)"},
    {"--print", CLI_SWITCH, OPT(print), "", "on when the result has at most 1000 elements",
     "print every rank's result in HLO literal syntax, in rank order"},
    {"--outputs", CLI_STRING, OPT(outputs), "=DIR", "off",
     "write leaf i of the result on rank r to DIR/out<i>.rank<r>.npy (DIR is created)"},
    {"--snapshot", CLI_STRING, OPT(snapshot), "=FILE[,FILE...]", "off",
     "replay XLA's HloSnapshot (*.snapshot.pb, from --xla_dump_hlo_snapshots; no other module file): run its "
     "module on the recorded arguments and compare every output with the recorded result under the XLA "
     "reference's tolerance table (bitwise, or the ulps another implementation may differ by: fused "
     "multiply-adds, its own transcendentals, its own summation order); exit 1 when one lies outside.  A "
     "snapshot records one device's run: with N ranks give N snapshots, rank r replaying the r-th"},
    DEVICE_CLI_FLAGS(Options),
    {"--time", CLI_SWITCH, OPT(time), "", "off",
     "print the time per instruction kind and, per collective, bytes, time, algbw and busbw"},
    OPAQUE_CLI_FLAG(Options, "false (unsupported)"),
    RUN_CLI_FLAGS(Options),
    {"--help", CLI_SWITCH, OPT(help), "", "", "show this help and exit"},
};
#define N_FLAGS ((int)(sizeof flags / sizeof flags[0]))

static const char usage[] =
    "usage: mpirun -np N hlo-run [flags] module.hlo     (module.hlo '-' reads standard input)\n"
    "\n"
    "Runs the module's entry computation on every rank (rank r is device r) and\n"
    "prints or writes each rank's result.\n"
    "Exit status: 0 done, 2 bad usage or bad input, 3 internal error.\n\n";

/* Messages that every rank would print the same come from rank 0 only. */
static int this_rank;

/* Prints "hlo-run: MESSAGE" on standard error (rank 0 only); returns false. */
static bool usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static bool usage_error(const char *fmt, ...)
{
    if (this_rank != 0)
        return false;
    va_list ap;
    va_start(ap, fmt);
    fputs("hlo-run: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return false;
}

static bool parse_args(int argc, char **argv, Options *opt)
{
    char msg[512];
    int n_pos = 0;
    *opt = (Options){ .dist = "uniform" };
    if (!cli_parse(flags, N_FLAGS, argc, argv, opt, &opt->in_path, 1, &n_pos, msg, sizeof msg))
        return usage_error("%s", msg);
    if (opt->help)
        return true;
    if (opt->snapshot && n_pos > 0)
        return usage_error("--snapshot names the module: give no other module file ('%s')", opt->in_path);
    if (opt->snapshot && opt->inputs)
        return usage_error("--snapshot and --inputs exclude each other: the snapshot holds the inputs");
    if (opt->snapshot && !opt->snapshot[0])
        return usage_error("--snapshot needs a file; see --help");
    if (n_pos == 0 && !opt->snapshot)
        return usage_error("no module (give a file, or - for standard input); see --help");
    if (opt->print && opt->outputs)
        return usage_error("--print and --outputs exclude each other; see --help");
    if (opt->timeout < 0)
        return usage_error("--timeout must be positive");
    if (!startup_threads_ok(opt->threads, msg, sizeof msg))
        return usage_error("%s", msg);
    if (cli_same_file(opt->outputs, opt->inputs))
        return usage_error("--outputs %s is the --inputs directory: refusing to write over the inputs", opt->outputs);
    if (cli_same_file(opt->outputs, opt->in_path))
        return usage_error("--outputs %s is the module: refusing to write over it", opt->outputs);
    if (cli_same_file(opt->save_inputs, opt->inputs))
        return usage_error("--save-inputs %s is the --inputs directory: refusing to write over the inputs",
                           opt->save_inputs);
    if (cli_same_file(opt->save_inputs, opt->in_path))
        return usage_error("--save-inputs %s is the module: refusing to write over it", opt->save_inputs);
    if (cli_same_file(opt->save_inputs, opt->outputs))
        return usage_error("--save-inputs and --outputs name the same directory %s: the file names would "
                           "not collide, but keep them apart", opt->save_inputs);
    if ((opt->inputs && !opt->inputs[0]) || (opt->outputs && !opt->outputs[0]) ||
        (opt->save_inputs && !opt->save_inputs[0]))
        return usage_error("--inputs, --outputs and --save-inputs need a directory; see --help");
    if (opt->replicas < 0 || opt->replicas > 1 << 20 || opt->partitions < 0 || opt->partitions > 1 << 20)
        return usage_error("--replicas and --partitions take a positive count; see --help");
    return true;
}

/* ------------------------------------------------------------------ */
/* The module                                                           */

/* "-" is standard input, which reaches rank 0 only (mpirun forwards it
 * there): coll_read_stdin gives every rank its bytes. */
static IrModule *load_module(Coll *c, const char *path, Error *err)
{
    IrModule *m = NULL;
    if (strcmp(path, "-") == 0) {
        size_t len = 0;
        char *text = coll_read_stdin(c, &len, err);
        m = text ? ir_parse_bytes(text, len, "-", err) : NULL;
        free(text);
    } else {
        m = ir_parse_file(path, err);
    }
    if (m && !ir_verify_module(m, err)) {
        ir_module_free(m);
        return NULL;
    }
    return m;
}

/* ------------------------------------------------------------------ */
/* Inputs                                                               */

/* path (PATH_SIZE bytes) receives the file name; it must outlive err, which
 * may point at it. */
static bool read_input(const Options *opt, const IrInstr *param, int rank, char *path, Value **out,
                       Error *err)
{
    const IrShape *s = param->shape;
    bool rounded = false;
    (void)path;
    *out = npy_read_param(opt->inputs, (int)param->info->parameter_number, rank, s, &rounded, err);
    if (*out && rounded && s->type != IR_TYPE_TUPLE)
        fprintf(stderr, "hlo-run: note: %s/param%lld.rank%d.npy: f32 values rounded to %s (nearest even)\n",
                opt->inputs, (long long)param->info->parameter_number, rank, ir_type_name(s->type));
    else if (*out && rounded)
        fprintf(stderr, "hlo-run: note: %s/param%lld.*.rank%d.npy: f32 values rounded to the leaves' types "
                        "(nearest even)\n", opt->inputs, (long long)param->info->parameter_number, rank);
    return *out != NULL;
}

/* Fills params (one per entry parameter); on failure none are held.  path
 * as for read_input. */
static bool load_inputs(const Options *opt, const IrModule *m, int rank, Value **params, char *path,
                        Error *err)
{
    CheckDist dist = CHECK_DIST_UNIFORM;
    check_dist_from_name(opt->dist, &dist);
    if (opt->snapshot)
        return check_snapshot_params(m->snapshot, m, params, err);
    if (!opt->inputs)
        return check_random_inputs(m, rank, opt->seed, dist, params, err);
    const IrComputation *entry = m->entry;
    for (int p = 0; p < entry->n_params; p++)
        if (!read_input(opt, entry->params[p], rank, path, &params[p], err)) {
            for (int k = 0; k < p; k++)
                value_release(params[k]);
            return false;
        }
    return true;
}

/* --save-inputs: every parameter of this rank as the file --inputs reads. */
static bool save_inputs(const char *dir, Value *const *params, int n_params, int rank, Error *err)
{
    if (!ir_make_dirs(dir, err))
        return false;
    for (int p = 0; p < n_params; p++)
        if (!npy_write_param(dir, p, rank, params[p], err))
            return false;
    return true;
}

/* ------------------------------------------------------------------ */
/* Outputs                                                              */

static int64_t total_elements(Value *const *leaves, int n)
{
    int64_t total = 0;
    for (int i = 0; i < n; i++)
        if (ir_shape_is_array(leaves[i]->shape))
            total += value_elements(leaves[i]);
    return total;
}

static void format_leaves(StrBuf *b, Value *const *leaves, int n, int rank)
{
    for (int i = 0; i < n; i++) {
        const IrShape *s = leaves[i]->shape;
        strbuf_printf(b, "rank %d: out%d = ", rank, i);
        ir_shape_print(b, s, false);
        strbuf_putc(b, ' ');
        /* A value of dynamic size: its elements up to its runtime sizes. */
        Arena *a = leaves[i]->sizes ? arena_new(1024) : NULL;
        Error err = { 0 };
        Value *c = a ? value_box_copy(a, leaves[i], NULL, &err) : NULL;
        IrLiteral lit = { .shape = c ? c->shape : s, .data = c ? c->data : leaves[i]->data };
        ir_print_literal(b, &lit);
        strbuf_putc(b, '\n');
        value_release(c);
        arena_free(a);
    }
}

/* path as for read_input. */
static bool write_outputs(const char *dir, Value *const *leaves, int n, int rank, char *path,
                          Error *err)
{
    if (!ir_make_dirs(dir, err))
        return false;
    for (int i = 0; i < n; i++) {
        if (!ir_shape_is_array(leaves[i]->shape))
            continue;       /* tokens have no values */
        snprintf(path, PATH_SIZE, "%s/out%d.rank%d.npy", dir, i, rank);
        if (!npy_write(path, leaves[i], err))
            return false;
    }
    return true;
}

/* ------------------------------------------------------------------ */
/* The steps                                                            */

/* Prints or writes the result; every rank calls it. */
static int emit_result(Coll *c, const Options *opt, const Value *result)
{
    int rank = coll_rank(c), n = value_leaves((Value *)result, NULL, 0);
    Value **leaves = xcalloc((size_t)(n ? n : 1), sizeof *leaves);
    value_leaves((Value *)result, leaves, n);
    int status = 0;
    if (opt->outputs) {
        Error err = { .code = ERR_OK };
        char path[PATH_SIZE];
        bool ok = write_outputs(opt->outputs, leaves, n, rank, path, &err);
        status = fail_settle(c, ok, &err);
    } else if (opt->print || total_elements(leaves, n) <= PRINT_LIMIT) {
        StrBuf b;
        strbuf_init(&b);
        format_leaves(&b, leaves, n, rank);
        coll_print_in_rank_order(c, b.s, b.len, stdout);
        strbuf_free(&b);
    } else if (rank == 0) {
        fprintf(stderr, "hlo-run: note: the result has %" PRId64 " elements per rank, more than %d: "
                "not printed (write it with --outputs DIR, or print it anyway with --print)\n",
                total_elements(leaves, n), PRINT_LIMIT);
    }
    free(leaves);
    return status;
}

/* --snapshot: each rank's result against its snapshot's; exit 1 when an
 * output of any rank lies outside the tolerance table. */
static int compare_snapshot(Coll *c, const IrModule *m, const Value *result)
{
    Error err = { .code = ERR_OK };
    StrBuf report;
    strbuf_init(&report);
    char who[32] = "";
    if (coll_world(c) > 1)
        snprintf(who, sizeof who, "rank %d: ", coll_rank(c));
    int differ = check_snapshot_compare(m, result, who, &report, &err);
    int status = fail_settle(c, differ >= 0, &err);
    if (status == 0) {
        fflush(stdout);
        coll_print_in_rank_order(c, report.s, report.len, stdout);
        int64_t total = differ;
        coll_allreduce_i64(c, &total, 1, COLL_SUM);
        if (coll_rank(c) == 0 && total == 0)
            printf("hlo-run: snapshot replayed on %d rank%s: every output within the XLA reference's tolerance\n",
                   coll_world(c), coll_world(c) == 1 ? "" : "s");
        else if (coll_rank(c) == 0)
            printf("hlo-run: snapshot replayed on %d rank%s: %" PRId64 " output%s differ%s from the recorded "
                   "result\n", coll_world(c), coll_world(c) == 1 ? "" : "s", total, total == 1 ? "" : "s",
                   total == 1 ? "s" : "");
        status = total ? 1 : 0;
    }
    strbuf_free(&report);
    return status;
}

/* FNV-1a of the module's print: whether every rank's snapshot holds the same module. */
static int64_t module_hash(const IrModule *m)
{
    StrBuf b;
    strbuf_init(&b);
    ir_print_module(&b, m);
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < b.len; i++)
        h = (h ^ (unsigned char)b.s[i]) * 1099511628211ull;
    strbuf_free(&b);
    return (int64_t)(h >> 1);
}

/* Inputs, interpreter, run, result; the module is parsed and verified. */
static int run_module(Coll *c, const Options *opt, const IrModule *m, InterpDevice dev)
{
    Error err = { .code = ERR_OK };
    char path[PATH_SIZE];       /* an input file's name, which err may point at */
    int n_params = m->entry->n_params;
    Value **params = xcalloc((size_t)(n_params ? n_params : 1), sizeof *params);
    bool ok = load_inputs(opt, m, dev.rank, params, path, &err);
    int status = fail_settle(c, ok, &err);
    if (status == 0 && opt->save_inputs) {
        bool saved = save_inputs(opt->save_inputs, params, n_params, dev.rank, &err);
        status = fail_settle(c, saved, &err);
    }
    if (status != 0) {
        if (ok)
            for (int p = 0; p < n_params; p++)
                value_release(params[p]);
        free(params);
        return status;
    }
    InterpOptions io = { .device = dev, .comm = coll_comm(c), .time = opt->time, .rng_seed = opt->seed,
                         .opaque = opt->opaque_custom_calls ? check_opaque_custom_call : NULL };
    Interp *it = interp_new(m, &io, &err);
    Value *result = NULL;
    ok = it && interp_run(it, params, n_params, &result, &err);   /* takes the params */
    if (!it)
        for (int p = 0; p < n_params; p++)
            value_release(params[p]);
    free(params);
    status = fail_settle_run(c, ok, &err);
    if (status == 0)
        status = emit_result(c, opt, result);
    if (status == 0 && opt->snapshot)
        status = compare_snapshot(c, m, result);
    if (status == 0 && opt->time)
        coll_print_times(c, it, stdout);
    value_release(result);
    interp_free(it);
    return status;
}

/* The estimated need of one rank against --max-memory (every rank alike). */
static bool fits_memory(Coll *c, const Options *opt, const IrModule *m, Error *err)
{
    char why[160] = "as given";
    int64_t limit = opt->max_memory ? opt->max_memory : check_default_max_memory(c, why, sizeof why);
    InterpMemory need;
    interp_estimate_memory(m, &need);
    return check_memory_fits("running the module", &need, limit, why, err);
}

static int run(Coll *c, const Options *opt)
{
    Error err = { .code = ERR_OK };
    IrModule *m = load_module(c, opt->in_path, &err);
    int status = fail_settle(c, m != NULL, &err);
    if (status != 0)
        return status;
    if (coll_rank(c) == 0)
        ir_note_source(m, "hlo-run", opt->in_path, stderr);
    if (opt->snapshot) {
        int64_t h[2] = { m->snapshot ? module_hash(m) : -1, 0 };
        h[1] = -h[0];
        coll_allreduce_i64(c, h, 2, COLL_MIN);
        bool ok = m->snapshot != NULL && m->snapshot->result != NULL;
        if (!m->snapshot)
            error_set(&err, ERR_MISMATCH, (IrLoc){ opt->in_path, 0, 0 }, "--snapshot: %s is %s, not an HloSnapshot",
                      opt->in_path, m->source_kind ? m->source_kind : "HLO text");
        else if (!ok)
            error_set(&err, ERR_MISMATCH, (IrLoc){ opt->in_path, 0, 0 },
                      "the snapshot records no result to compare with");
        else if (h[0] != -h[1])
            ok = error_set(&err, ERR_MISMATCH, (IrLoc){ opt->in_path, 0, 0 },
                           "--snapshot: the ranks' snapshots hold different modules; each must record the same "
                           "program");
        status = fail_settle(c, ok, &err);
        if (status != 0) {
            ir_module_free(m);
            return status;
        }
    } else if (m->snapshot && coll_rank(c) == 0) {
        fprintf(stderr, "hlo-run: note: %s is an HloSnapshot, run here on %s inputs; hlo-run --snapshot %s "
                        "replays its recorded arguments and compares the result\n", opt->in_path,
                opt->inputs ? "the --inputs" : "random", opt->in_path);
    }
    char fill_note[1024];
    if (opt->fill_elided) {
        status = fail_settle(c, check_fill_elided_constants(m, opt->seed, fill_note, sizeof fill_note, &err) >= 0, &err);
        if (status != 0) {
            ir_module_free(m);
            return status;
        }
        if (fill_note[0] && coll_rank(c) == 0)
            fprintf(stderr, "hlo-run: note: %s\n", fill_note);
    }
    InterpDevice dev;
    char note[512];
    bool ok = coll_setup_devices(c, m, (int)opt->replicas, (int)opt->partitions, &dev, note, sizeof note, &err);
    status = fail_settle(c, ok, &err);
    if (status == 0 && note[0] && coll_rank(c) == 0)
        fprintf(stderr, "hlo-run: %s\n", note);
    if (status == 0)
        status = fail_settle(c, fits_memory(c, opt, m, &err), &err);
    if (status == 0)
        status = run_module(c, opt, m, dev);
    ir_module_free(m);
    if (status == 0 && (fflush(stdout) != 0 || ferror(stdout))) {
        fprintf(stderr, "hlo-run: rank %d: error: could not write standard output\n", coll_rank(c));
        status = 2;
    }
    return status;
}

/* --snapshot=F0,F1,...: rank r replays the r-th (one file for one rank). */
static bool pick_snapshot(Options *opt, int rank, int world)
{
    int n;
    opt->in_path = cli_list_item(opt->snapshot, rank, &n);
    if (n != world)
        return usage_error("--snapshot gives %d snapshot%s for %d rank%s: a snapshot records one device's run, so "
                           "give one per rank (--snapshot=F0,F1,...), or run %d rank%s", n, n == 1 ? "" : "s",
                           world, world == 1 ? "" : "s", n, n == 1 ? "" : "s");
    if (!opt->in_path)
        return usage_error("--snapshot=%s: an empty file name", opt->snapshot);
    return true;
}

int main(int argc, char **argv)
{
    Coll *c = startup_coll_init("hlo-run", &argc, &argv);
    this_rank = coll_rank(c);
    Options opt;
    if (!parse_args(argc, argv, &opt))
        coll_finish(c, EXIT_USAGE);
    if (opt.help) {
        if (this_rank == 0)
            cli_print_help(stdout, usage, flags, N_FLAGS);
        coll_finish(c, 0);
    }
    if (opt.snapshot && !pick_snapshot(&opt, this_rank, coll_world(c)))
        coll_finish(c, EXIT_USAGE);
    char who[COLL_HOST_NAME + 32];
    coll_rank_name(c, this_rank, who, sizeof who);
    watchdog_start("hlo-run", who, opt.timeout);
    static const char *const outputs[] = { "--outputs", "--save-inputs", "--print", "--time",
                                           RUN_FLAGS_NO_AGREEMENT, NULL };
    const char *module = opt.snapshot ? NULL : opt.in_path;
    char msg[1024];
    if (!startup_agree_job(c, &module, 1, opt.inputs, argc, argv, flags, N_FLAGS, outputs, msg, sizeof msg)) {
        if (this_rank == 0)
            fprintf(stderr, "hlo-run: %s\n", msg);
        coll_finish(c, EXIT_USAGE);
    }
    startup_threads(c, opt.threads, "hlo-run");
    coll_finish(c, run(c, &opt));
}
