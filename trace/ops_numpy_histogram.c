/* NumPy's histogram (equal bins or explicit edges), histogramdd and
 * histogram2d, composed of reductions, gathers, searchsorted and
 * weft_bincount in NumPy 1.24's steps: the outer edges (given, or the
 * minimum and maximum when the function runs), the edges as np.linspace
 * makes them, each value's bin from its offset corrected by one against
 * the edges (equal bins) or by binary search among them, the last bin
 * closed. */
#include "trace/control.h"
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
 * finite when the function runs (the message naming fn and what),
 * widened by 1/2 where they are equal. */
static outer_edges found_edges(weft_ctx *cx, const char *fn, const char *what,
                               weft_value *a)
{
    weft_value *min = weft_reduce(cx, WEFT_R_MIN, a, NULL, 0, false);
    weft_value *max = weft_reduce(cx, WEFT_R_MAX, a, NULL, 0, false);
    weft_value *none = weft_gt(cx, min, max);
    weft_value *lo = weft_where(cx, none, weft_const_f64(cx, 0), weft_cast(cx, min, WEFT_F64));
    weft_value *hi = weft_where(cx, none, weft_const_f64(cx, 1), weft_cast(cx, max, WEFT_F64));
    weft_value *finite = weft_logical_and(cx, weft_is_finite(cx, lo), weft_is_finite(cx, hi));
    lo = weft__ops_checkf(cx, lo, finite, "%s: the range of %s is not finite", fn, what);
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
    outer_edges e = range ? given_edges(cx, range) : found_edges(cx, fn, "a", a);
    weft_value *edges = bin_edges(cx, &e, bins, dt);
    weft_value *at = bin_of(cx, x, &e, edges, bins, dt);
    outs[0] = weft_bincount(cx, at, NULL, bins, bins, WEFT_I64);
    outs[1] = edges;
    if (weft_ctx_status(cx) != 0)
        outs[0] = outs[1] = NULL;
    return weft_ctx_status(cx);
}

/* ---- explicit edges, and several dims ---- */

/* Each value's bin among edges (a vector of nb + 1 that do not
 * decrease): the index of the last edge at or below it (searchsorted's
 * side right, as np.histogramdd's), a value on the last edge in the last
 * bin (closed); -1 below, nb above and for NaN. */
static weft_value *bin_by_edges(weft_ctx *cx, weft_value *edges, weft_value *x)
{
    weft_value *one = weft_const_i64(cx, 1);
    weft_value *nb = weft_sub(cx, weft__ops_dim0(cx, edges), one);
    weft_value *i = weft_sub(cx, weft_searchsorted(cx, edges, x, true), one);
    weft_value *last = weft__ops_axis_slice(cx, edges, 0, -1, WEFT_END);
    return weft_where(cx, weft_eq(cx, x, last), weft_sub(cx, nb, one), i);
}

/* edges checked, when the call runs, to be one or more numbers that do
 * not decrease (NumPy's ValueError); the failure names fn. */
static weft_value *checked_edges(weft_ctx *cx, const char *fn, weft_value *edges)
{
    weft_value *nan = weft_reduce(cx, WEFT_R_ANY, weft_is_nan(cx, edges), NULL, 0, false);
    weft_value *some = weft_gt(cx, weft__ops_dim0(cx, edges), weft_const_i64(cx, 0));
    weft_value *ok = weft_logical_and(cx, weft_is_non_decreasing(cx, edges),
                                      weft_logical_and(cx, some, weft_logical_not(cx, nan)));
    return weft__ops_checkf(cx, edges, ok, "%s: edges are empty, NaN or decrease", fn);
}

weft_value *weft_histogram_by_edges(weft_ctx *cx, weft_value *a, weft_value *edges,
                                    weft_value *weights)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_histogram_by_edges";
    weft_value *in[3] = { a, edges, weights ? weights : a };
    if (!weft__op_enter(cx, fn, in, 3) || !weft__ops_number(cx, fn, "a", a) ||
        !weft__ops_number(cx, fn, "edges", edges) ||
        (weights && !weft__ops_number(cx, fn, "weights", weights)))
        return NULL;
    const weft_spec *es = weft__value_spec(edges);
    if (es->rank != 1) {
        char s[WEFT__SPEC_STR_MAX];
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: edges %s is not a vector", fn,
                              weft__spec_str(es, s, sizeof s));
    }
    weft_dtype dt = weft__ops_promoted_dtype(in, 2);
    weft_value *e = checked_edges(cx, fn, weft__ops_as_dtype(cx, edges, dt));
    weft_value *x = weft__ops_as_dtype(cx, weft_ravel(cx, a), dt);
    weft_value *nb = weft_sub(cx, weft__ops_dim0(cx, e), weft_const_i64(cx, 1));
    weft_value *i = bin_by_edges(cx, e, x);
    /* Values outside (and NaN) go to bin nb, which is cut off: one
     * element more of bin nb (weight 0) makes the counts nb + 1 long. */
    weft_value *inside = weft_logical_and(cx, weft_ge(cx, i, weft_const_i64(cx, 0)),
                                          weft_lt(cx, i, nb));
    static const int64_t one = 1;
    weft_value *idx[2] = { weft_where(cx, inside, i, nb), weft_reshape(cx, nb, 1, &one) };
    weft_value *w = NULL;
    weft_dtype cdt = WEFT_I64;
    if (weights) {
        weft_value *flat = weft_ravel(cx, weights);
        flat = weft_check(cx, flat, weft_eq(cx, weft__ops_dim0(cx, flat), weft__ops_dim0(cx, x)),
                          "weft_histogram_by_edges: weights and a differ in size");
        if (!flat)   /* eagerly the check fails at once */
            return NULL;
        /* Read at a's positions, so that bincount's shapes agree while the
         * call runs and the check above is what fails. */
        flat = weft_gather(cx, flat, weft__ops_axis0_range(cx, x), 0);
        cdt = weft__value_spec(flat)->dtype == WEFT_BOOL ? WEFT_I64 : weft__value_spec(flat)->dtype;
        weft_value *ws[2] = { weft__ops_as_dtype(cx, flat, cdt), weft_fill(cx, cdt, 1, &one, 0) };
        w = weft_concat(cx, ws, 2, 0);
    }
    weft_value *counts = weft_bincount(cx, weft_concat(cx, idx, 2, 0), w, 0, -1, cdt);
    return WEFT__KEEP(weft__ops_axis_slice(cx, counts, 0, 0, -1));
}

/* np.histogramdd's bins of column d of sample [N, D], with its outlier
 * bins: 0 below, bins + 1 above and for NaN; *edges gets its edges (f64). */
static weft_value *column_bins(weft_ctx *cx, const char *fn, weft_value *sample, int d,
                               int64_t bins, const double *range, weft_value **edges)
{
    weft_value *x = weft__ops_as_dtype(cx, weft__ops_column(cx, sample, d), WEFT_F64);
    outer_edges e = range ? given_edges(cx, range) : found_edges(cx, fn, "sample", x);
    *edges = bin_edges(cx, &e, bins, WEFT_F64);
    return weft_add(cx, bin_by_edges(cx, *edges, x), weft_const_i64(cx, 1));
}

/* np.histogramdd's last steps: the weights (sample's length, f64; NULL
 * for none) summed by flat_bin among the nbin[0..dims) bins with their
 * outliers (size of them), the outliers cut off. */
static weft_value *counted(weft_ctx *cx, const char *fn, weft_value *sample, weft_value *flat_bin,
                           weft_value *weights, size_t dims, const int64_t *nbin, int64_t size)
{
    weft_value *w = NULL;
    if (weights) {
        w = weft__ops_as_dtype(cx, weft_ravel(cx, weights), WEFT_F64);
        weft_value *same = weft_eq(cx, weft__ops_dim0(cx, w), weft__ops_dim(cx, sample, 0));
        w = weft__ops_checkf(cx, w, same, "%s: weights and sample differ in length", fn);
        /* Read at the samples' positions, as weft_histogram_by_edges'. */
        w = weft_gather(cx, w, weft__ops_axis0_range(cx, sample), 0);
    }
    weft_value *hist = weft_bincount(cx, flat_bin, w, size, size, WEFT_F64);
    hist = weft_reshape(cx, hist, (int)dims, nbin);
    int64_t begin[WEFT_MAX_RANK], end[WEFT_MAX_RANK];
    for (size_t d = 0; d < dims; d++) {
        begin[d] = 1;
        end[d] = -1;
    }
    return weft_slice(cx, hist, begin, end, NULL);
}

/* The count D of sample's columns where sample is [N, D] with D in [1,
 * WEFT_MAX_RANK] known while tracing; 0 otherwise. */
static size_t sample_dims(const weft_value *sample)
{
    const weft_spec *s = sample ? weft__value_spec(sample) : NULL;
    return s && s->rank == 2 && s->dims[1] > 0 && s->dims[1] <= WEFT_MAX_RANK
               ? (size_t)s->dims[1] : 0;
}

int weft_histogramdd(weft_ctx *cx, weft_value *sample, const int64_t *bins,
                     const double (*range)[2], weft_value *weights, weft_value **outs)
{
    static const char fn[] = "weft_histogramdd";
    size_t dims = sample_dims(sample);
    weft_value *in[2] = { sample, weights };
    int rc = weft__ctx_enter_int(cx, fn, in, weights ? 2 : 1, outs, dims + 1);
    if (rc < 0)
        return rc;
    char ss[WEFT__SPEC_STR_MAX];
    if (dims == 0)
        return weft__ctx_failf(cx, WEFT_ESHAPE, "%s: sample %s is not [N, D] with D in [1, %d] "
                               "known while tracing", fn,
                               weft__spec_str(weft__value_spec(sample), ss, sizeof ss),
                               WEFT_MAX_RANK);
    if (!bins)
        return weft__ctx_failf(cx, WEFT_EINVAL, "%s: bins is NULL", fn);
    if (!weft__ops_number(cx, fn, "sample", sample) ||
        (weights && !weft__ops_number(cx, fn, "weights", weights)))
        return weft_ctx_status(cx);
    int64_t size = 1, nbin[WEFT_MAX_RANK];
    for (size_t d = 0; d < dims; d++) {
        if (bins[d] < 1 || bins[d] > INT32_MAX)
            return weft__ctx_failf(cx, WEFT_EINVAL, "%s: bins[%zu] %lld is not in [1, 2^31)", fn,
                                   d, (long long)bins[d]);
        if (range && !(isfinite(range[d][0]) && isfinite(range[d][1]) &&
                       range[d][0] <= range[d][1]))
            return weft__ctx_failf(cx, WEFT_EINVAL, "%s: range[%zu] [%g, %g] is not finite with "
                                   "min <= max", fn, d, range[d][0], range[d][1]);
        nbin[d] = bins[d] + 2;
        if (size > (INT64_C(1) << 40) / nbin[d])
            return weft__ctx_failf(cx, WEFT_EINVAL, "%s: the histogram holds over 2^40 bins", fn);
        size *= nbin[d];
    }
    WEFT__SCOPE_OUTS(cx, outs, dims + 1);
    /* NumPy's flat index among the bins with outliers, then bincount. */
    weft_value *flat_bin = NULL;
    for (size_t d = 0; d < dims; d++) {
        weft_value *b = column_bins(cx, fn, sample, (int)d, bins[d], range ? range[d] : NULL,
                                    &outs[1 + d]);
        flat_bin = flat_bin ? weft_add(cx, weft_mul(cx, flat_bin, weft_const_i64(cx, nbin[d])), b)
                            : b;
    }
    outs[0] = counted(cx, fn, sample, flat_bin, weights, dims, nbin, size);
    rc = weft_ctx_status(cx);
    if (rc < 0)
        for (size_t k = 0; k <= dims; k++)
            outs[k] = NULL;
    return rc;
}

int weft_histogram2d(weft_ctx *cx, weft_value *x, weft_value *y, const int64_t *bins,
                     const double (*range)[2], weft_value *weights, weft_value **outs)
{
    static const char fn[] = "weft_histogram2d";
    weft_value *in[3] = { x, y, weights };
    int rc = weft__ctx_enter_int(cx, fn, in, weights ? 3 : 2, outs, 3);
    if (rc < 0)
        return rc;
    for (int k = 0; k < 2; k++)
        if (weft__value_spec(in[k])->rank != 1) {
            char s[WEFT__SPEC_STR_MAX];
            return weft__ctx_failf(cx, WEFT_ESHAPE, "%s: %s %s is not a vector", fn,
                                   k ? "y" : "x", weft__spec_str(weft__value_spec(in[k]), s,
                                                                 sizeof s));
        }
    WEFT__SCOPE_OUTS(cx, outs, 3);
    weft_value *xy[2] = { weft__ops_as_dtype(cx, x, WEFT_F64),
                          weft__ops_as_dtype(cx, y, WEFT_F64) };
    return weft_histogramdd(cx, weft_stack(cx, xy, 2, 1), bins, range, weights, outs);
}

weft_value *weft_histogram_density(weft_ctx *cx, weft_value *hist, weft_value *edges)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_histogram_density";
    weft_value *in[2] = { hist, edges };
    if (!weft__op_enter(cx, fn, in, 2) || !weft__ops_number(cx, fn, "hist", hist) ||
        !weft__ops_number(cx, fn, "edges", edges))
        return NULL;
    const weft_spec *hs = weft__value_spec(hist), *es = weft__value_spec(edges);
    char s1[WEFT__SPEC_STR_MAX], s2[WEFT__SPEC_STR_MAX];
    static const char lengths[] = "weft_histogram_density: edges are not one longer than hist";
    if (hs->rank != 1 || es->rank != 1 ||
        (hs->dims[0] >= 0 && es->dims[0] >= 0 && es->dims[0] != hs->dims[0] + 1))
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: hist %s and edges %s are not vectors, edges "
                              "one longer", fn, weft__spec_str(hs, s1, sizeof s1),
                              weft__spec_str(es, s2, sizeof s2));
    if (hs->dims[0] < 0 || es->dims[0] < 0) {
        weft_value *n = weft_add(cx, weft__ops_dim0(cx, hist), weft_const_i64(cx, 1));
        edges = weft_check(cx, edges, weft_eq(cx, weft__ops_dim0(cx, edges), n), lengths);
    }
    /* NumPy's n / db / n.sum(), the widths taken in edges' dtype. */
    weft_value *widths = weft_sub(cx, weft__ops_axis_slice(cx, edges, 0, 1, WEFT_END),
                                  weft__ops_axis_slice(cx, edges, 0, 0, -1));
    weft_value *total = weft_cast(cx, weft_sum(cx, hist, WEFT_ALL_AXES), WEFT_F64);
    weft_value *per_width = weft_truediv(cx, weft_cast(cx, hist, WEFT_F64),
                                         weft_cast(cx, widths, WEFT_F64));
    return WEFT__KEEP(weft_truediv(cx, per_width, total));
}

weft_value *weft_histogramdd_by_edges(weft_ctx *cx, weft_value *sample, weft_value *const *edges,
                                      size_t n_edges, weft_value *weights)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_histogramdd_by_edges";
    weft_value *in[2] = { sample, weights };
    if (!weft__op_enter_optional(cx, fn, in, 1, 2))
        return NULL;
    size_t dims = sample_dims(sample);
    char ss[WEFT__SPEC_STR_MAX];
    if (dims == 0 || n_edges != dims)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: sample %s is not [N, D] with D in [1, %d] "
                              "known while tracing and one edges vector per column (%zu given)",
                              fn, weft__spec_str(weft__value_spec(sample), ss, sizeof ss),
                              WEFT_MAX_RANK, n_edges);
    if (!edges)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: edges is NULL", fn);
    if (!weft__ctx_check_inputs(cx, fn, edges, n_edges) ||
        !weft__ops_number(cx, fn, "sample", sample) ||
        (weights && !weft__ops_number(cx, fn, "weights", weights)))
        return NULL;
    int64_t size = 1, nbin[WEFT_MAX_RANK];
    for (size_t d = 0; d < dims; d++) {
        const weft_spec *es = weft__value_spec(edges[d]);
        if (!weft__ops_number(cx, fn, "edges", edges[d]))
            return NULL;
        if (es->rank != 1 || es->dims[0] < 1)
            return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: edges[%zu] %s is not a vector of 1 or "
                                  "more known while tracing", fn, d,
                                  weft__spec_str(es, ss, sizeof ss));
        nbin[d] = es->dims[0] + 1;   /* the bins and the two outliers' */
        if (size > (INT64_C(1) << 40) / nbin[d])
            return weft__ctx_fail(cx, WEFT_EINVAL, "%s: the histogram holds over 2^40 bins", fn);
        size *= nbin[d];
    }
    /* NumPy's flat index among the bins with outliers, then bincount. */
    weft_value *flat_bin = NULL;
    for (size_t d = 0; d < dims; d++) {
        weft_value *pair[2] = { sample, edges[d] };
        weft_dtype dt = weft__ops_promoted_dtype(pair, 2);
        weft_value *e = checked_edges(cx, fn, weft__ops_as_dtype(cx, edges[d], dt));
        weft_value *x = weft__ops_as_dtype(cx, weft__ops_column(cx, sample, (int)d), dt);
        weft_value *b = weft_add(cx, bin_by_edges(cx, e, x), weft_const_i64(cx, 1));
        flat_bin = flat_bin ? weft_add(cx, weft_mul(cx, flat_bin, weft_const_i64(cx, nbin[d])), b)
                            : b;
    }
    return WEFT__KEEP(counted(cx, fn, sample, flat_bin, weights, dims, nbin, size));
}
