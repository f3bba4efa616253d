/* The modified Bessel functions of the second kind of orders 0 and 1, for
 * the UNARY ops bessel_k0, bessel_k0e, bessel_k1 and bessel_k1e
 * (tf.math.special's), in double; the f32 forms round the double result
 * once.  Defined for x > 0: +inf at 0, NaN below, 0 at +inf.
 *
 * Up to x = 1, the power series of Abramowitz and Stegun 9.6.13 (K0) and
 * 9.6.11 (K1) around I0 and I1, whose terms are all of one sign there.
 * Above, the scaled form from its integral, k_nu e(x) = int_0^inf
 * exp(-x (cosh t - 1)) cosh(nu t) dt, by the trapezoid rule: the
 * integrand is analytic and decays double-exponentially, so the rule's
 * error is about exp(x (1 - cos d) - 2 pi d / h) for a strip of
 * half-width d <= pi / 2 around the real line: a step h of pi^2 / (45 +
 * x) up to x = 200 (d = pi / 2) and 0.6 / sqrt(x) beyond (d near 2 pi /
 * (h x)) keeps it below 1e-18, with 15 to 25 terms at any x. */
#include <math.h>

#include "trace/kernels.h"

#define SERIES_MAX 1.0
#define EULER_GAMMA 0.57721566490153286061

/* The power series part of K_order(x) for 0 < x <= SERIES_MAX. */
static double k_series(double x, int order)
{
    double q = x * x / 4, lg = log(x / 2);
    if (order == 0) {
        /* -(ln(x/2) + gamma) I0(x) + sum_{k>=1} H_k q^k / (k!)^2 */
        double term = 1, h = 0, sum = 0;
        for (int k = 1; k < 60; k++) {
            term *= q / ((double)k * k);
            h += 1.0 / k;
            sum += h * term;
            if (term * h <= 1e-18 * sum)
                break;
        }
        return -(lg + EULER_GAMMA) * weft__bessel_i0(x) + sum;
    }
    /* 1/x + ln(x/2) I1(x) - (x/4) sum_{k>=0} (psi(k+1) + psi(k+2)) q^k /
     * (k! (k+1)!), with psi(k+1) = H_k - gamma. */
    double term = 1, h = 0, sum = 0;
    for (int k = 0; k < 60; k++) {
        if (k > 0) {
            term *= q / ((double)k * (k + 1));
            h += 1.0 / k;
        }
        double psi_sum = 2 * (h - EULER_GAMMA) + 1.0 / (k + 1);
        sum += psi_sum * term;
        if (k > 0 && fabs(psi_sum * term) <= 1e-18 * fabs(sum))
            break;
    }
    return 1 / x + lg * weft__bessel_i1(x) - x / 4 * sum;
}

/* exp(x) K_order(x) for x > SERIES_MAX, by the trapezoid rule. */
static double k_scaled_integral(double x, int order)
{
    double h = x <= 200 ? M_PI * M_PI / (45 + x) : 0.6 / sqrt(x), sum = 0.5;   /* t = 0, halved */
    for (int k = 1; k < 400; k++) {
        /* cosh t - 1 = 2 sinh^2(t / 2), without cancellation near 0. */
        double t = k * h, s = sinh(t / 2);
        double term = exp(-2 * x * s * s) * (order ? cosh(t) : 1);
        sum += term;
        if (term <= 1e-18 * sum)
            break;
    }
    return h * sum;
}

/* K_order(x), scaled by exp(x) when `scaled`. */
static double bessel_k(double x, int order, bool scaled)
{
    if (isnan(x) || x < 0)
        return NAN;
    if (x == 0)
        return INFINITY;
    if (isinf(x))
        return 0;
    if (x <= SERIES_MAX) {
        double k = k_series(x, order);
        return scaled ? k * exp(x) : k;
    }
    double ke = k_scaled_integral(x, order);
    return scaled ? ke : ke * exp(-x);
}

double weft__bessel_k0(double x) { return bessel_k(x, 0, false); }
double weft__bessel_k0e(double x) { return bessel_k(x, 0, true); }
double weft__bessel_k1(double x) { return bessel_k(x, 1, false); }
double weft__bessel_k1e(double x) { return bessel_k(x, 1, true); }
float weft__bessel_k0f(float x) { return (float)weft__bessel_k0(x); }
float weft__bessel_k0ef(float x) { return (float)weft__bessel_k0e(x); }
float weft__bessel_k1f(float x) { return (float)weft__bessel_k1(x); }
float weft__bessel_k1ef(float x) { return (float)weft__bessel_k1e(x); }
