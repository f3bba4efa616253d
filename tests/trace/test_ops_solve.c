/* The linear-algebra ops (cholesky, matrix_solve, triangular_solve,
 * cholesky_solve, matrix_inverse, matrix_determinant) checked by what
 * they promise (A x = b, L L^T = A, A A^-1 = I, the determinant of a
 * reference elimination) on matrices small enough for weft's loops and
 * large enough for LAPACK, eagerly and traced on 1, 2 and 4 workers (the
 * same bits everywhere), and their errors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_solve, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 120);

typedef enum la_op { CHOL, SOLVE, TRI, CHOL_SOLVE, INV, DET } la_op;

typedef struct la_case {
    la_op op;
    bool lower, adjoint;
} la_case;

static int body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const la_case *c = user;
    switch (c->op) {
    case CHOL: outs[0] = weft_cholesky(cx, a[0]); break;
    case SOLVE: outs[0] = weft_matrix_solve(cx, a[0], a[1], c->adjoint); break;
    case TRI: outs[0] = weft_triangular_solve(cx, a[0], a[1], c->lower, c->adjoint); break;
    case CHOL_SOLVE: outs[0] = weft_cholesky_solve(cx, a[0], a[1]); break;
    case INV: outs[0] = weft_matrix_inverse(cx, a[0]); break;
    case DET: outs[0] = weft_matrix_determinant(cx, a[0]); break;
    }
    return weft_ctx_status(cx);
}

static size_t n_args_of(la_op op)
{
    return op == SOLVE || op == TRI || op == CHOL_SOLVE ? 2 : 1;
}

static int call_on(weft_runtime *r, const la_case *c, weft_tensor *const *args, bool eager,
                   weft_tensor **out)
{
    return op_call(r, body, (void *)c, args, n_args_of(c->op), out, 1, eager);
}

/* c's result, the same bits eagerly and traced on every runtime. */
static weft_tensor *result_everywhere(const la_case *c, weft_tensor *const *args)
{
    weft_tensor *y;
    op_results_everywhere(body, (void *)c, args, n_args_of(c->op), &y, 1, "solve");
    return y;
}

static uint64_t rng = 88172645463325252ULL;

static double uniform(void)
{
    return op_uniform(&rng);
}

/* batch matrices [n, n] with entries in [-1, 1) and, when dominant, n + 1
 * added to the diagonal (well conditioned); spd: m m^T + n I. */
static double *matrices(int64_t batch, int n, bool dominant, bool spd)
{
    size_t nn = (size_t)n * n;
    double *a = malloc(sizeof *a * nn * (size_t)batch);
    cr_assert_not_null(a);
    for (int64_t b = 0; b < batch; b++) {
        double *m = a + b * nn;
        for (size_t i = 0; i < nn; i++)
            m[i] = uniform();
        if (spd) {
            double *t = malloc(sizeof *t * nn);
            cr_assert_not_null(t);
            for (int i = 0; i < n; i++)
                for (int j = 0; j < n; j++) {
                    double s = i == j ? n : 0;
                    for (int k = 0; k < n; k++)
                        s += m[i * n + k] * m[j * n + k];
                    t[i * n + j] = s;
                }
            memcpy(m, t, sizeof *t * nn);
            free(t);
        } else if (dominant) {
            for (int i = 0; i < n; i++)
                m[i * n + i] += n + 1;
        }
    }
    return a;
}

static double at(const weft_tensor *t, size_t i)
{
    return test_element(t, (int64_t)i);
}

/* max |got - want| over rows x cols of matrix b of a batch, relative to
 * 1 + |want|. */
static double worst;
static void near(double got, double want)
{
    double e = fabs(got - want) / (1 + fabs(want));
    if (!(e <= worst))
        worst = isnan(e) ? INFINITY : e;
}

enum { FULL, LOWER_PART, UPPER_PART };

/* The worst error of a x = b over the batch (a's full matrix or one
 * triangle, transposed when adj), into `worst`. */
static void residual(const weft_tensor *a, const weft_tensor *x, const weft_tensor *b,
                     int64_t batch, int n, int k, int part, bool adj)
{
    worst = 0;
    for (int64_t m = 0; m < batch; m++)
        for (int i = 0; i < n; i++)
            for (int j = 0; j < k; j++) {
                double sum = 0;
                for (int q = 0; q < n; q++) {
                    int r = adj ? q : i, col = adj ? i : q;
                    if ((part == LOWER_PART && col > r) || (part == UPPER_PART && col < r))
                        continue;
                    sum += at(a, (size_t)(m * n * n + r * n + col)) *
                           at(x, (size_t)(m * n * k + q * k + j));
                }
                near(sum, at(b, (size_t)(m * n * k + i * k + j)));
            }
}

static const int sizes[] = { 1, 3, 16, 17, 40 };   /* loops up to 16 rows, LAPACK above */
#define N_SIZES (sizeof sizes / sizeof sizes[0])

static double tol_of(weft_dtype dt)
{
    return dt == WEFT_F32 ? 1e-4 : 1e-10;
}

Test(ops_solve, solve_and_inverse_satisfy_their_equations)
{
    const int64_t batch = 3, k = 2;
    for (size_t s = 0; s < N_SIZES; s++)
        for (int f = 0; f < 2; f++) {
            int n = sizes[s];
            weft_dtype dt = f ? WEFT_F64 : WEFT_F32;
            double *a = matrices(batch, n, true, false), *b = matrices(batch * k, n, false, false);
            weft_tensor *args[2] = { test_tensor(dt, 3, (int64_t[]){ batch, n, n }, a),
                                     test_tensor(dt, 3, (int64_t[]){ batch, n, k }, b) };
            for (int adj = 0; adj < 2; adj++) {
                la_case c = { .op = SOLVE, .adjoint = adj };
                weft_tensor *x = result_everywhere(&c, args);
                test_assert_shape(x, dt, 3, (int64_t[]){ batch, n, k }, "solve");
                residual(args[0], x, args[1], batch, n, k, FULL, adj);
                cr_assert(worst <= tol_of(dt), "solve n %d %s adjoint %d: residual %g", n,
                          weft_dtype_name(dt), adj, worst);
                weft_tensor_release(x);
            }
            la_case ic = { .op = INV };
            weft_tensor *inv = result_everywhere(&ic, args);
            worst = 0;
            for (int64_t m = 0; m < batch; m++)
                for (int i = 0; i < n; i++)
                    for (int j = 0; j < n; j++) {
                        double sum = 0;
                        for (int q = 0; q < n; q++)
                            sum += at(args[0], (size_t)(m * n * n + i * n + q)) *
                                   at(inv, (size_t)(m * n * n + q * n + j));
                        near(sum, i == j);
                    }
            cr_assert(worst <= tol_of(dt), "inverse n %d %s: A A^-1 off by %g", n,
                      weft_dtype_name(dt), worst);
            weft_tensor_release(inv);
            weft_tensor_release(args[0]);
            weft_tensor_release(args[1]);
            free(a);
            free(b);
        }
}

/* The determinant by a reference elimination in long double. */
static double det_ref(const double *m, int n)
{
    long double *a = malloc(sizeof *a * (size_t)n * n), det = 1;
    cr_assert_not_null(a);
    for (int i = 0; i < n * n; i++)
        a[i] = m[i];
    for (int j = 0; j < n; j++) {
        int p = j;
        for (int i = j + 1; i < n; i++)
            if (fabsl(a[i * n + j]) > fabsl(a[p * n + j]))
                p = i;
        if (a[p * n + j] == 0) {
            free(a);
            return 0;
        }
        if (p != j) {
            for (int c = 0; c < n; c++) {
                long double t = a[j * n + c];
                a[j * n + c] = a[p * n + c];
                a[p * n + c] = t;
            }
            det = -det;
        }
        det *= a[j * n + j];
        for (int i = j + 1; i < n; i++) {
            long double f = a[i * n + j] / a[j * n + j];
            for (int c = j; c < n; c++)
                a[i * n + c] -= f * a[j * n + c];
        }
    }
    free(a);
    return (double)det;
}

Test(ops_solve, determinant_matches_an_elimination)
{
    const int64_t batch = 4;
    for (size_t s = 0; s < N_SIZES; s++) {
        int n = sizes[s];
        double *a = matrices(batch, n, false, false);
        /* The last matrix singular: two equal rows (when it has two). */
        if (n > 1)
            memcpy(a + (batch - 1) * n * n + n, a + (batch - 1) * n * n, sizeof *a * (size_t)n);
        weft_tensor *t = test_tensor(WEFT_F64, 3, (int64_t[]){ batch, n, n }, a);
        la_case c = { .op = DET };
        weft_tensor *d = result_everywhere(&c, &t);
        test_assert_shape(d, WEFT_F64, 1, (int64_t[]){ batch }, "det");
        /* Errors are relative to Hadamard's bound, the product of the
         * rows' norms (a singular matrix's rounded factors give a tiny
         * determinant, not always 0). */
        for (int64_t m = 0; m < batch; m++) {
            const double *mat = a + m * n * n;
            double want = det_ref(mat, n), got = at(d, (size_t)m), bound = 1;
            for (int i = 0; i < n; i++) {
                double r = 0;
                for (int j = 0; j < n; j++)
                    r += mat[i * n + j] * mat[i * n + j];
                bound *= sqrt(r);
            }
            cr_assert(fabs(got - want) <= 1e-12 * fmax(1, bound),
                      "det n %d matrix %lld: %.17g, want %.17g (bound %g)", n, (long long)m, got,
                      want, bound);
        }
        weft_tensor_release(d);
        weft_tensor_release(t);
        free(a);
    }
}

Test(ops_solve, cholesky_and_triangular_solves)
{
    const int64_t batch = 2, k = 3;
    for (size_t s = 0; s < N_SIZES; s++)
        for (int f = 0; f < 2; f++) {
            int n = sizes[s];
            weft_dtype dt = f ? WEFT_F64 : WEFT_F32;
            double *a = matrices(batch, n, false, true), *b = matrices(batch * k, n, false, false);
            weft_tensor *args[2] = { test_tensor(dt, 3, (int64_t[]){ batch, n, n }, a),
                                     test_tensor(dt, 3, (int64_t[]){ batch, n, k }, b) };
            la_case cc = { .op = CHOL };
            weft_tensor *l = result_everywhere(&cc, args);
            worst = 0;
            for (int64_t m = 0; m < batch; m++)
                for (int i = 0; i < n; i++)
                    for (int j = 0; j < n; j++) {
                        size_t base = (size_t)(m * n * n);
                        if (j > i)
                            cr_assert_eq(at(l, base + (size_t)(i * n + j)), 0);
                        double sum = 0;
                        for (int q = 0; q < n; q++)
                            sum += at(l, base + (size_t)(i * n + q)) *
                                   at(l, base + (size_t)(j * n + q));
                        near(sum, at(args[0], base + (size_t)(i * n + j)));
                    }
            cr_assert(worst <= tol_of(dt), "cholesky n %d %s: L L^T off by %g", n,
                      weft_dtype_name(dt), worst);
            /* Triangular solves with L (lower) and with A's upper triangle. */
            for (int lower = 0; lower < 2; lower++)
                for (int adj = 0; adj < 2; adj++) {
                    weft_tensor *in[2] = { lower ? l : args[0], args[1] };
                    la_case tc = { .op = TRI, .lower = lower, .adjoint = adj };
                    weft_tensor *x = result_everywhere(&tc, in);
                    residual(in[0], x, args[1], batch, n, k, lower ? LOWER_PART : UPPER_PART,
                             adj);
                    cr_assert(worst <= tol_of(dt), "triangular n %d lower %d adjoint %d: %g", n,
                              lower, adj, worst);
                    weft_tensor_release(x);
                }
            weft_tensor *in[2] = { l, args[1] };
            la_case cs = { .op = CHOL_SOLVE };
            weft_tensor *x = result_everywhere(&cs, in);
            residual(args[0], x, args[1], batch, n, k, FULL, false);
            cr_assert(worst <= tol_of(dt) * 10, "cholesky_solve n %d: %g", n, worst);
            weft_tensor_release(x);
            weft_tensor_release(l);
            weft_tensor_release(args[0]);
            weft_tensor_release(args[1]);
            free(a);
            free(b);
        }
}

/* ---- Errors --------------------------------------------------------------- */

Test(ops_solve, singular_and_indefinite_matrices_fail_the_call)
{
    for (size_t s = 0; s < N_SIZES; s++) {
        int n = sizes[s];
        /* Matrix 1 of 2 is zero: singular, and not positive definite. */
        double *a = matrices(2, n, false, true);
        memset(a + n * n, 0, sizeof *a * (size_t)n * n);
        weft_tensor *args[2] = { test_tensor(WEFT_F64, 3, (int64_t[]){ 2, n, n }, a),
                                 test_tensor(WEFT_F64, 3, (int64_t[]){ 2, n, 1 }, a) };
        const la_case cases[] = { { .op = SOLVE }, { .op = INV }, { .op = CHOL } };
        for (size_t c = 0; c < 3; c++)
            for (int eager = 0; eager < 2; eager++) {
                weft_tensor *y = NULL;
                int rc = call_on(rt, &cases[c], args, eager, &y);
                cr_assert_eq(rc, WEFT_EINVAL, "op %d n %d: %s", (int)cases[c].op, n,
                             weft_err_name(rc));
                char want[160];
                snprintf(want, sizeof want, "matrix 1 of f64[2,%d,%d] is %s", n, n,
                         cases[c].op == CHOL ? "not positive definite" : "singular");
                cr_assert(strstr(weft_errmsg(), want), "%s", weft_errmsg());
                cr_assert_null(y);
            }
        weft_tensor_release(args[0]);
        weft_tensor_release(args[1]);
        free(a);
    }
}

static int bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    switch (*(const int *)user) {
    case 0: outs[0] = weft_cholesky(cx, a[0]); break;                           /* [2,3] */
    case 1: outs[0] = weft_matrix_inverse(cx, weft_cast(cx, a[1], WEFT_I32)); break;
    case 2: outs[0] = weft_matrix_solve(cx, a[1], a[0], false); break;           /* rows 2 */
    case 3: outs[0] = weft_matrix_solve(cx, a[1], weft_cast(cx, a[1], WEFT_F32), false); break;
    }
    return weft_ctx_status(cx);
}

Test(ops_solve, errors_name_the_op)
{
    const op_error_case cases[] = {
        { 0, WEFT_ESHAPE, "weft_cholesky: f64[2,3] is not a square matrix (or a batch of them)" },
        { 1, WEFT_EDTYPE, "weft_matrix_inverse: the matrix i32[3,3] is not f32 or f64" },
        { 2, WEFT_ESHAPE, "weft_matrix_solve: the right-hand sides f64[2,3] do not match the "
                          "matrix f64[3,3] in dim 0" },
        { 3, WEFT_EDTYPE, "weft_matrix_solve: the right-hand sides f32[3,3] are not of the "
                          "matrix's dtype (f64[3,3])" },
    };
    double v[9] = { 4, 1, 0, 1, 3, 1, 0, 1, 2 };
    weft_tensor *args[2] = { test_tensor(WEFT_F64, 2, (int64_t[]){ 2, 3 }, v),
                             test_tensor(WEFT_F64, 2, (int64_t[]){ 3, 3 }, v) };
    op_expect_errors(rt, bad_body, cases, sizeof cases / sizeof cases[0], args, 2);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}
