/* igamma and igammac against closed forms in long double (Q(1, x) =
 * e^-x, P(1/2, x) = erf(sqrt(x)), Q(n, x) = e^-x sum_{k<n} x^k / k! for
 * whole n), on both sides of the series/continued fraction split at x =
 * a + 1; the recurrence P(a + 1, x) = P(a, x) - x^a e^-x / Gamma(a + 1)
 * at fractional a; P + Q = 1; large a; the domain's edges and NaN;
 * broadcasting a scalar a; f32 (the f64 result rounded once); each call
 * checked the same bits eagerly and traced on 1, 2 and 4 workers.  The
 * derivatives in a (IgammaGradA, RandomGammaGrad) against mpmath, and
 * random_gamma's gradients in alpha and beta. */
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

/* mpmath's d/da P(a, x) (numerical differentiation at 40 digits) and the
 * implicit derivative of a Gamma(a) sample x, -(dP/da) / (dP/dx), on both
 * sides of Eigen's branch (the fraction for x > 1 and x > a), a small a
 * and large ones (the fraction's many steps, its rescaling); the edges;
 * f32 rounded once. */
Test(ops_igamma, derivatives_in_a)
{
    static const double cases[15][4] = {
        { 0.5, 0.1, -0.82293609697959875, 0.50976556708269724 },
        { 0.5, 2.0, -0.13561933520399724, 2.5118893763620682 },
        { 1.0, 1.0, -0.4317297106348987, 1.1735630272247269 },
        { 2.5, 0.7, -0.11515032062805553, 0.52633279199687053 },
        { 2.5, 3.0, -0.22754855127826082, 1.1692620067376635 },
        { 3.0, 3.5, -0.2109843561898342, 1.140708948806544 },
        { 7.5, 4.0, -0.058876782392362066, 0.73428535165448764 },
        { 7.5, 12.0, -0.043521246206614132, 1.2814150454308808 },
        { 30.0, 28.0, -0.070492692760120132, 0.971282368474091 },
        { 0.01, 0.5, -0.56554591171525777, 46.679279405150682 },
        { 150.0, 140.0, -0.023793726651202103, 0.96697394060659943 },
        { 500.0, 501.0, -0.017808600913328569, 1.0013330671231247 },
        { 2000.0, 2010.0, -0.0086797731900177171, 1.0025793891561713 },
        { 20000.0, 20005.0, -0.0028188450754481146, 1.000133324001207 },
        { 100000.0, 100010.0, -0.0012608736857240229, 1.0000516650850802 },
    };
    double a[15], x[15], da[15], ds[15];
    for (int i = 0; i < 15; i++) {
        a[i] = cases[i][0];
        x[i] = cases[i][1];
    }
    op_binary_values(weft_igamma_grad_a, WEFT_F64, a, 15, x, 15, da);
    op_binary_values(weft_random_gamma_grad, WEFT_F64, a, 15, x, 15, ds);
    for (int i = 0; i < 15; i++) {
        /* Past a = 1e4 the fraction's thousands of steps cost digits. */
        long double rel = a[i] < 1e4 ? 1e-12L : 2e-11L;
        close_to(da[i], cases[i][2], rel, "igamma_grad_a", a[i], x[i]);
        close_to(ds[i], cases[i][3], rel, "random_gamma_grad", a[i], x[i]);
    }
    const double ea[5] = { 0, -1, 2, 2, NAN }, ex[5] = { 1, 1, -1, 0, 1 };
    op_binary_values(weft_igamma_grad_a, WEFT_F64, ea, 5, ex, 5, da);
    op_binary_values(weft_random_gamma_grad, WEFT_F64, ea, 5, ex, 5, ds);
    cr_assert(isnan(da[0]) && isnan(da[1]) && isnan(da[2]) && da[3] == 0 && isnan(da[4]));
    cr_assert(isnan(ds[0]) && isnan(ds[1]) && isnan(ds[2]) && ds[3] == 0 && isnan(ds[4]));
    double a32[11], x32[11], y32[11], y64[11];
    for (int i = 0; i < 11; i++) {
        a32[i] = (float)a[i];
        x32[i] = (float)x[i];
    }
    const op_binary_fn fs[2] = { weft_igamma_grad_a, weft_random_gamma_grad };
    for (int k = 0; k < 2; k++) {
        op_binary_values(fs[k], WEFT_F32, a32, 11, x32, 11, y32);
        op_binary_values(fs[k], WEFT_F64, a32, 11, x32, 11, y64);
        for (int i = 0; i < 11; i++)
            cr_assert_eq(y32[i], (double)(float)y64[i], "function %d at %d", k, i);
    }
}

/* A sum of Gamma(alpha) / beta draws: its gradient in alpha is the sum of
 * each sample's implicit derivative over beta (TensorFlow's rule), in
 * beta -sum(draws) / beta; alpha a scalar broadcast to the draws, f32 and
 * f64, on 1, 2 and 4 workers, eagerly and traced with the same bits. */
static int gamma_sum(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    static const int64_t dims[1] = { 300 };
    weft_dtype dt = *(const weft_dtype *)user;
    outs[0] = weft_random_gamma(cx, a[2], dt, 1, dims, a[0], a[1]);
    return weft_ctx_status(cx);
}

static int gamma_grads(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    weft_value *y = NULL, *g[2];
    if (weft_gradients(cx, gamma_sum, user, a, 3, 2, &y, g) < 0)
        return weft_ctx_status(cx);
    /* The rule written out: the draws before beta (2: exact), their
     * implicit derivatives. */
    weft_value *sample = weft_mul(cx, y, weft_cast(cx, a[1], *(const weft_dtype *)user));
    outs[0] = g[0];
    outs[1] = g[1];
    outs[2] = weft_sum(cx, weft_truediv(cx, weft_random_gamma_grad(cx, a[0], sample), a[1]),
                       WEFT_ALL_AXES);
    outs[3] = weft_neg(cx, weft_truediv(cx, weft_sum(cx, y, WEFT_ALL_AXES), a[1]));
    return weft_ctx_status(cx);
}

Test(ops_igamma, random_gamma_gradients)
{
    for (int f = 0; f < 2; f++) {
        weft_dtype dt = f ? WEFT_F64 : WEFT_F32;
        for (int k = 0; k < 2; k++) {
            const double alpha = k ? 3.7 : 0.6, beta = 2;
            weft_tensor *args[3] = { test_tensor(WEFT_F64, 0, NULL, &alpha),
                                     test_tensor(WEFT_F64, 0, NULL, &beta),
                                     test_tensor(WEFT_I64, 0, NULL, (const double[]){ 17 }) };
            weft_tensor *r[4];
            op_results_everywhere(gamma_grads, &dt, args, 3, r, 4, "random_gamma gradients");
            /* f32 draws take alpha rounded to f32 (TensorFlow's cast), so
             * the gradient in alpha passes through that cast's f32. */
            double tol = f ? 1e-12 : 1e-6;
            for (int j = 0; j < 2; j++) {
                double got = test_element(r[j], 0), want = test_element(r[2 + j], 0);
                cr_assert(got == want || fabs(got - want) <= tol * fabs(want),
                          "%s, alpha %g, %s: %.17g, want %.17g", f ? "f64" : "f32", alpha,
                          j ? "beta" : "alpha", got, want);
            }
            /* Each derivative is positive for these alphas: so is the sum. */
            cr_assert(test_element(r[0], 0) > 0, "alpha %g: %g", alpha, test_element(r[0], 0));
            for (int j = 0; j < 4; j++)
                weft_tensor_release(r[j]);
            for (int j = 0; j < 3; j++)
                weft_tensor_release(args[j]);
        }
    }
}
