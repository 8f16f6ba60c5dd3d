/* test_memory.c: the memory estimate made before a run (src/interp/memory.c).
 * Each expected figure is worked out by hand from the rules in memory.c's
 * header: results are new buffers unless the op aliases, a buffer lives to
 * the last use of everything aliasing it, scratch and callees add on top. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "interp.h"

#include <string.h>

static IrModule *parse(const char *text)
{
    Error err = { 0 };
    IrModule *m = ir_parse_module(text, strlen(text), "t.hlo", &err);
    if (!m || !ir_verify_module(m, &err)) {
        error_print(&err, stderr);
        fail_msg("parse: %s", err.msg);
    }
    return m;
}

#define MB 4000000      /* f32[1000000] */

static void test_chain_frees_at_last_use(void **state)
{
    (void)state;
    /* p (input) -> a -> b -> c: at c, a is dead (last used by b), b is live. */
    IrModule *m = parse("HloModule m\nENTRY e {\n  p = f32[1000000] parameter(0)\n"
                        "  a = f32[1000000] add(p, p)\n  b = f32[1000000] multiply(a, a)\n"
                        "  ROOT c = f32[1000000] negate(b)\n}\n");
    InterpMemory mem;
    interp_estimate_memory(m, &mem);
    assert_int_equal(mem.parameters, MB);
    assert_int_equal(mem.outputs, MB);
    assert_int_equal(mem.peak, 3 * MB);        /* p + a + b at b, or p + b + c at c */
    assert_string_equal(mem.at->name, "b");    /* the first place the peak is reached */
    ir_module_free(m);
}

static void test_aliases_keep_buffers_alive(void **state)
{
    (void)state;
    /* r aliases a and is used by the root, so a lives to the end: at c the
     * live buffers are p, a (through r) and b; c is new. */
    IrModule *m = parse("HloModule m\nENTRY e {\n  p = f32[1000000] parameter(0)\n"
                        "  a = f32[1000000] add(p, p)\n  r = f32[1000,1000] reshape(a)\n"
                        "  b = f32[1000000] multiply(a, a)\n  c = f32[1000000] negate(b)\n"
                        "  t = (f32[1000,1000], f32[1000000]) tuple(r, c)\n"
                        "  ROOT g = f32[1000,1000] get-tuple-element(t), index=0\n}\n");
    InterpMemory mem;
    interp_estimate_memory(m, &mem);
    assert_int_equal(mem.peak, 4 * MB);
    assert_string_equal(mem.at->name, "c");
    assert_int_equal(mem.largest_bytes, MB);
    ir_module_free(m);
}

static void test_collective_scratch_and_loops(void **state)
{
    (void)state;
    /* all-reduce: result plus three copies of its operand (or of one
     * 64 MiB round of it, when bigger: all_reduce.c). */
    IrModule *m = parse("HloModule m, replica_count=2\n%add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n"
                        " ROOT s = f32[] add(a, b) }\n"
                        "ENTRY e {\n  p = f32[1000000] parameter(0)\n"
                        "  ROOT r = f32[1000000] all-reduce(p), replica_groups={{0,1}}, to_apply=%add\n}\n");
    InterpMemory mem;
    interp_estimate_memory(m, &mem);
    assert_int_equal(mem.peak, MB + MB + 3 * MB);
    ir_module_free(m);
    m = parse("HloModule m, replica_count=2\n%add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n"
              " ROOT s = f32[] add(a, b) }\n"
              "ENTRY e {\n  p = f32[100000000] parameter(0)\n"
              "  ROOT r = f32[100000000] all-reduce(p), replica_groups={{0,1}}, to_apply=%add\n}\n");
    interp_estimate_memory(m, &mem);
    assert_int_equal(mem.peak, 100 * MB + 100 * MB + 3 * ((int64_t)64 << 20));
    ir_module_free(m);

    /* A while loop: the body's own peak (x2 = 2 MB of new values over its
     * parameter) plus the state of the iteration before, over the caller's
     * live buffers (p, and the tuple's element q). */
    m = parse("HloModule m\n"
              "%cond (s: (s32[], f32[1000000])) -> pred[] {\n  s = (s32[], f32[1000000]) parameter(0)\n"
              "  i = s32[] get-tuple-element(s), index=0\n  n = s32[] constant(3)\n"
              "  ROOT lt = pred[] compare(i, n), direction=LT\n}\n"
              "%body (s: (s32[], f32[1000000])) -> (s32[], f32[1000000]) {\n"
              "  s = (s32[], f32[1000000]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
              "  x = f32[1000000] get-tuple-element(s), index=1\n  one = s32[] constant(1)\n"
              "  j = s32[] add(i, one)\n  x1 = f32[1000000] add(x, x)\n  x2 = f32[1000000] multiply(x1, x1)\n"
              "  ROOT t = (s32[], f32[1000000]) tuple(j, x2)\n}\n"
              "ENTRY e {\n  p = f32[1000000] parameter(0)\n  z = s32[] constant(0)\n"
              "  q = f32[1000000] negate(p)\n  t = (s32[], f32[1000000]) tuple(z, q)\n"
              "  ROOT w = (s32[], f32[1000000]) while(t), condition=%cond, body=%body\n}\n");
    interp_estimate_memory(m, &mem);
    /* entry at w: p + z + q (both aliased by t) + w's result (4 MB + 4 B) + the body at x2 (j
     * and x1 live, x2 new: 8 MB + 4 B; `one` died at j) + the state before (4 MB + 4 B) */
    assert_int_equal(mem.peak, MB + 4 + MB + (MB + 4) + (2 * MB + 4) + (MB + 4));
    assert_string_equal(mem.at->name, "x2");
    ir_module_free(m);
}

static void test_format_bytes(void **state)
{
    (void)state;
    char b[32];
    interp_format_bytes(999, b, sizeof b);
    assert_string_equal(b, "999 B");
    interp_format_bytes(1500000, b, sizeof b);
    assert_string_equal(b, "1.5 MB");
    interp_format_bytes(86100000000LL, b, sizeof b);
    assert_string_equal(b, "86.1 GB");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chain_frees_at_last_use),
        cmocka_unit_test(test_aliases_keep_buffers_alive),
        cmocka_unit_test(test_collective_scratch_and_loops),
        cmocka_unit_test(test_format_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
