/* The image ops (space_to_depth, depth_to_space, rgb_to_grayscale,
 * grayscale_to_rgb, per_image_standardization, adjust_contrast,
 * image_gradients, total_variation, psnr, extract_patches,
 * extract_volume_patches): values against references written out here
 * from TensorFlow's definitions, the same bits eagerly and traced on 1, 2
 * and 4 workers, a batch unknown while tracing, and the refused calls,
 * whose messages name the op. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_image, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

typedef enum im_op {
    S2D, D2S, GRAY, STANDARDIZE, CONTRAST, GRADIENTS, TV, PSNR, PATCHES, GRAY_TO_RGB, VOLUME,
    VOLUME_GRAD, VOLUME_LOSS
} im_op;

typedef struct im_case {
    im_op op;
    int64_t block;
    double factor;
    int64_t sizes[3], strides[3], rates[2];   /* PATCHES (two of each), VOLUME */
    weft_padding padding;
} im_case;

static int im_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const im_case *c = user;
    switch (c->op) {
    case S2D: outs[0] = weft_space_to_depth(cx, a[0], c->block); break;
    case D2S: outs[0] = weft_depth_to_space(cx, a[0], c->block); break;
    case GRAY: outs[0] = weft_rgb_to_grayscale(cx, a[0]); break;
    case GRAY_TO_RGB: outs[0] = weft_grayscale_to_rgb(cx, a[0]); break;
    case STANDARDIZE: outs[0] = weft_per_image_standardization(cx, a[0]); break;
    case CONTRAST: outs[0] = weft_adjust_contrast(cx, a[0], c->factor); break;
    case GRADIENTS: return weft_image_gradients(cx, a[0], outs);
    case TV: outs[0] = weft_total_variation(cx, a[0]); break;
    case PSNR: outs[0] = weft_psnr(cx, a[0], a[1], c->factor); break;
    case PATCHES:
        outs[0] = weft_extract_patches(cx, a[0], c->sizes, c->strides, c->rates, c->padding);
        break;
    case VOLUME:
        outs[0] = weft_extract_volume_patches(cx, a[0], c->sizes, c->strides, c->padding);
        break;
    case VOLUME_GRAD: {
        im_case inner = *c;
        inner.op = VOLUME_LOSS;
        return weft_gradients(cx, im_body, &inner, a, 2, 1, NULL, outs);
    }
    case VOLUME_LOSS: {
        weft_value *p = weft_extract_volume_patches(cx, a[0], c->sizes, c->strides, c->padding);
        outs[0] = weft_sum(cx, weft_mul(cx, p, a[1]), WEFT_ALL_AXES);
        break;
    }
    }
    return weft_ctx_status(cx);
}

static weft_tensor *tensor_of(weft_dtype dt, int rank, const int64_t *dims, const double *v)
{
    int64_t n = 1;
    for (int d = 0; d < rank; d++)
        n *= dims[d];
    size_t es = weft_dtype_size(dt);
    char *buf = malloc((size_t)(n ? n : 1) * es);
    cr_assert_not_null(buf);
    for (int64_t i = 0; i < n; i++) {
        if (dt == WEFT_F64)
            ((double *)buf)[i] = v[i];
        else if (dt == WEFT_F32)
            ((float *)buf)[i] = (float)v[i];
        else
            ((int32_t *)buf)[i] = (int32_t)v[i];
    }
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(dt, rank, dims, buf, &t), 0, "%s", weft_errmsg());
    free(buf);
    return t;
}

static double at(const weft_tensor *t, int64_t i)
{
    switch (weft_tensor_dtype(t)) {
    case WEFT_F64: return ((const double *)weft_tensor_data(t))[i];
    case WEFT_F32: return ((const float *)weft_tensor_data(t))[i];
    case WEFT_I64: return (double)((const int64_t *)weft_tensor_data(t))[i];
    default: return ((const int32_t *)weft_tensor_data(t))[i];
    }
}

static void expect_dims(const weft_tensor *t, int rank, const int64_t *dims)
{
    cr_assert_eq(weft_tensor_rank(t), rank);
    for (int d = 0; d < rank; d++)
        cr_assert_eq(weft_tensor_dims(t)[d], dims[d], "dim %d is %lld, expected %lld", d,
                     (long long)weft_tensor_dims(t)[d], (long long)dims[d]);
}

/* Every element within tol * max(1, |want|) of want (infinities exactly). */
static void expect_near(const weft_tensor *t, const double *want, int64_t n, double tol,
                        const char *what)
{
    cr_assert_eq(weft_tensor_numel(t), n, "%s: %lld elements", what,
                 (long long)weft_tensor_numel(t));
    for (int64_t i = 0; i < n; i++) {
        double g = at(t, i);
        bool ok = isinf(want[i]) ? g == want[i] : fabs(g - want[i]) <= tol * fmax(1, fabs(want[i]));
        cr_assert(ok, "%s: element %lld is %.17g, expected %.17g", what, (long long)i, g, want[i]);
    }
}

/* ---- space_to_depth and depth_to_space --------------------------------- */

Test(ops_image, space_to_depth_and_back)
{
    enum { B = 2, H = 4, W = 6, C = 3, S = 2 };
    double x[B * H * W * C];
    for (int i = 0; i < B * H * W * C; i++)
        x[i] = i;
    weft_tensor *t = tensor_of(WEFT_I32, 4, (const int64_t[]){ B, H, W, C }, x);
    im_case c = { .op = S2D, .block = S, .factor = 0 };
    weft_tensor *deep;
    op_results_everywhere(im_body, &c, &t, 1, &deep, 1, "space_to_depth");
    expect_dims(deep, 4, (const int64_t[]){ B, H / S, W / S, S * S * C });
    /* out[b, i, j, (di S + dj) C + ch] = x[b, i S + di, j S + dj, ch]. */
    for (int b = 0; b < B; b++)
        for (int i = 0; i < H / S; i++)
            for (int j = 0; j < W / S; j++)
                for (int di = 0; di < S; di++)
                    for (int dj = 0; dj < S; dj++)
                        for (int ch = 0; ch < C; ch++) {
                            int64_t o = (((int64_t)b * (H / S) + i) * (W / S) + j) * S * S * C +
                                        (di * S + dj) * C + ch;
                            double want = x[((b * H + i * S + di) * W + j * S + dj) * C + ch];
                            cr_assert_eq(at(deep, o), want, "element %lld", (long long)o);
                        }
    im_case back = { .op = D2S, .block = S, .factor = 0 };
    weft_tensor *again;
    op_results_everywhere(im_body, &back, &deep, 1, &again, 1, "depth_to_space");
    expect_dims(again, 4, (const int64_t[]){ B, H, W, C });
    cr_assert(op_same_bits(again, t), "depth_to_space(space_to_depth(x)) is not x");
    weft_tensor_release(again);
    weft_tensor_release(deep);
    weft_tensor_release(t);
}

/* depth_to_space of [1, 1, 1, 8] with block 2: TensorFlow's example
 * layout, channels c of pixel (di, dj) at (di 2 + dj) 2 + c. */
Test(ops_image, depth_to_space_known_answer_and_unknown_batch)
{
    double x[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    weft_tensor *t = tensor_of(WEFT_F32, 4, (const int64_t[]){ 1, 1, 1, 8 }, x);
    im_case c = { .op = D2S, .block = 2, .factor = 0 };
    weft_tensor *out;
    op_results_everywhere(im_body, &c, &t, 1, &out, 1, "depth_to_space");
    expect_dims(out, 4, (const int64_t[]){ 1, 2, 2, 2 });
    expect_near(out, x, 8, 0, "depth_to_space");
    weft_tensor_release(out);
    weft_tensor_release(t);
    /* One trace serves batches of 1 and 3. */
    weft_spec sig = { .dtype = WEFT_F64, .rank = 4, .dims = { WEFT_DIM_ANY, 2, 2, 1 } };
    im_case s2d = { .op = S2D, .block = 2, .factor = 0 };
    weft_function *f = op_signature_function(rts[1], im_body, &s2d, &sig, 1);
    for (int64_t b = 1; b <= 3; b += 2) {
        double v[12];
        for (int i = 0; i < 12; i++)
            v[i] = i;
        weft_tensor *in = tensor_of(WEFT_F64, 4, (const int64_t[]){ b, 2, 2, 1 }, v);
        weft_arg a = weft_arg_tensor(in);
        weft_tensor *r = NULL;
        cr_assert_eq(weft_function_call(f, &a, 1, &r, 1), 0, "%s", weft_errmsg());
        expect_dims(r, 4, (const int64_t[]){ b, 1, 1, 4 });
        expect_near(r, v, 4 * b, 0, "space_to_depth of 2x2 pixels");
        weft_tensor_release(r);
        weft_tensor_release(in);
    }
    op_destroy_traced_once(&f);
}

/* ---- extract_patches ----------------------------------------------------- */

/* TensorFlow's placement along one dim: the output size and the padding
 * before the first window. */
static int64_t place(bool same, int64_t in, int64_t k, int64_t s, int64_t r, int64_t *before)
{
    int64_t span = (k - 1) * r + 1;
    if (!same) {
        *before = 0;
        return (in - span) / s + 1;
    }
    int64_t out = (in + s - 1) / s, total = (out - 1) * s + span - in;
    *before = total > 0 ? total / 2 : 0;
    return out;
}

Test(ops_image, extract_patches_against_the_definition)
{
    enum { B = 2, H = 7, W = 6, C = 2 };
    double x[B * H * W * C];
    for (int i = 0; i < B * H * W * C; i++)
        x[i] = i + 1;
    weft_tensor *t = tensor_of(WEFT_I32, 4, (const int64_t[]){ B, H, W, C }, x);
    const im_case cases[] = {
        { PATCHES, 0, 0, { 3, 3 }, { 1, 1 }, { 1, 1 }, WEFT_PADDING_SAME },
        { PATCHES, 0, 0, { 2, 3 }, { 2, 1 }, { 1, 2 }, WEFT_PADDING_VALID },
        { PATCHES, 0, 0, { 3, 2 }, { 3, 2 }, { 2, 1 }, WEFT_PADDING_SAME },
        { PATCHES, 0, 0, { 1, 1 }, { 2, 2 }, { 1, 1 }, WEFT_PADDING_VALID },
    };
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        const im_case *c = &cases[ci];
        bool same = c->padding == WEFT_PADDING_SAME;
        int64_t pt, pl;
        int64_t oh = place(same, H, c->sizes[0], c->strides[0], c->rates[0], &pt);
        int64_t ow = place(same, W, c->sizes[1], c->strides[1], c->rates[1], &pl);
        int64_t depth = c->sizes[0] * c->sizes[1] * C;
        weft_tensor *out;
        op_results_everywhere(im_body, (void *)c, &t, 1, &out, 1, "extract_patches");
        expect_dims(out, 4, (const int64_t[]){ B, oh, ow, depth });
        for (int64_t b = 0; b < B; b++)
            for (int64_t oy = 0; oy < oh; oy++)
                for (int64_t ox = 0; ox < ow; ox++)
                    for (int64_t ky = 0; ky < c->sizes[0]; ky++)
                        for (int64_t kx = 0; kx < c->sizes[1]; kx++)
                            for (int64_t ch = 0; ch < C; ch++) {
                                int64_t iy = oy * c->strides[0] - pt + ky * c->rates[0];
                                int64_t ix = ox * c->strides[1] - pl + kx * c->rates[1];
                                double want = iy < 0 || iy >= H || ix < 0 || ix >= W
                                                  ? 0
                                                  : x[((b * H + iy) * W + ix) * C + ch];
                                int64_t o = ((b * oh + oy) * ow + ox) * depth +
                                            (ky * c->sizes[1] + kx) * C + ch;
                                cr_assert_eq(at(out, o), want, "case %zu element %lld", ci,
                                             (long long)o);
                            }
        weft_tensor_release(out);
    }
    weft_tensor_release(t);
}

/* extract_volume_patches: out[b, oz, oy, ox, ((kz kh + ky) kw + kx) c + ch]
 * reads x[b, oz sz - pz + kz, oy sy - py + ky, ox sx - px + kx, ch] (0 in
 * the padding); calls `visit` with each output index and input index (-1:
 * padding). */
typedef struct volume_geom {
    int64_t dims[5], out[3], before[3], depth;
} volume_geom;

static volume_geom volume_place(const im_case *c, const int64_t dims[5])
{
    volume_geom g;
    memcpy(g.dims, dims, sizeof g.dims);
    g.depth = dims[4];
    for (int d = 0; d < 3; d++) {
        g.out[d] = place(c->padding == WEFT_PADDING_SAME, dims[1 + d], c->sizes[d], c->strides[d],
                         1, &g.before[d]);
        g.depth *= c->sizes[d];
    }
    return g;
}

/* The input element output element o reads, or -1 for the padding. */
static int64_t volume_source(const im_case *c, const volume_geom *g, int64_t o)
{
    int64_t C = g->dims[4], ch = o % C, rest = o / C, tap[3], pos[3];
    for (int d = 2; d >= 0; d--) {
        tap[d] = rest % c->sizes[d];
        rest /= c->sizes[d];
    }
    for (int d = 2; d >= 0; d--) {
        pos[d] = rest % g->out[d];
        rest /= g->out[d];
    }
    int64_t i = rest;   /* the batch */
    for (int d = 0; d < 3; d++) {
        int64_t at = pos[d] * c->strides[d] - g->before[d] + tap[d];
        if (at < 0 || at >= g->dims[1 + d])
            return -1;
        i = i * g->dims[1 + d] + at;
    }
    return i * C + ch;
}

static const im_case volume_cases[] = {
    { VOLUME, 0, 0, { 2, 2, 2 }, { 1, 1, 1 }, { 1, 1 }, WEFT_PADDING_SAME },
    { VOLUME, 0, 0, { 3, 2, 1 }, { 2, 1, 2 }, { 1, 1 }, WEFT_PADDING_VALID },
    { VOLUME, 0, 0, { 1, 3, 2 }, { 1, 2, 3 }, { 1, 1 }, WEFT_PADDING_SAME },
    { VOLUME, 0, 0, { 1, 1, 1 }, { 2, 2, 2 }, { 1, 1 }, WEFT_PADDING_VALID },
};

Test(ops_image, extract_volume_patches_against_the_definition)
{
    const int64_t dims[5] = { 2, 4, 5, 3, 2 };
    enum { N = 2 * 4 * 5 * 3 * 2 };
    double x[N];
    for (int i = 0; i < N; i++)
        x[i] = i + 1;
    weft_tensor *t = tensor_of(WEFT_I32, 5, dims, x);
    for (size_t ci = 0; ci < sizeof volume_cases / sizeof volume_cases[0]; ci++) {
        const im_case *c = &volume_cases[ci];
        volume_geom g = volume_place(c, dims);
        weft_tensor *out;
        op_results_everywhere(im_body, (void *)c, &t, 1, &out, 1, "extract_volume_patches");
        expect_dims(out, 5, (const int64_t[]){ 2, g.out[0], g.out[1], g.out[2], g.depth });
        for (int64_t o = 0; o < weft_tensor_numel(out); o++) {
            int64_t i = volume_source(c, &g, o);
            cr_assert_eq(at(out, o), i < 0 ? 0 : x[i], "case %zu element %lld", ci, (long long)o);
        }
        weft_tensor_release(out);
    }
    weft_tensor_release(t);
}

/* The gradient of sum(patches * w) for x: each element's w summed over the
 * patches that read it (small integers, so exact in f64). */
Test(ops_image, extract_volume_patches_gradient)
{
    const int64_t dims[5] = { 1, 3, 4, 3, 2 };
    enum { N = 3 * 4 * 3 * 2 };
    double x[N], dx[N];
    for (int i = 0; i < N; i++)
        x[i] = 0.5 * i;
    for (size_t ci = 0; ci < sizeof volume_cases / sizeof volume_cases[0]; ci++) {
        im_case c = volume_cases[ci];
        c.op = VOLUME_GRAD;
        volume_geom g = volume_place(&c, dims);
        int64_t odims[5] = { 1, g.out[0], g.out[1], g.out[2], g.depth };
        int64_t m = g.out[0] * g.out[1] * g.out[2] * g.depth;
        double *w = malloc(sizeof *w * (size_t)m);
        cr_assert_not_null(w);
        memset(dx, 0, sizeof dx);
        for (int64_t o = 0; o < m; o++) {
            w[o] = (double)(o % 7) - 3;
            int64_t i = volume_source(&c, &g, o);
            if (i >= 0)
                dx[i] += w[o];
        }
        weft_tensor *ts[2] = { tensor_of(WEFT_F64, 5, dims, x), tensor_of(WEFT_F64, 5, odims, w) };
        weft_tensor *out;
        op_results_everywhere(im_body, &c, ts, 2, &out, 1, "extract_volume_patches gradient");
        expect_dims(out, 5, dims);
        expect_near(out, dx, N, 0, "extract_volume_patches gradient");
        weft_tensor_release(out);
        weft_tensor_release(ts[0]);
        weft_tensor_release(ts[1]);
        free(w);
    }
}

/* ---- Colour and contrast ------------------------------------------------ */

Test(ops_image, rgb_to_grayscale_weights)
{
    const double x[6] = { 1, 0, 0, 0.25, 0.5, 0.75 };
    weft_tensor *t = tensor_of(WEFT_F64, 2, (const int64_t[]){ 2, 3 }, x);
    im_case c = { .op = GRAY, .block = 0, .factor = 0 };
    weft_tensor *out;
    op_results_everywhere(im_body, &c, &t, 1, &out, 1, "rgb_to_grayscale");
    expect_dims(out, 2, (const int64_t[]){ 2, 1 });
    const double want[2] = { 0.2989, 0.25 * 0.2989 + 0.5 * 0.5870 + 0.75 * 0.1140 };
    expect_near(out, want, 2, 0, "rgb_to_grayscale f64");
    weft_tensor_release(out);
    weft_tensor_release(t);
    t = tensor_of(WEFT_F32, 2, (const int64_t[]){ 2, 3 }, x);
    op_results_everywhere(im_body, &c, &t, 1, &out, 1, "rgb_to_grayscale f32");
    cr_assert_eq(weft_tensor_dtype(out), WEFT_F32);
    expect_near(out, want, 2, 1e-7, "rgb_to_grayscale f32");
    weft_tensor_release(out);
    weft_tensor_release(t);
}

/* grayscale_to_rgb repeats the channel; rgb_to_grayscale of the result
 * gives back the weights' sum times it. */
Test(ops_image, grayscale_to_rgb_repeats_the_channel)
{
    const double x[6] = { 0.5, -1, 2, 0.25, 7, 3 };
    weft_tensor *t = tensor_of(WEFT_F64, 3, (const int64_t[]){ 2, 3, 1 }, x);
    im_case c = { .op = GRAY_TO_RGB };
    weft_tensor *out;
    op_results_everywhere(im_body, &c, &t, 1, &out, 1, "grayscale_to_rgb");
    expect_dims(out, 3, (const int64_t[]){ 2, 3, 3 });
    double want[18];
    for (int i = 0; i < 18; i++)
        want[i] = x[i / 3];
    expect_near(out, want, 18, 0, "grayscale_to_rgb");
    weft_tensor_release(out);
    weft_tensor_release(t);
}

/* x [2, 3, 4, 2] with values of very different spread per image. */
static void two_images(double *x)
{
    uint64_t s = 0x2545f4914f6cdd1du;
    for (int i = 0; i < 48; i++)
        x[i] = (i < 24 ? 100.0 : 0.01) * op_uniform(&s) + (i < 24 ? 5 : -3);
}

Test(ops_image, per_image_standardization_and_contrast)
{
    double x[48];
    two_images(x);
    weft_tensor *t = tensor_of(WEFT_F64, 4, (const int64_t[]){ 2, 3, 4, 2 }, x);
    double want[48];
    for (int img = 0; img < 2; img++) {
        const double *p = x + 24 * img;
        long double mean = 0, var = 0;
        for (int i = 0; i < 24; i++)
            mean += p[i];
        mean /= 24;
        for (int i = 0; i < 24; i++)
            var += (p[i] - mean) * (p[i] - mean);
        long double sd = sqrtl(var / 24);
        long double adj = sd > 1 / sqrtl(24) ? sd : 1 / sqrtl(24);
        for (int i = 0; i < 24; i++)
            want[24 * img + i] = (double)((p[i] - mean) / adj);
    }
    im_case c = { .op = STANDARDIZE, .block = 0, .factor = 0 };
    weft_tensor *out;
    op_results_everywhere(im_body, &c, &t, 1, &out, 1, "per_image_standardization");
    expect_dims(out, 4, (const int64_t[]){ 2, 3, 4, 2 });
    expect_near(out, want, 48, 1e-13, "per_image_standardization");
    weft_tensor_release(out);
    /* adjust_contrast: each channel's mean over height and width. */
    for (int img = 0; img < 2; img++)
        for (int ch = 0; ch < 2; ch++) {
            long double mean = 0;
            for (int px = 0; px < 12; px++)
                mean += x[24 * img + 2 * px + ch];
            mean /= 12;
            for (int px = 0; px < 12; px++) {
                int i = 24 * img + 2 * px + ch;
                want[i] = (double)((x[i] - mean) * 1.5L + mean);
            }
        }
    c = (im_case){ .op = CONTRAST, .block = 0, .factor = 1.5 };
    op_results_everywhere(im_body, &c, &t, 1, &out, 1, "adjust_contrast");
    expect_near(out, want, 48, 1e-13, "adjust_contrast");
    weft_tensor_release(out);
    weft_tensor_release(t);
    /* A flat image has no spread: 1 / sqrt(n) keeps the division finite. */
    double flat[12];
    for (int i = 0; i < 12; i++)
        flat[i] = 7;
    t = tensor_of(WEFT_F32, 3, (const int64_t[]){ 2, 3, 2 }, flat);
    c = (im_case){ .op = STANDARDIZE, .block = 0, .factor = 0 };
    op_results_everywhere(im_body, &c, &t, 1, &out, 1, "flat image");
    const double zeros[12] = { 0 };
    expect_near(out, zeros, 12, 0, "flat image");
    weft_tensor_release(out);
    weft_tensor_release(t);
}

/* ---- Differences between neighbours ------------------------------------ */

Test(ops_image, image_gradients_and_total_variation)
{
    enum { B = 2, H = 3, W = 4, C = 2 };
    double x[B * H * W * C];
    for (int i = 0; i < B * H * W * C; i++)
        x[i] = (i * 7919) % 23 - 11;
    weft_tensor *t = tensor_of(WEFT_I32, 4, (const int64_t[]){ B, H, W, C }, x);
    im_case c = { .op = GRADIENTS, .block = 0, .factor = 0 };
    weft_tensor *g[2];
    op_results_everywhere(im_body, &c, &t, 1, g, 2, "image_gradients");
    double tv[B] = { 0, 0 };
    for (int b = 0; b < B; b++)
        for (int i = 0; i < H; i++)
            for (int j = 0; j < W; j++)
                for (int ch = 0; ch < C; ch++) {
                    int64_t o = ((b * H + i) * W + j) * C + ch;
                    double dy = i + 1 < H ? x[o + W * C] - x[o] : 0;
                    double dx = j + 1 < W ? x[o + C] - x[o] : 0;
                    cr_assert_eq(at(g[0], o), dy, "dy element %lld", (long long)o);
                    cr_assert_eq(at(g[1], o), dx, "dx element %lld", (long long)o);
                    tv[b] += fabs(dy) + fabs(dx);
                }
    expect_dims(g[0], 4, (const int64_t[]){ B, H, W, C });
    cr_assert_eq(weft_tensor_dtype(g[1]), WEFT_I32);
    weft_tensor_release(g[0]);
    weft_tensor_release(g[1]);
    c.op = TV;
    weft_tensor *out;
    op_results_everywhere(im_body, &c, &t, 1, &out, 1, "total_variation");
    expect_dims(out, 1, (const int64_t[]){ B });
    expect_near(out, tv, B, 0, "total_variation");
    weft_tensor_release(out);
    weft_tensor_release(t);
    /* One image of rank 3 gives a scalar. */
    t = tensor_of(WEFT_F64, 3, (const int64_t[]){ H, W, C }, x);
    op_results_everywhere(im_body, &c, &t, 1, &out, 1, "total_variation rank 3");
    expect_dims(out, 0, NULL);
    expect_near(out, tv, 1, 1e-15, "total_variation rank 3");
    weft_tensor_release(out);
    weft_tensor_release(t);
}

Test(ops_image, psnr)
{
    double x[48], y[48];
    two_images(x);
    for (int i = 0; i < 48; i++)
        y[i] = x[i] + (i % 5) * 0.125 - 0.25;
    memcpy(y + 24, x + 24, 24 * sizeof *y);   /* the second image identical */
    weft_tensor *args[2] = { tensor_of(WEFT_F64, 4, (const int64_t[]){ 2, 3, 4, 2 }, x),
                             tensor_of(WEFT_F64, 4, (const int64_t[]){ 2, 3, 4, 2 }, y) };
    long double mse = 0;
    for (int i = 0; i < 24; i++)
        mse += (x[i] - y[i]) * (x[i] - y[i]);
    mse /= 24;
    const double want[2] = { (double)(20 * log10l(255.0L) - 10 * log10l(mse)), INFINITY };
    im_case c = { .op = PSNR, .block = 0, .factor = 255 };
    weft_tensor *out;
    op_results_everywhere(im_body, &c, args, 2, &out, 1, "psnr");
    expect_dims(out, 1, (const int64_t[]){ 2 });
    expect_near(out, want, 2, 1e-14, "psnr");
    weft_tensor_release(out);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

/* ---- Refused calls ------------------------------------------------------- */

typedef enum bad_call { S2D_BLOCK, S2D_RANK, S2D_DIVIDE, D2S_DIVIDE, GRAY_INT, GRAY_CHANNELS,
                        STANDARDIZE_RANK, CONTRAST_NAN, GRADIENTS_RANK, TV_RANK, PSNR_MAX,
                        GRADIENTS_OUTS, GRAY_TO_RGB_CHANNELS, VOLUME_RANK, VOLUME_SPAN,
                        VOLUME_STRIDE, VOLUME_PADDING } bad_call;

/* args: i32 [1, 4, 6, 3], f64 [1, 4, 6, 3]. */
static int bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    weft_value *i = a[0], *f = a[1];
    bad_call b = (bad_call) * (const int *)user;
    switch (b) {
    case S2D_BLOCK: outs[0] = weft_space_to_depth(cx, i, 1); break;
    case S2D_RANK: outs[0] = weft_space_to_depth(cx, weft_squeeze(cx, i, 0), 2); break;
    case S2D_DIVIDE: outs[0] = weft_space_to_depth(cx, i, 4); break;
    case D2S_DIVIDE: outs[0] = weft_depth_to_space(cx, i, 2); break;
    case GRAY_INT: outs[0] = weft_rgb_to_grayscale(cx, i); break;
    case GRAY_CHANNELS:
        outs[0] = weft_rgb_to_grayscale(cx, weft_transpose(cx, f, (const int[]){ 0, 1, 3, 2 }));
        break;
    case STANDARDIZE_RANK:
        outs[0] = weft_per_image_standardization(cx, weft_reshape(cx, f, 1, (const int64_t[]){ 72 }));
        break;
    case CONTRAST_NAN: outs[0] = weft_adjust_contrast(cx, f, NAN); break;
    case GRADIENTS_RANK: {
        weft_value *g[2];
        int rc = weft_image_gradients(cx, weft_squeeze(cx, f, 0), g);
        cr_assert(g[0] == NULL && g[1] == NULL);
        return rc;
    }
    case TV_RANK:
        outs[0] = weft_total_variation(cx, weft_reshape(cx, f, 2, (const int64_t[]){ 4, 18 }));
        break;
    case PSNR_MAX: outs[0] = weft_psnr(cx, f, f, 0); break;
    case GRADIENTS_OUTS: return weft_image_gradients(cx, f, NULL);
    case GRAY_TO_RGB_CHANNELS: outs[0] = weft_grayscale_to_rgb(cx, i); break;
    case VOLUME_RANK:
        outs[0] = weft_extract_volume_patches(cx, i, NULL, NULL, WEFT_PADDING_VALID);
        break;
    case VOLUME_SPAN:
    case VOLUME_STRIDE:
    case VOLUME_PADDING: {
        weft_value *v = weft_expand_dims(cx, i, 4);
        const int64_t span[3] = { 1, 1, 4 }, stride[3] = { 1, 0, 1 };
        outs[0] = weft_extract_volume_patches(cx, v, b == VOLUME_SPAN ? span : NULL,
                                              b == VOLUME_STRIDE ? stride : NULL,
                                              b == VOLUME_PADDING ? (weft_padding)7
                                                                   : WEFT_PADDING_VALID);
        break;
    }
    }
    return weft_ctx_status(cx);
}

Test(ops_image, refused_calls_name_the_op)
{
    double v[72];
    for (int k = 0; k < 72; k++)
        v[k] = k;
    weft_tensor *args[2] = { tensor_of(WEFT_I32, 4, (const int64_t[]){ 1, 4, 6, 3 }, v),
                             tensor_of(WEFT_F64, 4, (const int64_t[]){ 1, 4, 6, 3 }, v) };
    const op_error_case cases[] = {
        { S2D_BLOCK, WEFT_EINVAL, "weft_space_to_depth: block_size 1 is below 2" },
        { S2D_RANK, WEFT_ESHAPE, "weft_space_to_depth: i32[4,6,3] is not NHWC data" },
        { S2D_DIVIDE, WEFT_ESHAPE, "weft_space_to_depth: the height and width of i32[1,4,6,3] "
                                   "are not multiples of block_size 4" },
        { D2S_DIVIDE, WEFT_ESHAPE, "weft_depth_to_space: the channels of i32[1,4,6,3] are not "
                                   "a multiple of block_size^2 = 4" },
        { GRAY_INT, WEFT_EDTYPE, "weft_rgb_to_grayscale: the images i32[1,4,6,3] are not f32" },
        { GRAY_CHANNELS, WEFT_ESHAPE, "weft_rgb_to_grayscale: f64[1,4,3,6] does not have 3 "
                                      "channels" },
        { STANDARDIZE_RANK, WEFT_ESHAPE, "weft_per_image_standardization: f64[72] is not images" },
        { CONTRAST_NAN, WEFT_EINVAL, "weft_adjust_contrast: contrast_factor nan is not finite" },
        { GRADIENTS_RANK, WEFT_ESHAPE, "weft_image_gradients: f64[4,6,3] is not NHWC data" },
        { TV_RANK, WEFT_ESHAPE, "weft_total_variation: f64[4,18] is not an image or a batch" },
        { PSNR_MAX, WEFT_EINVAL, "weft_psnr: max_val 0 is not finite and > 0" },
        { GRADIENTS_OUTS, WEFT_EINVAL, "weft_image_gradients: outs is NULL" },
        { GRAY_TO_RGB_CHANNELS, WEFT_ESHAPE, "weft_grayscale_to_rgb: i32[1,4,6,3] does not have "
                                             "1 channel" },
        { VOLUME_RANK, WEFT_ESHAPE, "weft_extract_volume_patches: i32[1,4,6,3] is not NDHWC "
                                    "data" },
        { VOLUME_SPAN, WEFT_ESHAPE, "weft_extract_volume_patches: the width of i32[1,4,6,3,1] "
                                    "is smaller than the window's span (VALID)" },
        { VOLUME_STRIDE, WEFT_EINVAL, "weft_extract_volume_patches: strides[1] is 0, not within" },
        { VOLUME_PADDING, WEFT_EINVAL, "weft_extract_volume_patches: padding 7 is not "
                                       "WEFT_PADDING_VALID" },
    };
    op_expect_errors(rts[1], bad_body, cases, sizeof cases / sizeof *cases, args, 2);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}
