/* conv3d_transpose against the scatter that defines it, written here: each
 * input element adds its products with every filter tap at stride *
 * position + dilation * tap - the forward convolution's padding before (as
 * TensorFlow places SAME's), within the output.  Strides, dilations, both
 * paddings, a given output size (SAME's in * stride - 1 too) and the
 * default; the same bits eagerly and traced on 1, 2 and 4 workers; a
 * depth of one gives conv2d_transpose_ex's bits; a batch unknown while
 * tracing; the refused calls.  conv1d_transpose against its own scatter
 * and conv2d_transpose_ex over a height of one. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_conv_transpose, .init = suite_runtimes_create,
          .fini = suite_runtimes_destroy, .timeout = 120);

typedef struct ct_case {
    int64_t b, d, h, w, c, kd, kh, kw, o;   /* input NDHWC; filters kd kh kw o c */
    int64_t st[3], dil[3], out[3];          /* out[0] == 0: the default size */
    bool same;
} ct_case;

static int ct_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const ct_case *k = user;
    outs[0] = weft_conv3d_transpose(cx, a[0], a[1], k->out[0] ? k->out : NULL, k->st,
                                    k->same ? WEFT_PADDING_SAME : WEFT_PADDING_VALID, k->dil);
    return weft_ctx_status(cx);
}

static double *draw(int64_t n, uint64_t seed)
{
    double *v = malloc((size_t)n * sizeof *v);
    cr_assert_not_null(v);
    uint64_t s = seed * 2654435761u + 1;
    for (int64_t i = 0; i < n; i++)
        v[i] = op_uniform(&s);
    return v;
}

/* The output size along one dim and the forward convolution's padding
 * before for it (TensorFlow's SAME: half the total, rounded down). */
static int64_t out_dim(const ct_case *k, int i, int64_t in, int64_t win, int64_t *before)
{
    int64_t span = (win - 1) * k->dil[i] + 1;
    int64_t out = k->out[0] ? k->out[i] : k->same ? in * k->st[i] : (in - 1) * k->st[i] + span;
    *before = 0;
    if (k->same) {
        int64_t total = (in - 1) * k->st[i] + span - out;
        *before = total > 0 ? total / 2 : 0;
    }
    return out;
}

static double *scatter(const ct_case *k, const double *x, const double *f, int64_t out[3])
{
    const int64_t in[3] = { k->d, k->h, k->w }, win[3] = { k->kd, k->kh, k->kw };
    int64_t before[3];
    for (int i = 0; i < 3; i++)
        out[i] = out_dim(k, i, in[i], win[i], &before[i]);
    int64_t n = k->b * out[0] * out[1] * out[2] * k->o;
    double *y = calloc((size_t)n, sizeof *y);
    cr_assert_not_null(y);
    for (int64_t b = 0; b < k->b; b++)
        for (int64_t id = 0; id < k->d; id++)
            for (int64_t ih = 0; ih < k->h; ih++)
                for (int64_t iw = 0; iw < k->w; iw++)
                    for (int64_t td = 0; td < k->kd; td++)
                        for (int64_t th = 0; th < k->kh; th++)
                            for (int64_t tw = 0; tw < k->kw; tw++) {
                                int64_t od = id * k->st[0] + td * k->dil[0] - before[0];
                                int64_t oh = ih * k->st[1] + th * k->dil[1] - before[1];
                                int64_t ow = iw * k->st[2] + tw * k->dil[2] - before[2];
                                if (od < 0 || od >= out[0] || oh < 0 || oh >= out[1] || ow < 0 ||
                                    ow >= out[2])
                                    continue;
                                for (int64_t oc = 0; oc < k->o; oc++)
                                    for (int64_t ic = 0; ic < k->c; ic++)
                                        y[(((b * out[0] + od) * out[1] + oh) * out[2] + ow) * k->o +
                                          oc] +=
                                            x[(((b * k->d + id) * k->h + ih) * k->w + iw) * k->c +
                                              ic] *
                                            f[(((td * k->kh + th) * k->kw + tw) * k->o + oc) *
                                                  k->c + ic];
                            }
    return y;
}

/* got is the scatter of x and f for k (within rounding); `what` names it. */
static void assert_scatter(const ct_case *k, const double *x, const double *f,
                           const weft_tensor *got, const char *what)
{
    int64_t out[3];
    double *want = scatter(k, x, f, out);
    int64_t yd[5] = { k->b, out[0], out[1], out[2], k->o };
    test_assert_shape(got, WEFT_F64, 5, yd, what);
    for (int64_t i = 0; i < test_numel(5, yd); i++)
        cr_assert(fabs(test_element(got, i) - want[i]) <= 1e-12 * (1 + fabs(want[i])),
                  "%s element %lld: %.17g, want %.17g", what, (long long)i, test_element(got, i),
                  want[i]);
    free(want);
}

static void check_case(const ct_case *k, uint64_t seed)
{
    int64_t xd[5] = { k->b, k->d, k->h, k->w, k->c }, fd[5] = { k->kd, k->kh, k->kw, k->o, k->c };
    double *x = draw(test_numel(5, xd), seed), *f = draw(test_numel(5, fd), seed + 7);
    weft_tensor *args[2] = { test_tensor(WEFT_F64, 5, xd, x), test_tensor(WEFT_F64, 5, fd, f) };
    weft_tensor *got;
    op_results_everywhere(ct_body, (void *)k, args, 2, &got, 1, "conv3d_transpose");
    char what[48];
    snprintf(what, sizeof what, "conv3d_transpose, seed %llu", (unsigned long long)seed);
    assert_scatter(k, x, f, got, what);
    weft_tensor_release(got);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
    free(x);
    free(f);
}

Test(ops_conv_transpose, against_the_scatter)
{
    const ct_case cases[] = {
        { 2, 3, 3, 4, 2, 2, 3, 2, 3, { 2, 1, 2 }, { 1, 1, 1 }, { 0 }, true },
        { 2, 3, 3, 4, 2, 2, 3, 2, 3, { 2, 1, 2 }, { 1, 1, 1 }, { 0 }, false },
        { 1, 2, 4, 3, 3, 3, 2, 2, 2, { 1, 2, 1 }, { 2, 1, 2 }, { 0 }, false },
        { 1, 2, 4, 3, 3, 2, 2, 3, 2, { 3, 2, 2 }, { 1, 2, 1 }, { 0 }, true },
        /* SAME with outputs a stride short of the default, and VALID with
         * one past the full result (zeros there). */
        { 2, 3, 2, 3, 1, 2, 2, 2, 2, { 2, 2, 2 }, { 1, 1, 1 }, { 5, 3, 5 }, true },
        { 1, 2, 3, 2, 2, 2, 2, 2, 1, { 2, 2, 2 }, { 1, 1, 1 }, { 5, 6, 5 }, false },
        { 1, 1, 1, 1, 2, 3, 1, 2, 2, { 1, 1, 1 }, { 1, 1, 1 }, { 0 }, false },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        check_case(&cases[i], 11 + i);
}

static int depth_one_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    const int64_t st3[3] = { 1, 2, 3 }, dil3[3] = { 1, 2, 1 }, out3[3] = { 1, 9, 11 };
    weft_value *y3 = weft_conv3d_transpose(cx, a[0], a[1], out3, st3, WEFT_PADDING_SAME, dil3);
    weft_value *y2 = weft_conv2d_transpose_ex(
        cx, weft_squeeze(cx, a[0], 1),
        weft_squeeze(cx, a[1], 0), out3 + 1, st3 + 1, WEFT_PADDING_SAME,
        dil3 + 1);
    outs[0] = weft_squeeze(cx, y3, 1);
    outs[1] = y2;
    return weft_ctx_status(cx);
}

Test(ops_conv_transpose, a_depth_of_one_is_conv2d_transpose)
{
    int64_t xd[5] = { 2, 1, 5, 4, 3 }, fd[5] = { 1, 3, 2, 2, 3 };
    double *x = draw(test_numel(5, xd), 3), *f = draw(test_numel(5, fd), 4);
    weft_tensor *args[2] = { test_tensor(WEFT_F64, 5, xd, x), test_tensor(WEFT_F64, 5, fd, f) };
    weft_tensor *outs[2];
    op_results_everywhere(depth_one_body, NULL, args, 2, outs, 2, "depth one");
    int64_t yd[4] = { 2, 9, 11, 2 };
    test_assert_shape(outs[0], WEFT_F64, 4, yd, "depth one");
    cr_assert(op_same_bits(outs[0], outs[1]), "conv3d_transpose of depth 1 differs from "
              "conv2d_transpose_ex");
    for (int k = 0; k < 2; k++) {
        weft_tensor_release(outs[k]);
        weft_tensor_release(args[k]);
    }
    free(x);
    free(f);
}

Test(ops_conv_transpose, batch_unknown_while_tracing)
{
    static const ct_case k = { 0, 2, 3, 2, 2, 2, 2, 2, 2, { 2, 1, 2 }, { 1, 1, 1 }, { 0 }, true };
    weft_spec sig[2] = { { WEFT_F64, 5, { -1, 2, 3, 2, 2 } }, { WEFT_F64, 5, { 2, 2, 2, 2, 2 } } };
    weft_function *fn = op_signature_function(rts[1], ct_body, (void *)&k, sig, 2);
    for (int64_t b = 1; b <= 3; b += 2) {
        ct_case kb = k;
        kb.b = b;
        int64_t xd[5] = { b, 2, 3, 2, 2 }, fd[5] = { 2, 2, 2, 2, 2 };
        double *x = draw(test_numel(5, xd), 5 + (uint64_t)b), *f = draw(32, 9);
        weft_tensor *args[2] = { test_tensor(WEFT_F64, 5, xd, x), test_tensor(WEFT_F64, 5, fd, f) };
        weft_arg a[2] = { weft_arg_tensor(args[0]), weft_arg_tensor(args[1]) };
        weft_tensor *got = NULL;
        cr_assert_eq(weft_function_call(fn, a, 2, &got, 1), 0, "%s", weft_errmsg());
        assert_scatter(&kb, x, f, got, b == 1 ? "unknown batch of 1" : "unknown batch of 3");
        weft_tensor_release(got);
        weft_tensor_release(args[0]);
        weft_tensor_release(args[1]);
        free(x);
        free(f);
    }
    op_destroy_traced_once(&fn);
}

typedef enum bad_call { RANK4, CHANNELS, OUTPUT, BAD_STRIDE, BAD_PADDING } bad_call;

static int bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    /* a: input f64[1,2,3,3,2], filters f64[2,2,2,3,2], filters f64[2,2,2,3,4],
     * input f64[2,3,3,2]. */
    const int64_t bad_out[3] = { 6, 3, 3 }, zero_stride[3] = { 1, 0, 1 };
    switch (*(const bad_call *)user) {
    case RANK4:
        outs[0] = weft_conv3d_transpose(cx, a[3], a[1], NULL, NULL, WEFT_PADDING_SAME, NULL);
        break;
    case CHANNELS:
        outs[0] = weft_conv3d_transpose(cx, a[0], a[2], NULL, NULL, WEFT_PADDING_SAME, NULL);
        break;
    case OUTPUT:
        outs[0] = weft_conv3d_transpose(cx, a[0], a[1], bad_out, NULL, WEFT_PADDING_SAME, NULL);
        break;
    case BAD_STRIDE:
        outs[0] = weft_conv3d_transpose(cx, a[0], a[1], NULL, zero_stride, WEFT_PADDING_SAME,
                                        NULL);
        break;
    case BAD_PADDING:
        outs[0] = weft_conv3d_transpose(cx, a[0], a[1], NULL, NULL, (weft_padding)7, NULL);
        break;
    }
    return weft_ctx_status(cx);
}

Test(ops_conv_transpose, refused_calls_name_the_op)
{
    const double v[96] = { 0 };   /* the largest tensor, f64[2,2,2,3,4] */
    weft_tensor *args[4] = {
        test_tensor(WEFT_F64, 5, (const int64_t[]){ 1, 2, 3, 3, 2 }, v),
        test_tensor(WEFT_F64, 5, (const int64_t[]){ 2, 2, 2, 3, 2 }, v),
        test_tensor(WEFT_F64, 5, (const int64_t[]){ 2, 2, 2, 3, 4 }, v),
        test_tensor(WEFT_F64, 4, (const int64_t[]){ 2, 3, 3, 2 }, v),
    };
    const op_error_case cases[] = {
        { RANK4, WEFT_ESHAPE, "weft_conv3d_transpose: the input f64[2,3,3,2] and the filters "
                              "f64[2,2,2,3,2] are not of rank 5 with depth, height, width and "
                              "channels known" },
        { CHANNELS, WEFT_ESHAPE, "weft_conv3d_transpose: the filters f64[2,2,2,3,4] do not take "
                                 "the 2 channels of the input f64[1,2,3,3,2] (filters: depth, "
                                 "height, width, out, in)" },
        { OUTPUT, WEFT_ESHAPE, "weft_conv3d_transpose: an output depth of 6 does not give the "
                               "input's 2 under conv3d" },
        { BAD_STRIDE, WEFT_EINVAL, "weft_conv3d_transpose: strides[1] is 0" },
        { BAD_PADDING, WEFT_EINVAL, "weft_conv3d_transpose: padding 7 is not" },
    };
    op_expect_errors(rts[1], bad_body, cases, sizeof cases / sizeof *cases, args, 4);
    for (int k = 0; k < 4; k++)
        weft_tensor_release(args[k]);
}

/* ---- conv1d_transpose ------------------------------------------------------ */

typedef struct c1_case {
    int64_t b, w, c, kw, o, stride, dil, out;   /* out -1: the default */
    bool same;
} c1_case;

static int c1_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const c1_case *k = user;
    weft_padding p = k->same ? WEFT_PADDING_SAME : WEFT_PADDING_VALID;
    outs[0] = weft_conv1d_transpose(cx, a[0], a[1], k->out, k->stride, p, k->dil);
    /* The same through conv2d_transpose_ex over a height of one. */
    const int64_t out_hw[2] = { 1, k->out }, st[2] = { 1, k->stride }, dil[2] = { 1, k->dil };
    weft_value *y2 = weft_conv2d_transpose_ex(cx, weft_expand_dims(cx, a[0], 1),
                                              weft_expand_dims(cx, a[1], 0),
                                              k->out < 0 ? NULL : out_hw, st, p, dil);
    outs[1] = weft_squeeze(cx, y2, 1);
    return weft_ctx_status(cx);
}

Test(ops_conv_transpose, conv1d_against_the_scatter)
{
    const c1_case cases[] = {
        { 2, 5, 3, 3, 2, 2, 1, -1, true }, { 2, 5, 3, 3, 2, 2, 1, -1, false },
        { 1, 4, 2, 2, 3, 3, 2, -1, false }, { 1, 4, 2, 3, 1, 2, 1, 7, true },
        { 1, 3, 1, 2, 2, 2, 1, 7, false },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const c1_case *k = &cases[i];
        int64_t xd[3] = { k->b, k->w, k->c }, fd[3] = { k->kw, k->o, k->c };
        double *x = draw(test_numel(3, xd), 40 + i), *f = draw(test_numel(3, fd), 50 + i);
        weft_tensor *args[2] = { test_tensor(WEFT_F64, 3, xd, x), test_tensor(WEFT_F64, 3, fd, f) };
        weft_tensor *outs[2];
        op_results_everywhere(c1_body, (void *)k, args, 2, outs, 2, "conv1d_transpose");
        /* The scatter, as conv3d_transpose's with depth and height of one. */
        ct_case k3 = { k->b, 1, 1, k->w, k->c, 1, 1, k->kw, k->o, { 1, 1, k->stride },
                       { 1, 1, k->dil }, { 0 }, k->same };
        if (k->out >= 0) {
            k3.out[0] = k3.out[1] = 1;
            k3.out[2] = k->out;
        }
        int64_t out[3];
        double *want = scatter(&k3, x, f, out);
        int64_t yd[3] = { k->b, out[2], k->o };
        test_assert_shape(outs[0], WEFT_F64, 3, yd, "conv1d_transpose");
        for (int64_t e = 0; e < test_numel(3, yd); e++)
            cr_assert(fabs(test_element(outs[0], e) - want[e]) <= 1e-12 * (1 + fabs(want[e])),
                      "case %zu element %lld", i, (long long)e);
        cr_assert(op_same_bits(outs[0], outs[1]), "case %zu differs from conv2d_transpose_ex", i);
        for (int t = 0; t < 2; t++) {
            weft_tensor_release(outs[t]);
            weft_tensor_release(args[t]);
        }
        free(want);
        free(x);
        free(f);
    }
}

static int c1_bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    outs[0] = *(const int *)user == 0
                  ? weft_conv1d_transpose(cx, a[0], a[1], 9, 2, WEFT_PADDING_SAME, 1)
                  : weft_conv1d_transpose(cx, a[0], a[2], -1, 1, WEFT_PADDING_SAME, 1);
    return weft_ctx_status(cx);
}

Test(ops_conv_transpose, conv1d_refused_calls_name_the_op)
{
    const double v[32] = { 0 };
    weft_tensor *args[3] = { test_tensor(WEFT_F64, 3, (const int64_t[]){ 1, 3, 2 }, v),
                             test_tensor(WEFT_F64, 3, (const int64_t[]){ 2, 3, 2 }, v),
                             test_tensor(WEFT_F64, 3, (const int64_t[]){ 2, 3, 4 }, v) };
    const op_error_case cases[] = {
        { 0, WEFT_ESHAPE, "weft_conv1d_transpose: an output width of 9 does not give the input's "
                          "3 under conv1d" },
        { 1, WEFT_ESHAPE, "weft_conv1d_transpose: the filters f64[2,3,4] do not take the 2 "
                          "channels of the input f64[1,3,2] (filters: width, out, in)" },
    };
    op_expect_errors(rts[1], c1_bad_body, cases, 2, args, 3);
    for (int k = 0; k < 3; k++)
        weft_tensor_release(args[k]);
}
