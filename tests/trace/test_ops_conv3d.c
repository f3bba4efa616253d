/* conv3d, max_pool3d and avg_pool3d against direct 3-D loops written here
 * from TensorFlow's definitions (padding placed as TensorFlow places it,
 * padded elements zeros for conv3d and outside every window for the
 * pools), with strides, dilations, VALID and SAME, the same bits eagerly
 * and traced on 1, 2 and 4 workers, a batch unknown while tracing, and
 * the refused calls. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_conv3d, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 120);

typedef struct c3_case {
    int op;   /* 0 conv3d, 1 max_pool3d, 2 avg_pool3d */
    int64_t b, d, h, w, c, kd, kh, kw, o;
    int64_t st[3], dil[3];
    weft_padding pad;
} c3_case;

static int c3_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const c3_case *k = user;
    const int64_t ks[3] = { k->kd, k->kh, k->kw };
    switch (k->op) {
    case 0: outs[0] = weft_conv3d(cx, a[0], a[1], k->st, k->pad, k->dil); break;
    case 1: outs[0] = weft_max_pool3d(cx, a[0], ks, k->st, k->pad); break;
    default: outs[0] = weft_avg_pool3d(cx, a[0], ks, k->st, k->pad); break;
    }
    return weft_ctx_status(cx);
}

/* TensorFlow's output size and padding before along one dim. */
static int64_t place(bool same, int64_t in, int64_t k, int64_t s, int64_t dil, int64_t *before)
{
    int64_t span = (k - 1) * dil + 1;
    if (!same) {
        *before = 0;
        return (in - span) / s + 1;
    }
    int64_t out = (in + s - 1) / s, total = (out - 1) * s + span - in;
    *before = total > 0 ? total / 2 : 0;
    return out;
}

static double *draw(int64_t n, uint64_t seed)
{
    double *v = malloc(sizeof *v * (size_t)n);
    cr_assert_not_null(v);
    for (int64_t i = 0; i < n; i++)
        v[i] = op_uniform(&seed);
    return v;
}

/* The direct loop: y[b, od, oy, ox, q]. */
static double *reference(const c3_case *k, const double *x, const double *f, int64_t out[3])
{
    const bool same = k->pad == WEFT_PADDING_SAME;
    const int64_t in[3] = { k->d, k->h, k->w }, win[3] = { k->kd, k->kh, k->kw };
    int64_t before[3];
    for (int i = 0; i < 3; i++)
        out[i] = place(same, in[i], win[i], k->st[i], k->op == 0 ? k->dil[i] : 1, &before[i]);
    int64_t oc = k->op == 0 ? k->o : k->c;
    int64_t n = k->b * out[0] * out[1] * out[2] * oc;
    double *y = malloc(sizeof *y * (size_t)(n ? n : 1));
    cr_assert_not_null(y);
    for (int64_t b = 0; b < k->b; b++)
        for (int64_t p0 = 0; p0 < out[0]; p0++)
            for (int64_t p1 = 0; p1 < out[1]; p1++)
                for (int64_t p2 = 0; p2 < out[2]; p2++)
                    for (int64_t q = 0; q < oc; q++) {
                        double acc = k->op == 1 ? -INFINITY : 0;
                        int64_t count = 0;
                        for (int64_t t0 = 0; t0 < win[0]; t0++)
                            for (int64_t t1 = 0; t1 < win[1]; t1++)
                                for (int64_t t2 = 0; t2 < win[2]; t2++) {
                                    int64_t dl = k->op == 0 ? k->dil[0] : 1;
                                    int64_t hl = k->op == 0 ? k->dil[1] : 1;
                                    int64_t wl = k->op == 0 ? k->dil[2] : 1;
                                    int64_t i0 = p0 * k->st[0] - before[0] + t0 * dl;
                                    int64_t i1 = p1 * k->st[1] - before[1] + t1 * hl;
                                    int64_t i2 = p2 * k->st[2] - before[2] + t2 * wl;
                                    if (i0 < 0 || i0 >= k->d || i1 < 0 || i1 >= k->h || i2 < 0 ||
                                        i2 >= k->w)
                                        continue;
                                    int64_t px = (((b * k->d + i0) * k->h + i1) * k->w + i2) * k->c;
                                    count++;
                                    if (k->op == 0) {
                                        for (int64_t ci = 0; ci < k->c; ci++)
                                            acc += x[px + ci] *
                                                   f[(((t0 * k->kh + t1) * k->kw + t2) * k->c + ci) *
                                                         k->o + q];
                                    } else if (k->op == 1) {
                                        acc = fmax(acc, x[px + q]);
                                    } else {
                                        acc += x[px + q];
                                    }
                                }
                        y[(((b * out[0] + p0) * out[1] + p1) * out[2] + p2) * oc + q] =
                            k->op == 2 ? acc / (double)count : acc;
                    }
    return y;
}

static void check_case(const c3_case *k, uint64_t seed)
{
    int64_t nx = k->b * k->d * k->h * k->w * k->c, nf = k->kd * k->kh * k->kw * k->c * k->o;
    double *x = draw(nx, seed), *f = draw(nf ? nf : 1, seed + 1);
    weft_tensor *args[2] = { NULL, NULL };
    cr_assert_eq(weft_tensor_create(WEFT_F64, 5, (const int64_t[]){ k->b, k->d, k->h, k->w, k->c },
                                    x, &args[0]), 0);
    cr_assert_eq(weft_tensor_create(WEFT_F64, 5,
                                    (const int64_t[]){ k->kd, k->kh, k->kw, k->c, k->o }, f,
                                    &args[1]), 0);
    int64_t out[3];
    double *want = reference(k, x, f, out);
    weft_tensor *y;
    op_results_everywhere(c3_body, (void *)k, args, k->op == 0 ? 2 : 1, &y, 1, "conv3d case");
    int64_t oc = k->op == 0 ? k->o : k->c;
    const int64_t dims[5] = { k->b, out[0], out[1], out[2], oc };
    cr_assert_eq(weft_tensor_rank(y), 5);
    for (int d = 0; d < 5; d++)
        cr_assert_eq(weft_tensor_dims(y)[d], dims[d], "op %d dim %d: %lld, expected %lld", k->op,
                     d, (long long)weft_tensor_dims(y)[d], (long long)dims[d]);
    const double *got = weft_tensor_data(y);
    for (int64_t i = 0; i < weft_tensor_numel(y); i++)
        cr_assert(fabs(got[i] - want[i]) <= 1e-13 * fmax(1, fabs(want[i])),
                  "op %d element %lld: %.17g, expected %.17g", k->op, (long long)i, got[i],
                  want[i]);
    weft_tensor_release(y);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
    free(want);
    free(x);
    free(f);
}

Test(ops_conv3d, conv3d_against_the_direct_loop)
{
    const c3_case cases[] = {
        { 0, 2, 5, 6, 7, 3, 3, 3, 3, 4, { 1, 1, 1 }, { 1, 1, 1 }, WEFT_PADDING_SAME },
        { 0, 1, 7, 5, 6, 2, 2, 3, 2, 3, { 2, 1, 2 }, { 1, 1, 1 }, WEFT_PADDING_VALID },
        { 0, 2, 8, 6, 6, 2, 3, 2, 2, 2, { 1, 2, 1 }, { 2, 1, 2 }, WEFT_PADDING_SAME },
        { 0, 1, 4, 4, 4, 1, 1, 1, 1, 5, { 3, 3, 3 }, { 1, 1, 1 }, WEFT_PADDING_VALID },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_case(&cases[i], 100 + i);
}

Test(ops_conv3d, pools_against_the_direct_loop)
{
    const c3_case cases[] = {
        { 1, 2, 5, 6, 7, 3, 3, 3, 2, 0, { 2, 2, 2 }, { 1, 1, 1 }, WEFT_PADDING_SAME },
        { 2, 2, 5, 6, 7, 3, 3, 3, 2, 0, { 2, 2, 2 }, { 1, 1, 1 }, WEFT_PADDING_SAME },
        { 1, 1, 6, 5, 4, 2, 2, 2, 3, 0, { 1, 2, 1 }, { 1, 1, 1 }, WEFT_PADDING_VALID },
        { 2, 1, 7, 4, 5, 2, 3, 2, 2, 0, { 2, 1, 3 }, { 1, 1, 1 }, WEFT_PADDING_SAME },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_case(&cases[i], 200 + i);
}

/* One trace serves batches of 1 and 3 (the batch unknown while tracing). */
Test(ops_conv3d, batch_unknown_while_tracing)
{
    c3_case k = { 0, 0, 4, 4, 4, 2, 3, 3, 3, 2, { 1, 1, 1 }, { 1, 1, 1 }, WEFT_PADDING_SAME };
    weft_spec sig[2] = { { .dtype = WEFT_F64, .rank = 5, .dims = { WEFT_DIM_ANY, 4, 4, 4, 2 } },
                         { .dtype = WEFT_F64, .rank = 5, .dims = { 3, 3, 3, 2, 2 } } };
    weft_function *fn = op_signature_function(rts[1], c3_body, &k, sig, 2);
    double *f = draw(3 * 3 * 3 * 2 * 2, 7);
    weft_tensor *ft = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_F64, 5, (const int64_t[]){ 3, 3, 3, 2, 2 }, f, &ft), 0);
    for (int64_t b = 1; b <= 3; b += 2) {
        k.b = b;
        double *x = draw(b * 4 * 4 * 4 * 2, 8);
        weft_tensor *xt = NULL;
        cr_assert_eq(weft_tensor_create(WEFT_F64, 5, (const int64_t[]){ b, 4, 4, 4, 2 }, x, &xt),
                     0);
        weft_arg a[2] = { weft_arg_tensor(xt), weft_arg_tensor(ft) };
        weft_tensor *y = NULL;
        cr_assert_eq(weft_function_call(fn, a, 2, &y, 1), 0, "%s", weft_errmsg());
        int64_t out[3];
        double *want = reference(&k, x, f, out);
        cr_assert_eq(weft_tensor_dims(y)[0], b);
        for (int64_t i = 0; i < weft_tensor_numel(y); i++)
            cr_assert(fabs(((const double *)weft_tensor_data(y))[i] - want[i]) < 1e-13);
        free(want);
        free(x);
        weft_tensor_release(y);
        weft_tensor_release(xt);
    }
    op_destroy_traced_once(&fn);
    weft_tensor_release(ft);
    free(f);
}

typedef enum bad_call { RANK4, CHANNELS, VALID_DEPTH, VALID_WIDTH, BAD_STRIDE, BAD_PADDING,
                        POOL_KSIZE } bad_call;

/* args: input f64 [1, 2, 4, 4, 3], filters f64 [3, 3, 3, 3, 2]. */
static int bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    weft_value *x = a[0], *f = a[1];
    const int64_t zero[3] = { 1, 0, 1 }, big[3] = { 1, 1, 9 };
    switch ((bad_call) * (const int *)user) {
    case RANK4:
        outs[0] = weft_conv3d(cx, weft_squeeze(cx, x, 0), f, NULL, WEFT_PADDING_SAME, NULL);
        break;
    case CHANNELS:
        outs[0] = weft_conv3d(cx, x, weft_transpose(cx, f, (const int[]){ 0, 1, 2, 4, 3 }), NULL, WEFT_PADDING_SAME, NULL);
        break;
    case VALID_DEPTH: outs[0] = weft_conv3d(cx, x, f, NULL, WEFT_PADDING_VALID, NULL); break;
    case VALID_WIDTH: outs[0] = weft_max_pool3d(cx, x, big, NULL, WEFT_PADDING_VALID); break;
    case BAD_STRIDE: outs[0] = weft_conv3d(cx, x, f, zero, WEFT_PADDING_SAME, NULL); break;
    case BAD_PADDING: outs[0] = weft_avg_pool3d(cx, x, big, NULL, (weft_padding)7); break;
    case POOL_KSIZE: outs[0] = weft_avg_pool3d(cx, x, zero, NULL, WEFT_PADDING_SAME); break;
    }
    return weft_ctx_status(cx);
}

Test(ops_conv3d, refused_calls_name_the_op)
{
    double *x = draw(1 * 2 * 4 * 4 * 3, 1), *f = draw(3 * 3 * 3 * 3 * 2, 2);
    weft_tensor *args[2] = { NULL, NULL };
    cr_assert_eq(weft_tensor_create(WEFT_F64, 5, (const int64_t[]){ 1, 2, 4, 4, 3 }, x, &args[0]),
                 0);
    cr_assert_eq(weft_tensor_create(WEFT_F64, 5, (const int64_t[]){ 3, 3, 3, 3, 2 }, f, &args[1]),
                 0);
    const op_error_case cases[] = {
        { RANK4, WEFT_ESHAPE, "weft_conv3d: the input f64[2,4,4,3] is not [batch, depth" },
        { CHANNELS, WEFT_ESHAPE, "weft_conv3d: the filters f64[3,3,3,2,3] are not [depth" },
        { VALID_DEPTH, WEFT_ESHAPE, "weft_conv3d: the depth 2 is smaller than the window's span 3" },
        { VALID_WIDTH, WEFT_ESHAPE, "weft_max_pool3d: the width 4 is smaller than the window's span 9" },
        { BAD_STRIDE, WEFT_EINVAL, "weft_conv3d: strides[1] is 0, not within 1.." },
        { BAD_PADDING, WEFT_EINVAL, "weft_avg_pool3d: padding 7 is not WEFT_PADDING_VALID" },
        { POOL_KSIZE, WEFT_EINVAL, "weft_avg_pool3d: ksize[1] is 0" },
    };
    op_expect_errors(rts[1], bad_body, cases, sizeof cases / sizeof *cases, args, 2);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
    free(x);
    free(f);
}
