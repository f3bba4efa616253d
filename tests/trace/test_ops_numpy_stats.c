/* NumPy's nanmax, nanmin, nanvar, nanstd, nancumsum, nancumprod, cov,
 * corrcoef, interp, digitize and histogram: against NumPy 1.24's printed
 * values and loops written here, eagerly and traced on 1, 2 and 4 workers
 * with the same bits; NaN rows, ddof, one variable, rowvar, the ends and
 * infinities of interp, falling bins, values on histogram edges; one
 * trace for every size, set of points and found range; bins neither
 * rising nor falling and a range not finite failing the call; gradients;
 * the refusals. */
#include <math.h>
#include <string.h>

#include "grad_check.h"
#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_numpy_stats, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

#define DIMS(...) ((const int64_t[]){ __VA_ARGS__ })

/* got equals want within rel (NaN matching NaN). */
static void expect_near(double got, double want, double rel, const char *what, int k)
{
    cr_assert((isnan(want) && isnan(got)) || got == want || fabs(got - want) <= rel * fabs(want),
              "%s %d: %.17g, want %.17g", what, k, got, want);
}

/* [3, 4] with NaNs: row 1 is all NaN. */
static const double m34[12] = { 1.5, NAN, -2, 4, NAN, NAN, NAN, NAN, 0.25, 3, NAN, -1 };

typedef enum which { NANMAX, NANMIN, NANVAR, NANSTD } which;

typedef struct nan_case {
    which w;
    int axis;
    int ddof;
} nan_case;

static int nan_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const nan_case *c = user;
    switch (c->w) {
    case NANMAX: outs[0] = weft_nanmax(cx, a[0], &c->axis, 1, false); break;
    case NANMIN: outs[0] = weft_nanmin(cx, a[0], &c->axis, 1, false); break;
    case NANVAR: outs[0] = weft_nanvar(cx, a[0], &c->axis, 1, c->ddof, false); break;
    default: outs[0] = weft_nanstd(cx, a[0], &c->axis, 1, c->ddof, false); break;
    }
    return weft_ctx_status(cx);
}

/* NumPy's printed values: nanmax axis 1, nanmin axis 0, nanvar axis 1,
 * nanstd axis 1 ddof 1, nanvar axis 0 ddof 1. */
Test(ops_numpy_stats, nan_reductions_are_numpys)
{
    weft_tensor *t = test_tensor(WEFT_F64, 2, DIMS(3, 4), m34);
    static const struct {
        nan_case c;
        int n;
        double want[4];
    } cases[] = {
        { { NANMAX, 1, 0 }, 3, { 4, NAN, 3 } },
        { { NANMIN, 0, 0 }, 4, { 0.25, 3, -2, -1 } },
        { { NANVAR, 1, 0 }, 3, { 6.055555555555556, NAN, 2.7916666666666665 } },
        { { NANSTD, 1, 1 }, 3, { 3.013856886670854, NAN, 2.0463381929681126 } },
        { { NANVAR, 0, 1 }, 4, { 0.78125, NAN, NAN, 12.5 } },
        { { NANVAR, 1, 3 }, 3, { NAN, NAN, NAN } },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        weft_tensor *y;
        op_results_everywhere(nan_body, (void *)&cases[k].c, &t, 1, &y, 1, "nan reduction");
        cr_assert_eq(weft_tensor_numel(y), cases[k].n);
        for (int i = 0; i < cases[k].n; i++)
            expect_near(test_element(y, i), cases[k].want[i], 4e-16, "case", (int)k * 10 + i);
        weft_tensor_release(y);
    }
    weft_tensor_release(t);
    /* Integers: nanmax is the plain max (i32 kept), nanvar computes in f64. */
    t = test_tensor(WEFT_I32, 2, DIMS(2, 3), (const double[]){ 1, -4, 2, 7, 0, 3 });
    weft_tensor *y;
    nan_case c = { NANMAX, 1, 0 };
    op_results_everywhere(nan_body, &c, &t, 1, &y, 1, "i32 nanmax");
    test_assert_shape(y, WEFT_I32, 1, DIMS(2), "i32 nanmax");
    cr_assert(test_element(y, 0) == 2 && test_element(y, 1) == 7);
    weft_tensor_release(y);
    c = (nan_case){ NANVAR, 1, 0 };
    op_results_everywhere(nan_body, &c, &t, 1, &y, 1, "i32 nanvar");
    test_assert_shape(y, WEFT_F64, 1, DIMS(2), "i32 nanvar");
    expect_near(test_element(y, 0), 62.0 / 9, 4e-16, "i32 nanvar", 0);
    weft_tensor_release(y);
    weft_tensor_release(t);
}

static int scan_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_nancumsum(cx, a[0], 1);
    outs[1] = weft_nancumprod(cx, a[0], WEFT_ALL_AXES);
    return weft_ctx_status(cx);
}

/* NumPy's printed nancumsum(m, axis=1) and nancumprod(m) (flattened). */
Test(ops_numpy_stats, nan_scans_are_numpys)
{
    static const double sums[12] = { 1.5, 1.5, -0.5, 3.5, 0, 0, 0, 0, 0.25, 3.25, 3.25, 2.25 };
    static const double prods[12] = { 1.5, 1.5, -3, -12, -12, -12, -12, -12, -3, -9, -9, 9 };
    weft_tensor *t = test_tensor(WEFT_F64, 2, DIMS(3, 4), m34), *y[2];
    op_results_everywhere(scan_body, NULL, &t, 1, y, 2, "nan scans");
    test_assert_shape(y[0], WEFT_F64, 2, DIMS(3, 4), "nancumsum");
    test_assert_shape(y[1], WEFT_F64, 1, DIMS(12), "nancumprod");
    for (int i = 0; i < 12; i++) {
        cr_assert_eq(test_element(y[0], i), sums[i], "nancumsum %d", i);
        cr_assert_eq(test_element(y[1], i), prods[i], "nancumprod %d", i);
    }
    weft_tensor_release(y[0]);
    weft_tensor_release(y[1]);
    weft_tensor_release(t);
}

typedef struct cov_case {
    bool corr, rowvar;
    int ddof;
} cov_case;

static int cov_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const cov_case *c = user;
    outs[0] = c->corr ? weft_corrcoef(cx, a[0], c->rowvar) : weft_cov(cx, a[0], c->rowvar, c->ddof);
    return weft_ctx_status(cx);
}

/* The rows x cols matrix m transposed into t. */
static void transposed(const double *m, int rows, int cols, double *t)
{
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++)
            t[j * rows + i] = m[i * cols + j];
}

static const double x35[15] = { 1, 2, 3, 4, 5, 2, 1, 4, 3, 7, 0.5, 0.1, -3, 2, 1 };

/* cov_ex's args: m, then y, fweights and aweights where given. */
typedef struct cov_ex_case {
    bool y, fw, aw, rowvar;
    int ddof;
} cov_ex_case;

static int cov_ex_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const cov_ex_case *c = user;
    size_t k = 1;
    weft_value *y = c->y ? a[k++] : NULL;
    weft_value *fw = c->fw ? a[k++] : NULL;
    weft_value *aw = c->aw ? a[k++] : NULL;
    outs[0] = weft_cov_ex(cx, a[0], y, c->rowvar, c->ddof, fw, aw);
    return weft_ctx_status(cx);
}

static const double m25[10] = { 0.5, 1.5, -2, 3.25, 4, 2, -1, 0.75, 1, -3.5 };
static const double fw5[5] = { 1, 2, 0, 3, 1 }, aw5[5] = { 0.5, 1, 2, 0.25, 1.5 };
static const double y5[5] = { 1, 0, 2, -1, 3 };

/* NumPy's printed np.cov(X), np.cov(X, ddof=0), np.corrcoef(X); rowvar
 * false on X^T gives cov(X). */
/* x holds one variable: cov is the scalar cov (within rel), corrcoef 1,
 * both in x's dtype. */
static void expect_one_variable(weft_tensor *x, bool rowvar, double cov, double rel)
{
    for (int corr_too = 0; corr_too < 2; corr_too++) {
        cov_case c = { corr_too, rowvar, 1 };
        weft_tensor *y;
        op_results_everywhere(cov_body, &c, &x, 1, &y, 1, "one variable");
        test_assert_shape(y, weft_tensor_dtype(x), 0, NULL, "one variable");
        expect_near(test_element(y, 0), corr_too ? 1.0 : cov, rel, "one variable", rowvar);
        weft_tensor_release(y);
    }
}

Test(ops_numpy_stats, cov_and_corrcoef_are_numpys)
{
    static const double cov1[9] = { 2.5, 3.0, 0.725, 3.0, 5.3, 0.015, 0.725, 0.015, 3.547 };
    static const double cov0[9] = { 2.0, 2.4000000000000004, 0.58, 2.4000000000000004, 4.24,
                                    0.012, 0.58, 0.012, 2.8376 };
    static const double corr[9] = { 0.9999999999999999, 0.8241633836921342, 0.24346548839047913,
                                    0.8241633836921342, 1.0, 0.0034595748400716433,
                                    0.24346548839047913, 0.0034595748400716433,
                                    0.9999999999999999 };
    double xt[15];
    transposed(x35, 3, 5, xt);
    weft_tensor *x = test_tensor(WEFT_F64, 2, DIMS(3, 5), x35);
    weft_tensor *t = test_tensor(WEFT_F64, 2, DIMS(5, 3), xt);
    const struct {
        cov_case c;
        weft_tensor *arg;
        const double *want;
    } cases[4] = {
        { { false, true, 1 }, x, cov1 },
        { { false, true, 0 }, x, cov0 },
        { { false, false, 1 }, t, cov1 },
        { { true, true, 1 }, x, corr },
    };
    for (int k = 0; k < 4; k++) {
        weft_tensor *y;
        op_results_everywhere(cov_body, (void *)&cases[k].c, &cases[k].arg, 1, &y, 1, "cov");
        test_assert_shape(y, WEFT_F64, 2, DIMS(3, 3), "cov");
        for (int i = 0; i < 9; i++)
            expect_near(test_element(y, i), cases[k].want[i], 1e-14, "cov case", k * 10 + i);
        if (cases[k].c.corr)
            for (int i = 0; i < 9; i++)
                cr_assert(fabs(test_element(y, i)) <= 1, "clipped");
        weft_tensor_release(y);
    }
    weft_tensor_release(x);
    weft_tensor_release(t);
    /* y = 3 x + 0.1: unclipped, one coefficient is 1.0000000000000002
     * (NumPy's too); clipped, NumPy's 1 everywhere. */
    x = test_tensor(WEFT_F64, 2, DIMS(2, 4), (const double[]){ -4.1, -2.6, 3.0, 0.8,
                                                               -4.1 * 3 + 0.1, -2.6 * 3 + 0.1,
                                                               3.0 * 3 + 0.1, 0.8 * 3 + 0.1 });
    cov_case cc = { true, true, 1 };
    weft_tensor *y;
    op_results_everywhere(cov_body, &cc, &x, 1, &y, 1, "clipped");
    for (int i = 0; i < 4; i++) {
        cr_assert(test_element(y, i) <= 1, "%d: %.17g", i, test_element(y, i));
        expect_near(test_element(y, i), 1, 3e-16, "clipped", i);
    }
    weft_tensor_release(y);
    weft_tensor_release(x);
    /* A single row with rowvar false stays one variable (NumPy transposes
     * only matrices of more rows): np.cov([[1, 2, 4]], rowvar=False) is
     * 2.333333333333333, its corrcoef 1.0. */
    x = test_tensor(WEFT_F64, 2, DIMS(1, 3), (const double[]){ 1, 2, 4 });
    expect_one_variable(x, false, 2.333333333333333, 1e-15);
    /* cov_ex's y alike: np.cov([[1, 2, 4]], [[0, 1, 5]], rowvar=False). */
    weft_tensor *xy[2] = { x, test_tensor(WEFT_F64, 2, DIMS(1, 3), (const double[]){ 0, 1, 5 }) };
    cov_ex_case rows = { true, false, false, false, 1 };
    op_results_everywhere(cov_ex_body, &rows, xy, 2, &y, 1, "rows, rowvar false");
    test_assert_shape(y, WEFT_F64, 2, DIMS(2, 2), "rows, rowvar false");
    static const double two_rows[4] = { 2.3333333333333335, 4, 4, 7 };
    for (int i = 0; i < 4; i++)
        expect_near(test_element(y, i), two_rows[i], 1e-15, "rows", i);
    weft_tensor_release(y);
    weft_tensor_release(xy[1]);
    weft_tensor_release(x);
    /* A vector is one variable: NumPy's 0-d 7.229166666666666 and 1.0. */
    x = test_tensor(WEFT_F32, 1, DIMS(4), (const double[]){ 1, 2, 4.5, 7 });
    expect_one_variable(x, true, 7.229166666666666, 1e-7);
    weft_tensor_release(x);
}

/* Exactly linear variables: every coefficient within [-1, 1] (unclipped,
 * rounding takes some past 1), within 4 ulps of +-1. */
Test(ops_numpy_stats, corrcoef_stays_within_one)
{
    uint64_t seed = 7;
    int ones = 0;
    for (int k = 0; k < 300; k++) {
        double v[8];
        double slope = op_uniform(&seed) * 8 - 4, shift = op_uniform(&seed) - 0.5;
        for (int j = 0; j < 4; j++) {
            v[j] = round(op_uniform(&seed) * 100 - 50) / 10;
            v[4 + j] = slope * v[j] + shift;
        }
        weft_tensor *x = test_tensor(WEFT_F64, 2, DIMS(2, 4), v), *y = NULL;
        cov_case c = { true, true, 1 };
        cr_assert_eq(op_call(rt, cov_body, &c, &x, 1, &y, 1, k % 2), 0, "%s", weft_errmsg());
        for (int i = 0; i < 4; i++) {
            double r = test_element(y, i), want = i == 0 || i == 3 || slope > 0 ? 1 : -1;
            cr_assert(fabs(r) <= 1 && fabs(r - want) <= 1e-15, "case %d [%d]: %.17g", k, i, r);
            ones += fabs(r) == 1;
        }
        weft_tensor_release(y);
        weft_tensor_release(x);
    }
    cr_assert(ones > 0, "no coefficient rounded to exactly 1");
}

/* ddof past the observations: NumPy's 1 / 0 makes inf (0 * inf NaN). */
Test(ops_numpy_stats, cov_past_the_observations)
{
    weft_tensor *x = test_tensor(WEFT_F64, 2, DIMS(2, 2), (const double[]){ 1, 3, 2, 2 }), *y;
    cov_case c = { false, true, 2 };
    op_results_everywhere(cov_body, &c, &x, 1, &y, 1, "ddof 2 of 2");
    cr_assert_eq(test_element(y, 0), INFINITY);
    cr_assert(isnan(test_element(y, 1)) && isnan(test_element(y, 3)));
    weft_tensor_release(y);
    weft_tensor_release(x);
    /* Weighted: fweights summing to 2 with ddof 3 (fact 0, NumPy's warning
     * case): inf on the diagonal. */
    weft_tensor *args[2] = { test_tensor(WEFT_F64, 2, DIMS(2, 5), m25),
                             test_tensor(WEFT_I32, 1, DIMS(5), (const double[]){ 1, 1, 0, 0,
                                                                                 0 }) };
    cov_ex_case w = { false, true, false, true, 3 };
    op_results_everywhere(cov_ex_body, &w, args, 2, &y, 1, "fweights past ddof");
    cr_assert(test_element(y, 0) == INFINITY && test_element(y, 3) == INFINITY, "%g %g",
              test_element(y, 0), test_element(y, 3));
    weft_tensor_release(y);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

/* NumPy's printed np.cov with fweights (i64), aweights, both, ddof 0 and
 * 2, a y after m (rowvar or not), and a single weighted variable. */
Test(ops_numpy_stats, cov_ex_is_numpys)
{
    double mt[10];
    transposed(m25, 2, 5, mt);
    weft_tensor *m = test_tensor(WEFT_F64, 2, DIMS(2, 5), m25);
    weft_tensor *t = test_tensor(WEFT_F64, 2, DIMS(5, 2), mt);
    weft_tensor *m0 = test_tensor(WEFT_F64, 1, DIMS(5), m25);
    weft_tensor *y = test_tensor(WEFT_F64, 1, DIMS(5), y5);
    weft_tensor *fw = test_tensor(WEFT_I64, 1, DIMS(5), fw5);
    weft_tensor *aw = test_tensor(WEFT_F64, 1, DIMS(5), aw5);
    static const double by_fw[4] = { 1.6547619047619047, -0.8363095238095237,
                                     -0.8363095238095237, 3.535714285714285 };
    static const double by_aw[4] = { 8.675781250000002, -5.55078125, -5.55078125, 5.359375 };
    static const double by_both[4] = { 2.06993006993007, -2.000874125874126,
                                       -2.0008741258741263, 4.4527972027972025 };
    static const double both_0[4] = { 1.6398891966759002, -1.585180055401662,
                                       -1.5851800554016622, 3.5277008310249305 };
    static const double fw_2[4] = { 1.9857142857142858, -1.0035714285714286,
                                    -1.0035714285714286, 4.242857142857143 };
    static const double with_y[9] = { 5.637499999999999, -2.915625, -0.5, -2.915625, 4.675,
                                      -1.8125, -0.5, -1.8125, 2.5 };
    static const double vec_y_aw[4] = { 8.675781250000002, 0.48124999999999996,
                                        0.4812499999999998, 2.0125 };
    static const double cols_y_fw[9] = {
        1.6547619047619047, -0.8363095238095237, 0.04761904761904759,
        -0.8363095238095237, 3.535714285714285, -1.9047619047619044,
        0.04761904761904759, -1.9047619047619047, 2.142857142857143 };
    static const double one_var[1] = { 8.675781250000002 };
    const struct {
        cov_ex_case c;
        weft_tensor *args[3];
        const double *want;
        int n;   /* variables; 0 for a scalar */
    } cases[] = {
        { { false, true, false, true, 1 }, { m, fw }, by_fw, 2 },
        { { false, false, true, true, 1 }, { m, aw }, by_aw, 2 },
        { { false, true, true, true, 1 }, { m, fw, aw }, by_both, 2 },
        { { false, true, true, true, 0 }, { m, fw, aw }, both_0, 2 },
        { { false, true, false, true, 2 }, { m, fw }, fw_2, 2 },
        { { true, false, false, true, 1 }, { m, y }, with_y, 3 },
        { { true, false, true, true, 1 }, { m0, y, aw }, vec_y_aw, 2 },
        { { true, true, false, false, 1 }, { t, y, fw }, cols_y_fw, 3 },
        { { false, false, true, true, 1 }, { m0, aw }, one_var, 0 },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        weft_tensor *args[4] = { cases[k].args[0], cases[k].args[1], cases[k].args[2] }, *r;
        size_t n_args = 1 + cases[k].c.y + cases[k].c.fw + cases[k].c.aw;
        op_results_everywhere(cov_ex_body, (void *)&cases[k].c, args, n_args, &r, 1, "cov_ex");
        int n = cases[k].n;
        test_assert_shape(r, WEFT_F64, n ? 2 : 0, DIMS(n, n), "cov_ex");
        for (int i = 0; i < (n ? n * n : 1); i++)
            expect_near(test_element(r, i), cases[k].want[i], 1e-14, "cov_ex case",
                        (int)k * 10 + i);
        weft_tensor_release(r);
    }
    weft_tensor *all[6] = { m, t, m0, y, fw, aw };
    for (int i = 0; i < 6; i++)
        weft_tensor_release(all[i]);
}

/* Weights that are not whole (fweights), negative or of another length,
 * and a y of other observations, fail the call when it runs. */
Test(ops_numpy_stats, cov_ex_weights_checked_when_the_call_runs)
{
    weft_tensor *args[5] = {
        test_tensor(WEFT_F64, 2, DIMS(2, 5), m25),
        test_tensor(WEFT_F64, 1, DIMS(5), (const double[]){ 1, 2, 0.5, 3, 1 }),
        test_tensor(WEFT_F64, 1, DIMS(5), (const double[]){ 1, 2, -1, 3, 1 }),
        test_tensor(WEFT_F64, 1, DIMS(4), aw5),
        test_tensor(WEFT_F64, 1, DIMS(4), y5),
    };
    static const cov_ex_case cases[5] = {
        { false, true, false, true, 1 }, { false, true, false, true, 1 },
        { false, false, true, true, 1 }, { false, false, true, true, 1 },
        { true, false, false, true, 1 },
    };
    static const int which[5] = { 1, 2, 2, 3, 4 };
    static const char *says[5] = {
        "weft_cov_ex: fweights are not whole numbers >= 0, one per observation",
        "weft_cov_ex: fweights are not whole numbers >= 0, one per observation",
        "weft_cov_ex: aweights are not numbers >= 0, one per observation",
        "weft_cov_ex: aweights are not numbers >= 0, one per observation",
        "weft_cov_ex: y's observations are not m's",
    };
    for (int k = 0; k < 5; k++)
        for (int eager = 0; eager < 2; eager++) {
            weft_tensor *two[2] = { args[0], args[which[k]] }, *r = NULL;
            int rc = op_call(rt, cov_ex_body, (void *)&cases[k], two, 2, &r, 1, eager);
            cr_assert_eq(rc, WEFT_EINVAL, "case %d: %s", k, weft_err_name(rc));
            cr_assert(strstr(weft_errmsg(), says[k]), "case %d: %s", k, weft_errmsg());
            cr_assert_null(r);
        }
    /* Lengths unknown while tracing: one trace, the check when it runs. */
    const weft_spec sig[2] = { { WEFT_F64, 2, { 2, WEFT_DIM_ANY } },
                               { WEFT_F64, 1, { WEFT_DIM_ANY } } };
    weft_function *f = op_signature_function(rt, cov_ex_body, (void *)&cases[2], sig, 2);
    weft_tensor *good = test_tensor(WEFT_F64, 1, DIMS(5), aw5);
    weft_tensor *lengths[2] = { args[3], good };
    for (int k = 0; k < 2; k++) {
        weft_arg a[2] = { weft_arg_tensor(args[0]), weft_arg_tensor(lengths[k]) };
        weft_tensor *r = NULL;
        int rc = weft_function_call(f, a, 2, &r, 1);
        cr_assert_eq(rc, k ? 0 : WEFT_EINVAL, "%s", weft_errmsg());
        if (k)
            expect_near(test_element(r, 0), 8.675781250000002, 1e-14, "traced cov_ex", 0);
        else
            cr_assert(strstr(weft_errmsg(), says[3]), "%s", weft_errmsg());
        weft_tensor_release(r);
    }
    op_destroy_traced_once(&f);
    weft_tensor_release(good);
    for (int i = 0; i < 5; i++)
        weft_tensor_release(args[i]);
}

typedef struct interp_case {
    bool ends;   /* left -7 and right 9 */
} interp_case;

/* args: x, xp, fp. */
static int interp_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const interp_case *c = user;
    weft_value *left = c->ends ? weft_const_f64(cx, -7) : NULL;
    weft_value *right = c->ends ? weft_const_f64(cx, 9) : NULL;
    outs[0] = weft_interp(cx, a[0], a[1], a[2], left, right);
    return weft_ctx_status(cx);
}

/* NumPy's compiled interp, written out. */
static double numpy_interp(double x, const double *xp, const double *fp, int n, double left,
                           double right)
{
    if (isnan(x))
        return x;
    if (x < xp[0])
        return left;
    if (x > xp[n - 1])
        return right;
    if (x == xp[n - 1])
        return fp[n - 1];
    int j = 0;
    while (j + 1 < n && xp[j + 1] <= x)
        j++;
    if (x == xp[j])
        return fp[j];
    double slope = (fp[j + 1] - fp[j]) / (xp[j + 1] - xp[j]);
    double y = slope * (x - xp[j]) + fp[j];
    if (isnan(y)) {
        y = slope * (x - xp[j + 1]) + fp[j + 1];
        if (isnan(y) && fp[j] == fp[j + 1])
            y = fp[j];
    }
    return y;
}

static const double xp4[4] = { 1, 2, 2.5, 4 }, fp4[4] = { 3, -1, 0.5, 2 };
static const double x9[9] = { 0, 1, 1.2, 2, 2.25, 3.9, 4, 5, NAN };

Test(ops_numpy_stats, interp_is_numpys)
{
    static const double numpy[2][9] = { { 3.0, 3.0, 2.2, -1.0, -0.25, 1.9, 2.0, 2.0, NAN },
                                        { -7.0, 3.0, 2.2, -1.0, -0.25, 1.9, 2.0, 9.0, NAN } };
    weft_tensor *args[3] = { test_tensor(WEFT_F64, 2, DIMS(3, 3), x9),
                             test_tensor(WEFT_F64, 1, DIMS(4), xp4),
                             test_tensor(WEFT_F64, 1, DIMS(4), fp4) };
    for (int ends = 0; ends < 2; ends++) {
        interp_case c = { ends };
        weft_tensor *y;
        op_results_everywhere(interp_body, &c, args, 3, &y, 1, "interp");
        test_assert_shape(y, WEFT_F64, 2, DIMS(3, 3), "interp");
        for (int i = 0; i < 9; i++) {
            double want = numpy_interp(x9[i], xp4, fp4, 4, ends ? -7 : 3, ends ? 9 : 2);
            cr_assert(isnan(want) ? isnan(test_element(y, i)) : test_element(y, i) == want,
                      "x %g: %.17g, want %.17g", x9[i], test_element(y, i), want);
            expect_near(test_element(y, i), numpy[ends][i], 0, "numpy", i);
        }
        weft_tensor_release(y);
    }
    for (int k = 0; k < 3; k++)
        weft_tensor_release(args[k]);
}

static int periodic_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    outs[0] = weft_interp_periodic(cx, a[0], a[1], a[2], *(const double *)user);
    return weft_ctx_status(cx);
}

/* NumPy's printed np.interp(x, xp, fp, period=...): its documentation's
 * degrees example (x from -185 to 720.5, NaN) and a negative period with
 * integer points; one trace for x and points of any length. */
Test(ops_numpy_stats, interp_periodic_is_numpys)
{
    weft_tensor *args[3] = {
        test_tensor(WEFT_F64, 1, DIMS(10), (const double[]){ -180, -170, -185, 185, -10, -5, 0,
                                                             365, NAN, 720.5 }),
        test_tensor(WEFT_F64, 1, DIMS(4), (const double[]){ 190, -190, 350, -350 }),
        test_tensor(WEFT_I32, 1, DIMS(4), (const double[]){ 5, 10, 3, 4 }) };
    static const double deg[10] = { 7.5, 5, 8.75, 6.25, 3, 3.25, 3.5, 3.75, NAN, 3.525 };
    static const double p360 = 360, neg1 = -1;
    weft_tensor *y;
    op_results_everywhere(periodic_body, (void *)&p360, args, 3, &y, 1, "period 360");
    test_assert_shape(y, WEFT_F64, 1, DIMS(10), "period 360");
    for (int i = 0; i < 10; i++)
        expect_near(test_element(y, i), deg[i], 1e-15, "period 360", i);
    weft_tensor_release(y);
    for (int k = 0; k < 3; k++)
        weft_tensor_release(args[k]);
    args[0] = test_tensor(WEFT_F64, 1, DIMS(4), (const double[]){ 0.1, 0.9, 1.3, -0.2 });
    args[1] = test_tensor(WEFT_F64, 1, DIMS(4), (const double[]){ 0, 0.25, 0.5, 0.75 });
    args[2] = test_tensor(WEFT_F64, 1, DIMS(4), (const double[]){ 1, 2, 0, -1 });
    static const double unit[4] = { 1.4, 0.20000000000000018, 1.5999999999999996,
                                    -0.5999999999999996 };
    op_results_everywhere(periodic_body, (void *)&neg1, args, 3, &y, 1, "period -1");
    op_expect_values(y, WEFT_F64, unit, 4, "period -1");
    weft_tensor_release(y);
    const weft_spec sig[3] = { { WEFT_F64, 1, { WEFT_DIM_ANY } },
                               { WEFT_F64, 1, { WEFT_DIM_ANY } },
                               { WEFT_F64, 1, { WEFT_DIM_ANY } } };
    weft_function *f = op_signature_function(rt, periodic_body, (void *)&neg1, sig, 3);
    for (int call = 0; call < 2; call++) {
        /* The second call: x [0.1], the first three points. */
        int64_t nx = call ? 1 : 4, np_ = call ? 3 : 4;
        weft_tensor *t[3] = { test_tensor(WEFT_F64, 1, &nx, (const double[]){ 0.1, 0.9, 1.3,
                                                                              -0.2 }),
                              test_tensor(WEFT_F64, 1, &np_, (const double[]){ 0, 0.25, 0.5,
                                                                               0.75 }),
                              test_tensor(WEFT_F64, 1, &np_, (const double[]){ 1, 2, 0, -1 }) };
        weft_arg a[3] = { weft_arg_tensor(t[0]), weft_arg_tensor(t[1]), weft_arg_tensor(t[2]) };
        cr_assert_eq(weft_function_call(f, a, 3, &y, 1), 0, "%s", weft_errmsg());
        /* np.interp([0.1], [0, 0.25, 0.5], [1, 2, 0], period=1) */
        op_expect_values(y, WEFT_F64, call ? (const double[]){ 1.4 } : unit, nx, "traced");
        weft_tensor_release(y);
        for (int k = 0; k < 3; k++)
            weft_tensor_release(t[k]);
    }
    op_destroy_traced_once(&f);
    for (int k = 0; k < 3; k++)
        weft_tensor_release(args[k]);
}

/* Infinite values: NumPy's [inf, -inf, inf] at 1.5, 3 and 2 (a point,
 * where the slope's -inf times 0 would make NaN) over fp inf inf -inf;
 * x a scalar; a single point (left, fp[0], right); integer operands. */
Test(ops_numpy_stats, interp_edges)
{
    weft_tensor *args[3] = { test_tensor(WEFT_F64, 1, DIMS(3), (const double[]){ 1.5, 3, 2 }),
                             test_tensor(WEFT_F64, 1, DIMS(3), (const double[]){ 1, 2, 3 }),
                             test_tensor(WEFT_F64, 1, DIMS(3),
                                         (const double[]){ INFINITY, INFINITY, -INFINITY }) };
    interp_case c = { false };
    weft_tensor *y;
    op_results_everywhere(interp_body, &c, args, 3, &y, 1, "infinities");
    cr_assert(test_element(y, 0) == INFINITY && test_element(y, 1) == -INFINITY &&
              test_element(y, 2) == INFINITY, "%g %g %g", test_element(y, 0), test_element(y, 1),
              test_element(y, 2));
    weft_tensor_release(y);
    /* From inf to -inf and back: NaN both ways between ends that differ
     * (NumPy's [nan, inf, -inf]). */
    weft_tensor_release(args[2]);
    args[2] = test_tensor(WEFT_F64, 1, DIMS(3), (const double[]){ INFINITY, -INFINITY, INFINITY });
    op_results_everywhere(interp_body, &c, args, 3, &y, 1, "inf to -inf");
    cr_assert(isnan(test_element(y, 0)) && test_element(y, 1) == INFINITY &&
              test_element(y, 2) == -INFINITY, "%g %g %g", test_element(y, 0), test_element(y, 1),
              test_element(y, 2));
    weft_tensor_release(y);
    for (int k = 0; k < 3; k++)
        weft_tensor_release(args[k]);
    args[0] = test_tensor(WEFT_I32, 1, DIMS(3), (const double[]){ 0, 2, 3 });
    args[1] = test_tensor(WEFT_I32, 1, DIMS(1), (const double[]){ 2 });
    args[2] = test_tensor(WEFT_I64, 1, DIMS(1), (const double[]){ 5 });
    c.ends = true;
    op_results_everywhere(interp_body, &c, args, 3, &y, 1, "one point");
    test_assert_shape(y, WEFT_F64, 1, DIMS(3), "one point");
    cr_assert(test_element(y, 0) == -7 && test_element(y, 1) == 5 && test_element(y, 2) == 9);
    weft_tensor_release(y);
    weft_tensor_release(args[0]);
    args[0] = test_tensor(WEFT_F64, 0, NULL, (const double[]){ 1.2 });
    weft_tensor_release(args[1]);
    weft_tensor_release(args[2]);
    args[1] = test_tensor(WEFT_F64, 1, DIMS(4), xp4);
    args[2] = test_tensor(WEFT_F64, 1, DIMS(4), fp4);
    op_results_everywhere(interp_body, &c, args, 3, &y, 1, "scalar x");
    test_assert_shape(y, WEFT_F64, 0, NULL, "scalar x");
    cr_assert_eq(test_element(y, 0), 2.2);
    weft_tensor_release(y);
    for (int k = 0; k < 3; k++)
        weft_tensor_release(args[k]);
}

/* x of two unknown dims and points of unknown length: one trace. */
Test(ops_numpy_stats, interp_one_trace_for_every_size)
{
    const weft_spec sig[3] = { { WEFT_F64, 2, { -1, -1 } }, { WEFT_F64, 1, { -1 } },
                               { WEFT_F64, 1, { -1 } } };
    interp_case c = { false };
    weft_function *f = op_signature_function(rt, interp_body, &c, sig, 3);
    for (int size = 0; size < 2; size++) {
        int n = size ? 3 : 4;
        int64_t rows = size ? 1 : 3, cols = size ? 9 : 3;
        weft_tensor *ts[3] = { test_tensor(WEFT_F64, 2, DIMS(rows, cols), x9),
                               test_tensor(WEFT_F64, 1, DIMS(n), xp4),
                               test_tensor(WEFT_F64, 1, DIMS(n), fp4) }, *y = NULL;
        weft_arg a[3] = { weft_arg_tensor(ts[0]), weft_arg_tensor(ts[1]), weft_arg_tensor(ts[2]) };
        cr_assert_eq(weft_function_call(f, a, 3, &y, 1), 0, "%s", weft_errmsg());
        test_assert_shape(y, WEFT_F64, 2, DIMS(rows, cols), "traced");
        for (int i = 0; i < 9; i++) {
            double want = numpy_interp(x9[i], xp4, fp4, n, fp4[0], fp4[n - 1]);
            cr_assert(isnan(want) ? isnan(test_element(y, i)) : test_element(y, i) == want,
                      "size %d x %g", size, x9[i]);
        }
        weft_tensor_release(y);
        for (int k = 0; k < 3; k++)
            weft_tensor_release(ts[k]);
    }
    /* Points of two lengths fail the call when it runs. */
    weft_tensor *ts[3] = { test_tensor(WEFT_F64, 2, DIMS(1, 2), x9),
                           test_tensor(WEFT_F64, 1, DIMS(4), xp4),
                           test_tensor(WEFT_F64, 1, DIMS(3), fp4) }, *y = NULL;
    weft_arg a[3] = { weft_arg_tensor(ts[0]), weft_arg_tensor(ts[1]), weft_arg_tensor(ts[2]) };
    cr_assert_eq(weft_function_call(f, a, 3, &y, 1), WEFT_EINVAL);
    cr_assert(strstr(weft_errmsg(), "weft_interp: xp and fp differ in length"), "%s",
              weft_errmsg());
    for (int k = 0; k < 3; k++)
        weft_tensor_release(ts[k]);
    op_destroy_traced_once(&f);
}

static int digitize_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    outs[0] = weft_digitize(cx, a[0], a[1], *(const bool *)user);
    return weft_ctx_status(cx);
}

/* NumPy's printed values for rising bins [1, 2, 2, 3] and falling
 * [3, 2, 2, 1], right false and true; NaN sorts last. */
Test(ops_numpy_stats, digitize_is_numpys)
{
    static const double x7[7] = { 0.5, 1, 1.5, 2, 2.5, 3, NAN };
    static const double numpy[2][2][7] = { { { 0, 1, 1, 3, 3, 4, 4 }, { 0, 0, 1, 1, 3, 3, 4 } },
                                           { { 4, 3, 3, 1, 1, 0, 0 }, { 4, 4, 3, 3, 1, 1, 0 } } };
    static const double bins[2][4] = { { 1, 2, 2, 3 }, { 3, 2, 2, 1 } };
    weft_tensor *x = test_tensor(WEFT_F64, 1, DIMS(7), x7);
    for (int fall = 0; fall < 2; fall++) {
        weft_tensor *args[2] = { x, test_tensor(WEFT_F64, 1, DIMS(4), bins[fall]) };
        for (int right = 0; right < 2; right++) {
            bool r = right;
            weft_tensor *y;
            op_results_everywhere(digitize_body, &r, args, 2, &y, 1, "digitize");
            test_assert_shape(y, WEFT_I64, 1, DIMS(7), "digitize");
            for (int i = 0; i < 7; i++)
                cr_assert_eq(test_element(y, i), numpy[fall][right][i], "falling %d right %d x %g",
                             fall, right, x7[i]);
            weft_tensor_release(y);
        }
        weft_tensor_release(args[1]);
    }
    weft_tensor_release(x);
    /* i32 x and i64 bins promote; x of rank 2. */
    weft_tensor *args[2] = { test_tensor(WEFT_I32, 2, DIMS(2, 2), (const double[]){ 0, 5, 2, 9 }),
                             test_tensor(WEFT_I64, 1, DIMS(3), (const double[]){ 1, 2, 6 }) }, *y;
    bool r = false;
    op_results_everywhere(digitize_body, &r, args, 2, &y, 1, "digitize ints");
    test_assert_shape(y, WEFT_I64, 2, DIMS(2, 2), "digitize ints");
    const double want[4] = { 0, 2, 2, 3 };
    for (int i = 0; i < 4; i++)
        cr_assert_eq(test_element(y, i), want[i], "element %d", i);
    weft_tensor_release(y);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

/* Bins neither rising nor falling (a NaN among them too) fail the call
 * when it runs, traced or eager. */
Test(ops_numpy_stats, digitize_needs_monotonic_bins)
{
    static const double bad[2][3] = { { 1, 3, 2 }, { 1, NAN, 2 } };
    weft_tensor *x = test_tensor(WEFT_F64, 1, DIMS(2), (const double[]){ 0.5, 2 });
    for (int k = 0; k < 2; k++)
        for (int eager = 0; eager < 2; eager++) {
            weft_tensor *args[2] = { x, test_tensor(WEFT_F64, 1, DIMS(3), bad[k]) }, *y = NULL;
            bool r = false;
            cr_assert_eq(op_call(rt, digitize_body, &r, args, 2, &y, 1, eager), WEFT_EINVAL);
            cr_assert(strstr(weft_errmsg(), "bins are neither increasing nor decreasing"), "%s",
                      weft_errmsg());
            cr_assert_null(y);
            weft_tensor_release(args[1]);
        }
    weft_tensor_release(x);
}

typedef struct histogram_case {
    int64_t bins;
    bool ranged;
    double range[2];
} histogram_case;

static int histogram_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const histogram_case *c = user;
    return weft_histogram(cx, a[0], c->bins, c->ranged ? c->range : NULL, outs);
}

/* NumPy's printed counts and edges: f32 (edges f32) found and given
 * ranges, i32 (edges f64), one value widened, tenths on the edges. */
Test(ops_numpy_stats, histogram_is_numpys)
{
    static const double f7[7] = { 0.1, 0.25, 0.3, 0.7, 0.7, 1.0, 0.55 };
    static const double i5[5] = { 1, 2, 2, 3, 7 }, same[2] = { 2.5, 2.5 };
    /* Offsets one bin past the value (corrected down), one short (up);
     * the last edge is hi, not 2 step + lo = -0.22999999999999998. */
    static const double past[1] = { -0.06571428571428568 }, short_[1] = { 2.8274999999999997 };
    static const double ends[2] = { -0.55, -0.23 };
    /* NaN and values outside the range are not counted. */
    static const double outside[5] = { NAN, -1, 0.5, 2, 0.25 };
    double tenths[11];
    for (int i = 0; i < 11; i++)
        tenths[i] = 0.1 * i;
    static const struct {
        histogram_case c;
        weft_dtype dt;
        int n;
        const double *a;
        double counts[10], edges[11];
    } cases[] = {
        { { 3, false, { 0 } }, WEFT_F32, 7, f7, { 3, 1, 3 },
          { 0.10000000149011612, 0.4000000059604645, 0.699999988079071, 1.0 } },
        { { 4, true, { 0.1, 0.9 } }, WEFT_F32, 7, f7, { 2, 1, 1, 2 },
          { 0.10000000149011612, 0.30000001192092896, 0.5, 0.699999988079071,
            0.8999999761581421 } },
        { { 3, false, { 0 } }, WEFT_I32, 5, i5, { 3, 1, 1 }, { 1, 3, 5, 7 } },
        { { 2, false, { 0 } }, WEFT_F64, 2, same, { 0, 2 }, { 2, 2.5, 3 } },
        { { 10, true, { 0, 1 } }, WEFT_F64, 11, NULL, { 1, 1, 1, 1, 1, 1, 1, 1, 1, 2 },
          { 0.0, 0.1, 0.2, 0.30000000000000004, 0.4, 0.5, 0.6000000000000001,
            0.7000000000000001, 0.8, 0.9, 1.0 } },
        { { 7, true, { 0.05, 0.95 } }, WEFT_F64, 11, NULL, { 1, 2, 1, 1, 1, 2, 1 },
          { 0.05, 0.17857142857142855, 0.3071428571428571, 0.43571428571428567,
            0.5642857142857143, 0.6928571428571428, 0.8214285714285714, 0.95 } },
        { { 7, true, { -0.38, 0.72 } }, WEFT_F64, 1, past, { 0, 1, 0, 0, 0, 0, 0 },
          { -0.38, -0.22285714285714284, -0.06571428571428567, 0.09142857142857153,
            0.24857142857142867, 0.4057142857142858, 0.5628571428571431, 0.72 } },
        { { 8, true, { 2.07, 4.09 } }, WEFT_F64, 1, short_, { 0, 0, 0, 1, 0, 0, 0, 0 },
          { 2.07, 2.3225, 2.5749999999999997, 2.8274999999999997, 3.08, 3.3324999999999996,
            3.585, 3.8375, 4.09 } },
        { { 2, true, { -0.55, -0.23 } }, WEFT_F64, 2, ends, { 1, 1 }, { -0.55, -0.39, -0.23 } },
        { { 2, true, { 0, 1 } }, WEFT_F64, 5, outside, { 1, 1 }, { 0, 0.5, 1 } },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int64_t n = cases[k].n, bins = cases[k].c.bins;
        weft_tensor *a = test_tensor(cases[k].dt, 1, &n, cases[k].a ? cases[k].a : tenths), *y[2];
        op_results_everywhere(histogram_body, (void *)&cases[k].c, &a, 1, y, 2, "histogram");
        test_assert_shape(y[0], WEFT_I64, 1, &bins, "counts");
        int64_t n_edges = bins + 1;
        test_assert_shape(y[1], cases[k].dt == WEFT_F32 ? WEFT_F32 : WEFT_F64, 1, &n_edges,
                          "edges");
        for (int64_t b = 0; b < bins; b++)
            cr_assert_eq(test_element(y[0], b), cases[k].counts[b], "case %zu bin %lld", k,
                         (long long)b);
        for (int64_t b = 0; b <= bins; b++)
            cr_assert_eq(test_element(y[1], b), cases[k].edges[b], "case %zu edge %lld: %.17g", k,
                         (long long)b, test_element(y[1], b));
        weft_tensor_release(y[0]);
        weft_tensor_release(y[1]);
        weft_tensor_release(a);
    }
}

/* a of unknown size, no range: one trace for every size and range; an
 * empty a counts nothing over (0, 1); a NaN fails the call. */
Test(ops_numpy_stats, histogram_found_range_when_the_call_runs)
{
    const weft_spec sig = { WEFT_F64, 1, { -1 } };
    histogram_case c = { 2, false, { 0 } };
    weft_function_desc d = { .name = "histogram", .body = histogram_body, .user = &c,
                             .n_args = 1, .n_outs = 2, .input_signature = &sig };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
    const double v[4] = { 3, -1, 1, 3 };
    const double want[3][2] = { { 1, 3 }, { 1, 1 }, { 0, 0 } }, lo[3] = { -1, 1, 0 };
    const double hi[3] = { 3, 3, 1 };
    for (int k = 0; k < 3; k++) {
        int64_t n = k == 0 ? 4 : k == 1 ? 2 : 0;
        weft_tensor *a = test_tensor(WEFT_F64, 1, &n, k == 1 ? v + 2 : v), *y[2] = { NULL, NULL };
        weft_arg arg = weft_arg_tensor(a);
        cr_assert_eq(weft_function_call(f, &arg, 1, y, 2), 0, "%s", weft_errmsg());
        cr_assert(test_element(y[0], 0) == want[k][0] && test_element(y[0], 1) == want[k][1],
                  "call %d", k);
        cr_assert(test_element(y[1], 0) == lo[k] && test_element(y[1], 2) == hi[k], "call %d", k);
        weft_tensor_release(y[0]);
        weft_tensor_release(y[1]);
        weft_tensor_release(a);
    }
    int64_t two = 2;
    weft_tensor *a = test_tensor(WEFT_F64, 1, &two, (const double[]){ 1, NAN }), *y[2];
    weft_arg arg = weft_arg_tensor(a);
    cr_assert_eq(weft_function_call(f, &arg, 1, y, 2), WEFT_EINVAL);
    cr_assert(strstr(weft_errmsg(), "weft_histogram: the range of a is not finite"), "%s",
              weft_errmsg());
    weft_tensor_release(a);
    op_destroy_traced_once(&f);
}

static int nanvar_axes_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    static const int first_last[2] = { 0, 2 }, back[2] = { -1, 0 };
    switch (*(const int *)user) {
    case 0: outs[0] = weft_nanvar(cx, a[0], first_last, 2, 1, false); break;
    case 1: outs[0] = weft_nanvar(cx, a[0], NULL, 0, 0, false); break;
    default: outs[0] = weft_nanstd(cx, a[0], back, 2, 0, true); break;
    }
    return weft_ctx_status(cx);
}

/* nanvar and nanstd over two axes and every axis, keepdims or not, with
 * dims unknown while tracing: NumPy's np.nanvar(a, (0, 2), ddof=1),
 * np.nanvar(a) and np.nanstd(a, (-1, 0), keepdims=True) of a [2, 3, 2]. */
Test(ops_numpy_stats, nanvar_over_axes)
{
    static const double v[12] = { 1.5, NAN, -2, 4, 0.5, 3, NAN, 7, 2.5, -1, 6, NAN };
    static const double want[3][3] = { { 15.125, 8.0625, 7.583333333333334 },
                                       { 8.043209876543209 },
                                       { 2.75, 2.45903944661325, 2.2484562605386738 } };
    static const int rank[3] = { 1, 0, 3 };
    static const int64_t dims[3][3] = { { 3 }, { 0 }, { 1, 3, 1 } };
    weft_tensor *a = test_tensor(WEFT_F64, 3, DIMS(2, 3, 2), v);
    const weft_spec sig = { WEFT_F64, 3, { WEFT_DIM_ANY, 3, WEFT_DIM_ANY } };
    for (int k = 0; k < 3; k++) {
        weft_tensor *y;
        op_results_everywhere(nanvar_axes_body, &k, &a, 1, &y, 1, "nanvar axes");
        test_assert_shape(y, WEFT_F64, rank[k], dims[k], "nanvar axes");
        for (int i = 0; i < (k == 1 ? 1 : 3); i++)
            expect_near(test_element(y, i), want[k][i], 4e-16, "nanvar axes", i);
        weft_tensor_release(y);
        weft_function *f = op_signature_function(rt, nanvar_axes_body, &k, &sig, 1);
        weft_arg arg = weft_arg_tensor(a);
        cr_assert_eq(weft_function_call(f, &arg, 1, &y, 1), 0, "%s", weft_errmsg());
        for (int i = 0; i < (k == 1 ? 1 : 3); i++)
            expect_near(test_element(y, i), want[k][i], 4e-16, "nanvar axes traced", i);
        weft_tensor_release(y);
        op_destroy_traced_once(&f);
    }
    weft_tensor_release(a);
}

static int grad_of(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    static const int rows = 1;
    switch (*(const int *)user) {
    case 0: outs[0] = weft_nanvar(cx, a[0], &rows, 1, 1, false); break;
    case 1: outs[0] = weft_nanmax(cx, a[0], &rows, 1, false); break;
    case 2: outs[0] = weft_cov(cx, a[0], true, 1); break;
    case 3: outs[0] = weft_corrcoef(cx, a[0], false); break;
    case 5: outs[0] = weft_cov_ex(cx, a[0], NULL, true, 1, NULL, a[1]); break;
    default: outs[0] = weft_interp(cx, a[0], a[1], a[2], NULL, NULL); break;
    }
    return weft_ctx_status(cx);
}

/* Gradients against central differences (interp's for x, xp and fp, away
 * from the points). */
Test(ops_numpy_stats, gradients)
{
    const double v[12] = { 0.3, -1.2, 2.5, 0.9, 1.7, -0.4, 3.1, 0.05, -2.2, 1.1, 0.6, 2.8 };
    const grad_arg x = { 2, { 3, 4 }, v };
    for (int k = 0; k < 4; k++) {
        grad_case c = { grad_of, &k, 1, 1 };
        expect_gradients(&c, &x, k == 0 ? "nanvar" : k == 1 ? "nanmax" : k == 2 ? "cov"
                                                                                : "corrcoef");
    }
    const double xs[5] = { 0.5, 1.3, 2.2, 3.1, 4.6 };
    const grad_arg in[3] = { { 1, { 5 }, xs }, { 1, { 4 }, xp4 }, { 1, { 4 }, fp4 } };
    int which = 4;
    grad_case c = { grad_of, &which, 3, 3 };
    expect_gradients(&c, in, "interp");
    /* cov_ex for m and the aweights. */
    const grad_arg weighted[2] = { { 2, { 3, 4 }, v }, { 1, { 4 }, xs } };
    which = 5;
    grad_case w = { grad_of, &which, 2, 2 };
    expect_gradients(&w, weighted, "cov_ex");
}

/* args: a [3, 4] f64, a bool [2], an empty f64 [0], a matrix [2, 2, 2]. */
static int refused_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    static const int rows = 1;
    switch (*(const int *)user) {
    case 0: outs[0] = weft_nanmax(cx, a[1], &rows, 0, false); break;
    case 1: outs[0] = weft_nanvar(cx, a[0], &rows, 1, -1, false); break;
    case 2: outs[0] = weft_cov(cx, a[3], true, 1); break;
    case 3: outs[0] = weft_cov(cx, a[0], true, -2); break;
    case 4: outs[0] = weft_interp(cx, a[0], a[2], a[2], NULL, NULL); break;
    case 5: outs[0] = weft_interp(cx, a[0], a[0], a[0], NULL, NULL); break;
    case 6: outs[0] = weft_interp(cx, a[0], a[1], a[2], NULL, NULL); break;
    case 7: outs[0] = weft_digitize(cx, a[1], a[0], false); break;
    case 8: outs[0] = weft_digitize(cx, a[0], a[0], false); break;
    case 13: outs[0] = weft_cov_ex(cx, a[0], NULL, true, 1, a[3], NULL); break;
    case 14: outs[0] = weft_cov_ex(cx, a[0], NULL, true, 1, NULL, a[1]); break;
    case 15: outs[0] = weft_cov_ex(cx, a[0], a[3], true, 1, NULL, NULL); break;
    case 16: outs[0] = weft_cov_ex(cx, a[0], NULL, true, -1, NULL, NULL); break;
    case 17: outs[0] = weft_interp_periodic(cx, a[1], a[1], a[1], 0); break;
    case 18: outs[0] = weft_interp_periodic(cx, a[0], a[2], a[2], 1); break;
    default: {
        static const double bad[4][2] = { { 0, 1 }, { 0, 1 }, { 1, 0 }, { 0, INFINITY } };
        int k = *(const int *)user - 9;
        weft_value *two[2];
        return weft_histogram(cx, k == 0 ? a[1] : a[0], k == 1 ? 0 : 4, bad[k], two);
    }
    }
    return weft_ctx_status(cx);
}

Test(ops_numpy_stats, refusals)
{
    double zeros[8] = { 0 };
    weft_tensor *args[4] = { test_tensor(WEFT_F64, 2, DIMS(3, 4), m34),
                             test_tensor(WEFT_BOOL, 1, DIMS(2), zeros),
                             test_tensor(WEFT_F64, 1, DIMS(0), zeros),
                             test_tensor(WEFT_F64, 3, DIMS(2, 2, 2), zeros) };
    const op_error_case cases[] = {
        { 0, WEFT_EDTYPE, "weft_nanmax: a bool[2] is not a number" },
        { 1, WEFT_EINVAL, "weft_nanvar: ddof -1 is negative" },
        { 2, WEFT_ESHAPE, "weft_cov: m f64[2,2,2] is not a vector or a matrix" },
        { 3, WEFT_EINVAL, "weft_cov: ddof -2 is negative" },
        { 4, WEFT_ESHAPE, "weft_interp: xp f64[0] is not a vector of 1 or more" },
        { 5, WEFT_ESHAPE, "weft_interp: xp f64[3,4] is not a vector of 1 or more" },
        { 6, WEFT_ESHAPE, "weft_interp: fp f64[0] is not a vector of 1 or more" },
        { 7, WEFT_EDTYPE, "weft_digitize: x bool[2] is not a number" },
        { 8, WEFT_ESHAPE, "weft_digitize: bins f64[3,4] is not a vector" },
        { 9, WEFT_EDTYPE, "weft_histogram: a bool[2] is not a number" },
        { 10, WEFT_EINVAL, "weft_histogram: bins 0 is not in [1, 2^31)" },
        { 11, WEFT_EINVAL, "weft_histogram: range [1, 0] is not finite with min <= max" },
        { 12, WEFT_EINVAL, "weft_histogram: range [0, inf] is not finite with min <= max" },
        { 13, WEFT_ESHAPE, "weft_cov_ex: fweights f64[2,2,2] is not a vector" },
        { 14, WEFT_EDTYPE, "weft_cov_ex: aweights bool[2] is not a number" },
        { 15, WEFT_ESHAPE, "weft_cov_ex: y f64[2,2,2] is not a vector or a matrix" },
        { 16, WEFT_EINVAL, "weft_cov_ex: ddof -1 is negative" },
        { 17, WEFT_EINVAL, "weft_interp_periodic: period 0 is not finite and nonzero" },
        { 18, WEFT_ESHAPE, "weft_interp_periodic: xp f64[0] is not a vector of 1 or more" },
    };
    op_expect_errors(rt, refused_body, cases, 19, args, 4);
    for (int k = 0; k < 4; k++)
        weft_tensor_release(args[k]);
}

/* An optional input may be NULL; one that is given is checked as the
 * required ones are, named by its place in the call. */
Test(ops_numpy_stats, optional_inputs_checked_where_given)
{
    weft_tensor *pts = test_tensor(WEFT_F64, 1, DIMS(2), (const double[]){ 0, 1 });
    weft_tensor *eye = test_tensor(WEFT_F64, 2, DIMS(2, 2), (const double[]){ 1, 0, 0, 1 });
    static const char *const says[5] = {
        "weft_interp: input 4 was released (weft_value_release)",
        "weft_interp: input 1 is NULL",
        "weft_cov_ex: input 3 was released (weft_value_release)",
        "weft_conjugate_gradient: input 2 was released (weft_value_release)",
        "weft_conjugate_gradient: input 1 is NULL",
    };
    for (int which = 0; which < 5; which++) {
        weft_ctx *cx = NULL;
        cr_assert_eq(weft_eager_begin(rt, &cx), 0, "%s", weft_errmsg());
        weft_value *p = weft_eager_value(cx, pts), *m = weft_eager_value(cx, eye);
        weft_value *gone = weft_const_f64(cx, 2), *r = NULL, *outs[5] = { NULL };
        weft_value_release(cx, gone);
        int rc = WEFT_EINVAL;
        switch (which) {
        case 0: r = weft_interp(cx, p, p, p, NULL, gone); break;
        case 1: r = weft_interp(cx, p, NULL, p, NULL, NULL); break;
        case 2: r = weft_cov_ex(cx, p, NULL, true, 1, NULL, gone); break;
        case 3: rc = weft_conjugate_gradient(cx, m, p, gone, NULL, 1e-5, 20, outs); break;
        default: rc = weft_conjugate_gradient(cx, m, NULL, NULL, p, 1e-5, 20, outs); break;
        }
        cr_assert_null(r, "case %d", which);
        cr_assert_null(outs[0], "case %d", which);
        cr_assert_eq(rc, WEFT_EINVAL, "case %d", which);
        cr_assert_eq(weft_ctx_status(cx), WEFT_EINVAL, "case %d", which);
        cr_assert_str_eq(weft_errmsg(), says[which], "case %d", which);
        weft_eager_end(&cx);
    }
    weft_tensor_release(pts);
    weft_tensor_release(eye);
}
