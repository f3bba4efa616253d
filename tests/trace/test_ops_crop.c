/* weft_crop_and_resize: whole-image boxes give the image back (and a
 * flipped box the flipped image), TensorFlow's sampling rule written out
 * here in f64 (bilinear and nearest, boxes partly outside the image with
 * the extrapolation value, crops of one pixel), the same bits eagerly and
 * traced on 1, 2 and 4 workers, and the refused calls. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_crop, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

typedef struct crop_case {
    int64_t size[2];
    weft_resize_method method;
    double fill;
} crop_case;

static int crop_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const crop_case *c = user;
    outs[0] = weft_crop_and_resize(cx, a[0], a[1], a[2], c->size, c->method, c->fill);
    return weft_ctx_status(cx);
}

enum { B = 2, H = 5, W = 6, C = 3 };

static void image(double *v)
{
    uint64_t s = 0x1234567887654321u;
    for (int i = 0; i < B * H * W * C; i++)
        v[i] = op_uniform(&s);
}

static weft_tensor *f64_tensor(int rank, const int64_t *dims, const double *v)
{
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_F64, rank, dims, v, &t), 0, "%s", weft_errmsg());
    return t;
}

static weft_tensor *indices(int64_t n, const int32_t *v)
{
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_I32, 1, &n, v, &t), 0);
    return t;
}

/* TensorFlow's rule for crop (b, y, x, q) of box `box` in image `im`. */
static double reference(const double *im, const double *box, const crop_case *c, int64_t y,
                        int64_t x, int64_t q)
{
    int64_t ch = c->size[0], cw = c->size[1];
    double y1 = box[0], x1 = box[1], y2 = box[2], x2 = box[3];
    double hs = ch > 1 ? (y2 - y1) * (H - 1) / (double)(ch - 1) : 0;
    double ws = cw > 1 ? (x2 - x1) * (W - 1) / (double)(cw - 1) : 0;
    double in_y = ch > 1 ? y1 * (H - 1) + (double)y * hs : 0.5 * (y1 + y2) * (H - 1);
    double in_x = cw > 1 ? x1 * (W - 1) + (double)x * ws : 0.5 * (x1 + x2) * (W - 1);
    if (in_y < 0 || in_y > H - 1 || in_x < 0 || in_x > W - 1)
        return c->fill;
#define PX(Y, X) im[((int64_t)(Y) * W + (int64_t)(X)) * C + q]
    if (c->method == WEFT_RESIZE_NEAREST)
        return PX(round(in_y), round(in_x));
    double ty = floor(in_y), by = ceil(in_y), lx = floor(in_x), rx = ceil(in_x);
    double yl = in_y - ty, xl = in_x - lx;
    double top = PX(ty, lx) + (PX(ty, rx) - PX(ty, lx)) * xl;
    double bot = PX(by, lx) + (PX(by, rx) - PX(by, lx)) * xl;
#undef PX
    return top + (bot - top) * yl;
}

Test(ops_crop, follows_tensorflows_sampling)
{
    double im[B * H * W * C];
    image(im);
    /* Boxes: inside, partly outside, flipped, a point, the whole image. */
    const double boxes[5 * 4] = { 0.1, 0.2, 0.7, 0.9,  -0.3, -0.2, 1.2, 1.1,  0.9, 0.8, 0.2, 0.1,
                                  0.5, 0.5, 0.5, 0.5,  0, 0, 1, 1 };
    const int32_t which[5] = { 0, 1, 1, 0, 1 };
    weft_tensor *args[3] = { f64_tensor(4, (const int64_t[]){ B, H, W, C }, im),
                             f64_tensor(2, (const int64_t[]){ 5, 4 }, boxes), indices(5, which) };
    const crop_case cases[] = { { { 4, 7 }, WEFT_RESIZE_BILINEAR, -1 },
                                { { 3, 3 }, WEFT_RESIZE_NEAREST, 9 },
                                { { 1, 1 }, WEFT_RESIZE_BILINEAR, 0 },
                                { { 1, 5 }, WEFT_RESIZE_NEAREST, 0.5 } };
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        const crop_case *c = &cases[ci];
        weft_tensor *out;
        op_results_everywhere(crop_body, (void *)c, args, 3, &out, 1, "crop");
        cr_assert_eq(weft_tensor_rank(out), 4);
        cr_assert_eq(weft_tensor_dims(out)[0], 5);
        cr_assert_eq(weft_tensor_dims(out)[1], c->size[0]);
        cr_assert_eq(weft_tensor_dims(out)[2], c->size[1]);
        cr_assert_eq(weft_tensor_dims(out)[3], C);
        const double *got = weft_tensor_data(out);
        for (int64_t b = 0; b < 5; b++)
            for (int64_t y = 0; y < c->size[0]; y++)
                for (int64_t x = 0; x < c->size[1]; x++)
                    for (int64_t q = 0; q < C; q++) {
                        double want = reference(im + which[b] * H * W * C, boxes + 4 * b, c, y, x, q);
                        double g = got[((b * c->size[0] + y) * c->size[1] + x) * C + q];
                        cr_assert_eq(g, want, "case %zu box %lld (%lld, %lld, %lld): %.17g, "
                                     "expected %.17g", ci, (long long)b, (long long)y,
                                     (long long)x, (long long)q, g, want);
                    }
        weft_tensor_release(out);
    }
    for (int i = 0; i < 3; i++)
        weft_tensor_release(args[i]);
}

/* The whole image at its own size is the image; the flipped box the
 * image upside down. */
Test(ops_crop, whole_and_flipped_boxes)
{
    double im[B * H * W * C];
    image(im);
    const double boxes[2 * 4] = { 0, 0, 1, 1, 1, 0, 0, 1 };
    const int32_t which[2] = { 1, 1 };
    weft_tensor *args[3] = { f64_tensor(4, (const int64_t[]){ B, H, W, C }, im),
                             f64_tensor(2, (const int64_t[]){ 2, 4 }, boxes), indices(2, which) };
    for (int m = 0; m < 2; m++) {
        crop_case c = { { H, W }, m ? WEFT_RESIZE_NEAREST : WEFT_RESIZE_BILINEAR, 0 };
        weft_tensor *out;
        op_results_everywhere(crop_body, &c, args, 3, &out, 1, "whole");
        const double *got = weft_tensor_data(out), *src = im + H * W * C;
        cr_assert(memcmp(got, src, sizeof(double) * H * W * C) == 0, "method %d: not the image",
                  m);
        for (int y = 0; y < H; y++)
            cr_assert(memcmp(got + (H * W + y * W) * C, src + (H - 1 - y) * W * C,
                             sizeof(double) * W * C) == 0, "method %d: row %d not flipped", m, y);
        weft_tensor_release(out);
    }
    for (int i = 0; i < 3; i++)
        weft_tensor_release(args[i]);
}

typedef enum bad_call { INDEX_RANGE, BOX_DTYPE, BOX_SHAPE, METHOD, NO_SIZE } bad_call;

/* args: images f64, boxes f64 [1, 4], indices i32 [1] (= 2, outside). */
static int bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    weft_value *im = a[0], *bx = a[1], *ix = a[2];
    const int64_t size[2] = { 2, 2 };
    const int64_t *sz = size;
    weft_resize_method m = WEFT_RESIZE_BILINEAR;
    switch ((bad_call) * (const int *)user) {
    case INDEX_RANGE: break;
    case BOX_DTYPE: bx = weft_cast(cx, bx, WEFT_F32); break;
    case BOX_SHAPE: bx = weft_reshape(cx, bx, 2, (const int64_t[]){ 2, 2 }); break;
    case METHOD: m = WEFT_RESIZE_AREA; break;
    case NO_SIZE: sz = NULL; break;
    }
    outs[0] = weft_crop_and_resize(cx, im, bx, ix, sz, m, 0);
    return weft_ctx_status(cx);
}

Test(ops_crop, refused_calls_name_the_op)
{
    double im[B * H * W * C] = { 0 };
    const double box[4] = { 0, 0, 1, 1 };
    const int32_t which[1] = { 2 };
    weft_tensor *args[3] = { f64_tensor(4, (const int64_t[]){ B, H, W, C }, im),
                             f64_tensor(2, (const int64_t[]){ 1, 4 }, box), indices(1, which) };
    const op_error_case cases[] = {
        { INDEX_RANGE, WEFT_EINVAL, "weft_crop_and_resize: box 0's image index 2 is outside the "
                                    "batch of 2" },
        { BOX_DTYPE, WEFT_EDTYPE, "weft_crop_and_resize: the boxes f32[1,4] are not of the "
                                  "images' dtype" },
        { BOX_SHAPE, WEFT_ESHAPE, "weft_crop_and_resize: the boxes f64[2,2] and box indices "
                                  "i32[1] are not [n, 4] and [n]" },
        { METHOD, WEFT_EINVAL, "weft_crop_and_resize: method 2 is not WEFT_RESIZE_BILINEAR" },
        { NO_SIZE, WEFT_EINVAL, "weft_crop_and_resize: crop_size is not two sizes" },
    };
    op_expect_errors(rts[1], bad_body, cases, sizeof cases / sizeof *cases, args, 3);
    for (int i = 0; i < 3; i++)
        weft_tensor_release(args[i]);
}
