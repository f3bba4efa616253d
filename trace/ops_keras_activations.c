/* Keras 3's activations beyond tf.nn's (keras.activations: relu with its
 * parameters, celu, glu, hard_tanh, hard_shrink, soft_shrink, tanh_shrink,
 * squareplus, sparse_plus, sparsemax), each a composition in Keras's formula on f32
 * or f64, so gradients come from the parts.  The ones without a parameter
 * run eagerly as one fused pass (trace/eager_fused.h). */
#include <math.h>

#include "trace/ctx.h"
#include "trace/eager_fused.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

/* x's checks: entered, f32 or f64. */
static bool float_input(weft_ctx *cx, const char *fn, weft_value *x)
{
    return weft__op_enter(cx, fn, &x, 1) &&
           weft__ops_float_rank(cx, fn, weft__value_spec(x), 0, false);
}

/* A parameter that must be finite and at least lo (or, with nonzero,
 * not 0); else the context fails naming it. */
static bool param_ok(weft_ctx *cx, const char *fn, const char *name, double v, double lo,
                     bool nonzero)
{
    if (isfinite(v) && v >= lo && !(nonzero && v == 0))
        return true;
    weft__ctx_fail(cx, WEFT_EINVAL, "%s: %s %g is not finite%s", fn, name, v,
                   nonzero ? " and nonzero" : lo > -INFINITY ? " and >= 0" : "");
    return false;
}

static weft_value *k(weft_ctx *cx, double v)
{
    return weft_const_f64(cx, v);
}

/* keras.activations.relu, branch for branch as Keras 3 writes it, so each
 * case is the op it names there: leaky_relu, relu6, relu, or x where x >
 * threshold, capped, less negative_slope relu(threshold - x). */
weft_value *weft_relu_ex(weft_ctx *cx, weft_value *x, double negative_slope, double max_value,
                         double threshold)
{
    WEFT__SCOPE(cx);
    const weft__steps s = { cx, "weft_relu_ex" };
    if (!float_input(cx, s.fn, x) ||
        !param_ok(cx, s.fn, "negative_slope", negative_slope, -INFINITY, false) ||
        !param_ok(cx, s.fn, "threshold", threshold, -INFINITY, false))
        return NULL;
    bool capped = max_value != INFINITY;
    if (capped && !param_ok(cx, s.fn, "max_value", max_value, 0, false))
        return NULL;
    if (negative_slope != 0 && !capped && threshold == 0)
        return WEFT__KEEP(weft_leaky_relu(cx, x, negative_slope));
    weft_value *negative_part = NULL;
    if (negative_slope != 0) {
        weft_value *flip = weft__step1(&s, WEFT__OP_NEG, x);
        if (threshold != 0)
            flip = weft__step2(&s, WEFT__OP_ADD, flip, k(cx, threshold));
        negative_part = weft__step1(&s, WEFT__OP_RELU, flip);
    }
    weft_value *y;
    if (threshold != 0) {
        weft_value *above = weft_cast(cx, weft__step2(&s, WEFT__OP_GT, x, k(cx, threshold)),
                                      weft__value_spec(x)->dtype);
        y = weft__step2(&s, WEFT__OP_MUL, x, above);
    } else if (max_value == 6) {
        y = weft_relu6(cx, x);
        capped = false;
    } else {
        y = weft__step1(&s, WEFT__OP_RELU, x);
    }
    if (capped)
        y = weft_clip(cx, y, k(cx, 0), k(cx, max_value));
    if (negative_slope != 0)
        y = weft__step2(&s, WEFT__OP_SUB, y,
                        weft__step2(&s, WEFT__OP_MUL, k(cx, negative_slope), negative_part));
    return WEFT__KEEP(y);
}

/* max(x, 0) + alpha expm1(min(x, 0) / alpha). */
weft_value *weft_celu(weft_ctx *cx, weft_value *x, double alpha)
{
    WEFT__SCOPE(cx);
    const weft__steps s = { cx, "weft_celu" };
    if (!float_input(cx, s.fn, x) || !param_ok(cx, s.fn, "alpha", alpha, -INFINITY, true))
        return NULL;
    weft_value *neg = weft__step2(&s, WEFT__OP_TRUEDIV,
                                  weft__step2(&s, WEFT__OP_MINIMUM, x, k(cx, 0)), k(cx, alpha));
    weft_value *tail = weft__step2(&s, WEFT__OP_MUL, k(cx, alpha),
                                   weft__step1(&s, WEFT__OP_EXPM1, neg));
    return WEFT__KEEP(weft__step2(&s, WEFT__OP_ADD, weft__step2(&s, WEFT__OP_MAXIMUM, x, k(cx, 0)),
                                  tail));
}

/* a * sigmoid(b), a and b the halves of x along axis. */
weft_value *weft_glu(weft_ctx *cx, weft_value *x, int axis)
{
    WEFT__SCOPE(cx);
    const weft__steps s = { cx, "weft_glu" };
    if (!float_input(cx, s.fn, x))
        return NULL;
    const weft_spec *sp = weft__value_spec(x);
    int ax = sp->rank != WEFT_RANK_ANY && axis < 0 ? axis + sp->rank : axis;
    if (sp->rank == WEFT_RANK_ANY || ax < 0 || ax >= sp->rank || sp->dims[ax] < 0 ||
        sp->dims[ax] % 2) {
        char str[WEFT__SPEC_STR_MAX];
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: axis %d of %s is not an even dim known while "
                              "tracing", s.fn, axis, weft__spec_str(sp, str, sizeof str));
    }
    weft_value *half[2];
    if (weft_split(cx, x, 2, NULL, axis, half) != 0)
        return NULL;
    return WEFT__KEEP(weft__step2(&s, WEFT__OP_MUL, half[0],
                                  weft__step1(&s, WEFT__OP_SIGMOID, half[1])));
}

static weft__fused_site hard_tanh_site =
    WEFT__FUSED_SITE("weft_hard_tanh", weft_hard_tanh, false);
static weft__fused_site tanh_shrink_site =
    WEFT__FUSED_SITE("weft_tanh_shrink", weft_tanh_shrink, false);
static weft__fused_site sparse_plus_site =
    WEFT__FUSED_SITE("weft_sparse_plus", weft_sparse_plus, false);

/* min(max(x, -1), 1). */
weft_value *weft_hard_tanh(weft_ctx *cx, weft_value *x)
{
    WEFT__SCOPE(cx);
    const weft__steps s = { cx, "weft_hard_tanh" };
    weft_value *y;
    if (!float_input(cx, s.fn, x))
        return NULL;
    if (weft__eager_fused(cx, &hard_tanh_site, x, &y))
        return WEFT__KEEP(y);
    weft_value *lo = weft__step2(&s, WEFT__OP_MAXIMUM, x, k(cx, -1));
    return WEFT__KEEP(weft__step2(&s, WEFT__OP_MINIMUM, lo, k(cx, 1)));
}

/* x where |x| > threshold, else 0. */
weft_value *weft_hard_shrink(weft_ctx *cx, weft_value *x, double threshold)
{
    WEFT__SCOPE(cx);
    const weft__steps s = { cx, "weft_hard_shrink" };
    if (!float_input(cx, s.fn, x) || !param_ok(cx, s.fn, "threshold", threshold, 0, false))
        return NULL;
    weft_value *keep = weft__step2(&s, WEFT__OP_GT, weft__step1(&s, WEFT__OP_ABS, x),
                                   k(cx, threshold));
    return WEFT__KEEP(weft_where(cx, keep, x, k(cx, 0)));
}

/* x - t above t, x + t below -t, else 0. */
weft_value *weft_soft_shrink(weft_ctx *cx, weft_value *x, double threshold)
{
    WEFT__SCOPE(cx);
    const weft__steps s = { cx, "weft_soft_shrink" };
    if (!float_input(cx, s.fn, x) || !param_ok(cx, s.fn, "threshold", threshold, 0, false))
        return NULL;
    weft_value *t = k(cx, threshold);
    weft_value *below = weft_where(cx, weft__step2(&s, WEFT__OP_LT, x, k(cx, -threshold)),
                                   weft__step2(&s, WEFT__OP_ADD, x, t), k(cx, 0));
    return WEFT__KEEP(weft_where(cx, weft__step2(&s, WEFT__OP_GT, x, t),
                                 weft__step2(&s, WEFT__OP_SUB, x, t), below));
}

/* x - tanh(x). */
weft_value *weft_tanh_shrink(weft_ctx *cx, weft_value *x)
{
    WEFT__SCOPE(cx);
    const weft__steps s = { cx, "weft_tanh_shrink" };
    weft_value *y;
    if (!float_input(cx, s.fn, x))
        return NULL;
    if (weft__eager_fused(cx, &tanh_shrink_site, x, &y))
        return WEFT__KEEP(y);
    return WEFT__KEEP(weft__step2(&s, WEFT__OP_SUB, x, weft__step1(&s, WEFT__OP_TANH, x)));
}

/* (x + sqrt(x^2 + b)) / 2. */
weft_value *weft_squareplus(weft_ctx *cx, weft_value *x, double b)
{
    WEFT__SCOPE(cx);
    const weft__steps s = { cx, "weft_squareplus" };
    if (!float_input(cx, s.fn, x) || !param_ok(cx, s.fn, "b", b, 0, false))
        return NULL;
    weft_value *sq = weft__step1(&s, WEFT__OP_SQUARE, x);
    weft_value *root = weft__step1(&s, WEFT__OP_SQRT, weft__step2(&s, WEFT__OP_ADD, sq, k(cx, b)));
    return WEFT__KEEP(weft__step2(&s, WEFT__OP_TRUEDIV, weft__step2(&s, WEFT__OP_ADD, x, root),
                                  k(cx, 2)));
}

/* 0 up to -1, (x + 1)^2 / 4 between, x from 1. */
weft_value *weft_sparse_plus(weft_ctx *cx, weft_value *x)
{
    WEFT__SCOPE(cx);
    const weft__steps s = { cx, "weft_sparse_plus" };
    weft_value *y;
    if (!float_input(cx, s.fn, x))
        return NULL;
    if (weft__eager_fused(cx, &sparse_plus_site, x, &y))
        return WEFT__KEEP(y);
    weft_value *bend = weft__step2(&s, WEFT__OP_MUL, k(cx, 0.25),
                                   weft__step1(&s, WEFT__OP_SQUARE,
                                               weft__step2(&s, WEFT__OP_ADD, x, k(cx, 1))));
    weft_value *upper = weft_where(cx, weft__step2(&s, WEFT__OP_LT, x, k(cx, 1)), bend, x);
    return WEFT__KEEP(weft_where(cx, weft__step2(&s, WEFT__OP_LE, x, k(cx, -1)), k(cx, 0), upper));
}

/* The Euclidean projection onto the simplex (Martins and Astudillo): z
 * sorted in descending order, its cumulative sums c, the support the
 * prefix where 1 + j z_j > c_j (j from 1), k its length, tau = (sum of
 * the support - 1) / k, and max(x - tau, 0).  The support's sum is read
 * as the sum of the sorted values it holds (Keras 3 takes the largest
 * cumulative sum there, which differs once a support value is negative). */
weft_value *weft_sparsemax(weft_ctx *cx, weft_value *x, int axis)
{
    WEFT__SCOPE(cx);
    const weft__steps s = { cx, "weft_sparsemax" };
    if (!float_input(cx, s.fn, x))
        return NULL;
    weft_value *z = weft_sort(cx, x, axis, true);
    weft_value *c = weft_cumsum(cx, z, axis);
    weft_value *j = weft_cumsum(cx, weft_ones_like(cx, z), axis);
    weft_value *jz = weft__step2(&s, WEFT__OP_MUL, j, z);
    weft_value *bound = weft__step2(&s, WEFT__OP_ADD, k(cx, 1), jz);
    weft_value *support = weft__step2(&s, WEFT__OP_GT, bound, c);
    weft_value *held = weft_where(cx, support, z, k(cx, 0));
    weft_value *count = weft_cast(cx, support, weft__value_spec(x)->dtype);
    weft_value *sum = weft_reduce(cx, WEFT_R_SUM, held, &axis, 1, true);
    weft_value *n = weft_reduce(cx, WEFT_R_SUM, count, &axis, 1, true);
    weft_value *excess = weft__step2(&s, WEFT__OP_SUB, sum, k(cx, 1));
    weft_value *tau = weft__step2(&s, WEFT__OP_TRUEDIV, excess, n);
    return WEFT__KEEP(weft__step2(&s, WEFT__OP_MAXIMUM, weft__step2(&s, WEFT__OP_SUB, x, tau),
                                  k(cx, 0)));
}
