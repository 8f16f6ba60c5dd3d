/* test_gen_shape.c: the rules hlo-fuzz's #92 and #97 sites take their
 * expectations from (src/fuzz/gen_shape.c), on cases worked by hand.
 *
 * 1. CommonFactors blocks: dims >= 2, 1s, 0s.
 * 2. #97's rule: the seed's matcher (merge-only reshapes, one other dim,
 *    split gather dims, mixed blocks) and the sound-mode condition.
 * 3. #92: the clamp, and whether every participant of every group starts
 *    where its reader does, on a 2 x 2 device layout in each group mode.
 * 4. The generators themselves: modules that verify, recipes that fit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen_shape.h"

/* ------------------------------------------------------------------ */
/* 1. Blocks                                                            */

static void expect_bounds(const int64_t *in, int n_in, const int64_t *out, int n_out, int n,
                          const int (*want)[2])
{
    int got[2 * FUZZ_MAX_RANK + 1][2];
    assert_int_equal(gen_common_factors(in, n_in, out, n_out, got), n);
    for (int k = 0; k < n; k++) {
        assert_int_equal(got[k][0], want[k][0]);
        assert_int_equal(got[k][1], want[k][1]);
    }
}

static void test_blocks_split_and_merge(void **state)
{
    (void)state;
    /* prefix products 2, 12 against 4, 12: one block of both dims */
    expect_bounds((int64_t[]){ 2, 6 }, 2, (int64_t[]){ 4, 3 }, 2, 2, (const int[][2]){ { 0, 0 }, { 2, 2 } });
    expect_bounds((int64_t[]){ 6, 4 }, 2, (int64_t[]){ 4, 6 }, 2, 2, (const int[][2]){ { 0, 0 }, { 2, 2 } });
}

static void test_blocks_merge(void **state)
{
    (void)state;
    expect_bounds((int64_t[]){ 4, 6 }, 2, (int64_t[]){ 24 }, 1, 2, (const int[][2]){ { 0, 0 }, { 2, 1 } });
    /* 6 = 2*3 closes the first block, 4 passes through */
    expect_bounds((int64_t[]){ 2, 3, 4 }, 3, (int64_t[]){ 6, 4 }, 2, 3,
                  (const int[][2]){ { 0, 0 }, { 2, 1 }, { 3, 2 } });
}

static void test_blocks_pass_and_split(void **state)
{
    (void)state;
    expect_bounds((int64_t[]){ 8, 6, 4 }, 3, (int64_t[]){ 8, 4, 6 }, 3, 3,
                  (const int[][2]){ { 0, 0 }, { 1, 1 }, { 3, 3 } });
    expect_bounds((int64_t[]){ 3, 4 }, 2, (int64_t[]){ 3, 4 }, 2, 3, (const int[][2]){ { 0, 0 }, { 1, 1 }, { 2, 2 } });
    expect_bounds((int64_t[]){ 12 }, 1, (int64_t[]){ 2, 2, 3 }, 3, 2, (const int[][2]){ { 0, 0 }, { 1, 3 } });
}

static void test_blocks_refused(void **state)
{
    (void)state;
    int b[2 * FUZZ_MAX_RANK + 1][2];
    assert_int_equal(gen_common_factors((int64_t[]){ 0, 6 }, 2, (int64_t[]){ 0, -1 }, 2, b), -1);
    assert_int_equal(gen_common_factors((int64_t[]){ 2, 6 }, 2, (int64_t[]){ 2, 5 }, 2, b), -1);
    assert_int_equal(gen_common_factors((int64_t[]){ 4 }, 1, (int64_t[]){ 2 }, 1, b), -1);
}

/* 0s, traced through CommonFactors' zero rule by hand: equal shapes a
 * block per dim; else the equal leading dims one block each, then one
 * block of the rest when both rests hold a 0, the usual blocks when
 * neither does, and the whole of both shapes when their rests differ. */
static void test_blocks_zeros(void **state)
{
    (void)state;
    expect_bounds((int64_t[]){ 2, 0, 3 }, 3, (int64_t[]){ 2, 0, 3 }, 3, 4,
                  (const int[][2]){ { 0, 0 }, { 1, 1 }, { 2, 2 }, { 3, 3 } });
    expect_bounds((int64_t[]){ 2, 0, 3 }, 3, (int64_t[]){ 2, 6, 0 }, 3, 3,
                  (const int[][2]){ { 0, 0 }, { 1, 1 }, { 3, 3 } });
    expect_bounds((int64_t[]){ 0, 2, 3 }, 3, (int64_t[]){ 0, 6 }, 2, 3,
                  (const int[][2]){ { 0, 0 }, { 1, 1 }, { 3, 2 } });
    expect_bounds((int64_t[]){ 0, 6 }, 2, (int64_t[]){ 0 }, 1, 2, (const int[][2]){ { 0, 0 }, { 2, 1 } });
    expect_bounds((int64_t[]){ 0, 6 }, 2, (int64_t[]){ 0, 4 }, 2, 2, (const int[][2]){ { 0, 0 }, { 2, 2 } });
    expect_bounds((int64_t[]){ 8, 0 }, 2, (int64_t[]){ 0 }, 1, 2, (const int[][2]){ { 0, 0 }, { 2, 1 } });
}

/* 1s, traced through XLA's CommonFactors by hand: at a block's start a 1
 * is a block of its own (two 1s, one per side, one block); inside a
 * block it joins it. */
static void test_blocks_ones(void **state)
{
    (void)state;
    expect_bounds((int64_t[]){ 8 }, 1, (int64_t[]){ 8, 1 }, 2, 3, (const int[][2]){ { 0, 0 }, { 1, 1 }, { 1, 2 } });
    expect_bounds((int64_t[]){ 2, 1, 4 }, 3, (int64_t[]){ 8 }, 1, 2, (const int[][2]){ { 0, 0 }, { 3, 1 } });
    expect_bounds((int64_t[]){ 4, 1, 8 }, 3, (int64_t[]){ 4, 8 }, 2, 4,
                  (const int[][2]){ { 0, 0 }, { 1, 1 }, { 2, 1 }, { 3, 2 } });
    expect_bounds((int64_t[]){ 1, 1, 6 }, 3, (int64_t[]){ 1, 6 }, 2, 4,
                  (const int[][2]){ { 0, 0 }, { 1, 1 }, { 2, 1 }, { 3, 2 } });
    expect_bounds((int64_t[]){ 6, 1 }, 2, (int64_t[]){ 1, 2, 3 }, 3, 4,
                  (const int[][2]){ { 0, 0 }, { 0, 1 }, { 1, 3 }, { 2, 3 } });
}

/* ------------------------------------------------------------------ */
/* 2. #97                                                               */

static GenReshapeRule rule_of(const int64_t *in, int n_in, const int64_t *out, int n_out, int d, int n)
{
    GenReshapeRule u;
    assert_true(gen_reshape_rule(in, n_in, out, n_out, d, n, &u));
    return u;
}

static void test_reshape_merge_under_major_dim(void **state)
{
    (void)state;
    /* spec section 4: f32[a,N*b] gathered on 1, reshaped to [a*N*b]: the seed takes it, shards interleave */
    GenReshapeRule u = rule_of((int64_t[]){ 3, 8 }, 2, (int64_t[]){ 24 }, 1, 1, 2);
    assert_true(u.only_merge);
    assert_int_equal(u.in0, 0);
    assert_int_equal(u.in1, 2);
    assert_int_equal(u.out0, 0);
    assert_true(u.accept);
    assert_false(u.sound);
}

static void test_reshape_zeros(void **state)
{
    (void)state;
    /* a 0 beside the gather dim: [0] its own block, 8*3 merged into 24 with d first */
    GenReshapeRule u = rule_of((int64_t[]){ 0, 8, 3 }, 3, (int64_t[]){ 0, 24 }, 2, 1, 4);
    assert_true(u.accept);
    assert_true(u.sound);
    assert_false(u.empty_shard);
    /* the 0 behind it: one block of both shapes, d maps to two output dims */
    u = rule_of((int64_t[]){ 8, 0, 3 }, 3, (int64_t[]){ 0, 24 }, 2, 0, 4);
    assert_false(u.accept);
    /* an empty shard: declined, whatever the blocks */
    u = rule_of((int64_t[]){ 0, 6 }, 2, (int64_t[]){ 0, 6 }, 2, 0, 2);
    assert_true(u.empty_shard);
    assert_false(u.accept);
    assert_false(u.sound);
}

static void test_reshape_merge_with_minor_dim(void **state)
{
    (void)state;
    GenReshapeRule u = rule_of((int64_t[]){ 8, 3 }, 2, (int64_t[]){ 24 }, 1, 0, 4);
    assert_true(u.accept);
    assert_true(u.sound);
}

static void test_reshape_two_others_merged(void **state)
{
    (void)state;
    /* only merges, two other non-1 dims in d's block: the seed declines */
    GenReshapeRule u = rule_of((int64_t[]){ 2, 3, 4 }, 3, (int64_t[]){ 24 }, 1, 0, 2);
    assert_true(u.only_merge);
    assert_false(u.accept);
    /* the same block beside a split: the merge rule is not asked, d maps to one dim */
    u = rule_of((int64_t[]){ 2, 3, 4, 6 }, 4, (int64_t[]){ 24, 2, 3 }, 3, 0, 2);
    assert_false(u.only_merge);
    assert_true(u.accept);
    assert_true(u.sound);
    u = rule_of((int64_t[]){ 2, 3, 4, 6 }, 4, (int64_t[]){ 24, 2, 3 }, 3, 1, 3);
    assert_true(u.accept);
    assert_false(u.sound);
}

static void test_reshape_gather_dim_split(void **state)
{
    (void)state;
    GenReshapeRule u = rule_of((int64_t[]){ 8, 3 }, 2, (int64_t[]){ 2, 4, 3 }, 3, 0, 2);
    assert_int_equal(u.out1 - u.out0, 2);
    assert_false(u.accept);
    assert_false(u.sound);
    /* the other dim split, d passes through to output dim 0 */
    u = rule_of((int64_t[]){ 8, 6 }, 2, (int64_t[]){ 8, 2, 3 }, 3, 0, 4);
    assert_false(u.only_merge);
    assert_int_equal(u.out0, 0);
    assert_true(u.sound);
}

static void test_reshape_mixed_block(void **state)
{
    (void)state;
    for (int d = 0; d < 2; d++) {
        GenReshapeRule u = rule_of((int64_t[]){ 2, 6 }, 2, (int64_t[]){ 4, 3 }, 2, d, 2);
        assert_false(u.accept);
        u = rule_of((int64_t[]){ 6, 4 }, 2, (int64_t[]){ 4, 6 }, 2, d, 2);
        assert_false(u.accept);
    }
}

static void test_reshape_ones(void **state)
{
    (void)state;
    /* a 1 inside d's merged block is not one of the "other non-1 dims" */
    GenReshapeRule u = rule_of((int64_t[]){ 2, 1, 4 }, 3, (int64_t[]){ 8 }, 1, 2, 2);
    assert_true(u.only_merge);
    assert_true(u.accept);
    assert_false(u.sound);
    u = rule_of((int64_t[]){ 4, 1, 2 }, 3, (int64_t[]){ 8 }, 1, 0, 2);
    assert_true(u.accept);
    assert_true(u.sound);
    /* a trailing output 1 is a block of one output dim: still only merges */
    u = rule_of((int64_t[]){ 8 }, 1, (int64_t[]){ 8, 1 }, 2, 0, 4);
    assert_true(u.only_merge);
    assert_true(u.sound);
    /* a lone operand 1 is a block of no output dim: the reshape no longer
     * only merges, so two other dims merged with d no longer matter */
    u = rule_of((int64_t[]){ 2, 3, 4, 1 }, 4, (int64_t[]){ 24 }, 1, 0, 2);
    assert_false(u.only_merge);
    assert_true(u.accept);
    assert_true(u.sound);
    u = rule_of((int64_t[]){ 2, 3, 4 }, 3, (int64_t[]){ 24 }, 1, 0, 2);
    assert_false(u.accept);
    /* the same 1 before d's block changes d's index, not its block */
    u = rule_of((int64_t[]){ 1, 3, 8 }, 3, (int64_t[]){ 24 }, 1, 2, 2);
    assert_int_equal(u.in0, 1);
    assert_true(u.accept);
    assert_false(u.sound);
}

static void test_reshape_pass_through_and_divisor(void **state)
{
    (void)state;
    GenReshapeRule u = rule_of((int64_t[]){ 4, 6 }, 2, (int64_t[]){ 4, 6 }, 2, 1, 3);
    assert_int_equal(u.out0, 1);
    assert_true(u.sound);
    /* a group size that does not divide the output dim: no local reshape */
    u = rule_of((int64_t[]){ 4, 6 }, 2, (int64_t[]){ 4, 6 }, 2, 1, 4);
    assert_false(u.accept);
}

/* ------------------------------------------------------------------ */
/* 3. #92                                                               */

static void test_clamp(void **state)
{
    (void)state;
    assert_int_equal(gen_clamp_start(-3, 8, 3), 0);
    assert_int_equal(gen_clamp_start(2, 8, 3), 2);
    assert_int_equal(gen_clamp_start(7, 8, 3), 5);
    assert_int_equal(gen_clamp_start(4, 4, 4), 0);
}

static FuzzGroups groups_of(FuzzGroupMode mode, int n_groups, int size, const int *ids)
{
    FuzzGroups g;
    memset(&g, 0, sizeof g);
    g.mode = mode;
    g.n_groups = n_groups;
    g.size = size;
    memcpy(g.ids, ids, (size_t)(n_groups * size) * sizeof *ids);
    return g;
}

/* f32[4,4,4] sliced to {4,2,2} (dims 1 and 2 cut, start range [0, 2]),
 * on 2 replicas x 2 partitions; idx[dim] as given, the rest constants 0. */
static GenAgree agree_on(const FuzzGroups *g, int dim, GenIndex ix, int dim2, GenIndex ix2)
{
    static const int64_t dims[3] = { 4, 4, 4 }, sizes[3] = { 4, 2, 2 };
    GenIndex idx[3] = { { .kind = GEN_INDEX_CONSTANT }, { .kind = GEN_INDEX_CONSTANT },
                        { .kind = GEN_INDEX_CONSTANT } };
    idx[dim2] = ix2;
    idx[dim] = ix;
    return gen_starts_agree(g, 2, 2, 3, dims, sizes, idx);
}

static const GenIndex zero = { .kind = GEN_INDEX_CONSTANT };

static GenIndex id_index(GenIndexKind kind, int64_t scale, int64_t offset)
{
    return (GenIndex){ .kind = kind, .scale = scale, .offset = offset };
}

static void test_agree_cross_replica(void **state)
{
    (void)state;
    /* one replica group {0,1}: device (r, p) gathers with (1-r, p) */
    FuzzGroups g = groups_of(FUZZ_CROSS_REPLICA, 1, 2, (int[]){ 0, 1 });
    assert_int_equal(agree_on(&g, 1, id_index(GEN_INDEX_PARTITION, 1, 0), 2, zero), GEN_AGREE);
    assert_int_equal(agree_on(&g, 1, id_index(GEN_INDEX_REPLICA, 1, 0), 2, zero), GEN_DIFFER);
    /* replica ids 0, 1 -> starts 5, 6: both clamp to 2 */
    assert_int_equal(agree_on(&g, 1, id_index(GEN_INDEX_REPLICA, 1, 5), 2, zero), GEN_AGREE);
    /* -1, 0: both clamp to 0; 1, 2: differ */
    assert_int_equal(agree_on(&g, 2, id_index(GEN_INDEX_REPLICA, 1, -1), 1, zero), GEN_AGREE);
    assert_int_equal(agree_on(&g, 2, id_index(GEN_INDEX_REPLICA, 1, 1), 1, zero), GEN_DIFFER);
    assert_int_equal(agree_on(&g, 1, id_index(GEN_INDEX_REPLICA, 0, 1), 2, zero), GEN_AGREE);
    /* dim 0 is not cut: any start reads it whole */
    assert_int_equal(agree_on(&g, 0, id_index(GEN_INDEX_REPLICA, 3, 0), 2, zero), GEN_AGREE);
}

static void test_agree_flattened_and_partition_modes(void **state)
{
    (void)state;
    /* flattened {0,1},{2,3}: the two partitions of one replica */
    FuzzGroups f = groups_of(FUZZ_FLATTENED, 2, 2, (int[]){ 0, 1, 2, 3 });
    assert_int_equal(agree_on(&f, 1, id_index(GEN_INDEX_PARTITION, 1, 0), 2, zero), GEN_DIFFER);
    assert_int_equal(agree_on(&f, 1, id_index(GEN_INDEX_REPLICA, 2, 0), 2, zero), GEN_AGREE);
    /* flattened {0,2},{1,3}: one partition of both replicas */
    f = groups_of(FUZZ_FLATTENED, 2, 2, (int[]){ 0, 2, 1, 3 });
    assert_int_equal(agree_on(&f, 1, id_index(GEN_INDEX_PARTITION, 1, 0), 2, zero), GEN_AGREE);
    assert_int_equal(agree_on(&f, 1, id_index(GEN_INDEX_REPLICA, 1, 0), 2, zero), GEN_DIFFER);
    /* cross-replica-and-partition {0},{1}: each replica's two partitions */
    FuzzGroups c = groups_of(FUZZ_CROSS_REPLICA_PARTITION, 2, 1, (int[]){ 0, 1 });
    assert_int_equal(agree_on(&c, 1, id_index(GEN_INDEX_PARTITION, 1, 0), 2, zero), GEN_DIFFER);
    assert_int_equal(agree_on(&c, 1, id_index(GEN_INDEX_REPLICA, 1, 0), 2, zero), GEN_AGREE);
}

static void test_agree_parameters(void **state)
{
    (void)state;
    const GenIndex param = { .kind = GEN_INDEX_PARAMETER, .lo = 0, .hi = 3 };
    FuzzGroups pair = groups_of(FUZZ_CROSS_REPLICA, 1, 2, (int[]){ 0, 1 });
    FuzzGroups alone = groups_of(FUZZ_CROSS_REPLICA, 2, 1, (int[]){ 0, 1 });
    assert_int_equal(agree_on(&pair, 1, param, 2, zero), GEN_MAY_DIFFER);
    assert_int_equal(agree_on(&alone, 1, param, 2, zero), GEN_AGREE);
    assert_int_equal(agree_on(&pair, 0, param, 2, zero), GEN_AGREE);
    /* a known difference beside it decides */
    assert_int_equal(agree_on(&pair, 1, param, 2, id_index(GEN_INDEX_REPLICA, 1, 0)), GEN_DIFFER);
}

/* A constant moved from replica 0 to 1 by collective-permute: replica 1
 * holds it, replica 0 (no pair sends to it) holds 0. */
static void test_agree_permuted(void **state)
{
    (void)state;
    FuzzGroups pair = groups_of(FUZZ_CROSS_REPLICA, 1, 2, (int[]){ 0, 1 });
    FuzzGroups alone = groups_of(FUZZ_CROSS_REPLICA, 2, 1, (int[]){ 0, 1 });
    assert_int_equal(agree_on(&pair, 1, id_index(GEN_INDEX_PERMUTED, 1, 2), 2, zero), GEN_DIFFER);
    assert_int_equal(agree_on(&alone, 1, id_index(GEN_INDEX_PERMUTED, 1, 2), 2, zero), GEN_AGREE);
    /* not cut: read whole wherever it starts */
    assert_int_equal(agree_on(&pair, 0, id_index(GEN_INDEX_PERMUTED, 1, 2), 2, zero), GEN_AGREE);
    /* the partitions of one replica hold the same value */
    FuzzGroups parts = groups_of(FUZZ_FLATTENED, 2, 2, (int[]){ 0, 1, 2, 3 });
    assert_int_equal(agree_on(&parts, 1, id_index(GEN_INDEX_PERMUTED, 1, 2), 2, zero), GEN_AGREE);
}

/* ------------------------------------------------------------------ */
/* 4. The generators                                                    */

static void generate_and_verify(int number, int replicas, int partitions, uint64_t seed)
{
    FuzzBuild *b = fuzz_build_new(replicas, partitions, "t");
    FuzzSite sites[FUZZ_MAX_SITES];
    FuzzRng r = { .s = seed };
    PassOptions opt;
    pass_options_default(&opt);
    FuzzGen g = { .rng = &r, .b = b, .opt = &opt, .world = replicas * partitions, .sites = sites };
    int odd = 0;
    for (int k = 0; k < 8; k++) {
        fuzz_gen_site(&g, number);
        const FuzzSite *s = &sites[k];
        assert_true(strlen(s->what) < sizeof s->what - 1);      /* the recipe line is whole */
        odd += s->expect[PASS_MODE_FAITHFUL] == FUZZ_UNSOUND;
        assert_int_not_equal(s->expect[PASS_MODE_SOUND], FUZZ_UNSOUND);
        if (s->must_differ[PASS_MODE_FAITHFUL])
            assert_int_equal(s->expect[PASS_MODE_FAITHFUL], FUZZ_UNSOUND);
    }
    assert_true(odd <= 1);
    char *text = fuzz_build_text(b);
    assert_non_null(text);
    Error err = { 0 };
    IrModule *m = ir_parse_module(text, strlen(text), "t.hlo", &err);
    if (!m || !ir_verify_module(m, &err)) {
        error_print(&err, stderr);
        fail_msg("pass #%d, seed %llu: the generated module does not verify:\n%s", number,
                 (unsigned long long)seed, text);
    }
    ir_module_free(m);
    free(text);
    fuzz_build_free(b);
}

static void test_generators_verify(void **state)
{
    (void)state;
    static const int layouts[][2] = { { 1, 1 }, { 2, 1 }, { 1, 2 }, { 2, 2 }, { 4, 2 }, { 2, 4 }, { 1, 8 } };
    for (uint64_t seed = 1; seed <= 40; seed++)
        for (size_t k = 0; k < sizeof layouts / sizeof layouts[0]; k++) {
            generate_and_verify(97, layouts[k][0], layouts[k][1], seed);
            generate_and_verify(92, layouts[k][0], layouts[k][1], seed);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blocks_split_and_merge),
        cmocka_unit_test(test_blocks_merge),
        cmocka_unit_test(test_blocks_pass_and_split),
        cmocka_unit_test(test_blocks_refused),
        cmocka_unit_test(test_blocks_zeros),
        cmocka_unit_test(test_blocks_ones),
        cmocka_unit_test(test_reshape_merge_under_major_dim),
        cmocka_unit_test(test_reshape_merge_with_minor_dim),
        cmocka_unit_test(test_reshape_zeros),
        cmocka_unit_test(test_reshape_two_others_merged),
        cmocka_unit_test(test_reshape_gather_dim_split),
        cmocka_unit_test(test_reshape_mixed_block),
        cmocka_unit_test(test_reshape_ones),
        cmocka_unit_test(test_reshape_pass_through_and_divisor),
        cmocka_unit_test(test_clamp),
        cmocka_unit_test(test_agree_cross_replica),
        cmocka_unit_test(test_agree_flattened_and_partition_modes),
        cmocka_unit_test(test_agree_parameters),
        cmocka_unit_test(test_agree_permuted),
        cmocka_unit_test(test_generators_verify),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
