/* ndtr, log_ndtr and erfcinv: values against the normal distribution
 * computed here in long double (erfcl), over both tails and the segments
 * of log_ndtr's three branches, in f64 and f32; erfcinv by the round trip
 * erfc(erfcinv(p)) = p; the special values; the same bits eagerly and
 * traced on 1, 2 and 4 workers; and the refused calls. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_ndtr, .init = suite_runtimes_create, .fini = suite_runtimes_destroy, .timeout = 60);

typedef enum nd_op { NDTR, LOG_NDTR, ERFCINV } nd_op;

/* user: an nd_op, or op_expect_errors' int holding one. */
static int nd_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    switch ((nd_op) * (const int *)user) {
    case NDTR: outs[0] = weft_ndtr(cx, a[0]); break;
    case LOG_NDTR: outs[0] = weft_log_ndtr(cx, a[0]); break;
    case ERFCINV: outs[0] = weft_erfcinv(cx, a[0]); break;
    }
    return weft_ctx_status(cx);
}

/* v[0..n) as a vector of dtype dt (f32 rounds each value). */
static weft_tensor *vec(weft_dtype dt, int64_t n, const double *v)
{
    weft_tensor *t = NULL;
    if (dt == WEFT_F64) {
        cr_assert_eq(weft_tensor_create(WEFT_F64, 1, &n, v, &t), 0, "%s", weft_errmsg());
        return t;
    }
    float *f = malloc((size_t)n * sizeof *f);
    for (int64_t i = 0; i < n; i++)
        f[i] = (float)v[i];
    cr_assert_eq(weft_tensor_create(WEFT_F32, 1, &n, f, &t), 0, "%s", weft_errmsg());
    free(f);
    return t;
}

/* n points from lo to hi (both included), in dtype dt. */
static weft_tensor *grid(weft_dtype dt, int64_t n, double lo, double hi)
{
    double *v = malloc((size_t)n * sizeof *v);
    for (int64_t i = 0; i < n; i++)
        v[i] = lo + (hi - lo) * (double)i / (double)(n - 1);
    weft_tensor *t = vec(dt, n, v);
    free(v);
    return t;
}

static weft_tensor *run(nd_op op, weft_tensor *x)
{
    int which = (int)op;
    weft_tensor *out;
    op_results_everywhere(nd_body, &which, &x, 1, &out, 1, "ndtr");
    cr_assert_eq(weft_tensor_dtype(out), weft_tensor_dtype(x));
    cr_assert_eq(weft_tensor_numel(out), weft_tensor_numel(x));
    return out;
}

static double at(const weft_tensor *t, int64_t i)
{
    return weft_tensor_dtype(t) == WEFT_F32 ? (double)((const float *)weft_tensor_data(t))[i]
                                            : ((const double *)weft_tensor_data(t))[i];
}

static long double ndtr_ref(long double x)
{
    return 0.5L * erfcl(-x / sqrtl(2.0L));
}

/* got within tol of want. */
static void expect_near(double got, long double want, double tol, const char *what, double x)
{
    long double err = fabsl((long double)got - want);
    cr_assert(err <= tol, "%s(%.17g) = %.17g, expected %.17Lg (tolerance %g)", what, x, got, want,
              tol);
}

/* The rounding of x sqrt(2)/2, the argument erf and erfc see, moves
 * log ndtr by about x^2 eps: ndtr by that much relatively, log_ndtr by
 * that much absolutely where it is large (x << 0) and relatively where it
 * is small (x >> 0).  Four times that, as TensorFlow's steps give. */
static double shift(double x, weft_dtype dt)
{
    return 4 * (1 + x * x) * (dt == WEFT_F32 ? FLT_EPSILON : DBL_EPSILON);
}

Test(ops_ndtr, ndtr_over_both_tails)
{
    /* f64 down to -37 (ndtr 5.7e-300, still normal), f32 down to -12.5
     * (ndtr 3.7e-36, above f32's smallest normal). */
    const struct { weft_dtype dt; double lo, hi; } cases[] = {
        { WEFT_F64, -37, 9 },
        { WEFT_F32, -12.5, 6 },
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        weft_tensor *x = grid(cases[c].dt, 4001, cases[c].lo, cases[c].hi);
        weft_tensor *y = run(NDTR, x);
        for (int64_t i = 0; i < weft_tensor_numel(x); i++) {
            long double want = ndtr_ref(at(x, i));
            expect_near(at(y, i), want, shift(at(x, i), cases[c].dt) * (double)want, "ndtr",
                        at(x, i));
        }
        weft_tensor_release(x);
        weft_tensor_release(y);
    }
}

Test(ops_ndtr, log_ndtr_over_its_three_segments)
{
    /* The grids cross the lower segment (-20, f32 -10), where the
     * asymptotic series takes over, and the upper (8, f32 5).  Three
     * terms of the series are exact to about 105 / x^8 absolutely: 4e-9
     * at -20 (2e-11 of the value), 1e-6 at -10 (2e-8 of it).  Near the
     * top, log(ndtr(x)) is as close to 0 as ndtr's rounding to 1 allows:
     * a few units of 1's last place. */
    const struct { weft_dtype dt; double lo, hi, series, one; } cases[] = {
        { WEFT_F64, -60, 40, 1e-10, 1e-15 },
        { WEFT_F32, -30, 20, 1e-7, 5e-7 },
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        weft_tensor *x = grid(cases[c].dt, 5001, cases[c].lo, cases[c].hi);
        weft_tensor *y = run(LOG_NDTR, x);
        for (int64_t i = 0; i < weft_tensor_numel(x); i++) {
            long double want = logl(ndtr_ref(at(x, i)));
            double mag = (double)fabsl(want);
            double tol = cases[c].one + cases[c].series * mag +
                         shift(at(x, i), cases[c].dt) * (mag < 1 ? mag : 1);
            expect_near(at(y, i), want, tol, "log_ndtr", at(x, i));
        }
        weft_tensor_release(x);
        weft_tensor_release(y);
    }
}

/* Above the upper segment log(ndtr(x)) would round to 0; -ndtr(-x)
 * keeps the value: relative accuracy where the middle branch has none. */
Test(ops_ndtr, log_ndtr_keeps_the_upper_tail)
{
    const struct { weft_dtype dt; double lo, hi; } cases[] = {
        { WEFT_F64, 9, 30 },   /* 9, 19.5, 30 */
        { WEFT_F32, 6, 12 },   /* 6, 9, 12 */
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        weft_tensor *x = grid(cases[c].dt, 3, cases[c].lo, cases[c].hi);
        weft_tensor *y = run(LOG_NDTR, x);
        for (int64_t i = 0; i < 3; i++) {
            long double want = -ndtr_ref(-(long double)at(x, i));
            cr_assert_lt(at(y, i), 0.0, "log_ndtr(%g) = %g", at(x, i), at(y, i));
            expect_near(at(y, i), want, shift(at(x, i), cases[c].dt) * -(double)want, "log_ndtr",
                        at(x, i));
        }
        weft_tensor_release(x);
        weft_tensor_release(y);
    }
}

Test(ops_ndtr, special_values)
{
    const double v[6] = { -INFINITY, INFINITY, NAN, 0, -0.0, 1 };
    int64_t n = 6;
    for (int dt = 0; dt < 2; dt++) {
        weft_tensor *x = vec(dt ? WEFT_F32 : WEFT_F64, n, v);
        weft_tensor *p = run(NDTR, x), *l = run(LOG_NDTR, x), *e = run(ERFCINV, x);
        cr_assert_eq(at(p, 0), 0.0);
        cr_assert_eq(at(p, 1), 1.0);
        cr_assert(isnan(at(p, 2)));
        cr_assert_eq(at(p, 3), 0.5);
        cr_assert_eq(at(p, 4), 0.5);
        cr_assert(isinf(at(l, 0)) && at(l, 0) < 0, "log_ndtr(-inf) = %g", at(l, 0));
        cr_assert_eq(at(l, 1), 0.0, "log_ndtr(inf) = %g", at(l, 1));
        cr_assert(isnan(at(l, 2)), "log_ndtr(nan) = %g", at(l, 2));
        expect_near(at(l, 3), logl(0.5L), dt ? 1e-7 : 1e-15, "log_ndtr", 0);
        /* erfcinv: inf at 0, 0 at 1, NaN outside [0, 2]. */
        cr_assert(isinf(at(e, 3)) && at(e, 3) > 0, "erfcinv(0) = %g", at(e, 3));
        cr_assert_eq(at(e, 5), 0.0, "erfcinv(1) = %g", at(e, 5));
        cr_assert(isnan(at(e, 0)) && isnan(at(e, 1)) && isnan(at(e, 2)));
        weft_tensor_release(p);
        weft_tensor_release(l);
        weft_tensor_release(e);
        weft_tensor_release(x);
    }
}

/* erfc(erfcinv(p)) = p for p in (0, 2), down to 1e-300 (f64) and 1e-30
 * (f32): each step of the inverse is checked through the function it
 * inverts, which the C library computes independently. */
Test(ops_ndtr, erfcinv_inverts_erfc)
{
    enum { N = 2000 };
    const struct { weft_dtype dt; double smallest, rel; } cases[] = {
        { WEFT_F64, 1e-300, 4e-12 },
        { WEFT_F32, 1e-30, 1e-4 },
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        double p[N];
        int64_t n = N;
        for (int i = 0; i < N / 2; i++) {
            /* Log-spaced up to 1, then mirrored towards 2. */
            p[i] = exp(log(cases[c].smallest) * (1.0 - (double)i / (N / 2 - 1)));
            p[N - 1 - i] = 2.0 - p[i] * 0.999;
        }
        weft_tensor *x = vec(cases[c].dt, n, p);
        weft_tensor *y = run(ERFCINV, x);
        for (int64_t i = 0; i < n; i++) {
            double want = at(x, i), got = (double)erfcl(at(y, i));
            /* Near 2 the relative error is erfc's slope at y over 2:
             * measure it on 2 - p there. */
            double rel = want > 1 ? fabs((2 - got) - (2 - want)) / (2 - want)
                                  : fabs(got - want) / want;
            cr_assert(rel <= cases[c].rel || fabs(got - want) <= 4 * DBL_EPSILON,
                      "erfc(erfcinv(%.17g)) = %.17g (erfcinv %.17g)", want, got, at(y, i));
        }
        weft_tensor_release(x);
        weft_tensor_release(y);
    }
}

Test(ops_ndtr, refused_calls_name_the_op)
{
    int64_t three = 3;
    weft_tensor *i = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_I32, 1, &three, (const int32_t[]){ 1, 2, 3 }, &i), 0);
    const op_error_case cases[] = {
        { NDTR, WEFT_EDTYPE, "weft_ndtr: i32[3] is not f32 or f64" },
        { LOG_NDTR, WEFT_EDTYPE, "weft_log_ndtr: i32[3] is not f32 or f64" },
        { ERFCINV, WEFT_EDTYPE, "weft_erfcinv: i32[3] is not f32 or f64" },
    };
    op_expect_errors(rts[1], nd_body, cases, sizeof cases / sizeof *cases, &i, 1);
    weft_tensor_release(i);
}
