/* Counting ops of include/weft/ops.h, compositions of others: in_top_k
 * (a comparison count per row), histogram_fixed_width (bincount of the
 * values' bins) and histogram_fixed_width_bins (the bins), zero_fraction, and the order tests is_non_decreasing and
 * is_strictly_increasing.  Each checks its inputs first, so that an error
 * names the public op. */
#include <math.h>

#include "runtime/iface.h"
#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

static const weft_spec *spec_of(const weft_value *v)
{
    return weft__value_spec(v);
}

static bool is_index(weft_dtype dt)
{
    return dt == WEFT_I32 || dt == WEFT_I64;
}

weft_value *weft_in_top_k(weft_ctx *cx, weft_value *targets, weft_value *predictions, int64_t k)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_in_top_k";
    weft_value *in[2] = { targets, predictions };
    if (!weft__op_enter(cx, fn, in, 2))
        return NULL;
    const weft_spec *ts = spec_of(targets), *ps = spec_of(predictions);
    char st[WEFT__SPEC_STR_MAX], sp[WEFT__SPEC_STR_MAX];
    weft__spec_str(ts, st, sizeof st);
    weft__spec_str(ps, sp, sizeof sp);
    if (!is_index(ts->dtype) || (ps->dtype != WEFT_F32 && ps->dtype != WEFT_F64))
        return weft__ctx_fail(cx, WEFT_EDTYPE, "%s: targets %s are not i32 or i64, or "
                              "predictions %s not f32 or f64", fn, st, sp);
    if (ts->rank != 1 || ps->rank != 2 || ps->dims[1] == WEFT_DIM_ANY ||
        (ts->dims[0] != ps->dims[0] && ts->dims[0] != WEFT_DIM_ANY &&
         ps->dims[0] != WEFT_DIM_ANY))
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: targets %s and predictions %s are not "
                              "[batch] and [batch, classes] (classes known while tracing)",
                              fn, st, sp);
    if (k < 0)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: k %lld is negative", fn, (long long)k);
    /* TensorFlow's rule: target t of a row is in its top k when fewer
     * than k predictions of the row are greater than prediction t (ties
     * at the boundary are all in), and never when t is out of range or
     * a prediction of the row is not finite. */
    int64_t classes = ps->dims[1];
    weft_value *t = weft_cast(cx, targets, WEFT_I64);
    weft_value *valid = weft_logical_and(
        cx, weft__op_binary(cx, WEFT__OP_GE, fn, t, weft_const_i64(cx, 0)),
        weft__op_binary(cx, WEFT__OP_LT, fn, t, weft_const_i64(cx, classes)));
    weft_value *safe = weft_where(cx, valid, t, weft_const_i64(cx, 0));
    weft_value *pick = weft_gather_ex(cx, predictions, weft_expand_dims(cx, safe, -1), 1, 1);
    weft_value *above = weft__op_binary(cx, WEFT__OP_GT, fn, predictions, pick);
    weft_value *count = weft_reduce(cx, WEFT_R_SUM, weft_cast(cx, above, WEFT_I64),
                                    (const int[]){ -1 }, 1, false);
    weft_value *in_k = weft__op_binary(cx, WEFT__OP_LT, fn, count, weft_const_i64(cx, k));
    weft_value *finite = weft_reduce(cx, WEFT_R_ALL,
                                     weft__op_unary(cx, WEFT__OP_IS_FINITE, fn, predictions),
                                     (const int[]){ -1 }, 1, false);
    return WEFT__KEEP(weft_logical_and(cx, weft_logical_and(cx, in_k, finite), valid));
}

/* Checks the arguments of the fixed-width histograms, naming fn. */
static bool histogram_checks(weft_ctx *cx, const char *fn, weft_value *values, double lo,
                             double hi, int64_t nbins, weft_dtype dtype)
{
    if (!weft__op_enter(cx, fn, &values, 1))
        return false;
    const weft_spec *vs = spec_of(values);
    char sv[WEFT__SPEC_STR_MAX];
    if (vs->dtype == WEFT_BOOL) {
        weft__ctx_fail(cx, WEFT_EDTYPE, "%s: values %s are not numbers", fn,
                       weft__spec_str(vs, sv, sizeof sv));
        return false;
    }
    if (!is_index(dtype)) {
        weft__ctx_fail(cx, WEFT_EDTYPE, "%s: dtype %d is not i32 or i64", fn, (int)dtype);
        return false;
    }
    if (!(lo < hi) || !isfinite(lo) || !isfinite(hi)) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: the range [%g, %g] is not finite with lo < hi", fn,
                       lo, hi);
        return false;
    }
    if (nbins <= 0) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: nbins %lld is not positive", fn, (long long)nbins);
        return false;
    }
    return true;
}

/* TensorFlow's bins, i64: floor((v - lo) / (hi - lo) * nbins), values
 * below lo in the first bin and at or above hi in the last; a NaN gets
 * nan_bin.  In f64 for every dtype of values. */
static weft_value *fixed_width_bins(weft_ctx *cx, const char *fn, weft_value *values, double lo,
                                    double hi, int64_t nbins, int64_t nan_bin)
{
    weft_value *v = weft_cast(cx, values, WEFT_F64);
    weft_value *scaled = weft__op_binary(
        cx, WEFT__OP_MUL, fn,
        weft__op_binary(cx, WEFT__OP_SUB, fn, v, weft_const_f64(cx, lo)),
        weft_const_f64(cx, (double)nbins / (hi - lo)));
    weft_value *clipped = weft_clip(cx, weft__op_unary(cx, WEFT__OP_FLOOR, fn, scaled),
                                    weft_const_f64(cx, 0.0), weft_const_f64(cx, (double)(nbins - 1)));
    return weft_where(cx, weft__op_unary(cx, WEFT__OP_IS_NAN, fn, v), weft_const_i64(cx, nan_bin),
                      weft_cast(cx, clipped, WEFT_I64));
}

weft_value *weft_histogram_fixed_width(weft_ctx *cx, weft_value *values, double lo, double hi,
                                       int64_t nbins, weft_dtype dtype)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_histogram_fixed_width";
    if (!histogram_checks(cx, fn, values, lo, hi, nbins, dtype))
        return NULL;
    /* A NaN counts in no bin: bin nbins, which bincount's maxlength drops. */
    weft_value *bins = fixed_width_bins(cx, fn, values, lo, hi, nbins, nbins);
    return WEFT__KEEP(weft_bincount(cx, bins, NULL, nbins, nbins, dtype));
}

weft_value *weft_histogram_fixed_width_bins(weft_ctx *cx, weft_value *values, double lo,
                                            double hi, int64_t nbins, weft_dtype dtype)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_histogram_fixed_width_bins";
    if (!histogram_checks(cx, fn, values, lo, hi, nbins, dtype))
        return NULL;
    weft_value *bins = fixed_width_bins(cx, fn, values, lo, hi, nbins, -1);
    return WEFT__KEEP(dtype == WEFT_I64 ? bins : weft_cast(cx, bins, dtype));
}

/* tf.math.zero_fraction: the mean of x == 0 over every element, f32 (NaN
 * for no elements, as a mean of nothing). */
weft_value *weft_zero_fraction(weft_ctx *cx, weft_value *x)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_zero_fraction";
    if (!weft__op_enter(cx, fn, &x, 1))
        return NULL;
    weft_value *zero = weft__op_binary(cx, WEFT__OP_EQ, fn, x, weft_const_i64(cx, 0));
    return WEFT__KEEP(weft_reduce(cx, WEFT_R_MEAN, weft_cast(cx, zero, WEFT_F32), NULL, 0, false));
}

/* Every element of x (flattened) against the one before it by cmp: a bool
 * scalar, true for fewer than two elements. */
static weft_value *ordered(weft_ctx *cx, const char *fn, weft_value *x, weft__op cmp)
{
    if (!weft__op_enter(cx, fn, &x, 1))
        return NULL;
    if (spec_of(x)->dtype == WEFT_BOOL) {
        char ss[WEFT__SPEC_STR_MAX];
        return weft__ctx_fail(cx, WEFT_EDTYPE, "%s: x %s is bool, not a number", fn,
                              weft__spec_str(spec_of(x), ss, sizeof ss));
    }
    int64_t flat = -1;
    weft_value *v = weft_reshape(cx, x, 1, &flat);
    const int64_t one = 1, last = -1;
    weft_value *next = weft_slice(cx, v, &one, NULL, NULL);
    weft_value *here = weft_slice(cx, v, NULL, &last, NULL);
    return weft_reduce(cx, WEFT_R_ALL, weft__op_binary(cx, cmp, fn, next, here), NULL, 0, false);
}

weft_value *weft_is_non_decreasing(weft_ctx *cx, weft_value *x)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(ordered(cx, "weft_is_non_decreasing", x, WEFT__OP_GE));
}

weft_value *weft_is_strictly_increasing(weft_ctx *cx, weft_value *x)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(ordered(cx, "weft_is_strictly_increasing", x, WEFT__OP_GT));
}
