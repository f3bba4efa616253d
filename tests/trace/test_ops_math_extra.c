/* The small math compositions xlog1py, xdivy, multiply_no_nan, add_n,
 * polyval, lbeta, zero_fraction, is_non_decreasing and
 * is_strictly_increasing: values against references computed here (the
 * zero guards with NaN and inf on the other side), the same bits eagerly
 * and traced on 1, 2 and 4 workers, and the refused calls. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_math_extra, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

typedef enum mx_op {
    XLOG1PY, XDIVY, MUL_NO_NAN, ADD_N, POLYVAL, LBETA, ZERO_FRACTION, NON_DECREASING,
    STRICTLY_INCREASING
} mx_op;

typedef struct mx_case {
    mx_op op;
    size_t n;   /* add_n and polyval: how many of the arguments */
} mx_case;

/* polyval: args[0] is x, the coefficients follow. */
static int mx_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const mx_case *c = user;
    switch (c->op) {
    case XLOG1PY: outs[0] = weft_xlog1py(cx, a[0], a[1]); break;
    case XDIVY: outs[0] = weft_xdivy(cx, a[0], a[1]); break;
    case MUL_NO_NAN: outs[0] = weft_multiply_no_nan(cx, a[0], a[1]); break;
    case ADD_N: outs[0] = weft_add_n(cx, a, c->n); break;
    case POLYVAL: outs[0] = weft_polyval(cx, a + 1, c->n, a[0]); break;
    case LBETA: outs[0] = weft_lbeta(cx, a[0]); break;
    case ZERO_FRACTION: outs[0] = weft_zero_fraction(cx, a[0]); break;
    case NON_DECREASING: outs[0] = weft_is_non_decreasing(cx, a[0]); break;
    case STRICTLY_INCREASING: outs[0] = weft_is_strictly_increasing(cx, a[0]); break;
    }
    return weft_ctx_status(cx);
}

static weft_tensor *f64_vec(int64_t n, const double *v)
{
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_F64, 1, &n, v, &t), 0, "%s", weft_errmsg());
    return t;
}

static weft_tensor *run(mx_op op, size_t n, weft_tensor *const *args, size_t n_args)
{
    mx_case c = { op, n };
    weft_tensor *out;
    op_results_everywhere(mx_body, &c, args, n_args, &out, 1, "math extra");
    return out;
}

static const double *f64s(const weft_tensor *t)
{
    cr_assert_eq(weft_tensor_dtype(t), WEFT_F64);
    return weft_tensor_data(t);
}

static bool same(double a, double b)
{
    return a == b || (isnan(a) && isnan(b));
}

Test(ops_math_extra, zero_guards_win_over_nan_and_inf)
{
    const double x[6] = { 0, 0, 0, 2, -3, 0.5 };
    const double y[6] = { NAN, INFINITY, 0, 0, 4, -1 };
    weft_tensor *args[2] = { f64_vec(6, x), f64_vec(6, y) };
    weft_tensor *l = run(XLOG1PY, 0, args, 2), *d = run(XDIVY, 0, args, 2);
    weft_tensor *m = run(MUL_NO_NAN, 0, args, 2);
    for (int i = 0; i < 6; i++) {
        double want_l = x[i] == 0 ? 0 : x[i] * log1p(y[i]);
        double want_d = x[i] == 0 ? 0 : x[i] / y[i];
        double want_m = y[i] == 0 ? 0 : x[i] * y[i];
        cr_assert(same(f64s(l)[i], want_l), "xlog1py %d: %g", i, f64s(l)[i]);
        cr_assert(same(f64s(d)[i], want_d), "xdivy %d: %g", i, f64s(d)[i]);
        cr_assert(same(f64s(m)[i], want_m), "multiply_no_nan %d: %g", i, f64s(m)[i]);
    }
    /* The guards: 0 where guarded although the other side is NaN or inf. */
    cr_assert_eq(f64s(l)[0], 0.0);
    cr_assert_eq(f64s(d)[2], 0.0);
    cr_assert_eq(f64s(m)[3], 0.0);
    cr_assert(isinf(f64s(d)[3]), "xdivy(2, 0) is %g", f64s(d)[3]);
    weft_tensor_release(l);
    weft_tensor_release(d);
    weft_tensor_release(m);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

Test(ops_math_extra, add_n_and_polyval)
{
    const double a[3] = { 1, 2, 3 }, b[3] = { 0.5, -1, 1e16 }, c[3] = { -0.5, 4, 1 };
    weft_tensor *args[3] = { f64_vec(3, a), f64_vec(3, b), f64_vec(3, c) };
    weft_tensor *s = run(ADD_N, 3, args, 3);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(f64s(s)[i], (a[i] + b[i]) + c[i], "add_n %d", i);
    weft_tensor_release(s);
    weft_tensor *one = run(ADD_N, 1, args, 1);
    cr_assert(op_same_bits(one, args[0]));
    weft_tensor_release(one);
    /* polyval(x = a; coefficients b, c) = b x + c; and with a third, (b x + c) x + a. */
    weft_tensor *p = run(POLYVAL, 2, args, 3);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(f64s(p)[i], b[i] * a[i] + c[i], "polyval %d", i);
    weft_tensor_release(p);
    weft_tensor *pargs[4] = { args[0], args[1], args[2], args[0] };
    p = run(POLYVAL, 3, pargs, 4);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(f64s(p)[i], (b[i] * a[i] + c[i]) * a[i] + a[i], "polyval3 %d", i);
    weft_tensor_release(p);
    /* No coefficients: zeros of x's shape; one scalar coefficient broadcast. */
    p = run(POLYVAL, 0, args, 1);
    cr_assert_eq(weft_tensor_numel(p), 3);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(f64s(p)[i], 0.0);
    weft_tensor_release(p);
    weft_tensor *sc = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_F64, 0, NULL, (const double[]){ 7 }, &sc), 0);
    weft_tensor *sargs[2] = { args[0], sc };
    p = run(POLYVAL, 1, sargs, 2);
    cr_assert_eq(weft_tensor_numel(p), 3);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(f64s(p)[i], 7.0);
    weft_tensor_release(p);
    weft_tensor_release(sc);
    for (int i = 0; i < 3; i++)
        weft_tensor_release(args[i]);
}

Test(ops_math_extra, lbeta_of_rows)
{
    const double x[2][3] = { { 2, 3, 1 }, { 0.5, 0.5, 1 } };
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_F64, 2, (const int64_t[]){ 2, 3 }, x, &t), 0);
    weft_tensor *out = run(LBETA, 0, &t, 1);
    /* B(2, 3, 1) = G(2) G(3) G(1) / G(6) = 2 / 120; B(.5, .5, 1) = G(.5)^2 G(1)
     * / G(2) = pi. */
    const double want[2] = { log(2.0 / 120), log(M_PI) };
    cr_assert_eq(weft_tensor_rank(out), 1);
    for (int i = 0; i < 2; i++)
        cr_assert(fabs(f64s(out)[i] - want[i]) < 1e-14, "lbeta row %d: %.17g, expected %.17g",
                  i, f64s(out)[i], want[i]);
    weft_tensor_release(out);
    weft_tensor_release(t);
}

Test(ops_math_extra, zero_fraction_and_order_tests)
{
    int32_t v[8] = { 0, 1, 0, 5, 0, 0, 7, 9 };
    int64_t n = 8;
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_I32, 1, &n, v, &t), 0);
    weft_tensor *z = run(ZERO_FRACTION, 0, &t, 1);
    cr_assert_eq(weft_tensor_dtype(z), WEFT_F32);
    cr_assert_eq(((const float *)weft_tensor_data(z))[0], 0.5f);
    weft_tensor_release(z);
    weft_tensor_release(t);
    /* [[1, 2], [2, 3]] is non-decreasing, not strictly increasing; a NaN
     * breaks both; fewer than two elements pass. */
    const double rows[4][4] = { { 1, 2, 2, 3 }, { 1, 2, 3, 4 }, { 1, NAN, 3, 4 }, { 2, 1, 3, 4 } };
    const bool want[4][2] = { { true, false }, { true, true }, { false, false }, { false, false } };
    for (int r = 0; r < 4; r++) {
        weft_tensor *m = NULL;
        cr_assert_eq(weft_tensor_create(WEFT_F64, 2, (const int64_t[]){ 2, 2 }, rows[r], &m), 0);
        weft_tensor *nd = run(NON_DECREASING, 0, &m, 1), *si = run(STRICTLY_INCREASING, 0, &m, 1);
        cr_assert_eq(weft_tensor_dtype(nd), WEFT_BOOL);
        cr_assert_eq(weft_tensor_rank(nd), 0);
        cr_assert_eq(*(const uint8_t *)weft_tensor_data(nd), want[r][0], "row %d", r);
        cr_assert_eq(*(const uint8_t *)weft_tensor_data(si), want[r][1], "row %d", r);
        weft_tensor_release(nd);
        weft_tensor_release(si);
        weft_tensor_release(m);
    }
    weft_tensor *single = f64_vec(1, (const double[]){ NAN });
    weft_tensor *ok = run(STRICTLY_INCREASING, 0, &single, 1);
    cr_assert_eq(*(const uint8_t *)weft_tensor_data(ok), 1);
    weft_tensor_release(ok);
    weft_tensor_release(single);
}

typedef enum bad_call { ADD_N_DTYPE, ADD_N_SHAPE, ADD_N_NONE, XDIVY_INT, LBETA_SCALAR,
                        ORDER_BOOL } bad_call;

/* args: f64 [3], f64 [2], i32 [3]. */
static int bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    switch ((bad_call) * (const int *)user) {
    case ADD_N_DTYPE: outs[0] = weft_add_n(cx, (weft_value *const[]){ a[0], a[2] }, 2); break;
    case ADD_N_SHAPE: outs[0] = weft_add_n(cx, (weft_value *const[]){ a[0], a[1] }, 2); break;
    case ADD_N_NONE: outs[0] = weft_add_n(cx, a, 0); break;
    case XDIVY_INT: outs[0] = weft_xdivy(cx, a[2], a[0]); break;
    case LBETA_SCALAR: outs[0] = weft_lbeta(cx, weft_const_f64(cx, 1)); break;
    case ORDER_BOOL: outs[0] = weft_is_non_decreasing(cx, weft_is_nan(cx, a[0])); break;
    }
    return weft_ctx_status(cx);
}

Test(ops_math_extra, refused_calls_name_the_op)
{
    int64_t three = 3;
    weft_tensor *i = NULL;
    cr_assert_eq(weft_tensor_create(WEFT_I32, 1, &three, (const int32_t[]){ 1, 2, 3 }, &i), 0);
    weft_tensor *args[3] = { f64_vec(3, (const double[]){ 1, 2, 3 }),
                             f64_vec(2, (const double[]){ 1, 2 }), i };
    const op_error_case cases[] = {
        { ADD_N_DTYPE, WEFT_EDTYPE, "weft_add_n: input 1 is i32[3], input 0 f64[3]" },
        { ADD_N_SHAPE, WEFT_ESHAPE, "weft_add_n: input 1 is f64[2], input 0 f64[3]" },
        { ADD_N_NONE, WEFT_EINVAL, "weft_add_n: no inputs" },
        { XDIVY_INT, WEFT_EDTYPE, "weft_xdivy: x i32[3] is not f32 or f64" },
        { LBETA_SCALAR, WEFT_ESHAPE, "weft_lbeta: x f64[] is not f32 or f64 of rank 1" },
        { ORDER_BOOL, WEFT_EDTYPE, "weft_is_non_decreasing: x bool[3] is bool" },
    };
    op_expect_errors(rts[1], bad_body, cases, sizeof cases / sizeof *cases, args, 3);
    for (int k = 0; k < 3; k++)
        weft_tensor_release(args[k]);
}
