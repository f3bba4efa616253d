/* tf.experimental.numpy's nansum, nanprod, nanmean, ptp, average, inner
 * and vdot: against loops written here, eagerly and traced on 1, 2 and 4
 * workers with the same bits; NaN, all-NaN rows, axes and keepdims,
 * weights of a's shape and along an axis, integer dtypes, gradients
 * against central differences, and the refusals; tf.math.
 * reduce_euclidean_norm against TensorFlow's documented values. */
#include <math.h>
#include <string.h>

#include "grad_check.h"
#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_numpy_reduce, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

#define DIMS(...) ((const int64_t[]){ __VA_ARGS__ })

/* [3, 4] with NaNs: row 1 is all NaN. */
static const double m34[12] = { 1.5, NAN, -2, 4, NAN, NAN, NAN, NAN, 0.25, 3, NAN, -1 };

typedef enum which { NANSUM, NANPROD, NANMEAN, PTP } which;

typedef struct reduce_case {
    which w;
    int axis;   /* WEFT_ALL_AXES: every axis */
    bool keepdims;
} reduce_case;

static int reduce_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const reduce_case *c = user;
    const int *axes = c->axis == WEFT_ALL_AXES ? NULL : &c->axis;
    size_t n = c->axis == WEFT_ALL_AXES ? 0 : 1;
    switch (c->w) {
    case NANSUM: outs[0] = weft_nansum(cx, a[0], axes, n, c->keepdims); break;
    case NANPROD: outs[0] = weft_nanprod(cx, a[0], axes, n, c->keepdims); break;
    case NANMEAN: outs[0] = weft_nanmean(cx, a[0], axes, n, c->keepdims); break;
    default: outs[0] = weft_ptp(cx, a[0], axes, n, c->keepdims); break;
    }
    return weft_ctx_status(cx);
}

/* NumPy's answer over the elements x[at(k)], k < n. */
static double numpy_reduce(which w, const double *x, const int *at, int n)
{
    double sum = 0, prod = 1, hi = -INFINITY, lo = INFINITY;
    int count = 0;
    bool nan = false;
    for (int k = 0; k < n; k++) {
        double v = x[at[k]];
        nan = nan || isnan(v);
        if (!isnan(v)) {
            sum += v;
            prod *= v;
            count++;
            hi = fmax(hi, v);
            lo = fmin(lo, v);
        }
    }
    switch (w) {
    case NANSUM: return sum;
    case NANPROD: return prod;
    case NANMEAN: return sum / count;
    default: return nan ? NAN : hi - lo;
    }
}

Test(ops_numpy_reduce, nan_reductions_are_numpys)
{
    weft_tensor *t = test_tensor(WEFT_F64, 2, DIMS(3, 4), m34);
    for (int w = NANSUM; w <= PTP; w++) {
        const int axes[3] = { 0, 1, WEFT_ALL_AXES };
        for (int k = 0; k < 3; k++) {
            reduce_case c = { (which)w, axes[k], k == 1 };
            weft_tensor *y;
            op_results_everywhere(reduce_body, &c, &t, 1, &y, 1, "nan reduction");
            int outer = k == 0 ? 4 : k == 1 ? 3 : 1, inner = k == 0 ? 3 : k == 1 ? 4 : 12;
            cr_assert_eq(weft_tensor_numel(y), outer);
            if (k == 1)
                test_assert_shape(y, WEFT_F64, 2, DIMS(3, 1), "keepdims");
            for (int o = 0; o < outer; o++) {
                int at[12];
                for (int i = 0; i < inner; i++)
                    at[i] = k == 0 ? i * 4 + o : k == 1 ? o * 4 + i : i;
                double want = numpy_reduce((which)w, m34, at, inner);
                double got = test_element(y, o);
                cr_assert((isnan(want) && isnan(got)) || fabs(got - want) <= 1e-15 * fabs(want),
                          "op %d axis %d output %d: %g, want %g", w, axes[k], o, got, want);
            }
            weft_tensor_release(y);
        }
    }
    weft_tensor_release(t);
}

/* On integers the nan forms are the plain reductions; ptp subtracts. */
Test(ops_numpy_reduce, integers)
{
    weft_tensor *t = test_tensor(WEFT_I32, 2, DIMS(2, 3), (const double[]){ 1, -4, 2, 7, 0, 3 });
    const double want[4][2] = { { -1, 10 }, { -8, 0 }, { -1.0 / 3, 10.0 / 3 }, { 6, 7 } };
    for (int w = NANSUM; w <= PTP; w++) {
        reduce_case c = { (which)w, 1, false };
        weft_tensor *y;
        op_results_everywhere(reduce_body, &c, &t, 1, &y, 1, "integers");
        test_assert_shape(y, w == NANMEAN ? WEFT_F64 : WEFT_I32, 1, DIMS(2), "integers");
        for (int o = 0; o < 2; o++)
            cr_assert_eq(test_element(y, o), want[w][o], "op %d row %d", w, o);
        weft_tensor_release(y);
    }
    weft_tensor_release(t);
}

static int average_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const int *axis = user;
    outs[0] = weft_average(cx, a[0], *axis, a[1]);
    outs[1] = weft_average(cx, a[0], *axis, NULL);
    return weft_ctx_status(cx);
}

Test(ops_numpy_reduce, average_is_numpys)
{
    const double a[6] = { 1, 2, 3, 4, 5, 6 }, w6[6] = { 3, 1, 0, 2, 2, 1 }, w3[3] = { 1, 2, 5 };
    weft_tensor *x = test_tensor(WEFT_F64, 2, DIMS(2, 3), a);
    /* Weights of a's shape, over every axis and over axis 0. */
    weft_tensor *args[2] = { x, test_tensor(WEFT_F64, 2, DIMS(2, 3), w6) }, *y[2];
    const int all = WEFT_ALL_AXES, zero = 0, last = -1;
    op_results_everywhere(average_body, (void *)&all, args, 2, y, 2, "average");
    cr_assert_eq(test_element(y[0], 0), (3 + 2 + 0 + 8 + 10 + 6) / 9.0);
    cr_assert_eq(test_element(y[1], 0), 3.5);
    weft_tensor_release(y[0]);
    weft_tensor_release(y[1]);
    op_results_everywhere(average_body, (void *)&zero, args, 2, y, 2, "average over 0");
    const double col[3] = { (3 + 8) / 5.0, (2 + 10) / 3.0, (0 + 6) / 1.0 };
    for (int j = 0; j < 3; j++) {
        cr_assert_eq(test_element(y[0], j), col[j], "column %d", j);
        cr_assert_eq(test_element(y[1], j), (a[j] + a[3 + j]) / 2, "column %d", j);
    }
    weft_tensor_release(y[0]);
    weft_tensor_release(y[1]);
    weft_tensor_release(args[1]);
    /* A vector of weights along the last axis; integer a and f32 weights
     * promote to f32, as weft_atan2's operands. */
    weft_tensor *xi = test_tensor(WEFT_I64, 2, DIMS(2, 3), a);
    weft_tensor *vargs[2] = { xi, test_tensor(WEFT_F32, 1, DIMS(3), w3) };
    op_results_everywhere(average_body, (void *)&last, vargs, 2, y, 2, "weights along -1");
    test_assert_shape(y[0], WEFT_F32, 1, DIMS(2), "weights along -1");
    for (int r = 0; r < 2; r++)
        cr_assert_eq(test_element(y[0], r),
                     (a[3 * r] * 1 + a[3 * r + 1] * 2 + a[3 * r + 2] * 5) / 8.0, "row %d", r);
    weft_tensor_release(y[0]);
    weft_tensor_release(y[1]);
    weft_tensor_release(vargs[1]);
    weft_tensor_release(xi);
    weft_tensor_release(x);
}

static int returned_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const int *axis = user;
    if (weft_average_returned(cx, a[0], axis[0], axis[1] ? a[1] : NULL, outs) < 0)
        return weft_ctx_status(cx);
    return weft_average_returned(cx, a[0], axis[0], NULL, &outs[2]);
}

/* np.average(..., returned=True): the weights' sum per row (a vector of
 * weights, weights of a's shape), the count without weights, in the
 * average's dtype and shape (an integer a averages in f64). */
Test(ops_numpy_reduce, average_returned_is_numpys)
{
    weft_tensor *args[2] = {
        test_tensor(WEFT_F64, 2, DIMS(2, 3), (const double[]){ 1, 2, 3, 4, 5, 7 }),
        test_tensor(WEFT_F64, 1, DIMS(3), (const double[]){ 0.5, 1, 2 }) }, *y[4];
    const int rows[2] = { 1, 1 };
    op_results_everywhere(returned_body, (void *)rows, args, 2, y, 4, "returned by rows");
    op_expect_values(y[0], WEFT_F64, (const double[]){ 2.4285714285714284, 6 }, 2, "average");
    op_expect_values(y[1], WEFT_F64, (const double[]){ 3.5, 3.5 }, 2, "weights' sums");
    op_expect_values(y[2], WEFT_F64, (const double[]){ 2, 16.0 / 3 }, 2, "mean");
    op_expect_values(y[3], WEFT_F64, (const double[]){ 3, 3 }, 2, "count");
    for (int k = 0; k < 4; k++)
        weft_tensor_release(y[k]);
    weft_tensor_release(args[1]);
    args[1] = test_tensor(WEFT_F64, 2, DIMS(2, 3), (const double[]){ 1, 2, 3, 4, 5, 6 });
    const int all[2] = { WEFT_ALL_AXES, 1 };
    op_results_everywhere(returned_body, (void *)all, args, 2, y, 4, "returned of all");
    test_assert_shape(y[1], WEFT_F64, 0, NULL, "returned of all");
    op_expect_values(y[0], WEFT_F64, (const double[]){ 4.619047619047619 }, 1, "average");
    op_expect_values(y[1], WEFT_F64, (const double[]){ 21 }, 1, "weights' sum");
    op_expect_values(y[3], WEFT_F64, (const double[]){ 6 }, 1, "count");
    for (int k = 0; k < 4; k++)
        weft_tensor_release(y[k]);
    weft_tensor_release(args[1]);
    weft_tensor_release(args[0]);
    args[0] = test_tensor(WEFT_I32, 2, DIMS(2, 2), (const double[]){ 1, 2, 3, 5 });
    const int no_weights[2] = { 1, 0 };
    op_results_everywhere(returned_body, (void *)no_weights, args, 1, y, 4, "i32");
    op_expect_values(y[0], WEFT_F64, (const double[]){ 1.5, 4 }, 2, "i32 mean");
    op_expect_values(y[1], WEFT_F64, (const double[]){ 2, 2 }, 2, "i32 count");
    for (int k = 0; k < 4; k++)
        weft_tensor_release(y[k]);
    weft_tensor_release(args[0]);
}

static int products_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_inner(cx, a[0], a[1]);
    outs[1] = weft_vdot(cx, a[0], a[2]);
    return weft_ctx_status(cx);
}

Test(ops_numpy_reduce, inner_and_vdot_are_numpys)
{
    const double a[6] = { 1, -2, 3, 0.5, 4, -1 }, b[12] = { 2, 0, 1, -1, 3, 5,
                                                            1, 1, -2, 0.25, 6, 2 };
    weft_tensor *args[3] = { test_tensor(WEFT_F64, 2, DIMS(2, 3), a),
                             test_tensor(WEFT_F64, 2, DIMS(4, 3), b),
                             test_tensor(WEFT_F64, 1, DIMS(6), b + 6) }, *y[2];
    op_results_everywhere(products_body, NULL, args, 3, y, 2, "inner and vdot");
    test_assert_shape(y[0], WEFT_F64, 2, DIMS(2, 4), "inner");
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 4; j++) {
            double want = 0;
            for (int k = 0; k < 3; k++)
                want += a[i * 3 + k] * b[j * 3 + k];
            cr_assert_eq(test_element(y[0], i * 4 + j), want, "inner [%d, %d]", i, j);
        }
    test_assert_shape(y[1], WEFT_F64, 0, NULL, "vdot");
    double dot = 0;
    for (int k = 0; k < 6; k++)
        dot += a[k] * b[6 + k];
    cr_assert_eq(test_element(y[1], 0), dot);
    for (int k = 0; k < 2; k++)
        weft_tensor_release(y[k]);
    for (int k = 0; k < 3; k++)
        weft_tensor_release(args[k]);
}

typedef struct norm_case {
    int axes[2];
    size_t n_axes;
    bool keepdims;
} norm_case;

static int norm_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const norm_case *c = user;
    outs[0] = weft_reduce_euclidean_norm(cx, a[0], c->axes, c->n_axes, c->keepdims);
    return weft_ctx_status(cx);
}

/* tf.math.reduce_euclidean_norm's documented values for [[1, 2, 3], [1,
 * 1, 1]]: 4 (i32), 4.1231055 (f32), [1, 2, 3] over axis 0, [3, 1] over
 * axis 1, [[3], [1]] kept, 4 over both axes. */
Test(ops_numpy_reduce, euclidean_norm_is_tensorflows)
{
    static const double x[6] = { 1, 2, 3, 1, 1, 1 };
    static const struct {
        norm_case c;
        weft_dtype dt;
        int rank;
        int64_t dims[2];
        double want[3];
    } ex[6] = {
        { { { 0 }, 0, false }, WEFT_I32, 0, { 0 }, { 4 } },
        { { { 0 }, 0, false }, WEFT_F32, 0, { 0 }, { (float)4.1231056256176606 } },
        { { { 0 }, 1, false }, WEFT_I32, 1, { 3 }, { 1, 2, 3 } },
        { { { 1 }, 1, false }, WEFT_I64, 1, { 2 }, { 3, 1 } },
        { { { -1 }, 1, true }, WEFT_I32, 2, { 2, 1 }, { 3, 1 } },
        { { { 0, 1 }, 2, false }, WEFT_F64, 0, { 0 }, { 4.1231056256176606 } },
    };
    for (int k = 0; k < 6; k++) {
        weft_tensor *a = test_tensor(ex[k].dt, 2, DIMS(2, 3), x), *y;
        norm_case c = ex[k].c;
        op_results_everywhere(norm_body, &c, &a, 1, &y, 1, "euclidean norm");
        test_assert_shape(y, ex[k].dt, ex[k].rank, ex[k].dims, "euclidean norm");
        for (int64_t i = 0; i < weft_tensor_numel(y); i++)
            cr_assert_eq(test_element(y, i), ex[k].want[i], "case %d [%lld]: %.17g", k,
                         (long long)i, test_element(y, i));
        weft_tensor_release(y);
        weft_tensor_release(a);
    }
    /* 46341^2 wraps past INT32_MAX: the sum's root is NaN, cast to 0. */
    weft_tensor *big = test_tensor(WEFT_I32, 1, DIMS(1), (const double[]){ 46341 }), *y;
    norm_case all = { { 0 }, 0, false };
    op_results_everywhere(norm_body, &all, &big, 1, &y, 1, "wrapped");
    cr_assert_eq(test_element(y, 0), 0);
    weft_tensor_release(y);
    weft_tensor_release(big);
}

static int grad_body_of(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    static const int rows = 1;
    switch (*(const int *)user) {
    case 0: outs[0] = weft_nanmean(cx, a[0], &rows, 1, false); break;
    case 1: outs[0] = weft_ptp(cx, a[0], &rows, 1, false); break;
    case 2: outs[0] = weft_average(cx, a[0], 1, a[1]); break;
    case 3: outs[0] = weft_inner(cx, a[0], a[1]); break;
    default: outs[0] = weft_reduce_euclidean_norm(cx, a[0], &rows, 1, true); break;
    }
    return weft_ctx_status(cx);
}

Test(ops_numpy_reduce, gradients_match_differences)
{
    const double v[12] = { 0.3, -0.7, 1.2, 0.05, -1.4, 0.9, 0.6, -0.2, 1.7, -0.55, 1.1, 0.8 };
    const double w[12] = { 0.1, 0.2, 1.0, 2.0, 1.3, 0.4, 0.6, 0.9, 1.5, 2.0, 0.7, 0.1 };
    const grad_arg xw[2] = { { 2, { 3, 4 }, v }, { 2, { 3, 4 }, w } };
    static const int cases[5] = { 0, 1, 2, 3, 4 };
    static const char *const names[5] = { "nanmean", "ptp", "average", "inner", "norm" };
    for (int k = 0; k < 5; k++) {
        size_t n = k == 2 || k == 3 ? 2 : 1;
        grad_case c = { grad_body_of, &cases[k], n, n };
        expect_gradients(&c, xw, names[k]);
    }
}

static int refused_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    switch (*(const int *)user) {
    case 0: outs[0] = weft_ptp(cx, a[0], NULL, 0, false); break;
    case 1: outs[0] = weft_average(cx, a[1], WEFT_ALL_AXES, a[2]); break;
    default: outs[0] = weft_reduce_euclidean_norm(cx, a[0], NULL, 0, false); break;
    }
    return weft_ctx_status(cx);
}

Test(ops_numpy_reduce, refusals)
{
    weft_tensor *args[3] = { test_tensor(WEFT_BOOL, 1, DIMS(2), (const double[]){ 1, 0 }),
                             test_tensor(WEFT_F64, 2, DIMS(2, 2), (const double[]){ 1, 2, 3, 4 }),
                             test_tensor(WEFT_F64, 1, DIMS(2), (const double[]){ 1, 2 }) };
    const op_error_case cases[] = {
        { 0, WEFT_EDTYPE, "weft_ptp: a bool[2] is not a number" },
        { 1, WEFT_ESHAPE, "weft_average: weights f64[2] are not of the rank of a f64[2,2], nor "
                          "a vector along its axis" },
        { 2, WEFT_EDTYPE, "weft_reduce_euclidean_norm: a bool[2] is not numbers" },
    };
    op_expect_errors(rt, refused_body, cases, 3, args, 3);
    for (int k = 0; k < 3; k++)
        weft_tensor_release(args[k]);
}
