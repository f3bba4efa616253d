/* NumPy's order statistics (quantile, percentile, median and their nan
 * forms) composed of weft's sort, gathers and elementwise ops in NumPy's
 * formulas: the axis is sorted (NaN last), moved last, and read at
 * indices computed from q when the function runs, so a new q or length
 * never retraces.  The nan forms read each row's numbers, the prefix
 * before its NaNs.  The gradients come from the parts (the sort's and
 * the gathers'). */
#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

#include <math.h>

/* The parts every statistic here reads: a sorted along its axis, that
 * axis moved last, and the axis's last index as an i64 scalar (known only
 * when the function runs where the dim is unknown while tracing). */
typedef struct sorted_rows {
    weft_value *rows;     /* a's values, sorted, the axis last */
    weft_value *last;     /* n - 1, i64[]; per row [rest...]: numbers - 1 */
    bool per_row;         /* last is per row (the nan forms) */
    weft_dtype dtype;     /* a's float dtype, f64 for integers */
    int axis;             /* a's axis, in [0, rank) (0 for WEFT_ALL_AXES) */
    int rank;             /* a's rank (1 for WEFT_ALL_AXES) */
    int kept;             /* the 1s keepdims adds: 1, or a's rank for all axes */
} sorted_rows;

static bool sort_rows(weft_ctx *cx, const char *fn, weft_value *a, int axis, bool keepdims,
                      sorted_rows *out)
{
    const weft_spec *s = weft__value_spec(a);
    char ss[WEFT__SPEC_STR_MAX];
    if (!weft__ops_number(cx, fn, "a", a))
        return false;
    out->dtype = weft__dtype_is_float(s->dtype) ? s->dtype : WEFT_F64;
    out->kept = keepdims ? 1 : 0;
    if (axis == WEFT_ALL_AXES) {
        if (keepdims && (out->kept = weft__ops_known_rank(cx, fn, "a", a)) < 0)
            return false;
        a = weft_ravel(cx, a);
        axis = 0;
        if (!a)
            return false;
    } else if (!weft__ops_axis_in(cx, fn, "a", a, &axis)) {
        return false;
    }
    s = weft__value_spec(a);
    if (s->dims[axis] == 0) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: axis %d of %s is empty", fn, axis,
                       weft__spec_str(s, ss, sizeof ss));
        return false;
    }
    out->axis = axis;
    out->rank = s->rank;
    out->per_row = false;
    weft_value *v = weft_sort(cx, a, axis, false);
    int last = s->rank - 1;
    if (axis != last)
        v = weft_moveaxis(cx, v, &axis, &last, 1);
    out->rows = v;
    out->last = weft_sub(cx, weft__ops_dim(cx, a, axis), weft_const_i64(cx, 1));
    return v && out->last;
}

/* The nan forms' rows: each row's last index is its count of numbers
 * less one (-1 for a row of NaN).  Integers have no NaN to skip. */
static void skip_nans(weft_ctx *cx, sorted_rows *r)
{
    if (!weft__dtype_is_float(weft__value_spec(r->rows)->dtype))
        return;
    static const int along = -1;
    weft_value *number = weft_logical_not(cx, weft_is_nan(cx, r->rows));
    weft_value *count = weft_reduce(cx, WEFT_R_SUM, number, &along, 1, false);
    r->last = weft_sub(cx, count, weft_const_i64(cx, 1));
    r->per_row = true;
}

/* The last index laid against q's k dims: [rest..., 1 x k] per row. */
static weft_value *last_for(weft_ctx *cx, const sorted_rows *r, int k)
{
    weft_value *last = r->last;
    for (int d = 0; r->per_row && d < k; d++)
        last = weft_expand_dims(cx, last, -1);
    return last;
}

/* The rows' elements at i64 indices idx: [q...] for every row, or per row
 * [rest..., q...]; the result is [rest..., q...].  A row of NaN (last -1)
 * reads index -1 or 0, a NaN either way, replaced after. */
static weft_value *take(weft_ctx *cx, const sorted_rows *r, weft_value *idx)
{
    int axis = r->rank - 1;
    return r->per_row ? weft_gather_ex(cx, r->rows, idx, axis, axis)
                      : weft_gather(cx, r->rows, idx, axis);
}

/* y ([rest..., k dims]) with NaN for the rows NumPy gives NaN: a row
 * holding a NaN (sorted, it is the last), for the nan forms a row of
 * NaN only. */
static weft_value *nan_rows(weft_ctx *cx, const sorted_rows *r, weft_value *y, int k)
{
    if (!weft__dtype_is_float(weft__value_spec(r->rows)->dtype))
        return y;
    weft_value *nan = r->per_row ? weft_lt(cx, last_for(cx, r, k), weft_const_i64(cx, 0))
                                 : weft_is_nan(cx, take(cx, r, r->last));
    for (int d = 0; !r->per_row && d < k; d++)
        nan = weft_expand_dims(cx, nan, -1);
    return weft_where(cx, nan, weft_const_f64(cx, NAN), y);
}

/* y ([rest..., k dims]) laid out as NumPy's: q's dims first, then a's
 * without its axis (kept as 1 where keepdims, every axis of a for all). */
static weft_value *numpy_layout(weft_ctx *cx, const sorted_rows *r, weft_value *y, int k)
{
    int rest = r->rank - 1, from[WEFT_MAX_RANK], to[WEFT_MAX_RANK];
    for (int d = 0; d < k; d++) {
        from[d] = rest + d;
        to[d] = d;
    }
    if (k > 0 && rest > 0)
        y = weft_moveaxis(cx, y, from, to, (size_t)k);
    for (int d = 0; d < r->kept; d++)
        y = weft_expand_dims(cx, y, k + r->axis);
    return y;
}

/* NumPy's _lerp of a and b at t (f64): a + (b - a) t below one half,
 * b - (b - a)(1 - t) from it, b - a taken in the rows' dtype as NumPy
 * subtracts them.  Where an infinity makes that NaN (inf - inf), the
 * other form, then a itself where a == b, as NumPy's interp does it. */
static weft_value *lerp(weft_ctx *cx, weft_value *a, weft_value *b, weft_value *t)
{
    weft_value *diff = weft_cast(cx, weft_sub(cx, b, a), WEFT_F64);
    weft_value *a64 = weft_cast(cx, a, WEFT_F64), *b64 = weft_cast(cx, b, WEFT_F64);
    weft_value *below = weft_add(cx, a64, weft_mul(cx, diff, t));
    weft_value *above = weft_sub(cx, b64, weft_mul(cx, diff, weft_sub(cx, weft_const_f64(cx, 1),
                                                                      t)));
    weft_value *high = weft_ge(cx, t, weft_const_f64(cx, 0.5));
    weft_value *y = weft_where(cx, high, above, below);
    y = weft_where(cx, weft_is_nan(cx, y), weft_where(cx, high, below, above), y);
    weft_value *same = weft_logical_and(cx, weft_eq(cx, a, b), weft_is_nan(cx, y));
    return weft_where(cx, same, a64, y);
}

/* NumPy's virtual index of the Hyndman and Fan methods of parameters
 * alpha and beta: n q + (alpha + q (1 - alpha - beta)) - 1, its order. */
static weft_value *hyndman_fan(weft_ctx *cx, weft_value *n, weft_value *q, double alpha,
                               double beta)
{
    weft_value *shift = weft_add(cx, weft_const_f64(cx, alpha),
                                 weft_mul(cx, q, weft_const_f64(cx, 1.0 - alpha - beta)));
    return weft_sub(cx, weft_add(cx, weft_mul(cx, n, q), shift), weft_const_f64(cx, 1));
}

/* NumPy's _discret_interpolation_to_boundaries: the i64 index floor(at)
 * where at is whole (closest: and floor(at) even), else the next one,
 * clipped below at 0. */
static weft_value *discrete_index(weft_ctx *cx, weft_value *at, bool closest)
{
    weft_value *below = weft_floor(cx, at), *zero = weft_const_f64(cx, 0);
    weft_value *on = weft_eq(cx, weft_sub(cx, at, below), zero);
    if (closest)
        on = weft_logical_and(cx, on, weft_eq(cx, weft_mod(cx, below, weft_const_f64(cx, 2)),
                                              zero));
    weft_value *i = weft_where(cx, on, below, weft_add(cx, below, weft_const_f64(cx, 1)));
    return weft_cast(cx, weft_maximum(cx, i, zero), WEFT_I64);
}

/* NumPy's quantile of the sorted rows at q (f64 in [0, 1], rank k),
 * [rest..., q's dims]: the rows' elements for the methods that pick one,
 * else f64. */
static weft_value *quantile_of(weft_ctx *cx, const sorted_rows *r, weft_value *q, int k,
                               weft_quantile_method method)
{
    weft_value *last = weft_cast(cx, last_for(cx, r, k), WEFT_F64);
    weft_value *n = weft_add(cx, last, weft_const_f64(cx, 1));
    weft_value *at = weft_mul(cx, q, last);   /* NumPy's virtual index, (n - 1) q */
    weft_value *nq_1 = weft_sub(cx, weft_mul(cx, n, q), weft_const_f64(cx, 1));
    switch (method) {
    case WEFT_QUANTILE_LOWER:
        return take(cx, r, weft_cast(cx, weft_floor(cx, at), WEFT_I64));
    case WEFT_QUANTILE_HIGHER:
        return take(cx, r, weft_cast(cx, weft_ceil(cx, at), WEFT_I64));
    case WEFT_QUANTILE_NEAREST:   /* np.around: halves to even */
        return take(cx, r, weft_cast(cx, weft_round(cx, at), WEFT_I64));
    case WEFT_QUANTILE_INVERTED_CDF:
        return take(cx, r, discrete_index(cx, nq_1, false));
    case WEFT_QUANTILE_CLOSEST_OBSERVATION:
        return take(cx, r, discrete_index(cx, weft_sub(cx, nq_1, weft_const_f64(cx, 0.5)), true));
    case WEFT_QUANTILE_MIDPOINT:
        at = weft_mul(cx, weft_const_f64(cx, 0.5), weft_add(cx, weft_floor(cx, at),
                                                             weft_ceil(cx, at)));
        break;
    case WEFT_QUANTILE_AVERAGED_INVERTED_CDF: at = nq_1; break;
    case WEFT_QUANTILE_INTERPOLATED_INVERTED_CDF: at = hyndman_fan(cx, n, q, 0, 1); break;
    case WEFT_QUANTILE_HAZEN: at = hyndman_fan(cx, n, q, 0.5, 0.5); break;
    case WEFT_QUANTILE_WEIBULL: at = hyndman_fan(cx, n, q, 0, 0); break;
    case WEFT_QUANTILE_MEDIAN_UNBIASED: at = hyndman_fan(cx, n, q, 1 / 3.0, 1 / 3.0); break;
    case WEFT_QUANTILE_NORMAL_UNBIASED: at = hyndman_fan(cx, n, q, 3 / 8.0, 3 / 8.0); break;
    case WEFT_QUANTILE_LINEAR: break;
    }
    /* NumPy's _get_indexes: from the last index on, both neighbours are
     * the last element (NumPy's t there, at + 1, meets a zero difference
     * as weft's at - lo = 0 does); below 0 both are the first. */
    weft_value *zero = weft_const_f64(cx, 0);
    weft_value *top = weft_ge(cx, at, last), *under = weft_lt(cx, at, zero);
    weft_value *below_f = weft_floor(cx, at);
    weft_value *lo = weft_where(cx, top, last, weft_where(cx, under, zero, below_f));
    weft_value *hi = weft_where(cx, top, last, weft_where(cx, under, zero,
                                                          weft_add(cx, below_f,
                                                                   weft_const_f64(cx, 1))));
    weft_value *t = weft_sub(cx, at, lo);
    if (method == WEFT_QUANTILE_MIDPOINT)   /* 0.5 between two, 0 on one */
        t = weft_where(cx, weft_eq(cx, weft_floor(cx, at), at), zero, weft_const_f64(cx, 0.5));
    if (method == WEFT_QUANTILE_AVERAGED_INVERTED_CDF)   /* the next one, or the mean of two */
        t = weft_where(cx, weft_eq(cx, t, zero), weft_const_f64(cx, 0.5), weft_const_f64(cx, 1));
    return lerp(cx, take(cx, r, weft_cast(cx, lo, WEFT_I64)),
                take(cx, r, weft_cast(cx, hi, WEFT_I64)), t);
}

/* q as f64, checked to be in [0, 1] ([0, 100] for percentile) when
 * the function runs; its rank must be known while tracing. */
static weft_value *checked_q(weft_ctx *cx, const char *fn, weft_value *q, double scale, int *k)
{
    if (!weft__ops_number(cx, fn, "q", q))
        return NULL;
    if ((*k = weft__ops_known_rank(cx, fn, "q", q)) < 0)
        return NULL;
    weft_value *f = weft_cast(cx, q, WEFT_F64);
    if (scale != 1)   /* NumPy's percentile: q / 100, then checked */
        f = weft_truediv(cx, f, weft_const_f64(cx, scale));
    weft_value *ok = weft_logical_and(cx, weft_ge(cx, f, weft_const_f64(cx, 0)),
                                      weft_le(cx, f, weft_const_f64(cx, 1)));
    return weft__ops_checkf(cx, f, ok, "%s: q is not in [0, %g]", fn, scale);
}

/* The quantile (scale 1) or percentile (100) of a, its NaNs skipped for
 * the nan forms. */
static weft_value *quantile(weft_ctx *cx, const char *fn, weft_value *a, weft_value *q,
                            double scale, int axis, weft_quantile_method method, bool keepdims,
                            bool skip_nan)
{
    weft_value *in[2] = { a, q };
    if (!weft__op_enter(cx, fn, in, 2))
        return NULL;
    if ((unsigned)method > WEFT_QUANTILE_NORMAL_UNBIASED)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: method %d is not a weft_quantile_method",
                              fn, (int)method);
    int k = 0;
    sorted_rows r;
    weft_value *qf = checked_q(cx, fn, q, scale, &k);
    if (!qf || !sort_rows(cx, fn, a, axis, keepdims, &r))
        return NULL;
    if (r.rank - 1 + k > WEFT_MAX_RANK)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: q's rank %d and a's %d make a result of "
                              "rank over %d", fn, k, r.rank, WEFT_MAX_RANK);
    if (skip_nan)
        skip_nans(cx, &r);
    bool picks = method == WEFT_QUANTILE_LOWER || method == WEFT_QUANTILE_HIGHER ||
                 method == WEFT_QUANTILE_NEAREST || method == WEFT_QUANTILE_INVERTED_CDF ||
                 method == WEFT_QUANTILE_CLOSEST_OBSERVATION;
    weft_dtype dt = picks ? weft__value_spec(a)->dtype : r.dtype;
    weft_value *y = nan_rows(cx, &r, quantile_of(cx, &r, qf, k, method), k);
    return numpy_layout(cx, &r, weft__ops_as_dtype(cx, y, dt), k);
}

weft_value *weft_quantile(weft_ctx *cx, weft_value *a, weft_value *q, int axis,
                          weft_quantile_method method, bool keepdims)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(quantile(cx, "weft_quantile", a, q, 1, axis, method, keepdims, false));
}

weft_value *weft_percentile(weft_ctx *cx, weft_value *a, weft_value *q, int axis,
                            weft_quantile_method method, bool keepdims)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(quantile(cx, "weft_percentile", a, q, 100, axis, method, keepdims, false));
}

weft_value *weft_nanquantile(weft_ctx *cx, weft_value *a, weft_value *q, int axis,
                             weft_quantile_method method, bool keepdims)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(quantile(cx, "weft_nanquantile", a, q, 1, axis, method, keepdims, true));
}

weft_value *weft_nanpercentile(weft_ctx *cx, weft_value *a, weft_value *q, int axis,
                               weft_quantile_method method, bool keepdims)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(quantile(cx, "weft_nanpercentile", a, q, 100, axis, method, keepdims,
                               true));
}

/* NumPy's median: the middle element, or the mean of the middle two
 * ((lo + hi) / 2 in the float dtype, as np.mean of them); of each row's
 * numbers for the nan form. */
static weft_value *median(weft_ctx *cx, const char *fn, weft_value *a, int axis, bool keepdims,
                          bool skip_nan)
{
    sorted_rows r;
    if (!weft__op_enter(cx, fn, &a, 1) || !sort_rows(cx, fn, a, axis, keepdims, &r))
        return NULL;
    if (skip_nan)
        skip_nans(cx, &r);
    weft_value *two = weft_const_i64(cx, 2);
    weft_value *lo_i = weft_floordiv(cx, r.last, two);
    weft_value *hi_i = weft_floordiv(cx, weft_add(cx, r.last, weft_const_i64(cx, 1)), two);
    weft_value *lo = weft__ops_as_dtype(cx, take(cx, &r, lo_i), r.dtype);
    weft_value *hi = weft__ops_as_dtype(cx, take(cx, &r, hi_i), r.dtype);
    weft_value *mean = weft_truediv(cx, weft_add(cx, lo, hi), weft_const_f64(cx, 2));
    weft_value *y = weft_where(cx, weft_eq(cx, lo_i, hi_i), lo, mean);
    return numpy_layout(cx, &r, nan_rows(cx, &r, y, 0), 0);
}

weft_value *weft_median(weft_ctx *cx, weft_value *a, int axis, bool keepdims)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(median(cx, "weft_median", a, axis, keepdims, false));
}

weft_value *weft_nanmedian(weft_ctx *cx, weft_value *a, int axis, bool keepdims)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(median(cx, "weft_nanmedian", a, axis, keepdims, true));
}
