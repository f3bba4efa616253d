/* digamma, erfinv and ndtri: known values, the identities that define
 * them (digamma's recurrence and reflection, erf(erfinv(x)) = x, the
 * normal CDF of ndtri(p) = p) against libm in long double, the special
 * values, f32 as the rounded f64 result, and the same bits eagerly and
 * traced on 1, 2 and 4 workers. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_special, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

typedef weft_value *(*unop)(weft_ctx *cx, weft_value *a);

static int un_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    outs[0] = (*(const unop *)user)(cx, a[0]);
    return weft_ctx_status(cx);
}

/* f(x[0..n)) in dtype dt, checked the same everywhere; the f64 results
 * into y. */
static void run_unop(unop f, weft_dtype dt, const double *x, int64_t n, double *y)
{
    weft_tensor *t = NULL;
    if (dt == WEFT_F64) {
        cr_assert_eq(weft_tensor_create(WEFT_F64, 1, &n, x, &t), 0);
    } else {
        float *v = malloc(sizeof *v * (size_t)n);
        cr_assert_not_null(v);
        for (int64_t i = 0; i < n; i++)
            v[i] = (float)x[i];
        cr_assert_eq(weft_tensor_create(WEFT_F32, 1, &n, v, &t), 0);
        free(v);
    }
    weft_tensor *out;
    op_results_everywhere(un_body, &f, &t, 1, &out, 1, "special");
    cr_assert_eq(weft_tensor_dtype(out), dt);
    for (int64_t i = 0; i < n; i++)
        y[i] = dt == WEFT_F64 ? ((const double *)weft_tensor_data(out))[i]
                              : ((const float *)weft_tensor_data(out))[i];
    weft_tensor_release(out);
    weft_tensor_release(t);
}

static bool close_to(double got, long double want, double tol)
{
    if (isnan((double)want))
        return isnan(got);
    if (isinf((double)want))
        return got == (double)want;
    return fabsl(got - want) <= tol * fmaxl(1, fabsl(want));
}

#define N_GRID 401

/* x from -20 to 20 in steps of 0.1, shifted off the integers. */
static void grid(double *x)
{
    for (int i = 0; i < N_GRID; i++)
        x[i] = -20 + 0.1 * i + 0.0123;
}

Test(ops_special, digamma)
{
    const long double gamma = 0.577215664901532860606512090082402431L;
    const double known_x[] = { 1, 0.5, 2, 10, 1e-8, 0, -1, -2.5, INFINITY, -INFINITY, NAN };
    const long double known[] = { -gamma, -gamma - 2 * logl(2), 1 - gamma,
                                  2.251752589066721107647456163885851537L,
                                  -100000000.5772156649015L, INFINITY, INFINITY,
                                  -gamma - 2 * logl(2) + 2 + 2.0L / 3 + 0.4L, INFINITY, NAN, NAN };
    size_t nk = sizeof known_x / sizeof known_x[0];
    double y[N_GRID * 3];
    run_unop(weft_digamma, WEFT_F64, known_x, (int64_t)nk, y);
    for (size_t i = 0; i < nk; i++)
        cr_assert(close_to(y[i], known[i], 4e-16), "digamma(%g) = %.17g, expected %.17Lg",
                  known_x[i], y[i], known[i]);
    /* The recurrence psi(x + 1) = psi(x) + 1 / x and the reflection
     * psi(1 - x) - psi(x) = pi cot(pi x) across the grid. */
    double x[N_GRID * 3];
    grid(x);
    for (int i = 0; i < N_GRID; i++) {
        x[N_GRID + i] = x[i] + 1;
        x[2 * N_GRID + i] = 1 - x[i];
    }
    run_unop(weft_digamma, WEFT_F64, x, 3 * N_GRID, y);
    for (int i = 0; i < N_GRID; i++) {
        long double step = (long double)y[N_GRID + i] - y[i] - 1.0L / x[i];
        long double refl = (long double)y[2 * N_GRID + i] - y[i] -
                           3.14159265358979323846264338327950288L /
                               tanl(3.14159265358979323846264338327950288L * x[i]);
        double scale = fmax(fabs(y[i]), fmax(fabs(1 / x[i]), 1));
        cr_assert(fabsl(step) <= 1e-14 * scale, "digamma recurrence at %g: off by %Lg", x[i],
                  step);
        cr_assert(fabsl(refl) <= 1e-13 * fmax(scale, fabs(y[2 * N_GRID + i])),
                  "digamma reflection at %g: off by %Lg", x[i], refl);
    }
    /* Large x: log(x) - 1 / (2x) - 1 / (12 x^2) + 1 / (120 x^4). */
    const double big[2] = { 1e4, 1e15 };
    run_unop(weft_digamma, WEFT_F64, big, 2, y);
    for (int i = 0; i < 2; i++) {
        long double b = big[i];
        long double want = logl(b) - 1 / (2 * b) - 1 / (12 * b * b) + 1 / (120 * b * b * b * b);
        cr_assert(close_to(y[i], want, 4e-16), "digamma(%g) = %.17g", big[i], y[i]);
    }
    /* f32 rounds the f64 result. */
    double y32[N_GRID];
    run_unop(weft_digamma, WEFT_F32, x, N_GRID, y32);
    for (int i = 0; i < N_GRID; i++) {
        float xf = (float)x[i];
        double want[1];
        run_unop(weft_digamma, WEFT_F64, (const double[]){ xf }, 1, want);
        cr_assert_eq(y32[i], (double)(float)want[0], "digamma f32 at %g", (double)xf);
        if (i > 8)
            break;   /* the rule, on a few points (each run_unop runs six calls) */
    }
}

Test(ops_special, erfinv_inverts_erf)
{
    enum { N = 2001 };
    double x[N], y[N];
    for (int i = 0; i < N; i++)
        x[i] = -1 + i * (2.0 / (N - 1));
    x[0] = -1 + DBL_EPSILON;   /* keep the ends for the special values */
    x[N - 1] = 1 - DBL_EPSILON / 2;
    run_unop(weft_erfinv, WEFT_F64, x, N, y);
    for (int i = 0; i < N; i++) {
        if (fabs(x[i]) <= 0.5) {
            long double back = erfl(y[i]);
            cr_assert(fabsl(back - x[i]) <= 4 * DBL_EPSILON * fmax(fabs(x[i]), 1e-300) + 1e-300,
                      "erf(erfinv(%.17g)) = %.17Lg", x[i], back);
        } else {
            /* One ulp of y moves erfc by about 2 y ulp(y) relative. */
            long double back = erfcl(fabsl(y[i])), want = 1 - fabsl(x[i]);
            cr_assert(fabsl(back - want) <= DBL_EPSILON * (4 + 4 * y[i] * y[i]) * want,
                      "erfc(erfinv(%.17g)) = %.17Lg, expected %.17Lg", x[i], back, want);
        }
        cr_assert(signbit(y[i]) == signbit(x[i]), "erfinv(%g) has the wrong sign", x[i]);
    }
    const double special[] = { 0, -0.0, 1, -1, 1.5, -2, NAN, 1e-300 };
    const double want[] = { 0, -0.0, INFINITY, -INFINITY, NAN, NAN, NAN,
                            1e-300 * 0.88622692545275801364908374167057259L };
    size_t ns = sizeof special / sizeof special[0];
    run_unop(weft_erfinv, WEFT_F64, special, (int64_t)ns, y);
    for (size_t i = 0; i < ns; i++)
        cr_assert(close_to(y[i], want[i], 4e-16) && signbit(y[i]) == signbit(want[i]),
                  "erfinv(%g) = %g, expected %g", special[i], y[i], want[i]);
}

Test(ops_special, ndtri_inverts_the_normal_cdf)
{
    enum { N = 1001 };
    double p[N + 4], y[N + 4];
    for (int i = 0; i < N; i++)
        p[i] = pow(10, -300 + 300.0 * i / (N - 1)) * (i % 2 ? 1 : 0.5);
    p[N] = 0.5;
    p[N + 1] = 1 - 1e-12;
    p[N + 2] = 0.975;
    p[N + 3] = 0.3;
    run_unop(weft_ndtri, WEFT_F64, p, N + 4, y);
    for (int i = 0; i < N + 4; i++) {
        /* One ulp of y moves the CDF by about |y| ulp(y) relative (the
         * Mills ratio), so the tolerance grows with y^2 in the tail. */
        long double cdf = 0.5L * erfcl(-(long double)y[i] / sqrtl(2));
        double tol = 1e-15 + 4 * y[i] * y[i] * DBL_EPSILON;
        cr_assert(fabsl(cdf - p[i]) <= tol * p[i], "cdf(ndtri(%.17g)) = %.17Lg", p[i], cdf);
    }
    cr_assert_eq(y[N], 0.0, "ndtri(0.5) = %g", y[N]);
    cr_assert(fabs(y[N + 2] - 1.959963984540054) < 1e-14, "ndtri(0.975) = %.17g", y[N + 2]);
    const double special[] = { 0, 1, -0.5, 1.5, NAN };
    const double want[] = { -INFINITY, INFINITY, NAN, NAN, NAN };
    run_unop(weft_ndtri, WEFT_F64, special, 5, y);
    for (int i = 0; i < 5; i++)
        cr_assert(close_to(y[i], want[i], 0), "ndtri(%g) = %g", special[i], y[i]);
    /* f32: the rounded f64 result, and erfinv's sign symmetry. */
    double y32[2], y64[2];
    run_unop(weft_ndtri, WEFT_F32, (const double[]){ 0.1, 0.9 }, 2, y32);
    run_unop(weft_ndtri, WEFT_F64, (const double[]){ (float)0.1, (float)0.9 }, 2, y64);
    for (int i = 0; i < 2; i++)
        cr_assert_eq(y32[i], (double)(float)y64[i]);
}

/* Integers compute in f64, as the other float functions. */
Test(ops_special, integers_compute_in_f64)
{
    int64_t n = 2;
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_I32, 1, &n, (const int32_t[]){ 1, 3 }, &t), 0);
    weft_tensor *out = NULL;
    const unop f = weft_digamma;
    cr_assert_eq(op_call(rts[0], un_body, (void *)&f, &t, 1, &out, 1, true), 0);
    cr_assert_eq(weft_tensor_dtype(out), WEFT_F64);
    double want[2];
    run_unop(weft_digamma, WEFT_F64, (const double[]){ 1, 3 }, 2, want);
    cr_assert(memcmp(weft_tensor_data(out), want, sizeof want) == 0);
    weft_tensor_release(out);
    weft_tensor_release(t);
}
