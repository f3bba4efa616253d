/* draw_bounding_boxes: TensorFlow's DrawBoundingBoxesV2 CPU kernel.
 *
 * The images are copied, then each image's boxes ([y_min, x_min, y_max,
 * x_max], normalized) are outlined in order, one pixel wide, box j in
 * colour j mod k: the edges are rows and columns box * (dim - 1) in f32,
 * truncated toward zero; an inverted box or one wholly outside is skipped,
 * and an edge outside the image is not drawn (its perpendicular edges are
 * clamped to the image).  The work is cut by images. */
#include <math.h>
#include <string.h>

#include "runtime/iface.h"
#include "trace/kernels.h"
#include "trace/shape.h"
#include "trace/tensor_impl.h"

typedef struct boxes_job {
    const weft_tensor *images, *boxes, *colors;
    weft_tensor *out;
    int64_t batch, h, w, c, n_boxes;
    size_t chunks;
} boxes_job;

/* TensorFlow's float box coordinate times (len - 1), truncated; a NaN or
 * one past the int64 range (undefined there) lands far outside. */
static int64_t edge(float coord, int64_t len)
{
    float at = coord * (float)(len - 1);
    if (!(fabsf(at) < 0x1p62f))
        return at > 0 ? INT64_MAX / 2 : INT64_MIN / 2;
    return (int64_t)at;
}

static void paint(const boxes_job *j, int64_t b, int64_t y, int64_t x, const float *color)
{
    size_t at = (size_t)(((b * j->h + y) * j->w + x) * j->c);
    for (int64_t ch = 0; ch < j->c; ch++) {
        if (j->out->dtype == WEFT_F32)
            ((float *)weft__tensor_mut(j->out))[at + (size_t)ch] = color[ch];
        else
            ((double *)weft__tensor_mut(j->out))[at + (size_t)ch] = color[ch];
    }
}

static void draw_image(const boxes_job *j, int64_t b)
{
    const float *boxes = (const float *)weft_tensor_data(j->boxes) + b * j->n_boxes * 4;
    const float *colors = weft_tensor_data(j->colors);
    int64_t k = j->colors->dims[0], stride = j->colors->dims[1];
    for (int64_t i = 0; i < j->n_boxes; i++) {
        const float *box = boxes + 4 * i, *color = colors + (i % k) * stride;
        int64_t top = edge(box[0], j->h), bottom = edge(box[2], j->h);
        int64_t left = edge(box[1], j->w), right = edge(box[3], j->w);
        if (top > bottom || left > right)
            continue;   /* inverted */
        if (top >= j->h || bottom < 0 || left >= j->w || right < 0)
            continue;   /* wholly outside */
        int64_t top_c = top > 0 ? top : 0, bottom_c = bottom < j->h - 1 ? bottom : j->h - 1;
        int64_t left_c = left > 0 ? left : 0, right_c = right < j->w - 1 ? right : j->w - 1;
        for (int64_t x = left_c; top >= 0 && x <= right_c; x++)
            paint(j, b, top, x, color);
        for (int64_t x = left_c; bottom < j->h && x <= right_c; x++)
            paint(j, b, bottom, x, color);
        for (int64_t y = top_c; left >= 0 && y <= bottom_c; y++)
            paint(j, b, y, left, color);
        for (int64_t y = top_c; right < j->w && y <= bottom_c; y++)
            paint(j, b, y, right, color);
    }
}

static int boxes_chunk(size_t cb, size_t ce, void *ctx)
{
    const boxes_job *j = ctx;
    for (size_t c = cb; c < ce; c++) {
        uint64_t b0 = weft__chunk_begin((uint64_t)j->batch, j->chunks, c);
        uint64_t b1 = weft__chunk_begin((uint64_t)j->batch, j->chunks, c + 1);
        for (uint64_t b = b0; b < b1; b++)
            draw_image(j, (int64_t)b);
    }
    return 0;
}

int weft__eval_draw_boxes(weft_runtime *rt, weft_tensor *const *in, weft_tensor *out)
{
    boxes_job j = { .images = in[0], .boxes = in[1], .colors = in[2], .out = out,
                    .h = in[0]->dims[1], .w = in[0]->dims[2], .c = in[0]->dims[3],
                    .n_boxes = in[1]->dims[1] };
    int64_t batch = j.batch = in[0]->dims[0];
    if (in[1]->dims[0] != batch)
        return weft__errorf(WEFT_ESHAPE, "weft_draw_bounding_boxes: %lld images but boxes for "
                            "%lld", (long long)batch, (long long)in[1]->dims[0]);
    if (in[2]->dims[0] < 1 || in[2]->dims[1] < j.c)
        return weft__errorf(WEFT_ESHAPE, "weft_draw_bounding_boxes: %lld colours of %lld "
                            "channels for images of %lld", (long long)in[2]->dims[0],
                            (long long)in[2]->dims[1], (long long)j.c);
    if (out->numel == 0)
        return 0;
    memcpy(weft__tensor_mut(out), weft_tensor_data(in[0]), (size_t)in[0]->nbytes);
    j.chunks = weft__chunk_count_of(rt, (uint64_t)(batch * j.n_boxes * (j.h + j.w)),
                                    (uint64_t)batch);
    return weft__run_chunks(rt, j.chunks, boxes_chunk, &j);
}

int weft__infer_draw_boxes(const weft_spec *in, weft_spec *out)
{
    static const char fn[] = "weft_draw_bounding_boxes";
    const weft_spec *im = &in[0], *bx = &in[1], *co = &in[2];
    char s1[WEFT__SPEC_STR_MAX], s2[WEFT__SPEC_STR_MAX];
    if (im->dtype != WEFT_F32 && im->dtype != WEFT_F64)
        return weft__errorf(WEFT_EDTYPE, "%s: the images %s are not f32 or f64", fn,
                            weft__spec_str(im, s1, sizeof s1));
    int64_t c = im->rank == 4 ? im->dims[3] : 0;
    if (im->rank != 4 || (c != 1 && c != 3 && c != 4))
        return weft__errorf(WEFT_ESHAPE, "%s: the images %s are not [batch, h, w, 1, 3 or 4] "
                            "(channels known while tracing)", fn,
                            weft__spec_str(im, s1, sizeof s1));
    bool boxes_fit = bx->dtype == WEFT_F32 && bx->rank == 3 &&
                     (bx->dims[2] == 4 || bx->dims[2] == WEFT_DIM_ANY) &&
                     (bx->dims[0] == im->dims[0] || bx->dims[0] == WEFT_DIM_ANY ||
                      im->dims[0] == WEFT_DIM_ANY);
    if (!boxes_fit)
        return weft__errorf(bx->dtype != WEFT_F32 ? WEFT_EDTYPE : WEFT_ESHAPE,
                            "%s: the boxes %s are not f32 [batch, n, 4] for the images %s", fn,
                            weft__spec_str(bx, s1, sizeof s1), weft__spec_str(im, s2, sizeof s2));
    if (co->dtype != WEFT_F32 || co->rank != 2 ||
        (co->dims[1] != WEFT_DIM_ANY && co->dims[1] < c))
        return weft__errorf(co->dtype != WEFT_F32 ? WEFT_EDTYPE : WEFT_ESHAPE,
                            "%s: the colours %s are not f32 [k, >= %lld]", fn,
                            weft__spec_str(co, s1, sizeof s1), (long long)c);
    *out = *im;
    return 0;
}
