/* The math ops beyond arithmetic: the float functions, rounding, the
 * logical ops, floor and true division, and clip.  Their dtype rules live
 * in ew_rules.c, their per-element meaning in kernel_ew.c. */
#include "runtime/iface.h"
#include "trace/ctx.h"
#include "trace/ops_impl.h"

#define UNARY_OP(name, OP)                                                   \
    weft_value *weft_##name(weft_ctx *cx, weft_value *a)                     \
    {                                                                        \
        return weft__op_unary(cx, WEFT__OP_##OP, "weft_" #name, a);         \
    }
UNARY_OP(tanh, TANH)
UNARY_OP(sigmoid, SIGMOID)
UNARY_OP(relu, RELU)
UNARY_OP(sin, SIN)
UNARY_OP(cos, COS)
UNARY_OP(floor, FLOOR)
UNARY_OP(ceil, CEIL)
UNARY_OP(round, ROUND)
UNARY_OP(rsqrt, RSQRT)
UNARY_OP(square, SQUARE)
UNARY_OP(sign, SIGN)
UNARY_OP(log1p, LOG1P)
UNARY_OP(expm1, EXPM1)
UNARY_OP(logical_not, LOGICAL_NOT)

#define BINARY_OP(name, OP)                                                  \
    weft_value *weft_##name(weft_ctx *cx, weft_value *a, weft_value *b)      \
    {                                                                        \
        return weft__op_binary(cx, WEFT__OP_##OP, "weft_" #name, a, b);     \
    }
BINARY_OP(logical_and, LOGICAL_AND)
BINARY_OP(logical_or, LOGICAL_OR)
BINARY_OP(floordiv, FLOORDIV)
BINARY_OP(truediv, TRUEDIV)

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
