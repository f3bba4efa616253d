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
