/* model.c: the combiners' engine (spec/passes.md 2), written from the spec
 * and the project's documented reading of it (the header comments of
 * src/passes/combine*.c), never by asking the pass: which site collectives
 * it combines together, in each mode.
 *
 * Gate: either threshold <= 0, or a collective of the pass's opcode with
 * constrain_layout=true anywhere in the module: nothing is combined.
 * Otherwise every computation holding a site (the builder makes no fusion
 * bodies), but with --neuron-fsdp the AG and RS combiners skip while
 * bodies and conditions.  In each, the spec's post order; one open group
 * per key; before a member joins, its group closes when the member
 * depends on one of the group, holds max_count members, or would pass
 * max_bytes (inclusive).  A member whose own size passes max_bytes takes
 * no part, nor does one of unknown size (an unbounded dim: no key, the
 * project's ruling, docs/fuzz-coverage.md).  Groups of two or more are combined.
 *
 * "Depends" is taken in the graph where every group, open or closed, is
 * already one node (the reading combine.c documents), not as plain
 * reachability, which is what the spec's sentence says: with a1, b1 of two
 * keys, b2 reading a1 and a2 reading b1, plain reachability closes nothing
 * and forms {a1, a2} and {b1, b2}, two ops that read each other, a cycle.
 * hlo-fuzz's tangle sites showed the two rules part there; the contracted
 * one is the only one that leaves a valid module. */
#include "fuzz_internal.h"

#include <stdlib.h>
#include <string.h>

struct Group {
    int members[FUZZ_MAX_SITES];    /* site indices, in the order they joined */
    int n;
    int64_t bytes;
    int tag;                        /* its node in the contracted graph */
};

typedef struct Group Group;

typedef struct Model {
    FuzzGen *g;
    int number;
    const PassOptions *opt;
    PassMode mode;
    Group open[FUZZ_MAX_SITES];     /* at most one per key */
    int n_open;
    int next_id;
    /* The contracted graph: every member of a group (open, or closed with
     * two or more) carries its group's tag; the members of each tag. */
    int *tag_of;                    /* by instruction, -1: in no group */
    int tag_members[2 * FUZZ_MAX_SITES + 2][FUZZ_MAX_SITES];
    int tag_n[2 * FUZZ_MAX_SITES + 2];
    int n_tags;
    bool *seen;                     /* by instruction, for one query */
} Model;

static IrOpcode pass_opcode(int number)
{
    return number == 77 ? IR_OP_ALL_GATHER : number == 78 ? IR_OP_REDUCE_SCATTER : IR_OP_ALL_REDUCE;
}

static bool is_member(const FuzzSite *s, int number)
{
    return s->pass == number && s->is_coll && s->coll.op == pass_opcode(number);
}

/* A control edge either way: the spec's table names predecessors; the
 * project also refuses a member that is one (XLA's HasControlDependencies,
 * which the seed's key calls, counts both, and hlo-reference.md 7.4 lets a
 * combiner refuse members that carry control edges rather than move them). */
static bool has_control_edge(const FuzzBuild *b, int v)
{
    if (b->instrs[v].ctrl >= 0)
        return true;
    for (int i = 0; i < b->n_instrs; i++)
        if (b->instrs[i].ctrl == v)
            return true;
    return false;
}

/* Does the site get a key?  AR and RS only with a trivial reducer. */
static bool has_key(const Model *md, const FuzzSite *s)
{
    return is_member(s, md->number) && !has_control_edge(md->g->b, s->instr) &&
           (md->number == 77 || s->coll.reducer != NULL);
}

/* The key tables of spec 2, field by field.  AR/RS: the reducer's root
 * type is the element type here, and AR's "dtype=" string repeats it.  AG
 * also keys channel_id presence in sound mode, and in faithful mode with
 * more than one partition, where mixing it changes a member's group size
 * and the combined op would not verify (combine_all_gather.c). */
static bool same_key(const Model *md, const FuzzColl *a, const FuzzColl *b)
{
    bool by_dim = md->opt->combine_by_dim;
    if (a->type != b->type || a->global != b->global || strcmp(a->groups, b->groups) != 0)
        return false;
    if (md->number == 77)
        return a->constrain == b->constrain && (!by_dim || a->dim == b->dim) &&
               ((md->mode == PASS_MODE_FAITHFUL && fuzz_build_partitions(md->g->b) == 1) ||
                a->channel == b->channel);
    if (a->channel != b->channel || strcmp(a->reducer, b->reducer) != 0)
        return false;
    return md->number == 79 || !by_dim || a->dim == b->dim;
}

/* The dimension a combined all-gather / reduce-scatter works along (spec
 * 2): the members' most frequent one, ties to the smaller, 0 when that is
 * not a dimension of the lowest-rank member. */
static int group_dimension(const Model *md, const Group *grp)
{
    int count[FUZZ_MAX_RANK] = { 0 }, min_rank = FUZZ_MAX_RANK, best = 0;
    for (int i = 0; i < grp->n; i++) {
        const FuzzColl *c = &md->g->sites[grp->members[i]].coll;
        if (c->dim >= 0 && c->dim < FUZZ_MAX_RANK)
            count[c->dim]++;
        if (c->rank < min_rank)
            min_rank = c->rank;
    }
    for (int d = 1; d < FUZZ_MAX_RANK; d++)
        if (count[d] > count[best])
            best = d;
    return best < min_rank ? best : 0;
}

static void close_group(Model *md, int k)
{
    Group *grp = &md->open[k];
    if (grp->n < 2)                     /* left alone: no longer one node with anything */
        for (int i = 0; i < grp->n; i++)
            md->tag_of[md->g->sites[grp->members[i]].instr] = -1;
    if (grp->n >= 2) {
        int id = md->next_id++, dim = md->number == 79 ? -1 : group_dimension(md, grp);
        for (int i = 0; i < grp->n; i++) {
            FuzzSite *s = &md->g->sites[grp->members[i]];
            s->group[md->mode] = id;
            s->group_dim[md->mode] = dim;
            s->expect[md->mode] = FUZZ_EXACT;
        }
    }
    md->open[k] = md->open[--md->n_open];
}

/* Does v reach a member of tag, where reaching any member of a group
 * reaches all of them (they are one node)? */
static bool reaches_tag(Model *md, int v, int tag)
{
    if (md->seen[v])
        return false;
    md->seen[v] = true;
    int t = md->tag_of[v];
    if (t == tag)
        return true;
    const BInstr *x = &md->g->b->instrs[v];
    if (x->ctrl >= 0 && reaches_tag(md, x->ctrl, tag))
        return true;
    for (int i = 0; i < x->n_ops; i++)
        if (reaches_tag(md, x->ops[i], tag))
            return true;
    for (int i = 0; t >= 0 && i < md->tag_n[t]; i++)
        if (reaches_tag(md, md->tag_members[t][i], tag))
            return true;
    return false;
}

static bool depends_on_group(Model *md, int v, const Group *grp)
{
    memset(md->seen, 0, (size_t)md->g->b->n_instrs * sizeof *md->seen);
    const BInstr *x = &md->g->b->instrs[v];     /* v itself is in no group yet */
    md->seen[v] = true;
    if (x->ctrl >= 0 && reaches_tag(md, x->ctrl, grp->tag))
        return true;
    for (int i = 0; i < x->n_ops; i++)
        if (reaches_tag(md, x->ops[i], grp->tag))
            return true;
    return false;
}

static Group *open_group(Model *md, const FuzzColl *c)
{
    for (int k = 0; k < md->n_open; k++)
        if (same_key(md, &md->g->sites[md->open[k].members[0]].coll, c))
            return &md->open[k];
    return NULL;
}

/* (a) reachability, (b) count, (c) bytes: close before the site joins. */
static bool must_close(Model *md, const Group *grp, const FuzzSite *s)
{
    return depends_on_group(md, s->instr, grp) || grp->n >= md->opt->combine_threshold_count ||
           s->coll.bytes > md->opt->combine_threshold_bytes - grp->bytes;
}

static void join(Model *md, int site)
{
    const FuzzSite *s = &md->g->sites[site];
    Group *grp = open_group(md, &s->coll);
    if (grp && must_close(md, grp, s)) {
        close_group(md, (int)(grp - md->open));
        grp = NULL;
    }
    if (!grp) {
        grp = &md->open[md->n_open++];
        *grp = (Group){ .n = 0, .tag = md->n_tags++ };
        md->tag_n[grp->tag] = 0;
    }
    grp->members[grp->n++] = site;
    grp->bytes += s->coll.bytes;
    md->tag_of[s->instr] = grp->tag;
    md->tag_members[grp->tag][md->tag_n[grp->tag]++] = s->instr;
}

/* The engine on one computation. */
static void walk(Model *md, int comp, const int *site_of)
{
    FuzzBuild *b = md->g->b;
    int *order = xmalloc((size_t)b->n_instrs * sizeof *order);
    /* The walk order (hlo-reference.md 7.3): a scheduled module's schedule,
     * else XLA's post order. */
    int n = b->scheduled ? fuzz_comp_text_order(b, comp, order) : fuzz_comp_post_order(b, comp, order);
    for (int i = 0; i < n; i++) {
        int k = site_of[order[i]];
        if (k >= 0 && has_key(md, &md->g->sites[k]) && md->g->sites[k].coll.bytes >= 0 &&
            md->g->sites[k].coll.bytes <= md->opt->combine_threshold_bytes)
            join(md, k);
    }
    while (md->n_open > 0)
        close_group(md, md->n_open - 1);
    free(order);
}

/* The driver's gate (spec 2 "Driver gate"). */
static bool gate_open(const FuzzGen *g, int number, const PassOptions *opt)
{
    if (opt->combine_threshold_bytes <= 0 || opt->combine_threshold_count <= 0)
        return false;
    for (int k = 0; k < g->n_sites; k++)
        if (is_member(&g->sites[k], number) && g->sites[k].coll.constrain)
            return false;
    return true;
}

static bool visits(const Model *md, int comp)
{
    return md->number == 79 || !md->opt->neuron_fsdp || !fuzz_comp_is_while_part(md->g->b, comp);
}

void fuzz_model_combiner(FuzzGen *g, int number, const PassOptions *opt)
{
    for (int k = 0; k < g->n_sites; k++) {
        FuzzSite *s = &g->sites[k];
        if (!is_member(s, number))
            continue;
        s->group[0] = s->group[1] = -1;
        s->group_dim[0] = s->group_dim[1] = -1;
        s->expect[0] = s->expect[1] = FUZZ_KEEP;
        s->must_differ[0] = s->must_differ[1] = false;
    }
    if (!gate_open(g, number, opt))
        return;
    FuzzBuild *b = g->b;
    fuzz_comp_root(b, b->entry);        /* made on first request: before n_instrs is read */
    int *site_of = xmalloc((size_t)b->n_instrs * sizeof *site_of);
    for (int v = 0; v < b->n_instrs; v++)
        site_of[v] = -1;
    for (int k = 0; k < g->n_sites; k++)
        if (is_member(&g->sites[k], number))
            site_of[g->sites[k].instr] = k;
    bool *done = xcalloc((size_t)b->n_comps, sizeof *done);
    Model md = { .g = g, .number = number, .opt = opt };
    md.tag_of = xmalloc((size_t)b->n_instrs * sizeof *md.tag_of);
    md.seen = xmalloc((size_t)b->n_instrs * sizeof *md.seen);
    for (int mode = 0; mode < 2; mode++) {
        md.mode = (PassMode)mode;
        md.n_tags = 0;
        for (int v = 0; v < b->n_instrs; v++)
            md.tag_of[v] = -1;
        memset(done, 0, (size_t)b->n_comps * sizeof *done);
        for (int k = 0; k < g->n_sites; k++) {
            int comp = is_member(&g->sites[k], number) ? fuzz_instr_comp(b, g->sites[k].instr) : -1;
            if (comp < 0 || done[comp] || !visits(&md, comp))
                continue;
            done[comp] = true;
            walk(&md, comp, site_of);
        }
    }
    free(md.tag_of);
    free(md.seen);
    free(done);
    free(site_of);
}
