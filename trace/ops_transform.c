/* tf.raw_ops.ImageProjectiveTransformV3 (what Keras's RandomRotation,
 * RandomZoom and RandomTranslation call) as weft_image_projective_transform,
 * one node (kernel_transform.c); weft_rotate (tfa.image.rotate),
 * weft_translate (tfa.image.translate) and weft_zoom (Keras RandomZoom's
 * transform), their transforms built from the angles, shifts or factors
 * with elementwise ops, as Keras and TensorFlow Addons build them. */
#include <stdint.h>

#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

static const weft_spec *spec_of(const weft_value *v)
{
    return weft__value_spec(v);
}

/* The arguments both ops share; a single image is made a batch of one
 * (*single). */
static bool transform_args_ok(weft_ctx *cx, const char *fn, weft_value **images,
                              weft_resize_method interpolation, weft_fill_mode fill_mode,
                              bool *single)
{
    if (interpolation != WEFT_RESIZE_BILINEAR && interpolation != WEFT_RESIZE_NEAREST) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: interpolation %d is not WEFT_RESIZE_BILINEAR or "
                       "_NEAREST", fn, (int)interpolation);
        return false;
    }
    if (fill_mode != WEFT_FILL_REFLECT && fill_mode != WEFT_FILL_WRAP &&
        fill_mode != WEFT_FILL_CONSTANT && fill_mode != WEFT_FILL_NEAREST) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: fill_mode %d is not a weft_fill_mode", fn,
                       (int)fill_mode);
        return false;
    }
    const weft_spec *s = spec_of(*images);
    if (s->rank != 3 && s->rank != 4) {
        char str[WEFT__SPEC_STR_MAX];
        weft__ctx_fail(cx, WEFT_ESHAPE, "%s: the images %s are not an image [h, w, c] or a "
                       "batch [b, h, w, c] (rank known while tracing)", fn,
                       weft__spec_str(s, str, sizeof str));
        return false;
    }
    *single = s->rank == 3;
    if (*single)
        *images = weft_expand_dims(cx, *images, 0);
    return *images != NULL;
}

static weft_value *transform(weft_ctx *cx, const char *fn, weft_value *images,
                             weft_value *transforms, const int64_t *output_hw,
                             weft_resize_method interpolation, weft_fill_mode fill_mode,
                             double fill_value, bool single)
{
    weft__node n = { .op = WEFT__OP_IMAGE_TRANSFORM,
                     .attr.transform = { .interpolation = (int)interpolation,
                                         .fill_mode = (int)fill_mode,
                                         .size = { output_hw ? output_hw[0] : 0,
                                                   output_hw ? output_hw[1] : 0 },
                                         .fill_value = fill_value } };
    (void)fn;
    weft_value *in[2] = { images, transforms };
    weft_value *y = weft__ops_finish(cx, &n, in, 2);
    return single ? weft_squeeze(cx, y, 0) : y;
}

weft_value *weft_image_projective_transform(weft_ctx *cx, weft_value *images,
                                            weft_value *transforms, const int64_t *output_hw,
                                            weft_resize_method interpolation,
                                            weft_fill_mode fill_mode, double fill_value)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_image_projective_transform";
    weft_value *in[2] = { images, transforms };
    bool single;
    if (!weft__op_enter(cx, fn, in, 2) ||
        !transform_args_ok(cx, fn, &images, interpolation, fill_mode, &single))
        return NULL;
    if (output_hw && (output_hw[0] < 1 || output_hw[1] < 1 || output_hw[0] > INT32_MAX ||
                      output_hw[1] > INT32_MAX))
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: output_hw %lld x %lld is not within 1..%d",
                              fn, (long long)output_hw[0], (long long)output_hw[1], INT32_MAX);
    return WEFT__KEEP(transform(cx, fn, images, transforms, output_hw, interpolation, fill_mode,
                                fill_value, single));
}

weft_value *weft_rotate(weft_ctx *cx, weft_value *images, weft_value *angles,
                        weft_resize_method interpolation, weft_fill_mode fill_mode,
                        double fill_value)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_rotate";
    weft_value *in[2] = { images, angles };
    bool single;
    if (!weft__op_enter(cx, fn, in, 2) ||
        !transform_args_ok(cx, fn, &images, interpolation, fill_mode, &single))
        return NULL;
    const weft_spec *sa = spec_of(angles), *si = spec_of(images);
    char s1[WEFT__SPEC_STR_MAX], s2[WEFT__SPEC_STR_MAX];
    if (sa->dtype != WEFT_F32 && sa->dtype != WEFT_F64)
        return weft__ctx_fail(cx, WEFT_EDTYPE, "%s: the angles %s are not f32 or f64", fn,
                              weft__spec_str(sa, s1, sizeof s1));
    if (sa->rank != 0 && sa->rank != 1)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: the angles %s are not a scalar or one per "
                              "image of %s", fn, weft__spec_str(sa, s1, sizeof s1),
                              weft__spec_str(si, s2, sizeof s2));
    int64_t h = si->dims[1], w = si->dims[2];
    if (h < 0 || w < 0)
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: the images %s need h and w known while "
                              "tracing", fn, weft__spec_str(si, s1, sizeof s1));
    /* Output (x, y) reads input (x cos - y sin + dx, x sin + y cos + dy),
     * the centre ((w - 1) / 2, (h - 1) / 2) fixed; in f32, as Keras. */
    weft_value *a = weft_reshape(cx, weft_cast(cx, angles, WEFT_F32), 1, (const int64_t[]){ -1 });
    weft_value *cos_a = weft_cos(cx, a), *sin_a = weft_sin(cx, a);
    weft_value *wm = weft_const_f64(cx, (double)(w - 1)), *hm = weft_const_f64(cx, (double)(h - 1));
    weft_value *half = weft_const_f64(cx, 0.5);
    weft_value *dx = weft_mul(cx, weft_sub(cx, wm, weft_sub(cx, weft_mul(cx, cos_a, wm),
                                                            weft_mul(cx, sin_a, hm))), half);
    weft_value *dy = weft_mul(cx, weft_sub(cx, hm, weft_add(cx, weft_mul(cx, sin_a, wm),
                                                            weft_mul(cx, cos_a, hm))), half);
    weft_value *zero = weft_zeros_like(cx, a);
    weft_value *rows[8] = { cos_a, weft_neg(cx, sin_a), dx, sin_a, cos_a, dy, zero, zero };
    weft_value *transforms = weft_stack(cx, rows, 8, 1);
    return WEFT__KEEP(transform(cx, fn, images, transforms, NULL, interpolation, fill_mode,
                                fill_value, single));
}

/* Whether v (what, for messages) is f32 or f64 pairs: [2] or [b, 2]. */
static bool pairs_ok(weft_ctx *cx, const char *fn, const char *what, const char *pair,
                     weft_value *v)
{
    const weft_spec *st = spec_of(v);
    char s1[WEFT__SPEC_STR_MAX];
    if (st->dtype != WEFT_F32 && st->dtype != WEFT_F64) {
        weft__ctx_fail(cx, WEFT_EDTYPE, "%s: the %s %s are not f32 or f64", fn, what,
                       weft__spec_str(st, s1, sizeof s1));
        return false;
    }
    bool pairs = (st->rank == 1 || st->rank == 2) &&
                 (st->dims[st->rank - 1] == 2 || st->dims[st->rank - 1] == WEFT_DIM_ANY);
    if (!pairs)
        weft__ctx_fail(cx, WEFT_ESHAPE, "%s: the %s %s are not %s or one %s per image", fn, what,
                       weft__spec_str(st, s1, sizeof s1), pair, pair);
    return pairs;
}

/* Column k of pairs v ([2] or [b, 2]) as f32 [n, 1]. */
static weft_value *pair_column(weft_ctx *cx, weft_value *v, int64_t k)
{
    weft_value *d = weft_reshape(cx, weft_cast(cx, v, WEFT_F32), 2, (const int64_t[]){ -1, 2 });
    return weft__ops_axis_slice(cx, d, 1, k, k + 1);
}

weft_value *weft_zoom(weft_ctx *cx, weft_value *images, weft_value *zooms,
                      weft_resize_method interpolation, weft_fill_mode fill_mode,
                      double fill_value)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_zoom";
    weft_value *in[2] = { images, zooms };
    bool single;
    if (!weft__op_enter(cx, fn, in, 2) ||
        !transform_args_ok(cx, fn, &images, interpolation, fill_mode, &single) ||
        !pairs_ok(cx, fn, "zooms", "[zoom_x, zoom_y]", zooms))
        return NULL;
    const weft_spec *si = spec_of(images);
    int64_t h = si->dims[1], w = si->dims[2];
    if (h < 0 || w < 0) {
        char s1[WEFT__SPEC_STR_MAX];
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: the images %s need h and w known while "
                              "tracing", fn, weft__spec_str(si, s1, sizeof s1));
    }
    /* Output (x, y) reads input (zx x + dx, zy y + dy), the centre fixed:
     * dx = (w - 1) / 2 (1 - zx), as Keras's zoom matrix. */
    weft_value *zx = pair_column(cx, zooms, 0), *zy = pair_column(cx, zooms, 1);
    weft_value *one = weft_const_f64(cx, 1.0);
    weft_value *dx = weft_mul(cx, weft_const_f64(cx, (double)(w - 1) / 2.0), weft_sub(cx, one, zx));
    weft_value *dy = weft_mul(cx, weft_const_f64(cx, (double)(h - 1) / 2.0), weft_sub(cx, one, zy));
    weft_value *zero = weft_zeros_like(cx, zx);
    weft_value *cols[8] = { zx, zero, dx, zero, zy, dy, zero, zero };
    weft_value *transforms = weft_concat(cx, cols, 8, 1);
    return WEFT__KEEP(transform(cx, fn, images, transforms, NULL, interpolation, fill_mode,
                                fill_value, single));
}

weft_value *weft_translate(weft_ctx *cx, weft_value *images, weft_value *translations,
                           weft_resize_method interpolation, weft_fill_mode fill_mode,
                           double fill_value)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_translate";
    weft_value *in[2] = { images, translations };
    bool single;
    if (!weft__op_enter(cx, fn, in, 2) ||
        !transform_args_ok(cx, fn, &images, interpolation, fill_mode, &single))
        return NULL;
    if (!pairs_ok(cx, fn, "translations", "[dx, dy]", translations))
        return NULL;
    /* Output (x, y) reads input (x - dx, y - dy). */
    weft_value *dx = weft_neg(cx, pair_column(cx, translations, 0));
    weft_value *dy = weft_neg(cx, pair_column(cx, translations, 1));
    weft_value *one = weft_fill_like(cx, dx, 1.0), *zero = weft_zeros_like(cx, dx);
    weft_value *cols[8] = { one, zero, dx, zero, one, dy, zero, zero };
    weft_value *transforms = weft_concat(cx, cols, 8, 1);
    return WEFT__KEEP(transform(cx, fn, images, transforms, NULL, interpolation, fill_mode,
                                fill_value, single));
}
