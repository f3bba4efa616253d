/* ctc_loss: tf.nn.ctc_loss on dense labels, the negative log likelihood
 * of each batch element's label sequence under its frames' softmax
 * (Graves et al., "Connectionist temporal classification", ICML 2006).
 *
 * Element b's label l (label_length[b] classes) is extended with blanks
 * around and between its classes (2 L + 1 states); the forward variables
 * alpha_t(s), the log probability of the paths of t + 1 frames that end
 * in state s, follow alpha_t(s) = logsumexp(alpha_(t-1)(s), alpha_(t-1)(s
 * - 1), and alpha_(t-1)(s - 2) when s is a class unlike the one two states
 * back) + log softmax_t(class of s), over logit_length[b] frames; the
 * loss is -logsumexp of the last two states.  In f64, each frame's log
 * softmax once.  No path (frames too few for the label and its repeats)
 * gives +inf, as TensorFlow.  A label class out of range or equal to the
 * blank, or a length past its tensor's, fails the call naming the batch
 * element. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "runtime/iface.h"
#include "trace/kernels.h"
#include "trace/shape.h"

typedef struct ctc_job {
    const weft_tensor *labels, *logits, *label_length, *logit_length;
    void *out;
    int64_t batch, frames, classes, max_label;
    int64_t blank;
    bool time_major;
    size_t chunks;
    int64_t *failed;   /* per chunk: the first batch element refused, or -1 */
} ctc_job;

static double logit_at(const ctc_job *j, int64_t b, int64_t t, int64_t c)
{
    int64_t row = j->time_major ? t * j->batch + b : b * j->frames + t;
    return weft__real_at(j->logits, row * j->classes + c);
}

static double log_add(double x, double y)
{
    if (x == -INFINITY)
        return y;
    if (y == -INFINITY)
        return x;
    double hi = x > y ? x : y, lo = x > y ? y : x;
    return hi + log1p(exp(lo - hi));
}

/* Frame t's log softmax into lp[0..classes). */
static void log_softmax(const ctc_job *j, int64_t b, int64_t t, double *lp)
{
    double max = -INFINITY;
    for (int64_t c = 0; c < j->classes; c++) {
        lp[c] = logit_at(j, b, t, c);
        max = lp[c] > max ? lp[c] : max;
    }
    double sum = 0;
    for (int64_t c = 0; c < j->classes; c++)
        sum += exp(lp[c] - max);
    double norm = max + log(sum);
    for (int64_t c = 0; c < j->classes; c++)
        lp[c] -= norm;
}

/* Element b's loss into *loss; false when its label or lengths are
 * refused.  work holds 2 (2 max_label + 1) + classes + max_label doubles. */
/* Element b's label into label[], its length and frames; false when they
 * are refused. */
static bool load_label(const ctc_job *j, int64_t b, int64_t *label, int64_t *len,
                       int64_t *frames)
{
    *len = weft__tensor_int_at(j->label_length, b);
    *frames = weft__tensor_int_at(j->logit_length, b);
    if (*len < 0 || *len > j->max_label || *frames < 0 || *frames > j->frames)
        return false;
    for (int64_t i = 0; i < *len; i++) {
        label[i] = weft__tensor_int_at(j->labels, b * j->max_label + i);
        if (label[i] < 0 || label[i] >= j->classes || label[i] == j->blank)
            return false;
    }
    return true;
}

/* State s's class: a blank between the label's classes. */
static int64_t symbol(const ctc_job *j, const int64_t *label, int64_t s)
{
    return s % 2 == 1 ? label[s / 2] : j->blank;
}

/* Whether a path may skip from state s - 2 to s (s a class unlike the one
 * before it). */
static bool may_skip(const int64_t *label, int64_t s)
{
    return s % 2 == 1 && s >= 2 && label[s / 2 - 1] != label[s / 2];
}

static bool element_loss(const ctc_job *j, int64_t b, double *work, double *loss)
{
    int64_t len, frames;
    double *alpha = work, *next = alpha + 2 * j->max_label + 1, *lp = next + 2 * j->max_label + 1;
    int64_t *label = (int64_t *)(void *)(lp + j->classes);
    if (!load_label(j, b, label, &len, &frames))
        return false;
    int64_t states = 2 * len + 1;
    if (frames == 0) {
        *loss = len == 0 ? 0 : INFINITY;
        return true;
    }
    for (int64_t s = 0; s < states; s++)
        alpha[s] = -INFINITY;
    log_softmax(j, b, 0, lp);
    alpha[0] = lp[j->blank];
    if (len > 0)
        alpha[1] = lp[label[0]];
    for (int64_t t = 1; t < frames; t++) {
        log_softmax(j, b, t, lp);
        for (int64_t s = 0; s < states; s++) {
            double a = alpha[s];
            if (s >= 1)
                a = log_add(a, alpha[s - 1]);
            if (may_skip(label, s))
                a = log_add(a, alpha[s - 2]);
            next[s] = a + lp[symbol(j, label, s)];
        }
        double *swap = alpha;
        alpha = next;
        next = swap;
    }
    double total = alpha[states - 1];
    if (states >= 2)
        total = log_add(total, alpha[states - 2]);
    *loss = -total;
    return true;
}

static int ctc_chunk(size_t cb, size_t ce, void *ctx)
{
    ctc_job *j = ctx;
    size_t doubles = 2 * (2 * (size_t)j->max_label + 1) + (size_t)j->classes +
                     (size_t)j->max_label;
    double *work = weft__malloc(sizeof(double) * (doubles ? doubles : 1));
    if (!work)
        return weft__errorf(WEFT_ENOMEM, "weft_ctc_loss: out of memory");
    for (size_t c = cb; c < ce; c++) {
        int64_t lo = (int64_t)weft__chunk_begin((uint64_t)j->batch, j->chunks, c);
        int64_t hi = (int64_t)weft__chunk_begin((uint64_t)j->batch, j->chunks, c + 1);
        j->failed[c] = -1;
        for (int64_t b = lo; b < hi; b++) {
            double loss;
            if (!element_loss(j, b, work, &loss)) {
                j->failed[c] = b;
                break;
            }
            if (j->logits->dtype == WEFT_F32)
                ((float *)j->out)[b] = (float)loss;
            else
                ((double *)j->out)[b] = loss;
        }
    }
    weft__free(work);
    return 0;
}

/* ---- The gradient (CTC_LOSS_GRAD) ----------------------------------- */

/* Element b's frame t row of the gradient (the logits' layout). */
static void store_row(const ctc_job *j, int64_t b, int64_t t, const double *g)
{
    int64_t row = j->time_major ? t * j->batch + b : b * j->frames + t;
    for (int64_t c = 0; c < j->classes; c++) {
        if (j->logits->dtype == WEFT_F32)
            ((float *)j->out)[row * j->classes + c] = (float)g[c];
        else
            ((double *)j->out)[row * j->classes + c] = g[c];
    }
}

/* The forward variables of every frame into alpha (frames x S) from the
 * log softmax of every frame in lp (frames x classes); returns log p. */
static double forward_all(const ctc_job *j, const int64_t *label, int64_t states,
                          int64_t frames, const double *lp, double *alpha, int64_t S)
{
    for (int64_t s = 0; s < states; s++)
        alpha[s] = -INFINITY;
    alpha[0] = lp[j->blank];
    if (states > 1)
        alpha[1] = lp[label[0]];
    for (int64_t t = 1; t < frames; t++) {
        const double *prev = alpha + (t - 1) * S;
        for (int64_t s = 0; s < states; s++) {
            double a = prev[s];
            if (s >= 1)
                a = log_add(a, prev[s - 1]);
            if (may_skip(label, s))
                a = log_add(a, prev[s - 2]);
            alpha[t * S + s] = a + lp[t * j->classes + symbol(j, label, s)];
        }
    }
    const double *last = alpha + (frames - 1) * S;
    return states >= 2 ? log_add(last[states - 1], last[states - 2]) : last[0];
}

/* The backward variables of frame t (the paths' probability after frame
 * t from each state, frame t's own class left out) from frame t + 1's. */
static void backward_step(const ctc_job *j, const int64_t *label, int64_t states,
                          const double *lp_next, const double *after, double *beta)
{
    for (int64_t s = 0; s < states; s++) {
        double v = after[s] + lp_next[symbol(j, label, s)];
        if (s + 1 < states)
            v = log_add(v, after[s + 1] + lp_next[symbol(j, label, s + 1)]);
        if (s + 2 < states && may_skip(label, s + 2))
            v = log_add(v, after[s + 2] + lp_next[symbol(j, label, s + 2)]);
        beta[s] = v;
    }
}

/* Element b's gradient of its loss by its logits: per frame, the softmax
 * minus the share of the paths through each class, exp(logsumexp of alpha
 * + beta over the states of that class - log p).  Zeros past its frames,
 * and for a label no path holds (its loss is +inf).  false when its label
 * or lengths are refused. */
static bool element_grad(const ctc_job *j, int64_t b, double *work)
{
    int64_t len, frames, S = 2 * j->max_label + 1, C = j->classes;
    double *lp = work, *alpha = lp + j->frames * C, *beta = alpha + j->frames * S;
    double *after = beta + S, *g = after + S;
    int64_t *label = (int64_t *)(void *)(g + C);
    if (!load_label(j, b, label, &len, &frames))
        return false;
    for (int64_t c = 0; c < C; c++)
        g[c] = 0;
    for (int64_t t = frames; t < j->frames; t++)
        store_row(j, b, t, g);
    int64_t states = 2 * len + 1;
    for (int64_t t = 0; t < frames; t++)
        log_softmax(j, b, t, lp + t * C);
    double log_p = frames ? forward_all(j, label, states, frames, lp, alpha, S) : -INFINITY;
    for (int64_t t = frames; t-- > 0;) {
        if (t == frames - 1)
            for (int64_t s = 0; s < states; s++)
                beta[s] = s >= states - 2 ? 0.0 : -INFINITY;
        else
            backward_step(j, label, states, lp + (t + 1) * C, after, beta);
        for (int64_t c = 0; c < C; c++)
            g[c] = -INFINITY;
        for (int64_t s = 0; s < states; s++) {
            int64_t sym = symbol(j, label, s);
            g[sym] = log_add(g[sym], alpha[t * S + s] + beta[s]);
        }
        for (int64_t c = 0; c < C; c++)
            g[c] = log_p == -INFINITY ? 0.0 : exp(lp[t * C + c]) - exp(g[c] - log_p);
        store_row(j, b, t, g);
        double *swap = after;
        after = beta;
        beta = swap;
    }
    return true;
}

static int ctc_grad_chunk(size_t cb, size_t ce, void *ctx)
{
    ctc_job *j = ctx;
    size_t S = 2 * (size_t)j->max_label + 1, C = (size_t)j->classes;
    size_t doubles = (size_t)j->frames * (C + S) + 2 * S + C + (size_t)j->max_label;
    double *work = weft__malloc(sizeof(double) * doubles);
    if (!work)
        return weft__errorf(WEFT_ENOMEM, "weft_ctc_loss's gradient: out of memory");
    for (size_t c = cb; c < ce; c++) {
        int64_t lo = (int64_t)weft__chunk_begin((uint64_t)j->batch, j->chunks, c);
        int64_t hi = (int64_t)weft__chunk_begin((uint64_t)j->batch, j->chunks, c + 1);
        j->failed[c] = -1;
        for (int64_t b = lo; b < hi && j->failed[c] < 0; b++)
            if (!element_grad(j, b, work))
                j->failed[c] = b;
    }
    weft__free(work);
    return 0;
}

int64_t weft__ctc_blank(int blank_index, int64_t classes)
{
    int64_t blank = blank_index < 0 ? classes + blank_index : blank_index;
    return blank >= 0 && blank < classes ? blank : -1;
}

int weft__eval_ctc_loss(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                        weft_tensor *out)
{
    ctc_job j = { .labels = in[0], .logits = in[1], .label_length = in[2],
                  .logit_length = in[3], .out = weft__tensor_mut(out) };
    j.time_major = n->attr.index.kind != 0;
    j.batch = in[0]->dims[0];
    j.max_label = in[0]->dims[1];
    j.frames = in[1]->dims[j.time_major ? 0 : 1];
    j.classes = in[1]->dims[2];
    j.blank = weft__ctc_blank(n->attr.index.axis, j.classes);
    if (j.blank < 0)
        return weft__errorf(WEFT_EINVAL, "weft_ctc_loss: blank_index %d is not a class of %lld",
                            n->attr.index.axis, (long long)j.classes);
    if (j.batch == 0)
        return 0;
    /* An element costs frames x (classes + states) steps. */
    j.chunks = weft__chunk_count(rt, (uint64_t)(j.frames * (j.classes + 2 * j.max_label + 1)) *
                                         (uint64_t)j.batch);
    j.failed = weft__malloc(j.chunks * sizeof *j.failed);
    if (!j.failed)
        return weft__errorf(WEFT_ENOMEM, "weft_ctc_loss: out of memory");
    bool grad = n->op == WEFT__OP_CTC_LOSS_GRAD;
    int rc = weft__run_chunks(rt, j.chunks, grad ? ctc_grad_chunk : ctc_chunk, &j);
    for (size_t c = 0; rc == 0 && c < j.chunks; c++)
        if (j.failed[c] >= 0)
            rc = weft__errorf(WEFT_EINVAL, "weft_ctc_loss: batch element %lld has a label class "
                              "out of range or equal to the blank, or a length past its tensor's",
                              (long long)j.failed[c]);
    weft__free(j.failed);
    return rc;
}

/* ---- Inference ---------------------------------------------------------- */

static const char *spec_text(const weft_spec *s, char *buf)
{
    return weft__spec_str(s, buf, WEFT__SPEC_STR_MAX);
}

static bool is_int(weft_dtype dt)
{
    return dt == WEFT_I32 || dt == WEFT_I64;
}

/* Two dims that may be unknown while tracing disagree. */
static bool clash(int64_t a, int64_t b)
{
    return a != WEFT_DIM_ANY && b != WEFT_DIM_ANY && a != b;
}

int weft__infer_ctc_loss(const weft__node *n, const weft_spec *in, weft_spec *out)
{
    const weft_spec *labels = &in[0], *logits = &in[1], *ll = &in[2], *tl = &in[3];
    char s1[WEFT__SPEC_STR_MAX], s2[WEFT__SPEC_STR_MAX];
    if (logits->dtype != WEFT_F32 && logits->dtype != WEFT_F64)
        return weft__errorf(WEFT_EDTYPE, "weft_ctc_loss: the logits %s are not f32 or f64",
                            spec_text(logits, s1));
    if (!is_int(labels->dtype) || !is_int(ll->dtype) || !is_int(tl->dtype))
        return weft__errorf(WEFT_EDTYPE, "weft_ctc_loss: the labels %s and both lengths must be "
                            "i32 or i64", spec_text(labels, s1));
    if (logits->rank != 3 || labels->rank != 2 || ll->rank != 1 || tl->rank != 1)
        return weft__errorf(WEFT_ESHAPE, "weft_ctc_loss: the labels %s are not [batch, "
                            "max_label_length] or the logits %s not of rank 3 (ranks known "
                            "while tracing; the lengths [batch])", spec_text(labels, s1),
                            spec_text(logits, s2));
    bool time_major = n->attr.index.kind != 0;
    int64_t batch = labels->dims[0], lb = logits->dims[time_major ? 1 : 0];
    if (clash(batch, lb) || clash(batch, ll->dims[0]) || clash(batch, tl->dims[0]))
        return weft__errorf(WEFT_ESHAPE, "weft_ctc_loss: the labels %s, the logits %s (%s) and "
                            "the lengths disagree on the batch", spec_text(labels, s1),
                            spec_text(logits, s2), time_major ? "time major" : "batch major");
    if (n->op == WEFT__OP_CTC_LOSS_GRAD) {
        *out = *logits;   /* the gradient by the logits */
        return 0;
    }
    memset(out, 0, sizeof *out);
    out->dtype = logits->dtype;
    out->rank = 1;
    out->dims[0] = batch != WEFT_DIM_ANY ? batch : lb;
    return 0;
}
