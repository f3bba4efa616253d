/* NumPy's partition and argpartition: the axis sorted (a stable sort),
 * which is one of the orders NumPy's contract allows; its introselect
 * leaves the elements within each part in another, unspecified, order. */
#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

/* a ready for the sort (flattened for WEFT_ALL_AXES, then axis 0) with
 * kth[0..n_kth) in range of its axis (negative from the end): statically
 * where the axis' dim is known, else checked when the call runs.  NULL
 * with the context failing naming fn. */
static weft_value *partitioned_axis(weft_ctx *cx, const char *fn, weft_value *a,
                                    const int64_t *kth, size_t n_kth, int *axis)
{
    if (!weft__op_enter(cx, fn, &a, 1))
        return NULL;
    if (n_kth > 0 && !kth)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: kth is NULL for n_kth %zu", fn, n_kth);
    if (*axis == WEFT_ALL_AXES) {
        a = weft_reshape(cx, a, 1, (const int64_t[]){ -1 });
        *axis = 0;
    }
    if (!a || !weft__ops_axis_in(cx, fn, "a", a, axis))
        return NULL;
    int64_t n = weft__value_spec(a)->dims[*axis], lo = 0, hi = 0;
    for (size_t k = 0; k < n_kth; k++) {
        if (n >= 0 && (kth[k] < -n || kth[k] >= n))
            return weft__ctx_fail(cx, WEFT_EINVAL, "%s: kth[%zu] %lld is out of bounds for an "
                                  "axis of %lld", fn, k, (long long)kth[k], (long long)n);
        lo = kth[k] < lo ? kth[k] : lo;
        hi = kth[k] > hi ? kth[k] : hi;
    }
    if (n >= 0 || n_kth == 0)
        return a;
    /* The extremes decide: every kth is in [-n, n) once they are. */
    weft_value *len = weft__ops_dim(cx, a, *axis);
    weft_value *ok = weft_logical_and(cx, weft_lt(cx, weft_const_i64(cx, hi), len),
                                      weft_ge(cx, weft_const_i64(cx, lo), weft_neg(cx, len)));
    return weft__ops_checkf(cx, a, ok, "%s: a kth is out of bounds for the axis", fn);
}

weft_value *weft_partition(weft_ctx *cx, weft_value *a, const int64_t *kth, size_t n_kth,
                           int axis)
{
    WEFT__SCOPE(cx);
    weft_value *x = partitioned_axis(cx, "weft_partition", a, kth, n_kth, &axis);
    return x ? WEFT__KEEP(weft_sort(cx, x, axis, false)) : NULL;
}

weft_value *weft_argpartition(weft_ctx *cx, weft_value *a, const int64_t *kth, size_t n_kth,
                              int axis)
{
    WEFT__SCOPE(cx);
    weft_value *x = partitioned_axis(cx, "weft_argpartition", a, kth, n_kth, &axis);
    return x ? WEFT__KEEP(weft_argsort(cx, x, axis, false)) : NULL;
}
