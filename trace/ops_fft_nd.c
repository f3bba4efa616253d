/* tf.signal's 2-D and 3-D transforms (fft2d, ifft2d, fft3d, ifft3d, rfft2d,
 * irfft2d, rfft3d, irfft3d) and the N-D ones over any axes (fftnd, ifftnd,
 * rfftnd, irfftnd): the 1-D FFT node along each axis in turn, an outer
 * axis brought innermost by a transpose and put back.  Complex tensors
 * are [..., n, 2] as in trace/ops_fft.c. */
#include "runtime/iface.h"
#include "trace/ctx.h"
#include "trace/fft.h"
#include "trace/ops_impl.h"
#include "trace/shape.h"

/* The transform of `kind` (length len, 0: the input's) along axis `axis`
 * of x (rank `rank`; complex [..., 2] but for a real forward transform):
 * that axis is swapped with the innermost axis of numbers, transformed and
 * swapped back.  A real transform adds or drops the pairs' axis behind
 * the numbers, so the innermost axis keeps its index in the result. */
static weft_value *along(weft_ctx *cx, const char *fn, weft_value *x, int rank, int axis,
                         int kind, int64_t len)
{
    int inner = kind == WEFT__FFT_REAL ? rank - 1 : rank - 2;
    if (axis == inner)
        return weft__ops_fft(cx, fn, x, kind, len);
    int perm[WEFT_MAX_RANK];
    for (int d = 0; d < WEFT_MAX_RANK; d++)
        perm[d] = d;
    perm[axis] = inner;
    perm[inner] = axis;
    /* The swap is its own inverse, in either rank. */
    return weft_transpose(cx, weft__ops_fft(cx, fn, weft_transpose(cx, x, perm), kind, len), perm);
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
        x = along(cx, fn, x, rank, rank - 2 - k, inverse ? WEFT__FFT_INVERSE : WEFT__FFT_FORWARD,
                  0);
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
        x = along(cx, fn, x, crank, axis, inverse ? WEFT__FFT_INVERSE : WEFT__FFT_FORWARD, 0);
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

/* ---- tf.signal.fftnd and the others: any axes, any lengths ------------- */

/* The N-D transforms' axes of numbers (nrank of them) into ax[0..*n),
 * each with its length (fft_length's, or 0: the dim as it is) in len[]:
 * the n given axes, the last n without them, every axis for n 0 with
 * neither given.  False after recording an error. */
static bool nd_axes(weft_ctx *cx, const char *fn, int nrank, const int64_t *fft_length,
                    const int *axes, int *n, int *ax, int64_t *len)
{
    if (*n == 0 && !fft_length && !axes)
        *n = nrank;
    if (*n < 1 || *n > nrank) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: %d axes to transform, of %d axes of numbers", fn,
                       *n, nrank);
        return false;
    }
    for (int k = 0; k < *n; k++) {
        int a = axes ? axes[k] : nrank - *n + k;
        if (a < -nrank || a >= nrank) {
            weft__ctx_fail(cx, WEFT_EINVAL, "%s: axes[%d] %d is not in [%d, %d)", fn, k, a,
                           -nrank, nrank);
            return false;
        }
        ax[k] = a < 0 ? a + nrank : a;
        for (int j = 0; j < k; j++)
            if (ax[j] == ax[k]) {
                weft__ctx_fail(cx, WEFT_EINVAL, "%s: axis %d is given twice", fn, ax[k]);
                return false;
            }
        len[k] = fft_length ? fft_length[k] : 0;
        if (fft_length && (len[k] < 1 || len[k] > WEFT__FFT_MAX_LENGTH)) {
            weft__ctx_fail(cx, WEFT_EINVAL, "%s: fft_length[%d] %lld is not 1 to %lld", fn, k,
                           (long long)len[k], (long long)WEFT__FFT_MAX_LENGTH);
            return false;
        }
    }
    return true;
}

/* Axis `axis` of x cut or zero-padded to len (0: left as it is), which
 * needs its dim `have` known while tracing. */
static weft_value *fit(weft_ctx *cx, const char *fn, weft_value *x, int rank, int axis,
                       int64_t have, int64_t len)
{
    if (len == 0 || len == have)
        return x;
    if (have < 0)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: axis %d is cut or padded to fft_length, so "
                              "its dim must be known while tracing", fn, axis);
    return weft__ops_fit_axis(cx, x, rank, axis, have, len);
}

/* The input's spec when its rank is known and holds at least one axis of
 * numbers (complex: before the pairs' axis); else NULL, the error
 * recorded. */
static const weft_spec *nd_input(weft_ctx *cx, const char *fn, weft_value *x, bool complex)
{
    if (!weft__op_enter(cx, fn, &x, 1))
        return NULL;
    const weft_spec *s = weft__value_spec(x);
    if (s->rank != WEFT_RANK_ANY && s->rank >= 1 + complex)
        return s;
    char ss[WEFT__SPEC_STR_MAX];
    weft__ctx_fail(cx, WEFT_ESHAPE, "%s: %s has no axis of numbers%s (a rank known while "
                   "tracing)", fn, weft__spec_str(s, ss, sizeof ss),
                   complex ? " before its pairs' axis" : "");
    return NULL;
}

/* y, a transform along axes ax[0..n) of lengths lens[] (fft_length's,
 * or 0: y's dim there, a constant once known), scaled for norm.  The
 * transforms here are NumPy's "backward" (the inverse divides by the
 * count N of points); "ortho" divides both ways by sqrt(N), "forward" the
 * forward one by N (so the inverse, which divided, is multiplied back). */
static weft_value *normalized(weft_ctx *cx, weft_value *y, const int *ax, const int64_t *lens,
                              int n, bool inverse, weft_fft_norm norm)
{
    if (!y || norm == WEFT_FFT_NORM_BACKWARD)
        return y;
    double known = 1;
    weft_value *count = NULL;
    for (int k = 0; k < n; k++) {
        if (lens[k] > 0) {
            known *= (double)lens[k];
            continue;
        }
        weft_value *d = weft_cast(cx, weft__ops_dim(cx, y, ax[k]), WEFT_F64);
        count = count ? weft_mul(cx, count, d) : d;
    }
    count = count ? weft_mul(cx, count, weft_const_f64(cx, known)) : weft_const_f64(cx, known);
    weft_value *scale = norm == WEFT_FFT_NORM_ORTHO ? weft_sqrt(cx, count) : count;
    scale = weft__ops_as_dtype(cx, scale, weft__value_spec(y)->dtype);
    return inverse ? weft_mul(cx, y, scale) : weft_truediv(cx, y, scale);
}

static weft_value *complex_any(weft_ctx *cx, const char *fn, weft_value *x,
                               const int64_t *fft_length, const int *axes, int n, bool inverse,
                               weft_fft_norm norm)
{
    const weft_spec *s = nd_input(cx, fn, x, true);
    int ax[WEFT_MAX_RANK];
    int64_t len[WEFT_MAX_RANK];
    if (!s || !nd_axes(cx, fn, s->rank - 1, fft_length, axes, &n, ax, len))
        return NULL;
    int rank = s->rank;
    for (int k = 0; k < n; k++) {
        x = fit(cx, fn, x, rank, ax[k], s->dims[ax[k]], len[k]);
        x = along(cx, fn, x, rank, ax[k], inverse ? WEFT__FFT_INVERSE : WEFT__FFT_FORWARD, 0);
    }
    return normalized(cx, x, ax, len, n, inverse, norm);
}

/* The real transform's length along the last axis given: fft_length's,
 * else the dim (an inverse's: 2 (bins - 1)), known while tracing. */
static int64_t real_len(weft_ctx *cx, const char *fn, int64_t given, int64_t dim, bool inverse)
{
    if (given)
        return given;
    int64_t len = dim < 0 ? -1 : inverse ? 2 * (dim - 1) : dim;
    if (len < 1)
        weft__ctx_fail(cx, WEFT_ESHAPE, "%s: the last axis given has %s, so the real "
                       "transform's length needs fft_length", fn,
                       dim < 0 ? "a dim unknown while tracing" : "too few elements");
    return len;
}

static weft_value *real_any(weft_ctx *cx, const char *fn, weft_value *x,
                            const int64_t *fft_length, const int *axes, int n, bool inverse,
                            weft_fft_norm norm)
{
    const weft_spec *s = nd_input(cx, fn, x, inverse);
    int ax[WEFT_MAX_RANK];
    int64_t len[WEFT_MAX_RANK];
    if (!s || !nd_axes(cx, fn, s->rank - inverse, fft_length, axes, &n, ax, len))
        return NULL;
    int rank = s->rank, last = ax[n - 1];
    int64_t last_len = real_len(cx, fn, len[n - 1], s->dims[last], inverse);
    if (last_len < 1)
        return NULL;
    if (!inverse) {
        x = along(cx, fn, x, rank, last, WEFT__FFT_REAL, last_len);
        rank++;
    }
    for (int k = 0; k < n - 1; k++) {
        x = fit(cx, fn, x, rank, ax[k], s->dims[ax[k]], len[k]);
        x = along(cx, fn, x, rank, ax[k], inverse ? WEFT__FFT_INVERSE : WEFT__FFT_FORWARD, 0);
    }
    len[n - 1] = last_len;
    if (inverse)
        x = along(cx, fn, x, rank, last, WEFT__FFT_REAL_INVERSE, last_len);
    return normalized(cx, x, ax, len, n, inverse, norm);
}

weft_value *weft_fftnd(weft_ctx *cx, weft_value *input, const int64_t *fft_length,
                       const int *axes, int n_axes)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(complex_any(cx, "weft_fftnd", input, fft_length, axes, n_axes, false,
                                  WEFT_FFT_NORM_BACKWARD));
}

weft_value *weft_ifftnd(weft_ctx *cx, weft_value *input, const int64_t *fft_length,
                        const int *axes, int n_axes)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(complex_any(cx, "weft_ifftnd", input, fft_length, axes, n_axes, true,
                                  WEFT_FFT_NORM_BACKWARD));
}

weft_value *weft_rfftnd(weft_ctx *cx, weft_value *input, const int64_t *fft_length,
                        const int *axes, int n_axes)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(real_any(cx, "weft_rfftnd", input, fft_length, axes, n_axes, false,
                               WEFT_FFT_NORM_BACKWARD));
}

weft_value *weft_irfftnd(weft_ctx *cx, weft_value *input, const int64_t *fft_length,
                         const int *axes, int n_axes)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(real_any(cx, "weft_irfftnd", input, fft_length, axes, n_axes, true,
                               WEFT_FFT_NORM_BACKWARD));
}

weft_value *weft_fftnd_norm(weft_ctx *cx, weft_fftnd_kind kind, weft_value *input,
                            const int64_t *fft_length, const int *axes, int n_axes,
                            weft_fft_norm norm)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_fftnd_norm";
    if (!weft__op_enter(cx, fn, &input, 1))
        return NULL;
    if ((unsigned)norm > WEFT_FFT_NORM_FORWARD)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: norm %d is not a weft_fft_norm", fn,
                              (int)norm);
    bool inverse = kind == WEFT_IFFTND || kind == WEFT_IRFFTND;
    switch (kind) {
    case WEFT_FFTND:
    case WEFT_IFFTND:
        return WEFT__KEEP(complex_any(cx, fn, input, fft_length, axes, n_axes, inverse, norm));
    case WEFT_RFFTND:
    case WEFT_IRFFTND:
        return WEFT__KEEP(real_any(cx, fn, input, fft_length, axes, n_axes, inverse, norm));
    }
    return weft__ctx_fail(cx, WEFT_EINVAL, "%s: kind %d is not a weft_fftnd_kind", fn, (int)kind);
}
