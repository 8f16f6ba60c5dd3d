/* test_dtype.c: element types, float conversions and element formatting
 * (src/ir/dtype.c).  Expected bit patterns are derived by hand from each
 * format's definition (sign, exponent field, bias, mantissa) and written
 * out as constants; the comment next to a case shows the derivation. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "ir.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Helpers                                                              */

static uint64_t f64_bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float f32_from(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static const double NEG_NAN_SIGN = -1.0;

static double neg_nan(void)
{
    return copysign(NAN, NEG_NAN_SIGN);
}

/* An element's bytes <-> its bit pattern (storage_bytes wide). */
static void put_bits(IrElemType t, void *p, uint64_t bits)
{
    uint8_t b8 = (uint8_t)bits;
    uint16_t b16 = (uint16_t)bits;
    uint32_t b32 = (uint32_t)bits;
    switch (ir_type_storage_bytes(t)) {
    case 1: memcpy(p, &b8, 1); break;
    case 2: memcpy(p, &b16, 2); break;
    case 4: memcpy(p, &b32, 4); break;
    case 8: memcpy(p, &bits, 8); break;
    default: fail_msg("no scalar storage for %s", ir_type_name(t));
    }
}

static uint64_t get_bits(IrElemType t, const void *p)
{
    uint8_t b8;
    uint16_t b16;
    uint32_t b32;
    uint64_t b64;
    switch (ir_type_storage_bytes(t)) {
    case 1: memcpy(&b8, p, 1); return b8;
    case 2: memcpy(&b16, p, 2); return b16;
    case 4: memcpy(&b32, p, 4); return b32;
    case 8: memcpy(&b64, p, 8); return b64;
    default: fail_msg("no scalar storage for %s", ir_type_name(t));
    }
    return 0;
}

/* Narrow float encode through the dedicated entry points, and check that
 * ir_elem_set_f64 stores the same bits. */
static unsigned encode(IrElemType t, double d)
{
    unsigned bits;
    if (t == IR_TYPE_F16)
        bits = ir_f64_to_f16(d);
    else if (t == IR_TYPE_BF16)
        bits = ir_f64_to_bf16(d);
    else
        bits = ir_f64_to_f8(t, d);
    uint8_t elem[8] = {0};
    ir_elem_set_f64(t, elem, d);
    assert_int_equal(get_bits(t, elem), bits);
    return bits;
}

static double decode(IrElemType t, unsigned bits)
{
    uint8_t elem[8] = {0};
    put_bits(t, elem, bits);
    double d = ir_elem_get_f64(t, elem);
    if (t == IR_TYPE_F16) {
        float f = ir_f16_to_f32((uint16_t)bits);
        assert_true(f64_bits(d) == f64_bits((double)f) || (isnan(d) && isnan(f)));
    } else if (t == IR_TYPE_BF16) {
        float f = ir_bf16_to_f32((uint16_t)bits);
        assert_true(f64_bits(d) == f64_bits((double)f) || (isnan(d) && isnan(f)));
    } else {
        double g = ir_f8_to_f64(t, (uint8_t)bits);
        assert_true(f64_bits(d) == f64_bits(g) || (isnan(d) && isnan(g)));
    }
    return d;
}

typedef struct EncodeCase {
    double in;
    unsigned bits;
} EncodeCase;

static void check_encode(IrElemType t, const EncodeCase *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned got = encode(t, c[i].in);
        if (got != c[i].bits)
            fail_msg("%s: %a (%.17g) -> 0x%x, want 0x%x", ir_type_name(t), c[i].in,
                     c[i].in, got, c[i].bits);
    }
}

typedef struct DecodeCase {
    unsigned bits;
    double out;     /* compared bit for bit, so -0 is checked */
} DecodeCase;

static void check_decode(IrElemType t, const DecodeCase *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        double got = decode(t, c[i].bits);
        if (f64_bits(got) != f64_bits(c[i].out))
            fail_msg("%s: 0x%x -> %a, want %a", ir_type_name(t), c[i].bits, got, c[i].out);
    }
}

/* Decodes to a NaN whose sign bit is `neg`. */
static void check_decodes_nan(IrElemType t, unsigned bits, bool neg)
{
    double d = decode(t, bits);
    if (!isnan(d) || (signbit(d) != 0) != neg)
        fail_msg("%s: 0x%x -> %a, want %snan", ir_type_name(t), bits, d, neg ? "-" : "");
}

#define N_CASES(a) (sizeof(a) / sizeof((a)[0]))
#define CHECK_ENCODE(t, cases) check_encode((t), (cases), N_CASES(cases))
#define CHECK_DECODE(t, cases) check_decode((t), (cases), N_CASES(cases))

/* ------------------------------------------------------------------ */
/* Type table                                                           */

static const char *const expected_names[IR_TYPE_COUNT] = {
    [IR_TYPE_PRED] = "pred",
    [IR_TYPE_S1] = "s1", [IR_TYPE_S2] = "s2", [IR_TYPE_S4] = "s4", [IR_TYPE_S8] = "s8",
    [IR_TYPE_S16] = "s16", [IR_TYPE_S32] = "s32", [IR_TYPE_S64] = "s64",
    [IR_TYPE_U1] = "u1", [IR_TYPE_U2] = "u2", [IR_TYPE_U4] = "u4", [IR_TYPE_U8] = "u8",
    [IR_TYPE_U16] = "u16", [IR_TYPE_U32] = "u32", [IR_TYPE_U64] = "u64",
    [IR_TYPE_F16] = "f16", [IR_TYPE_BF16] = "bf16", [IR_TYPE_F32] = "f32",
    [IR_TYPE_F64] = "f64",
    [IR_TYPE_F8E5M2] = "f8e5m2", [IR_TYPE_F8E4M3] = "f8e4m3",
    [IR_TYPE_F8E4M3FN] = "f8e4m3fn", [IR_TYPE_F8E4M3B11FNUZ] = "f8e4m3b11fnuz",
    [IR_TYPE_F8E3M4] = "f8e3m4", [IR_TYPE_F8E5M2FNUZ] = "f8e5m2fnuz",
    [IR_TYPE_F8E4M3FNUZ] = "f8e4m3fnuz", [IR_TYPE_F8E8M0FNU] = "f8e8m0fnu",
    [IR_TYPE_F4E2M1FN] = "f4e2m1fn",
    [IR_TYPE_C64] = "c64", [IR_TYPE_C128] = "c128",
    [IR_TYPE_TOKEN] = "token", [IR_TYPE_OPAQUE] = "opaque",
};

static void test_type_names_round_trip_for_every_type(void **state)
{
    (void)state;
    for (int t = IR_TYPE_PRED; t <= IR_TYPE_OPAQUE; t++) {
        const char *name = expected_names[t];
        assert_non_null(name);
        assert_string_equal(ir_type_name((IrElemType)t), name);
        assert_int_equal(ir_type_from_name(name, strlen(name)), t);
    }
    assert_int_equal(ir_type_from_name("opaque_type", 11), IR_TYPE_OPAQUE);
}

static void test_type_from_name_rejects_non_type_words(void **state)
{
    (void)state;
    static const char *const words[] = {
        "tuple", "invalid", "buffer", "", "f", "s", "f3", "f32x", "F32", "bf", "c32",
        "f8e4m3fnu", "f8", "opaque_", "pred1", "u128", "s0",
    };
    for (size_t i = 0; i < N_CASES(words); i++) {
        if (ir_type_from_name(words[i], strlen(words[i])) != IR_TYPE_INVALID)
            fail_msg("'%s' was taken as a type", words[i]);
    }
}

static void test_type_from_name_uses_only_len_chars(void **state)
{
    (void)state;
    assert_int_equal(ir_type_from_name("f32[2,3]", 3), IR_TYPE_F32);
    assert_int_equal(ir_type_from_name("f8e4m3fnuz", 6), IR_TYPE_F8E4M3);
    assert_int_equal(ir_type_from_name("f8e4m3fnuz", 8), IR_TYPE_F8E4M3FN);
    assert_int_equal(ir_type_from_name("s32", 2), IR_TYPE_INVALID);
    assert_int_equal(ir_type_from_name("pred", 0), IR_TYPE_INVALID);
}

static void test_storage_bytes_per_type(void **state)
{
    (void)state;
    static const struct { IrElemType t; int bytes; } cases[] = {
        {IR_TYPE_PRED, 1}, {IR_TYPE_S1, 1}, {IR_TYPE_S2, 1}, {IR_TYPE_S4, 1},
        {IR_TYPE_S8, 1}, {IR_TYPE_S16, 2}, {IR_TYPE_S32, 4}, {IR_TYPE_S64, 8},
        {IR_TYPE_U1, 1}, {IR_TYPE_U2, 1}, {IR_TYPE_U4, 1}, {IR_TYPE_U8, 1},
        {IR_TYPE_U16, 2}, {IR_TYPE_U32, 4}, {IR_TYPE_U64, 8},
        {IR_TYPE_F16, 2}, {IR_TYPE_BF16, 2}, {IR_TYPE_F32, 4}, {IR_TYPE_F64, 8},
        {IR_TYPE_F8E5M2, 1}, {IR_TYPE_F8E4M3, 1}, {IR_TYPE_F8E4M3FN, 1},
        {IR_TYPE_F8E4M3B11FNUZ, 1}, {IR_TYPE_F8E3M4, 1}, {IR_TYPE_F8E5M2FNUZ, 1},
        {IR_TYPE_F8E4M3FNUZ, 1}, {IR_TYPE_F8E8M0FNU, 1}, {IR_TYPE_F4E2M1FN, 1},
        {IR_TYPE_C64, 8}, {IR_TYPE_C128, 16},
        {IR_TYPE_TOKEN, 0}, {IR_TYPE_OPAQUE, 0}, {IR_TYPE_TUPLE, 0}, {IR_TYPE_INVALID, 0},
    };
    for (size_t i = 0; i < N_CASES(cases); i++) {
        assert_int_equal(ir_type_storage_bytes(cases[i].t), cases[i].bytes);
        assert_int_equal(ir_type_info[cases[i].t].storage_bytes, cases[i].bytes);
    }
}

static void test_type_predicates(void **state)
{
    (void)state;
    assert_true(ir_type_is_signed_int(IR_TYPE_S4));
    assert_false(ir_type_is_unsigned_int(IR_TYPE_S4));
    assert_true(ir_type_is_unsigned_int(IR_TYPE_U1));
    assert_true(ir_type_is_int(IR_TYPE_U64) && ir_type_is_int(IR_TYPE_S1));
    assert_false(ir_type_is_int(IR_TYPE_PRED));
    assert_false(ir_type_is_float(IR_TYPE_PRED));
    assert_true(ir_type_is_float(IR_TYPE_BF16) && ir_type_is_float(IR_TYPE_F4E2M1FN));
    assert_true(ir_type_is_float(IR_TYPE_F8E8M0FNU));
    assert_false(ir_type_is_float(IR_TYPE_C64));
    assert_true(ir_type_is_complex(IR_TYPE_C64) && ir_type_is_complex(IR_TYPE_C128));
    assert_false(ir_type_is_int(IR_TYPE_TOKEN) || ir_type_is_float(IR_TYPE_TUPLE));
    assert_false(ir_type_is_float(IR_TYPE_INVALID) || ir_type_is_int(IR_TYPE_COUNT));
}

static void test_float_info_fields(void **state)
{
    (void)state;
    static const struct {
        IrElemType t;
        int bits, e, m, bias;
        bool inf, sign, nuz, all_ones;
    } rows[] = {
        {IR_TYPE_F16, 16, 5, 10, 15, true, true, false, false},
        {IR_TYPE_BF16, 16, 8, 7, 127, true, true, false, false},
        {IR_TYPE_F32, 32, 8, 23, 127, true, true, false, false},
        {IR_TYPE_F64, 64, 11, 52, 1023, true, true, false, false},
        {IR_TYPE_F8E5M2, 8, 5, 2, 15, true, true, false, false},
        {IR_TYPE_F8E4M3, 8, 4, 3, 7, true, true, false, false},
        {IR_TYPE_F8E4M3FN, 8, 4, 3, 7, false, true, false, true},
        {IR_TYPE_F8E4M3B11FNUZ, 8, 4, 3, 11, false, true, true, false},
        {IR_TYPE_F8E3M4, 8, 3, 4, 3, true, true, false, false},
        {IR_TYPE_F8E5M2FNUZ, 8, 5, 2, 16, false, true, true, false},
        {IR_TYPE_F8E4M3FNUZ, 8, 4, 3, 8, false, true, true, false},
        {IR_TYPE_F8E8M0FNU, 8, 8, 0, 127, false, false, false, true},
        {IR_TYPE_F4E2M1FN, 4, 2, 1, 1, false, true, false, false},
    };
    for (size_t i = 0; i < N_CASES(rows); i++) {
        const IrTypeInfo *fi = &ir_type_info[rows[i].t];
        assert_int_equal(fi->kind, IR_KIND_FLOAT);
        assert_int_equal(fi->bits, rows[i].bits);
        assert_int_equal(fi->exponent_bits, rows[i].e);
        assert_int_equal(fi->mantissa_bits, rows[i].m);
        assert_int_equal(fi->bias, rows[i].bias);
        assert_int_equal(fi->has_inf, rows[i].inf);
        assert_int_equal(fi->has_sign, rows[i].sign);
        assert_int_equal(fi->nan_is_neg_zero, rows[i].nuz);
        assert_int_equal(fi->nan_only_all_ones, rows[i].all_ones);
    }
    assert_int_equal(ir_type_info[IR_TYPE_S4].bits, 4);
    assert_int_equal(ir_type_info[IR_TYPE_PRED].bits, 8);
    assert_int_equal(ir_type_info[IR_TYPE_C128].kind, IR_KIND_COMPLEX);
}

/* ------------------------------------------------------------------ */
/* bf16: 1 sign, 8 exponent (bias 127), 7 mantissa bits                 */

static void test_bf16_exact_values(void **state)
{
    (void)state;
    static const EncodeCase cases[] = {
        {1.0, 0x3F80},          /* exp 127 */
        {-2.0, 0xC000},         /* sign, exp 128 */
        {0.5, 0x3F00},
        {3.140625, 0x4049},     /* 2 * (1 + 73/128) */
        {0.1, 0x3DCD},          /* 1.6 * 2^-4: 0.6 * 128 = 76.8 -> 77 */
        {0.0, 0x0000},
    };
    CHECK_ENCODE(IR_TYPE_BF16, cases);
    static const DecodeCase back[] = {
        {0x3F80, 1.0}, {0xC000, -2.0}, {0x4049, 3.140625}, {0x8000, -0.0},
    };
    CHECK_DECODE(IR_TYPE_BF16, back);
    assert_int_equal(ir_f32_to_bf16(1.0f), 0x3F80);
    assert_int_equal(f32_bits(ir_bf16_to_f32(0x4049)), f32_bits(3.140625f));
}

static void test_bf16_rounds_ties_to_even(void **state)
{
    (void)state;
    static const EncodeCase cases[] = {
        {1.0 + 0x1p-8, 0x3F80},         /* halfway 0x3F80/0x3F81: down to even */
        {1.0 + 3 * 0x1p-8, 0x3F82},     /* halfway 0x3F81/0x3F82: up to even */
        {-(1.0 + 0x1p-8), 0xBF80},
        {1.0 + 0x1p-8 + 0x1p-30, 0x3F81},   /* just above halfway */
        {1.0 + 0x1p-8 - 0x1p-30, 0x3F80},   /* just below halfway */
    };
    CHECK_ENCODE(IR_TYPE_BF16, cases);
    assert_int_equal(ir_f32_to_bf16(1.0f + 0x1p-8f), 0x3F80);
    assert_int_equal(ir_f32_to_bf16(1.0f + 3 * 0x1p-8f), 0x3F82);
}

/* 1 + 2^-8 + 2^-40 is just above a bf16 halfway point, but rounding it to
 * f32 first lands exactly on the halfway point, which then goes to even. */
static void test_bf16_from_f64_rounds_once(void **state)
{
    (void)state;
    double d = 1.0 + 0x1p-8 + 0x1p-40;
    assert_int_equal(ir_f64_to_bf16(d), 0x3F81);
    assert_int_equal(ir_f32_to_bf16((float)d), 0x3F80);
    assert_int_equal(ir_f64_to_bf16(-d), 0xBF81);
}

static void test_bf16_nan_inf_and_signed_zero(void **state)
{
    (void)state;
    static const EncodeCase cases[] = {
        {INFINITY, 0x7F80}, {-INFINITY, 0xFF80}, {-0.0, 0x8000}, {NAN, 0x7FC0},
    };
    CHECK_ENCODE(IR_TYPE_BF16, cases);
    assert_int_equal(encode(IR_TYPE_BF16, neg_nan()), 0xFFC0);
    assert_int_equal(ir_f32_to_bf16(-NAN), 0xFFC0);
    /* A signalling f32 NaN must not truncate to the inf pattern 0x7F80. */
    assert_int_equal(ir_f32_to_bf16(f32_from(0x7F800001)), 0x7FC0);
    assert_int_equal(ir_f32_to_bf16(f32_from(0xFF800001)), 0xFFC0);
    check_decodes_nan(IR_TYPE_BF16, 0x7FC0, false);
    check_decodes_nan(IR_TYPE_BF16, 0xFF81, true);
    static const DecodeCase back[] = { {0x7F80, INFINITY}, {0xFF80, -INFINITY} };
    CHECK_DECODE(IR_TYPE_BF16, back);
    /* bf16 -> f32 keeps the payload: it is the top half of the f32. */
    assert_int_equal(f32_bits(ir_bf16_to_f32(0x7F81)), 0x7F810000);
}

static void test_bf16_subnormals(void **state)
{
    (void)state;
    static const EncodeCase cases[] = {
        {0x1p-133, 0x0001},             /* smallest subnormal: 2^(-126-7) */
        {127 * 0x1p-133, 0x007F},       /* largest subnormal */
        {0x1p-126, 0x0080},             /* smallest normal */
        {-0x1p-133, 0x8001},
        {3 * 0x1p-134, 0x0002},         /* halfway 1/2: to even */
        {255 * 0x1p-134, 0x0080},       /* halfway 0x7F/0x80: carries to normal */
    };
    CHECK_ENCODE(IR_TYPE_BF16, cases);
    static const DecodeCase back[] = {
        {0x0001, 0x1p-133}, {0x007F, 127 * 0x1p-133}, {0x8001, -0x1p-133},
    };
    CHECK_DECODE(IR_TYPE_BF16, back);
    assert_int_equal(f32_bits(ir_bf16_to_f32(0x0001)), f32_bits(0x1p-133f));
}

static void test_bf16_overflow_and_underflow(void **state)
{
    (void)state;
    double max = 255 * 0x1p120;         /* (2 - 2^-7) * 2^127, 0x7F7F */
    double half_up = 511 * 0x1p119;     /* halfway max / 2^128: max is odd */
    static const EncodeCase under[] = {
        {0x1p-134, 0x0000},             /* halfway 0 / min subnormal: to 0 */
        {-0x1p-134, 0x8000},            /* keeps the sign */
        {0x1p-140, 0x0000},
        {-1e-300, 0x8000},
        {1.5 * 0x1p-134, 0x0001},
    };
    CHECK_ENCODE(IR_TYPE_BF16, under);
    assert_int_equal(ir_f64_to_bf16(max), 0x7F7F);
    assert_int_equal(ir_f64_to_bf16(nextafter(half_up, 0)), 0x7F7F);
    assert_int_equal(ir_f64_to_bf16(half_up), 0x7F80);
    assert_int_equal(ir_f64_to_bf16(-half_up), 0xFF80);
    assert_int_equal(ir_f64_to_bf16(1e300), 0x7F80);
    assert_int_equal(ir_f32_to_bf16(FLT_MAX), 0x7F80);
    assert_int_equal(ir_f32_to_bf16(nextafterf((float)half_up, 0)), 0x7F7F);
    assert_int_equal(f64_bits(decode(IR_TYPE_BF16, 0x7F7F)), f64_bits(max));
}

/* ------------------------------------------------------------------ */
/* f16: 1 sign, 5 exponent (bias 15), 10 mantissa bits                  */

static void test_f16_exact_values(void **state)
{
    (void)state;
    static const EncodeCase cases[] = {
        {1.0, 0x3C00}, {-2.0, 0xC000}, {0.5, 0x3800},
        {0.1, 0x2E66},          /* 1.6 * 2^-4: exp 11, 0.6 * 1024 = 614.4 -> 614 */
        {65504, 0x7BFF},        /* max: (2 - 2^-10) * 2^15 */
        {2048, 0x6800},         /* exp 26 */
    };
    CHECK_ENCODE(IR_TYPE_F16, cases);
    static const DecodeCase back[] = {
        {0x3C00, 1.0}, {0x2E66, 0.0999755859375}, {0x7BFF, 65504}, {0x8000, -0.0},
    };
    CHECK_DECODE(IR_TYPE_F16, back);
    assert_int_equal(ir_f32_to_f16(0.1f), 0x2E66);
    assert_int_equal(f32_bits(ir_f16_to_f32(0xC000)), f32_bits(-2.0f));
}

static void test_f16_rounds_ties_to_even(void **state)
{
    (void)state;
    static const EncodeCase cases[] = {
        {1.0 + 0x1p-11, 0x3C00},        /* down to even */
        {1.0 + 3 * 0x1p-11, 0x3C02},    /* up to even */
        {2049, 0x6800},                 /* ulp 2 above 2048: down */
        {2051, 0x6802},                 /* up */
        {-2051, 0xE802},
        {2049.0001, 0x6801},
    };
    CHECK_ENCODE(IR_TYPE_F16, cases);
    assert_int_equal(ir_f32_to_f16(2051.0f), 0x6802);
}

static void test_f16_from_f64_rounds_once(void **state)
{
    (void)state;
    double d = 1.0 + 0x1p-11 + 0x1p-40;
    assert_int_equal(ir_f64_to_f16(d), 0x3C01);
    assert_int_equal(ir_f32_to_f16((float)d), 0x3C00);
}

static void test_f16_nan_inf_and_signed_zero(void **state)
{
    (void)state;
    static const EncodeCase cases[] = {
        {INFINITY, 0x7C00}, {-INFINITY, 0xFC00}, {-0.0, 0x8000}, {NAN, 0x7E00},
    };
    CHECK_ENCODE(IR_TYPE_F16, cases);
    assert_int_equal(encode(IR_TYPE_F16, neg_nan()), 0xFE00);
    assert_int_equal(ir_f32_to_f16(f32_from(0x7F800001)), 0x7E00);
    assert_int_equal(ir_f32_to_f16(f32_from(0xFFC00000)), 0xFE00);
    check_decodes_nan(IR_TYPE_F16, 0x7C01, false);
    check_decodes_nan(IR_TYPE_F16, 0xFE00, true);
    static const DecodeCase back[] = { {0x7C00, INFINITY}, {0xFC00, -INFINITY} };
    CHECK_DECODE(IR_TYPE_F16, back);
}

static void test_f16_subnormals(void **state)
{
    (void)state;
    static const EncodeCase cases[] = {
        {0x1p-24, 0x0001},              /* smallest subnormal: 2^(-14-10) */
        {1023 * 0x1p-24, 0x03FF},       /* largest subnormal */
        {0x1p-14, 0x0400},              /* smallest normal */
        {-1023 * 0x1p-24, 0x83FF},
        {2047 * 0x1p-25, 0x0400},       /* halfway 0x3FF/0x400: carries up */
    };
    CHECK_ENCODE(IR_TYPE_F16, cases);
    static const DecodeCase back[] = {
        {0x0001, 0x1p-24}, {0x03FF, 1023 * 0x1p-24}, {0x0400, 0x1p-14},
    };
    CHECK_DECODE(IR_TYPE_F16, back);
    assert_int_equal(f32_bits(ir_f16_to_f32(0x0001)), f32_bits(0x1p-24f));
}

static void test_f16_overflow_and_underflow(void **state)
{
    (void)state;
    static const EncodeCase cases[] = {
        {65519, 0x7BFF},                /* below the halfway point 65520 */
        {65520, 0x7C00},                /* halfway, max is odd: rounds to inf */
        {-65520, 0xFC00},
        {1e6, 0x7C00},
        {0x1p-25, 0x0000},              /* halfway 0 / min subnormal */
        {-0x1p-25, 0x8000},
        {0x1p-25 + 0x1p-40, 0x0001},
        {-0x1p-26, 0x8000},
    };
    CHECK_ENCODE(IR_TYPE_F16, cases);
    assert_int_equal(ir_f64_to_f16(nextafter(65520, 0)), 0x7BFF);
    assert_int_equal(ir_f32_to_f16(65520.0f), 0x7C00);
}

/* ------------------------------------------------------------------ */
/* f8e4m3fn: bias 7, no inf, NaN only S.1111.111, max 448               */

static void test_f8e4m3fn_values_and_ties(void **state)
{
    (void)state;
    static const EncodeCase cases[] = {
        {1.0, 0x38}, {-1.0, 0xB8}, {0.5, 0x30}, {1.5, 0x3C}, {3.5, 0x46},
        {448, 0x7E}, {-448, 0xFE},
        {256, 0x78},                    /* exponent all ones is a normal here */
        {1.0625, 0x38},                 /* halfway 1 / 1.125: down to even */
        {1.1875, 0x3A},                 /* halfway 1.125 / 1.25: up to even */
        {0.0, 0x00}, {-0.0, 0x80},
    };
    CHECK_ENCODE(IR_TYPE_F8E4M3FN, cases);
    static const DecodeCase back[] = {
        {0x38, 1.0}, {0x7E, 448}, {0xFE, -448}, {0x78, 256}, {0xF8, -256}, {0x80, -0.0},
    };
    CHECK_DECODE(IR_TYPE_F8E4M3FN, back);
}

static void test_f8e4m3fn_overflow_is_nan(void **state)
{
    (void)state;
    static const EncodeCase cases[] = {
        {464, 0x7E},                    /* halfway 448 / 480: to even (448) */
        {460, 0x7E},
        {480, 0x7F}, {1e9, 0x7F}, {-1e9, 0xFF},
        {INFINITY, 0x7F}, {-INFINITY, 0xFF}, {NAN, 0x7F},
    };
    CHECK_ENCODE(IR_TYPE_F8E4M3FN, cases);
    assert_int_equal(encode(IR_TYPE_F8E4M3FN, nextafter(464, 500)), 0x7F);
    assert_int_equal(encode(IR_TYPE_F8E4M3FN, neg_nan()), 0xFF);
    check_decodes_nan(IR_TYPE_F8E4M3FN, 0x7F, false);
    check_decodes_nan(IR_TYPE_F8E4M3FN, 0xFF, true);
}

static void test_f8e4m3fn_subnormals_and_underflow(void **state)
{
    (void)state;
    static const EncodeCase cases[] = {
        {0x1p-9, 0x01},                 /* smallest subnormal: 2^(-6-3) */
        {7 * 0x1p-9, 0x07},             /* largest subnormal */
        {0x1p-6, 0x08},                 /* smallest normal */
        {15 * 0x1p-10, 0x08},           /* halfway 0x07 / 0x08: to even 0x08 */
        {3 * 0x1p-10, 0x02},
        {0x1p-10, 0x00}, {-0x1p-10, 0x80},
        {0x1p-10 * 1.0001, 0x01},
    };
    CHECK_ENCODE(IR_TYPE_F8E4M3FN, cases);
    static const DecodeCase back[] = {
        {0x01, 0x1p-9}, {0x07, 7 * 0x1p-9}, {0x81, -0x1p-9}, {0x08, 0x1p-6},
    };
    CHECK_DECODE(IR_TYPE_F8E4M3FN, back);
}

/* ------------------------------------------------------------------ */
/* f8e5m2: IEEE-like, bias 15, max 57344                                */

static void test_f8e5m2_values_and_ties(void **state)
{
    (void)state;
    static const EncodeCase cases[] = {
        {1.0, 0x3C}, {-1.0, 0xBC}, {0.5, 0x38}, {1.5, 0x3E}, {57344, 0x7B},
        {1.125, 0x3C},                  /* halfway 1 / 1.25: down */
        {1.375, 0x3E},                  /* halfway 1.25 / 1.5: up */
        {-0.0, 0x80},
    };
    CHECK_ENCODE(IR_TYPE_F8E5M2, cases);
    static const DecodeCase back[] = {
        {0x3C, 1.0}, {0x7B, 57344}, {0x7C, INFINITY}, {0xFC, -INFINITY}, {0x80, -0.0},
    };
    CHECK_DECODE(IR_TYPE_F8E5M2, back);
}

static void test_f8e5m2_overflow_is_inf(void **state)
{
    (void)state;
    static const EncodeCase cases[] = {
        {61440, 0x7C},                  /* halfway 57344 / 65536, max odd: inf */
        {61439, 0x7B},
        {1e6, 0x7C}, {-1e6, 0xFC}, {INFINITY, 0x7C}, {-INFINITY, 0xFC},
        {NAN, 0x7E},                    /* quiet NaN S.11111.10 */
    };
    CHECK_ENCODE(IR_TYPE_F8E5M2, cases);
    assert_int_equal(encode(IR_TYPE_F8E5M2, neg_nan()), 0xFE);
    check_decodes_nan(IR_TYPE_F8E5M2, 0x7D, false);
    check_decodes_nan(IR_TYPE_F8E5M2, 0xFF, true);
}

static void test_f8e5m2_subnormals_and_underflow(void **state)
{
    (void)state;
    static const EncodeCase cases[] = {
        {0x1p-16, 0x01},                /* smallest subnormal: 2^(-14-2) */
        {3 * 0x1p-16, 0x03},            /* largest subnormal */
        {0x1p-14, 0x04},
        {0x1p-17, 0x00}, {-0x1p-17, 0x80}, {1.5 * 0x1p-17, 0x01},
    };
    CHECK_ENCODE(IR_TYPE_F8E5M2, cases);
    static const DecodeCase back[] = { {0x01, 0x1p-16}, {0x03, 3 * 0x1p-16}, {0x83, -3 * 0x1p-16} };
    CHECK_DECODE(IR_TYPE_F8E5M2, back);
}

/* ------------------------------------------------------------------ */
/* The other narrow formats                                              */

static void test_f8e4m3_and_f8e3m4_are_ieee_like(void **state)
{
    (void)state;
    static const EncodeCase e4m3[] = {
        {1.0, 0x38}, {240, 0x77},       /* max: exp 14, mantissa 7 */
        {247, 0x77}, {248, 0x78},       /* halfway to 256: max odd, inf */
        {INFINITY, 0x78}, {NAN, 0x7C}, {0x1p-9, 0x01}, {-0.0, 0x80},
    };
    CHECK_ENCODE(IR_TYPE_F8E4M3, e4m3);
    static const EncodeCase e3m4[] = {
        {1.0, 0x30}, {15.5, 0x6F},      /* max: exp 6 (bias 3), mantissa 15 */
        {15.75, 0x70},                  /* halfway to 16: inf */
        {-INFINITY, 0xF0}, {NAN, 0x78}, {0x1p-6, 0x01}, {0x1p-2, 0x10},
    };
    CHECK_ENCODE(IR_TYPE_F8E3M4, e3m4);
    static const DecodeCase back[] = { {0x78, INFINITY}, {0x77, 240}, {0x01, 0x1p-9} };
    CHECK_DECODE(IR_TYPE_F8E4M3, back);
    check_decodes_nan(IR_TYPE_F8E3M4, 0x71, false);
}

static void test_fnuz_formats_have_one_nan_and_no_negative_zero(void **state)
{
    (void)state;
    static const EncodeCase e4m3fnuz[] = {
        {1.0, 0x40},                    /* bias 8 */
        {240, 0x7F},                    /* max: every exponent is normal */
        {248, 0x80},                    /* overflow: NaN */
        {-0.0, 0x00}, {-0x1p-12, 0x00}, /* no -0, even from underflow */
        {NAN, 0x80}, {INFINITY, 0x80}, {-INFINITY, 0x80},
        {0x1p-10, 0x01}, {-0x1p-10, 0x81},
    };
    CHECK_ENCODE(IR_TYPE_F8E4M3FNUZ, e4m3fnuz);
    assert_int_equal(encode(IR_TYPE_F8E4M3FNUZ, neg_nan()), 0x80);
    static const EncodeCase e5m2fnuz[] = {
        {1.0, 0x40}, {57344, 0x7F}, {0x1p-17, 0x01}, {1e6, 0x80}, {-0.0, 0x00},
    };
    CHECK_ENCODE(IR_TYPE_F8E5M2FNUZ, e5m2fnuz);
    static const EncodeCase b11[] = {
        {1.0, 0x58},                    /* bias 11 */
        {30, 0x7F}, {31, 0x80}, {0x1p-13, 0x01}, {-1.0, 0xD8},
    };
    CHECK_ENCODE(IR_TYPE_F8E4M3B11FNUZ, b11);
    static const DecodeCase back[] = { {0x00, 0.0}, {0x7F, 240}, {0x81, -0x1p-10} };
    CHECK_DECODE(IR_TYPE_F8E4M3FNUZ, back);
    check_decodes_nan(IR_TYPE_F8E4M3FNUZ, 0x80, true);
    check_decodes_nan(IR_TYPE_F8E5M2FNUZ, 0x80, true);
    check_decodes_nan(IR_TYPE_F8E4M3B11FNUZ, 0x80, true);
}

/* Exponent only, bias 127, 0xFF is NaN, no zero and no sign. */
static void test_f8e8m0fnu_powers_of_two(void **state)
{
    (void)state;
    static const EncodeCase cases[] = {
        {1.0, 0x7F}, {2.0, 0x80}, {0.5, 0x7E}, {0x1p127, 0xFE}, {0x1p-127, 0x00},
        {0x1p-130, 0x00},               /* below the smallest value: 2^-127 */
        {1.25 * 0x1p-127, 0x01},        /* ml_dtypes rounds as if subnormal here */
        {1.4, 0x7F},
        {1.5, 0x80},                    /* a tie goes up (ml_dtypes) */
        {3.0, 0x81},
        {0x1p128, 0xFF}, {INFINITY, 0xFF}, {NAN, 0xFF},
        {0.0, 0xFF}, {-0.0, 0xFF},      /* no zero: NaN */
        {-1.0, 0xFF},                   /* no sign: NaN */
    };
    CHECK_ENCODE(IR_TYPE_F8E8M0FNU, cases);
    static const DecodeCase back[] = { {0x00, 0x1p-127}, {0x7F, 1.0}, {0xFE, 0x1p127} };
    CHECK_DECODE(IR_TYPE_F8E8M0FNU, back);
    check_decodes_nan(IR_TYPE_F8E8M0FNU, 0xFF, false);
}

/* Values 0 0.5 1 1.5 2 3 4 6; no NaN or inf: saturates like ml_dtypes. */
static void test_f4e2m1fn_saturates(void **state)
{
    (void)state;
    static const EncodeCase cases[] = {
        {0.5, 0x1}, {1.0, 0x2}, {1.5, 0x3}, {6.0, 0x7}, {-6.0, 0xF}, {-0.0, 0x8},
        {5.0, 0x6},                     /* halfway 4 / 6: to even (4) */
        {2.5, 0x4},                     /* halfway 2 / 3: to even (2) */
        {0.75, 0x2}, {0.25, 0x0}, {-0.25, 0x8},
        {7.0, 0x7}, {100, 0x7}, {-100, 0xF}, {INFINITY, 0x7}, {-INFINITY, 0xF},
        {NAN, 0x8},                     /* ml_dtypes: +NaN -> -0, -NaN -> +0 */
    };
    CHECK_ENCODE(IR_TYPE_F4E2M1FN, cases);
    assert_int_equal(encode(IR_TYPE_F4E2M1FN, neg_nan()), 0x0);
    static const DecodeCase back[] = {
        {0x1, 0.5}, {0x5, 3.0}, {0x7, 6.0}, {0xF, -6.0}, {0x8, -0.0}, {0xF7, 6.0},
    };
    CHECK_DECODE(IR_TYPE_F4E2M1FN, back);
}

/* Every non-NaN pattern is its own encoding: decode is exact and the
 * encoder returns each representable value unchanged. */
static void test_narrow_patterns_decode_then_encode_to_themselves(void **state)
{
    (void)state;
    for (int t = IR_TYPE_F8E5M2; t <= IR_TYPE_F4E2M1FN; t++) {
        unsigned n = t == IR_TYPE_F4E2M1FN ? 16 : 256;
        for (unsigned b = 0; b < n; b++) {
            double d = ir_f8_to_f64((IrElemType)t, (uint8_t)b);
            if (isnan(d))
                continue;
            if (ir_f64_to_f8((IrElemType)t, d) != b)
                fail_msg("%s 0x%02x -> %a -> 0x%02x", ir_type_name((IrElemType)t), b, d,
                         ir_f64_to_f8((IrElemType)t, d));
        }
    }
}

/* Values grow with the pattern: positive patterns are ordered, so any
 * off-by-one in exponent or subnormal handling shows up. */
static void test_narrow_positive_patterns_increase(void **state)
{
    (void)state;
    for (int t = IR_TYPE_F8E5M2; t <= IR_TYPE_F4E2M1FN; t++) {
        const IrTypeInfo *fi = &ir_type_info[t];
        unsigned n = 1u << (fi->exponent_bits + fi->mantissa_bits);
        double prev = -1;
        for (unsigned b = 0; b < n; b++) {
            double d = ir_f8_to_f64((IrElemType)t, (uint8_t)b);
            if (isnan(d) || isinf(d))
                break;
            if (!(d > prev))
                fail_msg("%s 0x%02x: %a after %a", fi->name, b, d, prev);
            prev = d;
        }
    }
}

/* ------------------------------------------------------------------ */
/* Integers                                                             */

static int64_t set_get_i64(IrElemType t, int64_t v, uint8_t *raw)
{
    uint8_t elem[8] = {0};
    ir_elem_set_i64(t, elem, v);
    if (raw)
        *raw = elem[0];
    return ir_elem_get_i64(t, elem);
}

static void test_int_set_i64_wraps_modulo_width(void **state)
{
    (void)state;
    uint8_t raw;
    assert_int_equal(set_get_i64(IR_TYPE_S8, 300, NULL), 44);
    assert_int_equal(set_get_i64(IR_TYPE_S8, -129, NULL), 127);
    assert_int_equal(set_get_i64(IR_TYPE_S4, 9, &raw), -7);
    assert_int_equal(raw, 0xF9);                /* kept sign-extended in the byte */
    assert_int_equal(set_get_i64(IR_TYPE_S4, -9, NULL), 7);
    assert_int_equal(set_get_i64(IR_TYPE_U4, -1, &raw), 15);
    assert_int_equal(raw, 0x0F);
    assert_int_equal(set_get_i64(IR_TYPE_U1, 3, NULL), 1);
    assert_int_equal(set_get_i64(IR_TYPE_S1, 1, NULL), -1);
    assert_int_equal(set_get_i64(IR_TYPE_S2, 2, NULL), -2);
    assert_int_equal(set_get_i64(IR_TYPE_U2, 5, NULL), 1);
    assert_int_equal(set_get_i64(IR_TYPE_S16, 65535, NULL), -1);
    assert_int_equal(set_get_i64(IR_TYPE_U16, 65536, NULL), 0);
    assert_int_equal(set_get_i64(IR_TYPE_U32, -1, NULL), 4294967295);
    assert_int_equal(set_get_i64(IR_TYPE_S32, INT64_C(2147483648), NULL), INT32_MIN);
    assert_true(set_get_i64(IR_TYPE_U64, -1, NULL) == -1);      /* bit pattern 2^64-1 */
    assert_true(set_get_i64(IR_TYPE_S64, INT64_MIN, NULL) == INT64_MIN);
    assert_int_equal(set_get_i64(IR_TYPE_PRED, 256, &raw), 1);
    assert_int_equal(raw, 1);
}

static void test_int_get_i64_sign_extends_sub_byte(void **state)
{
    (void)state;
    uint8_t b = 0x0D;                   /* s4 1101 = -3, e.g. after a bitcast */
    assert_int_equal(ir_elem_get_i64(IR_TYPE_S4, &b), -3);
    b = 0xFD;                           /* u4 ignores the high nibble */
    assert_int_equal(ir_elem_get_i64(IR_TYPE_U4, &b), 13);
    b = 0x02;                           /* s2 10 = -2 */
    assert_int_equal(ir_elem_get_i64(IR_TYPE_S2, &b), -2);
    int16_t s16 = -300;
    assert_int_equal(ir_elem_get_i64(IR_TYPE_S16, &s16), -300);
    uint32_t u32 = 0xFFFFFFFF;
    assert_int_equal(ir_elem_get_i64(IR_TYPE_U32, &u32), 4294967295);
}

static int64_t set_f64_get(IrElemType t, double v)
{
    uint8_t elem[8] = {0};
    ir_elem_set_f64(t, elem, v);
    return ir_elem_get_i64(t, elem);
}

static void test_float_to_int_truncates_and_saturates(void **state)
{
    (void)state;
    assert_int_equal(set_f64_get(IR_TYPE_S32, 3.9), 3);
    assert_int_equal(set_f64_get(IR_TYPE_S32, -3.9), -3);
    assert_int_equal(set_f64_get(IR_TYPE_S32, 1e10), INT32_MAX);
    assert_int_equal(set_f64_get(IR_TYPE_S32, -1e10), INT32_MIN);
    assert_int_equal(set_f64_get(IR_TYPE_S32, INFINITY), INT32_MAX);
    assert_int_equal(set_f64_get(IR_TYPE_U8, -5), 0);
    assert_int_equal(set_f64_get(IR_TYPE_U8, -0.5), 0);
    assert_int_equal(set_f64_get(IR_TYPE_U8, 300), 255);
    assert_int_equal(set_f64_get(IR_TYPE_U8, 255.9), 255);
    assert_int_equal(set_f64_get(IR_TYPE_S4, 100), 7);
    assert_int_equal(set_f64_get(IR_TYPE_S4, -100), -8);
    assert_int_equal(set_f64_get(IR_TYPE_U4, 15.5), 15);
    assert_int_equal(set_f64_get(IR_TYPE_S1, -7), -1);
    assert_int_equal(set_f64_get(IR_TYPE_S1, 7), 0);
    assert_true(set_f64_get(IR_TYPE_S64, 0x1p63) == INT64_MAX);
    assert_true(set_f64_get(IR_TYPE_S64, -0x1p63) == INT64_MIN);
    assert_true(set_f64_get(IR_TYPE_S64, -INFINITY) == INT64_MIN);
    assert_true(set_f64_get(IR_TYPE_S64, 0x1p62) == INT64_C(1) << 62);
    assert_true((uint64_t)set_f64_get(IR_TYPE_U64, 1e20) == UINT64_MAX);
    assert_true((uint64_t)set_f64_get(IR_TYPE_U64, 0x1p64 - 2048) == UINT64_C(18446744073709549568));
}

static void test_float_to_int_nan_is_zero_and_pred_is_nonzero(void **state)
{
    (void)state;
    assert_int_equal(set_f64_get(IR_TYPE_S32, NAN), 0);
    assert_int_equal(set_f64_get(IR_TYPE_U64, neg_nan()), 0);
    assert_int_equal(set_f64_get(IR_TYPE_S8, NAN), 0);
    assert_int_equal(set_f64_get(IR_TYPE_PRED, 0.0), 0);
    assert_int_equal(set_f64_get(IR_TYPE_PRED, -0.0), 0);
    assert_int_equal(set_f64_get(IR_TYPE_PRED, 0.25), 1);
    assert_int_equal(set_f64_get(IR_TYPE_PRED, -3), 1);
    assert_int_equal(set_f64_get(IR_TYPE_PRED, NAN), 1);     /* NaN != 0 */
}

static void test_get_f64_of_ints_pred_and_complex(void **state)
{
    (void)state;
    int8_t s8 = -5;
    assert_true(ir_elem_get_f64(IR_TYPE_S8, &s8) == -5.0);
    uint64_t u64 = UINT64_MAX;
    assert_true(ir_elem_get_f64(IR_TYPE_U64, &u64) == 0x1p64);
    uint8_t pred = 7;
    assert_true(ir_elem_get_f64(IR_TYPE_PRED, &pred) == 1.0);
    float c64[2] = {1.5f, -2.0f};
    assert_true(ir_elem_get_f64(IR_TYPE_C64, c64) == 1.5);
    double c128[2] = {0.1, 9.0};
    assert_true(ir_elem_get_f64(IR_TYPE_C128, c128) == 0.1);
    ir_elem_set_f64(IR_TYPE_C128, c128, -4.25);
    assert_true(c128[0] == -4.25 && f64_bits(c128[1]) == 0);
    ir_elem_set_f64(IR_TYPE_C64, c64, 0.1);
    assert_true(c64[0] == 0.1f && f32_bits(c64[1]) == 0);
    float f = 0;
    ir_elem_set_f64(IR_TYPE_F32, &f, 1.0 + 0x1p-24 + 0x1p-40);   /* just over halfway */
    assert_int_equal(f32_bits(f), 0x3F800001);
}

/* ------------------------------------------------------------------ */
/* Formatting                                                           */

static const char *format(IrElemType t, uint64_t bits)
{
    static char buf[128];
    uint8_t elem[16] = {0};
    put_bits(t, elem, bits);
    int n = ir_elem_format(t, elem, false, buf, sizeof buf);
    assert_int_equal(n, (int)strlen(buf));
    return buf;
}

static void test_format_floats_like_xla(void **state)
{
    (void)state;
    assert_string_equal(format(IR_TYPE_F32, f32_bits(0.1f)), "0.1");
    assert_string_equal(format(IR_TYPE_F32, 0x3DCCCCCE), "0.100000009");
    assert_string_equal(format(IR_TYPE_F32, f32_bits(1e10f)), "1e+10");
    assert_string_equal(format(IR_TYPE_F32, f32_bits(FLT_MAX)), "3.40282347e+38");
    assert_string_equal(format(IR_TYPE_F32, f32_bits(-0.0f)), "-0");
    assert_string_equal(format(IR_TYPE_F32, f32_bits(1.0f)), "1");
    assert_string_equal(format(IR_TYPE_F64, f64_bits(0.1)), "0.1");
    assert_string_equal(format(IR_TYPE_F64, f64_bits(0.1 + 0.2)), "0.30000000000000004");
    assert_string_equal(format(IR_TYPE_F64, f64_bits(-2.5)), "-2.5");
    assert_string_equal(format(IR_TYPE_F16, 0x7BFF), "6.55e+04");   /* 65504 */
    assert_string_equal(format(IR_TYPE_F16, 0x0001), "6e-08");      /* 2^-24 */
    assert_string_equal(format(IR_TYPE_BF16, 0x4049), "3.14");      /* 3.140625 */
    assert_string_equal(format(IR_TYPE_BF16, 0x3DCD), "0.1");
    assert_string_equal(format(IR_TYPE_F8E4M3FN, 0x7E), "4.5e+02");  /* 448 */
    assert_string_equal(format(IR_TYPE_F8E5M2, 0x7B), "6e+04");      /* 57344 */
    assert_string_equal(format(IR_TYPE_F4E2M1FN, 0xD), "-3");
    assert_string_equal(format(IR_TYPE_F4E2M1FN, 0x8), "-0");
}

static void test_format_special_values(void **state)
{
    (void)state;
    assert_string_equal(format(IR_TYPE_F32, f32_bits(INFINITY)), "inf");
    assert_string_equal(format(IR_TYPE_F32, f32_bits(-INFINITY)), "-inf");
    assert_string_equal(format(IR_TYPE_F32, 0x7FC00000), "nan");
    assert_string_equal(format(IR_TYPE_F32, 0xFFC00000), "-nan");
    assert_string_equal(format(IR_TYPE_F32, 0x7FC00001), "nan(0x400001)");
    assert_string_equal(format(IR_TYPE_F32, 0x7F800001), "nan(0x1)");
    assert_string_equal(format(IR_TYPE_F64, UINT64_C(0x7FF8000000000000)), "nan");
    assert_string_equal(format(IR_TYPE_F64, UINT64_C(0xFFF0000000000002)), "-nan(0x2)");
    assert_string_equal(format(IR_TYPE_F16, 0x7E00), "nan");
    assert_string_equal(format(IR_TYPE_F16, 0xFE00), "-nan");
    assert_string_equal(format(IR_TYPE_F16, 0x7C01), "nan(0x1)");
    assert_string_equal(format(IR_TYPE_F16, 0xFE01), "-nan(0x201)");
    assert_string_equal(format(IR_TYPE_F16, 0xFC00), "-inf");
    assert_string_equal(format(IR_TYPE_BF16, 0x7FC0), "nan");
    assert_string_equal(format(IR_TYPE_BF16, 0x7FFF), "nan(0x7f)");
    assert_string_equal(format(IR_TYPE_F8E5M2, 0x7D), "nan(0x1)");
    assert_string_equal(format(IR_TYPE_F8E5M2, 0xFE), "-nan");
    assert_string_equal(format(IR_TYPE_F8E4M3FN, 0x7F), "nan");
    assert_string_equal(format(IR_TYPE_F8E4M3FN, 0xFF), "-nan");
    assert_string_equal(format(IR_TYPE_F8E4M3FNUZ, 0x80), "-nan");
    assert_string_equal(format(IR_TYPE_F8E8M0FNU, 0xFF), "nan");
    assert_string_equal(format(IR_TYPE_F8E3M4, 0x70), "inf");
}

static void test_format_ints_pred_and_complex(void **state)
{
    (void)state;
    char buf[64];
    assert_string_equal(format(IR_TYPE_S64, (uint64_t)INT64_MIN), "-9223372036854775808");
    assert_string_equal(format(IR_TYPE_U64, UINT64_MAX), "18446744073709551615");
    assert_string_equal(format(IR_TYPE_S4, 0xF9), "-7");
    assert_string_equal(format(IR_TYPE_U8, 255), "255");
    assert_string_equal(format(IR_TYPE_S8, 0x80), "-128");
    uint8_t pred = 2;
    ir_elem_format(IR_TYPE_PRED, &pred, true, buf, sizeof buf);
    assert_string_equal(buf, "true");
    ir_elem_format(IR_TYPE_PRED, &pred, false, buf, sizeof buf);
    assert_string_equal(buf, "1");
    pred = 0;
    ir_elem_format(IR_TYPE_PRED, &pred, true, buf, sizeof buf);
    assert_string_equal(buf, "false");
    ir_elem_format(IR_TYPE_PRED, &pred, false, buf, sizeof buf);
    assert_string_equal(buf, "0");
    float c64[2] = {1.5f, -2.0f};
    ir_elem_format(IR_TYPE_C64, c64, false, buf, sizeof buf);
    assert_string_equal(buf, "(1.5, -2)");
    double c128[2] = {0.1, -INFINITY};
    ir_elem_format(IR_TYPE_C128, c128, false, buf, sizeof buf);
    assert_string_equal(buf, "(0.1, -inf)");
}

static void test_format_truncates_to_buffer(void **state)
{
    (void)state;
    char buf[8] = "xxxxxxx";
    uint64_t v = UINT64_MAX;
    assert_int_equal(ir_elem_format(IR_TYPE_U64, &v, false, buf, 4), 3);
    assert_string_equal(buf, "184");
    assert_int_equal(ir_elem_format(IR_TYPE_U64, &v, false, buf, 0), 0);
    assert_string_equal(buf, "184");
}

/* The parse path for one printed scalar: special words by hand (nan(0x..)
 * carries the mantissa field), numbers through strtof (f32) or strtod and
 * ir_elem_set_f64.  Returns the element's bits. */
static uint64_t parse_bits(IrElemType t, const char *s)
{
    const IrTypeInfo *fi = &ir_type_info[t];
    uint8_t elem[8] = {0};
    bool neg = s[0] == '-';
    const char *w = s + neg;
    if (strncmp(w, "nan(0x", 6) == 0) {
        uint64_t payload = strtoull(w + 6, NULL, 16);
        uint64_t exp_ones = ((UINT64_C(1) << fi->exponent_bits) - 1) << fi->mantissa_bits;
        uint64_t sign = neg ? UINT64_C(1) << (fi->exponent_bits + fi->mantissa_bits) : 0;
        return sign | exp_ones | payload;
    }
    if (strcmp(w, "nan") == 0)
        ir_elem_set_f64(t, elem, neg ? neg_nan() : NAN);
    else if (t == IR_TYPE_F32) {
        float f = strtof(s, NULL);
        memcpy(elem, &f, sizeof f);
    } else
        ir_elem_set_f64(t, elem, strtod(s, NULL));
    return get_bits(t, elem);
}

/* Significant digits in a %g string: "6.55e+04" has 3, "0.00012" has 2. */
static int significant_digits(const char *s)
{
    int n = 0;
    bool started = false;
    for (; *s && *s != 'e'; s++) {
        if (*s < '0' || *s > '9')
            continue;
        started = started || *s != '0';
        n += started;
    }
    return n;
}

static void check_round_trip(IrElemType t, uint64_t bits, int max_digits)
{
    const char *text = format(t, bits);
    uint64_t back = parse_bits(t, text);
    if (back != bits)
        fail_msg("%s 0x%" PRIx64 " printed '%s' reads back as 0x%" PRIx64,
                 ir_type_name(t), bits, text, back);
    if (max_digits && text[strspn(text, "-")] != 'n' && significant_digits(text) > max_digits)
        fail_msg("%s 0x%" PRIx64 " printed '%s': more than %d digits", ir_type_name(t),
                 bits, text, max_digits);
}

static void test_format_round_trips_every_narrow_pattern(void **state)
{
    (void)state;
    for (int t = IR_TYPE_F8E5M2; t <= IR_TYPE_F4E2M1FN; t++) {
        unsigned n = t == IR_TYPE_F4E2M1FN ? 16 : 256;
        for (unsigned b = 0; b < n; b++)
            check_round_trip((IrElemType)t, b, 0);
    }
    for (unsigned b = 0; b < 0x10000; b++) {
        check_round_trip(IR_TYPE_F16, b, 5);        /* max_digits10 of f16 */
        check_round_trip(IR_TYPE_BF16, b, 4);       /* and of bf16 */
    }
}

static uint64_t next_random(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void test_format_round_trips_f32_and_f64(void **state)
{
    (void)state;
    static const uint64_t f32_special[] = {
        0x00000000, 0x80000000, 0x00000001, 0x007FFFFF, 0x00800000, 0x7F7FFFFF,
        0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7FC00001, 0x3DCCCCCD,
        0x3DCCCCCE, 0x4B000001, 0x3F800001,
    };
    static const uint64_t f64_special[] = {
        UINT64_C(0x0000000000000001), UINT64_C(0x000FFFFFFFFFFFFF),
        UINT64_C(0x0010000000000000), UINT64_C(0x7FEFFFFFFFFFFFFF),
        UINT64_C(0x8000000000000000), UINT64_C(0x7FF0000000000000),
        UINT64_C(0x7FF8000000000000), UINT64_C(0xFFF8000000000001),
        UINT64_C(0x3FB999999999999A), UINT64_C(0x3FD3333333333334),
    };
    for (size_t i = 0; i < N_CASES(f32_special); i++)
        check_round_trip(IR_TYPE_F32, f32_special[i], 9);
    for (size_t i = 0; i < N_CASES(f64_special); i++)
        check_round_trip(IR_TYPE_F64, f64_special[i], 17);
    uint64_t seed = UINT64_C(0x9E3779B97F4A7C15);
    for (int i = 0; i < 20000; i++) {
        uint64_t r = next_random(&seed);
        check_round_trip(IR_TYPE_F32, (uint32_t)r, 9);
        check_round_trip(IR_TYPE_F64, r, 17);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_type_names_round_trip_for_every_type),
        cmocka_unit_test(test_type_from_name_rejects_non_type_words),
        cmocka_unit_test(test_type_from_name_uses_only_len_chars),
        cmocka_unit_test(test_storage_bytes_per_type),
        cmocka_unit_test(test_type_predicates),
        cmocka_unit_test(test_float_info_fields),
        cmocka_unit_test(test_bf16_exact_values),
        cmocka_unit_test(test_bf16_rounds_ties_to_even),
        cmocka_unit_test(test_bf16_from_f64_rounds_once),
        cmocka_unit_test(test_bf16_nan_inf_and_signed_zero),
        cmocka_unit_test(test_bf16_subnormals),
        cmocka_unit_test(test_bf16_overflow_and_underflow),
        cmocka_unit_test(test_f16_exact_values),
        cmocka_unit_test(test_f16_rounds_ties_to_even),
        cmocka_unit_test(test_f16_from_f64_rounds_once),
        cmocka_unit_test(test_f16_nan_inf_and_signed_zero),
        cmocka_unit_test(test_f16_subnormals),
        cmocka_unit_test(test_f16_overflow_and_underflow),
        cmocka_unit_test(test_f8e4m3fn_values_and_ties),
        cmocka_unit_test(test_f8e4m3fn_overflow_is_nan),
        cmocka_unit_test(test_f8e4m3fn_subnormals_and_underflow),
        cmocka_unit_test(test_f8e5m2_values_and_ties),
        cmocka_unit_test(test_f8e5m2_overflow_is_inf),
        cmocka_unit_test(test_f8e5m2_subnormals_and_underflow),
        cmocka_unit_test(test_f8e4m3_and_f8e3m4_are_ieee_like),
        cmocka_unit_test(test_fnuz_formats_have_one_nan_and_no_negative_zero),
        cmocka_unit_test(test_f8e8m0fnu_powers_of_two),
        cmocka_unit_test(test_f4e2m1fn_saturates),
        cmocka_unit_test(test_narrow_patterns_decode_then_encode_to_themselves),
        cmocka_unit_test(test_narrow_positive_patterns_increase),
        cmocka_unit_test(test_int_set_i64_wraps_modulo_width),
        cmocka_unit_test(test_int_get_i64_sign_extends_sub_byte),
        cmocka_unit_test(test_float_to_int_truncates_and_saturates),
        cmocka_unit_test(test_float_to_int_nan_is_zero_and_pred_is_nonzero),
        cmocka_unit_test(test_get_f64_of_ints_pred_and_complex),
        cmocka_unit_test(test_format_floats_like_xla),
        cmocka_unit_test(test_format_special_values),
        cmocka_unit_test(test_format_ints_pred_and_complex),
        cmocka_unit_test(test_format_truncates_to_buffer),
        cmocka_unit_test(test_format_round_trips_every_narrow_pattern),
        cmocka_unit_test(test_format_round_trips_f32_and_f64),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
