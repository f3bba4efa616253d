/* tf.image.extract_glimpse: one GLIMPSE node (trace/kernel_glimpse.c) that
 * copies each window and takes what falls outside its image from a noise
 * drawn here, TensorFlow's way, with weft's random streams. */
#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/shape.h"

/* TensorFlow's noise of the window's shape: uniform between the image's
 * least and greatest values, or each channel's mean plus its standard
 * deviation times a normal draw, kept within the channel's range. */
static weft_value *glimpse_noise(weft_ctx *cx, weft_value *input, const int64_t *size,
                                 weft_glimpse_noise noise, weft_value *seed)
{
    weft_dtype dt = weft__value_spec(input)->dtype;
    if (noise == WEFT_GLIMPSE_ZERO)
        return weft_cast(cx, weft__value_strong(cx, weft_const_f64(cx, 0)), dt);
    weft_value *corner =
        weft__ops_axis_slice(cx, weft__ops_axis_slice(cx, input, 1, 0, 1), 2, 0, 1);
    weft_value *like = weft_broadcast_to(cx, corner, 4,
                                         (const int64_t[]){ -1, size[0], size[1], -1 });
    const int image[3] = { 1, 2, 3 };
    size_t axes = noise == WEFT_GLIMPSE_UNIFORM ? 3 : 2;   /* the image, or each channel */
    weft_value *lo = weft_reduce(cx, WEFT_R_MIN, input, image, axes, true);
    weft_value *hi = weft_reduce(cx, WEFT_R_MAX, input, image, axes, true);
    if (noise == WEFT_GLIMPSE_UNIFORM) {
        weft_value *u = weft_random_uniform_like(cx, seed, like, dt, 0, 1);
        return weft_add(cx, lo, weft_mul(cx, u, weft_sub(cx, hi, lo)));
    }
    weft_value *z = weft_random_normal_like(cx, seed, like, dt, 0, 1);
    weft_value *mean = weft_reduce(cx, WEFT_R_MEAN, input, image, 2, true);
    weft_value *sd = weft_reduce(cx, WEFT_R_STD, input, image, 2, true);
    return weft_maximum(cx, weft_minimum(cx, weft_add(cx, mean, weft_mul(cx, z, sd)), hi), lo);
}

weft_value *weft_extract_glimpse(weft_ctx *cx, weft_value *input, const int64_t *size,
                                 weft_value *offsets, bool centered, bool normalized,
                                 weft_glimpse_noise noise, weft_value *seed)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_extract_glimpse";
    weft_value *in[3] = { input, offsets, seed };
    if (!weft__op_enter_optional(cx, fn, in, 2, 3))
        return NULL;
    if (!size || size[0] < 0 || size[1] < 0 || size[0] > INT32_MAX || size[1] > INT32_MAX) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: size is NULL or not two sizes within 0..%d", fn,
                       INT32_MAX);
        return NULL;
    }
    if (noise != WEFT_GLIMPSE_UNIFORM && noise != WEFT_GLIMPSE_GAUSSIAN &&
        noise != WEFT_GLIMPSE_ZERO) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: noise %d is not a weft_glimpse_noise", fn,
                       (int)noise);
        return NULL;
    }
    if (noise != WEFT_GLIMPSE_ZERO && !seed) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: uniform and gaussian noise need a seed", fn);
        return NULL;
    }
    weft__node n = { .op = WEFT__OP_GLIMPSE };
    n.attr.resize.method = (centered ? WEFT__GLIMPSE_CENTERED : 0) |
                           (normalized ? WEFT__GLIMPSE_NORMALIZED : 0);
    n.attr.resize.size[0] = size[0];
    n.attr.resize.size[1] = size[1];
    /* The node's checks first, so that a bad input is named by this op and
     * not by the noise's reductions. */
    const weft_spec specs[3] = { *weft__value_spec(input), *weft__value_spec(offsets),
                                 { .dtype = weft__value_spec(input)->dtype } };
    weft_spec out;
    int rc = weft__infer_glimpse(&n, specs, &out);
    if (rc != 0) {
        weft__ctx_fail(cx, rc, "%s", weft_errmsg());
        return NULL;
    }
    weft_value *args[3] = { input, offsets, glimpse_noise(cx, input, size, noise, seed) };
    return WEFT__KEEP(weft__ops_finish(cx, &n, args, 3));
}
