/* generate_bounding_box_proposals: a hand-worked image (a box dropped by
 * NMS, one moved, scaled and clipped, the least side and the image's
 * scale); random batches against a reference written here (every anchor
 * decoded, ranked by selection, IoU as a quotient), f32 and f64, the same
 * bits eagerly and traced on 1, 2 and 4 workers; ties, NaN scores and the
 * clip of dh and dw; one trace for any batch; the refused calls. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_proposals, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

typedef struct proposal_case {
    double nms, min_size;
    int64_t pre, post;
} proposal_case;

static int proposal_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const proposal_case *p = user;
    return weft_generate_bounding_box_proposals(cx, a[0], a[1], a[2], a[3], p->nms, p->pre,
                                                p->min_size, p->post, outs);
}

/* The tensors of one batch: scores [b, h, w, a], deltas [b, h, w, 4 a],
 * image_info [b, 5], anchors [h, w, 4 a]. */
static void make_args(weft_dtype dt, int b, int h, int w, int a, const double *scores,
                      const double *deltas, const double *info, const double *anchors,
                      weft_tensor **args)
{
    args[0] = test_tensor(dt, 4, (const int64_t[]){ b, h, w, a }, scores);
    args[1] = test_tensor(dt, 4, (const int64_t[]){ b, h, w, 4 * a }, deltas);
    args[2] = test_tensor(dt, 2, (const int64_t[]){ b, 5 }, info);
    args[3] = test_tensor(dt, 3, (const int64_t[]){ h, w, 4 * a }, anchors);
}

static void release(weft_tensor **t, int n)
{
    for (int i = 0; i < n; i++)
        weft_tensor_release(t[i]);
}

/* Proposal k of image img: y1, x1, y2, x2, score. */
static void expect_row(weft_tensor *const *outs, int64_t post, int img, int k, const double *want,
                       double tol, const char *what)
{
    for (int e = 0; e < 4; e++) {
        double got = test_element(outs[0], (img * post + k) * 4 + e);
        cr_assert(fabs(got - want[e]) <= tol * (1 + fabs(want[e])),
                  "%s: image %d proposal %d coordinate %d: %.9g, not %.9g", what, img, k, e, got,
                  want[e]);
    }
    double s = test_element(outs[1], img * post + k);
    cr_assert(fabs(s - want[4]) <= tol, "%s: image %d proposal %d's score %.9g, not %.9g", what,
              img, k, s, want[4]);
}

Test(ops_proposals, a_hand_worked_image)
{
    /* H 1, W 3, A 1 in a 20 x 30 image: a0 [0, 0, 10, 10] (0.9), a1
     * [0, 5, 10, 15] (0.8; IoU with a0 50 / 150), a2 [5, 20, 15, 30] (0.7)
     * moved down by 0.1 of its height and twice as wide: [6, 15, 16, 35],
     * clipped to [6, 15, 16, 30]. */
    const double scores[3] = { 0.9, 0.8, 0.7 }, info[5] = { 20, 30, 1, 0, 0 };
    const double anchors[12] = { 0, 0, 10, 10, 0, 5, 10, 15, 5, 20, 15, 30 };
    double deltas[12] = { 0 };
    deltas[8] = 0.1;
    deltas[11] = log(2.0);
    const double a0[5] = { 0, 0, 10, 10, 0.9 }, a1[5] = { 0, 5, 10, 15, 0.8 },
                 a2[5] = { 6, 15, 16, 30, 0.7 }, none[5] = { 0 };
    for (int dt = 0; dt < 2; dt++) {
        weft_tensor *args[4], *outs[2];
        weft_dtype t = dt ? WEFT_F64 : WEFT_F32;
        double tol = dt ? 1e-12 : 1e-6;
        make_args(t, 1, 1, 3, 1, scores, deltas, info, anchors, args);
        /* NMS at 0.3 drops a1; at 0.5 it stays; a least side of 12 drops
         * all, at scale 1; one of 10 keeps the sides of 10. */
        proposal_case cases[4] = { { 0.3, 4, 6000, 4 }, { 0.5, 4, 6000, 4 }, { 0.5, 12, 10, 2 },
                                   { 0.5, 10, 10, 3 } };
        const double *want[4][4] = { { a0, a2, none, none }, { a0, a1, a2, none },
                                     { none, none }, { a0, a1, a2 } };
        for (int c = 0; c < 4; c++) {
            op_results_everywhere(proposal_body, &cases[c], args, 4, outs, 2, "proposals");
            test_assert_shape(outs[0], t, 3, (const int64_t[]){ 1, cases[c].post, 4 }, "boxes");
            test_assert_shape(outs[1], t, 2, (const int64_t[]){ 1, cases[c].post }, "scores");
            for (int k = 0; k < cases[c].post; k++)
                expect_row(outs, cases[c].post, 0, k, want[c][k], tol, "hand-worked");
            release(outs, 2);
        }
        release(args, 4);
        /* At scale 0.5 a least side of 12 is 6: a2 (10 high, 15 wide) and
         * the others are 10 x 10, so all three stay. */
        const double half[5] = { 20, 30, 0.5, 0, 0 };
        make_args(t, 1, 1, 3, 1, scores, deltas, half, anchors, args);
        proposal_case scaled = { 0.5, 12, 6000, 3 };
        op_results_everywhere(proposal_body, &scaled, args, 4, outs, 2, "proposals");
        expect_row(outs, 3, 0, 0, a0, tol, "scaled");
        expect_row(outs, 3, 0, 2, a2, tol, "scaled");
        release(outs, 2);
        release(args, 4);
    }
}

enum { RB = 3, RH = 4, RW = 5, RA = 3, RN = RH * RW * RA };

/* The reference for image img: every anchor decoded in double, the best
 * pre picked one by one, NMS by IoU quotient; rows into want [post][5]. */
static int reference(const double *scores, const double *deltas, const double *info,
                     const double *anchors, int img, const proposal_case *p, double (*want)[5])
{
    double box[RN][4];
    bool used[RN] = { false };
    for (int i = 0; i < RN; i++) {
        const double *an = anchors + 4 * i, *d = deltas + 4 * (img * RN + i);
        double h = an[2] - an[0], w = an[3] - an[1];
        double cy = an[0] + h / 2 + h * d[0], cx = an[1] + w / 2 + w * d[1];
        double ph = h * exp(fmin(d[2], log(62.5))), pw = w * exp(fmin(d[3], log(62.5)));
        double c[4] = { cy - ph / 2, cx - pw / 2, cy + ph / 2, cx + pw / 2 };
        for (int e = 0; e < 4; e++)
            box[i][e] = fmax(0, fmin(c[e], info[5 * img + e % 2]));
    }
    int kept = 0;
    for (int64_t r = 0; r < p->pre && r < RN && kept < p->post; r++) {
        int best = -1;
        for (int i = 0; i < RN; i++)
            if (!used[i] && (best < 0 || scores[img * RN + i] > scores[img * RN + best]))
                best = i;
        used[best] = true;
        const double *c = box[best];
        if (fmin(c[2] - c[0], c[3] - c[1]) < p->min_size * info[5 * img + 2])
            continue;
        bool dropped = false;
        for (int q = 0; q < kept && !dropped; q++) {
            const double *k = want[q];
            double ih = fmax(0, fmin(c[2], k[2]) - fmax(c[0], k[0]));
            double iw = fmax(0, fmin(c[3], k[3]) - fmax(c[1], k[1]));
            double ua = (c[2] - c[0]) * (c[3] - c[1]) + (k[2] - k[0]) * (k[3] - k[1]);
            dropped = ih * iw / (ua - ih * iw) > p->nms;
        }
        if (!dropped) {
            memcpy(want[kept], c, sizeof box[0]);
            want[kept++][4] = scores[img * RN + best];
        }
    }
    return kept;
}

Test(ops_proposals, random_batches_against_a_reference)
{
    double scores[RB * RN], deltas[RB * RN * 4], info[RB * 5], anchors[RN * 4];
    uint64_t s = 91;
    for (int i = 0; i < RB * RN; i++)
        scores[i] = op_uniform(&s);
    for (int i = 0; i < RB * RN * 4; i++)
        deltas[i] = 0.3 * op_uniform(&s);
    deltas[7] = 9;   /* past log(1000 / 16): clipped */
    for (int y = 0; y < RH; y++)
        for (int x = 0; x < RW; x++)
            for (int a = 0; a < RA; a++) {   /* 8 x 12, 12 x 12, 16 x 12 at a stride of 6 */
                double side = 8 + 4 * a, *an = anchors + 4 * ((y * RW + x) * RA + a);
                an[0] = 6 * y + 3 - side / 2;
                an[1] = 6 * x - 3;
                an[2] = an[0] + side;
                an[3] = an[1] + 12;
            }
    for (int b = 0; b < RB; b++) {
        const double row[5] = { 24 - 2 * b, 30, 1 - 0.25 * b, 0, 0 };
        memcpy(info + 5 * b, row, sizeof row);
    }
    const proposal_case cases[3] = { { 0.5, 6, 25, 8 }, { 0.7, 3, 6000, 100 },
                                     { 0.0, 0, 60, 60 } };
    for (int dt = 0; dt < 2; dt++)
        for (int c = 0; c < 3; c++) {
            weft_dtype t = dt ? WEFT_F64 : WEFT_F32;
            double sc[RB * RN], de[RB * RN * 4], in[RB * 5], an[RN * 4];
            /* The reference reads the values the tensors hold. */
            for (int i = 0; i < RB * RN; i++)
                sc[i] = dt ? scores[i] : (float)scores[i];
            for (int i = 0; i < RB * RN * 4; i++)
                de[i] = dt ? deltas[i] : (float)deltas[i];
            for (int i = 0; i < RB * 5; i++)
                in[i] = dt ? info[i] : (float)info[i];
            for (int i = 0; i < RN * 4; i++)
                an[i] = dt ? anchors[i] : (float)anchors[i];
            weft_tensor *args[4], *outs[2];
            make_args(t, RB, RH, RW, RA, sc, de, in, an, args);
            op_results_everywhere(proposal_body, (void *)&cases[c], args, 4, outs, 2,
                                  "proposals");
            int64_t post = cases[c].post;
            for (int b = 0; b < RB; b++) {
                double want[100][5];
                int n = reference(sc, de, in, an, b, &cases[c], want);
                cr_assert(n > 0 && (c == 2 || n < RN), "case %d image %d keeps %d", c, b, n);
                for (int k = 0; k < post; k++) {
                    const double zero[5] = { 0 };
                    expect_row(outs, post, b, k, k < n ? want[k] : zero, dt ? 1e-12 : 1e-5,
                               dt ? "f64" : "f32");
                }
            }
            release(outs, 2);
            release(args, 4);
        }
}

Test(ops_proposals, ties_nan_scores_and_the_clip)
{
    /* Four anchors in one row of a 10000 x 10000 image, far apart: scores
     * NaN, 0.5, 0.5, 0.2.  pre_nms_topn 1 decodes the first 0.5 only (ties
     * by index; NaN last); 4 decode all, NaN's box last. */
    const double scores[4] = { NAN, 0.5, 0.5, 0.2 }, info[5] = { 10000, 10000, 1, 0, 0 };
    const double anchors[16] = { 0, 0, 4, 4, 0, 20, 4, 24, 0, 40, 4, 44, 0, 60, 4, 64 };
    double deltas[16] = { 0 };
    deltas[4 * 3 + 2] = 5;   /* dh clipped to log(62.5): 4 high becomes 250, from -123 to 127 */
    deltas[4 * 1 + 3] = 6;   /* dw alike: 4 wide becomes 250, from -103 to 147 */
    weft_tensor *args[4], *outs[2];
    make_args(WEFT_F64, 1, 1, 4, 1, scores, deltas, info, anchors, args);
    proposal_case one = { 0.5, 1, 1, 2 };
    op_results_everywhere(proposal_body, &one, args, 4, outs, 2, "proposals");
    const double first[5] = { 0, 0, 4, 147, 0.5 }, zero[5] = { 0 };
    expect_row(outs, 2, 0, 0, first, 1e-12, "one");
    expect_row(outs, 2, 0, 1, zero, 0, "one");
    release(outs, 2);
    proposal_case all = { 0.5, 1, 4, 4 };
    op_results_everywhere(proposal_body, &all, args, 4, outs, 2, "proposals");
    const double second[5] = { 0, 40, 4, 44, 0.5 }, tall[5] = { 0, 60, 127, 64, 0.2 };
    expect_row(outs, 4, 0, 0, first, 1e-12, "all");
    expect_row(outs, 4, 0, 1, second, 0, "all");
    expect_row(outs, 4, 0, 2, tall, 1e-12, "all");
    cr_assert(isnan(test_element(outs[1], 3)), "NaN's box last: %g", test_element(outs[1], 3));
    release(outs, 2);
    release(args, 4);
}

Test(ops_proposals, one_trace_for_any_batch)
{
    const weft_spec sig[4] = {
        { .dtype = WEFT_F32, .rank = 4, .dims = { -1, 1, 2, 1 } },
        { .dtype = WEFT_F32, .rank = 4, .dims = { -1, 1, 2, 4 } },
        { .dtype = WEFT_F32, .rank = 2, .dims = { -1, 5 } },
        { .dtype = WEFT_F32, .rank = 3, .dims = { 1, 2, 4 } },
    };
    proposal_case p = { 0.7, 0, 10, 3 };
    weft_function_desc d = { .name = "proposals", .body = proposal_body, .user = &p,
                             .n_args = 4, .n_outs = 2, .input_signature = sig };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rts[2], &d, &f), 0, "%s", weft_errmsg());
    const double anchors[8] = { 0, 0, 2, 2, 0, 4, 2, 6 };
    for (int b = 1; b <= 3; b += 2) {
        double scores[6], deltas[24] = { 0 }, info[15];
        for (int i = 0; i < 2 * b; i++)
            scores[i] = i % 2 ? 0.9 : 0.1;
        for (int i = 0; i < b; i++) {
            const double row[5] = { 10, 10, 1, 0, 0 };
            memcpy(info + 5 * i, row, sizeof row);
        }
        weft_tensor *args[4], *outs[2];
        make_args(WEFT_F32, b, 1, 2, 1, scores, deltas, info, anchors, args);
        weft_arg a[4];
        for (int i = 0; i < 4; i++)
            a[i] = weft_arg_tensor(args[i]);
        cr_assert_eq(weft_function_call(f, a, 4, outs, 2), 0, "%s", weft_errmsg());
        test_assert_shape(outs[0], WEFT_F32, 3, (const int64_t[]){ b, 3, 4 }, "boxes");
        for (int i = 0; i < b; i++) {
            const double best[5] = { 0, 4, 2, 6, (float)0.9 }, next[5] = { 0, 0, 2, 2, 0.1 };
            expect_row(outs, 3, i, 0, best, 1e-7, "batch");
            expect_row(outs, 3, i, 1, next, 1e-7, "batch");
        }
        release(outs, 2);
        release(args, 4);
    }
    op_destroy_traced_once(&f);
}

enum { BAD_THRESHOLD, BAD_PRE, BAD_POST, BAD_MIN, MIXED, ANCHORS, INFO };

static int bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    /* a: scores f32[1,1,2,1], deltas f32[1,1,2,4], info f32[1,5], anchors
     * f32[1,2,4], anchors f64[1,2,4], info f32[1,4]. */
    weft_value *o[2];
    int rc;
    switch (*(const int *)user) {
    case BAD_THRESHOLD:
        rc = weft_generate_bounding_box_proposals(cx, a[0], a[1], a[2], a[3], 1.5, 1, 0, 1, o);
        break;
    case BAD_PRE:
        rc = weft_generate_bounding_box_proposals(cx, a[0], a[1], a[2], a[3], 0.5, 0, 0, 1, o);
        break;
    case BAD_POST:
        rc = weft_generate_bounding_box_proposals(cx, a[0], a[1], a[2], a[3], 0.5, 1, 0, 0, o);
        break;
    case BAD_MIN:
        rc = weft_generate_bounding_box_proposals(cx, a[0], a[1], a[2], a[3], 0.5, 1, NAN, 1, o);
        break;
    case MIXED:
        rc = weft_generate_bounding_box_proposals(cx, a[0], a[1], a[2], a[4], 0.5, 1, 0, 1, o);
        break;
    case ANCHORS:
        rc = weft_generate_bounding_box_proposals(cx, a[0], a[1], a[2], a[1], 0.5, 1, 0, 1, o);
        break;
    default:
        rc = weft_generate_bounding_box_proposals(cx, a[0], a[1], a[5], a[3], 0.5, 1, 0, 1, o);
        break;
    }
    outs[0] = rc == 0 ? o[0] : NULL;
    return rc;
}

Test(ops_proposals, refused_calls_name_the_op)
{
    const double v[8] = { 0 };
    weft_tensor *args[6] = { test_tensor(WEFT_F32, 4, (const int64_t[]){ 1, 1, 2, 1 }, v),
                             test_tensor(WEFT_F32, 4, (const int64_t[]){ 1, 1, 2, 4 }, v),
                             test_tensor(WEFT_F32, 2, (const int64_t[]){ 1, 5 }, v),
                             test_tensor(WEFT_F32, 3, (const int64_t[]){ 1, 2, 4 }, v),
                             test_tensor(WEFT_F64, 3, (const int64_t[]){ 1, 2, 4 }, v),
                             test_tensor(WEFT_F32, 2, (const int64_t[]){ 1, 4 }, v) };
    const char *limits = "weft_generate_bounding_box_proposals: nms_threshold";
    const op_error_case cases[] = {
        { BAD_THRESHOLD, WEFT_EINVAL, limits },
        { BAD_PRE, WEFT_EINVAL, limits },
        { BAD_POST, WEFT_EINVAL, limits },
        { BAD_MIN, WEFT_EINVAL, limits },
        { MIXED, WEFT_EDTYPE, "weft_generate_bounding_box_proposals: the scores f32[1,1,2,1], "
                              "deltas f32[1,1,2,4], image_info f32[1,5] and anchors f64[1,2,4] "
                              "are not all f32 or all f64" },
        { ANCHORS, WEFT_ESHAPE, "anchors f32[1,1,2,4] are not [batch, height, width, anchors]" },
        { INFO, WEFT_ESHAPE, "image_info f32[1,4] and anchors f32[1,2,4] are not" },
    };
    op_expect_errors(rts[1], bad_body, cases, sizeof cases / sizeof *cases, args, 6);
    release(args, 6);
}
