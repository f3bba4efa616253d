/* Elementwise functions of tf.experimental.numpy composed of weft's ops
 * in NumPy's formulas (signbit, fix, float_power, nan_to_num, around,
 * deg2rad, rad2deg, divmod), so eager, traced and fused runs give the
 * same bits and the gradients come from the parts. */
#include <float.h>
#include <math.h>

#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

static const double PI = 3.14159265358979323846;

/* The sign bit: copysign(1, x) < 0 for floats (-0.0 and a NaN's sign
 * count), x < 0 for integers. */
weft_value *weft_signbit(weft_ctx *cx, weft_value *x)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_signbit";
    if (!weft__op_enter(cx, fn, &x, 1) || !weft__ops_number(cx, fn, "x", x))
        return NULL;
    weft__steps s = { cx, fn };
    weft_value *zero = weft_const_f64(cx, 0.0);
    if (weft__dtype_is_float(weft__value_spec(x)->dtype))
        x = weft__step2(&s, WEFT__OP_COPYSIGN, weft_const_f64(cx, 1.0), x);
    return WEFT__KEEP(weft__step2(&s, WEFT__OP_LT, x, zero));
}

/* NumPy's fix: floor from 0 up, else ceil (NaN stays NaN, either zero
 * itself); integers and bool in f64. */
weft_value *weft_fix(weft_ctx *cx, weft_value *x)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_fix";
    if (!weft__op_enter(cx, fn, &x, 1))
        return NULL;
    x = weft__ops_as_dtype(cx, x, weft__ops_float_dtype(&x, 1));
    weft__steps s = { cx, fn };
    weft_value *up = weft__step2(&s, WEFT__OP_GE, x, weft_const_f64(cx, 0.0));
    return WEFT__KEEP(weft_where(cx, up, weft__step1(&s, WEFT__OP_FLOOR, x),
                                 weft__step1(&s, WEFT__OP_CEIL, x)));
}

/* NumPy's float_power: both in f64, then pow. */
weft_value *weft_float_power(weft_ctx *cx, weft_value *x1, weft_value *x2)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_float_power";
    weft_value *in[2] = { x1, x2 };
    if (!weft__op_enter(cx, fn, in, 2))
        return NULL;
    return WEFT__KEEP(weft__op_binary(cx, WEFT__OP_POW, fn, weft__ops_as_dtype(cx, x1, WEFT_F64),
                                      weft__ops_as_dtype(cx, x2, WEFT_F64)));
}

/* NumPy's nan_to_num: NaN to nan, +inf to posinf, -inf to neginf, where
 * an infinite posinf (neginf) is the dtype's largest (lowest) finite
 * number, NumPy's None.  Integers and bool come back as they are. */
weft_value *weft_nan_to_num(weft_ctx *cx, weft_value *x, double nan, double posinf,
                            double neginf)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_nan_to_num";
    if (!weft__op_enter(cx, fn, &x, 1))
        return NULL;
    weft_dtype dt = weft__value_spec(x)->dtype;
    if (!weft__dtype_is_float(dt))
        return WEFT__KEEP(x);
    double largest = dt == WEFT_F32 ? FLT_MAX : DBL_MAX;
    posinf = isinf(posinf) && posinf > 0 ? largest : posinf;
    neginf = isinf(neginf) && neginf < 0 ? -largest : neginf;
    weft__steps s = { cx, fn };
    weft_value *y = weft_where(cx, weft__step1(&s, WEFT__OP_IS_NAN, x), weft_const_f64(cx, nan),
                               x);
    weft_value *up = weft__step2(&s, WEFT__OP_EQ, x, weft_const_f64(cx, INFINITY));
    weft_value *down = weft__step2(&s, WEFT__OP_EQ, x, weft_const_f64(cx, -INFINITY));
    y = weft_where(cx, up, weft_const_f64(cx, posinf), y);
    return WEFT__KEEP(weft_where(cx, down, weft_const_f64(cx, neginf), y));
}

/* NumPy's around: x times 10^d, rounded half to even, divided by 10^d
 * (for d < 0: divided by 10^-d, rounded, multiplied), in x's dtype with
 * the factor rounded to it; integers are returned for d >= 0, computed in
 * f64 and cast back for d < 0. */
weft_value *weft_around(weft_ctx *cx, weft_value *x, int decimals)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_around";
    if (!weft__op_enter(cx, fn, &x, 1) || !weft__ops_number(cx, fn, "x", x))
        return NULL;
    if (decimals < -308 || decimals > 308)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: decimals %d is outside -308..308", fn,
                              decimals);
    weft_dtype dt = weft__value_spec(x)->dtype;
    bool is_float = weft__dtype_is_float(dt);
    if (!is_float && decimals >= 0)
        return WEFT__KEEP(x);
    weft__steps s = { cx, fn };
    weft_value *v = is_float ? x : weft_cast(cx, x, WEFT_F64);
    weft_value *f = weft_const_f64(cx, pow(10.0, decimals < 0 ? -decimals : decimals));
    weft__op there = decimals >= 0 ? WEFT__OP_MUL : WEFT__OP_TRUEDIV;
    weft__op back = decimals >= 0 ? WEFT__OP_TRUEDIV : WEFT__OP_MUL;
    v = weft__step2(&s, back, weft__step1(&s, WEFT__OP_ROUND, weft__step2(&s, there, v, f)), f);
    return WEFT__KEEP(is_float ? v : weft_cast(cx, v, dt));
}

/* x times the constant of its float dtype (integers and bool in f64). */
static weft_value *scaled(weft_ctx *cx, const char *fn, weft_value *x, double c64, float c32)
{
    if (!weft__op_enter(cx, fn, &x, 1))
        return NULL;
    weft_dtype dt = weft__ops_float_dtype(&x, 1);
    x = weft__ops_as_dtype(cx, x, dt);
    return weft__op_binary(cx, WEFT__OP_MUL, fn, x,
                           weft_const_f64(cx, dt == WEFT_F32 ? (double)c32 : c64));
}

/* NumPy's deg2rad and rad2deg: x * (pi / 180) and x * (180 / pi), the
 * constant computed in the dtype (npy_rad2degf's 180.0f / pi rounded to
 * f32 is one ulp below (float)(180 / pi), TensorFlow's NumPy layer's). */
weft_value *weft_deg2rad(weft_ctx *cx, weft_value *x)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(scaled(cx, "weft_deg2rad", x, PI / 180.0, (float)PI / 180.0f));
}

weft_value *weft_rad2deg(weft_ctx *cx, weft_value *x)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(scaled(cx, "weft_rad2deg", x, 180.0 / PI, 180.0f / (float)PI));
}

/* NumPy's divmod: weft_floordiv and weft_mod (Python's pair, q * x2 + r
 * == x1). */
int weft_divmod(weft_ctx *cx, weft_value *x1, weft_value *x2, weft_value **outs)
{
    WEFT__SCOPE_OUTS(cx, outs, 2);
    static const char fn[] = "weft_divmod";
    weft_value *in[2] = { x1, x2 };
    int rc;
    if (!weft__ops_enter_two_outs(cx, fn, in, 2, outs, &rc))
        return rc;
    outs[0] = weft_floordiv(cx, x1, x2);
    outs[1] = weft_mod(cx, x1, x2);
    if (weft_ctx_status(cx) != 0)
        outs[0] = outs[1] = NULL;
    return weft_ctx_status(cx);
}
