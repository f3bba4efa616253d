/* weighted_moments against loops written here: weights of x's shape and
 * broadcast from a row, over one axis, the other and every axis, with and
 * without keepdims, a slice of zero weight (mean and variance 0, as
 * TensorFlow's div_no_nan); the same bits eagerly and traced on 1, 2 and
 * 4 workers; the refused calls. */
#include <math.h>
#include <stdlib.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_weighted_moments, .init = suite_runtimes_create,
          .fini = suite_runtimes_destroy, .timeout = 60);

typedef struct wm_case {
    int axes[2];
    size_t n_axes;
    bool keepdims;
} wm_case;

static int wm_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const wm_case *c = user;
    return weft_weighted_moments(cx, a[0], c->axes, c->n_axes, a[1], c->keepdims, outs);
}

enum { R = 3, C = 4 };

Test(ops_weighted_moments, against_loops)
{
    double x[R * C], w[R * C], row[C] = { 1, 0.5, 2, 3 };
    for (int i = 0; i < R * C; i++) {
        x[i] = (i * 7 % 11) - 4.5;
        w[i] = i / C == 1 ? 0 : 1 + i % 3;   /* row 1 weighs nothing */
    }
    const wm_case cases[] = { { { 0 }, 1, false }, { { 1 }, 1, true }, { { 0 }, 0, false },
                              { { -1 }, 1, false } };
    for (int full = 0; full < 2; full++) {
        weft_tensor *args[2] = { test_tensor(WEFT_F64, 2, (const int64_t[]){ R, C }, x),
                                 full ? test_tensor(WEFT_F64, 2, (const int64_t[]){ R, C }, w)
                                      : test_tensor(WEFT_F64, 1, (const int64_t[]){ C }, row) };
        for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
            const wm_case *c = &cases[k];
            weft_tensor *outs[2];
            op_results_everywhere(wm_body, (void *)c, args, 2, outs, 2, "weighted_moments");
            /* Reduce rows (axis 0), columns (axis 1 or -1) or everything. */
            bool rows = c->n_axes == 1 && c->axes[0] == 0, all = c->n_axes == 0;
            int groups = all ? 1 : rows ? C : R, per = all ? R * C : rows ? R : C;
            for (int g = 0; g < groups; g++) {
                double sw = 0, swx = 0, swd = 0;
                for (int e = 0; e < per; e++) {
                    int i = all ? e : rows ? e * C + g : g * C + e;
                    double wi = full ? w[i] : row[i % C];
                    sw += wi;
                    swx += wi * x[i];
                }
                double mean = sw != 0 ? swx / sw : 0;
                for (int e = 0; e < per; e++) {
                    int i = all ? e : rows ? e * C + g : g * C + e;
                    double wi = full ? w[i] : row[i % C];
                    swd += wi * (x[i] - mean) * (x[i] - mean);
                }
                double var = sw != 0 ? swd / sw : 0;
                cr_assert(fabs(test_element(outs[0], g) - mean) <= 1e-13, "case %zu group %d mean",
                          k, g);
                cr_assert(fabs(test_element(outs[1], g) - var) <= 1e-12, "case %zu group %d var",
                          k, g);
            }
            int want_rank = c->keepdims ? 2 : all ? 0 : 1;
            cr_assert_eq(weft_tensor_rank(outs[0]), want_rank, "case %zu", k);
            cr_assert_eq(weft_tensor_numel(outs[1]), groups, "case %zu", k);
            weft_tensor_release(outs[0]);
            weft_tensor_release(outs[1]);
        }
        weft_tensor_release(args[0]);
        weft_tensor_release(args[1]);
    }
}

static int bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    return weft_weighted_moments(cx, a[0], NULL, 0, a[1], false, outs);
}

Test(ops_weighted_moments, refused_calls_name_the_op)
{
    const double v[4] = { 1, 2, 3, 4 };
    weft_tensor *args[2] = { test_tensor(WEFT_F64, 1, (const int64_t[]){ 4 }, v),
                             test_tensor(WEFT_I32, 1, (const int64_t[]){ 4 }, v) };
    weft_tensor *outs[2] = { NULL, NULL };
    cr_assert_eq(op_call(rts[1], bad_body, NULL, args, 2, outs, 2, true), WEFT_EDTYPE);
    cr_assert(strstr(weft_errmsg(), "weft_weighted_moments"), "%s", weft_errmsg());
    weft_ctx *cx = NULL;
    cr_assert_eq(weft_eager_begin(rts[1], &cx), 0);
    weft_value *x = weft_eager_value(cx, args[0]);
    cr_assert_eq(weft_weighted_moments(cx, x, NULL, 0, x, false, NULL), WEFT_EINVAL);
    cr_assert(strstr(weft_errmsg(), "weft_weighted_moments: NULL outs"), "%s", weft_errmsg());
    weft_eager_end(&cx);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}
