/* groups.c: the participants of a collective, as XLA defines them
 * (hlo-reference.md 6.3).  Device (r, p) has flattened id r*P + p.  The mode
 * comes from channel_id and use_global_device_ids; the ids in replica_groups
 * are replica ids, partition ids or flattened ids by mode; the order of a
 * group as listed is the order of its participants. */
#include "coll_internal.h"

#include <stdlib.h>
#include <string.h>

static bool has_global_flag(IrOpcode op)
{
    switch ((int)op) {
    case IR_OP_ALL_TO_ALL: case IR_OP_RAGGED_ALL_TO_ALL: case IR_OP_COLLECTIVE_PERMUTE:
    case IR_OP_COLLECTIVE_PERMUTE_START: case IR_OP_COLLECTIVE_BROADCAST:
        return false;
    default:
        return true;
    }
}

CollMode coll_mode(const IrInstr *instr)
{
    bool channel = instr->ints[IR_INT_CHANNEL_ID].present;
    bool global = instr->info->bools[IR_BOOL_USE_GLOBAL_DEVICE_IDS];
    if (!channel)
        return COLL_CROSS_REPLICA;
    if (!has_global_flag(instr->op))
        return COLL_CROSS_PARTITION;
    return global ? COLL_FLATTENED : COLL_CROSS_REPLICA_AND_PARTITION;
}

/* The listed groups, or the one implicit group of all ids 0..n-1. */
typedef struct Listed { int n_groups; const int *sizes; int64_t *const *ids; int64_t *all; int one; } Listed;

static void listed_groups(const IrReplicaGroups *g, int n_all, Listed *l)
{
    memset(l, 0, sizeof *l);
    if (g->n_groups > 0) {
        l->n_groups = g->n_groups;
        l->sizes = g->group_sizes;
        l->ids = g->groups;
        return;
    }
    l->all = xcalloc((size_t)(n_all ? n_all : 1), sizeof(int64_t));
    for (int i = 0; i < n_all; i++)
        l->all[i] = i;
    l->one = n_all;
    l->n_groups = 1;
    l->sizes = &l->one;
    l->ids = &l->all;
}

/* Appends the flattened participants of listed group k under mode. */
static int participants(CollMode mode, const Listed *l, int k, int slice, int R, int P, int *out)
{
    int n = 0;
    for (int i = 0; i < l->sizes[k]; i++) {
        int64_t id = l->ids[k][i];
        switch (mode) {
        case COLL_CROSS_REPLICA: out[n++] = (int)(id * P + slice); break;
        case COLL_CROSS_PARTITION: out[n++] = (int)(slice * P + id); break;
        case COLL_CROSS_REPLICA_AND_PARTITION:
            for (int q = 0; q < P; q++)
                out[n++] = (int)(id * P + q);
            break;
        case COLL_FLATTENED: out[n++] = (int)id; break;
        }
    }
    (void)R;
    return n;
}

static bool ids_in_range(CollMode mode, const Listed *l, int R, int P, const IrInstr *instr, Error *err)
{
    int64_t limit = mode == COLL_CROSS_PARTITION ? P : mode == COLL_FLATTENED ? (int64_t)R * P : R;
    const char *kind = mode == COLL_CROSS_PARTITION ? "partition" : mode == COLL_FLATTENED ? "device" : "replica";
    for (int k = 0; k < l->n_groups; k++)
        for (int i = 0; i < l->sizes[k]; i++)
            if (l->ids[k][i] < 0 || l->ids[k][i] >= limit)
                return error_set(err, ERR_SHAPE, instr->info->loc,
                                 "%s: replica_groups name %s id %lld, but there are %lld %ss",
                                 ir_opcode_name(instr->op), kind, (long long)l->ids[k][i],
                                 (long long)limit, kind);
    return true;
}

/* Groups of different sizes: all-reduce folds each group on its own, and
 * collective-broadcast copies member 0's value; every other collective's
 * result shape depends on the group size. */
static bool allows_uneven(IrOpcode op)
{
    return op == IR_OP_ALL_REDUCE || op == IR_OP_ALL_REDUCE_START || op == IR_OP_COLLECTIVE_BROADCAST;
}

/* collective-broadcast may leave devices out of every group: they get zeros
 * (StableHLO's collective_broadcast). */
static bool allows_partial(IrOpcode op)
{
    return op == IR_OP_COLLECTIVE_BROADCAST;
}

static bool check_sizes(const Listed *l, const IrInstr *instr, Error *err)
{
    for (int k = 1; k < l->n_groups; k++)
        if (l->sizes[k] != l->sizes[0] && !allows_uneven(instr->op))
            return error_set(err, ERR_SHAPE, instr->info->loc,
                             "%s: replica groups of different sizes (%d and %d): its result shape depends on "
                             "the group size, so its groups must be the same size (only all-reduce and "
                             "collective-broadcast take groups of different sizes)",
                             ir_opcode_name(instr->op), l->sizes[0], l->sizes[k]);
    return true;
}

/* Every device at most once, and (but for collective-broadcast) at least once. */
static bool check_partition(const CollGroups *g, int world, const IrInstr *instr, Error *err)
{
    int *seen = xcalloc((size_t)world, sizeof *seen);
    bool ok = true;
    for (int i = 0; i < g->start[g->n_groups] && ok; i++) {
        int id = g->ids[i];
        if (seen[id]++)
            ok = error_set(err, ERR_SHAPE, instr->info->loc,
                           "%s: device %d appears in more than one replica group",
                           ir_opcode_name(instr->op), id);
    }
    for (int id = 0; id < world && ok && !allows_partial(instr->op); id++)
        if (!seen[id])
            ok = error_set(err, ERR_SHAPE, instr->info->loc,
                           "%s: replica groups do not cover device %d of %d",
                           ir_opcode_name(instr->op), id, world);
    free(seen);
    return ok;
}

/* Cross-replica groups repeat in every partition and cross-partition ones
 * in every replica; the other two modes are global already. */
static void expand(CollMode mode, const Listed *l, int R, int P, CollGroups *out)
{
    int slices = mode == COLL_CROSS_REPLICA ? P : mode == COLL_CROSS_PARTITION ? R : 1;
    int per_id = mode == COLL_CROSS_REPLICA_AND_PARTITION ? P : 1, total = 0;
    for (int k = 0; k < l->n_groups; k++)
        total += l->sizes[k] * per_id * slices;
    out->n_groups = l->n_groups * slices;
    out->start = xcalloc((size_t)out->n_groups + 1, sizeof *out->start);
    out->ids = xcalloc((size_t)(total > 0 ? total : 1), sizeof *out->ids);
    out->size = l->n_groups > 0 ? l->sizes[0] * per_id : 0;
    int n = 0, g = 0;
    for (int s = 0; s < slices; s++)
        for (int k = 0; k < l->n_groups; k++, g++) {
            out->start[g] = n;
            n += participants(mode, l, k, s, R, P, out->ids + n);
            int size = n - out->start[g];
            if (size != out->size)
                out->size = -1;
            if (size > out->max_size)
                out->max_size = size;
        }
    out->start[g] = n;
}

bool coll_expand_groups(const IrInstr *instr, int R, int P, CollGroups *out, Error *err)
{
    CollMode mode = coll_mode(instr);
    memset(out, 0, sizeof *out);
    if (!instr->ints[IR_INT_CHANNEL_ID].present && instr->info->bools[IR_BOOL_USE_GLOBAL_DEVICE_IDS])
        return error_set(err, ERR_SHAPE, instr->info->loc,
                         "%s: use_global_device_ids=true needs a channel_id", ir_opcode_name(instr->op));
    if (mode == COLL_FLATTENED && instr->info->replica_groups.n_groups == 0)
        return error_set(err, ERR_SHAPE, instr->info->loc,
                         "%s: empty replica_groups with use_global_device_ids=true", ir_opcode_name(instr->op));
    Listed l;
    listed_groups(&instr->info->replica_groups, mode == COLL_CROSS_PARTITION ? P : R, &l);
    bool ok = ids_in_range(mode, &l, R, P, instr, err) && check_sizes(&l, instr, err);
    if (ok) {
        expand(mode, &l, R, P, out);
        ok = check_partition(out, R * P, instr, err);
    }
    free(l.all);
    if (!ok)
        coll_groups_free(out);
    return ok;
}

void coll_groups_free(CollGroups *g)
{
    free(g->start);
    free(g->ids);
    g->start = NULL;
    g->ids = NULL;
}

bool coll_groups_equal(const CollGroups *a, const CollGroups *b)
{
    return a->n_groups == b->n_groups &&
           memcmp(a->start, b->start, ((size_t)a->n_groups + 1) * sizeof *a->start) == 0 &&
           memcmp(a->ids, b->ids, (size_t)a->start[a->n_groups] * sizeof *a->ids) == 0;
}

int coll_find(const CollGroups *g, int rank, int *position)
{
    for (int k = 0; k < g->n_groups; k++)
        for (int i = g->start[k]; i < g->start[k + 1]; i++)
            if (g->ids[i] == rank) {
                *position = i - g->start[k];
                return k;
            }
    *position = -1;
    return -1;
}

/* The largest group: all-reduce's groups may differ in size, and the
 * callers use the size as a bound on the terms of a fold. */
/* The groups' common size (-1 when they differ) and the largest; false
 * when they are invalid. */
static bool group_sizes(const IrInstr *instr, int replicas, int partitions, int *size, int *max_size)
{
    CollGroups g;
    Error err = { 0 };
    if (!coll_expand_groups(instr, replicas, partitions, &g, &err))
        return false;
    coll_groups_free(&g);
    *size = g.size;
    *max_size = g.max_size;
    return true;
}

int coll_group_size(const IrInstr *instr, int replicas, int partitions)
{
    int size, max_size;
    return group_sizes(instr, replicas, partitions, &size, &max_size) ? max_size : -1;
}

int coll_uniform_group_size(const IrInstr *instr, int replicas, int partitions)
{
    int size, max_size;
    return group_sizes(instr, replicas, partitions, &size, &max_size) ? size : -1;
}

static bool leaf_fits(const IrShape *in, const IrShape *out, int dim, int n, bool grow)
{
    if (in->rank == 0 && out->rank == 0 && in->type == out->type)
        return true;    /* a scalar token riding along: passes through (see all_gather.c) */
    if (out->type == IR_TYPE_TUPLE || in->rank != out->rank || dim < 0 || dim >= in->rank)
        return false;
    for (int d = 0; d < in->rank; d++) {
        int64_t want = d != dim ? in->dims[d] : grow ? in->dims[d] * n : in->dims[d] / n;
        if (out->dims[d] != want || (!grow && d == dim && in->dims[d] % n))
            return false;
    }
    return true;
}

bool coll_check_shapes(const IrInstr *instr, const IrShape *result, Value *const *args, int n_args, int dim,
                       int n, bool grow, Error *err)
{
    bool tuple = result->type == IR_TYPE_TUPLE;
    if (tuple && result->n_elements != n_args)
        return error_set(err, ERR_SHAPE, instr->info->loc, "%s: %d operands but a result of %d elements",
                         ir_opcode_name(instr->op), n_args, result->n_elements);
    for (int i = 0; i < n_args; i++) {
        const IrShape *out = tuple ? result->elements[i] : result, *in = args[i]->shape;
        if (leaf_fits(in, out, dim, n, grow))
            continue;
        char want[160];
        snprintf(want, sizeof want, "%s", ir_shape_str(in));
        return error_set(err, ERR_SHAPE, instr->info->loc,
                         "%s: with %d devices per group, operand %s %s dimension %d by %d, which does not give %s",
                         ir_opcode_name(instr->op), n, want, grow ? "grows" : "shrinks", dim, n, ir_shape_str(out));
    }
    return true;
}
