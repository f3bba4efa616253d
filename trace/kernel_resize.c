/* resize on NHWC data (weft__eval_resize), tf.image.resize's bilinear and
 * nearest methods with half-pixel centers (TensorFlow 2's only mode), and
 * area (each output pixel the mean of the input area it covers, the
 * input pixels weighted by their overlap, as TensorFlow's ResizeArea).
 *
 * Output coordinate o maps to the input at (o + 0.5) * in / out - 0.5
 * (bilinear) or floor((o + 0.5) * in / out) (nearest), in the dtype's
 * float arithmetic and clamped as TensorFlow's kernels clamp.  The
 * per-column sources and weights are computed once per call; the work is
 * cut by output rows, each element computed alone, so the result does not
 * depend on the cut. */
#include <math.h>
#include <string.h>

#include "runtime/iface.h"
#include "trace/kernels.h"
#include "trace/shape.h"

#if defined(__GNUC__) && !defined(__clang__) && defined(__OPTIMIZE__)
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")
#endif

/* One output coordinate's sources along a dim: lower and upper input
 * index and the weight of the upper one (nearest: lower only). */
typedef struct source {
    int64_t lo, hi;
    double lerp;
} source;

/* Area: one output coordinate's input cells along a dim, [first,
 * first + count), and their overlaps (count entries at weight). */
typedef struct cells {
    int64_t first, count;
    double *weight;
} cells;

typedef struct resize_job {
    weft_dtype dt;
    bool nearest, area;
    cells *area_cols;        /* area: ow entries */
    const char *x;
    char *y;
    int64_t h, w, c, oh, ow;
    source *cols;            /* ow entries */
    uint64_t units;          /* batch * oh */
    size_t chunks;
} resize_job;

/* TensorFlow's HalfPixelScaler and compute_interpolation_weights, in the
 * precision T. */
#define SOURCE_FN(NAME, T)                                                              \
    static source NAME(int64_t o, int64_t in, int64_t out, bool nearest)                \
    {                                                                                   \
        const T scale = (T)in / (T)out;                                                 \
        source s;                                                                       \
        if (nearest) {                                                                  \
            int64_t i = (int64_t)floor((double)(((T)o + (T)0.5) * scale));              \
            s.lo = s.hi = i < in - 1 ? i : in - 1;                                      \
            s.lerp = 0;                                                                 \
            return s;                                                                   \
        }                                                                               \
        const T at = ((T)o + (T)0.5) * scale - (T)0.5;                                  \
        const T f = (T)floor((double)at);                                               \
        int64_t lo = (int64_t)f, hi = (int64_t)ceil((double)at);                        \
        s.lo = lo > 0 ? lo : 0;                                                         \
        s.hi = hi < in - 1 ? hi : in - 1;                                               \
        s.lerp = (double)(at - f);                                                      \
        return s;                                                                       \
    }

SOURCE_FN(source_f32, float)
SOURCE_FN(source_f64, double)

static source source_of(const resize_job *j, int64_t o, int64_t in, int64_t out)
{
    return j->dt == WEFT_F32 ? source_f32(o, in, out, j->nearest)
                             : source_f64(o, in, out, j->nearest);
}

/* Output row `unit`: top + (bottom - top) * y_lerp, with top and bottom
 * each left + (right - left) * x_lerp (TensorFlow's order). */
#define RESIZE_ROW(NAME, T)                                                             \
    static void NAME(const resize_job *j, uint64_t unit)                                \
    {                                                                                   \
        const int64_t oy = (int64_t)(unit % (uint64_t)j->oh);                           \
        const int64_t b = (int64_t)(unit / (uint64_t)j->oh), c = j->c;                  \
        const T *img = (const T *)(const void *)j->x + b * j->h * j->w * c;             \
        T *restrict out = (T *)(void *)j->y + (int64_t)unit * j->ow * c;                \
        const source ys = source_of(j, oy, j->h, j->oh);                                \
        const T *top = img + ys.lo * j->w * c, *bottom = img + ys.hi * j->w * c;        \
        const T yl = (T)ys.lerp;                                                        \
        for (int64_t ox = 0; ox < j->ow; ox++, out += c) {                              \
            const source xs = j->cols[ox];                                              \
            const T xl = (T)xs.lerp;                                                    \
            const T *restrict tl = top + xs.lo * c, *restrict tr = top + xs.hi * c;     \
            const T *restrict bl = bottom + xs.lo * c, *restrict br = bottom + xs.hi * c; \
            if (j->nearest) {                                                           \
                memcpy(out, tl, sizeof(T) * (size_t)c);                                 \
                continue;                                                               \
            }                                                                           \
            for (int64_t q = 0; q < c; q++) {                                           \
                T t = tl[q] + (tr[q] - tl[q]) * xl;                                     \
                T u = bl[q] + (br[q] - bl[q]) * xl;                                     \
                out[q] = t + (u - t) * yl;                                              \
            }                                                                           \
        }                                                                               \
    }

RESIZE_ROW(row_f32, float)
RESIZE_ROW(row_f64, double)

/* The cells of output coordinate o along a dim of in (out outputs): the
 * box [o s, (o + 1) s) with s = in / out, each cell weighted by how much
 * of it the box covers; weights into w (at most ceil(s) + 1). */
static cells cells_of(int64_t o, int64_t in, int64_t out, double *w)
{
    double s = (double)in / (double)out, lo = (double)o * s, hi = (double)(o + 1) * s;
    cells c = { (int64_t)floor(lo), 0, w };
    int64_t end = (int64_t)ceil(hi);
    for (int64_t i = c.first; i < end; i++) {
        double a = (double)i > lo ? (double)i : lo, b = (double)(i + 1) < hi ? (double)(i + 1) : hi;
        w[c.count++] = b - a;
    }
    return c;
}

static int64_t cells_max(int64_t in, int64_t out)
{
    return (int64_t)ceil((double)in / (double)out) + 2;
}

/* Output row `unit` of area: the weighted sum of the covered cells, the
 * rows' cells outside, the columns' inside, times 1 / (s_h s_w); cells
 * past the edge (a rounding of the box's end) read the last pixel. */
#define AREA_ROW(NAME, T)                                                               \
    static void NAME(const resize_job *j, uint64_t unit, double *yw)                    \
    {                                                                                   \
        const int64_t oy = (int64_t)(unit % (uint64_t)j->oh);                           \
        const int64_t b = (int64_t)(unit / (uint64_t)j->oh), c = j->c;                  \
        const T *img = (const T *)(const void *)j->x + b * j->h * j->w * c;             \
        T *restrict out = (T *)(void *)j->y + (int64_t)unit * j->ow * c;                \
        const cells ys = cells_of(oy, j->h, j->oh, yw);                                 \
        const T norm = (T)((double)j->oh * (double)j->ow / ((double)j->h * (double)j->w)); \
        memset(out, 0, sizeof(T) * (size_t)(j->ow * c));                                \
        for (int64_t k = 0; k < ys.count; k++) {                                        \
            int64_t iy = ys.first + k < j->h ? ys.first + k : j->h - 1;                 \
            const T *row = img + iy * j->w * c;                                         \
            const T wy = (T)ys.weight[k];                                               \
            T *restrict o = out;                                                        \
            for (int64_t ox = 0; ox < j->ow; ox++, o += c) {                            \
                const cells xs = j->area_cols[ox];                                      \
                for (int64_t m = 0; m < xs.count; m++) {                                \
                    int64_t ix = xs.first + m < j->w ? xs.first + m : j->w - 1;         \
                    const T wt = wy * (T)xs.weight[m];                                  \
                    const T *restrict px = row + ix * c;                                \
                    for (int64_t q = 0; q < c; q++)                                     \
                        o[q] += px[q] * wt;                                             \
                }                                                                       \
            }                                                                           \
        }                                                                               \
        for (int64_t q = 0; q < j->ow * c; q++)                                         \
            out[q] *= norm;                                                             \
    }

AREA_ROW(area_f32, float)
AREA_ROW(area_f64, double)

static int area_chunk(size_t cb, size_t ce, void *ctx)
{
    const resize_job *j = ctx;
    double *yw = weft__malloc(sizeof *yw * (size_t)cells_max(j->h, j->oh));
    if (!yw)
        return weft__errorf(WEFT_ENOMEM, "weft_resize: out of memory");
    uint64_t u1 = weft__chunk_begin(j->units, j->chunks, ce);
    for (uint64_t u = weft__chunk_begin(j->units, j->chunks, cb); u < u1; u++) {
        if (j->dt == WEFT_F32)
            area_f32(j, u, yw);
        else
            area_f64(j, u, yw);
    }
    weft__free(yw);
    return 0;
}

static int resize_chunk(size_t cb, size_t ce, void *ctx)
{
    const resize_job *j = ctx;
    uint64_t u1 = weft__chunk_begin(j->units, j->chunks, ce);
    for (uint64_t u = weft__chunk_begin(j->units, j->chunks, cb); u < u1; u++) {
        if (j->dt == WEFT_F32)
            row_f32(j, u);
        else
            row_f64(j, u);
    }
    return 0;
}

/* area: the columns' cells once per call (weights in one array), then
 * the rows over the chunks. */
static int eval_area(weft_runtime *rt, resize_job *j, const weft_tensor *out)
{
    int64_t per = cells_max(j->w, j->ow);
    j->area_cols = weft__malloc(sizeof(cells) * (size_t)j->ow);
    double *weights = weft__malloc(sizeof(double) * (size_t)(j->ow * per));
    int rc = 0;
    if (!j->area_cols || !weights) {
        rc = weft__errorf(WEFT_ENOMEM, "weft_resize: out of memory for %lld columns",
                          (long long)j->ow);
    } else {
        for (int64_t ox = 0; ox < j->ow; ox++)
            j->area_cols[ox] = cells_of(ox, j->w, j->ow, weights + ox * per);
        j->chunks = weft__chunk_count_of(rt, (uint64_t)out->numel * (uint64_t)(per * per),
                                         j->units);
        rc = weft__run_chunks(rt, j->chunks, area_chunk, j);
    }
    weft__free(weights);
    weft__free(j->area_cols);
    return rc;
}

int weft__eval_resize(weft_runtime *rt, const weft__node *n, const weft_tensor *x,
                      weft_tensor *out)
{
    if (weft__resize_filtered(n))
        return weft__eval_resize_filter(rt, n, x, out);
    if (n->attr.resize.method == WEFT_RESIZE_BICUBIC)
        return weft__eval_resize_bicubic(rt, x, out);
    if (out->numel == 0)
        return 0;
    resize_job j = { .dt = x->dtype, .nearest = n->attr.resize.method == WEFT_RESIZE_NEAREST,
                     .area = n->attr.resize.method == WEFT_RESIZE_AREA,
                     .x = x->data, .y = weft__tensor_mut(out), .h = x->dims[1],
                     .w = x->dims[2], .c = x->dims[3], .oh = out->dims[1], .ow = out->dims[2] };
    j.units = (uint64_t)(out->dims[0] * j.oh);
    if (j.area)
        return eval_area(rt, &j, out);
    j.cols = weft__malloc(sizeof(source) * (size_t)j.ow);
    if (!j.cols)
        return weft__errorf(WEFT_ENOMEM, "weft_resize: out of memory for %lld columns",
                            (long long)j.ow);
    for (int64_t ox = 0; ox < j.ow; ox++)
        j.cols[ox] = source_of(&j, ox, j.w, j.ow);
    j.chunks = weft__chunk_count_of(rt, (uint64_t)out->numel * 4, j.units);
    int rc = weft__run_chunks(rt, j.chunks, resize_chunk, &j);
    weft__free(j.cols);
    return rc;
}
