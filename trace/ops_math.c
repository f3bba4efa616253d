/* The math ops beyond arithmetic: the float functions, rounding, the
 * tests is_nan / is_inf / is_finite, the logical ops, floor and true
 * division, and clip.  Their dtype rules live in ew_rules.c, their
 * per-element meaning in kernel_ew.c.  logical_xor is a composition of
 * them. */
#include "runtime/iface.h"
#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

WEFT__DEFINE_UNARY(tanh, TANH)
WEFT__DEFINE_UNARY(sigmoid, SIGMOID)
WEFT__DEFINE_UNARY(relu, RELU)
WEFT__DEFINE_UNARY(sin, SIN)
WEFT__DEFINE_UNARY(cos, COS)
WEFT__DEFINE_UNARY(floor, FLOOR)
WEFT__DEFINE_UNARY(ceil, CEIL)
WEFT__DEFINE_UNARY(round, ROUND)
WEFT__DEFINE_UNARY(rsqrt, RSQRT)
WEFT__DEFINE_UNARY(square, SQUARE)
WEFT__DEFINE_UNARY(sign, SIGN)
WEFT__DEFINE_UNARY(log1p, LOG1P)
WEFT__DEFINE_UNARY(expm1, EXPM1)
WEFT__DEFINE_UNARY(logical_not, LOGICAL_NOT)
WEFT__DEFINE_UNARY(erf, ERF)
WEFT__DEFINE_UNARY(erfc, ERFC)
WEFT__DEFINE_UNARY(tan, TAN)
WEFT__DEFINE_UNARY(asin, ASIN)
WEFT__DEFINE_UNARY(acos, ACOS)
WEFT__DEFINE_UNARY(atan, ATAN)
WEFT__DEFINE_UNARY(sinh, SINH)
WEFT__DEFINE_UNARY(cosh, COSH)
WEFT__DEFINE_UNARY(is_nan, IS_NAN)
WEFT__DEFINE_UNARY(is_inf, IS_INF)
WEFT__DEFINE_UNARY(is_finite, IS_FINITE)
WEFT__DEFINE_UNARY(asinh, ASINH)
WEFT__DEFINE_UNARY(acosh, ACOSH)
WEFT__DEFINE_UNARY(atanh, ATANH)
WEFT__DEFINE_UNARY(lgamma, LGAMMA)
WEFT__DEFINE_UNARY(digamma, DIGAMMA)
WEFT__DEFINE_UNARY(erfinv, ERFINV)
WEFT__DEFINE_UNARY(ndtri, NDTRI)

WEFT__DEFINE_BINARY(logical_and, LOGICAL_AND)
WEFT__DEFINE_BINARY(logical_or, LOGICAL_OR)
WEFT__DEFINE_BINARY(floordiv, FLOORDIV)
WEFT__DEFINE_BINARY(truediv, TRUEDIV)
WEFT__DEFINE_BINARY(atan2, ATAN2)

/* NumPy's clip: minimum(maximum(a, lo), hi), so lo > hi gives hi and a NaN
 * anywhere gives NaN.  Two nodes rather than one op of its own: they fuse
 * with their neighbours like any elementwise pair. */
weft_value *weft_clip(weft_ctx *cx, weft_value *a, weft_value *lo, weft_value *hi)
{
    weft_value *in[3] = { a, lo, hi };
    if (!cx) {
        weft__errorf(WEFT_EINVAL, "weft_clip: NULL context");
        return NULL;
    }
    if (!weft__ctx_check_inputs(cx, "weft_clip", in, 3))
        return NULL;
    weft_value *low = weft__op_binary(cx, WEFT__OP_MAXIMUM, "weft_clip", a, lo);
    return weft__op_binary(cx, WEFT__OP_MINIMUM, "weft_clip", low, hi);
}

/* ---- Compositions ----------------------------------------------------------- */

/* a != b on bools. */
weft_value *weft_logical_xor(weft_ctx *cx, weft_value *a, weft_value *b)
{
    static const char fn[] = "weft_logical_xor";
    weft_value *in[2] = { a, b };
    if (!weft__op_enter(cx, fn, in, 2) || !weft__ops_all_bool(cx, fn, in, 2))
        return NULL;
    return weft__op_binary(cx, WEFT__OP_NE, fn, a, b);
}
