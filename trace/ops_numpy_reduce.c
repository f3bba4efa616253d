/* Reductions and products of tf.experimental.numpy and NumPy composed of
 * weft's ops in NumPy's formulas (nansum, nanprod, nanmean, nancumsum,
 * nancumprod, nanmax, nanmin, nanargmax, nanargmin, nanvar, nanstd, ptp,
 * average, inner, vdot)
 * and tf.math.reduce_euclidean_norm in TensorFlow's:
 * the order of a sum is weft_reduce's, so eager and traced runs give the
 * same bits, and the gradients come from the parts. */
#include "trace/control.h"
#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

#include <math.h>

/* a with its NaNs replaced by fill (floats only; others as they are). */
static weft_value *nan_as(weft_ctx *cx, const char *fn, weft_value *a, double fill)
{
    if (!weft__dtype_is_float(weft__value_spec(a)->dtype))
        return a;
    weft_value *nan = weft__op_unary(cx, WEFT__OP_IS_NAN, fn, a);
    return weft_where(cx, nan, weft_const_f64(cx, fill), a);
}

/* Reduction r of a with its NaNs read as fill. */
static weft_value *nan_reduce(weft_ctx *cx, const char *fn, weft_reduction r, double fill,
                              weft_value *a, const int *axes, size_t n_axes, bool keepdims)
{
    if (!weft__op_enter(cx, fn, &a, 1))
        return NULL;
    return weft_reduce(cx, r, nan_as(cx, fn, a, fill), axes, n_axes, keepdims);
}

weft_value *weft_nansum(weft_ctx *cx, weft_value *a, const int *axes, size_t n_axes,
                        bool keepdims)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(nan_reduce(cx, "weft_nansum", WEFT_R_SUM, 0.0, a, axes, n_axes, keepdims));
}

weft_value *weft_nanprod(weft_ctx *cx, weft_value *a, const int *axes, size_t n_axes,
                         bool keepdims)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(nan_reduce(cx, "weft_nanprod", WEFT_R_PROD, 1.0, a, axes, n_axes,
                                 keepdims));
}

/* The sum of the numbers over the count of them (NaN where there are
 * none, as NumPy's 0 / 0); integers and bool as weft_reduce's mean. */
weft_value *weft_nanmean(weft_ctx *cx, weft_value *a, const int *axes, size_t n_axes,
                         bool keepdims)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_nanmean";
    if (!weft__op_enter(cx, fn, &a, 1))
        return NULL;
    if (!weft__dtype_is_float(weft__value_spec(a)->dtype))
        return WEFT__KEEP(weft_reduce(cx, WEFT_R_MEAN, a, axes, n_axes, keepdims));
    weft_value *sum = weft_reduce(cx, WEFT_R_SUM, nan_as(cx, fn, a, 0.0), axes, n_axes,
                                  keepdims);
    weft_value *number = weft_logical_not(cx, weft__op_unary(cx, WEFT__OP_IS_NAN, fn, a));
    weft_value *count = weft_reduce(cx, WEFT_R_SUM, number, axes, n_axes, keepdims);
    return WEFT__KEEP(weft_truediv(cx, sum, count));
}

/* NumPy's ptp: the maximum minus the minimum (NaN propagates). */
weft_value *weft_ptp(weft_ctx *cx, weft_value *a, const int *axes, size_t n_axes,
                     bool keepdims)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_ptp";
    if (!weft__op_enter(cx, fn, &a, 1))
        return NULL;
    if (!weft__ops_number(cx, fn, "a", a))
        return NULL;
    weft_value *hi = weft_reduce(cx, WEFT_R_MAX, a, axes, n_axes, keepdims);
    weft_value *lo = weft_reduce(cx, WEFT_R_MIN, a, axes, n_axes, keepdims);
    return WEFT__KEEP(weft__op_binary(cx, WEFT__OP_SUB, fn, hi, lo));
}

/* NumPy's nancumsum and nancumprod: the scans of a with its NaNs read as
 * 0 (1), flattened first for every axis. */
static weft_value *nan_scan(weft_ctx *cx, const char *fn, bool product, weft_value *a, int axis)
{
    if (!weft__op_enter(cx, fn, &a, 1))
        return NULL;
    a = nan_as(cx, fn, a, product ? 1.0 : 0.0);
    if (axis == WEFT_ALL_AXES) {
        a = weft_ravel(cx, a);
        axis = 0;
    }
    return product ? weft_cumprod(cx, a, axis, 0) : weft_cumsum(cx, a, axis);
}

weft_value *weft_nancumsum(weft_ctx *cx, weft_value *a, int axis)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(nan_scan(cx, "weft_nancumsum", false, a, axis));
}

weft_value *weft_nancumprod(weft_ctx *cx, weft_value *a, int axis)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(nan_scan(cx, "weft_nancumprod", true, a, axis));
}

/* NumPy's nanmax and nanmin: the NaNs read as the other extreme, then NaN
 * where every element was one. */
static weft_value *nan_extreme(weft_ctx *cx, const char *fn, weft_reduction r, weft_value *a,
                               const int *axes, size_t n_axes, bool keepdims)
{
    if (!weft__op_enter(cx, fn, &a, 1))
        return NULL;
    if (!weft__ops_number(cx, fn, "a", a))
        return NULL;
    if (!weft__dtype_is_float(weft__value_spec(a)->dtype))
        return weft_reduce(cx, r, a, axes, n_axes, keepdims);
    weft_value *y = weft_reduce(cx, r, nan_as(cx, fn, a, r == WEFT_R_MAX ? -INFINITY : INFINITY),
                                axes, n_axes, keepdims);
    weft_value *none = weft_reduce(cx, WEFT_R_ALL, weft__op_unary(cx, WEFT__OP_IS_NAN, fn, a),
                                   axes, n_axes, keepdims);
    return weft_where(cx, none, weft_const_f64(cx, NAN), y);
}

weft_value *weft_nanmax(weft_ctx *cx, weft_value *a, const int *axes, size_t n_axes,
                        bool keepdims)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(nan_extreme(cx, "weft_nanmax", WEFT_R_MAX, a, axes, n_axes, keepdims));
}

weft_value *weft_nanmin(weft_ctx *cx, weft_value *a, const int *axes, size_t n_axes,
                        bool keepdims)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(nan_extreme(cx, "weft_nanmin", WEFT_R_MIN, a, axes, n_axes, keepdims));
}

/* NumPy's nanargmax and nanargmin: the arg extreme with the NaNs read as
 * the other extreme; a slice of NaNs only fails when the call runs, as
 * NumPy's ValueError. */
static weft_value *nan_arg_extreme(weft_ctx *cx, const char *fn, bool max, weft_value *a,
                                   int axis)
{
    if (!weft__op_enter(cx, fn, &a, 1))
        return NULL;
    weft_value *(*arg)(weft_ctx *, weft_value *, int) = max ? weft_argmax : weft_argmin;
    if (!weft__dtype_is_float(weft__value_spec(a)->dtype))
        return arg(cx, a, axis);
    weft_value *nan = weft__op_unary(cx, WEFT__OP_IS_NAN, fn, a);
    weft_value *none = axis == WEFT_ALL_AXES ? weft_reduce(cx, WEFT_R_ALL, nan, NULL, 0, false)
                                             : weft_reduce(cx, WEFT_R_ALL, nan, &axis, 1, false);
    weft_value *some = weft_logical_not(cx, weft_reduce(cx, WEFT_R_ANY, none, NULL, 0, false));
    weft_value *i = arg(cx, nan_as(cx, fn, a, max ? -INFINITY : INFINITY), axis);
    return weft__ops_checkf(cx, i, some, "%s: All-NaN slice encountered", fn);
}

weft_value *weft_nanargmax(weft_ctx *cx, weft_value *a, int axis)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(nan_arg_extreme(cx, "weft_nanargmax", true, a, axis));
}

weft_value *weft_nanargmin(weft_ctx *cx, weft_value *a, int axis)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(nan_arg_extreme(cx, "weft_nanargmin", false, a, axis));
}

/* NumPy's nanvar: the numbers' mean, their squared deviations summed,
 * over count - ddof (NaN where that is not positive). */
static weft_value *nan_var(weft_ctx *cx, const char *fn, weft_value *a, const int *axes,
                           size_t n_axes, int ddof, bool keepdims)
{
    if (!weft__op_enter(cx, fn, &a, 1))
        return NULL;
    if (ddof < 0)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: ddof %d is negative", fn, ddof);
    weft_dtype dt = weft__ops_float_dtype(&a, 1);
    weft_value *x = weft__ops_as_dtype(cx, a, dt);
    weft_value *nan = weft__op_unary(cx, WEFT__OP_IS_NAN, fn, x);
    weft_value *zero = weft_const_f64(cx, 0);
    x = weft_where(cx, nan, zero, x);
    weft_value *number = weft_logical_not(cx, nan);
    weft_value *kept = weft_reduce(cx, WEFT_R_SUM, number, axes, n_axes, true);
    weft_value *mean = weft_truediv(cx, weft_reduce(cx, WEFT_R_SUM, x, axes, n_axes, true),
                                    weft_cast(cx, kept, dt));
    weft_value *dev = weft_where(cx, nan, zero, weft_sub(cx, x, mean));
    weft_value *squares = weft_reduce(cx, WEFT_R_SUM, weft_mul(cx, dev, dev), axes, n_axes,
                                      keepdims);
    /* The count without the kept dims: its dims of 1 summed away, cheap
     * where the second count of a's elements was not. */
    weft_value *count = keepdims ? kept : weft_reduce(cx, WEFT_R_SUM, kept, axes, n_axes, false);
    weft_value *dof = weft_sub(cx, weft_cast(cx, count, dt), weft_const_f64(cx, ddof));
    return weft_where(cx, weft_le(cx, dof, zero), weft_const_f64(cx, NAN),
                      weft_truediv(cx, squares, dof));
}

weft_value *weft_nanvar(weft_ctx *cx, weft_value *a, const int *axes, size_t n_axes, int ddof,
                        bool keepdims)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(nan_var(cx, "weft_nanvar", a, axes, n_axes, ddof, keepdims));
}

weft_value *weft_nanstd(weft_ctx *cx, weft_value *a, const int *axes, size_t n_axes, int ddof,
                        bool keepdims)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(weft_sqrt(cx, nan_var(cx, "weft_nanstd", a, axes, n_axes, ddof,
                                            keepdims)));
}

weft_value *weft__ops_along_axis(weft_ctx *cx, weft_value *w, int rank, int axis)
{
    int64_t dims[WEFT_MAX_RANK];
    for (int d = 0; d < rank; d++)
        dims[d] = d == axis ? -1 : 1;
    return weft_reshape(cx, w, rank, dims);
}

/* NumPy's average: the mean, or with weights sum(a w) / sum(w) in the
 * float dtype the two promote to, w broadcast to a's shape first. */
/* NumPy's average of a over axis with weights (NULL: the mean); *scl
 * (when scl is not NULL) gets NumPy's returned sum of the weights (the
 * count of the averaged elements without them), in the average's dtype
 * and shape. */
static weft_value *average(weft_ctx *cx, const char *fn, weft_value *a, int axis,
                           weft_value *weights, weft_value **scl)
{
    weft_value *in[2] = { a, weights };
    if (!weft__op_enter_optional(cx, fn, in, 1, 2))
        return NULL;
    const int *axes = axis == WEFT_ALL_AXES ? NULL : &axis;
    size_t n = axis == WEFT_ALL_AXES ? 0 : 1;
    if (!weights) {
        weft_value *mean = weft_reduce(cx, WEFT_R_MEAN, a, axes, n, false);
        if (scl && mean) {
            weft_value *ones = weft_ones_like(cx, weft__ops_as_dtype(cx, a,
                                                                    weft__value_spec(mean)->dtype));
            *scl = weft_reduce(cx, WEFT_R_SUM, ones, axes, n, false);
        }
        return mean;
    }
    const weft_spec *sa = weft__value_spec(a), *sw = weft__value_spec(weights);
    char s1[WEFT__SPEC_STR_MAX], s2[WEFT__SPEC_STR_MAX];
    bool same = sw->rank == sa->rank && sa->rank != WEFT_RANK_ANY;
    bool one_d = sw->rank == 1 && sa->rank != WEFT_RANK_ANY && axis != WEFT_ALL_AXES &&
                 axis >= -sa->rank && axis < sa->rank;
    if (!same && !one_d)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: weights %s are not of the rank of a %s, nor "
                              "a vector along its axis", fn, weft__spec_str(sw, s2, sizeof s2),
                              weft__spec_str(sa, s1, sizeof s1));
    weft_dtype dt = weft__ops_float_dtype(in, 2);
    a = weft__ops_as_dtype(cx, a, dt);
    weft_value *w = weft__ops_as_dtype(cx, weights, dt);
    if (!same)
        w = weft__ops_along_axis(cx, w, sa->rank, axis < 0 ? axis + sa->rank : axis);
    weft_value *num = weft_reduce(cx, WEFT_R_SUM, weft_mul(cx, a, w), axes, n, false);
    /* w times ones: w broadcast to a's shape, its values exact. */
    weft_value *den = weft_reduce(cx, WEFT_R_SUM, weft_mul(cx, w, weft_ones_like(cx, a)), axes, n,
                                  false);
    if (scl)
        *scl = den;
    return weft_truediv(cx, num, den);
}

weft_value *weft_average(weft_ctx *cx, weft_value *a, int axis, weft_value *weights)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(average(cx, "weft_average", a, axis, weights, NULL));
}

int weft_average_returned(weft_ctx *cx, weft_value *a, int axis, weft_value *weights,
                          weft_value **outs)
{
    static const char fn[] = "weft_average_returned";
    int rc = weft__ctx_enter_int(cx, fn, &a, 1, outs, 2);
    if (rc < 0)
        return rc;
    WEFT__SCOPE_OUTS(cx, outs, 2);
    outs[1] = NULL;
    outs[0] = average(cx, fn, a, axis, weights, &outs[1]);
    rc = weft_ctx_status(cx);
    if (rc < 0)
        outs[0] = outs[1] = NULL;
    return rc;
}

/* NumPy's inner: the sum of products over the last axes of both (a
 * scalar operand multiplies). */
weft_value *weft_inner(weft_ctx *cx, weft_value *a, weft_value *b)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_inner";
    weft_value *in[2] = { a, b };
    if (!weft__op_enter(cx, fn, in, 2))
        return NULL;
    if (weft__value_spec(a)->rank == 0 || weft__value_spec(b)->rank == 0)
        return WEFT__KEEP(weft_mul(cx, a, b));
    static const int last = -1;
    return WEFT__KEEP(weft_tensordot_ex(cx, a, b, &last, &last, 1));
}

/* NumPy's vdot for real numbers: both flattened, one dot product. */
weft_value *weft_vdot(weft_ctx *cx, weft_value *a, weft_value *b)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_vdot";
    weft_value *in[2] = { a, b };
    if (!weft__op_enter(cx, fn, in, 2))
        return NULL;
    return WEFT__KEEP(weft_tensordot(cx, weft_ravel(cx, a), weft_ravel(cx, b), 1));
}

weft_value *weft_reduce_euclidean_norm(weft_ctx *cx, weft_value *a, const int *axes,
                                       size_t n_axes, bool keepdims)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_reduce_euclidean_norm";
    if (!weft__op_enter(cx, fn, &a, 1))
        return NULL;
    weft_dtype dt = weft__value_spec(a)->dtype;
    if (dt == WEFT_BOOL) {
        char ss[WEFT__SPEC_STR_MAX];
        return weft__ctx_fail(cx, WEFT_EDTYPE, "%s: a %s is not numbers", fn,
                              weft__spec_str(weft__value_spec(a), ss, sizeof ss));
    }
    weft_value *squares = weft_reduce(cx, WEFT_R_SUM, weft_mul(cx, a, a), axes, n_axes, keepdims);
    if (weft__dtype_is_float(dt))
        return WEFT__KEEP(weft_sqrt(cx, squares));
    /* TensorFlow's integer kernel: the root of the (wrapping) integer sum
     * taken in double and truncated. */
    return WEFT__KEEP(weft_cast(cx, weft_sqrt(cx, weft_cast(cx, squares, WEFT_F64)), dt));
}
