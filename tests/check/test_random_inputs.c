/* test_random_inputs.c: seeded inputs (src/check/random_inputs.c).  The
 * golden values were computed by an independent Python reimplementation of
 * the derivation documented at the top of random_inputs.c, so they pin both
 * the code and its documentation.  The reimplementation (python3):
 *
 *   import struct
 *   M, G = (1 << 64) - 1, 0x9E3779B97F4A7C15
 *   def mix(z):
 *       z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
 *       z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
 *       return z ^ (z >> 31)
 *   def sm(x): return mix((x + G) & M)
 *   def rotl(x, k): return ((x << k) | (x >> (64 - k))) & M
 *   def stream(seed, rank, param):
 *       key = sm(sm(sm(seed) ^ rank) ^ param)
 *       s = [sm((key + i * G) & M) for i in range(4)]
 *       while True:
 *           r = (rotl((s[1] * 5) & M, 7) * 9) & M
 *           t = (s[1] << 17) & M
 *           s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3]
 *           s[2] ^= t; s[3] = rotl(s[3], 45)
 *           yield r
 *   g = stream(0, 0, 0)
 *   u = [2 * ((next(g) >> 11) * 2.0**-53) - 1 for _ in range(4)]     # f64 uniform
 *   print([hex(struct.unpack('<I', struct.pack('<f', x))[0]) for x in u])  # f32: rounded
 *   g = stream(7, 1, 2)
 *   print([-8 + (((next(g) >> 32) * 17) >> 32) for _ in range(8)])   # s32 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "check.h"
#include "parallel.h"

#include <math.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Helpers                                                              */

static IrModule *parse(const char *text)
{
    Error err = { .code = ERR_OK };
    IrModule *m = ir_parse_module(text, strlen(text), "test.hlo", &err);
    if (!m)
        fail_msg("parse failed: %s", err.msg);
    return m;
}

static Value *draw(const IrModule *m, int param, int rank, uint64_t seed, CheckDist dist)
{
    Error err = { .code = ERR_OK };
    Value *v = check_random_input(m, param, rank, seed, dist, &err);
    if (!v)
        fail_msg("check_random_input failed: %s", err.msg);
    return v;
}

/* One parameter of the given shape text, e.g. "f32[4096]". */
static IrModule *module_with_param(const char *shape)
{
    char text[512];
    snprintf(text, sizeof text,
             "HloModule m\n\nENTRY %%main (p0: %s) -> %s {\n"
             "  ROOT %%p0 = %s parameter(0)\n}\n",
             shape, shape, shape);
    return parse(text);
}

static double elem(const Value *v, int64_t i)
{
    IrElemType t = v->shape->type;
    return ir_elem_get_f64(t, (const char *)v->data + i * ir_type_storage_bytes(t));
}

static uint32_t f32_bits_at(const Value *v, int i)
{
    uint32_t u;
    memcpy(&u, (const char *)v->data + 4 * i, 4);
    return u;
}

static const char two_params[] =
    "HloModule m\n\nENTRY %main (a: f32[64], b: f32[64]) -> f32[64] {\n"
    "  %a = f32[64] parameter(0)\n"
    "  %b = f32[64] parameter(1)\n"
    "  ROOT %s = f32[64] add(f32[64] %a, f32[64] %b)\n}\n";

/* ------------------------------------------------------------------ */
/* Streams                                                              */

static void test_same_key_gives_identical_bits(void **state)
{
    (void)state;
    IrModule *m = parse(two_params);
    for (int d = 0; d < 4; d++) {
        Value *a = draw(m, 1, 3, 12345, (CheckDist)d);
        Value *b = draw(m, 1, 3, 12345, (CheckDist)d);
        assert_true(value_bits_equal(a, b));
        value_release(a);
        value_release(b);
    }
    ir_module_free(m);
}

static void test_rank_param_and_seed_change_the_values(void **state)
{
    (void)state;
    IrModule *m = parse(two_params);
    Value *base = draw(m, 0, 0, 1, CHECK_DIST_UNIFORM);
    Value *other_param = draw(m, 1, 0, 1, CHECK_DIST_UNIFORM);
    Value *other_rank = draw(m, 0, 1, 1, CHECK_DIST_UNIFORM);
    Value *other_seed = draw(m, 0, 0, 2, CHECK_DIST_UNIFORM);
    assert_memory_not_equal(base->data, other_param->data, 256);
    assert_memory_not_equal(base->data, other_rank->data, 256);
    assert_memory_not_equal(base->data, other_seed->data, 256);
    assert_memory_not_equal(other_param->data, other_rank->data, 256);
    value_release(base);
    value_release(other_param);
    value_release(other_rank);
    value_release(other_seed);
    ir_module_free(m);
}

static void test_check_random_inputs_fills_every_parameter(void **state)
{
    (void)state;
    IrModule *m = parse(two_params);
    Value *out[2];
    Error err = { .code = ERR_OK };
    assert_true(check_random_inputs(m, 2, 9, CHECK_DIST_NORMAL, out, &err));
    for (int p = 0; p < 2; p++) {
        Value *one = draw(m, p, 2, 9, CHECK_DIST_NORMAL);
        assert_true(value_bits_equal(out[p], one));
        value_release(one);
        value_release(out[p]);
    }
    ir_module_free(m);
}

/* seed 0, rank 0, param 0, f32 uniform: from the Python in the file comment. */
static void test_golden_first_f32_uniform_values(void **state)
{
    (void)state;
    static const uint32_t golden[4] = { 0x3da21cd3, 0x3e6283f1, 0x3f06ec77, 0xbf5f871a };
    IrModule *m = module_with_param("f32[4]");
    Value *v = draw(m, 0, 0, 0, CHECK_DIST_UNIFORM);
    for (int i = 0; i < 4; i++)
        assert_int_equal(f32_bits_at(v, i), golden[i]);
    value_release(v);
    ir_module_free(m);
}

static void test_golden_f64_uniform_and_s32_values(void **state)
{
    (void)state;
    static const double golden_f64[4] = { 0.0791565424916929, 0.2212064350683134, 0.527045668361622,
                                          -0.8731552604601895 };
    static const int golden_s32[8] = { -2, 8, 7, -4, -7, 8, -5, -3 };   /* seed 7, rank 1, param 2 */
    IrModule *m = module_with_param("f64[4]");
    Value *v = draw(m, 0, 0, 0, CHECK_DIST_UNIFORM);
    for (int i = 0; i < 4; i++)
        assert_true(elem(v, i) == golden_f64[i]);
    value_release(v);
    ir_module_free(m);
    m = parse("HloModule m\n\nENTRY %main (a: s32[1], b: s32[1], c: s32[8]) -> s32[8] {\n"
              "  %a = s32[1] parameter(0)\n  %b = s32[1] parameter(1)\n"
              "  ROOT %c = s32[8] parameter(2)\n}\n");
    v = draw(m, 2, 1, 7, CHECK_DIST_UNIFORM);
    for (int i = 0; i < 8; i++)
        assert_int_equal(((const int32_t *)v->data)[i], golden_s32[i]);
    value_release(v);
    ir_module_free(m);
}

/* A tuple parameter fills its leaves in order from the parameter's stream. */
static void test_tuple_leaves_share_one_stream(void **state)
{
    (void)state;
    static const uint32_t golden[4] = { 0x3da21cd3, 0x3e6283f1, 0x3f06ec77, 0xbf5f871a };
    IrModule *m = module_with_param("(f32[2], f32[2])");
    Value *v = draw(m, 0, 0, 0, CHECK_DIST_UNIFORM);
    assert_int_equal(v->n_elements, 2);
    for (int i = 0; i < 4; i++)
        assert_int_equal(f32_bits_at(v->elements[i / 2], i % 2), golden[i]);
    value_release(v);
    ir_module_free(m);
}

/* A long uniform draw splits across the interpreter's threads, each chunk
 * jumping ahead in the stream (random_inputs.c): the bits must be the
 * sequential stream's at any count, for lengths at and around the split
 * threshold and chunk edges, every float type, and a tuple whose second
 * leaf continues where the long first one left off.  The first four f32
 * values are the golden ones above, so the 1-thread draw is the stream. */
static void test_long_uniform_draws_split_across_threads_keep_the_stream(void **state)
{
    (void)state;
    static const char *const shapes[] = {
        "f32[262144]", "f32[262145]", "f32[1000003]", "f64[300007]", "bf16[524289]", "f16[400000]",
        "(f32[300001], f32[5])",
    };
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        IrModule *m = module_with_param(shapes[k]);
        interp_set_threads(1);
        Value *one = draw(m, 0, 0, 0, CHECK_DIST_UNIFORM);
        if (k == 0)
            for (int i = 0; i < 4; i++)
                assert_int_equal(f32_bits_at(one, i), ((const uint32_t[]){ 0x3da21cd3, 0x3e6283f1, 0x3f06ec77,
                                                                          0xbf5f871a })[i]);
        for (int t = 2; t <= 3; t++) {
            interp_set_threads(t);
            Value *split = draw(m, 0, 0, 0, CHECK_DIST_UNIFORM);
            if (!value_bits_equal(one, split))
                fail_msg("%s: %d threads draw other bits than 1", shapes[k], t);
            value_release(split);
        }
        interp_set_threads(1);
        value_release(one);
        ir_module_free(m);
    }
}

/* ------------------------------------------------------------------ */
/* Distributions                                                        */

static void test_uniform_floats_lie_in_minus_one_to_one(void **state)
{
    (void)state;
    static const char *const shapes[] = { "f32[4096]", "f64[4096]", "bf16[4096]", "f16[4096]",
                                          "f8e4m3fn[4096]", "f8e5m2[4096]" };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        IrModule *m = module_with_param(shapes[s]);
        Value *v = draw(m, 0, 0, 5, CHECK_DIST_UNIFORM);
        double lo = 1, hi = -1, sum = 0;
        for (int64_t i = 0; i < 4096; i++) {
            double x = elem(v, i);
            assert_true(x >= -1.0 && x < 1.0);
            lo = fmin(lo, x);
            hi = fmax(hi, x);
            sum += x;
        }
        assert_true(lo < -0.8 && hi > 0.8);      /* f8e5m2 tops out at 0.875 */
        assert_true(fabs(sum / 4096) < 0.1);
        value_release(v);
        ir_module_free(m);
    }
}

/* The narrow types draw the same stream as f64 and round each value to
 * nearest even, a +1 wrapping to -1 (the documented derivation): element i
 * of each is element i of the f64 draw, rounded. */
static void test_uniform_narrow_floats_round_the_f64_stream(void **state)
{
    (void)state;
    enum { N = 1 << 16 };
    char shape[32];
    snprintf(shape, sizeof shape, "f64[%d]", N);
    IrModule *m64 = module_with_param(shape);
    Value *v64 = draw(m64, 0, 3, 21, CHECK_DIST_UNIFORM);
    const double *d = v64->data;
    static const char *const types[] = { "f32", "bf16", "f16" };
    for (int t = 0; t < 3; t++) {
        snprintf(shape, sizeof shape, "%s[%d]", types[t], N);
        IrModule *m = module_with_param(shape);
        Value *v = draw(m, 0, 3, 21, CHECK_DIST_UNIFORM);
        for (int i = 0; i < N; i++) {
            double want;
            if (t == 0)
                want = (float)d[i];
            else if (t == 1)
                want = ir_bf16_to_f32(ir_f64_to_bf16(d[i]));
            else
                want = ir_f16_to_f32(ir_f64_to_f16(d[i]));
            if (want >= 1.0)
                want = -1.0;
            if (elem(v, i) != want)
                fail_msg("%s element %d: got %.9g, want %.9g (from %.17g)", types[t], i, elem(v, i), want, d[i]);
        }
        value_release(v);
        ir_module_free(m);
    }
    value_release(v64);
    ir_module_free(m64);
}

static void test_normal_has_mean_zero_and_unit_variance(void **state)
{
    (void)state;
    IrModule *m = module_with_param("f64[20000]");
    Value *v = draw(m, 0, 0, 11, CHECK_DIST_NORMAL);
    double sum = 0, sq = 0;
    for (int64_t i = 0; i < 20000; i++) {
        double x = elem(v, i);
        assert_true(isfinite(x));
        sum += x;
        sq += x * x;
    }
    double mean = sum / 20000, var = sq / 20000 - mean * mean;
    assert_true(fabs(mean) < 0.05);
    assert_true(fabs(var - 1.0) < 0.05);
    value_release(v);
    ir_module_free(m);
}

static void test_wide_spans_many_binades_and_stays_finite(void **state)
{
    (void)state;
    static const char *const shapes[] = { "f32[4096]", "bf16[4096]", "f16[4096]", "f8e4m3fn[4096]",
                                          "f8e5m2[4096]" };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        IrModule *m = module_with_param(shapes[s]);
        Value *v = draw(m, 0, 0, 3, CHECK_DIST_WIDE);
        int emin = 1000, emax = -1000;
        bool negative = false, positive = false;
        for (int64_t i = 0; i < 4096; i++) {
            double x = elem(v, i);
            assert_true(isfinite(x) && x != 0);
            int e;
            frexp(x, &e);
            emin = e < emin ? e : emin;
            emax = e > emax ? e : emax;
            negative |= x < 0;
            positive |= x > 0;
        }
        assert_true(negative && positive);
        assert_true(emax - emin >= 8);      /* f8e4m3fn has the narrowest range: [-6, 7] */
        value_release(v);
        ir_module_free(m);
    }
}

static void test_special_mixes_nan_inf_zeros_and_subnormals(void **state)
{
    (void)state;
    IrModule *m = module_with_param("f32[4096]");
    Value *v = draw(m, 0, 0, 0, CHECK_DIST_SPECIAL);
    int nan = 0, inf = 0, neg_zero = 0, subnormal = 0, tie = 0, ordinary = 0;
    for (int64_t i = 0; i < 4096; i++) {
        double x = elem(v, i);
        nan += isnan(x) != 0;
        inf += isinf(x) != 0;
        neg_zero += x == 0 && signbit(x) != 0;
        subnormal += x != 0 && fabs(x) < 0x1p-126;
        tie += fabs(x) == 1.0 + 0x1p-8 || fabs(x) == 1.0 + 3 * 0x1p-8;
        ordinary += fabs(x) < 1.0 && x != 0 && fabs(x) >= 0x1p-126;
    }
    assert_true(nan > 0 && inf > 0 && neg_zero > 0 && subnormal > 0 && tie > 0);
    assert_true(ordinary > 2048 && ordinary < 3584);     /* about 3 in 4 */
    value_release(v);
    ir_module_free(m);
    m = module_with_param("f8e4m3fn[512]");
    v = draw(m, 0, 0, 0, CHECK_DIST_SPECIAL);
    nan = 0;
    for (int64_t i = 0; i < 512; i++)
        nan += isnan(elem(v, i)) != 0;
    assert_true(nan > 0);
    value_release(v);
    ir_module_free(m);
}

/* The boundary kinds beyond their leading tables (elements 16 on): what
 * their draws promise, on a long parameter. */
static void test_boundary_kinds_draw_past_their_tables(void **state)
{
    (void)state;
    IrModule *m = module_with_param("f32[4096]");
    Value *v = draw(m, 0, 0, 0, CHECK_DIST_EDGES);
    int nan = 0, neg_zero = 0;
    for (int64_t i = 16; i < 4096; i++) {
        double x = elem(v, i);
        nan += isnan(x) != 0;
        neg_zero += x == 0 && signbit(x);
    }
    assert_true(nan > 4096 / 16 && neg_zero > 4096 / 16);     /* one in eight each */
    value_release(v);
    v = draw(m, 0, 0, 0, CHECK_DIST_SMALL);
    int halves = 0;
    for (int64_t i = 16; i < 4096; i++) {
        double x = elem(v, i) * 2;
        halves += x == floor(x) && fmod(fabs(x), 2) == 1;
    }
    assert_true(halves > 4096 / 8);
    value_release(v);
    ir_module_free(m);
    /* Integers: shift counts at and past the width, the unsigned maximum. */
    static const char *const ints[] = { "s32[4096]", "u8[4096]", "u64[4096]", "s8[4096]" };
    static const int bits[] = { 32, 8, 64, 8 };
    for (int k = 0; k < 4; k++) {
        m = module_with_param(ints[k]);
        v = draw(m, 0, 0, 0, CHECK_DIST_SMALL);
        int width = 0, past = 0;
        for (int64_t i = 16; i < 4096; i++) {
            int64_t x = ir_elem_get_i64(v->shape->type, (const char *)v->data + i * ir_type_storage_bytes(v->shape->type));
            width += x == bits[k];
            past += x == bits[k] + 1;
        }
        if (bits[k] + 1 <= 127)
            assert_true(width > 0 && past > 0);
        value_release(v);
        v = draw(m, 0, 0, 0, CHECK_DIST_EXTREME);
        IrElemType t = v->shape->type;
        size_t es = (size_t)ir_type_storage_bytes(t);
        int at_max = 0, at_min = 0;
        for (int64_t i = 16; i < 4096; i++) {
            uint64_t u = 0;
            memcpy(&u, (const char *)v->data + (size_t)i * es, es);
            uint64_t top = es == 8 ? UINT64_MAX : ((uint64_t)1 << (8 * es)) - 1;
            if (ir_type_is_signed_int(t)) {
                at_max += u == top >> 1;
                at_min += u == (top >> 1) + 1;
            } else {
                at_max += u == top;
                at_min += u == 0;
            }
        }
        assert_true(at_max > 0 && at_min > 0);
        value_release(v);
        ir_module_free(m);
    }
}

static void test_integers_cover_a_small_range(void **state)
{
    (void)state;
    static const struct { const char *shape; int lo, hi; } cases[] = {
        { "s32[2000]", -8, 8 }, { "s64[2000]", -8, 8 }, { "s8[2000]", -8, 8 },
        { "u8[2000]", 0, 16 },  { "u32[2000]", 0, 16 }, { "s4[2000]", -8, 7 },
        { "u2[2000]", 0, 3 },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        IrModule *m = module_with_param(cases[c].shape);
        Value *v = draw(m, 0, 1, 2, CHECK_DIST_WIDE);
        bool seen_lo = false, seen_hi = false;
        for (int64_t i = 0; i < 2000; i++) {
            IrElemType t = v->shape->type;
            int64_t x = ir_elem_get_i64(t, (const char *)v->data + i * ir_type_storage_bytes(t));
            assert_true(x >= cases[c].lo && x <= cases[c].hi);
            seen_lo |= x == cases[c].lo;
            seen_hi |= x == cases[c].hi;
        }
        assert_true(seen_lo && seen_hi);
        value_release(v);
        ir_module_free(m);
    }
}

static void test_pred_is_a_fair_coin(void **state)
{
    (void)state;
    IrModule *m = module_with_param("pred[1000]");
    Value *v = draw(m, 0, 0, 4, CHECK_DIST_UNIFORM);
    int ones = 0;
    for (int i = 0; i < 1000; i++) {
        unsigned char b = ((const unsigned char *)v->data)[i];
        assert_true(b == 0 || b == 1);
        ones += b;
    }
    assert_true(ones > 400 && ones < 600);
    value_release(v);
    ir_module_free(m);
}

static void test_complex_fills_both_parts(void **state)
{
    (void)state;
    IrModule *m = module_with_param("c64[16]");
    Value *v = draw(m, 0, 0, 0, CHECK_DIST_UNIFORM);
    static const uint32_t golden[4] = { 0x3da21cd3, 0x3e6283f1, 0x3f06ec77, 0xbf5f871a };
    for (int i = 0; i < 4; i++)      /* re0, im0, re1, im1 */
        assert_int_equal(f32_bits_at(v, i), golden[i]);
    value_release(v);
    ir_module_free(m);
}

/* ------------------------------------------------------------------ */
/* Index parameters                                                     */

static const char index_module[] =
    "HloModule m\n\nENTRY %main (x: f32[10,6], i: s32[], j: s32[], u: f32[2], k: u32[]) -> (f32[3,6], f32[10]) {\n"
    "  %x = f32[10,6] parameter(0)\n"
    "  %i = s32[] parameter(1)\n"
    "  %j = s32[] parameter(2)\n"
    "  %ds = f32[3,6] dynamic-slice(f32[10,6] %x, s32[] %i, s32[] %j), dynamic_slice_sizes={3,6}\n"
    "  %u = f32[2] parameter(3)\n"
    "  %k = u32[] parameter(4)\n"
    "  %c = f32[] constant(0)\n"
    "  %z = f32[10] broadcast(f32[] %c), dimensions={}\n"
    "  %dus = f32[10] dynamic-update-slice(f32[10] %z, f32[2] %u, u32[] %k)\n"
    "  ROOT %t = (f32[3,6], f32[10]) tuple(%ds, %dus)\n}\n";

static int64_t scalar_int(const Value *v)
{
    return ir_elem_get_i64(v->shape->type, v->data);
}

static void test_index_parameters_land_in_and_out_of_range(void **state)
{
    (void)state;
    IrModule *m = parse(index_module);
    int in_i = 0, below_i = 0, above_i = 0, zero_j = 0, off_j = 0, in_k = 0, above_k = 0;
    for (uint64_t seed = 0; seed < 64; seed++) {
        Value *i = draw(m, 1, 0, seed, CHECK_DIST_UNIFORM);
        Value *j = draw(m, 2, 0, seed, CHECK_DIST_UNIFORM);
        Value *k = draw(m, 4, 1, seed, CHECK_DIST_UNIFORM);
        int64_t vi = scalar_int(i), vj = scalar_int(j), vk = scalar_int(k);
        in_i += vi >= 0 && vi <= 7;         /* dim 10, size 3 */
        below_i += vi < 0;
        above_i += vi > 7;
        assert_true(vi >= -4 && vi <= 11);
        zero_j += vj == 0;                  /* dim 6, size 6: only 0 is in range */
        off_j += vj != 0;
        in_k += vk <= 8;                    /* dim 10, size 2; unsigned: never below */
        above_k += vk > 8;
        assert_true(vk <= 12);
        value_release(i);
        value_release(j);
        value_release(k);
    }
    assert_true(in_i > 16 && below_i > 4 && above_i > 4);
    assert_true(zero_j > 16 && off_j > 16);
    assert_true(in_k > 16 && above_k > 16);
    ir_module_free(m);
}

/* A scalar integer parameter that is not an index keeps the small range. */
static void test_non_index_scalars_are_ordinary_integers(void **state)
{
    (void)state;
    IrModule *m = module_with_param("s32[]");
    for (uint64_t seed = 0; seed < 32; seed++) {
        Value *v = draw(m, 0, 0, seed, CHECK_DIST_UNIFORM);
        assert_true(scalar_int(v) >= -8 && scalar_int(v) <= 8);
        value_release(v);
    }
    ir_module_free(m);
}

/* ------------------------------------------------------------------ */
/* Errors and names                                                     */

static void test_dynamic_shapes_are_unsupported(void **state)
{
    (void)state;
    IrModule *m = module_with_param("f32[<=8]");
    Error err = { .code = ERR_OK };
    assert_null(check_random_input(m, 0, 0, 0, CHECK_DIST_UNIFORM, &err));
    assert_int_equal(err.code, ERR_UNSUPPORTED);
    assert_int_equal(err.loc.line, 4);
    ir_module_free(m);
}

static void test_bad_parameter_number_is_an_error(void **state)
{
    (void)state;
    IrModule *m = module_with_param("f32[2]");
    Error err = { .code = ERR_OK };
    assert_null(check_random_input(m, 1, 0, 0, CHECK_DIST_UNIFORM, &err));
    assert_int_equal(err.code, ERR_INTERNAL);
    ir_module_free(m);
}

static void test_dist_names_round_trip(void **state)
{
    (void)state;
    static const char *const names[] = { "uniform", "normal", "wide", "special", "copies",
                                         "pairs",   "edges",  "small", "extreme", "mixed" };
    for (int i = 0; i < 10; i++) {
        CheckDist d;
        assert_true(check_dist_from_name(names[i], &d));
        assert_string_equal(check_dist_name(d), names[i]);
    }
    CheckDist d = CHECK_DIST_WIDE;
    assert_false(check_dist_from_name("gaussian", &d));
    assert_false(check_dist_from_name("", &d));
    assert_int_equal(d, CHECK_DIST_WIDE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_key_gives_identical_bits),
        cmocka_unit_test(test_rank_param_and_seed_change_the_values),
        cmocka_unit_test(test_check_random_inputs_fills_every_parameter),
        cmocka_unit_test(test_golden_first_f32_uniform_values),
        cmocka_unit_test(test_golden_f64_uniform_and_s32_values),
        cmocka_unit_test(test_uniform_narrow_floats_round_the_f64_stream),
        cmocka_unit_test(test_tuple_leaves_share_one_stream),
        cmocka_unit_test(test_long_uniform_draws_split_across_threads_keep_the_stream),
        cmocka_unit_test(test_uniform_floats_lie_in_minus_one_to_one),
        cmocka_unit_test(test_normal_has_mean_zero_and_unit_variance),
        cmocka_unit_test(test_wide_spans_many_binades_and_stays_finite),
        cmocka_unit_test(test_special_mixes_nan_inf_zeros_and_subnormals),
        cmocka_unit_test(test_boundary_kinds_draw_past_their_tables),
        cmocka_unit_test(test_integers_cover_a_small_range),
        cmocka_unit_test(test_pred_is_a_fair_coin),
        cmocka_unit_test(test_complex_fills_both_parts),
        cmocka_unit_test(test_index_parameters_land_in_and_out_of_range),
        cmocka_unit_test(test_non_index_scalars_are_ordinary_integers),
        cmocka_unit_test(test_dynamic_shapes_are_unsupported),
        cmocka_unit_test(test_bad_parameter_number_is_an_error),
        cmocka_unit_test(test_dist_names_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
