/* weft_sample_distorted_bounding_box: over many seeds each crop is the
 * whole image or lies within it, keeps its area in the range (TensorFlow's
 * float bounds), has at least 10 pixels and covers enough of a box (in
 * TensorFlow's pixel rectangles), and its box output is its edges over the
 * sides; the same seed gives the same crop eagerly and traced on 1, 2
 * and 4 workers; impossible constraints give the whole image; no boxes
 * (allowed or not), boxes outside [0, 1] and the refused calls. */
#include <math.h>
#include <string.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_sample_box, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

typedef struct box_case {
    double covered, aspect[2], area[2];
    int64_t attempts;
    bool use_image;
} box_case;

static int box_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const box_case *c = user;
    return weft_sample_distorted_bounding_box(cx, a[0], a[1], a[2], c->covered, c->aspect,
                                              c->area, c->attempts, c->use_image, outs);
}

static weft_tensor *image_size(int64_t h, int64_t w)
{
    int32_t v[3] = { (int32_t)h, (int32_t)w, 3 };
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_I32, 1, (const int64_t[]){ 3 }, v, &t), 0);
    return t;
}

static weft_tensor *boxes_of(int64_t n, const float *v)
{
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_F32, 3, (const int64_t[]){ 1, n, 4 }, v, &t), 0);
    return t;
}

static weft_tensor *seed_of(int64_t s)
{
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_I64, 0, NULL, &s, &t), 0);
    return t;
}

/* One crop's outputs: y, x, h, w, checked for shape and the box output. */
static void crop_of(weft_tensor *const *out, int64_t H, int64_t W, int64_t crop[4])
{
    test_assert_shape(out[0], WEFT_I32, 1, (const int64_t[]){ 3 }, "begin");
    test_assert_shape(out[1], WEFT_I32, 1, (const int64_t[]){ 3 }, "size");
    test_assert_shape(out[2], WEFT_F32, 3, (const int64_t[]){ 1, 1, 4 }, "box");
    const int32_t *b = weft_tensor_data(out[0]), *s = weft_tensor_data(out[1]);
    cr_assert(b[2] == 0 && s[2] == -1, "begin %d, size %d on the channels", b[2], s[2]);
    crop[0] = b[0];
    crop[1] = b[1];
    crop[2] = s[0];
    crop[3] = s[1];
    cr_assert(crop[0] >= 0 && crop[1] >= 0 && crop[2] > 0 && crop[3] > 0 &&
              crop[0] + crop[2] <= H && crop[1] + crop[3] <= W,
              "crop %lld %lld %lld %lld outside %lld x %lld", (long long)crop[0],
              (long long)crop[1], (long long)crop[2], (long long)crop[3], (long long)H,
              (long long)W);
    const float *bx = weft_tensor_data(out[2]);
    const float want[4] = { (float)crop[0] / (float)H, (float)crop[1] / (float)W,
                            (float)(crop[0] + crop[2]) / (float)H,
                            (float)(crop[1] + crop[3]) / (float)W };
    cr_assert(memcmp(bx, want, sizeof want) == 0, "box %g %g %g %g", bx[0], bx[1], bx[2], bx[3]);
}

static void release_all(weft_tensor **t, int n)
{
    for (int k = 0; k < n; k++)
        weft_tensor_release(t[k]);
}

/* 300 seeds: every crop within the rules, and they differ. */
Test(ops_sample_box, crops_keep_the_rules)
{
    enum { H = 100, W = 150, SEEDS = 300 };
    const float box[4] = { 0.1f, 0.2f, 0.6f, 0.7f };
    box_case c = { 0.5, { 0.75, 1.33 }, { 0.05, 1.0 }, 100, false };
    weft_tensor *args[3] = { image_size(H, W), boxes_of(1, box), NULL };
    /* TensorFlow's pixel rectangle of the box. */
    int64_t bx0 = (int64_t)(box[1] * (float)W), by0 = (int64_t)(box[0] * (float)H);
    int64_t bx1 = (int64_t)(box[3] * (float)W), by1 = (int64_t)(box[2] * (float)H);
    float min_area = (float)c.area[0] * (float)W * (float)H, max_area = (float)c.area[1] * W * H;
    int whole = 0, distinct = 0;
    int64_t last[4] = { -1, -1, -1, -1 };
    for (int64_t s = 0; s < SEEDS; s++) {
        args[2] = seed_of(s * 7919 + 1);
        weft_tensor *out[3];
        cr_assert_eq(op_call(rts[0], box_body, &c, args, 3, out, 3, true), 0, "%s",
                     weft_errmsg());
        int64_t crop[4];
        crop_of(out, H, W, crop);
        if (crop[0] == 0 && crop[1] == 0 && crop[2] == H && crop[3] == W) {
            whole++;
        } else {
            float area = (float)(crop[2] * crop[3]);
            cr_assert(area >= min_area && area <= max_area && area >= 10, "seed %lld: area %g",
                      (long long)s, area);
            int64_t ix = (crop[1] + crop[3] < bx1 ? crop[1] + crop[3] : bx1) -
                         (crop[1] > bx0 ? crop[1] : bx0);
            int64_t iy = (crop[0] + crop[2] < by1 ? crop[0] + crop[2] : by1) -
                         (crop[0] > by0 ? crop[0] : by0);
            float inter = ix > 0 && iy > 0 ? (float)(ix * iy) : 0;
            cr_assert(inter / (float)((bx1 - bx0) * (by1 - by0)) >= (float)c.covered,
                      "seed %lld: the crop covers %g of the box", (long long)s,
                      inter / (float)((bx1 - bx0) * (by1 - by0)));
            /* The aspect ratio, within the rounding of the width. */
            double ratio = (double)crop[3] / (double)crop[2];
            cr_assert(ratio >= 0.75 - 1.0 / crop[2] && ratio <= 1.33 + 1.0 / crop[2],
                      "seed %lld: aspect ratio %g", (long long)s, ratio);
        }
        distinct += memcmp(crop, last, sizeof crop) != 0;
        memcpy(last, crop, sizeof crop);
        release_all(out, 3);
        weft_tensor_release(args[2]);
    }
    cr_expect_lt(whole, SEEDS / 10, "%d of %d crops fell back to the whole image", whole, SEEDS);
    cr_expect_gt(distinct, SEEDS / 2, "only %d crops changed from one seed to the next", distinct);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

/* The same seed gives the same crop everywhere, and a traced function
 * serves new seeds without a retrace. */
Test(ops_sample_box, same_seed_same_crop_everywhere)
{
    const float boxes[8] = { 0.0f, 0.0f, 0.3f, 0.3f, 0.5f, 0.5f, 0.9f, 1.0f };
    box_case c = { 0.3, { 0.5, 2.0 }, { 0.1, 0.8 }, 50, false };
    weft_tensor *args[3] = { image_size(64, 48), boxes_of(2, boxes), seed_of(42) }, *out[3];
    op_results_everywhere(box_body, &c, args, 3, out, 3, "seed 42");
    int64_t crop[4];
    crop_of(out, 64, 48, crop);
    release_all(out, 3);
    weft_spec sig[3];
    for (int i = 0; i < 3; i++)
        weft_tensor_spec(args[i], &sig[i]);
    weft_function_desc fd = { .name = "box", .body = box_body, .user = &c, .n_args = 3,
                              .n_outs = 3, .input_signature = sig };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rts[1], &fd, &f), 0, "%s", weft_errmsg());
    for (int64_t s = 0; s < 5; s++) {
        weft_tensor *seed = seed_of(s);
        weft_arg a[3] = { weft_arg_tensor(args[0]), weft_arg_tensor(args[1]),
                          weft_arg_tensor(seed) };
        cr_assert_eq(weft_function_call(f, a, 3, out, 3), 0, "%s", weft_errmsg());
        crop_of(out, 64, 48, crop);
        release_all(out, 3);
        weft_tensor_release(seed);
    }
    cr_expect_eq(weft_function_tracing_count(f), 1);
    weft_function_destroy(&f);
    release_all(args, 3);
}

/* Covering all of the image with at most 6% of its area cannot be done:
 * the whole image; no boxes with use_image: a crop of at least 10%. */
Test(ops_sample_box, impossible_constraints_and_no_boxes)
{
    const float whole_box[4] = { 0, 0, 1, 1 };
    box_case c = { 1.0, { 0.75, 1.33 }, { 0.05, 0.06 }, 100, false };
    weft_tensor *args[3] = { image_size(80, 90), boxes_of(1, whole_box), seed_of(7) }, *out[3];
    op_results_everywhere(box_body, &c, args, 3, out, 3, "impossible");
    int64_t crop[4];
    crop_of(out, 80, 90, crop);
    cr_expect(crop[0] == 0 && crop[1] == 0 && crop[2] == 80 && crop[3] == 90);
    release_all(out, 3);
    weft_tensor_release(args[0]);

    /* A 10 x 10 image and crops of at most 5 pixels: under TensorFlow's
     * least crop of 10 pixels, so the whole image. */
    args[0] = image_size(10, 10);
    c = (box_case){ 0.0, { 0.75, 1.33 }, { 0.01, 0.05 }, 100, false };
    op_results_everywhere(box_body, &c, args, 3, out, 3, "tiny crops");
    crop_of(out, 10, 10, crop);
    cr_expect(crop[2] == 10 && crop[3] == 10, "a crop of %lld x %lld", (long long)crop[2],
              (long long)crop[3]);
    release_all(out, 3);
    weft_tensor_release(args[0]);
    args[0] = image_size(80, 90);
    weft_tensor_release(args[1]);

    args[1] = boxes_of(0, whole_box);
    c = (box_case){ 0.1, { 0.75, 1.33 }, { 0.3, 0.5 }, 100, true };
    op_results_everywhere(box_body, &c, args, 3, out, 3, "no boxes");
    crop_of(out, 80, 90, crop);
    double frac = (double)(crop[2] * crop[3]) / (80.0 * 90.0);
    cr_expect(frac >= 0.3 - 1e-6 && frac <= 0.5 + 1e-6, "area fraction %g", frac);
    release_all(out, 3);
    c.use_image = false;
    cr_expect_eq(op_call(rts[0], box_body, &c, args, 3, out, 3, true), WEFT_EINVAL);
    cr_expect(strstr(weft_errmsg(), "no bounding boxes, and use_image_if_no_bounding_boxes is "
                                    "false") != NULL, "%s", weft_errmsg());
    weft_tensor_release(args[1]);
    const float outside[4] = { 0, 0, 1.5f, 1 };
    args[1] = boxes_of(1, outside);
    cr_expect_eq(op_call(rts[0], box_body, &c, args, 3, out, 3, false), WEFT_EINVAL);
    cr_expect(strstr(weft_errmsg(), "box 0 has a coordinate 1.5 outside [0, 1]") != NULL, "%s",
              weft_errmsg());
    release_all(args, 3);
}

typedef enum box_bad {
    COVERED, ASPECT, AREA, ATTEMPTS, SIZE_DTYPE, BOXES_DTYPE, SEED_DTYPE
} box_bad;

/* args: image_size i32 [3], boxes f32 [1, 1, 4], seed i64, f32 [3]. */
static int bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    box_bad which = *(const int *)user;
    box_case c = { 0.1, { 0.75, 1.33 }, { 0.05, 1.0 }, 100, false };
    weft_value *size = a[0], *boxes = a[1], *seed = a[2], *res[3];
    switch (which) {
    case COVERED: c.covered = -1; break;
    case ASPECT: c.aspect[0] = 2; c.aspect[1] = 1; break;
    case AREA: c.area[1] = 1.5; break;
    case ATTEMPTS: c.attempts = 0; break;
    case SIZE_DTYPE: size = a[3]; break;
    case BOXES_DTYPE: boxes = weft_cast(cx, boxes, WEFT_F64); break;
    case SEED_DTYPE: seed = a[3]; break;
    }
    int rc = weft_sample_distorted_bounding_box(cx, size, boxes, seed, c.covered, c.aspect,
                                                c.area, c.attempts, c.use_image, res);
    outs[0] = rc == 0 ? res[0] : NULL;
    return weft_ctx_status(cx);
}

Test(ops_sample_box, refused_calls_name_the_op)
{
    const float box[4] = { 0, 0, 1, 1 }, f3[3] = { 10, 10, 3 };
    weft_tensor *args[4] = { image_size(10, 10), boxes_of(1, box), seed_of(1), NULL };
    cr_assert_eq(weft_tensor_create(WEFT_F32, 1, (const int64_t[]){ 3 }, f3, &args[3]), 0);
    const op_error_case cases[] = {
        { COVERED, WEFT_EINVAL, "weft_sample_distorted_bounding_box: min_object_covered -1 is "
                                "not finite and >= 0" },
        { ASPECT, WEFT_EINVAL, "weft_sample_distorted_bounding_box: aspect_ratio_range [2, 1] "
                               "is not a range of positive numbers" },
        { AREA, WEFT_EINVAL, "weft_sample_distorted_bounding_box: area_range [0.05, 1.5] is not "
                             "a range of numbers in (0, 1]" },
        { ATTEMPTS, WEFT_EINVAL, "weft_sample_distorted_bounding_box: max_attempts 0 is not "
                                 "within 1.." },
        { SIZE_DTYPE, WEFT_EDTYPE, "weft_sample_distorted_bounding_box: image_size f32[3] is "
                                   "not i32 or i64 [3]" },
        { BOXES_DTYPE, WEFT_EDTYPE, "weft_sample_distorted_bounding_box: the bounding boxes "
                                    "f64[1,1,4] are not f32 [batch, n, 4]" },
        { SEED_DTYPE, WEFT_EINVAL, "weft_sample_distorted_bounding_box: the seed" },
    };
    op_expect_errors(rts[1], bad_body, cases, sizeof cases / sizeof *cases, args, 4);
    release_all(args, 4);
}
