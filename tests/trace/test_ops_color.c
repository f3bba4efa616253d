/* The colour ops (rgb_to_yiq/yuv and back, rgb_to_hsv, hsv_to_rgb,
 * adjust_saturation, adjust_hue, adjust_brightness, adjust_gamma) and the
 * image filters sobel_edges and ssim, checked against per-pixel loops
 * written from TensorFlow's kernels (its scalar HSV helpers, its Sobel
 * taps on a reflected border, SSIM's Gaussian windows), on TensorFlow's
 * documented example, eagerly and traced on 1, 2 and 4 workers (the same
 * bits everywhere); and their errors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_color, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

typedef enum color_op {
    TO_YIQ, FROM_YIQ, TO_YUV, FROM_YUV, TO_HSV, FROM_HSV, SATURATION, HUE, BRIGHTNESS, GAMMA,
    SOBEL, SSIM, MS_SSIM
} color_op;

typedef struct color_case {
    color_op op;
    double p;   /* the factor, delta or gamma; ssim's max_val */
    int64_t filter_size;
} color_case;

/* MS_SSIM's power factors (NULL: TensorFlow's) and their count. */
static const double *ms_powers;
static size_t ms_n;

static int body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const color_case *c = user;
    switch (c->op) {
    case TO_YIQ: outs[0] = weft_rgb_to_yiq(cx, a[0]); break;
    case FROM_YIQ: outs[0] = weft_yiq_to_rgb(cx, a[0]); break;
    case TO_YUV: outs[0] = weft_rgb_to_yuv(cx, a[0]); break;
    case FROM_YUV: outs[0] = weft_yuv_to_rgb(cx, a[0]); break;
    case TO_HSV: outs[0] = weft_rgb_to_hsv(cx, a[0]); break;
    case FROM_HSV: outs[0] = weft_hsv_to_rgb(cx, a[0]); break;
    case SATURATION: outs[0] = weft_adjust_saturation(cx, a[0], c->p); break;
    case HUE: outs[0] = weft_adjust_hue(cx, a[0], c->p); break;
    case BRIGHTNESS: outs[0] = weft_adjust_brightness(cx, a[0], c->p); break;
    case GAMMA: outs[0] = weft_adjust_gamma(cx, a[0], c->p, 2); break;
    case SOBEL: outs[0] = weft_sobel_edges(cx, a[0]); break;
    case SSIM:
        outs[0] = weft_ssim(cx, a[0], a[1], c->p, c->filter_size, 1.5, 0.01, 0.03);
        break;
    case MS_SSIM:
        outs[0] = weft_ssim_multiscale(cx, a[0], a[1], c->p, ms_powers, ms_n, c->filter_size,
                                       1.0, 0.01, 0.03);
        break;
    }
    return weft_ctx_status(cx);
}

static weft_tensor *result_everywhere(const color_case *c, weft_tensor *const *args)
{
    weft_tensor *y;
    op_results_everywhere(body, (void *)c, args, c->op >= SSIM ? 2 : 1, &y, 1, "color");
    return y;
}

static uint64_t rng = 0x853c49e6748fea9bULL;

/* count values in [0, 1), with a few exact greys and ties among them. */
static double *pixels(size_t count)
{
    double *v = malloc(sizeof *v * count);
    cr_assert_not_null(v);
    for (size_t i = 0; i < count; i++)
        v[i] = (op_uniform(&rng) + 1) / 2;
    v[0] = v[1] = v[2] = 0.25;            /* grey */
    v[3] = v[4] = v[5] = 0;               /* black */
    v[6] = v[7] = 0.75, v[8] = 0.5;       /* r and g tie for the largest */
    v[9] = 0.2, v[10] = v[11] = 0.9;      /* g and b tie */
    return v;
}

/* ---- References: TensorFlow's scalar helpers, in double ------------------- */

static void hsv_of(double r, double g, double b, double *h, double *s, double *v)
{
    double vv = fmax(r, fmax(g, b)), range = vv - fmin(r, fmin(g, b));
    *s = vv > 0 ? range / vv : 0;
    double norm = 1.0 / (6.0 * range), hh;
    if (r == vv)
        hh = norm * (g - b);
    else if (g == vv)
        hh = norm * (b - r) + 2.0 / 6.0;
    else
        hh = norm * (r - g) + 4.0 / 6.0;
    if (range <= 0.0)
        hh = 0;
    if (hh < 0.0)
        hh = hh + 1;
    *v = vv;
    *h = hh;
}

static void rgb_of(double h, double s, double v, double *r, double *g, double *b)
{
    double c = s * v, m = v - c, dh = h * 6, rr, gg, bb;
    int category = (int)dh;
    double fmodu = dh;
    while (fmodu <= 0)
        fmodu += 2;
    while (fmodu >= 2)
        fmodu -= 2;
    double x = c * (1 - fabs(fmodu - 1));
    switch (category) {
    case 0: rr = c, gg = x, bb = 0; break;
    case 1: rr = x, gg = c, bb = 0; break;
    case 2: rr = 0, gg = c, bb = x; break;
    case 3: rr = 0, gg = x, bb = c; break;
    case 4: rr = x, gg = 0, bb = c; break;
    case 5: rr = c, gg = 0, bb = x; break;
    default: rr = gg = bb = 0; break;
    }
    *r = rr + m;
    *g = gg + m;
    *b = bb + m;
}

static void check_pixels(const weft_tensor *y, const double *want, size_t count, double tol,
                         const char *what)
{
    for (size_t i = 0; i < count; i++) {
        double got = test_element(y, (int64_t)i);
        cr_assert(fabs(got - want[i]) <= tol, "%s: element %zu is %.17g, want %.17g", what, i,
                  got, want[i]);
    }
}

/* TensorFlow's docstring: rgb_to_yiq of [1, 2, 3] is [1.815, -0.91724455,
 * 0.09962624]; each conversion is its matrix's product, and the inverse
 * conversion gives the pixels back (YUV to 1e-8; TensorFlow's YIQ
 * matrices are each other's inverse only to 6e-5). */
Test(ops_color, linear_spaces_match_tensorflow_and_invert)
{
    double one[3] = { 1, 2, 3 }, want[3] = { 1.815, -0.91724455, 0.09962624 };
    weft_tensor *x = test_tensor(WEFT_F32, 3, (int64_t[]){ 1, 1, 3 }, one);
    color_case c = { .op = TO_YIQ };
    weft_tensor *y = result_everywhere(&c, &x);
    check_pixels(y, want, 3, 1e-6, "yiq docstring");
    weft_tensor_release(y);
    weft_tensor_release(x);
    enum { N = 4 * 5 * 3 };
    double *v = pixels(N);
    x = test_tensor(WEFT_F64, 3, (int64_t[]){ 4, 5, 3 }, v);
    const color_op there[2] = { TO_YIQ, TO_YUV }, back[2] = { FROM_YIQ, FROM_YUV };
    static const double yuv[3][3] = { { 0.299, -0.14714119, 0.61497538 },
                                      { 0.587, -0.28886916, -0.51496512 },
                                      { 0.114, 0.43601035, -0.10001026 } };
    for (int s = 0; s < 2; s++) {
        color_case to = { .op = there[s] }, from = { .op = back[s] };
        weft_tensor *mid = result_everywhere(&to, &x);
        if (s) {
            double prod[N];
            for (int p = 0; p < N / 3; p++)
                for (int j = 0; j < 3; j++)
                    prod[3 * p + j] = v[3 * p] * yuv[0][j] + v[3 * p + 1] * yuv[1][j] +
                                      v[3 * p + 2] * yuv[2][j];
            check_pixels(mid, prod, N, 1e-15, "yuv product");
        }
        weft_tensor *round = result_everywhere(&from, &mid);
        test_assert_shape(round, WEFT_F64, 3, (int64_t[]){ 4, 5, 3 }, "round trip");
        check_pixels(round, v, N, s ? 1e-8 : 1e-4, s ? "yuv round trip" : "yiq round trip");
        weft_tensor_release(round);
        weft_tensor_release(mid);
    }
    weft_tensor_release(x);
    free(v);
}

Test(ops_color, hsv_matches_tensorflows_helpers)
{
    enum { P = 64, N = P * 3 };
    double *v = pixels(N), want[N], hsv_in[N];
    for (int p = 0; p < P; p++) {
        hsv_of(v[3 * p], v[3 * p + 1], v[3 * p + 2], &want[3 * p], &want[3 * p + 1],
               &want[3 * p + 2]);
        /* Hues across [0, 1), the sextant edges among them. */
        hsv_in[3 * p] = p < 6 ? p / 6.0 : v[3 * p];
        hsv_in[3 * p + 1] = v[3 * p + 1];
        hsv_in[3 * p + 2] = v[3 * p + 2];
    }
    for (int f = 0; f < 2; f++) {
        weft_dtype dt = f ? WEFT_F64 : WEFT_F32;
        double tol = f ? 1e-12 : 1e-6;
        weft_tensor *x = test_tensor(dt, 2, (int64_t[]){ P, 3 }, v);
        color_case to = { .op = TO_HSV }, from = { .op = FROM_HSV };
        weft_tensor *y = result_everywhere(&to, &x);
        if (f)
            check_pixels(y, want, N, tol, "rgb_to_hsv");
        weft_tensor *back = result_everywhere(&from, &y);
        check_pixels(back, v, N, tol, "hsv round trip");
        weft_tensor_release(back);
        weft_tensor_release(y);
        weft_tensor_release(x);
        x = test_tensor(dt, 2, (int64_t[]){ P, 3 }, hsv_in);
        y = result_everywhere(&from, &x);
        double rgb[N];
        for (int p = 0; p < P; p++)
            rgb_of(hsv_in[3 * p], hsv_in[3 * p + 1], hsv_in[3 * p + 2], &rgb[3 * p],
                   &rgb[3 * p + 1], &rgb[3 * p + 2]);
        check_pixels(y, rgb, N, tol, "hsv_to_rgb");
        weft_tensor_release(y);
        weft_tensor_release(x);
    }
    free(v);
}

/* adjust_saturation and adjust_hue against TensorFlow's kernels: the
 * scalar helpers around the change of s (clipped) or h (wrapped). */
Test(ops_color, saturation_and_hue_match_tensorflows_kernels)
{
    enum { P = 40, N = P * 3 };
    double *v = pixels(N);
    weft_tensor *x = test_tensor(WEFT_F64, 3, (int64_t[]){ 2, P / 2, 3 }, v);
    const color_case cases[] = { { SATURATION, 0.3, 0 }, { SATURATION, 2.5, 0 },
                                 { HUE, 0.2, 0 },        { HUE, -0.7, 0 },
                                 { HUE, 1, 0 } };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const color_case *c = &cases[k];
        double want[N];
        for (int p = 0; p < P; p++) {
            double h, s, val;
            hsv_of(v[3 * p], v[3 * p + 1], v[3 * p + 2], &h, &s, &val);
            if (c->op == SATURATION) {
                s = fmin(1, fmax(0, s * c->p));
            } else {
                h = fmod(h + c->p, 1.0);
                h += h < 0 ? 1 : 0;
            }
            rgb_of(h, s, val, &want[3 * p], &want[3 * p + 1], &want[3 * p + 2]);
        }
        weft_tensor *y = result_everywhere(c, &x);
        check_pixels(y, want, N, 1e-12, c->op == SATURATION ? "saturation" : "hue");
        weft_tensor_release(y);
    }
    weft_tensor_release(x);
    free(v);
}

Test(ops_color, brightness_and_gamma)
{
    double v[6] = { 0, 0.25, 0.5, 0.75, 1, 2 }, want[6];
    weft_tensor *x = test_tensor(WEFT_F32, 1, (int64_t[]){ 6 }, v);
    color_case bright = { BRIGHTNESS, -0.25, 0 }, gamma = { GAMMA, 0.5, 0 };
    weft_tensor *y = result_everywhere(&bright, &x);
    for (int i = 0; i < 6; i++)
        want[i] = v[i] - 0.25;
    check_pixels(y, want, 6, 0, "brightness");
    weft_tensor_release(y);
    y = result_everywhere(&gamma, &x);
    for (int i = 0; i < 6; i++)
        want[i] = 2 * sqrt(v[i]);
    check_pixels(y, want, 6, 1e-6, "gamma");
    weft_tensor_release(y);
    weft_tensor_release(x);
}

/* ---- Filters -------------------------------------------------------------- */

/* Element (b, y, x, ch) of an NHWC image with its border reflected. */
static double reflected(const double *img, int64_t h, int64_t w, int64_t c, int64_t b,
                        int64_t y, int64_t x, int64_t ch)
{
    y = y < 0 ? -y : y >= h ? 2 * h - 2 - y : y;
    x = x < 0 ? -x : x >= w ? 2 * w - 2 - x : x;
    return img[((b * h + y) * w + x) * c + ch];
}

Test(ops_color, sobel_edges_match_a_loop)
{
    const int64_t B = 2, H = 5, W = 4, C = 3;
    size_t n = (size_t)(B * H * W * C);
    double *v = pixels(n), *want = malloc(sizeof *want * n * 2);
    cr_assert_not_null(want);
    static const int vert[3][3] = { { -1, -2, -1 }, { 0, 0, 0 }, { 1, 2, 1 } };
    for (int64_t b = 0; b < B; b++)
        for (int64_t y = 0; y < H; y++)
            for (int64_t x = 0; x < W; x++)
                for (int64_t ch = 0; ch < C; ch++) {
                    double dy = 0, dx = 0;
                    for (int i = 0; i < 3; i++)
                        for (int j = 0; j < 3; j++) {
                            double p = reflected(v, H, W, C, b, y + i - 1, x + j - 1, ch);
                            dy += vert[i][j] * p;
                            dx += vert[j][i] * p;   /* the horizontal taps: the transpose */
                        }
                    size_t at = (size_t)(((b * H + y) * W + x) * C + ch) * 2;
                    want[at] = dy;
                    want[at + 1] = dx;
                }
    weft_tensor *x = test_tensor(WEFT_F64, 4, (int64_t[]){ B, H, W, C }, v);
    color_case c = { .op = SOBEL };
    weft_tensor *y = result_everywhere(&c, &x);
    test_assert_shape(y, WEFT_F64, 5, (int64_t[]){ B, H, W, C, 2 }, "sobel");
    check_pixels(y, want, n * 2, 1e-12, "sobel");
    weft_tensor_release(y);
    weft_tensor_release(x);
    free(v);
    free(want);
}

/* TensorFlow's per-channel SSIM terms of one [h, w, c] pair by their
 * definition (a Gaussian of sigma over each VALID window): the mean over
 * the windows of luminance x cs into ssim[ch], of cs alone into cs[ch]. */
static void ssim_terms_ref(const double *a, const double *b, int64_t h, int64_t w, int64_t c,
                           int size, double sigma, double max_val, double *ssim, double *cs)
{
    double g[32 * 32], sum = 0, mid = (size - 1) / 2.0;
    for (int y = 0; y < size; y++)
        for (int x = 0; x < size; x++)
            sum += g[y * size + x] = exp(-((y - mid) * (y - mid) + (x - mid) * (x - mid)) / (2 * sigma * sigma));
    double c1 = 0.01 * max_val * 0.01 * max_val, c2 = 0.03 * max_val * 0.03 * max_val;
    int64_t oh = h - size + 1, ow = w - size + 1;
    for (int64_t ch = 0; ch < c; ch++) {
        double total = 0, total_cs = 0;
        for (int64_t oy = 0; oy < oh; oy++)
            for (int64_t ox = 0; ox < ow; ox++) {
                double ma = 0, mb = 0, saa = 0, sbb = 0, sab = 0;
                for (int y = 0; y < size; y++)
                    for (int x = 0; x < size; x++) {
                        double wt = g[y * size + x] / sum;
                        double pa = a[((oy + y) * w + ox + x) * c + ch];
                        double pb = b[((oy + y) * w + ox + x) * c + ch];
                        ma += wt * pa;
                        mb += wt * pb;
                        saa += wt * pa * pa;
                        sbb += wt * pb * pb;
                        sab += wt * pa * pb;
                    }
                double l = (2 * ma * mb + c1) / (ma * ma + mb * mb + c1);
                double k = (2 * (sab - ma * mb) + c2) / (saa - ma * ma + sbb - mb * mb + c2);
                total += l * k;
                total_cs += k;
            }
        ssim[ch] = total / (double)(oh * ow);
        cs[ch] = total_cs / (double)(oh * ow);
    }
}

/* SSIM of one image pair: its per-channel terms (sigma 1.5) averaged. */
static double ssim_ref(const double *a, const double *b, int64_t h, int64_t w, int64_t c,
                       int size, double max_val)
{
    double ssim[8], cs[8], mean = 0;
    ssim_terms_ref(a, b, h, w, c, size, 1.5, max_val, ssim, cs);
    for (int64_t ch = 0; ch < c; ch++)
        mean += ssim[ch] / (double)c;
    return mean;
}

Test(ops_color, ssim_matches_its_definition)
{
    const int64_t B = 2, H = 14, W = 13, C = 2;
    size_t n = (size_t)(B * H * W * C);
    double *a = pixels(n), *b = malloc(sizeof *b * n);
    cr_assert_not_null(b);
    for (size_t i = 0; i < n; i++)   /* a noisier, darker copy */
        b[i] = 0.8 * a[i] + 0.1 * (op_uniform(&rng) + 1) / 2;
    weft_tensor *args[2] = { test_tensor(WEFT_F64, 4, (int64_t[]){ B, H, W, C }, a),
                             test_tensor(WEFT_F64, 4, (int64_t[]){ B, H, W, C }, b) };
    color_case c = { SSIM, 1.0, 11 };
    weft_tensor *y = result_everywhere(&c, args);
    test_assert_shape(y, WEFT_F64, 1, (int64_t[]){ B }, "ssim");
    for (int64_t i = 0; i < B; i++) {
        size_t off = (size_t)(i * H * W * C);
        double want = ssim_ref(a + off, b + off, H, W, C, 11, 1.0);
        cr_assert(fabs(test_element(y, i) - want) <= 1e-12, "ssim %lld: %.17g, want %.17g",
                  (long long)i, test_element(y, i), want);
        cr_assert(want > 0.2 && want < 0.99, "the pair is neither equal nor unrelated: %g", want);
    }
    weft_tensor_release(y);
    /* One image against itself: 1; rank 3 gives a scalar. */
    weft_tensor *same[2] = { test_tensor(WEFT_F32, 3, (int64_t[]){ H, W, C }, a),
                             test_tensor(WEFT_F32, 3, (int64_t[]){ H, W, C }, a) };
    y = result_everywhere(&c, same);
    test_assert_shape(y, WEFT_F32, 0, NULL, "ssim of one image");
    cr_assert(fabs(test_element(y, 0) - 1) <= 1e-6, "%.9g", test_element(y, 0));
    weft_tensor_release(y);
    for (int k = 0; k < 2; k++) {
        weft_tensor_release(args[k]);
        weft_tensor_release(same[k]);
    }
    free(a);
    free(b);
}

/* [h, w, c] padded at the ends by repeating the last row and column when
 * odd, then 2 x 2 averages, into out ([(h + 1) / 2, (w + 1) / 2, c]). */
static void halve_ref(const double *x, int64_t h, int64_t w, int64_t c, double *out)
{
    int64_t oh = (h + 1) / 2, ow = (w + 1) / 2;
    for (int64_t y = 0; y < oh; y++)
        for (int64_t xx = 0; xx < ow; xx++)
            for (int64_t ch = 0; ch < c; ch++) {
                double s = 0;
                for (int dy = 0; dy < 2; dy++)
                    for (int dx = 0; dx < 2; dx++) {
                        int64_t sy = 2 * y + dy, sx = 2 * xx + dx;
                        sy = sy < h ? sy : h - 1;
                        sx = sx < w ? sx : w - 1;
                        s += x[(sy * w + sx) * c + ch];
                    }
                out[(y * ow + xx) * c + ch] = s / 4;
            }
}

static double ms_ssim_ref(const double *a, const double *b, int64_t h, int64_t w, int64_t c,
                          int size, const double *powers, size_t n)
{
    size_t bytes = sizeof(double) * (size_t)(h * w * c);
    double *x = malloc(bytes), *y = malloc(bytes), *t = malloc(bytes);
    cr_assert(x && y && t);
    memcpy(x, a, bytes);
    memcpy(y, b, bytes);
    double prod[8], ssim[8], cs[8];
    for (int64_t ch = 0; ch < c; ch++)
        prod[ch] = 1;
    for (size_t k = 0; k < n; k++) {
        if (k > 0) {
            halve_ref(x, h, w, c, t);
            memcpy(x, t, sizeof *x * (size_t)(((h + 1) / 2) * ((w + 1) / 2) * c));
            halve_ref(y, h, w, c, t);
            memcpy(y, t, sizeof *y * (size_t)(((h + 1) / 2) * ((w + 1) / 2) * c));
            h = (h + 1) / 2;
            w = (w + 1) / 2;
        }
        ssim_terms_ref(x, y, h, w, c, size, 1.0, 1.0, ssim, cs);
        for (int64_t ch = 0; ch < c; ch++) {
            double v = k + 1 == n ? ssim[ch] : cs[ch];
            prod[ch] *= pow(v > 0 ? v : 0, powers[k]);
        }
    }
    double mean = 0;
    for (int64_t ch = 0; ch < c; ch++)
        mean += prod[ch] / (double)c;
    free(x);
    free(y);
    free(t);
    return mean;
}

/* Three scales of odd and even sizes (25 x 22 -> 13 x 11 -> 7 x 6, each
 * padded where odd), a 5 x 5 filter, and TensorFlow's five default scales
 * on 161 x 164 images (the least that holds the 11 x 11 filter at the
 * last scale), against the definition; identical images give 1. */
Test(ops_color, ssim_multiscale_matches_its_definition)
{
    const double powers[3] = { 0.3, 0.5, 0.2 };
    const struct { int64_t b, h, w, c; int size; const double *powers; size_t n; } forms[2] = {
        { 2, 25, 22, 3, 5, powers, 3 }, { 1, 161, 164, 1, 11, NULL, 5 },
    };
    static const double tf_powers[5] = { 0.0448, 0.2856, 0.3001, 0.2363, 0.1333 };
    for (int f = 0; f < 2; f++) {
        int64_t B = forms[f].b, H = forms[f].h, W = forms[f].w, C = forms[f].c;
        size_t n = (size_t)(B * H * W * C);
        double *a = pixels(n), *b = malloc(sizeof *b * n);
        cr_assert_not_null(b);
        for (size_t i = 0; i < n; i++)
            b[i] = 0.7 * a[i] + 0.2 * (op_uniform(&rng) + 1) / 2;
        weft_tensor *args[2] = { test_tensor(WEFT_F64, 4, (int64_t[]){ B, H, W, C }, a),
                                 test_tensor(WEFT_F64, 4, (int64_t[]){ B, H, W, C }, b) };
        color_case c = { MS_SSIM, 1.0, forms[f].size };
        ms_powers = forms[f].powers;
        ms_n = forms[f].n;
        weft_tensor *y = result_everywhere(&c, args);
        test_assert_shape(y, WEFT_F64, 1, (int64_t[]){ B }, "ms-ssim");
        for (int64_t i = 0; i < B; i++) {
            size_t off = (size_t)(i * H * W * C);
            double want = ms_ssim_ref(a + off, b + off, H, W, C, forms[f].size,
                                      forms[f].powers ? forms[f].powers : tf_powers, forms[f].n);
            cr_assert(fabs(test_element(y, i) - want) <= 1e-12,
                      "form %d, %lld: %.17g, want %.17g", f, (long long)i, test_element(y, i),
                      want);
            cr_assert(want > 0.2 && want < 0.99, "neither equal nor unrelated: %g", want);
        }
        weft_tensor_release(y);
        y = result_everywhere(&c, (weft_tensor *[]){ args[0], args[0] });
        for (int64_t i = 0; i < B; i++)
            cr_assert(fabs(test_element(y, i) - 1) <= 1e-12, "%.17g", test_element(y, i));
        weft_tensor_release(y);
        /* A negative image: the contrast-structure terms are negative, and
         * relu makes the product 0 (not NaN). */
        for (size_t i = 0; i < n; i++)
            b[i] = 1 - a[i];
        weft_tensor *neg = test_tensor(WEFT_F64, 4, (int64_t[]){ B, H, W, C }, b);
        y = result_everywhere(&c, (weft_tensor *[]){ args[0], neg });
        for (int64_t i = 0; i < B; i++)
            cr_assert(test_element(y, i) == 0, "negative image %lld: %.17g", (long long)i,
                      test_element(y, i));
        weft_tensor_release(y);
        weft_tensor_release(neg);
        weft_tensor_release(args[0]);
        weft_tensor_release(args[1]);
        free(a);
        free(b);
    }
}

/* ---- Errors ----------------------------------------------------------------- */

static int bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    switch (*(const int *)user) {
    case 0: outs[0] = weft_rgb_to_hsv(cx, a[1]); break;                          /* [2,4,4,2] */
    case 1: outs[0] = weft_rgb_to_yuv(cx, weft_cast(cx, a[0], WEFT_I32)); break;
    case 2: outs[0] = weft_adjust_hue(cx, a[0], 1.5); break;
    case 3: outs[0] = weft_adjust_saturation(cx, a[0], INFINITY); break;
    case 4: outs[0] = weft_adjust_gamma(cx, a[0], -1, 1); break;
    case 5: outs[0] = weft_sobel_edges(cx, a[2]); break;                         /* [1,1,3,3] */
    case 6: outs[0] = weft_ssim(cx, a[0], a[1], 1, 3, 1.5, 0.01, 0.03); break;
    case 7: outs[0] = weft_ssim(cx, a[1], a[1], 1, 5, 1.5, 0.01, 0.03); break;
    case 8: outs[0] = weft_ssim(cx, a[1], a[1], 1, 3, 0, 0.01, 0.03); break;
    case 9:
        outs[0] = weft_ssim_multiscale(cx, a[1], a[1], 1, NULL, 0, 3, 1.5, 0.01, 0.03);
        break;
    case 10:
        outs[0] = weft_ssim_multiscale(cx, a[1], a[1], 1, (const double[]){ 1 }, 0, 3, 1.5,
                                       0.01, 0.03);
        break;
    }
    return weft_ctx_status(cx);
}

Test(ops_color, errors_name_the_op)
{
    const op_error_case cases[] = {
        { 0, WEFT_ESHAPE, "weft_rgb_to_hsv: f64[2,4,4,2] does not have 3 channels in its last "
                          "dim" },
        { 1, WEFT_EDTYPE, "weft_rgb_to_yuv: the images i32[2,4,4,3] are not f32 or f64" },
        { 2, WEFT_EINVAL, "weft_adjust_hue: delta 1.5 is not in [-1, 1]" },
        { 3, WEFT_EINVAL, "weft_adjust_saturation: saturation_factor inf is not finite" },
        { 4, WEFT_EINVAL, "weft_adjust_gamma: gamma -1 is not a finite number >= 0" },
        { 5, WEFT_ESHAPE, "weft_sobel_edges: the images f64[1,1,3,3] are smaller than 2 x 2" },
        { 6, WEFT_ESHAPE, "weft_ssim: the images f64[2,4,4,3] and f64[2,4,4,2] do not have one "
                          "shape" },
        { 7, WEFT_ESHAPE, "weft_ssim: the images f64[2,4,4,2] are smaller than the 5 x 5 "
                          "filter" },
        { 8, WEFT_EINVAL, "weft_ssim: filter_sigma 0 is not finite and > 0" },
        { 9, WEFT_ESHAPE, "weft_ssim_multiscale: the images f64[2,4,4,2] shrink to 1 x 1 at "
                          "scale 4, smaller than the 3 x 3 filter" },
        { 10, WEFT_EINVAL, "weft_ssim_multiscale: 0 scales, not 1..16" },
    };
    double v[96] = { 0 };
    weft_tensor *args[3] = { test_tensor(WEFT_F64, 4, (int64_t[]){ 2, 4, 4, 3 }, v),
                             test_tensor(WEFT_F64, 4, (int64_t[]){ 2, 4, 4, 2 }, v),
                             test_tensor(WEFT_F64, 4, (int64_t[]){ 1, 1, 3, 3 }, v) };
    op_expect_errors(rt, bad_body, cases, sizeof cases / sizeof cases[0], args, 3);
    for (int k = 0; k < 3; k++)
        weft_tensor_release(args[k]);
}
