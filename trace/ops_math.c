/* The math ops beyond arithmetic: the float functions, rounding, the
 * tests is_nan / is_inf / is_finite, the logical ops, floor and true
 * division, and clip.  Their dtype rules live in ew_rules.c, their
 * per-element meaning in kernel_ew.c.  asinh, acosh, atanh and
 * logical_xor are compositions of them. */
#include <math.h>

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

/* A context, no sticky error, a valid input of dtype f32 or f64 (bool
 * when want_bool). */
static bool enter_typed(weft_ctx *cx, const char *fn, weft_value *const *in, size_t n,
                        bool want_bool)
{
    if (!weft__op_enter(cx, fn, in, n))
        return false;
    for (size_t i = 0; i < n; i++) {
        const weft_spec *s = weft__value_spec(in[i]);
        bool ok = want_bool ? s->dtype == WEFT_BOOL : s->dtype == WEFT_F32 || s->dtype == WEFT_F64;
        if (!ok) {
            char sa[WEFT__SPEC_STR_MAX];
            weft__ctx_fail(cx, WEFT_EDTYPE, "%s: %s is not %s", fn,
                           weft__spec_str(s, sa, sizeof sa), want_bool ? "bool" : "f32 or f64");
            return false;
        }
    }
    return true;
}

static weft_value *unary(weft_ctx *cx, weft__op op, const char *fn, weft_value *a)
{
    return weft__op_unary(cx, op, fn, a);
}

static weft_value *binary(weft_ctx *cx, weft__op op, const char *fn, weft_value *a,
                          weft_value *b)
{
    return weft__op_binary(cx, op, fn, a, b);
}

/* Past this magnitude asinh(x) and acosh(x) are log(2 |x|) to the last
 * bit of f64 (the next term is 1 / (4 x^2)), and below it x^2 cannot
 * overflow, not even in f32. */
#define HYPERBOLIC_BIG 1e9

/* sign(x) log1p(|x| + x^2 / (1 + sqrt(1 + x^2))): no cancellation near 0
 * (log(|x| + sqrt(x^2 + 1)) would lose every digit of a tiny x), and
 * log(2 |x|) past HYPERBOLIC_BIG. */
weft_value *weft_asinh(weft_ctx *cx, weft_value *a)
{
    const char *fn = "weft_asinh";
    if (!enter_typed(cx, fn, &a, 1, false))
        return NULL;
    weft_value *ax = unary(cx, WEFT__OP_ABS, fn, a), *sq = unary(cx, WEFT__OP_SQUARE, fn, a);
    weft_value *root = unary(cx, WEFT__OP_SQRT, fn, binary(cx, WEFT__OP_ADD, fn, sq,
                                                             weft_const_f64(cx, 1.0)));
    weft_value *frac = binary(cx, WEFT__OP_TRUEDIV, fn, sq,
                              binary(cx, WEFT__OP_ADD, fn, root, weft_const_f64(cx, 1.0)));
    weft_value *small = unary(cx, WEFT__OP_LOG1P, fn, binary(cx, WEFT__OP_ADD, fn, ax, frac));
    weft_value *big = binary(cx, WEFT__OP_ADD, fn, unary(cx, WEFT__OP_LOG, fn, ax),
                             weft_const_f64(cx, M_LN2));
    weft_value *mag = weft_where(cx, binary(cx, WEFT__OP_GT, fn, ax,
                                            weft_const_f64(cx, HYPERBOLIC_BIG)), big, small);
    /* The sign back; a zero is returned as it is, so -0.0 stays -0.0. */
    weft_value *zero = weft_const_f64(cx, 0.0);
    weft_value *pos = weft_where(cx, binary(cx, WEFT__OP_EQ, fn, a, zero), a, mag);
    return weft_where(cx, binary(cx, WEFT__OP_LT, fn, a, zero), unary(cx, WEFT__OP_NEG, fn, mag),
                      pos);
}

/* log1p((x - 1) + sqrt((x - 1)(x + 1))) for x >= 1 (no cancellation near
 * 1), log(2 x) past HYPERBOLIC_BIG; NaN below 1. */
weft_value *weft_acosh(weft_ctx *cx, weft_value *a)
{
    const char *fn = "weft_acosh";
    if (!enter_typed(cx, fn, &a, 1, false))
        return NULL;
    weft_value *dm = binary(cx, WEFT__OP_SUB, fn, a, weft_const_f64(cx, 1.0));
    weft_value *dp = binary(cx, WEFT__OP_ADD, fn, a, weft_const_f64(cx, 1.0));
    /* sqrt(x - 1) sqrt(x + 1): NaN below 1, where sqrt((x - 1)(x + 1))
     * would be real again below -1. */
    weft_value *root = binary(cx, WEFT__OP_MUL, fn, unary(cx, WEFT__OP_SQRT, fn, dm),
                              unary(cx, WEFT__OP_SQRT, fn, dp));
    weft_value *small = unary(cx, WEFT__OP_LOG1P, fn, binary(cx, WEFT__OP_ADD, fn, dm, root));
    weft_value *big = binary(cx, WEFT__OP_ADD, fn, unary(cx, WEFT__OP_LOG, fn, a),
                             weft_const_f64(cx, M_LN2));
    return weft_where(cx, binary(cx, WEFT__OP_GT, fn, a, weft_const_f64(cx, HYPERBOLIC_BIG)),
                      big, small);
}

/* 0.5 log1p(2 x / (1 - x)): +-inf at +-1, NaN past them. */
weft_value *weft_atanh(weft_ctx *cx, weft_value *a)
{
    const char *fn = "weft_atanh";
    if (!enter_typed(cx, fn, &a, 1, false))
        return NULL;
    weft_value *twice = binary(cx, WEFT__OP_ADD, fn, a, a);
    weft_value *q = binary(cx, WEFT__OP_TRUEDIV, fn, twice,
                           binary(cx, WEFT__OP_SUB, fn, weft_const_f64(cx, 1.0), a));
    return binary(cx, WEFT__OP_MUL, fn, unary(cx, WEFT__OP_LOG1P, fn, q),
                  weft_const_f64(cx, 0.5));
}

/* a != b on bools. */
weft_value *weft_logical_xor(weft_ctx *cx, weft_value *a, weft_value *b)
{
    weft_value *in[2] = { a, b };
    if (!enter_typed(cx, "weft_logical_xor", in, 2, true))
        return NULL;
    return binary(cx, WEFT__OP_NE, "weft_logical_xor", a, b);
}
