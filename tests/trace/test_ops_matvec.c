/* matvec and tridiagonal_matmul against loops written here: batches,
 * matvec's transpose, tridiagonal products of 1 to 5 rows whose unread
 * corners hold inf (the result stays finite), both dtypes, a batch
 * broadcast, dims unknown while tracing; the same bits eagerly and traced
 * on 1, 2 and 4 workers; the refused calls. */
#include <math.h>
#include <stdlib.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_matvec, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

static int matvec_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    outs[0] = weft_matvec(cx, a[0], a[1], *(const bool *)user);
    return weft_ctx_status(cx);
}

static double *draw(int64_t n, uint64_t seed)
{
    double *v = malloc((size_t)n * sizeof *v);
    cr_assert_not_null(v);
    uint64_t s = seed * 7919 + 3;
    for (int64_t i = 0; i < n; i++)
        v[i] = op_uniform(&s);
    return v;
}

Test(ops_matvec, matvec_against_a_loop)
{
    enum { B = 3, M = 4, N = 5 };
    for (int t = 0; t < 2; t++) {
        bool transpose = t == 1;
        int64_t rows = transpose ? N : M, cols = transpose ? M : N;   /* of op(a) */
        int64_t ad[3] = { B, M, N }, bd[2] = { B, cols };
        double *a = draw(B * M * N, 1), *b = draw(B * cols, 2);
        weft_tensor *args[2] = { test_tensor(WEFT_F64, 3, ad, a), test_tensor(WEFT_F64, 2, bd, b) };
        weft_tensor *out;
        op_results_everywhere(matvec_body, &transpose, args, 2, &out, 1, "matvec");
        int64_t yd[2] = { B, rows };
        test_assert_shape(out, WEFT_F64, 2, yd, "matvec");
        for (int64_t q = 0; q < B; q++)
            for (int64_t i = 0; i < rows; i++) {
                double want = 0;
                for (int64_t k = 0; k < cols; k++)
                    want += (transpose ? a[(q * M + k) * N + i] : a[(q * M + i) * N + k]) *
                            b[q * cols + k];
                double got = test_element(out, q * rows + i);
                cr_assert(fabs(got - want) <= 1e-14, "transpose %d (%lld, %lld): %g, want %g", t,
                          (long long)q, (long long)i, got, want);
            }
        weft_tensor_release(out);
        weft_tensor_release(args[0]);
        weft_tensor_release(args[1]);
        free(a);
        free(b);
    }
}

static int tri_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_tridiagonal_matmul(cx, a[0], a[1]);
    return weft_ctx_status(cx);
}

/* The product of each batch's tridiagonal matrix (diagonals [B, 3, m])
 * and rhs [B, m, n], reading only the entries TensorFlow reads. */
static double tri_ref(const double *d, const double *x, int64_t q, int64_t m, int64_t n,
                      int64_t i, int64_t j)
{
    const double *sup = d + q * 3 * m, *dia = sup + m, *sub = dia + m;
    const double *xq = x + q * m * n;
    double y = dia[i] * xq[i * n + j];
    if (i + 1 < m)
        y += sup[i] * xq[(i + 1) * n + j];
    if (i > 0)
        y += sub[i] * xq[(i - 1) * n + j];
    return y;
}

Test(ops_matvec, tridiagonal_matmul_against_a_loop)
{
    enum { B = 2, N = 3 };
    for (int64_t m = 1; m <= 5; m++)
        for (int f = 0; f < 2; f++) {
            weft_dtype dt = f ? WEFT_F32 : WEFT_F64;
            double *d = draw(B * 3 * m, 10 + (uint64_t)m), *x = draw(B * m * N, 20 + (uint64_t)m);
            for (int64_t q = 0; q < B; q++) {
                d[q * 3 * m + m - 1] = INFINITY;   /* the superdiagonal's last */
                d[q * 3 * m + 2 * m] = -INFINITY;  /* the subdiagonal's first */
                if (f)
                    for (int64_t e = 0; e < 3 * m; e++)
                        d[q * 3 * m + e] = (float)d[q * 3 * m + e];
            }
            if (f)
                for (int64_t e = 0; e < B * m * N; e++)
                    x[e] = (float)x[e];
            int64_t dd[3] = { B, 3, m }, xd[3] = { B, m, N };
            weft_tensor *args[2] = { test_tensor(dt, 3, dd, d), test_tensor(dt, 3, xd, x) };
            weft_tensor *out;
            op_results_everywhere(tri_body, NULL, args, 2, &out, 1, "tridiagonal_matmul");
            test_assert_shape(out, dt, 3, xd, "tridiagonal_matmul");
            for (int64_t q = 0; q < B; q++)
                for (int64_t i = 0; i < m; i++)
                    for (int64_t j = 0; j < N; j++) {
                        double want = tri_ref(d, x, q, m, N, i, j);
                        double got = test_element(out, (q * m + i) * N + j);
                        cr_assert(fabs(got - want) <= (f ? 1e-6 : 1e-15), "m %lld %s (%lld, %lld, "
                                  "%lld): %g, want %g", (long long)m, weft_dtype_name(dt),
                                  (long long)q, (long long)i, (long long)j, got, want);
                    }
            weft_tensor_release(out);
            weft_tensor_release(args[0]);
            weft_tensor_release(args[1]);
            free(d);
            free(x);
        }
}

Test(ops_matvec, tridiagonal_matmul_with_unknown_dims_and_a_broadcast_batch)
{
    /* diagonals [1, 3, 4] against rhs [2, 4, 2], traced with every dim
     * of rhs but the rank unknown. */
    enum { M = 4, N = 2 };
    double *d = draw(3 * M, 31), *x = draw(2 * M * N, 32);
    weft_tensor *args[2] = { test_tensor(WEFT_F64, 3, (const int64_t[]){ 1, 3, M }, d),
                             test_tensor(WEFT_F64, 3, (const int64_t[]){ 2, M, N }, x) };
    weft_spec sig[2] = { { WEFT_F64, 3, { 1, 3, -1 } }, { WEFT_F64, 3, { -1, -1, -1 } } };
    weft_function *fn = op_signature_function(rts[1], tri_body, NULL, sig, 2);
    weft_arg a[2] = { weft_arg_tensor(args[0]), weft_arg_tensor(args[1]) };
    weft_tensor *got = NULL;
    cr_assert_eq(weft_function_call(fn, a, 2, &got, 1), 0, "%s", weft_errmsg());
    test_assert_shape(got, WEFT_F64, 3, (const int64_t[]){ 2, M, N }, "broadcast batch");
    for (int64_t q = 0; q < 2; q++)
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                double want = tri_ref(d, x + q * M * N, 0, M, N, i, j);
                cr_assert(fabs(test_element(got, (q * M + i) * N + j) - want) <= 1e-15);
            }
    weft_tensor_release(got);
    op_destroy_traced_once(&fn);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
    free(d);
    free(x);
}

enum { MATVEC_RANK, TRI_DTYPE, TRI_ROWS, TRI_THREE };

static int bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    /* a: f64[2,3,4] diagonals, f64[2,4,5] rhs, i32[2,4,5], f64[2,5,5]. */
    switch (*(const int *)user) {
    case MATVEC_RANK: outs[0] = weft_matvec(cx, a[1], weft_const_f64(cx, 1), false); break;
    case TRI_DTYPE: outs[0] = weft_tridiagonal_matmul(cx, a[0], a[2]); break;
    case TRI_ROWS: outs[0] = weft_tridiagonal_matmul(cx, a[0], a[3]); break;
    default: outs[0] = weft_tridiagonal_matmul(cx, a[1], a[3]); break;
    }
    return weft_ctx_status(cx);
}

Test(ops_matvec, refused_calls_name_the_op)
{
    const double v[64] = { 0 };
    weft_tensor *args[4] = { test_tensor(WEFT_F64, 3, (const int64_t[]){ 2, 3, 4 }, v),
                             test_tensor(WEFT_F64, 3, (const int64_t[]){ 2, 4, 5 }, v),
                             test_tensor(WEFT_I32, 3, (const int64_t[]){ 2, 4, 5 }, v),
                             test_tensor(WEFT_F64, 3, (const int64_t[]){ 2, 5, 5 }, v) };
    const op_error_case cases[] = {
        { MATVEC_RANK, WEFT_ESHAPE, "weft_matvec: a f64[2,4,5] is not [..., m, n] or b f64[] is not" },
        { TRI_DTYPE, WEFT_EDTYPE, "weft_tridiagonal_matmul: the diagonals f64[2,3,4] and rhs "
                                  "i32[2,4,5] are not both f32 or both f64" },
        { TRI_ROWS, WEFT_ESHAPE, "weft_tridiagonal_matmul: the diagonals f64[2,3,4] are not "
                                 "[..., 3, m] with rhs f64[2,5,5]" },
        { TRI_THREE, WEFT_ESHAPE, "weft_tridiagonal_matmul: the diagonals f64[2,4,5] are not" },
    };
    op_expect_errors(rts[1], bad_body, cases, sizeof cases / sizeof *cases, args, 4);
    for (int k = 0; k < 4; k++)
        weft_tensor_release(args[k]);
}
