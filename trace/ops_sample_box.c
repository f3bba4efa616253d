/* tf.image.stateless_sample_distorted_bounding_box: one SAMPLE_BOX node
 * (trace/kernel_sample_box.c) draws the crop as (row, column, height,
 * width); the op turns it into TensorFlow's three outputs. */
#include <math.h>
#include <stdint.h>

#include "runtime/iface.h"
#include "trace/control.h"
#include "trace/ctx.h"
#include "trace/ops_impl.h"
#include "trace/shape.h"

static const char fn[] = "weft_sample_distorted_bounding_box";

/* lo <= hi, both finite and within (0, max] (max 0: no bound). */
static bool range_ok(weft_ctx *cx, const char *what, const double r[2], double max)
{
    bool ok = isfinite(r[0]) && isfinite(r[1]) && r[0] > 0 && r[0] <= r[1] &&
              (max == 0 || r[1] <= max);
    if (!ok)
        weft__ctx_failf(cx, WEFT_EINVAL, "%s: %s [%g, %g] is not a range of %s", fn, what, r[0],
                        r[1], max == 0 ? "positive numbers" : "numbers in (0, 1]");
    return ok;
}

int weft_sample_distorted_bounding_box(weft_ctx *cx, weft_value *image_size,
                                       weft_value *bounding_boxes, weft_value *seed,
                                       double min_object_covered,
                                       const double *aspect_ratio_range,
                                       const double *area_range, int64_t max_attempts,
                                       bool use_image_if_no_bounding_boxes, weft_value **outs)
{
    WEFT__SCOPE_OUTS(cx, outs, 3);
    weft_value *in[3] = { image_size, bounding_boxes, seed };
    int rc = weft__ctx_enter_int(cx, fn, in, 3, outs, 3);
    if (rc != 0)
        return rc;
    static const double aspect_default[2] = { 0.75, 1.33 }, area_default[2] = { 0.05, 1.0 };
    const double *aspect = aspect_ratio_range ? aspect_ratio_range : aspect_default;
    const double *area = area_range ? area_range : area_default;
    if (!(min_object_covered >= 0) || isinf(min_object_covered))
        return weft__ctx_failf(cx, WEFT_EINVAL, "%s: min_object_covered %g is not finite and "
                               ">= 0", fn, min_object_covered);
    if (!range_ok(cx, "aspect_ratio_range", aspect, 0) || !range_ok(cx, "area_range", area, 1))
        return weft_ctx_status(cx);
    if (max_attempts < 1 || max_attempts > INT32_MAX)
        return weft__ctx_failf(cx, WEFT_EINVAL, "%s: max_attempts %lld is not within 1..%d", fn,
                               (long long)max_attempts, INT32_MAX);
    weft__node n = { .op = WEFT__OP_SAMPLE_BOX };
    n.attr.sample_box.covered = min_object_covered;
    n.attr.sample_box.aspect[0] = aspect[0];
    n.attr.sample_box.aspect[1] = aspect[1];
    n.attr.sample_box.area[0] = area[0];
    n.attr.sample_box.area[1] = area[1];
    n.attr.sample_box.attempts = max_attempts;
    n.attr.sample_box.use_image = use_image_if_no_bounding_boxes;
    weft_value *crop = weft__ops_finish(cx, &n, in, 3);   /* i64 [4]: y, x, h, w */
    if (!crop)
        return weft_ctx_status(cx);
    weft_dtype dt = weft__value_spec(image_size)->dtype;
    int64_t one = 1;
    const double zero = 0, minus_one = -1;
    weft_value *yx = weft__ops_axis_slice(cx, crop, 0, 0, 2);
    weft_value *hw = weft__ops_axis_slice(cx, crop, 0, 2, 4);
    weft_value *begin_parts[2] = { yx, weft__ops_constant(cx, fn, WEFT_F64, 1, &one, &zero,
                                                          WEFT_I64) };
    weft_value *size_parts[2] = { hw, weft__ops_constant(cx, fn, WEFT_F64, 1, &one, &minus_one,
                                                         WEFT_I64) };
    weft_value *begin = weft_cast(cx, weft_concat(cx, begin_parts, 2, 0), dt);
    weft_value *size = weft_cast(cx, weft_concat(cx, size_parts, 2, 0), dt);
    /* TensorFlow's box of the crop: each edge over the side, in f32. */
    weft_value *edges[2] = { yx, weft_add(cx, yx, hw) };
    weft_value *sides_hw = weft_cast(cx, weft__ops_axis_slice(cx, image_size, 0, 0, 2), WEFT_F32);
    weft_value *sides[2] = { sides_hw, sides_hw };
    weft_value *box = weft_div(cx, weft_cast(cx, weft_concat(cx, edges, 2, 0), WEFT_F32),
                               weft_concat(cx, sides, 2, 0));
    int64_t box_dims[3] = { 1, 1, 4 };
    box = weft_reshape(cx, box, 3, box_dims);
    if (weft_ctx_status(cx) == 0) {
        outs[0] = begin;
        outs[1] = size;
        outs[2] = box;
    }
    return weft_ctx_status(cx);
}
