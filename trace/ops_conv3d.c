/* conv3d, max_pool3d and avg_pool3d on NDHWC data, as compositions of the
 * 2-D kernels: the depth is folded into the batch for the height and
 * width, and the depth window is a short sum (max, mean) of strided
 * depth slices.
 *
 * conv3d: for each filter depth tap k, the input's depth slice starting
 * at k * dilation with the depth stride, folded to [b * out_d, h, w, c],
 * goes through weft_conv2d with the filter's tap k; the taps' results are
 * added in tap order.  So the work is conv2d's (tiles on the BLAS) and a
 * few elementwise adds.  The pools take the 2-D pool over height and
 * width first, then combine the depth taps (a window is a product of its
 * per-dim ranges, so the 3-D max or mean is the same). */
#include <math.h>
#include <stdint.h>

#include "runtime/iface.h"
#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

static const weft_spec *spec_of(const weft_value *v)
{
    return weft__value_spec(v);
}

/* v: int64_t[3] (NULL: 1s) into out. */
static bool take_triple(weft_ctx *cx, const char *fn, const char *what, const int64_t *v,
                        int64_t out[3])
{
    return weft__ops_take_sizes(cx, fn, what, v, 3, out);
}

/* input is NDHWC with d, h, w and c known while tracing (the batch may
 * not be). */
static bool ndhwc(weft_ctx *cx, const char *fn, const weft_value *input)
{
    const weft_spec *s = spec_of(input);
    bool ok = s->rank == 5;
    for (int d = 1; ok && d < 5; d++)
        ok = s->dims[d] >= 0;
    if (!ok) {
        char ss[WEFT__SPEC_STR_MAX];
        weft__ctx_fail(cx, WEFT_ESHAPE, "%s: the input %s is not [batch, depth, height, width, "
                       "channels] with all but the batch known while tracing", fn,
                       weft__spec_str(s, ss, sizeof ss));
    }
    return ok;
}

/* TensorFlow's placement along dim `what` (depth, height, width): the
 * output count and the padding before and after; false (WEFT_ESHAPE) when
 * VALID has no window. */
static bool dim_plan(weft_ctx *cx, const char *fn, const char *what, int64_t in, int64_t window,
                     int64_t stride, int64_t dilation, weft_padding padding, int64_t *out,
                     int64_t *before, int64_t *after)
{
    int64_t span = (window - 1) * dilation + 1;
    if (padding == WEFT_PADDING_VALID) {
        *before = *after = 0;
        if (in < span) {
            weft__ctx_fail(cx, WEFT_ESHAPE, "%s: the %s %lld is smaller than the window's "
                           "span %lld (VALID)", fn, what, (long long)in, (long long)span);
            return false;
        }
        *out = (in - span) / stride + 1;
        return true;
    }
    *out = (in + stride - 1) / stride;
    int64_t total = (*out - 1) * stride + span - in;
    total = total > 0 ? total : 0;
    *before = total / 2;
    *after = total - *before;
    return true;
}

/* x [b, d, ...] padded along the depth by value, then the depth slice
 * start, start + stride, ... (count of them). */
static weft_value *depth_taps(weft_ctx *cx, weft_value *x, int64_t before, int64_t after,
                              double value, int64_t start, int64_t stride, int64_t count)
{
    if (before || after) {
        const int64_t pads[5][2] = { { 0, 0 }, { before, after }, { 0, 0 }, { 0, 0 }, { 0, 0 } };
        x = weft_pad(cx, x, pads, value);
    }
    const int64_t begin[5] = { 0, start, 0, 0, 0 };
    const int64_t end[5] = { WEFT_END, start + (count - 1) * stride + 1, WEFT_END, WEFT_END,
                             WEFT_END };
    const int64_t step[5] = { 1, stride, 1, 1, 1 };
    return weft_slice(cx, x, begin, end, step);
}

/* Each of the three dims of an NDHWC input (in[0..3)) placed for window
 * win[i] (dilated by dil[i]); the depth's plan into *out_d, *before,
 * *after (height and width are the 2-D op's, checked here so that an
 * error names the 3-D op). */
static bool plan(weft_ctx *cx, const char *fn, const int64_t *in, const int64_t *win,
                 const int64_t *st, const int64_t *dil, weft_padding padding, int64_t *out_d,
                 int64_t *before, int64_t *after)
{
    static const char *const what[3] = { "depth", "height", "width" };
    if (!weft__ops_padding_ok(cx, fn, padding))
        return false;
    for (int i = 2; i >= 0; i--)
        if (!dim_plan(cx, fn, what[i], in[i], win[i], st[i], dil ? dil[i] : 1, padding, out_d,
                      before, after))
            return false;
    return true;
}

/* [b, n, h, w, c] folded to [b n, h, w, c], and back. */
static weft_value *fold(weft_ctx *cx, weft_value *x)
{
    if (!x)
        return NULL;
    const weft_spec *s = spec_of(x);
    const int64_t dims[4] = { -1, s->dims[2], s->dims[3], s->dims[4] };
    return weft_reshape(cx, x, 4, dims);
}

static weft_value *unfold(weft_ctx *cx, weft_value *y, int64_t n)
{
    if (!y)
        return NULL;
    const weft_spec *s = spec_of(y);
    const int64_t dims[5] = { -1, n, s->dims[1], s->dims[2], s->dims[3] };
    return weft_reshape(cx, y, 5, dims);
}

weft_value *weft_conv3d(weft_ctx *cx, weft_value *input, weft_value *filters,
                        const int64_t *strides, weft_padding padding, const int64_t *dilations)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_conv3d";
    weft_value *in[2] = { input, filters };
    int64_t st[3], dil[3];
    if (!weft__op_enter(cx, fn, in, 2) || !take_triple(cx, fn, "strides", strides, st) ||
        !take_triple(cx, fn, "dilations", dilations, dil) || !ndhwc(cx, fn, input))
        return NULL;
    const weft_spec *xs = spec_of(input), *fs = spec_of(filters);
    bool ok = fs->rank == 5;
    for (int d = 0; ok && d < 5; d++)
        ok = fs->dims[d] >= 0;
    if (!ok || fs->dims[3] != xs->dims[4]) {
        char a[WEFT__SPEC_STR_MAX], b[WEFT__SPEC_STR_MAX];
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: the filters %s are not [depth, height, width, "
                              "in, out channels] (known while tracing) with the input %s's "
                              "channels", fn, weft__spec_str(fs, a, sizeof a),
                              weft__spec_str(xs, b, sizeof b));
    }
    int64_t kd = fs->dims[0], out_d, before, after;
    if (kd == 0 || fs->dims[1] == 0 || fs->dims[2] == 0)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: the filters have an empty window", fn);
    if (!plan(cx, fn, xs->dims + 1, fs->dims, st, dil, padding, &out_d, &before, &after))
        return NULL;
    const int64_t tap_dims[4] = { fs->dims[1], fs->dims[2], fs->dims[3], fs->dims[4] };
    weft_value *sum = NULL;
    for (int64_t k = 0; k < kd; k++) {
        weft_value *x = fold(cx, depth_taps(cx, input, before, after, 0, k * dil[0], st[0], out_d));
        const int64_t fb[5] = { k, 0, 0, 0, 0 }, fe[5] = { k + 1, WEFT_END, WEFT_END, WEFT_END,
                                                           WEFT_END };
        weft_value *f = weft_reshape(cx, weft_slice(cx, filters, fb, fe, NULL), 4, tap_dims);
        if (!x || !f)
            return NULL;
        weft_value *y = weft_conv2d(cx, x, f, st + 1, padding, dil + 1);
        sum = k == 0 ? y : weft__op_binary(cx, WEFT__OP_ADD, fn, sum, y);
        if (!sum)
            return NULL;
    }
    return WEFT__KEEP(unfold(cx, sum, out_d));
}

/* The 3-D pools: the 2-D pool over height and width, then the depth taps
 * combined (max, or a sum divided by each window's count of real depth
 * elements). */
static weft_value *pool3d(weft_ctx *cx, const char *fn, bool is_max, weft_value *input,
                          const int64_t *ksize, const int64_t *strides, weft_padding padding)
{
    int64_t k[3], st[3];
    if (!weft__op_enter(cx, fn, &input, 1) || !take_triple(cx, fn, "ksize", ksize, k) ||
        !take_triple(cx, fn, "strides", strides, st) || !ndhwc(cx, fn, input))
        return NULL;
    const weft_spec *xs = spec_of(input);
    int64_t d = xs->dims[1], out_d, before, after;
    if (!plan(cx, fn, xs->dims + 1, k, st, NULL, padding, &out_d, &before, &after))
        return NULL;
    weft_value *flat = fold(cx, input);
    weft_value *p2 = is_max ? weft_max_pool2d(cx, flat, k + 1, st + 1, padding)
                            : weft_avg_pool2d(cx, flat, k + 1, st + 1, padding);
    weft_value *planes = unfold(cx, p2, d);
    if (!planes)
        return NULL;
    /* Max pads with the dtype's lowest value, which never wins; a mean
     * pads with 0 and divides by the real elements of each window. */
    weft_dtype dt = spec_of(planes)->dtype;
    double pad = !is_max ? 0
                 : dt == WEFT_I32 ? (double)INT32_MIN
                 : dt == WEFT_I64 ? (double)INT64_MIN
                                  : -INFINITY;
    weft_value *acc = NULL;
    for (int64_t t = 0; t < k[0]; t++) {
        weft_value *tap = depth_taps(cx, planes, before, after, pad, t, st[0], out_d);
        acc = t == 0 ? tap
                     : weft__op_binary(cx, is_max ? WEFT__OP_MAXIMUM : WEFT__OP_ADD, fn, acc, tap);
        if (!acc)
            return NULL;
    }
    if (is_max)
        return acc;
    /* The number of real depth elements in output depth o's window. */
    double *count = weft__malloc(sizeof *count * (size_t)(out_d ? out_d : 1));
    if (!count)
        return weft__ctx_fail(cx, WEFT_ENOMEM, "%s: out of memory", fn);
    for (int64_t o = 0; o < out_d; o++) {
        int64_t lo = o * st[0] - before, hi = lo + k[0];
        count[o] = (double)((hi < d ? hi : d) - (lo > 0 ? lo : 0));
    }
    weft_value *cv = weft__ops_constant(cx, fn, WEFT_F64, 5, (const int64_t[]){ 1, out_d, 1, 1, 1 },
                                        count, dt);
    weft__free(count);
    return weft__op_binary(cx, WEFT__OP_DIV, fn, acc, cv);
}

weft_value *weft_max_pool3d(weft_ctx *cx, weft_value *input, const int64_t *ksize,
                            const int64_t *strides, weft_padding padding)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(pool3d(cx, "weft_max_pool3d", true, input, ksize, strides, padding));
}

weft_value *weft_avg_pool3d(weft_ctx *cx, weft_value *input, const int64_t *ksize,
                            const int64_t *strides, weft_padding padding)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(pool3d(cx, "weft_avg_pool3d", false, input, ksize, strides, padding));
}
