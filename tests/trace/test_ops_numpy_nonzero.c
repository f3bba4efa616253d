/* nonzero, flatnonzero, diagonal, diag_indices and ix_ against NumPy
 * 1.24's printed values, eagerly and traced on 1, 2 and 4 workers with
 * the same bits; one trace for every count; the refusals. */
#include <math.h>
#include <string.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_numpy_nonzero, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

#define DIMS(...) ((const int64_t[]){ __VA_ARGS__ })

static int nonzero_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    if (user)
        return weft_nonzero(cx, a[0], outs, 2);
    outs[0] = weft_flatnonzero(cx, a[0]);
    return weft_ctx_status(cx);
}

/* np.nonzero and np.flatnonzero of [[0, 1.5, 0], [nan, 0, -0.0], [2, 0,
 * 3]]: NaN is nonzero, -0.0 is not. */
Test(ops_numpy_nonzero, nonzero_is_numpys)
{
    weft_tensor *a = test_tensor(WEFT_F64, 2, DIMS(3, 3),
                                 (const double[]){ 0, 1.5, 0, NAN, 0, -0.0, 2, 0, 3 }), *r[2];
    int two = 2;
    op_results_everywhere(nonzero_body, &two, &a, 1, r, 2, "nonzero");
    for (int d = 0; d < 2; d++)
        test_assert_shape(r[d], WEFT_I64, 1, DIMS(4), "nonzero");
    op_expect_values(r[0], WEFT_I64, (const double[]){ 0, 1, 2, 2 }, 4, "nonzero rows");
    op_expect_values(r[1], WEFT_I64, (const double[]){ 1, 0, 0, 2 }, 4, "nonzero columns");
    weft_tensor_release(r[0]);
    weft_tensor_release(r[1]);
    op_results_everywhere(nonzero_body, NULL, &a, 1, r, 1, "flatnonzero");
    test_assert_shape(r[0], WEFT_I64, 1, DIMS(4), "flatnonzero");
    op_expect_values(r[0], WEFT_I64, (const double[]){ 1, 3, 6, 8 }, 4, "flatnonzero");
    weft_tensor_release(r[0]);
    weft_tensor_release(a);
}

/* The count is unknown while tracing: one trace serves masks with 2 and
 * 0 trues. */
Test(ops_numpy_nonzero, one_trace_for_every_count)
{
    const weft_spec sig = { WEFT_BOOL, 2, { WEFT_DIM_ANY, 2 } };
    weft_function *f = op_signature_function(rt, nonzero_body, NULL, &sig, 1);
    weft_tensor *m[2] = { test_tensor(WEFT_BOOL, 2, DIMS(2, 2), (const double[]){ 0, 1, 1, 0 }),
                          test_tensor(WEFT_BOOL, 2, DIMS(1, 2), (const double[]){ 0, 0 }) };
    for (int k = 0; k < 2; k++) {
        weft_arg arg = weft_arg_tensor(m[k]);
        weft_tensor *r = NULL;
        cr_assert_eq(weft_function_call(f, &arg, 1, &r, 1), 0, "%s", weft_errmsg());
        op_expect_values(r, WEFT_I64, (const double[]){ 1, 2 }, k ? 0 : 2, "traced flatnonzero");
        weft_tensor_release(r);
        weft_tensor_release(m[k]);
    }
    op_destroy_traced_once(&f);
}

typedef struct diagonal_op {
    int64_t offset;
    int axis1, axis2;
} diagonal_op;

static int diagonal_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const diagonal_op *d = user;
    outs[0] = weft_diagonal(cx, a[0], d->offset, d->axis1, d->axis2);
    return weft_ctx_status(cx);
}

/* np.diagonal of arange(24).reshape(2, 3, 4): axes (0, 2) offset 1, axes
 * (2, 1) offset -1 (rows from the last axis), axes (1, 2), and an offset
 * past the matrix (empty). */
Test(ops_numpy_nonzero, diagonal_is_numpys)
{
    double v[24];
    for (int i = 0; i < 24; i++)
        v[i] = i;
    weft_tensor *b = test_tensor(WEFT_I32, 3, DIMS(2, 3, 4), v);
    struct {
        diagonal_op op;
        int64_t dims[2];
        double want[6];
    } cases[4] = {
        { { 1, 0, 2 }, { 3, 2 }, { 1, 14, 5, 18, 9, 22 } },
        { { -1, 2, 1 }, { 2, 3 }, { 1, 6, 11, 13, 18, 23 } },
        { { 0, -2, -1 }, { 2, 3 }, { 0, 5, 10, 12, 17, 22 } },
        { { 7, 1, 2 }, { 2, 0 }, { 0 } },
    };
    for (int k = 0; k < 4; k++) {
        weft_tensor *r;
        op_results_everywhere(diagonal_body, &cases[k].op, &b, 1, &r, 1, "diagonal");
        test_assert_shape(r, WEFT_I32, 2, cases[k].dims, "diagonal");
        op_expect_values(r, WEFT_I32, cases[k].want, cases[k].dims[0] * cases[k].dims[1],
                         "diagonal");
        weft_tensor_release(r);
    }
    weft_tensor_release(b);
}

static int indices_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    if (*(const int *)user == 0)
        return weft_diag_indices(cx, 3, 3, outs);
    return weft_ix(cx, a, 2, outs);
}

/* np.diag_indices(3, 3) and np.ix_([1, 3], [True, False, True]). */
Test(ops_numpy_nonzero, diag_indices_and_ix_are_numpys)
{
    int which = 0;
    weft_tensor *r[3];
    op_results_everywhere(indices_body, &which, NULL, 0, r, 3, "diag_indices");
    for (int d = 0; d < 3; d++) {
        test_assert_shape(r[d], WEFT_I64, 1, DIMS(3), "diag_indices");
        op_expect_values(r[d], WEFT_I64, (const double[]){ 0, 1, 2 }, 3, "diag_indices");
        weft_tensor_release(r[d]);
    }
    which = 1;
    weft_tensor *seqs[2] = { test_tensor(WEFT_I32, 1, DIMS(2), (const double[]){ 1, 3 }),
                             test_tensor(WEFT_BOOL, 1, DIMS(3), (const double[]){ 1, 0, 1 }) };
    op_results_everywhere(indices_body, &which, seqs, 2, r, 2, "ix_");
    test_assert_shape(r[0], WEFT_I32, 2, DIMS(2, 1), "ix_ 0");
    op_expect_values(r[0], WEFT_I32, (const double[]){ 1, 3 }, 2, "ix_ 0");
    test_assert_shape(r[1], WEFT_I64, 2, DIMS(1, 2), "ix_ 1");
    op_expect_values(r[1], WEFT_I64, (const double[]){ 0, 2 }, 2, "ix_ 1");
    for (int k = 0; k < 2; k++) {
        weft_tensor_release(r[k]);
        weft_tensor_release(seqs[k]);
    }
}

static int refused_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    weft_value *o[3];
    int rc = 0;
    switch (*(const int *)user) {
    case 0: rc = weft_nonzero(cx, a[0], o, 1); break;
    case 1: rc = weft_nonzero(cx, a[1], o, 0); break;
    case 2: outs[0] = weft_diagonal(cx, a[0], 0, 1, -1); break;
    case 3: outs[0] = weft_diagonal(cx, a[2], 0, 0, 1); break;
    case 4: rc = weft_diag_indices(cx, 3, 0, o); break;
    case 5: rc = weft_ix(cx, a, 1, o); break;
    default: rc = weft_nonzero(cx, a[0], NULL, 2); break;
    }
    cr_assert(rc <= 0);
    return weft_ctx_status(cx);
}

Test(ops_numpy_nonzero, refusals)
{
    weft_tensor *args[3] = {
        test_tensor(WEFT_F64, 2, DIMS(2, 2), (const double[]){ 1, 0, 0, 1 }),
        test_tensor(WEFT_F64, 0, NULL, (const double[]){ 1 }),
        test_tensor(WEFT_F64, 1, DIMS(2), (const double[]){ 1, 2 }),
    };
    const op_error_case cases[] = {
        { 0, WEFT_EINVAL, "weft_nonzero: n_outs 1 is not a's rank 2" },
        { 1, WEFT_ESHAPE, "weft_nonzero: a f64[] is a scalar" },
        { 2, WEFT_EINVAL, "weft_diagonal: axis1 and axis2 are both 1" },
        { 3, WEFT_ESHAPE, "weft_diagonal: a f64[2] has fewer than 2 dims" },
        { 4, WEFT_EINVAL, "weft_diag_indices: n 3 and ndim 0" },
        { 5, WEFT_ESHAPE, "weft_ix: seqs[0] f64[2,2] is not a vector" },
        { 6, WEFT_EINVAL, "weft_nonzero: outs is NULL" },
    };
    op_expect_errors(rt, refused_body, cases, 7, args, 3);
    for (int k = 0; k < 3; k++)
        weft_tensor_release(args[k]);
}
