/* test_linalg.c: cholesky and triangular-solve (src/interp/eval_linalg.c).
 *
 * Known answers where exact arithmetic gives them (an integer factor whose
 * product is the input, integer solutions with power-of-two pivots, which
 * every order of operations reproduces bit for bit), and otherwise the
 * result multiplied back in double against the input.  The triangle an op
 * must not read holds NaN, so reading it shows. */
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

/* ------------------------------------------------------------------ */
/* Helpers                                                              */

/* Runs a one-op module: params of the given HLO shapes, root op(params)
 * with attrs, result of shape out. */
static Value *run_op(TestRun *run, const char *op, const char *out, const char *attrs, int n_params,
                     const char *const *shapes, const void *const *params)
{
    char text[2048];
    int n = snprintf(text, sizeof text, "HloModule m\n\nENTRY e {\n");
    for (int i = 0; i < n_params; i++)
        n += snprintf(text + n, sizeof text - (size_t)n, "  p%d = %s parameter(%d)\n", i, shapes[i], i);
    n += snprintf(text + n, sizeof text - (size_t)n, "  ROOT r = %s %s(%s%s)%s%s\n}\n", out, op, "p0",
                  n_params > 1 ? ", p1" : "", attrs ? ", " : "", attrs ? attrs : "");
    assert_true(n < (int)sizeof text);
    return test_run_ok(run, text, params);
}

static void assert_f64_array(const Value *v, const double *want, int64_t n)
{
    assert_int_equal(value_elements(v), n);
    const double *got = v->data;
    for (int64_t i = 0; i < n; i++)
        if (!(got[i] == want[i] || (isnan(got[i]) && isnan(want[i]))))
            fail_msg("element %lld: got %.17g, want %.17g", (long long)i, got[i], want[i]);
}

/* Deterministic values in [-1, 1). */
static double next_rand(uint64_t *s)
{
    *s = *s * 6364136223846793005u + 1442695040888963407u;
    return (double)(*s >> 11) / 4503599627370496.0 - 1.0;
}

/* ------------------------------------------------------------------ */
/* cholesky                                                             */

/* [[4,12,-16],[12,37,-43],[-16,-43,98]] = l l^T with l = [[2,0,0],[6,1,0],[-8,5,3]]. */
static const double SPD3[9] = {4, 12, -16, 12, 37, -43, -16, -43, 98};
static const double L3[9] = {2, 0, 0, 6, 1, 0, -8, 5, 3};

static void test_cholesky_known_factor_reads_one_triangle(void **state)
{
    (void)state;
    float lo[9], up[9], want_lo[9], want_up[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            lo[i * 3 + j] = j > i ? NAN : (float)SPD3[i * 3 + j];
            up[i * 3 + j] = j < i ? NAN : (float)SPD3[i * 3 + j];
            want_lo[i * 3 + j] = (float)L3[i * 3 + j];
            want_up[i * 3 + j] = (float)L3[j * 3 + i];
        }
    const char *shapes[] = {"f32[3,3]"};
    TestRun run;
    assert_f32_array(run_op(&run, "cholesky", "f32[3,3]", "lower=true", 1, shapes, (const void *[]){lo}), want_lo, 9);
    test_run_free(&run);
    assert_f32_array(run_op(&run, "cholesky", "f32[3,3]", "lower=false", 1, shapes, (const void *[]){up}), want_up, 9);
    test_run_free(&run);
    /* no lower attribute: upper, as XLA's default */
    assert_f32_array(run_op(&run, "cholesky", "f32[3,3]", NULL, 1, shapes, (const void *[]){up}), want_up, 9);
    test_run_free(&run);
}

static void test_cholesky_f64_batch(void **state)
{
    (void)state;
    double a[18], want[18];
    for (int b = 0; b < 2; b++)
        for (int e = 0; e < 9; e++) {
            a[b * 9 + e] = SPD3[e] * (b ? 4 : 1);       /* 4a = (2l)(2l)^T */
            want[b * 9 + e] = L3[e] * (b ? 2 : 1);
        }
    TestRun run;
    const char *shapes[] = {"f64[2,3,3]"};
    assert_f64_array(run_op(&run, "cholesky", "f64[2,3,3]", "lower=true", 1, shapes, (const void *[]){a}), want, 18);
    test_run_free(&run);
}

/* l = [[2,0],[1+i,3]]: a = l l^H = [[4, 2-2i],[2+2i, 11]].  The imaginary
 * part of the diagonal is not read. */
static void test_cholesky_complex_hermitian(void **state)
{
    (void)state;
    float complex a[4] = {4 + 9 * I, NAN, 2 + 2 * I, 11 - 3 * I};
    float complex want[4] = {2, 0, 1 + 1 * I, 3};
    TestRun run;
    const char *shapes[] = {"c64[2,2]"};
    Value *v = run_op(&run, "cholesky", "c64[2,2]", "lower=true", 1, shapes, (const void *[]){a});
    assert_memory_equal(v->data, want, sizeof want);
    test_run_free(&run);
    double complex b[4] = {4, 2 - 2 * I, NAN, 11};
    double complex want_up[4] = {2, 1 - 1 * I, 0, 3};       /* u = l^H */
    const char *shapes2[] = {"c128[2,2]"};
    v = run_op(&run, "cholesky", "c128[2,2]", "lower=false", 1, shapes2, (const void *[]){b});
    assert_memory_equal(v->data, want_up, sizeof want_up);
    test_run_free(&run);
}

/* [[1,2],[2,1]] is not positive definite: that matrix is all NaN, the next
 * one of the batch is not affected.  [[1,1],[1,1]] (semidefinite) is no
 * error: its last pivot is zero. */
static void test_cholesky_not_positive_definite_is_nan_per_matrix(void **state)
{
    (void)state;
    float a[12] = {1, 2, 2, 1, 9, 3, 3, 5, 1, 1, 1, 1};
    float want[12] = {NAN, NAN, NAN, NAN, 3, 0, 1, 2, 1, 0, 1, 0};
    TestRun run;
    const char *shapes[] = {"f32[3,2,2]"};
    assert_f32_array(run_op(&run, "cholesky", "f32[3,2,2]", "lower=true", 1, shapes, (const void *[]){a}), want, 12);
    test_run_free(&run);
    float complex c[4] = {-1, 0, 0, 1};
    const char *shapes2[] = {"c64[2,2]"};
    Value *v = run_op(&run, "cholesky", "c64[2,2]", "lower=true", 1, shapes2, (const void *[]){c});
    const float complex *got = v->data;
    for (int i = 0; i < 4; i++)                 /* NaN + 0i, as XLA's FullLike(NaN) */
        assert_true(isnan(crealf(got[i])) && cimagf(got[i]) == 0);
    test_run_free(&run);
}

/* A random 30x30 positive definite matrix: l l^T gives it back, and l is
 * lower triangular with a positive diagonal. */
static void test_cholesky_reconstructs_random_matrix(void **state)
{
    (void)state;
    enum { N = 30 };
    static double m[N * N], a[N * N];
    uint64_t s = 42;
    for (int i = 0; i < N * N; i++)
        m[i] = next_rand(&s);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            double acc = i == j ? N : 0;
            for (int k = 0; k < N; k++)
                acc += m[i * N + k] * m[j * N + k];
            a[i * N + j] = acc;
        }
    TestRun run;
    const char *shapes[] = {"f64[30,30]"};
    Value *v = run_op(&run, "cholesky", "f64[30,30]", "lower=true", 1, shapes, (const void *[]){a});
    const double *l = v->data;
    for (int i = 0; i < N; i++) {
        assert_true(l[i * N + i] > 0);
        for (int j = 0; j < N; j++) {
            if (j > i)
                assert_true(l[i * N + j] == 0);
            double acc = 0;
            for (int k = 0; k < N; k++)
                acc += l[i * N + k] * l[j * N + k];
            if (fabs(acc - a[i * N + j]) > 1e-12 * N)
                fail_msg("(l l^T)[%d][%d] = %.17g, a = %.17g", i, j, acc, a[i * N + j]);
        }
    }
    test_run_free(&run);
}

static void test_cholesky_empty_and_1x1(void **state)
{
    (void)state;
    float one = 16, dummy = 0;
    TestRun run;
    const char *s1[] = {"f32[1,1]"};
    assert_f32_array(run_op(&run, "cholesky", "f32[1,1]", "lower=true", 1, s1, (const void *[]){&one}),
                     (const float[]){4}, 1);
    test_run_free(&run);
    const char *empties[] = {"f32[0,0]", "f32[2,0,0]", "f32[0,3,3]"};
    for (int i = 0; i < 3; i++) {
        Value *v = run_op(&run, "cholesky", empties[i], "lower=false", 1, &empties[i], (const void *[]){&dummy});
        assert_int_equal(value_elements(v), 0);
        test_run_free(&run);
    }
}

/* A module the verifier refuses (ERR_SHAPE, a message holding want)
 * never reaches the kernel. */
static void assert_refused(const char *text, const char *want)
{
    static const float zeros[64];
    TestRun run;
    assert_false(test_run(&run, text, (const void *[]){zeros, zeros}));
    assert_int_equal(run.err.code, ERR_SHAPE);
    if (!strstr(run.err.msg, want))
        fail_msg("message '%s' lacks '%s'", run.err.msg, want);
    test_run_free(&run);
}

static void test_cholesky_rejects_non_square(void **state)
{
    (void)state;
    assert_refused("HloModule m\n\nENTRY e {\n  p = f32[3,4] parameter(0)\n"
                   "  ROOT r = f32[3,4] cholesky(p), lower=true\n}\n", "square");
}

/* ------------------------------------------------------------------ */
/* triangular-solve                                                     */

typedef struct SolveForm {
    bool left, lower, unit;
    const char *transpose;
} SolveForm;

static const char *const TRANSPOSES[] = {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"};

/* op(a)[i][j] of the effective (triangle, unit diagonal) a, m x m, complex. */
static double complex op_at(const double complex *a, int m, const SolveForm *f, int i, int j)
{
    int r = strcmp(f->transpose, "NO_TRANSPOSE") == 0 ? i : j;
    int c = r == i ? j : i;
    double complex v = r == c && f->unit ? 1 : (f->lower ? c > r : c < r) ? 0 : a[r * m + c];
    return strcmp(f->transpose, "ADJOINT") == 0 ? conj(v) : v;
}

/* b = op(a) x (left) or x op(a), x of nrhs right-hand sides, in double. */
static void multiply(const double complex *a, const double complex *x, double complex *b, int m, int nrhs,
                     const SolveForm *f)
{
    int rows = f->left ? m : nrhs, cols = f->left ? nrhs : m;
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) {
            double complex acc = 0;
            for (int k = 0; k < m; k++)
                acc += f->left ? op_at(a, m, f, i, k) * x[k * cols + j] : x[i * m + k] * op_at(a, m, f, k, j);
            b[i * cols + j] = acc;
        }
}

static void form_attrs(const SolveForm *f, char *buf, size_t n)
{
    snprintf(buf, n, "left_side=%s, lower=%s, unit_diagonal=%s, transpose_a=%s", f->left ? "true" : "false",
             f->lower ? "true" : "false", f->unit ? "true" : "false", f->transpose);
}

/* a for form f: the named triangle from t (integers, power-of-two pivots),
 * NaN in the other triangle, and on the diagonal too when unit. */
static void spoil_matrix(const double *t, double *a, int m, const SolveForm *f)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++) {
            bool read = f->lower ? j <= i : j >= i;
            a[i * m + j] = !read || (f->unit && i == j) ? NAN : t[i * m + j];
        }
}

/* Every form, f32: integer x and b = op(a) x computed exactly, so the
 * solve must give x back exactly (the sign of a zero aside). */
static void test_triangular_solve_every_form_exact(void **state)
{
    (void)state;
    enum { M = 4, K = 3 };
    static const double T[M * M] = {2, 3, -1, 5, -7, -4, 2, 1, 3, 6, 1, -2, -5, 2, 8, 0.5};
    static const double X[M * K] = {1, -2, 3, 4, 0, -1, 2, 5, -3, -6, 1, 2};
    for (int form = 0; form < 24; form++) {
        SolveForm f = {form & 1, (form >> 1) & 1, (form >> 2) & 1, TRANSPOSES[form >> 3]};
        double a[M * M];
        double complex ac[M * M], xc[M * K], bc[M * K];
        spoil_matrix(T, a, M, &f);
        for (int i = 0; i < M * M; i++)
            ac[i] = a[i];
        for (int i = 0; i < M * K; i++)
            xc[i] = X[i];
        multiply(ac, xc, bc, M, K, &f);
        float af[M * M], bf[M * K], want[M * K];
        for (int i = 0; i < M * M; i++)
            af[i] = (float)a[i];
        for (int i = 0; i < M * K; i++) {
            bf[i] = (float)creal(bc[i]);
            want[i] = (float)X[i];
        }
        char attrs[160];
        form_attrs(&f, attrs, sizeof attrs);
        const char *bshape = f.left ? "f32[4,3]" : "f32[3,4]";
        const char *shapes[] = {"f32[4,4]", bshape};
        TestRun run;
        Value *v = run_op(&run, "triangular-solve", bshape, attrs, 2, shapes, (const void *[]){af, bf});
        const float *got = v->data;
        for (int i = 0; i < M * K; i++)
            if (got[i] != want[i])          /* a zero may come out as -0 */
                fail_msg("%s: element %d: got %.9g, want %.9g", attrs, i, (double)got[i], (double)want[i]);
        test_run_free(&run);
    }
}

/* Complex, batch of two, every form but unit: the solution multiplied back
 * gives b, and TRANSPOSE and ADJOINT give different answers. */
static void test_triangular_solve_complex_batch_multiplies_back(void **state)
{
    (void)state;
    enum { M = 6, K = 2, B = 2 };
    static double complex a[B * M * M], b[B * M * K];
    uint64_t s = 7;
    for (int i = 0; i < B * M * M; i++)
        a[i] = next_rand(&s) + next_rand(&s) * I + ((i % (M * M)) % (M + 1) == 0 ? 3 : 0);
    for (int i = 0; i < B * M * K; i++)
        b[i] = next_rand(&s) + next_rand(&s) * I;
    double complex first[2][B * M * K];
    for (int form = 0; form < 12; form++) {
        SolveForm f = {form & 1, (form >> 1) & 1, false, TRANSPOSES[form >> 2]};
        char attrs[160];
        form_attrs(&f, attrs, sizeof attrs);
        const char *bshape = f.left ? "c128[2,6,2]" : "c128[2,2,6]";
        const char *shapes[] = {"c128[2,6,6]", bshape};
        TestRun run;
        Value *v = run_op(&run, "triangular-solve", bshape, attrs, 2, shapes, (const void *[]){a, b});
        const double complex *x = v->data;
        for (int bt = 0; bt < B; bt++) {
            double complex back[M * K];
            multiply(a + bt * M * M, x + bt * M * K, back, M, K, &f);
            for (int i = 0; i < M * K; i++)
                if (cabs(back[i] - b[bt * M * K + i]) > 1e-12)
                    fail_msg("%s: batch %d element %d: %g%+gi vs %g%+gi", attrs, bt, i, creal(back[i]),
                             cimag(back[i]), creal(b[bt * M * K + i]), cimag(b[bt * M * K + i]));
        }
        if (form == 5 || form == 9)                         /* left, upper: TRANSPOSE, ADJOINT */
            memcpy(first[form == 9], x, sizeof first[0]);
        test_run_free(&run);
    }
    assert_true(memcmp(first[0], first[1], sizeof first[0]) != 0);
}

/* Empty systems run without touching memory; a zero pivot divides by zero. */
static void test_triangular_solve_empty_and_singular(void **state)
{
    (void)state;
    float dummy[4] = {0};
    const char *forms[][3] = {
        {"f32[0,0]", "f32[0,5]", "left_side=true, transpose_a=NO_TRANSPOSE"},
        {"f32[3,3]", "f32[3,0]", "left_side=true, transpose_a=NO_TRANSPOSE"},
        {"f32[0,2,2]", "f32[0,4,2]", "transpose_a=ADJOINT"},
    };
    for (int i = 0; i < 3; i++) {
        TestRun run;
        float a9[9] = {0};
        const char *shapes[] = {forms[i][0], forms[i][1]};
        Value *v = run_op(&run, "triangular-solve", forms[i][1], forms[i][2], 2, shapes,
                          (const void *[]){i == 1 ? a9 : dummy, dummy});
        assert_int_equal(value_elements(v), 0);
        test_run_free(&run);
    }
    float a[4] = {0, 0, 1, 1}, b[2] = {1, 2};       /* lower [[0,.],[1,1]]: y0 = 1/0 */
    const char *shapes[] = {"f32[2,2]", "f32[2,1]"};
    TestRun run;
    Value *v = run_op(&run, "triangular-solve", "f32[2,1]", "left_side=true, lower=true, transpose_a=NO_TRANSPOSE",
                      2, shapes, (const void *[]){a, b});
    const float *x = v->data;
    assert_true(isinf(x[0]) && x[0] > 0 && isinf(x[1]) && x[1] < 0);
    test_run_free(&run);
}

static void test_triangular_solve_rejects_mismatched_b(void **state)
{
    (void)state;
    assert_refused("HloModule m\n\nENTRY e {\n  a = f32[2,3,3] parameter(0)\n  b = f32[2,4,2] parameter(1)\n"
                   "  ROOT r = f32[2,4,2] triangular-solve(a, b), left_side=true, transpose_a=NO_TRANSPOSE\n}\n",
                   "order of a");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cholesky_known_factor_reads_one_triangle),
        cmocka_unit_test(test_cholesky_f64_batch),
        cmocka_unit_test(test_cholesky_complex_hermitian),
        cmocka_unit_test(test_cholesky_not_positive_definite_is_nan_per_matrix),
        cmocka_unit_test(test_cholesky_reconstructs_random_matrix),
        cmocka_unit_test(test_cholesky_empty_and_1x1),
        cmocka_unit_test(test_cholesky_rejects_non_square),
        cmocka_unit_test(test_triangular_solve_every_form_exact),
        cmocka_unit_test(test_triangular_solve_complex_batch_multiplies_back),
        cmocka_unit_test(test_triangular_solve_empty_and_singular),
        cmocka_unit_test(test_triangular_solve_rejects_mismatched_b),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
