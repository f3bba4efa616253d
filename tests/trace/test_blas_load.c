/* libweft opens OpenBLAS itself when it first asks whether a product may
 * call the BLAS (trace/blas_api.h): a process that builds runtimes and
 * runs ops other than products never loads it, the first product does,
 * and a library that does not load leaves weft's own loops to compute
 * products and factorizations, with eig refused.  This suite's program
 * does not link OpenBLAS (tests/meson.build); criterion runs each test in
 * a fresh process. */
#include <dlfcn.h>
#include <math.h>
#include <string.h>

#include "op_calls.h"
#include "suite_runtimes.h"
#include "trace/blas.h"

TestSuite(blas_load, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

static bool library_loaded(const char *file)
{
    void *h = dlopen(file, RTLD_NOW | RTLD_NOLOAD);
    if (h)
        dlclose(h);
    return h != NULL;
}

static int add_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_add(cx, a[0], a[1]);
    return weft_ctx_status(cx);
}

static int matmul_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_matmul(cx, a[0], a[1]);
    return weft_ctx_status(cx);
}

static int cholesky_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_cholesky(cx, a[0]);
    return weft_ctx_status(cx);
}

static int eigvals_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_eigvals(cx, a[0]);
    return weft_ctx_status(cx);
}

/* A [rows, cols] tensor of dt with small distinct values. */
static weft_tensor *matrix(weft_dtype dt, int64_t rows, int64_t cols, int seed)
{
    double v[64 * 64];
    cr_assert(rows * cols <= 64 * 64);
    for (int64_t i = 0; i < rows * cols; i++)
        v[i] = (double)((i * 7 + seed * 13) % 17 - 8) / 8;
    return test_tensor(dt, 2, (const int64_t[]){ rows, cols }, v);
}

/* c is a b, computed here in f64, within tol of its largest entry. */
static void expect_product(const weft_tensor *a, const weft_tensor *b, const weft_tensor *c,
                           double tol)
{
    int64_t m = weft_tensor_dims(a)[0], k = weft_tensor_dims(a)[1], n = weft_tensor_dims(b)[1];
    test_assert_shape(c, weft_tensor_dtype(a), 2, (const int64_t[]){ m, n }, "a b");
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double want = 0;
            for (int64_t p = 0; p < k; p++)
                want += test_element(a, i * k + p) * test_element(b, p * n + j);
            cr_assert(fabs(test_element(c, i * n + j) - want) <= tol * (1 + fabs(want)),
                      "c[%lld,%lld] is %.17g, not %.17g", (long long)i, (long long)j,
                      test_element(c, i * n + j), want);
        }
}

Test(blas_load, the_first_product_opens_the_library)
{
    const char *file = weft__blas_library();
    if (!*file)
        cr_skip_test("this weft has no BLAS");
    cr_assert_not(library_loaded(file), "%s was loaded before anything ran", file);
    weft_tensor *a = matrix(WEFT_F32, 64, 64, 1), *b = matrix(WEFT_F32, 64, 64, 2), *c = NULL;
    for (int eager = 0; eager < 2; eager++) {
        cr_assert_eq(op_call(rts[1], add_body, NULL, (weft_tensor *[]){ a, b }, 2, &c, 1, eager),
                     0, "%s", weft_errmsg());
        weft_tensor_release(c);
    }
    cr_assert_not(library_loaded(file), "an add loaded %s", file);
    cr_assert_eq(op_call(rts[1], matmul_body, NULL, (weft_tensor *[]){ a, b }, 2, &c, 1, false),
                 0, "%s", weft_errmsg());
    cr_assert(library_loaded(file), "a product of f32[64,64] did not load %s", file);
    cr_assert(weft__blas_available());
    expect_product(a, b, c, 1e-5);
    weft_tensor_release(a);
    weft_tensor_release(b);
    weft_tensor_release(c);
}

Test(blas_load, a_missing_library_leaves_weft_loops)
{
    const char *real = weft__blas_library();
    if (!*real)
        cr_skip_test("this weft has no BLAS");
    weft__blas_set_library("libweft-test-no-such-blas.so.0");
    weft_tensor *a = matrix(WEFT_F64, 48, 40, 3), *b = matrix(WEFT_F64, 40, 56, 4);
    weft_tensor *outs[N_RT];
    op_results_everywhere(matmul_body, NULL, (weft_tensor *[]){ a, b }, 2, outs, 1,
                          "matmul f64[48,40] f64[40,56]");
    expect_product(a, b, outs[0], 1e-12);
    weft_tensor_release(outs[0]);
    cr_assert_not(weft__blas_available());

    /* Cholesky of 40 rows (LAPACK's size) on the loops: l l^T is s. */
    enum { N = 40 };
    double s[N * N];
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            s[i * N + j] = (i == j ? N : 0) + 1.0 / (1 + i + j);
    weft_tensor *spd = test_tensor(WEFT_F64, 2, (const int64_t[]){ N, N }, s), *l = NULL;
    op_results_everywhere(cholesky_body, NULL, &spd, 1, &l, 1, "cholesky f64[40,40]");
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            double sum = 0;
            for (int p = 0; p < N; p++)
                sum += test_element(l, i * N + p) * test_element(l, j * N + p);
            cr_assert(fabs(sum - s[i * N + j]) <= 1e-12 * N, "(l l^T)[%d,%d] is %.17g, not %.17g",
                      i, j, sum, s[i * N + j]);
        }
    weft_tensor_release(l);

    /* eig has no loops of weft's: refused, naming what did not load. */
    for (int eager = 0; eager < 2; eager++) {
        weft_tensor *e = NULL;
        cr_assert_eq(op_call(rts[0], eigvals_body, NULL, &spd, 1, &e, 1, eager), WEFT_EINVAL);
        cr_assert(strstr(weft_errmsg(), "weft_eigvals: OpenBLAS, whose LAPACK it needs, did not "
                                        "load (libweft-test-no-such-blas.so.0)"),
                  "%s", weft_errmsg());
        cr_assert_null(e);
    }
    cr_assert_not(library_loaded(real), "%s was loaded", real);
    weft_tensor_release(spd);
    weft_tensor_release(a);
    weft_tensor_release(b);
}

/* A library that loads but lacks the BLAS's functions is not called. */
Test(blas_load, a_library_without_the_blas_is_not_used)
{
    if (!*weft__blas_library())
        cr_skip_test("this weft has no BLAS");
    weft__blas_set_library("libm.so.6");
    weft_tensor *a = matrix(WEFT_F32, 32, 24, 5), *b = matrix(WEFT_F32, 24, 40, 6), *c = NULL;
    cr_assert_eq(op_call(rts[1], matmul_body, NULL, (weft_tensor *[]){ a, b }, 2, &c, 1, false),
                 0, "%s", weft_errmsg());
    cr_assert_not(weft__blas_available());
    expect_product(a, b, c, 1e-5);
    weft_tensor_release(a);
    weft_tensor_release(b);
    weft_tensor_release(c);
}
