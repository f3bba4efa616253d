/* The geometry of images (include/weft/ops.h): rot90, flip_left_right,
 * flip_up_down, transpose_image, crop_to_bounding_box,
 * pad_to_bounding_box, resize_with_pad, central_crop and
 * resize_with_crop_or_pad, TensorFlow's tf.image ops of those names on an
 * image [h, w, c] or a batch [b, h, w, c].  Each is a composition of
 * reverse, transpose, slice and pad that checks its inputs first, so
 * that an error names the public op; the results are exact for every
 * dtype. */

#include <math.h>

#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/shape.h"

/* images has rank 3 or 4, known while tracing, and with `hw_known` its
 * height and width are known too; *h_axis is the height's axis. */
static bool image_rank(weft_ctx *cx, const char *fn, const weft_value *images, bool hw_known,
                       int *h_axis)
{
    const weft_spec *s = weft__value_spec(images);
    bool ok = s->rank == 3 || s->rank == 4;
    if (ok && hw_known)
        ok = s->dims[s->rank - 3] >= 0 && s->dims[s->rank - 2] >= 0;
    if (!ok) {
        char ss[WEFT__SPEC_STR_MAX];
        weft__ctx_fail(cx, WEFT_ESHAPE, "%s: the images %s are not an image [h, w, c] or a batch "
                       "[b, h, w, c]%s", fn, weft__spec_str(s, ss, sizeof ss),
                       hw_known ? " with h and w known while tracing" : "");
        return false;
    }
    *h_axis = s->rank - 3;
    return true;
}

/* TensorFlow's _rot90_3D and _rot90_4D: one quarter turn reverses the
 * width, then swaps height and width; three swap, then reverse the new
 * width; a half turn reverses both. */
weft_value *weft_rot90(weft_ctx *cx, weft_value *images, int k)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_rot90";
    int h;
    if (!weft__op_enter(cx, fn, &images, 1) || !image_rank(cx, fn, images, false, &h))
        return NULL;
    int turns = ((k % 4) + 4) % 4;
    int perm[4] = { 0, 1, 2, 3 };
    perm[h] = h + 1;
    perm[h + 1] = h;
    switch (turns) {
    case 1: return WEFT__KEEP(weft_transpose(cx, weft_reverse(cx, images, h + 1), perm));
    case 2: return WEFT__KEEP(weft_reverse(cx, weft_reverse(cx, images, h), h + 1));
    case 3: return WEFT__KEEP(weft_reverse(cx, weft_transpose(cx, images, perm), h + 1));
    default: return WEFT__KEEP(images);
    }
}

/* tf.image.flip_left_right, flip_up_down and transpose: one reverse or
 * one transpose of the image's own axes. */
weft_value *weft_flip_left_right(weft_ctx *cx, weft_value *images)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_flip_left_right";
    int h;
    if (!weft__op_enter(cx, fn, &images, 1) || !image_rank(cx, fn, images, false, &h))
        return NULL;
    return WEFT__KEEP(weft_reverse(cx, images, h + 1));
}

weft_value *weft_flip_up_down(weft_ctx *cx, weft_value *images)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_flip_up_down";
    int h;
    if (!weft__op_enter(cx, fn, &images, 1) || !image_rank(cx, fn, images, false, &h))
        return NULL;
    return WEFT__KEEP(weft_reverse(cx, images, h));
}

weft_value *weft_transpose_image(weft_ctx *cx, weft_value *images)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_transpose_image";
    int h;
    if (!weft__op_enter(cx, fn, &images, 1) || !image_rank(cx, fn, images, false, &h))
        return NULL;
    int perm[4] = { 0, 1, 2, 3 };
    perm[h] = h + 1;
    perm[h + 1] = h;
    return WEFT__KEEP(weft_transpose(cx, images, perm));
}

/* A target size of 1..INT32_MAX on each side. */
static bool target_ok(weft_ctx *cx, const char *fn, int64_t height, int64_t width)
{
    if (height >= 1 && width >= 1 && height <= INT32_MAX && width <= INT32_MAX)
        return true;
    weft__ctx_fail(cx, WEFT_EINVAL, "%s: the target %lld x %lld is not within 1..%d on each side",
                   fn, (long long)height, (long long)width, INT32_MAX);
    return false;
}

/* images[..., top:top + height, left:left + width, :]. */
static weft_value *crop(weft_ctx *cx, weft_value *images, int h, int64_t top, int64_t left,
                        int64_t height, int64_t width)
{
    int64_t begin[4] = { 0, 0, 0, 0 }, end[4] = { WEFT_END, WEFT_END, WEFT_END, WEFT_END };
    begin[h] = top;
    end[h] = top + height;
    begin[h + 1] = left;
    end[h + 1] = left + width;
    return weft_slice(cx, images, begin, end, NULL);
}

/* The box [top, top + height) x [left, left + width) within `within` rows
 * and columns (or the other way round, the images within the box, for a
 * pad), all sizes of at most INT32_MAX. */
static bool box_ok(weft_ctx *cx, const char *fn, int64_t top, int64_t left, int64_t height,
                   int64_t width, const int64_t within[2], bool pad)
{
    bool ok = top >= 0 && left >= 0 && height >= 1 && width >= 1 && top <= INT32_MAX &&
              left <= INT32_MAX && height <= INT32_MAX && width <= INT32_MAX;
    if (ok && pad)
        ok = within[0] + top <= height && within[1] + left <= width;
    else if (ok)
        ok = top + height <= within[0] && left + width <= within[1];
    if (!ok)
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: the box at (%lld, %lld) of %lld x %lld does not %s "
                       "the images' %lld x %lld", fn, (long long)top, (long long)left,
                       (long long)height, (long long)width, pad ? "hold" : "fit in",
                       (long long)within[0], (long long)within[1]);
    return ok;
}

/* images with `top` rows and `left` columns of zeros before them, and as
 * many after as make height x width. */
static weft_value *pad_box(weft_ctx *cx, weft_value *images, int h, int64_t top, int64_t left,
                           int64_t height, int64_t width)
{
    const weft_spec *s = weft__value_spec(images);
    int64_t pads[4][2] = { { 0, 0 }, { 0, 0 }, { 0, 0 }, { 0, 0 } };
    pads[h][0] = top;
    pads[h][1] = height - top - s->dims[h];
    pads[h + 1][0] = left;
    pads[h + 1][1] = width - left - s->dims[h + 1];
    return weft_pad(cx, images, (const int64_t(*)[2])pads, 0);
}

/* crop_to_bounding_box (pad false) and pad_to_bounding_box. */
static weft_value *bounding_box(weft_ctx *cx, const char *fn, weft_value *images, int64_t top,
                                int64_t left, int64_t height, int64_t width, bool pad)
{
    int h;
    if (!weft__op_enter(cx, fn, &images, 1) || !image_rank(cx, fn, images, true, &h))
        return NULL;
    const int64_t *d = weft__value_spec(images)->dims + h;
    if (!box_ok(cx, fn, top, left, height, width, d, pad))
        return NULL;
    return pad ? pad_box(cx, images, h, top, left, height, width)
               : crop(cx, images, h, top, left, height, width);
}

weft_value *weft_crop_to_bounding_box(weft_ctx *cx, weft_value *images, int64_t offset_height,
                                      int64_t offset_width, int64_t target_height,
                                      int64_t target_width)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(bounding_box(cx, "weft_crop_to_bounding_box", images, offset_height,
                                   offset_width, target_height, target_width, false));
}

weft_value *weft_pad_to_bounding_box(weft_ctx *cx, weft_value *images, int64_t offset_height,
                                     int64_t offset_width, int64_t target_height,
                                     int64_t target_width)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(bounding_box(cx, "weft_pad_to_bounding_box", images, offset_height,
                                   offset_width, target_height, target_width, true));
}

/* tf.image.resize_with_pad: the images scaled by one factor to fit the
 * target (TensorFlow's float arithmetic for the size and the offsets),
 * resized, then padded with zeros about them. */
weft_value *weft_resize_with_pad(weft_ctx *cx, weft_value *images, int64_t target_height,
                                 int64_t target_width, weft_resize_method method)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_resize_with_pad";
    int h;
    if (!weft__op_enter(cx, fn, &images, 1))
        return NULL;
    if (!target_ok(cx, fn, target_height, target_width))
        return NULL;
    if (!weft__ops_float_images(cx, fn, images) || !image_rank(cx, fn, images, true, &h))
        return NULL;
    const int64_t *d = weft__value_spec(images)->dims + h;
    double ratio = fmax((double)d[1] / (double)target_width, (double)d[0] / (double)target_height);
    double rh = (double)d[0] / ratio, rw = (double)d[1] / ratio;
    if (!(floor(rh) >= 1 && floor(rw) >= 1))
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: the images' %lld x %lld scaled into %lld x "
                              "%lld leave no row or column", fn, (long long)d[0], (long long)d[1],
                              (long long)target_height, (long long)target_width);
    int64_t top = (int64_t)fmax(0, floor(((double)target_height - rh) / 2));
    int64_t left = (int64_t)fmax(0, floor(((double)target_width - rw) / 2));
    weft_value *resized = weft_resize(cx, images, (int64_t)floor(rh), (int64_t)floor(rw), method);
    if (!resized)
        return NULL;
    return WEFT__KEEP(pad_box(cx, resized, h, top, left, target_height, target_width));
}

weft_value *weft_central_crop(weft_ctx *cx, weft_value *images, double central_fraction)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_central_crop";
    int h;
    if (!weft__op_enter(cx, fn, &images, 1))
        return NULL;
    if (!(central_fraction > 0 && central_fraction <= 1))
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: central_fraction %g is not within (0, 1]",
                              fn, central_fraction);
    if (!image_rank(cx, fn, images, true, &h))
        return NULL;
    if (central_fraction == 1)
        return WEFT__KEEP(images);
    const weft_spec *s = weft__value_spec(images);
    int64_t ih = s->dims[h], iw = s->dims[h + 1];
    /* TensorFlow's: int((d - d * fraction) / 2) in double. */
    int64_t top = (int64_t)(((double)ih - (double)ih * central_fraction) / 2);
    int64_t left = (int64_t)(((double)iw - (double)iw * central_fraction) / 2);
    return WEFT__KEEP(crop(cx, images, h, top, left, ih - 2 * top, iw - 2 * left));
}

weft_value *weft_resize_with_crop_or_pad(weft_ctx *cx, weft_value *images, int64_t target_height,
                                         int64_t target_width)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_resize_with_crop_or_pad";
    int h;
    if (!weft__op_enter(cx, fn, &images, 1))
        return NULL;
    if (!target_ok(cx, fn, target_height, target_width))
        return NULL;
    if (!image_rank(cx, fn, images, true, &h))
        return NULL;
    const weft_spec *s = weft__value_spec(images);
    int64_t ih = s->dims[h], iw = s->dims[h + 1];
    int64_t th = target_height, tw = target_width;
    int64_t ch = ih < th ? ih : th, cw = iw < tw ? iw : tw;
    weft_value *cropped = crop(cx, images, h, ih > th ? (ih - th) / 2 : 0,
                               iw > tw ? (iw - tw) / 2 : 0, ch, cw);
    if (ch == th && cw == tw)
        return WEFT__KEEP(cropped);
    return WEFT__KEEP(pad_box(cx, cropped, h, (th - ch) / 2, (tw - cw) / 2, th, tw));
}
