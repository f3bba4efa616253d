/* Shape and dtype inference of conv2d, depthwise_conv2d, max_pool2d and
 * avg_pool2d on NHWC data, and TensorFlow's rule for placing windows
 * along a dim.  As in infer_shape.c, the same code checks a node while
 * tracing (batch, height and width may be unknown) and again on concrete
 * inputs before the kernel runs. */
#include <stdio.h>

#include "runtime/iface.h"
#include "trace/shape.h"

#define ANY WEFT_DIM_ANY

static const char *const dim_names[2] = { "height", "width" };

int64_t weft__conv_out_dim(int padding, int64_t in, int64_t window, int64_t stride,
                           int64_t dilation, int64_t *pad_before)
{
    *pad_before = 0;
    if (window - 1 > (INT64_MAX - 1) / dilation)
        return -1;   /* a window no input can hold */
    int64_t span = (window - 1) * dilation + 1;
    if (padding == WEFT_PADDING_VALID)
        return in < span ? -1 : (in - span) / stride + 1;
    int64_t out = in / stride + (in % stride != 0);
    if (out > 0) {
        int64_t total = (out - 1) * stride + span - in;   /* at most span - 1 */
        *pad_before = total > 0 ? total / 2 : 0;
    }
    return out;
}

/* "the input" of in[0] and "the filters" of in[1], for messages. */
static const char *const operand_names[2] = { "the input", "the filters" };
static const char *const operand_verbs[2] = { "is", "are" };

static int dtype_fail(const weft__node *n, int i, const weft_spec *s, const char *want)
{
    char ss[WEFT__SPEC_STR_MAX];
    return weft__errorf(WEFT_EDTYPE, "weft_%s: %s %s %s not %s", weft__op_name(n->op),
                        operand_names[i], weft__spec_str(s, ss, sizeof ss), operand_verbs[i],
                        want);
}

static int check_dtypes(const weft__node *n, const weft_spec *in)
{
    weft_dtype dt = in[0].dtype;
    bool is_float = dt == WEFT_F32 || dt == WEFT_F64;
    switch (n->op) {
    case WEFT__OP_CONV2D:
    case WEFT__OP_DEPTHWISE_CONV2D:
        if (!is_float)
            return dtype_fail(n, 0, &in[0], "f32 or f64 (cast it first)");
        if (in[1].dtype != dt)
            return dtype_fail(n, 1, &in[1], weft_dtype_name(dt));
        return 0;
    case WEFT__OP_MAX_POOL2D:
        if (!is_float && dt != WEFT_I32 && dt != WEFT_I64)
            return dtype_fail(n, 0, &in[0], "i32, i64, f32 or f64");
        return 0;
    default:
        if (!is_float)
            return dtype_fail(n, 0, &in[0], "f32 or f64");
        return 0;
    }
}

static int rank_check(const weft__node *n, int i, const weft_spec *s, const char *layout)
{
    if (s->rank == 4 || s->rank == WEFT_RANK_ANY)
        return 0;
    char ss[WEFT__SPEC_STR_MAX];
    return weft__errorf(WEFT_ESHAPE, "weft_%s: %s %s %s not of rank 4 (%s)",
                        weft__op_name(n->op), operand_names[i], weft__spec_str(s, ss, sizeof ss),
                        operand_verbs[i], layout);
}

/* The window's extent along spatial dim d (0 height, 1 width): the
 * filters' dim for a convolution (ANY when unknown), the attribute for a
 * pool. */
static int64_t window_of(const weft__node *n, const weft_spec *in, int d)
{
    if (n->op != WEFT__OP_CONV2D && n->op != WEFT__OP_DEPTHWISE_CONV2D)
        return n->attr.conv.window[d];
    return in[1].rank == 4 ? in[1].dims[d] : ANY;
}

/* The output's height (d = 0) or width (d = 1). */
static int spatial_out(const weft__node *n, const weft_spec *in, int d, int64_t *out)
{
    int64_t size = in[0].rank == 4 ? in[0].dims[1 + d] : ANY;
    int64_t window = window_of(n, in, d);
    *out = ANY;
    if (window == 0) {
        char ss[WEFT__SPEC_STR_MAX];
        return weft__errorf(WEFT_ESHAPE, "weft_%s: the filters %s have a %s of 0",
                            weft__op_name(n->op), weft__spec_str(&in[1], ss, sizeof ss),
                            dim_names[d]);
    }
    if (size == ANY || window == ANY)
        return 0;
    int64_t pad;
    *out = weft__conv_out_dim(n->attr.conv.padding, size, window, n->attr.conv.stride[d],
                              n->attr.conv.dilation[d], &pad);
    if (*out >= 0)
        return 0;
    char ss[WEFT__SPEC_STR_MAX];
    return weft__errorf(WEFT_ESHAPE, "weft_%s: the input %s has a %s of %lld, less than the "
                        "window of %lld element(s)%s with VALID padding", weft__op_name(n->op),
                        weft__spec_str(&in[0], ss, sizeof ss), dim_names[d], (long long)size,
                        (long long)window, n->attr.conv.dilation[d] > 1 ? " dilated" : "");
}

/* resize: [n, h, w, c] of f32 or f64 to [n, size[0], size[1], c]. */
static int infer_resize(const weft__node *n, const weft_spec *in, weft_spec *out)
{
    int rc = rank_check(n, 0, &in[0], "batch, height, width, channels");
    if (rc < 0)
        return rc;
    if (in[0].dtype != WEFT_F32 && in[0].dtype != WEFT_F64)
        return dtype_fail(n, 0, &in[0], "f32 or f64 (cast it first)");
    for (int d = 0; d < 2 && in[0].rank == 4; d++)
        if (in[0].dims[1 + d] == 0) {
            char ss[WEFT__SPEC_STR_MAX];
            return weft__errorf(WEFT_ESHAPE, "weft_resize: the input %s has a %s of 0",
                                weft__spec_str(&in[0], ss, sizeof ss), dim_names[d]);
        }
    out->dtype = in[0].dtype;
    out->rank = 4;
    out->dims[0] = in[0].rank == 4 ? in[0].dims[0] : ANY;
    out->dims[1] = n->attr.resize.size[0];
    out->dims[2] = n->attr.resize.size[1];
    out->dims[3] = in[0].rank == 4 ? in[0].dims[3] : ANY;
    return 0;
}

/* crop_and_resize: images [batch, h, w, c] (f32 or f64), boxes [n, 4] of
 * the images' dtype, box indices [n] (i32 or i64); the crops [n, crop
 * height, crop width, c]. */
static int infer_crop_and_resize(const weft__node *n, const weft_spec *in, weft_spec *out)
{
    const weft_spec *im = &in[0], *b = &in[1], *bi = &in[2];
    int rc = rank_check(n, 0, im, "batch, height, width, channels");
    if (rc < 0)
        return rc;
    if (im->dtype != WEFT_F32 && im->dtype != WEFT_F64)
        return dtype_fail(n, 0, im, "f32 or f64 (cast it first)");
    char sb[WEFT__SPEC_STR_MAX], si[WEFT__SPEC_STR_MAX];
    weft__spec_str(b, sb, sizeof sb);
    weft__spec_str(bi, si, sizeof si);
    if (b->dtype != im->dtype || (bi->dtype != WEFT_I32 && bi->dtype != WEFT_I64))
        return weft__errorf(WEFT_EDTYPE, "weft_crop_and_resize: the boxes %s are not of the "
                            "images' dtype or the box indices %s not i32 or i64", sb, si);
    if (!weft__spec_boxes(b, bi))
        return weft__errorf(WEFT_ESHAPE, "weft_crop_and_resize: the boxes %s and box indices %s "
                            "are not [n, 4] and [n]", sb, si);
    out->dtype = im->dtype;
    out->rank = 4;
    out->dims[0] = b->dims[0] != ANY ? b->dims[0] : bi->dims[0];
    out->dims[1] = n->attr.resize.size[0];
    out->dims[2] = n->attr.resize.size[1];
    out->dims[3] = im->rank == 4 ? im->dims[3] : ANY;
    return 0;
}

int weft__infer_conv_op(const weft__node *n, const weft_spec *in, weft_spec *out)
{
    if (n->op == WEFT__OP_RESIZE)
        return infer_resize(n, in, out);
    if (n->op == WEFT__OP_CROP_AND_RESIZE)
        return infer_crop_and_resize(n, in, out);
    int rc = check_dtypes(n, in);
    if (rc < 0 || (rc = rank_check(n, 0, &in[0], "batch, height, width, channels")) < 0)
        return rc;
    bool depthwise = n->op == WEFT__OP_DEPTHWISE_CONV2D;
    bool conv = n->op == WEFT__OP_CONV2D || depthwise;
    if (conv && (rc = rank_check(n, 1, &in[1], depthwise ? "height, width, channels, multiplier"
                                                         : "height, width, in, out channels")) < 0)
        return rc;
    out->dtype = in[0].dtype;
    out->rank = 4;
    out->dims[0] = in[0].rank == 4 ? in[0].dims[0] : ANY;
    out->dims[3] = in[0].rank == 4 ? in[0].dims[3] : ANY;
    if (conv) {
        int64_t c = out->dims[3], fc = in[1].rank == 4 ? in[1].dims[2] : ANY;
        if (c != ANY && fc != ANY && c != fc) {
            char sa[WEFT__SPEC_STR_MAX], sb[WEFT__SPEC_STR_MAX];
            return weft__errorf(WEFT_ESHAPE, "weft_%s: the input %s has %lld channels, the "
                                "filters %s take %lld", weft__op_name(n->op),
                                weft__spec_str(&in[0], sa, sizeof sa), (long long)c,
                                weft__spec_str(&in[1], sb, sizeof sb), (long long)fc);
        }
        int64_t fo = in[1].rank == 4 ? in[1].dims[3] : ANY;
        /* A depthwise result has channels x multiplier channels. */
        if (depthwise && !weft__dim_mul(c != ANY ? c : fc, fo, &out->dims[3]))
            return weft__errorf(WEFT_ESHAPE, "weft_depthwise_conv2d: channels times multiplier "
                                "overflow");
        if (!depthwise)
            out->dims[3] = fo;
    }
    for (int d = 0; d < 2; d++)
        if ((rc = spatial_out(n, in, d, &out->dims[1 + d])) < 0)
            return rc;
    return 0;
}
