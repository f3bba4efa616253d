/* weft_resize_ex's kernel methods (lanczos3, lanczos5, gaussian,
 * mitchellcubic; bilinear and bicubic with antialias): a constant image
 * stays constant; at the same size the Lanczos windows and the antialiased
 * triangle give the image back and Mitchell's and the Gaussian blur it by
 * their weights at 0 and 1; halving with the antialiased triangle weighs
 * 3/7, 3/7, 1/7 as worked out by hand; a random image against the
 * separable filter written out in double (Lanczos 3, shrinking with
 * antialias, growing without); the same bits eagerly and traced on 1, 2
 * and 4 workers; a method out of range is refused. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_resize_filter, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

typedef struct rf_case {
    int64_t h, w;
    weft_resize_method method;
    bool antialias;
} rf_case;

static int rf_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const rf_case *c = user;
    outs[0] = weft_resize_ex(cx, a[0], c->h, c->w, c->method, c->antialias);
    return weft_ctx_status(cx);
}

static weft_tensor *image(weft_dtype dt, int64_t h, int64_t w, int64_t ch, const double *v)
{
    int64_t dims[4] = { 1, h, w, ch }, n = h * w * ch;
    float *f = malloc(sizeof *f * (size_t)n);
    cr_assert_not_null(f);
    for (int64_t i = 0; i < n; i++)
        f[i] = (float)v[i];
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(dt, 4, dims, dt == WEFT_F32 ? (const void *)f : v, &t), 0);
    free(f);
    return t;
}

static const weft_resize_method kernel_methods[] = {
    WEFT_RESIZE_LANCZOS3, WEFT_RESIZE_LANCZOS5, WEFT_RESIZE_GAUSSIAN,
    WEFT_RESIZE_MITCHELLCUBIC, WEFT_RESIZE_BILINEAR, WEFT_RESIZE_BICUBIC
};

/* Normalized weights: a constant stays (within f32 rounding). */
Test(ops_resize_filter, constant_stays_constant)
{
    double v[6 * 7 * 2];
    for (int i = 0; i < 6 * 7 * 2; i++)
        v[i] = 2.5;
    weft_tensor *t = image(WEFT_F32, 6, 7, 2, v);
    const int64_t sizes[3][2] = { { 3, 4 }, { 6, 7 }, { 13, 11 } };
    for (size_t m = 0; m < sizeof kernel_methods / sizeof *kernel_methods; m++)
        for (int s = 0; s < 3; s++)
            for (int aa = 0; aa < 2; aa++) {
                rf_case c = { sizes[s][0], sizes[s][1], kernel_methods[m], aa };
                weft_tensor *out;
                op_results_everywhere(rf_body, &c, &t, 1, &out, 1, "constant");
                test_assert_shape(out, WEFT_F32, 4,
                                  (const int64_t[]){ 1, sizes[s][0], sizes[s][1], 2 }, "resized");
                for (int64_t i = 0; i < weft_tensor_numel(out); i++)
                    cr_assert(fabs(test_element(out, i) - 2.5) < 1e-5, "method %d size %d "
                              "antialias %d: element %lld is %.9g", (int)kernel_methods[m], s,
                              aa, (long long)i, test_element(out, i));
                weft_tensor_release(out);
            }
    weft_tensor_release(t);
}

/* The same size: a spike [0, 0, 1, 0, 0] (one row) keeps or spreads as
 * each kernel's weights at 0 and 1 say. */
Test(ops_resize_filter, same_size_weights)
{
    const double spike[5] = { 0, 0, 1, 0, 0 };
    weft_tensor *t = image(WEFT_F64, 1, 5, 1, spike);
    const double g = exp(-2.0);   /* the Gaussian at 1: exp(-1 / (2 * 0.25)) */
    struct { weft_resize_method m; bool aa; double at0, at1; double tol; } cases[] = {
        { WEFT_RESIZE_LANCZOS3, false, 1, 0, 1e-6 },
        { WEFT_RESIZE_LANCZOS5, false, 1, 0, 1e-6 },
        { WEFT_RESIZE_BILINEAR, true, 1, 0, 0 },
        { WEFT_RESIZE_MITCHELLCUBIC, false, 8.0 / 9.0, 1.0 / 18.0, 1e-6 },
        { WEFT_RESIZE_GAUSSIAN, false, 1 / (1 + 2 * g), g / (1 + 2 * g), 1e-6 },
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        rf_case c = { 1, 5, cases[k].m, cases[k].aa };
        weft_tensor *out;
        op_results_everywhere(rf_body, &c, &t, 1, &out, 1, "same size");
        const double want[5] = { 0, cases[k].at1, cases[k].at0, cases[k].at1, 0 };
        for (int i = 0; i < 5; i++)
            cr_expect(fabs(test_element(out, i) - want[i]) <= cases[k].tol, "case %zu pixel %d: "
                      "%.9g, want %.9g", k, i, test_element(out, i), want[i]);
        weft_tensor_release(out);
    }
    weft_tensor_release(t);
}

/* Halving [a, b, c, d] with the antialiased triangle: output 0 samples at
 * 1.0 with the kernel twice as wide, pixels 0, 1, 2 at distances 0.25,
 * 0.25, 0.75 (scaled): weights 0.75, 0.75, 0.25 over 1.75. */
Test(ops_resize_filter, halving_by_hand)
{
    const double row[4] = { 1, 2, 4, 8 };
    weft_tensor *t = image(WEFT_F64, 1, 4, 1, row);
    rf_case c = { 1, 2, WEFT_RESIZE_BILINEAR, true };
    weft_tensor *out;
    op_results_everywhere(rf_body, &c, &t, 1, &out, 1, "halving");
    double w0 = 0.75f / 1.75f, w2 = 0.25f / 1.75f;   /* the f32 weights */
    double want0 = w0 * 1 + w0 * 2 + w2 * 4, want1 = w2 * 2 + w0 * 4 + w0 * 8;
    cr_expect(fabs(test_element(out, 0) - want0) < 1e-6, "%.9g, want %.9g",
              test_element(out, 0), want0);
    cr_expect(fabs(test_element(out, 1) - want1) < 1e-6, "%.9g, want %.9g",
              test_element(out, 1), want1);
    weft_tensor_release(out);
    /* Without antialias the triangle is plain bilinear: the pixels at 1.0
     * are 1 and 2 equally (0.5 each). */
    c.antialias = false;
    op_results_everywhere(rf_body, &c, &t, 1, &out, 1, "no antialias");
    cr_expect(fabs(test_element(out, 0) - 1.5) < 1e-12, "%.9g", test_element(out, 0));
    weft_tensor_release(out);
    weft_tensor_release(t);
}

/* The Lanczos 3 window in double. */
static double lanczos3(double x)
{
    x = fabs(x);
    if (x > 3)
        return 0;
    if (x <= 1e-3)
        return 1;
    return 3 * sin(M_PI * x) * sin(M_PI * x / 3) / (M_PI * M_PI * x * x);
}

/* One dim's weights, TensorFlow's rule in double: out x in. */
static void ref_weights(int64_t out, int64_t in, bool antialias, double *w)
{
    double inv = (double)in / (double)out, ks = antialias && inv > 1 ? inv : 1;
    for (int64_t o = 0; o < out; o++) {
        double sample = (o + 0.5) * inv, total = 0;
        for (int64_t i = 0; i < in; i++) {
            double pos = i + 0.5 - sample;
            w[o * in + i] = fabs(pos) <= 3 * ks + 0.5 ? lanczos3(pos / ks) : 0;
            total += w[o * in + i];
        }
        for (int64_t i = 0; i < in; i++)
            w[o * in + i] /= total;
    }
}

Test(ops_resize_filter, lanczos3_against_the_filter_in_double)
{
    enum { H = 9, W = 11, C = 2 };
    double v[H * W * C];
    uint64_t st = 0xa54ff53a5f1d36f1u;
    for (int i = 0; i < H * W * C; i++)
        v[i] = op_uniform(&st);
    weft_tensor *t = image(WEFT_F64, H, W, C, v);
    const rf_case cases[] = { { 4, 5, WEFT_RESIZE_LANCZOS3, true },
                              { 17, 23, WEFT_RESIZE_LANCZOS3, false } };
    for (size_t k = 0; k < 2; k++) {
        const rf_case *c = &cases[k];
        double *wr = malloc(sizeof *wr * (size_t)(c->h * H)),
               *wc = malloc(sizeof *wc * (size_t)(c->w * W));
        cr_assert(wr && wc);
        ref_weights(c->h, H, c->antialias, wr);
        ref_weights(c->w, W, c->antialias, wc);
        weft_tensor *out;
        op_results_everywhere(rf_body, (void *)c, &t, 1, &out, 1, "lanczos3");
        for (int64_t y = 0; y < c->h; y++)
            for (int64_t x = 0; x < c->w; x++)
                for (int ch = 0; ch < C; ch++) {
                    double want = 0;
                    for (int i = 0; i < H; i++)
                        for (int j = 0; j < W; j++)
                            want += wr[y * H + i] * wc[x * W + j] * v[(i * W + j) * C + ch];
                    double got = test_element(out, (y * c->w + x) * C + ch);
                    cr_assert(fabs(got - want) < 2e-6, "case %zu (%lld, %lld, %d): %.9g, want "
                              "%.9g", k, (long long)y, (long long)x, ch, got, want);
                }
        weft_tensor_release(out);
        free(wr);
        free(wc);
    }
    weft_tensor_release(t);
}

static int bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_resize_ex(cx, a[0], 2, 2, (weft_resize_method)99, true);
    return weft_ctx_status(cx);
}

Test(ops_resize_filter, a_method_out_of_range_is_refused)
{
    const double v[4] = { 0 };
    weft_tensor *t = image(WEFT_F32, 2, 2, 1, v);
    const op_error_case cases[] = {
        { 0, WEFT_EINVAL, "weft_resize_ex: method 99 is not a weft_resize_method" },
    };
    op_expect_errors(rts[1], bad_body, cases, 1, &t, 1);
    weft_tensor_release(t);
}
