/* weft_invert_permutation and weft_setdiff1d: against C loops on random
 * inputs and TensorFlow's documented example, eagerly and traced on 1, 2
 * and 4 workers (the same bits everywhere), lengths unknown while tracing
 * (one trace), NaN and signed zeros, empty inputs, and their errors, the
 * run-time check of a permutation included. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_perm, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static int invert_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_invert_permutation(cx, a[0]);
    return weft_ctx_status(cx);
}

/* A random permutation of 0..n-1 (Fisher-Yates). */
static void shuffle(double *p, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        p[i] = (double)i;
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = (int64_t)((op_uniform(&rng) + 1) / 2 * (double)(i + 1));
        j = j > i ? i : j;
        double t = p[i];
        p[i] = p[j];
        p[j] = t;
    }
}

Test(ops_perm, invert_permutation_against_c)
{
    static const int64_t sizes[] = { 0, 1, 7, 1000 };
    static double p[1000];
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int k = 0; k < 2; k++) {
            weft_dtype dt = k ? WEFT_I64 : WEFT_I32;
            int64_t n = sizes[s];
            shuffle(p, n);
            weft_tensor *x = test_tensor(dt, 1, &n, p), *y;
            op_results_everywhere(invert_body, NULL, &x, 1, &y, 1, "invert_permutation");
            test_assert_shape(y, dt, 1, &n, "invert_permutation");
            for (int64_t i = 0; i < n; i++)
                cr_expect_eq(test_element(y, (int64_t)p[i]), (double)i, "n %lld: y[x[%lld]]",
                             (long long)n, (long long)i);
            weft_tensor_release(x);
            weft_tensor_release(y);
        }
}

Test(ops_perm, invert_permutation_of_unknown_length_traces_once)
{
    weft_spec sig;
    cr_assert_eq(weft_spec_parse("i64[?]", &sig), 0);
    weft_function *f = op_signature_function(rt, invert_body, NULL, &sig, 1);
    double p[9];
    for (int64_t n = 5; n <= 9; n += 4) {
        shuffle(p, n);
        weft_tensor *x = test_tensor(WEFT_I64, 1, &n, p), *y = NULL;
        weft_arg a = weft_arg_tensor(x);
        cr_assert_eq(weft_function_call(f, &a, 1, &y, 1), 0, "%s", weft_errmsg());
        for (int64_t i = 0; i < n; i++)
            cr_expect_eq(test_element(y, (int64_t)p[i]), (double)i);
        weft_tensor_release(x);
        weft_tensor_release(y);
    }
    op_destroy_traced_once(&f);
}

Test(ops_perm, invert_permutation_refuses_what_is_not_one)
{
    static const double bad[][3] = { { 0, 0, 1 }, { 0, 3, 1 }, { -1, 0, 1 }, { 2, 1, 2 } };
    int64_t n = 3;
    for (size_t b = 0; b < 4; b++)
        for (int eager = 0; eager < 2; eager++) {
            weft_tensor *x = test_tensor(WEFT_I32, 1, &n, bad[b]), *y = NULL;
            cr_expect_eq(op_call(rt, invert_body, NULL, &x, 1, &y, 1, eager), WEFT_EINVAL,
                         "case %zu", b);
            cr_expect(strstr(weft_errmsg(), "weft_invert_permutation: x is not a permutation"),
                      "case %zu: %s", b, weft_errmsg());
            cr_expect_null(y);
            weft_tensor_release(x);
        }
    weft_tensor *f = test_tensor(WEFT_F32, 1, &n, bad[0]);
    weft_tensor *m = test_tensor(WEFT_I32, 2, (const int64_t[]){ 1, 3 }, bad[0]);
    static const op_error_case dtype[] = { { 0, WEFT_EDTYPE, "x is f32[3], not i32 or i64" } };
    static const op_error_case shape[] = { { 0, WEFT_ESHAPE, "x is i32[1,3], not a vector" } };
    op_expect_errors(rt, invert_body, dtype, 1, &f, 1);
    op_expect_errors(rt, invert_body, shape, 1, &m, 1);
    weft_tensor_release(f);
    weft_tensor_release(m);
}

/* ---- setdiff1d ---- */

static int setdiff_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const weft_dtype *index_dtype = user;
    return weft_setdiff1d(cx, a[0], a[1], index_dtype ? *index_dtype : WEFT_I32, outs);
}

/* x minus y the slow way: out[] and idx[], their count returned. */
static int64_t c_setdiff(const double *x, int64_t n, const double *y, int64_t m, double *out,
                         double *idx)
{
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) {
        bool found = false;
        for (int64_t j = 0; j < m && !found; j++)
            found = x[i] == y[j];
        if (!found) {
            out[k] = x[i];
            idx[k++] = (double)i;
        }
    }
    return k;
}

static void expect_setdiff(weft_dtype dt, weft_dtype index_dtype, const double *x, int64_t n,
                           const double *y, int64_t m, const char *what)
{
    double want[64], want_idx[64];
    int64_t k = c_setdiff(x, n, y, m, want, want_idx);
    weft_tensor *args[2] = { test_tensor(dt, 1, &n, x), test_tensor(dt, 1, &m, y) }, *outs[2];
    op_results_everywhere(setdiff_body, &index_dtype, args, 2, outs, 2, what);
    test_assert_shape(outs[0], dt, 1, &k, what);
    test_assert_shape(outs[1], index_dtype, 1, &k, what);
    for (int64_t i = 0; i < k; i++) {
        double got = test_element(outs[0], i);
        cr_expect(got == want[i] || (isnan(got) && isnan(want[i])), "%s: out[%lld] %g, want %g",
                  what, (long long)i, got, want[i]);
        cr_expect_eq(test_element(outs[1], i), want_idx[i], "%s: idx[%lld]", what,
                     (long long)i);
    }
    for (int o = 0; o < 2; o++) {
        weft_tensor_release(outs[o]);
        weft_tensor_release(args[o]);
    }
}

Test(ops_perm, setdiff1d_tensorflow_example_and_random)
{
    /* TensorFlow's example: x [1, 2, 3, 4, 5, 6], y [1, 3, 5]. */
    const double x[6] = { 1, 2, 3, 4, 5, 6 }, y[3] = { 1, 3, 5 };
    expect_setdiff(WEFT_I32, WEFT_I32, x, 6, y, 3, "documented example");
    double rx[50], ry[10];
    for (int rep = 0; rep < 4; rep++) {
        for (int i = 0; i < 50; i++)
            rx[i] = floor((op_uniform(&rng) + 1) * 10);      /* 0..20, with repeats */
        for (int j = 0; j < 10; j++)
            ry[j] = floor((op_uniform(&rng) + 1) * 10);
        weft_dtype dts[4] = { WEFT_I32, WEFT_I64, WEFT_F32, WEFT_F64 };
        expect_setdiff(dts[rep], rep % 2 ? WEFT_I64 : WEFT_I32, rx, 50, ry, 10, "random");
    }
    /* Nothing to take away, nothing to take from. */
    expect_setdiff(WEFT_I64, WEFT_I64, rx, 50, ry, 0, "empty y");
    expect_setdiff(WEFT_I64, WEFT_I64, rx, 0, ry, 10, "empty x");
}

Test(ops_perm, setdiff1d_nan_and_signed_zero)
{
    /* NaN equals nothing, so it stays; -0.0 is 0.0, so it goes. */
    const double x[5] = { NAN, -0.0, 1.5, 2, INFINITY }, y[4] = { 0.0, NAN, 2, INFINITY };
    expect_setdiff(WEFT_F32, WEFT_I32, x, 5, y, 4, "NaN and -0.0");
    expect_setdiff(WEFT_F64, WEFT_I64, x, 5, y, 4, "NaN and -0.0, f64");
    /* Past every element of y, the search lands on the padding (a 0),
     * which an x of 0 must not match. */
    const double xi[3] = { 0, 5, -3 }, yi[2] = { -7, -3 };
    expect_setdiff(WEFT_I32, WEFT_I32, xi, 3, yi, 2, "past the end of y");
}

Test(ops_perm, setdiff1d_of_unknown_lengths)
{
    weft_spec sig[2];
    cr_assert_eq(weft_spec_parse("i64[?]", &sig[0]), 0);
    cr_assert_eq(weft_spec_parse("i64[?]", &sig[1]), 0);
    weft_function_desc d = { .name = "setdiff", .body = setdiff_body, .n_args = 2, .n_outs = 2,
                             .input_signature = sig };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
    const double x[7] = { 7, 1, 7, 3, 9, 1, 0 }, y[3] = { 1, 9, 4 };
    for (int64_t n = 4; n <= 7; n += 3) {
        double want[7], want_idx[7];
        int64_t k = c_setdiff(x, n, y, 3, want, want_idx), m = 3;
        weft_tensor *args[2] = { test_tensor(WEFT_I64, 1, &n, x), test_tensor(WEFT_I64, 1, &m, y) };
        weft_arg a[2] = { weft_arg_tensor(args[0]), weft_arg_tensor(args[1]) };
        weft_tensor *outs[2] = { NULL, NULL };
        cr_assert_eq(weft_function_call(f, a, 2, outs, 2), 0, "%s", weft_errmsg());
        cr_assert_eq(weft_tensor_numel(outs[0]), k);
        for (int64_t i = 0; i < k; i++) {
            cr_expect_eq(test_element(outs[0], i), want[i]);
            cr_expect_eq(test_element(outs[1], i), want_idx[i]);
        }
        for (int o = 0; o < 2; o++) {
            weft_tensor_release(outs[o]);
            weft_tensor_release(args[o]);
        }
    }
    weft_function_stats st;
    weft_function_get_stats(f, &st);
    cr_expect_eq(st.traces, 1);
    weft_function_destroy(&f);
}

static int setdiff_case(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    weft_value *two[2] = { NULL, NULL };
    int rc;
    switch (*(const int *)user) {
    case 0: rc = weft_setdiff1d(cx, a[0], a[1], WEFT_I32, two); break;      /* i32 and f32 */
    case 1: rc = weft_setdiff1d(cx, a[2], a[2], WEFT_I32, two); break;      /* bool */
    case 2: rc = weft_setdiff1d(cx, a[0], a[0], WEFT_F32, two); break;
    case 3: rc = weft_setdiff1d(cx, a[3], a[0], WEFT_I32, two); break;      /* a matrix */
    default: rc = weft_setdiff1d(cx, a[0], a[0], WEFT_I32, NULL); break;
    }
    outs[0] = two[0];
    return rc;
}

Test(ops_perm, setdiff1d_errors)
{
    int64_t n = 3, m2[2] = { 1, 3 };
    const double v[3] = { 1, 0, 1 };
    weft_tensor *args[4] = { test_tensor(WEFT_I32, 1, &n, v), test_tensor(WEFT_F32, 1, &n, v),
                             test_tensor(WEFT_BOOL, 1, &n, v), test_tensor(WEFT_I32, 2, m2, v) };
    static const op_error_case cases[] = {
        { 0, WEFT_EDTYPE, "weft_setdiff1d: x is i32[3] and y f32[3]: one dtype, not bool" },
        { 1, WEFT_EDTYPE, "one dtype, not bool" },
        { 2, WEFT_EDTYPE, "index_dtype f32, not i32 or i64" },
        { 3, WEFT_ESHAPE, "weft_setdiff1d: x is i32[1,3], not a vector" },
        { 4, WEFT_EINVAL, "weft_setdiff1d: outs is NULL" },
    };
    op_expect_errors(rt, setdiff_case, cases, sizeof cases / sizeof cases[0], args, 4);
    for (int i = 0; i < 4; i++)
        weft_tensor_release(args[i]);
}
