/* weft_matrix_rank on matrices of known rank (products of random factors,
 * with the default tolerance and a given one) and weft_matrix_set_diag on
 * wide, tall and batched matrices, against references built here,
 * eagerly and traced on 1, 2 and 4 workers (the same bits everywhere);
 * and their errors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_matrix_rank, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

typedef struct mr_case {
    bool set_diag;
    double tol;
} mr_case;

static int body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const mr_case *c = user;
    outs[0] = c->set_diag ? weft_matrix_set_diag(cx, a[0], a[1])
                          : weft_matrix_rank(cx, a[0], c->tol);
    return weft_ctx_status(cx);
}

static uint64_t rng = 0x6a09e667f3bcc909ULL;

/* batch m x n matrices, matrix b the product of random m x r_b and r_b x n
 * factors (rank r_b), plus noise of size `noise`. */
static double *of_rank(int batch, int m, int n, const int *ranks, double noise)
{
    double *a = calloc((size_t)(batch * m * n), sizeof *a);
    cr_assert_not_null(a);
    for (int b = 0; b < batch; b++) {
        double *x = a + b * m * n;
        for (int k = 0; k < ranks[b]; k++) {
            double u[64], v[64];
            for (int i = 0; i < m; i++)
                u[i] = op_uniform(&rng);
            for (int j = 0; j < n; j++)
                v[j] = op_uniform(&rng);
            for (int i = 0; i < m; i++)
                for (int j = 0; j < n; j++)
                    x[i * n + j] += u[i] * v[j];
        }
        for (int e = 0; e < m * n; e++)
            x[e] += noise * op_uniform(&rng);
    }
    return a;
}

Test(ops_matrix_rank, counts_the_singular_values_above_the_tolerance)
{
    const int ranks[4] = { 0, 1, 3, 5 };
    const int shapes[3][2] = { { 5, 5 }, { 7, 5 }, { 5, 20 } };   /* 20 columns: LAPACK */
    for (int s = 0; s < 3; s++)
        for (int f = 0; f < 2; f++) {
            int m = shapes[s][0], n = shapes[s][1];
            weft_dtype dt = f ? WEFT_F64 : WEFT_F32;
            double *a = of_rank(4, m, n, ranks, 0);
            weft_tensor *t = test_tensor(dt, 3, (int64_t[]){ 4, m, n }, a);
            mr_case c = { false, -1 };
            weft_tensor *y;
            op_results_everywhere(body, &c, &t, 1, &y, 1, "rank");
            test_assert_shape(y, WEFT_I32, 1, (int64_t[]){ 4 }, "rank");
            for (int b = 0; b < 4; b++)
                cr_assert_eq(test_element(y, b), ranks[b], "%dx%d %s matrix %d: rank %g", m, n,
                             weft_dtype_name(dt), b, test_element(y, b));
            weft_tensor_release(y);
            weft_tensor_release(t);
            free(a);
        }
    /* Noise of 1e-3 makes every matrix full rank, unless tol is above it. */
    const int full[2] = { 2, 2 };
    double *a = of_rank(2, 6, 6, full, 1e-3);
    weft_tensor *t = test_tensor(WEFT_F64, 3, (int64_t[]){ 2, 6, 6 }, a);
    const double tols[2] = { -1, 0.1 };
    const int want[2] = { 6, 2 };
    for (int k = 0; k < 2; k++) {
        mr_case c = { false, tols[k] };
        weft_tensor *y;
        op_results_everywhere(body, &c, &t, 1, &y, 1, "rank tol");
        for (int b = 0; b < 2; b++)
            cr_assert_eq(test_element(y, b), want[k], "tol %g: %g", tols[k], test_element(y, b));
        weft_tensor_release(y);
    }
    weft_tensor_release(t);
    free(a);
}

Test(ops_matrix_rank, set_diag_replaces_the_main_diagonal)
{
    const int shapes[3][3] = { { 2, 3, 5 }, { 2, 5, 3 }, { 1, 4, 4 } };   /* batch, m, n */
    for (int s = 0; s < 3; s++) {
        int batch = shapes[s][0], m = shapes[s][1], n = shapes[s][2], k = m < n ? m : n;
        double a[64], d[16], want[64];
        for (int e = 0; e < batch * m * n; e++)
            a[e] = want[e] = e + 1;
        for (int e = 0; e < batch * k; e++)
            d[e] = -(e + 1) * 0.5;
        for (int b = 0; b < batch; b++)
            for (int i = 0; i < k; i++)
                want[(b * m + i) * n + i] = d[b * k + i];
        weft_tensor *args[2] = { test_tensor(WEFT_F32, 3, (int64_t[]){ batch, m, n }, a),
                                 test_tensor(WEFT_F32, 2, (int64_t[]){ batch, k }, d) };
        mr_case c = { true, 0 };
        weft_tensor *y;
        op_results_everywhere(body, &c, args, 2, &y, 1, "set_diag");
        test_assert_shape(y, WEFT_F32, 3, (int64_t[]){ batch, m, n }, "set_diag");
        for (int e = 0; e < batch * m * n; e++)
            cr_assert_eq(test_element(y, e), want[e], "shape %d element %d: %g", s, e,
                         test_element(y, e));
        weft_tensor_release(y);
        weft_tensor_release(args[0]);
        weft_tensor_release(args[1]);
    }
}

static int bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    switch (*(const int *)user) {
    case 0: outs[0] = weft_matrix_rank(cx, a[1], -1); break;
    case 1: outs[0] = weft_matrix_rank(cx, a[0], INFINITY); break;
    case 2: outs[0] = weft_matrix_set_diag(cx, a[0], a[0]); break;
    case 3: outs[0] = weft_matrix_set_diag(cx, a[0], weft_cast(cx, a[1], WEFT_F32)); break;
    }
    return weft_ctx_status(cx);
}

Test(ops_matrix_rank, errors_name_the_op)
{
    const op_error_case cases[] = {
        { 0, WEFT_ESHAPE, "weft_matrix_rank: f64[3] is not a matrix" },
        { 1, WEFT_EINVAL, "weft_matrix_rank: tol inf is not finite" },
        { 2, WEFT_ESHAPE, "weft_matrix_set_diag: the diagonal f64[2,3] does not fit the matrix "
                          "f64[2,3]" },
        { 3, WEFT_EDTYPE, "weft_matrix_set_diag: the diagonal f32[3] is not of the matrix's "
                          "dtype (f64[2,3])" },
    };
    double v[6] = { 1, 2, 3, 4, 5, 6 };
    weft_tensor *args[2] = { test_tensor(WEFT_F64, 2, (int64_t[]){ 2, 3 }, v),
                             test_tensor(WEFT_F64, 1, (int64_t[]){ 3 }, v) };
    op_expect_errors(rt, bad_body, cases, sizeof cases / sizeof cases[0], args, 2);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}
