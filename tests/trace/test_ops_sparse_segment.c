/* tf.sparse.segment_sum, segment_mean and segment_sqrt_n: TensorFlow's
 * documented examples, then sums, means and square-root means against a
 * loop written here, with and without num_segments, eager and traced on
 * 1, 2 and 4 workers with the same bits; one trace for every length;
 * unsorted, negative and too large ids, lengths that differ and indices
 * out of range failing the call; gradients; the refusals. */
#include <math.h>
#include <string.h>

#include "grad_check.h"
#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_sparse_segment, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

#define DIMS(...) ((const int64_t[]){ __VA_ARGS__ })

typedef struct segment_case {
    int which;              /* WEFT_R_SUM, WEFT_R_MEAN, or -1 for sqrt_n */
    int64_t num_segments;
} segment_case;

static int segment_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const segment_case *c = user;
    if (c->which < 0)
        outs[0] = weft_sparse_segment_sqrt_n(cx, a[0], a[1], a[2], c->num_segments);
    else
        outs[0] = weft_sparse_segment(cx, (weft_reduction)c->which, a[0], a[1], a[2],
                                      c->num_segments);
    return weft_ctx_status(cx);
}

static void expect_values(const weft_tensor *t, const double *want, int64_t n, const char *what)
{
    cr_assert_eq(weft_tensor_numel(t), n, "%s: %lld elements", what,
                 (long long)weft_tensor_numel(t));
    for (int64_t k = 0; k < n; k++)
        cr_assert(test_element(t, k) == want[k], "%s[%lld] is %.17g, not %.17g", what,
                  (long long)k, test_element(t, k), want[k]);
}

/* tf.sparse.segment_sum's documentation: c = [[1, 2, 3, 4], [-1, -2, -3,
 * -4], [5, 6, 7, 8]]. */
Test(ops_sparse_segment, tensorflows_examples)
{
    static const double c[12] = { 1, 2, 3, 4, -1, -2, -3, -4, 5, 6, 7, 8 };
    static const struct {
        double indices[2], ids[2];
        int64_t num_segments, rows;
        double want[16];
    } ex[4] = {
        { { 0, 1 }, { 0, 0 }, -1, 1, { 0, 0, 0, 0 } },
        { { 0, 1 }, { 0, 1 }, -1, 2, { 1, 2, 3, 4, -1, -2, -3, -4 } },
        { { 0, 2 }, { 0, 1 }, -1, 2, { 1, 2, 3, 4, 5, 6, 7, 8 } },
        { { 0, 1 }, { 0, 2 }, 4, 4, { 1, 2, 3, 4, 0, 0, 0, 0, -1, -2, -3, -4, 0, 0, 0, 0 } },
    };
    for (int k = 0; k < 4; k++) {
        weft_tensor *args[3] = { test_tensor(WEFT_I32, 2, DIMS(3, 4), c),
                                 test_tensor(WEFT_I32, 1, DIMS(2), ex[k].indices),
                                 test_tensor(WEFT_I64, 1, DIMS(2), ex[k].ids) }, *y;
        segment_case sc = { WEFT_R_SUM, ex[k].num_segments };
        op_results_everywhere(segment_body, &sc, args, 3, &y, 1, "example");
        test_assert_shape(y, WEFT_I32, 2, DIMS(ex[k].rows, 4), "example");
        expect_values(y, ex[k].want, ex[k].rows * 4, "example");
        weft_tensor_release(y);
        for (int i = 0; i < 3; i++)
            weft_tensor_release(args[i]);
    }
}

#define ROWS 6
#define COLS 3
#define PICKED 8

static const double data_v[ROWS * COLS] = { 0.5, -1.25, 3,  2,   0.75, -4,   1.5, 6,  -0.5,
                                            -3,  2.5,   1,  4.5, -2,   0.25, 7,   -6, 1.75 };
static const double indices_v[PICKED] = { 3, 0, 3, 5, 1, 2, 2, 4 };
static const double ids_v[PICKED] = { 0, 0, 2, 2, 2, 3, 5, 5 };   /* 1 and 4 empty */

/* What TensorFlow's kernel computes: each segment's rows summed in
 * order, then the mean or the square-root mean. */
static void reference(int which, int64_t rows, double *out)
{
    double count[16] = { 0 };
    memset(out, 0, sizeof(double) * (size_t)(rows * COLS));
    for (int i = 0; i < PICKED; i++) {
        int s = (int)ids_v[i], r = (int)indices_v[i];
        count[s]++;
        for (int j = 0; j < COLS; j++)
            out[s * COLS + j] += data_v[r * COLS + j];
    }
    for (int64_t s = 0; s < rows; s++)
        for (int j = 0; j < COLS && count[s] > 0; j++)
            out[s * COLS + j] /= which == WEFT_R_MEAN ? count[s] : which < 0 ? sqrt(count[s]) : 1;
}

Test(ops_sparse_segment, sums_means_and_sqrt_n)
{
    for (int dt = 0; dt < 2; dt++) {
        weft_dtype dtype = dt ? WEFT_F32 : WEFT_F64;
        weft_tensor *args[3] = { test_tensor(dtype, 2, DIMS(ROWS, COLS), data_v),
                                 test_tensor(WEFT_I64, 1, DIMS(PICKED), indices_v),
                                 test_tensor(WEFT_I32, 1, DIMS(PICKED), ids_v) };
        for (int which = -1; which < 2; which++)
            for (int given = 0; given < 2; given++) {
                int64_t rows = given ? 9 : 6;
                segment_case sc = { which, given ? 9 : -1 };
                weft_tensor *y;
                op_results_everywhere(segment_body, &sc, args, 3, &y, 1, "segments");
                test_assert_shape(y, dtype, 2, DIMS(rows, COLS), "segments");
                double want[9 * COLS];
                reference(which, rows, want);
                for (int64_t k = 0; k < rows * COLS; k++) {
                    double w = dt ? (double)(float)want[k] : want[k];
                    cr_assert(fabs(test_element(y, k) - w) <= (dt ? 2.4e-7 : 1e-15) * fabs(w),
                              "which %d given %d dtype %d [%lld]: %.17g, not %.17g", which,
                              given, dt, (long long)k, test_element(y, k), w);
                }
                weft_tensor_release(y);
            }
        for (int i = 0; i < 3; i++)
            weft_tensor_release(args[i]);
    }
    /* An integer mean is f64, as weft_segment's. */
    weft_tensor *ints[3] = { test_tensor(WEFT_I32, 1, DIMS(3), (const double[]){ 1, 2, 4 }),
                             test_tensor(WEFT_I32, 1, DIMS(3), (const double[]){ 0, 1, 2 }),
                             test_tensor(WEFT_I32, 1, DIMS(3), (const double[]){ 0, 0, 0 }) }, *y;
    segment_case mean = { WEFT_R_MEAN, -1 };
    op_results_everywhere(segment_body, &mean, ints, 3, &y, 1, "integer mean");
    test_assert_shape(y, WEFT_F64, 1, DIMS(1), "integer mean");
    cr_assert_eq(test_element(y, 0), 7.0 / 3);
    weft_tensor_release(y);
    for (int i = 0; i < 3; i++)
        weft_tensor_release(ints[i]);
}

/* Unknown lengths and rows: one trace serves them all; what only the
 * values show fails the call when it runs. */
Test(ops_sparse_segment, one_trace_and_checks_when_it_runs)
{
    const weft_spec sig[3] = { { WEFT_F64, 2, { -1, COLS } }, { WEFT_I64, 1, { -1 } },
                               { WEFT_I64, 1, { -1 } } };
    static const char *const says[5] = {
        NULL, "weft_sparse_segment: segment_ids and indices are not of one length",
        "weft_sparse_segment: segment_ids are not sorted",
        "weft_sparse_segment: a segment id is negative", "weft_gather",
    };
    for (int given = 0; given < 2; given++) {
        segment_case sc = { WEFT_R_SUM, given ? 7 : -1 };
        weft_function *f = op_signature_function(rt, segment_body, &sc, sig, 3);
        for (int k = 0; k < 5; k++) {
            int n = k == 1 ? 5 : PICKED;
            double ids[PICKED], idx[PICKED];
            memcpy(ids, ids_v, sizeof ids);
            memcpy(idx, indices_v, sizeof idx);
            if (k == 2)
                ids[4] = 1;   /* 2, 1: falling */
            if (k == 3)
                ids[0] = -1;
            if (k == 4)
                idx[6] = ROWS;
            weft_tensor *ts[3] = { test_tensor(WEFT_F64, 2, DIMS(ROWS, COLS), data_v),
                                   test_tensor(WEFT_I64, 1, DIMS(PICKED), idx),
                                   test_tensor(WEFT_I64, 1, DIMS(n), ids) }, *y = NULL;
            weft_arg a[3] = { weft_arg_tensor(ts[0]), weft_arg_tensor(ts[1]),
                              weft_arg_tensor(ts[2]) };
            int rc = weft_function_call(f, a, 3, &y, 1);
            if (k == 0) {
                cr_assert_eq(rc, 0, "%s", weft_errmsg());
                double want[7 * COLS];
                reference(WEFT_R_SUM, given ? 7 : 6, want);
                expect_values(y, want, (given ? 7 : 6) * COLS, "traced");
                weft_tensor_release(y);
            } else {
                cr_assert_eq(rc, WEFT_EINVAL, "given %d case %d: %s", given, k, weft_errmsg());
                /* Without num_segments weft_segment finds a negative or
                 * falling id first, naming it. */
                const char *want = !given && (k == 2 || k == 3) ? "weft_segment" : says[k];
                cr_assert(strstr(weft_errmsg(), want), "given %d case %d: %s", given, k,
                          weft_errmsg());
                cr_assert_null(y);
            }
            for (int i = 0; i < 3; i++)
                weft_tensor_release(ts[i]);
        }
        op_destroy_traced_once(&f);
    }
    /* An id past num_segments, as weft_unsorted_segment says. */
    segment_case few = { WEFT_R_SUM, 5 };
    weft_tensor *ts[3] = { test_tensor(WEFT_F64, 2, DIMS(ROWS, COLS), data_v),
                           test_tensor(WEFT_I64, 1, DIMS(PICKED), indices_v),
                           test_tensor(WEFT_I64, 1, DIMS(PICKED), ids_v) }, *y = NULL;
    for (int eager = 0; eager < 2; eager++) {
        cr_assert_eq(op_call(rt, segment_body, &few, ts, 3, &y, 1, eager), WEFT_EINVAL);
        cr_assert(strstr(weft_errmsg(), "weft_unsorted_segment"), "%s", weft_errmsg());
    }
    for (int i = 0; i < 3; i++)
        weft_tensor_release(ts[i]);
}

static int grad_fn(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    segment_case c = *(const segment_case *)user;
    weft_value *in[3] = { a[0], weft_cast(cx, a[1], WEFT_I64), weft_cast(cx, a[2], WEFT_I32) };
    return segment_body(cx, in, outs, &c);
}

Test(ops_sparse_segment, gradients)
{
    const grad_arg in[3] = { { 2, { ROWS, COLS }, data_v }, { 1, { PICKED }, indices_v },
                             { 1, { PICKED }, ids_v } };
    for (int which = -1; which < 2; which++)
        for (int given = 0; given < 2; given++) {
            segment_case c = { which, given ? 7 : -1 };
            grad_case g = { grad_fn, &c, 3, 1 };
            expect_gradients(&g, in, "sparse segment");
        }
}

static int refused_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    int which = *(const int *)user;
    segment_case c = { WEFT_R_SUM, -1 };
    weft_value *in[3] = { a[0], a[1], a[2] };
    switch (which) {
    case 0: c.which = WEFT_R_MAX; break;
    case 1: c.num_segments = -2; break;
    case 2: in[0] = weft_const_f64(cx, 1); break;
    case 3: in[1] = weft_cast(cx, a[1], WEFT_F64); break;
    case 4: in[2] = weft_reshape(cx, a[2], 2, DIMS(2, 2)); break;
    case 5: in[1] = weft_concat(cx, (weft_value *[]){ a[1], a[1] }, 2, 0); break;
    default: c.which = -1; in[0] = weft_cast(cx, a[0], WEFT_I32); break;
    }
    return segment_body(cx, in, outs, &c);
}

Test(ops_sparse_segment, refusals)
{
    weft_tensor *args[3] = { test_tensor(WEFT_F64, 2, DIMS(4, 2), data_v),
                             test_tensor(WEFT_I32, 1, DIMS(4), (const double[]){ 0, 1, 2, 3 }),
                             test_tensor(WEFT_I64, 1, DIMS(4), (const double[]){ 0, 0, 1, 1 }) };
    static const op_error_case cases[] = {
        { 0, WEFT_EINVAL, "weft_sparse_segment: reduction 2 is not WEFT_R_SUM or WEFT_R_MEAN" },
        { 1, WEFT_EINVAL, "weft_sparse_segment: num_segments -2 is not -1 (none) or >= 0" },
        { 2, WEFT_ESHAPE, "weft_sparse_segment: data f64[] is not of rank 1 or more" },
        { 3, WEFT_EDTYPE, "weft_sparse_segment: indices f64[4] is not a vector of i32 or i64" },
        { 4, WEFT_ESHAPE, "weft_sparse_segment: segment_ids i64[2,2] is not a vector" },
        { 5, WEFT_EINVAL, "weft_sparse_segment: segment_ids and indices are not of one length "
                          "(4 and 8)" },
        { 6, WEFT_EDTYPE, "weft_sparse_segment_sqrt_n: data i32[4,2] is not f32 or f64" },
    };
    op_expect_errors(rt, refused_body, cases, sizeof cases / sizeof cases[0], args, 3);
    for (int i = 0; i < 3; i++)
        weft_tensor_release(args[i]);
}
