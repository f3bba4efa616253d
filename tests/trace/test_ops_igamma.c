/* igamma and igammac against closed forms in long double (Q(1, x) =
 * e^-x, P(1/2, x) = erf(sqrt(x)), Q(n, x) = e^-x sum_{k<n} x^k / k! for
 * whole n), on both sides of the series/continued fraction split at x =
 * a + 1; the recurrence P(a + 1, x) = P(a, x) - x^a e^-x / Gamma(a + 1)
 * at fractional a; P + Q = 1; large a; the domain's edges and NaN;
 * broadcasting a scalar a; f32 (the f64 result rounded once); each call
 * checked the same bits eagerly and traced on 1, 2 and 4 workers. */
#include <math.h>
#include <stdlib.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_igamma, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

static void close_to(double got, long double want, long double rel, const char *what, double a,
                     double x)
{
    cr_assert(fabsl(got - want) <= rel * fabsl(want) + 1e-300L, "%s(%g, %g) = %.17g, want %.17Lg",
              what, a, x, got, want);
}

static const double xs[] = { 1e-5, 0.1, 0.5, 1, 1.4999, 1.5, 1.5001, 2, 3.7, 6, 10, 20, 45 };
#define N_X (sizeof xs / sizeof xs[0])

Test(ops_igamma, closed_forms)
{
    double p[N_X], q[N_X];
    const double one = 1, half = 0.5;
    op_binary_values(weft_igamma, WEFT_F64, &one, 1, xs, N_X, p);
    op_binary_values(weft_igammac, WEFT_F64, &one, 1, xs, N_X, q);
    for (size_t i = 0; i < N_X; i++) {
        /* Q as 1 - P below x = 2 keeps about 15 digits. */
        close_to(q[i], expl(-(long double)xs[i]), xs[i] < 2 ? 2e-15L : 4e-16L, "igammac", 1,
                 xs[i]);
        close_to(p[i], -expm1l(-(long double)xs[i]), 4e-16L, "igamma", 1, xs[i]);
    }
    op_binary_values(weft_igamma, WEFT_F64, &half, 1, xs, N_X, p);
    op_binary_values(weft_igammac, WEFT_F64, &half, 1, xs, N_X, q);
    for (size_t i = 0; i < N_X; i++) {
        long double r = sqrtl(xs[i]);
        close_to(p[i], erfl(r), 1e-15L, "igamma", 0.5, xs[i]);
        close_to(q[i], erfcl(r), 1e-14L, "igammac", 0.5, xs[i]);
    }
    /* Whole a from 2 to 30 at x on either side of a + 1. */
    for (int n = 2; n <= 30; n += 7) {
        double a = n;
        for (size_t i = 0; i < N_X; i++) {
            long double term = 1, sum = 0, x = xs[i];
            for (int k = 0; k < n; k++) {
                sum += term;
                term *= x / (k + 1);
            }
            long double want_q = expl(-x) * sum;
            double pq[2];
            op_binary_values(weft_igammac, WEFT_F64, &a, 1, &xs[i], 1, &pq[0]);
            op_binary_values(weft_igamma, WEFT_F64, &a, 1, &xs[i], 1, &pq[1]);
            close_to(pq[0], want_q, 1e-14L, "igammac", a, xs[i]);
            if (want_q < 0.5)
                close_to(pq[1], 1 - want_q, 1e-15L, "igamma", a, xs[i]);
        }
    }
}

Test(ops_igamma, recurrence_and_complement)
{
    const double as[] = { 0.3, 2.5, 7.25, 40.5 };
    for (size_t k = 0; k < sizeof as / sizeof as[0]; k++) {
        double a0 = as[k], a1 = as[k] + 1, p0[N_X], p1[N_X], q0[N_X];
        op_binary_values(weft_igamma, WEFT_F64, &a0, 1, xs, N_X, p0);
        op_binary_values(weft_igamma, WEFT_F64, &a1, 1, xs, N_X, p1);
        op_binary_values(weft_igammac, WEFT_F64, &a0, 1, xs, N_X, q0);
        for (size_t i = 0; i < N_X; i++) {
            long double x = xs[i];
            long double step = expl(a0 * logl(x) - x - lgammal(a1));
            cr_assert(fabsl((long double)p1[i] - (p0[i] - step)) <= 2e-15L,
                      "P(%g, %g) = %.17g against P(%g, x) - step = %.17Lg", a1, xs[i], p1[i], a0,
                      p0[i] - step);
            cr_assert(fabs(p0[i] + q0[i] - 1) <= 2e-16, "P + Q at (%g, %g): %.17g", a0, xs[i],
                      p0[i] + q0[i]);
        }
    }
    /* Large a: P(a, a) tends to 1/2 from above (about 1/2 + 1 / (3
     * sqrt(2 pi a))). */
    const double big[2] = { 1e3, 1e4 };
    for (int k = 0; k < 2; k++) {
        double p;
        op_binary_values(weft_igamma, WEFT_F64, &big[k], 1, &big[k], 1, &p);
        double want = 0.5 + 1 / (3 * sqrt(2 * M_PI * big[k]));
        cr_assert(fabs(p - want) <= 1e-4 / sqrt(big[k]), "P(%g, %g) = %.17g", big[k], big[k], p);
    }
}

Test(ops_igamma, edges_nan_broadcast_and_f32)
{
    const double a[6] = { 0, -1, 2, 2, 2, NAN }, x[6] = { 1, 1, -1, 0, INFINITY, 1 };
    double p[6], q[6];
    op_binary_values(weft_igamma, WEFT_F64, a, 6, x, 6, p);
    op_binary_values(weft_igammac, WEFT_F64, a, 6, x, 6, q);
    cr_assert(isnan(p[0]) && isnan(p[1]) && isnan(p[2]) && p[3] == 0 && p[4] == 1 && isnan(p[5]));
    cr_assert(isnan(q[0]) && isnan(q[1]) && isnan(q[2]) && q[3] == 1 && q[4] == 0 && isnan(q[5]));
    /* f32: the f64 result of the f32 inputs, rounded once. */
    double g[N_X], ga[N_X], y32[N_X], y64[N_X];
    for (size_t i = 0; i < N_X; i++) {
        g[i] = (float)xs[i];
        ga[i] = (float)(0.4 + 1.7 * (double)i);
    }
    const op_binary_fn fs[2] = { weft_igamma, weft_igammac };
    for (int k = 0; k < 2; k++) {
        op_binary_values(fs[k], WEFT_F32, ga, N_X, g, N_X, y32);
        op_binary_values(fs[k], WEFT_F64, ga, N_X, g, N_X, y64);
        for (size_t i = 0; i < N_X; i++)
            cr_assert_eq(y32[i], (double)(float)y64[i], "function %d at (%g, %g)", k, ga[i], g[i]);
    }
}
