/* weft_non_max_suppression: TensorFlow's own test case (three clusters),
 * random boxes against a greedy loop written here (f32 and f64, flipped
 * corners, boxes without area, ties in score, the score threshold and the
 * output limit), the same bits eagerly and traced on 1, 2 and 4 workers,
 * one trace for any count kept, and the refused calls. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_nms, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

typedef struct nms_case {
    int64_t max_out;
    double iou, score;
} nms_case;

static int nms_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const nms_case *c = user;
    outs[0] = weft_non_max_suppression(cx, a[0], a[1], c->max_out, c->iou, c->score);
    return weft_ctx_status(cx);
}

static weft_tensor *make(weft_dtype dt, int rank, const int64_t *dims, const double *v)
{
    int64_t n = 1;
    for (int d = 0; d < rank; d++)
        n *= dims[d];
    float *f = malloc(sizeof *f * (size_t)(n ? n : 1));
    cr_assert_not_null(f);
    for (int64_t i = 0; i < n; i++)
        f[i] = (float)v[i];
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(dt, rank, dims, dt == WEFT_F32 ? (const void *)f : v, &t), 0);
    free(f);
    return t;
}

Test(ops_nms, tensorflows_three_clusters)
{
    const double boxes[6 * 4] = { 0, 0,  1, 1,  0, 0.1,  1, 1.1,  0, -0.1, 1, 0.9,
                                  0, 10, 1, 11, 0, 10.1, 1, 11.1, 0, 100,  1, 101 };
    const double scores[6] = { 0.9, 0.75, 0.6, 0.95, 0.5, 0.3 };
    weft_tensor *args[2] = { make(WEFT_F32, 2, (const int64_t[]){ 6, 4 }, boxes),
                             make(WEFT_F32, 1, (const int64_t[]){ 6 }, scores) };
    nms_case c = { 3, 0.5, -INFINITY };
    weft_tensor *out;
    op_results_everywhere(nms_body, &c, args, 2, &out, 1, "three clusters");
    cr_assert_eq(weft_tensor_dtype(out), WEFT_I32);
    cr_assert_eq(weft_tensor_numel(out), 3);
    const int32_t *k = weft_tensor_data(out);
    cr_assert(k[0] == 3 && k[1] == 0 && k[2] == 5, "kept %d %d %d", k[0], k[1], k[2]);
    weft_tensor_release(out);
    /* At most two; and with a score threshold of 0.4 box 5 (0.3) goes. */
    c.max_out = 2;
    op_results_everywhere(nms_body, &c, args, 2, &out, 1, "two of them");
    cr_assert_eq(weft_tensor_numel(out), 2);
    weft_tensor_release(out);
    c = (nms_case){ 100, 0.5, 0.4 };
    op_results_everywhere(nms_body, &c, args, 2, &out, 1, "score threshold");
    cr_assert_eq(weft_tensor_numel(out), 2);
    k = weft_tensor_data(out);
    cr_assert(k[0] == 3 && k[1] == 0);
    weft_tensor_release(out);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

/* The greedy rule in double over boxes as floats were read (f32: the
 * rounded values, computed in float). */
static double ref_iou(const double *b, int64_t i, int64_t j, bool f32)
{
    double v[2][4];
    for (int k = 0; k < 4; k++) {
        v[0][k] = b[4 * i + k];
        v[1][k] = b[4 * j + k];
    }
    if (f32) {
        float lo[2][2], hi[2][2], area[2];
        for (int s = 0; s < 2; s++) {
            for (int a = 0; a < 2; a++) {
                float p = (float)v[s][a], q = (float)v[s][a + 2];
                lo[s][a] = fminf(p, q);
                hi[s][a] = fmaxf(p, q);
            }
            area[s] = (hi[s][0] - lo[s][0]) * (hi[s][1] - lo[s][1]);
        }
        if (area[0] <= 0 || area[1] <= 0)
            return 0;
        float h = fmaxf(fminf(hi[0][0], hi[1][0]) - fmaxf(lo[0][0], lo[1][0]), 0);
        float w = fmaxf(fminf(hi[0][1], hi[1][1]) - fmaxf(lo[0][1], lo[1][1]), 0);
        float inter = h * w;
        return inter / (area[0] + area[1] - inter);
    }
    double lo[2][2], hi[2][2], area[2];
    for (int s = 0; s < 2; s++) {
        for (int a = 0; a < 2; a++) {
            lo[s][a] = fmin(v[s][a], v[s][a + 2]);
            hi[s][a] = fmax(v[s][a], v[s][a + 2]);
        }
        area[s] = (hi[s][0] - lo[s][0]) * (hi[s][1] - lo[s][1]);
    }
    if (area[0] <= 0 || area[1] <= 0)
        return 0;
    double h = fmax(fmin(hi[0][0], hi[1][0]) - fmax(lo[0][0], lo[1][0]), 0);
    double w = fmax(fmin(hi[0][1], hi[1][1]) - fmax(lo[0][1], lo[1][1]), 0);
    double inter = h * w;
    return inter / (area[0] + area[1] - inter);
}

/* The kept indices: repeatedly the best remaining score (lowest index on
 * ties) above the threshold, kept unless it overlaps a kept box. */
static int64_t reference(const double *b, const double *s, int64_t n, const nms_case *c, bool f32,
                         int32_t *kept)
{
    bool *done = calloc((size_t)n, sizeof *done);
    cr_assert_not_null(done);
    int64_t m = 0;
    for (;;) {
        int64_t best = -1;
        for (int64_t i = 0; i < n; i++) {
            double si = f32 ? (double)(float)s[i] : s[i];
            double sb = best < 0 ? 0 : (f32 ? (double)(float)s[best] : s[best]);
            if (!done[i] && si > c->score && (best < 0 || si > sb))
                best = i;
        }
        if (best < 0 || m >= c->max_out)
            break;
        done[best] = true;
        bool hit = false;
        for (int64_t k = 0; k < m && !hit; k++)
            hit = ref_iou(b, best, kept[k], f32) > c->iou;
        if (!hit)
            kept[m++] = (int32_t)best;
    }
    free(done);
    return m;
}

Test(ops_nms, random_boxes_against_the_greedy_rule)
{
    enum { N = 300 };
    double b[N * 4], s[N];
    uint64_t st = 0x853c49e6748fea9bu;
    for (int i = 0; i < N; i++) {
        double y = 10 * op_uniform(&st), x = 10 * op_uniform(&st);
        double h = 2 * op_uniform(&st), w = 2 * op_uniform(&st);   /* negative: flipped */
        b[4 * i + 0] = y;
        b[4 * i + 1] = x;
        b[4 * i + 2] = i % 17 == 0 ? y : y + h;   /* some boxes without area */
        b[4 * i + 3] = x + w;
        s[i] = i % 23 == 0 ? 0.5 : op_uniform(&st);   /* ties at 0.5 */
    }
    s[7] = NAN;
    const nms_case cases[] = { { 50, 0.3, -INFINITY }, { 1000, 0.5, 0.0 }, { 10, 0.0, -0.5 },
                               { 0, 0.5, -INFINITY }, { 1000, 1.0, -INFINITY } };
    for (int f32 = 0; f32 < 2; f32++) {
        weft_dtype dt = f32 ? WEFT_F32 : WEFT_F64;
        weft_tensor *args[2] = { make(dt, 2, (const int64_t[]){ N, 4 }, b),
                                 make(dt, 1, (const int64_t[]){ N }, s) };
        for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
            int32_t want[N];
            int64_t m = reference(b, s, N, &cases[ci], f32, want);
            weft_tensor *out;
            op_results_everywhere(nms_body, (void *)&cases[ci], args, 2, &out, 1, "random");
            cr_assert_eq(weft_tensor_numel(out), m, "%s case %zu: %lld kept, expected %lld",
                         weft_dtype_name(dt), ci, (long long)weft_tensor_numel(out),
                         (long long)m);
            cr_assert(memcmp(weft_tensor_data(out), want, sizeof *want * (size_t)m) == 0,
                      "%s case %zu: other boxes kept", weft_dtype_name(dt), ci);
            weft_tensor_release(out);
        }
        weft_tensor_release(args[0]);
        weft_tensor_release(args[1]);
    }
}

/* One trace serves any number of boxes and any count kept. */
Test(ops_nms, one_trace_for_any_count)
{
    weft_spec sig[2] = { { .dtype = WEFT_F64, .rank = 2, .dims = { WEFT_DIM_ANY, 4 } },
                         { .dtype = WEFT_F64, .rank = 1, .dims = { WEFT_DIM_ANY } } };
    nms_case c = { 10, 0.5, -INFINITY };
    weft_function *f = op_signature_function(rts[1], nms_body, &c, sig, 2);
    for (int64_t n = 1; n <= 3; n++) {
        double b[12], s[3];
        for (int i = 0; i < n; i++) {   /* n disjoint unit boxes */
            double box[4] = { 0, 2.0 * i, 1, 2.0 * i + 1 };
            memcpy(b + 4 * i, box, sizeof box);
            s[i] = 1.0 - 0.1 * i;
        }
        weft_tensor *bt = make(WEFT_F64, 2, (const int64_t[]){ n, 4 }, b);
        weft_tensor *stt = make(WEFT_F64, 1, &n, s);
        weft_arg a[2] = { weft_arg_tensor(bt), weft_arg_tensor(stt) };
        weft_tensor *out = NULL;
        cr_assert_eq(weft_function_call(f, a, 2, &out, 1), 0, "%s", weft_errmsg());
        cr_assert_eq(weft_tensor_numel(out), n);
        weft_tensor_release(out);
        weft_tensor_release(bt);
        weft_tensor_release(stt);
    }
    op_destroy_traced_once(&f);
}

typedef enum bad_call { MAX_NEGATIVE, IOU_RANGE, SCORE_NAN, BOX_SHAPE, DTYPES, COUNTS } bad_call;

/* args: boxes f64 [3, 4], scores f64 [3], scores f64 [2]. */
static int bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    weft_value *b = a[0], *s = a[1];
    int64_t max_out = 5;
    double iou = 0.5, score = 0;
    switch ((bad_call) * (const int *)user) {
    case MAX_NEGATIVE: max_out = -1; break;
    case IOU_RANGE: iou = 1.5; break;
    case SCORE_NAN: score = NAN; break;
    case BOX_SHAPE: b = weft_reshape(cx, b, 2, (const int64_t[]){ 4, 3 }); break;
    case DTYPES: s = weft_cast(cx, s, WEFT_F32); break;
    case COUNTS: s = a[2]; break;
    }
    outs[0] = weft_non_max_suppression(cx, b, s, max_out, iou, score);
    return weft_ctx_status(cx);
}

Test(ops_nms, refused_calls_name_the_op)
{
    const double b[12] = { 0 }, s[3] = { 1, 2, 3 };
    weft_tensor *args[3] = { make(WEFT_F64, 2, (const int64_t[]){ 3, 4 }, b),
                             make(WEFT_F64, 1, (const int64_t[]){ 3 }, s),
                             make(WEFT_F64, 1, (const int64_t[]){ 2 }, s) };
    const op_error_case cases[] = {
        { MAX_NEGATIVE, WEFT_EINVAL, "weft_non_max_suppression: max_output_size -1 is not" },
        { IOU_RANGE, WEFT_EINVAL, "weft_non_max_suppression: iou_threshold 1.5 is not within" },
        { SCORE_NAN, WEFT_EINVAL, "weft_non_max_suppression: score_threshold is NaN" },
        { BOX_SHAPE, WEFT_ESHAPE, "weft_non_max_suppression: the boxes f64[4,3] and scores "
                                  "f64[3] are not [n, 4] and [n]" },
        { DTYPES, WEFT_EDTYPE, "weft_non_max_suppression: the boxes f64[3,4] and scores f32[3] "
                               "are not both f32 or both f64" },
        { COUNTS, WEFT_ESHAPE, "weft_non_max_suppression: the boxes f64[3,4] and scores f64[2]" },
    };
    op_expect_errors(rts[1], bad_body, cases, sizeof cases / sizeof *cases, args, 3);
    for (int i = 0; i < 3; i++)
        weft_tensor_release(args[i]);
}
