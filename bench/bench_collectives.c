/* bench_collectives.c: each collective as the interpreter runs it (through
 * coll_comm, one rank per device) against the raw MPI call that moves the
 * same bytes on the same ranks, in the same run.  Run under mpirun:
 *
 *     mpirun -np N bench_collectives [--reuse] [--reps R] [MiB...]   default sizes: 64 (target) and 1 (info)
 *
 *   all-gather      f32, result S bytes     vs MPI_Allgather of S/N bytes per rank
 *   reduce-scatter  f32, operand S bytes    vs MPI_Reduce_scatter_block (MPI_SUM)
 *   all-reduce      f32, operand S bytes    vs MPI_Allreduce (MPI_SUM)
 *
 * A run starts at a barrier and ends when the slowest rank is done (each
 * rank's time, maximum over ranks).  Ours and raw alternate, after a warm-up
 * of each, and the best of the repetitions is kept (5 at 16 MiB and more,
 * 20 below; --reps R sets it, for links as noisy as TCP between hosts).  Ours includes what a
 * run of the interpreter always does: allocating the result, and the
 * deterministic fold in group order.
 *
 * --reuse: malloc keeps freed memory mapped (no mmap per big buffer, no
 * trimming), so buffers taken from malloc were touched by an earlier run;
 * the lines are then informative: they separate what first touching fresh
 * pages costs (ours allocates its result and its scratch buffers per call)
 * from the data movement itself.  Raw MPI's own temporaries move too. */
#include "check.h"
#include "coll.h"
#include "interp.h"

#include "bench.h"

#include <malloc.h>
#include <mpi.h>
#include <limits.h>
#include <string.h>

static bool reuse;

typedef enum Op { OP_ALL_GATHER, OP_REDUCE_SCATTER, OP_ALL_REDUCE } Op;
static const char *const op_name[] = { "all-gather", "reduce-scatter", "all-reduce" };
static const char *const raw_name[] = { "MPI_Allgather", "MPI_Reduce_scatter_block", "MPI_Allreduce" };

/* The module for op on n ranks; elems: elements of the big side. */
static void module_text(Op op, int n, long elems, char *buf, size_t size)
{
    static const char add[] = "add {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
                              "  ROOT s = f32[] add(x, y)\n}\n";
    switch (op) {
    case OP_ALL_GATHER:
        snprintf(buf, size,
                 "HloModule ag, replica_count=%d\nENTRY e {\n  p = f32[%ld] parameter(0)\n"
                 "  ROOT r = f32[%ld] all-gather(p), replica_groups={}, dimensions={0}\n}\n",
                 n, elems / n, elems);
        break;
    case OP_REDUCE_SCATTER:
        snprintf(buf, size,
                 "HloModule rs, replica_count=%d\n%sENTRY e {\n  p = f32[%ld] parameter(0)\n"
                 "  ROOT r = f32[%ld] reduce-scatter(p), replica_groups={}, dimensions={0}, to_apply=add\n}\n",
                 n, add, elems, elems / n);
        break;
    case OP_ALL_REDUCE:
        snprintf(buf, size,
                 "HloModule ar, replica_count=%d\n%sENTRY e {\n  p = f32[%ld] parameter(0)\n"
                 "  ROOT r = f32[%ld] all-reduce(p), replica_groups={}, to_apply=add\n}\n",
                 n, add, elems, elems);
        break;
    }
}

/* The slowest rank's time of the step that just ran, since t0. */
static double slowest(double t0)
{
    double t = MPI_Wtime() - t0, max = 0;
    MPI_Allreduce(&t, &max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return max;
}

typedef struct Ours {
    IrModule *m;
    Interp *it;
    Value *param;
} Ours;

static bool ours_new(Coll *c, Op op, long elems, Ours *o)
{
    char text[1024];
    Error err = { .code = ERR_OK };
    InterpDevice dev;
    char note[256];
    memset(o, 0, sizeof *o);
    module_text(op, coll_world(c), elems, text, sizeof text);
    o->m = ir_parse_module(text, strlen(text), "bench", &err);
    bool ok = o->m && ir_verify_module(o->m, &err) &&
              coll_setup_devices(c, o->m, 0, 0, &dev, note, sizeof note, &err);
    if (ok) {
        InterpOptions io = { .device = dev, .comm = coll_comm(c) };
        ok = (o->it = interp_new(o->m, &io, &err)) != NULL &&
             (o->param = check_random_input(o->m, 0, coll_rank(c), 7, CHECK_DIST_UNIFORM, &err)) != NULL;
    }
    if (!ok)
        error_print(&err, stderr);
    return ok;
}

static void ours_free(Ours *o)
{
    value_release(o->param);
    interp_free(o->it);
    ir_module_free(o->m);
}

static double ours_once(Ours *o)
{
    Error err = { .code = ERR_OK };
    Value *result = NULL;
    value_retain(o->param);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    bool ok = interp_run(o->it, &o->param, 1, &result, &err);
    value_release(result);
    if (!ok) {
        error_print(&err, stderr);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    return slowest(t0);
}

static double raw_once(Op op, int n, long elems, const float *send, float *recv)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    switch (op) {
    case OP_ALL_GATHER:
        MPI_Allgather(send, (int)(elems / n), MPI_FLOAT, recv, (int)(elems / n), MPI_FLOAT, MPI_COMM_WORLD);
        break;
    case OP_REDUCE_SCATTER:
        MPI_Reduce_scatter_block(send, recv, (int)(elems / n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        break;
    case OP_ALL_REDUCE:
        MPI_Allreduce(send, recv, (int)elems, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        break;
    }
    return slowest(t0);
}

static void bench_op(Coll *c, Op op, double mib, bool informative, int reps)
{
    int n = coll_world(c), rank = coll_rank(c);
    long elems = (long)(mib * 1024 * 1024 / 4) / n * n;
    double bytes = (double)elems * 4;
    Ours o;
    if (!ours_new(c, op, elems, &o)) {
        if (rank == 0)
            printf("%s f32 %.0f MiB, %d ranks: skipped (could not prepare the module)\n", op_name[op], mib, n);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    /* Raw buffers, paged in; the send side holds the same values as ours. */
    size_t send_elems = op == OP_ALL_GATHER ? (size_t)(elems / n) : (size_t)elems;
    size_t recv_elems = op == OP_REDUCE_SCATTER ? (size_t)(elems / n) : (size_t)elems;
    float *send = malloc(send_elems * sizeof *send), *recv = malloc(recv_elems * sizeof *recv);
    if (!send || !recv) {
        fprintf(stderr, "bench: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    memcpy(send, o.param->data, send_elems * sizeof *send);
    memset(recv, 0, recv_elems * sizeof *recv);

    double best_ours = ours_once(&o), best_raw = raw_once(op, n, elems, send, recv);   /* warm-ups */
    best_ours = best_raw = 1e30;
    for (int r = 0; r < reps; r++) {
        double t = ours_once(&o);
        best_ours = t < best_ours ? t : best_ours;
        t = raw_once(op, n, elems, send, recv);
        best_raw = t < best_raw ? t : best_raw;
    }
    if (rank == 0) {
        char name[160], ours[96], lim[128];
        snprintf(name, sizeof name, "%s f32 %.0f MiB, %d ranks%s", op_name[op], mib, n,
                 reuse ? " [malloc reusing memory, info]" : informative ? " (info)" : "");
        informative |= reuse;
        snprintf(ours, sizeof ours, "%.2f ms (algbw %.2f GB/s)", best_ours * 1e3, bytes / best_ours / 1e9);
        snprintf(lim, sizeof lim, "%.2f ms (%s, algbw %.2f GB/s)", best_raw * 1e3, raw_name[op],
                 bytes / best_raw / 1e9);
        bench_line(name, ours, lim, best_ours / best_raw, informative ? NULL : "<=", 1.25);
    }
    free(send);
    free(recv);
    ours_free(&o);
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--reuse") == 0) {
            reuse = true;
            mallopt(M_MMAP_MAX, 0);
            mallopt(M_TRIM_THRESHOLD, INT_MAX);
            mallopt(M_TOP_PAD, 64 << 20);
        }
    Coll *c = coll_init(&argc, &argv);
    double sizes[8] = { 64, 1 };
    int n_sizes = 2, n_given = 0, reps = 0;
    for (int i = 1; i < argc && n_given < 8; i++) {
        if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--reuse") != 0)
            sizes[n_given++] = atof(argv[i]);
    }
    if (n_given > 0)
        n_sizes = n_given;
    for (int s = 0; s < n_sizes; s++)
        for (int op = 0; op < 3; op++)
            bench_op(c, (Op)op, sizes[s], sizes[s] != 64, reps > 0 ? reps : sizes[s] >= 16 ? 5 : 20);
    coll_finish(c, 0);
}
