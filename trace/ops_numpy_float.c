/* NumPy's functions about a float's parts and neighbours: fmax and fmin
 * (the maximum and minimum that ignore NaN), modf (the fractional and
 * integral parts) and spacing (the distance to the next float away from
 * zero), composed of comparisons, where, fix, copysign and nextafter with
 * the bits of NumPy 1.24's loops. */
#include <math.h>

#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

/* fmax (greater true) or fmin: NumPy's loop, (x1 > x2 || isnan(x2)) ? x1
 * : x2, so a NaN loses to a number and equal values (zeros of both signs)
 * give x2; integers and bool are weft_maximum's / weft_minimum's. */
static weft_value *ignoring_nan(weft_ctx *cx, const char *fn, weft_value *x1, weft_value *x2,
                                bool greater)
{
    weft_value *in[2] = { x1, x2 };
    if (!weft__op_enter(cx, fn, in, 2))
        return NULL;
    weft_dtype dt = weft__ops_promoted_dtype(in, 2);
    if (!weft__dtype_is_float(dt))
        return greater ? weft_maximum(cx, x1, x2) : weft_minimum(cx, x1, x2);
    /* is_nan refuses bool: x2 in the common float dtype first. */
    weft_value *first = greater ? weft_gt(cx, x1, x2) : weft_lt(cx, x1, x2);
    weft_value *nan2 = weft_is_nan(cx, weft__ops_as_dtype(cx, x2, dt));
    return weft_where(cx, weft_logical_or(cx, first, nan2), x1, x2);
}

weft_value *weft_fmax(weft_ctx *cx, weft_value *x1, weft_value *x2)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(ignoring_nan(cx, "weft_fmax", x1, x2, true));
}

weft_value *weft_fmin(weft_ctx *cx, weft_value *x1, weft_value *x2)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(ignoring_nan(cx, "weft_fmin", x1, x2, false));
}

int weft_modf(weft_ctx *cx, weft_value *x, weft_value **outs)
{
    WEFT__SCOPE_OUTS(cx, outs, 2);
    static const char fn[] = "weft_modf";
    int rc;
    if (!weft__ops_enter_two_outs(cx, fn, &x, 1, outs, &rc))
        return rc;
    weft_dtype dt = weft__ops_float_dtype(&x, 1);
    x = weft__ops_as_dtype(cx, x, dt);
    weft_value *whole = weft_fix(cx, x);
    /* x - fix(x) is exact; C's modf gives it x's sign (-0.0 for -3.0)
     * and 0 for an infinity, where the difference is NaN. */
    weft_value *zero = weft_const_f64(cx, 0.0);   /* weak: x's dtype */
    weft_value *part = weft_where(cx, weft_is_inf(cx, x), zero, weft_sub(cx, x, whole));
    outs[0] = weft_copysign(cx, part, x);
    outs[1] = whole;
    if (weft_ctx_status(cx) != 0)
        outs[0] = outs[1] = NULL;
    return weft_ctx_status(cx);
}

weft_value *weft_spacing(weft_ctx *cx, weft_value *x)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_spacing";
    if (!weft__op_enter(cx, fn, &x, 1))
        return NULL;
    weft_dtype dt = weft__ops_float_dtype(&x, 1);
    x = weft__ops_as_dtype(cx, x, dt);
    /* Away from zero, where both zeros step up (NumPy's _next); an
     * infinity steps to itself, and inf - inf is NumPy's NaN.  Two weak
     * infinities would make an f64 where: they take x's dtype first. */
    weft_value *up = weft__ops_as_dtype(cx, weft_const_f64(cx, INFINITY), dt);
    weft_value *down = weft__ops_as_dtype(cx, weft_const_f64(cx, -INFINITY), dt);
    weft_value *toward = weft_where(cx, weft_lt(cx, x, weft_const_f64(cx, 0.0)), down, up);
    return WEFT__KEEP(weft_sub(cx, weft_nextafter(cx, x, toward), x));
}
