/* tf.signal.mdct and inverse_mdct, TensorFlow's compositions: frames half
 * overlapping, a window, the folding of each frame's four quarters into
 * half a frame, and the type-4 DCT (weft_dct, a product with its
 * matrix); the inverse unfolds the type-4 DCT's result and overlaps and
 * adds the windowed frames.  Each checks its inputs first, so that an
 * error names the public op. */
#include <math.h>

#include "runtime/iface.h"
#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

/* The window of an MDCT of frames of length: `window` or, NULL, the
 * Vorbis window (TensorFlow's default). */
static weft_value *mdct_window(weft_ctx *cx, const char *fn, weft_value *window, int64_t length,
                               weft_dtype dtype)
{
    if (!window)
        return weft_vorbis_window(cx, length, dtype);
    return weft__ops_window_fits(cx, fn, window, length, dtype) ? window : NULL;
}

/* The last axis of x (rank r) reversed, negated when neg. */
static weft_value *flipped(weft_ctx *cx, const char *fn, weft_value *x, int r, bool neg)
{
    weft_value *f = weft_reverse(cx, x, r - 1);
    return neg ? weft__op_unary(cx, WEFT__OP_NEG, fn, f) : f;
}

/* tf.signal.mdct: frames of frame_length every frame_length / 2, windowed,
 * quarters (a, b, c, d) folded into (-c reversed - d, a - b reversed),
 * then the type-4 DCT. */
weft_value *weft_mdct(weft_ctx *cx, weft_value *signals, int64_t frame_length,
                      weft_value *window, bool pad_end, bool ortho)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_mdct";
    weft_value *in[2] = { signals, window };
    if (!weft__op_enter_optional(cx, fn, in, 1, 2))
        return NULL;
    if (frame_length < 4 || frame_length % 4 != 0)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: frame_length %lld is not a positive "
                              "multiple of 4", fn, (long long)frame_length);
    const weft_spec *s = weft__value_spec(signals);
    if (!weft__ops_float_rank(cx, fn, s, 1, true))
        return NULL;
    weft_value *w = mdct_window(cx, fn, window, frame_length, s->dtype);
    if (!w)
        return NULL;
    weft_value *frames = weft_frame(cx, signals, frame_length, frame_length / 2, pad_end, 0.0,
                                    -1);
    frames = weft__op_binary(cx, WEFT__OP_MUL, fn, frames, w);
    int r = s->rank + 1;
    weft_value *q[4];
    if (weft_split(cx, frames, 4, NULL, -1, q) != 0)
        return NULL;
    weft_value *halves[2] = {
        weft__op_binary(cx, WEFT__OP_SUB, fn, flipped(cx, fn, q[2], r, true), q[3]),
        weft__op_binary(cx, WEFT__OP_SUB, fn, q[0], flipped(cx, fn, q[1], r, false)),
    };
    return WEFT__KEEP(weft_dct(cx, weft_concat(cx, halves, 2, -1), 4, 0, ortho));
}

/* tf.signal.inverse_mdct: the type-4 DCT (over 2N without ortho), halves
 * (p, q) unfolded into (q, -q reversed, -p reversed, -p), windowed,
 * overlapped and added every N. */
weft_value *weft_inverse_mdct(weft_ctx *cx, weft_value *mdcts, weft_value *window, bool ortho)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_inverse_mdct";
    weft_value *in[2] = { mdcts, window };
    if (!weft__op_enter_optional(cx, fn, in, 1, 2))
        return NULL;
    const weft_spec *s = weft__value_spec(mdcts);
    if (!weft__ops_float_rank(cx, fn, s, 2, true))
        return NULL;
    int64_t half = s->dims[s->rank - 1];
    char ss[WEFT__SPEC_STR_MAX];
    if (half < 2 || half % 2 != 0)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: the last dim of %s is not a positive even "
                              "number (half a frame)", fn, weft__spec_str(s, ss, sizeof ss));
    weft_value *w = mdct_window(cx, fn, window, 2 * half, s->dtype);
    if (!w)
        return NULL;
    weft_value *y = weft_dct(cx, mdcts, 4, 0, ortho);
    if (!ortho)
        y = weft__op_binary(cx, WEFT__OP_MUL, fn, y, weft_const_f64(cx, 0.5 / (double)half));
    weft_value *pq[2];
    if (weft_split(cx, y, 2, NULL, -1, pq) != 0)
        return NULL;
    int r = s->rank;
    weft_value *parts[4] = { pq[1], flipped(cx, fn, pq[1], r, true),
                             flipped(cx, fn, pq[0], r, true),
                             weft__op_unary(cx, WEFT__OP_NEG, fn, pq[0]) };
    weft_value *frames = weft__op_binary(cx, WEFT__OP_MUL, fn, weft_concat(cx, parts, 4, -1), w);
    return WEFT__KEEP(weft_overlap_and_add(cx, frames, half));
}
