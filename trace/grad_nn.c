/* The gradient rules of conv2d and the 2-D pools (weft_gradients; the
 * helpers are trace/grad_rules.c's), written with the public ops as
 * TensorFlow's kernels compute them: a convolution's input gradient is a
 * transposed convolution and its filters' gradient the products of the
 * input's patches with g; a max pool's gradient goes to the element each
 * maximum came from; an average pool's spreads each g / count over its
 * window.  NHWC, with the height, width and channels known while tracing
 * (the batch may be unknown). */
#include "trace/control.h"
#include "trace/grad.h"
#include "trace/tensor_impl.h"

typedef weft__grad_rule rule_in;

#define k weft__grad_k
#define unsupported weft__grad_unsupported
#define give weft__grad_give
#define wants weft__grad_wants

/* x's height, width and channels, or false (the error recorded). */
static bool known_hwc(const rule_in *r, const weft_value *x, int64_t hwc[3])
{
    const weft_spec *s = weft__value_spec(x);
    bool known = s->rank == 4;
    for (int d = 1; known && d < 4; d++)
        known = (hwc[d - 1] = s->dims[d]) != WEFT_DIM_ANY;
    if (!known)
        unsupported(r, "of an input whose height, width or channels are unknown while tracing");
    return known;
}

static int conv2d_rule(const rule_in *r)
{
    weft_ctx *cx = r->cx;
    const weft__node *n = r->n;
    int64_t hwc[3];
    if (!known_hwc(r, r->a, hwc))
        return weft_ctx_status(cx);
    const weft_spec *fs = weft__value_spec(r->b);
    weft_padding pad = (weft_padding)n->attr.conv.padding;
    if (wants(r, 0)) {
        int rc = give(r, 0, weft_conv2d_transpose_ex(cx, r->g, r->b, hwc, n->attr.conv.stride,
                                                     pad, n->attr.conv.dilation));
        if (rc < 0)
            return rc;
    }
    if (!wants(r, 1))
        return 0;
    /* dF[ky, kx, ci, co] = sum over pixels of patch[.., (ky, kx, ci)] g[.., co]. */
    int64_t taps = fs->dims[0] * fs->dims[1] * fs->dims[2], cout = fs->dims[3];
    weft_value *patches = weft_extract_patches(cx, r->a, fs->dims, n->attr.conv.stride,
                                               n->attr.conv.dilation, pad);
    weft_value *p2 = weft_reshape(cx, patches, 2, (const int64_t[]){ -1, taps });
    weft_value *g2 = weft_reshape(cx, r->g, 2, (const int64_t[]){ -1, cout });
    weft_value *df = weft_matmul_ex(cx, p2, g2, WEFT_TRANSPOSE_A);
    return give(r, 1, weft_reshape(cx, df, 4, fs->dims));
}

/* Each g to the element its maximum came from: the argmax's flat index
 * within its image, plus the image's offset, scattered into zeros. */
static int max_pool_rule(const rule_in *r)
{
    weft_ctx *cx = r->cx;
    const weft__node *n = r->n;
    int64_t hwc[3];
    if (!known_hwc(r, r->a, hwc))
        return weft_ctx_status(cx);
    weft_value *outs[2];
    if (weft_max_pool_with_argmax(cx, r->a, n->attr.conv.window, n->attr.conv.stride,
                                  (weft_padding)n->attr.conv.padding, false, outs) < 0)
        return weft_ctx_status(cx);
    weft_value_release(cx, outs[0]);
    int64_t image = hwc[0] * hwc[1] * hwc[2];
    weft_value *batch = weft_gather(cx, weft_shape(cx, r->a), weft_const_i64(cx, 0), 0);
    weft_value *offset = weft_mul(cx, weft_range_to(cx, batch), weft_const_i64(cx, image));
    offset = weft_reshape(cx, offset, 4, (const int64_t[]){ -1, 1, 1, 1 });
    weft_value *at = weft_expand_dims(cx, weft_add(cx, outs[1], offset), -1);
    weft_value *flat = weft_reshape(cx, weft_zeros_like(cx, r->a), 1, (const int64_t[]){ -1 });
    weft_value *sum = weft_scatter_nd_add(cx, flat, at, r->g);
    return give(r, 0, weft_reshape(cx, sum, 4, (const int64_t[]){ -1, hwc[0], hwc[1], hwc[2] }));
}

/* Each g / count spread over its window: the channels moved into the
 * batch, one transposed convolution with a filter of ones.  count is the
 * window's input elements (padding is not counted), from a convolution of
 * ones with ones. */
static int avg_pool_rule(const rule_in *r)
{
    weft_ctx *cx = r->cx;
    const weft__node *n = r->n;
    int64_t hwc[3];
    if (!known_hwc(r, r->a, hwc))
        return weft_ctx_status(cx);
    weft_dtype dt = weft__value_spec(r->a)->dtype;
    const int64_t *win = n->attr.conv.window, *stride = n->attr.conv.stride;
    weft_padding pad = (weft_padding)n->attr.conv.padding;
    weft_value *ones = weft_fill(cx, dt, 4, (const int64_t[]){ win[0], win[1], 1, 1 }, 1.0);
    weft_value *plane = weft_fill(cx, dt, 4, (const int64_t[]){ 1, hwc[0], hwc[1], 1 }, 1.0);
    weft_value *count = weft_conv2d(cx, plane, ones, stride, pad, NULL);
    weft_value *share = weft_div(cx, r->g, count);                 /* [b, oh, ow, c] */
    static const int to_nchw[4] = { 0, 3, 1, 2 }, to_nhwc[4] = { 0, 2, 3, 1 };
    const weft_spec *ss = weft__value_spec(share);
    weft_value *planes = weft_reshape(cx, weft_transpose(cx, share, to_nchw), 4,
                                      (const int64_t[]){ -1, ss->dims[1], ss->dims[2], 1 });
    weft_value *spread = weft_conv2d_transpose(cx, planes, ones, hwc, stride, pad);
    weft_value *nchw = weft_reshape(cx, spread, 4,
                                    (const int64_t[]){ -1, hwc[2], hwc[0], hwc[1] });
    return give(r, 0, weft_transpose(cx, nchw, to_nhwc));
}

int weft__grad_nn(const rule_in *r)
{
    switch (r->n->op) {
    case WEFT__OP_CONV2D:     return conv2d_rule(r);
    case WEFT__OP_MAX_POOL2D: return max_pool_rule(r);
    case WEFT__OP_AVG_POOL2D: return avg_pool_rule(r);
    default:                  return unsupported(r, NULL);
    }
}
