/* tf.signal.linear_to_mel_weight_matrix: TensorFlow's composition, step
 * for step in the requested dtype, so that the matrix has its rounding and
 * folds to a constant (it has no tensor input). */
#include <math.h>

#include "runtime/iface.h"
#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

/* HTK's mel scale, TensorFlow's constants. */
#define MEL_BREAK_HZ 700.0
#define MEL_HIGH_Q 1127.0

/* hz in mels, rounded at each step to dtype as TensorFlow's ops would. */
static double hz_to_mel_scalar(double hz, weft_dtype dtype)
{
    if (dtype == WEFT_F32)
        return (double)((float)MEL_HIGH_Q * logf(1.0f + (float)hz / (float)MEL_BREAK_HZ));
    return MEL_HIGH_Q * log(1.0 + hz / MEL_BREAK_HZ);
}

static weft_value *hz_to_mel(const weft__steps *st, weft_value *hz)
{
    weft_value *ratio = weft__step2(st, WEFT__OP_DIV, hz, weft_const_f64(st->cx, MEL_BREAK_HZ));
    weft_value *l = weft__step1(st, WEFT__OP_LOG,
                                weft__step2(st, WEFT__OP_ADD, weft_const_f64(st->cx, 1.0), ratio));
    return weft__step2(st, WEFT__OP_MUL, weft_const_f64(st->cx, MEL_HIGH_Q), l);
}

/* v[from, from + n) of a vector, as a row [1, n]. */
static weft_value *row_of(weft_ctx *cx, weft_value *v, int64_t from, int64_t n)
{
    int64_t begin[1] = { from }, end[1] = { from + n }, dims[2] = { 1, n };
    return weft_reshape(cx, weft_slice(cx, v, begin, end, NULL), 2, dims);
}

static bool mel_args_ok(weft_ctx *cx, const char *fn, int64_t mel_bins, int64_t spec_bins,
                        double sample_rate, double lower, double upper, weft_dtype dtype)
{
    const char *why = NULL;
    if (mel_bins < 1 || spec_bins < 1)
        why = "num_mel_bins and num_spectrogram_bins must be >= 1";
    else if (!(sample_rate > 0) || !isfinite(sample_rate))
        why = "sample_rate must be positive and finite";
    else if (!(lower >= 0))
        why = "lower_edge_hertz must be >= 0";
    else if (!(lower < upper))
        why = "lower_edge_hertz must be below upper_edge_hertz";
    else if (!(upper <= sample_rate / 2))
        why = "upper_edge_hertz must not be above the Nyquist frequency (sample_rate / 2)";
    if (why) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: %s (num_mel_bins %lld, num_spectrogram_bins %lld, "
                       "sample_rate %g, edges %g and %g Hz)", fn, why, (long long)mel_bins,
                       (long long)spec_bins, sample_rate, lower, upper);
        return false;
    }
    return weft__ops_float_dtype_arg(cx, fn, dtype);
}

weft_value *weft_linear_to_mel_weight_matrix(weft_ctx *cx, int64_t num_mel_bins,
                                             int64_t num_spectrogram_bins, double sample_rate,
                                             double lower_edge_hertz, double upper_edge_hertz,
                                             weft_dtype dtype)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_linear_to_mel_weight_matrix";
    if (!weft__op_enter(cx, fn, NULL, 0))
        return NULL;
    if (!mel_args_ok(cx, fn, num_mel_bins, num_spectrogram_bins, sample_rate, lower_edge_hertz,
                     upper_edge_hertz, dtype))
        return NULL;
    const weft__steps st = { cx, fn };
    bool f32 = dtype == WEFT_F32;
    double nyquist = (f32 ? (double)(float)sample_rate : sample_rate) / 2.0;
    /* The spectrogram's bins in mels, the DC bin left out: [bins - 1, 1]. */
    weft_value *freqs = weft_linspace(cx, 0.0, nyquist, num_spectrogram_bins, dtype);
    int64_t b1 = num_spectrogram_bins - 1;
    int64_t begin[1] = { 1 }, end[1] = { num_spectrogram_bins }, col[2] = { b1, 1 };
    weft_value *bins_mel = weft_reshape(cx, hz_to_mel(&st, weft_slice(cx, freqs, begin, end, NULL)),
                                        2, col);
    /* num_mel_bins triangles over num_mel_bins + 2 evenly spaced mels. */
    weft_value *edges = weft_linspace(cx, hz_to_mel_scalar(lower_edge_hertz, dtype),
                                      hz_to_mel_scalar(upper_edge_hertz, dtype),
                                      num_mel_bins + 2, dtype);
    weft_value *lo = row_of(cx, edges, 0, num_mel_bins);
    weft_value *mid = row_of(cx, edges, 1, num_mel_bins);
    weft_value *hi = row_of(cx, edges, 2, num_mel_bins);
    weft_value *rise = weft__step2(&st, WEFT__OP_DIV, weft__step2(&st, WEFT__OP_SUB, bins_mel, lo),
                                   weft__step2(&st, WEFT__OP_SUB, mid, lo));
    weft_value *fall = weft__step2(&st, WEFT__OP_DIV, weft__step2(&st, WEFT__OP_SUB, hi, bins_mel),
                                   weft__step2(&st, WEFT__OP_SUB, hi, mid));
    weft_value *w = weft__step2(&st, WEFT__OP_MAXIMUM, weft_const_f64(cx, 0.0),
                                weft__step2(&st, WEFT__OP_MINIMUM, rise, fall));
    /* The DC bin's row back, as zeros. */
    const int64_t pads[2][2] = { { 1, 0 }, { 0, 0 } };
    return WEFT__KEEP(weft_pad(cx, w, pads, 0.0));
}
