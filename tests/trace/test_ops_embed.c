/* weft_embedding_lookup (with and without max_norm, vector and scalar
 * embeddings) and weft_compute_average_loss (weights per element and per
 * example, a given or a run-time batch size) against C, eagerly and
 * traced on 1, 2 and 4 workers; and their errors. */
#include <math.h>
#include <string.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_embed, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

static int lookup_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    outs[0] = weft_embedding_lookup(cx, a[0], a[1], *(const double *)user);
    return weft_ctx_status(cx);
}

Test(ops_embed, lookup_clips_long_embeddings)
{
    /* Five embeddings of three: norms 3, 0.5, 13, 0, 1. */
    const double params[15] = { 1, 2, 2, 0.3, 0.4, 0, 3, 4, 12, 0, 0, 0, 0, 0, 1 };
    const double ids[4] = { 2, 0, 1, 2 }, norm[5] = { 3, 0.5, 13, 0, 1 };
    weft_tensor *args[2] = { test_tensor(WEFT_F32, 2, (const int64_t[]){ 5, 3 }, params),
                             test_tensor(WEFT_I32, 2, (const int64_t[]){ 2, 2 }, ids) };
    for (int k = 0; k < 3; k++) {
        double max_norm = k == 0 ? 0 : k == 1 ? 1.0 : 5.0;
        weft_tensor *y;
        op_results_everywhere(lookup_body, &max_norm, args, 2, &y, 1, "lookup");
        test_assert_shape(y, WEFT_F32, 3, (const int64_t[]){ 2, 2, 3 }, "lookup");
        for (int i = 0; i < 4; i++) {
            int r = (int)ids[i];
            double scale = max_norm > 0 && norm[r] > max_norm ? max_norm / norm[r] : 1;
            for (int j = 0; j < 3; j++)
                cr_expect_float_eq(test_element(y, 3 * i + j), params[3 * r + j] * scale, 1e-6,
                                   "max_norm %g, id %d, column %d", max_norm, r, j);
        }
        weft_tensor_release(y);
    }
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

Test(ops_embed, lookup_of_scalar_embeddings_clips_each)
{
    const double params[4] = { -3, 0.5, 2, -0.25 }, ids[3] = { 0, 2, 3 };
    weft_tensor *args[2] = { test_tensor(WEFT_F64, 1, (const int64_t[]){ 4 }, params),
                             test_tensor(WEFT_I64, 1, (const int64_t[]){ 3 }, ids) };
    double max_norm = 1.0, want[3] = { -1, 1, -0.25 };
    weft_tensor *y;
    op_results_everywhere(lookup_body, &max_norm, args, 2, &y, 1, "scalar lookup");
    test_assert_shape(y, WEFT_F64, 1, (const int64_t[]){ 3 }, "scalar lookup");
    for (int i = 0; i < 3; i++)
        cr_expect_float_eq(test_element(y, i), want[i], 1e-12, "element %d", i);
    weft_tensor_release(y);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

static int lookup_case(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    static const double norms[] = { -1, NAN, INFINITY, 1 };
    int k = *(const int *)user;
    outs[0] = weft_embedding_lookup(cx, a[k == 3 ? 2 : 0], a[1], norms[k]);
    return weft_ctx_status(cx);
}

Test(ops_embed, lookup_errors)
{
    const double v[6] = { 1, 2, 3, 4, 5, 6 }, ids[2] = { 0, 1 };
    weft_tensor *args[3] = { test_tensor(WEFT_F32, 2, (const int64_t[]){ 2, 3 }, v),
                             test_tensor(WEFT_I32, 1, (const int64_t[]){ 2 }, ids),
                             test_tensor(WEFT_I32, 2, (const int64_t[]){ 2, 3 }, v) };
    static const op_error_case cases[] = {
        { 0, WEFT_EINVAL, "weft_embedding_lookup: max_norm -1 is not finite and >= 0" },
        { 1, WEFT_EINVAL, "max_norm nan" },
        { 2, WEFT_EINVAL, "max_norm inf" },
        { 3, WEFT_EDTYPE, "weft_embedding_lookup: params i32[2,3] are not f32 or f64" },
    };
    op_expect_errors(rt, lookup_case, cases, 4, args, 3);
    /* Integer embeddings without clipping are a plain gather. */
    double none = 0;
    weft_tensor *y;
    op_results_everywhere(lookup_body, &none, (weft_tensor *[]){ args[2], args[1] }, 2, &y, 1,
                          "integer lookup");
    for (int i = 0; i < 6; i++)
        cr_expect_eq(test_element(y, i), v[i]);
    weft_tensor_release(y);
    for (int i = 0; i < 3; i++)
        weft_tensor_release(args[i]);
}

/* ---- compute_average_loss ---- */

typedef struct avg_case {
    bool weighted;
    int64_t global_batch_size;
} avg_case;

static int avg_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const avg_case *c = user;
    outs[0] = weft_compute_average_loss(cx, a[0], c->weighted ? a[1] : NULL,
                                        c->global_batch_size);
    return weft_ctx_status(cx);
}

static double average_of(const avg_case *c, weft_tensor *const *args, size_t n_args)
{
    weft_tensor *y;
    op_results_everywhere(avg_body, (void *)c, args, n_args, &y, 1, "average loss");
    cr_assert_eq(weft_tensor_rank(y), 0);
    double v = test_element(y, 0);
    weft_tensor_release(y);
    return v;
}

Test(ops_embed, average_loss_against_c)
{
    const double loss[6] = { 1, 2, 3, 4, 5, 6 }, w4[4] = { 1, 0, 2, 0.5 };
    weft_tensor *l4 = test_tensor(WEFT_F32, 1, (const int64_t[]){ 4 }, loss);
    weft_tensor *w = test_tensor(WEFT_F64, 1, (const int64_t[]){ 4 }, w4);
    cr_expect_float_eq(average_of(&(avg_case){ false, 0 }, &l4, 1), 2.5, 1e-6);
    cr_expect_float_eq(average_of(&(avg_case){ false, 8 }, &l4, 1), 1.25, 1e-6);
    /* 1 + 0 + 6 + 2 = 9 over 4 examples. */
    cr_expect_float_eq(average_of(&(avg_case){ true, 0 }, (weft_tensor *[]){ l4, w }, 2), 2.25,
                       1e-6);
    /* A weight per example of [2, 3] losses: rows of 6 and 15, weighted 2
     * and -1, over a global batch of 4. */
    weft_tensor *l23 = test_tensor(WEFT_F64, 2, (const int64_t[]){ 2, 3 }, loss);
    weft_tensor *w2 = test_tensor(WEFT_I32, 1, (const int64_t[]){ 2 }, (const double[]){ 2, -1 });
    cr_expect_float_eq(average_of(&(avg_case){ true, 4 }, (weft_tensor *[]){ l23, w2 }, 2),
                       (12.0 - 15.0) / 4, 1e-12);
    weft_tensor_release(l4);
    weft_tensor_release(w);
    weft_tensor_release(l23);
    weft_tensor_release(w2);
}

Test(ops_embed, average_loss_batch_known_when_the_function_runs)
{
    weft_spec sig;
    cr_assert_eq(weft_spec_parse("f32[?]", &sig), 0);
    avg_case c = { false, 0 };
    weft_function *f = op_signature_function(rt, avg_body, &c, &sig, 1);
    const double loss[5] = { 1, 2, 3, 4, 5 };
    for (int64_t n = 3; n <= 5; n += 2) {
        weft_tensor *x = test_tensor(WEFT_F32, 1, &n, loss), *y = NULL;
        weft_arg a = weft_arg_tensor(x);
        cr_assert_eq(weft_function_call(f, &a, 1, &y, 1), 0, "%s", weft_errmsg());
        cr_expect_float_eq(test_element(y, 0), (double)(n + 1) / 2, 1e-6, "n %lld",
                           (long long)n);
        weft_tensor_release(x);
        weft_tensor_release(y);
    }
    op_destroy_traced_once(&f);
}

static int avg_error(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    switch (*(const int *)user) {
    case 0: outs[0] = weft_compute_average_loss(cx, a[1], NULL, 0); break;     /* i32 */
    case 1: outs[0] = weft_compute_average_loss(cx, a[2], NULL, 0); break;     /* scalar */
    case 2: outs[0] = weft_compute_average_loss(cx, a[0], a[3], 0); break;     /* [3,4] w */
    case 3: outs[0] = weft_compute_average_loss(cx, a[0], NULL, -1); break;
    default: outs[0] = weft_compute_average_loss(cx, a[0], a[4], 0); break;    /* bool w */
    }
    return weft_ctx_status(cx);
}

Test(ops_embed, average_loss_errors)
{
    const double v[12] = { 0 };
    weft_tensor *args[5] = { test_tensor(WEFT_F32, 1, (const int64_t[]){ 4 }, v),
                             test_tensor(WEFT_I32, 1, (const int64_t[]){ 4 }, v),
                             test_tensor(WEFT_F32, 0, NULL, v),
                             test_tensor(WEFT_F32, 2, (const int64_t[]){ 3, 4 }, v),
                             test_tensor(WEFT_BOOL, 1, (const int64_t[]){ 4 }, v) };
    static const op_error_case cases[] = {
        { 0, WEFT_EDTYPE, "weft_compute_average_loss: per_example_loss i32[4] is not f32" },
        { 1, WEFT_ESHAPE, "per_example_loss f32[] must have a batch dim" },
        { 2, WEFT_ESHAPE, "sample_weight f32[3,4] does not broadcast to the losses' shape" },
        { 3, WEFT_EINVAL, "global_batch_size -1 is negative" },
        { 4, WEFT_EDTYPE, "sample_weight bool[4] is bool" },
    };
    op_expect_errors(rt, avg_error, cases, 5, args, 5);
    for (int i = 0; i < 5; i++)
        weft_tensor_release(args[i]);
}
