/* Keras 3's activations relu (with its parameters), celu, glu, hard_tanh, hard_shrink, soft_shrink,
 * tanh_shrink, squareplus, sparse_plus and sparsemax: values against
 * Keras's formulas in double (sparsemax against the projection computed
 * here by sorting), eagerly and traced on 1, 2 and 4 workers with the same
 * bits; gradients against central differences; the refusals. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "grad_check.h"
#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_keras_activations, .init = suite_runtimes_create,
          .fini = suite_runtimes_destroy, .timeout = 60);

typedef enum act { CELU, HARD_TANH, HARD_SHRINK, SOFT_SHRINK, TANH_SHRINK, SQUAREPLUS,
                   SPARSE_PLUS, N_ACTS } act;

typedef struct act_case {
    act op;
    double p;
} act_case;

static weft_value *apply(weft_ctx *cx, const act_case *c, weft_value *x)
{
    switch (c->op) {
    case CELU: return weft_celu(cx, x, c->p);
    case HARD_TANH: return weft_hard_tanh(cx, x);
    case HARD_SHRINK: return weft_hard_shrink(cx, x, c->p);
    case SOFT_SHRINK: return weft_soft_shrink(cx, x, c->p);
    case TANH_SHRINK: return weft_tanh_shrink(cx, x);
    case SQUAREPLUS: return weft_squareplus(cx, x, c->p);
    default: return weft_sparse_plus(cx, x);
    }
}

static double reference(const act_case *c, double x)
{
    double p = c->p;
    switch (c->op) {
    case CELU: return fmax(x, 0) + p * expm1(fmin(x, 0) / p) + (isnan(x) ? x : 0);
    case HARD_TANH: return isnan(x) ? x : fmin(fmax(x, -1), 1);
    case HARD_SHRINK: return fabs(x) > p ? x : 0;
    case SOFT_SHRINK: return x > p ? x - p : x < -p ? x + p : 0;
    case TANH_SHRINK: return x - tanh(x);
    case SQUAREPLUS: return (x + sqrt(x * x + p)) / 2;
    default: return x <= -1 ? 0 : x < 1 ? 0.25 * ((x + 1) * (x + 1)) : x;
    }
}

static int act_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    outs[0] = apply(cx, user, a[0]);
    return weft_ctx_status(cx);
}

static const double xs[] = { -1e30, -7, -2, -1, -0.75, -0.5, -0.3, -0.0, 0.0, 0.2,
                             0.5, 0.5000001, 0.9, 1, 1.5, 3, 40, 1e30, NAN };
#define N_XS ((int64_t)(sizeof xs / sizeof xs[0]))

Test(ops_keras_activations, elementwise_against_keras_formulas)
{
    const act_case cases[] = { { CELU, 1 }, { CELU, 0.5 }, { HARD_TANH, 0 },
                               { HARD_SHRINK, 0.5 }, { SOFT_SHRINK, 0.5 },
                               { SOFT_SHRINK, 0 }, { TANH_SHRINK, 0 }, { SQUAREPLUS, 4 },
                               { SQUAREPLUS, 0 }, { SPARSE_PLUS, 0 } };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        for (int d = 0; d < 2; d++) {
            weft_dtype dt = d ? WEFT_F64 : WEFT_F32;
            double x[N_XS];
            for (int64_t i = 0; i < N_XS; i++)
                x[i] = d ? xs[i] : (double)(float)xs[i];
            int64_t n = N_XS;
            weft_tensor *t = test_tensor(dt, 1, &n, x), *y;
            op_results_everywhere(act_body, (void *)&cases[k], &t, 1, &y, 1, "activation");
            for (int64_t i = 0; i < N_XS; i++) {
                double want = reference(&cases[k], x[i]), got = test_element(y, i);
                double tol = d ? 1e-15 : 1e-6;
                if (isinf((float)(x[i] * x[i])) && cases[k].op == SQUAREPLUS && !d)
                    continue;   /* x^2 overflows f32 there, as in Keras */
                cr_assert((isnan(want) && isnan(got)) ||
                              fabs(got - want) <= tol * fmax(1, fabs(want)),
                          "activation %d (%g) at %g: %.17g, want %.17g", cases[k].op,
                          cases[k].p, x[i], got, want);
            }
            weft_tensor_release(y);
            weft_tensor_release(t);
        }
}

static int grad_act(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    outs[0] = apply(cx, user, a[0]);
    return weft_ctx_status(cx);
}

Test(ops_keras_activations, elementwise_gradients_match_differences)
{
    /* Away from the kinks at -1, -0.5, 0, 0.5 and 1. */
    static const double v[12] = { -3, -1.2, -0.8, -0.3, -0.1, 0.1, 0.3, 0.7, 0.9, 1.3, 2.5, -2.2 };
    const act_case cases[] = { { CELU, 0.7 }, { HARD_TANH, 0 }, { HARD_SHRINK, 0.5 },
                               { SOFT_SHRINK, 0.5 }, { TANH_SHRINK, 0 }, { SQUAREPLUS, 4 },
                               { SPARSE_PLUS, 0 } };
    const grad_arg x = { 1, { 12 }, v };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        grad_case c = { grad_act, &cases[k], 1, 1 };
        expect_gradients(&c, &x, "activation");
    }
}

typedef struct relu_case {
    double slope, max, threshold;
} relu_case;

static int relu_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const relu_case *c = user;
    outs[0] = weft_relu_ex(cx, a[0], c->slope, c->max, c->threshold);
    if (c->slope != 0 && c->max == INFINITY && c->threshold == 0)
        outs[1] = weft_leaky_relu(cx, a[0], c->slope);
    else if (c->slope == 0 && c->max == 6 && c->threshold == 0)
        outs[1] = weft_relu6(cx, a[0]);
    else
        outs[1] = weft_relu(cx, a[0]);
    return weft_ctx_status(cx);
}

static int relu_one(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const relu_case *c = user;
    outs[0] = weft_relu_ex(cx, a[0], c->slope, c->max, c->threshold);
    return weft_ctx_status(cx);
}

/* Keras 3's relu, in double. */
static double relu_ref(const relu_case *c, double x)
{
    if (c->slope != 0 && c->max == INFINITY && c->threshold == 0)
        return x > 0 ? x : c->slope * x;
    double neg = fmax(-x + c->threshold, 0), y = c->threshold != 0 ? x * (x > c->threshold)
                                                                  : fmax(x, 0);
    if (c->max != INFINITY)
        y = fmin(fmax(y, 0), c->max);
    return c->slope != 0 ? y - c->slope * neg : y;
}

Test(ops_keras_activations, relu_with_parameters)
{
    const relu_case cases[] = { { 0, INFINITY, 0 }, { 0, 6, 0 }, { 0.2, INFINITY, 0 },
                                { 0.1, 5, 1 }, { 0, 2.5, 0 }, { 0, INFINITY, -0.5 },
                                { 0.3, INFINITY, 0.5 }, { -0.1, 1, 0 } };
    const double v[12] = { -7, -1.5, -0.5, -0.0, 0.0, 0.25, 0.5, 1, 2.4, 5.5, 7, 100 };
    int64_t n = 12;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        weft_tensor *x = test_tensor(WEFT_F64, 1, &n, v), *y[2];
        op_results_everywhere(relu_body, (void *)&cases[k], &x, 1, y, 2, "relu_ex");
        for (int i = 0; i < 12; i++)
            cr_assert_float_eq(test_element(y[0], i), relu_ref(&cases[k], v[i]), 1e-15,
                               "case %zu at %g: %g", k, v[i], test_element(y[0], i));
        if (k < 3)   /* the plain ops, bit for bit */
            cr_assert(op_same_bits(y[0], y[1]), "case %zu", k);
        weft_tensor_release(y[0]);
        weft_tensor_release(y[1]);
        weft_tensor_release(x);
    }
    static const double g[12] = { -3, -1.2, -0.8, -0.3, -0.1, 0.1, 0.3, 0.7, 0.9, 1.3, 2.5,
                                  6.2 };
    const grad_arg x = { 1, { 12 }, g };
    relu_case c = { 0.1, 5, 1 };
    grad_case gc = { relu_one, &c, 1, 1 };
    expect_gradients(&gc, &x, "relu_ex");
}

static int glu_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    outs[0] = weft_glu(cx, a[0], *(const int *)user);
    return weft_ctx_status(cx);
}

Test(ops_keras_activations, glu_halves)
{
    const double v[12] = { 1, -2, 3, 0.5, -1, 4, 0, 2, -3, 1.5, 2.5, -0.5 };
    int64_t dims[2] = { 2, 6 };
    weft_tensor *x = test_tensor(WEFT_F64, 2, dims, v), *y;
    for (int axis = -1; axis <= 0; axis++) {
        op_results_everywhere(glu_body, &axis, &x, 1, &y, 1, "glu");
        int64_t want_dims[2] = { axis ? 2 : 1, axis ? 3 : 6 };
        test_assert_shape(y, WEFT_F64, 2, want_dims, "glu");
        for (int64_t r = 0; r < want_dims[0]; r++)
            for (int64_t c = 0; c < want_dims[1]; c++) {
                double a = axis ? v[r * 6 + c] : v[c], b = axis ? v[r * 6 + 3 + c] : v[6 + c];
                cr_assert_float_eq(test_element(y, r * want_dims[1] + c), a / (1 + exp(-b)),
                                   1e-15);
            }
        weft_tensor_release(y);
    }
    int axis = -1;
    const grad_arg g = { 2, { 2, 6 }, v };
    grad_case c = { glu_body, &axis, 1, 1 };
    expect_gradients(&c, &g, "glu");
    weft_tensor_release(x);
}

/* The projection onto the simplex by its definition: the largest k with
 * 1 + k z_k > sum of the k largest. */
static void sparsemax_ref(const double *x, int n, double *y)
{
    double z[16], c = 0, sum = 0;
    memcpy(z, x, (size_t)n * sizeof *x);
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (z[j] > z[i]) {
                double t = z[i];
                z[i] = z[j];
                z[j] = t;
            }
    int k = 0;
    for (int j = 0; j < n; j++) {
        c += z[j];
        if (1 + (j + 1) * z[j] > c) {
            k = j + 1;
            sum = c;
        }
    }
    double tau = (sum - 1) / k;
    for (int i = 0; i < n; i++)
        y[i] = fmax(x[i] - tau, 0);
}

static int sparsemax_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    outs[0] = weft_sparsemax(cx, a[0], user ? *(const int *)user : -1);
    return weft_ctx_status(cx);
}

Test(ops_keras_activations, sparsemax_is_the_projection)
{
    uint64_t st = 0x853c49e6748fea9bu;
    for (int round = 0; round < 3; round++) {
        double v[40];
        for (int i = 0; i < 40; i++)
            v[i] = op_uniform(&st) * (round + 1);
        /* Keras 3's threshold goes wrong on a row like this one. */
        v[0] = -0.5;
        v[1] = -0.6;
        for (int i = 2; i < 8; i++)
            v[i] = -5;
        int64_t dims[2] = { 5, 8 };
        for (int d = 0; d < 2; d++) {
            weft_dtype dt = d ? WEFT_F64 : WEFT_F32;
            weft_tensor *x = test_tensor(dt, 2, dims, v), *y;
            op_results_everywhere(sparsemax_body, NULL, &x, 1, &y, 1, "sparsemax");
            for (int r = 0; r < 5; r++) {
                double xr[8], want[8], total = 0;
                for (int i = 0; i < 8; i++)
                    xr[i] = d ? v[r * 8 + i] : (double)(float)v[r * 8 + i];
                sparsemax_ref(xr, 8, want);
                for (int i = 0; i < 8; i++) {
                    double got = test_element(y, r * 8 + i);
                    cr_assert(fabs(got - want[i]) <= (d ? 1e-14 : 1e-6), "row %d [%d]: %g, "
                              "want %g", r, i, got, want[i]);
                    cr_assert(want[i] > 0 || got == 0, "an exact zero");
                    total += got;
                }
                cr_assert(fabs(total - 1) < (d ? 1e-14 : 1e-6), "row %d sums to %g", r, total);
            }
            if (round == 0)
                cr_assert(fabs(test_element(y, 0) - 0.55) < 1e-6 &&
                          fabs(test_element(y, 1) - 0.45) < 1e-6, "the row of two negatives");
            weft_tensor_release(y);
            weft_tensor_release(x);
        }
    }
}

/* Along axis 0 as along the last axis of the transpose. */
Test(ops_keras_activations, sparsemax_along_an_axis)
{
    const double v[6] = { 0.1, 2.0, 0.3, 0.8, -1.0, 0.35 };
    int64_t dims[2] = { 3, 2 };
    weft_tensor *x = test_tensor(WEFT_F64, 2, dims, v), *y;
    int axis = 0;
    op_results_everywhere(sparsemax_body, &axis, &x, 1, &y, 1, "sparsemax axis 0");
    for (int c = 0; c < 2; c++) {
        double col[3] = { v[c], v[2 + c], v[4 + c] }, want[3];
        sparsemax_ref(col, 3, want);
        for (int r = 0; r < 3; r++)
            cr_assert_float_eq(test_element(y, r * 2 + c), want[r], 1e-15);
    }
    weft_tensor_release(y);
    weft_tensor_release(x);
}

Test(ops_keras_activations, sparsemax_gradient)
{
    static const double v[12] = { 0.3, -0.7, 1.2, 0.05, -1.4, 0.9, 0.6, -0.2, 1.7, -0.55,
                                  1.1, 0.8 };
    const grad_arg x = { 2, { 3, 4 }, v };
    grad_case c = { sparsemax_body, NULL, 1, 1 };
    expect_gradients(&c, &x, "sparsemax");
}

static int refused_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    switch (*(const int *)user) {
    case 0: outs[0] = weft_celu(cx, a[0], 0); break;
    case 1: outs[0] = weft_soft_shrink(cx, a[0], -1); break;
    case 2: outs[0] = weft_squareplus(cx, a[0], NAN); break;
    case 3: outs[0] = weft_glu(cx, a[0], -1); break;
    case 4: outs[0] = weft_sparsemax(cx, weft_cast(cx, a[0], WEFT_I32), -1); break;
    case 5: outs[0] = weft_relu_ex(cx, a[0], 0, -1, 0); break;
    default: outs[0] = weft_relu_ex(cx, a[0], NAN, INFINITY, 0); break;
    }
    return weft_ctx_status(cx);
}

Test(ops_keras_activations, refusals)
{
    const double v[3] = { 1, 2, 3 };
    int64_t n = 3;
    weft_tensor *x = test_tensor(WEFT_F32, 1, &n, v);
    const op_error_case cases[] = {
        { 0, WEFT_EINVAL, "weft_celu: alpha 0 is not finite and nonzero" },
        { 1, WEFT_EINVAL, "weft_soft_shrink: threshold -1 is not finite and >= 0" },
        { 2, WEFT_EINVAL, "weft_squareplus: b nan is not finite and >= 0" },
        { 3, WEFT_ESHAPE, "weft_glu: axis -1 of f32[3] is not an even dim" },
        { 4, WEFT_EDTYPE, "weft_sparsemax: i32[3] is not f32 or f64" },
        { 5, WEFT_EINVAL, "weft_relu_ex: max_value -1 is not finite and >= 0" },
        { 6, WEFT_EINVAL, "weft_relu_ex: negative_slope nan is not finite" },
    };
    op_expect_errors(rt, refused_body, cases, 7, &x, 1);
    weft_tensor_release(x);
}
