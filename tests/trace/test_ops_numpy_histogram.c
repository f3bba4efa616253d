/* NumPy's histogram by explicit edges (with weights), histogramdd and
 * histogram2d against NumPy 1.24's printed values, eagerly and traced on
 * 1, 2 and 4 workers with the same bits: repeated edges, the closed last
 * bin, NaN and values outside; equal bins with weights through
 * weft_histogram's edges; one trace for every sample count; edges that
 * decrease failing the call; the refusals. */
#include <math.h>
#include <string.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_numpy_histogram, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

#define DIMS(...) ((const int64_t[]){ __VA_ARGS__ })

static int by_edges_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    outs[0] = weft_histogram_by_edges(cx, a[0], a[1], *(const bool *)user ? a[2] : NULL);
    return weft_ctx_status(cx);
}

/* np.histogram(a, bins=[1, 2, 2, 4, 5]) (a repeated edge: an empty bin;
 * 5 on the last edge counts), with i32 edges; weighted by dyadic weights
 * (sums exact in any order) over bins [1, 2, 4, 5]. */
Test(ops_numpy_histogram, by_edges_is_numpys)
{
    weft_tensor *a = test_tensor(WEFT_F64, 1, DIMS(9),
                                 (const double[]){ 0.5, 1, 2, 2, 3, 5, 6, NAN, 4 });
    weft_tensor *e = test_tensor(WEFT_I32, 1, DIMS(5), (const double[]){ 1, 2, 2, 4, 5 });
    weft_tensor *args[3] = { a, e, NULL }, *r;
    bool weighted = false;
    op_results_everywhere(by_edges_body, &weighted, args, 2, &r, 1, "by edges");
    op_expect_values(r, WEFT_I64, (const double[]){ 1, 0, 3, 2 }, 4, "by edges");
    weft_tensor_release(r);
    args[1] = test_tensor(WEFT_F64, 1, DIMS(4), (const double[]){ 1, 2, 4, 5 });
    args[2] = test_tensor(WEFT_F64, 1, DIMS(9),
                          (const double[]){ 0.5, 0.25, 0.125, 4, 8, 16, 32, 64, 128 });
    weighted = true;
    op_results_everywhere(by_edges_body, &weighted, args, 3, &r, 1, "weighted");
    op_expect_values(r, WEFT_F64, (const double[]){ 0.25, 12.125, 144 }, 3, "weighted");
    weft_tensor_release(r);
    weft_tensor_release(args[1]);
    weft_tensor_release(args[2]);
    weft_tensor_release(e);
    weft_tensor_release(a);
}

static int density_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    weft_value *h[2];
    if (*(const bool *)user) {   /* equal bins over [0, 4] */
        int rc = weft_histogram(cx, a[0], 4, (const double[2]){ 0, 4 }, h);
        if (rc < 0)
            return rc;
    } else {
        h[0] = weft_histogram_by_edges(cx, a[0], a[1], a[2]);
        h[1] = a[1];
    }
    outs[0] = weft_histogram_density(cx, h[0], h[1]);
    return weft_ctx_status(cx);
}

/* np.histogram(a, ..., density=True) for a = [0.5, 1.5, 1.7, 2.2, 3.9, 3,
 * -1]: bins=4, range=(0, 4) gives [1/6, 1/3, 1/6, 1/3]; bins=[0, 1, 1.5,
 * 4] gives [1/6, 0, 1/3], weighted by f32 1..7 [1/21, 0, 8/21]; bins=[10,
 * 11] holds nothing: [nan]. */
Test(ops_numpy_histogram, density_is_numpys)
{
    weft_tensor *args[3] = {
        test_tensor(WEFT_F64, 1, DIMS(7), (const double[]){ 0.5, 1.5, 1.7, 2.2, 3.9, 3, -1 }),
        test_tensor(WEFT_F64, 1, DIMS(4), (const double[]){ 0, 1, 1.5, 4 }),
        test_tensor(WEFT_F32, 1, DIMS(7), (const double[]){ 1, 2, 3, 4, 5, 6, 7 }) }, *r;
    bool equal = true;
    op_results_everywhere(density_body, &equal, args, 1, &r, 1, "equal bins");
    op_expect_values(r, WEFT_F64, (const double[]){ 1.0 / 6, 1.0 / 3, 1.0 / 6, 1.0 / 3 }, 4,
                     "equal bins");
    weft_tensor_release(r);
    equal = false;
    op_results_everywhere(density_body, &equal, args, 3, &r, 1, "weighted");
    op_expect_values(r, WEFT_F64, (const double[]){ 1.0 / 21, 0, 8.0 / 21 }, 3, "weighted");
    weft_tensor_release(r);
    weft_tensor_release(args[2]);
    args[2] = test_tensor(WEFT_I64, 1, DIMS(7), (const double[]){ 1, 1, 1, 1, 1, 1, 1 });
    op_results_everywhere(density_body, &equal, args, 3, &r, 1, "edges");
    op_expect_values(r, WEFT_F64, (const double[]){ 1.0 / 6, 0, 1.0 / 3 }, 3, "edges");
    weft_tensor_release(r);
    weft_tensor_release(args[1]);
    args[1] = test_tensor(WEFT_I32, 1, DIMS(2), (const double[]){ 10, 11 });
    op_results_everywhere(density_body, &equal, args, 3, &r, 1, "empty");
    test_assert_shape(r, WEFT_F64, 1, DIMS(1), "empty");
    cr_assert(isnan(test_element(r, 0)));
    weft_tensor_release(r);
    for (int k = 0; k < 3; k++)
        weft_tensor_release(args[k]);
}

static int density_of_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_histogram_density(cx, a[0], a[1]);
    return weft_ctx_status(cx);
}

/* Lengths unknown while tracing: one trace; edges not one longer fail
 * the call. */
Test(ops_numpy_histogram, density_one_trace)
{
    const weft_spec sig[2] = { { WEFT_I64, 1, { -1 } }, { WEFT_F64, 1, { -1 } } };
    weft_function *f = op_signature_function(rt, density_of_body, NULL, sig, 2);
    for (int k = 0; k < 3; k++) {
        int64_t n = k == 0 ? 2 : 3, ne = k == 2 ? 3 : n + 1;
        weft_tensor *ts[2] = { test_tensor(WEFT_I64, 1, DIMS(n), (const double[]){ 1, 3, 4 }),
                               test_tensor(WEFT_F64, 1, DIMS(ne), (const double[]){ 0, 1, 2, 4 }) };
        weft_tensor *y = NULL;
        weft_arg a[2] = { weft_arg_tensor(ts[0]), weft_arg_tensor(ts[1]) };
        int rc = weft_function_call(f, a, 2, &y, 1);
        if (k == 2) {
            cr_assert_eq(rc, WEFT_EINVAL);
            cr_assert(strstr(weft_errmsg(), "edges are not one longer than hist"), "%s",
                      weft_errmsg());
        } else {
            cr_assert_eq(rc, 0, "%s", weft_errmsg());
            const double *want = k == 0 ? (const double[]){ 0.25, 0.75 }
                                        : (const double[]){ 0.125, 0.375, 0.25 };
            op_expect_values(y, WEFT_F64, want, n, "density");
            weft_tensor_release(y);
        }
        weft_tensor_release(ts[0]);
        weft_tensor_release(ts[1]);
    }
    op_destroy_traced_once(&f);
}

static int equal_bins_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    weft_value *h[2];
    int rc = weft_histogram(cx, a[0], 4, NULL, h);
    if (rc < 0)
        return rc;
    outs[0] = weft_histogram_by_edges(cx, a[0], h[1], a[1]);
    return weft_ctx_status(cx);
}

/* np.histogram(x, bins=4, weights=w): NumPy sums equal bins' weights with
 * bincount in index order, as weft does, so weft_histogram's edges and
 * weft_histogram_by_edges give its bits. */
Test(ops_numpy_histogram, equal_bins_with_weights_are_numpys)
{
    weft_tensor *args[2] = {
        test_tensor(WEFT_F64, 1, DIMS(10), (const double[]){ 0.3, 1.7, -2.2, 4.1, 0.05, 2.0,
                                                             -1.25, 3.5, 3.5, -0.75 }),
        test_tensor(WEFT_F64, 1, DIMS(10), (const double[]){ 0.1, 0.25, 1.5, -0.3, 2.0, 0.7, 0.9,
                                                             1.1, -0.2, 0.45 }),
    }, *r;
    op_results_everywhere(equal_bins_body, NULL, args, 2, &r, 1, "equal bins weighted");
    op_expect_values(r, WEFT_F64, (const double[]){ 2.85, 2.1, 0.95, 0.6000000000000001 }, 4,
                  "equal bins weighted");
    weft_tensor_release(r);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

/* user NULL: the three outputs; else the histogram only. */
static int dd_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    static const int64_t bins[2] = { 3, 2 };
    weft_value *h[3];
    int rc = weft_histogramdd(cx, a[0], bins, NULL, NULL, user ? h : outs);
    if (user)
        outs[0] = h[0];
    return rc;
}

/* np.histogramdd of an f32 sample [4, 2] into (3, 2) bins: f64 counts,
 * f64 edges from the f32 extremes (NumPy's linspace). */
Test(ops_numpy_histogram, histogramdd_is_numpys)
{
    weft_tensor *s = test_tensor(WEFT_F32, 2, DIMS(4, 2),
                                 (const double[]){ 0.1, 2, 0.7, -1, 0.3, 0.5, 0.25, 3 }), *r[3];
    op_results_everywhere(dd_body, NULL, &s, 1, r, 3, "histogramdd");
    test_assert_shape(r[0], WEFT_F64, 2, DIMS(3, 2), "histogramdd");
    op_expect_values(r[0], WEFT_F64, (const double[]){ 0, 2, 1, 0, 1, 0 }, 6, "histogramdd");
    op_expect_values(r[1], WEFT_F64,
                  (const double[]){ 0.10000000149011612, 0.29999999701976776, 0.4999999925494194,
                                    0.699999988079071 }, 4, "histogramdd edges 0");
    op_expect_values(r[2], WEFT_F64, (const double[]){ -1, 1, 3 }, 3, "histogramdd edges 1");
    for (int k = 0; k < 3; k++)
        weft_tensor_release(r[k]);
    weft_tensor_release(s);
}

typedef struct h2d_op {
    int64_t bins[2];
    bool ranged, weighted;
} h2d_op;

static int h2d_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const h2d_op *h = user;
    static const double range[2][2] = { { 0, 4 }, { 0, 1 } };
    return weft_histogram2d(cx, a[0], a[1], h->bins, h->ranged ? range : NULL,
                            h->weighted ? a[2] : NULL, outs);
}

/* np.histogram2d: integers x with weights into [2, 3] bins; a given range
 * with NaN and points outside (dropped) and on the last edges (kept). */
static int dd_edges_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    int which = *(const int *)user;
    weft_value *edges[2] = { a[1], a[2] };
    outs[0] = weft_histogramdd_by_edges(cx, which == 2 ? a[4] : a[0], edges, which == 2 ? 1 : 2,
                                        which == 1 ? a[3] : NULL);
    return weft_ctx_status(cx);
}

/* np.histogramdd(s, bins=[e0, e1], weights) with explicit edges: a value
 * on a last edge in the last bin, a repeated edge an empty bin, NaN and
 * values outside not counted; NumPy's printed histograms. */
Test(ops_numpy_histogram, histogramdd_by_edges_is_numpys)
{
    weft_tensor *args[5] = {
        test_tensor(WEFT_F64, 2, DIMS(8, 2),
                    (const double[]){ 0.5, 1, 1.5, 2, 2, 3.5, 3, 0, NAN, 1, 2.5, 2.5, -1, 1, 1,
                                      3 }),
        test_tensor(WEFT_I64, 1, DIMS(4), (const double[]){ 0, 1, 2, 3 }),
        test_tensor(WEFT_F64, 1, DIMS(4), (const double[]){ 0, 2, 2, 3.5 }),
        test_tensor(WEFT_F32, 1, DIMS(8), (const double[]){ 1, 2, 3, 4, 5, 6, 7, 8 }),
        test_tensor(WEFT_F32, 2, DIMS(8, 1),
                    (const double[]){ 0.5, 1.5, 2, 3, NAN, 2.5, -1, 1 }),
    };
    static const double want[2][9] = { { 1, 0, 0, 0, 0, 2, 1, 0, 2 },
                                       { 1, 0, 0, 0, 0, 10, 4, 0, 9 } };
    for (int which = 0; which < 3; which++) {
        weft_tensor *r;
        op_results_everywhere(dd_edges_body, &which, args, 5, &r, 1, "dd by edges");
        if (which == 2) {   /* one dim, i64 edges [0, 1, 2, 3] for an f32 sample */
            test_assert_shape(r, WEFT_F64, 1, DIMS(3), "one dim");
            op_expect_values(r, WEFT_F64, (const double[]){ 1, 2, 3 }, 3, "one dim");
        } else {
            test_assert_shape(r, WEFT_F64, 2, DIMS(3, 3), "dd by edges");
            op_expect_values(r, WEFT_F64, want[which], 9, "dd by edges");
        }
        weft_tensor_release(r);
    }
    for (int k = 0; k < 5; k++)
        weft_tensor_release(args[k]);
}

static int dd_traced_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    weft_value *edges[2] = { a[1], a[2] };
    outs[0] = weft_histogramdd_by_edges(cx, a[0], edges, 2, NULL);
    return weft_ctx_status(cx);
}

/* Edges are values: new ones (and new sample counts) never retrace, and
 * edges that fall fail the call. */
Test(ops_numpy_histogram, histogramdd_by_edges_one_trace)
{
    const weft_spec sig[3] = { { WEFT_F64, 2, { -1, 2 } }, { WEFT_F64, 1, { 3 } },
                               { WEFT_F64, 1, { 2 } } };
    weft_function *f = op_signature_function(rt, dd_traced_body, NULL, sig, 3);
    static const double s[6] = { 0.5, 0.5, 1.5, 0.7, 1.5, 2 };
    for (int k = 0; k < 3; k++) {
        weft_tensor *ts[3] = {
            test_tensor(WEFT_F64, 2, DIMS(k ? 3 : 2, 2), s),
            test_tensor(WEFT_F64, 1, DIMS(3), k == 2 ? (const double[]){ 0, 2, 1 }
                                                     : (const double[]){ 0, 1, 2 }),
            test_tensor(WEFT_F64, 1, DIMS(2), k ? (const double[]){ 0, 2 }
                                                : (const double[]){ 0.6, 1 }) }, *y = NULL;
        weft_arg a[3] = { weft_arg_tensor(ts[0]), weft_arg_tensor(ts[1]), weft_arg_tensor(ts[2]) };
        int rc = weft_function_call(f, a, 3, &y, 1);
        if (k == 2) {
            cr_assert_eq(rc, WEFT_EINVAL);
            cr_assert(strstr(weft_errmsg(), "weft_histogramdd_by_edges: edges are empty, NaN or "
                                            "decrease"), "%s", weft_errmsg());
        } else {
            cr_assert_eq(rc, 0, "%s", weft_errmsg());
            /* k 0: (0.5, 0.5) below y's edges, (1.5, 0.7) in [1, 2] x [0.6, 1];
             * k 1: all three in y's [0, 2], x bins 0, 1, 1. */
            op_expect_values(y, WEFT_F64, k ? (const double[]){ 1, 2 } : (const double[]){ 0, 1 },
                             2, "traced");
            weft_tensor_release(y);
        }
        for (int i = 0; i < 3; i++)
            weft_tensor_release(ts[i]);
    }
    op_destroy_traced_once(&f);
}

Test(ops_numpy_histogram, histogram2d_is_numpys)
{
    weft_tensor *args[3] = {
        test_tensor(WEFT_I64, 1, DIMS(4), (const double[]){ 1, 2, 2, 5 }),
        test_tensor(WEFT_F64, 1, DIMS(4), (const double[]){ 0, 1, 1, 0.5 }),
        test_tensor(WEFT_F32, 1, DIMS(4), (const double[]){ 0.5, 1, 2, 4 }),
    }, *r[3];
    h2d_op h = { { 2, 3 }, false, true };
    op_results_everywhere(h2d_body, &h, args, 3, r, 3, "histogram2d");
    test_assert_shape(r[0], WEFT_F64, 2, DIMS(2, 3), "histogram2d");
    op_expect_values(r[0], WEFT_F64, (const double[]){ 0.5, 0, 3, 0, 4, 0 }, 6, "histogram2d");
    op_expect_values(r[1], WEFT_F64, (const double[]){ 1, 3, 5 }, 3, "histogram2d x edges");
    op_expect_values(r[2], WEFT_F64,
                  (const double[]){ 0, 0.3333333333333333, 0.6666666666666666, 1 }, 4,
                  "histogram2d y edges");
    for (int k = 0; k < 3; k++) {
        weft_tensor_release(r[k]);
        weft_tensor_release(args[k]);
    }
    weft_tensor *xy[2] = {
        test_tensor(WEFT_F64, 1, DIMS(6), (const double[]){ 1, 2, 2, 5, NAN, 0 }),
        test_tensor(WEFT_F64, 1, DIMS(6), (const double[]){ 0, 1, 1, 0.5, 0, 3 }),
    };
    h = (h2d_op){ { 2, 2 }, true, false };
    op_results_everywhere(h2d_body, &h, xy, 2, r, 3, "histogram2d range");
    op_expect_values(r[0], WEFT_F64, (const double[]){ 1, 0, 0, 2 }, 4, "histogram2d range");
    op_expect_values(r[1], WEFT_F64, (const double[]){ 0, 2, 4 }, 3, "histogram2d range x");
    op_expect_values(r[2], WEFT_F64, (const double[]){ 0, 0.5, 1 }, 3, "histogram2d range y");
    for (int k = 0; k < 3; k++)
        weft_tensor_release(r[k]);
    weft_tensor_release(xy[0]);
    weft_tensor_release(xy[1]);
}

/* The sample count and the number of edges are unknown while tracing:
 * one trace each; edges that decrease or hold a NaN (NumPy lets one
 * through) fail the call when it runs. */
Test(ops_numpy_histogram, one_trace_and_bad_edges)
{
    const weft_spec sig[2] = { { WEFT_F64, 1, { WEFT_DIM_ANY } },
                               { WEFT_F64, 1, { WEFT_DIM_ANY } } };
    bool weighted = false;
    weft_function *f = op_signature_function(rt, by_edges_body, &weighted, sig, 2);
    static const double v[6] = { 0, 1, 1.5, 2, 3, 3 };
    struct {
        int64_t na, ne;
        double edges[4];
        int rc;
        double want[3];
    } calls[4] = { { 6, 3, { 0, 2, 3 }, 0, { 3, 3 } },
                   { 2, 4, { 0, 0.5, 1, 2 }, 0, { 1, 0, 1 } },
                   { 3, 3, { 0, 2, 1 }, WEFT_EINVAL, { 0 } },
                   { 3, 1, { NAN }, WEFT_EINVAL, { 0 } } };
    for (int k = 0; k < 4; k++) {
        weft_tensor *a = test_tensor(WEFT_F64, 1, &calls[k].na, v);
        weft_tensor *e = test_tensor(WEFT_F64, 1, &calls[k].ne, calls[k].edges), *r = NULL;
        weft_arg args[2] = { weft_arg_tensor(a), weft_arg_tensor(e) };
        cr_assert_eq(weft_function_call(f, args, 2, &r, 1), calls[k].rc, "call %d: %s", k,
                     weft_errmsg());
        if (calls[k].rc == 0) {
            op_expect_values(r, WEFT_I64, calls[k].want, calls[k].ne - 1, "traced by edges");
            weft_tensor_release(r);
        } else {
            cr_assert(strstr(weft_errmsg(), "edges are empty, NaN or decrease"), "%s",
                      weft_errmsg());
        }
        weft_tensor_release(a);
        weft_tensor_release(e);
    }
    op_destroy_traced_once(&f);
    /* Weights of another size fail the call, eagerly as it is made. */
    weft_tensor *a = test_tensor(WEFT_F64, 1, DIMS(3), v);
    weft_tensor *w = test_tensor(WEFT_F64, 1, DIMS(2), v);
    weft_tensor *e = test_tensor(WEFT_F64, 1, DIMS(2), (const double[]){ 0, 5 }), *r = NULL;
    weft_tensor *awe[3] = { a, e, w };
    weighted = true;
    for (int eager = 0; eager < 2; eager++) {
        cr_assert_eq(op_call(rt, by_edges_body, &weighted, awe, 3, &r, 1, eager), WEFT_EINVAL,
                     "%s", weft_errmsg());
        cr_assert(strstr(weft_errmsg(), "weights and a differ in size"), "%s", weft_errmsg());
        cr_assert_null(r);
    }
    /* histogram2d's weights alike. */
    h2d_op h = { { 2, 2 }, false, true };
    weft_tensor *xyw[3] = { a, a, w };
    weft_tensor *h2[3] = { NULL, NULL, NULL };
    for (int eager = 0; eager < 2; eager++) {
        cr_assert_eq(op_call(rt, h2d_body, &h, xyw, 3, h2, 3, eager), WEFT_EINVAL, "%s",
                     weft_errmsg());
        cr_assert(strstr(weft_errmsg(), "weights and sample differ in length"), "%s",
                  weft_errmsg());
    }
    weft_tensor_release(a);
    weft_tensor_release(w);
    weft_tensor_release(e);
    const weft_spec dd_sig = { WEFT_F32, 2, { WEFT_DIM_ANY, 2 } };
    static int histogram_only;
    weft_function *g = op_signature_function(rt, dd_body, &histogram_only, &dd_sig, 1);
    for (int64_t n = 4; n > 0; n -= 3) {
        weft_tensor *s = test_tensor(WEFT_F32, 2, (const int64_t[]){ n, 2 },
                                     (const double[]){ 0.1, 2, 0.7, -1, 0.3, 0.5, 0.25, 3 });
        weft_arg arg = weft_arg_tensor(s);
        weft_tensor *r = NULL;
        cr_assert_eq(weft_function_call(g, &arg, 1, &r, 1), 0, "%s", weft_errmsg());
        /* One sample: its range widened by 1/2, the sample in the middle
         * bins (NumPy: [[0, 0], [0, 1], [0, 0]]). */
        op_expect_values(r, WEFT_F64, n == 4 ? (const double[]){ 0, 2, 1, 0, 1, 0 }
                                          : (const double[]){ 0, 0, 0, 1, 0, 0 }, 6,
                      "traced histogramdd");
        weft_tensor_release(r);
        weft_tensor_release(s);
    }
    op_destroy_traced_once(&g);
}

static int refused_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    static const int64_t bad_bins[2] = { 0, 2 }, bins[2] = { 2, 2 };
    static const double bad_range[2][2] = { { 1, 0 }, { 0, 1 } };
    weft_value *o[3];
    int rc = 0;
    switch (*(const int *)user) {
    case 0: outs[0] = weft_histogram_by_edges(cx, a[0], a[1], NULL); break;
    case 1: outs[0] = weft_histogram_by_edges(cx, a[2], a[0], NULL); break;
    case 2: rc = weft_histogramdd(cx, a[0], bins, NULL, NULL, o); break;
    case 3: rc = weft_histogramdd(cx, a[1], bad_bins, NULL, NULL, o); break;
    case 4: rc = weft_histogramdd(cx, a[1], bins, bad_range, NULL, o); break;
    case 6: outs[0] = weft_histogram_density(cx, a[0], a[0]); break;
    case 7: outs[0] = weft_histogram_density(cx, a[2], a[0]); break;
    case 8: outs[0] = weft_histogramdd_by_edges(cx, a[1], &a[0], 1, NULL); break;
    case 9: outs[0] = weft_histogramdd_by_edges(cx, a[1], NULL, 2, NULL); break;
    case 10: outs[0] = weft_histogramdd_by_edges(cx, a[1], (weft_value *[]){ a[0], a[1] }, 2,
                                                 NULL); break;
    case 11: outs[0] = weft_histogramdd_by_edges(cx, a[1], (weft_value *[]){ a[0], a[2] }, 2,
                                                 NULL); break;
    case 12: {
        weft_value *none = weft_slice(cx, a[0], (const int64_t[]){ 0 }, (const int64_t[]){ 0 },
                                      NULL);
        outs[0] = weft_histogramdd_by_edges(cx, a[1], (weft_value *[]){ a[0], none }, 2, NULL);
        break;
    }
    default: rc = weft_histogram2d(cx, a[1], a[0], bins, NULL, NULL, o); break;
    }
    cr_assert(rc <= 0);
    return weft_ctx_status(cx);
}

Test(ops_numpy_histogram, refusals)
{
    weft_tensor *args[3] = {
        test_tensor(WEFT_F64, 1, DIMS(2), (const double[]){ 1, 2 }),
        test_tensor(WEFT_F64, 2, DIMS(2, 2), (const double[]){ 1, 2, 3, 4 }),
        test_tensor(WEFT_BOOL, 1, DIMS(2), (const double[]){ 1, 0 }),
    };
    const op_error_case cases[] = {
        { 0, WEFT_ESHAPE, "weft_histogram_by_edges: edges f64[2,2] is not a vector" },
        { 1, WEFT_EDTYPE, "weft_histogram_by_edges: a bool[2] is not a number" },
        { 2, WEFT_ESHAPE, "weft_histogramdd: sample f64[2] is not [N, D]" },
        { 3, WEFT_EINVAL, "weft_histogramdd: bins[0] 0 is not in [1, 2^31)" },
        { 4, WEFT_EINVAL, "weft_histogramdd: range[0] [1, 0] is not finite with min <= max" },
        { 5, WEFT_ESHAPE, "weft_histogram2d: x f64[2,2] is not a vector" },
        { 6, WEFT_ESHAPE, "weft_histogram_density: hist f64[2] and edges f64[2] are not vectors, "
                          "edges one longer" },
        { 7, WEFT_EDTYPE, "weft_histogram_density: hist bool[2] is not a number" },
        { 8, WEFT_ESHAPE, "weft_histogramdd_by_edges: sample f64[2,2] is not [N, D] with D in "
                          "[1, 8] known while tracing and one edges vector per column (1 given)" },
        { 9, WEFT_EINVAL, "weft_histogramdd_by_edges: edges is NULL" },
        { 10, WEFT_ESHAPE, "weft_histogramdd_by_edges: edges[1] f64[2,2] is not a vector of 1 or "
                           "more known while tracing" },
        { 11, WEFT_EDTYPE, "weft_histogramdd_by_edges: edges bool[2] is not a number" },
        { 12, WEFT_ESHAPE, "weft_histogramdd_by_edges: edges[1] f64[0] is not a vector of 1 or "
                           "more known while tracing" },
    };
    op_expect_errors(rt, refused_body, cases, 13, args, 3);
    for (int k = 0; k < 3; k++)
        weft_tensor_release(args[k]);
}
