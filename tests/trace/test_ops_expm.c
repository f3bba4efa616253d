/* weft_matrix_exponential checked against a Taylor series in long double
 * (scaled to a norm of 1/2, then squared back) on matrices whose norms
 * reach every Pade degree and the squarings, small enough for weft's
 * loops and large enough for the BLAS; against exponentials known in
 * closed form; on NaN, inf and overflow; eagerly and traced on 1, 2 and 4
 * workers (the same bits everywhere); and its errors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_expm, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 120);

static int body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_matrix_exponential(cx, a[0]);
    return weft_ctx_status(cx);
}

static weft_tensor *expm_everywhere(weft_tensor *a, const char *what)
{
    weft_tensor *y;
    op_results_everywhere(body, NULL, &a, 1, &y, 1, what);
    return y;
}

/* exp of the row-major n x n matrix a into out: the Taylor series of
 * a / 2^s (norm <= 1/2, 30 terms: the rest is below 1e-40) squared s
 * times, in long double. */
static void expm_reference(int n, const double *a, double *out)
{
    size_t nn = (size_t)n * n;
    long double *x = malloc(sizeof *x * nn), *term = malloc(sizeof *term * nn),
                *sum = malloc(sizeof *sum * nn), *t = malloc(sizeof *t * nn);
    cr_assert(x && term && sum && t);
    double norm = 0;
    for (int j = 0; j < n; j++) {
        double s = 0;
        for (int i = 0; i < n; i++)
            s += fabs(a[i * n + j]);
        norm = fmax(norm, s);
    }
    int squarings = norm > 0.5 ? (int)ceil(log2(norm / 0.5)) : 0;
    for (size_t e = 0; e < nn; e++) {
        x[e] = ldexpl(a[e], -squarings);
        term[e] = sum[e] = e % (size_t)(n + 1) == 0;
    }
    for (int k = 1; k <= 30; k++) {
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                long double s = 0;
                for (int q = 0; q < n; q++)
                    s += term[i * n + q] * x[q * n + j];
                t[i * n + j] = s / k;
            }
        for (size_t e = 0; e < nn; e++) {
            term[e] = t[e];
            sum[e] += t[e];
        }
    }
    for (int s = 0; s < squarings; s++) {
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                long double v = 0;
                for (int q = 0; q < n; q++)
                    v += sum[i * n + q] * sum[q * n + j];
                t[i * n + j] = v;
            }
        memcpy(sum, t, sizeof *t * nn);
    }
    for (size_t e = 0; e < nn; e++)
        out[e] = (double)sum[e];
    free(x);
    free(term);
    free(sum);
    free(t);
}

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

/* An n x n matrix of 1-norm `norm` with entries that f32 holds exactly
 * (so that both dtypes exponentiate the same matrix). */
static void random_matrix(int n, double norm, double *a)
{
    double worst = 0;
    for (int i = 0; i < n * n; i++)
        a[i] = op_uniform(&rng);
    for (int j = 0; j < n; j++) {
        double s = 0;
        for (int i = 0; i < n; i++)
            s += fabs(a[i * n + j]);
        worst = fmax(worst, s);
    }
    for (int i = 0; i < n * n; i++)
        a[i] = (float)(a[i] * norm / worst);
}

/* max |got - want| over the matrix, relative to its largest |want|. */
static double matrix_error(const weft_tensor *got, size_t first, const double *want, int n)
{
    double err = 0, scale = 0;
    for (int e = 0; e < n * n; e++) {
        double d = fabs(test_element(got, (int64_t)(first + (size_t)e)) - want[e]);
        err = isnan(d) ? INFINITY : fmax(err, d);
        scale = fmax(scale, fabs(want[e]));
    }
    return err / scale;
}

static const int sizes[] = { 1, 3, 16, 17, 40 };   /* loops up to 16 rows, the BLAS above */
/* Norms below theta_3, theta_5, theta_7, theta_9 and theta_13, and above
 * it (three squarings). */
static const double norms[] = { 0.01, 0.2, 0.9, 2, 5, 30 };
#define N_OF(x) (sizeof(x) / sizeof((x)[0]))

Test(ops_expm, matches_a_taylor_reference_at_every_degree)
{
    for (size_t s = 0; s < N_OF(sizes); s++) {
        int n = sizes[s];
        const int64_t batch = (int64_t)N_OF(norms);
        size_t nn = (size_t)n * n;
        double *a = malloc(sizeof *a * nn * batch), *want = malloc(sizeof *want * nn * batch);
        cr_assert(a && want);
        for (int64_t m = 0; m < batch; m++) {
            random_matrix(n, norms[m], a + m * nn);
            expm_reference(n, a + m * nn, want + m * nn);
        }
        for (int f = 0; f < 2; f++) {
            weft_dtype dt = f ? WEFT_F64 : WEFT_F32;
            weft_tensor *t = test_tensor(dt, 3, (int64_t[]){ batch, n, n }, a);
            weft_tensor *y = expm_everywhere(t, "expm");
            test_assert_shape(y, dt, 3, (int64_t[]){ batch, n, n }, "expm");
            for (int64_t m = 0; m < batch; m++) {
                double err = matrix_error(y, (size_t)m * nn, want + m * nn, n);
                cr_assert(err <= (dt == WEFT_F64 ? 1e-13 : 1e-6),
                          "n %d norm %g %s: off by %g of the largest entry", n, norms[m],
                          weft_dtype_name(dt), err);
            }
            weft_tensor_release(y);
            weft_tensor_release(t);
        }
        free(a);
        free(want);
    }
}

/* exp of [[0, -t], [t, 0]] is the rotation by t; of a diagonal matrix,
 * the diagonal's exp; of a nilpotent one, its finite series; of 0, I. */
Test(ops_expm, known_exponentials)
{
    const double t = 20;
    double in[4][9] = {
        { 0, -t, t, 0 },
        { -3, 0, 0, 0, 0.5, 0, 0, 0, 9 },
        { 0, 1, 2, 0, 0, 3, 0, 0, 0 },
        { 0 },
    };
    const double want[4][9] = {
        { cos(t), -sin(t), sin(t), cos(t) },
        { exp(-3), 0, 0, 0, exp(0.5), 0, 0, 0, exp(9) },
        { 1, 1, 3.5, 0, 1, 3, 0, 0, 1 },   /* I + N + N^2 / 2 */
        { 1, 0, 0, 0, 1, 0, 0, 0, 1 },
    };
    const int n_of[4] = { 2, 3, 3, 3 };
    for (int c = 0; c < 4; c++) {
        int n = n_of[c];
        weft_tensor *a = test_tensor(WEFT_F64, 2, (int64_t[]){ n, n }, in[c]);
        weft_tensor *y = expm_everywhere(a, "known");
        test_assert_shape(y, WEFT_F64, 2, (int64_t[]){ n, n }, "known");
        double err = matrix_error(y, 0, want[c], n);
        cr_assert(err <= 1e-14, "case %d: off by %g of the largest entry", c, err);
        weft_tensor_release(y);
        weft_tensor_release(a);
    }
}

/* A NaN or inf entry makes that matrix NaN (its neighbours in the batch
 * are untouched); exp(1000) overflows to inf; empty batches and 0 x 0
 * matrices give empty results. */
Test(ops_expm, nan_inf_overflow_and_empty)
{
    double in[3] = { NAN, INFINITY, 1000 }, two[8] = { 1, 2, NAN, 4, 0, 0, 0, 0 };
    weft_tensor *a = test_tensor(WEFT_F64, 3, (int64_t[]){ 3, 1, 1 }, in);
    weft_tensor *y = expm_everywhere(a, "nan");
    cr_assert(isnan(test_element(y, 0)) && isnan(test_element(y, 1)));
    cr_assert(isinf(test_element(y, 2)) && test_element(y, 2) > 0);
    weft_tensor_release(y);
    weft_tensor_release(a);
    a = test_tensor(WEFT_F32, 3, (int64_t[]){ 2, 2, 2 }, two);
    y = expm_everywhere(a, "nan batch");
    for (int e = 0; e < 4; e++)
        cr_assert(isnan(test_element(y, e)), "entry %d", e);
    cr_assert(test_element(y, 4) == 1 && test_element(y, 5) == 0 && test_element(y, 7) == 1);
    weft_tensor_release(y);
    weft_tensor_release(a);
    const int64_t empty[2][3] = { { 0, 3, 3 }, { 2, 0, 0 } };
    for (int c = 0; c < 2; c++) {
        a = test_tensor(WEFT_F32, 3, empty[c], NULL);
        y = expm_everywhere(a, "empty");
        test_assert_shape(y, WEFT_F32, 3, empty[c], "empty");
        weft_tensor_release(y);
        weft_tensor_release(a);
    }
}

Test(ops_expm, one_trace_for_any_size)
{
    weft_spec sig = { .dtype = WEFT_F64, .rank = 2, .dims = { WEFT_DIM_ANY, WEFT_DIM_ANY } };
    weft_function *f = op_signature_function(rt, body, NULL, &sig, 1);
    for (int n = 1; n <= 20; n += 19) {
        double a[400] = { 0 };
        weft_tensor *t = test_tensor(WEFT_F64, 2, (int64_t[]){ n, n }, a);
        weft_arg arg = weft_arg_tensor(t);
        weft_tensor *y = NULL;
        cr_assert_eq(weft_function_call(f, &arg, 1, &y, 1), 0, "%s", weft_errmsg());
        for (int e = 0; e < n * n; e++)
            cr_assert_eq(test_element(y, e), e % (n + 1) == 0, "n %d entry %d", n, e);
        weft_tensor_release(y);
        weft_tensor_release(t);
    }
    op_destroy_traced_once(&f);
}

static int bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    switch (*(const int *)user) {
    case 0: outs[0] = weft_matrix_exponential(cx, a[0]); break;   /* [2,3] */
    case 1: outs[0] = weft_matrix_exponential(cx, weft_cast(cx, a[1], WEFT_I32)); break;
    case 2: outs[0] = weft_matrix_exponential(cx, weft_reshape(cx, a[1], 1, (int64_t[]){ 9 }));
        break;
    }
    return weft_ctx_status(cx);
}

Test(ops_expm, errors_name_the_op)
{
    const op_error_case cases[] = {
        { 0, WEFT_ESHAPE, "weft_matrix_exponential: f64[2,3] is not a square matrix (or a "
                          "batch of them)" },
        { 1, WEFT_EDTYPE, "weft_matrix_exponential: the matrix i32[3,3] is not f32 or f64" },
        { 2, WEFT_ESHAPE, "weft_matrix_exponential: f64[9] is not a square matrix" },
    };
    double v[9] = { 4, 1, 0, 1, 3, 1, 0, 1, 2 };
    weft_tensor *args[2] = { test_tensor(WEFT_F64, 2, (int64_t[]){ 2, 3 }, v),
                             test_tensor(WEFT_F64, 2, (int64_t[]){ 3, 3 }, v) };
    op_expect_errors(rt, bad_body, cases, N_OF(cases), args, 2);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}
