/* test_model.c: the combiners' model (src/fuzz/model.c) on modules built
 * with the builder, each small enough to work out by hand from the rules of
 * spec/passes.md 2: limits, reachability, the gate, the keys, fsdp. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "fuzz_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct T {
    FuzzBuild *b;
    FuzzGen g;
    FuzzRng rng;
    FuzzSite sites[FUZZ_MAX_SITES];
    PassOptions opt;
    FuzzSite *pending[FUZZ_MAX_SITES];  /* members of the placement being built */
    int n_pending;
} T;

static void t_init(T *t, int replicas, int partitions)
{
    memset(t, 0, sizeof *t);
    t->b = fuzz_build_new(replicas, partitions, "t");
    pass_options_default(&t->opt);
    t->g = (FuzzGen){ .rng = &t->rng, .b = t->b, .opt = &t->opt, .world = replicas * partitions,
                      .sites = t->sites };
}

static void t_free(T *t)
{
    fuzz_build_free(t->b);
}

static const FuzzShape f32x4 = { .type = IR_TYPE_F32, .rank = 1, .dims = { 4 } };

/* A cross-replica all-reduce (add, groups {}) of number 79: 16 bytes. */
static FuzzColl ar_coll(void)
{
    FuzzColl c = { .op = IR_OP_ALL_REDUCE, .type = IR_TYPE_F32, .dim = -1, .reducer = "add", .bytes = 16, .rank = 1 };
    snprintf(c.groups, sizeof c.groups, "{}");
    return c;
}

/* An all-gather along dim 0 over {{0,1}} (replica ids, R = 2): f32[2] -> f32[4]. */
static FuzzColl ag_coll(int dim)
{
    FuzzColl c = { .op = IR_OP_ALL_GATHER, .type = IR_TYPE_F32, .dim = dim, .bytes = 16, .rank = 2 };
    snprintf(c.groups, sizeof c.groups, "{{0,1}}");
    return c;
}

/* A member collective of x, recorded as a site of pass `number`. */
static int member(T *t, int number, int x, FuzzColl c)
{
    static const char *const ops[] = { "all-gather", "reduce-scatter", "all-reduce" };
    int v = fuzz_op1(t->b, f32x4, ops[number - 77], x, "");
    FuzzSite *s = fuzz_new_site(&t->g, number);
    s->is_coll = true;
    s->coll = c;
    s->instr = v;
    t->pending[t->n_pending++] = s;
    return v;
}

static int input(T *t)
{
    return fuzz_input(t->b, f32x4);
}

/* Ends the placement: every member an output, in the order made. */
static void end_place(T *t)
{
    int outs[FUZZ_MAX_SITES], pos[FUZZ_MAX_SITES], comp;
    for (int i = 0; i < t->n_pending; i++)
        outs[i] = t->pending[i]->instr;
    fuzz_site_end(t->b, t->n_pending, outs, &comp, pos);
    for (int i = 0; i < t->n_pending; i++) {
        t->pending[i]->comp = comp;
        t->pending[i]->out = pos[i];
    }
    t->n_pending = 0;
}

/* x + something computed from v: x now depends on v. */
static int depending(T *t, int x, int v)
{
    return fuzz_op2(t->b, f32x4, "add", x, fuzz_op1(t->b, f32x4, "negate", v, ""), "");
}

static int group(const T *t, int k, PassMode mode)
{
    return t->sites[k].group[mode];
}

static void assert_alone(const T *t, int k, PassMode mode)
{
    assert_int_equal(group(t, k, mode), -1);
    assert_int_equal(t->sites[k].expect[mode], FUZZ_KEEP);
}

static void assert_together(const T *t, int a, int b, PassMode mode)
{
    assert_true(group(t, a, mode) >= 0);
    assert_int_equal(group(t, a, mode), group(t, b, mode));
    assert_int_equal(t->sites[a].expect[mode], FUZZ_EXACT);
    assert_int_equal(t->sites[b].expect[mode], FUZZ_EXACT);
}

static void three_all_reduces_with_count_limit_two_give_a_pair_and_a_single(void **state)
{
    (void)state;
    T t;
    t_init(&t, 4, 1);
    t.opt.combine_threshold_count = 2;
    fuzz_site_begin(t.b, FUZZ_IN_ENTRY, 1);
    for (int i = 0; i < 3; i++)
        member(&t, 79, input(&t), ar_coll());
    end_place(&t);
    fuzz_model_combiner(&t.g, 79, &t.opt);
    for (int mode = 0; mode < 2; mode++) {
        assert_together(&t, 0, 1, (PassMode)mode);
        assert_alone(&t, 2, (PassMode)mode);
    }
    t_free(&t);
}

/* hlo-reference.md 7.3: the walk is the schedule in a scheduled module,
 * else XLA's post order, which starts from the instructions without users
 * in text order: here an unused negate(m2) made before the root, so the
 * post order meets m2 first. */
static void a_scheduled_module_is_walked_in_its_schedule(void **state)
{
    (void)state;
    for (int scheduled = 0; scheduled < 2; scheduled++) {
        T t;
        t_init(&t, 4, 1);
        t.opt.combine_threshold_count = 2;
        fuzz_site_begin(t.b, FUZZ_IN_ENTRY, 1);
        member(&t, 79, input(&t), ar_coll());
        member(&t, 79, input(&t), ar_coll());
        int m2 = member(&t, 79, input(&t), ar_coll());
        fuzz_op1(t.b, f32x4, "negate", m2, "");
        end_place(&t);
        fuzz_build_scheduled(t.b, scheduled);
        fuzz_model_combiner(&t.g, 79, &t.opt);
        for (int mode = 0; mode < 2; mode++) {
            if (scheduled) {    /* m0, m1, m2 */
                assert_together(&t, 0, 1, (PassMode)mode);
                assert_alone(&t, 2, (PassMode)mode);
            } else {            /* m2, m0, m1 */
                assert_together(&t, 2, 0, (PassMode)mode);
                assert_alone(&t, 1, (PassMode)mode);
            }
        }
        char *text = fuzz_build_text(t.b);
        assert_true((strstr(text, "is_scheduled=true") != NULL) == (scheduled != 0));
        free(text);
        t_free(&t);
    }
}

static void a_dependent_member_closes_the_group_and_starts_the_next(void **state)
{
    (void)state;
    T t;
    t_init(&t, 4, 1);
    fuzz_site_begin(t.b, FUZZ_IN_ENTRY, 1);
    int a = member(&t, 79, input(&t), ar_coll());
    member(&t, 79, depending(&t, input(&t), a), ar_coll());
    member(&t, 79, input(&t), ar_coll());
    end_place(&t);
    fuzz_model_combiner(&t.g, 79, &t.opt);
    /* post order a, b(a), c: b closes {a}; c joins {b} */
    assert_alone(&t, 0, PASS_MODE_FAITHFUL);
    assert_together(&t, 1, 2, PASS_MODE_FAITHFUL);
    t_free(&t);
}

static void a_byte_limit_at_the_running_total_keeps_the_member_that_reaches_it(void **state)
{
    (void)state;
    for (int64_t limit = 31; limit <= 33; limit++) {
        T t;
        t_init(&t, 4, 1);
        t.opt.combine_threshold_bytes = limit;
        fuzz_site_begin(t.b, FUZZ_IN_ENTRY, 1);
        for (int i = 0; i < 3; i++)
            member(&t, 79, input(&t), ar_coll());
        end_place(&t);
        fuzz_model_combiner(&t.g, 79, &t.opt);
        if (limit == 31) {          /* 16 + 16 > 31: nobody joins anybody */
            for (int k = 0; k < 3; k++)
                assert_alone(&t, k, PASS_MODE_FAITHFUL);
        } else {                    /* 16 + 16 <= limit, 48 > limit */
            assert_together(&t, 0, 1, PASS_MODE_FAITHFUL);
            assert_alone(&t, 2, PASS_MODE_FAITHFUL);
        }
        t_free(&t);
    }
}

static void a_member_above_the_byte_limit_takes_no_part_and_closes_nothing(void **state)
{
    (void)state;
    T t;
    t_init(&t, 4, 1);
    t.opt.combine_threshold_bytes = 40;
    fuzz_site_begin(t.b, FUZZ_IN_ENTRY, 1);
    member(&t, 79, input(&t), ar_coll());
    FuzzColl big = ar_coll();
    big.bytes = 64;
    member(&t, 79, input(&t), big);
    member(&t, 79, input(&t), ar_coll());
    end_place(&t);
    fuzz_model_combiner(&t.g, 79, &t.opt);
    assert_together(&t, 0, 2, PASS_MODE_FAITHFUL);
    assert_alone(&t, 1, PASS_MODE_FAITHFUL);
    t_free(&t);
}

/* Two all-gathers in a while body and two all-reduces in another. */
static void build_two_loops(T *t)
{
    fuzz_site_begin(t->b, FUZZ_IN_WHILE, 2);
    member(t, 77, input(t), ag_coll(0));
    member(t, 77, input(t), ag_coll(0));
    end_place(t);
    fuzz_site_begin(t->b, FUZZ_IN_WHILE, 2);
    member(t, 79, input(t), ar_coll());
    member(t, 79, input(t), ar_coll());
    end_place(t);
}

static void fsdp_makes_the_all_gather_combiner_skip_while_bodies_but_not_the_all_reduce_one(void **state)
{
    (void)state;
    for (int fsdp = 0; fsdp < 2; fsdp++) {
        T t;
        t_init(&t, 2, 1);
        t.opt.neuron_fsdp = fsdp;
        build_two_loops(&t);
        fuzz_model_combiner(&t.g, 77, &t.opt);
        fuzz_model_combiner(&t.g, 79, &t.opt);
        if (fsdp) {
            assert_alone(&t, 0, PASS_MODE_FAITHFUL);
            assert_alone(&t, 1, PASS_MODE_FAITHFUL);
        } else {
            assert_together(&t, 0, 1, PASS_MODE_FAITHFUL);
        }
        assert_together(&t, 2, 3, PASS_MODE_FAITHFUL);
        t_free(&t);
    }
}

static void the_gate_closes_on_a_threshold_of_zero_or_a_constrained_member(void **state)
{
    (void)state;
    for (int which = 0; which < 3; which++) {
        T t;
        t_init(&t, 2, 1);
        if (which == 0)
            t.opt.combine_threshold_count = 0;
        if (which == 1)
            t.opt.combine_threshold_bytes = -5;
        fuzz_site_begin(t.b, FUZZ_IN_ENTRY, 1);
        member(&t, 77, input(&t), ag_coll(0));
        member(&t, 77, input(&t), ag_coll(0));
        end_place(&t);
        fuzz_site_begin(t.b, FUZZ_IN_CONDITIONAL, 1);     /* elsewhere, and still the whole module */
        FuzzColl pinned = ag_coll(0);
        pinned.constrain = which == 2;
        member(&t, 77, input(&t), pinned);
        end_place(&t);
        fuzz_model_combiner(&t.g, 77, &t.opt);
        for (int k = 0; k < 3; k++)
            assert_alone(&t, k, PASS_MODE_FAITHFUL);
        t_free(&t);
    }
}

/* Sound mode keys the all-gathers' channel_id presence; faithful mode
 * does only with more than one partition, where mixing it changes a
 * member's group size (with one, both modes are the same devices). */
static void all_gather_channel_presence_keyed_in_sound_mode_and_across_partitions(void **state)
{
    (void)state;
    for (int partitions = 1; partitions <= 2; partitions++) {
        T t;
        t_init(&t, 2, partitions);
        fuzz_site_begin(t.b, FUZZ_IN_ENTRY, 1);
        member(&t, 77, input(&t), ag_coll(0));
        FuzzColl with_channel = ag_coll(0);
        with_channel.channel = true;
        member(&t, 77, input(&t), with_channel);
        end_place(&t);
        fuzz_model_combiner(&t.g, 77, &t.opt);
        if (partitions == 1) {
            assert_together(&t, 0, 1, PASS_MODE_FAITHFUL);
            assert_int_equal(t.sites[0].expect[PASS_MODE_FAITHFUL], FUZZ_EXACT);
        } else {
            assert_alone(&t, 0, PASS_MODE_FAITHFUL);
            assert_alone(&t, 1, PASS_MODE_FAITHFUL);
        }
        assert_alone(&t, 0, PASS_MODE_SOUND);
        assert_alone(&t, 1, PASS_MODE_SOUND);
        t_free(&t);
    }
}

static void control_edges_take_the_key_from_both_ends(void **state)
{
    (void)state;
    T t;
    t_init(&t, 4, 1);
    fuzz_site_begin(t.b, FUZZ_IN_ENTRY, 1);
    int a = member(&t, 79, input(&t), ar_coll());
    int b = member(&t, 79, input(&t), ar_coll());
    member(&t, 79, input(&t), ar_coll());
    member(&t, 79, input(&t), ar_coll());
    fuzz_control(t.b, b, a);
    end_place(&t);
    fuzz_model_combiner(&t.g, 79, &t.opt);
    assert_alone(&t, 0, PASS_MODE_FAITHFUL);
    assert_alone(&t, 1, PASS_MODE_FAITHFUL);
    assert_together(&t, 2, 3, PASS_MODE_FAITHFUL);
    t_free(&t);
}

static void keys_compare_expanded_groups_dims_by_flag_and_reducers(void **state)
{
    (void)state;
    for (int by_dim = 0; by_dim < 2; by_dim++) {
        T t;
        t_init(&t, 2, 1);
        t.opt.combine_by_dim = by_dim;
        fuzz_site_begin(t.b, FUZZ_IN_ENTRY, 1);
        member(&t, 77, input(&t), ag_coll(0));
        member(&t, 77, input(&t), ag_coll(1));
        FuzzColl empty = ag_coll(0);
        snprintf(empty.groups, sizeof empty.groups, "{}");  /* the same devices, another key */
        member(&t, 77, input(&t), empty);
        end_place(&t);
        fuzz_model_combiner(&t.g, 77, &t.opt);
        if (by_dim) {
            assert_alone(&t, 0, PASS_MODE_FAITHFUL);
            assert_alone(&t, 1, PASS_MODE_FAITHFUL);
        } else {
            assert_together(&t, 0, 1, PASS_MODE_FAITHFUL);
        }
        assert_alone(&t, 2, PASS_MODE_FAITHFUL);
        t_free(&t);
    }
    T t;
    t_init(&t, 4, 1);
    fuzz_site_begin(t.b, FUZZ_IN_ENTRY, 1);
    member(&t, 79, input(&t), ar_coll());
    FuzzColl other = ar_coll(), untrivial = ar_coll();
    other.reducer = "maximum";
    untrivial.reducer = NULL;
    member(&t, 79, input(&t), other);
    member(&t, 79, input(&t), untrivial);
    member(&t, 79, input(&t), ar_coll());
    end_place(&t);
    fuzz_model_combiner(&t.g, 79, &t.opt);
    assert_together(&t, 0, 3, PASS_MODE_FAITHFUL);
    assert_alone(&t, 1, PASS_MODE_FAITHFUL);
    assert_alone(&t, 2, PASS_MODE_FAITHFUL);
    t_free(&t);
}

/* a1, b1, b2(a1), a2(b1), a and b of two keys.  Plain reachability (the
 * spec's sentence) closes nothing and would form {a1, a2} and {b1, b2}, two
 * combined ops reading each other.  Over contracted groups a2 depends on
 * {b1, b2}, which reads a1: a1's group closes alone, a2 starts another. */
static void a_tangle_of_two_keys_closes_over_contracted_groups(void **state)
{
    (void)state;
    T t;
    t_init(&t, 4, 1);
    FuzzColl other_type = ar_coll();
    other_type.type = IR_TYPE_F16;
    fuzz_site_begin(t.b, FUZZ_IN_ENTRY, 1);
    int a1 = member(&t, 79, input(&t), ar_coll());
    int b1 = member(&t, 79, input(&t), other_type);
    member(&t, 79, depending(&t, input(&t), a1), other_type);
    member(&t, 79, depending(&t, input(&t), b1), ar_coll());
    end_place(&t);
    fuzz_model_combiner(&t.g, 79, &t.opt);
    assert_together(&t, 1, 2, PASS_MODE_FAITHFUL);
    assert_alone(&t, 0, PASS_MODE_FAITHFUL);
    assert_alone(&t, 3, PASS_MODE_FAITHFUL);
    t_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(three_all_reduces_with_count_limit_two_give_a_pair_and_a_single),
        cmocka_unit_test(a_dependent_member_closes_the_group_and_starts_the_next),
        cmocka_unit_test(a_scheduled_module_is_walked_in_its_schedule),
        cmocka_unit_test(a_byte_limit_at_the_running_total_keeps_the_member_that_reaches_it),
        cmocka_unit_test(a_member_above_the_byte_limit_takes_no_part_and_closes_nothing),
        cmocka_unit_test(fsdp_makes_the_all_gather_combiner_skip_while_bodies_but_not_the_all_reduce_one),
        cmocka_unit_test(the_gate_closes_on_a_threshold_of_zero_or_a_constrained_member),
        cmocka_unit_test(all_gather_channel_presence_keyed_in_sound_mode_and_across_partitions),
        cmocka_unit_test(control_edges_take_the_key_from_both_ends),
        cmocka_unit_test(keys_compare_expanded_groups_dims_by_flag_and_reducers),
        cmocka_unit_test(a_tangle_of_two_keys_closes_over_contracted_groups),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
