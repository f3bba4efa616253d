/* The gradient rules of the FFT node (weft_gradients; the helpers are
 * trace/grad_rules.c's).  Every transform is linear in the reals of its
 * input, so its gradient is the transposed map, written with the
 * transforms themselves (a complex pair [..., 2] is two reals):
 * - fft: F^H g = conj(fft(conj(g))); ifft (F^H / n): conj(ifft(conj(g)));
 * - rfft of length L: x_j gets Re sum_k G_k e^(2 pi i jk / L) over the
 *   bins it made, which is L irfft(G) with every bin but 0 and L / 2
 *   halved (irfft counts each such bin twice, as its mirror too, and
 *   drops the imaginary parts of bins 0 and L / 2); then cut or padded
 *   to the input's length;
 * - irfft: rfft(g) / L with every bin but 0 and L / 2 doubled and the
 *   imaginary parts of those two cleared, fitted to the input's bins;
 * - stft: the rfft rule gives each windowed frame's adjoint; the signal
 *   gets those times the window, added back where each frame came from
 *   (overlap_and_add), the window their products with the frames,
 *   summed.
 * TensorFlow's rules are the same maps (its rfft and irfft gradients mask
 * the same bins). */
#include "base/base.h"
#include "trace/grad.h"
#include "trace/ops_impl.h"
#include "trace/shape.h"
#include "trace/tensor_impl.h"

typedef weft__grad_rule rule_in;

#define k weft__grad_k
#define unsupported weft__grad_unsupported
#define give weft__grad_give
#define wants weft__grad_wants

/* A [bins, pairs] constant of dtype dt weighting the bins of a real
 * transform of length len: `ends` for bins 0 and len / 2 (len even),
 * `inner` for the others; with pairs 2 the ends' imaginary parts get 0. */
static weft_value *bin_weights(weft_ctx *cx, int64_t len, int pairs, double ends, double inner,
                               weft_dtype dt)
{
    int64_t bins = len / 2 + 1;
    double *w = weft__malloc(sizeof *w * (size_t)(bins * pairs));
    if (!w)
        return weft__ctx_fail(cx, WEFT_ENOMEM, "weft_gradients: out of memory for the bin "
                              "weights of a transform of length %lld", (long long)len);
    for (int64_t b = 0; b < bins; b++) {
        bool end = b == 0 || 2 * b == len;
        for (int p = 0; p < pairs; p++)
            w[b * pairs + p] = !end ? inner : p == 0 ? ends : 0.0;
    }
    weft_value *v = weft__ops_constant(cx, "weft_gradients", WEFT_F64, 2,
                                       (const int64_t[]){ bins, pairs }, w, dt);
    weft__free(w);
    return v;
}

/* The adjoint of the len reals an rfft of length len transformed, from the
 * adjoint g [..., len / 2 + 1, 2] of its bins: [..., len]. */
static weft_value *rfft_adjoint(const rule_in *r, weft_value *g, int64_t len)
{
    weft_ctx *cx = r->cx;
    double l = (double)len;
    weft_value *w = bin_weights(cx, len, 1, l, l / 2, weft__value_spec(g)->dtype);
    return weft_irfft(cx, weft_mul(cx, g, w), len);
}

/* The input's last axis `axis` (from the end: 1 reals, 2 pairs) is `have`
 * long in v and `want` long in the input: v cut or zero-padded to it. */
static weft_value *fit_to_input(const rule_in *r, weft_value *v, int from_end, int64_t have)
{
    const weft_spec *as = weft__value_spec(r->a);
    int axis = as->rank - from_end;
    if (!v || as->rank < 0 || as->dims[axis] < 0)
        return v ? weft__ctx_fail(r->cx, WEFT_EINVAL, "weft_gradients: no gradient for %s of "
                                  "an input whose transformed dim is unknown while tracing",
                                  weft__fft_name(r->n->attr.fft.kind)) : NULL;
    return weft__ops_fit_axis(r->cx, v, as->rank, axis, have, as->dims[axis]);
}

/* stft: in[0] the signals [..., T], in[1] the window; g [..., frames,
 * bins, 2]. */
static int frames_rule(const rule_in *r)
{
    weft_ctx *cx = r->cx;
    const weft_spec *ss = weft__value_spec(r->a), *gs = weft__value_spec(r->g);
    int64_t len = r->n->attr.fft.length, fl = r->n->attr.fft.frame_length;
    int64_t step = r->n->attr.fft.frame_step;
    int64_t t = ss->rank > 0 ? ss->dims[ss->rank - 1] : WEFT_DIM_ANY;
    int64_t frames = gs->rank >= 3 ? gs->dims[gs->rank - 3] : WEFT_DIM_ANY;
    if (t < 0 || frames < 0)
        return unsupported(r, "of signals whose length is unknown while tracing");
    if (frames == 0)
        return 0;   /* no frame read the signals or the window */
    /* Each windowed frame's adjoint, [..., frames, frame_length]. */
    weft_value *dz = rfft_adjoint(r, r->g, len);
    dz = dz ? weft__ops_fit_axis(cx, dz, gs->rank - 1, gs->rank - 2, len, fl) : NULL;
    int rc = 0;
    if (wants(r, 0)) {
        weft_value *back = weft_overlap_and_add(cx, weft_mul(cx, dz, r->b), step);
        int64_t covered = (frames - 1) * step + fl;
        back = back ? weft__ops_fit_axis(cx, back, ss->rank, ss->rank - 1, covered, t) : NULL;
        rc = give(r, 0, back);
    }
    if (rc < 0 || !wants(r, 1))
        return rc;
    weft_value *cut = weft_frame(cx, r->a, fl, step, false, 0.0, -1);
    int axes[WEFT_MAX_RANK];
    for (int d = 0; d < gs->rank - 2; d++)
        axes[d] = d;
    return give(r, 1, weft_reduce(cx, WEFT_R_SUM, weft_mul(cx, dz, cut), axes,
                                  (size_t)(gs->rank - 2), false));
}

int weft__grad_fft(const rule_in *r)
{
    weft_ctx *cx = r->cx;
    int64_t len = r->n->attr.fft.length;
    switch (r->n->attr.fft.kind) {
    case WEFT__FFT_FORWARD:
        return give(r, 0, weft_conj(cx, weft_fft(cx, weft_conj(cx, r->g))));
    case WEFT__FFT_INVERSE:
        return give(r, 0, weft_conj(cx, weft_ifft(cx, weft_conj(cx, r->g))));
    case WEFT__FFT_REAL:
        return give(r, 0, fit_to_input(r, rfft_adjoint(r, r->g, len), 1, len));
    case WEFT__FFT_REAL_INVERSE: {
        weft_value *w = bin_weights(cx, len, 2, 1.0 / (double)len, 2.0 / (double)len,
                                    weft__value_spec(r->g)->dtype);
        weft_value *gx = weft_mul(cx, weft_rfft(cx, r->g, len), w);
        return give(r, 0, fit_to_input(r, gx, 2, len / 2 + 1));
    }
    case WEFT__FFT_FRAMES:
        return frames_rule(r);
    default:
        return unsupported(r, NULL);
    }
}
