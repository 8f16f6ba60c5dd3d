/* test_boundaries.c: rewrites that change a function only at a boundary
 * (equal operands, -0, NaN, integer limits, shift widths, halves) must be
 * found by hlo-check's default trials: 8 trials of --dist=mixed, seed 0, on
 * parameters of 16 elements, of 3, on scalars and on the end of 64.
 * Each row of the table is a before and an after over parameters p, q and
 * r of one element type, checked on every element type of the classes it
 * applies to; a row either must be found DIFFERENT or must stay
 * EQUIVALENT on that class (a rewrite that is right there, such as
 * max(p, q) against select(p > q, p, q) on integers).  The kind of trial
 * that found each row is printed, so a change of the input kinds that
 * loses one shows which.
 *
 * HLOCHECK_BOUNDARY_SEEDS=N instead runs every DIFFERENT row at seeds
 * 0..N-1 on f32, bf16, s32 and u8 (at HLOCHECK_BOUNDARY_SHAPE, default
 * [16]) and prints how many found it (a measurement, not a test). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "check.h"
#include "coll.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static Coll *coll;

/* Type classes a row applies to. */
enum { FLOAT = 1, SIGNED = 2, UNSIGNED = 4, INT = SIGNED | UNSIGNED, NUM = FLOAT | INT };
enum { NAN_ = 1, NEG_ZERO = 2, ARRAY = 4 };   /* ARRAY: not on scalars */

typedef struct Row {
    const char *name;
    int applies;            /* classes checked */
    int differs;            /* classes on which the pair must be found DIFFERENT; EQUIVALENT on the others */
    const char *before, *after;     /* entry bodies; @ is the element type, W its bit width minus one */
    int needs;              /* on floats: the row applies to types that have NaN / -0 only */
} Row;

#define CMP(d) "  ROOT o = pred[16] compare(p, q), direction=" d "\n"
#define ZERO "  z0 = @[] constant(0)\n  z = @[16] broadcast(z0), dimensions={}\n"
#define ONE "  o1 = @[] constant(1)\n  one = @[16] broadcast(o1), dimensions={}\n"

static const Row rows[] = {
    { "GT vs GE", NUM, NUM, CMP("GT"), CMP("GE") , 0 },
    { "LT vs LE", NUM, NUM, CMP("LT"), CMP("LE") , 0 },
    { "EQ vs GE", NUM, NUM, CMP("EQ"), CMP("GE") , 0 },
    { "NE vs GT", NUM, NUM, CMP("NE"), CMP("GT") , 0 },
    { "max vs select(gt)", NUM, FLOAT, "  ROOT o = @[16] maximum(p, q)\n",
      "  g = pred[16] compare(p, q), direction=GT\n  ROOT o = @[16] select(g, p, q)\n" , NAN_ },
    { "min vs select(lt)", NUM, FLOAT, "  ROOT o = @[16] minimum(p, q)\n",
      "  g = pred[16] compare(p, q), direction=LT\n  ROOT o = @[16] select(g, p, q)\n" , NAN_ },
    { "select(gt) vs select(ge) (equal operands)", NUM, FLOAT,
      "  g = pred[16] compare(p, q), direction=GT\n  ROOT o = @[16] select(g, p, q)\n",
      "  g = pred[16] compare(p, q), direction=GE\n  ROOT o = @[16] select(g, p, q)\n" , NEG_ZERO },
    { "x vs x + 0 (-0)", NUM, FLOAT, "  ROOT o = @[16] add(p, p)\n", ZERO "  x = @[16] add(p, p)\n  ROOT o = @[16] add(x, z)\n" , NEG_ZERO },
    { "x vs x * 1 (-0, NaN)", NUM, 0, "  ROOT o = @[16] add(p, q)\n", ONE "  x = @[16] add(p, q)\n  ROOT o = @[16] multiply(x, one)\n" , 0 },
    { "x - y vs x + (-y)", NUM, 0, "  ROOT o = @[16] subtract(p, q)\n", "  n = @[16] negate(q)\n  ROOT o = @[16] add(p, n)\n" , 0 },
    { "x == x vs true (NaN)", NUM, FLOAT, "  ROOT o = pred[16] compare(p, p), direction=EQ\n",
      "  t0 = pred[] constant(true)\n  ROOT o = pred[16] broadcast(t0), dimensions={}\n" , NAN_ },
    { "abs(x) >= 0 vs true (INT_MIN, NaN)", FLOAT | SIGNED, NUM,
      ZERO "  a = @[16] abs(p)\n  ROOT o = pred[16] compare(a, z), direction=GE\n",
      "  t0 = pred[] constant(true)\n  ROOT o = pred[16] broadcast(t0), dimensions={}\n", NAN_ },
    { "abs vs select(x < 0, -x, x)", FLOAT | SIGNED, FLOAT, "  ROOT o = @[16] abs(p)\n",
      ZERO "  n = @[16] negate(p)\n  l = pred[16] compare(p, z), direction=LT\n  ROOT o = @[16] select(l, n, p)\n" , NEG_ZERO },
    { "(p + q) > p vs q > 0 (overflow)", NUM, NUM, "  s = @[16] add(p, q)\n  ROOT o = pred[16] compare(s, p), direction=GT\n",
      ZERO "  ROOT o = pred[16] compare(q, z), direction=GT\n" , 0 },
    { "(p + q) - q vs p (wraps for integers)", NUM, FLOAT,
      "  s = @[16] add(p, q)\n  d = @[16] subtract(s, q)\n  ROOT o = @[16] add(d, d)\n", "  ROOT o = @[16] add(p, p)\n" , 0 },
    { "shift-left by q vs by q & W", INT, INT, "  ROOT o = @[16] shift-left(p, q)\n",
      "  w0 = @[] constant(W)\n  w = @[16] broadcast(w0), dimensions={}\n  m = @[16] and(q, w)\n"
      "  ROOT o = @[16] shift-left(p, m)\n" , 0 },
    { "shift-right-logical by q vs by q & W", INT, INT, "  ROOT o = @[16] shift-right-logical(p, q)\n",
      "  w0 = @[] constant(W)\n  w = @[16] broadcast(w0), dimensions={}\n  m = @[16] and(q, w)\n"
      "  ROOT o = @[16] shift-right-logical(p, m)\n" , 0 },
    { "shift-left by q vs by min(q, W) (counts past the width)", INT, INT, "  ROOT o = @[16] shift-left(p, q)\n",
      "  w0 = @[] constant(W)\n  w = @[16] broadcast(w0), dimensions={}\n  m = @[16] minimum(q, w)\n"
      "  ROOT o = @[16] shift-left(p, m)\n" , 0 },
    { "max vs select(lt) with the arms swapped (NaN in q)", NUM, FLOAT, "  ROOT o = @[16] maximum(p, q)\n",
      "  g = pred[16] compare(p, q), direction=LT\n  ROOT o = @[16] select(g, q, p)\n" , NAN_ | ARRAY },
    { "clamp(lo, x, hi) vs max(min(x, hi), lo)", NUM, NUM, "  ROOT o = @[16] clamp(p, q, r)\n",
      "  a = @[16] minimum(q, r)\n  ROOT o = @[16] maximum(a, p)\n" , 0 },
    { "round-nearest-afz vs round-nearest-even (halves)", FLOAT, FLOAT, "  ROOT o = @[16] round-nearest-afz(p)\n",
      "  ROOT o = @[16] round-nearest-even(p)\n" , 0 },
    { "floor(x + 1/2) vs round-nearest-afz (negative halves)", FLOAT, FLOAT,
      "  h0 = @[] constant(0.5)\n  h = @[16] broadcast(h0), dimensions={}\n  s = @[16] add(p, h)\n"
      "  ROOT o = @[16] floor(s)\n",
      "  ROOT o = @[16] round-nearest-afz(p)\n" , 0 },
    { "x * 2 / 2 vs x (overflow)", NUM, NUM, "  ROOT o = @[16] subtract(p, r)\n",
      "  t0 = @[] constant(2)\n  t = @[16] broadcast(t0), dimensions={}\n  d = @[16] multiply(p, t)\n"
      "  e = @[16] divide(d, t)\n  ROOT o = @[16] subtract(e, r)\n" , 0 },
    { "x * 2 vs x + x", NUM, 0, "  t0 = @[] constant(2)\n  t = @[16] broadcast(t0), dimensions={}\n  ROOT o = @[16] multiply(p, t)\n",
      "  ROOT o = @[16] add(p, p)\n" , 0 },
    { "sort LT vs sort LT TOTALORDER (NaN, -0)", FLOAT, FLOAT,
      "  ROOT o = @[16] sort(p), dimensions={0}, to_apply=%lt\n", "  ROOT o = @[16] sort(p), dimensions={0}, to_apply=%total\n" , NAN_ | ARRAY },
};

static const char comparators[] =
    "%lt (a: @[], b: @[]) -> pred[] {\n  a = @[] parameter(0)\n  b = @[] parameter(1)\n"
    "  ROOT c = pred[] compare(a, b), direction=LT\n}\n\n"
    "%total (a: @[], b: @[]) -> pred[] {\n  a = @[] parameter(0)\n  b = @[] parameter(1)\n"
    "  ROOT c = pred[] compare(a, b), direction=LT, type=TOTALORDER\n}\n\n";

static bool type_has(IrElemType t, int needs)
{
    const IrTypeInfo *fi = &ir_type_info[t];
    bool nan = fi->has_inf || fi->nan_only_all_ones || fi->nan_is_neg_zero;
    bool neg_zero = fi->has_sign && !fi->nan_is_neg_zero;
    return !ir_type_is_float(t) || ((!(needs & NAN_) || nan) && (!(needs & NEG_ZERO) || neg_zero));
}

/* The classes of t.  Integers of under 4 bits hold too few values for the
 * rows' constants, and f8e8m0fnu (scales: no sign, no zero) none of the
 * rows' identities. */
static int class_of(IrElemType t)
{
    if ((ir_type_is_int(t) && ir_type_info[t].bits < 4) || (ir_type_is_float(t) && !ir_type_info[t].has_sign))
        return 0;
    return ir_type_is_float(t) ? FLOAT : ir_type_is_signed_int(t) ? SIGNED : ir_type_is_int(t) ? UNSIGNED : 0;
}

/* The shape every row's values have: "[16]", "[3]", "[]", or "tail": [16]
 * sliced from the end of parameters of 64 elements. */
static const char *dims = "[16]";

/* The text with @ replaced by the type's name, [16] by dims and W by the
 * type's bit width - 1. */
static void expand(const char *tmpl, IrElemType t, char *out, size_t n)
{
    size_t len = 0;
    for (const char *c = tmpl; *c && len + 32 < n; c++) {
        if (*c == '@')
            len += (size_t)snprintf(out + len, n - len, "%s", ir_type_name(t));
        else if (strncmp(c, "[16]", 4) == 0 && strcmp(dims, "tail") != 0 &&
                 (len += (size_t)snprintf(out + len, n - len, "%s", dims)))
            c += 3;
        else if (*c == 'W' && c[1] == ')')
            len += (size_t)snprintf(out + len, n - len, "%d", ir_type_info[t].bits - 1);
        else
            out[len++] = *c;
    }
    out[len] = 0;
}

static IrModule *module_of(const char *name, const char *body, IrElemType t)
{
    char tmpl[4096], text[8192];
    if (strcmp(dims, "tail") == 0)      /* the last 16 of 64 elements: past the kinds' leading tables */
        snprintf(tmpl, sizeof tmpl,
                 "HloModule %s\n\n%sENTRY e {\n  p0 = @[64] parameter(0)\n  q0 = @[64] parameter(1)\n"
                 "  r0 = @[64] parameter(2)\n  p = @[16] slice(p0), slice={[48:64]}\n"
                 "  q = @[16] slice(q0), slice={[48:64]}\n  r = @[16] slice(r0), slice={[48:64]}\n%s}\n",
                 name, strstr(body, "to_apply") ? comparators : "", body);
    else
        snprintf(tmpl, sizeof tmpl,
                 "HloModule %s\n\n%sENTRY e {\n  p = @[16] parameter(0)\n  q = @[16] parameter(1)\n"
                 "  r = @[16] parameter(2)\n%s}\n",
                 name, strstr(body, "to_apply") ? comparators : "", body);
    expand(tmpl, t, text, sizeof text);
    Error err = { 0 };
    IrModule *m = ir_parse_module(text, strlen(text), "boundary.hlo", &err);
    if (!m || !ir_verify_module(m, &err)) {
        error_print(&err, stderr);
        fail_msg("%s does not verify:\n%s", name, text);
    }
    return m;
}

/* Checks the row on type t with the default options at seed; the verdict,
 * or -1 when the interpreter does not run the ops on t (said). */
static int check_row(const Row *row, IrElemType t, uint64_t seed, CheckReport *rep)
{
    IrModule *b = module_of("before", row->before, t), *a = module_of("after", row->after, t);
    CheckOptions opt;
    check_options_default(&opt);
    opt.seed = seed;
    Error err = { 0 };
    bool ok = check_modules(coll, b, a, &opt, rep, &err);
    ir_module_free(b);
    ir_module_free(a);
    if (!ok && err.code == ERR_UNSUPPORTED)
        return -1;
    if (!ok) {
        error_print(&err, stderr);
        fail_msg("%s on %s: the check failed", row->name, ir_type_name(t));
    }
    return rep->equivalent;
}

/* Every row on every type it applies to, at the shape dims. */
static void boundary_table(void)
{
    int found = 0, kept = 0, unsupported = 0, wrong = 0;
    int by_kind[CHECK_DIST_MIXED + 1] = { 0 };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const Row *row = &rows[i];
        for (int t = IR_TYPE_PRED; t < IR_TYPE_C64; t++) {
            int cls = class_of((IrElemType)t);
            if (!(cls & row->applies) || !type_has((IrElemType)t, row->needs) ||
                ((row->needs & ARRAY) && strcmp(dims, "[]") == 0))
                continue;
            CheckReport rep;
            int eq = check_row(row, (IrElemType)t, 0, &rep);
            if (eq < 0) {
                unsupported++;
                printf("  unsupported here: %s on %s\n", row->name, ir_type_name((IrElemType)t));
                continue;
            }
            bool want_differ = (cls & row->differs) != 0;
            if (want_differ && eq) {
                printf("  MISSED %s on %s: EQUIVALENT after %d trials of the default inputs\n", row->name,
                       ir_type_name((IrElemType)t), rep.trials_run);
                wrong++;
            } else if (!want_differ && !eq) {
                printf("  WRONG %s on %s: DIFFERENT at trial %d (%s), element %s: %s vs %s, yet it is an identity "
                       "there\n", row->name, ir_type_name((IrElemType)t), rep.diff.trial,
                       check_dist_name(rep.diff.dist), rep.diff.where, rep.diff.before, rep.diff.after);
                wrong++;
            } else if (want_differ) {
                found++;
                by_kind[rep.diff.dist]++;
            } else {
                kept++;
            }
            check_report_free(&rep);
        }
    }
    printf("  boundaries at %s: %d found different, %d kept equivalent, %d unsupported; found by:", dims, found, kept,
           unsupported);
    for (int k = 0; k <= CHECK_DIST_MIXED; k++)
        if (by_kind[k])
            printf(" %s %d", check_dist_name((CheckDist)k), by_kind[k]);
    printf("\n");
    assert_int_equal(wrong, 0);
    assert_true(found > 100 && unsupported < found / 4);
}

/* The table on arrays of 16 elements, of 3, on scalars (where only one
 * element of each parameter can meet a boundary), and on the last 16
 * elements of 64 (where the kinds' leading tables no longer reach: the
 * values drawn alone must meet the boundaries). */
static void test_boundary_rewrites_are_found_by_default(void **state)
{
    (void)state;
    static const char *const shapes[] = { "[16]", "[3]", "[]", "tail" };
    for (size_t k = 0; k < 4; k++) {
        dims = shapes[k];
        boundary_table();
    }
    dims = "[16]";
}

/* The GT/GE pair of the issue with each single kind: the independent
 * kinds never make p equal q on f32, the copies do on their first trial. */
static void test_independent_draws_miss_equal_operands(void **state)
{
    (void)state;
    IrModule *b = module_of("before", CMP("GT"), IR_TYPE_F32), *a = module_of("after", CMP("GE"), IR_TYPE_F32);
    static const CheckDist independent[] = { CHECK_DIST_UNIFORM, CHECK_DIST_NORMAL, CHECK_DIST_WIDE };
    for (size_t k = 0; k < 3; k++) {
        CheckOptions opt;
        check_options_default(&opt);
        opt.dist = independent[k];
        opt.trials = 64;
        CheckReport rep;
        Error err = { 0 };
        assert_true(check_modules(coll, b, a, &opt, &rep, &err));
        assert_true(rep.equivalent);    /* why the default mixes kinds */
        check_report_free(&rep);
    }
    CheckOptions opt;
    check_options_default(&opt);
    opt.dist = CHECK_DIST_COPIES;
    opt.trials = 1;
    CheckReport rep;
    Error err = { 0 };
    assert_true(check_modules(coll, b, a, &opt, &rep, &err));
    assert_false(rep.equivalent);
    assert_int_equal(rep.diff.dist, CHECK_DIST_COPIES);
    check_report_free(&rep);
    ir_module_free(b);
    ir_module_free(a);
}

/* Informational: how many seeds find each DIFFERENT row on f32 and s32. */
static void test_seeds_that_find_each_row(void **state)
{
    (void)state;
    int seeds = atoi(getenv("HLOCHECK_BOUNDARY_SEEDS"));
    if (getenv("HLOCHECK_BOUNDARY_SHAPE"))
        dims = getenv("HLOCHECK_BOUNDARY_SHAPE");     /* [16] (the default), [3], [] */
    static const IrElemType types[] = { IR_TYPE_F32, IR_TYPE_BF16, IR_TYPE_S32, IR_TYPE_U8 };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
            int cls = class_of(types[k]);
            if (!(cls & rows[i].applies & rows[i].differs) || !type_has(types[k], rows[i].needs) ||
                ((rows[i].needs & ARRAY) && strcmp(dims, "[]") == 0))
                continue;
            int hits = 0;
            for (int s = 0; s < seeds; s++) {
                CheckReport rep;
                hits += check_row(&rows[i], types[k], (uint64_t)s, &rep) == 0;
                check_report_free(&rep);
            }
            printf("  %-55s %-5s %d/%d seeds\n", rows[i].name, ir_type_name(types[k]), hits, seeds);
        }
}

int main(int argc, char **argv)
{
    coll = coll_init(&argc, &argv);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_boundary_rewrites_are_found_by_default),
        cmocka_unit_test(test_independent_draws_miss_equal_operands),
    };
    const struct CMUnitTest sweep[] = { cmocka_unit_test(test_seeds_that_find_each_row) };
    const char *seeds = getenv("HLOCHECK_BOUNDARY_SEEDS");
    int rc = seeds && atoi(seeds) > 0 ? cmocka_run_group_tests(sweep, NULL, NULL)
                                      : cmocka_run_group_tests(tests, NULL, NULL);
    coll_finish(coll, rc);
}
