/* tf.experimental.numpy's log2, log10, exp2, cbrt (libm's, bit for bit),
 * logaddexp and logaddexp2 (NumPy's formula, against long double), sinc
 * and kron (against loops written here): eagerly and traced on 1, 2 and 4
 * workers with the same bits, their dtype rules, edges, refusals and
 * gradients against central differences. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "grad_check.h"
#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_numpy, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

static const double specials[] = { -1e300, -3, -1.5, -1e-310, -0.0, 0.0, 1e-310, 1e-8, 0.5,
                                   1, 2, 3, 8, 10, 1000, 1e-3, 1023.5, 1024, -1074.5, -1075,
                                   -1100, 1e300, INFINITY, -INFINITY, NAN };
#define N_SPECIALS ((int64_t)(sizeof specials / sizeof specials[0]))

/* Equal, NaN to NaN and each zero to its own sign. */
static void expect_same(double got, double want, const char *what, double x)
{
    cr_assert((isnan(got) && isnan(want)) ||
                  (got == want && signbit(got) == signbit(want)),
              "%s(%.17g) = %.17g, want %.17g", what, x, got, want);
}

static double log2_f(double x) { return log2f((float)x); }
static double log10_f(double x) { return log10f((float)x); }
static double exp2_f(double x) { return exp2f((float)x); }
static double cbrt_f(double x) { return cbrtf((float)x); }

Test(ops_numpy, libm_functions_bit_for_bit)
{
    const struct {
        op_unary_fn f;
        double (*ref64)(double), (*ref32)(double);
        const char *name;
    } fns[] = {
        { weft_log2, log2, log2_f, "log2" }, { weft_log10, log10, log10_f, "log10" },
        { weft_exp2, exp2, exp2_f, "exp2" }, { weft_cbrt, cbrt, cbrt_f, "cbrt" },
    };
    for (size_t f = 0; f < 4; f++)
        for (int d = 0; d < 2; d++) {
            double x[N_SPECIALS], y[N_SPECIALS];
            for (int64_t i = 0; i < N_SPECIALS; i++)
                x[i] = d ? specials[i] : (double)(float)specials[i];
            op_unary_values(fns[f].f, d ? WEFT_F64 : WEFT_F32, x, N_SPECIALS, y);
            for (int64_t i = 0; i < N_SPECIALS; i++)
                expect_same(y[i], d ? fns[f].ref64(x[i]) : fns[f].ref32(x[i]), fns[f].name, x[i]);
        }
}

Test(ops_numpy, libm_functions_of_integers_are_f64)
{
    const double v[] = { -8, 0, 1, 27, 1000 };
    int64_t n = 5;
    weft_tensor *x = test_tensor(WEFT_I32, 1, &n, v), *y;
    op_unary_fn f = weft_cbrt;
    op_results_everywhere(op_unary_body, &f, &x, 1, &y, 1, "cbrt of i32");
    test_assert_shape(y, WEFT_F64, 1, &n, "cbrt of i32");
    for (int64_t i = 0; i < n; i++)
        cr_assert_eq(test_element(y, i), cbrt(v[i]));
    cr_assert_eq(test_element(y, 0), -2.0, "the cube root of -8");
    weft_tensor_release(y);
    weft_tensor_release(x);
}

/* ---- logaddexp ------------------------------------------------------------ */

static long double lae_ref(double a, double b, bool base2)
{
    long double hi = fmaxl(a, b), lo = fminl(a, b);
    return base2 ? hi + log2l(1 + exp2l(lo - hi)) : hi + logl(1 + expl(lo - hi));
}

static void expect_logaddexp(bool base2, weft_dtype dt)
{
    static const double a[] = { 0, 1, -1, 1000, -1000, 30, 1e-300, 2.5, -745, 710, 0.1, -20 };
    static const double b[] = { 0, 2, -1, 1000, -1000, -30, 1e-300, 2.5, -745, 709, 0.3, 20 };
    int64_t n = 12;
    double x[12], z[12], y[12];
    for (int i = 0; i < 12; i++) {
        x[i] = dt == WEFT_F32 ? (double)(float)a[i] : a[i];
        z[i] = dt == WEFT_F32 ? (double)(float)b[i] : b[i];
    }
    op_binary_values(base2 ? weft_logaddexp2 : weft_logaddexp, dt, x, n, z, n, y);
    double tol = dt == WEFT_F32 ? 3e-7 : 1e-15;
    for (int i = 0; i < 12; i++) {
        long double want = lae_ref(x[i], z[i], base2);
        cr_assert(fabsl(y[i] - want) <= tol * fmaxl(1, fabsl(want)),
                  "logaddexp%s(%g, %g) = %.17g, want %.17Lg", base2 ? "2" : "", x[i], z[i], y[i],
                  want);
    }
}

Test(ops_numpy, logaddexp_against_long_double)
{
    for (int base2 = 0; base2 < 2; base2++) {
        expect_logaddexp(base2, WEFT_F64);
        expect_logaddexp(base2, WEFT_F32);
    }
}

/* NumPy's values at the edges: two infinities of one sign give that
 * infinity (x1 + x2), of two signs +inf, NaN stays NaN; equal finite
 * values give x + log(2) (x + 1 in base 2). */
Test(ops_numpy, logaddexp_edges)
{
    const double a[] = { INFINITY, -INFINITY, INFINITY, NAN, 1, -INFINITY, 5, 0 };
    const double b[] = { INFINITY, -INFINITY, -INFINITY, 1, NAN, 3, 5, 0 };
    int64_t n = 8;
    double y[8], y2[8];
    op_binary_values(weft_logaddexp, WEFT_F64, a, n, b, n, y);
    op_binary_values(weft_logaddexp2, WEFT_F64, a, n, b, n, y2);
    const double want[] = { INFINITY, -INFINITY, INFINITY, NAN, NAN, 3, 5 + M_LN2, M_LN2 };
    const double want2[] = { INFINITY, -INFINITY, INFINITY, NAN, NAN, 3, 6, 1 };
    for (int i = 0; i < 8; i++) {
        expect_same(y[i], want[i], "logaddexp", a[i]);
        expect_same(y2[i], want2[i], "logaddexp2", a[i]);
    }
}

static int lae_weak_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_logaddexp(cx, a[0], weft_const_f64(cx, 2.0));
    outs[1] = weft_logaddexp(cx, a[0], a[1]);
    return weft_ctx_status(cx);
}

/* A weak scalar takes the tensor's f32; two integer tensors compute in f64;
 * an f32 and an i32 in f32 (the binary ops' promotion). */
Test(ops_numpy, logaddexp_dtypes)
{
    const double v[] = { 1, 2, 3 }, w[] = { 0, 5, -2 };
    int64_t n = 3;
    weft_tensor *args[2] = { test_tensor(WEFT_F32, 1, &n, v), test_tensor(WEFT_I32, 1, &n, w) };
    weft_tensor *outs[2];
    op_results_everywhere(lae_weak_body, NULL, args, 2, outs, 2, "logaddexp f32, weak");
    test_assert_shape(outs[0], WEFT_F32, 1, &n, "with a weak scalar");
    test_assert_shape(outs[1], WEFT_F32, 1, &n, "f32 with i32");
    for (int i = 0; i < 3; i++)
        cr_assert_float_eq(test_element(outs[0], i), (double)lae_ref(v[i], 2, false), 1e-6);
    weft_tensor_release(outs[0]);
    weft_tensor_release(outs[1]);
    weft_tensor_release(args[0]);
    args[0] = test_tensor(WEFT_I32, 1, &n, v);
    op_results_everywhere(lae_weak_body, NULL, args, 2, outs, 2, "logaddexp i32");
    test_assert_shape(outs[1], WEFT_F64, 1, &n, "i32 with i32");
    for (int i = 0; i < 3; i++)
        cr_assert_float_eq(test_element(outs[1], i), (double)lae_ref(v[i], w[i], false), 1e-15);
    weft_tensor_release(outs[0]);
    weft_tensor_release(outs[1]);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

/* ---- sinc ------------------------------------------------------------------ */

Test(ops_numpy, sinc_values)
{
    const double x[] = { 0.0, -0.0, 0.5, -0.5, 1, 2, -3, 0.25, 1e-9, 10.5, INFINITY, NAN };
    int64_t n = 12;
    for (int d = 0; d < 2; d++) {
        weft_dtype dt = d ? WEFT_F64 : WEFT_F32;
        double xs[12], y[12];
        for (int i = 0; i < 12; i++)
            xs[i] = d ? x[i] : (double)(float)x[i];
        op_unary_values(weft_sinc, dt, xs, n, y);
        double tol = d ? 2e-16 : 2e-7;
        cr_assert_eq(y[0], 1.0, "sinc(0) is 1");
        cr_assert_eq(y[1], 1.0, "sinc(-0) is 1");
        for (int i = 2; i < 10; i++) {
            long double want = sinl(3.14159265358979323846264338327950288L * xs[i]) /
                               (3.14159265358979323846264338327950288L * xs[i]);
            cr_assert(fabsl(y[i] - want) <= tol * 4, "sinc(%g) = %.17g, want %.17Lg", xs[i],
                      y[i], want);
        }
        cr_assert(isnan(y[10]) && isnan(y[11]), "sinc of inf and NaN is NaN");
    }
    const double iv[] = { 0, 1, 2 };
    double y[3];
    n = 3;
    op_unary_values(weft_sinc, WEFT_I64, iv, n, y);
    cr_assert_eq(y[0], 1.0);
    cr_assert(fabs(y[1]) < 1e-15 && fabs(y[2]) < 1e-15, "sinc of nonzero integers");
}

/* ---- kron ------------------------------------------------------------------ */

typedef struct kron_case {
    int ra, rb;
    int64_t da[4], db[4];
} kron_case;

static int kron_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_kron(cx, a[0], a[1]);
    return weft_ctx_status(cx);
}

/* The result of kron at a multi-index of the output, from NumPy's
 * definition: per dim, i = ia * db + ib. */
static double kron_ref(const kron_case *c, const double *va, const double *vb, int rank,
                       const int64_t *idx)
{
    int64_t fa = 0, fb = 0;
    for (int d = 0; d < rank; d++) {
        int ia = d - (rank - c->ra), ib = d - (rank - c->rb);
        int64_t db = ib < 0 ? 1 : c->db[ib];
        if (ia >= 0)
            fa = fa * c->da[ia] + idx[d] / db;
        if (ib >= 0)
            fb = fb * db + idx[d] % db;
    }
    return va[fa] * vb[fb];
}

static void expect_kron(const kron_case *c, weft_dtype dt)
{
    double va[64], vb[64];
    int64_t na = test_numel(c->ra, c->da), nb = test_numel(c->rb, c->db);
    for (int64_t i = 0; i < na; i++)
        va[i] = (double)(i * 3 % 7) - 2;
    for (int64_t i = 0; i < nb; i++)
        vb[i] = (double)(i * 5 % 11) + 1;
    weft_tensor *args[2] = { test_tensor(dt, c->ra, c->da, va), test_tensor(dt, c->rb, c->db, vb) };
    weft_tensor *y;
    op_results_everywhere(kron_body, NULL, args, 2, &y, 1, "kron");
    int rank = c->ra > c->rb ? c->ra : c->rb;
    int64_t dims[4];
    for (int d = 0; d < rank; d++) {
        int ia = d - (rank - c->ra), ib = d - (rank - c->rb);
        dims[d] = (ia < 0 ? 1 : c->da[ia]) * (ib < 0 ? 1 : c->db[ib]);
    }
    test_assert_shape(y, dt, rank, dims, "kron");
    int64_t idx[4] = { 0 };
    for (int64_t e = 0; e < weft_tensor_numel(y); e++) {
        cr_assert_eq(test_element(y, e), kron_ref(c, va, vb, rank, idx), "kron element %lld",
                     (long long)e);
        for (int d = rank - 1; d >= 0 && ++idx[d] == dims[d]; d--)
            idx[d] = 0;
    }
    weft_tensor_release(y);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

Test(ops_numpy, kron_against_definition)
{
    const kron_case cases[] = {
        { 2, 2, { 2, 3 }, { 4, 2 } },       /* matrices */
        { 1, 1, { 3 }, { 4 } },             /* vectors */
        { 1, 2, { 3 }, { 2, 2 } },          /* a vector takes a leading 1 */
        { 3, 2, { 2, 1, 3 }, { 2, 2 } },    /* three dims against two */
        { 0, 2, { 0 }, { 2, 3 } },          /* a scalar scales b */
        { 2, 2, { 0, 3 }, { 2, 2 } },       /* an empty operand */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        expect_kron(&cases[k], WEFT_F64);
        expect_kron(&cases[k], WEFT_I32);
    }
}

Test(ops_numpy, kron_of_identity_is_block_diagonal)
{
    const double eye[] = { 1, 0, 0, 1 }, b[] = { 1, 2, 3, 4 };
    int64_t d2[2] = { 2, 2 };
    weft_tensor *args[2] = { test_tensor(WEFT_F32, 2, d2, eye), test_tensor(WEFT_F32, 2, d2, b) };
    weft_tensor *y;
    op_results_everywhere(kron_body, NULL, args, 2, &y, 1, "kron of eye");
    const double want[16] = { 1, 2, 0, 0, 3, 4, 0, 0, 0, 0, 1, 2, 0, 0, 3, 4 };
    for (int i = 0; i < 16; i++)
        cr_assert_eq(test_element(y, i), want[i], "element %d", i);
    weft_tensor_release(y);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

static int kron_refused(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    int which = *(const int *)user;
    weft_value *x = a[0];
    if (which == 1)
        x = weft_reshape(cx, a[0], 5, (const int64_t[]){ 1, 1, 1, 1, 4 });
    else if (which == 2)
        x = weft_boolean_mask(cx, a[0], weft_gt(cx, a[0], weft_const_f64(cx, 0)), 0);
    outs[0] = weft_kron(cx, x, a[0]);
    return weft_ctx_status(cx);
}

Test(ops_numpy, kron_refusals)
{
    const double v[] = { 1, -2, 3, 4 };
    int64_t n = 4;
    weft_tensor *x = test_tensor(WEFT_F64, 1, &n, v);
    const op_error_case cases[] = {
        { 1, WEFT_ESHAPE, "weft_kron: rank 5 is above 4" },
        { 2, WEFT_ESHAPE, "weft_kron: a is f64[?]; its dims must be known while tracing" },
    };
    op_expect_errors(rt, kron_refused, cases, 1, &x, 1);
    /* Eagerly the masked dim is known: only the traced call refuses it. */
    op_expect_traced_error(rt, kron_refused, &cases[1], &x, 1);
    weft_tensor_release(x);
}

/* ---- gradients ------------------------------------------------------------- */

static weft_value *positive_logs(weft_ctx *cx, weft_value *a)
{
    weft_value *p = weft_add(cx, weft_abs(cx, a), weft_const_f64(cx, 0.5));
    return weft_add(cx, weft_log2(cx, p), weft_log10(cx, p));
}

static weft_value *shifted_cbrt(weft_ctx *cx, weft_value *a)
{
    /* Away from 0, where the cube root's slope is infinite. */
    return weft_cbrt(cx, weft_add(cx, a, weft_const_f64(cx, 3.0)));
}

static const double xs12[12] = { 0.3, -0.7, 1.2, 0.05, -1.4, 0.9, 0.6, -0.2, 1.7, -0.55, 1.1, 0.8 };

Test(ops_numpy, unary_gradients_match_differences)
{
    static const struct { op_unary_fn f; const char *name; } fns[] = {
        { positive_logs, "log2 + log10" }, { weft_exp2, "exp2" }, { shifted_cbrt, "cbrt" },
        { weft_sinc, "sinc" },
    };
    const grad_arg x = { 1, { 12 }, xs12 };
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
        grad_case c = { op_unary_body, &fns[i].f, 1, 1 };
        expect_gradients(&c, &x, fns[i].name);
    }
}

Test(ops_numpy, binary_gradients_match_differences)
{
    static const double ys12[12] = { 0.1, 0.2, -1.0, 2.0, -1.3, 0.4, -0.6, 0.9, 1.5, -2.0,
                                     0.7, -0.1 };
    static const op_binary_fn fns[] = { weft_logaddexp, weft_logaddexp2 };
    const grad_arg xy[2] = { { 1, { 12 }, xs12 }, { 1, { 12 }, ys12 } };
    for (size_t i = 0; i < 2; i++) {
        grad_case c = { op_binary_body, &fns[i], 2, 2 };
        expect_gradients(&c, xy, i ? "logaddexp2" : "logaddexp");
    }
    op_binary_fn kron = weft_kron;
    const grad_arg ab[2] = { { 2, { 2, 3 }, xs12 }, { 2, { 3, 2 }, ys12 } };
    grad_case c = { op_binary_body, &kron, 2, 2 };
    expect_gradients(&c, ab, "kron");
}

/* The gradient of sinc at 0 is 0, the true one (the substitution of 1e-20
 * passes no gradient to x there). */
Test(ops_numpy, sinc_gradient_at_zero)
{
    const double z[2] = { 0.0, -0.0 };
    int64_t n = 2;
    weft_tensor *x = test_tensor(WEFT_F64, 1, &n, z), *outs[2];
    op_unary_fn f = weft_sinc;
    grad_case c = { op_unary_body, &f, 1, 1 };
    op_results_everywhere(grad_body, &c, &x, 1, outs, 2, "sinc at 0");
    for (int i = 0; i < 2; i++) {
        cr_assert_eq(test_element(outs[0], i), 1.0);
        cr_assert_eq(test_element(outs[1], i), 0.0, "d sinc at %g", z[i]);
    }
    weft_tensor_release(outs[0]);
    weft_tensor_release(outs[1]);
    weft_tensor_release(x);
}
