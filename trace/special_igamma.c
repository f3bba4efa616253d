/* The regularized incomplete gamma functions P(a, x) and Q(a, x) = 1 -
 * P(a, x), for the BINARY ops igamma and igammac (tf.math's), in double;
 * the f32 forms round the double result once.  Defined for a > 0 and x >=
 * 0 (NaN elsewhere): P(a, 0) = 0, P(a, inf) = 1.
 *
 * Both share the factor x^a e^-x / Gamma(a), taken as exp(a ln x - x -
 * lgamma(a)) in long double.  Below x = a + 1, P's power series x^n /
 * ((a + 1) ... (a + n)),
 * whose terms fall once n passes x - a; from there on, Q's continued
 * fraction (Legendre's, evaluated by the modified Lentz method), which
 * converges fast when x is past a.  The other function is one minus the
 * first: where the first is above a half, the complement keeps fewer
 * digits (Q(1, 1.5) = 1 - 0.777: about 1e-15 relative). */
#include <float.h>
#include <math.h>

#include "trace/kernels.h"

#define TINY 1e-300

/* x^a e^-x / Gamma(a), its exponent in long double: in double, its
 * rounding alone (an ulp of a ln x or of x) would cost the result several
 * units in the 15th digit once the exponent passes 40.  lgammal_r, not
 * lgammal, which writes the global signgam from every thread. */
static double prefactor(double a, double x)
{
    long double la = a, lx = x;
    int sign;
    return (double)expl(la * logl(lx) - lx - lgammal_r(la, &sign));
}

/* P(a, x) for 0 < x < a + 1. */
static double p_series(double a, double x)
{
    double term = 1 / a, sum = term;
    for (int n = 1; n < 10000; n++) {
        term *= x / (a + n);
        sum += term;
        if (term <= DBL_EPSILON / 4 * sum)
            break;
    }
    return sum * prefactor(a, x);
}

/* Q(a, x) for x >= a + 1. */
static double q_fraction(double a, double x)
{
    double b = x + 1 - a, c = 1 / TINY, d = 1 / b, h = d;
    for (int i = 1; i < 10000; i++) {
        double an = -i * (i - a);
        b += 2;
        d = an * d + b;
        if (fabs(d) < TINY)
            d = TINY;
        c = b + an / c;
        if (fabs(c) < TINY)
            c = TINY;
        d = 1 / d;
        double step = d * c;
        h *= step;
        if (fabs(step - 1) <= DBL_EPSILON / 4)
            break;
    }
    return h * prefactor(a, x);
}

/* P(a, x) when upper is false, Q(a, x) when it is. */
static double incomplete_gamma(double a, double x, bool upper)
{
    if (isnan(a) || isnan(x) || a <= 0 || x < 0)
        return NAN;
    if (x == 0)
        return upper ? 1 : 0;
    if (isinf(x))
        return upper ? 0 : 1;
    if (isinf(a))
        return upper ? 1 : 0;
    if (x < a + 1) {
        double p = p_series(a, x);
        return upper ? 1 - p : p;
    }
    double q = q_fraction(a, x);
    return upper ? q : 1 - q;
}

double weft__igamma(double a, double x) { return incomplete_gamma(a, x, false); }
double weft__igammac(double a, double x) { return incomplete_gamma(a, x, true); }
float weft__igammaf(float a, float x) { return (float)weft__igamma(a, x); }
float weft__igammacf(float a, float x) { return (float)weft__igammac(a, x); }

/* ---- Derivatives in a ---------------------------------------------------
 *
 * d/da P(a, x) (TensorFlow's IgammaGradA) and the implicit derivative of a
 * Gamma(a) sample x in a, -(dP/da) / (dP/dx) (its RandomGammaGrad), by
 * Eigen's method, which TensorFlow's kernels use: the series or the
 * continued fraction of the value differentiated term by term along with
 * it, stopping once the derivative's terms stop counting.  Eigen's branch
 * point (the fraction for x > 1 and x > a), so the answers follow
 * TensorFlow's steps. */

#define DER_ITERATIONS 2000

typedef enum der_mode { DER_A, DER_SAMPLE } der_mode;

/* P's series x^a e^-x / Gamma(a + 1) (1 + x / (a + 1) + ...) and its
 * derivative. */
static double series_der(double a, double x, der_mode mode)
{
    double r = a, c = 1, ans = 1, dc_da = 0, dans_da = 0;
    for (int i = 0; i < DER_ITERATIONS; i++) {
        r += 1;
        double term = x / r, dterm_da = -x / (r * r);
        dc_da = term * dc_da + dterm_da * c;
        dans_da += dc_da;
        c *= term;
        ans += c;
        if (fabs(dc_da) <= DBL_EPSILON * fabs(dans_da))
            break;
    }
    double dlogax_da = log(x) - weft__digamma(a + 1);
    if (mode == DER_SAMPLE)
        return -(dans_da + ans * dlogax_da) * x / a;
    double ax = prefactor(a, x) / a;
    return ans * ax * dlogax_da + dans_da * ax;
}

/* Q's continued fraction (Cephes' recurrence of p_k / q_k) and its
 * derivative; both recurrences rescaled together when p_k grows. */
static double fraction_der(double a, double x, der_mode mode)
{
    const double big = 4.503599627370496e15, biginv = 2.22044604925031308085e-16;
    if (isinf(x))
        return 0;
    double y = 1 - a, z = x + y + 1, c = 0;
    double pkm2 = 1, qkm2 = x, pkm1 = x + 1, qkm1 = z * x, ans = pkm1 / qkm1;
    double dpkm2 = 0, dqkm2 = 0, dpkm1 = 0, dqkm1 = -x;
    double dans = (dpkm1 - ans * dqkm1) / qkm1;
    for (int i = 0; i < DER_ITERATIONS; i++) {
        c += 1;
        y += 1;
        z += 2;
        double yc = y * c;
        double pk = pkm1 * z - pkm2 * yc, qk = qkm1 * z - qkm2 * yc;
        double dpk = dpkm1 * z - pkm1 - dpkm2 * yc + pkm2 * c;
        double dqk = dqkm1 * z - qkm1 - dqkm2 * yc + qkm2 * c;
        if (qk != 0) {
            double dans_prev = dans;
            ans = pk / qk;
            dans = (dpk - ans * dqk) / qk;
            if (fabs(dans - dans_prev) <= DBL_EPSILON)
                break;
        }
        pkm2 = pkm1;
        pkm1 = pk;
        qkm2 = qkm1;
        qkm1 = qk;
        dpkm2 = dpkm1;
        dpkm1 = dpk;
        dqkm2 = dqkm1;
        dqkm1 = dqk;
        if (fabs(pk) > big) {
            pkm2 *= biginv;
            pkm1 *= biginv;
            qkm2 *= biginv;
            qkm1 *= biginv;
            dpkm2 *= biginv;
            dpkm1 *= biginv;
            dqkm2 *= biginv;
            dqkm1 *= biginv;
        }
    }
    double dlogax_da = log(x) - weft__digamma(a);
    if (mode == DER_SAMPLE)
        return (dans + ans * dlogax_da) * x;
    double ax = prefactor(a, x);
    /* dP/da = -dQ/da. */
    return -(ans * ax * dlogax_da + dans * ax);
}

static double igamma_der(double a, double x, der_mode mode)
{
    if (x == 0)
        return 0;
    if (isnan(a) || isnan(x) || a <= 0 || x < 0)
        return NAN;
    if (x > 1 && x > a)
        return fraction_der(a, x, mode);
    return series_der(a, x, mode);
}

double weft__igamma_grad_a(double a, double x) { return igamma_der(a, x, DER_A); }
double weft__random_gamma_grad(double alpha, double sample)
{
    return igamma_der(alpha, sample, DER_SAMPLE);
}
float weft__igamma_grad_af(float a, float x) { return (float)weft__igamma_grad_a(a, x); }
float weft__random_gamma_gradf(float alpha, float sample)
{
    return (float)weft__random_gamma_grad(alpha, sample);
}
