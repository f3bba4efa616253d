/* weft_kaiser_window, weft_kaiser_bessel_derived_window and
 * weft_vorbis_window against their definitions computed here in long
 * double (I0 by its power series), on 1, 2 and 4 workers, eagerly and
 * traced (the same bits everywhere); the Princen-Bradley condition of the
 * two MDCT windows; short lengths; and refused calls. */
#include <math.h>
#include <stdlib.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_windows, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

#define PI_L 3.141592653589793238462643383279502884L

typedef struct window_case {
    int kind;   /* 0 kaiser, 1 kaiser_bessel_derived, 2 vorbis */
    int64_t length;
    double beta;
    weft_dtype dtype;
} window_case;

static int window_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)a;
    const window_case *c = user;
    switch (c->kind) {
    case 0: outs[0] = weft_kaiser_window(cx, c->length, c->beta, c->dtype); break;
    case 1: outs[0] = weft_kaiser_bessel_derived_window(cx, c->length, c->beta, c->dtype); break;
    default: outs[0] = weft_vorbis_window(cx, c->length, c->dtype); break;
    }
    return weft_ctx_status(cx);
}

/* I0(x) by its power series sum (x^2 / 4)^k / k!^2. */
static long double bessel_i0(long double x)
{
    long double term = 1, sum = 1, q = x * x / 4;
    for (int k = 1; k < 500 && term > 1e-30L * sum; k++) {
        term *= q / ((long double)k * k);
        sum += term;
    }
    return sum;
}

static long double kaiser_at(int64_t i, int64_t length, double beta)
{
    if (length == 1)
        return 1;
    long double h = (long double)(length - 1) / 2, r = ((long double)i - h) / h;
    long double under = 1 - r * r;
    return bessel_i0(beta * sqrtl(under > 0 ? under : 0)) / bessel_i0(beta);
}

static long double window_at(const window_case *c, int64_t i)
{
    switch (c->kind) {
    case 0:
        return kaiser_at(i, c->length, c->beta);
    case 1: {
        int64_t half = c->length / 2, k = i < half ? i : c->length - 1 - i;
        long double run = 0, total = 0;
        for (int64_t j = 0; j <= half; j++) {
            long double w = kaiser_at(j, half + 1, c->beta);
            total += w;
            run += j <= k ? w : 0;
        }
        return sqrtl(run / total);
    }
    default: {
        long double s = sinl(PI_L / c->length * ((long double)i + 0.5L));
        return sinl(PI_L / 2 * s * s);
    }
    }
}

/* The window of c against window_at, to a few roundings of its dtype. */
static weft_tensor *check_window(const window_case *c)
{
    weft_tensor *y;
    op_results_everywhere(window_body, (void *)c, NULL, 0, &y, 1, "window");
    int64_t want_len = c->kind == 1 ? c->length / 2 * 2 : c->length;
    test_assert_shape(y, c->dtype, 1, &want_len, "window");
    /* Vorbis's outer sine of a small argument inherits the rounding of its
     * inner angle near pi: an absolute error, as TensorFlow's own. */
    double tol = c->dtype == WEFT_F32 ? 2e-6 : 1e-14, floor_ = c->kind == 2 ? 1.0 : 1e-3;
    for (int64_t i = 0; i < want_len; i++) {
        double got = test_element(y, i), want = (double)window_at(c, i);
        cr_assert(fabs(got - want) <= tol * (fabs(want) + floor_),
                  "window %d of %lld (beta %g, %s): element %lld is %.17g, want %.17g", c->kind,
                  (long long)c->length, c->beta, weft_dtype_name(c->dtype), (long long)i, got,
                  want);
    }
    return y;
}

Test(ops_windows, windows_match_their_definitions)
{
    static const int64_t lens[] = { 1, 2, 5, 8, 31, 64 };
    static const double betas[] = { 0.0, 3.5, 12.0 };
    for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++)
        for (int f = 0; f < 2; f++) {
            weft_dtype dt = f ? WEFT_F32 : WEFT_F64;
            for (size_t b = 0; b < 3; b++) {
                window_case k = { 0, lens[l], betas[b], dt };
                weft_tensor_release(check_window(&k));
                if (lens[l] % 2 == 0) {
                    window_case d = { 1, lens[l], betas[b], dt };
                    weft_tensor_release(check_window(&d));
                }
            }
            window_case v = { 2, lens[l], 0, dt };
            weft_tensor_release(check_window(&v));
        }
}

/* The MDCT windows satisfy w[i]^2 + w[i + L/2]^2 = 1, and a Kaiser window of
 * odd length peaks at 1 in its middle and is symmetric. */
Test(ops_windows, window_properties)
{
    for (int kind = 1; kind <= 2; kind++) {
        window_case c = { kind, 64, 4.0, WEFT_F64 };
        weft_tensor *y = check_window(&c);
        for (int64_t i = 0; i < 32; i++) {
            double a = test_element(y, i), b = test_element(y, i + 32);
            cr_assert(fabs(a * a + b * b - 1) < 1e-14, "kind %d, %lld: %.17g", kind,
                      (long long)i, a * a + b * b);
        }
        weft_tensor_release(y);
    }
    window_case k = { 0, 9, 6.0, WEFT_F64 };
    weft_tensor *y = check_window(&k);
    cr_assert_eq(test_element(y, 4), 1.0);
    for (int64_t i = 0; i < 9; i++)
        cr_assert_eq(test_element(y, i), test_element(y, 8 - i), "element %lld", (long long)i);
    weft_tensor_release(y);
    /* Length 0: an empty window. */
    for (int kind = 0; kind < 3; kind++) {
        window_case e = { kind, 0, 1.0, WEFT_F32 };
        weft_tensor *z = NULL;
        cr_assert_eq(op_call(rt, window_body, &e, NULL, 0, &z, 1, true), 0, "%s", weft_errmsg());
        test_assert_shape(z, WEFT_F32, 1, (int64_t[]){ 0 }, "empty window");
        weft_tensor_release(z);
    }
}

static int bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)a;
    switch (*(const int *)user) {
    case 0: outs[0] = weft_kaiser_window(cx, -1, 12, WEFT_F32); break;
    case 1: outs[0] = weft_kaiser_window(cx, 4, NAN, WEFT_F32); break;
    case 2: outs[0] = weft_kaiser_bessel_derived_window(cx, 5, 12, WEFT_F32); break;
    case 3: outs[0] = weft_vorbis_window(cx, 4, WEFT_I32); break;
    default: outs[0] = weft_kaiser_window(cx, 4, 12, WEFT_BOOL); break;
    }
    return weft_ctx_status(cx);
}

Test(ops_windows, refused_calls_name_the_op)
{
    static const op_error_case cases[] = {
        { 0, WEFT_EINVAL, "weft_kaiser_window: window_length -1 is negative" },
        { 1, WEFT_EINVAL, "weft_kaiser_window: beta nan is not finite" },
        { 2, WEFT_EINVAL, "weft_kaiser_bessel_derived_window: window_length 5 is odd" },
        { 3, WEFT_EINVAL, "weft_vorbis_window: dtype i32 is not f32 or f64" },
        { 4, WEFT_EINVAL, "weft_kaiser_window: dtype bool is not f32 or f64" },
    };
    op_expect_errors(rt, bad_body, cases, sizeof cases / sizeof cases[0], NULL, 0);
}
