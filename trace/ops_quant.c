/* tf.quantization.fake_quant_with_min_max_args / _vars / _vars_per_channel:
 * x clamped to a range nudged so that 0 is a grid point, snapped to the
 * 2^num_bits-level grid and mapped back to floats.  Compositions of f32
 * elementwise ops in TensorFlow's steps and order (its CPU functors), so
 * the bits are TensorFlow's: the args form nudges its range here, in C
 * floats; the vars forms nudge theirs in the graph, so min and max may be
 * computed values. */
#include <math.h>

#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/tensor_impl.h"

static const weft_spec *spec_of(const weft_value *v)
{
    return weft__value_spec(v);
}

/* The integer grid [quant_min, quant_max] of num_bits (2..16) bits. */
static bool grid_of(weft_ctx *cx, const char *fn, int num_bits, bool narrow_range,
                    float *quant_min, float *quant_max)
{
    if (num_bits < 2 || num_bits > 16) {
        weft__ctx_fail(cx, WEFT_EINVAL, "%s: num_bits %d is not between 2 and 16", fn, num_bits);
        return false;
    }
    *quant_min = narrow_range ? 1.0f : 0.0f;
    *quant_max = (float)((1 << num_bits) - 1);
    return true;
}

static bool input_f32(weft_ctx *cx, const char *fn, const char *what, const weft_value *v)
{
    const weft_spec *s = spec_of(v);
    if (s->dtype == WEFT_F32 || (weft__value_is_weak(v) && s->rank == 0))
        return true;
    char str[WEFT__SPEC_STR_MAX];
    weft__ctx_fail(cx, WEFT_EDTYPE, "%s: %s %s is not f32 (TensorFlow's only dtype here)", fn,
                   what, weft__spec_str(s, str, sizeof str));
    return false;
}

static weft_value *num(weft_ctx *cx, double v)
{
    return weft_const_f64(cx, v);
}

/* floor((clamped - nudged_min) * inv_scale - quant_zero + 0.5) * scale
 * with clamped = max(min(x, nudged_max), nudged_min), TensorFlow's order;
 * inv_scale NULL divides by scale instead (the scalar vars form's). */
static weft_value *snap(weft_ctx *cx, weft_value *x, weft_value *nudged_min,
                        weft_value *nudged_max, weft_value *scale, weft_value *inv_scale,
                        weft_value *quant_zero)
{
    weft_value *clamped = weft_maximum(cx, weft_minimum(cx, x, nudged_max), nudged_min);
    weft_value *shifted = weft_sub(cx, clamped, nudged_min);
    weft_value *levels = inv_scale ? weft_mul(cx, shifted, inv_scale)
                                   : weft_truediv(cx, shifted, scale);
    levels = weft_add(cx, weft_sub(cx, levels, quant_zero), num(cx, 0.5));
    return weft_mul(cx, weft_floor(cx, levels), scale);
}

weft_value *weft_fake_quant_with_min_max_args(weft_ctx *cx, weft_value *x, double min,
                                              double max, int num_bits, bool narrow_range)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_fake_quant_with_min_max_args";
    if (!weft__op_enter(cx, fn, &x, 1) || !input_f32(cx, fn, "x", x))
        return NULL;
    float quant_min, quant_max;
    if (!grid_of(cx, fn, num_bits, narrow_range, &quant_min, &quant_max))
        return NULL;
    float lo = (float)min, hi = (float)max;
    if (!(lo < hi))
        return weft__ctx_fail(cx, WEFT_EINVAL, "%s: min %g is not smaller than max %g", fn, min,
                              max);
    /* TensorFlow's Nudge, in floats. */
    float scale = (hi - lo) / (quant_max - quant_min);
    float inv_scale = (quant_max - quant_min) / (hi - lo);
    float zero_from_min = quant_min - lo / scale;
    float zero = zero_from_min < quant_min ? quant_min
                 : zero_from_min > quant_max ? quant_max : roundf(zero_from_min);
    float nudged_min = (quant_min - zero) * scale, nudged_max = (quant_max - zero) * scale;
    float quant_zero = floorf(-nudged_min * inv_scale + 0.5f);
    return WEFT__KEEP(snap(cx, x, num(cx, nudged_min), num(cx, nudged_max), num(cx, scale),
                           num(cx, inv_scale), num(cx, quant_zero)));
}

/* std::round of z >= 0 without the rounding of z + 0.5 (exact: z's
 * fraction is a float). */
static weft_value *round_half_up(weft_ctx *cx, weft_value *z)
{
    weft_value *whole = weft_floor(cx, z);
    weft_value *up = weft_ge(cx, weft_sub(cx, z, whole), num(cx, 0.5));
    return weft_where(cx, up, weft_add(cx, whole, num(cx, 1)), whole);
}

weft_value *weft_fake_quant_with_min_max_vars(weft_ctx *cx, weft_value *x, weft_value *min,
                                              weft_value *max, int num_bits, bool narrow_range)
{
    WEFT__SCOPE(cx);
    static const char fn[] = "weft_fake_quant_with_min_max_vars";
    weft_value *in[3] = { x, min, max };
    if (!weft__op_enter(cx, fn, in, 3) || !input_f32(cx, fn, "x", x) ||
        !input_f32(cx, fn, "min", min) || !input_f32(cx, fn, "max", max))
        return NULL;
    float quant_min, quant_max;
    if (!grid_of(cx, fn, num_bits, narrow_range, &quant_min, &quant_max))
        return NULL;
    const weft_spec *sx = spec_of(x), *sl = spec_of(min), *sh = spec_of(max);
    int64_t channels = sx->rank > 0 ? sx->dims[sx->rank - 1] : WEFT_DIM_ANY;
    bool per_channel = sl->rank == 1;
    bool ok = sl->rank == sh->rank && (sl->rank == 0 || per_channel) &&
              (!per_channel || (sx->rank != 0 && sl->dims[0] == sh->dims[0] &&
                                (channels == WEFT_DIM_ANY || sl->dims[0] == WEFT_DIM_ANY ||
                                 sl->dims[0] == channels)));
    if (!ok) {
        char s1[WEFT__SPEC_STR_MAX], s2[WEFT__SPEC_STR_MAX], s3[WEFT__SPEC_STR_MAX];
        return weft__ctx_fail(cx, WEFT_ESHAPE, "%s: min %s and max %s are not both scalars, or "
                              "both [d] for x %s [..., d]", fn, weft__spec_str(sl, s1, sizeof s1),
                              weft__spec_str(sh, s2, sizeof s2), weft__spec_str(sx, s3, sizeof s3));
    }
    min = weft_cast(cx, min, WEFT_F32);
    max = weft_cast(cx, max, WEFT_F32);
    /* TensorFlow's Nudge on values: one per channel. */
    weft_value *width = weft_sub(cx, max, min), *levels = num(cx, quant_max - quant_min);
    weft_value *scale = weft_truediv(cx, width, levels);
    weft_value *inv_scale = weft_truediv(cx, levels, width);
    weft_value *zero_from_min = weft_sub(cx, num(cx, quant_min), weft_truediv(cx, min, scale));
    weft_value *zero = round_half_up(cx, weft_clip(cx, zero_from_min, num(cx, quant_min),
                                                   num(cx, quant_max)));
    weft_value *nudged_min = weft_mul(cx, weft_sub(cx, num(cx, quant_min), zero), scale);
    weft_value *nudged_max = weft_mul(cx, weft_sub(cx, num(cx, quant_max), zero), scale);
    weft_value *quant_zero =
        weft_floor(cx, weft_add(cx, weft_mul(cx, weft_neg(cx, nudged_min), inv_scale),
                                num(cx, 0.5)));
    weft_value *y = snap(cx, x, nudged_min, nudged_max, scale, per_channel ? inv_scale : NULL,
                         quant_zero);
    /* min == max == 0 gives zeros (TensorFlow's special case). */
    weft_value *both_zero = weft_logical_and(cx, weft_eq(cx, min, num(cx, 0)),
                                             weft_eq(cx, max, num(cx, 0)));
    return WEFT__KEEP(weft_where(cx, both_zero, num(cx, 0), y));
}
