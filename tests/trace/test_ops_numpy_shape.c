/* tf.experimental.numpy's flip, fliplr, flipud, ravel, atleast_1d/2d/3d,
 * hstack, vstack, dstack, column_stack, block, append, diag, diagflat, select,
 * broadcast_arrays, array_split, hsplit, vsplit and dsplit: shapes and
 * values against NumPy's rules written here, eagerly and traced on 1, 2
 * and 4 workers with the same bits; dtypes kept, dims unknown while
 * tracing where allowed, gradients against central differences, and the
 * refusals. */
#include <math.h>
#include <string.h>

#include "grad_check.h"
#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_numpy_shape, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

#define DIMS(...) ((const int64_t[]){ __VA_ARGS__ })

static double v24[24];

static void fill24(void)
{
    for (int i = 0; i < 24; i++)
        v24[i] = i - 5.5;
}

/* ---- flip ---------------------------------------------------------------------- */

/* Output *user of the five flips. */
static int flip_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    static const int ax1[1] = { -1 }, ax02[2] = { 0, 2 };
    switch (*(const int *)user) {
    case 0: outs[0] = weft_flip(cx, a[0], NULL, 0); break;
    case 1: outs[0] = weft_flip(cx, a[0], ax1, 1); break;
    case 2: outs[0] = weft_flip(cx, a[0], ax02, 2); break;
    case 3: outs[0] = weft_fliplr(cx, a[0]); break;
    default: outs[0] = weft_flipud(cx, a[0]); break;
    }
    return weft_ctx_status(cx);
}

Test(ops_numpy_shape, flip_reverses_the_axes_named)
{
    fill24();
    weft_tensor *x = test_tensor(WEFT_I32, 3, DIMS(2, 3, 4), v24), *y[5];
    for (int o = 0; o < 5; o++)
        op_results_everywhere(flip_body, &o, &x, 1, &y[o], 1, "flip");
    /* Which axes each output reverses. */
    static const bool rev[5][3] = { { true, true, true }, { false, false, true },
                                    { true, false, true }, { false, true, false },
                                    { true, false, false } };
    for (int o = 0; o < 5; o++) {
        test_assert_shape(y[o], WEFT_I32, 3, DIMS(2, 3, 4), "flip");
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 3; j++)
                for (int k = 0; k < 4; k++) {
                    int si = rev[o][0] ? 1 - i : i, sj = rev[o][1] ? 2 - j : j;
                    int sk = rev[o][2] ? 3 - k : k;
                    cr_assert_eq(test_element(y[o], (i * 3 + j) * 4 + k),
                                 test_element(x, (si * 3 + sj) * 4 + sk), "output %d", o);
                }
        weft_tensor_release(y[o]);
    }
    weft_tensor_release(x);
}

/* ---- atleast and the stacks ------------------------------------------------------- */

/* atleast_1d, 2d and 3d of a[0]. */
static int atleast_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_atleast_1d(cx, a[0]);
    outs[1] = weft_atleast_2d(cx, a[0]);
    outs[2] = weft_atleast_3d(cx, a[0]);
    return weft_ctx_status(cx);
}

Test(ops_numpy_shape, atleast_reshapes_as_numpy)
{
    fill24();
    weft_tensor *args[3] = { test_tensor(WEFT_F64, 0, NULL, v24),
                             test_tensor(WEFT_F64, 1, DIMS(4), v24),
                             test_tensor(WEFT_F64, 2, DIMS(2, 3), v24) }, *y[9];
    for (int i = 0; i < 3; i++)
        op_results_everywhere(atleast_body, NULL, &args[i], 1, &y[3 * i], 3, "atleast");
    static const struct { int rank; int64_t dims[3]; } want[9] = {
        { 1, { 1 } },    { 2, { 1, 1 } }, { 3, { 1, 1, 1 } },
        { 1, { 4 } },    { 2, { 1, 4 } }, { 3, { 1, 4, 1 } },
        { 2, { 2, 3 } }, { 2, { 2, 3 } }, { 3, { 2, 3, 1 } },
    };
    for (int o = 0; o < 9; o++) {
        test_assert_shape(y[o], WEFT_F64, want[o].rank, want[o].dims, "atleast");
        cr_assert(!memcmp(weft_tensor_data(y[o]), weft_tensor_data(args[o / 3]),
                          (size_t)weft_tensor_numel(y[o]) * 8), "output %d", o);
        weft_tensor_release(y[o]);
    }
    for (int k = 0; k < 3; k++)
        weft_tensor_release(args[k]);
}

/* Stack *user of six. */
static int stacks_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    weft_value *mixed[2] = { a[4], a[3] };   /* a vector [2] and a matrix [2, 1] */
    switch (*(const int *)user) {
    case 0: outs[0] = weft_hstack(cx, a, 2); break;   /* two vectors */
    case 1: outs[0] = weft_vstack(cx, a, 2); break;
    case 2: outs[0] = weft_dstack(cx, a, 2); break;
    case 3: outs[0] = weft_column_stack(cx, a, 2); break;
    case 4: outs[0] = weft_hstack(cx, a + 2, 2); break;   /* matrices [2, 3], [2, 1] */
    default: outs[0] = weft_column_stack(cx, mixed, 2); break;
    }
    return weft_ctx_status(cx);
}

Test(ops_numpy_shape, stacks_join_as_numpy)
{
    const double p[3] = { 1, 2, 3 }, q[3] = { 4, 5, 6 }, m[6] = { 7, 8, 9, 10, 11, 12 };
    weft_tensor *args[5] = { test_tensor(WEFT_I64, 1, DIMS(3), p),
                             test_tensor(WEFT_I64, 1, DIMS(3), q),
                             test_tensor(WEFT_I64, 2, DIMS(2, 3), m),
                             test_tensor(WEFT_I64, 2, DIMS(2, 1), q),
                             test_tensor(WEFT_I64, 1, DIMS(2), m) }, *y[6];
    for (int o = 0; o < 6; o++)
        op_results_everywhere(stacks_body, &o, args, 5, &y[o], 1, "stacks");
    static const struct { int rank; int64_t dims[3]; double v[12]; } want[6] = {
        { 1, { 6 }, { 1, 2, 3, 4, 5, 6 } },
        { 2, { 2, 3 }, { 1, 2, 3, 4, 5, 6 } },
        { 3, { 1, 3, 2 }, { 1, 4, 2, 5, 3, 6 } },
        { 2, { 3, 2 }, { 1, 4, 2, 5, 3, 6 } },
        { 2, { 2, 4 }, { 7, 8, 9, 4, 10, 11, 12, 5 } },
        { 2, { 2, 2 }, { 7, 4, 8, 5 } },
    };
    for (int o = 0; o < 6; o++) {
        test_assert_shape(y[o], WEFT_I64, want[o].rank, want[o].dims, "stack");
        for (int64_t i = 0; i < weft_tensor_numel(y[o]); i++)
            cr_assert_eq(test_element(y[o], i), want[o].v[i], "output %d element %lld", o,
                         (long long)i);
        weft_tensor_release(y[o]);
    }
    for (int k = 0; k < 5; k++)
        weft_tensor_release(args[k]);
}

/* np.block of the rows of a[], *user: 0 of 2 and 1 blocks, 1 of 2 and 2,
 * 2 of 1, 2 and 1. */
static int block_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    static const size_t counts[3][3] = { { 2, 1 }, { 2, 2 }, { 1, 2, 1 } };
    int which = *(const int *)user;
    outs[0] = weft_block(cx, a, counts[which], which == 2 ? 3 : 2);
    return weft_ctx_status(cx);
}

Test(ops_numpy_shape, block_is_numpys)
{
    double v[6] = { 5, 6, 7, 8, 9, 10 }, c[5] = { -2, -1, 0, 1, 2 };
    weft_tensor *args[11] = {
        test_tensor(WEFT_F64, 2, DIMS(2, 2), (const double[]){ 1, 2, 3, 4 }),
        test_tensor(WEFT_I32, 2, DIMS(2, 3), v),
        test_tensor(WEFT_F64, 1, DIMS(5), c),
        test_tensor(WEFT_I32, 0, NULL, (const double[]){ 1 }),
        test_tensor(WEFT_I32, 0, NULL, (const double[]){ 2 }),
        test_tensor(WEFT_I32, 0, NULL, (const double[]){ 3 }),
        test_tensor(WEFT_I32, 0, NULL, (const double[]){ 4 }),
        test_tensor(WEFT_F64, 1, DIMS(3), (const double[]){ -1, -2, -3 }),
        test_tensor(WEFT_F64, 3, DIMS(1, 2, 2), (const double[]){ 0, 1, 2, 3 }),
        test_tensor(WEFT_F64, 3, DIMS(1, 2, 1), (const double[]){ 9, 8 }),
        test_tensor(WEFT_F64, 1, DIMS(3), (const double[]){ 4, 5, 6 }),
    };
    static const struct { weft_dtype dt; int rank; int64_t dims[3]; double v[15]; } want[3] = {
        { WEFT_F64, 2, { 3, 5 }, { 1, 2, 5, 6, 7, 3, 4, 8, 9, 10, -2, -1, 0, 1, 2 } },
        { WEFT_I32, 2, { 2, 2 }, { 1, 2, 3, 4 } },
        { WEFT_F64, 3, { 1, 4, 3 }, { -1, -2, -3, 0, 1, 9, 2, 3, 8, 4, 5, 6 } },
    };
    /* Each case's blocks: a matrix row over a vector, four scalars, 3-D
     * blocks between two vectors. */
    static const size_t first[3] = { 0, 3, 7 }, count[3] = { 3, 4, 4 };
    for (int o = 0; o < 3; o++) {
        weft_tensor *y;
        op_results_everywhere(block_body, &o, args + first[o], count[o], &y, 1, "block");
        test_assert_shape(y, want[o].dt, want[o].rank, want[o].dims, "block");
        op_expect_values(y, want[o].dt, want[o].v, weft_tensor_numel(y), "block");
        weft_tensor_release(y);
    }
    for (int k = 0; k < 11; k++)
        weft_tensor_release(args[k]);
}

static int append_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_append(cx, a[0], a[1], WEFT_ALL_AXES);
    outs[1] = weft_append(cx, a[0], a[0], 1);
    return weft_ctx_status(cx);
}

Test(ops_numpy_shape, append_flattens_for_none)
{
    const double m[4] = { 1, 2, 3, 4 }, v[3] = { 5, 6, 7 };
    weft_tensor *args[2] = { test_tensor(WEFT_F32, 2, DIMS(2, 2), m),
                             test_tensor(WEFT_F32, 1, DIMS(3), v) }, *y[2];
    op_results_everywhere(append_body, NULL, args, 2, y, 2, "append");
    test_assert_shape(y[0], WEFT_F32, 1, DIMS(7), "append none");
    for (int i = 0; i < 7; i++)
        cr_assert_eq(test_element(y[0], i), i + 1.0);
    test_assert_shape(y[1], WEFT_F32, 2, DIMS(2, 4), "append axis 1");
    const double w[8] = { 1, 2, 1, 2, 3, 4, 3, 4 };
    for (int i = 0; i < 8; i++)
        cr_assert_eq(test_element(y[1], i), w[i]);
    for (int k = 0; k < 2; k++) {
        weft_tensor_release(y[k]);
        weft_tensor_release(args[k]);
    }
}

/* ---- diag, diagflat and select ----------------------------------------------------- */

static int diag_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    int64_t k = *(const int64_t *)user;
    outs[0] = weft_diag(cx, a[0], k);       /* vector to matrix */
    outs[1] = weft_diag(cx, a[1], k);       /* matrix to vector */
    outs[2] = weft_diagflat(cx, a[2], k);   /* [2, 2] flattened */
    return weft_ctx_status(cx);
}

Test(ops_numpy_shape, diag_is_numpys)
{
    fill24();
    const double v[3] = { 1, 2, 3 }, f[4] = { 4, 5, 6, 7 };
    weft_tensor *args[3] = { test_tensor(WEFT_F64, 1, DIMS(3), v),
                             test_tensor(WEFT_F64, 2, DIMS(3, 5), v24),
                             test_tensor(WEFT_F64, 2, DIMS(2, 2), f) };
    for (int64_t k = -4; k <= 6; k++) {
        weft_tensor *y[3];
        op_results_everywhere(diag_body, &k, args, 3, y, 3, "diag");
        int64_t n = 3 + (k < 0 ? -k : k), n4 = 4 + (k < 0 ? -k : k);
        test_assert_shape(y[0], WEFT_F64, 2, DIMS(n, n), "diag of a vector");
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < n; j++) {
                int64_t at = k >= 0 ? i : j;   /* v[at] sits at (at, at + k) or (at - k, at) */
                bool on = j - i == k && at < 3;
                cr_assert_eq(test_element(y[0], i * n + j), on ? v[at] : 0.0,
                             "k %lld [%lld, %lld]", (long long)k, (long long)i, (long long)j);
            }
        int64_t len = 0;
        for (int64_t i = 0; i < 3; i++)
            len += i + k >= 0 && i + k < 5;
        test_assert_shape(y[1], WEFT_F64, 1, &len, "diag of a matrix");
        for (int64_t e = 0, i = 0; i < 3; i++)
            if (i + k >= 0 && i + k < 5)
                cr_assert_eq(test_element(y[1], e++), v24[i * 5 + i + k], "k %lld", (long long)k);
        test_assert_shape(y[2], WEFT_F64, 2, DIMS(n4, n4), "diagflat");
        for (int64_t i = 0; i < 4; i++) {
            int64_t r = k >= 0 ? i : i - k, c = k >= 0 ? i + k : i;
            cr_assert_eq(test_element(y[2], r * n4 + c), f[i], "diagflat k %lld", (long long)k);
        }
        for (int o = 0; o < 3; o++)
            weft_tensor_release(y[o]);
    }
    for (int o = 0; o < 3; o++)
        weft_tensor_release(args[o]);
}

static int select_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    weft_value *x = a[0];
    weft_value *conds[2] = { weft_lt(cx, x, weft_const_f64(cx, 3)),
                             weft_gt(cx, x, weft_const_f64(cx, 1)) };
    weft_value *choices[2] = { x, weft_square(cx, x) };
    outs[0] = weft_select(cx, conds, choices, 2, weft_const_f64(cx, -1));
    return weft_ctx_status(cx);
}

/* NumPy's doc example: x < 3 takes x, else x > 5 ... here x > 1 takes
 * x^2 (never reached below 3: the first condition wins), else -1. */
Test(ops_numpy_shape, select_takes_the_first_true_condition)
{
    const double v[6] = { 0, 1, 2, 3, 4, NAN };
    weft_tensor *x = test_tensor(WEFT_F64, 1, DIMS(6), v), *y;
    op_results_everywhere(select_body, NULL, &x, 1, &y, 1, "select");
    const double want[6] = { 0, 1, 2, 9, 16, -1 };
    for (int i = 0; i < 6; i++)
        cr_assert_eq(test_element(y, i), want[i], "element %d", i);
    weft_tensor_release(y);
    weft_tensor_release(x);
    const grad_arg g = { 1, { 6 }, (const double[]){ 0.5, 1.5, 2.5, 3.5, 4.5, -2 } };
    grad_case c = { select_body, NULL, 1, 1 };
    expect_gradients(&c, &g, "select");
}

/* ---- broadcast_arrays ------------------------------------------------------------- */

static int broadcast_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    return weft_broadcast_arrays(cx, a, 3, outs);
}

Test(ops_numpy_shape, broadcast_arrays_is_numpys)
{
    const double col[2] = { 1, 2 }, row[3] = { 10, 20, 30 };
    weft_tensor *args[3] = { test_tensor(WEFT_I32, 2, DIMS(2, 1), col),
                             test_tensor(WEFT_F64, 1, DIMS(3), row),
                             test_tensor(WEFT_BOOL, 0, NULL, (const double[]){ 1 }) }, *y[3];
    op_results_everywhere(broadcast_body, NULL, args, 3, y, 3, "broadcast_arrays");
    const weft_dtype dts[3] = { WEFT_I32, WEFT_F64, WEFT_BOOL };
    for (int o = 0; o < 3; o++) {
        test_assert_shape(y[o], dts[o], 2, DIMS(2, 3), "broadcast_arrays");
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 3; j++)
                cr_assert_eq(test_element(y[o], i * 3 + j), o == 0 ? col[i] : o == 1 ? row[j] : 1,
                             "output %d [%d, %d]", o, i, j);
        weft_tensor_release(y[o]);
        weft_tensor_release(args[o]);
    }
}

static int broadcast_sizes_body(weft_ctx *cx, weft_value *const *a, weft_value **outs,
                                void *user)
{
    (void)user;
    weft_value *pair[2] = { a[0], weft_expand_dims(cx, a[1], 1) }, *b[2];
    if (weft_broadcast_arrays(cx, pair, 2, b) != 0)
        return weft_ctx_status(cx);
    outs[0] = weft_add(cx, b[0], b[1]);
    return weft_ctx_status(cx);
}

/* Dims unknown while tracing broadcast when the function runs: one trace
 * for every size. */
Test(ops_numpy_shape, broadcast_arrays_of_unknown_dims)
{
    const weft_spec sig[2] = { { WEFT_F64, 1, { WEFT_DIM_ANY } },
                               { WEFT_F64, 1, { WEFT_DIM_ANY } } };
    weft_function *f = op_signature_function(rt, broadcast_sizes_body, NULL, sig, 2);
    for (int64_t n = 1; n <= 3; n++) {
        weft_tensor *a = test_tensor(WEFT_F64, 1, &n, (const double[]){ 1, 2, 3 });
        weft_tensor *b = test_tensor(WEFT_F64, 1, DIMS(2), (const double[]){ 10, 20 }), *y;
        weft_arg args[2] = { weft_arg_tensor(a), weft_arg_tensor(b) };
        cr_assert_eq(weft_function_call(f, args, 2, &y, 1), 0, "%s", weft_errmsg());
        test_assert_shape(y, WEFT_F64, 2, DIMS(2, n), "broadcast sizes");
        for (int i = 0; i < 2; i++)
            for (int64_t j = 0; j < n; j++)
                cr_assert_eq(test_element(y, i * n + j), (i + 1) * 10.0 + (double)j + 1);
        weft_tensor_release(y);
        weft_tensor_release(a);
        weft_tensor_release(b);
    }
    op_destroy_traced_once(&f);
}

/* ---- ravel and the splits ------------------------------------------------------------ */

static int split_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    switch (*(const int *)user) {
    case 0: return weft_array_split(cx, a[0], 3, -1, outs);
    case 1: return weft_hsplit(cx, a[1], 2, outs);
    case 2: return weft_vsplit(cx, a[1], 2, outs);
    case 3: return weft_dsplit(cx, a[1], 2, outs);
    case 4: outs[0] = weft_ravel(cx, a[1]); return weft_ctx_status(cx);
    default: {
        /* 7 columns into 9 sections: 1 each, then two empty ones. */
        weft_value *parts[9];
        int rc = weft_array_split(cx, a[0], 9, 1, parts);
        outs[0] = parts[6];
        outs[1] = parts[8];
        return rc;
    }
    }
}

Test(ops_numpy_shape, splits_are_numpys)
{
    fill24();
    weft_tensor *args[2] = { test_tensor(WEFT_F32, 2, DIMS(2, 7), v24),
                             test_tensor(WEFT_F32, 3, DIMS(2, 4, 2), v24) };
    /* array_split of 7 into 3: 3, 2, 2 columns. */
    weft_tensor *y[3];
    const int which[6] = { 0, 1, 2, 3, 4, 5 };
    op_results_everywhere(split_body, (void *)&which[0], args, 2, y, 3, "array_split");
    const int64_t begin[3] = { 0, 3, 5 }, width[3] = { 3, 2, 2 };
    for (int o = 0; o < 3; o++) {
        test_assert_shape(y[o], WEFT_F32, 2, DIMS(2, width[o]), "array_split");
        for (int r = 0; r < 2; r++)
            for (int64_t c = 0; c < width[o]; c++)
                cr_assert_eq(test_element(y[o], r * width[o] + c),
                             (float)v24[r * 7 + begin[o] + c]);
        weft_tensor_release(y[o]);
    }
    /* hsplit (axis 1), vsplit (0), dsplit (2) of [2, 4, 2] in halves. */
    const int64_t halves[3][3] = { { 2, 2, 2 }, { 1, 4, 2 }, { 2, 4, 1 } };
    const int axis[3] = { 1, 0, 2 };
    for (int k = 0; k < 3; k++) {
        op_results_everywhere(split_body, (void *)&which[k + 1], args, 2, y, 2, "even split");
        for (int o = 0; o < 2; o++) {
            test_assert_shape(y[o], WEFT_F32, 3, halves[k], "even split");
            int64_t e = 0, at[3];
            for (at[0] = 0; at[0] < halves[k][0]; at[0]++)
                for (at[1] = 0; at[1] < halves[k][1]; at[1]++)
                    for (at[2] = 0; at[2] < halves[k][2]; at[2]++, e++) {
                        int64_t src[3] = { at[0], at[1], at[2] };
                        src[axis[k]] += o * halves[k][axis[k]];
                        cr_assert_eq(test_element(y[o], e),
                                     (float)v24[(src[0] * 4 + src[1]) * 2 + src[2]],
                                     "split %d part %d element %lld", k, o, (long long)e);
                    }
            weft_tensor_release(y[o]);
        }
    }
    /* hsplit of a vector splits axis 0. */
    weft_tensor *vec = test_tensor(WEFT_F32, 1, DIMS(4), v24);
    weft_tensor *vargs[2] = { args[0], vec };
    op_results_everywhere(split_body, (void *)&which[1], vargs, 2, y, 2, "hsplit of a vector");
    for (int o = 0; o < 2; o++) {
        test_assert_shape(y[o], WEFT_F32, 1, DIMS(2), "hsplit of a vector");
        cr_assert_eq(test_element(y[o], 1), (float)v24[2 * o + 1]);
        weft_tensor_release(y[o]);
    }
    weft_tensor_release(vec);
    op_results_everywhere(split_body, (void *)&which[4], args, 2, y, 1, "ravel");
    test_assert_shape(y[0], WEFT_F32, 1, DIMS(16), "ravel");
    cr_assert(!memcmp(weft_tensor_data(y[0]), weft_tensor_data(args[1]), 16 * sizeof(float)));
    weft_tensor_release(y[0]);
    /* More sections than elements: NumPy's empty ones at the end. */
    op_results_everywhere(split_body, (void *)&which[5], args, 2, y, 2, "sections past the dim");
    test_assert_shape(y[0], WEFT_F32, 2, DIMS(2, 1), "the last full section");
    cr_assert_eq(test_element(y[0], 1), (float)v24[7 + 6]);
    test_assert_shape(y[1], WEFT_F32, 2, DIMS(2, 0), "an empty section");
    weft_tensor_release(y[0]);
    weft_tensor_release(y[1]);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

static int split_at_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    static const int64_t flat_at[3] = { 3, -2, 20 }, back[2] = { 5, 2 }, cols[2] = { 1, 3 };
    switch (*(const int *)user) {
    case 0: return weft_split_at(cx, a[0], flat_at, 3, 0, outs);
    case 1: return weft_split_at(cx, a[0], back, 2, -1, outs);
    case 2: return weft_split_at(cx, a[1], cols, 2, 1, outs);
    default: return weft_split_at(cx, a[1], NULL, 0, 0, outs);
    }
}

/* np.split by indices: arange(10) at [3, -2, 20] (a negative index from
 * the end, one past it: an empty part) and at [5, 2] (an empty middle),
 * arange(12).reshape(3, 4) at [1, 3] along axis 1 and at no index; the
 * vector's length unknown while tracing, with one trace. */
Test(ops_numpy_shape, split_at_indices_is_numpys)
{
    double v[12];
    for (int i = 0; i < 12; i++)
        v[i] = i;
    weft_tensor *args[2] = { test_tensor(WEFT_I64, 1, DIMS(10), v),
                             test_tensor(WEFT_I64, 2, DIMS(3, 4), v) }, *y[4];
    static const struct {
        int n;
        int64_t first[4], len[4];   /* each part's first element and size */
    } want[4] = { { 4, { 0, 3, 8, 0 }, { 3, 5, 2, 0 } }, { 3, { 0, 0, 2 }, { 5, 0, 8 } },
                  { 3, { 0, 1, 3 }, { 3, 6, 3 } }, { 1, { 0 }, { 12 } } };
    for (int k = 0; k < 4; k++) {
        op_results_everywhere(split_at_body, &k, args, 2, y, (size_t)want[k].n, "split_at");
        for (int o = 0; o < want[k].n; o++) {
            cr_assert_eq(weft_tensor_numel(y[o]), want[k].len[o], "case %d part %d", k, o);
            if (want[k].len[o] > 0)
                cr_assert_eq(test_element(y[o], 0), want[k].first[o], "case %d part %d", k, o);
            weft_tensor_release(y[o]);
        }
    }
    const weft_spec sig[2] = { { WEFT_I64, 1, { WEFT_DIM_ANY } }, { WEFT_I64, 2, { 3, 4 } } };
    weft_function_desc d = { .name = "split_at", .body = split_at_body, .user = &(int){ 0 },
                             .n_args = 2, .n_outs = 4, .input_signature = sig };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
    for (int64_t n = 10; n >= 4; n -= 6) {
        weft_tensor *a = test_tensor(WEFT_I64, 1, &n, v);
        weft_arg in[2] = { weft_arg_tensor(a), weft_arg_tensor(args[1]) };
        cr_assert_eq(weft_function_call(f, in, 2, y, 4), 0, "%s", weft_errmsg());
        /* n 4: [0, 1, 2], [3:-2] = [], [2:20] = [2, 3], []. */
        const int64_t len10[4] = { 3, 5, 2, 0 }, len4[4] = { 3, 0, 2, 0 };
        for (int o = 0; o < 4; o++) {
            cr_assert_eq(weft_tensor_numel(y[o]), n == 10 ? len10[o] : len4[o], "n %lld part %d",
                         (long long)n, o);
            weft_tensor_release(y[o]);
        }
        weft_tensor_release(a);
    }
    op_destroy_traced_once(&f);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

static int split_refused_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    weft_value *parts[3] = { NULL, NULL, NULL };
    int rc;
    switch (*(const int *)user) {
    case 0: rc = weft_array_split(cx, a[0], 0, 0, parts); break;
    case 1: rc = weft_array_split(cx, a[0], 2, 2, parts); break;
    case 4: rc = weft_split_at(cx, a[0], NULL, 2, 0, parts); break;
    case 5: rc = weft_split_at(cx, a[0], (const int64_t[]){ 1 }, 1, 1, parts); break;
    case 2: rc = weft_vsplit(cx, a[0], 2, parts); break;
    default: rc = weft_hsplit(cx, a[1], 3, parts); break;
    }
    cr_assert(!parts[0] && !parts[1] && !parts[2], "outs left NULL");
    outs[0] = NULL;
    return rc;
}

Test(ops_numpy_shape, split_refusals)
{
    fill24();
    weft_tensor *args[2] = { test_tensor(WEFT_F64, 1, DIMS(4), v24),
                             test_tensor(WEFT_F64, 2, DIMS(2, 4), v24) };
    const op_error_case cases[] = {
        { 0, WEFT_EINVAL, "weft_array_split: 0 sections (1..1024)" },
        { 1, WEFT_ESHAPE, "weft_array_split: axis 2 is not an axis of f64[4] with a dim known" },
        { 2, WEFT_ESHAPE, "weft_vsplit: a f64[4] has not a rank of 2 or more" },
        { 3, WEFT_ESHAPE, "weft_split: axis 1 of f64[2,4] (4) does not split into 3 equal" },
        { 4, WEFT_EINVAL, "weft_split_at: indices is NULL" },
        { 5, WEFT_EINVAL, "weft_split_at: axis 1 is not in [-1, 1)" },
    };
    op_expect_errors(rt, split_refused_body, cases, 6, args, 2);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

/* ---- Refusals -------------------------------------------------------------------- */

static int refused_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    switch (*(const int *)user) {
    case 0: outs[0] = weft_flip(cx, a[0], (const int[]){ 0, -2 }, 2); break;
    case 1: outs[0] = weft_flip(cx, a[0], (const int[]){ 2 }, 1); break;
    case 2: outs[0] = weft_fliplr(cx, a[1]); break;
    case 3: outs[0] = weft_hstack(cx, a, 0); break;
    case 4: outs[0] = weft_diag(cx, a[2], 0); break;
    case 5: outs[0] = weft_select(cx, a, a, 1, a[0]); break;
    case 6: outs[0] = weft_select(cx, a, a, 0, a[0]); break;
    case 8: outs[0] = weft_block(cx, a, (const size_t[]){ 1 }, 0); break;
    case 9: outs[0] = weft_block(cx, a, (const size_t[]){ 1, 0 }, 2); break;
    case 10: outs[0] = weft_block(cx, a, NULL, 1); break;
    case 11: outs[0] = weft_block(cx, a, (const size_t[]){ 200, 57 }, 2); break;
    default: {
        weft_value *o[1] = { NULL };
        weft_broadcast_arrays(cx, a, 0, o);
        outs[0] = o[0];
        break;
    }
    }
    return weft_ctx_status(cx);
}

Test(ops_numpy_shape, refusals)
{
    weft_tensor *args[3] = { test_tensor(WEFT_F64, 2, DIMS(1, 2), (const double[]){ 1, 2 }),
                             test_tensor(WEFT_F64, 1, DIMS(2), (const double[]){ 1, 2 }),
                             test_tensor(WEFT_F64, 3, DIMS(1, 1, 1), (const double[]){ 1 }) };
    const op_error_case cases[] = {
        { 0, WEFT_EINVAL, "weft_flip: axis -2 named twice" },
        { 1, WEFT_EINVAL, "weft_flip: axis 2 is not in [-2, 2)" },
        { 2, WEFT_ESHAPE, "weft_fliplr: a f64[2] has not a rank of 2 or more" },
        { 3, WEFT_EINVAL, "weft_hstack: 0 inputs (1..256 wanted)" },
        { 4, WEFT_ESHAPE, "weft_diag: v f64[1,1,1] is not a vector or a matrix" },
        { 5, WEFT_EDTYPE, "weft_select: condition 0 f64[1,2] is not bool" },
        { 6, WEFT_EINVAL, "weft_select: 0 conditions (1 or more wanted)" },
        { 7, WEFT_EINVAL, "weft_broadcast_arrays: 0 inputs (1 or more)" },
        { 8, WEFT_EINVAL, "weft_block: 0 rows (1..256 wanted)" },
        { 9, WEFT_EINVAL, "weft_block: row 1 is empty" },
        { 10, WEFT_EINVAL, "weft_block: 1 rows at NULL (1..256 wanted)" },
        { 11, WEFT_EINVAL, "weft_block: more than 256 blocks" },
    };
    op_expect_errors(rt, refused_body, cases, sizeof cases / sizeof *cases, args, 3);
    for (int k = 0; k < 3; k++)
        weft_tensor_release(args[k]);
}
