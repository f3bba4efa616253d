/* matrix_logarithm (tf.linalg.logm on real matrices): closed forms (the
 * identity, a diagonal whose logarithms span 28 orders of magnitude, an
 * upper triangle of 2 x 2, a rotation-scaling matrix whose eigenvalues are
 * a complex pair), logm(expm(x)) = x for nonsymmetric x whose eigenvalues'
 * imaginary parts are within (-pi, pi), expm(logm(a)) = a for random
 * symmetric positive definite matrices of 1 to 40 rows with a symmetric
 * logarithm, a batch; NaN for a singular matrix, a negative eigenvalue and
 * a NaN entry, each matrix of a batch on its own; f32 the f64 logarithm
 * rounded once; the same bits eagerly and traced on 1, 2 and 4 workers; a
 * shape refused. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_logm, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 120);

static int logm_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    bool of_expm = user != NULL;
    outs[0] = weft_matrix_logarithm(cx, of_expm ? weft_matrix_exponential(cx, a[0]) : a[0]);
    return weft_ctx_status(cx);
}

static int expm_of_logm_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_matrix_exponential(cx, weft_matrix_logarithm(cx, a[0]));
    return weft_ctx_status(cx);
}

/* body of the row-major matrices x [batch, n, n] of dtype dt into y. */
static void matrix_values(weft_body_fn body, void *user, weft_dtype dt, int64_t batch,
                          int64_t n, const double *x, double *y)
{
    int64_t dims[3] = { batch, n, n };
    weft_tensor *t = test_tensor(dt, 3, dims, x), *out;
    op_results_everywhere(body, user, &t, 1, &out, 1, "matrix_logarithm");
    test_assert_shape(out, dt, 3, dims, "matrix_logarithm");
    for (int64_t i = 0; i < batch * n * n; i++)
        y[i] = test_element(out, i);
    weft_tensor_release(out);
    weft_tensor_release(t);
}

static void logm_values(weft_dtype dt, int64_t batch, int64_t n, const double *x, double *y)
{
    matrix_values(logm_body, NULL, dt, batch, n, x, y);
}

static void close_to(double got, double want, double tol, const char *what, int64_t i)
{
    cr_assert(fabs(got - want) <= tol * (1 + fabs(want)), "%s[%lld] = %.17g, want %.17g", what,
              (long long)i, got, want);
}

Test(ops_logm, closed_forms)
{
    double y[9];
    const double eye[9] = { 1, 0, 0, 0, 1, 0, 0, 0, 1 };
    logm_values(WEFT_F64, 1, 3, eye, y);
    for (int i = 0; i < 9; i++)
        cr_assert_eq(y[i], 0, "identity[%d] = %g", i, y[i]);
    /* diag(e^-30, e^2, e^30): thirty-odd square roots. */
    const double diag[9] = { exp(-30.0), 0, 0, 0, exp(2.0), 0, 0, 0, exp(30.0) };
    logm_values(WEFT_F64, 1, 3, diag, y);
    const double want_diag[9] = { -30, 0, 0, 0, 2, 0, 0, 0, 30 };
    for (int i = 0; i < 9; i++)
        close_to(y[i], want_diag[i], 1e-12, "diag", i);
    /* [[a, b], [0, c]] -> [[log a, b (log a - log c) / (a - c)], [0, log c]]. */
    const double tri[4] = { 2, 5, 0, 7 };
    logm_values(WEFT_F64, 1, 2, tri, y);
    const double want_tri[4] = { log(2.0), 5 * (log(2.0) - log(7.0)) / (2 - 7.0), 0, log(7.0) };
    for (int i = 0; i < 4; i++)
        close_to(y[i], want_tri[i], 1e-13, "triangle", i);
    /* r [[cos t, -sin t], [sin t, cos t]] -> [[log r, -t], [t, log r]]. */
    double r = 3, th = 2.5;
    const double rot[4] = { r * cos(th), -r * sin(th), r * sin(th), r * cos(th) };
    logm_values(WEFT_F64, 1, 2, rot, y);
    const double want_rot[4] = { log(r), -th, th, log(r) };
    for (int i = 0; i < 4; i++)
        close_to(y[i], want_rot[i], 1e-13, "rotation", i);
}

Test(ops_logm, logarithm_of_an_exponential_and_f32)
{
    /* Two 6 x 6 matrices 0.5 u, u uniform in [-1, 1): ||x||_2 <= 3 < pi,
     * so expm(x)'s principal logarithm is x. */
    enum { N = 6 };
    uint64_t s = 7;
    double x[2 * N * N], y[2 * N * N];
    for (int e = 0; e < 2 * N * N; e++)
        x[e] = 0.5 * op_uniform(&s);
    matrix_values(logm_body, "of expm", WEFT_F64, 2, N, x, y);
    for (int e = 0; e < 2 * N * N; e++)
        close_to(y[e], x[e], 1e-12, "logm(expm(x))", e);
    /* f32: the f64 logarithm of the f32 matrix, rounded once. */
    double a[2 * N * N], y32[2 * N * N], y64[2 * N * N];
    for (int e = 0; e < 2 * N * N; e++)
        a[e] = (float)((e % (N * N) % (N + 1) == 0) + 0.3 * op_uniform(&s));
    logm_values(WEFT_F32, 2, N, a, y32);
    logm_values(WEFT_F64, 2, N, a, y64);
    for (int e = 0; e < 2 * N * N; e++)
        cr_assert_eq(y32[e], (double)(float)y64[e], "element %d", e);
}

Test(ops_logm, symmetric_positive_definite_round_trip)
{
    const int64_t sizes[] = { 1, 2, 5, 17, 40 };
    uint64_t s = 12345;
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        int64_t n = sizes[k];
        size_t nn = (size_t)(n * n);
        double *b = malloc(nn * sizeof *b), *a = malloc(nn * sizeof *a),
               *l = malloc(nn * sizeof *l), *z = malloc(nn * sizeof *z);
        cr_assert(b && a && l && z);
        for (size_t e = 0; e < nn; e++)
            b[e] = op_uniform(&s);
        /* a = b b^T + 0.1 I: condition numbers in the hundreds. */
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < n; j++) {
                double t = i == j ? 0.1 : 0;
                for (int64_t q = 0; q < n; q++)
                    t += b[i * n + q] * b[j * n + q];
                a[i * n + j] = t;
            }
        logm_values(WEFT_F64, 1, n, a, l);
        matrix_values(expm_of_logm_body, NULL, WEFT_F64, 1, n, a, z);
        double scale = 0, lscale = 0;
        for (size_t e = 0; e < nn; e++) {
            scale = fmax(scale, fabs(a[e]));
            lscale = fmax(lscale, fabs(l[e]));
        }
        for (size_t e = 0; e < nn; e++) {
            cr_assert(fabs(z[e] - a[e]) <= 1e-11 * scale, "n %lld: (expm(logm a) - a)[%zu] = %g",
                      (long long)n, e, z[e] - a[e]);
            int64_t i = (int64_t)e / n, j = (int64_t)e % n;
            cr_assert(fabs(l[i * n + j] - l[j * n + i]) <= 1e-12 * lscale,
                      "n %lld: not symmetric", (long long)n);
        }
        free(b);
        free(a);
        free(l);
        free(z);
    }
}

Test(ops_logm, outside_the_domain_is_nan_per_matrix)
{
    /* singular; eigenvalues -1 and 4; a NaN entry; then a good one. */
    const double a[16] = { 1, 2, 2, 4, -1, 0, 0, 4, 1, NAN, 0, 1, M_E, 0, 0, 1 };
    double y[16];
    logm_values(WEFT_F64, 4, 2, a, y);
    for (int i = 0; i < 12; i++)
        cr_assert(isnan(y[i]), "matrix %d element %d: %g", i / 4, i % 4, y[i]);
    const double want[4] = { 1, 0, 0, 0 };
    for (int i = 0; i < 4; i++)
        close_to(y[12 + i], want[i], 1e-15, "good matrix", i);
}

static int bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_matrix_logarithm(cx, a[0]);
    return weft_ctx_status(cx);
}

Test(ops_logm, refused_calls_name_the_op)
{
    const double v[6] = { 0 };
    weft_tensor *arg = test_tensor(WEFT_F64, 2, (const int64_t[]){ 2, 3 }, v);
    const op_error_case cases[] = { { 0, WEFT_ESHAPE, "weft_matrix_logarithm" } };
    op_expect_errors(rts[1], bad_body, cases, 1, &arg, 1);
    weft_tensor_release(arg);
}
