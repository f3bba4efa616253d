/* weft_unstack, weft_meshgrid, weft_crelu and weft_separable_conv2d
 * against element-by-element references (their TensorFlow definitions
 * written out), eagerly and traced on 1, 2 and 4 workers (the same bits
 * everywhere); and their errors. */
#include <math.h>
#include <stdlib.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_unstack, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

static double seq(int64_t i)
{
    return (double)(i * 5 % 23) - 11;
}

static weft_tensor *seq_tensor(weft_dtype dt, int rank, const int64_t *dims)
{
    int64_t n = test_numel(rank, dims);
    double *v = malloc(sizeof *v * (size_t)(n ? n : 1));
    cr_assert_not_null(v);
    for (int64_t i = 0; i < n; i++)
        v[i] = seq(i);
    weft_tensor *t = test_tensor(dt, rank, dims, v);
    free(v);
    return t;
}

/* ---- unstack ----------------------------------------------------------- */

typedef struct unstack_case {
    int axis;
    size_t num;
} unstack_case;

static int unstack_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const unstack_case *c = user;
    return weft_unstack(cx, a[0], c->axis, c->num, outs);
}

Test(ops_unstack, unstack_slices_along_the_axis)
{
    const int64_t dims[3] = { 3, 4, 2 };
    const unstack_case cases[] = { { 0, 3 }, { 1, 4 }, { -1, 2 }, { 2, 2 }, { -3, 3 } };
    for (size_t q = 0; q < sizeof cases / sizeof cases[0]; q++) {
        weft_dtype dt = q % 2 ? WEFT_F32 : WEFT_I32;
        weft_tensor *x = seq_tensor(dt, 3, dims), *y[4];
        op_results_everywhere(unstack_body, (void *)&cases[q], &x, 1, y, cases[q].num, "unstack");
        int ax = cases[q].axis < 0 ? cases[q].axis + 3 : cases[q].axis;
        int64_t rest[2];
        for (int d = 0, r = 0; d < 3; d++)
            if (d != ax)
                rest[r++] = dims[d];
        for (size_t k = 0; k < cases[q].num; k++) {
            test_assert_shape(y[k], dt, 2, rest, "unstack");
            for (int64_t i = 0; i < rest[0]; i++)
                for (int64_t j = 0; j < rest[1]; j++) {
                    int64_t idx[3], at[2] = { i, j };
                    for (int d = 0, r = 0; d < 3; d++)
                        idx[d] = d == ax ? (int64_t)k : at[r++];
                    double want = seq((idx[0] * 4 + idx[1]) * 2 + idx[2]);
                    cr_assert_eq(test_element(y[k], i * rest[1] + j), want,
                                 "axis %d part %zu (%lld, %lld)", ax, k, (long long)i,
                                 (long long)j);
                }
            weft_tensor_release(y[k]);
        }
        weft_tensor_release(x);
    }
}

/* ---- meshgrid ---------------------------------------------------------- */

typedef struct grid_case {
    size_t n;
    weft_meshgrid_indexing indexing;
} grid_case;

static int grid_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const grid_case *c = user;
    return weft_meshgrid(cx, a, c->n, c->indexing, outs);
}

Test(ops_unstack, meshgrid_repeats_each_input_along_its_dim)
{
    /* Inputs of 3, 4 (a [2,2], flattened) and 2 elements: xs[k][i] =
     * 10 k + i. */
    const int64_t lens[3] = { 3, 4, 2 };
    weft_tensor *xs[3];
    for (int k = 0; k < 3; k++) {
        double v[4];
        for (int i = 0; i < lens[k]; i++)
            v[i] = 10 * k + i;
        xs[k] = k == 1 ? test_tensor(WEFT_F64, 2, (int64_t[]){ 2, 2 }, v)
                       : test_tensor(WEFT_F64, 1, &lens[k], v);
    }
    for (size_t n = 1; n <= 3; n++)
        for (int ij = 0; ij < 2; ij++) {
            grid_case c = { n, ij ? WEFT_MESHGRID_IJ : WEFT_MESHGRID_XY };
            weft_tensor *y[3];
            op_results_everywhere(grid_body, &c, xs, n, y, n, "meshgrid");
            /* The grid's dims: ij keeps the inputs' order, xy swaps the
             * first two (for two inputs or more). */
            bool swap = !ij && n > 1;
            int64_t shape[3];
            for (size_t d = 0; d < n; d++)
                shape[d] = lens[swap && d < 2 ? 1 - d : d];
            for (size_t k = 0; k < n; k++) {
                test_assert_shape(y[k], WEFT_F64, (int)n, shape, "meshgrid");
                size_t along = swap && k < 2 ? 1 - k : k;
                int64_t total = test_numel((int)n, shape);
                for (int64_t e = 0; e < total; e++) {
                    int64_t rem = e, idx[3];
                    for (int d = (int)n - 1; d >= 0; d--) {
                        idx[d] = rem % shape[d];
                        rem /= shape[d];
                    }
                    cr_assert_eq(test_element(y[k], e), 10.0 * (double)k + (double)idx[along],
                                 "n %zu %s output %zu element %lld", n, ij ? "ij" : "xy", k,
                                 (long long)e);
                }
                weft_tensor_release(y[k]);
            }
        }
    for (int k = 0; k < 3; k++)
        weft_tensor_release(xs[k]);
}

/* ---- crelu ------------------------------------------------------------- */

static int crelu_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    outs[0] = weft_crelu(cx, a[0], *(const int *)user);
    return weft_ctx_status(cx);
}

Test(ops_unstack, crelu_joins_both_halves)
{
    const int64_t dims[2] = { 3, 5 };
    const int axes[3] = { -1, 0, 1 };
    for (int q = 0; q < 3; q++) {
        weft_dtype dt = q == 1 ? WEFT_I64 : WEFT_F32;
        weft_tensor *x = seq_tensor(dt, 2, dims), *y;
        op_results_everywhere(crelu_body, (void *)&axes[q], &x, 1, &y, 1, "crelu");
        int ax = axes[q] < 0 ? 1 : axes[q];
        int64_t od[2] = { dims[0] * (ax == 0 ? 2 : 1), dims[1] * (ax == 1 ? 2 : 1) };
        test_assert_shape(y, dt, 2, od, "crelu");
        for (int64_t i = 0; i < od[0]; i++)
            for (int64_t j = 0; j < od[1]; j++) {
                int64_t si = ax == 0 ? i % dims[0] : i, sj = ax == 1 ? j % dims[1] : j;
                bool negated = (ax == 0 ? i : j) >= dims[ax];
                double v = seq(si * dims[1] + sj) * (negated ? -1 : 1);
                cr_assert_eq(test_element(y, i * od[1] + j), v > 0 ? v : 0,
                             "axis %d (%lld, %lld)", ax, (long long)i, (long long)j);
            }
        weft_tensor_release(y);
        weft_tensor_release(x);
    }
}

/* ---- separable_conv2d -------------------------------------------------- */

typedef struct sep_case {
    int64_t stride, dilation;
    weft_padding padding;
} sep_case;

static int sep_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const sep_case *c = user;
    int64_t s[2] = { c->stride, c->stride }, d[2] = { c->dilation, c->dilation };
    outs[0] = weft_separable_conv2d(cx, a[0], a[1], a[2], s, c->padding, d);
    return weft_ctx_status(cx);
}

static uint64_t rng = 0x3c6ef372fe94f82bULL;

Test(ops_unstack, separable_conv2d_is_depthwise_then_pointwise)
{
    enum { B = 2, H = 7, W = 6, C = 3, M = 2, KH = 3, KW = 2, O = 4 };
    double x[B * H * W * C], dw[KH * KW * C * M], pw[C * M * O];
    for (size_t i = 0; i < sizeof x / sizeof x[0]; i++)
        x[i] = op_uniform(&rng);
    for (size_t i = 0; i < sizeof dw / sizeof dw[0]; i++)
        dw[i] = op_uniform(&rng);
    for (size_t i = 0; i < sizeof pw / sizeof pw[0]; i++)
        pw[i] = op_uniform(&rng);
    weft_tensor *in[3] = { test_tensor(WEFT_F64, 4, (int64_t[]){ B, H, W, C }, x),
                           test_tensor(WEFT_F64, 4, (int64_t[]){ KH, KW, C, M }, dw),
                           test_tensor(WEFT_F64, 4, (int64_t[]){ 1, 1, C * M, O }, pw) };
    const sep_case cases[] = { { 1, 1, WEFT_PADDING_SAME }, { 2, 1, WEFT_PADDING_VALID },
                               { 1, 2, WEFT_PADDING_SAME }, { 2, 1, WEFT_PADDING_SAME } };
    for (size_t q = 0; q < sizeof cases / sizeof cases[0]; q++) {
        const sep_case *c = &cases[q];
        int64_t s = c->stride, d = c->dilation, eh = (KH - 1) * d + 1, ew = (KW - 1) * d + 1;
        int64_t oh, ow, top = 0, left = 0;
        if (c->padding == WEFT_PADDING_SAME) {
            oh = (H + s - 1) / s, ow = (W + s - 1) / s;
            int64_t ph = (oh - 1) * s + eh - H, pw_ = (ow - 1) * s + ew - W;
            top = ph > 0 ? ph / 2 : 0;
            left = pw_ > 0 ? pw_ / 2 : 0;
        } else {
            oh = (H - eh) / s + 1, ow = (W - ew) / s + 1;
        }
        weft_tensor *y;
        op_results_everywhere(sep_body, (void *)c, in, 3, &y, 1, "separable_conv2d");
        test_assert_shape(y, WEFT_F64, 4, (int64_t[]){ B, oh, ow, O }, "separable_conv2d");
        for (int64_t b = 0; b < B; b++)
            for (int64_t oy = 0; oy < oh; oy++)
                for (int64_t ox = 0; ox < ow; ox++) {
                    double mid[C * M];
                    for (int64_t ch = 0; ch < C; ch++)
                        for (int64_t m = 0; m < M; m++) {
                            double sum = 0;
                            for (int64_t ky = 0; ky < KH; ky++)
                                for (int64_t kx = 0; kx < KW; kx++) {
                                    int64_t iy = oy * s + ky * d - top, ix = ox * s + kx * d - left;
                                    if (iy >= 0 && iy < H && ix >= 0 && ix < W)
                                        sum += x[((b * H + iy) * W + ix) * C + ch] *
                                               dw[((ky * KW + kx) * C + ch) * M + m];
                                }
                            mid[ch * M + m] = sum;
                        }
                    for (int64_t o = 0; o < O; o++) {
                        double want = 0;
                        for (int64_t k = 0; k < C * M; k++)
                            want += mid[k] * pw[k * O + o];
                        double got = test_element(y, ((b * oh + oy) * ow + ox) * O + o);
                        cr_assert(fabs(got - want) <= 1e-13, "case %zu (%lld,%lld,%lld,%lld): "
                                  "%.17g, want %.17g", q, (long long)b, (long long)oy,
                                  (long long)ox, (long long)o, got, want);
                    }
                }
        weft_tensor_release(y);
    }
    for (int k = 0; k < 3; k++)
        weft_tensor_release(in[k]);
}

/* ---- errors ------------------------------------------------------------ */

static int bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    weft_value *parts[4];
    int rc = 0;
    switch (*(const int *)user) {
    case 0: rc = weft_unstack(cx, a[0], 0, 3, parts); break;
    case 1: rc = weft_unstack(cx, a[0], 2, 2, parts); break;
    case 2: rc = weft_meshgrid(cx, a, 0, WEFT_MESHGRID_XY, parts); break;
    case 3: rc = weft_meshgrid(cx, (weft_value *[]){ a[0], weft_cast(cx, a[0], WEFT_I32) }, 2,
                               WEFT_MESHGRID_IJ, parts); break;
    case 4: rc = weft_meshgrid(cx, a, 1, (weft_meshgrid_indexing)7, parts); break;
    case 5: outs[0] = weft_crelu(cx, weft_cast(cx, a[0], WEFT_BOOL), -1); break;
    case 6: outs[0] = weft_crelu(cx, a[0], 2); break;
    case 7: outs[0] = weft_separable_conv2d(cx, a[1], a[1], a[2], NULL, WEFT_PADDING_SAME, NULL);
        break;
    case 8: outs[0] = weft_separable_conv2d(cx, a[1], a[1], a[1], NULL, WEFT_PADDING_SAME, NULL);
        break;
    case 9: outs[0] = weft_separable_conv2d(cx, a[1], a[1], a[2], (const int64_t[]){ 0, 1 },
                                            WEFT_PADDING_SAME, NULL);
        break;
    }
    if (rc == 0 && weft_ctx_status(cx) == 0)
        outs[0] = parts[0];
    return weft_ctx_status(cx);
}

Test(ops_unstack, errors_name_the_op)
{
    const op_error_case cases[] = {
        { 0, WEFT_ESHAPE, "weft_unstack: num 3 is not dim 0 of f64[2,3] (known while tracing)" },
        { 1, WEFT_ESHAPE, "weft_unstack: axis 2 is not an axis of f64[2,3]" },
        { 2, WEFT_EINVAL, "weft_meshgrid: 0 inputs (1..8)" },
        { 3, WEFT_EDTYPE, "weft_meshgrid: xs[1] i32[2,3] and xs[0] f64[2,3] differ in dtype" },
        { 4, WEFT_EINVAL, "weft_meshgrid: indexing 7 is not WEFT_MESHGRID_XY or _IJ" },
        { 5, WEFT_EDTYPE, "weft_crelu: features is bool[2,3], not a number" },
        { 6, WEFT_ESHAPE, "weft_crelu: axis 2 is not an axis of features f64[2,3]" },
        { 7, WEFT_ESHAPE, "weft_separable_conv2d: the input f64[1,1,2,2], depthwise filter "
                          "f64[1,1,2,2] and pointwise filter f64[1,1,3,1] are not" },
        { 8, WEFT_ESHAPE, "weft_separable_conv2d: the input f64[1,1,2,2], depthwise filter "
                          "f64[1,1,2,2] and pointwise filter f64[1,1,2,2] are not" },
        { 9, WEFT_EINVAL, "weft_separable_conv2d: strides[0] is 0, not within 1.." },
    };
    double v[6] = { 1, 2, 3, 4, 5, 6 };
    weft_tensor *args[3] = { test_tensor(WEFT_F64, 2, (int64_t[]){ 2, 3 }, v),
                             test_tensor(WEFT_F64, 4, (int64_t[]){ 1, 1, 2, 2 }, v),
                             test_tensor(WEFT_F64, 4, (int64_t[]){ 1, 1, 3, 1 }, v) };
    op_expect_errors(rt, bad_body, cases, sizeof cases / sizeof cases[0], args, 3);
    for (int k = 0; k < 3; k++)
        weft_tensor_release(args[k]);
}
