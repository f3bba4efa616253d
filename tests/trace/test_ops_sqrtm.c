/* matrix_sqrt (tf.linalg.sqrtm): closed forms (a diagonal, an upper
 * triangle of 2 x 2, a rotation-scaling matrix whose eigenvalues are a
 * complex pair), random symmetric positive definite matrices of 1 to 40
 * rows whose root squares back to them and is symmetric positive definite
 * (so the principal one), a random nonsymmetric matrix near the identity,
 * a batch; NaN for a singular matrix, a negative eigenvalue and a NaN
 * entry, each matrix of a batch on its own; f32 the f64 root rounded
 * once; the same bits eagerly and traced on 1, 2 and 4 workers; a shape
 * refused. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_sqrtm, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 120);

static int sqrtm_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_matrix_sqrt(cx, a[0]);
    return weft_ctx_status(cx);
}

/* sqrtm of the row-major matrices x [batch, n, n] of dtype dt into y. */
static void sqrtm_values(weft_dtype dt, int64_t batch, int64_t n, const double *x, double *y)
{
    int64_t dims[3] = { batch, n, n };
    weft_tensor *t = test_tensor(dt, 3, dims, x), *out;
    op_results_everywhere(sqrtm_body, NULL, &t, 1, &out, 1, "matrix_sqrt");
    test_assert_shape(out, dt, 3, dims, "matrix_sqrt");
    for (int64_t i = 0; i < batch * n * n; i++)
        y[i] = test_element(out, i);
    weft_tensor_release(out);
    weft_tensor_release(t);
}

static void close_to(double got, double want, double tol, const char *what, int64_t i)
{
    cr_assert(fabs(got - want) <= tol * (1 + fabs(want)), "%s[%lld] = %.17g, want %.17g", what,
              (long long)i, got, want);
}

Test(ops_sqrtm, closed_forms)
{
    /* diag(4, 9, 0.25); [[a, b], [0, c]] -> [[sqrt a, b / (sqrt a + sqrt c)], [0, sqrt c]];
     * r [[cos t, -sin t], [sin t, cos t]] -> sqrt(r) at t / 2. */
    const double diag[9] = { 4, 0, 0, 0, 9, 0, 0, 0, 0.25 };
    double y[9];
    sqrtm_values(WEFT_F64, 1, 3, diag, y);
    const double want_diag[9] = { 2, 0, 0, 0, 3, 0, 0, 0, 0.5 };
    for (int i = 0; i < 9; i++)
        close_to(y[i], want_diag[i], 1e-15, "diag", i);
    const double tri[4] = { 2, 5, 0, 7 };
    sqrtm_values(WEFT_F64, 1, 2, tri, y);
    const double want_tri[4] = { sqrt(2.0), 5 / (sqrt(2.0) + sqrt(7.0)), 0, sqrt(7.0) };
    for (int i = 0; i < 4; i++)
        close_to(y[i], want_tri[i], 1e-14, "triangle", i);
    double r = 3, th = 2.5;
    const double rot[4] = { r * cos(th), -r * sin(th), r * sin(th), r * cos(th) };
    sqrtm_values(WEFT_F64, 1, 2, rot, y);
    double sr = sqrt(r);
    const double want_rot[4] = { sr * cos(th / 2), -sr * sin(th / 2), sr * sin(th / 2),
                                 sr * cos(th / 2) };
    for (int i = 0; i < 4; i++)
        close_to(y[i], want_rot[i], 1e-14, "rotation", i);
}

static double uniform(uint64_t *s)
{
    return op_uniform(s);
}

/* x x (row-major n x n) into z. */
static void square(int64_t n, const double *x, double *z)
{
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = 0;
            for (int64_t k = 0; k < n; k++)
                s += x[i * n + k] * x[k * n + j];
            z[i * n + j] = s;
        }
}

/* Whether the symmetric x is positive definite (a Cholesky that ends). */
static bool positive_definite(int64_t n, const double *x)
{
    double *l = calloc((size_t)(n * n), sizeof *l);
    cr_assert_not_null(l);
    bool ok = true;
    for (int64_t j = 0; j < n && ok; j++) {
        double d = x[j * n + j];
        for (int64_t k = 0; k < j; k++)
            d -= l[j * n + k] * l[j * n + k];
        ok = d > 0;
        if (!ok)
            break;
        l[j * n + j] = sqrt(d);
        for (int64_t i = j + 1; i < n; i++) {
            double s = x[i * n + j];
            for (int64_t k = 0; k < j; k++)
                s -= l[i * n + k] * l[j * n + k];
            l[i * n + j] = s / l[j * n + j];
        }
    }
    free(l);
    return ok;
}

Test(ops_sqrtm, symmetric_positive_definite_roots)
{
    const int64_t sizes[] = { 1, 2, 5, 17, 40 };
    uint64_t s = 12345;
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        int64_t n = sizes[k];
        size_t nn = (size_t)(n * n);
        double *b = malloc(nn * sizeof *b), *a = malloc(nn * sizeof *a),
               *x = malloc(nn * sizeof *x), *z = malloc(nn * sizeof *z);
        cr_assert(b && a && x && z);
        for (size_t e = 0; e < nn; e++)
            b[e] = uniform(&s);
        /* a = b b^T + 0.1 I: condition numbers in the hundreds. */
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < n; j++) {
                double t = i == j ? 0.1 : 0;
                for (int64_t q = 0; q < n; q++)
                    t += b[i * n + q] * b[j * n + q];
                a[i * n + j] = t;
            }
        sqrtm_values(WEFT_F64, 1, n, a, x);
        square(n, x, z);
        double scale = 0;
        for (size_t e = 0; e < nn; e++)
            scale = fmax(scale, fabs(a[e]));
        for (size_t e = 0; e < nn; e++) {
            cr_assert(fabs(z[e] - a[e]) <= 1e-12 * scale, "n %lld: (x x - a)[%zu] = %g",
                      (long long)n, e, z[e] - a[e]);
            int64_t i = (int64_t)e / n, j = (int64_t)e % n;
            cr_assert(fabs(x[i * n + j] - x[j * n + i]) <= 1e-12 * scale, "n %lld: not symmetric",
                      (long long)n);
        }
        cr_assert(positive_definite(n, x), "n %lld: the root is not positive definite",
                  (long long)n);
        free(b);
        free(a);
        free(x);
        free(z);
    }
}

Test(ops_sqrtm, nonsymmetric_batch_and_f32)
{
    /* Two 6 x 6 matrices I + e r with r uniform in [-1, 1): eigenvalues
     * near 1, no symmetry. */
    enum { N = 6 };
    uint64_t s = 99;
    double a[2 * N * N], x[2 * N * N], z[N * N];
    for (int m = 0; m < 2; m++)
        for (int i = 0; i < N; i++)
            for (int j = 0; j < N; j++)
                a[m * N * N + i * N + j] = (i == j) + 0.3 * uniform(&s);
    sqrtm_values(WEFT_F64, 2, N, a, x);
    for (int m = 0; m < 2; m++) {
        square(N, x + m * N * N, z);
        for (int e = 0; e < N * N; e++)
            cr_assert(fabs(z[e] - a[m * N * N + e]) <= 1e-13, "matrix %d: (x x - a)[%d] = %g", m,
                      e, z[e] - a[m * N * N + e]);
    }
    /* f32: the f64 root of the f32 matrix, rounded once. */
    double a32[2 * N * N], y32[2 * N * N], y64[2 * N * N];
    for (int e = 0; e < 2 * N * N; e++)
        a32[e] = (float)a[e];
    sqrtm_values(WEFT_F32, 2, N, a32, y32);
    sqrtm_values(WEFT_F64, 2, N, a32, y64);
    for (int e = 0; e < 2 * N * N; e++)
        cr_assert_eq(y32[e], (double)(float)y64[e], "element %d", e);
}

Test(ops_sqrtm, outside_the_domain_is_nan_per_matrix)
{
    /* singular; eigenvalues -1 and 4; a NaN entry; then a good one. */
    const double a[16] = { 1, 2, 2, 4, -1, 0, 0, 4, 1, NAN, 0, 1, 9, 0, 0, 16 };
    double y[16];
    sqrtm_values(WEFT_F64, 4, 2, a, y);
    for (int i = 0; i < 12; i++)
        cr_assert(isnan(y[i]), "matrix %d element %d: %g", i / 4, i % 4, y[i]);
    const double want[4] = { 3, 0, 0, 4 };
    for (int i = 0; i < 4; i++)
        close_to(y[12 + i], want[i], 1e-15, "good matrix", i);
}

static int bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_matrix_sqrt(cx, a[0]);
    return weft_ctx_status(cx);
}

Test(ops_sqrtm, refused_calls_name_the_op)
{
    const double v[6] = { 0 };
    weft_tensor *arg = test_tensor(WEFT_F64, 2, (const int64_t[]){ 2, 3 }, v);
    const op_error_case cases[] = { { 0, WEFT_ESHAPE, "weft_matrix_sqrt" } };
    op_expect_errors(rts[1], bad_body, cases, 1, &arg, 1);
    weft_tensor_release(arg);
}
