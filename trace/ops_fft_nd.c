/* tf.signal's 2-D and 3-D transforms (fft2d, ifft2d, fft3d, ifft3d, rfft2d,
 * irfft2d, rfft3d, irfft3d): the 1-D FFT node along each axis in turn,
 * an outer axis brought innermost by a transpose and put back.  Complex
 * tensors are [..., n, 2] as in trace/ops_fft.c. */
#include "runtime/iface.h"
#include "trace/ctx.h"
#include "trace/fft.h"
#include "trace/ops_impl.h"
#include "trace/shape.h"

/* The complex transform of `kind` along axis `axis` of the complex tensor
 * x of rank `rank` (its numbers' innermost axis is rank - 2). */
static weft_value *along(weft_ctx *cx, const char *fn, weft_value *x, int rank, int axis,
                         int kind)
{
    if (axis == rank - 2)
        return weft__ops_fft(cx, fn, x, kind, 0);
    int perm[WEFT_MAX_RANK];
    for (int d = 0; d < rank; d++)
        perm[d] = d;
    perm[axis] = rank - 2;
    perm[rank - 2] = axis;
    /* The swap is its own inverse. */
    return weft_transpose(cx, weft__ops_fft(cx, fn, weft_transpose(cx, x, perm), kind, 0), perm);
}

/* fft2d and the others: every one of the `dims` innermost axes of numbers. */
static weft_value *complex_nd(weft_ctx *cx, const char *fn, weft_value *x, int dims,
                              bool inverse)
{
    if (!weft__op_enter(cx, fn, &x, 1))
        return NULL;
    const weft_spec *s = weft__value_spec(x);
    if (s->rank == WEFT_RANK_ANY || s->rank < dims + 1) {
        char ss[WEFT__SPEC_STR_MAX];
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: %s has not %d axes of numbers before its "
                              "pairs' axis (a rank known while tracing)", fn,
                              weft__spec_str(s, ss, sizeof ss), dims);
    }
    int rank = s->rank;
    for (int k = 0; k < dims; k++)
        x = along(cx, fn, x, rank, rank - 2 - k, inverse ? WEFT__FFT_INVERSE : WEFT__FFT_FORWARD);
    return x;
}

weft_value *weft_fft2d(weft_ctx *cx, weft_value *input)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(complex_nd(cx, "weft_fft2d", input, 2, false));
}

weft_value *weft_ifft2d(weft_ctx *cx, weft_value *input)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(complex_nd(cx, "weft_ifft2d", input, 2, true));
}

weft_value *weft_fft3d(weft_ctx *cx, weft_value *input)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(complex_nd(cx, "weft_fft3d", input, 3, false));
}

weft_value *weft_ifft3d(weft_ctx *cx, weft_value *input)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(complex_nd(cx, "weft_ifft3d", input, 3, true));
}

weft_value *weft__ops_fit_axis(weft_ctx *cx, weft_value *x, int rank, int axis, int64_t have,
                               int64_t len)
{
    WEFT__SCOPE(cx);
    if (len < have) {
        int64_t begin[WEFT_MAX_RANK] = { 0 }, end[WEFT_MAX_RANK];
        for (int d = 0; d < rank; d++)
            end[d] = WEFT_END;
        end[axis] = len;
        return WEFT__KEEP(weft_slice(cx, x, begin, end, NULL));
    }
    if (len > have) {
        int64_t pads[WEFT_MAX_RANK][2] = { { 0, 0 } };
        pads[axis][1] = len - have;
        return WEFT__KEEP(weft_pad(cx, x, (const int64_t(*)[2])pads, 0.0));
    }
    return WEFT__KEEP(x);
}

/* The lengths of a real transform over `dims` axes into len[]: fft_length
 * when given, else each axis's dim (the last of an inverse: 2 (bins - 1)).
 * An outer axis is cut or padded while tracing, so its dim must be known
 * then; false after recording an error. */
static bool real_lengths(weft_ctx *cx, const char *fn, const weft_spec *s, int dims,
                         const int64_t *fft_length, bool inverse, int64_t *len)
{
    char ss[WEFT__SPEC_STR_MAX];
    int first = s->rank - dims - (inverse ? 1 : 0);   /* the outermost transformed axis */
    for (int k = 0; k < dims; k++) {
        int64_t dim = s->dims[first + k];
        bool last = k == dims - 1;
        if (fft_length)
            len[k] = fft_length[k];
        else
            len[k] = last && inverse ? (dim < 0 ? -1 : 2 * (dim - 1)) : dim;
        bool out_of_range = len[k] < 1 || len[k] > WEFT__FFT_MAX_LENGTH;
        if (fft_length && out_of_range) {
            weft__ctx_fail(cx, WEFT_EINVAL, "%s: fft_length[%d] %lld is not 1 to %lld", fn, k,
                           (long long)len[k], (long long)WEFT__FFT_MAX_LENGTH);
            return false;
        }
        if (out_of_range || (!last && dim < 0)) {
            weft__ctx_fail(cx, WEFT_ESHAPE, "%s: axis %d of %s is %s (every transformed axis "
                           "but the innermost known while tracing, each giving a length of 1 "
                           "or more)", fn, first + k, weft__spec_str(s, ss, sizeof ss),
                           dim < 0 ? "unknown while tracing" : "too short");
            return false;
        }
    }
    return true;
}

static weft_value *real_nd(weft_ctx *cx, const char *fn, weft_value *x, int dims,
                           const int64_t *fft_length, bool inverse)
{
    if (!weft__op_enter(cx, fn, &x, 1))
        return NULL;
    const weft_spec *s = weft__value_spec(x);
    int need = dims + (inverse ? 1 : 0);
    if (s->rank == WEFT_RANK_ANY || s->rank < need) {
        char ss[WEFT__SPEC_STR_MAX];
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: %s has not %d axes of numbers%s (a rank "
                              "known while tracing)", fn, weft__spec_str(s, ss, sizeof ss), dims,
                              inverse ? " before its pairs' axis" : "");
    }
    int64_t len[3];
    if (!real_lengths(cx, fn, s, dims, fft_length, inverse, len))
        return NULL;
    int rank = s->rank, crank = inverse ? rank : rank + 1;   /* the complex tensor's */
    if (!inverse)
        x = weft__ops_fft(cx, fn, x, WEFT__FFT_REAL, len[dims - 1]);
    for (int k = dims - 2; k >= 0; k--) {
        int axis = crank - 1 - dims + k;
        int64_t have = s->dims[rank - dims - (inverse ? 1 : 0) + k];
        x = weft__ops_fit_axis(cx, x, crank, axis, have, len[k]);
        x = along(cx, fn, x, crank, axis, inverse ? WEFT__FFT_INVERSE : WEFT__FFT_FORWARD);
    }
    if (inverse)
        x = weft__ops_fft(cx, fn, x, WEFT__FFT_REAL_INVERSE, len[dims - 1]);
    return x;
}

weft_value *weft_rfft2d(weft_ctx *cx, weft_value *input, const int64_t *fft_length)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(real_nd(cx, "weft_rfft2d", input, 2, fft_length, false));
}

weft_value *weft_irfft2d(weft_ctx *cx, weft_value *input, const int64_t *fft_length)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(real_nd(cx, "weft_irfft2d", input, 2, fft_length, true));
}

weft_value *weft_rfft3d(weft_ctx *cx, weft_value *input, const int64_t *fft_length)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(real_nd(cx, "weft_rfft3d", input, 3, fft_length, false));
}

weft_value *weft_irfft3d(weft_ctx *cx, weft_value *input, const int64_t *fft_length)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(real_nd(cx, "weft_irfft3d", input, 3, fft_length, true));
}
