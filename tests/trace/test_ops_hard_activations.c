/* Keras 3's hard_sigmoid and hard_swish: values bit for bit the formula
 * relu6(x + 3) / 6 computed here in the dtype, eagerly and traced on 1, 2
 * and 4 workers, NaN and the knees, dtype refusals, and gradients (against
 * central differences away from the knees, and their values at them). */
#include <math.h>
#include <string.h>

#include "grad_check.h"
#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_hard_activations, .init = suite_runtimes_create,
          .fini = suite_runtimes_destroy, .timeout = 60);

static const double xs[] = { -1e30, -4, -3.0000001, -3, -2.9999999, -1.5, -0.0, 0.0, 0.1, 1,
                             2.5, 2.9999999, 3, 3.0000001, 7, 1e30, INFINITY, -INFINITY, NAN };
#define N_XS ((int64_t)(sizeof xs / sizeof xs[0]))

static float hard_sigmoid_f(float x)
{
    float r = x + 3.0f;
    r = r > 0 ? r : r != r ? r : 0.0f;
    r = r < 6.0f || r != r ? r : 6.0f;
    return r / 6.0f;
}

static double hard_sigmoid_d(double x)
{
    double r = x + 3.0;
    r = r > 0 ? r : r != r ? r : 0.0;
    r = r < 6.0 || r != r ? r : 6.0;
    return r / 6.0;
}

static void expect_same(double got, double want, const char *what, double x)
{
    cr_assert((isnan(got) && isnan(want)) || (got == want && signbit(got) == signbit(want)),
              "%s(%.17g) = %.17g, want %.17g", what, x, got, want);
}

Test(ops_hard_activations, values_bit_for_bit)
{
    for (int d = 0; d < 2; d++) {
        double x[N_XS], s[N_XS], w[N_XS];
        for (int64_t i = 0; i < N_XS; i++)
            x[i] = d ? xs[i] : (double)(float)xs[i];
        weft_dtype dt = d ? WEFT_F64 : WEFT_F32;
        op_unary_values(weft_hard_sigmoid, dt, x, N_XS, s);
        op_unary_values(weft_hard_swish, dt, x, N_XS, w);
        for (int64_t i = 0; i < N_XS; i++) {
            double hs = d ? hard_sigmoid_d(x[i]) : (double)hard_sigmoid_f((float)x[i]);
            double hw = d ? x[i] * hard_sigmoid_d(x[i])
                          : (double)((float)x[i] * hard_sigmoid_f((float)x[i]));
            expect_same(s[i], hs, "hard_sigmoid", x[i]);
            expect_same(w[i], hw, "hard_swish", x[i]);
        }
    }
    /* The knees: 0 from -3 down, 1 from 3 up, 1/2 at 0. */
    const double k[] = { -3, 0, 3, -10, 10 };
    double y[5];
    op_unary_values(weft_hard_sigmoid, WEFT_F64, k, 5, y);
    cr_assert(y[0] == 0 && y[1] == 0.5 && y[2] == 1 && y[3] == 0 && y[4] == 1);
    op_unary_values(weft_hard_swish, WEFT_F64, k, 5, y);
    cr_assert(y[0] == 0 && y[1] == 0 && y[2] == 3 && y[3] == 0 && y[4] == 10);
}

static int refused_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    outs[0] = *(const int *)user ? weft_hard_swish(cx, a[0]) : weft_hard_sigmoid(cx, a[0]);
    return weft_ctx_status(cx);
}

Test(ops_hard_activations, integers_refused)
{
    const double v[] = { 1, 2 };
    int64_t n = 2;
    weft_tensor *x = test_tensor(WEFT_I32, 1, &n, v);
    const op_error_case cases[] = {
        { 0, WEFT_EDTYPE, "weft_hard_sigmoid: a is i32[2], not f32 or f64" },
        { 1, WEFT_EDTYPE, "weft_hard_swish: a is i32[2], not f32 or f64" },
    };
    op_expect_errors(rt, refused_body, cases, 2, &x, 1);
    weft_tensor_release(x);
}

Test(ops_hard_activations, gradients_match_differences)
{
    static const double v[12] = { -5, -2.9, -1.2, -0.4, 0.3, 1.1, 2.2, 2.95, 4, -3.5, 0.8, 9 };
    static const op_unary_fn fns[] = { weft_hard_sigmoid, weft_hard_swish };
    const grad_arg x = { 1, { 12 }, v };
    for (size_t i = 0; i < 2; i++) {
        grad_case c = { op_unary_body, &fns[i], 1, 1 };
        expect_gradients(&c, &x, i ? "hard_swish" : "hard_sigmoid");
    }
}

/* At the knees the gradient is 0, as TensorFlow's Relu6Grad (relu's rule
 * at -3; at 3 the tie of the minimum goes to the 6); 1/6 and 1/2 between. */
Test(ops_hard_activations, gradients_at_the_knees)
{
    const double k[] = { -3, 3, 0, -2 };
    int64_t n = 4;
    weft_tensor *x = test_tensor(WEFT_F64, 1, &n, k), *outs[2];
    static const op_unary_fn fns[] = { weft_hard_sigmoid, weft_hard_swish, weft_relu6 };
    const double want[3][4] = { { 0, 0, 1.0 / 6, 1.0 / 6 }, { 0, 1, 0.5, -1.0 / 6 },
                                { 0, 1, 0, 0 } };
    for (int f = 0; f < 3; f++) {
        grad_case c = { op_unary_body, &fns[f], 1, 1 };
        op_results_everywhere(grad_body, &c, &x, 1, outs, 2, "at the knees");
        for (int i = 0; i < 4; i++)
            cr_assert_eq(test_element(outs[1], i), want[f][i], "function %d: d at %g is %.17g", f,
                         k[i], test_element(outs[1], i));
        weft_tensor_release(outs[0]);
        weft_tensor_release(outs[1]);
    }
    /* relu6 itself at its knees 0 and 6: 0 at both. */
    const double r[] = { 0, 6 };
    n = 2;
    weft_tensor *xr = test_tensor(WEFT_F64, 1, &n, r);
    op_unary_fn f = weft_relu6;
    grad_case c = { op_unary_body, &f, 1, 1 };
    op_results_everywhere(grad_body, &c, &xr, 1, outs, 2, "relu6 at its knees");
    cr_assert(test_element(outs[1], 0) == 0 && test_element(outs[1], 1) == 0);
    weft_tensor_release(outs[0]);
    weft_tensor_release(outs[1]);
    weft_tensor_release(xr);
    weft_tensor_release(x);
}
