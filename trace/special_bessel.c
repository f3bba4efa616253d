/* The modified Bessel functions of the first kind of orders 0 and 1, for
 * the UNARY ops bessel_i0, bessel_i0e, bessel_i1 and bessel_i1e
 * (tf.math's), in double: the exponentially scaled forms i0e(x) =
 * exp(-|x|) I0(x) and i1e(x) = exp(-|x|) I1(x), and I0 and I1 from the
 * same series up to |x| = 30 or as exp(|x|) times the scaled forms
 * beyond; the f32 forms round the double result once.
 *
 * Up to |x| = 30 the power series (positive terms, no cancellation);
 * above, the asymptotic expansion e^x / sqrt(2 pi x) sum a_k / x^k, whose
 * terms shrink until k is about 2|x|: at |x| = 30 the smallest is below
 * 1e-24 of the first, so the series is cut at the first term below 1e-17
 * of the sum. */
#include <math.h>

#include "trace/kernels.h"

#define SERIES_MAX 30.0

/* sum over k of (x^2 / 4)^k / (k! (k + order)!), times (x / 2)^order. */
static double power_series(double ax, int order)
{
    double q = ax * ax / 4, term = order ? ax / 2 : 1, sum = term;
    for (int k = 1; k < 500 && term > 1e-17 * sum; k++) {
        term *= q / ((double)k * (double)(k + order));
        sum += term;
    }
    return sum;
}

/* sum over k of a_k / ax^k for order 0 or 1: a_k = a_{k-1} ((2k - 1)^2 -
 * 4 order^2) / (8 k) (the signs of I_nu's expansion folded in). */
static double asymptotic_series(double ax, int order)
{
    double mu = 4.0 * order * order, term = 1, sum = 1;
    for (int k = 1; k < 200; k++) {
        double odd = 2.0 * k - 1;
        term *= (odd * odd - mu) / (8.0 * k * ax);
        sum += term;
        if (fabs(term) <= 1e-17 * fabs(sum))
            break;
    }
    return sum / sqrt(2 * M_PI * ax);
}

/* exp(-|x|) I_order(|x|). */
static double scaled(double x, int order)
{
    double ax = fabs(x);
    if (isnan(x))
        return x;
    if (isinf(x))
        return 0;
    if (ax <= SERIES_MAX)
        return exp(-ax) * power_series(ax, order);
    return asymptotic_series(ax, order);
}

double weft__bessel_i0e(double x)
{
    return scaled(x, 0);
}

double weft__bessel_i1e(double x)
{
    return copysign(scaled(x, 1), x);   /* I1 is odd */
}

double weft__bessel_i0(double x)
{
    double ax = fabs(x);
    if (isinf(x))
        return INFINITY;
    if (ax <= SERIES_MAX)
        return power_series(ax, 0);
    /* exp(ax) overflows past 709.78, where I0 itself still fits a little
     * longer; two halves keep the product finite as long as I0 is. */
    double half = exp(ax / 2);
    return half * (half * scaled(x, 0));
}

double weft__bessel_i1(double x)
{
    double ax = fabs(x);
    if (isinf(x))
        return x;
    if (isnan(x))
        return x;
    if (ax <= SERIES_MAX)
        return copysign(power_series(ax, 1), x);
    double half = exp(ax / 2);
    return copysign(half * (half * scaled(x, 1)), x);
}

float weft__bessel_i0ef(float x)
{
    return (float)weft__bessel_i0e(x);
}

float weft__bessel_i1ef(float x)
{
    return (float)weft__bessel_i1e(x);
}

float weft__bessel_i0f(float x)
{
    return (float)weft__bessel_i0(x);
}

float weft__bessel_i1f(float x)
{
    return (float)weft__bessel_i1(x);
}
