/* gen_common.c: what every site generator draws the same way: types,
 * placements, the groups and mode attributes of a collective, and the
 * all-gather built from them. */
#include "gen.h"

#include <stdio.h>
#include <string.h>

FuzzSite *fuzz_new_site(FuzzGen *g, int number)
{
    if (g->n_sites >= FUZZ_MAX_SITES)
        return NULL;
    FuzzSite *s = &g->sites[g->n_sites++];
    memset(s, 0, sizeof *s);
    s->pass = number;
    s->expect[0] = s->expect[1] = FUZZ_KEEP;
    s->group[0] = s->group[1] = -1;
    s->group_dim[0] = s->group_dim[1] = -1;
    s->comp = -1;
    return s;
}

FuzzSite *gen_begin_site(FuzzGen *g, int number)
{
    FuzzSite *s = fuzz_new_site(g, number);
    if (!s)
        return NULL;
    /* One flip site in twenty inside a fusion, where it must be kept
     * (gen_finish); the combiners' clusters are never placed there. */
    s->place = fuzz_chance(g->rng, 5) ? FUZZ_IN_FUSION : fuzz_draw_place(g);
    fuzz_site_begin(g->b, s->place, 1 + fuzz_below(g->rng, 2));
    return s;
}

FuzzPlace fuzz_draw_place(FuzzGen *g)
{
    if (g->huge)                        /* all in one computation: the passes' per-computation buffers grow */
        return FUZZ_IN_ENTRY;
    int k = fuzz_below(g->rng, 10);
    return k < 6 ? FUZZ_IN_ENTRY : k < 8 ? FUZZ_IN_WHILE : FUZZ_IN_CONDITIONAL;
}

IrElemType fuzz_draw_type(FuzzRng *r, bool floats_only)
{
    static const IrElemType floats[] = { IR_TYPE_F32, IR_TYPE_BF16, IR_TYPE_F16, IR_TYPE_F64 };
    static const IrElemType any[] = { IR_TYPE_F32, IR_TYPE_BF16, IR_TYPE_F16, IR_TYPE_F64, IR_TYPE_S32,
                                      IR_TYPE_S8, IR_TYPE_U8, IR_TYPE_U32, IR_TYPE_S64, IR_TYPE_PRED,
                                      IR_TYPE_F8E4M3FN, IR_TYPE_F8E5M2, IR_TYPE_S16, IR_TYPE_U16 };
    /* Drawn rarely: the sub-byte integers (one per byte in a buffer, which
     * the combiners' byte sizes must agree on), u64 and the other f8 kinds. */
    static const IrElemType rare[] = { IR_TYPE_S4, IR_TYPE_U4, IR_TYPE_S2, IR_TYPE_U2, IR_TYPE_U64,
                                       IR_TYPE_F8E4M3, IR_TYPE_F8E3M4, IR_TYPE_F8E5M2FNUZ, IR_TYPE_F8E4M3FNUZ,
                                       IR_TYPE_F8E4M3B11FNUZ };
    if (floats_only || fuzz_chance(r, 50))
        return floats[fuzz_below(r, 4)];
    if (fuzz_chance(r, 10))
        return rare[fuzz_below(r, (int)(sizeof rare / sizeof rare[0]))];
    return any[fuzz_below(r, (int)(sizeof any / sizeof any[0]))];
}

/* passes.def's numbers and their generators. */
static const struct {
    int number;
    void (*gen)(FuzzGen *g);
} generators[] = {
#define PASS(num, c, name, alias, prec, clean) { num, fuzz_gen_##c },
#include "passes.def"
#undef PASS
};

bool fuzz_has_generator(int number)
{
    for (size_t i = 0; i < sizeof generators / sizeof generators[0]; i++)
        if (generators[i].number == number)
            return true;
    return false;
}

void fuzz_gen_site(FuzzGen *g, int number)
{
    for (size_t i = 0; i < sizeof generators / sizeof generators[0]; i++)
        if (generators[i].number == number)
            generators[i].gen(g);
}

void gen_draw_coll(FuzzGen *g, GenColl *c)
{
    memset(c, 0, sizeof *c);
    int R = fuzz_build_replicas(g->b), P = fuzz_build_partitions(g->b);
    FuzzGroupMode mode = (FuzzGroupMode)fuzz_below(g->rng, FUZZ_GROUP_MODES);
    int n = mode == FUZZ_FLATTENED ? R * P : R;
    fuzz_draw_groups(g->rng, mode, R, P, fuzz_divisor(g->rng, n), &c->groups);
    c->size = fuzz_group_size(&c->groups, P);
    c->channel = mode == FUZZ_CROSS_REPLICA ? 0 : fuzz_channel(g->b);
    char m[96];
    fuzz_mode_attrs(mode, c->channel, m, sizeof m);
    snprintf(c->attrs, sizeof c->attrs, ", replica_groups=%s%s", c->groups.text, m);
}

void gen_coll_text(const GenColl *c, char *buf, size_t n)
{
    static const char *const modes[] = { "cross-replica", "cross-replica-and-partition", "flattened-id" };
    if (strcmp(c->groups.form, "uneven") == 0)     /* no one size: the list itself */
        snprintf(buf, n, "%s groups %s", modes[c->groups.mode], c->groups.canon);
    else
        snprintf(buf, n, "%s groups %s (%d x %d)", modes[c->groups.mode], c->groups.form, c->groups.n_groups,
                 c->size);
}

int gen_bounded(FuzzGen *g, int x, int dim)
{
    FuzzShape s = fuzz_value_shape(g->b, x);
    char lit[32], a[40];
    snprintf(lit, sizeof lit, "%lld", (long long)s.dims[dim]);
    snprintf(a, sizeof a, ", dimensions={%d}", dim);
    int size = fuzz_constant(g->b, IR_TYPE_S32, lit);
    s.bounded |= 1u << dim;
    return fuzz_op(g->b, s, "set-dimension-size", 2, (int[]){ x, size }, a);
}

int gen_unbounded_input(FuzzGen *g, FuzzShape s, int dim)
{
    s.unbounded |= 1u << dim;
    g->unrunnable = true;
    return fuzz_input(g->b, s);
}

int gen_all_gather(FuzzGen *g, int x, int dim, const GenColl *c)
{
    FuzzShape s = fuzz_value_shape(g->b, x);
    s.dims[dim] *= c->size;
    char a[900];
    snprintf(a, sizeof a, "%s, dimensions={%d}", c->attrs, dim);
    return fuzz_op1(g->b, s, "all-gather", x, a);
}

FuzzShape gen_draw_shape(FuzzRng *r, IrElemType t, int min_rank, int max_rank, int lo, int hi)
{
    FuzzShape s = { .type = t, .rank = min_rank + fuzz_below(r, max_rank - min_rank + 1) };
    for (int i = 0; i < s.rank; i++)
        s.dims[i] = lo + fuzz_below(r, hi - lo + 1);
    return s;
}

void gen_finish(FuzzGen *g, FuzzSite *s, int result, int n_extra, const int *extra)
{
    int outs[8] = { result };
    int n = 1;
    for (int i = 0; i < n_extra && n < 6; i++)
        outs[n++] = extra[i];
    /* Now and then an instruction waits for the result (a control edge
     * that the rewrite must hand to the result's replacement); it changes
     * no value, so no expectation. */
    if (s->place != FUZZ_IN_FUSION && fuzz_chance(g->rng, 8)) {
        FuzzShape rs = fuzz_value_shape(g->b, result);
        rs.bounded = 0;                 /* inputs are whole arrays */
        int w = fuzz_op1(g->b, rs, "copy", fuzz_input(g->b, rs), "");
        fuzz_control(g->b, w, result);
        outs[n++] = w;
        size_t k = strlen(s->what);
        snprintf(s->what + k, sizeof s->what - k, " (a copy waits for it: control edge)");
    }
    /* Now and then a long tail of copies hangs from the result: a chain of
     * dependences deeper than a pass's walk keeps on its first stack. */
    if (s->place != FUZZ_IN_FUSION && fuzz_chance(g->rng, 3)) {
        FuzzShape rs = fuzz_value_shape(g->b, result);
        int v = result, len = 65 + fuzz_below(g->rng, 16);
        for (int i = 0; i < len; i++)
            v = fuzz_op1(g->b, rs, "copy", v, "");
        outs[n++] = v;
        size_t k = strlen(s->what);
        snprintf(s->what + k, sizeof s->what - k, " (a chain of %d copies hangs from it)", len);
    }
    int pos[8];
    fuzz_site_end(g->b, n, outs, &s->comp, pos);
    s->out = pos[0];
    s->instr = result;
    if (s->place == FUZZ_IN_FUSION) {   /* no pass visits a fusion's computation */
        s->expect[PASS_MODE_FAITHFUL] = s->expect[PASS_MODE_SOUND] = FUZZ_KEEP;
        s->must_differ[PASS_MODE_FAITHFUL] = s->must_differ[PASS_MODE_SOUND] = false;
        size_t k = strlen(s->what);
        snprintf(s->what + k, sizeof s->what - k, " (in a fusion: kept)");
    }
}
