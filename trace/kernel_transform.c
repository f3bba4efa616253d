/* image_projective_transform: TensorFlow's ImageProjectiveTransformV3 CPU
 * kernel.
 *
 * Output pixel (x, y) of image i reads the input at ((a0 x + a1 y + a2) /
 * k, (b0 x + b1 y + b2) / k), k = c0 x + c1 y + 1, with (a0, a1, a2, b0,
 * b1, b2, c0, c1) row i of the transforms (or row 0 for all); k == 0 gives
 * the fill value.  The coordinate is first mapped into the image by the
 * fill mode (reflect, wrap, nearest: clamped to [0, len - 1]; constant:
 * left as it is), then read by nearest (round) or bilinear interpolation,
 * a pixel outside the image reading as the fill value.  Coordinates and
 * weights are floats, as TensorFlow's; f32 pixels interpolate in float
 * (TensorFlow's bits), f64 pixels in double (TensorFlow rounds them to
 * float first).  The work is cut by output rows. */
#include <math.h>

#include "runtime/iface.h"
#include "trace/kernels.h"
#include "trace/shape.h"

typedef struct transform_job {
    const weft__node *n;
    const weft_tensor *images;
    const float *transforms;
    int64_t n_transforms;
    char *out;
    int64_t h, w, c, oh, ow;
    uint64_t rows;   /* batch * oh */
    size_t chunks;
} transform_job;

/* Coordinates too far out for TensorFlow's integer arithmetic (undefined
 * there) clamp to the nearer edge. */
#define FAR_OUT 0x1p60f

/* TensorFlow's MapCoordinate for each fill mode (scipy's rules), in its
 * mix of int64 and float arithmetic. */
static float map_reflect(float in, int64_t len)
{
    if (in < 0) {
        if (len <= 1) {
            in = 0;
        } else {
            int64_t sz2 = 2 * len;
            if (in < (float)sz2)
                in = (float)(sz2 * (int64_t)(-in / (float)sz2)) + in;
            in = in < (float)-len ? in + (float)sz2 : -in - 1;
        }
    } else if (in > (float)(len - 1)) {
        if (len <= 1) {
            in = 0;
        } else {
            int64_t sz2 = 2 * len;
            in -= (float)(sz2 * (int64_t)(in / (float)sz2));
            if (in >= (float)len)
                in = (float)sz2 - in - 1;
        }
    }
    return fminf(fmaxf(in, 0.0f), (float)(len - 1));
}

static float map_wrap(float in, int64_t len)
{
    if (in < 0) {
        if (len <= 1) {
            in = 0;
        } else {
            int64_t sz = len - 1;
            in += (float)(len * ((int64_t)(-in / (float)sz) + 1));
        }
    } else if (in > (float)(len - 1)) {
        if (len <= 1) {
            in = 0;
        } else {
            int64_t sz = len - 1;
            in -= (float)(len * (int64_t)(in / (float)sz));
        }
    }
    return fminf(fmaxf(in, 0.0f), (float)(len - 1));
}

static float map_coordinate(int mode, float in, int64_t len)
{
    if (mode != WEFT_FILL_CONSTANT && !(fabsf(in) < FAR_OUT))
        return in > 0 ? (float)(len - 1) : 0.0f;
    switch (mode) {
    case WEFT_FILL_REFLECT: return map_reflect(in, len);
    case WEFT_FILL_WRAP: return map_wrap(in, len);
    case WEFT_FILL_NEAREST: return fminf(fmaxf(in, 0.0f), (float)(len - 1));
    default: return in;   /* WEFT_FILL_CONSTANT */
    }
}

/* One output row of images of element type T, weights computed as W
 * (float for f32, TensorFlow's; double for f64). */
#define TRANSFORM_ROW(NAME, T, W)                                                            \
    static void NAME(const transform_job *j, uint64_t row)                                   \
    {                                                                                        \
        const int64_t b = (int64_t)(row / (uint64_t)j->oh);                                  \
        const int64_t y = (int64_t)(row % (uint64_t)j->oh);                                  \
        const float *t = j->transforms + (j->n_transforms == 1 ? 0 : 8 * b);                 \
        const T *im = (const T *)weft_tensor_data(j->images) + b * j->h * j->w * j->c;       \
        T *restrict o = (T *)(void *)j->out + (int64_t)row * j->ow * j->c;                   \
        const T fill = (T)j->n->attr.transform.fill_value;                                   \
        const int mode = j->n->attr.transform.fill_mode;                                     \
        const bool nearest = j->n->attr.transform.interpolation == WEFT_RESIZE_NEAREST;      \
        const int64_t h = j->h, w = j->w, c = j->c;                                          \
        for (int64_t x = 0; x < j->ow; x++, o += c) {                                        \
            float k = t[6] * (float)x + t[7] * (float)y + 1.0f;                              \
            if (k == 0) {                                                                    \
                for (int64_t ch = 0; ch < c; ch++)                                           \
                    o[ch] = fill;                                                            \
                continue;                                                                    \
            }                                                                                \
            float in_x = (t[0] * (float)x + t[1] * (float)y + t[2]) / k;                     \
            float in_y = (t[3] * (float)x + t[4] * (float)y + t[5]) / k;                     \
            in_x = map_coordinate(mode, in_x, w);                                            \
            in_y = map_coordinate(mode, in_y, h);                                            \
            if (nearest) {                                                                   \
                float ry = roundf(in_y), rx = roundf(in_x);                                  \
                bool inside = ry >= 0 && ry < (float)h && rx >= 0 && rx < (float)w;          \
                const T *p = inside ? im + ((int64_t)ry * w + (int64_t)rx) * c : NULL;       \
                for (int64_t ch = 0; ch < c; ch++)                                           \
                    o[ch] = p ? p[ch] : fill;                                                \
                continue;                                                                    \
            }                                                                                \
            const float y0 = floorf(in_y), x0 = floorf(in_x);                                \
            const float y1 = y0 + 1, x1 = x0 + 1;                                            \
            const W wx0 = (W)(x1 - in_x), wx1 = (W)(in_x - x0);                              \
            const W wy0 = (W)(y1 - in_y), wy1 = (W)(in_y - y0);                              \
            const T *p[4] = { NULL, NULL, NULL, NULL };                                      \
            const float ys[2] = { y0, y1 }, xs[2] = { x0, x1 };                              \
            for (int q = 0; q < 4; q++) {                                                    \
                float py = ys[q / 2], px = xs[q % 2];                                        \
                if (py >= 0 && py < (float)h && px >= 0 && px < (float)w)                    \
                    p[q] = im + ((int64_t)py * w + (int64_t)px) * c;                         \
            }                                                                                \
            for (int64_t ch = 0; ch < c; ch++) {                                             \
                W v00 = (W)(p[0] ? p[0][ch] : fill), v01 = (W)(p[1] ? p[1][ch] : fill);      \
                W v10 = (W)(p[2] ? p[2][ch] : fill), v11 = (W)(p[3] ? p[3][ch] : fill);      \
                W top = wx0 * v00 + wx1 * v01, bottom = wx0 * v10 + wx1 * v11;               \
                o[ch] = (T)(wy0 * top + wy1 * bottom);                                       \
            }                                                                                \
        }                                                                                    \
    }

TRANSFORM_ROW(row_f32, float, float)
TRANSFORM_ROW(row_f64, double, double)

static int transform_chunk(size_t cb, size_t ce, void *ctx)
{
    const transform_job *j = ctx;
    for (size_t c = cb; c < ce; c++) {
        uint64_t r0 = weft__chunk_begin(j->rows, j->chunks, c);
        uint64_t r1 = weft__chunk_begin(j->rows, j->chunks, c + 1);
        for (uint64_t r = r0; r < r1; r++) {
            if (j->images->dtype == WEFT_F32)
                row_f32(j, r);
            else
                row_f64(j, r);
        }
    }
    return 0;
}

int weft__eval_image_transform(weft_runtime *rt, const weft__node *n, const weft_tensor *images,
                               const weft_tensor *transforms, weft_tensor *out)
{
    int64_t batch = images->dims[0];
    int64_t n_transforms = transforms->dims[0];
    if (n_transforms != 1 && n_transforms != batch)
        return weft__errorf(WEFT_ESHAPE, "weft_image_projective_transform: %lld transforms for "
                            "%lld images (1 or one each)", (long long)n_transforms,
                            (long long)batch);
    transform_job j = { .n = n, .images = images, .transforms = weft_tensor_data(transforms),
                        .n_transforms = n_transforms, .out = weft__tensor_mut(out),
                        .h = images->dims[1], .w = images->dims[2], .c = images->dims[3],
                        .oh = out->dims[1], .ow = out->dims[2] };
    j.rows = (uint64_t)(batch * j.oh);
    if (out->numel == 0)
        return 0;
    if (j.h == 0 || j.w == 0) {
        /* No pixel to read: every sample is outside. */
        double fill = n->attr.transform.fill_value;
        for (int64_t i = 0; i < out->numel; i++) {
            if (out->dtype == WEFT_F32)
                ((float *)(void *)j.out)[i] = (float)fill;
            else
                ((double *)(void *)j.out)[i] = fill;
        }
        return 0;
    }
    j.chunks = weft__chunk_count_of(rt, (uint64_t)out->numel * 8, j.rows);
    return weft__run_chunks(rt, j.chunks, transform_chunk, &j);
}

/* ---- Inference ---------------------------------------------------------- */

int weft__infer_image_transform(const weft__node *n, const weft_spec *in, weft_spec *out)
{
    static const char fn[] = "weft_image_projective_transform";
    const weft_spec *im = &in[0], *t = &in[1];
    char s1[WEFT__SPEC_STR_MAX], s2[WEFT__SPEC_STR_MAX];
    if (im->dtype != WEFT_F32 && im->dtype != WEFT_F64)
        return weft__errorf(WEFT_EDTYPE, "%s: the images %s are not f32 or f64", fn,
                            weft__spec_str(im, s1, sizeof s1));
    if (im->rank != 4)
        return weft__errorf(WEFT_ESHAPE, "%s: the images %s are not [batch, h, w, c] (rank "
                            "known while tracing)", fn, weft__spec_str(im, s1, sizeof s1));
    bool rows_fit = t->rank == 2 && (t->dims[1] == 8 || t->dims[1] == WEFT_DIM_ANY) &&
                    (t->dims[0] == 1 || t->dims[0] == WEFT_DIM_ANY ||
                     im->dims[0] == WEFT_DIM_ANY || t->dims[0] == im->dims[0]);
    if (t->dtype != WEFT_F32 || !rows_fit)
        return weft__errorf(t->dtype != WEFT_F32 ? WEFT_EDTYPE : WEFT_ESHAPE,
                            "%s: the transforms %s are not f32 [1 or batch, 8] for the images %s",
                            fn, weft__spec_str(t, s1, sizeof s1),
                            weft__spec_str(im, s2, sizeof s2));
    *out = *im;
    out->dims[1] = n->attr.transform.size[0] > 0 ? n->attr.transform.size[0] : im->dims[1];
    out->dims[2] = n->attr.transform.size[1] > 0 ? n->attr.transform.size[1] : im->dims[2];
    return 0;
}
