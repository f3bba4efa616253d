/* banded_triangular_solve: against triangular_solve of the dense matrix
 * the bands describe (lower and upper, with and without the adjoint, one
 * band, more bands than rows, a batch), the padding never read (NaN
 * there), f32 as the f64 solve rounded once, a zero on the diagonal (inf,
 * no error), gradients for both inputs against central differences, the
 * same bits eagerly and traced on 1, 2 and 4 workers, the refused calls. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "grad_check.h"

TestSuite(ops_banded, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

typedef struct band_case {
    bool lower, adjoint, dense;
} band_case;

/* a[0] the bands, a[1] the right-hand sides; dense: a[2] the matrix. */
static int band_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const band_case *c = user;
    outs[0] = c->dense ? weft_triangular_solve(cx, a[2], a[1], c->lower, c->adjoint)
                       : weft_banded_triangular_solve(cx, a[0], a[1], c->lower, c->adjoint);
    return weft_ctx_status(cx);
}

/* The dense [batch, m, m] matrices of bands [batch, k, m]: lower, a[i][i -
 * b] = bands[b][i]; upper, a[i][i + d] = bands[k - 1 - d][i]. */
static void densify(int64_t batch, int64_t k, int64_t m, bool lower, const double *bands,
                    double *a)
{
    memset(a, 0, sizeof *a * (size_t)(batch * m * m));
    for (int64_t s = 0; s < batch; s++)
        for (int64_t b = 0; b < k; b++)
            for (int64_t i = 0; i < m; i++) {
                int64_t d = lower ? b : k - 1 - b, col = lower ? i - d : i + d;
                if (col >= 0 && col < m)
                    a[(s * m + i) * m + col] = bands[(s * k + b) * m + i];
            }
}

/* Random bands: off-diagonal entries in [-0.5, 0.5), the diagonal in
 * [2, 3), the padding NaN. */
static void random_bands(uint64_t *s, int64_t batch, int64_t k, int64_t m, bool lower, double *v)
{
    for (int64_t q = 0; q < batch; q++)
        for (int64_t b = 0; b < k; b++)
            for (int64_t i = 0; i < m; i++) {
                int64_t d = lower ? b : k - 1 - b, col = lower ? i - d : i + d;
                double *e = &v[(q * k + b) * m + i];
                *e = col < 0 || col >= m ? NAN : d == 0 ? 2.5 + op_uniform(s) / 2
                                                        : op_uniform(s) / 2;
            }
}

static void compare_with_dense(int64_t batch, int64_t k, int64_t m, int64_t n)
{
    uint64_t s = (uint64_t)(k * 131 + m);
    size_t nb = (size_t)(batch * k * m), nr = (size_t)(batch * m * n);
    double *bands = malloc(nb * sizeof *bands), *rhs = malloc(nr * sizeof *rhs),
           *dense = malloc((size_t)(batch * m * m) * sizeof *dense);
    cr_assert(bands && rhs && dense);
    for (size_t e = 0; e < nr; e++)
        rhs[e] = op_uniform(&s);
    for (int f = 0; f < 4; f++) {
        band_case c = { .lower = f & 1, .adjoint = f & 2 };
        random_bands(&s, batch, k, m, c.lower, bands);
        densify(batch, k, m, c.lower, bands, dense);
        weft_tensor *args[3] = { test_tensor(WEFT_F64, 3, (const int64_t[]){ batch, k, m }, bands),
                                 test_tensor(WEFT_F64, 3, (const int64_t[]){ batch, m, n }, rhs),
                                 test_tensor(WEFT_F64, 3, (const int64_t[]){ batch, m, m },
                                             dense) };
        weft_tensor *got, *want;
        op_results_everywhere(band_body, &c, args, 3, &got, 1, "banded_triangular_solve");
        c.dense = true;
        cr_assert_eq(op_call(rts[0], band_body, &c, args, 3, &want, 1, false), 0, "%s",
                     weft_errmsg());
        test_assert_shape(got, WEFT_F64, 3, (const int64_t[]){ batch, m, n }, "banded");
        for (int64_t e = 0; e < (int64_t)nr; e++) {
            double g = test_element(got, e), w = test_element(want, e);
            cr_assert(fabs(g - w) <= 1e-13 * (1 + fabs(w)), "k %lld m %lld lower %d adjoint %d "
                      "element %lld: %.17g, want %.17g", (long long)k, (long long)m, c.lower,
                      c.adjoint, (long long)e, g, w);
        }
        weft_tensor_release(got);
        weft_tensor_release(want);
        for (int q = 0; q < 3; q++)
            weft_tensor_release(args[q]);
    }
    free(bands);
    free(rhs);
    free(dense);
}

Test(ops_banded, matches_the_dense_triangular_solve)
{
    compare_with_dense(2, 3, 7, 2);
    compare_with_dense(1, 1, 5, 3);    /* the diagonal alone */
    compare_with_dense(3, 6, 4, 1);    /* more bands than rows: the extra ones all padding */
    compare_with_dense(1, 5, 40, 4);
}

Test(ops_banded, f32_is_the_f64_solve_rounded_once_and_a_zero_pivot_is_inf)
{
    enum { K = 2, M = 6, N = 2 };
    uint64_t s = 5;
    double bands[K * M], rhs[M * N];
    random_bands(&s, 1, K, M, true, bands);   /* lower: row 0 the diagonal */
    for (int e = 0; e < K * M; e++)
        bands[e] = isnan(bands[e]) ? 0 : (float)bands[e];
    for (int e = 0; e < M * N; e++)
        rhs[e] = (float)op_uniform(&s);
    band_case c = { .lower = true };
    weft_tensor *o[2];
    for (int w = 0; w < 2; w++) {
        weft_dtype dt = w ? WEFT_F64 : WEFT_F32;
        weft_tensor *args[2] = { test_tensor(dt, 2, (const int64_t[]){ K, M }, bands),
                                 test_tensor(dt, 2, (const int64_t[]){ M, N }, rhs) };
        op_results_everywhere(band_body, &c, args, 2, &o[w], 1, "banded f32 / f64");
        weft_tensor_release(args[0]);
        weft_tensor_release(args[1]);
    }
    for (int e = 0; e < M * N; e++)
        cr_assert_eq(test_element(o[0], e), (double)(float)test_element(o[1], e), "element %d", e);
    weft_tensor_release(o[0]);
    weft_tensor_release(o[1]);
    /* A zero pivot in row 3: rows 3 on are inf or NaN, rows 0-2 finite. */
    bands[3] = 0;
    weft_tensor *args[2] = { test_tensor(WEFT_F64, 2, (const int64_t[]){ K, M }, bands),
                             test_tensor(WEFT_F64, 2, (const int64_t[]){ M, N }, rhs) };
    weft_tensor *out;
    op_results_everywhere(band_body, &c, args, 2, &out, 1, "zero pivot");
    for (int e = 0; e < M * N; e++)
        cr_assert(e < 3 * N ? isfinite(test_element(out, e)) : !isfinite(test_element(out, e)),
                  "element %d: %g", e, test_element(out, e));
    weft_tensor_release(out);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

/* sum(w * banded_triangular_solve(bands, rhs)) with fixed weights. */
static int weighted_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    weft_value *x = weft_banded_triangular_solve(cx, a[0], a[1], ((const band_case *)user)->lower,
                                                 ((const band_case *)user)->adjoint);
    weft_value *w = weft_sin(cx, weft_cumsum(cx, weft_ones_like(cx, x), -2));
    outs[0] = weft_sum(cx, weft_mul(cx, x, w), WEFT_ALL_AXES);
    return weft_ctx_status(cx);
}

Test(ops_banded, gradients_match_differences)
{
    enum { B = 2, K = 3, M = 5, N = 2 };
    uint64_t s = 17;
    double rhs[B * M * N];
    for (int e = 0; e < B * M * N; e++)
        rhs[e] = op_uniform(&s);
    for (int f = 0; f < 4; f++) {
        band_case c = { .lower = f & 1, .adjoint = f & 2 };
        double bands[B * K * M];
        random_bands(&s, B, K, M, c.lower, bands);
        for (int e = 0; e < B * K * M; e++)
            bands[e] = isnan(bands[e]) ? 0.25 : bands[e];   /* padding: its gradient is 0 */
        grad_case g = { weighted_body, &c, 2, 2 };
        const grad_arg args[2] = { { 3, { B, K, M }, bands }, { 3, { B, M, N }, rhs } };
        expect_gradients(&g, args, c.lower ? (c.adjoint ? "lower adjoint" : "lower")
                                           : (c.adjoint ? "upper adjoint" : "upper"));
    }
}

typedef enum bad_call { MIXED_DTYPES, ROWS_DIFFER, NO_BANDS } bad_call;

/* args: f64 bands [2, 4], f64 rhs [4, 1], f32 rhs [4, 1], f64 rhs [3, 1]. */
static int bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    switch ((bad_call) * (const int *)user) {
    case MIXED_DTYPES: outs[0] = weft_banded_triangular_solve(cx, a[0], a[2], true, false); break;
    case ROWS_DIFFER: outs[0] = weft_banded_triangular_solve(cx, a[0], a[3], true, false); break;
    case NO_BANDS:
        outs[0] = weft_banded_triangular_solve(
            cx, weft_slice(cx, a[0], (const int64_t[]){ 0, 0 }, (const int64_t[]){ 0, WEFT_END },
                           NULL),
            a[1], true, false);
        break;
    }
    return weft_ctx_status(cx);
}

Test(ops_banded, refused_calls_name_the_op)
{
    const double v[8] = { 1, 1, 1, 1, 0, 0, 0, 0 };
    weft_tensor *args[4] = { test_tensor(WEFT_F64, 2, (const int64_t[]){ 2, 4 }, v),
                             test_tensor(WEFT_F64, 2, (const int64_t[]){ 4, 1 }, v),
                             test_tensor(WEFT_F32, 2, (const int64_t[]){ 4, 1 }, v),
                             test_tensor(WEFT_F64, 2, (const int64_t[]){ 3, 1 }, v) };
    const op_error_case cases[] = {
        { MIXED_DTYPES, WEFT_EDTYPE, "weft_banded_triangular_solve: the bands f64[2,4] and "
                                     "right-hand sides f32[4,1] are not" },
        { ROWS_DIFFER, WEFT_ESHAPE, "weft_banded_triangular_solve: the bands f64[2,4] and "
                                    "right-hand sides f64[3,1] are not" },
        { NO_BANDS, WEFT_ESHAPE, "weft_banded_triangular_solve: the bands f64[0,4]" },
    };
    op_expect_errors(rts[1], bad_body, cases, sizeof cases / sizeof *cases, args, 4);
    for (int k = 0; k < 4; k++)
        weft_tensor_release(args[k]);
}
