/* weft_gradients through eigh, eigvalsh, qr, svd and lu: tall, wide,
 * square and batched matrices, on weft's own loops and (larger) LAPACK's, against
 * central differences of a weighted sum of the factors, eagerly and
 * traced on 1, 2 and 4 workers; and the cases TensorFlow refuses too.
 * Eigen- and singular vectors enter squared: their signs are LAPACK's
 * choice, which a difference must not see flip. */
#include "grad_check.h"

TestSuite(grad_decomp, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 120);

static weft_value *flat(weft_ctx *cx, weft_value *v)
{
    return weft_reshape(cx, v, 1, (const int64_t[]){ -1 });
}

/* The factors' elements in a row, each times a weight of its own. */
static weft_value *spread(weft_ctx *cx, weft_value *const *parts, size_t n)
{
    weft_value *flats[3];
    for (size_t i = 0; i < n; i++)
        flats[i] = flat(cx, parts[i]);
    weft_value *all = n > 1 ? weft_concat(cx, flats, n, 0) : flats[0];
    weft_value *at = weft_cumsum(cx, weft_ones_like(cx, all), 0);
    weft_value *w = weft_sin(cx, weft_add(cx, weft_mul(cx, at, weft_const_f64(cx, 0.37)),
                                          weft_const_f64(cx, 0.5)));
    return weft_mul(cx, all, w);
}

static weft_value *squared(weft_ctx *cx, weft_value *v)
{
    return weft_mul(cx, v, v);
}

static int decomp_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    int which = *(const int *)user;
    weft_value *f[3] = { NULL, NULL, NULL };
    size_t n = 0;
    switch (which) {
    case 0: case 1: case 2:   /* eigh */
        weft_eigh(cx, a[0], f);
        f[1] = squared(cx, f[1]);
        n = 2;
        break;
    case 3:
        f[0] = weft_eigvalsh(cx, a[0]);
        n = 1;
        break;
    case 4: case 5: case 6: case 7:   /* qr */
        weft_qr(cx, a[0], which == 5, f);
        n = 2;
        break;
    case 8:
        weft_svd(cx, a[0], false, false, f);
        n = 1;
        break;
    case 14: case 15: case 16: {   /* lu, its permutation a constant */
        weft_value *lp[2];
        if (weft_lu(cx, a[0], lp) == 0)
            f[0] = lp[0];
        n = 1;
        break;
    }
    case 17: case 18: case 19: {   /* lu_solve, lu_matrix_inverse, lu_reconstruct */
        weft_value *lp[2], *rhs = weft_reshape(cx, weft_range(cx, WEFT_F64, 1, 7, 1), 2,
                                                (const int64_t[]){ 3, 2 });
        if (weft_lu(cx, a[0], lp) == 0)
            f[0] = which == 17 ? weft_lu_solve(cx, lp[0], lp[1], rhs)
                   : which == 18 ? weft_lu_matrix_inverse(cx, lp[0], lp[1])
                                 : weft_lu_reconstruct(cx, lp[0], lp[1]);
        n = 1;
        break;
    }
    default:   /* svd with vectors */
        weft_svd(cx, a[0], which == 12, true, f);
        f[1] = squared(cx, f[1]);
        f[2] = squared(cx, f[2]);
        n = 3;
        break;
    }
    if (weft_ctx_status(cx) < 0)
        return weft_ctx_status(cx);
    outs[0] = spread(cx, f, n);
    return weft_ctx_status(cx);
}

/* n values of a smooth, sign-changing sequence seeded by s. */
static void fill(double *v, int64_t n, double s)
{
    for (int64_t i = 0; i < n; i++)
        v[i] = 0.8 * sin(1.3 * (double)i + s) + 0.1 * cos(0.4 * (double)i * s) +
               (double)(i % 5) * 0.15;
}

Test(grad_decomp, factors_match_differences)
{
    static const struct {
        const char *name;
        grad_arg x;
    } cases[] = {
        { "eigh of a batch of 3 x 3", { 3, { 2, 3, 3 }, NULL } },
        { "eigh of 5 x 5", { 2, { 5, 5 }, NULL } },
        { "eigh of 7 x 7 (LAPACK)", { 2, { 7, 7 }, NULL } },
        { "eigvalsh", { 2, { 4, 4 }, NULL } },
        { "qr of a tall matrix", { 2, { 4, 3 }, NULL } },
        { "qr of a square matrix, full_matrices", { 2, { 3, 3 }, NULL } },
        { "qr of a wide matrix", { 2, { 2, 4 }, NULL } },
        { "qr of a batch of tall matrices", { 3, { 2, 3, 2 }, NULL } },
        { "singular values", { 2, { 3, 4 }, NULL } },
        { "svd of a tall matrix", { 2, { 4, 3 }, NULL } },
        { "svd of a wide matrix", { 2, { 3, 5 }, NULL } },
        { "svd of a batch of square matrices", { 3, { 2, 3, 3 }, NULL } },
        { "svd of a square matrix, full_matrices", { 2, { 3, 3 }, NULL } },
        { "svd of 10 x 9 (LAPACK)", { 2, { 10, 9 }, NULL } },
        { "lu of 3 x 3", { 2, { 3, 3 }, NULL } },
        { "lu of a batch of 4 x 4", { 3, { 2, 4, 4 }, NULL } },
        { "lu of 9 x 9", { 2, { 9, 9 }, NULL } },
        { "lu_solve of lu's factors", { 2, { 3, 3 }, NULL } },
        { "lu_matrix_inverse of lu's factors", { 2, { 3, 3 }, NULL } },
        { "lu_reconstruct of lu's factors", { 2, { 3, 3 }, NULL } },
    };
    for (int i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
        double xv[GRAD_CHECK_MAX_ELEMENTS];
        grad_arg x = cases[i].x;
        fill(xv, test_numel(x.rank, x.dims), 0.3 + i);
        x.v = xv;
        grad_case c = { decomp_body, &i, 1, 1 };
        expect_gradients(&c, &x, cases[i].name);
    }
}

static int full_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    bool svd = *(const int *)user == 1;
    weft_value *f[3];
    if ((svd ? weft_svd(cx, a[0], true, true, f) : weft_qr(cx, a[0], true, f)) < 0)
        return weft_ctx_status(cx);
    outs[0] = weft_sum(cx, squared(cx, f[0]), WEFT_ALL_AXES);
    return weft_ctx_status(cx);
}

static int refused_case(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    weft_value *g;
    if (weft_gradients(cx, full_body, user, a, 1, 1, NULL, &g) < 0)
        return weft_ctx_status(cx);
    outs[0] = g;
    return weft_ctx_status(cx);
}

Test(grad_decomp, full_matrices_tensorflow_refuses_fail_the_call)
{
    double v[12];
    fill(v, 12, 0.4);
    weft_tensor *a = test_tensor(WEFT_F64, 2, (const int64_t[]){ 4, 3 }, v);
    static const op_error_case cases[] = {
        { 0, WEFT_EINVAL, "weft_gradients: no gradient for qr with full_matrices of a matrix of "
                          "more rows than columns" },
        { 1, WEFT_EINVAL, "weft_gradients: no gradient for svd with full_matrices of a matrix "
                          "that is not square" },
    };
    op_expect_errors(rt, refused_case, cases, 2, &a, 1);
    weft_tensor_release(a);
}
