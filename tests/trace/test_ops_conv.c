/* weft_conv2d, weft_conv1d, weft_depthwise_conv2d, weft_max_pool2d and
 * weft_avg_pool2d against loops written from TensorFlow's definitions:
 * padding, strides, dilations, the BLAS and loop paths, tiles cut between
 * images, the same bits on 1, 2 and 4 workers eagerly and traced, dims
 * unknown while tracing, the compiler's handling (CSE, the op listing)
 * and the errors.
 *
 * Inputs are multiples of 1/8 between -2 and 2, so every product and sum
 * here is exact in f32 and f64 and the results must match the reference
 * bit for bit, whatever order the BLAS sums in. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "suite_runtimes.h"

TestSuite(ops_conv, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 120);

#define DIMS(...) ((const int64_t[]){ __VA_ARGS__ })

/* n multiples of 1/8 in [-2, 2] from a fixed sequence. */
static double *dyadic(int64_t n, uint64_t seed)
{
    double *v = malloc(sizeof(double) * (size_t)(n ? n : 1));
    cr_assert_not_null(v);
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
    for (int64_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        v[i] = (double)((int)((s >> 33) % 33) - 16) / 8.0;
    }
    return v;
}

/* ---- References -------------------------------------------------------- */

/* TensorFlow's placement of windows of `window` elements (dilated: span)
 * along a dim of `in`: the output size and the padding before. */
static int64_t out_size(bool same, int64_t in, int64_t window, int64_t stride, int64_t dil,
                        int64_t *before)
{
    int64_t span = (window - 1) * dil + 1, out;
    if (!same) {
        *before = 0;
        return (in - span) / stride + 1;
    }
    out = (in + stride - 1) / stride;
    int64_t total = (out - 1) * stride + span - in;
    *before = total > 0 ? total / 2 : 0;
    return out;
}

typedef struct conv_case {
    int64_t n, h, w, c, kh, kw, o, sh, sw, dh, dw;
    bool same;
} conv_case;

/* y[b, oy, ox, q] = sum over ky, kx, ci of x[b, iy, ix, ci] f[ky, kx, ci, q]
 * with iy = oy sh - pad_top + ky dh (and ix alike), outside terms 0. */
static double *conv_reference(const conv_case *k, const double *x, const double *f,
                              int64_t *oh, int64_t *ow)
{
    int64_t pt, pl;
    *oh = out_size(k->same, k->h, k->kh, k->sh, k->dh, &pt);
    *ow = out_size(k->same, k->w, k->kw, k->sw, k->dw, &pl);
    int64_t n = k->n * *oh * *ow * k->o;
    double *y = calloc((size_t)(n ? n : 1), sizeof(double));
    cr_assert_not_null(y);
    for (int64_t b = 0; b < k->n; b++)
        for (int64_t oy = 0; oy < *oh; oy++)
            for (int64_t ox = 0; ox < *ow; ox++)
                for (int64_t q = 0; q < k->o; q++) {
                    double s = 0;
                    for (int64_t ky = 0; ky < k->kh; ky++)
                        for (int64_t kx = 0; kx < k->kw; kx++) {
                            int64_t iy = oy * k->sh - pt + ky * k->dh;
                            int64_t ix = ox * k->sw - pl + kx * k->dw;
                            if (iy < 0 || iy >= k->h || ix < 0 || ix >= k->w)
                                continue;
                            for (int64_t ci = 0; ci < k->c; ci++)
                                s += x[((b * k->h + iy) * k->w + ix) * k->c + ci] *
                                     f[((ky * k->kw + kx) * k->c + ci) * k->o + q];
                        }
                    y[((b * *oh + oy) * *ow + ox) * k->o + q] = s;
                }
    return y;
}

/* Depthwise: o is the multiplier; output channel ci * o + k sums x's
 * channel ci times f[ky, kx, ci, k]. */
static double *depthwise_reference(const conv_case *k, const double *x, const double *f,
                                   int64_t *oh, int64_t *ow)
{
    int64_t pt, pl, cm = k->c * k->o;
    *oh = out_size(k->same, k->h, k->kh, k->sh, k->dh, &pt);
    *ow = out_size(k->same, k->w, k->kw, k->sw, k->dw, &pl);
    int64_t n = k->n * *oh * *ow * cm;
    double *y = calloc((size_t)(n ? n : 1), sizeof(double));
    cr_assert_not_null(y);
    for (int64_t b = 0; b < k->n; b++)
        for (int64_t oy = 0; oy < *oh; oy++)
            for (int64_t ox = 0; ox < *ow; ox++)
                for (int64_t q = 0; q < cm; q++) {
                    double s = 0;
                    for (int64_t ky = 0; ky < k->kh; ky++)
                        for (int64_t kx = 0; kx < k->kw; kx++) {
                            int64_t iy = oy * k->sh - pt + ky * k->dh;
                            int64_t ix = ox * k->sw - pl + kx * k->dw;
                            if (iy >= 0 && iy < k->h && ix >= 0 && ix < k->w)
                                s += x[((b * k->h + iy) * k->w + ix) * k->c + q / k->o] *
                                     f[(ky * k->kw + kx) * cm + q];
                        }
                    y[((b * *oh + oy) * *ow + ox) * cm + q] = s;
                }
    return y;
}

/* conv2d_transpose, the adjoint of conv2d: input pixel (iy, ix) adds
 * x * f[ky, kx, q, ci] to output (iy s - pad_top + ky d, ix s - pad_left +
 * kx d), with the pads of conv2d from an output of oh x ow.  k->c is the
 * input's channels, k->o the output's. */
static double *transpose_reference(const conv_case *k, const double *x, const double *f,
                                   int64_t oh, int64_t ow)
{
    int64_t pt, pl;
    out_size(k->same, oh, k->kh, k->sh, k->dh, &pt);
    out_size(k->same, ow, k->kw, k->sw, k->dw, &pl);
    int64_t n = k->n * oh * ow * k->o;
    double *y = calloc((size_t)(n ? n : 1), sizeof(double));
    cr_assert_not_null(y);
    for (int64_t b = 0; b < k->n; b++)
        for (int64_t iy = 0; iy < k->h; iy++)
            for (int64_t ix = 0; ix < k->w; ix++)
                for (int64_t ky = 0; ky < k->kh; ky++)
                    for (int64_t kx = 0; kx < k->kw; kx++) {
                        int64_t oy = iy * k->sh - pt + ky * k->dh;
                        int64_t ox = ix * k->sw - pl + kx * k->dw;
                        if (oy < 0 || oy >= oh || ox < 0 || ox >= ow)
                            continue;
                        for (int64_t q = 0; q < k->o; q++)
                            for (int64_t ci = 0; ci < k->c; ci++)
                                y[((b * oh + oy) * ow + ox) * k->o + q] +=
                                    x[((b * k->h + iy) * k->w + ix) * k->c + ci] *
                                    f[((ky * k->kw + kx) * k->o + q) * k->c + ci];
                    }
    return y;
}

typedef struct pool_case {
    int64_t n, h, w, c, kh, kw, sh, sw;
    bool same;
} pool_case;

/* The max (avg: mean) over each window clipped to the input; NaN wins. */
static double *pool_reference(const pool_case *k, bool avg, const double *x, int64_t *oh,
                              int64_t *ow)
{
    int64_t pt, pl;
    *oh = out_size(k->same, k->h, k->kh, k->sh, 1, &pt);
    *ow = out_size(k->same, k->w, k->kw, k->sw, 1, &pl);
    int64_t n = k->n * *oh * *ow * k->c;
    double *y = calloc((size_t)(n ? n : 1), sizeof(double));
    cr_assert_not_null(y);
    for (int64_t b = 0; b < k->n; b++)
        for (int64_t oy = 0; oy < *oh; oy++)
            for (int64_t ox = 0; ox < *ow; ox++)
                for (int64_t q = 0; q < k->c; q++) {
                    double acc = avg ? 0 : -INFINITY;
                    int count = 0;
                    for (int64_t iy = oy * k->sh - pt; iy < oy * k->sh - pt + k->kh; iy++)
                        for (int64_t ix = ox * k->sw - pl; ix < ox * k->sw - pl + k->kw; ix++) {
                            if (iy < 0 || iy >= k->h || ix < 0 || ix >= k->w)
                                continue;
                            double v = x[((b * k->h + iy) * k->w + ix) * k->c + q];
                            count++;
                            acc = avg ? acc + v : (isnan(v) || v > acc ? v : acc);
                        }
                    y[((b * *oh + oy) * *ow + ox) * k->c + q] = avg ? acc / count : acc;
                }
    return y;
}

/* ---- Running the ops --------------------------------------------------- */

typedef enum which { CONV2D, CONV1D, MAX_POOL, AVG_POOL, DEPTHWISE, TRANSPOSE, RESIZE } which;

typedef struct op_case {
    which op;
    int64_t a[2], b[4];        /* conv: strides, dilations; pool: ksize, strides;
                                  transpose: strides, output height and width, then
                                  dilations (0: weft_conv2d_transpose);
                                  resize: size, method */
    bool same;
} op_case;

static int op_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    const op_case *c = user;
    weft_padding p = c->same ? WEFT_PADDING_SAME : WEFT_PADDING_VALID;
    switch (c->op) {
    case CONV2D: outs[0] = weft_conv2d(cx, args[0], args[1], c->a, p, c->b); break;
    case CONV1D: outs[0] = weft_conv1d(cx, args[0], args[1], c->a[1], p, c->b[1]); break;
    case MAX_POOL: outs[0] = weft_max_pool2d(cx, args[0], c->a, c->b, p); break;
    case AVG_POOL: outs[0] = weft_avg_pool2d(cx, args[0], c->a, c->b, p); break;
    case DEPTHWISE: outs[0] = weft_depthwise_conv2d(cx, args[0], args[1], c->a, p, c->b); break;
    case TRANSPOSE:
        outs[0] = c->b[2] ? weft_conv2d_transpose_ex(cx, args[0], args[1], c->b[0] ? c->b : NULL,
                                                     c->a, p, &c->b[2])
                          : weft_conv2d_transpose(cx, args[0], args[1], c->b[0] ? c->b : NULL,
                                                  c->a, p);
        break;
    case RESIZE:
        outs[0] = weft_resize(cx, args[0], c->a[0], c->a[1], (weft_resize_method)c->b[0]);
        break;
    }
    return weft_ctx_status(cx);
}

/* The op of c on args[0..n_args) on runtime r, eagerly or traced (with
 * signature sig when not NULL); the call's code, its result in *out. */
static int call_op(weft_runtime *r, const op_case *c, weft_tensor *const *args, int n_args,
                   bool eager, const weft_spec *sig, weft_tensor **out)
{
    weft_function_desc desc = {
        .name = "op", .body = op_body, .user = (void *)c, .n_args = (uint32_t)n_args,
        .n_outs = 1, .input_signature = sig, .flags = eager ? WEFT_RUN_EAGERLY : 0,
    };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(r, &desc, &f), 0, "%s", weft_errmsg());
    weft_arg a[2];
    for (int i = 0; i < n_args; i++)
        a[i] = weft_arg_tensor(args[i]);
    *out = NULL;
    int rc = weft_function_call(f, a, (size_t)n_args, out, 1);
    weft_function_destroy(&f);
    return rc;
}

/* t holds want[0..n) exactly (NaN where want is NaN), of dtype dt. */
static void assert_values(const weft_tensor *t, weft_dtype dt, const double *want, int64_t n,
                          const char *what)
{
    cr_assert_eq(weft_tensor_dtype(t), dt, "%s: dtype", what);
    for (int64_t i = 0; i < n; i++) {
        double g = test_element(t, i), w = dt == WEFT_F32 ? (double)(float)want[i] : want[i];
        if (isnan(w))
            cr_assert(isnan(g), "%s: element %lld is %g, not NaN", what, (long long)i, g);
        else
            cr_assert_eq(g, w, "%s: element %lld is %.17g, not %.17g", what, (long long)i, g, w);
    }
}

static const char *const mode_names[2] = { "traced", "eager" };

/* c on args on 1, 2 and 4 workers, traced and eagerly: each result of
 * dtype dt and shape dims holds want exactly; `label` names the case. */
static void check_everywhere(const op_case *c, weft_tensor *const *args, int n_args,
                             weft_dtype dt, const int64_t *dims, const double *want,
                             const char *label)
{
    for (int r = 0; r < N_RT; r++)
        for (int eager = 0; eager < 2; eager++) {
            char what[128];
            snprintf(what, sizeof what, "%s %s, %u workers, %s", label, weft_dtype_name(dt),
                     rt_workers[r], mode_names[eager]);
            weft_tensor *y;
            cr_assert_eq(call_op(rts[r], c, args, n_args, eager, NULL, &y), 0, "%s: %s", what,
                         weft_errmsg());
            test_assert_shape(y, dt, 4, dims, what);
            assert_values(y, dt, want, test_numel(4, dims), what);
            weft_tensor_release(y);
        }
}

/* check_everywhere of c on an input x of dims xd and filters f of dims fd,
 * both of dtype t; the case is named "<what> case <i>". */
static void check_filtered(const op_case *c, weft_dtype t, const int64_t *xd, const double *x,
                           const int64_t *fd, const double *f, const int64_t *yd,
                           const double *want, const char *what, size_t i)
{
    weft_tensor *args[2] = { test_tensor(t, 4, xd, x), test_tensor(t, 4, fd, f) };
    char label[48];
    snprintf(label, sizeof label, "%s case %zu", what, i);
    check_everywhere(c, args, 2, t, yd, want, label);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

/* ---- conv2d ------------------------------------------------------------ */

static const conv_case conv_cases[] = {
    /* n, h, w, c, kh, kw, o, sh, sw, dh, dw, same */
    { 1, 5, 5, 1, 3, 3, 1, 1, 1, 1, 1, false },    /* small: the loop */
    { 2, 7, 6, 3, 3, 3, 4, 1, 1, 1, 1, true },
    { 2, 8, 8, 3, 2, 2, 5, 1, 1, 1, 1, true },     /* even window: pad 0 before, 1 after */
    { 1, 9, 7, 2, 3, 2, 3, 2, 3, 1, 1, true },     /* strides */
    { 1, 10, 11, 2, 3, 3, 2, 1, 1, 2, 3, false },  /* dilations */
    { 2, 12, 9, 3, 3, 3, 4, 2, 2, 2, 1, true },    /* both */
    { 3, 16, 16, 8, 1, 1, 16, 1, 1, 1, 1, false }, /* 1x1: the input is the patch matrix */
    { 2, 9, 9, 4, 1, 1, 6, 2, 2, 1, 1, true },     /* 1x1 with strides: patches */
    { 1, 3, 3, 2, 5, 5, 3, 1, 1, 1, 1, true },     /* a window larger than the input */
    { 1, 1, 9, 3, 1, 4, 2, 1, 2, 1, 1, false },
    { 2, 40, 40, 16, 3, 3, 32, 1, 1, 1, 1, true }, /* many tiles, several chunks */
    { 3, 23, 17, 5, 4, 3, 7, 1, 2, 1, 2, true },   /* tiles cut between images */
    { 1, 6, 6, 0, 3, 3, 2, 1, 1, 1, 1, true },     /* no input channels: zeros */
    { 0, 5, 5, 2, 3, 3, 2, 1, 1, 1, 1, true },     /* an empty batch */
};

/* Each case in f32 and f64, traced and eagerly, on 1, 2 and 4 workers:
 * exactly the reference (the inputs make every sum exact). */
Test(ops_conv, conv2d_matches_the_definition)
{
    for (size_t i = 0; i < sizeof conv_cases / sizeof conv_cases[0]; i++) {
        const conv_case *k = &conv_cases[i];
        int64_t nx = k->n * k->h * k->w * k->c, nf = k->kh * k->kw * k->c * k->o, oh, ow;
        double *x = dyadic(nx, i), *fv = dyadic(nf, 100 + i);
        double *want = conv_reference(k, x, fv, &oh, &ow);
        op_case c = { CONV2D, { k->sh, k->sw }, { k->dh, k->dw }, k->same };
        for (int dt = 0; dt < 2; dt++) {
            weft_dtype t = dt ? WEFT_F64 : WEFT_F32;
            check_filtered(&c, t, DIMS(k->n, k->h, k->w, k->c), x,
                           DIMS(k->kh, k->kw, k->c, k->o), fv, DIMS(k->n, oh, ow, k->o), want,
                           "conv", i);
        }
        free(x);
        free(fv);
        free(want);
    }
}

/* depthwise_conv2d with multipliers 1, 2 and 3, strides, dilations and
 * both paddings, in f32 and f64 on every worker count, eager and traced. */
Test(ops_conv, depthwise_conv2d_matches_the_definition)
{
    static const conv_case cases[] = {
        /* n, h, w, c, kh, kw, multiplier, sh, sw, dh, dw, same */
        { 2, 9, 8, 5, 3, 3, 1, 1, 1, 1, 1, true },
        { 1, 10, 11, 4, 3, 2, 3, 2, 1, 1, 2, false },
        { 3, 40, 30, 16, 5, 5, 1, 2, 2, 1, 1, true },   /* several chunks */
        { 1, 7, 7, 2, 3, 3, 2, 1, 2, 2, 1, true },
        /* Multiplier 1 with dilations: 21 channels are a block of
         * vectors, whole vectors and single channels. */
        { 2, 13, 12, 21, 3, 3, 1, 2, 1, 2, 3, true },
        { 1, 9, 10, 21, 2, 3, 1, 1, 2, 2, 2, false },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const conv_case *k = &cases[i];
        double *x = dyadic(k->n * k->h * k->w * k->c, 90 + i);
        double *fv = dyadic(k->kh * k->kw * k->c * k->o, 95 + i);
        int64_t oh, ow;
        double *want = depthwise_reference(k, x, fv, &oh, &ow);
        op_case c = { DEPTHWISE, { k->sh, k->sw }, { k->dh, k->dw }, k->same };
        for (int dt = 0; dt < 2; dt++) {
            weft_dtype t = dt ? WEFT_F64 : WEFT_F32;
            check_filtered(&c, t, DIMS(k->n, k->h, k->w, k->c), x,
                           DIMS(k->kh, k->kw, k->c, k->o), fv, DIMS(k->n, oh, ow, k->c * k->o),
                           want, "depthwise", i);
        }
        free(x);
        free(fv);
        free(want);
    }
}

/* conv2d_transpose with strides 1 to 3, both paddings, the default
 * output size and given ones (a VALID output larger than the full
 * correlation, a SAME one smaller than in * stride), and dilations. */
Test(ops_conv, conv2d_transpose_is_the_adjoint_of_conv2d)
{
    static const struct { conv_case k; int64_t oh, ow; } cases[] = {
        /* n, h, w, in c, kh, kw, out c, sh, sw, -, -, same; output (0: default) */
        { { 2, 4, 5, 3, 3, 3, 2, 2, 2, 1, 1, true }, 0, 0 },
        { { 1, 4, 3, 2, 3, 2, 3, 2, 1, 1, 1, false }, 0, 0 },
        { { 1, 3, 3, 2, 2, 2, 2, 3, 3, 1, 1, false }, 10, 9 },   /* VALID, larger */
        { { 2, 5, 4, 3, 4, 3, 2, 2, 2, 1, 1, true }, 9, 7 },     /* SAME, smaller */
        { { 1, 6, 6, 4, 3, 3, 5, 1, 1, 1, 1, true }, 0, 0 },
        /* Dilated filters (weft_conv2d_transpose_ex). */
        { { 1, 4, 5, 2, 3, 2, 3, 1, 1, 2, 3, false }, 0, 0 },
        { { 2, 4, 4, 3, 3, 3, 2, 2, 2, 2, 2, true }, 0, 0 },
        { { 1, 3, 4, 2, 2, 3, 2, 2, 1, 3, 2, false }, 0, 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const conv_case *k = &cases[i].k;
        int64_t oh = cases[i].oh, ow = cases[i].ow;
        if (!oh) {
            oh = k->same ? k->h * k->sh : (k->h - 1) * k->sh + (k->kh - 1) * k->dh + 1;
            ow = k->same ? k->w * k->sw : (k->w - 1) * k->sw + (k->kw - 1) * k->dw + 1;
        }
        double *x = dyadic(k->n * k->h * k->w * k->c, 110 + i);
        double *fv = dyadic(k->kh * k->kw * k->o * k->c, 120 + i);
        double *want = transpose_reference(k, x, fv, oh, ow);
        bool dilated = k->dh > 1 || k->dw > 1;
        op_case c = { TRANSPOSE, { k->sh, k->sw },
                      { cases[i].oh, cases[i].ow, dilated ? k->dh : 0, k->dw }, k->same };
        check_filtered(&c, WEFT_F64, DIMS(k->n, k->h, k->w, k->c), x,
                       DIMS(k->kh, k->kw, k->o, k->c), fv, DIMS(k->n, oh, ow, k->o), want,
                       "transpose", i);
        free(x);
        free(fv);
        free(want);
    }
}

/* tf.image.resize's known answer: [1, 2] to width 4 is [1, 1.25, 1.75, 2]
 * (bilinear) and [1, 1, 2, 2] (nearest); to width 1, 1.5 and 2. */
Test(ops_conv, resize_known_answers)
{
    weft_tensor *x = test_tensor(WEFT_F32, 4, DIMS(1, 1, 2, 1), (const double[]){ 1, 2 });
    op_case bl = { RESIZE, { 1, 4 }, { WEFT_RESIZE_BILINEAR, 0 }, false };
    op_case nn = { RESIZE, { 1, 4 }, { WEFT_RESIZE_NEAREST, 0 }, false };
    op_case down = { RESIZE, { 1, 1 }, { WEFT_RESIZE_BILINEAR, 0 }, false };
    op_case down_nn = { RESIZE, { 1, 1 }, { WEFT_RESIZE_NEAREST, 0 }, false };
    check_everywhere(&bl, &x, 1, WEFT_F32, DIMS(1, 1, 4, 1), (const double[]){ 1, 1.25, 1.75, 2 },
                     "bilinear");
    check_everywhere(&nn, &x, 1, WEFT_F32, DIMS(1, 1, 4, 1), (const double[]){ 1, 1, 2, 2 },
                     "nearest");
    check_everywhere(&down, &x, 1, WEFT_F32, DIMS(1, 1, 1, 1), (const double[]){ 1.5 }, "down");
    check_everywhere(&down_nn, &x, 1, WEFT_F32, DIMS(1, 1, 1, 1), (const double[]){ 2 },
                     "down nearest");
    weft_tensor_release(x);
}

/* One output coordinate's cells along a dim for area: [first, end) and
 * the overlap of each with the box [o s, (o + 1) s), s = in / out. */
static int64_t area_cells(int64_t o, int64_t in, int64_t out, int64_t *first, double *w)
{
    double s = (double)in / (double)out, lo = (double)o * s, hi = (double)(o + 1) * s;
    int64_t n = 0;
    *first = (int64_t)floor(lo);
    for (int64_t i = *first; i < (int64_t)ceil(hi); i++)
        w[n++] = fmin((double)(i + 1), hi) - fmax((double)i, lo);
    return n;
}

/* area: known answers (pairs averaged, a box of 1.5 pixels, upsampling as
 * nearest), then the definition on [2, 5, 7, 3] up and down, summed in the
 * kernel's order so that f64 results are exact. */
Test(ops_conv, resize_area_is_the_mean_of_the_covered_area)
{
    weft_tensor *x = test_tensor(WEFT_F32, 4, DIMS(1, 1, 4, 1), (const double[]){ 1, 2, 3, 4 });
    op_case half = { RESIZE, { 1, 2 }, { WEFT_RESIZE_AREA, 0 }, false };
    op_case up = { RESIZE, { 1, 8 }, { WEFT_RESIZE_AREA, 0 }, false };
    check_everywhere(&half, &x, 1, WEFT_F32, DIMS(1, 1, 2, 1), (const double[]){ 1.5, 3.5 },
                     "area halves");
    check_everywhere(&up, &x, 1, WEFT_F32, DIMS(1, 1, 8, 1),
                     (const double[]){ 1, 1, 2, 2, 3, 3, 4, 4 }, "area doubles");
    weft_tensor_release(x);
    const int64_t h = 5, w = 7, c = 3, sizes[][2] = { { 2, 3 }, { 11, 4 }, { 5, 7 }, { 1, 1 } };
    double *v = dyadic(2 * h * w * c, 140);
    weft_tensor *t = test_tensor(WEFT_F64, 4, DIMS(2, h, w, c), v);
    for (size_t sz = 0; sz < sizeof sizes / sizeof sizes[0]; sz++) {
        int64_t oh = sizes[sz][0], ow = sizes[sz][1];
        double *want = calloc((size_t)(2 * oh * ow * c), sizeof(double));
        cr_assert_not_null(want);
        double norm = (double)oh * (double)ow / ((double)h * (double)w), wy[16], wx[16];
        for (int64_t b = 0; b < 2; b++)
            for (int64_t oy = 0; oy < oh; oy++) {
                int64_t fy, ny = area_cells(oy, h, oh, &fy, wy);
                for (int64_t ox = 0; ox < ow; ox++) {
                    int64_t fx, nx = area_cells(ox, w, ow, &fx, wx);
                    for (int64_t q = 0; q < c; q++) {
                        double sum = 0;
                        for (int64_t k = 0; k < ny; k++)
                            for (int64_t m = 0; m < nx; m++) {
                                int64_t iy = fy + k < h ? fy + k : h - 1;
                                int64_t ix = fx + m < w ? fx + m : w - 1;
                                sum += v[((b * h + iy) * w + ix) * c + q] * (wy[k] * wx[m]);
                            }
                        want[((b * oh + oy) * ow + ox) * c + q] = sum * norm;
                    }
                }
            }
        op_case rc = { RESIZE, { oh, ow }, { WEFT_RESIZE_AREA, 0 }, false };
        check_everywhere(&rc, &t, 1, WEFT_F64, DIMS(2, oh, ow, c), want, "resize area");
        free(want);
    }
    weft_tensor_release(t);
    free(v);
}

/* The definition in double precision on [2, 5, 7, 3] to sizes up and down
 * (f64: exactly the kernel's arithmetic), and a single image of rank 3. */
Test(ops_conv, resize_matches_the_definition)
{
    const int64_t h = 5, w = 7, c = 3, sizes[][2] = { { 11, 3 }, { 2, 16 }, { 5, 7 }, { 1, 1 } };
    double *x = dyadic(2 * h * w * c, 130);
    weft_tensor *t = test_tensor(WEFT_F64, 4, DIMS(2, h, w, c), x);
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int m = 0; m < 2; m++) {
            int64_t oh = sizes[s][0], ow = sizes[s][1];
            double *want = calloc((size_t)(2 * oh * ow * c), sizeof(double));
            cr_assert_not_null(want);
            for (int64_t b = 0; b < 2; b++)
                for (int64_t oy = 0; oy < oh; oy++)
                    for (int64_t ox = 0; ox < ow; ox++)
                        for (int64_t q = 0; q < c; q++) {
                            double sy = (double)h / (double)oh, sx = (double)w / (double)ow, v;
                            if (m) {   /* nearest */
                                int64_t iy = (int64_t)floor((oy + 0.5) * sy);
                                int64_t ix = (int64_t)floor((ox + 0.5) * sx);
                                iy = iy < h - 1 ? iy : h - 1;
                                ix = ix < w - 1 ? ix : w - 1;
                                v = x[((b * h + iy) * w + ix) * c + q];
                            } else {
                                double ay = (oy + 0.5) * sy - 0.5, ax = (ox + 0.5) * sx - 0.5;
                                int64_t y0 = (int64_t)floor(ay), y1 = (int64_t)ceil(ay);
                                int64_t x0 = (int64_t)floor(ax), x1 = (int64_t)ceil(ax);
                                double ly = ay - floor(ay), lx = ax - floor(ax);
                                y0 = y0 > 0 ? y0 : 0;
                                x0 = x0 > 0 ? x0 : 0;
                                y1 = y1 < h - 1 ? y1 : h - 1;
                                x1 = x1 < w - 1 ? x1 : w - 1;
#define PX(Y, X) x[((b * h + (Y)) * w + (X)) * c + q]
                                double top = PX(y0, x0) + (PX(y0, x1) - PX(y0, x0)) * lx;
                                double bot = PX(y1, x0) + (PX(y1, x1) - PX(y1, x0)) * lx;
#undef PX
                                v = top + (bot - top) * ly;
                            }
                            want[((b * oh + oy) * ow + ox) * c + q] = v;
                        }
            op_case rc = { RESIZE, { oh, ow }, { m, 0 }, false };
            check_everywhere(&rc, &t, 1, WEFT_F64, DIMS(2, oh, ow, c), want,
                             m ? "resize nearest" : "resize bilinear");
            free(want);
        }
    weft_tensor_release(t);
    /* One image [h, w, c]: the same numbers as a batch of one. */
    weft_tensor *one = test_tensor(WEFT_F64, 3, DIMS(h, w, c), x);
    op_case rc = { RESIZE, { 3, 4 }, { WEFT_RESIZE_BILINEAR, 0 }, false };
    weft_tensor *y;
    cr_assert_eq(call_op(rt, &rc, &one, 1, false, NULL, &y), 0, "%s", weft_errmsg());
    test_assert_shape(y, WEFT_F64, 3, DIMS(3, 4, c), "one image");
    weft_tensor_release(y);
    weft_tensor_release(one);
    free(x);
}

/* TensorFlow's ResizeBicubic weights for output coordinate o (half-pixel
 * centers, Keys' cubic with a = -0.5 from its table of 1024 steps in
 * float, pixels outside weighted 0 and the rest renormalized), written
 * from TensorFlow's resize_bicubic_op.cc. */
static void bicubic_weights(int64_t o, int64_t in, int64_t out, int64_t at[4], float w[4])
{
    const double a = -0.5;
    float scale = (float)in / (float)out, in_f = ((float)o + 0.5f) * scale - 0.5f;
    int64_t base = (int64_t)floorf(in_f);
    long off = lrintf((in_f - (float)base) * 1024);
    /* Distances 1 + d, d, 1 - d and 2 - d of the quantized fraction d. */
    float near[2], far[2];
    for (int k = 0; k < 2; k++) {
        float x = (float)((k ? 1024 - off : off) * 1.0 / 1024);
        near[k] = (float)(((a + 2) * x - (a + 3)) * x * x + 1);
        x += 1.0f;
        far[k] = (float)(((a * x - 5 * a) * x + 8 * a) * x - 4 * a);
    }
    const float raw[4] = { far[0], near[0], near[1], far[1] };
    float sum = 0;
    for (int k = 0; k < 4; k++) {
        int64_t i = base - 1 + k;
        at[k] = i < 0 ? 0 : i >= in ? in - 1 : i;
        w[k] = at[k] == i ? raw[k] : 0;
        sum += w[k];
    }
    for (int k = 0; k < 4; k++)
        w[k] *= 1.0f / sum;
}

/* bicubic: the same size gives the input back; TensorFlow's rule on [2, 5,
 * 7, 3] up and down (f64: exactly the kernel's arithmetic); a linear ramp
 * comes out linear at the quantized positions inside the image. */
Test(ops_conv, resize_bicubic_is_tensorflows)
{
    const int64_t h = 5, w = 7, c = 3, sizes[][2] = { { 11, 3 }, { 2, 16 }, { 1, 1 }, { 3, 9 } };
    double *x = dyadic(2 * h * w * c, 150);
    weft_tensor *t = test_tensor(WEFT_F64, 4, DIMS(2, h, w, c), x);
    op_case same = { RESIZE, { h, w }, { WEFT_RESIZE_BICUBIC, 0 }, false };
    check_everywhere(&same, &t, 1, WEFT_F64, DIMS(2, h, w, c), x, "bicubic, same size");
    for (size_t sz = 0; sz < sizeof sizes / sizeof sizes[0]; sz++) {
        int64_t oh = sizes[sz][0], ow = sizes[sz][1];
        double *want = calloc((size_t)(2 * oh * ow * c), sizeof(double));
        cr_assert_not_null(want);
        for (int64_t b = 0; b < 2; b++)
            for (int64_t oy = 0; oy < oh; oy++)
                for (int64_t ox = 0; ox < ow; ox++) {
                    int64_t ay[4], ax[4];
                    float wy[4], wx[4];
                    bicubic_weights(oy, h, oh, ay, wy);
                    bicubic_weights(ox, w, ow, ax, wx);
                    for (int64_t q = 0; q < c; q++) {
                        double col[4];
                        for (int k = 0; k < 4; k++) {
                            col[k] = 0;
                            for (int m = 0; m < 4; m++)
                                col[k] += x[((b * h + ay[m]) * w + ax[k]) * c + q] * (double)wy[m];
                        }
                        double v = 0;
                        for (int k = 0; k < 4; k++)
                            v += col[k] * (double)wx[k];
                        want[((b * oh + oy) * ow + ox) * c + q] = v;
                    }
                }
        op_case rc = { RESIZE, { oh, ow }, { WEFT_RESIZE_BICUBIC, 0 }, false };
        check_everywhere(&rc, &t, 1, WEFT_F64, DIMS(2, oh, ow, c), want, "resize bicubic");
        free(want);
    }
    weft_tensor_release(t);
    free(x);
    double ramp[16];
    for (int i = 0; i < 16; i++)
        ramp[i] = i;
    weft_tensor *r = test_tensor(WEFT_F32, 4, DIMS(1, 1, 16, 1), ramp);
    op_case up = { RESIZE, { 1, 40 }, { WEFT_RESIZE_BICUBIC, 0 }, false };
    weft_tensor *y;
    cr_assert_eq(call_op(rts[1], &up, &r, 1, false, NULL, &y), 0, "%s", weft_errmsg());
    int inside = 0;
    for (int64_t ox = 0; ox < 40; ox++) {
        float in_f = ((float)ox + 0.5f) * (16.0f / 40.0f) - 0.5f;
        int64_t base = (int64_t)floorf(in_f);
        if (base < 1 || base + 2 > 15)
            continue;
        inside++;
        double at = (double)base + (double)lrintf((in_f - (float)base) * 1024) / 1024;
        cr_assert(fabs(test_element(y, ox) - at) < 1e-5, "ramp at %lld: %.9g, expected %.9g",
                  (long long)ox, test_element(y, ox), at);
    }
    cr_assert_gt(inside, 30);
    weft_tensor_release(y);
    weft_tensor_release(r);
}

/* Values that are not exact: the same bits on any worker count, eagerly
 * and traced, and close to the f64 reference. */
Test(ops_conv, conv2d_gives_the_same_bits_on_any_worker_count)
{
    const conv_case k = { 2, 33, 31, 12, 3, 3, 20, 1, 1, 1, 1, true };
    int64_t nx = k.n * k.h * k.w * k.c, nf = k.kh * k.kw * k.c * k.o, oh, ow;
    double *x = dyadic(nx, 7), *fv = dyadic(nf, 8);
    for (int64_t i = 0; i < nx; i++)
        x[i] = sin((double)i) * 1.37;
    double *want = conv_reference(&k, x, fv, &oh, &ow);
    int64_t ny = k.n * oh * ow * k.o;
    op_case c = { CONV2D, { 1, 1 }, { 1, 1 }, true };
    weft_tensor *args[2] = { test_tensor(WEFT_F32, 4, DIMS(k.n, k.h, k.w, k.c), x),
                             test_tensor(WEFT_F32, 4, DIMS(k.kh, k.kw, k.c, k.o), fv) };
    weft_tensor *first = NULL;
    for (int r = 0; r < N_RT; r++)
        for (int eager = 0; eager < 2; eager++) {
            weft_tensor *y;
            cr_assert_eq(call_op(rts[r], &c, args, 2, eager, NULL, &y), 0, "%s", weft_errmsg());
            if (!first) {
                first = y;
                for (int64_t i = 0; i < ny; i++)
                    cr_assert(fabs(test_element(y, i) - want[i]) <= 1e-4 * (1 + fabs(want[i])),
                              "element %lld: %g, not %g", (long long)i, test_element(y, i),
                              want[i]);
                continue;
            }
            cr_assert(memcmp(weft_tensor_data(y), weft_tensor_data(first),
                             sizeof(float) * (size_t)ny) == 0,
                      "%u workers, %s: other bits", rt_workers[r], mode_names[eager]);
            weft_tensor_release(y);
        }
    weft_tensor_release(first);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
    free(x);
    free(fv);
    free(want);
}

/* Traced once for f64[?, ?, ?, 3]: calls of other sizes give the
 * reference for each; a VALID window too large for a call's input is an
 * error of that call. */
Test(ops_conv, conv2d_on_dims_unknown_while_tracing)
{
    weft_spec sig[2] = { { .dtype = WEFT_F64, .rank = 4,
                           .dims = { WEFT_DIM_ANY, WEFT_DIM_ANY, WEFT_DIM_ANY, 3 } },
                         { .dtype = WEFT_F64, .rank = 4, .dims = { 3, 2, 3, 4 } } };
    op_case c = { CONV2D, { 2, 1 }, { 1, 2 }, false };
    weft_function_desc desc = { .name = "conv", .body = op_body, .user = &c, .n_args = 2,
                                .n_outs = 1, .input_signature = sig };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &desc, &f), 0, "%s", weft_errmsg());
    const conv_case sizes[] = { { 1, 5, 5, 3, 3, 2, 4, 2, 1, 1, 2, false },
                                { 3, 20, 9, 3, 3, 2, 4, 2, 1, 1, 2, false } };
    double *fv = dyadic(3 * 2 * 3 * 4, 3);
    weft_tensor *filters = test_tensor(WEFT_F64, 4, DIMS(3, 2, 3, 4), fv);
    for (int s = 0; s < 2; s++) {
        const conv_case *k = &sizes[s];
        double *x = dyadic(k->n * k->h * k->w * k->c, 20 + (uint64_t)s);
        int64_t oh, ow;
        double *want = conv_reference(k, x, fv, &oh, &ow);
        weft_tensor *xt = test_tensor(WEFT_F64, 4, DIMS(k->n, k->h, k->w, k->c), x);
        weft_arg a[2] = { weft_arg_tensor(xt), weft_arg_tensor(filters) };
        weft_tensor *y = NULL;
        cr_assert_eq(weft_function_call(f, a, 2, &y, 1), 0, "%s", weft_errmsg());
        test_assert_shape(y, WEFT_F64, 4, DIMS(k->n, oh, ow, 4), "unknown dims");
        assert_values(y, WEFT_F64, want, k->n * oh * ow * 4, "unknown dims");
        weft_tensor_release(y);
        weft_tensor_release(xt);
        free(x);
        free(want);
    }
    /* Width 2 < the dilated window's 3. */
    double zeros[2 * 5 * 3] = { 0 };
    weft_tensor *small = test_tensor(WEFT_F64, 4, DIMS(1, 5, 2, 3), zeros);
    weft_arg a[2] = { weft_arg_tensor(small), weft_arg_tensor(filters) };
    weft_tensor *y = NULL;
    cr_assert_eq(weft_function_call(f, a, 2, &y, 1), WEFT_ESHAPE);
    cr_assert(strstr(weft_errmsg(), "weft_conv2d: the input f64[1,5,2,3] has a width of 2, less "
                                    "than the window of 2 element(s) dilated with VALID"),
              "%s", weft_errmsg());
    cr_assert_null(y);
    weft_function_stats st;
    weft_function_get_stats(f, &st);
    cr_assert_eq(st.traces, 1, "traced %llu times", (unsigned long long)st.traces);
    weft_tensor_release(small);
    weft_tensor_release(filters);
    free(fv);
    weft_function_destroy(&f);
}

/* conv1d is conv2d over a height of 1: [b, w, c] * [kw, c, o]. */
Test(ops_conv, conv1d_matches_the_definition)
{
    const conv_case cases[] = { { 2, 1, 17, 3, 1, 4, 5, 1, 2, 1, 1, true },
                                { 1, 1, 30, 2, 1, 3, 3, 1, 3, 1, 2, false } };
    for (int i = 0; i < 2; i++) {
        const conv_case *k = &cases[i];
        double *x = dyadic(k->n * k->w * k->c, 40 + (uint64_t)i);
        double *fv = dyadic(k->kw * k->c * k->o, 50 + (uint64_t)i);
        int64_t oh, ow;
        double *want = conv_reference(k, x, fv, &oh, &ow);
        op_case c = { CONV1D, { 1, k->sw }, { 1, k->dw }, k->same };
        weft_tensor *args[2] = { test_tensor(WEFT_F32, 3, DIMS(k->n, k->w, k->c), x),
                                 test_tensor(WEFT_F32, 3, DIMS(k->kw, k->c, k->o), fv) };
        for (int eager = 0; eager < 2; eager++) {
            weft_tensor *y;
            cr_assert_eq(call_op(rt, &c, args, 2, eager, NULL, &y), 0, "%s", weft_errmsg());
            test_assert_shape(y, WEFT_F32, 3, DIMS(k->n, ow, k->o), "conv1d");
            assert_values(y, WEFT_F32, want, k->n * ow * k->o, "conv1d");
            weft_tensor_release(y);
        }
        weft_tensor_release(args[0]);
        weft_tensor_release(args[1]);
        free(x);
        free(fv);
        free(want);
    }
}

/* ---- Pooling ----------------------------------------------------------- */

static const pool_case pool_cases[] = {
    /* n, h, w, c, kh, kw, sh, sw, same */
    { 1, 4, 4, 1, 2, 2, 2, 2, false },
    { 2, 7, 6, 3, 3, 3, 1, 1, true },
    { 2, 9, 8, 5, 3, 2, 2, 3, true },      /* partial windows at both ends */
    { 1, 10, 11, 2, 4, 4, 3, 3, false },
    { 3, 64, 48, 16, 2, 2, 2, 2, true },   /* several chunks */
    { 1, 5, 5, 3, 7, 7, 1, 1, true },      /* windows larger than the input */
    { 1, 6, 7, 19, 3, 3, 2, 1, true },     /* blocks of vectors, then single channels */
    { 0, 5, 5, 3, 2, 2, 1, 1, true },
};

Test(ops_conv, pools_match_the_definition)
{
    const weft_dtype max_types[] = { WEFT_F32, WEFT_F64, WEFT_I32, WEFT_I64 };
    for (size_t i = 0; i < sizeof pool_cases / sizeof pool_cases[0]; i++) {
        const pool_case *k = &pool_cases[i];
        int64_t nx = k->n * k->h * k->w * k->c;
        /* Whole numbers (eighths scaled by 8), so that the integers hold
         * the same values. */
        double *x = dyadic(nx, 60 + i);
        for (int64_t e = 0; e < nx; e++)
            x[e] *= 8;
        for (int avg = 0; avg < 2; avg++) {
            int64_t oh, ow;
            double *want = pool_reference(k, avg, x, &oh, &ow);
            op_case c = { avg ? AVG_POOL : MAX_POOL, { k->kh, k->kw }, { k->sh, k->sw },
                          k->same };
            for (int d = 0; d < (avg ? 2 : 4); d++) {
                weft_tensor *arg = test_tensor(max_types[d], 4, DIMS(k->n, k->h, k->w, k->c), x);
                char label[32];
                snprintf(label, sizeof label, "%s case %zu", avg ? "avg" : "max", i);
                check_everywhere(&c, &arg, 1, max_types[d], DIMS(k->n, oh, ow, k->c), want,
                                 label);
                weft_tensor_release(arg);
            }
            free(want);
        }
        free(x);
    }
}

/* A NaN makes every window that holds it NaN, wherever it stands in the
 * window (first or later) and in the channels (18 of them: blocks of four
 * vectors, single vectors and the f32 tail); the other windows keep their
 * maxima. */
Test(ops_conv, max_pool_propagates_nan)
{
    const pool_case k = { 1, 6, 6, 18, 3, 3, 1, 1, true };
    const int64_t n = 6 * 6 * 18;
    double *x = dyadic(n, 70);
    x[(0 * 6 + 0) * 18 + 0] = NAN;    /* the first element of the top-left windows */
    x[(2 * 6 + 2) * 18 + 9] = NAN;    /* inside a block of four vectors */
    x[(4 * 6 + 3) * 18 + 17] = NAN;   /* the f32 tail, f64's last vector */
    int64_t oh, ow;
    double *want = pool_reference(&k, false, x, &oh, &ow);
    int want_nans = 0;
    for (int64_t e = 0; e < n; e++)
        want_nans += isnan(want[e]);
    cr_assert_eq(want_nans, 4 + 9 + 9, "the reference has %d NaNs", want_nans);
    op_case c = { MAX_POOL, { 3, 3 }, { 1, 1 }, true };
    for (int d = 0; d < 2; d++) {
        weft_dtype t = d ? WEFT_F64 : WEFT_F32;
        weft_tensor *arg = test_tensor(t, 4, DIMS(1, 6, 6, 18), x);
        weft_tensor *y;
        cr_assert_eq(call_op(rt, &c, &arg, 1, false, NULL, &y), 0, "%s", weft_errmsg());
        assert_values(y, t, want, n, "max_pool with NaN");
        weft_tensor_release(y);
        weft_tensor_release(arg);
    }
    free(x);
    free(want);
}

/* avg_pool with SAME divides by the elements inside the input: a corner
 * window of ones averages to 1, not 4/9. */
Test(ops_conv, avg_pool_divides_by_the_window_inside_the_input)
{
    double ones[16];
    for (int i = 0; i < 16; i++)
        ones[i] = 1;
    weft_tensor *x = test_tensor(WEFT_F32, 4, DIMS(1, 4, 4, 1), ones);
    op_case c = { AVG_POOL, { 3, 3 }, { 1, 1 }, true };
    weft_tensor *y;
    cr_assert_eq(call_op(rt, &c, &x, 1, false, NULL, &y), 0, "%s", weft_errmsg());
    for (int64_t e = 0; e < 16; e++)
        cr_assert_eq(test_element(y, e), 1.0, "element %lld: %g", (long long)e,
                     test_element(y, e));
    weft_tensor_release(y);
    weft_tensor_release(x);
}

/* ---- The compiler ------------------------------------------------------ */

static int cse_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    const int64_t two[2] = { 2, 2 };
    weft_value *a = weft_conv2d(cx, args[0], args[1], NULL, WEFT_PADDING_SAME, NULL);
    weft_value *b = weft_conv2d(cx, args[0], args[1], NULL, WEFT_PADDING_SAME, NULL);
    weft_value *d = weft_conv2d(cx, args[0], args[1], NULL, WEFT_PADDING_SAME, two);
    weft_value *p = weft_max_pool2d(cx, weft_add(cx, weft_sub(cx, a, b), d), two, two,
                                    WEFT_PADDING_VALID);
    outs[0] = weft_avg_pool2d(cx, p, two, NULL, WEFT_PADDING_SAME);
    return weft_ctx_status(cx);
}

/* Two equal convolutions are one; other dilations are another; the
 * listing names each op's attributes. */
Test(ops_conv, cse_merges_equal_convolutions_and_the_listing_names_them)
{
    weft_function_desc desc = { .name = "cse", .body = cse_body, .n_args = 2, .n_outs = 1 };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &desc, &f), 0, "%s", weft_errmsg());
    double *x = dyadic(1 * 8 * 8 * 2, 80), *fv = dyadic(3 * 3 * 2 * 3, 81);
    weft_tensor *xt = test_tensor(WEFT_F64, 4, DIMS(1, 8, 8, 2), x);
    weft_tensor *ft = test_tensor(WEFT_F64, 4, DIMS(3, 3, 2, 3), fv);
    weft_arg a[2] = { weft_arg_tensor(xt), weft_arg_tensor(ft) };
    weft_tensor *out = NULL;
    cr_assert_eq(weft_function_call(f, a, 2, &out, 1), 0, "%s", weft_errmsg());
    test_assert_shape(out, WEFT_F64, 4, DIMS(1, 4, 4, 3), "cse");
    char *text = test_ops_text(f);
    cr_assert_eq(test_count(text, "conv2d<strides=[1,1],dilations=[1,1],SAME>(%"), 1, "%s", text);
    cr_assert_eq(test_count(text, "conv2d<strides=[1,1],dilations=[2,2],SAME>(%"), 1, "%s", text);
    cr_assert_eq(test_count(text, "max_pool2d<ksize=[2,2],strides=[2,2],VALID>(%"), 1, "%s",
                 text);
    cr_assert_eq(test_count(text, "avg_pool2d<ksize=[2,2],strides=[1,1],SAME>(%"), 1, "%s", text);
    free(text);
    weft_tensor_release(out);
    weft_tensor_release(xt);
    weft_tensor_release(ft);
    free(x);
    free(fv);
    weft_function_destroy(&f);
}

/* ---- Errors ------------------------------------------------------------ */

typedef struct bad_call {
    op_case c;
    weft_dtype xt, ft;
    int xr, fr;
    int64_t xd[4], fd[4];
    int rc;
    const char *says;
} bad_call;

/* Each call fails with its code and message, traced and eagerly. */
Test(ops_conv, errors)
{
    const bad_call cases[] = {
        { { CONV2D, { 1, 1 }, { 1, 1 }, true }, WEFT_F32, WEFT_F64, 4, 4, { 1, 4, 4, 2 },
          { 3, 3, 2, 1 }, WEFT_EDTYPE, "weft_conv2d: the filters f64[3,3,2,1] are not f32" },
        { { CONV2D, { 1, 1 }, { 1, 1 }, true }, WEFT_I32, WEFT_I32, 4, 4, { 1, 4, 4, 2 },
          { 3, 3, 2, 1 }, WEFT_EDTYPE,
          "weft_conv2d: the input i32[1,4,4,2] is not f32 or f64 (cast it first)" },
        { { CONV2D, { 1, 1 }, { 1, 1 }, true }, WEFT_F32, WEFT_F32, 4, 4, { 1, 4, 4, 2 },
          { 3, 3, 5, 1 }, WEFT_ESHAPE, "weft_conv2d: the input f32[1,4,4,2] has 2 channels, "
          "the filters f32[3,3,5,1] take 5" },
        { { CONV2D, { 1, 1 }, { 1, 1 }, true }, WEFT_F32, WEFT_F32, 3, 4, { 4, 4, 2 },
          { 3, 3, 2, 1 }, WEFT_ESHAPE, "weft_conv2d: the input f32[4,4,2] is not of rank 4 "
          "(batch, height, width, channels)" },
        { { CONV2D, { 1, 1 }, { 1, 1 }, false }, WEFT_F32, WEFT_F32, 4, 4, { 1, 2, 4, 2 },
          { 3, 3, 2, 1 }, WEFT_ESHAPE, "weft_conv2d: the input f32[1,2,4,2] has a height of 2, "
          "less than the window of 3 element(s) with VALID padding" },
        { { CONV2D, { 1, 1 }, { 1, 1 }, true }, WEFT_F32, WEFT_F32, 4, 4, { 1, 4, 4, 2 },
          { 3, 0, 2, 1 }, WEFT_ESHAPE, "weft_conv2d: the filters f32[3,0,2,1] have a width of 0" },
        { { CONV2D, { 0, 1 }, { 1, 1 }, true }, WEFT_F32, WEFT_F32, 4, 4, { 1, 4, 4, 2 },
          { 3, 3, 2, 1 }, WEFT_EINVAL, "weft_conv2d: strides[0] is 0, not within 1..2147483647" },
        { { CONV2D, { 1, 1 }, { 1, -2 }, true }, WEFT_F32, WEFT_F32, 4, 4, { 1, 4, 4, 2 },
          { 3, 3, 2, 1 }, WEFT_EINVAL, "weft_conv2d: dilations[1] is -2" },
        { { CONV1D, { 1, 0 }, { 1, 1 }, true }, WEFT_F32, WEFT_F32, 3, 3, { 1, 4, 2 },
          { 3, 2, 1 }, WEFT_EINVAL, "weft_conv1d: stride 0 and dilation 1 are not both within" },
        { { CONV1D, { 1, 1 }, { 1, 1 }, true }, WEFT_F32, WEFT_F32, 4, 3, { 1, 1, 4, 2 },
          { 3, 2, 1 }, WEFT_ESHAPE, "weft_conv1d: the input f32[1,1,4,2] is not of rank 3 "
          "(batch, width, channels)" },
        { { DEPTHWISE, { 1, 1 }, { 1, 1 }, true }, WEFT_F32, WEFT_F32, 4, 4, { 1, 4, 4, 2 },
          { 3, 3, 3, 1 }, WEFT_ESHAPE, "weft_depthwise_conv2d: the input f32[1,4,4,2] has 2 "
          "channels, the filters f32[3,3,3,1] take 3" },
        { { TRANSPOSE, { 2, 2 }, { 9, 8 }, true }, WEFT_F32, WEFT_F32, 4, 4, { 1, 4, 4, 2 },
          { 3, 3, 1, 2 }, WEFT_ESHAPE, "weft_conv2d_transpose: an output height of 9 does not "
          "give the input's 4" },
        { { TRANSPOSE, { 2, 2 }, { 0, 0 }, true }, WEFT_F32, WEFT_F32, 4, 4, { 1, 4, 4, 2 },
          { 3, 3, 2, 3 }, WEFT_ESHAPE, "weft_conv2d_transpose: the filters f32[3,3,2,3] do not "
          "take the 2 channels" },
        { { RESIZE, { 0, 3 }, { 0, 0 }, false }, WEFT_F32, 0, 4, 0, { 1, 4, 4, 2 }, { 0 },
          WEFT_EINVAL, "weft_resize: size 0 x 3 is not within 1..2147483647" },
        { { RESIZE, { 2, 3 }, { 0, 0 }, false }, WEFT_I32, 0, 4, 0, { 1, 4, 4, 2 }, { 0 },
          WEFT_EDTYPE, "weft_resize: the input i32[1,4,4,2] is not f32 or f64" },
        { { MAX_POOL, { 2, 2 }, { 1, 1 }, true }, WEFT_BOOL, 0, 4, 0, { 1, 4, 4, 2 }, { 0 },
          WEFT_EDTYPE, "weft_max_pool2d: the input bool[1,4,4,2] is not i32, i64, f32 or f64" },
        { { AVG_POOL, { 2, 2 }, { 1, 1 }, true }, WEFT_I64, 0, 4, 0, { 1, 4, 4, 2 }, { 0 },
          WEFT_EDTYPE, "weft_avg_pool2d: the input i64[1,4,4,2] is not f32 or f64" },
        { { AVG_POOL, { 2, 0 }, { 1, 1 }, true }, WEFT_F32, 0, 4, 0, { 1, 4, 4, 2 }, { 0 },
          WEFT_EINVAL, "weft_avg_pool2d: ksize[1] is 0" },
        { { MAX_POOL, { 5, 2 }, { 1, 1 }, false }, WEFT_F32, 0, 4, 0, { 1, 4, 4, 2 }, { 0 },
          WEFT_ESHAPE, "weft_max_pool2d: the input f32[1,4,4,2] has a height of 4, less than "
          "the window of 5" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const bad_call *b = &cases[i];
        bool conv = b->c.op != MAX_POOL && b->c.op != AVG_POOL && b->c.op != RESIZE;
        double zeros[64] = { 0 };
        weft_tensor *args[2] = { test_tensor(b->xt, b->xr, b->xd, zeros),
                                 conv ? test_tensor(b->ft, b->fr, b->fd, zeros) : NULL };
        for (int eager = 0; eager < 2; eager++) {
            weft_tensor *y;
            int rc = call_op(rt, &b->c, args, conv ? 2 : 1, eager, NULL, &y);
            cr_assert_eq(rc, b->rc, "case %zu %s: %s (%s)", i, mode_names[eager],
                         weft_err_name(rc), weft_errmsg());
            cr_assert(strstr(weft_errmsg(), b->says), "case %zu: \"%s\" does not say \"%s\"", i,
                      weft_errmsg(), b->says);
            cr_assert_null(y);
        }
        weft_tensor_release(args[0]);
        weft_tensor_release(args[1]);
    }
    weft_ctx *cx = NULL;
    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    double zeros[32] = { 0 };
    weft_tensor *xt = test_tensor(WEFT_F32, 4, DIMS(1, 4, 4, 2), zeros);
    weft_value *x = weft_eager_value(cx, xt);
    cr_assert_null(weft_max_pool2d(cx, x, NULL, NULL, WEFT_PADDING_SAME));
    cr_assert(strstr(weft_errmsg(), "weft_max_pool2d: NULL ksize"), "%s", weft_errmsg());
    weft_eager_end(&cx);
    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    x = weft_eager_value(cx, xt);
    cr_assert_null(weft_avg_pool2d(cx, x, DIMS(2, 2), NULL, (weft_padding)7));
    cr_assert_eq(weft_ctx_status(cx), WEFT_EINVAL);
    cr_assert(strstr(weft_errmsg(), "weft_avg_pool2d: padding 7 is not WEFT_PADDING_VALID or "
                                    "WEFT_PADDING_SAME"), "%s", weft_errmsg());
    weft_eager_end(&cx);
    cr_assert_null(weft_conv2d(NULL, NULL, NULL, NULL, WEFT_PADDING_SAME, NULL));
    cr_assert(strstr(weft_errmsg(), "weft_conv2d: NULL context"), "%s", weft_errmsg());
    weft_tensor_release(xt);
}
