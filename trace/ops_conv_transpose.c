/* conv1d_transpose, conv2d_transpose and conv3d_transpose, the gradients
 * of conv1d, conv2d and conv3d with respect to their input, as
 * compositions of the other ops:
 * the input spread with stride - 1 zeros between neighbours along each
 * spatial dim, padded by the dilated window's span - 1 on both sides, and
 * correlated (stride 1, VALID, the filters' dilation) with the filters
 * flipped in space and with their two channel dims swapped; the output's
 * window of that full result starts at the forward convolution's padding
 * before, and zeros stand past its end.  The work is stride^k times what a
 * scatter would do, on the convolution kernels. */
#include "runtime/iface.h"
#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/shape.h"

/* k = 1, 2 or 3 spatial dims: the names of dims 1..k of the input, one by
 * one and as a list. */
static const char *const spatial_names[3][3] = { { "width", "", "" },
                                                 { "height", "width", "" },
                                                 { "depth", "height", "width" } };
static const char *const spatial_list[3] = { "width", "height, width", "depth, height, width" };

/* x [n, d_1 .. d_k, c] (dims = d_1 .. d_k, c, all known) with s_i - 1
 * zeros between neighbours along each d_i: each element of
 * [n, d_1, 1, .., d_k, 1, c] padded to [n, d_1, s_1, .., d_k, s_k, c],
 * then the zeros after the last element cut. */
static weft_value *spread(weft_ctx *cx, weft_value *x, int k, const int64_t *dims,
                          const int64_t *s)
{
    bool any = false;
    for (int i = 0; i < k; i++)
        any = any || s[i] != 1;
    if (!any)
        return x;
    int64_t split[WEFT_MAX_RANK], joined[WEFT_MAX_RANK], end[WEFT_MAX_RANK];
    int64_t pads[WEFT_MAX_RANK][2] = { { 0, 0 } };
    split[0] = joined[0] = -1;
    end[0] = end[k + 1] = WEFT_END;
    for (int i = 0; i < k; i++) {
        split[1 + 2 * i] = dims[i];
        split[2 + 2 * i] = 1;
        pads[2 + 2 * i][1] = s[i] - 1;
        joined[1 + i] = dims[i] * s[i];
        end[1 + i] = (dims[i] - 1) * s[i] + 1;
    }
    split[2 * k + 1] = joined[k + 1] = dims[k];
    weft_value *fine = weft_reshape(cx, x, 2 * k + 2, split);
    weft_value *padded = weft_pad(cx, fine, (const int64_t(*)[2])pads, 0.0);
    weft_value *flat = weft_reshape(cx, padded, k + 2, joined);
    return weft_slice(cx, flat, NULL, end, NULL);
}

/* The input [b, spatial.., c] and filters [spatial.., out, in] with every
 * dim but the batch known, in the input's channels; else WEFT_ESHAPE. */
static bool check_shapes(weft_ctx *cx, const char *fn, int k, const weft_spec *xs,
                         const weft_spec *fs)
{
    char sx[WEFT__SPEC_STR_MAX], sf[WEFT__SPEC_STR_MAX];
    bool known = xs->rank == k + 2 && fs->rank == k + 2;
    for (int d = 1; known && d < k + 2; d++)
        known = xs->dims[d] >= 0 && fs->dims[d - 1] >= 0;
    if (!known) {
        weft__ctx_fail(cx, WEFT_ESHAPE, "%s: the input %s and the filters %s are not of rank %d "
                       "with %s and channels known while tracing", fn,
                       weft__spec_str(xs, sx, sizeof sx), weft__spec_str(fs, sf, sizeof sf), k + 2,
                       spatial_list[k - 1]);
        return false;
    }
    bool empty = false;
    for (int d = 0; d < k; d++)
        empty = empty || fs->dims[d] == 0;
    if (fs->dims[k + 1] != xs->dims[k + 1] || empty) {
        weft__ctx_fail(cx, WEFT_ESHAPE, "%s: the filters %s do not take the %lld channels of the "
                       "input %s (filters: %s, out, in)", fn, weft__spec_str(fs, sf, sizeof sf),
                       (long long)xs->dims[k + 1], weft__spec_str(xs, sx, sizeof sx),
                       spatial_list[k - 1]);
        return false;
    }
    return true;
}

/* The transposed convolution of k = 1, 2 or 3 spatial dims (see the top). */
static weft_value *conv_transpose(weft_ctx *cx, const char *fn, int k, weft_value *input,
                                  weft_value *filters, const int64_t *output, const int64_t *strides,
                                  weft_padding padding, const int64_t *dilations)
{
    weft_value *in[2] = { input, filters };
    int64_t s[3], dil[3];
    if (!weft__op_enter(cx, fn, in, 2) || !weft__ops_padding_ok(cx, fn, padding) ||
        !weft__ops_take_sizes(cx, fn, "strides", strides, k, s) ||
        !weft__ops_take_sizes(cx, fn, "dilations", dilations, k, dil))
        return NULL;
    const weft_spec *xs = weft__value_spec(input), *fs = weft__value_spec(filters);
    if (!check_shapes(cx, fn, k, xs, fs))
        return NULL;
    /* Per spatial dim: the dilated window's span, the output size, and the
     * forward convolution's padding before (cut), which must take the
     * output back to the input's size. */
    int64_t out[3], cut[3], span[3];
    for (int d = 0; d < k; d++) {
        int64_t size = xs->dims[1 + d], win = fs->dims[d];
        span[d] = (win - 1) * dil[d] + 1;
        out[d] = output ? output[d]
                 : padding == WEFT_PADDING_SAME ? size * s[d] : (size - 1) * s[d] + span[d];
        if (out[d] < 0 ||
            weft__conv_out_dim((int)padding, out[d], win, s[d], dil[d], &cut[d]) != size)
            return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: an output %s of %lld does not give the "
                                  "input's %lld under conv%dd with this window, stride and "
                                  "padding", fn, spatial_names[k - 1][d], (long long)out[d],
                                  (long long)size, k);
    }
    weft_value *x = spread(cx, input, k, &xs->dims[1], s);
    int64_t pads[WEFT_MAX_RANK][2] = { { 0, 0 } };
    for (int d = 0; d < k; d++)
        pads[1 + d][0] = pads[1 + d][1] = span[d] - 1;
    x = weft_pad(cx, x, (const int64_t(*)[2])pads, 0.0);
    weft_value *f = filters;
    int perm[WEFT_MAX_RANK];
    for (int d = 0; d < k; d++) {
        f = weft_reverse(cx, f, d);
        perm[d] = d;
    }
    perm[k] = k + 1;
    perm[k + 1] = k;
    f = weft_transpose(cx, f, perm);
    weft_value *full;
    if (k == 1) {
        full = weft_conv1d(cx, x, f, 1, WEFT_PADDING_VALID, dil[0]);
    } else if (k == 2) {
        weft__node n = { .op = WEFT__OP_CONV2D };
        n.attr.conv.padding = WEFT_PADDING_VALID;
        n.attr.conv.stride[0] = n.attr.conv.stride[1] = 1;
        n.attr.conv.dilation[0] = dil[0];
        n.attr.conv.dilation[1] = dil[1];
        weft_value *pair[2] = { x, f };
        full = weft__ops_finish(cx, &n, pair, 2);
    } else {
        full = weft_conv3d(cx, x, f, NULL, WEFT_PADDING_VALID, dil);
    }
    if (!full)
        return NULL;
    /* The output's window of the full result, [b, (in - 1) s + span, ..],
     * then zeros where it runs past the end. */
    int64_t begin[WEFT_MAX_RANK] = { 0 }, end[WEFT_MAX_RANK], tail[WEFT_MAX_RANK][2] = { { 0, 0 } };
    bool short_end = false;
    end[0] = end[k + 1] = WEFT_END;
    for (int d = 0; d < k; d++) {
        int64_t len = (xs->dims[1 + d] - 1) * s[d] + span[d];
        begin[1 + d] = cut[d];
        end[1 + d] = cut[d] + out[d];
        int64_t missing = cut[d] + out[d] - len;
        tail[1 + d][1] = missing > 0 ? missing : 0;
        short_end = short_end || missing > 0;
    }
    weft_value *y = weft_slice(cx, full, begin, end, NULL);
    if (y && short_end)
        y = weft_pad(cx, y, (const int64_t(*)[2])tail, 0.0);
    return y;
}

weft_value *weft_conv1d_transpose(weft_ctx *cx, weft_value *input, weft_value *filters,
                                  int64_t output_width, int64_t stride, weft_padding padding,
                                  int64_t dilation)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(conv_transpose(cx, "weft_conv1d_transpose", 1, input, filters,
                                     output_width < 0 ? NULL : &output_width, &stride, padding,
                                     &dilation));
}

weft_value *weft_conv2d_transpose(weft_ctx *cx, weft_value *input, weft_value *filters,
                                  const int64_t *output_hw, const int64_t *strides,
                                  weft_padding padding)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(conv_transpose(cx, "weft_conv2d_transpose", 2, input, filters, output_hw,
                                     strides, padding, NULL));
}

weft_value *weft_conv2d_transpose_ex(weft_ctx *cx, weft_value *input, weft_value *filters,
                                     const int64_t *output_hw, const int64_t *strides,
                                     weft_padding padding, const int64_t *dilations)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(conv_transpose(cx, "weft_conv2d_transpose_ex", 2, input, filters, output_hw,
                                     strides, padding, dilations));
}

weft_value *weft_conv3d_transpose(weft_ctx *cx, weft_value *input, weft_value *filters,
                                  const int64_t *output_dhw, const int64_t *strides,
                                  weft_padding padding, const int64_t *dilations)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(conv_transpose(cx, "weft_conv3d_transpose", 3, input, filters, output_dhw,
                                     strides, padding, dilations));
}
