/* ctc_loss against a brute force written here: every path of classes over
 * an element's frames, collapsed (repeats merged, blanks dropped), its
 * probability added where it gives the label.  Batches with their own
 * label and frame lengths, time-major and batch-major logits (the same
 * bits), the blank first and last, an empty label, a label the frames
 * cannot hold (+inf), f32 (the f64 loss of the same logits, rounded once);
 * the same bits eagerly and traced on 1, 2 and 4 workers; the refused
 * calls, at tracing and when the function runs.  The greedy decoder and
 * collapse_repeated against loops written here; ctc_unique_labels against
 * a scan of the labels seen so far. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_ctc, .init = suite_runtimes_create, .fini = suite_runtimes_destroy, .timeout = 60);

typedef struct ctc_case {
    bool time_major;
    int blank;
} ctc_case;

static int ctc_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const ctc_case *c = user;
    outs[0] = weft_ctc_loss(cx, a[0], a[1], a[2], a[3], c->time_major, c->blank);
    return weft_ctx_status(cx);
}

enum { B = 4, T = 5, C = 4, L = 3 };

/* The loss of element b by enumeration: logits [B, T, C] batch-major. */
static long double brute(const double *logits, int b, int frames, const int *label, int len,
                         int blank)
{
    long double lp[T][C];
    for (int t = 0; t < frames; t++) {
        long double sum = 0;
        for (int c = 0; c < C; c++)
            sum += expl(logits[(b * T + t) * C + c]);
        for (int c = 0; c < C; c++)
            lp[t][c] = logits[(b * T + t) * C + c] - logl(sum);
    }
    long double total = 0;
    int paths = 1;
    for (int t = 0; t < frames; t++)
        paths *= C;
    for (int p = 0; p < paths; p++) {
        int path[T], code = p, out[T], n = 0;
        long double lprob = 0;
        for (int t = 0; t < frames; t++) {
            path[t] = code % C;
            code /= C;
            lprob += lp[t][path[t]];
        }
        for (int t = 0; t < frames; t++)
            if (path[t] != blank && (t == 0 || path[t] != path[t - 1]))
                out[n++] = path[t];
        bool same = n == len;
        for (int i = 0; same && i < n; i++)
            same = out[i] == label[i];
        if (same)
            total += expl(lprob);
    }
    return -logl(total);
}

/* The batch's tensors: logits drawn in [-2, 2), labels padded with 0. */
static void make_args(const ctc_case *c, weft_dtype dt, const int labels[B][L],
                      const int *label_len, const int *frames, double *logits,
                      weft_tensor **args)
{
    uint64_t s = 77;
    for (int i = 0; i < B * T * C; i++)
        logits[i] = 2 * op_uniform(&s);
    if (dt == WEFT_F32)
        for (int i = 0; i < B * T * C; i++)
            logits[i] = (float)logits[i];
    double lab[B * L], ll[B], fl[B], lt[B * T * C];
    for (int b = 0; b < B; b++) {
        for (int i = 0; i < L; i++)
            lab[b * L + i] = labels[b][i];
        ll[b] = label_len[b];
        fl[b] = frames[b];
        for (int t = 0; t < T; t++)
            for (int k = 0; k < C; k++)
                lt[(c->time_major ? t * B + b : b * T + t) * C + k] = logits[(b * T + t) * C + k];
    }
    args[0] = test_tensor(WEFT_I32, 2, (const int64_t[]){ B, L }, lab);
    args[1] = test_tensor(dt, 3,
                          c->time_major ? (const int64_t[]){ T, B, C } : (const int64_t[]){ B, T, C },
                          lt);
    args[2] = test_tensor(WEFT_I64, 1, (const int64_t[]){ B }, ll);
    args[3] = test_tensor(WEFT_I32, 1, (const int64_t[]){ B }, fl);
}

static void release(weft_tensor **args)
{
    for (int k = 0; k < 4; k++)
        weft_tensor_release(args[k]);
}

Test(ops_ctc, losses_match_the_brute_force)
{
    /* blank 0: labels over 1..3; blank -1 (class 3): labels over 0..2. */
    static const int labels0[B][L] = { { 1, 2, 0 }, { 3, 3, 0 }, { 2, 0, 0 }, { 1, 1, 2 } };
    static const int labels3[B][L] = { { 0, 2, 0 }, { 1, 1, 0 }, { 2, 0, 0 }, { 0, 0, 1 } };
    const int label_len[B] = { 2, 2, 0, 3 }, frames[B] = { 5, 4, 3, 5 };
    for (int layout = 0; layout < 2; layout++)
        for (int k = 0; k < 2; k++) {
            ctc_case c = { layout == 0, k == 0 ? 0 : -1 };
            int blank = k == 0 ? 0 : C - 1;
            const int(*labels)[L] = k == 0 ? labels0 : labels3;
            double logits[B * T * C];
            weft_tensor *args[4], *out;
            make_args(&c, WEFT_F64, labels, label_len, frames, logits, args);
            op_results_everywhere(ctc_body, &c, args, 4, &out, 1, "ctc_loss");
            test_assert_shape(out, WEFT_F64, 1, (const int64_t[]){ B }, "ctc_loss");
            for (int b = 0; b < B; b++) {
                long double want = brute(logits, b, frames[b], labels[b], label_len[b], blank);
                double got = test_element(out, b);
                cr_assert(fabsl(got - want) <= 1e-13L * (1 + fabsl(want)),
                          "layout %d blank %d element %d: %.17g, want %.17Lg", layout, blank, b,
                          got, want);
            }
            weft_tensor_release(out);
            release(args);
        }
}

Test(ops_ctc, layouts_agree_and_f32_rounds_f64)
{
    static const int labels[B][L] = { { 1, 2, 3 }, { 3, 1, 0 }, { 2, 2, 0 }, { 1, 0, 0 } };
    const int label_len[B] = { 3, 2, 2, 0 }, frames[B] = { 5, 0, 2, 0 };
    double logits[B * T * C];
    weft_tensor *tm[4], *bm[4], *f32[4], *y[3];
    ctc_case ct = { true, 0 }, cb = { false, 0 };
    make_args(&ct, WEFT_F64, labels, label_len, frames, logits, tm);
    make_args(&cb, WEFT_F64, labels, label_len, frames, logits, bm);
    make_args(&cb, WEFT_F32, labels, label_len, frames, logits, f32);
    cr_assert_eq(op_call(rts[1], ctc_body, &ct, tm, 4, &y[0], 1, false), 0, "%s", weft_errmsg());
    cr_assert_eq(op_call(rts[1], ctc_body, &cb, bm, 4, &y[1], 1, false), 0, "%s", weft_errmsg());
    cr_assert(op_same_bits(y[0], y[1]), "time-major and batch-major losses differ");
    /* Element 2 needs 3 frames for [2, 2], element 1 has none for its
     * label: +inf; element 3, no frames and no label: probability 1. */
    cr_assert(isinf(test_element(y[0], 2)) && test_element(y[0], 2) > 0);
    cr_assert(isinf(test_element(y[0], 1)) && test_element(y[0], 1) > 0);
    cr_assert(isfinite(test_element(y[0], 0)) && test_element(y[0], 3) == 0);
    cr_assert_eq(op_call(rts[1], ctc_body, &cb, f32, 4, &y[2], 1, false), 0, "%s",
                 weft_errmsg());
    weft_tensor *f64_of_f32[4];
    /* The same f32-rounded logits in f64. */
    make_args(&cb, WEFT_F32, labels, label_len, frames, logits, f64_of_f32);
    weft_tensor_release(f64_of_f32[1]);
    f64_of_f32[1] = test_tensor(WEFT_F64, 3, (const int64_t[]){ B, T, C }, logits);
    weft_tensor *y64;
    cr_assert_eq(op_call(rts[1], ctc_body, &cb, f64_of_f32, 4, &y64, 1, false), 0);
    for (int b = 0; b < B; b++)
        cr_assert_eq(test_element(y[2], b), (double)(float)test_element(y64, b), "element %d", b);
    weft_tensor_release(y64);
    for (int k = 0; k < 3; k++)
        weft_tensor_release(y[k]);
    release(tm);
    release(bm);
    release(f32);
    release(f64_of_f32);
}

enum { RUN_BLANK_LABEL, RUN_LONG_LABEL, RUN_BAD_BLANK, TRACE_INT_LOGITS, TRACE_BATCH };

static int bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    /* a: labels i32[2,2] = [[1, 2], [2, 1]], logits f64[3,2,3] (time
     * major), label lengths, frame lengths i32[2]. */
    switch (*(const int *)user) {
    case RUN_BLANK_LABEL: outs[0] = weft_ctc_loss(cx, a[0], a[1], a[2], a[3], true, 1); break;
    case RUN_LONG_LABEL: outs[0] = weft_ctc_loss(cx, a[0], a[1], a[3], a[3], true, 0); break;
    case RUN_BAD_BLANK: outs[0] = weft_ctc_loss(cx, a[0], a[1], a[2], a[3], true, 5); break;
    case TRACE_INT_LOGITS: outs[0] = weft_ctc_loss(cx, a[0], a[0], a[2], a[3], true, 0); break;
    default: outs[0] = weft_ctc_loss(cx, a[0], a[1], a[2], a[3], false, 0); break;
    }
    return weft_ctx_status(cx);
}

Test(ops_ctc, refused_calls_name_the_op)
{
    const double labels[4] = { 1, 2, 2, 1 }, ll[2] = { 1, 2 }, fl[2] = { 3, 3 };
    double logits[18];
    for (int i = 0; i < 18; i++)
        logits[i] = i % 5 * 0.25;
    weft_tensor *args[4] = { test_tensor(WEFT_I32, 2, (const int64_t[]){ 2, 2 }, labels),
                             test_tensor(WEFT_F64, 3, (const int64_t[]){ 3, 2, 3 }, logits),
                             test_tensor(WEFT_I32, 1, (const int64_t[]){ 2 }, ll),
                             test_tensor(WEFT_I32, 1, (const int64_t[]){ 2 }, fl) };
    const op_error_case cases[] = {
        { RUN_BLANK_LABEL, WEFT_EINVAL, "weft_ctc_loss: batch element 0 has a label class out of "
                                        "range or equal to the blank" },
        { RUN_LONG_LABEL, WEFT_EINVAL, "weft_ctc_loss: batch element 0 has" },
        { RUN_BAD_BLANK, WEFT_EINVAL, "weft_ctc_loss: blank_index 5 is not a class of 3" },
        { TRACE_INT_LOGITS, WEFT_EDTYPE, "weft_ctc_loss: the logits i32[2,2] are not f32 or f64" },
        { TRACE_BATCH, WEFT_ESHAPE, "weft_ctc_loss: the labels i32[2,2], the logits f64[3,2,3] "
                                    "(batch major) and the lengths disagree on the batch" },
    };
    op_expect_errors(rts[1], bad_body, cases, sizeof cases / sizeof *cases, args, 4);
    release(args);
}

/* ---- Greedy decoder ------------------------------------------------------ */

typedef struct greedy_case {
    bool merge;
    int blank;
} greedy_case;

static int greedy_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const greedy_case *g = user;
    return weft_ctc_greedy_decoder(cx, a[0], a[1], g->merge, g->blank, outs);
}

Test(ops_ctc, greedy_decoder_against_a_loop)
{
    enum { GT = 7, GB = 3, GC = 4 };
    /* Logits of small integers in [-2, 2], with ties (the first class
     * wins), time-major. */
    double x[GT * GB * GC];
    uint64_t s = 5;
    for (int i = 0; i < GT * GB * GC; i++)
        x[i] = floor(2.5 * op_uniform(&s));
    const double lens[GB] = { 7, 4, 0 };
    weft_tensor *args[2] = { test_tensor(WEFT_F64, 3, (const int64_t[]){ GT, GB, GC }, x),
                             test_tensor(WEFT_I32, 1, (const int64_t[]){ GB }, lens) };
    for (int m = 0; m < 2; m++)
        for (int k = 0; k < 2; k++) {
            greedy_case g = { m == 1, k == 0 ? -1 : 0 };
            int blank = k == 0 ? GC - 1 : 0;
            weft_tensor *outs[2];
            op_results_everywhere(greedy_body, &g, args, 2, outs, 2, "greedy decoder");
            test_assert_shape(outs[0], WEFT_I64, 2, (const int64_t[]){ GB, GT }, "decoded");
            test_assert_shape(outs[1], WEFT_F64, 2, (const int64_t[]){ GB, 1 }, "neg_sum");
            for (int b = 0; b < GB; b++) {
                int64_t want[GT];
                int n = 0, prev = -1;
                double sum = 0;
                for (int t = 0; t < (int)lens[b]; t++) {
                    const double *f = x + (t * GB + b) * GC;
                    int best = 0;
                    for (int c = 1; c < GC; c++)
                        if (f[c] > f[best])
                            best = c;
                    sum += f[best];
                    if (best != blank && !(g.merge && best == prev))
                        want[n++] = best;
                    prev = best;
                }
                for (int t = n; t < GT; t++)
                    want[t] = -1;
                for (int t = 0; t < GT; t++)
                    cr_assert_eq(test_element(outs[0], b * GT + t), (double)want[t],
                                 "merge %d blank %d element %d frame %d", m, blank, b, t);
                cr_assert_eq(test_element(outs[1], b), -sum, "element %d: neg_sum", b);
            }
            weft_tensor_release(outs[0]);
            weft_tensor_release(outs[1]);
        }
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

Test(ops_ctc, greedy_decoder_refusals)
{
    weft_ctx *cx = NULL;
    cr_assert_eq(weft_eager_begin(rts[1], &cx), 0);
    weft_value *x = weft_fill(cx, WEFT_F64, 3, (const int64_t[]){ 2, 1, 3 }, 0.5);
    weft_value *len = weft_fill(cx, WEFT_I32, 1, (const int64_t[]){ 1 }, 2);
    weft_value *outs[2];
    cr_assert_eq(weft_ctc_greedy_decoder(cx, x, len, true, 3, outs), WEFT_EINVAL);
    cr_assert(strstr(weft_errmsg(), "weft_ctc_greedy_decoder: blank_index 3 is not a class of 3"),
              "%s", weft_errmsg());
    cr_assert(outs[0] == NULL && outs[1] == NULL);
    weft_eager_end(&cx);
    cr_assert_eq(weft_eager_begin(rts[1], &cx), 0);
    x = weft_fill(cx, WEFT_F64, 3, (const int64_t[]){ 2, 1, 3 }, 0.5);
    cr_assert_eq(weft_ctc_greedy_decoder(cx, x, x, true, 0, outs), WEFT_EDTYPE);
    weft_eager_end(&cx);
    cr_assert_eq(weft_eager_begin(rts[1], &cx), 0);
    x = weft_fill(cx, WEFT_F64, 3, (const int64_t[]){ 2, 1, 3 }, 0.5);
    cr_assert_eq(weft_ctc_greedy_decoder(cx, x, x, true, 0, NULL), WEFT_EINVAL);
    cr_assert(strstr(weft_errmsg(), "outs is NULL"), "%s", weft_errmsg());
    weft_eager_end(&cx);
}

/* ---- collapse_repeated --------------------------------------------------- */

static int collapse_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    return weft_collapse_repeated(cx, a[0], a[1], outs);
}

/* Row b of labels [rows, width] collapsed by a loop: its kept labels into
 * want (width of them, zeros after), their count returned. */
static int collapse_row(const double *labels, int width, int b, double len, double *want)
{
    int n = 0;
    for (int t = 0; t < width; t++) {
        want[t] = 0;
        if (t < len && (t == 0 || labels[b * width + t] != labels[b * width + t - 1]))
            want[n++] = labels[b * width + t];
    }
    for (int t = n; t < width; t++)
        want[t] = 0;
    return n;
}

Test(ops_ctc, collapse_repeated_against_a_loop)
{
    enum { CB = 6, CW = 9 };
    /* Labels in 1..3 (repeats common), lengths past the width, zero and
     * negative; i32 and f64 labels, i32 and i64 lengths. */
    double labels[CB * CW];
    uint64_t s = 11;
    for (int i = 0; i < CB * CW; i++)
        labels[i] = 2 + floor(1.5 * op_uniform(&s));
    const double lens[CB] = { 9, 4, 0, 12, 1, -3 };
    const weft_dtype label_dt[2] = { WEFT_I32, WEFT_F64 }, len_dt[2] = { WEFT_I64, WEFT_I32 };
    for (int k = 0; k < 2; k++) {
        weft_tensor *args[2] = {
            test_tensor(label_dt[k], 2, (const int64_t[]){ CB, CW }, labels),
            test_tensor(len_dt[k], 1, (const int64_t[]){ CB }, lens),
        };
        double want[CB][CW];
        int longest = 0, n[CB];
        for (int b = 0; b < CB; b++) {
            n[b] = collapse_row(labels, CW, b, lens[b], want[b]);
            longest = n[b] > longest ? n[b] : longest;
        }
        cr_assert(longest > 0 && longest < CW, "the case cuts columns off (%d)", longest);
        weft_tensor *outs[2];
        op_results_everywhere(collapse_body, NULL, args, 2, outs, 2, "collapse_repeated");
        test_assert_shape(outs[0], label_dt[k], 2, (const int64_t[]){ CB, longest }, "labels");
        test_assert_shape(outs[1], len_dt[k], 1, (const int64_t[]){ CB }, "lengths");
        for (int b = 0; b < CB; b++) {
            cr_assert_eq(test_element(outs[1], b), n[b], "row %d's length", b);
            for (int t = 0; t < longest; t++)
                cr_assert_eq(test_element(outs[0], b * longest + t), want[b][t],
                             "case %d row %d column %d", k, b, t);
        }
        for (int i = 0; i < 2; i++) {
            weft_tensor_release(outs[i]);
            weft_tensor_release(args[i]);
        }
    }
}

Test(ops_ctc, collapse_repeated_tensorflows_example)
{
    /* [[A, A, B, B, A], [A, B, C, D, E]] with lengths 4 and 5 (A = 1). */
    const double labels[10] = { 1, 1, 2, 2, 1, 1, 2, 3, 4, 5 }, lens[2] = { 4, 5 };
    weft_tensor *args[2] = { test_tensor(WEFT_I64, 2, (const int64_t[]){ 2, 5 }, labels),
                             test_tensor(WEFT_I32, 1, (const int64_t[]){ 2 }, lens) };
    weft_tensor *outs[2];
    op_results_everywhere(collapse_body, NULL, args, 2, outs, 2, "collapse_repeated");
    const double want[10] = { 1, 2, 0, 0, 0, 1, 2, 3, 4, 5 };
    test_assert_shape(outs[0], WEFT_I64, 2, (const int64_t[]){ 2, 5 }, "labels");
    for (int i = 0; i < 10; i++)
        cr_assert_eq(test_element(outs[0], i), want[i], "element %d", i);
    cr_assert(test_element(outs[1], 0) == 2 && test_element(outs[1], 1) == 5);
    for (int i = 0; i < 2; i++) {
        weft_tensor_release(outs[i]);
        weft_tensor_release(args[i]);
    }
}

Test(ops_ctc, collapse_repeated_with_nothing_kept)
{
    /* Every length 0: no column is left; an empty row width keeps none. */
    const double labels[6] = { 1, 2, 3, 4, 5, 6 }, lens[2] = { 0, 0 };
    for (int width = 0; width <= 3; width += 3) {
        weft_tensor *args[2] = {
            test_tensor(WEFT_I32, 2, (const int64_t[]){ 2, width }, labels),
            test_tensor(WEFT_I32, 1, (const int64_t[]){ 2 }, lens),
        };
        weft_tensor *outs[2];
        op_results_everywhere(collapse_body, NULL, args, 2, outs, 2, "collapse_repeated");
        test_assert_shape(outs[0], WEFT_I32, 2, (const int64_t[]){ 2, 0 }, "labels");
        cr_assert(test_element(outs[1], 0) == 0 && test_element(outs[1], 1) == 0);
        for (int i = 0; i < 2; i++) {
            weft_tensor_release(outs[i]);
            weft_tensor_release(args[i]);
        }
    }
}

Test(ops_ctc, collapse_repeated_refusals)
{
    weft_ctx *cx = NULL;
    weft_value *outs[2];
    cr_assert_eq(weft_eager_begin(rts[1], &cx), 0);
    weft_value *b = weft_fill(cx, WEFT_BOOL, 2, (const int64_t[]){ 2, 3 }, 1);
    weft_value *len = weft_fill(cx, WEFT_I32, 1, (const int64_t[]){ 2 }, 2);
    cr_assert_eq(weft_collapse_repeated(cx, b, len, outs), WEFT_EDTYPE);
    cr_assert(strstr(weft_errmsg(), "weft_collapse_repeated: the labels bool[2,3] are bool"),
              "%s", weft_errmsg());
    cr_assert(outs[0] == NULL && outs[1] == NULL);
    weft_eager_end(&cx);
    cr_assert_eq(weft_eager_begin(rts[1], &cx), 0);
    len = weft_fill(cx, WEFT_F32, 1, (const int64_t[]){ 2 }, 2);
    cr_assert_eq(weft_collapse_repeated(cx, len, len, outs), WEFT_EDTYPE);
    weft_eager_end(&cx);
    cr_assert_eq(weft_eager_begin(rts[1], &cx), 0);
    len = weft_fill(cx, WEFT_I32, 1, (const int64_t[]){ 2 }, 2);
    cr_assert_eq(weft_collapse_repeated(cx, len, len, outs), WEFT_ESHAPE);
    cr_assert(strstr(weft_errmsg(), "are not [batch, max_length]"), "%s", weft_errmsg());
    weft_eager_end(&cx);
    cr_assert_eq(weft_eager_begin(rts[1], &cx), 0);
    len = weft_fill(cx, WEFT_I32, 1, (const int64_t[]){ 2 }, 2);
    cr_assert_eq(weft_collapse_repeated(cx, len, len, NULL), WEFT_EINVAL);
    weft_eager_end(&cx);
}

/* ---- ctc_unique_labels --------------------------------------------------- */

static int unique_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    return weft_ctc_unique_labels(cx, a[0], outs);
}

/* Each row of labels [rows, width] against a scan of the distinct labels
 * found so far. */
static void expect_unique_rows(weft_tensor *const *outs, const double *labels, int rows,
                               int width)
{
    for (int r = 0; r < rows; r++) {
        double seen[64];
        int distinct = 0;
        for (int c = 0; c < width; c++) {
            double x = labels[r * width + c];
            int k = 0;
            while (k < distinct && seen[k] != x)
                k++;
            if (k == distinct)
                seen[distinct++] = x;
            cr_assert_eq(test_element(outs[1], r * width + c), k, "row %d column %d's index", r,
                         c);
        }
        for (int c = 0; c < width; c++)
            cr_assert_eq(test_element(outs[0], r * width + c), c < distinct ? seen[c] : 0,
                         "row %d's label %d", r, c);
    }
}

Test(ops_ctc, unique_labels_against_a_scan)
{
    enum { UB = 5, UW = 40 };
    /* Row 0 all equal, row 1 all distinct (falling, so sorting moves
     * every one), rows 2-4 drawn from ten values with negatives; i32 and
     * i64, the same rows. */
    double labels[UB * UW];
    uint64_t s = 23;
    for (int c = 0; c < UW; c++) {
        labels[c] = 7;
        labels[UW + c] = 100 - 3 * c;
    }
    for (int i = 2 * UW; i < UB * UW; i++)
        labels[i] = floor(5 * op_uniform(&s));
    const weft_dtype dts[2] = { WEFT_I32, WEFT_I64 };
    for (int k = 0; k < 2; k++) {
        weft_tensor *x = test_tensor(dts[k], 2, (const int64_t[]){ UB, UW }, labels), *outs[2];
        op_results_everywhere(unique_body, NULL, &x, 1, outs, 2, "ctc_unique_labels");
        test_assert_shape(outs[0], WEFT_I64, 2, (const int64_t[]){ UB, UW }, "labels");
        test_assert_shape(outs[1], WEFT_I32, 2, (const int64_t[]){ UB, UW }, "indices");
        expect_unique_rows(outs, labels, UB, UW);
        weft_tensor_release(outs[0]);
        weft_tensor_release(outs[1]);
        weft_tensor_release(x);
    }
}

Test(ops_ctc, unique_labels_tensorflows_example_and_extremes)
{
    /* TensorFlow's example [[3, 4, 4, 3]]; i64's extremes, which a
     * difference of labels would overflow; the padding counts as a label. */
    const double small[4] = { 3, 4, 4, 3 };
    weft_tensor *x = test_tensor(WEFT_I32, 2, (const int64_t[]){ 1, 4 }, small), *outs[2];
    op_results_everywhere(unique_body, NULL, &x, 1, outs, 2, "ctc_unique_labels");
    const double want_labels[4] = { 3, 4, 0, 0 }, want_index[4] = { 0, 1, 1, 0 };
    for (int i = 0; i < 4; i++)
        cr_assert(test_element(outs[0], i) == want_labels[i] &&
                  test_element(outs[1], i) == want_index[i], "element %d", i);
    for (int i = 0; i < 2; i++)
        weft_tensor_release(outs[i]);
    weft_tensor_release(x);
    const int64_t big[6] = { INT64_MAX, 0, INT64_MIN, 0, INT64_MAX, 5 };
    weft_tensor *y = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_I64, 2, (const int64_t[]){ 1, 6 }, big, &y), 0);
    op_results_everywhere(unique_body, NULL, &y, 1, outs, 2, "ctc_unique_labels");
    const int64_t *u = weft_tensor_data(outs[0]);
    const int32_t *ix = weft_tensor_data(outs[1]);
    const int64_t want_u[6] = { INT64_MAX, 0, INT64_MIN, 5, 0, 0 };
    const int32_t want_ix[6] = { 0, 1, 2, 1, 0, 3 };
    for (int i = 0; i < 6; i++)
        cr_assert(u[i] == want_u[i] && ix[i] == want_ix[i], "element %d: %lld %d", i,
                  (long long)u[i], ix[i]);
    for (int i = 0; i < 2; i++)
        weft_tensor_release(outs[i]);
    weft_tensor_release(y);
}

Test(ops_ctc, unique_labels_traced_once_for_any_size)
{
    const weft_spec sig = { .dtype = WEFT_I64, .rank = 2, .dims = { -1, -1 } };
    weft_function_desc d = { .name = "unique", .body = unique_body, .n_args = 1, .n_outs = 2,
                             .input_signature = &sig };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rts[1], &d, &f), 0, "%s", weft_errmsg());
    const int sizes[4][2] = { { 3, 7 }, { 0, 4 }, { 2, 0 }, { 1, 13 } };
    for (int k = 0; k < 4; k++) {
        int rows = sizes[k][0], width = sizes[k][1];
        double labels[13 * 3];
        for (int i = 0; i < rows * width; i++)
            labels[i] = (i * 7 + k) % 5;
        weft_tensor *x = test_tensor(WEFT_I64, 2, (const int64_t[]){ rows, width }, labels);
        weft_tensor *outs[2] = { NULL, NULL };
        weft_arg arg = weft_arg_tensor(x);
        cr_assert_eq(weft_function_call(f, &arg, 1, outs, 2), 0, "%s", weft_errmsg());
        test_assert_shape(outs[1], WEFT_I32, 2, (const int64_t[]){ rows, width }, "indices");
        expect_unique_rows(outs, labels, rows, width);
        for (int i = 0; i < 2; i++)
            weft_tensor_release(outs[i]);
        weft_tensor_release(x);
    }
    op_destroy_traced_once(&f);
}

Test(ops_ctc, unique_labels_refusals)
{
    weft_ctx *cx = NULL;
    weft_value *outs[2];
    cr_assert_eq(weft_eager_begin(rts[1], &cx), 0);
    weft_value *x = weft_fill(cx, WEFT_F32, 2, (const int64_t[]){ 2, 3 }, 1);
    cr_assert_eq(weft_ctc_unique_labels(cx, x, outs), WEFT_EDTYPE);
    cr_assert(strstr(weft_errmsg(), "weft_ctc_unique_labels: the labels f32[2,3] are not i32 or "
                                    "i64"), "%s", weft_errmsg());
    cr_assert(outs[0] == NULL && outs[1] == NULL);
    weft_eager_end(&cx);
    cr_assert_eq(weft_eager_begin(rts[1], &cx), 0);
    x = weft_fill(cx, WEFT_I32, 1, (const int64_t[]){ 3 }, 1);
    cr_assert_eq(weft_ctc_unique_labels(cx, x, outs), WEFT_ESHAPE);
    cr_assert(strstr(weft_errmsg(), "weft_ctc_unique_labels: the labels i32[3] are not [batch, "
                                    "max_length]"), "%s", weft_errmsg());
    weft_eager_end(&cx);
    cr_assert_eq(weft_eager_begin(rts[1], &cx), 0);
    x = weft_fill(cx, WEFT_I32, 2, (const int64_t[]){ 1, 3 }, 1);
    cr_assert_eq(weft_ctc_unique_labels(cx, x, NULL), WEFT_EINVAL);
    weft_eager_end(&cx);
}
