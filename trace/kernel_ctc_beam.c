/* ctc_beam_search_decoder (tf.nn.ctc_beam_search_decoder): TensorFlow's
 * prefix beam search with its default scorer, one batch element per
 * task.  A beam entry is a labelling (a node of a trie: its parent and
 * its last label) with the log probabilities of ending in a blank, in its
 * last label, and in either, now (newp) and one frame ago (oldp).  Each
 * frame, with x the frame's logits less their largest:
 *
 *     every entry of the beam:  label += the parent's share (oldp.blank of
 *         the parent when the last two labels are equal, else its
 *         oldp.total; only while the parent is in the beam), then
 *         label += x[last label];  blank = oldp.total + x[blank];
 *         total = logsumexp(blank, label);
 *     then, in order of falling oldp.total, every entry that could still
 *         make the beam grows a child for each non-blank class not in the
 *         beam: label = total = x[class] + (oldp.blank when the class
 *         repeats the entry's last label, else oldp.total), blank = -inf;
 *         it enters when the beam has room or it beats the beam's worst,
 *         which leaves the beam.
 *
 * The blank is the last class, as TensorFlow's decoder fixes it; the
 * scores are these totals (sums of logits less each frame's largest, not
 * normalized), in f64.  Ties that TensorFlow leaves to its heap are broken
 * here by age: of equal totals the older entry ranks higher. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/iface.h"
#include "trace/kernels.h"
#include "trace/shape.h"
#include "trace/tensor_impl.h"

typedef struct beam_prob {
    double total, blank, label;
} beam_prob;

typedef struct beam_entry {
    int32_t   parent, label;   /* the root: -1 and -1 */
    beam_prob oldp, newp;
} beam_entry;

/* One batch element's search: its entries, the trie's child index (a
 * table of (parent, label) to entry + 1, 0 empty), and the beam as a heap
 * whose top is its worst entry. */
typedef struct beam_search {
    beam_entry *e;
    size_t      n, cap;
    int32_t    *slot;
    size_t      slots;
    int32_t    *heap, *branches;
    size_t      size, width;
    double     *x;
} beam_search;

static const beam_prob gone = { -INFINITY, -INFINITY, -INFINITY };

static double log_sum_exp(double a, double b)
{
    if (a == -INFINITY)
        return b;
    if (b == -INFINITY)
        return a;
    return a > b ? a + log1p(exp(b - a)) : b + log1p(exp(a - b));
}

/* Whether entry a ranks below entry b. */
static bool worse(const beam_search *s, int32_t a, int32_t b)
{
    double ta = s->e[a].newp.total, tb = s->e[b].newp.total;
    return ta < tb || (ta == tb && a > b);
}

static void heap_push(beam_search *s, int32_t v)
{
    size_t i = s->size++;
    while (i > 0 && worse(s, v, s->heap[(i - 1) / 2])) {
        s->heap[i] = s->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    s->heap[i] = v;
}

static int32_t heap_pop(beam_search *s)
{
    int32_t top = s->heap[0], last = s->heap[--s->size];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= s->size)
            break;
        if (c + 1 < s->size && worse(s, s->heap[c + 1], s->heap[c]))
            c++;
        if (!worse(s, s->heap[c], last))
            break;
        s->heap[i] = s->heap[c];
        i = c;
    }
    if (s->size)
        s->heap[i] = last;
    return top;
}

static size_t slot_of(const beam_search *s, int32_t parent, int32_t label)
{
    uint64_t h = ((uint64_t)(uint32_t)parent << 32 | (uint32_t)label) * 0x9e3779b97f4a7c15u;
    size_t i = (size_t)(h >> 32) & (s->slots - 1);
    while (s->slot[i]) {
        const beam_entry *e = &s->e[s->slot[i] - 1];
        if (e->parent == parent && e->label == label)
            break;
        i = (i + 1) & (s->slots - 1);
    }
    return i;
}

/* The entry (parent, label), or -1. */
static int32_t child_of(const beam_search *s, int32_t parent, int32_t label)
{
    return s->slot[slot_of(s, parent, label)] - 1;
}

/* A new entry (parent, label): -1 when out of memory. */
static int32_t add_entry(beam_search *s, int32_t parent, int32_t label)
{
    if (s->n == s->cap) {   /* the table keeps twice the entries' room: half full at most */
        size_t cap = s->cap ? 2 * s->cap : 64;
        beam_entry *e = weft__realloc(s->e, cap * sizeof *e);
        int32_t *slot = e ? weft__malloc(2 * cap * sizeof *slot) : NULL;
        if (!slot) {
            if (e)
                s->e = e;
            return -1;
        }
        s->e = e;
        s->cap = cap;
        weft__free(s->slot);
        s->slot = memset(slot, 0, 2 * cap * sizeof *slot);
        s->slots = 2 * cap;
        for (size_t k = 0; k < s->n; k++)
            s->slot[slot_of(s, s->e[k].parent, s->e[k].label)] = (int32_t)k + 1;
    }
    int32_t k = (int32_t)s->n++;
    s->e[k] = (beam_entry){ .parent = parent, .label = label, .oldp = gone, .newp = gone };
    s->slot[slot_of(s, parent, label)] = k + 1;
    return k;
}

static void start(beam_search *s)
{
    s->n = 0;
    if (s->slot)
        memset(s->slot, 0, s->slots * sizeof *s->slot);
    s->size = 0;
}

/* Whether a probability of total could enter the beam now. */
static bool candidate(const beam_search *s, double total)
{
    return total > -INFINITY &&
           (s->size < s->width || total > s->e[s->heap[0]].newp.total);
}

static int by_rank(const void *pa, const void *pb, void *ctx)
{
    int32_t a = *(const int32_t *)pa, b = *(const int32_t *)pb;
    return worse(ctx, b, a) ? -1 : worse(ctx, a, b) ? 1 : 0;
}

/* The beam's entries, best first, into s->branches; the heap emptied. */
static size_t extract(beam_search *s)
{
    size_t n = s->size;
    memcpy(s->branches, s->heap, n * sizeof *s->heap);
    qsort_r(s->branches, n, sizeof *s->branches, by_rank, s);
    s->size = 0;
    return n;
}

/* Advances the search by one frame of logits x (classes, the last the
 * blank).  Returns 0 or WEFT_ENOMEM. */
static int step(beam_search *s, const double *x, int32_t classes)
{
    int32_t blank = classes - 1;
    double top = x[0];
    for (int32_t c = 1; c < classes; c++)
        top = x[c] > top ? x[c] : top;
    size_t nb = extract(s);
    for (size_t i = 0; i < nb; i++)
        s->e[s->branches[i]].oldp = s->e[s->branches[i]].newp;
    for (size_t i = 0; i < nb; i++) {
        beam_entry *b = &s->e[s->branches[i]];
        if (b->parent >= 0) {
            const beam_entry *p = &s->e[b->parent];
            if (p->newp.total != -INFINITY) {
                double previous = b->label == p->label ? p->oldp.blank : p->oldp.total;
                b->newp.label = log_sum_exp(b->newp.label, previous);
            }
            b->newp.label += x[b->label] - top;
        }
        b->newp.blank = b->oldp.total + x[blank] - top;
        b->newp.total = log_sum_exp(b->newp.blank, b->newp.label);
        heap_push(s, s->branches[i]);
    }
    for (size_t i = 0; i < nb; i++) {
        int32_t b = s->branches[i];
        if (!candidate(s, s->e[b].oldp.total))
            continue;
        for (int32_t label = 0; label < blank; label++) {
            int32_t c = child_of(s, b, label);
            if (c >= 0 && s->e[c].newp.total != -INFINITY)
                continue;   /* in the beam: grown by the first pass */
            const beam_entry *e = &s->e[b];
            double previous = label == e->label ? e->oldp.blank : e->oldp.total;
            double p = x[label] - top + previous;
            if (!candidate(s, p))
                continue;
            if (c < 0 && (c = add_entry(s, b, label)) < 0)
                return WEFT_ENOMEM;
            s->e[c].newp = (beam_prob){ .total = p, .blank = -INFINITY, .label = p };
            if (s->size == s->width)
                s->e[heap_pop(s)].newp = gone;
            heap_push(s, c);
        }
    }
    return 0;
}

typedef struct beam_job {
    const weft_tensor *inputs, *lengths;
    double            *out;
    int64_t            frames, batch, classes, width, top;
    size_t             chunks;
    int64_t           *failed;   /* per chunk: the element whose length is bad, or -1 */
} beam_job;

/* Element b's top paths into its [top, frames + 1] rows: the score, then
 * the labels, -1 after them (and -inf, -1 ... for paths the beam lacks). */
static void write_paths(const beam_job *j, beam_search *s, int64_t b)
{
    size_t n = extract(s);
    double *row = j->out + (size_t)(b * j->top * (j->frames + 1));
    for (int64_t p = 0; p < j->top; p++, row += j->frames + 1) {
        for (int64_t t = 0; t <= j->frames; t++)
            row[t] = -1;
        if ((size_t)p >= n) {
            row[0] = -INFINITY;
            continue;
        }
        int32_t k = s->branches[p];
        row[0] = s->e[k].newp.total;
        int64_t len = 0;
        for (int32_t a = k; s->e[a].parent >= 0; a = s->e[a].parent)
            len++;
        for (int32_t a = k; s->e[a].parent >= 0; a = s->e[a].parent)
            row[len--] = s->e[a].label;
    }
}

static int beam_element(beam_job *j, beam_search *s, int64_t b)
{
    int64_t len = weft__index_at(j->lengths, b);
    if (len < 0 || len > j->frames)
        return 1;
    start(s);
    int32_t root = add_entry(s, -1, -1);
    if (root < 0)
        return WEFT_ENOMEM;
    s->e[root].newp = (beam_prob){ .total = 0, .blank = 0, .label = -INFINITY };
    heap_push(s, root);
    size_t stride = (size_t)(j->batch * j->classes);
    for (int64_t t = 0; t < len; t++) {
        size_t at = (size_t)t * stride + (size_t)(b * j->classes);
        for (int64_t c = 0; c < j->classes; c++)
            s->x[c] = j->inputs->dtype == WEFT_F32
                          ? (double)((const float *)j->inputs->data)[at + (size_t)c]
                          : ((const double *)j->inputs->data)[at + (size_t)c];
        if (step(s, s->x, (int32_t)j->classes) != 0)
            return WEFT_ENOMEM;
    }
    write_paths(j, s, b);
    return 0;
}

static int beam_chunk(size_t cb, size_t ce, void *ctx)
{
    beam_job *j = ctx;
    for (size_t c = cb; c < ce; c++) {
        beam_search s = { .width = (size_t)j->width };
        s.heap = weft__malloc(2 * (size_t)j->width * sizeof *s.heap);
        s.x = weft__malloc((size_t)j->classes * sizeof *s.x);
        s.branches = s.heap ? s.heap + j->width : NULL;
        int rc = s.heap && s.x ? 0 : WEFT_ENOMEM;
        j->failed[c] = -1;
        uint64_t b0 = weft__chunk_begin((uint64_t)j->batch, j->chunks, c),
                 b1 = weft__chunk_begin((uint64_t)j->batch, j->chunks, c + 1);
        for (uint64_t b = b0; rc == 0 && b < b1; b++) {
            rc = beam_element(j, &s, (int64_t)b);
            if (rc == 1) {
                j->failed[c] = (int64_t)b;
                rc = 0;
                break;
            }
        }
        weft__free(s.e);
        weft__free(s.slot);
        weft__free(s.heap);
        weft__free(s.x);
        if (rc != 0)
            return weft__errorf(WEFT_ENOMEM, "weft_ctc_beam_search_decoder: out of memory");
    }
    return 0;
}

int weft__eval_ctc_beam(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                        weft_tensor *out)
{
    beam_job j = { .inputs = in[0], .lengths = in[1], .out = weft__tensor_mut(out) };
    j.frames = in[0]->dims[0];
    j.batch = in[0]->dims[1];
    j.classes = in[0]->dims[2];
    j.width = n->attr.index.count;
    j.top = n->attr.index.axis;
    if (j.batch == 0)   /* the lengths' count was checked against it on these shapes */
        return 0;
    uint64_t work = weft__sat_mul(weft__sat_mul((uint64_t)j.batch, (uint64_t)j.frames),
                                  weft__sat_mul((uint64_t)j.width, (uint64_t)j.classes));
    j.chunks = weft__chunk_count_of(rt, work, (uint64_t)j.batch);
    j.failed = weft__malloc(j.chunks * sizeof *j.failed);
    if (!j.failed)
        return weft__errorf(WEFT_ENOMEM, "weft_ctc_beam_search_decoder: out of memory");
    int rc = weft__run_chunks(rt, j.chunks, beam_chunk, &j);
    for (size_t c = 0; rc == 0 && c < j.chunks; c++)
        if (j.failed[c] >= 0)
            rc = weft__errorf(WEFT_EINVAL, "weft_ctc_beam_search_decoder: batch element %lld has "
                              "sequence_length %lld, not within 0..%lld", (long long)j.failed[c],
                              (long long)weft__index_at(j.lengths, j.failed[c]),
                              (long long)j.frames);
    weft__free(j.failed);
    return rc;
}

int weft__infer_ctc_beam(const weft__node *n, const weft_spec *in, weft_spec *out)
{
    static const char fn[] = "weft_ctc_beam_search_decoder";
    const weft_spec *x = &in[0], *len = &in[1];
    char s1[WEFT__SPEC_STR_MAX], s2[WEFT__SPEC_STR_MAX];
    if ((x->dtype != WEFT_F32 && x->dtype != WEFT_F64) ||
        (len->dtype != WEFT_I32 && len->dtype != WEFT_I64))
        return weft__errorf(WEFT_EDTYPE, "%s: the inputs %s are not f32 or f64, or the lengths %s "
                            "not i32 or i64", fn, weft__spec_str(x, s1, sizeof s1),
                            weft__spec_str(len, s2, sizeof s2));
    if (x->rank != 3 || x->dims[0] < 0 || x->dims[2] < 2 || len->rank != 1 ||
        (x->dims[1] >= 0 && len->dims[0] >= 0 && x->dims[1] != len->dims[0]))
        return weft__errorf(WEFT_ESHAPE, "%s: the inputs %s are not [frames, batch, classes] with "
                            "frames and classes (2 or more) known while tracing, or the lengths "
                            "%s not [batch]", fn, weft__spec_str(x, s1, sizeof s1),
                            weft__spec_str(len, s2, sizeof s2));
    memset(out, 0, sizeof *out);
    out->dtype = WEFT_F64;
    out->rank = 3;
    out->dims[0] = x->dims[1] >= 0 ? x->dims[1] : len->dims[0];
    out->dims[1] = n->attr.index.axis;
    out->dims[2] = x->dims[0] + 1;
    return 0;
}
