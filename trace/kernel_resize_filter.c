/* resize by a sampling kernel: tf.image.resize's lanczos3, lanczos5,
 * gaussian and mitchellcubic methods, and bilinear (the triangle kernel)
 * and bicubic (Keys' cubic) with antialias, all of which TensorFlow runs
 * through its ScaleAndTranslate kernel with scale out / in and no
 * translation.
 *
 * Along each dim, output pixel o samples the input at (o + 0.5) / scale;
 * its span is the input pixels within the kernel's radius of that point
 * (the radius widened by 1 / scale when downsampling with antialias), each
 * weighted by the kernel at its distance (scaled likewise), the weights
 * then normalized to sum to 1.  The image is filtered along the height
 * first (into one intermediate row per output row), then along the width.
 * Weights and, for f32 images, sums are in f32 as TensorFlow's; f64 images
 * sum in f64 with the same f32 weights.  The work is cut by output rows. */
#include <math.h>
#include <string.h>

#include "runtime/iface.h"
#include "trace/kernels.h"
#include "trace/shape.h"
#include "trace/tensor_impl.h"

typedef enum filter_kind {
    FILTER_LANCZOS3, FILTER_LANCZOS5, FILTER_GAUSSIAN, FILTER_TRIANGLE, FILTER_KEYS_CUBIC,
    FILTER_MITCHELL_CUBIC
} filter_kind;

static filter_kind filter_of(int method)
{
    switch (method) {
    case WEFT_RESIZE_LANCZOS3: return FILTER_LANCZOS3;
    case WEFT_RESIZE_LANCZOS5: return FILTER_LANCZOS5;
    case WEFT_RESIZE_GAUSSIAN: return FILTER_GAUSSIAN;
    case WEFT_RESIZE_BILINEAR: return FILTER_TRIANGLE;
    case WEFT_RESIZE_BICUBIC: return FILTER_KEYS_CUBIC;
    default: return FILTER_MITCHELL_CUBIC;
    }
}

static float filter_radius(filter_kind k)
{
    switch (k) {
    case FILTER_LANCZOS3: return 3.0f;
    case FILTER_LANCZOS5: return 5.0f;
    case FILTER_GAUSSIAN: return 1.5f;
    case FILTER_TRIANGLE: return 1.0f;
    default: return 2.0f;
    }
}

/* TensorFlow's sampling kernels (sampling_kernels.h), in its float steps. */
static float filter_at(filter_kind k, float x)
{
    x = fabsf(x);
    switch (k) {
    case FILTER_LANCZOS3:
    case FILTER_LANCZOS5: {
        const float pi = 3.14159265359f, radius = filter_radius(k);
        if (x > radius)
            return 0.0f;
        if (x <= 1e-3f)
            return 1.0f;
        return radius * sinf(pi * x) * sinf(pi * x / radius) / (pi * pi * x * x);
    }
    case FILTER_GAUSSIAN: {
        const float radius = filter_radius(k), sigma = radius / 3.0f;
        if (x >= radius)
            return 0.0f;
        return (float)exp(-x * x / (2.0 * sigma * sigma));
    }
    case FILTER_TRIANGLE:
        return x < 1.0f ? 1.0f - x : 0.0f;
    case FILTER_KEYS_CUBIC:
        if (x >= 2.0f)
            return 0.0f;
        if (x >= 1.0f)
            return ((-0.5f * x + 2.5f) * x - 4.0f) * x + 2.0f;
        return ((1.5f * x - 2.5f) * x) * x + 1.0f;
    default:   /* Mitchell-Netravali */
        if (x >= 2.0f)
            return 0.0f;
        if (x >= 1.0f)
            return (((-7.0f / 18.0f) * x + 2.0f) * x - 10.0f / 3.0f) * x + 16.0f / 9.0f;
        return (((7.0f / 6.0f) * x - 2.0f) * x) * x + 8.0f / 9.0f;
    }
}

/* One dim's spans: output o reads input [start[o], start[o] + size) (cut at
 * the input's end) with weights weight[o size ...], zeros past its span. */
typedef struct spans {
    int64_t size;
    int64_t *start;
    float *weight;
} spans;

/* TensorFlow's ComputeSpansCore for output length out from input length in. */
static int spans_make(filter_kind k, bool antialias, int64_t out, int64_t in, spans *s)
{
    const float scale = (float)out / (float)in;
    const float inv_scale = (float)(1.0 / scale);
    const float kernel_scale = antialias && inv_scale > 1.0f ? inv_scale : 1.0f;
    const float radius = filter_radius(k), one_over = 1.0f / kernel_scale;
    int64_t size = 2 * (int64_t)ceilf(radius * kernel_scale) + 1;
    s->size = size < in ? size : in;
    s->start = weft__calloc((size_t)out, sizeof *s->start);
    s->weight = weft__calloc((size_t)(out * s->size), sizeof *s->weight);
    if (!s->start || !s->weight)
        return weft__errorf(WEFT_ENOMEM, "weft_resize: out of memory for the filter of %lld "
                            "pixels", (long long)out);
    for (int64_t o = 0; o < out; o++) {
        const float sample = ((float)o + 0.5f) * inv_scale;
        if (sample < 0 || sample > (float)in)
            continue;   /* an empty span: weights 0 */
        int64_t first = (int64_t)ceilf(sample - radius * kernel_scale - 0.5f);
        int64_t last = (int64_t)floorf(sample + radius * kernel_scale - 0.5f);
        first = first < 0 ? 0 : first > in - 1 ? in - 1 : first;
        last = (last < 0 ? 0 : last > in - 1 ? in - 1 : last) + 1;
        float *w = s->weight + o * s->size, total = 0.0f;
        for (int64_t i = first; i < last && i - first < s->size; i++) {
            w[i - first] = filter_at(k, ((float)i + 0.5f - sample) * one_over);
            total += w[i - first];
        }
        if (fabsf(total) >= 1000.0f * 1.17549435e-38f) {
            const float inv_total = 1.0f / total;
            for (int64_t i = first; i < last && i - first < s->size; i++)
                w[i - first] *= inv_total;
        } else {
            memset(w, 0, sizeof *w * (size_t)s->size);
        }
        s->start[o] = first;
    }
    return 0;
}

static void spans_free(spans *s)
{
    weft__free(s->start);
    weft__free(s->weight);
}

typedef struct filter_job {
    const weft_tensor *x;
    weft_tensor *out;
    spans rows, cols;
    int64_t h, w, c, oh, ow;
    size_t chunks;
} filter_job;

/* Output rows [r0, r1) of dtype T (f32 sums in f32, f64 in f64). */
#define FILTER_ROWS_FN(NAME, T)                                                               \
    static void NAME(const filter_job *j, int64_t r0, int64_t r1, T *mid)                    \
    {                                                                                         \
        const T *x = weft_tensor_data(j->x);                                                  \
        T *y = weft__tensor_mut(j->out);                                                      \
        int64_t row = j->w * j->c;                                                            \
        for (int64_t r = r0; r < r1; r++) {                                                   \
            int64_t b = r / j->oh, o = r % j->oh, first = j->rows.start[o];                   \
            int64_t n = first + j->rows.size < j->h ? j->rows.size : j->h - first;            \
            const float *wr = j->rows.weight + o * j->rows.size;                              \
            const T *src = x + (b * j->h + first) * row;                                      \
            for (int64_t e = 0; e < row; e++)                                                 \
                mid[e] = 0;                                                                   \
            for (int64_t k = 0; k < n; k++)                                                   \
                for (int64_t e = 0; e < row; e++)                                             \
                    mid[e] += (T)wr[k] * src[k * row + e];                                    \
            T *dst = y + r * j->ow * j->c;                                                    \
            for (int64_t q = 0; q < j->ow; q++) {                                             \
                int64_t fc = j->cols.start[q];                                                \
                int64_t m = fc + j->cols.size < j->w ? j->cols.size : j->w - fc;              \
                const float *wc = j->cols.weight + q * j->cols.size;                          \
                T *px = dst + q * j->c;                                                       \
                for (int64_t ch = 0; ch < j->c; ch++)                                         \
                    px[ch] = 0;                                                               \
                for (int64_t k = 0; k < m; k++)                                               \
                    for (int64_t ch = 0; ch < j->c; ch++)                                     \
                        px[ch] += (T)wc[k] * mid[(fc + k) * j->c + ch];                       \
            }                                                                                 \
        }                                                                                     \
    }

FILTER_ROWS_FN(filter_rows_f32, float)
FILTER_ROWS_FN(filter_rows_f64, double)

static int filter_chunk(size_t cb, size_t ce, void *ctx)
{
    const filter_job *j = ctx;
    size_t es = weft_dtype_size(j->x->dtype);
    void *mid = weft__malloc(es * (size_t)(j->w * j->c));
    if (!mid)
        return weft__errorf(WEFT_ENOMEM, "weft_resize: out of memory for a row of %lld",
                            (long long)(j->w * j->c));
    uint64_t rows = (uint64_t)(j->out->dims[0] * j->oh);
    for (size_t c = cb; c < ce; c++) {
        int64_t r0 = (int64_t)weft__chunk_begin(rows, j->chunks, c);
        int64_t r1 = (int64_t)weft__chunk_begin(rows, j->chunks, c + 1);
        if (j->x->dtype == WEFT_F32)
            filter_rows_f32(j, r0, r1, mid);
        else
            filter_rows_f64(j, r0, r1, mid);
    }
    weft__free(mid);
    return 0;
}

bool weft__resize_filtered(const weft__node *n)
{
    int m = n->attr.resize.method;
    return m == WEFT_RESIZE_LANCZOS3 || m == WEFT_RESIZE_LANCZOS5 ||
           m == WEFT_RESIZE_GAUSSIAN || m == WEFT_RESIZE_MITCHELLCUBIC ||
           (n->attr.resize.antialias &&
            (m == WEFT_RESIZE_BILINEAR || m == WEFT_RESIZE_BICUBIC));
}

int weft__eval_resize_filter(weft_runtime *rt, const weft__node *n, const weft_tensor *x,
                             weft_tensor *out)
{
    filter_job j = { .x = x, .out = out, .h = x->dims[1], .w = x->dims[2], .c = x->dims[3],
                     .oh = out->dims[1], .ow = out->dims[2] };
    if (out->numel == 0 || j.h == 0 || j.w == 0)
        return 0;
    filter_kind k = filter_of(n->attr.resize.method);
    bool antialias = n->attr.resize.antialias;
    int rc = spans_make(k, antialias, j.oh, j.h, &j.rows);
    if (rc == 0)
        rc = spans_make(k, antialias, j.ow, j.w, &j.cols);
    if (rc == 0) {
        uint64_t rows = (uint64_t)(out->dims[0] * j.oh);
        uint64_t work = rows * (uint64_t)((j.rows.size + j.cols.size) * j.w * j.c);
        j.chunks = weft__chunk_count_of(rt, work, rows);
        rc = weft__run_chunks(rt, j.chunks, filter_chunk, &j);
    }
    spans_free(&j.rows);
    spans_free(&j.cols);
    return rc;
}
