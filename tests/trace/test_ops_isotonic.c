/* weft_isotonic_regression: TensorFlow's documented example, equal means
 * left apart (TensorFlow merges on a strict violation only), the
 * increasing fit, another axis, integers as f64, and random lines checked
 * for what makes the fit optimal (each pool the mean of its elements,
 * means non-increasing, no prefix of a pool above its mean) and against
 * a reference loop; eagerly and traced on 1, 2 and 4 workers (the same
 * bits everywhere); one trace for any size; the refused calls. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_isotonic, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

typedef struct iso_case {
    bool decreasing;
    int axis;
} iso_case;

static int iso_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const iso_case *c = user;
    return weft_isotonic_regression(cx, a[0], c->decreasing, c->axis, outs);
}

static weft_tensor *f32_tensor(int rank, const int64_t *dims, const float *v)
{
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_F32, rank, dims, v, &t), 0, "%s", weft_errmsg());
    return t;
}

/* tf.nn.isotonic_regression's docstring: [[3, 1, 2], [1, 3, 4]], axis 1. */
Test(ops_isotonic, tensorflows_example)
{
    const float x[6] = { 3, 1, 2, 1, 3, 4 };
    weft_tensor *t = f32_tensor(2, (const int64_t[]){ 2, 3 }, x), *out[2];
    iso_case c = { true, 1 };
    op_results_everywhere(iso_body, &c, &t, 1, out, 2, "docstring");
    test_assert_shape(out[0], WEFT_F32, 2, (const int64_t[]){ 2, 3 }, "fit");
    test_assert_shape(out[1], WEFT_I32, 2, (const int64_t[]){ 2, 3 }, "segments");
    const float want[6] = { 3, 1.5f, 1.5f, 8.0f / 3.0f, 8.0f / 3.0f, 8.0f / 3.0f };
    const int32_t want_seg[6] = { 0, 1, 1, 0, 0, 0 };
    cr_expect(memcmp(weft_tensor_data(out[0]), want, sizeof want) == 0, "fit %g %g %g %g",
              test_element(out[0], 0), test_element(out[0], 1), test_element(out[0], 3),
              test_element(out[0], 5));
    cr_expect(memcmp(weft_tensor_data(out[1]), want_seg, sizeof want_seg) == 0);
    for (int k = 0; k < 2; k++)
        weft_tensor_release(out[k]);
    weft_tensor_release(t);
}

/* Equal neighbours stay apart; the increasing fit of [1, 3, 2]; axis 0. */
Test(ops_isotonic, ties_increasing_and_axis)
{
    const float x[6] = { 5, 2, 2, 1, 3, 2 };
    weft_tensor *t = f32_tensor(2, (const int64_t[]){ 2, 3 }, x), *out[2];
    iso_case c = { true, -1 };
    op_results_everywhere(iso_body, &c, &t, 1, out, 2, "ties");
    const int32_t seg[3] = { 0, 1, 2 };
    cr_expect(memcmp(weft_tensor_data(out[1]), seg, sizeof seg) == 0, "5, 2, 2: three pools, "
              "got segments %g %g %g", test_element(out[1], 0), test_element(out[1], 1),
              test_element(out[1], 2));
    for (int k = 0; k < 2; k++)
        weft_tensor_release(out[k]);

    /* Increasing: [1, 3, 2] -> [1, 2.5, 2.5]. */
    c = (iso_case){ false, 1 };
    op_results_everywhere(iso_body, &c, &t, 1, out, 2, "increasing");
    const float inc[3] = { 1, 2.5f, 2.5f };
    cr_expect(memcmp((const float *)weft_tensor_data(out[0]) + 3, inc, sizeof inc) == 0);
    for (int k = 0; k < 2; k++)
        weft_tensor_release(out[k]);

    /* Axis 0: the columns [5, 1], [2, 3] (merged) and [2, 2] (apart). */
    c = (iso_case){ true, 0 };
    op_results_everywhere(iso_body, &c, &t, 1, out, 2, "axis 0");
    const float col[6] = { 5, 2.5f, 2, 1, 2.5f, 2 };
    const int32_t col_seg[6] = { 0, 0, 0, 1, 0, 1 };
    cr_expect(memcmp(weft_tensor_data(out[0]), col, sizeof col) == 0);
    cr_expect(memcmp(weft_tensor_data(out[1]), col_seg, sizeof col_seg) == 0);
    for (int k = 0; k < 2; k++)
        weft_tensor_release(out[k]);
    weft_tensor_release(t);
}

/* Integers fit as f64, as TensorFlow's. */
Test(ops_isotonic, integers_fit_as_f64)
{
    const int32_t x[4] = { 1, 4, 2, 0 };
    weft_tensor *t = NULL, *out[2];
    cr_assert_eq(weft_tensor_create(WEFT_I32, 1, (const int64_t[]){ 4 }, x, &t), 0);
    iso_case c = { true, 0 };
    op_results_everywhere(iso_body, &c, &t, 1, out, 2, "integers");
    test_assert_shape(out[0], WEFT_F64, 1, (const int64_t[]){ 4 }, "fit");
    const double want[4] = { 2.5, 2.5, 2, 0 };
    cr_expect(memcmp(weft_tensor_data(out[0]), want, sizeof want) == 0);
    for (int k = 0; k < 2; k++)
        weft_tensor_release(out[k]);
    weft_tensor_release(t);
}

/* The decreasing fit in double, pools merged as TensorFlow merges them. */
static void reference(const double *x, int n, double *y)
{
    int *start = malloc(sizeof *start * (size_t)n);
    double *sum = malloc(sizeof *sum * (size_t)n);
    cr_assert(start && sum);
    int pools = 0;
    for (int k = 0; k < n; k++) {
        start[pools] = k;
        sum[pools++] = x[k];
        while (pools > 1 && sum[pools - 1] / (k + 1 - start[pools - 1]) >
                                sum[pools - 2] / (start[pools - 1] - start[pools - 2])) {
            sum[pools - 2] += sum[pools - 1];
            pools--;
        }
    }
    for (int p = 0; p < pools; p++)
        for (int k = start[p]; k < (p + 1 < pools ? start[p + 1] : n); k++)
            y[k] = sum[p] / ((p + 1 < pools ? start[p + 1] : n) - start[p]);
    free(start);
    free(sum);
}

/* Random lines (f64, [5, 200], along axis 1): the fit's optimality
 * conditions and the reference. */
Test(ops_isotonic, random_lines_are_optimal)
{
    enum { R = 5, N = 200 };
    double x[R * N];
    uint64_t st = 0x3c6ef372fe94f82bu;
    for (int i = 0; i < R * N; i++)
        x[i] = (i % N) * -0.01 + op_uniform(&st);   /* a downward trend with noise */
    weft_tensor *t = NULL, *out[2];
    cr_assert_eq(weft_tensor_create(WEFT_F64, 2, (const int64_t[]){ R, N }, x, &t), 0);
    iso_case c = { true, 1 };
    op_results_everywhere(iso_body, &c, &t, 1, out, 2, "random");
    const double *y = weft_tensor_data(out[0]);
    const int32_t *seg = weft_tensor_data(out[1]);
    for (int r = 0; r < R; r++) {
        const double *xr = x + r * N, *yr = y + r * N;
        const int32_t *sr = seg + r * N;
        double ref[N];
        reference(xr, N, ref);
        cr_assert_eq(sr[0], 0);
        int pools = 1;
        for (int k = 0; k < N; k++) {
            cr_assert(fabs(yr[k] - ref[k]) <= 1e-12, "line %d element %d: %g, reference %g", r,
                      k, yr[k], ref[k]);
            if (k > 0) {
                cr_assert(sr[k] == sr[k - 1] || sr[k] == sr[k - 1] + 1, "line %d: segments "
                          "step by 0 or 1", r);
                cr_assert(yr[k] <= yr[k - 1], "line %d: the fit rises at %d", r, k);
                cr_assert(sr[k] != sr[k - 1] || yr[k] == yr[k - 1], "line %d: a pool of two "
                          "values at %d", r, k);
                pools += sr[k] != sr[k - 1];
            }
        }
        /* Each pool: the mean of its elements, and no prefix above it. */
        for (int s = 0, k = 0; s < pools; s++) {
            int b = k;
            double sum = 0, prefix = 0;
            while (k < N && sr[k] == s)
                sum += xr[k++];
            double mean = sum / (k - b);
            cr_assert(fabs(yr[b] - mean) <= 1e-12, "line %d pool %d: %g, mean %g", r, s,
                      yr[b], mean);
            for (int q = b; q < k - 1; q++) {
                prefix += xr[q];
                cr_assert(prefix / (q + 1 - b) <= mean + 1e-12, "line %d pool %d: its first "
                          "%d elements' mean is above the pool's", r, s, q + 1 - b);
            }
        }
        cr_expect_gt(pools, 5, "line %d: too few pools to say much", r);
    }
    for (int k = 0; k < 2; k++)
        weft_tensor_release(out[k]);
    weft_tensor_release(t);
}

/* One trace for any line length and batch. */
Test(ops_isotonic, one_trace_for_any_size)
{
    weft_spec sig = { .dtype = WEFT_F32, .rank = 2, .dims = { WEFT_DIM_ANY, WEFT_DIM_ANY } };
    iso_case c = { true, -1 };
    weft_function_desc fd = { .name = "iso", .body = iso_body, .user = &c, .n_args = 1,
                              .n_outs = 2, .input_signature = &sig };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rts[1], &fd, &f), 0, "%s", weft_errmsg());
    for (int64_t n = 1; n <= 4; n++) {
        float x[8];
        for (int i = 0; i < 2 * n; i++)
            x[i] = (float)i;   /* rising: one pool a line */
        weft_tensor *t = f32_tensor(2, (const int64_t[]){ 2, n }, x), *out[2] = { 0 };
        weft_arg arg = weft_arg_tensor(t);
        cr_assert_eq(weft_function_call(f, &arg, 1, out, 2), 0, "%s", weft_errmsg());
        for (int64_t k = 0; k < n; k++)
            cr_expect_eq(test_element(out[0], n + k), (double)n + (double)(n - 1) / 2);
        for (int k = 0; k < 2; k++)
            weft_tensor_release(out[k]);
        weft_tensor_release(t);
    }
    cr_expect_eq(weft_function_tracing_count(f), 1);
    weft_function_destroy(&f);
}

typedef enum iso_bad { BOOL_INPUT, SCALAR, AXIS, OUTS_NULL } iso_bad;

/* args: bool [2], f32 [], f32 [2, 2]. */
static int bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    weft_value *res[2];
    iso_bad which = *(const int *)user;
    weft_value *x = which == BOOL_INPUT ? a[0] : which == SCALAR ? a[1] : a[2];
    int rc = weft_isotonic_regression(cx, x, true, which == AXIS ? 2 : -1,
                                      which == OUTS_NULL ? NULL : res);
    outs[0] = rc == 0 ? res[0] : NULL;
    return weft_ctx_status(cx);
}

Test(ops_isotonic, refused_calls_name_the_op)
{
    const bool b[2] = { true, false };
    const float z[4] = { 0 };
    weft_tensor *args[3] = { NULL };
    cr_assert_eq(weft_tensor_create(WEFT_BOOL, 1, (const int64_t[]){ 2 }, b, &args[0]), 0);
    cr_assert_eq(weft_tensor_create(WEFT_F32, 0, NULL, z, &args[1]), 0);
    cr_assert_eq(weft_tensor_create(WEFT_F32, 2, (const int64_t[]){ 2, 2 }, z, &args[2]), 0);
    const op_error_case cases[] = {
        { BOOL_INPUT, WEFT_EDTYPE, "weft_isotonic_regression: bool[2] is not a number" },
        { SCALAR, WEFT_ESHAPE, "weft_isotonic_regression: f32[] has no axis -1" },
        { AXIS, WEFT_ESHAPE, "weft_isotonic_regression: f32[2,2] has no axis 2" },
        { OUTS_NULL, WEFT_EINVAL, "weft_isotonic_regression: outs is NULL but n_outs is 2" },
    };
    op_expect_errors(rts[1], bad_body, cases, sizeof cases / sizeof *cases, args, 3);
    for (int i = 0; i < 3; i++)
        weft_tensor_release(args[i]);
}
