/* crop_and_resize: tf.image.crop_and_resize's CPU kernel.
 *
 * Box b ([y1, x1, y2, x2], normalized: 0 and 1 are the first and last
 * pixel centres) of image box_indices[b] is sampled on a crop_h x crop_w
 * grid: row y at in_y = y1 (h - 1) + y (y2 - y1) (h - 1) / (crop_h - 1)
 * (the box's centre row when crop_h is 1), columns alike; a sample outside
 * [0, h - 1] x [0, w - 1] takes the extrapolation value.  Bilinear weighs
 * the four pixels around the sample (top + (bottom - top) y_lerp, each
 * left + (right - left) x_lerp), nearest takes the pixel at round(in_y),
 * round(in_x); all in the dtype's arithmetic (TensorFlow's float for
 * f32; its centre of a one-pixel crop in double, rounded).  The work is
 * cut by output rows. */
#include <math.h>

#include "runtime/iface.h"
#include "trace/kernels.h"
#include "trace/shape.h"

typedef struct crop_job {
    const weft__node *n;
    const weft_tensor *images, *boxes, *index;
    char *out;
    int64_t batch, h, w, c, ch, cw;
    uint64_t units;   /* boxes * crop_h */
    size_t chunks;
} crop_job;

#define CROP_ROW(NAME, T, FLOOR, CEIL, ROUND)                                           \
    static void NAME(const crop_job *j, uint64_t unit, int64_t img)                     \
    {                                                                                   \
        const int64_t b = (int64_t)(unit / (uint64_t)j->ch);                            \
        const int64_t y = (int64_t)(unit % (uint64_t)j->ch);                            \
        const T *box = (const T *)weft_tensor_data(j->boxes) + 4 * b;                   \
        const T *im = (const T *)weft_tensor_data(j->images) + img * j->h * j->w * j->c; \
        T *restrict o = (T *)(void *)j->out + (int64_t)unit * j->cw * j->c;             \
        const T y1 = box[0], x1 = box[1], y2 = box[2], x2 = box[3];                     \
        const T hs = j->ch > 1 ? (y2 - y1) * (T)(j->h - 1) / (T)(j->ch - 1) : 0;        \
        const T ws = j->cw > 1 ? (x2 - x1) * (T)(j->w - 1) / (T)(j->cw - 1) : 0;        \
        const T fill = (T)j->n->attr.resize.extrapolation;                              \
        const bool nearest = j->n->attr.resize.method == WEFT_RESIZE_NEAREST;           \
        const T in_y = j->ch > 1 ? y1 * (T)(j->h - 1) + (T)y * hs                       \
                                 : (T)(0.5 * (double)(y1 + y2) * (double)(j->h - 1));   \
        if (in_y < 0 || in_y > (T)(j->h - 1)) {                                         \
            for (int64_t q = 0; q < j->cw * j->c; q++)                                  \
                o[q] = fill;                                                            \
            return;                                                                     \
        }                                                                               \
        const int64_t top = (int64_t)FLOOR(in_y), bottom = (int64_t)CEIL(in_y);         \
        const T y_lerp = in_y - (T)top;                                                 \
        for (int64_t x = 0; x < j->cw; x++, o += j->c) {                                \
            const T in_x = j->cw > 1 ? x1 * (T)(j->w - 1) + (T)x * ws                   \
                                     : (T)(0.5 * (double)(x1 + x2) * (double)(j->w - 1)); \
            if (in_x < 0 || in_x > (T)(j->w - 1)) {                                     \
                for (int64_t q = 0; q < j->c; q++)                                      \
                    o[q] = fill;                                                        \
                continue;                                                               \
            }                                                                           \
            if (nearest) {                                                              \
                const T *px = im + ((int64_t)ROUND(in_y) * j->w + (int64_t)ROUND(in_x)) * j->c; \
                for (int64_t q = 0; q < j->c; q++)                                      \
                    o[q] = px[q];                                                       \
                continue;                                                               \
            }                                                                           \
            const int64_t left = (int64_t)FLOOR(in_x), right = (int64_t)CEIL(in_x);     \
            const T x_lerp = in_x - (T)left;                                            \
            const T *tl = im + (top * j->w + left) * j->c, *tr = im + (top * j->w + right) * j->c; \
            const T *bl = im + (bottom * j->w + left) * j->c;                           \
            const T *br = im + (bottom * j->w + right) * j->c;                          \
            for (int64_t q = 0; q < j->c; q++) {                                        \
                const T t = tl[q] + (tr[q] - tl[q]) * x_lerp;                           \
                const T u = bl[q] + (br[q] - bl[q]) * x_lerp;                           \
                o[q] = t + (u - t) * y_lerp;                                            \
            }                                                                           \
        }                                                                               \
    }

CROP_ROW(crop_f32, float, floorf, ceilf, roundf)
CROP_ROW(crop_f64, double, floor, ceil, round)

static int crop_chunk(size_t cb, size_t ce, void *ctx)
{
    const crop_job *j = ctx;
    uint64_t u1 = weft__chunk_begin(j->units, j->chunks, ce);
    for (uint64_t u = weft__chunk_begin(j->units, j->chunks, cb); u < u1; u++) {
        int64_t img = weft__index_at(j->index, (int64_t)(u / (uint64_t)j->ch));
        if (j->images->dtype == WEFT_F32)
            crop_f32(j, u, img);
        else
            crop_f64(j, u, img);
    }
    return 0;
}

int weft__eval_crop_and_resize(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                               weft_tensor *out)
{
    crop_job j = { .n = n, .images = in[0], .boxes = in[1], .index = in[2],
                   .out = weft__tensor_mut(out), .batch = in[0]->dims[0], .h = in[0]->dims[1],
                   .w = in[0]->dims[2], .c = in[0]->dims[3], .ch = out->dims[1],
                   .cw = out->dims[2] };
    int64_t boxes = in[1]->dims[0];
    if (in[2]->dims[0] != boxes)
        return weft__errorf(WEFT_ESHAPE, "weft_crop_and_resize: %lld boxes and %lld box indices",
                            (long long)boxes, (long long)in[2]->dims[0]);
    for (int64_t b = 0; b < boxes; b++) {
        int64_t i = weft__index_at(j.index, b);
        if (i < 0 || i >= j.batch)
            return weft__errorf(WEFT_EINVAL, "weft_crop_and_resize: box %lld's image index %lld "
                                "is outside the batch of %lld", (long long)b, (long long)i,
                                (long long)j.batch);
    }
    if (out->numel == 0)
        return 0;
    j.units = (uint64_t)boxes * (uint64_t)j.ch;
    j.chunks = weft__chunk_count_of(rt, (uint64_t)out->numel * 4, j.units);
    return weft__run_chunks(rt, j.chunks, crop_chunk, &j);
}
