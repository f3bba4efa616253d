/* Special functions that libm lacks, for the UNARY ops digamma, erfinv
 * and ndtri: computed in double (the f32 forms round the double result
 * once), called alike by the interpreter's loops and by native code. */
#include <math.h>

#include "trace/kernels.h"

/* psi(x), the logarithmic derivative of gamma: for x < 10 the recurrence
 * psi(x) = psi(x + 1) - 1 / x up to 10 and beyond, then the asymptotic
 * series log(x) - 1 / (2x) - sum B_2k / (2k x^2k) to x^-14 (cephes'
 * psi); below 0 the reflection psi(x) = psi(1 - x) - pi / tan(pi x).  As
 * TensorFlow (Eigen): +inf at 0 and the negative integers, NaN at -inf. */
double weft__digamma(double x)
{
    static const long double series[7] = {
        8.33333333333333333333E-2L, -2.10927960927960927961E-2L, 7.57575757575757575758E-3L,
        -4.16666666666666666667E-3L, 3.96825396825396825397E-3L, -8.33333333333333333333E-3L,
        8.33333333333333333333E-2L
    };
    if (isnan(x) || x == -INFINITY)
        return NAN;
    if (x == INFINITY)
        return INFINITY;
    /* In long double: the recurrence's sum and the series nearly cancel
     * near psi's zero (psi(1) = -0.577 from log(10) - 2.83 ...), which
     * cost double two bits. */
    long double v = x, reflection = 0;
    if (v <= 0) {
        long double whole = floorl(v);
        if (whole == v)
            return INFINITY;
        /* pi / tan(pi x), with x reduced to the nearest fraction of the
         * period so that tan's argument is small. */
        long double frac = v - whole;
        if (frac != 0.5L) {
            if (frac > 0.5L)
                frac = v - (whole + 1);
            reflection = 3.14159265358979323846264338327950288L /
                         tanl(3.14159265358979323846264338327950288L * frac);
        }
        v = 1 - v;
    }
    long double below = 0;
    while (v < 10) {
        below += 1 / v;
        v += 1;
    }
    long double z = 1 / (v * v), poly = series[0];
    for (int k = 1; k < 7; k++)
        poly = poly * z + series[k];
    return (double)(logl(v) - 0.5L / v - z * poly - below - reflection);
}

float weft__digammaf(float x)
{
    return (float)weft__digamma(x);
}

/* The standard normal quantile: Acklam's rational approximation
 * (relative error below 1.2e-9), then one Halley step on erfc, which
 * leaves it within a few ulps.  0 and 1 give -inf and +inf; outside
 * [0, 1], and NaN, NaN. */
double weft__ndtri(double p)
{
    static const double a[6] = { -3.969683028665376e+01, 2.209460984245205e+02,
                                 -2.759285104469687e+02, 1.383577518672690e+02,
                                 -3.066479806614716e+01, 2.506628277459239e+00 };
    static const double b[5] = { -5.447609879822406e+01, 1.615858368580409e+02,
                                 -1.556989798598866e+02, 6.680131188771972e+01,
                                 -1.328068155288572e+01 };
    static const double c[6] = { -7.784894002430293e-03, -3.223964580411365e-01,
                                 -2.400758277161838e+00, -2.549732539343734e+00,
                                 4.374664141464968e+00, 2.938163982698783e+00 };
    static const double d[4] = { 7.784695709041462e-03, 3.224671290700398e-01,
                                 2.445134137142996e+00, 3.754408661907416e+00 };
    if (!(p >= 0 && p <= 1))
        return NAN;
    if (p == 0)
        return -INFINITY;
    if (p == 1)
        return INFINITY;
    double x;
    if (p < 0.02425 || p > 1 - 0.02425) {
        double q = sqrt(-2 * log(p < 0.5 ? p : 1 - p));
        x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
        x = p < 0.5 ? x : -x;
    } else {
        double q = p - 0.5, r = q * q;
        x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
            (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
    }
    /* Past |x| = 37.4, exp(x^2 / 2) overflows (p below 1e-300, where
     * Acklam's error is left). */
    if (x * x / 2 > 700)
        return x;
    double e = 0.5 * erfc(-x / 1.4142135623730951) - p;
    double u = e * 2.5066282746310002 * exp(x * x / 2);
    return x - u / (1 + x * u / 2);
}

float weft__ndtrif(float p)
{
    return (float)weft__ndtri(p);
}

/* The inverse of erf on [-1, 1].  Up to |x| = 0.5: Giles' single-precision
 * approximation ("Approximating the erfinv function", GPU Computing Gems,
 * 2011) as the start, then two Newton steps on erf.  Beyond, the tail:
 * -ndtri((1 - |x|) / 2) / sqrt(2), 1 - |x| exact there (an erf near 1
 * would cancel), polished by a Newton step on erfc.  +-1 give +-inf;
 * outside, and NaN, NaN.  Odd: erfinv(-x) = -erfinv(x) exactly. */
double weft__erfinv(double x)
{
    if (!(x >= -1 && x <= 1))
        return NAN;
    if (x == 0)
        return x;
    double ax = fabs(x);
    if (ax == 1)
        return copysign(INFINITY, x);
    const double two_over_sqrt_pi = 1.1283791670955126;
    double y;
    if (ax > 0.5) {
        y = -weft__ndtri((1 - ax) / 2) / 1.4142135623730951;
        y -= ((1 - ax) - erfc(y)) / (two_over_sqrt_pi * exp(-y * y));
        return copysign(y, x);
    }
    double w = -log((1 - ax) * (1 + ax)) - 2.5;
    double p = 2.81022636e-08;
    p = 3.43273939e-07 + p * w;
    p = -3.5233877e-06 + p * w;
    p = -4.39150654e-06 + p * w;
    p = 0.00021858087 + p * w;
    p = -0.00125372503 + p * w;
    p = -0.00417768164 + p * w;
    p = 0.246640727 + p * w;
    p = 1.50140941 + p * w;
    y = p * ax;
    for (int step = 0; step < 2; step++)
        y -= (erf(y) - ax) / (two_over_sqrt_pi * exp(-y * y));
    return copysign(y, x);
}

float weft__erfinvf(float x)
{
    return (float)weft__erfinv(x);
}
