/* The geometry of images (include/weft/ops.h): rot90, flip_left_right,
 * flip_up_down, transpose_image, central_crop and
 * resize_with_crop_or_pad, TensorFlow's tf.image ops of those names on an
 * image [h, w, c] or a batch [b, h, w, c].  Each is a composition of
 * reverse, transpose, slice and pad that checks its inputs first, so
 * that an error names the public op; the results are exact for every
 * dtype. */

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
    static const char fn[] = "weft_rot90";
    int h;
    if (!weft__op_enter(cx, fn, &images, 1) || !image_rank(cx, fn, images, false, &h))
        return NULL;
    int turns = ((k % 4) + 4) % 4;
    int perm[4] = { 0, 1, 2, 3 };
    perm[h] = h + 1;
    perm[h + 1] = h;
    switch (turns) {
    case 1: return weft_transpose(cx, weft_reverse(cx, images, h + 1), perm);
    case 2: return weft_reverse(cx, weft_reverse(cx, images, h), h + 1);
    case 3: return weft_reverse(cx, weft_transpose(cx, images, perm), h + 1);
    default: return images;
    }
}

/* tf.image.flip_left_right, flip_up_down and transpose: one reverse or
 * one transpose of the image's own axes. */
weft_value *weft_flip_left_right(weft_ctx *cx, weft_value *images)
{
    static const char fn[] = "weft_flip_left_right";
    int h;
    if (!weft__op_enter(cx, fn, &images, 1) || !image_rank(cx, fn, images, false, &h))
        return NULL;
    return weft_reverse(cx, images, h + 1);
}

weft_value *weft_flip_up_down(weft_ctx *cx, weft_value *images)
{
    static const char fn[] = "weft_flip_up_down";
    int h;
    if (!weft__op_enter(cx, fn, &images, 1) || !image_rank(cx, fn, images, false, &h))
        return NULL;
    return weft_reverse(cx, images, h);
}

weft_value *weft_transpose_image(weft_ctx *cx, weft_value *images)
{
    static const char fn[] = "weft_transpose_image";
    int h;
    if (!weft__op_enter(cx, fn, &images, 1) || !image_rank(cx, fn, images, false, &h))
        return NULL;
    int perm[4] = { 0, 1, 2, 3 };
    perm[h] = h + 1;
    perm[h + 1] = h;
    return weft_transpose(cx, images, perm);
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

weft_value *weft_central_crop(weft_ctx *cx, weft_value *images, double central_fraction)
{
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
        return images;
    const weft_spec *s = weft__value_spec(images);
    int64_t ih = s->dims[h], iw = s->dims[h + 1];
    /* TensorFlow's: int((d - d * fraction) / 2) in double. */
    int64_t top = (int64_t)(((double)ih - (double)ih * central_fraction) / 2);
    int64_t left = (int64_t)(((double)iw - (double)iw * central_fraction) / 2);
    return crop(cx, images, h, top, left, ih - 2 * top, iw - 2 * left);
}

weft_value *weft_resize_with_crop_or_pad(weft_ctx *cx, weft_value *images, int64_t target_height,
                                         int64_t target_width)
{
    static const char fn[] = "weft_resize_with_crop_or_pad";
    int h;
    if (!weft__op_enter(cx, fn, &images, 1))
        return NULL;
    if (target_height < 1 || target_width < 1 || target_height > INT32_MAX ||
        target_width > INT32_MAX)
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: the target %lld x %lld is not within 1..%d "
                              "on each side", fn, (long long)target_height,
                              (long long)target_width, INT32_MAX);
    if (!image_rank(cx, fn, images, true, &h))
        return NULL;
    const weft_spec *s = weft__value_spec(images);
    int64_t ih = s->dims[h], iw = s->dims[h + 1];
    int64_t th = target_height, tw = target_width;
    int64_t ch = ih < th ? ih : th, cw = iw < tw ? iw : tw;
    weft_value *cropped = crop(cx, images, h, ih > th ? (ih - th) / 2 : 0,
                               iw > tw ? (iw - tw) / 2 : 0, ch, cw);
    if (ch == th && cw == tw)
        return cropped;
    int64_t pads[4][2] = { { 0, 0 }, { 0, 0 }, { 0, 0 }, { 0, 0 } };
    pads[h][0] = (th - ch) / 2;
    pads[h][1] = th - ch - pads[h][0];
    pads[h + 1][0] = (tw - cw) / 2;
    pads[h + 1][1] = tw - cw - pads[h + 1][0];
    return weft_pad(cx, cropped, (const int64_t(*)[2])pads, 0);
}
