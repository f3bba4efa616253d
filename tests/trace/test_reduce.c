/* weft_reduce through the public API: worked examples of every reduction,
 * dtypes, keepdims, empty axes, bad inputs, eagerly and traced alike, and
 * fused groups whose shapes are only known at run time. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "test_util.h"

static weft_runtime *rt;

static void setup(void) { rt = test_runtime(2); }
static void teardown(void) { weft_runtime_destroy(&rt); }

TestSuite(reduce, .init = setup, .fini = teardown, .timeout = 30);

/* One reduction as a body: r over axes[0..n_axes) (NULL when n_axes is
 * -1), keepdims. */
typedef struct red_case {
    weft_reduction r;
    int axes[4];
    int n_axes;
    bool keepdims;
} red_case;

static int reduce_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    const red_case *c = user;
    outs[0] = weft_reduce(cx, c->r, args[0], c->n_axes < 0 ? NULL : c->axes,
                          c->n_axes < 0 ? 0 : (size_t)c->n_axes, c->keepdims);
    return weft_ctx_status(cx);
}

/* Runs the case on x eagerly and traced (first call and a cached call);
 * checks both succeed, agree bit for bit, and returns the eager result. */
static weft_tensor *run_both(const red_case *c, weft_tensor *x)
{
    weft_arg a = weft_arg_tensor(x);
    weft_tensor *res[3] = { NULL };
    for (int mode = 0; mode < 2; mode++) {
        weft_function_desc d = { .name = "red", .body = reduce_body, .user = (void *)c,
                                 .n_args = 1, .n_outs = 1,
                                 .flags = mode == 0 ? WEFT_RUN_EAGERLY : 0 };
        weft_function *f = NULL;
        cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
        for (int call = 0; call < 1 + mode; call++)
            cr_assert_eq(weft_function_call(f, &a, 1, &res[mode + call], 1), 0, "%s",
                         weft_errmsg());
        weft_function_destroy(&f);
    }
    for (int k = 1; k < 3; k++) {
        cr_assert_eq(weft_tensor_dtype(res[k]), weft_tensor_dtype(res[0]));
        cr_assert_eq(weft_tensor_rank(res[k]), weft_tensor_rank(res[0]));
        size_t nb = (size_t)weft_tensor_numel(res[0]) * weft_dtype_size(weft_tensor_dtype(res[0]));
        cr_assert_eq(weft_tensor_numel(res[k]), weft_tensor_numel(res[0]));
        cr_assert(memcmp(weft_tensor_data(res[k]), weft_tensor_data(res[0]), nb) == 0,
                  "reduction %d: traced and eager differ", (int)c->r);
        weft_tensor_release(res[k]);
    }
    return res[0];
}

static weft_tensor *mk(weft_dtype dt, int rank, const int64_t *dims, const void *data)
{
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(dt, rank, dims, data, &t), 0, "%s", weft_errmsg());
    return t;
}

static void check_shape(const weft_tensor *t, weft_dtype dt, int rank, const int64_t *dims)
{
    cr_assert_eq(weft_tensor_dtype(t), dt, "dtype %s, expected %s",
                 weft_dtype_name(weft_tensor_dtype(t)), weft_dtype_name(dt));
    cr_assert_eq(weft_tensor_rank(t), rank);
    for (int d = 0; d < rank; d++)
        cr_assert_eq(weft_tensor_dims(t)[d], dims[d], "dim %d", d);
}

static void expect(const red_case *c, weft_tensor *x, weft_dtype dt, int rank, const int64_t *dims,
                   const double *want, int n)
{
    weft_tensor *r = run_both(c, x);
    check_shape(r, dt, rank, dims);
    cr_assert_eq(weft_tensor_numel(r), n);
    for (int i = 0; i < n; i++) {
        double g = test_element(r, i);
        cr_assert(g == want[i] || (isnan(g) && isnan(want[i])) ||
                  fabs(g - want[i]) <= 1e-12 * fabs(want[i]),
                  "reduction %d, element %d: %.17g, expected %.17g", (int)c->r, i, g, want[i]);
    }
    weft_tensor_release(r);
}

/* x = [[1, 2, 3], [4, 5, 6]] */
static const int64_t d23[2] = { 2, 3 };

Test(reduce, worked_examples_f64)
{
    const double v[6] = { 1, 2, 3, 4, 5, 6 };
    weft_tensor *x = mk(WEFT_F64, 2, d23, v);
    red_case c = { .r = WEFT_R_SUM, .n_axes = -1 };
    expect(&c, x, WEFT_F64, 0, NULL, (double[]){ 21 }, 1);
    c = (red_case){ .r = WEFT_R_SUM, .axes = { 0 }, .n_axes = 1 };
    expect(&c, x, WEFT_F64, 1, (int64_t[]){ 3 }, (double[]){ 5, 7, 9 }, 3);
    c = (red_case){ .r = WEFT_R_SUM, .axes = { -1 }, .n_axes = 1, .keepdims = true };
    expect(&c, x, WEFT_F64, 2, (int64_t[]){ 2, 1 }, (double[]){ 6, 15 }, 2);
    c = (red_case){ .r = WEFT_R_SUM, .axes = { 1, 0 }, .n_axes = 2, .keepdims = true };
    expect(&c, x, WEFT_F64, 2, (int64_t[]){ 1, 1 }, (double[]){ 21 }, 1);
    c = (red_case){ .r = WEFT_R_MEAN, .axes = { 1 }, .n_axes = 1 };
    expect(&c, x, WEFT_F64, 1, (int64_t[]){ 2 }, (double[]){ 2, 5 }, 2);
    c = (red_case){ .r = WEFT_R_MAX, .axes = { 0 }, .n_axes = 1 };
    expect(&c, x, WEFT_F64, 1, (int64_t[]){ 3 }, (double[]){ 4, 5, 6 }, 3);
    c = (red_case){ .r = WEFT_R_MIN, .axes = { 1 }, .n_axes = 1 };
    expect(&c, x, WEFT_F64, 1, (int64_t[]){ 2 }, (double[]){ 1, 4 }, 2);
    c = (red_case){ .r = WEFT_R_PROD, .axes = { 0 }, .n_axes = 1 };
    expect(&c, x, WEFT_F64, 1, (int64_t[]){ 3 }, (double[]){ 4, 10, 18 }, 3);
    c = (red_case){ .r = WEFT_R_PROD, .n_axes = 0 };
    expect(&c, x, WEFT_F64, 0, NULL, (double[]){ 720 }, 1);
    /* Population variance (ddof 0): rows 1,2,3 and 4,5,6 both give 2/3. */
    c = (red_case){ .r = WEFT_R_VAR, .axes = { 1 }, .n_axes = 1 };
    expect(&c, x, WEFT_F64, 1, (int64_t[]){ 2 }, (double[]){ 2.0 / 3.0, 2.0 / 3.0 }, 2);
    c = (red_case){ .r = WEFT_R_STD, .axes = { 0 }, .n_axes = 1, .keepdims = true };
    expect(&c, x, WEFT_F64, 2, (int64_t[]){ 1, 3 }, (double[]){ 1.5, 1.5, 1.5 }, 3);
    c = (red_case){ .r = WEFT_R_ANY, .axes = { 0 }, .n_axes = 1 };
    expect(&c, x, WEFT_BOOL, 1, (int64_t[]){ 3 }, (double[]){ 1, 1, 1 }, 3);
    weft_tensor_release(x);
}

Test(reduce, dtypes_of_integer_and_bool_inputs)
{
    const int32_t vi[6] = { 1, -2, 3, 0, 5, INT32_MAX };
    weft_tensor *xi = mk(WEFT_I32, 2, d23, vi);
    /* Sums of i32 stay i32 and wrap: 0 + 5 + INT32_MAX. */
    red_case c = { .r = WEFT_R_SUM, .axes = { 1 }, .n_axes = 1 };
    expect(&c, xi, WEFT_I32, 1, (int64_t[]){ 2 }, (double[]){ 2, (double)(INT32_MIN + 4) }, 2);
    /* Means (and var, std) of integers are f64. */
    c = (red_case){ .r = WEFT_R_MEAN, .axes = { 0 }, .n_axes = 1 };
    expect(&c, xi, WEFT_F64, 1, (int64_t[]){ 3 }, (double[]){ 0.5, 1.5, 1073741825.0 }, 3);
    c = (red_case){ .r = WEFT_R_VAR, .axes = { 0 }, .n_axes = 1 };
    expect(&c, xi, WEFT_F64, 1, (int64_t[]){ 3 }, (double[]){ 0.25, 12.25, 1073741822.0 * 1073741822.0 }, 3);
    c = (red_case){ .r = WEFT_R_MIN, .n_axes = -1 };
    expect(&c, xi, WEFT_I32, 0, NULL, (double[]){ -2 }, 1);
    /* any / all: non-zero is true. */
    c = (red_case){ .r = WEFT_R_ALL, .axes = { 1 }, .n_axes = 1 };
    expect(&c, xi, WEFT_BOOL, 1, (int64_t[]){ 2 }, (double[]){ 1, 0 }, 2);
    c = (red_case){ .r = WEFT_R_ANY, .axes = { 0 }, .n_axes = 1 };
    expect(&c, xi, WEFT_BOOL, 1, (int64_t[]){ 3 }, (double[]){ 1, 1, 1 }, 3);
    weft_tensor_release(xi);

    const uint8_t vb[6] = { 1, 0, 1, 1, 1, 1 };
    weft_tensor *xb = mk(WEFT_BOOL, 2, d23, vb);
    /* Sums and products of bool count in i64; max and min stay bool. */
    c = (red_case){ .r = WEFT_R_SUM, .axes = { 0 }, .n_axes = 1 };
    expect(&c, xb, WEFT_I64, 1, (int64_t[]){ 3 }, (double[]){ 2, 1, 2 }, 3);
    c = (red_case){ .r = WEFT_R_PROD, .axes = { 1 }, .n_axes = 1 };
    expect(&c, xb, WEFT_I64, 1, (int64_t[]){ 2 }, (double[]){ 0, 1 }, 2);
    c = (red_case){ .r = WEFT_R_MIN, .axes = { 1 }, .n_axes = 1, .keepdims = true };
    expect(&c, xb, WEFT_BOOL, 2, (int64_t[]){ 2, 1 }, (double[]){ 0, 1 }, 2);
    c = (red_case){ .r = WEFT_R_MEAN, .n_axes = -1 };
    expect(&c, xb, WEFT_F64, 0, NULL, (double[]){ 5.0 / 6.0 }, 1);
    weft_tensor_release(xb);

    const float vf[6] = { 1.5f, NAN, 2.0f, -1.0f, 0.5f, 4.0f };
    weft_tensor *xf = mk(WEFT_F32, 2, d23, vf);
    /* max and min propagate NaN; f32 stays f32. */
    c = (red_case){ .r = WEFT_R_MAX, .axes = { 1 }, .n_axes = 1 };
    expect(&c, xf, WEFT_F32, 1, (int64_t[]){ 2 }, (double[]){ NAN, 4.0 }, 2);
    c = (red_case){ .r = WEFT_R_MIN, .axes = { 0 }, .n_axes = 1 };
    expect(&c, xf, WEFT_F32, 1, (int64_t[]){ 3 }, (double[]){ -1.0, NAN, 2.0 }, 3);
    weft_tensor_release(xf);
}

/* Reducing an empty axis gives each reduction's identity (ops.h). */
Test(reduce, empty_axes)
{
    weft_tensor *xf = mk(WEFT_F32, 2, (int64_t[]){ 0, 3 }, NULL);
    weft_tensor *xi = mk(WEFT_I32, 2, (int64_t[]){ 0, 3 }, NULL);
    struct { weft_reduction r; double f, i; weft_dtype idt; } cases[] = {
        { WEFT_R_SUM, 0, 0, WEFT_I32 },
        { WEFT_R_PROD, 1, 1, WEFT_I32 },
        { WEFT_R_MEAN, NAN, NAN, WEFT_F64 },
        { WEFT_R_MAX, -INFINITY, INT32_MIN, WEFT_I32 },
        { WEFT_R_MIN, INFINITY, INT32_MAX, WEFT_I32 },
        { WEFT_R_ANY, 0, 0, WEFT_BOOL },
        { WEFT_R_ALL, 1, 1, WEFT_BOOL },
        { WEFT_R_VAR, NAN, NAN, WEFT_F64 },
        { WEFT_R_STD, NAN, NAN, WEFT_F64 },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        red_case c = { .r = cases[k].r, .axes = { 0 }, .n_axes = 1 };
        bool boolean = cases[k].r == WEFT_R_ANY || cases[k].r == WEFT_R_ALL;
        expect(&c, xf, boolean ? WEFT_BOOL : WEFT_F32, 1, (int64_t[]){ 3 },
               (double[]){ cases[k].f, cases[k].f, cases[k].f }, 3);
        expect(&c, xi, cases[k].idt, 1, (int64_t[]){ 3 },
               (double[]){ cases[k].i, cases[k].i, cases[k].i }, 3);
        /* Over the non-empty axis: no elements out. */
        c.axes[0] = 1;
        weft_tensor *r = run_both(&c, xf);
        check_shape(r, weft_tensor_dtype(r), 1, (int64_t[]){ 0 });
        weft_tensor_release(r);
    }
    weft_tensor_release(xf);
    weft_tensor_release(xi);
}

/* Axes that are not a leading or trailing run (0 and 2 of a 3-D tensor)
 * against a plain loop. */
Test(reduce, scattered_axes)
{
    int64_t dims[3] = { 3, 4, 5 };
    double v[60];
    for (int i = 0; i < 60; i++)
        v[i] = (double)((i * 37) % 23) - 11.0;
    weft_tensor *x = mk(WEFT_F64, 3, dims, v);
    red_case c = { .r = WEFT_R_SUM, .axes = { 2, 0 }, .n_axes = 2, .keepdims = true };
    double want[4];
    for (int j = 0; j < 4; j++) {
        want[j] = 0;
        for (int i = 0; i < 3; i++)
            for (int k = 0; k < 5; k++)
                want[j] += v[(i * 4 + j) * 5 + k];
    }
    expect(&c, x, WEFT_F64, 3, (int64_t[]){ 1, 4, 1 }, want, 4);
    c.r = WEFT_R_MAX;
    c.keepdims = false;
    for (int j = 0; j < 4; j++) {
        want[j] = -INFINITY;
        for (int i = 0; i < 3; i++)
            for (int k = 0; k < 5; k++)
                want[j] = fmax(want[j], v[(i * 4 + j) * 5 + k]);
    }
    expect(&c, x, WEFT_F64, 1, (int64_t[]){ 4 }, want, 4);
    weft_tensor_release(x);
}

/* ---- Bad inputs, eager and traced ------------------------------------- */

static void expect_error(const red_case *c, weft_tensor *x, int code, const char *msg)
{
    weft_arg a = weft_arg_tensor(x);
    for (int mode = 0; mode < 2; mode++) {
        weft_function_desc d = { .name = "bad", .body = reduce_body, .user = (void *)c,
                                 .n_args = 1, .n_outs = 1,
                                 .flags = mode == 0 ? WEFT_RUN_EAGERLY : 0 };
        weft_function *f = NULL;
        cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
        weft_tensor *out = NULL;
        cr_assert_eq(weft_function_call(f, &a, 1, &out, 1), code, "%s mode: %s",
                     mode ? "traced" : "eager", weft_errmsg());
        cr_assert_null(out);
        cr_assert(strstr(weft_errmsg(), msg), "%s mode: \"%s\" lacks \"%s\"",
                  mode ? "traced" : "eager", weft_errmsg(), msg);
        weft_function_destroy(&f);
    }
}

Test(reduce, bad_inputs)
{
    const double v[6] = { 1, 2, 3, 4, 5, 6 };
    weft_tensor *x = mk(WEFT_F64, 2, d23, v);
    red_case c = { .r = WEFT_R_SUM, .axes = { 1, -1 }, .n_axes = 2 };
    expect_error(&c, x, WEFT_EINVAL, "weft_reduce: axis -1 is given twice for f64[2,3]");
    c = (red_case){ .r = WEFT_R_MEAN, .axes = { 2 }, .n_axes = 1 };
    expect_error(&c, x, WEFT_EINVAL, "weft_reduce: axis 2 is out of range for f64[2,3]");
    c = (red_case){ .r = WEFT_R_VAR, .axes = { -3 }, .n_axes = 1 };
    expect_error(&c, x, WEFT_EINVAL, "weft_reduce: axis -3 is out of range for f64[2,3]");
    c = (red_case){ .r = WEFT_R_MAX, .axes = { 100 }, .n_axes = 1 };
    expect_error(&c, x, WEFT_EINVAL, "weft_reduce: axis 100 is out of range");
    c = (red_case){ .r = (weft_reduction)42, .n_axes = -1 };
    expect_error(&c, x, WEFT_EINVAL, "weft_reduce: unknown reduction 42");
    weft_tensor_release(x);
}

static int null_axes_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    /* n_axes without axes, then too many axes: the first error sticks. */
    weft_value *r = weft_reduce(cx, WEFT_R_SUM, args[0], NULL, 2, false);
    cr_assert_null(r);
    /* A traced body's message starts with the function and the node. */
    cr_assert(strstr(weft_errmsg(), "weft_reduce: axes is NULL but n_axes is 2"), "%s",
              weft_errmsg());
    int axes[9] = { 0 };
    cr_assert_null(weft_reduce(cx, WEFT_R_SUM, args[0], axes, 9, false));
    cr_assert_null(weft_reduce(cx, WEFT_R_SUM, NULL, NULL, 0, false));
    outs[0] = args[0];
    return weft_ctx_status(cx);
}

Test(reduce, null_and_too_many_axes)
{
    weft_tensor *x = mk(WEFT_F64, 2, d23, (double[]){ 1, 2, 3, 4, 5, 6 });
    weft_arg a = weft_arg_tensor(x);
    for (int mode = 0; mode < 2; mode++) {
        weft_function_desc d = { .name = "bad", .body = null_axes_body, .n_args = 1, .n_outs = 1,
                                 .flags = mode == 0 ? WEFT_RUN_EAGERLY : 0 };
        weft_function *f = NULL;
        cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
        weft_tensor *out = NULL;
        cr_assert_eq(weft_function_call(f, &a, 1, &out, 1), WEFT_EINVAL);
        cr_assert_str_eq(weft_errmsg() + strlen(weft_errmsg()) - strlen("weft_reduce: axes is NULL but n_axes is 2"),
                         "weft_reduce: axes is NULL but n_axes is 2");
        weft_function_destroy(&f);
    }
    weft_tensor_release(x);
}

/* With an unknown rank the axes can only be checked when the call's
 * tensor arrives: the run reports the same problem. */
Test(reduce, axes_checked_at_run_time_for_unknown_rank)
{
    weft_tensor *x = mk(WEFT_F64, 2, d23, (double[]){ 1, 2, 3, 4, 5, 6 });
    weft_arg a = weft_arg_tensor(x);
    weft_spec sig;
    cr_assert_eq(weft_spec_parse("f64[*]", &sig), 0);
    red_case c = { .r = WEFT_R_SUM, .axes = { 3 }, .n_axes = 1 };
    weft_function_desc d = { .name = "anyrank", .body = reduce_body, .user = &c, .n_args = 1,
                             .n_outs = 1, .input_signature = &sig };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
    weft_tensor *out = NULL;
    cr_assert_eq(weft_function_call(f, &a, 1, &out, 1), WEFT_EINVAL);
    cr_assert(strstr(weft_errmsg(), "axis 3 is out of range for f64[2,3]"), "%s", weft_errmsg());
    weft_function_destroy(&f);
    weft_tensor_release(x);
}

/* ---- Fused groups whose shapes are known only at run time ------------ */

static int normalize_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    const int last = -1;
    weft_value *x = args[0];
    weft_value *d = weft_sub(cx, x, weft_reduce(cx, WEFT_R_MEAN, x, &last, 1, true));
    weft_value *var = weft_reduce(cx, WEFT_R_MEAN, weft_mul(cx, d, d), &last, 1, true);
    outs[0] = weft_div(cx, d, weft_sqrt(cx, weft_add(cx, var, weft_const_f64(cx, 1e-5))));
    outs[1] = weft_reduce(cx, WEFT_R_SUM, weft_mul(cx, x, x), NULL, 0, false);
    return weft_ctx_status(cx);
}

/* Traced with f64[?,?]: one trace serves rows of 8 (the fused tiles) and
 * rows of 3000 (too wide for a tile: the op-by-op path), and both agree
 * with eager mode bit for bit. */
Test(reduce, fused_groups_with_unknown_dims)
{
    weft_spec sig;
    cr_assert_eq(weft_spec_parse("f64[?,?]", &sig), 0);
    weft_function_desc d = { .name = "norm", .body = normalize_body, .n_args = 1, .n_outs = 2,
                             .input_signature = &sig };
    weft_function *ft = NULL, *fe = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &ft), 0, "%s", weft_errmsg());
    d.flags = WEFT_RUN_EAGERLY;
    cr_assert_eq(weft_function_create(rt, &d, &fe), 0, "%s", weft_errmsg());
    const int64_t shapes[3][2] = { { 500, 8 }, { 3, 3000 }, { 0, 8 } };
    for (int s = 0; s < 3; s++) {
        int64_t n = shapes[s][0] * shapes[s][1];
        double *v = malloc((size_t)(n ? n : 1) * sizeof *v);
        for (int64_t i = 0; i < n; i++)
            v[i] = (double)((i * 7919) % 1000) / 100.0;
        weft_tensor *x = mk(WEFT_F64, 2, shapes[s], v);
        weft_arg a = weft_arg_tensor(x);
        weft_tensor *ot[2] = { NULL }, *oe[2] = { NULL };
        cr_assert_eq(weft_function_call(ft, &a, 1, ot, 2), 0, "%s", weft_errmsg());
        cr_assert_eq(weft_function_call(fe, &a, 1, oe, 2), 0, "%s", weft_errmsg());
        for (int k = 0; k < 2; k++) {
            cr_assert_eq(weft_tensor_numel(ot[k]), weft_tensor_numel(oe[k]));
            cr_assert(memcmp(weft_tensor_data(ot[k]), weft_tensor_data(oe[k]),
                             (size_t)weft_tensor_numel(ot[k]) * 8) == 0,
                      "[%lld,%lld] output %d differs", (long long)shapes[s][0],
                      (long long)shapes[s][1], k);
            weft_tensor_release(ot[k]);
            weft_tensor_release(oe[k]);
        }
        weft_tensor_release(x);
        free(v);
    }
    cr_assert_eq(weft_function_tracing_count(ft), 1);
    char *text = test_ops_text(ft);
    cr_expect(strstr(text, "fused[mean,sub,mul,mean,add,sqrt,div]"), "not one group:\n%s", text);
    free(text);
    weft_function_destroy(&ft);
    weft_function_destroy(&fe);
}

/* ---- The compiler's passes ------------------------------------------- */

static int passes_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    weft_tensor *c = user;
    const int one = 1, last = -1;
    /* The same reduction spelled two ways merges (CSE); one of a constant
     * folds into a constant. */
    weft_value *a = weft_reduce(cx, WEFT_R_PROD, args[0], &one, 1, false);
    weft_value *b = weft_reduce(cx, WEFT_R_PROD, args[0], &last, 1, false);
    weft_value *k = weft_reduce(cx, WEFT_R_STD, weft_const_tensor(cx, c), NULL, 0, false);
    outs[0] = weft_add(cx, weft_add(cx, a, b), k);
    return weft_ctx_status(cx);
}

Test(reduce, merged_and_folded_by_the_compiler)
{
    weft_tensor *x = mk(WEFT_F64, 2, d23, (double[]){ 1, 2, 3, 4, 5, 6 });
    weft_tensor *c = mk(WEFT_F64, 1, (int64_t[]){ 4 }, (double[]){ 1, 2, 3, 4 });
    weft_arg a = weft_arg_tensor(x);
    weft_function_desc d = { .name = "passes", .body = passes_body, .user = c, .n_args = 1,
                             .n_outs = 1 };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
    weft_tensor *y = NULL;
    cr_assert_eq(weft_function_call(f, &a, 1, &y, 1), 0, "%s", weft_errmsg());
    /* prod(x, 1) * 2 + std([1,2,3,4]) = [12, 240] + sqrt(1.25) */
    const double *v = weft_tensor_data(y);
    cr_assert_float_eq(v[0], 12.0 + sqrt(1.25), 1e-12);
    cr_assert_float_eq(v[1], 240.0 + sqrt(1.25), 1e-12);
    char *text = test_ops_text(f);
    cr_expect_eq(test_count(text, "prod"), 1, "the two prods did not merge:\n%s", text);
    cr_expect_null(strstr(text, "mean"), "std of a constant was not folded:\n%s", text);
    cr_expect_null(strstr(text, "sqrt"), "std of a constant was not folded:\n%s", text);
    free(text);
    weft_tensor_release(y);
    weft_function_destroy(&f);
    weft_tensor_release(c);
    weft_tensor_release(x);
}

static int broadcast_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    const int last = -1;
    weft_value *t = weft_mul(cx, weft_add(cx, args[0], args[1]), args[0]);
    outs[0] = weft_sub(cx, t, weft_reduce(cx, WEFT_R_MAX, t, &last, 1, true));
    return weft_ctx_status(cx);
}

/* Traced with two f64[?,?] inputs, the group takes y as a full operand;
 * a call where y is a column [n,1] or a row [1,m] (broadcast after all)
 * takes the op-by-op path, and every call equals eager mode. */
Test(reduce, fused_group_meets_a_broadcast_at_run_time)
{
    weft_spec sig[2];
    cr_assert_eq(weft_spec_parse("f64[?,?]", &sig[0]), 0);
    sig[1] = sig[0];
    weft_function_desc d = { .name = "bc", .body = broadcast_body, .n_args = 2, .n_outs = 1,
                             .input_signature = sig };
    weft_function *ft = NULL, *fe = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &ft), 0, "%s", weft_errmsg());
    d.flags = WEFT_RUN_EAGERLY;
    cr_assert_eq(weft_function_create(rt, &d, &fe), 0, "%s", weft_errmsg());
    double xv[12], yv[12];
    for (int i = 0; i < 12; i++) {
        xv[i] = (double)(i % 5) - 2.0;
        yv[i] = (double)(i % 3) * 0.5;
    }
    const int64_t ydims[3][2] = { { 3, 4 }, { 3, 1 }, { 1, 4 } };
    weft_tensor *x = mk(WEFT_F64, 2, (int64_t[]){ 3, 4 }, xv);
    for (int k = 0; k < 3; k++) {
        weft_tensor *y = mk(WEFT_F64, 2, ydims[k], yv);
        weft_arg a[2] = { weft_arg_tensor(x), weft_arg_tensor(y) };
        weft_tensor *ot = NULL, *oe = NULL;
        cr_assert_eq(weft_function_call(ft, a, 2, &ot, 1), 0, "%s", weft_errmsg());
        cr_assert_eq(weft_function_call(fe, a, 2, &oe, 1), 0, "%s", weft_errmsg());
        cr_assert_eq(weft_tensor_numel(ot), 12);
        cr_assert(memcmp(weft_tensor_data(ot), weft_tensor_data(oe), 12 * sizeof(double)) == 0,
                  "y of [%lld,%lld]: traced and eager differ", (long long)ydims[k][0],
                  (long long)ydims[k][1]);
        weft_tensor_release(ot);
        weft_tensor_release(oe);
        weft_tensor_release(y);
    }
    cr_assert_eq(weft_function_tracing_count(ft), 1);
    weft_tensor_release(x);
    weft_function_destroy(&ft);
    weft_function_destroy(&fe);
}
