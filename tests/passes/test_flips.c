/* test_flips.c: the six flip passes (src/passes/flip_*.c, expand.c).
 * Unit tests of the pieces with arithmetic in them (#97's common-factor
 * mapping, #104's new scatter dim, the sound-mode type test), of the driver
 * (declines counted, one sweep), and a walk over corpus/<pass>/ that runs
 * every module through its pass in faithful and sound mode and holds it to
 * the rewrites: / sound_rewrites: lines of its .expect file.  Run from the
 * repo root (make test does). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expand.h"
#include "ir.h"
#include "pass.h"

/* ------------------------------------------------------------------ */
/* #97: XLA's CommonFactors and the seed's dim mapping                  */

/* CommonFactors(a, b) gives exactly the n pairs in want. */
static void expect_factors(const int64_t *a, int na, const int64_t *b, int nb, const int64_t (*want)[2], int n)
{
    int64_t got[2 * IR_MAX_RANK + 2][2];
    int k = flip_common_factors(a, na, b, nb, got);
    assert_int_equal(k, n);
    for (int i = 0; i < n; i++) {
        assert_int_equal(got[i][0], want[i][0]);
        assert_int_equal(got[i][1], want[i][1]);
    }
}

static void test_common_factors_equal_shapes_bound_every_dim(void **state)
{
    (void)state;
    const int64_t a[] = { 2, 3 }, want[][2] = { { 0, 0 }, { 1, 1 }, { 2, 2 } };
    expect_factors(a, 2, a, 2, want, 3);
}

static void test_common_factors_split_after_gather_dim(void **state)
{
    (void)state;    /* XLA's ReshapeWithinShardAfterAllGatherDim: [8,32,1024] -> [8,32,8,128] */
    const int64_t out[] = { 8, 32, 8, 128 }, in[] = { 8, 32, 1024 };
    const int64_t want[][2] = { { 0, 0 }, { 1, 1 }, { 2, 2 }, { 4, 3 } };
    expect_factors(out, 4, in, 3, want, 4);
}

static void test_common_factors_flatten_is_one_block(void **state)
{
    (void)state;
    const int64_t out[] = { 64 }, in[] = { 4, 16 }, want[][2] = { { 0, 0 }, { 1, 2 } };
    expect_factors(out, 1, in, 2, want, 2);
}

static void test_common_factors_unit_dims_get_their_own_block(void **state)
{
    (void)state;
    const int64_t out1[] = { 16 }, in1[] = { 1, 16 }, want1[][2] = { { 0, 0 }, { 0, 1 }, { 1, 2 } };
    expect_factors(out1, 1, in1, 2, want1, 3);
    const int64_t out2[] = { 4, 64, 1 }, in2[] = { 4, 64 };
    const int64_t want2[][2] = { { 0, 0 }, { 1, 1 }, { 2, 2 }, { 3, 2 } };
    expect_factors(out2, 3, in2, 2, want2, 4);
}

static void test_common_factors_merge_and_split(void **state)
{
    (void)state;    /* [3,4,6] -> [12,2,3]: dims 0,1 merge into 0; dim 2 splits into 1,2 */
    const int64_t out[] = { 12, 2, 3 }, in[] = { 3, 4, 6 };
    const int64_t want[][2] = { { 0, 0 }, { 1, 2 }, { 3, 3 } };
    expect_factors(out, 3, in, 3, want, 3);
}

static void test_common_factors_regroup_and_zeros(void **state)
{
    (void)state;
    const int64_t out[] = { 3, 4 }, in[] = { 4, 3 }, want[][2] = { { 0, 0 }, { 2, 2 } };
    expect_factors(out, 2, in, 2, want, 2);
    const int64_t zout[] = { 0, 5 }, zin[] = { 5, 0 }, zwant[][2] = { { 0, 0 }, { 2, 2 } };
    expect_factors(zout, 2, zin, 2, zwant, 2);
}

static void test_dim_map_flatten_only_merges(void **state)
{
    (void)state;
    const int64_t in[] = { 4, 16 }, out[] = { 64 };
    ReshapeDimMap map;
    flip_reshape_dim_map(in, 2, out, 1, &map);
    assert_true(map.only_merge);
    assert_int_equal(map.first[0], 0);
    assert_int_equal(map.count[0], 1);
    assert_int_equal(map.first[1], 0);
    assert_int_equal(map.count[1], 1);
    assert_int_equal(map.block[0], map.block[1]);
}

static void test_dim_map_split_is_not_only_merge(void **state)
{
    (void)state;
    const int64_t in[] = { 3, 4, 6 }, out[] = { 12, 2, 3 };
    ReshapeDimMap map;
    flip_reshape_dim_map(in, 3, out, 3, &map);
    assert_false(map.only_merge);
    assert_int_equal(map.first[1], 0);
    assert_int_equal(map.count[1], 1);
    assert_int_equal(map.first[2], 1);
    assert_int_equal(map.count[2], 2);
    assert_int_equal(map.block[0], map.block[1]);
    assert_int_not_equal(map.block[1], map.block[2]);
}

static void test_dim_map_dropped_unit_dim_maps_nowhere(void **state)
{
    (void)state;
    const int64_t in[] = { 1, 16 }, out[] = { 16 };
    ReshapeDimMap map;
    flip_reshape_dim_map(in, 2, out, 1, &map);
    assert_false(map.only_merge);   /* the 1's block has no output dim */
    assert_int_equal(map.count[0], 0);
    assert_int_equal(map.first[1], 0);
    assert_int_equal(map.count[1], 1);
}

/* ------------------------------------------------------------------ */
/* #104: the scatter dim after the transpose                           */

static void test_scatter_dim_is_inverse_permuted(void **state)
{
    (void)state;
    const int64_t swap[] = { 1, 0 }, rot[] = { 2, 0, 1 }, mid[] = { 0, 2, 1, 3 };
    assert_int_equal(flip_scatter_dim_after_transpose(swap, 2, 0), 1);
    assert_int_equal(flip_scatter_dim_after_transpose(rot, 3, 1), 2);
    assert_int_equal(flip_scatter_dim_after_transpose(rot, 3, 2), 0);
    assert_int_equal(flip_scatter_dim_after_transpose(mid, 4, 2), 1);
    assert_int_equal(flip_scatter_dim_after_transpose(mid, 4, 3), 3);
}

static void test_scatter_dim_missing_is_minus_one(void **state)
{
    (void)state;
    const int64_t broken[] = { 1, 1 };
    assert_int_equal(flip_scatter_dim_after_transpose(broken, 2, 0), -1);
}

/* ------------------------------------------------------------------ */
/* Helpers                                                              */

static IrModule *parse_text(const char *text)
{
    Error err = { 0 };
    IrModule *m = ir_parse_module(text, strlen(text), "t.hlo", &err);
    if (!m)
        error_print(&err, stderr);
    assert_non_null(m);
    return m;
}

static char *module_text(const IrModule *m)
{
    StrBuf b;
    strbuf_init(&b);
    ir_print_module(&b, m);
    return b.s;
}

/* Runs one pass the way hlo-opt does (dead code removed); its stats in *st. */
static bool run_pass(IrModule *m, const char *name, PassMode mode, PassStats *st, Error *err)
{
    const Pass *p = pass_find(name);
    assert_non_null(p);
    PassOptions opt;
    pass_options_default(&opt);
    opt.mode = mode;
    PipelineStats *stats = calloc(1, sizeof *stats);
    bool changed = false;
    bool ok = pass_run_pipeline(m, &p, 1, &opt, stats, &changed, err);
    if (st)
        *st = stats->stats[0];
    free(stats);
    assert_true(ok);
    return changed;
}

static const char *const REDUCE_SCATTER_TRANSPOSE =
    "HloModule m, replica_count=2\n\n"
    "sum {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n\n"
    "ENTRY e {\n  st = (f32[8,4]) parameter(0)\n  y = f32[8,4] parameter(1)\n"
    "  a = f32[8,4] get-tuple-element(st), index=0\n  g = f32[8,4] add(a, y)\n"
    "  rs = f32[4,4] reduce-scatter(g), replica_groups={{0,1}}, dimensions={0}, to_apply=sum\n"
    "  ROOT t = f32[4,4] transpose(rs), dimensions={1,0}\n}\n";

static void test_rs_transpose_missing_scatter_dim_is_internal_error(void **state)
{
    (void)state;
    IrModule *m = parse_text(REDUCE_SCATTER_TRANSPOSE);
    IrInstr *t = m->entry->root;
    assert_int_equal(t->op, IR_OP_TRANSPOSE);
    t->lists[IR_LIST_DIMENSIONS].v[1] = 1;   /* {1,1}: dimension 0 is gone */
    PassOptions opt;
    pass_options_default(&opt);
    PassStats st = { 0 };
    Error err = { 0 };
    assert_int_equal(pass_flip_reduce_scatter_transpose(m, &opt, &st, &err), PASS_FAILED);
    assert_int_equal(err.code, ERR_INTERNAL);
    assert_non_null(strstr(err.msg, "Failed to find new scatter dim"));
    ir_module_free(m);
}

static void test_rs_transpose_flips_with_inverse_dim(void **state)
{
    (void)state;
    IrModule *m = parse_text(REDUCE_SCATTER_TRANSPOSE);
    Error err = { 0 };
    assert_true(run_pass(m, "flip-rs-transpose", PASS_MODE_FAITHFUL, NULL, &err));
    IrInstr *rs = m->entry->root;
    assert_int_equal(rs->op, IR_OP_REDUCE_SCATTER);
    assert_int_equal(rs->lists[IR_LIST_DIMENSIONS].v[0], 1);
    assert_int_equal(rs->operands[0]->op, IR_OP_TRANSPOSE);
    assert_true(ir_verify_module(m, &err));
    ir_module_free(m);
}

/* ------------------------------------------------------------------ */
/* Sound mode: the type test and the declines --stats shows            */

static void test_widening_float_convert(void **state)
{
    (void)state;
    assert_true(expand_is_widening_float(IR_TYPE_BF16, IR_TYPE_F32));
    assert_true(expand_is_widening_float(IR_TYPE_F16, IR_TYPE_F32));
    assert_true(expand_is_widening_float(IR_TYPE_F32, IR_TYPE_F64));
    assert_true(expand_is_widening_float(IR_TYPE_F8E4M3FN, IR_TYPE_BF16));
    assert_false(expand_is_widening_float(IR_TYPE_F32, IR_TYPE_BF16));
    assert_false(expand_is_widening_float(IR_TYPE_F16, IR_TYPE_BF16));
    assert_false(expand_is_widening_float(IR_TYPE_BF16, IR_TYPE_F16));
    assert_false(expand_is_widening_float(IR_TYPE_F32, IR_TYPE_F32));
    assert_false(expand_is_widening_float(IR_TYPE_S32, IR_TYPE_F64));
    /* The same widths, another bias: f8e4m3fnuz's largest is 240, not
     * 448, and f8e4m3fn has no 2^-10 (fnuz's smallest); the b11 kind's
     * smallest is 2^-13.  f4e2m1fn's -0 has no place in a fnuz type. */
    assert_false(expand_is_widening_float(IR_TYPE_F8E4M3FN, IR_TYPE_F8E4M3FNUZ));
    assert_false(expand_is_widening_float(IR_TYPE_F8E4M3FNUZ, IR_TYPE_F8E4M3FN));
    assert_false(expand_is_widening_float(IR_TYPE_F8E4M3B11FNUZ, IR_TYPE_F8E4M3FN));
    assert_false(expand_is_widening_float(IR_TYPE_F8E5M2FNUZ, IR_TYPE_F8E5M2));
    assert_false(expand_is_widening_float(IR_TYPE_F8E4M3FN, IR_TYPE_F8E4M3));
    assert_false(expand_is_widening_float(IR_TYPE_F4E2M1FN, IR_TYPE_F8E4M3FNUZ));
    assert_false(expand_is_widening_float(IR_TYPE_F8E8M0FNU, IR_TYPE_F16));
    assert_true(expand_is_widening_float(IR_TYPE_F8E4M3B11FNUZ, IR_TYPE_F16));
    assert_true(expand_is_widening_float(IR_TYPE_F4E2M1FN, IR_TYPE_F8E4M3FN));
    assert_true(expand_is_widening_float(IR_TYPE_F8E8M0FNU, IR_TYPE_F32));
    assert_true(expand_is_widening_float(IR_TYPE_F8E5M2FNUZ, IR_TYPE_F16));
}

static const char *const INTERLEAVE =
    "HloModule m, replica_count=2\n\n"
    "ENTRY e {\n  x = f32[4,8] parameter(0)\n"
    "  ag = f32[4,16] all-gather(x), replica_groups={{0,1}}, dimensions={1}\n"
    "  ROOT r = f32[64] reshape(ag)\n}\n";

static void test_sound_mode_counts_the_decline(void **state)
{
    (void)state;
    Error err = { 0 };
    PassStats st;
    IrModule *m = parse_text(INTERLEAVE);
    assert_false(run_pass(m, "flip-ag-reshape", PASS_MODE_SOUND, &st, &err));
    assert_int_equal(st.fired, 0);
    assert_int_equal(st.n_reasons, 1);
    assert_int_equal(st.declined[0], 1);
    assert_non_null(strstr(st.reason[0], "interleaves"));
    ir_module_free(m);

    m = parse_text(INTERLEAVE);
    assert_true(run_pass(m, "flip-ag-reshape", PASS_MODE_FAITHFUL, &st, &err));
    assert_int_equal(st.fired, 1);
    assert_int_equal(st.n_reasons, 0);
    ir_module_free(m);
}

static void test_sweep_tests_instructions_as_it_reaches_them(void **state)
{
    (void)state;    /* convert(convert(all-gather)): both flip in one sweep */
    IrModule *m = parse_text("HloModule m, replica_count=2\n\nENTRY e {\n  x = f32[2,4] parameter(0)\n"
                             "  ag = f32[4,4] all-gather(x), replica_groups={{0,1}}, dimensions={0}\n"
                             "  c1 = f16[4,4] convert(ag)\n  ROOT c2 = bf16[4,4] convert(c1)\n}\n");
    Error err = { 0 };
    PassStats st;
    assert_true(run_pass(m, "flip-ag-convert", PASS_MODE_FAITHFUL, &st, &err));
    assert_int_equal(st.fired, 2);
    IrInstr *root = m->entry->root;
    assert_int_equal(root->op, IR_OP_ALL_GATHER);
    assert_int_equal(root->operands[0]->op, IR_OP_CONVERT);
    assert_int_equal(root->operands[0]->operands[0]->op, IR_OP_CONVERT);
    assert_int_equal(m->entry->n_instrs, 4);   /* x, two converts, the all-gather */
    ir_module_free(m);
}

/* ------------------------------------------------------------------ */
/* The corpus: every module against its .expect                         */

typedef struct Expect {
    char pass[128], kind[32];
    int rewrites, sound_rewrites;       /* 1 yes, 0 no, -1 missing */
} Expect;

static int yes_no(const char *v)
{
    return strcmp(v, "yes") == 0 ? 1 : strcmp(v, "no") == 0 ? 0 : -1;
}

static bool read_expect(const char *path, Expect *e)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    *e = (Expect){ .rewrites = -1, .sound_rewrites = -1 };
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        *colon = 0;
        const char *v = colon + 1 + (colon[1] == ' ');
        if (strcmp(line, "pass") == 0)
            snprintf(e->pass, sizeof e->pass, "%s", v);
        else if (strcmp(line, "kind") == 0)
            snprintf(e->kind, sizeof e->kind, "%s", v);
        else if (strcmp(line, "rewrites") == 0)
            e->rewrites = yes_no(v);
        else if (strcmp(line, "sound_rewrites") == 0)
            e->sound_rewrites = yes_no(v);
    }
    fclose(f);
    return true;
}

/* Runs path through pass in mode: did the printed module change?  The
 * result must verify. */
static bool changes(const char *path, const char *pass, PassMode mode)
{
    Error err = { 0 };
    IrModule *m = ir_parse_file(path, &err);
    if (!m)
        error_print(&err, stderr);
    assert_non_null(m);
    char *before = module_text(m);
    bool changed = run_pass(m, pass, mode, NULL, &err);
    char *after = module_text(m);
    bool differs = strcmp(before, after) != 0;
    if (changed != differs)
        fail_msg("%s: the pass says changed=%d but the text %s", path, changed, differs ? "differs" : "is the same");
    if (!ir_verify_module(m, &err)) {
        error_print(&err, stderr);
        fail_msg("%s: the %s result does not verify", path, mode == PASS_MODE_SOUND ? "sound" : "faithful");
    }
    free(before);
    free(after);
    ir_module_free(m);
    return differs;
}

/* The expectation is well formed and consistent: no rewrite has kind none,
 * an unsound rewrite is declined in sound mode. */
static void check_expect_shape(const char *path, const Expect *e, const char *dir_pass)
{
    if (strcmp(e->pass, dir_pass) != 0 || e->rewrites < 0 || e->sound_rewrites < 0)
        fail_msg("%s: pass/rewrites/sound_rewrites lines missing or wrong", path);
    bool none = strcmp(e->kind, "none") == 0, unsound = strcmp(e->kind, "unsound") == 0;
    if (!none && !unsound && strcmp(e->kind, "exact") != 0 && strcmp(e->kind, "precision") != 0)
        fail_msg("%s: kind '%s' is not exact|precision|unsound|none", path, e->kind);
    if (none == (e->rewrites == 1) || (unsound && e->sound_rewrites) || (e->sound_rewrites && !e->rewrites))
        fail_msg("%s: kind %s does not fit rewrites %d / sound %d", path, e->kind, e->rewrites, e->sound_rewrites);
}

typedef struct Tally { int rewrite, keep, unsound; } Tally;

static void check_case(const char *dir, const char *pass, const char *file, Tally *t)
{
    char path[1024], expect_path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    snprintf(expect_path, sizeof expect_path, "%s/%.*s.expect", dir, (int)(strlen(file) - 4), file);
    Expect e;
    if (!read_expect(expect_path, &e))
        fail_msg("%s has no .expect beside it", path);
    check_expect_shape(expect_path, &e, pass);
    if (changes(path, pass, PASS_MODE_FAITHFUL) != (e.rewrites == 1))
        fail_msg("%s: faithful mode %s, expected rewrites: %s", path, e.rewrites ? "left it" : "rewrote it",
                 e.rewrites ? "yes" : "no");
    if (changes(path, pass, PASS_MODE_SOUND) != (e.sound_rewrites == 1))
        fail_msg("%s: sound mode %s, expected sound_rewrites: %s", path, e.sound_rewrites ? "left it" : "rewrote it",
                 e.sound_rewrites ? "yes" : "no");
    t->rewrite += e.rewrites == 1;
    t->keep += e.rewrites == 0;
    t->unsound += strcmp(e.kind, "unsound") == 0;
}

static bool has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n > k && strcmp(s + n - k, suffix) == 0;
}

static void check_pass_corpus(const char *pass, int min_unsound)
{
    char dir[512];
    snprintf(dir, sizeof dir, "corpus/%s", pass);
    DIR *d = opendir(dir);
    if (!d)
        fail_msg("no %s (run the tests from the repo root)", dir);
    Tally t = { 0 };
    struct dirent *ent;
    while ((ent = readdir(d)) != NULL)
        if (has_suffix(ent->d_name, ".hlo"))
            check_case(dir, pass, ent->d_name, &t);
    closedir(d);
    if (t.rewrite < 6 || t.keep < 6 || t.unsound < min_unsound)
        fail_msg("%s: %d rewriting and %d kept modules, %d unsound; want >= 6, >= 6, >= %d", dir, t.rewrite,
                 t.keep, t.unsound, min_unsound);
}

static void test_corpus_flip_all_gather_dynamic_slice(void **state)
{
    (void)state;    /* partition-id, replica-id, per-device parameter */
    check_pass_corpus("aws_neuron_flip_all_gather_dynamic_slice", 3);
}

static void test_corpus_flip_all_gather_convert(void **state)
{
    (void)state;
    check_pass_corpus("aws_neuron_flip_all_gather_convert", 0);
}

static void test_corpus_flip_all_gather_reshape(void **state)
{
    (void)state;    /* the interleaving reshapes */
    check_pass_corpus("aws_neuron_flip_all_gather_reshape", 1);
}

static void test_corpus_flip_all_gathers_binary(void **state)
{
    (void)state;
    check_pass_corpus("aws_neuron_flip_all_gathers_binary", 0);
}

static void test_corpus_flip_reduce_convert_add(void **state)
{
    (void)state;    /* the narrowing convert */
    check_pass_corpus("aws_neuron_flip_reduce_convert_add", 1);
}

static void test_corpus_flip_reduce_scatter_transpose(void **state)
{
    (void)state;    /* the narrowing convert */
    check_pass_corpus("aws_neuron_flip_reduce_scatter_transpose", 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_common_factors_equal_shapes_bound_every_dim),
        cmocka_unit_test(test_common_factors_split_after_gather_dim),
        cmocka_unit_test(test_common_factors_flatten_is_one_block),
        cmocka_unit_test(test_common_factors_unit_dims_get_their_own_block),
        cmocka_unit_test(test_common_factors_merge_and_split),
        cmocka_unit_test(test_common_factors_regroup_and_zeros),
        cmocka_unit_test(test_dim_map_flatten_only_merges),
        cmocka_unit_test(test_dim_map_split_is_not_only_merge),
        cmocka_unit_test(test_dim_map_dropped_unit_dim_maps_nowhere),
        cmocka_unit_test(test_scatter_dim_is_inverse_permuted),
        cmocka_unit_test(test_scatter_dim_missing_is_minus_one),
        cmocka_unit_test(test_rs_transpose_missing_scatter_dim_is_internal_error),
        cmocka_unit_test(test_rs_transpose_flips_with_inverse_dim),
        cmocka_unit_test(test_widening_float_convert),
        cmocka_unit_test(test_sound_mode_counts_the_decline),
        cmocka_unit_test(test_sweep_tests_instructions_as_it_reaches_them),
        cmocka_unit_test(test_corpus_flip_all_gather_dynamic_slice),
        cmocka_unit_test(test_corpus_flip_all_gather_convert),
        cmocka_unit_test(test_corpus_flip_all_gather_reshape),
        cmocka_unit_test(test_corpus_flip_all_gathers_binary),
        cmocka_unit_test(test_corpus_flip_reduce_convert_add),
        cmocka_unit_test(test_corpus_flip_reduce_scatter_transpose),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
