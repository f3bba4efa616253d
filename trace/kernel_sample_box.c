/* sample_distorted_bounding_box: TensorFlow's SampleDistortedBoundingBox
 * kernel with weft's random stream.
 *
 * The boxes ([y_min, x_min, y_max, x_max] in [0, 1], all of them whatever
 * their batch) become pixel rectangles (each coordinate times the image's
 * side, truncated); with none, the whole image stands in (when allowed).
 * Each attempt draws an aspect ratio in its range and makes a crop of it
 * as TensorFlow's GenerateRandomCrop does (a height between those of the
 * least and the most area, the width rounded from it, one step up or down
 * to land in the area range, then a uniform position); the first crop of
 * at least 10 pixels that covers min_object_covered of some box's area is
 * the result, else the whole image.  The draws of attempt a are the four
 * 32-bit words of Philox block a under the seed: the aspect ratio, the
 * height step, the row and the column.  The result is i64 [4]: the crop's
 * row, column, height and width. */
#include <math.h>

#include "runtime/iface.h"
#include "trace/shape.h"
#include "trace/tensor_impl.h"

typedef struct rect {
    int64_t min_x, min_y, max_x, max_y;
} rect;

static int64_t rect_area(rect r)
{
    return (r.max_x - r.min_x) * (r.max_y - r.min_y);
}

static rect rect_intersect(rect a, rect b)
{
    rect r = { a.min_x > b.min_x ? a.min_x : b.min_x, a.min_y > b.min_y ? a.min_y : b.min_y,
               a.max_x < b.max_x ? a.max_x : b.max_x, a.max_y < b.max_y ? a.max_y : b.max_y };
    if (r.min_x > r.max_x || r.min_y > r.max_y)
        return (rect){ 0, 0, 0, 0 };
    return r;
}

/* A uniform integer in [0, n) from a 32-bit word (the high half of a
 * product: within n / 2^32 of uniform). */
static int64_t uniform_below(uint32_t word, int64_t n)
{
    return (int64_t)(((uint64_t)word * (uint64_t)n) >> 32);
}

/* TensorFlow's GenerateRandomCrop, in its float arithmetic; false when no
 * crop of this aspect ratio fits the area range. */
static bool random_crop(int64_t width, int64_t height, float min_rel, float max_rel, float aspect,
                        const uint32_t draw[4], rect *crop)
{
    if (max_rel <= 0 || aspect <= 0 || min_rel > max_rel)
        return false;
    const float min_area = min_rel * (float)width * (float)height;
    const float max_area = max_rel * (float)width * (float)height;
    int64_t h = lrintf(sqrtf(min_area / aspect));
    int64_t max_h = lrintf(sqrtf(max_area / aspect));
    if (lrintf((float)max_h * aspect) > width) {
        const float eps = 0.0000001f;
        max_h = (int64_t)(((double)width + 0.5 - eps) / aspect);
        if (lrintf((float)max_h * aspect) > width)
            max_h -= 1;
    }
    if (max_h > height)
        max_h = height;
    if (h >= max_h)
        h = max_h;
    if (h < max_h)
        h += uniform_below(draw[1], max_h - h + 1);
    int64_t w = lrintf((float)h * aspect);
    float area = (float)(w * h);
    if (area < min_area) {
        h += 1;
        w = lrintf((float)h * aspect);
        area = (float)(w * h);
    }
    if (area > max_area) {
        h -= 1;
        w = lrintf((float)h * aspect);
        area = (float)(w * h);
    }
    if (area < min_area || area > max_area || w > width || h > height || w <= 0 || h <= 0)
        return false;
    int64_t y = h < height ? uniform_below(draw[2], height - h) : 0;
    int64_t x = w < width ? uniform_below(draw[3], width - w) : 0;
    *crop = (rect){ x, y, x + w, y + h };
    return true;
}

/* TensorFlow's SatisfiesOverlapConstraints. */
static bool covers(rect crop, float min_covered, const rect *boxes, int64_t n)
{
    if (rect_area(crop) < 10)
        return false;
    for (int64_t i = 0; i < n; i++) {
        if (rect_area(boxes[i]) <= 0)
            continue;
        float object = (float)rect_area(boxes[i]);
        float inter = (float)rect_area(rect_intersect(crop, boxes[i]));
        if (inter / object >= min_covered)
            return true;
    }
    return false;
}

int weft__eval_sample_box(const weft__node *n, weft_tensor *const *in, weft_tensor *out)
{
    static const char fn[] = "weft_sample_distorted_bounding_box";
    const weft_tensor *size = in[0], *boxes = in[1];
    if (size->numel != 3)
        return weft__errorf(WEFT_ESHAPE, "%s: image_size has %lld elements, not 3", fn,
                            (long long)size->numel);
    int64_t height = weft__tensor_int_at(size, 0);
    int64_t width = weft__tensor_int_at(size, 1);
    if (height <= 0 || width <= 0 || height > INT32_MAX || width > INT32_MAX)
        return weft__errorf(WEFT_EINVAL, "%s: an image of %lld x %lld pixels", fn,
                            (long long)height, (long long)width);
    uint32_t key[2], stream[2];
    int rc = weft__random_key(n, in[2], key, stream);
    if (rc < 0)
        return rc;
    int64_t nb = boxes->numel / 4;
    rect *r = weft__malloc(sizeof *r * (size_t)(nb + 1));
    if (!r)
        return weft__errorf(WEFT_ENOMEM, "%s: out of memory for %lld boxes", fn, (long long)nb);
    const float *b = weft_tensor_data(boxes);
    for (int64_t i = 0; i < nb; i++) {
        for (int k = 0; k < 4; k++)
            if (!(b[4 * i + k] >= 0 && b[4 * i + k] <= 1)) {
                weft__free(r);
                return weft__errorf(WEFT_EINVAL, "%s: box %lld has a coordinate %g outside "
                                    "[0, 1]", fn, (long long)i, (double)b[4 * i + k]);
            }
        r[i] = (rect){ (int64_t)(b[4 * i + 1] * (float)width), (int64_t)(b[4 * i] * (float)height),
                       (int64_t)(b[4 * i + 3] * (float)width),
                       (int64_t)(b[4 * i + 2] * (float)height) };
    }
    rect image = { 0, 0, width, height };
    if (nb == 0) {
        if (!n->attr.sample_box.use_image) {
            weft__free(r);
            return weft__errorf(WEFT_EINVAL, "%s: no bounding boxes, and "
                                "use_image_if_no_bounding_boxes is false", fn);
        }
        r[nb++] = image;
    }
    const float lo = (float)n->attr.sample_box.aspect[0], hi = (float)n->attr.sample_box.aspect[1];
    rect crop = image;
    for (int64_t a = 0; a < n->attr.sample_box.attempts; a++) {
        uint32_t draw[4];
        weft__random_block(key, stream, (uint64_t)a, draw);
        float aspect = (float)((draw[0] >> 8) * 0x1p-24) * (hi - lo) + lo;
        rect c;
        if (random_crop(width, height, (float)n->attr.sample_box.area[0],
                        (float)n->attr.sample_box.area[1], aspect, draw, &c) &&
            covers(c, (float)n->attr.sample_box.covered, r, nb)) {
            crop = c;
            break;
        }
    }
    weft__free(r);
    int64_t *o = weft__tensor_mut(out);
    o[0] = crop.min_y;
    o[1] = crop.min_x;
    o[2] = crop.max_y - crop.min_y;
    o[3] = crop.max_x - crop.min_x;
    return 0;
}

int weft__infer_sample_box(const weft_spec *in, weft_spec *out)
{
    static const char fn[] = "weft_sample_distorted_bounding_box";
    const weft_spec *size = &in[0], *boxes = &in[1];
    char s[WEFT__SPEC_STR_MAX];
    if ((size->dtype != WEFT_I32 && size->dtype != WEFT_I64) || size->rank != 1 ||
        (size->dims[0] != 3 && size->dims[0] != WEFT_DIM_ANY))
        return weft__errorf(size->dtype != WEFT_I32 && size->dtype != WEFT_I64 ? WEFT_EDTYPE
                                                                               : WEFT_ESHAPE,
                            "%s: image_size %s is not i32 or i64 [3] (height, width, "
                            "channels)", fn, weft__spec_str(size, s, sizeof s));
    if (boxes->dtype != WEFT_F32 || boxes->rank != 3 ||
        (boxes->dims[2] != 4 && boxes->dims[2] != WEFT_DIM_ANY))
        return weft__errorf(boxes->dtype != WEFT_F32 ? WEFT_EDTYPE : WEFT_ESHAPE,
                            "%s: the bounding boxes %s are not f32 [batch, n, 4]", fn,
                            weft__spec_str(boxes, s, sizeof s));
    int rc = weft__check_seed(fn, &in[2]);
    if (rc < 0)
        return rc;
    *out = (weft_spec){ .dtype = WEFT_I64, .rank = 1, .dims = { 4 } };
    return 0;
}
