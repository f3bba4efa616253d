/* weighted_moments against loops written here: weights of x's shape and
 * broadcast from a row, over one axis, the other and every axis, with and
 * without keepdims, a slice of zero weight (mean and variance 0, as
 * TensorFlow's div_no_nan); sufficient_statistics and normalize_moments,
 * with and without a shift; the same bits eagerly and traced on 1, 2 and
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
    cr_assert(strstr(weft_errmsg(), "weft_weighted_moments: outs is NULL but n_outs is 2"),
              "%s", weft_errmsg());
    weft_eager_end(&cx);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

/* ---- sufficient_statistics and normalize_moments ------------------------ */

typedef struct ss_case {
    int axis;        /* -99: every axis */
    bool shifted;    /* a[1] is the shift */
    bool keepdims;
} ss_case;

static int ss_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const ss_case *c = user;
    const int *axes = c->axis == -99 ? NULL : &c->axis;
    size_t n = c->axis == -99 ? 0 : 1;
    weft_value *shift = c->shifted ? a[1] : NULL, *st[3], *mv[2];
    if (weft_sufficient_statistics(cx, a[0], axes, n, shift, c->keepdims, st) != 0 ||
        weft_normalize_moments(cx, st[0], st[1], st[2], shift, mv) != 0)
        return weft_ctx_status(cx);
    outs[0] = st[0];
    outs[1] = st[1];
    outs[2] = st[2];
    outs[3] = mv[1];
    return 0;
}

/* TensorFlow's statistics of [3, 4] over the rows, the columns (a shift
 * per column broadcast) and everything, with keepdims; then the moments
 * from them: the mean and variance of the loops here. */
Test(ops_weighted_moments, sufficient_statistics_and_normalize_moments)
{
    double x[R * C];
    for (int i = 0; i < R * C; i++)
        x[i] = (i * 5 % 7) - 2.5;
    const ss_case cases[] = { { 0, false, false }, { 0, true, true }, { 1, false, true },
                              { -99, false, false } };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const ss_case *c = &cases[k];
        double shift[C] = { 0.5, -1, 2, 0.25 };
        weft_tensor *args[2] = { test_tensor(WEFT_F64, 2, (const int64_t[]){ R, C }, x),
                                 test_tensor(WEFT_F64, 1, (const int64_t[]){ C }, shift) };
        weft_tensor *out[4];
        op_results_everywhere(ss_body, (void *)c, args, 2, out, 4, "sufficient_statistics");
        /* Groups: over rows (axis 0) one per column, over columns one per
         * row, over everything one. */
        int groups = c->axis == 0 ? C : c->axis == 1 ? R : 1;
        int count = c->axis == 0 ? R : c->axis == 1 ? C : R * C;
        cr_assert_eq(test_element(out[0], 0), count, "case %zu: count", k);
        for (int g = 0; g < groups; g++) {
            double m = 0, v = 0, mean = 0, var = 0;
            for (int i = 0; i < R * C; i++) {
                int r = i / C, col = i % C;
                bool in = c->axis == 0 ? col == g : c->axis == 1 ? r == g : true;
                if (!in)
                    continue;
                double s = c->shifted ? shift[col] : 0;
                m += x[i] - s;
                v += (x[i] - s) * (x[i] - s);
                mean += x[i] / count;
            }
            for (int i = 0; i < R * C; i++) {
                int r = i / C, col = i % C;
                if (c->axis == 0 ? col == g : c->axis == 1 ? r == g : true)
                    var += (x[i] - mean) * (x[i] - mean) / count;
            }
            cr_assert(fabs(test_element(out[1], g) - m) <= 1e-12, "case %zu: mean_ss %d", k, g);
            cr_assert(fabs(test_element(out[2], g) - v) <= 1e-12, "case %zu: var_ss %d", k, g);
            cr_assert(fabs(test_element(out[3], g) - var) <= 1e-12, "case %zu: variance %d: %g, "
                      "want %g", k, g, test_element(out[3], g), var);
        }
        cr_assert_eq(weft_tensor_rank(out[1]), c->keepdims ? 2 : c->axis == -99 ? 0 : 1);
        for (int o = 0; o < 4; o++)
            weft_tensor_release(out[o]);
        weft_tensor_release(args[0]);
        weft_tensor_release(args[1]);
    }
}
