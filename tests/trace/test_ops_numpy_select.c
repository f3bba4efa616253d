/* compress, triu_indices, tril_indices, isposinf, isneginf and
 * array_equal against NumPy 1.24's printed values, eagerly and traced on
 * 1, 2 and 4 workers with the same bits; compress's short and long
 * conditions; array_equal of shapes known only when the call runs, with
 * one trace; the refusals. */
#include <math.h>
#include <string.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_numpy_select, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

#define DIMS(...) ((const int64_t[]){ __VA_ARGS__ })

static int compress_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    outs[0] = weft_compress(cx, a[0], a[1], *(const int *)user);
    return weft_ctx_status(cx);
}

/* np.compress([1, 0, 2.5], m, axis=1), np.compress([0, 1], m, axis=0) (a
 * condition shorter than the dim), np.compress([1, 0, 1, 1], arange(6))
 * (flattened), and a condition longer than the dim with false past it. */
Test(ops_numpy_select, compress_is_numpys)
{
    weft_tensor *m = test_tensor(WEFT_I32, 2, DIMS(2, 3), (const double[]){ 1, 2, 3, 4, 5, 6 });
    weft_tensor *c3 = test_tensor(WEFT_F64, 1, DIMS(3), (const double[]){ 1, 0, 2.5 });
    weft_tensor *c2 = test_tensor(WEFT_BOOL, 1, DIMS(2), (const double[]){ 0, 1 });
    weft_tensor *c4 = test_tensor(WEFT_I64, 1, DIMS(4), (const double[]){ 1, 0, 1, 1 });
    weft_tensor *c5 = test_tensor(WEFT_BOOL, 1, DIMS(5), (const double[]){ 0, 1, 0, 0, 0 });
    struct {
        weft_tensor *cond;
        int axis, rank;
        int64_t dims[2];
        double want[6];
    } cases[4] = {
        { c3, 1, 2, { 2, 2 }, { 1, 3, 4, 6 } },
        { c2, 0, 2, { 1, 3 }, { 4, 5, 6 } },
        { c4, WEFT_ALL_AXES, 1, { 3 }, { 1, 3, 4 } },
        { c5, -1, 2, { 2, 1 }, { 2, 5 } },
    };
    for (int k = 0; k < 4; k++) {
        weft_tensor *args[2] = { cases[k].cond, m }, *r;
        op_results_everywhere(compress_body, &cases[k].axis, args, 2, &r, 1, "compress");
        test_assert_shape(r, WEFT_I32, cases[k].rank, cases[k].dims, "compress");
        int64_t n = cases[k].dims[0] * (cases[k].rank == 2 ? cases[k].dims[1] : 1);
        op_expect_values(r, WEFT_I32, cases[k].want, n, "compress");
        weft_tensor_release(r);
    }
    weft_tensor *all[5] = { m, c3, c2, c4, c5 };
    for (int k = 0; k < 5; k++)
        weft_tensor_release(all[k]);
}

/* A condition true past the dim fails the call (NumPy's IndexError),
 * eagerly and traced with its length unknown. */
Test(ops_numpy_select, compress_true_past_the_end_fails)
{
    weft_tensor *a = test_tensor(WEFT_F64, 1, DIMS(2), (const double[]){ 1, 2 });
    weft_tensor *c = test_tensor(WEFT_BOOL, 1, DIMS(4), (const double[]){ 0, 0, 0, 1 });
    int axis = 0;
    for (int eager = 0; eager < 2; eager++) {
        weft_tensor *args[2] = { c, a }, *r = NULL;
        cr_assert_eq(op_call(rt, compress_body, &axis, args, 2, &r, 1, eager), WEFT_EINVAL,
                     "%s", weft_errmsg());
        cr_assert(strstr(weft_errmsg(), "condition is true past the end"), "%s", weft_errmsg());
        cr_assert_null(r);
    }
    const weft_spec sig[2] = { { WEFT_BOOL, 1, { WEFT_DIM_ANY } },
                               { WEFT_F64, 1, { WEFT_DIM_ANY } } };
    weft_function *f = op_signature_function(rt, compress_body, &axis, sig, 2);
    weft_arg args[2] = { weft_arg_tensor(c), weft_arg_tensor(a) };
    weft_tensor *r = NULL;
    cr_assert_eq(weft_function_call(f, args, 2, &r, 1), WEFT_EINVAL, "%s", weft_errmsg());
    weft_tensor *c1 = test_tensor(WEFT_BOOL, 1, DIMS(1), (const double[]){ 1 });
    args[0] = weft_arg_tensor(c1);
    cr_assert_eq(weft_function_call(f, args, 2, &r, 1), 0, "%s", weft_errmsg());
    op_expect_values(r, WEFT_F64, (const double[]){ 1 }, 1, "compress traced");
    weft_tensor_release(r);
    op_destroy_traced_once(&f);
    weft_tensor_release(c1);
    weft_tensor_release(a);
    weft_tensor_release(c);
}

typedef struct tri_op {
    bool upper;
    int64_t n, k, m;
} tri_op;

static int tri_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)a;
    const tri_op *t = user;
    return t->upper ? weft_triu_indices(cx, t->n, t->k, t->m, outs)
                    : weft_tril_indices(cx, t->n, t->k, t->m, outs);
}

/* np.triu_indices(3, 1, 4), np.tril_indices(3, -1, 4), np.triu_indices(2,
 * -5, 3) (every element) and np.tril_indices(0, 0, 3) (none). */
Test(ops_numpy_select, tri_indices_are_numpys)
{
    struct {
        tri_op op;
        int64_t n;
        double rows[6], cols[6];
    } cases[4] = {
        { { true, 3, 1, 4 }, 6, { 0, 0, 0, 1, 1, 2 }, { 1, 2, 3, 2, 3, 3 } },
        { { false, 3, -1, 4 }, 3, { 1, 2, 2 }, { 0, 0, 1 } },
        { { true, 2, -5, 3 }, 6, { 0, 0, 0, 1, 1, 1 }, { 0, 1, 2, 0, 1, 2 } },
        { { false, 0, 0, 3 }, 0, { 0 }, { 0 } },
    };
    for (int k = 0; k < 4; k++) {
        weft_tensor *r[2];
        op_results_everywhere(tri_body, &cases[k].op, NULL, 0, r, 2, "tri indices");
        for (int o = 0; o < 2; o++) {
            test_assert_shape(r[o], WEFT_I64, 1, &cases[k].n, "tri indices");
            op_expect_values(r[o], WEFT_I64, o ? cases[k].cols : cases[k].rows, cases[k].n,
                             "tri indices");
            weft_tensor_release(r[o]);
        }
    }
}

static int inf_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    outs[0] = *(const bool *)user ? weft_isposinf(cx, a[0]) : weft_isneginf(cx, a[0]);
    return weft_ctx_status(cx);
}

/* np.isposinf and np.isneginf of inf, -inf, NaN and 1 (f32); integers
 * are never infinite. */
Test(ops_numpy_select, signed_infinities)
{
    weft_tensor *x = test_tensor(WEFT_F32, 1, DIMS(4), (const double[]){ INFINITY, -INFINITY,
                                                                       NAN, 1 });
    weft_tensor *i = test_tensor(WEFT_I64, 1, DIMS(2), (const double[]){ INT32_MAX, -1 });
    for (int pos = 0; pos < 2; pos++) {
        bool p = pos;
        weft_tensor *r;
        op_results_everywhere(inf_body, &p, &x, 1, &r, 1, "isinf");
        test_assert_shape(r, WEFT_BOOL, 1, DIMS(4), "isinf");
        static const double pos_inf[4] = { 1, 0, 0, 0 }, neg_inf[4] = { 0, 1, 0, 0 };
        op_expect_values(r, WEFT_BOOL, pos ? pos_inf : neg_inf, 4, "isinf");
        weft_tensor_release(r);
        op_results_everywhere(inf_body, &p, &i, 1, &r, 1, "isinf integers");
        op_expect_values(r, WEFT_BOOL, (const double[]){ 0, 0 }, 2, "isinf integers");
        weft_tensor_release(r);
    }
    weft_tensor_release(x);
    weft_tensor_release(i);
}

static int equal_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    outs[0] = weft_array_equal(cx, a[0], a[1], *(const bool *)user);
    return weft_ctx_status(cx);
}

/* np.array_equal: i32 [1, 2] and f64 [1.0, 2.0] (promoted), [1, nan]
 * with itself (only with equal_nan), [[1, 2]] against [1, 2] (ranks
 * differ), -0.0 and 0.0, two lengths, two bools. */
Test(ops_numpy_select, array_equal_is_numpys)
{
    weft_tensor *i2 = test_tensor(WEFT_I32, 1, DIMS(2), (const double[]){ 1, 2 });
    weft_tensor *f2 = test_tensor(WEFT_F64, 1, DIMS(2), (const double[]){ 1, 2 });
    weft_tensor *n2 = test_tensor(WEFT_F64, 1, DIMS(2), (const double[]){ 1, NAN });
    weft_tensor *m12 = test_tensor(WEFT_F64, 2, DIMS(1, 2), (const double[]){ 1, 2 });
    weft_tensor *nz = test_tensor(WEFT_F32, 1, DIMS(1), (const double[]){ -0.0 });
    weft_tensor *pz = test_tensor(WEFT_F64, 1, DIMS(1), (const double[]){ 0.0 });
    weft_tensor *f3 = test_tensor(WEFT_F64, 1, DIMS(3), (const double[]){ 1, 2, 3 });
    weft_tensor *b2 = test_tensor(WEFT_BOOL, 1, DIMS(2), (const double[]){ 1, 0 });
    struct {
        weft_tensor *a, *b;
        bool equal_nan, want;
    } cases[] = {
        { i2, f2, false, true },  { n2, n2, false, false }, { n2, n2, true, true },
        { m12, f2, false, false }, { nz, pz, false, true }, { f2, f3, false, false },
        { f3, f2, true, false },  { b2, b2, true, true },   { b2, i2, false, false },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        weft_tensor *args[2] = { cases[k].a, cases[k].b }, *r;
        op_results_everywhere(equal_body, &cases[k].equal_nan, args, 2, &r, 1, "array_equal");
        test_assert_shape(r, WEFT_BOOL, 0, NULL, "array_equal");
        cr_assert_eq(test_element(r, 0), cases[k].want, "case %zu", k);
        weft_tensor_release(r);
    }
    weft_tensor *all[8] = { i2, f2, n2, m12, nz, pz, f3, b2 };
    for (int k = 0; k < 8; k++)
        weft_tensor_release(all[k]);
}

/* Shapes known only when the call runs: [2, 3] against [2, 3], [3, 2]
 * (the same elements) and [2, 2], one trace. */
Test(ops_numpy_select, array_equal_of_unknown_shapes)
{
    const weft_spec sig[2] = { { WEFT_F64, 2, { WEFT_DIM_ANY, WEFT_DIM_ANY } },
                               { WEFT_F64, 2, { WEFT_DIM_ANY, WEFT_DIM_ANY } } };
    bool equal_nan = false;
    weft_function *f = op_signature_function(rt, equal_body, &equal_nan, sig, 2);
    static const double v[6] = { 1, 2, 3, 4, 5, 6 };
    weft_tensor *a = test_tensor(WEFT_F64, 2, DIMS(2, 3), v);
    weft_tensor *others[3] = { test_tensor(WEFT_F64, 2, DIMS(2, 3), v),
                               test_tensor(WEFT_F64, 2, DIMS(3, 2), v),
                               test_tensor(WEFT_F64, 2, DIMS(2, 2), v) };
    for (int k = 0; k < 3; k++) {
        weft_arg args[2] = { weft_arg_tensor(a), weft_arg_tensor(others[k]) };
        weft_tensor *r = NULL;
        cr_assert_eq(weft_function_call(f, args, 2, &r, 1), 0, "%s", weft_errmsg());
        cr_assert_eq(test_element(r, 0), k == 0, "case %d", k);
        weft_tensor_release(r);
        weft_tensor_release(others[k]);
    }
    op_destroy_traced_once(&f);
    weft_tensor_release(a);
}

static int refused_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    weft_value *o[2];
    switch (*(const int *)user) {
    case 0: outs[0] = weft_compress(cx, a[1], a[0], 0); break;
    case 1: outs[0] = weft_compress(cx, a[0], a[1], 2); break;
    case 2: outs[0] = weft_isposinf(cx, a[2]); break;
    case 3:
        weft_triu_indices(cx, -1, 0, 2, o);
        outs[0] = NULL;
        break;
    case 5:
        weft_tril_indices(cx, 131072, INT64_MAX, 131072, o);
        outs[0] = NULL;
        break;
    default: outs[0] = weft_isneginf(cx, NULL); break;
    }
    return weft_ctx_status(cx);
}

Test(ops_numpy_select, refusals)
{
    weft_tensor *args[3] = {
        test_tensor(WEFT_BOOL, 1, DIMS(2), (const double[]){ 1, 0 }),
        test_tensor(WEFT_F64, 2, DIMS(2, 2), (const double[]){ 1, 2, 3, 4 }),
        test_tensor(WEFT_BOOL, 1, DIMS(1), (const double[]){ 1 }),
    };
    const op_error_case cases[] = {
        { 0, WEFT_ESHAPE, "weft_compress: condition f64[2,2] is not a vector" },
        { 1, WEFT_EINVAL, "weft_compress: axis 2 is not in [-2, 2)" },
        { 2, WEFT_EDTYPE, "weft_isposinf" },
        { 3, WEFT_EINVAL, "weft_triu_indices: n -1 and m 2 are not both in [0, 2^31)" },
        { 4, WEFT_EINVAL, "weft_isneginf: input 0 is NULL" },
        { 5, WEFT_EINVAL, "weft_tril_indices: 17179869184 indices, over 2^32" },
    };
    op_expect_errors(rt, refused_body, cases, 6, args, 3);
    for (int k = 0; k < 3; k++)
        weft_tensor_release(args[k]);
}
