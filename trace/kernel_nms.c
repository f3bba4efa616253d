/* non_max_suppression: TensorFlow's greedy hard NMS
 * (tf.image.non_max_suppression).
 *
 * The candidates are the boxes whose score is above score_threshold (a
 * NaN score never is), in order of falling score, ties by index.  Each in
 * turn is kept unless its IoU with a box already kept is above
 * iou_threshold, until max_output_size boxes are kept.  A box is two
 * corners in any order, [y1, x1, y2, x2]; IoU is TensorFlow's: 0 when
 * either box has no area, else the intersection over the union, in the
 * boxes' dtype. */
#include <stdlib.h>
#include <string.h>

#include "runtime/iface.h"
#include "trace/shape.h"

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

static double score_at(const weft_tensor *scores, int64_t i)
{
    return scores->dtype == WEFT_F32 ? ((const float *)weft_tensor_data(scores))[i]
                                     : ((const double *)weft_tensor_data(scores))[i];
}

int weft__eval_nms(const weft__node *n, const weft_tensor *boxes, const weft_tensor *scores,
                   weft_tensor **out)
{
    int64_t count = boxes->dims[0];
    if (scores->dims[0] != count)
        return weft__errorf(WEFT_ESHAPE, "weft_non_max_suppression: %lld boxes and %lld scores",
                            (long long)count, (long long)scores->dims[0]);
    candidate *c = weft__malloc(sizeof *c * (size_t)(count ? count : 1));
    int32_t *kept = weft__malloc(sizeof *kept * (size_t)(count ? count : 1));
    int rc = 0;
    if (!c || !kept) {
        rc = weft__errorf(WEFT_ENOMEM, "weft_non_max_suppression: out of memory for %lld boxes",
                          (long long)count);
        goto done;
    }
    int64_t nc = 0;
    for (int64_t i = 0; i < count; i++) {
        double s = score_at(scores, i);
        if (s > n->attr.nms.score)
            c[nc++] = (candidate){ s, i };
    }
    qsort(c, (size_t)nc, sizeof *c, by_score);
    int64_t m = 0;
    for (int64_t k = 0; k < nc && m < n->attr.nms.max_output; k++) {
        bool suppressed = false;
        for (int64_t s = 0; s < m && !suppressed; s++)
            suppressed = iou_of(boxes, c[k].index, kept[s]) > n->attr.nms.iou;
        if (!suppressed)
            kept[m++] = (int32_t)c[k].index;
    }
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
