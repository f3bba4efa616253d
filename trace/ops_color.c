/* Colour ops of include/weft/ops.h on images whose last dim holds the 3
 * channels: rgb_to_yiq, yiq_to_rgb, rgb_to_yuv, yuv_to_rgb (TensorFlow's
 * 3 x 3 matrices), rgb_to_hsv and hsv_to_rgb (TensorFlow's formulas),
 * adjust_saturation and adjust_hue (through HSV, as TensorFlow's
 * kernels), adjust_brightness and adjust_gamma.  Each is a composition of
 * elementwise steps on the three channels (so that they fuse into one
 * loop), recorded with the public op's name as ops_image.c's. */
#include <math.h>

#include "runtime/iface.h"
#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/shape.h"

/* images' three channels, [..., 1] each, into ch[]; false (the context
 * failed, naming fn) unless images are f32 or f64 with a known last dim
 * of 3. */
bool weft__ops_rgb_channels(weft_ctx *cx, const char *fn, weft_value *images, weft_value **ch)
{
    if (!weft__op_enter(cx, fn, &images, 1))
        return false;
    if (!weft__ops_float_images(cx, fn, images))
        return false;
    const weft_spec *s = weft__value_spec(images);
    char ss[WEFT__SPEC_STR_MAX];
    if (s->rank == WEFT_RANK_ANY || s->rank < 1 || s->dims[s->rank - 1] != 3) {
        weft__ctx_fail(cx, WEFT_ESHAPE, "%s: %s does not have 3 channels in its last dim (known "
                       "while tracing)", fn, weft__spec_str(s, ss, sizeof ss));
        return false;
    }
    return weft_split(cx, images, 3, NULL, -1, ch) == 0;
}

static weft_value *k(const weft__steps *o, double v)
{
    return weft_const_f64(o->cx, v);
}

static weft_value *bin(const weft__steps *o, weft__op op, weft_value *a, weft_value *b)
{
    return weft__step2(o, op, a, b);
}

static weft_value *join(const weft__steps *o, weft_value *const *ch)
{
    if (!ch[0] || !ch[1] || !ch[2])
        return NULL;
    return weft_concat(o->cx, ch, 3, -1);
}

/* ---- Linear colour spaces ------------------------------------------------ */

/* out[j] = sum over c of ch[c] m[c][j]: TensorFlow's tensordot of the
 * channels with its kernel, every term kept (0 times inf is NaN there
 * too). */
static weft_value *mix(weft_ctx *cx, const char *fn, weft_value *images, const double m[3][3])
{
    weft_value *ch[3], *out[3];
    if (!weft__ops_rgb_channels(cx, fn, images, ch))
        return NULL;
    const weft__steps o = { cx, fn };
    for (int j = 0; j < 3; j++) {
        out[j] = bin(&o, WEFT__OP_MUL, ch[0], k(&o, m[0][j]));
        for (int c = 1; c < 3; c++)
            out[j] = bin(&o, WEFT__OP_ADD, out[j], bin(&o, WEFT__OP_MUL, ch[c], k(&o, m[c][j])));
    }
    return join(&o, out);
}

static const double rgb_to_yiq[3][3] = { { 0.299, 0.59590059, 0.2115 },
                                         { 0.587, -0.27455667, -0.52273617 },
                                         { 0.114, -0.32134392, 0.31119955 } };
static const double yiq_to_rgb[3][3] = { { 1, 1, 1 },
                                         { 0.95598634, -0.27201283, -1.10674021 },
                                         { 0.6208248, -0.64720424, 1.70423049 } };
static const double rgb_to_yuv[3][3] = { { 0.299, -0.14714119, 0.61497538 },
                                         { 0.587, -0.28886916, -0.51496512 },
                                         { 0.114, 0.43601035, -0.10001026 } };
static const double yuv_to_rgb[3][3] = { { 1, 1, 1 },
                                         { 0, -0.394642334, 2.03206185 },
                                         { 1.13988303, -0.58062185, 0 } };

weft_value *weft_rgb_to_yiq(weft_ctx *cx, weft_value *images)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(mix(cx, "weft_rgb_to_yiq", images, rgb_to_yiq));
}

weft_value *weft_yiq_to_rgb(weft_ctx *cx, weft_value *images)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(mix(cx, "weft_yiq_to_rgb", images, yiq_to_rgb));
}

weft_value *weft_rgb_to_yuv(weft_ctx *cx, weft_value *images)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(mix(cx, "weft_rgb_to_yuv", images, rgb_to_yuv));
}

weft_value *weft_yuv_to_rgb(weft_ctx *cx, weft_value *images)
{
    WEFT__SCOPE(cx);
    return WEFT__KEEP(mix(cx, "weft_yuv_to_rgb", images, yuv_to_rgb));
}

/* ---- HSV ------------------------------------------------------------------ */

/* h, s, v of r, g, b into hsv[], TensorFlow's RGBToHSV: v the largest
 * channel, s its range over v (0 where v is not > 0), h from the largest
 * channel's neighbours over 6 range, in [0, 1), 0 for a grey pixel. */
static void to_hsv(const weft__steps *o, weft_value *const *rgb, weft_value **hsv)
{
    weft_value *r = rgb[0], *g = rgb[1], *b = rgb[2];
    weft_value *v = bin(o, WEFT__OP_MAXIMUM, bin(o, WEFT__OP_MAXIMUM, r, g), b);
    weft_value *range =
        bin(o, WEFT__OP_SUB, v, bin(o, WEFT__OP_MINIMUM, bin(o, WEFT__OP_MINIMUM, r, g), b));
    weft_value *zero = k(o, 0);
    weft_value *s = weft_where(o->cx, bin(o, WEFT__OP_GT, v, zero),
                               bin(o, WEFT__OP_DIV, range, v), zero);
    weft_value *norm = bin(o, WEFT__OP_MUL, bin(o, WEFT__OP_DIV, k(o, 1), range), k(o, 1.0 / 6));
    weft_value *from_r = bin(o, WEFT__OP_MUL, norm, bin(o, WEFT__OP_SUB, g, b));
    weft_value *from_g = bin(o, WEFT__OP_ADD, bin(o, WEFT__OP_MUL, norm, bin(o, WEFT__OP_SUB, b, r)),
                             k(o, 2.0 / 6));
    weft_value *from_b = bin(o, WEFT__OP_ADD, bin(o, WEFT__OP_MUL, norm, bin(o, WEFT__OP_SUB, r, g)),
                             k(o, 4.0 / 6));
    weft_value *h = weft_where(o->cx, bin(o, WEFT__OP_EQ, r, v), from_r,
                               weft_where(o->cx, bin(o, WEFT__OP_EQ, g, v), from_g, from_b));
    h = weft_where(o->cx, bin(o, WEFT__OP_GT, range, zero), h, zero);
    h = weft_where(o->cx, bin(o, WEFT__OP_LT, h, zero), bin(o, WEFT__OP_ADD, h, k(o, 1)), h);
    hsv[0] = h;
    hsv[1] = s;
    hsv[2] = v;
}

/* min(max(x, 0), 1). */
static weft_value *unit_clip(const weft__steps *o, weft_value *x)
{
    return bin(o, WEFT__OP_MINIMUM, bin(o, WEFT__OP_MAXIMUM, x, k(o, 0)), k(o, 1));
}

/* |6 h - at|. */
static weft_value *hue_distance(const weft__steps *o, weft_value *h6, double at)
{
    return weft__step1(o, WEFT__OP_ABS, bin(o, WEFT__OP_SUB, h6, k(o, at)));
}

/* r, g, b of h, s, v into rgb[], TensorFlow's HSVToRGB: each channel's
 * share of the hue (a clipped tent of 6 h) mixed with white by s, times v. */
static void to_rgb(const weft__steps *o, weft_value *const *hsv, weft_value **rgb)
{
    weft_value *h6 = bin(o, WEFT__OP_MUL, hsv[0], k(o, 6)), *s = hsv[1], *v = hsv[2];
    weft_value *share[3] = {
        unit_clip(o, bin(o, WEFT__OP_SUB, hue_distance(o, h6, 3), k(o, 1))),
        unit_clip(o, bin(o, WEFT__OP_SUB, k(o, 2), hue_distance(o, h6, 2))),
        unit_clip(o, bin(o, WEFT__OP_SUB, k(o, 2), hue_distance(o, h6, 4))),
    };
    weft_value *one_s = bin(o, WEFT__OP_SUB, k(o, 1), s);
    for (int c = 0; c < 3; c++)
        rgb[c] = bin(o, WEFT__OP_MUL,
                     bin(o, WEFT__OP_ADD, one_s, bin(o, WEFT__OP_MUL, s, share[c])), v);
}

weft_value *weft_rgb_to_hsv(weft_ctx *cx, weft_value *images)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_rgb_to_hsv";
    weft_value *rgb[3], *hsv[3];
    if (!weft__ops_rgb_channels(cx, fn, images, rgb))
        return NULL;
    const weft__steps o = { cx, fn };
    to_hsv(&o, rgb, hsv);
    return WEFT__KEEP(join(&o, hsv));
}

weft_value *weft_hsv_to_rgb(weft_ctx *cx, weft_value *images)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_hsv_to_rgb";
    weft_value *hsv[3], *rgb[3];
    if (!weft__ops_rgb_channels(cx, fn, images, hsv))
        return NULL;
    const weft__steps o = { cx, fn };
    to_rgb(&o, hsv, rgb);
    return WEFT__KEEP(join(&o, rgb));
}

/* s times factor, clipped to [0, 1], through HSV and back. */
weft_value *weft__ops_saturation(weft_ctx *cx, const char *fn, weft_value *const *rgb,
                                 weft_value *factor)
{
    WEFT__SCOPE(cx);
    const weft__steps o = { cx, fn };
    weft_value *hsv[3], *out[3];
    to_hsv(&o, rgb, hsv);
    hsv[1] = unit_clip(&o, bin(&o, WEFT__OP_MUL, hsv[1], factor));
    to_rgb(&o, hsv, out);
    return WEFT__KEEP(join(&o, out));
}

weft_value *weft_adjust_saturation(weft_ctx *cx, weft_value *images, double saturation_factor)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_adjust_saturation";
    weft_value *rgb[3];
    if (!weft__ops_rgb_channels(cx, fn, images, rgb))
        return NULL;
    if (!isfinite(saturation_factor))
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: saturation_factor %g is not finite", fn,
                              saturation_factor);
    return WEFT__KEEP(weft__ops_saturation(cx, fn, rgb, weft_const_f64(cx, saturation_factor)));
}

/* h plus delta, wrapped into [0, 1), through HSV and back. */
weft_value *weft__ops_hue(weft_ctx *cx, const char *fn, weft_value *const *rgb, weft_value *delta)
{
    WEFT__SCOPE(cx);
    const weft__steps o = { cx, fn };
    weft_value *hsv[3], *out[3];
    to_hsv(&o, rgb, hsv);
    weft_value *turned = bin(&o, WEFT__OP_ADD, hsv[0], delta);
    hsv[0] = bin(&o, WEFT__OP_SUB, turned, weft__step1(&o, WEFT__OP_FLOOR, turned));
    to_rgb(&o, hsv, out);
    return WEFT__KEEP(join(&o, out));
}

weft_value *weft_adjust_hue(weft_ctx *cx, weft_value *images, double delta)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_adjust_hue";
    weft_value *rgb[3];
    if (!weft__ops_rgb_channels(cx, fn, images, rgb))
        return NULL;
    if (!(delta >= -1 && delta <= 1))
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: delta %g is not in [-1, 1]", fn, delta);
    return WEFT__KEEP(weft__ops_hue(cx, fn, rgb, weft_const_f64(cx, delta)));
}

/* ---- Brightness and gamma (any shape) ------------------------------------ */

weft_value *weft_adjust_brightness(weft_ctx *cx, weft_value *images, double delta)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_adjust_brightness";
    if (!weft__op_enter(cx, fn, &images, 1) || !weft__ops_float_images(cx, fn, images))
        return NULL;
    return WEFT__KEEP(weft__op_binary(cx, WEFT__OP_ADD, fn, images, weft_const_f64(cx, delta)));
}

weft_value *weft_adjust_gamma(weft_ctx *cx, weft_value *images, double gamma, double gain)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_adjust_gamma";
    if (!weft__op_enter(cx, fn, &images, 1) || !weft__ops_float_images(cx, fn, images))
        return NULL;
    if (!(gamma >= 0) || !isfinite(gamma))
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: gamma %g is not a finite number >= 0", fn,
                              gamma);
    weft_value *powered =
        weft__op_binary(cx, WEFT__OP_POW, fn, images, weft_const_f64(cx, gamma));
    return WEFT__KEEP(weft__op_binary(cx, WEFT__OP_MUL, fn, weft_const_f64(cx, gain), powered));
}
