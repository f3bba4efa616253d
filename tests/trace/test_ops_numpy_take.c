/* NumPy's take and ravel_multi_index: against NumPy 1.24's printed values,
 * eagerly and traced on 1, 2 and 4 workers with the same bits; the three
 * modes, an axis or every axis, coordinates broadcasting; an index out of
 * range failing the call under RAISE; the inverse of unravel_index; a
 * gradient through take; the refusals. */
#include <math.h>
#include <string.h>

#include "grad_check.h"
#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_numpy_take, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

#define DIMS(...) ((const int64_t[]){ __VA_ARGS__ })

typedef struct take_case {
    int axis;
    weft_index_mode mode;
} take_case;

/* args: a, indices. */
static int take_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const take_case *c = user;
    outs[0] = weft_take(cx, a[0], a[1], c->axis, c->mode);
    return weft_ctx_status(cx);
}

static weft_tensor *a34(void)
{
    double v[12];
    for (int i = 0; i < 12; i++)
        v[i] = 1.5 * i;
    return test_tensor(WEFT_F64, 2, DIMS(3, 4), v);
}

/* np.take(a, idx, axis=1, mode) and np.take(a, flat, mode) for a =
 * arange(12).reshape(3, 4) * 1.5. */
Test(ops_numpy_take, modes_are_numpys)
{
    static const double idx[3][4] = { { 0, -1, 2, 1 }, { 0, -1, 5, -6 }, { 0, -1, 5, -6 } };
    static const double flat_idx[3][3] = { { 11, -12, 4 }, { 13, -1, 4 }, { 13, -1, 4 } };
    static const double along[3][12] = {
        { 0.0, 4.5, 3.0, 1.5, 6.0, 10.5, 9.0, 7.5, 12.0, 16.5, 15.0, 13.5 },
        { 0.0, 4.5, 1.5, 3.0, 6.0, 10.5, 7.5, 9.0, 12.0, 16.5, 13.5, 15.0 },
        { 0.0, 0.0, 4.5, 0.0, 6.0, 6.0, 10.5, 6.0, 12.0, 12.0, 16.5, 12.0 },
    };
    static const double flat[3][3] = { { 16.5, 0.0, 6.0 }, { 1.5, 16.5, 6.0 },
                                       { 16.5, 0.0, 6.0 } };
    weft_tensor *a = a34();
    for (int m = 0; m < 3; m++) {
        weft_tensor *args[2] = { a, test_tensor(WEFT_I32, 2, DIMS(2, 2), idx[m]) }, *y;
        take_case c = { 1, (weft_index_mode)m };
        op_results_everywhere(take_body, &c, args, 2, &y, 1, "take along 1");
        test_assert_shape(y, WEFT_F64, 3, DIMS(3, 2, 2), "take along 1");
        for (int i = 0; i < 12; i++)
            cr_assert_eq(test_element(y, i), along[m][i], "mode %d element %d", m, i);
        weft_tensor_release(y);
        weft_tensor_release(args[1]);
        args[1] = test_tensor(WEFT_I64, 1, DIMS(3), flat_idx[m]);
        c.axis = WEFT_ALL_AXES;
        op_results_everywhere(take_body, &c, args, 2, &y, 1, "take flat");
        test_assert_shape(y, WEFT_F64, 1, DIMS(3), "take flat");
        for (int i = 0; i < 3; i++)
            cr_assert_eq(test_element(y, i), flat[m][i], "mode %d flat %d", m, i);
        weft_tensor_release(y);
        weft_tensor_release(args[1]);
    }
    weft_tensor_release(a);
}

/* RAISE: an index past the axis (or before its negative end) fails the
 * call, traced or eager. */
Test(ops_numpy_take, raise_fails_the_call)
{
    weft_tensor *a = a34();
    const double bad[2] = { 4, -5 };
    for (int k = 0; k < 2; k++)
        for (int eager = 0; eager < 2; eager++) {
            weft_tensor *args[2] = { a, test_tensor(WEFT_I64, 1, DIMS(1), &bad[k]) }, *y = NULL;
            take_case c = { -1, WEFT_INDEX_RAISE };
            cr_assert_eq(op_call(rt, take_body, &c, args, 2, &y, 1, eager), WEFT_EINVAL);
            cr_assert(strstr(weft_errmsg(), "out of range"), "%s", weft_errmsg());
            cr_assert_null(y);
            weft_tensor_release(args[1]);
        }
    weft_tensor_release(a);
}

typedef struct ravel_case {
    int n;
    weft_index_mode mode;
} ravel_case;

static int ravel_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const ravel_case *c = user;
    static const int64_t dims[2] = { 3, 4 };
    outs[0] = weft_ravel_multi_index(cx, a, (size_t)c->n, dims, c->mode);
    return weft_ctx_status(cx);
}

/* NumPy's [7, 8, 3] (wrap), [7, 8, 0] (clip) and [[7, 4, 5], [11, 8, 9]]
 * (rows [[1], [2]] broadcast with columns [3, 0, 1]) into dims (3, 4). */
Test(ops_numpy_take, ravel_multi_index_is_numpys)
{
    weft_tensor *args[2] = { test_tensor(WEFT_I64, 1, DIMS(3), (const double[]){ 1, 2, 0 }),
                             test_tensor(WEFT_I32, 1, DIMS(3), (const double[]){ 3, 0, -1 }) };
    ravel_case c = { 2, WEFT_INDEX_WRAP };
    weft_tensor *y;
    op_results_everywhere(ravel_body, &c, args, 2, &y, 1, "wrap");
    const double wrap[3] = { 7, 8, 3 }, clip[3] = { 7, 8, 0 };
    test_assert_shape(y, WEFT_I64, 1, DIMS(3), "wrap");
    for (int i = 0; i < 3; i++)
        cr_assert_eq(test_element(y, i), wrap[i], "wrap %d", i);
    weft_tensor_release(y);
    weft_tensor_release(args[0]);
    args[0] = test_tensor(WEFT_I64, 1, DIMS(3), (const double[]){ 1, 5, 0 });
    c.mode = WEFT_INDEX_CLIP;
    op_results_everywhere(ravel_body, &c, args, 2, &y, 1, "clip");
    for (int i = 0; i < 3; i++)
        cr_assert_eq(test_element(y, i), clip[i], "clip %d", i);
    weft_tensor_release(y);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
    args[0] = test_tensor(WEFT_I64, 2, DIMS(2, 1), (const double[]){ 1, 2 });
    args[1] = test_tensor(WEFT_I64, 1, DIMS(3), (const double[]){ 3, 0, 1 });
    c.mode = WEFT_INDEX_RAISE;
    op_results_everywhere(ravel_body, &c, args, 2, &y, 1, "broadcast");
    test_assert_shape(y, WEFT_I64, 2, DIMS(2, 3), "broadcast");
    const double want[6] = { 7, 4, 5, 11, 8, 9 };
    for (int i = 0; i < 6; i++)
        cr_assert_eq(test_element(y, i), want[i], "broadcast %d", i);
    weft_tensor_release(y);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

static int round_trip_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    static const int64_t dims[3] = { 2, 3, 5 };
    weft_value *coords = weft_unravel_index(cx, a[0], dims, 3);
    weft_value *parts[3];
    for (int k = 0; k < 3; k++)
        parts[k] = weft_gather(cx, coords, weft_const_i64(cx, k), 0);
    outs[0] = weft_ravel_multi_index(cx, parts, 3, dims, WEFT_INDEX_RAISE);
    return weft_ctx_status(cx);
}

/* The inverse of unravel_index: every flat index of a [2, 3, 5] array
 * comes back. */
Test(ops_numpy_take, inverts_unravel_index)
{
    double v[30];
    for (int i = 0; i < 30; i++)
        v[i] = 29 - i;
    weft_tensor *x = test_tensor(WEFT_I64, 1, DIMS(30), v), *y;
    op_results_everywhere(round_trip_body, NULL, &x, 1, &y, 1, "round trip");
    for (int i = 0; i < 30; i++)
        cr_assert_eq(test_element(y, i), v[i], "index %d", i);
    weft_tensor_release(y);
    weft_tensor_release(x);
}

/* RAISE: a coordinate outside its dim (negative too) fails the call. */
Test(ops_numpy_take, ravel_raise_fails_the_call)
{
    const double bad[2][2] = { { 1, 4 }, { -1, 0 } };
    for (int k = 0; k < 2; k++)
        for (int eager = 0; eager < 2; eager++) {
            weft_tensor *args[2] = { test_tensor(WEFT_I64, 1, DIMS(1), &bad[k][0]),
                                     test_tensor(WEFT_I64, 1, DIMS(1), &bad[k][1]) }, *y = NULL;
            ravel_case c = { 2, WEFT_INDEX_RAISE };
            cr_assert_eq(op_call(rt, ravel_body, &c, args, 2, &y, 1, eager), WEFT_EINVAL);
            cr_assert(strstr(weft_errmsg(), "weft_ravel_multi_index: invalid entry in "
                                            "coordinates"), "%s", weft_errmsg());
            cr_assert_null(y);
            weft_tensor_release(args[0]);
            weft_tensor_release(args[1]);
        }
}

static int grad_of(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    int64_t n = 4;
    weft_tensor *t = NULL;
    const int64_t idx[4] = { 2, -1, 7, 2 };
    if (weft_tensor_create(WEFT_I64, 1, &n, idx, &t) != 0)
        return WEFT_EINVAL;
    weft_value *i = weft_const_tensor(cx, t);
    weft_tensor_release(t);
    outs[0] = weft_take(cx, a[0], i, 1, WEFT_INDEX_WRAP);
    return weft_ctx_status(cx);
}

/* The gradient gathers back: index 2 taken twice (wrapped 7 once more)
 * gets three. */
Test(ops_numpy_take, gradient)
{
    const double v[8] = { 0.3, -1.2, 2.5, 0.9, 1.7, -0.4, 3.1, 0.05 };
    const grad_arg x = { 2, { 2, 4 }, v };
    grad_case c = { grad_of, NULL, 1, 1 };
    expect_gradients(&c, &x, "take");
}

/* args: a [3, 4] f64, i64 [1], f64 [1]. */
static int refused_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    static const int64_t dims[2] = { 3, 0 };
    switch (*(const int *)user) {
    case 0: outs[0] = weft_take(cx, a[0], a[2], 0, WEFT_INDEX_RAISE); break;
    case 1: outs[0] = weft_take(cx, a[0], a[1], 2, WEFT_INDEX_RAISE); break;
    case 2: outs[0] = weft_take(cx, a[0], a[1], 0, (weft_index_mode)7); break;
    case 3: outs[0] = weft_ravel_multi_index(cx, &a[1], 1, dims + 1, WEFT_INDEX_RAISE); break;
    case 4: outs[0] = weft_ravel_multi_index(cx, &a[1], 0, dims, WEFT_INDEX_RAISE); break;
    default: outs[0] = weft_ravel_multi_index(cx, &a[0], 1, dims, WEFT_INDEX_CLIP); break;
    }
    return weft_ctx_status(cx);
}

Test(ops_numpy_take, refusals)
{
    weft_tensor *args[3] = { a34(), test_tensor(WEFT_I64, 1, DIMS(1), (const double[]){ 0 }),
                             test_tensor(WEFT_F64, 1, DIMS(1), (const double[]){ 0 }) };
    const op_error_case cases[] = {
        { 0, WEFT_EDTYPE, "weft_take: indices f64[1] are not i32 or i64" },
        { 1, WEFT_EINVAL, "weft_take: axis 2 is not in [-2, 2)" },
        { 2, WEFT_EINVAL, "weft_take: mode 7 is not a weft_index_mode" },
        { 3, WEFT_EINVAL, "weft_ravel_multi_index: dims[0] 0 is not positive" },
        { 4, WEFT_EINVAL, "weft_ravel_multi_index: 0 coordinates" },
        { 5, WEFT_EDTYPE, "weft_ravel_multi_index: indices f64[3,4] are not i32 or i64" },
    };
    op_expect_errors(rt, refused_body, cases, 6, args, 3);
    for (int k = 0; k < 3; k++)
        weft_tensor_release(args[k]);
}
