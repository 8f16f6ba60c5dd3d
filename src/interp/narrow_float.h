/* narrow_float.h: the one-element codecs of bf16 and f16 to and from f32
 * (round to nearest even, NaN made quiet as ir_f32_to_bf16 and
 * ir_f16_to_f32 do), for the loops of eval_elementwise.c and the folds of
 * eval_reduce.c, which must give the same bits. */
#ifndef INTERP_NARROW_FLOAT_H
#define INTERP_NARROW_FLOAT_H

#include <stdint.h>
#include <string.h>

static inline uint32_t f32_to_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float f32_from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* bf16 -> f32 is a shift; f32 -> bf16 rounds to nearest even by adding
 * 0x7fff plus the lowest kept bit, which also carries overflow into inf.
 * NaN becomes the quiet NaN with its sign, as ir_f32_to_bf16 does. */
static inline float bf16_decode(uint16_t h)
{
    return f32_from_bits((uint32_t)h << 16);
}

static inline uint16_t bf16_encode(float f)
{
    uint32_t u = f32_to_bits(f);
    uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    uint32_t nan = ((u >> 16) & 0x8000u) | 0x7fc0u;
    return (uint16_t)((u & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
}

/* The f16 codec is written without branches (every case computed, one
 * selected by masks) so that gcc vectorises the block loops. */
static inline float f16_decode(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, em = h & 0x7fffu;
    uint32_t normal = (em << 13) + 0x38000000u;                 /* rebias 15 -> 127 */
    /* inf, or NaN with its payload, made quiet as ir_f16_to_f32 does */
    uint32_t special = (em << 13) | 0x7f800000u | (0x00400000u & (0u - (em > 0x7c00u)));
    uint32_t sub = f32_to_bits((float)em * 0x1p-24f);           /* exact */
    uint32_t is_special = 0u - (em >= 0x7c00u), is_sub = 0u - (em < 0x400u);
    uint32_t r = (special & is_special) | (sub & is_sub) | (normal & ~(is_special | is_sub));
    return f32_from_bits(sign | r);
}

/* Round to nearest even.  From 65520 (halfway between the largest f16,
 * 65504, and 65536) up is inf.  Below 2^-14 the step is 2^-24: adding 0.5f,
 * whose ulp is 2^-24, rounds the value to that step in the float unit, and
 * the low bits of the sum are the subnormal's pattern.  Otherwise the
 * exponent is rebiased and 13 mantissa bits rounded off. */
static inline uint16_t f16_encode(float f)
{
    uint32_t u = f32_to_bits(f);
    uint32_t sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
    uint32_t m = a - 0x38000000u;
    uint32_t normal = (m + 0xfffu + ((m >> 13) & 1u)) >> 13;
    uint32_t sub = f32_to_bits(f32_from_bits(a) + 0.5f) - 0x3f000000u;
    uint32_t is_nan = 0u - (a > 0x7f800000u), is_big = 0u - (a >= 0x477ff000u);
    uint32_t is_sub = 0u - (a < 0x38800000u);
    uint32_t mag = (sub & is_sub) | (normal & ~(is_sub | is_big));
    mag = (mag & ~is_big) | (0x7c00u & is_big);
    mag = (mag & ~is_nan) | (0x7e00u & is_nan);
    return (uint16_t)(sign | mag);
}

/* The result r of an op whose lhs is a, with a's NaN kept when a is one
 * (the bf16 loops' rule, see eval_elementwise.c). */
static inline float lhs_nan_first(float a, float r)
{
    uint32_t ua = f32_to_bits(a), m = 0u - ((ua & 0x7fffffffu) > 0x7f800000u);   /* a is NaN */
    return f32_from_bits((ua & m) | (f32_to_bits(r) & ~m));    /* on the bits: vectorises, a != a did not */
}

#endif /* INTERP_NARROW_FLOAT_H */
