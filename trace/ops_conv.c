/* The convolution and pooling ops of include/weft/ops.h: weft_conv2d,
 * weft_conv1d (conv2d over a height of 1), weft_separable_conv2d (a
 * depthwise, then a pointwise convolution), weft_max_pool2d and
 * weft_avg_pool2d.  The entry points check what only the call can check
 * (the padding, strides, dilations and window sizes) and leave dtypes and
 * shapes to inference (infer_conv.c); kernel_conv.c and kernel_pool.c
 * compute. */
#include "runtime/iface.h"
#include "trace/ctx.h"
#include "trace/kernels.h"
#include "trace/ops_impl.h"
#include "trace/shape.h"

bool weft__ops_take_sizes(weft_ctx *cx, const char *fn, const char *what, const int64_t *v,
                          int n, int64_t *out)
{
    for (int d = 0; d < n; d++) {
        out[d] = v ? v[d] : 1;
        if (out[d] < 1 || out[d] > INT32_MAX) {
            weft__ctx_fail(cx, WEFT_EINVAL, "%s: %s[%d] is %lld, not within 1..%d", fn, what, d,
                           (long long)out[d], INT32_MAX);
            return false;
        }
    }
    return true;
}

/* v[0..2) (NULL: 1 and 1) into out. */
static bool take_pair(weft_ctx *cx, const char *fn, const char *what, const int64_t *v,
                      int64_t out[2])
{
    return weft__ops_take_sizes(cx, fn, what, v, 2, out);
}

bool weft__ops_padding_ok(weft_ctx *cx, const char *fn, weft_padding padding)
{
    if (padding == WEFT_PADDING_VALID || padding == WEFT_PADDING_SAME)
        return true;
    weft__ctx_fail(cx, WEFT_EINVAL, "%s: padding %d is not WEFT_PADDING_VALID or "
                   "WEFT_PADDING_SAME", fn, (int)padding);
    return false;
}

static bool take_padding(weft_ctx *cx, const char *fn, weft_padding padding, weft__node *n)
{
    if (!weft__ops_padding_ok(cx, fn, padding))
        return false;
    n->attr.conv.padding = (int)padding;
    return true;
}

/* conv2d and depthwise_conv2d: the node op of input and filters. */
static weft_value *conv_op(weft_ctx *cx, weft__op op, const char *fn, weft_value *input,
                           weft_value *filters, const int64_t *strides, weft_padding padding,
                           const int64_t *dilations)
{
    weft_value *in[2] = { input, filters };
    weft__node n = { .op = op };
    if (!weft__op_enter(cx, fn, in, 2) || !take_padding(cx, fn, padding, &n) ||
        !take_pair(cx, fn, "strides", strides, n.attr.conv.stride) ||
        !take_pair(cx, fn, "dilations", dilations, n.attr.conv.dilation))
        return NULL;
    return weft__ops_finish(cx, &n, in, 2);
}

weft_value *weft_conv2d(weft_ctx *cx, weft_value *input, weft_value *filters,
                        const int64_t *strides, weft_padding padding, const int64_t *dilations)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(conv_op(cx, WEFT__OP_CONV2D, "weft_conv2d", input, filters, strides, padding,
                              dilations));
}

weft_value *weft_depthwise_conv2d(weft_ctx *cx, weft_value *input, weft_value *filters,
                                  const int64_t *strides, weft_padding padding,
                                  const int64_t *dilations)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(conv_op(cx, WEFT__OP_DEPTHWISE_CONV2D, "weft_depthwise_conv2d", input,
                              filters, strides, padding, dilations));
}

/* A rank-3 operand of weft_conv1d, `what` ("the input", "the filters")
 * with its verb (rank unknown passes: the rank-4 check of conv2d's
 * inference catches it when the function runs). */
static bool rank3(weft_ctx *cx, const char *fn, const char *what, const char *verb,
                  weft_value *v, const char *layout)
{
    const weft_spec *s = weft__value_spec(v);
    if (s->rank == 3 || s->rank == WEFT_RANK_ANY)
        return true;
    char ss[WEFT__SPEC_STR_MAX];
    weft__ctx_fail(cx, WEFT_ESHAPE, "%s: %s %s %s not of rank 3 (%s)", fn, what,
                   weft__spec_str(s, ss, sizeof ss), verb, layout);
    return false;
}

weft_value *weft_conv1d(weft_ctx *cx, weft_value *input, weft_value *filters, int64_t stride,
                        weft_padding padding, int64_t dilation)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_conv1d";
    weft_value *in[2] = { input, filters };
    weft__node n = { .op = WEFT__OP_CONV2D };
    if (!weft__op_enter(cx, fn, in, 2) || !take_padding(cx, fn, padding, &n))
        return NULL;
    if (stride < 1 || stride > INT32_MAX || dilation < 1 || dilation > INT32_MAX) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: stride %lld and dilation %lld are not both within "
                       "1..%d", fn, (long long)stride, (long long)dilation, INT32_MAX);
        return NULL;
    }
    n.attr.conv.stride[0] = n.attr.conv.dilation[0] = 1;
    n.attr.conv.stride[1] = stride;
    n.attr.conv.dilation[1] = dilation;
    if (!rank3(cx, fn, "the input", "is", input, "batch, width, channels") ||
        !rank3(cx, fn, "the filters", "are", filters, "width, in, out channels"))
        return NULL;
    /* TensorFlow's own route: [b, w, c] as [b, 1, w, c], [kw, c, o] as
     * [1, kw, c, o], and the height of 1 dropped from the result. */
    weft_value *x = weft_expand_dims(cx, input, 1), *f = weft_expand_dims(cx, filters, 0);
    if (!x || !f)
        return NULL;
    weft_value *xf[2] = { x, f };
    weft_value *y = weft__ops_finish(cx, &n, xf, 2);
    return WEFT__KEEP(y ? weft_squeeze(cx, y, 1) : NULL);
}

/* The separable convolution's filters, each of rank 4 with its dims known
 * while tracing, of the input's float dtype, the pointwise one [1, 1,
 * channels * multiplier, out] for the depthwise one [h, w, channels,
 * multiplier], and an input whose channels, if known, are those. */
static bool separable_ok(weft_ctx *cx, const char *fn, weft_value *const in[3])
{
    const weft_spec *x = weft__value_spec(in[0]), *dw = weft__value_spec(in[1]),
                    *pw = weft__value_spec(in[2]);
    char s0[WEFT__SPEC_STR_MAX], s1[WEFT__SPEC_STR_MAX], s2[WEFT__SPEC_STR_MAX];
    if ((x->dtype != WEFT_F32 && x->dtype != WEFT_F64) || dw->dtype != x->dtype ||
        pw->dtype != x->dtype) {
        weft__ctx_fail(cx, WEFT_EDTYPE, "%s: the input %s and the filters %s and %s are not all "
                       "f32 or all f64", fn, weft__spec_str(x, s0, sizeof s0),
                       weft__spec_str(dw, s1, sizeof s1), weft__spec_str(pw, s2, sizeof s2));
        return false;
    }
    bool ok = dw->rank == 4 && pw->rank == 4;
    for (int d = 0; ok && d < 4; d++)
        ok = dw->dims[d] >= 0 && pw->dims[d] >= 0;
    ok = ok && pw->dims[0] == 1 && pw->dims[1] == 1 && pw->dims[2] == dw->dims[2] * dw->dims[3];
    ok = ok && (x->rank == WEFT_RANK_ANY ||
                (x->rank == 4 && (x->dims[3] < 0 || x->dims[3] == dw->dims[2])));
    if (!ok)
        weft__ctx_fail(cx, WEFT_ESHAPE, "%s: the input %s, depthwise filter %s and pointwise "
                       "filter %s are not [b, h, w, c], [fh, fw, c, m] and [1, 1, c * m, out] "
                       "(the filters known while tracing)", fn, weft__spec_str(x, s0, sizeof s0),
                       weft__spec_str(dw, s1, sizeof s1), weft__spec_str(pw, s2, sizeof s2));
    return ok;
}

/* tf.nn.separable_conv2d: the depthwise convolution, then the pointwise
 * 1 x 1 one (TensorFlow's own two steps). */
weft_value *weft_separable_conv2d(weft_ctx *cx, weft_value *input, weft_value *depthwise_filter,
                                  weft_value *pointwise_filter, const int64_t *strides,
                                  weft_padding padding, const int64_t *dilations)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_separable_conv2d";
    weft_value *in[3] = { input, depthwise_filter, pointwise_filter };
    weft__node n = { .op = WEFT__OP_DEPTHWISE_CONV2D };
    int64_t pair[2];
    if (!weft__op_enter(cx, fn, in, 3) || !take_padding(cx, fn, padding, &n) ||
        !take_pair(cx, fn, "strides", strides, pair) ||
        !take_pair(cx, fn, "dilations", dilations, pair) || !separable_ok(cx, fn, in))
        return NULL;
    weft_value *depthwise =
        weft_depthwise_conv2d(cx, input, depthwise_filter, strides, padding, dilations);
    return WEFT__KEEP(weft_conv2d(cx, depthwise, pointwise_filter, NULL, WEFT_PADDING_VALID, NULL));
}

weft_value *weft_crop_and_resize(weft_ctx *cx, weft_value *images, weft_value *boxes,
                                 weft_value *box_indices, const int64_t *crop_size,
                                 weft_resize_method method, double extrapolation_value)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_crop_and_resize";
    weft_value *in[3] = { images, boxes, box_indices };
    if (!weft__op_enter(cx, fn, in, 3))
        return NULL;
    if (method != WEFT_RESIZE_BILINEAR && method != WEFT_RESIZE_NEAREST)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: method %d is not WEFT_RESIZE_BILINEAR or "
                              "_NEAREST", fn, (int)method);
    if (!crop_size || crop_size[0] < 1 || crop_size[1] < 1 || crop_size[0] > INT32_MAX ||
        crop_size[1] > INT32_MAX)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: crop_size is not two sizes within 1..%d", fn,
                              INT32_MAX);
    weft__node n = { .op = WEFT__OP_CROP_AND_RESIZE, .attr.resize.method = (int)method,
                     .attr.resize.size = { crop_size[0], crop_size[1] },
                     .attr.resize.extrapolation = extrapolation_value };
    return WEFT__KEEP(weft__ops_finish(cx, &n, in, 3));
}

static weft_value *resize(weft_ctx *cx, const char *fn, weft_value *images, int64_t height,
                         int64_t width, weft_resize_method method, bool antialias)
{
    if (!weft__op_enter(cx, fn, &images, 1))
        return NULL;
    if ((int)method < (int)WEFT_RESIZE_BILINEAR || (int)method > (int)WEFT_RESIZE_MITCHELLCUBIC)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: method %d is not a weft_resize_method", fn,
                              (int)method);
    if (height < 1 || width < 1 || height > INT32_MAX || width > INT32_MAX)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: size %lld x %lld is not within 1..%d", fn,
                              (long long)height, (long long)width, INT32_MAX);
    /* A single image [h, w, c] goes through as a batch of one. */
    const weft_spec *s = weft__value_spec(images);
    bool single = s->rank == 3;
    weft_value *x = single ? weft_expand_dims(cx, images, 0) : images;
    if (!x)
        return NULL;
    /* Antialias changes only the methods that filter (TensorFlow: area
     * always averages, nearest never does). */
    bool filters = method != WEFT_RESIZE_NEAREST && method != WEFT_RESIZE_AREA;
    weft__node n = { .op = WEFT__OP_RESIZE, .attr.resize.method = (int)method,
                     .attr.resize.size = { height, width },
                     .attr.resize.antialias = antialias && filters };
    weft_value *y = weft__ops_finish(cx, &n, &x, 1);
    return y && single ? weft_squeeze(cx, y, 0) : y;
}

weft_value *weft_resize(weft_ctx *cx, weft_value *images, int64_t height, int64_t width,
                        weft_resize_method method)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(resize(cx, "weft_resize", images, height, width, method, false));
}

weft_value *weft_resize_ex(weft_ctx *cx, weft_value *images, int64_t height, int64_t width,
                           weft_resize_method method, bool antialias)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(resize(cx, "weft_resize_ex", images, height, width, method, antialias));
}

static weft_value *pool(weft_ctx *cx, weft__op op, const char *fn, weft_value *input,
                        const int64_t *ksize, const int64_t *strides, weft_padding padding)
{
    weft__node n = { .op = op };
    if (!weft__op_enter(cx, fn, &input, 1) || !take_padding(cx, fn, padding, &n))
        return NULL;
    if (!ksize) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: NULL ksize", fn);
        return NULL;
    }
    n.attr.conv.dilation[0] = n.attr.conv.dilation[1] = 1;
    if (!take_pair(cx, fn, "ksize", ksize, n.attr.conv.window) ||
        !take_pair(cx, fn, "strides", strides, n.attr.conv.stride))
        return NULL;
    return weft__ops_finish(cx, &n, &input, 1);
}

weft_value *weft_max_pool2d(weft_ctx *cx, weft_value *input, const int64_t *ksize,
                            const int64_t *strides, weft_padding padding)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(pool(cx, WEFT__OP_MAX_POOL2D, "weft_max_pool2d", input, ksize, strides,
                           padding));
}

weft_value *weft_avg_pool2d(weft_ctx *cx, weft_value *input, const int64_t *ksize,
                            const int64_t *strides, weft_padding padding)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(pool(cx, WEFT__OP_AVG_POOL2D, "weft_avg_pool2d", input, ksize, strides,
                           padding));
}

/* tf.nn.max_pool1d / avg_pool1d as TensorFlow computes them: [b, w, c]
 * as [b, 1, w, c], a window of 1 x ksize, the height of 1 dropped. */
static weft_value *pool1d(weft_ctx *cx, weft__op op, const char *fn, weft_value *input,
                          int64_t ksize, int64_t stride, weft_padding padding)
{
    if (!weft__op_enter(cx, fn, &input, 1) ||
        !rank3(cx, fn, "the input", "is", input, "batch, width, channels"))
        return NULL;
    weft_value *x = weft_expand_dims(cx, input, 1);
    weft_value *y = x ? pool(cx, op, fn, x, (const int64_t[]){ 1, ksize },
                             (const int64_t[]){ 1, stride }, padding)
                      : NULL;
    return y ? weft_squeeze(cx, y, 1) : NULL;
}

weft_value *weft_max_pool1d(weft_ctx *cx, weft_value *input, int64_t ksize, int64_t stride,
                            weft_padding padding)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(pool1d(cx, WEFT__OP_MAX_POOL2D, "weft_max_pool1d", input, ksize, stride,
                             padding));
}

weft_value *weft_avg_pool1d(weft_ctx *cx, weft_value *input, int64_t ksize, int64_t stride,
                            weft_padding padding)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(pool1d(cx, WEFT__OP_AVG_POOL2D, "weft_avg_pool1d", input, ksize, stride,
                             padding));
}
