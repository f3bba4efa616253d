/* The gradient rules of conv2d, depthwise_conv2d, the 2-D pools (fractional
 * ones too), resize and the image transform (weft_gradients; the helpers
 * are trace/grad_rules.c's), written with the public ops as TensorFlow's
 * kernels compute them: a convolution's input gradient is a transposed
 * convolution and its filters' gradient the products of the input's
 * patches with g; a max pool's gradient goes to the element each maximum
 * came from; an average pool's spreads each g / count over its window.
 * NHWC, with the height, width and channels known while tracing (the
 * batch may be unknown). */
#include "trace/control.h"
#include "trace/grad.h"
#include "trace/ops_impl.h"
#include "trace/shape.h"
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

/* A convolution's input gradient: the transposed convolution of g by
 * the convolution's dense filters (HWIO) back to the input's hwc. */
static int give_input_gradient(const rule_in *r, weft_value *filters, const int64_t *hwc)
{
    const weft__node *n = r->n;
    return give(r, 0, weft_conv2d_transpose_ex(r->cx, r->g, filters, hwc, n->attr.conv.stride,
                                               (weft_padding)n->attr.conv.padding,
                                               n->attr.conv.dilation));
}

/* The input's patches under filters of spec fs: [b, oh, ow, fh fw c]. */
static weft_value *patches_of(const rule_in *r, const weft_spec *fs)
{
    const weft__node *n = r->n;
    return weft_extract_patches(r->cx, r->a, fs->dims, n->attr.conv.stride,
                                n->attr.conv.dilation, (weft_padding)n->attr.conv.padding);
}

static int conv2d_rule(const rule_in *r)
{
    weft_ctx *cx = r->cx;
    int64_t hwc[3];
    if (!known_hwc(r, r->a, hwc))
        return weft_ctx_status(cx);
    const weft_spec *fs = weft__value_spec(r->b);
    int rc = wants(r, 0) ? give_input_gradient(r, r->b, hwc) : 0;
    if (rc < 0 || !wants(r, 1))
        return rc;
    /* dF[ky, kx, ci, co] = sum over pixels of patch[.., (ky, kx, ci)] g[.., co]. */
    int64_t taps = fs->dims[0] * fs->dims[1] * fs->dims[2], cout = fs->dims[3];
    weft_value *p2 = weft_reshape(cx, patches_of(r, fs), 2, (const int64_t[]){ -1, taps });
    weft_value *g2 = weft_reshape(cx, r->g, 2, (const int64_t[]){ -1, cout });
    weft_value *df = weft_matmul_ex(cx, p2, g2, WEFT_TRANSPOSE_A);
    return give(r, 1, weft_reshape(cx, df, 4, fs->dims));
}

/* Each g to the element its maximum came from: argmax, the flat index
 * within its image, plus the image's offset, scattered into zeros. */
static int give_to_argmax(const rule_in *r, weft_value *argmax, const int64_t *hwc)
{
    weft_ctx *cx = r->cx;
    int64_t image = hwc[0] * hwc[1] * hwc[2];
    weft_value *batch = weft__ops_dim0(cx, r->a);
    weft_value *offset = weft_mul(cx, weft_range_to(cx, batch), weft_const_i64(cx, image));
    offset = weft_reshape(cx, offset, 4, (const int64_t[]){ -1, 1, 1, 1 });
    weft_value *at = weft_expand_dims(cx, weft_add(cx, argmax, offset), -1);
    weft_value *flat = weft_reshape(cx, weft_zeros_like(cx, r->a), 1, (const int64_t[]){ -1 });
    weft_value *sum = weft_scatter_nd_add(cx, flat, at, r->g);
    return give(r, 0, weft_reshape(cx, sum, 4, (const int64_t[]){ -1, hwc[0], hwc[1], hwc[2] }));
}

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
    return give_to_argmax(r, outs[1], hwc);
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

/* fractional_max_pool: each g to the first element holding its maximum
 * (the node's argmax mode).  fractional_avg_pool: each g / count spread
 * over its region (the node's avg_grad mode, TensorFlow's
 * FractionalAvgPoolGrad); that spread is linear, and its own gradient (a
 * second derivative) is the average pool of g. */
static int fractional_pool_rule(const rule_in *r)
{
    weft_ctx *cx = r->cx;
    weft_value *in[3] = { r->a, r->b, r->t->val[r->n->in[2]] };
    weft__node n = { .op = WEFT__OP_FRACTIONAL_POOL, .attr = r->n->attr };
    if (r->n->attr.resize.method == WEFT__FRACTIONAL_AVG_GRAD) {
        n.attr.resize.method = WEFT__FRACTIONAL_AVG;
        weft_value *pool[3] = { r->g, in[1], in[2] };
        return give(r, 0, weft__ops_finish(cx, &n, pool, 3));
    }
    if (r->n->attr.resize.method == WEFT__FRACTIONAL_ARGMAX)
        return unsupported(r, "of the maximum's indices");
    int64_t hwc[3];
    if (!known_hwc(r, r->a, hwc))
        return weft_ctx_status(cx);
    if (r->n->attr.resize.method == WEFT__FRACTIONAL_MAX) {
        n.attr.resize.method = WEFT__FRACTIONAL_ARGMAX;
        return give_to_argmax(r, weft__ops_finish(cx, &n, in, 3), hwc);
    }
    n.attr.resize.method = WEFT__FRACTIONAL_AVG_GRAD;
    n.attr.resize.size[0] = hwc[0];
    n.attr.resize.size[1] = hwc[1];
    weft_value *spread[3] = { r->g, in[1], in[2] };
    return give(r, 0, weft__ops_finish(cx, &n, spread, 3));
}

/* The image transform's gradient by TensorFlow's rule
 * (_image_projective_transform_v3_grad): g transformed by each
 * transform's inverse (the matrix [a0 a1 a2; b0 b1 b2; c0 c1 1] inverted
 * and scaled to a last entry of 1) back to the images' height and width,
 * with the same interpolation and fill mode and a fill of 0.  It is the
 * adjoint for whole-pixel translations with a constant fill and
 * TensorFlow's approximation of it otherwise (a fill mode that reads a
 * pixel twice, or a scale, is not undone exactly).  The transforms get
 * none, as in TensorFlow. */
static int transform_rule(const rule_in *r)
{
    if (!wants(r, 0))
        return 0;
    weft_ctx *cx = r->cx;
    const weft_spec *s = weft__value_spec(r->a);
    if (s->dims[1] < 0 || s->dims[2] < 0)
        return unsupported(r, "of images whose height or width is unknown while tracing");
    const int64_t hw[2] = { s->dims[1], s->dims[2] };
    weft_value *t = r->b;
    weft_value *parts[2] = { t, weft_fill_like(cx, weft__ops_axis_slice(cx, t, 1, 0, 1), 1) };
    weft_value *m = weft_reshape(cx, weft_concat(cx, parts, 2, 1), 3,
                                 (const int64_t[]){ -1, 3, 3 });
    weft_value *inv = weft_reshape(cx, weft_matrix_inverse(cx, m), 2,
                                   (const int64_t[]){ -1, 9 });
    weft_value *flat = weft__ops_axis_slice(
        cx, weft_div(cx, inv, weft__ops_axis_slice(cx, inv, 1, 8, 9)), 1, 0, 8);
    const weft__node *n = r->n;
    return give(r, 0, weft_image_projective_transform(
                          cx, r->g, flat, hw, (weft_resize_method)n->attr.transform.interpolation,
                          (weft_fill_mode)n->attr.transform.fill_mode, 0));
}

/* A depthwise convolution is a conv2d whose filter is block-diagonal
 * over the channels (each input channel c feeds only outputs c m .. c m +
 * m - 1): the input's gradient is that filter's transposed convolution
 * (C times the depthwise work, one op); the filters' gradient pairs each
 * channel's patches with its own outputs, one product per channel. */
static int depthwise_rule(const rule_in *r)
{
    weft_ctx *cx = r->cx;
    int64_t hwc[3];
    if (!known_hwc(r, r->a, hwc))
        return weft_ctx_status(cx);
    const weft_spec *fs = weft__value_spec(r->b);
    int64_t kh = fs->dims[0], kw = fs->dims[1], c = fs->dims[2], m = fs->dims[3];
    if (wants(r, 0)) {
        weft_value *eye = weft_reshape(cx, weft_eye(cx, c, c, fs->dtype), 5,
                                       (const int64_t[]){ 1, 1, c, c, 1 });
        weft_value *blocks = weft_mul(cx, weft_reshape(cx, r->b, 5,
                                                       (const int64_t[]){ kh, kw, c, 1, m }), eye);
        weft_value *dense = weft_reshape(cx, blocks, 4, (const int64_t[]){ kh, kw, c, c * m });
        int rc = give_input_gradient(r, dense, hwc);
        if (rc < 0)
            return rc;
    }
    if (!wants(r, 1))
        return 0;
    /* patches [N, taps, c] -> [c, taps, N]; g [N, c, m] -> [c, N, m]. */
    static const int to_channel_first[3] = { 2, 1, 0 }, g_channel_first[3] = { 1, 0, 2 };
    static const int back[3] = { 1, 0, 2 };
    weft_value *p3 = weft_transpose(cx, weft_reshape(cx, patches_of(r, fs), 3, (const int64_t[]){
                                        -1, kh * kw, c }), to_channel_first);
    weft_value *g3 = weft_transpose(cx, weft_reshape(cx, r->g, 3, (const int64_t[]){ -1, c, m }),
                                    g_channel_first);
    weft_value *df = weft_transpose(cx, weft_matmul(cx, p3, g3), back);   /* [taps, c, m] */
    return give(r, 1, weft_reshape(cx, df, 4, fs->dims));
}

/* The resize's matrix along one dim: an identity of n pixels resized as
 * n channels of a one-pixel-wide (or -high) image, [out, n]. */
static weft_value *resize_matrix(const rule_in *r, int64_t n, int64_t out, bool height)
{
    weft_ctx *cx = r->cx;
    weft_value *eye = weft_eye(cx, n, n, weft__value_spec(r->a)->dtype);
    int64_t dims[4] = { 1, height ? n : 1, height ? 1 : n, n };
    weft_value *plane = weft_reshape(cx, eye, 4, dims);
    weft__node one = { .op = WEFT__OP_RESIZE, .attr.resize = r->n->attr.resize };
    one.attr.resize.size[0] = height ? out : 1;
    one.attr.resize.size[1] = height ? 1 : out;
    weft_value *m = plane ? weft__ops_finish(cx, &one, &plane, 1) : NULL;
    return weft_reshape(cx, m, 2, (const int64_t[]){ out, n });
}

/* Every method resizes the height and then the width, each a fixed
 * linear map of its dim: y = R_h x R_w^T per image and channel, so the
 * gradient is R_h^T g R_w, the matrices read off resizing identities. */
static int resize_rule(const rule_in *r)
{
    int64_t hwc[3];
    if (!known_hwc(r, r->a, hwc))
        return weft_ctx_status(r->cx);
    const int64_t *size = r->n->attr.resize.size;
    weft_value *in[3] = { resize_matrix(r, hwc[0], size[0], true), r->g,
                          resize_matrix(r, hwc[1], size[1], false) };
    return give(r, 0, weft_einsum(r->cx, "ih,bijc,jw->bhwc", in, 3));
}

/* ctc_loss: for the logits (input 1), the gradient of each element's loss
 * by its logits (one CTC_LOSS_GRAD node: the softmax minus each class's
 * share of the paths, from the forward and backward recursions) times
 * that element's g.  The labels and lengths are integers. */
static int ctc_loss_rule(const rule_in *r)
{
    if (!weft__grad_wants(r, 1))
        return 0;
    weft_ctx *cx = r->cx;
    weft__node n = { .op = WEFT__OP_CTC_LOSS_GRAD, .attr = r->n->attr };
    weft_value *in[4];
    for (int k = 0; k < 4; k++)
        in[k] = r->t->val[r->n->in[k]];
    weft_value *per_logit = weft__ops_finish(cx, &n, in, 4);
    bool time_major = r->n->attr.index.kind != 0;
    weft_value *g = weft_expand_dims(cx, weft_expand_dims(cx, r->g, -1), time_major ? 0 : -1);
    return weft__grad_give(r, 1, weft_mul(cx, per_logit, g));
}

int weft__grad_nn(const rule_in *r)
{
    switch (r->n->op) {
    case WEFT__OP_CONV2D:     return conv2d_rule(r);
    case WEFT__OP_DEPTHWISE_CONV2D: return depthwise_rule(r);
    case WEFT__OP_RESIZE:     return resize_rule(r);
    case WEFT__OP_MAX_POOL2D: return max_pool_rule(r);
    case WEFT__OP_AVG_POOL2D: return avg_pool_rule(r);
    case WEFT__OP_FRACTIONAL_POOL: return fractional_pool_rule(r);
    case WEFT__OP_IMAGE_TRANSFORM: return transform_rule(r);
    case WEFT__OP_CTC_LOSS:   return ctc_loss_rule(r);
    default:                  return unsupported(r, NULL);
    }
}
