/* threads.c: how many threads a rank's kernels use (startup.h). */
#define _GNU_SOURCE             /* sched_getaffinity, CPU_COUNT */
#include "startup.h"

#include "parallel.h"

#include <inttypes.h>
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

int startup_threads(Coll *c, int64_t asked)
{
    int node_ranks = coll_node_ranks(c);    /* collective: every rank calls it, given a count or not */
    int n = (int)asked;
    if (n <= 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        int allowed = allowed_cores();
        n = cores > 0 && node_ranks > 0 ? (int)(cores / node_ranks) : 1;
        if (allowed > 0 && n > allowed)
            n = allowed;
    }
    interp_set_threads(n);
    return interp_threads();
}
