/* approx_max_k and approx_min_k: values and i32 indices along every axis
 * against a selection written here (ties to the lower index, -0.0 equal
 * to 0.0, NaN the largest), for k on both sides of the small-k path and
 * k of 0 and of the whole dim, f32 and f64, the same bits eagerly and
 * traced on 1, 2 and 4 workers; gradients against central differences;
 * one trace for any leading dim; the refused calls. */
#include <math.h>

#include "grad_check.h"
#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_approx_k, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 120);

typedef struct approx_case {
    bool largest;
    int64_t k;
    int axis;
} approx_case;

static int approx_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const approx_case *c = user;
    return (c->largest ? weft_approx_max_k : weft_approx_min_k)(cx, a[0], c->k, c->axis, 0.95,
                                                                 outs);
}

/* Whether element (v, i) goes before (w, j) in the result's order. */
static bool goes_before(bool largest, double v, int64_t i, double w, int64_t j)
{
    if (isnan(v) || isnan(w)) {
        if (isnan(v) && isnan(w))
            return i < j;
        return largest ? isnan(v) : isnan(w);
    }
    if (v != w)
        return largest ? v > w : v < w;
    return i < j;
}

enum { A0 = 3, A1 = 40, A2 = 5, AN = A0 * A1 * A2 };

/* The k picked along axis of x [A0, A1, A2], checked element by element. */
static void expect_picks(const approx_case *c, weft_dtype dt, const double *x, const char *what)
{
    const int64_t dims[3] = { A0, A1, A2 };
    int axis = c->axis < 0 ? c->axis + 3 : c->axis;
    weft_tensor *arg = test_tensor(dt, 3, dims, x), *outs[2];
    op_results_everywhere(approx_body, (void *)c, &arg, 1, outs, 2, what);
    int64_t od[3] = { A0, A1, A2 };
    od[axis] = c->k;
    test_assert_shape(outs[0], dt, 3, od, what);
    test_assert_shape(outs[1], WEFT_I32, 3, od, what);
    int64_t stride[3] = { A1 * A2, A2, 1 }, n = dims[axis];
    for (int64_t lane = 0; lane < AN / n; lane++) {
        /* The lane's first element: the other two coordinates from lane. */
        int64_t base = 0, rest = lane;
        for (int d = 2; d >= 0; d--) {
            if (d == axis)
                continue;
            base += rest % dims[d] * stride[d];
            rest /= dims[d];
        }
        bool taken[A1] = { false };
        for (int64_t r = 0; r < c->k; r++) {
            int64_t best = -1;
            for (int64_t i = 0; i < n; i++) {
                double v = (float)x[base + i * stride[axis]];
                if (dt == WEFT_F64)
                    v = x[base + i * stride[axis]];
                double bv = best < 0 ? 0 : (dt == WEFT_F64 ? x[base + best * stride[axis]]
                                                           : (float)x[base + best * stride[axis]]);
                if (!taken[i] && (best < 0 || goes_before(c->largest, v, i, bv, best)))
                    best = i;
            }
            taken[best] = true;
            /* The result's element r along axis in this lane. */
            int64_t at = 0, q = lane, ostride[3] = { od[1] * od[2], od[2], 1 };
            for (int d = 2; d >= 0; d--) {
                if (d == axis)
                    continue;
                at += q % od[d] * ostride[d];
                q /= od[d];
            }
            at += r * ostride[axis];
            double want = x[base + best * stride[axis]];
            if (dt == WEFT_F32)
                want = (float)want;
            double got = test_element(outs[0], at);
            cr_assert(test_element(outs[1], at) == (double)best, "%s: lane %lld pick %lld is "
                      "index %g, not %lld", what, (long long)lane, (long long)r,
                      test_element(outs[1], at), (long long)best);
            cr_assert((got == want && signbit(got) == signbit(want)) ||
                      (isnan(got) && isnan(want)), "%s: value %g, not %g", what, got, want);
        }
    }
    weft_tensor_release(outs[0]);
    weft_tensor_release(outs[1]);
    weft_tensor_release(arg);
}

Test(ops_approx_k, picks_against_a_selection)
{
    double x[AN];
    uint64_t s = 4242;
    for (int i = 0; i < AN; i++) {
        x[i] = round(op_uniform(&s) * 20) / 4;   /* many ties */
        if (i % 37 == 5)
            x[i] = NAN;
        else if (i % 41 == 7)
            x[i] = i % 2 ? INFINITY : -INFINITY;
        else if (x[i] == 0 && i % 2)
            x[i] = -0.0;
    }
    const int64_t ks[] = { 0, 1, 3, 16, 17, 40 };
    const int axes[] = { 0, 1, 2, -2 };
    for (int dir = 0; dir < 2; dir++)
        for (int a = 0; a < 4; a++)
            for (int q = 0; q < 6; q++)
                for (int d = 0; d < 2; d++) {
                    int axis = axes[a] < 0 ? axes[a] + 3 : axes[a];
                    const int64_t dims[3] = { A0, A1, A2 };
                    if (ks[q] > dims[axis])
                        continue;
                    approx_case c = { dir, ks[q], axes[a] };
                    char what[64];
                    snprintf(what, sizeof what, "%s k %lld axis %d %s",
                             dir ? "max" : "min", (long long)ks[q], axes[a], d ? "f64" : "f32");
                    expect_picks(&c, d ? WEFT_F64 : WEFT_F32, x, what);
                }
}

/* Gradients of sum(values^2): 2 v at each picked element, 0 elsewhere. */
static int squared_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    weft_value *o[2];
    if (approx_body(cx, a, o, user) < 0)
        return weft_ctx_status(cx);
    outs[0] = weft_square(cx, o[0]);
    return weft_ctx_status(cx);
}

Test(ops_approx_k, gradients)
{
    double x[36];
    uint64_t s = 31;
    for (int i = 0; i < 36; i++)
        x[i] = op_uniform(&s);
    grad_arg arg = { 3, { 2, 6, 3 }, x };
    for (int dir = 0; dir < 2; dir++)
        for (int axis = 0; axis < 3; axis++) {
            approx_case c = { dir, 2, axis };
            grad_case g = { squared_body, &c, 1, 1 };
            expect_gradients(&g, &arg, dir ? "max" : "min");
        }
}

/* Leading dims unknown while tracing: one trace for every size. */
Test(ops_approx_k, one_trace_for_any_batch)
{
    approx_case c = { false, 2, -1 };
    const weft_spec sig = { .dtype = WEFT_F32, .rank = 2, .dims = { -1, 4 } };
    weft_function_desc d = { .name = "op", .body = approx_body, .user = &c, .n_args = 1,
                             .n_outs = 2, .input_signature = &sig };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
    for (int64_t rows = 1; rows <= 4; rows++) {
        double x[16];
        for (int i = 0; i < 16; i++)
            x[i] = (double)((i * 7) % 5);
        weft_tensor *t = test_tensor(WEFT_F32, 2, (const int64_t[]){ rows, 4 }, x), *o[2];
        weft_arg a = weft_arg_tensor(t);
        cr_assert_eq(weft_function_call(f, &a, 1, o, 2), 0, "%s", weft_errmsg());
        for (int64_t r = 0; r < rows; r++) {
            const double *row = x + 4 * r;
            int64_t lo = 0;
            for (int64_t i = 1; i < 4; i++)
                if (row[i] < row[lo])
                    lo = i;
            cr_assert_eq(test_element(o[1], 2 * r), (double)lo, "row %lld", (long long)r);
            cr_assert_eq(test_element(o[0], 2 * r), row[lo]);
        }
        weft_tensor_release(o[0]);
        weft_tensor_release(o[1]);
        weft_tensor_release(t);
    }
    op_destroy_traced_once(&f);
}

/* The refused calls, eagerly and traced. */
static int refused_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    int which = *(const int *)user;
    weft_value *x = a[0], *o[2];
    int64_t k = 2;
    int axis = 1;
    double recall = 0.9;
    switch (which) {
    case 0: x = weft_cast(cx, x, WEFT_I32); break;
    case 1: axis = 3; break;
    case 2: axis = -4; break;
    case 3: recall = 0; break;
    case 4: recall = 1.5; break;
    case 5: recall = NAN; break;
    case 6: k = -1; break;
    case 7: k = 6; break;   /* more than the dim of 5 */
    case 8: return weft_approx_max_k(cx, x, k, axis, recall, NULL);
    case 9: x = weft_reduce(cx, WEFT_R_SUM, x, NULL, 0, false); break;
    }
    int rc = weft_approx_min_k(cx, x, k, axis, recall, o);
    if (rc == 0)
        outs[0] = o[0];
    return rc;
}

Test(ops_approx_k, refused_calls)
{
    const op_error_case cases[] = {
        { 0, WEFT_EDTYPE, "weft_approx_min_k: i32[1,5,1] is not f32 or f64" },
        { 1, WEFT_EINVAL, "weft_approx_min_k: reduction_dimension 3 is outside a rank of 3" },
        { 2, WEFT_EINVAL, "reduction_dimension -4 is outside a rank of 3" },
        { 3, WEFT_EINVAL, "weft_approx_min_k: recall_target 0 is not in (0, 1]" },
        { 4, WEFT_EINVAL, "recall_target 1.5 is not in (0, 1]" },
        { 5, WEFT_EINVAL, "recall_target nan is not in (0, 1]" },
        { 6, WEFT_EINVAL, "k (-1) is negative or more than the reduction dim of f32[1,5,1]" },
        { 7, WEFT_EINVAL, "k (6) is negative or more than the reduction dim of f32[1,5,1]" },
        { 8, WEFT_EINVAL, "weft_approx_max_k: outs is NULL" },
        { 9, WEFT_ESHAPE, "weft_approx_min_k: f32[] has not a rank of 1 or more" },
    };
    double x[5] = { 0 };
    weft_tensor *arg = test_tensor(WEFT_F32, 3, (const int64_t[]){ 1, 5, 1 }, x);
    op_expect_errors(rt, refused_body, cases, sizeof cases / sizeof *cases, &arg, 1);
    weft_tensor_release(arg);
}

/* A dim unknown while tracing: k above it fails when the function runs. */
Test(ops_approx_k, k_above_an_unknown_dim_fails_when_run)
{
    approx_case c = { true, 3, 0 };
    const weft_spec sig = { .dtype = WEFT_F64, .rank = 1, .dims = { -1 } };
    weft_function_desc d = { .name = "op", .body = approx_body, .user = &c, .n_args = 1,
                             .n_outs = 2, .input_signature = &sig };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
    double x[2] = { 1, 2 };
    weft_tensor *t = test_tensor(WEFT_F64, 1, (const int64_t[]){ 2 }, x), *o[2] = { NULL, NULL };
    weft_arg a = weft_arg_tensor(t);
    cr_assert_eq(weft_function_call(f, &a, 1, o, 2), WEFT_EINVAL);
    cr_assert(strstr(weft_errmsg(), "k (3) is larger than the last dim"), "%s", weft_errmsg());
    cr_assert_null(o[0]);
    weft_tensor_release(t);
    weft_function_destroy(&f);
}

/* The largest and the smallest of one value in one function stay two
 * selections (the compiler's common subexpressions tell them apart). */
static int both_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    weft_value *hi[2], *lo[2];
    if (weft_approx_max_k(cx, a[0], 2, -1, 1, hi) < 0 ||
        weft_approx_min_k(cx, a[0], 2, -1, 1, lo) < 0)
        return weft_ctx_status(cx);
    outs[0] = hi[1];
    outs[1] = lo[1];
    return weft_ctx_status(cx);
}

Test(ops_approx_k, largest_and_smallest_together)
{
    const double x[6] = { 3, 1, 4, 1, 5, 9 };
    weft_tensor *arg = test_tensor(WEFT_F32, 1, (const int64_t[]){ 6 }, x), *outs[2];
    op_results_everywhere(both_body, NULL, &arg, 1, outs, 2, "both");
    const double hi[2] = { 5, 4 }, lo[2] = { 1, 3 };
    for (int i = 0; i < 2; i++) {
        cr_assert_eq(test_element(outs[0], i), hi[i]);
        cr_assert_eq(test_element(outs[1], i), lo[i]);
    }
    weft_tensor_release(outs[0]);
    weft_tensor_release(outs[1]);
    weft_tensor_release(arg);
}
