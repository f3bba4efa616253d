/* edit_distance: TensorFlow's example in dense form; random sequences
 * against the full Wagner-Fischer matrix written here (raw and
 * normalized, with and without lengths, i32 and i64, the same bits
 * eagerly and traced on 1, 2 and 4 workers); a decoder's output scored
 * against its truth; one trace for any size; a length out of range when
 * the function runs; the refused calls. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_edit_distance, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

typedef struct edit_case {
    bool lengths, normalize;
} edit_case;

/* a: hypothesis, its lengths, truth, its lengths. */
static int edit_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const edit_case *e = user;
    outs[0] = weft_edit_distance(cx, a[0], e->lengths ? a[1] : NULL, a[2],
                                 e->lengths ? a[3] : NULL, e->normalize);
    return weft_ctx_status(cx);
}

static void release(weft_tensor **t, int n)
{
    for (int i = 0; i < n; i++)
        weft_tensor_release(t[i]);
}

Test(ops_edit_distance, tensorflows_example)
{
    /* TensorFlow's [2, 2] batch: hypotheses [a], [], [b], []; truths [],
     * [a], [b, c], [a] (a = 1, b = 2, c = 3), normalized: [[inf, 1],
     * [0.5, 1]]. */
    const double hyp[4] = { 1, 0, 2, 0 }, hl[4] = { 1, 0, 1, 0 };
    const double truth[8] = { 0, 0, 1, 0, 2, 3, 1, 0 }, tl[4] = { 0, 1, 2, 1 };
    weft_tensor *args[4] = { test_tensor(WEFT_I64, 3, (const int64_t[]){ 2, 2, 1 }, hyp),
                             test_tensor(WEFT_I32, 2, (const int64_t[]){ 2, 2 }, hl),
                             test_tensor(WEFT_I64, 3, (const int64_t[]){ 2, 2, 2 }, truth),
                             test_tensor(WEFT_I64, 2, (const int64_t[]){ 2, 2 }, tl) };
    for (int norm = 0; norm < 2; norm++) {
        edit_case e = { true, norm == 1 };
        weft_tensor *out;
        op_results_everywhere(edit_body, &e, args, 4, &out, 1, "edit_distance");
        test_assert_shape(out, WEFT_F32, 2, (const int64_t[]){ 2, 2 }, "distances");
        const double want[2][4] = { { 1, 1, 1, 1 }, { INFINITY, 1, 0.5, 1 } };
        for (int i = 0; i < 4; i++)
            cr_assert_eq(test_element(out, i), want[norm][i], "normalize %d element %d: %g",
                         norm, i, test_element(out, i));
        weft_tensor_release(out);
    }
    release(args, 4);
}

enum { NB = 40, NH = 9, NT = 7 };

/* The whole (hl + 1) x (tl + 1) matrix of prefix distances. */
static int wagner_fischer(const double *h, int hl, const double *t, int tl)
{
    int d[NH + 1][NT + 1];
    for (int i = 0; i <= hl; i++)
        for (int k = 0; k <= tl; k++) {
            if (i == 0 || k == 0) {
                d[i][k] = i + k;
                continue;
            }
            int sub = d[i - 1][k - 1] + (h[i - 1] != t[k - 1]);
            int del = d[i - 1][k] + 1, ins = d[i][k - 1] + 1;
            d[i][k] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
    return d[hl][tl];
}

Test(ops_edit_distance, random_sequences_against_the_full_matrix)
{
    /* Symbols from three (so matches are common), lengths 0 to full. */
    double hyp[NB * NH], truth[NB * NT], hl[NB], tl[NB];
    uint64_t s = 3;
    for (int i = 0; i < NB * NH; i++)
        hyp[i] = floor(1.5 * op_uniform(&s) + 1.5);
    for (int i = 0; i < NB * NT; i++)
        truth[i] = floor(1.5 * op_uniform(&s) + 1.5);
    for (int b = 0; b < NB; b++) {
        hl[b] = b % (NH + 1);
        tl[b] = (b * 7) % (NT + 1);
    }
    const weft_dtype dts[2] = { WEFT_I32, WEFT_I64 };
    for (int k = 0; k < 2; k++)
        for (int mode = 0; mode < 4; mode++) {
            edit_case e = { mode & 1, (mode & 2) != 0 };
            weft_tensor *args[4] = { test_tensor(dts[k], 2, (const int64_t[]){ NB, NH }, hyp),
                                     test_tensor(dts[1 - k], 1, (const int64_t[]){ NB }, hl),
                                     test_tensor(dts[k], 2, (const int64_t[]){ NB, NT }, truth),
                                     test_tensor(WEFT_I64, 1, (const int64_t[]){ NB }, tl) };
            weft_tensor *out;
            op_results_everywhere(edit_body, &e, args, 4, &out, 1, "edit_distance");
            test_assert_shape(out, WEFT_F32, 1, (const int64_t[]){ NB }, "distances");
            for (int b = 0; b < NB; b++) {
                int h_len = e.lengths ? (int)hl[b] : NH, t_len = e.lengths ? (int)tl[b] : NT;
                double d = wagner_fischer(hyp + b * NH, h_len, truth + b * NT, t_len);
                float want = (float)d;
                if (e.normalize)
                    want = t_len ? (float)d / (float)t_len : d ? INFINITY : 0;
                cr_assert_eq(test_element(out, b), want, "dtype %d mode %d sequence %d: %g", k,
                             mode, b, test_element(out, b));
            }
            weft_tensor_release(out);
            release(args, 4);
        }
}

static int decoded_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    weft_value *dec[2];
    if (weft_ctc_greedy_decoder(cx, a[0], a[1], true, -1, dec) != 0)
        return weft_ctx_status(cx);
    weft_value *len = weft_sum(cx, weft_ne(cx, dec[0], weft_const_i64(cx, -1)), 1);
    outs[0] = weft_edit_distance(cx, dec[0], len, a[2], a[3], false);
    return weft_ctx_status(cx);
}

Test(ops_edit_distance, a_greedy_decoders_output_against_its_truth)
{
    /* One sequence of 5 frames over classes 0, 1 and the blank 2: best
     * classes 0 0 2 1 1 decode to [0, 1]; against the truth [0, 0, 1]
     * that is one deletion. */
    double x[15] = { 0 };
    const int best[5] = { 0, 0, 2, 1, 1 };
    for (int t = 0; t < 5; t++)
        x[3 * t + best[t]] = 1;
    const double frames = 5, truth[3] = { 0, 0, 1 }, tl = 3;
    weft_tensor *args[4] = { test_tensor(WEFT_F32, 3, (const int64_t[]){ 5, 1, 3 }, x),
                             test_tensor(WEFT_I32, 1, (const int64_t[]){ 1 }, &frames),
                             test_tensor(WEFT_I64, 2, (const int64_t[]){ 1, 3 }, truth),
                             test_tensor(WEFT_I32, 1, (const int64_t[]){ 1 }, &tl) };
    weft_tensor *out;
    op_results_everywhere(decoded_body, NULL, args, 4, &out, 1, "decoded");
    cr_assert_eq(test_element(out, 0), 1.0);
    weft_tensor_release(out);
    release(args, 4);
}

Test(ops_edit_distance, one_trace_and_a_length_out_of_range)
{
    const weft_spec sig[4] = { { .dtype = WEFT_I32, .rank = 2, .dims = { -1, -1 } },
                               { .dtype = WEFT_I32, .rank = 1, .dims = { -1 } },
                               { .dtype = WEFT_I32, .rank = 2, .dims = { -1, -1 } },
                               { .dtype = WEFT_I32, .rank = 1, .dims = { -1 } } };
    edit_case e = { true, false };
    weft_function_desc d = { .name = "edit", .body = edit_body, .user = &e, .n_args = 4,
                             .n_outs = 1, .input_signature = sig };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rts[1], &d, &f), 0, "%s", weft_errmsg());
    /* "kitten" against "sitting": 3; then a batch of 2 with widths 1 and 4;
     * then a length of 5 past its row of 4. */
    const double kitten[6] = { 'k', 'i', 't', 't', 'e', 'n' };
    const double sitting[7] = { 's', 'i', 't', 't', 'i', 'n', 'g' };
    const double six = 6, seven = 7, two[2] = { 1, 0 }, ab[8] = { 1, 2, 3, 4, 1, 2, 3, 4 };
    const double four[2] = { 4, 5 };
    struct {
        weft_tensor *a[4];
        int rc;
        double want[2];
    } calls[3] = {
        { { test_tensor(WEFT_I32, 2, (const int64_t[]){ 1, 6 }, kitten),
            test_tensor(WEFT_I32, 1, (const int64_t[]){ 1 }, &six),
            test_tensor(WEFT_I32, 2, (const int64_t[]){ 1, 7 }, sitting),
            test_tensor(WEFT_I32, 1, (const int64_t[]){ 1 }, &seven) }, 0, { 3 } },
        { { test_tensor(WEFT_I32, 2, (const int64_t[]){ 2, 1 }, two),
            test_tensor(WEFT_I32, 1, (const int64_t[]){ 2 }, two),
            test_tensor(WEFT_I32, 2, (const int64_t[]){ 2, 4 }, ab),
            test_tensor(WEFT_I32, 1, (const int64_t[]){ 2 }, four) }, WEFT_EINVAL, { 0 } },
        { { test_tensor(WEFT_I32, 2, (const int64_t[]){ 2, 1 }, two),
            test_tensor(WEFT_I32, 1, (const int64_t[]){ 2 }, two),
            test_tensor(WEFT_I32, 2, (const int64_t[]){ 2, 4 }, ab),
            test_tensor(WEFT_I32, 1, (const int64_t[]){ 2 }, two) }, 0, { 0, 0 } },
    };
    for (int c = 0; c < 3; c++) {
        weft_arg a[4];
        for (int i = 0; i < 4; i++)
            a[i] = weft_arg_tensor(calls[c].a[i]);
        weft_tensor *out = NULL;
        int rc = weft_function_call(f, a, 4, &out, 1);
        cr_assert_eq(rc, calls[c].rc, "call %d: %s", c, weft_errmsg());
        if (rc) {
            cr_assert(strstr(weft_errmsg(), "weft_edit_distance: sequence 1 has a length "
                                            "outside 0..1 (hypothesis) or 0..4 (truth)"),
                      "%s", weft_errmsg());
        } else {
            /* Call 2: [1] against [1] and [] against [] (lengths 1, 0). */
            for (int i = 0; i < weft_tensor_numel(out); i++)
                cr_assert_eq(test_element(out, i), calls[c].want[i], "call %d element %d", c, i);
            weft_tensor_release(out);
        }
        release(calls[c].a, 4);
    }
    op_destroy_traced_once(&f);
}

enum { FLOATS, MIXED, BATCH, LENGTH_RANK, LENGTH_FLOAT };

static int bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    /* a: i32[2,3], i32[2], f32[2,3], i64[2,3], i32[3,3]. */
    switch (*(const int *)user) {
    case FLOATS: outs[0] = weft_edit_distance(cx, a[2], NULL, a[2], NULL, false); break;
    case MIXED: outs[0] = weft_edit_distance(cx, a[0], NULL, a[3], NULL, false); break;
    case BATCH: outs[0] = weft_edit_distance(cx, a[0], NULL, a[4], NULL, false); break;
    case LENGTH_RANK: outs[0] = weft_edit_distance(cx, a[0], a[0], a[0], NULL, false); break;
    default: outs[0] = weft_edit_distance(cx, a[0], NULL, a[0], a[2], false); break;
    }
    return weft_ctx_status(cx);
}

Test(ops_edit_distance, refused_calls_name_the_op)
{
    const double v[9] = { 0 };
    weft_tensor *args[5] = { test_tensor(WEFT_I32, 2, (const int64_t[]){ 2, 3 }, v),
                             test_tensor(WEFT_I32, 1, (const int64_t[]){ 2 }, v),
                             test_tensor(WEFT_F32, 2, (const int64_t[]){ 2, 3 }, v),
                             test_tensor(WEFT_I64, 2, (const int64_t[]){ 2, 3 }, v),
                             test_tensor(WEFT_I32, 2, (const int64_t[]){ 3, 3 }, v) };
    const op_error_case cases[] = {
        { FLOATS, WEFT_EDTYPE, "weft_edit_distance: the hypothesis f32[2,3] and truth f32[2,3] "
                               "are not both i32 or both i64" },
        { MIXED, WEFT_EDTYPE, "the hypothesis i32[2,3] and truth i64[2,3] are not both" },
        { BATCH, WEFT_ESHAPE, "weft_edit_distance: the hypothesis i32[2,3] and truth i32[3,3] "
                              "are not sequences [..., length] with the same batch dims" },
        { LENGTH_RANK, WEFT_ESHAPE, "weft_edit_distance: the hypothesis lengths i32[2,3] are not "
                                    "i32 or i64 of the batch dims of i32[2,3]" },
        { LENGTH_FLOAT, WEFT_ESHAPE, "the truth lengths f32[2,3] are not i32 or i64" },
    };
    op_expect_errors(rts[1], bad_body, cases, sizeof cases / sizeof *cases, args, 5);
    release(args, 5);
}
