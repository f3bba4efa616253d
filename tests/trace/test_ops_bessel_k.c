/* bessel_k0, bessel_k0e, bessel_k1 and bessel_k1e against their integral,
 * e^x K_n(x) = int_0^inf exp(-x (cosh t - 1)) cosh(n t) dt, by the
 * trapezoid rule in long double with a step far finer than the kernel's
 * (across the series and the integral's range); the Wronskian I0 K1 + I1
 * K0 = 1 / x with weft's own I0 and I1; known values; the scaled and plain
 * forms against each other; the domain's edges, NaN and inf; f32 (the f64
 * result rounded once); each call checked the same bits eagerly and
 * traced on 1, 2 and 4 workers. */
#include <math.h>
#include <stdlib.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_bessel_k, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

/* e^x K_order(x): the trapezoid rule at a step of a thousandth of the
 * integrand's width, until the terms vanish. */
static long double scaled_ref(double x, int order)
{
    long double h = fminl(1e-3L, 1e-3L / sqrtl(x)), sum = 0.5L;
    for (long k = 1; k < 50000000; k++) {
        long double t = k * h, s = sinhl(t / 2);
        long double v = expl(-2 * (long double)x * s * s) * (order ? coshl(t) : 1);
        sum += v;
        if (v < 1e-25L * sum)
            break;
    }
    return h * sum;
}

static const double xs[] = { 1e-3, 0.1, 0.5, 0.999, 1, 1.001, 1.5, 3, 7, 20, 150, 199, 201, 900 };
#define N_X (sizeof xs / sizeof xs[0])

Test(ops_bessel_k, scaled_forms_match_the_integral)
{
    const op_unary_fn fs[2] = { weft_bessel_k0e, weft_bessel_k1e };
    for (int order = 0; order < 2; order++) {
        double x[N_X], y[N_X];
        for (size_t i = 0; i < N_X; i++)
            x[i] = xs[i];
        op_unary_values(fs[order], WEFT_F64, x, N_X, y);
        for (size_t i = 0; i < N_X; i++) {
            long double want = scaled_ref(xs[i], order);
            cr_assert(fabsl(y[i] - want) <= 1e-15L * want, "k%de(%g) = %.17g, want %.17Lg",
                      order, xs[i], y[i], want);
        }
    }
}

Test(ops_bessel_k, wronskian_known_values_and_plain_forms)
{
    const double x[] = { 1e-300, 1e-10, 1e-3, 0.3, 1, 1.2, 4, 30, 199.5, 200.5, 650, 1e5, 1e10 };
    enum { N = sizeof x / sizeof x[0] };
    double i0[N], i1[N], k0[N], k1[N], k0e[N], k1e[N];
    op_unary_values(weft_bessel_i0e, WEFT_F64, x, N, i0);
    op_unary_values(weft_bessel_i1e, WEFT_F64, x, N, i1);
    op_unary_values(weft_bessel_k0, WEFT_F64, x, N, k0);
    op_unary_values(weft_bessel_k1, WEFT_F64, x, N, k1);
    op_unary_values(weft_bessel_k0e, WEFT_F64, x, N, k0e);
    op_unary_values(weft_bessel_k1e, WEFT_F64, x, N, k1e);
    for (int i = 0; i < N; i++) {
        /* Scaled: e^-x I_n times e^x K_n, the same Wronskian. */
        long double w = (long double)i0[i] * k1e[i] + (long double)i1[i] * k0e[i];
        cr_assert(fabsl(w * x[i] - 1) <= 2e-15L, "Wronskian at %g: x W = %.17Lg", x[i], w * x[i]);
        /* The plain forms are the scaled ones times e^-x (0 once it underflows). */
        double e = exp(-x[i]);
        cr_assert(fabs(k0[i] - k0e[i] * e) <= 4e-16 * k0e[i] * e, "k0(%g)", x[i]);
        cr_assert(fabs(k1[i] - k1e[i] * e) <= 4e-16 * k1e[i] * e, "k1(%g)", x[i]);
    }
    /* K0(1) and K1(1) (Abramowitz and Stegun, table 9.8). */
    cr_assert(fabs(k0[4] - 0.42102443824070833334) <= 1e-16, "%.17g", k0[4]);
    cr_assert(fabs(k1[4] - 0.60190723019723457474) <= 2e-16, "%.17g", k1[4]);
    /* Near 0: K1 ~ 1 / x, K0 ~ -ln(x / 2) - gamma. */
    cr_assert(fabs(k1[0] * 1e-300 - 1) <= 1e-15, "%.17g", k1[0]);
    cr_assert(fabs(k0[0] - (-log(0.5e-300) - 0.57721566490153286)) <= 1e-13, "%.17g", k0[0]);
}

Test(ops_bessel_k, edges_nan_inf_and_f32)
{
    double x[6] = { 0, -1, NAN, INFINITY, -INFINITY, 800 }, y[6];
    const op_unary_fn fs[4] = { weft_bessel_k0, weft_bessel_k0e, weft_bessel_k1, weft_bessel_k1e };
    for (int k = 0; k < 4; k++) {
        op_unary_values(fs[k], WEFT_F64, x, 6, y);
        cr_assert(y[0] == INFINITY && isnan(y[1]) && isnan(y[2]) && y[3] == 0 && isnan(y[4]),
                  "function %d", k);
        /* K underflows at 800, its scaled form does not. */
        cr_assert(k % 2 ? y[5] > 0.04 : y[5] == 0, "function %d at 800: %g", k, y[5]);
    }
    /* f32: the f64 result of the f32 input, rounded once. */
    for (int k = 0; k < 4; k++)
        op_expect_f32_from_f64(fs[k], xs, N_X, "k0, k0e, k1, k1e");
}
