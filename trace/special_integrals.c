/* Five of tf.math.special's integrals, for the UNARY ops expint, dawsn,
 * spence, fresnel_cos and fresnel_sin: weft's own, in long double and rounded once to double (the
 * f32 forms round the double result), called alike by the interpreter's
 * loops and by native code.  Each uses series whose terms do not cancel
 * where they are used, and an asymptotic series or continued fraction
 * where they would. */
#include <complex.h>
#include <float.h>
#include <math.h>

#include "trace/kernels.h"

#define EULER_GAMMA 0.577215664901532860606512090082402431L
#define PI2_6 1.644934066848226436472415166646025189L   /* pi^2 / 6 */
#define SERIES_EPS (LDBL_EPSILON / 4)

/* ---- Ei(x) ----------------------------------------------------------------- */

/* E1(y) = -Ei(-y) for y > 0: its alternating series up to 1, the
 * continued fraction e^-y / (y + 1 - 1 / (y + 3 - 4 / (y + 5 - ...)))
 * (modified Lentz) above. */
static long double e1(long double y)
{
    if (y <= 1) {
        long double t = 1, s = 0;
        for (int n = 1; n < 200; n++) {
            t *= -y / n;
            s -= t / n;
            if (fabsl(t / n) < SERIES_EPS * fabsl(s))
                break;
        }
        return -EULER_GAMMA - logl(y) + s;
    }
    const long double tiny = LDBL_MIN * 16;
    long double b = y + 1, c = 1 / tiny, d = 1 / b, h = d;
    for (int i = 1; i < 2000; i++) {
        long double an = -(long double)i * i;
        b += 2;
        d = an * d + b;
        d = 1 / (fabsl(d) < tiny ? tiny : d);
        c = b + an / c;
        if (fabsl(c) < tiny)
            c = tiny;
        long double step = c * d;
        h *= step;
        if (fabsl(step - 1) < SERIES_EPS)
            break;
    }
    return h * expl(-y);
}

/* Ei(x) = the principal value of the integral of e^t / t from -inf to x:
 * for 0 < x <= 50 gamma + ln x + sum x^n / (n n!) (positive terms), above
 * the asymptotic series e^x / x sum n! / x^n (its smallest term below
 * 1e-20 there), and -E1(-x) for x < 0 (SciPy's expi; TensorFlow documents
 * x > 0 only).  -inf at 0. */
double weft__expint(double x)
{
    if (isnan(x))
        return NAN;
    if (x == 0)
        return -INFINITY;
    if (x == -INFINITY)
        return -0.0;
    if (x < 0)
        return (double)-e1(-(long double)x);
    if (x == INFINITY)
        return INFINITY;
    long double v = x;
    if (v <= 50) {
        long double t = 1, s = 0;
        for (int n = 1; n < 400; n++) {
            t *= v / n;
            s += t / n;
            if (t / n < SERIES_EPS * s)
                break;
        }
        return (double)(EULER_GAMMA + logl(v) + s);
    }
    long double t = 1, s = 1;
    for (int n = 1; n < 400; n++) {
        long double next = t * n / v;
        if (next > t || next < SERIES_EPS * s)
            break;
        t = next;
        s += t;
    }
    return (double)(expl(v) / v * s);
}

float weft__expintf(float x)
{
    return (float)weft__expint(x);
}

/* ---- Dawson's integral --------------------------------------------------------- */

/* F(x) = e^-x^2 times the integral of e^t^2 from 0 to x: up to |x| = 7
 * e^-x^2 sum x^(2n+1) / (n! (2n + 1)) (positive terms: e^-x^2 times
 * sqrt(pi) / 2 erfi(x)), above the asymptotic series 1 / (2x) sum
 * (2n - 1)!! / (2 x^2)^n, whose smallest term is below 1e-21 there.  An
 * odd function. */
double weft__dawsn(double x)
{
    if (isnan(x))
        return NAN;
    long double a = fabs(x), f;
    if (a == INFINITY) {
        f = 0;
    } else if (a <= 7) {
        long double a2 = a * a, t = a, s = a;
        for (int n = 1; n < 600; n++) {
            t *= a2 / n;
            s += t / (2 * n + 1);
            if (t / (2 * n + 1) < SERIES_EPS * s)
                break;
        }
        f = expl(-a2) * s;
    } else {
        long double u = 1 / (2 * a * a), t = 1, s = 1;
        for (int n = 1; n < 200; n++) {
            long double next = t * (2 * n - 1) * u;
            if (next > t || next < SERIES_EPS * s)
                break;
            t = next;
            s += t;
        }
        f = s / (2 * a);
    }
    return (double)(x < 0 ? -f : f);
}

float weft__dawsnf(float x)
{
    return (float)weft__dawsn(x);
}

/* ---- Spence's function ---------------------------------------------------------- */

/* Li2(z) = sum z^k / k^2 for |z| <= 1/2. */
static long double li2_series(long double z)
{
    long double s = 0, p = z;
    for (int k = 1; k < 200; k++) {
        long double t = p / ((long double)k * k);
        s += t;
        if (fabsl(t) <= SERIES_EPS * fabsl(s))
            break;
        p *= z;
    }
    return s;
}

/* Li2(z) for z <= 1/2 through the series, Landen's identity Li2(z) =
 * -Li2(z / (z - 1)) - ln^2(1 - z) / 2 for -1 <= z < -1/2 and the
 * inversion Li2(z) = -pi^2 / 6 - ln^2(-z) / 2 - Li2(1 / z) below -1. */
static long double li2_low(long double z)
{
    if (z >= -0.5L)
        return li2_series(z);
    if (z >= -1) {
        long double l = log1pl(-z);
        return -li2_series(z / (z - 1)) - l * l / 2;
    }
    long double l = logl(-z);
    return -PI2_6 - l * l / 2 - li2_low(1 / z);
}

/* TensorFlow's spence(x) = the integral of ln t / (1 - t) from 1 to x,
 * which is Li2(1 - x), for x >= 0 (NaN below): below x = 1/2 through the
 * reflection Li2(1 - x) = pi^2 / 6 - ln x ln(1 - x) - Li2(x), so that x
 * itself, not 1 - x, enters the logarithms and the series. */
double weft__spence(double x)
{
    if (isnan(x) || x < 0)
        return NAN;
    if (x == 0)
        return (double)PI2_6;
    if (x == INFINITY)
        return -INFINITY;
    long double v = x;
    if (v < 0.5L)
        return (double)(PI2_6 - logl(v) * log1pl(-v) - li2_series(v));
    return (double)li2_low(1 - v);
}

float weft__spencef(float x)
{
    return (float)weft__spence(x);
}

/* ---- Fresnel integrals ----------------------------------------------------------- */

/* x^2 modulo 4 (the period of pi t^2 / 2 in t^2), kept exact with an FMA
 * so that large x keep their phase. */
static long double square_mod4(double x)
{
    double hi = x * x, lo = fma(x, x, -hi);
    return (long double)fmod(hi, 4.0) + lo;
}

/* C(x) and S(x), the integrals of cos(pi t^2 / 2) and sin(pi t^2 / 2)
 * from 0 to x: up to |x| = 2 their power series (sum over k of
 * (pi/2)^k x^(2k+1) / (k! (2k + 1)), even k to C and odd to S, signs
 * alternating in pairs), beyond it C + iS = (1 + i) / 2 erf(sqrt(pi) / 2
 * (1 - i) x) through erfc's complex continued fraction (modified Lentz).
 * Odd functions; 1/2 at infinity; NaN stays NaN. */
static void fresnel(double x, double *c_out, double *s_out)
{
    long double a = fabs(x), c, s;
    if (isnan(x)) {
        c = s = x;
    } else if (a == INFINITY) {
        c = s = 0.5L;
    } else if (a <= 2) {
        const long double half_pi = 1.570796326794896619231321691639751442L;
        long double t = a, x2 = a * a;
        c = a;
        s = 0;
        for (int k = 1; k < 200; k++) {
            t *= half_pi * x2 / k;
            long double term = t / (2 * k + 1);
            long double signed_term = (k / 2) % 2 ? -term : term;
            if (k % 2)
                s += signed_term;
            else
                c += signed_term;
            if (term < SERIES_EPS * (c > s ? c : s))
                break;
        }
    } else {
        const long double pi = 3.141592653589793238462643383279502884L;
        const long double tiny = LDBL_MIN * 16;
        long double complex b = 1 - I * pi * a * a;
        long double complex cc = 1 / tiny, d = 1 / b, h = d;
        long double n = -1;
        for (int k = 2; k < 400; k++) {
            n += 2;
            long double an = -n * (n + 1);
            b += 4;
            d = 1 / (an * d + b);
            cc = b + an / cc;
            long double complex step = cc * d;
            h *= step;
            if (fabsl(creall(step) - 1) + fabsl(cimagl(step)) < SERIES_EPS)
                break;
        }
        h *= a - I * a;
        long double phase = pi / 2 * square_mod4(a);
        long double complex cs = (0.5L + 0.5L * I) * (1 - (cosl(phase) + I * sinl(phase)) * h);
        c = creall(cs);
        s = cimagl(cs);
    }
    *c_out = (double)(x < 0 ? -c : c);
    *s_out = (double)(x < 0 ? -s : s);
}

double weft__fresnel_cos(double x)
{
    double c, s;
    fresnel(x, &c, &s);
    return c;
}

double weft__fresnel_sin(double x)
{
    double c, s;
    fresnel(x, &c, &s);
    return s;
}

float weft__fresnel_cosf(float x)
{
    return (float)weft__fresnel_cos(x);
}

float weft__fresnel_sinf(float x)
{
    return (float)weft__fresnel_sin(x);
}
