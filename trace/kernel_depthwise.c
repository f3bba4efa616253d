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
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

#if defined(__SSE2__)
/* Channel q of the input pixel under tap (ky, kx) of the current window. */
#define DW_AT(img, ky, kx, q) \
    ((img) + ((iy0 + (ky) * j->dil[0]) * j->w + ix0 + (kx) * j->dil[1]) * c + (q))

/* Multiplier 1 on SSE2: each block of four vectors of channels keeps its
 * sums in registers over the whole window, where the loop above loads and
 * stores them once per window pixel (1.29x of a plain C loop's time on
 * [8,112,112,32] * [3,3,32,1] on 1 worker).  Each sum still starts from 0
 * and adds its products in window order, a multiply then an add, as the
 * loop does: the same bits.  Channels after the last whole block take
 * one vector, then one element, at a time. */
#define DW_ONE_SSE(NAME, T, W, VT, LOAD, STORE, ADD, MUL, ZERO)                         \
    static void NAME(const dw_job *j, uint64_t unit)                                    \
    {                                                                                   \
        const int64_t oy = (int64_t)(unit % (uint64_t)j->oh);                           \
        const int64_t b = (int64_t)(unit / (uint64_t)j->oh), c = j->c;                  \
        const T *img = (const T *)(const void *)j->x + b * j->h * j->w * c;             \
        const T *F = (const T *)(const void *)j->f;                                     \
        T *out = (T *)(void *)j->y + (int64_t)unit * j->ow * c;                         \
        int64_t ky0 = 0, ky1 = 0, iy0 = oy * j->stride[0] - j->pad[0];                  \
        dw_taps(iy0, j->dil[0], j->kh, j->h, &ky0, &ky1);                               \
        for (int64_t ox = 0; ox < j->ow; ox++, out += c) {                              \
            int64_t kx0 = 0, kx1 = 0, ix0 = ox * j->stride[1] - j->pad[1];              \
            dw_taps(ix0, j->dil[1], j->kw, j->w, &kx0, &kx1);                           \
            int64_t q = 0;                                                              \
            for (; q + 4 * W <= c; q += 4 * W) {                                        \
                VT a0 = ZERO(), a1 = ZERO(), a2 = ZERO(), a3 = ZERO();                  \
                for (int64_t ky = ky0; ky < ky1; ky++)                                  \
                    for (int64_t kx = kx0; kx < kx1; kx++) {                            \
                        const T *p = DW_AT(img, ky, kx, q);                             \
                        const T *f = F + (ky * j->kw + kx) * c + q;                     \
                        a0 = ADD(a0, MUL(LOAD(p), LOAD(f)));                            \
                        a1 = ADD(a1, MUL(LOAD(p + W), LOAD(f + W)));                    \
                        a2 = ADD(a2, MUL(LOAD(p + 2 * W), LOAD(f + 2 * W)));            \
                        a3 = ADD(a3, MUL(LOAD(p + 3 * W), LOAD(f + 3 * W)));            \
                    }                                                                   \
                STORE(out + q, a0);                                                     \
                STORE(out + q + W, a1);                                                 \
                STORE(out + q + 2 * W, a2);                                             \
                STORE(out + q + 3 * W, a3);                                             \
            }                                                                           \
            for (; q + W <= c; q += W) {                                                \
                VT a = ZERO();                                                          \
                for (int64_t ky = ky0; ky < ky1; ky++)                                  \
                    for (int64_t kx = kx0; kx < kx1; kx++) {                            \
                        const T *f = F + (ky * j->kw + kx) * c + q;                     \
                        a = ADD(a, MUL(LOAD(DW_AT(img, ky, kx, q)), LOAD(f)));          \
                    }                                                                   \
                STORE(out + q, a);                                                      \
            }                                                                           \
            for (; q < c; q++) {                                                        \
                T sum = 0;                                                              \
                for (int64_t ky = ky0; ky < ky1; ky++)                                  \
                    for (int64_t kx = kx0; kx < kx1; kx++)                              \
                        sum += *DW_AT(img, ky, kx, q) * F[(ky * j->kw + kx) * c + q];   \
                out[q] = sum;                                                           \
            }                                                                           \
        }                                                                               \
    }

/* The taps [*k0, *k1) of a window along one dim whose first input index
 * is i0 (dilation dil, k taps) that fall inside [0, size). */
static void dw_taps(int64_t i0, int64_t dil, int64_t k, int64_t size, int64_t *k0, int64_t *k1)
{
    *k0 = 0;
    while (*k0 < k && i0 + *k0 * dil < 0)
        ++*k0;
    *k1 = *k0;
    while (*k1 < k && i0 + *k1 * dil < size)
        ++*k1;
}

DW_ONE_SSE(dw_one_f32, float, 4, __m128, _mm_loadu_ps, _mm_storeu_ps, _mm_add_ps, _mm_mul_ps,
           _mm_setzero_ps)
DW_ONE_SSE(dw_one_f64, double, 2, __m128d, _mm_loadu_pd, _mm_storeu_pd, _mm_add_pd, _mm_mul_pd,
           _mm_setzero_pd)
#else
DW_ROW(dw_one_f32, float, 1)
DW_ROW(dw_one_f64, double, 1)
#endif

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
