/* depthwise_conv2d on NHWC data (weft__eval_depthwise_conv2d): each input
 * channel convolved with its own multiplier filters, output channel
 * c * multiplier + j from input channel c and filter [.., .., c, j].
 *
 * A direct loop: per output pixel, the window's input pixels in order,
 * each a multiply-add over the pixel's contiguous channels (vectorized).
 * Every output element sums its window in the same order whatever the
 * cut, which is by output rows, so the result does not depend on the
 * worker count. */
#include <string.h>

#include "runtime/iface.h"
#include "trace/kernels.h"
#include "trace/shape.h"

#if defined(__GNUC__) && !defined(__clang__) && defined(__OPTIMIZE__)
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")
#endif

typedef struct dw_job {
    weft_dtype dt;
    const char *x, *f;
    char *y;
    int64_t h, w, c, mult, kh, kw, oh, ow;
    int64_t stride[2], dil[2], pad[2];   /* height, width */
    uint64_t units;                      /* batch * oh: one output row each */
    size_t chunks;
} dw_job;

/* Output row `unit`: each pixel's c * mult sums over its window.  ONE: a
 * copy for multiplier 1, whose inner loop is a plain multiply-add over
 * the channels. */
#define DW_ROW(NAME, T, ONE)                                                            \
    static void NAME(const dw_job *j, uint64_t unit)                                    \
    {                                                                                   \
        const int64_t oy = (int64_t)(unit % (uint64_t)j->oh);                           \
        const int64_t b = (int64_t)(unit / (uint64_t)j->oh);                            \
        const int64_t c = j->c, m = ONE ? 1 : j->mult, cm = c * m;                       \
        const T *img = (const T *)(const void *)j->x + b * j->h * j->w * c;             \
        const T *F = (const T *)(const void *)j->f;                                     \
        T *restrict acc = (T *)(void *)j->y + (int64_t)unit * j->ow * cm;               \
        for (int64_t ox = 0; ox < j->ow; ox++, acc += cm) {                             \
            for (int64_t q = 0; q < cm; q++)                                            \
                acc[q] = 0;                                                             \
            for (int64_t ky = 0; ky < j->kh; ky++) {                                    \
                int64_t iy = oy * j->stride[0] - j->pad[0] + ky * j->dil[0];            \
                if (iy < 0 || iy >= j->h)                                               \
                    continue;                                                           \
                for (int64_t kx = 0; kx < j->kw; kx++) {                                \
                    int64_t ix = ox * j->stride[1] - j->pad[1] + kx * j->dil[1];        \
                    if (ix < 0 || ix >= j->w)                                           \
                        continue;                                                       \
                    const T *restrict xp = img + (iy * j->w + ix) * c;                  \
                    const T *restrict fp = F + (ky * j->kw + kx) * cm;                  \
                    if (ONE) {                                                          \
                        for (int64_t q = 0; q < c; q++)                                 \
                            acc[q] += xp[q] * fp[q];                                    \
                        continue;                                                       \
                    }                                                                   \
                    for (int64_t ci = 0; ci < c; ci++)                                  \
                        for (int64_t k = 0; k < m; k++)                                 \
                            acc[ci * m + k] += xp[ci] * fp[ci * m + k];                 \
                }                                                                       \
            }                                                                           \
        }                                                                               \
    }

DW_ROW(dw_row_f32, float, 0)
DW_ROW(dw_row_f64, double, 0)
DW_ROW(dw_one_f32, float, 1)
DW_ROW(dw_one_f64, double, 1)

static int dw_chunk(size_t cb, size_t ce, void *ctx)
{
    const dw_job *j = ctx;
    uint64_t u1 = weft__chunk_begin(j->units, j->chunks, ce);
    for (uint64_t u = weft__chunk_begin(j->units, j->chunks, cb); u < u1; u++) {
        if (j->dt == WEFT_F32)
            (j->mult == 1 ? dw_one_f32 : dw_row_f32)(j, u);
        else
            (j->mult == 1 ? dw_one_f64 : dw_row_f64)(j, u);
    }
    return 0;
}

int weft__eval_depthwise_conv2d(weft_runtime *rt, const weft__node *n, const weft_tensor *x,
                                const weft_tensor *filters, weft_tensor *out)
{
    if (out->numel == 0)
        return 0;
    dw_job j = { .dt = x->dtype, .x = x->data, .f = filters->data, .y = weft__tensor_mut(out),
                 .h = x->dims[1], .w = x->dims[2], .c = x->dims[3], .mult = filters->dims[3],
                 .kh = filters->dims[0], .kw = filters->dims[1], .oh = out->dims[1],
                 .ow = out->dims[2] };
    int64_t size[2] = { j.h, j.w }, window[2] = { j.kh, j.kw };
    for (int d = 0; d < 2; d++) {
        j.stride[d] = n->attr.conv.stride[d];
        j.dil[d] = n->attr.conv.dilation[d];
        weft__conv_out_dim(n->attr.conv.padding, size[d], window[d], j.stride[d], j.dil[d],
                           &j.pad[d]);
    }
    j.units = (uint64_t)(out->dims[0] * j.oh);
    uint64_t work;
    if (__builtin_mul_overflow((uint64_t)out->numel, (uint64_t)(j.kh * j.kw), &work))
        work = UINT64_MAX;   /* only the chunk count reads it */
    j.chunks = weft__chunk_count_of(rt, work, j.units);
    return weft__run_chunks(rt, j.chunks, dw_chunk, &j);
}
