/* The convolution and pooling ops of include/weft/ops.h: weft_conv2d,
 * weft_conv1d (conv2d over a height of 1), weft_max_pool2d and
 * weft_avg_pool2d.  The entry points check what only the call can check
 * (the padding, strides, dilations and window sizes) and leave dtypes and
 * shapes to inference (infer_conv.c); kernel_conv.c and kernel_pool.c
 * compute. */
#include "runtime/iface.h"
#include "trace/ctx.h"
#include "trace/kernels.h"
#include "trace/shape.h"

/* A context, no sticky error, valid inputs. */
static bool enter(weft_ctx *cx, const char *fn, weft_value *const *in, size_t n_in)
{
    if (!cx) {
        weft__errorf(WEFT_EINVAL, "%s: NULL context", fn);
        return false;
    }
    return weft__ctx_check_inputs(cx, fn, in, n_in);
}

/* v[0..2) (NULL: 1 and 1) into out, each within 1..INT32_MAX. */
static bool take_pair(weft_ctx *cx, const char *fn, const char *what, const int64_t *v,
                      int64_t out[2])
{
    for (int d = 0; d < 2; d++) {
        out[d] = v ? v[d] : 1;
        if (out[d] < 1 || out[d] > INT32_MAX) {
            weft__ctx_fail(cx, WEFT_EINVAL, "%s: %s[%d] is %lld, not within 1..%d", fn, what, d,
                           (long long)out[d], INT32_MAX);
            return false;
        }
    }
    return true;
}

static bool take_padding(weft_ctx *cx, const char *fn, weft_padding padding, weft__node *n)
{
    if (padding != WEFT_PADDING_VALID && padding != WEFT_PADDING_SAME) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: padding %d is not WEFT_PADDING_VALID or "
                       "WEFT_PADDING_SAME", fn, (int)padding);
        return false;
    }
    n->attr.conv.padding = (int)padding;
    return true;
}

/* Infers n on its inputs' specs, then records or computes it. */
static weft_value *finish(weft_ctx *cx, weft__node *n, weft_value **in, uint32_t n_in)
{
    weft_spec specs[2];
    for (uint32_t i = 0; i < n_in; i++)
        specs[i] = *weft__value_spec(in[i]);
    n->n_in = n_in;
    n->in = n->inline_in;
    int rc = weft__infer_spec(n, specs, &n->spec);
    if (rc < 0)
        return weft__ctx_fail_errmsg(cx, rc);
    return weft__ops_emit(cx, n, in, n_in);
}

weft_value *weft_conv2d(weft_ctx *cx, weft_value *input, weft_value *filters,
                        const int64_t *strides, weft_padding padding, const int64_t *dilations)
{
    static const char fn[] = "weft_conv2d";
    weft_value *in[2] = { input, filters };
    weft__node n = { .op = WEFT__OP_CONV2D };
    if (!enter(cx, fn, in, 2) || !take_padding(cx, fn, padding, &n) ||
        !take_pair(cx, fn, "strides", strides, n.attr.conv.stride) ||
        !take_pair(cx, fn, "dilations", dilations, n.attr.conv.dilation))
        return NULL;
    return finish(cx, &n, in, 2);
}

/* A rank-3 operand of weft_conv1d, `what` ("the input", "the filters")
 * with its verb (rank unknown passes: the rank-4 check of conv2d's
 * inference catches it when the function runs). */
static bool rank3(weft_ctx *cx, const char *what, const char *verb, weft_value *v,
                  const char *layout)
{
    const weft_spec *s = weft__value_spec(v);
    if (s->rank == 3 || s->rank == WEFT_RANK_ANY)
        return true;
    char ss[WEFT__SPEC_STR_MAX];
    weft__ctx_fail(cx, WEFT_ESHAPE, "weft_conv1d: %s %s %s not of rank 3 (%s)", what,
                   weft__spec_str(s, ss, sizeof ss), verb, layout);
    return false;
}

weft_value *weft_conv1d(weft_ctx *cx, weft_value *input, weft_value *filters, int64_t stride,
                        weft_padding padding, int64_t dilation)
{
    static const char fn[] = "weft_conv1d";
    weft_value *in[2] = { input, filters };
    weft__node n = { .op = WEFT__OP_CONV2D };
    if (!enter(cx, fn, in, 2) || !take_padding(cx, fn, padding, &n))
        return NULL;
    if (stride < 1 || stride > INT32_MAX || dilation < 1 || dilation > INT32_MAX) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: stride %lld and dilation %lld are not both within "
                       "1..%d", fn, (long long)stride, (long long)dilation, INT32_MAX);
        return NULL;
    }
    n.attr.conv.stride[0] = n.attr.conv.dilation[0] = 1;
    n.attr.conv.stride[1] = stride;
    n.attr.conv.dilation[1] = dilation;
    if (!rank3(cx, "the input", "is", input, "batch, width, channels") ||
        !rank3(cx, "the filters", "are", filters, "width, in, out channels"))
        return NULL;
    /* TensorFlow's own route: [b, w, c] as [b, 1, w, c], [kw, c, o] as
     * [1, kw, c, o], and the height of 1 dropped from the result. */
    weft_value *x = weft_expand_dims(cx, input, 1), *f = weft_expand_dims(cx, filters, 0);
    if (!x || !f)
        return NULL;
    weft_value *xf[2] = { x, f };
    weft_value *y = finish(cx, &n, xf, 2);
    return y ? weft_squeeze(cx, y, 1) : NULL;
}

static weft_value *pool(weft_ctx *cx, weft__op op, const char *fn, weft_value *input,
                        const int64_t *ksize, const int64_t *strides, weft_padding padding)
{
    weft__node n = { .op = op };
    if (!enter(cx, fn, &input, 1) || !take_padding(cx, fn, padding, &n))
        return NULL;
    if (!ksize) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: NULL ksize", fn);
        return NULL;
    }
    n.attr.conv.dilation[0] = n.attr.conv.dilation[1] = 1;
    if (!take_pair(cx, fn, "ksize", ksize, n.attr.conv.window) ||
        !take_pair(cx, fn, "strides", strides, n.attr.conv.stride))
        return NULL;
    return finish(cx, &n, &input, 1);
}

weft_value *weft_max_pool2d(weft_ctx *cx, weft_value *input, const int64_t *ksize,
                            const int64_t *strides, weft_padding padding)
{
    return pool(cx, WEFT__OP_MAX_POOL2D, "weft_max_pool2d", input, ksize, strides, padding);
}

weft_value *weft_avg_pool2d(weft_ctx *cx, weft_value *input, const int64_t *ksize,
                            const int64_t *strides, weft_padding padding)
{
    return pool(cx, WEFT__OP_AVG_POOL2D, "weft_avg_pool2d", input, ksize, strides, padding);
}
