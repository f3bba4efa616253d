/* Image ops of include/weft/ops.h on NHWC data: space_to_depth,
 * depth_to_space, extract_patches (and extract_volume_patches on NDHWC),
 * rgb_to_grayscale, per_image_standardization, adjust_contrast,
 * image_gradients, total_variation, psnr, sobel_edges and ssim
 * (depthwise convolutions with constant filters); the colour ops are
 * trace/ops_color.c's.  Each is a composition of other ops (as
 * ops_linalg.c's): it checks its inputs first, so that an error names the
 * public op, and builds its elementwise steps through weft__op_unary /
 * weft__op_binary with the public name. */
#include <math.h>

#include "runtime/iface.h"
#include "trace/control.h"
#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/shape.h"
#include "trace/tensor_impl.h"

static const weft_spec *spec_of(const weft_value *v)
{
    return weft__value_spec(v);
}

bool weft__ops_float_images(weft_ctx *cx, const char *fn, const weft_value *a)
{
    weft_dtype dt = spec_of(a)->dtype;
    if (dt == WEFT_F32 || dt == WEFT_F64)
        return true;
    char s[WEFT__SPEC_STR_MAX];
    weft__ctx_fail(cx, WEFT_EDTYPE, "%s: the images %s are not f32 or f64 (weft_cast them "
                   "first)", fn, weft__spec_str(spec_of(a), s, sizeof s));
    return false;
}

/* a has a rank in [lo, hi] (known while tracing) and its last `known`
 * dims are known. */
static bool known_rank(weft_ctx *cx, const char *fn, const weft_value *a, int lo, int hi,
                       int known, const char *what)
{
    const weft_spec *s = spec_of(a);
    bool ok = s->rank != WEFT_RANK_ANY && s->rank >= lo && s->rank <= hi;
    for (int d = ok ? s->rank - known : 0; ok && d < s->rank; d++)
        ok = s->dims[d] >= 0;
    if (ok)
        return true;
    char ss[WEFT__SPEC_STR_MAX];
    weft__ctx_fail(cx, WEFT_ESHAPE, "%s: %s is not %s", fn, weft__spec_str(s, ss, sizeof ss),
                   what);
    return false;
}

/* ---- Moving pixels into channels and back ------------------------------ */

static bool block_ok(weft_ctx *cx, const char *fn, int64_t block_size)
{
    if (block_size >= 2)
        return true;
    weft__ctx_fail(cx, WEFT_EINVAL, "%s: block_size %lld is below 2", fn, (long long)block_size);
    return false;
}

/* [b, h, w, c] to [b, h / s, w / s, s * s * c]: each s x s block of
 * pixels becomes one pixel whose channels are the block's pixels in row
 * order, each pixel's channels together (TensorFlow's layout). */
weft_value *weft_space_to_depth(weft_ctx *cx, weft_value *x, int64_t block_size)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_space_to_depth";
    if (!weft__op_enter(cx, fn, &x, 1) || !block_ok(cx, fn, block_size) ||
        !known_rank(cx, fn, x, 4, 4, 3, "NHWC data (rank 4, h, w and c known while tracing)"))
        return NULL;
    const weft_spec *s = spec_of(x);
    int64_t h = s->dims[1], w = s->dims[2], c = s->dims[3], bs = block_size;
    if (h % bs || w % bs) {
        char ss[WEFT__SPEC_STR_MAX];
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: the height and width of %s are not "
                              "multiples of block_size %lld", fn,
                              weft__spec_str(s, ss, sizeof ss), (long long)bs);
    }
    const int64_t split[6] = { -1, h / bs, bs, w / bs, bs, c };
    static const int perm[6] = { 0, 1, 3, 2, 4, 5 };
    const int64_t joined[4] = { -1, h / bs, w / bs, bs * bs * c };
    return WEFT__KEEP(weft_reshape(cx, weft_transpose(cx, weft_reshape(cx, x, 6, split), perm), 4,
                                   joined));
}

/* The inverse: [b, h, w, s * s * c] to [b, h * s, w * s, c]. */
weft_value *weft_depth_to_space(weft_ctx *cx, weft_value *x, int64_t block_size)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_depth_to_space";
    if (!weft__op_enter(cx, fn, &x, 1) || !block_ok(cx, fn, block_size) ||
        !known_rank(cx, fn, x, 4, 4, 3, "NHWC data (rank 4, h, w and c known while tracing)"))
        return NULL;
    const weft_spec *s = spec_of(x);
    int64_t h = s->dims[1], w = s->dims[2], c = s->dims[3], bs = block_size;
    if (c % (bs * bs)) {
        char ss[WEFT__SPEC_STR_MAX];
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: the channels of %s are not a multiple of "
                              "block_size^2 = %lld", fn, weft__spec_str(s, ss, sizeof ss),
                              (long long)(bs * bs));
    }
    const int64_t split[6] = { -1, h, w, bs, bs, c / (bs * bs) };
    static const int perm[6] = { 0, 1, 3, 2, 4, 5 };
    const int64_t joined[4] = { -1, h * bs, w * bs, c / (bs * bs) };
    return WEFT__KEEP(weft_reshape(cx, weft_transpose(cx, weft_reshape(cx, x, 6, split), perm), 4,
                                   joined));
}

/* One strided slice of the (zero-padded) input per window tap, [b, o..., c]
 * each, joined along the channels in tap order (the last spatial dim's
 * taps fastest), which is TensorFlow's patch layout for extract_patches
 * [(ky kw + kx) c + ch] and extract_volume_patches alike.  The input's
 * rank is nsp + 2, its spatial dims 1..nsp; k, st and rt have nsp
 * entries each. */
static weft_value *extract_windows(weft_ctx *cx, const char *fn, weft_value *x, int nsp,
                                   const int64_t *k, const int64_t *st, const int64_t *rt,
                                   weft_padding padding)
{
    if (!weft__ops_padding_ok(cx, fn, padding))
        return NULL;
    static const char *const dim_names[3][3] = { { "width" }, { "height", "width" },
                                                 { "depth", "height", "width" } };
    const weft_spec *s = spec_of(x);
    int64_t out[3], pads[5][2] = { { 0, 0 } };
    bool padded = false;
    for (int d = 0; d < nsp; d++) {
        int64_t in = s->dims[1 + d], before;
        out[d] = weft__conv_out_dim(padding, in, k[d], st[d], rt[d], &before);
        if (out[d] < 0) {
            char ss[WEFT__SPEC_STR_MAX];
            return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: the %s of %s is smaller than the "
                                  "window's span (VALID)", fn, dim_names[nsp - 1][d],
                                  weft__spec_str(s, ss, sizeof ss));
        }
        int64_t need = out[d] > 0 ? (out[d] - 1) * st[d] + (k[d] - 1) * rt[d] + 1 : 0;
        pads[1 + d][0] = before;
        pads[1 + d][1] = need - in - before > 0 ? need - in - before : 0;
        padded |= pads[1 + d][0] || pads[1 + d][1];
    }
    if (padded)
        x = weft_pad(cx, x, (const int64_t(*)[2])pads, 0);
    int64_t taps = 1;
    for (int d = 0; d < nsp; d++)
        taps *= k[d];
    weft_value **parts = weft__malloc(sizeof *parts * (size_t)taps);
    if (!parts)
        return weft__ctx_fail(cx, WEFT_ENOMEM, "%s: out of memory", fn);
    for (int64_t t = 0; t < taps; t++) {
        int64_t begin[5] = { 0 }, end[5] = { 0 }, step[5] = { 1, 1, 1, 1, 1 };
        end[0] = end[nsp + 1] = WEFT_END;
        /* An empty output dim (SAME on an empty input) slices nothing. */
        int64_t rest = t;
        for (int d = nsp - 1; d >= 0; d--) {
            int64_t tap = rest % k[d];
            rest /= k[d];
            if (out[d] > 0) {
                begin[1 + d] = tap * rt[d];
                end[1 + d] = begin[1 + d] + (out[d] - 1) * st[d] + 1;
                step[1 + d] = st[d];
            }
        }
        parts[t] = weft_slice(cx, x, begin, end, step);
    }
    weft_value *r = weft_concat(cx, parts, (size_t)taps, nsp + 1);
    weft__free(parts);
    return r;
}

/* tf.image.extract_patches: NHWC windows with rates. */
weft_value *weft_extract_patches(weft_ctx *cx, weft_value *images, const int64_t *sizes,
                                 const int64_t *strides, const int64_t *rates,
                                 weft_padding padding)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_extract_patches";
    int64_t k[2], st[2], rt[2];
    if (!weft__op_enter(cx, fn, &images, 1) ||
        !weft__ops_take_sizes(cx, fn, "sizes", sizes, 2, k) ||
        !weft__ops_take_sizes(cx, fn, "strides", strides, 2, st) ||
        !weft__ops_take_sizes(cx, fn, "rates", rates, 2, rt) ||
        !known_rank(cx, fn, images, 4, 4, 3, "NHWC data (rank 4, h, w and c known while tracing)"))
        return NULL;
    return WEFT__KEEP(extract_windows(cx, fn, images, 2, k, st, rt, padding));
}

/* tf.extract_volume_patches: NDHWC windows, no rates. */
weft_value *weft_extract_volume_patches(weft_ctx *cx, weft_value *input, const int64_t *sizes,
                                        const int64_t *strides, weft_padding padding)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_extract_volume_patches";
    static const int64_t ones[3] = { 1, 1, 1 };
    int64_t k[3], st[3];
    if (!weft__op_enter(cx, fn, &input, 1) ||
        !weft__ops_take_sizes(cx, fn, "sizes", sizes, 3, k) ||
        !weft__ops_take_sizes(cx, fn, "strides", strides, 3, st) ||
        !known_rank(cx, fn, input, 5, 5, 4,
                    "NDHWC data (rank 5, d, h, w and c known while tracing)"))
        return NULL;
    return WEFT__KEEP(extract_windows(cx, fn, input, 3, k, st, ones, padding));
}

/* ---- Colour and contrast ------------------------------------------------ */

/* The one channel three times, as r, g and b. */
weft_value *weft_grayscale_to_rgb(weft_ctx *cx, weft_value *images)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_grayscale_to_rgb";
    if (!weft__op_enter(cx, fn, &images, 1) ||
        !known_rank(cx, fn, images, 1, WEFT_MAX_RANK, 1, "images whose last dim is 1"))
        return NULL;
    const weft_spec *s = spec_of(images);
    if (s->dims[s->rank - 1] != 1) {
        char ss[WEFT__SPEC_STR_MAX];
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: %s does not have 1 channel in its last dim",
                              fn, weft__spec_str(s, ss, sizeof ss));
    }
    weft_value *same[3] = { images, images, images };
    return WEFT__KEEP(weft_concat(cx, same, 3, -1));
}

/* TensorFlow's weights, added in its order: 0.2989 r + 0.5870 g + 0.1140 b. */
weft_value *weft_rgb_to_grayscale(weft_ctx *cx, weft_value *images)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_rgb_to_grayscale";
    if (!weft__op_enter(cx, fn, &images, 1) || !weft__ops_float_images(cx, fn, images) ||
        !known_rank(cx, fn, images, 1, WEFT_MAX_RANK, 1, "images whose last dim is 3"))
        return NULL;
    const weft_spec *s = spec_of(images);
    if (s->dims[s->rank - 1] != 3) {
        char ss[WEFT__SPEC_STR_MAX];
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: %s does not have 3 channels in its last dim",
                              fn, weft__spec_str(s, ss, sizeof ss));
    }
    weft_value *rgb[3];
    if (weft_split(cx, images, 3, NULL, -1, rgb) != 0)
        return NULL;
    static const double weights[3] = { 0.2989, 0.5870, 0.1140 };
    weft_value *sum = NULL;
    for (int k = 0; k < 3; k++) {
        weft_value *term =
            weft__op_binary(cx, WEFT__OP_MUL, fn, rgb[k], weft_const_f64(cx, weights[k]));
        sum = k == 0 ? term : weft__op_binary(cx, WEFT__OP_ADD, fn, sum, term);
    }
    return WEFT__KEEP(sum);
}

/* (x - mean) / max(stddev, 1 / sqrt(n)) over each image's last three
 * dims (n = h w c). */
weft_value *weft_per_image_standardization(weft_ctx *cx, weft_value *images)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_per_image_standardization";
    if (!weft__op_enter(cx, fn, &images, 1) || !weft__ops_float_images(cx, fn, images) ||
        !known_rank(cx, fn, images, 3, WEFT_MAX_RANK, 3,
                    "images (rank 3 or more, the last three dims known while tracing)"))
        return NULL;
    const weft_spec *s = spec_of(images);
    int r = s->rank;
    double pixels = (double)s->dims[r - 3] * (double)s->dims[r - 2] * (double)s->dims[r - 1];
    const int axes[3] = { r - 3, r - 2, r - 1 };
    weft_value *mean = weft_reduce(cx, WEFT_R_MEAN, images, axes, 3, true);
    weft_value *sd = weft_reduce(cx, WEFT_R_STD, images, axes, 3, true);
    weft_value *floor_sd = weft_const_f64(cx, 1.0 / sqrt(pixels));
    weft_value *adjusted = weft__op_binary(cx, WEFT__OP_MAXIMUM, fn, sd, floor_sd);
    weft_value *centred = weft__op_binary(cx, WEFT__OP_SUB, fn, images, mean);
    return WEFT__KEEP(weft__op_binary(cx, WEFT__OP_DIV, fn, centred, adjusted));
}

/* (x - mean) * factor + mean, the mean of each channel over an image's
 * height and width (the two dims before the last). */
weft_value *weft_adjust_contrast(weft_ctx *cx, weft_value *images, double contrast_factor)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_adjust_contrast";
    if (!weft__op_enter(cx, fn, &images, 1) || !weft__ops_contrast_images(cx, fn, images))
        return NULL;
    if (!isfinite(contrast_factor))
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: contrast_factor %g is not finite", fn,
                              contrast_factor);
    return WEFT__KEEP(weft__ops_contrast(cx, fn, images, weft_const_f64(cx, contrast_factor)));
}

weft_value *weft__ops_contrast(weft_ctx *cx, const char *fn, weft_value *images,
                               weft_value *factor)
{
    WEFT__SCOPE(cx);
    int r = spec_of(images)->rank;
    const int axes[2] = { r - 3, r - 2 };
    weft_value *mean = weft_reduce(cx, WEFT_R_MEAN, images, axes, 2, true);
    weft_value *centred = weft__op_binary(cx, WEFT__OP_SUB, fn, images, mean);
    weft_value *scaled = weft__op_binary(cx, WEFT__OP_MUL, fn, centred, factor);
    return WEFT__KEEP(weft__op_binary(cx, WEFT__OP_ADD, fn, scaled, mean));
}

bool weft__ops_contrast_images(weft_ctx *cx, const char *fn, weft_value *images)
{
    return weft__ops_float_images(cx, fn, images) &&
           known_rank(cx, fn, images, 3, WEFT_MAX_RANK, 0, "images (rank 3 or more)");
}

/* ---- Differences between neighbours ------------------------------------ */

/* x[.., 1:, ..] - x[.., :-1, ..] along axis of a rank-r tensor. */
static weft_value *neighbour_diff(weft_ctx *cx, const char *fn, weft_value *x, int r, int axis)
{
    int64_t lo_begin[WEFT_MAX_RANK] = { 0 }, hi_end[WEFT_MAX_RANK];
    for (int d = 0; d < r; d++)
        hi_end[d] = WEFT_END;
    lo_begin[axis] = 1;
    hi_end[axis] = -1;
    weft_value *next = weft_slice(cx, x, lo_begin, NULL, NULL);
    weft_value *here = weft_slice(cx, x, NULL, hi_end, NULL);
    return weft__op_binary(cx, WEFT__OP_SUB, fn, next, here);
}

/* tf.image.image_gradients: outs[0] dy and outs[1] dx of [b, h, w, c],
 * each x[next] - x[here] with a row (column) of zeros at the end. */
int weft_image_gradients(weft_ctx *cx, weft_value *images, weft_value **outs)
{
    WEFT__SCOPE_OUTS(cx, outs, 2);
    static const char fn[] = "weft_image_gradients";
    int rc = weft__ctx_enter_int(cx, fn, &images, 1, outs, 2);
    if (rc != 0)
        return rc;
    if (!known_rank(cx, fn, images, 4, 4, 0, "NHWC data (rank 4)"))
        return weft_ctx_status(cx);
    weft_value *g[2];
    for (int k = 0; k < 2; k++) {
        static const int64_t pads[2][4][2] = { { { 0, 0 }, { 0, 1 }, { 0, 0 }, { 0, 0 } },
                                               { { 0, 0 }, { 0, 0 }, { 0, 1 }, { 0, 0 } } };
        g[k] = weft_pad(cx, neighbour_diff(cx, fn, images, 4, 1 + k), pads[k], 0);
    }
    if (!g[0] || !g[1])
        return weft_ctx_status(cx);
    outs[0] = g[0];
    outs[1] = g[1];
    return 0;
}

/* tf.image.total_variation: the sum of |x[next] - x[here]| over height and
 * width, per image ([b, h, w, c] to [b]; [h, w, c] to a scalar). */
weft_value *weft_total_variation(weft_ctx *cx, weft_value *images)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_total_variation";
    if (!weft__op_enter(cx, fn, &images, 1) ||
        !known_rank(cx, fn, images, 3, 4, 0, "an image or a batch (rank 3 or 4)"))
        return NULL;
    int r = spec_of(images)->rank;
    const int axes[3] = { r - 3, r - 2, r - 1 };
    weft_value *sums[2];
    for (int k = 0; k < 2; k++) {
        weft_value *d = neighbour_diff(cx, fn, images, r, r - 3 + k);
        sums[k] = weft_reduce(cx, WEFT_R_SUM, weft__op_unary(cx, WEFT__OP_ABS, fn, d), axes, 3,
                              false);
    }
    return WEFT__KEEP(weft__op_binary(cx, WEFT__OP_ADD, fn, sums[0], sums[1]));
}

/* tf.image.psnr: 20 log10(max_val) - 10 log10(mse), the mean squared
 * difference over each image's last three dims. */
weft_value *weft_psnr(weft_ctx *cx, weft_value *a, weft_value *b, double max_val)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_psnr";
    weft_value *in[2] = { a, b };
    if (!weft__op_enter(cx, fn, in, 2) || !weft__ops_float_images(cx, fn, a) || !weft__ops_float_images(cx, fn, b) ||
        !known_rank(cx, fn, a, 3, WEFT_MAX_RANK, 0, "images (rank 3 or more)"))
        return NULL;
    if (!(max_val > 0) || !isfinite(max_val))
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: max_val %g is not finite and > 0", fn,
                              max_val);
    int r = spec_of(a)->rank;
    const int axes[3] = { r - 3, r - 2, r - 1 };
    weft_value *d = weft__op_binary(cx, WEFT__OP_SUB, fn, a, b);
    weft_value *mse = weft_reduce(cx, WEFT_R_MEAN, weft__op_binary(cx, WEFT__OP_MUL, fn, d, d),
                                  axes, 3, false);
    weft_value *log_mse = weft__op_unary(cx, WEFT__OP_LOG, fn, mse);
    weft_value *db = weft__op_binary(cx, WEFT__OP_MUL, fn, log_mse,
                                     weft_const_f64(cx, 10.0 / log(10.0)));
    weft_value *peak = weft_const_f64(cx, 20.0 * log10(max_val));
    return WEFT__KEEP(weft__op_binary(cx, WEFT__OP_SUB, fn, peak, db));
}

/* ---- Filters: Sobel edges and SSIM ----------------------------------------- */

/* A constant depthwise filter [rows, cols, c, m] of dtype dt whose every
 * channel holds taps[(y cols + x) m + k]. */
static weft_value *tiled_filter(weft_ctx *cx, const char *fn, const double *taps, int64_t rows,
                                int64_t cols, int64_t c, int64_t m, weft_dtype dt)
{
    size_t count = (size_t)(rows * cols * c * m);
    double *v = weft__malloc(sizeof *v * (count ? count : 1));
    if (!v)
        return weft__ctx_fail(cx, WEFT_ENOMEM, "%s: out of memory", fn);
    for (int64_t yx = 0; yx < rows * cols; yx++)
        for (int64_t ch = 0; ch < c; ch++)
            for (int64_t k = 0; k < m; k++)
                v[(yx * c + ch) * m + k] = taps[yx * m + k];
    weft_value *f = weft__ops_constant(cx, fn, WEFT_F64, 4, (const int64_t[]){ rows, cols, c, m },
                                       v, dt);
    weft__free(v);
    return f;
}

weft_value *weft_sobel_edges(weft_ctx *cx, weft_value *images)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_sobel_edges";
    if (!weft__op_enter(cx, fn, &images, 1) || !weft__ops_float_images(cx, fn, images) ||
        !known_rank(cx, fn, images, 4, 4, 3, "NHWC data (rank 4, h, w and c known while tracing)"))
        return NULL;
    const weft_spec *s = spec_of(images);
    int64_t h = s->dims[1], w = s->dims[2], c = s->dims[3];
    if (h < 2 || w < 2) {
        char ss[WEFT__SPEC_STR_MAX];
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: the images %s are smaller than 2 x 2", fn,
                              weft__spec_str(s, ss, sizeof ss));
    }
    static const double vertical[9] = { -1, -2, -1, 0, 0, 0, 1, 2, 1 };
    static const double horizontal[9] = { -1, 0, 1, -2, 0, 2, -1, 0, 1 };
    double taps[9 * 2];   /* each tap's vertical weight, then its horizontal one */
    for (int i = 0; i < 9; i++) {
        taps[2 * i] = vertical[i];
        taps[2 * i + 1] = horizontal[i];
    }
    weft_value *filter = tiled_filter(cx, fn, taps, 3, 3, c, 2, s->dtype);
    /* One row and column on each side, by reflection (x[1] before, x[n - 2]
     * after). */
    const int64_t one[4][2] = { { 0, 0 }, { 1, 1 }, { 1, 1 }, { 0, 0 } };
    weft_value *padded = weft_pad_ex(cx, images, one, WEFT_PAD_REFLECT, 0.0);
    weft_value *edges =
        weft_depthwise_conv2d(cx, padded, filter, NULL, WEFT_PADDING_VALID, NULL);
    return WEFT__KEEP(weft_reshape(cx, edges, 5, (const int64_t[]){ -1, h, w, c, 2 }));
}

/* TensorFlow's _fspecial_gauss: exp(-(dy^2 + dx^2) / (2 sigma^2)) over a
 * size x size grid centred on its middle, normalized to sum 1 (as its
 * softmax), into taps (size^2). */
static void gauss_taps(int64_t size, double sigma, double *taps)
{
    double centre = (double)(size - 1) / 2, sum = 0;
    for (int64_t y = 0; y < size; y++)
        for (int64_t x = 0; x < size; x++) {
            double dy = (double)y - centre, dx = (double)x - centre;
            taps[y * size + x] = exp(-0.5 * (dy * dy + dx * dx) / (sigma * sigma));
            sum += taps[y * size + x];
        }
    for (int64_t i = 0; i < size * size; i++)
        taps[i] /= sum;
}

static bool ssim_args_ok(weft_ctx *cx, const char *fn, double max_val, int64_t filter_size,
                         double filter_sigma, double k1, double k2)
{
    if (!(max_val > 0) || !isfinite(max_val))
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: max_val %g is not finite and > 0", fn, max_val);
    else if (filter_size < 1 || filter_size > 1024)
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: filter_size %lld is not in 1..1024", fn,
                       (long long)filter_size);
    else if (!(filter_sigma > 0) || !isfinite(filter_sigma))
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: filter_sigma %g is not finite and > 0", fn,
                       filter_sigma);
    else if (!isfinite(k1) || !isfinite(k2))
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: k1 %g or k2 %g is not finite", fn, k1, k2);
    else
        return true;
    return false;
}

/* a and b have one shape (dims unknown while tracing match anything) of
 * rank 3 or 4, h, w and c known, h and w at least size. */
static bool ssim_shapes_ok(weft_ctx *cx, const char *fn, const weft_value *a,
                           const weft_value *b, int64_t size)
{
    if (!known_rank(cx, fn, a, 3, 4, 3, "an image or a batch (rank 3 or 4, h, w and c known "
                    "while tracing)"))
        return false;
    const weft_spec *sa = spec_of(a), *sb = spec_of(b);
    bool same = sb->rank == sa->rank;
    for (int d = 0; same && d < sa->rank; d++)
        same = sa->dims[d] == sb->dims[d] || sa->dims[d] < 0 || sb->dims[d] < 0;
    char s1[WEFT__SPEC_STR_MAX], s2[WEFT__SPEC_STR_MAX];
    if (!same) {
        weft__ctx_fail(cx, WEFT_ESHAPE, "%s: the images %s and %s do not have one shape", fn,
                       weft__spec_str(sa, s1, sizeof s1), weft__spec_str(sb, s2, sizeof s2));
        return false;
    }
    if (sa->dims[sa->rank - 3] < size || sa->dims[sa->rank - 2] < size) {
        weft__ctx_fail(cx, WEFT_ESHAPE, "%s: the images %s are smaller than the %lld x %lld "
                       "filter", fn, weft__spec_str(sa, s1, sizeof s1), (long long)size,
                       (long long)size);
        return false;
    }
    return true;
}

/* TensorFlow's _ssim_per_channel on batches a and b [n, h, w, c]: the
 * mean over the pixels of luminance x contrast-structure (returned, [n, c])
 * and of contrast-structure alone (*cs, [n, c]), the local statistics
 * under filter (depthwise, VALID). */
static weft_value *ssim_per_channel(weft_ctx *cx, const char *fn, weft_value *a, weft_value *b,
                                    weft_value *filter, double max_val, double k1, double k2,
                                    weft_value **cs_mean)
{
#define LOCAL(x) weft_depthwise_conv2d(cx, (x), filter, NULL, WEFT_PADDING_VALID, NULL)
#define OP(name, x, y) weft__op_binary(cx, WEFT__OP_##name, fn, (x), (y))
    weft_value *mean_a = LOCAL(a), *mean_b = LOCAL(b);
    weft_value *num0 = OP(MUL, OP(MUL, mean_a, mean_b), weft_const_f64(cx, 2));
    weft_value *den0 = OP(ADD, OP(MUL, mean_a, mean_a), OP(MUL, mean_b, mean_b));
    weft_value *c1 = weft_const_f64(cx, (k1 * max_val) * (k1 * max_val));
    weft_value *c2 = weft_const_f64(cx, (k2 * max_val) * (k2 * max_val));
    weft_value *luminance = OP(DIV, OP(ADD, num0, c1), OP(ADD, den0, c1));
    weft_value *num1 = OP(MUL, LOCAL(OP(MUL, a, b)), weft_const_f64(cx, 2));
    weft_value *den1 = LOCAL(OP(ADD, OP(MUL, a, a), OP(MUL, b, b)));
    weft_value *cs = OP(DIV, OP(ADD, OP(SUB, num1, num0), c2), OP(ADD, OP(SUB, den1, den0), c2));
    weft_value *map = OP(MUL, luminance, cs);
#undef LOCAL
#undef OP
    static const int pixels[2] = { 1, 2 };
    *cs_mean = weft_reduce(cx, WEFT_R_MEAN, cs, pixels, 2, false);
    return weft_reduce(cx, WEFT_R_MEAN, map, pixels, 2, false);
}

/* The filter_size^2 Gaussian of filter_sigma as a depthwise filter for
 * images of spec s (c channels). */
static weft_value *ssim_filter(weft_ctx *cx, const char *fn, const weft_spec *s,
                               int64_t filter_size, double filter_sigma)
{
    double *taps = weft__malloc(sizeof *taps * (size_t)(filter_size * filter_size));
    if (!taps)
        return weft__ctx_fail(cx, WEFT_ENOMEM, "%s: out of memory", fn);
    gauss_taps(filter_size, filter_sigma, taps);
    weft_value *filter = tiled_filter(cx, fn, taps, filter_size, filter_size,
                                      s->dims[s->rank - 1], 1, s->dtype);
    weft__free(taps);
    return filter;
}

static bool ssim_inputs_ok(weft_ctx *cx, const char *fn, weft_value *a, weft_value *b,
                           double max_val, int64_t filter_size, double filter_sigma, double k1,
                           double k2)
{
    weft_value *in[2] = { a, b };
    return weft__op_enter(cx, fn, in, 2) && weft__ops_float_images(cx, fn, a) &&
           weft__ops_float_images(cx, fn, b) &&
           ssim_args_ok(cx, fn, max_val, filter_size, filter_sigma, k1, k2) &&
           ssim_shapes_ok(cx, fn, a, b, filter_size);
}

weft_value *weft_ssim(weft_ctx *cx, weft_value *a, weft_value *b, double max_val,
                      int64_t filter_size, double filter_sigma, double k1, double k2)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_ssim";
    if (!ssim_inputs_ok(cx, fn, a, b, max_val, filter_size, filter_sigma, k1, k2))
        return NULL;
    bool single = spec_of(a)->rank == 3;
    weft_value *filter = ssim_filter(cx, fn, spec_of(a), filter_size, filter_sigma);
    if (single) {
        a = weft_expand_dims(cx, a, 0);
        b = weft_expand_dims(cx, b, 0);
    }
    weft_value *cs;
    weft_value *per_channel = ssim_per_channel(cx, fn, a, b, filter, max_val, k1, k2, &cs);
    weft_value *r = weft_reduce(cx, WEFT_R_MEAN, per_channel, (const int[]){ 1 }, 1, false);
    return WEFT__KEEP(single ? weft_reshape(cx, r, 0, NULL) : r);
}

/* One 2 x 2 average pooling of MS-SSIM: h and w padded at their ends by
 * reflection (x[n - 1] repeated) when odd, as TensorFlow's SYMMETRIC pad. */
static weft_value *ms_ssim_halve(weft_ctx *cx, weft_value *x, int64_t h, int64_t w)
{
    if (h % 2 || w % 2) {
        const int64_t pads[4][2] = { { 0, 0 }, { 0, h % 2 }, { 0, w % 2 }, { 0, 0 } };
        x = weft_pad_ex(cx, x, pads, WEFT_PAD_SYMMETRIC, 0.0);
    }
    static const int64_t two[2] = { 2, 2 };
    return weft_avg_pool2d(cx, x, two, two, WEFT_PADDING_VALID);
}

weft_value *weft_ssim_multiscale(weft_ctx *cx, weft_value *a, weft_value *b, double max_val,
                                 const double *power_factors, size_t n_scales,
                                 int64_t filter_size, double filter_sigma, double k1, double k2)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_ssim_multiscale";
    static const double tf_factors[5] = { 0.0448, 0.2856, 0.3001, 0.2363, 0.1333 };
    if (!ssim_inputs_ok(cx, fn, a, b, max_val, filter_size, filter_sigma, k1, k2))
        return NULL;
    if (!power_factors) {
        power_factors = tf_factors;
        n_scales = 5;
    }
    if (n_scales < 1 || n_scales > 16)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: %zu scales, not 1..16", fn, n_scales);
    const weft_spec *s = spec_of(a);
    bool single = s->rank == 3;
    int64_t h = s->dims[s->rank - 3], w = s->dims[s->rank - 2];
    /* Every scale's image must hold the filter: h and w halve, rounding up. */
    int64_t hk = h, wk = w;
    for (size_t k = 1; k < n_scales; k++) {
        hk = (hk + 1) / 2;
        wk = (wk + 1) / 2;
    }
    if (hk < filter_size || wk < filter_size) {
        char str[WEFT__SPEC_STR_MAX];
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: the images %s shrink to %lld x %lld at "
                              "scale %zu, smaller than the %lld x %lld filter", fn,
                              weft__spec_str(s, str, sizeof str), (long long)hk, (long long)wk,
                              n_scales - 1, (long long)filter_size, (long long)filter_size);
    }
    weft_value *filter = ssim_filter(cx, fn, s, filter_size, filter_sigma);
    if (single) {
        a = weft_expand_dims(cx, a, 0);
        b = weft_expand_dims(cx, b, 0);
    }
    weft_value *terms[16], *ssim = NULL;
    for (size_t k = 0; k < n_scales; k++) {
        if (k > 0) {
            a = ms_ssim_halve(cx, a, h, w);
            b = ms_ssim_halve(cx, b, h, w);
            h = (h + 1) / 2;
            w = (w + 1) / 2;
        }
        weft_value *cs;
        ssim = ssim_per_channel(cx, fn, a, b, filter, max_val, k1, k2, &cs);
        terms[k] = weft_relu(cx, cs);
    }
    /* The last scale's contrast-structure gives way to its full SSIM. */
    terms[n_scales - 1] = weft_relu(cx, ssim);
    weft_value *stacked = weft_stack(cx, terms, n_scales, -1);
    int64_t n = (int64_t)n_scales;
    weft_value *exponents = weft__ops_constant(cx, fn, WEFT_F64, 1, &n, power_factors, s->dtype);
    weft_value *r = weft_reduce(cx, WEFT_R_PROD, weft_pow(cx, stacked, exponents),
                                (const int[]){ -1 }, 1, false);
    r = weft_reduce(cx, WEFT_R_MEAN, r, (const int[]){ -1 }, 1, false);
    return WEFT__KEEP(single ? weft_reshape(cx, r, 0, NULL) : r);
}

/* tf.image.draw_bounding_boxes: one node (kernel_boxes.c); with no colours
 * (NULL or none known while tracing), TensorFlow's table of ten (yellow,
 * blue, red, lime, purple, olive, maroon, navy, aqua, fuchsia), whose first
 * channel is 1 for grey images. */
weft_value *weft_draw_bounding_boxes(weft_ctx *cx, weft_value *images, weft_value *boxes,
                                     weft_value *colors)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_draw_bounding_boxes";
    weft_value *in[3] = { images, boxes, colors };
    if (!weft__op_enter_optional(cx, fn, in, 2, 3))
        return NULL;
    const weft_spec *s = spec_of(images);
    if (!colors || (spec_of(colors)->rank == 2 && spec_of(colors)->dims[0] == 0)) {
        float table[10][4] = { { 1, 1, 0, 1 }, { 0, 0, 1, 1 }, { 1, 0, 0, 1 }, { 0, 1, 0, 1 },
                               { 0.5f, 0, 0.5f, 1 }, { 0.5f, 0.5f, 0, 1 }, { 0.5f, 0, 0, 1 },
                               { 0, 0, 0.5f, 1 }, { 0, 1, 1, 1 }, { 1, 0, 1, 1 } };
        for (int i = 0; s->rank == 4 && s->dims[3] == 1 && i < 10; i++)
            table[i][0] = 1;
        in[2] = weft__ops_constant(cx, fn, WEFT_F32, 2, (const int64_t[]){ 10, 4 }, table,
                                   WEFT_F32);
    }
    weft__node n = { .op = WEFT__OP_DRAW_BOXES };
    return WEFT__KEEP(weft__ops_finish(cx, &n, in, 3));
}
