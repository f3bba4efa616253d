/* image_projective_transform against TensorFlow's generator written out
 * here (bit for bit on f32 images) for both interpolations, the four fill
 * modes, one transform for all images or one each, coordinates far
 * outside the image and k == 0; f64 images; a single image; rotate by a
 * quarter turn is rot90, and by 0 the image itself; translate by whole
 * pixels; draw_bounding_boxes against TensorFlow's kernel written out
 * here; the refused calls.
 * Eagerly and traced on 1, 2 and 4 workers, the same bits. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_transform, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

typedef struct tr_case {
    int form;   /* 0: projective transform, 1: rotate, 2: translate, 3: zoom */
    weft_resize_method interpolation;
    weft_fill_mode mode;
    double fill;
    const int64_t *out_hw;
} tr_case;

static int tr_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const tr_case *c = user;
    switch (c->form) {
    case 1: outs[0] = weft_rotate(cx, a[0], a[1], c->interpolation, c->mode, c->fill); break;
    case 2: outs[0] = weft_translate(cx, a[0], a[1], c->interpolation, c->mode, c->fill); break;
    case 3: outs[0] = weft_zoom(cx, a[0], a[1], c->interpolation, c->mode, c->fill); break;
    default:
        outs[0] = weft_image_projective_transform(cx, a[0], a[1], c->out_hw, c->interpolation,
                                                  c->mode, c->fill);
        break;
    }
    return weft_ctx_status(cx);
}

/* ---- TensorFlow's generator (image_ops.h), in its own types ---------- */

static float tf_map(weft_fill_mode mode, float in, int64_t len)
{
    switch (mode) {
    case WEFT_FILL_REFLECT:
        if (in < 0) {
            if (len <= 1) {
                in = 0;
            } else {
                const int64_t sz2 = 2 * len;
                if (in < sz2)
                    in = sz2 * (int64_t)(-in / sz2) + in;
                in = (in < -len) ? in + sz2 : -in - 1;
            }
        } else if (in > len - 1) {
            if (len <= 1) {
                in = 0;
            } else {
                const int64_t sz2 = 2 * len;
                in -= sz2 * (int64_t)(in / sz2);
                if (in >= len)
                    in = sz2 - in - 1;
            }
        }
        return in < 0 ? 0 : in > len - 1 ? len - 1 : in;
    case WEFT_FILL_WRAP:
        if (in < 0) {
            if (len <= 1) {
                in = 0;
            } else {
                const int64_t sz = len - 1;
                in += len * ((int64_t)(-in / sz) + 1);
            }
        } else if (in > len - 1) {
            if (len <= 1) {
                in = 0;
            } else {
                const int64_t sz = len - 1;
                in -= len * (int64_t)(in / sz);
            }
        }
        return in < 0 ? 0 : in > len - 1 ? len - 1 : in;
    case WEFT_FILL_NEAREST:
        return in < 0 ? 0 : in > len - 1 ? len - 1 : in;
    default:
        return in;
    }
}

static float tf_read(const float *im, int64_t h, int64_t w, int64_t c, int64_t y, int64_t x,
                     int64_t ch, float fill)
{
    return 0 <= y && y < h && 0 <= x && x < w ? im[(y * w + x) * c + ch] : fill;
}

static float tf_pixel(const float *im, int64_t h, int64_t w, int64_t c, const float *t,
                      int64_t oy, int64_t ox, int64_t ch, const tr_case *cs)
{
    float fill = (float)cs->fill;
    float projection = t[6] * ox + t[7] * oy + 1.f;
    if (projection == 0)
        return fill;
    float in_x = (t[0] * ox + t[1] * oy + t[2]) / projection;
    float in_y = (t[3] * ox + t[4] * oy + t[5]) / projection;
    float x = tf_map(cs->mode, in_x, w), y = tf_map(cs->mode, in_y, h);
    if (cs->interpolation == WEFT_RESIZE_NEAREST)
        return tf_read(im, h, w, c, (int64_t)roundf(y), (int64_t)roundf(x), ch, fill);
    float y_floor = floorf(y), x_floor = floorf(x), y_ceil = y_floor + 1, x_ceil = x_floor + 1;
    float value_yfloor =
        (x_ceil - x) * tf_read(im, h, w, c, (int64_t)y_floor, (int64_t)x_floor, ch, fill) +
        (x - x_floor) * tf_read(im, h, w, c, (int64_t)y_floor, (int64_t)x_ceil, ch, fill);
    float value_yceil =
        (x_ceil - x) * tf_read(im, h, w, c, (int64_t)y_ceil, (int64_t)x_floor, ch, fill) +
        (x - x_floor) * tf_read(im, h, w, c, (int64_t)y_ceil, (int64_t)x_ceil, ch, fill);
    return (y_ceil - y) * value_yfloor + (y - y_floor) * value_yceil;
}

/* ---------------------------------------------------------------------- */

static double *draws(size_t n, double lo, double hi, uint64_t seed)
{
    double *v = malloc(n * sizeof *v);
    cr_assert_not_null(v);
    uint64_t s = seed * 7919 + 5;
    for (size_t i = 0; i < n; i++)
        v[i] = lo + (hi - lo) * (op_uniform(&s) + 1) / 2;
    return v;
}

Test(ops_transform, like_tensorflow_in_every_mode)
{
    enum { B = 2, H = 7, W = 9, C = 3, OH = 6, OW = 10 };
    double *pix = draws(B * H * W * C, -1, 1, 1);
    /* Rotation, scale and shear well past the borders, a small
     * perspective, and a transform whose k reaches 0 at output (2, 1). */
    double t[2][8] = { { 1.3, -0.6, -4.0, 0.7, 1.1, -3.0, 0.01, -0.02 },
                       { -0.5, 0.25, 2.5, 0.4, -0.5, 1.0, -0.5, 0.0 } };
    float tf32[16];
    for (int i = 0; i < 16; i++)
        tf32[i] = (float)t[i / 8][i % 8];
    weft_tensor *images = test_tensor(WEFT_F32, 4, (int64_t[]){ B, H, W, C }, pix);
    weft_tensor *per_image = test_tensor(WEFT_F32, 2, (int64_t[]){ 2, 8 }, &t[0][0]);
    weft_tensor *shared = test_tensor(WEFT_F32, 2, (int64_t[]){ 1, 8 }, &t[0][0]);
    const float *im = weft_tensor_data(images);
    const int64_t out_hw[2] = { OH, OW };
    for (int interp = 0; interp < 2; interp++)
        for (int mode = 0; mode < 4; mode++)
            for (int each = 0; each < 2; each++) {
                tr_case c = { 0, interp ? WEFT_RESIZE_NEAREST : WEFT_RESIZE_BILINEAR,
                              (weft_fill_mode)mode, -0.25, out_hw };
                weft_tensor *args[2] = { images, each ? per_image : shared }, *out;
                char what[64];
                snprintf(what, sizeof what, "interpolation %d, mode %d, %s", interp, mode,
                         each ? "one each" : "shared");
                op_results_everywhere(tr_body, &c, args, 2, &out, 1, what);
                test_assert_shape(out, WEFT_F32, 4, (int64_t[]){ B, OH, OW, C }, what);
                const float *y = weft_tensor_data(out);
                for (int64_t b = 0; b < B; b++)
                    for (int64_t oy = 0; oy < OH; oy++)
                        for (int64_t ox = 0; ox < OW; ox++)
                            for (int64_t ch = 0; ch < C; ch++) {
                                float want = tf_pixel(im + b * H * W * C, H, W, C,
                                                      tf32 + (each ? 8 * b : 0), oy, ox, ch, &c);
                                float got = y[((b * OH + oy) * OW + ox) * C + ch];
                                cr_assert(got == want, "%s: [%lld,%lld,%lld,%lld] %.9g, TF %.9g",
                                          what, (long long)b, (long long)oy, (long long)ox,
                                          (long long)ch, got, want);
                            }
                weft_tensor_release(out);
            }
    weft_tensor_release(images);
    weft_tensor_release(per_image);
    weft_tensor_release(shared);
    free(pix);
}

/* f64 pixels, interpolated in double: within rounding of the float
 * reference's arithmetic done in double; the identity gives the image. */
Test(ops_transform, f64_images_and_the_identity)
{
    enum { H = 5, W = 6, C = 2 };
    double *pix = draws(H * W * C, 0, 1, 2);
    weft_tensor *image = test_tensor(WEFT_F64, 3, (int64_t[]){ H, W, C }, pix);
    weft_tensor *identity = test_tensor(WEFT_F32, 2, (int64_t[]){ 1, 8 },
                                        (double[]){ 1, 0, 0, 0, 1, 0, 0, 0 });
    tr_case c = { 0, WEFT_RESIZE_BILINEAR, WEFT_FILL_REFLECT, 0, NULL };
    weft_tensor *args[2] = { image, identity }, *out;
    op_results_everywhere(tr_body, &c, args, 2, &out, 1, "identity");
    test_assert_shape(out, WEFT_F64, 3, (int64_t[]){ H, W, C }, "identity");
    cr_assert(op_same_bits(out, image), "the identity changed the image");
    weft_tensor_release(out);
    /* A half-pixel shift right and down: each output is the mean of four
     * pixels (the last row and column reflect onto themselves). */
    weft_tensor *shift = test_tensor(WEFT_F32, 2, (int64_t[]){ 1, 8 },
                                     (double[]){ 1, 0, 0.5, 0, 1, 0.5, 0, 0 });
    args[1] = shift;
    op_results_everywhere(tr_body, &c, args, 2, &out, 1, "half pixel");
    for (int64_t y = 0; y < H; y++)
        for (int64_t x = 0; x < W; x++)
            for (int64_t ch = 0; ch < C; ch++) {
                int64_t y1 = y + 1 < H ? y + 1 : H - 1, x1 = x + 1 < W ? x + 1 : W - 1;
                double want = y + 1 < H && x + 1 < W
                                  ? 0.25 * (pix[(y * W + x) * C + ch] + pix[(y * W + x1) * C + ch] +
                                            pix[(y1 * W + x) * C + ch] + pix[(y1 * W + x1) * C + ch])
                                  : NAN;
                double got = test_element(out, (y * W + x) * C + ch);
                if (!isnan(want))
                    cr_assert(fabs(got - want) <= 1e-15, "(%lld, %lld): %.17g, want %.17g",
                              (long long)y, (long long)x, got, want);
            }
    weft_tensor_release(out);
    weft_tensor_release(shift);
    weft_tensor_release(identity);
    weft_tensor_release(image);
    free(pix);
}

static int rot90_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    outs[0] = weft_rot90(cx, a[0], *(const int *)user);
    return weft_ctx_status(cx);
}

/* A quarter turn counterclockwise, nearest, is rot90 once; three
 * quarters is rot90 three times; angle 0 is the image. */
Test(ops_transform, rotate_by_quarter_turns_is_rot90)
{
    enum { B = 2, N = 6, C = 2 };
    double *pix = draws(B * N * N * C, -1, 1, 3);
    weft_tensor *images = test_tensor(WEFT_F32, 4, (int64_t[]){ B, N, N, C }, pix);
    const double angles[3] = { M_PI / 2, 3 * M_PI / 2, 0 };
    const int quarters[3] = { 1, 3, 0 };
    for (int k = 0; k < 3; k++) {
        weft_tensor *angle = test_tensor(WEFT_F64, 1, (int64_t[]){ B },
                                         (double[]){ angles[k], angles[k] });
        tr_case c = { 1, WEFT_RESIZE_NEAREST, WEFT_FILL_CONSTANT, 0, NULL };
        weft_tensor *args[2] = { images, angle }, *turned, *want;
        op_results_everywhere(tr_body, &c, args, 2, &turned, 1, "rotate");
        cr_assert_eq(op_call(rts[0], rot90_body, (void *)&quarters[k], &images, 1, &want, 1,
                             true), 0);
        cr_assert(op_same_bits(turned, want), "%d quarter turns differ from rot90", quarters[k]);
        weft_tensor_release(turned);
        weft_tensor_release(want);
        weft_tensor_release(angle);
    }
    weft_tensor_release(images);
    free(pix);
}

/* Whole-pixel shifts, one pair for every image and one pair each: out[y][x]
 * = in[y - dy][x - dx], the fill value where that is outside. */
Test(ops_transform, translate_shifts_by_whole_pixels)
{
    enum { B = 2, H = 4, W = 5, C = 1 };
    double *pix = draws(B * H * W * C, -1, 1, 4);
    weft_tensor *images = test_tensor(WEFT_F32, 4, (int64_t[]){ B, H, W, C }, pix);
    const double shared[2] = { 2, -1 }, each[4] = { 2, -1, -3, 2 };
    for (int per = 0; per < 2; per++) {
        weft_tensor *shift = per ? test_tensor(WEFT_F64, 2, (int64_t[]){ B, 2 }, each)
                                 : test_tensor(WEFT_F64, 1, (int64_t[]){ 2 }, shared);
        tr_case c = { 2, WEFT_RESIZE_BILINEAR, WEFT_FILL_CONSTANT, 9, NULL };
        weft_tensor *args[2] = { images, shift }, *out;
        op_results_everywhere(tr_body, &c, args, 2, &out, 1, "translate");
        for (int64_t b = 0; b < B; b++) {
            const double *d = per ? each + 2 * b : shared;
            for (int64_t y = 0; y < H; y++)
                for (int64_t x = 0; x < W; x++) {
                    int64_t sy = y - (int64_t)d[1], sx = x - (int64_t)d[0];
                    float want = sy >= 0 && sy < H && sx >= 0 && sx < W
                                     ? (float)pix[(b * H + sy) * W + sx] : 9.0f;
                    double got = test_element(out, (b * H + y) * W + x);
                    cr_assert(got == want, "%s image %lld (%lld, %lld): %g, want %g",
                              per ? "per-image" : "shared", (long long)b, (long long)y,
                              (long long)x, got, want);
                }
        }
        weft_tensor_release(out);
        weft_tensor_release(shift);
    }
    weft_tensor_release(images);
    free(pix);
}

/* Zooms about the centre, nearest, constant fill: output (x, y) reads
 * (zx x + (w - 1) / 2 (1 - zx), alike for y) in f32 (Keras's matrix), one
 * pair for all images and one each; zoom 1 is the image. */
Test(ops_transform, zoom_about_the_centre)
{
    enum { B = 2, H = 5, W = 7, C = 1 };
    double *pix = draws(B * H * W * C, -1, 1, 6);
    weft_tensor *images = test_tensor(WEFT_F32, 4, (int64_t[]){ B, H, W, C }, pix);
    const double each[4] = { 0.5, 2.0, 1.5, 0.75 }, same[2] = { 1, 1 };
    for (int form = 0; form < 2; form++) {
        weft_tensor *zooms = form ? test_tensor(WEFT_F64, 2, (int64_t[]){ B, 2 }, each)
                                  : test_tensor(WEFT_F64, 1, (int64_t[]){ 2 }, same);
        tr_case c = { 3, WEFT_RESIZE_NEAREST, WEFT_FILL_CONSTANT, 7, NULL };
        weft_tensor *args[2] = { images, zooms }, *out;
        op_results_everywhere(tr_body, &c, args, 2, &out, 1, "zoom");
        for (int64_t b = 0; b < B; b++) {
            float zx = form ? (float)each[2 * b] : 1, zy = form ? (float)each[2 * b + 1] : 1;
            for (int64_t y = 0; y < H; y++)
                for (int64_t x = 0; x < W; x++) {
                    float dx = (float)((W - 1) / 2.0) * (1 - zx);
                    float dy = (float)((H - 1) / 2.0) * (1 - zy);
                    float sx = roundf(zx * (float)x + dx), sy = roundf(zy * (float)y + dy);
                    float want = sx >= 0 && sx < W && sy >= 0 && sy < H
                                     ? (float)pix[(b * H + (int64_t)sy) * W + (int64_t)sx] : 7.0f;
                    double got = test_element(out, (b * H + y) * W + x);
                    cr_assert(got == want, "form %d image %lld (%lld, %lld): %g, want %g", form,
                              (long long)b, (long long)y, (long long)x, got, want);
                }
        }
        weft_tensor_release(out);
        weft_tensor_release(zooms);
    }
    weft_tensor_release(images);
    free(pix);
}

/* ---- draw_bounding_boxes ---------------------------------------------- */

static int draw_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    outs[0] = weft_draw_bounding_boxes(cx, a[0], a[1], user ? a[2] : NULL);
    return weft_ctx_status(cx);
}

/* TensorFlow's kernel on one image of doubles (colours as f32 values). */
static void tf_draw(double *im, int64_t h, int64_t w, int64_t c, const float *boxes, int64_t n,
                    const float *colors, int64_t k, int64_t stride)
{
    for (int64_t i = 0; i < n; i++) {
        const float *bx = boxes + 4 * i, *col = colors + (i % k) * stride;
        int64_t r0 = (int64_t)(bx[0] * (float)(h - 1)), r1 = (int64_t)(bx[2] * (float)(h - 1));
        int64_t c0 = (int64_t)(bx[1] * (float)(w - 1)), c1 = (int64_t)(bx[3] * (float)(w - 1));
        if (r0 > r1 || c0 > c1 || r0 >= h || r1 < 0 || c0 >= w || c1 < 0)
            continue;
        int64_t r0c = r0 > 0 ? r0 : 0, r1c = r1 < h - 1 ? r1 : h - 1;
        int64_t c0c = c0 > 0 ? c0 : 0, c1c = c1 < w - 1 ? c1 : w - 1;
        for (int64_t x = c0c; x <= c1c; x++)
            for (int64_t ch = 0; ch < c; ch++) {
                if (r0 >= 0)
                    im[(r0 * w + x) * c + ch] = col[ch];
                if (r1 < h)
                    im[(r1 * w + x) * c + ch] = col[ch];
            }
        for (int64_t y = r0c; y <= r1c; y++)
            for (int64_t ch = 0; ch < c; ch++) {
                if (c0 >= 0)
                    im[(y * w + c0) * c + ch] = col[ch];
                if (c1 < w)
                    im[(y * w + c1) * c + ch] = col[ch];
            }
    }
}

/* Boxes inside, crossing each border, inverted, wholly outside, and
 * overlapping (the later one wins), in the default colours (RGB and grey)
 * and in two given colours that cycle; f32 and f64 images. */
Test(ops_transform, draw_bounding_boxes_like_tensorflow)
{
    enum { B = 2, H = 9, W = 11, N = 6 };
    double bx[B * N * 4] = {
        0.1, 0.1, 0.6, 0.5,    -0.2, 0.3, 0.4, 1.3,   0.5, -0.5, 1.5, 0.2,
        0.7, 0.8, 0.2, 0.9,    1.2, 0.1, 1.5, 0.4,    0.0, 0.0, 1.0, 1.0,
        0.3, 0.3, 0.31, 0.9,   0.25, 0.25, 0.75, 0.75, -1, -1, -0.5, 2,
        0.0, 0.5, 1.0, 0.5,    0.9, 0.9, 1.0, 1.0,    0.5, 0.5, 0.5, 0.5,
    };
    float bxf[B * N * 4];
    for (int i = 0; i < B * N * 4; i++)
        bxf[i] = (float)bx[i];
    static const float defaults[10][4] = { { 1, 1, 0, 1 }, { 0, 0, 1, 1 }, { 1, 0, 0, 1 },
                                           { 0, 1, 0, 1 }, { 0.5f, 0, 0.5f, 1 },
                                           { 0.5f, 0.5f, 0, 1 }, { 0.5f, 0, 0, 1 },
                                           { 0, 0, 0.5f, 1 }, { 0, 1, 1, 1 }, { 1, 0, 1, 1 } };
    const float given[2][4] = { { 0.25f, 0.5f, 0.75f, 1 }, { -1, -2, -3, -4 } };
    double given_d[8];
    for (int i = 0; i < 8; i++)
        given_d[i] = given[i / 4][i % 4];
    for (int form = 0; form < 3; form++) {
        int64_t C = form == 1 ? 1 : 3;
        weft_dtype dt = form == 2 ? WEFT_F64 : WEFT_F32;
        double *pix = draws((size_t)(B * H * W * C), -1, 1, 5 + form);
        weft_tensor *args[3] = { test_tensor(dt, 4, (int64_t[]){ B, H, W, C }, pix),
                                 test_tensor(WEFT_F32, 3, (int64_t[]){ B, N, 4 }, bx),
                                 test_tensor(WEFT_F32, 2, (int64_t[]){ 2, 4 }, given_d) };
        bool with_colors = form == 2;
        weft_tensor *out;
        op_results_everywhere(draw_body, with_colors ? (void *)1 : NULL, args, 3, &out, 1,
                              "draw");
        float grey[10][4];
        memcpy(grey, defaults, sizeof grey);
        for (int i = 0; i < 10; i++)
            grey[i][0] = 1;
        for (int64_t b = 0; b < B; b++) {
            double *im = pix + b * H * W * C;
            if (dt == WEFT_F32)
                for (int64_t i = 0; i < H * W * C; i++)
                    im[i] = (float)im[i];
            tf_draw(im, H, W, C, bxf + b * N * 4, N,
                    with_colors ? &given[0][0] : C == 1 ? &grey[0][0] : &defaults[0][0],
                    with_colors ? 2 : 10, 4);
        }
        for (int64_t i = 0; i < B * H * W * C; i++)
            cr_assert(test_element(out, i) == pix[i], "form %d element %lld: %g, want %g", form,
                      (long long)i, test_element(out, i), pix[i]);
        weft_tensor_release(out);
        for (int k = 0; k < 3; k++)
            weft_tensor_release(args[k]);
        free(pix);
    }
}

static int refused_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    static const int64_t zero_hw[2] = { 0, 4 };
    switch (*(const int *)user) {
    case 0:
        outs[0] = weft_image_projective_transform(cx, a[0], a[2], NULL, WEFT_RESIZE_BILINEAR,
                                                  WEFT_FILL_CONSTANT, 0);
        break;
    case 1:
        outs[0] = weft_image_projective_transform(cx, a[0], a[1], NULL, WEFT_RESIZE_AREA,
                                                  WEFT_FILL_CONSTANT, 0);
        break;
    case 2:
        outs[0] = weft_image_projective_transform(cx, a[0], a[1], NULL, WEFT_RESIZE_NEAREST,
                                                  (weft_fill_mode)7, 0);
        break;
    case 3:
        outs[0] = weft_image_projective_transform(cx, a[0], a[1], zero_hw, WEFT_RESIZE_NEAREST,
                                                  WEFT_FILL_WRAP, 0);
        break;
    case 4:
        outs[0] = weft_image_projective_transform(cx, a[1], a[1], NULL, WEFT_RESIZE_NEAREST,
                                                  WEFT_FILL_WRAP, 0);
        break;
    case 5:
        outs[0] = weft_rotate(cx, a[0], a[1], WEFT_RESIZE_NEAREST, WEFT_FILL_WRAP, 0);
        break;
    case 6:
        outs[0] = weft_image_projective_transform(cx, a[0], a[3], NULL, WEFT_RESIZE_NEAREST,
                                                  WEFT_FILL_WRAP, 0);
        break;
    case 7:
        outs[0] = weft_translate(cx, a[0], a[0], WEFT_RESIZE_NEAREST, WEFT_FILL_WRAP, 0);
        break;
    case 8: outs[0] = weft_draw_bounding_boxes(cx, a[0], a[1], NULL); break;
    case 9:
        outs[0] = weft_draw_bounding_boxes(cx, weft_reshape(cx, a[0], 4,
                                                            (const int64_t[]){ 1, 4, 4, 6 }),
                                           weft_reshape(cx, a[1], 3,
                                                        (const int64_t[]){ 1, 2, 4 }),
                                           NULL);
        break;
    }
    return weft_ctx_status(cx);
}

Test(ops_transform, refused_calls)
{
    static const double zeros[3 * 4 * 4 * 2 + 16];
    weft_tensor *args[4] = {
        test_tensor(WEFT_F32, 4, (int64_t[]){ 3, 4, 4, 2 }, zeros),
        test_tensor(WEFT_F32, 2, (int64_t[]){ 1, 8 }, zeros),
        test_tensor(WEFT_F32, 2, (int64_t[]){ 2, 8 }, zeros),
        test_tensor(WEFT_F64, 2, (int64_t[]){ 1, 8 }, zeros),
    };
    static const op_error_case cases[] = {
        { 0, WEFT_ESHAPE, "weft_image_projective_transform: the transforms f32[2,8] are not f32 "
                          "[1 or batch, 8] for the images f32[3,4,4,2]" },
        { 1, WEFT_EINVAL, "weft_image_projective_transform: interpolation 2 is not "
                          "WEFT_RESIZE_BILINEAR or _NEAREST" },
        { 2, WEFT_EINVAL, "weft_image_projective_transform: fill_mode 7 is not a weft_fill_mode" },
        { 3, WEFT_EINVAL, "weft_image_projective_transform: output_hw 0 x 4 is not within 1.." },
        { 4, WEFT_ESHAPE, "weft_image_projective_transform: the images f32[1,8] are not an image "
                          "[h, w, c] or a batch" },
        { 5, WEFT_ESHAPE, "weft_rotate: the angles f32[1,8] are not a scalar or one per image" },
        { 6, WEFT_EDTYPE, "weft_image_projective_transform: the transforms f64[1,8] are not f32" },
        { 7, WEFT_ESHAPE, "weft_translate: the translations f32[3,4,4,2] are not [dx, dy] or one "
                          "[dx, dy] per image" },
        { 8, WEFT_ESHAPE, "weft_draw_bounding_boxes: the images f32[3,4,4,2] are not [batch, h, "
                          "w, 1, 3 or 4]" },
        { 9, WEFT_ESHAPE, "weft_draw_bounding_boxes: the images f32[1,4,4,6] are not" },
    };
    op_expect_errors(rts[1], refused_body, cases, sizeof cases / sizeof cases[0], args, 4);
    for (int k = 0; k < 4; k++)
        weft_tensor_release(args[k]);
}
