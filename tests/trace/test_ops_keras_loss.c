/* Keras's per-sample losses checked against loops written from Keras's
 * definitions (its epsilon 1e-7, its clipping, its 0/1 label conversion
 * for the hinges), per row of a [4, 6] batch, in f32 and f64, eagerly and
 * traced on 1, 2 and 4 workers (the same bits everywhere); the logits
 * paths against their probability paths; and the errors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op_calls.h"
#include "suite_runtimes.h"

TestSuite(ops_keras_loss, .init = suite_runtimes_create, .fini = suite_runtimes_destroy,
          .timeout = 60);

typedef enum loss {
    MSE, MAE, MAPE, MSLE, HUBER, LOG_COSH, HINGE, SQ_HINGE, CAT_HINGE, KLD, POISSON, COSINE,
    BCE, CCE, SPARSE_CCE, N_LOSSES
} loss;

static const char *const loss_names[N_LOSSES] = {
    "mse", "mae", "mape", "msle", "huber", "log_cosh", "hinge", "squared_hinge",
    "categorical_hinge", "kld", "poisson", "cosine", "bce", "cce", "sparse_cce",
};

typedef struct loss_case {
    loss which;
    bool from_logits;
    double param;   /* huber's delta, the crossentropies' label_smoothing */
} loss_case;

static int body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const loss_case *c = user;
    weft_value *t = a[0], *p = a[1];
    switch (c->which) {
    case MSE: outs[0] = weft_mean_squared_error(cx, t, p); break;
    case MAE: outs[0] = weft_mean_absolute_error(cx, t, p); break;
    case MAPE: outs[0] = weft_mean_absolute_percentage_error(cx, t, p); break;
    case MSLE: outs[0] = weft_mean_squared_logarithmic_error(cx, t, p); break;
    case HUBER: outs[0] = weft_huber_loss(cx, t, p, c->param); break;
    case LOG_COSH: outs[0] = weft_log_cosh_loss(cx, t, p); break;
    case HINGE: outs[0] = weft_hinge_loss(cx, t, p); break;
    case SQ_HINGE: outs[0] = weft_squared_hinge_loss(cx, t, p); break;
    case CAT_HINGE: outs[0] = weft_categorical_hinge_loss(cx, t, p); break;
    case KLD: outs[0] = weft_kl_divergence(cx, t, p); break;
    case POISSON: outs[0] = weft_poisson_loss(cx, t, p); break;
    case COSINE: outs[0] = weft_cosine_similarity_loss(cx, t, p); break;
    case BCE: outs[0] = weft_binary_crossentropy(cx, t, p, c->from_logits, c->param); break;
    case CCE: outs[0] = weft_categorical_crossentropy(cx, t, p, c->from_logits, c->param); break;
    default: outs[0] = weft_sparse_categorical_crossentropy(cx, t, p, c->from_logits); break;
    }
    return weft_ctx_status(cx);
}

enum { ROWS = 4, COLS = 6 };
#define EPS 1e-7

static double clipd(double x, double lo, double hi)
{
    return fmin(fmax(x, lo), hi);
}

/* Keras's loss of row r: t and p hold the row's COLS values (t the class
 * index in t[0] for SPARSE_CCE); binary says whether every label of the
 * whole batch is 0 or 1 (the hinges' conversion). */
static double reference(const loss_case *c, const double *t, const double *p, bool binary)
{
    double s = 0, m = 0;
    switch (c->which) {
    case MSE: for (int i = 0; i < COLS; i++) s += (p[i] - t[i]) * (p[i] - t[i]); return s / COLS;
    case MAE: for (int i = 0; i < COLS; i++) s += fabs(p[i] - t[i]); return s / COLS;
    case MAPE:
        for (int i = 0; i < COLS; i++)
            s += fabs((t[i] - p[i]) / fmax(fabs(t[i]), EPS));
        return 100 * s / COLS;
    case MSLE:
        for (int i = 0; i < COLS; i++) {
            double d = log(fmax(p[i], EPS) + 1) - log(fmax(t[i], EPS) + 1);
            s += d * d;
        }
        return s / COLS;
    case HUBER:
        for (int i = 0; i < COLS; i++) {
            double e = p[i] - t[i];
            s += fabs(e) <= c->param ? 0.5 * e * e : c->param * fabs(e) - 0.5 * c->param * c->param;
        }
        return s / COLS;
    case LOG_COSH: for (int i = 0; i < COLS; i++) s += log(cosh(p[i] - t[i])); return s / COLS;
    case HINGE:
    case SQ_HINGE:
        for (int i = 0; i < COLS; i++) {
            double h = fmax(1 - (binary ? 2 * t[i] - 1 : t[i]) * p[i], 0);
            s += c->which == HINGE ? h : h * h;
        }
        return s / COLS;
    case CAT_HINGE:
        m = -INFINITY;
        for (int i = 0; i < COLS; i++) {
            s += t[i] * p[i];
            m = fmax(m, (1 - t[i]) * p[i]);
        }
        return fmax(m - s + 1, 0);
    case KLD:
        for (int i = 0; i < COLS; i++) {
            double tc = clipd(t[i], EPS, 1), pc = clipd(p[i], EPS, 1);
            s += tc * log(tc / pc);
        }
        return s;
    case POISSON: for (int i = 0; i < COLS; i++) s += p[i] - t[i] * log(p[i] + EPS); return s / COLS;
    case COSINE: {
        double tt = 0, pp = 0;
        for (int i = 0; i < COLS; i++) {
            s += t[i] * p[i];
            tt += t[i] * t[i];
            pp += p[i] * p[i];
        }
        return -s / sqrt(fmax(tt, 1e-12)) / sqrt(fmax(pp, 1e-12));
    }
    case BCE:
        for (int i = 0; i < COLS; i++) {
            double ti = t[i] * (1 - c->param) + 0.5 * c->param;
            double pi = c->from_logits ? 1 / (1 + exp(-p[i])) : clipd(p[i], EPS, 1 - EPS);
            double off = c->from_logits ? 0 : EPS;   /* logits: the exact form */
            s -= ti * log(pi + off) + (1 - ti) * log(1 - pi + off);
        }
        return s / COLS;
    case CCE: {
        double total = 0, lse = -INFINITY;
        for (int i = 0; i < COLS; i++) {
            total += p[i];
            lse = fmax(lse, p[i]);
        }
        double z = 0;
        for (int i = 0; i < COLS; i++)
            z += exp(p[i] - lse);
        for (int i = 0; i < COLS; i++) {
            double ti = t[i] * (1 - c->param) + c->param / COLS;
            double lp = c->from_logits ? p[i] - lse - log(z) : log(clipd(p[i] / total, EPS, 1 - EPS));
            s -= ti * lp;
        }
        return s;
    }
    default: {
        int label = (int)t[0];
        double z = 0, l[COLS];
        for (int i = 0; i < COLS; i++) {
            l[i] = c->from_logits ? p[i] : log(clipd(p[i], EPS, 1 - EPS));
            z += exp(l[i]);
        }
        return log(z) - l[label];
    }
    }
}

static uint64_t rng = 0xda942042e4dd58b5ULL;

/* Labels and predictions for the loss: probabilities in (0, 1) for the
 * ones that read them as such, one-hot rows for the categorical ones,
 * 0/1 labels for the hinges (or -1/1 when signed), values in [-2, 2)
 * otherwise. */
static void inputs(const loss_case *c, bool signed_labels, double *t, double *p)
{
    bool probs = c->which == KLD || c->which == BCE || c->which == CCE || c->which == MSLE ||
                 c->which == POISSON || (c->which == SPARSE_CCE && !c->from_logits);
    for (int r = 0; r < ROWS; r++)
        for (int i = 0; i < COLS; i++) {
            double u = (op_uniform(&rng) + 1) / 2;
            int at = r * COLS + i;
            p[at] = probs && !c->from_logits ? 0.02 + 0.96 * u : 4 * u - 2;
            double v = (op_uniform(&rng) + 1) / 2;
            if (c->which == HINGE || c->which == SQ_HINGE)
                t[at] = v < 0.5 ? (signed_labels ? -1 : 0) : 1;
            else if (c->which == CAT_HINGE || c->which == CCE)
                t[at] = i == (r * 5 + 2) % COLS;
            else if (c->which == SPARSE_CCE)
                t[at] = (r * 5 + 2) % COLS;   /* only t[r * COLS] is read */
            else if (probs)
                t[at] = v;
            else
                t[at] = 4 * v - 2;
        }
    if (c->which == MAPE)
        t[3] = 0;   /* a zero label: divided by epsilon */
}

static void check_case(const loss_case *c, bool signed_labels)
{
    double t[ROWS * COLS], p[ROWS * COLS], sparse[ROWS];
    inputs(c, signed_labels, t, p);
    bool binary = true;
    for (int i = 0; i < ROWS * COLS; i++)
        binary = binary && (t[i] == 0 || t[i] == 1);
    for (int r = 0; r < ROWS; r++)
        sparse[r] = t[r * COLS];
    for (int f = 0; f < 2; f++) {
        weft_dtype dt = f ? WEFT_F64 : WEFT_F32;
        weft_tensor *args[2] = {
            c->which == SPARSE_CCE ? test_tensor(WEFT_I32, 1, (int64_t[]){ ROWS }, sparse)
                                   : test_tensor(dt, 2, (int64_t[]){ ROWS, COLS }, t),
            test_tensor(dt, 2, (int64_t[]){ ROWS, COLS }, p)
        };
        weft_tensor *y;
        op_results_everywhere(body, (void *)c, args, 2, &y, 1, loss_names[c->which]);
        test_assert_shape(y, dt, 1, (int64_t[]){ ROWS }, loss_names[c->which]);
        for (int r = 0; r < ROWS; r++) {
            /* The reference reads what the op read: f32 inputs rounded. */
            double tr[COLS], pr[COLS];
            for (int i = 0; i < COLS; i++) {
                tr[i] = f ? t[r * COLS + i] : (float)t[r * COLS + i];
                pr[i] = f ? p[r * COLS + i] : (float)p[r * COLS + i];
            }
            double want = reference(c, tr, pr, binary), got = test_element(y, r);
            double tol = (f ? 1e-12 : 2e-5) * fmax(1, fabs(want));
            cr_assert(fabs(got - want) <= tol, "%s%s %s row %d: %.17g, want %.17g",
                      loss_names[c->which], c->from_logits ? " (logits)" : "",
                      weft_dtype_name(dt), r, got, want);
        }
        weft_tensor_release(y);
        weft_tensor_release(args[0]);
        weft_tensor_release(args[1]);
    }
}

Test(ops_keras_loss, regression_and_distribution_losses_match_keras)
{
    const loss_case cases[] = { { MSE, false, 0 },  { MAE, false, 0 },     { MAPE, false, 0 },
                                { MSLE, false, 0 }, { HUBER, false, 1 },   { HUBER, false, 0.3 },
                                { LOG_COSH, false, 0 }, { KLD, false, 0 }, { POISSON, false, 0 },
                                { COSINE, false, 0 } };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_case(&cases[i], false);
}

/* 0/1 labels become -1/1; labels already -1/1 stay. */
Test(ops_keras_loss, hinges_convert_binary_labels)
{
    const loss_case cases[] = { { HINGE, false, 0 }, { SQ_HINGE, false, 0 },
                                { CAT_HINGE, false, 0 } };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int sign = 0; sign < 2; sign++)
            check_case(&cases[i], sign);
}

Test(ops_keras_loss, crossentropies_on_probabilities_and_logits)
{
    const loss_case cases[] = {
        { BCE, false, 0 }, { BCE, true, 0 }, { BCE, false, 0.2 }, { BCE, true, 0.1 },
        { CCE, false, 0 }, { CCE, true, 0 }, { CCE, false, 0.2 }, { CCE, true, 0.1 },
        { SPARSE_CCE, false, 0 }, { SPARSE_CCE, true, 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_case(&cases[i], false);
}

static int bad_body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    switch (*(const int *)user) {
    case 0: outs[0] = weft_mean_squared_error(cx, a[0], weft_cast(cx, a[0], WEFT_I32)); break;
    case 1: outs[0] = weft_huber_loss(cx, a[0], a[0], -1); break;
    case 2: outs[0] = weft_binary_crossentropy(cx, a[0], a[0], false, 1.5); break;
    case 3: outs[0] = weft_sparse_categorical_crossentropy(cx, a[0], a[0], true); break;
    case 4:
        outs[0] = weft_sparse_categorical_crossentropy(cx, weft_cast(cx, a[0], WEFT_I32), a[0],
                                                        true);
        break;
    case 5: outs[0] = weft_kl_divergence(cx, a[0], weft_reshape(cx, a[0], 0, NULL)); break;
    }
    return weft_ctx_status(cx);
}

Test(ops_keras_loss, errors_name_the_op)
{
    const op_error_case cases[] = {
        { 0, WEFT_EDTYPE, "weft_mean_squared_error: y_pred i32[1] is not f32 or f64" },
        { 1, WEFT_EINVAL, "weft_huber_loss: delta -1 is not finite and >= 0" },
        { 2, WEFT_EINVAL, "weft_binary_crossentropy: label_smoothing 1.5 is not in [0, 1]" },
        { 3, WEFT_EDTYPE, "weft_sparse_categorical_crossentropy: y_true f64[1] is not i32 or "
                          "i64 (class indices)" },
        { 4, WEFT_ESHAPE, "weft_sparse_categorical_crossentropy: y_true i32[1] and y_pred "
                          "f64[1] are not [...] and [..., classes]" },
        { 5, WEFT_ESHAPE, "weft_kl_divergence: y_pred f64[] has no last axis" },
    };
    double v[1] = { 0.5 };
    weft_tensor *x = test_tensor(WEFT_F64, 1, (int64_t[]){ 1 }, v);
    op_expect_errors(rt, bad_body, cases, sizeof cases / sizeof cases[0], &x, 1);
    weft_tensor_release(x);
}
