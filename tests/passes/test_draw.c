/* test_draw.c: a rewrite drawn (src/passes/provenance.c, draw.c and
 * src/ir/graph.c): which pass made, changed or removed each instruction,
 * and the DOT that shows it -- marked instructions filled with their
 * pass's colour, the rest faded, a large computation cut to the
 * neighbourhood of the change. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ir.h"
#include "pass.h"

static IrModule *parse(const char *text)
{
    Error err = { 0 };
    IrModule *m = ir_parse_bytes(text, strlen(text), "test.hlo", &err);
    if (!m || !ir_verify_module(m, &err))
        fail_msg("does not parse: %s", err.msg);
    return m;
}

/* The file's text into buf (n bytes at most, NUL-ended). */
static char *read_text(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t len = fread(buf, 1, n - 1, f);
    buf[len] = 0;
    fclose(f);
    return buf;
}

static const IrInstr *named(const IrModule *m, const char *name)
{
    for (int c = 0; c < m->n_computations; c++)
        for (int i = 0; i < m->computations[c]->n_instrs; i++)
            if (strcmp(m->computations[c]->instrs[i]->name, name) == 0)
                return m->computations[c]->instrs[i];
    return NULL;
}

/* Two all-gathers combined into one: the new all-gather and its
 * get-tuple-elements are the first pass's, the two it replaced are removed
 * by it, an instruction it did not touch is no one's, and the second pass
 * (which finds nothing to do) is nobody's. */
static const char *const gathers =
    "HloModule m, replica_count=2\n"
    "ENTRY e {\n"
    "  a = f32[4] parameter(0)\n"
    "  b = f32[4] parameter(1)\n"
    "  ga = f32[8] all-gather(a), dimensions={0}, replica_groups={{0,1}}\n"
    "  gb = f32[8] all-gather(b), dimensions={0}, replica_groups={{0,1}}\n"
    "  s = f32[8] add(ga, gb)\n"
    "  n = f32[8] negate(s)\n"
    "  ROOT t = (f32[8], f32[4]) tuple(n, a)\n"
    "}\n";

static void test_provenance_of_a_combine(void **state)
{
    (void)state;
    IrModule *m = parse(gathers);
    Error err = { 0 };
    IrModule *before = ir_module_copy(m, &err);
    assert_non_null(before);
    const Pass *list[2] = { pass_find("all-gather-combiner"), pass_find("reduce-scatter-combiner") };
    assert_non_null(list[0]);
    assert_non_null(list[1]);
    PassOptions opt;
    pass_options_default(&opt);
    PassProvenance *prov = pass_provenance_new(m);
    opt.on_change = pass_provenance_record;
    opt.on_change_ctx = prov;
    bool changed = false;
    assert_true(pass_run_pipeline(m, list, 2, &opt, NULL, &changed, &err));
    assert_true(changed);

    int made = 0, second = 0;
    for (int i = 0; i < m->entry->n_instrs; i++) {
        const IrInstr *in = m->entry->instrs[i];
        int p = pass_provenance_after(prov, in);
        made += in->op == IR_OP_ALL_GATHER && p == 1;
        second += p == 2;
    }
    assert_int_equal(made, 1);          /* the combined all-gather */
    assert_int_equal(second, 0);
    assert_int_equal(pass_provenance_after(prov, named(m, "n")), 0);
    assert_int_equal(pass_provenance_after(prov, named(m, "a")), 0);
    /* The combiner keeps the names: ga is now the combined gather's
     * element (changed by it), and the add reading ga and gb is as it was. */
    assert_int_equal(named(m, "ga")->op, IR_OP_GET_TUPLE_ELEMENT);
    assert_int_equal(pass_provenance_after(prov, named(m, "ga")), 1);
    assert_int_equal(pass_provenance_after(prov, named(m, "s")), 0);
    assert_int_equal(pass_provenance_before(prov, named(before, "ga")), 1);
    assert_int_equal(pass_provenance_before(prov, named(before, "gb")), 1);
    assert_int_equal(pass_provenance_before(prov, named(before, "n")), 0);
    assert_int_equal(pass_provenance_before(prov, named(before, "b")), 0);

    /* Drawn: the DOT names the combined gather on the after side, filled. */
    char dir[] = "/tmp/test_drawXXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256], note[512];
    snprintf(path, sizeof path, "%s/pair.dot", dir);
    assert_true(pass_draw_rewrite(before, m, prov, list, 2, path, 2, note, sizeof note, &err));
    assert_string_equal(note, "");
    char text[16384];
    read_text(path, text, sizeof text);
    assert_non_null(strstr(text, "digraph"));
    assert_non_null(strstr(text, "before the passes"));
    assert_non_null(strstr(text, "after the passes"));
    assert_non_null(strstr(text, "all-gather-combiner"));
    assert_null(strstr(text, "reduce-scatter-combiner"));      /* the legend: passes drawn only */
    assert_non_null(strstr(text, "ga\\nall-gather f32[8]"));
    remove(path);
    rmdir(dir);

    pass_provenance_free(prov);
    ir_module_free(before);
    ir_module_free(m);
}

/* A chain p -> x1 -> ... -> x6 with x6 marked: radius 2 draws x6, x5, x4
 * and counts the rest; radius -1 draws every instruction. */
static const char *const chain =
    "HloModule c\n"
    "ENTRY e {\n"
    "  p = f32[2] parameter(0)\n"
    "  x1 = f32[2] negate(p)\n"
    "  x2 = f32[2] negate(x1)\n"
    "  x3 = f32[2] negate(x2)\n"
    "  x4 = f32[2] negate(x3)\n"
    "  x5 = f32[2] negate(x4)\n"
    "  ROOT x6 = f32[2] negate(x5)\n"
    "}\n";

static int mark_x6(const IrInstr *in, int side, void *ctx)
{
    (void)side;
    (void)ctx;
    return strcmp(in->name, "x6") == 0 ? 1 : 0;
}

static char *dot_of(const IrModule *m, int radius)
{
    static char buf[16384];
    const char *names[] = { "the change" };
    IrGraphStyle st = { .mark = mark_x6, .class_names = names, .n_classes = 1, .radius = radius };
    IrGraphSide side = { m, "one" };
    FILE *f = fmemopen(buf, sizeof buf - 1, "w");
    assert_non_null(f);
    assert_true(ir_graph_write_dot(f, &side, 1, &st));
    fclose(f);
    return buf;
}

static void test_dot_cut_to_the_change(void **state)
{
    (void)state;
    IrModule *m = parse(chain);
    char *dot = dot_of(m, 2);
    assert_non_null(strstr(dot, "x6\\nnegate f32[2]"));
    assert_non_null(strstr(dot, "x4\\nnegate"));
    assert_null(strstr(dot, "x3\\nnegate"));
    assert_null(strstr(dot, "p\\nparameter"));
    assert_non_null(strstr(dot, "4 more instructions not drawn"));
    assert_non_null(strstr(dot, ir_graph_class_color(1)));     /* x6 filled */
    assert_non_null(strstr(dot, "fontcolor=\"#999999\""));      /* x5, x4 faded */
    assert_non_null(strstr(dot, "the change"));                /* the legend */
    dot = dot_of(m, -1);
    assert_non_null(strstr(dot, "p\\nparameter"));
    assert_null(strstr(dot, "not drawn"));
    ir_module_free(m);
}

/* Graphviz draws what the writer writes (skipped without dot). */
static void test_rendered_svg(void **state)
{
    (void)state;
    if (system("command -v dot >/dev/null 2>&1") != 0)
        skip();
    IrModule *m = parse(chain);
    char dir[] = "/tmp/test_drawXXXXXX";
    assert_non_null(mkdtemp(dir));
    char svg[256], dotp[256], note[512];
    snprintf(svg, sizeof svg, "%s/c.svg", dir);
    snprintf(dotp, sizeof dotp, "%s/c.dot", dir);
    Error err = { 0 };
    assert_true(pass_draw_rewrite(m, NULL, NULL, NULL, 0, svg, 2, note, sizeof note, &err));
    assert_string_equal(note, "");
    char text[4096];
    assert_non_null(strstr(read_text(svg, text, sizeof text), "<svg"));
    remove(svg);
    remove(dotp);
    rmdir(dir);
    ir_module_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_provenance_of_a_combine),
        cmocka_unit_test(test_dot_cut_to_the_change),
        cmocka_unit_test(test_rendered_svg),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
