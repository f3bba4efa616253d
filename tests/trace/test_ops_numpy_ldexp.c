/* np.ldexp and np.frexp against C's ldexp and frexp (NumPy's own
 * loops call them): normal, subnormal and overflowing results, powers
 * far past every range, zeros, infinities and NaN, f32 and f64, integer
 * operands, broadcasting; eager and traced on 1, 2 and 4 workers with
 * the same bits; gradients against central differences; the refusals. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "grad_check.h"
#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_numpy_ldexp, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

#define DIMS(...) ((const int64_t[]){ __VA_ARGS__ })
#define N 16

static int ldexp_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_ldexp(cx, a[0], a[1]);
    return weft_ctx_status(cx);
}

static const double xs[N] = { 1.5, -0.75, 3, 0.1, -0.0, INFINITY, -INFINITY, NAN,
                              0x1p-1022, 0x1.fffffffffffffp-1, 1e300, 7, -5e-324, 0.5, 1, -1e-310 };
static const double powers[N] = { 3, -2, 1000, -1074, 5, -7, 1, 2, -1, -1060, 100, -1e18,
                                   1074, 1e18, -1023, 60 };

/* The same bits as C's ldexp (ldexpf in f32) for every pair. */
Test(ops_numpy_ldexp, ldexp_is_cs)
{
    for (int d = 0; d < 2; d++) {
        weft_dtype dt = d ? WEFT_F32 : WEFT_F64;
        weft_tensor *args[2] = { test_tensor(dt, 1, DIMS(N), xs),
                                 test_tensor(d ? WEFT_I32 : WEFT_I64, 1, DIMS(N), powers) };
        if (d) {   /* i32 powers: 1e18 saturates to INT32_MAX first */
            weft_tensor_release(args[1]);
            double p32[N];
            for (int i = 0; i < N; i++)
                p32[i] = fmax(fmin(powers[i], INT32_MAX), INT32_MIN);
            args[1] = test_tensor(WEFT_I32, 1, DIMS(N), p32);
        }
        weft_tensor *y;
        op_results_everywhere(ldexp_body, NULL, args, 2, &y, 1, "ldexp");
        test_assert_shape(y, dt, 1, DIMS(N), "ldexp");
        for (int i = 0; i < N; i++) {
            double p = test_element(args[1], i), x = test_element(args[0], i);
            int e = p > 5000 ? 5000 : p < -5000 ? -5000 : (int)p;
            double want = d ? (double)ldexpf((float)x, e) : ldexp(x, e);
            double got = test_element(y, i);
            cr_assert(isnan(want) ? isnan(got) : memcmp(&got, &want, sizeof got) == 0,
                      "dtype %d: ldexp(%a, %d) is %a, not %a", d, x, e, got, want);
        }
        weft_tensor_release(y);
        weft_tensor_release(args[0]);
        weft_tensor_release(args[1]);
    }
    /* Integers give f64; a scalar power broadcasts. */
    weft_tensor *args[2] = { test_tensor(WEFT_I32, 2, DIMS(2, 2), (const double[]){ 1, -3, 5, 0 }),
                             test_tensor(WEFT_I64, 0, NULL, (const double[]){ -2 }) }, *y;
    op_results_everywhere(ldexp_body, NULL, args, 2, &y, 1, "integers");
    op_expect_values(y, WEFT_F64, (const double[]){ 0.25, -0.75, 1.25, 0 }, 4, "integers");
    weft_tensor_release(y);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

static int frexp_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    return weft_frexp(cx, a[0], outs);
}

/* C's frexp (frexpf) for numbers next to powers of two (where log2
 * rounds), subnormals, zeros, infinities and NaN. */
Test(ops_numpy_ldexp, frexp_is_cs)
{
    double v[64];
    int n = 0;
    for (int k = -1074; k <= 1023; k += 131) {   /* 17 powers */
        double p = ldexp(1, k);
        v[n++] = p;
        v[n++] = -nextafter(p, 0);
        v[n++] = nextafter(p, INFINITY) * 3;
    }
    const double special[] = { 0, -0.0, INFINITY, -INFINITY, NAN, DBL_MAX, 0.1, -7 };
    for (size_t i = 0; i < sizeof special / sizeof special[0]; i++)
        v[n++] = special[i];
    cr_assert(n <= 64);
    for (int d = 0; d < 2; d++) {
        weft_dtype dt = d ? WEFT_F32 : WEFT_F64;
        weft_tensor *x = test_tensor(dt, 1, DIMS(n), v), *y[2];
        op_results_everywhere(frexp_body, NULL, &x, 1, y, 2, "frexp");
        test_assert_shape(y[0], dt, 1, DIMS(n), "frexp mantissa");
        test_assert_shape(y[1], WEFT_I32, 1, DIMS(n), "frexp exponent");
        for (int i = 0; i < n; i++) {
            double xi = test_element(x, i), want;
            int e = 0;
            want = d ? (double)frexpf((float)xi, &e) : frexp(xi, &e);
            if (!isfinite(xi))
                e = 0;
            double got = test_element(y[0], i);
            cr_assert(isnan(want) ? isnan(got) : memcmp(&got, &want, sizeof got) == 0,
                      "dtype %d: frexp(%a) is %a, not %a", d, xi, got, want);
            cr_assert_eq(test_element(y[1], i), e, "dtype %d: frexp(%a)'s exponent %g, not %d", d,
                         xi, test_element(y[1], i), e);
        }
        for (int k = 0; k < 2; k++)
            weft_tensor_release(y[k]);
        weft_tensor_release(x);
    }
    /* Integers in f64: frexp(12) is (0.75, 4). */
    weft_tensor *x = test_tensor(WEFT_I64, 0, NULL, (const double[]){ 12 }), *y[2];
    op_results_everywhere(frexp_body, NULL, &x, 1, y, 2, "integer");
    op_expect_values(y[0], WEFT_F64, (const double[]){ 0.75 }, 1, "integer");
    op_expect_values(y[1], WEFT_I32, (const double[]){ 4 }, 1, "integer");
    for (int k = 0; k < 2; k++)
        weft_tensor_release(y[k]);
    weft_tensor_release(x);
}

static int grad_fn(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    if (*(const int *)user) {
        weft_value *o[2];
        int rc = weft_frexp(cx, a[0], o);
        outs[0] = rc == 0 ? weft_mul(cx, o[0], a[1]) : NULL;
        return rc < 0 ? rc : weft_ctx_status(cx);
    }
    outs[0] = weft_ldexp(cx, a[0], weft_cast(cx, a[1], WEFT_I32));
    return weft_ctx_status(cx);
}

/* ldexp's gradient in x1 is 2^x2; frexp's mantissa's 2^-e (points away
 * from powers of two, where the mantissa jumps). */
Test(ops_numpy_ldexp, gradients)
{
    static const double x[6] = { 1.3, -0.7, 5.5, 0.01, -12.2, 100.1 };
    static const double p[6] = { 2, -3, 0, 10, 1, -5 };
    const grad_arg in[2] = { { 1, { 6 }, x }, { 1, { 6 }, p } };
    for (int which = 0; which < 2; which++) {
        grad_case c = { grad_fn, &which, 2, 1 };
        expect_gradients(&c, in, which ? "frexp" : "ldexp");
    }
}

static int refused_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    if (*(const int *)user == 0) {
        outs[0] = weft_ldexp(cx, a[0], a[0]);
        return weft_ctx_status(cx);
    }
    return weft_frexp(cx, a[0], NULL);
}

Test(ops_numpy_ldexp, refusals)
{
    weft_tensor *x = test_tensor(WEFT_F64, 1, DIMS(2), (const double[]){ 1, 2 });
    static const op_error_case cases[] = {
        { 0, WEFT_EDTYPE, "weft_ldexp: x2 f64[2] is not integers (NumPy refuses a float power)" },
        { 1, WEFT_EINVAL, "weft_frexp: outs is NULL" },
    };
    op_expect_errors(rt, refused_body, cases, 2, &x, 1);
    weft_tensor_release(x);
}
