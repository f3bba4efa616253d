/* weft_max_pool_with_argmax against a window-by-window reference
 * (TensorFlow's kernel written out: the first element of the window in
 * row-major order that holds the maximum), with ties, all-negative inputs
 * and maxima of 0 under SAME padding (whose zeros must never win), the
 * batch in the index
 * or not, a NaN; eagerly and traced on 1, 2 and 4 workers (the same bits
 * everywhere); and its errors. */
#include <math.h>
#include <stdlib.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_pool_argmax, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

typedef struct pa_case {
    int64_t dims[4];   /* b, h, w, c */
    int64_t k[2], st[2];
    weft_padding padding;
    bool with_batch;
    weft_dtype dt;
} pa_case;

static int pa_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const pa_case *c = user;
    return weft_max_pool_with_argmax(cx, a[0], c->k, c->st, c->padding, c->with_batch, outs);
}

/* TensorFlow's output size and padding before, one dim. */
static int64_t out_dim(const pa_case *c, int d, int64_t *before)
{
    int64_t in = c->dims[1 + d];
    if (c->padding == WEFT_PADDING_VALID) {
        *before = 0;
        return (in - c->k[d]) / c->st[d] + 1;
    }
    int64_t out = (in + c->st[d] - 1) / c->st[d];
    int64_t total = (out - 1) * c->st[d] + c->k[d] - in;
    *before = total > 0 ? total / 2 : 0;
    return out;
}

/* v as the tensor of dtype dt holds it (a C cast). */
static double as_dtype(double v, weft_dtype dt)
{
    switch (dt) {
    case WEFT_I32: return (double)(int32_t)v;
    case WEFT_I64: return (double)(int64_t)v;
    case WEFT_F32: return (double)(float)v;
    default: return v;
    }
}

static void check_case(const pa_case *c, const double *given, const char *what)
{
    int64_t numel = c->dims[0] * c->dims[1] * c->dims[2] * c->dims[3];
    double *xv = malloc(sizeof *xv * (size_t)numel);
    cr_assert_not_null(xv);
    for (int64_t i = 0; i < numel; i++)
        xv[i] = isnan(given[i]) ? given[i] : as_dtype(given[i], c->dt);
    weft_tensor *x = test_tensor(c->dt, 4, c->dims, xv), *y[2];
    op_results_everywhere(pa_body, (void *)c, &x, 1, y, 2, what);
    int64_t pt, pl, oh = out_dim(c, 0, &pt), ow = out_dim(c, 1, &pl);
    int64_t B = c->dims[0], H = c->dims[1], W = c->dims[2], C = c->dims[3];
    const int64_t odims[4] = { B, oh, ow, C };
    test_assert_shape(y[0], c->dt, 4, odims, what);
    test_assert_shape(y[1], WEFT_I64, 4, odims, what);
    const int64_t *idx = weft_tensor_data(y[1]);
    for (int64_t b = 0, o = 0; b < B; b++)
        for (int64_t oy = 0; oy < oh; oy++)
            for (int64_t ox = 0; ox < ow; ox++)
                for (int64_t ch = 0; ch < C; ch++, o++) {
                    int64_t best = -1;
                    for (int64_t ky = 0; ky < c->k[0]; ky++)
                        for (int64_t kx = 0; kx < c->k[1]; kx++) {
                            int64_t yy = oy * c->st[0] + ky - pt, xx = ox * c->st[1] + kx - pl;
                            if (yy < 0 || yy >= H || xx < 0 || xx >= W)
                                continue;
                            int64_t at = ((b * H + yy) * W + xx) * C + ch;
                            double v = xv[at];
                            if (best < 0 || (!isnan(xv[best]) && (isnan(v) || v > xv[best])))
                                best = at;
                        }
                    int64_t want = c->with_batch ? best : best - b * H * W * C;
                    cr_assert_eq(idx[o], want, "%s: output %lld: index %lld, want %lld", what,
                                 (long long)o, (long long)idx[o], (long long)want);
                    double got = test_element(y[0], o), wv = xv[best];
                    cr_assert(isnan(wv) ? isnan(got) : got == wv, "%s: output %lld: %g, want %g",
                              what, (long long)o, got, wv);
                }
    free(xv);
    weft_tensor_release(x);
    weft_tensor_release(y[0]);
    weft_tensor_release(y[1]);
}

static double *values(const pa_case *c, int kind)
{
    int64_t n = c->dims[0] * c->dims[1] * c->dims[2] * c->dims[3];
    double *v = malloc(sizeof *v * (size_t)n);
    cr_assert_not_null(v);
    for (int64_t i = 0; i < n; i++)
        v[i] = kind == 0 ? (double)((i * 37) % 101) / 7 - 6      /* distinct-ish, signs mixed */
             : kind == 1 ? (double)(i % 3) - 5                   /* ties, all negative */
             : kind == 2 ? (double)((i * 13) % 17) - 20          /* negative, few ties */
                         : -(double)((i / 3) % 4);               /* maxima of 0, as the padding */
    return v;
}

Test(ops_pool_argmax, matches_the_kernel)
{
    const pa_case cases[] = {
        { { 2, 5, 6, 3 }, { 2, 2 }, { 2, 2 }, WEFT_PADDING_VALID, false, WEFT_F64 },
        { { 2, 5, 6, 3 }, { 3, 3 }, { 2, 1 }, WEFT_PADDING_SAME, true, WEFT_F32 },
        { { 1, 4, 7, 2 }, { 3, 2 }, { 1, 3 }, WEFT_PADDING_SAME, false, WEFT_I32 },
        { { 3, 6, 4, 1 }, { 2, 3 }, { 2, 2 }, WEFT_PADDING_SAME, true, WEFT_I64 },
        { { 1, 3, 3, 1 }, { 3, 3 }, { 1, 1 }, WEFT_PADDING_VALID, true, WEFT_F64 },
    };
    for (size_t q = 0; q < sizeof cases / sizeof cases[0]; q++)
        for (int kind = 0; kind < 4; kind++) {
            double *v = values(&cases[q], kind);
            char what[48];
            snprintf(what, sizeof what, "case %zu, values %d", q, kind);
            check_case(&cases[q], v, what);
            free(v);
        }
}

/* A NaN in a window is its maximum, at the NaN's index. */
Test(ops_pool_argmax, nan_is_the_maximum)
{
    const pa_case c = { { 1, 4, 4, 1 }, { 2, 2 }, { 2, 2 }, WEFT_PADDING_VALID, false, WEFT_F64 };
    double v[16];
    for (int i = 0; i < 16; i++)
        v[i] = i;
    v[4] = NAN;    /* window (0, 0), its third element */
    v[15] = NAN;   /* window (1, 1), its last */
    check_case(&c, v, "nan");
}

static int bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    static const int64_t k2[2] = { 2, 2 }, k9[2] = { 9, 2 }, k0[2] = { 0, 2 };
    weft_value *x = a[0];
    switch (*(const int *)user) {
    case 0: return weft_max_pool_with_argmax(cx, x, NULL, k2, WEFT_PADDING_SAME, false, outs);
    case 1: return weft_max_pool_with_argmax(cx, x, k0, k2, WEFT_PADDING_SAME, false, outs);
    case 2: return weft_max_pool_with_argmax(cx, x, k2, k2, (weft_padding)7, false, outs);
    case 3: return weft_max_pool_with_argmax(cx, x, k9, k2, WEFT_PADDING_VALID, false, outs);
    case 4:
        return weft_max_pool_with_argmax(cx, weft_cast(cx, x, WEFT_BOOL), k2, k2,
                                         WEFT_PADDING_SAME, false, outs);
    case 5:
        return weft_max_pool_with_argmax(cx, weft_squeeze(cx, x, 0), k2, k2, WEFT_PADDING_SAME,
                                         false, outs);
    default: return weft_max_pool_with_argmax(cx, x, k2, k2, WEFT_PADDING_SAME, false, NULL);
    }
}

Test(ops_pool_argmax, bad_calls_are_refused)
{
    const op_error_case errs[] = {
        { 0, WEFT_EINVAL, "weft_max_pool_with_argmax: NULL ksize" },
        { 1, WEFT_EINVAL, "weft_max_pool_with_argmax: ksize" },
        { 2, WEFT_EINVAL, "weft_max_pool_with_argmax: padding 7 is not" },
        { 3, WEFT_ESHAPE, "weft_max_pool_with_argmax: the height of f32[1,4,4,2] is smaller "
                          "than the window" },
        { 4, WEFT_EDTYPE, "weft_max_pool_with_argmax: bool[1,4,4,2] is not i32, i64, f32 or f64" },
        { 5, WEFT_ESHAPE, "weft_max_pool_with_argmax: f32[4,4,2] is not NHWC data" },
        { 6, WEFT_EINVAL, "weft_max_pool_with_argmax: outs is NULL" },
    };
    double v[32] = { 0 };
    weft_tensor *x = test_tensor(WEFT_F32, 4, (int64_t[]){ 1, 4, 4, 2 }, v);
    /* op_expect_errors's calls have one output; this op has two. */
    for (size_t q = 0; q < sizeof errs / sizeof errs[0]; q++)
        for (int eager = 0; eager < 2; eager++) {
            weft_tensor *y[2];
            int rc = op_call(rts[0], bad_body, (void *)&errs[q].which, &x, 1, y, 2, eager);
            cr_assert_eq(rc, errs[q].rc, "case %d: %s", errs[q].which, weft_err_name(rc));
            cr_assert(strstr(weft_errmsg(), errs[q].says), "case %d: %s", errs[q].which,
                      weft_errmsg());
            cr_assert(!y[0] && !y[1], "case %d", errs[q].which);
        }
    weft_tensor_release(x);
}

/* The batch may be unknown while tracing unless it is part of the index. */
Test(ops_pool_argmax, unknown_batch)
{
    weft_spec sig;
    cr_assert_eq(weft_spec_parse("f64[?,4,4,1]", &sig), 0);
    for (int with_batch = 0; with_batch < 2; with_batch++) {
        pa_case c = { { 2, 4, 4, 1 }, { 2, 2 }, { 2, 2 }, WEFT_PADDING_VALID, with_batch,
                      WEFT_F64 };
        weft_function_desc d = { .name = "pa", .body = pa_body, .user = &c, .n_args = 1,
                                 .n_outs = 2, .input_signature = &sig };
        weft_function *f = NULL;
        cr_assert_eq(weft_function_create(rts[0], &d, &f), 0, "%s", weft_errmsg());
        double v[32];
        for (int i = 0; i < 32; i++)
            v[i] = (i * 7) % 32;
        weft_tensor *x = test_tensor(WEFT_F64, 4, c.dims, v), *y[2] = { NULL, NULL };
        weft_arg a = weft_arg_tensor(x);
        int rc = weft_function_call(f, &a, 1, y, 2);
        if (with_batch) {
            cr_assert_eq(rc, WEFT_ESHAPE);
            cr_assert(strstr(weft_errmsg(), "and, for include_batch_in_index, the batch"), "%s",
                      weft_errmsg());
        } else {
            cr_assert_eq(rc, 0, "%s", weft_errmsg());
            weft_tensor_release(y[0]);
            weft_tensor_release(y[1]);
            check_case(&c, v, "unknown batch, checked known");
        }
        weft_function_destroy(&f);
        weft_tensor_release(x);
    }
}
