/* test_opaque.c: opaque custom calls and elided constants
 * (src/check/opaque.c).  A custom call the interpreter cannot run must be a
 * deterministic function of exactly what it is given: the same target,
 * backend_config and operands give the same outputs, and a change to any of
 * them (one bit of one operand, a dimension, the target) gives other ones. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "check.h"

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

/* Runs m's entry on p (f32[8] each) with the opaque hook (or without). */
static Value *run(const IrModule *m, const float *p0, const float *p1, bool opaque, Error *err)
{
    InterpOptions io = { .device = { 0, 1, 1, 1 }, .opaque = opaque ? check_opaque_custom_call : NULL };
    Interp *it = interp_new(m, &io, err);
    Value *args[2];
    const float *src[2] = { p0, p1 };
    for (int i = 0; i < m->entry->n_params; i++) {
        args[i] = value_new_array(m->entry->params[i]->shape, err);
        memcpy(args[i]->data, src[i], value_bytes(args[i]));
    }
    Value *out = NULL;
    bool ok = interp_run(it, args, m->entry->n_params, &out, err);
    interp_free(it);
    return ok ? out : NULL;
}

#define CALL(target, config, operand) \
    "HloModule m\nENTRY e {\n  p = f32[8] parameter(0)\n  q = f32[8] parameter(1)\n" \
    "  r = f32[2,4] reshape(q)\n" \
    "  ROOT c = (f32[8], s32[3], pred[5]) custom-call(" operand "), custom_call_target=\"" target "\"" \
    config "\n}\n"

static bool same_bits(const Value *a, const Value *b)
{
    return value_bits_equal(a, b);
}

static void test_opaque_call_is_a_function_of_its_operands(void **state)
{
    (void)state;
    float p[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, q[8] = { -1, -2, -3, -4, -5, -6, -7, -8 };
    Error err = { 0 };
    IrModule *base = parse(CALL("te_fused_attn_forward_ffi", ", backend_config=\"{a:1}\"", "p, q"));
    IrModule *twin = parse(CALL("te_fused_attn_forward_ffi", ", backend_config=\"{a:1}\"", "p, q"));
    Value *a = run(base, p, q, true, &err), *b = run(twin, p, q, true, &err);
    assert_non_null(a);
    assert_non_null(b);
    assert_true(same_bits(a, b));           /* same call, same operands: same outputs */

    /* Floats in [-1, 1), not all equal; small integers; a real pred. */
    const float *f = a->elements[0]->data;
    bool differ = false;
    for (int i = 0; i < 8; i++) {
        assert_true(f[i] >= -1.0f && f[i] < 1.0f);
        differ |= f[i] != f[0];
    }
    assert_true(differ);
    const int32_t *s = a->elements[1]->data;
    for (int i = 0; i < 3; i++)
        assert_true(s[i] >= -8 && s[i] <= 8);
    const uint8_t *pr = a->elements[2]->data;
    for (int i = 0; i < 5; i++)
        assert_true(pr[i] <= 1);

    /* One bit of one operand changes the outputs. */
    float q2[8];
    memcpy(q2, q, sizeof q2);
    uint32_t bits;
    memcpy(&bits, &q2[7], 4);
    bits ^= 1;
    memcpy(&q2[7], &bits, 4);
    Value *c = run(base, p, q2, true, &err);
    assert_false(same_bits(a, c));

    /* So do the operands' order, the target, the backend_config, and the
     * operand's dims with the same bytes. */
    IrModule *swapped = parse(CALL("te_fused_attn_forward_ffi", ", backend_config=\"{a:1}\"", "q, p"));
    IrModule *other = parse(CALL("te_fused_attn_backward_ffi", ", backend_config=\"{a:1}\"", "p, q"));
    IrModule *config = parse(CALL("te_fused_attn_forward_ffi", ", backend_config=\"{a:2}\"", "p, q"));
    IrModule *dims = parse(CALL("te_fused_attn_forward_ffi", ", backend_config=\"{a:1}\"", "p, r"));
    Value *d = run(swapped, p, q, true, &err), *e = run(other, p, q, true, &err);
    Value *g = run(config, p, q, true, &err), *h = run(dims, p, q, true, &err);
    assert_non_null(d);
    assert_non_null(h);
    assert_false(same_bits(a, d));
    assert_false(same_bits(a, e));
    assert_false(same_bits(a, g));
    assert_false(same_bits(a, h));

    /* Without the hook: unsupported, naming the target. */
    Error err2 = { 0 };
    assert_null(run(base, p, q, false, &err2));
    assert_int_equal(err2.code, ERR_UNSUPPORTED);
    assert_non_null(strstr(err2.msg, "te_fused_attn_forward_ffi"));

    const char *names[4];
    assert_int_equal(interp_unknown_custom_calls(base, names, 4), 1);
    assert_string_equal(names[0], "te_fused_attn_forward_ffi");
    Value *vals[] = { a, b, c, d, e, g, h };
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++)
        value_release(vals[i]);
    IrModule *mods[] = { base, twin, swapped, other, config, dims };
    for (size_t i = 0; i < sizeof mods / sizeof mods[0]; i++)
        ir_module_free(mods[i]);
}

/* The hash itself: length, content and the starting value all count. */
static void test_hash_separates_inputs(void **state)
{
    (void)state;
    unsigned char buf[100];
    for (int i = 0; i < 100; i++)
        buf[i] = (unsigned char)(i * 7);
    uint64_t h = check_hash_bytes(0, buf, 100);
    assert_int_equal(h, check_hash_bytes(0, buf, 100));
    assert_true(h != check_hash_bytes(1, buf, 100));
    assert_true(h != check_hash_bytes(0, buf, 99));
    for (int i = 0; i < 100; i += 13) {     /* in the 32-byte blocks and in the tail */
        buf[i] ^= 0x10;
        assert_true(h != check_hash_bytes(0, buf, 100));
        buf[i] ^= 0x10;
    }
    unsigned char zeros[40] = { 0 };
    assert_true(check_hash_bytes(0, zeros, 33) != check_hash_bytes(0, zeros, 34));   /* trailing zeros */
}

#define ELIDED(name) \
    "HloModule m\nENTRY e {\n  p = f32[8] parameter(0)\n  " name " = f32[8] constant({...})\n" \
    "  k = s32[2,2] constant({ { 1, 2 }, { 3, 4 } })\n" \
    "  ROOT t = (f32[8], s32[2,2]) tuple(" name ", k)\n}\n"

static void test_fill_elided_by_name_and_seed(void **state)
{
    (void)state;
    Error err = { 0 };
    char note[256];
    IrModule *a = parse(ELIDED("w")), *b = parse(ELIDED("w")), *c = parse(ELIDED("v")), *d = parse(ELIDED("w"));
    assert_int_equal(check_fill_elided_constants(a, 5, note, sizeof note, &err), 1);
    assert_non_null(strstr(note, "1 elided constant"));
    assert_non_null(strstr(note, ": w"));
    assert_int_equal(check_fill_elided_constants(b, 5, note, sizeof note, &err), 1);
    assert_int_equal(check_fill_elided_constants(c, 5, note, sizeof note, &err), 1);
    assert_int_equal(check_fill_elided_constants(d, 6, note, sizeof note, &err), 1);
    const IrLiteral *la = ir_computation_find(a->entry, "w")->info->literal;
    const IrLiteral *lb = ir_computation_find(b->entry, "w")->info->literal;
    const IrLiteral *lc = ir_computation_find(c->entry, "v")->info->literal;
    const IrLiteral *ld = ir_computation_find(d->entry, "w")->info->literal;
    assert_false(la->elided);
    assert_memory_equal(la->data, lb->data, 32);          /* same name, same seed */
    assert_memory_not_equal(la->data, lc->data, 32);      /* another name */
    assert_memory_not_equal(la->data, ld->data, 32);      /* another seed */
    /* The constant that was given keeps its values, and the module prints
     * (and so copies) with the filled ones. */
    const int32_t *k = ir_computation_find(a->entry, "k")->info->literal->data;
    assert_int_equal(k[3], 4);
    IrModule *copy = ir_module_copy(a, &err);
    assert_non_null(copy);
    assert_memory_equal(ir_computation_find(copy->entry, "w")->info->literal->data, la->data, 32);
    /* Nothing elided: nothing filled, no note. */
    assert_int_equal(check_fill_elided_constants(a, 5, note, sizeof note, &err), 0);
    assert_int_equal(note[0], 0);
    IrModule *mods[] = { a, b, c, d, copy };
    for (size_t i = 0; i < sizeof mods / sizeof mods[0]; i++)
        ir_module_free(mods[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_opaque_call_is_a_function_of_its_operands),
        cmocka_unit_test(test_hash_separates_inputs),
        cmocka_unit_test(test_fill_elided_by_name_and_seed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
