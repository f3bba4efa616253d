/* zeta and polygamma against closed forms (Riemann zeta values, zeta(2,
 * 1/2) = pi^2 / 2, psi'(1) = pi^2 / 6 ...), against a direct sum of 10^5
 * terms plus its tail in long double, the recurrence zeta(x, q) =
 * zeta(x, q + 1) + q^-x, TensorFlow's domain (poles, NaN), polygamma(0,
 * x) = digamma(x) bit for bit, and f32 (the f64 result rounded once);
 * each call checked the same bits eagerly and traced on 1, 2 and 4
 * workers. */
#include <math.h>
#include <stdlib.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_zeta, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

#define PI_L 3.141592653589793238462643383279502884L

static void close_to(double got, long double want, long double rel, const char *what, double a,
                     double b)
{
    cr_assert(fabsl(got - want) <= rel * fabsl(want), "%s(%g, %g) = %.17g, want %.17Lg", what, a,
              b, got, want);
}

Test(ops_zeta, closed_forms)
{
    const long double pi2 = PI_L * PI_L;
    const double x[] = { 2, 3, 4, 2, 2, 1.5, 10, 2, 6 };
    const double q[] = { 1, 1, 1, 0.5, 2, 1, 1, -0.5, 1 };
    const long double want[] = {
        pi2 / 6, 1.202056903159594285399738161511449991L, pi2 * pi2 / 90, pi2 / 2, pi2 / 6 - 1,
        2.612375348685488343348567567924071414L, 1.000994575127818085337145958900319017L,
        pi2 / 2 + 4, pi2 * pi2 * pi2 / 945,
    };
    const size_t n = sizeof x / sizeof x[0];
    double y[sizeof x / sizeof x[0]];
    op_binary_values(weft_zeta, WEFT_F64, x, (int64_t)n, q, (int64_t)n, y);
    for (size_t i = 0; i < n; i++)
        close_to(y[i], want[i], 4e-16L, "zeta", x[i], q[i]);
    /* psi^(n)(x) = (-1)^(n + 1) n! zeta(n + 1, x). */
    const double pn[] = { 1, 1, 2, 3, 1 }, px[] = { 1, 0.5, 1, 1, 2 };
    const long double pw[] = { pi2 / 6, pi2 / 2, -2 * 1.202056903159594285399738161511449991L,
                               pi2 * pi2 / 15, pi2 / 6 - 1 };
    double py[5];
    op_binary_values(weft_polygamma, WEFT_F64, pn, 5, px, 5, py);
    for (size_t i = 0; i < 5; i++)
        close_to(py[i], pw[i], 6e-16L, "polygamma", pn[i], px[i]);
}

/* sum_{k < 10^5} (q + k)^-x plus the tail's integral, half its first
 * term and x / 12 (q + N)^-(x + 1): the Euler-Maclaurin sum cut where its
 * next term is below 1e-25 of the result for these x. */
static long double direct_zeta(long double x, long double q)
{
    const long N = 100000;
    long double s = 0;
    for (long k = N - 1; k >= 0; k--)
        s += powl(q + k, -x);
    long double a = q + N;
    return s + powl(a, 1 - x) / (x - 1) + powl(a, -x) / 2 + x / 12 * powl(a, -x - 1);
}

Test(ops_zeta, against_a_direct_sum_and_the_recurrence)
{
    const double xs[] = { 1.1, 2, 3.7, 10, 30 };
    const double qs[] = { 0.1, 0.5, 1, 3.3, 12, 100 };
    enum { NX = sizeof xs / sizeof xs[0], NQ = sizeof qs / sizeof qs[0] };
    double x[NX * NQ], q[NX * NQ], q1[NX * NQ], y[NX * NQ], y1[NX * NQ];
    for (int i = 0; i < NX; i++)
        for (int j = 0; j < NQ; j++) {
            x[i * NQ + j] = xs[i];
            q[i * NQ + j] = qs[j];
            q1[i * NQ + j] = qs[j] + 1;
        }
    op_binary_values(weft_zeta, WEFT_F64, x, NX * NQ, q, NX * NQ, y);
    op_binary_values(weft_zeta, WEFT_F64, x, NX * NQ, q1, NX * NQ, y1);
    for (int k = 0; k < NX * NQ; k++) {
        close_to(y[k], direct_zeta(x[k], q[k]), 6e-16L, "zeta", x[k], q[k]);
        long double step = powl(q[k], -(long double)x[k]);
        cr_assert(fabsl((long double)y[k] - y1[k] - step) <= 8e-16L * y[k],
                  "zeta(%g, %g) - zeta(%g, %g) = %.17Lg, want %.17Lg", x[k], q[k], x[k], q1[k],
                  (long double)y[k] - y1[k], step);
    }
}

Test(ops_zeta, domain)
{
    const double x[] = { 1, 0.5, 2, 2, 2.5, 3, 2, NAN, 2, 3, -1 };
    const double q[] = { 2, 2, 0, -2, -0.5, -2097151.5, INFINITY, 1, NAN, -1.5, 1 };
    const double want[] = { INFINITY, NAN, INFINITY, INFINITY, NAN, NAN, 0, NAN, NAN,
                            /* (-1.5)^-3 + (-0.5)^-3 + zeta(3, 0.5) */ 0, NAN };
    double y[11];
    op_binary_values(weft_zeta, WEFT_F64, x, 11, q, 11, y);
    for (int i = 0; i < 11; i++) {
        if (i == 9) {
            long double z = 7 * 1.202056903159594285399738161511449991L;
            close_to(y[i], z - 8 - 1 / 3.375L, 1e-15L, "zeta", x[i], q[i]);
            continue;
        }
        cr_assert(isnan(want[i]) ? isnan(y[i]) : y[i] == want[i], "zeta(%g, %g) = %g, want %g",
                  x[i], q[i], y[i], want[i]);
    }
    const double n[] = { 1.5, -1, NAN, 2 }, px[] = { 1, 1, 1, 0 };
    double py[4];
    op_binary_values(weft_polygamma, WEFT_F64, n, 4, px, 4, py);
    cr_assert(isnan(py[0]) && isnan(py[1]) && isnan(py[2]), "%g %g %g", py[0], py[1], py[2]);
    cr_assert(isinf(py[3]), "polygamma(2, 0) = %g, a pole", py[3]);
}

static int digamma_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_digamma(cx, a[0]);
    return weft_ctx_status(cx);
}

/* polygamma(0, x) is digamma, bit for bit; f32 rounds the f64 result. */
Test(ops_zeta, order_zero_is_digamma_and_f32_rounds_f64)
{
    const double x[] = { -2.5, -0.5, 0.25, 1, 1.4616321449683622, 7, 1e6 };
    const double zero[7] = { 0 };
    double y[7];
    op_binary_values(weft_polygamma, WEFT_F64, zero, 7, x, 7, y);
    int64_t n = 7;
    weft_tensor *t = test_tensor(WEFT_F64, 1, &n, x), *d;
    op_results_everywhere(digamma_body, NULL, &t, 1, &d, 1, "digamma");
    for (int i = 0; i < 7; i++)
        cr_assert(y[i] == test_element(d, i), "polygamma(0, %g) = %.17g, digamma %.17g", x[i],
                  y[i], test_element(d, i));
    weft_tensor_release(t);
    weft_tensor_release(d);
    const double zx[] = { 2, 3.5, 1.25, 20 }, zq[] = { 1, 0.75, 3, 2.5 };
    double z64[4], z32[4];
    op_binary_values(weft_zeta, WEFT_F64, zx, 4, zq, 4, z64);
    op_binary_values(weft_zeta, WEFT_F32, zx, 4, zq, 4, z32);
    for (int i = 0; i < 4; i++)
        cr_assert(z32[i] == (double)(float)z64[i], "zeta f32(%g, %g) = %.9g, want %.9g", zx[i],
                  zq[i], z32[i], (double)(float)z64[i]);
}
