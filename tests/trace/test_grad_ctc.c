/* weft_gradients through weft_ctc_loss: the logits' gradient against
 * central differences, time major and batch major, the blank first and
 * last, labels with a repeat and frames past an element's length; and a
 * label no path holds (loss +inf) gives its logits zeros. */
#include "grad_check.h"

TestSuite(grad_ctc, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 120);

typedef struct ctc_case {
    bool time_major;
    int blank;
    double labels[4], label_length[2], logit_length[2];
} ctc_case;

static weft_value *ints(weft_ctx *cx, int rank, const int64_t *dims, const double *v)
{
    weft_tensor *t = test_tensor(WEFT_I64, rank, dims, v);
    weft_value *c = weft_const_tensor(cx, t);
    weft_tensor_release(t);
    return c;
}

/* Each element's loss times a weight of its own. */
static int ctc_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const ctc_case *c = user;
    weft_value *labels = ints(cx, 2, (const int64_t[]){ 2, 2 }, c->labels);
    weft_value *ll = ints(cx, 1, (const int64_t[]){ 2 }, c->label_length);
    weft_value *tl = ints(cx, 1, (const int64_t[]){ 2 }, c->logit_length);
    weft_value *loss = weft_ctc_loss(cx, labels, a[0], ll, tl, c->time_major, c->blank);
    weft_value *w = ints(cx, 1, (const int64_t[]){ 2 }, (const double[]){ 3, -2 });
    outs[0] = weft_mul(cx, loss, weft_cast(cx, w, WEFT_F64));
    return weft_ctx_status(cx);
}

static void fill(double *v, int n)
{
    for (int i = 0; i < n; i++)
        v[i] = 0.9 * sin(0.7 * i + 0.2) + 0.3 * cos(1.9 * i);
}

Test(grad_ctc, logits_match_differences)
{
    static const struct {
        const char *name;
        ctc_case c;
    } cases[] = {
        { "time major, blank last, a repeat", { true, -1, { 1, 1, 2, 0 }, { 2, 1 }, { 5, 3 } } },
        { "batch major, blank 0", { false, 0, { 1, 3, 2, 0 }, { 2, 1 }, { 4, 5 } } },
        { "an empty label", { false, 3, { 1, 2, 0, 0 }, { 2, 0 }, { 5, 2 } } },
    };
    double v[40];
    fill(v, 40);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        grad_arg x = { 3, { 5, 2, 4 }, v };
        if (!cases[i].c.time_major) {
            x.dims[0] = 2;
            x.dims[1] = 5;
        }
        grad_case gc = { ctc_body, &cases[i].c, 1, 1 };
        expect_gradients(&gc, &x, cases[i].name);
    }
}

Test(grad_ctc, a_label_no_path_holds_gives_zeros)
{
    /* Element 1's label of two classes cannot fit in its one frame. */
    ctc_case c = { false, 0, { 1, 0, 1, 2 }, { 1, 2 }, { 5, 1 } };
    double v[40];
    fill(v, 40);
    weft_tensor *x = test_tensor(WEFT_F64, 3, (const int64_t[]){ 2, 5, 4 }, v), *outs[2];
    grad_case gc = { ctc_body, &c, 1, 1 };
    op_results_everywhere(grad_body, &gc, &x, 1, outs, 2, "no path");
    for (int64_t i = 0; i < 20; i++)
        cr_expect_neq(test_element(outs[1], i), 0.0, "element 0 [%lld]", (long long)i);
    for (int64_t i = 20; i < 40; i++)
        cr_expect_eq(test_element(outs[1], i), 0.0, "element 1 [%lld]", (long long)i);
    weft_tensor_release(x);
    weft_tensor_release(outs[0]);
    weft_tensor_release(outs[1]);
}
