/* Candidate sampling (tf.random.log_uniform_candidate_sampler,
 * uniform_candidate_sampler, fixed_unigram_candidate_sampler and
 * all_candidate_sampler) and the sampled losses built on the first
 * (tf.nn.nce_loss, tf.nn.sampled_softmax_loss): one CANDIDATES or
 * UNIGRAM_CANDIDATES node draws the classes (trace/kernel_candidates.c);
 * the expected counts and the losses are compositions of ops, TensorFlow's
 * _compute_sampled_logits, so the losses differentiate with respect to the
 * weights, the biases and the inputs. */
#include <float.h>
#include <math.h>

#include "base/base.h"
#include "trace/control.h"
#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/shape.h"

/* Each class of ids' (i64) probability, in f32 as TensorFlow: its entry
 * of probs (the unigram law's table; 0 outside the range, as TensorFlow's
 * FixedUnigramSampler), else 1 / range (uniform) or log((k + 2) / (k +
 * 1)) / log(range + 1). */
static weft_value *class_probability(weft_ctx *cx, weft_value *ids, int64_t range_max,
                                     bool uniform, weft_value *probs)
{
    if (probs) {
        weft_value *inside = weft_logical_and(cx, weft_ge(cx, ids, weft_const_i64(cx, 0)),
                                              weft_lt(cx, ids, weft_const_i64(cx, range_max)));
        weft_value *at = weft_where(cx, inside, ids, weft_const_i64(cx, 0));
        return weft_where(cx, inside, weft_gather(cx, probs, at, 0), weft_const(cx, WEFT_F32, 0));
    }
    if (uniform)
        return weft_fill_like(cx, weft_cast(cx, ids, WEFT_F32), 1.0 / (double)range_max);
    weft_value *k = weft_cast(cx, ids, WEFT_F64);
    weft_value *ratio = weft_div(cx, weft_add(cx, k, weft_const_f64(cx, 2)),
                                 weft_add(cx, k, weft_const_f64(cx, 1)));
    return weft_cast(cx, weft_div(cx, weft_log(cx, ratio),
                                  weft_const_f64(cx, log1p((double)range_max))),
                     WEFT_F32);
}

/* The expected count of each class of ids (i64) among num_sampled drawn in
 * tries draws, in f32 as TensorFlow: p num_sampled when there were no
 * repeats to skip, else 1 - (1 - p)^tries, p the class's probability. */
static weft_value *expected_count(weft_ctx *cx, weft_value *ids, const weft__node *n,
                                  weft_value *tries, weft_value *probs)
{
    int64_t num_sampled = n->attr.sampler.num_sampled;
    weft_value *p = class_probability(cx, ids, n->attr.sampler.range_max, n->attr.sampler.uniform,
                                      probs);
    weft_value *in_tries = weft_neg(
        cx, weft_expm1(cx, weft_mul(cx, weft_cast(cx, tries, WEFT_F32),
                                    weft_log1p(cx, weft_neg(cx, p)))));
    weft_value *no_repeat = weft_eq(cx, tries, weft_const_i64(cx, num_sampled));
    return weft_where(cx, no_repeat, weft_mul(cx, p, weft_const_f64(cx, (double)num_sampled)),
                      in_tries);
}

/* The sampler's checks, the context failing (naming fn) on a bad one. */
static bool sampler_args_ok(weft_ctx *cx, const char *fn, weft_value *true_classes,
                            int64_t num_true, int64_t num_sampled, bool unique,
                            int64_t range_max)
{
    if (num_true < 1 || num_sampled < 1 || range_max < 1 || (unique && num_sampled > range_max)) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: num_true %lld, num_sampled %lld or range_max %lld "
                       "is not 1 or more, or more unique classes are asked for than there are",
                       fn, (long long)num_true, (long long)num_sampled, (long long)range_max);
        return false;
    }
    const weft_spec *s = weft__value_spec(true_classes);
    char str[WEFT__SPEC_STR_MAX];
    if (s->dtype != WEFT_I32 && s->dtype != WEFT_I64) {
        weft__ctx_fail(cx, WEFT_EDTYPE, "%s: the true classes %s are not i32 or i64", fn,
                       weft__spec_str(s, str, sizeof str));
        return false;
    }
    if (s->rank != 2 || (s->dims[1] >= 0 && s->dims[1] != num_true)) {
        weft__ctx_fail(cx, WEFT_ESHAPE, "%s: the true classes %s are not [batch, %lld]", fn,
                       weft__spec_str(s, str, sizeof str), (long long)num_true);
        return false;
    }
    return true;
}

/* The three results of node n (its attr.sampler set; for the unigram law
 * table[0] the cumulative weights, its node's second input, and table[1]
 * the probabilities) into outs, or the context failed. */
static void draw_candidates(weft_ctx *cx, weft__node *n, weft_value *true_classes,
                            weft_value *seed, weft_value *const *table, weft_value **outs)
{
    int64_t num_sampled = n->attr.sampler.num_sampled;
    weft_value *in[2] = { seed, table ? table[0] : NULL }, *probs = table ? table[1] : NULL;
    weft_value *drawn = weft__ops_finish(cx, n, in, table ? 2 : 1);
    if (!drawn)
        return;
    weft_value *sampled = weft__ops_axis_slice(cx, drawn, 0, 0, num_sampled);
    weft_value *tries = weft_squeeze(cx, weft__ops_axis_slice(cx, drawn, 0, num_sampled, WEFT_END),
                                     0);
    weft_value *true_count =
        expected_count(cx, weft_cast(cx, true_classes, WEFT_I64), n, tries, probs);
    weft_value *sampled_count = expected_count(cx, sampled, n, tries, probs);
    if (weft_ctx_status(cx) == 0) {
        outs[0] = sampled;
        outs[1] = true_count;
        outs[2] = sampled_count;
    }
}

static weft__node sampler_node(int64_t num_sampled, bool unique, int64_t range_max,
                               bool uniform)
{
    weft__node n = { .op = WEFT__OP_CANDIDATES };
    n.attr.sampler.num_sampled = num_sampled;
    n.attr.sampler.range_max = range_max;
    n.attr.sampler.unique = unique;
    n.attr.sampler.uniform = uniform;
    return n;
}

static int candidate_sampler(weft_ctx *cx, const char *fn, bool uniform,
                             weft_value *true_classes, int64_t num_true, int64_t num_sampled,
                             bool unique, int64_t range_max, weft_value *seed, weft_value **outs)
{
    weft_value *in[2] = { true_classes, seed };
    int rc = weft__ctx_enter_int(cx, fn, in, 2, outs, 3);
    if (rc != 0)
        return rc;
    if (sampler_args_ok(cx, fn, true_classes, num_true, num_sampled, unique, range_max)) {
        weft__node n = sampler_node(num_sampled, unique, range_max, uniform);
        draw_candidates(cx, &n, true_classes, seed, NULL, outs);
    }
    return weft_ctx_status(cx);
}

int weft_log_uniform_candidate_sampler(weft_ctx *cx, weft_value *true_classes, int64_t num_true,
                                       int64_t num_sampled, bool unique, int64_t range_max,
                                       weft_value *seed, weft_value **outs)
{
    WEFT__SCOPE_OUTS(cx, outs, 3);
    return candidate_sampler(cx, "weft_log_uniform_candidate_sampler", false, true_classes,
                             num_true, num_sampled, unique, range_max, seed, outs);
}

int weft_uniform_candidate_sampler(weft_ctx *cx, weft_value *true_classes, int64_t num_true,
                                   int64_t num_sampled, bool unique, int64_t range_max,
                                   weft_value *seed, weft_value **outs)
{
    WEFT__SCOPE_OUTS(cx, outs, 3);
    return candidate_sampler(cx, "weft_uniform_candidate_sampler", true, true_classes, num_true,
                             num_sampled, unique, range_max, seed, outs);
}

/* The unigram law's weights: num_reserved zeros, then each unigram
 * rounded to f32 (TensorFlow's attribute) to the power distortion in f32;
 * every weight finite, some positive, and for unique draws at least
 * num_sampled positive.  Their cumulative sums (f64) into table[0] and
 * each weight's share of the total (f32) into table[1], as constants, or
 * the context failed. */
static void unigram_table(weft_ctx *cx, const char *fn, int64_t range, int64_t num_reserved,
                          const double *unigrams, double distortion, bool unique,
                          int64_t num_sampled, weft_value **table)
{
    double *cum = weft__malloc((size_t)range * sizeof *cum);
    float *share = weft__malloc((size_t)range * sizeof *share);
    double total = 0;
    int64_t positive = 0, bad = -1;
    for (int64_t i = 0; cum && share && i < range; i++) {
        float w = i < num_reserved ? 0.0f : powf((float)unigrams[i - num_reserved],
                                                 (float)distortion);
        if (!(w >= 0 && w < INFINITY) && bad < 0)
            bad = i;
        positive += w > 0;
        total += w;
        cum[i] = total;
        share[i] = w;
    }
    if (!cum || !share)
        weft__ctx_fail(cx, WEFT_ENOMEM, "%s: out of memory for %lld classes", fn,
                       (long long)range);
    else if (bad >= 0)
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: class %lld's weight (unigram %g to the power %g) "
                       "is not finite and 0 or more", fn, (long long)bad,
                       unigrams[bad - num_reserved], distortion);
    else if (positive == 0 || (unique && positive < num_sampled))
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: %lld classes have a weight, fewer than %s", fn,
                       (long long)positive, unique ? "the unique classes asked for" : "one");
    weft_tensor *t[2] = { NULL, NULL };
    if (weft_ctx_status(cx) == 0) {
        for (int64_t i = 0; i < range; i++)
            share[i] = (float)(share[i] / total);
        int rc = weft_tensor_create(WEFT_F64, 1, &range, cum, &t[0]);
        if (rc == 0)
            rc = weft_tensor_create(WEFT_F32, 1, &range, share, &t[1]);
        if (rc != 0)
            weft__ctx_fail(cx, rc, "%s: %s", fn, weft_errmsg());
    }
    for (int k = 0; k < 2; k++) {
        table[k] = t[k] ? weft_const_tensor(cx, t[k]) : NULL;
        weft_tensor_release(t[k]);
    }
    weft__free(cum);
    weft__free(share);
}

int weft_fixed_unigram_candidate_sampler(weft_ctx *cx, weft_value *true_classes,
                                         int64_t num_true, int64_t num_sampled, bool unique,
                                         int64_t range_max, double distortion,
                                         int64_t num_reserved_ids, const double *unigrams,
                                         int64_t n_unigrams, weft_value *seed, weft_value **outs)
{
    WEFT__SCOPE_OUTS(cx, outs, 3);
    static const char fn[] = "weft_fixed_unigram_candidate_sampler";
    weft_value *in[2] = { true_classes, seed };
    int rc = weft__ctx_enter_int(cx, fn, in, 2, outs, 3);
    if (rc != 0)
        return rc;
    if (!sampler_args_ok(cx, fn, true_classes, num_true, num_sampled, unique, range_max))
        return weft_ctx_status(cx);
    if (n_unigrams < 0 || num_reserved_ids < 0 || (n_unigrams > 0 && !unigrams) ||
        num_reserved_ids > range_max || n_unigrams != range_max - num_reserved_ids) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: num_reserved_ids %lld and %lld unigrams (at %p) do "
                       "not make range_max %lld classes", fn, (long long)num_reserved_ids,
                       (long long)n_unigrams, (const void *)unigrams, (long long)range_max);
        return weft_ctx_status(cx);
    }
    if (!isfinite(distortion)) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: distortion %g is not finite", fn, distortion);
        return weft_ctx_status(cx);
    }
    weft_value *table[2];
    unigram_table(cx, fn, range_max, num_reserved_ids, unigrams, distortion, unique, num_sampled,
                  table);
    if (weft_ctx_status(cx) == 0) {
        weft__node n = sampler_node(num_sampled, unique, range_max, false);
        n.op = WEFT__OP_UNIGRAM_CANDIDATES;
        draw_candidates(cx, &n, true_classes, seed, table, outs);
    }
    return weft_ctx_status(cx);
}

int weft_all_candidate_sampler(weft_ctx *cx, weft_value *true_classes, int64_t num_true,
                               int64_t num_sampled, bool unique, weft_value **outs)
{
    WEFT__SCOPE_OUTS(cx, outs, 3);
    static const char fn[] = "weft_all_candidate_sampler";
    int rc = weft__ctx_enter_int(cx, fn, &true_classes, 1, outs, 3);
    if (rc != 0)
        return rc;
    if (!sampler_args_ok(cx, fn, true_classes, num_true, num_sampled, false, num_sampled))
        return weft_ctx_status(cx);
    (void)unique;   /* every class once either way, as TensorFlow's AllSampler */
    weft_value *sampled = weft_range(cx, WEFT_I64, 0, num_sampled, 1);
    weft_value *true_count = weft_fill_like(cx, weft_cast(cx, true_classes, WEFT_F32), 1);
    weft_value *sampled_count = weft_fill(cx, WEFT_F32, 1, &num_sampled, 1);
    if (weft_ctx_status(cx) == 0) {
        outs[0] = sampled;
        outs[1] = true_count;
        outs[2] = sampled_count;
    }
    return weft_ctx_status(cx);
}

/* A sampled loss's sizes: classes drawn, of how many, true classes per
 * row, and whether sampled classes equal to a row's label are removed. */
typedef struct sampled_shape {
    int64_t num_sampled, num_classes, num_true;
    bool remove_hits;
} sampled_shape;

/* TensorFlow's _compute_sampled_logits with its log-uniform sampler and
 * subtract_log_q: the logits [batch, num_true + num_sampled] of the true
 * classes and the sampled ones, each less the log of its expected count
 * (sampled classes equal to one of the row's labels pushed down by
 * FLT_MAX when remove_hits), into *logits, and the labels (1 / num_true
 * for each true class, 0 for the sampled) into *labels. */
static void sampled_logits(weft_ctx *cx, const char *fn, const sampled_shape *s,
                           weft_value *weights, weft_value *biases, weft_value *labels,
                           weft_value *inputs, weft_value *seed, weft_value **logits,
                           weft_value **targets)
{
    if (!sampler_args_ok(cx, fn, labels, s->num_true, s->num_sampled, true, s->num_classes))
        return;
    weft_value *drawn[3];
    weft__node n = sampler_node(s->num_sampled, true, s->num_classes, false);
    draw_candidates(cx, &n, labels, seed, NULL, drawn);
    if (weft_ctx_status(cx) != 0)
        return;
    weft_dtype dt = weft__value_spec(inputs)->dtype;
    weft_value *ids = weft_cast(cx, labels, WEFT_I64), *sampled = drawn[0];
    weft_value *true_w = weft_gather(cx, weights, ids, 0);   /* [batch, num_true, dim] */
    weft_value *true_logits = weft_sum(cx, weft_mul(cx, weft_expand_dims(cx, inputs, 1), true_w),
                                       -1);
    weft_value *sampled_logits =
        weft_matmul_ex(cx, inputs, weft_gather(cx, weights, sampled, 0), WEFT_TRANSPOSE_B);
    if (biases) {
        true_logits = weft_add(cx, true_logits, weft_gather(cx, biases, ids, 0));
        sampled_logits = weft_add(cx, sampled_logits, weft_gather(cx, biases, sampled, 0));
    }
    if (s->remove_hits) {
        int along_true = 1;
        weft_value *hit = weft_reduce(cx, WEFT_R_ANY,
                                      weft_eq(cx, weft_expand_dims(cx, ids, 2), sampled),
                                      &along_true, 1, false);
        weft_value *push = weft_where(cx, hit, weft_const_f64(cx, -FLT_MAX), weft_const_f64(cx, 0));
        sampled_logits = weft_add(cx, sampled_logits, weft_cast(cx, push, dt));
    }
    true_logits = weft_sub(cx, true_logits, weft_log(cx, weft_cast(cx, drawn[1], dt)));
    sampled_logits = weft_sub(cx, sampled_logits, weft_log(cx, weft_cast(cx, drawn[2], dt)));
    weft_value *both[2] = { true_logits, sampled_logits };
    weft_value *marks[2] = { weft_fill_like(cx, true_logits, 1.0 / (double)s->num_true),
                             weft_zeros_like(cx, sampled_logits) };
    *logits = weft_concat(cx, both, 2, 1);
    *targets = weft_concat(cx, marks, 2, 1);
}

/* The losses' common checks: weights [classes, dim] and inputs [batch,
 * dim] of one float dtype, biases [classes] of it or NULL. */
static bool loss_args_ok(weft_ctx *cx, const char *fn, weft_value *weights, weft_value *biases,
                         weft_value *labels, weft_value *inputs)
{
    const weft_spec *w = weft__value_spec(weights), *x = weft__value_spec(inputs);
    const weft_spec *l = weft__value_spec(labels);
    const weft_spec *b = biases ? weft__value_spec(biases) : NULL;
    char s1[WEFT__SPEC_STR_MAX], s2[WEFT__SPEC_STR_MAX];
    if ((w->dtype != WEFT_F32 && w->dtype != WEFT_F64) || x->dtype != w->dtype ||
        (b && b->dtype != w->dtype)) {
        weft__ctx_fail(cx, WEFT_EDTYPE, "%s: the weights %s, inputs %s and biases are not all "
                       "f32 or all f64", fn, weft__spec_str(w, s1, sizeof s1),
                       weft__spec_str(x, s2, sizeof s2));
        return false;
    }
    if (w->rank != 2 || x->rank != 2 || (b && b->rank != 1) ||
        (w->dims[1] >= 0 && x->dims[1] >= 0 && w->dims[1] != x->dims[1])) {
        weft__ctx_fail(cx, WEFT_ESHAPE, "%s: the weights %s and inputs %s are not [classes, dim] "
                       "and [batch, dim], or the biases not [classes]", fn,
                       weft__spec_str(w, s1, sizeof s1), weft__spec_str(x, s2, sizeof s2));
        return false;
    }
    if (l->rank >= 1 && l->dims[0] >= 0 && x->dims[0] >= 0 && l->dims[0] != x->dims[0]) {
        weft__ctx_fail(cx, WEFT_ESHAPE, "%s: the labels %s and inputs %s disagree on the batch",
                       fn, weft__spec_str(l, s1, sizeof s1), weft__spec_str(x, s2, sizeof s2));
        return false;
    }
    return true;
}

static weft_value *sampled_loss(weft_ctx *cx, const char *fn, bool softmax,
                                const sampled_shape *s, weft_value *weights, weft_value *biases,
                                weft_value *labels, weft_value *inputs, weft_value *seed)
{
    weft_value *in[4] = { weights, labels, inputs, seed };
    if (!weft__op_enter(cx, fn, in, 4) || (biases && !weft__op_enter(cx, fn, &biases, 1)))
        return NULL;
    if (!loss_args_ok(cx, fn, weights, biases, labels, inputs))
        return NULL;
    weft_value *logits = NULL, *targets = NULL;
    sampled_logits(cx, fn, s, weights, biases, labels, inputs, seed, &logits, &targets);
    if (weft_ctx_status(cx) != 0)
        return NULL;
    if (softmax)
        return weft_softmax_cross_entropy_with_logits(cx, targets, logits, -1);
    return weft_sum(cx, weft_sigmoid_cross_entropy_with_logits(cx, targets, logits), 1);
}

weft_value *weft_nce_loss(weft_ctx *cx, weft_value *weights, weft_value *biases,
                          weft_value *labels, weft_value *inputs, int64_t num_sampled,
                          int64_t num_classes, int64_t num_true, bool remove_accidental_hits,
                          weft_value *seed)
{
    WEFT__SCOPE(cx);
    sampled_shape s = { num_sampled, num_classes, num_true, remove_accidental_hits };
    return WEFT__KEEP(sampled_loss(cx, "weft_nce_loss", false, &s, weights, biases, labels,
                                   inputs, seed));
}

weft_value *weft_sampled_softmax_loss(weft_ctx *cx, weft_value *weights, weft_value *biases,
                                      weft_value *labels, weft_value *inputs, int64_t num_sampled,
                                      int64_t num_classes, int64_t num_true,
                                      bool remove_accidental_hits, weft_value *seed)
{
    WEFT__SCOPE(cx);
    sampled_shape s = { num_sampled, num_classes, num_true, remove_accidental_hits };
    return WEFT__KEEP(sampled_loss(cx, "weft_sampled_softmax_loss", true, &s, weights, biases,
                                   labels, inputs, seed));
}

/* Whether the sampled candidates are an i32 or i64 vector; else the
 * context fails. */
static bool candidates_ok(weft_ctx *cx, const char *fn, weft_value *sampled)
{
    const weft_spec *s = weft__value_spec(sampled);
    if ((s->dtype == WEFT_I32 || s->dtype == WEFT_I64) && s->rank == 1)
        return true;
    char str[WEFT__SPEC_STR_MAX];
    weft__ctx_fail(cx, s->rank == 1 ? WEFT_EDTYPE : WEFT_ESHAPE,
                   "%s: the sampled candidates %s are not an i32 or i64 vector", fn,
                   weft__spec_str(s, str, sizeof str));
    return false;
}

/* TensorFlow's kernel maps each sampled class to its position, the last
 * one where a class was drawn twice, and looks each row's true classes up
 * in row-major order; so here: the largest matching position per (row,
 * true class), then the pairs that have one, in that order. */
int weft_compute_accidental_hits(weft_ctx *cx, weft_value *true_classes,
                                 weft_value *sampled_candidates, int64_t num_true,
                                 weft_value **outs)
{
    WEFT__SCOPE_OUTS(cx, outs, 3);
    static const char fn[] = "weft_compute_accidental_hits";
    weft_value *in[2] = { true_classes, sampled_candidates };
    int rc = weft__ctx_enter_int(cx, fn, in, 2, outs, 3);
    if (rc != 0)
        return rc;
    if (num_true < 1) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: num_true %lld is not 1 or more", fn,
                       (long long)num_true);
        return weft_ctx_status(cx);
    }
    /* No sampling here: the sampler's check with a draw of one class. */
    if (!sampler_args_ok(cx, fn, true_classes, num_true, 1, false, 1) ||
        !candidates_ok(cx, fn, sampled_candidates))
        return weft_ctx_status(cx);
    weft_value *sampled = weft_cast(cx, sampled_candidates, WEFT_I64);
    weft_value *match = weft_eq(cx, weft_expand_dims(cx, weft_cast(cx, true_classes, WEFT_I64), 2),
                                sampled);
    weft_value *at = weft_where(cx, match, weft__ops_axis0_range(cx, sampled),
                                weft_const_i64(cx, -1));
    int along_sampled = 2;
    weft_value *last = weft_reduce(cx, WEFT_R_MAX, at, &along_sampled, 1, false);
    weft_value *pairs = weft_argwhere(cx, weft_ge(cx, last, weft_const_i64(cx, 0)));
    weft_value *rows = weft_squeeze(cx, weft__ops_axis_slice(cx, pairs, 1, 0, 1), 1);
    weft_value *indices = weft_cast(cx, rows, WEFT_I32);
    weft_value *ids = weft_gather_nd(cx, last, pairs);
    weft_value *weights = weft_fill_like(cx, weft_cast(cx, rows, WEFT_F32), -FLT_MAX);
    if (weft_ctx_status(cx) == 0) {
        outs[0] = indices;
        outs[1] = ids;
        outs[2] = weights;
    }
    return weft_ctx_status(cx);
}
