/* threads.c: how many threads a rank's kernels use (startup.h). */
#define _GNU_SOURCE             /* sched_getaffinity, CPU_COUNT */
#include "startup.h"

#include "parallel.h"

#include <inttypes.h>
#include <stdint.h>
#include <sched.h>
#include <stdio.h>
#include <unistd.h>

bool startup_threads_ok(int64_t asked, char *msg, size_t msg_n)
{
    if (asked >= 0 && asked <= PARALLEL_MAX_THREADS)
        return true;
    snprintf(msg, msg_n, "--threads takes a count from 1 to %d (got %" PRId64 "); see --help", PARALLEL_MAX_THREADS,
             asked);
    return false;
}

/* The cores this process may run on (its affinity mask), or -1. */
static int allowed_cores(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return -1;
    return CPU_COUNT(&set);
}

int startup_threads(Coll *c, int64_t asked, const char *tool)
{
    int node_ranks = coll_node_ranks(c);    /* collective: every rank calls it, given a count or not */
    int n = (int)asked, allowed = allowed_cores();
    if (n <= 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        n = cores > 0 && node_ranks > 0 ? (int)(cores / node_ranks) : 1;
        if (allowed > 0 && n > allowed)
            n = allowed;
    }
    /* More threads than cores to run on gain nothing (they take turns);
     * mpirun binds each rank to one core unless told otherwise.  Said once,
     * for the rank with the fewest. */
    int64_t fewest = allowed > 0 ? allowed : INT64_MAX;
    coll_allreduce_i64(c, &fewest, 1, COLL_MIN);
    if (asked > fewest && coll_rank(c) == 0)
        fprintf(stderr, "%s: note: --threads %" PRId64 " asks for more threads than the %" PRId64 " core%s a rank "
                "may run on (mpirun binds each rank to one core by default), so they take turns: give mpirun "
                "--bind-to none, or --map-by slot:PE=%" PRId64 " to bind each rank to that many cores\n", tool,
                asked, fewest, fewest == 1 ? "" : "s", asked);
    interp_set_threads(n);
    return interp_threads();
}
