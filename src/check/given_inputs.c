/* given_inputs.c: hlo-check --inputs, a rank's values for a module's
 * parameters given instead of drawn: DIR/param<p>.rank<r>.npy (as
 * --save-counterexample and --shrink write them), or the arguments an
 * HloSnapshot recorded (XLA's *.snapshot.pb, one per rank). */
#include "check.h"
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* "F0,F1,...": this rank's snapshot (the rank-th; one for a run of one
 * rank), its recorded arguments as m's parameters. */
static bool from_snapshot(const char *list, int rank, int world, const IrModule *m, Value **params, Error *err)
{
    int n;
    char *path = cli_list_item(list, rank, &n);
    if (n != world) {
        free(path);
        return error_set(err, ERR_MISMATCH, (IrLoc){ list, 0, 0 }, "--inputs %s: %d snapshot%s for %d rank%s: a "
                         "snapshot records one device's run, so give one per rank (F0,F1,...)", list, n,
                         n == 1 ? "" : "s", world, world == 1 ? "" : "s");
    }
    if (!path)
        return error_set(err, ERR_MISMATCH, (IrLoc){ list, 0, 0 }, "--inputs %s: an empty file name", list);
    IrModule *sm = ir_parse_file(path, err);
    bool ok = sm != NULL;
    if (ok && !sm->snapshot)
        ok = error_set(err, ERR_MISMATCH, (IrLoc){ path, 0, 0 }, "--inputs %s: neither a directory of .npy "
                       "inputs nor an HloSnapshot (it is %s)", path, sm->source_kind ? sm->source_kind : "HLO text");
    ok = ok && check_snapshot_params(sm->snapshot, m, params, err);
    ir_module_free(sm);
    free(path);
    return ok;
}

bool check_given_inputs(const char *spec, int rank, int world, const IrModule *m, Value ***out, int *n_out,
                        Error *err)
{
    const IrComputation *e = m->entry;
    Value **given = xcalloc((size_t)e->n_params + 1, sizeof *given);
    *out = given;
    *n_out = 0;
    struct stat st;
    if ((stat(spec, &st) == 0 && !S_ISDIR(st.st_mode)) || strchr(spec, ',')) {
        if (!from_snapshot(spec, rank, world, m, given, err))
            return false;
        *n_out = e->n_params;
        return true;
    }
    for (int p = 0; p < e->n_params; p++) {
        bool rounded = false;
        given[p] = npy_read_param(spec, p, rank, e->params[p]->shape, &rounded, err);
        if (!given[p])
            return false;
        *n_out = p + 1;
    }
    return true;
}

void check_given_free(Value **given, int n)
{
    for (int p = 0; p < n; p++)
        value_release(given[p]);
    free(given);
}
