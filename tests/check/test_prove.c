/* test_prove.c: the hashing rules of hlo-check --prove (src/check/prove*.c).
 * The proof may put the operands of an op in a canonical order only where
 * the interpreter's result is bitwise the same both ways: checked here over
 * special values for every op and element type prove_commutes() names.
 * Leaves must decode to what they were made from, and hashes must carry the
 * taint of what they read. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "prove_internal.h"

#include <math.h>
#include <string.h>

#define N_SPECIAL 24

/* Special values of type t as raw elements into buf (N_SPECIAL of them). */
static void special_values(IrElemType t, unsigned char *buf)
{
    size_t es = (size_t)ir_type_storage_bytes(t);
    static const double floats[] = { 0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 1e-40, -1e-40, 3.4e38, -3.4e38,
                                     INFINITY, -INFINITY, NAN, -NAN, 1e300, 65504.0, 0.1, 7.0, -7.0, 1e-8 };
    static const int64_t ints[] = { 0, 1, -1, 2, -2, 127, -128, 255, 32767, -32768, 65535, INT32_MAX,
                                    INT32_MIN, INT64_MAX, INT64_MIN, 3, 100, -100, 12345, -54321 };
    for (int i = 0; i < N_SPECIAL; i++) {
        unsigned char *p = buf + (size_t)i * es;
        if (ir_type_is_float(t))
            ir_elem_set_f64(t, p, floats[i % 20]);
        else if (t == IR_TYPE_PRED)
            ir_elem_set_i64(t, p, i & 1);
        else
            ir_elem_set_i64(t, p, ints[i % 20] ^ (i >= 20 ? 0x55 : 0));
    }
    if (ir_type_is_float(t) && es >= 2) {      /* two NaNs with other payloads */
        memset(buf + 20 * es, 0xff, es);
        memset(buf + 21 * es, 0x7f, es);
        buf[21 * es] = 0x01;
    }
}

static const IrOpcode binary_ops[] = { IR_OP_ADD, IR_OP_MULTIPLY, IR_OP_AND, IR_OP_OR, IR_OP_XOR,
                                       IR_OP_MAXIMUM, IR_OP_MINIMUM, IR_OP_SUBTRACT, IR_OP_DIVIDE,
                                       IR_OP_POWER, IR_OP_REMAINDER };

/* For every pair of special values a, b: op(a, b) and op(b, a) have the
 * same bits wherever prove_commutes says they may be swapped. */
static void test_canonical_order_is_bitwise_commutative(void **state)
{
    (void)state;
    int checked = 0;
    for (int t = IR_TYPE_PRED; t < IR_TYPE_TOKEN; t++) {
        if (ir_type_is_complex((IrElemType)t))
            continue;
        size_t es = (size_t)ir_type_storage_bytes((IrElemType)t);
        for (size_t k = 0; k < sizeof binary_ops / sizeof binary_ops[0]; k++) {
            IrOpcode op = binary_ops[k];
            if (!prove_commutes(op, (IrElemType)t, IR_CMP_NONE))
                continue;
            unsigned char sv[N_SPECIAL * 8], a[N_SPECIAL * N_SPECIAL * 8], b[N_SPECIAL * N_SPECIAL * 8];
            unsigned char ab[N_SPECIAL * N_SPECIAL * 8], ba[N_SPECIAL * N_SPECIAL * 8];
            special_values((IrElemType)t, sv);
            for (int i = 0; i < N_SPECIAL; i++)
                for (int j = 0; j < N_SPECIAL; j++) {
                    memcpy(a + (size_t)(i * N_SPECIAL + j) * es, sv + (size_t)i * es, es);
                    memcpy(b + (size_t)(i * N_SPECIAL + j) * es, sv + (size_t)j * es, es);
                }
            Error err = { 0 };
            int64_t n = N_SPECIAL * N_SPECIAL;
            assert_true(interp_binary_kernel(op, (IrElemType)t, ab, a, b, n, &err));
            assert_true(interp_binary_kernel(op, (IrElemType)t, ba, b, a, n, &err));
            for (int64_t e = 0; e < n; e++)
                if (memcmp(ab + e * (int64_t)es, ba + e * (int64_t)es, es) != 0)
                    fail_msg("%s on %s is not commutative at element %lld, yet prove_commutes says so",
                             ir_opcode_name(op), ir_type_name((IrElemType)t), (long long)e);
            checked++;
        }
    }
    assert_true(checked >= 50);    /* every integer type and pred, for each of the seven ops */
}

/* The float ops the proof keeps in order really do depend on it, on the
 * interpreter's own kernel: of two NaNs maximum keeps the lhs's payload,
 * which a bitcast-convert can read back (zeros no longer tell: +0 > -0 in
 * either order), and float add is kept in order for the same reason. */
static void test_float_order_is_kept(void **state)
{
    (void)state;
    for (int t = IR_TYPE_F16; t <= IR_TYPE_F64; t++) {
        assert_false(prove_commutes(IR_OP_ADD, (IrElemType)t, IR_CMP_NONE));
        assert_false(prove_commutes(IR_OP_MAXIMUM, (IrElemType)t, IR_CMP_NONE));
    }
    float a[2], b[2], ab[2], ba[2];
    memcpy(a, (uint32_t[2]){ 0x7fc00001u, 0x7fc00003u }, sizeof a);
    memcpy(b, (uint32_t[2]){ 0xffc00002u, 0x7fc00004u }, sizeof b);
    Error err = { 0 };
    assert_true(interp_binary_kernel(IR_OP_MAXIMUM, IR_TYPE_F32, ab, a, b, 2, &err));
    assert_true(interp_binary_kernel(IR_OP_MAXIMUM, IR_TYPE_F32, ba, b, a, 2, &err));
    assert_true(memcmp(ab, ba, sizeof ab) != 0);
    assert_true(prove_commutes(IR_OP_COMPARE, IR_TYPE_F32, IR_CMP_EQ));
    assert_false(prove_commutes(IR_OP_COMPARE, IR_TYPE_F32, IR_CMP_LT));
}

/* compare EQ / NE is symmetric on the interpreter for every float type,
 * NaNs and signed zeros included (run through a module: compare has no
 * exported kernel). */
static void test_compare_eq_is_symmetric(void **state)
{
    (void)state;
    static const char *types[] = { "f32", "bf16", "f16", "f64", "f8e4m3fn", "s8", "u32" };
    static const char *dirs[] = { "EQ", "NE" };
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++)
        for (int d = 0; d < 2; d++) {
            char text[1024];
            snprintf(text, sizeof text,
                     "HloModule c\n\nENTRY %%main (a: %s[%d], b: %s[%d]) -> (pred[%d], pred[%d]) {\n"
                     "  %%a = %s[%d]{0} parameter(0)\n  %%b = %s[%d]{0} parameter(1)\n"
                     "  %%ab = pred[%d]{0} compare(%%a, %%b), direction=%s\n"
                     "  %%ba = pred[%d]{0} compare(%%b, %%a), direction=%s\n"
                     "  ROOT %%t = (pred[%d]{0}, pred[%d]{0}) tuple(%%ab, %%ba)\n}\n",
                     types[k], N_SPECIAL * N_SPECIAL, types[k], N_SPECIAL * N_SPECIAL, N_SPECIAL * N_SPECIAL,
                     N_SPECIAL * N_SPECIAL, types[k], N_SPECIAL * N_SPECIAL, types[k], N_SPECIAL * N_SPECIAL,
                     N_SPECIAL * N_SPECIAL, dirs[d], N_SPECIAL * N_SPECIAL, dirs[d], N_SPECIAL * N_SPECIAL,
                     N_SPECIAL * N_SPECIAL);
            Error err = { 0 };
            IrModule *m = ir_parse_module(text, strlen(text), "c.hlo", &err);
            assert_non_null(m);
            assert_true(ir_verify_module(m, &err));
            IrElemType t = m->entry->params[0]->shape->type;
            size_t es = (size_t)ir_type_storage_bytes(t);
            unsigned char sv[N_SPECIAL * 8];
            special_values(t, sv);
            Value *args[2] = { value_new_array(m->entry->params[0]->shape, &err),
                               value_new_array(m->entry->params[1]->shape, &err) };
            for (int i = 0; i < N_SPECIAL; i++)
                for (int j = 0; j < N_SPECIAL; j++) {
                    memcpy((char *)args[0]->data + (size_t)(i * N_SPECIAL + j) * es, sv + (size_t)i * es, es);
                    memcpy((char *)args[1]->data + (size_t)(i * N_SPECIAL + j) * es, sv + (size_t)j * es, es);
                }
            Interp *it = interp_new(m, NULL, &err);
            Value *out = NULL;
            assert_true(interp_run(it, args, 2, &out, &err));
            assert_int_equal(prove_commutes(IR_OP_COMPARE, t, d ? IR_CMP_NE : IR_CMP_EQ), 1);
            assert_memory_equal(out->elements[0]->data, out->elements[1]->data, value_bytes(out->elements[0]));
            value_release(out);
            interp_free(it);
            ir_module_free(m);
        }
}

static void test_leaves_decode(void **state)
{
    (void)state;
    int leaf, rank;
    int64_t index;
    PHash p = ph_param(3, 7, 123456789);
    assert_true(ph_tainted(p));
    assert_true(ph_param_decode(p, &leaf, &rank, &index));
    assert_int_equal(leaf, 3);
    assert_int_equal(rank, 7);
    assert_int_equal(index, 123456789);
    assert_false(ph_eq(p, ph_param(3, 6, 123456789)));
    assert_false(ph_eq(p, ph_param(2, 7, 123456789)));
    /* Beyond the packing: hashed, distinct, not decodable. */
    PHash big = ph_param(300, 7, 1);
    assert_false(ph_param_decode(big, &leaf, &rank, &index));
    assert_true(ph_tainted(big));
    float x = -0.0f, y = 0.0f;
    PHash cx = ph_const(IR_TYPE_F32, &x, false), cy = ph_const(IR_TYPE_F32, &y, false);
    assert_false(ph_eq(cx, cy));                        /* -0 is not +0 */
    assert_false(ph_tainted(cx));
    IrElemType t;
    uint64_t bits;
    assert_true(ph_const_decode(cx, &t, &bits));
    assert_int_equal(t, IR_TYPE_F32);
    assert_int_equal(bits, 0x80000000u);
    int32_t i = -2147483647 - 1;
    PHash ci = ph_const(IR_TYPE_S32, &i, false);
    assert_false(ph_eq(ci, cx));                        /* the same bits in another type */
    assert_false(ph_param_decode(cx, &leaf, &rank, &index));
}

static void test_mix_carries_taint_and_order(void **state)
{
    (void)state;
    float one = 1;
    PHash c = ph_const(IR_TYPE_F32, &one, false), x = ph_param(0, 0, 0);
    PMix m;
    pmix_init(&m, IR_OP_ADD);
    pmix_hash(&m, c);
    pmix_hash(&m, c);
    assert_false(ph_tainted(pmix_done(&m)));
    pmix_init(&m, IR_OP_ADD);
    pmix_hash(&m, c);
    pmix_hash(&m, x);
    PHash cx = pmix_done(&m);
    assert_true(ph_tainted(cx));
    pmix_init(&m, IR_OP_ADD);
    pmix_hash(&m, x);
    pmix_hash(&m, c);
    assert_false(ph_eq(cx, pmix_done(&m)));             /* operand order counts */
    pmix_init(&m, IR_OP_MULTIPLY);
    pmix_hash(&m, c);
    pmix_hash(&m, x);
    assert_false(ph_eq(cx, pmix_done(&m)));             /* so does the op */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_canonical_order_is_bitwise_commutative),
        cmocka_unit_test(test_float_order_is_kept),
        cmocka_unit_test(test_compare_eq_is_symmetric),
        cmocka_unit_test(test_leaves_decode),
        cmocka_unit_test(test_mix_carries_taint_and_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
