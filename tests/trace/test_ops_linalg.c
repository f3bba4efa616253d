/* The matrix helpers, norms and small math ops (band_part, matrix_diag,
 * matrix_diag_part, matrix_transpose, tensor_diag, tensor_diag_part,
 * trace, norm, clip_by_norm, normalize, divide_no_nan, squared_difference,
 * reciprocal, reciprocal_no_nan, xlogy) against references computed here,
 * eagerly and traced (the two bit for bit equal), and their errors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static weft_runtime *rt;
static void setup(void) { rt = test_runtime(2); }
static void teardown(void) { weft_runtime_destroy(&rt); }

TestSuite(ops_linalg, .init = setup, .fini = teardown, .timeout = 60);

#define DIMS(...) ((const int64_t[]){ __VA_ARGS__ })

typedef enum la_op {
    BAND, DIAG, DIAG_PART, TRACE, NORM, CLIP, DIV_NO_NAN, SQ_DIFF, RECIP, XLOGY, NORMALIZED,
    NORMALIZE_NORM, TENSOR_DIAG, TENSOR_DIAG_PART, RECIP_NO_NAN, MATRIX_T
} la_op;

typedef struct la_case {
    la_op op;
    int64_t lo, hi;          /* BAND */
    int axis;                /* NORM, CLIP: -99 for every axis */
    bool keepdims;
    double clip;
    size_t n_args;
} la_case;

static int body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const la_case *c = user;
    const int *axes = c->axis == -99 ? NULL : &c->axis;
    size_t n_axes = c->axis == -99 ? 0 : 1;
    switch (c->op) {
    case BAND: outs[0] = weft_band_part(cx, a[0], c->lo, c->hi); break;
    case DIAG: outs[0] = weft_matrix_diag(cx, a[0]); break;
    case DIAG_PART: outs[0] = weft_matrix_diag_part(cx, a[0]); break;
    case TRACE: outs[0] = weft_trace(cx, a[0]); break;
    case NORM: outs[0] = weft_norm(cx, a[0], axes, n_axes, c->keepdims); break;
    case CLIP: outs[0] = weft_clip_by_norm(cx, a[0], c->clip, axes, n_axes); break;
    case DIV_NO_NAN: outs[0] = weft_divide_no_nan(cx, a[0], a[1]); break;
    case SQ_DIFF: outs[0] = weft_squared_difference(cx, a[0], a[1]); break;
    case RECIP: outs[0] = weft_reciprocal(cx, a[0]); break;
    case XLOGY: outs[0] = weft_xlogy(cx, a[0], a[1]); break;
    case TENSOR_DIAG: outs[0] = weft_tensor_diag(cx, a[0]); break;
    case TENSOR_DIAG_PART: outs[0] = weft_tensor_diag_part(cx, a[0]); break;
    case RECIP_NO_NAN: outs[0] = weft_reciprocal_no_nan(cx, a[0]); break;
    case MATRIX_T: outs[0] = weft_matrix_transpose(cx, a[0]); break;
    case NORMALIZED:
    case NORMALIZE_NORM: {
        weft_value *both[2];
        if (weft_normalize(cx, a[0], axes, n_axes, both) == 0)
            outs[0] = both[c->op == NORMALIZED ? 0 : 1];
        break;
    }
    }
    return weft_ctx_status(cx);
}

static int call(const la_case *c, weft_tensor *const *args, bool eager, weft_tensor **out)
{
    weft_function_desc d = { .name = "la", .body = body, .user = (void *)c,
                             .n_args = (uint32_t)c->n_args, .n_outs = 1,
                             .flags = eager ? WEFT_RUN_EAGERLY : 0 };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
    weft_arg a[2];
    for (size_t i = 0; i < c->n_args; i++)
        a[i] = weft_arg_tensor(args[i]);
    *out = NULL;
    int rc = weft_function_call(f, a, c->n_args, out, 1);
    weft_function_destroy(&f);
    return rc;
}

/* c on args eagerly and traced: shape dims[0..rank), values within tol
 * (relative to max(1, |want|); NaN where want is NaN), both modes equal. */
static void check(const la_case *c, weft_tensor *const *args, int rank, const int64_t *dims,
                  const double *want, double tol, const char *what)
{
    weft_tensor *y[2];
    for (int eager = 0; eager < 2; eager++) {
        cr_assert_eq(call(c, args, eager, &y[eager]), 0, "%s: %s", what, weft_errmsg());
        cr_assert_eq(weft_tensor_rank(y[eager]), rank, "%s: rank %d", what,
                     weft_tensor_rank(y[eager]));
        for (int d = 0; d < rank; d++)
            cr_assert_eq(weft_tensor_dims(y[eager])[d], dims[d], "%s: dim %d", what, d);
        int64_t n = test_numel(rank, dims);
        for (int64_t i = 0; i < n; i++) {
            double g = test_element(y[eager], i);
            if (isnan(want[i]))
                cr_assert(isnan(g), "%s: element %lld is %g, not NaN", what, (long long)i, g);
            else
                cr_assert(g == want[i] || fabs(g - want[i]) <= tol * fmax(1, fabs(want[i])),
                          "%s: element %lld is %.17g, not %.17g", what, (long long)i, g, want[i]);
        }
    }
    size_t bytes = (size_t)test_numel(rank, dims) * weft_dtype_size(weft_tensor_dtype(y[0]));
    cr_assert(memcmp(weft_tensor_data(y[0]), weft_tensor_data(y[1]), bytes) == 0,
              "%s: eager and traced differ", what);
    weft_tensor_release(y[0]);
    weft_tensor_release(y[1]);
}

static double *iota_values(int64_t n)
{
    double *v = malloc(sizeof(double) * (size_t)n);
    cr_assert_not_null(v);
    for (int64_t i = 0; i < n; i++)
        v[i] = (double)(i + 1);
    return v;
}

/* ---- Matrices ----------------------------------------------------------- */

Test(ops_linalg, band_part_keeps_the_band)
{
    double *x = iota_values(2 * 3 * 4);
    weft_tensor *t = test_tensor(WEFT_I32, 3, DIMS(2, 3, 4), x);
    const int64_t bands[][2] = { { 0, 0 }, { 1, 0 }, { -1, 0 }, { 0, -1 }, { 1, 2 }, { -1, -1 } };
    for (size_t b = 0; b < sizeof bands / sizeof bands[0]; b++) {
        int64_t lo = bands[b][0], hi = bands[b][1];
        double want[24];
        for (int i = 0; i < 24; i++) {
            int64_t r = (i / 4) % 3, col = i % 4;
            bool in = (lo < 0 || r - col <= lo) && (hi < 0 || col - r <= hi);
            want[i] = in ? x[i] : 0;
        }
        la_case c = { .op = BAND, .lo = lo, .hi = hi, .n_args = 1 };
        check(&c, &t, 3, DIMS(2, 3, 4), want, 0, "band_part");
    }
    weft_tensor_release(t);
    free(x);
}

Test(ops_linalg, diag_and_diag_part_and_trace)
{
    double v[6] = { 1, -2, 3, 4, 5, -6 };
    weft_tensor *tv = test_tensor(WEFT_F64, 2, DIMS(2, 3), v);
    double want[18] = { 0 };
    for (int b = 0; b < 2; b++)
        for (int i = 0; i < 3; i++)
            want[b * 9 + i * 4] = v[b * 3 + i];
    la_case d = { .op = DIAG, .n_args = 1 };
    check(&d, &tv, 3, DIMS(2, 3, 3), want, 0, "matrix_diag");
    weft_tensor_release(tv);
    /* Wide and tall matrices: the diagonal has min(m, n) elements. */
    double *x = iota_values(2 * 3 * 5);
    for (int tall = 0; tall < 2; tall++) {
        int64_t m = tall ? 5 : 3, n = tall ? 3 : 5;
        weft_tensor *t = test_tensor(WEFT_I64, 3, DIMS(2, m, n), x);
        double dp[6], tr[2] = { 0, 0 };
        for (int b = 0; b < 2; b++)
            for (int i = 0; i < 3; i++) {
                dp[b * 3 + i] = x[b * m * n + i * n + i];
                tr[b] += dp[b * 3 + i];
            }
        la_case p = { .op = DIAG_PART, .n_args = 1 }, tc = { .op = TRACE, .n_args = 1 };
        check(&p, &t, 2, DIMS(2, 3), dp, 0, "matrix_diag_part");
        check(&tc, &t, 1, DIMS(2), tr, 0, "trace");
        weft_tensor_release(t);
    }
    free(x);
}

/* tensor_diag of [2, 3] is [2, 3, 2, 3], element (i, j, i, j) = v[i, j];
 * tensor_diag_part takes it back, and picks the diagonal of any tensor. */
Test(ops_linalg, tensor_diag_its_part_and_matrix_transpose)
{
    double v[6] = { 1, -2, 3, 4, 5, -6 };
    for (int k = 0; k < 2; k++) {
        weft_dtype dt = k ? WEFT_I32 : WEFT_F64;
        weft_tensor *tv = test_tensor(dt, 2, DIMS(2, 3), v);
        double want[36] = { 0 };
        for (int i = 0; i < 6; i++)
            want[i * 6 + i] = v[i];
        la_case d = { .op = TENSOR_DIAG, .n_args = 1 };
        check(&d, &tv, 4, DIMS(2, 3, 2, 3), want, 0, "tensor_diag");
        weft_tensor *tw = test_tensor(dt, 4, DIMS(2, 3, 2, 3), want);
        la_case p = { .op = TENSOR_DIAG_PART, .n_args = 1 };
        check(&p, &tw, 2, DIMS(2, 3), v, 0, "tensor_diag_part");
        weft_tensor_release(tv);
        weft_tensor_release(tw);
    }
    /* matrix_transpose of [2, 3, 4]: [2, 4, 3], (b, j, i) = (b, i, j). */
    double *y = iota_values(24), yt[24];
    for (int b = 0; b < 2; b++)
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 4; j++)
                yt[b * 12 + j * 3 + i] = y[b * 12 + i * 4 + j];
    weft_tensor *ty = test_tensor(WEFT_I32, 3, DIMS(2, 3, 4), y);
    la_case mt = { .op = MATRIX_T, .n_args = 1 };
    check(&mt, &ty, 3, DIMS(2, 4, 3), yt, 0, "matrix_transpose");
    weft_tensor_release(ty);
    free(y);
    /* Off the diagonal nothing is read: the part of 1..36 as [6, 6]. */
    double *x = iota_values(36);
    weft_tensor *t = test_tensor(WEFT_I64, 2, DIMS(6, 6), x);
    la_case p = { .op = TENSOR_DIAG_PART, .n_args = 1 };
    check(&p, &t, 1, DIMS(6), (const double[]){ 1, 8, 15, 22, 29, 36 }, 0, "diag of 1..36");
    weft_tensor_release(t);
    free(x);
}

/* ---- Norms -------------------------------------------------------------- */

Test(ops_linalg, norm_and_clip_by_norm)
{
    double x[6] = { 3, 4, 0, 1, 2, 2 };
    weft_tensor *t = test_tensor(WEFT_F64, 2, DIMS(2, 3), x);
    la_case all = { .op = NORM, .axis = -99, .n_args = 1 };
    check(&all, &t, 0, NULL, (const double[]){ sqrt(34.0) }, 1e-15, "norm");
    la_case rows = { .op = NORM, .axis = 1, .keepdims = true, .n_args = 1 };
    check(&rows, &t, 2, DIMS(2, 1), (const double[]){ 5, 3 }, 1e-15, "norm of rows");
    /* Rows of norm 5 and 3 clipped to 4: the first scaled by 4/5, the
     * second kept. */
    la_case clip = { .op = CLIP, .axis = 1, .clip = 4, .n_args = 1 };
    double want[6] = { 3 * 4.0 / 5, 4 * 4.0 / 5, 0, 1, 2, 2 };
    check(&clip, &t, 2, DIMS(2, 3), want, 1e-15, "clip_by_norm");
    /* normalize: each row over its norm, the norms kept as [2, 1]. */
    la_case unit = { .op = NORMALIZED, .axis = 1, .n_args = 1 };
    check(&unit, &t, 2, DIMS(2, 3), (const double[]){ 0.6, 0.8, 0, 1.0 / 3, 2.0 / 3, 2.0 / 3 },
          1e-15, "normalize");
    la_case norms = { .op = NORMALIZE_NORM, .axis = 1, .n_args = 1 };
    check(&norms, &t, 2, DIMS(2, 1), (const double[]){ 5, 3 }, 1e-15, "normalize's norm");
    norms.axis = -99;
    check(&norms, &t, 2, DIMS(1, 1), (const double[]){ sqrt(34.0) }, 1e-15, "every axis");
    weft_tensor_release(t);
}

/* ---- Elementwise -------------------------------------------------------- */

Test(ops_linalg, small_math_ops)
{
    double x[5] = { 1, 0, -3, 0, 2 }, y[5] = { 2, 0, 0, NAN, 8 };
    for (int dt = 0; dt < 2; dt++) {
        weft_dtype t = dt ? WEFT_F64 : WEFT_F32;
        double tol = dt ? 1e-15 : 1e-6;
        weft_tensor *args[2] = { test_tensor(t, 1, DIMS(5), x), test_tensor(t, 1, DIMS(5), y) };
        la_case dnn = { .op = DIV_NO_NAN, .n_args = 2 };
        check(&dnn, args, 1, DIMS(5), (const double[]){ 0.5, 0, 0, NAN, 0.25 }, tol,
              "divide_no_nan");
        la_case sq = { .op = SQ_DIFF, .n_args = 2 };
        check(&sq, args, 1, DIMS(5), (const double[]){ 1, 0, 9, NAN, 36 }, tol,
              "squared_difference");
        la_case xl = { .op = XLOGY, .n_args = 2 };
        check(&xl, args, 1, DIMS(5), (const double[]){ log(2.0), 0, INFINITY, 0, 2 * log(8.0) },
              tol, "xlogy");
        weft_tensor_release(args[0]);
        weft_tensor_release(args[1]);
    }
    double iv[3] = { 2, 4, -8 };
    weft_tensor *i = test_tensor(WEFT_I32, 1, DIMS(3), iv);
    la_case r = { .op = RECIP, .n_args = 1 };
    check(&r, &i, 1, DIMS(3), (const double[]){ 0.5, 0.25, -0.125 }, 0, "reciprocal");
    weft_tensor_release(i);
    double rv[6] = { 2, 0, -4, INFINITY, NAN, -0.0 };
    for (int dt = 0; dt < 2; dt++) {
        weft_tensor *f = test_tensor(dt ? WEFT_F64 : WEFT_F32, 1, DIMS(6), rv);
        la_case rn = { .op = RECIP_NO_NAN, .n_args = 1 };
        check(&rn, &f, 1, DIMS(6), (const double[]){ 0.5, 0, -0.25, 0, NAN, 0 }, 0,
              "reciprocal_no_nan");
        weft_tensor_release(f);
    }
}

/* ---- Errors ------------------------------------------------------------- */

Test(ops_linalg, errors_name_the_op)
{
    const struct {
        la_case c;
        weft_dtype t;
        int rank;
        int64_t dims[2];
        int rc;
        const char *says;
    } cases[] = {
        { { .op = BAND, .n_args = 1 }, WEFT_F32, 1, { 4 }, WEFT_ESHAPE,
          "weft_band_part: f32[4] is not a matrix" },
        { { .op = DIAG, .n_args = 1 }, WEFT_F32, 0, { 0 }, WEFT_ESHAPE,
          "weft_matrix_diag: f32[] has no last dim" },
        { { .op = NORM, .axis = -99, .n_args = 1 }, WEFT_I32, 1, { 4 }, WEFT_EDTYPE,
          "weft_norm: a i32[4] is not f32 or f64" },
        { { .op = CLIP, .axis = -99, .clip = 0, .n_args = 1 }, WEFT_F32, 1, { 4 }, WEFT_EINVAL,
          "weft_clip_by_norm: clip_norm 0 is not finite and > 0" },
        { { .op = DIV_NO_NAN, .n_args = 2 }, WEFT_I64, 1, { 4 }, WEFT_EDTYPE,
          "weft_divide_no_nan: x i64[4] is not f32 or f64" },
        { { .op = RECIP_NO_NAN, .n_args = 1 }, WEFT_I32, 1, { 4 }, WEFT_EDTYPE,
          "weft_reciprocal_no_nan: x i32[4] is not f32 or f64" },
        { { .op = MATRIX_T, .n_args = 1 }, WEFT_F32, 1, { 4 }, WEFT_ESHAPE,
          "weft_matrix_transpose: f32[4] is not a matrix" },
        { { .op = TENSOR_DIAG, .n_args = 1 }, WEFT_F32, 0, { 0 }, WEFT_ESHAPE,
          "weft_tensor_diag: the diagonal f32[] must have a rank of 1 to 4" },
        { { .op = TENSOR_DIAG_PART, .n_args = 1 }, WEFT_F32, 1, { 4 }, WEFT_ESHAPE,
          "weft_tensor_diag_part: f32[4] must have an even rank" },
        { { .op = TENSOR_DIAG_PART, .n_args = 1 }, WEFT_F32, 2, { 2, 3 }, WEFT_ESHAPE,
          "weft_tensor_diag_part: f32[2,3]: dim 0 (2) differs from dim 1 (3)" },
    };
    double zeros[8] = { 0 };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        weft_tensor *args[2] = { test_tensor(cases[k].t, cases[k].rank, cases[k].dims, zeros),
                                 test_tensor(cases[k].t, cases[k].rank, cases[k].dims, zeros) };
        for (int eager = 0; eager < 2; eager++) {
            weft_tensor *y;
            int rc = call(&cases[k].c, args, eager, &y);
            cr_assert_eq(rc, cases[k].rc, "case %zu: %s (%s)", k, weft_err_name(rc),
                         weft_errmsg());
            cr_assert(strstr(weft_errmsg(), cases[k].says), "case %zu: \"%s\" does not say "
                      "\"%s\"", k, weft_errmsg(), cases[k].says);
            cr_assert_null(y);
        }
        weft_tensor_release(args[0]);
        weft_tensor_release(args[1]);
    }
}
