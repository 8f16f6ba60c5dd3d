/* bench_check.c: what one hlo-check trial costs against the runs it
 * replaces: hlo-run of the module before the passes, hlo-run of the module
 * after them, and the f64 oracle run.  Run under mpirun:
 *
 *     mpirun -np N bench_check MODULE.hlo OUT_PREFIX
 *
 * In one process, on the module rewritten by the default pipeline as
 * hlo-check --passes=default does it:
 *   ours:  check_modules with one trial (its setup included: probes, the
 *          widened module, three interpreters; the oracle is on because the
 *          pipeline changes an accumulation type);
 *   limit: three runs as hlo-run does them, each interp_new + its seeded
 *          inputs + interp_run: before, after, and the widened module
 *          (check_widen_module) on widened inputs.
 * Parsing and the passes are outside both.  Each side is run twice,
 * alternately; the best is kept; a time is the slowest rank's.
 *
 * It also writes OUT_PREFIX.after.hlo and OUT_PREFIX.f64.hlo, so that
 * scripts/bench.sh can time the same comparison as whole commands. */
#include "check.h"
#include "coll.h"
#include "interp.h"
#include "pass.h"

#include "bench.h"

#include <mpi.h>
#include <string.h>

static void die(Coll *c, const Error *err)
{
    fprintf(stderr, "bench_check: rank %d: ", coll_rank(c));
    error_print(err, stderr);
    coll_abort(c, 3);
}

static IrModule *rewrite(Coll *c, const IrModule *before)
{
    Error err = { .code = ERR_OK };
    IrModule *after = ir_module_copy(before, &err);
    const Pass *list[64];
    int n = 0;
    PassOptions po;
    pass_options_default(&po);
    bool changed = false;
    if (!after || !pass_parse_list("default", list, &n, &err) ||
        !pass_run_pipeline(after, list, n, &po, NULL, &changed, &err) || !ir_verify_module(after, &err))
        die(c, &err);
    return after;
}

/* One run as hlo-run does it: interpreter, seeded inputs, run, release. */
static void run_once(Coll *c, const IrModule *m, const InterpDevice *dev, uint64_t seed)
{
    Error err = { .code = ERR_OK };
    int n = m->entry->n_params;
    Value **params = xcalloc((size_t)n + 1, sizeof *params), *result = NULL;
    InterpOptions io = { .device = *dev, .comm = coll_comm(c) };
    Interp *it = interp_new(m, &io, &err);
    if (!it || !check_random_inputs(m, dev->rank, seed, CHECK_DIST_UNIFORM, params, &err) ||
        !interp_run(it, params, n, &result, &err))
        die(c, &err);
    value_release(result);
    interp_free(it);
    free(params);
}

static double slowest(double t0)
{
    double t = MPI_Wtime() - t0, max = 0;
    MPI_Allreduce(&t, &max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return max;
}

static double time_runs(Coll *c, const IrModule *before, const IrModule *after, const IrModule *wide,
                        const InterpDevice *dev, double *each)
{
    double total = 0;
    const IrModule *mods[3] = { before, after, wide };
    for (int i = 0; i < 3; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        run_once(c, mods[i], dev, 1);
        each[i] = slowest(t0);
        total += each[i];
    }
    return total;
}

static double time_check(Coll *c, const IrModule *before, const IrModule *after, int trials, CheckReport *keep)
{
    Error err = { .code = ERR_OK };
    CheckOptions co;
    check_options_default(&co);
    co.trials = trials;
    CheckReport rep;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (!check_modules(c, before, after, &co, &rep, &err))
        die(c, &err);
    double t = slowest(t0);
    if (keep)
        *keep = rep;
    else
        check_report_free(&rep);
    return t;
}

int main(int argc, char **argv)
{
    Coll *c = coll_init(&argc, &argv);
    if (argc != 3) {
        if (coll_rank(c) == 0)
            fprintf(stderr, "usage: mpirun -np N bench_check MODULE.hlo OUT_PREFIX\n");
        coll_finish(c, 2);
    }
    Error err = { .code = ERR_OK };
    IrModule *before = ir_parse_file(argv[1], &err);
    if (!before || !ir_verify_module(before, &err))
        die(c, &err);
    IrModule *after = rewrite(c, before);
    IrModule *wide = check_widen_module(before, &err);
    InterpDevice dev;
    char note[256];
    if (!wide || !coll_setup_devices(c, before, 0, 0, &dev, note, sizeof note, &err))
        die(c, &err);
    if (coll_rank(c) == 0) {
        char path[4096];
        snprintf(path, sizeof path, "%s.after.hlo", argv[2]);
        bool ok = ir_write_module_file(after, path, &err);
        snprintf(path, sizeof path, "%s.f64.hlo", argv[2]);
        if (!ok || !ir_write_module_file(wide, path, &err))
            error_print(&err, stderr);
    }

    double best_runs = 1e30, best_check = 1e30, each[3], best_each[3] = { 0, 0, 0 };
    CheckReport rep;
    memset(&rep, 0, sizeof rep);
    for (int r = 0; r < 2; r++) {
        double t = time_runs(c, before, after, wide, &dev, each);
        if (t < best_runs) {
            best_runs = t;
            memcpy(best_each, each, sizeof each);
        }
        check_report_free(&rep);
        t = time_check(c, before, after, 1, &rep);
        best_check = t < best_check ? t : best_check;
    }
    /* What a trial after the first adds (setup excluded). */
    double t2 = time_check(c, before, after, 2, NULL);

    if (coll_rank(c) == 0) {
        char name[200], ours[128], lim[200];
        const char *base = strrchr(argv[1], '/') ? strrchr(argv[1], '/') + 1 : argv[1];
        snprintf(name, sizeof name, "hlo-check 1 trial vs 3 runs (before, after, f64 oracle), %s, %d ranks, in-process",
                 base, coll_world(c));
        snprintf(ours, sizeof ours, "%.3f s (oracle %s, %d sites)", best_check, rep.oracle ? "on" : "off", rep.n_sites);
        snprintf(lim, sizeof lim, "%.3f s (before %.3f + after %.3f + oracle %.3f)", best_runs, best_each[0],
                 best_each[1], best_each[2]);
        bench_line(name, ours, lim, best_check / best_runs, "<=", 1.2);
        snprintf(name, sizeof name, "hlo-check second trial vs 3 runs, %d ranks (info)", coll_world(c));
        snprintf(ours, sizeof ours, "%.3f s (2 trials %.3f s - 1 trial %.3f s)", t2 - best_check, t2, best_check);
        snprintf(lim, sizeof lim, "%.3f s", best_runs);
        bench_line(name, ours, lim, (t2 - best_check) / best_runs, NULL, 0);
    }
    check_report_free(&rep);
    ir_module_free(wide);
    ir_module_free(after);
    ir_module_free(before);
    coll_finish(c, 0);
}
