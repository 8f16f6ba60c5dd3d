/* bench_pipeline.c: the default pass pipeline on generated modules of
 * growing size (bench/gen_module.py pipeline N), timed from a parsed and
 * verified module to the end of pass_run_pipeline.
 *
 *     bench_pipeline TIMEOUT_S SMALL.hlo [MIDDLE.hlo ...] LARGE.hlo
 *
 * Reports each size, then the largest against the budget "finishes in
 * seconds" (10 s) and the growth t(largest) / t(smallest) against n log n
 * (target <= 15 for 10k -> 100k), each the best of seven runs taken in
 * rounds over the sizes.  Each measurement runs in a child process
 * with a fresh parse; one that exceeds TIMEOUT_S is stopped and reported as
 * at least that long, so one slow pass cannot stall the whole benchmark. */
#include "ir.h"
#include "pass.h"

#include "bench.h"

#include <math.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct Result {
    double seconds;         /* < 0: failed */
    bool timed_out;
    long instrs, collectives;
    char note[512];
} Result;

static long count_instrs(const IrModule *m, long *collectives)
{
    long n = 0;
    *collectives = 0;
    for (int c = 0; c < m->n_computations; c++)
        for (int i = 0; i < m->computations[c]->n_instrs; i++) {
            n++;
            if (ir_op_info[m->computations[c]->instrs[i]->op].flags & OPF_COLLECTIVE)
                ++*collectives;
        }
    return n;
}

/* In the child: parse, verify, run the default pipeline.  Two Results go
 * back through fd: the module's size, then the time (or a failure). */
static void child(const char *path, int fd)
{
    Result r = { .seconds = -1 };
    Error err = { .code = ERR_OK };
    IrModule *m = ir_parse_file(path, &err);
    const Pass *list[64];
    int n = 0;
    PassOptions opt;
    pass_options_default(&opt);
    static PipelineStats stats;
    bool changed = false, sized = false;
    if (m && ir_verify_module(m, &err) && pass_parse_list("default", list, &n, &err)) {
        r.instrs = count_instrs(m, &r.collectives);
        sized = write(fd, &r, sizeof r) == (ssize_t)sizeof r;   /* known even if stopped */
        double t0 = bench_now();
        bool ok = pass_run_pipeline(m, list, n, &opt, &stats, &changed, &err);
        double t = bench_now() - t0;
        if (ok) {
            r.seconds = t;
            long coll_after = 0, instrs_after = count_instrs(m, &coll_after);
            int len = snprintf(r.note, sizeof r.note, "%ld -> %ld instructions, %ld -> %ld collectives; fired:",
                               r.instrs, instrs_after, r.collectives, coll_after);
            for (int i = 0; i < stats.n && len < (int)sizeof r.note; i++)
                len += snprintf(r.note + len, sizeof r.note - (size_t)len, " %s %ld",
                                stats.pass[i]->alias ? stats.pass[i]->alias : stats.pass[i]->name,
                                stats.stats[i].fired);
        }
    }
    if (err.code != ERR_OK)
        error_print(&err, stderr);
    for (int k = sized ? 1 : 0; k < 2; k++)
        if (write(fd, &r, sizeof r) != (ssize_t)sizeof r)
            break;
    _exit(0);
}

/* Reads one Result from fd before the deadline (bench_now() seconds). */
static bool read_result(int fd, double deadline, Result *r, bool *timed_out)
{
    size_t got = 0;
    while (got < sizeof *r) {
        double left = deadline - bench_now();
        struct pollfd p = { .fd = fd, .events = POLLIN };
        int ready = left > 0 ? poll(&p, 1, (int)(left * 1000) + 1) : 0;
        if (ready == 0) {
            *timed_out = true;
            return false;
        }
        ssize_t k = ready > 0 ? read(fd, (char *)r + got, sizeof *r - got) : -1;
        if (k <= 0)
            return false;
        got += (size_t)k;
    }
    return true;
}

static Result measure(const char *path, double timeout)
{
    Result r = { .seconds = -1 }, size = { .seconds = -1 };
    int fds[2];
    if (pipe(fds) != 0)
        return r;
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        return r;
    if (pid == 0) {
        close(fds[0]);
        child(path, fds[1]);
    }
    close(fds[1]);
    double deadline = bench_now() + timeout;
    bool timed_out = false;
    if (read_result(fds[0], deadline, &size, &timed_out) && read_result(fds[0], deadline, &r, &timed_out)) {
        waitpid(pid, NULL, 0);
    } else {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        r = (Result){ .seconds = timed_out ? timeout : -1, .timed_out = timed_out,
                      .instrs = size.instrs, .collectives = size.collectives };
    }
    close(fds[0]);
    return r;
}

static void size_name(const Result *r, char *out, size_t n)
{
    snprintf(out, n, "%ldk instructions (%ldk collectives)", r->instrs / 1000, r->collectives / 1000);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: bench_pipeline TIMEOUT_S SMALL.hlo [MIDDLE.hlo ...] LARGE.hlo\n");
        return 2;
    }
    double timeout = atof(argv[1]);
    int n = argc - 2;
    Result *res = calloc((size_t)n, sizeof *res);
    int *reps = calloc((size_t)n, sizeof *reps);
    bool *done = calloc((size_t)n, sizeof *done);
    /* The best of seven runs of each size (the VM's cores are shared; the
     * minimum is the least disturbed run), taken in rounds of one run per
     * size, so that a slow spell of the machine falls on every size alike
     * rather than on whichever size it was running.  The same count for
     * every size, so that no size's minimum is luckier for having been
     * drawn more often; a size whose run takes over a second stops at
     * three, one that fails or times out at once. */
    for (int i = 0; i < n; i++) {
        reps[i] = 7;
        res[i].seconds = 1e30;
    }
    for (int k = 0; k < 7; k++)
        for (int i = 0; i < n; i++) {
            if (done[i] || k >= reps[i])
                continue;
            Result r = measure(argv[2 + i], timeout);
            if (r.timed_out || r.seconds < 0 || r.seconds < res[i].seconds)
                res[i] = r;
            if (r.timed_out || r.seconds < 0)
                done[i] = true;
            else if (k == 0 && r.seconds > 1.0)
                reps[i] = 3;
        }
    for (int i = 0; i < n; i++) {
        char name[160], size[96], ours[96];
        size_name(&res[i], size, sizeof size);
        snprintf(name, sizeof name, "pipeline default, %s", size);
        bool last = i == n - 1;
        if (res[i].seconds < 0) {
            printf("pipeline default on %s: failed (see the error)\n", argv[2 + i]);
        } else if (res[i].timed_out) {
            printf("%s: ours > %.1f s (stopped), limit 10.00 s, ratio > %.3f (target %s)\n", name, timeout,
                   timeout / 10.0, last ? "<= 1.00" : "none");
        } else {
            snprintf(ours, sizeof ours, "%.3f s", res[i].seconds);
            bench_line(name, ours, "10.00 s (\"finishes in seconds\")", res[i].seconds / 10.0, last ? "<=" : NULL, 1.0);
            bench_note("%s", res[i].note);
        }
    }
    const Result *a = &res[0], *b = &res[n - 1];
    if (a->seconds > 0 && !a->timed_out && b->seconds > 0) {
        char name[256], sa[96], sb[96], ours[96], lim[96];
        size_name(a, sa, sizeof sa);
        size_name(b, sb, sizeof sb);
        snprintf(name, sizeof name, "pipeline default growth, %s vs %s", sb, sa);
        double grow = b->seconds / a->seconds;
        snprintf(ours, sizeof ours, "%s%.3f s at the larger", b->timed_out ? "> " : "", b->seconds);
        snprintf(lim, sizeof lim, "%.3f s at the smaller", a->seconds);
        if (b->timed_out)
            printf("%s: ours %s, limit %s, ratio > %.3f (target <= 15.00)\n", name, ours, lim, grow);
        else
            bench_line(name, ours, lim, grow, "<=", 15.0);
        /* The exponent k in t ~ n^k between each pair of sizes measured. */
        for (int i = 1; i < n; i++)
            if (!res[i].timed_out && res[i].seconds > 0 && res[i - 1].seconds > 0 && !res[i - 1].timed_out &&
                res[i].instrs > res[i - 1].instrs)
                bench_note("growth %ldk -> %ldk instructions: time x%.1f for size x%.1f (t ~ n^%.2f)",
                           res[i - 1].instrs / 1000, res[i].instrs / 1000, res[i].seconds / res[i - 1].seconds,
                           (double)res[i].instrs / (double)res[i - 1].instrs,
                           log(res[i].seconds / res[i - 1].seconds) /
                               log((double)res[i].instrs / (double)res[i - 1].instrs));
    }
    free(res);
    free(reps);
    free(done);
    return 0;
}
