/* non_max_suppression: TensorFlow's greedy hard NMS
 * (tf.image.non_max_suppression, and non_max_suppression_overlaps with a
 * given overlap matrix in place of the boxes' IoU).
 *
 * The candidates are the boxes whose score is above score_threshold (a
 * NaN score never is), in order of falling score, ties by index.  Each in
 * turn is kept unless its IoU with a box already kept is above
 * iou_threshold, until max_output_size boxes are kept.  A box is two
 * corners in any order, [y1, x1, y2, x2]; IoU is TensorFlow's: 0 when
 * either box has no area, else the intersection over the union, in the
 * boxes' dtype. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/iface.h"
#include "trace/kernels.h"
#include "trace/shape.h"
#include "trace/tensor_impl.h"

typedef struct candidate {
    double score;
    int64_t index;
} candidate;

/* Falling score, then rising index. */
static int by_score(const void *pa, const void *pb)
{
    const candidate *a = pa, *b = pb;
    if (a->score != b->score)
        return a->score > b->score ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

#define IOU_FN(NAME, T)                                                                 \
    static T NAME(const T *bi, const T *bj)                                             \
    {                                                                                   \
        T ymin_i = bi[0] < bi[2] ? bi[0] : bi[2], ymax_i = bi[0] < bi[2] ? bi[2] : bi[0]; \
        T xmin_i = bi[1] < bi[3] ? bi[1] : bi[3], xmax_i = bi[1] < bi[3] ? bi[3] : bi[1]; \
        T ymin_j = bj[0] < bj[2] ? bj[0] : bj[2], ymax_j = bj[0] < bj[2] ? bj[2] : bj[0]; \
        T xmin_j = bj[1] < bj[3] ? bj[1] : bj[3], xmax_j = bj[1] < bj[3] ? bj[3] : bj[1]; \
        T area_i = (ymax_i - ymin_i) * (xmax_i - xmin_i);                               \
        T area_j = (ymax_j - ymin_j) * (xmax_j - xmin_j);                               \
        if (area_i <= 0 || area_j <= 0)                                                 \
            return 0;                                                                   \
        T iy0 = ymin_i > ymin_j ? ymin_i : ymin_j, ix0 = xmin_i > xmin_j ? xmin_i : xmin_j; \
        T iy1 = ymax_i < ymax_j ? ymax_i : ymax_j, ix1 = xmax_i < xmax_j ? xmax_i : xmax_j; \
        T h = iy1 - iy0 > 0 ? iy1 - iy0 : 0, w = ix1 - ix0 > 0 ? ix1 - ix0 : 0;          \
        T inter = h * w;                                                                \
        return inter / (area_i + area_j - inter);                                       \
    }

IOU_FN(iou_f32, float)
IOU_FN(iou_f64, double)

static double iou_of(const weft_tensor *boxes, int64_t i, int64_t j)
{
    if (boxes->dtype == WEFT_F32) {
        const float *b = weft_tensor_data(boxes);
        return iou_f32(b + 4 * i, b + 4 * j);
    }
    const double *b = weft_tensor_data(boxes);
    return iou_f64(b + 4 * i, b + 4 * j);
}

/* v as the boxes' dtype holds it: TensorFlow casts its thresholds to the
 * scores' type before comparing (0.3 as f32 is a little above 0.3). */
static double in_dtype(const weft_tensor *t, double v)
{
    return t->dtype == WEFT_F32 ? (double)(float)v : v;
}

/* How much boxes i and j overlap: their IoU, or with NMS_OVERLAPS the
 * given overlaps[i, j]. */
static double similarity(const weft__node *n, const weft_tensor *boxes, int64_t i, int64_t j)
{
    if (n->op != WEFT__OP_NMS_OVERLAPS)
        return iou_of(boxes, i, j);
    return weft__real_at(boxes, i * boxes->dims[1] + j);
}

/* Greedy hard NMS over the count boxes and scores from index base (a
 * batch element's): their indices, counted from base, into kept (count
 * room), c the candidates' scratch (count room).  Returns how many were
 * kept. */
static int64_t greedy_keep(const weft__node *n, const weft_tensor *boxes,
                           const weft_tensor *scores, int64_t base, int64_t count, candidate *c,
                           int32_t *kept)
{
    double thr = in_dtype(boxes, n->attr.nms.score), iou_thr = in_dtype(boxes, n->attr.nms.iou);
    int64_t nc = 0;
    for (int64_t i = 0; i < count; i++) {
        double s = weft__real_at(scores, base + i);
        if (s > thr)
            c[nc++] = (candidate){ s, i };
    }
    qsort(c, (size_t)nc, sizeof *c, by_score);
    int64_t m = 0;
    for (int64_t k = 0; k < nc && m < n->attr.nms.max_output; k++) {
        bool suppressed = false;
        for (int64_t s = 0; s < m && !suppressed; s++)
            suppressed = similarity(n, boxes, base + c[k].index, base + kept[s]) > iou_thr;
        if (!suppressed)
            kept[m++] = (int32_t)c[k].index;
    }
    return m;
}

int weft__eval_nms(const weft__node *n, const weft_tensor *boxes, const weft_tensor *scores,
                   weft_tensor **out)
{
    const char *op = weft__op_name(n->op);
    int64_t count = boxes->dims[0];
    if (n->op == WEFT__OP_NMS_OVERLAPS && (boxes->dims[1] != count || scores->dims[0] != count))
        return weft__errorf(WEFT_ESHAPE, "weft_%s: overlaps [%lld, %lld] and %lld scores", op,
                            (long long)count, (long long)boxes->dims[1],
                            (long long)scores->dims[0]);
    if (scores->dims[0] != count)
        return weft__errorf(WEFT_ESHAPE, "weft_%s: %lld boxes and %lld scores", op,
                            (long long)count, (long long)scores->dims[0]);
    candidate *c = weft__malloc(sizeof *c * (size_t)(count ? count : 1));
    int32_t *kept = weft__malloc(sizeof *kept * (size_t)(count ? count : 1));
    int rc = 0;
    if (!c || !kept) {
        rc = weft__errorf(WEFT_ENOMEM, "weft_%s: out of memory for %lld boxes", op,
                          (long long)count);
        goto done;
    }
    int64_t m = greedy_keep(n, boxes, scores, 0, count, c, kept);
    weft_tensor *t = NULL;
    rc = weft__tensor_new(WEFT_I32, 1, &m, &t);
    if (rc < 0)
        goto done;
    memcpy(weft__tensor_mut(t), kept, sizeof *kept * (size_t)m);
    *out = t;
done:
    weft__free(c);
    weft__free(kept);
    return rc;
}

/* ---- non_max_suppression_padded ----
 *
 * The greedy rule on each batch element of boxes [..., n, 4] and scores
 * [..., n], one task per chunk of elements; i32 [..., max_output + 1]:
 * each row the count kept, then their indices, zeros after them. */

typedef struct padded_job {
    const weft__node  *n;
    const weft_tensor *boxes, *scores;
    int32_t           *out;
    int64_t            batch, count, width;
    size_t             chunks;
} padded_job;

static int padded_chunk(size_t cb, size_t ce, void *ctx)
{
    padded_job *j = ctx;
    size_t room = (size_t)(j->count ? j->count : 1);
    candidate *c = weft__malloc(sizeof *c * room);
    int32_t *kept = weft__malloc(sizeof *kept * room);
    int rc = 0;
    if (!c || !kept) {
        rc = weft__errorf(WEFT_ENOMEM, "weft_non_max_suppression_padded: out of memory for "
                          "%lld boxes", (long long)j->count);
        goto done;
    }
    for (size_t ch = cb; ch < ce; ch++) {
        int64_t lo = (int64_t)weft__chunk_begin((uint64_t)j->batch, j->chunks, ch);
        int64_t hi = (int64_t)weft__chunk_begin((uint64_t)j->batch, j->chunks, ch + 1);
        for (int64_t b = lo; b < hi; b++) {
            int64_t m = greedy_keep(j->n, j->boxes, j->scores, b * j->count, j->count, c, kept);
            int32_t *row = j->out + b * j->width;
            memset(row, 0, sizeof *row * (size_t)j->width);
            row[0] = (int32_t)m;
            memcpy(row + 1, kept, sizeof *kept * (size_t)m);
        }
    }
done:
    weft__free(c);
    weft__free(kept);
    return rc;
}

int weft__eval_nms_padded(weft_runtime *rt, const weft__node *n, const weft_tensor *boxes,
                          const weft_tensor *scores, weft_tensor *out)
{
    padded_job j = { .n = n, .boxes = boxes, .scores = scores, .out = weft__tensor_mut(out),
                     .count = boxes->dims[boxes->rank - 2], .width = n->attr.nms.max_output + 1,
                     .batch = 1 };
    for (int d = 0; d < boxes->rank - 2; d++)   /* the specs were checked on these shapes */
        j.batch *= boxes->dims[d];
    if (j.batch == 0)
        return 0;
    uint64_t work = weft__sat_mul((uint64_t)j.batch, (uint64_t)j.count * 16);
    j.chunks = weft__chunk_count_of(rt, work, (uint64_t)j.batch);
    return weft__run_chunks(rt, j.chunks, padded_chunk, &j);
}

/* ---- non_max_suppression_with_scores (soft-NMS) ----
 *
 * TensorFlow's NonMaxSuppressionV5: the candidates in a heap by score
 * (ties: lower index first).  The best one is compared with the boxes
 * kept since it was last looked at, newest first: each multiplies its
 * score by exp(-0.5 iou^2 / sigma) (with sigma 0: by 1, or a hard
 * suppression when the IoU is above the threshold), stopping once the
 * score is no longer above the score threshold.  Unchanged, it is kept;
 * lowered but still above the threshold, it goes back into the heap.
 * The result is f64 [kept, 2]: each row the index and the score kept. */

typedef struct soft_candidate {
    double score;
    int64_t index, seen;     /* seen: the kept boxes it was compared with */
} soft_candidate;

static bool soft_before(const soft_candidate *a, const soft_candidate *b)
{
    return a->score > b->score || (a->score == b->score && a->index < b->index);
}

static void heap_push(soft_candidate *h, int64_t *n, soft_candidate c)
{
    int64_t i = (*n)++;
    while (i > 0 && soft_before(&c, &h[(i - 1) / 2])) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = c;
}

static soft_candidate heap_pop(soft_candidate *h, int64_t *n)
{
    soft_candidate top = h[0], last = h[--*n];
    int64_t i = 0;
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && soft_before(&h[c + 1], &h[c]))
            c++;
        if (!soft_before(&h[c], &last))
            break;
        h[i] = h[c];
        i = c;
    }
    if (*n > 0)
        h[i] = last;
    return top;
}

int weft__eval_nms_scored(const weft__node *n, const weft_tensor *boxes,
                          const weft_tensor *scores, weft_tensor **out)
{
    int64_t count = boxes->dims[0];
    if (scores->dims[0] != count)
        return weft__errorf(WEFT_ESHAPE, "weft_non_max_suppression_with_scores: %lld boxes and "
                            "%lld scores", (long long)count, (long long)scores->dims[0]);
    soft_candidate *heap = weft__malloc(sizeof *heap * (size_t)(count ? count : 1));
    double *kept = weft__malloc(sizeof *kept * 2 * (size_t)(count ? count : 1));
    int rc = 0;
    if (!heap || !kept) {
        rc = weft__errorf(WEFT_ENOMEM, "weft_non_max_suppression_with_scores: out of memory "
                          "for %lld boxes", (long long)count);
        goto done;
    }
    double thr = in_dtype(boxes, n->attr.nms.score), iou_thr = in_dtype(boxes, n->attr.nms.iou);
    double sigma = n->attr.nms.sigma;
    bool soft = sigma > 0, f32 = boxes->dtype == WEFT_F32;
    double scale = soft ? -0.5 / sigma : 0;
    float scale_f = soft ? -0.5f / (float)sigma : 0;
    int64_t h = 0, m = 0;
    for (int64_t i = 0; i < count; i++) {
        double s = weft__real_at(scores, i);
        if (s > thr)
            heap_push(heap, &h, (soft_candidate){ s, i, 0 });
    }
    while (m < n->attr.nms.max_output && h > 0) {
        soft_candidate c = heap_pop(heap, &h);
        double original = c.score;
        bool hard = false;
        for (int64_t j = m - 1; j >= c.seen; j--) {
            double sim = iou_of(boxes, c.index, (int64_t)kept[2 * j]);
            if (!soft && sim > iou_thr) {
                hard = true;
                break;
            }
            /* In the scores' dtype, as TensorFlow's T (a product of two
             * floats rounds once to float, exactly as float arithmetic). */
            if (f32) {
                float w = expf(scale_f * (float)sim * (float)sim);
                c.score = (double)(float)(c.score * (double)w);
            } else
                c.score *= exp(scale * sim * sim);
            if (c.score <= thr)
                break;
        }
        c.seen = m;
        if (hard)
            continue;
        if (c.score == original) {
            kept[2 * m] = (double)c.index;
            kept[2 * m + 1] = c.score;
            m++;
        } else if (c.score > thr) {
            heap_push(heap, &h, c);
        }
    }
    weft_tensor *t = NULL;
    rc = weft__tensor_new(WEFT_F64, 2, (const int64_t[]){ m, 2 }, &t);
    if (rc < 0)
        goto done;
    memcpy(weft__tensor_mut(t), kept, sizeof *kept * 2 * (size_t)m);
    *out = t;
done:
    weft__free(heap);
    weft__free(kept);
    return rc;
}

/* ---- combined_non_max_suppression ----
 *
 * TensorFlow's CombinedNonMaxSuppression: per image and class, greedy hard
 * NMS of the boxes scoring above the threshold (at most
 * min(max_per_class, n) kept); then the kept boxes of all classes by
 * falling score, the first `per_batch` of them.  The node's result is i32
 * [batch, per_batch, 2]: each row the box index and the class, or -1, -1
 * past the image's detections; weft_combined_non_max_suppression gathers
 * the boxes and scores from it.  Ties, which TensorFlow leaves to its sort,
 * go to the lower box index within a class and to the lower class across
 * classes.  The work is cut by images. */

typedef struct detection {
    double score;
    int32_t box, cls;
    int64_t order;     /* where it was kept: class by class, in the order kept */
} detection;

/* Falling score, then the order kept (so the lower class first). */
static int by_detection(const void *pa, const void *pb)
{
    const detection *a = pa, *b = pb;
    if (a->score != b->score)
        return a->score > b->score ? -1 : 1;
    return (a->order > b->order) - (a->order < b->order);
}

typedef struct cnms_job {
    const weft__node *n;
    const weft_tensor *boxes, *scores;
    weft_tensor *out;
    int64_t n_boxes, q, classes, per_class, per_batch, batch;
    double score_thr, iou_thr;   /* the node's thresholds in the boxes' dtype */
    size_t chunks;
} cnms_job;

static double cnms_iou(const cnms_job *j, int64_t img, int64_t cls, int64_t a, int64_t b)
{
    int64_t qc = j->q > 1 ? cls : 0, base = img * j->n_boxes * j->q;
    if (j->boxes->dtype == WEFT_F32) {
        const float *p = weft_tensor_data(j->boxes);
        return iou_f32(p + 4 * (base + a * j->q + qc), p + 4 * (base + b * j->q + qc));
    }
    const double *p = weft_tensor_data(j->boxes);
    return iou_f64(p + 4 * (base + a * j->q + qc), p + 4 * (base + b * j->q + qc));
}

/* Hard NMS of class cls in image img: its kept boxes appended to det. */
static size_t cnms_class(const cnms_job *j, int64_t img, int64_t cls, candidate *c,
                         detection *det, size_t n_det)
{
    int64_t nc = 0, row = img * j->n_boxes * j->classes;
    for (int64_t i = 0; i < j->n_boxes; i++) {
        double s = weft__real_at(j->scores, row + i * j->classes + cls);
        if (s > j->score_thr)
            c[nc++] = (candidate){ s, i };
    }
    qsort(c, (size_t)nc, sizeof *c, by_score);
    size_t first = n_det;
    for (int64_t k = 0; k < nc && (int64_t)(n_det - first) < j->per_class; k++) {
        bool suppressed = false;
        for (size_t s = first; s < n_det && !suppressed; s++)
            suppressed = cnms_iou(j, img, cls, c[k].index, det[s].box) > j->iou_thr;
        if (!suppressed) {
            det[n_det] = (detection){ c[k].score, (int32_t)c[k].index, (int32_t)cls,
                                      (int64_t)n_det };
            n_det++;
        }
    }
    return n_det;
}

static int cnms_chunk(size_t cb, size_t ce, void *ctx)
{
    const cnms_job *j = ctx;
    candidate *c = weft__malloc(sizeof *c * (size_t)(j->n_boxes ? j->n_boxes : 1));
    detection *det = weft__malloc(sizeof *det * (size_t)(j->per_class * j->classes + 1));
    int rc = 0;
    if (!c || !det) {
        rc = weft__errorf(WEFT_ENOMEM, "weft_combined_non_max_suppression: out of memory for "
                          "%lld boxes", (long long)j->n_boxes);
        goto done;
    }
    int32_t *out = weft__tensor_mut(j->out);
    for (size_t k = cb; k < ce; k++) {
        int64_t b0 = (int64_t)weft__chunk_begin((uint64_t)j->batch, j->chunks, k);
        int64_t b1 = (int64_t)weft__chunk_begin((uint64_t)j->batch, j->chunks, k + 1);
        for (int64_t img = b0; img < b1; img++) {
            size_t n_det = 0;
            for (int64_t cls = 0; cls < j->classes; cls++)
                n_det = cnms_class(j, img, cls, c, det, n_det);
            qsort(det, n_det, sizeof *det, by_detection);
            int32_t *o = out + img * j->per_batch * 2;
            for (int64_t r = 0; r < j->per_batch; r++) {
                bool valid = (size_t)r < n_det;
                o[2 * r] = valid ? det[r].box : -1;
                o[2 * r + 1] = valid ? det[r].cls : -1;
            }
        }
    }
done:
    weft__free(c);
    weft__free(det);
    return rc;
}

int weft__eval_combined_nms(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                            weft_tensor *out)
{
    const weft_tensor *b = in[0], *s = in[1];
    cnms_job j = { .n = n, .boxes = b, .scores = s, .out = out, .batch = b->dims[0],
                   .n_boxes = b->dims[1], .q = b->dims[2], .classes = s->dims[2],
                   .per_batch = out->dims[1] };
    if (s->dims[0] != j.batch || s->dims[1] != j.n_boxes || (j.q != 1 && j.q != j.classes))
        return weft__errorf(WEFT_ESHAPE, "weft_combined_non_max_suppression: boxes [%lld, %lld, "
                            "%lld, 4] do not fit scores [%lld, %lld, %lld]", (long long)j.batch,
                            (long long)j.n_boxes, (long long)j.q, (long long)s->dims[0],
                            (long long)s->dims[1], (long long)j.classes);
    j.per_class = n->attr.cnms.max_per_class < j.n_boxes ? n->attr.cnms.max_per_class : j.n_boxes;
    j.score_thr = in_dtype(b, n->attr.cnms.score);
    j.iou_thr = in_dtype(b, n->attr.cnms.iou);
    if (out->numel == 0)
        return 0;
    j.chunks = weft__chunk_count_of(rt, (uint64_t)(j.batch * j.n_boxes * j.classes * 16),
                                    (uint64_t)j.batch);
    return weft__run_chunks(rt, j.chunks, cnms_chunk, &j);
}
