/* Arrays tf.experimental.numpy builds (logspace, geomspace, vander, tri)
 * and rearranges (take_along_axis, moveaxis, swapaxes), composed of
 * weft's ops in NumPy's (or, for vander, TensorFlow's) formula, so eager
 * and traced runs give the same bits and the gradients come from the
 * parts. */
#include <math.h>

#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

/* The checks logspace and geomspace share with weft_linspace, naming fn. */
static bool space_args_ok(weft_ctx *cx, const char *fn, double start, double stop, int64_t num,
                          weft_dtype dtype)
{
    if (!weft__ops_float_dtype_arg(cx, fn, dtype))
        return false;
    if (num < 0) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: num %lld is negative", fn, (long long)num);
        return false;
    }
    if (!isfinite(start) || !isfinite(stop)) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: start %g and stop %g are not finite", fn, start,
                       stop);
        return false;
    }
    return true;
}

/* base ** linspace(start, stop, num) in f64, as NumPy's logspace. */
static weft_value *powers(weft_ctx *cx, double base, double start, double stop, int64_t num)
{
    return weft_pow(cx, weft_const_f64(cx, base), weft_linspace(cx, start, stop, num, WEFT_F64));
}

weft_value *weft_logspace(weft_ctx *cx, double start, double stop, int64_t num, double base,
                          weft_dtype dtype)
{
    WEFT__SCOPE(cx);
    const char *fn = "weft_logspace";
    if (!weft__op_enter(cx, fn, NULL, 0) || !space_args_ok(cx, fn, start, stop, num, dtype))
        return NULL;
    if (!isfinite(base))
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: base %g is not finite", fn, base);
    return WEFT__KEEP(weft_cast(cx, powers(cx, base, start, stop, num), dtype));
}

/* NumPy's geomspace: 10 ** linspace(log10 |start|, log10 |stop|), its
 * ends set to |start| and |stop| exactly, times the common sign. */
weft_value *weft_geomspace(weft_ctx *cx, double start, double stop, int64_t num,
                           weft_dtype dtype)
{
    WEFT__SCOPE(cx);
    const char *fn = "weft_geomspace";
    if (!weft__op_enter(cx, fn, NULL, 0) || !space_args_ok(cx, fn, start, stop, num, dtype))
        return NULL;
    if (start == 0 || stop == 0 || (start < 0) != (stop < 0))
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: start %g and stop %g are not nonzero and "
                              "of one sign", fn, start, stop);
    double a = fabs(start), b = fabs(stop);
    weft_value *v = powers(cx, 10.0, log10(a), log10(b), num);
    weft_value *i = weft_range(cx, WEFT_I64, 0, num, 1);
    if (num > 0)
        v = weft_where(cx, weft_eq(cx, i, weft_const_i64(cx, 0)), weft_const_f64(cx, a), v);
    if (num > 1)
        v = weft_where(cx, weft_eq(cx, i, weft_const_i64(cx, num - 1)), weft_const_f64(cx, b), v);
    if (start < 0)
        v = weft_neg(cx, v);
    return WEFT__KEEP(weft_cast(cx, v, dtype));
}

/* TensorFlow's vander: x[:, None] ** exponents, the exponents N-1..0 (or
 * 0..N-1) in x's dtype. */
weft_value *weft_vander(weft_ctx *cx, weft_value *x, int64_t n, bool increasing)
{
    WEFT__SCOPE(cx);
    const char *fn = "weft_vander";
    if (!weft__op_enter(cx, fn, &x, 1))
        return NULL;
    const weft_spec *s = weft__value_spec(x);
    char ss[WEFT__SPEC_STR_MAX];
    if (!weft__ops_number(cx, fn, "x", x))
        return NULL;
    if (s->rank != 1)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: x %s is not a vector (known while tracing)",
                              fn, weft__spec_str(s, ss, sizeof ss));
    if (n < 0) {
        if (s->dims[0] < 0)
            return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: x %s has a length unknown while "
                                  "tracing, so N is needed", fn,
                                  weft__spec_str(s, ss, sizeof ss));
        n = s->dims[0];
    }
    weft_value *e = increasing ? weft_range(cx, s->dtype, 0, n, 1)
                               : weft_range(cx, s->dtype, n - 1, -1, -1);
    return WEFT__KEEP(weft_pow(cx, weft_expand_dims(cx, x, 1), e));
}

/* Where dim d of one operand is 1 and the other's is known and not 1, the
 * other's dim; else -1 (weft_broadcast_to keeps the dim).  Whether any dim
 * changes. */
static bool broadcast_dims(const weft_spec *from, const weft_spec *to, int r, int64_t *dims)
{
    bool any = false;
    for (int d = 0; d < r; d++) {
        dims[d] = -1;
        if (d < r - 1 && from->dims[d] == 1 && to->dims[d] >= 0 && to->dims[d] != 1) {
            dims[d] = to->dims[d];
            any = true;
        }
    }
    return any;
}

weft_value *weft_take_along_axis(weft_ctx *cx, weft_value *arr, weft_value *indices, int axis)
{
    WEFT__SCOPE(cx);
    const char *fn = "weft_take_along_axis";
    weft_value *in[2] = { arr, indices };
    if (!weft__op_enter(cx, fn, in, 2))
        return NULL;
    const weft_spec *sa = weft__value_spec(arr), *si = weft__value_spec(indices);
    char s1[WEFT__SPEC_STR_MAX], s2[WEFT__SPEC_STR_MAX];
    if (axis == WEFT_ALL_AXES) {   /* NumPy's None: arr flattened */
        if (si->rank != 1)
            return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: indices %s are not a vector (axis "
                                  "WEFT_ALL_AXES takes from arr flattened)", fn,
                                  weft__spec_str(si, s2, sizeof s2));
        weft_value *flat = weft_reshape(cx, arr, 1, (const int64_t[]){ -1 });
        return WEFT__KEEP(weft_take_along_axis(cx, flat, indices, 0));
    }
    int r = sa->rank;
    if (r == WEFT_RANK_ANY || r < 1 || si->rank != r)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: arr %s and indices %s have not one rank of "
                              "1 or more, known while tracing", fn,
                              weft__spec_str(sa, s1, sizeof s1), weft__spec_str(si, s2, sizeof s2));
    if (si->dtype != WEFT_I32 && si->dtype != WEFT_I64)
        return weft__ctx_fail(cx, WEFT_EDTYPE, "%s: indices %s are not i32 or i64", fn,
                              weft__spec_str(si, s2, sizeof s2));
    if (!weft__ops_axis_in(cx, fn, "arr", arr, &axis))
        return NULL;
    /* axis last, in both: the other dims become the gather's batch. */
    int last_of[WEFT_MAX_RANK], back[WEFT_MAX_RANK];
    for (int d = 0, k = 0; d < r; d++)
        if (d != axis)
            last_of[k++] = d;
    last_of[r - 1] = axis;
    for (int d = 0; d < r; d++)
        back[last_of[d]] = d;
    weft_value *a = axis == r - 1 ? arr : weft_transpose(cx, arr, last_of);
    weft_value *i = axis == r - 1 ? indices : weft_transpose(cx, indices, last_of);
    if (!a || !i)
        return NULL;
    weft_spec pa = *weft__value_spec(a), pi = *weft__value_spec(i);
    for (int d = 0; d < r - 1; d++)
        if (pa.dims[d] >= 0 && pi.dims[d] >= 0 && pa.dims[d] != pi.dims[d] && pa.dims[d] != 1 &&
            pi.dims[d] != 1)
            return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: arr %s and indices %s do not broadcast "
                                  "but along axis %d", fn, weft__spec_str(sa, s1, sizeof s1),
                                  weft__spec_str(si, s2, sizeof s2), axis);
    int64_t dims[WEFT_MAX_RANK];
    if (broadcast_dims(&pa, &pi, r, dims))
        a = weft_broadcast_to(cx, a, r, dims);
    if (broadcast_dims(&pi, &pa, r, dims))
        i = weft_broadcast_to(cx, i, r, dims);
    weft_value *y = weft_gather_ex(cx, a, i, r - 1, r - 1);
    return WEFT__KEEP(axis == r - 1 ? y : weft_transpose(cx, y, back));
}

/* NumPy's moveaxis: the axes not moved keep their order; each source
 * axis is then put at its destination, by increasing destination. */
weft_value *weft_moveaxis(weft_ctx *cx, weft_value *a, const int *source,
                          const int *destination, size_t n)
{
    WEFT__SCOPE(cx);
    const char *fn = "weft_moveaxis";
    if (!weft__op_enter(cx, fn, &a, 1))
        return NULL;
    const weft_spec *s = weft__value_spec(a);
    if (n > 0 && (!source || !destination))
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: NULL source or destination", fn);
    if (weft__ops_known_rank(cx, fn, "a", a) < 0)
        return NULL;
    if (n > (size_t)s->rank)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: %zu axes moved in a rank of %d", fn, n,
                              s->rank);
    int src[WEFT_MAX_RANK], dst[WEFT_MAX_RANK];
    bool src_used[WEFT_MAX_RANK] = { false }, dst_used[WEFT_MAX_RANK] = { false };
    for (size_t k = 0; k < n; k++) {
        src[k] = source[k];
        dst[k] = destination[k];
        if (!weft__ops_axis_in(cx, fn, "a", a, &src[k]) ||
            !weft__ops_axis_in(cx, fn, "a", a, &dst[k]))
            return NULL;
        if (src_used[src[k]] || dst_used[dst[k]])
            return weft__ctx_fail(cx, WEFT_EINVAL, "%s: an axis named twice in source or "
                                  "destination", fn);
        src_used[src[k]] = dst_used[dst[k]] = true;
    }
    int perm[WEFT_MAX_RANK], rest = 0;
    for (int d = 0; d < s->rank; d++)
        if (!src_used[d]) {
            while (dst_used[rest])
                rest++;
            perm[rest++] = d;
        }
    for (size_t k = 0; k < n; k++)
        perm[dst[k]] = src[k];
    return WEFT__KEEP(weft_transpose(cx, a, perm));
}

weft_value *weft_swapaxes(weft_ctx *cx, weft_value *a, int axis1, int axis2)
{
    WEFT__SCOPE(cx);
    const char *fn = "weft_swapaxes";
    if (!weft__op_enter(cx, fn, &a, 1))
        return NULL;
    const weft_spec *s = weft__value_spec(a);
    if (!weft__ops_axis_in(cx, fn, "a", a, &axis1) || !weft__ops_axis_in(cx, fn, "a", a, &axis2))
        return NULL;
    int perm[WEFT_MAX_RANK];
    for (int d = 0; d < s->rank; d++)
        perm[d] = d == axis1 ? axis2 : d == axis2 ? axis1 : d;
    return WEFT__KEEP(weft_transpose(cx, a, perm));
}

/* NumPy's tri: 1 where column j <= row i + k, of dtype. */
weft_value *weft_tri(weft_ctx *cx, int64_t n, int64_t m, int64_t k, weft_dtype dtype)
{
    WEFT__SCOPE(cx);
    const char *fn = "weft_tri";
    if (!weft__op_enter(cx, fn, NULL, 0))
        return NULL;
    m = m < 0 ? n : m;
    if (n < 0)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: n %lld is negative", fn, (long long)n);
    if (!weft_dtype_name(dtype))
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: dtype %d is not a dtype", fn, (int)dtype);
    weft_value *rows = weft_reshape(cx, weft_range(cx, WEFT_I64, 0, n, 1), 2,
                                    (const int64_t[]){ -1, 1 });
    weft_value *cols = weft_range(cx, WEFT_I64, 0, m, 1);
    weft_value *in = weft_le(cx, cols, weft_add(cx, rows, weft_const_i64(cx, k)));
    return WEFT__KEEP(weft_cast(cx, in, dtype));
}
