/* gen_reduce.c: sites of the two reduce flips (spec/passes.md 3-4):
 * #102 add(convert(R(g)), gte(parameter)) with R an all-reduce or
 * reduce-scatter, and #104 transpose([convert](reduce-scatter(X))) with X
 * one of the seed's two producer idioms.  Both change the type the
 * reduction runs in when the convert changes it: more precise when a
 * float convert widens (both modes), anything else otherwise (faithful
 * only).  #102 takes a fresh channel_id: with none before and more than
 * one partition that widens the group (cross-replica becomes
 * cross-replica-and-partition), which the project declines for a
 * reduce-scatter (the shape would change) and, for an all-reduce, does in
 * faithful mode only, as the seed does: a known unsoundness. */
#include "gen.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* What a float type can hold, read off its values: the largest finite
 * value, the smallest positive one, and whether it has NaN, infinities,
 * negative values and -0. */
typedef struct Range {
    double max, min_pos;
    bool nan, inf, negative, neg_zero;
} Range;

static Range range_of(IrElemType t)
{
    Range r = { 0 };
    if (t == IR_TYPE_F32 || t == IR_TYPE_F64) {
        bool f = t == IR_TYPE_F32;
        return (Range){ f ? FLT_MAX : DBL_MAX, f ? FLT_TRUE_MIN : DBL_TRUE_MIN, true, true, true, true };
    }
    r.min_pos = INFINITY;
    for (uint32_t p = 0; p < (1u << ir_type_info[t].bits); p++) {
        uint16_t wide = (uint16_t)p;
        uint8_t narrow = (uint8_t)p;
        double v = ir_elem_get_f64(t, ir_type_storage_bytes(t) == 2 ? (const void *)&wide : &narrow);
        r.nan |= isnan(v);
        r.inf |= isinf(v);
        r.negative |= v < 0;
        r.neg_zero |= v == 0 && signbit(v);
        if (isfinite(v) && fabs(v) > r.max)
            r.max = fabs(v);
        if (isfinite(v) && v > 0 && v < r.min_pos)
            r.min_pos = v;
    }
    return r;
}

/* The sound-mode guard, from the spec: a float convert that widens, every
 * value of `from` a value of `to`.  With powers of two as grids, that is:
 * at least the mantissa bits, the range from the smallest positive value
 * up to the largest, and the special values and signs `from` has. */
static bool widens(IrElemType from, IrElemType to)
{
    if (from == to || !ir_type_is_float(from) || !ir_type_is_float(to))
        return false;
    Range a = range_of(from), b = range_of(to);
    return ir_type_info[to].mantissa_bits >= ir_type_info[from].mantissa_bits && b.max >= a.max &&
           b.min_pos <= a.min_pos && (b.nan || !a.nan) && (b.inf || !a.inf) && (b.negative || !a.negative) &&
           (b.neg_zero || !a.neg_zero);
}

/* A (narrow, wide) pair: widening floats most often; then narrowing, the
 * pairs where one of exponent and mantissa widens while the other narrows
 * (f16 <-> bf16, f8e4m3fn <-> f8e5m2, f16 -> f8e4m3fn: a guard that reads
 * only one of them takes these for widening), pairs of the same widths
 * whose bias or special values differ (f8e4m3fn <-> f8e4m3fnuz: a guard
 * that reads only the widths takes these for widening), the f8 kinds widened, an
 * integer to float (whose and / or reducers have no float form), floats and
 * integers to integers, and no change of type.  One module's sites share the
 * pair half the time (g->reduce_pair), so that two reducers are retyped
 * to the same type in it. */
static void draw_types(FuzzGen *g, IrElemType *narrow, IrElemType *wide)
{
    static const IrElemType pairs[][2] = {
        { IR_TYPE_BF16, IR_TYPE_F32 }, { IR_TYPE_F16, IR_TYPE_F32 }, { IR_TYPE_BF16, IR_TYPE_F64 },
        { IR_TYPE_F32, IR_TYPE_F64 },  { IR_TYPE_F16, IR_TYPE_F64 }, { IR_TYPE_F32, IR_TYPE_BF16 },
        { IR_TYPE_F32, IR_TYPE_F16 },  { IR_TYPE_F64, IR_TYPE_F32 }, { IR_TYPE_F16, IR_TYPE_BF16 },
        { IR_TYPE_BF16, IR_TYPE_F16 }, { IR_TYPE_F8E4M3FN, IR_TYPE_F8E5M2 }, { IR_TYPE_F8E5M2, IR_TYPE_F8E4M3FN },
        { IR_TYPE_F16, IR_TYPE_F8E4M3FN }, { IR_TYPE_F8E4M3FN, IR_TYPE_F16 }, { IR_TYPE_F8E5M2, IR_TYPE_F16 },
        { IR_TYPE_F8E4M3FN, IR_TYPE_BF16 }, { IR_TYPE_F8E5M2, IR_TYPE_F32 },
        { IR_TYPE_S32, IR_TYPE_F32 },  { IR_TYPE_U8, IR_TYPE_BF16 }, { IR_TYPE_F32, IR_TYPE_F32 },
        { IR_TYPE_BF16, IR_TYPE_BF16 },
        /* the same widths, another bias or other specials: range lost at one end */
        { IR_TYPE_F8E4M3FN, IR_TYPE_F8E4M3FNUZ }, { IR_TYPE_F8E4M3FNUZ, IR_TYPE_F8E4M3FN },
        { IR_TYPE_F8E4M3B11FNUZ, IR_TYPE_F8E4M3FN }, { IR_TYPE_F8E5M2FNUZ, IR_TYPE_F8E5M2 },
        { IR_TYPE_F8E4M3FN, IR_TYPE_F8E4M3 }, { IR_TYPE_F4E2M1FN, IR_TYPE_F8E4M3FNUZ },   /* -0 has no place */
        /* and widening ones between the narrow kinds */
        { IR_TYPE_F8E4M3B11FNUZ, IR_TYPE_F16 }, { IR_TYPE_F4E2M1FN, IR_TYPE_F8E4M3FN },
        { IR_TYPE_F8E8M0FNU, IR_TYPE_F32 },
        /* the other narrow kinds widened, and narrowed past their range */
        { IR_TYPE_F8E4M3, IR_TYPE_F16 }, { IR_TYPE_F8E3M4, IR_TYPE_BF16 }, { IR_TYPE_F8E8M0FNU, IR_TYPE_BF16 },
        { IR_TYPE_F8E4M3FN, IR_TYPE_F32 }, { IR_TYPE_F8E5M2, IR_TYPE_BF16 }, { IR_TYPE_F8E5M2FNUZ, IR_TYPE_F16 },
        { IR_TYPE_F8E8M0FNU, IR_TYPE_F16 }, { IR_TYPE_F64, IR_TYPE_BF16 }, { IR_TYPE_F32, IR_TYPE_F8E4M3FN },
        /* to an integer type: no float widens into one, whatever it holds (s8 -> s32 holds every value,
         * but the spec's sound guard asks for a float convert) */
        { IR_TYPE_F32, IR_TYPE_S32 }, { IR_TYPE_BF16, IR_TYPE_S16 }, { IR_TYPE_S8, IR_TYPE_S32 },
    };
    FuzzRng *r = g->rng;
    int k = fuzz_chance(r, 40) ? fuzz_below(r, 5) : fuzz_below(r, (int)(sizeof pairs / sizeof pairs[0]));
    if (g->reduce_pair > 0 && fuzz_chance(r, 50))
        k = g->reduce_pair - 1;
    g->reduce_pair = k + 1;
    *narrow = pairs[k][0];
    *wide = pairs[k][1];
}

/* What a rewrite that moves the convert below the reduction is, by mode. */
static void convert_expect(FuzzSite *s, IrElemType from, IrElemType to)
{
    if (from == to) {
        s->expect[PASS_MODE_FAITHFUL] = FUZZ_EXACT;
        s->expect[PASS_MODE_SOUND] = FUZZ_KEEP;
    } else if (widens(from, to)) {
        s->expect[PASS_MODE_FAITHFUL] = s->expect[PASS_MODE_SOUND] = FUZZ_WIDER;
    } else {
        s->expect[PASS_MODE_FAITHFUL] = FUZZ_NARROWER;
        s->expect[PASS_MODE_SOUND] = FUZZ_KEEP;
    }
}

/* add mostly; maximum or minimum; over integers also and / or, which have
 * no float form: retyped to a float they do not verify. */
static const char *draw_reducer(FuzzRng *r, IrElemType t)
{
    if (fuzz_chance(r, 70))
        return "add";
    if (!ir_type_is_float(t) && fuzz_chance(r, 50))
        return fuzz_chance(r, 50) ? "and" : "or";
    return fuzz_chance(r, 50) ? "maximum" : "minimum";
}

/* Can the reduction computation of op over `from` be retyped to `to`?
 * The spec retypes the same computation; and / or have no float form, so
 * over a float there is no rewrite: the pass must keep the site. */
static bool retypable(const char *op, IrElemType to)
{
    return !(ir_type_is_float(to) && (!strcmp(op, "and") || !strcmp(op, "or")));
}

/* reduce-scatter(x) along dim, or all-reduce(x) when dim < 0; the
 * reducer in the given form: the spec retypes the reduction computation
 * whatever it computes, so a retypable form changes no expectation (the
 * others the pass declines: fuzz_reducer_form_retypable). */
static int reduction(FuzzGen *g, int x, int dim, const GenColl *c, const char *reducer, FuzzReducerForm form)
{
    FuzzShape s = fuzz_value_shape(g->b, x);
    char a[1000];
    const char *red = g->huge ? fuzz_reducer_own(g->b, s.type, reducer, form)
                              : fuzz_reducer_in_form(g->b, s.type, reducer, form);
    if (dim < 0) {
        snprintf(a, sizeof a, "%s, to_apply=%%%s", c->attrs, red);
        return fuzz_op1(g->b, s, "all-reduce", x, a);
    }
    s.dims[dim] /= c->size;
    snprintf(a, sizeof a, "%s, dimensions={%d}, to_apply=%%%s", c->attrs, dim, red);
    return fuzz_op1(g->b, s, "reduce-scatter", x, a);
}

/* A shape of rank 1-3 whose dim `dim` (or dim 0) divides by n. */
static FuzzShape reducible_shape(FuzzRng *r, IrElemType t, int n, int *dim, bool scatter)
{
    FuzzShape s = gen_draw_shape(r, t, 1, 3, 1, 4);
    *dim = scatter ? fuzz_below(r, s.rank) : -1;
    if (scatter)
        s.dims[*dim] = n * (1 + fuzz_below(r, 2));
    return s;
}

void fuzz_gen_flip_reduce_convert_add(FuzzGen *g)
{
    FuzzSite *s = gen_begin_site(g, 102);
    if (!s)
        return;
    FuzzRng *r = g->rng;
    FuzzPlace place = s->place;
    int P = fuzz_build_partitions(g->b);
    IrElemType narrow, wide;
    draw_types(g, &narrow, &wide);
    bool scatter = fuzz_chance(r, 50);
    int kind = fuzz_below(r, g->huge ? 10 : 16);     /* huge: the pattern itself, no near miss */
    if (kind == 12)                     /* no convert: the reduction is already in the add's type */
        narrow = wide;
    GenColl c;
    gen_draw_coll(g, &c);
    int dim;
    FuzzShape gs = reducible_shape(r, narrow, c.size, &dim, scatter);
    int grad = fuzz_input(g->b, gs);
    const char *red = draw_reducer(r, narrow);
    FuzzReducerForm form = fuzz_chance(r, 10) ? fuzz_draw_unretypable_form(r) : fuzz_draw_reducer_form(r);
    int rv;
    const char *what = "add of a converted reduction and a parameter's element";
    bool matches = true;
    if (kind == 13) {                   /* convert of an all-gather */
        rv = gen_all_gather(g, grad, fuzz_below(r, gs.rank), &c);
        what = "near miss: the converted collective is an all-gather";
        matches = false;
    } else if (kind == 14) {            /* a two-operand reduction: the convert reads a get-tuple-element */
        int two = fuzz_input(g->b, gs);
        char a[1000];
        FuzzShape os = gs;
        if (dim >= 0)
            os.dims[dim] /= c.size;
        const char *f = fuzz_reducer_in_form(g->b, narrow, red, form);
        if (dim >= 0)
            snprintf(a, sizeof a, "%s, dimensions={%d}, to_apply=%%%s", c.attrs, dim, f);
        else
            snprintf(a, sizeof a, "%s, to_apply=%%%s", c.attrs, f);
        int v = fuzz_op_tuple(g->b, 2, (FuzzShape[]){ os, os }, dim >= 0 ? "reduce-scatter" : "all-reduce", 2,
                              (int[]){ grad, two }, a);
        rv = fuzz_op1(g->b, os, "get-tuple-element", v, ", index=0");
        what = "near miss: the reduction has two operands";
        matches = false;
    } else {
        rv = reduction(g, grad, dim, &c, red, form);
        if (narrow != wide && fuzz_chance(r, 15)) {     /* the retyped reducer's name taken already */
            char taken[160];
            snprintf(taken, sizeof taken, "%s.%s", fuzz_reducer_in_form(g->b, narrow, red, form), ir_type_name(wide));
            fuzz_unused_computation(g->b, taken, wide);
        }
    }
    FuzzShape ws = fuzz_value_shape(g->b, rv);
    ws.type = wide;
    int acc;
    if (kind == 11) {                   /* the accumulator is not a get-tuple-element of a parameter */
        int p = fuzz_input_gte(g->b, ws);
        acc = fuzz_op1(g->b, ws, "copy", p, "");
        what = "near miss: the accumulator is a copy of a parameter's element";
        matches = false;
    } else if (kind == 15) {            /* a get-tuple-element, but of a tuple instruction */
        int p = fuzz_input(g->b, ws);
        int t = fuzz_op_tuple(g->b, 1, &ws, "tuple", 1, &p, "");
        acc = fuzz_op1(g->b, ws, "get-tuple-element", t, ", index=0");
        what = "near miss: the accumulator is an element of a tuple instruction, not of a parameter";
        matches = false;
    } else {
        acc = fuzz_input_gte(g->b, ws);
    }
    int conv = kind == 12 ? rv : fuzz_op1(g->b, ws, "convert", rv, "");
    if (kind == 12) {
        what = "near miss: no convert between the reduction and the add";
        matches = false;
    }
    const char *op = kind == 10 ? "multiply" : "add";
    if (kind == 10) {
        what = "near miss: multiply, not add";
        matches = false;
    }
    int result = fuzz_chance(r, 50) ? fuzz_op2(g->b, ws, op, conv, acc, "") : fuzz_op2(g->b, ws, op, acc, conv, "");
    if (matches && !retypable(red, wide)) {
        what = "near miss: the reduction computation has no form in the wide type (and / or over a float)";
        matches = false;
    }
    if (matches && narrow != wide && !fuzz_reducer_form_retypable(form)) {
        what = "near miss: the reduction computation cannot be retyped (a call, a tuple or an array constant)";
        matches = false;
    }
    if (matches) {
        convert_expect(s, narrow, wide);
        if (!c.channel && P > 1) {      /* a fresh channel_id widens the group */
            if (scatter) {
                s->expect[PASS_MODE_FAITHFUL] = s->expect[PASS_MODE_SOUND] = FUZZ_KEEP;
                what = "reduce-scatter without channel_id, num_partitions > 1 (declined)";
            } else {
                s->expect[PASS_MODE_FAITHFUL] = FUZZ_UNSOUND;
                s->must_differ[PASS_MODE_FAITHFUL] = true;
                s->expect[PASS_MODE_SOUND] = FUZZ_KEEP;
                what = "all-reduce without channel_id, num_partitions > 1: the fresh channel_id widens the group";
            }
        }
    }
    char ct[160], st[64];
    gen_coll_text(&c, ct, sizeof ct);
    fuzz_shape_text(&gs, st, sizeof st);
    snprintf(s->what, sizeof s->what, "#102 %s: %s %s(%s, %s reducer) -> %s, g %s, scatter dim %d, %s, in %s", what,
             scatter ? "reduce-scatter" : "all-reduce", red, ir_type_name(narrow), fuzz_reducer_form_name(form),
             ir_type_name(wide), st, dim, ct, fuzz_place_name(place));
    gen_finish(g, s, result, 0, NULL);
}

/* ---- #104 */

void fuzz_gen_flip_reduce_scatter_transpose(FuzzGen *g)
{
    FuzzSite *s = gen_begin_site(g, 104);
    if (!s)
        return;
    FuzzRng *r = g->rng;
    FuzzPlace place = s->place;
    IrElemType narrow, wide;
    draw_types(g, &narrow, &wide);
    bool convert = fuzz_chance(r, 50);
    if (!convert && !g->huge)           /* huge: every site retypes its reducer */
        wide = narrow;
    convert |= g->huge;
    int kind = fuzz_below(r, g->huge ? 8 : 12);    /* huge: the two producers, no near miss */
    GenColl c;
    gen_draw_coll(g, &c);
    FuzzShape xs = gen_draw_shape(r, narrow, 2, 4, 1, 3);
    int dim = fuzz_below(r, xs.rank);
    xs.dims[dim] = c.size * (1 + fuzz_below(r, 2));
    const char *what;
    bool matches = true;
    int x;
    if (kind < 5) {                     /* add(gte(parameter), y), either order */
        int acc = fuzz_input_gte(g->b, xs), y = fuzz_input(g->b, xs);
        x = fuzz_chance(r, 50) ? fuzz_op2(g->b, xs, "add", acc, y, "") : fuzz_op2(g->b, xs, "add", y, acc, "");
        what = "transpose over a reduce-scatter of add(parameter's element, y)";
    } else if (kind < 9) {              /* reshape(dynamic-update-slice(base, update, 0...)) of the flat operand */
        int64_t n = fuzz_shape_elems(&xs), u = 1 + fuzz_below(r, (int)n);
        FuzzShape flat = fuzz_shape(narrow, 1, &n), us = fuzz_shape(narrow, 1, &u);
        int base = fuzz_input(g->b, flat), upd = fuzz_input(g->b, us);
        char lit[32];
        snprintf(lit, sizeof lit, "%d", fuzz_below(r, (int)(n - u + 1)));
        int at = fuzz_constant(g->b, IR_TYPE_S32, lit);
        int dus = fuzz_op(g->b, flat, "dynamic-update-slice", 3, (int[]){ base, upd, at }, "");
        if (kind == 8) {                /* the seed wants the dynamic-update-slice right under the reshape */
            int cp = fuzz_op1(g->b, flat, "copy", dus, "");
            x = fuzz_op1(g->b, xs, "reshape", cp, "");
            what = "near miss: reshape of a copy of a dynamic-update-slice";
            matches = false;
        } else {
            x = fuzz_op1(g->b, xs, "reshape", dus, "");
            what = "transpose over a reduce-scatter of reshape(dynamic-update-slice)";
        }
    } else if (kind == 9) {             /* multiply, not add */
        int acc = fuzz_input_gte(g->b, xs), y = fuzz_input(g->b, xs);
        x = fuzz_op2(g->b, xs, "multiply", acc, y, "");
        what = "near miss: the producer is multiply(parameter's element, y)";
        matches = false;
    } else if (kind == 11) {            /* add of a get-tuple-element, but of a tuple instruction */
        int p = fuzz_input(g->b, xs), y = fuzz_op1(g->b, xs, "copy", fuzz_input(g->b, xs), "");
        int t = fuzz_op_tuple(g->b, 1, &xs, "tuple", 1, &p, "");
        int e = fuzz_op1(g->b, xs, "get-tuple-element", t, ", index=0");
        x = fuzz_op2(g->b, xs, "add", e, y, "");
        what = "near miss: the add's element is of a tuple instruction, not of a parameter";
        matches = false;
    } else {                            /* add without a parameter's element */
        int a = fuzz_input(g->b, xs), b2 = fuzz_input(g->b, xs);
        int ca = fuzz_op1(g->b, xs, "copy", a, ""), cb = fuzz_op1(g->b, xs, "copy", b2, "");
        x = fuzz_op2(g->b, xs, "add", ca, cb, "");
        what = "near miss: the add has no get-tuple-element of a parameter";
        matches = false;
    }
    const char *red = draw_reducer(r, narrow);
    FuzzReducerForm form = fuzz_chance(r, 10) ? fuzz_draw_unretypable_form(r) : fuzz_draw_reducer_form(r);
    bool over_all_reduce = fuzz_chance(r, 8);       /* the spec's pattern needs a reduce-scatter */
    if (over_all_reduce) {
        what = "near miss: the transpose is over an all-reduce";
        matches = false;
    }
    int rsv = reduction(g, x, over_all_reduce ? -1 : dim, &c, red, form);
    FuzzShape rs = fuzz_value_shape(g->b, rsv);
    int v = rsv;
    if (convert) {
        FuzzShape cs = rs;
        cs.type = wide;
        v = fuzz_op1(g->b, cs, "convert", rsv, "");
    }
    int between = fuzz_below(r, 16);   /* the spec's chain allows one convert and nothing else */
    if (between == 0) {
        v = fuzz_op1(g->b, fuzz_value_shape(g->b, v), "copy", v, "");
        what = "near miss: a copy between the transpose and the reduce-scatter";
        matches = false;
    } else if (between == 1 && convert) {
        v = fuzz_op1(g->b, fuzz_value_shape(g->b, v), "convert", v, "");
        what = "near miss: two converts between the transpose and the reduce-scatter";
        matches = false;
    }
    int perm[FUZZ_MAX_RANK];
    fuzz_shuffle(r, perm, rs.rank);
    FuzzShape ts = fuzz_value_shape(g->b, v);
    char a[120];
    size_t k = (size_t)snprintf(a, sizeof a, ", dimensions={");
    for (int i = 0; i < rs.rank; i++) {
        ts.dims[i] = fuzz_value_shape(g->b, v).dims[perm[i]];
        k += (size_t)snprintf(a + k, sizeof a - k, "%s%d", i ? "," : "", perm[i]);
    }
    snprintf(a + k, sizeof a - k, "}");
    int result = fuzz_op1(g->b, ts, "transpose", v, a);
    if (matches && convert && !retypable(red, wide)) {
        what = "near miss: the reduction computation has no form in the wide type (and / or over a float)";
        matches = false;
    }
    if (matches && convert && narrow != wide && !fuzz_reducer_form_retypable(form)) {
        what = "near miss: the reduction computation cannot be retyped (a call, a tuple or an array constant)";
        matches = false;
    }
    if (matches && convert)
        convert_expect(s, narrow, wide);
    else if (matches)
        s->expect[PASS_MODE_FAITHFUL] = s->expect[PASS_MODE_SOUND] = FUZZ_EXACT;
    char ct[160], st[64], pt[40];
    gen_coll_text(&c, ct, sizeof ct);
    fuzz_shape_text(&xs, st, sizeof st);
    k = 0;
    for (int i = 0; i < rs.rank; i++)
        k += (size_t)snprintf(pt + k, sizeof pt - k, "%s%d", i ? "," : "", perm[i]);
    char types[64];
    if (convert)
        snprintf(types, sizeof types, "convert %s -> %s", ir_type_name(narrow), ir_type_name(wide));
    else
        snprintf(types, sizeof types, "no convert, %s", ir_type_name(narrow));
    snprintf(s->what, sizeof s->what, "#104 %s: %s, reducer %s (%s), X %s, scatter dim %d, perm {%s}, %s, in %s",
             what, types, red, fuzz_reducer_form_name(form), st, dim, pt, ct, fuzz_place_name(place));
    gen_finish(g, s, result, 0, NULL);
}
