/* tf.signal's Fourier transforms: fft, ifft, rfft and irfft as one FFT
 * node each (trace/kernel_fft.c), and stft, inverse_stft and
 * inverse_stft_window_fn as compositions on them.  weft has no complex
 * dtype: a complex tensor is [..., n, 2], each element's real part then
 * its imaginary part (C99's layout of complex arrays).  Each op checks
 * its inputs first, so that an error names the public op. */
#include "runtime/iface.h"
#include "trace/ctx.h"
#include "trace/fft.h"
#include "trace/ops_impl.h"
#include "trace/shape.h"

weft_value *weft__ops_fft(weft_ctx *cx, const char *fn, weft_value *input, int kind,
                          int64_t len)
{
    WEFT__SCOPE(cx);
    if (!weft__op_enter(cx, fn, &input, 1))
        return NULL;
    weft__node n = { .op = WEFT__OP_FFT, .attr.fft = { .kind = kind, .length = len } };
    return WEFT__KEEP(weft__ops_finish(cx, &n, &input, 1));
}

weft_value *weft_fft(weft_ctx *cx, weft_value *input)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(weft__ops_fft(cx, "weft_fft", input, WEFT__FFT_FORWARD, 0));
}

weft_value *weft_ifft(weft_ctx *cx, weft_value *input)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(weft__ops_fft(cx, "weft_ifft", input, WEFT__FFT_INVERSE, 0));
}

/* The transform's length: fft_length, or (0) the default the input's
 * innermost known dim gives; 0 after recording an error. */
static int64_t real_length(weft_ctx *cx, const char *fn, weft_value *input, int64_t fft_length,
                           bool inverse)
{
    if (fft_length < 0 || fft_length > WEFT__FFT_MAX_LENGTH) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: fft_length %lld is not 0 (the input's) or 1 to %lld",
                       fn, (long long)fft_length, (long long)WEFT__FFT_MAX_LENGTH);
        return 0;
    }
    if (fft_length)
        return fft_length;
    const weft_spec *s = weft__value_spec(input);
    int axis = s->rank == WEFT_RANK_ANY ? -1 : s->rank - (inverse ? 2 : 1);
    int64_t dim = axis >= 0 ? s->dims[axis] : WEFT_DIM_ANY;
    int64_t len = inverse ? 2 * (dim - 1) : dim;
    if (dim < 0 || len < 1) {
        char ss[WEFT__SPEC_STR_MAX];
        weft__ctx_fail(cx, WEFT_ESHAPE, "%s: fft_length 0 takes the length from %s, whose "
                       "%s is %s", fn, weft__spec_str(s, ss, sizeof ss),
                       inverse ? "bin count" : "innermost dim",
                       dim < 0 ? "not known while tracing" : "too small");
        return 0;
    }
    return len;
}

weft_value *weft_rfft(weft_ctx *cx, weft_value *input, int64_t fft_length)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_rfft";
    if (!weft__op_enter(cx, fn, &input, 1))
        return NULL;
    int64_t len = real_length(cx, fn, input, fft_length, false);
    return WEFT__KEEP(len ? weft__ops_fft(cx, fn, input, WEFT__FFT_REAL, len) : NULL);
}

weft_value *weft_irfft(weft_ctx *cx, weft_value *input, int64_t fft_length)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_irfft";
    if (!weft__op_enter(cx, fn, &input, 1))
        return NULL;
    int64_t len = real_length(cx, fn, input, fft_length, true);
    return WEFT__KEEP(len ? weft__ops_fft(cx, fn, input, WEFT__FFT_REAL_INVERSE, len) : NULL);
}

/* TensorFlow's default fft_length: the least power of two >= frame_length. */
static int64_t default_fft_length(int64_t frame_length)
{
    int64_t n = 1;
    while (n < frame_length)
        n <<= 1;
    return n;
}

bool weft__ops_window_fits(weft_ctx *cx, const char *fn, weft_value *window,
                           int64_t frame_length, weft_dtype dtype)
{
    const weft_spec *w = weft__value_spec(window);
    char sw[WEFT__SPEC_STR_MAX];
    bool shape_ok = w->rank == 1 && (w->dims[0] == WEFT_DIM_ANY || w->dims[0] == frame_length);
    if (w->dtype == dtype && shape_ok)
        return true;
    weft__ctx_fail(cx, w->dtype != dtype ? WEFT_EDTYPE : WEFT_ESHAPE,
                   "%s: the window %s is not %s[%lld] (the signal's dtype, frame_length "
                   "elements)", fn, weft__spec_str(w, sw, sizeof sw), weft_dtype_name(dtype),
                   (long long)frame_length);
    return false;
}

/* The window of a short-time transform: `window` when given, else the
 * periodic Hann window. */
static weft_value *frame_window(weft_ctx *cx, const char *fn, weft_value *window,
                                int64_t frame_length, weft_dtype dtype)
{
    if (!window)
        return weft_hann_window(cx, frame_length, true, dtype);
    return weft__ops_window_fits(cx, fn, window, frame_length, dtype) ? window : NULL;
}

/* The checks shared by stft and inverse_stft: lengths, and an input of f32
 * or f64 whose rank is known and at least min_rank. */
static bool stft_checks(weft_ctx *cx, const char *fn, weft_value *input, int min_rank,
                        int64_t frame_length, int64_t frame_step, int64_t fft_length)
{
    if (frame_length < 1 || frame_step < 1 || fft_length < 0 ||
        fft_length > WEFT__FFT_MAX_LENGTH || frame_length > WEFT__FFT_MAX_LENGTH) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: frame_length %lld and frame_step %lld are not "
                       "both >= 1, or fft_length %lld is not 0 (the default) or 1 to %lld", fn,
                       (long long)frame_length, (long long)frame_step, (long long)fft_length,
                       (long long)WEFT__FFT_MAX_LENGTH);
        return false;
    }
    return weft__ops_float_rank(cx, fn, weft__value_spec(input), min_rank, false);
}

weft_value *weft_stft(weft_ctx *cx, weft_value *signals, int64_t frame_length,
                      int64_t frame_step, int64_t fft_length, weft_value *window, bool pad_end)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_stft";
    weft_value *in[2] = { signals, window };
    if (!weft__op_enter_optional(cx, fn, in, 1, 2) ||
        !stft_checks(cx, fn, signals, 1, frame_length, frame_step, fft_length))
        return NULL;
    const weft_spec *s = weft__value_spec(signals);
    if (s->dims[s->rank - 1] < 0) {
        char ss[WEFT__SPEC_STR_MAX];
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: the length of %s is not known while "
                              "tracing (the number of frames depends on it)", fn,
                              weft__spec_str(s, ss, sizeof ss));
    }
    weft_value *w = frame_window(cx, fn, window, frame_length, s->dtype);
    if (!w)
        return NULL;
    /* pad_end: zeros after the signal up to the end of the last frame that
     * starts inside it (weft_frame's rule). */
    if (pad_end) {
        int64_t frames;
        signals = weft__ops_pad_frames_end(cx, signals, s->rank - 1, s->dims[s->rank - 1],
                                           frame_length, frame_step, 0.0, &frames);
    }
    /* One node reads each frame from the signal, times the window, and
     * transforms it: no frames are written out. */
    weft__node node = { .op = WEFT__OP_FFT,
                        .attr.fft = { .kind = WEFT__FFT_FRAMES,
                                      .length = fft_length ? fft_length
                                                           : default_fft_length(frame_length),
                                      .frame_length = frame_length,
                                      .frame_step = frame_step } };
    weft_value *ins[2] = { signals, w };
    return WEFT__KEEP(weft__ops_finish(cx, &node, ins, 2));
}

weft_value *weft_inverse_stft(weft_ctx *cx, weft_value *stfts, int64_t frame_length,
                              int64_t frame_step, int64_t fft_length, weft_value *window)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_inverse_stft";
    weft_value *in[2] = { stfts, window };
    if (!weft__op_enter_optional(cx, fn, in, 1, 2) ||
        !stft_checks(cx, fn, stfts, 3, frame_length, frame_step, fft_length))
        return NULL;
    const weft_spec *s = weft__value_spec(stfts);
    char ss[WEFT__SPEC_STR_MAX];
    /* overlap_and_add's rule: of the dims before the frames only the
     * first may be unknown; the frames, known and not 0. */
    bool ok = s->dims[s->rank - 1] == 2 || s->dims[s->rank - 1] == WEFT_DIM_ANY;
    for (int d = 1; ok && d < s->rank - 1; d++)
        ok = s->dims[d] >= 0;
    if (!ok || s->dims[s->rank - 3] < 1)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: %s is not [..., frames, bins, 2] with the "
                              "frames known and not 0 (and, of the dims before, only the first "
                              "unknown) while tracing", fn, weft__spec_str(s, ss, sizeof ss));
    weft_value *w = frame_window(cx, fn, window, frame_length, s->dtype);
    if (!w)
        return NULL;
    int64_t len = fft_length ? fft_length : default_fft_length(frame_length);
    weft_value *real = weft_irfft(cx, stfts, len);
    /* Each frame cut or zero-padded to frame_length. */
    real = weft__ops_fit_axis(cx, real, s->rank - 1, s->rank - 2, len, frame_length);
    return WEFT__KEEP(weft_overlap_and_add(cx, weft__op_binary(cx, WEFT__OP_MUL, fn, real, w),
                                           frame_step));
}

/* tf.signal.inverse_stft_window_fn: the window over the sum of the
 * squared windows that overlap each sample, ceil(L / step) of them: the
 * squares padded to a multiple of frame_step, folded into rows of
 * frame_step and summed, the sums repeated along the window. */
weft_value *weft_inverse_stft_window(weft_ctx *cx, int64_t frame_step, weft_value *window)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_inverse_stft_window";
    if (!weft__op_enter(cx, fn, &window, 1))
        return NULL;
    const weft_spec *w = weft__value_spec(window);
    char sw[WEFT__SPEC_STR_MAX];
    if (frame_step < 1)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: frame_step %lld is below 1", fn,
                              (long long)frame_step);
    if (w->dtype != WEFT_F32 && w->dtype != WEFT_F64)
        return weft__ctx_fail(cx, WEFT_EDTYPE, "%s: the window %s is not f32 or f64", fn,
                              weft__spec_str(w, sw, sizeof sw));
    if (w->rank != 1 || w->dims[0] < 1)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: the window %s is not a vector of a length "
                              "known while tracing and not 0", fn,
                              weft__spec_str(w, sw, sizeof sw));
    int64_t L = w->dims[0], overlaps = (L + frame_step - 1) / frame_step;
    weft_value *sq = weft__op_binary(cx, WEFT__OP_MUL, fn, window, window);
    int64_t pads[1][2] = { { 0, overlaps * frame_step - L } };
    if (pads[0][1])
        sq = weft_pad(cx, sq, (const int64_t(*)[2])pads, 0.0);
    weft_value *sums = weft_sum(cx, weft_reshape(cx, sq, 2, (int64_t[]){ overlaps, frame_step }),
                                0);
    weft_value *denom = weft_tile(cx, sums, (int64_t[]){ overlaps });
    if (overlaps * frame_step > L)
        denom = weft_slice(cx, denom, (int64_t[]){ 0 }, (int64_t[]){ L }, NULL);
    return WEFT__KEEP(weft__op_binary(cx, WEFT__OP_DIV, fn, window, denom));
}
