/* bessel_j0 and bessel_j1 against Bessel's integrals, J_n(x) = (1 / pi)
 * int_0^pi cos(n t - x sin t) dt (the trapezoid rule on this periodic
 * integrand converges geometrically; long double); bessel_y0 and
 * bessel_y1 through the Wronskian J1 Y0 - J0 Y1 = 2 / (pi x) and known
 * values; symmetry, the domain's edges, NaN and inf, and f32 (the f64
 * result rounded once); each call checked the same bits eagerly and
 * traced on 1, 2 and 4 workers. */
#include <math.h>
#include <stdlib.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_bessel_jy, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

/* J_order(x) by the trapezoid rule on [0, pi]: enough points that the
 * error is far below a double's for |x| up to 60. */
static long double j_ref(double x, int order)
{
    const int n = 4096;
    long double sum = 0;
    for (int i = 0; i <= n; i++) {
        long double t = 3.141592653589793238462643383279502884L * i / n;
        long double v = cosl(order * t - (long double)x * sinl(t));
        sum += i == 0 || i == n ? v / 2 : v;
    }
    return sum / n;
}

static const double xs[] = { 1e-3, 0.5, 1, 2.404825557695773, 3.8317059702075125, 5, 7.5, 13,
                             25, 40, 60 };
#define N_X (sizeof xs / sizeof xs[0])

Test(ops_bessel_jy, j_matches_the_integral_and_its_symmetry)
{
    const op_unary_fn fs[2] = { weft_bessel_j0, weft_bessel_j1 };
    for (int order = 0; order < 2; order++) {
        double x[2 * N_X], y[2 * N_X];
        for (size_t i = 0; i < N_X; i++) {
            x[i] = xs[i];
            x[N_X + i] = -xs[i];
        }
        op_unary_values(fs[order], WEFT_F64, x, 2 * N_X, y);
        for (size_t i = 0; i < N_X; i++) {
            long double want = j_ref(xs[i], order);
            /* Near a zero (xs[3] for J0, xs[4] for J1) the error is
             * absolute: 1e-16 against values of order 1 elsewhere. */
            cr_assert(fabsl(y[i] - want) <= 4e-16L * fabsl(want) + 2e-16L,
                      "j%d(%g) = %.17g, want %.17Lg", order, xs[i], y[i], want);
            /* J0 is even, J1 odd. */
            cr_assert_eq(y[N_X + i], order ? -y[i] : y[i], "j%d(-%g)", order, xs[i]);
        }
    }
}

Test(ops_bessel_jy, y_through_the_wronskian_and_known_values)
{
    double x[N_X], j0[N_X], j1[N_X], y0[N_X], y1[N_X];
    for (size_t i = 0; i < N_X; i++)
        x[i] = xs[i];
    op_unary_values(weft_bessel_j0, WEFT_F64, x, N_X, j0);
    op_unary_values(weft_bessel_j1, WEFT_F64, x, N_X, j1);
    op_unary_values(weft_bessel_y0, WEFT_F64, x, N_X, y0);
    op_unary_values(weft_bessel_y1, WEFT_F64, x, N_X, y1);
    for (size_t i = 0; i < N_X; i++) {
        long double w = (long double)j1[i] * y0[i] - (long double)j0[i] * y1[i];
        long double want = 2 / (3.141592653589793238462643383279502884L * xs[i]);
        cr_assert(fabsl(w - want) <= 1e-14L * want, "Wronskian at %g: %.17Lg, want %.17Lg",
                  xs[i], w, want);
    }
    /* Y0(1) and Y1(1) (Abramowitz and Stegun, table 9.1), within a few ulps. */
    cr_assert(fabs(y0[2] - 0.088256964215676957983) <= 5e-17, "%.17g", y0[2]);
    cr_assert(fabs(y1[2] + 0.781212821300288716547) <= 2e-16, "%.17g", y1[2]);
}

Test(ops_bessel_jy, edges_nan_inf_and_f32)
{
    double x[6] = { 0, -1, NAN, INFINITY, -INFINITY, -0.0 }, y[6];
    op_unary_values(weft_bessel_j0, WEFT_F64, x, 6, y);
    cr_assert(y[0] == 1 && isnan(y[2]) && y[3] == 0 && y[4] == 0 && y[5] == 1);
    op_unary_values(weft_bessel_j1, WEFT_F64, x, 6, y);
    cr_assert(y[0] == 0 && y[1] < 0 && isnan(y[2]) && y[3] == 0 && y[4] == 0);
    const op_unary_fn ys[2] = { weft_bessel_y0, weft_bessel_y1 };
    for (int k = 0; k < 2; k++) {
        op_unary_values(ys[k], WEFT_F64, x, 6, y);
        cr_assert(y[0] == -INFINITY && isnan(y[1]) && isnan(y[2]) && y[3] == 0 && isnan(y[4]) &&
                  y[5] == -INFINITY, "y%d", k);
    }
    /* f32: the f64 result of the f32 input, rounded once. */
    const op_unary_fn fs[4] = { weft_bessel_j0, weft_bessel_j1, weft_bessel_y0, weft_bessel_y1 };
    for (int k = 0; k < 4; k++)
        op_expect_f32_from_f64(fs[k], xs, N_X, "j0, j1, y0, y1");
}
