/* ctc_beam_search_decoder: with a beam wide enough for every prefix the
 * search is exact, so its paths and scores match a brute force over every
 * alignment (random logits, two batch elements of different lengths);
 * narrow beams (1 to 4) against the same search written plainly (linear
 * scans where the kernel keeps a heap and a table), with ties among them;
 * a hand-worked case where a beam of 1 keeps the best alignment's
 * labelling and a beam of 2 finds the likelier one; repeated labels apart
 * and together; empty sequences and paths the beam lacks; f32 as f64
 * rounded once; the same bits eagerly and traced on 1, 2 and 4 workers;
 * the refused calls. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_ctc_beam, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

typedef struct beam_case {
    int width, top;
} beam_case;

static int beam_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const beam_case *c = user;
    return weft_ctc_beam_search_decoder(cx, a[0], a[1], c->width, c->top, outs);
}

/* The decoder's labels [batch, top, frames] and scores [batch, top]. */
static void decode(weft_dtype dt, int64_t frames, int64_t batch, int64_t classes,
                   const double *x, const int32_t *lengths, beam_case c, weft_tensor **outs)
{
    weft_tensor *args[2] = {
        test_tensor(dt, 3, (const int64_t[]){ frames, batch, classes }, x), NULL };
    cr_assert_eq(weft_tensor_create(WEFT_I32, 1, (const int64_t[]){ batch }, lengths, &args[1]),
                 0);
    op_results_everywhere(beam_body, &c, args, 2, outs, 2, "ctc_beam_search_decoder");
    test_assert_shape(outs[0], WEFT_I64, 3, (const int64_t[]){ batch, c.top, frames }, "labels");
    test_assert_shape(outs[1], dt, 2, (const int64_t[]){ batch, c.top }, "scores");
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

static int64_t label_at(const weft_tensor *t, int64_t i)
{
    return ((const int64_t *)weft_tensor_data(t))[i];
}

/* ---- Brute force ---------------------------------------------------- */

#define MAX_FRAMES 5
#define MAX_KEYS   4096

/* A labelling as a number: its labels in base (symbols + 1), each + 1. */
typedef struct scored {
    int64_t key;
    double  score;
} scored;

static int by_score(const void *pa, const void *pb)
{
    const scored *a = pa, *b = pb;
    return a->score > b->score ? -1 : a->score < b->score ? 1 : 0;
}

static double lse(double a, double b)
{
    if (a == -INFINITY)
        return b;
    double m = fmax(a, b);
    return m + log(exp(a - m) + exp(b - m));
}

/* Every labelling of element b with its score, best first; returns the
 * count. */
static int brute_force(int64_t frames, int64_t batch, int64_t classes, const double *x,
                       int64_t b, int64_t len, scored *out)
{
    int64_t blank = classes - 1, base = classes;
    int n = 0;
    int64_t alignments = 1;
    for (int64_t t = 0; t < len; t++)
        alignments *= classes;
    for (int64_t a = 0; a < alignments; a++) {
        int64_t rest = a, key = 0, prev = -1;
        double score = 0;
        for (int64_t t = 0; t < len; t++) {
            int64_t k = rest % classes;
            rest /= classes;
            const double *row = x + (t * batch + b) * classes;
            double top = row[0];
            for (int64_t c = 1; c < classes; c++)
                top = fmax(top, row[c]);
            score += row[k] - top;
            if (k != blank && k != prev)
                key = key * base + k + 1;
            prev = k;
        }
        int i = 0;
        while (i < n && out[i].key != key)
            i++;
        if (i == n) {
            cr_assert(n < MAX_KEYS);
            out[n++] = (scored){ key, -INFINITY };
        }
        out[i].score = lse(out[i].score, score);
    }
    (void)frames;
    qsort(out, (size_t)n, sizeof *out, by_score);
    return n;
}

/* The labels of key, in order, into labels; returns the count. */
static int64_t unpack(int64_t key, int64_t base, int64_t *labels)
{
    int64_t n = 0, tmp[MAX_FRAMES];
    for (; key; key /= base)
        tmp[n++] = key % base - 1;
    for (int64_t i = 0; i < n; i++)
        labels[i] = tmp[n - 1 - i];
    return n;
}

Test(ops_ctc_beam, a_wide_beam_is_exact)
{
    enum { FRAMES = 4, BATCH = 2, CLASSES = 4, TOP = 6 };
    double x[FRAMES * BATCH * CLASSES];
    uint64_t s = 2024;
    for (int i = 0; i < FRAMES * BATCH * CLASSES; i++)
        x[i] = 3 * op_uniform(&s);
    const int32_t lengths[BATCH] = { 4, 3 };
    weft_tensor *outs[2];
    decode(WEFT_F64, FRAMES, BATCH, CLASSES, x, lengths, (beam_case){ 128, TOP }, outs);
    for (int64_t b = 0; b < BATCH; b++) {
        scored want[MAX_KEYS];
        int n = brute_force(FRAMES, BATCH, CLASSES, x, b, lengths[b], want);
        cr_assert(n >= TOP);
        for (int64_t p = 0; p < TOP; p++) {
            double got = test_element(outs[1], b * TOP + p);
            cr_assert(fabs(got - want[p].score) <= 1e-12, "element %lld path %lld: %.17g, want "
                      "%.17g", (long long)b, (long long)p, got, want[p].score);
            int64_t labels[MAX_FRAMES];
            int64_t len = unpack(want[p].key, CLASSES, labels);
            for (int64_t t = 0; t < FRAMES; t++)
                cr_assert_eq(label_at(outs[0], (b * TOP + p) * FRAMES + t),
                             t < len ? labels[t] : -1, "element %lld path %lld frame %lld",
                             (long long)b, (long long)p, (long long)t);
        }
    }
    weft_tensor_release(outs[0]);
    weft_tensor_release(outs[1]);
}

/* ---- TensorFlow's search, written plainly ------------------------------ */

/* The same search with linear scans for the beam's worst entry and for
 * children (no heap, no table), to check the kernel's narrow beams. */
#define REF_MAX 4096

typedef struct ref_prob {
    double total, blank, label;
} ref_prob;

typedef struct ref_search {
    int      n, parent[REF_MAX], label[REF_MAX];
    bool     in_beam[REF_MAX];
    ref_prob oldp[REF_MAX], newp[REF_MAX];
    int      width;
} ref_search;

static const ref_prob ref_gone = { -INFINITY, -INFINITY, -INFINITY };

static double ref_lse(double a, double b)
{
    if (a == -INFINITY)
        return b;
    if (b == -INFINITY)
        return a;
    return a > b ? a + log1p(exp(b - a)) : b + log1p(exp(a - b));
}

/* Whether entry a ranks above entry b (higher total, then older). */
static bool ref_better(const ref_search *r, int a, int b)
{
    return r->newp[a].total > r->newp[b].total ||
           (r->newp[a].total == r->newp[b].total && a < b);
}

/* The beam's entries, best first; returns their count. */
static int ref_beam(const ref_search *r, int *out)
{
    int n = 0;
    for (int e = 0; e < r->n; e++)
        if (r->in_beam[e]) {
            int i = n++;
            for (; i > 0 && ref_better(r, e, out[i - 1]); i--)
                out[i] = out[i - 1];
            out[i] = e;
        }
    return n;
}

static bool ref_candidate(const ref_search *r, double total)
{
    int order[REF_MAX], n = ref_beam(r, order);
    return total > -INFINITY && (n < r->width || total > r->newp[order[n - 1]].total);
}

static void ref_step(ref_search *r, const double *x, int classes)
{
    int blank = classes - 1, branches[REF_MAX];
    double top = x[0];
    for (int c = 1; c < classes; c++)
        top = fmax(top, x[c]);
    int nb = ref_beam(r, branches);
    for (int i = 0; i < nb; i++)
        r->oldp[branches[i]] = r->newp[branches[i]];
    for (int i = 0; i < nb; i++) {
        int b = branches[i], p = r->parent[b];
        if (p >= 0) {
            if (r->newp[p].total != -INFINITY) {
                double prev = r->label[b] == r->label[p] ? r->oldp[p].blank : r->oldp[p].total;
                r->newp[b].label = ref_lse(r->newp[b].label, prev);
            }
            r->newp[b].label += x[r->label[b]] - top;
        }
        r->newp[b].blank = r->oldp[b].total + x[blank] - top;
        r->newp[b].total = ref_lse(r->newp[b].blank, r->newp[b].label);
    }
    for (int i = 0; i < nb; i++) {
        int b = branches[i];
        if (!ref_candidate(r, r->oldp[b].total))
            continue;
        for (int label = 0; label < blank; label++) {
            int c = 0;
            while (c < r->n && !(r->parent[c] == b && r->label[c] == label))
                c++;
            if (c < r->n && r->newp[c].total != -INFINITY)
                continue;
            double prev = label == r->label[b] ? r->oldp[b].blank : r->oldp[b].total;
            double p = x[label] - top + prev;
            if (!ref_candidate(r, p))
                continue;
            if (c == r->n) {
                cr_assert(r->n < REF_MAX);
                r->n++;
                r->parent[c] = b;
                r->label[c] = label;
                r->in_beam[c] = false;
            }
            r->newp[c] = (ref_prob){ p, -INFINITY, p };
            int order[REF_MAX], n = ref_beam(r, order);
            if (n == r->width) {
                r->in_beam[order[n - 1]] = false;
                r->newp[order[n - 1]] = ref_gone;
            }
            r->in_beam[c] = true;
        }
    }
}

Test(ops_ctc_beam, narrow_beams_match_the_plain_search)
{
    enum { FRAMES = 7, BATCH = 3, CLASSES = 4 };
    static ref_search r;
    uint64_t s = 31337;
    for (int width = 1; width <= 4; width++)
        for (int round = 0; round < 4; round++) {
            double x[FRAMES * BATCH * CLASSES];
            /* Rounds 2 and 3 draw small integers: equal totals, ranked by age. */
            for (int i = 0; i < FRAMES * BATCH * CLASSES; i++)
                x[i] = round < 2 ? 2.5 * op_uniform(&s) : floor(1.5 * (op_uniform(&s) + 1));
            const int32_t lengths[BATCH] = { 7, 5, 6 };
            weft_tensor *outs[2];
            decode(WEFT_F64, FRAMES, BATCH, CLASSES, x, lengths, (beam_case){ width, width },
                   outs);
            for (int b = 0; b < BATCH; b++) {
                r = (ref_search){ .n = 1, .width = width };
                r.parent[0] = r.label[0] = -1;
                r.in_beam[0] = true;
                r.oldp[0] = ref_gone;
                r.newp[0] = (ref_prob){ 0, 0, -INFINITY };
                for (int t = 0; t < lengths[b]; t++)
                    ref_step(&r, x + (t * BATCH + b) * CLASSES, CLASSES);
                int order[REF_MAX], n = ref_beam(&r, order);
                for (int p = 0; p < width; p++) {
                    double got = test_element(outs[1], b * width + p);
                    double want = p < n ? r.newp[order[p]].total : -INFINITY;
                    cr_assert(got == want || fabs(got - want) <= 1e-12, "width %d round %d "
                              "element %d path %d: %.17g, want %.17g", width, round, b, p, got,
                              want);
                    int64_t labels[FRAMES], len = 0;
                    for (int e = p < n ? order[p] : 0; p < n && r.parent[e] >= 0; e = r.parent[e])
                        labels[len++] = r.label[e];
                    for (int t = 0; t < FRAMES; t++)
                        cr_assert_eq(label_at(outs[0], (b * width + p) * FRAMES + t),
                                     t < len ? labels[len - 1 - t] : -1,
                                     "width %d round %d element %d path %d frame %d", width,
                                     round, b, p, t);
                }
            }
            weft_tensor_release(outs[0]);
            weft_tensor_release(outs[1]);
        }
}

/* Two frames of p(a) = 0.4, p(blank) = 0.6 as log probabilities: "" has
 * 0.36, "a" 0.4 * 0.4 + 0.4 * 0.6 + 0.6 * 0.4 = 0.64.  A beam of 1 never
 * lets "a" in (0.4 < 0.6 after the first frame, 0.24 < 0.36 after the
 * second); a beam of 2 keeps both. */
Test(ops_ctc_beam, the_beam_width_decides)
{
    const double x[4] = { log(0.4), log(0.6), log(0.4), log(0.6) };
    const int32_t lengths[1] = { 2 };
    weft_tensor *outs[2];
    decode(WEFT_F64, 2, 1, 2, x, lengths, (beam_case){ 1, 1 }, outs);
    /* Scores are log p less each frame's largest logit: log(0.36) - 2 log(0.6). */
    cr_assert_eq(label_at(outs[0], 0), -1);
    cr_assert(fabs(test_element(outs[1], 0) - (log(0.36) - 2 * log(0.6))) <= 1e-15);
    weft_tensor_release(outs[0]);
    weft_tensor_release(outs[1]);
    decode(WEFT_F64, 2, 1, 2, x, lengths, (beam_case){ 2, 2 }, outs);
    cr_assert_eq(label_at(outs[0], 0), 0);
    cr_assert_eq(label_at(outs[0], 1), -1);
    cr_assert(fabs(test_element(outs[1], 0) - (log(0.64) - 2 * log(0.6))) <= 1e-15, "%.17g",
              test_element(outs[1], 0));
    cr_assert_eq(label_at(outs[0], 2), -1);
    cr_assert(fabs(test_element(outs[1], 1) - (log(0.36) - 2 * log(0.6))) <= 1e-15);
    weft_tensor_release(outs[0]);
    weft_tensor_release(outs[1]);
}

Test(ops_ctc_beam, repeats_apart_stay_two_together_merge)
{
    /* Classes a, b, blank.  Element 0: a, blank, a (sure) -> "a a";
     * element 1: a, a, b -> "a b". */
    const double big = 20;
    double x[3 * 2 * 3] = { 0 };
    const int sure[2][3] = { { 0, 2, 0 }, { 0, 0, 1 } };
    for (int t = 0; t < 3; t++)
        for (int b = 0; b < 2; b++)
            x[(t * 2 + b) * 3 + sure[b][t]] = big;
    const int32_t lengths[2] = { 3, 3 };
    weft_tensor *outs[2];
    decode(WEFT_F64, 3, 2, 3, x, lengths, (beam_case){ 8, 1 }, outs);
    const int64_t want[2][3] = { { 0, 0, -1 }, { 0, 1, -1 } };
    for (int b = 0; b < 2; b++)
        for (int t = 0; t < 3; t++)
            cr_assert_eq(label_at(outs[0], b * 3 + t), want[b][t], "element %d frame %d", b, t);
    weft_tensor_release(outs[0]);
    weft_tensor_release(outs[1]);
}

Test(ops_ctc_beam, empty_sequences_and_missing_paths)
{
    /* Element 0 has no frames: the empty labelling, score 0, and no
     * second path.  Element 1 has one frame of two classes: "" and "a". */
    const double x[2 * 2 * 2] = { 1, 2, 0.5, -1, 3, 3, 3, 3 };
    const int32_t lengths[2] = { 0, 1 };
    weft_tensor *outs[2];
    decode(WEFT_F64, 2, 2, 2, x, lengths, (beam_case){ 4, 3 }, outs);
    cr_assert_eq(test_element(outs[1], 0), 0);
    cr_assert(isinf(test_element(outs[1], 1)) && test_element(outs[1], 1) < 0);
    cr_assert(isinf(test_element(outs[1], 2)) && test_element(outs[1], 2) < 0);
    for (int i = 0; i < 3 * 2; i++)
        cr_assert_eq(label_at(outs[0], i), -1, "element 0 label %d", i);
    /* Element 1's frame: a 0.5, blank -1: "a" scores 0, "" -1.5. */
    cr_assert_eq(test_element(outs[1], 3), 0);
    cr_assert_eq(label_at(outs[0], 6), 0);
    cr_assert_eq(test_element(outs[1], 4), -1.5);
    cr_assert_eq(label_at(outs[0], 8), -1);
    cr_assert(isinf(test_element(outs[1], 5)));
    weft_tensor_release(outs[0]);
    weft_tensor_release(outs[1]);
}

Test(ops_ctc_beam, f32_is_the_f64_search_rounded_once)
{
    enum { FRAMES = 5, BATCH = 3, CLASSES = 5 };
    double x[FRAMES * BATCH * CLASSES];
    uint64_t s = 77;
    for (int i = 0; i < FRAMES * BATCH * CLASSES; i++)
        x[i] = (float)(4 * op_uniform(&s));
    const int32_t lengths[BATCH] = { 5, 2, 4 };
    weft_tensor *o32[2], *o64[2];
    decode(WEFT_F32, FRAMES, BATCH, CLASSES, x, lengths, (beam_case){ 3, 2 }, o32);
    decode(WEFT_F64, FRAMES, BATCH, CLASSES, x, lengths, (beam_case){ 3, 2 }, o64);
    cr_assert(op_same_bits(o32[0], o64[0]), "the labels differ");
    for (int i = 0; i < BATCH * 2; i++)
        cr_assert_eq(test_element(o32[1], i), (double)(float)test_element(o64[1], i), "score %d",
                     i);
    for (int k = 0; k < 2; k++) {
        weft_tensor_release(o32[k]);
        weft_tensor_release(o64[k]);
    }
}

typedef enum bad_call { TOP_OVER_WIDTH, ZERO_WIDTH, LONG_SEQUENCE, ONE_CLASS, INT_INPUTS,
                        NULL_OUTS, BATCH_CLASH } bad_call;

/* args: f64 [3, 2, 4], i32 lengths [2] of { 3, 4 }, i32 [3, 2, 4]. */
static int bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    weft_value *r[2];
    int rc = 0;
    switch ((bad_call) * (const int *)user) {
    case TOP_OVER_WIDTH: rc = weft_ctc_beam_search_decoder(cx, a[0], a[1], 2, 3, r); break;
    case ZERO_WIDTH: rc = weft_ctc_beam_search_decoder(cx, a[0], a[1], 0, 1, r); break;
    case LONG_SEQUENCE: rc = weft_ctc_beam_search_decoder(cx, a[0], a[1], 4, 1, r); break;
    case ONE_CLASS:
        rc = weft_ctc_beam_search_decoder(
            cx, weft_slice(cx, a[0], (const int64_t[]){ 0, 0, 0 },
                           (const int64_t[]){ WEFT_END, WEFT_END, 1 }, NULL),
            a[1], 4, 1, r);
        break;
    case INT_INPUTS: rc = weft_ctc_beam_search_decoder(cx, a[2], a[1], 4, 1, r); break;
    case NULL_OUTS: rc = weft_ctc_beam_search_decoder(cx, a[0], a[1], 4, 1, NULL); break;
    case BATCH_CLASH:
        rc = weft_ctc_beam_search_decoder(
            cx, a[0], weft_slice(cx, a[1], (const int64_t[]){ 0 }, (const int64_t[]){ 1 }, NULL),
            4, 1, r);
        break;
    }
    outs[0] = rc == 0 ? r[0] : NULL;
    return weft_ctx_status(cx);
}

Test(ops_ctc_beam, refused_calls_name_the_op)
{
    double v[24] = { 0 };
    weft_tensor *args[3] = { test_tensor(WEFT_F64, 3, (const int64_t[]){ 3, 2, 4 }, v), NULL,
                             test_tensor(WEFT_I32, 3, (const int64_t[]){ 3, 2, 4 }, v) };
    cr_assert_eq(weft_tensor_create(WEFT_I32, 1, (const int64_t[]){ 2 }, (const int32_t[]){ 3, 4 },
                                    &args[1]), 0);
    const op_error_case cases[] = {
        { TOP_OVER_WIDTH, WEFT_EINVAL, "weft_ctc_beam_search_decoder: beam_width 2 and "
                                       "top_paths 3 are not" },
        { ZERO_WIDTH, WEFT_EINVAL, "weft_ctc_beam_search_decoder: beam_width 0" },
        { LONG_SEQUENCE, WEFT_EINVAL, "weft_ctc_beam_search_decoder: batch element 1 has "
                                      "sequence_length 4, not within 0..3" },
        { ONE_CLASS, WEFT_ESHAPE, "weft_ctc_beam_search_decoder: the inputs f64[3,2,1] are not" },
        { INT_INPUTS, WEFT_EDTYPE, "weft_ctc_beam_search_decoder: the inputs i32[3,2,4] are not "
                                   "f32 or f64" },
        { NULL_OUTS, WEFT_EINVAL, "weft_ctc_beam_search_decoder: outs is NULL" },
        { BATCH_CLASH, WEFT_ESHAPE, "weft_ctc_beam_search_decoder: the inputs f64[3,2,4] are not "
                                    "[frames, batch, classes] with frames and classes (2 or more) "
                                    "known while tracing, or the lengths i32[1] not [batch]" },
    };
    op_expect_errors(rts[1], bad_body, cases, sizeof cases / sizeof *cases, args, 3);
    for (int k = 0; k < 3; k++)
        weft_tensor_release(args[k]);
}
