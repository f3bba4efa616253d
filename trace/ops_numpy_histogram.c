/* NumPy's histogram with equal bins, composed of reductions, gathers and
 * weft_bincount in NumPy 1.24's steps: the outer edges (given, or a's
 * minimum and maximum when the function runs), the edges as np.linspace
 * makes them, each value's bin from its offset, corrected by one against
 * the edges, the last bin closed. */
#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

#include <math.h>

/* The outer edges, f64 scalars. */
typedef struct outer_edges {
    weft_value *lo, *hi;
} outer_edges;

/* range given: its ends, an empty one widened by 1/2 each way. */
static outer_edges given_edges(weft_ctx *cx, const double *range)
{
    double lo = range[0], hi = range[1];
    if (lo == hi) {
        lo -= 0.5;
        hi += 0.5;
    }
    return (outer_edges){ weft__value_strong(cx, weft_const_f64(cx, lo)),
                          weft__value_strong(cx, weft_const_f64(cx, hi)) };
}

/* No range: a's minimum and maximum ((0, 1) for no values), checked to be
 * finite when the function runs, widened by 1/2 where they are equal. */
static outer_edges found_edges(weft_ctx *cx, weft_value *a)
{
    weft_value *min = weft_reduce(cx, WEFT_R_MIN, a, NULL, 0, false);
    weft_value *max = weft_reduce(cx, WEFT_R_MAX, a, NULL, 0, false);
    weft_value *none = weft_gt(cx, min, max);
    weft_value *lo = weft_where(cx, none, weft_const_f64(cx, 0), weft_cast(cx, min, WEFT_F64));
    weft_value *hi = weft_where(cx, none, weft_const_f64(cx, 1), weft_cast(cx, max, WEFT_F64));
    weft_value *finite = weft_logical_and(cx, weft_is_finite(cx, lo), weft_is_finite(cx, hi));
    lo = weft_check(cx, lo, finite, "weft_histogram: the range of a is not finite");
    weft_value *same = weft_eq(cx, lo, hi);
    lo = weft_where(cx, same, weft_sub(cx, lo, weft_const_f64(cx, 0.5)), lo);
    hi = weft_where(cx, same, weft_add(cx, hi, weft_const_f64(cx, 0.5)), hi);
    return (outer_edges){ lo, hi };
}

/* np.linspace(lo, hi, bins + 1) in f64 (k (hi - lo) / bins + lo, the last
 * exactly hi), rounded to dt. */
static weft_value *bin_edges(weft_ctx *cx, const outer_edges *e, int64_t bins, weft_dtype dt)
{
    weft_value *k = weft_range(cx, WEFT_F64, 0, bins + 1, 1);
    weft_value *step = weft_truediv(cx, weft_sub(cx, e->hi, e->lo),
                                    weft_const_f64(cx, (double)bins));
    weft_value *y = weft_add(cx, weft_mul(cx, k, step), e->lo);
    y = weft_where(cx, weft_eq(cx, k, weft_const_f64(cx, (double)bins)), e->hi, y);
    return weft_cast(cx, y, dt);
}

/* Each value's bin (bins for a value outside [lo, hi] or NaN), NumPy's
 * offset (x - lo) / (hi - lo) * bins in dt corrected by one against the
 * edges (the correction lets the edges decide; NumPy's span, taken in a's
 * dtype for a range it found, differs by a rounding at most). */
static weft_value *bin_of(weft_ctx *cx, weft_value *x, const outer_edges *e, weft_value *edges,
                          int64_t bins, weft_dtype dt)
{
    weft_value *lo = weft_cast(cx, e->lo, dt), *hi = weft_cast(cx, e->hi, dt);
    weft_value *keep = weft_logical_and(cx, weft_ge(cx, x, lo), weft_le(cx, x, hi));
    weft_value *span = weft_cast(cx, weft_sub(cx, e->hi, e->lo), dt);
    weft_value *offset = weft_mul(cx, weft_truediv(cx, weft_sub(cx, x, lo), span),
                                  weft_const_f64(cx, (double)bins));
    offset = weft_where(cx, keep, offset, weft_const_f64(cx, 0));
    weft_value *i = weft_cast(cx, offset, WEFT_I64);
    weft_value *last = weft_const_i64(cx, bins - 1), *one = weft_const_i64(cx, 1);
    i = weft_minimum(cx, i, last);
    i = weft_where(cx, weft_lt(cx, x, weft_gather(cx, edges, i, 0)), weft_sub(cx, i, one), i);
    weft_value *up = weft_logical_and(cx, weft_ge(cx, x, weft_gather(cx, edges,
                                                                      weft_add(cx, i, one), 0)),
                                      weft_lt(cx, i, last));
    i = weft_where(cx, up, weft_add(cx, i, one), i);
    return weft_where(cx, keep, i, weft_const_i64(cx, bins));
}

int weft_histogram(weft_ctx *cx, weft_value *a, int64_t bins, const double *range,
                   weft_value **outs)
{
    WEFT__SCOPE_OUTS(cx, outs, 2);
    static const char fn[] = "weft_histogram";
    int rc;
    if (!weft__ops_enter_two_outs(cx, fn, &a, 1, outs, &rc))
        return rc;
    const weft_spec *s = weft__value_spec(a);
    if (!weft__ops_number(cx, fn, "a", a))
        return weft_ctx_status(cx);
    if (bins < 1 || bins > INT32_MAX)
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: bins %lld is not in [1, 2^31)", fn,
                       (long long)bins);
    else if (range && !(isfinite(range[0]) && isfinite(range[1]) && range[0] <= range[1]))
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: range [%g, %g] is not finite with min <= max", fn,
                       range[0], range[1]);
    if (weft_ctx_status(cx) != 0)
        return weft_ctx_status(cx);
    weft_dtype dt = weft__dtype_is_float(s->dtype) ? s->dtype : WEFT_F64;
    weft_value *x = weft__ops_as_dtype(cx, weft_ravel(cx, a), dt);
    outer_edges e = range ? given_edges(cx, range) : found_edges(cx, a);
    weft_value *edges = bin_edges(cx, &e, bins, dt);
    weft_value *at = bin_of(cx, x, &e, edges, bins, dt);
    outs[0] = weft_bincount(cx, at, NULL, bins, bins, WEFT_I64);
    outs[1] = edges;
    if (weft_ctx_status(cx) != 0)
        outs[0] = outs[1] = NULL;
    return weft_ctx_status(cx);
}
