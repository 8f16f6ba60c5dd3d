/* flip_all_gather_reshape.c: #97, reshape(all-gather(x)) => all-gather(reshape(x, R')).
 * Why: the gather then sits above the reshape with its siblings, so they
 * carry the same key for the all-gather combiner.
 * How: XLA's CommonFactors of the two shapes maps each operand dim to the
 * output dims of its block.  The gather dim d lands on output dim e; R' is
 * the reshape's shape R with R'[e] = R[e] / group size, and the new
 * all-gather gathers dim e (not d).  The seed accepts when d maps to one
 * output dim and, if the reshape only merges dims, at most one other non-1
 * dim shares d's block.  That ignores which dim is major: f32[a,N*b]
 * gathered on 1 and reshaped to [a*N*b] interleaves shards, which no
 * all-gather of a local reshape produces (spec section 4).
 * Needs: the group size (replica groups, or the header); unknown: declined.
 * Keeps: verifier clean; channel_id reused; the reshape's metadata.
 * Sound mode adds: every dim more major than d in its block is 1. */
#include "expand.h"

/* The group size, read off the verified shapes: gathered dim / shard dim.
 * Exact even when the header leaves the device count out. */
static int64_t gather_factor(const IrInstr *g)
{
    int64_t d = g->lists[IR_LIST_DIMENSIONS].v[0], local = g->operands[0]->shape->dims[d];
    return local > 0 ? g->shape->dims[d] / local : -1;
}

#include <string.h>

static int64_t product(const int64_t *v, int n)
{
    int64_t p = 1;
    for (int i = 0; i < n; i++)
        p *= v[i];
    return p;
}

/* The unequal tail of CommonFactors: grow a block on the side with the
 * smaller partial product (both when equal, by the smaller next dim) and
 * close it whenever the partial products meet. */
static int common_tail(const int64_t *a, int na, const int64_t *b, int nb, int i, int j, int n,
                       int64_t (*out)[2])
{
    int prior_i = n > 0 ? (int)out[n - 1][0] : -1, prior_j = n > 0 ? (int)out[n - 1][1] : -1;
    for (int64_t pa = 1, pb = 1;;) {
        if (pa == pb && (i > prior_i || j > prior_j)) {
            prior_i = i;
            prior_j = j;
            out[n][0] = i;
            out[n++][1] = j;
            continue;
        }
        bool in_i = i < na, in_j = j < nb;
        if (!in_i && !in_j)
            return n;
        bool next_a = pa < pb || (in_i && (!in_j || (pa == pb && a[i] <= b[j])));
        bool next_b = pb < pa || (in_j && (!in_i || (pb == pa && b[j] <= a[i])));
        if (next_a)
            pa *= a[i++];
        if (next_b)
            pb *= b[j++];
    }
}

int flip_common_factors(const int64_t *a, int na, const int64_t *b, int nb, int64_t (*out)[2])
{
    int n = 0, i = 0, j = 0;
    if (na == nb && memcmp(a, b, (size_t)na * sizeof *a) == 0) {
        for (; i <= na; i++, n++)
            out[n][0] = out[n][1] = i;
        return n;
    }
    for (; i < na && j < nb && a[i] == b[j]; i++, j++, n++) {
        out[n][0] = i;
        out[n][1] = j;
    }
    int64_t rest_a = product(a + i, na - i), rest_b = product(b + j, nb - j);
    if (rest_a != rest_b)       /* zeros: one block of everything */
        n = i = j = 0;
    if (rest_a != rest_b || rest_a == 0) {
        out[n][0] = i;
        out[n++][1] = j;
        out[n][0] = na;
        out[n++][1] = nb;
        return n;
    }
    return common_tail(a, na, b, nb, i, j, n, out);
}

/* The seed calls CommonFactors(reshape dims, operand dims): a is the
 * output, b the input. */
void flip_reshape_dim_map(const int64_t *in, int n_in, const int64_t *out, int n_out, ReshapeDimMap *map)
{
    int64_t bounds[2 * IR_MAX_RANK + 2][2];
    int nb = flip_common_factors(out, n_out, in, n_in, bounds);
    memset(map, 0, sizeof *map);
    map->only_merge = true;
    for (int k = 0; k < n_in; k++)
        map->first[k] = map->block[k] = -1;
    for (int b = 0; b + 1 < nb; b++) {
        int o0 = (int)bounds[b][0], o1 = (int)bounds[b + 1][0];
        if (o1 - o0 != 1)
            map->only_merge = false;
        for (int k = (int)bounds[b][1]; k < bounds[b + 1][1]; k++) {
            map->first[k] = o0;
            map->count[k] = o1 - o0;
            map->block[k] = b;
        }
    }
}

/* ---- Match */

static bool static_dims(const IrShape *s)
{
    if (!ir_shape_is_array(s) || s->rank > IR_MAX_RANK)
        return false;
    for (int i = 0; i < s->rank; i++)
        if (s->dims[i] < 0)
            return false;
    return true;
}

/* reshape(all-gather(x)) of one operand with static shapes; *d its dim. */
static bool is_candidate(const IrInstr *instr, int64_t *d)
{
    if (instr->op != IR_OP_RESHAPE || !ir_op_is(instr->operands[0], IR_OP_ALL_GATHER))
        return false;
    const IrInstr *g = instr->operands[0];
    if (g->n_operands != 1 || g->lists[IR_LIST_DIMENSIONS].n != 1 || !static_dims(g->shape) ||
        !static_dims(instr->shape))
        return false;
    *d = g->lists[IR_LIST_DIMENSIONS].v[0];
    return *d >= 0 && *d < g->shape->rank;
}

/* AllGatherDimNotSplit, or with an only-merging reshape IsSafeMergeReshape. */
static bool seed_accepts(const ReshapeDimMap *map, const IrShape *in, int64_t d)
{
    if (map->count[d] != 1)
        return false;
    if (!map->only_merge)
        return true;
    int others = 0;
    for (int k = 0; k < in->rank; k++)
        others += k != d && map->block[k] == map->block[d] && in->dims[k] != 1;
    return others <= 1;
}

/* Shard k lands k-th along e only when nothing more major than d in its
 * block varies. */
static bool keeps_shards_whole(const ReshapeDimMap *map, const IrShape *in, int64_t d)
{
    for (int k = 0; k < d; k++)
        if (map->block[k] == map->block[d] && in->dims[k] != 1)
            return false;
    return true;
}

static bool match(const IrInstr *instr, ExpandCtx *ctx)
{
    int64_t d;
    if (!is_candidate(instr, &d))
        return false;
    const IrInstr *g = instr->operands[0];
    ReshapeDimMap map;
    flip_reshape_dim_map(g->shape->dims, g->shape->rank, instr->shape->dims, instr->shape->rank, &map);
    if (!seed_accepts(&map, g->shape, d))
        return false;
    int64_t n = gather_factor(g);
    if (n <= 0)
        return expand_decline(ctx, "empty shard, cannot size the local reshape");
    if (instr->shape->dims[map.first[d]] % n != 0)
        return expand_decline(ctx, "group size does not divide the gathered output dim");
    if (expand_sound(ctx) && !keeps_shards_whole(&map, g->shape, d))
        return expand_decline(ctx, "reshape interleaves shards (a non-1 dim is more major than the gather dim)");
    return true;
}

/* ---- Expand */

static IrInstr *build(IrInstr *reshape, ExpandCtx *ctx, Error *err)
{
    (void)err;
    IrModule *m = ctx->m;
    IrInstr *g = reshape->operands[0], *x = g->operands[0];
    int64_t d = g->lists[IR_LIST_DIMENSIONS].v[0], n = gather_factor(g);
    ReshapeDimMap map;
    flip_reshape_dim_map(g->shape->dims, g->shape->rank, reshape->shape->dims, reshape->shape->rank, &map);
    int e = map.first[d];
    IrShape *local = ir_shape_clone(m->arena, reshape->shape);
    if (!local)
        return ir_module_noted(m, NULL);
    local->dims[e] /= n;
    IrInstr *r = expand_new(reshape, IR_OP_RESHAPE, local, 1, &x);
    IrInstr *ng = expand_new(reshape, IR_OP_ALL_GATHER, ir_shape_clone(m->arena, reshape->shape), 1, &r);
    expand_copy_typed_attrs(m, ng, g);
    if (!ng || m->nomem)
        return NULL;
    ng->lists[IR_LIST_DIMENSIONS].v[0] = e;
    return ng;
}

PassResult pass_flip_all_gather_reshape(IrModule *m, const PassOptions *opt, PassStats *stats, Error *err)
{
    return pass_expand(m, opt, stats, match, build, NULL, err);
}
