/* generate_bounding_box_proposals (tf.image.generate_bounding_box_proposals,
 * a GPU-only kernel in TensorFlow): Faster R-CNN's region proposals, one
 * image per task, as TensorFlow's kernel computes them:
 *
 *   - the image's H x W x A anchors ranked by falling score (ties by
 *     index, as its stable radix sort; NaN last), the best pre_nms kept;
 *   - each decoded by its deltas (dy, dx, dh, dw; dh and dw at most
 *     log(1000 / 16)) about its anchor's centre, clipped to the image
 *     (image_info's height and width), dropped when its shorter side is
 *     below min_size times image_info's scale;
 *   - greedy NMS in rank order: a box is dropped when its intersection
 *     with a kept one exceeds iou times their union (0 when either has no
 *     area), until post_nms are kept.
 *
 * The arithmetic is the dtype's (TensorFlow's float for f32).  The node's
 * result is [batch, post_nms, 5]: each proposal's y1, x1, y2, x2 and
 * score, zeros after the last. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/iface.h"
#include "trace/kernels.h"
#include "trace/shape.h"
#include "trace/tensor_impl.h"

typedef struct ranked {
    double score;
    int64_t index;
} ranked;

typedef struct proposals_job {
    const weft__node *n;
    weft_tensor *const *in;   /* scores, deltas, image_info, anchors */
    char *out;
    int64_t anchors_per_image;   /* H W A */
    size_t chunks;
    int64_t batch;
} proposals_job;

/* Falling score, NaN last, then rising index. */
static int by_rank(const void *pa, const void *pb)
{
    const ranked *a = pa, *b = pb;
    if (a->score != b->score && !(isnan(a->score) && isnan(b->score))) {
        if (isnan(a->score) || isnan(b->score))
            return isnan(a->score) ? 1 : -1;
        return a->score > b->score ? -1 : 1;
    }
    return (a->index > b->index) - (a->index < b->index);
}

/* Image img's proposals into its rows of the result: the decode and the
 * NMS of the ranked candidates r[0..count), box scratch 4 count. */
#define PROPOSALS_IMAGE(NAME, T, EXP)                                                   \
    static void NAME(const proposals_job *j, int64_t img, const ranked *r, int64_t count, \
                     T *box, T *score)                                                  \
    {                                                                                   \
        const T *deltas = (const T *)weft_tensor_data(j->in[1]) +                       \
                          4 * img * j->anchors_per_image;                               \
        const T *info = (const T *)weft_tensor_data(j->in[2]) + 5 * img;                \
        const T *anchors = weft_tensor_data(j->in[3]);                                  \
        const T clip = (T)log(1000.0 / 16.0);                                           \
        const T min_side = (T)j->n->attr.proposals.min_size * info[2];                  \
        const T iou = (T)j->n->attr.proposals.iou;                                      \
        int64_t kept = 0;                                                               \
        T *out = (T *)(void *)j->out + 5 * img * j->n->attr.proposals.post_nms;         \
        for (int64_t k = 0; k < count; k++) {                                           \
            const T *a = anchors + 4 * r[k].index, *d = deltas + 4 * r[k].index;        \
            T dh = d[2] < clip ? d[2] : clip, dw = d[3] < clip ? d[3] : clip;           \
            T w = a[3] - a[1], h = a[2] - a[0];                                         \
            T cx = a[1] + (T)0.5 * w, cy = a[0] + (T)0.5 * h;                           \
            T px = cx + w * d[1], pw = w * EXP(dw);                                     \
            T py = cy + h * d[0], ph = h * EXP(dh);                                     \
            T c[4] = { py - (T)0.5 * ph, px - (T)0.5 * pw, py + (T)0.5 * ph,            \
                       px + (T)0.5 * pw };                                              \
            for (int e = 0; e < 4; e++) { /* y, x, y, x: to [0, height] or [0, width] */ \
                T lim = info[e % 2];                                                    \
                c[e] = c[e] < lim ? c[e] : lim;                                         \
                c[e] = c[e] > 0 ? c[e] : 0;                                             \
            }                                                                           \
            T side = c[3] - c[1] < c[2] - c[0] ? c[3] - c[1] : c[2] - c[0];             \
            if (!(side >= min_side))                                                    \
                continue;                                                               \
            T area = (c[2] - c[0]) * (c[3] - c[1]);                                     \
            bool dropped = false;                                                       \
            for (int64_t q = 0; q < kept && !dropped; q++) {                            \
                const T *b = box + 4 * q;                                               \
                T b_area = (b[2] - b[0]) * (b[3] - b[1]);                               \
                if (area == 0 || b_area == 0)                                           \
                    continue;                                                           \
                T iy = (c[2] < b[2] ? c[2] : b[2]) - (c[0] > b[0] ? c[0] : b[0]);       \
                T ix = (c[3] < b[3] ? c[3] : b[3]) - (c[1] > b[1] ? c[1] : b[1]);       \
                T inter = (iy > 0 ? iy : 0) * (ix > 0 ? ix : 0);                        \
                dropped = inter > (area + b_area - inter) * iou;                        \
            }                                                                           \
            if (dropped)                                                                \
                continue;                                                               \
            memcpy(box + 4 * kept, c, sizeof c);                                        \
            score[kept++] = (T)r[k].score;                                              \
            if (kept == j->n->attr.proposals.post_nms)                                  \
                break;                                                                  \
        }                                                                               \
        for (int64_t q = 0; q < kept; q++) {                                            \
            memcpy(out + 5 * q, box + 4 * q, 4 * sizeof(T));                            \
            out[5 * q + 4] = score[q];                                                  \
        }                                                                               \
        memset(out + 5 * kept, 0,                                                       \
               (size_t)(5 * (j->n->attr.proposals.post_nms - kept)) * sizeof(T));       \
    }

PROPOSALS_IMAGE(image_f32, float, expf)
PROPOSALS_IMAGE(image_f64, double, exp)

static int proposals_chunk(size_t cb, size_t ce, void *ctx)
{
    const proposals_job *j = ctx;
    int64_t n = j->anchors_per_image, post = j->n->attr.proposals.post_nms;
    int64_t count = n < j->n->attr.proposals.pre_nms ? n : j->n->attr.proposals.pre_nms;
    int64_t kept_room = count < post ? count : post;
    ranked *r = weft__malloc((size_t)(n ? n : 1) * sizeof *r);
    double *scratch = weft__malloc((size_t)(5 * kept_room + 1) * sizeof *scratch);
    int rc = r && scratch ? 0
                          : weft__errorf(WEFT_ENOMEM, "weft_generate_bounding_box_proposals: out "
                                         "of memory");
    for (size_t c = cb; rc == 0 && c < ce; c++) {
        uint64_t i0 = weft__chunk_begin((uint64_t)j->batch, j->chunks, c),
                 i1 = weft__chunk_begin((uint64_t)j->batch, j->chunks, c + 1);
        for (uint64_t img = i0; img < i1; img++) {
            for (int64_t k = 0; k < n; k++)
                r[k] = (ranked){ weft__real_at(j->in[0], (int64_t)img * n + k), k };
            qsort(r, (size_t)n, sizeof *r, by_rank);
            if (j->in[0]->dtype == WEFT_F32)
                image_f32(j, (int64_t)img, r, count, (float *)scratch,
                          (float *)scratch + 4 * kept_room);
            else
                image_f64(j, (int64_t)img, r, count, scratch, scratch + 4 * kept_room);
        }
    }
    weft__free(r);
    weft__free(scratch);
    return rc;
}

int weft__eval_box_proposals(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                             weft_tensor *out)
{
    proposals_job j = { .n = n, .in = in, .out = weft__tensor_mut(out) };
    j.batch = in[0]->dims[0];
    j.anchors_per_image = in[0]->dims[1] * in[0]->dims[2] * in[0]->dims[3];
    if (j.batch == 0)
        return 0;
    uint64_t n_img = (uint64_t)j.anchors_per_image;
    uint64_t work = weft__sat_mul((uint64_t)j.batch, weft__sat_mul(n_img + 1, 24));
    j.chunks = weft__chunk_count_of(rt, work, (uint64_t)j.batch);
    return weft__run_chunks(rt, j.chunks, proposals_chunk, &j);
}

/* Dim d of s, or -1 when s's rank is shorter or the dim unknown. */
static int64_t dim_or_unknown(const weft_spec *s, int d)
{
    return d < s->rank ? s->dims[d] : -1;
}

/* Whether two dims can agree (either unknown, or equal). */
static bool agree(int64_t a, int64_t b)
{
    return a < 0 || b < 0 || a == b;
}

int weft__infer_box_proposals(const weft__node *n, const weft_spec *in, weft_spec *out)
{
    static const char fn[] = "weft_generate_bounding_box_proposals";
    const weft_spec *sc = &in[0], *de = &in[1], *info = &in[2], *an = &in[3];
    char s1[WEFT__SPEC_STR_MAX], s2[WEFT__SPEC_STR_MAX], s3[WEFT__SPEC_STR_MAX],
        s4[WEFT__SPEC_STR_MAX];
    if ((sc->dtype != WEFT_F32 && sc->dtype != WEFT_F64) || de->dtype != sc->dtype ||
        info->dtype != sc->dtype || an->dtype != sc->dtype)
        return weft__errorf(WEFT_EDTYPE, "%s: the scores %s, deltas %s, image_info %s and "
                            "anchors %s are not all f32 or all f64", fn,
                            weft__spec_str(sc, s1, sizeof s1), weft__spec_str(de, s2, sizeof s2),
                            weft__spec_str(info, s3, sizeof s3),
                            weft__spec_str(an, s4, sizeof s4));
    int64_t a = dim_or_unknown(sc, 3), a4 = a >= 0 ? 4 * a : -1;
    bool ok = sc->rank == 4 && de->rank == 4 && info->rank == 2 && an->rank == 3;
    for (int d = 0; ok && d < 3; d++)   /* batch, height, width */
        ok = agree(sc->dims[d], de->dims[d]);
    ok = ok && agree(sc->dims[0], info->dims[0]) && agree(info->dims[1], 5) &&
         agree(sc->dims[1], an->dims[0]) && agree(sc->dims[2], an->dims[1]) &&
         agree(a4, de->dims[3]) && agree(a4, an->dims[2]);
    if (!ok)
        return weft__errorf(WEFT_ESHAPE, "%s: the scores %s, deltas %s, image_info %s and "
                            "anchors %s are not [batch, height, width, anchors], [batch, "
                            "height, width, 4 anchors], [batch, 5] and [height, width, 4 "
                            "anchors]", fn, weft__spec_str(sc, s1, sizeof s1),
                            weft__spec_str(de, s2, sizeof s2),
                            weft__spec_str(info, s3, sizeof s3),
                            weft__spec_str(an, s4, sizeof s4));
    memset(out, 0, sizeof *out);
    out->dtype = sc->dtype;
    out->rank = 3;
    out->dims[0] = sc->dims[0] >= 0 ? sc->dims[0] : de->dims[0] >= 0 ? de->dims[0] : info->dims[0];
    out->dims[1] = n->attr.proposals.post_nms;
    out->dims[2] = 5;
    return 0;
}
