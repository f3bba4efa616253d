/* NumPy's polyadd, polysub, polymul, polyder, polyint, polyval, polyfit
 * and polydiv against NumPy 1.24's printed values (polyfit's within a
 * tolerance: its SVD is LAPACK's gelsd), eagerly and traced on 1, 2 and 4
 * workers with the same bits: NumPy's dtypes, polymul's trimming of
 * leading zeros, empty operands, polyint's constants; one trace for every
 * length; polyfit's lengths checked when the call runs; gradients against
 * central differences; the refusals. */
#include <math.h>
#include <string.h>

#include "grad_check.h"
#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_numpy_poly, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

#define DIMS(...) ((const int64_t[]){ __VA_ARGS__ })

typedef enum poly_op { ADD, SUB, MUL, DER, INT, FIT, VAL, ROOTS } poly_op;

typedef struct poly_case {
    poly_op op;
    int m;              /* DER, INT: the order; FIT: the degree */
    const double *k;    /* INT's constants */
    size_t n_k;
    bool weights;       /* FIT: args[2] is w */
} poly_case;

static int poly_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const poly_case *c = user;
    switch (c->op) {
    case ADD: outs[0] = weft_polyadd(cx, a[0], a[1]); break;
    case SUB: outs[0] = weft_polysub(cx, a[0], a[1]); break;
    case MUL: outs[0] = weft_polymul(cx, a[0], a[1]); break;
    case DER: outs[0] = weft_polyder(cx, a[0], c->m); break;
    case INT: outs[0] = weft_polyint(cx, a[0], c->m, c->k, c->n_k); break;
    case FIT: outs[0] = weft_polyfit(cx, a[0], a[1], c->m, c->weights ? a[2] : NULL); break;
    case VAL: outs[0] = weft_polyval_vector(cx, a[0], a[1]); break;
    case ROOTS: outs[0] = weft_poly(cx, a[0]); break;
    }
    return weft_ctx_status(cx);
}

static size_t args_of(const poly_case *c)
{
    return c->op == DER || c->op == INT || c->op == ROOTS ? 1 : c->op == FIT && c->weights ? 3
                                                                                          : 2;
}

/* c on args everywhere: dtype dt and the n values want, bit for bit. */
static void expect_poly(poly_case c, weft_tensor *const *args, weft_dtype dt,
                        const double *want, int64_t n, const char *what)
{
    weft_tensor *r;
    op_results_everywhere(poly_body, &c, args, args_of(&c), &r, 1, what);
    test_assert_shape(r, dt, 1, &n, what);
    op_expect_values(r, dt, want, n, what);
    weft_tensor_release(r);
}

static void release_all(weft_tensor **t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        weft_tensor_release(t[i]);
}

/* np.polyadd / polysub: the shorter padded in front, a scalar as [x],
 * an empty operand as nothing, the operands' promoted dtype. */
Test(ops_numpy_poly, add_and_sub_are_numpys)
{
    weft_tensor *a[2] = { test_tensor(WEFT_I32, 1, DIMS(2), (const double[]){ 1, 2 }),
                          test_tensor(WEFT_I32, 1, DIMS(3), (const double[]){ 3, 4, 5 }) };
    expect_poly((poly_case){ .op = ADD }, a, WEFT_I32, (const double[]){ 3, 5, 7 }, 3, "i32 add");
    weft_tensor *b[2] = { a[1], a[0] };
    expect_poly((poly_case){ .op = SUB }, b, WEFT_I32, (const double[]){ 3, 3, 3 }, 3, "i32 sub");
    release_all(a, 2);
    weft_tensor *f[2] = { test_tensor(WEFT_F64, 1, DIMS(2), (const double[]){ 1, 2 }),
                          test_tensor(WEFT_F32, 1, DIMS(3), (const double[]){ 3, 4, 5.5 }) };
    expect_poly((poly_case){ .op = SUB }, f, WEFT_F64, (const double[]){ -3, -3, -3.5 }, 3,
                "f64 - f32");
    weft_tensor_release(f[1]);
    f[1] = test_tensor(WEFT_F64, 0, NULL, (const double[]){ 0.5 });
    expect_poly((poly_case){ .op = ADD }, f, WEFT_F64, (const double[]){ 1, 2.5 }, 2, "a scalar");
    weft_tensor_release(f[1]);
    f[1] = test_tensor(WEFT_F64, 1, DIMS(0), NULL);
    expect_poly((poly_case){ .op = SUB }, f, WEFT_F64, (const double[]){ 1, 2 },
                2, "minus nothing");
    release_all(f, 2);
}

/* np.polymul: NumPy's poly1d trims leading zeros, so [0, 0, 1, 2] times
 * [0, 1, 1] is [1, 3, 2], and all-zero or empty operands read as [0]. */
Test(ops_numpy_poly, mul_is_numpys)
{
    weft_tensor *a[2] = { test_tensor(WEFT_I64, 1, DIMS(3), (const double[]){ 1, 2, 3 }),
                          test_tensor(WEFT_I64, 1, DIMS(2), (const double[]){ 4, 5 }) };
    expect_poly((poly_case){ .op = MUL }, a, WEFT_I64, (const double[]){ 4, 13, 22, 15 }, 4, "i64");
    release_all(a, 2);
    weft_tensor *f[2] = { test_tensor(WEFT_F32, 1, DIMS(2), (const double[]){ 1.5, -2 }),
                          test_tensor(WEFT_F32, 1, DIMS(3), (const double[]){ 3, 1, 0.5 }) };
    expect_poly((poly_case){ .op = MUL }, f, WEFT_F32, (const double[]){ 4.5, -4.5, -1.25, -1 }, 4,
                "f32");
    release_all(f, 2);
    weft_tensor *z[2] = { test_tensor(WEFT_I32, 1, DIMS(4), (const double[]){ 0, 0, 1, 2 }),
                          test_tensor(WEFT_I32, 1, DIMS(3), (const double[]){ 0, 1, 1 }) };
    expect_poly((poly_case){ .op = MUL }, z, WEFT_I32, (const double[]){ 1, 3, 2 }, 3,
                "leading zeros");
    release_all(z, 2);
    weft_tensor *e[2] = { test_tensor(WEFT_F64, 1, DIMS(2), (const double[]){ 0, -0.0 }),
                          test_tensor(WEFT_F64, 1, DIMS(3), (const double[]){ 1, 2, 3 }) };
    expect_poly((poly_case){ .op = MUL }, e, WEFT_F64, (const double[]){ 0, 0, 0 }, 3, "all zeros");
    weft_tensor_release(e[0]);
    e[0] = test_tensor(WEFT_F64, 1, DIMS(0), NULL);
    expect_poly((poly_case){ .op = MUL }, e, WEFT_F64, (const double[]){ 0, 0, 0 }, 3, "empty");
    weft_tensor_release(e[1]);
    e[1] = test_tensor(WEFT_F64, 1, DIMS(0), NULL);
    expect_poly((poly_case){ .op = MUL }, e, WEFT_F64, (const double[]){ 0 }, 1, "both empty");
    weft_tensor_release(e[0]);
    weft_tensor_release(e[1]);
    e[1] = test_tensor(WEFT_F64, 1, DIMS(3), (const double[]){ 1, 2, 3 });
    e[0] = test_tensor(WEFT_F64, 0, NULL, (const double[]){ -2 });
    expect_poly((poly_case){ .op = MUL }, e, WEFT_F64, (const double[]){ -2, -4, -6 },
                3, "a scalar");
    release_all(e, 2);
}

/* np.polyder (i64 for integers and bool, f64 for floats) and np.polyint
 * (f64) with NumPy's constants. */
Test(ops_numpy_poly, der_and_int_are_numpys)
{
    weft_tensor *f = test_tensor(WEFT_F32, 1, DIMS(4), (const double[]){ 1.5, 2, 3, 4 });
    expect_poly((poly_case){ .op = DER, .m = 1 }, &f, WEFT_F64, (const double[]){ 4.5, 4, 3 }, 3,
                "f32 der");
    expect_poly((poly_case){ .op = DER, .m = 0 }, &f, WEFT_F32, (const double[]){ 1.5, 2, 3, 4 }, 4,
                "der 0");
    expect_poly((poly_case){ .op = DER, .m = 4 }, &f, WEFT_F64, NULL, 0, "der 4");
    expect_poly((poly_case){ .op = DER, .m = 1 << 30 }, &f, WEFT_F64, NULL, 0, "der 2^30");
    weft_tensor_release(f);
    weft_tensor *i = test_tensor(WEFT_I32, 1, DIMS(3), (const double[]){ 3, 2, 1 });
    expect_poly((poly_case){ .op = DER, .m = 2 }, &i, WEFT_I64, (const double[]){ 6 },
                1, "i32 der 2");
    static const double k12[2] = { 1, 2 };
    expect_poly((poly_case){ .op = INT, .m = 2, .k = k12, .n_k = 2 }, &i, WEFT_F64,
                (const double[]){ 0.25, 0.3333333333333333, 0.5, 1, 2 }, 5, "int 2, k 1 2");
    expect_poly((poly_case){ .op = INT, .m = 1 }, &i, WEFT_F64, (const double[]){ 1, 1, 1, 0 },
                4, "int");
    weft_tensor_release(i);
    weft_tensor *b = test_tensor(WEFT_BOOL, 1, DIMS(3), (const double[]){ 1, 0, 1 });
    expect_poly((poly_case){ .op = DER, .m = 1 }, &b, WEFT_I64, (const double[]){ 2, 0 },
                2, "bool der");
    weft_tensor_release(b);
    weft_tensor *one = test_tensor(WEFT_I64, 1, DIMS(1), (const double[]){ 1 });
    static const double k5 = 5;
    expect_poly((poly_case){ .op = INT, .m = 3, .k = &k5, .n_k = 1 }, &one, WEFT_F64,
                (const double[]){ 0.16666666666666666, 2.5, 5, 5 }, 4, "int 3, k 5");
    expect_poly((poly_case){ .op = DER, .m = 1 }, &one, WEFT_I64, NULL, 0, "der of a constant");
    weft_tensor_release(one);
    weft_tensor *h = test_tensor(WEFT_F32, 1, DIMS(3), (const double[]){ 1.5, -2, 0.25 });
    static const double k05 = 0.5;
    expect_poly((poly_case){ .op = INT, .m = 1, .k = &k05, .n_k = 1 }, &h, WEFT_F64,
                (const double[]){ 0.5, -1, 0.25, 0.5 }, 4, "f32 int");
    weft_tensor_release(h);
    weft_tensor *e = test_tensor(WEFT_F64, 1, DIMS(0), NULL);
    expect_poly((poly_case){ .op = INT, .m = 1 }, &e, WEFT_F64, (const double[]){ 0 },
                1, "int of []");
    expect_poly((poly_case){ .op = DER, .m = 1 }, &e, WEFT_F64, NULL, 0, "der of []");
    weft_tensor_release(e);
}

/* np.polyval(p, x): NumPy's steps from y = 0 (an infinite x gives NaN),
 * x's dtype (i32 x with i64 p stays i32; f64 p over i32 x gives f64), an
 * empty p gives zeros. */
Test(ops_numpy_poly, polyval_vector_is_numpys)
{
    weft_tensor *a[2] = {
        test_tensor(WEFT_F64, 1, DIMS(4), (const double[]){ 1.5, -2, 0.25, 3 }),
        test_tensor(WEFT_F64, 2, DIMS(2, 2), (const double[]){ 0.5, -1.25, 2, INFINITY }) };
    weft_tensor *r;
    poly_case c = { .op = VAL };
    op_results_everywhere(poly_body, &c, a, 2, &r, 1, "polyval");
    test_assert_shape(r, WEFT_F64, 2, DIMS(2, 2), "polyval");
    op_expect_values(r, WEFT_F64, (const double[]){ 2.8125, -3.3671875, 7.5, NAN }, 4,
                     "polyval");
    weft_tensor_release(r);
    release_all(a, 2);
    weft_tensor *i[2] = { test_tensor(WEFT_I64, 1, DIMS(3), (const double[]){ 2, 0, -1 }),
                          test_tensor(WEFT_I32, 1, DIMS(2), (const double[]){ 3, -2 }) };
    expect_poly(c, i, WEFT_I32, (const double[]){ 17, 7 }, 2, "integers");
    weft_tensor_release(i[0]);
    i[0] = test_tensor(WEFT_F64, 1, DIMS(2), (const double[]){ 0.5, 1 });
    expect_poly(c, i, WEFT_F64, (const double[]){ 2.5, 0 }, 2, "f64 p, i32 x");
    weft_tensor_release(i[0]);
    i[0] = test_tensor(WEFT_F64, 1, DIMS(0), NULL);
    expect_poly(c, i, WEFT_I32, (const double[]){ 0, 0 }, 2, "no coefficients");
    release_all(i, 2);
}

/* Element i of r within a relative tol of want[i]. */
static void expect_close(const weft_tensor *r, const double *want, int64_t n, double tol,
                         const char *what)
{
    cr_assert_eq(weft_tensor_dtype(r), WEFT_F64, "%s: dtype", what);
    cr_assert_eq(weft_tensor_numel(r), n, "%s: %lld elements", what,
                 (long long)weft_tensor_numel(r));
    for (int64_t i = 0; i < n; i++) {
        double got = test_element(r, i);
        cr_assert(fabs(got - want[i]) <= tol * fmax(1.0, fabs(want[i])),
                  "%s[%lld] is %.17g, not %.17g", what, (long long)i, got, want[i]);
    }
}

/* c (a FIT) on args everywhere against NumPy's coefficients. */
static void expect_fit(poly_case c, weft_tensor *const *args, const double *want, int rank,
                       const int64_t *dims, double tol, const char *what)
{
    weft_tensor *r;
    op_results_everywhere(poly_body, &c, args, args_of(&c), &r, 1, what);
    test_assert_shape(r, WEFT_F64, rank, dims, what);
    expect_close(r, want, rank == 1 ? dims[0] : dims[0] * dims[1], tol, what);
    weft_tensor_release(r);
}

static const double FIT_X[6] = { 0, 1, 2, 3, 4, 5 };
static const double FIT_Y[6] = { 1, 2.9, 9.1, 19, 33.2, 51 };

/* np.polyfit: a quadratic, a line per column, weights, f32 data (f64
 * out), an underdetermined fit (the minimum-norm solution) and an
 * ill-conditioned one that the column scaling serves. */
Test(ops_numpy_poly, fit_is_numpys)
{
    weft_tensor *a[3] = { test_tensor(WEFT_F64, 1, DIMS(6), FIT_X),
                          test_tensor(WEFT_F64, 1, DIMS(6), FIT_Y),
                          test_tensor(WEFT_F64, 1, DIMS(6), (const double[]){ 1, 2, 1, 2, 1,
                                                                               2 }) };
    expect_fit((poly_case){ .op = FIT, .m = 2 }, a, (const double[]){ 1.991071428571429,
                                                           0.06750000000000286,
                                                           0.9464285714285716 },
               1, DIMS(3), 1e-12, "quadratic");
    expect_fit((poly_case){ .op = FIT, .m = 2, .weights = true }, a,
               (const double[]){ 1.992082018927447, 0.06482649842269751, 0.8962776025236782 },
               1, DIMS(3), 1e-12, "weighted");
    double yy[12];
    for (int i = 0; i < 6; i++) {
        yy[2 * i] = FIT_Y[i];
        yy[2 * i + 1] = 2 * FIT_Y[i] + 1;
    }
    weft_tensor_release(a[1]);
    a[1] = test_tensor(WEFT_F64, 2, DIMS(6, 2), yy);
    expect_fit((poly_case){ .op = FIT, .m = 1 }, a,
               (const double[]){ 10.022857142857141, 20.045714285714283, -5.690476190476186,
                                 -10.380952380952378 },
               2, DIMS(2, 2), 1e-12, "two columns");
    release_all(a, 3);
    weft_tensor *s[2] = { test_tensor(WEFT_F32, 1, DIMS(3), (const double[]){ 0, 1, 2 }),
                          test_tensor(WEFT_I32, 1, DIMS(3), (const double[]){ 1, 3, 5 }) };
    expect_fit((poly_case){ .op = FIT, .m = 1 }, s, (const double[]){ 2, 1 }, 1, DIMS(2), 1e-12,
               "f32 and i32");
    release_all(s, 2);
    weft_tensor *u[2] = { test_tensor(WEFT_F64, 1, DIMS(3), (const double[]){ 0, 1, 2 }),
                          test_tensor(WEFT_F64, 1, DIMS(3), (const double[]){ 1, 0, 3 }) };
    expect_fit((poly_case){ .op = FIT, .m = 3 }, u,
               (const double[]){ 0.5546218487394958, 0.33613445378151136, -1.8907563025210072,
                                 0.9999999999999998 },
               1, DIMS(4), 1e-10, "underdetermined");
    release_all(u, 2);
    weft_tensor *c[2] = {
        test_tensor(WEFT_F64, 1, DIMS(5), (const double[]){ 1000, 1001, 1002, 1003, 1005 }),
        test_tensor(WEFT_F64, 1, DIMS(5), (const double[]){ 1, 2, 0, 3, 4 }) };
    expect_fit((poly_case){ .op = FIT, .m = 3 }, c,
               (const double[]){ -5.6603782987819977e-02, 1.7037334364751527e+02,
                                 -1.7093617525894401e+05, 5.7166615879572228e+07 },
               1, DIMS(4), 1e-6, "ill-conditioned");
    release_all(c, 2);
    /* f32 x: NumPy's rcond is 4 f32 eps, which cuts the smallest singular
     * value (the f64 fit is [8.3e7, -2.5e8, 2.5e8, -8.4e7]). */
    weft_tensor *r[2] = {
        test_tensor(WEFT_F32, 1, DIMS(4), (const double[]){ 1, 1.001, 1.002, 1.003 }),
        test_tensor(WEFT_F64, 1, DIMS(4), (const double[]){ 1, 2, 3, 4.5 }) };
    expect_fit((poly_case){ .op = FIT, .m = 3 }, r,
               (const double[]){ 62184.320271155535, -61818.32812048333, -62141.056036612536,
                                 61776.08887049611 },
               1, DIMS(4), 1e-6, "f32 rcond");
    release_all(r, 2);
}

/* Lengths unknown while tracing: one trace serves polymul's and polyadd's
 * operands of any length (with any number of leading zeros). */
Test(ops_numpy_poly, one_trace_for_every_length)
{
    const weft_spec two[2] = { { WEFT_I64, 1, { WEFT_DIM_ANY } },
                               { WEFT_I64, 1, { WEFT_DIM_ANY } } };
    /* The calls take the last np[call] and nq[call] of p and q. */
    static const double p[5] = { 0, 0, 1, 2, 3 }, q[4] = { 0, 4, 5, 6 };
    static const int64_t np_[3] = { 5, 4, 1 }, nq[3] = { 4, 3, 1 };
    static const double mul[3][5] = { { 4, 13, 28, 27, 18 }, { 4, 13, 28, 27, 18 }, { 18 } };
    static const int64_t n_mul[3] = { 5, 5, 1 };
    static const double add[3][5] = { { 0, 0, 5, 7, 9 }, { 0, 5, 7, 9 }, { 9 } };
    static const int64_t n_add[3] = { 5, 4, 1 };
    for (int op = 0; op < 2; op++) {
        poly_case c = { .op = op ? ADD : MUL };
        weft_function *f = op_signature_function(rt, poly_body, &c, two, 2);
        for (int call = 0; call < 3; call++) {
            weft_tensor *x = test_tensor(WEFT_I64, 1, &np_[call], p + 5 - np_[call]);
            weft_tensor *y = test_tensor(WEFT_I64, 1, &nq[call], q + 4 - nq[call]);
            weft_arg args[2] = { weft_arg_tensor(x), weft_arg_tensor(y) };
            weft_tensor *r = NULL;
            cr_assert_eq(weft_function_call(f, args, 2, &r, 1), 0, "%s", weft_errmsg());
            op_expect_values(r, WEFT_I64, op ? add[call] : mul[call],
                             op ? n_add[call] : n_mul[call], op ? "traced add" : "traced mul");
            weft_tensor_release(r);
            weft_tensor_release(x);
            weft_tensor_release(y);
        }
        op_destroy_traced_once(&f);
    }
    /* polyder twice of [1, 2, 3, 4, 5] and of [1, 2, 3]. */
    const weft_spec one = { WEFT_F64, 1, { WEFT_DIM_ANY } };
    poly_case der = { .op = DER, .m = 2 };
    weft_function *f = op_signature_function(rt, poly_body, &der, &one, 1);
    static const double d5[3] = { 12, 12, 6 }, d3[1] = { 2 };
    for (int call = 0; call < 2; call++) {
        int64_t n = call ? 3 : 5;
        weft_tensor *x = test_tensor(WEFT_F64, 1, &n, (const double[]){ 1, 2, 3, 4, 5 });
        weft_arg arg = weft_arg_tensor(x);
        weft_tensor *r = NULL;
        cr_assert_eq(weft_function_call(f, &arg, 1, &r, 1), 0, "%s", weft_errmsg());
        op_expect_values(r, WEFT_F64, call ? d3 : d5, call ? 1 : 3, "traced der");
        weft_tensor_release(r);
        weft_tensor_release(x);
    }
    op_destroy_traced_once(&f);
}

/* polyfit's y and w of another length than x fail the call when it runs
 * (their lengths unknown while tracing), eagerly at once. */
Test(ops_numpy_poly, fit_lengths_checked_when_the_call_runs)
{
    const weft_spec sig[3] = { { WEFT_F64, 1, { 6 } }, { WEFT_F64, 1, { WEFT_DIM_ANY } },
                               { WEFT_F64, 1, { WEFT_DIM_ANY } } };
    poly_case c = { .op = FIT, .m = 1, .weights = true };
    weft_function *f = op_signature_function(rt, poly_body, &c, sig, 3);
    weft_tensor *x = test_tensor(WEFT_F64, 1, DIMS(6), FIT_X);
    weft_tensor *y6 = test_tensor(WEFT_F64, 1, DIMS(6), FIT_Y);
    weft_tensor *y5 = test_tensor(WEFT_F64, 1, DIMS(5), FIT_Y);
    weft_tensor *w6 = test_tensor(WEFT_F64, 1, DIMS(6), FIT_Y);
    weft_tensor *w5 = test_tensor(WEFT_F64, 1, DIMS(5), FIT_Y);
    weft_tensor *cases[3][3] = { { x, y5, w6 }, { x, y6, w5 }, { x, y6, w6 } };
    static const char *says[2] = { "weft_polyfit: y's length is not x's",
                                   "weft_polyfit: w's length is not x's" };
    for (int k = 0; k < 3; k++) {
        weft_arg args[3] = { weft_arg_tensor(cases[k][0]), weft_arg_tensor(cases[k][1]),
                             weft_arg_tensor(cases[k][2]) };
        weft_tensor *r = NULL;
        int rc = weft_function_call(f, args, 3, &r, 1);
        if (k == 2) {
            cr_assert_eq(rc, 0, "%s", weft_errmsg());
            cr_assert_eq(weft_tensor_numel(r), 2);
            weft_tensor_release(r);
            continue;
        }
        cr_assert_eq(rc, WEFT_EINVAL, "case %d traced: %s", k, weft_err_name(rc));
        cr_assert(strstr(weft_errmsg(), says[k]), "%s", weft_errmsg());
        cr_assert_null(r);
        cr_assert_eq(op_call(rt, poly_body, &c, cases[k], 3, &r, 1, true), WEFT_EINVAL,
                     "case %d eager: %s", k, weft_errmsg());
        cr_assert(strstr(weft_errmsg(), says[k]), "%s", weft_errmsg());
        cr_assert_null(r);
    }
    op_destroy_traced_once(&f);
    weft_tensor *all[5] = { x, y6, y5, w6, w5 };
    release_all(all, 5);
}

/* np.poly of roots: NumPy's printed coefficients, f32 kept, integers in
 * f64, a scalar as one root, no roots the scalar 1.0. */
Test(ops_numpy_poly, poly_is_numpys)
{
    const poly_case c = { ROOTS, 0, NULL, 0, false };
    weft_tensor *r[5] = {
        test_tensor(WEFT_I32, 1, DIMS(3), (const double[]){ 1, 2, 3 }),
        test_tensor(WEFT_F32, 1, DIMS(3), (const double[]){ 0.5, -0.25, 3 }),
        test_tensor(WEFT_F64, 1, DIMS(3), (const double[]){ 0.1, 0.7, -1.3 }),
        test_tensor(WEFT_F64, 0, NULL, (const double[]){ 2.5 }),
        test_tensor(WEFT_F64, 1, DIMS(0), NULL),
    };
    expect_poly(c, &r[0], WEFT_F64, (const double[]){ 1, -6, 11, -6 }, 4, "integer roots");
    expect_poly(c, &r[1], WEFT_F32, (const double[]){ 1, -3.25, 0.625, 0.375 }, 4, "f32 roots");
    expect_poly(c, &r[2], WEFT_F64,
                (const double[]){ 1.0, 0.5000000000000001, -0.9700000000000001, 0.091 }, 4,
                "f64 roots");
    expect_poly(c, &r[3], WEFT_F64, (const double[]){ 1, -2.5 }, 2, "scalar root");
    weft_tensor *y;
    op_results_everywhere(poly_body, (void *)&c, &r[4], 1, &y, 1, "no roots");
    test_assert_shape(y, WEFT_F64, 0, NULL, "no roots");
    cr_assert_eq(test_element(y, 0), 1.0);
    weft_tensor_release(y);
    release_all(r, 5);
    /* A length unknown while tracing, or past 1000, is refused. */
    const weft_spec sig = { WEFT_F64, 1, { -1 } };
    weft_function *f = op_signature_function(rt, poly_body, (void *)&c, &sig, 1);
    static double many[1001];
    for (int k = 0; k < 2; k++) {
        weft_tensor *t = test_tensor(WEFT_F64, 1, DIMS(k ? 1001 : 3), many);
        weft_arg a = weft_arg_tensor(t);
        y = NULL;
        int rc = k ? op_call(rt, poly_body, (void *)&c, &t, 1, &y, 1, true)
                   : weft_function_call(f, &a, 1, &y, 1);
        cr_assert_eq(rc, k ? WEFT_EINVAL : WEFT_ESHAPE, "%d: %s", k, weft_errmsg());
        cr_assert(strstr(weft_errmsg(), k ? "weft_poly: roots f64[1001] are not of a length "
                                          : "weft_poly: roots f64[?] are not of a length "),
                  "%s", weft_errmsg());
        cr_assert_null(y);
        weft_tensor_release(t);
    }
    weft_function_destroy(&f);
}

static int div_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    return weft_polydiv(cx, a[0], a[1], outs);
}

/* polydiv(u, v) gives NumPy's quotient and remainder, bit for bit, the
 * same eagerly and traced on every runtime. */
static void expect_div(weft_tensor *u, weft_tensor *v, weft_dtype dt, const double *q,
                       int64_t nq, const double *r, int64_t nr, const char *what)
{
    weft_tensor *args[2] = { u, v }, *y[2];
    op_results_everywhere(div_body, NULL, args, 2, y, 2, what);
    op_expect_numbers(y[0], dt, q, nq, true, what);
    op_expect_numbers(y[1], dt, r, nr, true, what);
    release_all(y, 2);
    weft_tensor_release(u);
    weft_tensor_release(v);
}

Test(ops_numpy_poly, polydiv_is_numpys)
{
    expect_div(test_tensor(WEFT_F64, 1, DIMS(4), (const double[]){ 1, -3, 3, -1 }),
               test_tensor(WEFT_F64, 1, DIMS(2), (const double[]){ 1, -1 }), WEFT_F64,
               (const double[]){ 1, -2, 1 }, 3, (const double[]){ 0 }, 1, "exact");
    expect_div(test_tensor(WEFT_F64, 1, DIMS(5), (const double[]){ 3.7, -1.2, 0.5, 2.25, -4.1 }),
               test_tensor(WEFT_F64, 1, DIMS(3), (const double[]){ 1.3, 0.4, -2.2 }), WEFT_F64,
               (const double[]){ 0x1.6c4ec4ec4ec4fp+1, -0x1.cc7f3e1b442a6p+0,
                                 0x1.704c7053e56edp+2 },
               3, (const double[]){ -0x1.0097c24a27aa1p+2, 0x1.11edaec2af939p+3 }, 2, "f64");
    expect_div(test_tensor(WEFT_F32, 1, DIMS(5), (const double[]){ 0.1, 0.7, -1.3, 2.9, 0.33 }),
               test_tensor(WEFT_F32, 1, DIMS(2), (const double[]){ 0.3, -1.1 }), WEFT_F32,
               (const double[]){ 0x1.555554p-2, 0x1.c71c6ep+1, 0x1.1684bap+3, 0x1.4ca456p+5 }, 4,
               (const double[]){ 0x1.708bdp+5 }, 1, "f32, scale and d in f64");
    expect_div(test_tensor(WEFT_I32, 1, DIMS(4), (const double[]){ 1, 2, 3, 4 }),
               test_tensor(WEFT_I64, 1, DIMS(2), (const double[]){ 2, 1 }), WEFT_F64,
               (const double[]){ 0.5, 0.75, 1.125 }, 3, (const double[]){ 2.875 }, 1,
               "integers");
    expect_div(test_tensor(WEFT_F64, 1, DIMS(2), (const double[]){ 1, 2 }),
               test_tensor(WEFT_F64, 1, DIMS(3), (const double[]){ 1, 2, 3 }), WEFT_F64,
               (const double[]){ 0 }, 1, (const double[]){ 1, 2 }, 2, "u shorter than v");
    expect_div(test_tensor(WEFT_F32, 1, DIMS(1), (const double[]){ 1.5 }),
               test_tensor(WEFT_F32, 1, DIMS(2), (const double[]){ 1, 2 }), WEFT_F32,
               (const double[]){ 0 }, 1, (const double[]){ 1.5 }, 1, "f32 u shorter than v");
    expect_div(test_tensor(WEFT_F64, 1, DIMS(4), (const double[]){ 1, 2, 1 + 1e-9, 3 }),
               test_tensor(WEFT_F64, 1, DIMS(3), (const double[]){ 1, 1, 0 }), WEFT_F64,
               (const double[]){ 1, 1 }, 2, (const double[]){ 3 }, 1, "1e-9 trimmed");
    expect_div(test_tensor(WEFT_F64, 1, DIMS(4), (const double[]){ 1, 2, NAN, 3 }),
               test_tensor(WEFT_F64, 1, DIMS(3), (const double[]){ 1, 1, 0 }), WEFT_F64,
               (const double[]){ 1, 1 }, 2, (const double[]){ NAN, 3 }, 2, "NaN kept");
    /* Each step changes its window of r alone: inf * 0 would put NaN
     * before it. */
    expect_div(test_tensor(WEFT_F64, 1, DIMS(4), (const double[]){ 1, 2, 3, 4 }),
               test_tensor(WEFT_F64, 1, DIMS(2), (const double[]){ 1, INFINITY }), WEFT_F64,
               (const double[]){ 1, -INFINITY, INFINITY }, 3,
               (const double[]){ NAN, NAN, -INFINITY }, 3, "an infinite v");
    expect_div(test_tensor(WEFT_F64, 0, NULL, (const double[]){ 2.5 }),
               test_tensor(WEFT_F64, 0, NULL, (const double[]){ 0.5 }), WEFT_F64,
               (const double[]){ 5 }, 1, (const double[]){ 0 }, 1, "scalars");
}

/* One trace for the lengths, whatever the remainder keeps; lengths
 * unknown while tracing or past 1001 are refused. */
Test(ops_numpy_poly, polydiv_traces_once_for_its_lengths)
{
    const weft_spec sig[2] = { { WEFT_F64, 1, { 4 } }, { WEFT_F64, 1, { 3 } } };
    weft_function_desc d = { .name = "div", .body = div_body, .n_args = 2, .n_outs = 2,
                             .input_signature = sig };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
    weft_tensor *v = test_tensor(WEFT_F64, 1, DIMS(3), (const double[]){ 1, 1, 0 });
    for (int k = 0; k < 2; k++) {
        weft_tensor *u = test_tensor(WEFT_F64, 1, DIMS(4), k ? (const double[]){ 1, 2, 4, 3 }
                                                             : (const double[]){ 1, 2, 1, 3 });
        weft_arg a[2] = { weft_arg_tensor(u), weft_arg_tensor(v) };
        weft_tensor *y[2] = { NULL, NULL };
        cr_assert_eq(weft_function_call(f, a, 2, y, 2), 0, "%s", weft_errmsg());
        op_expect_numbers(y[1], WEFT_F64, k ? (const double[]){ 3, 3 } : (const double[]){ 3 },
                          k ? 2 : 1, true, "remainder");
        release_all(y, 2);
        weft_tensor_release(u);
    }
    weft_function_stats st;
    weft_function_get_stats(f, &st);
    cr_assert_eq(st.traces, 1);
    weft_function_destroy(&f);

    const weft_spec unknown[2] = { { WEFT_F64, 1, { -1 } }, { WEFT_F64, 1, { 3 } } };
    d.input_signature = unknown;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
    static double many[1002];
    for (int k = 0; k < 2; k++) {
        weft_tensor *u = test_tensor(WEFT_F64, 1, DIMS(k ? 1002 : 3), many);
        weft_tensor *args[2] = { u, v }, *y[2] = { NULL, NULL };
        weft_arg a[2] = { weft_arg_tensor(u), weft_arg_tensor(v) };
        int rc = k ? op_call(rt, div_body, NULL, args, 2, y, 2, true)
                   : weft_function_call(f, a, 2, y, 2);
        cr_assert_eq(rc, k ? WEFT_EINVAL : WEFT_ESHAPE, "%d: %s", k, weft_errmsg());
        cr_assert(strstr(weft_errmsg(), k ? "weft_polydiv: u f64[1002] and v f64[3] need lengths "
                                            "known while tracing, at least 1, u's at most 1001"
                                          : "weft_polydiv: u f64[?] and v f64[3] need lengths "
                                            "known while tracing"),
                  "%s", weft_errmsg());
        cr_assert_null(y[0]);
        cr_assert_null(y[1]);
        weft_tensor_release(u);
    }
    weft_function_destroy(&f);
    weft_tensor_release(v);
}

typedef struct cov_case {
    int deg;
    bool weights, unscaled;
} cov_case;

static int cov_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const cov_case *c = user;
    return weft_polyfit_cov(cx, a[0], a[1], c->deg, c->weights ? a[2] : NULL, c->unscaled, outs);
}

static void expect_near(const weft_tensor *t, const double *want, int64_t n, const char *what)
{
    cr_assert_eq(weft_tensor_numel(t), n, "%s: %lld elements", what,
                 (long long)weft_tensor_numel(t));
    for (int64_t i = 0; i < n; i++)
        cr_assert(fabs(test_element(t, i) - want[i]) <= 1e-12 * fmax(1, fabs(want[i])),
                  "%s[%lld]: %.17g, not %.17g", what, (long long)i, test_element(t, i), want[i]);
}

/* c on args[0..n_args): the coefficients and the covariance of shape
 * dims[0..rank) near NumPy's; the covariance's elements are numel(dims). */
static void expect_fit_cov(cov_case c, weft_tensor *const *args, size_t n_args,
                           const double *coef, int64_t n_coef, int rank, const int64_t *dims,
                           const double *cov, const char *what)
{
    weft_tensor *r[2];
    op_results_everywhere(cov_body, &c, args, n_args, r, 2, what);
    expect_near(r[0], coef, n_coef, what);
    test_assert_shape(r[1], WEFT_F64, rank, dims, what);
    expect_near(r[1], cov, test_numel(rank, dims), what);
    release_all(r, 2);
}

/* np.polyfit(..., cov=True) and cov="unscaled": NumPy's printed
 * coefficients and covariances (a quadratic; weighted, unscaled; two
 * columns, scaled and unscaled with NumPy's shapes). */
Test(ops_numpy_poly, fit_cov_is_numpys)
{
    static const double w[6] = { 1, 0.5, 2, 1, 1.5, 1 };
    static const double yy[12] = { 1, -0.9, 2.9, 0.8, 9.1, 3, 19, 5.3, 33.2, 6.9, 51, 9 };
    weft_tensor *a[3] = { test_tensor(WEFT_F64, 1, DIMS(6), FIT_X),
                          test_tensor(WEFT_F64, 1, DIMS(6), FIT_Y),
                          test_tensor(WEFT_F64, 1, DIMS(6), w) };
    expect_fit_cov((cov_case){ 2, false, false }, a, 2,
                   (const double[]){ 1.991071428571429, 0.067500000000002863,
                                     0.94642857142857162 }, 3, 2, DIMS(3, 3),
                   (const double[]){ 0.00036798469387755781, -0.0018399234693877891,
                                     0.0012266156462585275, -0.0018399234693877893,
                                     0.009984651360544404, -0.0080956632653062747,
                                     0.0012266156462585279, -0.0080956632653062764,
                                     0.011284863945578429 }, "cov");
    expect_fit_cov((cov_case){ 2, true, true }, a, 3,
                   (const double[]){ 1.9864219664087581, 0.090215134931114993,
                                     0.970334025287799 }, 3, 2, DIMS(3, 3),
                   (const double[]){ 0.019606125144906065, -0.10142749305798948,
                                     0.091580621680640711, -0.10142749305798948,
                                     0.57696196047771897, -0.6126492869274538,
                                     0.091580621680640711, -0.6126492869274538,
                                     0.90216482894346783 }, "unscaled");
    weft_tensor_release(a[1]);
    a[1] = test_tensor(WEFT_F64, 2, DIMS(6, 2), yy);
    expect_fit_cov((cov_case){ 1, false, false }, a, 2,
                   (const double[]){ 10.022857142857141, 2.0028571428571427,
                                     -5.6904761904761862, -0.99047619047619107 }, 4,
                   3, DIMS(2, 2, 2),
                   (const double[]){ 2.1149170068027248, 0.0021170068027210839,
                                     -5.2872925170068124, -0.0052925170068027104,
                                     -5.2872925170068124, -0.0052925170068027104,
                                     19.386739229024975, 0.019405895691609935 }, "columns");
    /* Unscaled, a matrix y's covariance is [2, 2, 1], NumPy's shape. */
    cov_case c = { 1, false, true };
    weft_tensor *r[2];
    op_results_everywhere(cov_body, &c, a, 2, r, 2, "columns unscaled");
    test_assert_shape(r[1], WEFT_F64, 3, DIMS(2, 2, 1), "columns unscaled");
    release_all(r, 2);
    /* Scaled, n must exceed deg + 1: 6 points and degree 5 fail. */
    c = (cov_case){ 5, false, false };
    weft_tensor *out[2] = { NULL, NULL };
    cr_assert_eq(op_call(rt, cov_body, &c, a, 2, out, 2, true), WEFT_EINVAL);
    cr_assert(strstr(weft_errmsg(), "weft_polyfit_cov: 6 points do not exceed the order 6, "
                                    "which the scaled covariance needs"), "%s", weft_errmsg());
    cr_assert(!out[0] && !out[1]);
    release_all(a, 3);
}

static int grad_fns(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    static const double k = 0.5;
    switch (*(const int *)user) {
    case 0: outs[0] = weft_polyadd(cx, a[0], a[1]); break;
    case 1: outs[0] = weft_polymul(cx, a[0], a[1]); break;
    case 2: outs[0] = weft_polyder(cx, a[0], 2); break;
    case 3: outs[0] = weft_polyint(cx, a[0], 2, &k, 1); break;
    case 4: outs[0] = weft_polyfit(cx, a[0], a[1], 2, NULL); break;
    case 5: outs[0] = weft_polyval_vector(cx, a[0], a[1]); break;
    default: outs[0] = weft_poly(cx, a[0]); break;
    }
    return weft_ctx_status(cx);
}

/* The gradients of polyadd, polymul (both operands), polyder, polyint,
 * polyfit (for x and y), polyval (p and x) and poly against central
 * differences. */
Test(ops_numpy_poly, gradients)
{
    static const double a[5] = { 0.3, 1.7, -2.2, 4.1, 0.05 };
    static const double b[3] = { 0.5, 2.0, -1.0 };
    const grad_arg two[2] = { { 1, { 5 }, a }, { 1, { 3 }, b } };
    const grad_arg fit[2] = { { 1, { 6 }, FIT_X }, { 1, { 6 }, FIT_Y } };
    static const int which[7] = { 0, 1, 2, 3, 4, 5, 6 };
    for (int k = 0; k < 7; k++) {
        size_t n = k == 2 || k == 3 || k == 6 ? 1 : 2;
        grad_case c = { grad_fns, &which[k], n, n };
        expect_gradients(&c, k == 4 ? fit : two, "poly gradient");
    }
}

static int refused_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    static const double k2[2] = { 1, 2 };
    switch (*(const int *)user) {
    case 0: outs[0] = weft_polyadd(cx, a[0], a[2]); break;
    case 1: outs[0] = weft_polymul(cx, a[1], a[0]); break;
    case 2: outs[0] = weft_polyder(cx, a[0], -1); break;
    case 3: outs[0] = weft_polyint(cx, a[0], 3, k2, 2); break;
    case 4: outs[0] = weft_polyint(cx, a[0], 1, NULL, 1); break;
    case 5: outs[0] = weft_polyfit(cx, a[1], a[0], 1, NULL); break;
    case 6: outs[0] = weft_polyfit(cx, a[0], a[0], -1, NULL); break;
    case 7: outs[0] = weft_polyfit(cx, a[0], a[0], 1, a[1]); break;
    case 8: outs[0] = weft_polyfit(cx, a[3], a[3], 1, NULL); break;
    case 10: outs[0] = weft_polyval_vector(cx, a[1], a[0]); break;
    case 11: outs[0] = weft_polyval_vector(cx, a[0], a[2]); break;
    case 12: outs[0] = weft_polyint(cx, a[0], 1001, NULL, 0); break;
    case 13: outs[0] = weft_poly(cx, a[1]); break;
    case 14: outs[0] = weft_poly(cx, a[2]); break;
    case 15: case 16: case 17: {
        weft_value *qr[2];
        weft_polydiv(cx, a[0], a[*(const int *)user - 14], qr);
        outs[0] = qr[0];
        break;
    }
    default: outs[0] = weft_polyfit(cx, a[2], a[0], 1, NULL); break;
    }
    return weft_ctx_status(cx);
}

Test(ops_numpy_poly, refusals)
{
    weft_tensor *args[4] = {
        test_tensor(WEFT_F64, 1, DIMS(4), (const double[]){ 1, 2, 3, 4 }),
        test_tensor(WEFT_F64, 2, DIMS(2, 2), (const double[]){ 1, 2, 3, 4 }),
        test_tensor(WEFT_BOOL, 1, DIMS(4), (const double[]){ 1, 0, 1, 1 }),
        test_tensor(WEFT_F64, 1, DIMS(0), NULL),
    };
    const op_error_case cases[] = {
        { 0, WEFT_EDTYPE, "weft_polyadd: a2 bool[4] is not a number" },
        { 1, WEFT_ESHAPE, "weft_polymul: a1 f64[2,2] is not a vector" },
        { 2, WEFT_EINVAL, "weft_polyder: the order m -1 is not in [0, 1000]" },
        { 3, WEFT_EINVAL, "weft_polyint: 2 constants k for order 3: give 0, 1 or at least m" },
        { 4, WEFT_EINVAL, "weft_polyint: k is NULL with n_k 1" },
        { 5, WEFT_ESHAPE, "weft_polyfit: x f64[2,2] is not a vector of 1 or more known while "
                          "tracing" },
        { 6, WEFT_EINVAL, "weft_polyfit: deg -1 is negative" },
        { 7, WEFT_ESHAPE, "weft_polyfit: w f64[2,2] is not a vector" },
        { 8, WEFT_ESHAPE, "weft_polyfit: x f64[0] is not a vector of 1 or more" },
        { 9, WEFT_EDTYPE, "weft_polyfit: x bool[4] is not a number" },
        { 10, WEFT_ESHAPE, "weft_polyval_vector: p f64[2,2] is not a vector" },
        { 11, WEFT_EDTYPE, "weft_polyval_vector: x bool[4] is not a number" },
        { 12, WEFT_EINVAL, "weft_polyint: the order m 1001 is not in [0, 1000]" },
        { 13, WEFT_ESHAPE, "weft_poly: roots f64[2,2] is not a vector" },
        { 14, WEFT_EDTYPE, "weft_poly: roots bool[4] is not a number" },
        { 15, WEFT_ESHAPE, "weft_polydiv: v f64[2,2] is not a vector" },
        { 16, WEFT_EDTYPE, "weft_polydiv: v bool[4] is not a number" },
        { 17, WEFT_EINVAL, "weft_polydiv: u f64[4] and v f64[0] need lengths known while "
                           "tracing, at least 1" },
    };
    op_expect_errors(rt, refused_body, cases, sizeof cases / sizeof *cases, args, 4);
    release_all(args, 4);
}

/* Traced with x's length unknown, polyfit is refused (its SVD needs the
 * matrix's dims); eagerly the length is known. */
Test(ops_numpy_poly, fit_needs_x_length_while_tracing)
{
    const weft_spec sig[2] = { { WEFT_F64, 1, { WEFT_DIM_ANY } },
                               { WEFT_F64, 1, { WEFT_DIM_ANY } } };
    poly_case c = { .op = FIT, .m = 1 };
    weft_function *f = op_signature_function(rt, poly_body, &c, sig, 2);
    weft_tensor *x = test_tensor(WEFT_F64, 1, DIMS(6), FIT_X);
    weft_tensor *y = test_tensor(WEFT_F64, 1, DIMS(6), FIT_Y);
    weft_arg args[2] = { weft_arg_tensor(x), weft_arg_tensor(y) };
    weft_tensor *r = NULL;
    cr_assert_eq(weft_function_call(f, args, 2, &r, 1), WEFT_ESHAPE, "%s", weft_errmsg());
    cr_assert(strstr(weft_errmsg(), "weft_polyfit: x f64[?] is not a vector of 1 or more known "
                                    "while tracing"), "%s", weft_errmsg());
    cr_assert_null(r);
    weft_function_destroy(&f);
    weft_tensor *xy[2] = { x, y };
    cr_assert_eq(op_call(rt, poly_body, &c, xy, 2, &r, 1, true), 0, "%s", weft_errmsg());
    weft_tensor_release(r);
    release_all(xy, 2);
}
