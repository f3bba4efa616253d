/* expint, dawsn, spence and the Fresnel integrals against their defining
 * integrals by Simpson's rule in long double on a grid far finer than
 * needed (Ei(x) = gamma + ln|x| + int_0^x (e^t - 1) / t dt, E1(y) =
 * int_0^1 e^(-y/u) / u du, F(x) = int_0^x e^(t^2 - x^2) dt, spence(x) =
 * int_1^x ln t / (1 - t) dt, C(x) and S(x) = int_0^x cos or sin (pi t^2 /
 * 2) dt), known values, Li2's duplication formula, the domain's edges,
 * and f32 (the f64 result rounded once); each call checked the same bits
 * eagerly and traced on 1, 2 and 4 workers. */
#include <math.h>
#include <stdlib.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_integrals, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

#define EULER_L 0.577215664901532860606512090082402431L
#define PI_L 3.141592653589793238462643383279502884L

/* Simpson's rule for f over [a, b] with n (even) intervals. */
static long double simpson(long double (*f)(long double, long double), long double p,
                           long double a, long double b, long n)
{
    long double h = (b - a) / n, s = f(a, p) + f(b, p);
    for (long i = 1; i < n; i++)
        s += (i % 2 ? 4 : 2) * f(a + i * h, p);
    return s * h / 3;
}

static long double ei_integrand(long double t, long double p)
{
    (void)p;
    return t == 0 ? 1 : expm1l(t) / t;
}

static long double e1_integrand(long double u, long double y)
{
    return u == 0 ? 0 : expl(-y / u) / u;
}

/* e^(t^2 - x^2) at t = x - s: the integrand seen from its peak. */
static long double dawson_integrand(long double s, long double x)
{
    return expl(-s * (2 * x - s));
}

static long double spence_integrand(long double t, long double p)
{
    (void)p;
    return t == 1 ? -1 : logl(t) / (1 - t);
}

static long double fresnel_c_integrand(long double t, long double p)
{
    (void)p;
    return cosl(PI_L / 2 * t * t);
}

static long double fresnel_s_integrand(long double t, long double p)
{
    (void)p;
    return sinl(PI_L / 2 * t * t);
}

static void close_to(double got, long double want, long double rel, const char *what, double x)
{
    cr_assert(fabsl(got - want) <= rel * fabsl(want), "%s(%.17g) = %.17g, want %.17Lg (%.2Lg)",
              what, x, got, want, (got - want) / want);
}

Test(ops_integrals, expint_matches_its_integral)
{
    const double x[] = { 1e-8, 0.01, 0.3725, 0.5, 1, 2, 7.5, 20, 25, 33, 45, 49.9, 50.1, -1e-5, -0.5, -1,
                         -1.01, -3, -20, -60 };
    enum { N = sizeof x / sizeof x[0] };
    double y[N];
    op_unary_values(weft_expint, WEFT_F64, x, N, y);
    for (int i = 0; i < N; i++) {
        long double want;
        if (x[i] >= -1)
            want = EULER_L + logl(fabsl(x[i])) + simpson(ei_integrand, 0, 0, x[i], 400000);
        else
            want = -simpson(e1_integrand, -x[i], 0, 1, 400000);
        /* Near the root at 0.3725 the result is small beside its parts
         * (gamma + ln x and the sum, each about 0.4): there the error is
         * absolute, a few units of the parts' last place. */
        if (x[i] > 0.3 && x[i] < 0.4)
            cr_assert(fabsl(y[i] - want) <= 1e-16L, "expint(%g) = %.17g, want %.17Lg", x[i],
                      y[i], want);
        else
            close_to(y[i], want, 2e-15L, "expint", x[i]);
    }
}

Test(ops_integrals, expint_known_values_and_edges)
{
    const double x[] = { 1, 2, 10, -1, -2, 0, INFINITY, -INFINITY, NAN, 80, 700 };
    double y[11];
    op_unary_values(weft_expint, WEFT_F64, x, 11, y);
    close_to(y[0], 1.895117816355936755466520934331634269L, 3e-16L, "expint", 1);
    close_to(y[1], 4.954234356001890163379505130227035795L, 3e-16L, "expint", 2);
    close_to(y[2], 2492.228976241877759138440143998346L, 3e-16L, "expint", 10);
    close_to(y[3], -0.219383934395520273677163775460121649L, 3e-16L, "expint", -1);
    close_to(y[4], -0.048900510708061119567239835228049522L, 3e-16L, "expint", -2);
    cr_assert(y[5] == -INFINITY && y[6] == INFINITY && y[7] == 0 && isnan(y[8]), "%g %g %g %g",
              y[5], y[6], y[7], y[8]);
    /* Beyond the series: Ei'(x) = e^x / x, by a central difference. */
    for (int i = 9; i < 11; i++) {
        double h = 1e-4, p[2] = { x[i] - h, x[i] + h }, q[2];
        op_unary_values(weft_expint, WEFT_F64, p, 2, q);
        long double slope = ((long double)q[1] - q[0]) / (2 * h);
        close_to(y[i], slope * x[i] / expl(x[i]) * y[i], 1e-7L, "expint slope", x[i]);
    }
}

Test(ops_integrals, dawsn_matches_its_integral)
{
    const double x[] = { 1e-9, 0.2, 0.5, 0.9241388730, 1, 2.5, 5, 6.99, 7.01, 9, 15, -0.5, -3 };
    enum { N = sizeof x / sizeof x[0] };
    double y[N];
    op_unary_values(weft_dawsn, WEFT_F64, x, N, y);
    for (int i = 0; i < N; i++) {
        /* Beyond s = 45 / x the integrand is below e^-45. */
        long double a = fabsl(x[i]), upto = a < 45 / a ? a : 45 / a;
        long double want = copysignl(simpson(dawson_integrand, a, 0, upto, 1000000), x[i]);
        close_to(y[i], want, 1e-15L, "dawsn", x[i]);
    }
    const double e[] = { 1, 0, INFINITY, -INFINITY, NAN, 1e10 };
    double ye[6];
    op_unary_values(weft_dawsn, WEFT_F64, e, 6, ye);
    close_to(ye[0], 0.538079506912768419136387420407556L, 3e-16L, "dawsn", 1);
    cr_assert(ye[1] == 0 && ye[2] == 0 && ye[3] == 0 && signbit(ye[3]) && isnan(ye[4]),
              "%g %g %g %g", ye[1], ye[2], ye[3], ye[4]);
    close_to(ye[5], 0.5e-10L, 1e-15L, "dawsn", 1e10);
}

Test(ops_integrals, spence_matches_its_integral)
{
    const double x[] = { 0.2, 0.49, 0.51, 0.9, 1.2, 1.49, 1.51, 2, 2.9, 3.1, 10, 100 };
    enum { N = sizeof x / sizeof x[0] };
    double y[N];
    op_unary_values(weft_spence, WEFT_F64, x, N, y);
    for (int i = 0; i < N; i++) {
        long double want = simpson(spence_integrand, 0, 1, x[i], 400000);
        close_to(y[i], want, 2e-15L, "spence", x[i]);
    }
    const double e[] = { 0, 1, 2, 0.5, -1e-300, NAN, INFINITY, 1e-12 };
    double ye[8];
    op_unary_values(weft_spence, WEFT_F64, e, 8, ye);
    const long double pi2 = PI_L * PI_L, ln2 = 0.693147180559945309417232121458176568L;
    close_to(ye[0], pi2 / 6, 2e-16L, "spence", 0);
    cr_assert(ye[1] == 0, "spence(1) = %g", ye[1]);
    close_to(ye[2], -pi2 / 12, 2e-16L, "spence", 2);
    close_to(ye[3], pi2 / 12 - ln2 * ln2 / 2, 2e-16L, "spence", 0.5);
    cr_assert(isnan(ye[4]) && isnan(ye[5]) && ye[6] == -INFINITY, "%g %g %g", ye[4], ye[5],
              ye[6]);
    close_to(ye[7], pi2 / 6 - 1e-12L * (1 - logl(1e-12L)), 1e-15L, "spence", 1e-12);
    /* Li2(z) + Li2(-z) = Li2(z^2) / 2 with Li2(z) = spence(1 - z). */
    const double z[] = { 0.3, 0.7, 0.95 };
    for (int i = 0; i < 3; i++) {
        double in[3] = { 1 - z[i], 1 + z[i], 1 - z[i] * z[i] }, out[3];
        op_unary_values(weft_spence, WEFT_F64, in, 3, out);
        close_to(out[0] + out[1], (long double)out[2] / 2, 1e-14L, "duplication", z[i]);
    }
}

Test(ops_integrals, fresnel_matches_its_integrals)
{
    const double x[] = { 1e-6, 0.1, 0.5, 1, 1.99, 2.01, 3, 3.9, 5.5, 10, -2.5 };
    enum { N = sizeof x / sizeof x[0] };
    double c[N], s[N];
    op_unary_values(weft_fresnel_cos, WEFT_F64, x, N, c);
    op_unary_values(weft_fresnel_sin, WEFT_F64, x, N, s);
    for (int i = 0; i < N; i++) {
        long double wc = simpson(fresnel_c_integrand, 0, 0, x[i], 1000000);
        long double ws = simpson(fresnel_s_integrand, 0, 0, x[i], 1000000);
        /* Relative near 0 (S(x) is about x^3 there), else to the
         * functions' scale, 1/2. */
        close_to(c[i], wc, 2e-15L * (fabsl(x[i]) < 0.2 ? 1 : fmaxl(1, 0.5L / fabsl(wc))),
                 "fresnel_cos", x[i]);
        close_to(s[i], ws, 2e-15L * (fabsl(x[i]) < 0.2 ? 1 : fmaxl(1, 0.5L / fabsl(ws))),
                 "fresnel_sin", x[i]);
    }
    /* Known values, the limits, and a large x whose x^2 is a multiple of 4
     * (phase 0): C = 1/2 + O(x^-3), S = 1/2 - 1 / (pi x) + O(x^-5). */
    const double e[] = { 1, INFINITY, -INFINITY, NAN, 0, 1e5 };
    double ec[6], es[6];
    op_unary_values(weft_fresnel_cos, WEFT_F64, e, 6, ec);
    op_unary_values(weft_fresnel_sin, WEFT_F64, e, 6, es);
    close_to(ec[0], 0.779893400376822829474206413652690137L, 3e-16L, "fresnel_cos", 1);
    close_to(es[0], 0.438259147390354766076756696625152906L, 3e-16L, "fresnel_sin", 1);
    cr_assert(ec[1] == 0.5 && es[1] == 0.5 && ec[2] == -0.5 && es[2] == -0.5, "%g %g %g %g",
              ec[1], es[1], ec[2], es[2]);
    cr_assert(isnan(ec[3]) && isnan(es[3]) && ec[4] == 0 && es[4] == 0, "%g %g %g %g", ec[3],
              es[3], ec[4], es[4]);
    close_to(ec[5], 0.5L, 1e-15L, "fresnel_cos", 1e5);
    close_to(es[5], 0.5L - 1 / (PI_L * 1e5L), 1e-15L, "fresnel_sin", 1e5);
}

Test(ops_integrals, f32_rounds_the_f64_result)
{
    const double x[] = { -3, -0.5, 0.25, 1, 2.5, 7.25, 30 };
    op_expect_f32_from_f64(weft_expint, x, 7, "expint");
    op_expect_f32_from_f64(weft_dawsn, x, 7, "dawsn");
    const double s[] = { 0, 0.25, 0.75, 1.75, 5, 60 };
    op_expect_f32_from_f64(weft_spence, s, 6, "spence");
    op_expect_f32_from_f64(weft_fresnel_cos, x, 7, "fresnel_cos");
    op_expect_f32_from_f64(weft_fresnel_sin, x, 7, "fresnel_sin");
}
