/* Grayscale morphology on NHWC images (include/weft/ops.h):
 * weft_dilation2d and weft_erosion2d, TensorFlow's tf.nn ops of those
 * names.  A dilation is the running maximum, over the filter's taps, of
 * the strided slice of the input each tap reads plus that tap's filter
 * row; the input is padded with -inf, so that padding never wins.  An
 * erosion is TensorFlow's own dual: -dilation2d(-x, the filters reversed
 * in height and width).  The slices, adds and maxima fuse. */
#include <math.h>
#include <string.h>

#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/shape.h"

/* input [b, h, w, c] with h, w, c known, filters [fh, fw, c] known, both
 * f32 or both f64. */
static bool morph_args_ok(weft_ctx *cx, const char *fn, const weft_value *input,
                          const weft_value *filters)
{
    const weft_spec *x = weft__value_spec(input), *f = weft__value_spec(filters);
    char sx[WEFT__SPEC_STR_MAX], sf[WEFT__SPEC_STR_MAX];
    if ((x->dtype != WEFT_F32 && x->dtype != WEFT_F64) || f->dtype != x->dtype) {
        weft__ctx_fail(cx, WEFT_EDTYPE, "%s: the input %s and filters %s are not both f32 or "
                       "both f64", fn, weft__spec_str(x, sx, sizeof sx),
                       weft__spec_str(f, sf, sizeof sf));
        return false;
    }
    bool ok = x->rank == 4 && f->rank == 3 && x->dims[1] >= 0 && x->dims[2] >= 0 &&
              x->dims[3] >= 0 && f->dims[0] >= 1 && f->dims[1] >= 1 && f->dims[2] == x->dims[3];
    if (!ok)
        weft__ctx_fail(cx, WEFT_ESHAPE, "%s: the input %s and filters %s are not [b, h, w, c] "
                       "and [fh, fw, c] (all but b known while tracing)", fn,
                       weft__spec_str(x, sx, sizeof sx), weft__spec_str(f, sf, sizeof sf));
    return ok;
}

/* One spatial dim: the output size and the padding before and after. */
static bool morph_dim(weft_ctx *cx, const char *fn, int64_t in, int64_t k, int64_t stride,
                      int64_t rate, weft_padding padding, int64_t *out, int64_t pad[2])
{
    int64_t span = (k - 1) * rate + 1;
    if (padding == WEFT_PADDING_VALID) {
        if (in < span) {
            weft__ctx_fail(cx, WEFT_ESHAPE, "%s: an input dim of %lld is smaller than the "
                           "filter's span of %lld", fn, (long long)in, (long long)span);
            return false;
        }
        *out = (in - span) / stride + 1;
        pad[0] = pad[1] = 0;
        return true;
    }
    *out = (in + stride - 1) / stride;
    int64_t total = (*out - 1) * stride + span - in;
    total = total > 0 ? total : 0;
    pad[0] = total / 2;
    pad[1] = total - pad[0];
    return true;
}

/* A morphology call's checked geometry: strides, rates, the output's
 * height and width and the input's padding. */
typedef struct morph_plan {
    int64_t s[2], r[2], out[2];
    int64_t pads[4][2];
} morph_plan;

/* Checks every argument of the call `fn` and plans it. */
static bool morph_plan_of(weft_ctx *cx, const char *fn, weft_value *input, weft_value *filters,
                          const int64_t *strides, weft_padding padding, const int64_t *dilations,
                          morph_plan *p)
{
    weft_value *in[2] = { input, filters };
    if (!weft__op_enter(cx, fn, in, 2))
        return false;
    if (padding != WEFT_PADDING_VALID && padding != WEFT_PADDING_SAME) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: padding %d is not WEFT_PADDING_VALID or "
                       "WEFT_PADDING_SAME", fn, (int)padding);
        return false;
    }
    if (!weft__ops_take_sizes(cx, fn, "strides", strides, 2, p->s) ||
        !weft__ops_take_sizes(cx, fn, "dilations", dilations, 2, p->r) ||
        !morph_args_ok(cx, fn, input, filters))
        return false;
    const weft_spec *x = weft__value_spec(input), *f = weft__value_spec(filters);
    memset(p->pads, 0, sizeof p->pads);
    for (int d = 0; d < 2; d++)
        if (!morph_dim(cx, fn, x->dims[1 + d], f->dims[d], p->s[d], p->r[d], padding,
                       &p->out[d], p->pads[1 + d]))
            return false;
    return true;
}

/* The dilation of input by filters as planned. */
static weft_value *dilate(weft_ctx *cx, const char *fn, weft_value *input, weft_value *filters,
                          const morph_plan *p)
{
    const int64_t *s = p->s, *r = p->r, *out = p->out;
    const int64_t *fd = weft__value_spec(filters)->dims;
    int64_t c = fd[2];
    weft_value *padded = weft_pad(cx, input, p->pads, -INFINITY);
    weft_value *acc = NULL;
    for (int64_t dy = 0; dy < fd[0]; dy++)
        for (int64_t dx = 0; dx < fd[1]; dx++) {
            const int64_t begin[4] = { 0, dy * r[0], dx * r[1], 0 };
            const int64_t end[4] = { WEFT_END, dy * r[0] + (out[0] - 1) * s[0] + 1,
                                     dx * r[1] + (out[1] - 1) * s[1] + 1, WEFT_END };
            const int64_t step[4] = { 1, s[0], s[1], 1 };
            const int64_t fb[3] = { dy, dx, 0 }, fe[3] = { dy + 1, dx + 1, WEFT_END };
            weft_value *tap = weft_reshape(cx, weft_slice(cx, filters, fb, fe, NULL), 1, &c);
            weft_value *v = weft__op_binary(cx, WEFT__OP_ADD, fn,
                                            weft_slice(cx, padded, begin, end, step), tap);
            acc = acc ? weft__op_binary(cx, WEFT__OP_MAXIMUM, fn, acc, v) : v;
        }
    return acc;
}

weft_value *weft_dilation2d(weft_ctx *cx, weft_value *input, weft_value *filters,
                            const int64_t *strides, weft_padding padding,
                            const int64_t *dilations)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_dilation2d";
    morph_plan p;
    if (!morph_plan_of(cx, fn, input, filters, strides, padding, dilations, &p))
        return NULL;
    return WEFT__KEEP(dilate(cx, fn, input, filters, &p));
}

/* Checked and planned as itself, so that its errors name it; reversing
 * the filters and negating the input change no shape. */
weft_value *weft_erosion2d(weft_ctx *cx, weft_value *input, weft_value *filters,
                           const int64_t *strides, weft_padding padding, const int64_t *dilations)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_erosion2d";
    morph_plan p;
    if (!morph_plan_of(cx, fn, input, filters, strides, padding, dilations, &p))
        return NULL;
    weft_value *reflected = weft_reverse(cx, weft_reverse(cx, filters, 0), 1);
    weft_value *d = dilate(cx, fn, weft__op_unary(cx, WEFT__OP_NEG, fn, input), reflected, &p);
    return WEFT__KEEP(d ? weft__op_unary(cx, WEFT__OP_NEG, fn, d) : NULL);
}
