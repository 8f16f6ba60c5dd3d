/* gen_shape.c: sites of the two all-gather flips whose guards read shapes
 * and indices (spec/passes.md 3 and 4), with the near misses each matcher
 * must turn down.  #97 reshape over all-gather is sound only when the
 * gather dim leads its common-factor block; the shapes' dims are >= 2
 * but for 1s put in at random, whose blocks follow XLA's CommonFactors.  #92
 * dynamic-slice over all-gather is exact only when every participant
 * slices at its reader's clamped start indices, worked out here per
 * device from the groups.  At most one site of a module is unsound in
 * some mode, so that the checker still judges the others bitwise. */
#include "gen_shape.h"

#include <stdio.h>
#include <string.h>

/* ---- #97 */

/* The blocks of in[i..) and out[j..), dims >= 1 and equal products, after
 * the block that ends at (i, j): bounds[n] onwards.  Returns the count, or
 * -1 when the products differ. */
static int blocks_from(const int64_t *in, int n_in, const int64_t *out, int n_out, int i, int j, int n,
                       int (*bounds)[2])
{
    while (i < n_in || j < n_out) {
        bool one_in = i < n_in && in[i] == 1, one_out = j < n_out && out[j] == 1;
        if (one_in || one_out) {
            /* a 1 where a block would start: a block of its own, with the
             * other side's 1 when both have one there */
            i += one_in;
            j += one_out;
        } else {
            if (i == n_in || j == n_out)
                return -1;
            /* both sides' next dims, then the side behind grows (1s inside
             * a block join it) until the products meet */
            int64_t pi = in[i++], pj = out[j++];
            while (pi != pj) {
                if (pi < pj && i < n_in)
                    pi *= in[i++];
                else if (pj < pi && j < n_out)
                    pj *= out[j++];
                else
                    return -1;
            }
        }
        bounds[n][0] = i;
        bounds[n++][1] = j;
    }
    return n;
}

static int64_t product_from(const int64_t *v, int n, int from)
{
    int64_t p = 1;
    for (int i = from; i < n; i++)
        p *= v[i];
    return p;
}

int gen_common_factors(const int64_t *in, int n_in, const int64_t *out, int n_out, int (*bounds)[2])
{
    bool zero = false;
    for (int i = 0; i < n_in; i++) {
        if (in[i] < 0)
            return -1;
        zero |= in[i] == 0;
    }
    for (int j = 0; j < n_out; j++) {
        if (out[j] < 0)
            return -1;
        zero |= out[j] == 0;
    }
    if (product_from(in, n_in, 0) != product_from(out, n_out, 0))
        return -1;
    bounds[0][0] = bounds[0][1] = 0;
    if (!zero)
        return blocks_from(in, n_in, out, n_out, 0, 0, 1, bounds);
    /* With a 0 (CommonFactors' zero rule): equal shapes give a block per
     * dim; else each dim of the equal leading run is a block, and what
     * follows is one block when its products are both 0, the blocks of
     * shapes without 0s when they are equal and not 0, and when they
     * differ the whole of both shapes is one block. */
    int n = 1, i = 0;
    for (; i < n_in && i < n_out && in[i] == out[i]; i++, n++)
        bounds[n][0] = bounds[n][1] = i + 1;
    if (i == n_in && i == n_out)
        return n;
    int64_t rest_in = product_from(in, n_in, i), rest_out = product_from(out, n_out, i);
    if (rest_in != rest_out) {
        bounds[1][0] = n_in;
        bounds[1][1] = n_out;
        return 2;
    }
    if (rest_in == 0) {
        bounds[n][0] = n_in;
        bounds[n++][1] = n_out;
        return n;
    }
    return blocks_from(in, n_in, out, n_out, i, i, n, bounds);
}

bool gen_reshape_rule(const int64_t *in, int n_in, const int64_t *out, int n_out, int d, int n,
                      GenReshapeRule *rule)
{
    memset(rule, 0, sizeof *rule);
    int bounds[2 * FUZZ_MAX_RANK + 1][2];
    int nb = n_in <= FUZZ_MAX_RANK && n_out <= FUZZ_MAX_RANK ? gen_common_factors(in, n_in, out, n_out, bounds) : -1;
    if (nb < 2 || d < 0 || d >= n_in || n < 1 || in[d] == 1)
        return false;
    rule->only_merge = true;
    for (int k = 0; k + 1 < nb; k++) {
        rule->only_merge &= bounds[k + 1][1] - bounds[k][1] == 1;       /* a lone operand 1 has none */
        if (bounds[k][0] <= d && d < bounds[k + 1][0]) {
            rule->in0 = bounds[k][0];
            rule->in1 = bounds[k + 1][0];
            rule->out0 = bounds[k][1];
            rule->out1 = bounds[k + 1][1];
        }
    }
    /* d maps to one output dim; a reshape that only merges may merge at
     * most one other non-1 dim into it */
    int others = 0;
    for (int k = rule->in0; k < rule->in1; k++)
        others += k != d && in[k] != 1;
    rule->accept = rule->out1 - rule->out0 == 1 && (!rule->only_merge || others <= 1) && out[rule->out0] % n == 0;
    /* an empty shard: declined (docs/fuzz-coverage.md, "Rulings") */
    rule->empty_shard = in[d] == 0;
    rule->accept &= !rule->empty_shard;
    /* spec section 4: every dim more major than d in its block is 1 */
    rule->sound = rule->accept;
    for (int k = rule->in0; k < d; k++)
        rule->sound &= in[k] == 1;
    return true;
}

typedef enum BlockKind { BLOCK_PASS, BLOCK_MERGE, BLOCK_SPLIT, BLOCK_MIXED, BLOCK_KINDS } BlockKind;

/* One common-factor block as drawn: operand dims in, output dims out. */
typedef struct Block {
    int n_in, n_out;
    int64_t in[3], out[3];
} Block;

/* A dim of the gathered shape, >= 2; the gather dim's is a multiple of the group size n. */
static int64_t gathered_dim(FuzzRng *r, bool is_d, int n)
{
    int64_t v = is_d ? (1 + fuzz_below(r, 3)) * (int64_t)n : 2 + fuzz_below(r, 3);
    return v < 2 ? 2 : v;
}

/* m factors of t into f, each >= 2, or false. */
static bool factorize(FuzzRng *r, int64_t t, int m, int64_t *f)
{
    for (int i = 0; i + 1 < m; i++) {
        int64_t c[64];
        int k = 0;
        for (int64_t v = 2; 2 * v <= t && k < 64; v++)
            if (t % v == 0)
                c[k++] = v;
        if (k == 0)
            return false;
        f[i] = c[fuzz_below(r, k)];
        t /= f[i];
    }
    f[m - 1] = t;
    return t >= 2;
}

/* A block of kind with k operand dims (k output dims for a split); the
 * gather dim is its at-th operand dim, none when at < 0.  A mixed block
 * whose dims admit no split-and-merge comes out a merge. */
static void draw_block(FuzzRng *r, BlockKind kind, int k, int at, int n, Block *b)
{
    memset(b, 0, sizeof *b);
    if (kind == BLOCK_SPLIT) {
        b->n_in = 1;
        b->n_out = k;
        b->in[0] = 1;
        for (int i = 0; i < k; i++) {
            b->out[i] = 2 + fuzz_below(r, 3);
            b->in[0] *= b->out[i];
        }
        if (at == 0) {
            b->in[0] *= n;
            b->out[fuzz_below(r, k)] *= n;
        }
        return;
    }
    b->n_in = kind == BLOCK_PASS ? 1 : k;
    for (int tries = 0; tries < 8; tries++) {
        int64_t t = 1;
        for (int i = 0; i < b->n_in; i++) {
            b->in[i] = gathered_dim(r, i == at, n);
            t *= b->in[i];
        }
        b->n_out = 1;
        b->out[0] = t;
        if (kind != BLOCK_MIXED)
            return;
        int bounds[4][2];
        b->n_out = 2 + fuzz_chance(r, 30);
        if (factorize(r, t, b->n_out, b->out) && gen_common_factors(b->in, b->n_in, b->out, b->n_out, bounds) == 2)
            return;
        b->n_out = 1;
        b->out[0] = t;
    }
}

/* The gathered shape and reshape of a site: d's block of kind (the gather
 * dim its at-th dim), beside up to two blocks of any kind, both shapes of
 * rank <= 4. */
typedef struct ReshapeDraw {
    int64_t in[FUZZ_MAX_RANK], out[FUZZ_MAX_RANK];
    int n_in, n_out, d;
    GenReshapeRule rule;
} ReshapeDraw;

static void draw_reshape(FuzzRng *r, BlockKind kind, int k, int at, int n, ReshapeDraw *w)
{
    memset(w, 0, sizeof *w);
    Block db;
    draw_block(r, kind, k, at, n, &db);
    int others = fuzz_below(r, 3), pos = fuzz_below(r, others + 1);
    for (int slot = 0; slot <= others; slot++) {
        Block ob, *b = &db;
        bool before_d = slot < pos;
        if (slot != pos) {
            draw_block(r, (BlockKind)fuzz_below(r, BLOCK_KINDS), 2, -1, n, &ob);
            b = &ob;
        }
        if (w->n_in + b->n_in + (before_d ? db.n_in : 0) > 4 || w->n_out + b->n_out + (before_d ? db.n_out : 0) > 4)
            continue;
        if (b == &db)
            w->d = w->n_in + at;
        memcpy(w->in + w->n_in, b->in, (size_t)b->n_in * sizeof *b->in);
        memcpy(w->out + w->n_out, b->out, (size_t)b->n_out * sizeof *b->out);
        w->n_in += b->n_in;
        w->n_out += b->n_out;
    }
    /* now and then 1s, on either side, at block edges or inside blocks:
     * where CommonFactors puts them decides the seed's verdict */
    for (int ones = fuzz_chance(r, 35) ? 1 + fuzz_below(r, 2) : 0; ones > 0; ones--) {
        bool in_side = fuzz_chance(r, 50);
        int64_t *v = in_side ? w->in : w->out;
        int *len = in_side ? &w->n_in : &w->n_out;
        if (*len >= FUZZ_MAX_RANK - 1)
            continue;
        int p = fuzz_below(r, *len + 1);
        memmove(v + p + 1, v + p, (size_t)(*len - p) * sizeof *v);
        v[p] = 1;
        (*len)++;
        if (in_side && p <= w->d)
            w->d++;
    }
    gen_reshape_rule(w->in, w->n_in, w->out, w->n_out, w->d, n, &w->rule);
}

/* A gathered shape with a 0 (at the gather dim or not) and a reshape of it
 * with a 0 too: its own shape, a leading run of it kept and the rest in
 * one dim, or any shape with a 0.  Every one moves no element, so a
 * rewrite is exact; CommonFactors' zero rule decides what the seed takes. */
static void draw_empty_reshape(FuzzRng *r, int n, ReshapeDraw *w)
{
    memset(w, 0, sizeof *w);
    w->n_in = 1 + fuzz_below(r, 3);
    for (int i = 0; i < w->n_in; i++)
        w->in[i] = 1 + fuzz_below(r, 3);
    w->d = fuzz_below(r, w->n_in);
    w->in[w->d] = 2 + fuzz_below(r, 2);        /* not 1: gen_reshape_rule needs d's extent */
    w->in[fuzz_chance(r, 40) ? w->d : fuzz_below(r, w->n_in)] = 0;
    w->in[w->d] *= n;
    int how = fuzz_below(r, 3);
    if (how == 0) {
        w->n_out = w->n_in;
        memcpy(w->out, w->in, sizeof w->in);
    } else if (how == 1) {
        int keep = fuzz_below(r, w->n_in);
        memcpy(w->out, w->in, (size_t)keep * sizeof *w->in);
        w->out[keep] = 1;
        for (int i = keep; i < w->n_in; i++)
            w->out[keep] *= w->in[i];
        if (w->out[keep] != 0)          /* the 0 is kept in front: any rest goes */
            w->out[keep] = fuzz_below(r, 5);
        w->n_out = keep + 1;
    } else {
        w->n_out = 1 + fuzz_below(r, 3);
        for (int i = 0; i < w->n_out; i++)
            w->out[i] = 1 + fuzz_below(r, 4);
        w->out[fuzz_below(r, w->n_out)] = 0;
    }
    gen_reshape_rule(w->in, w->n_in, w->out, w->n_out, w->d, n, &w->rule);
}

/* How the reshape treats d's block, for the recipe. */
static void block_text(const ReshapeDraw *w, char *buf, size_t n)
{
    const GenReshapeRule *u = &w->rule;
    int outs = u->out1 - u->out0, ins = u->in1 - u->in0;
    if (outs > 1)
        snprintf(buf, n, "%s d's block (dims %d..%d -> %d..%d)", ins > 1 ? "splits and merges" : "splits", u->in0,
                 u->in1 - 1, u->out0, u->out1 - 1);
    else if (ins == 1)
        snprintf(buf, n, "passes d through to dim %d", u->out0);
    else
        snprintf(buf, n, "merges d into dim %d with %d more major and %d more minor dims", u->out0, w->d - u->in0,
                 u->in1 - 1 - w->d);
}

/* A #97 site no interpreter can run, which the pass keeps: x's dim 0
 * unbounded, so the gathered shape has no common factors to read, reshaped
 * to all its elements in one unbounded dim.  (A static gathered shape
 * cannot become an unbounded one: XLA's reshape keeps its element count,
 * and so does the verifier.) */
static void unrunnable_reshape(FuzzGen *g, FuzzSite *s, IrElemType t, const GenColl *c)
{
    FuzzRng *r = g->rng;
    int64_t a = 1 + fuzz_below(r, 3), b = 2 + fuzz_below(r, 3);
    FuzzShape xs = fuzz_shape(t, 2, (int64_t[]){ a, b }), os = fuzz_shape(t, 1, (int64_t[]){ 1 });
    os.unbounded = 1;
    int x = gen_unbounded_input(g, xs, 0);
    int ag = gen_all_gather(g, x, 1, c);
    int result = fuzz_op1(g->b, os, "reshape", ag, "");
    char ct[160], xt[64], ot[64];
    gen_coll_text(c, ct, sizeof ct);
    FuzzShape xv = fuzz_value_shape(g->b, x);
    snprintf(s->what, sizeof s->what,
             "#97 near miss: reshape of an all-gather of unbounded shape (not run): x %s gathered on dim 1, "
             "reshaped to %s, %s, in entry", fuzz_shape_text(&xv, xt, sizeof xt), fuzz_shape_text(&os, ot, sizeof ot), ct);
    s->expect[PASS_MODE_FAITHFUL] = s->expect[PASS_MODE_SOUND] = FUZZ_KEEP;
    gen_finish(g, s, result, 0, NULL);
}

void fuzz_gen_flip_all_gather_reshape(FuzzGen *g)
{
    FuzzSite *s = gen_begin_site(g, 97);
    if (!s)
        return;
    FuzzRng *r = g->rng;
    FuzzPlace place = s->place;
    IrElemType t = fuzz_draw_type(r, false);
    GenColl c;
    gen_draw_coll(g, &c);
    int n = c.size;
    /* 0-10 reshape(all-gather), 11 whose all-gather has another user, 12
     * of a copy, 13 of an all-reduce, 14 a bitcast instead */
    int wrap = fuzz_below(r, 15);
    bool near = wrap >= 12;
    if (place == FUZZ_IN_ENTRY && fuzz_chance(r, 3)) {     /* unbounded values stay in the entry */
        unrunnable_reshape(g, s, t, &c);
        return;
    }
    ReshapeDraw w;
    bool empty = fuzz_chance(r, 8);     /* a 0 in the shapes: nothing moves */
    if (empty)
        draw_empty_reshape(r, n, &w);
    for (int tries = 0; !empty; tries++) {
        /* d's block: passed through, merged as its most major dim, merged
         * under a more major dim (the seed's unsoundness), split, or split
         * and merged at once; 3-dim merges bring a second other dim in */
        static const BlockKind kinds[] = { BLOCK_PASS,  BLOCK_PASS,  BLOCK_MERGE, BLOCK_MERGE, BLOCK_MERGE, BLOCK_MERGE,
                                           BLOCK_MERGE, BLOCK_MERGE, BLOCK_SPLIT, BLOCK_SPLIT, BLOCK_MIXED, BLOCK_MIXED };
        int pick = fuzz_below(r, 12);
        BlockKind kind = tries == 8 ? BLOCK_PASS : kinds[pick];    /* always sound */
        int k = 2 + fuzz_chance(r, 40);
        int at = kind == BLOCK_MIXED ? fuzz_below(r, k) : kind == BLOCK_MERGE && pick >= 5 ? 1 + fuzz_below(r, k - 1) : 0;
        draw_reshape(r, kind, k, at, n, &w);
        if (!g->odd_site_taken || near || !w.rule.accept || w.rule.sound)
            break;
    }
    FuzzShape gs = fuzz_shape(t, w.n_in, w.in), xs = gs, os = fuzz_shape(t, w.n_out, w.out);
    xs.dims[w.d] /= n;
    int x = fuzz_input(g->b, wrap == 13 ? gs : xs), result, extra[1], n_extra = 0;
    const char *what;
    if (wrap == 13) {
        char a[900];
        snprintf(a, sizeof a, "%s, to_apply=%%%s", c.attrs,
                 fuzz_reducer(g->b, t, t == IR_TYPE_PRED ? "or" : "maximum", true));
        result = fuzz_op1(g->b, os, "reshape", fuzz_op1(g->b, gs, "all-reduce", x, a), "");
        what = "near miss: reshape of an all-reduce";
    } else {
        int ag = gen_all_gather(g, x, w.d, &c);
        if (wrap == 12) {
            result = fuzz_op1(g->b, os, "reshape", fuzz_op1(g->b, gs, "copy", ag, ""), "");
            what = "near miss: reshape of a copy of an all-gather";
        } else if (wrap == 14) {
            result = fuzz_op1(g->b, os, "bitcast", ag, "");
            what = "near miss: bitcast of an all-gather";
        } else {
            result = fuzz_op1(g->b, os, "reshape", ag, "");
            what = "reshape of an all-gather";
            if (wrap == 11) {
                extra[n_extra++] = ag;
                what = "reshape of an all-gather that has another user";
            }
        }
    }
    char ct[160], xt[64], gt[64], ot[64], bt[96];
    gen_coll_text(&c, ct, sizeof ct);
    block_text(&w, bt, sizeof bt);
    StrBuf line;
    strbuf_init(&line);
    if (wrap == 13)
        strbuf_printf(&line, "#97 %s: x %s, reshaped to %s", what, fuzz_shape_text(&gs, gt, sizeof gt),
                      fuzz_shape_text(&os, ot, sizeof ot));
    else
        strbuf_printf(&line, "#97 %s: x %s gathered on dim %d to %s, reshaped to %s (%s; %s)", what,
                      fuzz_shape_text(&xs, xt, sizeof xt), w.d, fuzz_shape_text(&gs, gt, sizeof gt),
                      fuzz_shape_text(&os, ot, sizeof ot), w.rule.only_merge ? "only merges" : "splits", bt);
    strbuf_printf(&line, ", %s%s, in %s", ct, empty ? ", no elements" : "", fuzz_place_name(place));
    snprintf(s->what, sizeof s->what, "%s", line.s);
    strbuf_free(&line);
    FuzzExpect faithful = near || !w.rule.accept ? FUZZ_KEEP : w.rule.sound || empty ? FUZZ_EXACT : FUZZ_UNSOUND;
    s->expect[PASS_MODE_FAITHFUL] = faithful;
    s->expect[PASS_MODE_SOUND] = !near && w.rule.sound ? FUZZ_EXACT : FUZZ_KEEP;
    /* shards interleave; random integers (17 values) or bools could still line up */
    s->must_differ[PASS_MODE_FAITHFUL] = faithful == FUZZ_UNSOUND && n >= 2 && ir_type_is_float(t);
    g->odd_site_taken |= faithful == FUZZ_UNSOUND;
    gen_finish(g, s, result, n_extra, extra);
}

/* ---- #92 */

int64_t gen_clamp_start(int64_t start, int64_t dim, int64_t size)
{
    return start < 0 ? 0 : start > dim - size ? dim - size : start;
}

/* The index on replica r, partition p; false for a parameter (its value is per rank and random). */
static bool index_value(const GenIndex *ix, int r, int p, int64_t *v)
{
    switch (ix->kind) {
    case GEN_INDEX_PARTITION:
        *v = p * ix->scale + ix->offset;
        return true;
    case GEN_INDEX_REPLICA:
        *v = r * ix->scale + ix->offset;
        return true;
    case GEN_INDEX_PARAMETER:
        return false;
    case GEN_INDEX_PERMUTED:
        *v = r >= 1 && r <= ix->scale ? ix->offset : 0;
        return true;
    case GEN_INDEX_CONSTANT:
    case GEN_INDEX_FOLDED:
    case GEN_INDEX_UNLISTED:
    case GEN_INDEX_KINDS:
        break;
    }
    *v = ix->offset;
    return true;
}

GenAgree gen_starts_agree(const FuzzGroups *g, int replicas, int partitions, int rank, const int64_t *dims,
                          const int64_t *sizes, const GenIndex *idx)
{
    GenAgree agree = GEN_AGREE;
    int who[FUZZ_MAX_DEVICES];
    for (int dev = 0; dev < replicas * partitions; dev++) {
        int np = fuzz_participants(g, replicas, partitions, dev, who);
        for (int i = 0; i < rank; i++) {
            if (sizes[i] == dims[i])        /* not cut: every start clamps to 0 */
                continue;
            int64_t mine, theirs;
            if (!index_value(&idx[i], dev / partitions, dev % partitions, &mine)) {
                if (np > 1)
                    agree = GEN_MAY_DIFFER;
                continue;
            }
            for (int q = 0; q < np; q++) {
                index_value(&idx[i], who[q] / partitions, who[q] % partitions, &theirs);
                if (gen_clamp_start(theirs, dims[i], sizes[i]) != gen_clamp_start(mine, dims[i], sizes[i]))
                    return GEN_DIFFER;
            }
        }
    }
    return agree;
}

enum { STYLE_CONSTANTS, STYLE_DEVICE, STYLE_PARAMETER };

/* The start index of a dim of extent dim sliced to size, in style; forced:
 * of the style's own kind.  R: the module's replica count. */
static GenIndex draw_index(FuzzRng *r, int style, int64_t dim, int64_t size, bool forced, int R)
{
    GenIndex ix = { .kind = fuzz_chance(r, 50) ? GEN_INDEX_CONSTANT : GEN_INDEX_FOLDED };
    ix.offset = -2 + fuzz_below(r, (int)(dim - size) + 5);     /* past both ends, for the clamp */
    ix.form = fuzz_below(r, 2);
    ix.scale = -3 + fuzz_below(r, 7);
    if (ix.kind == GEN_INDEX_FOLDED && fuzz_chance(r, 12))
        ix.kind = GEN_INDEX_UNLISTED;
    if (style == STYLE_DEVICE && (forced || fuzz_chance(r, 50))) {
        ix.kind = fuzz_chance(r, 50) ? GEN_INDEX_PARTITION : GEN_INDEX_REPLICA;
        ix.scale = fuzz_below(r, 4);                            /* 0: the same on every device */
        ix.offset = -2 + fuzz_below(r, 5);
        if (R >= 2 && fuzz_chance(r, 30)) {                     /* a constant, moved between replicas */
            ix.kind = GEN_INDEX_PERMUTED;
            ix.scale = 1 + fuzz_below(r, R - 1);
            ix.offset = 1 + fuzz_below(r, (int)(dim - size) + 1);
        }
    } else if (style == STYLE_PARAMETER && (forced || fuzz_chance(r, 30))) {
        ix.kind = GEN_INDEX_PARAMETER;
        ix.lo = -2 + fuzz_below(r, 3);
        ix.hi = ix.lo + 2 + fuzz_below(r, (int)(dim - size) + 3);
    }
    return ix;
}

static int s32_constant(FuzzBuild *b, int64_t v)
{
    char lit[32];
    snprintf(lit, sizeof lit, "%lld", (long long)v);
    return fuzz_constant(b, IR_TYPE_S32, lit);
}

static int emit_index(FuzzBuild *b, const GenIndex *ix)
{
    FuzzShape s32 = fuzz_shape(IR_TYPE_S32, 0, NULL);
    switch (ix->kind) {
    case GEN_INDEX_FOLDED: {
        if (ix->form == 1) {
            char lit[32];
            snprintf(lit, sizeof lit, "%lld", (long long)ix->offset);
            return fuzz_op1(b, s32, "convert", fuzz_constant(b, IR_TYPE_S64, lit), "");
        }
        int a = s32_constant(b, ix->scale);         /* made in order: the same text from any compiler */
        return fuzz_op2(b, s32, "add", a, s32_constant(b, ix->offset - ix->scale), "");
    }
    case GEN_INDEX_PARTITION:
    case GEN_INDEX_REPLICA: {
        const char *op = ix->kind == GEN_INDEX_PARTITION ? "partition-id" : "replica-id";
        int v = fuzz_op1(b, s32, "convert", fuzz_op(b, fuzz_shape(IR_TYPE_U32, 0, NULL), op, 0, NULL, ""), "");
        if (ix->scale != 1)
            v = fuzz_op2(b, s32, "multiply", v, s32_constant(b, ix->scale), "");
        if (ix->offset != 0)
            v = fuzz_op2(b, s32, "add", v, s32_constant(b, ix->offset), "");
        return v;
    }
    case GEN_INDEX_UNLISTED: {
        int v = s32_constant(b, ix->offset);
        if (ix->form == 1) {            /* 11 instructions, 2047 steps for a walk that does not share */
            for (int k = 0; k < 10; k++)
                v = fuzz_op2(b, s32, "maximum", v, v, "");
            return v;
        }
        int64_t two = 2;
        char a[120];
        snprintf(a, sizeof a, ", dimensions={0}, to_apply=%%%s", fuzz_reducer(b, IR_TYPE_S32, "maximum", true));
        int wide = fuzz_op1(b, fuzz_shape(IR_TYPE_S32, 1, &two), "broadcast", v, ", dimensions={}");
        return fuzz_op(b, s32, "reduce", 2, (int[]){ wide, s32_constant(b, INT32_MIN) }, a);
    }
    case GEN_INDEX_PARAMETER:
        return fuzz_input_index(b, ix->lo, ix->hi);
    case GEN_INDEX_PERMUTED: {
        char a[400];
        size_t k = (size_t)snprintf(a, sizeof a, ", source_target_pairs={");
        for (int i = 0; i < ix->scale && k < sizeof a; i++)
            k += (size_t)snprintf(a + k, sizeof a - k, "%s{%d,%d}", i ? "," : "", i, i + 1);
        if (k < sizeof a)
            snprintf(a + k, sizeof a - k, "}");
        return fuzz_op1(b, s32, "collective-permute", s32_constant(b, ix->offset), a);
    }
    case GEN_INDEX_CONSTANT:
    case GEN_INDEX_KINDS:
        break;
    }
    return s32_constant(b, ix->offset);
}

static void index_text(const GenIndex *ix, char *buf, size_t n)
{
    long long sc = (long long)ix->scale, of = (long long)ix->offset;
    switch (ix->kind) {
    case GEN_INDEX_FOLDED:
        if (ix->form == 1)
            snprintf(buf, n, "s64 %lld", of);
        else
            snprintf(buf, n, "%lld+%lld", sc, of - sc);
        return;
    case GEN_INDEX_PARTITION:
    case GEN_INDEX_REPLICA:
        snprintf(buf, n, "%s*%lld%+lld", ix->kind == GEN_INDEX_PARTITION ? "pid" : "rid", sc, of);
        return;
    case GEN_INDEX_PARAMETER:
        snprintf(buf, n, "param[%d,%d)", ix->lo, ix->hi);
        return;
    case GEN_INDEX_PERMUTED:
        snprintf(buf, n, "permute(%lld to replicas 1..%lld)", of, sc);
        return;
    case GEN_INDEX_UNLISTED:
        snprintf(buf, n, ix->form == 1 ? "max^10(%lld)" : "reduce-max(%lld)", of);
        return;
    case GEN_INDEX_CONSTANT:
    case GEN_INDEX_KINDS:
        break;
    }
    snprintf(buf, n, "%lld", of);
}

/* "{a,b,c}" of n values into buf. */
static void list_text(const int64_t *v, int n, char *buf, size_t size)
{
    size_t k = (size_t)snprintf(buf, size, "{");
    for (int i = 0; i < n && k < size; i++)
        k += (size_t)snprintf(buf + k, size - k, "%s%lld", i ? "," : "", (long long)v[i]);
    if (k < size)
        snprintf(buf + k, size - k, "}");
}

enum { DS_MAIN, DS_OTHER_USER, DS_ONE_CUT, DS_GATHER_CUT, DS_LOW_RANK, DS_COPY, DS_STATIC };

void fuzz_gen_flip_all_gather_dynamic_slice(FuzzGen *g)
{
    FuzzSite *s = gen_begin_site(g, 92);
    if (!s)
        return;
    FuzzRng *r = g->rng;
    FuzzPlace place = s->place;
    int R = fuzz_build_replicas(g->b), P = fuzz_build_partitions(g->b);
    static const int kinds[] = { DS_MAIN, DS_MAIN, DS_MAIN,      DS_MAIN,       DS_MAIN,     DS_MAIN,
                                 DS_MAIN, DS_MAIN, DS_OTHER_USER, DS_ONE_CUT,   DS_GATHER_CUT, DS_LOW_RANK,
                                 DS_COPY, DS_STATIC };
    int kind = kinds[fuzz_below(r, (int)(sizeof kinds / sizeof kinds[0]))];
    int style = fuzz_below(r, 10);
    style = style < 4 ? STYLE_CONSTANTS : style < 8 ? STYLE_DEVICE : STYLE_PARAMETER;
    /* indices that may differ between participants: floats, so the slices cannot coincide */
    IrElemType t = fuzz_draw_type(r, style == STYLE_DEVICE);
    GenColl c;
    gen_draw_coll(g, &c);

    /* which dims are cut: > 1 of them, not the gather dim, at rank >= 3, or one of the near misses */
    int rank = kind == DS_LOW_RANK ? 1 + fuzz_below(r, 2) : 3 + fuzz_below(r, 3);
    int d = fuzz_below(r, rank), perm[FUZZ_MAX_RANK], others[FUZZ_MAX_RANK], n_others = 0;
    fuzz_shuffle(r, perm, rank);
    for (int i = 0; i < rank; i++)
        if (perm[i] != d)
            others[n_others++] = perm[i];
    bool cut[FUZZ_MAX_RANK] = { false };
    int k;
    switch (kind) {
    case DS_ONE_CUT:
        k = 1;
        break;
    case DS_GATHER_CUT:
        cut[d] = true;
        k = 1 + fuzz_below(r, n_others);
        break;
    case DS_LOW_RANK:
        cut[d] = n_others == 0 || fuzz_chance(r, 50);
        k = cut[d] ? fuzz_below(r, n_others + 1) : 1;
        break;
    default:
        k = 2 + fuzz_below(r, n_others - 1);
        break;
    }
    for (int i = 0; i < k; i++)
        cut[others[i]] = true;
    int64_t xd[FUZZ_MAX_RANK], dims[FUZZ_MAX_RANK], sizes[FUZZ_MAX_RANK];
    int n_cut = 0, cut_list[FUZZ_MAX_RANK];
    for (int i = 0; i < rank; i++) {
        xd[i] = cut[i] ? 2 + fuzz_below(r, 3) : 1 + fuzz_below(r, 4);
        dims[i] = xd[i] * (i == d ? c.size : 1);
        sizes[i] = cut[i] ? 1 + fuzz_below(r, (int)dims[i] - 1) : dims[i];
        if (cut[i])
            cut_list[n_cut++] = i;
    }
    bool match = kind != DS_COPY && kind != DS_STATIC && rank >= 3 && n_cut >= 2 && !cut[d];

    GenIndex idx[FUZZ_MAX_RANK];
    GenAgree agree;
    for (int tries = 0;; tries++) {
        if (tries == 8)
            style = STYLE_CONSTANTS;        /* agrees everywhere */
        int forced = cut_list[fuzz_below(r, n_cut)];
        for (int i = 0; i < rank; i++)
            idx[i] = draw_index(r, style, dims[i], sizes[i], i == forced, R);
        agree = gen_starts_agree(&c.groups, R, P, rank, dims, sizes, idx);
        if (!g->odd_site_taken || !match || agree == GEN_AGREE)
            break;
    }
    bool from_constants = true;
    for (int i = 0; i < rank; i++)
        from_constants &= idx[i].kind == GEN_INDEX_CONSTANT || idx[i].kind == GEN_INDEX_FOLDED;

    FuzzShape xs = fuzz_shape(t, rank, xd), gs = fuzz_shape(t, rank, dims), os = fuzz_shape(t, rank, sizes);
    int x = fuzz_input(g->b, xs), ag = gen_all_gather(g, x, d, &c), result, extra[1], n_extra = 0;
    StrBuf starts, attrs, line;
    strbuf_init(&starts);
    strbuf_init(&attrs);
    char sl[96];
    list_text(sizes, rank, sl, sizeof sl);
    const char *what;
    if (kind == DS_STATIC) {
        strbuf_puts(&attrs, ", slice={");
        for (int i = 0; i < rank; i++) {
            int64_t b0 = gen_clamp_start(idx[i].offset, dims[i], sizes[i]);
            strbuf_printf(&attrs, "%s[%lld:%lld]", i ? ", " : "", (long long)b0, (long long)(b0 + sizes[i]));
            strbuf_printf(&starts, "%s%lld", i ? "," : "", (long long)b0);
        }
        strbuf_putc(&attrs, '}');
        result = fuzz_op1(g->b, os, "slice", ag, attrs.s);
        what = "near miss: static slice of an all-gather";
    } else {
        int ops[1 + FUZZ_MAX_RANK] = { kind == DS_COPY ? fuzz_op1(g->b, gs, "copy", ag, "") : ag };
        for (int i = 0; i < rank; i++) {
            char one[40];
            ops[1 + i] = emit_index(g->b, &idx[i]);
            index_text(&idx[i], one, sizeof one);
            strbuf_printf(&starts, "%s%s", i ? "," : "", one);
        }
        strbuf_printf(&attrs, ", dynamic_slice_sizes=%s", sl);
        result = fuzz_op(g->b, os, "dynamic-slice", 1 + rank, ops, attrs.s);
        static const char *const names[] = {
            [DS_MAIN] = "dynamic-slice of an all-gather",
            [DS_OTHER_USER] = "dynamic-slice of an all-gather that has another user",
            [DS_ONE_CUT] = "near miss: dynamic-slice cutting one dim",
            [DS_GATHER_CUT] = "near miss: dynamic-slice cutting the gather dim",
            [DS_LOW_RANK] = "near miss: dynamic-slice of rank below 3",
            [DS_COPY] = "near miss: dynamic-slice of a copy of an all-gather",
        };
        what = names[kind];
        if (kind == DS_OTHER_USER)
            extra[n_extra++] = ag;
    }
    char ct[160], xt[64], gt[64];
    gen_coll_text(&c, ct, sizeof ct);
    strbuf_init(&line);
    strbuf_printf(&line, "#92 %s: x %s gathered on dim %d to %s, sizes %s, starts {%s}, %s, in %s", what,
                  fuzz_shape_text(&xs, xt, sizeof xt), d, fuzz_shape_text(&gs, gt, sizeof gt), sl, starts.s, ct,
                  fuzz_place_name(place));
    snprintf(s->what, sizeof s->what, "%s", line.s);
    strbuf_free(&line);
    strbuf_free(&starts);
    strbuf_free(&attrs);
    FuzzExpect faithful = !match ? FUZZ_KEEP : agree == GEN_AGREE ? FUZZ_EXACT : FUZZ_UNSOUND;
    s->expect[PASS_MODE_FAITHFUL] = faithful;
    s->expect[PASS_MODE_SOUND] = match && from_constants ? FUZZ_EXACT : FUZZ_KEEP;
    s->must_differ[PASS_MODE_FAITHFUL] = faithful == FUZZ_UNSOUND && agree == GEN_DIFFER && ir_type_is_float(t);
    g->odd_site_taken |= faithful == FUZZ_UNSOUND;
    gen_finish(g, s, result, n_extra, extra);
}
