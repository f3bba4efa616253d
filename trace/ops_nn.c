/* The neural-network ops of include/weft/ops.h: softmax, log_softmax,
 * logsumexp, one_hot, reverse, pad and the activations leaky_relu, elu,
 * gelu, softplus, log_sigmoid, silu, relu6, gelu_exact, selu, softsign
 * and mish; and isotonic_regression, one ISOTONIC node per output (the
 * fit and the segments; trace/kernel_isotonic.c).  The others are each a
 * composition of the other ops, so eager mode, tracing, fusion, the
 * native tier and unknown dims come with them and no kernel is new.  Each
 * checks its inputs first: the inner ops it then calls cannot fail on them
 * (short of memory), so an error names the public op.  The elementwise
 * steps go through weft__op_unary / weft__op_binary with the public name
 * for the same reason. */
#include <math.h>
#include <stdint.h>

#include "runtime/iface.h"
#include "trace/control.h"
#include "trace/ctx.h"
#include "trace/eager_fused.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

/* ---- Checks ------------------------------------------------------------ */

/* A context, no sticky error, a valid input. */
static bool enter(weft_ctx *cx, const char *fn, weft_value *a)
{
    if (!cx) {
        weft__errorf(WEFT_EINVAL, "%s: NULL context", fn);
        return false;
    }
    return weft__ctx_check_inputs(cx, fn, &a, 1);
}

static const weft_spec *spec_of(const weft_value *v)
{
    return weft__value_spec(v);
}

/* These ops are defined on floats only, as in TensorFlow: an integer
 * softmax would be a cast the caller did not ask for. */
static bool need_float(weft_ctx *cx, const char *fn, const weft_value *a)
{
    if (weft__dtype_is_float(spec_of(a)->dtype))
        return true;
    char s[WEFT__SPEC_STR_MAX];
    weft__ctx_fail(cx, WEFT_EDTYPE, "%s: a is %s, not f32 or f64 (weft_cast it first)", fn,
                   weft__spec_str(spec_of(a), s, sizeof s));
    return false;
}

/* The entry checks of the float ops over one axis. */
static bool float_axis(weft_ctx *cx, const char *fn, weft_value *a, int axis, int *out)
{
    *out = axis;
    return enter(cx, fn, a) && need_float(cx, fn, a) && weft__ops_axis_in(cx, fn, "a", a, out);
}

/* ---- Softmax and logsumexp --------------------------------------------- */

static weft_value *max_keep(weft_ctx *cx, weft_value *a, const int *axis, size_t n_axes)
{
    return weft_reduce(cx, WEFT_R_MAX, a, axis, n_axes, true);
}

static weft_value *sum_keep(weft_ctx *cx, weft_value *a, const int *axis, size_t n_axes)
{
    return weft_reduce(cx, WEFT_R_SUM, a, axis, n_axes, true);
}

/* a minus its maximum over axis: the largest exponent becomes 0, so exp
 * cannot overflow and at least one term of the sum is 1. */
static weft_value *shifted(weft_ctx *cx, const char *fn, weft_value *a, int axis)
{
    return weft__op_binary(cx, WEFT__OP_SUB, fn, a, max_keep(cx, a, &axis, 1));
}

static weft_value *softmax_last(weft_ctx *cx, weft_value *a)
{
    return weft_softmax(cx, a, -1);
}

static weft_value *log_softmax_last(weft_ctx *cx, weft_value *a)
{
    return weft_log_softmax(cx, a, -1);
}

static weft__fused_site softmax_site = WEFT__FUSED_SITE("weft_softmax", softmax_last, true);
static weft__fused_site log_softmax_site =
    WEFT__FUSED_SITE("weft_log_softmax", log_softmax_last, true);

/* Eagerly, over the last axis: the composite as one pass
 * (trace/eager_fused.h). */
static bool fused_last(weft_ctx *cx, weft__fused_site *site, weft_value *a, int axis,
                       weft_value **y)
{
    return axis == spec_of(a)->rank - 1 && weft__eager_fused(cx, site, a, y);
}

weft_value *weft_softmax(weft_ctx *cx, weft_value *a, int axis)
{
    WEFT__SCOPE(cx);
    const char *fn = "weft_softmax";
    if (!float_axis(cx, fn, a, axis, &axis))
        return NULL;
    weft_value *y;
    if (fused_last(cx, &softmax_site, a, axis, &y))
        return WEFT__KEEP(y);
    weft_value *e = weft__op_unary(cx, WEFT__OP_EXP, fn, shifted(cx, fn, a, axis));
    return WEFT__KEEP(weft__op_binary(cx, WEFT__OP_DIV, fn, e, sum_keep(cx, e, &axis, 1)));
}

/* log(softmax) as s - log(sum(exp(s))) on the shifted s, which stays
 * finite where softmax itself rounds to 0. */
weft_value *weft_log_softmax(weft_ctx *cx, weft_value *a, int axis)
{
    WEFT__SCOPE(cx);
    const char *fn = "weft_log_softmax";
    if (!float_axis(cx, fn, a, axis, &axis))
        return NULL;
    weft_value *y;
    if (fused_last(cx, &log_softmax_site, a, axis, &y))
        return WEFT__KEEP(y);
    weft_value *s = shifted(cx, fn, a, axis);
    weft_value *e = weft__op_unary(cx, WEFT__OP_EXP, fn, s);
    weft_value *lse = weft__op_unary(cx, WEFT__OP_LOG, fn, sum_keep(cx, e, &axis, 1));
    return WEFT__KEEP(weft__op_binary(cx, WEFT__OP_SUB, fn, s, lse));
}

/* The maximum over the axes, replaced by 0 where it is not finite (as
 * TensorFlow's reduce_logsumexp does): an axis of all -inf then sums
 * exp(-inf - 0) = 0 and gives log(0) + 0 = -inf rather than -inf - -inf,
 * which is NaN; +inf and NaN go through exp unchanged. */
static weft_value *finite_max(weft_ctx *cx, const char *fn, weft_value *a, const int *axis,
                              size_t n_axes)
{
    weft_value *m = max_keep(cx, a, axis, n_axes);
    weft_value *mag = weft__op_unary(cx, WEFT__OP_ABS, fn, m);
    weft_value *finite = weft__op_binary(cx, WEFT__OP_LT, fn, mag, weft_const_f64(cx, INFINITY));
    return weft_where(cx, finite, m, weft_const_f64(cx, 0.0));
}

weft_value *weft_logsumexp(weft_ctx *cx, weft_value *a, int axis, bool keepdims)
{
    WEFT__SCOPE(cx);
    const char *fn = "weft_logsumexp";
    if (!enter(cx, fn, a) || !need_float(cx, fn, a))
        return NULL;
    bool all = axis == WEFT_ALL_AXES;
    if (!all && !weft__ops_axis_in(cx, fn, "a", a, &axis))
        return NULL;
    size_t n_axes = all ? 0 : 1;
    weft_value *m = finite_max(cx, fn, a, &axis, n_axes);
    weft_value *e = weft__op_unary(cx, WEFT__OP_EXP, fn, weft__op_binary(cx, WEFT__OP_SUB, fn, a, m));
    weft_value *lse = weft__op_unary(cx, WEFT__OP_LOG, fn,
                                     weft_reduce(cx, WEFT_R_SUM, e, &axis, n_axes, keepdims));
    /* m kept the reduced axes as 1s; squeezing them gives the result's
     * shape (every axis of m is 1 when all are reduced). */
    if (!keepdims && m)
        m = weft_squeeze(cx, m, all ? WEFT_ALL_AXES : axis);
    return WEFT__KEEP(weft__op_binary(cx, WEFT__OP_ADD, fn, lse, m));
}

/* ---- one_hot, reverse, pad --------------------------------------------- */

weft_value *weft_one_hot(weft_ctx *cx, weft_value *indices, int64_t depth, weft_dtype dtype)
{
    WEFT__SCOPE(cx);
    const char *fn = "weft_one_hot";
    if (!enter(cx, fn, indices))
        return NULL;
    weft_dtype it = spec_of(indices)->dtype;
    if (it != WEFT_I32 && it != WEFT_I64) {
        char s[WEFT__SPEC_STR_MAX];
        return weft__ctx_fail(cx, WEFT_EDTYPE, "%s: indices are %s, not i32 or i64", fn,
                              weft__spec_str(spec_of(indices), s, sizeof s));
    }
    if (depth < 0)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: depth %lld is negative", fn, (long long)depth);
    if (weft_dtype_size(dtype) == 0)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: unknown dtype %d", fn, (int)dtype);
    /* Each index compared with 0..depth-1 along a new last axis: an index
     * outside that range matches nothing, which is TensorFlow's all-off
     * row, with no check that could fail at run time. */
    weft_value *cols = weft_range(cx, WEFT_I64, 0, depth, 1);
    weft_value *rows = weft_expand_dims(cx, indices, -1);
    weft_value *hit = weft__op_binary(cx, WEFT__OP_EQ, fn, rows, cols);
    return WEFT__KEEP(weft_cast(cx, hit, dtype));
}

/* A context and no sticky error, for the ops without inputs. */
static bool enter_leaf(weft_ctx *cx, const char *fn)
{
    if (!cx) {
        weft__errorf(WEFT_EINVAL, "%s: NULL context", fn);
        return false;
    }
    return weft__ctx_check_inputs(cx, fn, NULL, 0);
}

/* The row index against the column index: 1 where they are equal. */
weft_value *weft_eye(weft_ctx *cx, int64_t n, int64_t m, weft_dtype dtype)
{
    WEFT__SCOPE(cx);
    const char *fn = "weft_eye";
    if (!enter_leaf(cx, fn))
        return NULL;
    if (n < 0 || m < 0)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: %lld rows and %lld columns (negative)", fn,
                              (long long)n, (long long)m);
    if (weft_dtype_size(dtype) == 0)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: unknown dtype %d", fn, (int)dtype);
    weft_value *rows = weft_expand_dims(cx, weft_range(cx, WEFT_I64, 0, n, 1), -1);
    weft_value *cols = weft_range(cx, WEFT_I64, 0, m, 1);
    return WEFT__KEEP(weft_cast(cx, weft__op_binary(cx, WEFT__OP_EQ, fn, rows, cols), dtype));
}

/* NumPy's way: start + i * step in f64, the last value set to stop, then
 * rounded to the dtype. */
weft_value *weft_linspace(weft_ctx *cx, double start, double stop, int64_t num, weft_dtype dtype)
{
    WEFT__SCOPE(cx);
    const char *fn = "weft_linspace";
    if (!enter_leaf(cx, fn))
        return NULL;
    if (dtype != WEFT_F32 && dtype != WEFT_F64)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: dtype %s is not f32 or f64", fn,
                              weft_dtype_name(dtype) ? weft_dtype_name(dtype) : "?");
    if (num < 0)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: num %lld is negative", fn, (long long)num);
    if (!isfinite(start) || !isfinite(stop))
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: start %g and stop %g are not finite", fn,
                              start, stop);
    weft_value *i = weft_cast(cx, weft_range(cx, WEFT_I64, 0, num, 1), WEFT_F64);
    double step = num > 1 ? (stop - start) / (double)(num - 1) : 0;
    weft_value *v = weft_add(cx, weft_const_f64(cx, start),
                             weft_mul(cx, i, weft_const_f64(cx, step)));
    if (num > 1) {
        weft_value *last = weft__op_binary(cx, WEFT__OP_EQ, fn, i,
                                           weft_const_f64(cx, (double)(num - 1)));
        v = weft_where(cx, last, weft_fill(cx, WEFT_F64, 0, NULL, stop), v);
    }
    return WEFT__KEEP(weft_cast(cx, v, dtype));
}

weft_value *weft_reverse(weft_ctx *cx, weft_value *a, int axis)
{
    WEFT__SCOPE(cx);
    const char *fn = "weft_reverse";
    if (!enter(cx, fn, a) || !weft__ops_axis_in(cx, fn, "a", a, &axis))
        return NULL;
    int64_t step[WEFT_MAX_RANK];
    for (int d = 0; d < spec_of(a)->rank; d++)
        step[d] = d == axis ? -1 : 1;
    return WEFT__KEEP(weft_slice(cx, a, NULL, NULL, step));
}

/* pads holds rank rows of non-negative counts, and no padded known dim
 * overflows: after this, the fills and concats of weft_pad cannot fail. */
static bool pads_valid(weft_ctx *cx, const char *fn, const weft_value *a, const int64_t (*pads)[2])
{
    if (!pads) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: pads is NULL", fn);
        return false;
    }
    const weft_spec *s = spec_of(a);
    for (int d = 0; d < s->rank; d++) {
        int64_t lo = pads[d][0], hi = pads[d][1];
        if (lo < 0 || hi < 0) {
            weft__ctx_fail(cx, WEFT_EINVAL, "%s: the pads of dim %d (%lld, %lld) are negative",
                           fn, d, (long long)lo, (long long)hi);
            return false;
        }
        int64_t dim = s->dims[d] == WEFT_DIM_ANY ? 0 : s->dims[d];
        if (lo > INT32_MAX || hi > INT32_MAX || dim > INT64_MAX - lo - hi) {
            weft__ctx_fail(cx, WEFT_EINVAL, "%s: the pads of dim %d (%lld, %lld) are too large", fn,
                           d, (long long)lo, (long long)hi);
            return false;
        }
    }
    return true;
}

/* A block of t's shape but n along axis, filled with value.  When t's
 * other dims are known now it is a plain fill; else its shape is taken
 * from t when the function runs: t reduced over axis with keepdims (1
 * there, even for an empty axis), filled, then tiled n times along
 * axis. */
static weft_value *pad_block(weft_ctx *cx, weft_value *t, int axis, int64_t n, double value)
{
    const weft_spec *s = spec_of(t);
    int64_t dims[WEFT_MAX_RANK], times[WEFT_MAX_RANK];
    bool known = true;
    for (int d = 0; d < s->rank; d++) {
        dims[d] = d == axis ? n : s->dims[d];
        times[d] = d == axis ? n : 1;
        known = known && dims[d] != WEFT_DIM_ANY;
    }
    if (known)
        return weft_fill(cx, s->dtype, s->rank, dims, value);
    weft_value *one = weft_reduce(cx, WEFT_R_MAX, t, &axis, 1, true);
    return weft_tile(cx, weft_fill_like(cx, one, value), times);
}

/* t with lo blocks of value before it and hi after it along axis. */
static weft_value *pad_axis(weft_ctx *cx, weft_value *t, int axis, int64_t lo, int64_t hi,
                            double value)
{
    weft_value *parts[3];
    size_t n = 0;
    if (lo > 0)
        parts[n++] = pad_block(cx, t, axis, lo, value);
    parts[n++] = t;
    if (hi > 0)
        parts[n++] = pad_block(cx, t, axis, hi, value);
    return n == 1 ? t : weft_concat(cx, parts, n, axis);
}

weft_value *weft__ops_axis_slice(weft_ctx *cx, weft_value *t, int axis, int64_t begin,
                                 int64_t end)
{
    WEFT__SCOPE(cx);
    if (!t)   /* an earlier step failed: the context says why */
        return NULL;
    int64_t b[WEFT_MAX_RANK] = { 0 }, e[WEFT_MAX_RANK];
    for (int d = 0; d < spec_of(t)->rank; d++)
        e[d] = WEFT_END;
    b[axis] = begin;
    e[axis] = end;
    return WEFT__KEEP(weft_slice(cx, t, b, e, NULL));
}

weft_value *weft__ops_column(weft_ctx *cx, weft_value *m, int64_t d)
{
    static const int64_t flat = -1;
    return weft_reshape(cx, weft__ops_axis_slice(cx, m, 1, d, d + 1), 1, &flat);
}

weft_value *weft__ops_dim(weft_ctx *cx, weft_value *x, int axis)
{
    WEFT__SCOPE(cx);
    weft_value *at = weft__value_strong(cx, weft_const_i64(cx, axis));
    return WEFT__KEEP(weft_gather(cx, weft_shape(cx, x), at, 0));
}

weft_value *weft__ops_dim0(weft_ctx *cx, weft_value *x)
{
    return weft__ops_dim(cx, x, 0);
}

weft_value *weft__ops_axis0_range(weft_ctx *cx, weft_value *x)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(weft_range_to(cx, weft__ops_dim0(cx, x)));
}

/* t[from, from + n) along axis, mirrored (a single element as it is). */
static weft_value *mirrored(weft_ctx *cx, weft_value *t, int axis, int64_t from, int64_t n)
{
    weft_value *part = weft__ops_axis_slice(cx, t, axis, from, from + n);
    return n == 1 ? part : weft_reverse(cx, part, axis);
}

/* t (dim n along axis) with its lo first and hi last elements mirrored
 * before and after it: from the edge's neighbour on (REFLECT) or from the
 * edge itself (SYMMETRIC). */
static weft_value *mirror_axis(weft_ctx *cx, weft_value *t, int axis, int64_t n, int64_t lo,
                               int64_t hi, bool symmetric)
{
    int64_t skip = symmetric ? 0 : 1;
    weft_value *parts[3];
    size_t k = 0;
    if (lo > 0)
        parts[k++] = mirrored(cx, t, axis, skip, lo);
    parts[k++] = t;
    if (hi > 0)
        parts[k++] = mirrored(cx, t, axis, n - skip - hi, hi);
    return k == 1 ? t : weft_concat(cx, parts, k, axis);
}

/* TensorFlow's bounds of the mirror modes: each padded dim known while
 * tracing, its pads below it (REFLECT) or at most it (SYMMETRIC). */
static bool mirror_pads_valid(weft_ctx *cx, const char *fn, const weft_value *a,
                              const int64_t (*pads)[2], bool symmetric)
{
    const weft_spec *s = spec_of(a);
    for (int d = 0; d < s->rank; d++) {
        int64_t lo = pads[d][0], hi = pads[d][1], n = s->dims[d];
        if (lo == 0 && hi == 0)
            continue;
        char ss[WEFT__SPEC_STR_MAX];
        if (n == WEFT_DIM_ANY) {
            weft__ctx_fail(cx, WEFT_ESHAPE, "%s: dim %d of %s is padded by mirroring but not "
                           "known while tracing", fn, d, weft__spec_str(s, ss, sizeof ss));
            return false;
        }
        if (symmetric ? (lo > n || hi > n) : (lo >= n || hi >= n)) {
            weft__ctx_fail(cx, WEFT_EINVAL, "%s: the pads of dim %d (%lld, %lld) are not %s its "
                           "length %lld (%s)", fn, d, (long long)lo, (long long)hi,
                           symmetric ? "at most" : "below", (long long)n,
                           symmetric ? "WEFT_PAD_SYMMETRIC" : "WEFT_PAD_REFLECT");
            return false;
        }
    }
    return true;
}

static weft_value *pad(weft_ctx *cx, const char *fn, weft_value *a, const int64_t (*pads)[2],
                       weft_pad_mode mode, double value)
{
    if (!enter(cx, fn, a) || weft__ops_known_rank(cx, fn, "a", a) < 0)
        return NULL;
    if (mode != WEFT_PAD_CONSTANT && mode != WEFT_PAD_REFLECT && mode != WEFT_PAD_SYMMETRIC)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: mode %d is not WEFT_PAD_CONSTANT, "
                              "WEFT_PAD_REFLECT or WEFT_PAD_SYMMETRIC", fn, (int)mode);
    bool symmetric = mode == WEFT_PAD_SYMMETRIC;
    if (!pads_valid(cx, fn, a, pads) ||
        (mode != WEFT_PAD_CONSTANT && !mirror_pads_valid(cx, fn, a, pads, symmetric)))
        return NULL;
    /* A weak scalar padded by nothing becomes strong, as any op's result
     * is: the pad's dtype does not bend to what it meets next. */
    weft_value *t = weft__value_strong(cx, a);
    const weft_spec *s = spec_of(a);
    for (int d = 0; d < s->rank && t; d++)
        t = mode == WEFT_PAD_CONSTANT
                ? pad_axis(cx, t, d, pads[d][0], pads[d][1], value)
                : mirror_axis(cx, t, d, s->dims[d], pads[d][0], pads[d][1], symmetric);
    return t;
}

weft_value *weft_pad(weft_ctx *cx, weft_value *a, const int64_t (*pads)[2], double value)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(pad(cx, "weft_pad", a, pads, WEFT_PAD_CONSTANT, value));
}

weft_value *weft_pad_ex(weft_ctx *cx, weft_value *a, const int64_t (*pads)[2], weft_pad_mode mode,
                        double value)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(pad(cx, "weft_pad_ex", a, pads, mode, value));
}

/* ---- Activations -------------------------------------------------------- */

/* Eagerly, each activation on floats runs as one pass
 * (trace/eager_fused.h). */
static weft__fused_site elu_site = WEFT__FUSED_SITE("weft_elu", weft_elu, false);
static weft__fused_site gelu_site = WEFT__FUSED_SITE("weft_gelu", weft_gelu, false);
static weft__fused_site softplus_site = WEFT__FUSED_SITE("weft_softplus", weft_softplus, false);
static weft__fused_site log_sigmoid_site =
    WEFT__FUSED_SITE("weft_log_sigmoid", weft_log_sigmoid, false);
static weft__fused_site silu_site = WEFT__FUSED_SITE("weft_silu", weft_silu, false);
static weft__fused_site gelu_exact_site =
    WEFT__FUSED_SITE("weft_gelu_exact", weft_gelu_exact, false);
static weft__fused_site selu_site = WEFT__FUSED_SITE("weft_selu", weft_selu, false);
static weft__fused_site softsign_site = WEFT__FUSED_SITE("weft_softsign", weft_softsign, false);
static weft__fused_site mish_site = WEFT__FUSED_SITE("weft_mish", weft_mish, false);
static weft__fused_site relu6_site = WEFT__FUSED_SITE("weft_relu6", weft_relu6, false);
static weft__fused_site hard_sigmoid_site =
    WEFT__FUSED_SITE("weft_hard_sigmoid", weft_hard_sigmoid, false);
static weft__fused_site hard_swish_site =
    WEFT__FUSED_SITE("weft_hard_swish", weft_hard_swish, false);

/* v times the constant c, in v's dtype (a weak constant). */
static weft_value *scale(weft_ctx *cx, const char *fn, weft_value *v, double c)
{
    return weft__op_binary(cx, WEFT__OP_MUL, fn, v, weft_const_f64(cx, c));
}

/* x where x > 0, else alpha * x; NaN takes the else branch and stays NaN. */
weft_value *weft_leaky_relu(weft_ctx *cx, weft_value *a, double alpha)
{
    WEFT__SCOPE(cx);
    const char *fn = "weft_leaky_relu";
    if (!enter(cx, fn, a) || !need_float(cx, fn, a))
        return NULL;
    weft_value *pos = weft__op_binary(cx, WEFT__OP_GT, fn, a, weft_const_f64(cx, 0.0));
    return WEFT__KEEP(weft_where(cx, pos, a, scale(cx, fn, a, alpha)));
}

/* x where x > 0, else exp(x) - 1, through expm1, which keeps the digits
 * of small negative x that exp(x) - 1 would cancel. */
weft_value *weft_elu(weft_ctx *cx, weft_value *a)
{
    WEFT__SCOPE(cx);
    const char *fn = "weft_elu";
    if (!enter(cx, fn, a) || !need_float(cx, fn, a))
        return NULL;
    weft_value *y;
    if (weft__eager_fused(cx, &elu_site, a, &y))
        return WEFT__KEEP(y);
    weft_value *pos = weft__op_binary(cx, WEFT__OP_GT, fn, a, weft_const_f64(cx, 0.0));
    return WEFT__KEEP(weft_where(cx, pos, a, weft__op_unary(cx, WEFT__OP_EXPM1, fn, a)));
}

/* TensorFlow's gelu(approximate=True): 0.5 x (1 + tanh(sqrt(2/pi) (x +
 * 0.044715 x^3))).  The exact form is weft_gelu_exact. */
weft_value *weft_gelu(weft_ctx *cx, weft_value *a)
{
    WEFT__SCOPE(cx);
    const char *fn = "weft_gelu";
    if (!enter(cx, fn, a) || !need_float(cx, fn, a))
        return NULL;
    weft_value *y;
    if (weft__eager_fused(cx, &gelu_site, a, &y))
        return WEFT__KEEP(y);
    weft_value *cube = weft__op_binary(cx, WEFT__OP_MUL, fn,
                                       weft__op_unary(cx, WEFT__OP_SQUARE, fn, a), a);
    weft_value *inner = weft__op_binary(cx, WEFT__OP_ADD, fn, a, scale(cx, fn, cube, 0.044715));
    weft_value *t = weft__op_unary(cx, WEFT__OP_TANH, fn, scale(cx, fn, inner, 0.7978845608028654));
    weft_value *one_plus = weft__op_binary(cx, WEFT__OP_ADD, fn, t, weft_const_f64(cx, 1.0));
    return WEFT__KEEP(weft__op_binary(cx, WEFT__OP_MUL, fn, scale(cx, fn, a, 0.5), one_plus));
}

/* log1p(exp(-|x|)): the part of softplus and log_sigmoid that stays in
 * [0, log 2], so that exp never overflows. */
static weft_value *log1p_exp_neg_abs(weft_ctx *cx, const char *fn, weft_value *a)
{
    weft_value *na = weft__op_unary(cx, WEFT__OP_NEG, fn, weft__op_unary(cx, WEFT__OP_ABS, fn, a));
    return weft__op_unary(cx, WEFT__OP_LOG1P, fn, weft__op_unary(cx, WEFT__OP_EXP, fn, na));
}

/* log(1 + exp(x)) as max(x, 0) + log1p(exp(-|x|)): no overflow for large
 * x, no loss to 0 for very negative x. */
weft_value *weft_softplus(weft_ctx *cx, weft_value *a)
{
    WEFT__SCOPE(cx);
    const char *fn = "weft_softplus";
    if (!enter(cx, fn, a) || !need_float(cx, fn, a))
        return NULL;
    weft_value *y;
    if (weft__eager_fused(cx, &softplus_site, a, &y))
        return WEFT__KEEP(y);
    weft_value *pos = weft__op_binary(cx, WEFT__OP_MAXIMUM, fn, a, weft_const_f64(cx, 0.0));
    return WEFT__KEEP(weft__op_binary(cx, WEFT__OP_ADD, fn, pos, log1p_exp_neg_abs(cx, fn, a)));
}

/* log(sigmoid(x)) = -softplus(-x), as min(x, 0) - log1p(exp(-|x|)). */
weft_value *weft_log_sigmoid(weft_ctx *cx, weft_value *a)
{
    WEFT__SCOPE(cx);
    const char *fn = "weft_log_sigmoid";
    if (!enter(cx, fn, a) || !need_float(cx, fn, a))
        return NULL;
    weft_value *y;
    if (weft__eager_fused(cx, &log_sigmoid_site, a, &y))
        return WEFT__KEEP(y);
    weft_value *neg = weft__op_binary(cx, WEFT__OP_MINIMUM, fn, a, weft_const_f64(cx, 0.0));
    return WEFT__KEEP(weft__op_binary(cx, WEFT__OP_SUB, fn, neg, log1p_exp_neg_abs(cx, fn, a)));
}

/* x * sigmoid(x), TensorFlow's order. */
weft_value *weft_silu(weft_ctx *cx, weft_value *a)
{
    WEFT__SCOPE(cx);
    const char *fn = "weft_silu";
    if (!enter(cx, fn, a) || !need_float(cx, fn, a))
        return NULL;
    weft_value *y;
    if (weft__eager_fused(cx, &silu_site, a, &y))
        return WEFT__KEEP(y);
    return WEFT__KEEP(weft__op_binary(cx, WEFT__OP_MUL, fn, a,
                                      weft__op_unary(cx, WEFT__OP_SIGMOID, fn, a)));
}

/* min(relu(x), 6); integers stay integers, as with relu (and
 * tf.nn.relu6). */
/* min(6, relu(x)), 6 first: minimum's gradient goes to its first operand
 * on a tie, so none reaches x at 6 (TensorFlow's Relu6Grad, 0 at both
 * knees). The weak integer 6 takes a's dtype, so floats get 6.0's bits. */
static weft_value *relu6_of(weft_ctx *cx, const char *fn, weft_value *a)
{
    weft_value *r = weft__op_unary(cx, WEFT__OP_RELU, fn, a);
    return weft__op_binary(cx, WEFT__OP_MINIMUM, fn, weft_const_i64(cx, 6), r);
}

weft_value *weft_relu6(weft_ctx *cx, weft_value *a)
{
    WEFT__SCOPE(cx);
    const char *fn = "weft_relu6";
    if (!enter(cx, fn, a))
        return NULL;
    if (spec_of(a)->dtype == WEFT_BOOL) {
        char s[WEFT__SPEC_STR_MAX];
        return weft__ctx_fail(cx, WEFT_EDTYPE, "%s: a is %s, not a number (weft_cast it first)",
                              fn, weft__spec_str(spec_of(a), s, sizeof s));
    }
    weft_value *y;
    if (weft__eager_fused(cx, &relu6_site, a, &y))
        return WEFT__KEEP(y);
    return WEFT__KEEP(relu6_of(cx, fn, a));
}

/* relu6(x + 3) / 6, Keras 3's hard_sigmoid (a division, as there, so the
 * same bits). */
static weft_value *hard_sigmoid_of(weft_ctx *cx, const char *fn, weft_value *a)
{
    weft_value *shifted = weft__op_binary(cx, WEFT__OP_ADD, fn, a, weft_const_f64(cx, 3.0));
    return weft__op_binary(cx, WEFT__OP_TRUEDIV, fn, relu6_of(cx, fn, shifted),
                           weft_const_f64(cx, 6.0));
}

weft_value *weft_hard_sigmoid(weft_ctx *cx, weft_value *a)
{
    WEFT__SCOPE(cx);
    const char *fn = "weft_hard_sigmoid";
    if (!enter(cx, fn, a) || !need_float(cx, fn, a))
        return NULL;
    weft_value *y;
    if (weft__eager_fused(cx, &hard_sigmoid_site, a, &y))
        return WEFT__KEEP(y);
    return WEFT__KEEP(hard_sigmoid_of(cx, fn, a));
}

weft_value *weft_hard_swish(weft_ctx *cx, weft_value *a)
{
    WEFT__SCOPE(cx);
    const char *fn = "weft_hard_swish";
    if (!enter(cx, fn, a) || !need_float(cx, fn, a))
        return NULL;
    weft_value *y;
    if (weft__eager_fused(cx, &hard_swish_site, a, &y))
        return WEFT__KEEP(y);
    return WEFT__KEEP(weft__op_binary(cx, WEFT__OP_MUL, fn, a, hard_sigmoid_of(cx, fn, a)));
}

/* relu(x) and relu(-x) joined along axis (tf.nn.crelu's concat, then
 * relu, elementwise the same). */
weft_value *weft_crelu(weft_ctx *cx, weft_value *features, int axis)
{
    WEFT__SCOPE(cx);
    const char *fn = "weft_crelu";
    if (!enter(cx, fn, features))
        return NULL;
    const weft_spec *s = spec_of(features);
    char ss[WEFT__SPEC_STR_MAX];
    if (s->dtype == WEFT_BOOL)
        return weft__ctx_fail(cx, WEFT_EDTYPE, "%s: features is %s, not a number (weft_cast it "
                              "first)", fn, weft__spec_str(s, ss, sizeof ss));
    if (s->rank == WEFT_RANK_ANY || s->rank == 0 || axis < -s->rank || axis >= s->rank)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: axis %d is not an axis of features %s (its "
                              "rank known while tracing, at least 1)", fn, axis,
                              weft__spec_str(s, ss, sizeof ss));
    weft_value *halves[2] = {
        weft__op_unary(cx, WEFT__OP_RELU, fn, features),
        weft__op_unary(cx, WEFT__OP_RELU, fn, weft__op_unary(cx, WEFT__OP_NEG, fn, features)),
    };
    return WEFT__KEEP(halves[0] && halves[1] ? weft_concat(cx, halves, 2, axis) : NULL);
}

/* TensorFlow's gelu(approximate=False): x * 0.5 * (1 + erf(x / sqrt(2))),
 * in its order of operations. */
weft_value *weft_gelu_exact(weft_ctx *cx, weft_value *a)
{
    WEFT__SCOPE(cx);
    const char *fn = "weft_gelu_exact";
    if (!enter(cx, fn, a) || !need_float(cx, fn, a))
        return NULL;
    weft_value *y;
    if (weft__eager_fused(cx, &gelu_exact_site, a, &y))
        return WEFT__KEEP(y);
    weft_value *z = weft__op_binary(cx, WEFT__OP_TRUEDIV, fn, a, weft_const_f64(cx, 1.4142135623730951));
    weft_value *one_plus = weft__op_binary(cx, WEFT__OP_ADD, fn, weft_const_f64(cx, 1.0),
                                           weft__op_unary(cx, WEFT__OP_ERF, fn, z));
    return WEFT__KEEP(weft__op_binary(cx, WEFT__OP_MUL, fn, scale(cx, fn, a, 0.5), one_plus));
}

/* TensorFlow's selu: scale * (x where x > 0, else alpha * expm1(x)), with
 * the constants of Klambauer et al. in full precision. */
weft_value *weft_selu(weft_ctx *cx, weft_value *a)
{
    WEFT__SCOPE(cx);
    const char *fn = "weft_selu";
    if (!enter(cx, fn, a) || !need_float(cx, fn, a))
        return NULL;
    weft_value *y;
    if (weft__eager_fused(cx, &selu_site, a, &y))
        return WEFT__KEEP(y);
    weft_value *pos = weft__op_binary(cx, WEFT__OP_GT, fn, a, weft_const_f64(cx, 0.0));
    weft_value *neg = scale(cx, fn, weft__op_unary(cx, WEFT__OP_EXPM1, fn, a),
                            1.6732632423543772848170429916717);
    return WEFT__KEEP(scale(cx, fn, weft_where(cx, pos, a, neg),
                            1.0507009873554804934193349852946));
}

/* x / (1 + |x|). */
weft_value *weft_softsign(weft_ctx *cx, weft_value *a)
{
    WEFT__SCOPE(cx);
    const char *fn = "weft_softsign";
    if (!enter(cx, fn, a) || !need_float(cx, fn, a))
        return NULL;
    weft_value *y;
    if (weft__eager_fused(cx, &softsign_site, a, &y))
        return WEFT__KEEP(y);
    weft_value *den = weft__op_binary(cx, WEFT__OP_ADD, fn, weft__op_unary(cx, WEFT__OP_ABS, fn, a),
                                      weft_const_f64(cx, 1.0));
    return WEFT__KEEP(weft__op_binary(cx, WEFT__OP_TRUEDIV, fn, a, den));
}

/* x * tanh(softplus(x)) (Keras' and TensorFlow Addons' mish), softplus
 * in its stable form. */
weft_value *weft_mish(weft_ctx *cx, weft_value *a)
{
    WEFT__SCOPE(cx);
    const char *fn = "weft_mish";
    if (!enter(cx, fn, a) || !need_float(cx, fn, a))
        return NULL;
    weft_value *y;
    if (weft__eager_fused(cx, &mish_site, a, &y))
        return WEFT__KEEP(y);
    weft_value *pos = weft__op_binary(cx, WEFT__OP_MAXIMUM, fn, a, weft_const_f64(cx, 0.0));
    weft_value *sp = weft__op_binary(cx, WEFT__OP_ADD, fn, pos, log1p_exp_neg_abs(cx, fn, a));
    return WEFT__KEEP(weft__op_binary(cx, WEFT__OP_MUL, fn, a,
                                      weft__op_unary(cx, WEFT__OP_TANH, fn, sp)));
}

int weft_isotonic_regression(weft_ctx *cx, weft_value *x, bool decreasing, int axis,
                             weft_value **outs)
{
    WEFT__SCOPE_OUTS(cx, outs, 2);
    static const char fn[] = "weft_isotonic_regression";
    int rc = weft__ctx_enter_int(cx, fn, &x, 1, outs, 2);
    if (rc != 0)
        return rc;
    const weft_spec *s = weft__value_spec(x);
    char sx[WEFT__SPEC_STR_MAX];
    if (s->dtype == WEFT_BOOL)
        return weft__ctx_failf(cx, WEFT_EDTYPE, "%s: %s is not a number", fn,
                               weft__spec_str(s, sx, sizeof sx));
    if (s->rank == WEFT_RANK_ANY || s->rank < 1 || axis < -s->rank || axis >= s->rank)
        return weft__ctx_failf(cx, WEFT_ESHAPE, "%s: %s has no axis %d (its rank known while "
                               "tracing)", fn, weft__spec_str(s, sx, sizeof sx), axis);
    /* TensorFlow's steps: integers as f64, the increasing fit as the
     * decreasing fit of -x, negated. */
    weft_value *v = s->dtype == WEFT_F32 || s->dtype == WEFT_F64 ? x : weft_cast(cx, x, WEFT_F64);
    if (!decreasing)
        v = weft_neg(cx, v);
    weft__node n = { .op = WEFT__OP_ISOTONIC, .attr.index.axis = axis < 0 ? axis + s->rank : axis };
    weft_value *fit = weft__ops_finish(cx, &n, &v, 1);
    n.attr.index.kind = 1;
    weft_value *segments = weft__ops_finish(cx, &n, &v, 1);
    if (fit && !decreasing)
        fit = weft_neg(cx, fit);
    if (weft_ctx_status(cx) == 0) {
        outs[0] = fit;
        outs[1] = segments;
    }
    return weft_ctx_status(cx);
}
