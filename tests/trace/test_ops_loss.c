/* The losses and normalization ops (softmax, sparse softmax and sigmoid
 * cross-entropy with logits, l2_normalize, moments, batch_normalization,
 * bias_add) through the public API: values against references computed
 * here in double precision, eagerly and traced (the two bit for bit
 * equal), with unknown dims; the stability cases (-inf logits, large
 * logits, all-zero rows); and bad inputs, whose messages name the op.
 *
 * Tolerance: f32 within 2e-5 of the reference relative to max(1, |ref|),
 * f64 within 1e-12; NaN where the reference is NaN. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static weft_runtime *rt;
static void setup(void) { rt = test_runtime(2); }
static void teardown(void) { weft_runtime_destroy(&rt); }

TestSuite(ops_loss, .init = setup, .fini = teardown, .timeout = 60);

#define DIMS(...) ((const int64_t[]){ __VA_ARGS__ })

typedef enum loss_op {
    SOFTMAX_CE, SPARSE_CE, SIGMOID_CE, L2_NORM, MOMENTS, BATCH_NORM, BIAS_ADD
} loss_op;

typedef struct loss_case {
    loss_op op;
    int axis;                 /* SOFTMAX_CE; L2_NORM and MOMENTS: -99 for every axis */
    bool keepdims, with_offset, with_scale;
    double epsilon;
    size_t n_args;
} loss_case;

static int body(weft_ctx *cx, weft_value *const *a, weft_value **outs, void *user)
{
    const loss_case *c = user;
    const int *axes = c->axis == -99 ? NULL : &c->axis;
    size_t n_axes = c->axis == -99 ? 0 : 1;
    switch (c->op) {
    case SOFTMAX_CE:
        outs[0] = weft_softmax_cross_entropy_with_logits(cx, a[0], a[1], c->axis);
        break;
    case SPARSE_CE: outs[0] = weft_sparse_softmax_cross_entropy_with_logits(cx, a[0], a[1]); break;
    case SIGMOID_CE: outs[0] = weft_sigmoid_cross_entropy_with_logits(cx, a[0], a[1]); break;
    case L2_NORM: outs[0] = weft_l2_normalize(cx, a[0], axes, n_axes, c->epsilon); break;
    case MOMENTS: {
        weft_value *mv[2];
        if (weft_moments(cx, a[0], axes, n_axes, c->keepdims, mv) == 0)
            outs[0] = weft_stack(cx, mv, 2, 0);
        break;
    }
    case BATCH_NORM:
        outs[0] = weft_batch_normalization(cx, a[0], a[1], a[2], c->with_offset ? a[3] : NULL,
                                           c->with_scale ? a[4] : NULL, c->epsilon);
        break;
    case BIAS_ADD: outs[0] = weft_bias_add(cx, a[0], a[1]); break;
    }
    return weft_ctx_status(cx);
}

/* c on args, eagerly (eager) or traced with signature sig (NULL: none):
 * the call's code and its result in *out. */
static int call(const loss_case *c, weft_tensor *const *args, bool eager, const weft_spec *sig,
                weft_tensor **out)
{
    weft_function_desc d = { .name = "loss", .body = body, .user = (void *)c,
                             .n_args = (uint32_t)c->n_args, .n_outs = 1, .input_signature = sig,
                             .flags = eager ? WEFT_RUN_EAGERLY : 0 };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
    weft_arg a[5];
    for (size_t i = 0; i < c->n_args; i++)
        a[i] = weft_arg_tensor(args[i]);
    *out = NULL;
    int rc = weft_function_call(f, a, c->n_args, out, 1);
    weft_function_destroy(&f);
    return rc;
}

static void assert_close(const weft_tensor *t, const double *want, int64_t n, const char *what)
{
    cr_assert_eq(weft_tensor_numel(t), n, "%s: %lld elements", what,
                 (long long)weft_tensor_numel(t));
    double tol = weft_tensor_dtype(t) == WEFT_F32 ? 2e-5 : 1e-12;
    for (int64_t i = 0; i < n; i++) {
        double g = test_element(t, i);
        if (isnan(want[i]))
            cr_assert(isnan(g), "%s: element %lld is %g, not NaN", what, (long long)i, g);
        else
            cr_assert(fabs(g - want[i]) <= tol * fmax(1, fabs(want[i])),
                      "%s: element %lld is %.17g, not %.17g", what, (long long)i, g, want[i]);
    }
}

/* Runs c eagerly and traced on args: both close to want, and equal. */
static void check(const loss_case *c, weft_tensor *const *args, const double *want, int64_t n,
                  const char *what)
{
    weft_tensor *y[2];
    for (int eager = 0; eager < 2; eager++) {
        cr_assert_eq(call(c, args, eager, NULL, &y[eager]), 0, "%s: %s", what, weft_errmsg());
        assert_close(y[eager], want, n, what);
    }
    size_t bytes = (size_t)n * weft_dtype_size(weft_tensor_dtype(y[0]));
    cr_assert(memcmp(weft_tensor_data(y[0]), weft_tensor_data(y[1]), bytes) == 0,
              "%s: eager and traced differ", what);
    weft_tensor_release(y[0]);
    weft_tensor_release(y[1]);
}

static double *values(int64_t n, double lo, double hi, uint64_t seed)
{
    double *v = malloc(sizeof(double) * (size_t)n);
    cr_assert_not_null(v);
    for (int64_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        v[i] = lo + (hi - lo) * (double)(seed >> 11) / 9007199254740992.0;
    }
    return v;
}

static double lse_row(const double *x, int64_t n, int64_t step)
{
    double m = -INFINITY, s = 0;
    for (int64_t k = 0; k < n; k++)
        m = fmax(m, x[k * step]);
    for (int64_t k = 0; k < n; k++)
        s += exp(x[k * step] - m);
    return m + log(s);
}

/* ---- Cross-entropies ---------------------------------------------------- */

/* [4,5] logits, labels a distribution per row (axis -1) or per column
 * (axis 0). */
Test(ops_loss, softmax_cross_entropy_along_each_axis)
{
    double *x = values(20, -4, 4, 1), *l = values(20, 0, 1, 2);
    for (int dt = 0; dt < 2; dt++)
        for (int axis = -1; axis <= 0; axis++) {
            weft_dtype t = dt ? WEFT_F64 : WEFT_F32;
            int64_t rows = axis == -1 ? 4 : 5, len = axis == -1 ? 5 : 4;
            int64_t step = axis == -1 ? 1 : 5, stride = axis == -1 ? 5 : 1;
            double want[5];
            for (int64_t r = 0; r < rows; r++) {
                double lse = lse_row(x + r * stride, len, step), s = 0;
                for (int64_t k = 0; k < len; k++)
                    s -= l[r * stride + k * step] * (x[r * stride + k * step] - lse);
                want[r] = s;
            }
            weft_tensor *args[2] = { test_tensor(t, 2, DIMS(4, 5), l),
                                     test_tensor(t, 2, DIMS(4, 5), x) };
            loss_case c = { .op = SOFTMAX_CE, .axis = axis, .n_args = 2 };
            check(&c, args, want, rows, axis ? "softmax ce axis -1" : "softmax ce axis 0");
            weft_tensor_release(args[0]);
            weft_tensor_release(args[1]);
        }
    free(x);
    free(l);
}

/* logsumexp - the label's logit; a -inf logit elsewhere stays out of it;
 * labels outside [0, 4) give NaN. */
Test(ops_loss, sparse_softmax_cross_entropy_picks_the_label)
{
    double x[6 * 4];
    double *r = values(24, -3, 3, 3);
    memcpy(x, r, sizeof x);
    free(r);
    x[1 * 4 + 2] = -INFINITY;   /* row 1's label is 0 */
    const double labels[6] = { 3, 0, 1, -1, 4, 2 };
    double want[6];
    for (int i = 0; i < 6; i++) {
        int lab = (int)labels[i];
        want[i] = lab < 0 || lab >= 4 ? NAN : lse_row(x + i * 4, 4, 1) - x[i * 4 + lab];
    }
    for (int dt = 0; dt < 2; dt++) {
        weft_tensor *args[2] = { test_tensor(dt ? WEFT_I64 : WEFT_I32, 1, DIMS(6), labels),
                                 test_tensor(dt ? WEFT_F64 : WEFT_F32, 2, DIMS(6, 4), x) };
        loss_case c = { .op = SPARSE_CE, .n_args = 2 };
        check(&c, args, want, 6, "sparse ce");
        weft_tensor_release(args[0]);
        weft_tensor_release(args[1]);
    }
}

/* Traced once for labels i32[?] and logits f32[?,3]; two batch sizes. */
Test(ops_loss, sparse_softmax_cross_entropy_on_an_unknown_batch)
{
    weft_spec sig[2];
    cr_assert_eq(weft_spec_parse("i32[?]", &sig[0]), 0);
    cr_assert_eq(weft_spec_parse("f32[?,3]", &sig[1]), 0);
    loss_case c = { .op = SPARSE_CE, .n_args = 2 };
    weft_function_desc d = { .name = "sparse", .body = body, .user = &c, .n_args = 2,
                             .n_outs = 1, .input_signature = sig };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
    const int64_t batch[2] = { 2, 7 };
    for (int k = 0; k < 2; k++) {
        double *x = values(batch[k] * 3, -2, 2, 10 + (uint64_t)k), lab[7], want[7];
        for (int64_t i = 0; i < batch[k]; i++) {
            lab[i] = (double)(i % 3);
            want[i] = lse_row(x + i * 3, 3, 1) - x[i * 3 + i % 3];
        }
        weft_tensor *lt = test_tensor(WEFT_I32, 1, DIMS(batch[k]), lab);
        weft_tensor *xt = test_tensor(WEFT_F32, 2, DIMS(batch[k], 3), x);
        weft_arg a[2] = { weft_arg_tensor(lt), weft_arg_tensor(xt) };
        weft_tensor *y = NULL;
        cr_assert_eq(weft_function_call(f, a, 2, &y, 1), 0, "%s", weft_errmsg());
        assert_close(y, want, batch[k], "unknown batch");
        weft_tensor_release(y);
        weft_tensor_release(lt);
        weft_tensor_release(xt);
        free(x);
    }
    weft_function_stats st;
    weft_function_get_stats(f, &st);
    cr_assert_eq(st.traces, 1, "traced %llu times", (unsigned long long)st.traces);
    weft_function_destroy(&f);
}

/* The stable form stays finite for logits of +-100 and matches the plain
 * formula where that is exact enough. */
Test(ops_loss, sigmoid_cross_entropy_is_stable)
{
    double x[8] = { -100, -3, -0.5, 0, 0.25, 2, 30, 100 };
    double z[8] = { 1, 0, 0.3, 1, 0.5, 1, 0, 0 };
    double want[8];
    for (int i = 0; i < 8; i++)
        want[i] = fmax(x[i], 0) - x[i] * z[i] + log1p(exp(-fabs(x[i])));
    cr_assert(want[0] == 100 && want[7] == 100, "the reference itself");
    for (int dt = 0; dt < 2; dt++) {
        weft_dtype t = dt ? WEFT_F64 : WEFT_F32;
        weft_tensor *args[2] = { test_tensor(t, 1, DIMS(8), z), test_tensor(t, 1, DIMS(8), x) };
        loss_case c = { .op = SIGMOID_CE, .n_args = 2 };
        check(&c, args, want, 8, "sigmoid ce");
        weft_tensor_release(args[0]);
        weft_tensor_release(args[1]);
    }
}

/* ---- Normalization ------------------------------------------------------ */

/* Rows of [3,4] (axis 1) and the whole tensor; an all-zero row stays zero
 * (epsilon keeps the rsqrt finite). */
Test(ops_loss, l2_normalize_rows_and_whole)
{
    double x[12] = { 3, 4, 0, 0, 0, 0, 0, 0, 1, -2, 2, 4 };
    double rows[12], whole[12], total = 0;
    for (int i = 0; i < 12; i++)
        total += x[i] * x[i];
    for (int r = 0; r < 3; r++) {
        double s = 0;
        for (int k = 0; k < 4; k++)
            s += x[r * 4 + k] * x[r * 4 + k];
        for (int k = 0; k < 4; k++)
            rows[r * 4 + k] = x[r * 4 + k] / sqrt(fmax(s, 1e-12));
    }
    for (int i = 0; i < 12; i++)
        whole[i] = x[i] / sqrt(total);
    for (int dt = 0; dt < 2; dt++) {
        weft_tensor *arg = test_tensor(dt ? WEFT_F64 : WEFT_F32, 2, DIMS(3, 4), x);
        loss_case by_row = { .op = L2_NORM, .axis = 1, .epsilon = 1e-12, .n_args = 1 };
        loss_case all = { .op = L2_NORM, .axis = -99, .epsilon = 1e-12, .n_args = 1 };
        check(&by_row, &arg, rows, 12, "l2_normalize rows");
        check(&all, &arg, whole, 12, "l2_normalize whole");
        weft_tensor_release(arg);
    }
}

/* Mean and variance over axis 0 of [5,3] (kept as 1s or not) and over
 * every axis. */
Test(ops_loss, moments_are_the_mean_and_the_population_variance)
{
    double *x = values(15, -5, 5, 4);
    double want[6], all[2] = { 0, 0 };
    for (int k = 0; k < 3; k++) {
        double m = 0, v = 0;
        for (int r = 0; r < 5; r++)
            m += x[r * 3 + k] / 5;
        for (int r = 0; r < 5; r++)
            v += (x[r * 3 + k] - m) * (x[r * 3 + k] - m) / 5;
        want[k] = m;
        want[3 + k] = v;
    }
    for (int i = 0; i < 15; i++)
        all[0] += x[i] / 15;
    for (int i = 0; i < 15; i++)
        all[1] += (x[i] - all[0]) * (x[i] - all[0]) / 15;
    weft_tensor *arg = test_tensor(WEFT_F64, 2, DIMS(5, 3), x);
    for (int keep = 0; keep < 2; keep++) {
        loss_case c = { .op = MOMENTS, .axis = 0, .keepdims = keep, .n_args = 1 };
        weft_tensor *y;
        cr_assert_eq(call(&c, &arg, false, NULL, &y), 0, "%s", weft_errmsg());
        if (keep)
            test_assert_shape(y, WEFT_F64, 3, DIMS(2, 1, 3), "moments keepdims");
        else
            test_assert_shape(y, WEFT_F64, 2, DIMS(2, 3), "moments");
        assert_close(y, want, 6, "moments");
        weft_tensor_release(y);
    }
    loss_case c = { .op = MOMENTS, .axis = -99, .n_args = 1 };
    check(&c, &arg, all, 2, "moments of every axis");
    weft_tensor_release(arg);
    free(x);
}

/* x [4,3] with per-channel statistics [3], with and without offset and
 * scale. */
Test(ops_loss, batch_normalization_in_tensorflows_order)
{
    double *x = values(12, -3, 3, 5), mean[3] = { 0.5, -1, 2 }, var[3] = { 1, 0.25, 4 };
    double off[3] = { 0.1, 0.2, -0.3 }, sc[3] = { 2, 1, 0.5 };
    for (int variant = 0; variant < 4; variant++) {
        bool with_offset = variant & 1, with_scale = variant & 2;
        double want[12];
        for (int i = 0; i < 12; i++) {
            int k = i % 3;
            double inv = 1 / sqrt(var[k] + 1e-3) * (with_scale ? sc[k] : 1);
            want[i] = x[i] * inv + ((with_offset ? off[k] : 0) - mean[k] * inv);
        }
        weft_tensor *args[5] = {
            test_tensor(WEFT_F64, 2, DIMS(4, 3), x), test_tensor(WEFT_F64, 1, DIMS(3), mean),
            test_tensor(WEFT_F64, 1, DIMS(3), var), test_tensor(WEFT_F64, 1, DIMS(3), off),
            test_tensor(WEFT_F64, 1, DIMS(3), sc),
        };
        loss_case c = { .op = BATCH_NORM, .with_offset = with_offset, .with_scale = with_scale,
                        .epsilon = 1e-3, .n_args = 5 };
        check(&c, args, want, 12, "batch_normalization");
        for (int i = 0; i < 5; i++)
            weft_tensor_release(args[i]);
    }
    free(x);
}

Test(ops_loss, bias_add_along_the_last_dim)
{
    double x[24], b[4] = { 1, -2, 3, -4 }, want[24];
    for (int i = 0; i < 24; i++) {
        x[i] = i;
        want[i] = i + b[i % 4];
    }
    weft_tensor *args[2] = { test_tensor(WEFT_I32, 3, DIMS(2, 3, 4), x),
                             test_tensor(WEFT_I32, 1, DIMS(4), b) };
    loss_case c = { .op = BIAS_ADD, .n_args = 2 };
    weft_tensor *y;
    cr_assert_eq(call(&c, args, false, NULL, &y), 0, "%s", weft_errmsg());
    test_assert_shape(y, WEFT_I32, 3, DIMS(2, 3, 4), "bias_add");
    for (int i = 0; i < 24; i++)
        cr_assert_eq(test_element(y, i), want[i], "element %d", i);
    weft_tensor_release(y);
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
}

/* ---- Errors ------------------------------------------------------------- */

typedef struct bad {
    loss_case c;
    weft_dtype t[2];
    int rank[2];
    int64_t dims[2][2];
    int rc;
    const char *says;
} bad;

Test(ops_loss, errors_name_the_op)
{
    const bad cases[] = {
        { { .op = SOFTMAX_CE, .axis = -1, .n_args = 2 }, { WEFT_F32, WEFT_F64 }, { 1, 1 },
          { { 3 }, { 3 } }, WEFT_EDTYPE, "weft_softmax_cross_entropy_with_logits: logits f64[3] "
          "is not of the dtype of f32[3]" },
        { { .op = SOFTMAX_CE, .axis = 2, .n_args = 2 }, { WEFT_F32, WEFT_F32 }, { 1, 1 },
          { { 3 }, { 3 } }, WEFT_EINVAL, "weft_softmax_cross_entropy_with_logits: axis 2 is out "
          "of range for logits of rank 1" },
        { { .op = SPARSE_CE, .n_args = 2 }, { WEFT_F32, WEFT_F32 }, { 1, 2 }, { { 2 }, { 2, 3 } },
          WEFT_EDTYPE, "weft_sparse_softmax_cross_entropy_with_logits: labels f32[2] are not "
          "i32 or i64" },
        { { .op = SPARSE_CE, .n_args = 2 }, { WEFT_I32, WEFT_I32 }, { 1, 2 }, { { 2 }, { 2, 3 } },
          WEFT_EDTYPE, "weft_sparse_softmax_cross_entropy_with_logits: logits i32[2,3] is not "
          "f32 or f64" },
        { { .op = SPARSE_CE, .n_args = 2 }, { WEFT_I32, WEFT_F32 }, { 2, 2 },
          { { 2, 3 }, { 2, 3 } }, WEFT_ESHAPE, "labels i32[2,3] do not have the shape of the "
          "logits f32[2,3] without the last dim" },
        { { .op = SIGMOID_CE, .n_args = 2 }, { WEFT_I64, WEFT_F32 }, { 1, 1 }, { { 2 }, { 2 } },
          WEFT_EDTYPE, "weft_sigmoid_cross_entropy_with_logits: labels i64[2] is not f32 or f64" },
        { { .op = L2_NORM, .axis = 0, .epsilon = -1, .n_args = 1 }, { WEFT_F32 }, { 1 }, { { 2 } },
          WEFT_EINVAL, "weft_l2_normalize: epsilon -1 is not finite and >= 0" },
        { { .op = MOMENTS, .axis = 0, .n_args = 1 }, { WEFT_I32 }, { 1 }, { { 2 } },
          WEFT_EDTYPE, "weft_moments: x i32[2] is not f32 or f64" },
        { { .op = BIAS_ADD, .n_args = 2 }, { WEFT_F32, WEFT_F32 }, { 2, 1 }, { { 2, 3 }, { 2 } },
          WEFT_ESHAPE, "weft_bias_add: bias f32[2] is not a vector of the last dim of value "
          "f32[2,3]" },
        { { .op = BIAS_ADD, .n_args = 2 }, { WEFT_F32, WEFT_F64 }, { 2, 1 }, { { 2, 3 }, { 3 } },
          WEFT_EDTYPE, "weft_bias_add: value f32[2,3] and bias f64[3] are not numbers of one "
          "dtype" },
    };
    double zeros[8] = { 0 };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const bad *b = &cases[i];
        weft_tensor *args[2] = { NULL, NULL };
        for (size_t k = 0; k < b->c.n_args; k++)
            args[k] = test_tensor(b->t[k], b->rank[k], b->dims[k], zeros);
        for (int eager = 0; eager < 2; eager++) {
            weft_tensor *y;
            int rc = call(&b->c, args, eager, NULL, &y);
            cr_assert_eq(rc, b->rc, "case %zu: %s (%s)", i, weft_err_name(rc), weft_errmsg());
            cr_assert(strstr(weft_errmsg(), b->says), "case %zu: \"%s\" does not say \"%s\"", i,
                      weft_errmsg(), b->says);
            cr_assert_null(y);
        }
        weft_tensor_release(args[0]);
        weft_tensor_release(args[1]);
    }
    /* The classes must be known while tracing. */
    weft_spec sig[2];
    cr_assert_eq(weft_spec_parse("i32[?]", &sig[0]), 0);
    cr_assert_eq(weft_spec_parse("f32[?,?]", &sig[1]), 0);
    loss_case c = { .op = SPARSE_CE, .n_args = 2 };
    weft_tensor *args[2] = { test_tensor(WEFT_I32, 1, DIMS(2), zeros),
                             test_tensor(WEFT_F32, 2, DIMS(2, 3), zeros) };
    weft_tensor *y;
    cr_assert_eq(call(&c, args, false, sig, &y), WEFT_EINVAL);
    cr_assert(strstr(weft_errmsg(), "the logits f32[?,?] have no last dim (classes) known while "
                                    "tracing"), "%s", weft_errmsg());
    weft_tensor_release(args[0]);
    weft_tensor_release(args[1]);
    weft_ctx *cx = NULL;
    cr_assert_eq(weft_eager_begin(rt, &cx), 0);
    cr_assert_eq(weft_moments(cx, NULL, NULL, 0, false, NULL), WEFT_EINVAL);
    cr_assert(strstr(weft_errmsg(), "weft_moments: outs is NULL but n_outs is 2"), "%s",
              weft_errmsg());
    weft_eager_end(&cx);
}
