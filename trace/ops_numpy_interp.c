/* NumPy's interp and digitize composed of weft_searchsorted, gathers and
 * elementwise ops: each x finds its place among the points (bins) when the
 * function runs, so new points never retrace.  The gradients of interp
 * come from the parts. */
#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

#include <math.h>

/* A vector of points, its length at least 1 where known while tracing. */
static bool points(weft_ctx *cx, const char *fn, const char *name, weft_value *v)
{
    const weft_spec *s = weft__value_spec(v);
    if (s->rank == 1 && s->dims[0] != 0)
        return true;
    char ss[WEFT__SPEC_STR_MAX];
    weft__ctx_fail(cx, WEFT_ESHAPE, "%s: %s %s is not a vector of 1 or more", fn, name,
                   weft__spec_str(s, ss, sizeof ss));
    return false;
}

/* NumPy's compiled interp between points j and j + 1 (j clamped into the
 * segments; the ends are chosen after). */
static weft_value *segment_value(weft_ctx *cx, weft_value *x, weft_value *xp, weft_value *fp,
                                 weft_value *j, weft_value *last)
{
    weft_value *zero = weft_const_i64(cx, 0);
    weft_value *j0 = weft_clip(cx, j, zero, weft_maximum(cx, weft_sub(cx, last,
                                                                      weft_const_i64(cx, 1)),
                                                         zero));
    weft_value *j1 = weft_minimum(cx, weft_add(cx, j0, weft_const_i64(cx, 1)), last);
    weft_value *x0 = weft_gather(cx, xp, j0, 0), *x1 = weft_gather(cx, xp, j1, 0);
    weft_value *y0 = weft_gather(cx, fp, j0, 0), *y1 = weft_gather(cx, fp, j1, 0);
    weft_value *slope = weft_truediv(cx, weft_sub(cx, y1, y0), weft_sub(cx, x1, x0));
    weft_value *from0 = weft_add(cx, weft_mul(cx, slope, weft_sub(cx, x, x0)), y0);
    weft_value *from1 = weft_add(cx, weft_mul(cx, slope, weft_sub(cx, x, x1)), y1);
    /* NaN one way (an infinity): the other way, then fp[j] if flat. */
    weft_value *flat = weft_logical_and(cx, weft_is_nan(cx, from1), weft_eq(cx, y0, y1));
    weft_value *y = weft_where(cx, weft_is_nan(cx, from0), weft_where(cx, flat, y0, from1),
                               from0);
    return weft_where(cx, weft_eq(cx, x, x0), y0, y);
}

/* interp's checks for fn: x, the points xp and fp (vectors of one
 * length, at least 1; a length unknown while tracing checked when the
 * call runs) and the scalars left and right (NULL for none).  On success
 * *fp is fp gated on that check; false with the context failing. */
static bool interp_operands(weft_ctx *cx, const char *fn, weft_value *x, weft_value *xp,
                            weft_value **fp, weft_value *left, weft_value *right)
{
    weft_value *in[5] = { x, xp, *fp, left, right };
    if (!weft__op_enter_optional(cx, fn, in, 3, 5) || !points(cx, fn, "xp", xp) ||
        !points(cx, fn, "fp", *fp))
        return false;
    for (int i = 3; i < 5; i++)
        if (in[i] && weft__value_spec(in[i])->rank != 0) {
            char ss[WEFT__SPEC_STR_MAX];
            weft__ctx_fail(cx, WEFT_ESHAPE, "%s: %s %s is not a scalar", fn,
                           i == 3 ? "left" : "right",
                           weft__spec_str(weft__value_spec(in[i]), ss, sizeof ss));
            return false;
        }
    int64_t nx = weft__value_spec(xp)->dims[0], nf = weft__value_spec(*fp)->dims[0];
    if (nx >= 0 && nf >= 0 && nx != nf) {
        weft__ctx_fail(cx, WEFT_ESHAPE, "%s: xp has %lld points and fp %lld", fn,
                       (long long)nx, (long long)nf);
        return false;
    }
    if (nx < 0 || nf < 0) {
        *fp = weft__ops_checkf(cx, *fp, weft_eq(cx, weft__ops_dim0(cx, xp),
                                                weft__ops_dim0(cx, *fp)),
                               "%s: xp and fp differ in length", fn);
    }
    return *fp != NULL;
}

weft_value *weft_interp(weft_ctx *cx, weft_value *x, weft_value *xp, weft_value *fp,
                        weft_value *left, weft_value *right)
{
    WEFT__SCOPE(cx);
    if (!interp_operands(cx, "weft_interp", x, xp, &fp, left, right))
        return NULL;
    x = weft_cast(cx, x, WEFT_F64);
    xp = weft_cast(cx, xp, WEFT_F64);
    fp = weft_cast(cx, fp, WEFT_F64);
    weft_value *last = weft_sub(cx, weft__ops_dim0(cx, xp), weft_const_i64(cx, 1));
    weft_value *x_last = weft_gather(cx, xp, last, 0), *y_last = weft_gather(cx, fp, last, 0);
    weft_value *lo = left ? weft_cast(cx, left, WEFT_F64)
                          : weft_gather(cx, fp, weft_const_i64(cx, 0), 0);
    weft_value *hi = right ? weft_cast(cx, right, WEFT_F64) : y_last;
    /* j: the last point at or below x (-1 for none). */
    weft_value *j = weft_sub(cx, weft_searchsorted(cx, xp, x, true), weft_const_i64(cx, 1));
    weft_value *y = segment_value(cx, x, xp, fp, j, last);
    y = weft_where(cx, weft_eq(cx, x, x_last), y_last, y);
    y = weft_where(cx, weft_gt(cx, x, x_last), hi, y);
    y = weft_where(cx, weft_lt(cx, j, weft_const_i64(cx, 0)), lo, y);
    return WEFT__KEEP(weft_where(cx, weft_is_nan(cx, x), x, y));
}

weft_value *weft_interp_periodic(weft_ctx *cx, weft_value *x, weft_value *xp, weft_value *fp,
                                 double period)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_interp_periodic";
    if (!interp_operands(cx, fn, x, xp, &fp, NULL, NULL))
        return NULL;
    if (!isfinite(period) || period == 0)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: period %g is not finite and nonzero", fn,
                              period);
    /* NumPy: x and xp modulo |period|, the points sorted by xp, then one
     * more point a period away at either end. */
    weft_value *p = weft_const_f64(cx, fabs(period));
    x = weft_mod(cx, weft_cast(cx, x, WEFT_F64), p);
    xp = weft_mod(cx, weft_cast(cx, xp, WEFT_F64), p);
    weft_value *order = weft_argsort(cx, xp, 0, false);
    xp = weft_gather(cx, xp, order, 0);
    fp = weft_gather(cx, weft_cast(cx, fp, WEFT_F64), order, 0);
    weft_value *xs[3] = { weft_sub(cx, weft__ops_axis_slice(cx, xp, 0, -1, WEFT_END), p), xp,
                          weft_add(cx, weft__ops_axis_slice(cx, xp, 0, 0, 1), p) };
    weft_value *fs[3] = { weft__ops_axis_slice(cx, fp, 0, -1, WEFT_END), fp,
                          weft__ops_axis_slice(cx, fp, 0, 0, 1) };
    return WEFT__KEEP(weft_interp(cx, x, weft_concat(cx, xs, 3, 0), weft_concat(cx, fs, 3, 0),
                                  NULL, NULL));
}

weft_value *weft_digitize(weft_ctx *cx, weft_value *x, weft_value *bins, bool right)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_digitize";
    weft_value *in[2] = { x, bins };
    if (!weft__op_enter(cx, fn, in, 2) || !weft__ops_number(cx, fn, "x", x) ||
        !weft__ops_number(cx, fn, "bins", bins))
        return NULL;
    const weft_spec *sb = weft__value_spec(bins);
    if (sb->rank != 1) {
        char ss[WEFT__SPEC_STR_MAX];
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: bins %s is not a vector", fn,
                              weft__spec_str(sb, ss, sizeof ss));
    }
    weft_dtype dt = weft__ops_promoted_dtype(in, 2);
    x = weft__ops_as_dtype(cx, x, dt);
    bins = weft__ops_as_dtype(cx, bins, dt);
    weft_value *lead = weft__ops_axis_slice(cx, bins, 0, 0, -1);
    weft_value *next = weft__ops_axis_slice(cx, bins, 0, 1, WEFT_END);
    weft_value *rising = weft_reduce(cx, WEFT_R_ALL, weft_le(cx, lead, next), NULL, 0, false);
    weft_value *falling = weft_reduce(cx, WEFT_R_ALL, weft_ge(cx, lead, next), NULL, 0, false);
    bins = weft_check(cx, bins, weft_logical_or(cx, rising, falling),
                      "weft_digitize: bins are neither increasing nor decreasing");
    if (!bins)
        return NULL;
    /* NumPy: searchsorted(bins, x, side), or for falling bins
     * len(bins) - searchsorted(bins[::-1], x, side), side 'left' if right. */
    weft_value *up = weft_searchsorted(cx, bins, x, !right);
    weft_value *down = weft_sub(cx, weft__ops_dim0(cx, bins),
                                weft_searchsorted(cx, weft_reverse(cx, bins, 0), x, !right));
    return WEFT__KEEP(weft_where(cx, rising, up, down));
}
