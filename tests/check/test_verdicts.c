/* test_verdicts.c: the checker's verdict paths that could go wrong, each
 * made to fail where it would lie.
 *  - rng, rng-bit-generator and stochastic-convert modules against
 *    themselves are EQUIVALENT (both modules draw the same streams), and
 *    against a changed bound, distribution, algorithm or rounding DIFFERENT;
 *  - non-commutative ops with swapped operands: DIFFERENT and never PROVED;
 *  - the digest comparison (outputs too big to hold twice) finds a
 *    difference at the first and last element of a block and of the last,
 *    partial block, on every kind of element type, and takes any NaN for
 *    any NaN;
 *  - a shrink cut is kept only when the cut pair still differs. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "check.h"
#include "coll.h"
#include "pass.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static Coll *coll;

static IrModule *parse(const char *text)
{
    Error err = { 0 };
    IrModule *m = ir_parse_module(text, strlen(text), "t.hlo", &err);
    if (!m || !ir_verify_module(m, &err)) {
        error_print(&err, stderr);
        fail_msg("does not verify:\n%s", text);
    }
    return m;
}

/* The report of checking before against after with the default options
 * (and --prove when asked). */
static void check_pair(const char *before, const char *after, bool prove, CheckReport *rep)
{
    IrModule *b = parse(before), *a = parse(after);
    CheckOptions opt;
    check_options_default(&opt);
    opt.prove = prove;
    Error err = { 0 };
    if (!check_modules(coll, b, a, &opt, rep, &err)) {
        error_print(&err, stderr);
        fail_msg("the check failed:\n%s\nagainst\n%s", before, after);
    }
    ir_module_free(b);
    ir_module_free(a);
}

static void expect_verdict(const char *before, const char *after, bool equivalent, const char *what)
{
    CheckReport rep;
    check_pair(before, after, false, &rep);
    if (rep.equivalent != equivalent)
        fail_msg("%s: %s, expected %s", what, rep.equivalent ? "EQUIVALENT" : "DIFFERENT",
                 equivalent ? "EQUIVALENT" : "DIFFERENT");
    check_report_free(&rep);
}

/* ---- Random ops */

#define RNG(lo, hi, dist)                                                                                    \
    "HloModule r\nENTRY e {\n  p = f32[16] parameter(0)\n  lo = f32[] constant(" lo ")\n"                   \
    "  hi = f32[] constant(" hi ")\n  a = f32[16] rng(lo, hi), distribution=" dist "\n"                      \
    "  b = f32[16] rng(lo, hi), distribution=" dist "\n  s = f32[16] add(b, p)\n"                            \
    "  ROOT t = (f32[16], f32[16]) tuple(a, s)\n}\n"
#define BITS(alg)                                                                                            \
    "HloModule g\nENTRY e {\n  p = u64[2] parameter(0)\n"                                                    \
    "  g = (u64[2], u32[16]) rng-bit-generator(p), algorithm=" alg "\n"                                     \
    "  ROOT v = u32[16] get-tuple-element(g), index=1\n}\n"
#define STOCHASTIC "HloModule s\nENTRY e {\n  p = f32[32] parameter(0)\n  r = u32[32] parameter(1)\n" \
                   "  ROOT c = s32[32] stochastic-convert(p, r)\n}\n"
#define NEAREST "HloModule s\nENTRY e {\n  p = f32[32] parameter(0)\n  r = u32[32] parameter(1)\n" \
                "  ROOT c = s32[32] convert(p)\n}\n"

static void test_random_ops_against_themselves_and_changed(void **state)
{
    (void)state;
    expect_verdict(RNG("0", "1", "rng_uniform"), RNG("0", "1", "rng_uniform"), true, "rng against itself");
    expect_verdict(RNG("0", "1", "rng_normal"), RNG("0", "1", "rng_normal"), true, "rng_normal against itself");
    expect_verdict(RNG("0", "1", "rng_uniform"), RNG("0", "2", "rng_uniform"), false, "rng of another bound");
    expect_verdict(RNG("0", "1", "rng_uniform"), RNG("0", "1", "rng_normal"), false, "rng of another distribution");
    expect_verdict(BITS("rng_three_fry"), BITS("rng_three_fry"), true, "rng-bit-generator against itself");
    expect_verdict(BITS("rng_philox"), BITS("rng_philox"), true, "rng-bit-generator philox against itself");
    expect_verdict(BITS("rng_three_fry"), BITS("rng_philox"), false, "rng-bit-generator of another algorithm");
    expect_verdict(STOCHASTIC, STOCHASTIC, true, "stochastic-convert against itself");
    expect_verdict(STOCHASTIC, NEAREST, false, "stochastic-convert against round to nearest");
    /* --prove on the rng pair: never an error, never a wrong proof. */
    CheckReport rep;
    check_pair(RNG("0", "1", "rng_uniform"), RNG("0", "2", "rng_uniform"), true, &rep);
    assert_int_not_equal(rep.proof.status, CHECK_PROOF_PROVED);
    check_report_free(&rep);
}

/* ---- Operand order */

static void test_swapped_operands_are_never_proved(void **state)
{
    (void)state;
    static const struct { const char *type, *op, *result; } ops[] = {
        { "f32", "subtract", "f32" }, { "f32", "divide", "f32" },     { "f32", "power", "f32" },
        { "f32", "atan2", "f32" },    { "f32", "remainder", "f32" },  { "s32", "subtract", "s32" },
        { "s32", "divide", "s32" },   { "s32", "shift-left", "s32" }, { "u8", "shift-right-logical", "u8" },
        { "s16", "remainder", "s16" },
    };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        char b[512], a[512];
#define FMT "HloModule m\nENTRY e {\n  p = %s[16] parameter(0)\n  q = %s[16] parameter(1)\n  ROOT o = %s[16] %s(%s)\n}\n"
        snprintf(b, sizeof b, FMT, ops[i].type, ops[i].type, ops[i].result, ops[i].op, "p, q");
        snprintf(a, sizeof a, FMT, ops[i].type, ops[i].type, ops[i].result, ops[i].op, "q, p");
#undef FMT
        CheckReport rep;
        check_pair(b, a, true, &rep);
        if (rep.equivalent || rep.proof.status == CHECK_PROOF_PROVED)
            fail_msg("%s %s with swapped operands: %s, proof %d", ops[i].type, ops[i].op,
                     rep.equivalent ? "EQUIVALENT" : "DIFFERENT", (int)rep.proof.status);
        assert_int_equal(rep.proof.status, CHECK_PROOF_REFUTED);
        check_report_free(&rep);
    }
    /* Comparisons: LT(p, q) is GT(q, p), not LT(q, p). */
    static const char lt[] = "HloModule m\nENTRY e {\n  p = f32[16] parameter(0)\n  q = f32[16] parameter(1)\n"
                             "  ROOT o = pred[16] compare(p, q), direction=LT\n}\n";
    static const char lt_swapped[] = "HloModule m\nENTRY e {\n  p = f32[16] parameter(0)\n  q = f32[16] parameter(1)\n"
                                     "  ROOT o = pred[16] compare(q, p), direction=LT\n}\n";
    CheckReport rep;
    check_pair(lt, lt_swapped, true, &rep);
    assert_false(rep.equivalent);
    assert_int_not_equal(rep.proof.status, CHECK_PROOF_PROVED);
    check_report_free(&rep);
    /* Integer addition commutes, and is proved so. */
    check_pair("HloModule m\nENTRY e {\n  p = s32[16] parameter(0)\n  q = s32[16] parameter(1)\n"
               "  ROOT o = s32[16] add(p, q)\n}\n",
               "HloModule m\nENTRY e {\n  p = s32[16] parameter(0)\n  q = s32[16] parameter(1)\n"
               "  ROOT o = s32[16] add(q, p)\n}\n", true, &rep);
    assert_true(rep.equivalent);
    assert_int_equal(rep.proof.status, CHECK_PROOF_PROVED);
    check_report_free(&rep);
}

/* Called computations: a comparator or reducer with its parameters swapped,
 * and ops that move data otherwise, are other functions. */
static void test_called_computations_and_movement_are_never_proved_alike(void **state)
{
    (void)state;
#define SORTED(x, y)                                                                                         \
    "HloModule s\n%cmp (a: f32[], b: f32[]) -> pred[] {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n" \
    "  ROOT c = pred[] compare(" x ", " y "), direction=LT\n}\n"                                               \
    "ENTRY e {\n  p = f32[16] parameter(0)\n  ROOT o = f32[16] sort(p), dimensions={0}, to_apply=%cmp\n}\n"
#define SORTED_DIR(d)                                                                                        \
    "HloModule s\n%cmp (a: f32[], b: f32[]) -> pred[] {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n" \
    "  ROOT c = pred[] compare(a, b), direction=" d "\n}\n"                                                    \
    "ENTRY e {\n  p = f32[16] parameter(0)\n  ROOT o = f32[16] sort(p), dimensions={0}, to_apply=%cmp\n}\n"
#define POOLED(op)                                                                                           \
    "HloModule w\n%f (a: f32[], b: f32[]) -> f32[] {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"     \
    "  ROOT c = f32[] " op "(a, b)\n}\n"                                                                       \
    "ENTRY e {\n  p = f32[16] parameter(0)\n  z = f32[] constant(0)\n"                                       \
    "  ROOT o = f32[8] reduce-window(p, z), window={size=2 stride=2}, to_apply=%f\n}\n"
#define REDUCED(x, y)                                                                                        \
    "HloModule r\n%f (a: f32[], b: f32[]) -> f32[] {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"     \
    "  ROOT c = f32[] subtract(" x ", " y ")\n}\n"                                                             \
    "ENTRY e {\n  p = f32[4,8] parameter(0)\n  z = f32[] constant(0)\n"                                       \
    "  ROOT o = f32[4] reduce(p, z), dimensions={1}, to_apply=%f\n}\n"
#define MOVED(op) "HloModule m\nENTRY e {\n  p = f32[16] parameter(0)\n  ROOT o = f32[16] " op "\n}\n"
    static const char *const pairs[][2] = {
        { SORTED("a", "b"), SORTED("b", "a") },
        { SORTED_DIR("LT"), SORTED_DIR("GT") },
        { POOLED("maximum"), POOLED("minimum") },
        { REDUCED("a", "b"), REDUCED("b", "a") },
        { MOVED("reverse(p), dimensions={0}"), MOVED("copy(p)") },
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        CheckReport rep;
        check_pair(pairs[i][0], pairs[i][1], true, &rep);
        if (rep.equivalent || rep.proof.status == CHECK_PROOF_PROVED)
            fail_msg("pair %zu: %s, proof %d:\n%s\nagainst\n%s", i, rep.equivalent ? "EQUIVALENT" : "DIFFERENT",
                     (int)rep.proof.status, pairs[i][0], pairs[i][1]);
        check_report_free(&rep);
    }
#undef SORTED
#undef SORTED_DIR
#undef POOLED
#undef REDUCED
#undef MOVED
}

/* ---- Verdicts by accuracy */

static void test_the_accuracy_rule(void **state)
{
    (void)state;
    CheckAccuracy b = { .n = 10, .sum_abs = 1.0 }, a = b;
    assert_true(check_no_less_accurate(&b, &a));
    a.sum_abs = 0.5;
    assert_true(check_no_less_accurate(&b, &a));
    a.sum_abs = 1.0 + 1e-12;                   /* within the relative 1e-9 */
    assert_true(check_no_less_accurate(&b, &a));
    a.sum_abs = 1.01;
    assert_false(check_no_less_accurate(&b, &a));
    a.sum_abs = 1.0;
    a.nonfinite = 1;
    assert_false(check_no_less_accurate(&b, &a));
    b.nonfinite = 1;
    assert_true(check_no_less_accurate(&b, &a));
}

/* An output whose mean error grew after improved sites: judged by the
 * sites while no more of its elements got worse than chance allows (sign
 * test, worse - better <= 3 sqrt(worse + better)), and only when the sites
 * decide; a significant majority of worse elements, or a new non-finite
 * miss, and the mean error rules. */
static void test_an_output_worse_by_chance_is_judged_by_the_sites(void **state)
{
    (void)state;
    CheckOutput o = { .before = { .n = 128, .sum_abs = 1.0 }, .after = { .n = 128, .sum_abs = 1.001 } };
    o.duel = (CheckDuel){ .better = 0, .equal = 127, .worse = 1 };
    assert_false(check_no_less_accurate(&o.before, &o.after));
    assert_true(check_output_no_less_accurate(&o, true));
    assert_false(check_output_no_less_accurate(&o, false));
    o.duel = (CheckDuel){ .better = 45, .equal = 0, .worse = 55 };     /* 10 <= 3 * sqrt(100) */
    assert_true(check_output_no_less_accurate(&o, true));
    o.duel = (CheckDuel){ .better = 30, .equal = 0, .worse = 70 };     /* 40 > 30: significant */
    assert_false(check_output_no_less_accurate(&o, true));
    o.duel = (CheckDuel){ .better = 0, .equal = 127, .worse = 1 };
    o.after.nonfinite = 1;
    assert_false(check_output_no_less_accurate(&o, true));
    o.after = o.before;                                     /* no worse: the mean rule alone passes */
    o.duel = (CheckDuel){ .better = 0, .equal = 0, .worse = 100 };
    assert_true(check_output_no_less_accurate(&o, false));
}

/* flip-reduce-convert-add's rewrite of an all-reduce: judged by accuracy
 * (AT LEAST AS ACCURATE, NOT EXACT under --prove, on uniform draws), here
 * on one device, where its sums have one term. */
#define REDUCED_IN(acc, out)                                                                                 \
    "HloModule p\n%add (x: " acc "[], y: " acc "[]) -> " acc "[] {\n  x = " acc "[] parameter(0)\n"          \
    "  y = " acc "[] parameter(1)\n  ROOT s = " acc "[] add(x, y)\n}\n"                                      \
    "ENTRY e {\n  st = (" out "[64], f32[64]) parameter(0)\n  acc = " out "[64] get-tuple-element(st), index=0\n"  \
    "  g = f32[64] get-tuple-element(st), index=1\n"                                                            \
    "  ar = f32[64] all-reduce(g), replica_groups={}, to_apply=%add\n  c = " out "[64] convert(ar)\n"         \
    "  ROOT r = " out "[64] add(c, acc)\n}\n"

static void test_a_precision_change_is_judged_by_accuracy(void **state)
{
    (void)state;
    IrModule *b = parse(REDUCED_IN("f32", "f64"));
    const Pass *pass = pass_find("flip-reduce-convert-add");
    assert_non_null(pass);
    PassOptions po;
    pass_options_default(&po);
    bool changed = false;
    Error err = { 0 };
    IrModule *a = check_rewrite(b, &pass, 1, &po, &changed, &err);
    assert_non_null(a);
    assert_true(changed);
    CheckOptions opt;
    check_options_default(&opt);
    opt.prove = true;
    CheckReport rep;
    assert_true(check_modules(coll, b, a, &opt, &rep, &err));
    assert_true(rep.precision_changing && rep.by_accuracy);
    assert_true(rep.equivalent);
    assert_int_equal(rep.proof.status, CHECK_PROOF_NOT_EXACT);
    assert_int_equal(rep.dist, CHECK_DIST_UNIFORM);     /* accuracy on values of the program's kind */
    check_report_free(&rep);
    ir_module_free(a);
    ir_module_free(b);
}

/* ---- Digests */

enum { BLOCK = 1 << 20, N = 2 * BLOCK + BLOCK / 2 };

static Value *array_of(IrElemType t, int64_t n)
{
    static Arena *arena;
    if (!arena)
        arena = arena_new(1 << 12);     /* the shapes live as long as the test */
    Error err = { 0 };
    IrShape *shape = ir_shape_new_array(arena, t, 1, (int64_t[]){ n });
    Value *v = value_new_array(shape, &err);
    assert_non_null(v);
    /* A pattern of ordinary values: no NaN, so that a flipped bit shows. */
    size_t es = (size_t)ir_type_storage_bytes(t);
    for (int64_t i = 0; i < n; i++) {
        char *p = (char *)v->data + (size_t)i * es;
        if (ir_type_is_int(t))
            ir_elem_set_i64(t, p, i % 7);
        else if (ir_type_is_complex(t)) {
            IrElemType part = t == IR_TYPE_C64 ? IR_TYPE_F32 : IR_TYPE_F64;
            ir_elem_set_f64(part, p, (double)(i % 5));
            ir_elem_set_f64(part, p + es / 2, (double)(i % 3));
        } else
            ir_elem_set_f64(t, p, (double)(i % 5) / 4);
    }
    return v;
}

static void test_digest_finds_block_edges(void **state)
{
    (void)state;
    static const IrElemType types[] = { IR_TYPE_F32, IR_TYPE_BF16, IR_TYPE_F64, IR_TYPE_S8, IR_TYPE_U64, IR_TYPE_C64,
                                        IR_TYPE_F8E4M3FN };
    static const int64_t at[] = { 0, BLOCK - 1, BLOCK, 2 * BLOCK - 1, 2 * BLOCK, N - 1 };
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
        IrElemType t = types[k];
        size_t es = (size_t)ir_type_storage_bytes(t);
        Value *a = array_of(t, N), *b = array_of(t, N);
        CheckDigest *d = check_digest_new(&a, 1);
        int leaf;
        int64_t first, count;
        assert_false(check_digest_first_mismatch(d, &b, 1, &leaf, &first, &count));
        for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
            char *p = (char *)b->data + (size_t)at[i] * es;
            p[0] ^= 0x01;       /* the lowest bit of the element: another value, never a NaN of this pattern */
            if (!check_digest_first_mismatch(d, &b, 1, &leaf, &first, &count))
                fail_msg("%s: a difference at element %lld is not seen by the digest", ir_type_name(t),
                         (long long)at[i]);
            assert_int_equal(leaf, 0);
            assert_true(first <= at[i] && at[i] < first + count);
            assert_int_equal(first % BLOCK, 0);
            assert_true(first + count <= N);
            p[0] ^= 0x01;
        }
        check_digest_free(d);
        value_release(a);
        value_release(b);
    }
    /* +0 against -0 and 0 against NaN are differences, in every block. */
    static const uint32_t other[] = { 0x80000000u, 0x7fc00000u };
    for (int k = 0; k < 2; k++) {
        Value *x = array_of(IR_TYPE_F32, N), *y = array_of(IR_TYPE_F32, N);
        memset(x->data, 0, 4 * (size_t)N);
        memset(y->data, 0, 4 * (size_t)N);
        CheckDigest *dz = check_digest_new(&x, 1);
        for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
            int leaf;
            int64_t first, count;
            memcpy((char *)y->data + 4 * at[i], &other[k], 4);
            assert_true(check_digest_first_mismatch(dz, &y, 1, &leaf, &first, &count));
            memset((char *)y->data + 4 * at[i], 0, 4);
        }
        check_digest_free(dz);
        value_release(x);
        value_release(y);
    }
    /* Any NaN for any NaN: two payloads, one block. */
    Value *a = array_of(IR_TYPE_F32, 8), *b = array_of(IR_TYPE_F32, 8);
    memcpy((char *)a->data + 4, &(uint32_t){ 0x7fc00001u }, 4);
    memcpy((char *)b->data + 4, &(uint32_t){ 0xffc00000u }, 4);
    CheckDigest *d = check_digest_new(&a, 1);
    int leaf;
    int64_t first, count;
    assert_false(check_digest_first_mismatch(d, &b, 1, &leaf, &first, &count));
    check_digest_free(d);
    value_release(a);
    value_release(b);
}

/* check_first_difference finds a single differing element wherever it is,
 * the first and the last included, under every comparison mode. */
static void test_first_difference_at_either_end(void **state)
{
    (void)state;
    static const IrElemType types[] = { IR_TYPE_F32, IR_TYPE_BF16, IR_TYPE_S8, IR_TYPE_F64, IR_TYPE_PRED };
    static const CheckCompare modes[] = { CHECK_EXACT, CHECK_TOL, CHECK_ULP };
    static const int64_t sizes[] = { 1, 2, 7, 64, 1000 };
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++)
        for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
            int64_t n = sizes[z];
            Value *a = array_of(types[k], n), *b = array_of(types[k], n);
            size_t es = (size_t)ir_type_storage_bytes(types[k]);
            const int64_t at[3] = { 0, n / 2, n - 1 };
            for (int i = 0; i < 3; i++)
                for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
                    CheckTolerance tol = { modes[m], 0, 0, 0 };
                    assert_int_equal(check_first_difference(a, b, &tol), -1);
                    char *p = (char *)b->data + (size_t)at[i] * es;
                    unsigned char was = (unsigned char)p[es - 1];
                    p[es - 1] ^= types[k] == IR_TYPE_PRED ? 0x01 : 0x40;     /* an exponent or high bit */
                    if (check_first_difference(a, b, &tol) != at[i])
                        fail_msg("%s[%lld], mode %d: the difference at %lld is not the first found",
                                 ir_type_name(types[k]), (long long)n, (int)modes[m], (long long)at[i]);
                    p[es - 1] = (char)was;
                }
            value_release(a);
            value_release(b);
        }
}

/* The same through check_modules: a --max-memory between what the lean and
 * the whole comparison need, a difference at each block edge. */
static void test_lean_check_finds_block_edges(void **state)
{
    (void)state;
    static const int64_t at[] = { 0, BLOCK - 1, BLOCK, N - 1 };
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
        char b[512], a[1024];
        snprintf(b, sizeof b, "HloModule b\nENTRY e {\n  p = f32[%d] parameter(0)\n  ROOT o = f32[%d] add(p, p)\n}\n",
                 N, N);
        snprintf(a, sizeof a,
                 "HloModule a\nENTRY e {\n  p = f32[%d] parameter(0)\n  s = f32[%d] add(p, p)\n"
                 "  i = s32[%d] iota(), iota_dimension=0\n  k0 = s32[] constant(%lld)\n"
                 "  k = s32[%d] broadcast(k0), dimensions={}\n  m = pred[%d] compare(i, k), direction=EQ\n"
                 "  one = f32[] constant(1)\n  ob = f32[%d] broadcast(one), dimensions={}\n"
                 "  t = f32[%d] add(s, ob)\n  ROOT o = f32[%d] select(m, t, s)\n}\n",
                 N, N, N, (long long)at[i], N, N, N, N, N);
        IrModule *mb = parse(b), *ma = parse(a);
        InterpMemory whole, lean;
        check_pair_need(mb, ma, NULL, &whole);
        check_pair_lean_need(mb, ma, &lean);
        assert_true(lean.peak < whole.peak);
        CheckOptions opt;
        check_options_default(&opt);
        opt.max_memory = lean.peak;
        opt.trials = 1;
        CheckReport rep;
        Error err = { 0 };
        assert_true(check_modules(coll, mb, ma, &opt, &rep, &err));
        assert_true(rep.by_digest);
        assert_false(rep.equivalent);
        assert_int_equal(rep.diff.index, at[i]);
        check_report_free(&rep);
        ir_module_free(mb);
        ir_module_free(ma);
    }
}

/* ---- Shrink cuts */

static bool cut_to_identical(CheckShrink *s, int64_t index, Error *err)
{
    (void)index;
    IrModule *copy = ir_module_copy(s->before, err);
    if (!copy)
        return false;
    ir_module_free(s->after);
    s->after = copy;        /* a cut after which the two no longer differ */
    return true;
}

static bool cut_that_does_not_apply(CheckShrink *s, int64_t index, Error *err)
{
    (void)s;
    (void)index;
    (void)err;
    return false;
}

static void test_shrink_keeps_a_cut_only_when_it_still_differs(void **state)
{
    (void)state;
    IrModule *b = parse("HloModule b\nENTRY e {\n  p = f32[8] parameter(0)\n  q = f32[8] parameter(1)\n"
                        "  n = f32[8] negate(p)\n  ROOT o = f32[8] subtract(n, q)\n}\n");
    IrModule *a = parse("HloModule a\nENTRY e {\n  p = f32[8] parameter(0)\n  q = f32[8] parameter(1)\n"
                        "  n = f32[8] negate(p)\n  ROOT o = f32[8] subtract(q, n)\n}\n");
    CheckOptions opt;
    check_options_default(&opt);
    CheckReport rep;
    Error err = { 0 };
    assert_true(check_modules(coll, b, a, &opt, &rep, &err));
    assert_false(rep.equivalent);
    CheckShrink s;
    assert_true(check_shrink(coll, b, a, &opt, &rep, &s, &err));
    CheckOptions quiet = opt;
    quiet.tol.mode = CHECK_EXACT;
    quiet.trials = 1;
    StrBuf was;
    strbuf_init(&was);
    ir_print_module(&was, s.after);
    CheckShrinkCut cuts[2] = { cut_to_identical, cut_that_does_not_apply };
    for (int k = 0; k < 2; k++) {
        CheckDifference diff = rep.diff;
        bool kept = true;
        assert_true(check_shrink_try_cut(coll, &quiet, cuts[k], &s, &diff, &kept, &err));
        assert_false(kept);
        StrBuf now;
        strbuf_init(&now);
        ir_print_module(&now, s.after);
        assert_string_equal(now.s, was.s);      /* the pair as it was */
        strbuf_free(&now);
        assert_int_equal(diff.index, rep.diff.index);
    }
    /* The real element cut on this element-wise pair is kept, and differs. */
    CheckDifference diff = rep.diff;
    bool kept = false;
    assert_true(check_shrink_try_cut(coll, &quiet, check_shrink_to_element, &s, &diff, &kept, &err));
    assert_true(kept && diff.found);
    assert_int_equal(s.after->entry->root->shape->rank, 0);
    strbuf_free(&was);
    check_shrink_free(&s);
    check_report_free(&rep);
    ir_module_free(b);
    ir_module_free(a);
}

int main(int argc, char **argv)
{
    coll = coll_init(&argc, &argv);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_ops_against_themselves_and_changed),
        cmocka_unit_test(test_swapped_operands_are_never_proved),
        cmocka_unit_test(test_called_computations_and_movement_are_never_proved_alike),
        cmocka_unit_test(test_the_accuracy_rule),
        cmocka_unit_test(test_an_output_worse_by_chance_is_judged_by_the_sites),
        cmocka_unit_test(test_a_precision_change_is_judged_by_accuracy),
        cmocka_unit_test(test_digest_finds_block_edges),
        cmocka_unit_test(test_lean_check_finds_block_edges),
        cmocka_unit_test(test_first_difference_at_either_end),
        cmocka_unit_test(test_shrink_keeps_a_cut_only_when_it_still_differs),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    coll_finish(coll, rc);
}
