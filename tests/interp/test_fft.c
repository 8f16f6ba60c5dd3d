/* test_fft.c: fft (src/interp/eval_fft.c).
 *
 * Known transforms (a delta, a cosine, a constant), round trips (IFFT of
 * FFT, IRFFT of RFFT) and a naive O(n^2) DFT in long double written here,
 * over every length from 1 to 40 (radix-2 and Bluestein alike) and 2-d and
 * 3-d shapes.  Tolerances are relative to the largest output magnitude. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "interp_test_util.h"

#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PI 3.14159265358979323846
#define TWO_PI 6.28318530717958647692528676655900577L

/* ------------------------------------------------------------------ */
/* Helpers                                                              */

/* Runs "ROOT r = out fft(p0), fft_type=type, fft_length=len" on x of shape in. */
static Value *run_fft(TestRun *run, const char *in, const char *out, const char *type, const char *len,
                      const void *x)
{
    char text[512];
    snprintf(text, sizeof text,
             "HloModule m\n\nENTRY e {\n  p0 = %s parameter(0)\n  ROOT r = %s fft(p0), fft_type=%s, fft_length=%s\n}\n",
             in, out, type, len);
    return test_run_ok(run, text, (const void *[]){x});
}

static double next_rand(uint64_t *s)
{
    *s = *s * 6364136223846793005u + 1442695040888963407u;
    return (double)(*s >> 11) / 4503599627370496.0 - 1.0;
}

/* max |got - want| <= tol max |want| (complex double arrays). */
static void assert_close(const double complex *got, const double complex *want, int64_t n, double tol,
                         const char *what)
{
    double scale = 0, worst = 0;
    int64_t at = 0;
    for (int64_t i = 0; i < n; i++)
        scale = fmax(scale, cabs(want[i]));
    for (int64_t i = 0; i < n; i++)
        if (cabs(got[i] - want[i]) > worst) {
            worst = cabs(got[i] - want[i]);
            at = i;
        }
    if (worst > tol * scale)
        fail_msg("%s: element %lld: got %.17g%+.17gi, want %.17g%+.17gi (error %.3g of %.3g)", what, (long long)at,
                 creal(got[at]), cimag(got[at]), creal(want[at]), cimag(want[at]), worst, scale);
}

static void widen_c64(const Value *v, double complex *out)
{
    const float complex *p = v->data;
    for (int64_t i = 0; i < value_elements(v); i++)
        out[i] = p[i];
}

/* Naive DFT along one axis of a row-major array: dims[axis] = n, lines
 * of stride `stride`, `outer` blocks of n * stride. */
static void naive_axis(double complex *x, int64_t outer, int64_t n, int64_t stride, bool inverse)
{
    long double complex *line = malloc((size_t)n * sizeof *line), *root = malloc((size_t)n * sizeof *root);
    for (int64_t k = 0; k < n; k++) {
        long double t = TWO_PI * (long double)k / (long double)n;
        root[k] = cosl(t) + (inverse ? 1 : -1) * sinl(t) * I;
    }
    for (int64_t o = 0; o < outer; o++)
        for (int64_t s = 0; s < stride; s++) {
            double complex *base = x + o * n * stride + s;
            for (int64_t k = 0; k < n; k++) {
                long double complex acc = 0;
                for (int64_t j = 0; j < n; j++)
                    acc += base[j * stride] * root[(j * k) % n];
                line[k] = inverse ? acc / n : acc;
            }
            for (int64_t k = 0; k < n; k++)
                base[k * stride] = (double complex)line[k];
        }
    free(line);
    free(root);
}

/* Naive n-d DFT over all dims of x (rank r, dims d). */
static void naive_dft(double complex *x, int r, const int64_t *d, bool inverse)
{
    int64_t total = 1;
    for (int i = 0; i < r; i++)
        total *= d[i];
    for (int axis = 0; axis < r; axis++) {
        int64_t stride = 1;
        for (int i = axis + 1; i < r; i++)
            stride *= d[i];
        naive_axis(x, total / (d[axis] * stride), d[axis], stride, inverse);
    }
}

/* ------------------------------------------------------------------ */
/* Known answers                                                        */

/* A delta at 0 transforms to all ones, a delta at p to exp(-2 pi i kp/n);
 * for a power of two the radix-2 butterflies of zeros are exact. */
static void test_fft_of_delta(void **state)
{
    (void)state;
    const int lengths[] = {8, 12, 7, 1};
    for (int li = 0; li < 4; li++) {
        int n = lengths[li];
        for (int p = 0; p < n; p += 3) {
            float complex x[12] = {0};
            x[p] = 1;
            char shape[32], len[16];
            snprintf(shape, sizeof shape, "c64[%d]", n);
            snprintf(len, sizeof len, "{%d}", n);
            TestRun run;
            Value *v = run_fft(&run, shape, shape, "FFT", len, x);
            double complex got[12], want[12];
            widen_c64(v, got);
            for (int k = 0; k < n; k++)
                want[k] = cexp(-2 * PI * I * (double)(k * p % n) / n);
            assert_close(got, want, n, 2e-7, shape);
            if (n == 8 && p == 0)
                for (int k = 0; k < n; k++)
                    assert_true(got[k] == 1);
            test_run_free(&run);
        }
    }
}

/* cos(2 pi f j/n) has n/2 at bins f and n-f and nothing elsewhere. */
static void test_fft_of_cosine(void **state)
{
    (void)state;
    const int lengths[] = {16, 10, 30};
    for (int li = 0; li < 3; li++) {
        int n = lengths[li], f = 3;
        double complex x[30], want[30];
        for (int j = 0; j < n; j++) {
            x[j] = cos(2 * PI * f * j / n);
            want[j] = j == f || j == n - f ? n / 2.0 : 0;
        }
        char shape[32], len[16];
        snprintf(shape, sizeof shape, "c128[%d]", n);
        snprintf(len, sizeof len, "{%d}", n);
        TestRun run;
        Value *v = run_fft(&run, shape, shape, "FFT", len, x);
        assert_close(v->data, want, n, 1e-14, shape);
        test_run_free(&run);
    }
}

/* A 2-d constant is one spike at (0, 0): N * c forward, c inverse. */
static void test_fft_2d_constant(void **state)
{
    (void)state;
    double complex x[15], fwd[15] = {0}, inv[15] = {0};
    for (int i = 0; i < 15; i++)
        x[i] = 2 - 1 * I;
    fwd[0] = 15 * (2 - 1 * I);
    inv[0] = 2 - 1 * I;
    TestRun run;
    assert_close(run_fft(&run, "c128[3,5]", "c128[3,5]", "FFT", "{3,5}", x)->data, fwd, 15, 1e-15, "FFT");
    test_run_free(&run);
    assert_close(run_fft(&run, "c128[3,5]", "c128[3,5]", "IFFT", "{3,5}", x)->data, inv, 15, 1e-15, "IFFT");
    test_run_free(&run);
}

/* ------------------------------------------------------------------ */
/* Against the naive DFT                                                */

/* Every length 1..40, c128, FFT and IFFT, batch of 3. */
static void test_fft_every_length_matches_naive_dft(void **state)
{
    (void)state;
    uint64_t s = 1;
    for (int n = 1; n <= 40; n++)
        for (int inverse = 0; inverse < 2; inverse++) {
            double complex x[120], want[120];
            for (int i = 0; i < 3 * n; i++)
                want[i] = x[i] = next_rand(&s) + next_rand(&s) * I;
            naive_axis(want, 3, n, 1, inverse);
            char shape[32], len[16];
            snprintf(shape, sizeof shape, "c128[3,%d]", n);
            snprintf(len, sizeof len, "{%d}", n);
            TestRun run;
            Value *v = run_fft(&run, shape, shape, inverse ? "IFFT" : "FFT", len, x);
            assert_close(v->data, want, 3 * n, 1e-14, shape);
            test_run_free(&run);
        }
}

/* 2-d and 3-d transforms over the last dims, with a batch dim in front. */
static void test_fft_multi_dim_matches_naive_dft(void **state)
{
    (void)state;
    static const struct { const char *shape, *len; int r; int64_t d[3]; int64_t batch; } cases[] = {
        {"c128[2,8,6]", "{8,6}", 2, {8, 6, 0}, 2},
        {"c128[4,6,5]", "{4,6,5}", 3, {4, 6, 5}, 1},
        {"c128[3,2,16,3]", "{2,16,3}", 3, {2, 16, 3}, 3},
    };
    uint64_t s = 5;
    for (int c = 0; c < 3; c++) {
        int64_t item = 1;
        for (int i = 0; i < cases[c].r; i++)
            item *= cases[c].d[i];
        int64_t n = item * cases[c].batch;
        double complex *x = malloc((size_t)n * sizeof *x), *want = malloc((size_t)n * sizeof *want);
        for (int64_t i = 0; i < n; i++)
            want[i] = x[i] = next_rand(&s) + next_rand(&s) * I;
        for (int64_t b = 0; b < cases[c].batch; b++)
            naive_dft(want + b * item, cases[c].r, cases[c].d, false);
        TestRun run;
        Value *v = run_fft(&run, cases[c].shape, cases[c].shape, "FFT", cases[c].len, x);
        assert_close(v->data, want, n, 1e-14, cases[c].shape);
        test_run_free(&run);
        free(x);
        free(want);
    }
}

/* A long non-power-of-two c64 transform (Bluestein with m = 8192): one
 * rounding from double, so within an f32 ulp or two of the largest bin. */
static void test_fft_long_c64(void **state)
{
    (void)state;
    enum { N = 3001 };
    static float complex x[N];
    static double complex xd[N], got[N];
    uint64_t s = 9;
    for (int i = 0; i < N; i++) {
        x[i] = (float)next_rand(&s) + (float)next_rand(&s) * I;
        xd[i] = x[i];
    }
    naive_axis(xd, 1, N, 1, false);
    TestRun run;
    Value *v = run_fft(&run, "c64[3001]", "c64[3001]", "FFT", "{3001}", x);
    widen_c64(v, got);
    assert_close(got, xd, N, 2.5e-7, "c64[3001]");
    test_run_free(&run);
}

/* ------------------------------------------------------------------ */
/* Real transforms                                                      */

/* RFFT is the first n/2+1 bins of the complex FFT; IRFFT of it gives the
 * input back, for even and odd n, 1-d and 2-d. */
static void test_rfft_irfft_round_trip(void **state)
{
    (void)state;
    static const struct { const char *real, *cx, *len; int rows, n; } cases[] = {
        {"f64[3,16]", "c128[3,9]", "{16}", 3, 16},
        {"f64[2,15]", "c128[2,8]", "{15}", 2, 15},
        {"f64[4,6]", "c128[4,4]", "{4,6}", 4, 6},
    };
    uint64_t s = 3;
    for (int c = 0; c < 3; c++) {
        int rows = cases[c].rows, n = cases[c].n, h = n / 2 + 1;
        double x[64];
        double complex full[64], want[64];
        for (int i = 0; i < rows * n; i++)
            full[i] = x[i] = next_rand(&s);
        if (c == 2)
            naive_dft(full, 2, (const int64_t[]){rows, n}, false);
        else
            naive_axis(full, rows, n, 1, false);
        for (int r = 0; r < rows; r++)
            for (int k = 0; k < h; k++)
                want[r * h + k] = full[r * n + k];
        TestRun run, back;
        Value *v = run_fft(&run, cases[c].real, cases[c].cx, "RFFT", cases[c].len, x);
        assert_close(v->data, want, rows * h, 1e-14, cases[c].real);
        Value *w = run_fft(&back, cases[c].cx, cases[c].real, "IRFFT", cases[c].len, v->data);
        const double *y = w->data;
        for (int i = 0; i < rows * n; i++)
            if (fabs(y[i] - x[i]) > 1e-14)
                fail_msg("%s: IRFFT(RFFT(x))[%d] = %.17g, x = %.17g", cases[c].real, i, y[i], x[i]);
        test_run_free(&run);
        test_run_free(&back);
    }
}

/* IRFFT reads the first n/2+1 bins and drops the imaginary parts of X[0]
 * and X[n/2]: adding some there changes nothing beyond rounding. */
static void test_irfft_ignores_imaginary_dc_and_nyquist(void **state)
{
    (void)state;
    float complex a[5] = {3, 1 - 2 * I, 0.5f + I, -1 * I, 2}, b[5];
    memcpy(b, a, sizeof a);
    b[0] += 7 * I;
    b[4] -= 5 * I;
    TestRun ra, rb;
    const float *ya = run_fft(&ra, "c64[5]", "f32[8]", "IRFFT", "{8}", a)->data;
    const float *yb = run_fft(&rb, "c64[5]", "f32[8]", "IRFFT", "{8}", b)->data;
    for (int j = 0; j < 8; j++) {
        /* x[j] = (X0 + (-1)^j X4 + 2 re sum_{k=1..3} X_k e^{2 pi i jk/8}) / 8 */
        double complex acc = 3 + (j % 2 ? -2 : 2);
        for (int k = 1; k < 4; k++)
            acc += 2 * creal(a[k] * cexp(2 * PI * I * j * k / 8));
        assert_true(fabs(ya[j] - creal(acc) / 8) < 1e-6);
        assert_true(fabs(yb[j] - ya[j]) < 1e-6);
    }
    test_run_free(&ra);
    test_run_free(&rb);
}

/* ------------------------------------------------------------------ */
/* Edges                                                                */

static void test_fft_empty_and_length_one(void **state)
{
    (void)state;
    float complex x[6] = {1 + 2 * I, -3, 4 * I, 5, 6, 7};
    TestRun run;
    Value *v = run_fft(&run, "c64[3,1]", "c64[3,1]", "IFFT", "{1}", x);
    assert_memory_equal(v->data, x, 3 * sizeof x[0]);           /* length 1: the identity */
    test_run_free(&run);
    static const char *const empties[][4] = {
        {"c64[0,8]", "c64[0,8]", "FFT", "{8}"},
        {"c64[2,0,4]", "c64[2,0,4]", "FFT", "{0,4}"},
        {"f32[4,0]", "c64[4,0]", "RFFT", "{0}"},
        {"c64[2,0]", "f32[2,0]", "IRFFT", "{0}"},
        {"c64[2,1]", "f32[2,0]", "IRFFT", "{0}"},
    };
    for (int i = 0; i < 5; i++) {
        v = run_fft(&run, empties[i][0], empties[i][1], empties[i][2], empties[i][3], x);
        assert_int_equal(value_elements(v), 0);
        test_run_free(&run);
    }
    float one[2] = {2.5f, -1};
    v = run_fft(&run, "f32[2,1]", "c64[2,1]", "RFFT", "{1}", one);
    const float complex *y = v->data;
    assert_true(y[0] == 2.5f && y[1] == -1);
    test_run_free(&run);
}

/* A huge fft_length that does not match an RFFT operand is refused before
 * anything is allocated, as are the wrong element types.  (FFT and IFFT may
 * differ from fft_length: test_fft_cuts_and_pads_like_xla.) */
static void test_fft_rejects_bad_lengths_and_types(void **state)
{
    (void)state;
    static const char *const bad[][5] = {
        {"f32[8]", "c64[5]", "RFFT", "{4611686018427387904}", "fft_length"},
        {"c64[8]", "c64[8]", "FFT", "{2,8}", "fewer dimensions"},
        {"f32[8]", "f32[8]", "FFT", "{8}", "complex"},
        {"c64[8]", "f32[8]", "IRFFT", "{8}", "dimension 0 must be 5"},
        {"f32[8]", "c128[5]", "RFFT", "{8}", "element type c64"},
    };
    float x[16] = {0};
    for (int i = 0; i < 5; i++) {
        char text[512];
        snprintf(text, sizeof text,
                 "HloModule m\n\nENTRY e {\n  p0 = %s parameter(0)\n  ROOT r = %s fft(p0), fft_type=%s, fft_length=%s\n}\n",
                 bad[i][0], bad[i][1], bad[i][2], bad[i][3]);
        TestRun run;
        assert_false(test_run(&run, text, (const void *[]){x}));
        assert_int_equal(run.err.code, ERR_SHAPE);
        if (!strstr(run.err.msg, bad[i][4]))
            fail_msg("case %d: message '%s' lacks '%s'", i, run.err.msg, bad[i][4]);
        test_run_free(&run);
    }
}

/* FFT and IFFT whose operand differs from fft_length, as XLA's shape
 * inference allows and its evaluator computes: the input cut to fft_length
 * or padded with zeros, the transform at fft_length, the output cut to the
 * operand's dims or padded with zeros.  The want side builds exactly that
 * with the naive DFT. */
static void test_fft_cuts_and_pads_like_xla(void **state)
{
    (void)state;
    static const struct { int64_t d[2], n[2]; const char *type; } cases[] = {
        {{1, 6}, {1, 4}, "FFT"}, {{1, 4}, {1, 6}, "FFT"}, {{1, 5}, {1, 8}, "IFFT"},
        {{3, 4}, {5, 2}, "FFT"}, {{4, 3}, {2, 5}, "IFFT"}, {{2, 3}, {0, 3}, "FFT"},
    };
    uint64_t seed = 11;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const int64_t *d = cases[c].d, *n = cases[c].n;
        bool inverse = cases[c].type[0] == 'I';
        double complex x[64], work[64] = {0}, want[64] = {0};
        for (int64_t i = 0; i < d[0] * d[1]; i++)
            x[i] = next_rand(&seed) + next_rand(&seed) * I;
        for (int64_t i = 0; i < d[0] && i < n[0]; i++)
            for (int64_t j = 0; j < d[1] && j < n[1]; j++)
                work[i * n[1] + j] = x[i * d[1] + j];
        if (n[0] * n[1] > 0)
            naive_dft(work, 2, n, inverse);
        for (int64_t i = 0; i < d[0] && i < n[0]; i++)
            for (int64_t j = 0; j < d[1] && j < n[1]; j++)
                want[i * d[1] + j] = work[i * n[1] + j];
        char shape[32], len[32];
        snprintf(shape, sizeof shape, "c128[%lld,%lld]", (long long)d[0], (long long)d[1]);
        snprintf(len, sizeof len, "{%lld,%lld}", (long long)n[0], (long long)n[1]);
        TestRun run;
        Value *v = run_fft(&run, shape, shape, cases[c].type, len, x);
        char what[96];
        snprintf(what, sizeof what, "%s of %s at fft_length=%s", cases[c].type, shape, len);
        assert_close(v->data, want, d[0] * d[1], 1e-13, what);
        const double complex *got = v->data;
        for (int64_t i = 0; i < d[0]; i++)         /* padded outputs are exact zeros */
            for (int64_t j = 0; j < d[1]; j++)
                if ((i >= n[0] || j >= n[1]) && got[i * d[1] + j] != 0)
                    fail_msg("%s: element [%lld,%lld] is not a padded zero", what, (long long)i, (long long)j);
        test_run_free(&run);
    }
}

/* An FFT far longer than its operand is valid, and the memory estimate
 * counts its work array, so --max-memory refuses it before it runs. */
static void test_fft_longer_than_its_operand_is_estimated(void **state)
{
    (void)state;
    const char *text = "HloModule m\n\nENTRY e {\n  p = c64[4,8] parameter(0)\n"
                       "  ROOT r = c64[4,8] fft(p), fft_type=FFT, fft_length={1000000000}\n}\n";
    Error err = { 0 };
    IrModule *m = ir_parse_module(text, strlen(text), "t.hlo", &err);
    assert_non_null(m);
    assert_true(ir_verify_module(m, &err));
    InterpMemory need;
    interp_estimate_memory(m, &need);
    assert_true(need.peak > INT64_C(16000000000));
    ir_module_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fft_of_delta),
        cmocka_unit_test(test_fft_of_cosine),
        cmocka_unit_test(test_fft_2d_constant),
        cmocka_unit_test(test_fft_every_length_matches_naive_dft),
        cmocka_unit_test(test_fft_multi_dim_matches_naive_dft),
        cmocka_unit_test(test_fft_long_c64),
        cmocka_unit_test(test_rfft_irfft_round_trip),
        cmocka_unit_test(test_irfft_ignores_imaginary_dc_and_nyquist),
        cmocka_unit_test(test_fft_empty_and_length_one),
        cmocka_unit_test(test_fft_rejects_bad_lengths_and_types),
        cmocka_unit_test(test_fft_cuts_and_pads_like_xla),
        cmocka_unit_test(test_fft_longer_than_its_operand_is_estimated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
