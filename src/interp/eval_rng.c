/* eval_rng.c: rng-bit-generator, rng, rng-get-and-update-state and
 * stochastic-convert.
 *
 * rng-bit-generator follows the streams of XLA's builder library
 * (xla/hlo/builder/lib/prng.cc: ThreeFryBitGenerator, PhiloxBitGenerator)
 * as XLA's RngBitGeneratorExpander wires them to the state operand
 * (xla/hlo/transforms/expanders/rng_bit_generator_expander.cc, formerly
 * under xla/service/).  How exact each part is:
 *
 *   rng_three_fry  bit-exact to XLA for the whole output and the new state:
 *                  the block function is Threefry-2x32 with 20 rounds (checked
 *                  against Random123's known answers in tests/interp/
 *                  test_rng.c) and the counters, the split of the output
 *                  shape into halves and the state update are XLA's
 *                  (described at threefry_fill32 and threefry_fill64); one
 *                  output printed by XLA:CPU itself is matched in the test.
 *   rng_philox     bit-exact to XLA the same way: Philox-4x32 with 10 rounds
 *                  (known answers checked too), a 128-bit counter from the
 *                  state, four words per block dealt round-robin
 *                  (philox_fill32, philox_fill64).
 *   rng_default    is rng_philox: XLA:CPU and XLA:GPU both run the expander
 *                  with RNG_PHILOX.  Another backend (TPU) may choose its
 *                  own algorithm, which nothing here can reproduce.
 * Output types: every integer type, and the float types as raw bits.  XLA's
 * builder emits rng-bit-generator with the unsigned type of the width and
 * bitcast-converts; a signed or float result here holds exactly those bits.
 * Widths below 32 take the low bits of the 32-bit stream, as XLA does.
 *
 * rng and rng-get-and-update-state are implementation-defined in XLA (its
 * RngExpander and each backend pick their own generator), so no
 * bit-exactness is claimed; they are deterministic functions of
 * (InterpOptions.rng_seed, call, element), see rng_block.
 *
 * stochastic-convert follows XLA's reference evaluator (HloEvaluator's
 * StochasticConvertOp, which StochasticConvertDecomposer agrees with):
 * float to signed integer only, see stochastic_round. */
#include "eval.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* The block functions                                                  */

static inline uint32_t rotl32(uint32_t v, int d)
{
    return (v << d) | (v >> (32 - d));
}

/* Threefry-2x32, 20 rounds (Salmon et al., SC 2011; Random123's
 * threefry2x32_R(20)): x is the counter on entry, the output on return. */
static void threefry2x32(uint32_t k0, uint32_t k1, uint32_t x[2])
{
    static const int rot[8] = { 13, 15, 26, 6, 17, 29, 16, 24 };
    const uint32_t ks[3] = { k0, k1, 0x1BD11BDAu ^ k0 ^ k1 };
    uint32_t a = x[0] + ks[0], b = x[1] + ks[1];
    for (int g = 0; g < 5; g++) {       /* five groups of four rounds, a key injection after each */
        for (int r = 0; r < 4; r++) {
            a += b;
            b = rotl32(b, rot[(g % 2) * 4 + r]) ^ a;
        }
        a += ks[(g + 1) % 3];
        b += ks[(g + 2) % 3] + (uint32_t)(g + 1);
    }
    x[0] = a;
    x[1] = b;
}

/* Philox-4x32, 10 rounds (Random123's philox4x32_R(10)): x is the counter
 * on entry, the output on return; the key is bumped after every round. */
static void philox4x32(uint32_t k0, uint32_t k1, uint32_t x[4])
{
    for (int r = 0; r < 10; r++) {
        uint64_t p0 = (uint64_t)0xD2511F53u * x[0], p1 = (uint64_t)0xCD9E8D57u * x[2];
        uint32_t y0 = (uint32_t)(p1 >> 32) ^ x[1] ^ k0, y2 = (uint32_t)(p0 >> 32) ^ x[3] ^ k1;
        x[0] = y0;
        x[1] = (uint32_t)p1;
        x[2] = y2;
        x[3] = (uint32_t)p0;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
}

static inline uint32_t lo32(uint64_t v)
{
    return (uint32_t)v;
}

static inline uint32_t hi32(uint64_t v)
{
    return (uint32_t)(v >> 32);
}

static inline uint64_t join64(uint32_t lo, uint32_t hi)
{
    return (uint64_t)lo | (uint64_t)hi << 32;
}

/* A 128-bit counter, low word first (XLA's Uint128 pair of u64s). */
typedef struct U128 { uint64_t lo, hi; } U128;

static U128 u128_add(U128 c, uint64_t v)
{
    U128 r = { c.lo + v, c.hi };
    r.hi += r.lo < c.lo;
    return r;
}

static void philox_block(uint64_t key, U128 c, uint32_t x[4])
{
    x[0] = lo32(c.lo);
    x[1] = hi32(c.lo);
    x[2] = lo32(c.hi);
    x[3] = hi32(c.hi);
    philox4x32(lo32(key), hi32(key), x);
}

/* ------------------------------------------------------------------ */
/* rng-bit-generator streams                                            */

/* Three fry, outputs of 32 bits or fewer (XLA's ThreeFryRngBit32): the
 * output shape is split in halves along the first even dimension (else the
 * largest, the first of equals); block j of the half shape, in row-major
 * order, runs on the counter ctr + j and its two words land at index 2h
 * and 2h+1 of the split dimension (h the half index; 2h+1 dropped for an
 * odd size).  A scalar uses word 0 of block 0.  The counter advances by
 * the number of blocks. */
static uint64_t threefry_fill32(uint32_t *dst, const IrShape *s, uint64_t key, uint64_t ctr)
{
    uint32_t x[2];
    if (s->rank == 0) {
        x[0] = lo32(ctr);
        x[1] = hi32(ctr);
        threefry2x32(lo32(key), hi32(key), x);
        dst[0] = x[0];
        return ctr + 1;
    }
    int split = -1;
    for (int d = 0; d < s->rank && split < 0; d++)
        if (s->dims[d] % 2 == 0)
            split = d;
    if (split < 0) {
        split = 0;
        for (int d = 1; d < s->rank; d++)
            if (s->dims[d] > s->dims[split])
                split = d;
    }
    int64_t outer = 1, inner = 1, n = s->dims[split], half = (n + 1) / 2;
    for (int d = 0; d < split; d++)
        outer *= s->dims[d];
    for (int d = split + 1; d < s->rank; d++)
        inner *= s->dims[d];
    uint64_t j = 0;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t h = 0; h < half; h++) {
            uint32_t *row = dst + (o * n + 2 * h) * inner;
            bool second = 2 * h + 1 < n;
            for (int64_t i = 0; i < inner; i++, j++) {
                uint64_t c = ctr + j;
                x[0] = lo32(c);
                x[1] = hi32(c);
                threefry2x32(lo32(key), hi32(key), x);
                row[i] = x[0];
                if (second)
                    row[inner + i] = x[1];
            }
        }
    return ctr + (uint64_t)(outer * half * inner);
}

/* Three fry, 64-bit outputs (ThreeFryRngBit64): element k (row-major) is
 * block ctr + k, word 0 low and word 1 high; the counter advances by the
 * element count. */
static uint64_t threefry_fill64(uint64_t *dst, int64_t n, uint64_t key, uint64_t ctr)
{
    for (int64_t k = 0; k < n; k++) {
        uint64_t c = ctr + (uint64_t)k;
        uint32_t x[2] = { lo32(c), hi32(c) };
        threefry2x32(lo32(key), hi32(key), x);
        dst[k] = join64(x[0], x[1]);
    }
    return ctr + (uint64_t)n;
}

/* Philox, outputs of 32 bits or fewer (PhiloxRngBit32): element e is word
 * e % 4 of block counter + e / 4; the counter advances by the block count. */
static U128 philox_fill32(uint32_t *dst, int64_t n, uint64_t key, U128 counter)
{
    int64_t blocks = (n + 3) / 4;
    for (int64_t b = 0; b < blocks; b++) {
        uint32_t x[4];
        philox_block(key, u128_add(counter, (uint64_t)b), x);
        for (int w = 0; w < 4 && 4 * b + w < n; w++)
            dst[4 * b + w] = x[w];
    }
    return u128_add(counter, (uint64_t)blocks);
}

/* Philox, 64-bit outputs (PhiloxRngBit64): element e is words (0,1) of
 * block counter + e / 2 when e is even, words (2,3) when odd (low word
 * first); the counter advances by the block count. */
static U128 philox_fill64(uint64_t *dst, int64_t n, uint64_t key, U128 counter)
{
    int64_t blocks = (n + 1) / 2;
    for (int64_t b = 0; b < blocks; b++) {
        uint32_t x[4];
        philox_block(key, u128_add(counter, (uint64_t)b), x);
        dst[2 * b] = join64(x[0], x[1]);
        if (2 * b + 1 < n)
            dst[2 * b + 1] = join64(x[2], x[3]);
    }
    return u128_add(counter, (uint64_t)blocks);
}

/* The 32-bit stream narrowed to t (fewer than 32 bits): the low bits, as
 * XLA's ConvertElementType from u32 keeps them.  Sub-byte integers are
 * stored sign- or zero-extended in their byte, sub-byte floats in the low
 * bits of theirs. */
static void narrow_words(IrElemType t, void *dst, const uint32_t *w, int64_t n)
{
    int bits = ir_type_info[t].bits;
    if (bits == 16) {
        uint16_t *d = dst;
        for (int64_t i = 0; i < n; i++)
            d[i] = (uint16_t)w[i];
    } else if (bits == 8) {
        uint8_t *d = dst;
        for (int64_t i = 0; i < n; i++)
            d[i] = (uint8_t)w[i];
    } else if (ir_type_is_int(t)) {
        uint8_t *d = dst;
        for (int64_t i = 0; i < n; i++)
            ir_elem_set_i64(t, d + i, (int64_t)w[i]);
    } else {
        uint8_t *d = dst, mask = (uint8_t)((1u << bits) - 1);
        for (int64_t i = 0; i < n; i++)
            d[i] = (uint8_t)w[i] & mask;
    }
}

typedef enum RngAlgorithm { RNG_THREE_FRY, RNG_PHILOX } RngAlgorithm;

static bool rng_algorithm(const IrInstr *instr, RngAlgorithm *alg, Error *err)
{
    const char *a = ir_raw_attr_get(instr, "algorithm");
    if (a && strcmp(a, "rng_three_fry") == 0)
        *alg = RNG_THREE_FRY;
    else if (a && (strcmp(a, "rng_philox") == 0 || strcmp(a, "rng_default") == 0))
        *alg = RNG_PHILOX;      /* rng_default: XLA:CPU's and XLA:GPU's choice */
    else
        return error_set(err, ERR_SHAPE, instr->info->loc,
                         "rng-bit-generator: algorithm=%s is not rng_default, rng_three_fry or rng_philox",
                         a ? a : "(missing)");
    return true;
}

/* Whether t can hold random bits: any integer, any float (its bits). */
static bool is_bits_type(IrElemType t)
{
    return ir_type_is_int(t) || ir_type_is_float(t);
}

/* Fills bits (of shape s) from the state words; writes the new state. */
static bool generate(const IrInstr *instr, RngAlgorithm alg, const uint64_t *state, int n_state,
                     uint64_t *new_state, Value *bits, Error *err)
{
    const IrShape *s = bits->shape;
    int64_t n = ir_shape_elements(s);
    uint64_t key = state[0];
    U128 counter = { state[1], n_state >= 3 ? state[2] : state[0] };  /* u64[2]: XLA reverses the state */
    memcpy(new_state, state, (size_t)n_state * sizeof *state);
    if (ir_type_info[s->type].bits == 64) {
        if (alg == RNG_THREE_FRY)
            new_state[1] = threefry_fill64(bits->data, n, key, counter.lo);
        else
            counter = philox_fill64(bits->data, n, key, counter);
    } else {
        bool direct = ir_type_info[s->type].bits == 32;
        uint32_t *w = direct ? bits->data : xmalloc_try((size_t)(n ? n : 1) * sizeof *w);
        if (!w)
            return error_set(err, ERR_NOMEM, instr->info->loc, "rng-bit-generator: out of memory");
        if (alg == RNG_THREE_FRY)
            new_state[1] = threefry_fill32(w, s, key, counter.lo);
        else
            counter = philox_fill32(w, n, key, counter);
        if (!direct) {
            narrow_words(s->type, bits->data, w, n);
            free(w);
        }
    }
    if (alg == RNG_PHILOX) {
        new_state[1] = counter.lo;
        if (n_state >= 3)
            new_state[2] = counter.hi;
    }
    return true;
}

/* rng-bit-generator(state) -> (new state, bits).  state is u64[2]
 * {key, counter} for three fry; for philox u64[3] {key, counter low,
 * counter high} or u64[2] {key, counter low} whose high word is the key
 * (XLA reverses a 2-element state), and only the low word is written back. */
bool eval_rng_bit_generator(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    (void)it;
    const IrShape *s = instr->shape, *st = args[0]->shape;
    RngAlgorithm alg = RNG_PHILOX;
    if (!rng_algorithm(instr, &alg, err))
        return false;
    if (!ir_shape_is_tuple(s) || s->n_elements != 2 || !ir_shape_is_array(s->elements[1]))
        return error_set(err, ERR_UNSUPPORTED, instr->info->loc,
                         "rng-bit-generator: result %s is not a tuple (new state, bits)", ir_shape_str(s));
    int n_state = ir_shape_is_array(st) && st->rank == 1 ? (int)st->dims[0] : 0;
    if (st->type != IR_TYPE_U64 || n_state < 2 || n_state > 3 || (alg == RNG_THREE_FRY && n_state != 2) ||
        !ir_shape_equal(s->elements[0], st))
        return error_set(err, ERR_SHAPE, instr->info->loc, "rng-bit-generator: state %s, new state %s",
                         ir_shape_str(st), ir_shape_str(s->elements[0]));
    if (!is_bits_type(s->elements[1]->type))
        return error_set(err, ERR_UNSUPPORTED, instr->info->loc, "rng-bit-generator: bits of type %s",
                         ir_type_name(s->elements[1]->type));
    Value *el[2] = { value_new_array(s->elements[0], err), value_new_array(s->elements[1], err) };
    if (!el[0] || !el[1] || !generate(instr, alg, args[0]->data, n_state, el[0]->data, el[1], err)) {
        value_release(el[0]);
        value_release(el[1]);
        return false;
    }
    *out = value_new_tuple(s, 2, el, err);
    return *out != NULL;
}

/* ------------------------------------------------------------------ */
/* rng and rng-get-and-update-state                                     */

/* The derivation (ours: XLA leaves both ops implementation-defined).
 * Call c of the run (eval_rng_next_call: 0, 1, ... in execution order,
 * restarting at every interp_run) and element i (row-major) give the
 * Philox-4x32-10 block with key (seed low, seed high) and counter
 * (i low, i high, c low, c high), four words w0..w3:
 *   uniform floats  u = ((w1:w0) >> 11) / 2^53 in [0, 1); the value is
 *                   a + (b - a) u in f64 (a (1-u) + b u when b - a
 *                   overflows), rounded to nearest in the type, and a
 *                   result that rounds up to b becomes the largest value of
 *                   the type below b, so every element is in [a, b).
 *   uniform ints    a + floor((w1:w0) (b - a) / 2^64), in [a, b) (pred
 *                   counts as an integer 0/1).
 *   normal          Box-Muller on u1 = (((w1:w0) >> 11) + 1) / 2^53 in
 *                   (0, 1] and u2 = ((w3:w2) >> 11) / 2^53:
 *                   a + b sqrt(-2 log u1) cos(2 pi u2), in f64 with the C
 *                   library's log, sqrt and cos, rounded once to the type.
 *   rng-get-and-update-state  the block of element 0 of its call,
 *                   {(w1:w0), (w3:w2)}; delta does not enter (each call's
 *                   state is drawn afresh, so states of different calls are
 *                   unrelated rather than delta apart).
 * When a < b fails for uniform (an empty interval) or a bound is not
 * finite, every element is a. */
static void rng_block(uint64_t seed, uint64_t call, uint64_t i, uint32_t w[4])
{
    philox_block(seed, (U128){ i, call }, w);
}

#define TWO_PI 6.283185307179586476925286766559

static inline double unit_53(uint32_t lo, uint32_t hi)
{
    return (double)(join64(lo, hi) >> 11) * 0x1p-53;
}

/* floor(x * range / 2^64) without a 128-bit type. */
static uint64_t mul_high64(uint64_t x, uint64_t range)
{
    uint64_t xl = lo32(x), xh = hi32(x), rl = lo32(range), rh = hi32(range);
    uint64_t ll = xl * rl, lh = xl * rh, hl = xh * rl, hh = xh * rh;
    uint64_t mid = (ll >> 32) + lo32(lh) + lo32(hl);
    return hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
}

/* The largest value of float type t below b (a value of t), or a when that
 * cannot be formed: the bit pattern next to b's toward -inf. */
static double float_below(IrElemType t, double b, double a)
{
    if (t == IR_TYPE_F64)
        return nextafter(b, -INFINITY);
    if (t == IR_TYPE_F32)
        return (double)nextafterf((float)b, -INFINITY);
    const IrTypeInfo *ti = &ir_type_info[t];
    uint64_t bits = 0, sign = ti->has_sign ? UINT64_C(1) << (ti->bits - 1) : 0;
    ir_elem_set_f64(t, &bits, b);
    if (b > 0)
        bits -= 1;
    else if (b == 0)
        bits = sign | 1;
    else
        bits += 1;
    double r = ir_elem_get_f64(t, &bits);
    return r < b && r >= a ? r : a;
}

static void uniform_float(IrElemType t, void *dst, int64_t n, double a, double b, uint64_t seed, uint64_t call)
{
    int bytes = ir_type_storage_bytes(t);
    bool empty = !(a < b) || !isfinite(a) || !isfinite(b);
    double below = empty ? a : float_below(t, b, a), span = b - a;
    for (int64_t i = 0; i < n; i++) {
        double x = a;
        if (!empty) {
            uint32_t w[4];
            rng_block(seed, call, (uint64_t)i, w);
            double u = unit_53(w[0], w[1]);
            x = isfinite(span) ? a + span * u : a * (1 - u) + b * u;
        }
        if (t == IR_TYPE_F64) {
            ((double *)dst)[i] = x < b || empty ? x : below;
        } else if (t == IR_TYPE_F32) {
            float f = (float)x;
            ((float *)dst)[i] = (double)f < b || empty ? f : (float)below;
        } else {
            char *p = (char *)dst + (size_t)i * (size_t)bytes;
            ir_elem_set_f64(t, p, x);
            if (!empty && !(ir_elem_get_f64(t, p) < b))
                ir_elem_set_f64(t, p, below);
        }
    }
}

static void uniform_int(IrElemType t, void *dst, int64_t n, int64_t a, int64_t b, uint64_t seed, uint64_t call)
{
    int bytes = ir_type_storage_bytes(t);
    bool is_unsigned = ir_type_is_unsigned_int(t);
    bool empty = is_unsigned ? !((uint64_t)a < (uint64_t)b) : !(a < b);
    uint64_t range = (uint64_t)b - (uint64_t)a;
    for (int64_t i = 0; i < n; i++) {
        uint64_t v = (uint64_t)a;
        if (!empty) {
            uint32_t w[4];
            rng_block(seed, call, (uint64_t)i, w);
            v += mul_high64(join64(w[0], w[1]), range);
        }
        char *p = (char *)dst + (size_t)i * (size_t)bytes;
        switch (bytes) {
        case 8: { uint64_t x = v; memcpy(p, &x, 8); break; }
        case 4: { uint32_t x = (uint32_t)v; memcpy(p, &x, 4); break; }
        case 2: { uint16_t x = (uint16_t)v; memcpy(p, &x, 2); break; }
        default: ir_elem_set_i64(t, p, (int64_t)v); break;
        }
    }
}

static void normal_float(IrElemType t, void *dst, int64_t n, double mean, double sd, uint64_t seed, uint64_t call)
{
    int bytes = ir_type_storage_bytes(t);
    for (int64_t i = 0; i < n; i++) {
        uint32_t w[4];
        rng_block(seed, call, (uint64_t)i, w);
        double u1 = (double)((join64(w[0], w[1]) >> 11) + 1) * 0x1p-53, u2 = unit_53(w[2], w[3]);
        double x = mean + sd * (sqrt(-2 * log(u1)) * cos(TWO_PI * u2));
        if (t == IR_TYPE_F64)
            ((double *)dst)[i] = x;
        else if (t == IR_TYPE_F32)
            ((float *)dst)[i] = (float)x;
        else
            ir_elem_set_f64(t, (char *)dst + (size_t)i * (size_t)bytes, x);
    }
}

/* rng(a, b), distribution=rng_uniform | rng_normal. */
bool eval_rng(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    const IrShape *s = instr->shape;
    const char *dist = instr->info->words[IR_WORD_DISTRIBUTION];
    bool normal = dist && strcmp(dist, "rng_normal") == 0;
    if (!normal && !(dist && strcmp(dist, "rng_uniform") == 0))
        return error_set(err, ERR_SHAPE, instr->info->loc, "rng: distribution=%s is not rng_uniform or rng_normal",
                         dist ? dist : "(missing)");
    if (!ir_shape_is_array(s) || instr->n_operands != 2)
        return error_set(err, ERR_SHAPE, instr->info->loc, "rng: expects (a, b) and an array result");
    for (int k = 0; k < 2; k++)
        if (!ir_shape_is_array(args[k]->shape) || args[k]->shape->rank != 0 || args[k]->shape->type != s->type)
            return error_set(err, ERR_SHAPE, instr->info->loc, "rng: operand %d %s is not a %s scalar", k,
                             ir_shape_str(args[k]->shape), ir_type_name(s->type));
    IrElemType t = s->type;
    bool is_float = ir_type_is_float(t), is_int = ir_type_is_int(t) || t == IR_TYPE_PRED;
    if (normal ? !is_float : !is_float && !is_int)
        return error_set(err, ERR_UNSUPPORTED, instr->info->loc, "rng: %s on %s", dist, ir_type_name(t));
    Value *v = value_new_array(s, err);
    if (!v)
        return false;
    int64_t n = ir_shape_elements(s);
    uint64_t seed = eval_rng_seed(it), call = eval_rng_next_call(it);
    if (normal)
        normal_float(t, v->data, n, ir_elem_get_f64(t, args[0]->data), ir_elem_get_f64(t, args[1]->data), seed, call);
    else if (is_float)
        uniform_float(t, v->data, n, ir_elem_get_f64(t, args[0]->data), ir_elem_get_f64(t, args[1]->data), seed, call);
    else
        uniform_int(t, v->data, n, ir_elem_get_i64(t, args[0]->data), ir_elem_get_i64(t, args[1]->data), seed, call);
    *out = v;
    return true;
}

/* rng-get-and-update-state, delta=N -> u64[2] (see rng_block). */
bool eval_rng_get_and_update_state(Interp *it, const IrInstr *instr, Value *const *args, Value **out,
                                   Error *err)
{
    (void)args;
    const IrShape *s = instr->shape;
    if (!ir_shape_is_array(s) || s->type != IR_TYPE_U64 || s->rank != 1 || s->dims[0] != 2)
        return error_set(err, ERR_SHAPE, instr->info->loc, "rng-get-and-update-state: result %s is not u64[2]",
                         ir_shape_str(s));
    Value *v = value_new_array(s, err);
    if (!v)
        return false;
    uint32_t w[4];
    rng_block(eval_rng_seed(it), eval_rng_next_call(it), 0, w);
    uint64_t *state = v->data;
    state[0] = join64(w[0], w[1]);
    state[1] = join64(w[2], w[3]);
    *out = v;
    return true;
}

/* ------------------------------------------------------------------ */
/* stochastic-convert                                                   */

/* One element, as XLA's evaluator rounds it: x (exactly, as a double) to a
 * signed integer in [lo, hi] using rnd, an unsigned number of rbits bits
 * (the operand's width).  lo_lim and hi_lim are lo and hi converted to the
 * operand's type (2^(bits-1) where hi is not representable, inf or NaN where
 * the type cannot reach them).  -0 counts as negative; NaN gives 0; +-inf
 * and values at or beyond the limits saturate.  The magnitude's fraction f
 * rounds up when rnd < floor(f 2^rbits): with rnd uniform that happens with
 * probability f (to within 2^-rbits).  A negative value in (lo, -hi) whose
 * magnitude rounds up past hi gives lo. */
static int64_t stochastic_round(double x, uint64_t rnd, int rbits, int64_t lo, int64_t hi, double lo_lim,
                                double hi_lim)
{
    bool neg = signbit(x) != 0;
    if (isinf(x))
        return neg ? lo : hi;
    if (isnan(x))
        return 0;
    if (x >= hi_lim)
        return hi;
    if (x <= lo_lim)
        return lo;
    double m = fabs(x);
    int64_t t = (int64_t)m;             /* m < 2^(bits-1): the limits keep it in range */
    double frac = m - (double)t;        /* exact */
    if (frac != 0 && rnd < (uint64_t)ldexp(frac, rbits)) {
        if (t == hi)
            return lo;
        t++;
    }
    return neg ? -t : t;
}

/* Element i of a float array as a double (exact). */
static double float_elem(IrElemType t, const void *p, int64_t i)
{
    switch ((int)t) {      /* partial: float types only */
    case IR_TYPE_F64: return ((const double *)p)[i];
    case IR_TYPE_F32: return ((const float *)p)[i];
    case IR_TYPE_F16: return ir_f16_to_f32(((const uint16_t *)p)[i]);
    case IR_TYPE_BF16: return ir_bf16_to_f32(((const uint16_t *)p)[i]);
    default: return ir_f8_to_f64(t, ((const uint8_t *)p)[i]);
    }
}

static uint64_t unsigned_elem(IrElemType t, const void *p, int64_t i)
{
    switch (ir_type_storage_bytes(t)) {
    case 8: return ((const uint64_t *)p)[i];
    case 4: return ((const uint32_t *)p)[i];
    case 2: return ((const uint16_t *)p)[i];
    default: return (uint64_t)ir_elem_get_i64(t, (const uint8_t *)p + i);
    }
}

/* A value of signed integer type t's range (lo, hi) in float type f. */
static double limit_in(IrElemType f, int64_t v)
{
    uint64_t bits = 0;
    ir_elem_set_f64(f, &bits, (double)v);       /* nearest even; overflow: inf, or NaN where none */
    return ir_elem_get_f64(f, &bits);
}

bool eval_stochastic_convert(Interp *it, const IrInstr *instr, Value *const *args, Value **out, Error *err)
{
    (void)it;
    IrElemType from = args[0]->shape->type, rt = args[1]->shape->type, to = instr->shape->type;
    int64_t n = ir_shape_elements(instr->shape);
    if (!ir_shape_is_array(args[0]->shape) || !ir_shape_is_array(args[1]->shape) ||
        !ir_shape_is_array(instr->shape) || value_elements(args[0]) != n || value_elements(args[1]) != n ||
        !ir_type_is_float(from) || !ir_type_is_unsigned_int(rt) ||
        ir_type_info[rt].bits != ir_type_info[from].bits)
        return error_set(err, ERR_SHAPE, instr->info->loc, "stochastic-convert: operand %s, random bits %s",
                         ir_shape_str(args[0]->shape), ir_shape_str(args[1]->shape));
    if (!ir_type_is_signed_int(to))
        return error_set(err, ERR_UNSUPPORTED, instr->info->loc,
                         "unsupported op: stochastic-convert from %s to %s (XLA implements only float to "
                         "signed integer)", ir_type_name(from), ir_type_name(to));
    int bits = ir_type_info[to].bits, rbits = ir_type_info[rt].bits;
    int64_t hi = (int64_t)((UINT64_C(1) << (bits - 1)) - 1), lo = -hi - 1;
    double hi_lim = limit_in(from, hi), lo_lim = limit_in(from, lo);
    Value *v = value_new_array(instr->shape, err);
    if (!v)
        return false;
    const void *x = args[0]->data, *r = args[1]->data;
    for (int64_t i = 0; i < n; i++) {
        int64_t y = stochastic_round(float_elem(from, x, i), unsigned_elem(rt, r, i), rbits, lo, hi, lo_lim, hi_lim);
        switch (bits) {
        case 64: ((int64_t *)v->data)[i] = y; break;
        case 32: ((int32_t *)v->data)[i] = (int32_t)y; break;
        case 16: ((int16_t *)v->data)[i] = (int16_t)y; break;
        case 8: ((int8_t *)v->data)[i] = (int8_t)y; break;
        default: ir_elem_set_i64(to, (int8_t *)v->data + i, y); break;
        }
    }
    *out = v;
    return true;
}
