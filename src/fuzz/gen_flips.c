/* gen_flips.c: sites of the two all-gather flips whose rules have no
 * guard beyond their pattern (spec/passes.md 3): #96 convert over
 * all-gather and #98 binary over two identical all-gathers, with the near
 * misses each matcher must turn down. */
#include "gen.h"

#include <stdio.h>
#include <string.h>

/* ---- #96 */

/* Pairs of types of one width, for bitcast-convert (not a convert). */
static void bitcast_pair(FuzzRng *r, IrElemType *from, IrElemType *to)
{
    static const IrElemType pairs[][2] = {
        { IR_TYPE_F32, IR_TYPE_S32 }, { IR_TYPE_F32, IR_TYPE_U32 }, { IR_TYPE_BF16, IR_TYPE_S16 },
        { IR_TYPE_F16, IR_TYPE_U16 }, { IR_TYPE_F64, IR_TYPE_S64 }, { IR_TYPE_BF16, IR_TYPE_F16 },
    };
    int k = fuzz_below(r, (int)(sizeof pairs / sizeof pairs[0]));
    bool swap = fuzz_chance(r, 50);
    *from = pairs[k][swap];
    *to = pairs[k][!swap];
}

void fuzz_gen_flip_all_gather_convert(FuzzGen *g)
{
    FuzzSite *s = gen_begin_site(g, 96);
    if (!s)
        return;
    FuzzRng *r = g->rng;
    FuzzPlace place = s->place;
    int kind = fuzz_below(r, 15);
    if (kind == 14 && place != FUZZ_IN_ENTRY)   /* unbounded values stay in the entry */
        kind = 0;
    IrElemType from = fuzz_draw_type(r, false), to = fuzz_draw_type(r, false);
    if (kind == 8)
        bitcast_pair(r, &from, &to);
    if (kind == 9)
        from = to = fuzz_chance(r, 50) ? IR_TYPE_F32 : IR_TYPE_BF16;
    FuzzShape xs = gen_draw_shape(r, from, 1, 4, 1, 4);
    int dim = fuzz_below(r, xs.rank);
    GenColl c;
    gen_draw_coll(g, &c);
    int x = kind == 14 ? gen_unbounded_input(g, xs, fuzz_below(r, xs.rank)) : fuzz_input(g->b, xs);
    if (kind == 12 || kind == 13)       /* a bounded dynamic dim (the gather dim or another) */
        x = gen_bounded(g, x, fuzz_below(r, xs.rank));
    char ct[160], st[64];
    gen_coll_text(&c, ct, sizeof ct);
    int ag = -1, result, extra[2], n_extra = 0;
    const char *what;
    bool rewrites = true;
    if (kind == 10) {                   /* convert(all-reduce(x)): not an all-gather */
        char a[900];
        snprintf(a, sizeof a, "%s, to_apply=%%%s", c.attrs,
                 fuzz_reducer(g->b, from, from == IR_TYPE_PRED ? "or" : "maximum", true));
        int ar = fuzz_op1(g->b, xs, "all-reduce", x, a);
        FuzzShape os = xs;
        os.type = to;
        result = fuzz_op1(g->b, os, "convert", ar, "");
        what = "near miss: convert of an all-reduce";
        rewrites = false;
    } else {
        ag = gen_all_gather(g, x, dim, &c);
        FuzzShape gs = fuzz_value_shape(g->b, ag), os = gs;
        os.type = to;
        switch (kind) {
        case 8:
            result = fuzz_op1(g->b, os, "bitcast-convert", ag, "");
            what = "near miss: bitcast-convert of an all-gather";
            rewrites = false;
            break;
        case 9:
            result = fuzz_op1(g->b, gs, "reduce-precision", ag, ", exponent_bits=5, mantissa_bits=7");
            what = "near miss: reduce-precision of an all-gather";
            rewrites = false;
            break;
        case 11: {
            int cp = fuzz_op1(g->b, gs, "copy", ag, "");
            result = fuzz_op1(g->b, os, "convert", cp, "");
            what = "near miss: convert of a copy of an all-gather";
            rewrites = false;
            break;
        }
        case 6: {                       /* convert(convert(ag)): both flip in the one sweep */
            FuzzShape mid = gs;
            mid.type = fuzz_draw_type(r, false);
            int c1 = fuzz_op1(g->b, mid, "convert", ag, "");
            result = fuzz_op1(g->b, os, "convert", c1, "");
            what = "convert chain over an all-gather";
            break;
        }
        case 14:                        /* an unbounded dim: the same ? flips, a size in its place does not */
            if (fuzz_chance(r, 50)) {
                what = "convert of an all-gather of unbounded shape (not run)";
            } else {
                os.unbounded = 0;
                what = "near miss: a convert of static shape over an all-gather of unbounded shape (not run)";
                rewrites = false;
            }
            result = fuzz_op1(g->b, os, "convert", ag, "");
            break;
        case 12:                        /* the convert keeps its operand's shape, <= and all */
            result = fuzz_op1(g->b, os, "convert", ag, "");
            what = "convert of an all-gather of bounded dynamic shape";
            break;
        case 13:                        /* the convert claims static dims over a bounded gather */
            os.bounded = 0;
            result = fuzz_op1(g->b, os, "convert", ag, "");
            what = "near miss: a convert of static shape over an all-gather of bounded dynamic shape";
            rewrites = false;
            break;
        case 7:                         /* the all-gather has another user */
            result = fuzz_op1(g->b, os, "convert", ag, "");
            extra[n_extra++] = ag;
            what = "convert of an all-gather that has another user";
            break;
        case 5: {                       /* the convert waits for another instruction */
            int before = fuzz_constant(g->b, IR_TYPE_S32, "0");
            result = fuzz_op1(g->b, os, "convert", ag, "");
            fuzz_control(g->b, result, before);
            what = "convert of an all-gather, with a control predecessor";
            break;
        }
        default:
            result = fuzz_op1(g->b, os, "convert", ag, "");
            what = "convert of an all-gather";
            break;
        }
    }
    /* Now and then a staircase beside the site: all-gather, then 17
     * levels of reshape (to the same shape, which #97 flips) and convert
     * (#96).  A round of the pipeline peels one level, since #96 runs
     * before #97 in it, so --iterate stops at its 16 rounds, not at a
     * round that changes nothing.  Every step is exact. */
    int stairs = fuzz_chance(r, 4) ? 17 : 0;
    if (stairs) {
        int v = gen_all_gather(g, fuzz_input(g->b, xs), dim, &c);
        FuzzShape vs = fuzz_value_shape(g->b, v);
        for (int i = 0; i < stairs; i++) {
            v = fuzz_op1(g->b, vs, "reshape", v, "");
            vs.type = vs.type != xs.type ? xs.type : xs.type == IR_TYPE_F32 ? IR_TYPE_BF16 : IR_TYPE_F32;
            v = fuzz_op1(g->b, vs, "convert", v, "");
        }
        extra[n_extra++] = v;
    }
    FuzzShape xv = fuzz_value_shape(g->b, x);
    fuzz_shape_text(&xv, st, sizeof st);
    snprintf(s->what, sizeof s->what, "#96 %s: %s -> %s, x %s, gather dim %d, %s, in %s%s", what,
             ir_type_name(from), ir_type_name(to), st, dim, ct, fuzz_place_name(place),
             stairs ? ", beside a staircase of 17 reshape + convert levels over an all-gather" : "");
    s->expect[PASS_MODE_FAITHFUL] = s->expect[PASS_MODE_SOUND] = rewrites ? FUZZ_EXACT : FUZZ_KEEP;
    gen_finish(g, s, result, n_extra, extra);
}

/* ---- #98 */

static const char *const flip_binaries[] = { "add", "and", "divide", "maximum", "minimum",
                                             "multiply", "or", "remainder", "subtract" };

static bool op_takes(const char *op, IrElemType t)
{
    bool is_float = ir_type_is_float(t), is_pred = t == IR_TYPE_PRED;
    if (!strcmp(op, "and") || !strcmp(op, "or") || !strcmp(op, "xor"))
        return !is_float;
    if (!strcmp(op, "shift-left"))
        return ir_type_is_int(t);
    if (!strcmp(op, "power") || !strcmp(op, "atan2"))
        return is_float;
    return !is_pred;                    /* arithmetic: not on pred */
}

void fuzz_gen_flip_all_gathers_binary(FuzzGen *g)
{
    FuzzSite *s = gen_begin_site(g, 98);
    if (!s)
        return;
    FuzzRng *r = g->rng;
    FuzzPlace place = s->place;
    int P = fuzz_build_partitions(g->b);
    IrElemType t = fuzz_draw_type(r, false);
    int kind = fuzz_below(r, 21);
    if (kind == 20 && place != FUZZ_IN_ENTRY)   /* unbounded values stay in the entry */
        kind = 0;
    const char *op;
    if (kind == 11) {                   /* an elementwise binary outside the nine */
        static const char *const others[] = { "power", "atan2", "xor", "shift-left" };
        do {
            op = others[fuzz_below(r, 4)];
            t = fuzz_draw_type(r, false);
        } while (!op_takes(op, t));
    } else {
        do {
            op = flip_binaries[fuzz_below(r, 9)];
            if (!op_takes(op, t))
                t = fuzz_draw_type(r, false);
        } while (!op_takes(op, t));
    }
    FuzzShape xs = gen_draw_shape(r, t, 1, 4, 1, 4);
    int dim = fuzz_below(r, xs.rank);
    GenColl c, c2;
    gen_draw_coll(g, &c);
    c2 = c;
    bool same_instr = false, not_gather = false, rewrites = true, other_layout = false;
    int written = 0;                    /* kind 18: 1 or 2, the all-gather whose default layout is written */
    int unbounded = 0;                  /* kind 20: 1 a's dim is ?, 2 both a's and b's */
    int tiled = 0;                      /* kind 19: bit 0 the first all-gather tiled, bit 1 the second */
    int dim2 = dim;
    const char *what = "binary over two identical all-gathers";
    switch (kind) {
    case 6:                             /* each has its own channel_id: not identical (the seed compares it) */
        if (c.channel) {
            c2.channel = fuzz_channel(g->b);
            char m[96];
            fuzz_mode_attrs(c.groups.mode, c2.channel, m, sizeof m);
            snprintf(c2.attrs, sizeof c2.attrs, ", replica_groups=%s%s", c.groups.text, m);
            what = "near miss: the two all-gathers differ in channel_id";
            rewrites = false;
        }
        break;
    case 7:                             /* other groups of the same size */
        for (int tries = 0; tries < 8 && !strcmp(c2.groups.canon, c.groups.canon); tries++) {
            GenColl d;
            gen_draw_coll(g, &d);
            if (d.size == c.size && d.groups.mode == c.groups.mode) {
                c2 = d;
                if (c.channel) {    /* same channel id, so only the groups differ */
                    char m[96];
                    c2.channel = c.channel;
                    fuzz_mode_attrs(d.groups.mode, c.channel, m, sizeof m);
                    snprintf(c2.attrs, sizeof c2.attrs, ", replica_groups=%s%s", d.groups.text, m);
                }
            }
        }
        if (strcmp(c2.groups.canon, c.groups.canon)) {
            what = "near miss: the two all-gathers have different groups";
            rewrites = false;
        }
        break;
    case 8:                             /* gathered along different dims (square result) */
        if (xs.rank >= 2 && c.size > 1) {
            dim2 = (dim + 1) % xs.rank;
            xs.dims[dim2] = c.size;     /* b: [dim] as gathered, [dim2] one row each */
            what = "near miss: the all-gathers gather different dims";
            rewrites = false;
        }
        break;
    case 9:
        same_instr = true;
        what = "binary of one all-gather with itself";
        break;
    case 10:
        not_gather = true;
        what = "near miss: one operand is not an all-gather";
        rewrites = false;
        break;
    case 11:
        what = "near miss: a binary op outside the nine";
        rewrites = false;
        break;
    /* The two all-gathers agree on all but one attribute the spec names
     * (flags), or on all but their sharding; or both carry one sharding. */
    case 12:
        snprintf(c2.attrs + strlen(c2.attrs), sizeof c2.attrs - strlen(c2.attrs), ", constrain_layout=true");
        what = "near miss: only one all-gather has constrain_layout=true";
        rewrites = false;
        break;
    case 13:                            /* one partition: with or without channel_id, the same groups */
        if (c.groups.mode == FUZZ_CROSS_REPLICA_PARTITION && P == 1) {
            snprintf(c2.attrs, sizeof c2.attrs, ", replica_groups=%s", c.groups.text);
            c2.channel = 0;
            what = "near miss: only one all-gather has a channel_id (one partition: the same groups)";
            rewrites = false;
        }
        break;
    case 14:                            /* one partition: flattened ids are replica ids */
        if (c.groups.mode == FUZZ_FLATTENED && P == 1) {
            char m[96];
            fuzz_mode_attrs(FUZZ_CROSS_REPLICA_PARTITION, c.channel, m, sizeof m);
            snprintf(c2.attrs, sizeof c2.attrs, ", replica_groups=%s%s", c.groups.text, m);
            what = "near miss: only one all-gather has use_global_device_ids=true (one partition: the same groups)";
            rewrites = false;
        }
        break;
    case 15: {                          /* on the first or on the second */
        GenColl *one = fuzz_chance(r, 50) ? &c : &c2;
        snprintf(one->attrs + strlen(one->attrs), sizeof one->attrs - strlen(one->attrs), ", sharding={replicated}");
        what = one == &c ? "near miss: only the first all-gather has a sharding"
                         : "near miss: only the second all-gather has a sharding";
        rewrites = false;
        break;
    }
    case 16: {                          /* the same sharding, or two */
        bool two = fuzz_chance(r, 40);
        snprintf(c.attrs + strlen(c.attrs), sizeof c.attrs - strlen(c.attrs), ", sharding={maximal device=0}");
        snprintf(c2.attrs + strlen(c2.attrs), sizeof c2.attrs - strlen(c2.attrs), ", sharding={%s}",
                 two ? "replicated" : "maximal device=0");
        what = two ? "near miss: the two all-gathers have different shardings"
                   : "binary over two identical all-gathers with one sharding";
        rewrites = !two;
        break;
    }
    case 17:                            /* the seed compares the shapes with their layouts */
        if (xs.rank >= 2) {
            other_layout = true;
            what = "near miss: the two all-gathers' results are laid out differently";
            rewrites = false;
        }
        break;
    case 18:                            /* an absent layout is the default one (hlo-reference.md 5.6) */
        if (xs.rank >= 2) {
            written = 1 + (int)fuzz_below(r, 2);
            what = written == 1 ? "binary over identical all-gathers, the first's default layout written"
                                : "binary over identical all-gathers, the second's default layout written";
        }
        break;
    case 20:                            /* an unbounded dim: both ? agree, ? against a size does not */
        unbounded = 1 + (int)fuzz_below(r, 2);
        what = unbounded == 2 ? "binary over identical all-gathers of unbounded shape (not run)"
                              : "near miss: one all-gather's result has an unbounded dim (not run)";
        rewrites = unbounded == 2;
        break;
    case 19:                            /* a tiling is part of the layout the seed compares */
        if (xs.rank >= 2) {
            tiled = 1 + (int)fuzz_below(r, 3);
            what = tiled == 3 ? "binary over identical all-gathers, both tiled alike"
                              : "near miss: only one all-gather's layout is tiled";
            rewrites = tiled == 3;
        }
        break;
    default:
        break;
    }
    int ud = unbounded ? fuzz_below(r, xs.rank) : 0;
    int a = unbounded ? gen_unbounded_input(g, xs, ud) : fuzz_input(g->b, xs);
    int ga = gen_all_gather(g, a, dim, &c), gb;
    FuzzShape gs = fuzz_value_shape(g->b, ga);
    if (same_instr) {
        gb = ga;
    } else if (not_gather) {
        gb = fuzz_input(g->b, gs);
    } else {
        FuzzShape bs = xs;
        if (dim2 != dim) {              /* b's shard gathered along dim2 gives ga's shape */
            bs.dims[dim] = gs.dims[dim];
            bs.dims[dim2] = gs.dims[dim2] / c.size;
        }
        int b = unbounded == 2 ? gen_unbounded_input(g, bs, ud) : fuzz_input(g->b, bs);
        gb = gen_all_gather(g, b, dim2, &c2);
        if (other_layout) {             /* major to minor reversed: {0,1,...,r-1} */
            int m2m[FUZZ_MAX_RANK];
            for (int i = 0; i < xs.rank; i++)
                m2m[i] = i;
            fuzz_set_layout(g->b, gb, m2m, xs.rank, NULL);
        }
        int dflt[FUZZ_MAX_RANK];
        for (int i = 0; i < xs.rank; i++)
            dflt[i] = xs.rank - 1 - i;
        if (written)
            fuzz_set_layout(g->b, written == 1 ? ga : gb, dflt, xs.rank, NULL);
        if (tiled & 1)
            fuzz_set_layout(g->b, ga, dflt, xs.rank, "T(2,128)");
        if (tiled & 2)
            fuzz_set_layout(g->b, gb, dflt, xs.rank, "T(2,128)");
    }
    /* No channel_id and more than one partition: the fresh channel_id the
     * rewrite takes would widen the group, so the pass declines. */
    if (rewrites && !c.channel && P > 1) {
        rewrites = false;
        what = "binary over identical all-gathers without channel_id, num_partitions > 1 (declined)";
    }
    int result = fuzz_op2(g->b, gs, op, ga, gb, "");
    char ct[160], st[64];
    gen_coll_text(&c, ct, sizeof ct);
    fuzz_shape_text(&xs, st, sizeof st);
    snprintf(s->what, sizeof s->what, "#98 %s: %s, x %s, gather dim %d, %s, in %s", what, op, st, dim, ct,
             fuzz_place_name(place));
    s->expect[PASS_MODE_FAITHFUL] = s->expect[PASS_MODE_SOUND] = rewrites ? FUZZ_EXACT : FUZZ_KEEP;
    gen_finish(g, s, result, 0, NULL);
}
