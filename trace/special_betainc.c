/* The regularized incomplete beta function I_x(a, b), for the TERNARY op
 * betainc (tf.math.betainc), in double; the f32 form rounds the double
 * result once.  Defined for a > 0, b > 0 (finite) and 0 <= x <= 1 (NaN
 * elsewhere, as TensorFlow's): I_0 = 0, I_1 = 1.
 *
 * Below x = (a + 1) / (a + b + 2), I_x(a, b) is the factor
 * x^a (1 - x)^b / (a B(a, b)) times the continued fraction of the
 * hypergeometric series (evaluated by the modified Lentz method), which
 * converges there in O(sqrt(max(a, b))) steps; above it, 1 - I_(1-x)(b, a),
 * the same on the other side.  Both run in long double: the factor's
 * exponent (a ln x + b ln(1 - x) + lgamma(a + b) - lgamma(a) - lgamma(b))
 * cancels terms far larger than the result, and its logarithms are taken
 * of x and of 1 - x as given (log1p), never of a rounded 1 - x. */
#include <float.h>
#include <math.h>

#include "trace/kernels.h"

#define TINY 1e-4000L
/* Enough for a and b up to about 1e8; past it the fraction is cut short
 * and the result keeps fewer digits. */
#define MAX_STEPS 20000

/* The continued fraction F of I_x(a, b) = x^a (1 - x)^b F / (a B(a, b)),
 * for x below (a + 1) / (a + b + 2). */
static long double fraction(long double a, long double b, long double x)
{
    long double c = 1, d = 1 - (a + b) * x / (a + 1);
    if (fabsl(d) < TINY)
        d = TINY;
    d = 1 / d;
    long double h = d;
    for (int m = 1; m <= MAX_STEPS; m++) {
        long double m2 = 2.0L * m;
        /* The even step, m (b - m) x / ((a + 2m - 1)(a + 2m)), then the odd
         * one, -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1)). */
        long double steps[2] = { m * (b - m) * x / ((a + m2 - 1) * (a + m2)),
                                 -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1)) };
        long double last = 1;
        for (int k = 0; k < 2; k++) {
            d = 1 + steps[k] * d;
            if (fabsl(d) < TINY)
                d = TINY;
            c = 1 + steps[k] / c;
            if (fabsl(c) < TINY)
                c = TINY;
            d = 1 / d;
            last = c * d;
            h *= last;
        }
        if (fabsl(last - 1) < 4 * LDBL_EPSILON)
            break;
    }
    return h;
}

/* I_x(a, b) below the split, with lx = ln x and lxc = ln(1 - x). */
static long double lower(long double a, long double b, long double x, long double lx,
                         long double lxc)
{
    int sign;
    long double lfront = a * lx + b * lxc + lgammal_r(a + b, &sign) - lgammal_r(a, &sign) -
                         lgammal_r(b, &sign);
    return expl(lfront) * fraction(a, b, x) / a;
}

double weft__betainc(double a, double b, double x)
{
    if (!(a > 0) || !(b > 0) || isinf(a) || isinf(b) || !(x >= 0 && x <= 1))
        return NAN;   /* NaN in any argument lands here too */
    if (x == 0 || x == 1)
        return x;
    long double lx = logl(x), lxc = log1pl(-(long double)x);
    if (x <= (a + 1) / (a + b + 2))
        return (double)lower(a, b, x, lx, lxc);
    return (double)(1 - lower(b, a, 1 - (long double)x, lxc, lx));
}

float weft__betaincf(float a, float b, float x)
{
    return (float)weft__betainc(a, b, x);
}
