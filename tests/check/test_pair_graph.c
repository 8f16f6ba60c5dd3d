/* test_pair_graph.c: the picture of a checked pair (hlo-check --graph).
 *  - check_locate names the first value the rewrite claims equal that is
 *    not: not an earlier region whose two versions agree, not a later one
 *    the difference flows into; in a loop body, the iteration it starts;
 *  - the pair map draws what both compute alike once and each region's
 *    two versions, the first difference marked with its two values;
 *  - an equivalent pair has nothing marked; a pair judged by accuracy is
 *    located bitwise away from the reductions whose accumulation changed;
 *  - a picture that cannot be written is an error naming the file. */
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
#include <unistd.h>

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

typedef struct Pair {
    IrModule *b, *a;
    CheckOptions opt;
    CheckReport rep;
    CheckPairMap map;
    CheckLocated loc;
} Pair;

static void pair_check(Pair *p, const char *before, const char *after)
{
    p->b = parse(before);
    p->a = parse(after);
    check_options_default(&p->opt);
    Error err = { 0 };
    if (!check_modules(coll, p->b, p->a, &p->opt, &p->rep, &err) || !check_map_pair(p->b, p->a, &p->map, &err) ||
        !check_locate(coll, p->b, p->a, &p->map, &p->opt, &p->rep, &p->loc, &err)) {
        error_print(&err, stderr);
        fail_msg("the check failed");
    }
}

static void pair_free(Pair *p)
{
    check_pair_map_free(&p->map);
    check_report_free(&p->rep);
    ir_module_free(p->b);
    ir_module_free(p->a);
}

static const char *name_of(const IrModule *m, int id)
{
    for (int c = 0; c < m->n_computations; c++)
        for (int i = 0; i < m->computations[c]->n_instrs; i++)
            if (m->computations[c]->instrs[i]->id == id)
                return m->computations[c]->instrs[i]->name;
    return "?";
}

/* Two places changed: x commuted (same values), z's operands swapped (not). */
#define CHAIN(X, Z)                                                                                          \
    "HloModule c\nENTRY e {\n  p = f32[8] parameter(0)\n  q = f32[8] parameter(1)\n"                         \
    "  x = f32[8] " X "\n  y = f32[8] multiply(x, p)\n  z = f32[8] " Z "\n"                                  \
    "  w = f32[8] exponential(z)\n  ROOT r = (f32[8], f32[8]) tuple(w, x)\n}\n"

static void test_locate_names_the_first_claim_that_fails(void **state)
{
    (void)state;
    Pair p;
    pair_check(&p, CHAIN("add(p, q)", "subtract(y, q)"), CHAIN("add(q, p)", "subtract(q, y)"));
    assert_false(p.rep.equivalent);
    assert_true(p.map.n_regions >= 2);
    assert_true(p.loc.found);
    assert_string_equal(name_of(p.b, p.loc.before_id), "z");
    assert_string_equal(name_of(p.a, p.loc.after_id), "z");
    assert_int_equal(p.loc.execution, 0);
    assert_int_equal(p.loc.output, -1);     /* computed alike (subtract against subtract), not alike in value */
    /* The two values are each other's negation. */
    double vb = atof(p.loc.before), va = atof(p.loc.after);
    assert_true(vb != 0 && vb == -va);
    pair_free(&p);
}

/* A loop adding one each iteration; after adds two from the second on. */
#define LOOP(STEP)                                                                                           \
    "HloModule l\n"                                                                                          \
    "cond {\n  s = (s32[], f32[4]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"                \
    "  n = s32[] constant(3)\n  ROOT lt = pred[] compare(i, n), direction=LT\n}\n"                            \
    "body {\n  s = (s32[], f32[4]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"                \
    "  v = f32[4] get-tuple-element(s), index=1\n  one = s32[] constant(1)\n  i1 = s32[] add(i, one)\n"     \
    STEP "  ROOT t = (s32[], f32[4]) tuple(i1, v1)\n}\n"                                                      \
    "ENTRY e {\n  p = f32[4] parameter(0)\n  z = s32[] constant(0)\n  s0 = (s32[], f32[4]) tuple(z, p)\n"   \
    "  w = (s32[], f32[4]) while(s0), condition=cond, body=body\n"                                          \
    "  ROOT v = f32[4] get-tuple-element(w), index=1\n}\n"
#define STEP_ONE "  c = f32[] constant(1)\n  cb = f32[4] broadcast(c), dimensions={}\n  v1 = f32[4] add(v, cb)\n"
#define STEP_TWO_LATER                                                                                       \
    "  c1 = f32[] constant(1)\n  c2 = f32[] constant(2)\n  late = pred[] compare(i, one), direction=GE\n"    \
    "  c = f32[] select(late, c2, c1)\n  cb = f32[4] broadcast(c), dimensions={}\n  v1 = f32[4] add(v, cb)\n"

static void test_locate_in_a_loop_names_the_iteration(void **state)
{
    (void)state;
    Pair p;
    pair_check(&p, LOOP(STEP_ONE), LOOP(STEP_TWO_LATER));
    assert_false(p.rep.equivalent);
    assert_true(p.loc.found);
    /* The step itself: before's constant 1 against after's select, which
     * gives 2 from the second iteration on. */
    if (strcmp(name_of(p.b, p.loc.before_id), "c") != 0 || strcmp(name_of(p.a, p.loc.after_id), "c") != 0)
        fail_msg("located %s / %s (region %d output %d run %d)", name_of(p.b, p.loc.before_id),
                 name_of(p.a, p.loc.after_id), p.loc.region, p.loc.output, p.loc.execution);
    assert_int_equal(p.loc.execution, 1);   /* the second iteration */
    assert_string_equal(p.loc.before, "1");
    assert_string_equal(p.loc.after, "2");
    pair_free(&p);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = calloc((size_t)n + 1, 1);
    assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    return s;
}

static int count(const char *s, const char *what)
{
    int n = 0;
    for (const char *p = strstr(s, what); p; p = strstr(p + 1, what))
        n++;
    return n;
}

static char *draw(const char *before, const char *after, bool *equivalent)
{
    IrModule *b = parse(before), *a = parse(after);
    CheckOptions opt;
    check_options_default(&opt);
    CheckReport rep;
    Error err = { 0 };
    char dir[] = "/tmp/test_pair_graph.XXXXXX", path[64], note[256];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/pair.dot", dir);
    CheckPicture pic = { .path = path, .radius = 2, .before_name = "b.hlo", .after_name = "a.hlo", .rep = &rep };
    if (!check_modules(coll, b, a, &opt, &rep, &err) || !check_draw_pair(coll, b, a, &opt, &pic, NULL, note, sizeof note, &err)) {
        error_print(&err, stderr);
        fail_msg("drawing failed");
    }
    assert_string_equal(note, "");      /* a .dot is written, not drawn */
    *equivalent = rep.equivalent;
    char *text = slurp(path);
    unlink(path);
    rmdir(dir);
    check_report_free(&rep);
    ir_module_free(b);
    ir_module_free(a);
    return text;
}

static void test_the_picture_of_a_broken_pair(void **state)
{
    (void)state;
    bool equivalent;
    char *dot = draw(CHAIN("add(p, q)", "subtract(y, q)"), CHAIN("add(q, p)", "subtract(q, y)"), &equivalent);
    assert_false(equivalent);
    assert_non_null(strstr(dot, "digraph"));
    assert_non_null(strstr(dot, "region 1"));
    assert_non_null(strstr(dot, "region 2"));
    /* What both compute alike once (p, q, x, w); y in the regions the
     * swapped operands make; z, the first difference, in both versions. */
    assert_int_equal(count(dot, "label=\"p\\n"), 1);
    assert_int_equal(count(dot, "label=\"w\\n"), 1);
    assert_int_equal(count(dot, "label=\"x\\n"), 1);
    assert_int_equal(count(dot, "label=\"y\\n"), 2);
    assert_int_equal(count(dot, "label=\"z\\n"), 2);
    /* The first difference marked on both zs alone. */
    assert_int_equal(count(dot, "FIRST DIFFERENCE"), 2);
    assert_non_null(strstr(dot, "checked: NOT EQUIVALENT"));
    assert_non_null(strstr(dot, "before z, after z"));
    free(dot);
}

static void test_the_picture_of_an_equivalent_pair(void **state)
{
    (void)state;
    bool equivalent;
    char *dot = draw(CHAIN("add(p, q)", "subtract(y, q)"), CHAIN("add(q, p)", "subtract(y, q)"), &equivalent);
    assert_true(equivalent);
    assert_non_null(strstr(dot, "regions where the modules differ; checked: EQUIVALENT"));
    assert_null(strstr(dot, "FIRST DIFFERENCE"));
    free(dot);
    dot = draw(CHAIN("add(p, q)", "subtract(y, q)"), CHAIN("add(p, q)", "subtract(y, q)"), &equivalent);
    assert_true(equivalent);
    assert_non_null(strstr(dot, "no instruction differs"));
    assert_null(strstr(dot, "region 1"));
    free(dot);
}

/* A bf16 reduce-scatter widened to f32 (flip-reduce-convert-add, judged
 * by accuracy) and, upstream of it, a planted change to its operand. */
#define ADD_TYPE(T) "add_" #T " {\n  a = " #T "[] parameter(0)\n  b = " #T "[] parameter(1)\n" \
                    "  ROOT s = " #T "[] add(a, b)\n}\n"
#define WIDEN(G, ACC)                                                                                        \
    "HloModule w, replica_count=1\n" ADD_TYPE(bf16) ADD_TYPE(f32)                                             \
    "ENTRY e {\n  acc = f32[8,8] parameter(0)\n  g = bf16[8,8] parameter(1)\n  gn = bf16[8,8] " G "\n" ACC "}\n"
#define ACC16 "  rs = bf16[8,8] reduce-scatter(gn), replica_groups={{0}}, dimensions={0}, to_apply=add_bf16\n" \
              "  rs.f32 = f32[8,8] convert(rs)\n  ROOT acc.new = f32[8,8] add(rs.f32, acc)\n"
#define ACC32 "  convert = f32[8,8] convert(gn)\n"                                                           \
              "  rs = f32[8,8] reduce-scatter(convert), channel_id=1, replica_groups={{0}}, dimensions={0}, "    \
              "to_apply=add_f32\n  ROOT acc.new = f32[8,8] add(rs, acc)\n"

static void test_locate_beside_a_precision_change(void **state)
{
    (void)state;
    Pair p;
    pair_check(&p, WIDEN("multiply(g, g)", ACC16), WIDEN("add(g, g)", ACC32));
    if (!p.rep.by_accuracy)
        fail_msg("the widened sum should be judged by accuracy");
    assert_false(p.rep.equivalent);
    assert_true(p.loc.found);
    assert_true(p.loc.beside_precision);
    assert_string_equal(name_of(p.b, p.loc.before_id), "gn");
    assert_int_equal(p.loc.output, -2);
    pair_free(&p);
    /* The widening alone: nothing bitwise to locate beside it. */
    pair_check(&p, WIDEN("multiply(g, g)", ACC16), WIDEN("multiply(g, g)", ACC32));
    assert_false(p.loc.found);
    pair_free(&p);
}

static void test_a_picture_that_cannot_be_written(void **state)
{
    (void)state;
    IrModule *b = parse(CHAIN("add(p, q)", "subtract(y, q)")), *a = parse(CHAIN("add(q, p)", "subtract(q, y)"));
    CheckOptions opt;
    check_options_default(&opt);
    CheckPicture pic = { .path = "/nonexistent-dir/pair.svg", .radius = 2, .before_name = "b", .after_name = "a" };
    char note[256];
    Error err = { 0 };
    assert_false(check_draw_pair(coll, b, a, &opt, &pic, NULL, note, sizeof note, &err));
    assert_int_equal(err.code, ERR_IO);
    assert_non_null(strstr(err.msg, "/nonexistent-dir/pair.dot"));
    ir_module_free(b);
    ir_module_free(a);
}

int main(int argc, char **argv)
{
    coll = coll_init(&argc, &argv);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_locate_names_the_first_claim_that_fails),
        cmocka_unit_test(test_locate_in_a_loop_names_the_iteration),
        cmocka_unit_test(test_the_picture_of_a_broken_pair),
        cmocka_unit_test(test_the_picture_of_an_equivalent_pair),
        cmocka_unit_test(test_locate_beside_a_precision_change),
        cmocka_unit_test(test_a_picture_that_cannot_be_written),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    coll_finish(coll, rc);
}
