/* The losses and normalization ops of include/weft/ops.h: the four
 * cross-entropies with logits (softmax, sparse softmax, sigmoid and
 * weighted), log_poisson_loss, l2_loss, l2_normalize,
 * local_response_normalization, moments, batch_normalization and
 * bias_add.  Like ops_nn.c's, each is a composition of other ops and
 * checks its inputs first, so that the inner ops cannot fail on them
 * (short of memory) and an error names the public op; the elementwise
 * steps go through weft__op_unary / weft__op_binary with the public
 * name. */
#include <math.h>

#include "runtime/iface.h"
#include "trace/control.h"
#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

/* ---- Checks ------------------------------------------------------------ */

static const weft_spec *spec_of(const weft_value *v)
{
    return weft__value_spec(v);
}

/* in[0..n_in) are f32 or f64, all of one dtype (weak scalars, which take
 * it, aside); names[i] names in[i] in the messages. */
bool weft__ops_floats_alike(weft_ctx *cx, const char *fn, weft_value *const *in,
                            const char *const *names, size_t n_in)
{
    const weft_value *first = NULL;
    for (size_t i = 0; i < n_in; i++) {
        if (!in[i])
            continue;
        const weft_spec *s = spec_of(in[i]);
        char ss[WEFT__SPEC_STR_MAX], sf[WEFT__SPEC_STR_MAX];
        if (s->dtype != WEFT_F32 && s->dtype != WEFT_F64) {
            weft__ctx_fail(cx, WEFT_EDTYPE, "%s: %s %s is not f32 or f64 (weft_cast it first)",
                           fn, names[i], weft__spec_str(s, ss, sizeof ss));
            return false;
        }
        if (weft__value_is_weak(in[i]))
            continue;
        if (first && spec_of(first)->dtype != s->dtype) {
            weft__ctx_fail(cx, WEFT_EDTYPE, "%s: %s %s is not of the dtype of %s", fn, names[i],
                           weft__spec_str(s, ss, sizeof ss),
                           weft__spec_str(spec_of(first), sf, sizeof sf));
            return false;
        }
        if (!first)
            first = in[i];
    }
    return true;
}

static bool epsilon_ok(weft_ctx *cx, const char *fn, double epsilon)
{
    if (epsilon >= 0 && isfinite(epsilon))
        return true;
    weft__ctx_fail(cx, WEFT_EINVAL, "%s: epsilon %g is not finite and >= 0", fn, epsilon);
    return false;
}

/* ---- Cross-entropies ---------------------------------------------------- */

weft_value *weft_softmax_cross_entropy_with_logits(weft_ctx *cx, weft_value *labels,
                                                   weft_value *logits, int axis)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_softmax_cross_entropy_with_logits";
    static const char *const names[] = { "labels", "logits" };
    weft_value *in[2] = { labels, logits };
    if (!weft__op_enter(cx, fn, in, 2) || !weft__ops_floats_alike(cx, fn, in, names, 2))
        return NULL;
    int rank = spec_of(logits)->rank;
    if (rank == WEFT_RANK_ANY)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: the rank of the logits is unknown while "
                              "tracing", fn);
    if (axis < -rank || axis >= rank)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: axis %d is out of range for logits of rank %d",
                              fn, axis, rank);
    weft_value *lsm = weft_log_softmax(cx, logits, axis);
    weft_value *terms = weft__op_binary(cx, WEFT__OP_MUL, fn, labels, lsm);
    weft_value *sum = weft_reduce(cx, WEFT_R_SUM, terms, &axis, 1, false);
    return WEFT__KEEP(weft__op_unary(cx, WEFT__OP_NEG, fn, sum));
}

weft_value *weft_sparse_softmax_cross_entropy_with_logits(weft_ctx *cx, weft_value *labels,
                                                          weft_value *logits)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_sparse_softmax_cross_entropy_with_logits";
    static const char *const names[] = { "logits" };
    weft_value *in[2] = { labels, logits };
    if (!weft__op_enter(cx, fn, in, 2) || !weft__ops_floats_alike(cx, fn, &in[1], names, 1))
        return NULL;
    const weft_spec *ls = spec_of(labels), *gs = spec_of(logits);
    char sl[WEFT__SPEC_STR_MAX], sg[WEFT__SPEC_STR_MAX];
    if (ls->dtype != WEFT_I32 && ls->dtype != WEFT_I64)
        return weft__ctx_fail(cx, WEFT_EDTYPE, "%s: labels %s are not i32 or i64", fn,
                              weft__spec_str(ls, sl, sizeof sl));
    if (gs->rank == WEFT_RANK_ANY || gs->rank == 0 || gs->dims[gs->rank - 1] == WEFT_DIM_ANY)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: the logits %s have no last dim (classes) "
                              "known while tracing", fn, weft__spec_str(gs, sg, sizeof sg));
    bool shape_ok = ls->rank == WEFT_RANK_ANY || ls->rank == gs->rank - 1;
    for (int d = 0; shape_ok && ls->rank != WEFT_RANK_ANY && d < ls->rank; d++)
        shape_ok = ls->dims[d] == WEFT_DIM_ANY || gs->dims[d] == WEFT_DIM_ANY ||
                   ls->dims[d] == gs->dims[d];
    if (!shape_ok)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: labels %s do not have the shape of the "
                              "logits %s without the last dim", fn,
                              weft__spec_str(ls, sl, sizeof sl), weft__spec_str(gs, sg, sizeof sg));
    int64_t classes = gs->dims[gs->rank - 1];
    /* The label's logit as a masked sum: a mask rather than a product, so
     * that a -inf among the other logits does not make 0 * -inf. */
    weft_value *mask = weft_one_hot(cx, labels, classes, WEFT_BOOL);
    weft_value *picked = weft_where(cx, mask, logits, weft_const_f64(cx, 0.0));
    int last = -1;
    weft_value *label_logit = weft_reduce(cx, WEFT_R_SUM, picked, &last, 1, false);
    weft_value *loss = weft__op_binary(cx, WEFT__OP_SUB, fn, weft_logsumexp(cx, logits, -1, false),
                                       label_logit);
    weft_value *in_range = weft_logical_and(
        cx, weft__op_binary(cx, WEFT__OP_GE, fn, labels, weft_const_i64(cx, 0)),
        weft__op_binary(cx, WEFT__OP_LT, fn, labels, weft_const_i64(cx, classes)));
    return WEFT__KEEP(weft_where(cx, in_range, loss, weft_const_f64(cx, NAN)));
}

weft_value *weft_sigmoid_cross_entropy_with_logits(weft_ctx *cx, weft_value *labels,
                                                   weft_value *logits)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_sigmoid_cross_entropy_with_logits";
    static const char *const names[] = { "labels", "logits" };
    weft_value *in[2] = { labels, logits };
    if (!weft__op_enter(cx, fn, in, 2) || !weft__ops_floats_alike(cx, fn, in, names, 2))
        return NULL;
    weft_value *x = logits;
    weft_value *pos = weft__op_binary(cx, WEFT__OP_MAXIMUM, fn, x, weft_const_f64(cx, 0.0));
    weft_value *xz = weft__op_binary(cx, WEFT__OP_MUL, fn, x, labels);
    weft_value *na = weft__op_unary(cx, WEFT__OP_NEG, fn, weft__op_unary(cx, WEFT__OP_ABS, fn, x));
    weft_value *tail = weft__op_unary(cx, WEFT__OP_LOG1P, fn,
                                      weft__op_unary(cx, WEFT__OP_EXP, fn, na));
    return WEFT__KEEP(weft__op_binary(cx, WEFT__OP_ADD, fn,
                                      weft__op_binary(cx, WEFT__OP_SUB, fn, pos, xz), tail));
}

/* TensorFlow's weighted_cross_entropy_with_logits in its stable form:
 * (1 - z) x + (1 + (pos_weight - 1) z) (log1p(exp(-|x|)) + max(-x, 0)). */
weft_value *weft_weighted_cross_entropy_with_logits(weft_ctx *cx, weft_value *labels,
                                                    weft_value *logits, double pos_weight)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_weighted_cross_entropy_with_logits";
    static const char *const names[] = { "labels", "logits" };
    weft_value *in[2] = { labels, logits };
    if (!weft__op_enter(cx, fn, in, 2) || !weft__ops_floats_alike(cx, fn, in, names, 2))
        return NULL;
    weft_value *x = logits, *z = labels;
    weft_value *log_weight = weft__op_binary(
        cx, WEFT__OP_ADD, fn, weft_const_f64(cx, 1.0),
        weft__op_binary(cx, WEFT__OP_MUL, fn, z, weft_const_f64(cx, pos_weight - 1.0)));
    weft_value *na = weft__op_unary(cx, WEFT__OP_NEG, fn, weft__op_unary(cx, WEFT__OP_ABS, fn, x));
    weft_value *soft = weft__op_binary(
        cx, WEFT__OP_ADD, fn,
        weft__op_unary(cx, WEFT__OP_LOG1P, fn, weft__op_unary(cx, WEFT__OP_EXP, fn, na)),
        weft__op_binary(cx, WEFT__OP_MAXIMUM, fn, weft__op_unary(cx, WEFT__OP_NEG, fn, x),
                        weft_const_f64(cx, 0.0)));
    weft_value *first = weft__op_binary(
        cx, WEFT__OP_MUL, fn,
        weft__op_binary(cx, WEFT__OP_SUB, fn, weft_const_f64(cx, 1.0), z), x);
    return WEFT__KEEP(weft__op_binary(cx, WEFT__OP_ADD, fn, first,
                                      weft__op_binary(cx, WEFT__OP_MUL, fn, log_weight, soft)));
}

/* TensorFlow's log_poisson_loss: exp(c) - c z, plus with full_loss the
 * Stirling term z log z - z + 0.5 log(2 pi z) where z > 1. */
weft_value *weft_log_poisson_loss(weft_ctx *cx, weft_value *targets, weft_value *log_input,
                                  bool full_loss)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_log_poisson_loss";
    static const char *const names[] = { "targets", "log_input" };
    weft_value *in[2] = { targets, log_input };
    if (!weft__op_enter(cx, fn, in, 2) || !weft__ops_floats_alike(cx, fn, in, names, 2))
        return NULL;
    weft_value *z = targets, *c = log_input;
    weft_value *loss = weft__op_binary(cx, WEFT__OP_SUB, fn, weft__op_unary(cx, WEFT__OP_EXP, fn, c),
                                       weft__op_binary(cx, WEFT__OP_MUL, fn, c, z));
    if (!full_loss)
        return WEFT__KEEP(loss);
    weft_value *zlogz = weft__op_binary(cx, WEFT__OP_MUL, fn, z,
                                        weft__op_unary(cx, WEFT__OP_LOG, fn, z));
    weft_value *half_log = weft__op_binary(
        cx, WEFT__OP_MUL, fn, weft_const_f64(cx, 0.5),
        weft__op_unary(cx, WEFT__OP_LOG, fn,
                       weft__op_binary(cx, WEFT__OP_MUL, fn, z, weft_const_f64(cx, 2 * M_PI))));
    weft_value *stirling = weft__op_binary(
        cx, WEFT__OP_ADD, fn, weft__op_binary(cx, WEFT__OP_SUB, fn, zlogz, z), half_log);
    /* TensorFlow leaves the term out for 0 <= z <= 1. */
    weft_value *small = weft_logical_and(
        cx, weft__op_binary(cx, WEFT__OP_GE, fn, z, weft_const_f64(cx, 0.0)),
        weft__op_binary(cx, WEFT__OP_LE, fn, z, weft_const_f64(cx, 1.0)));
    weft_value *term = weft_where(cx, small, weft_zeros_like(cx, stirling), stirling);
    return WEFT__KEEP(weft__op_binary(cx, WEFT__OP_ADD, fn, loss, term));
}

/* sum(t^2) / 2 over every element: a scalar of t's dtype. */
weft_value *weft_l2_loss(weft_ctx *cx, weft_value *t)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_l2_loss";
    static const char *const names[] = { "t" };
    if (!weft__op_enter(cx, fn, &t, 1) || !weft__ops_floats_alike(cx, fn, &t, names, 1))
        return NULL;
    weft_value *sq = weft__op_unary(cx, WEFT__OP_SQUARE, fn, t);
    weft_value *sum = weft_reduce(cx, WEFT_R_SUM, sq, NULL, 0, false);
    return WEFT__KEEP(weft__op_binary(cx, WEFT__OP_MUL, fn, sum, weft_const_f64(cx, 0.5)));
}

/* ---- Normalization ------------------------------------------------------ */

/* x / (bias + alpha sqr_sum)^beta: the squares summed over a window of
 * channels as one shifted slice of the zero-padded squares per offset
 * (they fuse).  A radius past the channels only adds padding, so it is
 * cut to channels - 1. */
weft_value *weft_local_response_normalization(weft_ctx *cx, weft_value *x, int64_t depth_radius,
                                              double bias, double alpha, double beta)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_local_response_normalization";
    static const char *const names[] = { "x" };
    if (!weft__op_enter(cx, fn, &x, 1) || !weft__ops_floats_alike(cx, fn, &x, names, 1))
        return NULL;
    const weft_spec *s = spec_of(x);
    char ss[WEFT__SPEC_STR_MAX];
    if (s->rank != 4 || s->dims[3] < 0)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: x %s is not NHWC data (rank 4, the channels "
                              "known while tracing)", fn, weft__spec_str(s, ss, sizeof ss));
    if (depth_radius < 0 || !isfinite(bias) || !isfinite(alpha) || !isfinite(beta))
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: depth_radius %lld is negative or bias %g, "
                              "alpha %g or beta %g is not finite", fn, (long long)depth_radius,
                              bias, alpha, beta);
    int64_t c = s->dims[3], r = depth_radius < c ? depth_radius : (c > 0 ? c - 1 : 0);
    const int64_t pads[4][2] = { { 0, 0 }, { 0, 0 }, { 0, 0 }, { r, r } };
    weft_value *padded = weft_pad(cx, weft__op_unary(cx, WEFT__OP_SQUARE, fn, x), pads, 0);
    weft_value *sum = NULL;
    for (int64_t off = 0; off <= 2 * r; off++) {
        const int64_t begin[4] = { 0, 0, 0, off }, end[4] = { WEFT_END, WEFT_END, WEFT_END, off + c };
        weft_value *part = weft_slice(cx, padded, begin, end, NULL);
        sum = sum ? weft__op_binary(cx, WEFT__OP_ADD, fn, sum, part) : part;
    }
    weft_value *base = weft__op_binary(cx, WEFT__OP_ADD, fn, weft_const_f64(cx, bias),
                                       weft__op_binary(cx, WEFT__OP_MUL, fn,
                                                       weft_const_f64(cx, alpha), sum));
    weft_value *denom = weft__op_binary(cx, WEFT__OP_POW, fn, base, weft_const_f64(cx, beta));
    return WEFT__KEEP(weft__op_binary(cx, WEFT__OP_DIV, fn, x, denom));
}

weft_value *weft_l2_normalize(weft_ctx *cx, weft_value *x, const int *axes, size_t n_axes,
                              double epsilon)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_l2_normalize";
    static const char *const names[] = { "x" };
    if (!weft__op_enter(cx, fn, &x, 1) || !weft__ops_floats_alike(cx, fn, &x, names, 1) ||
        !epsilon_ok(cx, fn, epsilon))
        return NULL;
    if (n_axes > 0 && !axes)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: NULL axes for %zu axes", fn, n_axes);
    weft_value *sq = weft_reduce(cx, WEFT_R_SUM, weft__op_unary(cx, WEFT__OP_SQUARE, fn, x), axes,
                                 n_axes, true);
    if (!sq)
        return NULL;   /* an axis out of range, named by weft_reduce */
    weft_value *floor = weft__op_binary(cx, WEFT__OP_MAXIMUM, fn, sq, weft_const_f64(cx, epsilon));
    return WEFT__KEEP(weft__op_binary(cx, WEFT__OP_MUL, fn, x,
                                      weft__op_unary(cx, WEFT__OP_RSQRT, fn, floor)));
}

int weft_moments(weft_ctx *cx, weft_value *x, const int *axes, size_t n_axes, bool keepdims,
                 weft_value **outs)
{
    WEFT__SCOPE_OUTS(cx, outs, 2);
    static const char fn[] = "weft_moments";
    static const char *const names[] = { "x" };
    int rc = weft__ctx_enter_int(cx, fn, &x, 1, outs, 2);
    if (rc != 0)
        return rc;
    if (!weft__ops_floats_alike(cx, fn, &x, names, 1))
        return weft_ctx_status(cx);
    if (n_axes > 0 && !axes) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: NULL axes for %zu axes", fn, n_axes);
        return WEFT_EINVAL;
    }
    weft_value *mean = weft_reduce(cx, WEFT_R_MEAN, x, axes, n_axes, keepdims);
    weft_value *var = weft_reduce(cx, WEFT_R_VAR, x, axes, n_axes, keepdims);
    if (!mean || !var)
        return weft_ctx_status(cx);
    outs[0] = mean;
    outs[1] = var;
    return 0;
}

/* The number of elements of x over axes[0..n_axes) (every axis for n 0),
 * as a scalar of x's dtype: the dims' product, from x's shape when the
 * function runs (a constant once folded, when the dims are known). */
static weft_value *count_over(weft_ctx *cx, weft_value *x, const int *axes, size_t n_axes)
{
    weft_value *dims = weft_shape(cx, x);
    if (n_axes > 0) {
        int rank = spec_of(x)->rank;
        int64_t picked[WEFT_MAX_RANK];
        for (size_t i = 0; i < n_axes && i < WEFT_MAX_RANK; i++)
            picked[i] = axes[i] < 0 ? axes[i] + rank : axes[i];
        int64_t n = (int64_t)n_axes;
        weft_value *at = weft__ops_constant(cx, "weft_sufficient_statistics", WEFT_I64, 1, &n,
                                            picked, WEFT_I64);
        dims = weft_gather(cx, dims, at, 0);
    }
    return weft_cast(cx, weft_reduce(cx, WEFT_R_PROD, dims, NULL, 0, false),
                     spec_of(x)->dtype);
}

int weft_sufficient_statistics(weft_ctx *cx, weft_value *x, const int *axes, size_t n_axes,
                               weft_value *shift, bool keepdims, weft_value **outs)
{
    WEFT__SCOPE_OUTS(cx, outs, 3);
    static const char fn[] = "weft_sufficient_statistics";
    static const char *const names[] = { "x", "shift" };
    weft_value *in[2] = { x, shift };
    int rc = weft__ctx_enter_int(cx, fn, in, shift ? 2 : 1, outs, 3);
    if (rc != 0)
        return rc;
    int rank = spec_of(x)->rank;
    if (n_axes > 0 && !axes)
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: NULL axes for a non-zero n_axes", fn);
    else if (weft__ops_floats_alike(cx, fn, in, names, 2) &&
             (rank == WEFT_RANK_ANY || n_axes > (size_t)rank))
        weft__ctx_fail(cx, WEFT_ESHAPE, "%s: x's rank is unknown while tracing or below %zu "
                       "axes", fn, n_axes);
    for (size_t i = 0; weft_ctx_status(cx) == 0 && i < n_axes; i++)
        if (axes[i] < -rank || axes[i] >= rank)
            weft__ctx_fail(cx, WEFT_EINVAL, "%s: axis %d is out of range for rank %d", fn,
                           axes[i], rank);
    if (weft_ctx_status(cx) != 0)
        return weft_ctx_status(cx);
    /* TensorFlow's steps: the count, then the sums of x - shift and of its
     * square (of x and x^2 without a shift). */
    weft_value *count = count_over(cx, x, axes, n_axes);
    weft_value *m = shift ? weft__op_binary(cx, WEFT__OP_SUB, fn, x, shift) : x;
    weft_value *v = shift ? weft_squared_difference(cx, x, shift)
                          : weft__op_unary(cx, WEFT__OP_SQUARE, fn, x);
    weft_value *m_ss = weft_reduce(cx, WEFT_R_SUM, m, axes, n_axes, keepdims);
    weft_value *v_ss = weft_reduce(cx, WEFT_R_SUM, v, axes, n_axes, keepdims);
    if (weft_ctx_status(cx) == 0) {
        outs[0] = count;
        outs[1] = m_ss;
        outs[2] = v_ss;
    }
    return weft_ctx_status(cx);
}

int weft_normalize_moments(weft_ctx *cx, weft_value *counts, weft_value *mean_ss,
                           weft_value *variance_ss, weft_value *shift, weft_value **outs)
{
    WEFT__SCOPE_OUTS(cx, outs, 2);
    static const char fn[] = "weft_normalize_moments";
    static const char *const names[] = { "counts", "mean_ss", "variance_ss", "shift" };
    weft_value *in[4] = { counts, mean_ss, variance_ss, shift };
    size_t n_in = shift ? 4 : 3;
    int rc = weft__ctx_enter_int(cx, fn, in, n_in, outs, 2);
    if (rc != 0)
        return rc;
    if (!weft__ops_floats_alike(cx, fn, in, names, n_in))
        return weft_ctx_status(cx);
    /* TensorFlow's steps: mean_ss / counts (+ shift), and variance_ss /
     * counts less the square of the shifted mean. */
    weft_value *divisor = weft_reciprocal(cx, counts);
    weft_value *shifted_mean = weft__op_binary(cx, WEFT__OP_MUL, fn, mean_ss, divisor);
    weft_value *mean = shift ? weft__op_binary(cx, WEFT__OP_ADD, fn, shifted_mean, shift)
                             : shifted_mean;
    weft_value *variance = weft__op_binary(
        cx, WEFT__OP_SUB, fn, weft__op_binary(cx, WEFT__OP_MUL, fn, variance_ss, divisor),
        weft__op_unary(cx, WEFT__OP_SQUARE, fn, shifted_mean));
    if (weft_ctx_status(cx) == 0) {
        outs[0] = mean;
        outs[1] = variance;
    }
    return weft_ctx_status(cx);
}

/* tf.nn.weighted_moments: TensorFlow's steps (sums kept as 1s, div_no_nan,
 * the kept axes squeezed at the end when keepdims is false). */
int weft_weighted_moments(weft_ctx *cx, weft_value *x, const int *axes, size_t n_axes,
                          weft_value *frequency_weights, bool keepdims, weft_value **outs)
{
    WEFT__SCOPE_OUTS(cx, outs, 2);
    static const char fn[] = "weft_weighted_moments";
    static const char *const names[] = { "x", "frequency_weights" };
    weft_value *in[2] = { x, frequency_weights };
    int rc = weft__ctx_enter_int(cx, fn, in, 2, outs, 2);
    if (rc != 0)
        return rc;
    if (!weft__ops_floats_alike(cx, fn, in, names, 2))
        return weft_ctx_status(cx);
    if (n_axes > 0 && !axes) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: NULL axes for %zu axes", fn, n_axes);
        return WEFT_EINVAL;
    }
    weft_value *w = frequency_weights;
    weft_value *weighted_sum = weft_reduce(cx, WEFT_R_SUM, weft_mul(cx, w, x), axes, n_axes, true);
    weft_value *weight_sum =
        weft_reduce(cx, WEFT_R_SUM, weft_add(cx, w, weft_zeros_like(cx, x)), axes, n_axes, true);
    weft_value *mean = weft_divide_no_nan(cx, weighted_sum, weight_sum);
    weft_value *dist = weft_reduce(cx, WEFT_R_SUM,
                                   weft_mul(cx, w, weft_squared_difference(cx, x, mean)), axes,
                                   n_axes, true);
    weft_value *var = weft_divide_no_nan(cx, dist, weight_sum);
    if (!keepdims) {
        /* The sums over every axis (n_axes 0) or the given ones, as 1s,
         * reduced away: a max over those 1s changes no value. */
        mean = weft_reduce(cx, WEFT_R_MAX, mean, axes, n_axes, false);
        var = weft_reduce(cx, WEFT_R_MAX, var, axes, n_axes, false);
    }
    if (!mean || !var)
        return weft_ctx_status(cx);
    outs[0] = mean;
    outs[1] = var;
    return 0;
}

weft_value *weft_batch_normalization(weft_ctx *cx, weft_value *x, weft_value *mean,
                                     weft_value *variance, weft_value *offset, weft_value *scale,
                                     double epsilon)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_batch_normalization";
    static const char *const all_names[] = { "x", "mean", "variance", "offset", "scale" };
    weft_value *given[5] = { x, mean, variance, offset, scale };
    weft_value *in[5];
    const char *names[5];
    size_t n = 0;
    for (size_t i = 0; i < 5; i++)
        if (i < 3 || given[i]) {   /* offset and scale may be left out */
            in[n] = given[i];
            names[n++] = all_names[i];
        }
    if (!weft__op_enter(cx, fn, in, n) || !weft__ops_floats_alike(cx, fn, in, names, n) ||
        !epsilon_ok(cx, fn, epsilon))
        return NULL;
    weft_value *inv = weft__op_unary(cx, WEFT__OP_RSQRT, fn,
                                     weft__op_binary(cx, WEFT__OP_ADD, fn, variance,
                                                     weft_const_f64(cx, epsilon)));
    if (scale)
        inv = weft__op_binary(cx, WEFT__OP_MUL, fn, inv, scale);
    weft_value *shift = weft__op_binary(cx, WEFT__OP_MUL, fn, mean, inv);
    shift = offset ? weft__op_binary(cx, WEFT__OP_SUB, fn, offset, shift)
                   : weft__op_unary(cx, WEFT__OP_NEG, fn, shift);
    return WEFT__KEEP(weft__op_binary(cx, WEFT__OP_ADD, fn,
                                      weft__op_binary(cx, WEFT__OP_MUL, fn, x, inv), shift));
}

weft_value *weft_bias_add(weft_ctx *cx, weft_value *value, weft_value *bias)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_bias_add";
    weft_value *in[2] = { value, bias };
    if (!weft__op_enter(cx, fn, in, 2))
        return NULL;
    const weft_spec *vs = spec_of(value), *bs = spec_of(bias);
    char sv[WEFT__SPEC_STR_MAX], sb[WEFT__SPEC_STR_MAX];
    if (vs->dtype != bs->dtype || vs->dtype == WEFT_BOOL)
        return weft__ctx_fail(cx, WEFT_EDTYPE, "%s: value %s and bias %s are not numbers of one "
                              "dtype", fn, weft__spec_str(vs, sv, sizeof sv),
                              weft__spec_str(bs, sb, sizeof sb));
    bool ok = bs->rank == 1 && (vs->rank == WEFT_RANK_ANY || vs->rank >= 1);
    if (ok && vs->rank >= 1) {
        int64_t c = vs->dims[vs->rank - 1], b = bs->dims[0];
        ok = c == WEFT_DIM_ANY || b == WEFT_DIM_ANY || c == b;
    }
    if (!ok)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: bias %s is not a vector of the last dim of "
                              "value %s", fn, weft__spec_str(bs, sb, sizeof sb),
                              weft__spec_str(vs, sv, sizeof sv));
    return WEFT__KEEP(weft__op_binary(cx, WEFT__OP_ADD, fn, value, bias));
}
