/* weft_eig and weft_eigvals, checked by what they promise: a v = lambda v
 * for each eigenvalue and its column, unit columns with their largest
 * component real, eigenvalues by ascending modulus (then real, then
 * imaginary part), conjugate pairs of a real matrix, their sum the
 * trace; a hand case, random batches of several sizes in f32 and f64, a
 * symmetric matrix against weft_eigvalsh, a Jordan block, NaN input, one
 * trace for any size, eagerly and traced on 1, 2 and 4 workers (the same
 * bits everywhere), and the refused calls. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_eig, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 120);

static int eig_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    return weft_eig(cx, a[0], outs);
}

static int eigvals_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_eigvals(cx, a[0]);
    return weft_ctx_status(cx);
}

/* Checks matrix b of a ([batch, n, n], as doubles) against its values e
 * ([batch, n, 2]) and vectors v ([batch, n, n, 2]) within tol. */
static void check_one(const double *a, int n, const weft_tensor *e, const weft_tensor *v,
                      int64_t b, double tol, const char *what)
{
    double norm_a = 0, trace = 0, sum_re = 0, sum_im = 0;
    for (int i = 0; i < n * n; i++)
        norm_a = fmax(norm_a, fabs(a[i]));
    for (int i = 0; i < n; i++)
        trace += a[i * n + i];
    int64_t eo = b * n * 2, vo = b * n * n * 2;
    for (int k = 0; k < n; k++) {
        double lr = test_element(e, eo + 2 * k), li = test_element(e, eo + 2 * k + 1);
        sum_re += lr;
        sum_im += li;
        if (k > 0) {
            double pr = test_element(e, eo + 2 * k - 2), pi = test_element(e, eo + 2 * k - 1);
            double mp = hypot(pr, pi), mk = hypot(lr, li);
            cr_assert(mp < mk || (mp == mk && (pr < lr || (pr == lr && pi <= li))),
                      "%s: matrix %lld, eigenvalue %d (%g%+gi) out of order after %g%+gi", what,
                      (long long)b, k, lr, li, pr, pi);
        }
        /* a v - lambda v, the norm and the largest component. */
        double res = 0, nrm = 0, big = -1, big_im = 0;
        for (int r = 0; r < n; r++) {
            double avr = 0, avi = 0;
            for (int c = 0; c < n; c++) {
                avr += a[r * n + c] * test_element(v, vo + ((int64_t)c * n + k) * 2);
                avi += a[r * n + c] * test_element(v, vo + ((int64_t)c * n + k) * 2 + 1);
            }
            double vr = test_element(v, vo + ((int64_t)r * n + k) * 2);
            double vi = test_element(v, vo + ((int64_t)r * n + k) * 2 + 1);
            res = fmax(res, hypot(avr - (lr * vr - li * vi), avi - (lr * vi + li * vr)));
            nrm += vr * vr + vi * vi;
            if (hypot(vr, vi) > big * (1 + 1e-9)) {
                big = hypot(vr, vi);
                big_im = vi;
            }
        }
        cr_assert(res <= tol * (1 + norm_a), "%s: matrix %lld, eigenvalue %d: |a v - l v| = %g",
                  what, (long long)b, k, res);
        cr_assert(fabs(nrm - 1) <= tol, "%s: matrix %lld, vector %d has norm^2 %g", what,
                  (long long)b, k, nrm);
        cr_assert(fabs(big_im) <= tol, "%s: matrix %lld, vector %d: largest component "
                  "not real (imaginary part %g)", what, (long long)b, k, big_im);
    }
    double sum_tol = tol * n * (1 + norm_a);
    cr_assert(fabs(sum_re - trace) <= sum_tol && fabs(sum_im) <= sum_tol,
              "%s: matrix %lld: eigenvalues sum to %g%+gi, trace %g", what, (long long)b, sum_re,
              sum_im, trace);
}

static weft_tensor *matrices(weft_dtype dt, int64_t batch, int64_t n, const double *v)
{
    int64_t dims[3] = { batch, n, n };
    size_t count = (size_t)(batch * n * n);
    void *buf = malloc(count * (dt == WEFT_F32 ? 4 : 8) + 1);
    cr_assert_not_null(buf);
    for (size_t i = 0; i < count; i++) {
        if (dt == WEFT_F32)
            ((float *)buf)[i] = (float)v[i];
        else
            ((double *)buf)[i] = v[i];
    }
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(dt, 3, dims, buf, &t), 0, "%s", weft_errmsg());
    free(buf);
    return t;
}

/* A rotation by a quarter turn beside a 2: eigenvalues -i, i and 2. */
Test(ops_eig, by_hand)
{
    const double a[9] = { 0, -1, 0, 1, 0, 0, 0, 0, 2 };
    weft_tensor *t = matrices(WEFT_F64, 1, 3, a);
    weft_tensor *out[2];
    op_results_everywhere(eig_body, NULL, &t, 1, out, 2, "by hand");
    test_assert_shape(out[0], WEFT_F64, 3, (const int64_t[]){ 1, 3, 2 }, "values");
    test_assert_shape(out[1], WEFT_F64, 4, (const int64_t[]){ 1, 3, 3, 2 }, "vectors");
    const double want[6] = { 0, -1, 0, 1, 2, 0 };
    for (int i = 0; i < 6; i++)
        cr_expect(fabs(test_element(out[0], i) - want[i]) < 1e-12, "value part %d: %g", i,
                  test_element(out[0], i));
    check_one(a, 3, out[0], out[1], 0, 1e-12, "by hand");
    /* The 2's vector is e3; -i's is (1, i, 0) / sqrt(2), its first part real. */
    cr_expect(fabs(test_element(out[1], (2 * 3 + 2) * 2) - 1) < 1e-12);
    cr_expect(fabs(test_element(out[1], (0 * 3 + 0) * 2) - sqrt(0.5)) < 1e-12);
    cr_expect(fabs(test_element(out[1], (1 * 3 + 0) * 2 + 1) - sqrt(0.5)) < 1e-12);
    weft_tensor *vals;
    op_results_everywhere(eigvals_body, NULL, &t, 1, &vals, 1, "eigvals");
    test_assert_shape(vals, WEFT_F64, 3, (const int64_t[]){ 1, 3, 2 }, "eigvals");
    cr_expect(memcmp(weft_tensor_data(vals), weft_tensor_data(out[0]), 6 * sizeof(double)) == 0,
              "eigvals are eig's values");
    weft_tensor_release(vals);
    for (int k = 0; k < 2; k++)
        weft_tensor_release(out[k]);
    weft_tensor_release(t);
}

/* Random real matrices (complex pairs among their eigenvalues). */
Test(ops_eig, random_batches)
{
    const int sizes[] = { 1, 2, 5, 12, 30 };
    uint64_t st = 0x6a09e667f3bcc909u;
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
        for (int f32 = 0; f32 < 2; f32++) {
            int n = sizes[si];
            enum { B = 3 };
            double *a = malloc(sizeof *a * B * (size_t)n * n);
            cr_assert_not_null(a);
            for (int i = 0; i < B * n * n; i++) {
                a[i] = 2 * op_uniform(&st) - 1;
                if (f32)
                    a[i] = (float)a[i];
            }
            weft_dtype dt = f32 ? WEFT_F32 : WEFT_F64;
            weft_tensor *t = matrices(dt, B, n, a), *out[2];
            op_results_everywhere(eig_body, NULL, &t, 1, out, 2, "random");
            char what[64];
            snprintf(what, sizeof what, "%s n %d", weft_dtype_name(dt), n);
            int complex_pairs = 0;
            for (int64_t b = 0; b < B; b++) {
                check_one(a + b * n * n, n, out[0], out[1], b, f32 ? 2e-5 : 1e-10, what);
                for (int k = 0; k < n; k++)
                    complex_pairs += test_element(out[0], (b * n + k) * 2 + 1) > 0;
            }
            if (n >= 12)
                cr_expect_gt(complex_pairs, 0, "%s: no complex eigenvalues drawn", what);
            for (int k = 0; k < 2; k++)
                weft_tensor_release(out[k]);
            weft_tensor_release(t);
            free(a);
        }
}

/* A symmetric matrix: real eigenvalues, those of weft_eigvalsh by modulus. */
Test(ops_eig, symmetric_matches_eigvalsh)
{
    enum { N = 7 };
    double a[N * N];
    uint64_t st = 0xbb67ae8584caa73bu;
    for (int i = 0; i < N; i++)
        for (int j = 0; j <= i; j++)
            a[i * N + j] = a[j * N + i] = 2 * op_uniform(&st) - 1;
    weft_tensor *t = matrices(WEFT_F64, 1, N, a), *out[2];
    op_results_everywhere(eig_body, NULL, &t, 1, out, 2, "symmetric");
    double sorted[N];
    weft_ctx *cx = NULL;
    cr_assert_eq(weft_eager_begin(rts[0], &cx), 0);
    weft_value *w = weft_eigvalsh(cx, weft_squeeze(cx, weft_eager_value(cx, t), 0));
    cr_assert_not_null(w, "%s", weft_errmsg());
    for (int i = 0; i < N; i++)
        sorted[i] = test_element(weft_value_tensor(w), i);
    weft_eager_end(&cx);
    /* By modulus, as weft_eig orders them. */
    for (int i = 1; i < N; i++)
        for (int j = i; j > 0 && (fabs(sorted[j]) < fabs(sorted[j - 1]) ||
                                  (fabs(sorted[j]) == fabs(sorted[j - 1]) &&
                                   sorted[j] < sorted[j - 1])); j--) {
            double x = sorted[j];
            sorted[j] = sorted[j - 1];
            sorted[j - 1] = x;
        }
    for (int k = 0; k < N; k++) {
        cr_expect(fabs(test_element(out[0], 2 * k) - sorted[k]) < 1e-10, "eigenvalue %d: %g, "
                  "eigvalsh %g", k, test_element(out[0], 2 * k), sorted[k]);
        cr_expect_eq(test_element(out[0], 2 * k + 1), 0.0);
    }
    check_one(a, N, out[0], out[1], 0, 1e-10, "symmetric");
    for (int k = 0; k < 2; k++)
        weft_tensor_release(out[k]);
    weft_tensor_release(t);
}

/* A Jordan block (one eigenvector for a double eigenvalue) and a matrix
 * with a NaN (NaN everywhere), in one batch. */
Test(ops_eig, jordan_block_and_nan)
{
    const double a[8] = { 2, 1, 0, 2, 1, NAN, 0, 1 };
    weft_tensor *t = matrices(WEFT_F64, 2, 2, a), *out[2];
    op_results_everywhere(eig_body, NULL, &t, 1, out, 2, "jordan");
    for (int k = 0; k < 2; k++) {
        cr_expect(fabs(test_element(out[0], 2 * k) - 2) < 1e-7, "value %d", k);
        cr_expect_eq(test_element(out[0], 2 * k + 1), 0.0);
    }
    for (int i = 4; i < 8; i++)
        cr_expect(isnan(test_element(out[0], i)), "NaN matrix, value part %d", i);
    for (int i = 8; i < 16; i++)
        cr_expect(isnan(test_element(out[1], i)), "NaN matrix, vector part %d", i);
    for (int k = 0; k < 2; k++)
        weft_tensor_release(out[k]);
    weft_tensor_release(t);
}

/* One trace for any matrix size. */
Test(ops_eig, one_trace_for_any_size)
{
    weft_spec sig = { .dtype = WEFT_F64, .rank = 2, .dims = { WEFT_DIM_ANY, WEFT_DIM_ANY } };
    weft_function_desc fd = { .name = "eig", .body = eig_body, .n_args = 1, .n_outs = 2,
                              .input_signature = &sig };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rts[1], &fd, &f), 0, "%s", weft_errmsg());
    for (int64_t n = 1; n <= 4; n++) {
        double a[16];
        for (int i = 0; i < n * n; i++)
            a[i] = i % (int)(n + 1) == 0 ? (double)(i / (n + 1) + 1) : 0;   /* diag 1..n */
        weft_tensor *t = NULL, *out[2] = { 0 };
        cr_assert_eq(weft_tensor_create(WEFT_F64, 2, (const int64_t[]){ n, n }, a, &t), 0);
        weft_arg arg = weft_arg_tensor(t);
        cr_assert_eq(weft_function_call(f, &arg, 1, out, 2), 0, "%s", weft_errmsg());
        test_assert_shape(out[1], WEFT_F64, 3, (const int64_t[]){ n, n, 2 }, "vectors");
        for (int64_t k = 0; k < n; k++)
            cr_expect_eq(test_element(out[0], 2 * k), (double)(k + 1));
        for (int k = 0; k < 2; k++)
            weft_tensor_release(out[k]);
        weft_tensor_release(t);
    }
    cr_expect_eq(weft_function_tracing_count(f), 1);
    weft_function_destroy(&f);
}

typedef enum eig_bad { NOT_SQUARE, INTEGER, VECTOR, TOO_MANY_DIMS, OUTS_NULL } eig_bad;

/* args: f64 [2, 3], i32 [2, 2], f64 [3], f64 [1,1,1,1,1,1,2,2]. */
static int bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    weft_value *res[2];
    eig_bad which = *(const int *)user;
    weft_value *x = which == NOT_SQUARE ? a[0] : which == INTEGER ? a[1]
                  : which == VECTOR     ? a[2] : a[3];
    int rc = weft_eig(cx, x, which == OUTS_NULL ? NULL : res);
    outs[0] = rc == 0 ? res[0] : NULL;
    return weft_ctx_status(cx);
}

Test(ops_eig, refused_calls_name_the_op)
{
    const double z[8] = { 0 };
    const int32_t zi[4] = { 0 };
    weft_tensor *args[4] = { NULL };
    cr_assert_eq(weft_tensor_create(WEFT_F64, 2, (const int64_t[]){ 2, 3 }, z, &args[0]), 0);
    cr_assert_eq(weft_tensor_create(WEFT_I32, 2, (const int64_t[]){ 2, 2 }, zi, &args[1]), 0);
    cr_assert_eq(weft_tensor_create(WEFT_F64, 1, (const int64_t[]){ 3 }, z, &args[2]), 0);
    cr_assert_eq(weft_tensor_create(WEFT_F64, 8, (const int64_t[]){ 1, 1, 1, 1, 1, 1, 2, 2 }, z,
                                    &args[3]), 0);
    const op_error_case cases[] = {
        { NOT_SQUARE, WEFT_ESHAPE, "weft_eig: f64[2,3] is not a square matrix" },
        { INTEGER, WEFT_EDTYPE, "weft_eig: the matrix i32[2,2] is not f32 or f64" },
        { VECTOR, WEFT_ESHAPE, "weft_eig: f64[3] is not a matrix" },
        { TOO_MANY_DIMS, WEFT_ESHAPE, "weft_eig: f64[1,1,1,1,1,1,2,2] leaves no room for the "
                                      "result's 1 more dims (at most 8)" },
        { OUTS_NULL, WEFT_EINVAL, "weft_eig: outs is NULL" },
    };
    op_expect_errors(rts[1], bad_body, cases, sizeof cases / sizeof *cases, args, 4);
    for (int i = 0; i < 4; i++)
        weft_tensor_release(args[i]);
}
