/* test_value.c: value_leaves (src/interp/value.c), the one walk over a
 * result's leaves that hlo-run, the checker, the prover and the snapshot
 * comparison share: tuples flattened in order, nested ones too, and never
 * more than max written. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "interp.h"

#include <string.h>

/* The root of a module with no parameters, run. */
static Value *run(const char *text, IrModule **m)
{
    Error err = { 0 };
    *m = ir_parse_module(text, strlen(text), "t.hlo", &err);
    if (!*m || !ir_verify_module(*m, &err))
        fail_msg("parse: %s", err.msg);
    InterpOptions io = { 0 };
    Interp *it = interp_new(*m, &io, &err);
    Value *out = NULL;
    if (!it || !interp_run(it, NULL, 0, &out, &err))
        fail_msg("run: %s", err.msg);
    interp_free(it);
    return out;
}

static void test_leaves_in_order(void **state)
{
    (void)state;
    IrModule *m;
    Value *v = run("HloModule m\nENTRY e {\n  a = f32[2] constant({1, 2})\n  b = s32[] constant(7)\n"
                   "  c = f32[3] constant({3, 4, 5})\n  t = () tuple()\n  in = (f32[2], s32[]) tuple(a, b)\n"
                   "  ROOT r = ((f32[2], s32[]), (), f32[3]) tuple(in, t, c)\n}\n", &m);
    /* (a, b), (), c: three leaves; the empty tuple has none. */
    assert_int_equal(value_leaves(v, NULL, 0), 3);
    Value *l[4] = { NULL, NULL, NULL, NULL };
    assert_int_equal(value_leaves(v, l, 4), 3);
    assert_int_equal(value_elements(l[0]), 2);
    assert_int_equal(l[1]->shape->type, IR_TYPE_S32);
    assert_int_equal(value_elements(l[2]), 3);
    assert_null(l[3]);
    /* max bounds what is written, not what is counted. */
    Value *two[3] = { NULL, NULL, NULL };
    assert_int_equal(value_leaves(v, two, 2), 3);
    assert_ptr_equal(two[0], l[0]);
    assert_ptr_equal(two[1], l[1]);
    assert_null(two[2]);
    value_release(v);
    ir_module_free(m);
}

static void test_an_array_is_its_own_leaf(void **state)
{
    (void)state;
    IrModule *m;
    Value *v = run("HloModule m\nENTRY e {\n  ROOT a = f32[2] constant({1, 2})\n}\n", &m);
    Value *l = NULL;
    assert_int_equal(value_leaves(v, &l, 1), 1);
    assert_ptr_equal(l, v);
    value_release(v);
    ir_module_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_leaves_in_order),
        cmocka_unit_test(test_an_array_is_its_own_leaf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
