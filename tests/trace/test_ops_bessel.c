/* bessel_i0, bessel_i0e, bessel_i1 and bessel_i1e against their integral
 * representations, e^-x I_n(x) = (1 / pi) int_0^pi e^(x (cos t - 1))
 * cos(n t) dt (the trapezoid rule on this periodic integrand converges
 * geometrically; long double), across the series and the asymptotic
 * range, at known values, symmetric in x, at NaN, inf and overflow, in
 * f32 (the f64 result rounded once); each call checked the same bits
 * eagerly and traced on 1, 2 and 4 workers. */
#include <math.h>
#include <stdlib.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_bessel, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

/* e^-|x| I_order(|x|) by the trapezoid rule on [0, pi]. */
static long double scaled_ref(double x, int order)
{
    const int n = 8192;
    long double ax = fabsl((long double)x), sum = 0;
    for (int i = 0; i <= n; i++) {
        long double t = 3.141592653589793238462643383279502884L * i / n;
        long double v = expl(ax * (cosl(t) - 1)) * (order ? cosl(t) : 1);
        sum += i == 0 || i == n ? v / 2 : v;
    }
    return sum / n;
}

static const double xs[] = { 0,    1e-3, 0.5,  1,    2.5,  7,     15,  29.9,
                             30,   30.1, 45,   100,  300,  700 };
#define N_X (sizeof xs / sizeof xs[0])

Test(ops_bessel, scaled_forms_match_the_integral)
{
    const op_unary_fn fs[2] = { weft_bessel_i0e, weft_bessel_i1e };
    for (int order = 0; order < 2; order++) {
        double x[2 * N_X], y[2 * N_X];
        for (size_t i = 0; i < N_X; i++) {
            x[i] = xs[i];
            x[N_X + i] = -xs[i];
        }
        op_unary_values(fs[order], WEFT_F64, x, 2 * N_X, y);
        for (size_t i = 0; i < N_X; i++) {
            long double want = scaled_ref(xs[i], order);
            cr_assert(fabsl(y[i] - want) <= 2e-15L * fabsl(want) + 1e-19L,
                      "i%de(%g) = %.17g, want %.17Lg", order, xs[i], y[i], want);
            /* i0e is even, i1e odd. */
            cr_assert_eq(y[N_X + i], order ? -y[i] : y[i], "i%de(-%g)", order, xs[i]);
        }
    }
}

Test(ops_bessel, unscaled_forms_and_known_values)
{
    double x[N_X], i0[N_X], i1[N_X];
    for (size_t i = 0; i < N_X; i++)
        x[i] = xs[i];
    op_unary_values(weft_bessel_i0, WEFT_F64, x, N_X, i0);
    op_unary_values(weft_bessel_i1, WEFT_F64, x, N_X, i1);
    for (size_t i = 0; i < N_X; i++) {
        long double e = expl((long double)xs[i]);
        long double w0 = e * scaled_ref(xs[i], 0), w1 = e * scaled_ref(xs[i], 1);
        cr_assert(fabsl(i0[i] - w0) <= 4e-15L * w0, "i0(%g) = %.17g, want %.17Lg", xs[i], i0[i],
                  w0);
        cr_assert(fabsl(i1[i] - w1) <= 4e-15L * fabsl(w1) + 1e-19L, "i1(%g) = %.17g, want %.17Lg",
                  xs[i], i1[i], w1);
    }
    /* I0(1) and I1(1) (Abramowitz and Stegun, table 9.8). */
    cr_assert(fabs(i0[3] - 1.2660658777520082) <= 4e-16, "%.17g", i0[3]);
    cr_assert(fabs(i1[3] - 0.56515910399248503) <= 2e-16, "%.17g", i1[3]);
    cr_assert_eq(i0[0], 1);
    cr_assert_eq(i1[0], 0);
}

Test(ops_bessel, nan_inf_overflow_and_f32)
{
    double x[5] = { NAN, INFINITY, -INFINITY, 720, -720 }, y[5];
    op_unary_values(weft_bessel_i0e, WEFT_F64, x, 5, y);
    cr_assert(isnan(y[0]) && y[1] == 0 && y[2] == 0 && y[3] > 0 && y[3] < 0.02);
    op_unary_values(weft_bessel_i1e, WEFT_F64, x, 5, y);
    cr_assert(isnan(y[0]) && y[1] == 0 && y[2] == 0 && signbit(y[2]) && y[4] < 0);
    op_unary_values(weft_bessel_i0, WEFT_F64, x, 5, y);
    cr_assert(isnan(y[0]) && isinf(y[1]) && isinf(y[2]) && y[2] > 0 && isinf(y[3]));
    op_unary_values(weft_bessel_i1, WEFT_F64, x, 5, y);
    cr_assert(isnan(y[0]) && y[1] == INFINITY && y[2] == -INFINITY && y[4] == -INFINITY);
    /* f32: the f64 result of the f32 input, rounded once. */
    const op_unary_fn fs[4] = { weft_bessel_i0, weft_bessel_i0e, weft_bessel_i1, weft_bessel_i1e };
    double g[N_X];
    for (size_t i = 0; i < N_X; i++)
        g[i] = xs[i] / 8 - 3;
    for (int k = 0; k < 4; k++)
        op_expect_f32_from_f64(fs[k], g, N_X, "i0, i0e, i1, i1e");
}
