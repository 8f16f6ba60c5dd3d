/* local_check.c: hlo-check --local, each region where two modules differ
 * checked on its own (local_regions.c finds the regions).  A region runs at
 * its real shapes on the ranks it needs (the job narrowed to them), or on
 * one group of its devices when one stands for all; a region that cannot run
 * here says why and what would run it.  When regions differ on free inputs
 * or change an accumulation type, the verdict is taken on the whole pair
 * when it fits: a region's inputs are free, the module's are not. */
#include "check_internal.h"
#include "coll.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The estimated need of checking a region: both sides' outputs held, or
 * before's as a digest when that is what fits (check_modules does the
 * same). */
static void region_need(const CheckOptions *co, const CheckRegion *r, int64_t limit, InterpMemory *need)
{
    check_pair_need(r->before, r->after, NULL, need);
    CheckSite *sites = NULL;
    int n_sites = check_find_sites(r->before, r->after, &sites);
    free(sites);
    bool bitwise = co->tol.mode == CHECK_EXACT || (co->tol.mode == CHECK_AUTO && n_sites == 0);
    if (limit > 0 && need->peak > limit && bitwise && co->oracle != 1)
        check_pair_lean_need(r->before, r->after, need);
}


static double seconds_between(const struct timespec *t0, const struct timespec *t1)
{
    return (double)(t1->tv_sec - t0->tv_sec) + 1e-9 * (double)(t1->tv_nsec - t0->tv_nsec);
}

/* After a step with collectives inside: every rank learns whether all
 * succeeded, and when not, all stop at this point (*stop) so that the
 * caller settles the failure (fail.h); a rank whose peers are stuck in a
 * collective gives up after COLL_AGREE_SECONDS, and the caller's settling
 * aborts the job.  Returns ok. */
static bool settle(Coll *c, bool ok, bool *stop)
{
    bool agreed;
    *stop = !coll_agree(c, ok, COLL_AGREE_SECONDS, &agreed);
    return ok;
}

/* Region r checked with co on the ranks it needs, or the reason it cannot
 * run here, into res (the same on every rank).  Collective on c; false
 * on a rank that failed, *stop on every rank when one did. */
static bool check_region(Coll *c, const CheckOptions *co, const CheckLocalOptions *lo, CheckRegion *r,
                         const CheckSite *sites, int n_sites, FILE *out, CheckRegionResult *res, bool *stop,
                         Error *err)
{
    int world = coll_world(c);
    res->devices = check_module_devices(r->before, world);
    res->one_group = r->group_size > 1 && r->group_size < res->devices;
    if (res->one_group && !check_region_one_group(r, err)) {
        *stop = true;       /* every rank has the same region: all failed alike */
        return false;
    }
    res->ranks = res->one_group ? r->group_size : res->devices;
    res->world = world;
    if (out)
        check_print_region_head(out, r, res);
    int64_t status[2] = { CHECK_REGION_NOT_RUN, CHECK_RAN };
    res->limit = co->max_memory;
    snprintf(res->limit_why, sizeof res->limit_why, "%s", co->max_memory_why ? co->max_memory_why : "as given");
    if (r->point_to_point)
        status[1] = CHECK_NOT_RUN_P2P;
    else if (res->ranks > world)
        status[1] = CHECK_NOT_RUN_RANKS;
    bool active = status[1] == CHECK_RAN && (res->ranks == world || coll_narrow(c, res->ranks));
    if (active) {
        if (!lo->max_memory_given) {    /* the default over the ranks working now */
            res->limit = check_default_max_memory(c, res->limit_why, sizeof res->limit_why);
            coll_allreduce_i64(c, &res->limit, 1, COLL_MIN);
        }
        region_need(co, r, res->limit, &res->need);
        if (res->limit > 0 && res->need.peak > res->limit)
            status[1] = CHECK_NOT_RUN_MEMORY;
    }
    if (out)
        check_print_region_need(out, res, status[1] == CHECK_RAN || status[1] == CHECK_NOT_RUN_MEMORY);
    if (active && status[1] == CHECK_RAN) {
        CheckReport rep;
        CheckOptions quiet = *co;
        quiet.progress = false;
        quiet.max_memory = res->limit;
        quiet.max_memory_why = res->limit_why;
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        bool ok = check_modules(c, r->before, r->after, &quiet, &rep, err);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if (!settle(c, ok, stop))
            return false;
        if (!*stop) {
            /* A region around a reduction whose accumulation type changed
             * differs by design; its accuracy is judged on the whole pair. */
            bool precision = !rep.equivalent && check_region_holds_site(r, sites, n_sites);
            status[0] = precision ? CHECK_REGION_PRECISION
                      : rep.equivalent ? CHECK_REGION_EQUIVALENT : CHECK_REGION_DIFFERS;
            res->verdict = (CheckRegionVerdict)status[0];
            res->seconds = seconds_between(&t0, &t1);
            res->diff = rep.diff;
            if (out)
                check_print_region_verdict(out, res, &rep);
        }
        check_report_free(&rep);
    }
    /* A failure inside the narrowed ranks ends the job there (the others
     * wait in coll_widen): the caller settles it before widening. */
    if (*stop)
        return true;
    if (res->ranks < world && status[1] != CHECK_NOT_RUN_P2P && status[1] != CHECK_NOT_RUN_RANKS)
        coll_widen(c);
    coll_bcast(c, status, sizeof status, 0);
    coll_bcast(c, &res->need, sizeof res->need, 0);
    res->verdict = (CheckRegionVerdict)status[0];
    res->not_run = (CheckNotRun)status[1];
    if (out && res->not_run != CHECK_RAN)
        check_print_region_not_run(out, res, lo->node_memory > 0 ? lo->node_memory : coll_node_memory());
    return true;
}

/* Rank 0 writes each region's two sides to dir; the job settles it. */
static bool write_regions(const CheckRegion *regions, int n, const char *dir, Error *err)
{
    if (!ir_make_dirs(dir, err))
        return false;
    for (int i = 0; i < n; i++)
        for (int side = 0; side < 2; side++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/region%d.%s.hlo", dir, i + 1, side ? "after" : "before");
            if (!ir_write_module_file(side ? regions[i].after : regions[i].before, path, err))
                return false;
        }
    return true;
}

bool check_local(Coll *c, const IrModule *before, const IrModule *after, const CheckOptions *co,
                 const CheckLocalOptions *lo, CheckLocal *out, Error *err)
{
    memset(out, 0, sizeof *out);
    FILE *print = coll_rank(c) == 0 ? lo->out : NULL;
    CheckRegion *regions = NULL;
    int n = 0;
    if (!check_find_regions(before, after, &regions, &n, err))
        return false;
    out->n_regions = n;
    out->region = lo->region;
    out->results = xcalloc((size_t)n + 1, sizeof *out->results);
    for (int i = 0; i < n; i++)
        out->results[i] = (CheckRegionResult){ .index = i, .n = n, .verdict = CHECK_REGION_NOT_RUN };
    if (lo->region > n) {
        check_regions_free(regions, n);
        return error_set(err, ERR_MISMATCH, (IrLoc){ 0 }, "--region=%d: there %s only %d region%s where the "
                         "modules differ", lo->region, n == 1 ? "is" : "are", n, n == 1 ? "" : "s");
    }
    if (print)
        check_print_local_head(print, lo->before_name, lo->after_name, n);
    bool ok = true, stop = false;
    if (lo->regions_dir && coll_rank(c) == 0)
        ok = write_regions(regions, n, lo->regions_dir, err);
    int64_t written = ok;
    coll_bcast(c, &written, sizeof written, 0);
    out->stopped = stop = !written;     /* rank 0 alone failed, and says so */
    CheckSite *sites = NULL;
    int n_sites = check_find_sites(before, after, &sites);
    for (int i = 0; i < n && !stop; i++) {
        if (lo->region && i + 1 != lo->region)
            continue;
        CheckRegionResult res = { .index = i, .n = n };
        ok = check_region(c, co, lo, &regions[i], sites, n_sites, print, &res, &stop, err);
        out->equivalent += res.verdict == CHECK_REGION_EQUIVALENT;
        out->differ += res.verdict == CHECK_REGION_DIFFERS;
        out->precision += res.verdict == CHECK_REGION_PRECISION;
        out->not_run += res.verdict == CHECK_REGION_NOT_RUN;
        out->results[i] = res;
    }
    free(sites);
    check_regions_free(regions, n);
    out->stopped = stop;
    if (stop)
        return ok;
    out->code = 0;
    if (out->differ || out->precision) {
        /* A region may differ only on inputs the module never gives it, and
         * a precision change is judged by accuracy on the module's own
         * values: decide on the whole pair when it fits. */
        check_pair_need(before, after, NULL, &out->whole_need);
        bool fits = co->max_memory <= 0 || out->whole_need.peak <= co->max_memory;
        if (fits && !lo->region) {
            if (print)
                check_print_local_whole(print, out);
            ok = check_modules(c, before, after, co, &out->whole, err);
            out->whole_checked = ok;
            if (!settle(c, ok, &out->stopped) || out->stopped)
                return ok;
            out->code = out->whole.equivalent ? 0 : 1;
        } else {
            out->code = out->differ ? 1 : 2;
        }
    } else if (out->not_run) {
        out->code = 2;
    }
    return true;
}

void check_local_free(CheckLocal *l)
{
    if (l->whole_checked)
        check_report_free(&l->whole);
    l->whole_checked = false;
    free(l->results);
    l->results = NULL;
}
