/* shrink_ranks.c: --shrink's rank cut.  A shrunk pair that still has
 * collectives needs every rank its failing rank hears from, and no other:
 * the failing rank, closed under every collective's replica groups (a rank
 * in a group with one already needed is needed).  When that is fewer ranks
 * than the world, the pair is rewritten for those ranks alone, renumbered
 * in order: groups that lie outside dropped, the others' ids mapped, the
 * header's replica count set to how many are left.  Only modules whose
 * device ids are the ranks (one partition), with explicit or iota groups
 * and no replica-id, partition-id or point-to-point op, are cut; the caller
 * re-checks the cut pair on those ranks' inputs and keeps it when it still
 * differs. */
#include "check.h"
#include "shrink_internal.h"

#include <stdlib.h>
#include <string.h>

/* Whether m's rank dependence is all in group collectives the cut can
 * follow. */
static bool cuttable(const IrModule *m)
{
    if (m->num_partitions.present && m->num_partitions.v != 1)
        return false;
    for (int c = 0; c < m->n_computations; c++)
        for (int i = 0; i < m->computations[c]->n_instrs; i++) {
            const IrInstr *x = m->computations[c]->instrs[i];
            IrOpcode op = x->op;
            if (op == IR_OP_REPLICA_ID || op == IR_OP_PARTITION_ID || op == IR_OP_SEND || op == IR_OP_RECV ||
                op == IR_OP_COLLECTIVE_PERMUTE || op == IR_OP_COLLECTIVE_PERMUTE_START || op == IR_OP_ASYNC_START)
                return false;
            if ((ir_op_info[op].flags & OPF_COLLECTIVE) && x->info->replica_groups.n_groups == 0)
                return false;
        }
    return true;
}

/* Adds to need every rank in a group of m's that holds a needed one;
 * true when some rank was added. */
static bool close_over(const IrModule *m, bool *need, int world)
{
    bool grew = false;
    for (int c = 0; c < m->n_computations; c++)
        for (int i = 0; i < m->computations[c]->n_instrs; i++) {
            const IrReplicaGroups *g = &m->computations[c]->instrs[i]->info->replica_groups;
            if (!(ir_op_info[m->computations[c]->instrs[i]->op].flags & OPF_COLLECTIVE))
                continue;
            for (int k = 0; k < g->n_groups; k++) {
                bool hit = false;
                for (int j = 0; j < g->group_sizes[k]; j++)
                    hit |= g->groups[k][j] >= 0 && g->groups[k][j] < world && need[g->groups[k][j]];
                for (int j = 0; hit && j < g->group_sizes[k]; j++)
                    if (g->groups[k][j] >= 0 && g->groups[k][j] < world && !need[g->groups[k][j]])
                        grew = need[g->groups[k][j]] = true;
            }
        }
    return grew;
}

int check_rank_subset(const IrModule *before, const IrModule *after, int world, int rank, int *ranks)
{
    if (world <= 1 || rank < 0 || rank >= world || !cuttable(before) || !cuttable(after))
        return 0;
    bool *need = xcalloc((size_t)world, sizeof *need);
    need[rank] = true;
    while (close_over(before, need, world) | close_over(after, need, world))
        ;
    int n = 0;
    for (int r = 0; r < world; r++)
        if (need[r])
            ranks[n++] = r;
    free(need);
    return n < world ? n : 0;
}

/* g with the groups inside ranks[] kept, their ids renumbered to positions
 * in ranks[]. */
static void renumber_groups(IrModule *m, IrReplicaGroups *g, const int *ranks, int n)
{
    int *at = xcalloc((size_t)ranks[n - 1] + 1, sizeof *at);
    for (int i = 0; i < n; i++)
        at[ranks[i]] = i + 1;
    int kept = 0;
    for (int k = 0; k < g->n_groups; k++) {
        int64_t first = g->groups[k][0];
        if (first > ranks[n - 1] || !at[first])
            continue;
        int64_t *ids = xmust(arena_alloc(m->arena, (size_t)g->group_sizes[k] * sizeof *ids + 1));
        for (int j = 0; j < g->group_sizes[k]; j++)
            ids[j] = at[g->groups[k][j]] - 1;
        g->group_sizes[kept] = g->group_sizes[k];
        g->groups[kept++] = ids;
    }
    g->n_groups = kept;
    g->form = IR_GROUPS_EXPLICIT;
    free(at);
}

IrModule *check_renumber_ranks(const IrModule *m, const int *ranks, int n, Error *err)
{
    IrModule *c = ir_module_copy(m, err);
    if (!c)
        return NULL;
    for (int k = 0; k < c->n_computations; k++)
        for (int i = 0; i < c->computations[k]->n_instrs; i++) {
            IrInstr *x = c->computations[k]->instrs[i];
            if (ir_op_info[x->op].flags & OPF_COLLECTIVE)
                renumber_groups(c, &x->info->replica_groups, ranks, n);
        }
    c->replica_count = (IrOptInt){ true, n };
    if (c->num_partitions.present)
        c->num_partitions = (IrOptInt){ true, 1 };
    return check_shrink_fresh(c, err);
}
