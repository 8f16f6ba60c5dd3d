/* dtype.c: element types, their sizes, float conversions and formatting.
 *
 * f16, bf16 and every 8- and 4-bit float go through one minifloat codec
 * (mini_encode / mini_decode) driven by the IrTypeInfo fields, so a format
 * is a table row rather than code.  The conversions follow ml_dtypes, which
 * XLA uses: round to nearest even from the source value, overflow to inf
 * where the format has one and to NaN where it has none.
 *
 * Integer elements are stored in storage_bytes bytes; a signed sub-byte value
 * (s1, s2, s4) is kept sign-extended to the whole byte so that the byte also
 * reads correctly as an int8_t, an unsigned one zero-extended. */
#include "ir.h"

#include <assert.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define INT_TYPE(nm, k, b, bytes) \
    { .name = nm, .kind = k, .bits = b, .storage_bytes = bytes }
/* Floats: name, bits, exponent bits, mantissa bits, bias, then flags. */
#define FLOAT_TYPE(nm, b, e, m, bi, ...)                                    \
    { .name = nm, .kind = IR_KIND_FLOAT, .bits = b,                        \
      .storage_bytes = ((b) + 7) / 8, .exponent_bits = e, .mantissa_bits = m, \
      .bias = bi, __VA_ARGS__ }
#define IEEE .has_inf = true, .has_sign = true

const IrTypeInfo ir_type_info[IR_TYPE_COUNT] = {
    [IR_TYPE_INVALID] = INT_TYPE("invalid", IR_KIND_NONE, 0, 0),
    [IR_TYPE_PRED]    = INT_TYPE("pred", IR_KIND_PRED, 8, 1),
    [IR_TYPE_S1]  = INT_TYPE("s1", IR_KIND_SINT, 1, 1),
    [IR_TYPE_S2]  = INT_TYPE("s2", IR_KIND_SINT, 2, 1),
    [IR_TYPE_S4]  = INT_TYPE("s4", IR_KIND_SINT, 4, 1),
    [IR_TYPE_S8]  = INT_TYPE("s8", IR_KIND_SINT, 8, 1),
    [IR_TYPE_S16] = INT_TYPE("s16", IR_KIND_SINT, 16, 2),
    [IR_TYPE_S32] = INT_TYPE("s32", IR_KIND_SINT, 32, 4),
    [IR_TYPE_S64] = INT_TYPE("s64", IR_KIND_SINT, 64, 8),
    [IR_TYPE_U1]  = INT_TYPE("u1", IR_KIND_UINT, 1, 1),
    [IR_TYPE_U2]  = INT_TYPE("u2", IR_KIND_UINT, 2, 1),
    [IR_TYPE_U4]  = INT_TYPE("u4", IR_KIND_UINT, 4, 1),
    [IR_TYPE_U8]  = INT_TYPE("u8", IR_KIND_UINT, 8, 1),
    [IR_TYPE_U16] = INT_TYPE("u16", IR_KIND_UINT, 16, 2),
    [IR_TYPE_U32] = INT_TYPE("u32", IR_KIND_UINT, 32, 4),
    [IR_TYPE_U64] = INT_TYPE("u64", IR_KIND_UINT, 64, 8),
    [IR_TYPE_F16]  = FLOAT_TYPE("f16", 16, 5, 10, 15, IEEE),
    [IR_TYPE_BF16] = FLOAT_TYPE("bf16", 16, 8, 7, 127, IEEE),
    [IR_TYPE_F32]  = FLOAT_TYPE("f32", 32, 8, 23, 127, IEEE),
    [IR_TYPE_F64]  = FLOAT_TYPE("f64", 64, 11, 52, 1023, IEEE),
    [IR_TYPE_F8E5M2] = FLOAT_TYPE("f8e5m2", 8, 5, 2, 15, IEEE),
    [IR_TYPE_F8E4M3] = FLOAT_TYPE("f8e4m3", 8, 4, 3, 7, IEEE),
    [IR_TYPE_F8E4M3FN] = FLOAT_TYPE("f8e4m3fn", 8, 4, 3, 7,
                                    .has_sign = true, .nan_only_all_ones = true),
    [IR_TYPE_F8E4M3B11FNUZ] = FLOAT_TYPE("f8e4m3b11fnuz", 8, 4, 3, 11,
                                         .has_sign = true, .nan_is_neg_zero = true),
    [IR_TYPE_F8E3M4] = FLOAT_TYPE("f8e3m4", 8, 3, 4, 3, IEEE),
    [IR_TYPE_F8E5M2FNUZ] = FLOAT_TYPE("f8e5m2fnuz", 8, 5, 2, 16,
                                      .has_sign = true, .nan_is_neg_zero = true),
    [IR_TYPE_F8E4M3FNUZ] = FLOAT_TYPE("f8e4m3fnuz", 8, 4, 3, 8,
                                      .has_sign = true, .nan_is_neg_zero = true),
    [IR_TYPE_F8E8M0FNU] = FLOAT_TYPE("f8e8m0fnu", 8, 8, 0, 127,
                                     .nan_only_all_ones = true),
    [IR_TYPE_F4E2M1FN] = FLOAT_TYPE("f4e2m1fn", 4, 2, 1, 1, .has_sign = true),
    [IR_TYPE_C64]  = INT_TYPE("c64", IR_KIND_COMPLEX, 64, 8),
    [IR_TYPE_C128] = INT_TYPE("c128", IR_KIND_COMPLEX, 128, 16),
    [IR_TYPE_TOKEN]  = INT_TYPE("token", IR_KIND_NONE, 0, 0),
    [IR_TYPE_OPAQUE] = INT_TYPE("opaque", IR_KIND_NONE, 0, 0),
    [IR_TYPE_TUPLE]  = INT_TYPE("tuple", IR_KIND_NONE, 0, 0),
};

/* ------------------------------------------------------------------ */
/* Names and classification                                            */

static bool valid_type(IrElemType t)
{
    return t > IR_TYPE_INVALID && t < IR_TYPE_COUNT;
}

static IrTypeKind kind_of(IrElemType t)
{
    return valid_type(t) ? ir_type_info[t].kind : IR_KIND_NONE;
}

/* Every type but INVALID and TUPLE is a word that may start a shape. */
static bool is_type_word(IrElemType t)
{
    return valid_type(t) && t != IR_TYPE_TUPLE;
}

static bool word_equals(const char *s, size_t len, const char *word)
{
    return strlen(word) == len && memcmp(s, word, len) == 0;
}

IrElemType ir_type_from_name(const char *s, size_t len)
{
    for (int t = 0; t < IR_TYPE_COUNT; t++) {
        if (is_type_word((IrElemType)t) && word_equals(s, len, ir_type_info[t].name))
            return (IrElemType)t;
    }
    if (word_equals(s, len, "opaque_type"))    /* the older spelling */
        return IR_TYPE_OPAQUE;
    return IR_TYPE_INVALID;
}

const char *ir_type_name(IrElemType t)
{
    return valid_type(t) ? ir_type_info[t].name : ir_type_info[IR_TYPE_INVALID].name;
}

int ir_type_storage_bytes(IrElemType t)
{
    return valid_type(t) ? ir_type_info[t].storage_bytes : 0;
}

bool ir_type_is_float(IrElemType t) { return kind_of(t) == IR_KIND_FLOAT; }
bool ir_type_is_signed_int(IrElemType t) { return kind_of(t) == IR_KIND_SINT; }
bool ir_type_is_unsigned_int(IrElemType t) { return kind_of(t) == IR_KIND_UINT; }
bool ir_type_is_complex(IrElemType t) { return kind_of(t) == IR_KIND_COMPLEX; }

bool ir_type_is_int(IrElemType t)
{
    return ir_type_is_signed_int(t) || ir_type_is_unsigned_int(t);
}

/* ------------------------------------------------------------------ */
/* Bit layout of a float format, from its IrTypeInfo.  The helpers work on
 * 64-bit patterns so the formatter can use them for f32 and f64 too.    */

static uint64_t low_bits(int n)
{
    return n >= 64 ? UINT64_MAX : (UINT64_C(1) << n) - 1;
}

static uint64_t mant_mask(const IrTypeInfo *fi)
{
    return low_bits(fi->mantissa_bits);
}

static uint64_t mag_mask(const IrTypeInfo *fi)     /* exponent and mantissa */
{
    return low_bits(fi->exponent_bits + fi->mantissa_bits);
}

static uint64_t sign_mask(const IrTypeInfo *fi)
{
    return fi->has_sign ? UINT64_C(1) << (fi->exponent_bits + fi->mantissa_bits) : 0;
}

static uint64_t inf_mag(const IrTypeInfo *fi)      /* IEEE-like formats only */
{
    return low_bits(fi->exponent_bits) << fi->mantissa_bits;
}

static bool has_nan(const IrTypeInfo *fi)
{
    return fi->has_inf || fi->nan_is_neg_zero || fi->nan_only_all_ones;
}

/* Without mantissa bits (f8e8m0fnu) exponent 0 is a normal number, so
 * there are no subnormals and no zero. */
static bool has_zero(const IrTypeInfo *fi)
{
    return fi->mantissa_bits > 0;
}

static uint64_t max_finite_mag(const IrTypeInfo *fi)
{
    if (fi->has_inf)
        return inf_mag(fi) - 1;
    if (fi->nan_only_all_ones)
        return mag_mask(fi) - 1;
    return mag_mask(fi);
}

static bool is_nan(const IrTypeInfo *fi, uint64_t bits)
{
    uint64_t mag = bits & mag_mask(fi);
    if (fi->has_inf)
        return mag > inf_mag(fi);
    if (fi->nan_only_all_ones)
        return mag == mag_mask(fi);
    if (fi->nan_is_neg_zero)
        return bits == sign_mask(fi);
    return false;
}

static bool is_inf(const IrTypeInfo *fi, uint64_t bits)
{
    return fi->has_inf && (bits & mag_mask(fi)) == inf_mag(fi);
}

/* The NaN a conversion produces.  IEEE-like formats get the quiet NaN
 * (top mantissa bit).  A format without NaN (f4e2m1fn) gets what ml_dtypes
 * uses as its quiet_NaN, the -0 pattern, negated for a negative NaN:
 * +NaN -> -0 and -NaN -> +0. */
static uint64_t nan_bits(const IrTypeInfo *fi, bool neg)
{
    uint64_t sign = neg ? sign_mask(fi) : 0;
    if (fi->has_inf)
        return sign | inf_mag(fi) | (UINT64_C(1) << (fi->mantissa_bits - 1));
    if (fi->nan_only_all_ones)
        return sign | mag_mask(fi);
    if (fi->nan_is_neg_zero)
        return sign_mask(fi);
    return neg ? 0 : sign_mask(fi);
}

/* Out of range: inf, else NaN, else (no NaN either) saturate to the max. */
static uint64_t overflow_bits(const IrTypeInfo *fi, bool neg)
{
    uint64_t sign = neg ? sign_mask(fi) : 0;
    if (fi->has_inf)
        return sign | inf_mag(fi);
    if (has_nan(fi))
        return nan_bits(fi, neg);
    return sign | max_finite_mag(fi);
}

/* fnuz formats have no -0: a negative result that rounds to 0 is +0. */
static uint64_t with_sign(const IrTypeInfo *fi, bool neg, uint64_t mag)
{
    if (!neg || (fi->nan_is_neg_zero && mag == 0))
        return mag;
    return sign_mask(fi) | mag;
}

/* ------------------------------------------------------------------ */
/* The minifloat codec                                                  */

/* Magnitude bits of a finite a > 0, rounded to nearest even; the result may
 * exceed max_finite_mag.  The value is scaled so its last kept place is the
 * unit and rounded once with nearbyint (exact scaling by a power of two, so
 * no double rounding).  Below the normal range the place stays that of the
 * smallest normal, which yields subnormals.  For f8e8m0fnu this reproduces
 * ml_dtypes: (0, 2^-127] gives 0x00 and (2^-127, 2^-126) gives 0x01, and a
 * tie 1.5 * 2^k rounds up (the significand 1 is odd, 2 is even). */
static uint64_t round_magnitude(const IrTypeInfo *fi, double a)
{
    int m = fi->mantissa_bits;
    int emin = 1 - fi->bias;        /* exponent of the smallest normal */
    int exp2;
    frexp(a, &exp2);
    int e = exp2 - 1;               /* a = 1.f * 2^e */
    if (e < emin)
        e = emin;
    double q = nearbyint(ldexp(a, m - e));   /* in [0, 2^(m+1)], implicit bit included */
    /* (e + bias - 1) << m plus q: the implicit bit adds the missing 1 to the
     * exponent field, and a q rounded up to 2^(m+1) carries into it. */
    return ((uint64_t)(e + fi->bias - 1) << m) + (uint64_t)q;
}

static uint64_t mini_encode(const IrTypeInfo *fi, double d)
{
    assert(fi->kind == IR_KIND_FLOAT && fi->mantissa_bits <= 23);
    bool neg = signbit(d) != 0;
    if (isnan(d))
        return nan_bits(fi, neg);
    if (isinf(d))
        return overflow_bits(fi, neg);
    if (d == 0)
        return has_zero(fi) ? with_sign(fi, neg, 0) : nan_bits(fi, neg);
    if (neg && !fi->has_sign)
        return nan_bits(fi, neg);
    uint64_t mag = round_magnitude(fi, fabs(d));
    if (mag > max_finite_mag(fi))
        return overflow_bits(fi, neg);
    return with_sign(fi, neg, mag);
}

static double f64_from_bits(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static uint64_t f64_bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

/* IEEE-like NaNs keep their payload in the top mantissa bits, as hardware
 * widening does; the single NaN of the other formats becomes the default
 * quiet NaN (with the sign bit where the pattern has one, as in ml_dtypes). */
static double nan_to_f64(const IrTypeInfo *fi, uint64_t bits)
{
    uint64_t sign = (bits & sign_mask(fi)) ? UINT64_C(1) << 63 : 0;
    uint64_t payload = UINT64_C(1) << 51;
    if (fi->has_inf)
        payload = (bits & mant_mask(fi)) << (52 - fi->mantissa_bits);
    return f64_from_bits(sign | (UINT64_C(0x7FF) << 52) | payload);
}

static double mini_decode(const IrTypeInfo *fi, uint64_t bits)
{
    int m = fi->mantissa_bits;
    bits &= sign_mask(fi) | mag_mask(fi);
    if (is_nan(fi, bits))
        return nan_to_f64(fi, bits);
    bool neg = (bits & sign_mask(fi)) != 0;
    if (is_inf(fi, bits))
        return neg ? -INFINITY : INFINITY;
    int exp_field = (int)((bits & mag_mask(fi)) >> m);
    double frac = (double)(bits & mant_mask(fi));
    double v;
    if (exp_field == 0 && has_zero(fi))
        v = ldexp(frac, 1 - fi->bias - m);                        /* subnormal */
    else
        v = ldexp(ldexp(1.0, m) + frac, exp_field - fi->bias - m);
    return neg ? -v : v;
}

/* ------------------------------------------------------------------ */
/* Public conversions                                                   */

/* bf16 is the top half of an f32, so widening is a shift (payloads and
 * signalling NaNs survive unchanged). */
float ir_bf16_to_f32(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

uint16_t ir_f32_to_bf16(float f)
{
    return (uint16_t)mini_encode(&ir_type_info[IR_TYPE_BF16], f);
}

uint16_t ir_f64_to_bf16(double d)
{
    return (uint16_t)mini_encode(&ir_type_info[IR_TYPE_BF16], d);
}

float ir_f16_to_f32(uint16_t h)
{
    return (float)mini_decode(&ir_type_info[IR_TYPE_F16], h);
}

uint16_t ir_f32_to_f16(float f)
{
    return (uint16_t)mini_encode(&ir_type_info[IR_TYPE_F16], f);
}

uint16_t ir_f64_to_f16(double d)
{
    return (uint16_t)mini_encode(&ir_type_info[IR_TYPE_F16], d);
}

static bool is_byte_float(IrElemType t)
{
    return ir_type_is_float(t) && ir_type_info[t].storage_bytes == 1;
}

double ir_f8_to_f64(IrElemType t, uint8_t bits)
{
    if (!is_byte_float(t)) {
        assert(!"ir_f8_to_f64: not an 8- or 4-bit float type");
        return NAN;
    }
    return mini_decode(&ir_type_info[t], bits);
}

uint8_t ir_f64_to_f8(IrElemType t, double d)
{
    if (!is_byte_float(t)) {
        assert(!"ir_f64_to_f8: not an 8- or 4-bit float type");
        return 0;
    }
    return (uint8_t)mini_encode(&ir_type_info[t], d);
}

/* ------------------------------------------------------------------ */
/* Raw element access                                                   */

/* The stored bytes as an unsigned number (host byte order). */
static uint64_t load_raw(const void *p, int bytes)
{
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
    switch (bytes) {
    case 1: memcpy(&u8, p, 1); return u8;
    case 2: memcpy(&u16, p, 2); return u16;
    case 4: memcpy(&u32, p, 4); return u32;
    case 8: memcpy(&u64, p, 8); return u64;
    }
    assert(!"bad element size");
    return 0;
}

/* Stores the low `bytes` bytes of v. */
static void store_raw(void *p, int bytes, uint64_t v)
{
    uint8_t u8 = (uint8_t)v;
    uint16_t u16 = (uint16_t)v;
    uint32_t u32 = (uint32_t)v;
    switch (bytes) {
    case 1: memcpy(p, &u8, 1); return;
    case 2: memcpy(p, &u16, 2); return;
    case 4: memcpy(p, &u32, 4); return;
    case 8: memcpy(p, &v, 8); return;
    }
    assert(!"bad element size");
}

/* The low `bits` bits of u, sign-extended to 64. */
static uint64_t sign_extend(uint64_t u, int bits)
{
    u &= low_bits(bits);
    if (bits < 64 && (u >> (bits - 1)) & 1)
        u |= ~low_bits(bits);
    return u;
}

/* Two's complement reinterpretation without implementation-defined casts. */
static int64_t to_signed(uint64_t u)
{
    if (u <= (uint64_t)INT64_MAX)
        return (int64_t)u;
    return -(int64_t)(~u) - 1;
}

/* Stores an integer (already reduced or not) modulo 2^bits. */
static void store_int(IrElemType t, void *p, uint64_t v)
{
    const IrTypeInfo *ti = &ir_type_info[t];
    if (ti->kind == IR_KIND_SINT)
        v = sign_extend(v, ti->bits);
    else
        v &= low_bits(ti->bits);
    store_raw(p, ti->storage_bytes, v);
}

/* The stored integer zero-extended from its width (not yet sign-extended). */
static uint64_t load_int(IrElemType t, const void *p)
{
    const IrTypeInfo *ti = &ir_type_info[t];
    return load_raw(p, ti->storage_bytes) & low_bits(ti->bits);
}

int64_t ir_elem_get_i64(IrElemType t, const void *p)
{
    switch (kind_of(t)) {
    case IR_KIND_PRED:
        return load_raw(p, 1) != 0;
    case IR_KIND_SINT:
        return to_signed(sign_extend(load_int(t, p), ir_type_info[t].bits));
    case IR_KIND_UINT:
        return to_signed(load_int(t, p));
    case IR_KIND_FLOAT:
    case IR_KIND_COMPLEX:
    case IR_KIND_NONE:
        break;
    }
    assert(!"ir_elem_get_i64: not an integer type");
    return 0;
}

int64_t ir_elem_get_index(IrElemType t, const void *p)
{
    int64_t v = ir_elem_get_i64(t, p);
    return kind_of(t) == IR_KIND_UINT && v < 0 ? INT64_MAX : v;
}

void ir_elem_set_i64(IrElemType t, void *p, int64_t v)
{
    switch (kind_of(t)) {
    case IR_KIND_PRED:
        store_raw(p, 1, v != 0);
        return;
    case IR_KIND_SINT:
    case IR_KIND_UINT:
        store_int(t, p, (uint64_t)v);
        return;
    case IR_KIND_FLOAT:
    case IR_KIND_COMPLEX:
    case IR_KIND_NONE:
        break;
    }
    assert(!"ir_elem_set_i64: not an integer type");
}

/* ------------------------------------------------------------------ */
/* Elements as double                                                   */

static double float_get(IrElemType t, const void *p)
{
    if (t == IR_TYPE_F32) {
        float f;
        memcpy(&f, p, sizeof f);
        return f;
    }
    if (t == IR_TYPE_F64) {
        double d;
        memcpy(&d, p, sizeof d);
        return d;
    }
    const IrTypeInfo *fi = &ir_type_info[t];
    return mini_decode(fi, load_raw(p, fi->storage_bytes));
}

/* f32 uses the C conversion, which rounds to nearest even and keeps NaN
 * payloads (Annex F; XLA's convert is the same static_cast). */
static void float_set(IrElemType t, void *p, double v)
{
    if (t == IR_TYPE_F32) {
        float f = (float)v;
        memcpy(p, &f, sizeof f);
        return;
    }
    if (t == IR_TYPE_F64) {
        memcpy(p, &v, sizeof v);
        return;
    }
    const IrTypeInfo *fi = &ir_type_info[t];
    store_raw(p, fi->storage_bytes, mini_encode(fi, v));
}

/* v already truncated and not NaN.  2^bits and 2^(bits-1) are exact doubles. */
static uint64_t saturate_unsigned(double v, int bits)
{
    if (!(v > 0))
        return 0;
    if (v >= ldexp(1.0, bits))
        return low_bits(bits);
    return (uint64_t)v;
}

static int64_t saturate_signed(double v, int bits)
{
    double limit = ldexp(1.0, bits - 1);
    int64_t max = (int64_t)low_bits(bits - 1);
    if (v >= limit)
        return max;
    if (v < -limit)
        return -max - 1;
    return (int64_t)v;
}

/* XLA's float -> int convert: truncate, saturate, NaN -> 0. */
static void int_set_f64(IrElemType t, void *p, double v)
{
    int bits = ir_type_info[t].bits;
    double whole = isnan(v) ? 0.0 : trunc(v);
    if (ir_type_is_signed_int(t))
        store_int(t, p, (uint64_t)saturate_signed(whole, bits));
    else
        store_int(t, p, saturate_unsigned(whole, bits));
}

static IrElemType complex_part(IrElemType t)
{
    return t == IR_TYPE_C64 ? IR_TYPE_F32 : IR_TYPE_F64;
}

double ir_elem_get_f64(IrElemType t, const void *p)
{
    switch (kind_of(t)) {
    case IR_KIND_PRED:
        return load_raw(p, 1) != 0;
    case IR_KIND_SINT:
        return (double)ir_elem_get_i64(t, p);
    case IR_KIND_UINT:
        return (double)(uint64_t)ir_elem_get_i64(t, p);
    case IR_KIND_FLOAT:
        return float_get(t, p);
    case IR_KIND_COMPLEX:
        return float_get(complex_part(t), p);       /* the real part */
    case IR_KIND_NONE:
        break;
    }
    assert(!"ir_elem_get_f64: not a numeric type");
    return 0;
}

void ir_elem_set_f64(IrElemType t, void *p, double v)
{
    IrElemType part = complex_part(t);
    switch (kind_of(t)) {
    case IR_KIND_PRED:
        store_raw(p, 1, v != 0);     /* NaN != 0: true, as XLA's convert */
        return;
    case IR_KIND_SINT:
    case IR_KIND_UINT:
        int_set_f64(t, p, v);
        return;
    case IR_KIND_FLOAT:
        float_set(t, p, v);
        return;
    case IR_KIND_COMPLEX:
        float_set(part, p, v);
        float_set(part, (char *)p + ir_type_info[part].storage_bytes, 0.0);
        return;
    case IR_KIND_NONE:
        break;
    }
    assert(!"ir_elem_set_f64: not a numeric type");
}

/* ------------------------------------------------------------------ */
/* Formatting                                                           */

#define SCALAR_MAX 40      /* longest scalar text: "-2.2250738585072014e-308" */
#define FORMAT_MAX 96      /* longest element text: a c128, two scalars */

/* inf, -inf, nan, -nan, nan(0x..): XLA's spelling of the non-finite values.
 * The payload printed is the whole mantissa field; the NaN a conversion
 * produces (nan_bits) prints without one.  False for a finite value. */
static bool format_special(const IrTypeInfo *fi, uint64_t bits, char *out)
{
    const char *sign = (bits & sign_mask(fi)) ? "-" : "";
    if (is_inf(fi, bits)) {
        snprintf(out, SCALAR_MAX, "%sinf", sign);
        return true;
    }
    if (!is_nan(fi, bits))
        return false;
    uint64_t payload = bits & mant_mask(fi);
    if (payload == (nan_bits(fi, false) & mant_mask(fi)))
        snprintf(out, SCALAR_MAX, "%snan", sign);
    else
        snprintf(out, SCALAR_MAX, "%snan(0x%" PRIx64 ")", sign, payload);
    return true;
}

/* The bits the text reads back as, through strtof / strtod and the type's
 * own conversion: the same path a parser takes. */
static uint64_t reparse_bits(IrElemType t, const char *s)
{
    if (t == IR_TYPE_F32) {
        float f = strtof(s, NULL);
        uint32_t u;
        memcpy(&u, &f, sizeof u);
        return u;
    }
    double d = strtod(s, NULL);
    if (t == IR_TYPE_F64)
        return f64_bits(d);
    return mini_encode(&ir_type_info[t], d);
}

/* Precisions to try, in order; the last one always round-trips.  f32 and
 * f64 follow XLA (6 then 9, 15 then 17); the narrow types take the shortest
 * %.Ng that reads back to the same bits. */
typedef struct DigitRange { int first, last, step; } DigitRange;

static DigitRange digit_range(IrElemType t)
{
    if (t == IR_TYPE_F32)
        return (DigitRange){ 6, 9, 3 };
    if (t == IR_TYPE_F64)
        return (DigitRange){ 15, 17, 2 };
    return (DigitRange){ 1, 17, 1 };
}

static void format_finite(IrElemType t, uint64_t bits, double v, char *out)
{
    DigitRange r = digit_range(t);
    for (int digits = r.first; digits < r.last; digits += r.step) {
        snprintf(out, SCALAR_MAX, "%.*g", digits, v);
        if (reparse_bits(t, out) == bits)
            return;
    }
    snprintf(out, SCALAR_MAX, "%.*g", r.last, v);
}

static void format_float(IrElemType t, const void *p, char *out)
{
    const IrTypeInfo *fi = &ir_type_info[t];
    uint64_t bits = load_raw(p, fi->storage_bytes) & (sign_mask(fi) | mag_mask(fi));
    if (!format_special(fi, bits, out))
        format_finite(t, bits, float_get(t, p), out);
}

static void format_complex(IrElemType t, const void *p, char *out)
{
    IrElemType part = complex_part(t);
    char re[SCALAR_MAX], im[SCALAR_MAX];
    format_float(part, p, re);
    format_float(part, (const char *)p + ir_type_info[part].storage_bytes, im);
    snprintf(out, FORMAT_MAX, "(%s, %s)", re, im);
}

static void format_elem(IrElemType t, const void *p, bool pred_words, char *out)
{
    out[0] = '\0';
    switch (kind_of(t)) {
    case IR_KIND_PRED:
        if (pred_words)
            snprintf(out, SCALAR_MAX, "%s", load_raw(p, 1) ? "true" : "false");
        else
            snprintf(out, SCALAR_MAX, "%d", load_raw(p, 1) != 0);
        return;
    case IR_KIND_SINT:
        snprintf(out, SCALAR_MAX, "%" PRId64, ir_elem_get_i64(t, p));
        return;
    case IR_KIND_UINT:
        snprintf(out, SCALAR_MAX, "%" PRIu64, (uint64_t)ir_elem_get_i64(t, p));
        return;
    case IR_KIND_FLOAT:
        format_float(t, p, out);
        return;
    case IR_KIND_COMPLEX:
        format_complex(t, p, out);
        return;
    case IR_KIND_NONE:
        break;
    }
    assert(!"ir_elem_format: not a numeric type");
}

int ir_elem_format(IrElemType t, const void *p, bool pred_words, char *buf, size_t n)
{
    char text[FORMAT_MAX];
    format_elem(t, p, pred_words, text);
    if (n == 0)
        return 0;
    size_t len = strlen(text);
    if (len > n - 1)
        len = n - 1;
    memcpy(buf, text, len);
    buf[len] = '\0';
    return (int)len;
}
