/* extract_glimpse: each window against a loop that places it by
 * TensorFlow 2's rules, for the four flag pairs and offsets inside, across
 * and wholly outside the image (NaN, inf and 1e30 among them), with zero
 * noise; TensorFlow's example; the noise (uniform within the image's
 * range, gaussian within each channel's, a seed's numbers the same
 * eagerly and traced, another seed's not, without a retrace); f64; the
 * refused calls. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_glimpse, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

typedef struct glimpse_case {
    int64_t size[2];
    bool centered, normalized;
    weft_glimpse_noise noise;
} glimpse_case;

/* a: the images, the offsets, and for random noise the seed. */
static int glimpse_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const glimpse_case *g = user;
    outs[0] = weft_extract_glimpse(cx, a[0], g->size, a[1], g->centered, g->normalized, g->noise,
                                   g->noise == WEFT_GLIMPSE_ZERO ? NULL : a[2]);
    return weft_ctx_status(cx);
}

/* The window's first pixel along a dim, as TensorFlow 2's kernel computes
 * it in float and converts it; INT64_MIN where the conversion is out of
 * range (x86 gives that, and the window is then wholly outside). */
static int64_t tf_start(float v, int64_t dim, int64_t size, bool centered, bool normalized)
{
    float x = v;
    if (normalized) {
        x = x * (float)dim;
        if (centered)
            x = x / 2.0f + (float)dim / 2.0f - (float)size / 2.0f;
    } else if (centered) {
        x = x + (float)dim / 2.0f;
    }
    return isfinite(x) && fabsf(x) < 1e18f ? (int64_t)x : INT64_MIN;
}

enum { GB = 8, GH = 5, GW = 6, GC = 2 };

Test(ops_glimpse, windows_against_a_loop)
{
    double img[GB * GH * GW * GC];
    for (int i = 0; i < GB * GH * GW * GC; i++)
        img[i] = i + 1;   /* no zero, so the noise shows */
    /* (y, x) per image: inside, across each edge, truncation toward zero
     * (-0.5 is 0 where floor would give -1), wholly outside, NaN, inf. */
    const double off[GB * 2] = { 0.1, -0.2, -0.5, 0.7, 0.9, -0.95, -1.6, 0.45,
                                 3.0, 2.5,  NAN,  0.3, 0.2, INFINITY, 1e30, -1e30 };
    const double pix[GB * 2] = { 1, 2, -0.5, 3.7, 4, -2, -3, 5, 7, 1, NAN, 2, 2, INFINITY,
                                 1e30, -1e30 };
    const int64_t sizes[3][2] = { { 3, 4 }, { 1, 1 }, { 7, 8 } };
    for (int flags = 0; flags < 4; flags++)
        for (int s = 0; s < 3; s++) {
            glimpse_case g = { { sizes[s][0], sizes[s][1] }, flags & 1, (flags & 2) != 0,
                               WEFT_GLIMPSE_ZERO };
            const double *o = g.normalized ? off : pix;
            weft_tensor *args[2] = {
                test_tensor(WEFT_F32, 4, (const int64_t[]){ GB, GH, GW, GC }, img),
                test_tensor(WEFT_F32, 2, (const int64_t[]){ GB, 2 }, o),
            };
            weft_tensor *out;
            op_results_everywhere(glimpse_body, &g, args, 2, &out, 1, "extract_glimpse");
            int64_t gh = g.size[0], gw = g.size[1];
            test_assert_shape(out, WEFT_F32, 4, (const int64_t[]){ GB, gh, gw, GC }, "glimpse");
            for (int b = 0; b < GB; b++) {
                int64_t y0 = tf_start((float)o[2 * b], GH, gh, g.centered, g.normalized);
                int64_t x0 = tf_start((float)o[2 * b + 1], GW, gw, g.centered, g.normalized);
                for (int64_t i = 0; i < gh; i++)
                    for (int64_t j = 0; j < gw; j++)
                        for (int c = 0; c < GC; c++) {
                            bool inside = y0 != INT64_MIN && x0 != INT64_MIN && y0 + i >= 0 &&
                                          y0 + i < GH && x0 + j >= 0 && x0 + j < GW;
                            double want =
                                inside ? img[((b * GH + y0 + i) * GW + x0 + j) * GC + c] : 0;
                            cr_assert_eq(test_element(out, ((b * gh + i) * gw + j) * GC + c),
                                         want, "flags %d size %d image %d (%lld, %lld, %d)",
                                         flags, s, b, (long long)i, (long long)j, c);
                        }
            }
            weft_tensor_release(out);
            weft_tensor_release(args[0]);
            weft_tensor_release(args[1]);
        }
}

Test(ops_glimpse, tensorflows_example)
{
    /* The 3 x 3 image 0..8, a 2 x 2 window at (1, 1), neither centered nor
     * normalized: [[4, 5], [7, 8]], whatever the noise (the window touches
     * the image's last row and column, which TensorFlow's kernel counts as
     * a partial overlap; the noise is then all overwritten). */
    const double x[9] = { 0, 1, 2, 3, 4, 5, 6, 7, 8 }, off[2] = { 1, 1 }, seed = 5;
    weft_tensor *args[3] = { test_tensor(WEFT_F32, 4, (const int64_t[]){ 1, 3, 3, 1 }, x),
                             test_tensor(WEFT_F32, 2, (const int64_t[]){ 1, 2 }, off),
                             test_tensor(WEFT_I64, 0, NULL, &seed) };
    for (int k = 0; k < 3; k++) {
        glimpse_case g = { { 2, 2 }, false, false, (weft_glimpse_noise)k };
        weft_tensor *out;
        op_results_everywhere(glimpse_body, &g, args, 3, &out, 1, "extract_glimpse");
        const double want[4] = { 4, 5, 7, 8 };
        for (int i = 0; i < 4; i++)
            cr_assert_eq(test_element(out, i), want[i], "noise %d element %d", k, i);
        weft_tensor_release(out);
    }
    for (int i = 0; i < 3; i++)
        weft_tensor_release(args[i]);
}

/* Images [2, 4, 4, 2]: channel 0 of image 0 symmetric about 10 (values
 * 10 +- 1, 2, ...), channel 1 constant 3; image 1 from -7 to 24. */
static void noise_images(double *img)
{
    for (int p = 0; p < 16; p++) {
        img[2 * p] = 10 + (p % 2 ? 1 : -1) * (p / 2 + 1);
        img[2 * p + 1] = 3;
        img[32 + 2 * p] = p - 7;
        img[32 + 2 * p + 1] = 2 * p - 7;
    }
}

Test(ops_glimpse, noise_within_the_images_range)
{
    double img[64];
    noise_images(img);
    /* 32 x 32 windows wholly outside (not normalized, far away), and
     * one across the edge, whose inside part is the image's. */
    const double off[4] = { -100, -100, -2, -2 }, seed = 17;
    weft_tensor *args[3] = { test_tensor(WEFT_F32, 4, (const int64_t[]){ 2, 4, 4, 2 }, img),
                             test_tensor(WEFT_F64, 2, (const int64_t[]){ 2, 2 }, off),
                             test_tensor(WEFT_I64, 0, NULL, &seed) };
    enum { N = 32 * 32 };
    for (int k = 0; k < 2; k++) {
        glimpse_case g = { { 32, 32 }, false, false, (weft_glimpse_noise)k };
        weft_tensor *out;
        op_results_everywhere(glimpse_body, &g, args, 3, &out, 1, "extract_glimpse");
        const float *y = weft_tensor_data(out);
        double sum = 0, lo = INFINITY, hi = -INFINITY;
        for (int p = 0; p < N; p++) {
            sum += y[2 * p];
            lo = fmin(lo, y[2 * p]);
            hi = fmax(hi, y[2 * p]);
        }
        if (k == WEFT_GLIMPSE_UNIFORM) {
            /* Image 0 spans 2..18 over both channels: uniform there. */
            cr_assert(lo >= 2 && hi < 18 && lo < 3 && hi > 17, "uniform: %g..%g", lo, hi);
            cr_assert(fabs(sum / N - 10) < 0.5, "uniform mean %g", sum / N);
        } else {
            /* Channel 0: mean 10, within 2..18; channel 1 constant 3. */
            cr_assert(lo >= 2 && hi <= 18 && lo < 6 && hi > 14, "gaussian: %g..%g", lo, hi);
            cr_assert(fabs(sum / N - 10) < 0.5, "gaussian mean %g", sum / N);
            for (int p = 0; p < N; p++)
                cr_assert_eq(y[2 * p + 1], 3.0f, "the constant channel at %d", p);
        }
        /* Image 1 from (-2, -2): rows and columns 2..5 its own 0..3. */
        const float *w = y + 2 * N;
        for (int i = 0; i < 32; i++)
            for (int j = 0; j < 32; j++)
                for (int c = 0; c < 2; c++) {
                    float v = w[(i * 32 + j) * 2 + c];
                    if (i >= 2 && i < 6 && j >= 2 && j < 6)
                        cr_assert_eq(v, (float)img[32 + ((i - 2) * 4 + j - 2) * 2 + c]);
                    else if (k == WEFT_GLIMPSE_UNIFORM)
                        cr_assert(v >= -7 && v <= 24, "image 1 noise %g", v);
                    else
                        cr_assert(c == 0 ? v >= -7 && v <= 8 : v >= -7 && v <= 23,
                                  "image 1 channel %d noise %g", c, v);
                }
        weft_tensor_release(out);
    }
    for (int i = 0; i < 3; i++)
        weft_tensor_release(args[i]);
}

Test(ops_glimpse, a_new_seed_draws_anew_without_a_retrace)
{
    double img[64];
    noise_images(img);
    glimpse_case g = { { 6, 6 }, true, true, WEFT_GLIMPSE_UNIFORM };
    const weft_spec sig[3] = { { .dtype = WEFT_F64, .rank = 4, .dims = { -1, 4, 4, 2 } },
                               { .dtype = WEFT_F32, .rank = 2, .dims = { -1, 2 } },
                               { .dtype = WEFT_I64, .rank = 0 } };
    weft_function_desc d = { .name = "glimpse", .body = glimpse_body, .user = &g, .n_args = 3,
                             .n_outs = 1, .input_signature = sig };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rts[1], &d, &f), 0, "%s", weft_errmsg());
    const double off[4] = { 0.9, 0.9, -0.2, 0.4 };
    weft_tensor *x = test_tensor(WEFT_F64, 4, (const int64_t[]){ 2, 4, 4, 2 }, img);
    weft_tensor *o = test_tensor(WEFT_F32, 2, (const int64_t[]){ 2, 2 }, off);
    weft_tensor *y[3];
    const double seeds[3] = { 1, 1, 2 };
    for (int k = 0; k < 3; k++) {
        weft_tensor *s = test_tensor(WEFT_I64, 0, NULL, &seeds[k]);
        weft_arg a[3] = { weft_arg_tensor(x), weft_arg_tensor(o), weft_arg_tensor(s) };
        cr_assert_eq(weft_function_call(f, a, 3, &y[k], 1), 0, "%s", weft_errmsg());
        weft_tensor_release(s);
    }
    cr_assert(op_same_bits(y[0], y[1]), "the same seed, the same noise");
    int differ = 0;
    for (int i = 0; i < 2 * 36 * 2; i++)
        differ += test_element(y[0], i) != test_element(y[2], i);
    cr_assert(differ > 40, "another seed's noise differs in %d elements", differ);
    /* One image smaller batch: the same function. */
    weft_tensor *x1 = test_tensor(WEFT_F64, 4, (const int64_t[]){ 1, 4, 4, 2 }, img);
    weft_tensor *o1 = test_tensor(WEFT_F32, 2, (const int64_t[]){ 1, 2 }, off), *y1;
    weft_tensor *s = test_tensor(WEFT_I64, 0, NULL, &seeds[0]);
    weft_arg a[3] = { weft_arg_tensor(x1), weft_arg_tensor(o1), weft_arg_tensor(s) };
    cr_assert_eq(weft_function_call(f, a, 3, &y1, 1), 0, "%s", weft_errmsg());
    test_assert_shape(y1, WEFT_F64, 4, (const int64_t[]){ 1, 6, 6, 2 }, "one image");
    op_destroy_traced_once(&f);
    weft_tensor_release(y1);
    weft_tensor_release(s);
    weft_tensor_release(x1);
    weft_tensor_release(o1);
    for (int k = 0; k < 3; k++)
        weft_tensor_release(y[k]);
    weft_tensor_release(x);
    weft_tensor_release(o);
}

enum {
    NULL_SIZE, NEGATIVE_SIZE, BAD_NOISE, NO_SEED, INT_IMAGES, RANK3, OFFSETS_3, BATCHES,
    NO_ROWS
};

static int bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    /* a: images f32[2,3,3,1], offsets f32[2,2], i32[2,3,3,1], f32[2,3],
     * f32[3,2], f32[2,0,3,1]. */
    const int64_t size[2] = { 2, 2 }, negative[2] = { 2, -1 };
    weft_glimpse_noise z = WEFT_GLIMPSE_ZERO;
    switch (*(const int *)user) {
    case NULL_SIZE: outs[0] = weft_extract_glimpse(cx, a[0], NULL, a[1], 1, 1, z, NULL); break;
    case NEGATIVE_SIZE:
        outs[0] = weft_extract_glimpse(cx, a[0], negative, a[1], 1, 1, z, NULL);
        break;
    case BAD_NOISE:
        outs[0] = weft_extract_glimpse(cx, a[0], size, a[1], 1, 1, (weft_glimpse_noise)7, NULL);
        break;
    case NO_SEED:
        outs[0] = weft_extract_glimpse(cx, a[0], size, a[1], 1, 1, WEFT_GLIMPSE_GAUSSIAN, NULL);
        break;
    case INT_IMAGES: outs[0] = weft_extract_glimpse(cx, a[2], size, a[1], 1, 1, z, NULL); break;
    case RANK3:
        outs[0] = weft_extract_glimpse(cx, weft_squeeze(cx, a[0], 3), size, a[1], 1, 1, z, NULL);
        break;
    case OFFSETS_3: outs[0] = weft_extract_glimpse(cx, a[0], size, a[3], 1, 1, z, NULL); break;
    case BATCHES: outs[0] = weft_extract_glimpse(cx, a[0], size, a[4], 1, 1, z, NULL); break;
    default: outs[0] = weft_extract_glimpse(cx, a[5], size, a[1], 1, 1, z, NULL); break;
    }
    return weft_ctx_status(cx);
}

Test(ops_glimpse, refused_calls_name_the_op)
{
    const double v[18] = { 0 };
    weft_tensor *args[6] = { test_tensor(WEFT_F32, 4, (const int64_t[]){ 2, 3, 3, 1 }, v),
                             test_tensor(WEFT_F32, 2, (const int64_t[]){ 2, 2 }, v),
                             test_tensor(WEFT_I32, 4, (const int64_t[]){ 2, 3, 3, 1 }, v),
                             test_tensor(WEFT_F32, 2, (const int64_t[]){ 2, 3 }, v),
                             test_tensor(WEFT_F32, 2, (const int64_t[]){ 3, 2 }, v),
                             test_tensor(WEFT_F32, 4, (const int64_t[]){ 2, 0, 3, 1 }, v) };
    const op_error_case cases[] = {
        { NULL_SIZE, WEFT_EINVAL, "weft_extract_glimpse: size is NULL or not two sizes" },
        { NEGATIVE_SIZE, WEFT_EINVAL, "weft_extract_glimpse: size is NULL or not two sizes" },
        { BAD_NOISE, WEFT_EINVAL, "weft_extract_glimpse: noise 7 is not a weft_glimpse_noise" },
        { NO_SEED, WEFT_EINVAL, "weft_extract_glimpse: uniform and gaussian noise need a seed" },
        { INT_IMAGES, WEFT_EDTYPE, "weft_extract_glimpse: the input i32[2,3,3,1] or the offsets "
                                   "f32[2,2] are not f32 or f64" },
        { RANK3, WEFT_ESHAPE, "weft_extract_glimpse: the input f32[2,3,3] is not [batch, height, "
                              "width, channels]" },
        { OFFSETS_3, WEFT_ESHAPE, "the offsets f32[2,3] not [batch, 2]" },
        { BATCHES, WEFT_ESHAPE, "the offsets f32[3,2] not [batch, 2]" },
        { NO_ROWS, WEFT_ESHAPE, "the input f32[2,0,3,1] is not [batch, height, width, channels] "
                                "with a height and width of 1 or more" },
    };
    op_expect_errors(rts[1], bad_body, cases, sizeof cases / sizeof *cases, args, 6);
    for (int i = 0; i < 6; i++)
        weft_tensor_release(args[i]);
}
