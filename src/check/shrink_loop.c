/* shrink_loop.c: hlo-check --shrink around check_shrink (shrink.c): the
 * shrunk pair checked again on its inputs, cut to the failing element when
 * it works element by element, cut to the failing rank when nothing
 * rank-dependent is left, and written with its inputs and the commands that
 * show the difference. */
#include "check.h"
#include "coll.h"
#include "shrink_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Checks a candidate pair without printing: does it still differ, and
 * where first (*diff). */
static bool still_differs(Coll *c, const CheckOptions *co, const CheckShrink *s, CheckDifference *diff, Error *err)
{
    CheckReport rep;
    CheckOptions quiet = *co;
    quiet.inputs = s->inputs;
    quiet.n_inputs = s->n_inputs;
    quiet.prove = false;
    if (!check_modules(c, s->before, s->after, &quiet, &rep, err))
        return false;
    *diff = rep.diff;
    check_report_free(&rep);
    return true;
}

bool check_shrink_try_cut(Coll *c, const CheckOptions *co, CheckShrinkCut cut_fn, CheckShrink *s,
                          CheckDifference *diff, bool *cut, Error *err)
{
    CheckShrink keep;
    *cut = false;
    if (!coll_all_ok(c, check_shrink_copy(s, &keep, err)))
        return false;
    bool made = cut_fn(s, diff->index, err);
    if (!coll_all_ok(c, made || err->code == ERR_OK)) {
        check_shrink_free(&keep);
        return false;
    }
    CheckDifference d2 = { 0 };
    if (made && !still_differs(c, co, s, &d2, err)) {
        check_shrink_free(&keep);
        return false;
    }
    if (made && d2.found) {
        *diff = d2;
        *cut = true;
        check_shrink_free(&keep);
        return true;
    }
    if (made) {                 /* the cut lost the difference: back to the pair */
        check_shrink_free(s);
        *s = keep;
    } else {
        check_shrink_free(&keep);
    }
    return true;
}

/* With nothing rank-dependent left in the shrunk pair (no collective, no
 * replica-id), the failing rank's inputs show the difference on one device:
 * checked there, agreed by every rank. */
static bool differs_on_one_rank(Coll *c, const CheckShrink *s, int failing_rank)
{
    if (coll_world(c) == 1 || !check_rank_free(s->before) || !check_rank_free(s->after))
        return false;
    int64_t alone = 0;
    if (coll_rank(c) == failing_rank) {
        bool differs = false;
        Error err = { 0 };
        alone = check_differs_alone(s->before, s->after, s->inputs, s->n_inputs, &differs, &err) && differs;
    }
    coll_bcast(c, &alone, sizeof alone, failing_rank);
    return alone != 0;
}

/* Values of b's parameter shapes: on rank i < n, rank ids[i]'s inputs
 * (each sent to all by its owner); on the others, their own. */
static Value **move_inputs(Coll *c, const CheckShrink *s, const IrModule *b, const int *ids, int n, Error *err)
{
    int rank = coll_rank(c);
    Value **in = xcalloc((size_t)s->n_inputs + 1, sizeof *in);
    for (int p = 0; p < s->n_inputs; p++) {
        in[p] = xmust(value_new_array(b->entry->params[p]->shape, err));
        memcpy(in[p]->data, s->inputs[p]->data, value_bytes(in[p]));
    }
    for (int i = 0; i < n; i++)
        for (int p = 0; p < s->n_inputs; p++) {
            size_t bytes = value_bytes(in[p]);
            char *buf = xcalloc(bytes + 1, 1);
            if (rank == ids[i])
                memcpy(buf, s->inputs[p]->data, bytes);
            coll_bcast(c, buf, bytes, ids[i]);
            if (rank == i)
                memcpy(in[p]->data, buf, bytes);
            free(buf);
        }
    return in;
}

/* The pair on the ranks its failing rank depends on alone, when they are
 * fewer than the world (check_rank_subset): checked again on those ranks'
 * inputs, narrowed to them, and kept when it still differs. */
static void cut_ranks(Coll *c, const CheckOptions *co, CheckShrunk *out)
{
    int world = coll_world(c);
    int *ids = xcalloc((size_t)world + 1, sizeof *ids);
    int n = check_rank_subset(out->s.before, out->s.after, world, out->failing_rank, ids);
    for (int p = 0; n && p < out->s.n_inputs; p++)
        if (!ir_shape_is_array(out->s.inputs[p]->shape))
            n = 0;
    Error err = { 0 };
    CheckShrink cut = out->s;
    cut.before = n ? check_renumber_ranks(out->s.before, ids, n, &err) : NULL;
    cut.after = cut.before ? check_renumber_ranks(out->s.after, ids, n, &err) : NULL;
    cut.inputs = NULL;
    if (coll_all_ok(c, cut.after != NULL)) {
        cut.inputs = move_inputs(c, &out->s, cut.before, ids, n, &err);
        CheckOptions narrow = *co;
        narrow.replicas = narrow.partitions = 0;
        CheckDifference d2 = { 0 };
        bool ok = true;
        if (coll_narrow(c, n))
            ok = still_differs(c, &narrow, &cut, &d2, &err);
        coll_widen(c);
        coll_bcast(c, &d2, sizeof d2, 0);
        if (coll_all_ok(c, ok) && d2.found) {
            check_shrink_free(&out->s);
            out->s = cut;
            out->diff = d2;
            out->ranks = n;
            out->failing_rank = d2.rank;
            cut = (CheckShrink){ 0 };
        }
    }
    check_shrink_free(&cut);
    free(ids);
}

static void set_one_device(IrModule *m)
{
    m->replica_count = (IrOptInt){ true, 1 };
    if (m->num_partitions.present)
        m->num_partitions = (IrOptInt){ true, 1 };
}

/* The pair as it will be written, checked once more on its own inputs
 * (after a rank cut, on the first out->ranks ranks alone): out->still says
 * whether it differs, out->recheck is the report.  A failure on a rank of a
 * narrowed job returns there without widening: the caller settles it and
 * the job ends (coll_finish on a narrowed job aborts). */
static bool recheck(Coll *c, const CheckOptions *quiet, CheckShrunk *out, Error *err)
{
    CheckOptions co = *quiet;
    co.prove = false;
    co.inputs = out->s.inputs;
    co.n_inputs = out->s.n_inputs;
    bool narrowed = out->ranks < coll_world(c);
    if (narrowed)
        co.replicas = co.partitions = 0;
    int64_t still = 1;
    if (!narrowed || coll_narrow(c, out->ranks)) {
        bool ok = check_modules(c, out->s.before, out->s.after, &co, &out->recheck, err), agreed;
        out->rechecked = ok;
        if (!coll_agree(c, ok, COLL_AGREE_SECONDS, &agreed))
            return ok;
        still = !out->recheck.equivalent;
    }
    if (narrowed)
        coll_widen(c);
    coll_bcast(c, &still, sizeof still, 0);
    out->still = still != 0;
    return true;
}

bool check_shrink_pair(Coll *c, const IrModule *before, const IrModule *after, const CheckOptions *co,
                       const CheckReport *rep, CheckShrunk *out, Error *err)
{
    memset(out, 0, sizeof *out);
    if (!check_shrink(c, before, after, co, rep, &out->s, err))
        return false;
    CheckOptions quiet = *co;
    if (quiet.tol.mode == CHECK_AUTO)   /* judged as the whole pair was: bitwise, unless a tolerance was asked */
        quiet.tol.mode = CHECK_EXACT;
    quiet.trials = 1;
    quiet.save_dir = NULL;
    quiet.progress = false;
    out->diff = rep->diff;
    if (!still_differs(c, &quiet, &out->s, &out->diff, err))
        return false;
    bool still = out->diff.found;
    if (!still)
        out->diff = rep->diff;
    memcpy(out->where, out->diff.where, sizeof out->where);
    if (still && !check_shrink_try_cut(c, &quiet, check_shrink_to_element, &out->s, &out->diff, &out->element, err))
        return false;
    if (still && !out->element &&
        !check_shrink_try_cut(c, &quiet, check_shrink_to_box, &out->s, &out->diff, &out->box, err))
        return false;
    out->failing_rank = out->diff.rank;
    out->ranks = coll_world(c);
    if (still && (!check_rank_free(out->s.before) || !check_rank_free(out->s.after)))
        cut_ranks(c, &quiet, out);
    out->alone = still && differs_on_one_rank(c, &out->s, out->failing_rank);
    return recheck(c, &quiet, out, err);
}

void check_shrunk_free(CheckShrunk *sh)
{
    if (sh->rechecked)
        check_report_free(&sh->recheck);
    sh->rechecked = false;
    check_shrink_free(&sh->s);
}

bool check_shrunk_write(Coll *c, CheckShrunk *sh, const char *dir, const char *compare, Error *err)
{
    if (!coll_all_ok(c, ir_make_dirs(dir, err)))
        return false;
    if (sh->alone) {
        set_one_device(sh->s.before);
        set_one_device(sh->s.after);
    }
    int rank = coll_rank(c);
    bool ok = true;
    bool writes = sh->alone ? rank == sh->failing_rank : rank < sh->ranks;
    for (int p = 0; p < sh->s.n_inputs && ok && writes; p++)
        ok = npy_write_param(dir, p, sh->alone ? 0 : rank, sh->s.inputs[p], err);
    if (!coll_all_ok(c, ok))
        return false;
    if (rank != 0)
        return true;
    char path[4096];
    snprintf(path, sizeof path, "%s/before.hlo", dir);
    if (!ir_write_module_file(sh->s.before, path, err))
        return false;
    snprintf(path, sizeof path, "%s/after.hlo", dir);
    if (!ir_write_module_file(sh->s.after, path, err))
        return false;
    int world = sh->alone ? 1 : sh->ranks;
    snprintf(path, sizeof path, "%s/command.txt", dir);
    IrAtomicFile a;
    if (!ir_atomic_open(&a, path, err))
        return false;
    FILE *f = a.f;
    fprintf(f, "mpirun --oversubscribe -np %d hlo-check %s/before.hlo %s/after.hlo --inputs %s --compare=%s\n",
            world, dir, dir, dir, compare);
    fprintf(f, "mpirun --oversubscribe -np %d hlo-run %s/before.hlo --inputs %s --print\n", world, dir, dir);
    fprintf(f, "mpirun --oversubscribe -np %d hlo-run %s/after.hlo --inputs %s --print\n", world, dir, dir);
    return ir_atomic_close(&a, true, err);
}
