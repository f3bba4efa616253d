/* np.nanargmax / nanargmin, np.indices, np.trim_zeros, np.delete,
 * np.insert and np.fill_diagonal against NumPy 1.24's printed results;
 * eager and traced on 1, 2 and 4 workers with the same bits; trim_zeros
 * traced once for every input; the All-NaN slice failing when the call
 * runs; gradients; the refusals. */
#include <math.h>
#include <string.h>

#include "grad_check.h"
#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_numpy_edit, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

#define DIMS(...) ((const int64_t[]){ __VA_ARGS__ })

/* ---- nanargmax and nanargmin ---------------------------------------------- */

/* user: { 0 for nanargmax or 1 for nanargmin, the axis } */
static int nanarg_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const int *op = user;
    outs[0] = op[0] ? weft_nanargmin(cx, a[0], op[1]) : weft_nanargmax(cx, a[0], op[1]);
    return weft_ctx_status(cx);
}

Test(ops_numpy_edit, nanargmax_and_nanargmin_leave_nan_out)
{
    static const double v[12] = { NAN, -1, 3, 0, 5, NAN, NAN, NAN, 2, 4, -INFINITY, 1 };
    weft_tensor *a = test_tensor(WEFT_F64, 2, DIMS(3, 4), v), *y;
    /* NumPy's results for each. */
    const struct { int op[2]; int rank; double want[4]; } cases[] = {
        { { 0, 1 }, 1, { 2, 0, 1 } },
        { { 1, 1 }, 1, { 1, 0, 2 } },
        { { 0, 0 }, 1, { 1, 2, 0, 2 } },
        { { 1, 0 }, 1, { 2, 0, 2, 0 } },
        { { 0, WEFT_ALL_AXES }, 0, { 4 } },
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        op_results_everywhere(nanarg_body, (void *)cases[k].op, &a, 1, &y, 1, "nanarg");
        cr_assert_eq(weft_tensor_rank(y), cases[k].rank, "case %zu", k);
        op_expect_values(y, WEFT_I64, cases[k].want, weft_tensor_numel(y), "nanarg");
        weft_tensor_release(y);
    }
    weft_tensor_release(a);
    /* Integers are weft_argmax's. */
    weft_tensor *ints = test_tensor(WEFT_I32, 1, DIMS(4), (const double[]){ 3, 9, 9, -1 });
    static const int first_max[2] = { 0, 0 };
    op_results_everywhere(nanarg_body, (void *)first_max, &ints, 1, &y, 1, "integers");
    op_expect_values(y, WEFT_I64, (const double[]){ 1 }, 1, "integers");
    weft_tensor_release(y);
    weft_tensor_release(ints);
}

/* A slice of NaNs fails the call when it runs, eagerly and traced; the
 * rows, which hold a number each, do not. */
Test(ops_numpy_edit, an_all_nan_slice_fails_the_call)
{
    weft_tensor *a = test_tensor(WEFT_F32, 2, DIMS(2, 2), (const double[]){ 1, NAN, 2, NAN });
    for (int min = 0; min < 2; min++) {
        const int rows[2] = { min, 1 }, columns[2] = { min, 0 };
        weft_tensor *y;
        op_results_everywhere(nanarg_body, (void *)rows, &a, 1, &y, 1, "rows");
        op_expect_values(y, WEFT_I64, (const double[]){ 0, 0 }, 2, "rows");
        weft_tensor_release(y);
        for (int eager = 0; eager < 2; eager++) {
            y = NULL;
            cr_assert_eq(op_call(rt, nanarg_body, (void *)columns, &a, 1, &y, 1, eager),
                         WEFT_EINVAL);
            cr_assert(strstr(weft_errmsg(), min ? "weft_nanargmin: All-NaN slice encountered"
                                                : "weft_nanargmax: All-NaN slice encountered"),
                      "%s", weft_errmsg());
            cr_assert_null(y);
        }
    }
    weft_tensor_release(a);
}

/* ---- indices, trim_zeros, delete, fill_diagonal ------------------------------- */

/* user: 0 indices of [2, 3] as i64, 1 as f32, 2 of rank 0 */
static int indices_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)a;
    int which = *(const int *)user;
    outs[0] = which == 2 ? weft_indices(cx, 0, NULL, WEFT_I64)
                         : weft_indices(cx, 2, DIMS(2, 3), which ? WEFT_F32 : WEFT_I64);
    return weft_ctx_status(cx);
}

Test(ops_numpy_edit, indices_is_numpys)
{
    static const double want[12] = { 0, 0, 0, 1, 1, 1, 0, 1, 2, 0, 1, 2 };
    for (int which = 0; which < 3; which++) {
        weft_tensor *y;
        op_results_everywhere(indices_body, &which, NULL, 0, &y, 1, "indices");
        if (which == 2) {
            test_assert_shape(y, WEFT_I64, 1, DIMS(0), "rank 0");
        } else {
            test_assert_shape(y, which ? WEFT_F32 : WEFT_I64, 3, DIMS(2, 2, 3), "indices");
            op_expect_values(y, which ? WEFT_F32 : WEFT_I64, want, 12, "indices");
        }
        weft_tensor_release(y);
    }
}

/* user: the trim string */
static int trim_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    outs[0] = weft_trim_zeros(cx, a[0], user);
    return weft_ctx_status(cx);
}

Test(ops_numpy_edit, trim_zeros_is_numpys)
{
    weft_tensor *f = test_tensor(WEFT_F64, 1, DIMS(8),
                                 (const double[]){ 0, 0, -0.0, 1, 0, NAN, 0, 0 });
    weft_tensor *y;
    op_results_everywhere(trim_body, NULL, &f, 1, &y, 1, "fb");   /* NULL: "fb" */
    op_expect_values(y, WEFT_F64, (const double[]){ 1, 0, NAN }, 3, "fb");
    weft_tensor_release(y);
    weft_tensor *i = test_tensor(WEFT_I32, 1, DIMS(6), (const double[]){ 0, 0, 1, 0, 2, 0 });
    const struct { const char *trim; double want[6]; int64_t n; } cases[] = {
        { "F", { 1, 0, 2, 0 }, 4 }, { "B", { 0, 0, 1, 0, 2 }, 5 }, { "", { 0, 0, 1, 0, 2, 0 }, 6 },
    };
    for (int k = 0; k < 3; k++) {
        op_results_everywhere(trim_body, (void *)cases[k].trim, &i, 1, &y, 1, cases[k].trim);
        op_expect_values(y, WEFT_I32, cases[k].want, cases[k].n, cases[k].trim);
        weft_tensor_release(y);
    }
    weft_tensor_release(i);
    weft_tensor_release(f);
    /* One trace for every length and content, all zeros (empty) too. */
    weft_spec sig;
    cr_assert_eq(weft_spec_parse("i64[?]", &sig), 0);
    weft_function *fn = op_signature_function(rt, trim_body, NULL, &sig, 1);
    for (int64_t n = 1; n <= 5; n++) {
        double v[5] = { 0 };
        v[n / 2] = (double)(n % 3);   /* n = 3: all zeros */
        weft_tensor *x = test_tensor(WEFT_I64, 1, DIMS(n), v);
        weft_arg arg = weft_arg_tensor(x);
        cr_assert_eq(weft_function_call(fn, &arg, 1, &y, 1), 0, "%s", weft_errmsg());
        cr_assert_eq(weft_tensor_numel(y), n % 3 ? 1 : 0, "length %lld", (long long)n);
        weft_tensor_release(y);
        weft_tensor_release(x);
    }
    op_destroy_traced_once(&fn);
}

/* user: 0 columns 1, -1 and 1 again of axis 1; 1 flattened 0 and 5 */
static int delete_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    static const int64_t cols[3] = { 1, -1, 1 }, flat[2] = { 0, 5 };
    outs[0] = *(const int *)user ? weft_delete(cx, a[0], flat, 2, WEFT_ALL_AXES)
                                 : weft_delete(cx, a[0], cols, 3, 1);
    return weft_ctx_status(cx);
}

Test(ops_numpy_edit, delete_is_numpys)
{
    double v[12];
    for (int k = 0; k < 12; k++)
        v[k] = k;
    weft_tensor *a = test_tensor(WEFT_I64, 2, DIMS(3, 4), v), *y;
    int which = 0;
    op_results_everywhere(delete_body, &which, &a, 1, &y, 1, "columns");
    test_assert_shape(y, WEFT_I64, 2, DIMS(3, 2), "columns");
    op_expect_values(y, WEFT_I64, (const double[]){ 0, 2, 4, 6, 8, 10 }, 6, "columns");
    weft_tensor_release(y);
    weft_tensor_release(a);
    a = test_tensor(WEFT_F32, 2, DIMS(2, 3), v);
    which = 1;
    op_results_everywhere(delete_body, &which, &a, 1, &y, 1, "flattened");
    test_assert_shape(y, WEFT_F32, 1, DIMS(4), "flattened");
    op_expect_values(y, WEFT_F32, (const double[]){ 1, 2, 3, 4 }, 4, "flattened");
    weft_tensor_release(y);
    weft_tensor_release(a);
}

/* An insert case: obj[0..n_obj) along axis, values a[1] or a weak 9.5. */
typedef struct insert_case {
    int64_t obj[4];
    size_t n_obj;
    int axis;
    bool weak;
} insert_case;

static int insert_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const insert_case *c = user;
    weft_value *values = c->weak ? weft_const_f64(cx, 9.5) : a[1];
    outs[0] = weft_insert(cx, a[0], c->obj, c->n_obj, values, c->axis);
    return weft_ctx_status(cx);
}

/* weft_insert of a and values (NULL: the weak 9.5) by c has dims and
 * NumPy's elements want, the same everywhere. */
static void expect_insert(weft_tensor *a, weft_tensor *values, insert_case c, int rank,
                          const int64_t *dims, const double *want, const char *what)
{
    weft_tensor *args[2] = { a, values }, *y;
    c.weak = values == NULL;
    op_results_everywhere(insert_body, &c, args, values ? 2 : 1, &y, 1, what);
    test_assert_shape(y, weft_tensor_dtype(a), rank, dims, what);
    int64_t n = 1;
    for (int d = 0; d < rank; d++)
        n *= dims[d];
    op_expect_values(y, weft_tensor_dtype(a), want, n, what);
    weft_tensor_release(y);
}

Test(ops_numpy_edit, insert_is_numpys)
{
    double v[12];
    for (int k = 0; k < 12; k++)
        v[k] = k;
    weft_tensor *a = test_tensor(WEFT_F32, 2, DIMS(3, 4), v);
    /* Several indices, equal ones in the order given, -1 the last. */
    weft_tensor *row = test_tensor(WEFT_F64, 1, DIMS(4), (const double[]){ 10, 20, 30, 40 });
    expect_insert(a, row, (insert_case){ { 1, 3, 1, -1 }, 4, 1, false }, 2, DIMS(3, 8),
                  (const double[]){ 0, 10, 30, 1, 2, 20, 40, 3, 4, 10, 30, 5, 6, 20, 40, 7,
                                    8, 10, 30, 9, 10, 20, 40, 11 },
                  "four columns");
    /* One index: as many slices as values has along the axis. */
    weft_tensor *col = test_tensor(WEFT_F32, 2, DIMS(3, 1), (const double[]){ 7, 8, 9 });
    expect_insert(a, col, (insert_case){ { 1 }, 1, 1, false }, 2, DIMS(3, 5),
                  (const double[]){ 0, 7, 1, 2, 3, 4, 8, 5, 6, 7, 8, 9, 9, 10, 11 },
                  "one column");
    weft_tensor *pair = test_tensor(WEFT_F32, 1, DIMS(2), (const double[]){ 5, 6 });
    expect_insert(a, pair, (insert_case){ { 2 }, 1, -1, false }, 2, DIMS(3, 6),
                  (const double[]){ 0, 1, 5, 6, 2, 3, 4, 5, 5, 6, 6, 7, 8, 9, 5, 6, 10, 11 },
                  "two columns from one index");
    weft_tensor_release(a);
    weft_tensor_release(row);
    weft_tensor_release(col);
    weft_tensor_release(pair);

    a = test_tensor(WEFT_I32, 2, DIMS(3, 4), v);
    expect_insert(a, NULL, (insert_case){ { 0, 3 }, 2, 0, false }, 2, DIMS(5, 4),
                  (const double[]){ 9, 9, 9, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
                                    9, 9, 9, 9 },
                  "a weak 9.5 cast to i32, first and last");
    weft_tensor *three = test_tensor(WEFT_I64, 1, DIMS(3), (const double[]){ 1, 2, 3 });
    expect_insert(a, three, (insert_case){ { 5, 0, 12 }, 3, WEFT_ALL_AXES, false }, 1,
                  DIMS(15), (const double[]){ 2, 0, 1, 2, 3, 4, 1, 5, 6, 7, 8, 9, 10, 11, 3 },
                  "flattened");
    weft_tensor *rows = test_tensor(WEFT_I32, 2, DIMS(2, 4), (const double[]){ 1, 2, 3, 4, 5,
                                                                               6, 7, 8 });
    expect_insert(a, rows, (insert_case){ { 3 }, 1, 0, false }, 2, DIMS(5, 4),
                  (const double[]){ 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 1, 2, 3, 4, 5, 6, 7,
                                    8 },
                  "two rows at the end");
    weft_tensor *first = test_tensor(WEFT_I32, 2, DIMS(1, 4), (const double[]){ 1, 2, 3, 4 });
    expect_insert(a, first, (insert_case){ { -3 }, 1, 0, false }, 2, DIMS(4, 4),
                  (const double[]){ 1, 2, 3, 4, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 },
                  "one row before row -3");
    weft_tensor_release(first);
    expect_insert(a, NULL, (insert_case){ { 0 }, 0, 0, false }, 2, DIMS(3, 4), v,
                  "no index");
    weft_tensor_release(a);
    weft_tensor_release(three);
    weft_tensor_release(rows);
}

/* user: 0 [7, 8] into a's diagonal, 1 the same wrapping, 2 a weak 2.5 */
static int fill_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    int which = *(const int *)user;
    weft_value *val = which == 2 ? weft_const_f64(cx, 2.5) : a[1];
    outs[0] = weft_fill_diagonal(cx, a[0], val, which == 1);
    return weft_ctx_status(cx);
}

Test(ops_numpy_edit, fill_diagonal_is_numpys)
{
    weft_tensor *args[2] = { test_tensor(WEFT_I32, 2, DIMS(5, 3), (const double[15]){ 0 }),
                             test_tensor(WEFT_F64, 1, DIMS(2), (const double[]){ 7.9, 8 }) }, *y;
    /* NumPy casts 7.9 to 7 (the int32 array's dtype). */
    static const double want[2][15] = {
        { 7, 0, 0, 0, 8, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0 },
        { 7, 0, 0, 0, 8, 0, 0, 0, 7, 0, 0, 0, 8, 0, 0 },
    };
    for (int which = 0; which < 2; which++) {
        op_results_everywhere(fill_body, &which, args, 2, &y, 1, "tall");
        op_expect_values(y, WEFT_I32, want[which], 15, which ? "tall, wrapped" : "tall");
        weft_tensor_release(y);
    }
    weft_tensor_release(args[0]);
    /* A cube's diagonal: flat 0, 13 and 26 (step 1 + 3 + 9). */
    double cube[27];
    for (int k = 0; k < 27; k++)
        cube[k] = k;
    args[0] = test_tensor(WEFT_F64, 3, DIMS(3, 3, 3), cube);
    int which = 2;
    op_results_everywhere(fill_body, &which, args, 2, &y, 1, "cube");
    cube[0] = cube[13] = cube[26] = 2.5;
    op_expect_values(y, WEFT_F64, cube, 27, "cube");
    weft_tensor_release(y);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

/* user: 0 and 3 along axis 1, 1 along axis 0 with a scalar, 2 into arr
 * flattened */
static int put_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    switch (*(const int *)user) {
    case 0:
    case 3:  outs[0] = weft_put_along_axis(cx, a[0], a[1], a[2], 1); break;
    case 1:  outs[0] = weft_put_along_axis(cx, a[0], a[1], weft_const_f64(cx, 99), 0); break;
    default: outs[0] = weft_put_along_axis(cx, a[0], a[1], a[2], WEFT_ALL_AXES); break;
    }
    return weft_ctx_status(cx);
}

Test(ops_numpy_edit, put_along_axis_is_numpys)
{
    double v[12];
    for (int k = 0; k < 12; k++)
        v[k] = k;
    weft_tensor *arr = test_tensor(WEFT_F64, 2, DIMS(3, 4), v);
    const struct { int64_t idims[2]; double idx[4]; int vrank; double vals[3]; double want[12]; }
        cases[] = {
            { { 3, 1 }, { 1, -1, 0 }, 2, { 10, 20, 30 },
              { 0, 10, 2, 3, 4, 5, 6, 20, 30, 9, 10, 11 } },
            { { 1, 4 }, { 0, 2, 0, 1 }, 0, { 0 }, { 99, 1, 99, 3, 4, 5, 6, 99, 8, 99, 10, 11 } },
            /* Index 1 twice: the last value wins. */
            { { 3, 0 }, { 1, 1, 5 }, 1, { 7, 8, 9 }, { 0, 8, 2, 3, 4, 9, 6, 7, 8, 9, 10, 11 } },
            /* One index for every row (a dim of 1 off axis broadcasts). */
            { { 1, 1 }, { 2 }, 2, { -5 }, { 0, 1, -5, 3, 4, 5, -5, 7, 8, 9, -5, 11 } },
        };
    for (int which = 0; which < 4; which++) {
        int irank = which == 2 ? 1 : 2;
        weft_tensor *args[3] = { arr, test_tensor(WEFT_I64, irank, cases[which].idims,
                                                  cases[which].idx),
                                 test_tensor(WEFT_F64, cases[which].vrank, cases[which].idims,
                                             cases[which].vals) }, *y;
        op_results_everywhere(put_body, &which, args, 3, &y, 1, "put_along_axis");
        test_assert_shape(y, WEFT_F64, 2, DIMS(3, 4), "put_along_axis");
        op_expect_values(y, WEFT_F64, cases[which].want, 12, "put_along_axis");
        weft_tensor_release(y);
        weft_tensor_release(args[1]);
        weft_tensor_release(args[2]);
    }
    weft_tensor_release(arr);
    /* Values take arr's dtype: NumPy gives [2, 0, 3, 0] for 1.9, 2 and 3
     * put at 2, 0 and 2 (the 1.9 is overwritten by the 3). */
    weft_tensor *args[3] = { test_tensor(WEFT_I32, 1, DIMS(4), (const double[4]){ 0 }),
                             test_tensor(WEFT_I32, 1, DIMS(3), (const double[]){ 2, 0, 2 }),
                             test_tensor(WEFT_F64, 1, DIMS(3), (const double[]){ 1.9, 2, 3 }) }, *y;
    int which = 2;
    op_results_everywhere(put_body, &which, args, 3, &y, 1, "cast");
    op_expect_values(y, WEFT_I32, (const double[]){ 2, 0, 3, 0 }, 4, "cast");
    weft_tensor_release(y);
    for (int k = 0; k < 3; k++)
        weft_tensor_release(args[k]);
}

/* ---- Gradients and refusals ----------------------------------------------- */

/* user: 0 delete's kept entries, 1 fill_diagonal's other elements, 2
 * put_along_axis's */
static int grad_fn(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    static const int64_t gone[1] = { 1 };
    weft_value *r;
    switch (*(const int *)user) {
    case 0: r = weft_delete(cx, a[0], gone, 1, 0); break;
    case 1: r = weft_fill_diagonal(cx, a[0], weft_const_f64(cx, 0.5), false); break;
    default:
        r = weft_put_along_axis(cx, a[0], weft_expand_dims(cx, weft_const_i64(cx, 1), 0),
                                weft_const_f64(cx, 0.5), WEFT_ALL_AXES);
        break;
    }
    outs[0] = weft_mul(cx, r, r);
    return weft_ctx_status(cx);
}

Test(ops_numpy_edit, gradients_reach_the_entries_kept)
{
    static const double v[6] = { 0.3, -1.2, 2.5, 0.75, -0.4, 1.1 };
    const grad_arg in[3] = { { 2, { 3, 2 }, v }, { 2, { 2, 3 }, v }, { 2, { 2, 3 }, v } };
    static const char *const what[3] = { "delete", "fill_diagonal", "put_along_axis" };
    for (int which = 0; which < 3; which++) {
        grad_case c = { grad_fn, &which, 1, 1 };
        expect_gradients(&c, &in[which], what[which]);
    }
}

/* Two columns inserted into a [2, 3] from a row of two values. */
static int insert_grad_fn(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    static const int64_t at[2] = { 2, 0 };
    weft_value *r = weft_insert(cx, a[0], at, 2, a[1], 1);
    outs[0] = weft_mul(cx, r, r);
    return weft_ctx_status(cx);
}

Test(ops_numpy_edit, insert_gradients_reach_arr_and_values)
{
    static const double v[6] = { 0.3, -1.2, 2.5, 0.75, -0.4, 1.1 }, w[2] = { -0.6, 1.7 };
    const grad_arg in[2] = { { 2, { 2, 3 }, v }, { 1, { 2 }, w } };
    grad_case c = { insert_grad_fn, NULL, 2, 2 };
    expect_gradients(&c, in, "insert");
}

static int refused_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    static const int64_t far[1] = { 3 }, before[1] = { -4 }, far_insert[2] = { 0, 4 };
    switch (*(const int *)user) {
    case 0: outs[0] = weft_delete(cx, a[0], far, 1, 0); break;
    case 1: outs[0] = weft_fill_diagonal(cx, a[1], a[0], false); break;
    case 2: outs[0] = weft_fill_diagonal(cx, a[2], a[0], false); break;
    case 3: outs[0] = weft_trim_zeros(cx, a[0], NULL); break;
    case 4:
        outs[0] = weft_indices(cx, WEFT_MAX_RANK, DIMS(1, 1, 1, 1, 1, 1, 1, 1), WEFT_I64);
        break;
    case 5: outs[0] = weft_delete(cx, a[0], NULL, 1, 0); break;
    case 8: outs[0] = weft_delete(cx, a[0], before, 1, 0); break;
    case 9: outs[0] = weft_insert(cx, a[0], far_insert, 2, a[1], 0); break;
    case 10: outs[0] = weft_insert(cx, a[0], NULL, 1, a[1], 0); break;
    case 11: outs[0] = weft_insert(cx, a[1], far, 1, a[0], 0); break;
    case 12: outs[0] = weft_insert(cx, a[0], before, 1, a[1], 0); break;
    case 6: {   /* index 5 of 3 rows */
        weft_value *five = weft_add(cx, weft_cast(cx, a[0], WEFT_I32), weft_const_i64(cx, 5));
        outs[0] = weft_put_along_axis(cx, a[0], five, a[0], 0);
        break;
    }
    case 7: {   /* [2, 3] indices into [3, 2] along axis 1 */
        static const int swap[2] = { 1, 0 };
        weft_value *at = weft_cast(cx, weft_transpose(cx, a[0], swap), WEFT_I64);
        outs[0] = weft_put_along_axis(cx, a[0], at, a[0], 1);
        break;
    }
    default: break;
    }
    return weft_ctx_status(cx);
}

Test(ops_numpy_edit, refusals_say_why)
{
    weft_tensor *args[3] = { test_tensor(WEFT_F64, 2, DIMS(3, 2), (const double[6]){ 0 }),
                             test_tensor(WEFT_F64, 1, DIMS(3), (const double[3]){ 0 }),
                             test_tensor(WEFT_F64, 3, DIMS(2, 2, 3), (const double[12]){ 0 }) };
    const op_error_case cases[] = {
        { 0, WEFT_EINVAL, "weft_delete: index 3 is out of bounds for axis 0 with size 3" },
        { 1, WEFT_ESHAPE, "weft_fill_diagonal: a f64[3] is not at least 2-d" },
        { 2, WEFT_ESHAPE, "weft_fill_diagonal: a f64[2,2,3] has dims of different lengths" },
        { 3, WEFT_ESHAPE, "weft_trim_zeros: filt f64[3,2] is not a vector" },
        { 4, WEFT_EINVAL, "weft_indices: rank 8 (0 to 7, dims given)" },
        { 5, WEFT_EINVAL, "weft_delete: obj is NULL with n_obj 1" },
        { 6, WEFT_EINVAL, "weft_put_along_axis: an index is out of range for axis 0 of length 3" },
        { 7, WEFT_ESHAPE,
          "weft_put_along_axis: indices i64[2,3] do not broadcast to arr f64[3,2] off axis 1" },
        { 8, WEFT_EINVAL, "weft_delete: index -4 is out of bounds for axis 0 with size 3" },
        { 9, WEFT_EINVAL, "weft_insert: index 4 is out of bounds for axis 0 with size 3" },
        { 10, WEFT_EINVAL, "weft_insert: obj is NULL with n_obj 1" },
        { 11, WEFT_ESHAPE, "weft_insert: values f64[3,2] has more dims than arr f64[3]" },
        { 12, WEFT_EINVAL, "weft_insert: index -4 is out of bounds for axis 0 with size 3" },
    };
    op_expect_errors(rt, refused_body, cases, sizeof cases / sizeof *cases, args, 3);
    for (int k = 0; k < 3; k++)
        weft_tensor_release(args[k]);
}

/* insert needs arr's dims, and with one index values' length along the
 * axis, while tracing. */
Test(ops_numpy_edit, insert_refuses_dims_unknown_while_tracing)
{
    static const struct { const char *sig[2]; insert_case c; const char *says; } cases[] = {
        { { "f64[?,2]", "f64[2]" }, { { 0 }, 1, 1, false },
          "weft_insert: arr f64[?,2] has dims unknown while tracing" },
        { { "f64[2,?]", "f64[2]" }, { { 0 }, 1, 1, false },
          "weft_insert: arr f64[2,?] has axis 1 unknown while tracing" },
        { { "f64[2,2]", "f64[?]" }, { { 0 }, 1, 1, false },
          "weft_insert: values f64[?] has its length along axis 1 unknown while tracing" },
    };
    weft_tensor *x = test_tensor(WEFT_F64, 2, DIMS(2, 2), (const double[4]){ 0 });
    weft_tensor *v = test_tensor(WEFT_F64, 1, DIMS(2), (const double[2]){ 0 });
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        weft_spec sig[2];
        for (int i = 0; i < 2; i++)
            cr_assert_eq(weft_spec_parse(cases[k].sig[i], &sig[i]), 0);
        weft_function *fn = op_signature_function(rt, insert_body, (void *)&cases[k].c, sig, 2);
        weft_arg args[2] = { weft_arg_tensor(x), weft_arg_tensor(v) };
        weft_tensor *y = NULL;
        cr_assert_eq(weft_function_call(fn, args, 2, &y, 1), WEFT_ESHAPE, "%s", cases[k].says);
        cr_assert(strstr(weft_errmsg(), cases[k].says), "%s", weft_errmsg());
        weft_function_destroy(&fn);
    }
    weft_tensor_release(x);
    weft_tensor_release(v);
}
