/* weft_confusion_matrix checked against a counting loop on random labels
 * and predictions, with and without weights, in every result dtype; on
 * TensorFlow's documented example (the class count from the values);
 * empty inputs; one trace for any length and class count; eagerly and
 * traced on 1, 2 and 4 workers (the same bits everywhere); and its
 * errors, those of the values included. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_confusion, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

typedef struct cm_case {
    int64_t num_classes;
    weft_dtype dtype;
    bool weighted;
} cm_case;

static int body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const cm_case *c = user;
    outs[0] = weft_confusion_matrix(cx, a[0], a[1], c->num_classes, c->weighted ? a[2] : NULL,
                                    c->dtype);
    return weft_ctx_status(cx);
}

static weft_tensor *matrix_everywhere(const cm_case *c, weft_tensor *const *args,
                                      const char *what)
{
    weft_tensor *y;
    op_results_everywhere(body, (void *)c, args, c->weighted ? 3 : 2, &y, 1, what);
    return y;
}

static uint64_t rng = 0x2545f4914f6cdd1dULL;

Test(ops_confusion, matches_a_counting_loop)
{
    enum { N = 1000, K = 7 };
    double lab[N], pred[N], w[N];
    for (int i = 0; i < N; i++) {
        lab[i] = (int)((op_uniform(&rng) + 1) * K / 2);
        pred[i] = (int)((op_uniform(&rng) + 1) * K / 2);
        w[i] = op_uniform(&rng) * 4;
    }
    const weft_dtype dtypes[] = { WEFT_I32, WEFT_I64, WEFT_F32, WEFT_F64 };
    for (int weighted = 0; weighted < 2; weighted++)
        for (size_t d = 0; d < 4; d++) {
            weft_dtype dt = dtypes[d];
            weft_tensor *args[3] = { test_tensor(WEFT_I32, 1, (int64_t[]){ N }, lab),
                                     test_tensor(WEFT_I64, 1, (int64_t[]){ N }, pred),
                                     test_tensor(WEFT_F32, 1, (int64_t[]){ N }, w) };
            cm_case c = { K, dt, weighted };
            weft_tensor *y = matrix_everywhere(&c, args, "random");
            test_assert_shape(y, dt, 2, (int64_t[]){ K, K }, "random");
            /* The reference: the weights as f32 cast to dtype (truncated
             * for an integer one), summed in double. */
            double want[K * K] = { 0 };
            for (int i = 0; i < N; i++) {
                double wi = (float)w[i];
                if (dt == WEFT_I32 || dt == WEFT_I64)
                    wi = trunc(wi);
                want[(int)lab[i] * K + (int)pred[i]] += weighted ? wi : 1;
            }
            for (int e = 0; e < K * K; e++) {
                double got = test_element(y, e),
                       tol = dt == WEFT_F32 ? 1e-6 * fmax(1, fabs(want[e])) : 1e-12;
                cr_assert(fabs(got - want[e]) <= tol, "%s weighted %d (%d, %d): %g, want %g",
                          weft_dtype_name(dt), weighted, e / K, e % K, got, want[e]);
            }
            weft_tensor_release(y);
            for (int k = 0; k < 3; k++)
                weft_tensor_release(args[k]);
        }
}

/* TensorFlow's docstring: labels [1, 2, 4], predictions [2, 2, 4] give a
 * 5 x 5 matrix with ones at (1, 2), (2, 2) and (4, 4). */
Test(ops_confusion, class_count_from_the_values)
{
    double lab[3] = { 1, 2, 4 }, pred[3] = { 2, 2, 4 };
    weft_tensor *args[2] = { test_tensor(WEFT_I64, 1, (int64_t[]){ 3 }, lab),
                             test_tensor(WEFT_I64, 1, (int64_t[]){ 3 }, pred) };
    cm_case c = { -1, WEFT_I32, false };
    weft_tensor *y = matrix_everywhere(&c, args, "docstring");
    test_assert_shape(y, WEFT_I32, 2, (int64_t[]){ 5, 5 }, "docstring");
    for (int e = 0; e < 25; e++)
        cr_assert_eq(test_element(y, e), e == 1 * 5 + 2 || e == 2 * 5 + 2 || e == 4 * 5 + 4,
                     "element %d", e);
    weft_tensor_release(y);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

/* No labels: num_classes zeros squared, or [0, 0] from the values. */
Test(ops_confusion, empty_inputs)
{
    weft_tensor *args[2] = { test_tensor(WEFT_I32, 1, (int64_t[]){ 0 }, NULL),
                             test_tensor(WEFT_I32, 1, (int64_t[]){ 0 }, NULL) };
    cm_case given = { 3, WEFT_F64, false }, from_values = { -1, WEFT_F64, false };
    weft_tensor *y = matrix_everywhere(&given, args, "empty");
    test_assert_shape(y, WEFT_F64, 2, (int64_t[]){ 3, 3 }, "empty");
    for (int e = 0; e < 9; e++)
        cr_assert_eq(test_element(y, e), 0);
    weft_tensor_release(y);
    y = matrix_everywhere(&from_values, args, "empty from values");
    test_assert_shape(y, WEFT_F64, 2, (int64_t[]){ 0, 0 }, "empty from values");
    weft_tensor_release(y);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

Test(ops_confusion, one_trace_for_any_length_and_class_count)
{
    weft_spec sig[2] = { { .dtype = WEFT_I64, .rank = 1, .dims = { WEFT_DIM_ANY } },
                         { .dtype = WEFT_I64, .rank = 1, .dims = { WEFT_DIM_ANY } } };
    cm_case c = { -1, WEFT_I64, false };
    weft_function *f = op_signature_function(rts[1], body, &c, sig, 2);
    for (int64_t n = 1; n <= 4; n++) {
        double v[4];
        for (int i = 0; i < n; i++)
            v[i] = 2 * i;   /* the diagonal's even classes: n * 2 - 1 of them */
        weft_tensor *t = test_tensor(WEFT_I64, 1, &n, v);
        weft_arg a[2] = { weft_arg_tensor(t), weft_arg_tensor(t) };
        weft_tensor *y = NULL;
        cr_assert_eq(weft_function_call(f, a, 2, &y, 1), 0, "%s", weft_errmsg());
        int64_t k = 2 * n - 1;
        test_assert_shape(y, WEFT_I64, 2, (int64_t[]){ k, k }, "signature");
        for (int64_t e = 0; e < k * k; e++)
            cr_assert_eq(test_element(y, e), e % (k + 1) == 0 && (e / k) % 2 == 0,
                         "n %lld element %lld", (long long)n, (long long)e);
        weft_tensor_release(y);
        weft_tensor_release(t);
    }
    op_destroy_traced_once(&f);
}

static int bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    switch (*(const int *)user) {
    case 0: outs[0] = weft_confusion_matrix(cx, a[0], a[1], 3, NULL, WEFT_I32); break;
    case 1: outs[0] = weft_confusion_matrix(cx, a[1], a[0], 3, NULL, WEFT_I32); break;
    case 2: outs[0] = weft_confusion_matrix(cx, a[0], a[0], -2, NULL, WEFT_I32); break;
    case 3: outs[0] = weft_confusion_matrix(cx, a[0], a[0], 3, NULL, WEFT_BOOL); break;
    case 4:
        outs[0] = weft_confusion_matrix(cx, weft_cast(cx, a[0], WEFT_F64), a[0], 3, NULL,
                                        WEFT_I32);
        break;
    case 5: outs[0] = weft_confusion_matrix(cx, a[0], a[2], 3, NULL, WEFT_I32); break;
    case 6: outs[0] = weft_confusion_matrix(cx, a[0], a[0], 3, a[2], WEFT_F32); break;
    case 7: outs[0] = weft_confusion_matrix(cx, a[3], a[3], -1, NULL, WEFT_I32); break;
    }
    return weft_ctx_status(cx);
}

Test(ops_confusion, errors_name_the_op)
{
    const op_error_case cases[] = {
        { 0, WEFT_EINVAL, "weft_confusion_matrix: prediction 3 (at 1) is not below "
                          "num_classes 3" },
        { 1, WEFT_EINVAL, "weft_confusion_matrix: label 3 (at 1) is not below num_classes 3" },
        { 2, WEFT_EINVAL, "weft_confusion_matrix: num_classes -2 is negative" },
        { 3, WEFT_EDTYPE, "weft_confusion_matrix: dtype 0 is not i32, i64, f32 or f64" },
        { 4, WEFT_EDTYPE, "weft_confusion_matrix: the labels f64[2] are not i32 or i64" },
        { 5, WEFT_ESHAPE, "weft_confusion_matrix: the labels i32[2] and predictions i32[3] are "
                          "not vectors of one length" },
        { 6, WEFT_ESHAPE, "weft_confusion_matrix: the labels i32[2] and weights f32[3] are "
                          "not vectors of one length" },
        { 7, WEFT_EINVAL, "weft_confusion_matrix: label -1 (at 1) is negative" },
    };
    double good[2] = { 0, 1 }, high[2] = { 2, 3 }, three[3] = { 0, 1, 2 }, neg[2] = { 0, -1 };
    weft_tensor *args[4] = { test_tensor(WEFT_I32, 1, (int64_t[]){ 2 }, good),
                             test_tensor(WEFT_I32, 1, (int64_t[]){ 2 }, high),
                             test_tensor(WEFT_I32, 1, (int64_t[]){ 3 }, three),
                             test_tensor(WEFT_I64, 1, (int64_t[]){ 2 }, neg) };
    op_expect_errors(rt, bad_body, cases, sizeof cases / sizeof cases[0], args, 4);
    for (int k = 0; k < 4; k++)
        weft_tensor_release(args[k]);
}
