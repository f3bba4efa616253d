/* Signal ops of include/weft/ops.h (tf.signal): frame, overlap_and_add and
 * the windows (hann, hamming, kaiser, kaiser_bessel_derived, vorbis),
 * compositions of other ops.  Each checks its inputs
 * first, so that an error names the public op. */
#include <math.h>

#include "runtime/iface.h"
#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

/* pad_end's rule: ceil(n / step) frames (*frames), the signal padded
 * with value along axis ax up to the end of the last of them. */
weft_value *weft__ops_pad_frames_end(weft_ctx *cx, weft_value *signal, int ax, int64_t n,
                                     int64_t frame_length, int64_t frame_step, double value,
                                     int64_t *frames)
{
    WEFT__SCOPE(cx);
    *frames = (n + frame_step - 1) / frame_step;
    int64_t padded = *frames > 0 ? (*frames - 1) * frame_step + frame_length : 0;
    if (padded <= n)
        return WEFT__KEEP(signal);
    int64_t pads[WEFT_MAX_RANK][2] = { { 0, 0 } };
    pads[ax][1] = padded - n;
    return WEFT__KEEP(weft_pad(cx, signal, (const int64_t(*)[2])pads, value));
}

/* tf.signal.frame: the frames as one gather of an index matrix
 * idx[f, k] = f * step + k along axis, after padding the end when asked. */
weft_value *weft_frame(weft_ctx *cx, weft_value *signal, int64_t frame_length,
                       int64_t frame_step, bool pad_end, double pad_value, int axis)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_frame";
    if (!weft__op_enter(cx, fn, &signal, 1))
        return NULL;
    if (frame_length < 1 || frame_step < 1)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: frame_length %lld and frame_step %lld are "
                              "not both >= 1", fn, (long long)frame_length,
                              (long long)frame_step);
    const weft_spec *s = weft__value_spec(signal);
    char ss[WEFT__SPEC_STR_MAX];
    if (s->rank == WEFT_RANK_ANY || s->rank < 1 || axis < -s->rank || axis >= s->rank)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: axis %d is out of range for %s", fn, axis,
                              weft__spec_str(s, ss, sizeof ss));
    int ax = axis < 0 ? axis + s->rank : axis;
    int64_t n = s->dims[ax];
    if (n < 0)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: the framed dim of %s is unknown while "
                              "tracing (the number of frames depends on it)", fn,
                              weft__spec_str(s, ss, sizeof ss));
    int64_t frames = n < frame_length ? 0 : 1 + (n - frame_length) / frame_step;
    if (pad_end)
        signal = weft__ops_pad_frames_end(cx, signal, ax, n, frame_length, frame_step, pad_value,
                                          &frames);
    int64_t count;
    if (!weft__numel_checked(2, (const int64_t[]){ frames, frame_length }, sizeof(int64_t),
                             &count))
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: %lld frames of %lld overflow", fn,
                              (long long)frames, (long long)frame_length);
    /* The index matrix: f * step + k, a range broadcast against a column. */
    weft_value *starts = weft_mul(cx, weft_range(cx, WEFT_I64, 0, frames, 1),
                                  weft_const_i64(cx, frame_step));
    weft_value *idx = weft__op_binary(cx, WEFT__OP_ADD, fn, weft_expand_dims(cx, starts, 1),
                                      weft_range(cx, WEFT_I64, 0, frame_length, 1));
    return WEFT__KEEP(weft_gather(cx, signal, idx, ax));
}

/* tf.signal.overlap_and_add: the frames, their length padded to seg
 * segments of frame_step, segment k of every frame shifted down k frames
 * (a pad along the frames' axis) and the seg shifted parts added in k
 * order; the rows laid end to end and cut to (frames - 1) step + length. */
weft_value *weft_overlap_and_add(weft_ctx *cx, weft_value *signal, int64_t frame_step)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_overlap_and_add";
    if (!weft__op_enter(cx, fn, &signal, 1))
        return NULL;
    if (frame_step < 1)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: frame_step %lld is below 1", fn,
                              (long long)frame_step);
    const weft_spec *s = weft__value_spec(signal);
    char ss[WEFT__SPEC_STR_MAX];
    /* The frames and their length known and not 0; of the dims before,
     * only the first may be unknown (it becomes the reshapes' -1). */
    bool ok = s->rank != WEFT_RANK_ANY && s->rank >= 2 && s->rank < WEFT_MAX_RANK;
    for (int d = 1; ok && d < s->rank; d++)
        ok = s->dims[d] >= 0;
    if (!ok || s->dims[s->rank - 1] < 1 || s->dims[s->rank - 2] < 1)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: %s is not [..., frames, frame_length] with "
                              "both known and not 0 while tracing", fn,
                              weft__spec_str(s, ss, sizeof ss));
    int r = s->rank;
    int64_t frames = s->dims[r - 2], length = s->dims[r - 1];
    int64_t seg = (length + frame_step - 1) / frame_step;
    int64_t total = (frames - 1) * frame_step + length;
    /* [..., F, seg * step], then [..., F, seg, step]. */
    int64_t pads[WEFT_MAX_RANK][2] = { { 0, 0 } }, dims[WEFT_MAX_RANK];
    pads[r - 1][1] = seg * frame_step - length;
    weft_value *x = pads[r - 1][1] ? weft_pad(cx, signal, (const int64_t(*)[2])pads, 0) : signal;
    for (int d = 0; d < r - 2; d++)
        dims[d] = s->dims[d];
    dims[0] = r > 2 ? -1 : dims[0];
    dims[r - 2] = frames;
    dims[r - 1] = seg;
    dims[r] = frame_step;
    x = weft_reshape(cx, x, r + 1, dims);
    weft_value *sum = NULL;
    for (int64_t k = 0; k < seg; k++) {
        int64_t begin[WEFT_MAX_RANK] = { 0 }, end[WEFT_MAX_RANK];
        for (int d = 0; d <= r; d++)
            end[d] = WEFT_END;
        begin[r - 1] = k;
        end[r - 1] = k + 1;
        weft_value *part = weft_squeeze(cx, weft_slice(cx, x, begin, end, NULL), r - 1);
        for (int d = 0; d < r; d++)
            pads[d][0] = pads[d][1] = 0;
        pads[r - 2][0] = k;
        pads[r - 2][1] = seg - 1 - k;
        part = seg > 1 ? weft_pad(cx, part, (const int64_t(*)[2])pads, 0) : part;
        sum = k == 0 ? part : weft__op_binary(cx, WEFT__OP_ADD, fn, sum, part);
    }
    /* [..., (F + seg - 1) step], cut to the total. */
    dims[r - 2] = (frames + seg - 1) * frame_step;
    weft_value *flat = weft_reshape(cx, sum, r - 1, dims);
    int64_t begin[WEFT_MAX_RANK] = { 0 }, end[WEFT_MAX_RANK];
    for (int d = 0; d < r - 1; d++)
        end[d] = WEFT_END;
    end[r - 2] = total;
    return WEFT__KEEP(weft_slice(cx, flat, begin, end, NULL));
}

/* TensorFlow's raised cosine: a - b cos(2 pi i / denom) for i in [0,
 * length), in the dtype and its order ((2 pi i) / denom), denom = length
 * for a periodic window of even length and length - 1 otherwise (as
 * TensorFlow, whose periodic flag leaves odd lengths alone); length 1
 * gives [1]. */
/* The checks every window makes: a context without an error, a length of
 * 0 or more, a float dtype. */
static bool window_checks(weft_ctx *cx, const char *fn, int64_t length, weft_dtype dtype)
{
    if (!weft__op_enter(cx, fn, NULL, 0))
        return false;
    if (length < 0) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: window_length %lld is negative", fn,
                       (long long)length);
        return false;
    }
    return weft__ops_float_dtype_arg(cx, fn, dtype);
}

static weft_value *cosine_window(weft_ctx *cx, const char *fn, int64_t length, bool periodic,
                                 weft_dtype dtype, double a, double b)
{
    if (!window_checks(cx, fn, length, dtype))
        return NULL;
    if (length == 1)
        return weft_fill(cx, dtype, 1, &length, 1.0);
    double denom = (double)(length + (periodic && length % 2 == 0) - 1);
    weft_value *i = weft_range(cx, dtype, 0, length, 1);
    weft_value *turns = weft__op_binary(cx, WEFT__OP_MUL, fn, weft_const_f64(cx, 2 * M_PI), i);
    weft_value *angle = weft__op_binary(cx, WEFT__OP_DIV, fn, turns, weft_const_f64(cx, denom));
    weft_value *c = weft__op_unary(cx, WEFT__OP_COS, fn, angle);
    return weft__op_binary(cx, WEFT__OP_SUB, fn, weft_const_f64(cx, a),
                           weft__op_binary(cx, WEFT__OP_MUL, fn, weft_const_f64(cx, b), c));
}

weft_value *weft_hann_window(weft_ctx *cx, int64_t window_length, bool periodic,
                             weft_dtype dtype)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(cosine_window(cx, "weft_hann_window", window_length, periodic, dtype, 0.5,
                                    0.5));
}

weft_value *weft_hamming_window(weft_ctx *cx, int64_t window_length, bool periodic,
                                weft_dtype dtype)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(cosine_window(cx, "weft_hamming_window", window_length, periodic, dtype, 0.54,
                                    0.46));
}

/* tf.signal.kaiser_window: exp(num - beta) i0e(num) / i0e(beta), num =
 * beta sqrt(max(0, 1 - (arg / h)^2)), arg = i - h, h = (length - 1) / 2,
 * TensorFlow's steps in the dtype. */
static weft_value *kaiser(weft_ctx *cx, const char *fn, int64_t length, double beta,
                          weft_dtype dtype)
{
    if (length <= 1)
        return weft_fill(cx, dtype, 1, &length, 1.0);
    double h = (double)(length - 1) / 2.0;
    weft__steps st = { cx, fn };
    weft_value *arg = weft__step2(&st, WEFT__OP_SUB, weft_range(cx, dtype, 0, length, 1),
                                  weft_const_f64(cx, h));
    weft_value *r = weft__step2(&st, WEFT__OP_DIV, arg, weft_const_f64(cx, h));
    weft_value *under = weft__step1(&st, WEFT__OP_RELU,
                                    weft__step2(&st, WEFT__OP_SUB, weft_const_f64(cx, 1.0),
                                                weft__step2(&st, WEFT__OP_MUL, r, r)));
    weft_value *b = weft_fill(cx, dtype, 0, NULL, beta);
    weft_value *num = weft__step2(&st, WEFT__OP_MUL, b, weft__step1(&st, WEFT__OP_SQRT, under));
    weft_value *scale = weft__step1(&st, WEFT__OP_EXP, weft__step2(&st, WEFT__OP_SUB, num, b));
    weft_value *ratio = weft__step2(&st, WEFT__OP_DIV, weft__step1(&st, WEFT__OP_BESSEL_I0E, num),
                                    weft__step1(&st, WEFT__OP_BESSEL_I0E, b));
    return weft__step2(&st, WEFT__OP_MUL, scale, ratio);
}

weft_value *weft_kaiser_window(weft_ctx *cx, int64_t window_length, double beta,
                               weft_dtype dtype)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_kaiser_window";
    if (!window_checks(cx, fn, window_length, dtype))
        return NULL;
    if (!isfinite(beta))
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: beta %g is not finite", fn, beta);
    return WEFT__KEEP(kaiser(cx, fn, window_length, beta, dtype));
}

/* tf.signal.kaiser_bessel_derived_window: the square roots of the running
 * sums of a Kaiser window of length / 2 + 1 over its total, the first
 * length / 2 of them, then the same reversed. */
weft_value *weft_kaiser_bessel_derived_window(weft_ctx *cx, int64_t window_length, double beta,
                                              weft_dtype dtype)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_kaiser_bessel_derived_window";
    if (!window_checks(cx, fn, window_length, dtype))
        return NULL;
    if (!isfinite(beta) || window_length % 2 != 0)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: window_length %lld is odd or beta %g is not "
                              "finite (the window is symmetric halves)", fn,
                              (long long)window_length, beta);
    int64_t half = window_length / 2;
    if (half == 0)
        return WEFT__KEEP(weft_fill(cx, dtype, 1, &half, 0.0));
    weft__steps st = { cx, fn };
    weft_value *sums = weft_cumsum(cx, kaiser(cx, fn, half + 1, beta, dtype), 0);
    weft_value *head = weft_slice(cx, sums, (int64_t[]){ 0 }, (int64_t[]){ half }, NULL);
    weft_value *total = weft_slice(cx, sums, (int64_t[]){ half }, (int64_t[]){ half + 1 }, NULL);
    weft_value *halfw = weft__step1(&st, WEFT__OP_SQRT, weft__step2(&st, WEFT__OP_DIV, head, total));
    weft_value *both[2] = { halfw, weft_reverse(cx, halfw, 0) };
    return WEFT__KEEP(weft_concat(cx, both, 2, 0));
}

/* tf.signal.vorbis_window: sin(pi / 2 sin^2(pi / length (i + 1 / 2))) in
 * the dtype. */
weft_value *weft_vorbis_window(weft_ctx *cx, int64_t window_length, weft_dtype dtype)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_vorbis_window";
    if (!window_checks(cx, fn, window_length, dtype))
        return NULL;
    if (window_length == 0)
        return WEFT__KEEP(weft_fill(cx, dtype, 1, &window_length, 0.0));
    weft__steps st = { cx, fn };
    weft_value *arg = weft__step2(&st, WEFT__OP_ADD, weft_range(cx, dtype, 0, window_length, 1),
                                  weft_const_f64(cx, 0.5));
    weft_value *inner = weft__step1(&st, WEFT__OP_SIN,
                                    weft__step2(&st, WEFT__OP_MUL,
                                                weft_const_f64(cx, M_PI / (double)window_length),
                                                arg));
    weft_value *sq = weft__step2(&st, WEFT__OP_MUL, inner, inner);
    weft_value *angle = weft__step2(&st, WEFT__OP_MUL, weft_const_f64(cx, M_PI / 2.0), sq);
    return WEFT__KEEP(weft__step1(&st, WEFT__OP_SIN, angle));
}
