/* weft_rot90, the flips, weft_transpose_image, the bounding boxes,
 * weft_resize_with_pad, weft_central_crop and
 * weft_resize_with_crop_or_pad against element-by-element references
 * (TensorFlow's index arithmetic written out), on images and batches of
 * several dtypes, eagerly and traced on 1,
 * 2 and 4 workers (the same bits everywhere); rot90 once for every size
 * under a signature of unknown dims; and their errors. */
#include <math.h>
#include <stdlib.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_image_geom, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

typedef struct geom_case {
    int which;   /* 0 rot90, 1 central_crop, 2 resize_with_crop_or_pad, 3-5 the flips,
                    6 crop_to_bounding_box, 7 pad_to_bounding_box */
    int k;
    double fraction;
    int64_t th, tw;
} geom_case;

static int body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const geom_case *c = user;
    switch (c->which) {
    case 0: outs[0] = weft_rot90(cx, a[0], c->k); break;
    case 1: outs[0] = weft_central_crop(cx, a[0], c->fraction); break;
    case 3: outs[0] = weft_flip_left_right(cx, a[0]); break;
    case 4: outs[0] = weft_flip_up_down(cx, a[0]); break;
    case 5: outs[0] = weft_transpose_image(cx, a[0]); break;
    case 6: outs[0] = weft_crop_to_bounding_box(cx, a[0], c->k, c->tw / 2, c->th, c->tw); break;
    case 7: outs[0] = weft_pad_to_bounding_box(cx, a[0], c->k, c->tw / 2, c->th, c->tw); break;
    case 2: outs[0] = weft_resize_with_crop_or_pad(cx, a[0], c->th, c->tw); break;
    }
    return weft_ctx_status(cx);
}

/* An image batch's shape, b = 1 for a single image of rank 3. */
typedef struct geom {
    int rank;
    int64_t b, h, w, c;
} geom;

static double pixel(const geom *g, const double *v, int64_t n, int64_t i, int64_t j, int64_t ch)
{
    return v[((n * g->h + i) * g->w + j) * g->c + ch];
}

static weft_tensor *make(const geom *g, weft_dtype dt, double **vals)
{
    int64_t n = g->b * g->h * g->w * g->c;
    double *v = malloc(sizeof *v * (size_t)(n ? n : 1));
    cr_assert_not_null(v);
    for (int64_t i = 0; i < n; i++)
        v[i] = dt == WEFT_BOOL ? (double)(i * 7 % 101 > 50) : (double)(i * 7 % 101) - 50;
    *vals = v;
    int64_t dims[4] = { g->b, g->h, g->w, g->c };
    return test_tensor(dt, g->rank, g->rank == 4 ? dims : dims + 1, v);
}

/* y is images of oh x ow whose pixel (i, j) of image n is at(i, j) of
 * the input: rows and columns outside it (at < 0) are zeros. */
typedef bool (*source_fn)(const geom_case *c, const geom *g, int64_t i, int64_t j,
                          int64_t *si, int64_t *sj);

static void expect_images(const weft_tensor *y, weft_dtype dt, const geom *g, const double *v,
                          int64_t oh, int64_t ow, source_fn at, const geom_case *c)
{
    int64_t dims[4] = { g->b, oh, ow, g->c };
    test_assert_shape(y, dt, g->rank, g->rank == 4 ? dims : dims + 1, "geometry");
    for (int64_t n = 0; n < g->b; n++)
        for (int64_t i = 0; i < oh; i++)
            for (int64_t j = 0; j < ow; j++)
                for (int64_t ch = 0; ch < g->c; ch++) {
                    int64_t si, sj;
                    double want = at(c, g, i, j, &si, &sj) ? pixel(g, v, n, si, sj, ch) : 0;
                    double got = test_element(y, ((n * oh + i) * ow + j) * g->c + ch);
                    cr_assert_eq(got, want, "op %d image %lld (%lld, %lld, %lld): %g, want %g",
                                 c->which, (long long)n, (long long)i, (long long)j,
                                 (long long)ch, got, want);
                }
}

/* Runs c on a batch of shape g and dtype dt everywhere (the same bits)
 * and checks the oh x ow images it gives against at. */
static void check_geometry(const geom *g, weft_dtype dt, const geom_case *c, int64_t oh,
                           int64_t ow, source_fn at, const char *what)
{
    double *v;
    weft_tensor *x = make(g, dt, &v), *y;
    op_results_everywhere(body, (void *)c, &x, 1, &y, 1, what);
    expect_images(y, dt, g, v, oh, ow, at, c);
    weft_tensor_release(y);
    weft_tensor_release(x);
    free(v);
}

/* numpy.rot90's definition, k counter-clockwise quarter turns. */
static bool rot_source(const geom_case *c, const geom *g, int64_t i, int64_t j, int64_t *si,
                       int64_t *sj)
{
    switch (((c->k % 4) + 4) % 4) {
    case 1: *si = j, *sj = g->w - 1 - i; break;
    case 2: *si = g->h - 1 - i, *sj = g->w - 1 - j; break;
    case 3: *si = g->h - 1 - j, *sj = i; break;
    default: *si = i, *sj = j; break;
    }
    return true;
}

static const geom shapes[] = { { 4, 2, 3, 4, 2 }, { 3, 1, 5, 3, 1 }, { 4, 3, 1, 6, 3 },
                               { 3, 1, 4, 4, 2 } };

Test(ops_image_geom, rot90_turns_counter_clockwise)
{
    static const weft_dtype types[3] = { WEFT_I32, WEFT_F64, WEFT_BOOL };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int k = -5; k <= 6; k++) {
            const geom *g = &shapes[s];
            weft_dtype dt = types[(s + (size_t)(k + 5)) % 3];
            geom_case c = { .which = 0, .k = k };
            bool odd = (k % 2) != 0;
            check_geometry(g, dt, &c, odd ? g->w : g->h, odd ? g->h : g->w, rot_source, "rot90");
        }
}

/* flip_left_right, flip_up_down and transpose_image. */
static bool flip_source(const geom_case *c, const geom *g, int64_t i, int64_t j, int64_t *si,
                        int64_t *sj)
{
    switch (c->which) {
    case 3: *si = i, *sj = g->w - 1 - j; break;
    case 4: *si = g->h - 1 - i, *sj = j; break;
    default: *si = j, *sj = i; break;
    }
    return true;
}

Test(ops_image_geom, flips_and_transpose_mirror_each_image)
{
    static const weft_dtype types[3] = { WEFT_F32, WEFT_I64, WEFT_BOOL };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int which = 3; which <= 5; which++) {
            const geom *g = &shapes[s];
            weft_dtype dt = types[(s + (size_t)which) % 3];
            geom_case c = { .which = which };
            bool swap = which == 5;
            check_geometry(g, dt, &c, swap ? g->w : g->h, swap ? g->h : g->w, flip_source, "flip");
        }
}

/* The boxes: offset (k, tw / 2), size th x tw. */
static bool box_source(const geom_case *c, const geom *g, int64_t i, int64_t j, int64_t *si,
                       int64_t *sj)
{
    int64_t top = c->k, left = c->tw / 2;
    if (c->which == 6) {
        *si = i + top, *sj = j + left;
        return true;
    }
    *si = i - top, *sj = j - left;
    return *si >= 0 && *sj >= 0 && *si < g->h && *sj < g->w;
}

Test(ops_image_geom, crop_and_pad_to_bounding_boxes)
{
    const geom g = { 4, 2, 5, 4, 2 };
    /* (top, height, width): crops inside the 5 x 4 images, pads around them. */
    const int64_t crops[][3] = { { 0, 5, 2 }, { 1, 2, 2 }, { 2, 3, 1 }, { 4, 1, 2 } };
    const int64_t pads[][3] = { { 0, 5, 8 }, { 3, 9, 8 }, { 1, 7, 9 } };
    for (int which = 6; which <= 7; which++)
        for (int q = 0; q < (which == 6 ? 4 : 3); q++) {
            const int64_t *b = which == 6 ? crops[q] : pads[q];
            geom_case c = { .which = which, .k = (int)b[0], .th = b[1], .tw = b[2] };
            check_geometry(&g, q % 2 ? WEFT_F64 : WEFT_I32, &c, c.th, c.tw, box_source,
                           "bounding box");
        }
}

/* resize_with_pad against weft_resize to TensorFlow's size, placed at its
 * offsets: 5 x 3 into 4 x 4 scales by 1 / 1.25 to 4 x 2.4 (2 columns kept,
 * offset floor(0.8) = 0); 4 x 8 into 8 x 8 keeps its size at row 2; 3 x 6
 * into 6 x 6 sits at row floor(1.5) = 1. */
typedef struct pad_case {
    int64_t th, tw, rh, rw, top, left;
} pad_case;

static int pad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const pad_case *c = user;
    outs[0] = weft_resize_with_pad(cx, a[0], c->th, c->tw, WEFT_RESIZE_BILINEAR);
    outs[1] = weft_resize(cx, a[0], c->rh, c->rw, WEFT_RESIZE_BILINEAR);
    return weft_ctx_status(cx);
}

Test(ops_image_geom, resize_with_pad_keeps_the_aspect)
{
    const geom shapes_in[3] = { { 4, 2, 5, 3, 2 }, { 3, 1, 4, 8, 1 }, { 3, 1, 3, 6, 1 } };
    const pad_case cases[3] = { { 4, 4, 4, 2, 0, 0 }, { 8, 8, 4, 8, 2, 0 },
                                { 6, 6, 3, 6, 1, 0 } };
    for (int q = 0; q < 3; q++) {
        const geom *g = &shapes_in[q];
        const pad_case *c = &cases[q];
        double *v;
        weft_tensor *x = make(g, WEFT_F32, &v), *y[2];
        op_results_everywhere(pad_body, (void *)c, &x, 1, y, 2, "resize_with_pad");
        int64_t dims[4] = { g->b, c->th, c->tw, g->c };
        test_assert_shape(y[0], WEFT_F32, g->rank, g->rank == 4 ? dims : dims + 1, "pad");
        for (int64_t n = 0; n < g->b; n++)
            for (int64_t i = 0; i < c->th; i++)
                for (int64_t j = 0; j < c->tw; j++)
                    for (int64_t ch = 0; ch < g->c; ch++) {
                        int64_t si = i - c->top, sj = j - c->left;
                        bool in = si >= 0 && sj >= 0 && si < c->rh && sj < c->rw;
                        double want = in ? test_element(y[1], ((n * c->rh + si) * c->rw + sj) *
                                                                  g->c + ch)
                                         : 0;
                        double got = test_element(y[0], ((n * c->th + i) * c->tw + j) * g->c + ch);
                        cr_assert_eq(got, want, "case %d (%lld, %lld, %lld, %lld)", q,
                                     (long long)n, (long long)i, (long long)j, (long long)ch);
                    }
        weft_tensor_release(y[0]);
        weft_tensor_release(y[1]);
        weft_tensor_release(x);
        free(v);
    }
}

Test(ops_image_geom, rot90_under_a_signature_of_unknown_dims)
{
    weft_spec sig = { .dtype = WEFT_F32, .rank = 4, .dims = { -1, -1, -1, -1 } };
    geom_case c = { .which = 0, .k = 1 };
    weft_function *f = op_signature_function(rt, body, &c, &sig, 1);
    for (size_t s = 0; s < 3; s += 2) {
        const geom *g = &shapes[s];
        double *v;
        weft_tensor *x = make(g, WEFT_F32, &v), *y = NULL;
        weft_arg a = weft_arg_tensor(x);
        cr_assert_eq(weft_function_call(f, &a, 1, &y, 1), 0, "%s", weft_errmsg());
        expect_images(y, WEFT_F32, g, v, g->w, g->h, rot_source, &c);
        weft_tensor_release(y);
        weft_tensor_release(x);
        free(v);
    }
    op_destroy_traced_once(&f);
}

/* TensorFlow's bounding box: int((d - d * fraction) / 2) from each side. */
static int64_t crop_start(int64_t d, double fraction)
{
    return (int64_t)(((double)d - (double)d * fraction) / 2);
}

static bool crop_source(const geom_case *c, const geom *g, int64_t i, int64_t j, int64_t *si,
                        int64_t *sj)
{
    *si = i + crop_start(g->h, c->fraction);
    *sj = j + crop_start(g->w, c->fraction);
    return true;
}

Test(ops_image_geom, central_crop_keeps_the_middle)
{
    const geom g7 = { 3, 1, 7, 10, 2 }, gb = { 4, 2, 9, 5, 1 };
    const double fractions[] = { 0.5, 0.3, 1.0, 0.99, 1e-9, 0.75 };
    for (int s = 0; s < 2; s++)
        for (size_t q = 0; q < sizeof fractions / sizeof fractions[0]; q++) {
            const geom *g = s ? &gb : &g7;
            weft_dtype dt = s ? WEFT_F32 : WEFT_I64;
            geom_case c = { .which = 1, .fraction = fractions[q] };
            int64_t oh = g->h - 2 * crop_start(g->h, c.fraction);
            int64_t ow = g->w - 2 * crop_start(g->w, c.fraction);
            check_geometry(g, dt, &c, oh, ow, crop_source, "central_crop");
        }
    /* Worked by hand: [7, 10] at one half keeps rows 1..5 and columns 2..7. */
    cr_assert_eq(crop_start(7, 0.5), 1);
    cr_assert_eq(crop_start(10, 0.5), 2);
    cr_assert_eq(crop_start(7, 1e-9), 3);
}

/* The crop's and the pad's offsets of one side, TensorFlow's. */
static void crop_pad(int64_t d, int64_t t, int64_t *crop, int64_t *pad)
{
    *crop = d > t ? (d - t) / 2 : 0;
    *pad = t > d ? (t - d) / 2 : 0;
}

static bool crop_or_pad_source(const geom_case *c, const geom *g, int64_t i, int64_t j,
                               int64_t *si, int64_t *sj)
{
    int64_t ch, ph, cw, pw;
    crop_pad(g->h, c->th, &ch, &ph);
    crop_pad(g->w, c->tw, &cw, &pw);
    *si = i - ph + ch;
    *sj = j - pw + cw;
    return i >= ph && j >= pw && *si < g->h && *sj < g->w;
}

Test(ops_image_geom, resize_with_crop_or_pad_centres_the_images)
{
    const geom g = { 4, 2, 5, 4, 2 }, one = { 3, 1, 6, 7, 1 };
    const int64_t targets[][2] = { { 3, 6 }, { 6, 3 }, { 5, 4 }, { 2, 9 }, { 1, 1 }, { 8, 8 } };
    for (int s = 0; s < 2; s++)
        for (size_t q = 0; q < sizeof targets / sizeof targets[0]; q++) {
            const geom *gg = s ? &one : &g;
            weft_dtype dt = s ? WEFT_F64 : WEFT_I32;
            geom_case c = { .which = 2, .th = targets[q][0], .tw = targets[q][1] };
            check_geometry(gg, dt, &c, c.th, c.tw, crop_or_pad_source, "resize_with_crop_or_pad");
        }
    /* Worked by hand: a height of 5 to 2 crops 1 row from the top (and 2
     * from the bottom); a width of 4 to 9 pads 2 before and 3 after. */
    int64_t crop, pad;
    crop_pad(5, 2, &crop, &pad);
    cr_assert(crop == 1 && pad == 0);
    crop_pad(4, 9, &crop, &pad);
    cr_assert(crop == 0 && pad == 2);
}

static int bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    switch (*(const int *)user) {
    case 0: outs[0] = weft_rot90(cx, a[1], 1); break;
    case 1: outs[0] = weft_central_crop(cx, a[0], 0); break;
    case 2: outs[0] = weft_central_crop(cx, a[0], 1.5); break;
    case 3: outs[0] = weft_central_crop(cx, a[0], NAN); break;
    case 4: outs[0] = weft_central_crop(cx, a[1], 0.5); break;
    case 5: outs[0] = weft_resize_with_crop_or_pad(cx, a[0], 0, 3); break;
    case 6: outs[0] = weft_resize_with_crop_or_pad(cx, a[1], 2, 2); break;
    case 7: outs[0] = weft_flip_left_right(cx, a[1]); break;
    case 8: outs[0] = weft_transpose_image(cx, a[1]); break;
    case 9: outs[0] = weft_crop_to_bounding_box(cx, a[0], 1, 2, 1, 2); break;
    case 10: outs[0] = weft_pad_to_bounding_box(cx, a[0], 0, 1, 1, 2); break;
    case 11: outs[0] = weft_resize_with_pad(cx, weft_cast(cx, a[0], WEFT_I32), 2, 2,
                                            WEFT_RESIZE_BILINEAR); break;
    }
    return weft_ctx_status(cx);
}

Test(ops_image_geom, errors_name_the_op)
{
    const op_error_case cases[] = {
        { 0, WEFT_ESHAPE, "weft_rot90: the images f64[2,3] are not an image [h, w, c] or a batch" },
        { 1, WEFT_EINVAL, "weft_central_crop: central_fraction 0 is not within (0, 1]" },
        { 2, WEFT_EINVAL, "weft_central_crop: central_fraction 1.5 is not within (0, 1]" },
        { 3, WEFT_EINVAL, "weft_central_crop: central_fraction nan is not within (0, 1]" },
        { 4, WEFT_ESHAPE, "weft_central_crop: the images f64[2,3] are not an image" },
        { 5, WEFT_EINVAL, "weft_resize_with_crop_or_pad: the target 0 x 3 is not within 1.." },
        { 6, WEFT_ESHAPE, "weft_resize_with_crop_or_pad: the images f64[2,3] are not an image" },
        { 7, WEFT_ESHAPE, "weft_flip_left_right: the images f64[2,3] are not an image" },
        { 8, WEFT_ESHAPE, "weft_transpose_image: the images f64[2,3] are not an image" },
        { 9, WEFT_EINVAL, "weft_crop_to_bounding_box: the box at (1, 2) of 1 x 2 does not fit in "
                          "the images' 1 x 2" },
        { 10, WEFT_EINVAL, "weft_pad_to_bounding_box: the box at (0, 1) of 1 x 2 does not hold "
                           "the images' 1 x 2" },
        { 11, WEFT_EDTYPE, "weft_resize_with_pad: the images i32[1,2,3] are not f32 or f64" },
    };
    double v[6] = { 1, 2, 3, 4, 5, 6 };
    weft_tensor *args[2] = { test_tensor(WEFT_F64, 3, (int64_t[]){ 1, 2, 3 }, v),
                             test_tensor(WEFT_F64, 2, (int64_t[]){ 2, 3 }, v) };
    op_expect_errors(rt, bad_body, cases, sizeof cases / sizeof cases[0], args, 2);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}
