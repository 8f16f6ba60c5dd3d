/* prove_coll.c: all-reduce and reduce-scatter on hashes.  The collectives
 * fold every element in group order, acc = x_0, then acc = f(acc, x_m) for
 * m = 1 .. n-1 (all_reduce.c, reduce_scatter.c), so the hash of a result
 * element is that left fold of the members' hashes, f hashed as in
 * prove_apply.  The members' hashes arrive by an all-gather of the shadows
 * (the interpreter's own, over MPI) on the same groups, with each member's
 * device id beside them to find this rank's place in its group.  The other
 * collectives only move data: prove_run.c runs them on the shadows as
 * they are. */
#include "prove_internal.h"
#include "coll.h"

#include <stdlib.h>
#include <string.h>

/* The members' hashes of every leaf (gathered[j]: n x E_j) and this rank's
 * position in its group. */
static bool gather_members(ProveRun *r, const IrInstr *instr, Value **leaves, int k, int n, PHash **gathered,
                           int *position, Error *err)
{
    IrInstr g = *instr;
    IrInstrInfo gi = *instr->info;
    g.info = &gi;
    g.op = IR_OP_ALL_GATHER;
    gi.async_wrapped = IR_OP_COUNT;
    IrIntList lists[IR_LIST_COUNT];
    memcpy(lists, instr->lists, sizeof lists);
    int64_t zero = 0;
    lists[IR_LIST_DIMENSIONS] = (IrIntList){ true, 1, &zero };
    g.lists = lists;
    IrShape *in = xcalloc((size_t)k + 1, sizeof *in), *out = xcalloc((size_t)k + 1, sizeof *out);
    int64_t (*dims)[4] = xcalloc((size_t)k + 1, sizeof *dims);
    IrShape **elements = xcalloc((size_t)k + 1, sizeof *elements);
    Value **args = xcalloc((size_t)k + 1, sizeof *args);
    IrInstr **ops = xcalloc((size_t)k + 1, sizeof *ops);
    bool ok = true;
    for (int j = 0; j <= k; j++) {
        int64_t e = j < k ? value_elements(leaves[j]) : 1;
        dims[j][0] = 1;
        dims[j][1] = e;
        dims[j][2] = n;
        dims[j][3] = e;
        in[j] = (IrShape){ .type = IR_TYPE_C128, .rank = 2, .dims = &dims[j][0] };
        out[j] = (IrShape){ .type = IR_TYPE_C128, .rank = 2, .dims = &dims[j][2] };
        elements[j] = &out[j];
        ops[j] = instr->operands[j < instr->n_operands ? j : 0];
        if (j < k) {
            ok = ok && (args[j] = value_alias(&in[j], leaves[j], err)) != NULL;
        } else if (ok && (args[j] = value_new_array(&in[j], err)) != NULL) {
            ph_data(args[j])[0] = (PHash){ (uint64_t)r->dev.rank, 0 };
        } else {
            ok = false;
        }
    }
    IrShape tuple = { .type = IR_TYPE_TUPLE, .n_elements = k + 1, .elements = elements };
    g.shape = &tuple;
    g.n_operands = k + 1;
    g.operands = ops;
    Value *res = NULL;
    ok = ok && interp_eval_instr(r->it, &g, args, &res, err);
    for (int j = 0; j <= k; j++)
        value_release(args[j]);
    if (ok) {
        const PHash *ids = ph_data(res->elements[k]);
        *position = -1;
        for (int m = 0; m < n; m++)
            if (ids[m].lo == (uint64_t)r->dev.rank)
                *position = m;
        /* Copied out: the gathered values' shapes are ours and go now. */
        for (int j = 0; j < k; j++) {
            size_t bytes = value_bytes(res->elements[j]);
            gathered[j] = xmalloc(bytes ? bytes : 1);
            memcpy(gathered[j], res->elements[j]->data, bytes);
        }
        if (ok && *position < 0)
            ok = error_set(err, ERR_INTERNAL, instr->info->loc, "--prove: %s: this device is in none of its groups",
                           instr->name);
    }
    value_release(res);
    free(in);
    free(out);
    free(dims);
    free(elements);
    free(args);
    free(ops);
    return ok;
}

bool prove_all_reduce(ProveRun *r, const IrInstr *instr, PVal *const *args, const PVal *result, Value **h,
                      Error *err)
{
    const IrComputation *comp = instr->info->comps[IR_COMP_TO_APPLY];
    int n = coll_uniform_group_size(instr, r->dev.replica_count, r->dev.num_partitions);
    if (!comp || n < 1)
        return error_set(err, ERR_UNSUPPORTED, instr->info->loc,
                         "--prove: %s: its groups are not all of one size", instr->name);
    bool scatter = instr->op == IR_OP_REDUCE_SCATTER;
    int k = instr->n_operands;
    Value **leaves = xcalloc((size_t)k, sizeof *leaves);
    PHash **gathered = xcalloc((size_t)k, sizeof *gathered);
    for (int j = 0; j < k; j++)
        leaves[j] = args[j]->h;
    int position = 0;
    bool ok = true;
    if (n > 1)
        ok = gather_members(r, instr, leaves, k, n, gathered, &position, err);
    Value *out = ok ? prove_new_like(r, result->v, err) : NULL;
    ok = out != NULL;
    int nl = out ? value_leaves(out, NULL, 0) : 0;
    Value **ol = xcalloc((size_t)(nl ? nl : 1), sizeof *ol);
    if (out)
        value_leaves(out, ol, nl);
    ok = ok && nl == k;
    int dim = scatter ? (int)instr->lists[IR_LIST_DIMENSIONS].v[0] : 0;
    for (int j = 0; j < k && ok; j++) {
        const IrShape *x = leaves[j]->shape, *o = ol[j]->shape;
        int64_t E = value_elements(leaves[j]), n_res = value_elements(ol[j]);
        /* off[e]: the operand element result element e folds. */
        int64_t *off = xcalloc((size_t)(n_res ? n_res : 1), sizeof *off);
        int64_t idx[IR_MAX_RANK] = { 0 }, strides[IR_MAX_RANK], acc_s = 1;
        for (int d = x->rank - 1; d >= 0; d--) {
            strides[d] = acc_s;
            acc_s *= x->dims[d];
        }
        int64_t chunk = scatter && o->rank > dim ? o->dims[dim] : 0;
        for (int64_t e = 0; e < n_res; e++) {
            int64_t at = 0;
            for (int d = 0; d < o->rank; d++)
                at += (idx[d] + (scatter && d == dim ? position * chunk : 0)) * strides[d];
            off[e] = at;
            for (int d = o->rank - 1; d >= 0; d--) {
                if (++idx[d] < o->dims[d])
                    break;
                idx[d] = 0;
            }
        }
        PHash *acc = ph_data(ol[j]);
        const PHash *mine = ph_data(leaves[j]);
        const PHash *all = n > 1 ? gathered[j] : NULL;
        for (int64_t e = 0; e < n_res; e++)
            acc[e] = n > 1 ? all[off[e]] : mine[off[e]];
        PHash *x_m = xcalloc((size_t)(n_res ? n_res : 1), sizeof *x_m);
        for (int m = 1; m < n; m++) {
            for (int64_t e = 0; e < n_res; e++)
                x_m[e] = all[(int64_t)m * E + off[e]];
            prove_apply(r, comp, 1, &acc, &x_m, n_res);
        }
        free(x_m);
        free(off);
    }
    if (out && nl != k)
        ok = error_set(err, ERR_INTERNAL, instr->info->loc, "--prove: %s: %d results for %d operands", instr->name,
                       nl, k);
    for (int j = 0; j < k; j++)
        free(gathered[j]);
    free(leaves);
    free(gathered);
    free(ol);
    if (!ok) {
        value_release(out);
        return false;
    }
    *h = out;
    return true;
}

void prove_fix_zero_hashes(ProveRun *r, Value *h, const Value *v)
{
    (void)r;
    int nl = value_leaves(h, NULL, 0);
    Value **hl = xcalloc((size_t)nl, sizeof *hl), **vl = xcalloc((size_t)nl, sizeof *vl);
    value_leaves(h, hl, nl);
    value_leaves((Value *)v, vl, nl);
    for (int l = 0; l < nl; l++) {
        IrElemType t = vl[l]->shape->type;
        if (hl[l]->shape->type != IR_TYPE_C128)
            continue;
        unsigned char zero[16] = { 0 };
        PHash z = ph_const(t, zero, false), *e = ph_data(hl[l]);
        int64_t n = value_elements(hl[l]);
        for (int64_t i = 0; i < n; i++)
            if (e[i].lo == 0 && e[i].hi == 0)
                e[i] = z;
    }
    free(hl);
    free(vl);
}
