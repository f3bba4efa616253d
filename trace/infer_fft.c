/* Shape and dtype inference of FFT (tf.signal's fft, ifft, rfft, irfft and
 * the framed transform of stft): f32 or f64; a complex input is [..., n,
 * 2] (real and imaginary parts); the transform runs over its innermost
 * axis.  As elsewhere, the same code checks a node while tracing (dims
 * may be unknown) and again before the kernel runs. */
#include "runtime/iface.h"
#include "trace/fft.h"
#include "trace/shape.h"

/* stft's frames: the window [frame_length] of the signals' dtype; the
 * result [..., frames, n / 2 + 1, 2]. */
static int infer_frames(const weft__node *n, const weft_spec *in, weft_spec *out)
{
    const weft_spec *sig = &in[0], *win = &in[1];
    int64_t fl = n->attr.fft.frame_length, step = n->attr.fft.frame_step;
    char ss[WEFT__SPEC_STR_MAX], sw[WEFT__SPEC_STR_MAX];
    weft__spec_str(sig, ss, sizeof ss);
    weft__spec_str(win, sw, sizeof sw);
    if (fl < 1 || step < 1)
        return weft__errorf(WEFT_EINVAL, "weft_stft: frame_length %lld and frame_step %lld are "
                            "not both >= 1", (long long)fl, (long long)step);
    if (win->dtype != sig->dtype || win->rank != 1 ||
        (win->dims[0] != WEFT_DIM_ANY && win->dims[0] != fl))
        return weft__errorf(WEFT_ESHAPE, "weft_stft: the window %s is not %s[%lld]", sw,
                            weft_dtype_name(sig->dtype), (long long)fl);
    if (sig->rank + 2 > WEFT_MAX_RANK)
        return weft__errorf(WEFT_ESHAPE, "weft_stft: %s leaves no room for the frames' and "
                            "pairs' axes (rank %d at most)", ss, WEFT_MAX_RANK - 2);
    int64_t len = sig->dims[sig->rank - 1];
    *out = *sig;
    out->rank = sig->rank + 2;
    out->dims[sig->rank - 1] = len < 0 ? WEFT_DIM_ANY : len < fl ? 0 : 1 + (len - fl) / step;
    out->dims[sig->rank] = n->attr.fft.length / 2 + 1;
    out->dims[sig->rank + 1] = 2;
    return 0;
}

int weft__infer_fft(const weft__node *n, const weft_spec *in, weft_spec *out)
{
    int kind = n->attr.fft.kind;
    int64_t len = n->attr.fft.length;
    if (kind < WEFT__FFT_FORWARD || kind > WEFT__FFT_FRAMES || len < 0 ||
        len > WEFT__FFT_MAX_LENGTH)
        return weft__errorf(WEFT_EINVAL, "weft_fft: bad attributes (kind %d, length %lld)",
                            kind, (long long)len);
    const char *fn = weft__fft_name(kind);
    char s[WEFT__SPEC_STR_MAX];
    weft__spec_str(in, s, sizeof s);
    if (in->dtype != WEFT_F32 && in->dtype != WEFT_F64)
        return weft__errorf(WEFT_EDTYPE, "%s: %s is not f32 or f64", fn, s);
    bool real_in = kind == WEFT__FFT_REAL || kind == WEFT__FFT_FRAMES;
    if (in->rank == WEFT_RANK_ANY || in->rank < (real_in ? 1 : 2))
        return weft__errorf(WEFT_ESHAPE, "%s: %s is not %s (a rank known while tracing)", fn, s,
                            real_in ? "[..., n]" : "[..., n, 2]");
    if (!real_in && in->dims[in->rank - 1] != WEFT_DIM_ANY && in->dims[in->rank - 1] != 2)
        return weft__errorf(WEFT_ESHAPE, "%s: %s is not [..., n, 2] (complex numbers as pairs "
                            "of real and imaginary parts)", fn, s);
    bool complex_out = kind == WEFT__FFT_FORWARD || kind == WEFT__FFT_INVERSE;
    if (complex_out ? in->dims[in->rank - 2] > WEFT__FFT_MAX_LENGTH : len < 1)
        return weft__errorf(WEFT_EINVAL, "%s: a transform of length %lld (1 to %lld)", fn,
                            (long long)(complex_out ? in->dims[in->rank - 2] : len),
                            (long long)WEFT__FFT_MAX_LENGTH);
    *out = *in;
    switch (kind) {
    case WEFT__FFT_FRAMES:
        return infer_frames(n, in, out);
    case WEFT__FFT_REAL:
        if (in->rank >= WEFT_MAX_RANK)
            return weft__errorf(WEFT_ESHAPE, "%s: %s leaves no room for the pairs' axis "
                                "(rank %d at most)", fn, s, WEFT_MAX_RANK - 1);
        out->rank = in->rank + 1;
        out->dims[in->rank - 1] = len / 2 + 1;
        out->dims[in->rank] = 2;
        break;
    case WEFT__FFT_REAL_INVERSE:
        out->rank = in->rank - 1;
        out->dims[out->rank - 1] = len;
        break;
    default:
        out->dims[in->rank - 1] = 2;
        break;
    }
    return 0;
}
