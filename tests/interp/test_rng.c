/* test_rng.c: rng-bit-generator, rng, rng-get-and-update-state and
 * stochastic-convert (src/interp/eval_rng.c).
 *
 * The block functions are checked against the known-answer vectors of
 * Random123 (tests/kat_vectors: threefry2x32 with 20 rounds, philox4x32
 * with 10), through the op itself, so the mapping of XLA's u64 state onto
 * key and counter is checked with them.  One output of XLA:CPU itself (a
 * three-fry u32[3,2] from state {0, 0}, printed to 5 digits by the anvil R
 * package's documentation) pins the output layout.  The rest checks the
 * streams' structure by relations between runs (the 32-bit layout against
 * the 64-bit stream of the same state, a 2-word against a 3-word philox
 * state, counter carries), so no expected value comes from running the
 * code under test alone.  stochastic-convert's expectations are worked by
 * hand from XLA's evaluator rule. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "interp_test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Helpers                                                              */

typedef struct Run {
    IrModule *m;
    Interp *it;
    Value *out;
    Error err;
} Run;

/* Parses, verifies and prepares text with the given rng seed. */
static bool load(Run *r, const char *text, uint64_t seed)
{
    memset(r, 0, sizeof *r);
    r->m = ir_parse_module(text, strlen(text), "test.hlo", &r->err);
    if (!r->m || !ir_verify_module(r->m, &r->err))
        return false;
    InterpOptions opt = { .rng_seed = seed };
    r->it = interp_new(r->m, &opt, &r->err);
    return r->it != NULL;
}

/* Runs the loaded entry on params (row-major data per parameter). */
static bool run(Run *r, const void *const *params)
{
    const IrComputation *entry = r->m->entry;
    Value *args[8];
    for (int i = 0; i < entry->n_params && i < 8; i++) {
        args[i] = value_new_array(entry->params[i]->shape, &r->err);
        memcpy(args[i]->data, params[i], value_bytes(args[i]));
    }
    value_release(r->out);
    r->out = NULL;
    return interp_run(r->it, args, entry->n_params, &r->out, &r->err);
}

static Value *run_ok(Run *r, const char *text, uint64_t seed, const void *const *params)
{
    if (!load(r, text, seed) || !run(r, params)) {
        error_print(&r->err, stderr);
        fail_msg("module failed: %s", r->err.msg);
    }
    return r->out;
}

static void run_free(Run *r)
{
    value_release(r->out);
    interp_free(r->it);
    ir_module_free(r->m);
    memset(r, 0, sizeof *r);
}

/* The first error line of text (parse + verify + run), or "" when it runs. */
static const char *first_error(const char *text, const void *const *params, ErrCode *code)
{
    static char msg[600];
    Run r;
    bool ok = load(&r, text, 0) && run(&r, params);
    snprintf(msg, sizeof msg, "%s", ok ? "" : r.err.msg);
    if (code)
        *code = ok ? ERR_OK : r.err.code;
    run_free(&r);
    return msg;
}

static void expect_error(const char *text, const void *const *params, ErrCode code, const char *part)
{
    ErrCode got;
    const char *msg = first_error(text, params, &got);
    if (got != code || !strstr(msg, part))
        fail_msg("expected error %d containing \"%s\", got %d: \"%s\"", code, part, got, msg);
}

/* rng-bit-generator(state) with state of n_state words and bits of type
 * `type` and dims `dims` (e.g. "3,2"); the result tuple stays in r. */
static Value *bitgen(Run *r, const char *alg, const uint64_t *state, int n_state, const char *type, const char *dims)
{
    char text[1024];
    snprintf(text, sizeof text,
             "HloModule t\n\nENTRY %%main (s: u64[%d]) -> (u64[%d], %s[%s]) {\n"
             "  %%s = u64[%d] parameter(0)\n"
             "  ROOT %%r = (u64[%d], %s[%s]) rng-bit-generator(u64[%d] %%s), algorithm=%s\n}\n",
             n_state, n_state, type, dims, n_state, n_state, type, dims, n_state, alg);
    const void *params[] = { state };
    Value *v = run_ok(r, text, 0, params);
    assert_int_equal(v->n_elements, 2);
    return v;
}

static const uint64_t *state_of(const Value *v)
{
    return v->elements[0]->data;
}

static const void *bits_of(const Value *v)
{
    return v->elements[1]->data;
}

static uint64_t join(uint32_t lo, uint32_t hi)
{
    return (uint64_t)lo | (uint64_t)hi << 32;
}

/* ------------------------------------------------------------------ */
/* Known answers (Random123 tests/kat_vectors)                          */

/* threefry2x32 20 <ctr0 ctr1> <key0 key1> -> <out0 out1>.  XLA's three fry
 * takes the key from state[0] and the counter from state[1], low word
 * first; a u64 output is out0 | out1 << 32. */
static void test_threefry_known_answers(void **unused)
{
    (void)unused;
    static const uint32_t kat[3][6] = {
        { 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x6b200159, 0x99ba4efe },
        { 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x1cb996fc, 0xbb002be7 },
        { 0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xc4923a9c, 0x483df7a0 },
    };
    for (int k = 0; k < 3; k++) {
        uint64_t state[2] = { join(kat[k][2], kat[k][3]), join(kat[k][0], kat[k][1]) };
        Run r;
        Value *v = bitgen(&r, "rng_three_fry", state, 2, "u64", "1");
        assert_true(((const uint64_t *)bits_of(v))[0] == join(kat[k][4], kat[k][5]));
        assert_true(state_of(v)[0] == state[0]);
        assert_true(state_of(v)[1] == state[1] + 1);
        run_free(&r);
    }
}

/* philox4x32 10 <ctr0..3> <key0 key1> -> <out0..3>.  With a u64[3] state
 * the key is state[0] and the 128-bit counter state[1] (low), state[2]
 * (high); u32[4] is one block, word e at element e. */
static void test_philox_known_answers(void **unused)
{
    (void)unused;
    static const uint32_t kat[3][10] = {
        { 0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8 },
        { 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff,
          0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd },
        { 0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0,
          0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1 },
    };
    for (int k = 0; k < 3; k++) {
        uint64_t state[3] = { join(kat[k][4], kat[k][5]), join(kat[k][0], kat[k][1]), join(kat[k][2], kat[k][3]) };
        Run r;
        Value *v = bitgen(&r, "rng_philox", state, 3, "u32", "4");
        const uint32_t *w = bits_of(v);
        for (int e = 0; e < 4; e++)
            assert_true(w[e] == kat[k][6 + e]);
        /* One block: the 128-bit counter advances by one (with the carry
         * out of the low word for the all-ones vector). */
        uint64_t lo = state[1] + 1, hi = state[2] + (lo == 0);
        assert_true(state_of(v)[1] == lo && state_of(v)[2] == hi && state_of(v)[0] == state[0]);
        run_free(&r);
    }
}

/* What XLA:CPU printed for rng_bit_generator(state {0, 0}, THREE_FRY,
 * u32[3,2]) (the anvil R package's example, 5 significant digits): rows
 * are counters 0, 1, 2 and columns the two words; the new state is {0, 3}. */
static void test_threefry_matches_an_xla_run(void **unused)
{
    (void)unused;
    static const double printed[6] = { 1.7973e+09, 2.5791e+09, 1.3515e+09, 3.2358e+09, 1.6886e+09, 4.2293e+09 };
    uint64_t state[2] = { 0, 0 };
    Run r;
    Value *v = bitgen(&r, "rng_three_fry", state, 2, "u32", "3,2");
    const uint32_t *w = bits_of(v);
    for (int i = 0; i < 6; i++) {
        double x = w[i], scale = pow(10, floor(log10(x)) - 4);
        if (fabs(round(x / scale) * scale - printed[i]) > 1e-6 * printed[i])
            fail_msg("element %d: %u does not print as %.4e", i, w[i], printed[i]);
    }
    assert_true(w[0] == 0x6b200159 && w[1] == 0x99ba4efe);     /* the zero known answer */
    assert_true(state_of(v)[0] == 0 && state_of(v)[1] == 3);
    run_free(&r);
}

/* ------------------------------------------------------------------ */
/* Stream structure                                                     */

/* The three-fry u32 layout of XLA's SplitShapeIntoHalves, derived here
 * independently: for each output element its block j (in the half shape)
 * and word.  Returns the number of blocks. */
static int64_t split_layout(const int64_t *dims, int rank, int64_t *block, int *word)
{
    if (rank == 0) {
        block[0] = 0;
        word[0] = 0;
        return 1;
    }
    int s = -1;
    for (int d = 0; d < rank && s < 0; d++)
        if (dims[d] % 2 == 0)
            s = d;
    if (s < 0) {
        s = 0;
        for (int d = 1; d < rank; d++)
            if (dims[d] > dims[s])
                s = d;
    }
    int64_t half[8], n = 1, blocks = 1;
    for (int d = 0; d < rank; d++) {
        half[d] = d == s ? (dims[d] + 1) / 2 : dims[d];
        n *= dims[d];
        blocks *= half[d];
    }
    for (int64_t e = 0; e < n; e++) {
        int64_t idx[8] = { 0 }, rest = e, j = 0;
        for (int d = rank - 1; d >= 0; d--) {
            idx[d] = rest % dims[d];
            rest /= dims[d];
        }
        word[e] = (int)(idx[s] % 2);
        idx[s] /= 2;
        for (int d = 0; d < rank; d++)
            j = j * half[d] + idx[d];
        block[e] = j;
    }
    return blocks;
}

/* The u32 three-fry output of every shape against the u64 output of the
 * same state, whose element j is block ctr + j (word 0 low). */
static void test_threefry_split_layout(void **unused)
{
    (void)unused;
    static const struct { const char *text; int rank; int64_t dims[3]; } shapes[] = {
        { "5", 1, { 5 } }, { "3,5", 2, { 3, 5 } }, { "3,4", 2, { 3, 4 } }, { "2,3", 2, { 2, 3 } },
        { "3,7,5", 3, { 3, 7, 5 } }, { "", 0, { 0 } }, { "1", 1, { 1 } }, { "0,3", 2, { 0, 3 } },
        { "5,1,3", 3, { 5, 1, 3 } },
    };
    uint64_t state[2] = { 0x0123456789abcdefull, 0xfffffffffffffff0ull };     /* the counter wraps */
    for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
        int64_t block[128];
        int word[128];
        int64_t blocks = split_layout(shapes[k].dims, shapes[k].rank, block, word);
        Run r32, r64;
        Value *v32 = bitgen(&r32, "rng_three_fry", state, 2, "u32", shapes[k].text);
        char n64[32];
        snprintf(n64, sizeof n64, "%lld", (long long)(blocks ? blocks : 1));
        Value *v64 = bitgen(&r64, "rng_three_fry", state, 2, "u64", n64);
        const uint32_t *w = bits_of(v32);
        const uint64_t *b = bits_of(v64);
        for (int64_t e = 0; e < value_elements(v32->elements[1]); e++) {
            uint64_t want = b[block[e]] >> (32 * word[e]);
            if (w[e] != (uint32_t)want)
                fail_msg("shape [%s] element %lld: %u, want word %d of block %lld", shapes[k].text, (long long)e,
                         w[e], word[e], (long long)block[e]);
        }
        assert_true(state_of(v32)[1] == state[1] + (uint64_t)blocks);
        run_free(&r32);
        run_free(&r64);
    }
}

/* Philox deals each block's four words round-robin: u32 element e is word
 * e % 4 of block e / 4, and u64 element e is words (2c, 2c+1), c = e % 2,
 * of block e / 2: so u64[e] = u32[2e] | u32[2e+1] << 32. */
static void test_philox_round_robin(void **unused)
{
    (void)unused;
    uint64_t state[3] = { 0xdeadbeef12345678ull, 0x1111, 0x2222 };
    Run r32, r64, r4;
    Value *v32 = bitgen(&r32, "rng_philox", state, 3, "u32", "10");
    Value *v64 = bitgen(&r64, "rng_philox", state, 3, "u64", "5");
    Value *v4 = bitgen(&r4, "rng_philox", state, 3, "u32", "4");
    const uint32_t *w = bits_of(v32), *w4 = bits_of(v4);
    const uint64_t *d = bits_of(v64);
    for (int e = 0; e < 5; e++)
        assert_true(d[e] == join(w[2 * e], w[2 * e + 1]));
    for (int e = 0; e < 4; e++)
        assert_true(w4[e] == w[e]);
    /* ceil(10 / 4) = 3 blocks; ceil(5 / 2) = 3 blocks; one block. */
    assert_true(state_of(v32)[1] == 0x1111 + 3 && state_of(v32)[2] == 0x2222);
    assert_true(state_of(v64)[1] == 0x1111 + 3 && state_of(v4)[1] == 0x1111 + 1);
    run_free(&r32);
    run_free(&r64);
    run_free(&r4);
}

/* A 2-word philox state {k, c} is XLA's reversed state: counter low c,
 * high k; the new state keeps k and the new low word. */
static void test_philox_two_word_state(void **unused)
{
    (void)unused;
    uint64_t s2[2] = { 0x5555aaaa5555aaaaull, 77 }, s3[3] = { s2[0], 77, s2[0] };
    Run r2, r3;
    Value *v2 = bitgen(&r2, "rng_philox", s2, 2, "u32", "3,3");
    Value *v3 = bitgen(&r3, "rng_philox", s3, 3, "u32", "3,3");
    assert_memory_equal(bits_of(v2), bits_of(v3), 9 * sizeof(uint32_t));
    assert_true(state_of(v2)[0] == s2[0] && state_of(v2)[1] == 77 + 3);
    run_free(&r2);
    run_free(&r3);
}

/* The counter is 128 bits: block 1 of {k, 2^64-1, 5} is block 0 of {k, 0, 6}. */
static void test_philox_counter_carry(void **unused)
{
    (void)unused;
    uint64_t a[3] = { 99, UINT64_MAX, 5 }, b[3] = { 99, 0, 6 };
    Run ra, rb;
    Value *va = bitgen(&ra, "rng_philox", a, 3, "u32", "8");
    Value *vb = bitgen(&rb, "rng_philox", b, 3, "u32", "4");
    assert_memory_equal((const uint32_t *)bits_of(va) + 4, bits_of(vb), 4 * sizeof(uint32_t));
    assert_true(state_of(va)[1] == 1 && state_of(va)[2] == 6);
    run_free(&ra);
    run_free(&rb);
}

static void test_default_is_philox(void **unused)
{
    (void)unused;
    uint64_t s[3] = { 1, 2, 3 };
    Run rd, rp;
    Value *vd = bitgen(&rd, "rng_default", s, 3, "u64", "7");
    Value *vp = bitgen(&rp, "rng_philox", s, 3, "u64", "7");
    assert_true(value_bits_equal(vd, vp));
    run_free(&rd);
    run_free(&rp);
}

/* Narrower outputs are the low bits of the 32-bit stream; signed and
 * float outputs carry the unsigned bits of their width. */
static void test_bit_types(void **unused)
{
    (void)unused;
    static const char *algs[2] = { "rng_three_fry", "rng_philox" };
    for (int a = 0; a < 2; a++) {
        uint64_t s[2] = { 0x0badc0ffee0ddf00ull, 12345 };
        Run r32, r64, r;
        Value *v32 = bitgen(&r32, algs[a], s, 2, "u32", "2,5");
        Value *v64 = bitgen(&r64, algs[a], s, 2, "u64", "2,5");
        const uint32_t *w = bits_of(v32);
        const uint64_t *d = bits_of(v64);
        static const char *same32[] = { "s32", "f32" }, *same64[] = { "s64", "f64" };
        for (int k = 0; k < 2; k++) {
            Value *v = bitgen(&r, algs[a], s, 2, same32[k], "2,5");
            assert_memory_equal(bits_of(v), w, 10 * 4);
            assert_true(state_of(v)[1] == state_of(v32)[1]);
            run_free(&r);
            v = bitgen(&r, algs[a], s, 2, same64[k], "2,5");
            assert_memory_equal(bits_of(v), d, 10 * 8);
            run_free(&r);
        }
        static const char *narrow[] = { "u16", "s16", "bf16", "f16" };
        for (int k = 0; k < 4; k++) {
            Value *v = bitgen(&r, algs[a], s, 2, narrow[k], "2,5");
            for (int e = 0; e < 10; e++)
                assert_true(((const uint16_t *)bits_of(v))[e] == (uint16_t)w[e]);
            assert_true(state_of(v)[1] == state_of(v32)[1]);
            run_free(&r);
        }
        Value *v = bitgen(&r, algs[a], s, 2, "u8", "2,5");
        for (int e = 0; e < 10; e++)
            assert_true(((const uint8_t *)bits_of(v))[e] == (uint8_t)w[e]);
        run_free(&r);
        v = bitgen(&r, algs[a], s, 2, "s4", "2,5");     /* sign-extended in its byte */
        for (int e = 0; e < 10; e++) {
            int want = (int)(w[e] & 15) - ((w[e] & 8) ? 16 : 0);
            assert_int_equal(((const int8_t *)bits_of(v))[e], want);
        }
        run_free(&r);
        run_free(&r32);
        run_free(&r64);
    }
}

static void test_bit_generator_errors(void **unused)
{
    (void)unused;
    uint64_t s[3] = { 0 };
    const void *p[] = { s };
    expect_error("HloModule t\n\nENTRY %m (s: u64[2]) -> (u64[2], u32[4]) {\n  %s = u64[2] parameter(0)\n"
                 "  ROOT %r = (u64[2], u32[4]) rng-bit-generator(u64[2] %s)\n}\n",
                 p, ERR_SHAPE, "rng-bit-generator: missing algorithm");
    expect_error("HloModule t\n\nENTRY %m (s: u64[2]) -> (u64[2], u32[4]) {\n  %s = u64[2] parameter(0)\n"
                 "  ROOT %r = (u64[2], u32[4]) rng-bit-generator(u64[2] %s), algorithm=rng_mersenne\n}\n",
                 p, ERR_SHAPE, "algorithm=rng_mersenne must be rng_default, rng_three_fry or rng_philox");
    expect_error("HloModule t\n\nENTRY %m (s: u64[3]) -> (u64[3], u32[4]) {\n  %s = u64[3] parameter(0)\n"
                 "  ROOT %r = (u64[3], u32[4]) rng-bit-generator(u64[3] %s), algorithm=rng_three_fry\n}\n",
                 p, ERR_SHAPE, "state u64[3] must be u64[2] for rng_three_fry");
    expect_error("HloModule t\n\nENTRY %m (s: s64[2]) -> (s64[2], u32[4]) {\n  %s = s64[2] parameter(0)\n"
                 "  ROOT %r = (s64[2], u32[4]) rng-bit-generator(s64[2] %s), algorithm=rng_philox\n}\n",
                 p, ERR_SHAPE, "state s64[2] must be u64[2] or u64[3]");
    expect_error("HloModule t\n\nENTRY %m (s: u64[2]) -> (u64[3], u32[4]) {\n  %s = u64[2] parameter(0)\n"
                 "  ROOT %r = (u64[3], u32[4]) rng-bit-generator(u64[2] %s), algorithm=rng_philox\n}\n",
                 p, ERR_SHAPE, "new state u64[3] does not match state u64[2]");
    expect_error("HloModule t\n\nENTRY %m (s: u64[2]) -> (u64[2], pred[4]) {\n  %s = u64[2] parameter(0)\n"
                 "  ROOT %r = (u64[2], pred[4]) rng-bit-generator(u64[2] %s), algorithm=rng_philox\n}\n",
                 p, ERR_SHAPE, "bits pred[4] must be an integer or floating-point array");
    /* XLA's verifier passes a non-tuple result; it cannot run. */
    expect_error("HloModule t\n\nENTRY %m (s: u64[2]) -> u32[4] {\n  %s = u64[2] parameter(0)\n"
                 "  ROOT %r = u32[4] rng-bit-generator(u64[2] %s), algorithm=rng_philox\n}\n",
                 p, ERR_UNSUPPORTED, "is not a tuple (new state, bits)");
}

/* ------------------------------------------------------------------ */
/* rng                                                                  */

static Value *rng_run(Run *r, const char *type, const char *dims, const char *dist, const char *a, const char *b,
                      uint64_t seed)
{
    char text[1024];
    snprintf(text, sizeof text,
             "HloModule t\n\nENTRY %%main () -> %s[%s] {\n"
             "  %%a = %s[] constant(%s)\n  %%b = %s[] constant(%s)\n"
             "  ROOT %%r = %s[%s] rng(%s[] %%a, %s[] %%b), distribution=%s\n}\n",
             type, dims, type, a, type, b, type, dims, type, type, dist);
    return run_ok(r, text, seed, NULL);
}

static void test_rng_uniform_float_range_and_seeds(void **unused)
{
    (void)unused;
    enum { N = 10000 };
    Run r1, r2, r3;
    const float *x = rng_run(&r1, "f32", "10000", "rng_uniform", "-2", "3", 7)->data;
    const float *y = rng_run(&r2, "f32", "10000", "rng_uniform", "-2", "3", 7)->data;
    const float *z = rng_run(&r3, "f32", "10000", "rng_uniform", "-2", "3", 8)->data;
    double sum = 0, lo = 9, hi = -9;
    int same_as_other_seed = 0;
    for (int i = 0; i < N; i++) {
        assert_true(x[i] >= -2 && x[i] < 3);
        sum += x[i];
        lo = fmin(lo, x[i]);
        hi = fmax(hi, x[i]);
        same_as_other_seed += x[i] == z[i];
    }
    assert_memory_equal(x, y, N * sizeof *x);         /* same seed, same values */
    assert_true(same_as_other_seed < 5);
    assert_true(fabs(sum / N - 0.5) < 0.06);          /* mean 0.5, sd of the mean 0.014 */
    assert_true(lo < -1.99 && hi > 2.99);
    run_free(&r1);
    run_free(&r2);
    run_free(&r3);
}

/* bf16 has 8 significant bits: about one draw in 512 rounds up to 1.0,
 * which must become the largest bf16 below 1 (0.99609375). */
static void test_rng_uniform_narrow_float_stays_below_b(void **unused)
{
    (void)unused;
    enum { N = 20000 };
    static const char *types[] = { "bf16", "f16", "f8e4m3fn" };
    for (int k = 0; k < 3; k++) {
        Run r;
        char dims[16];
        snprintf(dims, sizeof dims, "%d", N);
        Value *v = rng_run(&r, types[k], dims, "rng_uniform", "0", "1", 3);
        IrElemType t = v->shape->type;
        int at_top = 0, bytes = ir_type_storage_bytes(t);
        double top = 0;
        for (int i = 0; i < N; i++) {
            double x = ir_elem_get_f64(t, (const char *)v->data + i * bytes);
            if (!(x >= 0 && x < 1))
                fail_msg("%s element %d: %g is outside [0, 1)", types[k], i, x);
            top = fmax(top, x);
        }
        for (int i = 0; i < N; i++)
            at_top += ir_elem_get_f64(t, (const char *)v->data + i * bytes) == top;
        assert_true(top == (k == 0 ? 0.99609375 : k == 1 ? 1 - 0x1p-11 : 0.9375));
        assert_true(at_top > 5);
        run_free(&r);
    }
}

static void test_rng_uniform_ints(void **unused)
{
    (void)unused;
    Run r;
    const int32_t *x = rng_run(&r, "s32", "1000", "rng_uniform", "-3", "4", 1)->data;
    int seen[7] = { 0 };
    for (int i = 0; i < 1000; i++) {
        assert_true(x[i] >= -3 && x[i] < 4);
        seen[x[i] + 3]++;
    }
    for (int k = 0; k < 7; k++)
        assert_true(seen[k] > 100);      /* about 143 each */
    run_free(&r);

    const uint8_t *u = rng_run(&r, "u8", "500", "rng_uniform", "250", "255", 1)->data;
    for (int i = 0; i < 500; i++)
        assert_true(u[i] >= 250 && u[i] < 255);
    run_free(&r);

    const int64_t *w =
        rng_run(&r, "s64", "1000", "rng_uniform", "-9223372036854775808", "9223372036854775807", 1)->data;
    int negative = 0;
    for (int i = 0; i < 1000; i++) {
        assert_true(w[i] < INT64_MAX);
        negative += w[i] < 0;
    }
    assert_true(negative > 400 && negative < 600);
    run_free(&r);

    const int32_t *e = rng_run(&r, "s32", "5", "rng_uniform", "6", "6", 1)->data;   /* empty: a */
    for (int i = 0; i < 5; i++)
        assert_int_equal(e[i], 6);
    run_free(&r);
}

/* The documented derivation: element i of call c draws Philox-4x32-10 with
 * key seed and counter (i, c), which is what rng-bit-generator(philox,
 * state {seed, i, c}) -> u64[1] returns as w0 | w1 << 32; an integer in
 * [a, b) is a + floor(x (b - a) / 2^64). */
static void test_rng_derivation(void **unused)
{
    (void)unused;
    uint64_t seed = 0x1234567890abcdefull;
    Run r;
    const uint32_t *x = rng_run(&r, "u32", "6", "rng_uniform", "5", "1005", seed)->data;
    for (uint64_t i = 0; i < 6; i++) {
        uint64_t s[3] = { seed, i, 0 };
        Run g;
        uint64_t bits = *(const uint64_t *)bits_of(bitgen(&g, "rng_philox", s, 3, "u64", "1"));
        /* floor(bits * 1000 / 2^64), the 128-bit product split at 32 bits. */
        uint64_t hi = (bits >> 32) * 1000, lo = (bits & 0xffffffffu) * 1000;
        uint64_t want = 5 + ((hi + (lo >> 32)) >> 32);
        assert_int_equal(x[i], want);
        run_free(&g);
    }
    run_free(&r);
}

static void test_rng_normal(void **unused)
{
    (void)unused;
    enum { N = 20000 };
    Run r;
    const float *x = rng_run(&r, "f32", "20000", "rng_normal", "3", "2", 11)->data;
    double sum = 0, sq = 0;
    int beyond = 0;
    for (int i = 0; i < N; i++) {
        assert_true(isfinite(x[i]));
        sum += x[i];
        sq += (x[i] - 3.0) * (x[i] - 3.0);
        beyond += fabs(x[i] - 3) > 4;       /* two sd: 4.55% */
    }
    assert_true(fabs(sum / N - 3) < 0.06);
    assert_true(fabs(sqrt(sq / N) - 2) < 0.06);
    assert_true(beyond > 700 && beyond < 1120);
    run_free(&r);
}

/* In a while loop every iteration draws a fresh stream; the same run
 * again (on the same Interp or a new one) draws the same values. */
static void test_rng_in_loop(void **unused)
{
    (void)unused;
    static const char text[] =
        "HloModule t\n\n"
        "%cond (p: (s32[], f32[3,4])) -> pred[] {\n"
        "  %p = (s32[], f32[3,4]) parameter(0)\n"
        "  %i = s32[] get-tuple-element((s32[], f32[3,4]) %p), index=0\n"
        "  %n = s32[] constant(3)\n"
        "  ROOT %lt = pred[] compare(s32[] %i, s32[] %n), direction=LT\n}\n\n"
        "%body (p: (s32[], f32[3,4])) -> (s32[], f32[3,4]) {\n"
        "  %p = (s32[], f32[3,4]) parameter(0)\n"
        "  %i = s32[] get-tuple-element((s32[], f32[3,4]) %p), index=0\n"
        "  %acc = f32[3,4] get-tuple-element((s32[], f32[3,4]) %p), index=1\n"
        "  %lo = f32[] constant(0)\n  %hi = f32[] constant(1)\n"
        "  %u = f32[1,4] rng(f32[] %lo, f32[] %hi), distribution=rng_uniform\n"
        "  %z = s32[] constant(0)\n"
        "  %next = f32[3,4] dynamic-update-slice(f32[3,4] %acc, f32[1,4] %u, s32[] %i, s32[] %z)\n"
        "  %one = s32[] constant(1)\n  %i1 = s32[] add(s32[] %i, s32[] %one)\n"
        "  ROOT %t = (s32[], f32[3,4]) tuple(s32[] %i1, f32[3,4] %next)\n}\n\n"
        "ENTRY %main () -> f32[3,4] {\n"
        "  %z = s32[] constant(0)\n  %zero = f32[] constant(0)\n"
        "  %acc = f32[3,4] broadcast(f32[] %zero), dimensions={}\n"
        "  %init = (s32[], f32[3,4]) tuple(s32[] %z, f32[3,4] %acc)\n"
        "  %w = (s32[], f32[3,4]) while((s32[], f32[3,4]) %init), condition=%cond, body=%body\n"
        "  ROOT %r = f32[3,4] get-tuple-element((s32[], f32[3,4]) %w), index=1\n}\n";
    Run a, b;
    const float *x = run_ok(&a, text, 5, NULL)->data;
    float first[12];
    memcpy(first, x, sizeof first);
    for (int row = 1; row < 3; row++)
        assert_true(memcmp(first, first + 4 * row, 4 * sizeof(float)) != 0);
    assert_true(run(&a, NULL));        /* again on the same Interp */
    assert_memory_equal(a.out->data, first, sizeof first);
    assert_memory_equal(run_ok(&b, text, 5, NULL)->data, first, sizeof first);
    run_free(&a);
    run_free(&b);
}

static void test_rng_get_and_update_state(void **unused)
{
    (void)unused;
    static const char text[] =
        "HloModule t\n\nENTRY %main () -> (u64[2], u64[2]) {\n"
        "  %a = u64[2] rng-get-and-update-state(), delta=8\n"
        "  %b = u64[2] rng-get-and-update-state(), delta=8\n"
        "  ROOT %t = (u64[2], u64[2]) tuple(u64[2] %a, u64[2] %b)\n}\n";
    Run r;
    Value *v = run_ok(&r, text, 42, NULL);
    const uint64_t *a = v->elements[0]->data, *b = v->elements[1]->data;
    assert_true(a[0] != b[0] || a[1] != b[1]);
    for (uint64_t call = 0; call < 2; call++) {     /* element 0 of its call: philox(seed, (0, call)) */
        uint64_t s[3] = { 42, 0, call };
        Run g;
        const uint64_t *want = bits_of(bitgen(&g, "rng_philox", s, 3, "u64", "2"));
        const uint64_t *got = call ? b : a;
        assert_true(got[0] == want[0] && got[1] == want[1]);
        run_free(&g);
    }
    run_free(&r);
}

static void test_rng_errors(void **unused)
{
    (void)unused;
    expect_error("HloModule t\n\nENTRY %m () -> s32[4] {\n  %a = s32[] constant(0)\n  %b = s32[] constant(1)\n"
                 "  ROOT %r = s32[4] rng(s32[] %a, s32[] %b), distribution=rng_normal\n}\n",
                 NULL, ERR_SHAPE, "rng: rng_normal needs a floating-point type, not s32");
    expect_error("HloModule t\n\nENTRY %m () -> f32[4] {\n  %a = f32[] constant(0)\n  %b = f64[] constant(1)\n"
                 "  ROOT %r = f32[4] rng(f32[] %a, f64[] %b), distribution=rng_uniform\n}\n",
                 NULL, ERR_SHAPE, "operand f64[] must be a scalar of the result's type f32");
    expect_error("HloModule t\n\nENTRY %m () -> f32[4] {\n  %a = f32[] constant(0)\n  %b = f32[] constant(1)\n"
                 "  ROOT %r = f32[4] rng(f32[] %a, f32[] %b)\n}\n",
                 NULL, ERR_SHAPE, "rng: missing distribution");
    expect_error("HloModule t\n\nENTRY %m () -> c64[4] {\n  %a = c64[] constant((0, 0))\n  %b = c64[] constant((1, 0))\n"
                 "  ROOT %r = c64[4] rng(c64[] %a, c64[] %b), distribution=rng_uniform\n}\n",
                 NULL, ERR_SHAPE, "rng_uniform needs a floating-point, integer or pred type, not c64");
    expect_error("HloModule t\n\nENTRY %m () -> u64[3] {\n  ROOT %a = u64[3] rng-get-and-update-state(), delta=1\n}\n",
                 NULL, ERR_SHAPE, "result u64[3] must be u64[2]");
    expect_error("HloModule t\n\nENTRY %m () -> u64[2] {\n  ROOT %a = u64[2] rng-get-and-update-state()\n}\n",
                 NULL, ERR_SHAPE, "rng-get-and-update-state: missing delta");
}

/* ------------------------------------------------------------------ */
/* stochastic-convert                                                   */

static Value *sc_run(Run *r, const char *from, const char *rnd, const char *to, int n, const void *x,
                     const void *bits)
{
    char text[1024];
    snprintf(text, sizeof text,
             "HloModule t\n\nENTRY %%main (x: %s[%d], r: %s[%d]) -> %s[%d] {\n"
             "  %%x = %s[%d] parameter(0)\n  %%r = %s[%d] parameter(1)\n"
             "  ROOT %%c = %s[%d] stochastic-convert(%s[%d] %%x, %s[%d] %%r)\n}\n",
             from, n, rnd, n, to, n, from, n, rnd, n, to, n, from, n, rnd, n);
    const void *params[] = { x, bits };
    return run_ok(r, text, 0, params);
}

/* f32 -> s32 with u32 random bits: the fraction f rounds the magnitude up
 * when random < floor(f 2^32). */
static void test_stochastic_f32_to_s32(void **unused)
{
    (void)unused;
    static const struct { float x; uint32_t r; int32_t want; } c[] = {
        { 2.25f, 0x3fffffff, 3 }, { 2.25f, 0x40000000, 2 },            /* f = 1/4: threshold 2^30 */
        { 2.5f, 0x7fffffff, 3 }, { 2.5f, 0x80000000, 2 },              /* a tie rounds up half the time */
        { 3.0f, 0, 3 }, { -3.0f, 0, -3 }, { 0.0f, 0, 0 }, { -0.0f, 0, 0 },  /* exact: never moves */
        { -2.25f, 0, -3 }, { -2.25f, 0xffffffff, -2 },                 /* sign and magnitude */
        { 0.75f, 0xbfffffff, 1 }, { 0.75f, 0xc0000000, 0 },
        { NAN, 0, 0 }, { INFINITY, 0, INT32_MAX }, { -INFINITY, 0, INT32_MIN },
        { 3e9f, 0, INT32_MAX }, { -3e9f, 0, INT32_MIN },
        { 2147483648.0f, 0, INT32_MAX },         /* f32(INT32_MAX) = 2^31: saturates */
        { 2147483520.0f, 0, 2147483520 },        /* the largest f32 below 2^31: exact */
        { -2147483648.0f, 0xffffffff, INT32_MIN },
        { 1e-45f, 0, 0 },                         /* subnormal: floor(2^-149 2^32) = 0, never up */
        { 0x1p-32f, 0, 1 }, { 0x1p-32f, 1, 0 },  /* floor(2^-32 2^32) = 1: up only for random 0 */
        { 0x1p-33f, 0, 0 },                       /* floor(1/2) = 0 */
        { -0x1p-32f, 0, -1 },
    };
    enum { N = sizeof c / sizeof *c };
    float x[N];
    uint32_t r[N];
    int32_t want[N];
    for (int i = 0; i < N; i++) {
        x[i] = c[i].x;
        r[i] = c[i].r;
        want[i] = c[i].want;
    }
    Run run_;
    Value *v = sc_run(&run_, "f32", "u32", "s32", N, x, r);
    assert_s32_array(v, want, N);
    run_free(&run_);
}

/* f32 -> s8: saturation at f32(127) = 127 and -128; in (-128, -127) a
 * magnitude that rounds up past 127 gives -128. */
static void test_stochastic_f32_to_s8(void **unused)
{
    (void)unused;
    static const float x[] = { 126.5f, 126.5f, 127.0f, 127.2f, 200.0f, -127.5f, -127.5f, -128.0f, -128.5f, -1e30f };
    static const uint32_t r[] = { 0, 0x80000000, 0, 0, 0, 0, 0xffffffff, 0, 0, 0 };
    static const int8_t want[] = { 127, 126, 127, 127, 127, -128, -127, -128, -128, -128 };
    Run run_;
    Value *v = sc_run(&run_, "f32", "u32", "s8", 10, x, r);
    assert_memory_equal(v->data, want, sizeof want);
    run_free(&run_);
}

static void test_stochastic_narrow_and_wide(void **unused)
{
    (void)unused;
    Run run_;
    /* f16 -> s16, u16 random: 0.5 (0x3800) rounds up below 0x8000; 65504
     * saturates (f16(32767) = 32768); -0.0 gives 0; 1.5 with 0xffff stays. */
    static const uint16_t h[] = { 0x3800, 0x3800, 0x7bff, 0x8000, 0x3e00, 0x7c00, 0x7e00 };
    static const uint16_t hr[] = { 0x7fff, 0x8000, 0, 0, 0xffff, 0, 0 };
    static const int16_t hw[] = { 1, 0, 32767, 0, 1, 32767, 0 };
    Value *v = sc_run(&run_, "f16", "u16", "s16", 7, h, hr);
    assert_memory_equal(v->data, hw, sizeof hw);
    run_free(&run_);
    /* bf16 -> s8: -2.75 (0xc030) has f = 3/4, threshold 0xc000. */
    static const uint16_t b[] = { 0xc030, 0xc030, 0x4300 /* 128 */, 0xc300 /* -128 */ };
    static const uint16_t br[] = { 0xbfff, 0xc000, 0, 0 };
    static const int8_t bw[] = { -3, -2, 127, -128 };
    v = sc_run(&run_, "bf16", "u16", "s8", 4, b, br);
    assert_memory_equal(v->data, bw, sizeof bw);
    run_free(&run_);
    /* f64 -> s64, u64 random. */
    static const double d[] = { 0.5, 0.5, 9.3e18, -9.3e18, 4503599627370495.5 };
    static const uint64_t dr[] = { 0x7fffffffffffffffull, 0x8000000000000000ull, 0, 0, 0 };
    static const int64_t dw[] = { 1, 0, INT64_MAX, INT64_MIN, 4503599627370496 };
    v = sc_run(&run_, "f64", "u64", "s64", 5, d, dr);
    assert_memory_equal(v->data, dw, sizeof dw);
    run_free(&run_);
    /* f32 -> s4: the range is [-8, 7]. */
    static const float f4[] = { 6.5f, 7.5f, -8.5f, -7.5f };
    static const uint32_t r4[] = { 0, 0, 0, 0 };
    static const int8_t w4[] = { 7, 7, -8, -8 };
    v = sc_run(&run_, "f32", "u32", "s4", 4, f4, r4);
    assert_memory_equal(v->data, w4, sizeof w4);
    run_free(&run_);
}

static void test_stochastic_errors(void **unused)
{
    (void)unused;
    float x[2] = { 1, 2 };
    uint32_t r[2] = { 0, 0 };
    const void *p[] = { x, r };
    expect_error("HloModule t\n\nENTRY %m (x: f32[2], r: u32[2]) -> bf16[2] {\n  %x = f32[2] parameter(0)\n"
                 "  %r = u32[2] parameter(1)\n  ROOT %c = bf16[2] stochastic-convert(f32[2] %x, u32[2] %r)\n}\n",
                 p, ERR_UNSUPPORTED, "stochastic-convert from f32 to bf16");
    expect_error("HloModule t\n\nENTRY %m (x: f32[2], r: u32[2]) -> u8[2] {\n  %x = f32[2] parameter(0)\n"
                 "  %r = u32[2] parameter(1)\n  ROOT %c = u8[2] stochastic-convert(f32[2] %x, u32[2] %r)\n}\n",
                 p, ERR_UNSUPPORTED, "stochastic-convert from f32 to u8");
    expect_error("HloModule t\n\nENTRY %m (x: f32[2], r: s32[2]) -> s32[2] {\n  %x = f32[2] parameter(0)\n"
                 "  %r = s32[2] parameter(1)\n  ROOT %c = s32[2] stochastic-convert(f32[2] %x, s32[2] %r)\n}\n",
                 p, ERR_SHAPE, "random bits s32[2] must be unsigned integers as wide as operand f32[2]");
    expect_error("HloModule t\n\nENTRY %m (x: f32[2], r: u16[2]) -> s32[2] {\n  %x = f32[2] parameter(0)\n"
                 "  %r = u16[2] parameter(1)\n  ROOT %c = s32[2] stochastic-convert(f32[2] %x, u16[2] %r)\n}\n",
                 p, ERR_SHAPE, "random bits u16[2] must be unsigned integers as wide as operand f32[2]");
    expect_error("HloModule t\n\nENTRY %m (x: s32[2], r: u32[2]) -> s32[2] {\n  %x = s32[2] parameter(0)\n"
                 "  %r = u32[2] parameter(1)\n  ROOT %c = s32[2] stochastic-convert(s32[2] %x, u32[2] %r)\n}\n",
                 p, ERR_SHAPE, "operand s32[2] must have a floating-point element type");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threefry_known_answers),
        cmocka_unit_test(test_philox_known_answers),
        cmocka_unit_test(test_threefry_matches_an_xla_run),
        cmocka_unit_test(test_threefry_split_layout),
        cmocka_unit_test(test_philox_round_robin),
        cmocka_unit_test(test_philox_two_word_state),
        cmocka_unit_test(test_philox_counter_carry),
        cmocka_unit_test(test_default_is_philox),
        cmocka_unit_test(test_bit_types),
        cmocka_unit_test(test_bit_generator_errors),
        cmocka_unit_test(test_rng_uniform_float_range_and_seeds),
        cmocka_unit_test(test_rng_uniform_narrow_float_stays_below_b),
        cmocka_unit_test(test_rng_uniform_ints),
        cmocka_unit_test(test_rng_derivation),
        cmocka_unit_test(test_rng_normal),
        cmocka_unit_test(test_rng_in_loop),
        cmocka_unit_test(test_rng_get_and_update_state),
        cmocka_unit_test(test_rng_errors),
        cmocka_unit_test(test_stochastic_f32_to_s32),
        cmocka_unit_test(test_stochastic_f32_to_s8),
        cmocka_unit_test(test_stochastic_narrow_and_wide),
        cmocka_unit_test(test_stochastic_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
