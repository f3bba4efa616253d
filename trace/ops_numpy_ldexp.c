/* NumPy's ldexp and frexp: a float's power of two put in and taken out.
 * ldexp is the LDEXP float op (C's ldexp, one rounding, on every tier);
 * frexp is composed of it, so the mantissa is exact and its gradient,
 * 2^-e, comes from ldexp's rule. */
#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

weft_value *weft_ldexp(weft_ctx *cx, weft_value *x1, weft_value *x2)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_ldexp";
    weft_value *in[2] = { x1, x2 };
    if (!weft__op_enter(cx, fn, in, 2))
        return NULL;
    const weft_spec *se = weft__value_spec(x2);
    if (weft__dtype_is_float(se->dtype)) {
        char ss[WEFT__SPEC_STR_MAX];
        return weft__ctx_fail(cx, WEFT_EDTYPE, "%s: x2 %s is not integers (NumPy refuses a "
                              "float power)", fn, weft__spec_str(se, ss, sizeof ss));
    }
    /* The power travels in x1's float dtype; beyond it every power
     * saturates anyway (kernel_ew.c's ldexp_power). */
    weft_dtype dt = weft__ops_float_dtype(&x1, 1);
    return WEFT__KEEP(weft__op_binary(cx, WEFT__OP_LDEXP, fn, weft__ops_as_dtype(cx, x1, dt),
                                      weft__ops_as_dtype(cx, x2, dt)));
}

int weft_frexp(weft_ctx *cx, weft_value *x, weft_value **outs)
{
    WEFT__SCOPE_OUTS(cx, outs, 2);
    static const char fn[] = "weft_frexp";
    int rc;
    if (!weft__ops_enter_two_outs(cx, fn, &x, 1, outs, &rc))
        return rc;
    weft__steps s = { cx, fn };
    weft_dtype dt = weft__ops_float_dtype(&x, 1);
    x = weft__ops_as_dtype(cx, x, dt);
    /* Constants of x's dtype: where() would promote an f32 x by f64 ones. */
    weft_value *one = weft__ops_as_dtype(cx, weft_const_f64(cx, 1.0), dt);
    weft_value *half = weft__ops_as_dtype(cx, weft_const_f64(cx, 0.5), dt);
    weft_value *zero = weft__ops_as_dtype(cx, weft_const_f64(cx, 0.0), dt);
    /* 0, infinities and NaN come back as they are with exponent 0. */
    weft_value *regular = weft_logical_and(cx, weft_is_finite(cx, x),
                                           weft__step2(&s, WEFT__OP_NE, x, zero));
    weft_value *ax = weft_where(cx, regular, weft_abs(cx, x), one);
    /* floor(log2 |x|) + 1, one too high just below a power of two, where
     * log2 rounds up to the integer (libm's log2 is exact at the powers
     * and monotonic, so never too low): a mantissa below 1/2 mends it. */
    weft_value *e = weft_add(cx, weft_floor(cx, weft_log2(cx, ax)), one);
    weft_value *m = weft__op_binary(cx, WEFT__OP_LDEXP, fn, ax, weft_neg(cx, e));
    e = weft_sub(cx, e, weft_where(cx, weft__step2(&s, WEFT__OP_LT, m, half), one, zero));
    e = weft_where(cx, regular, e, zero);
    outs[0] = weft__op_binary(cx, WEFT__OP_LDEXP, fn, x, weft_neg(cx, e));
    outs[1] = weft_cast(cx, e, WEFT_I32);
    if (weft_ctx_status(cx) != 0)
        outs[0] = outs[1] = NULL;
    return weft_ctx_status(cx);
}
