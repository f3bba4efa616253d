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

/* A threshold as TensorFlow compares it: cast to the scores' type. */
static double in_dtype(double v, bool f32)
{
    return f32 ? (double)(float)v : v;
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
            if (!done[i] && si > in_dtype(c->score, f32) && (best < 0 || si > sb))
                best = i;
        }
        if (best < 0 || m >= c->max_out)
            break;
        done[best] = true;
        bool hit = false;
        for (int64_t k = 0; k < m && !hit; k++)
            hit = ref_iou(b, best, kept[k], f32) > in_dtype(c->iou, f32);
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

/* ---- weft_combined_non_max_suppression ---- */

typedef struct cnms_case {
    int64_t per_class, total;
    double iou, score;
    bool pad, clip;
} cnms_case;

static int cnms_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const cnms_case *c = user;
    return weft_combined_non_max_suppression(cx, a[0], a[1], c->per_class, c->total, c->iou,
                                             c->score, c->pad, c->clip, outs);
}

/* TensorFlow's three clusters with a second class (q 1): class 0 keeps
 * boxes 3, 0, 5 (0.95, 0.9, 0.3); class 1 keeps 2 and 4 (0.8, 0.4; box
 * 1 and 0 overlap 2, 3 overlaps 4, and 5's 0.0 is not above the threshold). */
Test(ops_nms, combined_by_hand)
{
    const double boxes[6 * 4] = { 0, 0,  1, 1,  0, 0.1,  1, 1.1,  0, -0.1, 1, 0.9,
                                  0, 10, 1, 11, 0, 10.1, 1, 11.1, 0, 100,  1, 101 };
    const double scores[6 * 2] = { 0.9, 0.1, 0.75, 0.2, 0.6, 0.8, 0.95, 0.05, 0.5, 0.4, 0.3, 0 };
    weft_tensor *args[2] = { make(WEFT_F32, 4, (const int64_t[]){ 1, 6, 1, 4 }, boxes),
                             make(WEFT_F32, 3, (const int64_t[]){ 1, 6, 2 }, scores) };
    cnms_case c = { 3, 4, 0.5, 0.0, false, false };
    weft_tensor *out[4];
    op_results_everywhere(cnms_body, &c, args, 2, out, 4, "by hand");
    test_assert_shape(out[0], WEFT_F32, 3, (const int64_t[]){ 1, 4, 4 }, "boxes");
    test_assert_shape(out[1], WEFT_F32, 2, (const int64_t[]){ 1, 4 }, "scores");
    test_assert_shape(out[2], WEFT_F32, 2, (const int64_t[]){ 1, 4 }, "classes");
    test_assert_shape(out[3], WEFT_I32, 1, (const int64_t[]){ 1 }, "detections");
    const int order[4] = { 3, 0, 2, 4 };
    const float want_scores[4] = { 0.95f, 0.9f, 0.8f, 0.4f }, want_classes[4] = { 0, 0, 1, 1 };
    const float *ob = weft_tensor_data(out[0]), *os = weft_tensor_data(out[1]),
                *oc = weft_tensor_data(out[2]);
    for (int r = 0; r < 4; r++) {
        for (int k = 0; k < 4; k++)
            cr_expect_eq(ob[4 * r + k], (float)boxes[4 * order[r] + k], "row %d coord %d", r, k);
        cr_expect_eq(os[r], want_scores[r], "score %d", r);
        cr_expect_eq(oc[r], want_classes[r], "class %d", r);
    }
    cr_expect_eq(*(const int32_t *)weft_tensor_data(out[3]), 4);
    for (int k = 0; k < 4; k++)
        weft_tensor_release(out[k]);

    /* Clipped to [0, 1]; ten rows, five detections, the rest zero. */
    c = (cnms_case){ 3, 10, 0.5, 0.0, false, true };
    op_results_everywhere(cnms_body, &c, args, 2, out, 4, "clipped, padded");
    test_assert_shape(out[0], WEFT_F32, 3, (const int64_t[]){ 1, 10, 4 }, "padded");
    ob = weft_tensor_data(out[0]);
    os = weft_tensor_data(out[1]);
    const float box3[4] = { 0, 1, 1, 1 };
    cr_expect(memcmp(ob, box3, sizeof box3) == 0, "box 3 clipped: %g %g %g %g", ob[0], ob[1],
              ob[2], ob[3]);
    cr_expect_eq(os[4], 0.3f);
    cr_expect_eq(*(const int32_t *)weft_tensor_data(out[3]), 5);
    for (int r = 5; r < 10; r++)
        cr_expect(os[r] == 0 && ob[4 * r] == 0 && ob[4 * r + 3] == 0 &&
                  ((const float *)weft_tensor_data(out[2]))[r] == 0, "row %d is padding", r);
    for (int k = 0; k < 4; k++)
        weft_tensor_release(out[k]);

    /* pad_per_class: rows for no more than 3 a class, so 6 of the 10. */
    c.pad = true;
    op_results_everywhere(cnms_body, &c, args, 2, out, 4, "pad per class");
    test_assert_shape(out[1], WEFT_F32, 2, (const int64_t[]){ 1, 6 }, "pad per class");
    cr_expect_eq(*(const int32_t *)weft_tensor_data(out[3]), 5);
    for (int k = 0; k < 4; k++)
        weft_tensor_release(out[k]);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

typedef struct cnms_ref {
    double score;
    int box, cls;
} cnms_ref;

/* One image: hard NMS per class with the greedy reference above (boxes of
 * class c at stride q), then the kept boxes by falling score, class by
 * class on ties; returns how many. */
static int cnms_reference(const double *b, const double *s, int n, int q, int classes,
                          const cnms_case *c, bool f32, cnms_ref *det)
{
    int m = 0;
    for (int cls = 0; cls < classes; cls++) {
        double *bc = malloc(sizeof *bc * 4 * (size_t)n), *sc = malloc(sizeof *sc * (size_t)n);
        int32_t *kept = malloc(sizeof *kept * (size_t)n);
        cr_assert(bc && sc && kept);
        for (int i = 0; i < n; i++) {
            memcpy(bc + 4 * i, b + 4 * (i * q + (q > 1 ? cls : 0)), 4 * sizeof *bc);
            sc[i] = s[i * classes + cls];
        }
        nms_case one = { c->per_class, c->iou, c->score };
        int64_t k = reference(bc, sc, n, &one, f32, kept);
        for (int64_t j = 0; j < k; j++)
            det[m++] = (cnms_ref){ f32 ? (double)(float)sc[kept[j]] : sc[kept[j]], kept[j], cls };
        free(bc);
        free(sc);
        free(kept);
    }
    /* A stable insertion sort by falling score keeps the class order. */
    for (int i = 1; i < m; i++)
        for (int j = i; j > 0 && det[j].score > det[j - 1].score; j--) {
            cnms_ref t = det[j];
            det[j] = det[j - 1];
            det[j - 1] = t;
        }
    return m;
}

/* Random images, q 1 and q = classes, f32 and f64, ties in score, against
 * the reference, every output checked row by row. */
Test(ops_nms, combined_random_against_the_reference)
{
    enum { B = 3, N = 60, C = 4 };
    static double b[B * N * C * 4], s[B * N * C];
    uint64_t st = 0x2545f4914f6cdd1du;
    for (int i = 0; i < B * N * C; i++) {
        double y = 6 * op_uniform(&st) - 0.5, x = 6 * op_uniform(&st) - 0.5;
        b[4 * i + 0] = y;
        b[4 * i + 1] = x;
        b[4 * i + 2] = y + 2 * op_uniform(&st);
        b[4 * i + 3] = x + 2 * op_uniform(&st);
        s[i] = i % 13 == 0 ? 0.5 : op_uniform(&st);
    }
    const cnms_case cases[] = { { 5, 12, 0.4, 0.2, false, true },
                                { 100, 7, 0.6, -INFINITY, false, false },
                                { 3, 100, 0.5, 0.0, true, true },
                                { 0, 5, 0.5, 0.0, false, true },
                                { 8, 40, 0.0, 0.3, false, false } };
    for (int qi = 0; qi < 2; qi++)
        for (int f32 = 0; f32 < 2; f32++) {
            int q = qi ? C : 1;
            weft_dtype dt = f32 ? WEFT_F32 : WEFT_F64;
            weft_tensor *args[2] = { make(dt, 4, (const int64_t[]){ B, N, q, 4 }, b),
                                     make(dt, 3, (const int64_t[]){ B, N, C }, s) };
            for (size_t ci = 0; ci < sizeof cases / sizeof *cases; ci++) {
                const cnms_case *c = &cases[ci];
                weft_tensor *out[4];
                op_results_everywhere(cnms_body, (void *)c, args, 2, out, 4, "random");
                int64_t d = c->pad && c->per_class * C < c->total ? c->per_class * C : c->total;
                test_assert_shape(out[1], dt, 2, (const int64_t[]){ B, d }, "random");
                for (int img = 0; img < B; img++) {
                    cnms_ref det[N * C];
                    const double *bi = b + (size_t)img * N * q * 4;
                    int m = cnms_reference(bi, s + (size_t)img * N * C, N, q, C, c, f32, det);
                    int valid = m < d ? m : (int)d;
                    cr_assert_eq(((const int32_t *)weft_tensor_data(out[3]))[img], valid,
                                 "q %d %s case %zu image %d", q, weft_dtype_name(dt), ci, img);
                    for (int r = 0; r < d; r++) {
                        int64_t at = (int64_t)img * d + r;
                        bool in = r < valid;
                        double want_s = in ? det[r].score : 0, want_c = in ? det[r].cls : 0;
                        cr_assert_eq(test_element(out[1], at), want_s, "q %d %s case %zu "
                                     "image %d row %d: score %g, want %g", q,
                                     weft_dtype_name(dt), ci, img, r,
                                     test_element(out[1], at), want_s);
                        cr_assert_eq(test_element(out[2], at), want_c);
                        for (int k = 0; k < 4; k++) {
                            double v = in ? bi[4 * (det[r].box * q + (q > 1 ? det[r].cls : 0)) + k]
                                          : 0;
                            if (f32)
                                v = (float)v;
                            if (in && c->clip)
                                v = v < 0 ? 0 : v > 1 ? 1 : v;
                            cr_assert_eq(test_element(out[0], at * 4 + k), v,
                                         "case %zu image %d row %d coord %d", ci, img, r, k);
                        }
                    }
                }
                for (int k = 0; k < 4; k++)
                    weft_tensor_release(out[k]);
            }
            weft_tensor_release(args[0]);
            weft_tensor_release(args[1]);
        }
}

/* Equal scores: the lower box first within a class, the lower class first
 * across classes. */
Test(ops_nms, combined_ties)
{
    const double boxes[3 * 4] = { 0, 0, 1, 1, 0, 5, 1, 6, 0, 9, 1, 10 };
    const double scores[3 * 2] = { 0.6, 0.6, 0.6, 0.6, 0.1, 0.6 };
    weft_tensor *args[2] = { make(WEFT_F64, 4, (const int64_t[]){ 1, 3, 1, 4 }, boxes),
                             make(WEFT_F64, 3, (const int64_t[]){ 1, 3, 2 }, scores) };
    cnms_case c = { 3, 6, 0.5, 0.0, false, false };
    weft_tensor *out[4];
    op_results_everywhere(cnms_body, &c, args, 2, out, 4, "ties");
    const double want_box_x[6] = { 0, 5, 0, 5, 9, 9 }, want_class[6] = { 0, 0, 1, 1, 1, 0 };
    for (int r = 0; r < 6; r++) {
        cr_expect_eq(test_element(out[0], 4 * r + 1), want_box_x[r], "row %d", r);
        cr_expect_eq(test_element(out[2], r), want_class[r], "row %d", r);
    }
    for (int k = 0; k < 4; k++)
        weft_tensor_release(out[k]);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

/* The batch and the box count may be unknown while tracing: one trace. */
Test(ops_nms, combined_one_trace_for_any_batch)
{
    weft_spec sig[2] = {
        { .dtype = WEFT_F64, .rank = 4, .dims = { WEFT_DIM_ANY, WEFT_DIM_ANY, 1, 4 } },
        { .dtype = WEFT_F64, .rank = 3, .dims = { WEFT_DIM_ANY, WEFT_DIM_ANY, 2 } } };
    cnms_case c = { 2, 3, 0.5, 0.0, false, false };
    weft_function_desc fd = { .name = "cnms", .body = cnms_body, .user = &c, .n_args = 2,
                              .n_outs = 4, .input_signature = sig };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rts[1], &fd, &f), 0, "%s", weft_errmsg());
    for (int64_t batch = 1; batch <= 3; batch++) {
        int64_t n = batch + 1;
        double b[4 * 4 * 4] = { 0 }, s[4 * 4 * 2] = { 0 };
        for (int64_t i = 0; i < batch * n; i++) {   /* disjoint unit boxes */
            double box[4] = { 0, 2.0 * i, 1, 2.0 * i + 1 };
            memcpy(b + 4 * i, box, sizeof box);
            s[2 * i] = 0.9;
        }
        weft_tensor *bt = make(WEFT_F64, 4, (const int64_t[]){ batch, n, 1, 4 }, b);
        weft_tensor *stt = make(WEFT_F64, 3, (const int64_t[]){ batch, n, 2 }, s);
        weft_arg a[2] = { weft_arg_tensor(bt), weft_arg_tensor(stt) };
        weft_tensor *out[4] = { 0 };
        cr_assert_eq(weft_function_call(f, a, 2, out, 4), 0, "%s", weft_errmsg());
        test_assert_shape(out[0], WEFT_F64, 3, (const int64_t[]){ batch, 3, 4 }, "any batch");
        for (int64_t img = 0; img < batch; img++)
            cr_expect_eq(((const int32_t *)weft_tensor_data(out[3]))[img], 2,
                         "batch %lld image %lld: class 0 keeps 2 of %lld", (long long)batch,
                         (long long)img, (long long)n);
        for (int k = 0; k < 4; k++)
            weft_tensor_release(out[k]);
        weft_tensor_release(bt);
        weft_tensor_release(stt);
    }
    cr_expect_eq(weft_function_tracing_count(f), 1);
    weft_function_destroy(&f);
}

typedef enum cnms_bad {
    PER_CLASS_NEGATIVE, TOTAL_ZERO, CNMS_IOU, CNMS_NAN, Q_MISMATCH, CNMS_DTYPES, CNMS_RANK,
    OUTS_NULL
} cnms_bad;

/* args: boxes f64 [1, 3, 1, 4], scores f64 [1, 3, 2], boxes f64 [1, 3, 3, 4]. */
static int cnms_bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    weft_value *b = a[0], *s = a[1], *res[4];
    cnms_case c = { 2, 4, 0.5, 0.0, false, true };
    weft_value **o = res;
    switch ((cnms_bad) * (const int *)user) {
    case PER_CLASS_NEGATIVE: c.per_class = -1; break;
    case TOTAL_ZERO: c.total = 0; break;
    case CNMS_IOU: c.iou = -0.1; break;
    case CNMS_NAN: c.score = NAN; break;
    case Q_MISMATCH: b = a[2]; break;
    case CNMS_DTYPES: s = weft_cast(cx, s, WEFT_F32); break;
    case CNMS_RANK: b = weft_squeeze(cx, b, 2); break;
    case OUTS_NULL: o = NULL; break;
    }
    int rc = weft_combined_non_max_suppression(cx, b, s, c.per_class, c.total, c.iou, c.score,
                                               c.pad, c.clip, o);
    outs[0] = rc == 0 ? res[0] : NULL;
    return weft_ctx_status(cx);
}

Test(ops_nms, combined_refused_calls_name_the_op)
{
    const double b[36] = { 0 }, s[6] = { 1, 2, 3, 4, 5, 6 };
    weft_tensor *args[3] = { make(WEFT_F64, 4, (const int64_t[]){ 1, 3, 1, 4 }, b),
                             make(WEFT_F64, 3, (const int64_t[]){ 1, 3, 2 }, s),
                             make(WEFT_F64, 4, (const int64_t[]){ 1, 3, 3, 4 }, b) };
    const op_error_case cases[] = {
        { PER_CLASS_NEGATIVE, WEFT_EINVAL, "weft_combined_non_max_suppression: "
                                           "max_output_size_per_class -1 is not within 0.." },
        { TOTAL_ZERO, WEFT_EINVAL, "weft_combined_non_max_suppression: max_total_size 0 is not "
                                   "within 1.." },
        { CNMS_IOU, WEFT_EINVAL, "weft_combined_non_max_suppression: iou_threshold -0.1 is not "
                                 "within [0, 1]" },
        { CNMS_NAN, WEFT_EINVAL, "weft_combined_non_max_suppression: score_threshold is NaN" },
        { Q_MISMATCH, WEFT_ESHAPE, "weft_combined_non_max_suppression: the boxes f64[1,3,3,4] "
                                   "and scores f64[1,3,2] are not [batch, n, q, 4] and "
                                   "[batch, n, classes] with q 1 or classes" },
        { CNMS_DTYPES, WEFT_EDTYPE, "weft_combined_non_max_suppression: the boxes f64[1,3,1,4] "
                                    "and scores f32[1,3,2] are not both f32 or both f64" },
        { CNMS_RANK, WEFT_ESHAPE, "weft_combined_non_max_suppression: the boxes f64[1,3,4] and "
                                  "scores f64[1,3,2] are not [batch, n, q, 4]" },
        { OUTS_NULL, WEFT_EINVAL, "weft_combined_non_max_suppression: outs is NULL but n_outs "
                                  "is 4" },
    };
    op_expect_errors(rts[1], cnms_bad_body, cases, sizeof cases / sizeof *cases, args, 3);
    for (int i = 0; i < 3; i++)
        weft_tensor_release(args[i]);
}

/* The classes decide the outputs' layout: unknown while tracing, refused. */
Test(ops_nms, combined_needs_the_classes_known)
{
    weft_spec sig[2] = { { .dtype = WEFT_F64, .rank = 4, .dims = { 1, 3, 1, 4 } },
                         { .dtype = WEFT_F64, .rank = 3, .dims = { 1, 3, WEFT_DIM_ANY } } };
    cnms_case c = { 2, 3, 0.5, 0.0, false, false };
    weft_function_desc fd = { .name = "cnms", .body = cnms_body, .user = &c, .n_args = 2,
                              .n_outs = 4, .input_signature = sig };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rts[1], &fd, &f), 0, "%s", weft_errmsg());
    const double b[12] = { 0 }, s[6] = { 0 };
    weft_tensor *bt = make(WEFT_F64, 4, (const int64_t[]){ 1, 3, 1, 4 }, b);
    weft_tensor *stt = make(WEFT_F64, 3, (const int64_t[]){ 1, 3, 2 }, s);
    weft_arg a[2] = { weft_arg_tensor(bt), weft_arg_tensor(stt) };
    weft_tensor *out[4] = { 0 };
    cr_expect_eq(weft_function_call(f, a, 2, out, 4), WEFT_ESHAPE);
    cr_expect(strstr(weft_errmsg(), "weft_combined_non_max_suppression: the boxes f64[1,3,1,4] "
                                    "and scores f64[1,3,?] need q and the classes known while "
                                    "tracing") != NULL, "%s", weft_errmsg());
    weft_tensor_release(bt);
    weft_tensor_release(stt);
    weft_function_destroy(&f);
}

/* ---- weft_non_max_suppression_with_scores ---- */

typedef struct soft_case {
    int64_t max_out;
    double iou, score, sigma;
} soft_case;

static int soft_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const soft_case *c = user;
    return weft_non_max_suppression_with_scores(cx, a[0], a[1], c->max_out, c->iou, c->score,
                                                c->sigma, outs);
}

/* TensorFlow's test case TestSelectFromThreeClustersWithSoftNMS. */
Test(ops_nms, soft_three_clusters)
{
    const double boxes[6 * 4] = { 0, 0,  1, 1,  0, 0.1,  1, 1.1,  0, -0.1, 1, 0.9,
                                  0, 10, 1, 11, 0, 10.1, 1, 11.1, 0, 100,  1, 101 };
    const double scores[6] = { 0.9, 0.75, 0.6, 0.95, 0.5, 0.3 };
    weft_tensor *args[2] = { make(WEFT_F32, 2, (const int64_t[]){ 6, 4 }, boxes),
                             make(WEFT_F32, 1, (const int64_t[]){ 6 }, scores) };
    soft_case c = { 6, 0.5, 0.0, 0.5 };
    weft_tensor *out[2];
    op_results_everywhere(soft_body, &c, args, 2, out, 2, "soft three clusters");
    test_assert_shape(out[0], WEFT_I32, 1, (const int64_t[]){ 6 }, "indices");
    test_assert_shape(out[1], WEFT_F32, 1, (const int64_t[]){ 6 }, "scores");
    const int32_t want[6] = { 3, 0, 1, 5, 4, 2 };
    const double want_scores[6] = { 0.95, 0.9, 0.384, 0.3, 0.256, 0.197 };
    for (int i = 0; i < 6; i++) {
        cr_expect_eq(((const int32_t *)weft_tensor_data(out[0]))[i], want[i], "index %d", i);
        cr_expect(fabs(test_element(out[1], i) - want_scores[i]) < 1e-2, "score %d: %g", i,
                  test_element(out[1], i));
    }
    for (int k = 0; k < 2; k++)
        weft_tensor_release(out[k]);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

/* TensorFlow's loop, written out: the best candidate (ties: lower index)
 * decayed by the boxes kept since it was last seen, in the scores' dtype. */
static int64_t soft_reference(const double *b, const double *s, int64_t n, const soft_case *c,
                              bool f32, int32_t *kept, double *kept_score)
{
    double *score = malloc(sizeof *score * (size_t)n);
    int64_t *seen = calloc((size_t)n, sizeof *seen);
    bool *live = calloc((size_t)n, sizeof *live);
    cr_assert(score && seen && live);
    double thr = in_dtype(c->score, f32), iou_thr = in_dtype(c->iou, f32);
    for (int64_t i = 0; i < n; i++) {
        score[i] = f32 ? (double)(float)s[i] : s[i];
        live[i] = score[i] > thr;
    }
    int64_t m = 0;
    while (m < c->max_out) {
        int64_t best = -1;
        for (int64_t i = 0; i < n; i++)
            if (live[i] && (best < 0 || score[i] > score[best]))
                best = i;
        if (best < 0)
            break;
        live[best] = false;
        double original = score[best];
        bool hard = false;
        for (int64_t j = m - 1; j >= seen[best]; j--) {
            double sim = ref_iou(b, best, kept[j], f32);
            if (c->sigma == 0 && sim > iou_thr) {
                hard = true;
                break;
            }
            if (c->sigma > 0) {
                if (f32) {
                    float scale = -0.5f / (float)c->sigma;
                    score[best] = (float)score[best] * expf(scale * (float)sim * (float)sim);
                } else {
                    score[best] *= exp(-0.5 / c->sigma * sim * sim);
                }
            }
            if (score[best] <= thr)
                break;
        }
        seen[best] = m;
        if (hard)
            continue;
        if (score[best] == original) {
            kept[m] = (int32_t)best;
            kept_score[m++] = score[best];
        } else if (score[best] > thr) {
            live[best] = true;
        }
    }
    free(score);
    free(seen);
    free(live);
    return m;
}

/* n boxes with corners in [0, span + 2) and sides up to 2, and their
 * scores: uniform, but 0.5 (ties) for every tie_every-th. */
static void random_boxes(double *b, double *s, int n, double span, int tie_every, uint64_t st)
{
    for (int i = 0; i < n; i++) {
        double y = span * op_uniform(&st), x = span * op_uniform(&st);
        b[4 * i + 0] = y;
        b[4 * i + 1] = x;
        b[4 * i + 2] = y + 2 * op_uniform(&st);
        b[4 * i + 3] = x + 2 * op_uniform(&st);
        s[i] = i % tie_every == 0 ? 0.5 : op_uniform(&st);
    }
}

/* Random boxes, hard and soft, f32 and f64, against the loop above; with
 * sigma 0 the indices are weft_non_max_suppression's. */
Test(ops_nms, soft_random_against_the_reference)
{
    enum { N = 200 };
    double b[N * 4], s[N];
    random_boxes(b, s, N, 8, 19, 0x9e3779b97f4a7c15u);
    const soft_case cases[] = { { 50, 0.5, 0.1, 0.5 }, { 1000, 0.3, 0.0, 0.1 },
                                { 30, 0.5, -INFINITY, 0.0 }, { 1000, 0.7, 0.3, 0.0 },
                                { 0, 0.5, 0.0, 0.5 }, { 1000, 1.0, 0.05, 2.0 } };
    for (int f32 = 0; f32 < 2; f32++) {
        weft_dtype dt = f32 ? WEFT_F32 : WEFT_F64;
        weft_tensor *args[2] = { make(dt, 2, (const int64_t[]){ N, 4 }, b),
                                 make(dt, 1, (const int64_t[]){ N }, s) };
        for (size_t ci = 0; ci < sizeof cases / sizeof *cases; ci++) {
            const soft_case *c = &cases[ci];
            int32_t want[N];
            double want_score[N];
            int64_t m = soft_reference(b, s, N, c, f32, want, want_score);
            weft_tensor *out[2];
            op_results_everywhere(soft_body, (void *)c, args, 2, out, 2, "soft random");
            cr_assert_eq(weft_tensor_numel(out[0]), m, "%s case %zu: %lld kept, want %lld",
                         weft_dtype_name(dt), ci, (long long)weft_tensor_numel(out[0]),
                         (long long)m);
            for (int64_t i = 0; i < m; i++) {
                cr_assert_eq(((const int32_t *)weft_tensor_data(out[0]))[i], want[i],
                             "%s case %zu row %lld", weft_dtype_name(dt), ci, (long long)i);
                cr_assert_eq(test_element(out[1], i), want_score[i], "%s case %zu row %lld: "
                             "score %.17g, want %.17g", weft_dtype_name(dt), ci, (long long)i,
                             test_element(out[1], i), want_score[i]);
            }
            if (c->sigma == 0) {
                nms_case h = { c->max_out, c->iou, c->score };
                weft_tensor *hard;
                op_results_everywhere(nms_body, &h, args, 2, &hard, 1, "hard");
                cr_assert_eq(weft_tensor_numel(hard), m);
                cr_assert(memcmp(weft_tensor_data(hard), want, sizeof *want * (size_t)m) == 0);
                weft_tensor_release(hard);
            }
            for (int k = 0; k < 2; k++)
                weft_tensor_release(out[k]);
        }
        weft_tensor_release(args[0]);
        weft_tensor_release(args[1]);
    }
}

/* The thresholds compare in the scores' dtype, as TensorFlow casts them:
 * an f32 score of 0.3f is not above a threshold of 0.3 (0.3f > 0.3 in
 * double). */
Test(ops_nms, thresholds_compare_in_the_dtype)
{
    const double boxes[2 * 4] = { 0, 0, 1, 1, 0, 5, 1, 6 };
    const double scores[2] = { 0.3, 0.9 };
    weft_tensor *args[2] = { make(WEFT_F32, 2, (const int64_t[]){ 2, 4 }, boxes),
                             make(WEFT_F32, 1, (const int64_t[]){ 2 }, scores) };
    nms_case c = { 5, 0.5, 0.3 };
    weft_tensor *out;
    op_results_everywhere(nms_body, &c, args, 2, &out, 1, "f32 threshold");
    cr_assert_eq(weft_tensor_numel(out), 1);
    cr_expect_eq(((const int32_t *)weft_tensor_data(out))[0], 1);
    weft_tensor_release(out);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

static int soft_bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    int which = *(const int *)user;
    weft_value *res[2];
    double sigma = which == 0 ? -1 : which == 1 ? INFINITY : 0.5;
    int rc = weft_non_max_suppression_with_scores(cx, a[0], which == 2 ? a[2] : a[1], 4, 0.5,
                                                  0, sigma, which == 3 ? NULL : res);
    outs[0] = rc == 0 ? res[0] : NULL;
    return weft_ctx_status(cx);
}

Test(ops_nms, soft_refused_calls_name_the_op)
{
    const double b[12] = { 0 }, s[3] = { 1, 2, 3 };
    weft_tensor *args[3] = { make(WEFT_F64, 2, (const int64_t[]){ 3, 4 }, b),
                             make(WEFT_F64, 1, (const int64_t[]){ 3 }, s),
                             make(WEFT_F32, 1, (const int64_t[]){ 3 }, s) };
    const op_error_case cases[] = {
        { 0, WEFT_EINVAL, "weft_non_max_suppression_with_scores: soft_nms_sigma -1 is not "
                          "finite and >= 0" },
        { 1, WEFT_EINVAL, "weft_non_max_suppression_with_scores: soft_nms_sigma inf is not" },
        { 2, WEFT_EDTYPE, "weft_non_max_suppression_with_scores: the boxes f64[3,4] and scores "
                          "f32[3] are not both f32 or both f64" },
        { 3, WEFT_EINVAL, "weft_non_max_suppression_with_scores: outs is NULL but n_outs is 2" },
    };
    op_expect_errors(rts[1], soft_bad_body, cases, sizeof cases / sizeof *cases, args, 3);
    for (int i = 0; i < 3; i++)
        weft_tensor_release(args[i]);
}

/* ---- weft_non_max_suppression_overlaps ---- */

static int overlaps_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const nms_case *c = user;
    outs[0] = weft_non_max_suppression_overlaps(cx, a[0], a[1], c->max_out, c->iou, c->score);
    return weft_ctx_status(cx);
}

/* The boxes' IoU matrix as overlaps keeps what weft_non_max_suppression
 * keeps; overlaps above 1 work with a threshold above 1. */
Test(ops_nms, overlaps_of_ious_match_the_boxes)
{
    enum { N = 120 };
    double b[N * 4], s[N], *ov = malloc(sizeof *ov * N * N);
    cr_assert_not_null(ov);
    random_boxes(b, s, N, 6, 11, 0x510e527fade682d1u);
    const nms_case cases[] = { { 40, 0.3, -INFINITY }, { 1000, 0.6, 0.2 } };
    for (int f32 = 0; f32 < 2; f32++) {
        weft_dtype dt = f32 ? WEFT_F32 : WEFT_F64;
        for (int i = 0; i < N; i++)
            for (int j = 0; j < N; j++)
                ov[i * N + j] = ref_iou(b, i, j, f32);
        weft_tensor *boxes[2] = { make(dt, 2, (const int64_t[]){ N, 4 }, b),
                                  make(dt, 1, (const int64_t[]){ N }, s) };
        weft_tensor *over[2] = { make(dt, 2, (const int64_t[]){ N, N }, ov),
                                 make(dt, 1, (const int64_t[]){ N }, s) };
        for (size_t ci = 0; ci < sizeof cases / sizeof *cases; ci++) {
            weft_tensor *want, *got;
            op_results_everywhere(nms_body, (void *)&cases[ci], boxes, 2, &want, 1, "boxes");
            op_results_everywhere(overlaps_body, (void *)&cases[ci], over, 2, &got, 1, "overlaps");
            cr_assert_eq(weft_tensor_numel(got), weft_tensor_numel(want), "%s case %zu",
                         weft_dtype_name(dt), ci);
            cr_assert(memcmp(weft_tensor_data(got), weft_tensor_data(want),
                             sizeof(int32_t) * (size_t)weft_tensor_numel(want)) == 0);
            cr_expect_gt(weft_tensor_numel(want), 3);
            weft_tensor_release(want);
            weft_tensor_release(got);
        }
        for (int k = 0; k < 2; k++) {
            weft_tensor_release(boxes[k]);
            weft_tensor_release(over[k]);
        }
    }
    free(ov);

    /* overlaps[1, 0] = 2 (the candidate's row, the kept box's column, as
     * TensorFlow reads them; [0, 1] is 0): box 1 is suppressed under 1.5,
     * kept under 2.5. */
    const double two[9] = { 9, 0, 0, 2, 9, 0, 0, 0, 9 }, sc[3] = { 0.9, 0.8, 0.7 };
    weft_tensor *args[2] = { make(WEFT_F64, 2, (const int64_t[]){ 3, 3 }, two),
                             make(WEFT_F64, 1, (const int64_t[]){ 3 }, sc) };
    nms_case c = { 10, 1.5, -INFINITY };
    weft_tensor *out;
    op_results_everywhere(overlaps_body, &c, args, 2, &out, 1, "threshold 1.5");
    cr_expect_eq(weft_tensor_numel(out), 2);
    weft_tensor_release(out);
    c.iou = 2.5;
    op_results_everywhere(overlaps_body, &c, args, 2, &out, 1, "threshold 2.5");
    cr_expect_eq(weft_tensor_numel(out), 3);
    weft_tensor_release(out);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

static int overlaps_bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    int which = *(const int *)user;
    outs[0] = weft_non_max_suppression_overlaps(cx, which == 1 ? a[2] : a[0],
                                                which == 2 ? a[3] : a[1], 4,
                                                which == 0 ? NAN : 0.5, 0);
    return weft_ctx_status(cx);
}

Test(ops_nms, overlaps_refused_calls_name_the_op)
{
    const double z[9] = { 0 };
    weft_tensor *args[4] = { make(WEFT_F64, 2, (const int64_t[]){ 3, 3 }, z),
                             make(WEFT_F64, 1, (const int64_t[]){ 3 }, z),
                             make(WEFT_F64, 2, (const int64_t[]){ 3, 2 }, z),
                             make(WEFT_F64, 1, (const int64_t[]){ 2 }, z) };
    const op_error_case cases[] = {
        { 0, WEFT_EINVAL, "weft_non_max_suppression_overlaps: overlap_threshold is NaN" },
        { 1, WEFT_ESHAPE, "weft_non_max_suppression_overlaps: the overlaps f64[3,2] and scores "
                          "f64[3] are not [n, n] and [n]" },
        { 2, WEFT_ESHAPE, "weft_non_max_suppression_overlaps: the overlaps f64[3,3] and scores "
                          "f64[2] are not [n, n] and [n]" },
    };
    op_expect_errors(rts[1], overlaps_bad_body, cases, sizeof cases / sizeof *cases, args, 4);
    for (int i = 0; i < 4; i++)
        weft_tensor_release(args[i]);
}
