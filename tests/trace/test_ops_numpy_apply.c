/* weft_apply_along_axis against NumPy 1.24's np.apply_along_axis: scalar,
 * vector and matrix outputs, the output's dims where the axis was; eager
 * and traced on 1, 2 and 4 workers with the same bits; an unknown batch
 * dim traced once; the refusals. */
#include <string.h>

#include "op_calls.h"
#include "suite_runtimes.h"

#define DIMS(...) ((const int64_t[]){ __VA_ARGS__ })

TestSuite(ops_numpy_apply, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

/* The functions applied: user 0 the sum of squares, 1 the cumulative sum,
 * 2 the outer product of the slice with itself. */
static int slice_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    switch (*(const int *)user) {
    case 0: outs[0] = weft_sum(cx, weft_mul(cx, a[0], a[0]), 0); break;
    case 1: outs[0] = weft_cumsum(cx, a[0], 0); break;
    default:
        outs[0] = weft_mul(cx, weft_expand_dims(cx, a[0], 1), weft_expand_dims(cx, a[0], 0));
        break;
    }
    return weft_ctx_status(cx);
}

static const int slice_fns[3] = { 0, 1, 2 };

typedef struct apply_case {
    weft_function *fn;
    int axis;
} apply_case;

static int apply_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const apply_case *c = user;
    outs[0] = weft_apply_along_axis(cx, c->fn, a[0], c->axis, 2);
    return weft_ctx_status(cx);
}

/* weft_apply_along_axis(slice function which, x, axis) has dims and
 * NumPy's values want, the same bits eagerly and traced on every runtime. */
static void expect_apply(int which, weft_tensor *x, int axis, int rank, const int64_t *dims,
                         const double *want, const char *what)
{
    weft_tensor *first = NULL;
    for (int k = 0; k < N_RT; k++) {
        apply_case c = { test_function(rts[k], "slice", slice_body, (void *)&slice_fns[which],
                                       1, 1, NULL, 0),
                         axis };
        for (int eager = 0; eager < 2; eager++) {
            weft_tensor *y = NULL;
            cr_assert_eq(op_call(rts[k], apply_body, &c, &x, 1, &y, 1, eager), 0, "%s: %s",
                         what, weft_errmsg());
            if (!first) {
                first = y;
                continue;
            }
            cr_assert(op_same_bits(y, first), "%s: differs on %u workers (%s)", what,
                      rt_workers[k], eager ? "eager" : "traced");
            weft_tensor_release(y);
        }
        weft_function_destroy(&c.fn);
    }
    test_assert_shape(first, WEFT_F64, rank, dims, what);
    int64_t n = 1;
    for (int d = 0; d < rank; d++)
        n *= dims[d];
    op_expect_values(first, WEFT_F64, want, n, what);
    weft_tensor_release(first);
}

Test(ops_numpy_apply, outputs_go_where_the_axis_was)
{
    weft_tensor *a = test_tensor(WEFT_F64, 2, DIMS(3, 4),
                                 (const double[]){ 0.5, -1, 2, 3, 4, 0.25, -6, 7, 8, 9, 1.5, -2 });
    expect_apply(0, a, 1, 1, DIMS(3), (const double[]){ 14.25, 101.0625, 151.25 },
                 "sums of squares of rows");
    expect_apply(0, a, -2, 1, DIMS(4), (const double[]){ 80.25, 82.0625, 42.25, 62.0 },
                 "sums of squares of columns");
    weft_tensor_release(a);

    double v[24];
    for (int i = 0; i < 24; i++)
        v[i] = i * 0.5 - 3;
    weft_tensor *b = test_tensor(WEFT_F64, 3, DIMS(3, 4, 2), v);
    expect_apply(1, b, 0, 3, DIMS(3, 4, 2),
                 (const double[]){ -3.0, -2.5, -2.0, -1.5, -1.0, -0.5, 0.0, 0.5, -2.0, -1.0,
                                   0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 3.0, 4.5, 6.0, 7.5, 9.0, 10.5,
                                   12.0, 13.5 },
                 "cumulative sums along axis 0");
    weft_tensor_release(b);

    for (int i = 0; i < 12; i++)
        v[i] = i - 4;
    weft_tensor *c = test_tensor(WEFT_F64, 3, DIMS(2, 3, 2), v);
    expect_apply(2, c, 1, 4, DIMS(2, 3, 3, 2),
                 (const double[]){ 16, 9, 8, 3, 0, -3, 8, 3, 4, 1, 0, -1, 0, -3, 0, -1, 0, 1,
                                   4, 9, 8, 15, 12, 21, 8, 15, 16, 25, 24, 35, 12, 21, 24, 35,
                                   36, 49 },
                 "outer products of axis 1");
    weft_tensor_release(c);
}

/* A dim unknown while tracing, the batch's or the slices' own: one trace
 * for every size; sums of squares of rows [rows, cols]. */
Test(ops_numpy_apply, an_unknown_dim_is_traced_once)
{
    apply_case c = { test_function(rt, "slice", slice_body, (void *)&slice_fns[0], 1, 1, NULL,
                                   0),
                     1 };
    static const char *const sigs[2] = { "f64[?,3]", "f64[2,?]" };
    for (int s = 0; s < 2; s++) {
        weft_spec sig;
        cr_assert_eq(weft_spec_parse(sigs[s], &sig), 0);
        weft_function *f = op_signature_function(rt, apply_body, &c, &sig, 1);
        for (int64_t size = 1; size <= 4; size++) {
            int64_t rows = s ? 2 : size, cols = s ? size : 3;
            double v[12];
            for (int i = 0; i < 12; i++)
                v[i] = i;
            weft_tensor *x = test_tensor(WEFT_F64, 2, DIMS(rows, cols), v), *y = NULL;
            weft_arg arg = weft_arg_tensor(x);
            cr_assert_eq(weft_function_call(f, &arg, 1, &y, 1), 0, "%s", weft_errmsg());
            test_assert_shape(y, WEFT_F64, 1, DIMS(rows), sigs[s]);
            for (int64_t r = 0; r < rows; r++) {
                double want = 0;
                for (int64_t j = 0; j < cols; j++)
                    want += v[r * cols + j] * v[r * cols + j];
                cr_assert_eq(test_element(y, r), want, "%s row %lld", sigs[s], (long long)r);
            }
            weft_tensor_release(y);
            weft_tensor_release(x);
        }
        op_destroy_traced_once(&f);
    }
    weft_function_destroy(&c.fn);
}

Test(ops_numpy_apply, refusals_say_why)
{
    weft_function *sum = test_function(rt, "slice", slice_body, (void *)&slice_fns[0], 1, 1,
                                       NULL, 0);
    weft_function *outer = test_function(rt, "slice", slice_body, (void *)&slice_fns[2], 1, 1,
                                         NULL, 0);
    static const struct { const char *sig; int axis; bool no_fn; int rc; const char *says; }
        cases[] = {
            { "f64[2,3]", 2, false, WEFT_EINVAL, "weft_apply_along_axis: axis 2" },
            { "f64[2,3]", 0, true, WEFT_EINVAL, "weft_apply_along_axis: fn is NULL" },
            { "f64[?,?]", 1, false, WEFT_ESHAPE,
              "weft_apply_along_axis: arr f64[?,?] has the axis and another dim unknown while "
              "tracing" },
            { "f64[1,1,1,1,1,1,1,2]", 7, false, WEFT_ESHAPE,
              "weft_apply_along_axis: arr f64[1,1,1,1,1,1,1,2] without its axis and fn's "
              "output make more than 8 dims" },
            { "f64[?,?,3]", 2, false, WEFT_ESHAPE,
              "weft_apply_along_axis: the result's dims (arr f64[?,?,3] without axis 2, then "
              "fn's output) have more than one unknown while tracing" },
        };
    weft_tensor *x = test_tensor(WEFT_F64, 2, DIMS(2, 3), (const double[6]){ 0 });
    weft_tensor *x3 = test_tensor(WEFT_F64, 3, DIMS(1, 2, 3), (const double[6]){ 0 });
    weft_tensor *x8 = test_tensor(WEFT_F64, 8, DIMS(1, 1, 1, 1, 1, 1, 1, 2),
                                  (const double[2]){ 0 });
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        apply_case c = { cases[k].no_fn ? NULL : cases[k].axis == 7 ? outer : sum,
                         cases[k].axis };
        weft_spec sig;
        cr_assert_eq(weft_spec_parse(cases[k].sig, &sig), 0);
        weft_function *f = op_signature_function(rt, apply_body, &c, &sig, 1);
        weft_arg arg = weft_arg_tensor(sig.rank == 3 ? x3 : sig.rank == 8 ? x8 : x);
        weft_tensor *y = NULL;
        cr_assert_eq(weft_function_call(f, &arg, 1, &y, 1), cases[k].rc, "case %zu: %s", k,
                     weft_errmsg());
        cr_assert(strstr(weft_errmsg(), cases[k].says), "case %zu: %s", k, weft_errmsg());
        weft_function_destroy(&f);
    }
    weft_tensor_release(x);
    weft_tensor_release(x3);
    weft_tensor_release(x8);
    weft_function_destroy(&sum);
    weft_function_destroy(&outer);
}
