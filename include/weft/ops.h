/* weft ops: the operations a function body calls, eager contexts, map and
 * host calls.  Include <weft.h> rather than this file.
 *
 * A body is ordinary C over weft_value handles.  The same body runs eagerly
 * (each op computes at once on the runtime's workers) or in tracing mode
 * (each op records a node and computes nothing).  Values belong to their
 * context and live until it ends, or until weft_value_release ends one
 * early; never free one.  The values an op makes inside itself (an op
 * built from other ops) end when it returns; only its results are yours.
 *
 * Errors are sticky per context: an op on bad inputs records the first
 * error (weft_ctx_status, weft_errmsg names the op and the shapes) and
 * returns NULL; every op given a NULL input returns NULL.  A context is used
 * by one thread at a time.
 *
 * Dtype promotion: the inputs of an arithmetic or comparison op are first
 * converted to the wider of the two dtypes in the order
 * bool < i32 < i64 < f32 < f64.  Comparisons return bool.  Elementwise ops
 * broadcast like NumPy.  A NaN result is some NaN: its sign and payload
 * (which operand's NaN an op on two NaNs returns) are unspecified and may
 * differ between an eager and a traced run.
 *
 * Weak scalars: weft_const_f64, weft_const_i64 and static scalar arguments
 * (weft_arg_f64 / weft_arg_i64 without an input_signature) are weak, like
 * Python numbers in TensorFlow and NumPy 2: against a tensor of their kind
 * or a higher one (bool < integer < float) they take the tensor's dtype,
 * so f32 x * weft_const_f64(cx, 2.0) is f32 and i32 n + weft_const_i64(cx,
 * 1) is i32.  Against a lower kind they keep their own dtype: an integer or
 * bool tensor times a weak float is f64 (as in C and NumPy 2; TensorFlow
 * refuses), a bool tensor plus a weak integer is i64.  A weak integer that
 * does not fit the i32 it would take is WEFT_EDTYPE (NumPy 2 raises too); a
 * weak float taking f32 rounds.  The same rule holds wherever two operands
 * meet: arithmetic, comparisons, minimum/maximum, where's two values, clip.
 * An op on weak scalars only (2 * 3.5, neg of a weak scalar) is computed at
 * once into a weak scalar, so weak arithmetic stays weak; comparisons of
 * weak scalars and weft_cast give ordinary (strong) values.  Alone, a weak
 * scalar is f64 or i64.  weft_const() makes a strong scalar of any dtype.
 * Weakness changes dtypes inside a body only: trace-cache keys and the
 * retracing of static scalars (every new value traces again) are as they
 * were.
 *
 * Bool takes logic only: comparisons, minimum and maximum (and, or), where,
 * weft_cast, the logical ops, sum (a count) and reduce_max (any).
 * Arithmetic on two bools (add, sub, mul, div, floordiv, mod, pow, neg,
 * abs, sign, square, relu, floor, ceil, round) is WEFT_EDTYPE: Python (True
 * + True is 2) and NumPy (True + True is True) disagree on it, TensorFlow
 * refuses it, and weft_cast states the intent.  A bool operand meeting a
 * number is promoted as above (bool + i32 is i32).  The float functions
 * (sqrt exp log tanh sigmoid sin cos rsqrt log1p expm1 erf erfc tan asin
 * acos atan sinh cosh, truediv, atan2) compute integers and bool in f64,
 * as NumPy does; the tests is_nan, is_inf and is_finite refuse bool.
 *
 * Integers: arithmetic wraps around (abs(INT32_MIN) is INT32_MIN); div,
 * floordiv and mod are floor division and floor modulo (Python's // and %),
 * and a zero divisor gives 0; integer pow with a negative exponent
 * truncates toward zero (0, except for a base of 1 or -1; NumPy raises
 * instead). */
#ifndef WEFT_OPS_H
#define WEFT_OPS_H

#include <stdbool.h>

#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

#define WEFT_ALL_AXES (-1000)  /* reduce over every axis */

/* The first error raised in this context (0 if none); sticky. */
WEFT_API int weft_ctx_status(const weft_ctx *cx);

/* Eager contexts: ops run at once, on rt's workers.  *out is owned by the
 * caller and ended with weft_eager_end; the runtime must outlive it.  Any
 * thread may begin one; it is then used by one thread at a time. */
WEFT_API int          weft_eager_begin(weft_runtime *rt, weft_ctx **out);
/* Wraps t (the context takes a reference) as a value of cx. */
WEFT_API weft_value  *weft_eager_value(weft_ctx *cx, weft_tensor *t);
/* The tensor of an eager value; borrowed (valid until the context ends;
 * retain it to keep it).  NULL for traced values. */
WEFT_API weft_tensor *weft_value_tensor(weft_value *v);
/* Frees the context and its values; *cx becomes NULL.  NULL is fine.  A
 * context weft gave to a body is not freed (weft_errmsg says so). */
WEFT_API void         weft_eager_end(weft_ctx **cx);
/* Ends v early.  Eagerly, the context drops its reference to v's tensor
 * (freed unless someone else retained it), so a long eager loop holds only
 * what it keeps; tracing, the recorded op stays and nothing is freed.  In
 * both modes v may not be used again: an op given it, or a body returning
 * it, fails with WEFT_EINVAL / WEFT_EBODY ("was released").  Once 1024
 * more values of cx have been released, v's handle may be handed out again
 * by a later op (so the handles of a long loop stay bounded too), and a
 * stale use is no longer caught.  NULL and a second release are no-ops
 * (until the handle is reused); a value of another context records
 * WEFT_EINVAL in cx. */
WEFT_API void         weft_value_release(weft_ctx *cx, weft_value *v);

/* The spec of a value: known dims in eager mode, possibly WEFT_DIM_ANY
 * while tracing. */
WEFT_API int weft_value_spec(const weft_value *v, weft_spec *out);
/* A static argument's value (weft_arg_i64 / weft_arg_f64 arguments, and
 * scalar constants, weak arithmetic on them included).  WEFT_EINVAL if v is
 * not a static scalar. */
WEFT_API int weft_value_static_i64(const weft_value *v, int64_t *out);
WEFT_API int weft_value_static_f64(const weft_value *v, double *out);

/* Binary elementwise ops (broadcasting, promotion as above).  add sub mul
 * mod pow floordiv take numbers (not bool).  div divides in the promoted
 * dtype: true division for floats, floor division for integers (Python's
 * //, with 0 for a zero divisor; C's / truncates instead); use truediv for
 * TensorFlow's / and floordiv for //.  minimum and maximum propagate NaN;
 * on bool they are and / or.  Comparisons take every dtype and give
 * bool. */
WEFT_API weft_value *weft_add(weft_ctx *cx, weft_value *a, weft_value *b);
WEFT_API weft_value *weft_sub(weft_ctx *cx, weft_value *a, weft_value *b);
WEFT_API weft_value *weft_mul(weft_ctx *cx, weft_value *a, weft_value *b);
WEFT_API weft_value *weft_div(weft_ctx *cx, weft_value *a, weft_value *b);
WEFT_API weft_value *weft_mod(weft_ctx *cx, weft_value *a, weft_value *b);
WEFT_API weft_value *weft_pow(weft_ctx *cx, weft_value *a, weft_value *b);
WEFT_API weft_value *weft_minimum(weft_ctx *cx, weft_value *a, weft_value *b);
WEFT_API weft_value *weft_maximum(weft_ctx *cx, weft_value *a, weft_value *b);
WEFT_API weft_value *weft_eq(weft_ctx *cx, weft_value *a, weft_value *b);
WEFT_API weft_value *weft_ne(weft_ctx *cx, weft_value *a, weft_value *b);
WEFT_API weft_value *weft_lt(weft_ctx *cx, weft_value *a, weft_value *b);
WEFT_API weft_value *weft_le(weft_ctx *cx, weft_value *a, weft_value *b);
WEFT_API weft_value *weft_gt(weft_ctx *cx, weft_value *a, weft_value *b);
WEFT_API weft_value *weft_ge(weft_ctx *cx, weft_value *a, weft_value *b);
/* Python's // and TensorFlow's floordiv: integers as div; floats
 * floor(a / b) computed as Python does (NumPy's divmod), so that
 * floordiv(a, b) * b + mod(a, b) == a: 1 // 0.1 is 9, not 10.  A float zero
 * divisor gives a / b (+-inf or NaN), as NumPy. */
WEFT_API weft_value *weft_floordiv(weft_ctx *cx, weft_value *a, weft_value *b);
/* Always floating, like TensorFlow's / and Python 3's: f32 stays f32,
 * f64 stays f64, integers and bool divide in f64 (7 / 2 is 3.5). */
WEFT_API weft_value *weft_truediv(weft_ctx *cx, weft_value *a, weft_value *b);
/* tf.math.truncatediv and tf.math.truncatemod: C's / and %, the quotient
 * rounded toward zero (-7 / 2 is -3) and a remainder with a's sign, so
 * that truncatediv(a, b) * b + truncatemod(a, b) == a on integers.
 * Integers follow div's rules otherwise (a zero divisor gives 0, MIN / -1
 * wraps to MIN).  Floats: trunc(a / b) and fmod(a, b) (TensorFlow's CPU
 * kernel of truncatediv takes integers only).  Numbers, not bool. */
WEFT_API weft_value *weft_truncatediv(weft_ctx *cx, weft_value *a, weft_value *b);
WEFT_API weft_value *weft_truncatemod(weft_ctx *cx, weft_value *a, weft_value *b);
/* Logic on bool only (anything else is WEFT_EDTYPE; compare with 0 first,
 * weft_ne(cx, x, weft_const_i64(cx, 0)), as TensorFlow asks). */
WEFT_API weft_value *weft_logical_and(weft_ctx *cx, weft_value *a, weft_value *b);
WEFT_API weft_value *weft_logical_or(weft_ctx *cx, weft_value *a, weft_value *b);
/* tf.math.logical_xor: a != b, on bools only. */
WEFT_API weft_value *weft_logical_xor(weft_ctx *cx, weft_value *a, weft_value *b);

/* Unary elementwise ops.  Kept dtype (numbers only, not bool): neg, abs
 * (integers wrap: abs(INT32_MIN) is INT32_MIN), square (x * x, integers
 * wrap), sign (-1, 0 or 1; NaN stays NaN, -0.0 gives 0.0), relu (max(x,
 * 0); NaN stays NaN, -0.0 gives 0.0), floor, ceil and round (half to even
 * like TensorFlow and NumPy: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2; the identity on
 * integers).  Float functions (f32 stays f32, integers and bool compute in
 * f64): sqrt, exp, log, tanh, sigmoid (1 / (1 + exp(-x))), sin, cos, rsqrt
 * (1 / sqrt(x)), log1p (log(1 + x), exact near 0), expm1 (exp(x) - 1,
 * exact near 0); outside their domain they give what C's libm gives
 * (sqrt(-1) and log(-1) are NaN, log(0) is -inf).  logical_not takes bool
 * only. */
WEFT_API weft_value *weft_neg(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_abs(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_sqrt(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_exp(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_log(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_tanh(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_sigmoid(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_relu(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_sin(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_cos(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_floor(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_ceil(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_round(weft_ctx *cx, weft_value *a);
/* tf.math.rint: weft_round (half to even) under TensorFlow's other name. */
WEFT_API weft_value *weft_rint(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_rsqrt(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_square(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_sign(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_log1p(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_expm1(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_logical_not(weft_ctx *cx, weft_value *a);

/* a limited to [lo, hi] elementwise, as NumPy's clip: minimum(maximum(a,
 * lo), hi), so lo > hi gives hi, and NaN in any operand gives NaN.  The
 * three broadcast and promote like two binary ops (weak bounds take a's
 * dtype); a failure names the maximum or minimum step. */
WEFT_API weft_value *weft_clip(weft_ctx *cx, weft_value *a, weft_value *lo, weft_value *hi);

/* More float functions (f32 stays f32, integers and bool compute in f64),
 * each the C libm function of that name, so results are libm's on every
 * tier: erf (tf.math.erf), erfc (1 - erf(x), exact for large x), tan,
 * asin and acos (NaN outside [-1, 1]), atan, sinh and cosh (+-inf past
 * about 710 for f64, 89 for f32).  atan2(y, x) is the angle of the point
 * (x, y) in [-pi, pi] (tf.math.atan2, y first), with C's signed zeros
 * (atan2(+-0, -0) is +-pi); it broadcasts and promotes like the binary ops
 * above, weak scalars included. */
WEFT_API weft_value *weft_erf(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_erfc(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_tan(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_asin(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_acos(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_atan(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_sinh(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_cosh(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_atan2(weft_ctx *cx, weft_value *y, weft_value *x);
/* tf.math.igamma(a, x) and tf.math.igammac(a, x): the regularized lower
 * incomplete gamma function P(a, x) = gamma(a, x) / Gamma(a) and its
 * complement Q(a, x) = 1 - P(a, x), elementwise (broadcast and promoted as
 * atan2).  weft's own in double: P's power series below x = a + 1, Q's
 * continued fraction above, the other as one minus it; NaN for a <= 0
 * or x < 0, P(a, 0) = 0 and P(a, inf) = 1.  Their common factor x^a e^-x
 * / Gamma(a) is taken in long double. */
WEFT_API weft_value *weft_igamma(weft_ctx *cx, weft_value *a, weft_value *x);
WEFT_API weft_value *weft_igammac(weft_ctx *cx, weft_value *a, weft_value *x);
/* tf.raw_ops.IgammaGradA(a, x): d/da P(a, x), igamma's gradient in a;
 * tf.raw_ops.RandomGammaGrad(alpha, sample): the implicit derivative of a
 * Gamma(alpha) sample in alpha, -(dP/da) / (dP/dx) at (alpha, sample),
 * weft_random_gamma's gradient in alpha.  Elementwise, broadcast and
 * promoted as atan2; Eigen's method, as TensorFlow's kernels (P's series
 * or Q's continued fraction differentiated along, the fraction for x > 1
 * and x > a) in double; 0 at x = 0, NaN for a <= 0 or x < 0. */
WEFT_API weft_value *weft_igamma_grad_a(weft_ctx *cx, weft_value *a, weft_value *x);
WEFT_API weft_value *weft_random_gamma_grad(weft_ctx *cx, weft_value *alpha, weft_value *sample);
/* tf.math.betainc(a, b, x): the regularized incomplete beta function
 * I_x(a, b) = B(x; a, b) / B(a, b), elementwise over the three operands
 * broadcast together (NumPy's rule) and promoted as atan2's (integers and
 * bool compute in f64, weak scalars take the others' dtype).  weft's own
 * in long double: the continued fraction of I_x(a, b) below x = (a + 1) /
 * (a + b + 2), one minus that of I_(1-x)(b, a) above, its factor
 * x^a (1 - x)^b / B(a, b) from logarithms; f32 rounds the double result.
 * NaN for a <= 0, b <= 0, an infinite a or b, or x outside [0, 1]
 * (TensorFlow's domain); I_0 = 0, I_1 = 1. */
WEFT_API weft_value *weft_betainc(weft_ctx *cx, weft_value *a, weft_value *b, weft_value *x);
/* tf.math.zeta(x, q): the Hurwitz zeta function sum_k (q + k)^-x, and
 * tf.math.polygamma(n, x): the n-th derivative of digamma,
 * (-1)^(n + 1) n! zeta(n + 1, x) (digamma for n = 0); elementwise on f32
 * or f64, broadcast and promoted as atan2.  weft's own in long double
 * (cephes' method: the first terms directly, then the Euler-Maclaurin
 * tail).  TensorFlow's domain: zeta is +inf at x = 1 and at q a
 * non-positive integer, NaN for x < 1 and for q < 0 with x not an
 * integer (also, unlike TF, for q < -2^20, which would take |q| terms);
 * polygamma is NaN for n negative or not an integer. */
WEFT_API weft_value *weft_zeta(weft_ctx *cx, weft_value *x, weft_value *q);
WEFT_API weft_value *weft_polygamma(weft_ctx *cx, weft_value *n, weft_value *x);
/* tf.math.nextafter(x1, x2): the next representable value after x1 in
 * the direction of x2 (C's nextafter, nextafterf for f32); f32 or f64,
 * broadcast and promoted as atan2. */
WEFT_API weft_value *weft_nextafter(weft_ctx *cx, weft_value *x1, weft_value *x2);
/* tf.math.asinh, acosh (NaN below 1), atanh (+-inf at +-1, NaN beyond)
 * and lgamma (log |gamma(x)|, +inf at 0 and the negative integers; the
 * reentrant lgamma_r, so no global sign is written): float functions as
 * the ones above, libm's on every tier. */
WEFT_API weft_value *weft_asinh(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_acosh(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_atanh(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_lgamma(weft_ctx *cx, weft_value *a);
/* tf.math.digamma (psi, gamma's logarithmic derivative; +inf at 0 and the
 * negative integers, as TensorFlow), tf.math.erfinv (+-inf at +-1, NaN
 * beyond) and tf.math.ndtri (the standard normal quantile; -inf at 0,
 * +inf at 1, NaN outside [0, 1]): weft's own functions in double (f32
 * rounds the double result; integers and bool compute in f64), the same
 * on every tier. */
WEFT_API weft_value *weft_digamma(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_erfinv(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_ndtri(weft_ctx *cx, weft_value *a);
/* tf.experimental.numpy.log2, log10, exp2 and cbrt (the cube root,
 * negative for negative x): float functions as the ones above, each the
 * C libm function of its name on every tier, so NumPy's values (TensorFlow's
 * NumPy layer composes them: log(x) / log(2), 2 ** x, a power of |x|, a
 * rounding or two apart).  log2 and log10 are -inf at 0 and NaN below;
 * exp2 is 0 from -1075 (f64) down and +inf from 1024 up. */
WEFT_API weft_value *weft_log2(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_log10(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_exp2(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_cbrt(weft_ctx *cx, weft_value *a);
/* tf.experimental.numpy.hypot(x1, x2): sqrt(x1^2 + x2^2) elementwise,
 * C's hypot (no overflow or underflow on the way; +inf when either is
 * infinite, even beside a NaN), broadcast and promoted as atan2.  Its
 * gradient is x1 / h and x2 / h, NaN at (0, 0) as TensorFlow's sqrt
 * form. */
WEFT_API weft_value *weft_hypot(weft_ctx *cx, weft_value *x1, weft_value *x2);
/* np.copysign(x1, x2): |x1| with the sign bit of x2, elementwise (C's
 * copysign: -0.0 and a NaN's sign bit count; a NaN x1 stays NaN),
 * broadcast and promoted as atan2.  Its gradient is g times the signs of
 * x1 and x2 (+-1 each, -0.0 negative) for x1, 0 for x2. */
WEFT_API weft_value *weft_copysign(weft_ctx *cx, weft_value *x1, weft_value *x2);
/* tf.experimental.numpy.gcd(x1, x2) and lcm(x1, x2): NumPy's greatest
 * common divisor and least common multiple of the magnitudes,
 * elementwise, broadcast as weft_add; i32 or i64 (else WEFT_EDTYPE).
 * gcd(0, 0) and lcm(0, x) are 0; the most negative integer's magnitude
 * and an lcm past the range wrap around, as NumPy's do.  No gradient. */
WEFT_API weft_value *weft_gcd(weft_ctx *cx, weft_value *x1, weft_value *x2);
WEFT_API weft_value *weft_lcm(weft_ctx *cx, weft_value *x1, weft_value *x2);
/* tf.experimental.numpy.logaddexp(x1, x2) = log(e^x1 + e^x2) and
 * logaddexp2 = log2(2^x1 + 2^x2), elementwise (broadcast and promoted as
 * atan2: integers and bool compute in f64, weak scalars take the other's
 * dtype), in NumPy's form max(x1, x2) + log1p(e^-|x1 - x2|) (log1p(2^-|d|)
 * / ln 2), which neither overflows nor loses a tiny share; where x1 - x2 is
 * NaN (a NaN, or two infinities of one sign) the result is x1 + x2. */
WEFT_API weft_value *weft_logaddexp(weft_ctx *cx, weft_value *x1, weft_value *x2);
WEFT_API weft_value *weft_logaddexp2(weft_ctx *cx, weft_value *x1, weft_value *x2);
/* tf.experimental.numpy.heaviside(x1, x2): 0 where x1 < 0, x2 where x1
 * is 0 (either zero), 1 where x1 > 0, NaN where x1 is NaN; broadcast and
 * promoted as atan2.  A composition of selections: the gradient is 0 for
 * x1 and reaches x2 where x1 is 0. */
WEFT_API weft_value *weft_heaviside(weft_ctx *cx, weft_value *x1, weft_value *x2);
/* tf.experimental.numpy.signbit(x): bool, whether the sign bit is set
 * (-0.0 and a negative NaN count, through weft_copysign; integers: x <
 * 0).  fix(x): rounded toward zero (ceil below 0, floor from 0; -0.0
 * stays), integers and bool in f64.  float_power(x1, x2): weft_pow in f64
 * whatever the dtypes (NumPy's; f32 is widened).  Bool x is WEFT_EDTYPE
 * for signbit. */
WEFT_API weft_value *weft_signbit(weft_ctx *cx, weft_value *x);
WEFT_API weft_value *weft_fix(weft_ctx *cx, weft_value *x);
WEFT_API weft_value *weft_float_power(weft_ctx *cx, weft_value *x1, weft_value *x2);
/* tf.experimental.numpy.deg2rad(x), rad2deg(x): x * (pi / 180) and x *
 * (180 / pi) in x's float dtype (integers and bool in f64), the constant
 * computed in that dtype as NumPy's (for f32, 180.0f / pi is one ulp
 * below TensorFlow's NumPy layer's (float)(180 / pi)). */
WEFT_API weft_value *weft_deg2rad(weft_ctx *cx, weft_value *x);
WEFT_API weft_value *weft_rad2deg(weft_ctx *cx, weft_value *x);
/* tf.experimental.numpy.divmod(x1, x2): outs[0] weft_floordiv(x1, x2),
 * outs[1] weft_mod(x1, x2) (Python's pair).  Returns 0, or the context's
 * error code with both NULL. */
WEFT_API int weft_divmod(weft_ctx *cx, weft_value *x1, weft_value *x2, weft_value **outs);
/* np.fmax(x1, x2), np.fmin(x1, x2): the larger (smaller) where a NaN
 * loses to a number (NaN only where both are), by NumPy's loop (x1 > x2
 * || isnan(x2)) ? x1 : x2 (< for fmin), so for equal values, zeros of both
 * signs among them, the result is x2.  Broadcast and promoted as
 * weft_maximum, which integers and bool use (nothing to ignore).
 * Gradients reach the chosen operand. */
WEFT_API weft_value *weft_fmax(weft_ctx *cx, weft_value *x1, weft_value *x2);
WEFT_API weft_value *weft_fmin(weft_ctx *cx, weft_value *x1, weft_value *x2);
/* np.modf(x): outs[0] the fractional part and outs[1] the integral part
 * (weft_fix), both with x's sign (C's modf: -0.0 and -3.0 for -3.0; 0 and
 * inf for inf; NaN for both for NaN), in x's float dtype (integers and
 * bool in f64).  The fractional part's gradient is 1 (the integral's 0).
 * Returns 0, or the context's error code with both NULL. */
WEFT_API int weft_modf(weft_ctx *cx, weft_value *x, weft_value **outs);
/* np.spacing(x): the distance from x to the next float away from zero,
 * nextafter(x, +-inf) - x with the sign of x (both zeros give the
 * smallest subnormal, as NumPy's), inf for the largest float, NaN for an
 * infinity or NaN; x's float dtype (integers and bool in f64, where
 * NumPy's bool gives f16).  No gradient (nextafter has none). */
WEFT_API weft_value *weft_spacing(weft_ctx *cx, weft_value *x);
/* np.ldexp(x1, x2): x1 * 2^x2 elementwise with one rounding (C's ldexp:
 * subnormal results exact where they can be, overflow to +-inf), x2
 * integers or bool (a float power is WEFT_EDTYPE, as NumPy's TypeError);
 * the result is x1's float dtype (integers and bool give f64, where
 * NumPy's bool gives f16), broadcast as weft_add.  A float function of
 * its own (the LDEXP op, libm's on every tier); the gradient in x1 is
 * ldexp(g, x2). */
WEFT_API weft_value *weft_ldexp(weft_ctx *cx, weft_value *x1, weft_value *x2);
/* np.frexp(x): outs[0] the mantissa in x's float dtype (integers and bool
 * in f64), outs[1] the i32 exponent, x = m 2^e with 0.5 <= |m| < 1;
 * 0, +-inf and NaN give themselves and exponent 0, as NumPy's (glibc's).
 * Subnormals as any number (m normal, e below the dtype's minimum).
 * Composed of log2, floor and weft_ldexp (exact: m is x's bits with
 * another exponent); the gradient of m in x is 2^-e.  Returns 0, or the
 * context's error code with both NULL. */
WEFT_API int weft_frexp(weft_ctx *cx, weft_value *x, weft_value **outs);
/* tf.experimental.numpy.nan_to_num(x, nan, posinf, neginf): NaN replaced
 * by nan, +inf by posinf, -inf by neginf, each rounded to x's dtype; an
 * infinite posinf (neginf) stands for NumPy's None, the dtype's largest
 * (lowest) finite number.  Integers and bool come back unchanged. */
WEFT_API weft_value *weft_nan_to_num(weft_ctx *cx, weft_value *x, double nan, double posinf,
                                     double neginf);
/* tf.experimental.numpy.around(x, decimals): NumPy's round to decimals
 * places, x * 10^d rounded half to even then / 10^d (d < 0: / 10^-d, round,
 * * 10^-d), in x's dtype with the factor rounded to it, as NumPy (TF's
 * NumPy layer always multiplies by 10^d, a rounding apart for d < 0).
 * Integers: unchanged for d >= 0, else computed in f64 and cast back.
 * decimals in -308..308; bool is WEFT_EDTYPE. */
WEFT_API weft_value *weft_around(weft_ctx *cx, weft_value *x, int decimals);
/* tf.experimental.numpy.sinc: sin(pi x) / (pi x), the normalized sinc,
 * elementwise in x's float dtype (integers and bool in f64), in NumPy's
 * formula: 0 is first replaced by 1e-20, which gives exactly 1 there and a
 * zero gradient; +-inf gives NaN (sin of inf), as in NumPy. */
WEFT_API weft_value *weft_sinc(weft_ctx *cx, weft_value *x);
/* tf.experimental.numpy.kron(a, b): the Kronecker product, NumPy's kron in
 * any rank (the operand of lower rank takes leading 1s): dim d of the
 * result is a.dims[d] * b.dims[d] and out[i * b.dims + j] = a[i] * b[j]
 * per dim, i.e. each element of a scales a whole copy of b.  Dtypes
 * promote as weft_mul (numbers only); every dim known while tracing and
 * the rank at most WEFT_MAX_RANK / 2 (4), else WEFT_ESHAPE.  A broadcast
 * multiply and a reshape, so gradients flow to both. */
WEFT_API weft_value *weft_kron(weft_ctx *cx, weft_value *a, weft_value *b);
/* tf.experimental.numpy.tril(m, k) and triu(m, k): m (rank >= 2, its last
 * two dims known while tracing) with the elements above (tril) or below
 * (triu) diagonal k of each matrix zeroed: tril keeps column j of row i
 * where j - i <= k, triu where j - i >= k (k 0 the main diagonal, > 0
 * above it).  Any dtype; tf.linalg.band_part's counts are from the main
 * diagonal only. */
WEFT_API weft_value *weft_tril(weft_ctx *cx, weft_value *m, int64_t k);
WEFT_API weft_value *weft_triu(weft_ctx *cx, weft_value *m, int64_t k);
/* tf.experimental.numpy.diff(a, n, axis): the n-th forward difference
 * along axis, a[1:] - a[:-1] applied n times (n >= 0; bool: a[1:] !=
 * a[:-1], as NumPy), so that dim shrinks by n (to 0 at the least).  a's
 * rank known while tracing; the dim may be unknown, then with n at most
 * 64 (each step records its ops; WEFT_EINVAL above). */
WEFT_API weft_value *weft_diff(weft_ctx *cx, weft_value *a, int64_t n, int axis);
/* tf.experimental.numpy.outer(a, b): [numel(a), numel(b)], a flattened as
 * a column times b flattened as a row (weft_mul's dtype rule). */
WEFT_API weft_value *weft_outer(weft_ctx *cx, weft_value *a, weft_value *b);
/* tf.experimental.numpy.isclose(a, b, rtol, atol, equal_nan) and
 * allclose: NumPy's test |a - b| <= atol + rtol |b| where b is finite, or
 * a == b (so equal infinities are close), or with equal_nan both NaN;
 * computed in the float dtype the two promote to (integers and bool in
 * f64), broadcast; a bool tensor, and for allclose whether every element
 * is close (a bool scalar; true when there is none).  NumPy's defaults:
 * rtol 1e-5, atol 1e-8; both finite and >= 0 (WEFT_EINVAL).  TensorFlow's
 * NumPy layer finds equal infinities not close (inf - inf is NaN); weft
 * follows NumPy. */
WEFT_API weft_value *weft_isclose(weft_ctx *cx, weft_value *a, weft_value *b, double rtol,
                                  double atol, bool equal_nan);
WEFT_API weft_value *weft_allclose(weft_ctx *cx, weft_value *a, weft_value *b, double rtol,
                                   double atol, bool equal_nan);
/* tf.experimental.numpy.array_equal(a1, a2) with NumPy's equal_nan: a
 * bool scalar, true where a1 and a2 have one shape and equal elements
 * (-0.0 equals 0.0; NaN equals NaN only where equal_nan).  Shapes that
 * differ give false, not an error, also where dims are unknown while
 * tracing (the shapes are then compared when the call runs); both ranks
 * must be known (WEFT_ESHAPE).  The dtypes promote as weft_eq's. */
WEFT_API weft_value *weft_array_equal(weft_ctx *cx, weft_value *a1, weft_value *a2,
                                      bool equal_nan);
/* tf.math.bessel_i0, bessel_i0e, bessel_i1 and bessel_i1e: the modified
 * Bessel functions of the first kind of orders 0 and 1, and the same
 * times exp(-|x|) (the scaled forms stay finite where the others
 * overflow, past |x| of about 713).  weft's own functions in double, as
 * digamma's. */
WEFT_API weft_value *weft_bessel_i0(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_bessel_i0e(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_bessel_i1(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_bessel_i1e(weft_ctx *cx, weft_value *a);
/* tf.math.special.bessel_j0, bessel_j1, bessel_y0 and bessel_y1: the
 * Bessel functions of the first (J) and second (Y) kind of orders 0 and
 * 1, through the C library's j0, j1, y0 and y1 in double (f32 rounds the
 * double result); y0 and y1 are -inf at 0 and NaN below, as
 * TensorFlow's. */
WEFT_API weft_value *weft_bessel_j0(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_bessel_j1(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_bessel_y0(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_bessel_y1(weft_ctx *cx, weft_value *a);
/* tf.math.special.bessel_k0, bessel_k0e, bessel_k1 and bessel_k1e: the
 * modified Bessel functions of the second kind of orders 0 and 1, and the
 * same times exp(x) (the scaled forms stay representable where K0 and K1
 * underflow, past x of about 700).  weft's own functions in double: the
 * power series up to 1, the trapezoid rule on the scaled integral
 * beyond; +inf at 0, NaN below, 0 at +inf. */
WEFT_API weft_value *weft_bessel_k0(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_bessel_k0e(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_bessel_k1(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_bessel_k1e(weft_ctx *cx, weft_value *a);
/* tf.math.special.expint, dawsn and spence, elementwise on f32 or f64:
 * expint(x) = Ei(x), the principal value of the integral of e^t / t from
 * -inf to x (-inf at 0; for x < 0, -E1(-x) as SciPy's expi, where
 * TensorFlow documents x > 0 only); dawsn(x) = e^-x^2 times the integral
 * of e^t^2 from 0 to x (Dawson's integral, odd); spence(x) = the integral
 * of ln t / (1 - t) from 1 to x = Li2(1 - x), for x >= 0 (NaN below;
 * pi^2 / 6 at 0).  weft's own in long double: series whose terms do not
 * cancel, and an asymptotic series or continued fraction beyond them. */
WEFT_API weft_value *weft_expint(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_dawsn(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_spence(weft_ctx *cx, weft_value *a);
/* tf.math.special.fresnel_cos and fresnel_sin: the integrals of
 * cos(pi t^2 / 2) and sin(pi t^2 / 2) from 0 to x, elementwise on f32 or
 * f64 (odd; 1/2 at +inf).  weft's own in long double: the power series up
 * to |x| = 2, erf's complex continued fraction beyond, with x^2 reduced
 * modulo 4 exactly so that large x keep their phase. */
WEFT_API weft_value *weft_fresnel_cos(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_fresnel_sin(weft_ctx *cx, weft_value *a);

/* tf.bitwise: bitwise_and, bitwise_or, bitwise_xor, invert (~a),
 * left_shift and right_shift (arithmetic: the sign is kept) on i32 and
 * i64 (bool and floats are WEFT_EDTYPE), broadcasting and promoting as the
 * binary ops above.  A shift amount is clamped to [0, bits - 1] (TensorFlow's
 * kernels do the same; C leaves the others undefined). */
WEFT_API weft_value *weft_bitwise_and(weft_ctx *cx, weft_value *a, weft_value *b);
WEFT_API weft_value *weft_bitwise_or(weft_ctx *cx, weft_value *a, weft_value *b);
WEFT_API weft_value *weft_bitwise_xor(weft_ctx *cx, weft_value *a, weft_value *b);
WEFT_API weft_value *weft_left_shift(weft_ctx *cx, weft_value *a, weft_value *b);
WEFT_API weft_value *weft_right_shift(weft_ctx *cx, weft_value *a, weft_value *b);
WEFT_API weft_value *weft_invert(weft_ctx *cx, weft_value *a);

/* Tests of each element, with a bool result of a's shape: is_nan (NaN of
 * any sign or payload), is_inf (+inf or -inf), is_finite (neither).
 * Integers are never NaN nor infinite: false, false and true (TensorFlow
 * refuses integers here).  Bool is WEFT_EDTYPE, as for arithmetic.  On a
 * weak scalar the result is an ordinary bool scalar, as a comparison's. */
WEFT_API weft_value *weft_is_nan(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_is_inf(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_is_finite(weft_ctx *cx, weft_value *a);
/* NumPy's isposinf and isneginf: bool of x's shape, whether each element
 * is +inf (-inf).  Integers are never infinite (false); bool is
 * WEFT_EDTYPE, as for weft_is_inf. */
WEFT_API weft_value *weft_isposinf(weft_ctx *cx, weft_value *x);
WEFT_API weft_value *weft_isneginf(weft_ctx *cx, weft_value *x);

/* Conversion, as NumPy's astype and TensorFlow's cast except where noted.
 * Float to integer truncates toward zero and saturates: 1e10 -> INT32_MAX,
 * -inf -> INT64_MIN, and NaN -> 0 (XLA's rule; NumPy and TensorFlow on x86
 * give INT_MIN).  Integer to narrower integer wraps (keeps the low bits:
 * i64 3000000000 -> i32 -1294967296), as in NumPy, TensorFlow and C.  f64 to
 * f32 rounds to nearest; beyond the f32 range it gives +-inf (1e300 -> inf).
 * Integer to float rounds to nearest.  To bool: anything non-zero (NaN
 * included) is true; from bool: 0 or 1. */
WEFT_API weft_value *weft_cast(weft_ctx *cx, weft_value *a, weft_dtype to);
/* tf.bitcast(input, type): a's bytes read as dtype `to`, in the machine's
 * byte order (x86-64: little-endian).  Equal sizes keep the shape (f32 to
 * i32, i64 to f64); an 8-byte dtype to a 4-byte one appends a dim of 2 (the
 * lower-addressed half first); a 4-byte dtype to an 8-byte one drops the
 * last dim, which must be 2 (WEFT_ESHAPE; checked when the function runs
 * if unknown while tracing).  bool on either side is WEFT_EDTYPE, as in
 * TensorFlow.  Not differentiable (TensorFlow's has no gradient either). */
WEFT_API weft_value *weft_bitcast(weft_ctx *cx, weft_value *a, weft_dtype to);
/* cond ? a : b elementwise; cond is bool; all three broadcast; a and b
 * promote like the operands of a binary op (a weak scalar takes the other's
 * dtype). */
WEFT_API weft_value *weft_where(weft_ctx *cx, weft_value *cond, weft_value *a, weft_value *b);

/* Reductions over one axis (negative counts from the end) or WEFT_ALL_AXES;
 * the axis is removed from the shape.  sum keeps the dtype, as TensorFlow's
 * reduce_sum does (NumPy's sum widens i32 to i64): an i32 sum wraps around
 * (INT32_MAX + 1 gives INT32_MIN); cast to i64 first for a wider
 * accumulator.  sum of bool counts the true elements as i64.  mean of an
 * integer or bool computes in f64 (NumPy's rule; TensorFlow's reduce_mean
 * keeps the integer dtype and truncates).  Over an empty
 * axis: sum is 0, mean NaN, and reduce_max the dtype's lowest value (-inf,
 * INT32_MIN, INT64_MIN, false).  The same as weft_reduce with one axis (or
 * none) and keepdims false. */
WEFT_API weft_value *weft_sum(weft_ctx *cx, weft_value *a, int axis);
WEFT_API weft_value *weft_mean(weft_ctx *cx, weft_value *a, int axis);
WEFT_API weft_value *weft_reduce_max(weft_ctx *cx, weft_value *a, int axis);

/* Reductions over a set of axes.  axes[0..n_axes) may be negative (counted
 * from the end); NULL or n_axes 0 reduces every axis; an axis out of range
 * or given twice is WEFT_EINVAL.  keepdims keeps the reduced axes as 1s
 * (so the result broadcasts against a), else they are removed.
 *
 *   reduction   result dtype                    over no elements
 *   SUM         bool: i64; else a's (ints wrap)  0
 *   PROD        bool: i64; else a's (ints wrap)  1
 *   MEAN        float: a's; int, bool: f64       NaN
 *   MAX, MIN    a's                              MAX: -inf, INT_MIN, false;
 *                                                MIN: +inf, INT_MAX, true
 *   ANY, ALL    bool (non-zero is true)          ANY: false; ALL: true
 *   VAR, STD    float: a's; int, bool: f64       NaN
 *
 * MAX and MIN propagate NaN.  VAR is the mean of the squared deviations
 * from the mean (NumPy's ddof = 0), computed in two passes; STD is its
 * square root; both appear as those ops in weft_function_print_ops.
 *
 * Order of float reductions (SUM, PROD, MEAN, VAR, STD): each result
 * element combines its reduced elements in row-major order of the reduced
 * axes, in fixed chunks of 1024 consecutive elements; a chunk accumulates
 * one element after the other, the chunks' partial results are combined in
 * chunk order.  f32 inputs accumulate in f64 and round once at the end.
 * The chunks do not depend on the worker count, so the result is the same
 * bit for bit on any number of workers, eagerly, traced (fused or not, on
 * the interpreter or as native code, which keeps this order) and when the
 * compiler folds it into a constant.  It may differ in the last
 * bits from a plain left-to-right loop (for over 1024 elements) and from
 * NumPy's pairwise summation. */
typedef enum weft_reduction {
    WEFT_R_SUM, WEFT_R_MEAN, WEFT_R_MAX, WEFT_R_MIN, WEFT_R_PROD,
    WEFT_R_ANY, WEFT_R_ALL, WEFT_R_VAR, WEFT_R_STD
} weft_reduction;
WEFT_API weft_value *weft_reduce(weft_ctx *cx, weft_reduction r, weft_value *a,
                                 const int *axes, size_t n_axes, bool keepdims);
/* tf.experimental.numpy.nansum, nanprod, nanmean and ptp over axes as
 * weft_reduce's: nansum and nanprod read a NaN as 0 (1); nanmean is the
 * sum of the numbers over their count (NaN where there are none); ptp is
 * the maximum minus the minimum (NaN propagates; bool is WEFT_EDTYPE).
 * On integers and bool the nan forms are weft_reduce's SUM, PROD and
 * MEAN. */
WEFT_API weft_value *weft_nansum(weft_ctx *cx, weft_value *a, const int *axes, size_t n_axes,
                                 bool keepdims);
WEFT_API weft_value *weft_nanprod(weft_ctx *cx, weft_value *a, const int *axes, size_t n_axes,
                                  bool keepdims);
WEFT_API weft_value *weft_nanmean(weft_ctx *cx, weft_value *a, const int *axes, size_t n_axes,
                                  bool keepdims);
WEFT_API weft_value *weft_ptp(weft_ctx *cx, weft_value *a, const int *axes, size_t n_axes,
                              bool keepdims);
/* NumPy's nanargmax(a, axis) and nanargmin: weft_argmax (weft_argmin) of
 * a with its NaNs left out (read as -inf, +inf); axis as weft_argmax's
 * (WEFT_ALL_AXES: the index into the flattened tensor).  A slice of NaNs
 * only fails the call when it runs (WEFT_EINVAL, "All-NaN slice
 * encountered", NumPy's ValueError); integers and bool are weft_argmax's
 * (weft_argmin's). */
WEFT_API weft_value *weft_nanargmax(weft_ctx *cx, weft_value *a, int axis);
WEFT_API weft_value *weft_nanargmin(weft_ctx *cx, weft_value *a, int axis);
/* NumPy's nanmax and nanmin over axes as weft_reduce's: the extreme of
 * the numbers, NaN where there are none (NumPy warns); integers are
 * weft_reduce's MAX and MIN, bool is WEFT_EDTYPE.  nanvar and nanstd: the
 * variance (its square root) of the numbers, sum((x - mean)^2) / (count -
 * ddof) with NaNs left out, NaN where count - ddof <= 0; a float dtype as
 * weft_reduce's VAR (integers and bool compute in f64), ddof >= 0
 * (WEFT_EINVAL otherwise); weft's order of summation, not NumPy's
 * pairwise one, so the last bits may differ. */
WEFT_API weft_value *weft_nanmax(weft_ctx *cx, weft_value *a, const int *axes, size_t n_axes,
                                 bool keepdims);
WEFT_API weft_value *weft_nanmin(weft_ctx *cx, weft_value *a, const int *axes, size_t n_axes,
                                 bool keepdims);
WEFT_API weft_value *weft_nanvar(weft_ctx *cx, weft_value *a, const int *axes, size_t n_axes,
                                 int ddof, bool keepdims);
WEFT_API weft_value *weft_nanstd(weft_ctx *cx, weft_value *a, const int *axes, size_t n_axes,
                                 int ddof, bool keepdims);
/* NumPy's nancumsum and nancumprod: weft_cumsum and weft_cumprod along
 * axis (WEFT_ALL_AXES: of the flattened tensor, 1-D) with each NaN read
 * as 0 (1); their dtypes (bool gives i64, f32 computes in f64 and rounds
 * each result). */
WEFT_API weft_value *weft_nancumsum(weft_ctx *cx, weft_value *a, int axis);
WEFT_API weft_value *weft_nancumprod(weft_ctx *cx, weft_value *a, int axis);
/* tf.experimental.numpy.average(a, axis, weights): weft_reduce's mean
 * over axis (or WEFT_ALL_AXES) without weights (NULL), else sum(a w) /
 * sum(w) in the float dtype the two promote to, w of a's rank
 * (broadcasting to its shape) or a vector laid along a single axis.  A
 * zero sum of weights gives inf or NaN (NumPy raises). */
WEFT_API weft_value *weft_average(weft_ctx *cx, weft_value *a, int axis, weft_value *weights);
/* tf.experimental.numpy.average(..., returned=True): outs[0] weft_average
 * and outs[1] the sum of the weights over axis (without weights, the
 * count of the averaged elements), in the average's dtype and shape.
 * Returns 0, or the context's error code with outs NULL. */
WEFT_API int weft_average_returned(weft_ctx *cx, weft_value *a, int axis, weft_value *weights,
                                   weft_value **outs);
/* tf.experimental.numpy.inner(a, b): the sum of products over the last
 * axes of both (a scalar multiplies); vdot(a, b): both flattened, their
 * dot product (a scalar).  weft_tensordot's product and promotion. */
WEFT_API weft_value *weft_inner(weft_ctx *cx, weft_value *a, weft_value *b);
WEFT_API weft_value *weft_vdot(weft_ctx *cx, weft_value *a, weft_value *b);
/* NumPy's quantile(a, q, axis, method, keepdims) (tfp.stats.percentile's
 * interpolations): a sorted along axis (WEFT_ALL_AXES: a flattened), read
 * at (n - 1) q for an axis of n.  q is a value of any real dtype and any
 * rank known while tracing, read as f64: a new q never retraces; one
 * outside [0, 1] (NaN included) fails the call, when it runs, with
 * WEFT_EINVAL ("weft_quantile: q is not in [0, 1]").  The result has q's
 * dims, then a's without axis (kept as 1 where keepdims; every axis, for
 * WEFT_ALL_AXES).  The methods are NumPy's thirteen: LINEAR interpolates
 * with NumPy's formula (below t = 1/2: lo + (hi - lo) t, else hi - (hi -
 * lo) (1 - t), the difference taken in a's dtype, the rest in f64),
 * MIDPOINT halfway between the two neighbours (the element itself on
 * one), AVERAGED_INVERTED_CDF the next element or halfway to it, and
 * INTERPOLATED_INVERTED_CDF, HAZEN, WEIBULL, MEDIAN_UNBIASED and
 * NORMAL_UNBIASED interpolate at Hyndman and Fan's index n q + alpha +
 * q (1 - alpha - beta) - 1 (NumPy's order); these give a's float dtype
 * (f64 for integers; an f32 a gets NumPy 1.24's f64 result rounded),
 * while LOWER, HIGHER, NEAREST (halves to even, np.around's),
 * INVERTED_CDF and CLOSEST_OBSERVATION pick an element and keep a's
 * dtype.  A row with a NaN gives
 * NaN (NaN sorts last).  Where an infinite neighbour makes NumPy's form
 * NaN (inf - inf), the other form is taken, then the neighbour itself if
 * both are one, as NumPy's interp does (NumPy 1.24's quantile gives NaN):
 * 2 and inf interpolate to inf, -inf and inf to NaN.  a may be any
 * real dtype but bool (WEFT_EDTYPE); an empty axis is WEFT_EINVAL (while
 * tracing a dim unknown then: the call fails when it runs).  weft_percentile
 * takes q in [0, 100] (divided by 100 first, as NumPy); weft_median is
 * NumPy's median: the middle element, or the mean of the middle two,
 * (lo + hi) / 2 in a's float dtype.  The gradient is the sort's and the
 * gathers': it flows to the elements read. */
typedef enum weft_quantile_method {
    WEFT_QUANTILE_LINEAR = 0,
    WEFT_QUANTILE_LOWER,
    WEFT_QUANTILE_HIGHER,
    WEFT_QUANTILE_NEAREST,
    WEFT_QUANTILE_MIDPOINT,
    WEFT_QUANTILE_INVERTED_CDF,
    WEFT_QUANTILE_AVERAGED_INVERTED_CDF,
    WEFT_QUANTILE_CLOSEST_OBSERVATION,
    WEFT_QUANTILE_INTERPOLATED_INVERTED_CDF,
    WEFT_QUANTILE_HAZEN,
    WEFT_QUANTILE_WEIBULL,
    WEFT_QUANTILE_MEDIAN_UNBIASED,
    WEFT_QUANTILE_NORMAL_UNBIASED
} weft_quantile_method;
WEFT_API weft_value *weft_quantile(weft_ctx *cx, weft_value *a, weft_value *q, int axis,
                                   weft_quantile_method method, bool keepdims);
WEFT_API weft_value *weft_percentile(weft_ctx *cx, weft_value *a, weft_value *q, int axis,
                                     weft_quantile_method method, bool keepdims);
WEFT_API weft_value *weft_median(weft_ctx *cx, weft_value *a, int axis, bool keepdims);
/* NumPy's nanquantile, nanpercentile and nanmedian: as weft_quantile,
 * weft_percentile and weft_median of each row's numbers, its NaNs left
 * out (NaN for a row of NaN only; NumPy warns).  On integers they are the
 * plain forms.  nanmedian takes the middle element of an odd count
 * (NumPy's path for axes of 600 or more; below, np.ma.median's (x + x) / 2
 * differs only where x + x overflows). */
WEFT_API weft_value *weft_nanquantile(weft_ctx *cx, weft_value *a, weft_value *q, int axis,
                                      weft_quantile_method method, bool keepdims);
WEFT_API weft_value *weft_nanpercentile(weft_ctx *cx, weft_value *a, weft_value *q, int axis,
                                        weft_quantile_method method, bool keepdims);
WEFT_API weft_value *weft_nanmedian(weft_ctx *cx, weft_value *a, int axis, bool keepdims);
/* NumPy's cov(m, rowvar, ddof): the covariance matrix of the variables
 * of m (rows where rowvar, else columns, but a single row [1, N] known
 * while tracing stays one variable, as NumPy's; a vector is one variable,
 * whose result is a scalar), each centred on its mean, X X^T / (N - ddof) for N
 * observations (NumPy's default is ddof 1; its bias=True is ddof 0;
 * N - ddof <= 0 gives inf or NaN, as NumPy's warning case).  corrcoef(x,
 * rowvar): cov divided by the outer product of its diagonal's square
 * roots, then clipped to [-1, 1] (NumPy's steps).  A float dtype as
 * weft_matmul's (integers compute in f64; bool is WEFT_EDTYPE); m of rank
 * 1 or 2 (WEFT_ESHAPE otherwise); ddof >= 0 (WEFT_EINVAL).  A dim unknown
 * while tracing is not squeezed: one variable then gives a 1 x 1 matrix. */
WEFT_API weft_value *weft_cov(weft_ctx *cx, weft_value *m, bool rowvar, int ddof);
WEFT_API weft_value *weft_corrcoef(weft_ctx *cx, weft_value *x, bool rowvar);
/* NumPy's cov(m, y, rowvar, ddof=ddof, fweights, aweights): weft_cov
 * with y's variables (NULL for none; a vector or a matrix read as m is,
 * with as many observations, checked when the call runs) after m's, and
 * weights per observation (NULL for none): fweights whole numbers >= 0,
 * aweights numbers >= 0, vectors as long as the observations (WEFT_EINVAL
 * when the call runs otherwise).  NumPy's steps with weights w =
 * fweights * aweights: each variable centred on its weighted mean
 * sum(x w) / sum(w), X (X w)^T times 1 / fact with fact sum(w) (ddof 0),
 * sum(w) - ddof (no aweights) or sum(w) - ddof sum(w aweights) / sum(w),
 * inf past 0.  weft_cov's dtypes (the weights take the variables' float
 * dtype) and shapes (m one variable and no y: a scalar). */
WEFT_API weft_value *weft_cov_ex(weft_ctx *cx, weft_value *m, weft_value *y, bool rowvar,
                                 int ddof, weft_value *fweights, weft_value *aweights);
/* NumPy's interp(x, xp, fp, left, right): the piecewise-linear function
 * through the points (xp, fp) (xp increasing, not checked, as NumPy) at
 * each x, of x's shape, in f64 (every operand, bool included, read as
 * f64).  NumPy's compiled formula: slope
 * (fp[j+1] - fp[j]) / (xp[j+1] - xp[j]) times (x - xp[j]) plus fp[j],
 * from the right end where that is NaN, fp[j] at x == xp[j]; below xp[0]
 * left, above the last point right (NULL: fp's first and last), a NaN x
 * gives NaN (NumPy 1.24 gives fp[0] for a single point).  xp and fp are
 * vectors of one length, at least 1 (WEFT_ESHAPE; lengths unknown while
 * tracing are checked when the call runs); left and right scalars. */
WEFT_API weft_value *weft_interp(weft_ctx *cx, weft_value *x, weft_value *xp, weft_value *fp,
                                 weft_value *left, weft_value *right);
/* NumPy's interp(x, xp, fp, period=period): the periodic function
 * through the points, NumPy's steps: x and xp taken modulo |period|
 * (weft_mod, Python's sign rule), the points sorted by xp (a stable sort:
 * equal xp keep their order, where NumPy's sort promises none), one point
 * more a period away at either end, then weft_interp of them.  period
 * finite and nonzero (WEFT_EINVAL); the rest as weft_interp (f64; no left
 * or right, as NumPy ignores them with a period). */
WEFT_API weft_value *weft_interp_periodic(weft_ctx *cx, weft_value *x, weft_value *xp,
                                          weft_value *fp, double period);
/* NumPy's digitize(x, bins, right): for each x the i64 index of its bin
 * among monotonic bins (a vector): with increasing bins i such that
 * bins[i-1] <= x < bins[i] (right: bins[i-1] < x <= bins[i]), with
 * decreasing ones bins[i-1] > x >= bins[i] (right: >, >); 0 and len(bins)
 * outside; NaN sorts last (weft_sort's order).  Bins neither increasing
 * nor decreasing (a NaN among them included) fail the call when it runs
 * (WEFT_EINVAL, as NumPy's ValueError).  x and bins promote to one dtype
 * (not bool: WEFT_EDTYPE); the result has x's shape. */
WEFT_API weft_value *weft_digitize(weft_ctx *cx, weft_value *x, weft_value *bins, bool right);
/* NumPy's histogram(a, bins, range) with bins equal bins: outs[0] the i64
 * counts [bins], outs[1] the edges [bins + 1] (np.linspace of the outer
 * edges, in a's float dtype, f64 for integers).  The outer edges are
 * range[0..2) (finite, min <= max; WEFT_EINVAL otherwise), or with range
 * NULL a's minimum and maximum when the function runs ((0, 1) for no
 * values; a NaN or an infinity there fails the call with WEFT_EINVAL, as
 * NumPy's ValueError); equal ones are widened by 1/2 each way.  Every bin
 * is half open but the last, which holds its right edge; values outside
 * the range and NaN are not counted.  NumPy's steps, each value's bin
 * from (x - lo) / (hi - lo) * bins corrected by one against the edges, so
 * the counts are NumPy's.  a: any shape, any numbers but bool
 * (WEFT_EDTYPE); bins in [1, 2^31) (WEFT_EINVAL).  Returns 0, or the
 * context's error code with outs[0] and outs[1] NULL (outs NULL is
 * WEFT_EINVAL). */
WEFT_API int weft_histogram(weft_ctx *cx, weft_value *a, int64_t bins, const double *range,
                            weft_value **outs);
/* NumPy's histogram(a, bins=edges, weights): the counts of a's values
 * (flattened) in the bins between consecutive edges (a vector, a traced
 * value: new edges never retrace), [edges[i], edges[i+1]) and the last
 * closed; values outside and NaN are not counted.  Edges that are empty
 * or decrease fail the call when it runs (WEFT_EINVAL, NumPy's
 * ValueError), and so does a NaN edge (NumPy lets one through); equal
 * ones make an empty bin.  a and edges promote to one dtype (numbers,
 * not bool: WEFT_EDTYPE).  Without weights (NULL) the
 * counts are i64; with them (a's size, any numbers; bool counts as i64)
 * the sums of their weights in the weights' dtype, in a's order
 * (weft_bincount's): NumPy's own order for equal bins (pass
 * weft_histogram's outs[1] as edges), while for explicit edges NumPy
 * subtracts cumulative sums of the sorted weights, which may round
 * otherwise. */
WEFT_API weft_value *weft_histogram_by_edges(weft_ctx *cx, weft_value *a, weft_value *edges,
                                             weft_value *weights);
/* np.histogram's density: hist / diff(edges) / sum(hist) in NumPy's
 * order, f64, for the counts or sums hist (a vector of numbers) and their
 * edges (one longer; WEFT_ESHAPE, or WEFT_EINVAL when the call runs where
 * a length is unknown while tracing), as weft_histogram or
 * weft_histogram_by_edges give them.  An empty histogram is NaN, as
 * NumPy's 0 / 0.  The widths are taken in edges' dtype; the sum as
 * weft_sum's (f32 sums rounded once, where NumPy's f32 sum rounds at
 * each step). */
WEFT_API weft_value *weft_histogram_density(weft_ctx *cx, weft_value *hist, weft_value *edges);
/* NumPy's histogramdd(sample, bins, range, weights) for sample [N, D] (D
 * known while tracing, 1 to WEFT_MAX_RANK; N may be unknown) with
 * bins[d] equal bins per dim (in [1, 2^31)), range[d] each dim's outer
 * edges (finite, min <= max; NULL: the column's extremes when the call
 * runs, as weft_histogram's): outs[0] the f64 histogram [bins[0], ..],
 * counts or sums of the weights (N values, read as f64, summed in
 * order: NumPy's bits), outs[1 + d] dim d's f64 edges (np.linspace).
 * Each value's bin by binary search among its dim's edges, the last
 * closed; a sample outside any dim's edges (NaN included) is not
 * counted.  histogram2d(x, y, bins, range, weights): the same for the
 * two vectors x and y (outs[0..3)).  Returns 0, or the context's error
 * code with outs[] NULL. */
WEFT_API int weft_histogramdd(weft_ctx *cx, weft_value *sample, const int64_t *bins,
                              const double (*range)[2], weft_value *weights, weft_value **outs);
WEFT_API int weft_histogram2d(weft_ctx *cx, weft_value *x, weft_value *y, const int64_t *bins,
                              const double (*range)[2], weft_value *weights, weft_value **outs);
/* np.histogramdd(sample, bins=[edges...], weights)[0]: the f64 histogram
 * of sample [N, D] (D known while tracing) in the bins between the
 * consecutive edges[d] of each dim (n_edges == D vectors of numbers, each
 * of a length known while tracing, its values traced: new edges never
 * retrace), [len(edges[0]) - 1, ...].  Each value's bin by NumPy's steps
 * (searchsorted's side right, a value on the last edge in the last bin);
 * a sample outside any dim's edges (NaN included) is not counted; an
 * edge repeated makes an empty bin.  Edges that are empty, NaN or
 * decrease fail the call when it runs (WEFT_EINVAL, NumPy's ValueError);
 * weights as weft_histogramdd's.  Values and edges compare in their
 * promoted dtype. */
WEFT_API weft_value *weft_histogramdd_by_edges(weft_ctx *cx, weft_value *sample,
                                               weft_value *const *edges, size_t n_edges,
                                               weft_value *weights);
/* NumPy's trapz(y, x, dx, axis) (NumPy 2's trapezoid): the integral of y
 * along axis by the trapezoidal rule, the sum over i of
 * d[i] * (y[i+1] + y[i]) / 2 (NumPy's order), where d is x's differences
 * along axis (x a vector as long as that dim, or of y's shape) or, with x
 * NULL, dx.  The result is y's shape without axis, in y's float dtype
 * promoted with x's (integers and bool read as f64).  A dim of 0 or 1
 * integrates to 0.  y's rank must be known; x's length must match (a
 * vector's, checked when the call runs where unknown while tracing). */
WEFT_API weft_value *weft_trapezoid(weft_ctx *cx, weft_value *y, weft_value *x, double dx,
                                    int axis);
/* NumPy's gradient(f, spacing, axis=axis, edge_order) along one axis:
 * second-order central differences inside, one-sided differences of
 * order edge_order (1 or 2, WEFT_EINVAL otherwise) at the two ends; f's
 * shape, in f's float dtype (integers read as f64; bool is WEFT_EDTYPE).
 * spacing NULL is 1; a scalar is the step; a vector, as long as f's dim,
 * holds the coordinates (equal differences take the scalar path, as
 * NumPy).  NumPy's formulas in NumPy's dtypes: the step's coefficients in
 * f64 and the arithmetic in f's dtype; uneven coordinates' coefficients
 * in their float dtype (f64 for integers), applied in that dtype promoted
 * with f's.  A dim below edge_order + 1, or coordinates of another
 * length, fail the call (when it runs, where unknown while tracing). */
WEFT_API weft_value *weft_gradient(weft_ctx *cx, weft_value *f, weft_value *spacing, int axis,
                                   int edge_order);
/* NumPy's unwrap(p, discont, axis, period): p with each step along axis
 * whose size is at least discont (NaN: NumPy's None, period / 2) moved
 * by a multiple of period into [-period / 2, period / 2] (a step of
 * exactly half a period keeps its sign), the corrections summed along
 * the axis.  p's float dtype (integers and bool read as f64); period
 * finite and > 0 (WEFT_EINVAL).  NumPy's formula: the step's remainder
 * by weft_mod (Python's sign rule), a cumulative sum of corrections. */
WEFT_API weft_value *weft_unwrap(weft_ctx *cx, weft_value *p, double discont, int axis,
                                 double period);
/* NumPy's ediff1d(ary, to_end, to_begin): the differences of ary
 * flattened (a[1:] - a[:-1], ary's dtype: integers wrap), after to_begin
 * and before to_end (each NULL for none, flattened, cast to ary's dtype;
 * a float end for an integer ary is WEFT_EDTYPE, NumPy's same_kind rule).
 * ary is a number, not bool (WEFT_EDTYPE, as NumPy's subtract). */
WEFT_API weft_value *weft_ediff1d(weft_ctx *cx, weft_value *ary, weft_value *to_end,
                                  weft_value *to_begin);
/* NumPy's modes for weft_convolve and weft_correlate: every overlap
 * (n + m - 1 elements), the middle max(n, m), or only the full overlaps
 * (max(n, m) - min(n, m) + 1). */
typedef enum weft_convolve_mode {
    WEFT_CONVOLVE_FULL = 0,
    WEFT_CONVOLVE_SAME,
    WEFT_CONVOLVE_VALID
} weft_convolve_mode;
/* NumPy's convolve(a, v, mode) and correlate(a, v, mode) of two vectors:
 * convolve's element k is the sum over j of a[k - j] v[j], correlate's
 * the sum of a[k + j] v[j] counted from the full overlap's start (NumPy's
 * defaults are FULL for convolve and VALID for correlate).  Both f32 or
 * both f64 (WEFT_EDTYPE otherwise; cast integers first), neither empty
 * (WEFT_EINVAL, when the call runs where unknown while tracing), and one
 * of the two lengths known while tracing (WEFT_ESHAPE otherwise): that
 * one (the shorter if both) is the filter of a weft_conv1d, so the sums
 * are the BLAS's, not NumPy's order. */
WEFT_API weft_value *weft_convolve(weft_ctx *cx, weft_value *a, weft_value *v,
                                   weft_convolve_mode mode);
WEFT_API weft_value *weft_correlate(weft_ctx *cx, weft_value *a, weft_value *v,
                                    weft_convolve_mode mode);
/* NumPy's polynomial routines on coefficient vectors, highest power
 * first (a scalar reads as a vector of one), lengths known or not while
 * tracing.  polyadd(a1, a2) and polysub: the shorter padded with zeros in
 * front, then weft_add / weft_sub (their promotion; bool is WEFT_EDTYPE,
 * where NumPy's bool polyadd is a logical or).  polymul(a1, a2): the
 * product polynomial, NumPy's poly1d steps: leading zeros of both trimmed
 * first (an all-zero or empty operand reads as [0]), so the result's
 * length, (t1 + t2 - 1) for the trimmed lengths, is known when the call
 * runs; weft_mul's promotion (numbers, not bool), each coefficient a sum
 * of products in weft_sum's order over a matrix of (n1 + 1)(n1 + n2 + 1)
 * products: for polynomials, not long signals (weft_convolve).
 * polyder(p, m): the m-th derivative, m >= 0 (m 0 returns p; m at most
 * 1000 where p's length is unknown while tracing: the steps are
 * unrolled); NumPy's dtypes: i64 for integers and bool, f64 for floats
 * (its arange is i64).  polyint(p, m, k, n_k): the m-th
 * antiderivative in f64 (NumPy's true division), the constant of the
 * i-th integration k[i] (n_k 0: zeros; 1: k[0] for each; else n_k >= m,
 * WEFT_EINVAL otherwise, as m outside [0, 1000]).  polyder and polyint of an empty p
 * give an empty vector and [k[0]] as NumPy. */
WEFT_API weft_value *weft_polyadd(weft_ctx *cx, weft_value *a1, weft_value *a2);
WEFT_API weft_value *weft_polysub(weft_ctx *cx, weft_value *a1, weft_value *a2);
WEFT_API weft_value *weft_polymul(weft_ctx *cx, weft_value *a1, weft_value *a2);
WEFT_API weft_value *weft_polyder(weft_ctx *cx, weft_value *p, int m);
WEFT_API weft_value *weft_polyint(weft_ctx *cx, weft_value *p, int m, const double *k,
                                  size_t n_k);
/* NumPy's polyval(p, x) for a coefficient vector p (weft_polyval takes
 * TensorFlow's list of values): y = 0 of x's shape, then y = y x + p[i]
 * for each coefficient, highest power first (NumPy's steps: an infinite
 * x gives NaN).  p's length known while tracing (WEFT_ESHAPE); numbers,
 * not bool (WEFT_EDTYPE).  The result has x's dtype, as NumPy's scalar
 * coefficients take it, but f64 for float p and integer x (an empty p
 * gives zeros of x's dtype). */
WEFT_API weft_value *weft_polyval_vector(weft_ctx *cx, weft_value *p, weft_value *x);
/* NumPy's polyfit(x, y, deg, w=w): the least-squares polynomial of degree
 * deg >= 0 (WEFT_EINVAL) through (x, y), [deg + 1] coefficients, highest
 * power first, or [deg + 1, K] for y [n, K] (a fit per column), in f64 as
 * NumPy (its vander promotes with int).  x is a vector of n >= 1 numbers,
 * n known while tracing (WEFT_ESHAPE); y and the weights w (NULL for
 * none; multiplying the residuals, not squared) have n rows, checked when
 * the call runs where unknown while tracing (WEFT_EINVAL).  NumPy's
 * steps: the Vandermonde matrix's columns scaled to unit norm, then the
 * minimum-norm solution by weft_pinv with NumPy's rcond, n eps of x's
 * float dtype: a rank-deficient fit gives that solution without NumPy's
 * RankWarning.  The SVDs differ (weft_pinv against LAPACK's gelsd), so the
 * last bits may.  Not NumPy's cov or full outputs. */
WEFT_API weft_value *weft_polyfit(weft_ctx *cx, weft_value *x, weft_value *y, int deg,
                                  weft_value *w);
/* np.polyfit(x, y, deg, w=w, cov=True) (unscaled false) or
 * cov="unscaled": outs[0] weft_polyfit's coefficients, outs[1] NumPy's
 * covariance inv(A^T A) / outer(scale, scale) of the scaled system A,
 * unless unscaled times the residuals' sum of squares over n - deg - 1
 * (so n must exceed deg + 1: WEFT_EINVAL otherwise, NumPy's
 * ValueError); [deg + 1, deg + 1] for a vector y, [deg + 1, deg + 1, K]
 * for y [n, K] (K 1 when unscaled, as NumPy's).  The residuals are
 * computed from the solution, where NumPy takes gelsd's: the last bits
 * may differ.  A rank below deg + 1 (where NumPy's residuals are empty
 * and its scaled covariance fails) gives the inverse of a singular
 * matrix.  Returns 0, or the context's error code with both NULL. */
WEFT_API int weft_polyfit_cov(weft_ctx *cx, weft_value *x, weft_value *y, int deg,
                              weft_value *w, bool unscaled, weft_value **outs);
/* np.poly(seq_of_zeros) of a vector of roots (a scalar reads as one): the
 * coefficients of the monic polynomial with those roots, highest power
 * first, n + 1 of them, in the roots' float dtype (f64 for integers and
 * bool), by NumPy's steps (ones((1,)) convolved with [1, -r] for each
 * root in turn: NumPy's values, a zero's sign aside); no roots give the
 * f64 scalar 1.0 as NumPy's.  The length must be known while tracing, at
 * most 1000 (the products are unrolled; WEFT_ESHAPE, WEFT_EINVAL).  Not
 * NumPy's matrix form (a characteristic polynomial: pass weft_eigvals'
 * roots where they are real). */
WEFT_API weft_value *weft_poly(weft_ctx *cx, weft_value *roots);
/* np.polydiv(u, v): outs[0] the quotient, outs[1] the remainder of the
 * coefficient vectors (or scalars) u by v, by NumPy's long division
 * (scale = 1 / v[0] and each quotient entry scale * r[k] in f64, the
 * updates of r in the vectors' float dtype: NumPy 1.24's bits for f32 and
 * f64; integers as f64).  The quotient has max(len u - len v + 1, 1)
 * entries (0 when u is shorter); the remainder loses its leading entries
 * that np.allclose calls 0 (|x| <= 1e-8; one always stays), so its length
 * is known only when the call runs.  u's and v's lengths must be known
 * while tracing, at least 1, u's at most 1001 (WEFT_ESHAPE, WEFT_EINVAL).
 * Returns the context's status; outs is cleared on failure. */
WEFT_API int weft_polydiv(weft_ctx *cx, weft_value *u, weft_value *v, weft_value **outs);

/* Shapes: one dim of dims may be -1 (inferred, like NumPy). */
WEFT_API weft_value *weft_reshape(weft_ctx *cx, weft_value *a, int rank, const int64_t *dims);
/* Matrix products, as NumPy's matmul (promotion as above):
 *   [m,k] x [k,n] -> [m,n];
 *   a 1-D operand is a vector: [k] x [k,n] -> [n], [m,k] x [k] -> [m], and
 *   [k] x [k] -> [] (a dot product);
 *   dims before the last two are batch dims, broadcast like an elementwise
 *   op's: [2,1,m,k] x [3,k,n] -> [2,3,m,n], and [k] x [4,k,n] -> [4,n].
 * WEFT_TRANSPOSE_A / WEFT_TRANSPOSE_B use the transpose of the last two
 * dims of a / b (a matrix, not a vector: for a 1-D operand the flag is
 * WEFT_ESHAPE) without moving its elements.  bool x bool is bool: the
 * logical or, over k, of the logical ands (NumPy's rule); a bool with a
 * number promotes as above.  Integers wrap around.  Errors: a scalar
 * operand or different inner dims (WEFT_ESHAPE), batch dims that do not
 * broadcast (WEFT_ESHAPE), unknown flag bits (WEFT_EINVAL).
 *
 * Floats are computed by OpenBLAS when weft was built with it, on weft's
 * workers only: while a weft product is in the BLAS, OpenBLAS's own thread
 * count is held at 1 (a pthreads build's count is process-wide, so a BLAS
 * call the program makes from another thread meanwhile runs on one thread;
 * docs/GUIDE.md says more).  The result is cut into tiles by its shape
 * alone, so it is the same bit for bit on any number of workers, eagerly,
 * traced and constant-folded; it may differ in the last bits from a naive
 * loop (the BLAS sums in its own order, with FMA).
 * flags holds an OR of weft_matmul_flags (an unsigned, since an OR of enum
 * constants is an int).  weft_matmul(cx, a, b) is weft_matmul_ex(cx, a, b,
 * 0). */
typedef enum weft_matmul_flags {
    WEFT_TRANSPOSE_A = 1u,
    WEFT_TRANSPOSE_B = 2u
} weft_matmul_flags;
WEFT_API weft_value *weft_matmul_ex(weft_ctx *cx, weft_value *a, weft_value *b, unsigned flags);
WEFT_API weft_value *weft_matmul(weft_ctx *cx, weft_value *a, weft_value *b);
/* tf.einsum(equation, *inputs) for 1 to 8 inputs: "ij,jk->ik",
 * "bij,bkj->bik", "ij->ji", "ij->" (a sum), "i,i->" (a dot product),
 * "...ij,...jk->...ik" (an ellipsis stands for the leading dims, aligned
 * from the right and broadcast as matmul's batch dims), or without "->"
 * the labels that occur once in alphabetical order.  Labels are letters;
 * a label repeated within an input takes that input's diagonal first
 * ("ii->i", "ii->" a trace, "bii->bi"; exact, a strided slice), its dim
 * known while tracing (WEFT_EINVAL otherwise).  Operands
 * are contracted pairwise from the left, each pair by one weft_matmul_ex
 * after summing out the labels needed nowhere else, so the dtypes promote
 * as matmul's.  Inputs' ranks must be known while tracing; where several
 * dims are grouped into one for a product, all but one of them must be
 * known too (WEFT_EINVAL).  Known dims of a label must agree
 * (WEFT_ESHAPE). */
WEFT_API weft_value *weft_einsum(weft_ctx *cx, const char *equation, weft_value *const *inputs,
                                 size_t n_inputs);

/* Weak scalar constants (see "Weak scalars" above): an i64[] / f64[]
 * scalar that takes the dtype of the tensor it meets. */
WEFT_API weft_value *weft_const_i64(weft_ctx *cx, int64_t v);
WEFT_API weft_value *weft_const_f64(weft_ctx *cx, double v);
/* A strong scalar of dtype dt: it promotes like a tensor of that dtype.  v
 * must be exactly representable for bool (0 or 1) and the integers
 * (WEFT_EINVAL naming v otherwise); for f32 it rounds. */
WEFT_API weft_value *weft_const(weft_ctx *cx, weft_dtype dt, double v);
/* A constant tensor (the context takes a reference). */
WEFT_API weft_value *weft_const_tensor(weft_ctx *cx, weft_tensor *t);
/* A tensor of dtype dt and shape dims filled with value. */
WEFT_API weft_value *weft_fill(weft_ctx *cx, weft_dtype dt, int rank, const int64_t *dims, double value);
/* [start, start+delta, ...) up to limit (exclusive), of dtype dt; delta != 0. */
WEFT_API weft_value *weft_range(weft_ctx *cx, weft_dtype dt, int64_t start, int64_t limit, int64_t delta);

/* Shapes, indexing and scans.  Axes may be negative (counted from the
 * end).  Results are new tensors, never views of an input; any dtype
 * unless said otherwise.  While tracing, a result dim that depends on a
 * dim unknown then stays unknown, and the checks that need it (a squeeze
 * of a dim that must be 1, split sizes that must add up, gather indices)
 * run on every call, failing the call with the message they would have
 * given eagerly.  Array arguments (perm, begin, sizes, ...) are borrowed
 * for the call only.  Elements move in chunks over the intra-op threads
 * like elementwise ops; the results never depend on the thread count. */

/* A slice end meaning "through the last element in the step's direction"
 * (Python's None: a[2:] and a[::-1]). */
#define WEFT_END INT64_MAX

/* Permutes the dims: result dim d is a's dim perm[d].  perm holds rank(a)
 * distinct axes (negative ones count from the end); NULL reverses the dims
 * (for a matrix, its transpose), also for a rank unknown while tracing. */
WEFT_API weft_value *weft_transpose(weft_ctx *cx, weft_value *a, const int *perm);
/* a[begin[d]:end[d]:step[d]] on every dim d, by Python's rules: negative
 * indices count from the end, indices past either end are clamped, a step
 * may be negative (not 0), and an empty range gives a dim of 0.  Each
 * array holds rank(a) entries; begin NULL starts every dim at its first
 * element in the step's direction, end NULL runs to WEFT_END, step NULL
 * is all 1.  a's rank must be known. */
WEFT_API weft_value *weft_slice(weft_ctx *cx, weft_value *a, const int64_t *begin,
                                const int64_t *end, const int64_t *step);
/* Cuts a along axis into n parts outs[0..n) (like tf.split): n equal parts
 * when sizes is NULL (the dim must be a multiple of n), else parts of
 * sizes[0..n) elements, one of which may be -1 for the rest; the sizes
 * must add up to the dim.  Returns 0, or the context's error code with
 * every outs[k] NULL.  Each part is a copy (a node of its own while
 * tracing). */
WEFT_API int weft_split(weft_ctx *cx, weft_value *a, size_t n, const int64_t *sizes, int axis,
                        weft_value **outs);
/* tf.unstack(a, num, axis): the num slices of a along axis, each without
 * that axis, into outs[0..num).  num must equal a's dim at axis, known
 * while tracing (the caller sizes outs by it).  Returns 0, or the
 * context's error code with every outs[k] NULL. */
WEFT_API int weft_unstack(weft_ctx *cx, weft_value *a, int axis, size_t num, weft_value **outs);
/* tf.meshgrid(*xs, indexing): n coordinate arrays outs[0..n) from the n
 * inputs xs (of one dtype; each flattened to 1-D, TensorFlow's rule, and
 * with its element count known while tracing).  With WEFT_MESHGRID_IJ
 * every output is [len(xs[0]), ..., len(xs[n-1])] and outs[k] repeats
 * xs[k] along dim k; WEFT_MESHGRID_XY (TensorFlow's default) swaps the
 * first two dims of that shape, as Cartesian x, y.  1 <= n <=
 * WEFT_MAX_RANK.  Returns 0, or the context's error code with every
 * outs[k] NULL. */
typedef enum weft_meshgrid_indexing { WEFT_MESHGRID_XY, WEFT_MESHGRID_IJ } weft_meshgrid_indexing;
WEFT_API int weft_meshgrid(weft_ctx *cx, weft_value *const *xs, size_t n,
                           weft_meshgrid_indexing indexing, weft_value **outs);
/* tf.experimental.numpy.broadcast_arrays(*args): each of vs[0..n) (n >=
 * 1) broadcast to their common shape (NumPy's rule; dims unknown while
 * tracing too), its values and dtype untouched, into outs[0..n).  Returns
 * 0, or the context's error code with every outs[k] NULL. */
WEFT_API int weft_broadcast_arrays(weft_ctx *cx, weft_value *const *vs, size_t n,
                                   weft_value **outs);
/* tf.experimental.numpy.flip(a, axis): a reversed along axes[0..n)
 * (negative ones from the end, each named once; n 0: every axis), one
 * weft_slice with step -1; fliplr and flipud flip axis 1 (a rank of 2 or
 * more) and axis 0 (1 or more).  a's rank must be known while tracing. */
WEFT_API weft_value *weft_flip(weft_ctx *cx, weft_value *a, const int *axes, size_t n);
WEFT_API weft_value *weft_fliplr(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_flipud(weft_ctx *cx, weft_value *a);
/* tf.experimental.numpy.ravel(a): a as one dim, weft_reshape's. */
WEFT_API weft_value *weft_ravel(weft_ctx *cx, weft_value *a);
/* tf.experimental.numpy.split(a, indices, axis) with a list of indices:
 * the n_indices + 1 parts a[:i0], a[i0:i1], ..., a[in-1:] along axis into
 * outs, each a Python slice (a negative index counts from the end, one
 * past it is clamped, a part that would run backwards is empty), so the
 * dim may be unknown while tracing.  indices may be NULL for none (one
 * part, a itself); at most 1023 indices.  Returns 0, or the context's
 * error code with outs[] NULL. */
WEFT_API int weft_split_at(weft_ctx *cx, weft_value *a, const int64_t *indices, size_t n_indices,
                           int axis, weft_value **outs);
/* tf.experimental.numpy.array_split(a, n, axis): n sections along axis,
 * the first len % n of them of len / n + 1 elements, the rest of len / n
 * (NumPy's; len known while tracing); hsplit, vsplit and dsplit(a, n): n
 * equal sections along axis 1 (0 for a vector), 0 (rank 2 or more) and 2
 * (rank 3 or more), as NumPy's split, refused by weft_split when the dim
 * is not a multiple of n.  1 <= n <= 1024.  Returns 0, or the context's
 * error code with every outs[k] NULL. */
WEFT_API int weft_array_split(weft_ctx *cx, weft_value *a, size_t n, int axis,
                              weft_value **outs);
WEFT_API int weft_hsplit(weft_ctx *cx, weft_value *a, size_t n, weft_value **outs);
WEFT_API int weft_vsplit(weft_ctx *cx, weft_value *a, size_t n, weft_value **outs);
WEFT_API int weft_dsplit(weft_ctx *cx, weft_value *a, size_t n, weft_value **outs);
/* tf.experimental.numpy.atleast_1d / 2d / 3d(a): NumPy's reshapes of a
 * smaller rank (a scalar to [1], [1, 1], [1, 1, 1]; a vector [k] to [1,
 * k] or [1, k, 1]; a matrix [m, k] to [m, k, 1]); others unchanged. */
WEFT_API weft_value *weft_atleast_1d(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_atleast_2d(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_atleast_3d(weft_ctx *cx, weft_value *a);
/* tf.experimental.numpy.hstack, vstack, dstack, column_stack(vs): vs[0..n)
 * (1 <= n <= 256, ranks known while tracing) joined as NumPy's: hstack
 * along axis 1 (0 for vectors), vstack along 0 after atleast_2d, dstack
 * along 2 after atleast_3d, column_stack along 1 with each vector a
 * column.  Dtypes promote as weft_concat's. */
WEFT_API weft_value *weft_hstack(weft_ctx *cx, weft_value *const *vs, size_t n);
WEFT_API weft_value *weft_vstack(weft_ctx *cx, weft_value *const *vs, size_t n);
WEFT_API weft_value *weft_dstack(weft_ctx *cx, weft_value *const *vs, size_t n);
WEFT_API weft_value *weft_column_stack(weft_ctx *cx, weft_value *const *vs, size_t n);
/* np.block of a list of n_rows lists of arrays (1..256 rows and blocks in
 * all): row r is blocks[counts[0] + ... + counts[r - 1]] and the next
 * counts[r] - 1 after it (at least one each).  Every block gets dims of
 * 1 in front up to the result's rank (2, or the largest rank among the
 * blocks; ranks known while tracing), each row is joined along the last
 * axis and the rows along the one before, dtypes promoted as weft_concat
 * does.  NumPy's one-level np.block([a, b]) is weft_concat along -1 of
 * arrays made at least 1-D. */
WEFT_API weft_value *weft_block(weft_ctx *cx, weft_value *const *blocks, const size_t *counts,
                                size_t n_rows);
/* tf.experimental.numpy.append(arr, values, axis): weft_concat along
 * axis; axis WEFT_ALL_AXES (NumPy's None) flattens both first. */
WEFT_API weft_value *weft_append(weft_ctx *cx, weft_value *arr, weft_value *values, int axis);
/* tf.experimental.numpy.diag(v, k): a vector v [n] onto diagonal k of a
 * square [n + |k|, n + |k|] matrix of zeros (k > 0 above the main one);
 * a matrix v's diagonal k as a vector (empty past the matrix).  diagflat
 * is diag of v flattened.  Dims known while tracing; any dtype. */
WEFT_API weft_value *weft_diag(weft_ctx *cx, weft_value *v, int64_t k);
WEFT_API weft_value *weft_diagflat(weft_ctx *cx, weft_value *v, int64_t k);
/* np.indices(dims, dtype): the grid [rank, dims...] whose entry d holds
 * each element's index along dim d (rank 0 to WEFT_MAX_RANK - 1; rank 0
 * gives NumPy's empty [0]); any dtype (NumPy's default is WEFT_I64). */
WEFT_API weft_value *weft_indices(weft_ctx *cx, int rank, const int64_t *dims,
                                  weft_dtype dtype);
/* np.trim_zeros(filt, trim): the vector filt without its leading ('f' in
 * trim) and trailing ('b') zeros, either case, NULL for NumPy's "fb";
 * NumPy's test x != 0 (-0.0 is a zero, NaN is not; false for bool).  Its
 * length depends on the values (unknown while tracing, so one trace
 * serves every input). */
WEFT_API weft_value *weft_trim_zeros(weft_ctx *cx, weft_value *filt, const char *trim);
/* np.delete(arr, obj, axis): arr without the entries obj[0..n_obj) along
 * axis (negative ones count from the end; a repeated one is deleted
 * once; out of bounds is WEFT_EINVAL as NumPy's IndexError), axis
 * WEFT_ALL_AXES (NumPy's None) deletes from arr flattened.  The axis's
 * length must be known while tracing (WEFT_ESHAPE).  A gather of the
 * entries kept, so gradients reach them. */
WEFT_API weft_value *weft_delete(weft_ctx *cx, weft_value *arr, const int64_t *obj,
                                 size_t n_obj, int axis);
/* np.insert(arr, obj, values, axis): arr with new slices along axis
 * before the entries obj[0..n_obj) (negative ones count from the end;
 * n, the axis's length, inserts at the end; beyond is WEFT_EINVAL as
 * NumPy's IndexError).  Several indices insert one slice each, values
 * broadcast to [..., n_obj, ...], equal indices in the order given; one
 * index inserts as many slices as values has along axis once its dims are
 * padded with 1s in front to arr's rank (NumPy's obj [i]; its scalar obj i
 * is obj {i} with values' first dim moved to axis).  values is cast to
 * arr's dtype; axis WEFT_ALL_AXES (NumPy's None) inserts into arr
 * flattened.  arr's dims must be known while tracing (WEFT_ESHAPE).  A
 * gather of arr joined with values, so gradients reach both. */
WEFT_API weft_value *weft_insert(weft_ctx *cx, weft_value *arr, const int64_t *obj,
                                 size_t n_obj, weft_value *values, int axis);
/* np.fill_diagonal(a, val, wrap) as a new array (NumPy writes a in
 * place): a's elements at NumPy's flat steps (cols + 1 for a matrix, its
 * first cols rows only unless wrap, so a tall matrix's diagonal starts
 * again below; 1 + the sum of the cumulative products of the leading
 * dims for more dims, which must all be equal) set to val's elements
 * flattened, repeated as NumPy's flat assignment repeats them, cast to
 * a's dtype.  a of rank 2 or more and val non-empty, every dim known
 * while tracing (WEFT_ESHAPE).  Gradients reach a's other elements (no
 * rule for val: weft_scatter_nd_update has none for its updates). */
WEFT_API weft_value *weft_fill_diagonal(weft_ctx *cx, weft_value *a, weft_value *val,
                                        bool wrap);
/* np.put_along_axis(arr, indices, values, axis) as a new array (NumPy
 * writes arr in place): arr with arr[..., indices[..., j, ...], ...] set
 * to values (broadcast to indices' shape, cast to arr's dtype) along
 * axis, the counterpart of weft_take_along_axis.  arr and indices (i32 or
 * i64) of one rank, every dim known while tracing, indices' dims off axis
 * equal to arr's or 1 (WEFT_ESHAPE); negative indices count from the end,
 * one out of range fails the call when it runs (WEFT_EINVAL), and of
 * repeated ones the last in row-major order wins (NumPy's assignment).
 * axis WEFT_ALL_AXES puts into arr flattened, arr's shape kept.
 * Gradients as weft_scatter_nd_update's (arr's other elements). */
WEFT_API weft_value *weft_put_along_axis(weft_ctx *cx, weft_value *arr, weft_value *indices,
                                         weft_value *values, int axis);
/* tf.experimental.numpy.diagonal(a, offset, axis1, axis2): the diagonal
 * offset (0 the main one, > 0 above it) of the matrices a holds in axes
 * axis1 (rows) and axis2 (columns), NumPy's layout: a's other dims in
 * order, then the diagonal.  a's rank known while tracing and at least 2
 * (WEFT_ESHAPE), the two axes distinct (WEFT_EINVAL), their dims known
 * while tracing (weft_matrix_diag_part's).  An offset past the matrix
 * gives an empty diagonal.  Any dtype, exact. */
WEFT_API weft_value *weft_diagonal(weft_ctx *cx, weft_value *a, int64_t offset, int axis1,
                                   int axis2);
/* tf.experimental.numpy.select(condlist, choicelist, default): where
 * conds[i] (bool) holds for the first i, choices[i], else default_value;
 * all broadcast, dtypes promoting as weft_where's; n >= 1. */
WEFT_API weft_value *weft_select(weft_ctx *cx, weft_value *const *conds,
                                 weft_value *const *choices, size_t n, weft_value *default_value);
/* Elements of a picked along axis by indices (i32 or i64, any shape;
 * negative ones count from the end): the result's shape is a's dims
 * before axis, then indices' dims, then a's dims after axis (tf.gather).
 * An index out of range fails with WEFT_EINVAL naming it (when the
 * function runs, for traced indices). */
WEFT_API weft_value *weft_gather(weft_ctx *cx, weft_value *a, weft_value *indices, int axis);
/* tf.gather(a, indices, axis, batch_dims): the first batch_dims dims of a
 * and of indices are a batch (they must agree) and each index picks
 * within its own batch element; the result is a's dims before axis, then
 * indices' dims after the batch ones, then a's dims after axis.
 * batch_dims is within 0..min(rank(indices), axis) (a negative one
 * counts from the end of indices' dims, as in TensorFlow; WEFT_EINVAL
 * otherwise).  weft_gather is batch_dims 0. */
WEFT_API weft_value *weft_gather_ex(weft_ctx *cx, weft_value *a, weft_value *indices, int axis,
                                    int batch_dims);
/* tf.experimental.numpy.take_along_axis(arr, indices, axis): out[..., j,
 * ...] = arr[..., indices[..., j, ...], ...] along axis, arr and indices
 * of one rank (1 or more, known while tracing) whose other dims broadcast
 * (NumPy's rule; a dim of 1 broadcasts where the other's is known); an
 * index counts as weft_gather's (negative from the end, out of range an
 * error).  axis WEFT_ALL_AXES (NumPy's None) takes from arr flattened
 * (any rank) by a vector of indices.  One weft_gather_ex with the axis
 * moved last; the gradient reaches arr. */
WEFT_API weft_value *weft_take_along_axis(weft_ctx *cx, weft_value *arr, weft_value *indices,
                                          int axis);
/* tf.experimental.numpy.moveaxis(a, source, destination) and
 * swapaxes(a, axis1, axis2): one weft_transpose.  moveaxis puts axis
 * source[k] at destination[k] for k < n (negative ones count from the end,
 * each named at most once), the other axes keeping their order.  a's rank
 * must be known while tracing. */
WEFT_API weft_value *weft_moveaxis(weft_ctx *cx, weft_value *a, const int *source,
                                   const int *destination, size_t n);
WEFT_API weft_value *weft_swapaxes(weft_ctx *cx, weft_value *a, int axis1, int axis2);
/* Joins vs[0..n) (n >= 1) along an existing axis (concat) or a new one
 * (stack, where axis may be rank(vs[0])).  The inputs are promoted to the
 * widest dtype among them, like the operands of weft_add; concat's inputs
 * agree on every dim but axis, stack's on every dim. */
WEFT_API weft_value *weft_concat(weft_ctx *cx, weft_value *const *vs, size_t n, int axis);
WEFT_API weft_value *weft_stack(weft_ctx *cx, weft_value *const *vs, size_t n, int axis);
/* A dim of 1 inserted at axis (in -rank-1..rank), or removed: squeeze's
 * axis must be 1 (WEFT_ALL_AXES: every dim of 1; while tracing, a dim
 * unknown then makes the result's rank unknown, as in TensorFlow).  As
 * cheap as weft_reshape: a traced one writes in place when it can. */
WEFT_API weft_value *weft_expand_dims(weft_ctx *cx, weft_value *a, int axis);
WEFT_API weft_value *weft_squeeze(weft_ctx *cx, weft_value *a, int axis);
/* a repeated multiples[d] times along every dim d (rank(a) entries, each
 * >= 0; a's rank must be known). */
WEFT_API weft_value *weft_tile(weft_ctx *cx, weft_value *a, const int64_t *multiples);
/* a broadcast to dims[0..rank) by NumPy's rules (a's dims, aligned from
 * the right, are 1 or equal).  A dim of -1 keeps a's dim there, so a
 * shape with a dim unknown while tracing can be a target. */
WEFT_API weft_value *weft_broadcast_to(weft_ctx *cx, weft_value *a, int rank,
                                       const int64_t *dims);
/* A tensor of a's dtype and shape filled with 0, 1 or value (converted
 * like weft_cast).  Unlike weft_fill they take dims unknown while
 * tracing: the shape is read from a when the function runs. */
WEFT_API weft_value *weft_zeros_like(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_ones_like(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_fill_like(weft_ctx *cx, weft_value *a, double value);
/* a's dims as an i64[rank(a)] tensor: known when the function runs even
 * where they are unknown while tracing (then a constant after
 * compilation, when they are known). */
WEFT_API weft_value *weft_shape(weft_ctx *cx, weft_value *a);
/* The i64 index of the largest (argmax) or smallest (argmin) element
 * along axis, which is removed from the shape; WEFT_ALL_AXES: the index
 * into the flattened tensor, an i64[].  Ties give the first index; a NaN
 * counts as the extreme (the first NaN wins, as in NumPy).  An empty axis
 * is WEFT_EINVAL. */
WEFT_API weft_value *weft_argmax(weft_ctx *cx, weft_value *a, int axis);
WEFT_API weft_value *weft_argmin(weft_ctx *cx, weft_value *a, int axis);
/* Running sums along axis, of a's shape (WEFT_ALL_AXES: of the flattened
 * tensor, 1-D).  Dtypes as weft_sum: bool counts as i64, integers wrap,
 * f32 adds in f64 and rounds each sum.  Each sum adds in index order, so
 * a single long axis is not split over threads. */
WEFT_API weft_value *weft_cumsum(weft_ctx *cx, weft_value *a, int axis);
/* tf.math.cumsum and tf.math.cumprod with their exclusive and reverse
 * arguments: flags holds an OR of weft_scan_flags (unknown bits are
 * WEFT_EINVAL).  Exclusive leaves each element out of its own result (the
 * first is 0 for a sum, 1 for a product); reverse runs from the end of the
 * axis.  Dtypes as weft_cumsum's: bool gives i64, integers wrap, f32
 * computes in f64 and rounds each result.  weft_cumsum_ex(cx, a, axis, 0)
 * is weft_cumsum(cx, a, axis). */
typedef enum weft_scan_flags {
    WEFT_SCAN_EXCLUSIVE = 1u,
    WEFT_SCAN_REVERSE = 2u
} weft_scan_flags;
WEFT_API weft_value *weft_cumsum_ex(weft_ctx *cx, weft_value *a, int axis, unsigned flags);
WEFT_API weft_value *weft_cumprod(weft_ctx *cx, weft_value *a, int axis, unsigned flags);
/* tf.math.cumulative_logsumexp: log(cumsum(exp(a))) along axis without
 * overflow (each step the larger term plus log1p of the other's exp), the
 * same axis and flags as weft_cumsum_ex.  f32 and f64 only (WEFT_EDTYPE
 * otherwise); f32 computes in f64 and rounds each result.  An exclusive
 * scan starts at -inf, the log of the empty sum. */
WEFT_API weft_value *weft_cumulative_logsumexp(weft_ctx *cx, weft_value *a, int axis,
                                               unsigned flags);

/* ---- Sorting ----
 *
 * Real ops with kernels of their own (never fused), eager and traced
 * alike; rows along the axis are sorted independently, spread over the
 * intra-op threads, with results that never depend on the thread count.
 * Any dtype.  The order is a total one: bool sorts false before true (as
 * in NumPy); for floats -inf < ... < -0.0 == 0.0 < ... < +inf < NaN, every
 * NaN equal to every other (NumPy's rule: NaNs last in ascending order).
 * Descending order is that relation reversed, so NaNs come first there,
 * as in jnp.sort(descending=True) and torch.sort.  (TensorFlow builds
 * tf.sort on top_k, whose comparisons give NaN no defined place; weft
 * follows NumPy instead.)  Every sort is stable in both directions: equal
 * keys (-0.0 and 0.0, two NaNs) keep their index order.  While tracing,
 * an axis is checked as soon as the rank is known, else when the function
 * runs. */

/* tf.sort: a sorted along axis (in -rank..rank-1; negative ones count
 * from the end; a scalar has no axis), of a's dtype and shape.
 * descending false is TensorFlow's 'ASCENDING'.  An axis out of range is
 * WEFT_EINVAL. */
WEFT_API weft_value *weft_sort(weft_ctx *cx, weft_value *a, int axis, bool descending);
/* tf.argsort(stable=True): the i64 indices along axis that sort a there,
 * of a's shape: weft_gather of each row by its indices gives weft_sort's
 * row.  Ties keep index order in both directions, as tf.argsort's
 * stable=True promises (its default makes no promise, so this answers it
 * too). */
WEFT_API weft_value *weft_argsort(weft_ctx *cx, weft_value *a, int axis, bool descending);
/* np.partition(a, kth, axis) and np.argpartition: a (or the i64 indices
 * that take it there) with the element at each kth[i] where a sorted axis
 * would have it, those before no greater and those after no less (NaN
 * last).  weft gives the whole axis sorted (stable, weft_sort's and
 * weft_argsort's order), one of the orders NumPy's contract allows; NumPy's
 * introselect leaves each part in another, unspecified, order, so compare
 * the partition, not the bits.  kth[0..n_kth) count from the axis' end
 * when negative; one out of bounds is WEFT_EINVAL, when the call runs
 * where the axis' dim is unknown while tracing.  axis WEFT_ALL_AXES
 * (NumPy's None) takes a flattened.  The gradient of partition is
 * weft_sort's. */
WEFT_API weft_value *weft_partition(weft_ctx *cx, weft_value *a, const int64_t *kth,
                                    size_t n_kth, int axis);
WEFT_API weft_value *weft_argpartition(weft_ctx *cx, weft_value *a, const int64_t *kth,
                                       size_t n_kth, int axis);
/* NumPy's lexsort(keys, axis): the i64 indices that sort along axis by
 * the last key, ties broken by the one before it, and so on to keys[0]
 * (keys of one shape: unequal ranks are WEFT_ESHAPE, the dims are checked
 * by the gathers); stable, weft_sort's order (NaN last).  n >= 1 (WEFT_EINVAL).  One
 * stable argsort and two gathers per key. */
WEFT_API weft_value *weft_lexsort(weft_ctx *cx, weft_value *const *keys, size_t n, int axis);
/* tf.math.top_k: the k largest elements along the last axis, in
 * descending order, and their i64 indices: outs[0] (a's dtype) and
 * outs[1] (i64), both a's shape with the last dim k.  Ties give the lower
 * index first (as TensorFlow); NaN counts as the largest (weft_sort's
 * descending order, whose first k elements these are).  sorted is
 * accepted for TensorFlow's signature; the result is sorted either way
 * (which sorted=false allows).  k must be in 0..n for a last dim of n: a
 * negative k, a scalar a, or k > n is WEFT_EINVAL; while tracing a last
 * dim unknown then, k > n fails the call when the function runs.  Returns
 * 0, or the context's error code with outs[0] and outs[1] NULL (outs NULL
 * is WEFT_EINVAL). */
WEFT_API int weft_top_k(weft_ctx *cx, weft_value *a, int64_t k, bool sorted, weft_value **outs);
/* tf.math.approx_max_k(operand, k, reduction_dimension, recall_target)
 * and tf.math.approx_min_k: the k largest (smallest) elements along
 * reduction_dimension (negative counts from the end) in descending
 * (ascending) order, outs[0] (operand's dtype), and their indices along
 * that dim, outs[1] (i32, as TensorFlow's), both operand's shape with
 * that dim k.  Answered exactly (a recall of 1, which meets any target):
 * weft_top_k's selection in either direction, ties to the lower index;
 * NaN counts as the largest (first in max_k, last in min_k).  recall_target
 * must be in (0, 1]; TensorFlow's reduction_input_size_override and
 * aggregate_to_topk=False (an approximation's unaggregated bins) are not
 * taken.  f32 or f64 of a rank known while tracing; k in 0..the dim (a
 * dim unknown while tracing is checked when the function runs, naming
 * weft_top_k).  The values' gradient goes to the elements picked.
 * Returns 0, or the context's error code with both outs NULL (outs NULL
 * is WEFT_EINVAL). */
WEFT_API int weft_approx_max_k(weft_ctx *cx, weft_value *operand, int64_t k,
                               int reduction_dimension, double recall_target, weft_value **outs);
WEFT_API int weft_approx_min_k(weft_ctx *cx, weft_value *operand, int64_t k,
                               int reduction_dimension, double recall_target, weft_value **outs);
/* tf.math.in_top_k(targets, predictions, k): bool [batch], whether
 * predictions[i][targets[i]] is among the k largest of row i, counted as
 * TensorFlow does: fewer than k predictions of the row are greater (so
 * ties at the boundary are all in).  A target out of range, or a row
 * with a prediction that is not finite, gives false (as TensorFlow's
 * kernel).  targets i32 or i64 [batch], predictions f32 or f64 [batch,
 * classes] with classes known while tracing; k >= 0. */
WEFT_API weft_value *weft_in_top_k(weft_ctx *cx, weft_value *targets, weft_value *predictions,
                                   int64_t k);
/* tf.nn.isotonic_regression(inputs, decreasing, axis): along axis, the
 * least-squares fit y of x with y_1 >= y_2 >= ... (decreasing) or
 * y_1 <= y_2 <= ... (the decreasing fit of -x, negated), by
 * TensorFlow's pool-adjacent-violators kernel (a pool merges into the one
 * before it while its mean is strictly above; sums and means in the
 * dtype).  outs[0] the fit, of x's shape, f32 or f64 (integers as f64, as
 * TensorFlow's), and outs[1] each element's pool index along its line,
 * from 0, i32.  x of rank >= 1 known while tracing, any number dtype
 * (bool is WEFT_EDTYPE); axis negative from the end.  Returns 0, or the
 * context's error code with both outs NULL. */
WEFT_API int weft_isotonic_regression(weft_ctx *cx, weft_value *x, bool decreasing, int axis,
                                      weft_value **outs);

/* ---- Neural-network ops ----
 *
 * Compositions of the ops above (no kernels of their own), so they run
 * eagerly and traced alike, fuse with their neighbours, and take dims
 * unknown while tracing.  Errors name the op ("weft_softmax: ..."): the
 * inputs are checked before anything is computed.  An axis may be negative
 * (counted from the end) and must be in range for a's rank, which must be
 * known (WEFT_EINVAL otherwise, also while tracing a rank unknown then).
 * softmax, log_softmax, logsumexp and the activations take f32 and f64
 * only and keep the dtype; anything else is WEFT_EDTYPE (cast first).
 * Like any op's, their results are values of cx. */

/* tf.nn.softmax and tf.nn.log_softmax along axis: exp(x - m) / sum(exp(x
 * - m)) and (x - m) - log(sum(exp(x - m))), where m is the maximum along
 * the axis, so large inputs do not overflow (softmax of [1000, 1001] is
 * [0.27, 0.73]).  A slice of all -inf, or one holding +inf or NaN, gives
 * NaN, as in TensorFlow.  TensorFlow's integer refusal is kept
 * (WEFT_EDTYPE). */
WEFT_API weft_value *weft_softmax(weft_ctx *cx, weft_value *a, int axis);
WEFT_API weft_value *weft_log_softmax(weft_ctx *cx, weft_value *a, int axis);
/* tf.math.reduce_logsumexp over one axis or WEFT_ALL_AXES: log(sum(exp(x
 * - m))) + m, with m the maximum, replaced by 0 where it is not finite:
 * an axis of all -inf gives -inf (not NaN), one holding +inf gives +inf,
 * NaN gives NaN, and an empty axis gives -inf, as in TensorFlow.
 * keepdims keeps the reduced axes as 1s. */
WEFT_API weft_value *weft_logsumexp(weft_ctx *cx, weft_value *a, int axis, bool keepdims);
/* tf.one_hot(indices, depth, dtype=dtype) with on 1, off 0 and the new
 * axis last: indices (i32 or i64, any shape, rank unknown while tracing
 * included) of shape [...] give [..., depth] of dtype (any; bool gives
 * true / false), 1 where the last index equals indices.  An index outside
 * 0..depth-1, negative ones included, gives a row of zeros, as in
 * TensorFlow (never an error: weft_gather counts negative indices from
 * the end instead).  Other dtypes of indices are WEFT_EDTYPE; a negative
 * depth or an unknown dtype WEFT_EINVAL. */
WEFT_API weft_value *weft_one_hot(weft_ctx *cx, weft_value *indices, int64_t depth,
                                  weft_dtype dtype);
/* tf.reverse over one axis: a[..., ::-1, ...] there (weft_slice with a
 * step of -1).  Any dtype. */
WEFT_API weft_value *weft_reverse(weft_ctx *cx, weft_value *a, int axis);
/* tf.pad in CONSTANT mode: pads holds rank(a) rows, pads[d][0] elements
 * of value before a along dim d and pads[d][1] after it (borrowed for the
 * call), as tf.pad's paddings [[before, after], ...]:
 *
 *     const int64_t pads[2][2] = { { 1, 1 }, { 0, 2 } };
 *     weft_value *p = weft_pad(cx, x, pads, 0.0);   // [m, n] -> [m+2, n+2]
 *
 * value is converted to a's dtype like weft_cast (TensorFlow wants
 * constant_values of a's dtype).  Any dtype.  Dims unknown while tracing
 * work: the padding's shape is then taken from a when the function runs.
 * pads NULL, a negative pad (TensorFlow's CONSTANT mode refuses them too;
 * use weft_slice to crop) or one above INT32_MAX is WEFT_EINVAL.  All-zero
 * pads give a itself (a weak scalar as a strong one, as weft_cast). */
WEFT_API weft_value *weft_pad(weft_ctx *cx, weft_value *a, const int64_t (*pads)[2],
                              double value);
/* tf.pad's modes: CONSTANT pads with value (weft_pad); REFLECT mirrors a
 * about its edge element ([1, 2, 3] padded by 2 on both sides is
 * [3, 2, 1, 2, 3, 2, 1]), SYMMETRIC mirrors it including the edge
 * ([2, 1, 1, 2, 3, 3, 2]); value is read in CONSTANT mode only. */
typedef enum weft_pad_mode {
    WEFT_PAD_CONSTANT = 0,
    WEFT_PAD_REFLECT = 1,
    WEFT_PAD_SYMMETRIC = 2
} weft_pad_mode;
/* tf.pad(a, paddings, mode, constant_values): weft_pad in any of the
 * three modes.  In the mirror modes each padded dim must be known while
 * tracing (WEFT_ESHAPE) and, as in TensorFlow, its pads below its length
 * (REFLECT) or at most its length (SYMMETRIC), else WEFT_EINVAL; any
 * dtype, exact.  An unknown mode is WEFT_EINVAL. */
WEFT_API weft_value *weft_pad_ex(weft_ctx *cx, weft_value *a, const int64_t (*pads)[2],
                                 weft_pad_mode mode, double value);
/* tf.eye(n, m): an [n, m] matrix of dtype with ones where the row index
 * equals the column index, zeros elsewhere; n, m >= 0. */
WEFT_API weft_value *weft_eye(weft_ctx *cx, int64_t n, int64_t m, weft_dtype dtype);
/* tf.linspace / np.linspace(start, stop, num): num values from start to
 * stop inclusive, evenly spaced (start + i (stop - start) / (num - 1) in
 * f64, the last exactly stop, rounded to dtype); num 1 gives [start], 0
 * an empty vector.  dtype f32 or f64; start and stop finite. */
WEFT_API weft_value *weft_linspace(weft_ctx *cx, double start, double stop, int64_t num,
                                   weft_dtype dtype);
/* tf.experimental.numpy.logspace(start, stop, num, base=base) and
 * geomspace(start, stop, num), NumPy's formulas in f64, rounded to dtype
 * (f32 or f64) once: logspace is base ** weft_linspace(start, stop, num)
 * (base finite); geomspace is 10 ** weft_linspace(log10 |start|,
 * log10 |stop|, num) with its ends set to |start| and |stop| exactly,
 * negated when both are negative (start and stop nonzero, of one sign,
 * finite).  NumPy's endpoint=True. */
WEFT_API weft_value *weft_logspace(weft_ctx *cx, double start, double stop, int64_t num,
                                   double base, weft_dtype dtype);
WEFT_API weft_value *weft_geomspace(weft_ctx *cx, double start, double stop, int64_t num,
                                    weft_dtype dtype);
/* tf.experimental.numpy.vander(x, N, increasing): [len(x), N] of x's
 * powers, x[i] ** (N - 1 - j) (increasing: x[i] ** j), TensorFlow's
 * weft_pow of x against the exponents in x's dtype (NumPy multiplies up
 * instead: a float may differ in its last bit).  x is a vector of
 * numbers (rank known while tracing); n < 0 takes N = len(x), which must
 * then be known while tracing. */
WEFT_API weft_value *weft_vander(weft_ctx *cx, weft_value *x, int64_t n, bool increasing);
/* tf.experimental.numpy.tri(N, M, k, dtype): [n, m] (m < 0: n) of dtype,
 * 1 where column j <= row i + k, else 0. */
WEFT_API weft_value *weft_tri(weft_ctx *cx, int64_t n, int64_t m, int64_t k, weft_dtype dtype);
/* Activations, elementwise.  leaky_relu: x for x > 0, else alpha * x
 * (tf.nn.leaky_relu; TensorFlow casts integers to f32 there, weft asks for
 * a weft_cast).  elu: x for x > 0, else expm1(x) (tf.nn.elu).  gelu: the
 * tanh approximation, 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))),
 * which is tf.nn.gelu(x, approximate=True); TensorFlow's default
 * (approximate=False), with erf, is weft_gelu_exact (the two differ by
 * less than 5e-4).  NaN stays NaN. */
WEFT_API weft_value *weft_leaky_relu(weft_ctx *cx, weft_value *a, double alpha);
WEFT_API weft_value *weft_elu(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_gelu(weft_ctx *cx, weft_value *a);
/* More activations.  softplus: log(1 + exp(x)) (tf.math.softplus),
 * computed as max(x, 0) + log1p(exp(-|x|)) so that large x gives x, not
 * inf, and negative x keeps the digits of exp(x).  log_sigmoid:
 * log(sigmoid(x)) (tf.math.log_sigmoid), as min(x, 0) - log1p(exp(-|x|)).
 * silu: x * sigmoid(x) (tf.nn.silu, tf.nn.swish).  gelu_exact:
 * x * 0.5 * (1 + erf(x / sqrt(2))), tf.nn.gelu's default
 * (approximate=False), in TensorFlow's order of operations.  These take f32
 * and f64 only.  relu6: min(max(x, 0), 6) (tf.nn.relu6); like relu it
 * takes integers too and keeps their dtype; bool is WEFT_EDTYPE.  NaN
 * stays NaN in all of them; -0.0 gives 0.0 in relu6, whose gradient is 0
 * at both knees, 0 and 6 (TensorFlow's Relu6Grad); silu(-inf) and
 * gelu_exact(-inf) are NaN (-inf times 0), as in TensorFlow. */
WEFT_API weft_value *weft_softplus(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_log_sigmoid(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_silu(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_relu6(weft_ctx *cx, weft_value *a);
/* tf.nn.crelu(features, axis): relu(x) and relu(-x) joined along axis (-1:
 * the last; the rank known while tracing), which doubles that dim.
 * Numbers; bool is WEFT_EDTYPE. */
WEFT_API weft_value *weft_crelu(weft_ctx *cx, weft_value *features, int axis);
/* Keras 3's hard_sigmoid: relu6(x + 3) / 6, a piecewise-linear sigmoid
 * (0 below -3, 1 above 3; Keras 2's was clip(0.2 x + 0.5, 0, 1), with other
 * knees), and hard_swish (Keras' hard_silu): x * hard_sigmoid(x), as in
 * MobileNetV3.  f32 and f64 only (WEFT_EDTYPE); NaN stays NaN; the gradient
 * is 1/6 strictly between -3 and 3 and 0 elsewhere, the knees included
 * (TensorFlow's Relu6Grad). */
WEFT_API weft_value *weft_hard_sigmoid(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_hard_swish(weft_ctx *cx, weft_value *a);
/* keras.activations.relu(x, negative_slope, max_value, threshold) (Keras
 * 2: alpha for negative_slope): x where x > threshold (else 0), capped at
 * max_value (INFINITY: Keras's None), less negative_slope * relu(threshold
 * - x); Keras 3's branches, so (s, INFINITY, 0) is weft_leaky_relu(x, s),
 * (0, 6, 0) weft_relu6 and (0, INFINITY, 0) weft_relu, bit for bit.  f32 or
 * f64; negative_slope and threshold finite, max_value >= 0 (WEFT_EINVAL). */
WEFT_API weft_value *weft_relu_ex(weft_ctx *cx, weft_value *x, double negative_slope,
                                  double max_value, double threshold);
/* Keras 3's other activations (keras.activations.*), on f32 or f64 only
 * (WEFT_EDTYPE), compositions in Keras's formulas:
 *   celu(x, alpha)          max(x, 0) + alpha expm1(min(x, 0) / alpha);
 *                           alpha finite and nonzero (Keras: 1)
 *   glu(x, axis)            a * sigmoid(b), a and b the halves of x along
 *                           axis (an even dim known while tracing, else
 *                           WEFT_ESHAPE; Keras: axis -1)
 *   hard_tanh(x)            min(max(x, -1), 1)
 *   hard_shrink(x, t)       x where |x| > t, else 0 (Keras: t 0.5)
 *   soft_shrink(x, t)       x - t above t, x + t below -t, else 0
 *   tanh_shrink(x)          x - tanh(x)
 *   squareplus(x, b)        (x + sqrt(x^2 + b)) / 2 (Keras: b 4)
 *   sparse_plus(x)          0 up to -1, (x + 1)^2 / 4 below 1, else x
 *   sparsemax(x, axis)      the Euclidean projection of each slice along
 *                           axis onto the probability simplex (Martins and
 *                           Astudillo): max(x - tau, 0), tau from the
 *                           sorted values, so the slice sums to 1 with
 *                           exact zeros.  Keras 3 reads tau's sum as the
 *                           largest cumulative sum, which is wrong once a
 *                           value in the support is negative; weft sums
 *                           the support (TensorFlow Addons' answer).
 * t and b finite and >= 0 (WEFT_EINVAL).  In the elementwise ones NaN
 * gives NaN, but 0 in the shrinks (their comparisons fail, as Keras's).
 * Gradients through the parts; sparsemax's through the sort, diag(s) - s
 * s^T / k on the support s of size k. */
WEFT_API weft_value *weft_celu(weft_ctx *cx, weft_value *x, double alpha);
WEFT_API weft_value *weft_glu(weft_ctx *cx, weft_value *x, int axis);
WEFT_API weft_value *weft_hard_tanh(weft_ctx *cx, weft_value *x);
WEFT_API weft_value *weft_hard_shrink(weft_ctx *cx, weft_value *x, double threshold);
WEFT_API weft_value *weft_soft_shrink(weft_ctx *cx, weft_value *x, double threshold);
WEFT_API weft_value *weft_tanh_shrink(weft_ctx *cx, weft_value *x);
WEFT_API weft_value *weft_squareplus(weft_ctx *cx, weft_value *x, double b);
WEFT_API weft_value *weft_sparse_plus(weft_ctx *cx, weft_value *x);
WEFT_API weft_value *weft_sparsemax(weft_ctx *cx, weft_value *x, int axis);
WEFT_API weft_value *weft_gelu_exact(weft_ctx *cx, weft_value *a);
/* tf.nn.selu: 1.0507009873554805 * (x where x > 0, else
 * 1.6732632423543772 * expm1(x)); tf.nn.softsign: x / (1 + |x|); mish
 * (Keras, TensorFlow Addons): x * tanh(softplus(x)).  f32 and f64. */
WEFT_API weft_value *weft_selu(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_softsign(weft_ctx *cx, weft_value *a);
WEFT_API weft_value *weft_mish(weft_ctx *cx, weft_value *a);
/* tf.quantization.fake_quant_with_min_max_args(x, min, max, num_bits,
 * narrow_range): x clamped to [min, max] nudged so that 0 is one of the
 * 2^num_bits levels (from 1 with narrow_range), rounded to the nearest
 * level and mapped back: TensorFlow's steps in f32, bit for bit.  x is f32
 * (WEFT_EDTYPE otherwise); num_bits 2..16 and min < max (WEFT_EINVAL; TF's
 * defaults are -6, 6, 8, false).  _vars: the same with min and max values
 * (f32 or weak scalars), nudged when the function runs: scalars
 * (fake_quant_with_min_max_vars) or both [d], one range per channel of x
 * [..., d] (_vars_per_channel); where min and max are both 0 the result is
 * 0 (TF's rule); min > max is not refused (its result is TF's
 * arithmetic's, of no use). */
WEFT_API weft_value *weft_fake_quant_with_min_max_args(weft_ctx *cx, weft_value *x, double min,
                                                       double max, int num_bits,
                                                       bool narrow_range);
WEFT_API weft_value *weft_fake_quant_with_min_max_vars(weft_ctx *cx, weft_value *x,
                                                       weft_value *min, weft_value *max,
                                                       int num_bits, bool narrow_range);

/* map_fn: fn (one argument, one output) applied to every slice elems[i]
 * along dim 0, results stacked along a new dim 0.  fn is traced once for
 * the slice spec (while tracing elems of unknown rank, once for a slice of
 * unknown rank: the run decides the rank, as eager mode does; when fn has
 * an input signature such a slice may match, fn is traced for it, and
 * each slice is checked against it as it runs: WEFT_ESIGNATURE).  At most
 * parallel_iterations iterations are in flight (0: no bound); iterations
 * are spread over the workers by work stealing, in eager and in traced
 * mode alike.  fn must outlive every function whose
 * body maps it.  An iteration's error cancels the rest and is returned with
 * the iteration index in weft_errmsg(). */
WEFT_API weft_value *weft_map(weft_ctx *cx, weft_function *fn, weft_value *elems,
                              unsigned parallel_iterations);
/* np.apply_along_axis(func1d, axis, arr): fn (one argument, one output)
 * applied to every 1-D slice of arr along axis, its output's dims put
 * where the axis was (NumPy's shape: arr's dims before axis, the
 * output's, arr's after); a scalar output removes the axis.  A
 * weft_map over the slices as rows, with its parallel_iterations and its
 * rules for fn.  arr's rank and fn's output rank must be known while
 * tracing, and of the result's dims (and of the slices' count and length)
 * at most one may be unknown (WEFT_ESHAPE). */
WEFT_API weft_value *weft_apply_along_axis(weft_ctx *cx, weft_function *fn, weft_value *arr,
                                           int axis, unsigned parallel_iterations);

/* py_function: fn runs on every execution, never at trace time only.  It
 * receives the input tensors (borrowed) and must store one new tensor
 * matching out_spec in *out (weft takes that reference).  A non-zero return
 * fails the call with WEFT_EHOST; a wrong output with WEFT_ESHAPE or
 * WEFT_EDTYPE.  Host calls are side effects: never removed as dead code, and
 * run in program order with the other host calls of the same body.  When
 * an op fails during a traced call, the host calls that do not depend on
 * it (through inputs or an earlier host call) may still run, even those
 * the body makes after it: eager mode stops at the failing op.
 * WEFT_HOST_SERIAL: calls of this fn never overlap, and the weft work such
 * a call starts (loops, spawns, function calls) runs on its own thread, one
 * piece at a time.  flags holds an OR of weft_host_flags.  fn may run on
 * any worker thread. */
typedef enum weft_host_flags { WEFT_HOST_SERIAL = 1u } weft_host_flags;
typedef int (*weft_host_fn)(weft_tensor *const *in, size_t n_in, weft_tensor **out, void *user);
WEFT_API weft_value *weft_host_call(weft_ctx *cx, weft_host_fn fn, void *user,
                                    weft_value *const *in, size_t n_in,
                                    const weft_spec *out_spec, unsigned flags);

/* tf.debugging.check_numerics(x, message): x, once no element of it is NaN
 * or infinite; otherwise the call fails with WEFT_EINVAL and "message :
 * Tensor had NaN values" (Inf, Inf and NaN), as TensorFlow's.  f32 and f64
 * (WEFT_EDTYPE otherwise).  weft_check: x, once every element of the bool
 * condition (any shape) is true; otherwise WEFT_EINVAL with message (the
 * assert of tf.debugging.Assert and the assert_* helpers, which compose
 * with the comparisons: weft_check(cx, x, weft_ge(cx, x, zero), "x >= 0")).
 * Both copy x.  A check is a side effect, as a host call is: it runs even
 * when its result goes unused, and the host calls after it run only once
 * it has passed (TensorFlow's control dependencies).  message (NULL for
 * none) is copied, its first 111 bytes kept. */
WEFT_API weft_value *weft_check_numerics(weft_ctx *cx, weft_value *x, const char *message);
WEFT_API weft_value *weft_check(weft_ctx *cx, weft_value *x, weft_value *condition,
                                const char *message);
/* ---- Composition and control flow ----
 *
 * These return 0 or a negative code (also recorded in cx, like an op's
 * error) and store their results, values of cx, in outs (all NULL on
 * failure).  The weft_function handles they take are borrowed: each must
 * outlive every function whose body passes it here, and every eager
 * context that does (a traced program keeps running them).  Like ops, they
 * are called by the thread that uses cx.  When tracing, the functions they
 * run are traced into the caller (weft_call) or resolved through their own
 * caches once, when the op is recorded (cond, while, map_ex): a run of the
 * caller's program looks nothing up. */

/* tf.function calling tf.function: g's body runs on cx itself, with args
 * as its arguments.  While tracing, its ops are recorded into the caller's
 * op list (g's cache is not used: its traces and calls do not count), so
 * the compiler optimises across the call; eagerly, they compute at once.
 * n_args and n_outs must be g's; an argument that cannot match g's input
 * signature (dtype, rank or a known dim) fails with WEFT_ESIGNATURE.  g's
 * body sees the caller's values as they are (with their specs, static
 * scalars still static).  Calls nest up to 64 deep, recursion included
 * (when tracing, recursion must end on static values).  An error inside g
 * names both functions ("caller/g: %4 = weft_add: ..."). */
WEFT_API int weft_call(weft_ctx *cx, weft_function *g, weft_value *const *args, size_t n_args,
                       weft_value **outs, size_t n_outs);

/* tf.cond: then_fn(args) when pred is true, else else_fn(args).  pred is a
 * bool[] (WEFT_EDTYPE / WEFT_ESHAPE otherwise), or a static integer scalar
 * (a weft_arg_i64 argument: non-zero is true).  Eagerly, and when pred is
 * a constant or static while tracing, only the chosen function runs, as
 * weft_call would run it.  Otherwise both are traced (through their caches) for the
 * specs of args, must return the same specs (WEFT_EDTYPE / WEFT_ESHAPE
 * naming the output and both specs; a dim known in one and unknown in the
 * other becomes unknown), and the run calls only the chosen one: the other
 * one's host calls do not run.  Both take n_args arguments and return
 * n_outs outputs.  With such a computed pred, a weak scalar among args
 * (weft_const_i64, a static scalar) enters the branch as an ordinary i64
 * or f64 scalar, eagerly too, since a spec carries no weakness: both modes
 * give the same dtypes. */
WEFT_API int weft_cond(weft_ctx *cx, weft_value *pred, weft_function *then_fn,
                       weft_function *else_fn, weft_value *const *args, size_t n_args,
                       weft_value **outs, size_t n_outs);

/* tf.switch_case(branch_index, branch_fns): branch_fns[branch_index](args),
 * and the last branch when the index is out of range (TensorFlow's default
 * when none is given).  branch_index is an i32[] or i64[] (WEFT_EDTYPE /
 * WEFT_ESHAPE), or a static integer scalar (weft_arg_i64); n_branches >= 1,
 * none NULL.  As weft_cond otherwise: eagerly, and with a constant or
 * static index while tracing, only the chosen branch runs (as weft_call
 * would run it); with a computed index every branch is traced for the
 * specs of args, they must return the same specs (a dim known in one and
 * unknown in another becomes unknown; WEFT_EDTYPE / WEFT_ESHAPE naming the
 * output and the two branches otherwise), and the run calls only the
 * chosen one. */
WEFT_API int weft_switch_case(weft_ctx *cx, weft_value *branch_index,
                              weft_function *const *branch_fns, size_t n_branches,
                              weft_value *const *args, size_t n_args, weft_value **outs,
                              size_t n_outs);

/* tf.while_loop: vars = body_fn(vars) while cond_fn(vars) is true; outs
 * receive the final n_vars values.  cond_fn takes n_vars arguments and
 * returns one bool[]; body_fn takes and returns n_vars values of the same
 * specs as vars: a body that changes a variable's dtype, rank or a known
 * dim fails with WEFT_EDTYPE / WEFT_ESHAPE naming the variable (an unknown
 * dim of vars may change from one iteration to the next).  Eagerly it is a
 * plain C loop (each iteration's temporaries are freed as it ends); traced,
 * both functions are traced once, and the loop runs inside the caller's
 * program. */
WEFT_API int weft_while_loop(weft_ctx *cx, weft_function *cond_fn, weft_function *body_fn,
                             weft_value *const *vars, size_t n_vars, weft_value **outs);

/* map_fn with several inputs and outputs and captured values:
 * fn(elems[0][i], ..., elems[n_elems-1][i], captures...) for every i along
 * dim 0, which every elems[k] must share (WEFT_ESHAPE otherwise); each of
 * fn's n_outs outputs is stacked along a new dim 0 into outs[k].  fn takes
 * n_elems + n_captures arguments: the slices, then the captures, which are
 * passed whole to every iteration (values of the outer body the mapped
 * function uses; C has no closures, so they are arguments).  Otherwise as
 * weft_map: traced once for the slice and capture specs, at most
 * parallel_iterations iterations in flight, an iteration's error names its
 * index.  n_elems >= 1. */
WEFT_API int weft_map_ex(weft_ctx *cx, weft_function *fn, weft_value *const *elems,
                         size_t n_elems, weft_value *const *captures, size_t n_captures,
                         weft_value **outs, size_t n_outs, unsigned parallel_iterations);

/* tf.scan(fn, elems, initializer, reverse): fn(acc, x) applied row after
 * row of elems (dim 0), each result the next acc, the accumulators of every
 * step stacked along a new dim 0 into outs[0..n_acc) (row i: the acc after
 * row i of elems, also with WEFT_SCAN_REVERSE, which runs from the last
 * row; any other flag bit is refused).  fn takes n_acc + n_elems +
 * n_captures arguments (the accumulators, one row of each elems[k], then
 * the captures, passed whole) and returns n_acc values of the accumulators'
 * specs (WEFT_EDTYPE / WEFT_ESHAPE naming the accumulator otherwise, while
 * tracing or, for a dim unknown then, at the step that changes it).  init
 * holds the n_acc first accumulators; NULL starts them from the first row
 * of elems instead, which needs n_acc == n_elems and at least one row
 * (WEFT_EINVAL when the run finds none), and that row's result is the row
 * itself (TensorFlow's scan without initializer).  The rows run one after
 * another (each step needs the last), every op inside them on the
 * workers; fn is traced once for the specs of its arguments, an error
 * names the row.  The elems share dim 0 (WEFT_ESHAPE).  n_acc, n_elems >=
 * 1.  weft_foldl / weft_foldr (tf.foldl, tf.foldr): the same from the
 * first or the last row, keeping only the last accumulators; with no rows
 * they return init. */
WEFT_API int weft_scan(weft_ctx *cx, weft_function *fn, weft_value *const *init, size_t n_acc,
                       weft_value *const *elems, size_t n_elems, weft_value *const *captures,
                       size_t n_captures, weft_value **outs, unsigned flags);
WEFT_API int weft_foldl(weft_ctx *cx, weft_function *fn, weft_value *const *init, size_t n_acc,
                        weft_value *const *elems, size_t n_elems, weft_value *const *captures,
                        size_t n_captures, weft_value **outs);
WEFT_API int weft_foldr(weft_ctx *cx, weft_function *fn, weft_value *const *init, size_t n_acc,
                        weft_value *const *elems, size_t n_elems, weft_value *const *captures,
                        size_t n_captures, weft_value **outs);

/* weft_host_call with n_out outputs: fn stores n_out new tensors in
 * out[0..n_out), out[k] matching out_specs[k] (weft takes those
 * references; on a failure it releases what fn stored).  n_out may be 0 (a
 * callback run for its side effect only).  Everything else as
 * weft_host_call: program order, never dead code, WEFT_HOST_SERIAL, any
 * worker thread. */
typedef int (*weft_host_fn_ex)(weft_tensor *const *in, size_t n_in, weft_tensor **out,
                               size_t n_out, void *user);
WEFT_API int weft_host_call_ex(weft_ctx *cx, weft_host_fn_ex fn, void *user,
                               weft_value *const *in, size_t n_in,
                               const weft_spec *out_specs, size_t n_out, weft_value **outs,
                               unsigned flags);

/* ---- Segments, index tuples, roll and repeat ----
 *
 * Ops of their own (each a node while tracing; the compiler folds them on
 * constants and merges equal ones, and never fuses them).  Errors name the
 * op.  Index inputs are i32 or i64 (WEFT_EDTYPE otherwise).  While tracing,
 * dims unknown then are fine where the result's shape does not need them
 * (it stays unknown there); the checks on them, and on index values, run
 * when the function runs, failing the call with the message they give
 * eagerly.  Results are the same bit for bit on any worker count, eagerly
 * and traced: where several elements meet in one result element, they are
 * combined in index order, one after the other (chunks own whole result
 * elements; nothing races). */

/* tf.math.unsorted_segment_sum / _mean / _max / _min / _prod: r is
 * WEFT_R_SUM, MEAN, MAX, MIN or PROD (others WEFT_EINVAL).  segment_ids
 * has rank k >= 1 and the shape of data's first k dims (like TensorFlow;
 * WEFT_ESHAPE otherwise); the result is [num_segments] followed by data's
 * dims after the first k, and result row s combines the rows of data (the
 * elements after the first k dims) whose id is s, in row-major order of
 * segment_ids.  num_segments is static and >= 0.  A negative id drops its
 * row (as in TensorFlow); an id >= num_segments is WEFT_EINVAL naming it
 * and its position (TensorFlow's CPU kernel refuses it too), when the
 * function runs for traced ids.
 *
 * Dtypes: data i32, i64, f32 or f64 (bool is WEFT_EDTYPE); the result has
 * data's dtype, except MEAN of an integer, which computes in f64 and gives
 * f64 (as weft_reduce; TensorFlow's mean takes floats only).  Integers
 * wrap; f32 sums, products and means accumulate in f64 and round once;
 * MAX and MIN propagate NaN.  A segment with no rows gives TensorFlow's
 * value: 0 for SUM and MEAN, 1 for PROD, the dtype's lowest finite value
 * for MAX (-FLT_MAX, -DBL_MAX, INT32_MIN, INT64_MIN) and its highest for
 * MIN (unlike weft_reduce_max of nothing, which is -inf).  Each result
 * element starts from the identity and takes its rows in index order,
 * so a float sum is the plain left-to-right sum in f64. */
WEFT_API weft_value *weft_unsorted_segment(weft_ctx *cx, weft_reduction r, weft_value *data,
                                           weft_value *segment_ids, int64_t num_segments);

/* tf.math.unsorted_segment_sqrt_n(data, segment_ids, num_segments): each
 * segment's sum divided by the square root of its row count (0 for a
 * segment without rows); ids as weft_unsorted_segment's (negative ones
 * dropped), data f32 or f64, both ranks known while tracing. */
WEFT_API weft_value *weft_unsorted_segment_sqrt_n(weft_ctx *cx, weft_value *data,
                                                  weft_value *segment_ids, int64_t num_segments);

/* tf.math.segment_sum / _mean / _max / _min / _prod: weft_unsorted_segment
 * for a vector of sorted segment_ids (non-decreasing and non-negative,
 * WEFT_EINVAL naming the first that is not, when it is met), with one
 * result row per id up to the last: the result is [last id + 1] (0 rows
 * for no ids; unknown while tracing, so one trace serves every count)
 * followed by data's dims after the first.  A segment no id names is 0,
 * or 1 for PROD, as in TensorFlow (for MAX and MIN too, unlike the
 * unsorted op).  Dtypes, order and accumulation as weft_unsorted_segment. */
WEFT_API weft_value *weft_segment(weft_ctx *cx, weft_reduction r, weft_value *data,
                                  weft_value *segment_ids);

/* tf.sparse.segment_sum and segment_mean (r WEFT_R_SUM or WEFT_R_MEAN,
 * others WEFT_EINVAL) and tf.sparse.segment_sqrt_n: the rows data[indices[i]]
 * reduced by segment_ids[i].  indices and segment_ids are i32 or i64
 * vectors of one length (another length is WEFT_EINVAL, when the call
 * runs where unknown); an index out of data's first dim fails as
 * weft_gather's.  segment_ids are sorted and non-negative, as TensorFlow
 * requires (WEFT_EINVAL when the call runs otherwise).  num_segments -1
 * (TensorFlow's None): one result row per id up to the last, as
 * weft_segment; num_segments >= 0: that many rows, an id past them
 * WEFT_EINVAL as in weft_unsorted_segment.  The result is [rows] followed
 * by data's dims after the first (data of rank 1 or more, known while
 * tracing); a segment without rows is 0.  Dtypes as weft_segment's (MEAN
 * of integers gives f64); sqrt_n, each sum over the square root of its
 * row count, takes f32 or f64 data (WEFT_EDTYPE otherwise).  Compositions
 * of weft_gather and the segment reductions; gradients reach data. */
WEFT_API weft_value *weft_sparse_segment(weft_ctx *cx, weft_reduction r, weft_value *data,
                                         weft_value *indices, weft_value *segment_ids,
                                         int64_t num_segments);
WEFT_API weft_value *weft_sparse_segment_sqrt_n(weft_ctx *cx, weft_value *data,
                                                weft_value *indices, weft_value *segment_ids,
                                                int64_t num_segments);

/* tf.gather_nd with batch_dims 0: indices has shape [..., k] with k <=
 * rank(params) (WEFT_ESHAPE otherwise; a scalar is WEFT_ESHAPE too), each
 * last-dim row an index tuple into params's first k dims; the result is
 * indices' dims but the last, then params's dims after the first k (k = 0
 * picks params whole).  A negative entry counts from the end of its dim,
 * as in weft_gather (TensorFlow refuses it); an entry out of range is
 * WEFT_EINVAL naming it and its tuple.  While tracing, an unknown k gives
 * a result of unknown rank.  Any dtype. */
WEFT_API weft_value *weft_gather_nd(weft_ctx *cx, weft_value *params, weft_value *indices);
/* tf.gather_nd(params, indices, batch_dims): the first batch_dims dims
 * of params and indices are a batch (they must agree, and be known while
 * tracing) and each index tuple picks within its own batch element: the
 * result is indices' dims but the last, then params's dims after the
 * first batch_dims + k.  batch_dims is within 0..min(rank(indices) - 1,
 * rank(params)) (WEFT_EINVAL otherwise; the ranks known while tracing);
 * weft_gather_nd is batch_dims 0.  A composition: the batch coordinates
 * joined to each tuple, then weft_gather_nd. */
WEFT_API weft_value *weft_gather_nd_ex(weft_ctx *cx, weft_value *params, weft_value *indices,
                                       int batch_dims);

/* tf.tensor_scatter_nd_update / tf.tensor_scatter_nd_add: a copy of tensor
 * (inputs are never changed) in which the slice each index tuple of
 * indices ([..., k], as weft_gather_nd) names is replaced by (update) or
 * added to (add) the matching slice of updates, whose shape is indices'
 * dims but the last, then tensor's dims after the first k (WEFT_ESHAPE
 * otherwise).  Tuples apply in row-major order of indices: with duplicate
 * tuples, update keeps the last one's values and add sums them all in
 * that order (floats in their own dtype, one addition after the other;
 * integers wrap).  Negative entries and entries out of range as in
 * weft_gather_nd.  updates must have tensor's dtype (WEFT_EDTYPE), except
 * a weak scalar, which takes it; update takes any dtype, add no bool. */
WEFT_API weft_value *weft_scatter_nd_update(weft_ctx *cx, weft_value *tensor,
                                            weft_value *indices, weft_value *updates);
WEFT_API weft_value *weft_scatter_nd_add(weft_ctx *cx, weft_value *tensor, weft_value *indices,
                                         weft_value *updates);
/* tf.scatter_nd(indices, updates, shape): weft_scatter_nd_add into zeros of
 * the updates' dtype and shape dims[0..rank) (rank 0..8, dims >= 0;
 * WEFT_EINVAL otherwise): duplicate tuples sum, as in TensorFlow; bool
 * updates are refused (WEFT_EINVAL).  The checks of the shapes and of the
 * indices are weft_scatter_nd_add's, whose name their messages give. */
WEFT_API weft_value *weft_scatter_nd(weft_ctx *cx, weft_value *indices, weft_value *updates,
                                     int rank, const int64_t *dims);
/* tf.tensor_scatter_nd_sub / _max / _min: as weft_scatter_nd_add, each
 * named slice combined with its updates in the same order by subtraction
 * (integers wrap), maximum or minimum (NaN propagates, as weft_maximum and
 * weft_minimum); no bool. */
WEFT_API weft_value *weft_scatter_nd_sub(weft_ctx *cx, weft_value *tensor, weft_value *indices,
                                         weft_value *updates);
WEFT_API weft_value *weft_scatter_nd_max(weft_ctx *cx, weft_value *tensor, weft_value *indices,
                                         weft_value *updates);
WEFT_API weft_value *weft_scatter_nd_min(weft_ctx *cx, weft_value *tensor, weft_value *indices,
                                         weft_value *updates);

/* tf.roll over one axis: element i along axis moves to (i + shift) mod
 * the dim (shift any int64, negative rolls back; a shift of a multiple of
 * the dim, or an empty dim, changes nothing).  np.repeat / tf.repeat with
 * one repeat count: each element along axis repeated `repeats` times in
 * place ([a, b] -> [a, a, b, b]); repeats >= 0 (WEFT_EINVAL otherwise).
 * Both keep a's dtype (any) and take a rank unknown while tracing; an axis
 * out of range is WEFT_EINVAL. */
WEFT_API weft_value *weft_roll(weft_ctx *cx, weft_value *a, int64_t shift, int axis);
WEFT_API weft_value *weft_repeat(weft_ctx *cx, weft_value *a, int64_t repeats, int axis);
/* tf.roll with lists: a rolled by shifts[i] along axes[i] for i < n, in
 * turn (an axis named twice rolls by the sum).  n must be at least 1;
 * the arrays are read during the call only.  With a's rank unknown while
 * tracing, an axis out of range fails when the function runs (naming
 * weft_roll). */
WEFT_API weft_value *weft_roll_axes(weft_ctx *cx, weft_value *a, const int64_t *shifts,
                                    const int *axes, size_t n);
/* tf.signal.fftshift(x, axes): x rolled by floor(dim / 2) along each of
 * axes[0..n), so that the zero frequency moves to the middle;
 * weft_ifftshift rolls back by the same amount (ifftshift(fftshift(x)) is
 * x for odd dims too).  n 0 (axes may then be NULL) shifts every axis of
 * x, whose rank must then be known while tracing; weft's complex numbers
 * are [..., 2], so name the axes for them (every axis would swap real and
 * imaginary parts).  Any dtype; dims may be unknown while tracing. */
WEFT_API weft_value *weft_fftshift(weft_ctx *cx, weft_value *a, const int *axes, size_t n);
WEFT_API weft_value *weft_ifftshift(weft_ctx *cx, weft_value *a, const int *axes, size_t n);
/* NumPy's modes for an index out of range (weft_take,
 * weft_ravel_multi_index): RAISE fails the call (WEFT_EINVAL, when the
 * function runs for traced indices), WRAP takes it modulo the dim (floor
 * modulo: -1 is the last), CLIP clips it into [0, dim) (a negative one to
 * 0, as NumPy: no counting from the end). */
typedef enum weft_index_mode {
    WEFT_INDEX_RAISE = 0,
    WEFT_INDEX_WRAP,
    WEFT_INDEX_CLIP
} weft_index_mode;
/* tf.experimental.numpy.take(a, indices, axis, mode): weft_gather of
 * a's elements along axis (WEFT_ALL_AXES: of a flattened) at indices (i32
 * or i64, any shape; WEFT_EDTYPE otherwise) under mode (RAISE takes
 * negative indices from the end, as NumPy; TensorFlow's NumPy layer
 * defaults to CLIP).  The result is a's dims before axis, indices' dims,
 * a's dims after axis.  An empty axis fails the call for any index. */
WEFT_API weft_value *weft_take(weft_ctx *cx, weft_value *a, weft_value *indices, int axis,
                               weft_index_mode mode);
/* NumPy's ravel_multi_index(multi_index, dims, mode): the i64 row-major
 * flat index of each coordinate tuple, multi_index[0..n) (i32 or i64, 1
 * to 8 of them, broadcasting together) into an array of dims[0..n)
 * (positive, their product within i64; WEFT_EINVAL otherwise), each
 * coordinate under mode (RAISE: one outside [0, dim) fails the call when
 * it runs, as NumPy's ValueError; order 'C' only).  The inverse of
 * weft_unravel_index. */
WEFT_API weft_value *weft_ravel_multi_index(weft_ctx *cx, weft_value *const *multi_index,
                                            size_t n, const int64_t *dims,
                                            weft_index_mode mode);
/* tf.unravel_index(indices, dims): the coordinates of each flat index in
 * a row-major array of dims[0..n), as [n, ...indices' shape] of the
 * indices' dtype (i32 or i64; TensorFlow takes 0-D and 1-D indices, weft
 * any rank).  dims (read during the call) are positive, at most 64 of
 * them (WEFT_EINVAL).  An index below 0 or at the product of dims or past
 * it fails the call with WEFT_EINVAL when the function runs (weft_check). */
WEFT_API weft_value *weft_unravel_index(weft_ctx *cx, weft_value *indices, const int64_t *dims,
                                        size_t n);
/* tf.repeat with a count per element: element i along axis repeated
 * counts[i] times in place (n == 1: every element counts[0] times).  The
 * counts are read during the call and must be >= 0; n must be the axis's
 * dim (1 also fits any dim), which must be known while tracing. */
WEFT_API weft_value *weft_repeat_counts(weft_ctx *cx, weft_value *a, const int64_t *counts,
                                        size_t n, int axis);

/* ---- Selection: results sized by the values ----
 *
 * The number of true elements or distinct values decides one dim of
 * these results, so while tracing that dim is unknown (WEFT_DIM_ANY, as
 * TensorFlow's None) and later ops take it as any unknown dim: a function
 * is traced once for all counts.  Each is an op of its own, folded on
 * constants and merged when equal, never fused; its kernel sizes the
 * result when it runs.  The results are the same on any worker count. */

/* tf.where(condition) with one argument (np.argwhere): the i64
 * coordinates of a's nonzero elements, [count, rank(a)], in row-major
 * order.  Any dtype: bool true, a number not 0 (NaN is nonzero, -0.0 is
 * not).  A scalar gives [count, 0] with count 0 or 1.  The count and the
 * positions are found in fixed chunks over the intra-op threads. */
WEFT_API weft_value *weft_argwhere(weft_ctx *cx, weft_value *a);
/* tf.boolean_mask(tensor, mask, axis): the slices of tensor where the
 * bool mask is true.  mask's rank k (at least 1) must be known while
 * tracing, and its dims match tensor's dims axis..axis+k-1 (WEFT_ESHAPE,
 * checked when known); the result is tensor's dims before axis, the
 * count of true elements, then tensor's dims after those k; tensor's
 * dtype (any), in row-major order of the mask.  axis may be negative
 * (counting from the end of tensor's dims, which then needs its rank
 * known while tracing).  A mask not of bool is WEFT_EDTYPE. */
WEFT_API weft_value *weft_boolean_mask(weft_ctx *cx, weft_value *tensor, weft_value *mask,
                                       int axis);
/* tf.unique(x) for a vector x of any dtype: outs[0] its distinct values in
 * order of first occurrence (x's dtype), outs[1] each element's index
 * among them (i64, x's shape; TensorFlow's default out_idx is i32, cast
 * it if needed), so weft_gather(outs[0], outs[1]) is x.  -0.0 and 0.0
 * are one value (the first one seen stands for both); a NaN equals
 * nothing, so each NaN is a value of its own (as in TensorFlow).  x not
 * a vector is WEFT_ESHAPE (while tracing, an unknown rank is checked when
 * the function runs).  The indices take one pass on one thread through
 * a hash table; the values and counts are read off them.  Returns
 * 0, or the context's error code with outs[] NULL (outs NULL is
 * WEFT_EINVAL). */
WEFT_API int weft_unique(weft_ctx *cx, weft_value *x, weft_value **outs);
/* tf.unique_with_counts: weft_unique's two results and outs[2], how many
 * elements of x each distinct value has (i64, the length of outs[0]). */
WEFT_API int weft_unique_with_counts(weft_ctx *cx, weft_value *x, weft_value **outs);
/* tf.math.invert_permutation(x): y with y[x[i]] = i, for x a vector (i32
 * or i64, WEFT_EDTYPE; a rank other than 1, WEFT_ESHAPE) holding each of
 * 0 .. n-1 once; y has x's dtype.  Anything else fails the call with
 * WEFT_EINVAL when it runs (weft_check).  An argsort of x underneath. */
WEFT_API weft_value *weft_invert_permutation(weft_ctx *cx, weft_value *x);
/* tf.compat.v1.setdiff1d(x, y, index_dtype) (TensorFlow's ListDiff): outs[0]
 * the elements of vector x that are not in vector y, in x's order (repeats
 * in x kept), and outs[1] their positions in x as index_dtype (i32, TF's
 * default, or i64).  x and y share a dtype, not bool (WEFT_EDTYPE); NaN
 * is never in y, and -0.0 is 0.0.  Lengths may be unknown while tracing
 * (the results' always are).  y is sorted, then each x found by binary
 * search. */
WEFT_API int weft_setdiff1d(weft_ctx *cx, weft_value *x, weft_value *y, weft_dtype index_dtype,
                            weft_value **outs);
/* NumPy's isin(element, test_elements, invert): bool of element's shape,
 * whether each element equals one of test_elements (any shape, read as
 * a list); invert negates.  The two promote to one dtype (two bools
 * compare as integers); NaN is in nothing and -0.0 equals 0.0.
 * test_elements are sorted once, then each element found by binary
 * search. */
WEFT_API weft_value *weft_isin(weft_ctx *cx, weft_value *element, weft_value *test_elements,
                               bool invert);
/* NumPy's unique(ar, return_index, return_inverse, return_counts) (the
 * Array API's unique_all) over ar flattened, any shape and dtype:
 * outs[0] the distinct values in ascending order (ar's dtype, weft_sort's
 * order; as NumPy 1.24's equal_nan, every NaN is one value, last; -0.0
 * and 0.0 are one value, written as the first of them in ar), outs[1]
 * the i64 index in ar flattened of each value's first occurrence,
 * outs[2] the i64 index into outs[0] of each element of ar (ar's shape,
 * as the Array API's; NumPy 1.24's is flat), outs[3] each value's i64
 * count.  The distinct count is unknown while tracing.  One stable
 * argsort, its inverse and a cumulative sum.  Returns 0, or the
 * context's error code with outs[] NULL (outs NULL is WEFT_EINVAL). */
WEFT_API int weft_unique_all(weft_ctx *cx, weft_value *ar, weft_value **outs);
/* NumPy's intersect1d(ar1, ar2, assume_unique), union1d(ar1, ar2) and
 * setxor1d(ar1, ar2, assume_unique): the distinct values, ascending (as
 * weft_unique_all's outs[0]), found in both, in either, and in exactly
 * one of ar1 and ar2 (any shapes, flattened; the dtypes promote to one).
 * assume_unique skips making each input distinct first: repeats in it
 * then give what NumPy's give.  NaN as NumPy 1.24: never in an
 * intersection, one NaN in a union, and in a symmetric difference one
 * NaN from each input that has any. */
WEFT_API weft_value *weft_intersect1d(weft_ctx *cx, weft_value *ar1, weft_value *ar2,
                                      bool assume_unique);
WEFT_API weft_value *weft_union1d(weft_ctx *cx, weft_value *ar1, weft_value *ar2);
WEFT_API weft_value *weft_setxor1d(weft_ctx *cx, weft_value *ar1, weft_value *ar2,
                                   bool assume_unique);
/* tf.experimental.numpy.compress(condition, a, axis): the slices of a
 * along axis (WEFT_ALL_AXES: a flattened) where the vector condition is
 * true (a number: not 0).  A condition shorter than the dim reads false
 * past its end; one longer must be false there (NumPy's IndexError: the
 * call fails with WEFT_EINVAL when it runs).  weft_boolean_mask
 * underneath. */
WEFT_API weft_value *weft_compress(weft_ctx *cx, weft_value *condition, weft_value *a, int axis);
/* NumPy's triu_indices(n, k, m) and tril_indices(n, k, m): outs[0] the
 * rows and outs[1] the columns (i64 vectors, row-major order) of the
 * elements of an n x m matrix on and above (triu) or on and below (tril)
 * diagonal k (0 the main one, > 0 above it).  n and m in [0, 2^31) and
 * at most 2^32 indices (WEFT_EINVAL); the lengths are known while
 * tracing.  Returns 0, or the context's error
 * code with outs[] NULL (outs NULL is WEFT_EINVAL). */
WEFT_API int weft_triu_indices(weft_ctx *cx, int64_t n, int64_t k, int64_t m, weft_value **outs);
WEFT_API int weft_tril_indices(weft_ctx *cx, int64_t n, int64_t k, int64_t m, weft_value **outs);
/* tf.experimental.numpy.nonzero(a): outs[d] the i64 coordinates along dim
 * d of a's nonzero elements (as weft_argwhere's: bool true, a number not
 * 0, NaN nonzero), row-major, one vector per dim; n_outs must be a's rank
 * (known while tracing; WEFT_EINVAL otherwise), a scalar is WEFT_ESHAPE
 * (NumPy deprecates it).  flatnonzero(a): the i64 indices of a's nonzero
 * elements in a flattened.  The counts are unknown while tracing.
 * weft_nonzero returns 0, or the context's error code with outs[] NULL
 * (outs NULL is WEFT_EINVAL). */
WEFT_API int weft_nonzero(weft_ctx *cx, weft_value *a, weft_value **outs, size_t n_outs);
WEFT_API weft_value *weft_flatnonzero(weft_ctx *cx, weft_value *a);
/* tf.experimental.numpy.diag_indices(n, ndim): outs[0..ndim) each the
 * i64 vector 0 .. n-1 (a value of its own each), which index the main
 * diagonal of an n x .. x n array; n >= 0 and ndim in [1, WEFT_MAX_RANK]
 * (WEFT_EINVAL).  ix_(seqs): for n vectors (bool ones read as the
 * indices of their trues, as NumPy), outs[k] seqs[k] reshaped to rank n
 * with its length on dim k and 1 elsewhere, so that they broadcast to an
 * open mesh; n in [1, WEFT_MAX_RANK].  Both return 0, or the context's
 * error code with outs[] NULL. */
WEFT_API int weft_diag_indices(weft_ctx *cx, int64_t n, int ndim, weft_value **outs);
WEFT_API int weft_ix(weft_ctx *cx, weft_value *const *seqs, size_t n, weft_value **outs);
/* tf.math.confusion_matrix(labels, predictions, num_classes, weights,
 * dtype): element [i, j] counts the positions whose label is i and
 * prediction j, or, with weights (NULL for none), sums their weights
 * (cast to dtype first, as TensorFlow's).  labels and predictions are i32
 * or i64 vectors of one length, weights a vector of that length; dtype
 * is i32 (TensorFlow's default), i64, f32 or f64.  num_classes -1 takes
 * the largest label or prediction + 1 when the call runs (a dim only the
 * values decide, as weft_bincount's length).  A negative label or
 * prediction, or one not below num_classes, is WEFT_EINVAL when it is
 * met.  Sums as weft_bincount's. */
WEFT_API weft_value *weft_confusion_matrix(weft_ctx *cx, weft_value *labels,
                                           weft_value *predictions, int64_t num_classes,
                                           weft_value *weights, weft_dtype dtype);
/* tf.math.bincount(arr, weights, minlength, maxlength, dtype) over all of
 * values (i32 or i64, any shape; a negative value is WEFT_EINVAL when it
 * is met): a vector whose element b counts the values equal to b, or,
 * with weights (values' shape, i32, i64, f32 or f64; NULL for none), sums
 * their weights.  Its length is the largest value + 1 (0 for no values),
 * at least minlength (>= 0) and at most maxlength (-1: no bound), values
 * at or past the length not counted.  The dtype is the weights', else
 * dtype (i32, i64, f32 or f64; TensorFlow's default is i32).  One thread,
 * in index order: integer sums wrap, float sums accumulate in f64 and
 * round once. */
WEFT_API weft_value *weft_bincount(weft_ctx *cx, weft_value *values, weft_value *weights,
                                   int64_t minlength, int64_t maxlength, weft_dtype dtype);
/* tf.histogram_fixed_width(values, [lo, hi], nbins, dtype): [nbins]
 * counts (dtype i32 or i64) of values (any numbers, any shape) in nbins
 * equal bins over [lo, hi); values below lo count in the first bin, at
 * or above hi in the last, as in TensorFlow; a NaN counts in none.  lo <
 * hi, both finite; nbins > 0. */
WEFT_API weft_value *weft_histogram_fixed_width(weft_ctx *cx, weft_value *values, double lo,
                                                double hi, int64_t nbins, weft_dtype dtype);
/* tf.histogram_fixed_width_bins(values, [lo, hi], nbins, dtype): the bin
 * of each value as weft_histogram_fixed_width counts it, values' shape,
 * dtype i32 or i64 (TensorFlow's default is i32); a NaN is in no bin and
 * gets -1 (TensorFlow casts the NaN to an integer). */
WEFT_API weft_value *weft_histogram_fixed_width_bins(weft_ctx *cx, weft_value *values, double lo,
                                                     double hi, int64_t nbins, weft_dtype dtype);
/* tf.range(limit) for a limit known only when the function runs (a
 * tensor, such as a dim of weft_shape or a reduction): the i64 vector 0,
 * 1, ..., limit - 1 (empty for limit <= 0).  limit is an i32 or i64
 * scalar (WEFT_EINVAL otherwise); the length is unknown while tracing. */
WEFT_API weft_value *weft_range_to(weft_ctx *cx, weft_value *limit);
/* tf.sequence_mask(lengths, maxlen, dtype): lengths' shape plus a last
 * axis of maxlen, element [..., j] is j < lengths[...] (bool, or cast to
 * dtype).  lengths i32 or i64; maxlen -1 takes the largest length, then
 * known only when the function runs (as TensorFlow's maxlen=None). */
WEFT_API weft_value *weft_sequence_mask(weft_ctx *cx, weft_value *lengths, int64_t maxlen,
                                        weft_dtype dtype);
/* tf.dynamic_partition(data, partitions, num_partitions): outs[k] for k <
 * num_partitions holds the slices of data whose entry of partitions (i32
 * or i64, the shape of data's first dims) is k, in row-major order; each a
 * weft_boolean_mask, so its length is unknown while tracing.  An entry
 * outside 0..num_partitions-1 fails the call with WEFT_EINVAL when it runs
 * (weft_check), as in TensorFlow.
 * Returns 0 or the context's error code with outs[] NULL. */
WEFT_API int weft_dynamic_partition(weft_ctx *cx, weft_value *data, weft_value *partitions,
                                    int num_partitions, weft_value **outs);
/* tf.dynamic_stitch(indices, data): merged[indices[m][i...], ...] =
 * data[m][i..., ...] for the n parts, in order (a later part's slice wins
 * over an earlier one's at the same index, and within a part the later
 * index).  indices[m] are i32 or i64 of any rank known while tracing;
 * data[m] has indices[m]'s shape then inner dims known while tracing and
 * the same for every part, and one dtype (any).  The result has the
 * largest index + 1 rows (known only when the function runs); rows no
 * index names are 0.  A negative index fails the call with WEFT_EINVAL
 * when it runs (weft_check); TensorFlow also requires int32 indices. */
WEFT_API weft_value *weft_dynamic_stitch(weft_ctx *cx, weft_value *const *indices,
                                         weft_value *const *data, size_t n);
/* tf.searchsorted(sorted_sequence, values, side): for each value, the i64
 * index in its row of sorted_sequence ([..., n], ascending along the last
 * axis) where inserting it keeps the order: before the equal elements
 * (right false, TF's 'left') or after them (right true).  values
 * [..., m] has sorted_sequence's dtype (not bool; WEFT_EDTYPE otherwise)
 * and leading dims (WEFT_ESHAPE), or sorted_sequence is a vector, which
 * serves every row of values of any rank, a scalar included (NumPy's
 * searchsorted; TensorFlow asks for the leading dims and a last axis);
 * the result has values' shape.
 * Floats follow weft_sort's order (NaN last).  A row not sorted gives some
 * index, as in TensorFlow.  Binary search, rows spread over the intra-op
 * threads. */
WEFT_API weft_value *weft_searchsorted(weft_ctx *cx, weft_value *sorted_sequence,
                                       weft_value *values, bool right);
/* tf.image.non_max_suppression(boxes, scores, max_output_size,
 * iou_threshold, score_threshold): the i32 indices of the boxes kept by
 * greedy hard NMS, [count] with count <= max_output_size (unknown while
 * tracing, as boolean_mask's).  boxes [n, 4] ([y1, x1, y2, x2], the two
 * corners in any order) and scores [n], both f32 or both f64.  The boxes
 * scoring above score_threshold are taken in order of falling score
 * (ties: lower index first), each kept unless its IoU with a box already
 * kept is above iou_threshold (IoU 0 for a box without area; IoU, scores
 * and both thresholds compared in the boxes' dtype), as TensorFlow;
 * -INFINITY as score_threshold keeps every score but NaN.
 * 0 <= max_output_size <= INT32_MAX, iou_threshold in [0, 1]
 * (WEFT_EINVAL otherwise). */
WEFT_API weft_value *weft_non_max_suppression(weft_ctx *cx, weft_value *boxes,
                                              weft_value *scores, int64_t max_output_size,
                                              double iou_threshold, double score_threshold);
/* tf.image.non_max_suppression_padded(boxes, scores, max_output_size,
 * iou_threshold, score_threshold, pad_to_max_output_size): outs[0] the
 * i32 indices of the boxes kept and outs[1] their i32 count.  With
 * pad_to_max_output_size, boxes [..., n, 4] and scores [..., n] (any batch
 * dims, the same on both, ranks known while tracing): outs[0] [...,
 * max_output_size], each batch element's indices first and zeros after
 * them, outs[1] [...], the batch over the workers.  Without it, boxes [n,
 * 4] only (TensorFlow slices the first element alike): outs[0] [count],
 * outs[1] a scalar.  The selection is weft_non_max_suppression's greedy
 * rule and arguments (TensorFlow's tiled kernel also drops boxes whose
 * coordinates are all <= 0, and reads the corner order from the first box
 * only; weft takes each box's corners in any order).  Returns
 * weft_ctx_status(cx); outs NULL is WEFT_EINVAL. */
WEFT_API int weft_non_max_suppression_padded(weft_ctx *cx, weft_value *boxes, weft_value *scores,
                                             int64_t max_output_size, double iou_threshold,
                                             double score_threshold, bool pad_to_max_output_size,
                                             weft_value **outs);
/* tf.image.non_max_suppression_overlaps(overlaps, scores,
 * max_output_size, overlap_threshold, score_threshold):
 * weft_non_max_suppression with overlaps[i, j] (f32 or f64 [n, n], as
 * scores) in place of the boxes' IoU, so any similarity may drive it;
 * overlap_threshold may be any number but NaN (WEFT_EINVAL). */
WEFT_API weft_value *weft_non_max_suppression_overlaps(weft_ctx *cx, weft_value *overlaps,
                                                       weft_value *scores,
                                                       int64_t max_output_size,
                                                       double overlap_threshold,
                                                       double score_threshold);
/* tf.image.non_max_suppression_with_scores(boxes, scores,
 * max_output_size, iou_threshold, score_threshold, soft_nms_sigma):
 * outs[0] the i32 indices of the boxes kept and outs[1] their scores (the
 * scores' dtype), both [count].  soft_nms_sigma 0 is
 * weft_non_max_suppression's hard NMS (the kept scores are the inputs');
 * above 0 it is Soft-NMS (Bodla et al.) as TensorFlow's kernel: the best
 * remaining candidate's score is multiplied by exp(-0.5 iou^2 / sigma) for
 * each box kept since it was last looked at, and it is kept when no such
 * box lowered it, else goes back among the candidates while still above
 * score_threshold; the box count kept may then come in any order of the
 * original scores.  Arguments as weft_non_max_suppression's, and
 * soft_nms_sigma finite and >= 0 (WEFT_EINVAL).  Returns 0, or the
 * context's error code with both outs NULL. */
WEFT_API int weft_non_max_suppression_with_scores(weft_ctx *cx, weft_value *boxes,
                                                  weft_value *scores, int64_t max_output_size,
                                                  double iou_threshold, double score_threshold,
                                                  double soft_nms_sigma, weft_value **outs);
/* tf.image.combined_non_max_suppression(boxes, scores,
 * max_output_size_per_class, max_total_size, iou_threshold,
 * score_threshold, pad_per_class, clip_boxes): greedy hard NMS per image
 * and class (weft_non_max_suppression's rules, at most
 * max_output_size_per_class boxes a class), then the boxes kept in all
 * classes by falling score.  boxes [batch, n, q, 4] (q 1: the same box for
 * every class, or q = classes) and scores [batch, n, classes], both f32 or
 * both f64, q and classes known while tracing.  outs[0] the boxes [batch,
 * d, 4] (each coordinate clipped to [0, 1] with clip_boxes), outs[1] their
 * scores [batch, d], outs[2] their classes [batch, d] (as numbers of the
 * boxes' dtype, as TensorFlow's floats), all zero past an image's
 * detections, and outs[3] the number of detections per image, i32
 * [batch].  d is max_total_size, or with pad_per_class
 * min(max_total_size, max_output_size_per_class * classes).  Equal scores
 * keep the lower box index within a class and the lower class across
 * classes (TensorFlow leaves ties to its sort).  0 <=
 * max_output_size_per_class and 1 <= max_total_size, both <= INT32_MAX;
 * iou_threshold in [0, 1] (WEFT_EINVAL otherwise).  Returns 0, or the
 * context's error code with every outs[k] NULL. */
WEFT_API int weft_combined_non_max_suppression(weft_ctx *cx, weft_value *boxes,
                                               weft_value *scores,
                                               int64_t max_output_size_per_class,
                                               int64_t max_total_size, double iou_threshold,
                                               double score_threshold, bool pad_per_class,
                                               bool clip_boxes, weft_value **outs);
/* tf.math.zero_fraction(x): the fraction of x's elements equal to 0, an
 * f32 scalar (NaN for an empty x).  Any dtype. */
WEFT_API weft_value *weft_zero_fraction(weft_ctx *cx, weft_value *x);
/* tf.math.is_non_decreasing(x), tf.math.is_strictly_increasing(x): a bool
 * scalar, whether each element of x (flattened, row-major) is >= (>) the
 * one before it; true for fewer than two elements, false where a NaN is
 * compared.  Numbers only (bool is WEFT_EDTYPE). */
WEFT_API weft_value *weft_is_non_decreasing(weft_ctx *cx, weft_value *x);
WEFT_API weft_value *weft_is_strictly_increasing(weft_ctx *cx, weft_value *x);
/* tf.math.count_nonzero(a, axis, keepdims): how many elements are not 0
 * (bool: true; NaN counts), i64, over axes as weft_reduce's (n 0: every
 * axis).  A sum of a comparison: it fuses. */
WEFT_API weft_value *weft_count_nonzero(weft_ctx *cx, weft_value *a, const int *axes, size_t n,
                                        bool keepdims);
/* tf.math.reduce_euclidean_norm(a, axis, keepdims): the square root of
 * the sum of squares over axes as weft_reduce's (n_axes 0: every axis).
 * Floats keep their dtype (the sum as weft_reduce's: f32 accumulates in
 * f64, where TensorFlow's kernel sums in f32; no scaling, so squares past
 * the dtype's range give inf, as there); integers as TensorFlow's: the
 * wrapping integer sum's root in f64, truncated (a wrapped negative sum
 * gives 0 where TensorFlow's gives INT_MIN); bool is WEFT_EDTYPE.  The
 * gradient is NaN where the norm is 0 (TensorFlow's x / norm too). */
WEFT_API weft_value *weft_reduce_euclidean_norm(weft_ctx *cx, weft_value *a, const int *axes,
                                                size_t n_axes, bool keepdims);

/* Stateless random numbers (tf.random.stateless_uniform / _normal): a
 * tensor of dtype and dims (known while tracing, as weft_fill's) whose
 * element i is a function of the seed and i alone, so that the same seed
 * gives the same bits on any worker count, eagerly and traced, and a new
 * seed per call gives new numbers without a retrace.  seed is an i32 or
 * i64 scalar s (the same as the pair [s, 0]) or a vector of two; element
 * i takes its part of the Philox4x32-10 block of the counter
 * (i / lanes, seed[1]) under the key seed[0], where a block holds 4
 * elements of a 4-byte dtype (a 32-bit word each) or 2 of an 8-byte one.
 *   uniform: f32, f64 in [minval, maxval) (24 or 53 random bits, rounded
 *   to the dtype and kept below maxval); i32, i64 in [minval, maxval),
 *   which must then be integers of the dtype's range.  minval < maxval,
 *   both finite.
 *   normal: f32, f64, mean + stddev z with z standard normal (Box-Muller,
 *   two normals from two words); mean finite, stddev finite and >= 0.
 * The streams are weft's own: they are not TensorFlow's numbers. */
WEFT_API weft_value *weft_random_uniform(weft_ctx *cx, weft_value *seed, weft_dtype dtype,
                                         int rank, const int64_t *dims, double minval,
                                         double maxval);
WEFT_API weft_value *weft_random_normal(weft_ctx *cx, weft_value *seed, weft_dtype dtype,
                                        int rank, const int64_t *dims, double mean,
                                        double stddev);
/* tf.random.stateless_truncated_normal: mean + stddev z with z a standard
 * normal truncated to [-2, 2] (the normal quantile of a uniform draw
 * between its CDF at -2 and at 2, not a rejection loop, so each element
 * still costs one block); f32, f64; mean finite, stddev finite and >= 0. */
WEFT_API weft_value *weft_random_truncated_normal(weft_ctx *cx, weft_value *seed,
                                                  weft_dtype dtype, int rank,
                                                  const int64_t *dims, double mean,
                                                  double stddev);
/* tf.random.experimental.stateless_shuffle(x, seed): x's slices along
 * axis 0 in a random order, a function of the seed alone (the same on any
 * worker count, eagerly and traced; a new seed per call, a new order
 * without a retrace).  Each slice gets a uniform 62-bit key of the draws
 * above and the slices go in the keys' order (weft_argsort, then
 * weft_gather): every order is equally likely but for keys drawn twice
 * (probability below n^2 / 2^63).  x has any dtype and a rank of 1 or
 * more known while tracing; its first dim may be unknown there. */
WEFT_API weft_value *weft_random_shuffle(weft_ctx *cx, weft_value *x, weft_value *seed);
/* tf.random.stateless_uniform(shape, seed, dtype, minval=None,
 * maxval=None) for integers: every i32 (or i64) equally likely, a tensor
 * of dims[0..rank) (known while tracing) drawn as weft_random_uniform's
 * integers: element i of the i32 draw is its 32-bit word minus 2^31, of
 * the i64 draw its 64-bit word (the block's words 2t and 2t + 1, high
 * then low) minus 2^63.  dtype i32 or i64. */
WEFT_API weft_value *weft_random_uniform_full_int(weft_ctx *cx, weft_value *seed,
                                                  weft_dtype dtype, int rank,
                                                  const int64_t *dims);
/* tf.random.experimental.stateless_split(seed, num): num new seeds, [num,
 * 2] of the seed's dtype, TensorFlow's composition (a full-range draw of
 * that shape).  num >= 0. */
WEFT_API weft_value *weft_random_split(weft_ctx *cx, weft_value *seed, int64_t num);
/* tf.random.experimental.stateless_fold_in(seed, data): a new seed, [2]
 * of data's dtype: a full-range scalar draw of the seed, then data (an
 * i32 or i64 scalar, else WEFT_EDTYPE / WEFT_ESHAPE), TensorFlow's
 * composition.  data may change between calls without a retrace. */
WEFT_API weft_value *weft_random_fold_in(weft_ctx *cx, weft_value *seed, weft_value *data);
/* tf.random.experimental.index_shuffle(index, seed, max_index): the place
 * of each index in a random permutation of [0, max_index], one for each
 * seed and max_index (both may change between calls without a retrace).
 * index is i32 or i64 of any shape, max_index a scalar of its dtype (else
 * WEFT_EDTYPE / WEFT_ESHAPE); the result has index's dtype and shape.
 * Running the function fails with WEFT_EINVAL when max_index is negative
 * or an index is outside [0, max_index].  weft's own permutation (a
 * twelve-round Feistel network on Philox words, cycle-walked into the
 * range; trace/kernel_index_shuffle.c), not TensorFlow's: no table, any
 * max_index costs the same, each element on its own. */
WEFT_API weft_value *weft_random_index_shuffle(weft_ctx *cx, weft_value *index,
                                               weft_value *seed, weft_value *max_index);
/* tf.image.stateless_random_flip_left_right / _up_down(images, seed):
 * each image of a batch [b, h, w, c] (b may be unknown while tracing), or
 * a single image [h, w, c], mirrored as weft_flip_left_right /
 * weft_flip_up_down where a uniform draw of the seed (one per image) is
 * below 1/2, else kept; any dtype, exact (a selection, not TensorFlow's
 * flip * mirrored + (1 - flip) * image, which turns an inf into NaN). */
WEFT_API weft_value *weft_random_flip_left_right(weft_ctx *cx, weft_value *images,
                                                 weft_value *seed);
WEFT_API weft_value *weft_random_flip_up_down(weft_ctx *cx, weft_value *images,
                                              weft_value *seed);
/* tf.image.stateless_random_brightness(images, max_delta, seed) and
 * stateless_random_contrast(images, lower, upper, seed):
 * weft_adjust_brightness by one delta drawn uniformly in [-max_delta,
 * max_delta) (max_delta finite and >= 0; 0 adds 0), weft_adjust_contrast
 * by one factor drawn in [lower, upper) (0 <= lower < upper, finite); one
 * draw of the images' dtype for the whole input, as TensorFlow's.  The
 * images' rules are those ops' (f32 or f64; contrast: rank 3 or more). */
WEFT_API weft_value *weft_random_brightness(weft_ctx *cx, weft_value *images, double max_delta,
                                            weft_value *seed);
WEFT_API weft_value *weft_random_contrast(weft_ctx *cx, weft_value *images, double lower,
                                          double upper, weft_value *seed);
/* tf.image.stateless_random_saturation(images, lower, upper, seed) and
 * stateless_random_hue(images, max_delta, seed): weft_adjust_saturation
 * by one factor drawn uniformly in [lower, upper) (0 <= lower < upper,
 * finite), weft_adjust_hue by one delta drawn in [-max_delta, max_delta)
 * (max_delta in [0, 0.5], TensorFlow's bound; 0 turns by 0); one draw of
 * the images' dtype for the whole input, as the two above.  RGB images as
 * those ops' (f32 or f64, a last dim of 3 known while tracing). */
WEFT_API weft_value *weft_random_saturation(weft_ctx *cx, weft_value *images, double lower,
                                            double upper, weft_value *seed);
WEFT_API weft_value *weft_random_hue(weft_ctx *cx, weft_value *images, double max_delta,
                                     weft_value *seed);
/* tf.image.generate_bounding_box_proposals(scores, bbox_deltas,
 * image_info, anchors, nms_threshold, pre_nms_topn, min_size,
 * post_nms_topn): Faster R-CNN's region proposals, as TensorFlow's kernel
 * (GPU-only there) computes them, one image per task.  scores [batch, H,
 * W, A], bbox_deltas [batch, H, W, 4 A] (each anchor's dy, dx, dh, dw),
 * image_info [batch, 5] (height, width, scale; the rest unread) and
 * anchors [H, W, 4 A] (each position's anchors as y1, x1, y2, x2, as the
 * kernel reads them), all f32 or all f64.  Per image: the anchors ranked
 * by falling score (ties by index, NaN last), the best pre_nms_topn
 * decoded (centre moved by dy and dx times the anchor's size, size times
 * exp of dh and dw, those at most log(1000 / 16)), clipped to [0, height]
 * x [0, width], dropped when the shorter side is below min_size times the
 * scale, then greedy NMS in rank order (a box overlapping a kept one by
 * more than nms_threshold of their union is dropped, as TensorFlow's GPU
 * NMS; one without area drops none) until post_nms_topn are kept; in the
 * dtype's arithmetic.  outs[0] [batch, post_nms_topn, 4] the boxes (y1,
 * x1, y2, x2), outs[1] [batch, post_nms_topn] their scores, zeros after
 * the last.  nms_threshold within 0..1, pre_nms_topn and post_nms_topn 1
 * or more, min_size finite (WEFT_EINVAL).  TensorFlow's defaults are 0.7,
 * 6000, 16 and 300.  Returns weft_ctx_status(cx); outs NULL is
 * WEFT_EINVAL. */
WEFT_API int weft_generate_bounding_box_proposals(weft_ctx *cx, weft_value *scores,
                                                  weft_value *bbox_deltas,
                                                  weft_value *image_info, weft_value *anchors,
                                                  double nms_threshold, int64_t pre_nms_topn,
                                                  double min_size, int64_t post_nms_topn,
                                                  weft_value **outs);
/* The fill of weft_extract_glimpse outside its image. */
typedef enum weft_glimpse_noise {
    WEFT_GLIMPSE_UNIFORM,    /* uniform between the image's least and greatest values */
    WEFT_GLIMPSE_GAUSSIAN,   /* each channel's mean + its standard deviation times a normal
                                draw, kept within the channel's least and greatest values */
    WEFT_GLIMPSE_ZERO        /* zeros */
} weft_glimpse_noise;
/* tf.image.extract_glimpse(input, size, offsets, centered, normalized,
 * noise): a size[0] x size[1] window of each image of input [batch,
 * height, width, channels] (f32 or f64; height and width at least 1), as
 * TensorFlow 2 places it from offsets [batch, 2] (f32 or f64, each row
 * (y, x), computed in f32 as TensorFlow does): normalized and centered,
 * the window's centre at (y + 1) / 2 of the image's height (x alike);
 * normalized only, its first row at y times the height; not normalized,
 * its first row at y (plus half the height when centered); each
 * converted toward zero.  What falls outside the image is noise, drawn
 * for the whole window from weft's random streams under seed (as
 * weft_random_uniform_like and weft_random_normal_like take it; NULL only
 * with WEFT_GLIMPSE_ZERO): not TensorFlow's numbers, but the same ones
 * for the same seed, and new ones for a new seed without a retrace.  The
 * result is [batch, size[0], size[1], channels] of input's dtype; no
 * gradient (TensorFlow has none). */
WEFT_API weft_value *weft_extract_glimpse(weft_ctx *cx, weft_value *input, const int64_t *size,
                                          weft_value *offsets, bool centered, bool normalized,
                                          weft_glimpse_noise noise, weft_value *seed);
/* tf.image.stateless_sample_distorted_bounding_box(image_size,
 * bounding_boxes, seed, min_object_covered, aspect_ratio_range,
 * area_range, max_attempts, use_image_if_no_bounding_boxes): a random
 * crop for data augmentation, by TensorFlow's algorithm with weft's random
 * stream (so not TensorFlow's crops).  Up to max_attempts times: an
 * aspect ratio drawn in aspect_ratio_range, a crop of it whose area is
 * within area_range of the image's (TensorFlow's rounding steps), at a
 * uniform position; the first crop of at least 10 pixels that covers
 * min_object_covered of the area of some box (every box of
 * bounding_boxes, f32 [batch, n, 4] as [y_min, x_min, y_max, x_max] in
 * [0, 1], or with none and use_image_if_no_bounding_boxes the whole image)
 * is the result, else the whole image.  image_size is i32 or i64 [3]
 * (height, width, channels); seed as weft_random_uniform's.  outs[0] the
 * crop's begin [y, x, 0] and outs[1] its size [h, w, -1] (image_size's
 * dtype, for weft_slice), outs[2] its box f32 [1, 1, 4] in [0, 1].
 * aspect_ratio_range NULL is [0.75, 1.33], area_range NULL [0.05, 1] (both
 * ranges lo <= hi, positive, areas <= 1); min_object_covered >= 0;
 * 1 <= max_attempts <= INT32_MAX (WEFT_EINVAL).  A box coordinate outside
 * [0, 1], no boxes without use_image_if_no_bounding_boxes or a side of
 * 0 fail the call when it runs (WEFT_EINVAL).  Returns 0, or the
 * context's error code with every outs[k] NULL. */
WEFT_API int weft_sample_distorted_bounding_box(weft_ctx *cx, weft_value *image_size,
                                                weft_value *bounding_boxes, weft_value *seed,
                                                double min_object_covered,
                                                const double *aspect_ratio_range,
                                                const double *area_range, int64_t max_attempts,
                                                bool use_image_if_no_bounding_boxes,
                                                weft_value **outs);
/* tf.image.stateless_random_crop(value, size, seed): the size[0..rank)
 * block of value (any dtype, rank known while tracing) at offsets drawn
 * uniformly per dim, TensorFlow's way: a uniform integer modulo dim -
 * size + 1 (62 random bits here).  Each size within 0..dim; a dim unknown
 * while tracing and smaller than its size fails when the function runs
 * (the gather's range error).  A dim taken whole is not cut. */
WEFT_API weft_value *weft_random_crop(weft_ctx *cx, weft_value *value, const int64_t *size,
                                      weft_value *seed);
/* The same draws with the shape of like (its values are not read), which
 * may be unknown while tracing: the numbers are those of the forms above
 * for like's dims when the function runs. */
WEFT_API weft_value *weft_random_uniform_like(weft_ctx *cx, weft_value *seed, weft_value *like,
                                              weft_dtype dtype, double minval, double maxval);
WEFT_API weft_value *weft_random_normal_like(weft_ctx *cx, weft_value *seed, weft_value *like,
                                             weft_dtype dtype, double mean, double stddev);
/* tf.random.stateless_categorical(logits, num_samples, seed, dtype): for
 * each row of logits [batch, classes] (f32 or f64, else WEFT_EDTYPE; rank
 * 2, else WEFT_ESHAPE), num_samples class indices drawn from
 * softmax(row), as [batch, num_samples] of dtype i32 or i64.  Sample s of
 * row r picks the first class whose running sum of exp(logit - max)
 * exceeds u times the row's total, u being element r * num_samples + s of
 * the f64 weft_random_uniform draw in [0, 1) of that seed (TensorFlow's
 * CPU method; weft's stream).  A logit of -inf is never drawn; logits of
 * +inf share the row evenly.  A row with a NaN logit or with every logit
 * -inf (or no classes) fails the call with WEFT_EINVAL naming it. */
WEFT_API weft_value *weft_random_categorical(weft_ctx *cx, weft_value *logits,
                                             int64_t num_samples, weft_value *seed,
                                             weft_dtype dtype);
/* tf.random.stateless_gamma(shape, seed, alpha, beta, dtype) and
 * stateless_poisson(shape, seed, lam, dtype): a tensor of dtype and
 * dims[0..rank) (known while tracing) of Gamma(alpha) draws divided by
 * beta (NULL: 1), at least the dtype's smallest normal number, or of
 * Poisson(lam) counts; alpha, beta and lam broadcast to the dims (NumPy's
 * rule, dims aligned from the right; any number dtype, alpha rounded to
 * dtype first as TensorFlow casts it).  Gamma: f32 or f64, Marsaglia and
 * Tsang's rejection (Gamma(alpha + 1) u^(1/alpha) below alpha = 1), NaN
 * for alpha not in (0, inf).  Poisson: i32, i64, f32 or f64; Knuth's
 * product of uniforms below lam = 10, Hormann's PTRS from there (as
 * TensorFlow's kernel); lam < 0 or NaN gives NaN (-1 in an integer dtype),
 * a count past an integer dtype's range its largest value.  Element i is
 * a function of the seed and i alone (its uniforms come from Philox
 * blocks of the counter (i, seed[1]) under keys derived from seed[0]), so
 * the bits are the same on any worker count, eagerly and traced; an f32
 * gamma draw (before beta) is the f64 draw of the same rounded alpha,
 * rounded once.  weft's own streams, not TensorFlow's numbers.  Gamma's
 * gradient in alpha is each sample's implicit derivative
 * (weft_random_gamma_grad, TensorFlow's rule; in beta the division's). */
WEFT_API weft_value *weft_random_gamma(weft_ctx *cx, weft_value *seed, weft_dtype dtype,
                                       int rank, const int64_t *dims, weft_value *alpha,
                                       weft_value *beta);
WEFT_API weft_value *weft_random_poisson(weft_ctx *cx, weft_value *seed, weft_dtype dtype,
                                         int rank, const int64_t *dims, weft_value *lam);
/* tf.random.stateless_binomial(shape, seed, counts, probs, output_dtype):
 * Binomial(counts, probs) successes of dtype (i32, i64, f32 or f64) and
 * shape dims[0..rank), counts and probs broadcast to it as
 * weft_random_poisson's lam (any number dtype, taken as f64).
 * TensorFlow's algorithm: the waiting times of geometric draws below
 * counts * probs = 10, Hormann's BTRS from there, n - Binomial(n, 1 - p)
 * for p > 1/2; counts <= 0 or probs <= 0 give 0, probs >= 1 counts, a NaN
 * NaN (-1 in an integer dtype).  The same seed rules and bits on any
 * worker count as the other draws; weft's own stream, not TensorFlow's
 * numbers. */
WEFT_API weft_value *weft_random_binomial(weft_ctx *cx, weft_value *seed, weft_dtype dtype,
                                          int rank, const int64_t *dims, weft_value *counts,
                                          weft_value *probs);
/* tf.nn.experimental.stateless_dropout(x, rate, seed): each element of x
 * kept with probability 1 - rate and scaled by 1 / (1 - rate), else 0;
 * kept exactly where weft_random_uniform_like(cx, seed, x, x's dtype, 0,
 * 1) is >= rate.  x is f32 or f64 (else WEFT_EDTYPE), of any shape (dims
 * unknown while tracing too); 0 <= rate < 1. */
WEFT_API weft_value *weft_dropout(weft_ctx *cx, weft_value *x, double rate, weft_value *seed);

/* ---- Convolution, pooling and resizing ----
 *
 * tf.nn.conv2d, depthwise_conv2d, conv2d_transpose, conv1d, max_pool2d,
 * avg_pool2d and tf.image.resize on NHWC data (TensorFlow's default
 * layout): input [batch, height, width, channels].  conv2d,
 * depthwise_conv2d, the pools and resize are ops with kernels of their
 * own (never fused), conv1d and conv2d_transpose compositions of them;
 * all run eager and traced alike, and batch, height and width may be
 * unknown while tracing unless an op says otherwise.
 *
 * Padding follows TensorFlow: WEFT_PADDING_VALID uses only windows that
 * lie inside the input (out = ceil((in - window + 1) / stride), an input
 * smaller than the window is WEFT_ESHAPE); WEFT_PADDING_SAME gives out =
 * ceil(in / stride) and pads the input with the fewest elements that
 * make that work, half before (rounded down) and the rest after.  The
 * window of a dilated filter spans (k - 1) * dilation + 1 elements.
 * Explicit pads: weft_pad first, then WEFT_PADDING_VALID.  strides and
 * dilations are int64_t[2] for height and width (NULL: 1 and 1), each
 * from 1 to INT32_MAX (WEFT_EINVAL otherwise); unlike TensorFlow on the
 * CPU, strides and dilations above 1 may be combined. */
typedef enum weft_padding { WEFT_PADDING_VALID, WEFT_PADDING_SAME } weft_padding;

/* tf.nn.conv2d(input, filters, strides, padding, dilations=dilations):
 * filters are [filter_height, filter_width, in_channels, out_channels]
 * (HWIO, TensorFlow's), in_channels equal to input's channels (grouped
 * convolutions are not supported: WEFT_ESHAPE); the result is [batch,
 * out_height, out_width, out_channels].  input and filters are both f32
 * or both f64 (WEFT_EDTYPE otherwise; cast integers first).  Padding
 * counts as zeros.  Products go to the BLAS in a build with one (as
 * weft_matmul's: each output element sums in the BLAS's order, the same
 * bits on any number of workers, eagerly and traced). */
WEFT_API weft_value *weft_conv2d(weft_ctx *cx, weft_value *input, weft_value *filters,
                                 const int64_t *strides, weft_padding padding,
                                 const int64_t *dilations);
/* tf.nn.depthwise_conv2d(input, filters, strides, padding, dilations):
 * filters [filter_height, filter_width, channels, multiplier]; each input
 * channel c is convolved with its own filters [.., .., c, k] into output
 * channel c * multiplier + k, so the result is [batch, out_height,
 * out_width, channels * multiplier].  Dtypes, padding, strides and
 * dilations as weft_conv2d; a direct loop (no BLAS), each output element
 * summed over its window in order. */
WEFT_API weft_value *weft_depthwise_conv2d(weft_ctx *cx, weft_value *input, weft_value *filters,
                                           const int64_t *strides, weft_padding padding,
                                           const int64_t *dilations);
/* tf.nn.separable_conv2d(input, depthwise_filter, pointwise_filter,
 * strides, padding, dilations): weft_depthwise_conv2d of input by
 * depthwise_filter [h, w, channels, multiplier] (with the strides, padding
 * and dilations), then a 1 x 1 weft_conv2d by pointwise_filter [1, 1,
 * channels * multiplier, out_channels].  Both filters' dims known while
 * tracing; f32 or f64, all three of one dtype. */
WEFT_API weft_value *weft_separable_conv2d(weft_ctx *cx, weft_value *input,
                                           weft_value *depthwise_filter,
                                           weft_value *pointwise_filter, const int64_t *strides,
                                           weft_padding padding, const int64_t *dilations);
/* tf.nn.dilation2d(input, filters, strides, padding, dilations): grayscale
 * dilation, out[b, y, x, c] = max over (dy, dx) of input[b, y * sh + dy *
 * rh, x * sw + dx * rw, c] (padded as weft_conv2d, the padding never
 * taken) + filters[dy, dx, c]; input [b, h, w, c], filters [fh, fw, c],
 * all but b known while tracing; f32 or f64.  NaN propagates (TensorFlow's
 * kernel skips it).  tf.nn.erosion2d is its dual, TensorFlow's own
 * definition: -dilation2d(-input, filters reversed in height and width). */
WEFT_API weft_value *weft_dilation2d(weft_ctx *cx, weft_value *input, weft_value *filters,
                                     const int64_t *strides, weft_padding padding,
                                     const int64_t *dilations);
WEFT_API weft_value *weft_erosion2d(weft_ctx *cx, weft_value *input, weft_value *filters,
                                    const int64_t *strides, weft_padding padding,
                                    const int64_t *dilations);
/* tf.nn.conv2d_transpose(input, filters, output_shape, strides, padding),
 * the gradient of weft_conv2d with respect to its input: filters are
 * [filter_height, filter_width, out_channels, in_channels] (TensorFlow's
 * order) with in_channels the input's; output_hw (int64_t[2], or NULL for
 * in * stride with SAME, (in - 1) * stride + filter with VALID) is the
 * result's height and width, which weft_conv2d with this window, strides
 * and padding must take back to the input's (WEFT_ESHAPE otherwise).
 * The result is [batch, output_hw[0], output_hw[1], out_channels].  The
 * input's height, width and channels and the filters' dims must be known
 * while tracing (the batch may be unknown).  Composed of the other ops:
 * the input spread with stride - 1 zeros between pixels, padded, and
 * convolved with the flipped filters (so it costs stride^2 times what a
 * scatter would). */
WEFT_API weft_value *weft_conv2d_transpose(weft_ctx *cx, weft_value *input, weft_value *filters,
                                           const int64_t *output_hw, const int64_t *strides,
                                           weft_padding padding);
/* weft_conv2d_transpose with tf.nn.conv2d_transpose's dilations
 * (int64_t[2], NULL for 1s): the filters' taps dilations apart, as in the
 * forward weft_conv2d the result must invert; without output_hw, VALID's
 * output is (in - 1) * stride + (filter - 1) * dilation + 1. */
WEFT_API weft_value *weft_conv2d_transpose_ex(weft_ctx *cx, weft_value *input,
                                              weft_value *filters, const int64_t *output_hw,
                                              const int64_t *strides, weft_padding padding,
                                              const int64_t *dilations);
/* tf.image.resize(images, [height, width], method) with TensorFlow 2's
 * half-pixel centers: images [batch, h, w, channels] or one image [h, w,
 * channels], f32 or f64 (WEFT_EDTYPE otherwise; TensorFlow gives f32 for
 * any input, cast first), h and w not 0; the result has the same rank
 * and dtype, with height x width (each 1..INT32_MAX).  Bilinear weighs
 * the four nearest pixels (clamped at the edges) in the dtype's
 * arithmetic and TensorFlow's order; nearest takes the pixel at
 * floor((o + 0.5) * in / out); area (TensorFlow's ResizeArea, always
 * antialiased) is the mean of the input area the output pixel covers,
 * [o s, (o + 1) s) with s = in / out along each dim, each input pixel
 * weighted by its overlap.  Bicubic is TensorFlow's ResizeBicubic with
 * half-pixel centers: Keys' cubic (a = -0.5) on the four pixels around
 * the source, its weights taken from TensorFlow's table of 1024 steps in
 * float, a pixel outside the image weighted 0 and the rest renormalized;
 * along the height first, then the width, in the dtype's arithmetic.
 * Bilinear, nearest and bicubic do not antialias (weft_resize_ex below
 * can, and adds TensorFlow's kernel methods). */
typedef enum weft_resize_method {
    WEFT_RESIZE_BILINEAR,
    WEFT_RESIZE_NEAREST,
    WEFT_RESIZE_AREA,
    WEFT_RESIZE_BICUBIC,
    WEFT_RESIZE_LANCZOS3,
    WEFT_RESIZE_LANCZOS5,
    WEFT_RESIZE_GAUSSIAN,
    WEFT_RESIZE_MITCHELLCUBIC
} weft_resize_method;
WEFT_API weft_value *weft_resize(weft_ctx *cx, weft_value *images, int64_t height,
                                 int64_t width, weft_resize_method method);
/* tf.image.resize(images, size, method, antialias): weft_resize, and the
 * methods TensorFlow runs through its ScaleAndTranslate kernel: LANCZOS3
 * and LANCZOS5 (Lanczos windows of radius 3 and 5), GAUSSIAN (radius 1.5,
 * sigma 0.5) and MITCHELLCUBIC, and with antialias BILINEAR (the triangle
 * kernel) and BICUBIC (Keys' cubic).  Each output pixel o samples the
 * input at (o + 0.5) in / out along each dim and weighs the pixels within
 * the kernel's radius of it, the weights normalized to 1; antialias
 * widens the kernel by in / out when shrinking, so that it averages
 * instead of skipping pixels.  Along the height first, then the width,
 * with TensorFlow's f32 weights; f32 images sum in f32 as TensorFlow's,
 * f64 images in f64 (TensorFlow returns f32 for them).  antialias does
 * nothing to NEAREST and AREA, as in TensorFlow. */
WEFT_API weft_value *weft_resize_ex(weft_ctx *cx, weft_value *images, int64_t height,
                                    int64_t width, weft_resize_method method, bool antialias);
/* How weft_image_projective_transform maps a coordinate outside the
 * image (TensorFlow's fill_mode): REFLECT about the edge ([abcd] ->
 * [dcba|abcd|dcba]), WRAP around ([abcd|abcd|abcd]), CONSTANT (the pixels
 * outside read as fill_value), NEAREST (the edge pixel). */
typedef enum weft_fill_mode {
    WEFT_FILL_REFLECT,
    WEFT_FILL_WRAP,
    WEFT_FILL_CONSTANT,
    WEFT_FILL_NEAREST
} weft_fill_mode;
/* tf.raw_ops.ImageProjectiveTransformV3(images, transforms, output_shape,
 * fill_value, interpolation, fill_mode), what Keras's RandomRotation,
 * RandomZoom and RandomTranslation run: output pixel (x, y) of image i
 * samples the input at ((a0 x + a1 y + a2) / k, (b0 x + b1 y + b2) / k),
 * k = c0 x + c1 y + 1, from row i of transforms (f32 [b, 8], or [1, 8] for
 * every image) = (a0, a1, a2, b0, b1, b2, c0, c1); k == 0 gives fill_value.
 * interpolation WEFT_RESIZE_BILINEAR or _NEAREST; a coordinate outside
 * the image is mapped by fill_mode, and a pixel still outside reads as
 * fill_value.  images [b, h, w, c] or one image [h, w, c], f32 or f64;
 * output_hw the result's h and w, NULL for the input's.  Coordinates and
 * weights are f32 as in TensorFlow (its bits for f32 images; f64 pixels
 * interpolate in f64, where TensorFlow rounds them to f32). */
WEFT_API weft_value *weft_image_projective_transform(weft_ctx *cx, weft_value *images,
                                                     weft_value *transforms,
                                                     const int64_t *output_hw,
                                                     weft_resize_method interpolation,
                                                     weft_fill_mode fill_mode, double fill_value);
/* tfa.image.rotate(images, angles, interpolation, fill_mode, fill_value)
 * and Keras RandomRotation's transform: each image turned counterclockwise
 * by its angle (radians; a scalar for all, or one per image) about its
 * centre, through weft_image_projective_transform with the transforms
 * Keras builds (in f32).  h and w known while tracing. */
WEFT_API weft_value *weft_rotate(weft_ctx *cx, weft_value *images, weft_value *angles,
                                 weft_resize_method interpolation, weft_fill_mode fill_mode,
                                 double fill_value);
/* tfa.image.translate(images, translations, interpolation, fill_mode,
 * fill_value) and Keras RandomTranslation's transform: each image shifted
 * by [dx, dy] pixels (right and down; f32 or f64, one pair for all or
 * [b, 2]), through weft_image_projective_transform. */
WEFT_API weft_value *weft_translate(weft_ctx *cx, weft_value *images, weft_value *translations,
                                    weft_resize_method interpolation, weft_fill_mode fill_mode,
                                    double fill_value);
/* Keras RandomZoom's transform: each image scaled about its centre, output
 * (x, y) reading the input at (zoom_x x + dx, zoom_y y + dy) with the
 * centre fixed (so a zoom above 1 zooms out); zooms f32 or f64 [zoom_x,
 * zoom_y] for all or [b, 2]; h and w known while tracing. */
WEFT_API weft_value *weft_zoom(weft_ctx *cx, weft_value *images, weft_value *zooms,
                               weft_resize_method interpolation, weft_fill_mode fill_mode,
                               double fill_value);
/* tf.image.crop_and_resize(image, boxes, box_indices, crop_size, method,
 * extrapolation_value): for each box b of boxes [n, 4] ([y1, x1, y2, x2]
 * normalized: 0 and 1 are the first and last pixel centres; y1 > y2
 * flips the crop), a crop_size[0] x crop_size[1] sampling of image
 * box_indices[b] (i32 or i64 [n], each within the batch: WEFT_EINVAL
 * otherwise) from images [batch, h, w, c] (f32 or f64; boxes of the same
 * dtype), giving [n, crop_h, crop_w, c].  Row y samples at y1 (h - 1) +
 * y (y2 - y1) (h - 1) / (crop_h - 1) (the box's centre for crop_h 1),
 * columns alike; samples outside the image take extrapolation_value;
 * WEFT_RESIZE_BILINEAR or _NEAREST (round half away from zero), in the
 * dtype's arithmetic and TensorFlow's order. */
WEFT_API weft_value *weft_crop_and_resize(weft_ctx *cx, weft_value *images, weft_value *boxes,
                                          weft_value *box_indices, const int64_t *crop_size,
                                          weft_resize_method method, double extrapolation_value);
/* tf.nn.conv1d(input, filters, stride, padding, dilations=dilation):
 * input [batch, width, channels], filters [filter_width, in_channels,
 * out_channels]; weft_conv2d over a height of 1 (as TensorFlow computes
 * it), stride and dilation >= 1. */
WEFT_API weft_value *weft_conv1d(weft_ctx *cx, weft_value *input, weft_value *filters,
                                 int64_t stride, weft_padding padding, int64_t dilation);
/* tf.nn.conv1d_transpose(input, filters, output_shape, strides, padding,
 * dilations): the gradient of weft_conv1d with respect to its input, as
 * weft_conv2d_transpose_ex in one dim: input [batch, width, in_channels]
 * (all but the batch known while tracing), filters [filter_width,
 * out_channels, in_channels]; output_width -1 for TensorFlow's default
 * (in * stride with SAME, (in - 1) * stride + (filter - 1) * dilation + 1
 * with VALID), otherwise a width weft_conv1d takes back to the input's
 * (WEFT_ESHAPE otherwise).  The result is [batch, output_width,
 * out_channels]. */
WEFT_API weft_value *weft_conv1d_transpose(weft_ctx *cx, weft_value *input, weft_value *filters,
                                           int64_t output_width, int64_t stride,
                                           weft_padding padding, int64_t dilation);
/* tf.nn.max_pool2d(input, ksize, strides, padding) and
 * tf.nn.avg_pool2d: the largest element, or the mean, of each window of
 * ksize[0] x ksize[1] elements (int64_t[2], each >= 1) of each channel;
 * the result is [batch, out_height, out_width, channels].  Padding is
 * never part of a window: max ignores it and avg divides by the number
 * of input elements the window holds (TensorFlow's rule).  max takes
 * i32, i64, f32 and f64 (a NaN in a window gives NaN); avg takes f32 and
 * f64, summed in the dtype pixel after pixel (row-major in the window, as
 * TensorFlow) and divided by the count.  Other dtypes are WEFT_EDTYPE. */
WEFT_API weft_value *weft_max_pool2d(weft_ctx *cx, weft_value *input, const int64_t *ksize,
                                     const int64_t *strides, weft_padding padding);
WEFT_API weft_value *weft_avg_pool2d(weft_ctx *cx, weft_value *input, const int64_t *ksize,
                                     const int64_t *strides, weft_padding padding);
/* tf.nn.max_pool_with_argmax(input, ksize, strides, padding,
 * include_batch_in_index): outs[0] is weft_max_pool2d's result, outs[1]
 * (i64, the same shape) the flat index of the element each maximum came
 * from, ((y width + x) channels + c), plus batch height width channels
 * with include_batch_in_index (which needs the batch known while
 * tracing).  The first element of the window in row-major order holds
 * each maximum, as TensorFlow's kernel picks it; a NaN in a window is
 * its maximum (weft_max_pool2d's rule; TensorFlow's kernel skips NaN
 * after the window's first element).  Padding is never picked.  NHWC with
 * h, w and c known while tracing; i32, i64, f32, f64.  Returns 0, or the
 * context's error code with both outs NULL (outs NULL is WEFT_EINVAL). */
WEFT_API int weft_max_pool_with_argmax(weft_ctx *cx, weft_value *input, const int64_t *ksize,
                                       const int64_t *strides, weft_padding padding,
                                       bool include_batch_in_index, weft_value **outs);
/* tf.nn.fractional_max_pool(value, pooling_ratio, pseudo_random,
 * overlapping, seed) and tf.nn.fractional_avg_pool (Graham's fractional
 * pooling): value [batch, height, width, channels] (height and width known
 * while tracing; f32, f64, i32, i64) pooled over regions of about
 * pooling_ratio[1] x pooling_ratio[2] elements into [batch, floor(height /
 * pooling_ratio[1]), floor(width / pooling_ratio[2]), channels].
 * pooling_ratio is double[4] as TensorFlow's: 1, the height's and the
 * width's ratio (finite, 1 or more, at most the dim), 1.  The regions
 * along each dim are k or k + 1 elements long (k = floor(dim / out)):
 * outs[1] (rows) and outs[2] (columns) hold TensorFlow's pooling
 * sequences, i64 [out + 1] from 0 to the dim, region i starting at seq[i]
 * and ending at seq[i + 1] - 1, or at seq[i + 1] (cut at the last
 * element) when overlapping.  The sequences are drawn by TensorFlow's
 * laws from weft_random_uniform's f64 stream under the seed (required; as
 * weft_random_uniform's), the same for every image: random (the longer
 * regions in an order uniformly drawn) or, with pseudo_random, Graham's
 * a_i = ceil(alpha (i + u)) with one draw u per dim; they are weft's
 * numbers, not TensorFlow's, and a new seed draws new regions without a
 * retrace.  outs[0] holds each region's maximum (a NaN in a region is its
 * maximum, weft_max_pool2d's rule) or its mean (summed in the dtype in
 * row-major order, then divided by the count, TensorFlow's order;
 * integers divide toward zero).  The gradient of a maximum goes to the
 * first element in row-major order that holds it (TensorFlow's
 * FractionalMaxPoolGrad); an average's spreads g / count over its region
 * (summed in f64 in TensorFlow's order, FractionalAvgPoolGrad's, and
 * rounded once; its own gradient is the average pool).  Returns
 * 0, or the context's error code with every out NULL (outs NULL is
 * WEFT_EINVAL). */
WEFT_API int weft_fractional_max_pool(weft_ctx *cx, weft_value *value,
                                      const double *pooling_ratio, bool pseudo_random,
                                      bool overlapping, weft_value *seed, weft_value **outs);
WEFT_API int weft_fractional_avg_pool(weft_ctx *cx, weft_value *value,
                                      const double *pooling_ratio, bool pseudo_random,
                                      bool overlapping, weft_value *seed, weft_value **outs);
/* tf.nn.max_pool1d(input, ksize, strides, padding) and tf.nn.avg_pool1d:
 * input [batch, width, channels], a window of ksize elements (>= 1)
 * every stride (>= 1); weft_max_pool2d's and weft_avg_pool2d's rules on
 * [batch, 1, width, channels], the height of 1 dropped from the result. */
WEFT_API weft_value *weft_max_pool1d(weft_ctx *cx, weft_value *input, int64_t ksize,
                                     int64_t stride, weft_padding padding);
WEFT_API weft_value *weft_avg_pool1d(weft_ctx *cx, weft_value *input, int64_t ksize,
                                     int64_t stride, weft_padding padding);

/* tf.nn.conv3d(input, filters, strides, padding, dilations): NDHWC input
 * [batch, depth, height, width, channels] (all but the batch known while
 * tracing), filters [depth, height, width, in, out channels] (known); the
 * result [batch, out_depth, out_height, out_width, out]; strides and
 * dilations int64_t[3] (NULL: 1s); padding, dtypes and the BLAS as
 * weft_conv2d's.  A composition: one weft_conv2d per filter depth tap on
 * the input's depth slices folded into the batch, the taps' results added
 * in tap order (so each element's sum is ordered unlike a 3-D loop's;
 * the results differ from one by rounding only). */
WEFT_API weft_value *weft_conv3d(weft_ctx *cx, weft_value *input, weft_value *filters,
                                 const int64_t *strides, weft_padding padding,
                                 const int64_t *dilations);
/* tf.nn.conv3d_transpose(input, filters, output_shape, strides, padding,
 * dilations), the gradient of weft_conv3d with respect to its input, as
 * weft_conv2d_transpose_ex in three dims: filters [depth, height, width,
 * out_channels, in_channels] with in_channels the input's (NDHWC, all but
 * the batch known while tracing); output_dhw (int64_t[3], or NULL for
 * in * stride with SAME, (in - 1) * stride + (filter - 1) * dilation + 1
 * with VALID) is the result's depth, height and width, which weft_conv3d
 * with this window, strides (int64_t[3], NULL for 1s), padding and
 * dilations (likewise) must take back to the input's (WEFT_ESHAPE
 * otherwise).  The result is [batch, output_dhw.., out_channels].  The
 * same composition: the input spread by the strides, padded, and
 * correlated with the flipped filters through weft_conv3d. */
WEFT_API weft_value *weft_conv3d_transpose(weft_ctx *cx, weft_value *input, weft_value *filters,
                                           const int64_t *output_dhw, const int64_t *strides,
                                           weft_padding padding, const int64_t *dilations);
/* tf.nn.max_pool3d(input, ksize, strides, padding) and tf.nn.avg_pool3d:
 * the 2-D pools' rules on windows of ksize[0] x ksize[1] x ksize[2]
 * (int64_t[3]; strides too) of NDHWC input (all but the batch known while
 * tracing): max takes i32, i64, f32, f64, avg f32 and f64 and divides by
 * the real elements of each window.  The 2-D pool over height and width,
 * then the depth taps combined; avg's mean is the mean of the 2-D means,
 * which may differ from TensorFlow's one sum by rounding. */
WEFT_API weft_value *weft_max_pool3d(weft_ctx *cx, weft_value *input, const int64_t *ksize,
                                     const int64_t *strides, weft_padding padding);
WEFT_API weft_value *weft_avg_pool3d(weft_ctx *cx, weft_value *input, const int64_t *ksize,
                                     const int64_t *strides, weft_padding padding);

/* ---- Signal ops ----
 *
 * tf.signal.frame(signal, frame_length, frame_step, pad_end, pad_value,
 * axis): the frames of length frame_length every frame_step elements
 * along axis (whose dim must be known while tracing) as one gather: the
 * axis becomes [frames, frame_length].  Without pad_end, frames = 1 +
 * (n - frame_length) / frame_step (0 when n < frame_length); with it,
 * ceil(n / frame_step) frames over the signal padded at the end with
 * pad_value.  frame_length, frame_step >= 1.  Any dtype. */
WEFT_API weft_value *weft_frame(weft_ctx *cx, weft_value *signal, int64_t frame_length,
                                int64_t frame_step, bool pad_end, double pad_value, int axis);
/* tf.signal.overlap_and_add(signal, frame_step): [..., frames,
 * frame_length] to [..., (frames - 1) frame_step + frame_length], each
 * frame added in at f * frame_step (the inverse of weft_frame with a
 * window that sums to one); frame_step >= 1.  Every dim known while
 * tracing but the first, frames and frame_length not 0 (WEFT_ESHAPE);
 * rank below WEFT_MAX_RANK.  Numbers (not bool). */
WEFT_API weft_value *weft_overlap_and_add(weft_ctx *cx, weft_value *signal, int64_t frame_step);
/* tf.signal.hann_window(window_length, periodic, dtype) and
 * hamming_window: a - b cos(2 pi i / denom) with (a, b) = (0.5, 0.5) or
 * (0.54, 0.46), in dtype (f32 or f64) and TensorFlow's order; denom is
 * window_length for a periodic window of even length, window_length - 1
 * otherwise (TensorFlow's rule); a length of 1 gives [1]. */
WEFT_API weft_value *weft_hann_window(weft_ctx *cx, int64_t window_length, bool periodic,
                                      weft_dtype dtype);
WEFT_API weft_value *weft_hamming_window(weft_ctx *cx, int64_t window_length, bool periodic,
                                         weft_dtype dtype);
/* tf.signal.kaiser_window(window_length, beta, dtype): exp(num - beta)
 * i0e(num) / i0e(beta) with num = beta sqrt(max(0, 1 - (arg / h)^2)),
 * arg = i - h, h = (window_length - 1) / 2, TensorFlow's steps in dtype
 * (f32 or f64); TensorFlow's default beta is 12.  A length of 1 gives [1].
 * tf.signal.kaiser_bessel_derived_window(window_length, beta, dtype): the
 * square roots of the running sums of a Kaiser window of window_length /
 * 2 + 1 over its total, the first window_length / 2 of them, then the
 * same reversed; window_length even (TensorFlow silently drops one
 * element of an odd length; weft refuses it, WEFT_EINVAL).
 * tf.signal.vorbis_window(window_length, dtype): sin(pi / 2 sin^2(pi (i +
 * 1/2) / window_length)).  window_length >= 0, beta finite. */
WEFT_API weft_value *weft_kaiser_window(weft_ctx *cx, int64_t window_length, double beta,
                                        weft_dtype dtype);
WEFT_API weft_value *weft_kaiser_bessel_derived_window(weft_ctx *cx, int64_t window_length,
                                                       double beta, weft_dtype dtype);
WEFT_API weft_value *weft_vorbis_window(weft_ctx *cx, int64_t window_length, weft_dtype dtype);
/* tf.signal.dct(input, type, n, axis=-1, norm): the type-`type` (1 to 4)
 * discrete cosine transform of input's last axis, SciPy's definitions
 * (type 2: y[k] = 2 sum_n x[n] cos(pi k (2n + 1) / 2N)); ortho scales to
 * the orthonormal transform (norm="ortho"; not for type 1).  n 0 takes the
 * axis's length; another n cuts the axis to its first n elements or pads
 * it with zeros to n.  f32 or f64 (WEFT_EDTYPE), the last dim known while
 * tracing (WEFT_ESHAPE); type 1 needs a length of 2 or more.  Computed as
 * one product with the N x N cosine matrix (made while tracing, kept as a
 * constant of the program; N^2 elements, so meant for the lengths of mel
 * bins and short frames), on the BLAS as weft_matmul.
 * weft_idct: tf.signal.idct, the DCT of the inverse type (2 and 3 swap, 1
 * and 4 are their own) with the same scaling as SciPy's idct:
 * idct(dct(x)) is 2N x for type 2 without ortho, x with it. */
WEFT_API weft_value *weft_dct(weft_ctx *cx, weft_value *input, int type, int64_t n, bool ortho);
WEFT_API weft_value *weft_idct(weft_ctx *cx, weft_value *input, int type, int64_t n, bool ortho);
/* tf.signal.linear_to_mel_weight_matrix: the [num_spectrogram_bins,
 * num_mel_bins] matrix that maps a linear spectrogram (bins from 0 Hz to
 * sample_rate / 2) to num_mel_bins triangular bands evenly spaced on the
 * HTK mel scale (1127 ln(1 + f / 700)) between lower_edge_hertz and
 * upper_edge_hertz; the DC bin's row is zero.  TensorFlow's steps in
 * dtype (f32 or f64), so the same rounding; a constant once folded.
 * WEFT_EINVAL unless both bin counts are >= 1, sample_rate > 0,
 * 0 <= lower_edge_hertz < upper_edge_hertz <= sample_rate / 2. */
WEFT_API weft_value *weft_linear_to_mel_weight_matrix(weft_ctx *cx, int64_t num_mel_bins,
                                                      int64_t num_spectrogram_bins,
                                                      double sample_rate,
                                                      double lower_edge_hertz,
                                                      double upper_edge_hertz, weft_dtype dtype);
/* tf.signal.mdct(signals, frame_length, window_fn, pad_end, norm): frames
 * of frame_length (a multiple of 4) every frame_length / 2 along the last
 * axis (known while tracing), times the window, each frame's quarters (a,
 * b, c, d) folded into (-c reversed - d, a - b reversed), then the type-4
 * DCT (weft_dct's, orthonormal when ortho): [..., frames, frame_length /
 * 2].  window: a [frame_length] value of the signals' dtype, or NULL for
 * TensorFlow's default, the Vorbis window; TensorFlow's window_fn=None is
 * a window of 1 / sqrt(2) everywhere (weft_fill).
 * tf.signal.inverse_mdct(mdcts, window_fn, norm): the type-4 DCT of
 * [..., frames, N] (N even, known while tracing; over 2N without ortho)
 * unfolded into frames of 2N, times the window (NULL: Vorbis), overlapped
 * and added every N.  With a window meeting the Princen-Bradley condition
 * (Vorbis, Kaiser-Bessel-derived) inverse_mdct(mdct(x)) is x where the
 * frames overlap. */
WEFT_API weft_value *weft_mdct(weft_ctx *cx, weft_value *signals, int64_t frame_length,
                               weft_value *window, bool pad_end, bool ortho);
WEFT_API weft_value *weft_inverse_mdct(weft_ctx *cx, weft_value *mdcts, weft_value *window,
                                       bool ortho);
/* tf.signal.mfccs_from_log_mel_spectrograms: the type-2 DCT of the last
 * axis (the mel bins, known while tracing and not 0) times
 * 1 / sqrt(2 bins); f32 or f64.  Keep the first coefficients with
 * weft_slice. */
WEFT_API weft_value *weft_mfccs_from_log_mel_spectrograms(weft_ctx *cx,
                                                          weft_value *log_mel_spectrograms);

/* ---- Fourier transforms ----
 *
 * weft has no complex dtype: a complex tensor is a real one (f32 or f64)
 * whose last dim is 2, each element's real part then its imaginary part,
 * which is the memory layout of C99's float complex and double complex
 * arrays (a result's data may be read through such a pointer); the
 * helpers below make and take them apart.  Each transform runs over the
 * innermost axis of its numbers (the axis before the pairs), any dims
 * before it being a batch; each row is computed in f64 (a radix-2 FFT, or
 * Bluestein's for lengths that are no power of two: O(n log n) for every
 * n) and rounded once to the dtype, so f32 results are as close as f32
 * holds.  Errors (WEFT_EDTYPE, WEFT_ESHAPE, WEFT_EINVAL) name the op. */

/* Complex numbers as pairs: tf.complex(real, imag) stacks two f32 or f64
 * tensors of one dtype and shape on a new last axis; weft_real and
 * weft_imag take the parts back (the pairs' axis dropped); weft_conj
 * negates the imaginary parts; weft_angle is atan2(imag, real);
 * weft_complex_abs (tf.abs of a complex tensor) is sqrt(re^2 + im^2),
 * computed in f64 for f32 (f64 parts beyond 1e154 overflow where C's
 * hypot would not); weft_complex_mul is the elementwise complex product
 * of a and b (broadcast as weft_mul; e.g. a spectrum times a filter's).
 * Their complex inputs are [..., 2] with the 2 known while tracing
 * (WEFT_ESHAPE), f32 or f64 (WEFT_EDTYPE).  Compositions that fuse. */
WEFT_API weft_value *weft_complex(weft_ctx *cx, weft_value *real, weft_value *imag);
WEFT_API weft_value *weft_real(weft_ctx *cx, weft_value *z);
WEFT_API weft_value *weft_imag(weft_ctx *cx, weft_value *z);
WEFT_API weft_value *weft_conj(weft_ctx *cx, weft_value *z);
WEFT_API weft_value *weft_angle(weft_ctx *cx, weft_value *z);
WEFT_API weft_value *weft_complex_abs(weft_ctx *cx, weft_value *z);
WEFT_API weft_value *weft_complex_mul(weft_ctx *cx, weft_value *a, weft_value *b);

/* tf.signal.fft(input): y[k] = sum_j x[j] exp(-2 pi i j k / n) of
 * input [..., n, 2]; weft_ifft: tf.signal.ifft, the + sign and divided by
 * n (ifft(fft(x)) is x).  n may be unknown while tracing; n 0 gives an
 * empty result. */
WEFT_API weft_value *weft_fft(weft_ctx *cx, weft_value *input);
WEFT_API weft_value *weft_ifft(weft_ctx *cx, weft_value *input);
/* tf.signal.rfft(input, [fft_length]): the first fft_length / 2 + 1 bins
 * of the transform of real input [..., len] (the rest are their
 * conjugates), as [..., fft_length / 2 + 1, 2].  The input's last axis is
 * cut or zero-padded to fft_length; fft_length 0 takes len (known while
 * tracing). */
WEFT_API weft_value *weft_rfft(weft_ctx *cx, weft_value *input, int64_t fft_length);
/* tf.signal.irfft(input, [fft_length]): the real signal [..., fft_length]
 * whose rfft is input [..., bins, 2], divided by fft_length (irfft(rfft(x))
 * is x).  The first fft_length / 2 + 1 bins are read (missing ones are
 * 0), the imaginary parts of bin 0 and (fft_length even) of bin
 * fft_length / 2 are ignored, as pocketfft's and TensorFlow's are;
 * fft_length 0 takes 2 (bins - 1) (bins known while tracing). */
WEFT_API weft_value *weft_irfft(weft_ctx *cx, weft_value *input, int64_t fft_length);
/* tf.signal.stft(signals, frame_length, frame_step, fft_length, window_fn,
 * pad_end): the rfft of each frame (weft_frame's frames along the last
 * axis, whose length must be known while tracing) times the window:
 * [..., frames, fft_length / 2 + 1, 2].  window is a value of
 * [frame_length] in the signals' dtype, or NULL for TensorFlow's default,
 * the periodic Hann window (weft_hann_window); a rectangular window is
 * weft_fill's ones.  fft_length 0 is TensorFlow's default, the least
 * power of two >= frame_length.  frame_length, frame_step >= 1. */
WEFT_API weft_value *weft_stft(weft_ctx *cx, weft_value *signals, int64_t frame_length,
                               int64_t frame_step, int64_t fft_length, weft_value *window,
                               bool pad_end);
/* tf.signal.inverse_stft(stfts, frame_length, frame_step, fft_length,
 * window_fn): each frame's irfft of fft_length (0: as weft_stft) cut or
 * zero-padded to frame_length, times the window (NULL: the periodic
 * Hann window, TensorFlow's default), then weft_overlap_and_add: stfts
 * [..., frames, bins, 2] to [..., (frames - 1) frame_step + frame_length].
 * The frames and, of the dims before them, all but the first known while
 * tracing.  For x back from stft(x), pass weft_inverse_stft_window of
 * stft's window. */
WEFT_API weft_value *weft_inverse_stft(weft_ctx *cx, weft_value *stfts, int64_t frame_length,
                                       int64_t frame_step, int64_t fft_length,
                                       weft_value *window);
/* tf.signal.inverse_stft_window_fn(frame_step, forward_window_fn)'s
 * window: the forward window [frame_length] (f32 or f64, its length known
 * while tracing) over the sum of the squares of the windows that overlap
 * each sample, frame_step apart, so that inverse_stft undoes stft where
 * the frames cover the signal. */
WEFT_API weft_value *weft_inverse_stft_window(weft_ctx *cx, int64_t frame_step,
                                              weft_value *window);
/* tf.signal.fft2d / ifft2d / fft3d / ifft3d: the transforms of weft_fft and
 * weft_ifft over the 2 or 3 innermost axes of numbers of input [..., n1,
 * n2, 2] (or [..., n1, n2, n3, 2]), one axis after another (an outer axis
 * brought innermost by a transpose). */
WEFT_API weft_value *weft_fft2d(weft_ctx *cx, weft_value *input);
WEFT_API weft_value *weft_ifft2d(weft_ctx *cx, weft_value *input);
WEFT_API weft_value *weft_fft3d(weft_ctx *cx, weft_value *input);
WEFT_API weft_value *weft_ifft3d(weft_ctx *cx, weft_value *input);
/* tf.signal.rfft2d / rfft3d (input, fft_length): weft_rfft over the
 * innermost axis, then weft_fft over each outer one; real [..., a, b] to
 * [..., fa, fb / 2 + 1, 2].  fft_length (int64_t[2] or [3], borrowed)
 * cuts or zero-pads each axis; NULL takes the input's dims.
 * tf.signal.irfft2d / irfft3d: weft_ifft over the outer axes, then
 * weft_irfft over the innermost: [..., fa, bins, 2] to [..., fa, fb]; NULL
 * takes the dims and 2 (bins - 1).  The outer transformed axes known while
 * tracing. */
WEFT_API weft_value *weft_rfft2d(weft_ctx *cx, weft_value *input, const int64_t *fft_length);
WEFT_API weft_value *weft_irfft2d(weft_ctx *cx, weft_value *input, const int64_t *fft_length);
WEFT_API weft_value *weft_rfft3d(weft_ctx *cx, weft_value *input, const int64_t *fft_length);
WEFT_API weft_value *weft_irfft3d(weft_ctx *cx, weft_value *input, const int64_t *fft_length);
/* tf.signal.fftnd / ifftnd / rfftnd / irfftnd (input, fft_length, axes),
 * NumPy's fftn family: the transforms over any n_axes axes of numbers
 * (complex [..., 2] tensors count their axes before the pairs' axis;
 * negative axes from the last of them).  axes (int[n_axes], borrowed, no
 * axis twice) NULL takes the last n_axes axes; fft_length (int64_t[n_axes],
 * borrowed) cuts or zero-pads each axis first, NULL keeps the dims; with
 * both NULL, n_axes 0 takes every axis.  rfftnd takes a real tensor and
 * gives the last axis listed fft_length / 2 + 1 bins (a real transform),
 * the others complex ones; irfftnd runs the inverse complex transforms,
 * then the real inverse along the last axis listed (length fft_length's,
 * else 2 (bins - 1)), scaled by 1 / n per axis as ifft.  An axis cut or
 * padded needs its dim known while tracing.  TensorFlow's norm is
 * weft_fftnd_norm's below (here its default, "backward": the inverse is
 * scaled).  The 1-D node
 * per axis, so gradients as those of weft_fft and weft_rfft. */
WEFT_API weft_value *weft_fftnd(weft_ctx *cx, weft_value *input, const int64_t *fft_length,
                                const int *axes, int n_axes);
WEFT_API weft_value *weft_ifftnd(weft_ctx *cx, weft_value *input, const int64_t *fft_length,
                                 const int *axes, int n_axes);
WEFT_API weft_value *weft_rfftnd(weft_ctx *cx, weft_value *input, const int64_t *fft_length,
                                 const int *axes, int n_axes);
WEFT_API weft_value *weft_irfftnd(weft_ctx *cx, weft_value *input, const int64_t *fft_length,
                                  const int *axes, int n_axes);
/* The N-D transforms with tf.signal.fftnd's and NumPy's norm: BACKWARD
 * (the default above: the inverse scaled by 1 / N), ORTHO (both ways by
 * 1 / sqrt(N)) or FORWARD (the forward transform by 1 / N, the inverse
 * unscaled), N the product of the transformed lengths (the real ones for
 * rfftnd and irfftnd; a dim unknown while tracing counts when the call
 * runs).  kind picks the transform, whose arguments these are (its
 * errors named weft_fftnd_norm); another kind or norm is WEFT_EINVAL.
 * The scale is one multiplication or division after the transforms,
 * where NumPy scales each axis's transform, so the last bits may
 * differ. */
typedef enum weft_fftnd_kind { WEFT_FFTND, WEFT_IFFTND, WEFT_RFFTND, WEFT_IRFFTND } weft_fftnd_kind;
typedef enum weft_fft_norm {
    WEFT_FFT_NORM_BACKWARD, WEFT_FFT_NORM_ORTHO, WEFT_FFT_NORM_FORWARD
} weft_fft_norm;
WEFT_API weft_value *weft_fftnd_norm(weft_ctx *cx, weft_fftnd_kind kind, weft_value *input,
                                     const int64_t *fft_length, const int *axes, int n_axes,
                                     weft_fft_norm norm);

/* ---- Image ops ----
 *
 * tf.nn.space_to_depth / depth_to_space and tf.image's pixel arithmetic,
 * compositions of the ops above (they fuse where those do).  Images are
 * [..., height, width, channels]; errors name the public op. */

/* tf.nn.space_to_depth(x, block_size): NHWC [b, h, w, c] to
 * [b, h / s, w / s, s * s * c], each s x s block of pixels one pixel whose
 * channels are the block's pixels in row order (TensorFlow's layout).
 * block_size s >= 2 (WEFT_EINVAL); h, w and c known while tracing, h and
 * w multiples of s (WEFT_ESHAPE); the batch may be unknown.  Any dtype. */
WEFT_API weft_value *weft_space_to_depth(weft_ctx *cx, weft_value *x, int64_t block_size);
/* tf.nn.depth_to_space(x, block_size): the inverse, [b, h, w, s * s * c]
 * to [b, h * s, w * s, c]; c a multiple of s * s. */
WEFT_API weft_value *weft_depth_to_space(weft_ctx *cx, weft_value *x, int64_t block_size);
/* tf.space_to_batch_nd(input, block_shape, paddings): input [b, d_1 ...
 * d_m, rest...] with its m spatial dims zero-padded by paddings[i] =
 * {before, after} and each cut into blocks of block_shape[i], every
 * offset within a block becoming a batch of its own: the result is [b
 * prod(block_shape), (d_i + pads) / block_shape[i] ..., rest...], the
 * block offsets major and the old batch minor in the new batch index
 * (TensorFlow's order).  The spatial and later dims known while tracing
 * (the batch may not be), each padded dim a multiple of its block
 * (WEFT_EINVAL), blocks 1..INT32_MAX and pads 0..INT32_MAX (WEFT_EINVAL),
 * m >= 1 and rank + m <= WEFT_MAX_RANK (WEFT_ESHAPE).  Any dtype.
 * weft_batch_to_space_nd(input, block_shape, crops): the inverse, [b,
 * d_1 ... d_m, rest...] to [b / prod(block_shape), d_i block_shape[i] -
 * crops[i][0] - crops[i][1] ..., rest...]; every dim known while
 * tracing, b a multiple of the block's size, crops that leave >= 0
 * elements (WEFT_EINVAL). */
WEFT_API weft_value *weft_space_to_batch_nd(weft_ctx *cx, weft_value *input, int m,
                                            const int64_t *block_shape,
                                            const int64_t (*paddings)[2]);
WEFT_API weft_value *weft_batch_to_space_nd(weft_ctx *cx, weft_value *input, int m,
                                            const int64_t *block_shape, const int64_t (*crops)[2]);
/* tf.image.extract_patches(images, sizes, strides, rates, padding): NHWC
 * [b, h, w, c] (h, w, c known while tracing) to [b, oh, ow, kh kw c], the
 * kh x kw window (sizes) every strides pixels, its taps rates apart, laid
 * out as TensorFlow's (tap (ky, kx) at channels (ky kw + kx) c ...);
 * SAME pads with zeros as the convolutions place them.  sizes, strides
 * and rates are int64_t[2] (NULL: 1s).  Any dtype; exact (one strided
 * slice per tap, joined). */
WEFT_API weft_value *weft_extract_patches(weft_ctx *cx, weft_value *images, const int64_t *sizes,
                                          const int64_t *strides, const int64_t *rates,
                                          weft_padding padding);
/* tf.extract_volume_patches(input, ksizes, strides, padding): NDHWC
 * [b, d, h, w, c] (d, h, w, c known while tracing) to [b, od, oh, ow,
 * kd kh kw c], the kd x kh x kw window (sizes) every strides voxels, laid
 * out as TensorFlow's (tap (kz, ky, kx) at channels ((kz kh + ky) kw +
 * kx) c ...); SAME pads with zeros as conv3d places them.  sizes and
 * strides are int64_t[3] (NULL: 1s).  Any dtype; exact (one strided
 * slice per tap, joined), so its gradient is that of the slices. */
WEFT_API weft_value *weft_extract_volume_patches(weft_ctx *cx, weft_value *input,
                                                 const int64_t *sizes, const int64_t *strides,
                                                 weft_padding padding);
/* tf.image.rgb_to_grayscale(images): [..., 3] to [..., 1],
 * 0.2989 r + 0.5870 g + 0.1140 b added in that order, in the images'
 * dtype (f32 or f64, else WEFT_EDTYPE); the last dim must be 3, known
 * while tracing (WEFT_ESHAPE). */
WEFT_API weft_value *weft_rgb_to_grayscale(weft_ctx *cx, weft_value *images);
/* tf.image.grayscale_to_rgb(images): [..., 1] to [..., 3], the channel
 * repeated as r, g and b; any dtype; the last dim must be 1, known while
 * tracing (WEFT_ESHAPE). */
WEFT_API weft_value *weft_grayscale_to_rgb(weft_ctx *cx, weft_value *images);
/* tf.image.per_image_standardization(images): (x - mean) /
 * max(stddev, 1 / sqrt(n)) with the mean and the (population) standard
 * deviation over each image's last three dims, n = h w c (those three
 * known while tracing).  f32 or f64. */
WEFT_API weft_value *weft_per_image_standardization(weft_ctx *cx, weft_value *images);
/* tf.image.adjust_contrast(images, contrast_factor): (x - mean) * factor +
 * mean, the mean of each channel over the image's height and width (rank
 * 3 or more).  f32 or f64; the factor finite. */
WEFT_API weft_value *weft_adjust_contrast(weft_ctx *cx, weft_value *images,
                                          double contrast_factor);
/* tf.image.image_gradients(image): outs[0] = dy and outs[1] = dx of NHWC
 * [b, h, w, c], each of its shape: x[i + 1] - x[i] along the height
 * (width), the last row (column) 0.  Any dtype but bool.  Returns 0, or
 * the context's error code with both outs NULL. */
WEFT_API int weft_image_gradients(weft_ctx *cx, weft_value *images, weft_value **outs);
/* tf.image.total_variation(images): the sum of the absolute differences
 * of neighbouring pixels along the height and the width, per image: [b,
 * h, w, c] to [b], [h, w, c] to a scalar.  Dtypes as weft_sum's. */
WEFT_API weft_value *weft_total_variation(weft_ctx *cx, weft_value *images);
/* tf.image.psnr(a, b, max_val): 20 log10(max_val) - 10 log10(mse), the
 * mean squared difference over each image's last three dims (a and b
 * broadcast; f32 or f64; max_val finite and > 0).  Identical images give
 * +inf. */
WEFT_API weft_value *weft_psnr(weft_ctx *cx, weft_value *a, weft_value *b, double max_val);
/* tf.image.ssim(img1, img2, max_val, filter_size, filter_sigma, k1, k2):
 * the structural similarity of each pair of images ([b, h, w, c] to [b],
 * [h, w, c] to a scalar; a and b of one shape, f32 or f64, h, w and c
 * known while tracing), TensorFlow's: local means, variances and
 * covariance under a filter_size x filter_size Gaussian of filter_sigma
 * (VALID, so h and w must be at least filter_size), (2 mu_a mu_b + c1)
 * (2 cov + c2) / ((mu_a^2 + mu_b^2 + c1) (var_a + var_b + c2)) with
 * c1 = (k1 max_val)^2 and c2 = (k2 max_val)^2, averaged over the pixels
 * and then the channels.  TensorFlow's defaults: 11, 1.5, 0.01, 0.03. */
WEFT_API weft_value *weft_ssim(weft_ctx *cx, weft_value *a, weft_value *b, double max_val,
                               int64_t filter_size, double filter_sigma, double k1, double k2);
/* tf.image.ssim_multiscale(img1, img2, max_val, power_factors,
 * filter_size, filter_sigma, k1, k2): TensorFlow's MS-SSIM.  At each of
 * n_scales scales (after the first, h and w padded at their ends with
 * their edge pixel when odd, TF's SYMMETRIC pad, and 2 x 2 average-pooled)
 * the per-channel SSIM terms of weft_ssim; the product over the scales of
 * relu(contrast-structure) (relu(SSIM) at the last scale) to the power
 * power_factors[k], averaged over the channels.  power_factors NULL takes
 * TensorFlow's five (0.0448, 0.2856, 0.3001, 0.2363, 0.1333; n_scales is
 * then ignored); n_scales 1..16.  Shapes and dtypes as weft_ssim; the last
 * scale's h and w must still be at least filter_size (WEFT_ESHAPE: with
 * the defaults, 161 pixels). */
WEFT_API weft_value *weft_ssim_multiscale(weft_ctx *cx, weft_value *a, weft_value *b,
                                          double max_val, const double *power_factors,
                                          size_t n_scales, int64_t filter_size,
                                          double filter_sigma, double k1, double k2);
/* tf.image.draw_bounding_boxes(images, boxes, colors): a copy of images
 * [b, h, w, c] (c 1, 3 or 4 known while tracing; f32 or f64) with each
 * image's boxes (f32 [b, n, 4], [y_min, x_min, y_max, x_max] normalized)
 * outlined one pixel wide in order, box j in colour j mod k of colors (f32
 * [k, >= c]; NULL or [0, 4] for TensorFlow's ten defaults).  TensorFlow's
 * kernel: edges at box * (dim - 1) in f32 truncated, inverted boxes and
 * boxes wholly outside skipped, edges outside the image not drawn. */
WEFT_API weft_value *weft_draw_bounding_boxes(weft_ctx *cx, weft_value *images,
                                              weft_value *boxes, weft_value *colors);
/* tf.image.sobel_edges(images): [b, h, w, c] to [b, h, w, c, 2], the
 * vertical (index 0) and horizontal (1) 3 x 3 Sobel responses of each
 * channel on the images padded by reflection (h and w at least 2; h, w
 * and c known while tracing).  f32 or f64. */
WEFT_API weft_value *weft_sobel_edges(weft_ctx *cx, weft_value *images);
/* tf.image.rot90(images, k): an image [h, w, c] or a batch [b, h, w, c]
 * turned by k quarter turns counter-clockwise (k of any sign, taken
 * modulo 4; an odd k swaps h and w).  Any dtype; exact. */
WEFT_API weft_value *weft_rot90(weft_ctx *cx, weft_value *images, int k);
/* tf.image.flip_left_right, flip_up_down and transpose (here
 * weft_transpose_image): each image [h, w, c] (or batch [b, h, w, c])
 * mirrored across its vertical axis, its horizontal axis, or its main
 * diagonal ([w, h, c]).  Any dtype; exact. */
WEFT_API weft_value *weft_flip_left_right(weft_ctx *cx, weft_value *images);
WEFT_API weft_value *weft_flip_up_down(weft_ctx *cx, weft_value *images);
WEFT_API weft_value *weft_transpose_image(weft_ctx *cx, weft_value *images);
/* tf.image.central_crop(images, central_fraction): the centre of each
 * image, cropping floor((d - d * fraction) / 2) rows (columns) from each
 * side of a height (width) d, TensorFlow's arithmetic; fraction in (0, 1]
 * (1: the images themselves).  Rank 3 or 4, h and w known while tracing;
 * any dtype. */
WEFT_API weft_value *weft_central_crop(weft_ctx *cx, weft_value *images, double central_fraction);
/* tf.image.resize_with_crop_or_pad(images, target_height, target_width):
 * each image cropped about its centre, or padded with zeros about it, to
 * target_height x target_width (both >= 1); where a difference is odd the
 * extra row (column) is cropped from, or padded at, the bottom (right),
 * as TensorFlow's.  Rank 3 or 4, h and w known while tracing; any dtype. */
WEFT_API weft_value *weft_resize_with_crop_or_pad(weft_ctx *cx, weft_value *images,
                                                  int64_t target_height, int64_t target_width);
/* tf.image.crop_to_bounding_box(images, offset_height, offset_width,
 * target_height, target_width): the box of target_height x target_width
 * pixels whose top left is at (offset_height, offset_width), which must
 * lie within each image (WEFT_EINVAL otherwise).  tf.image.
 * pad_to_bounding_box: each image placed at that offset in a box of
 * zeros of the target size, which must hold it.  Rank 3 or 4, h and w
 * known while tracing; any dtype. */
WEFT_API weft_value *weft_crop_to_bounding_box(weft_ctx *cx, weft_value *images,
                                               int64_t offset_height, int64_t offset_width,
                                               int64_t target_height, int64_t target_width);
WEFT_API weft_value *weft_pad_to_bounding_box(weft_ctx *cx, weft_value *images,
                                              int64_t offset_height, int64_t offset_width,
                                              int64_t target_height, int64_t target_width);
/* tf.image.resize_with_pad(images, target_height, target_width, method):
 * each image resized by one factor, without distortion, to fit the
 * target (floor(h / r) x floor(w / r) with r = max(h / target_height, w /
 * target_width)), then padded with zeros to the target, the offsets
 * floor((target - h / r) / 2), TensorFlow's float arithmetic.  f32 or f64
 * (weft_resize's), h and w known while tracing. */
WEFT_API weft_value *weft_resize_with_pad(weft_ctx *cx, weft_value *images, int64_t target_height,
                                          int64_t target_width, weft_resize_method method);
/* Colour conversions of images whose last dim is 3 (known while
 * tracing), f32 or f64, each in the images' dtype and elementwise (they
 * fuse).  tf.image.rgb_to_yiq / yiq_to_rgb / rgb_to_yuv / yuv_to_rgb:
 * TensorFlow's 3 x 3 matrices.  tf.image.rgb_to_hsv: v the largest
 * channel, s = (v - min) / v (0 where v <= 0), h in [0, 1) (0 for grey);
 * tf.image.hsv_to_rgb its inverse for h in [0, 1], both TensorFlow's
 * formulas. */
WEFT_API weft_value *weft_rgb_to_yiq(weft_ctx *cx, weft_value *images);
WEFT_API weft_value *weft_yiq_to_rgb(weft_ctx *cx, weft_value *images);
WEFT_API weft_value *weft_rgb_to_yuv(weft_ctx *cx, weft_value *images);
WEFT_API weft_value *weft_yuv_to_rgb(weft_ctx *cx, weft_value *images);
WEFT_API weft_value *weft_rgb_to_hsv(weft_ctx *cx, weft_value *images);
WEFT_API weft_value *weft_hsv_to_rgb(weft_ctx *cx, weft_value *images);
/* tf.image.adjust_saturation(images, saturation_factor): each pixel's
 * saturation times the factor (finite), clipped to [0, 1], through HSV.
 * tf.image.adjust_hue(images, delta): each pixel's hue plus delta (in
 * [-1, 1]), wrapped into [0, 1), through HSV.  RGB images as above. */
WEFT_API weft_value *weft_adjust_saturation(weft_ctx *cx, weft_value *images,
                                            double saturation_factor);
WEFT_API weft_value *weft_adjust_hue(weft_ctx *cx, weft_value *images, double delta);
/* tf.image.adjust_brightness(images, delta): images + delta.
 * tf.image.adjust_gamma(images, gamma, gain): gain * images^gamma (gamma
 * finite and >= 0).  Images of any shape, f32 or f64. */
WEFT_API weft_value *weft_adjust_brightness(weft_ctx *cx, weft_value *images, double delta);
WEFT_API weft_value *weft_adjust_gamma(weft_ctx *cx, weft_value *images, double gamma,
                                       double gain);

/* ---- Losses and normalization ----
 *
 * Compositions of the ops above (no kernels of their own, so they fuse
 * and take dims unknown while tracing), on f32 and f64 (WEFT_EDTYPE
 * otherwise); errors name the op.  Operands of two inputs must share
 * their dtype and broadcast as an elementwise op's. */

/* tf.nn.softmax_cross_entropy_with_logits(labels, logits, axis):
 * -sum(labels * log_softmax(logits, axis), axis), the axis removed. */
WEFT_API weft_value *weft_softmax_cross_entropy_with_logits(weft_ctx *cx, weft_value *labels,
                                                            weft_value *logits, int axis);
/* tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits): labels
 * (i32 or i64) of logits' shape without its last dim (the classes, which
 * must be known while tracing), the result of labels' shape:
 * logsumexp(logits) - logits[label].  A label outside [0, classes) gives
 * NaN (TensorFlow's GPU kernel does the same; its CPU kernel raises). */
WEFT_API weft_value *weft_sparse_softmax_cross_entropy_with_logits(weft_ctx *cx,
                                                                   weft_value *labels,
                                                                   weft_value *logits);
/* tf.nn.ctc_loss(labels, logits, label_length, logit_length,
 * logits_time_major, blank_index) with dense labels: each batch element's
 * negative log likelihood of its label under the softmax of its frames,
 * summed over every alignment (Graves et al. 2006's forward recursion, in
 * f64).  labels [batch, max_label_length] (i32 or i64; element b's first
 * label_length[b] classes, each in 0..classes-1 and not the blank), logits
 * [frames, batch, classes] when logits_time_major, else [batch, frames,
 * classes] (f32 or f64; element b's first logit_length[b] frames),
 * lengths [batch] (i32 or i64); blank_index the blank's class (negative
 * counts from the end: -1 is the last, TensorFlow's old default; its
 * current default is 0).  The result is [batch] of the logits' dtype; a
 * label its frames cannot hold (too few frames for the label and its
 * repeats) gives +inf, as TensorFlow.  A class out of range or equal to
 * the blank, or a length past its tensor's, fails the call (WEFT_EINVAL)
 * naming the batch element. */
WEFT_API weft_value *weft_ctc_loss(weft_ctx *cx, weft_value *labels, weft_value *logits,
                                   weft_value *label_length, weft_value *logit_length,
                                   bool logits_time_major, int blank_index);
/* tf.nn.ctc_greedy_decoder(inputs, sequence_length, merge_repeated,
 * blank_index) with a dense result, as tf.keras.backend.ctc_decode gives
 * it: inputs [frames, batch, classes] (f32 or f64; frames and classes
 * known while tracing), sequence_length [batch] (i32 or i64).  Each
 * valid frame's best class (the first of equal logits); with
 * merge_repeated a class equal to the previous frame's is dropped (a blank
 * between keeps both); blanks are dropped.  outs[0] is i64 [batch,
 * frames], each row's classes first, -1 after them; outs[1] [batch, 1] of
 * the inputs' dtype, the negative sum of each valid frame's largest
 * logit, as TensorFlow's neg_sum_logits.  blank_index negative counts
 * from the end (-1, the last class, is TensorFlow's default here).
 * Returns weft_ctx_status(cx); outs NULL is WEFT_EINVAL. */
WEFT_API int weft_ctc_greedy_decoder(weft_ctx *cx, weft_value *inputs, weft_value *sequence_length,
                                     bool merge_repeated, int blank_index, weft_value **outs);
/* tf.nn.ctc_beam_search_decoder(inputs, sequence_length, beam_width,
 * top_paths) with dense results: TensorFlow's prefix beam search (its
 * default scorer, no label selection; repeated labels kept apart by a
 * blank stay two, as in TensorFlow 2), the blank the last class.  inputs
 * [frames, batch, classes] (f32 or f64; frames and classes, at least 2,
 * known while tracing), sequence_length [batch] (i32 or i64, each within
 * 0..frames, else WEFT_EINVAL when the function runs).  outs[0] is i64
 * [batch, top_paths, frames], each path's labels first, -1 after them,
 * best path first; outs[1] [batch, top_paths] of the inputs' dtype, each
 * path's score: TensorFlow's log probability, the log-sum-exp over the
 * path's alignments of their logits less each frame's largest logit (a
 * true log probability when the inputs are log-softmax outputs).  Where
 * the beam holds fewer than top_paths labellings (TensorFlow fails) the
 * missing paths are all -1 with a score of -inf.  Computed in f64; paths
 * of equal scores rank by their age in the beam (TensorFlow leaves that
 * to its heap).  1 <= top_paths <= beam_width (WEFT_EINVAL).  Returns
 * weft_ctx_status(cx); outs NULL is WEFT_EINVAL. */
WEFT_API int weft_ctc_beam_search_decoder(weft_ctx *cx, weft_value *inputs,
                                          weft_value *sequence_length, int beam_width,
                                          int top_paths, weft_value **outs);
/* tf.nn.collapse_repeated(labels, seq_length): each row of labels [batch,
 * max_length] (any dtype but bool; max_length known while tracing) with
 * its first seq_length[b] labels kept (i32 or i64; past max_length counts
 * as max_length, 0 or less keeps none) and a label equal to the one
 * before it dropped.  outs[0] holds each row's kept labels first, zeros
 * after them, and as many columns as the longest row has labels (as
 * TensorFlow computes it, so unknown while tracing); outs[1] [batch] the
 * new lengths, of seq_length's dtype.  Returns weft_ctx_status(cx); outs
 * NULL is WEFT_EINVAL. */
WEFT_API int weft_collapse_repeated(weft_ctx *cx, weft_value *labels, weft_value *seq_length,
                                    weft_value **outs);
/* tf.nn.ctc_unique_labels(labels): for each row of labels [batch,
 * max_length] (i32 or i64), outs[0] (i64, labels' shape) its distinct
 * labels in order of first occurrence, zeros after them, and outs[1]
 * (i32, labels' shape) each label's index among them, as TensorFlow's
 * tf.unique of each row (the padding is a label like any other).  Returns
 * weft_ctx_status(cx); outs NULL is WEFT_EINVAL. */
WEFT_API int weft_ctc_unique_labels(weft_ctx *cx, weft_value *labels, weft_value **outs);
/* tf.edit_distance(hypothesis, truth, normalize) on dense sequences: the
 * Levenshtein distance (insertions, deletions and substitutions, 1 each)
 * between each hypothesis [..., hyp_len] and its truth [..., truth_len]
 * (both i32 or both i64, the same batch dims), as f32 of the batch dims.
 * Sequence b holds its first hypothesis_length[b] (truth_length[b])
 * elements: each lengths tensor i32 or i64 of the batch dims, or NULL for
 * whole rows (a length outside 0..its row fails the call when the
 * function runs, WEFT_EINVAL).  TensorFlow takes SparseTensors; this is
 * the dense form the decoders give (weft_ctc_greedy_decoder's -1 padding
 * excluded by its lengths).  normalize divides by the truth's length: an
 * empty truth gives +inf against a non-empty hypothesis and 0 against an
 * empty one, as TensorFlow. */
WEFT_API weft_value *weft_edit_distance(weft_ctx *cx, weft_value *hypothesis,
                                        weft_value *hypothesis_length, weft_value *truth,
                                        weft_value *truth_length, bool normalize);
/* tf.random.log_uniform_candidate_sampler(true_classes, num_true,
 * num_sampled, unique, range_max, seed): num_sampled classes of
 * 0..range_max-1 drawn with TensorFlow's log-uniform (Zipfian) law, class
 * k with probability log((k + 2) / (k + 1)) / log(range_max + 1); with
 * unique, draws are repeated until num_sampled distinct classes came (at
 * most range_max).  Draw i takes element i of weft_random_uniform's f64
 * stream under seed (as weft_random_uniform takes it): not TensorFlow's
 * numbers, but the same ones for the same seed.  true_classes [batch,
 * num_true] (i32 or i64).  outs[0] i64 [num_sampled] the classes in the
 * order drawn; outs[1] f32 [batch, num_true] and outs[2] f32
 * [num_sampled] the expected counts of the true and the sampled classes
 * (TensorFlow's: p num_sampled when no draw repeated, else 1 - (1 -
 * p)^draws).  num_true, num_sampled and range_max 1 or more (WEFT_EINVAL).
 * Returns weft_ctx_status(cx); outs NULL is WEFT_EINVAL. */
WEFT_API int weft_log_uniform_candidate_sampler(weft_ctx *cx, weft_value *true_classes,
                                                int64_t num_true, int64_t num_sampled,
                                                bool unique, int64_t range_max,
                                                weft_value *seed, weft_value **outs);
/* tf.random.uniform_candidate_sampler: the same with every class equally
 * likely (class floor(u range_max) from draw u; p = 1 / range_max). */
WEFT_API int weft_uniform_candidate_sampler(weft_ctx *cx, weft_value *true_classes,
                                            int64_t num_true, int64_t num_sampled, bool unique,
                                            int64_t range_max, weft_value *seed,
                                            weft_value **outs);
/* tf.random.fixed_unigram_candidate_sampler(true_classes, num_true,
 * num_sampled, unique, range_max, distortion=..., num_reserved_ids=...,
 * unigrams=...): the same results with class k drawn in proportion to
 * its weight: 0 for the first num_reserved_ids classes, then
 * unigrams[k - num_reserved_ids] (each rounded to f32, as TensorFlow's
 * attribute holds it) to the power distortion, so num_reserved_ids +
 * n_unigrams must be range_max.  Draw u gives the first class whose
 * cumulative weight passes u times the total (TensorFlow draws by Walker's
 * alias method: the same law, other numbers); a class's probability is
 * its weight over the total in f32, and 0 for a true class outside the
 * range (TensorFlow's).  Every weight must be finite and 0 or more, with
 * at least one positive (num_sampled for unique draws); the weights are
 * copied, so unigrams may be freed after the call.  TensorFlow's
 * vocab_file, num_shards and shard are not taken (one shard, unigrams
 * given). */
WEFT_API int weft_fixed_unigram_candidate_sampler(
    weft_ctx *cx, weft_value *true_classes, int64_t num_true, int64_t num_sampled, bool unique,
    int64_t range_max, double distortion, int64_t num_reserved_ids, const double *unigrams,
    int64_t n_unigrams, weft_value *seed, weft_value **outs);
/* tf.random.all_candidate_sampler(true_classes, num_true, num_sampled,
 * unique): every class 0 .. num_sampled - 1 once, in order, each expected
 * count 1 (f32), as TensorFlow's AllSampler (which takes a seed and
 * ignores it, as it ignores unique; weft takes no seed). */
WEFT_API int weft_all_candidate_sampler(weft_ctx *cx, weft_value *true_classes,
                                        int64_t num_true, int64_t num_sampled, bool unique,
                                        weft_value **outs);
/* tf.nn.compute_accidental_hits(true_classes, sampled_candidates,
 * num_true): where a row's true class was also sampled.  true_classes
 * [batch, num_true] and sampled_candidates [num_sampled], i32 or i64.  One
 * hit per (row, true class) whose class is among the candidates, in
 * row-major order of those pairs (a class twice in a row hits twice, as in
 * TensorFlow): outs[0] i32 [hits] the row, outs[1] i64 [hits] the
 * candidate's position (the last one when a class was sampled twice:
 * TensorFlow's map keeps the last), outs[2] f32 [hits] all -FLT_MAX, the
 * weights that push those logits down.  hits is known when the function
 * runs.  num_true 1 or more and the true classes' last dim (WEFT_EINVAL,
 * WEFT_ESHAPE).  Returns weft_ctx_status(cx); outs NULL is WEFT_EINVAL. */
WEFT_API int weft_compute_accidental_hits(weft_ctx *cx, weft_value *true_classes,
                                          weft_value *sampled_candidates, int64_t num_true,
                                          weft_value **outs);
/* tf.nn.nce_loss(weights, biases, labels, inputs, num_sampled,
 * num_classes, num_true, remove_accidental_hits) and
 * tf.nn.sampled_softmax_loss(...): TensorFlow's sampled logits with its
 * default sampler (weft_log_uniform_candidate_sampler, unique, over
 * num_classes, under seed; TensorFlow's sampled_values argument is not
 * taken): the logits of each row's num_true labels and of the sampled
 * classes (inputs times each class's weights row, plus its bias), each
 * less the log of its expected count; with remove_accidental_hits a
 * sampled class equal to one of the row's labels has FLT_MAX taken off
 * (TensorFlow's defaults: false for nce_loss, true for
 * sampled_softmax_loss).  nce_loss sums the sigmoid cross entropy of the
 * logits against 1 / num_true for the labels and 0 for the samples;
 * sampled_softmax_loss takes their softmax cross entropy.  weights
 * [num_classes, dim], biases [num_classes] or NULL, inputs [batch, dim],
 * all f32 or all f64; labels [batch, num_true] (i32 or i64).  The result
 * is [batch]; its gradients reach the weights, the biases and the inputs
 * (the samples are constants, as in TensorFlow). */
WEFT_API weft_value *weft_nce_loss(weft_ctx *cx, weft_value *weights, weft_value *biases,
                                   weft_value *labels, weft_value *inputs, int64_t num_sampled,
                                   int64_t num_classes, int64_t num_true,
                                   bool remove_accidental_hits, weft_value *seed);
WEFT_API weft_value *weft_sampled_softmax_loss(weft_ctx *cx, weft_value *weights,
                                               weft_value *biases, weft_value *labels,
                                               weft_value *inputs, int64_t num_sampled,
                                               int64_t num_classes, int64_t num_true,
                                               bool remove_accidental_hits, weft_value *seed);
/* tf.nn.sigmoid_cross_entropy_with_logits(labels, logits), elementwise in
 * TensorFlow's stable form max(x, 0) - x z + log1p(exp(-|x|)) for logits x
 * and labels z. */
WEFT_API weft_value *weft_sigmoid_cross_entropy_with_logits(weft_ctx *cx, weft_value *labels,
                                                            weft_value *logits);
/* tf.nn.weighted_cross_entropy_with_logits(labels, logits, pos_weight):
 * sigmoid cross entropy with the positive term weighted, in TensorFlow's
 * stable form (1 - z) x + (1 + (pos_weight - 1) z) (log1p(exp(-|x|)) +
 * max(-x, 0)). */
WEFT_API weft_value *weft_weighted_cross_entropy_with_logits(weft_ctx *cx, weft_value *labels,
                                                             weft_value *logits,
                                                             double pos_weight);
/* tf.nn.log_poisson_loss(targets, log_input, compute_full_loss): exp(c) -
 * c z, and with full_loss the Stirling term z log z - z + 0.5 log(2 pi z)
 * added where z > 1 (TensorFlow's rule). */
WEFT_API weft_value *weft_log_poisson_loss(weft_ctx *cx, weft_value *targets,
                                           weft_value *log_input, bool full_loss);
/* Keras's per-sample losses (the functions of tf.keras.losses): each
 * takes y_true (any dtype, cast to y_pred's) and y_pred (f32 or f64 of a
 * known rank >= 1), broadcast together, and reduces the last axis to one
 * loss per sample ([...]), with Keras's formulas and epsilon 1e-7:
 *   mean_squared_error          mean((p - t)^2)
 *   mean_absolute_error         mean(|p - t|)
 *   mean_absolute_percentage_error  100 mean(|(t - p) / max(|t|, eps)|)
 *   mean_squared_logarithmic_error  mean((log(max(p, eps) + 1)
 *                                     - log(max(t, eps) + 1))^2)
 *   huber_loss (delta >= 0)     mean(|e| <= delta ? e^2 / 2
 *                                    : delta |e| - delta^2 / 2), e = p - t
 *   log_cosh_loss               mean(log cosh(p - t)) (no overflow)
 *   hinge_loss, squared_hinge_loss  mean(max(1 - t p, 0)) (squared); t
 *                               of only 0s and 1s is taken as -1 and 1
 *   categorical_hinge_loss      max(max((1 - t) p) - sum(t p) + 1, 0)
 *   kl_divergence               sum(t log(t / p)), t and p clipped to
 *                               [eps, 1]
 *   poisson_loss                mean(p - t log(p + eps))
 *   cosine_similarity_loss      -sum(l2_normalize(t) l2_normalize(p)), in
 *                               [-1, 1] (-1 for the same direction)
 * The crossentropies take probabilities, or logits when from_logits:
 * binary_crossentropy's mean of -(t log(p + eps) + (1 - t) log(1 - p +
 * eps)) on p clipped to [eps, 1 - eps], categorical's -sum(t log p) on p
 * over its sum, clipped, and sparse_categorical's, whose y_true holds i32
 * or i64 class indices ([...], y_pred [..., classes]), the logits' path on
 * log(p clipped).  label_smoothing in [0, 1] moves t towards 1/2 (binary)
 * or 1/classes. */
WEFT_API weft_value *weft_mean_squared_error(weft_ctx *cx, weft_value *y_true,
                                             weft_value *y_pred);
WEFT_API weft_value *weft_mean_absolute_error(weft_ctx *cx, weft_value *y_true,
                                              weft_value *y_pred);
WEFT_API weft_value *weft_mean_absolute_percentage_error(weft_ctx *cx, weft_value *y_true,
                                                         weft_value *y_pred);
WEFT_API weft_value *weft_mean_squared_logarithmic_error(weft_ctx *cx, weft_value *y_true,
                                                         weft_value *y_pred);
WEFT_API weft_value *weft_huber_loss(weft_ctx *cx, weft_value *y_true, weft_value *y_pred,
                                     double delta);
WEFT_API weft_value *weft_log_cosh_loss(weft_ctx *cx, weft_value *y_true, weft_value *y_pred);
WEFT_API weft_value *weft_hinge_loss(weft_ctx *cx, weft_value *y_true, weft_value *y_pred);
WEFT_API weft_value *weft_squared_hinge_loss(weft_ctx *cx, weft_value *y_true,
                                             weft_value *y_pred);
WEFT_API weft_value *weft_categorical_hinge_loss(weft_ctx *cx, weft_value *y_true,
                                                 weft_value *y_pred);
WEFT_API weft_value *weft_kl_divergence(weft_ctx *cx, weft_value *y_true, weft_value *y_pred);
WEFT_API weft_value *weft_poisson_loss(weft_ctx *cx, weft_value *y_true, weft_value *y_pred);
WEFT_API weft_value *weft_cosine_similarity_loss(weft_ctx *cx, weft_value *y_true,
                                                 weft_value *y_pred);
WEFT_API weft_value *weft_binary_crossentropy(weft_ctx *cx, weft_value *y_true,
                                              weft_value *y_pred, bool from_logits,
                                              double label_smoothing);
WEFT_API weft_value *weft_categorical_crossentropy(weft_ctx *cx, weft_value *y_true,
                                                   weft_value *y_pred, bool from_logits,
                                                   double label_smoothing);
WEFT_API weft_value *weft_sparse_categorical_crossentropy(weft_ctx *cx, weft_value *y_true,
                                                          weft_value *y_pred, bool from_logits);
/* tf.keras.losses.binary_focal_crossentropy(y_true, y_pred,
 * apply_class_balancing, alpha, gamma, from_logits, label_smoothing) and
 * categorical_focal_crossentropy(y_true, y_pred, alpha, gamma,
 * from_logits, label_smoothing), per sample as the losses above, with
 * tf.keras's (Keras 2's) formulas.  Binary: each element's crossentropy
 * (binary_crossentropy's, logits through
 * weft_sigmoid_cross_entropy_with_logits) times (1 - p_t)^gamma, p_t = t p
 * + (1 - t) (1 - p) with p the probability (the sigmoid of a logit), and
 * with apply_class_balancing times t alpha + (1 - t) (1 - alpha); the mean
 * over the last axis.  Categorical: p (the softmax of logits) over its
 * sum, clipped to [eps, 1 - eps], then the sum over the last axis of
 * alpha (1 - p)^gamma (-t log p), classes known while tracing.  Keras's
 * defaults: alpha 0.25, gamma 2.  alpha finite, gamma finite and >= 0, else
 * WEFT_EINVAL.  gamma 0 gives the plain crossentropy (times alpha for the
 * categorical one). */
WEFT_API weft_value *weft_binary_focal_crossentropy(weft_ctx *cx, weft_value *y_true,
                                                    weft_value *y_pred,
                                                    bool apply_class_balancing, double alpha,
                                                    double gamma, bool from_logits,
                                                    double label_smoothing);
WEFT_API weft_value *weft_categorical_focal_crossentropy(weft_ctx *cx, weft_value *y_true,
                                                         weft_value *y_pred, double alpha,
                                                         double gamma, bool from_logits,
                                                         double label_smoothing);
/* tf.nn.l2_loss(t): sum(t^2) / 2 over every element, a scalar of t's
 * dtype (f32 or f64). */
WEFT_API weft_value *weft_l2_loss(weft_ctx *cx, weft_value *t);
/* tf.nn.embedding_lookup(params, ids, max_norm): weft_gather(params, ids,
 * 0), and with max_norm > 0 each looked-up embedding (the dims after the
 * ids') scaled down to that l2 norm when it is longer, as
 * weft_clip_by_norm (params f32 or f64, the ids' rank known while
 * tracing).  max_norm 0: no clipping (TensorFlow's None); negative, NaN
 * or infinite: WEFT_EINVAL.  One params tensor (TF's list of shards is
 * not taken). */
WEFT_API weft_value *weft_embedding_lookup(weft_ctx *cx, weft_value *params, weft_value *ids,
                                           double max_norm);
/* tf.nn.compute_average_loss(per_example_loss, sample_weight,
 * global_batch_size): sum(loss * sample_weight) / global_batch_size, a
 * scalar of the losses' dtype (f32 or f64, rank 1 or more).
 * sample_weight (NULL for none; any number dtype) broadcasts to the
 * losses' shape, one rank below them gaining a last dim of 1 as
 * TensorFlow's (WEFT_ESHAPE if the product grows past the losses).
 * global_batch_size 0: the losses' dim 0 when the function runs (one
 * replica; no rows give NaN, 0 / 0, as in TensorFlow). */
WEFT_API weft_value *weft_compute_average_loss(weft_ctx *cx, weft_value *per_example_loss,
                                               weft_value *sample_weight,
                                               int64_t global_batch_size);
/* tf.math.l2_normalize(x, axis, epsilon): x * rsqrt(max(sum(x^2), epsilon))
 * with the sum over axes[0..n_axes) (n_axes 0: every axis), kept as 1s.
 * epsilon >= 0 (TensorFlow's default is 1e-12). */
WEFT_API weft_value *weft_l2_normalize(weft_ctx *cx, weft_value *x, const int *axes,
                                       size_t n_axes, double epsilon);
/* tf.nn.moments(x, axes, keepdims): outs[0] the mean and outs[1] the
 * variance (about the mean, divided by the count) over axes[0..n_axes)
 * (n_axes 0: every axis), as weft_reduce's WEFT_R_MEAN and WEFT_R_VAR.
 * Returns 0, or the context's error code with both outs NULL. */
WEFT_API int weft_moments(weft_ctx *cx, weft_value *x, const int *axes, size_t n_axes,
                          bool keepdims, weft_value **outs);
/* tf.nn.weighted_moments(x, axes, frequency_weights, keepdims): the mean
 * and variance of x over axes[0..n_axes) (n_axes 0: every axis) with each
 * element counted frequency_weights times (weights broadcast against x;
 * f32 or f64 alike): sum(w x) / sum(w), then sum(w (x - mean)^2) / sum(w),
 * each division 0 where sum(w) is 0 (TensorFlow's div_no_nan).  Returns 0,
 * or the context's error code with both outs NULL. */
WEFT_API int weft_weighted_moments(weft_ctx *cx, weft_value *x, const int *axes, size_t n_axes,
                                   weft_value *frequency_weights, bool keepdims,
                                   weft_value **outs);
/* tf.nn.sufficient_statistics(x, axes, shift, keepdims): outs[0] the
 * number of elements over axes[0..n_axes) (every axis for n 0) as a scalar
 * of x's dtype, outs[1] the sum of x - shift and outs[2] the sum of its
 * square over them (of x and x^2 with shift NULL, TensorFlow's None).
 * tf.nn.normalize_moments(counts, mean_ss, variance_ss, shift): outs[0]
 * the mean mean_ss / counts (+ shift) and outs[1] the variance
 * variance_ss / counts - (mean_ss / counts)^2.  TensorFlow's steps; f32 or
 * f64, all one dtype (weak scalars take it); x's rank known while tracing.
 * Return 0 or the context's error code with outs NULL. */
WEFT_API int weft_sufficient_statistics(weft_ctx *cx, weft_value *x, const int *axes,
                                        size_t n_axes, weft_value *shift, bool keepdims,
                                        weft_value **outs);
WEFT_API int weft_normalize_moments(weft_ctx *cx, weft_value *counts, weft_value *mean_ss,
                                    weft_value *variance_ss, weft_value *shift,
                                    weft_value **outs);
/* tf.nn.local_response_normalization(x, depth_radius, bias, alpha,
 * beta): x / (bias + alpha sqr_sum)^beta, sqr_sum the sum of x^2 over
 * the channels within depth_radius (>= 0) of each one, on NHWC f32 or
 * f64 data whose channels are known while tracing; bias, alpha and beta
 * finite.  TensorFlow's defaults: 5, 1, 1, 0.5. */
WEFT_API weft_value *weft_local_response_normalization(weft_ctx *cx, weft_value *x,
                                                       int64_t depth_radius, double bias,
                                                       double alpha, double beta);
/* tf.nn.batch_normalization(x, mean, variance, offset, scale, epsilon), in
 * TensorFlow's order: inv = rsqrt(variance + epsilon) (times scale), then
 * x * inv + (offset - mean * inv); offset and scale may be NULL (0 and 1).
 * epsilon >= 0. */
WEFT_API weft_value *weft_batch_normalization(weft_ctx *cx, weft_value *x, weft_value *mean,
                                              weft_value *variance, weft_value *offset,
                                              weft_value *scale, double epsilon);
/* tf.nn.bias_add(value, bias): bias (1-D, of value's last dim) added
 * along value's last dim; any number dtype, the same for both. */
WEFT_API weft_value *weft_bias_add(weft_ctx *cx, weft_value *value, weft_value *bias);

/* ---- Linear algebra ----
 *
 * Ops of their own over the last two dims of f32 or f64 tensors (any
 * batch dims before them; WEFT_EDTYPE for other dtypes, WEFT_ESHAPE for a
 * matrix that is not square), eager and traced alike.  Each matrix is
 * computed in f64 (an f32 input rounds once at the end) by LU with
 * partial pivoting or Cholesky: matrices above 16 rows through the LAPACK
 * that OpenBLAS bundles, smaller ones (and all in a build without a BLAS)
 * through weft's own loops; a batch is spread over the intra-op threads,
 * one matrix per thread at a time, so results never depend on the worker
 * count.  A singular matrix (solve, inverse: a pivot of exactly 0, as
 * LAPACK and TensorFlow judge it; a nearly singular one gives large
 * values) or one that is not positive definite (cholesky) fails the call
 * with WEFT_EINVAL naming the matrix's index in the batch, when it runs
 * (TensorFlow raises too). */

/* tf.linalg.banded_triangular_solve(bands, rhs, lower, adjoint): x of a x
 * = rhs (a^T x = rhs with adjoint) for the triangular a of K bands given
 * as bands [..., K, M] in TensorFlow's compact format (LEFT_RIGHT): with
 * lower, row k holds the k-th subdiagonal, a[i][i - k] = bands[k][i] (its
 * first k entries not read), the diagonal first; otherwise row K - 1 - d
 * holds the d-th superdiagonal, a[i][i + d] = bands[K - 1 - d][i] (its
 * last d entries not read), the diagonal last.  rhs [..., M, N] of the
 * bands' dtype (f32 or f64) and batch dims; the result is rhs's shape.
 * Substitution in O(M K N) per system, in f64; a 0 on the diagonal gives
 * inf or NaN (no error).  Differentiable for both inputs (the bands'
 * gradient is a's, read back into the band layout). */
WEFT_API weft_value *weft_banded_triangular_solve(weft_ctx *cx, weft_value *bands,
                                                  weft_value *rhs, bool lower, bool adjoint);
/* tf.linalg.cholesky: the lower triangular L with L L^T = a; only a's
 * lower triangle is read; L's upper triangle is 0. */
WEFT_API weft_value *weft_cholesky(weft_ctx *cx, weft_value *a);
/* tf.linalg.solve(matrix, rhs, adjoint): x of matrix x = rhs (with
 * adjoint, transpose(matrix) x = rhs) for matrix [..., n, n] and rhs
 * [..., n, k] of the same dtype and batch dims; the result is rhs's
 * shape. */
WEFT_API weft_value *weft_matrix_solve(weft_ctx *cx, weft_value *matrix, weft_value *rhs,
                                       bool adjoint);
/* tf.linalg.triangular_solve(matrix, rhs, lower, adjoint): as
 * weft_matrix_solve, reading only matrix's lower (lower true, TF's
 * default) or upper triangle; a 0 on the diagonal gives inf or NaN, as in
 * TensorFlow (no error). */
WEFT_API weft_value *weft_triangular_solve(weft_ctx *cx, weft_value *matrix, weft_value *rhs,
                                           bool lower, bool adjoint);
/* tf.linalg.cholesky_solve(chol, rhs): x of a x = rhs given chol, a's
 * Cholesky factor (weft_cholesky's result): two triangular solves. */
WEFT_API weft_value *weft_cholesky_solve(weft_ctx *cx, weft_value *chol, weft_value *rhs);
/* tf.linalg.inv: the inverse of each matrix. */
WEFT_API weft_value *weft_matrix_inverse(weft_ctx *cx, weft_value *a);
/* np.linalg.matrix_power(a, n): a [..., n, n] times itself n times, by
 * NumPy's products (a a, (a a) a, then squarings a^(2^k) multiplied into
 * the result from the lowest bit of n), so its roundings are NumPy's where
 * the BLAS is the same.  n = 0 gives the identity of a's dtype and shape;
 * n < 0 the power of weft_matrix_inverse(a) (integers and bool inverted
 * in f64, as NumPy); n = 1 gives a itself (the same handle, as NumPy
 * returns the same array).  Integers wrap, bool is logical (matmul's
 * rules).  a must be square where its last two dims are known while
 * tracing (WEFT_ESHAPE); unknown ones fail in the products when the call
 * runs (for n of 2 or more, -2 or less). */
WEFT_API weft_value *weft_matrix_power(weft_ctx *cx, weft_value *a, int64_t n);
/* np.linalg.multi_dot(arrays): the product of n (2 to 256) matrices in
 * the order of fewest multiplications, chosen as NumPy chooses it (three
 * by _multi_dot_three, which takes A(BC) on a tie; more by its dynamic
 * program, the first best split kept), each product a weft_matmul.  The
 * first array may be a vector (a row) and the last one (a column); the
 * result then drops that dim, a scalar for both.  The others are matrices
 * (WEFT_ESHAPE otherwise; ranks known while tracing, so N-D arrays, which
 * NumPy takes for two arrays through np.dot, are refused).  For more than
 * two arrays every dim must be known while tracing, since the order
 * depends on them (WEFT_ESHAPE naming the reason).  Types as matmul's. */
WEFT_API weft_value *weft_multi_dot(weft_ctx *cx, weft_value *const *arrays, size_t n);
/* np.linalg.tensorinv(a, ind): the inverse of a seen as a matrix (its
 * dims before ind the rows, those from ind on the columns), shaped as a's
 * dims from ind on followed by those before, as NumPy's.  1 <= ind <=
 * rank (WEFT_EINVAL); both products equal and every dim known while
 * tracing (WEFT_ESHAPE).  Integers and bool in f64. */
WEFT_API weft_value *weft_tensorinv(weft_ctx *cx, weft_value *a, int ind);
/* np.linalg.tensorsolve(a, b, axes): x with tensordot(a, x, x.ndim) = b.
 * axes (n_axes of them, NULL and 0 for None; negative ones count from
 * the end, which NumPy refuses) are moved to the end of a, in their
 * order; then the product of a's first b.ndim dims, that of the rest and
 * b's size must be equal (WEFT_ESHAPE), and x, of a's dims after its first
 * b.ndim, comes from weft_matrix_solve of a and b reshaped.  a's rank
 * must be above b's (NumPy's a.shape[-0:] for equal ranks is refused),
 * and every dim known while tracing (WEFT_ESHAPE).  f32 when both are f32,
 * else f64 (integers too). */
WEFT_API weft_value *weft_tensorsolve(weft_ctx *cx, weft_value *a, weft_value *b,
                                      const int *axes, size_t n_axes);
/* tf.linalg.tridiagonal_solve(diagonals, rhs) in the compact format:
 * diagonals [..., 3, m] holds each matrix's superdiagonal (its last
 * element not read), diagonal and subdiagonal (its first element not
 * read); rhs is [..., m, k] or [..., m], of the diagonals' dtype (f32 or
 * f64) and batch.  Gaussian elimination with partial pivoting
 * (TensorFlow's default; LAPACK's gtsv), in f64.  A singular system fails
 * the call with WEFT_EINVAL naming it. */
WEFT_API weft_value *weft_tridiagonal_solve(weft_ctx *cx, weft_value *diagonals,
                                            weft_value *rhs);
/* tf.linalg.tridiagonal_matmul(diagonals, rhs) in the compact format: each
 * [m, m] tridiagonal matrix of diagonals [..., 3, m] (superdiagonal, its
 * last element not read; diagonal; subdiagonal, its first element not
 * read) times rhs [..., m, n]; f32 or f64, both alike, batch dims
 * broadcast.  Three row-shifted elementwise products added, superdiagonal
 * term first. */
WEFT_API weft_value *weft_tridiagonal_matmul(weft_ctx *cx, weft_value *diagonals,
                                             weft_value *rhs);
/* tf.linalg.matvec(a, b, transpose_a): each matrix of a [..., m, n] (or
 * its transpose) times the vector of b [..., n], giving [..., m]; one
 * weft_matmul_ex with b as a column. */
WEFT_API weft_value *weft_matvec(weft_ctx *cx, weft_value *a, weft_value *b, bool transpose_a);
/* tf.linalg.expm: the exponential of each matrix, by scaling and
 * squaring with Pade approximants of degree 3 to 13 (Higham 2005, the
 * method TensorFlow cites), in f64 for f32 inputs too.  A matrix with a
 * NaN or infinite entry makes that matrix NaN; an exponential beyond the
 * dtype's range overflows to inf (or NaN where inf meets 0), as
 * TensorFlow's: no error. */
WEFT_API weft_value *weft_matrix_exponential(weft_ctx *cx, weft_value *a);
/* tf.linalg.sqrtm: the principal square root of each matrix [..., n, n]
 * (f32 or f64, computed in f64): the X with X X = a whose eigenvalues have
 * positive real parts, by the Denman-Beavers iteration in product form
 * with determinant scaling.  It exists and is real for the matrices
 * TensorFlow's sqrtm takes: invertible, with no real negative eigenvalue
 * (complex pairs are fine).  A matrix outside that domain (a zero pivot,
 * an iteration that does not converge) or with a NaN or infinite entry
 * comes out NaN: no error, as TensorFlow's. */
WEFT_API weft_value *weft_matrix_sqrt(weft_ctx *cx, weft_value *a);
/* tf.linalg.logm: the principal logarithm of each matrix [..., n, n] (f32
 * or f64, computed in f64): the X with expm(X) = a whose eigenvalues have
 * imaginary parts in (-pi, pi), by inverse scaling and squaring (square
 * roots as weft_matrix_sqrt's until the matrix is within 0.3 of I, then
 * an 8-point Gauss-Legendre Pade approximant).  TensorFlow's logm takes
 * complex matrices only; weft's are real, so its domain is sqrtm's:
 * invertible, with no real negative eigenvalue.  A matrix outside it, or
 * with a NaN or infinite entry, comes out NaN: no error.  Differentiable
 * (the adjoint is the upper right block of logm([[a^T, g], [0, a^T]])). */
WEFT_API weft_value *weft_matrix_logarithm(weft_ctx *cx, weft_value *a);
/* tf.linalg.det: the determinant of each matrix, [...] (0 for a singular
 * one, no error), from the LU factors. */
WEFT_API weft_value *weft_matrix_determinant(weft_ctx *cx, weft_value *a);
/* tf.linalg.slogdet: outs[0] the sign of each matrix's determinant (1,
 * -1, or 0 for a singular one) and outs[1] log |det| (-inf for a
 * singular one), both [...], from the LU factors: finite where the
 * determinant itself overflows.  a's rank must be known while tracing.
 * Returns 0, or the context's error code with both outs NULL. */
WEFT_API int weft_slogdet(weft_ctx *cx, weft_value *a, weft_value **outs);
/* tf.linalg.logdet: log det of each symmetric positive definite matrix,
 * 2 sum(log(diag(cholesky(a)))); a matrix that is not positive definite
 * fails as weft_cholesky. */
WEFT_API weft_value *weft_logdet(weft_ctx *cx, weft_value *a);

/* ---- Decompositions ----
 *
 * Each matrix [..., m, n] (f32 or f64, computed in f64 and rounded once)
 * is decomposed by one node whose factors come out together (print_ops
 * shows it with its packed result, the ops' outputs are slices of it),
 * so a function decomposes each matrix once whichever factors it uses.
 * Small matrices take weft's loops (Householder reflections for qr up to
 * 16 in the smaller dim, Jacobi rotations for eigh up to 6 rows and for
 * svd up to 8), larger ones OpenBLAS's LAPACK (dgeqrf and dorgqr,
 * dsyevd, dgesdd; every size takes the loops in a build without a
 * BLAS); a batch spreads over the workers, a
 * matrix never split, so results do not depend on the worker count.  The
 * signs of eigen- and singular vectors are the algorithm's (TensorFlow
 * promises none either): check a = q r, a v = v diag(e), a = u diag(s)
 * v^T rather than the vectors themselves.  The matrix dims (qr, svd) or
 * the rank (eigh) must be known while tracing.  The int functions return
 * 0, or the context's error code with their outs NULL; LAPACK's failure
 * to converge is WEFT_EINVAL naming the matrix. */

/* tf.linalg.qr(a, full_matrices): outs[0] q with orthonormal columns and
 * outs[1] r upper triangular, a = q r: q [..., m, k] and r [..., k, n]
 * with k = min(m, n), or with full_matrices q [..., m, m] and r
 * [..., m, n].  r's diagonal may be negative (as LAPACK's). */
WEFT_API int weft_qr(weft_ctx *cx, weft_value *a, bool full_matrices, weft_value **outs);
/* tf.linalg.lu(a): outs[0] the factors [..., n, n] of p a = l u (l's
 * unit diagonal implied below u, LAPACK's packing) and outs[1] the row
 * permutation p, i32 [..., n] (row i of l u is row p[i] of a); partial
 * pivoting, as weft_matrix_solve's; a singular matrix factors too (a 0
 * on u's diagonal).  a's rank must be known while tracing. */
WEFT_API int weft_lu(weft_ctx *cx, weft_value *a, weft_value **outs);
/* tf.linalg.lu_solve(lower_upper, perm, rhs): x of a x = rhs from
 * weft_lu's outputs (perm i32 or i64 [..., n]) and rhs [..., n, k]: two
 * triangular solves of rhs's rows in perm's order.  The matrix dims must
 * be known while tracing. */
WEFT_API weft_value *weft_lu_solve(weft_ctx *cx, weft_value *lower_upper, weft_value *perm,
                                   weft_value *rhs);
/* tf.linalg.lu_matrix_inverse(lower_upper, perm): the inverse of a from
 * weft_lu's outputs (lu_solve of the identity); tf.linalg.lu_reconstruct:
 * a itself, l u with its rows put back from perm's order.  perm i32 or i64
 * [..., n]; the matrix dims known while tracing. */
WEFT_API weft_value *weft_lu_matrix_inverse(weft_ctx *cx, weft_value *lower_upper,
                                            weft_value *perm);
WEFT_API weft_value *weft_lu_reconstruct(weft_ctx *cx, weft_value *lower_upper, weft_value *perm);
/* tf.linalg.eig(a): the eigenvalues and right eigenvectors of each
 * square matrix (not symmetric), as complex numbers in weft's pairs
 * (weft_complex): outs[0] the eigenvalues [..., n, 2] by ascending
 * modulus, as TensorFlow orders them (equal moduli, such as a conjugate
 * pair's, by real and then imaginary part), and outs[1] the eigenvectors
 * as the columns of [..., n, n, 2], each of unit norm with its largest
 * component real (LAPACK's dgeev; an eigenvector is only defined up to a
 * complex factor, and TensorFlow's may differ from weft's by one).  A
 * matrix with a NaN or infinity gives NaN everywhere; one whose QR
 * iteration does not converge fails the call (WEFT_EINVAL naming it).
 * f32 is computed in f64.  Needs a weft built with OpenBLAS (its
 * LAPACK): WEFT_EINVAL otherwise.  weft_eigvals (tf.linalg.eigvals) is
 * the eigenvalues alone. */
WEFT_API int weft_eig(weft_ctx *cx, weft_value *a, weft_value **outs);
WEFT_API weft_value *weft_eigvals(weft_ctx *cx, weft_value *a);
/* tf.linalg.eigh(a): outs[0] the eigenvalues [..., n], ascending, and
 * outs[1] the eigenvectors as the columns of [..., n, n], of each
 * symmetric matrix, only its lower triangle read (as TensorFlow's). */
WEFT_API int weft_eigh(weft_ctx *cx, weft_value *a, weft_value **outs);
/* tf.linalg.eigvalsh(a): weft_eigh's eigenvalues alone (no vectors are
 * computed). */
WEFT_API weft_value *weft_eigvalsh(weft_ctx *cx, weft_value *a);
/* tf.linalg.svd(a, full_matrices, compute_uv): outs[0] the singular
 * values s [..., p], p = min(m, n), descending; with compute_uv also
 * outs[1] u [..., m, p] and outs[2] v [..., n, p] with orthonormal
 * columns, a = u diag(s) v^T (v, not its transpose, as TensorFlow), or
 * with full_matrices u [..., m, m] and v [..., n, n].  Without
 * compute_uv only outs[0] is written (outs may hold one entry) and
 * full_matrices is ignored. */
WEFT_API int weft_svd(weft_ctx *cx, weft_value *a, bool full_matrices, bool compute_uv,
                      weft_value **outs);
/* tf.linalg.pinv(a, rcond): the Moore-Penrose pseudo-inverse [..., n, m],
 * v diag(1 / s) u^T from weft_svd, singular values at or below rcond
 * times the largest taken as 0; rcond < 0 is TensorFlow's default, 10
 * max(m, n) eps of a's dtype. */
WEFT_API weft_value *weft_pinv(weft_ctx *cx, weft_value *a, double rcond);
/* tf.linalg.matrix_rank(a, tol): the number of singular values of each
 * matrix above tol, i32 [...]; tol < 0 is TensorFlow's default, the
 * largest singular value times max(m, n) eps of a's dtype (m and n known
 * while tracing). */
WEFT_API weft_value *weft_matrix_rank(weft_ctx *cx, weft_value *a, double tol);
/* tf.linalg.lstsq(matrix, rhs, l2_regularizer, fast): x [..., n, k]
 * minimizing |matrix x - rhs| (+ l2_regularizer |x|^2) for matrix
 * [..., m, n] and rhs [..., m, k] of one dtype and rank.  fast solves the
 * normal equations by Cholesky, (a^T a + l2 I)^-1 a^T b when m >= n and
 * a^T (a a^T + l2 I)^-1 b otherwise (a rank-deficient matrix with l2 0
 * fails as weft_cholesky); the columns must be known while tracing, and
 * rows unknown then take the first form.  Without fast, the minimum-norm
 * solution pinv(a) b, right for rank-deficient matrices too: both dims
 * known while tracing, and l2_regularizer must be 0 (WEFT_EINVAL
 * otherwise). */
WEFT_API weft_value *weft_lstsq(weft_ctx *cx, weft_value *matrix, weft_value *rhs,
                                double l2_regularizer, bool fast);
/* tf.linalg.experimental.conjugate_gradient(operator, rhs,
 * preconditioner, x, tol, max_iter) for dense operators: solves matrix x =
 * rhs for a symmetric positive definite matrix [..., n, n] and rhs [...,
 * n] (rhs carries every batch dim; the matrix's broadcast as
 * weft_matvec's), preconditioner NULL or a matrix like it, x NULL (zeros)
 * or the first guess of rhs's shape (WEFT_ESHAPE otherwise); all f32 or
 * f64 alike.  TensorFlow's steps and result: outs[0] the iterations run
 * (i32 scalar), outs[1] x, outs[2] the residual r, outs[3] the search
 * direction p and outs[4] gamma = r^T (preconditioned r), [...]; the loop
 * runs while fewer than max_iter iterations ran and any residual's norm is
 * above tol times its rhs's norm (the whole batch goes on together, so a
 * system solved exactly while others go on reads 0 / 0: NaN, as
 * TensorFlow's).  tol finite and >= 0, max_iter in [0, 1000]
 * (WEFT_EINVAL): the loop is unrolled max_iter times, iterations past the
 * stop selected away, so a traced call pays every iteration's matvec (an
 * eager one stops where TensorFlow's loop does); gradients come from the
 * parts.  Returns 0, or the context's error code with outs NULL. */
WEFT_API int weft_conjugate_gradient(weft_ctx *cx, weft_value *matrix, weft_value *rhs,
                                     weft_value *preconditioner, weft_value *x, double tol,
                                     int max_iter, weft_value **outs);

/* ---- Matrix helpers, norms and small math ops ----
 *
 * Compositions of the ops above (they fuse and trace like any op); errors
 * name the op. */

/* tf.linalg.band_part(a, num_lower, num_upper): the elements of each
 * matrix (the last two dims, known while tracing) within num_lower
 * diagonals below the main one and num_upper above it, zeros elsewhere; a
 * negative bound keeps that whole triangle (band_part(a, -1, 0) is the
 * lower triangle: a causal mask).  Any dtype. */
WEFT_API weft_value *weft_band_part(weft_ctx *cx, weft_value *a, int64_t num_lower,
                                    int64_t num_upper);
/* tf.linalg.diag(v): [..., k] to [..., k, k] with v on the diagonal, zeros
 * elsewhere (k known while tracing).  Any dtype. */
WEFT_API weft_value *weft_matrix_diag(weft_ctx *cx, weft_value *v);
/* tf.linalg.diag_part(a): [..., m, n] to [..., min(m, n)], the main
 * diagonal, exactly (a strided slice); m and n known while tracing, at
 * most one batch dim unknown.  Any dtype. */
WEFT_API weft_value *weft_matrix_diag_part(weft_ctx *cx, weft_value *a);
/* tf.linalg.matrix_transpose(a) (tf.linalg.adjoint of a real matrix): the
 * last two dims swapped, [..., m, n] to [..., n, m]; rank 2 or more, known
 * while tracing (WEFT_ESHAPE).  Any dtype; a weft_transpose. */
WEFT_API weft_value *weft_matrix_transpose(weft_ctx *cx, weft_value *a);
/* tf.linalg.tensor_diag(diagonal): rank k (1..4) to 2k, diagonal's dims
 * twice, zero but where the two halves of an index agree;
 * tf.linalg.tensor_diag_part(a): the inverse, a of rank 2k whose first k
 * dims equal its last k (WEFT_ESHAPE).  Any dtype; dims known while
 * tracing. */
WEFT_API weft_value *weft_tensor_diag(weft_ctx *cx, weft_value *diagonal);
WEFT_API weft_value *weft_tensor_diag_part(weft_ctx *cx, weft_value *a);
/* tf.linalg.set_diag(a, diagonal): a [..., m, n] with its main diagonal
 * replaced by diagonal [..., min(m, n)] of a's dtype (m and n known while
 * tracing). */
WEFT_API weft_value *weft_matrix_set_diag(weft_ctx *cx, weft_value *a, weft_value *diagonal);
/* tf.linalg.trace(a): the sum of the main diagonal, [..., m, n] to [...];
 * dtypes as weft_sum. */
WEFT_API weft_value *weft_trace(weft_ctx *cx, weft_value *a);
/* tf.linalg.cross(a, b): the cross product over the last dim, which
 * must be 3 (known while tracing) in both; the rest broadcast. */
WEFT_API weft_value *weft_cross(weft_ctx *cx, weft_value *a, weft_value *b);
/* tf.norm(a, ord='euclidean', axis, keepdims): sqrt(sum(a^2)) over
 * axes[0..n_axes) (n_axes 0: every axis, the Frobenius norm of a matrix);
 * f32, f64. */
WEFT_API weft_value *weft_norm(weft_ctx *cx, weft_value *a, const int *axes, size_t n_axes,
                               bool keepdims);
/* tf.linalg.normalize(tensor, ord='euclidean', axis): outs[0] a / norm
 * and outs[1] the norm of weft_norm over axes[0..n_axes) (n_axes 0: every
 * axis) kept as 1s, TensorFlow's steps; f32, f64.  Returns 0 or the
 * context's error code with outs NULL. */
WEFT_API int weft_normalize(weft_ctx *cx, weft_value *a, const int *axes, size_t n_axes,
                            weft_value **outs);
/* tf.clip_by_norm(t, clip_norm, axes): t * clip_norm / max(norm, clip_norm)
 * with the norm over axes[0..n_axes) (n_axes 0: every axis), kept as 1s;
 * f32, f64; clip_norm finite and > 0. */
WEFT_API weft_value *weft_clip_by_norm(weft_ctx *cx, weft_value *t, double clip_norm,
                                       const int *axes, size_t n_axes);
/* tf.clip_by_global_norm(ts, clip_norm): outs[0..n) each ts[i] * clip_norm
 * / max(global_norm, clip_norm) and outs[n] the global norm (f64 scalar),
 * sqrt of the sum of every tensor's squares, computed in f64.  n >= 1
 * tensors, f32 or f64; clip_norm finite and > 0.  Returns 0, or the
 * context's error code with every outs[k] NULL. */
/* tf.linalg.global_norm(t_list): the f64 scalar sqrt of the sum of every
 * tensor's squares, computed in f64 (TensorFlow: in the tensors' dtype),
 * the norm weft_clip_by_global_norm scales by; n >= 1 tensors, f32 or f64
 * (WEFT_EINVAL, WEFT_EDTYPE); differentiable. */
WEFT_API weft_value *weft_global_norm(weft_ctx *cx, weft_value *const *ts, size_t n);
WEFT_API int weft_clip_by_global_norm(weft_ctx *cx, weft_value *const *ts, size_t n,
                                      double clip_norm, weft_value **outs);
/* tf.math.add_n(xs): xs[0] + xs[1] + ... left to right (one input is
 * returned as it is); every input of one dtype (WEFT_EDTYPE) and one
 * shape as far as known while tracing (WEFT_ESHAPE): no broadcasting, as
 * TensorFlow. */
WEFT_API weft_value *weft_add_n(weft_ctx *cx, weft_value *const *xs, size_t n);
/* tf.math.polyval(coeffs, x): coeffs[0] x^(n-1) + ... + coeffs[n-1] by
 * Horner's rule, each step promoting and broadcasting as weft_add and
 * weft_mul; n = 0 gives zeros of x's shape. */
WEFT_API weft_value *weft_polyval(weft_ctx *cx, weft_value *const *coeffs, size_t n,
                                  weft_value *x);
/* tf.math.lbeta(x): log of the multivariate beta function over the last
 * axis, sum(lgamma(x), -1) - lgamma(sum(x, -1)); f32 or f64 of rank 1 or
 * more.  An empty last axis gives -inf. */
WEFT_API weft_value *weft_lbeta(weft_ctx *cx, weft_value *x);
/* tf.math.divide_no_nan(x, y): x / y, and 0 where y is 0 (whatever x is);
 * f32, f64. */
WEFT_API weft_value *weft_divide_no_nan(weft_ctx *cx, weft_value *x, weft_value *y);
/* tf.math.squared_difference(x, y): (x - y)^2; numbers. */
WEFT_API weft_value *weft_squared_difference(weft_ctx *cx, weft_value *x, weft_value *y);
/* tf.math.reciprocal(x): 1 / x as weft_truediv (integers give f64). */
WEFT_API weft_value *weft_reciprocal(weft_ctx *cx, weft_value *x);
/* tf.math.reciprocal_no_nan(x): 1 / x, and 0 where x is 0; f32, f64. */
WEFT_API weft_value *weft_reciprocal_no_nan(weft_ctx *cx, weft_value *x);
/* tf.math.xlogy(x, y): x * log(y), and 0 where x is 0 (whatever y is);
 * f32, f64. */
WEFT_API weft_value *weft_xlogy(weft_ctx *cx, weft_value *x, weft_value *y);
/* tf.math.xlog1py(x, y): x * log1p(y), and 0 where x is 0;
 * tf.math.xdivy(x, y): x / y, and 0 where x is 0; tf.math.multiply_no_nan(x,
 * y): x * y, and 0 where y is 0 (whatever x is, NaN and inf too).  f32,
 * f64. */
WEFT_API weft_value *weft_xlog1py(weft_ctx *cx, weft_value *x, weft_value *y);
WEFT_API weft_value *weft_xdivy(weft_ctx *cx, weft_value *x, weft_value *y);
WEFT_API weft_value *weft_multiply_no_nan(weft_ctx *cx, weft_value *x, weft_value *y);

/* The standard normal distribution (tf.math.ndtr, tf.math.log_ndtr,
 * tf.math.erfcinv), f32 or f64 (WEFT_EDTYPE otherwise), each the
 * composition TensorFlow writes, in its steps:
 *   ndtr(x)     P[X <= x] for X ~ N(0, 1): 0.5 (1 + erf(x / sqrt 2)) where
 *               |x| < 1, else through erfc, so the lower tail keeps its
 *               digits down to the smallest subnormal;
 *   log_ndtr(x) log(ndtr(x)): -ndtr(-x) above 8 (f32: 5), log(ndtr(x))
 *               down to -20 (f32: -10), below that three terms of the
 *               asymptotic series of log ndtr; log_ndtr(-inf) is -inf;
 *   erfcinv(x)  the inverse of erfc on [0, 2]: -ndtri(x / 2) / sqrt 2
 *               (+inf at 0, -inf at 2, NaN outside). */
WEFT_API weft_value *weft_ndtr(weft_ctx *cx, weft_value *x);
WEFT_API weft_value *weft_log_ndtr(weft_ctx *cx, weft_value *x);
WEFT_API weft_value *weft_erfcinv(weft_ctx *cx, weft_value *x);
/* tf.tensordot(a, b, axes): the sum of products over a's last `axes` dims
 * and b's first `axes` dims, in order; the result is a's other dims, then
 * b's other dims (axes 0: the outer product).  weft_tensordot_ex
 * contracts a's dim a_axes[k] with b's dim b_axes[k] for k < n (negative
 * axes count from the end; an axis named twice is WEFT_EINVAL; known
 * dims that differ are WEFT_ESHAPE).  Both ranks must be known while
 * tracing.  One weft_einsum, so one matrix product, and dtypes promote as
 * weft_matmul's. */
WEFT_API weft_value *weft_tensordot(weft_ctx *cx, weft_value *a, weft_value *b, int axes);
WEFT_API weft_value *weft_tensordot_ex(weft_ctx *cx, weft_value *a, weft_value *b,
                                       const int *a_axes, const int *b_axes, size_t n);
/* tf.raw_ops.Bucketize(x, boundaries): for each element of x (i32, i64,
 * f32 or f64) the i32 index of its bucket, the number of boundaries at
 * or below it: 0 below boundaries[0], n at or above boundaries[n - 1]
 * (NaN too).  boundaries[0..n) are sorted and not NaN (WEFT_EINVAL).  An
 * f32 x compares with the boundaries rounded to f32 (TensorFlow's
 * boundaries are floats), f64 with them as given, integers in f64 (exact
 * to 2^53).  x's rank and all its dims but one must be known while
 * tracing (WEFT_ESHAPE).  One weft_searchsorted of the flattened x. */
WEFT_API weft_value *weft_bucketize(weft_ctx *cx, weft_value *x, const double *boundaries,
                                    size_t n);
/* tf.reverse_sequence(x, seq_lengths, seq_axis, batch_axis): for each
 * index b along batch_axis, the first seq_lengths[b] elements along
 * seq_axis reversed and the rest kept.  seq_lengths is an i32 or i64
 * vector of x's batch dim (WEFT_EDTYPE, WEFT_ESHAPE); the axes differ
 * and may be negative (WEFT_EINVAL); x's rank (2 or more) and its
 * seq_axis dim must be known while tracing.  A length above the seq_axis
 * dim fails when the function runs, as a gather's index out of range; a
 * negative one reverses nothing (TensorFlow refuses both).  One batched
 * gather along seq_axis. */
WEFT_API weft_value *weft_reverse_sequence(weft_ctx *cx, weft_value *x, weft_value *seq_lengths,
                                           int seq_axis, int batch_axis);

#ifdef __cplusplus
}
#endif
#endif
