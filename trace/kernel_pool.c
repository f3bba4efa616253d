/* max_pool2d and avg_pool2d on NHWC data (weft__eval_pool2d).  An output
 * pixel's window is clipped to the input (padding is never part of it,
 * TensorFlow's rule), and its channels are reduced together: the inner
 * loops run over a pixel's contiguous channels.  The work is cut by output
 * rows; each element is computed alone, so the result does not depend on
 * the cut. */
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

typedef struct pool_job {
    weft_dtype dt;
    bool avg;
    const char *x;
    char *y;
    int64_t h, w, c, oh, ow;
    int64_t window[2], stride[2], pad[2];   /* height, width */
    uint64_t units;                         /* batch * oh: one output row each */
    size_t chunks;
} pool_job;

/* The input range [*lo, *hi) of window number `o` along a dim of `size`
 * elements. */
static void window_range(int64_t o, int64_t stride, int64_t pad, int64_t window, int64_t size,
                         int64_t *lo, int64_t *hi)
{
    int64_t start = o * stride - pad, end = start + window;
    *lo = start < 0 ? 0 : start;
    *hi = end > size ? size : end;
}

/* The pixels of an output row's windows: the rows [y0, y1) of image img
 * and, per output pixel, its clipped columns. */
typedef struct pool_row_ctx {
    const pool_job *j;
    const char *img;
    int64_t y0, y1;
} pool_row_ctx;

static void window_cols(const pool_job *j, int64_t ox, int64_t *x0, int64_t *x1)
{
    window_range(ox, j->stride[1], j->pad[1], j->window[1], j->w, x0, x1);
}

/* An output row of max pooling: each pixel starts from its window's first
 * input pixel and takes the others in.  KEEP(m, v) says whether the
 * maximum so far stays: a NaN, once in, stays (m != m), and a NaN comes
 * in (m >= v is false).  Written so that gcc vectorizes it over the
 * channels. */
#define POOL_MAX(NAME, T, KEEP)                                                         \
    static void NAME(const pool_row_ctx *r, char *out)                                  \
    {                                                                                   \
        const pool_job *j = r->j;                                                       \
        const int64_t c = j->c, w = j->w;                                               \
        const T *img = (const T *)(const void *)r->img;                                 \
        T *restrict m = (T *)(void *)out;                                               \
        for (int64_t ox = 0; ox < j->ow; ox++, m += c) {                                \
            int64_t x0, x1;                                                             \
            window_cols(j, ox, &x0, &x1);                                               \
            const T *restrict first = img + (r->y0 * w + x0) * c;                       \
            for (int64_t q = 0; q < c; q++)                                             \
                m[q] = first[q];                                                        \
            for (int64_t iy = r->y0; iy < r->y1; iy++)                                  \
                for (int64_t ix = iy == r->y0 ? x0 + 1 : x0; ix < x1; ix++) {           \
                    const T *restrict v = img + (iy * w + ix) * c;                      \
                    for (int64_t q = 0; q < c; q++)                                     \
                        m[q] = KEEP(m[q], v[q]) ? m[q] : v[q];                          \
                }                                                                       \
        }                                                                               \
    }

#define FLOAT_KEEP(m, v) ((m) >= (v) || (m) != (m))
#define INT_KEEP(m, v) ((m) >= (v))

#if defined(__SSE2__)
/* Floats on SSE2: each block of channels keeps its maximum and a NaN mask
 * in registers over the whole window (the loop above loads and stores the
 * maximum once per window pixel and needs five operations to keep NaN
 * in; max_pool of f32[8,112,112,64] ran at 2.1x a plain C loop's time).
 * MAXPS drops a NaN that meets another number, so NaNs are tracked in
 * the mask and put back at the end (as all-ones bits: a NaN).  The
 * channels left after the last whole block take the loop's way. */
#define POOL_MAX_SSE(NAME, T, W, VT, LOAD, STORE, MAX, UNORD, OR, KEEP)                 \
    static void NAME(const pool_row_ctx *r, char *out)                                  \
    {                                                                                   \
        const pool_job *j = r->j;                                                       \
        const int64_t c = j->c, w = j->w;                                               \
        const T *img = (const T *)(const void *)r->img;                                 \
        T *m = (T *)(void *)out;                                                        \
        for (int64_t ox = 0; ox < j->ow; ox++, m += c) {                                \
            int64_t x0, x1;                                                             \
            window_cols(j, ox, &x0, &x1);                                               \
            const T *first = img + (r->y0 * w + x0) * c;                                \
            int64_t q = 0;                                                              \
            for (; q + 4 * W <= c; q += 4 * W) {   /* four vectors: less loop per load */ \
                VT b0 = LOAD(first + q), b1 = LOAD(first + q + W);                      \
                VT b2 = LOAD(first + q + 2 * W), b3 = LOAD(first + q + 3 * W);          \
                VT n0 = UNORD(b0, b0), n1 = UNORD(b1, b1);                              \
                VT n2 = UNORD(b2, b2), n3 = UNORD(b3, b3);                              \
                for (int64_t iy = r->y0; iy < r->y1; iy++)                              \
                    for (int64_t ix = iy == r->y0 ? x0 + 1 : x0; ix < x1; ix++) {       \
                        const T *p = img + (iy * w + ix) * c + q;                       \
                        VT v0 = LOAD(p), v1 = LOAD(p + W), v2 = LOAD(p + 2 * W);        \
                        VT v3 = LOAD(p + 3 * W);                                        \
                        b0 = MAX(b0, v0);                                               \
                        b1 = MAX(b1, v1);                                               \
                        b2 = MAX(b2, v2);                                               \
                        b3 = MAX(b3, v3);                                               \
                        n0 = OR(n0, UNORD(v0, v0));                                     \
                        n1 = OR(n1, UNORD(v1, v1));                                     \
                        n2 = OR(n2, UNORD(v2, v2));                                     \
                        n3 = OR(n3, UNORD(v3, v3));                                     \
                    }                                                                   \
                STORE(m + q, OR(b0, n0));                                               \
                STORE(m + q + W, OR(b1, n1));                                           \
                STORE(m + q + 2 * W, OR(b2, n2));                                       \
                STORE(m + q + 3 * W, OR(b3, n3));                                       \
            }                                                                           \
            for (; q + W <= c; q += W) {                                                \
                VT best = LOAD(first + q), nan = UNORD(best, best);                     \
                for (int64_t iy = r->y0; iy < r->y1; iy++)                              \
                    for (int64_t ix = iy == r->y0 ? x0 + 1 : x0; ix < x1; ix++) {       \
                        VT v = LOAD(img + (iy * w + ix) * c + q);                       \
                        best = MAX(best, v);                                            \
                        nan = OR(nan, UNORD(v, v));                                     \
                    }                                                                   \
                STORE(m + q, OR(best, nan));                                            \
            }                                                                           \
            for (; q < c; q++) {                                                        \
                T best = first[q];                                                      \
                for (int64_t iy = r->y0; iy < r->y1; iy++)                              \
                    for (int64_t ix = iy == r->y0 ? x0 + 1 : x0; ix < x1; ix++) {       \
                        T v = img[(iy * w + ix) * c + q];                               \
                        best = KEEP(best, v) ? best : v;                                \
                    }                                                                   \
                m[q] = best;                                                            \
            }                                                                           \
        }                                                                               \
    }

POOL_MAX_SSE(max_f32, float, 4, __m128, _mm_loadu_ps, _mm_storeu_ps, _mm_max_ps, _mm_cmpunord_ps,
             _mm_or_ps, FLOAT_KEEP)
POOL_MAX_SSE(max_f64, double, 2, __m128d, _mm_loadu_pd, _mm_storeu_pd, _mm_max_pd,
             _mm_cmpunord_pd, _mm_or_pd, FLOAT_KEEP)
#else
POOL_MAX(max_f32, float, FLOAT_KEEP)
POOL_MAX(max_f64, double, FLOAT_KEEP)
#endif
POOL_MAX(max_i32, int32_t, INT_KEEP)
POOL_MAX(max_i64, int64_t, INT_KEEP)

/* An output row of average pooling: each pixel's mean over its clipped
 * window, summed in the dtype in the output (pixel after pixel, row-major
 * in the window, as TensorFlow sums), then divided by the count. */
#define POOL_AVG(NAME, T)                                                               \
    static void NAME(const pool_row_ctx *r, char *out)                                  \
    {                                                                                   \
        const pool_job *j = r->j;                                                       \
        const int64_t c = j->c, w = j->w;                                               \
        const T *img = (const T *)(const void *)r->img;                                 \
        T *restrict sum = (T *)(void *)out;                                             \
        for (int64_t ox = 0; ox < j->ow; ox++, sum += c) {                              \
            int64_t x0, x1;                                                             \
            window_cols(j, ox, &x0, &x1);                                               \
            for (int64_t q = 0; q < c; q++)                                             \
                sum[q] = 0;                                                             \
            for (int64_t iy = r->y0; iy < r->y1; iy++)                                  \
                for (int64_t ix = x0; ix < x1; ix++) {                                  \
                    const T *restrict v = img + (iy * w + ix) * c;                      \
                    for (int64_t q = 0; q < c; q++)                                     \
                        sum[q] += v[q];                                                 \
                }                                                                       \
            const T count = (T)((r->y1 - r->y0) * (x1 - x0));                           \
            for (int64_t q = 0; q < c; q++)                                             \
                sum[q] /= count;                                                  \
        }                                                                               \
    }

#if defined(__SSE2__)
/* Floats on SSE2: each block of four vectors of channels keeps its sums
 * in registers over the whole window, where the loop above loads and
 * stores them once per window pixel (avg_pool2d of f32[8,56,56,64], 2x2,
 * ran at 0.93-1.27x of a plain C loop's time on 1 worker).  The sums add
 * the same pixels in the same order from 0 and are divided by the same
 * count: the same bits. */
#define POOL_AVG_SSE(NAME, T, W, VT, LOAD, STORE, ADD, DIV, SET1, ZERO)                 \
    static void NAME(const pool_row_ctx *r, char *out)                                  \
    {                                                                                   \
        const pool_job *j = r->j;                                                       \
        const int64_t c = j->c, w = j->w;                                               \
        const T *img = (const T *)(const void *)r->img;                                 \
        T *sum = (T *)(void *)out;                                                      \
        for (int64_t ox = 0; ox < j->ow; ox++, sum += c) {                              \
            int64_t x0, x1;                                                             \
            window_cols(j, ox, &x0, &x1);                                               \
            const T count = (T)((r->y1 - r->y0) * (x1 - x0));                           \
            const VT counts = SET1(count);                                              \
            int64_t q = 0;                                                              \
            for (; q + 4 * W <= c; q += 4 * W) {                                        \
                VT s0 = ZERO(), s1 = ZERO(), s2 = ZERO(), s3 = ZERO();                  \
                for (int64_t iy = r->y0; iy < r->y1; iy++)                              \
                    for (int64_t ix = x0; ix < x1; ix++) {                              \
                        const T *p = img + (iy * w + ix) * c + q;                       \
                        s0 = ADD(s0, LOAD(p));                                          \
                        s1 = ADD(s1, LOAD(p + W));                                      \
                        s2 = ADD(s2, LOAD(p + 2 * W));                                  \
                        s3 = ADD(s3, LOAD(p + 3 * W));                                  \
                    }                                                                   \
                STORE(sum + q, DIV(s0, counts));                                        \
                STORE(sum + q + W, DIV(s1, counts));                                    \
                STORE(sum + q + 2 * W, DIV(s2, counts));                                \
                STORE(sum + q + 3 * W, DIV(s3, counts));                                \
            }                                                                           \
            for (; q < c; q++) {                                                        \
                T s = 0;                                                                \
                for (int64_t iy = r->y0; iy < r->y1; iy++)                              \
                    for (int64_t ix = x0; ix < x1; ix++)                                \
                        s += img[(iy * w + ix) * c + q];                                \
                sum[q] = s / count;                                                     \
            }                                                                           \
        }                                                                               \
    }

POOL_AVG_SSE(avg_f32, float, 4, __m128, _mm_loadu_ps, _mm_storeu_ps, _mm_add_ps, _mm_div_ps,
             _mm_set1_ps, _mm_setzero_ps)
POOL_AVG_SSE(avg_f64, double, 2, __m128d, _mm_loadu_pd, _mm_storeu_pd, _mm_add_pd, _mm_div_pd,
             _mm_set1_pd, _mm_setzero_pd)
#else
POOL_AVG(avg_f32, float)
POOL_AVG(avg_f64, double)
#endif

/* Output row `unit` (an image and an output row). */
static void pool_row(const pool_job *j, uint64_t unit)
{
    int64_t oy = (int64_t)(unit % (uint64_t)j->oh), b = (int64_t)(unit / (uint64_t)j->oh);
    size_t pixel = (size_t)j->c * weft_dtype_size(j->dt);
    pool_row_ctx r = { .j = j, .img = j->x + (size_t)(b * j->h * j->w) * pixel };
    char *out = j->y + (size_t)unit * (size_t)j->ow * pixel;
    window_range(oy, j->stride[0], j->pad[0], j->window[0], j->h, &r.y0, &r.y1);
    switch (j->dt) {
    case WEFT_F32:
        if (j->avg)
            avg_f32(&r, out);
        else
            max_f32(&r, out);
        break;
    case WEFT_F64:
        if (j->avg)
            avg_f64(&r, out);
        else
            max_f64(&r, out);
        break;
    case WEFT_I32: max_i32(&r, out); break;
    default:       max_i64(&r, out); break;
    }
}

static int pool_chunk(size_t cb, size_t ce, void *ctx)
{
    const pool_job *j = ctx;
    uint64_t u1 = weft__chunk_begin(j->units, j->chunks, ce);
    for (uint64_t u = weft__chunk_begin(j->units, j->chunks, cb); u < u1; u++)
        pool_row(j, u);
    return 0;
}

int weft__eval_pool2d(weft_runtime *rt, const weft__node *n, const weft_tensor *x,
                      weft_tensor *out)
{
    if (out->numel == 0)
        return 0;
    pool_job j = { .dt = x->dtype, .avg = n->op == WEFT__OP_AVG_POOL2D, .x = x->data,
                   .y = weft__tensor_mut(out), .h = x->dims[1], .w = x->dims[2],
                   .c = x->dims[3], .oh = out->dims[1], .ow = out->dims[2] };
    int64_t size[2] = { j.h, j.w };
    for (int d = 0; d < 2; d++) {
        j.window[d] = n->attr.conv.window[d];
        j.stride[d] = n->attr.conv.stride[d];
        weft__conv_out_dim(n->attr.conv.padding, size[d], j.window[d], j.stride[d], 1,
                           &j.pad[d]);
    }
    j.units = (uint64_t)(out->dims[0] * j.oh);
    uint64_t work;
    if (__builtin_mul_overflow((uint64_t)out->numel, (uint64_t)(j.window[0] * j.window[1]),
                               &work))
        work = UINT64_MAX;   /* only the chunk count reads it */
    j.chunks = weft__chunk_count_of(rt, work, j.units);
    return weft__run_chunks(rt, j.chunks, pool_chunk, &j);
}
