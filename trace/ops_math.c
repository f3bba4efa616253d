/* The math ops beyond arithmetic: the float functions, rounding, the
 * tests is_nan / is_inf / is_finite, the logical ops, floor and true
 * division, betainc (of three operands), and clip.  Their dtype rules live
 * in ew_rules.c, their per-element meaning in kernel_ew.c.  logical_xor, add_n, polyval and
 * lbeta are compositions of them. */
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
WEFT__DEFINE_UNARY(bessel_i0, BESSEL_I0)
WEFT__DEFINE_UNARY(bessel_i0e, BESSEL_I0E)
WEFT__DEFINE_UNARY(bessel_i1, BESSEL_I1)
WEFT__DEFINE_UNARY(bessel_i1e, BESSEL_I1E)
WEFT__DEFINE_UNARY(bessel_j0, BESSEL_J0)
WEFT__DEFINE_UNARY(bessel_j1, BESSEL_J1)
WEFT__DEFINE_UNARY(bessel_y0, BESSEL_Y0)
WEFT__DEFINE_UNARY(bessel_y1, BESSEL_Y1)
WEFT__DEFINE_UNARY(bessel_k0, BESSEL_K0)
WEFT__DEFINE_UNARY(bessel_k0e, BESSEL_K0E)
WEFT__DEFINE_UNARY(bessel_k1, BESSEL_K1)
WEFT__DEFINE_UNARY(bessel_k1e, BESSEL_K1E)
WEFT__DEFINE_UNARY(expint, EXPINT)
WEFT__DEFINE_UNARY(dawsn, DAWSN)
WEFT__DEFINE_UNARY(spence, SPENCE)
WEFT__DEFINE_UNARY(fresnel_cos, FRESNEL_COS)
WEFT__DEFINE_UNARY(fresnel_sin, FRESNEL_SIN)
WEFT__DEFINE_UNARY(erfinv, ERFINV)
WEFT__DEFINE_UNARY(ndtri, NDTRI)
WEFT__DEFINE_UNARY(log2, LOG2)
WEFT__DEFINE_UNARY(log10, LOG10)
WEFT__DEFINE_UNARY(exp2, EXP2)
WEFT__DEFINE_UNARY(cbrt, CBRT)

WEFT__DEFINE_BINARY(logical_and, LOGICAL_AND)
WEFT__DEFINE_BINARY(logical_or, LOGICAL_OR)
WEFT__DEFINE_BINARY(floordiv, FLOORDIV)
WEFT__DEFINE_BINARY(truediv, TRUEDIV)
WEFT__DEFINE_BINARY(atan2, ATAN2)
WEFT__DEFINE_BINARY(hypot, HYPOT)
WEFT__DEFINE_BINARY(copysign, COPYSIGN)
WEFT__DEFINE_BINARY(gcd, GCD)
WEFT__DEFINE_BINARY(lcm, LCM)
WEFT__DEFINE_BINARY(igamma, IGAMMA)
WEFT__DEFINE_BINARY(igammac, IGAMMAC)
WEFT__DEFINE_BINARY(igamma_grad_a, IGAMMA_GRAD_A)
WEFT__DEFINE_BINARY(random_gamma_grad, RANDOM_GAMMA_GRAD)
WEFT__DEFINE_BINARY(truncatediv, TRUNCATEDIV)
WEFT__DEFINE_BINARY(truncatemod, TRUNCATEMOD)
WEFT__DEFINE_BINARY(zeta, ZETA)
WEFT__DEFINE_BINARY(polygamma, POLYGAMMA)
WEFT__DEFINE_BINARY(nextafter, NEXTAFTER)

weft_value *weft_betainc(weft_ctx *cx, weft_value *a, weft_value *b, weft_value *x)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(weft__op_ternary(cx, WEFT__OP_BETAINC, "weft_betainc", a, b, x));
}

/* tf.math.rint is round half to even, which weft_round already is. */
weft_value *weft_rint(weft_ctx *cx, weft_value *a)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(weft__op_unary(cx, WEFT__OP_ROUND, "weft_rint", a));
}
WEFT__DEFINE_BINARY(bitwise_and, BITWISE_AND)
WEFT__DEFINE_BINARY(bitwise_or, BITWISE_OR)
WEFT__DEFINE_BINARY(bitwise_xor, BITWISE_XOR)
WEFT__DEFINE_BINARY(left_shift, LEFT_SHIFT)
WEFT__DEFINE_BINARY(right_shift, RIGHT_SHIFT)
WEFT__DEFINE_UNARY(invert, INVERT)

/* NumPy's clip: minimum(maximum(a, lo), hi), so lo > hi gives hi and a NaN
 * anywhere gives NaN.  Two nodes rather than one op of its own: they fuse
 * with their neighbours like any elementwise pair. */
weft_value *weft_clip(weft_ctx *cx, weft_value *a, weft_value *lo, weft_value *hi)
{
    WEFT__SCOPE(cx);
    weft_value *in[3] = { a, lo, hi };
    if (!cx) {
        weft__errorf(WEFT_EINVAL, "weft_clip: NULL context");
        return NULL;
    }
    if (!weft__ctx_check_inputs(cx, "weft_clip", in, 3))
        return NULL;
    weft_value *low = weft__op_binary(cx, WEFT__OP_MAXIMUM, "weft_clip", a, lo);
    return WEFT__KEEP(weft__op_binary(cx, WEFT__OP_MINIMUM, "weft_clip", low, hi));
}

/* ---- Compositions ----------------------------------------------------------- */

/* a != b on bools. */
weft_value *weft_logical_xor(weft_ctx *cx, weft_value *a, weft_value *b)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_logical_xor";
    weft_value *in[2] = { a, b };
    if (!weft__op_enter(cx, fn, in, 2) || !weft__ops_all_bool(cx, fn, in, 2))
        return NULL;
    return WEFT__KEEP(weft__op_binary(cx, WEFT__OP_NE, fn, a, b));
}

/* tf.math.add_n: the inputs added left to right (one input is returned
 * as it is); TensorFlow requires one dtype and one shape, so weft checks
 * both (the shapes as far as known while tracing) instead of
 * broadcasting. */
weft_value *weft_add_n(weft_ctx *cx, weft_value *const *xs, size_t n)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_add_n";
    if (!cx) {
        weft__errorf(WEFT_EINVAL, "%s: NULL context", fn);
        return NULL;
    }
    if (!xs || n == 0)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: %s", fn, n == 0 ? "no inputs" : "xs is NULL");
    if (!weft__op_enter(cx, fn, xs, (uint32_t)n))
        return NULL;
    const weft_spec *first = weft__value_spec(xs[0]);
    for (size_t i = 1; i < n; i++) {
        const weft_spec *s = weft__value_spec(xs[i]);
        bool same = s->dtype == first->dtype &&
                    (s->rank == WEFT_RANK_ANY || first->rank == WEFT_RANK_ANY ||
                     s->rank == first->rank);
        for (int d = 0; same && s->rank == first->rank && d < s->rank; d++)
            same = s->dims[d] < 0 || first->dims[d] < 0 || s->dims[d] == first->dims[d];
        if (!same) {
            char a[WEFT__SPEC_STR_MAX], b[WEFT__SPEC_STR_MAX];
            return weft__ctx_fail(cx, s->dtype == first->dtype ? WEFT_ESHAPE : WEFT_EDTYPE,
                                  "%s: input %zu is %s, input 0 %s", fn, i,
                                  weft__spec_str(s, a, sizeof a),
                                  weft__spec_str(first, b, sizeof b));
        }
    }
    weft_value *sum = xs[0];
    for (size_t i = 1; i < n; i++)
        sum = weft__op_binary(cx, WEFT__OP_ADD, fn, sum, xs[i]);
    return WEFT__KEEP(sum);
}

/* tf.math.polyval: Horner's rule, ((c0 x + c1) x + c2) ..., the
 * coefficients highest power first; none gives zeros of x's shape. */
weft_value *weft_polyval(weft_ctx *cx, weft_value *const *coeffs, size_t n, weft_value *x)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_polyval";
    if (!cx) {
        weft__errorf(WEFT_EINVAL, "%s: NULL context", fn);
        return NULL;
    }
    if (n > 0 && !coeffs)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: coeffs is NULL", fn);
    if (!weft__op_enter(cx, fn, &x, 1) ||
        (n > 0 && !weft__op_enter(cx, fn, coeffs, (uint32_t)n)))
        return NULL;
    if (n == 0)
        return WEFT__KEEP(weft_zeros_like(cx, x));
    weft_value *acc = coeffs[0];
    for (size_t i = 1; i < n; i++)
        acc = weft__op_binary(cx, WEFT__OP_ADD, fn, weft__op_binary(cx, WEFT__OP_MUL, fn, acc, x),
                              coeffs[i]);
    /* One coefficient: c0 broadcast against x, as TensorFlow's result. */
    if (n == 1)
        acc = weft__op_binary(cx, WEFT__OP_ADD, fn, acc, weft_zeros_like(cx, x));
    return WEFT__KEEP(acc);
}

/* tf.math.lbeta: log of the multivariate beta function over the last
 * axis, sum(lgamma(x)) - lgamma(sum(x)). */
weft_value *weft_lbeta(weft_ctx *cx, weft_value *x)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_lbeta";
    if (!weft__op_enter(cx, fn, &x, 1))
        return NULL;
    const weft_spec *s = weft__value_spec(x);
    if (s->rank == 0 || (s->dtype != WEFT_F32 && s->dtype != WEFT_F64)) {
        char ss[WEFT__SPEC_STR_MAX];
        return weft__ctx_fail(cx, s->rank == 0 ? WEFT_ESHAPE : WEFT_EDTYPE,
                              "%s: x %s is not f32 or f64 of rank 1 or more", fn,
                              weft__spec_str(s, ss, sizeof ss));
    }
    weft_value *logs = weft_sum(cx, weft__op_unary(cx, WEFT__OP_LGAMMA, fn, x), -1);
    weft_value *of_sum = weft__op_unary(cx, WEFT__OP_LGAMMA, fn, weft_sum(cx, x, -1));
    return WEFT__KEEP(weft__op_binary(cx, WEFT__OP_SUB, fn, logs, of_sum));
}
