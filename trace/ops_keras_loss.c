/* Keras's per-sample losses (tf.keras.losses' functions) of
 * include/weft/ops.h: the mean squared, absolute, absolute percentage
 * and squared logarithmic errors, huber, log_cosh, hinge, squared_hinge,
 * categorical_hinge, kl_divergence, poisson, cosine_similarity, the
 * three crossentropies on probabilities or logits and the two focal ones.  Each reduces the last
 * axis as Keras does (a loss per sample, [...]), with Keras's formulas
 * and its epsilon 1e-7, and is a composition of elementwise steps
 * recorded with the public op's name (they fuse) and one reduction. */
#include <math.h>

#include "runtime/iface.h"
#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/shape.h"

/* Keras's backend.epsilon(). */
#define KERAS_EPSILON 1e-7

/* y_pred f32 or f64 of a known rank >= 1; y_true (any dtype) cast to
 * y_pred's, into *t.  False when the context failed, naming fn. */
static bool take_pair(weft_ctx *cx, const char *fn, weft_value *y_true, weft_value *y_pred,
                      weft_value **t)
{
    static const char *const names[] = { "y_pred" };
    weft_value *in[2] = { y_true, y_pred };
    if (!weft__op_enter(cx, fn, in, 2) || !weft__ops_floats_alike(cx, fn, &in[1], names, 1))
        return false;
    const weft_spec *s = weft__value_spec(y_pred);
    char ss[WEFT__SPEC_STR_MAX];
    if (s->rank == WEFT_RANK_ANY || s->rank < 1) {
        weft__ctx_fail(cx, WEFT_ESHAPE, "%s: y_pred %s has no last axis (a known rank >= 1)",
                       fn, weft__spec_str(s, ss, sizeof ss));
        return false;
    }
    *t = weft_cast(cx, y_true, s->dtype);
    return *t != NULL;
}

static weft_value *k(const weft__steps *o, double v)
{
    return weft_const_f64(o->cx, v);
}

/* The elementwise steps, named for the formulas they spell. */
#define STEP2(name, OP)                                                                  \
    static weft_value *name(const weft__steps *o, weft_value *a, weft_value *b)         \
    {                                                                                   \
        return weft__step2(o, WEFT__OP_##OP, a, b);                                     \
    }
#define STEP1(name, OP)                                                                  \
    static weft_value *name(const weft__steps *o, weft_value *a)                        \
    {                                                                                   \
        return weft__step1(o, WEFT__OP_##OP, a);                                        \
    }
STEP2(add, ADD)
STEP2(sub, SUB)
STEP2(mul, MUL)
STEP2(quot, DIV)
STEP2(larger, MAXIMUM)
STEP2(smaller, MINIMUM)
STEP1(ln, LOG)
STEP1(magnitude, ABS)
STEP1(negate, NEG)

static weft_value *last_axis(const weft__steps *o, weft_reduction r, weft_value *x)
{
    static const int last = -1;
    return weft_reduce(o->cx, r, x, &last, 1, false);
}

/* min(max(x, lo), hi), Keras's clip. */
static weft_value *clip(const weft__steps *o, weft_value *x, double lo, double hi)
{
    return smaller(o, larger(o, x, k(o, lo)), k(o, hi));
}

/* ---- Regression errors ------------------------------------------------------ */

weft_value *weft_mean_squared_error(weft_ctx *cx, weft_value *y_true, weft_value *y_pred)
{
    WEFT__SCOPE(cx);
    const weft__steps o = { cx, "weft_mean_squared_error" };
    weft_value *t;
    if (!take_pair(cx, o.fn, y_true, y_pred, &t))
        return NULL;
    weft_value *d = sub(&o, y_pred, t);
    return WEFT__KEEP(last_axis(&o, WEFT_R_MEAN, mul(&o, d, d)));
}

weft_value *weft_mean_absolute_error(weft_ctx *cx, weft_value *y_true, weft_value *y_pred)
{
    WEFT__SCOPE(cx);
    const weft__steps o = { cx, "weft_mean_absolute_error" };
    weft_value *t;
    if (!take_pair(cx, o.fn, y_true, y_pred, &t))
        return NULL;
    weft_value *d = sub(&o, y_pred, t);
    return WEFT__KEEP(last_axis(&o, WEFT_R_MEAN, magnitude(&o, d)));
}

/* 100 mean(|(t - p) / max(|t|, eps)|). */
weft_value *weft_mean_absolute_percentage_error(weft_ctx *cx, weft_value *y_true,
                                                weft_value *y_pred)
{
    WEFT__SCOPE(cx);
    const weft__steps o = { cx, "weft_mean_absolute_percentage_error" };
    weft_value *t;
    if (!take_pair(cx, o.fn, y_true, y_pred, &t))
        return NULL;
    weft_value *scale = larger(&o, magnitude(&o, t), k(&o, KERAS_EPSILON));
    weft_value *ratio = quot(&o, sub(&o, t, y_pred), scale);
    weft_value *mean = last_axis(&o, WEFT_R_MEAN, magnitude(&o, ratio));
    return WEFT__KEEP(mul(&o, k(&o, 100), mean));
}

/* mean((log(max(p, eps) + 1) - log(max(t, eps) + 1))^2). */
weft_value *weft_mean_squared_logarithmic_error(weft_ctx *cx, weft_value *y_true,
                                                weft_value *y_pred)
{
    WEFT__SCOPE(cx);
    const weft__steps o = { cx, "weft_mean_squared_logarithmic_error" };
    weft_value *t;
    if (!take_pair(cx, o.fn, y_true, y_pred, &t))
        return NULL;
    weft_value *logs[2], *v[2] = { y_pred, t };
    for (int i = 0; i < 2; i++)
        logs[i] = ln(&o, add(&o, larger(&o, v[i], k(&o, KERAS_EPSILON)), k(&o, 1)));
    weft_value *d = sub(&o, logs[0], logs[1]);
    return WEFT__KEEP(last_axis(&o, WEFT_R_MEAN, mul(&o, d, d)));
}

/* mean(0.5 e^2 where |e| <= delta, else delta |e| - 0.5 delta^2), e = p - t. */
weft_value *weft_huber_loss(weft_ctx *cx, weft_value *y_true, weft_value *y_pred, double delta)
{
    WEFT__SCOPE(cx);
    const weft__steps o = { cx, "weft_huber_loss" };
    weft_value *t;
    if (!take_pair(cx, o.fn, y_true, y_pred, &t))
        return NULL;
    if (!(delta >= 0) || !isfinite(delta))
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: delta %g is not finite and >= 0", o.fn, delta);
    weft_value *e = sub(&o, y_pred, t);
    weft_value *abs_e = magnitude(&o, e);
    weft_value *quadratic = mul(&o, k(&o, 0.5), mul(&o, e, e));
    weft_value *linear = sub(&o, mul(&o, k(&o, delta), abs_e), k(&o, 0.5 * delta * delta));
    weft_value *near = weft__step2(&o, WEFT__OP_LE, abs_e, k(&o, delta));
    return WEFT__KEEP(last_axis(&o, WEFT_R_MEAN, weft_where(cx, near, quadratic, linear)));
}

/* mean(x + softplus(-2 x) - log 2), x = p - t: log(cosh(x)) without
 * overflow. */
weft_value *weft_log_cosh_loss(weft_ctx *cx, weft_value *y_true, weft_value *y_pred)
{
    WEFT__SCOPE(cx);
    const weft__steps o = { cx, "weft_log_cosh_loss" };
    weft_value *t;
    if (!take_pair(cx, o.fn, y_true, y_pred, &t))
        return NULL;
    weft_value *x = sub(&o, y_pred, t);
    weft_value *soft = weft_softplus(cx, mul(&o, k(&o, -2), x));
    weft_value *v = sub(&o, add(&o, x, soft), k(&o, log(2.0)));
    return WEFT__KEEP(last_axis(&o, WEFT_R_MEAN, v));
}

/* ---- Hinges ----------------------------------------------------------------- */

/* Keras's _maybe_convert_labels: labels that are all 0 or 1 become -1
 * and 1 (decided over the whole tensor when the call runs). */
static weft_value *signed_labels(const weft__steps *o, weft_value *t)
{
    weft_value *binary = weft_logical_or(o->cx, weft__step2(o, WEFT__OP_EQ, t, k(o, 0)),
                                         weft__step2(o, WEFT__OP_EQ, t, k(o, 1)));
    weft_value *all = weft_reduce(o->cx, WEFT_R_ALL, binary, NULL, 0, false);
    weft_value *converted = sub(o, mul(o, k(o, 2), t), k(o, 1));
    return weft_where(o->cx, all, converted, t);
}

/* max(1 - t p, 0), t's 0/1 labels turned into -1/1, squared or not. */
static weft_value *hinge(weft_ctx *cx, const char *fn, weft_value *y_true, weft_value *y_pred,
                         bool squared)
{
    const weft__steps o = { cx, fn };
    weft_value *t;
    if (!take_pair(cx, fn, y_true, y_pred, &t))
        return NULL;
    weft_value *margin = sub(&o, k(&o, 1), mul(&o, signed_labels(&o, t), y_pred));
    weft_value *v = larger(&o, margin, k(&o, 0));
    if (squared)
        v = mul(&o, v, v);
    return last_axis(&o, WEFT_R_MEAN, v);
}

weft_value *weft_hinge_loss(weft_ctx *cx, weft_value *y_true, weft_value *y_pred)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(hinge(cx, "weft_hinge_loss", y_true, y_pred, false));
}

weft_value *weft_squared_hinge_loss(weft_ctx *cx, weft_value *y_true, weft_value *y_pred)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(hinge(cx, "weft_squared_hinge_loss", y_true, y_pred, true));
}

/* max(max((1 - t) p) - sum(t p) + 1, 0). */
weft_value *weft_categorical_hinge_loss(weft_ctx *cx, weft_value *y_true, weft_value *y_pred)
{
    WEFT__SCOPE(cx);
    const weft__steps o = { cx, "weft_categorical_hinge_loss" };
    weft_value *t;
    if (!take_pair(cx, o.fn, y_true, y_pred, &t))
        return NULL;
    weft_value *pos = last_axis(&o, WEFT_R_SUM, mul(&o, t, y_pred));
    weft_value *others = mul(&o, sub(&o, k(&o, 1), t), y_pred);
    weft_value *neg = last_axis(&o, WEFT_R_MAX, others);
    weft_value *margin = add(&o, sub(&o, neg, pos), k(&o, 1));
    return WEFT__KEEP(larger(&o, margin, k(&o, 0)));
}

/* ---- Distributions ----------------------------------------------------------- */

/* sum(t log(t / p)), both clipped to [eps, 1]. */
weft_value *weft_kl_divergence(weft_ctx *cx, weft_value *y_true, weft_value *y_pred)
{
    WEFT__SCOPE(cx);
    const weft__steps o = { cx, "weft_kl_divergence" };
    weft_value *t;
    if (!take_pair(cx, o.fn, y_true, y_pred, &t))
        return NULL;
    weft_value *tc = clip(&o, t, KERAS_EPSILON, 1), *pc = clip(&o, y_pred, KERAS_EPSILON, 1);
    weft_value *v = mul(&o, tc, ln(&o, quot(&o, tc, pc)));
    return WEFT__KEEP(last_axis(&o, WEFT_R_SUM, v));
}

/* mean(p - t log(p + eps)). */
weft_value *weft_poisson_loss(weft_ctx *cx, weft_value *y_true, weft_value *y_pred)
{
    WEFT__SCOPE(cx);
    const weft__steps o = { cx, "weft_poisson_loss" };
    weft_value *t;
    if (!take_pair(cx, o.fn, y_true, y_pred, &t))
        return NULL;
    weft_value *log_p =
        ln(&o, add(&o, y_pred, k(&o, KERAS_EPSILON)));
    weft_value *v = sub(&o, y_pred, mul(&o, t, log_p));
    return WEFT__KEEP(last_axis(&o, WEFT_R_MEAN, v));
}

/* -sum(l2_normalize(t) l2_normalize(p)) along the last axis (epsilon
 * 1e-12, tf.nn.l2_normalize's). */
weft_value *weft_cosine_similarity_loss(weft_ctx *cx, weft_value *y_true, weft_value *y_pred)
{
    WEFT__SCOPE(cx);
    const weft__steps o = { cx, "weft_cosine_similarity_loss" };
    weft_value *t;
    if (!take_pair(cx, o.fn, y_true, y_pred, &t))
        return NULL;
    static const int last = -1;
    weft_value *tn = weft_l2_normalize(cx, t, &last, 1, 1e-12);
    weft_value *pn = weft_l2_normalize(cx, y_pred, &last, 1, 1e-12);
    return WEFT__KEEP(negate(&o, last_axis(&o, WEFT_R_SUM, mul(&o, tn, pn))));
}

/* ---- Crossentropies ------------------------------------------------------------ */

static bool smoothing_ok(weft_ctx *cx, const char *fn, double label_smoothing)
{
    if (label_smoothing >= 0 && label_smoothing <= 1)
        return true;
    weft__ctx_fail(cx, WEFT_EINVAL, "%s: label_smoothing %g is not in [0, 1]", fn,
                   label_smoothing);
    return false;
}

/* t (1 - s) + s / classes. */
static weft_value *smooth(const weft__steps *o, weft_value *t, double s, double classes)
{
    if (s == 0)
        return t;
    return add(o, mul(o, t, k(o, 1 - s)), k(o, s / classes));
}

/* The binary crossentropy of each element.  Logits:
 * tf.nn.sigmoid_cross_entropy_with_logits.  Probabilities, Keras's: p
 * clipped to [eps, 1 - eps], -(t log(p + eps) + (1 - t) log(1 - p + eps)). */
static weft_value *binary_ce(const weft__steps *o, weft_value *t, weft_value *y_pred,
                             bool from_logits)
{
    if (from_logits)
        return weft_sigmoid_cross_entropy_with_logits(o->cx, t, y_pred);
    weft_value *p = clip(o, y_pred, KERAS_EPSILON, 1 - KERAS_EPSILON);
    weft_value *log_p = ln(o, add(o, p, k(o, KERAS_EPSILON)));
    weft_value *log_q = ln(o, add(o, sub(o, k(o, 1), p), k(o, KERAS_EPSILON)));
    return negate(o, add(o, mul(o, t, log_p), mul(o, sub(o, k(o, 1), t), log_q)));
}

/* The mean over the last axis of the elements' binary crossentropies. */
weft_value *weft_binary_crossentropy(weft_ctx *cx, weft_value *y_true, weft_value *y_pred,
                                     bool from_logits, double label_smoothing)
{
    WEFT__SCOPE(cx);
    const weft__steps o = { cx, "weft_binary_crossentropy" };
    weft_value *t;
    if (!take_pair(cx, o.fn, y_true, y_pred, &t) || !smoothing_ok(cx, o.fn, label_smoothing))
        return NULL;
    t = smooth(&o, t, label_smoothing, 2);
    return WEFT__KEEP(last_axis(&o, WEFT_R_MEAN, binary_ce(&o, t, y_pred, from_logits)));
}

/* The classes: y_pred's last dim, known while tracing. */
static bool classes_known(weft_ctx *cx, const char *fn, weft_value *y_pred, int64_t *classes)
{
    const weft_spec *s = weft__value_spec(y_pred);
    *classes = s->dims[s->rank - 1];
    if (*classes >= 0)
        return true;
    char ss[WEFT__SPEC_STR_MAX];
    weft__ctx_fail(cx, WEFT_ESHAPE, "%s: y_pred %s has no last dim (classes) known while tracing",
                   fn, weft__spec_str(s, ss, sizeof ss));
    return false;
}

/* Keras's reading of predictions as probabilities: p over its sum along
 * the last axis, clipped to [eps, 1 - eps]. */
static weft_value *as_probabilities(const weft__steps *o, weft_value *p)
{
    static const int last = -1;
    weft_value *total = weft_reduce(o->cx, WEFT_R_SUM, p, &last, 1, true);
    return clip(o, quot(o, p, total), KERAS_EPSILON, 1 - KERAS_EPSILON);
}

/* Logits: tf.nn.softmax_cross_entropy_with_logits.  Probabilities,
 * Keras's: p over its sum, clipped to [eps, 1 - eps], -sum(t log p). */
weft_value *weft_categorical_crossentropy(weft_ctx *cx, weft_value *y_true, weft_value *y_pred,
                                          bool from_logits, double label_smoothing)
{
    WEFT__SCOPE(cx);
    const weft__steps o = { cx, "weft_categorical_crossentropy" };
    weft_value *t;
    int64_t classes;
    if (!take_pair(cx, o.fn, y_true, y_pred, &t) || !smoothing_ok(cx, o.fn, label_smoothing) ||
        !classes_known(cx, o.fn, y_pred, &classes))
        return NULL;
    t = smooth(&o, t, label_smoothing, (double)classes);
    if (from_logits)
        return WEFT__KEEP(weft_softmax_cross_entropy_with_logits(cx, t, y_pred, -1));
    weft_value *v = mul(&o, t, ln(&o, as_probabilities(&o, y_pred)));
    return WEFT__KEEP(negate(&o, last_axis(&o, WEFT_R_SUM, v)));
}

/* Logits: tf.nn.sparse_softmax_cross_entropy_with_logits.  Probabilities,
 * Keras's: the same on log(p clipped to [eps, 1 - eps]), which
 * renormalizes p. */
weft_value *weft_sparse_categorical_crossentropy(weft_ctx *cx, weft_value *y_true,
                                                 weft_value *y_pred, bool from_logits)
{
    WEFT__SCOPE(cx);
    const weft__steps o = { cx, "weft_sparse_categorical_crossentropy" };
    weft_value *in[2] = { y_true, y_pred };
    if (!weft__op_enter(cx, o.fn, in, 2))
        return NULL;
    const weft_spec *ls = weft__value_spec(y_true), *ps = weft__value_spec(y_pred);
    char sl[WEFT__SPEC_STR_MAX], sp[WEFT__SPEC_STR_MAX];
    if (ls->dtype != WEFT_I32 && ls->dtype != WEFT_I64)
        return weft__ctx_fail(cx, WEFT_EDTYPE, "%s: y_true %s is not i32 or i64 (class indices)",
                              o.fn, weft__spec_str(ls, sl, sizeof sl));
    static const char *const names[] = { "y_pred" };
    if (!weft__ops_floats_alike(cx, o.fn, &in[1], names, 1))
        return NULL;
    bool fits = ps->rank != WEFT_RANK_ANY && ls->rank != WEFT_RANK_ANY &&
                ps->rank == ls->rank + 1 && ps->dims[ps->rank - 1] >= 0;
    for (int d = 0; fits && d < ls->rank; d++)
        fits = ls->dims[d] < 0 || ps->dims[d] < 0 || ls->dims[d] == ps->dims[d];
    if (!fits)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: y_true %s and y_pred %s are not [...] and "
                              "[..., classes] (classes known while tracing)", o.fn,
                              weft__spec_str(ls, sl, sizeof sl), weft__spec_str(ps, sp, sizeof sp));
    weft_value *logits = y_pred;
    if (!from_logits)
        logits = ln(&o, clip(&o, y_pred, KERAS_EPSILON, 1 - KERAS_EPSILON));
    return WEFT__KEEP(weft_sparse_softmax_cross_entropy_with_logits(cx, y_true, logits));
}

/* ---- Focal crossentropies ---------------------------------------------------- */

/* alpha finite and gamma finite and >= 0; else the context fails. */
static bool focal_ok(weft_ctx *cx, const char *fn, double alpha, double gamma)
{
    if (isfinite(alpha) && isfinite(gamma) && gamma >= 0)
        return true;
    weft__ctx_fail(cx, WEFT_EINVAL, "%s: alpha %g or gamma %g is not finite, or gamma is "
                   "negative", fn, alpha, gamma);
    return false;
}

/* Keras's (tf.keras.backend.binary_focal_crossentropy): the elements'
 * crossentropies times (1 - p_t)^gamma, p_t the probability given to the
 * true label, and with class balancing times t alpha + (1 - t) (1 -
 * alpha); the mean over the last axis. */
weft_value *weft_binary_focal_crossentropy(weft_ctx *cx, weft_value *y_true, weft_value *y_pred,
                                           bool apply_class_balancing, double alpha,
                                           double gamma, bool from_logits,
                                           double label_smoothing)
{
    WEFT__SCOPE(cx);
    const weft__steps o = { cx, "weft_binary_focal_crossentropy" };
    weft_value *t;
    if (!take_pair(cx, o.fn, y_true, y_pred, &t) || !smoothing_ok(cx, o.fn, label_smoothing) ||
        !focal_ok(cx, o.fn, alpha, gamma))
        return NULL;
    t = smooth(&o, t, label_smoothing, 2);
    weft_value *p = from_logits ? weft__step1(&o, WEFT__OP_SIGMOID, y_pred) : y_pred;
    weft_value *not_t = sub(&o, k(&o, 1), t);
    weft_value *p_t = add(&o, mul(&o, t, p), mul(&o, not_t, sub(&o, k(&o, 1), p)));
    weft_value *factor = weft__step2(&o, WEFT__OP_POW, sub(&o, k(&o, 1), p_t), k(&o, gamma));
    weft_value *focal = mul(&o, factor, binary_ce(&o, t, y_pred, from_logits));
    if (apply_class_balancing) {
        weft_value *weight = add(&o, mul(&o, t, k(&o, alpha)), mul(&o, not_t, k(&o, 1 - alpha)));
        focal = mul(&o, weight, focal);
    }
    return WEFT__KEEP(last_axis(&o, WEFT_R_MEAN, focal));
}

/* Keras's (tf.keras.backend.categorical_focal_crossentropy): p (softmax
 * of logits) over its sum, clipped to [eps, 1 - eps]; the sum over the
 * last axis of alpha (1 - p)^gamma (-t log p). */
weft_value *weft_categorical_focal_crossentropy(weft_ctx *cx, weft_value *y_true,
                                                weft_value *y_pred, double alpha, double gamma,
                                                bool from_logits, double label_smoothing)
{
    WEFT__SCOPE(cx);
    const weft__steps o = { cx, "weft_categorical_focal_crossentropy" };
    weft_value *t;
    int64_t classes;
    if (!take_pair(cx, o.fn, y_true, y_pred, &t) || !smoothing_ok(cx, o.fn, label_smoothing) ||
        !focal_ok(cx, o.fn, alpha, gamma) || !classes_known(cx, o.fn, y_pred, &classes))
        return NULL;
    t = smooth(&o, t, label_smoothing, (double)classes);
    weft_value *p = as_probabilities(&o, from_logits ? weft_softmax(cx, y_pred, -1) : y_pred);
    weft_value *ce = mul(&o, negate(&o, t), ln(&o, p));
    weft_value *factor = weft__step2(&o, WEFT__OP_POW, sub(&o, k(&o, 1), p), k(&o, gamma));
    weft_value *focal = mul(&o, mul(&o, factor, k(&o, alpha)), ce);
    return WEFT__KEEP(last_axis(&o, WEFT_R_SUM, focal));
}
