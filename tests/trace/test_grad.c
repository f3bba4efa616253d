/* weft_gradients: every rule against central differences of the body in
 * f64, eagerly and traced on 1, 2 and 4 workers (the same bits each
 * time); the closed forms of a regression and a softmax cross entropy; a
 * traced training step; dims unknown while tracing; and the errors. */
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "grad_check.h"

TestSuite(grad, .init = suite_runtimes_create, .fini = suite_runtimes_destroy, .timeout = 120);

static const double xs12[12] = { 0.3, -0.7, 1.2, 0.05, -1.4, 0.9,
                                 0.6, -0.2, 1.7, -0.55, 0.15, 0.8 };
static const double ws12[12] = { 0.4, 0.25, -0.6, 1.1, 0.7, -0.35,
                                 -0.9, 0.45, 0.2, -0.15, 1.3, 0.65 };

/* ---- Elementwise ------------------------------------------------------- */

static int unary_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    op_unary_fn f = *(op_unary_fn const *)user;
    outs[0] = f(cx, a[0]);
    return weft_ctx_status(cx);
}

static weft_value *shifted_log(weft_ctx *cx, weft_value *a)
{
    return weft_log(cx, weft_add(cx, a, weft_const_f64(cx, 2.0)));
}

static weft_value *shifted_sqrt(weft_ctx *cx, weft_value *a)
{
    return weft_sqrt(cx, weft_add(cx, weft_square(cx, a), weft_const_f64(cx, 0.5)));
}

static weft_value *log1p_of(weft_ctx *cx, weft_value *a)
{
    return weft_log1p(cx, weft_abs(cx, a));
}

static weft_value *acosh_of(weft_ctx *cx, weft_value *a)
{
    return weft_acosh(cx, weft_add(cx, weft_abs(cx, a), weft_const_f64(cx, 1.5)));
}

static weft_value *scaled_atanh(weft_ctx *cx, weft_value *a)
{
    return weft_atanh(cx, weft_mul(cx, a, weft_const_f64(cx, 0.5)));
}

static weft_value *scaled_asin(weft_ctx *cx, weft_value *a)
{
    return weft_add(cx, weft_asin(cx, weft_mul(cx, a, weft_const_f64(cx, 0.5))),
                    weft_acos(cx, weft_mul(cx, a, weft_const_f64(cx, 0.4))));
}

static weft_value *scaled_erfinv(weft_ctx *cx, weft_value *a)
{
    weft_value *h = weft_mul(cx, a, weft_const_f64(cx, 0.5));
    weft_value *p = weft_add(cx, weft_mul(cx, h, weft_const_f64(cx, 0.5)), weft_const_f64(cx, 0.5));
    return weft_add(cx, weft_erfinv(cx, h), weft_ndtri(cx, p));
}

static weft_value *positive_lgamma(weft_ctx *cx, weft_value *a)
{
    weft_value *p = weft_add(cx, weft_abs(cx, a), weft_const_f64(cx, 0.5));
    return weft_add(cx, weft_lgamma(cx, p), weft_rsqrt(cx, p));
}

static weft_value *bessels(weft_ctx *cx, weft_value *a)
{
    weft_value *p = weft_add(cx, weft_abs(cx, a), weft_const_f64(cx, 0.5));
    weft_value *s = weft_add(cx, weft_bessel_i0(cx, a), weft_bessel_i0e(cx, a));
    s = weft_add(cx, s, weft_bessel_j0(cx, a));
    return weft_add(cx, s, weft_add(cx, weft_bessel_k0(cx, p), weft_bessel_k0e(cx, p)));
}

Test(grad, unary_functions_match_differences)
{
    static const struct { op_unary_fn f; const char *name; } fns[] = {
        { weft_neg, "neg" }, { weft_abs, "abs" }, { shifted_sqrt, "sqrt" }, { weft_exp, "exp" },
        { shifted_log, "log" }, { weft_tanh, "tanh" }, { weft_sigmoid, "sigmoid" },
        { weft_relu, "relu" }, { weft_sin, "sin" }, { weft_cos, "cos" }, { weft_square, "square" },
        { log1p_of, "log1p" }, { weft_expm1, "expm1" }, { weft_tan, "tan" },
        { scaled_asin, "asin + acos" }, { weft_atan, "atan" }, { weft_sinh, "sinh" },
        { weft_cosh, "cosh" }, { weft_asinh, "asinh" }, { acosh_of, "acosh" },
        { scaled_atanh, "atanh" }, { positive_lgamma, "lgamma + rsqrt" }, { weft_erf, "erf" },
        { weft_erfc, "erfc" }, { scaled_erfinv, "erfinv + ndtri" }, { bessels, "bessels" },
        { weft_softplus, "softplus" }, { weft_elu, "elu" }, { weft_gelu, "gelu" },
        { weft_log_sigmoid, "log_sigmoid" }, { weft_silu, "silu" }, { weft_relu6, "relu6" },
    };
    const grad_arg x = { 1, { 12 }, xs12 };
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
        grad_case c = { unary_body, &fns[i].f, 1, 1 };
        expect_gradients(&c, &x, fns[i].name);
    }
}

/* The special functions, on positive arguments where they need them. */
static weft_value *positive(weft_ctx *cx, weft_value *a)
{
    return weft_add(cx, weft_abs(cx, a), weft_const_f64(cx, 0.5));
}

static weft_value *bessels_1(weft_ctx *cx, weft_value *a)
{
    weft_value *p = positive(cx, a);
    weft_value *s = weft_add(cx, weft_bessel_i1(cx, a), weft_bessel_i1e(cx, a));
    s = weft_add(cx, s, weft_add(cx, weft_bessel_j1(cx, a), weft_bessel_y0(cx, p)));
    s = weft_add(cx, s, weft_bessel_y1(cx, p));
    return weft_add(cx, s, weft_add(cx, weft_bessel_k1(cx, p), weft_bessel_k1e(cx, p)));
}

static weft_value *special_others(weft_ctx *cx, weft_value *a)
{
    weft_value *p = positive(cx, a);
    weft_value *s = weft_add(cx, weft_digamma(cx, p), weft_dawsn(cx, a));
    s = weft_add(cx, s, weft_add(cx, weft_expint(cx, p), weft_spence(cx, p)));
    return weft_add(cx, s, weft_add(cx, weft_fresnel_cos(cx, a), weft_fresnel_sin(cx, a)));
}

/* Order 1 Bessel functions at 0, where their rules take the limits. */
static const double with_zeros[12] = { 0.0, -0.7, 1.2, 0.0, -1.4, 0.9,
                                       0.6, -0.2, 1.7, -0.55, 0.0, 0.8 };

Test(grad, special_functions_match_differences)
{
    static const struct { op_unary_fn f; const char *name; } fns[] = {
        { bessels_1, "bessels of order 1, y0" }, { special_others, "digamma, dawsn, expint, "
          "spence, fresnel" },
    };
    const grad_arg xs[2] = { { 1, { 12 }, xs12 }, { 1, { 12 }, with_zeros } };
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
        for (int x = 0; x < 2; x++) {
            grad_case c = { unary_body, &fns[i].f, 1, 1 };
            expect_gradients(&c, &xs[x], fns[i].name);
        }
}

/* The special functions of two and three arguments, with respect to the
 * last one; x0 f64[12] is differentiated, x1 f64[12] is a constant. */
static int special_args_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    int which = *(const int *)user;
    weft_value *x = positive(cx, a[0]), *w = positive(cx, a[1]), *v = NULL;
    switch (which) {
    case 0: v = weft_polygamma(cx, weft_const_f64(cx, 2.0), x); break;
    case 1: v = weft_igamma(cx, w, x); break;
    case 2: v = weft_igammac(cx, weft_add(cx, w, weft_const_f64(cx, 1.0)), x); break;
    case 3: v = weft_zeta(cx, weft_add(cx, w, weft_const_f64(cx, 1.5)), x); break;
    case 4: v = weft_betainc(cx, w, weft_const_f64(cx, 2.5), weft_sigmoid(cx, a[0])); break;
    case 5: v = weft_igamma(cx, w, weft_reduce(cx, WEFT_R_MEAN, x, NULL, 0, false)); break;
    default: break;
    }
    outs[0] = v;
    return weft_ctx_status(cx);
}

Test(grad, special_functions_of_several_arguments_match_differences)
{
    static const char *names[] = { "polygamma", "igamma", "igammac", "zeta", "betainc",
                                   "igamma of a broadcast x" };
    const grad_arg args[2] = { { 1, { 12 }, xs12 }, { 1, { 12 }, ws12 } };
    for (int i = 0; i < (int)(sizeof names / sizeof names[0]); i++) {
        grad_case c = { special_args_body, &i, 2, 1 };
        expect_gradients(&c, args, names[i]);
    }
    /* igamma and igammac in a as well (TensorFlow's IgammaGradA). */
    for (int i = 1; i <= 2; i++) {
        grad_case c = { special_args_body, &i, 2, 2 };
        expect_gradients(&c, args, i == 1 ? "igamma in a and x" : "igammac in a and x");
    }
}

/* Differentiating the arguments TensorFlow has no gradient for. */
static int special_order_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    int which = *(const int *)user;
    weft_value *x = positive(cx, a[0]), *w = positive(cx, a[1]);
    switch (which) {
    case 0: outs[0] = weft_polygamma(cx, weft_floor(cx, w), x); break;   /* n depends on w */
    case 2: outs[0] = weft_betainc(cx, x, w, weft_sigmoid(cx, a[0])); break;
    default: outs[0] = weft_zeta(cx, weft_add(cx, w, weft_const_f64(cx, 1.5)), x); break;
    }
    return weft_ctx_status(cx);
}

static int special_order_case(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    weft_value *g[2];
    if (weft_gradients(cx, special_order_body, user, a, 2, 2, NULL, g) < 0)
        return weft_ctx_status(cx);
    outs[0] = g[0];
    return weft_ctx_status(cx);
}

/* sum(scatter_nd_update(x, at, u) * [1, 2, 3, 4]) and its gradients for x
 * and u. */
static int scatter_rows_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    weft_value *scaled = weft_mul(cx, weft_scatter_nd_update(cx, a[0], a[2], a[1]),
                                  weft_cast(cx, weft_range(cx, WEFT_I64, 1, 5, 1), WEFT_F64));
    outs[0] = weft_sum(cx, scaled, WEFT_ALL_AXES);
    return weft_ctx_status(cx);
}

static int scatter_rows_gradients(weft_ctx *cx, weft_value *const *a, weft_value **outs,
                                  void *user)
{
    return weft_gradients(cx, scatter_rows_body, user, a, 3, 2, NULL, outs);
}

Test(grad, scatter_update_gradients_with_an_update_count_unknown_while_tracing)
{
    /* x f64[4], updates f64[?] at i64[?, 1]: the duplicate tuple's last
     * update lands, and only it gets the gradient; x's replaced elements
     * get none.  Indices of two dims before the tuples, unknown, are
     * refused, naming why. */
    weft_spec sig[3] = { { WEFT_F64, 1, { 4 } }, { WEFT_F64, 1, { WEFT_DIM_ANY } },
                         { WEFT_I64, 2, { WEFT_DIM_ANY, 1 } } };
    weft_function *f = test_function(rt, "scatter_rows", scatter_rows_gradients, NULL, 3, 2, sig,
                                     0);
    const double xv[4] = { 0.5, 1.5, 2.5, 3.5 }, uv[3] = { 10, 20, 30 }, at[3] = { 1, 3, 1 };
    weft_tensor *x = test_tensor(WEFT_F64, 1, (const int64_t[]){ 4 }, xv);
    weft_tensor *u = test_tensor(WEFT_F64, 1, (const int64_t[]){ 3 }, uv);
    weft_tensor *idx = test_tensor(WEFT_I64, 2, (const int64_t[]){ 3, 1 }, at);
    weft_arg args[3] = { weft_arg_tensor(x), weft_arg_tensor(u), weft_arg_tensor(idx) };
    weft_tensor *g[2] = { NULL, NULL };
    cr_assert_eq(weft_function_call(f, args, 3, g, 2), 0, "%s", weft_errmsg());
    static const double want_x[4] = { 1, 0, 3, 0 }, want_u[3] = { 0, 4, 2 };
    for (int i = 0; i < 4; i++)
        cr_expect_eq(test_element(g[0], i), want_x[i], "x [%d]", i);
    for (int i = 0; i < 3; i++)
        cr_expect_eq(test_element(g[1], i), want_u[i], "updates [%d]", i);
    weft_tensor_release(g[0]);
    weft_tensor_release(g[1]);
    weft_function_destroy(&f);
    sig[1] = (weft_spec){ WEFT_F64, 2, { WEFT_DIM_ANY, 1 } };
    sig[2] = (weft_spec){ WEFT_I64, 3, { WEFT_DIM_ANY, 1, 1 } };
    f = test_function(rt, "scatter_grid", scatter_rows_gradients, NULL, 3, 2, sig, 0);
    weft_tensor *u2 = test_tensor(WEFT_F64, 2, (const int64_t[]){ 3, 1 }, uv);
    weft_tensor *idx2 = test_tensor(WEFT_I64, 3, (const int64_t[]){ 3, 1, 1 }, at);
    weft_arg args2[3] = { weft_arg_tensor(x), weft_arg_tensor(u2), weft_arg_tensor(idx2) };
    cr_expect_eq(weft_function_call(f, args2, 3, g, 2), WEFT_EINVAL);
    cr_expect(strstr(weft_errmsg(), "no gradient for scatter_nd_update for its updates when the "
                                    "indices have more than one dim before the tuples"),
              "%s", weft_errmsg());
    weft_function_destroy(&f);
    weft_tensor_release(x);
    weft_tensor_release(u);
    weft_tensor_release(idx);
    weft_tensor_release(u2);
    weft_tensor_release(idx2);
}

Test(grad, special_functions_refuse_the_other_arguments)
{
    const double v[3] = { 3, 1, 2 };
    weft_tensor *args[2] = { test_tensor(WEFT_F64, 1, (const int64_t[]){ 3 }, v),
                             test_tensor(WEFT_F64, 1, (const int64_t[]){ 3 }, v) };
    static const char *want[] = { "no gradient for polygamma with respect to its order n",
                                  "no gradient for betainc with respect to a or b",
                                  "no gradient for zeta with respect to x" };
    static const int which[3] = { 0, 2, 3 };
    for (int i = 0; i < 3; i++) {
        weft_tensor *out = NULL;
        int rc = op_call(rt, special_order_case, (void *)&which[i], args, 2, &out, 1, true);
        cr_expect_eq(rc, WEFT_EINVAL, "%s: %d", want[i], rc);
        cr_expect(strstr(weft_errmsg(), want[i]) != NULL, "message: %s", weft_errmsg());
        weft_tensor_release(out);
    }
    for (int k = 0; k < 2; k++)
        weft_tensor_release(args[k]);
}

static int binary_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    op_binary_fn f = *(op_binary_fn const *)user;
    outs[0] = f(cx, a[0], a[1]);
    return weft_ctx_status(cx);
}

static weft_value *pow_of(weft_ctx *cx, weft_value *a, weft_value *b)
{
    return weft_pow(cx, weft_add(cx, weft_abs(cx, a), weft_const_f64(cx, 0.5)), b);
}

static weft_value *div_of(weft_ctx *cx, weft_value *a, weft_value *b)
{
    return weft_div(cx, a, weft_add(cx, weft_square(cx, b), weft_const_f64(cx, 0.5)));
}

static weft_value *mod_of(weft_ctx *cx, weft_value *a, weft_value *b)
{
    return weft_mod(cx, weft_mul(cx, a, weft_const_f64(cx, 2.5)),
                    weft_add(cx, weft_abs(cx, b), weft_const_f64(cx, 0.5)));
}

Test(grad, binary_ops_and_broadcasting_match_differences)
{
    static const struct { op_binary_fn f; const char *name; } fns[] = {
        { weft_add, "add" }, { weft_sub, "sub" }, { weft_mul, "mul" }, { div_of, "div" },
        { pow_of, "pow" }, { weft_maximum, "maximum" }, { weft_minimum, "minimum" },
        { weft_atan2, "atan2" }, { mod_of, "mod" }, { weft_squared_difference, "sq diff" },
    };
    /* [3,4] with [3,4], with [4] (a row broadcast), with [3,1] and [1]. */
    const grad_arg a = { 2, { 3, 4 }, xs12 };
    const grad_arg bs[4] = { { 2, { 3, 4 }, ws12 }, { 1, { 4 }, ws12 + 2 },
                             { 2, { 3, 1 }, ws12 + 5 }, { 1, { 1 }, ws12 + 7 } };
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
        for (int s = 0; s < 4; s++) {
            grad_case c = { binary_body, &fns[i].f, 2, 2 };
            grad_arg args[2] = { a, bs[s] };
            char what[64];
            snprintf(what, sizeof what, "%s, b of rank %d dim %lld", fns[i].name, bs[s].rank,
                     (long long)bs[s].dims[0]);
            expect_gradients(&c, args, what);
        }
}

static int mixed_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    /* where, casts, a constant operand and an argument used twice. */
    weft_value *x = a[0], *w = a[1];
    weft_value *f32 = weft_cast(cx, weft_mul(cx, x, w), WEFT_F32);
    weft_value *back = weft_cast(cx, weft_exp(cx, f32), WEFT_F64);
    weft_value *pos = weft_gt(cx, x, weft_const_f64(cx, 0.0));
    weft_value *sel = weft_where(cx, pos, weft_mul(cx, x, x), weft_sin(cx, w));
    weft_value *stepped = weft_mul(cx, weft_floor(cx, x), w);
    outs[0] = weft_add(cx, weft_add(cx, back, sel), stepped);
    return weft_ctx_status(cx);
}

Test(grad, where_casts_and_reuse_match_differences)
{
    grad_case c = { mixed_body, NULL, 2, 2 };
    const grad_arg args[2] = { { 1, { 12 }, xs12 }, { 1, { 12 }, ws12 } };
    weft_tensor *ts[2] = { grad_arg_tensor(&args[0], -1, 0), grad_arg_tensor(&args[1], -1, 0) };
    weft_tensor *outs[3];
    cr_assert_eq(op_call(rt, grad_body, &c, ts, 2, outs, 3, true), 0, "%s", weft_errmsg());
    /* Through an f32 exp the differences are too coarse; the closed form
     * instead: d/dx = w exp(x w) + where(x > 0, 2x, 0) + 0. */
    for (int i = 0; i < 12; i++) {
        double x = xs12[i], w = ws12[i], e = (double)expf((float)(x * w));
        cr_expect_float_eq(test_element(outs[1], i), w * e + (x > 0 ? 2 * x : 0), 1e-6, "dx %d", i);
        cr_expect_float_eq(test_element(outs[2], i), x * e + (x > 0 ? 0 : cos(w)) + floor(x),
                           1e-6, "dw %d", i);
    }
    for (int k = 0; k < 3; k++)
        weft_tensor_release(outs[k]);
    weft_tensor_release(ts[0]);
    weft_tensor_release(ts[1]);
}

/* ---- Reductions, shapes, products ------------------------------------- */

/* A weighted sum of op(x): every element of op's result gets its own
 * weight, so that a rule that moves or drops one is seen. */
static weft_value *weighted(weft_ctx *cx, weft_value *v)
{
    weft_spec s;
    if (weft_value_spec(v, &s) == 0 && s.rank == 0)
        return v;
    weft_value *w = weft_sin(cx, weft_add(cx, weft_cumsum(cx, weft_ones_like(cx, v), -1),
                                          weft_const_f64(cx, 0.5)));
    return weft_mul(cx, v, w);
}

/* A constant of dtype dt and shape dims holding v, inside a body. */
static weft_value *const_of(weft_ctx *cx, weft_dtype dt, int rank, const int64_t *dims,
                            const double *v)
{
    weft_tensor *t = test_tensor(dt, rank, dims, v);
    weft_value *c = weft_const_tensor(cx, t);
    weft_tensor_release(t);
    return c;
}

static weft_value *ids_of(weft_ctx *cx, int64_t n, const double *v)
{
    return const_of(cx, WEFT_I64, 1, &n, v);
}

/* The segment, mask and scatter cases of shape_body, from case 39. */
static weft_value *segment_case(weft_ctx *cx, int which, weft_value *x, weft_value *w)
{
    weft_value *wt = weft_transpose(cx, w, NULL);   /* f64[3,4] */
    weft_value *twice = weft_concat(cx, (weft_value *[]){ x, x }, 2, 0);   /* rows tie */
    switch (which) {
    case 39: return weft_unsorted_segment(cx, WEFT_R_MEAN, x, ids_of(cx, 3, (const double[]){
                                              1, 0, -1 }), 2);
    case 40: return weft_unsorted_segment(cx, WEFT_R_MAX, twice, ids_of(cx, 6, (const double[]){
                                              0, 1, 2, 0, 1, -1 }), 3);
    case 41: return weft_unsorted_segment(cx, WEFT_R_MIN, x, ids_of(cx, 3, (const double[]){
                                              1, 0, 1 }), 2);
    case 42: return weft_segment(cx, WEFT_R_SUM, x, ids_of(cx, 3, (const double[]){ 0, 0, 2 }));
    case 43: return weft_segment(cx, WEFT_R_MEAN, x, ids_of(cx, 3, (const double[]){ 0, 0, 1 }));
    case 44: return weft_segment(cx, WEFT_R_MAX, twice, ids_of(cx, 6, (const double[]){
                                     0, 0, 1, 1, 1, 2 }));
    case 45: return weft_segment(cx, WEFT_R_MIN, x, ids_of(cx, 3, (const double[]){ 0, 1, 1 }));
    case 46: return weft_boolean_mask(cx, x, const_of(cx, WEFT_BOOL, 1, (const int64_t[]){ 3 },
                                                      (const double[]){ 1, 0, 1 }), 0);
    case 47: return weft_boolean_mask(cx, x, const_of(cx, WEFT_BOOL, 1, (const int64_t[]){ 4 },
                                                      (const double[]){ 0, 1, 1, 0 }), 1);
    case 48: return weft_boolean_mask(cx, weft_reshape(cx, x, 3, (const int64_t[]){ 2, 3, 2 }),
                                      const_of(cx, WEFT_BOOL, 2, (const int64_t[]){ 3, 2 },
                                               (const double[]){ 1, 0, 0, 1, 1, 1 }), 1);
    case 49: return weft_scatter_nd_add(cx, x, const_of(cx, WEFT_I64, 2, (const int64_t[]){ 3, 1 },
                                                        (const double[]){ 0, 2, 0 }), wt);
    case 50: return weft_scatter_nd_sub(cx, x, const_of(cx, WEFT_I64, 2, (const int64_t[]){ 3, 1 },
                                                        (const double[]){ 1, 1, 2 }), wt);
    case 51: return weft_scatter_nd_update(cx, x, const_of(cx, WEFT_I64, 2, (const int64_t[]){
                                               2, 1 }, (const double[]){ 2, 0 }),
                                           weft_fill(cx, WEFT_F64, 2, (const int64_t[]){ 2, 4 },
                                                     0.5));
    case 52: {
        weft_value *col = weft_reshape(cx, weft_slice(cx, w, NULL, (const int64_t[]){ 3, 1 }, NULL),
                                       1, (const int64_t[]){ 3 });
        return weft_scatter_nd_add(cx, x, const_of(cx, WEFT_I64, 2, (const int64_t[]){ 3, 2 },
                                                   (const double[]){ 0, 1, 2, 3, 0, 1 }), col);
    }
    case 53: {
        /* Each row gathers its own columns, a repeat in the second. */
        weft_value *at = const_of(cx, WEFT_I64, 2, (const int64_t[]){ 3, 3 },
                                  (const double[]){ 3, 0, 1, 1, 1, 2, 2, 0, 3 });
        return weft_gather_ex(cx, x, at, 1, 1);
    }
    case 54: {
        weft_value *at = const_of(cx, WEFT_I32, 3, (const int64_t[]){ 2, 3, 1 },
                                  (const double[]){ 1, 0, 1, 1, 0, 0 });
        return weft_gather_ex(cx, weft_reshape(cx, x, 3, (const int64_t[]){ 2, 3, 2 }), at, 2, 2);
    }
    case 55: return weft_cumulative_logsumexp(cx, x, 1, 0);
    case 56: {
        /* The last row is -inf (the log of no terms): left out of the sum. */
        weft_value *v = weft_cumulative_logsumexp(cx, weft_mul(cx, x, weft_const_f64(cx, 3.0)), 0,
                                                  WEFT_SCAN_EXCLUSIVE | WEFT_SCAN_REVERSE);
        return weft_slice(cx, v, NULL, (const int64_t[]){ 2, WEFT_END }, NULL);
    }
    case 57: {
        weft_value *v = weft_cumulative_logsumexp(cx, x, 1, WEFT_SCAN_EXCLUSIVE);
        return weft_slice(cx, v, (const int64_t[]){ 0, 1 }, NULL, NULL);
    }
    case 58: case 59: {
        /* 70 parts (over the 64 a rule once took), x's rows in turn. */
        weft_value *rows[3], *parts[70];
        weft_unstack(cx, x, 0, 3, rows);
        for (int i = 0; i < 70; i++)
            parts[i] = weft_mul(cx, rows[i % 3], weft_const_f64(cx, 1.0 + i / 3));
        return which == 58 ? weft_concat(cx, parts, 70, 0) : weft_stack(cx, parts, 70, 1);
    }
    case 60: case 61: {
        /* x minus its own values at four places: zeros there, two of them
         * in one column of a segment (that segment passes nothing back). */
        static const double at[12] = { 0.3, 0, 0, 0.05, 0, 0, 0.6, -0.2, 0, 0, 0, 0 };
        weft_value *z = weft_sub(cx, x, const_of(cx, WEFT_F64, 2, (const int64_t[]){ 3, 4 }, at));
        if (which == 60)
            return weft_unsorted_segment(cx, WEFT_R_PROD, z, ids_of(cx, 3, (const double[]){
                                             1, 1, -1 }), 3);
        return weft_segment(cx, WEFT_R_PROD, weft_mul(cx, z, weft_const_f64(cx, 2.0)),
                            ids_of(cx, 3, (const double[]){ 0, 0, 1 }));
    }
    case 62: return weft_scatter_nd_update(cx, x, const_of(cx, WEFT_I64, 2, (const int64_t[]){
                                               3, 1 }, (const double[]){ 2, 0, 2 }),
                                           weft_mul(cx, wt, wt));
    case 63: {
        weft_value *u = weft_reshape(cx, weft_slice(cx, w, NULL, (const int64_t[]){ 2, 2 }, NULL),
                                     1, (const int64_t[]){ 4 });
        return weft_scatter_nd_update(cx, x, const_of(cx, WEFT_I64, 2, (const int64_t[]){ 4, 2 },
                                                      (const double[]){ 0, 1, 2, 3, 0, 1, 1, 1 }),
                                      u);
    }
    case 64: return weft_scatter_nd_max(cx, x, const_of(cx, WEFT_I64, 2, (const int64_t[]){ 3, 1 },
                                                        (const double[]){ 1, 0, 1 }),
                                        weft_mul(cx, wt, weft_const_f64(cx, 1.5)));
    case 68: {
        /* Batch dims before the gathered axis: along axis 2 of [3, 2, 2],
         * along axis 2 of [2, 3, 2] with indices of two dims, along axis
         * 3 of [2, 1, 3, 2] with two batch dims; repeats in each. */
        weft_value *at = const_of(cx, WEFT_I32, 2, (const int64_t[]){ 3, 3 },
                                  (const double[]){ 1, 0, 1, 0, 0, 1, 1, 1, 0 });
        return weft_gather_ex(cx, weft_reshape(cx, x, 3, (const int64_t[]){ 3, 2, 2 }), at, 2, 1);
    }
    case 69: {
        weft_value *at = const_of(cx, WEFT_I64, 3, (const int64_t[]){ 2, 2, 2 },
                                  (const double[]){ 1, 1, 0, 1, 0, 0, 1, 0 });
        return weft_gather_ex(cx, weft_reshape(cx, x, 3, (const int64_t[]){ 2, 3, 2 }), at, 2, 1);
    }
    case 70: {
        weft_value *at = const_of(cx, WEFT_I32, 3, (const int64_t[]){ 2, 1, 3 },
                                  (const double[]){ 0, 1, 1, 1, 1, 0 });
        return weft_gather_ex(cx, weft_reshape(cx, x, 4, (const int64_t[]){ 2, 1, 3, 2 }), at, 3,
                              2);
    }
    case 71: {   /* two dims between the batch and the axis */
        weft_value *at = const_of(cx, WEFT_I32, 2, (const int64_t[]){ 2, 3 },
                                  (const double[]){ 1, 0, 1, 0, 0, 1 });
        return weft_gather_ex(cx, weft_reshape(cx, x, 4, (const int64_t[]){ 2, 3, 1, 2 }), at, 3,
                              1);
    }
    case 72: {   /* a dim after the axis */
        weft_value *at = const_of(cx, WEFT_I32, 2, (const int64_t[]){ 2, 2 },
                                  (const double[]){ 2, 0, 1, 1 });
        return weft_gather_ex(cx, weft_reshape(cx, x, 4, (const int64_t[]){ 2, 1, 3, 2 }), at, 2,
                              1);
    }
    case 66: case 67: {
        /* Pools of one, two and three elements. */
        weft_value *fit[2];
        if (weft_isotonic_regression(cx, x, which == 67, which == 66 ? -1 : 0, fit) < 0)
            return NULL;
        return weft_mul(cx, fit[0], fit[0]);
    }
    case 65: {
        /* Row 2 of x ties with its first update: each gets half. */
        weft_value *row2 = weft_slice(cx, x, (const int64_t[]){ 2, 0 }, NULL, NULL);
        weft_value *w0 = weft_slice(cx, wt, NULL, (const int64_t[]){ 1, 4 }, NULL);
        return weft_scatter_nd_min(cx, x, const_of(cx, WEFT_I64, 2, (const int64_t[]){ 2, 1 },
                                                   (const double[]){ 2, 2 }),
                                   weft_concat(cx, (weft_value *[]){ row2, w0 }, 2, 0));
    }
    default: return NULL;
    }
}

static int shape_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    int which = *(const int *)user;
    weft_value *x = a[0], *w = a[1], *v = NULL;  /* x f64[3,4], w f64[4,3] */
    static const int perm[2] = { 1, 0 }, axes02[2] = { 0, 1 };
    switch (which) {
    case 0: v = weft_reshape(cx, x, 3, (const int64_t[]){ 2, 3, 2 }); break;
    case 1: v = weft_squeeze(cx, weft_expand_dims(cx, weft_transpose(cx, x, perm), 1), 1); break;
    case 2: v = weft_concat(cx, (weft_value *[]){ x, weft_transpose(cx, w, perm), x }, 3, 0); break;
    case 3: v = weft_stack(cx, (weft_value *[]){ x, weft_transpose(cx, w, NULL) }, 2, -1); break;
    case 4: v = weft_slice(cx, x, (const int64_t[]){ 1, -3 }, (const int64_t[]){ WEFT_END, 3 },
                           NULL); break;
    case 5: v = weft_tile(cx, x, (const int64_t[]){ 2, 3 }); break;
    case 6: v = weft_broadcast_to(cx, weft_reshape(cx, x, 3, (const int64_t[]){ 3, 1, 4 }), 3,
                                  (const int64_t[]){ 3, 2, 4 }); break;
    case 7: v = weft_cumsum_ex(cx, x, 1, WEFT_SCAN_EXCLUSIVE); break;
    case 8: v = weft_cumsum(cx, x, 0); break;
    case 9: v = weft_sum(cx, x, 1); break;
    case 10: v = weft_reduce(cx, WEFT_R_MEAN, x, axes02, 2, true); break;
    case 11: v = weft_mean(cx, weft_mul(cx, x, x), 0); break;
    case 12: v = weft_reduce_max(cx, weft_mul(cx, x, weft_transpose(cx, w, NULL)), 0); break;
    case 13: v = weft_reduce(cx, WEFT_R_MIN, x, NULL, 0, false); break;
    case 14: v = weft_matmul(cx, x, w); break;
    case 15: v = weft_matmul_ex(cx, x, w, WEFT_TRANSPOSE_A | WEFT_TRANSPOSE_B); break;
    case 16: v = weft_matmul_ex(cx, x, weft_transpose(cx, w, NULL), WEFT_TRANSPOSE_B); break;
    case 17: v = weft_matmul_ex(cx, weft_transpose(cx, x, NULL), w, WEFT_TRANSPOSE_A); break;
    case 18: {
        weft_value *col = weft_slice(cx, w, NULL, (const int64_t[]){ 4, 1 }, NULL);
        v = weft_matmul(cx, x, weft_reshape(cx, col, 1, (const int64_t[]){ 4 }));
        break;
    }
    case 19: {
        weft_value *row = weft_slice(cx, x, NULL, (const int64_t[]){ 1, 4 }, NULL);
        v = weft_matmul(cx, weft_reshape(cx, row, 1, (const int64_t[]){ 4 }), w);
        break;
    }
    case 20: v = weft_matmul(cx, weft_reshape(cx, x, 3, (const int64_t[]){ 3, 1, 4 }), w); break;
    case 21: v = weft_softmax(cx, x, -1); break;
    case 22: v = weft_logsumexp(cx, x, 0, false); break;
    case 23: {
        weft_value *at = weft_cast(cx, weft_fill(cx, WEFT_I64, 1, (const int64_t[]){ 5 }, 2.0),
                                   WEFT_I32);
        v = weft_gather(cx, x, weft_concat(cx, (weft_value *[]){ at, weft_range(cx, WEFT_I32,
                                                                   0, 3, 1) }, 2, 0), 0);
        break;
    }
    case 24: {
        weft_value *at = weft_reshape(cx, weft_range(cx, WEFT_I64, 0, 6, 1), 2,
                                      (const int64_t[]){ 3, 2 });
        v = weft_gather_nd(cx, x, weft_mod(cx, at, weft_const_i64(cx, 3)));
        break;
    }
    case 25: {
        static const int cycle[3] = { 1, 2, 0 };
        v = weft_transpose(cx, weft_reshape(cx, x, 3, (const int64_t[]){ 2, 3, 2 }), cycle);
        break;
    }
    case 26: {
        weft_value *parts[3];
        weft_split(cx, x, 3, (const int64_t[]){ 1, -1, 1 }, 1, parts);
        v = weft_concat(cx, (weft_value *[]){ weft_mul(cx, parts[0], parts[2]), parts[1] }, 2, 1);
        break;
    }
    case 27: {
        weft_value *rows[3];
        weft_unstack(cx, x, 0, 3, rows);
        v = weft_add(cx, weft_mul(cx, rows[0], rows[1]), weft_exp(cx, rows[2]));
        break;
    }
    case 28: v = weft_slice(cx, x, (const int64_t[]){ 2, 0 }, (const int64_t[]){ WEFT_END, 4 },
                            (const int64_t[]){ -2, 3 }); break;
    case 29: v = weft_reverse(cx, weft_slice(cx, x, (const int64_t[]){ 0, 1 }, NULL,
                                             (const int64_t[]){ 2, 2 }), 1); break;
    case 30: v = weft_roll(cx, x, 3, 1); break;
    case 31: {
        /* An odd length, where fftshift and ifftshift differ. */
        weft_value *odd = weft_slice(cx, weft_reshape(cx, x, 1, (const int64_t[]){ 12 }), NULL,
                                     (const int64_t[]){ 11 }, NULL);
        v = weft_fftshift(cx, odd, NULL, 0);
        break;
    }
    case 32: v = weft_repeat(cx, x, 2, 0); break;
    case 33: v = weft_cumprod(cx, weft_add(cx, x, weft_const_f64(cx, 2.0)), 1,
                              WEFT_SCAN_EXCLUSIVE); break;
    case 34: v = weft_reduce(cx, WEFT_R_PROD, x, (const int[]){ 1 }, 1, false); break;
    case 35: v = weft_reduce(cx, WEFT_R_PROD, x, NULL, 0, true); break;
    case 36: v = weft_reduce(cx, WEFT_R_PROD, weft_reshape(cx, x, 3, (const int64_t[]){ 2, 3, 2 }),
                             (const int[]){ 0, 1 }, 2, false); break;
    case 37: {
        /* [[2, 0], [1, 2]] along the last axis of [2,2,3]: 2 twice. */
        weft_value *at = weft_mod(cx, weft_range(cx, WEFT_I32, 2, 6, 1), weft_const_i64(cx, 3));
        at = weft_where(cx, weft_eq(cx, at, weft_const_i64(cx, 2)), weft_const_i64(cx, 2), at);
        at = weft_where(cx, weft_eq(cx, weft_range(cx, WEFT_I32, 0, 4, 1), weft_const_i64(cx, 3)),
                        weft_const_i64(cx, 2), at);
        v = weft_gather(cx, weft_reshape(cx, x, 3, (const int64_t[]){ 2, 2, 3 }),
                        weft_reshape(cx, at, 2, (const int64_t[]){ 2, 2 }), 2);
        break;
    }
    case 38: {
        /* ids [1, 0, -1]: the last row is dropped. */
        weft_value *ids = weft_sub(cx, weft_const_i64(cx, 1), weft_range(cx, WEFT_I32, 0, 3, 1));
        v = weft_unsorted_segment(cx, WEFT_R_SUM, x, ids, 2);
        break;
    }
    default: v = segment_case(cx, which, x, w); break;
    }
    outs[0] = weighted(cx, v);
    return weft_ctx_status(cx);
}

Test(grad, shape_reduction_and_product_rules_match_differences)
{
    static const char *names[] = {
        "reshape", "transpose, expand_dims, squeeze", "concat", "stack", "slice", "tile",
        "broadcast_to", "exclusive cumsum", "cumsum", "sum", "mean keepdims", "mean of squares",
        "reduce_max", "reduce_min", "matmul", "matmul TA TB", "matmul TB", "matmul TA",
        "matmul vector b", "matmul vector a", "matmul batch broadcast", "softmax",
        "logsumexp", "gather with repeats", "gather_nd with repeats", "transpose of rank 3",
        "split", "unstack", "slice with negative and strided steps", "reverse of a strided slice",
        "roll", "fftshift", "repeat", "exclusive cumprod", "prod along an axis",
        "prod of everything, keepdims", "prod over two axes", "gather along the last axis",
        "segment sum with a dropped row", "unsorted segment mean with a dropped row",
        "unsorted segment max with ties and a dropped row", "unsorted segment min",
        "sorted segment sum with an empty segment", "sorted segment mean",
        "sorted segment max with ties", "sorted segment min", "boolean_mask",
        "boolean_mask along axis 1", "boolean_mask of two dims along axis 1",
        "scatter_nd_add with a duplicate", "scatter_nd_sub with a duplicate", "scatter_nd_update",
        "scatter_nd_add of elements", "gather with a batch dim", "gather with two batch dims",
        "cumulative_logsumexp", "cumulative_logsumexp exclusive and reversed",
        "cumulative_logsumexp exclusive", "concat of 70 inputs", "stack of 70 inputs",
        "unsorted segment prod with zeros", "sorted segment prod with zeros",
        "scatter_nd_update's updates with a duplicate", "scatter_nd_update of elements",
        "scatter_nd_max with a duplicate", "scatter_nd_min with a tie",
        "isotonic_regression along the last axis", "isotonic_regression decreasing, axis 0",
        "gather along axis 2 after a batch dim", "gather of index pairs along axis 2",
        "gather along axis 3 after two batch dims", "gather two dims after its batch dim",
        "gather before a last dim, after a batch dim",
    };
    const grad_arg args[2] = { { 2, { 3, 4 }, xs12 }, { 2, { 4, 3 }, ws12 } };
    for (int i = 0; i < (int)(sizeof names / sizeof names[0]); i++) {
        grad_case c = { shape_body, &i, 2, 2 };
        expect_gradients(&c, args, names[i]);
    }
}

static int extreme_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    weft_reduction r = *(const weft_reduction *)user;
    static const int last = -1;
    outs[0] = weft_reduce(cx, r, a[0], &last, 1, false);
    return weft_ctx_status(cx);
}

Test(grad, max_and_min_share_among_ties)
{
    /* Rows [2, 5, 5, 1] and [3, 3, 4, 3]: TensorFlow's equal shares. */
    const double v[8] = { 2, 5, 5, 1, 3, 3, 4, 3 };
    static const struct { weft_reduction r; double want[8]; } cases[2] = {
        { WEFT_R_MAX, { 0, 0.5, 0.5, 0, 0, 0, 1, 0 } },
        { WEFT_R_MIN, { 0, 0, 0, 1, 1.0 / 3, 1.0 / 3, 0, 1.0 / 3 } },
    };
    weft_tensor *x = test_tensor(WEFT_F64, 2, (const int64_t[]){ 2, 4 }, v);
    for (int k = 0; k < 2; k++) {
        grad_case c = { extreme_body, &cases[k].r, 1, 1 };
        weft_tensor *outs[2];
        op_results_everywhere(grad_body, &c, &x, 1, outs, 2, "ties");
        for (int i = 0; i < 8; i++)
            cr_expect_float_eq(test_element(outs[1], i), cases[k].want[i], 1e-15,
                               "%s: element %d", k ? "min" : "max", i);
        weft_tensor_release(outs[0]);
        weft_tensor_release(outs[1]);
    }
    weft_tensor_release(x);
}

/* ---- Closed forms and training ---------------------------------------- */

/* The mean squared error of x @ w + b against t: args w f32[3,1], b
 * f32[1], x f32[n,3], t f32[n,1]; only w and b differentiated. */
static int mse_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    weft_value *pred = weft_add(cx, weft_matmul(cx, a[2], a[0]), a[1]);
    outs[0] = weft_mean_squared_error(cx, a[3], pred);
    outs[0] = weft_mean(cx, outs[0], WEFT_ALL_AXES);
    return weft_ctx_status(cx);
}

static const double reg_x[15] = { 1, 0.5, -1, 2, 1, 0, -0.5, 0.25, 1, 0, -1, 2, 1.5, 1, -2 };
static const double reg_t[5] = { 1.5, 4.25, 0.5, -2, 3.5 };

Test(grad, regression_matches_its_closed_form)
{
    const double w[3] = { 0.5, -1, 0.25 }, b[1] = { 0.1 };
    weft_tensor *args[4] = { test_tensor(WEFT_F32, 2, (const int64_t[]){ 3, 1 }, w),
                             test_tensor(WEFT_F32, 1, (const int64_t[]){ 1 }, b),
                             test_tensor(WEFT_F32, 2, (const int64_t[]){ 5, 3 }, reg_x),
                             test_tensor(WEFT_F32, 2, (const int64_t[]){ 5, 1 }, reg_t) };
    grad_case c = { mse_body, NULL, 4, 2 };
    weft_tensor *outs[3];
    op_results_everywhere(grad_body, &c, args, 4, outs, 3, "mse");
    /* d/dw = 2/n x^T r, d/db = 2/n sum(r), r = x w + b - t. */
    double dw[3] = { 0 }, db = 0, loss = 0;
    for (int i = 0; i < 5; i++) {
        double r = b[0] - reg_t[i];
        for (int j = 0; j < 3; j++)
            r += reg_x[3 * i + j] * w[j];
        loss += r * r / 5;
        db += 2 * r / 5;
        for (int j = 0; j < 3; j++)
            dw[j] += 2 * r * reg_x[3 * i + j] / 5;
    }
    test_assert_shape(outs[1], WEFT_F32, 2, (const int64_t[]){ 3, 1 }, "dw");
    test_assert_shape(outs[2], WEFT_F32, 1, (const int64_t[]){ 1 }, "db");
    cr_expect_float_eq(test_element(outs[0], 0), loss, 1e-5, "loss");
    for (int j = 0; j < 3; j++)
        cr_expect_float_eq(test_element(outs[1], j), dw[j], 1e-5, "dw[%d]", j);
    cr_expect_float_eq(test_element(outs[2], 0), db, 1e-5, "db");
    for (int k = 0; k < 4; k++)
        weft_tensor_release(args[k]);
    for (int k = 0; k < 3; k++)
        weft_tensor_release(outs[k]);
}

static int xent_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    weft_value *ce = weft_softmax_cross_entropy_with_logits(cx, a[1], a[0], -1);
    outs[0] = weft_mean(cx, ce, WEFT_ALL_AXES);
    return weft_ctx_status(cx);
}

Test(grad, softmax_cross_entropy_gives_softmax_minus_labels)
{
    const double logits[8] = { 1, 2, 0.5, -1, 3, 3, -2, 0 };
    const double labels[8] = { 0, 1, 0, 0, 0.25, 0.75, 0, 0 };
    weft_tensor *args[2] = { test_tensor(WEFT_F64, 2, (const int64_t[]){ 2, 4 }, logits),
                             test_tensor(WEFT_F64, 2, (const int64_t[]){ 2, 4 }, labels) };
    grad_case c = { xent_body, NULL, 2, 1 };
    weft_tensor *outs[2];
    op_results_everywhere(grad_body, &c, args, 2, outs, 2, "cross entropy");
    for (int r = 0; r < 2; r++) {
        double z = 0;
        for (int j = 0; j < 4; j++)
            z += exp(logits[4 * r + j]);
        for (int j = 0; j < 4; j++)
            cr_expect_float_eq(test_element(outs[1], 4 * r + j),
                               (exp(logits[4 * r + j]) / z - labels[4 * r + j]) / 2, 1e-12,
                               "row %d, class %d", r, j);
    }
    for (int k = 0; k < 2; k++) {
        weft_tensor_release(args[k]);
        weft_tensor_release(outs[k]);
    }
}

/* One step of gradient descent on mse_body: w and b out, traced once. */
static int step_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    weft_value *grads[2];
    if (weft_gradients(cx, mse_body, NULL, a, 4, 2, NULL, grads) < 0)
        return weft_ctx_status(cx);
    weft_value *rate = weft_const_f64(cx, 0.1);
    outs[0] = weft_sub(cx, a[0], weft_mul(cx, rate, grads[0]));
    outs[1] = weft_sub(cx, a[1], weft_mul(cx, rate, grads[1]));
    return weft_ctx_status(cx);
}

Test(grad, a_traced_training_step_fits_a_line)
{
    /* t = x (1, -2, 0.5) + 0.75 exactly: descent finds those. */
    double t[5];
    for (int i = 0; i < 5; i++)
        t[i] = reg_x[3 * i] - 2 * reg_x[3 * i + 1] + 0.5 * reg_x[3 * i + 2] + 0.75;
    static const weft_spec sig[4] = {
        { WEFT_F32, 2, { 3, 1 } }, { WEFT_F32, 1, { 1 } },
        { WEFT_F32, 2, { WEFT_DIM_ANY, 3 } }, { WEFT_F32, 2, { WEFT_DIM_ANY, 1 } } };
    weft_function *f = test_function(rt, "step", step_body, NULL, 4, 2, sig, 0);
    weft_tensor *w = test_tensor(WEFT_F32, 2, (const int64_t[]){ 3, 1 }, (double[3]){ 0 });
    weft_tensor *b = test_tensor(WEFT_F32, 1, (const int64_t[]){ 1 }, (double[1]){ 0 });
    weft_tensor *x = test_tensor(WEFT_F32, 2, (const int64_t[]){ 5, 3 }, reg_x);
    weft_tensor *tt = test_tensor(WEFT_F32, 2, (const int64_t[]){ 5, 1 }, t);
    weft_tensor *x4 = test_tensor(WEFT_F32, 2, (const int64_t[]){ 4, 3 }, reg_x);
    weft_tensor *t4 = test_tensor(WEFT_F32, 2, (const int64_t[]){ 4, 1 }, t);
    for (int it = 0; it < 3000; it++) {
        bool four = it % 2;  /* batches of 4 and 5 rows: one trace for both */
        weft_arg args[4] = { weft_arg_tensor(w), weft_arg_tensor(b),
                             weft_arg_tensor(four ? x4 : x), weft_arg_tensor(four ? t4 : tt) };
        weft_tensor *next[2] = { NULL, NULL };
        cr_assert_eq(weft_function_call(f, args, 4, next, 2), 0, "%s", weft_errmsg());
        weft_tensor_release(w);
        weft_tensor_release(b);
        w = next[0];
        b = next[1];
    }
    const double want[3] = { 1, -2, 0.5 };
    for (int j = 0; j < 3; j++)
        cr_expect_float_eq(test_element(w, j), want[j], 1e-3, "w[%d]", j);
    cr_expect_float_eq(test_element(b, 0), 0.75, 1e-3, "b");
    weft_function_stats st;
    weft_function_get_stats(f, &st);
    cr_expect_eq(st.traces, 1, "traced %llu times", (unsigned long long)st.traces);
    weft_tensor *all[6] = { w, b, x, tt, x4, t4 };
    for (int k = 0; k < 6; k++)
        weft_tensor_release(all[k]);
    weft_function_destroy(&f);
}

/* ---- Dims unknown while tracing --------------------------------------- */

static int bcast_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_sum(cx, weft_square(cx, weft_mul(cx, a[0], a[1])), WEFT_ALL_AXES);
    return weft_ctx_status(cx);
}

static int bcast_grad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    weft_value *g[2];
    (void)user;
    if (weft_gradients(cx, bcast_body, NULL, a, 2, 2, NULL, g) < 0)
        return weft_ctx_status(cx);
    outs[0] = weft_add(cx, weft_sum(cx, g[0], WEFT_ALL_AXES), weft_sum(cx, g[1], WEFT_ALL_AXES));
    return weft_ctx_status(cx);
}

Test(grad, a_broadcast_along_an_unknown_dim_fails_when_it_runs)
{
    /* x, y: f32[?,2].  Equal rows: right; y of one row broadcast along the
     * unknown dim: the sum over it cannot be known while tracing, so the
     * call fails instead of giving y's gradient of the wrong shape. */
    static const weft_spec sig[2] = { { WEFT_F32, 2, { WEFT_DIM_ANY, 2 } },
                                      { WEFT_F32, 2, { WEFT_DIM_ANY, 2 } } };
    weft_function *f = test_function(rt, "bcast", bcast_grad_body, NULL, 2, 1, sig, 0);
    const double v[6] = { 1, 2, 3, 4, 5, 6 };
    weft_tensor *x = test_tensor(WEFT_F32, 2, (const int64_t[]){ 3, 2 }, v);
    weft_tensor *y = test_tensor(WEFT_F32, 2, (const int64_t[]){ 3, 2 }, v);
    weft_tensor *y1 = test_tensor(WEFT_F32, 2, (const int64_t[]){ 1, 2 }, v);
    weft_arg args[2] = { weft_arg_tensor(x), weft_arg_tensor(y) };
    weft_tensor *out = NULL;
    cr_assert_eq(weft_function_call(f, args, 2, &out, 1), 0, "%s", weft_errmsg());
    /* d/dx (x y)^2 = 2 x y^2, d/dy = 2 x^2 y: with x = y, 4 sum(v^3). */
    cr_expect_float_eq(test_element(out, 0), 4 * 441.0, 1e-3);
    weft_tensor_release(out);
    args[1] = weft_arg_tensor(y1);
    out = NULL;
    cr_expect_eq(weft_function_call(f, args, 2, &out, 1), WEFT_EINVAL);
    cr_expect(strstr(weft_errmsg(), "broadcast along a dim unknown while tracing"), "%s",
              weft_errmsg());
    cr_expect_null(out);
    weft_tensor_release(x);
    weft_tensor_release(y);
    weft_tensor_release(y1);
    weft_function_destroy(&f);
}

/* ---- Eager handles ----------------------------------------------------- */

static int sum_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    int which = *(const int *)user;
    outs[0] = which == 0 ? weft_add(cx, a[0], a[1]) : a[0];
    return weft_ctx_status(cx);
}

Test(grad, every_result_is_a_handle_of_its_own)
{
    /* y = x0 + x1: both adjoints are one value inside; y = x0 is an
     * argument; x2 is unconnected.  Each result is released once. */
    weft_ctx *cx = NULL;
    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    const double v[3] = { 1, 2, 3 };
    weft_value *xs[3];
    for (int k = 0; k < 3; k++) {
        weft_tensor *t = test_tensor(WEFT_F64, 1, (const int64_t[]){ 3 }, v);
        xs[k] = weft_eager_value(cx, t);
        weft_tensor_release(t);
    }
    for (int which = 0; which < 2; which++) {
        weft_value *y = NULL, *g[3] = { NULL, NULL, NULL };
        cr_assert_eq(weft_gradients(cx, sum_body, &which, xs, 3, 3, &y, g), 0, "%s",
                     weft_errmsg());
        weft_value *all[4] = { y, g[0], g[1], g[2] };
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++)
                cr_expect(i == j || all[i] != all[j], "results %d and %d share a handle", i, j);
        for (int k = 0; k < 3; k++)
            cr_expect(y != xs[k], "y is argument %d's handle", k);
        double want[3] = { 1, which == 0 ? 1 : 0, 0 };
        for (int k = 0; k < 3; k++) {
            weft_tensor *t = weft_value_tensor(g[k]);
            for (int i = 0; i < 3; i++)
                cr_expect_eq(test_element(t, i), want[k], "which %d: grad %d", which, k);
        }
        for (int i = 0; i < 4; i++)
            weft_value_release(cx, all[i]);
        cr_expect_eq(weft_ctx_status(cx), 0, "%s", weft_errmsg());
    }
    /* The arguments survive their use. */
    cr_expect_eq(test_element(weft_value_tensor(xs[2]), 2), 3);
    weft_eager_end(&cx);
}

/* ---- Errors ------------------------------------------------------------ */

static int returns_int(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_argmax(cx, a[0], 0);
    return weft_ctx_status(cx);
}

static int sorts(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_sort(cx, a[0], 0, false);
    return weft_ctx_status(cx);
}

static int next_after(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_nextafter(cx, a[0], a[1]);
    return weft_ctx_status(cx);
}

static int fails_inside(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_add(cx, a[0], weft_ones_like(cx, a[2]));  /* f64[3] + i32[2] */
    return weft_ctx_status(cx);
}

static int reads_another_context(weft_ctx *cx, weft_value *const *a, weft_value **outs,
                                 void *user)
{
    outs[0] = weft_add(cx, a[0], *(weft_value *const *)user);
    return weft_ctx_status(cx);
}

static int error_case(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    static const weft_body_fn fns[] = { sorts, sorts, returns_int, sorts, fails_inside,
                                        next_after, reads_another_context };
    static const size_t n_wrt[] = { 0, 4, 1, 1, 1, 1, 1 };
    int k = *(const int *)user;
    weft_value *const xs[3] = { k == 3 ? a[2] : a[0], a[1], a[2] };
    weft_value *g[3];
    const void *u = k == 6 ? (const void *)&a[1] : NULL;
    if (weft_gradients(cx, fns[k], (void *)u, xs, 3, n_wrt[k], NULL, g) < 0)
        return weft_ctx_status(cx);
    outs[0] = g[0];
    return weft_ctx_status(cx);
}

Test(grad, errors)
{
    const double v[3] = { 3, 1, 2 };
    weft_tensor *args[3] = { test_tensor(WEFT_F64, 1, (const int64_t[]){ 3 }, v),
                             test_tensor(WEFT_F64, 1, (const int64_t[]){ 3 }, v),
                             test_tensor(WEFT_I32, 1, (const int64_t[]){ 2 }, v) };
    static const op_error_case cases[] = {
        { 0, WEFT_EINVAL, "weft_gradients: n_wrt is 0; it must be 1..n_xs (3)" },
        { 1, WEFT_EINVAL, "n_wrt is 4" },
        { 2, WEFT_EDTYPE, "weft_gradients: the body returns i64[]; only a float result" },
        { 3, WEFT_EDTYPE, "weft_gradients: xs[0] is i32[2]; only floats can be differentiated" },
        { 4, WEFT_ESHAPE, "weft_add" },
        { 5, WEFT_EINVAL, "weft_gradients: no gradient for nextafter" },
        { 6, WEFT_EINVAL, "weft_add" },
    };
    op_expect_errors(rt, error_case, cases, sizeof cases / sizeof cases[0], args, 3);
    for (int k = 0; k < 3; k++)
        weft_tensor_release(args[k]);
}

static int sorted_weights(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    weft_value *w = weft_nextafter(cx, weft_sort(cx, a[1], 0, false), weft_const_f64(cx, 0.0));
    outs[0] = weft_mul(cx, a[0], weft_sub(cx, w, weft_sub(cx, w, weft_sort(cx, a[1], 0, false))));
    return weft_ctx_status(cx);
}

Test(grad, an_op_without_a_rule_is_fine_off_the_path)
{
    /* nextafter has no rule, but it reads a constant here (x1
     * is not differentiated): d/dx0 sum(x0 * (w - (w - sort(x1)))) =
     * sort(x1). */
    const double v[3] = { 3, 1, 2 };
    weft_tensor *args[2] = { test_tensor(WEFT_F64, 1, (const int64_t[]){ 3 }, v),
                             test_tensor(WEFT_F64, 1, (const int64_t[]){ 3 }, v) };
    grad_case c = { sorted_weights, NULL, 2, 1 };
    weft_tensor *outs[2];
    op_results_everywhere(grad_body, &c, args, 2, outs, 2, "sort off the path");
    for (int i = 0; i < 3; i++)
        cr_expect_float_eq(test_element(outs[1], i), i + 1, 1e-12);
    for (int k = 0; k < 2; k++) {
        weft_tensor_release(args[k]);
        weft_tensor_release(outs[k]);
    }
}

/* ---- Gradients of gradients -------------------------------------------- */

static int tanh_of_square(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_mean(cx, weft_tanh(cx, weft_mul(cx, a[0], a[0])), WEFT_ALL_AXES);
    return weft_ctx_status(cx);
}

static int first_derivative(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    return weft_gradients(cx, tanh_of_square, NULL, a, 1, 1, NULL, outs);
}

Test(grad, a_gradient_of_a_gradient_is_the_second_derivative)
{
    /* f = mean(tanh(x^2)) over 3: f'' = (2 s - 8 x^2 s tanh(x^2)) / 3, s = sech^2(x^2). */
    const double v[3] = { 0.5, 1, -1.5 };
    weft_tensor *x = test_tensor(WEFT_F64, 1, (const int64_t[]){ 3 }, v);
    grad_case c = { first_derivative, NULL, 1, 1 };
    weft_tensor *outs[2];
    op_results_everywhere(grad_body, &c, &x, 1, outs, 2, "second derivative");
    for (int i = 0; i < 3; i++) {
        double x2 = v[i] * v[i], s = 1 / (cosh(x2) * cosh(x2));
        cr_expect_float_eq(test_element(outs[0], i), 2 * v[i] * s / 3, 1e-14, "f' %d", i);
        cr_expect_float_eq(test_element(outs[1], i), (2 * s - 8 * x2 * s * tanh(x2)) / 3, 1e-14,
                           "f'' %d", i);
    }
    weft_tensor_release(x);
    weft_tensor_release(outs[0]);
    weft_tensor_release(outs[1]);
}

/* sum(gather(x, [2, 0, 2])^3), and its gradient: a scatter_nd_add of the
 * rows, differentiated in turn (an embedding's gradient's gradient). */
static int gathered_cubes(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    weft_value *ids = ids_of(cx, 3, (const double[]){ 2, 0, 2 });
    weft_value *rows = weft_gather(cx, a[0], ids, 0);
    outs[0] = weft_sum(cx, weft_mul(cx, rows, weft_square(cx, rows)), WEFT_ALL_AXES);
    return weft_ctx_status(cx);
}

static int gathered_cubes_gradient(weft_ctx *cx, weft_value *const *a, weft_value **outs,
                                   void *user)
{
    (void)user;
    weft_value *g;
    if (weft_gradients(cx, gathered_cubes, NULL, a, 1, 1, NULL, &g) < 0)
        return weft_ctx_status(cx);
    outs[0] = weft_mul(cx, g, weft_cos(cx, a[0]));
    return weft_ctx_status(cx);
}

Test(grad, a_gradient_through_a_gathers_gradient)
{
    const grad_arg x = { 2, { 3, 4 }, xs12 };
    grad_case c = { gathered_cubes_gradient, NULL, 1, 1 };
    expect_gradients(&c, &x, "gather's gradient, differentiated");
}

/* ---- Convolutions and pools ------------------------------------------- */

static int nn_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    int which = *(const int *)user;
    weft_value *x = a[0], *f = a[1], *v = NULL;   /* x f64[1,5,5,2], f f64[3,3,2,2] */
    static const int64_t one[2] = { 1, 1 }, two[2] = { 2, 2 }, win[2] = { 2, 3 };
    switch (which) {
    case 0: v = weft_conv2d(cx, x, f, one, WEFT_PADDING_SAME, NULL); break;
    case 1: v = weft_conv2d(cx, x, f, two, WEFT_PADDING_VALID, NULL); break;
    case 2: v = weft_conv2d(cx, x, f, one, WEFT_PADDING_SAME, two); break;
    case 3: v = weft_max_pool2d(cx, x, win, two, WEFT_PADDING_SAME); break;
    case 4: v = weft_max_pool2d(cx, x, win, one, WEFT_PADDING_VALID); break;
    case 5: v = weft_avg_pool2d(cx, x, win, two, WEFT_PADDING_SAME); break;
    case 6: v = weft_avg_pool2d(cx, x, two, one, WEFT_PADDING_VALID); break;
    case 9: v = weft_depthwise_conv2d(cx, x, f, one, WEFT_PADDING_SAME, NULL); break;
    case 10: v = weft_depthwise_conv2d(cx, x, f, two, WEFT_PADDING_VALID, NULL); break;
    case 11: v = weft_depthwise_conv2d(cx, x, f, one, WEFT_PADDING_SAME, two); break;
    case 12: v = weft_resize(cx, x, 7, 4, WEFT_RESIZE_BILINEAR); break;
    case 13: v = weft_resize(cx, x, 3, 8, WEFT_RESIZE_BICUBIC); break;
    case 14: v = weft_resize(cx, x, 2, 3, WEFT_RESIZE_AREA); break;
    case 15: v = weft_resize_ex(cx, x, 3, 2, WEFT_RESIZE_LANCZOS3, true); break;
    case 16: v = weft_resize(cx, x, 8, 7, WEFT_RESIZE_NEAREST); break;
    case 7: v = weft_max_pool2d(cx, x, two, one, WEFT_PADDING_SAME); break;   /* x [2,3,3,2] */
    case 8: v = weft_avg_pool2d(cx, x, win, two, WEFT_PADDING_SAME); break;
    default: break;
    }
    outs[0] = weighted(cx, v);
    return weft_ctx_status(cx);
}

Test(grad, convolution_and_pool_rules_match_differences)
{
    static const char *names[] = { "conv2d SAME", "conv2d VALID stride 2", "conv2d dilated",
                                   "max_pool2d SAME stride 2", "max_pool2d VALID overlapping",
                                   "avg_pool2d SAME stride 2", "avg_pool2d VALID overlapping" };
    double xv[50], fv[36];
    for (int i = 0; i < 50; i++)
        xv[i] = sin(1.7 * i + 0.3);   /* distinct, so that no pool window ties */
    for (int i = 0; i < 36; i++)
        fv[i] = cos(0.9 * i) * 0.5;
    const grad_arg args[2] = { { 4, { 1, 5, 5, 2 }, xv }, { 4, { 3, 3, 2, 2 }, fv } };
    for (int i = 0; i < (int)(sizeof names / sizeof names[0]); i++) {
        grad_case c = { nn_body, &i, 2, i < 3 ? 2 : 1 };
        expect_gradients(&c, args, names[i]);
    }
    static const char *depthwise[3] = { "depthwise SAME", "depthwise VALID stride 2",
                                        "depthwise dilated" };
    for (int i = 9; i <= 11; i++) {
        grad_case c = { nn_body, &i, 2, 2 };
        expect_gradients(&c, args, depthwise[i - 9]);
    }
    static const char *resizes[5] = { "resize bilinear up", "resize bicubic", "resize area down",
                                      "resize lanczos3 antialiased down", "resize nearest up" };
    for (int i = 12; i <= 16; i++) {
        grad_case c = { nn_body, &i, 2, 1 };
        expect_gradients(&c, args, resizes[i - 12]);
    }
    /* Two images: each maximum's gradient in its own image. */
    const grad_arg two_images[2] = { { 4, { 2, 3, 3, 2 }, xv }, args[1] };
    for (int i = 7; i <= 8; i++) {
        grad_case c = { nn_body, &i, 2, 1 };
        expect_gradients(&c, two_images, i == 7 ? "max_pool2d of two images" : "avg_pool2d of two");
    }
}

Test(grad, a_product_with_a_zero_has_the_others_product)
{
    /* d/dx prod(x) = the product of the other elements, 0 included. */
    const double v[4] = { 2, 0, 3, -1.5 }, want[4] = { 0, -9, 0, 0 };
    weft_tensor *x = test_tensor(WEFT_F64, 1, (const int64_t[]){ 4 }, v);
    weft_reduction r = WEFT_R_PROD;
    grad_case c = { extreme_body, &r, 1, 1 };
    weft_tensor *outs[2];
    op_results_everywhere(grad_body, &c, &x, 1, outs, 2, "prod with a zero");
    for (int i = 0; i < 4; i++)
        cr_expect_eq(test_element(outs[1], i), want[i], "element %d", i);
    weft_tensor_release(x);
    weft_tensor_release(outs[0]);
    weft_tensor_release(outs[1]);
}

static int cnn_loss(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    static const int64_t one[2] = { 1, 1 }, two[2] = { 2, 2 };
    weft_value *h = weft_relu(cx, weft_conv2d(cx, a[0], a[1], one, WEFT_PADDING_SAME, NULL));
    h = weft_add(cx, weft_max_pool2d(cx, h, two, two, WEFT_PADDING_SAME),
                 weft_avg_pool2d(cx, h, two, two, WEFT_PADDING_SAME));
    outs[0] = weft_mean(cx, weft_square(cx, h), WEFT_ALL_AXES);
    return weft_ctx_status(cx);
}

static int cnn_grads(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    weft_value *g[2];
    if (weft_gradients(cx, cnn_loss, NULL, a, 2, 2, NULL, g) < 0)
        return weft_ctx_status(cx);
    weft_value *flat = weft_reshape(cx, g[0], 1, (const int64_t[]){ -1 });
    outs[0] = weft_concat(cx, (weft_value *[]){ flat, weft_reshape(cx, g[1], 1,
                                                (const int64_t[]){ -1 }) }, 2, 0);
    return weft_ctx_status(cx);
}

Test(grad, a_cnn_traced_for_any_batch_matches_eager)
{
    /* The pools' and the convolution's rules with the batch unknown while
     * tracing, against the same gradients computed eagerly. */
    static const weft_spec sig[2] = { { WEFT_F32, 4, { WEFT_DIM_ANY, 5, 5, 2 } },
                                      { WEFT_F32, 4, { 3, 3, 2, 3 } } };
    weft_function *f = op_signature_function(rt, cnn_grads, NULL, sig, 2);
    double xv[100], fv[54];
    for (int i = 0; i < 100; i++)
        xv[i] = sin(1.3 * i + 0.1);
    for (int i = 0; i < 54; i++)
        fv[i] = cos(0.7 * i) * 0.4;
    for (int64_t batch = 1; batch <= 2; batch++) {
        weft_tensor *args[2] = { test_tensor(WEFT_F32, 4, (const int64_t[]){ batch, 5, 5, 2 }, xv),
                                 test_tensor(WEFT_F32, 4, (const int64_t[]){ 3, 3, 2, 3 }, fv) };
        weft_arg a[2] = { weft_arg_tensor(args[0]), weft_arg_tensor(args[1]) };
        weft_tensor *traced = NULL, *eager = NULL;
        cr_assert_eq(weft_function_call(f, a, 2, &traced, 1), 0, "%s", weft_errmsg());
        cr_assert_eq(op_call(rt, cnn_grads, NULL, args, 2, &eager, 1, true), 0, "%s",
                     weft_errmsg());
        cr_assert_eq(weft_tensor_numel(traced), batch * 50 + 54);
        for (int64_t i = 0; i < weft_tensor_numel(traced); i++)
            cr_expect_float_eq(test_element(traced, i), test_element(eager, i), 1e-6,
                               "batch %lld, element %lld", (long long)batch, (long long)i);
        weft_tensor_release(traced);
        weft_tensor_release(eager);
        weft_tensor_release(args[0]);
        weft_tensor_release(args[1]);
    }
    op_destroy_traced_once(&f);
}

/* crop_and_resize of images f64[2,4,5,2] in boxes f64[3,4] (one flipped,
 * one reaching outside the image: samples there take the extrapolation
 * value), on images 1, 0, 1; no sample sits on a pixel or an edge, where
 * the gradient is not defined. */
static int crop_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    int which = *(const int *)user;
    static const int64_t sizes[3][2] = { { 3, 3 }, { 1, 1 }, { 2, 4 } };
    weft_value *at = const_of(cx, WEFT_I32, 1, (const int64_t[]){ 3 }, (const double[]){ 1, 0, 1 });
    weft_resize_method m = which == 3 ? WEFT_RESIZE_NEAREST : WEFT_RESIZE_BILINEAR;
    outs[0] = weighted(cx, weft_crop_and_resize(cx, a[0], a[1], at, sizes[which % 3], m, 0.25));
    return weft_ctx_status(cx);
}

Test(grad, crop_and_resize_matches_differences)
{
    static const char *names[4] = { "crop_and_resize 3 x 3", "crop_and_resize of box centres",
                                    "crop_and_resize 2 x 4", "crop_and_resize nearest" };
    double iv[80];
    for (int i = 0; i < 80; i++)
        iv[i] = sin(0.9 * i + 0.2) + 0.1 * (i % 7);
    static const double boxes[12] = { 0.1, 0.15, 0.8, 0.9, 0.7, 0.05, 0.2, 0.6,
                                      -0.2, 0.3, 0.52, 1.3 };
    const grad_arg args[2] = { { 4, { 2, 4, 5, 2 }, iv }, { 2, { 3, 4 }, boxes } };
    for (int i = 0; i < 4; i++) {
        grad_case c = { crop_body, &i, 2, 2 };
        expect_gradients(&c, args, names[i]);
    }
}

/* ---- Linear algebra and sorting ---------------------------------------- */

static int linalg_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    int which = *(const int *)user;
    weft_value *x = a[0], *b = a[1], *v = NULL;   /* x f64[3,3], b f64[3,2] */
    weft_value *m = weft_add(cx, x, weft_mul(cx, weft_eye(cx, 3, 3, WEFT_F64),
                                             weft_const_f64(cx, 3.0)));
    weft_value *spd = weft_add(cx, weft_matmul_ex(cx, x, x, WEFT_TRANSPOSE_B),
                               weft_mul(cx, weft_eye(cx, 3, 3, WEFT_F64), weft_const_f64(cx, 2)));
    weft_value *tk[2];
    switch (which) {
    case 0: v = weft_matrix_inverse(cx, m); break;
    case 1: v = weft_matrix_solve(cx, m, b, false); break;
    case 2: v = weft_matrix_solve(cx, m, b, true); break;
    case 3: v = weft_triangular_solve(cx, m, b, true, false); break;
    case 4: v = weft_triangular_solve(cx, m, b, false, true); break;
    case 5: v = weft_matrix_determinant(cx, m); break;
    case 6: v = weft_cholesky(cx, spd); break;
    case 7: v = weft_cholesky_solve(cx, weft_cholesky(cx, spd), b); break;
    case 8: v = weft_sort(cx, x, 0, false); break;
    case 9: v = weft_sort(cx, weft_concat(cx, (weft_value *[]){ x, b }, 2, 1), -1, true); break;
    case 10: weft_top_k(cx, weft_transpose(cx, x, NULL), 2, true, tk); v = tk[0]; break;
    case 11:   /* a negative determinant: the sign is a constant factor */
        if (weft_slogdet(cx, weft_neg(cx, m), tk) == 0)
            v = weft_mul(cx, tk[1], weft_sub(cx, tk[0], weft_const_f64(cx, 2.0)));
        break;
    case 12:
        if (weft_slogdet(cx, weft_stack(cx, (weft_value *[]){ m, spd }, 2, 0), tk) == 0)
            v = tk[1];
        break;
    case 13: v = weft_matrix_exponential(cx, weft_mul(cx, x, weft_const_f64(cx, 0.5))); break;
    case 14:
        v = weft_matrix_exponential(cx, weft_stack(cx, (weft_value *[]){
            weft_mul(cx, x, weft_const_f64(cx, 0.3)), weft_transpose(cx, spd, NULL) }, 2, 0));
        break;
    case 15: case 16: {
        /* x's rows as the superdiagonal, diagonal (made dominant) and
         * subdiagonal; the first's last and the last's first are not read. */
        weft_value *diags = weft_add(cx, x, const_of(cx, WEFT_F64, 2, (const int64_t[]){ 3, 1 },
                                                     (const double[]){ 0, 4, 0 }));
        weft_value *rhs = which == 15 ? b : weft_reshape(cx, weft_slice(cx, b, NULL,
                                                                        (const int64_t[]){
                                                                            3, 1 }, NULL),
                                                         1, (const int64_t[]){ 3 });
        v = weft_tridiagonal_solve(cx, diags, rhs);
        break;
    }
    case 17: v = weft_matrix_sqrt(cx, spd); break;
    case 18:   /* m is not symmetric: its root is not either */
        v = weft_matrix_sqrt(cx, weft_stack(cx, (weft_value *[]){ spd, m }, 2, 0));
        break;
    case 19: v = weft_matrix_logarithm(cx, spd); break;
    case 20: v = weft_matrix_logarithm(cx, weft_stack(cx, (weft_value *[]){ spd, m }, 2, 0)); break;
    default: break;
    }
    outs[0] = weighted(cx, v);
    return weft_ctx_status(cx);
}

Test(grad, linear_algebra_and_sort_rules_match_differences)
{
    static const char *names[] = { "inverse", "solve", "adjoint solve", "lower solve",
                                   "upper adjoint solve", "determinant", "cholesky",
                                   "cholesky_solve", "sort along axis 0", "sort descending",
                                   "top_k values", "slogdet", "slogdet of a batch",
                                   "matrix_exponential", "matrix_exponential of a batch",
                                   "tridiagonal_solve", "tridiagonal_solve of a vector",
                                   "matrix_sqrt", "matrix_sqrt of a batch",
                                   "matrix_logarithm", "matrix_logarithm of a batch" };
    const grad_arg args[2] = { { 2, { 3, 3 }, xs12 }, { 2, { 3, 2 }, ws12 } };
    for (int i = 0; i < (int)(sizeof names / sizeof names[0]); i++) {
        grad_case c = { linalg_body, &i, 2, 2 };
        expect_gradients(&c, args, names[i]);
    }
}

/* ---- cond and switch_case ---------------------------------------------- */

static int branch_mul(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_mul(cx, a[0], a[1]);
    outs[1] = weft_exp(cx, a[1]);
    return weft_ctx_status(cx);
}

static int branch_sin(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_add(cx, weft_sin(cx, a[0]), weft_square(cx, a[1]));
    outs[1] = weft_mul(cx, a[0], weft_const_f64(cx, 3.0));
    return weft_ctx_status(cx);
}

static int branch_pow(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_mul(cx, weft_square(cx, a[0]), a[1]);
    outs[1] = weft_tanh(cx, weft_add(cx, a[0], a[1]));
    return weft_ctx_status(cx);
}

typedef struct branches {
    weft_function *fn[3];
    int which;   /* 0: cond on the sign of sum(x); 1: switch_case on floor(2 sum(x));
                    2: cond with the arguments swapped */
} branches;

static int branching_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const branches *b = user;
    weft_value *s = weft_sum(cx, a[0], WEFT_ALL_AXES), *r[2];
    int rc;
    if (b->which != 1) {
        /* which 2: the arguments the other way round, so that the one
         * differentiated (x) comes after the one that is not (w). */
        weft_value *args[2] = { a[b->which == 2], a[b->which != 2] };
        rc = weft_cond(cx, weft_gt(cx, s, weft_const_f64(cx, 0.0)), b->fn[0], b->fn[1], args, 2,
                       r, 2);
    } else {
        weft_value *index = weft_cast(cx, weft_floor(cx, weft_mul(cx, s, weft_const_f64(cx, 2))),
                                      WEFT_I32);
        rc = weft_switch_case(cx, index, b->fn, 3, a, 2, r, 2);
    }
    if (rc < 0)
        return rc;
    /* Only the first output's elements weigh in beyond the second's sum. */
    outs[0] = weft_add(cx, weighted(cx, r[0]), weft_sum(cx, r[1], WEFT_ALL_AXES));
    return weft_ctx_status(cx);
}

Test(grad, through_cond_and_switch_case)
{
    /* Eagerly only the chosen branch is differentiated; traced, every
     * branch and a selection.  x's sum picks the branch. */
    branches b = { { test_function(rt, "mul", branch_mul, NULL, 2, 2, NULL, 0),
                     test_function(rt, "sin", branch_sin, NULL, 2, 2, NULL, 0),
                     test_function(rt, "pow", branch_pow, NULL, 2, 2, NULL, 0) }, 0 };
    /* Sums 0.3, -0.7 and 0.7: cond's then, else, then; switch_case's 0,
     * -2 (out of range: the last) and 1, away from every boundary. */
    static const double shifts[3] = { 0.05, -0.2, 0.15 };
    const double base[4] = { 0.3, -0.5, 0.2, 0.1 };
    for (b.which = 0; b.which < 3; b.which++)
        for (int s = 0; s < 3; s++) {
            double x[4];
            for (int i = 0; i < 4; i++)
                x[i] = base[i] + shifts[s];
            const grad_arg args[2] = { { 1, { 4 }, x }, { 1, { 4 }, ws12 } };
            grad_case c = { branching_body, &b, 2, b.which == 2 ? 1 : 2 };
            char what[64];
            snprintf(what, sizeof what, "%s, sum of x %.2f",
                     b.which == 1 ? "switch_case" : b.which ? "cond (w, x), x only" : "cond",
                     0.1 + 4 * shifts[s]);
            expect_gradients(&c, args, what);
        }
    for (int i = 0; i < 3; i++)
        weft_function_destroy(&b.fn[i]);
}

/* ---- Scans, folds and maps --------------------------------------------- */

/* h' = tanh(h w + x_row): a recurrent cell, w a capture. */
static int rnn_cell(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_tanh(cx, weft_add(cx, weft_mul(cx, a[0], a[2]), a[1]));
    return weft_ctx_status(cx);
}

/* Two accumulators, no captures: (s, p) -> (s + x, p * cos(x)). */
static int sum_and_product(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_add(cx, a[0], a[2]);
    outs[1] = weft_mul(cx, a[1], weft_cos(cx, a[3]));
    return weft_ctx_status(cx);
}

static int row_map(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_add(cx, weft_mul(cx, a[0], a[1]), weft_sin(cx, a[0]));
    outs[1] = weft_sum(cx, weft_exp(cx, a[0]), WEFT_ALL_AXES);
    return weft_ctx_status(cx);
}

static int row_exp(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_mul(cx, weft_exp(cx, a[0]), weft_const_f64(cx, 2.0));
    return weft_ctx_status(cx);
}

typedef struct loops {
    weft_function *cell, *pair, *map2, *map1;
    int which;
} loops;

static int loops_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const loops *l = user;
    weft_value *x = a[0], *w = a[1], *h0 = weft_slice(cx, w, NULL, (const int64_t[]){ 3 }, NULL);
    weft_value *r[2] = { NULL, NULL };   /* x f64[4,3], w f64[3] */
    int rc = 0;
    switch (l->which) {
    case 0: rc = weft_scan(cx, l->cell, &h0, 1, &x, 1, &w, 1, r, 0); break;
    case 1: rc = weft_scan(cx, l->cell, &h0, 1, &x, 1, &w, 1, r, WEFT_SCAN_REVERSE); break;
    case 2: rc = weft_foldl(cx, l->cell, NULL, 1, &x, 1, &w, 1, r); break;
    case 3: {
        weft_value *xs[2] = { x, weft_mul(cx, x, weft_const_f64(cx, 0.5)) };
        rc = weft_foldr(cx, l->pair, NULL, 2, xs, 2, NULL, 0, r);
        break;
    }
    case 4: rc = weft_map_ex(cx, l->map2, &x, 1, &w, 1, r, 2, 2); break;
    case 5: r[0] = weft_map(cx, l->map1, x, 4); break;
    case 6: rc = weft_scan(cx, l->cell, NULL, 1, &x, 1, &w, 1, r, WEFT_SCAN_REVERSE); break;
    default: break;
    }
    if (rc < 0)
        return rc;
    outs[0] = weighted(cx, r[0]);
    if (r[1])
        outs[0] = weft_add(cx, weft_sum(cx, outs[0], WEFT_ALL_AXES), weighted(cx, r[1]));
    return weft_ctx_status(cx);
}

Test(grad, through_scans_folds_and_maps)
{
    loops l = { test_function(rt, "cell", rnn_cell, NULL, 3, 1, NULL, 0),
                test_function(rt, "pair", sum_and_product, NULL, 4, 2, NULL, 0),
                test_function(rt, "map2", row_map, NULL, 2, 2, NULL, 0),
                test_function(rt, "map1", row_exp, NULL, 1, 1, NULL, 0), 0 };
    static const char *names[] = { "scan", "scan reversed", "foldl without init",
                                   "foldr of two accumulators", "map_ex", "map",
                                   "scan reversed without init" };
    const grad_arg args[2] = { { 2, { 4, 3 }, xs12 }, { 1, { 3 }, ws12 } };
    for (l.which = 0; l.which < 7; l.which++) {
        grad_case c = { loops_body, &l, 2, 2 };
        expect_gradients(&c, args, names[l.which]);
    }
    weft_function_destroy(&l.cell);
    weft_function_destroy(&l.pair);
    weft_function_destroy(&l.map2);
    weft_function_destroy(&l.map1);
}

static int scan_grad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    return weft_gradients(cx, loops_body, user, a, 2, 2, &outs[0], &outs[1]);
}

/* got's elements equal want's to 1e-12, relative. */
static void expect_close(const weft_tensor *got, const weft_tensor *want, const char *what)
{
    cr_assert_eq(weft_tensor_numel(got), weft_tensor_numel(want), "%s", what);
    for (int64_t i = 0; i < weft_tensor_numel(want); i++)
        cr_expect_float_eq(test_element(got, i), test_element(want, i),
                           1e-12 * (1 + fabs(test_element(want, i))), "%s [%lld]", what,
                           (long long)i);
}

Test(grad, a_scan_or_map_over_rows_unknown_while_tracing)
{
    /* With the rows unknown while tracing, a scan or fold differentiates
     * through one scan_gradient node and a map through one map_gradient
     * node, traced once for every row count; the results match the
     * unrolled tape's (eagerly, the rows are known). */
    loops l = { test_function(rt, "cell", rnn_cell, NULL, 3, 1, NULL, 0),
                test_function(rt, "pair", sum_and_product, NULL, 4, 2, NULL, 0),
                test_function(rt, "map2", row_map, NULL, 2, 2, NULL, 0),
                test_function(rt, "map1", row_exp, NULL, 1, 1, NULL, 0), 0 };
    static const weft_spec sig[2] = { { WEFT_F64, 2, { WEFT_DIM_ANY, 3 } },
                                      { WEFT_F64, 1, { 3 } } };
    static const int kinds[] = { 0, 1, 2, 3, 6, 4, 5 };
    weft_tensor *w = test_tensor(WEFT_F64, 1, (const int64_t[]){ 3 }, ws12);
    for (size_t q = 0; q < sizeof kinds / sizeof kinds[0]; q++) {
        l.which = kinds[q];
        weft_function *f = test_function(rt, "rows", scan_grad_body, &l, 2, 3, sig, 0);
        for (int64_t rows = 1; rows <= 4; rows += 3) {
            weft_tensor *x = test_tensor(WEFT_F64, 2, (const int64_t[]){ rows, 3 }, xs12);
            weft_arg a[2] = { weft_arg_tensor(x), weft_arg_tensor(w) };
            weft_tensor *traced[3] = { NULL, NULL, NULL }, *eager[3], *args[2] = { x, w };
            int rc = weft_function_call(f, a, 2, traced, 3);
            cr_assert_eq(rc, 0, "case %d: %s", l.which, weft_errmsg());
            cr_assert_eq(op_call(rt, scan_grad_body, &l, args, 2, eager, 3, true), 0, "%s",
                         weft_errmsg());
            for (int k = 0; k < 3; k++) {
                char what[64];
                snprintf(what, sizeof what, "case %d, %lld rows: output %d", l.which,
                         (long long)rows, k);
                expect_close(traced[k], eager[k], what);
                weft_tensor_release(traced[k]);
                weft_tensor_release(eager[k]);
            }
            weft_tensor_release(x);
        }
        char *ops = test_ops_text(f);
        cr_expect(strstr(ops, l.which == 4 || l.which == 5 ? "map_gradient" : "scan_gradient"),
                  "%s", ops);
        free(ops);
        weft_function_destroy(&f);
    }
    weft_tensor_release(w);
    weft_function_destroy(&l.cell);
    weft_function_destroy(&l.pair);
    weft_function_destroy(&l.map2);
    weft_function_destroy(&l.map1);
}

/* The rows each "map_gradient" span of the timeline at path covers, counted
 * into seen[0..rows); returns the number of spans. */
static int map_gradient_spans(const char *path, int64_t rows, int *seen)
{
    char *buf = test_read_file(path);
    int spans = 0;
    const char *tag = "\"name\":\"map_gradient\",\"cat\":\"map\"";
    for (const char *p = strstr(buf, tag); p; p = strstr(p + 1, tag)) {
        const char *d = strstr(p, "\"detail\":\"rows ");
        long long a = -1, b = -2;
        cr_assert(d && sscanf(d, "\"detail\":\"rows %lld-%lld", &a, &b) == 2, "%.200s", p);
        cr_assert(0 <= a && a <= b && b < rows, "rows %lld-%lld", a, b);
        for (long long r = a; r <= b; r++)
            seen[r]++;
        spans++;
    }
    free(buf);
    return spans;
}

Test(grad, a_map_gradient_spreads_its_rows_over_the_workers)
{
    /* map_ex over 100 rows unknown while tracing, with a capture whose
     * gradient sums every row's: the same bits on 1, 2 and 4 workers, the
     * values of the eager (unrolled) gradient, the map's
     * parallel_iterations on the node, and every row in exactly one of the
     * node's timeline spans (one weft_parallel_map iteration each). */
    enum { ROWS = 100 };
    double xs[ROWS * 3];
    for (int i = 0; i < ROWS * 3; i++)
        xs[i] = 1.3 * sin(0.37 * i);
    weft_tensor *x = test_tensor(WEFT_F64, 2, (const int64_t[]){ ROWS, 3 }, xs);
    weft_tensor *w = test_tensor(WEFT_F64, 1, (const int64_t[]){ 3 }, ws12);
    static const weft_spec sig[2] = { { WEFT_F64, 2, { WEFT_DIM_ANY, 3 } },
                                      { WEFT_F64, 1, { 3 } } };
    weft_tensor *first[3] = { NULL, NULL, NULL };
    char path[] = "/tmp/weft_map_gradXXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    for (int k = 0; k < N_RT; k++) {
        loops l = { test_function(rts[k], "cell", rnn_cell, NULL, 3, 1, NULL, 0),
                    test_function(rts[k], "pair", sum_and_product, NULL, 4, 2, NULL, 0),
                    test_function(rts[k], "map2", row_map, NULL, 2, 2, NULL, 0),
                    test_function(rts[k], "map1", row_exp, NULL, 1, 1, NULL, 0), 4 };
        weft_function *f = test_function(rts[k], "rows", scan_grad_body, &l, 2, 3, sig, 0);
        bool profiled = rt_workers[k] == 4;
        if (profiled)
            cr_assert_eq(weft_profile_begin(rts[k], path), 0, "%s", weft_errmsg());
        weft_arg a[2] = { weft_arg_tensor(x), weft_arg_tensor(w) };
        weft_tensor *got[3] = { NULL, NULL, NULL };
        cr_assert_eq(weft_function_call(f, a, 2, got, 3), 0, "%s", weft_errmsg());
        if (profiled) {
            cr_assert_eq(weft_profile_end(rts[k]), 0, "%s", weft_errmsg());
            int seen[ROWS] = { 0 };
            cr_expect_gt(map_gradient_spans(path, ROWS, seen), 1);
            for (int r = 0; r < ROWS; r++)
                cr_expect_eq(seen[r], 1, "row %d in %d spans", r, seen[r]);
        }
        char *ops = test_ops_text(f);
        cr_expect(strstr(ops, "map_gradient<map2,mapped=1,pi=2>"), "%s", ops);
        free(ops);
        for (int o = 0; o < 3; o++) {
            if (k == 0) {
                first[o] = got[o];
                continue;
            }
            cr_assert_eq(weft_tensor_numel(got[o]), weft_tensor_numel(first[o]));
            cr_expect_eq(memcmp(weft_tensor_data(got[o]), weft_tensor_data(first[o]),
                                (size_t)weft_tensor_numel(got[o]) * sizeof(double)), 0,
                         "output %d on %u workers differs from 1 worker's", o, rt_workers[k]);
            weft_tensor_release(got[o]);
        }
        weft_function_destroy(&f);
        weft_function_destroy(&l.cell);
        weft_function_destroy(&l.pair);
        weft_function_destroy(&l.map2);
        weft_function_destroy(&l.map1);
    }
    unlink(path);
    loops l = { NULL, NULL, test_function(rt, "map2", row_map, NULL, 2, 2, NULL, 0), NULL, 4 };
    weft_tensor *eager[3], *args[2] = { x, w };
    cr_assert_eq(op_call(rt, scan_grad_body, &l, args, 2, eager, 3, true), 0, "%s",
                 weft_errmsg());
    for (int o = 0; o < 3; o++) {
        char what[16];
        snprintf(what, sizeof what, "output %d", o);
        expect_close(first[o], eager[o], what);
        weft_tensor_release(eager[o]);
        weft_tensor_release(first[o]);
    }
    weft_function_destroy(&l.map2);
    weft_tensor_release(x);
    weft_tensor_release(w);
}

/* ---- while_loop --------------------------------------------------------- */

/* (i, v, x): while i < n: v = sin(v) * x + v / 2, i += 1. */
static int loop_cond(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    outs[0] = weft_lt(cx, a[0], weft_const_i64(cx, *(const int *)user));
    return weft_ctx_status(cx);
}

static int loop_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_add(cx, a[0], weft_const_i64(cx, 1));
    outs[1] = weft_add(cx, weft_mul(cx, weft_sin(cx, a[1]), a[2]),
                       weft_mul(cx, a[1], weft_const_f64(cx, 0.5)));
    outs[2] = a[2];
    return weft_ctx_status(cx);
}

typedef struct looping {
    weft_function *cond, *body;
} looping;

static int while_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const looping *l = user;
    weft_value *vars[3] = { weft_const(cx, WEFT_I64, 0), a[0], a[1] }, *r[3];
    if (weft_while_loop(cx, l->cond, l->body, vars, 3, r) < 0)
        return weft_ctx_status(cx);
    outs[0] = weighted(cx, weft_square(cx, r[1]));
    return weft_ctx_status(cx);
}

/* (i, n, v, x): while i < n: the same step; n is an argument. */
static int n_cond(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_lt(cx, a[0], a[1]);
    return weft_ctx_status(cx);
}

static int n_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    weft_value *step[3];
    loop_body(cx, (weft_value *[]){ a[0], a[2], a[3] }, step, user);
    outs[0] = step[0];
    outs[1] = a[1];
    outs[2] = step[1];
    outs[3] = step[2];
    return weft_ctx_status(cx);
}

/* (x, w, n) -> the loop's weighted result; differentiated in x and w. */
static int n_loss(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const looping *l = user;
    weft_value *vars[4] = { weft_const(cx, WEFT_I64, 0), a[2], a[0], a[1] }, *r[4];
    if (weft_while_loop(cx, l->cond, l->body, vars, 4, r) < 0)
        return weft_ctx_status(cx);
    outs[0] = weighted(cx, weft_square(cx, r[2]));
    return weft_ctx_status(cx);
}

static int n_grad(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    return weft_gradients(cx, n_loss, user, a, 3, 2, &outs[0], &outs[1]);
}

Test(grad, a_traced_while_loop_gradient_serves_every_trip_count)
{
    looping l = { test_function(rt, "n_cond", n_cond, NULL, 4, 1, NULL, 0),
                  test_function(rt, "n_body", n_body, NULL, 4, 4, NULL, 0) };
    const weft_spec sig[3] = { { WEFT_F64, 1, { 4 } }, { WEFT_F64, 1, { 4 } },
                               { WEFT_I64, 0, { 0 } } };
    weft_function *f = test_function(rt, "step", n_grad, &l, 3, 3, sig, 0);
    weft_tensor *x = test_tensor(WEFT_F64, 1, (const int64_t[]){ 4 }, xs12);
    weft_tensor *w = test_tensor(WEFT_F64, 1, (const int64_t[]){ 4 }, ws12);
    for (int64_t trips = 0; trips <= 6; trips += 2) {
        weft_tensor *n = test_tensor(WEFT_I64, 0, NULL, (const double[]){ (double)trips });
        weft_tensor *traced[3], *eager[3], *args[3] = { x, w, n };
        weft_arg a[3] = { weft_arg_tensor(x), weft_arg_tensor(w), weft_arg_tensor(n) };
        cr_assert_eq(weft_function_call(f, a, 3, traced, 3), 0, "%s", weft_errmsg());
        cr_assert_eq(op_call(rt, n_grad, &l, args, 3, eager, 3, true), 0, "%s", weft_errmsg());
        for (int k = 0; k < 3; k++) {
            cr_expect(op_same_bits(traced[k], eager[k]), "%lld trips: output %d",
                      (long long)trips, k);
            weft_tensor_release(traced[k]);
            weft_tensor_release(eager[k]);
        }
        weft_tensor_release(n);
    }
    weft_function_stats st;
    weft_function_get_stats(f, &st);
    cr_expect_eq(st.traces, 1);
    char *ops = test_ops_text(f);
    cr_expect(strstr(ops, "while_loop_gradient"), "%s", ops);
    free(ops);
    weft_tensor_release(x);
    weft_tensor_release(w);
    weft_function_destroy(&f);
    weft_function_destroy(&l.cond);
    weft_function_destroy(&l.body);
}

static int nextafter_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_add(cx, a[0], weft_const_i64(cx, 1));
    outs[1] = weft_nextafter(cx, a[1], a[2]);
    outs[2] = a[2];
    return weft_ctx_status(cx);
}

static int nextafter_case(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    grad_case c = { while_body, user, 2, 2 };
    return grad_body(cx, a, outs, &c);
}

Test(grad, a_while_loop_body_without_a_rule_fails_the_call)
{
    int trips = 2;
    looping l = { test_function(rt, "cond", loop_cond, &trips, 3, 1, NULL, 0),
                  test_function(rt, "stepper", nextafter_body, NULL, 3, 3, NULL, 0) };
    weft_tensor *x = test_tensor(WEFT_F64, 1, (const int64_t[]){ 4 }, xs12), *out[3];
    weft_tensor *args[2] = { x, x };
    for (int eager = 0; eager < 2; eager++) {
        cr_expect_eq(op_call(rt, nextafter_case, &l, args, 2, out, 3, eager), WEFT_EINVAL);
        cr_expect(strstr(weft_errmsg(), "no gradient for nextafter"), "%s", weft_errmsg());
        if (!eager)
            cr_expect(strstr(weft_errmsg(), "the gradient of a while_loop's body_fn 'stepper'"),
                      "%s", weft_errmsg());
    }
    weft_tensor_release(x);
    weft_function_destroy(&l.cond);
    weft_function_destroy(&l.body);
}

Test(grad, through_a_while_loop)
{
    /* Three trips and none, eagerly and traced (one while_loop_gradient
     * node walking the iterations back). */
    for (int trips = 0; trips <= 3; trips += 3) {
        looping l = { test_function(rt, "cond", loop_cond, &trips, 3, 1, NULL, 0),
                      test_function(rt, "body", loop_body, NULL, 3, 3, NULL, 0) };
        const grad_arg args[2] = { { 1, { 4 }, xs12 }, { 1, { 4 }, ws12 } };
        grad_case c = { while_body, &l, 2, 2 };
        expect_gradients(&c, args, trips ? "three trips" : "no trip");
        weft_function_destroy(&l.cond);
        weft_function_destroy(&l.body);
    }
}
