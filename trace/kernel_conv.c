/* conv2d on NHWC data (weft__eval_conv2d).  Output pixel r (batch, row,
 * column, in row-major order) is its patch of the input, the window's
 * pixels with all their channels and zeros where the window lies in the
 * padding, times the filters seen as a [kh * kw * c, o] matrix, which is
 * how HWIO filters are stored.  So the output, seen as [pixels, o], is a
 * matrix product of the patches and the filters.
 *
 * The pixels are cut into tiles of a row count fixed by the shape alone;
 * a tile gathers its patches into scratch and makes one BLAS call (the
 * loop below in a build without a BLAS, and for small products), so each
 * output element sums in an order that does not depend on the worker
 * count.  A 1x1 filter with stride 1 needs no patches: the input is the
 * patch matrix. */
#include <string.h>

#include "runtime/iface.h"
#include "trace/blas.h"
#include "trace/copy.h"
#include "trace/kernels.h"
#include "trace/shape.h"

#if WEFT_HAVE_BLAS
#include "trace/blas_api.h"
#endif

#if defined(__GNUC__) && !defined(__clang__) && defined(__OPTIMIZE__)
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")
#endif

/* A tile's patches take about this much scratch, within the row bounds
 * below: enough rows for the BLAS to run at speed, few enough that the
 * patches stay in the core's cache until the BLAS packs them. */
#define CONV_PATCH_BYTES (256u << 10)
#define CONV_MIN_ROWS 16
#define CONV_MAX_ROWS 256
/* Products of fewer multiply-adds skip the BLAS (as weft_matmul's). */
#define CONV_BLAS_MIN_WORK 4096

typedef struct conv_job {
    weft_dtype dt;
    size_t esize;
    const char *x, *f;
    char *y;
    int64_t h, w, c;                     /* the input's dims after the batch */
    int64_t kh, kw, o;                   /* the filters' height, width, out channels */
    int64_t oh, ow;
    int64_t stride[2], dil[2], pad[2];   /* height, width; pad: before the first window */
    int64_t kdim;                        /* kh * kw * c: a patch's length */
    int64_t rows;                        /* batch * oh * ow: the output pixels */
    int64_t tile_rows;
    uint64_t tiles;
    size_t chunks;
    size_t scratch_per_chunk;            /* 0 when the input is the patch matrix */
    char *scratch;
    bool blas;
} conv_job;

/* ---- Patches ----------------------------------------------------------- */

/* Row ky of a patch: the kw window pixels of input row iy from column x0
 * on, zeros outside the input. */
static void patch_window_row(const conv_job *j, const char *img, int64_t iy, int64_t x0,
                             char *dst)
{
    size_t cb = (size_t)j->c * j->esize;   /* one pixel */
    if (iy < 0 || iy >= j->h) {
        memset(dst, 0, (size_t)j->kw * cb);
        return;
    }
    const char *src = img + (size_t)(iy * j->w) * cb;
    if (j->dil[1] != 1) {
        for (int64_t kx = 0; kx < j->kw; kx++) {
            int64_t ix = x0 + kx * j->dil[1];
            if (ix < 0 || ix >= j->w)
                memset(dst + (size_t)kx * cb, 0, cb);
            else
                memcpy(dst + (size_t)kx * cb, src + (size_t)ix * cb, cb);
        }
        return;
    }
    /* Undilated: the pixels inside the input are one run. */
    int64_t k0 = x0 < 0 ? -x0 : 0, k1 = j->w - x0 < j->kw ? j->w - x0 : j->kw;
    if (k0 > j->kw)
        k0 = j->kw;
    if (k1 < k0)
        k1 = k0;
    memset(dst, 0, (size_t)k0 * cb);
    weft__copy_bytes(dst + (size_t)k0 * cb, src + (size_t)(x0 + k0) * cb, (size_t)(k1 - k0) * cb);
    memset(dst + (size_t)k1 * cb, 0, (size_t)(j->kw - k1) * cb);
}

/* The patch of output pixel r into dst (kdim elements). */
static void patch(const conv_job *j, int64_t r, char *dst)
{
    int64_t ox = r % j->ow, rest = r / j->ow, oy = rest % j->oh, b = rest / j->oh;
    const char *img = j->x + (size_t)(b * j->h * j->w * j->c) * j->esize;
    int64_t y0 = oy * j->stride[0] - j->pad[0], x0 = ox * j->stride[1] - j->pad[1];
    size_t row_bytes = (size_t)(j->kw * j->c) * j->esize;
    for (int64_t ky = 0; ky < j->kh; ky++)
        patch_window_row(j, img, y0 + ky * j->dil[0], x0, dst + (size_t)ky * row_bytes);
}

/* ---- Products ---------------------------------------------------------- */

/* Y[m, o] = P[m, kdim] x F[kdim, o], each Y row an axpy over F's rows. */
#define CONV_LOOP(NAME, T)                                                              \
    static void NAME(const conv_job *j, int64_t m, const char *pp, char *yp)            \
    {                                                                                   \
        const int64_t k = j->kdim, o = j->o;                                            \
        const T *restrict P = (const T *)(const void *)pp;                              \
        const T *restrict F = (const T *)(const void *)j->f;                            \
        T *restrict Y = (T *)(void *)yp;                                                \
        for (int64_t i = 0; i < m; i++) {                                               \
            T *restrict yrow = Y + i * o;                                               \
            for (int64_t q = 0; q < o; q++)                                             \
                yrow[q] = 0;                                                            \
            for (int64_t p = 0; p < k; p++) {                                           \
                const T av = P[i * k + p];                                              \
                const T *restrict frow = F + p * o;                                     \
                for (int64_t q = 0; q < o; q++)                                         \
                    yrow[q] += av * frow[q];                                            \
            }                                                                           \
        }                                                                               \
    }

CONV_LOOP(conv_loop_f32, float)
CONV_LOOP(conv_loop_f64, double)

static void product(const conv_job *j, int64_t m, const char *p, char *y)
{
#if WEFT_HAVE_BLAS
    if (j->blas) {
        int mi = (int)m, ki = (int)j->kdim, oi = (int)j->o;
        if (j->dt == WEFT_F32)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, mi, oi, ki, 1.0f,
                        (const float *)(const void *)p, ki, (const float *)(const void *)j->f,
                        oi, 0.0f, (float *)(void *)y, oi);
        else
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, mi, oi, ki, 1.0,
                        (const double *)(const void *)p, ki, (const double *)(const void *)j->f,
                        oi, 0.0, (double *)(void *)y, oi);
        return;
    }
#endif
    if (j->dt == WEFT_F32)
        conv_loop_f32(j, m, p, y);
    else
        conv_loop_f64(j, m, p, y);
}

/* Tile t: its patches (unless the input is the patch matrix), then its
 * product. */
static void conv_tile(const conv_job *j, uint64_t t, char *scratch)
{
    int64_t r0 = (int64_t)t * j->tile_rows;
    int64_t m = j->rows - r0 < j->tile_rows ? j->rows - r0 : j->tile_rows;
    size_t patch_bytes = (size_t)j->kdim * j->esize;
    const char *p = j->x + (size_t)r0 * patch_bytes;
    if (j->scratch_per_chunk) {
        for (int64_t i = 0; i < m; i++)
            patch(j, r0 + i, scratch + (size_t)i * patch_bytes);
        p = scratch;
    }
    product(j, m, p, j->y + (size_t)(r0 * j->o) * j->esize);
}

/* Chunks [cb, ce) hold the tiles from the first's start to the last's
 * end; they use chunk cb's scratch, which no other call holds. */
static int conv_chunk(size_t cb, size_t ce, void *ctx)
{
    const conv_job *j = ctx;
    char *scratch = j->scratch + cb * j->scratch_per_chunk;
    if (j->blas)
        weft__blas_thread_enter();
    uint64_t t1 = weft__chunk_begin(j->tiles, j->chunks, ce);
    for (uint64_t t = weft__chunk_begin(j->tiles, j->chunks, cb); t < t1; t++)
        conv_tile(j, t, scratch);
    return 0;
}

/* ---- Setup ------------------------------------------------------------- */

/* Fills j's dims and placement from the node and the tensors, and returns
 * the multiply-adds of the whole product. */
static uint64_t conv_setup(conv_job *j, const weft__node *n, const weft_tensor *x,
                           const weft_tensor *f, weft_tensor *out)
{
    *j = (conv_job){ .dt = x->dtype, .esize = weft_dtype_size(x->dtype), .x = x->data,
                     .f = f->data, .y = weft__tensor_mut(out) };
    j->h = x->dims[1];
    j->w = x->dims[2];
    j->c = x->dims[3];
    j->kh = f->dims[0];
    j->kw = f->dims[1];
    j->o = f->dims[3];
    j->oh = out->dims[1];
    j->ow = out->dims[2];
    int64_t size[2] = { j->h, j->w }, window[2] = { j->kh, j->kw };
    for (int d = 0; d < 2; d++) {
        j->stride[d] = n->attr.conv.stride[d];
        j->dil[d] = n->attr.conv.dilation[d];
        weft__conv_out_dim(n->attr.conv.padding, size[d], window[d], j->stride[d], j->dil[d],
                           &j->pad[d]);
    }
    j->kdim = j->kh * j->kw * j->c;
    j->rows = out->dims[0] * j->oh * j->ow;
    uint64_t work = weft__sat_mul(weft__sat_mul((uint64_t)j->rows, (uint64_t)j->kdim),
                                  (uint64_t)j->o);
    j->blas = weft__blas_available() && work >= CONV_BLAS_MIN_WORK && j->kdim <= INT32_MAX &&
              j->o <= INT32_MAX;
    return work;
}

/* Tiles by the patch length alone; chunks by the work. */
static void conv_plan(conv_job *j, weft_runtime *rt, uint64_t work)
{
    int64_t rows = (int64_t)(CONV_PATCH_BYTES / ((size_t)j->kdim * j->esize));
    j->tile_rows = rows < CONV_MIN_ROWS ? CONV_MIN_ROWS : rows > CONV_MAX_ROWS ? CONV_MAX_ROWS
                                                                              : rows;
    j->tiles = ((uint64_t)j->rows + (uint64_t)j->tile_rows - 1) / (uint64_t)j->tile_rows;
    j->chunks = weft__chunk_count_of(rt, work, j->tiles);
    bool is_patch_matrix = j->kh == 1 && j->kw == 1 && j->stride[0] == 1 && j->stride[1] == 1;
    if (!is_patch_matrix)
        j->scratch_per_chunk = (size_t)j->tile_rows * (size_t)j->kdim * j->esize;
}

int weft__eval_conv2d(weft_runtime *rt, const weft__node *n, const weft_tensor *x,
                      const weft_tensor *filters, weft_tensor *out)
{
    if (out->numel == 0)
        return 0;
    conv_job j;
    uint64_t work = conv_setup(&j, n, x, filters, out);
    if (j.kdim == 0) {
        memset(j.y, 0, out->nbytes);   /* no input channels: empty sums */
        return 0;
    }
    conv_plan(&j, rt, work);
    if (j.scratch_per_chunk) {
        j.scratch = weft__malloc(j.scratch_per_chunk * j.chunks);
        if (!j.scratch)
            return weft__errorf(WEFT_ENOMEM, "weft_conv2d: out of memory for %zu bytes of "
                                "patches", j.scratch_per_chunk * j.chunks);
    }
    int rc = weft__run_chunks_blas(rt, j.chunks, conv_chunk, &j, j.blas);
    weft__free(j.scratch);
    return rc;
}
