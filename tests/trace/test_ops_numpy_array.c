/* tf.experimental.numpy's hypot (libm's, bit for bit), tril, triu, diff,
 * outer, isclose and allclose: against loops written here, eagerly and
 * traced on 1, 2 and 4 workers with the same bits; edges, dtypes,
 * gradients against central differences, one trace for every size where
 * dims may be unknown, and the refusals. */
#include <math.h>
#include <string.h>

#include "grad_check.h"
#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_numpy_array, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

Test(ops_numpy_array, hypot_is_libms)
{
    const double a[] = { 3, -5, 1e300, 1e-310, 0, -0.0, INFINITY, NAN, 1e200, 7 };
    const double b[] = { 4, 12, 1e300, 1e-310, 0, 0, NAN, INFINITY, -3, -0.0 };
    int64_t n = 10;
    for (int d = 0; d < 2; d++) {
        double x[10], z[10], y[10];
        for (int i = 0; i < 10; i++) {
            x[i] = d ? a[i] : (double)(float)a[i];
            z[i] = d ? b[i] : (double)(float)b[i];
        }
        op_binary_values(weft_hypot, d ? WEFT_F64 : WEFT_F32, x, n, z, n, y);
        for (int i = 0; i < 10; i++) {
            double want = d ? hypot(x[i], z[i]) : (double)hypotf((float)x[i], (float)z[i]);
            cr_assert((isnan(want) && isnan(y[i])) || y[i] == want, "hypot(%g, %g) = %g, want %g",
                      x[i], z[i], y[i], want);
        }
    }
    double y[2];
    op_binary_values(weft_hypot, WEFT_F64, (const double[]){ 1e300 }, 1,
                     (const double[]){ 1e300, INFINITY }, 2, y);
    cr_assert(isfinite(y[0]) && y[1] == INFINITY, "no overflow; inf beside a number");
}

static const double v12[12] = { 0.3, -0.7, 1.2, 0.05, -1.4, 0.9, 0.6, -0.2, 1.7, -0.55, 1.1,
                                0.8 };
static const double w12[12] = { 0.1, 0.2, -1.0, 2.0, -1.3, 0.4, -0.6, 0.9, 1.5, -2.0, 0.7,
                                -0.1 };

Test(ops_numpy_array, binary_gradients_match_differences)
{
    static const op_binary_fn fns[] = { weft_hypot, weft_outer };
    const grad_arg xy[2] = { { 1, { 12 }, v12 }, { 1, { 12 }, w12 } };
    for (size_t i = 0; i < 2; i++) {
        grad_case c = { op_binary_body, &fns[i], 2, 2 };
        expect_gradients(&c, xy, i ? "outer" : "hypot");
    }
}

/* ---- tril and triu ----------------------------------------------------------- */

typedef struct tri_case {
    bool lower;
    int64_t k;
} tri_case;

static int tri_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const tri_case *c = user;
    outs[0] = c->lower ? weft_tril(cx, a[0], c->k) : weft_triu(cx, a[0], c->k);
    return weft_ctx_status(cx);
}

Test(ops_numpy_array, tril_and_triu_against_loops)
{
    double v[24];
    for (int i = 0; i < 24; i++)
        v[i] = i + 1;
    int64_t dims[3] = { 2, 3, 4 };
    const weft_dtype dts[] = { WEFT_F64, WEFT_I32, WEFT_BOOL };
    for (int t = 0; t < 3; t++) {
        weft_tensor *x = test_tensor(dts[t], 3, dims, v), *y;
        for (int lower = 0; lower < 2; lower++)
            for (int64_t k = -3; k <= 4; k++) {
                tri_case c = { lower, k };
                op_results_everywhere(tri_body, &c, &x, 1, &y, 1, "tril/triu");
                test_assert_shape(y, dts[t], 3, dims, "tril/triu");
                for (int e = 0; e < 24; e++) {
                    int64_t i = (e / 4) % 3, j = e % 4;
                    bool kept = lower ? j - i <= k : j - i >= k;
                    double want = kept ? (dts[t] == WEFT_BOOL ? 1 : v[e]) : 0;
                    cr_assert_eq(test_element(y, e), want, "%s k %lld at %d",
                                 lower ? "tril" : "triu", (long long)k, e);
                }
                weft_tensor_release(y);
            }
        weft_tensor_release(x);
    }
    tri_case c = { true, -1 };
    const grad_arg g = { 2, { 3, 4 }, v12 };
    grad_case gc = { tri_body, &c, 1, 1 };
    expect_gradients(&gc, &g, "tril");
}

/* ---- diff -------------------------------------------------------------------- */

typedef struct diff_case {
    int64_t n;
    int axis;
} diff_case;

static int diff_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const diff_case *c = user;
    outs[0] = weft_diff(cx, a[0], c->n, c->axis);
    return weft_ctx_status(cx);
}

/* The n-th difference of the row x[0..len), in place at its front. */
static void diff_ref(double *x, int64_t len, int64_t n)
{
    for (int64_t s = 0; s < n && len > 0; s++, len--)
        for (int64_t i = 0; i + 1 < len; i++)
            x[i] = x[i + 1] - x[i];
}

Test(ops_numpy_array, diff_against_loops)
{
    const double v[15] = { 1, 4, 9, 16, 25, 2, 3, 5, 7, 11, -1, 0, 1, 0, -1 };
    int64_t dims[2] = { 3, 5 };
    weft_tensor *x = test_tensor(WEFT_I64, 2, dims, v), *y;
    for (int64_t n = 0; n <= 6; n++)
        for (int axis = -1; axis <= 0; axis++) {
            diff_case c = { n, axis };
            op_results_everywhere(diff_body, &c, &x, 1, &y, 1, "diff");
            int64_t len = axis ? 5 : 3, lines = axis ? 3 : 5;
            int64_t out_len = n >= len ? 0 : len - n;
            int64_t want_dims[2] = { axis ? 3 : out_len, axis ? out_len : 5 };
            test_assert_shape(y, WEFT_I64, 2, want_dims, "diff");
            for (int64_t l = 0; l < lines; l++) {
                double row[5];
                for (int64_t i = 0; i < len; i++)
                    row[i] = axis ? v[l * 5 + i] : v[i * 5 + l];
                diff_ref(row, len, n);
                for (int64_t i = 0; i < out_len; i++)
                    cr_assert_eq(test_element(y, axis ? l * out_len + i : i * 5 + l), row[i],
                                 "n %lld axis %d line %lld [%lld]", (long long)n, axis,
                                 (long long)l, (long long)i);
            }
            weft_tensor_release(y);
        }
    weft_tensor_release(x);
    /* bool: neighbours that differ. */
    const double b[5] = { 1, 1, 0, 1, 1 };
    int64_t five = 5, four = 4;
    x = test_tensor(WEFT_BOOL, 1, &five, b);
    diff_case c = { 1, 0 };
    op_results_everywhere(diff_body, &c, &x, 1, &y, 1, "diff of bool");
    test_assert_shape(y, WEFT_BOOL, 1, &four, "diff of bool");
    const double want[4] = { 0, 1, 1, 0 };
    for (int i = 0; i < 4; i++)
        cr_assert_eq(test_element(y, i), want[i]);
    weft_tensor_release(y);
    weft_tensor_release(x);
    diff_case g2 = { 2, 1 };
    const grad_arg g = { 2, { 3, 4 }, v12 };
    grad_case gc = { diff_body, &g2, 1, 1 };
    expect_gradients(&gc, &g, "diff");
}

Test(ops_numpy_array, diff_traces_once_for_every_length)
{
    const weft_spec sig = { WEFT_F64, 1, { -1 } };
    diff_case c = { 2, 0 };
    weft_function *f = op_signature_function(rt, diff_body, &c, &sig, 1);
    const double v[6] = { 1, 2, 4, 8, 16, 32 };
    for (int64_t n = 1; n <= 6; n++) {
        weft_tensor *x = test_tensor(WEFT_F64, 1, &n, v), *y = NULL;
        weft_arg a = weft_arg_tensor(x);
        cr_assert_eq(weft_function_call(f, &a, 1, &y, 1), 0, "%s", weft_errmsg());
        int64_t want = n > 2 ? n - 2 : 0;
        test_assert_shape(y, WEFT_F64, 1, &want, "diff of an unknown length");
        for (int64_t i = 0; i < want; i++)
            cr_assert_eq(test_element(y, i), v[i]);   /* the second difference of 2^i */
        weft_tensor_release(y);
        weft_tensor_release(x);
    }
    op_destroy_traced_once(&f);
}

/* ---- outer ------------------------------------------------------------------- */

Test(ops_numpy_array, outer_of_flattened_operands)
{
    const double a[4] = { 1, 2, 3, 4 }, b[3] = { -1, 0.5, 2 };
    int64_t da[2] = { 2, 2 }, db = 3;
    weft_tensor *args[2] = { test_tensor(WEFT_F32, 2, da, a), test_tensor(WEFT_I32, 1, &db, b) };
    weft_tensor *y;
    op_binary_fn f = weft_outer;
    op_results_everywhere(op_binary_body, &f, args, 2, &y, 1, "outer");
    test_assert_shape(y, WEFT_F32, 2, (const int64_t[]){ 4, 3 }, "outer");
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 3; j++)
            cr_assert_eq(test_element(y, i * 3 + j), (double)(float)(a[i] * (int)b[j]));
    weft_tensor_release(y);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

/* ---- isclose and allclose -------------------------------------------------- */

typedef struct close_case {
    double rtol, atol;
    bool equal_nan;
} close_case;

static int close_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const close_case *c = user;
    outs[0] = weft_isclose(cx, a[0], a[1], c->rtol, c->atol, c->equal_nan);
    outs[1] = weft_allclose(cx, a[0], a[1], c->rtol, c->atol, c->equal_nan);
    return weft_ctx_status(cx);
}

static bool numpy_isclose(double x, double y, const close_case *c)
{
    bool r = (fabs(x - y) <= c->atol + c->rtol * fabs(y) && isfinite(y)) || x == y;
    return r || (c->equal_nan && isnan(x) && isnan(y));
}

Test(ops_numpy_array, isclose_is_numpys)
{
    const double a[] = { 1, 1, 1e10, 0, 1e-9, INFINITY, INFINITY, -INFINITY, NAN, NAN, 1, 100,
                         5 };
    const double b[] = { 1, 1.00001, 1.00001e10, 1e-9, 0, INFINITY, -INFINITY, 1, NAN, 1,
                         1.000011, 100.0009, INFINITY };
    int64_t n = 13;
    const close_case cases[] = { { 1e-5, 1e-8, false }, { 1e-5, 1e-8, true }, { 0, 0, false },
                                 { 1e-3, 0.5, false } };
    for (size_t k = 0; k < 4; k++)
        for (int d = 0; d < 2; d++) {
            weft_tensor *args[2] = { test_tensor(d ? WEFT_F64 : WEFT_F32, 1, &n, a),
                                     test_tensor(WEFT_F64, 1, &n, b) };
            weft_tensor *y[2];
            op_results_everywhere(close_body, (void *)&cases[k], args, 2, y, 2, "isclose");
            test_assert_shape(y[0], WEFT_BOOL, 1, &n, "isclose");
            test_assert_shape(y[1], WEFT_BOOL, 0, NULL, "allclose");
            bool all = true;
            for (int i = 0; i < 13; i++) {
                double x = d ? a[i] : (double)(float)a[i];
                bool want = numpy_isclose(x, b[i], &cases[k]);
                all = all && want;
                cr_assert_eq(test_element(y[0], i), want, "case %zu: isclose(%g, %g)", k, x, b[i]);
            }
            cr_assert_eq(test_element(y[1], 0), all, "case %zu: allclose", k);
            for (int o = 0; o < 2; o++)
                weft_tensor_release(y[o]);
            weft_tensor_release(args[0]);
            weft_tensor_release(args[1]);
        }
    /* Integers compare in f64; everything close gives allclose true. */
    const double i1[3] = { 1, 2, 3 };
    n = 3;
    weft_tensor *args[2] = { test_tensor(WEFT_I32, 1, &n, i1), test_tensor(WEFT_I64, 1, &n, i1) };
    weft_tensor *y[2];
    close_case c = { 0, 0, false };
    op_results_everywhere(close_body, &c, args, 2, y, 2, "isclose of integers");
    cr_assert(test_element(y[1], 0) == 1 && test_element(y[0], 2) == 1);
    for (int o = 0; o < 2; o++) {
        weft_tensor_release(y[o]);
        weft_tensor_release(args[o]);
    }
}

static int refused_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    switch (*(const int *)user) {
    case 0: outs[0] = weft_tril(cx, a[0], 0); break;
    case 1: outs[0] = weft_diff(cx, a[0], -1, 0); break;
    case 2: outs[0] = weft_diff(cx, a[0], 1, 1); break;
    case 3: outs[0] = weft_isclose(cx, a[0], a[0], -1, 0, false); break;
    case 4: outs[0] = weft_allclose(cx, a[0], a[0], 0, NAN, false); break;
    default: {
        weft_value *m = weft_boolean_mask(cx, a[0], weft_gt(cx, a[0], weft_const_f64(cx, 0)), 0);
        outs[0] = weft_diff(cx, m, 65, 0);
        break;
    }
    }
    return weft_ctx_status(cx);
}

Test(ops_numpy_array, refusals)
{
    const double v[3] = { 1, 2, 3 };
    int64_t n = 3;
    weft_tensor *x = test_tensor(WEFT_F64, 1, &n, v);
    const op_error_case cases[] = {
        { 0, WEFT_ESHAPE, "weft_tril: f64[3] has not a rank of 2 or more" },
        { 1, WEFT_EINVAL, "weft_diff: n -1 is negative or axis 0" },
        { 2, WEFT_EINVAL, "axis 1 is not in [-1, 1)" },
        { 3, WEFT_EINVAL, "weft_isclose: rtol -1 and atol 0 must be finite and >= 0" },
        { 4, WEFT_EINVAL, "weft_allclose: rtol 0 and atol nan must be finite and >= 0" },
    };
    op_expect_errors(rt, refused_body, cases, 5, &x, 1);
    /* n past an unknown dim: refused traced; eagerly the dim is known (the
     * result is empty, diff_against_loops checks that). */
    const op_error_case past = { 5, WEFT_EINVAL,
                                 "weft_diff: n 65 is above 64 along a dim unknown" };
    op_expect_traced_error(rt, refused_body, &past, &x, 1);
    weft_tensor_release(x);
}
