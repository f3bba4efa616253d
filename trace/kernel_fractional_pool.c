/* fractional_max_pool and fractional_avg_pool (tf.nn.*) on NHWC data, over
 * the pooling sequences the composition drew (trace/ops_fractional_pool.c):
 * output pixel (i, j) pools the input rows rows[i] .. rows[i + 1] - 1 and
 * columns cols[j] .. cols[j + 1] - 1, one more of each when overlapping,
 * cut at the input's last row and column, as TensorFlow's kernels do.
 * The maximum keeps a NaN (weft_max_pool2d's rule); the average sums in
 * the dtype in row-major order and divides by the count once (TensorFlow's
 * order, so f32 results are its bits; integers divide toward zero).  The
 * argmax mode, for the maximum's gradient, gives the flat index ((y width
 * + x) channels + c) within the image of the first element that holds
 * each maximum, as TensorFlow's FractionalMaxPoolGrad picks it.  The
 * average's gradient mode gives each input element the sum of g / count
 * over the (one or two) regions of each dim that hold it, in f64 in
 * TensorFlow's order (FractionalAvgPoolGrad's), rounded once.  The work is
 * cut by output rows (input rows for the gradient); each element is
 * computed alone. */
#include <string.h>

#include "runtime/iface.h"
#include "trace/kernels.h"
#include "trace/shape.h"
#include "trace/tensor_impl.h"

#if defined(__GNUC__) && !defined(__clang__) && defined(__OPTIMIZE__)
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")
#endif

typedef struct frac_job frac_job;
typedef void (*frac_row_fn)(const frac_job *, int64_t, int64_t, double *);

struct frac_job {
    const char *x;
    char *y;
    const int64_t *rows, *cols;
    int64_t batch, h, w, c, oh, ow;
    bool overlapping;
    frac_row_fn row;
    size_t chunks;
    /* The gradient mode: the first region holding each input row and
     * column, and how many do (1 or 2); a scratch row of c doubles a
     * chunk. */
    int64_t *row_first, *row_count, *col_first, *col_count;
    double *acc;
};

/* The last input index of region i of a sequence over size elements. */
static int64_t region_end(const frac_job *j, const int64_t *seq, int64_t i, int64_t size)
{
    int64_t end = j->overlapping ? seq[i + 1] : seq[i + 1] - 1;
    return end < size - 1 ? end : size - 1;
}

/* One output row (image b, row i): each pixel's region reduced over its
 * contiguous channels.  FIRST sets the pixel from the region's first
 * element, TAKE(m, v) takes another in, FINISH ends the pixel (count: the
 * region's elements). */
#define FRAC_ROW(NAME, T, FIRST, TAKE, FINISH)                                          \
    static void NAME(const frac_job *j, int64_t b, int64_t i, double *scratch)         \
    {                                                                                   \
        (void)scratch;                                                                  \
        const int64_t c = j->c, w = j->w;                                               \
        const int64_t y0 = j->rows[i], y1 = region_end(j, j->rows, i, j->h);            \
        const T *img = (const T *)(const void *)j->x + b * j->h * w * c;                \
        T *restrict m = (T *)(void *)j->y + (b * j->oh + i) * j->ow * c;                \
        for (int64_t o = 0; o < j->ow; o++, m += c) {                                   \
            const int64_t x0 = j->cols[o], x1 = region_end(j, j->cols, o, w);           \
            const T *restrict first = img + (y0 * w + x0) * c;                          \
            for (int64_t q = 0; q < c; q++)                                             \
                m[q] = FIRST(first[q]);                                                 \
            for (int64_t iy = y0; iy <= y1; iy++)                                       \
                for (int64_t ix = iy == y0 ? x0 + 1 : x0; ix <= x1; ix++) {             \
                    const T *restrict v = img + (iy * w + ix) * c;                      \
                    for (int64_t q = 0; q < c; q++)                                     \
                        m[q] = TAKE(m[q], v[q]);                                        \
                }                                                                       \
            const T count = (T)((y1 - y0 + 1) * (x1 - x0 + 1));                         \
            (void)count;                                                                \
            for (int64_t q = 0; q < c; q++)                                             \
                m[q] = FINISH(m[q], count);                                             \
        }                                                                               \
    }

#define SAME(v) (v)
#define FROM_ZERO(v) (0 + (v))   /* TensorFlow's sum starts at 0: -0.0 becomes 0.0 */
#define PLUS(m, v) ((m) + (v))
#define AS_IS(m, count) (m)
#define OVER(m, count) ((m) / (count))
#define FLOAT_MAX(m, v) ((m) >= (v) || (m) != (m) ? (m) : (v))
#define INT_MAX_OF(m, v) ((m) >= (v) ? (m) : (v))

FRAC_ROW(max_f32, float, SAME, FLOAT_MAX, AS_IS)
FRAC_ROW(max_f64, double, SAME, FLOAT_MAX, AS_IS)
FRAC_ROW(max_i32, int32_t, SAME, INT_MAX_OF, AS_IS)
FRAC_ROW(max_i64, int64_t, SAME, INT_MAX_OF, AS_IS)
FRAC_ROW(avg_f32, float, FROM_ZERO, PLUS, OVER)
FRAC_ROW(avg_f64, double, FROM_ZERO, PLUS, OVER)
FRAC_ROW(avg_i32, int32_t, SAME, PLUS, OVER)
FRAC_ROW(avg_i64, int64_t, SAME, PLUS, OVER)

/* The argmax of one output row: a pixel's index moves only to a greater
 * element, or to a NaN when its own element is not one (the first NaN
 * is the maximum, as in max mode). */
#define FRAC_ARGMAX(NAME, T)                                                            \
    static void NAME(const frac_job *j, int64_t b, int64_t i, double *scratch)         \
    {                                                                                   \
        (void)scratch;                                                                  \
        const int64_t c = j->c, w = j->w;                                               \
        const int64_t y0 = j->rows[i], y1 = region_end(j, j->rows, i, j->h);            \
        const T *img = (const T *)(const void *)j->x + b * j->h * w * c;                \
        int64_t *at = (int64_t *)(void *)j->y + (b * j->oh + i) * j->ow * c;            \
        for (int64_t o = 0; o < j->ow; o++, at += c) {                                  \
            const int64_t x0 = j->cols[o], x1 = region_end(j, j->cols, o, w);           \
            for (int64_t q = 0; q < c; q++)                                             \
                at[q] = (y0 * w + x0) * c + q;                                          \
            for (int64_t iy = y0; iy <= y1; iy++)                                       \
                for (int64_t ix = iy == y0 ? x0 + 1 : x0; ix <= x1; ix++) {             \
                    const T *v = img + (iy * w + ix) * c;                               \
                    for (int64_t q = 0; q < c; q++) {                                   \
                        T m = img[at[q]];                                               \
                        if (m == m && (v[q] > m || v[q] != v[q]))                       \
                            at[q] = (iy * w + ix) * c + q;                              \
                    }                                                                   \
                }                                                                       \
        }                                                                               \
    }

FRAC_ARGMAX(argmax_f32, float)
FRAC_ARGMAX(argmax_f64, double)
FRAC_ARGMAX(argmax_i32, int32_t)
FRAC_ARGMAX(argmax_i64, int64_t)

/* A region's element count along one dim. */
static int64_t region_length(const frac_job *j, const int64_t *seq, int64_t i, int64_t size)
{
    return region_end(j, seq, i, size) - seq[i] + 1;
}

/* One input row (image b, row y) of the average's gradient: j->x is g
 * [batch, oh, ow, c], j->y the input's gradient [batch, h, w, c]. */
#define FRAC_AVG_GRAD(NAME, T)                                                          \
    static void NAME(const frac_job *j, int64_t b, int64_t y, double *acc)             \
    {                                                                                   \
        const int64_t c = j->c;                                                         \
        const T *g = (const T *)(const void *)j->x + b * j->oh * j->ow * c;             \
        T *out = (T *)(void *)j->y + (b * j->h + y) * j->w * c;                         \
        for (int64_t x = 0; x < j->w; x++, out += c) {                                  \
            for (int64_t q = 0; q < c; q++)                                             \
                acc[q] = 0;                                                             \
            for (int64_t i = j->row_first[y]; i < j->row_first[y] + j->row_count[y]; i++) \
                for (int64_t o = j->col_first[x]; o < j->col_first[x] + j->col_count[x];   \
                     o++) {                                                             \
                    double count = (double)(region_length(j, j->rows, i, j->h) *        \
                                            region_length(j, j->cols, o, j->w));        \
                    const T *v = g + (i * j->ow + o) * c;                               \
                    for (int64_t q = 0; q < c; q++)                                     \
                        acc[q] += (double)v[q] / count;                                 \
                }                                                                       \
            for (int64_t q = 0; q < c; q++)                                             \
                out[q] = (T)acc[q];                                                     \
        }                                                                               \
    }

FRAC_AVG_GRAD(avg_grad_f32, float)
FRAC_AVG_GRAD(avg_grad_f64, double)

/* The row function of a mode and dtype (f32, f64, i32, i64 in turn). */
static frac_row_fn row_fn(int mode, weft_dtype dt)
{
    static const frac_row_fn fns[4][4] = {
        [WEFT__FRACTIONAL_MAX] = { max_f32, max_f64, max_i32, max_i64 },
        [WEFT__FRACTIONAL_AVG] = { avg_f32, avg_f64, avg_i32, avg_i64 },
        [WEFT__FRACTIONAL_ARGMAX] = { argmax_f32, argmax_f64, argmax_i32, argmax_i64 },
        [WEFT__FRACTIONAL_AVG_GRAD] = { avg_grad_f32, avg_grad_f64, NULL, NULL },
    };
    int d = dt == WEFT_F32 ? 0 : dt == WEFT_F64 ? 1 : dt == WEFT_I32 ? 2 : 3;
    return fns[mode][d];
}

/* The rows a unit is: the output's, or the input's for the gradient. */
static int64_t unit_rows(const frac_job *j)
{
    return j->acc ? j->h : j->oh;
}

static int frac_chunk(size_t cb, size_t ce, void *ctx)
{
    const frac_job *j = ctx;
    int64_t per = unit_rows(j);
    uint64_t units = (uint64_t)(j->batch * per);
    for (size_t c = cb; c < ce; c++) {
        uint64_t u0 = weft__chunk_begin(units, j->chunks, c),
                 u1 = weft__chunk_begin(units, j->chunks, c + 1);
        double *scratch = j->acc ? j->acc + c * (size_t)j->c : NULL;
        for (uint64_t u = u0; u < u1; u++)
            j->row(j, (int64_t)u / per, (int64_t)u % per, scratch);
    }
    return 0;
}

/* For each of size elements, the first of the n regions of seq holding
 * it and how many do (regions are sorted and cover every element). */
static void holders(const frac_job *j, const int64_t *seq, int64_t n, int64_t size,
                    int64_t *first, int64_t *count)
{
    for (int64_t e = 0; e < size; e++)
        count[e] = 0;
    for (int64_t i = n - 1; i >= 0; i--)
        for (int64_t e = seq[i]; e <= region_end(j, seq, i, size); e++) {
            first[e] = i;
            count[e]++;
        }
}

/* Whether seq (n + 1 entries) starts at 0, rises by 1 or more each step
 * and starts each region within size elements: what the kernel reads. */
static bool sequence_fits(const int64_t *seq, int64_t n, int64_t size)
{
    if (seq[0] != 0)
        return false;
    for (int64_t i = 0; i < n; i++)
        if (seq[i + 1] <= seq[i] || seq[i] >= size)
            return false;
    return true;
}

int weft__eval_fractional_pool(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                               weft_tensor *out)
{
    frac_job j = { .x = weft_tensor_data(in[0]), .y = weft__tensor_mut(out),
                   .rows = weft_tensor_data(in[1]), .cols = weft_tensor_data(in[2]) };
    bool grad = n->attr.resize.method == WEFT__FRACTIONAL_AVG_GRAD;
    const weft_tensor *big = grad ? out : in[0], *small = grad ? in[0] : out;
    j.batch = big->dims[0];
    j.h = big->dims[1];
    j.w = big->dims[2];
    j.c = big->dims[3];
    j.oh = small->dims[1];
    j.ow = small->dims[2];
    j.overlapping = n->attr.resize.antialias;
    j.row = row_fn(n->attr.resize.method, in[0]->dtype);
    if (!sequence_fits(j.rows, j.oh, j.h) || !sequence_fits(j.cols, j.ow, j.w))
        return weft__errorf(WEFT_EINVAL, "%s: a pooling sequence does not rise from 0 by 1 or "
                            "more within the input", weft__fractional_pool_fn(n));
    uint64_t units = (uint64_t)(j.batch * (grad ? j.h : j.oh));
    if (units == 0 || j.w == 0 || j.ow == 0 || j.c == 0)
        return 0;
    j.chunks = weft__chunk_count_of(rt, (uint64_t)(j.batch * j.h * j.w * j.c), units);
    int rc = 0;
    if (grad) {
        size_t room = (size_t)(2 * (j.h + j.w)) * sizeof(int64_t);
        j.row_first = weft__malloc(room);
        j.acc = weft__malloc(j.chunks * (size_t)j.c * sizeof *j.acc);
        if (!j.row_first || !j.acc) {
            rc = weft__errorf(WEFT_ENOMEM, "%s: out of memory", weft__fractional_pool_fn(n));
            goto done;
        }
        j.row_count = j.row_first + j.h;
        j.col_first = j.row_count + j.h;
        j.col_count = j.col_first + j.w;
        holders(&j, j.rows, j.oh, j.h, j.row_first, j.row_count);
        holders(&j, j.cols, j.ow, j.w, j.col_first, j.col_count);
    }
    rc = weft__run_chunks(rt, j.chunks, frac_chunk, &j);
done:
    weft__free(j.row_first);
    weft__free(j.acc);
    return rc;
}

const char *weft__fractional_pool_fn(const weft__node *n)
{
    int mode = n->attr.resize.method;
    return mode == WEFT__FRACTIONAL_AVG || mode == WEFT__FRACTIONAL_AVG_GRAD
               ? "weft_fractional_avg_pool"
               : "weft_fractional_max_pool";
}

/* x [batch, height, width, channels] of f32, f64, i32 or i64; the row and
 * column sequences i64 vectors of a known length of 2 or more. */
int weft__infer_fractional_pool(const weft__node *n, const weft_spec *in, weft_spec *out)
{
    const char *fn = weft__fractional_pool_fn(n);
    const weft_spec *x = &in[0];
    char s1[WEFT__SPEC_STR_MAX];
    if (x->dtype != WEFT_F32 && x->dtype != WEFT_F64 && x->dtype != WEFT_I32 &&
        x->dtype != WEFT_I64)
        return weft__errorf(WEFT_EDTYPE, "%s: the value %s is not f32, f64, i32 or i64", fn,
                            weft__spec_str(x, s1, sizeof s1));
    if (x->rank != 4 || x->dims[1] < 1 || x->dims[2] < 1)
        return weft__errorf(WEFT_ESHAPE, "%s: the value %s is not [batch, height, width, "
                            "channels] with a height and width known and 1 or more", fn,
                            weft__spec_str(x, s1, sizeof s1));
    for (int k = 1; k <= 2; k++)
        if (in[k].dtype != WEFT_I64 || in[k].rank != 1 || in[k].dims[0] < 2)
            return weft__errorf(WEFT_ESHAPE, "%s: the pooling sequence %s is not an i64 vector "
                                "of a known length of 2 or more", fn,
                                weft__spec_str(&in[k], s1, sizeof s1));
    *out = *x;
    if (n->attr.resize.method == WEFT__FRACTIONAL_AVG_GRAD) {
        if ((x->dtype != WEFT_F32 && x->dtype != WEFT_F64) || x->dims[1] != in[1].dims[0] - 1 ||
            x->dims[2] != in[2].dims[0] - 1)
            return weft__errorf(WEFT_ESHAPE, "%s: the gradient %s is not f32 or f64 of the "
                                "pool's shape", fn, weft__spec_str(x, s1, sizeof s1));
        out->dims[1] = n->attr.resize.size[0];
        out->dims[2] = n->attr.resize.size[1];
        return 0;
    }
    out->dims[1] = in[1].dims[0] - 1;
    out->dims[2] = in[2].dims[0] - 1;
    if (n->attr.resize.method == WEFT__FRACTIONAL_ARGMAX)
        out->dtype = WEFT_I64;
    return 0;
}
