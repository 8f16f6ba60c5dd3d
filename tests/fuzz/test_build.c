/* test_build.c: hlo-fuzz's builder and groups, checked against the parser,
 * the verifier and the collectives' own group size: what the generator
 * believes it wrote must be what the module says. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "coll.h"
#include "gen.h"
#include "fuzz_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static IrModule *parse_ok(const char *text)
{
    Error err = { 0 };
    IrModule *m = ir_parse_module(text, strlen(text), "fuzz", &err);
    if (!m || !ir_verify_module(m, &err)) {
        fprintf(stderr, "%s\n%s\n", err.msg, text);
        fail();
    }
    return m;
}

static IrInstr *find_op(const IrComputation *c, IrOpcode op)
{
    for (int i = 0; i < c->n_instrs; i++)
        if (c->instrs[i] && c->instrs[i]->op == op)
            return c->instrs[i];
    return NULL;
}

/* Every mode, size and form of groups on every split of 8 devices: the
 * parser expands them to the ids the generator recorded, and the
 * collectives' group size is the generator's. */
static void groups_match_parser(void **state)
{
    (void)state;
    static const int splits[][2] = { { 1, 8 }, { 2, 4 }, { 4, 2 }, { 8, 1 } };
    int forms_seen[4] = { 0 };
    for (int k = 0; k < 4; k++)
        for (uint64_t seed = 1; seed <= 60; seed++) {
            int R = splits[k][0], P = splits[k][1];
            FuzzRng r = { .s = seed * 7919 + (uint64_t)k };
            FuzzBuild *b = fuzz_build_new(R, P, "groups");
            PassOptions opt;
            pass_options_default(&opt);
            FuzzSite sites[FUZZ_MAX_SITES];
            FuzzGen g = { .rng = &r, .b = b, .opt = &opt, .world = R * P, .sites = sites };
            FuzzSite *s = fuzz_new_site(&g, 96);
            fuzz_site_begin(b, FUZZ_IN_ENTRY, 1);
            GenColl c;
            gen_draw_coll(&g, &c);
            int64_t d3[] = { 2, 3 };
            int x = fuzz_input(b, fuzz_shape(IR_TYPE_F32, 2, d3));
            int ag = gen_all_gather(&g, x, 0, &c);
            gen_finish(&g, s, ag, 0, NULL);
            char *text = fuzz_build_text(b);
            IrModule *m = parse_ok(text);
            IrInstr *in = find_op(m->entry, IR_OP_ALL_GATHER);
            assert_non_null(in);
            assert_int_equal(coll_group_size(in, R, P), c.size);
            assert_int_equal(in->shape->dims[0], 2 * c.size);
            const IrReplicaGroups *rg = &in->info->replica_groups;
            if (c.groups.empty) {
                assert_int_equal(rg->n_groups, 0);
                forms_seen[1]++;
            } else {
                assert_int_equal(rg->n_groups, c.groups.n_groups);
                for (int gi = 0; gi < rg->n_groups; gi++) {
                    assert_int_equal(rg->group_sizes[gi], c.groups.size);
                    for (int j = 0; j < c.groups.size; j++)
                        assert_int_equal(rg->groups[gi][j], c.groups.ids[gi * c.groups.size + j]);
                }
                forms_seen[!strcmp(c.groups.form, "explicit") ? 0 : !strcmp(c.groups.form, "iota") ? 2 : 3]++;
            }
            ir_module_free(m);
            free(text);
            fuzz_build_free(b);
        }
    for (int f = 0; f < 4; f++)
        assert_true(forms_seen[f] > 0);     /* explicit, empty, iota and mesh were all drawn */
}

/* Participants worked by hand (hlo-reference.md 6.3), R = 2, P = 2. */
static void participants_by_hand(void **state)
{
    (void)state;
    FuzzGroups g = { .mode = FUZZ_CROSS_REPLICA, .n_groups = 1, .size = 2, .ids = { 0, 1 } };
    int out[8];
    assert_int_equal(fuzz_participants(&g, 2, 2, 3, out), 2);     /* (1,1): replicas 0, 1 of partition 1 */
    assert_int_equal(out[0], 1);
    assert_int_equal(out[1], 3);
    g.mode = FUZZ_CROSS_REPLICA_PARTITION;
    assert_int_equal(fuzz_participants(&g, 2, 2, 3, out), 4);     /* every partition of both replicas */
    for (int i = 0; i < 4; i++)
        assert_int_equal(out[i], i);
    assert_int_equal(fuzz_group_size(&g, 2), 4);
    FuzzGroups f = { .mode = FUZZ_FLATTENED, .n_groups = 2, .size = 2, .ids = { 0, 3, 2, 1 } };
    assert_int_equal(fuzz_participants(&f, 2, 2, 1, out), 2);     /* device 1 is in {2,1}, in that order */
    assert_int_equal(out[0], 2);
    assert_int_equal(out[1], 1);
}

/* A site in a loop body or a branch: the module verifies, and the site's
 * result is the operand of that computation's root the builder says. */
static void placements_wire_through(void **state)
{
    (void)state;
    for (int p = 0; p < FUZZ_PLACES; p++) {
        FuzzBuild *b = fuzz_build_new(2, 1, "place");
        fuzz_site_begin(b, (FuzzPlace)p, 2);
        int64_t d[] = { 4 };
        FuzzShape s = fuzz_shape(IR_TYPE_F32, 1, d);
        int x = fuzz_input(b, s), y = fuzz_input_gte(b, s);
        int sum = fuzz_op2(b, s, "add", x, y, ""), prod = fuzz_op2(b, s, "multiply", x, y, "");
        int comp, pos[2];
        fuzz_site_end(b, 2, (int[]){ sum, prod }, &comp, pos);
        char *text = fuzz_build_text(b);
        IrModule *m = parse_ok(text);
        const IrComputation *c = ir_module_find_computation(m, fuzz_comp_name(b, comp));
        assert_non_null(c);
        assert_int_equal(c->root->op, IR_OP_TUPLE);
        char name[16];
        snprintf(name, sizeof name, "v%d", prod);
        assert_string_equal(c->root->operands[pos[1]]->name, name);
        assert_int_equal(c->root->operands[pos[0]]->op, IR_OP_ADD);
        /* inputs other than entry parameters are elements of a parameter tuple */
        const IrInstr *a = c->root->operands[pos[0]];
        for (int k = 0; k < 2; k++)
            if (p != FUZZ_IN_ENTRY || k == 1)
                assert_int_equal(a->operands[k]->op, IR_OP_GET_TUPLE_ELEMENT);
        ir_module_free(m);
        free(text);
        fuzz_build_free(b);
    }
}

/* The post order the combiners' model walks: operands before users, a
 * control predecessor before its successor, the root last. */
static void post_order_is_the_specs(void **state)
{
    (void)state;
    FuzzBuild *b = fuzz_build_new(1, 1, "order");
    fuzz_site_begin(b, FUZZ_IN_ENTRY, 1);
    int64_t d[] = { 2 };
    FuzzShape s = fuzz_shape(IR_TYPE_F32, 1, d);
    int x = fuzz_input(b, s), c = fuzz_constant(b, IR_TYPE_S32, "1");
    int n1 = fuzz_op1(b, s, "negate", x, ""), n2 = fuzz_op1(b, s, "abs", n1, "");
    fuzz_control(b, n1, c);
    int comp, pos[2];
    fuzz_site_end(b, 2, (int[]){ n2, n1 }, &comp, pos);
    int order[64];
    int n = fuzz_comp_post_order(b, b->entry, order);
    int at[64];
    for (int i = 0; i < n; i++)
        at[order[i]] = i;
    assert_true(at[c] < at[n1] && at[x] < at[n1] && at[n1] < at[n2]);
    assert_int_equal(order[n - 1], fuzz_comp_root(b, b->entry));
    assert_true(fuzz_reaches(b, n2, c));    /* through the control edge */
    assert_false(fuzz_reaches(b, n1, n2));
    fuzz_build_free(b);
}

/* The same (seed, index) gives the same module, another seed another. */
static void modules_are_deterministic(void **state)
{
    (void)state;
    FuzzConfig cfg = { .n_passes = 1, .modes = { true, true }, .seed = 11, .trials = 1 };
    cfg.passes[0] = pass_find("flip-ag-binary");
    char *t[3];
    size_t len[3];
    for (int k = 0; k < 3; k++) {
        cfg.seed = k == 2 ? 12 : 11;
        FILE *f = open_memstream(&t[k], &len[k]);
        Error err = { 0 };
        assert_true(fuzz_print_module(&cfg, 4, 3, 0, f, &err));
        fclose(f);
    }
    assert_string_equal(t[0], t[1]);
    assert_true(strcmp(t[0], t[2]) != 0);
    IrModule *m = parse_ok(t[0]);
    ir_module_free(m);
    for (int k = 0; k < 3; k++)
        free(t[k]);
}

/* With layouts, every array shape is written with its default layout
 * (tuple elements and a while loop's state too), a layout given to one
 * value stays, and the module parses to the layouts written. */
static void layouts_are_written_and_kept(void **state)
{
    (void)state;
    for (int place = FUZZ_IN_ENTRY; place <= FUZZ_IN_WHILE; place++) {
        FuzzBuild *b = fuzz_build_new(2, 1, "layouts");
        fuzz_site_begin(b, (FuzzPlace)place, 2);
        int64_t d[] = { 2, 3, 4 };
        int x = fuzz_input(b, fuzz_shape(IR_TYPE_F32, 3, d));
        int y = fuzz_op1(b, fuzz_shape(IR_TYPE_F32, 3, d), "negate", x, "");
        int z = fuzz_op1(b, fuzz_shape(IR_TYPE_F32, 3, d), "abs", x, "");
        const int m2m[] = { 0, 2, 1 };
        fuzz_set_layout(b, z, m2m, 3, NULL);
        int s = fuzz_input(b, fuzz_shape(IR_TYPE_S32, 0, NULL));
        int outs[] = { y, z, s }, pos[3], comp;
        fuzz_site_end(b, 3, outs, &comp, pos);
        fuzz_build_layouts(b, true);
        char *text = fuzz_build_text(b);
        assert_non_null(strstr(text, "f32[2,3,4]{2,1,0} negate("));
        assert_non_null(strstr(text, "f32[2,3,4]{0,2,1} abs("));
        assert_null(strstr(text, "s32[]{"));
        assert_null(strstr(text, "]{0,2,1}{"));
        IrModule *m = parse_ok(text);
        const IrInstr *neg = NULL, *abs_ = NULL;
        for (int c = 0; c < m->n_computations; c++) {
            neg = neg ? neg : find_op(m->computations[c], IR_OP_NEGATE);
            abs_ = abs_ ? abs_ : find_op(m->computations[c], IR_OP_ABS);
        }
        assert_non_null(neg);
        assert_non_null(abs_);
        assert_true(neg->shape->has_layout && abs_->shape->has_layout);
        assert_int_equal(neg->shape->minor_to_major[0], 2);
        assert_int_equal(abs_->shape->minor_to_major[0], 0);
        assert_int_equal(abs_->shape->minor_to_major[1], 2);
        for (int c = 0; c < m->n_computations; c++)     /* every array shape has one, tuples' leaves too */
            for (int i = 0; i < m->computations[c]->n_instrs; i++) {
                const IrShape *sh = m->computations[c]->instrs[i]->shape;
                if (sh->type != IR_TYPE_TUPLE && sh->rank > 0)
                    assert_true(sh->has_layout);
                for (int e = 0; sh->type == IR_TYPE_TUPLE && e < sh->n_elements; e++)
                    if (sh->elements[e]->type != IR_TYPE_TUPLE && sh->elements[e]->rank > 0)
                        assert_true(sh->elements[e]->has_layout);
            }
        ir_module_free(m);
        free(text);
        fuzz_build_free(b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(groups_match_parser),
        cmocka_unit_test(participants_by_hand),
        cmocka_unit_test(placements_wire_through),
        cmocka_unit_test(post_order_is_the_specs),
        cmocka_unit_test(modules_are_deterministic),
        cmocka_unit_test(layouts_are_written_and_kept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
