/* weft_tridiagonal_solve checked by the residual of a x = rhs on batches
 * of random tridiagonal systems (not diagonally dominant, so that rows
 * swap), several right-hand sides or a vector, of sizes 1 to 100, in f32
 * and f64; on systems that only pivoting solves (a zero diagonal); on a
 * singular one; eagerly and traced on 1, 2 and 4 workers (the same bits
 * everywhere); and its errors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_tridiag, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

static int body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_tridiagonal_solve(cx, a[0], a[1]);
    return weft_ctx_status(cx);
}

static uint64_t rng = 0x3c6ef372fe94f82bULL;

/* Element (i, j) of system s of compact diagonals v ([batch, 3, m]). */
static double entry(const double *v, int64_t m, int64_t s, int64_t i, int64_t j)
{
    const double *d = v + s * 3 * m;
    if (j == i + 1)
        return d[i];              /* superdiagonal */
    if (j == i)
        return d[m + i];          /* diagonal */
    if (j == i - 1)
        return d[2 * m + i];      /* subdiagonal, element i */
    return 0;
}

Test(ops_tridiag, solutions_satisfy_the_systems)
{
    const int64_t sizes[] = { 1, 2, 3, 10, 100 }, batch = 3;
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
        for (int shape = 0; shape < 2; shape++)   /* k = 4 columns, or a vector */
            for (int f = 0; f < 2; f++) {
                int64_t m = sizes[z], k = shape ? 1 : 4;
                weft_dtype dt = f ? WEFT_F64 : WEFT_F32;
                double *v = malloc(sizeof *v * (size_t)(batch * 3 * m));
                double *b = malloc(sizeof *b * (size_t)(batch * m * k));
                cr_assert(v && b);
                for (int64_t e = 0; e < batch * 3 * m; e++)
                    v[e] = (float)op_uniform(&rng);   /* exact in f32 */
                for (int64_t e = 0; e < batch * m * k; e++)
                    b[e] = (float)op_uniform(&rng);
                weft_tensor *args[2] = {
                    test_tensor(dt, 3, (int64_t[]){ batch, 3, m }, v),
                    shape ? test_tensor(dt, 2, (int64_t[]){ batch, m }, b)
                          : test_tensor(dt, 3, (int64_t[]){ batch, m, k }, b)
                };
                weft_tensor *x;
                op_results_everywhere(body, NULL, args, 2, &x, 1, "tridiagonal");
                cr_assert_eq(weft_tensor_numel(x), batch * m * k);
                /* The residual, relative to |a| |x| + |b| (random systems
                 * can be ill-conditioned; this bounds a stable solve). */
                double worst = 0;
                for (int64_t s = 0; s < batch; s++)
                    for (int64_t i = 0; i < m; i++)
                        for (int64_t c = 0; c < k; c++) {
                            double r = -b[(s * m + i) * k + c], scale = fabs(r);
                            for (int64_t j = i - 1; j <= i + 1; j++) {
                                if (j < 0 || j >= m)
                                    continue;
                                double t = entry(v, m, s, i, j) *
                                           test_element(x, (s * m + j) * k + c);
                                r += t;
                                scale += fabs(t);
                            }
                            worst = fmax(worst, fabs(r) / scale);
                        }
                cr_assert(worst <= (f ? 1e-13 : 1e-5), "m %lld k %lld %s: residual %g",
                          (long long)m, (long long)k, weft_dtype_name(dt), worst);
                weft_tensor_release(x);
                weft_tensor_release(args[0]);
                weft_tensor_release(args[1]);
                free(v);
                free(b);
            }
}

/* [[0, 1, 0, 0], [2, 0, 3, 0], [0, 4, 0, 5], [0, 0, 6, 0]] (determinant
 * 60) has only zeros on its diagonal: only row swaps solve it (x = 1s for
 * b = [1, 5, 9, 6]); a tiny pivot must be swapped away too.
 * [[0, 1, 0], [2, 0, 3], [0, 4, 0]] is singular (rows 1 and 3 are
 * proportional) and fails the call. */
/* The system of compact diagonals v (m equations) and rhs b solves to
 * all 1s, the same bits everywhere. */
static void expect_ones(const double *v, const double *b, int64_t m, const char *what)
{
    weft_tensor *args[2] = { test_tensor(WEFT_F64, 2, (int64_t[]){ 3, m }, v),
                             test_tensor(WEFT_F64, 1, &m, b) };
    weft_tensor *x;
    op_results_everywhere(body, NULL, args, 2, &x, 1, what);
    for (int64_t i = 0; i < m; i++)
        cr_assert(fabs(test_element(x, i) - 1) <= 1e-15, "%s: x[%lld] = %.17g", what,
                  (long long)i, test_element(x, i));
    weft_tensor_release(x);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

Test(ops_tridiag, pivoting_and_singular_systems)
{
    double v[12] = { 1, 3, 5, 99, 0, 0, 0, 0, 99, 2, 4, 6 }, b[4] = { 1, 5, 9, 6 };
    expect_ones(v, b, 4, "zero diagonal");
    /* [[1e-20, 1], [1, 1]] x = [1, 2]: x = [1, 1] to 1e-20; eliminating
     * with the tiny pivot instead of swapping gives x[0] = 0. */
    double tiny[6] = { 1, 99, 1e-20, 1, 99, 1 }, b2[2] = { 1, 2 };
    expect_ones(tiny, b2, 2, "tiny pivot");
    double singular[9] = { 1, 3, 99, 0, 0, 0, 99, 2, 4 };
    weft_tensor *args[2] = { test_tensor(WEFT_F64, 2, (int64_t[]){ 3, 3 }, singular),
                             test_tensor(WEFT_F64, 1, (int64_t[]){ 3 }, b) };
    for (int eager = 0; eager < 2; eager++) {
        weft_tensor *y = NULL;
        int rc = op_call(rt, body, NULL, args, 2, &y, 1, eager);
        cr_assert_eq(rc, WEFT_EINVAL, "%s", weft_err_name(rc));
        cr_assert(strstr(weft_errmsg(), "weft_tridiagonal_solve: system 0 of f64[3,3] is "
                                        "singular"), "%s", weft_errmsg());
        cr_assert_null(y);
    }
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

static int bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    switch (*(const int *)user) {
    case 0: outs[0] = weft_tridiagonal_solve(cx, a[1], a[1]); break;   /* [2,3]: not 3 rows */
    case 1: outs[0] = weft_tridiagonal_solve(cx, a[0], weft_cast(cx, a[1], WEFT_F32)); break;
    case 2: outs[0] = weft_tridiagonal_solve(cx, a[0], a[1]); break;   /* m 3 against rows 2 */
    }
    return weft_ctx_status(cx);
}

Test(ops_tridiag, errors_name_the_op)
{
    const op_error_case cases[] = {
        { 0, WEFT_ESHAPE, "weft_tridiagonal_solve: the diagonals f64[2,3] are not [..., 3, m]" },
        { 1, WEFT_EDTYPE, "weft_tridiagonal_solve: the diagonals f64[3,3] and right-hand sides "
                          "f32[2,3] are not f32 or f64 of one dtype" },
        { 2, WEFT_ESHAPE, "weft_tridiagonal_solve: the right-hand sides f64[2,3] do not fit the "
                          "diagonals f64[3,3]" },
    };
    double v[9] = { 1, 1, 0, 2, 2, 2, 0, 1, 1 };
    weft_tensor *args[2] = { test_tensor(WEFT_F64, 2, (int64_t[]){ 3, 3 }, v),
                             test_tensor(WEFT_F64, 2, (int64_t[]){ 2, 3 }, v) };
    op_expect_errors(rt, bad_body, cases, sizeof cases / sizeof cases[0], args, 2);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}
