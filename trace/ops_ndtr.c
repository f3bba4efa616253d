/* The standard normal distribution's functions of tf.math that are not
 * elementwise ops of their own: ndtr, log_ndtr and erfcinv, each the
 * composition TensorFlow writes (tensorflow/python/ops/distributions/
 * special_math.py), in its steps, so that results match TensorFlow's to
 * the rounding of erf, erfc, log and ndtri. */
#include <math.h>

#include "trace/ctx.h"
#include "trace/eager_fused.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

/* log_ndtr's segments: above `upper` log(1 - p) is taken as -p, below
 * `lower` the asymptotic series replaces log(ndtr(x)), whose ndtr would
 * lose its digits to underflow (TensorFlow's constants per dtype). */
#define LOG_NDTR_F64_LOWER (-20.0)
#define LOG_NDTR_F64_UPPER 8.0
#define LOG_NDTR_F32_LOWER (-10.0)
#define LOG_NDTR_F32_UPPER 5.0
/* Terms of log_ndtr's asymptotic series (TensorFlow's default). */
#define LOG_NDTR_SERIES_ORDER 3

static weft_value *constant(weft_ctx *cx, double v)
{
    return weft_const_f64(cx, v);
}

/* Whether x is f32 or f64, else the context fails naming fn. */
static bool float_input(weft_ctx *cx, const char *fn, weft_value *x)
{
    if (!weft__op_enter(cx, fn, &x, 1))
        return false;
    return weft__ops_float_rank(cx, fn, weft__value_spec(x), 0, false);
}

/* ndtr's steps, with errors naming fn: w = x sqrt(2)/2, then
 * 0.5 (1 + erf(w)) near 0 and 0.5 erfc(|w|) or 0.5 (2 - erfc(|w|)) in
 * the tails, where erf would round away the tail's digits. */
static weft_value *ndtr_steps(weft_ctx *cx, const char *fn, weft_value *x)
{
    const double half_sqrt_2 = 0.5 * sqrt(2.0);
    weft_value *w = weft__op_binary(cx, WEFT__OP_MUL, fn, x, constant(cx, half_sqrt_2));
    weft_value *z = weft__op_unary(cx, WEFT__OP_ABS, fn, w);
    weft_value *erfc_z = weft__op_unary(cx, WEFT__OP_ERFC, fn, z);
    weft_value *tail = weft_where(cx, weft__op_binary(cx, WEFT__OP_GT, fn, w, constant(cx, 0.0)),
                                  weft__op_binary(cx, WEFT__OP_SUB, fn, constant(cx, 2.0), erfc_z),
                                  erfc_z);
    weft_value *near = weft__op_binary(cx, WEFT__OP_ADD, fn, constant(cx, 1.0),
                                       weft__op_unary(cx, WEFT__OP_ERF, fn, w));
    weft_value *y = weft_where(cx, weft__op_binary(cx, WEFT__OP_LT, fn, z, constant(cx, half_sqrt_2)),
                               near, tail);
    return weft__op_binary(cx, WEFT__OP_MUL, fn, constant(cx, 0.5), y);
}

/* Eagerly, ndtr and erfcinv on floats run as one pass
 * (trace/eager_fused.h). */
static weft__fused_site ndtr_site = WEFT__FUSED_SITE("weft_ndtr", weft_ndtr, false);
static weft__fused_site erfcinv_site = WEFT__FUSED_SITE("weft_erfcinv", weft_erfcinv, false);

weft_value *weft_ndtr(weft_ctx *cx, weft_value *x)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_ndtr";
    if (!float_input(cx, fn, x))
        return NULL;
    weft_value *y;
    if (weft__eager_fused(cx, &ndtr_site, x, &y))
        return WEFT__KEEP(y);
    return WEFT__KEEP(ndtr_steps(cx, fn, x));
}

/* (2n - 1)!! for n >= 1. */
static double odd_double_factorial(int n)
{
    double f = 1;
    for (int k = 2 * n - 1; k > 1; k -= 2)
        f *= k;
    return f;
}

/* 1 + sum_{n=1..order} (-1)^n (2n - 1)!! / x^(2n): the asymptotic series
 * of ndtr(x) sqrt(2 pi) (-x) exp(x^2 / 2) for x << -1, summed as
 * TensorFlow does (the odd and the even terms apart). */
static weft_value *asymptotic_series(weft_ctx *cx, const char *fn, weft_value *x)
{
    weft_value *x2 = weft__op_unary(cx, WEFT__OP_SQUARE, fn, x);
    weft_value *even = NULL, *odd = NULL, *x2n = x2;
    for (int n = 1; n <= LOG_NDTR_SERIES_ORDER; n++) {
        weft_value *y = weft__op_binary(cx, WEFT__OP_DIV, fn, constant(cx, odd_double_factorial(n)),
                                        x2n);
        weft_value **sum = n % 2 ? &odd : &even;
        *sum = *sum ? weft__op_binary(cx, WEFT__OP_ADD, fn, *sum, y) : y;
        if (n < LOG_NDTR_SERIES_ORDER)
            x2n = weft__op_binary(cx, WEFT__OP_MUL, fn, x2n, x2);
    }
    weft_value *s = weft__op_binary(cx, WEFT__OP_ADD, fn, constant(cx, 1.0), even);
    return weft__op_binary(cx, WEFT__OP_SUB, fn, s, odd);
}

/* log(ndtr(x)) for x << -1: -x^2/2 - log(-x) - log(2 pi)/2 + log(series). */
static weft_value *log_ndtr_lower(weft_ctx *cx, const char *fn, weft_value *x)
{
    weft_value *x2 = weft__op_unary(cx, WEFT__OP_SQUARE, fn, x);
    weft_value *scale = weft__op_binary(
        cx, WEFT__OP_SUB, fn,
        weft__op_binary(cx, WEFT__OP_SUB, fn,
                        weft__op_binary(cx, WEFT__OP_MUL, fn, constant(cx, -0.5), x2),
                        weft__op_unary(cx, WEFT__OP_LOG, fn, weft__op_unary(cx, WEFT__OP_NEG, fn, x))),
        constant(cx, 0.5 * log(2.0 * M_PI)));
    return weft__op_binary(cx, WEFT__OP_ADD, fn, scale,
                           weft__op_unary(cx, WEFT__OP_LOG, fn, asymptotic_series(cx, fn, x)));
}

weft_value *weft_log_ndtr(weft_ctx *cx, weft_value *x)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_log_ndtr";
    if (!float_input(cx, fn, x))
        return NULL;
    bool f64 = weft__value_spec(x)->dtype == WEFT_F64;
    weft_value *lower = constant(cx, f64 ? LOG_NDTR_F64_LOWER : LOG_NDTR_F32_LOWER);
    weft_value *upper = constant(cx, f64 ? LOG_NDTR_F64_UPPER : LOG_NDTR_F32_UPPER);
    /* The other branches' arguments are clamped into their segments, as
     * TensorFlow's, so that no branch computes at a point where it fails. */
    weft_value *high = weft__op_unary(cx, WEFT__OP_NEG, fn,
                                      ndtr_steps(cx, fn, weft__op_unary(cx, WEFT__OP_NEG, fn, x)));
    weft_value *middle = weft__op_unary(
        cx, WEFT__OP_LOG, fn, ndtr_steps(cx, fn, weft__op_binary(cx, WEFT__OP_MAXIMUM, fn, x, lower)));
    weft_value *low = log_ndtr_lower(cx, fn, weft__op_binary(cx, WEFT__OP_MINIMUM, fn, x, lower));
    weft_value *below_upper = weft_where(cx, weft__op_binary(cx, WEFT__OP_GT, fn, x, lower), middle,
                                         low);
    return WEFT__KEEP(weft_where(cx, weft__op_binary(cx, WEFT__OP_GT, fn, x, upper), high,
                                 below_upper));
}

weft_value *weft_erfcinv(weft_ctx *cx, weft_value *x)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_erfcinv";
    if (!float_input(cx, fn, x))
        return NULL;
    weft_value *y;
    if (weft__eager_fused(cx, &erfcinv_site, x, &y))
        return WEFT__KEEP(y);
    weft_value *half = weft__op_binary(cx, WEFT__OP_MUL, fn, constant(cx, 0.5), x);
    weft_value *q = weft__op_unary(cx, WEFT__OP_NDTRI, fn, half);
    return WEFT__KEEP(weft__op_binary(cx, WEFT__OP_MUL, fn, weft__op_unary(cx, WEFT__OP_NEG, fn, q),
                                      constant(cx, sqrt(0.5))));
}
