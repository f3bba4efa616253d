/* NumPy's quantile, percentile and median, and their nan forms: against
 * NumPy 1.24's own
 * values and a loop written here in its formulas (bit for bit), eagerly
 * and traced on 1, 2 and 4 workers with the same bits; every method,
 * axes, keepdims and q of rank 0 and 1; f32 and integer dtypes; NaN rows
 * and infinite neighbours; one trace for every size and q; q out of
 * range failing the call; gradients; the refusals. */
#include <math.h>
#include <string.h>

#include "grad_check.h"
#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_numpy_quantile, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

#define DIMS(...) ((const int64_t[]){ __VA_ARGS__ })

/* [3, 5]: ties in rows 1 and 2. */
static const double a35[15] = { 3, -1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9 };
static const double q6[6] = { 0, 0.1, 0.25, 0.5, 0.9, 1 };

typedef enum which { QUANTILE, PERCENTILE, MEDIAN, NANQUANTILE, NANPERCENTILE, NANMEDIAN } which;

typedef struct quantile_case {
    which w;
    weft_quantile_method method;
    int axis;
    bool keepdims;
} quantile_case;

/* args: a, then q (not for the median). */
static int quantile_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const quantile_case *c = user;
    switch (c->w) {
    case QUANTILE:
        outs[0] = weft_quantile(cx, a[0], a[1], c->axis, c->method, c->keepdims);
        break;
    case PERCENTILE:
        outs[0] = weft_percentile(cx, a[0], a[1], c->axis, c->method, c->keepdims);
        break;
    case NANQUANTILE:
        outs[0] = weft_nanquantile(cx, a[0], a[1], c->axis, c->method, c->keepdims);
        break;
    case NANPERCENTILE:
        outs[0] = weft_nanpercentile(cx, a[0], a[1], c->axis, c->method, c->keepdims);
        break;
    case NANMEDIAN: outs[0] = weft_nanmedian(cx, a[0], c->axis, c->keepdims); break;
    default: outs[0] = weft_median(cx, a[0], c->axis, c->keepdims); break;
    }
    return weft_ctx_status(cx);
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return isnan(a) ? !isnan(b) : isnan(b) ? -1 : (a > b) - (a < b);
}

/* NumPy 1.24's _compute_virtual_index for alpha and beta. */
static double hyndman_fan(int n, double q, double alpha, double beta)
{
    return n * q + (alpha + q * (1 - alpha - beta)) - 1;
}

/* NumPy 1.24's _discret_interpolation_to_boundaries: floor(at) where at
 * is whole (closest: and that is even), else the next, 0 at the least. */
static int discrete(double at, bool closest)
{
    double lo = floor(at);
    bool on = at - lo == 0 && (!closest || fmod(lo, 2) == 0);
    double i = on ? lo : lo + 1;
    return i < 0 ? 0 : (int)i;
}

/* NumPy 1.24's _quantile of the sorted row v[0..n) at q; f32: the
 * difference of the neighbours rounded to f32 first, as NumPy subtracts
 * two f32 arrays.  Infinities: weft's rule, below. */
static double numpy_quantile(const double *v, int n, double q, weft_quantile_method m, bool f32)
{
    double at = q * (n - 1), nq1 = n * q - 1;
    switch (m) {
    case WEFT_QUANTILE_LOWER: return v[(int)floor(at)];
    case WEFT_QUANTILE_HIGHER: return v[(int)ceil(at)];
    case WEFT_QUANTILE_NEAREST: return v[(int)nearbyint(at)];
    case WEFT_QUANTILE_INVERTED_CDF: return v[discrete(nq1, false)];
    case WEFT_QUANTILE_CLOSEST_OBSERVATION: return v[discrete(nq1 - 0.5, true)];
    case WEFT_QUANTILE_MIDPOINT: at = 0.5 * (floor(at) + ceil(at)); break;
    case WEFT_QUANTILE_AVERAGED_INVERTED_CDF: at = nq1; break;
    case WEFT_QUANTILE_INTERPOLATED_INVERTED_CDF: at = hyndman_fan(n, q, 0, 1); break;
    case WEFT_QUANTILE_HAZEN: at = hyndman_fan(n, q, 0.5, 0.5); break;
    case WEFT_QUANTILE_WEIBULL: at = hyndman_fan(n, q, 0, 0); break;
    case WEFT_QUANTILE_MEDIAN_UNBIASED: at = hyndman_fan(n, q, 1 / 3.0, 1 / 3.0); break;
    case WEFT_QUANTILE_NORMAL_UNBIASED: at = hyndman_fan(n, q, 3 / 8.0, 3 / 8.0); break;
    case WEFT_QUANTILE_LINEAR: break;
    }
    bool top = at >= n - 1, under = at < 0;
    int lo = top ? n - 1 : under ? 0 : (int)floor(at), hi = top || under ? lo : lo + 1;
    double t = top ? at + 1 : under ? at : at - floor(at);
    if (m == WEFT_QUANTILE_MIDPOINT)
        t = floor(at) == at ? 0 : 0.5;
    if (m == WEFT_QUANTILE_AVERAGED_INVERTED_CDF)
        t = t == 0 ? 0.5 : 1;
    double d = f32 ? (double)(float)(v[hi] - v[lo]) : v[hi] - v[lo];
    double below = v[lo] + d * t, above = v[hi] - d * (1 - t);
    double y = t >= 0.5 ? above : below;
    if (isnan(v[n - 1]))
        return NAN;
    /* weft's rule where an infinity makes NaN: the other form, then the
     * neighbour itself when both are one. */
    y = isnan(y) ? (t >= 0.5 ? below : above) : y;
    return isnan(y) && v[lo] == v[hi] ? v[lo] : y;
}

/* NumPy's median of the sorted row v[0..n). */
static double numpy_median(const double *v, int n, bool f32)
{
    if (isnan(v[n - 1]))
        return NAN;
    if (n % 2)
        return v[n / 2];
    return f32 ? (double)(((float)v[n / 2 - 1] + (float)v[n / 2]) / 2.0f)
               : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Row r of a [rows, cols] matrix (axis 1) or column r (axis 0), sorted. */
static int sorted_line(const double *a, int rows, int cols, int axis, int r, double *out)
{
    int n = axis == 1 ? cols : rows;
    for (int k = 0; k < n; k++)
        out[k] = axis == 1 ? a[r * cols + k] : a[k * cols + r];
    qsort(out, (size_t)n, sizeof *out, cmp_double);
    return n;
}

/* The reference itself against NumPy 1.24's printed values (axis 1). */
Test(ops_numpy_quantile, reference_is_numpys)
{
    static const double numpy[13][18] = {
        { -1.0, 2.0, 5.0, -0.19999999999999996, 2.4, 5.8, 1.0, 3.0, 7.0, 3.0, 5.0, 8.0, 4.6,
          7.800000000000001, 9.0, 5.0, 9.0, 9.0 },
        { -1, 2, 5, -1, 2, 5, 1, 3, 7, 3, 5, 8, 4, 6, 9, 5, 9, 9 },
        { -1, 2, 5, 1, 3, 7, 1, 3, 7, 3, 5, 8, 5, 9, 9, 5, 9, 9 },
        { -1, 2, 5, -1, 2, 5, 1, 3, 7, 3, 5, 8, 5, 9, 9, 5, 9, 9 },
        { -1, 2, 5, 0, 2.5, 6, 1, 3, 7, 3, 5, 8, 4.5, 7.5, 9, 5, 9, 9 },
        /* inverted_cdf, averaged_inverted_cdf, closest_observation */
        { -1, 2, 5, -1, 2, 5, 1, 3, 7, 3, 5, 8, 5, 9, 9, 5, 9, 9 },
        { -1, 2, 5, -1, 2, 5, 1, 3, 7, 3, 5, 8, 5, 9, 9, 5, 9, 9 },
        { -1, 2, 5, -1, 2, 5, -1, 2, 5, 3, 5, 8, 5, 9, 9, 5, 9, 9 },
        /* interpolated_inverted_cdf, hazen, weibull */
        { -1, 2, 5, -1, 2, 5, -0.5, 2.25, 5.5, 2, 4, 7.5, 4.5, 7.5, 9, 5, 9, 9 },
        { -1, 2, 5, -1, 2, 5, 0.5, 2.75, 6.5, 3, 5, 8, 5, 9, 9, 5, 9, 9 },
        { -1, 2, 5, -1, 2, 5, 0, 2.5, 6, 3, 5, 8, 5, 9, 9, 5, 9, 9 },
        /* median_unbiased, normal_unbiased */
        { -1, 2, 5, -1, 2, 5, 0.3333333333333335, 2.666666666666667, 6.333333333333334, 3, 5, 8,
          5, 9, 9, 5, 9, 9 },
        { -1, 2, 5, -1, 2, 5, 0.375, 2.6875, 6.375, 3, 5, 8, 5, 9, 9, 5, 9, 9 },
    };
    double row[5];
    for (int m = 0; m < 13; m++)
        for (int k = 0; k < 6; k++)
            for (int r = 0; r < 3; r++) {
                int n = sorted_line(a35, 3, 5, 1, r, row);
                double y = numpy_quantile(row, n, q6[k], (weft_quantile_method)m, false);
                cr_assert_eq(y, numpy[m][k * 3 + r], "method %d q %g row %d: %.17g", m, q6[k],
                             r, y);
            }
}

/* Every method over axis 1 and axis 0, q a vector: the result is [q, rest],
 * bit for bit the reference's. */
Test(ops_numpy_quantile, methods_and_axes_are_numpys)
{
    weft_tensor *args[2] = { test_tensor(WEFT_F64, 2, DIMS(3, 5), a35),
                             test_tensor(WEFT_F64, 1, DIMS(6), q6) };
    double line[5];
    for (int m = 0; m < 13; m++)
        for (int axis = 0; axis < 2; axis++) {
            quantile_case c = { QUANTILE, (weft_quantile_method)m, axis == 0 ? -2 : 1, false };
            weft_tensor *y;
            op_results_everywhere(quantile_body, &c, args, 2, &y, 1, "quantile");
            int rest = axis == 1 ? 3 : 5;
            test_assert_shape(y, WEFT_F64, 2, DIMS(6, rest), "quantile");
            for (int k = 0; k < 6; k++)
                for (int r = 0; r < rest; r++) {
                    int n = sorted_line(a35, 3, 5, axis, r, line);
                    double want = numpy_quantile(line, n, q6[k], (weft_quantile_method)m, false);
                    cr_assert_eq(test_element(y, k * rest + r), want,
                                 "method %d axis %d q %g line %d: %.17g, want %.17g", m, axis,
                                 q6[k], r, test_element(y, k * rest + r), want);
                }
            weft_tensor_release(y);
        }
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

/* The Hyndman and Fan methods on 7 values at q where their indices fall
 * below 0, between elements, on one (closest_observation's even rule:
 * q 2/7 reads index 1, q 0.5 index 2) and near the top: NumPy 1.24's
 * printed values. */
Test(ops_numpy_quantile, hyndman_fan_methods_are_numpys)
{
    static const double x[7] = { 0.1, 0.7, -3.2, 2.25, 8.5, 1.0, 4.4 };
    static const double q[8] = { 0.05, 0.2, 0.3, 1 / 7.0, 2 / 7.0, 0.5, 0.64, 0.93 };
    static const double numpy[8][8] = {
        { -3.2, 0.1, 0.7, -3.2, 0.1, 1.0, 2.25, 8.5 },
        { -3.2, 0.1, 0.7, -1.55, 0.39999999999999997, 1.0, 2.25, 8.5 },
        { -3.2, -3.2, 0.1, -3.2, 0.1, 0.7, 1.0, 8.5 },
        { -3.2, -1.8799999999999997, 0.16000000000000006, -3.2, 0.1, 0.85, 1.6000000000000005,
          6.491000000000003 },
        { -3.2, -0.22999999999999957, 0.46, -1.55, 0.39999999999999997, 1.0,
          2.2250000000000005, 8.5 },
        { -3.2, -1.2199999999999998, 0.33999999999999997, -2.728571428571429,
          0.27142857142857135, 1.0, 2.5080000000000005, 8.5 },
        { -3.2, -0.5599999999999992, 0.4199999999999999, -1.942857142857143,
          0.3571428571428573, 1.0, 2.3073333333333346, 8.5 },
        { -3.2, -0.4774999999999995, 0.4300000000000001, -1.8446428571428577,
          0.36785714285714266, 1.0, 2.2822500000000012, 8.5 },
    };
    weft_tensor *args[2] = { test_tensor(WEFT_F64, 1, DIMS(7), x),
                             test_tensor(WEFT_F64, 1, DIMS(8), q) };
    for (int m = 0; m < 8; m++) {
        quantile_case c = { QUANTILE, WEFT_QUANTILE_INVERTED_CDF + m, 0, false };
        weft_tensor *y;
        op_results_everywhere(quantile_body, &c, args, 2, &y, 1, "hyndman-fan");
        test_assert_shape(y, WEFT_F64, 1, DIMS(8), "hyndman-fan");
        for (int k = 0; k < 8; k++)
            cr_assert_eq(test_element(y, k), numpy[m][k], "method %d q %g: %.17g", c.method,
                         q[k], test_element(y, k));
        weft_tensor_release(y);
    }
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

/* q a scalar, every axis at once and keepdims; percentile's q / 100. */
Test(ops_numpy_quantile, scalar_q_all_axes_keepdims_and_percentile)
{
    weft_tensor *a = test_tensor(WEFT_F64, 2, DIMS(3, 5), a35);
    weft_tensor *args[2] = { a, test_tensor(WEFT_F64, 0, NULL, (const double[]){ 0.3 }) }, *y;
    quantile_case c = { QUANTILE, WEFT_QUANTILE_LINEAR, 0, true };
    op_results_everywhere(quantile_body, &c, args, 2, &y, 1, "keepdims");
    test_assert_shape(y, WEFT_F64, 2, DIMS(1, 5), "keepdims");
    static const double numpy_axis0[5] = { 4.2, 0.7999999999999998, 5.2, 3.4, 4.2 };
    for (int j = 0; j < 5; j++)
        cr_assert_eq(test_element(y, j), numpy_axis0[j], "column %d", j);
    weft_tensor_release(y);
    weft_tensor_release(args[1]);
    /* t exactly 1/2 takes NumPy's upper form: np.quantile([-7.12, 8.97,
     * 20], 0.25) is 0.9250000000000007 (the lower form gives ...998). */
    weft_tensor *half[2] = { test_tensor(WEFT_F64, 1, DIMS(3), (const double[]){ 20, -7.12,
                                                                                  8.97 }),
                             test_tensor(WEFT_F64, 0, NULL, (const double[]){ 0.25 }) };
    op_results_everywhere(quantile_body, &c, half, 2, &y, 1, "t 1/2");
    cr_assert_eq(test_element(y, 0), 0.9250000000000007, "%.17g", test_element(y, 0));
    weft_tensor_release(y);
    weft_tensor_release(half[0]);
    weft_tensor_release(half[1]);
    /* Every axis: NumPy's [3.2, 6.799999999999999] at q 0.3 and 0.7, each
     * with a's two axes kept as 1. */
    args[1] = test_tensor(WEFT_F64, 1, DIMS(2), (const double[]){ 0.3, 0.7 });
    c = (quantile_case){ QUANTILE, WEFT_QUANTILE_LINEAR, WEFT_ALL_AXES, true };
    op_results_everywhere(quantile_body, &c, args, 2, &y, 1, "all axes");
    test_assert_shape(y, WEFT_F64, 3, DIMS(2, 1, 1), "all axes");
    cr_assert_eq(test_element(y, 0), 3.2);
    cr_assert_eq(test_element(y, 1), 6.799999999999999);
    weft_tensor_release(y);
    weft_tensor_release(args[1]);
    /* NumPy: np.percentile(a, [12.5, 50, 87.5], axis=1). */
    args[1] = test_tensor(WEFT_F64, 1, DIMS(3), (const double[]){ 12.5, 50, 87.5 });
    c = (quantile_case){ PERCENTILE, WEFT_QUANTILE_LINEAR, 1, false };
    op_results_everywhere(quantile_body, &c, args, 2, &y, 1, "percentile");
    static const double numpy_pct[9] = { 0.0, 2.5, 6.0, 3.0, 5.0, 8.0, 4.5, 7.5, 9.0 };
    for (int k = 0; k < 9; k++)
        cr_assert_eq(test_element(y, k), numpy_pct[k], "element %d: %.17g", k,
                     test_element(y, k));
    weft_tensor_release(y);
    weft_tensor_release(args[1]);
    weft_tensor_release(a);
}

/* f32: the f64 result rounded (NumPy 1.24's np.quantile(f, 0.35) is
 * 0.20500000342726707); integers: the picking methods keep i32, linear
 * gives f64 (NumPy's 2.6000000000000005 for [1, 5, 2, 8] at 0.4). */
Test(ops_numpy_quantile, dtypes)
{
    static const double f[4] = { 0.1, 0.7, 0.2, 0.3 };
    weft_tensor *args[2] = { test_tensor(WEFT_F32, 1, DIMS(4), f),
                             test_tensor(WEFT_F64, 0, NULL, (const double[]){ 0.35 }) }, *y;
    quantile_case c = { QUANTILE, WEFT_QUANTILE_LINEAR, 0, false };
    op_results_everywhere(quantile_body, &c, args, 2, &y, 1, "f32");
    test_assert_shape(y, WEFT_F32, 0, NULL, "f32");
    cr_assert_eq(test_element(y, 0), (double)(float)0.20500000342726707);
    double row[4];
    for (int k = 0; k < 4; k++)
        row[k] = (float)f[k];
    qsort(row, 4, sizeof *row, cmp_double);
    cr_assert_eq(test_element(y, 0),
                 (double)(float)numpy_quantile(row, 4, 0.35, WEFT_QUANTILE_LINEAR, true));
    weft_tensor_release(y);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
    /* The neighbours' difference rounds in f32 (NumPy subtracts f32
     * arrays): NumPy's -0.009840214681258175, which rounds to f32 where
     * the difference taken in f64 would not. */
    args[0] = test_tensor(WEFT_F32, 1, DIMS(2),
                          (const double[]){ 5.768574240505586e-08, -0.03936103358864784 });
    args[1] = test_tensor(WEFT_F64, 0, NULL, (const double[]){ 0.75 });
    op_results_everywhere(quantile_body, &c, args, 2, &y, 1, "f32 difference");
    cr_assert_eq(test_element(y, 0), (double)(float)-0.009840214681258175, "%.17g",
                 test_element(y, 0));
    weft_tensor_release(y);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
    args[0] = test_tensor(WEFT_I32, 1, DIMS(4), (const double[]){ 1, 5, 2, 8 });
    args[1] = test_tensor(WEFT_F64, 0, NULL, (const double[]){ 0.4 });
    op_results_everywhere(quantile_body, &c, args, 2, &y, 1, "i32 linear");
    test_assert_shape(y, WEFT_F64, 0, NULL, "i32 linear");
    cr_assert_eq(test_element(y, 0), 2.6000000000000005);
    weft_tensor_release(y);
    c.method = WEFT_QUANTILE_HIGHER;
    op_results_everywhere(quantile_body, &c, args, 2, &y, 1, "i32 higher");
    test_assert_shape(y, WEFT_I32, 0, NULL, "i32 higher");
    cr_assert_eq(test_element(y, 0), 5);
    weft_tensor_release(y);
    /* NumPy's: the discrete Hyndman and Fan methods keep i32, the others
     * give f64. */
    static const struct {
        weft_quantile_method m;
        weft_dtype dt;
        double want;
    } more[3] = { { WEFT_QUANTILE_INVERTED_CDF, WEFT_I32, 2 },
                  { WEFT_QUANTILE_CLOSEST_OBSERVATION, WEFT_I32, 2 },
                  { WEFT_QUANTILE_WEIBULL, WEFT_F64, 2.0 } };
    for (int k = 0; k < 3; k++) {
        c.method = more[k].m;
        op_results_everywhere(quantile_body, &c, args, 2, &y, 1, "i32 hyndman-fan");
        test_assert_shape(y, more[k].dt, 0, NULL, "i32 hyndman-fan");
        cr_assert_eq(test_element(y, 0), more[k].want, "method %d", more[k].m);
        weft_tensor_release(y);
    }
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

/* A row with a NaN gives NaN; an infinite neighbour gives that infinity
 * where NumPy 1.24's inf - inf makes NaN (2 and inf at t = 1/2, inf and
 * inf); -inf and inf between them stay NaN. */
Test(ops_numpy_quantile, nan_and_infinities)
{
    const double v[12] = { 1, NAN, 2, 3, 1, 2, INFINITY, INFINITY, -INFINITY, 0, 1, INFINITY };
    weft_tensor *args[2] = { test_tensor(WEFT_F64, 2, DIMS(3, 4), v),
                             test_tensor(WEFT_F64, 1, DIMS(2), (const double[]){ 0.9, 0.5 }) };
    weft_tensor *y;
    quantile_case c = { QUANTILE, WEFT_QUANTILE_LINEAR, 1, false };
    op_results_everywhere(quantile_body, &c, args, 2, &y, 1, "nan");
    cr_assert(isnan(test_element(y, 0)) && isnan(test_element(y, 3)), "NaN rows");
    cr_assert_eq(test_element(y, 1), INFINITY, "inf and inf: %g", test_element(y, 1));
    cr_assert_eq(test_element(y, 4), INFINITY, "2 and inf: %g", test_element(y, 4));
    /* Row 2 sorted is -inf 0 1 inf: at 0.9, 2.7 lies between 1 and inf. */
    cr_assert_eq(test_element(y, 2), INFINITY);
    cr_assert_eq(test_element(y, 5), 0.5);
    weft_tensor_release(y);
    /* -inf and inf: q 1/3 of [-inf, inf] is NaN whichever form. */
    weft_tensor *two[2] = { test_tensor(WEFT_F64, 1, DIMS(2), (const double[]){ INFINITY,
                                                                                 -INFINITY }),
                            test_tensor(WEFT_F64, 0, NULL, (const double[]){ 1.0 / 3 }) };
    c.axis = 0;
    op_results_everywhere(quantile_body, &c, two, 2, &y, 1, "-inf and inf");
    cr_assert(isnan(test_element(y, 0)), "%g", test_element(y, 0));
    weft_tensor_release(two[0]);
    weft_tensor_release(two[1]);
    weft_tensor_release(y);
    quantile_case med = { MEDIAN, 0, 1, false };
    op_results_everywhere(quantile_body, &med, args, 1, &y, 1, "median");
    cr_assert(isnan(test_element(y, 0)));
    cr_assert_eq(test_element(y, 1), 2 + INFINITY);
    cr_assert_eq(test_element(y, 2), 0.5);
    weft_tensor_release(y);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

/* NumPy's median: the middle one (even past the f64 range's half: no
 * x + x), or the mean of two in the float dtype (f32 rounds the sum). */
Test(ops_numpy_quantile, median_is_numpys)
{
    weft_tensor *a = test_tensor(WEFT_F64, 2, DIMS(3, 5), a35), *y;
    quantile_case c = { MEDIAN, 0, 1, false };
    op_results_everywhere(quantile_body, &c, &a, 1, &y, 1, "median rows");
    const double rows[3] = { 3, 5, 8 };
    for (int r = 0; r < 3; r++)
        cr_assert_eq(test_element(y, r), rows[r]);
    weft_tensor_release(y);
    c.axis = 0;
    c.keepdims = true;
    op_results_everywhere(quantile_body, &c, &a, 1, &y, 1, "median columns");
    test_assert_shape(y, WEFT_F64, 2, DIMS(1, 5), "median columns");
    const double cols[5] = { 5, 2, 6, 5, 5 };
    for (int j = 0; j < 5; j++)
        cr_assert_eq(test_element(y, j), cols[j]);
    weft_tensor_release(y);
    weft_tensor_release(a);
    /* Even lengths, f32: each pair's sum rounds to f32 before the halving. */
    const double f[6] = { 16777217, 3, 1, 16777216, 0.1, 0.3 };
    a = test_tensor(WEFT_F32, 2, DIMS(3, 2), f);
    c = (quantile_case){ MEDIAN, 0, 1, false };
    op_results_everywhere(quantile_body, &c, &a, 1, &y, 1, "median f32");
    test_assert_shape(y, WEFT_F32, 1, DIMS(3), "median f32");
    for (int r = 0; r < 3; r++) {
        double row[2] = { (float)f[2 * r], (float)f[2 * r + 1] };
        qsort(row, 2, sizeof *row, cmp_double);
        cr_assert_eq(test_element(y, r), numpy_median(row, 2, true), "row %d", r);
    }
    weft_tensor_release(y);
    weft_tensor_release(a);
    a = test_tensor(WEFT_F64, 1, DIMS(3), (const double[]){ 1.5e308, -1, 1.7e308 });
    c = (quantile_case){ MEDIAN, 0, WEFT_ALL_AXES, false };
    op_results_everywhere(quantile_body, &c, &a, 1, &y, 1, "median odd");
    cr_assert_eq(test_element(y, 0), 1.5e308);
    weft_tensor_release(y);
    weft_tensor_release(a);
    a = test_tensor(WEFT_I64, 1, DIMS(4), (const double[]){ 4, 1, 2, 7 });
    op_results_everywhere(quantile_body, &c, &a, 1, &y, 1, "median i64");
    test_assert_shape(y, WEFT_F64, 0, NULL, "median i64");
    cr_assert_eq(test_element(y, 0), 3);
    weft_tensor_release(y);
    weft_tensor_release(a);
}

/* Sizes and q unknown while tracing: one trace serves rows of 5 and 4
 * and q of 6 and 1, values the reference's. */
Test(ops_numpy_quantile, one_trace_for_every_size_and_q)
{
    const weft_spec sig[2] = { { WEFT_F64, 2, { 3, -1 } }, { WEFT_F64, 1, { -1 } } };
    quantile_case c = { QUANTILE, WEFT_QUANTILE_LINEAR, -1, false };
    weft_function *f = op_signature_function(rt, quantile_body, &c, sig, 2);
    for (int size = 0; size < 2; size++) {
        int cols = size ? 4 : 5, nq = size ? 1 : 6;
        double m[15], line[5];
        for (int r = 0; r < 3; r++)
            for (int k = 0; k < cols; k++)
                m[r * cols + k] = a35[r * 5 + k];
        const double *qs = size ? (const double[]){ 0.7 } : q6;
        weft_tensor *ts[2] = { test_tensor(WEFT_F64, 2, DIMS(3, cols), m),
                               test_tensor(WEFT_F64, 1, DIMS(nq), qs) }, *y = NULL;
        weft_arg args[2] = { weft_arg_tensor(ts[0]), weft_arg_tensor(ts[1]) };
        cr_assert_eq(weft_function_call(f, args, 2, &y, 1), 0, "%s", weft_errmsg());
        test_assert_shape(y, WEFT_F64, 2, DIMS(nq, 3), "traced");
        for (int k = 0; k < nq; k++)
            for (int r = 0; r < 3; r++) {
                int n = sorted_line(m, 3, cols, 1, r, line);
                cr_assert_eq(test_element(y, k * 3 + r),
                             numpy_quantile(line, n, qs[k], WEFT_QUANTILE_LINEAR, false),
                             "size %d q %d row %d", size, k, r);
            }
        weft_tensor_release(y);
        weft_tensor_release(ts[0]);
        weft_tensor_release(ts[1]);
    }
    op_destroy_traced_once(&f);
}

/* q outside [0, 1] (or [0, 100]), NaN included, fails the call when it
 * runs, traced or eager. */
Test(ops_numpy_quantile, q_out_of_range_fails_the_call)
{
    weft_tensor *a = test_tensor(WEFT_F64, 2, DIMS(3, 5), a35);
    const double bad[3] = { 1.5, -0.25, NAN };
    for (int k = 0; k < 3; k++)
        for (int pct = 0; pct < 2; pct++)
            for (int eager = 0; eager < 2; eager++) {
                double q = pct ? bad[k] * 100 : bad[k];
                weft_tensor *args[2] = { a, test_tensor(WEFT_F64, 1, DIMS(2),
                                                        (const double[]){ 0.5, q }) };
                quantile_case c = { pct ? PERCENTILE : QUANTILE, WEFT_QUANTILE_LINEAR, 1, false };
                weft_tensor *y = NULL;
                cr_assert_eq(op_call(rt, quantile_body, &c, args, 2, &y, 1, eager), WEFT_EINVAL,
                             "q %g", q);
                cr_assert(strstr(weft_errmsg(), pct ? "weft_percentile: q is not in [0, 100]"
                                                    : "weft_quantile: q is not in [0, 1]"),
                          "%s", weft_errmsg());
                cr_assert_null(y);
                weft_tensor_release(args[1]);
            }
    weft_tensor_release(a);
}

/* q a weak scalar: 0.3 along rows (two neighbours), 0.25 down the
 * columns of 3 (the midpoint of two). */
/* [3, 4] with NaNs: row 1 is all NaN. */
static const double m34[12] = { 1.5, NAN, -2, 4, NAN, NAN, NAN, NAN, 0.25, 3, NAN, -1 };

/* The nan forms read each row's numbers: NumPy's printed values for
 * every method at q 0, 0.3, 0.5, 1 along rows; a row of NaN gives NaN. */
Test(ops_numpy_quantile, nan_forms_are_numpys)
{
    static const double numpy[13][12] = {
        { -2.0, NAN, -1.0, 0.09999999999999987, NAN, -0.25, 1.5, NAN, 0.25, 4.0, NAN, 3.0 },
        { -2.0, NAN, -1.0, -2.0, NAN, -1.0, 1.5, NAN, 0.25, 4.0, NAN, 3.0 },
        { -2.0, NAN, -1.0, 1.5, NAN, 0.25, 1.5, NAN, 0.25, 4.0, NAN, 3.0 },
        { -2.0, NAN, -1.0, 1.5, NAN, 0.25, 1.5, NAN, 0.25, 4.0, NAN, 3.0 },
        { -2.0, NAN, -1.0, -0.25, NAN, -0.375, 1.5, NAN, 0.25, 4.0, NAN, 3.0 },
        { -2.0, NAN, -1.0, -2.0, NAN, -1.0, 1.5, NAN, 0.25, 4.0, NAN, 3.0 },
        { -2.0, NAN, -1.0, -2.0, NAN, -1.0, 1.5, NAN, 0.25, 4.0, NAN, 3.0 },
        { -2.0, NAN, -1.0, -2.0, NAN, -1.0, -2.0, NAN, -1.0, 4.0, NAN, 3.0 },
        { -2.0, NAN, -1.0, -2.0, NAN, -1.0, -0.25, NAN, -0.375, 4.0, NAN, 3.0 },
        { -2.0, NAN, -1.0, -0.6000000000000003, NAN, -0.5000000000000001, 1.5, NAN, 0.25, 4.0,
          NAN, 3.0 },
        { -2.0, NAN, -1.0, -1.3000000000000003, NAN, -0.75, 1.5, NAN, 0.25, 4.0, NAN, 3.0 },
        { -2.0, NAN, -1.0, -0.8333333333333335, NAN, -0.5833333333333335, 1.5, NAN, 0.25, 4.0,
          NAN, 3.0 },
        { -2.0, NAN, -1.0, -0.7750000000000004, NAN, -0.5625000000000002, 1.5, NAN, 0.25, 4.0,
          NAN, 3.0 },
    };
    weft_tensor *args[2] = { test_tensor(WEFT_F64, 2, DIMS(3, 4), m34),
                             test_tensor(WEFT_F64, 1, DIMS(4), (const double[]){ 0, 0.3, 0.5,
                                                                                  1 }) }, *y;
    for (int m = 0; m < 13; m++) {
        quantile_case c = { NANQUANTILE, (weft_quantile_method)m, 1, false };
        op_results_everywhere(quantile_body, &c, args, 2, &y, 1, "nanquantile");
        test_assert_shape(y, WEFT_F64, 2, DIMS(4, 3), "nanquantile");
        for (int i = 0; i < 12; i++)
            cr_assert(isnan(numpy[m][i]) ? isnan(test_element(y, i))
                                         : test_element(y, i) == numpy[m][i],
                      "method %d element %d: %.17g", m, i, test_element(y, i));
        weft_tensor_release(y);
    }
    /* np.nanpercentile(m, 40) over every axis is 0.25. */
    weft_tensor_release(args[1]);
    args[1] = test_tensor(WEFT_F64, 0, NULL, (const double[]){ 40 });
    quantile_case c = { NANPERCENTILE, WEFT_QUANTILE_LINEAR, WEFT_ALL_AXES, false };
    op_results_everywhere(quantile_body, &c, args, 2, &y, 1, "nanpercentile");
    test_assert_shape(y, WEFT_F64, 0, NULL, "nanpercentile");
    cr_assert_eq(test_element(y, 0), 0.25);
    weft_tensor_release(y);
    /* nanmedian: NumPy's [1.5, nan, 0.25] along rows and [0.875, 3, -2,
     * 1.5] down the columns (kept as a row of 1). */
    c = (quantile_case){ NANMEDIAN, 0, 1, false };
    op_results_everywhere(quantile_body, &c, args, 1, &y, 1, "nanmedian rows");
    cr_assert(test_element(y, 0) == 1.5 && isnan(test_element(y, 1)) && test_element(y, 2) == 0.25);
    weft_tensor_release(y);
    c = (quantile_case){ NANMEDIAN, 0, 0, true };
    op_results_everywhere(quantile_body, &c, args, 1, &y, 1, "nanmedian columns");
    test_assert_shape(y, WEFT_F64, 2, DIMS(1, 4), "nanmedian columns");
    const double cols[4] = { 0.875, 3, -2, 1.5 };
    for (int j = 0; j < 4; j++)
        cr_assert_eq(test_element(y, j), cols[j], "column %d", j);
    weft_tensor_release(y);
    weft_tensor_release(args[0]);
    /* Integers have no NaN: the plain forms' values and dtypes. */
    args[0] = test_tensor(WEFT_I32, 1, DIMS(4), (const double[]){ 1, 5, 2, 8 });
    weft_tensor_release(args[1]);
    args[1] = test_tensor(WEFT_F64, 0, NULL, (const double[]){ 0.4 });
    c = (quantile_case){ NANQUANTILE, WEFT_QUANTILE_LINEAR, 0, false };
    op_results_everywhere(quantile_body, &c, args, 2, &y, 1, "i32 nanquantile");
    test_assert_shape(y, WEFT_F64, 0, NULL, "i32 nanquantile");
    cr_assert_eq(test_element(y, 0), 2.6000000000000005);
    weft_tensor_release(y);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

/* Rows of unknown length and q of unknown length: the nan form's one trace
 * serves both sizes, values the plain form's on rows without NaN. */
Test(ops_numpy_quantile, nan_form_one_trace_for_every_size)
{
    const weft_spec sig[2] = { { WEFT_F64, 2, { -1, -1 } }, { WEFT_F64, 1, { -1 } } };
    quantile_case c = { NANQUANTILE, WEFT_QUANTILE_LINEAR, 1, false };
    weft_function *f = op_signature_function(rt, quantile_body, &c, sig, 2);
    for (int size = 0; size < 2; size++) {
        int rows = size ? 2 : 3, cols = size ? 4 : 5, nq = size ? 1 : 6;
        double m[15], line[5];
        for (int r = 0; r < rows; r++)
            for (int k = 0; k < cols; k++)
                m[r * cols + k] = a35[r * 5 + k];
        const double *qs = size ? (const double[]){ 0.7 } : q6;
        weft_tensor *ts[2] = { test_tensor(WEFT_F64, 2, DIMS(rows, cols), m),
                               test_tensor(WEFT_F64, 1, DIMS(nq), qs) }, *y = NULL;
        weft_arg args[2] = { weft_arg_tensor(ts[0]), weft_arg_tensor(ts[1]) };
        cr_assert_eq(weft_function_call(f, args, 2, &y, 1), 0, "%s", weft_errmsg());
        test_assert_shape(y, WEFT_F64, 2, DIMS(nq, rows), "traced");
        for (int k = 0; k < nq; k++)
            for (int r = 0; r < rows; r++) {
                int n = sorted_line(m, rows, cols, 1, r, line);
                cr_assert_eq(test_element(y, k * rows + r),
                             numpy_quantile(line, n, qs[k], WEFT_QUANTILE_LINEAR, false),
                             "size %d q %d row %d", size, k, r);
            }
        weft_tensor_release(y);
        weft_tensor_release(ts[0]);
        weft_tensor_release(ts[1]);
    }
    op_destroy_traced_once(&f);
}

static int grad_of(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const quantile_case *c = user;
    weft_value *q = weft_const_f64(cx, c->axis == 0 ? 0.25 : 0.3);
    switch (c->w) {
    case MEDIAN: outs[0] = weft_median(cx, a[0], c->axis, false); break;
    case NANMEDIAN: outs[0] = weft_nanmedian(cx, a[0], c->axis, false); break;
    case NANQUANTILE: outs[0] = weft_nanquantile(cx, a[0], q, c->axis, c->method, false); break;
    default: outs[0] = weft_quantile(cx, a[0], q, c->axis, c->method, false); break;
    }
    return weft_ctx_status(cx);
}

/* The gradient flows to the elements read: central differences agree
 * (distinct values, so a small move keeps the order). */
Test(ops_numpy_quantile, gradients)
{
    const double v[12] = { 0.3, -1.2, 2.5, 0.9, 1.7, -0.4, 3.1, 0.05, -2.2, 1.1, 0.6, 2.8 };
    const grad_arg x = { 2, { 3, 4 }, v };
    const quantile_case cases[5] = { { QUANTILE, WEFT_QUANTILE_LINEAR, 1, false },
                                     { QUANTILE, WEFT_QUANTILE_MIDPOINT, 0, false },
                                     { MEDIAN, 0, 1, false },
                                     { NANQUANTILE, WEFT_QUANTILE_LINEAR, 1, false },
                                     { NANMEDIAN, 0, 0, false } };
    static const char *const names[5] = { "linear", "midpoint", "median", "nanquantile",
                                          "nanmedian" };
    for (int k = 0; k < 5; k++) {
        grad_case c = { grad_of, &cases[k], 1, 1 };
        expect_gradients(&c, &x, names[k]);
    }
}

/* args: a [3, 5], q 0.5, an empty [0]. */
static int refused_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    switch (*(const int *)user) {
    case 0: outs[0] = weft_quantile(cx, weft_cast(cx, a[0], WEFT_BOOL), a[1], 0, 0, false); break;
    case 1: outs[0] = weft_quantile(cx, a[0], a[1], 2, 0, false); break;
    case 2: outs[0] = weft_quantile(cx, a[0], a[1], 0, (weft_quantile_method)13, false); break;
    case 3: outs[0] = weft_median(cx, a[2], 0, false); break;
    default:
        outs[0] = weft_percentile(cx, a[0], weft_cast(cx, a[1], WEFT_BOOL), 0, 0, false);
        break;
    }
    return weft_ctx_status(cx);
}

Test(ops_numpy_quantile, refusals)
{
    weft_tensor *args[3] = { test_tensor(WEFT_F64, 2, DIMS(3, 5), a35),
                             test_tensor(WEFT_F64, 0, NULL, (const double[]){ 0.5 }),
                             test_tensor(WEFT_F64, 1, DIMS(0), NULL) };
    const op_error_case cases[] = {
        { 0, WEFT_EDTYPE, "weft_quantile: a bool[3,5] is not a number" },
        { 1, WEFT_EINVAL, "weft_quantile: axis 2 is not in [-2, 2)" },
        { 2, WEFT_EINVAL, "weft_quantile: method 13 is not a weft_quantile_method" },
        { 3, WEFT_EINVAL, "weft_median: axis 0 of f64[0] is empty" },
        { 4, WEFT_EDTYPE, "weft_percentile: q bool[] is not a number" },
    };
    op_expect_errors(rt, refused_body, cases, 5, args, 3);
    /* A rank unknown while tracing needs the rank for an axis (eagerly it
     * is known). */
    quantile_case c = { MEDIAN, 0, 1, false };
    const weft_spec any = { WEFT_F64, WEFT_RANK_ANY, { 0 } };
    weft_function *f = op_signature_function(rt, quantile_body, &c, &any, 1);
    weft_arg arg = weft_arg_tensor(args[0]);
    weft_tensor *y = NULL;
    cr_assert_eq(weft_function_call(f, &arg, 1, &y, 1), WEFT_ESHAPE, "%s", weft_errmsg());
    cr_assert(strstr(weft_errmsg(), "weft_median: the rank of a is unknown while tracing"), "%s",
              weft_errmsg());
    weft_function_destroy(&f);
    for (int k = 0; k < 3; k++)
        weft_tensor_release(args[k]);
}
