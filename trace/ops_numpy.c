/* Functions of tf.experimental.numpy that TensorFlow's own namespaces lack
 * (logaddexp, logaddexp2, heaviside, sinc, kron, tril, triu, diff, outer,
 * isclose, allclose), each composed of weft's ops in NumPy's formula, so eager,
 * traced and fused runs give the same bits and the gradients come from
 * the parts.  log2, log10, exp2, cbrt and hypot are float functions of
 * their own (ops_math.c). */
#include <math.h>

#include "trace/ctx.h"
#include "trace/eager_fused.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

static const double PI = 3.14159265358979323846;
static const double LN2 = 0.69314718055994530942;

/* weft_diff's n along a dim unknown while tracing: two slices and a
 * subtraction are recorded per step. */
#define WEFT__DIFF_MAX_UNKNOWN 64

/* Enters fn with x1 and x2, both then in the float dtype they promote to
 * (integers and bool: f64); false when the context has failed. */
static bool float_pair(weft_ctx *cx, const char *fn, weft_value **x1, weft_value **x2)
{
    weft_value *in[2] = { *x1, *x2 };
    if (!weft__op_enter(cx, fn, in, 2))
        return false;
    weft_dtype dt = weft__ops_float_dtype(in, 2);
    *x1 = weft__ops_as_dtype(cx, *x1, dt);
    *x2 = weft__ops_as_dtype(cx, *x2, dt);
    return true;
}

/* log(e^x1 + e^x2) or its base-2 twin, NumPy's way: the larger plus the
 * log of one plus the smaller's share, so nothing overflows; a NaN
 * difference (NaN, or two infinities of one sign) gives x1 + x2. */
static weft_value *log_add_exp(weft_ctx *cx, const char *fn, weft_value *x1, weft_value *x2,
                               bool base2)
{
    if (!float_pair(cx, fn, &x1, &x2))
        return NULL;
    weft__steps s = { cx, fn };
    weft_value *delta = weft__step2(&s, WEFT__OP_SUB, x1, x2);
    weft_value *fall = weft__step1(&s, WEFT__OP_NEG, weft__step1(&s, WEFT__OP_ABS, delta));
    weft_value *tail =
        base2 ? weft__step2(&s, WEFT__OP_TRUEDIV,
                            weft__step1(&s, WEFT__OP_LOG1P, weft__step1(&s, WEFT__OP_EXP2, fall)),
                            weft_const_f64(cx, LN2))
              : weft__step1(&s, WEFT__OP_LOG1P, weft__step1(&s, WEFT__OP_EXP, fall));
    weft_value *top = weft__step2(&s, WEFT__OP_MAXIMUM, x1, x2);
    weft_value *sum = weft__step2(&s, WEFT__OP_ADD, top, tail);
    weft_value *nan = weft__step1(&s, WEFT__OP_IS_NAN, delta);
    return weft_where(cx, nan, weft__step2(&s, WEFT__OP_ADD, x1, x2), sum);
}

weft_value *weft_logaddexp(weft_ctx *cx, weft_value *x1, weft_value *x2)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(log_add_exp(cx, "weft_logaddexp", x1, x2, false));
}

weft_value *weft_logaddexp2(weft_ctx *cx, weft_value *x1, weft_value *x2)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(log_add_exp(cx, "weft_logaddexp2", x1, x2, true));
}

/* NumPy's heaviside: 0 below 0, x2 at 0 (either zero), 1 above, NaN for
 * a NaN x1; in the float dtype the two promote to. */
weft_value *weft_heaviside(weft_ctx *cx, weft_value *x1, weft_value *x2)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_heaviside";
    if (!float_pair(cx, fn, &x1, &x2))
        return NULL;
    weft__steps s = { cx, fn };
    weft_value *zero = weft_const_f64(cx, 0.0);
    weft_value *at_zero = weft_where(cx, weft__step2(&s, WEFT__OP_EQ, x1, zero), x2, x1);
    weft_value *below = weft_where(cx, weft__step2(&s, WEFT__OP_LT, x1, zero), zero, at_zero);
    return WEFT__KEEP(weft_where(cx, weft__step2(&s, WEFT__OP_GT, x1, zero),
                                 weft_const_f64(cx, 1.0), below));
}

static weft__fused_site sinc_site = WEFT__FUSED_SITE("weft_sinc", weft_sinc, false);

/* sin(pi x) / (pi x), NumPy's formula: x = 0 is replaced by 1e-20 first,
 * which gives exactly 1 there (and a zero gradient, the true one). */
weft_value *weft_sinc(weft_ctx *cx, weft_value *x)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_sinc";
    if (!weft__op_enter(cx, fn, &x, 1))
        return NULL;
    x = weft__ops_as_dtype(cx, x, weft__ops_float_dtype(&x, 1));
    weft_value *y;
    if (weft__eager_fused(cx, &sinc_site, x, &y))
        return WEFT__KEEP(y);
    weft__steps s = { cx, fn };
    weft_value *zero = weft__step2(&s, WEFT__OP_EQ, x, weft_const_f64(cx, 0.0));
    weft_value *safe = weft_where(cx, zero, weft_const_f64(cx, 1e-20), x);
    weft_value *t = weft__step2(&s, WEFT__OP_MUL, weft_const_f64(cx, PI), safe);
    return WEFT__KEEP(weft__step2(&s, WEFT__OP_TRUEDIV, weft__step1(&s, WEFT__OP_SIN, t), t));
}

/* Whether v's rank and every dim are known while tracing; else the
 * context fails. */
static bool dims_known(weft_ctx *cx, const char *fn, const char *name, const weft_value *v)
{
    const weft_spec *s = weft__value_spec(v);
    bool known = s->rank != WEFT_RANK_ANY;
    for (int d = 0; known && d < s->rank; d++)
        known = s->dims[d] >= 0;
    if (known)
        return true;
    char str[WEFT__SPEC_STR_MAX];
    weft__ctx_fail(cx, WEFT_ESHAPE, "%s: %s is %s; its dims must be known while tracing", fn,
                   name, weft__spec_str(s, str, sizeof str));
    return false;
}

/* v as rank 2 * rank: its dims, with 1s in front up to `rank`, each
 * followed by a 1 ([v0, 1, v1, 1, ...]), or with ones_first each preceded
 * by one ([1, v0, 1, v1, ...]). */
static weft_value *interleave_ones(weft_ctx *cx, weft_value *v, int rank, bool ones_first)
{
    const weft_spec *s = weft__value_spec(v);
    int64_t dims[WEFT_MAX_RANK];
    for (int d = 0; d < rank; d++) {
        int src = d - (rank - s->rank);
        dims[2 * d + ones_first] = src < 0 ? 1 : s->dims[src];
        dims[2 * d + !ones_first] = 1;
    }
    return weft_reshape(cx, v, 2 * rank, dims);
}

/* NumPy's kron: the block matrix of a's elements times b, in any rank (the
 * shorter operand takes leading 1s): out[i * b.shape + j] = a[i] * b[j]
 * per dim.  Dims known while tracing, rank at most WEFT_MAX_RANK / 2. */
weft_value *weft_kron(weft_ctx *cx, weft_value *a, weft_value *b)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_kron";
    weft_value *in[2] = { a, b };
    if (!weft__op_enter(cx, fn, in, 2) || !dims_known(cx, fn, "a", a) ||
        !dims_known(cx, fn, "b", b))
        return NULL;
    const weft_spec *sa = weft__value_spec(a), *sb = weft__value_spec(b);
    int rank = sa->rank > sb->rank ? sa->rank : sb->rank;
    if (2 * rank > WEFT_MAX_RANK)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: rank %d is above %d", fn, rank,
                              WEFT_MAX_RANK / 2);
    int64_t dims[WEFT_MAX_RANK];
    for (int d = 0; d < rank; d++) {
        int ia = d - (rank - sa->rank), ib = d - (rank - sb->rank);
        dims[d] = (ia < 0 ? 1 : sa->dims[ia]) * (ib < 0 ? 1 : sb->dims[ib]);
    }
    weft_value *blocks = weft__op_binary(cx, WEFT__OP_MUL, fn, interleave_ones(cx, a, rank, false),
                                         interleave_ones(cx, b, rank, true));
    return WEFT__KEEP(weft_reshape(cx, blocks, rank, dims));
}

/* The rank of v when known while tracing and at least min; else -1, the
 * context failed. */
static int rank_at_least(weft_ctx *cx, const char *fn, const weft_value *v, int min)
{
    const weft_spec *s = weft__value_spec(v);
    if (s->rank != WEFT_RANK_ANY && s->rank >= min)
        return s->rank;
    char str[WEFT__SPEC_STR_MAX];
    weft__ctx_fail(cx, WEFT_ESHAPE, "%s: %s has not a rank of %d or more known while tracing",
                   fn, weft__spec_str(s, str, sizeof str), min);
    return -1;
}

/* m with the elements off the band zeroed: those with j - i above k
 * (lower) or below k (upper), over the last two dims. */
static weft_value *triangle(weft_ctx *cx, const char *fn, weft_value *m, int64_t k, bool lower)
{
    if (!weft__op_enter(cx, fn, &m, 1))
        return NULL;
    int rank = rank_at_least(cx, fn, m, 2);
    if (rank < 0)
        return NULL;
    const weft_spec *s = weft__value_spec(m);
    int64_t rows = s->dims[rank - 2], cols = s->dims[rank - 1];
    if (rows < 0 || cols < 0) {
        char str[WEFT__SPEC_STR_MAX];
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: the last two dims of %s must be known "
                              "while tracing", fn, weft__spec_str(s, str, sizeof str));
    }
    weft_value *i = weft_reshape(cx, weft_range(cx, WEFT_I64, 0, rows, 1), 2,
                                 (const int64_t[]){ rows, 1 });
    weft_value *off = weft_sub(cx, weft_range(cx, WEFT_I64, 0, cols, 1), i);
    weft_value *keep = lower ? weft_le(cx, off, weft_const_i64(cx, k))
                             : weft_ge(cx, off, weft_const_i64(cx, k));
    return weft_where(cx, keep, m, weft_zeros_like(cx, m));
}

weft_value *weft_tril(weft_ctx *cx, weft_value *m, int64_t k)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(triangle(cx, "weft_tril", m, k, true));
}

weft_value *weft_triu(weft_ctx *cx, weft_value *m, int64_t k)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(triangle(cx, "weft_triu", m, k, false));
}

/* a[1:] - a[:-1] along axis, n times (bool: !=, as NumPy). */
weft_value *weft_diff(weft_ctx *cx, weft_value *a, int64_t n, int axis)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_diff";
    if (!weft__op_enter(cx, fn, &a, 1))
        return NULL;
    int rank = rank_at_least(cx, fn, a, 1);
    if (rank < 0)
        return NULL;
    if (n < 0 || axis < -rank || axis >= rank)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: n %lld is negative or axis %d is not in "
                              "[%d, %d)", fn, (long long)n, axis, -rank, rank);
    axis = axis < 0 ? axis + rank : axis;
    /* Past the dim every difference is empty; an unknown dim bounds the
     * ops recorded instead. */
    int64_t dim = weft__value_spec(a)->dims[axis];
    if (dim >= 0 && n > dim)
        n = dim;
    if (dim < 0 && n > WEFT__DIFF_MAX_UNKNOWN)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: n %lld is above %d along a dim unknown "
                              "while tracing", fn, (long long)n, WEFT__DIFF_MAX_UNKNOWN);
    bool logical = weft__value_spec(a)->dtype == WEFT_BOOL;
    for (int64_t step = 0; step < n && a; step++) {
        weft_value *hi = weft__ops_axis_slice(cx, a, axis, 1, WEFT_END);
        weft_value *lo = weft__ops_axis_slice(cx, a, axis, 0, -1);
        a = logical ? weft_ne(cx, hi, lo) : weft_sub(cx, hi, lo);
    }
    return WEFT__KEEP(a);
}

/* a flattened as a column times b flattened as a row. */
weft_value *weft_outer(weft_ctx *cx, weft_value *a, weft_value *b)
{
    WEFT__SCOPE(cx);
    weft_value *in[2] = { a, b };
    if (!weft__op_enter(cx, "weft_outer", in, 2))
        return NULL;
    weft_value *col = weft_reshape(cx, a, 2, (const int64_t[]){ -1, 1 });
    weft_value *row = weft_reshape(cx, b, 2, (const int64_t[]){ 1, -1 });
    return WEFT__KEEP(weft_mul(cx, col, row));
}

/* NumPy's isclose: |a - b| <= atol + rtol |b| where b is finite, or a ==
 * b (equal infinities), or both NaN with equal_nan; in the float dtype the
 * two promote to. */
static weft_value *isclose_as(weft_ctx *cx, const char *fn, weft_value *a, weft_value *b,
                              double rtol, double atol, bool equal_nan)
{
    if (!float_pair(cx, fn, &a, &b))
        return NULL;
    if (!(isfinite(rtol) && isfinite(atol) && rtol >= 0 && atol >= 0))
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: rtol %g and atol %g must be finite and >= 0",
                              fn, rtol, atol);
    weft__steps s = { cx, fn };
    weft_value *gap = weft__step1(&s, WEFT__OP_ABS, weft__step2(&s, WEFT__OP_SUB, a, b));
    weft_value *room = weft__step2(&s, WEFT__OP_ADD, weft_const_f64(cx, atol),
                                   weft__step2(&s, WEFT__OP_MUL, weft_const_f64(cx, rtol),
                                               weft__step1(&s, WEFT__OP_ABS, b)));
    weft_value *near = weft_logical_and(cx, weft__step2(&s, WEFT__OP_LE, gap, room),
                                        weft__step1(&s, WEFT__OP_IS_FINITE, b));
    weft_value *close = weft_logical_or(cx, near, weft__step2(&s, WEFT__OP_EQ, a, b));
    if (equal_nan)
        close = weft_logical_or(cx, close,
                                weft_logical_and(cx, weft__step1(&s, WEFT__OP_IS_NAN, a),
                                                 weft__step1(&s, WEFT__OP_IS_NAN, b)));
    return close;
}

weft_value *weft_isclose(weft_ctx *cx, weft_value *a, weft_value *b, double rtol, double atol,
                         bool equal_nan)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(isclose_as(cx, "weft_isclose", a, b, rtol, atol, equal_nan));
}

weft_value *weft_allclose(weft_ctx *cx, weft_value *a, weft_value *b, double rtol, double atol,
                          bool equal_nan)
{
    WEFT__SCOPE(cx);
    weft_value *close = isclose_as(cx, "weft_allclose", a, b, rtol, atol, equal_nan);
    static const int first = 0;
    weft_value *flat = weft_reshape(cx, close, 1, (const int64_t[]){ -1 });
    return WEFT__KEEP(weft_reduce(cx, WEFT_R_ALL, flat, &first, 1, false));
}
