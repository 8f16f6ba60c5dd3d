/* random_inputs.c: seeded inputs, one stream per (seed, rank, parameter).
 *
 * The same seed gives the same bits on any machine and any MPI build: the
 * streams use only 64-bit integer arithmetic and exact double operations
 * (plus log, sqrt and cos for the normal distribution), never rand().
 *
 * The derivation, exactly (all arithmetic modulo 2^64, >> is logical):
 *
 *   G       = 0x9E3779B97F4A7C15
 *   mix(z)  = z ^= z >> 30; z *= 0xBF58476D1CE4E5B9;
 *             z ^= z >> 27; z *= 0x94D049BB133111EB; z ^ (z >> 31)
 *   sm(x)   = mix(x + G)                  (one splitmix64 output from state x)
 *   key     = sm(sm(sm(seed) ^ rank) ^ param)          (rank, param >= 0)
 *   s[i]    = sm(key + i*G), i = 0..3     (splitmix64 seeded with key, 4 outputs)
 *
 * (check_random_value starts from a key given by its caller instead.)
 *
 * then xoshiro256** on s[0..3]:
 *
 *   next()  = r = rotl(s1 * 5, 7) * 9;  t = s1 << 17;
 *             s2 ^= s0; s3 ^= s1; s1 ^= s2; s0 ^= s3; s2 ^= t; s3 = rotl(s3, 45);
 *             return r
 *
 * Elements are drawn in row-major order (tuple leaves in order, from the
 * same stream), each from these draws:
 *
 *   unit()        = (next() >> 11) * 2^-53                       in [0, 1)
 *   int(lo, hi)   = lo + (((next() >> 32) * (hi - lo + 1)) >> 32)
 *   pred          = next() >> 63
 *   integers      = int(-8, 8) signed, int(0, 16) unsigned (clamped to the type)
 *   uniform float = 2 * unit() - 1 (exact), rounded to the type to nearest
 *                   even; a value that rounds up to +1 becomes -1 (the
 *                   interval wraps, so every grid point keeps its share)
 *   normal        = u1 = ((next() >> 11) + 1) * 2^-53, u2 = unit();
 *                   sqrt(-2 log u1) * cos(2 pi u2), rounded to the type
 *   wide          = s = next() >> 63; e = int(lo, hi); u = unit();
 *                   (-1)^s * 2^e * (1 + u), rounded to the type, where
 *                   [lo, hi] = [-20, 20] clamped to [emin, emax - 1] of the type
 *   special       = a = next(); if a >> 62 == 0: table[int(0, n - 1)]
 *                   (see special_values) else a uniform float as above
 *   (types without a sign, f8e8m0fnu, take |x| of uniform and normal draws)
 *
 * The kinds that reach boundaries (hlo-check's default, --dist=mixed, gives
 * trial t the kind mixed[t % 8] = uniform, copies, edges, pairs, small,
 * extreme, wide, special).  Element i of parameter p of the kinds edges,
 * small and extreme first takes entry i + p of its table (table_of), while
 * there is one, so that scalars meet the boundaries too (p against q are
 * neighbouring entries); the rest is drawn:
 *
 *   edges    table: NaN, -0 (+0 without), NaN, +inf, -inf, +0, the
 *            smallest subnormal, -max, max, the smallest normal, -smallest
 *            subnormal (what the type has; integers: min, -1, max, 0, 1,
 *            min + 1, max - 1, where an unsigned type has max for min and
 *            for -1);
 *            drawn: floats c = next() >> 61; 0: NaN, 1: -0, 2..5:
 *            table[int(0, n - 1)] (the special values), 6..7: uniform (a
 *            type without NaN or -0 takes the special values); integers
 *            as extreme
 *   small    table: -0.5, 2.5, -1.5, 0.5, 1, -2, 4 (integers: 3, B, B - 1,
 *            B + 1, -1, 1, 2 for B bits, clamped); drawn: floats
 *            c = next() >> 62; 0, 1: k / 2 with k = int(-8, 8);
 *            2: +-2^int(-4, 10) (sign next() >> 63, exponent clamped to the
 *            type's normal range); 3: int(-4, 4); integers: c = next() >> 62;
 *            0: int(-4, 4); 1: 2^int(0, B - 2), negated when signed and
 *            next() >> 63; 2: B - 1 + int(0, 2) (shift counts at the
 *            width); 3: int(-1, 1); all clamped to the type
 *   extreme  table: max, the smallest subnormal, 1, -max, +inf, -inf, the
 *            smallest normal (integers: max, 1, min, -1, 0, max - 1,
 *            min + 1; unsigned: max, 1, 0, max, 0, max - 1, 2); drawn:
 *            integers int(0, 6) picks one of min, min + 1, -1, 0, 1,
 *            max - 1, max (unsigned: 0, 1, 2, max/2, max/2 + 1, max - 1,
 *            max, max = 2^bits - 1); floats c = next() >> 62;
 *            0: +-max finite, 1: +-inf (+-max without inf), 2, 3:
 *            +-2^e * (1 + unit()) with e = int(emin - mantissa, emax), the
 *            whole range, subnormals included
 *   (types without a sign take |x| of every table entry)
 *   any      c = int(0, 2): uniform, edges or small (one element, drawn)
 *   copies   every element drawn as `any` from the stream of the parameter's
 *            element type, key = sm(sm(sm(seed) ^ rank) ^ (2^30 + type))
 *            instead of its own: parameters of one type and shape are
 *            copies, of one type and other shapes share a prefix
 *   pairs    a base value b per element from the type's stream (as copies):
 *            `any`, replaced by +0 (false for pred) at every i % 4 == 0;
 *            parameter p's element i then takes, by (i + p) % 4, 0: -b (not b
 *            for pred, b for unsigned types, -b clamped for signed ones),
 *            1, 3: b, 2: `any` from its own stream; so parameters p and
 *            p + 1 hold the pairs (-b, b), (b, own), (own, b), (b, -b), and
 *            +-0 at element 0
 *   pred     a fair coin in every kind but copies and pairs
 *   complex       = the real part, then the imaginary part, each a float of
 *                   the part type (f32 for c64, f64 for c128)
 *
 * A scalar integer entry parameter that is an index operand of a
 * dynamic-slice (operand 1..) or dynamic-update-slice (operand 2..) of the
 * entry computation (its first such use) is drawn as
 *   in = next() >> 63, side = next() >> 63, then
 *   in == 0:          int(0, dim - size)                       (in range)
 *   in == 1, side 0:  int(-4, -1)                              (below)
 *   in == 1, side 1:  int(dim - size + 1, dim - size + 4)      (above)
 * clamped to the index type (unsigned types have no "below": they go above).
 *
 * A scalar integer entry parameter with the frontend attribute
 * hlocheck_range="lo,hi" (hlo-check --local gives it to a loop counter
 * that enters a region: the values the loop gives it) is drawn as
 * int(lo, hi - 1) instead. */
#include "check.h"
#include "check_internal.h"
#include "parallel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* The generator                                                        */

#define GOLDEN 0x9E3779B97F4A7C15ULL

typedef struct Rng {
    uint64_t s[4];
} Rng;

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static uint64_t splitmix(uint64_t x)
{
    return mix64(x + GOLDEN);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static void rng_from_key(Rng *r, uint64_t key)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix(key + (uint64_t)i * GOLDEN);
}

static void rng_seed(Rng *r, uint64_t seed, int rank, int param)
{
    rng_from_key(r, splitmix(splitmix(splitmix(seed) ^ (uint64_t)rank) ^ (uint64_t)param));
}

static uint64_t rng_next(Rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

/* [0, 1) with 53 random bits. */
static double rng_unit(Rng *r)
{
    return (double)(rng_next(r) >> 11) * 0x1p-53;
}

/* ------------------------------------------------------------------ */
/* Jumping ahead: the state after n draws, without drawing them          */

/* xoshiro256**'s state update is linear over GF(2), so the state after n
 * steps is Q(T) s, where Q(x) = x^n mod P(x) and P is the characteristic
 * polynomial of the update T (degree 256, primitive: the period is
 * 2^256 - 1).  P is found once, by Berlekamp-Massey on one state bit's
 * sequence; Q(T) s is then 256 updates and XORs.  This lets a long uniform
 * draw split across threads with the bits of the one sequential stream
 * (random_value). */

enum { POLY_WORDS = 9 };            /* up to degree 575: products of two degree-255 polynomials */
typedef struct Poly {
    uint64_t w[POLY_WORDS];
} Poly;

static bool poly_bit(const Poly *p, int i)
{
    return (p->w[i / 64] >> (i % 64)) & 1;
}

static void poly_flip(Poly *p, int i)
{
    p->w[i / 64] ^= (uint64_t)1 << (i % 64);
}

static void rng_step(Rng *r)
{
    (void)rng_next(r);
}

/* P, with its degree; degree 0 when not found (then nothing jumps). */
static Poly jump_poly;
static int jump_degree = -1;        /* -1: not computed yet */

/* Berlekamp-Massey over GF(2) on 512 bits of s[0]'s lowest bit: the
 * connection polynomial C (s_k = sum c_i s_{k-i}); P is its reverse. */
static void jump_init(void)
{
    if (jump_degree >= 0)
        return;
    enum { N = 512 };
    unsigned char bits[N];
    Rng r;
    rng_from_key(&r, 1);
    for (int k = 0; k < N; k++) {
        bits[k] = (unsigned char)(r.s[0] & 1);
        rng_step(&r);
    }
    Poly c = { { 1 } }, b = { { 1 } };
    int len = 0, m = 1;
    for (int k = 0; k < N; k++) {
        int dsc = bits[k];
        for (int i = 1; i <= len; i++)
            dsc ^= poly_bit(&c, i) & bits[k - i];
        if (!dsc) {
            m++;
            continue;
        }
        Poly t = c;
        for (int i = 0; i + m < POLY_WORDS * 64; i++)
            if (poly_bit(&b, i))
                poly_flip(&c, i + m);
        if (2 * len <= k) {
            len = k + 1 - len;
            b = t;
            m = 1;
        } else {
            m++;
        }
    }
    memset(&jump_poly, 0, sizeof jump_poly);
    for (int i = 0; i <= len; i++)
        if (poly_bit(&c, i))
            poly_flip(&jump_poly, len - i);
    jump_degree = len == 256 ? 256 : 0;
}

/* a = a * b mod P (a, b of degree < 256). */
static void poly_mulmod(Poly *a, const Poly *b)
{
    Poly prod = { { 0 } };
    for (int i = 0; i < 256; i++)
        if (poly_bit(b, i))
            for (int w = 0; w < 4; w++) {
                uint64_t x = a->w[w];
                prod.w[w + i / 64] ^= x << (i % 64);
                if (i % 64)
                    prod.w[w + i / 64 + 1] ^= x >> (64 - i % 64);
            }
    for (int i = 510; i >= 256; i--)       /* prod ^= P << (i - 256) where bit i is set */
        if (poly_bit(&prod, i)) {
            int sh = i - 256, ws = sh / 64, bs = sh % 64;
            for (int w = 0; w < 5 && w + ws < POLY_WORDS; w++) {
                uint64_t x = jump_poly.w[w];
                prod.w[w + ws] ^= x << bs;
                if (bs && w + ws + 1 < POLY_WORDS)
                    prod.w[w + ws + 1] ^= x >> (64 - bs);
            }
        }
    *a = prod;
}

/* r = the state after n more draws.  Callers have run jump_init and found
 * the degree-256 polynomial (fill_uniform; tests/check/test_random_inputs.c
 * checks that it is found and that jumps give the sequential bits). */
static void rng_jump(Rng *r, uint64_t n)
{
    Poly q = { { 1 } }, x = { { 2 } };      /* q = 1, x = x^1 */
    for (uint64_t e = n; e; e >>= 1) {
        if (e & 1)
            poly_mulmod(&q, &x);
        if (e > 1)
            poly_mulmod(&x, &x);
    }
    Rng acc = { { 0, 0, 0, 0 } }, cur = *r;
    for (int i = 0; i < 256; i++) {
        if (poly_bit(&q, i))
            for (int k = 0; k < 4; k++)
                acc.s[k] ^= cur.s[k];
        rng_step(&cur);
    }
    *r = acc;
}

/* [lo, hi], hi - lo < 2^32: a multiply-shift, no rejection (the bias is
 * below 2^-27 for the small ranges used here). */
static int64_t rng_int(Rng *r, int64_t lo, int64_t hi)
{
    uint64_t n = (uint64_t)(hi - lo) + 1;
    return lo + (int64_t)(((rng_next(r) >> 32) * n) >> 32);
}

/* ------------------------------------------------------------------ */
/* Float formats                                                        */

/* Exponent range of a float type's normal numbers and its largest finite value. */
typedef struct FloatRange {
    int emin, emax;
    double max_finite;
} FloatRange;

static FloatRange float_range(IrElemType t)
{
    const IrTypeInfo *fi = &ir_type_info[t];
    int m = fi->mantissa_bits;
    int top = (1 << fi->exponent_bits) - 1;     /* all-ones exponent field */
    FloatRange fr = { .emin = 1 - fi->bias };
    if (fi->has_inf) {
        fr.emax = top - 1 - fi->bias;
        fr.max_finite = ldexp(2.0 - ldexp(1.0, -m), fr.emax);
    } else if (fi->nan_only_all_ones) {
        /* The all-ones pattern is NaN: the top binade loses its last value. */
        fr.emax = top - fi->bias;
        fr.max_finite = m > 0 ? ldexp(2.0 - ldexp(1.0, 1 - m), fr.emax) : ldexp(1.0, fr.emax - 1);
    } else {
        fr.emax = top - fi->bias;
        fr.max_finite = ldexp(2.0 - ldexp(1.0, -m), fr.emax);
    }
    return fr;
}

static bool float_has_nan(IrElemType t)
{
    const IrTypeInfo *fi = &ir_type_info[t];
    return fi->has_inf || fi->nan_only_all_ones || fi->nan_is_neg_zero;
}

static bool float_has_neg_zero(IrElemType t)
{
    const IrTypeInfo *fi = &ir_type_info[t];
    return fi->has_sign && !fi->nan_is_neg_zero;
}

/* Stores v rounded to t; a uniform draw that rounds up to +1 wraps to -1. */
static void store_uniform(IrElemType t, void *p, double v)
{
    ir_elem_set_f64(t, p, v);
    if (ir_elem_get_f64(t, p) >= 1.0)
        ir_elem_set_f64(t, p, -1.0);
}

static double draw_uniform(Rng *r)
{
    return 2.0 * rng_unit(r) - 1.0;
}

static double draw_normal(Rng *r)
{
    double u1 = (double)((rng_next(r) >> 11) + 1) * 0x1p-53;    /* (0, 1]: log is finite */
    double u2 = rng_unit(r);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

static double draw_wide(Rng *r, IrElemType t)
{
    FloatRange fr = float_range(t);
    int lo = fr.emin > -20 ? fr.emin : -20;
    int hi = fr.emax - 1 < 20 ? fr.emax - 1 : 20;
    if (hi < lo)
        hi = lo;
    bool negative = rng_next(r) >> 63;
    int e = (int)rng_int(r, lo, hi);
    double v = ldexp(1.0 + rng_unit(r), e);
    return negative && ir_type_info[t].has_sign ? -v : v;
}

/* The special values of type t, in a fixed order: NaN, +-inf, -0, +0, the
 * smallest and largest subnormals, the smallest normal, +-max finite, and
 * for each narrower format (mantissa bits 23, 10, 7, 3, 2: f32, f16, bf16,
 * f8e4m3, f8e5m2) that t can hold a tie of, the two ties 1 + 2^-(k+1) (rounds
 * down to even) and -(1 + 3 * 2^-(k+1)) (rounds up to even).  Returns the count. */
static int special_values(IrElemType t, double *out)
{
    static const int narrower[] = { 23, 10, 7, 3, 2 };
    const IrTypeInfo *fi = &ir_type_info[t];
    FloatRange fr = float_range(t);
    int m = fi->mantissa_bits, n = 0;
    if (float_has_nan(t))
        out[n++] = NAN;
    if (fi->has_inf) {
        out[n++] = INFINITY;
        out[n++] = -INFINITY;
    }
    if (float_has_neg_zero(t))
        out[n++] = -0.0;
    out[n++] = 0.0;
    out[n++] = ldexp(1.0, fr.emin - m);                      /* smallest subnormal */
    out[n++] = ldexp(1.0 - ldexp(1.0, -m), fr.emin);         /* largest subnormal */
    out[n++] = ldexp(1.0, fr.emin);                          /* smallest normal */
    out[n++] = fr.max_finite;
    if (fi->has_sign)
        out[n++] = -fr.max_finite;
    for (size_t i = 0; i < sizeof narrower / sizeof narrower[0]; i++) {
        int k = narrower[i];
        if (k + 2 > m)      /* the tie needs k + 2 mantissa bits for 3 * 2^-(k+1) */
            continue;
        out[n++] = 1.0 + ldexp(1.0, -(k + 1));
        out[n++] = fi->has_sign ? -(1.0 + 3.0 * ldexp(1.0, -(k + 1))) : 1.0 + 3.0 * ldexp(1.0, -(k + 1));
    }
    return n;
}

#define MAX_SPECIALS 24

static double draw_edge_float(Rng *r, IrElemType t);
static double draw_small_float(Rng *r, IrElemType t);
static double draw_extreme_float(Rng *r, IrElemType t);
static CheckDist any_kind(Rng *r);

static void fill_float(Rng *r, IrElemType t, CheckDist dist, void *p)
{
    double specials[MAX_SPECIALS];
    bool sign = ir_type_info[t].has_sign;      /* f8e8m0fnu has none: use magnitudes */
    switch (dist) {
    case CHECK_DIST_UNIFORM:
        store_uniform(t, p, sign ? draw_uniform(r) : fabs(draw_uniform(r)));
        return;
    case CHECK_DIST_NORMAL:
        ir_elem_set_f64(t, p, sign ? draw_normal(r) : fabs(draw_normal(r)));
        return;
    case CHECK_DIST_WIDE:
        ir_elem_set_f64(t, p, draw_wide(r, t));
        return;
    case CHECK_DIST_SPECIAL:
        if (rng_next(r) >> 62 == 0) {
            int n = special_values(t, specials);
            ir_elem_set_f64(t, p, specials[rng_int(r, 0, n - 1)]);
        } else {
            store_uniform(t, p, sign ? draw_uniform(r) : fabs(draw_uniform(r)));
        }
        return;
    case CHECK_DIST_EDGES:
        ir_elem_set_f64(t, p, draw_edge_float(r, t));
        return;
    case CHECK_DIST_SMALL:
        ir_elem_set_f64(t, p, draw_small_float(r, t));
        return;
    case CHECK_DIST_EXTREME:
        ir_elem_set_f64(t, p, draw_extreme_float(r, t));
        return;
    case CHECK_DIST_COPIES: case CHECK_DIST_PAIRS: case CHECK_DIST_MIXED:
        fill_float(r, t, any_kind(r), p);     /* not reached: random_value resolves these */
        return;
    }
}

/* ------------------------------------------------------------------ */
/* Integers                                                             */

static int64_t type_min(IrElemType t)
{
    int bits = ir_type_info[t].bits;
    return ir_type_is_signed_int(t) ? (bits >= 64 ? INT64_MIN : -((int64_t)1 << (bits - 1))) : 0;
}

static int64_t type_max(IrElemType t)
{
    int bits = ir_type_info[t].bits;
    if (ir_type_is_signed_int(t))
        return bits >= 64 ? INT64_MAX : ((int64_t)1 << (bits - 1)) - 1;
    return bits >= 63 ? INT64_MAX : ((int64_t)1 << bits) - 1;
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

static void fill_int(Rng *r, IrElemType t, void *p)
{
    int64_t lo = ir_type_is_signed_int(t) ? -8 : 0;
    int64_t hi = ir_type_is_signed_int(t) ? 8 : 16;
    lo = clamp64(lo, type_min(t), type_max(t));
    hi = clamp64(hi, type_min(t), type_max(t));
    ir_elem_set_i64(t, p, rng_int(r, lo, hi));
}

/* ------------------------------------------------------------------ */
/* The kinds that reach boundaries                                      */

static double draw_edge_float(Rng *r, IrElemType t)
{
    double specials[MAX_SPECIALS];
    int c = (int)(rng_next(r) >> 61);
    if (c == 0 && float_has_nan(t))
        return NAN;
    if (c == 1 && float_has_neg_zero(t))
        return -0.0;
    if (c >= 6) {
        double u = draw_uniform(r);
        return ir_type_info[t].has_sign ? u : fabs(u);
    }
    int n = special_values(t, specials);
    return specials[rng_int(r, 0, n - 1)];
}

static double draw_small_float(Rng *r, IrElemType t)
{
    FloatRange fr = float_range(t);
    double v;
    switch ((int)(rng_next(r) >> 62)) {
    case 0: case 1:
        v = (double)rng_int(r, -8, 8) / 2;
        break;
    case 2: {
        bool negative = rng_next(r) >> 63;
        int e = (int)rng_int(r, -4, 10);
        e = e < fr.emin ? fr.emin : e > fr.emax ? fr.emax : e;
        v = negative ? -ldexp(1.0, e) : ldexp(1.0, e);
        break;
    }
    default:
        v = (double)rng_int(r, -4, 4);
        break;
    }
    return ir_type_info[t].has_sign ? v : fabs(v);
}

static double draw_extreme_float(Rng *r, IrElemType t)
{
    const IrTypeInfo *fi = &ir_type_info[t];
    FloatRange fr = float_range(t);
    int c = (int)(rng_next(r) >> 62);
    bool negative = (rng_next(r) >> 63) && fi->has_sign;
    double v;
    if (c == 0 || (c == 1 && !fi->has_inf))
        v = fr.max_finite;
    else if (c == 1)
        v = INFINITY;
    else
        v = ldexp(1.0 + rng_unit(r), (int)rng_int(r, fr.emin - fi->mantissa_bits, fr.emax));
    return negative ? -v : v;
}

/* The bits of an integer type's largest value, as ir_elem_set_i64 stores
 * them: type_max, except that the unsigned 64-bit maximum is -1 as int64
 * (type_max stops at INT64_MAX, the largest value an int64 range holds). */
static int64_t max_bits(IrElemType t)
{
    int bits = ir_type_info[t].bits;
    if (ir_type_is_signed_int(t))
        return type_max(t);
    return (int64_t)(bits >= 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1);
}

/* As the bits to store. */
static int64_t draw_extreme_int(Rng *r, IrElemType t)
{
    int64_t k = rng_int(r, 0, 6);
    if (!ir_type_is_signed_int(t)) {
        uint64_t max = (uint64_t)max_bits(t);
        const uint64_t pick[7] = { 0, 1, 2, max / 2, max / 2 + 1, max - 1, max };
        return (int64_t)pick[k];
    }
    int64_t lo = type_min(t), hi = type_max(t);
    const int64_t pick[7] = { lo, lo + 1, -1, 0, 1, hi - 1, hi };
    return pick[k];
}

static int64_t draw_small_int(Rng *r, IrElemType t)
{
    int bits = ir_type_info[t].bits;
    int64_t v;
    switch ((int)(rng_next(r) >> 62)) {
    case 0:
        v = rng_int(r, -4, 4);
        break;
    case 1: {
        bool negative = rng_next(r) >> 63;
        v = (int64_t)1 << rng_int(r, 0, bits - 2 < 62 ? bits - 2 : 62);
        v = negative && ir_type_is_signed_int(t) ? -v : v;
        break;
    }
    case 2:
        v = bits - 1 + rng_int(r, 0, 2);
        break;
    default:
        v = rng_int(r, -1, 1);
        break;
    }
    return clamp64(v, type_min(t), type_max(t));
}

static void fill_int_kind(Rng *r, IrElemType t, CheckDist dist, void *p)
{
    if (dist == CHECK_DIST_EDGES || dist == CHECK_DIST_EXTREME)
        ir_elem_set_i64(t, p, draw_extreme_int(r, t));
    else if (dist == CHECK_DIST_SMALL)
        ir_elem_set_i64(t, p, draw_small_int(r, t));
    else
        fill_int(r, t, p);
}


/* An element of the `any` mixture: uniform, edges or small. */
static CheckDist any_kind(Rng *r)
{
    static const CheckDist kinds[3] = { CHECK_DIST_UNIFORM, CHECK_DIST_EDGES, CHECK_DIST_SMALL };
    return kinds[rng_int(r, 0, 2)];
}

/* ------------------------------------------------------------------ */
/* Index parameters                                                     */

/* For a dynamic-slice / dynamic-update-slice index: the operand's dimension
 * and the slice's size along it. */
typedef struct IndexUse {
    int64_t dim, size;
} IndexUse;

static bool index_use_of(const IrInstr *user, const IrInstr *param, IndexUse *use)
{
    int first = user->op == IR_OP_DYNAMIC_SLICE ? 1 : user->op == IR_OP_DYNAMIC_UPDATE_SLICE ? 2 : -1;
    if (first < 0 || user->n_operands <= first)
        return false;
    const IrShape *operand = user->operands[0]->shape;
    const IrShape *slice = first == 1 ? user->shape : user->operands[1]->shape;
    for (int k = first; k < user->n_operands; k++) {
        int d = k - first;
        if (user->operands[k] != param || !ir_shape_is_array(operand) || d >= operand->rank ||
            !ir_shape_is_array(slice) || d >= slice->rank)
            continue;
        use->dim = operand->dims[d];
        use->size = slice->dims[d];
        return true;
    }
    return false;
}

/* The first dynamic-slice / dynamic-update-slice use of entry parameter p
 * as an index, if p is a scalar integer. */
static bool find_index_use(const IrModule *m, const IrInstr *param, IndexUse *use)
{
    const IrShape *s = param->shape;
    if (!ir_shape_is_array(s) || s->rank != 0 || !ir_type_is_int(s->type))
        return false;
    const IrComputation *entry = m->entry;
    for (int i = 0; i < entry->n_instrs; i++)
        if (!entry->instrs[i]->dead && index_use_of(entry->instrs[i], param, use))
            return true;
    return false;
}

static void fill_index(Rng *r, IrElemType t, IndexUse use, void *p)
{
    bool out_of_range = rng_next(r) >> 63;
    bool above = (rng_next(r) >> 63) || !ir_type_is_signed_int(t);
    int64_t top = use.size <= use.dim ? use.dim - use.size : 0;
    int64_t lo = 0, hi = top;
    if (out_of_range && above) {
        lo = top + 1;
        hi = top + 4;
    } else if (out_of_range) {
        lo = -4;
        hi = -1;
    }
    lo = clamp64(lo, type_min(t), type_max(t));
    hi = clamp64(hi, type_min(t), type_max(t));
    ir_elem_set_i64(t, p, rng_int(r, lo, hi));
}

/* ------------------------------------------------------------------ */
/* Values                                                               */

/* One element of a single-element kind (not copies, pairs or mixed). */
static void fill_elem(Rng *r, IrElemType t, CheckDist dist, void *p)
{
    if (t == IR_TYPE_PRED)
        *(unsigned char *)p = (unsigned char)(rng_next(r) >> 63);
    else if (ir_type_is_int(t))
        fill_int_kind(r, t, dist, p);
    else if (ir_type_is_float(t))
        fill_float(r, t, dist, p);
    else if (ir_type_is_complex(t)) {
        IrElemType part = t == IR_TYPE_C64 ? IR_TYPE_F32 : IR_TYPE_F64;
        fill_float(r, part, dist, p);
        fill_float(r, part, dist, (char *)p + ir_type_storage_bytes(part));
    }
}

/* -x in place: not for pred, -x clamped for signed integers, x for
 * unsigned ones, the sign flipped for floats (both parts of a complex). */
static void negate_elem(IrElemType t, void *p)
{
    if (t == IR_TYPE_PRED) {
        *(unsigned char *)p = !*(unsigned char *)p;
    } else if (ir_type_is_signed_int(t)) {
        int64_t v = ir_elem_get_i64(t, p);
        ir_elem_set_i64(t, p, v == type_min(t) ? type_max(t) : -v);
    } else if (ir_type_is_float(t) && ir_type_info[t].has_sign) {
        ir_elem_set_f64(t, p, -ir_elem_get_f64(t, p));
    } else if (ir_type_is_complex(t)) {
        IrElemType part = t == IR_TYPE_C64 ? IR_TYPE_F32 : IR_TYPE_F64;
        negate_elem(part, p);
        negate_elem(part, (char *)p + ir_type_storage_bytes(part));
    }
}

/* Where a value's elements come from: its own stream, and for copies and
 * pairs the stream of each leaf's element type, keyed from base_key. */
typedef struct Draw {
    Rng own;
    uint64_t base_key;
    CheckDist dist;
    int param;              /* the entry parameter's number: where its leading table values start */
} Draw;

/* The leading values of the kinds edges, small and extreme: element i of
 * parameter p takes entry i + p, while there is one, so that even scalars
 * meet the boundaries (p NaN against q -0, p the integer maximum against q
 * 1, p -0.5, q a shift by the bit width), and longer arrays pair
 * neighbouring entries.  Returns the count, values as doubles (floats, in
 * f) or as the bits to store (integers, in v). */
static int table_of(IrElemType t, CheckDist dist, double *f, int64_t *v)
{
    const IrTypeInfo *fi = &ir_type_info[t];
    int n = 0;
    if (ir_type_is_float(t)) {
        FloatRange fr = float_range(t);
        double tiny = ldexp(1.0, fr.emin - fi->mantissa_bits), normal = ldexp(1.0, fr.emin);
        double inf = fi->has_inf ? INFINITY : fr.max_finite;
        if (dist == CHECK_DIST_EDGES) {
            if (float_has_nan(t))
                f[n++] = NAN;
            f[n++] = float_has_neg_zero(t) ? -0.0 : 0.0;
            if (float_has_nan(t))
                f[n++] = NAN;       /* parameter 1's second element: NaN in q beside a zero in p */
            f[n++] = inf;
            f[n++] = -inf;
            f[n++] = 0.0;
            f[n++] = tiny;
            f[n++] = -fr.max_finite;
            f[n++] = fr.max_finite;
            f[n++] = normal;
            f[n++] = -tiny;
        } else if (dist == CHECK_DIST_SMALL) {
            static const double small[] = { -0.5, 2.5, -1.5, 0.5, 1, -2, 4 };
            for (size_t k = 0; k < sizeof small / sizeof small[0]; k++)
                f[n++] = small[k];
        } else if (dist == CHECK_DIST_EXTREME) {
            f[n++] = fr.max_finite;
            f[n++] = tiny;
            f[n++] = 1.0;
            f[n++] = -fr.max_finite;
            f[n++] = inf;
            f[n++] = -inf;
            f[n++] = normal;
        }
        if (!fi->has_sign)
            for (int k = 0; k < n; k++)
                f[k] = fabs(f[k]);
        return n;
    }
    if (!ir_type_is_int(t))
        return 0;
    int bits = fi->bits;
    int64_t lo = type_min(t), hi = type_max(t), max = max_bits(t);
    bool is_signed = ir_type_is_signed_int(t);
    if (dist == CHECK_DIST_EDGES) {
        const int64_t e[7] = { is_signed ? lo : max, -1, max, 0, 1, lo + 1, max - 1 };
        for (int k = 0; k < 7; k++)
            v[n++] = e[k];
    } else if (dist == CHECK_DIST_SMALL) {
        const int64_t e[7] = { 3, bits, bits - 1, bits + 1, -1, 1, 2 };
        for (int k = 0; k < 7; k++)
            v[n++] = e[k];
    } else if (dist == CHECK_DIST_EXTREME) {
        const int64_t e[7] = { max, 1, is_signed ? lo : 0, -1, 0, max - 1, is_signed ? lo + 1 : 2 };
        for (int k = 0; k < 7; k++)
            v[n++] = e[k];
    }
    for (int k = 0; k < n; k++) {       /* into the type's range (unsigned: -1 becomes the maximum) */
        if (is_signed)
            v[k] = clamp64(v[k], lo, hi);
        else if ((uint64_t)v[k] > (uint64_t)max)
            v[k] = max;
    }
    return n;
}

static void type_stream(const Draw *d, IrElemType t, Rng *r)
{
    rng_from_key(r, splitmix(d->base_key ^ (((uint64_t)1 << 30) + (uint64_t)t)));
}

/* The n elements of type t at data, drawn as d's kind. */
static void fill_elements(Draw *d, IrElemType t, void *data, int64_t n)
{
    size_t bytes = (size_t)ir_type_storage_bytes(t);
    Rng base;
    if (d->dist == CHECK_DIST_COPIES || d->dist == CHECK_DIST_PAIRS)
        type_stream(d, t, &base);
    double tf[16];
    int64_t tv[16];
    int n_table = t == IR_TYPE_PRED ? 0 : table_of(t, d->dist, tf, tv);     /* 0 for the other kinds */
    for (int64_t i = 0; i < n; i++) {
        char *p = (char *)data + (size_t)i * bytes;
        if (d->dist == CHECK_DIST_COPIES) {
            fill_elem(&base, t, any_kind(&base), p);
        } else if (d->dist == CHECK_DIST_PAIRS) {
            CheckDist k = any_kind(&base);
            fill_elem(&base, t, k, p);
            if (i % 4 == 0)
                memset(p, 0, bytes);            /* the base is +0 */
            int c = (int)((i + d->param) % 4);
            if (c == 0) {
                negate_elem(t, p);
            } else if (c == 2) {
                memset(p, 0, bytes);
                fill_elem(&d->own, t, any_kind(&d->own), p);
            }
        } else if (i + d->param < n_table) {
            if (ir_type_is_float(t))
                ir_elem_set_f64(t, p, tf[i + d->param]);
            else
                ir_elem_set_i64(t, p, tv[i + d->param]);
        } else {
            fill_elem(&d->own, t, d->dist, p);
        }
    }
}

static bool shape_is_static(const IrShape *s)
{
    if (ir_shape_is_tuple(s)) {
        for (int i = 0; i < s->n_elements; i++)
            if (!shape_is_static(s->elements[i]))
                return false;
        return true;
    }
    if (!s->dim_kind)
        return true;
    for (int d = 0; d < s->rank; d++)
        if (s->dim_kind[d] != IR_DIM_STATIC)
            return false;
    return true;
}

/* The uniform draws of the common float types in one loop each: the same
 * values fill_elem gives (store_uniform's rounding and wrap), for the
 * GB-sized inputs of real programs.  False for the other types. */
static bool fill_uniform_fast(Rng *r, IrElemType t, void *data, int64_t n)
{
    switch ((int)t) {
    case IR_TYPE_F32: {
        float *p = data;
        for (int64_t i = 0; i < n; i++) {
            float f = (float)draw_uniform(r);
            p[i] = f >= 1.0f ? -1.0f : f;
        }
        return true;
    }
    case IR_TYPE_F64: {
        double *p = data;
        for (int64_t i = 0; i < n; i++)
            p[i] = draw_uniform(r);         /* 2u - 1 < 1 exactly */
        return true;
    }
    case IR_TYPE_BF16: case IR_TYPE_F16: {
        uint16_t *p = data, minus_one = t == IR_TYPE_BF16 ? 0xBF80 : 0xBC00;
        bool bf = t == IR_TYPE_BF16;
        for (int64_t i = 0; i < n; i++) {
            double d = draw_uniform(r);
            uint16_t h = bf ? ir_f64_to_bf16(d) : ir_f64_to_f16(d);
            p[i] = (bf ? ir_bf16_to_f32(h) : ir_f16_to_f32(h)) >= 1.0f ? minus_one : h;
        }
        return true;
    }
    default:
        return false;
    }
}

/* Uniform draws over [begin, end) of one array, from the stream's state
 * at its first element (each chunk jumps there from it). */
typedef struct UniformJob {
    Rng start;
    IrElemType t;
    char *data;
    size_t es;
} UniformJob;

static void uniform_chunk(void *ctx, int64_t begin, int64_t end)
{
    const UniformJob *j = ctx;
    Rng r = j->start;
    rng_jump(&r, (uint64_t)begin);
    fill_uniform_fast(&r, j->t, j->data + (size_t)begin * j->es, end - begin);
}

/* fill_uniform_fast, a long array split across the interpreter's threads:
 * one draw per element, so chunk c starts from the state `begin` draws
 * on, and every element gets the bits of the one sequential stream. */
enum { UNIFORM_SPLIT_MIN = 1 << 18 };

static bool fill_uniform(Rng *r, IrElemType t, void *data, int64_t n)
{
    bool typed = t == IR_TYPE_F32 || t == IR_TYPE_F64 || t == IR_TYPE_BF16 || t == IR_TYPE_F16;
    if (!typed || n < UNIFORM_SPLIT_MIN || parallel_chunks(n, 16) <= 1)
        return fill_uniform_fast(r, t, data, n);
    jump_init();                /* before the threads: they only read it */
    if (jump_degree != 256)
        return fill_uniform_fast(r, t, data, n);
    UniformJob j = { *r, t, data, (size_t)ir_type_storage_bytes(t) };
    parallel_for(n, 16, 4096, uniform_chunk, &j);
    rng_jump(r, (uint64_t)n);
    return true;
}

static Value *random_value(Draw *d, const IrShape *s, Error *err)
{
    if (ir_shape_is_tuple(s)) {
        int n = s->n_elements;
        Value **el = xcalloc((size_t)(n ? n : 1), sizeof *el);
        for (int i = 0; i < n; i++) {
            el[i] = random_value(d, s->elements[i], err);
            if (!el[i]) {
                for (int k = 0; k < i; k++)
                    value_release(el[k]);
                free(el);
                return NULL;
            }
        }
        Value *v = value_new_tuple(s, n, el, err);
        free(el);
        return v;
    }
    Value *v = value_new_array(s, err);
    if (!v || !ir_shape_is_array(s))
        return v;       /* tokens: no elements to draw */
    int64_t n = value_elements(v);
    if (d->dist == CHECK_DIST_UNIFORM && fill_uniform(&d->own, s->type, v->data, n))
        return v;
    memset(v->data, 0, value_bytes(v));
    fill_elements(d, s->type, v->data, n);
    return v;
}

/* A kind to draw a value from: MIXED alone draws as its trial 0 does. */
static CheckDist single_kind(CheckDist dist)
{
    return dist == CHECK_DIST_MIXED ? check_trial_dist(dist, 0) : dist;
}

Value *check_random_value(uint64_t key, const IrShape *s, CheckDist dist, Error *err)
{
    Draw d = { .base_key = key, .dist = single_kind(dist) };
    rng_from_key(&d.own, key);
    return random_value(&d, s, err);
}

bool check_param_range(const IrInstr *param, int64_t *lo, int64_t *hi)
{
    const char *fa = ir_raw_attr_get(param, "frontend_attributes");
    const char *at = fa ? strstr(fa, CHECK_RANGE_ATTR "=\"") : NULL;
    long long a, b;
    if (!at || sscanf(at + strlen(CHECK_RANGE_ATTR) + 2, "%lld,%lld", &a, &b) != 2 || b <= a ||
        (uint64_t)b - (uint64_t)a > ((uint64_t)1 << 32))
        return false;
    *lo = a;
    *hi = b;
    return true;
}

Value *check_random_input(const IrModule *m, int param, int rank, uint64_t seed, CheckDist dist,
                          Error *err)
{
    const IrComputation *entry = m->entry;
    if (!entry || param < 0 || param >= entry->n_params || !entry->params[param] || rank < 0) {
        error_set(err, ERR_INTERNAL, (IrLoc){ m->file, 0, 0 },
                  "check_random_input: no entry parameter %d (rank %d)", param, rank);
        return NULL;
    }
    const IrInstr *p = entry->params[param];
    if (!shape_is_static(p->shape)) {
        error_set(err, ERR_UNSUPPORTED, p->info->loc, "parameter %d has a dynamic shape %s: random inputs need static shapes",
                  param, ir_shape_str(p->shape));
        return NULL;
    }
    Draw d = { .base_key = splitmix(splitmix(seed) ^ (uint64_t)rank), .dist = single_kind(dist), .param = param };
    rng_seed(&d.own, seed, rank, param);
    Rng *r = &d.own;
    int64_t lo, hi;
    if (ir_shape_is_array(p->shape) && p->shape->rank == 0 && ir_type_is_int(p->shape->type) &&
        check_param_range(p, &lo, &hi)) {
        Value *v = value_new_array(p->shape, err);
        if (v)
            ir_elem_set_i64(p->shape->type, v->data, rng_int(r, lo, hi - 1));
        return v;
    }
    IndexUse use;
    if (!find_index_use(m, p, &use))
        return random_value(&d, p->shape, err);
    Value *v = value_new_array(p->shape, err);
    if (v)
        fill_index(r, p->shape->type, use, v->data);
    return v;
}

bool check_random_inputs(const IrModule *m, int rank, uint64_t seed, CheckDist dist, Value **out,
                         Error *err)
{
    int n = m->entry ? m->entry->n_params : 0;
    for (int i = 0; i < n; i++)
        out[i] = NULL;
    for (int i = 0; i < n; i++) {
        out[i] = check_random_input(m, i, rank, seed, dist, err);
        if (!out[i]) {
            for (int k = 0; k < i; k++) {
                value_release(out[k]);
                out[k] = NULL;
            }
            return false;
        }
    }
    return true;
}

/* ------------------------------------------------------------------ */
/* Names                                                                */

static const char *const dist_names[] = {
    [CHECK_DIST_UNIFORM] = "uniform",
    [CHECK_DIST_NORMAL] = "normal",
    [CHECK_DIST_WIDE] = "wide",
    [CHECK_DIST_SPECIAL] = "special",
    [CHECK_DIST_COPIES] = "copies",
    [CHECK_DIST_PAIRS] = "pairs",
    [CHECK_DIST_EDGES] = "edges",
    [CHECK_DIST_SMALL] = "small",
    [CHECK_DIST_EXTREME] = "extreme",
    [CHECK_DIST_MIXED] = "mixed",
};

/* --dist=mixed: trial 0 independent uniform draws (what --prove's decisions
 * and hlo-run's default see), then the kinds that put parameters on each
 * other's values and on the types' boundaries. */
static const CheckDist mixed_kinds[8] = {
    CHECK_DIST_UNIFORM, CHECK_DIST_COPIES, CHECK_DIST_EDGES, CHECK_DIST_PAIRS,
    CHECK_DIST_SMALL,   CHECK_DIST_EXTREME, CHECK_DIST_WIDE, CHECK_DIST_SPECIAL,
};

CheckDist check_trial_dist(CheckDist dist, int trial)
{
    return dist == CHECK_DIST_MIXED ? mixed_kinds[(trial < 0 ? 0 : trial) % 8] : dist;
}

void check_trial_dists_text(CheckDist dist, int n, char *out, size_t size)
{
    size_t len = 0;
    out[0] = 0;
    for (int t = 0; t < n && t < 8 && len < size; t++)
        len += (size_t)snprintf(out + len, size - len, "%s%s", t ? ", " : "", check_dist_name(check_trial_dist(dist, t)));
    if (n > 8 && len < size)
        snprintf(out + len, size - len, ", ... (cyclic)");
}

bool check_dist_from_name(const char *name, CheckDist *dist)
{
    for (size_t i = 0; i < sizeof dist_names / sizeof dist_names[0]; i++)
        if (name && strcmp(name, dist_names[i]) == 0) {
            *dist = (CheckDist)i;
            return true;
        }
    return false;
}

const char *check_dist_name(CheckDist dist)
{
    return (unsigned)dist < sizeof dist_names / sizeof dist_names[0] ? dist_names[dist] : "unknown";
}
