/* Keras's focal crossentropies: against its formulas computed here in
 * double, eagerly and traced on 1, 2 and 4 workers with the same bits;
 * gamma 0 reduces to the plain crossentropies bit for bit; gradients
 * against central differences; the refusals. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "grad_check.h"
#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_focal_loss, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

#define EPS 1e-7

typedef struct focal_case {
    bool categorical, balance, logits;
    double alpha, gamma, smoothing;
} focal_case;

static int focal_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const focal_case *c = user;
    outs[0] = c->categorical
                  ? weft_categorical_focal_crossentropy(cx, a[0], a[1], c->alpha, c->gamma,
                                                        c->logits, c->smoothing)
                  : weft_binary_focal_crossentropy(cx, a[0], a[1], c->balance, c->alpha,
                                                   c->gamma, c->logits, c->smoothing);
    return weft_ctx_status(cx);
}

/* Rounds each step to the dtype the op computes in (f32 or f64), so the
 * clip bounds and the epsilon near 1 are the op's. */
static bool in_f32;

static double R(double x)
{
    return in_f32 ? (double)(float)x : x;
}

static double clipd(double x)
{
    return fmin(fmax(x, R(EPS)), R(1 - EPS));
}

/* Keras 2's backend, one row of n. */
static double binary_ref(const focal_case *c, const double *t0, const double *y, int n)
{
    double sum = 0;
    for (int i = 0; i < n; i++) {
        double t = c->smoothing ? R(R(t0[i] * R(1 - c->smoothing)) + R(c->smoothing / 2)) : t0[i];
        double p = c->logits ? 1 / (1 + exp(-y[i])) : y[i];
        double p_t = t * p + (1 - t) * (1 - p);
        double bce = c->logits ? fmax(y[i], 0) - y[i] * t + log1p(exp(-fabs(y[i])))
                               : -(t * log(R(clipd(p) + R(EPS))) +
                                   (1 - t) * log(R(R(1 - clipd(p)) + R(EPS))));
        double f = pow(1 - p_t, c->gamma) * bce;
        if (c->balance)
            f *= t * c->alpha + (1 - t) * (1 - c->alpha);
        sum += f;
    }
    return sum / n;
}

static double categorical_ref(const focal_case *c, const double *t0, const double *y, int n)
{
    double p[16], total = 0, m = -INFINITY, sum = 0;
    for (int i = 0; i < n; i++)
        m = fmax(m, y[i]);
    for (int i = 0; i < n; i++) {
        p[i] = c->logits ? exp(y[i] - m) : y[i];
        total += p[i];
    }
    if (c->logits) {
        for (int i = 0; i < n; i++)
            p[i] /= total;
        total = 0;
        for (int i = 0; i < n; i++)
            total += p[i];
    }
    for (int i = 0; i < n; i++) {
        double t = c->smoothing ? t0[i] * (1 - c->smoothing) + c->smoothing / n : t0[i];
        double q = clipd(R(p[i] / total));
        sum += c->alpha * pow(1 - q, c->gamma) * (-t * log(q));
    }
    return sum;
}

static void expect_case(const focal_case *c, weft_dtype dt)
{
    enum { ROWS = 4, COLS = 5 };
    static const double probs[ROWS * COLS] = {
        0.9, 0.05, 0.02, 0.02, 0.01, 0.1, 0.2, 0.3, 0.25, 0.15,
        0.0, 1.0, 0.5, 0.3, 0.7,     0.33, 0.01, 0.99, 0.6, 0.4,
    };
    static const double logits[ROWS * COLS] = {
        2.0, -1.0, 0.5, 3.5, -4.0, 0.0, 0.1, -0.1, 1.2, -2.2,
        -30, 30, 0.7, -0.3, 1.9,   5.0, -5.0, 2.5, 0.2, -0.8,
    };
    static const double binary_t[ROWS * COLS] = {
        1, 0, 0, 1, 0, 0, 1, 1, 0, 1, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1,
    };
    static const double onehot_t[ROWS * COLS] = {
        1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0.2, 0, 0.8, 0, 0,
    };
    const double *y = c->logits ? logits : probs, *t = c->categorical ? onehot_t : binary_t;
    int64_t dims[2] = { ROWS, COLS };
    weft_tensor *args[2] = { test_tensor(WEFT_I32, 2, dims, t), test_tensor(dt, 2, dims, y) };
    if (c->categorical) {
        weft_tensor_release(args[0]);
        args[0] = test_tensor(dt, 2, dims, t);
    }
    weft_tensor *out;
    op_results_everywhere(focal_body, (void *)c, args, 2, &out, 1, "focal");
    int64_t rows = ROWS;
    test_assert_shape(out, dt, 1, &rows, "focal");
    in_f32 = dt == WEFT_F32;
    for (int r = 0; r < ROWS; r++) {
        double yr[COLS];
        for (int i = 0; i < COLS; i++)
            yr[i] = dt == WEFT_F32 ? (double)(float)y[r * COLS + i] : y[r * COLS + i];
        double want = c->categorical ? categorical_ref(c, t + r * COLS, yr, COLS)
                                     : binary_ref(c, t + r * COLS, yr, COLS);
        double tol = dt == WEFT_F32 ? 2e-5 : 1e-12;
        cr_assert(fabs(test_element(out, r) - want) <= tol * fmax(1, fabs(want)),
                  "row %d: %.17g, want %.17g (categorical %d, logits %d, gamma %g, dt %d)", r,
                  test_element(out, r), want, c->categorical, c->logits, c->gamma, (int)dt);
    }
    weft_tensor_release(out);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

Test(ops_focal_loss, against_keras_formulas)
{
    const focal_case cases[] = {
        { false, false, false, 0.25, 2, 0 },   { false, true, false, 0.25, 2, 0 },
        { false, true, true, 0.6, 1.5, 0 },    { false, false, true, 0.25, 3, 0.1 },
        { false, true, false, 0.25, 0.5, 0.2 }, { true, false, false, 0.25, 2, 0 },
        { true, false, true, 0.5, 1, 0 },      { true, false, false, 0.25, 4, 0.3 },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        expect_case(&cases[k], WEFT_F64);
        expect_case(&cases[k], WEFT_F32);
    }
}

static int pair_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    bool logits = user != NULL;
    outs[0] = weft_binary_focal_crossentropy(cx, a[0], a[1], false, 0.25, 0, logits, 0.1);
    outs[1] = weft_binary_crossentropy(cx, a[0], a[1], logits, 0.1);
    outs[2] = weft_categorical_focal_crossentropy(cx, a[0], a[1], 1, 0, logits, 0.1);
    outs[3] = weft_categorical_crossentropy(cx, a[0], a[1], logits, 0.1);
    return weft_ctx_status(cx);
}

/* gamma 0: the plain crossentropies, bit for bit (the categorical one's
 * softmax of logits goes another way there, so only probabilities). */
Test(ops_focal_loss, gamma_zero_is_the_crossentropy)
{
    const double t[6] = { 1, 0, 0, 0, 1, 0 }, p[6] = { 0.7, 0.2, 0.1, 0.3, 0.3, 0.4 };
    int64_t dims[2] = { 2, 3 };
    weft_tensor *args[2] = { test_tensor(WEFT_F32, 2, dims, t), test_tensor(WEFT_F32, 2, dims, p) };
    weft_tensor *outs[4];
    for (int logits = 0; logits < 2; logits++) {
        op_results_everywhere(pair_body, logits ? (void *)1 : NULL, args, 2, outs, 4, "gamma 0");
        cr_assert(op_same_bits(outs[0], outs[1]), "binary, logits %d", logits);
        if (!logits)
            cr_assert(op_same_bits(outs[2], outs[3]), "categorical");
        for (int o = 0; o < 4; o++)
            weft_tensor_release(outs[o]);
    }
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

static const double g_t[12] = { 1, 0, 1, 0, 0, 1, 1, 1, 0, 0, 1, 0 };
static const double g_logits[12] = { 0.3, -0.7, 1.2, 0.05, -1.4, 0.9,
                                     0.6, -0.2, 1.7, -0.55, 1.1, 0.8 };

static int grad_focal(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const focal_case *c = user;
    weft_value *t = a[1];
    weft_value *y = c->logits ? a[0] : weft_sigmoid(cx, a[0]);
    outs[0] = c->categorical
                  ? weft_categorical_focal_crossentropy(cx, t, y, c->alpha, c->gamma, c->logits,
                                                        c->smoothing)
                  : weft_binary_focal_crossentropy(cx, t, y, c->balance, c->alpha, c->gamma,
                                                   c->logits, c->smoothing);
    return weft_ctx_status(cx);
}

Test(ops_focal_loss, gradients_match_differences)
{
    const focal_case cases[] = {
        { false, true, true, 0.25, 2, 0.1 }, { false, false, false, 0.25, 2, 0 },
        { true, false, true, 0.25, 2, 0 },   { true, false, false, 0.4, 1.5, 0.1 },
    };
    const grad_arg x[2] = { { 2, { 3, 4 }, g_logits }, { 2, { 3, 4 }, g_t } };
    for (size_t k = 0; k < 4; k++) {
        grad_case c = { grad_focal, &cases[k], 2, 1 };
        expect_gradients(&c, x, cases[k].categorical ? "categorical focal" : "binary focal");
    }
}

static int refused_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    int which = *(const int *)user;
    switch (which) {
    case 0: outs[0] = weft_binary_focal_crossentropy(cx, a[0], a[1], true, 0.25, -1, false, 0);
        break;
    case 1: outs[0] = weft_categorical_focal_crossentropy(cx, a[0], a[1], NAN, 2, false, 0);
        break;
    case 2: outs[0] = weft_binary_focal_crossentropy(cx, a[0], a[1], true, 0.25, 2, false, 2);
        break;
    default:
        outs[0] = weft_categorical_focal_crossentropy(cx, a[0], weft_cast(cx, a[1], WEFT_I32),
                                                      0.25, 2, false, 0);
    }
    return weft_ctx_status(cx);
}

Test(ops_focal_loss, refusals)
{
    const double v[4] = { 1, 0, 0.5, 0.5 };
    int64_t dims[2] = { 2, 2 };
    weft_tensor *args[2] = { test_tensor(WEFT_F64, 2, dims, v), test_tensor(WEFT_F64, 2, dims, v) };
    const op_error_case cases[] = {
        { 0, WEFT_EINVAL, "weft_binary_focal_crossentropy: alpha 0.25 or gamma -1 is not" },
        { 1, WEFT_EINVAL, "weft_categorical_focal_crossentropy: alpha nan or gamma 2" },
        { 2, WEFT_EINVAL, "weft_binary_focal_crossentropy: label_smoothing 2 is not in [0, 1]" },
        { 3, WEFT_EDTYPE, "weft_categorical_focal_crossentropy" },
    };
    op_expect_errors(rt, refused_body, cases, 4, args, 2);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}
