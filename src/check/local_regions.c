/* local_regions.c: step 3 of hlo-check --local, the regions.  From the
 * matched values and output pairs local_values.c finds (steps 1 and 2),
 * each region is cut out of the two modules as a pair of modules of its
 * own, its inputs their parameters, named by where it lies and what it
 * holds, with the size of the replica group that stands for all when one
 * does (check_region_one_group rewrites it to that group).
 *
 * 3. Regions.  An output pair's region is, on each side, its ancestors up to
 *    the shared instructions, which become the region's inputs; regions
 *    that overlap are merged.  Shared inputs that depend on no parameter
 *    (constants, iota, partition-id, replica-id and what is computed from
 *    them: index arithmetic) are kept inside the region, so that it keeps
 *    their values and constraints; the others become parameters.  In a loop
 *    body, a counter (a state element that starts at a constant, goes up by
 *    one and is compared with a constant bound) counts as such a leaf too:
 *    the index arithmetic on it stays inside, and the counter becomes a
 *    parameter drawn from the values the loop gives it (hlocheck_range).
 * Soundness: if every region's two sides agree on every input, every
 * output pair is equal, so every matched pair is (same op on equal
 * operands), so the roots are: the modules are equivalent.  A region that
 * differs on free inputs may not differ on the values the module gives it:
 * hlo-check says so and, when the whole pair fits, runs it to decide. */
#include "check_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Regions                                                              */

typedef struct Grouping {
    int *owner[2];          /* [side][instr id]: output pair + 1 whose region holds it */
    int *parent;            /* union-find over output pairs */
} Grouping;

static int find_root(int *parent, int x)
{
    while (parent[x] != x)
        x = parent[x] = parent[parent[x]];
    return x;
}

/* Marks the region of output pair p on side s: x and its ancestors up to
 * the instructions known in both modules (shared, or matched with one of
 * the other side); meeting another pair's region merges the two. */
static void claim(CheckAnalysis *an, Grouping *g, int s, int p, const IrInstr *x)
{
    if (x->op == IR_OP_PARAMETER)
        return;     /* a parameter is never computed in a region: it enters as an input (collect_side) */
    size_t n = 0, cap = 64;
    const IrInstr **stack = xmalloc(cap * sizeof *stack);
    stack[n++] = x;
    while (n > 0) {
        const IrInstr *y = stack[--n];
        if (y != x && an->key[s][y->id])
            continue;       /* known in both modules: an input */
        int o = g->owner[s][y->id];
        if (o) {
            int r1 = find_root(g->parent, o - 1), r2 = find_root(g->parent, p);
            if (r1 != r2)
                g->parent[r1] = r2;
            continue;
        }
        g->owner[s][y->id] = p + 1;
        for (int k = 0; k < y->n_operands; k++) {
            if (n == cap) {
                cap *= 2;
                stack = xrealloc(stack, cap * sizeof *stack);
            }
            stack[n++] = y->operands[k];
        }
    }
    free(stack);
}

/* The region's instructions of side s in schedule order: its own, and the
 * parameter-free shared ones they read; its inputs (the other known values
 * it reads) by key, sorted. */
typedef struct Side {
    const IrInstr **members;
    int n_members;
    int *inputs;            /* value numbers */
    int n_inputs;
} Side;

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static void add_input(Side *out, int v)
{
    for (int j = 0; j < out->n_inputs; j++)
        if (out->inputs[j] == v)
            return;
    out->inputs[out->n_inputs++] = v;
}

/* outs[0..n_outs): the region's output pairs; one whose side-s value is a
 * parameter (of the computation, so known in both modules) reads it as an
 * input, like any operand from outside. */
static void collect_side(CheckAnalysis *an, Grouping *g, int s, int root, const CheckValuePair *outs, int n_outs,
                         Side *out)
{
    const IrComputation *c = an->c[s];
    char *in_region = xcalloc((size_t)an->nb->m[s]->next_instr_id + 1, 1);
    for (int i = 0; i < c->n_instrs; i++) {
        const IrInstr *x = c->instrs[i];
        int o = g->owner[s][x->id];
        if (o && find_root(g->parent, o - 1) == root)
            in_region[x->id] = 1;
    }
    /* Parameter-free shared operands come in, with everything they read. */
    for (int i = c->n_instrs - 1; i >= 0; i--) {
        const IrInstr *x = c->instrs[i];
        if (!in_region[x->id])
            continue;
        for (int k = 0; k < x->n_operands; k++) {
            const IrInstr *y = x->operands[k];
            if (check_shared(an, y, s) && an->param_free[s][y->id] && !an->counter[s][y->id])
                in_region[y->id] = 2;
        }
    }
    out->members = xcalloc((size_t)c->n_instrs + 1, sizeof *out->members);
    out->inputs = xcalloc((size_t)c->n_instrs + (size_t)n_outs + 1, sizeof *out->inputs);
    out->n_members = out->n_inputs = 0;
    for (int j = 0; j < n_outs; j++)
        if (!in_region[outs[j].x[s]->id])
            add_input(out, an->key[s][outs[j].x[s]->id] - 1);
    for (int i = 0; i < c->n_instrs; i++) {
        const IrInstr *x = c->instrs[i];
        if (!in_region[x->id])
            continue;
        out->members[out->n_members++] = x;
        for (int k = 0; k < x->n_operands; k++) {
            const IrInstr *y = x->operands[k];
            if (in_region[y->id])
                continue;
            add_input(out, an->key[s][y->id] - 1);
        }
    }
    qsort(out->inputs, (size_t)out->n_inputs, sizeof *out->inputs, cmp_int);
    free(in_region);
}

/* ------------------------------------------------------------------ */
/* A region as a pair of modules                                        */

/* Computations reachable from c through the instructions left in it. */
static void keep_reachable(IrModule *m, IrComputation *entry)
{
    int n = m->n_computations;
    char *reach = xcalloc((size_t)ir_module_max_computation_id(m) + 1, 1);
    IrComputation **work = xcalloc((size_t)n + 1, sizeof *work);
    int n_work = 0;
    reach[entry->id] = 1;
    work[n_work++] = entry;
    while (n_work > 0) {
        IrComputation *c = work[--n_work];
        for (int i = 0; i < c->n_instrs; i++) {
            IrComputation *callees[64];
            int k = ir_instr_called(c->instrs[i], callees, 64);
            for (int j = 0; j < k && j < 64; j++)
                if (!reach[callees[j]->id]) {
                    reach[callees[j]->id] = 1;
                    work[n_work++] = callees[j];
                }
        }
    }
    int kept = 0;
    for (int i = 0; i < n; i++)
        if (reach[m->computations[i]->id])
            m->computations[kept++] = m->computations[i];
    m->n_computations = kept;
    free(reach);
    free(work);
}

/* Side s of region r as a module of its own: a copy of the module in which
 * the pair's computation becomes the entry, with the region's inputs
 * (those of both sides, by value number) as its parameters and the
 * output pairs' side-s values as its tuple root; nothing else is left. */
static IrModule *region_module(const CheckAnalysis *an, int s, const Side *side, const int *inputs, int n_inputs,
                               const CheckValuePair *outs, int n_outs, Error *err)
{
    IrModule *m = ir_module_copy(an->nb->m[s], err);
    if (!m)
        return NULL;
    IrComputation *c = ir_module_find_computation(m, an->c[s]->name);
    const IrComputation *orig = an->c[s];
    if (!c || c->n_instrs != orig->n_instrs) {
        ir_module_free(m);
        error_set(err, ERR_INTERNAL, orig->loc, "--local: computation %s did not copy", orig->name);
        return NULL;
    }
    /* The copy lists the instructions in the same order: position i of the
     * copy is position i of the original. */
    int *vn_of = xcalloc((size_t)m->next_instr_id + 1, sizeof *vn_of);
    char *keep = xcalloc((size_t)m->next_instr_id + 1, 1);
    for (int i = 0; i < c->n_instrs; i++)
        vn_of[c->instrs[i]->id] = an->key[s][orig->instrs[i]->id] - 1;
    for (int i = 0, j = 0; i < orig->n_instrs && j < side->n_members; i++)
        if (orig->instrs[i] == side->members[j]) {
            keep[c->instrs[i]->id] = 1;
            j++;
        }
    IrInstr **params = xcalloc((size_t)n_inputs + 1, sizeof *params);
    for (int k = 0; k < n_inputs; k++) {
        const IrInstr *like = an->by_key[s][inputs[k]];
        char base[64];
        snprintf(base, sizeof base, "local.input.%d", k);
        params[k] = xmust(ir_instr_new(m, IR_OP_PARAMETER, ir_unique_name(c, base),
                                       ir_shape_clone(m->arena, like->shape), 0, NULL));
        params[k]->info->parameter_number = k;
        params[k]->parent = c;
        /* A loop counter takes the values its loop gives it. */
        int64_t j;
        for (int q = 0; an->pair && q < an->pair->n_counters; q++)
            if (an->counter[s][like->id] && check_gte_of_param(like, orig, &j) && j == an->pair->counter[q]) {
                char range[96];
                snprintf(range, sizeof range, "{%s=\"%lld,%lld\"}", CHECK_RANGE_ATTR, (long long)an->pair->lo[q],
                         (long long)an->pair->hi[q]);
                ir_raw_attr_set(m, params[k], "frontend_attributes", range);
            }
    }
    /* Members read inputs through the parameters. */
    IrInstr **outputs = xcalloc((size_t)n_outs + 1, sizeof *outputs);
    IrShape **out_shapes = xcalloc((size_t)n_outs + 1, sizeof *out_shapes);
    int total = n_inputs + 1;
    for (int i = 0; i < c->n_instrs && total > 0; i++) {
        IrInstr *x = c->instrs[i];
        if (!keep[x->id])
            continue;
        total++;
        for (int k = 0; k < x->n_operands; k++) {
            if (keep[x->operands[k]->id])
                continue;
            int v = vn_of[x->operands[k]->id];
            const int *at = bsearch(&v, inputs, (size_t)n_inputs, sizeof *inputs, cmp_int);
            if (!at) {      /* cannot happen: every operand outside the region is an input */
                total = -1;
                break;
            }
            x->operands[k] = params[at - inputs];
        }
        int kept = 0;
        for (int k = 0; k < x->n_control_predecessors; k++)
            if (keep[x->control_predecessors[k]->id])
                x->control_predecessors[kept++] = x->control_predecessors[k];
        x->n_control_predecessors = kept;
        for (int j = 0; j < n_outs; j++)
            if (strcmp(x->name, outs[j].x[s]->name) == 0) {
                outputs[j] = x;
                out_shapes[j] = x->shape;
            }
    }
    /* An output that is not computed in the region (a parameter) is the
     * input it enters as. */
    for (int j = 0; j < n_outs && total > 0; j++) {
        if (outputs[j])
            continue;
        int v = an->key[s][outs[j].x[s]->id] - 1;
        const int *at = v >= 0 ? bsearch(&v, inputs, (size_t)n_inputs, sizeof *inputs, cmp_int) : NULL;
        if (at) {
            outputs[j] = params[at - inputs];
            out_shapes[j] = outputs[j]->shape;
        }
    }
    IrInstr **instrs = total > 0 ? ARENA_ARRAY(m->arena, IrInstr *, (size_t)total) : NULL;
    IrInstr **pslots = ARENA_ARRAY(m->arena, IrInstr *, (size_t)n_inputs + 1);
    IrShape *root_shape = ir_shape_new_tuple(m->arena, n_outs, out_shapes);
    IrInstr *root = instrs && pslots && root_shape
                        ? xmust(ir_instr_new(m, IR_OP_TUPLE, ir_unique_name(c, "local.outputs"), root_shape, n_outs, outputs))
                        : NULL;
    bool ok = root != NULL && total > 0;
    for (int j = 0; j < n_outs && ok; j++)
        ok = outputs[j] != NULL;
    if (ok) {
        int n = 0;
        for (int k = 0; k < n_inputs; k++)
            instrs[n++] = pslots[k] = params[k];
        for (int i = 0; i < c->n_instrs; i++) {
            if (keep[c->instrs[i]->id])
                instrs[n++] = c->instrs[i];
            else
                c->instrs[i]->dead = true;
        }
        root->parent = c;
        instrs[n++] = root;
        c->instrs = instrs;
        c->n_instrs = c->cap_instrs = n;
        c->params = pslots;
        c->n_params = n_inputs;
        c->root = root;
        c->root_marked = true;
        c->has_signature = true;
        for (int i = 0; i < m->n_computations; i++)
            m->computations[i]->is_entry = false;
        c->is_entry = true;
        m->entry = c;
        keep_reachable(m, c);
        ir_module_drop_entry_layout(m);
        Error verr = { 0 };
        if (!ir_verify_module(m, &verr))
            ok = error_set(err, ERR_INTERNAL, verr.loc, "--local: a region of %s does not verify: %s",
                           orig->name, verr.msg);
    } else {
        error_set(err, ERR_INTERNAL, orig->loc, "--local: cannot build a region of %s", orig->name);
    }
    free(vn_of);
    free(keep);
    free(params);
    free(outputs);
    free(out_shapes);
    if (!ok) {
        ir_module_free(m);
        return NULL;
    }
    return m;
}

/* ------------------------------------------------------------------ */
/* All regions of a pair                                                */

/* "a, b, c (+4)": up to three names of the side's region, collectives first. */
static void describe_side(const Side *side, char *out, size_t n)
{
    size_t len = 0;
    int shown = 0;
    out[0] = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < side->n_members && shown < 3; i++) {
            const IrInstr *x = side->members[i];
            bool coll = (ir_op_info[x->op].flags & OPF_COLLECTIVE) != 0;
            if ((pass == 0) != coll || x->op == IR_OP_PARAMETER)
                continue;
            len += (size_t)snprintf(out + len, len < n ? n - len : 0, "%s%s", shown ? ", " : "", x->name);
            shown++;
        }
    if (side->n_members > shown && len < n)
        snprintf(out + len, n - len, " (+%d)", side->n_members - shown);
}

/* A side that computes nothing (its outputs are parameters) by the names
 * of its outputs: "(p, q)". */
static void describe_inputs(const CheckValuePair *outs, int n_outs, int s, char *out, size_t n)
{
    if (out[0])
        return;
    size_t len = (size_t)snprintf(out, n, "(");
    for (int j = 0; j < n_outs && j < 3 && len < n; j++)
        len += (size_t)snprintf(out + len, n - len, "%s%s", j ? ", " : "", outs[j].x[s]->name);
    if (len < n)
        snprintf(out + len, n - len, "%s)", n_outs > 3 ? ", ..." : "");
}

/* What decides whether one replica group can stand for all: every
 * collective of both sides on the same groups, all of one size, and no
 * device id read. */
static void classify(CheckRegion *r)
{
    const IrReplicaGroups *first = NULL;
    int first_mode = 0;
    r->group_size = 0;
    bool same = true;
    for (int s = 0; s < 2; s++) {
        const IrModule *m = s ? r->after : r->before;
        for (int c = 0; c < m->n_computations; c++)
            for (int i = 0; i < m->computations[c]->n_instrs; i++) {
                const IrInstr *x = m->computations[c]->instrs[i];
                if (x->op == IR_OP_REPLICA_ID || x->op == IR_OP_PARTITION_ID)
                    r->device_ids = true;
                if (x->op == IR_OP_SEND || x->op == IR_OP_RECV || x->op == IR_OP_SEND_DONE || x->op == IR_OP_RECV_DONE)
                    r->point_to_point = true;
                if (!(ir_op_info[x->op].flags & OPF_COLLECTIVE))
                    continue;
                const IrReplicaGroups *g = &x->info->replica_groups;
                int mode = 2 * x->ints[IR_INT_CHANNEL_ID].present + x->info->bools[IR_BOOL_USE_GLOBAL_DEVICE_IDS];
                if (!first) {
                    first = g;
                    first_mode = mode;
                } else if (!ir_replica_groups_equal(first, g) || mode != first_mode) {
                    same = false;
                }
                for (int k = 0; k < g->n_groups; k++)
                    if (g->group_sizes[k] != g->group_sizes[0])
                        same = false;
                if (g->n_groups == 0)
                    same = false;       /* {}: every device */
            }
    }
    /* The groups must name devices themselves (flattened ids, or replicas
     * of a module of one partition, or partitions of one replica) and
     * cover every device: then each group is one independent copy. */
    const IrModule *m = r->before;
    int64_t R = m->replica_count.present ? m->replica_count.v : 1, P = m->num_partitions.present ? m->num_partitions.v : 1;
    bool ids_are_devices = (first_mode & 1) || (first_mode == 0 && P == 1) || (first_mode == 2 && R == 1);
    int devices = check_module_devices(m, 0);
    if (first && same && !r->device_ids && first->n_groups > 0 && ids_are_devices &&
        (int64_t)first->n_groups * first->group_sizes[0] == devices)
        r->group_size = first->group_sizes[0];
}

int check_module_devices(const IrModule *m, int world)
{
    if (m->replica_count.present || m->num_partitions.present)
        return (int)((m->replica_count.present ? m->replica_count.v : 1) *
                     (m->num_partitions.present ? m->num_partitions.v : 1));
    int64_t max = -1;
    for (int c = 0; c < m->n_computations; c++)
        for (int i = 0; i < m->computations[c]->n_instrs; i++) {
            const IrReplicaGroups *g = &m->computations[c]->instrs[i]->info->replica_groups;
            for (int k = 0; k < g->n_groups; k++)
                for (int j = 0; j < g->group_sizes[k]; j++)
                    if (g->groups[k][j] > max)
                        max = g->groups[k][j];
        }
    return max >= 0 ? (int)max + 1 : world;
}

typedef struct Finder {
    CheckNumbering nb;
    CheckCompPair *queue;
    int n_queue, cap_queue;
    CheckRegion *regions;
    int n_regions, cap_regions;
    int *before_of;         /* check_map_pair's, or NULL */
} Finder;

static bool find_in_pair(Finder *f, const CheckCompPair *pair, Error *err)
{
    const IrComputation *cb = pair->c[0], *ca = pair->c[1];
    CheckAnalysis an;
    check_analysis_init(&an, &f->nb, pair);
    /* One walk from the roots finds every output pair (a second walk would
     * skip the pairs the first one matched, and lose the output pairs
     * behind them); matches from the leaves down then only decide where
     * the regions stop, repeated while they find more. */
    check_correspond(&an);
    for (int round = 0; round < 64 && check_propagate(&an); round++)
        ;
    check_index_keys(&an);
    for (int i = 0; f->before_of && i < ca->n_instrs; i++) {
        int k = an.key[1][ca->instrs[i]->id];
        const IrInstr *b = k ? an.by_key[0][k - 1] : NULL;
        if (b)
            f->before_of[ca->instrs[i]->id] = b->id + 1;
    }
    Grouping g = { { xcalloc((size_t)f->nb.m[0]->next_instr_id + 1, sizeof(int)),
                     xcalloc((size_t)f->nb.m[1]->next_instr_id + 1, sizeof(int)) },
                   xcalloc((size_t)an.n_outs + 1, sizeof(int)) };
    for (int p = 0; p < an.n_outs; p++)
        g.parent[p] = p;
    for (int p = 0; p < an.n_outs; p++)
        for (int s = 0; s < 2; s++)
            claim(&an, &g, s, p, an.outs[p].x[s]);
    bool ok = true;
    CheckValuePair *outs = xcalloc((size_t)an.n_outs + 1, sizeof *outs);
    for (int root = 0; root < an.n_outs && ok; root++) {
        if (find_root(g.parent, root) != root)
            continue;
        int n_outs = 0;
        for (int p = 0; p < an.n_outs; p++)
            if (find_root(g.parent, p) == root)
                outs[n_outs++] = an.outs[p];
        Side side[2];
        for (int s = 0; s < 2; s++)
            collect_side(&an, &g, s, root, outs, n_outs, &side[s]);
        int *inputs = xcalloc((size_t)(side[0].n_inputs + side[1].n_inputs) + 1, sizeof *inputs), n_inputs = 0;
        for (int s = 0; s < 2; s++)
            for (int k = 0; k < side[s].n_inputs; k++) {
                bool dup = false;
                for (int j = 0; j < n_inputs && !dup; j++)
                    dup = inputs[j] == side[s].inputs[k];
                if (!dup)
                    inputs[n_inputs++] = side[s].inputs[k];
            }
        qsort(inputs, (size_t)n_inputs, sizeof *inputs, cmp_int);
        if (f->n_regions == f->cap_regions) {
            f->cap_regions = f->cap_regions ? 2 * f->cap_regions : 8;
            f->regions = xrealloc(f->regions, (size_t)f->cap_regions * sizeof *f->regions);
        }
        CheckRegion *r = &f->regions[f->n_regions];
        memset(r, 0, sizeof *r);
        r->before = region_module(&an, 0, &side[0], inputs, n_inputs, outs, n_outs, err);
        r->after = r->before ? region_module(&an, 1, &side[1], inputs, n_inputs, outs, n_outs, err) : NULL;
        ok = r->after != NULL;
        if (ok) {
            snprintf(r->where, sizeof r->where, "%s", cb->name);
            if (strcmp(cb->name, ca->name) != 0)
                snprintf(r->where, sizeof r->where, "%s / %s", cb->name, ca->name);
            char db[200], da[200];
            describe_side(&side[0], db, sizeof db);
            describe_side(&side[1], da, sizeof da);
            describe_inputs(outs, n_outs, 0, db, sizeof db);
            describe_inputs(outs, n_outs, 1, da, sizeof da);
            snprintf(r->what, sizeof r->what, "%s -> %s", db, da);
            r->instrs[0] = side[0].n_members;
            r->instrs[1] = side[1].n_members;
            for (int s = 0; s < 2; s++) {
                r->comp[s] = an.c[s];
                r->members[s] = xcalloc((size_t)side[s].n_members + 1, sizeof(int));
                for (int i = 0; i < side[s].n_members; i++) {
                    const IrInstr *x = side[s].members[i];
                    int o = g.owner[s][x->id];
                    if (o && find_root(g.parent, o - 1) == root)
                        r->members[s][r->n_members[s]++] = x->id;
                }
                r->outputs[s] = xcalloc((size_t)n_outs + 1, sizeof(int));
                for (int j = 0; j < n_outs; j++)
                    r->outputs[s][j] = outs[j].x[s]->id;
            }
            r->n_inputs = n_inputs;
            r->n_outputs = n_outs;
            classify(r);
            f->n_regions++;
        } else {
            ir_module_free(r->before);
        }
        for (int s = 0; s < 2; s++) {
            free(side[s].members);
            free(side[s].inputs);
        }
        free(inputs);
    }
    for (int k = 0; k < an.n_nested && ok; k++) {
        bool dup = false;
        for (int j = 0; j < f->n_queue && !dup; j++)
            dup = f->queue[j].c[0] == an.nested[k].c[0] && f->queue[j].c[1] == an.nested[k].c[1];
        if (dup)
            continue;
        if (f->n_queue == f->cap_queue) {
            f->cap_queue = f->cap_queue ? 2 * f->cap_queue : 8;
            f->queue = xrealloc(f->queue, (size_t)f->cap_queue * sizeof *f->queue);
        }
        f->queue[f->n_queue++] = an.nested[k];
    }
    free(outs);
    free(g.owner[0]);
    free(g.owner[1]);
    free(g.parent);
    check_analysis_free(&an);
    return ok;
}

static bool find_regions(const IrModule *before, const IrModule *after, int *before_of, CheckRegion **out,
                         int *n_out, Error *err)
{
    Finder f = { .nb = { .arena = arena_new(1 << 20), .m = { before, after } }, .before_of = before_of };
    f.nb.keys = ir_namemap_new(f.nb.arena);
    StrBuf key;
    strbuf_init(&key);
    check_number_module(&f.nb, 0, &key);
    check_number_module(&f.nb, 1, &key);
    strbuf_free(&key);
    f.queue = xcalloc(8, sizeof *f.queue);
    f.cap_queue = 8;
    f.queue[f.n_queue++] = (CheckCompPair){ { before->entry, after->entry }, 0, { 0 }, { 0 }, { 0 } };
    bool ok = true;
    for (int q = 0; q < f.n_queue && ok; q++)
        ok = find_in_pair(&f, &f.queue[q], err);
    free(f.queue);
    for (int s = 0; s < 2; s++) {
        free(f.nb.vn[s]);
        free(f.nb.cvn[s]);
    }
    arena_free(f.nb.arena);
    if (!ok) {
        check_regions_free(f.regions, f.n_regions);
        return false;
    }
    *out = f.regions;
    *n_out = f.n_regions;
    return true;
}

/* Does the region hold one of the pair's sites (a reduction whose
 * accumulation type the rewrite changed)? */
bool check_region_holds_site(const CheckRegion *r, const CheckSite *sites, int n_sites)
{
    for (int i = 0; i < n_sites; i++) {
        char name[96];
        snprintf(name, sizeof name, "%s", sites[i].before_name);
        char *bracket = strchr(name, '[');      /* "name[i]": operand i of a variadic reduction */
        if (bracket)
            *bracket = 0;
        for (int c = 0; c < r->before->n_computations; c++)
            if (ir_computation_find(r->before->computations[c], name))
                return true;
    }
    return false;
}

bool check_find_regions(const IrModule *before, const IrModule *after, CheckRegion **out, int *n_out, Error *err)
{
    return find_regions(before, after, NULL, out, n_out, err);
}

void check_regions_free(CheckRegion *r, int n)
{
    for (int i = 0; i < n; i++) {
        ir_module_free(r[i].before);
        ir_module_free(r[i].after);
        for (int s = 0; s < 2; s++) {
            free(r[i].members[s]);
            free(r[i].outputs[s]);
        }
    }
    free(r);
}

bool check_map_pair(const IrModule *before, const IrModule *after, CheckPairMap *map, Error *err)
{
    memset(map, 0, sizeof *map);
    map->before_of = xcalloc((size_t)after->next_instr_id + 1, sizeof *map->before_of);
    if (!find_regions(before, after, map->before_of, &map->regions, &map->n_regions, err)) {
        free(map->before_of);
        map->before_of = NULL;
        return false;
    }
    for (int s = 0; s < 2; s++)
        map->region_of[s] = xcalloc((size_t)(s ? after : before)->next_instr_id + 1, sizeof(int));
    for (int r = 0; r < map->n_regions; r++)
        for (int s = 0; s < 2; s++)
            for (int i = 0; i < map->regions[r].n_members[s]; i++)
                map->region_of[s][map->regions[r].members[s][i]] = r + 1;
    return true;
}

void check_pair_map_free(CheckPairMap *map)
{
    check_regions_free(map->regions, map->n_regions);
    free(map->before_of);
    free(map->region_of[0]);
    free(map->region_of[1]);
    memset(map, 0, sizeof *map);
}

bool check_region_one_group(CheckRegion *r, Error *err)
{
    int g = r->group_size;
    if (g < 2)
        return error_set(err, ERR_INTERNAL, (IrLoc){ 0 }, "--local: region %s has no group to stand for all", r->what);
    for (int s = 0; s < 2; s++) {
        IrModule *m = s ? r->after : r->before;
        int64_t *ids = ARENA_ARRAY(m->arena, int64_t, (size_t)g);
        int64_t **groups = ARENA_ARRAY(m->arena, int64_t *, 1);
        int *sizes = ARENA_ARRAY(m->arena, int, 1);
        if (!ids || !groups || !sizes)
            return error_set(err, ERR_NOMEM, (IrLoc){ 0 }, "out of memory");
        for (int k = 0; k < g; k++)
            ids[k] = k;
        groups[0] = ids;
        sizes[0] = g;
        m->replica_count = (IrOptInt){ true, g };
        m->num_partitions = (IrOptInt){ false, 0 };
        for (int c = 0; c < m->n_computations; c++)
            for (int i = 0; i < m->computations[c]->n_instrs; i++) {
                IrInstr *x = m->computations[c]->instrs[i];
                if (!(ir_op_info[x->op].flags & OPF_COLLECTIVE))
                    continue;
                /* One group of every device, as replicas: device k plays
                 * the k-th member of each original group. */
                x->info->replica_groups = (IrReplicaGroups){ .form = IR_GROUPS_EXPLICIT, .n_groups = 1,
                                                              .group_sizes = sizes, .groups = groups };
                ir_set_channel_id(m, x, -1);
                x->info->bools[IR_BOOL_USE_GLOBAL_DEVICE_IDS] = false;
            }
        ir_module_drop_entry_layout(m);
        Error verr = { 0 };
        if (!ir_verify_module(m, &verr))
            return error_set(err, ERR_INTERNAL, verr.loc, "--local: region %s on one group does not verify: %s",
                             r->what, verr.msg);
    }
    return true;
}
