/* FFT (weft__eval_fft): tf.signal's fft, ifft, rfft and irfft over the
 * innermost transform axis, and stft's transforms of windowed frames read
 * straight from the signal (no frames in memory), each row computed in
 * f64 by the plan of trace/fft.h and rounded once to the dtype.  The rows are cut into
 * chunks of whole rows and no row's result depends on the cut, so the
 * bits do not depend on the worker count. */
#include <string.h>

#include "runtime/iface.h"
#include "trace/fft.h"
#include "trace/kernels.h"
#include "trace/shape.h"

typedef struct fft_job {
    const weft__fft_plan *plan;
    const char *in;
    const char *window;   /* FRAMES: frame_length values */
    char *out;
    weft_dtype dt;
    int kind;
    int64_t rows;
    int64_t in_len;   /* an input row's length: reals (REAL, FRAMES) or pairs */
    int64_t frames, frame_length, frame_step;   /* FRAMES: per signal */
    size_t chunks;
} fft_job;

const char *weft__fft_name(int kind)
{
    static const char *const names[] = { "weft_fft", "weft_ifft", "weft_rfft", "weft_irfft",
                                         "weft_stft" };
    return names[kind];
}

/* count elements of p from element `at` into dst as doubles. */
static void load_span(const char *p, weft_dtype dt, int64_t at, int64_t count, double *dst)
{
    if (dt == WEFT_F32) {
        const float *src = (const float *)(const void *)p + at;
        for (int64_t e = 0; e < count; e++)
            dst[e] = src[e];
    } else {
        memcpy(dst, (const double *)(const void *)p + at, sizeof(double) * (size_t)count);
    }
}

/* count values of src over div into p from element `at` (div 1: as they
 * are), each rounded once to the dtype. */
static void store_span(char *p, weft_dtype dt, int64_t at, const double *src, int64_t count,
                       double div)
{
    if (dt == WEFT_F32) {
        float *dst = (float *)(void *)p + at;
        for (int64_t e = 0; e < count; e++)
            dst[e] = (float)(src[e] / div);
    } else {
        double *dst = (double *)(void *)p + at;
        for (int64_t e = 0; e < count; e++)
            dst[e] = src[e] / div;
    }
}

/* Frame f of signal s times the window, its first `used` samples, each
 * product rounded to the dtype as a product of frames and window would be;
 * zeros to n. */
static void load_frame(const fft_job *j, int64_t row, int64_t n, double *x)
{
    int64_t sig = row / j->frames, f = row % j->frames;
    int64_t used = j->frame_length < n ? j->frame_length : n;
    int64_t at = sig * j->in_len + f * j->frame_step;
    if (j->dt == WEFT_F32) {
        const float *src = (const float *)(const void *)j->in + at;
        const float *w = (const float *)(const void *)j->window;
        for (int64_t k = 0; k < used; k++)
            x[k] = src[k] * w[k];
    } else {
        const double *src = (const double *)(const void *)j->in + at;
        const double *w = (const double *)(const void *)j->window;
        for (int64_t k = 0; k < used; k++)
            x[k] = src[k] * w[k];
    }
    memset(x + used, 0, sizeof(double) * (size_t)(n - used));
}

/* Row `row` of the input as the transform reads it: n pairs (fft,
 * ifft), n reals cut or zero-padded from the row (rfft), or the first
 * n / 2 + 1 pairs of a Hermitian spectrum, cut or zero-padded (irfft). */
static void load_row(const fft_job *j, int64_t row, int64_t n, double *x)
{
    int64_t len = j->in_len, used;
    switch (j->kind) {
    case WEFT__FFT_FRAMES:
        load_frame(j, row, n, x);
        break;
    case WEFT__FFT_REAL:
        used = len < n ? len : n;
        load_span(j->in, j->dt, row * len, used, x);
        memset(x + used, 0, sizeof(double) * (size_t)(n - used));
        break;
    case WEFT__FFT_REAL_INVERSE:
        used = len < n / 2 + 1 ? len : n / 2 + 1;
        load_span(j->in, j->dt, row * len * 2, 2 * used, x);
        memset(x + 2 * used, 0, sizeof(double) * 2 * (size_t)(n / 2 + 1 - used));
        break;
    default:
        load_span(j->in, j->dt, row * 2 * n, 2 * n, x);
        break;
    }
}

/* The transformed row into the output: every pair (fft, ifft over n), the
 * first n / 2 + 1 pairs (rfft) or the n reals over n (irfft).  Division
 * by n (not a product with 1 / n) keeps one rounding. */
static void store_row(const fft_job *j, int64_t row, int64_t n, const double *x)
{
    int64_t pairs = n / 2 + 1;
    switch (j->kind) {
    case WEFT__FFT_FORWARD:
        store_span(j->out, j->dt, row * 2 * n, x, 2 * n, 1.0);
        break;
    case WEFT__FFT_INVERSE:
        store_span(j->out, j->dt, row * 2 * n, x, 2 * n, (double)n);
        break;
    case WEFT__FFT_REAL:
    case WEFT__FFT_FRAMES:
        store_span(j->out, j->dt, row * 2 * pairs, x, 2 * pairs, 1.0);
        break;
    default:
        store_span(j->out, j->dt, row * n, x, n, (double)n);
        break;
    }
}

static int fft_chunks(size_t cb, size_t ce, void *ctx)
{
    const fft_job *j = ctx;
    int64_t n = j->plan->n;
    size_t data = weft__fft_data_doubles(j->plan);
    double *x = weft__malloc(sizeof *x * (data + weft__fft_scratch_doubles(j->plan)));
    if (!x)
        return weft__errorf(WEFT_ENOMEM, "%s: out of memory for a transform of length %lld",
                            weft__fft_name(j->kind), (long long)n);
    double *scratch = x + data;
    bool inverse = j->kind == WEFT__FFT_INVERSE || j->kind == WEFT__FFT_REAL_INVERSE;
    bool real = j->kind >= WEFT__FFT_REAL;
    for (size_t c = cb; c < ce; c++) {
        int64_t lo = (int64_t)weft__chunk_begin((uint64_t)j->rows, j->chunks, c);
        int64_t hi = (int64_t)weft__chunk_begin((uint64_t)j->rows, j->chunks, c + 1);
        for (int64_t r = lo; r < hi; r++) {
            load_row(j, r, n, x);
            (real ? weft__fft_run_real : weft__fft_run)(j->plan, x, inverse, scratch);
            store_row(j, r, n, x);
        }
    }
    weft__free(x);
    return 0;
}

int weft__eval_fft(weft_runtime *rt, const weft__node *n, weft_tensor *const *in,
                   weft_tensor *out)
{
    const weft_tensor *x = in[0];
    fft_job j = { .in = weft_tensor_data(x), .out = weft__tensor_mut(out), .dt = x->dtype,
                  .kind = n->attr.fft.kind, .rows = 1 };
    bool real_in = j.kind == WEFT__FFT_REAL || j.kind == WEFT__FFT_FRAMES;
    int batch_rank = x->rank - (real_in ? 1 : 2);
    for (int d = 0; d < batch_rank; d++)
        j.rows *= x->dims[d];
    j.in_len = x->dims[batch_rank];
    if (j.kind == WEFT__FFT_FRAMES) {
        j.window = weft_tensor_data(in[1]);
        j.frame_length = n->attr.fft.frame_length;
        j.frame_step = n->attr.fft.frame_step;
        j.frames = out->dims[out->rank - 3];
        j.rows *= j.frames;
    }
    int64_t len = n->attr.fft.length ? n->attr.fft.length : j.in_len;
    if (j.rows == 0 || len == 0)
        return 0;
    weft__fft_plan plan;
    if (weft__fft_plan_init(&plan, len, j.kind >= WEFT__FFT_REAL) != 0)
        return weft__errorf(WEFT_ENOMEM, "%s: out of memory for the plan of a transform of "
                            "length %lld", weft__fft_name(j.kind), (long long)len);
    j.plan = &plan;
    uint64_t work = weft__sat_mul((uint64_t)j.rows, weft__sat_mul((uint64_t)plan.m, 64));
    j.chunks = weft__chunk_count_of(rt, work, (uint64_t)j.rows);
    int rc = weft__run_chunks(rt, j.chunks, fft_chunks, &j);
    weft__fft_plan_free(&plan);
    return rc;
}
