/* non_max_suppression_padded: each batch element of [2, 3] random box
 * sets against weft_non_max_suppression of that element alone (f32 and
 * f64, ties, boxes without area, a NaN score, the thresholds and the
 * output limit, 0 included), the padding zeros and the counts; without
 * padding the unbatched result and its length; the same bits eagerly and
 * traced on 1, 2 and 4 workers; a batch unknown while tracing (and batches
 * that disagree, caught when the function runs); the refused calls. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_nms_padded, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

typedef struct padded_case {
    int64_t max_out;
    double  iou, score;
    bool    pad, alone;   /* alone: weft_non_max_suppression instead */
} padded_case;

static int padded_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const padded_case *c = user;
    if (c->alone) {
        outs[0] = weft_non_max_suppression(cx, a[0], a[1], c->max_out, c->iou, c->score);
        return weft_ctx_status(cx);
    }
    return weft_non_max_suppression_padded(cx, a[0], a[1], c->max_out, c->iou, c->score, c->pad,
                                           outs);
}

enum { B0 = 2, B1 = 3, N = 40 };

static void random_sets(double *b, double *s, uint64_t st)
{
    for (int i = 0; i < B0 * B1 * N; i++) {
        double y = 6 * op_uniform(&st), x = 6 * op_uniform(&st);
        b[4 * i + 0] = y;
        b[4 * i + 1] = x;
        b[4 * i + 2] = i % 13 == 0 ? y : y + 2 * op_uniform(&st);   /* some without area */
        b[4 * i + 3] = x + 2 * op_uniform(&st);
        s[i] = i % 7 == 0 ? 0.25 : op_uniform(&st);   /* ties */
    }
    s[5] = NAN;
}

/* Element e of the sets as its own [N, 4] boxes and [N] scores. */
static void element(weft_dtype dt, const double *b, const double *s, int e, weft_tensor **args)
{
    args[0] = test_tensor(dt, 2, (const int64_t[]){ N, 4 }, b + e * N * 4);
    args[1] = test_tensor(dt, 1, (const int64_t[]){ N }, s + e * N);
}

Test(ops_nms_padded, each_element_as_the_unbatched_op)
{
    static double b[B0 * B1 * N * 4], s[B0 * B1 * N];
    random_sets(b, s, 99);
    const padded_case cases[] = { { 8, 0.3, -INFINITY, true, false },
                                  { 60, 0.5, 0.0, true, false },
                                  { 0, 0.5, -INFINITY, true, false },
                                  { 5, 0.0, -0.5, true, false } };
    for (int f32 = 0; f32 < 2; f32++) {
        weft_dtype dt = f32 ? WEFT_F32 : WEFT_F64;
        weft_tensor *args[2] = { test_tensor(dt, 4, (const int64_t[]){ B0, B1, N, 4 }, b),
                                 test_tensor(dt, 3, (const int64_t[]){ B0, B1, N }, s) };
        for (size_t ci = 0; ci < sizeof cases / sizeof *cases; ci++) {
            padded_case c = cases[ci];
            weft_tensor *outs[2];
            op_results_everywhere(padded_body, &c, args, 2, outs, 2, "padded");
            test_assert_shape(outs[0], WEFT_I32, 3, (const int64_t[]){ B0, B1, c.max_out },
                              "indices");
            test_assert_shape(outs[1], WEFT_I32, 2, (const int64_t[]){ B0, B1 }, "counts");
            const int32_t *idx = weft_tensor_data(outs[0]), *cnt = weft_tensor_data(outs[1]);
            for (int e = 0; e < B0 * B1; e++) {
                weft_tensor *one[2], *want;
                element(dt, b, s, e, one);
                padded_case alone = c;
                alone.alone = true;
                cr_assert_eq(op_call(rts[0], padded_body, &alone, one, 2, &want, 1, false), 0,
                             "%s", weft_errmsg());
                int64_t m = weft_tensor_numel(want);
                cr_assert_eq(cnt[e], m, "%s case %zu element %d: %d kept, want %lld",
                             weft_dtype_name(dt), ci, e, cnt[e], (long long)m);
                const int32_t *w = weft_tensor_data(want);
                for (int64_t k = 0; k < c.max_out; k++)
                    cr_assert_eq(idx[e * c.max_out + k], k < m ? w[k] : 0,
                                 "%s case %zu element %d slot %lld", weft_dtype_name(dt), ci, e,
                                 (long long)k);
                weft_tensor_release(want);
                weft_tensor_release(one[0]);
                weft_tensor_release(one[1]);
            }
            weft_tensor_release(outs[0]);
            weft_tensor_release(outs[1]);
        }
        weft_tensor_release(args[0]);
        weft_tensor_release(args[1]);
    }
}

Test(ops_nms_padded, unpadded_is_the_unbatched_op_and_its_length)
{
    static double b[B0 * B1 * N * 4], s[B0 * B1 * N];
    random_sets(b, s, 7);
    weft_tensor *one[2], *outs[2], *want;
    element(WEFT_F64, b, s, 1, one);
    padded_case c = { 10, 0.4, 0.1, false, false }, alone = c;
    alone.alone = true;
    op_results_everywhere(padded_body, &c, one, 2, outs, 2, "unpadded");
    cr_assert_eq(op_call(rts[0], padded_body, &alone, one, 2, &want, 1, false), 0);
    cr_assert(op_same_bits(outs[0], want), "other boxes kept");
    test_assert_shape(outs[1], WEFT_I32, 0, NULL, "count");
    cr_assert_eq(*(const int32_t *)weft_tensor_data(outs[1]), weft_tensor_numel(want));
    weft_tensor_release(want);
    for (int k = 0; k < 2; k++) {
        weft_tensor_release(outs[k]);
        weft_tensor_release(one[k]);
    }
}

Test(ops_nms_padded, one_trace_for_any_batch)
{
    static double b[B0 * B1 * N * 4], s[B0 * B1 * N];
    random_sets(b, s, 11);
    padded_case c = { 6, 0.5, -INFINITY, true, false };
    const weft_spec sig[2] = { { .dtype = WEFT_F64, .rank = 3, .dims = { WEFT_DIM_ANY, N, 4 } },
                               { .dtype = WEFT_F64, .rank = 2, .dims = { WEFT_DIM_ANY, N } } };
    weft_function_desc d = { .name = "padded", .body = padded_body, .user = &c, .n_args = 2,
                             .n_outs = 2, .input_signature = sig };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rts[1], &d, &f), 0, "%s", weft_errmsg());
    for (int64_t batch = 1; batch <= B0 * B1; batch += 4) {
        weft_tensor *args[2] = { test_tensor(WEFT_F64, 3, (const int64_t[]){ batch, N, 4 }, b),
                                 test_tensor(WEFT_F64, 2, (const int64_t[]){ batch, N }, s) };
        weft_arg a[2] = { weft_arg_tensor(args[0]), weft_arg_tensor(args[1]) };
        weft_tensor *outs[2] = { NULL, NULL };
        cr_assert_eq(weft_function_call(f, a, 2, outs, 2), 0, "%s", weft_errmsg());
        test_assert_shape(outs[0], WEFT_I32, 2, (const int64_t[]){ batch, 6 }, "indices");
        for (int k = 0; k < 2; k++) {
            weft_tensor_release(outs[k]);
            weft_tensor_release(args[k]);
        }
    }
    /* Batches that disagree are caught when the function runs. */
    weft_tensor *args[2] = { test_tensor(WEFT_F64, 3, (const int64_t[]){ 2, N, 4 }, b),
                             test_tensor(WEFT_F64, 2, (const int64_t[]){ 3, N }, s) };
    weft_arg a[2] = { weft_arg_tensor(args[0]), weft_arg_tensor(args[1]) };
    weft_tensor *outs[2] = { NULL, NULL };
    cr_assert_eq(weft_function_call(f, a, 2, outs, 2), WEFT_ESHAPE);
    cr_assert(strstr(weft_errmsg(), "weft_non_max_suppression_padded: the boxes f64[2,40,4] and "
                                    "scores f64[3,40] are not"), "%s", weft_errmsg());
    cr_assert(outs[0] == NULL && outs[1] == NULL);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
    op_destroy_traced_once(&f);
}

typedef enum bad_call { BATCH_UNPADDED, BATCH_CLASH, IOU_RANGE, MAX_NEGATIVE, DTYPES,
                        NULL_OUTS } bad_call;

/* args: f64 boxes [2, 5, 4], f64 scores [2, 5], f64 scores [3, 5], f32 scores [2, 5]. */
static int bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    weft_value *r[2];
    int rc = 0;
    switch ((bad_call) * (const int *)user) {
    case BATCH_UNPADDED:
        rc = weft_non_max_suppression_padded(cx, a[0], a[1], 3, 0.5, 0, false, r);
        break;
    case BATCH_CLASH:
        rc = weft_non_max_suppression_padded(cx, a[0], a[2], 3, 0.5, 0, true, r);
        break;
    case IOU_RANGE:
        rc = weft_non_max_suppression_padded(cx, a[0], a[1], 3, 1.5, 0, true, r);
        break;
    case MAX_NEGATIVE:
        rc = weft_non_max_suppression_padded(cx, a[0], a[1], -1, 0.5, 0, true, r);
        break;
    case DTYPES: rc = weft_non_max_suppression_padded(cx, a[0], a[3], 3, 0.5, 0, true, r); break;
    case NULL_OUTS:
        rc = weft_non_max_suppression_padded(cx, a[0], a[1], 3, 0.5, 0, true, NULL);
        break;
    }
    outs[0] = rc == 0 ? r[0] : NULL;
    return weft_ctx_status(cx);
}

Test(ops_nms_padded, refused_calls_name_the_op)
{
    double v[40] = { 0 };
    weft_tensor *args[4] = { test_tensor(WEFT_F64, 3, (const int64_t[]){ 2, 5, 4 }, v),
                             test_tensor(WEFT_F64, 2, (const int64_t[]){ 2, 5 }, v),
                             test_tensor(WEFT_F64, 2, (const int64_t[]){ 3, 5 }, v),
                             test_tensor(WEFT_F32, 2, (const int64_t[]){ 2, 5 }, v) };
    const op_error_case cases[] = {
        { BATCH_UNPADDED, WEFT_ESHAPE, "weft_non_max_suppression_padded: the boxes f64[2,5,4] "
                                       "are not [n, 4]: a batch needs pad_to_max_output_size" },
        { BATCH_CLASH, WEFT_ESHAPE, "weft_non_max_suppression_padded: the boxes f64[2,5,4] and "
                                    "scores f64[3,5] are not" },
        { IOU_RANGE, WEFT_EINVAL, "weft_non_max_suppression_padded: iou_threshold 1.5" },
        { MAX_NEGATIVE, WEFT_EINVAL, "weft_non_max_suppression_padded: max_output_size -1" },
        { DTYPES, WEFT_EDTYPE, "weft_non_max_suppression_padded: the boxes f64[2,5,4] and "
                               "scores f32[2,5] are not both" },
        { NULL_OUTS, WEFT_EINVAL, "weft_non_max_suppression_padded: outs is NULL" },
    };
    op_expect_errors(rts[1], bad_body, cases, sizeof cases / sizeof *cases, args, 4);
    for (int k = 0; k < 4; k++)
        weft_tensor_release(args[k]);
}
