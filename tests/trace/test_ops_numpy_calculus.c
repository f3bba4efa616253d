/* NumPy's gradient, trapz, unwrap, convolve and correlate against NumPy
 * 1.24's printed values, bit for bit, eagerly and traced on 1, 2 and 4
 * workers with the same bits: gradient's scalar and uneven paths (even
 * coordinates take the scalar one), both edge orders, NumPy's dtypes;
 * trapz by dx, a vector and a tensor of coordinates; unwrap's half-period
 * rule and periods; convolve's and correlate's modes with either operand
 * longer; one trace for every length; calls failing when they run;
 * gradients against central differences; the refusals, an unknown rank
 * named by its operand. */
#include <math.h>
#include <string.h>

#include "grad_check.h"
#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_numpy_calculus, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

#define DIMS(...) ((const int64_t[]){ __VA_ARGS__ })

/* f of the gradient and trapz cases: [3, 5]. */
static const double F[15] = { 0.3, 1.7, -2.2, 4.1, 0.05, 2.0, -1.25, 3.5, 3.5, -0.75,
                              1e3, 7.0, 0.125, -9.5, 2.25 };

typedef struct grad_op {
    int axis, edge_order;
    bool spacing;   /* args[1] is the spacing */
} grad_op;

static int gradient_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const grad_op *g = user;
    outs[0] = weft_gradient(cx, a[0], g->spacing ? a[1] : NULL, g->axis, g->edge_order);
    return weft_ctx_status(cx);
}

/* gradient(f, [spacing], axis, edge_order) everywhere against want. */
static void expect_gradient(weft_tensor *f, weft_tensor *spacing, grad_op g, weft_dtype dt,
                            const double *want, const char *what)
{
    weft_tensor *args[2] = { f, spacing }, *r;
    g.spacing = spacing != NULL;
    op_results_everywhere(gradient_body, &g, args, spacing ? 2 : 1, &r, 1, what);
    test_assert_shape(r, dt, weft_tensor_rank(f), weft_tensor_dims(f), what);
    op_expect_values(r, dt, want, weft_tensor_numel(f), what);
    weft_tensor_release(r);
}

/* np.gradient with unit and scalar steps, both edge orders, either axis. */
Test(ops_numpy_calculus, gradient_by_steps_is_numpys)
{
    weft_tensor *f = test_tensor(WEFT_F64, 2, DIMS(3, 5), F);
    static const double e1[15] = { 1.4, -1.25, 1.1999999999999997, 1.125, -4.05, -3.25, 0.75,
                                   2.375, -2.125, -4.25, -993.0, -499.9375, -8.25, 1.0625, 11.75 };
    static const double e2[15] = { 4.050000000000001, -1.25, 1.1999999999999997, 1.125, -9.225,
                                   -7.25, 0.75, 2.375, -2.125, -6.375, -1486.0625, -499.9375,
                                   -8.25, 1.0625, 22.4375 };
    static const double h0[15] = {
        -1654.8333333333335, -28.500000000000004, 34.125, 18.66666666666667, -9.0,
        1666.1666666666667, 8.833333333333334, 3.8750000000000004, -22.666666666666668,
        3.666666666666667, 4987.166666666667, 46.16666666666667, -26.375000000000004, -64.0,
        16.333333333333332 };
    expect_gradient(f, NULL, (grad_op){ 1, 1, false }, WEFT_F64, e1, "unit, edge 1");
    expect_gradient(f, NULL, (grad_op){ -1, 2, false }, WEFT_F64, e2, "unit, edge 2");
    weft_tensor *h = test_tensor(WEFT_F64, 0, NULL, (const double[]){ 0.3 });
    expect_gradient(f, h, (grad_op){ 0, 2, true }, WEFT_F64, h0, "step 0.3, axis 0");
    weft_tensor_release(h);
    /* Integers compute in f64. */
    weft_tensor *fi = test_tensor(WEFT_I32, 1, DIMS(6), (const double[]){ 1, 4, 9, 16, 25, 36 });
    expect_gradient(fi, NULL, (grad_op){ 0, 1, false }, WEFT_F64,
                    (const double[]){ 3, 4, 6, 8, 10, 11 }, "i32");
    h = test_tensor(WEFT_F64, 0, NULL, (const double[]){ 0.7 });
    expect_gradient(fi, h, (grad_op){ 0, 2, true }, WEFT_F64,
                    (const double[]){ 2.8571428571428577, 5.714285714285714, 8.571428571428571,
                                      11.428571428571429, 14.285714285714286, 17.14285714285714 },
                    "i32, step 0.7");
    weft_tensor_release(h);
    weft_tensor_release(fi);
    weft_tensor_release(f);
}

/* np.gradient with uneven coordinates in f64 and f32 (f32 coefficients
 * where NumPy's are, f64 where its 2. widens them), and with even integer
 * coordinates, which take the scalar path: its bits differ from the
 * uneven formula's (0.375 against 0.37500000000000006 there). */
Test(ops_numpy_calculus, gradient_by_coordinates_is_numpys)
{
    static const double x[5] = { 0.0, 0.4, 1.1, 1.15, 3.0 };
    weft_tensor *f = test_tensor(WEFT_F64, 2, DIMS(3, 5), F);
    weft_tensor *f32 = test_tensor(WEFT_F32, 2, DIMS(3, 5), F);
    weft_tensor *xu = test_tensor(WEFT_F64, 1, DIMS(5), x);
    weft_tensor *xu32 = test_tensor(WEFT_F32, 1, DIMS(5), x);
    weft_tensor *xe = test_tensor(WEFT_I64, 1, DIMS(5), (const double[]){ 1, 4, 7, 10, 13 });
    static const double u1[15] = {
        3.4999999999999996, 0.2012987012987013, 117.22857142857188, 122.62660028449547,
        -2.189189189189189, -8.125, -2.702922077922078, 0.452380952380949,
        -0.060455192034139627, -2.2972972972972974, -2482.5, -1583.3441558441557,
        -180.32142857142927, -187.26706970128095, 6.351351351351351 };
    static const double u2[15] = {
        6.798701298701298, 0.2012987012987013, 117.22857142857188, 122.62660028449547,
        -127.00497866287382, -13.547077922077921, -2.702922077922078, 0.452380952380949,
        -0.060455192034139627, -4.534139402560461, -3381.6558441558436, -1583.3441558441557,
        -180.32142857142927, -187.26706970128095, 199.96977240398363 };
    static const double even[15] = {
        1.35, -0.4166666666666667, 0.3999999999999999, 0.375, -3.0749999999999997,
        -2.4166666666666665, 0.25, 0.7916666666666666, -0.7083333333333334, -2.125,
        -495.35416666666663, -166.64583333333334, -2.75, 0.3541666666666667, 7.479166666666666 };
    static const double f32_x64[15] = {
        6.798701286315918, 0.20129871368408203, 117.22856903076172, 122.62660217285156,
        -127.00497436523438, -13.547078132629395, -2.7029221057891846, 0.4523809552192688,
        -0.060455191880464554, -4.534135818481445, -3381.656005859375, -1583.3441162109375,
        -180.32142639160156, -187.26707458496094, 199.96975708007812 };
    static const double f32_x32[15] = {
        6.79870080947876, 0.20129883289337158, 117.22869110107422, 122.62671661376953,
        -127.00509643554688, -13.547077178955078, -2.7029218673706055, 0.4523773193359375,
        -0.06045035272836685, -4.534143447875977, -3381.65576171875, -1583.34423828125,
        -180.3216094970703, -187.2672576904297, 199.96995544433594 };
    static const double f64_x32[15] = {
        6.798700584397334, 0.20129882097244245, 117.2286885470152, 122.62672003353944,
        -127.0050996823447, -13.547077239052333, -2.702922224998474, 0.4523795619606972,
        -0.06045607407577336, -4.534139568601354, -3381.655770287354, -1583.344187758863,
        -180.32160541415215, -187.26725185872056, 199.9699573963711 };
    expect_gradient(f, xu, (grad_op){ 1, 1, true }, WEFT_F64, u1, "uneven, edge 1");
    expect_gradient(f, xu, (grad_op){ 1, 2, true }, WEFT_F64, u2, "uneven, edge 2");
    expect_gradient(f, xe, (grad_op){ 1, 2, true }, WEFT_F64, even, "even integers");
    expect_gradient(f32, xu, (grad_op){ 1, 2, true }, WEFT_F32, f32_x64, "f32 by f64");
    expect_gradient(f32, xu32, (grad_op){ 1, 2, true }, WEFT_F32, f32_x32, "f32 by f32");
    expect_gradient(f, xu32, (grad_op){ 1, 2, true }, WEFT_F64, f64_x32, "f64 by f32");
    weft_tensor *all[5] = { f, f32, xu, xu32, xe };
    for (int k = 0; k < 5; k++)
        weft_tensor_release(all[k]);
}

typedef struct trapz_op {
    int axis;
    double dx;
    bool by_x;
} trapz_op;

static int trapz_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const trapz_op *t = user;
    outs[0] = weft_trapezoid(cx, a[0], t->by_x ? a[1] : NULL, t->dx, t->axis);
    return weft_ctx_status(cx);
}

static void expect_trapz(weft_tensor *y, weft_tensor *x, trapz_op t, weft_dtype dt,
                         const double *want, int64_t n, const char *what)
{
    weft_tensor *args[2] = { y, x }, *r;
    t.by_x = x != NULL;
    op_results_everywhere(trapz_body, &t, args, x ? 2 : 1, &r, 1, what);
    op_expect_values(r, dt, want, n, what);
    weft_tensor_release(r);
}

/* np.trapz by dx, by a coordinate vector, by coordinates of y's shape
 * along axis 0; f32 stays f32, integers give f64, a dim of 1 gives 0. */
Test(ops_numpy_calculus, trapezoid_is_numpys)
{
    weft_tensor *f = test_tensor(WEFT_F64, 2, DIMS(3, 5), F);
    weft_tensor *xu = test_tensor(WEFT_F64, 1, DIMS(5),
                                  (const double[]){ 0.0, 0.4, 1.1, 1.15, 3.0 });
    weft_tensor *xs = test_tensor(WEFT_F64, 2, DIMS(3, 5),
                                  (const double[]){ 0, 1, 2, 3, 4, 0.5, 1.5, 2, 2.25, 6,
                                                    1, 1, 1, 1, 1 });
    expect_trapz(f, NULL, (trapz_op){ 1, 0.5, false }, WEFT_F64,
                 (const double[]){ 1.8874999999999997, 3.1875, 249.375 }, 3, "dx");
    expect_trapz(f, xu, (trapz_op){ -1, 0, true }, WEFT_F64,
                 (const double[]){ 4.111249999999999, 3.6562499999999996, 196.953125 }, 3,
                 "x vector");
    expect_trapz(f, xs, (trapz_op){ 0, 0, true }, WEFT_F64,
                 (const double[]){ 251.075, -1.325, -1.8125, 0.9000000000000004, -4.45 }, 5,
                 "x of y's shape");
    weft_tensor *f32 = test_tensor(WEFT_F32, 2, DIMS(3, 5), F);
    expect_trapz(f32, NULL, (trapz_op){ 1, 0.1, false }, WEFT_F32,
                 (const double[]){ 0.3774999976158142, 0.637499988079071, 49.875003814697266 },
                 3, "f32");
    weft_tensor *fi = test_tensor(WEFT_I32, 1, DIMS(6), (const double[]){ 1, 4, 9, 16, 25, 36 });
    expect_trapz(fi, NULL, (trapz_op){ 0, 1.0, false }, WEFT_F64, (const double[]){ 72.5 }, 1,
                 "i32");
    weft_tensor *col = test_tensor(WEFT_F64, 2, DIMS(2, 1), (const double[]){ 3, 4 });
    expect_trapz(col, NULL, (trapz_op){ 1, 1.0, false }, WEFT_F64, (const double[]){ 0, 0 }, 2,
                 "one element");
    weft_tensor *all[6] = { f, xu, xs, f32, fi, col };
    for (int k = 0; k < 6; k++)
        weft_tensor_release(all[k]);
}

typedef struct unwrap_op {
    double discont, period;
    int axis;
} unwrap_op;

static int unwrap_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const unwrap_op *u = user;
    outs[0] = weft_unwrap(cx, a[0], u->discont, u->axis, u->period);
    return weft_ctx_status(cx);
}

static void expect_unwrap(weft_tensor *p, unwrap_op u, weft_dtype dt, const double *want,
                          const char *what)
{
    weft_tensor *r;
    op_results_everywhere(unwrap_body, &u, &p, 1, &r, 1, what);
    test_assert_shape(r, dt, weft_tensor_rank(p), weft_tensor_dims(p), what);
    op_expect_values(r, dt, want, weft_tensor_numel(p), what);
    weft_tensor_release(r);
}

/* np.unwrap with its defaults, a discont, a period of 5 (a step of
 * exactly half a period keeps its sign), f32, integers along axis 0. */
Test(ops_numpy_calculus, unwrap_is_numpys)
{
    const double tau = 6.283185307179586;
    static const double p[8] = { 0.0, 3.0, 6.5, 9.9, -3.1, 0.2, 3.14159265358979,
                                 6.28318530717959 * 2 + 0.1 };
    weft_tensor *t = test_tensor(WEFT_F64, 1, DIMS(8), p);
    expect_unwrap(t, (unwrap_op){ NAN, tau, 0 }, WEFT_F64,
                  (const double[]){ 0.0, 3.0, 0.21681469282041377, -2.666370614359172, -3.1,
                                    -6.083185307179586, -3.1415926535897962,
                                    -6.1831853071795795 }, "defaults");
    expect_unwrap(t, (unwrap_op){ 4.0, tau, -1 }, WEFT_F64,
                  (const double[]){ 0.0, 3.0, 6.5, 9.9, 9.466370614359173, 12.766370614359172,
                                    15.707963267948962, 12.66637061435918 }, "discont 4");
    weft_tensor *t32 = test_tensor(WEFT_F32, 1, DIMS(8), p);
    expect_unwrap(t32, (unwrap_op){ NAN, tau, 0 }, WEFT_F32,
                  (const double[]){ 0.0, 3.0, 0.21681499481201172, -2.666370391845703,
                                    -3.099998950958252, -6.083184719085693, -3.141591787338257,
                                    -6.183185577392578 }, "f32");
    weft_tensor *q = test_tensor(WEFT_F64, 1, DIMS(8), (const double[]){ 0, 5, 10, 2, 7, 1.5,
                                                                       4, 6.5 });
    expect_unwrap(q, (unwrap_op){ NAN, 5.0, 0 }, WEFT_F64,
                  (const double[]){ 0, 0, 0, 2, 2, 1.5, 4, 6.5 }, "period 5");
    weft_tensor *half = test_tensor(WEFT_F64, 1, DIMS(4), (const double[]){ 0, 2.5, 5, 2.5 });
    expect_unwrap(half, (unwrap_op){ NAN, 5.0, 0 }, WEFT_F64, (const double[]){ 0, 2.5, 5, 2.5 },
                  "half periods");
    weft_tensor *deg = test_tensor(WEFT_I64, 2, DIMS(2, 3),
                                   (const double[]){ 0, 350, 10, 5, 355, 725 });
    expect_unwrap(deg, (unwrap_op){ NAN, 360.0, 0 }, WEFT_F64,
                  (const double[]){ 0, 350, 10, 5, 355, 5 }, "degrees along axis 0");
    weft_tensor *all[5] = { t, t32, q, half, deg };
    for (int k = 0; k < 5; k++)
        weft_tensor_release(all[k]);
}

static int ediff_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    bool ends = *(const bool *)user;
    outs[0] = weft_ediff1d(cx, a[0], ends ? a[1] : NULL, ends ? a[2] : NULL);
    return weft_ctx_status(cx);
}

/* np.ediff1d([1, 4, 9, 16], to_end=[99, 98], to_begin=-5) and of a
 * matrix, flattened; an i32 ary keeps its dtype (the bool end cast). */
Test(ops_numpy_calculus, ediff1d_is_numpys)
{
    weft_tensor *args[3] = { test_tensor(WEFT_I32, 1, DIMS(4), (const double[]){ 1, 4, 9, 16 }),
                             test_tensor(WEFT_I64, 1, DIMS(2), (const double[]){ 99, 98 }),
                             test_tensor(WEFT_BOOL, 0, NULL, (const double[]){ 1 }) }, *r;
    bool ends = true;
    op_results_everywhere(ediff_body, &ends, args, 3, &r, 1, "ediff1d");
    test_assert_shape(r, WEFT_I32, 1, DIMS(6), "ediff1d");
    static const double want[6] = { 1, 3, 5, 7, 99, 98 };
    for (int i = 0; i < 6; i++)
        cr_assert_eq(test_element(r, i), want[i], "[%d]", i);
    weft_tensor_release(r);
    weft_tensor *m = test_tensor(WEFT_F32, 2, DIMS(2, 2), (const double[]){ 1, 2, 4, 8 });
    ends = false;
    op_results_everywhere(ediff_body, &ends, &m, 1, &r, 1, "ediff1d matrix");
    test_assert_shape(r, WEFT_F32, 1, DIMS(3), "ediff1d matrix");
    static const double flat[3] = { 1, 2, 4 };
    for (int i = 0; i < 3; i++)
        cr_assert_eq(test_element(r, i), flat[i], "[%d]", i);
    weft_tensor_release(r);
    weft_tensor_release(m);
    for (int k = 0; k < 3; k++)
        weft_tensor_release(args[k]);
}

typedef struct conv_op {
    bool correlate;
    weft_convolve_mode mode;
} conv_op;

static int conv_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const conv_op *c = user;
    outs[0] = c->correlate ? weft_correlate(cx, a[0], a[1], c->mode)
                           : weft_convolve(cx, a[0], a[1], c->mode);
    return weft_ctx_status(cx);
}

/* np.convolve and np.correlate of a (7) and v (3) in each mode, either
 * way round, and of a's first 4 with a filter of 4 (even lengths). */
Test(ops_numpy_calculus, convolve_and_correlate_are_numpys)
{
    static const double av[7] = { 1.5, -2.0, 0.25, 4.0, 3.0, -1.0, 0.5 };
    weft_tensor *a = test_tensor(WEFT_F64, 1, DIMS(7), av);
    weft_tensor *v = test_tensor(WEFT_F64, 1, DIMS(3), (const double[]){ 0.5, 2.0, -1.0 });
    weft_tensor *a4 = test_tensor(WEFT_F64, 1, DIMS(4), av);
    weft_tensor *w = test_tensor(WEFT_F64, 1, DIMS(4), (const double[]){ 1, -3, 2, 0.5 });
    static const double conv[3][9] = { { 0.75, 2.0, -5.375, 4.5, 9.25, 1.5, -4.75, 2.0, -0.5 },
                                       { 2.0, -5.375, 4.5, 9.25, 1.5, -4.75, 2.0 },
                                       { -5.375, 4.5, 9.25, 1.5, -4.75 } };
    static const double corr[3][9] = { { -1.5, 5.0, -3.5, -4.5, 5.125, 9.0, -1.0, 0.5, 0.25 },
                                       { 5.0, -3.5, -4.5, 5.125, 9.0, -1.0, 0.5 },
                                       { -3.5, -4.5, 5.125, 9.0, -1.0 } };
    static const double corr_rev[3][9] = {
        { 0.25, 0.5, -1.0, 9.0, 5.125, -4.5, -3.5, 5.0, -1.5 },
        { 0.5, -1.0, 9.0, 5.125, -4.5, -3.5, 5.0 },
        { -1.0, 9.0, 5.125, -4.5, -3.5 } };
    static const double even[3][7] = { { 0.75, 2.0, -8.375, 10.0, 5.25, -11.75, 4.0 },
                                       { 2.0, -8.375, 10.0, 5.25 },
                                       { 10.0 } };
    static const int64_t len[3] = { 9, 7, 5 }, len_even[3] = { 7, 4, 1 };
    for (int m = 0; m < 3; m++) {
        weft_tensor *r;
        struct {
            weft_tensor *x, *y;
            bool correlate;
            const double *want;
            int64_t n;
        } cases[5] = { { a, v, false, conv[m], len[m] },
                       { v, a, false, conv[m], len[m] },
                       { a, v, true, corr[m], len[m] },
                       { v, a, true, corr_rev[m], len[m] },
                       { a4, w, true, even[m], len_even[m] } };
        for (int k = 0; k < 5; k++) {
            conv_op c = { cases[k].correlate, (weft_convolve_mode)m };
            weft_tensor *args[2] = { cases[k].x, cases[k].y };
            op_results_everywhere(conv_body, &c, args, 2, &r, 1, "convolve");
            op_expect_values(r, WEFT_F64, cases[k].want, cases[k].n, "convolve case");
            weft_tensor_release(r);
        }
    }
    weft_tensor *all[4] = { a, v, a4, w };
    for (int k = 0; k < 4; k++)
        weft_tensor_release(all[k]);
}

/* Lengths unknown while tracing: a signal of 7 then 2 elements (shorter
 * than the filter of 3) in SAME mode, and gradient by coordinates of 5
 * then 3, each function traced once. */
Test(ops_numpy_calculus, one_trace_for_every_length)
{
    const weft_spec conv_sig[2] = { { WEFT_F64, 1, { WEFT_DIM_ANY } }, { WEFT_F64, 1, { 3 } } };
    conv_op c = { false, WEFT_CONVOLVE_SAME };
    weft_function *f = op_signature_function(rt, conv_body, &c, conv_sig, 2);
    static const double av[7] = { 1.5, -2.0, 0.25, 4.0, 3.0, -1.0, 0.5 };
    static const double want7[7] = { 2.0, -5.375, 4.5, 9.25, 1.5, -4.75, 2.0 };
    static const double want2[3] = { 0.75, 2.0, -5.5 };   /* np.convolve([1.5, -2], v, 'same') */
    weft_tensor *v = test_tensor(WEFT_F64, 1, DIMS(3), (const double[]){ 0.5, 2.0, -1.0 });
    for (int call = 0; call < 2; call++) {
        weft_tensor *a = test_tensor(WEFT_F64, 1, call ? DIMS(2) : DIMS(7), av), *r = NULL;
        weft_arg args[2] = { weft_arg_tensor(a), weft_arg_tensor(v) };
        cr_assert_eq(weft_function_call(f, args, 2, &r, 1), 0, "%s", weft_errmsg());
        op_expect_values(r, WEFT_F64, call ? want2 : want7, call ? 3 : 7, "traced convolve");
        weft_tensor_release(r);
        weft_tensor_release(a);
    }
    op_destroy_traced_once(&f);
    weft_tensor_release(v);

    const weft_spec grad_sig[2] = { { WEFT_F64, 1, { WEFT_DIM_ANY } },
                                    { WEFT_F64, 1, { WEFT_DIM_ANY } } };
    grad_op g = { 0, 2, true };
    f = op_signature_function(rt, gradient_body, &g, grad_sig, 2);
    static const double fx[5] = { 0.3, 1.7, -2.2, 4.1, 0.05 }, xx[5] = { 0.0, 0.4, 1.1, 1.15, 3.0 };
    static const double want5[5] = { 6.798701298701298, 0.2012987012987013, 117.22857142857188,
                                     122.62660028449547, -127.00497866287382 };
    /* np.gradient([0.3, 1.7, -2.2], [0, 0.4, 1.1], edge_order=2) */
    static const double want3[3] = { 6.798701298701298, 0.2012987012987013,
                                      -11.344155844155843 };
    for (int call = 0; call < 2; call++) {
        int64_t n = call ? 3 : 5;
        weft_tensor *ft = test_tensor(WEFT_F64, 1, &n, fx), *xt = test_tensor(WEFT_F64, 1, &n, xx);
        weft_arg args[2] = { weft_arg_tensor(ft), weft_arg_tensor(xt) };
        weft_tensor *r = NULL;
        cr_assert_eq(weft_function_call(f, args, 2, &r, 1), 0, "%s", weft_errmsg());
        op_expect_values(r, WEFT_F64, call ? want3 : want5, n, "traced gradient");
        weft_tensor_release(r);
        weft_tensor_release(ft);
        weft_tensor_release(xt);
    }
    op_destroy_traced_once(&f);
}

/* Lengths that only the call reveals: coordinates of another length, a
 * dim below edge_order + 1, trapz coordinates of another length, an empty
 * signal; each fails the traced call with WEFT_EINVAL. */
Test(ops_numpy_calculus, bad_lengths_fail_the_call)
{
    const weft_spec sig[2] = { { WEFT_F64, 1, { WEFT_DIM_ANY } },
                               { WEFT_F64, 1, { WEFT_DIM_ANY } } };
    static const double v[5] = { 1, 2, 4, 8, 16 };
    grad_op g2 = { 0, 2, true }, g1 = { 0, 2, false };
    trapz_op t = { 0, 0, true };
    conv_op c = { true, WEFT_CONVOLVE_VALID };
    struct {
        weft_body_fn body;
        void *user;
        int64_t n0, n1;
        const char *says;
    } cases[4] = {
        { gradient_body, &g2, 4, 5, "coordinates' length is not f's dim" },
        { gradient_body, &g1, 2, 2, "below edge_order + 1" },
        { trapz_body, &t, 3, 4, "x's length is not y's dim" },
        { conv_body, &c, 0, 2, "weft_correlate: a or v is empty" },
    };
    for (int k = 0; k < 4; k++) {
        weft_function *f = op_signature_function(rt, cases[k].body, cases[k].user, sig, 2);
        weft_tensor *a = test_tensor(WEFT_F64, 1, &cases[k].n0, v);
        weft_tensor *b = test_tensor(WEFT_F64, 1, &cases[k].n1, v), *r = NULL;
        weft_arg args[2] = { weft_arg_tensor(a), weft_arg_tensor(b) };
        if (k == 2) {
            /* trapz's y needs two dims for a vector x to be laid along. */
            weft_function_destroy(&f);
            const weft_spec sig2[2] = { { WEFT_F64, 2, { 1, WEFT_DIM_ANY } },
                                        { WEFT_F64, 1, { WEFT_DIM_ANY } } };
            f = op_signature_function(rt, cases[k].body, cases[k].user, sig2, 2);
            weft_tensor_release(a);
            a = test_tensor(WEFT_F64, 2, DIMS(1, 3), v);
            args[0] = weft_arg_tensor(a);
        }
        if (k == 3) {
            /* correlate needs one length known: the filter's. */
            weft_function_destroy(&f);
            const weft_spec sig3[2] = { { WEFT_F64, 1, { WEFT_DIM_ANY } },
                                        { WEFT_F64, 1, { 2 } } };
            f = op_signature_function(rt, cases[k].body, cases[k].user, sig3, 2);
        }
        cr_assert_eq(weft_function_call(f, args, 2, &r, 1), WEFT_EINVAL, "case %d: %s", k,
                     weft_errmsg());
        cr_assert(strstr(weft_errmsg(), cases[k].says), "case %d: %s", k, weft_errmsg());
        cr_assert_null(r);
        /* Eagerly the same call fails as it is made (an empty signal is
         * refused before it is read). */
        weft_tensor *ab[2] = { a, b };
        cr_assert_eq(op_call(rt, cases[k].body, cases[k].user, ab, 2, &r, 1, true), WEFT_EINVAL,
                     "case %d eager: %s", k, weft_errmsg());
        cr_assert_null(r);
        weft_function_destroy(&f);
        weft_tensor_release(a);
        weft_tensor_release(b);
    }
}

static int grad_fns(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    switch (*(const int *)user) {
    case 0: outs[0] = weft_gradient(cx, a[0], a[1], 0, 2); break;
    case 1: outs[0] = weft_trapezoid(cx, a[0], a[1], 0, 0); break;
    case 2: outs[0] = weft_unwrap(cx, a[0], NAN, 0, 2.0); break;
    case 3: outs[0] = weft_convolve(cx, a[0], a[1], WEFT_CONVOLVE_SAME); break;
    default: outs[0] = weft_correlate(cx, a[1], a[0], WEFT_CONVOLVE_FULL); break;
    }
    return weft_ctx_status(cx);
}

/* The gradients of gradient (for f and the coordinates), trapz (for y and
 * x), unwrap, convolve and correlate against central differences. */
Test(ops_numpy_calculus, gradients)
{
    static const double y[5] = { 0.3, 1.7, -2.2, 4.1, 0.05 };
    static const double x[5] = { 0.0, 0.4, 1.1, 1.15, 3.0 };
    static const double p[5] = { 0.1, 1.3, 0.2, -0.6, 0.9 };
    static const double k3[5] = { 0.5, 2.0, -1.0 };
    const grad_arg two[2] = { { 1, { 5 }, y }, { 1, { 5 }, x } };
    const grad_arg conv[2] = { { 1, { 5 }, y }, { 1, { 3 }, k3 } };
    const grad_arg one = { 1, { 5 }, p };
    static const int which[5] = { 0, 1, 2, 3, 4 };
    for (int k = 0; k < 5; k++) {
        grad_case c = { grad_fns, &which[k], k == 2 ? 1 : 2, k == 2 ? 1 : 2 };
        expect_gradients(&c, k == 2 ? &one : k >= 3 ? conv : two, "calculus gradient");
    }
}

static int refused_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    switch (*(const int *)user) {
    case 0: outs[0] = weft_gradient(cx, a[0], NULL, 0, 3); break;
    case 1: outs[0] = weft_gradient(cx, a[0], a[2], 0, 1); break;
    case 2: outs[0] = weft_gradient(cx, a[1], NULL, 0, 2); break;
    case 3: outs[0] = weft_gradient(cx, a[3], NULL, 0, 1); break;
    case 4: outs[0] = weft_unwrap(cx, a[0], NAN, 0, 0.0); break;
    case 5: outs[0] = weft_unwrap(cx, a[0], NAN, 2, 1.0); break;
    case 6: outs[0] = weft_trapezoid(cx, a[0], NULL, 1.0, 1); break;
    case 7: outs[0] = weft_convolve(cx, a[0], a[2], WEFT_CONVOLVE_FULL); break;
    case 8: outs[0] = weft_convolve(cx, a[0], a[4], WEFT_CONVOLVE_FULL); break;
    case 9: outs[0] = weft_correlate(cx, a[0], a[0], (weft_convolve_mode)3); break;
    case 11: outs[0] = weft_ediff1d(cx, a[3], NULL, NULL); break;
    case 12: outs[0] = weft_ediff1d(cx, weft_cast(cx, a[0], WEFT_I32), NULL, a[1]); break;
    default: outs[0] = weft_correlate(cx, a[0], a[5], WEFT_CONVOLVE_FULL); break;
    }
    return weft_ctx_status(cx);
}

Test(ops_numpy_calculus, refusals)
{
    weft_tensor *args[6] = {
        test_tensor(WEFT_F64, 1, DIMS(4), (const double[]){ 1, 2, 3, 4 }),
        test_tensor(WEFT_F64, 1, DIMS(2), (const double[]){ 1, 2 }),
        test_tensor(WEFT_F64, 2, DIMS(2, 2), (const double[]){ 1, 2, 3, 4 }),
        test_tensor(WEFT_BOOL, 1, DIMS(3), (const double[]){ 1, 0, 1 }),
        test_tensor(WEFT_F32, 1, DIMS(2), (const double[]){ 1, 2 }),
        test_tensor(WEFT_F64, 1, DIMS(0), NULL),
    };
    const op_error_case cases[] = {
        { 0, WEFT_EINVAL, "weft_gradient: edge_order 3 is not 1 or 2" },
        { 1, WEFT_ESHAPE, "weft_gradient: spacing f64[2,2] is not a scalar or a vector" },
        { 2, WEFT_EINVAL, "weft_gradient: f's dim 2 along axis 0 is below edge_order + 1 = 3" },
        { 3, WEFT_EDTYPE, "weft_gradient" },
        { 4, WEFT_EINVAL, "weft_unwrap: period 0 is not finite and > 0" },
        { 5, WEFT_EINVAL, "weft_unwrap: axis 2 is not in [-1, 1)" },
        { 6, WEFT_EINVAL, "weft_trapezoid: axis 1 is not in [-1, 1)" },
        { 7, WEFT_ESHAPE, "weft_convolve: v f64[2,2] is not a vector" },
        { 8, WEFT_EDTYPE, "weft_convolve" },
        { 9, WEFT_EINVAL, "weft_correlate: mode 3 is not a weft_convolve_mode" },
        { 10, WEFT_EINVAL, "weft_correlate: v is empty" },
        { 11, WEFT_EDTYPE, "weft_ediff1d: ary bool[3] is not a number" },
        { 12, WEFT_EDTYPE, "weft_ediff1d: to_begin f64[2] does not cast to ary's i32" },
    };
    op_expect_errors(rt, refused_body, cases, 13, args, 6);
    for (int k = 0; k < 6; k++)
        weft_tensor_release(args[k]);
}

static int any_rank_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    switch (*(const int *)user) {
    case 0: outs[0] = weft_trapezoid(cx, a[0], NULL, 1.0, 0); break;
    case 1: outs[0] = weft_gradient(cx, a[0], NULL, 0, 1); break;
    default: outs[0] = weft_unwrap(cx, a[0], NAN, 0, 1.0); break;
    }
    return weft_ctx_status(cx);
}

/* A rank unknown while tracing is refused naming the operand. */
Test(ops_numpy_calculus, unknown_ranks_name_the_operand)
{
    const weft_spec any = { WEFT_F64, WEFT_RANK_ANY, { 0 } };
    static const char *says[3] = { "weft_trapezoid: the rank of y is unknown while tracing",
                                   "weft_gradient: the rank of f is unknown while tracing",
                                   "weft_unwrap: the rank of p is unknown while tracing" };
    weft_tensor *x = test_tensor(WEFT_F64, 1, DIMS(4), (const double[]){ 1, 2, 4, 8 });
    for (int k = 0; k < 3; k++) {
        weft_function *f = op_signature_function(rt, any_rank_body, &k, &any, 1);
        weft_arg arg = weft_arg_tensor(x);
        weft_tensor *r = NULL;
        cr_assert_eq(weft_function_call(f, &arg, 1, &r, 1), WEFT_ESHAPE, "%s", weft_errmsg());
        cr_assert(strstr(weft_errmsg(), says[k]), "%s", weft_errmsg());
        cr_assert_null(r);
        weft_function_destroy(&f);
    }
    weft_tensor_release(x);
}
