/* resize's bicubic method: TensorFlow's ResizeBicubic with half-pixel
 * centers (tf.image.resize(method="bicubic") without antialias).
 *
 * Output coordinate o maps to the input at in_f = (o + 0.5) * in / out -
 * 0.5 (in float, as TensorFlow).  The four pixels floor(in_f) - 1 ..
 * floor(in_f) + 2 get Keys' cubic weights (a = -0.5) for the fraction,
 * looked up in TensorFlow's table of 1024 steps; a pixel outside the
 * image gets weight 0 and the others are renormalized to sum to 1.  Each
 * output pixel interpolates the four rows at each of the four columns,
 * then the four results along the width, w0 v0 + w1 v1 + w2 v2 + w3 v3
 * in the dtype's arithmetic (TensorFlow's order; its float for f32). */
#include <float.h>
#include <math.h>
#include <string.h>

#include "runtime/iface.h"
#include "trace/kernels.h"
#include "trace/shape.h"

#define TABLE_SIZE 1024

/* One output coordinate's four input indices and their weights. */
typedef struct cubic {
    int64_t at[4];
    float w[4];
} cubic;

typedef struct bicubic_job {
    bool f32;
    const char *x;
    char *y;
    int64_t h, w, c, oh, ow;
    const float *table;      /* (TABLE_SIZE + 1) pairs */
    cubic *cols;             /* ow entries */
    uint64_t units;          /* batch * oh */
    size_t chunks;
} bicubic_job;

/* TensorFlow's InitCoeffsTable(-0.5): entry i holds the weights of the
 * near and the far pixel at distance i / TABLE_SIZE. */
static void fill_table(float *t)
{
    const double a = -0.5;
    for (int i = 0; i <= TABLE_SIZE; i++) {
        float x = (float)(i * 1.0 / TABLE_SIZE);
        t[i * 2] = (float)(((a + 2) * x - (a + 3)) * x * x + 1);
        x += 1.0f;
        t[i * 2 + 1] = (float)(((a * x - 5 * a) * x + 8 * a) * x - 4 * a);
    }
}

/* TensorFlow's GetWeightsAndIndices with Keys' cubic. */
static cubic cubic_of(const float *table, int64_t o, int64_t in, int64_t out)
{
    const float scale = (float)in / (float)out;
    const float in_f = ((float)o + 0.5f) * scale - 0.5f;
    const int64_t base = (int64_t)floorf(in_f);
    const float delta = in_f - (float)base;
    const int64_t off = lrintf(delta * TABLE_SIZE);
    const float raw[4] = { table[off * 2 + 1], table[off * 2], table[(TABLE_SIZE - off) * 2],
                           table[(TABLE_SIZE - off) * 2 + 1] };
    cubic c;
    float sum = 0;
    for (int k = 0; k < 4; k++) {
        int64_t i = base - 1 + k;
        c.at[k] = i < 0 ? 0 : i > in - 1 ? in - 1 : i;
        c.w[k] = c.at[k] == i ? raw[k] : 0.0f;
        sum += c.w[k];
    }
    if (fabsf(sum) >= 1000.0f * FLT_MIN) {
        const float inv = 1.0f / sum;
        for (int k = 0; k < 4; k++)
            c.w[k] *= inv;
    }
    return c;
}

/* Output row `unit`. */
#define BICUBIC_ROW(NAME, T)                                                            \
    static void NAME(const bicubic_job *j, uint64_t unit)                               \
    {                                                                                   \
        const int64_t oy = (int64_t)(unit % (uint64_t)j->oh);                           \
        const int64_t b = (int64_t)(unit / (uint64_t)j->oh), c = j->c;                  \
        const T *img = (const T *)(const void *)j->x + b * j->h * j->w * c;             \
        T *restrict out = (T *)(void *)j->y + (int64_t)unit * j->ow * c;                \
        const cubic ys = cubic_of(j->table, oy, j->h, j->oh);                           \
        const T *rows[4];                                                               \
        T wy[4];                                                                        \
        for (int k = 0; k < 4; k++) {                                                   \
            rows[k] = img + ys.at[k] * j->w * c;                                        \
            wy[k] = (T)ys.w[k];                                                         \
        }                                                                               \
        for (int64_t ox = 0; ox < j->ow; ox++, out += c) {                              \
            const cubic *xs = &j->cols[ox];                                             \
            for (int64_t q = 0; q < c; q++) {                                           \
                T col[4];                                                               \
                for (int k = 0; k < 4; k++) {                                           \
                    const int64_t at = xs->at[k] * c + q;                               \
                    col[k] = rows[0][at] * wy[0] + rows[1][at] * wy[1] +                \
                             rows[2][at] * wy[2] + rows[3][at] * wy[3];                 \
                }                                                                       \
                out[q] = col[0] * (T)xs->w[0] + col[1] * (T)xs->w[1] +                  \
                         col[2] * (T)xs->w[2] + col[3] * (T)xs->w[3];                   \
            }                                                                           \
        }                                                                               \
    }

BICUBIC_ROW(bicubic_f32, float)
BICUBIC_ROW(bicubic_f64, double)

static int bicubic_chunk(size_t cb, size_t ce, void *ctx)
{
    const bicubic_job *j = ctx;
    uint64_t u1 = weft__chunk_begin(j->units, j->chunks, ce);
    for (uint64_t u = weft__chunk_begin(j->units, j->chunks, cb); u < u1; u++) {
        if (j->f32)
            bicubic_f32(j, u);
        else
            bicubic_f64(j, u);
    }
    return 0;
}

int weft__eval_resize_bicubic(weft_runtime *rt, const weft_tensor *x, weft_tensor *out)
{
    if (out->numel == 0)
        return 0;
    float table[(TABLE_SIZE + 1) * 2];
    fill_table(table);
    bicubic_job j = { .f32 = x->dtype == WEFT_F32, .x = x->data, .y = weft__tensor_mut(out),
                      .h = x->dims[1], .w = x->dims[2], .c = x->dims[3], .oh = out->dims[1],
                      .ow = out->dims[2], .table = table };
    j.units = (uint64_t)(out->dims[0] * j.oh);
    j.cols = weft__malloc(sizeof(cubic) * (size_t)j.ow);
    if (!j.cols)
        return weft__errorf(WEFT_ENOMEM, "weft_resize: out of memory for %lld columns",
                            (long long)j.ow);
    for (int64_t ox = 0; ox < j.ow; ox++)
        j.cols[ox] = cubic_of(table, ox, j.w, j.ow);
    j.chunks = weft__chunk_count_of(rt, (uint64_t)out->numel * 24, j.units);
    int rc = weft__run_chunks(rt, j.chunks, bicubic_chunk, &j);
    weft__free(j.cols);
    return rc;
}
