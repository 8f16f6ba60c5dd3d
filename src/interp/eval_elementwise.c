/* eval_elementwise.c: the element-wise evaluators (unary, binary, compare,
 * select, clamp) and the binary kernel the collectives reduce with; the
 * machinery here (blocks, narrow-float codecs, the split over threads) also
 * serves eval_convert.c, through eval.h.
 *
 * Shape of the code: one dispatch per instruction picks a loop for the
 * (op, element type) pair from a table; the loop is stamped out by a macro
 * from a small inline scalar function and runs over the whole array with no
 * per-element switch.  VLOOP writes each loop as blocks with a constant trip
 * count, which gcc -O2 (whose "very cheap" vectoriser refuses loops that need
 * an epilogue) does vectorise.
 *
 * Semantics follow XLA's HLO evaluator (hlo_evaluator_typed_visitor.h) and
 * ../shared/spec/hlo-reference.md section 5:
 *  - f32 and f64 compute natively.  f16, bf16 and the 8-/4-bit floats compute
 *    in f32 (XLA's ElementwiseT) and round once to the type after each op:
 *    a block of BLOCK elements is decoded to f32, run through the f32 loop and
 *    encoded back, so no whole-array temporary is needed.  A NaN result
 *    becomes the type's canonical NaN (sign kept), as Eigen's conversion does.
 *  - Integers wrap (arithmetic goes through the unsigned type); x/0 is -1
 *    (all ones), INT_MIN/-1 is INT_MIN, x%0 is x, INT_MIN%-1 is 0.
 *  - maximum/minimum: IEEE 754-2019 maximum/minimum, as StableHLO says: a NaN
 *    operand wins, lhs first; +0 > -0, so max(-0, +0) = max(+0, -0) = +0 and
 *    min gives -0 in either order (IEEE_MAX in eval.h).
 *  - Integer power: x^0 = 1 and 1^y = 1 first; a negative signed exponent
 *    then gives the exact power truncated toward zero, as StableHLO's
 *    reference does: 1 or -1 (by the exponent's parity) for the base -1,
 *    else 0 (XLA's evaluator gives 0 for -1 too); otherwise squaring with
 *    wrap over the exponent's full width (XLA passes the exponent as an
 *    int; the two differ only for exponents >= 2^31).
 *  - clamp(lo, x, hi): the first NaN of lo, x, hi, else
 *    minimum(maximum(x, lo), hi) with the IEEE maximum/minimum above (so
 *    clamp(0, -0, 1) = +0).
 *  - Sub-byte integers (s1..s4, u1..u4; one byte each, kept sign- or
 *    zero-extended) use the 8-bit loops and are re-extended after the op;
 *    popcnt and count-leading-zeros count in the type's own width
 *    (sub_byte_unary); the right shift of the other signedness is
 *    unsupported.  pred uses the
 *    u8 loops and is normalised to 0/1.
 *  - c64/c128: add, subtract, multiply, divide (C's Annex G arithmetic, as
 *    std::complex), power, negate, sign, abs, exp, expm1, log, log1p, sqrt,
 *    rsqrt, sin, cos, tan, tanh (C's complex functions; see
 *    COMPLEX_TRANSCENDENTALS), real, imag, complex, compare EQ/NE.
 *    Anything else is ERR_UNSUPPORTED naming the op and the type.
 *
 * Threads (parallel.h): every kernel here computes element i from the
 * operands' elements i alone, so each is split over the pool in contiguous
 * element ranges (ElemJob, eval.h) and gives the same bits at any count.
 *
 * Results are always fresh arrays (no in-place reuse of operands: the
 * evaluator cannot tell whether an operand with one reference is still read
 * by a later instruction), except that select with a scalar predicate
 * aliases its operand's buffer. */
#include "eval.h"
#include "narrow_float.h"
#include "parallel.h"

#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef float _Complex c64_t;
typedef double _Complex c128_t;

typedef void (*UnaryLoop)(void *restrict out, const void *restrict in, int64_t n);
typedef void (*BinaryLoop)(void *restrict out, const void *restrict a, const void *restrict b,
                           int64_t n);

bool eval_unsupported_type(const IrInstr *instr, IrElemType t, Error *err)
{
    return error_set(err, ERR_UNSUPPORTED, instr->info->loc, "unsupported op: %s on %s",
                     ir_opcode_name(instr->op), ir_type_name(t));
}

/* Operand k must be an array of n elements (the verifier's job; checked so
 * a bad module fails cleanly instead of reading out of bounds). */
bool eval_need_elements(const IrInstr *instr, const Value *v, int k, int64_t n, Error *err)
{
    if (ir_shape_is_array(v->shape) && value_elements(v) == n)
        return true;
    return error_set(err, ERR_SHAPE, instr->info->loc, "%s: operand %d has %lld elements, the result %lld",
                     ir_opcode_name(instr->op), k,
                     (long long)(ir_shape_is_array(v->shape) ? value_elements(v) : -1), (long long)n);
}

bool eval_is_narrow_float(IrElemType t)
{
    return ir_type_is_float(t) && t != IR_TYPE_F32 && t != IR_TYPE_F64;
}

/* ------------------------------------------------------------------ */
/* Splitting over threads                                               */

static void elem_chunk(void *ctx, int64_t begin, int64_t end)
{
    const ElemJob *j = ctx;
    const char *src[3];
    Error err = { .code = ERR_OK };
    for (int k = 0; k < j->n_src; k++)
        src[k] = j->src[k] + begin * j->src_bytes[k];
    j->run(j, j->dst + begin * j->dst_bytes, src, end - begin, &err);   /* checked by elem_split */
}

/* Runs j over n elements in chunks.  A run on zero elements first does the
 * kernel's checks (type support), so no chunk can fail.  Chunks start at
 * multiples of 64 elements (of VLEN, and of every block's vector width), so
 * each element runs in the same part of a loop, vector body or scalar tail,
 * as in one call over the whole array: the two can differ in which NaN a
 * commutative op returns. */
static bool elem_split(ElemJob *j, int64_t n, Error *err)
{
    if (!j->run(j, j->dst, j->src, 0, err))
        return false;
    int64_t bytes = j->dst_bytes;
    for (int k = 0; k < j->n_src; k++)
        bytes += j->src_bytes[k];
    parallel_for(n, bytes, 64, elem_chunk, j);
    return true;
}

/* A job over instr's operands args[0 .. n_src-1] into a result of instr's
 * shape (eval_elem_eval makes it). */
ElemJob eval_elem_job(ElemRun run, const IrInstr *instr, Value *const *args, int n_src)
{
    ElemJob j = { .run = run, .instr = instr, .op = instr->op, .to = instr->shape->type,
                  .dst_bytes = ir_type_storage_bytes(instr->shape->type), .n_src = n_src };
    j.from = args[0]->shape->type;
    for (int k = 0; k < n_src; k++) {
        j.src[k] = args[k]->data;
        j.types[k] = args[k]->shape->type;
        j.src_bytes[k] = ir_type_storage_bytes(args[k]->shape->type);
    }
    return j;
}

/* instr's result: a new array filled by j (from eval_elem_job, adjusted or
 * not) over its n elements in split ranges; false, nothing made, when the
 * array cannot be made or the job fails. */
bool eval_elem_eval(ElemJob *j, int64_t n, Value **out, Error *err)
{
    Value *v = value_new_array(j->instr->shape, err);
    if (!v)
        return false;
    j->dst = v->data;
    if (!elem_split(j, n, err)) {
        value_release(v);
        return false;
    }
    *out = v;
    return true;
}

bool eval_is_sub_byte_int(IrElemType t)
{
    return ir_type_is_int(t) && ir_type_info[t].bits < 8;
}

IrElemType eval_complex_part(IrElemType t)
{
    return t == IR_TYPE_C128 ? IR_TYPE_F64 : IR_TYPE_F32;
}

/* ------------------------------------------------------------------ */
/* Narrow floats: blocks to and from f32                                */

void eval_narrow_init(Narrow *c, IrElemType t)
{
    c->type = t;
    c->bytes = ir_type_storage_bytes(t);
    if (c->bytes == 1)
        for (int k = 0; k < 256; k++)
            c->table[k] = (float)ir_f8_to_f64(t, (uint8_t)k);
}

/* The 2-byte codecs' loops, built three times: for plain x86-64 and, used
 * where the CPU has them (simd.c), for AVX2, which widens and narrows
 * 16-bit lanes in one instruction where SSE2 needs several (bf16 add on
 * 16M elements: 6 ms against 10.5), and for AVX-512, whose 16 lanes take
 * the f32 -> bf16 rounding from 0.65 of memcpy's speed to 0.8 (16M
 * elements: 12.6 ms against 9.4).  All run the same C, bit for bit. */
#define DEFINE_CODEC16(SUFFIX, ATTR)                                                          \
    ATTR static void decode16_##SUFFIX(bool bf16, const uint16_t *restrict p, float *restrict out, \
                                       int64_t n)                                            \
    {                                                                                         \
        if (bf16)                                                                             \
            VLOOP(n, out[i] = bf16_decode(p[i]));                                             \
        else                                                                                  \
            VLOOP(n, out[i] = f16_decode(p[i]));                                              \
    }                                                                                         \
    ATTR static void encode16_##SUFFIX(bool bf16, const float *restrict in, uint16_t *restrict p, \
                                       int64_t n)                                            \
    {                                                                                         \
        if (bf16)                                                                             \
            VLOOP(n, p[i] = bf16_encode(in[i]));                                              \
        else                                                                                  \
            VLOOP(n, p[i] = f16_encode(in[i]));                                               \
    }
DEFINE_CODEC16(base, )
#ifdef INTERP_HAVE_AVX2
DEFINE_CODEC16(avx2, __attribute__((target("avx2"))))
DEFINE_CODEC16(avx512, __attribute__((target("avx512f,avx512bw,avx512vl"))))
#define CODEC16(f) (interp_use_avx512() ? f##_avx512 : interp_use_avx2() ? f##_avx2 : f##_base)
#else
#define CODEC16(f) f##_base
#endif

void eval_narrow_decode(const Narrow *c, const void *in, float *restrict out, int64_t n)
{
    if (c->bytes == 2) {
        CODEC16(decode16)(c->type == IR_TYPE_BF16, in, out, n);
    } else {
        const uint8_t *restrict p = in;
        for (int64_t i = 0; i < n; i++)
            out[i] = c->table[p[i]];
    }
}

void eval_narrow_encode(const Narrow *c, const float *restrict in, void *out, int64_t n)
{
    if (c->bytes == 2) {
        CODEC16(encode16)(c->type == IR_TYPE_BF16, in, out, n);
    } else {
        uint8_t *restrict p = out;
        for (int64_t i = 0; i < n; i++)
            p[i] = ir_f64_to_f8(c->type, in[i]);
    }
}

/* ------------------------------------------------------------------ */
/* pred and sub-byte integers after an 8-bit loop                       */

/* pred back to 0/1; s1..s4 sign-extended and u1..u4 masked to their width. */
void eval_normalize_ints(IrElemType t, void *data, int64_t n)
{
    if (t == IR_TYPE_PRED) {
        uint8_t *restrict p = data;
        VLOOP(n, p[i] = p[i] != 0);
        return;
    }
    if (!eval_is_sub_byte_int(t))
        return;
    int bits = ir_type_info[t].bits;
    uint8_t mask = (uint8_t)((1u << bits) - 1), top = (uint8_t)(1u << (bits - 1));
    uint8_t *restrict p = data;
    if (ir_type_is_signed_int(t))     /* (v ^ top) - top sign-extends the low bits */
        VLOOP(n, p[i] = (uint8_t)(((p[i] & mask) ^ top) - top));
    else
        VLOOP(n, p[i] = p[i] & mask);
}

/* The type whose loops serve t: the 8-bit ones for sub-byte ints. */
IrElemType eval_compute_type(IrElemType t)
{
    if (eval_is_sub_byte_int(t))
        return ir_type_is_signed_int(t) ? IR_TYPE_S8 : IR_TYPE_U8;
    return t;
}

/* ------------------------------------------------------------------ */
/* Scalar functions                                                     */

/* Floats: P is the prefix (f32, f64), T the type, S the libm suffix. */
#define FLOAT_BINARY_SCALARS(P, T, S)                                                   \
    static inline T P##_add(T a, T b) { return a + b; }                                 \
    static inline T P##_subtract(T a, T b) { return a - b; }                            \
    static inline T P##_multiply(T a, T b) { return a * b; }                            \
    static inline T P##_divide(T a, T b) { return a / b; }                              \
    static inline T P##_remainder(T a, T b) { return fmod##S(a, b); }                   \
    static inline T P##_maximum(T a, T b) { return IEEE_MAX(a, b); }                    \
    static inline T P##_minimum(T a, T b) { return IEEE_MIN(a, b); }                    \
    static inline T P##_power(T a, T b) { return a == 1 || b == 0 ? 1 : pow##S(a, b); } \
    static inline T P##_atan2(T a, T b) { return atan2##S(a, b); }

#define FLOAT_LIBM(P, T, S, name) \
    static inline T P##_##name(T a) { return name##S(a); }

#define FLOAT_UNARY_SCALARS(P, T, S)                                                   \
    static inline T P##_abs(T a) { return fabs##S(a); }                                 \
    static inline T P##_negate(T a) { return -a; }                                      \
    static inline T P##_sign(T a) { return a != a ? a : copysign##S((T)(a != 0), a); }  \
    static inline T P##_rsqrt(T a) { return 1 / sqrt##S(a); }                           \
    static inline T P##_logistic(T a) { return 1 / (1 + exp##S(-a)); }                  \
    static inline T P##_round_afz(T a) { return round##S(a); }                          \
    static inline T P##_round_even(T a) { return nearbyint##S(a); }                     \
    FLOAT_LIBM(P, T, S, exp) FLOAT_LIBM(P, T, S, expm1) FLOAT_LIBM(P, T, S, log)        \
    FLOAT_LIBM(P, T, S, log1p) FLOAT_LIBM(P, T, S, sqrt) FLOAT_LIBM(P, T, S, cbrt)      \
    FLOAT_LIBM(P, T, S, tanh) FLOAT_LIBM(P, T, S, sin) FLOAT_LIBM(P, T, S, cos)         \
    FLOAT_LIBM(P, T, S, tan) FLOAT_LIBM(P, T, S, acos) FLOAT_LIBM(P, T, S, acosh)       \
    FLOAT_LIBM(P, T, S, asin) FLOAT_LIBM(P, T, S, asinh) FLOAT_LIBM(P, T, S, atanh)     \
    FLOAT_LIBM(P, T, S, cosh) FLOAT_LIBM(P, T, S, sinh) FLOAT_LIBM(P, T, S, floor)      \
    FLOAT_LIBM(P, T, S, ceil) FLOAT_LIBM(P, T, S, erf)

FLOAT_BINARY_SCALARS(f32, float, f)
FLOAT_BINARY_SCALARS(f64, double, )
FLOAT_UNARY_SCALARS(f32, float, f)
FLOAT_UNARY_SCALARS(f64, double, )

/* Integers: T the type, S and U its signed and unsigned twins, W the
 * unsigned type arithmetic happens in (at least unsigned int, so that no
 * operand is promoted to a signed int that could overflow), BITS the width,
 * SIGNED 0 or 1.  Conversions of out-of-range values back to a signed type
 * wrap (gcc documents modulo 2^N). */
#define INT_BINARY_SCALARS(P, T, S, U, W, BITS, SIGNED)                                 \
    static inline T P##_add(T a, T b) { return (T)(U)((W)(U)a + (W)(U)b); }             \
    static inline T P##_subtract(T a, T b) { return (T)(U)((W)(U)a - (W)(U)b); }        \
    static inline T P##_multiply(T a, T b) { return (T)(U)((W)(U)a * (W)(U)b); }        \
    static inline T P##_divide(T a, T b)                                                \
    {                                                                                   \
        if (b == 0)                                                                     \
            return (T)-1;                                                               \
        if (SIGNED && b == (T)-1 && a == (T)((U)1 << (BITS - 1)))                       \
            return a;                                                                   \
        return (T)(a / b);                                                              \
    }                                                                                   \
    static inline T P##_remainder(T a, T b)                                             \
    {                                                                                   \
        if (b == 0)                                                                     \
            return a;                                                                   \
        if (SIGNED && b == (T)-1)                                                       \
            return 0;                                                                   \
        return (T)(a % b);                                                              \
    }                                                                                   \
    static inline T P##_maximum(T a, T b) { return a < b ? b : a; }                     \
    static inline T P##_minimum(T a, T b) { return b < a ? b : a; }                     \
    static inline T P##_power(T a, T b)                                                 \
    {                                                                                   \
        if (a == 1 || b == 0)                                                           \
            return 1;                                                                   \
        if (SIGNED && (S)b < 0) /* 1/a^-b truncated: +-1 for a = -1, else 0 */        \
            return (S)a == -1 ? (T)((b & 1) ? -1 : 1) : 0;                              \
        U base = (U)a, r = 1;                                                           \
        for (U e = (U)b; e != 0; e = (U)(e >> 1)) {                                     \
            if (e & 1)                                                                  \
                r = (U)((W)r * base);                                                   \
            base = (U)((W)base * base);                                                 \
        }                                                                               \
        return (T)r;                                                                    \
    }                                                                                   \
    static inline T P##_and(T a, T b) { return (T)(a & b); }                            \
    static inline T P##_or(T a, T b) { return (T)(a | b); }                             \
    static inline T P##_xor(T a, T b) { return (T)(a ^ b); }                            \
    static inline T P##_shift_left(T a, T b)                                            \
    {                                                                                   \
        return (U)b >= BITS ? 0 : (T)(U)((W)(U)a << (U)b);                              \
    }                                                                                   \
    static inline T P##_shift_right_arith(T a, T b)                                     \
    {                                                                                   \
        return (U)b >= BITS ? ((S)a < 0 ? (T)-1 : 0) : (T)((S)a >> (U)b);               \
    }                                                                                   \
    static inline T P##_shift_right_logical(T a, T b)                                   \
    {                                                                                   \
        return (U)b >= BITS ? 0 : (T)((U)a >> (U)b);                                    \
    }

#define INT_UNARY_SCALARS(P, T, S, U, W, BITS, SIGNED)                                  \
    static inline T P##_abs(T a) { return SIGNED && (S)a < 0 ? (T)(U)((W)0 - (W)(U)a) : a; } \
    static inline T P##_negate(T a) { return (T)(U)((W)0 - (W)(U)a); }                  \
    static inline T P##_sign(T a) { return SIGNED && (S)a < 0 ? (T)-1 : (T)(a != 0); }  \
    static inline T P##_not(T a) { return (T)~a; }                                      \
    static inline T P##_popcnt(T a) { return (T)__builtin_popcountll((U)a); }           \
    static inline T P##_clz(T a)                                                        \
    {                                                                                   \
        return (T)(a == 0 ? BITS : __builtin_clzll((unsigned long long)(U)a) - (64 - BITS)); \
    }

/* X(prefix, type, signed twin, unsigned twin, arithmetic type, bits, signed) */
#define INT_TYPES(X)                                                  \
    X(s8, int8_t, int8_t, uint8_t, unsigned, 8, 1)                    \
    X(s16, int16_t, int16_t, uint16_t, unsigned, 16, 1)               \
    X(s32, int32_t, int32_t, uint32_t, uint32_t, 32, 1)               \
    X(s64, int64_t, int64_t, uint64_t, uint64_t, 64, 1)               \
    X(u8, uint8_t, int8_t, uint8_t, unsigned, 8, 0)                   \
    X(u16, uint16_t, int16_t, uint16_t, unsigned, 16, 0)              \
    X(u32, uint32_t, int32_t, uint32_t, uint32_t, 32, 0)              \
    X(u64, uint64_t, int64_t, uint64_t, uint64_t, 64, 0)

INT_TYPES(INT_BINARY_SCALARS)
INT_TYPES(INT_UNARY_SCALARS)

static inline uint8_t pred_not(uint8_t a) { return !a; }

static inline c64_t c64_add(c64_t a, c64_t b) { return a + b; }
static inline c64_t c64_subtract(c64_t a, c64_t b) { return a - b; }
static inline c64_t c64_multiply(c64_t a, c64_t b) { return a * b; }
static inline c64_t c64_divide(c64_t a, c64_t b) { return a / b; }
static inline c128_t c128_add(c128_t a, c128_t b) { return a + b; }
static inline c128_t c128_subtract(c128_t a, c128_t b) { return a - b; }
static inline c128_t c128_multiply(c128_t a, c128_t b) { return a * b; }
static inline c128_t c128_divide(c128_t a, c128_t b) { return a / b; }
static inline c64_t c64_negate(c64_t a) { return -a; }
static inline c128_t c128_negate(c128_t a) { return -a; }
static inline c64_t c64_sign(c64_t a) { float m = cabsf(a); return m == 0 ? 0 : a / m; }
static inline c128_t c128_sign(c128_t a) { double m = cabs(a); return m == 0 ? 0 : a / m; }

/* Complex transcendentals: C's complex functions (principal branches, as
 * XLA's and std::complex's), computed in the part type.  expm1 and log1p
 * keep their accuracy near zero: expm1(a+bi) = expm1(a) cos b - 2 sin^2(b/2)
 * + i e^a sin b (e^a - 1 + 0i for b = 0); log1p(z) = log|1+z| + i arg(1+z),
 * with log|1+z| = log1p(a(2+a) + b^2) / 2 while |1+z| is near 1, and
 * log(hypot(1+a, b)) elsewhere (a(2+a) + b^2 overflows long before |z|
 * does).  power: 1 for a zero exponent, else
 * C's cpow. */
#define COMPLEX_TRANSCENDENTALS(P, T, R, S, MAKE)                                      \
    static inline T P##_exp(T a) { return cexp##S(a); }                                 \
    static inline T P##_log(T a) { return clog##S(a); }                                 \
    static inline T P##_sqrt(T a) { return csqrt##S(a); }                               \
    static inline T P##_rsqrt(T a) { return 1 / csqrt##S(a); }                          \
    static inline T P##_sin(T a) { return csin##S(a); }                                 \
    static inline T P##_cos(T a) { return ccos##S(a); }                                 \
    static inline T P##_tan(T a) { return ctan##S(a); }                                 \
    static inline T P##_tanh(T a) { return ctanh##S(a); }                               \
    static inline T P##_expm1(T z)                                                      \
    {                                                                                   \
        R a = creal##S(z), b = cimag##S(z), h = sin##S(b / 2);                          \
        if (b == 0) /* a real argument: exact zero imaginary part, as cexp gives */     \
            return MAKE(expm1##S(a), b);                                                \
        return MAKE(expm1##S(a) * cos##S(b) - 2 * h * h, exp##S(a) * sin##S(b));        \
    }                                                                                   \
    static inline T P##_log1p(T z)                                                      \
    {                                                                                   \
        R a = creal##S(z), b = cimag##S(z), m = hypot##S(1 + a, b);                     \
        R re = m > (R)0.5 && m < 2 ? log1p##S(a * (2 + a) + b * b) / 2 : log##S(m);     \
        return MAKE(re, atan2##S(b, 1 + a));                                            \
    }                                                                                   \
    static inline T P##_power(T a, T b) { return b == 0 ? 1 : cpow##S(a, b); }

COMPLEX_TRANSCENDENTALS(c64, c64_t, float, f, CMPLXF)
COMPLEX_TRANSCENDENTALS(c128, c128_t, double, , CMPLX)

/* ------------------------------------------------------------------ */
/* Loops and their tables (indexed by opcode; NULL: unsupported)        */

#define DEFINE_BINARY_LOOP(NAME, T, FN)                                                 \
    static void NAME(void *restrict out_, const void *restrict a_, const void *restrict b_, \
                     int64_t n)                                                         \
    {                                                                                   \
        T *restrict o = out_;                                                           \
        const T *restrict a = a_, *restrict b = b_;                                     \
        VLOOP(n, o[i] = FN(a[i], b[i]));                                                \
    }

#define DEFINE_UNARY_LOOP(NAME, T, FN)                                                  \
    static void NAME(void *restrict out_, const void *restrict in_, int64_t n)          \
    {                                                                                   \
        T *restrict o = out_;                                                           \
        const T *restrict a = in_;                                                      \
        VLOOP(n, o[i] = FN(a[i]));                                                      \
    }

/* X(P, T, OPCODE, name) over each op family. */
#define ARITH_OPS(X, P, T) \
    X(P, T, ADD, add) X(P, T, SUBTRACT, subtract) X(P, T, MULTIPLY, multiply) X(P, T, DIVIDE, divide)
#define ORDER_OPS(X, P, T) \
    X(P, T, REMAINDER, remainder) X(P, T, MAXIMUM, maximum) X(P, T, MINIMUM, minimum) \
    X(P, T, POWER, power)
#define FLOAT_BINARY_OPS(X, P, T) ARITH_OPS(X, P, T) ORDER_OPS(X, P, T) X(P, T, ATAN2, atan2)
#define INT_BINARY_OPS(X, P, T)                                                       \
    ARITH_OPS(X, P, T) ORDER_OPS(X, P, T) X(P, T, AND, and) X(P, T, OR, or)           \
    X(P, T, XOR, xor) X(P, T, SHIFT_LEFT, shift_left)                                 \
    X(P, T, SHIFT_RIGHT_ARITH, shift_right_arith)                                     \
    X(P, T, SHIFT_RIGHT_LOGICAL, shift_right_logical)
#define COMPLEX_BINARY_OPS(X, P, T) ARITH_OPS(X, P, T) X(P, T, POWER, power)
#define FLOAT_UNARY_OPS(X, P, T)                                                      \
    X(P, T, ABS, abs) X(P, T, NEGATE, negate) X(P, T, SIGN, sign) X(P, T, EXP, exp)   \
    X(P, T, EXPM1, expm1) X(P, T, LOG, log) X(P, T, LOG1P, log1p) X(P, T, SQRT, sqrt) \
    X(P, T, RSQRT, rsqrt) X(P, T, CBRT, cbrt) X(P, T, TANH, tanh)                     \
    X(P, T, LOGISTIC, logistic) X(P, T, SIN, sin) X(P, T, COS, cos) X(P, T, TAN, tan) \
    X(P, T, ACOS, acos) X(P, T, ACOSH, acosh) X(P, T, ASIN, asin)                     \
    X(P, T, ASINH, asinh) X(P, T, ATANH, atanh) X(P, T, COSH, cosh)                   \
    X(P, T, SINH, sinh) X(P, T, FLOOR, floor) X(P, T, CEIL, ceil)                     \
    X(P, T, ROUND_AFZ, round_afz) X(P, T, ROUND_EVEN, round_even) X(P, T, ERF, erf)
#define INT_UNARY_OPS(X, P, T)                                                        \
    X(P, T, ABS, abs) X(P, T, NEGATE, negate) X(P, T, SIGN, sign) X(P, T, NOT, not)   \
    X(P, T, POPCNT, popcnt) X(P, T, CLZ, clz)
#define COMPLEX_UNARY_OPS(X, P, T)                                                    \
    X(P, T, NEGATE, negate) X(P, T, SIGN, sign) X(P, T, EXP, exp) X(P, T, EXPM1, expm1) \
    X(P, T, LOG, log) X(P, T, LOG1P, log1p) X(P, T, SQRT, sqrt) X(P, T, RSQRT, rsqrt) \
    X(P, T, SIN, sin) X(P, T, COS, cos) X(P, T, TAN, tan) X(P, T, TANH, tanh)

#define BINARY_LOOP_OF(P, T, E, name) DEFINE_BINARY_LOOP(P##_##name##_loop, T, P##_##name)
#define UNARY_LOOP_OF(P, T, E, name) DEFINE_UNARY_LOOP(P##_##name##_unary, T, P##_##name)
#define BINARY_ENTRY(P, T, E, name) [IR_OP_##E] = P##_##name##_loop,
#define UNARY_ENTRY(P, T, E, name) [IR_OP_##E] = P##_##name##_unary,

#define FLOAT_TABLES(P, T)                                                            \
    FLOAT_BINARY_OPS(BINARY_LOOP_OF, P, T)                                            \
    FLOAT_UNARY_OPS(UNARY_LOOP_OF, P, T)                                              \
    static const BinaryLoop P##_binary[IR_OP_COUNT] = { FLOAT_BINARY_OPS(BINARY_ENTRY, P, T) }; \
    static const UnaryLoop P##_unary[IR_OP_COUNT] = { FLOAT_UNARY_OPS(UNARY_ENTRY, P, T) };

#define INT_TABLES(P, T, S, U, W, BITS, SIGNED)                                       \
    INT_BINARY_OPS(BINARY_LOOP_OF, P, T)                                              \
    INT_UNARY_OPS(UNARY_LOOP_OF, P, T)                                                \
    static const BinaryLoop P##_binary[IR_OP_COUNT] = { INT_BINARY_OPS(BINARY_ENTRY, P, T) }; \
    static const UnaryLoop P##_unary[IR_OP_COUNT] = { INT_UNARY_OPS(UNARY_ENTRY, P, T) };

#define COMPLEX_TABLES(P, T)                                                          \
    COMPLEX_BINARY_OPS(BINARY_LOOP_OF, P, T)                                          \
    COMPLEX_UNARY_OPS(UNARY_LOOP_OF, P, T)                                            \
    static const BinaryLoop P##_binary[IR_OP_COUNT] = { COMPLEX_BINARY_OPS(BINARY_ENTRY, P, T) }; \
    static const UnaryLoop P##_unary[IR_OP_COUNT] = { COMPLEX_UNARY_OPS(UNARY_ENTRY, P, T) };

FLOAT_TABLES(f32, float)
FLOAT_TABLES(f64, double)
INT_TYPES(INT_TABLES)
COMPLEX_TABLES(c64, c64_t)
COMPLEX_TABLES(c128, c128_t)
DEFINE_UNARY_LOOP(pred_not_unary, uint8_t, pred_not)

/* The loops for an element type: narrow floats share f32's, pred the u8
 * binary loops (then normalised), sub-byte ints the 8-bit ones. */
static const BinaryLoop *binary_table(IrElemType t)
{
    switch ((int)eval_compute_type(t)) {
    case IR_TYPE_F32: return f32_binary;
    case IR_TYPE_F64: return f64_binary;
    case IR_TYPE_S8: return s8_binary;
    case IR_TYPE_S16: return s16_binary;
    case IR_TYPE_S32: return s32_binary;
    case IR_TYPE_S64: return s64_binary;
    case IR_TYPE_PRED:
    case IR_TYPE_U8: return u8_binary;
    case IR_TYPE_U16: return u16_binary;
    case IR_TYPE_U32: return u32_binary;
    case IR_TYPE_U64: return u64_binary;
    case IR_TYPE_C64: return c64_binary;
    case IR_TYPE_C128: return c128_binary;
    default: return eval_is_narrow_float(t) ? f32_binary : NULL;
    }
}

static const UnaryLoop *unary_table(IrElemType t)
{
    switch ((int)eval_compute_type(t)) {
    case IR_TYPE_F32: return f32_unary;
    case IR_TYPE_F64: return f64_unary;
    case IR_TYPE_S8: return s8_unary;
    case IR_TYPE_S16: return s16_unary;
    case IR_TYPE_S32: return s32_unary;
    case IR_TYPE_S64: return s64_unary;
    case IR_TYPE_U8: return u8_unary;
    case IR_TYPE_U16: return u16_unary;
    case IR_TYPE_U32: return u32_unary;
    case IR_TYPE_U64: return u64_unary;
    case IR_TYPE_C64: return c64_unary;
    case IR_TYPE_C128: return c128_unary;
    default: return eval_is_narrow_float(t) ? f32_unary : NULL;
    }
}

/* popcnt and count-leading-zeros of a B-bit integer held in a byte: the
 * low B bits counted (the 8-bit loops would count the extension too). */
#define DEFINE_SUB_BYTE_BIT_COUNTS(B)                                                   \
    static void sub##B##_popcnt_unary(void *restrict out_, const void *restrict in_, int64_t n) \
    {                                                                                   \
        uint8_t *restrict o = out_;                                                     \
        const uint8_t *restrict a = in_;                                                \
        VLOOP(n, o[i] = (uint8_t)__builtin_popcount(a[i] & ((1u << B) - 1)));           \
    }                                                                                   \
    static void sub##B##_clz_unary(void *restrict out_, const void *restrict in_, int64_t n) \
    {                                                                                   \
        uint8_t *restrict o = out_;                                                     \
        const uint8_t *restrict a = in_;                                                \
        VLOOP(n, { unsigned v = a[i] & ((1u << B) - 1);                                 \
                   o[i] = (uint8_t)(v ? __builtin_clz(v) - (32 - B) : B); });           \
    }
DEFINE_SUB_BYTE_BIT_COUNTS(1)
DEFINE_SUB_BYTE_BIT_COUNTS(2)
DEFINE_SUB_BYTE_BIT_COUNTS(4)

static UnaryLoop sub_byte_unary(IrOpcode op, IrElemType t)
{
    int bits = ir_type_info[t].bits;
    bool pop = op == IR_OP_POPCNT;
    switch (bits) {
    case 1: return pop ? sub1_popcnt_unary : sub1_clz_unary;
    case 2: return pop ? sub2_popcnt_unary : sub2_clz_unary;
    case 4: return pop ? sub4_popcnt_unary : sub4_clz_unary;
    default: return NULL;
    }
}

/* Ops the pred and sub-byte shortcuts would get wrong. */
static bool narrow_int_op_ok(IrOpcode op, IrElemType t)
{
    bool shift = op == IR_OP_SHIFT_LEFT || op == IR_OP_SHIFT_RIGHT_ARITH ||
                 op == IR_OP_SHIFT_RIGHT_LOGICAL;
    if (t == IR_TYPE_PRED)
        return !shift && op != IR_OP_ATAN2;
    if (!eval_is_sub_byte_int(t))
        return true;
    if (op == IR_OP_POPCNT || op == IR_OP_CLZ)
        return false;
    if (op == IR_OP_SHIFT_RIGHT_LOGICAL)
        return ir_type_is_unsigned_int(t);
    if (op == IR_OP_SHIFT_RIGHT_ARITH)
        return ir_type_is_signed_int(t);
    return true;
}

static BinaryLoop binary_loop(IrOpcode op, IrElemType t)
{
    const BinaryLoop *table = binary_table(t);
    if (!table || (unsigned)op >= IR_OP_COUNT || !narrow_int_op_ok(op, t))
        return NULL;
    return table[op];
}

static UnaryLoop unary_loop(IrOpcode op, IrElemType t)
{
    if (t == IR_TYPE_PRED)
        return op == IR_OP_NOT ? pred_not_unary : NULL;
    if (eval_is_sub_byte_int(t) && (op == IR_OP_POPCNT || op == IR_OP_CLZ))
        return sub_byte_unary(op, t);
    const UnaryLoop *table = unary_table(t);
    if (!table || (unsigned)op >= IR_OP_COUNT || !narrow_int_op_ok(op, t))
        return NULL;
    return table[op];
}

/* bf16 arithmetic in one pass: decode, the f32 op, encode, per element in
 * registers.  The same operations as narrow_binary's blocks, so the same
 * bits, without the round trips through three L1 buffers, which held bf16
 * add to half of memcpy's speed.  Built for plain x86-64 and AVX2 like the
 * codecs; dst must not alias an operand.  When both operands are NaN the
 * lhs's sign is kept explicitly (the encoding makes every NaN canonical, so
 * only the sign is left): gcc may swap the operands of a commutative op,
 * differently in a vector body and its scalar tail, and x86 returns the
 * first operand's NaN.  Every bf16 op with a fused loop takes it
 * (lhs_nan_first, narrow_float.h), in place too, so the sign no longer
 * depends on where an element falls. */
#define FUSED_BF16_OPS(X, P, T) ARITH_OPS(X, P, T) X(P, T, MAXIMUM, maximum) X(P, T, MINIMUM, minimum)
#define DEFINE_FUSED_BF16(P, ATTR, E, name)                                             \
    ATTR static void bf16_##name##_##P(void *restrict out, const void *restrict a_,   \
                                       const void *restrict b_, int64_t n)            \
    {                                                                                   \
        uint16_t *restrict o = out;                                                     \
        const uint16_t *restrict a = a_, *restrict b = b_;                              \
        VLOOP(n, o[i] = bf16_encode(lhs_nan_first(bf16_decode(a[i]),                    \
                                                  f32_##name(bf16_decode(a[i]), bf16_decode(b[i]))))); \
    }
#define FUSED_BF16_ENTRY(P, ATTR, E, name) [IR_OP_##E] = bf16_##name##_##P,
FUSED_BF16_OPS(DEFINE_FUSED_BF16, base, )
static const BinaryLoop bf16_fused_base[IR_OP_COUNT] = { FUSED_BF16_OPS(FUSED_BF16_ENTRY, base, ) };
#ifdef INTERP_HAVE_AVX2
FUSED_BF16_OPS(DEFINE_FUSED_BF16, avx2, __attribute__((target("avx2"))))
static const BinaryLoop bf16_fused_avx2[IR_OP_COUNT] = { FUSED_BF16_OPS(FUSED_BF16_ENTRY, avx2, ) };
/* AVX-512: add, subtract, multiply and divide written with intrinsics over
 * 16 lanes (gcc's vectoriser stays at 256 bits and needs more steps),
 * maximum and minimum compiled from the C above.  The lanes do exactly what
 * the C does: the same IEEE op, the lhs's NaN kept, bf16_encode's rounding
 * and canonical NaN; the tail runs the C.  16M bf16 adds: 2.5-2.7 ms
 * against 4.7 with AVX2 (memcpy of the same bytes 3.0). */
#include <immintrin.h>
#define AVX512_ATTR __attribute__((target("avx512f,avx512bw,avx512vl")))
FUSED_BF16_OPS(DEFINE_FUSED_BF16, avx512vl, AVX512_ATTR)

AVX512_ATTR static inline __m512 bf16_load16(const uint16_t *p)
{
    __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(const void *)p));
    return _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
}

/* bf16_encode(lhs_nan_first(lhs, r)) in each lane. */
AVX512_ATTR static inline void bf16_store16(uint16_t *p, __m512 lhs, __m512 r)
{
    r = _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(lhs, lhs, _CMP_UNORD_Q), lhs);
    __m512i u = _mm512_castps_si512(r), hi = _mm512_srli_epi32(u, 16);
    __m512i odd = _mm512_and_si512(hi, _mm512_set1_epi32(1));
    __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7fff)), odd), 16);
    __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff)),
                                            _mm512_set1_epi32(0x7f800000));
    __m512i quiet = _mm512_or_si512(_mm512_and_si512(hi, _mm512_set1_epi32(0x8000)), _mm512_set1_epi32(0x7fc0));
    _mm256_storeu_si256((__m256i *)(void *)p, _mm512_cvtepi32_epi16(_mm512_mask_mov_epi32(rounded, nan, quiet)));
}

#define DEFINE_BF16_AVX512(name, INTRIN)                                                 \
    AVX512_ATTR static void bf16_##name##_avx512(void *restrict out, const void *restrict a_, \
                                                 const void *restrict b_, int64_t n)    \
    {                                                                                    \
        uint16_t *restrict o = out;                                                      \
        const uint16_t *restrict a = a_, *restrict b = b_;                               \
        int64_t i = 0;                                                                   \
        for (; i + 16 <= n; i += 16) {                                                   \
            __m512 x = bf16_load16(a + i);                                               \
            bf16_store16(o + i, x, INTRIN(x, bf16_load16(b + i)));                       \
        }                                                                                \
        bf16_##name##_avx512vl(o + i, a + i, b + i, n - i);                              \
    }
DEFINE_BF16_AVX512(add, _mm512_add_ps)
DEFINE_BF16_AVX512(subtract, _mm512_sub_ps)
DEFINE_BF16_AVX512(multiply, _mm512_mul_ps)
DEFINE_BF16_AVX512(divide, _mm512_div_ps)
static const BinaryLoop bf16_fused_avx512[IR_OP_COUNT] = {
    [IR_OP_ADD] = bf16_add_avx512, [IR_OP_SUBTRACT] = bf16_subtract_avx512,
    [IR_OP_MULTIPLY] = bf16_multiply_avx512, [IR_OP_DIVIDE] = bf16_divide_avx512,
    [IR_OP_MAXIMUM] = bf16_maximum_avx512vl, [IR_OP_MINIMUM] = bf16_minimum_avx512vl,
};
#define BF16_FUSED \
    (interp_use_avx512() ? bf16_fused_avx512 : interp_use_avx2() ? bf16_fused_avx2 : bf16_fused_base)
#else
#define BF16_FUSED bf16_fused_base
#endif

/* ------------------------------------------------------------------ */
/* Running a binary loop                                                */

static void narrow_binary(BinaryLoop f32_loop, IrElemType t, void *dst, const void *a, const void *b,
                          int64_t n)
{
    Narrow c;
    eval_narrow_init(&c, t);
    float fa[BLOCK], fb[BLOCK], fo[BLOCK];
    for (int64_t off = 0; off < n; off += BLOCK) {
        int64_t m = eval_min_i64(BLOCK, n - off);
        eval_narrow_decode(&c, eval_at(a, off, c.bytes), fa, m);
        eval_narrow_decode(&c, eval_at(b, off, c.bytes), fb, m);
        f32_loop(fo, fa, fb, m);
        eval_narrow_encode(&c, fo, eval_at_mut(dst, off, c.bytes), m);
    }
}

/* dst is a or b: the loops take restrict pointers, so results go through a
 * small buffer first. */
static void binary_in_place(BinaryLoop loop, int bytes, void *dst, const void *a, const void *b,
                            int64_t n)
{
    uint64_t tmp[BLOCK];                 /* 8 KiB, aligned for any element */
    int64_t chunk = (int64_t)sizeof tmp / bytes;
    for (int64_t off = 0; off < n; off += chunk) {
        int64_t m = eval_min_i64(chunk, n - off);
        loop(tmp, eval_at(a, off, bytes), eval_at(b, off, bytes), m);
        memcpy(eval_at_mut(dst, off, bytes), tmp, (size_t)(m * bytes));
    }
}

static void binary_run(IrOpcode op, BinaryLoop loop, IrElemType t, void *dst, const void *a, const void *b,
                       int64_t n)
{
    if (t == IR_TYPE_BF16 && BF16_FUSED[op]) {
        if (dst == a || dst == b)
            binary_in_place(BF16_FUSED[op], 2, dst, a, b, n);
        else
            BF16_FUSED[op](dst, a, b, n);
        return;
    }
    if (eval_is_narrow_float(t)) {
        narrow_binary(loop, t, dst, a, b, n);
        return;
    }
    if (dst == a || dst == b)
        binary_in_place(loop, ir_type_storage_bytes(t), dst, a, b, n);
    else
        loop(dst, a, b, n);
    eval_normalize_ints(t, dst, n);
}

static bool kernel_run(const ElemJob *j, char *dst, const char *const *src, int64_t n, Error *err)
{
    BinaryLoop loop = binary_loop(j->op, j->to);
    if (!loop)
        return error_set(err, ERR_UNSUPPORTED, (IrLoc){ 0 }, "unsupported op: %s on %s",
                         (unsigned)j->op < IR_OP_COUNT ? ir_opcode_name(j->op) : "?", ir_type_name(j->to));
    binary_run(j->op, loop, j->to, dst, src[0], src[1], n);
    return true;
}

bool interp_binary_kernel(IrOpcode op, IrElemType t, void *dst, const void *a, const void *b,
                          int64_t n, Error *err)
{
    int bytes = ir_type_storage_bytes(t);
    ElemJob j = { .run = kernel_run, .op = op, .from = t, .to = t, .dst = dst, .dst_bytes = bytes,
                  .src = { a, b }, .types = { t, t }, .src_bytes = { bytes, bytes }, .n_src = 2 };
    return elem_split(&j, n, err);
}

/* complex(re, im): interleaves two f32 (f64) arrays into c64 (c128). */
static bool eval_complex(const ElemJob *j, char *dst, const char *const *src, int64_t n, Error *err)
{
    IrElemType t = j->from;
    if (j->types[1] != t)
        return eval_unsupported_type(j->instr, t, err);
    if (t == IR_TYPE_F32 && j->to == IR_TYPE_C64) {
        float *restrict o = (float *)dst;
        const float *restrict re = (const float *)src[0], *restrict im = (const float *)src[1];
        VLOOP(n, (o[2 * i] = re[i], o[2 * i + 1] = im[i]));
        return true;
    }
    if (t == IR_TYPE_F64 && j->to == IR_TYPE_C128) {
        double *restrict o = (double *)dst;
        const double *restrict re = (const double *)src[0], *restrict im = (const double *)src[1];
        VLOOP(n, (o[2 * i] = re[i], o[2 * i + 1] = im[i]));
        return true;
    }
    return eval_unsupported_type(j->instr, t, err);
}

static bool binary_dispatch(const ElemJob *j, char *dst, const char *const *src, int64_t n, Error *err)
{
    IrElemType t = j->from;
    if (j->op == IR_OP_COMPLEX)
        return eval_complex(j, dst, src, n, err);
    if (j->types[1] != t || j->to != t)
        return eval_unsupported_type(j->instr, t, err);
    BinaryLoop loop = binary_loop(j->op, t);
    if (!loop)
        return eval_unsupported_type(j->instr, t, err);
    binary_run(j->op, loop, t, dst, src[0], src[1], n);
    return true;
}

bool eval_binary(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    (void)it;
    int64_t n = ir_shape_elements(instr->shape);
    if (!eval_need_elements(instr, args[0], 0, n, err) || !eval_need_elements(instr, args[1], 1, n, err))
        return false;
    ElemJob j = eval_elem_job(binary_dispatch, instr, args, 2);
    return eval_elem_eval(&j, n, out, err);
}

/* ------------------------------------------------------------------ */
/* Unary ops                                                            */

static void narrow_unary(UnaryLoop f32_loop, IrElemType t, void *dst, const void *src, int64_t n)
{
    Narrow c;
    eval_narrow_init(&c, t);
    float fi[BLOCK], fo[BLOCK];
    for (int64_t off = 0; off < n; off += BLOCK) {
        int64_t m = eval_min_i64(BLOCK, n - off);
        eval_narrow_decode(&c, eval_at(src, off, c.bytes), fi, m);
        f32_loop(fo, fi, m);
        eval_narrow_encode(&c, fo, eval_at_mut(dst, off, c.bytes), m);
    }
}

/* is-finite: neither inf nor NaN, tested on the exponent bits. */
static void is_finite_f32(uint8_t *restrict o, const float *restrict a, int64_t n)
{
    VLOOP(n, o[i] = (f32_to_bits(a[i]) & 0x7f800000u) != 0x7f800000u);
}

static void is_finite_f64(uint8_t *restrict o, const double *restrict a, int64_t n)
{
    VLOOP(n, o[i] = isfinite(a[i]) != 0);
}

static bool is_finite_run(const IrInstr *instr, IrElemType t, uint8_t *o, const void *src, int64_t n,
                          Error *err)
{
    if (t == IR_TYPE_F32) {
        is_finite_f32(o, src, n);
    } else if (t == IR_TYPE_F64) {
        is_finite_f64(o, src, n);
    } else if (eval_is_narrow_float(t)) {
        Narrow c;
        eval_narrow_init(&c, t);
        float f[BLOCK];
        for (int64_t off = 0; off < n; off += BLOCK) {
            int64_t m = eval_min_i64(BLOCK, n - off);
            eval_narrow_decode(&c, eval_at(src, off, c.bytes), f, m);
            is_finite_f32(o + off, f, m);
        }
    } else {
        return eval_unsupported_type(instr, t, err);
    }
    return true;
}

/* real/imag: a part of a complex; of a real type the value itself / 0. */
static bool part_run(const IrInstr *instr, IrElemType t, void *dst, const void *src, int64_t n,
                     Error *err)
{
    int k = instr->op == IR_OP_IMAG;
    if (t == IR_TYPE_C64) {
        float *restrict o = dst;
        const float *restrict a = src;
        VLOOP(n, o[i] = a[2 * i + k]);
    } else if (t == IR_TYPE_C128) {
        double *restrict o = dst;
        const double *restrict a = src;
        VLOOP(n, o[i] = a[2 * i + k]);
    } else if (ir_type_is_float(t) || ir_type_is_int(t) || t == IR_TYPE_PRED) {
        size_t bytes = (size_t)(n * ir_type_storage_bytes(t));
        if (k)
            memset(dst, 0, bytes);      /* all-zero bits are +0 in every format but e8m0 */
        else
            memcpy(dst, src, bytes);
    } else {
        return eval_unsupported_type(instr, t, err);
    }
    return true;
}

static void complex_abs(IrElemType t, void *dst, const void *src, int64_t n)
{
    if (t == IR_TYPE_C64) {
        float *restrict o = dst;
        const c64_t *restrict a = src;
        for (int64_t i = 0; i < n; i++)
            o[i] = cabsf(a[i]);
    } else {
        double *restrict o = dst;
        const c128_t *restrict a = src;
        for (int64_t i = 0; i < n; i++)
            o[i] = cabs(a[i]);
    }
}

static bool unary_dispatch(const ElemJob *j, char *dst, const char *const *srcs, int64_t n, Error *err)
{
    const IrInstr *instr = j->instr;
    IrElemType t = j->from, rt = j->to;
    const void *src = srcs[0];
    switch ((int)instr->op) {
    case IR_OP_IS_FINITE:
        if (rt != IR_TYPE_PRED)
            return eval_unsupported_type(instr, t, err);
        return is_finite_run(instr, t, (uint8_t *)dst, src, n, err);
    case IR_OP_REAL: case IR_OP_IMAG:
        if (rt != (ir_type_is_complex(t) ? eval_complex_part(t) : t))
            return eval_unsupported_type(instr, t, err);
        return part_run(instr, t, dst, src, n, err);
    case IR_OP_ABS:
        if (!ir_type_is_complex(t))
            break;
        if (rt != eval_complex_part(t))
            return eval_unsupported_type(instr, t, err);
        complex_abs(t, dst, src, n);
        return true;
    }
    UnaryLoop loop = unary_loop(instr->op, t);
    if (!loop || rt != t)
        return eval_unsupported_type(instr, t, err);
    if (eval_is_narrow_float(t)) {
        narrow_unary(loop, t, dst, src, n);
    } else {
        loop(dst, src, n);
        eval_normalize_ints(t, dst, n);
    }
    return true;
}

bool eval_unary(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    (void)it;
    int64_t n = ir_shape_elements(instr->shape);
    if (!eval_need_elements(instr, args[0], 0, n, err))
        return false;
    ElemJob j = eval_elem_job(unary_dispatch, instr, args, 1);
    return eval_elem_eval(&j, n, out, err);
}

/* ------------------------------------------------------------------ */
/* compare                                                              */

/* One loop per direction over keys of type T (ordinary C comparison: IEEE
 * for floats, where every comparison with NaN but != is false). */
#define DEFINE_COMPARE(NAME, T)                                                         \
    static void NAME(uint8_t *restrict o, const T *restrict a, const T *restrict b, int64_t n, \
                     IrCompareDir dir)                                                  \
    {                                                                                   \
        switch (dir) {                                                                  \
        case IR_CMP_EQ: VLOOP(n, o[i] = a[i] == b[i]); break;                           \
        case IR_CMP_NE: VLOOP(n, o[i] = a[i] != b[i]); break;                           \
        case IR_CMP_LT: VLOOP(n, o[i] = a[i] < b[i]); break;                            \
        case IR_CMP_LE: VLOOP(n, o[i] = a[i] <= b[i]); break;                           \
        case IR_CMP_GT: VLOOP(n, o[i] = a[i] > b[i]); break;                            \
        case IR_CMP_GE: VLOOP(n, o[i] = a[i] >= b[i]); break;                           \
        case IR_CMP_NONE: break;                                                        \
        }                                                                               \
    }

DEFINE_COMPARE(compare_s8, int8_t)
DEFINE_COMPARE(compare_s16, int16_t)
DEFINE_COMPARE(compare_s32, int32_t)
DEFINE_COMPARE(compare_s64, int64_t)
DEFINE_COMPARE(compare_u8, uint8_t)
DEFINE_COMPARE(compare_u16, uint16_t)
DEFINE_COMPARE(compare_u32, uint32_t)
DEFINE_COMPARE(compare_u64, uint64_t)
DEFINE_COMPARE(compare_f32, float)
DEFINE_COMPARE(compare_f64, double)

/* The comparison type written, or the default for the operand type. */
static IrCompareType effective_compare_type(IrCompareType ct, IrElemType t)
{
    if (ct != IR_CMPT_DEFAULT)
        return ct;
    if (ir_type_is_float(t) || ir_type_is_complex(t))
        return IR_CMPT_FLOAT;
    return ir_type_is_signed_int(t) ? IR_CMPT_SIGNED : IR_CMPT_UNSIGNED;
}

/* Integers and pred by storage width; the comparison type picks the
 * signedness (sub-byte values are stored extended, which keeps both orders). */
static void compare_ints(bool is_signed, int bytes, uint8_t *o, const void *a, const void *b, int64_t n,
                         IrCompareDir dir)
{
    switch (bytes * (is_signed ? -1 : 1)) {
    case -1: compare_s8(o, a, b, n, dir); break;
    case -2: compare_s16(o, a, b, n, dir); break;
    case -4: compare_s32(o, a, b, n, dir); break;
    case -8: compare_s64(o, a, b, n, dir); break;
    case 1: compare_u8(o, a, b, n, dir); break;
    case 2: compare_u16(o, a, b, n, dir); break;
    case 4: compare_u32(o, a, b, n, dir); break;
    case 8: compare_u64(o, a, b, n, dir); break;
    }
}

/* TOTALORDER key: the bit pattern read as sign-magnitude, so that
 * -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN. */
static void total_order_keys(const IrTypeInfo *ti, const void *src, int64_t *restrict k, int64_t n)
{
    int bits = ti->bits;
    uint64_t mask = bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
    uint64_t sign = ti->has_sign ? UINT64_C(1) << (bits - 1) : 0;
    for (int64_t i = 0; i < n; i++) {
        uint64_t u = 0;
        memcpy(&u, eval_at(src, i, ti->storage_bytes), (size_t)ti->storage_bytes);   /* little-endian */
        u &= mask;
        k[i] = (u & sign) ? -(int64_t)(u & ~sign) - 1 : (int64_t)u;
    }
}

static void compare_total_order(IrElemType t, uint8_t *o, const void *a, const void *b, int64_t n,
                                IrCompareDir dir)
{
    const IrTypeInfo *ti = &ir_type_info[t];
    int64_t ka[BLOCK], kb[BLOCK];
    for (int64_t off = 0; off < n; off += BLOCK) {
        int64_t m = eval_min_i64(BLOCK, n - off);
        total_order_keys(ti, eval_at(a, off, ti->storage_bytes), ka, m);
        total_order_keys(ti, eval_at(b, off, ti->storage_bytes), kb, m);
        compare_s64(o + off, ka, kb, m, dir);
    }
}

static void compare_floats(IrElemType t, uint8_t *o, const void *a, const void *b, int64_t n,
                           IrCompareDir dir)
{
    if (t == IR_TYPE_F32) {
        compare_f32(o, a, b, n, dir);
        return;
    }
    if (t == IR_TYPE_F64) {
        compare_f64(o, a, b, n, dir);
        return;
    }
    Narrow c;
    eval_narrow_init(&c, t);
    float fa[BLOCK], fb[BLOCK];
    for (int64_t off = 0; off < n; off += BLOCK) {
        int64_t m = eval_min_i64(BLOCK, n - off);
        eval_narrow_decode(&c, eval_at(a, off, c.bytes), fa, m);
        eval_narrow_decode(&c, eval_at(b, off, c.bytes), fb, m);
        compare_f32(o + off, fa, fb, m, dir);
    }
}

/* Complex: EQ and NE only, both parts with IEEE equality. */
static void compare_complex(IrElemType t, uint8_t *restrict o, const void *a, const void *b, int64_t n,
                            bool ne)
{
    if (t == IR_TYPE_C64) {
        const float *restrict x = a, *restrict y = b;
        VLOOP(n, o[i] = (x[2 * i] == y[2 * i] && x[2 * i + 1] == y[2 * i + 1]) != ne);
    } else {
        const double *restrict x = a, *restrict y = b;
        VLOOP(n, o[i] = (x[2 * i] == y[2 * i] && x[2 * i + 1] == y[2 * i + 1]) != ne);
    }
}

static bool compare_run(const ElemJob *j, char *dst, const char *const *src, int64_t n, Error *err)
{
    const IrInstr *instr = j->instr;
    IrElemType t = j->from;
    uint8_t *o = (uint8_t *)dst;
    const void *a = src[0], *b = src[1];
    IrCompareDir dir = instr->info->direction;
    IrCompareType ct = effective_compare_type(instr->info->compare_type, t);
    bool int_like = t == IR_TYPE_PRED || ir_type_is_int(t);
    if (dir == IR_CMP_NONE)
        return error_set(err, ERR_SHAPE, instr->info->loc, "compare: missing direction");
    if (int_like && (ct == IR_CMPT_SIGNED || ct == IR_CMPT_UNSIGNED))
        compare_ints(ct == IR_CMPT_SIGNED, ir_type_storage_bytes(t), o, a, b, n, dir);
    else if (ir_type_is_float(t) && ct == IR_CMPT_FLOAT)
        compare_floats(t, o, a, b, n, dir);
    else if (ir_type_is_float(t) && ct == IR_CMPT_TOTALORDER)
        compare_total_order(t, o, a, b, n, dir);
    else if (ir_type_is_complex(t) && (dir == IR_CMP_EQ || dir == IR_CMP_NE))
        compare_complex(t, o, a, b, n, dir == IR_CMP_NE);
    else
        return eval_unsupported_type(instr, t, err);
    return true;
}

bool eval_compare(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    (void)it;
    int64_t n = ir_shape_elements(instr->shape);
    IrElemType t = args[0]->shape->type;
    if (!eval_need_elements(instr, args[0], 0, n, err) || !eval_need_elements(instr, args[1], 1, n, err))
        return false;
    if (args[1]->shape->type != t || instr->shape->type != IR_TYPE_PRED)
        return eval_unsupported_type(instr, t, err);
    ElemJob j = eval_elem_job(compare_run, instr, args, 2);
    return eval_elem_eval(&j, n, out, err);
}

/* ------------------------------------------------------------------ */
/* select                                                               */

#define DEFINE_SELECT(NAME, T)                                                          \
    static void NAME(void *restrict out_, const uint8_t *restrict p, const void *restrict a_, \
                     const void *restrict b_, int64_t n)                                \
    {                                                                                   \
        T *restrict o = out_;                                                           \
        const T *restrict a = a_, *restrict b = b_;                                     \
        VLOOP(n, o[i] = p[i] ? a[i] : b[i]);                                            \
    }

DEFINE_SELECT(select_1, uint8_t)
DEFINE_SELECT(select_2, uint16_t)
DEFINE_SELECT(select_4, uint32_t)
DEFINE_SELECT(select_8, uint64_t)

/* 16-byte elements (c128) as two 8-byte halves. */
static void select_16(void *restrict out, const uint8_t *restrict p, const void *restrict a,
                      const void *restrict b, int64_t n)
{
    uint64_t *restrict o = out;
    const uint64_t *restrict x = a, *restrict y = b;
    for (int64_t i = 0; i < n; i++) {
        o[2 * i] = p[i] ? x[2 * i] : y[2 * i];
        o[2 * i + 1] = p[i] ? x[2 * i + 1] : y[2 * i + 1];
    }
}

static bool select_run(const ElemJob *j, char *dst, const char *const *src, int64_t n, Error *err)
{
    const uint8_t *p = (const uint8_t *)src[0];
    switch (j->dst_bytes) {
    case 1: select_1(dst, p, src[1], src[2], n); break;
    case 2: select_2(dst, p, src[1], src[2], n); break;
    case 4: select_4(dst, p, src[1], src[2], n); break;
    case 8: select_8(dst, p, src[1], src[2], n); break;
    case 16: select_16(dst, p, src[1], src[2], n); break;
    default: return eval_unsupported_type(j->instr, j->to, err);
    }
    return true;
}

/* A scalar predicate picks a whole operand: no copy (tuples too). */
static bool select_whole(const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    Value *pick = *(const uint8_t *)args[0]->data ? args[1] : args[2];
    if (!ir_shape_is_array(pick->shape)) {
        *out = value_retain(pick);
        return true;
    }
    if (!eval_need_elements(instr, pick, pick == args[1] ? 1 : 2, ir_shape_elements(instr->shape), err))
        return false;
    *out = value_alias(instr->shape, pick, err);
    return *out != NULL;
}

bool eval_select(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    (void)it;
    if (!ir_shape_is_array(args[0]->shape) || args[0]->shape->type != IR_TYPE_PRED)
        return eval_unsupported_type(instr, args[0]->shape->type, err);
    if (args[0]->shape->rank == 0)
        return select_whole(instr, args, out, err);
    int64_t n = ir_shape_elements(instr->shape);
    for (int k = 0; k < 3; k++)
        if (!eval_need_elements(instr, args[k], k, n, err))
            return false;
    ElemJob j = eval_elem_job(select_run, instr, args, 3);
    return eval_elem_eval(&j, n, out, err);
}

/* ------------------------------------------------------------------ */
/* clamp                                                                */

/* min(max(x, lo), hi); floats first return the first NaN of lo, x, hi and
 * then order the zeros as IEEE_MAX/IEEE_MIN do. */
#define CLAMP_ORDER(lo, x, hi) ((((x) < (lo)) ? (lo) : (x)) < (hi) ? (((x) < (lo)) ? (lo) : (x)) : (hi))

#define DEFINE_CLAMP_SCALAR(P, T, IS_FLOAT)                                             \
    static inline T P##_clamp(T lo, T x, T hi)                                          \
    {                                                                                   \
        if (IS_FLOAT && lo != lo)                                                       \
            return lo;                                                                  \
        if (IS_FLOAT && x != x)                                                         \
            return x;                                                                   \
        if (IS_FLOAT && hi != hi)                                                       \
            return hi;                                                                  \
        return CLAMP_##IS_FLOAT(lo, x, hi);                                             \
    }
#define CLAMP_0(lo, x, hi) CLAMP_ORDER(lo, x, hi)
#define CLAMP_1(lo, x, hi) IEEE_MIN(IEEE_MAX(x, lo), hi)

/* Scalar bounds are hoisted into locals so each variant is a plain loop. */
#define DEFINE_CLAMP_LOOP(P, T)                                                         \
    static void P##_clamp_loop(void *restrict out_, const void *lo_, const void *x_,    \
                               const void *hi_, int64_t n, bool lo_scalar, bool hi_scalar) \
    {                                                                                   \
        T *restrict o = out_;                                                           \
        const T *restrict lo = lo_, *restrict x = x_, *restrict hi = hi_;               \
        T l = lo_scalar ? lo[0] : 0, h = hi_scalar ? hi[0] : 0;                         \
        if (lo_scalar && hi_scalar)                                                     \
            VLOOP(n, o[i] = P##_clamp(l, x[i], h));                                     \
        else if (lo_scalar)                                                             \
            VLOOP(n, o[i] = P##_clamp(l, x[i], hi[i]));                                 \
        else if (hi_scalar)                                                             \
            VLOOP(n, o[i] = P##_clamp(lo[i], x[i], h));                                 \
        else                                                                            \
            VLOOP(n, o[i] = P##_clamp(lo[i], x[i], hi[i]));                             \
    }

#define DEFINE_CLAMP(P, T, IS_FLOAT) DEFINE_CLAMP_SCALAR(P, T, IS_FLOAT) DEFINE_CLAMP_LOOP(P, T)
#define INT_CLAMP(P, T, S, U, W, BITS, SIGNED) DEFINE_CLAMP(P, T, 0)

DEFINE_CLAMP(f32, float, 1)
DEFINE_CLAMP(f64, double, 1)
INT_TYPES(INT_CLAMP)

typedef void (*ClampLoop)(void *restrict out, const void *lo, const void *x, const void *hi, int64_t n,
                          bool lo_scalar, bool hi_scalar);

static ClampLoop clamp_loop(IrElemType t)
{
    switch ((int)eval_compute_type(t)) {
    case IR_TYPE_F32: return f32_clamp_loop;
    case IR_TYPE_F64: return f64_clamp_loop;
    case IR_TYPE_S8: return s8_clamp_loop;
    case IR_TYPE_S16: return s16_clamp_loop;
    case IR_TYPE_S32: return s32_clamp_loop;
    case IR_TYPE_S64: return s64_clamp_loop;
    case IR_TYPE_PRED:
    case IR_TYPE_U8: return u8_clamp_loop;
    case IR_TYPE_U16: return u16_clamp_loop;
    case IR_TYPE_U32: return u32_clamp_loop;
    case IR_TYPE_U64: return u64_clamp_loop;
    default: return eval_is_narrow_float(t) ? f32_clamp_loop : NULL;
    }
}

/* Narrow floats: bounds and operand decoded per block (a scalar bound
 * once), clamped in f32, encoded back. */
static void narrow_clamp(IrElemType t, void *dst, const char *const *args, int64_t n, bool lo_s, bool hi_s)
{
    Narrow c;
    eval_narrow_init(&c, t);
    float lo[BLOCK], x[BLOCK], hi[BLOCK], o[BLOCK];
    if (lo_s)
        eval_narrow_decode(&c, args[0], lo, 1);
    if (hi_s)
        eval_narrow_decode(&c, args[2], hi, 1);
    for (int64_t off = 0; off < n; off += BLOCK) {
        int64_t m = eval_min_i64(BLOCK, n - off);
        if (!lo_s)
            eval_narrow_decode(&c, eval_at(args[0], off, c.bytes), lo, m);
        if (!hi_s)
            eval_narrow_decode(&c, eval_at(args[2], off, c.bytes), hi, m);
        eval_narrow_decode(&c, eval_at(args[1], off, c.bytes), x, m);
        f32_clamp_loop(o, lo, x, hi, m, lo_s, hi_s);
        eval_narrow_encode(&c, o, eval_at_mut(dst, off, c.bytes), m);
    }
}

/* Types were checked by eval_clamp. */
static bool clamp_run(const ElemJob *j, char *dst, const char *const *src, int64_t n, Error *err)
{
    (void)err;
    if (eval_is_narrow_float(j->from))
        narrow_clamp(j->from, dst, src, n, j->scalar[0], j->scalar[2]);
    else
        clamp_loop(j->from)(dst, src[0], src[1], src[2], n, j->scalar[0], j->scalar[2]);
    return true;
}

/* A bound is a scalar or has the operand's element count. */
static bool clamp_bound(const IrInstr *instr, const Value *b, int k, int64_t n, bool *scalar, Error *err)
{
    *scalar = ir_shape_is_array(b->shape) && value_elements(b) == 1;
    return *scalar || eval_need_elements(instr, b, k, n, err);
}

bool eval_clamp(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    (void)it;
    int64_t n = ir_shape_elements(instr->shape);
    IrElemType t = args[1]->shape->type;
    bool lo_s, hi_s;
    if (!eval_need_elements(instr, args[1], 1, n, err) || !clamp_bound(instr, args[0], 0, n, &lo_s, err) ||
        !clamp_bound(instr, args[2], 2, n, &hi_s, err))
        return false;
    ClampLoop loop = clamp_loop(t);
    if (!loop || args[0]->shape->type != t || args[2]->shape->type != t || instr->shape->type != t)
        return eval_unsupported_type(instr, t, err);
    ElemJob j = eval_elem_job(clamp_run, instr, args, 3);
    j.from = t;
    j.scalar[0] = lo_s;
    j.scalar[2] = hi_s;
    j.src_bytes[0] = lo_s ? 0 : j.src_bytes[0];
    j.src_bytes[2] = hi_s ? 0 : j.src_bytes[2];
    return eval_elem_eval(&j, n, out, err);
}
