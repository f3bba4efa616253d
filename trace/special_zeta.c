/* The Hurwitz zeta function and polygamma, for the BINARY ops zeta and
 * polygamma (tf.math's), in long double and rounded once to double (the
 * f32 forms round the double result), called alike by the interpreter's
 * loops and by native code. */
#include <float.h>
#include <math.h>

#include "trace/kernels.h"

/* Below this q the direct sum would take more than |q| terms: NaN. */
#define ZETA_Q_MIN (-1048576.0)

/* (2j)! / B_2j for j = 1..12, the Euler-Maclaurin tail's coefficients
 * (cephes' zeta), from the Bernoulli numbers B_2 = 1/6, B_4 = -1/30, ...,
 * B_24 = -236364091/2730 in exact rational arithmetic. */
static const long double em_coefficient[12] = {
    1.200000000000000000000E+1L,  -7.200000000000000000000E+2L,
    3.024000000000000000000E+4L,  -1.209600000000000000000E+6L,
    4.790016000000000000000E+7L,  -1.892437580318379160637E+9L,
    7.472424960000000000000E+10L, -2.950130727918164224495E+12L,
    1.164678281435006724873E+14L, -4.597978722407472610546E+15L,
    1.815210540194354677343E+17L, -7.166165256175667011335E+18L,
};

/* zeta(x, q) = sum_k (q + k)^-x for x > 1: the first terms directly, at
 * least nine and up to q + k > 9, then the integral of the rest, half
 * its first term and the Euler-Maclaurin correction (cephes' method).
 * TensorFlow's (Eigen's) domain: +inf at x = 1 and at q a non-positive
 * integer, NaN for x < 1 and for q < 0 with x not an integer. */
double weft__zeta(double x, double q)
{
    if (isnan(x) || isnan(q) || x < 1)
        return NAN;
    if (x == 1)
        return INFINITY;
    if (q <= 0) {
        if (q == floor(q))
            return INFINITY;
        if (x != floor(x) || q < ZETA_Q_MIN)
            return NAN;
    }
    if (q == INFINITY)
        return 0;
    const long double eps = LDBL_EPSILON;
    long double xl = x, a = q, s = powl(a, -xl), b = 0;
    for (int i = 0; i < 9 || a <= 9; i++) {
        a += 1;
        b = powl(a, -xl);
        s += b;
        if (fabsl(b / s) < eps)
            return (double)s;
    }
    long double w = a;
    s += b * w / (xl - 1) - b / 2;
    long double rise = 1, k = 0;
    for (int j = 0; j < 12; j++) {
        rise *= xl + k;
        b /= w;
        long double t = rise * b / em_coefficient[j];
        s += t;
        if (fabsl(t / s) < eps)
            break;
        k += 1;
        rise *= xl + k;
        b /= w;
        k += 1;
    }
    return (double)s;
}

float weft__zetaf(float x, float q)
{
    return (float)weft__zeta(x, q);
}

/* psi^(n)(x) = (-1)^(n + 1) n! zeta(n + 1, x) for n = 1, 2, ...; psi for
 * n = 0; NaN for an n that is negative or not an integer (Eigen's). */
double weft__polygamma(double n, double x)
{
    if (isnan(n) || isnan(x) || n < 0 || n != floor(n))
        return NAN;
    if (n == 0)
        return weft__digamma(x);
    long double factorial = tgammal((long double)n + 1);
    long double sign = fmod(n, 2) == 1 ? 1 : -1;
    return (double)(sign * factorial * (long double)weft__zeta(n + 1, x));
}

float weft__polygammaf(float n, float x)
{
    return (float)weft__polygamma(n, x);
}
