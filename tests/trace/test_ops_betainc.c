/* betainc, the elementwise op of three operands, against references in
 * long double: closed forms (I_x(1, b) = 1 - (1 - x)^b, I_x(a, 1) = x^a,
 * I_x(1/2, 1/2) = 2 asin(sqrt x) / pi), whole a and b as a binomial tail,
 * the recurrence in a at fractional parameters, the symmetry I_x(a, b) +
 * I_(1-x)(b, a) = 1, large equal parameters (I_(1/2) = 1/2), on both sides
 * of the split at x = (a + 1) / (a + b + 2); the domain's edges and NaN;
 * broadcasting of the three shapes and the promotion of integers and weak
 * scalars; f32 (the f64 result rounded once); refused calls.  Each call
 * gives the same bits eagerly and traced on 1, 2 and 4 workers. */
#include <math.h>
#include <stdlib.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_betainc, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

static int betainc_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_betainc(cx, a[0], a[1], a[2]);
    return weft_ctx_status(cx);
}

/* betainc(a, b, x) of vectors of n elements (a or b of one element is a
 * scalar, broadcast), into y[0..n). */
static void betainc_values(weft_dtype dt, const double *a, int64_t na, const double *b,
                           int64_t nb, const double *x, int64_t n, double *y)
{
    weft_tensor *t[3] = { test_tensor(dt, na == 1 ? 0 : 1, &na, a),
                          test_tensor(dt, nb == 1 ? 0 : 1, &nb, b), test_tensor(dt, 1, &n, x) };
    weft_tensor *out;
    op_results_everywhere(betainc_body, NULL, t, 3, &out, 1, "betainc");
    test_assert_shape(out, dt, 1, &n, "betainc");
    for (int64_t i = 0; i < n; i++)
        y[i] = test_element(out, i);
    weft_tensor_release(out);
    for (int k = 0; k < 3; k++)
        weft_tensor_release(t[k]);
}

static double betainc1(double a, double b, double x)
{
    double y;
    betainc_values(WEFT_F64, &a, 1, &b, 1, &x, 1, &y);
    return y;
}

static void close_to(double got, long double want, long double rel, double a, double b,
                     double x)
{
    cr_assert(fabsl(got - want) <= rel * fabsl(want) + 1e-300L,
              "betainc(%g, %g, %g) = %.17g, want %.17Lg", a, b, x, got, want);
}

static const double xs[] = { 1e-6, 0.01, 0.1, 0.25, 0.4, 0.5, 0.6, 0.75, 0.9, 0.99, 0.999999 };
#define N_X (sizeof xs / sizeof xs[0])

Test(ops_betainc, closed_forms)
{
    double y[N_X];
    const double bs[] = { 0.5, 3, 40 }, as[] = { 0.25, 2, 17 }, one = 1, half = 0.5;
    for (size_t k = 0; k < 3; k++) {
        betainc_values(WEFT_F64, &one, 1, &bs[k], 1, xs, N_X, y);
        for (size_t i = 0; i < N_X; i++)
            close_to(y[i], -expm1l(bs[k] * log1pl(-(long double)xs[i])), 1e-15L, 1, bs[k],
                     xs[i]);
        betainc_values(WEFT_F64, &as[k], 1, &one, 1, xs, N_X, y);
        for (size_t i = 0; i < N_X; i++)
            close_to(y[i], powl(xs[i], as[k]), 1e-15L, as[k], 1, xs[i]);
    }
    betainc_values(WEFT_F64, &half, 1, &half, 1, xs, N_X, y);
    for (size_t i = 0; i < N_X; i++)
        close_to(y[i], 2 * asinl(sqrtl(xs[i])) / acosl(-1), 1e-15L, 0.5, 0.5, xs[i]);
}

/* For whole a and b, I_x(a, b) is the chance of at least a successes in
 * a + b - 1 trials of chance x. */
static long double binomial_tail(int a, int b, long double x)
{
    int n = a + b - 1, sign;
    long double sum = 0;
    for (int j = a; j <= n; j++)
        sum += expl(lgammal_r(n + 1, &sign) - lgammal_r(j + 1, &sign) -
                    lgammal_r(n - j + 1, &sign) + j * logl(x) + (n - j) * log1pl(-x));
    return sum;
}

Test(ops_betainc, whole_parameters)
{
    const int ps[] = { 1, 2, 5, 13, 40 };
    for (size_t i = 0; i < 5; i++)
        for (size_t j = 0; j < 5; j++) {
            double a = ps[i], b = ps[j], y[N_X];
            betainc_values(WEFT_F64, &a, 1, &b, 1, xs, N_X, y);
            for (size_t k = 0; k < N_X; k++)
                close_to(y[k], binomial_tail(ps[i], ps[j], xs[k]), 2e-14L, a, b, xs[k]);
        }
}

Test(ops_betainc, recurrence_and_symmetry)
{
    const double as[] = { 0.3, 2.5, 7.25, 60.5 }, bs[] = { 0.7, 3.5, 25.25 };
    for (size_t i = 0; i < 4; i++)
        for (size_t j = 0; j < 3; j++) {
            double a0 = as[i], a1 = as[i] + 1, b = bs[j], y0[N_X], y1[N_X];
            betainc_values(WEFT_F64, &a0, 1, &b, 1, xs, N_X, y0);
            betainc_values(WEFT_F64, &a1, 1, &b, 1, xs, N_X, y1);
            for (size_t k = 0; k < N_X; k++) {
                long double x = xs[k];
                int sign;
                long double la = a0, lb = b;   /* a + b rounded in double would cost digits */
                long double step = expl(la * logl(x) + lb * log1pl(-x) + lgammal_r(la + lb, &sign) -
                                        lgammal_r(la + 1, &sign) - lgammal_r(lb, &sign));
                cr_assert(fabsl((long double)y1[k] - (y0[k] - step)) <= 4e-16L,
                          "I(%g, %g, %g) = %.17g against I(%g, ...) - step = %.17Lg", a1, b,
                          xs[k], y1[k], a0, y0[k] - step);
            }
            /* x = m / 16, whose complement is exact. */
            for (int m = 1; m < 16; m++) {
                double x = m / 16.0, s = betainc1(a0, b, x) + betainc1(b, a0, 1 - x);
                cr_assert(fabs(s - 1) <= 4e-16, "I(%g, %g, %g) + I(%g, %g, %g) = %.17g", a0, b,
                          x, b, a0, 1 - x, s);
            }
        }
}

Test(ops_betainc, large_parameters)
{
    /* Symmetric: I_(1/2)(a, a) = 1/2; the fraction needs O(sqrt a) steps. */
    const double as[] = { 50, 1e3, 1e5 };
    const long double tol[] = { 1e-15L, 1e-14L, 1e-12L };
    for (size_t i = 0; i < 3; i++)
        close_to(betainc1(as[i], as[i], 0.5), 0.5L, tol[i], as[i], as[i], 0.5);
    /* Far in a tail: whole parameters again, the tail tiny. */
    close_to(betainc1(40, 13, 0.1), binomial_tail(40, 13, 0.1L), 2e-14L, 40, 13, 0.1);
    cr_assert(betainc1(40, 13, 0.1) < 1e-25);
}

Test(ops_betainc, edges_and_nan)
{
    const double a[] = { 0, -1, 2, 2, 2, 2, 2, NAN, 2, 2, INFINITY, 2, 2, 1e-10 };
    const double b[] = { 1, 1, 0, 3, 3, 3, 3, 3, NAN, 3, 3, INFINITY, 3, 1 };
    const double x[] = { 0.5, 0.5, 0.5, -0.1, 1.1, 0, 1, 0.5, 0.5, NAN, 0.5, 0.5, -0.0, 0.5 };
    enum { N = sizeof x / sizeof x[0] };
    double y[N];
    betainc_values(WEFT_F64, a, N, b, N, x, N, y);
    for (int i = 0; i < N; i++) {
        bool want_nan = !(i == 5 || i == 6 || i == 12 || i == 13);
        cr_assert(want_nan == (bool)isnan(y[i]), "case %d: %.17g", i, y[i]);
    }
    cr_assert(y[5] == 0 && y[6] == 1 && y[12] == 0, "%g %g %g", y[5], y[6], y[12]);
    close_to(y[13], powl(0.5L, 1e-10L), 1e-15L, 1e-10, 1, 0.5);
}

static int mixed_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    switch (*(const int *)user) {
    case 0: outs[0] = weft_betainc(cx, a[0], a[1], a[2]); break;
    case 1: outs[0] = weft_betainc(cx, weft_const_f64(cx, 2.5), weft_const_i64(cx, 1), a[2]); break;
    default: outs[0] = weft_betainc(cx, a[2], weft_const_i64(cx, 3), a[2]); break;
    }
    return weft_ctx_status(cx);
}

Test(ops_betainc, broadcast_and_promotion)
{
    /* a i64[3,1], b i32[4], x f32[]: f32[3,4] (the widest dtype, as the
     * binary ops promote); each element betainc of its own three. */
    const double av[3] = { 1, 2, 7 }, bv[4] = { 1, 3, 4, 9 }, xv = 0.375;
    int64_t da[2] = { 3, 1 }, db = 4;
    weft_tensor *t[3] = { test_tensor(WEFT_I64, 2, da, av), test_tensor(WEFT_I32, 1, &db, bv),
                          test_tensor(WEFT_F32, 0, NULL, &xv) };
    weft_tensor *out;
    int which = 0;
    op_results_everywhere(mixed_body, &which, t, 3, &out, 1, "mixed dtypes");
    int64_t want_dims[2] = { 3, 4 };
    test_assert_shape(out, WEFT_F32, 2, want_dims, "mixed dtypes");
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++)
            cr_assert_eq(test_element(out, i * 4 + j), (double)(float)betainc1(av[i], bv[j], xv),
                         "(%d, %d)", i, j);
    weft_tensor_release(out);
    /* Weak a and b take x's f32. */
    for (which = 1; which <= 2; which++) {
        op_results_everywhere(mixed_body, &which, t, 3, &out, 1, "weak scalar");
        test_assert_shape(out, WEFT_F32, 0, NULL, "weak scalar");
        double want = which == 1 ? betainc1(2.5, 1, xv) : betainc1(xv, 3, xv);
        cr_assert_eq(test_element(out, 0), (double)(float)want, "weak case %d", which);
        weft_tensor_release(out);
    }
    for (int k = 0; k < 3; k++)
        weft_tensor_release(t[k]);
}

Test(ops_betainc, f32_is_f64_rounded_once)
{
    double a[N_X], b[N_X], x[N_X], y32[N_X], y64[N_X];
    for (size_t i = 0; i < N_X; i++) {
        a[i] = (float)(0.3 + 1.9 * (double)i);
        b[i] = (float)(12.5 - 1.1 * (double)i);
        x[i] = (float)xs[i];
    }
    betainc_values(WEFT_F32, a, N_X, b, N_X, x, N_X, y32);
    betainc_values(WEFT_F64, a, N_X, b, N_X, x, N_X, y64);
    for (size_t i = 0; i < N_X; i++)
        cr_assert_eq(y32[i], (double)(float)y64[i], "at (%g, %g, %g)", a[i], b[i], x[i]);
}

Test(ops_betainc, refused_calls)
{
    /* Shapes that do not broadcast; a bool operand is a float function's
     * f64, so only shapes are refused. */
    const double v[4] = { 1, 2, 3, 4 };
    int64_t d2 = 2, d3 = 3;
    weft_tensor *args[3] = { test_tensor(WEFT_F64, 1, &d2, v), test_tensor(WEFT_F64, 1, &d3, v),
                             test_tensor(WEFT_F64, 0, NULL, v) };
    const op_error_case cases[] = { { 0, WEFT_ESHAPE, "weft_betainc" } };
    op_expect_errors(rts[1], mixed_body, cases, 1, args, 3);
    for (int k = 0; k < 3; k++)
        weft_tensor_release(args[k]);
}
