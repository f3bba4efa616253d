/* tf.experimental.numpy's copysign (libm's, bit for bit), gcd, lcm,
 * heaviside, logspace, geomspace, vander, tri, take_along_axis, moveaxis
 * and swapaxes: against C written here in NumPy's (vander: TensorFlow's)
 * formulas, eagerly and traced on 1, 2 and 4 workers with the same bits;
 * signed zeros and NaN, dtypes, broadcasting, gradients against central
 * differences and by value where a difference cannot see them, and the
 * refusals. */
#include <math.h>
#include <string.h>

#include "grad_check.h"
#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_numpy_build, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

#define DIMS(...) ((const int64_t[]){ __VA_ARGS__ })

/* y is want, NaN for NaN, with the same sign bit. */
static void expect_same(double y, double want, const char *what, int i)
{
    cr_assert(signbit(y) == signbit(want) && ((isnan(y) && isnan(want)) || y == want),
              "%s element %d: %g, want %g", what, i, y, want);
}

/* ---- copysign ---------------------------------------------------------------- */

Test(ops_numpy_build, copysign_is_libms)
{
    const double a[] = { 3, -2, NAN, -NAN, INFINITY, 0, -0.0, 1e-310, 5, -7.5 };
    const double b[] = { -0.0, 0.0, -1, 2, -1, -5, 3, -1, -NAN, NAN };
    int64_t n = 10;
    for (int d = 0; d < 2; d++) {
        double x[10], z[10], y[10];
        for (int i = 0; i < 10; i++) {
            x[i] = d ? a[i] : (double)(float)a[i];
            z[i] = d ? b[i] : (double)(float)b[i];
        }
        op_binary_values(weft_copysign, d ? WEFT_F64 : WEFT_F32, x, n, z, n, y);
        for (int i = 0; i < 10; i++)
            expect_same(y[i], d ? copysign(x[i], z[i]) : (double)copysignf((float)x[i],
                                                                          (float)z[i]),
                        "copysign", i);
    }
}

/* d/dx1 is the product of the signs (-0.0 negative), d/dx2 is 0. */
Test(ops_numpy_build, copysign_gradients)
{
    const double a[6] = { 1.5, -2, 0.5, -0.25, 3, -1 };
    const double b[6] = { 2, 1, -3, -0.5, -0.0, 0.0 };
    int64_t n = 6;
    weft_tensor *args[2] = { test_tensor(WEFT_F64, 1, &n, a), test_tensor(WEFT_F64, 1, &n, b) };
    weft_tensor *outs[3];
    op_binary_fn f = weft_copysign;
    grad_case c = { op_binary_body, &f, 2, 2 };
    op_results_everywhere(grad_body, &c, args, 2, outs, 3, "copysign's gradient");
    for (int i = 0; i < 6; i++) {
        double want = (signbit(a[i]) == signbit(b[i])) ? 1 : -1;
        cr_assert_eq(test_element(outs[1], i), want, "d/dx1 at (%g, %g)", a[i], b[i]);
        cr_assert_eq(test_element(outs[2], i), 0.0, "d/dx2 at (%g, %g)", a[i], b[i]);
    }
    for (int k = 0; k < 3; k++)
        weft_tensor_release(outs[k]);
    for (int k = 0; k < 2; k++)
        weft_tensor_release(args[k]);
}

/* ---- gcd and lcm ----------------------------------------------------------------- */

/* NumPy's gcd and lcm of the magnitudes, in the unsigned type. */
static uint64_t euclid(uint64_t a, uint64_t b)
{
    return b ? euclid(b, a % b) : a;
}

Test(ops_numpy_build, gcd_and_lcm_are_numpys)
{
    const double a[] = { 12, -12, 0, 0, 7, -9, 1e6, 21, -2147483648.0, 6, 65536, -1 };
    const double b[] = { 18, 18, 0, -5, 13, -6, 2e6, 0, 0, -4, 65537, -2147483648.0 };
    int64_t n = 12;
    for (int d = 0; d < 2; d++) {
        weft_dtype dt = d ? WEFT_I64 : WEFT_I32;
        double g[12], l[12];
        op_binary_values(weft_gcd, dt, a, n, b, n, g);
        op_binary_values(weft_lcm, dt, a, n, b, n, l);
        for (int i = 0; i < 12; i++) {
            uint64_t mask = d ? UINT64_MAX : UINT32_MAX;
            uint64_t x = (uint64_t)(a[i] < 0 ? -a[i] : a[i]), y = (uint64_t)(b[i] < 0 ? -b[i]
                                                                                       : b[i]);
            uint64_t eg = euclid(x, y), el = eg ? (x / eg * y) & mask : 0;
            /* Back to the signed dtype, wrapping as NumPy's casts do. */
            double want_g = d ? (double)(int64_t)eg : (double)(int32_t)(uint32_t)eg;
            double want_l = d ? (double)(int64_t)el : (double)(int32_t)(uint32_t)el;
            cr_assert_eq(g[i], want_g, "%s gcd(%g, %g) = %g", d ? "i64" : "i32", a[i], b[i], g[i]);
            cr_assert_eq(l[i], want_l, "%s lcm(%g, %g) = %g", d ? "i64" : "i32", a[i], b[i], l[i]);
        }
    }
}

static int gcd_refused_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    outs[0] = *(const int *)user ? weft_lcm(cx, a[1], a[1]) : weft_gcd(cx, a[0], a[0]);
    return weft_ctx_status(cx);
}

Test(ops_numpy_build, gcd_and_lcm_refuse_floats_and_bool)
{
    weft_tensor *args[2] = { test_tensor(WEFT_F64, 1, DIMS(2), (const double[]){ 4, 6 }),
                             test_tensor(WEFT_BOOL, 1, DIMS(2), (const double[]){ 1, 0 }) };
    const op_error_case cases[] = {
        { 0, WEFT_EDTYPE, "weft_gcd: f64[2] and f64[2] are not integer tensors (i32 or i64)" },
        { 1, WEFT_EDTYPE, "weft_lcm: bool[2] and bool[2] are not integer tensors" },
    };
    op_expect_errors(rt, gcd_refused_body, cases, 2, args, 2);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

/* ---- heaviside ------------------------------------------------------------------ */

static double numpy_heaviside(double x1, double x2)
{
    return isnan(x1) ? x1 : x1 < 0 ? 0 : x1 > 0 ? 1 : x2;
}

Test(ops_numpy_build, heaviside_is_numpys)
{
    const double x1[] = { -2, -0.0, 0, 3, NAN, -INFINITY, INFINITY, 1e-300 };
    const double x2[] = { 0.5, 0.5, -4, 0.5, 0.5, 0.5, 0.5, 0.5 };
    int64_t n = 8;
    for (int d = 0; d < 2; d++) {
        double y[8];
        op_binary_values(weft_heaviside, d ? WEFT_F64 : WEFT_F32, x1, n, x2, n, y);
        for (int i = 0; i < 8; i++) {
            double a = d ? x1[i] : (double)(float)x1[i];   /* 1e-300 is 0 in f32 */
            expect_same(y[i], numpy_heaviside(a, x2[i]), "heaviside", i);
        }
    }
    /* A scalar x2 broadcasts; NaN at 0 gives NaN there only. */
    double y[3];
    op_binary_values(weft_heaviside, WEFT_F64, (const double[]){ NAN }, 1,
                     (const double[]){ -1, 0, 1 }, 3, y);
    cr_assert(isnan(y[0]) && isnan(y[1]) && isnan(y[2]), "NaN x1 is NaN");
    /* Integers compute in f64. */
    weft_tensor *args[2] = { test_tensor(WEFT_I32, 1, DIMS(3), (const double[]){ -1, 0, 2 }),
                             test_tensor(WEFT_I32, 0, NULL, (const double[]){ 5 }) }, *out;
    op_results_everywhere(op_binary_body, &(op_binary_fn){ weft_heaviside }, args, 2, &out, 1,
                          "heaviside of integers");
    test_assert_shape(out, WEFT_F64, 1, DIMS(3), "heaviside of integers");
    const double want[3] = { 0, 5, 1 };
    for (int i = 0; i < 3; i++)
        cr_assert_eq(test_element(out, i), want[i]);
    weft_tensor_release(out);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

/* x2's gradient is g where x1 is 0 (either zero), x1's is 0. */
Test(ops_numpy_build, heaviside_gradients)
{
    const double a[5] = { -1, 0, -0.0, 2, 0 }, b[5] = { 0.3, 0.4, 0.5, 0.6, 0.7 };
    int64_t n = 5;
    weft_tensor *args[2] = { test_tensor(WEFT_F64, 1, &n, a), test_tensor(WEFT_F64, 1, &n, b) };
    weft_tensor *outs[3];
    op_binary_fn f = weft_heaviside;
    grad_case c = { op_binary_body, &f, 2, 2 };
    op_results_everywhere(grad_body, &c, args, 2, outs, 3, "heaviside's gradient");
    for (int i = 0; i < 5; i++) {
        cr_assert_eq(test_element(outs[1], i), 0.0, "d/dx1 at %g", a[i]);
        cr_assert_eq(test_element(outs[2], i), a[i] == 0 ? 1.0 : 0.0, "d/dx2 at %g", a[i]);
    }
    for (int k = 0; k < 3; k++)
        weft_tensor_release(outs[k]);
    for (int k = 0; k < 2; k++)
        weft_tensor_release(args[k]);
}

/* ---- logspace and geomspace --------------------------------------------------- */

typedef struct space_case {
    bool geom;
    double start, stop, base;
    int64_t num;
    weft_dtype dtype;
} space_case;

static int space_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)a;
    const space_case *c = user;
    outs[0] = c->geom ? weft_geomspace(cx, c->start, c->stop, c->num, c->dtype)
                      : weft_logspace(cx, c->start, c->stop, c->num, c->base, c->dtype);
    return weft_ctx_status(cx);
}

/* NumPy's linspace element i: i * step + start, the last exactly stop. */
static double numpy_linspace(double start, double stop, int64_t num, int64_t i)
{
    if (num > 1 && i == num - 1)
        return stop;
    double step = num > 1 ? (stop - start) / (double)(num - 1) : 0;
    return (double)i * step + start;
}

/* NumPy's logspace and geomspace element i, in f64. */
static double numpy_space(const space_case *c, int64_t i)
{
    if (!c->geom)
        return pow(c->base, numpy_linspace(c->start, c->stop, c->num, i));
    double a = fabs(c->start), b = fabs(c->stop), sign = c->start < 0 ? -1 : 1;
    double v = pow(10.0, numpy_linspace(log10(a), log10(b), c->num, i));
    if (i == 0)
        v = a;
    else if (c->num > 1 && i == c->num - 1)
        v = b;
    return sign * v;
}

Test(ops_numpy_build, logspace_and_geomspace_are_numpys)
{
    const space_case cases[] = {
        { false, 0, 3, 10, 7, WEFT_F64 },     { false, -2, 2, 2, 9, WEFT_F32 },
        { false, 1, -1, 0.5, 5, WEFT_F64 },   { false, 2, 2, 10, 4, WEFT_F64 },
        { false, 0, 1, 10, 1, WEFT_F64 },     { false, 0, 1, 10, 0, WEFT_F32 },
        { true, 1, 1000, 0, 4, WEFT_F64 },    { true, 3, 7.5, 0, 11, WEFT_F64 },
        { true, -1e-3, -50, 0, 6, WEFT_F32 }, { true, 2, 2, 0, 3, WEFT_F64 },
        { true, 0.1, 9, 0, 1, WEFT_F64 },     { true, 5, 7, 0, 2, WEFT_F32 },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const space_case *c = &cases[k];
        weft_tensor *y;
        op_results_everywhere(space_body, (void *)c, NULL, 0, &y, 1, "space");
        test_assert_shape(y, c->dtype, 1, &c->num, "space");
        for (int64_t i = 0; i < c->num; i++) {
            double want = numpy_space(c, i);
            if (c->dtype == WEFT_F32)
                want = (double)(float)want;
            cr_assert_eq(test_element(y, i), want, "case %zu element %lld: %.17g, want %.17g", k,
                         (long long)i, test_element(y, i), want);
        }
        weft_tensor_release(y);
    }
}

static int space_refused_body(weft_ctx *cx, weft_value *const *a, weft_value **outs,
                              void *user)
{
    (void)a;
    switch (*(const int *)user) {
    case 0: outs[0] = weft_logspace(cx, 0, 1, -1, 10, WEFT_F64); break;
    case 1: outs[0] = weft_logspace(cx, 0, INFINITY, 3, 10, WEFT_F64); break;
    case 2: outs[0] = weft_logspace(cx, 0, 1, 3, NAN, WEFT_F64); break;
    case 3: outs[0] = weft_logspace(cx, 0, 1, 3, 10, WEFT_I32); break;
    case 4: outs[0] = weft_geomspace(cx, 0, 1, 3, WEFT_F64); break;
    case 5: outs[0] = weft_geomspace(cx, -1, 1, 3, WEFT_F64); break;
    default: outs[0] = weft_geomspace(cx, 1, 2, -3, WEFT_F64); break;
    }
    return weft_ctx_status(cx);
}

Test(ops_numpy_build, space_refusals)
{
    const op_error_case cases[] = {
        { 0, WEFT_EINVAL, "weft_logspace: num -1 is negative" },
        { 1, WEFT_EINVAL, "weft_logspace: start 0 and stop inf are not finite" },
        { 2, WEFT_EINVAL, "weft_logspace: base nan is not finite" },
        { 3, WEFT_EINVAL, "weft_logspace: dtype i32" },
        { 4, WEFT_EINVAL, "weft_geomspace: start 0 and stop 1 are not nonzero and of one sign" },
        { 5, WEFT_EINVAL, "weft_geomspace: start -1 and stop 1 are not nonzero" },
        { 6, WEFT_EINVAL, "weft_geomspace: num -3 is negative" },
    };
    op_expect_errors(rt, space_refused_body, cases, 7, NULL, 0);
}

/* ---- vander ------------------------------------------------------------------------ */

typedef struct vander_case {
    int64_t n;
    bool increasing;
} vander_case;

static int vander_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const vander_case *c = user;
    outs[0] = weft_vander(cx, a[0], c->n, c->increasing);
    return weft_ctx_status(cx);
}

Test(ops_numpy_build, vander_is_tensorflows)
{
    const double x[5] = { 1.5, -2, 0, 3, -0.75 };
    const vander_case cases[] = { { -1, false }, { -1, true }, { 3, false }, { 7, true },
                                  { 0, false } };
    const weft_dtype dts[3] = { WEFT_F64, WEFT_F32, WEFT_I64 };
    for (int d = 0; d < 3; d++) {
        double v[5];
        for (int i = 0; i < 5; i++)
            v[i] = dts[d] == WEFT_I64 ? round(x[i] * 2) : x[i];
        weft_tensor *t = test_tensor(dts[d], 1, DIMS(5), v);
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
            const vander_case *c = &cases[k];
            int64_t cols = c->n < 0 ? 5 : c->n;
            weft_tensor *y;
            op_results_everywhere(vander_body, (void *)c, &t, 1, &y, 1, "vander");
            test_assert_shape(y, dts[d], 2, DIMS(5, cols), "vander");
            for (int i = 0; i < 5; i++)
                for (int64_t j = 0; j < cols; j++) {
                    double e = (double)(c->increasing ? j : cols - 1 - j);
                    double want = dts[d] == WEFT_F32 ? (double)powf((float)v[i], (float)e)
                                                     : pow(v[i], e);
                    cr_assert_eq(test_element(y, i * cols + j), want,
                                 "dtype %d case %zu [%d, %lld]", d, k, i, (long long)j);
                }
            weft_tensor_release(y);
        }
        weft_tensor_release(t);
    }
}

static int vander_refused_body(weft_ctx *cx, weft_value *const *a, weft_value **outs,
                               void *user)
{
    switch (*(const int *)user) {
    case 0: outs[0] = weft_vander(cx, a[0], 2, false); break;
    case 1: outs[0] = weft_vander(cx, a[1], 2, false); break;
    default: {
        weft_value *m = weft_boolean_mask(cx, a[2], weft_gt(cx, a[2], weft_const_f64(cx, 0)), 0);
        outs[0] = weft_vander(cx, m, -1, false);
        break;
    }
    }
    return weft_ctx_status(cx);
}

Test(ops_numpy_build, vander_refusals)
{
    weft_tensor *args[3] = { test_tensor(WEFT_F64, 2, DIMS(1, 2), (const double[]){ 1, 2 }),
                             test_tensor(WEFT_BOOL, 1, DIMS(2), (const double[]){ 1, 0 }),
                             test_tensor(WEFT_F64, 1, DIMS(2), (const double[]){ 1, -2 }) };
    const op_error_case cases[] = {
        { 0, WEFT_ESHAPE, "weft_vander: x f64[1,2] is not a vector" },
        { 1, WEFT_EDTYPE, "weft_vander: x bool[2] is not a number" },
    };
    op_expect_errors(rt, vander_refused_body, cases, 2, args, 3);
    const op_error_case unknown = { 2, WEFT_ESHAPE, "so N is needed" };
    op_expect_traced_error(rt, vander_refused_body, &unknown, args, 3);
    for (int k = 0; k < 3; k++)
        weft_tensor_release(args[k]);
}

/* ---- take_along_axis ---------------------------------------------------------------- */

static int take_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    outs[0] = weft_take_along_axis(cx, a[0], a[1], *(const int *)user);
    return weft_ctx_status(cx);
}

/* NumPy's loop: out[i, j, k] = arr[i', j', k'] with the axis' coordinate
 * indices[i, j, k] (negative from the end) and the others broadcast. */
static double numpy_take(const double *arr, const int64_t *ad, const double *idx,
                         const int64_t *id, int axis, const int64_t *at)
{
    int64_t src[3];
    for (int d = 0; d < 3; d++)
        src[d] = ad[d] == 1 ? 0 : at[d];
    int64_t ix[3];
    for (int d = 0; d < 3; d++)
        ix[d] = id[d] == 1 ? 0 : at[d];
    int64_t j = (int64_t)idx[(ix[0] * id[1] + ix[1]) * id[2] + ix[2]];
    src[axis] = j < 0 ? j + ad[axis] : j;
    return arr[(src[0] * ad[1] + src[1]) * ad[2] + src[2]];
}

Test(ops_numpy_build, take_along_axis_is_numpys)
{
    double arr[24], idx[64];   /* indices of up to [3, 5, 4] */
    for (int i = 0; i < 24; i++)
        arr[i] = i * 1.5 - 7;
    const struct {
        int64_t ad[3], id[3];
        int axis;
    } cases[] = {
        { { 2, 3, 4 }, { 2, 3, 4 }, 2 },  { { 2, 3, 4 }, { 2, 5, 4 }, 1 },
        { { 2, 3, 4 }, { 1, 3, 2 }, -1 }, { { 1, 3, 4 }, { 2, 3, 3 }, 2 },
        { { 2, 3, 4 }, { 3, 1, 4 }, 0 },  { { 2, 3, 1 }, { 2, 3, 2 }, -2 },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const int64_t *ad = cases[k].ad, *id = cases[k].id;
        int axis = cases[k].axis < 0 ? cases[k].axis + 3 : cases[k].axis;
        int64_t ni = test_numel(3, id), out_dims[3];
        for (int i = 0; i < ni; i++)   /* every place along the axis, some negative */
            idx[i] = (double)((i * 7 + (int)k) % (2 * ad[axis]) - ad[axis]);
        for (int d = 0; d < 3; d++)
            out_dims[d] = d == axis ? id[d] : (ad[d] == 1 ? id[d] : ad[d]);
        weft_tensor *args[2] = { test_tensor(WEFT_F64, 3, ad, arr),
                                 test_tensor(k % 2 ? WEFT_I32 : WEFT_I64, 3, id, idx) }, *y;
        op_results_everywhere(take_body, (void *)&cases[k].axis, args, 2, &y, 1, "take");
        test_assert_shape(y, WEFT_F64, 3, out_dims, "take_along_axis");
        int64_t at[3], e = 0;
        for (at[0] = 0; at[0] < out_dims[0]; at[0]++)
            for (at[1] = 0; at[1] < out_dims[1]; at[1]++)
                for (at[2] = 0; at[2] < out_dims[2]; at[2]++, e++)
                    cr_assert_eq(test_element(y, e), numpy_take(arr, ad, idx, id, axis, at),
                                 "case %zu element %lld", k, (long long)e);
        weft_tensor_release(y);
        weft_tensor_release(args[0]);
        weft_tensor_release(args[1]);
    }
}

/* axis None: np.take_along_axis(np.arange(6).reshape(2, 3) * 1.5,
 * [5, -1, 0, 2], None) is [7.5, 7.5, 0, 3]; a scalar arr is one element. */
Test(ops_numpy_build, take_along_axis_flattened)
{
    static const int all = WEFT_ALL_AXES;
    weft_tensor *args[2] = { test_tensor(WEFT_F64, 2, DIMS(2, 3),
                                         (const double[]){ 0, 1.5, 3, 4.5, 6, 7.5 }),
                             test_tensor(WEFT_I32, 1, DIMS(4), (const double[]){ 5, -1, 0, 2 }) };
    weft_tensor *y;
    op_results_everywhere(take_body, (void *)&all, args, 2, &y, 1, "flattened");
    test_assert_shape(y, WEFT_F64, 1, DIMS(4), "flattened");
    static const double want[4] = { 7.5, 7.5, 0, 3 };
    for (int i = 0; i < 4; i++)
        cr_assert_eq(test_element(y, i), want[i], "element %d", i);
    weft_tensor_release(y);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
    args[0] = test_tensor(WEFT_I64, 0, NULL, (const double[]){ 9 });
    args[1] = test_tensor(WEFT_I64, 1, DIMS(2), (const double[]){ 0, -1 });
    op_results_everywhere(take_body, (void *)&all, args, 2, &y, 1, "scalar arr");
    test_assert_shape(y, WEFT_I64, 1, DIMS(2), "scalar arr");
    cr_assert(test_element(y, 0) == 9 && test_element(y, 1) == 9);
    weft_tensor_release(y);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

/* The argsort of each row taken along the axis sorts it, NumPy's own
 * example; the gradient reaches the places taken. */
static int sort_by_argsort_body(weft_ctx *cx, weft_value *const *a, weft_value **outs,
                                void *user)
{
    (void)user;
    weft_value *order = weft_argsort(cx, a[0], 1, false);
    outs[0] = weft_take_along_axis(cx, a[0], order, 1);
    return weft_ctx_status(cx);
}

Test(ops_numpy_build, take_along_axis_of_argsort_sorts)
{
    const double v[12] = { 0.3, -0.7, 1.2, 0.05, -1.4, 0.9, 0.6, -0.2, 1.7, -0.55, 1.1, 0.8 };
    weft_tensor *x = test_tensor(WEFT_F64, 2, DIMS(3, 4), v), *y;
    op_results_everywhere(sort_by_argsort_body, NULL, &x, 1, &y, 1, "sorted");
    for (int r = 0; r < 3; r++)
        for (int j = 1; j < 4; j++)
            cr_assert_leq(test_element(y, r * 4 + j - 1), test_element(y, r * 4 + j), "row %d", r);
    weft_tensor_release(y);
    weft_tensor_release(x);
    const grad_arg g = { 2, { 3, 4 }, v };
    grad_case c = { sort_by_argsort_body, NULL, 1, 1 };
    expect_gradients(&c, &g, "take_along_axis");
}

static int take_refused_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    switch (*(const int *)user) {
    case 0: outs[0] = weft_take_along_axis(cx, a[0], a[2], 0); break;
    case 1: outs[0] = weft_take_along_axis(cx, a[0], a[1], 2); break;
    case 2: outs[0] = weft_take_along_axis(cx, a[0], a[3], 1); break;
    case 3: outs[0] = weft_take_along_axis(cx, a[0], a[4], 1); break;
    case 5: outs[0] = weft_take_along_axis(cx, a[0], a[1], WEFT_ALL_AXES); break;
    default: outs[0] = weft_take_along_axis(cx, a[0], weft_add(cx, a[1], a[1]), 0); break;
    }
    return weft_ctx_status(cx);
}

Test(ops_numpy_build, take_along_axis_refusals)
{
    weft_tensor *args[5] = {
        test_tensor(WEFT_F64, 2, DIMS(2, 3), (const double[]){ 1, 2, 3, 4, 5, 6 }),
        test_tensor(WEFT_I64, 2, DIMS(1, 3), (const double[]){ 0, 1, 1 }),
        test_tensor(WEFT_I64, 1, DIMS(2), (const double[]){ 0, 1 }),
        test_tensor(WEFT_I64, 2, DIMS(3, 2), (const double[]){ 0, 1, 2, 0, 1, 2 }),
        test_tensor(WEFT_F64, 2, DIMS(2, 2), (const double[]){ 0, 1, 0, 1 }),
    };
    const op_error_case cases[] = {
        { 0, WEFT_ESHAPE, "weft_take_along_axis: arr f64[2,3] and indices i64[2] have not one "
                          "rank" },
        { 1, WEFT_EINVAL, "weft_take_along_axis: axis 2 is not in [-2, 2)" },
        { 2, WEFT_ESHAPE, "weft_take_along_axis: arr f64[2,3] and indices i64[3,2] do not "
                          "broadcast but along axis 1" },
        { 3, WEFT_EDTYPE, "weft_take_along_axis: indices f64[2,2] are not i32 or i64" },
        { 4, WEFT_EINVAL, "index 2 (at 1) is out of range" },
        { 5, WEFT_ESHAPE, "weft_take_along_axis: indices i64[1,3] are not a vector (axis "
                          "WEFT_ALL_AXES takes from arr flattened)" },
    };
    op_expect_errors(rt, take_refused_body, cases, 6, args, 5);
    for (int k = 0; k < 5; k++)
        weft_tensor_release(args[k]);
}

/* ---- moveaxis, swapaxes and tri ---------------------------------------------------- */

typedef struct move_case {
    int n;
    int source[3], destination[3];
    int64_t dims[4];   /* the result's */
    int perm[4];       /* result axis d is a's axis perm[d] */
} move_case;

static int move_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const move_case *c = user;
    outs[0] = c->n < 0 ? weft_swapaxes(cx, a[0], c->source[0], c->destination[0])
                       : weft_moveaxis(cx, a[0], c->source, c->destination, (size_t)c->n);
    return weft_ctx_status(cx);
}

/* NumPy's examples on a [2, 3, 4, 5] array, and swapaxes (n -1). */
Test(ops_numpy_build, moveaxis_and_swapaxes_are_numpys)
{
    const move_case cases[] = {
        { 1, { 0 }, { -1 }, { 3, 4, 5, 2 }, { 1, 2, 3, 0 } },
        { 1, { -1 }, { 0 }, { 5, 2, 3, 4 }, { 3, 0, 1, 2 } },
        { 2, { 0, 1 }, { -1, -2 }, { 4, 5, 3, 2 }, { 2, 3, 1, 0 } },
        { 3, { 0, 1, 2 }, { -1, -2, -3 }, { 5, 4, 3, 2 }, { 3, 2, 1, 0 } },
        { 2, { 3, 0 }, { 1, 2 }, { 3, 5, 2, 4 }, { 1, 3, 0, 2 } },
        { 0, { 0 }, { 0 }, { 2, 3, 4, 5 }, { 0, 1, 2, 3 } },
        { -1, { 0 }, { 2 }, { 4, 3, 2, 5 }, { 2, 1, 0, 3 } },
        { -1, { -1 }, { 1 }, { 2, 5, 4, 3 }, { 0, 3, 2, 1 } },
    };
    const int64_t ad[4] = { 2, 3, 4, 5 };
    double v[120];
    for (int i = 0; i < 120; i++)
        v[i] = i;
    weft_tensor *x = test_tensor(WEFT_F64, 4, ad, v);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const move_case *c = &cases[k];
        weft_tensor *y;
        op_results_everywhere(move_body, (void *)c, &x, 1, &y, 1, "moveaxis");
        test_assert_shape(y, WEFT_F64, 4, c->dims, "moveaxis");
        int64_t at[4], e = 0;
        for (at[0] = 0; at[0] < c->dims[0]; at[0]++)
            for (at[1] = 0; at[1] < c->dims[1]; at[1]++)
                for (at[2] = 0; at[2] < c->dims[2]; at[2]++)
                    for (at[3] = 0; at[3] < c->dims[3]; at[3]++, e++) {
                        int64_t src[4];
                        for (int d = 0; d < 4; d++)
                            src[c->perm[d]] = at[d];
                        double want = (double)(((src[0] * 3 + src[1]) * 4 + src[2]) * 5 + src[3]);
                        cr_assert_eq(test_element(y, e), want, "case %zu element %lld", k,
                                     (long long)e);
                    }
        weft_tensor_release(y);
    }
    weft_tensor_release(x);
}

static int move_refused_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    switch (*(const int *)user) {
    case 0: outs[0] = weft_moveaxis(cx, a[0], (const int[]){ 0, 0 }, (const int[]){ 1, 2 }, 2);
        break;
    case 1: outs[0] = weft_moveaxis(cx, a[0], (const int[]){ 3 }, (const int[]){ 0 }, 1); break;
    case 2: outs[0] = weft_swapaxes(cx, a[0], 0, -4); break;
    default: outs[0] = weft_tri(cx, -1, 2, 0, WEFT_F32); break;
    }
    return weft_ctx_status(cx);
}

Test(ops_numpy_build, moveaxis_refusals)
{
    weft_tensor *x = test_tensor(WEFT_F64, 3, DIMS(1, 2, 1), (const double[]){ 1, 2 });
    const op_error_case cases[] = {
        { 0, WEFT_EINVAL, "weft_moveaxis: an axis named twice in source or destination" },
        { 1, WEFT_EINVAL, "weft_moveaxis: axis 3 is not in [-3, 3)" },
        { 2, WEFT_EINVAL, "weft_swapaxes: axis -4 is not in [-3, 3)" },
        { 3, WEFT_EINVAL, "weft_tri: n -1 is negative" },
    };
    op_expect_errors(rt, move_refused_body, cases, 4, &x, 1);
    weft_tensor_release(x);
}

typedef struct tri_of {
    int64_t n, m, k;
    weft_dtype dtype;
} tri_of;

static int tri_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)a;
    const tri_of *c = user;
    outs[0] = weft_tri(cx, c->n, c->m, c->k, c->dtype);
    return weft_ctx_status(cx);
}

Test(ops_numpy_build, tri_is_numpys)
{
    const tri_of cases[] = { { 3, -1, 0, WEFT_F64 }, { 3, 5, 2, WEFT_I32 }, { 4, 2, -1, WEFT_BOOL },
                             { 0, 3, 0, WEFT_F32 },  { 2, 0, 5, WEFT_I64 } };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const tri_of *c = &cases[k];
        int64_t m = c->m < 0 ? c->n : c->m;
        weft_tensor *y;
        op_results_everywhere(tri_body, (void *)c, NULL, 0, &y, 1, "tri");
        test_assert_shape(y, c->dtype, 2, DIMS(c->n, m), "tri");
        for (int64_t i = 0; i < c->n; i++)
            for (int64_t j = 0; j < m; j++)
                cr_assert_eq(test_element(y, i * m + j), j <= i + c->k ? 1.0 : 0.0,
                             "case %zu [%lld, %lld]", k, (long long)i, (long long)j);
        weft_tensor_release(y);
    }
}
