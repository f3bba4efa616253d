/* The neural-network ops (softmax, log_softmax, logsumexp, one_hot,
 * reverse, pad, eye, linspace, leaky_relu, elu, gelu, softplus,
 * log_sigmoid, silu, relu6, gelu_exact) through the public API: values
 * against references computed here in double precision, run eagerly
 * (WEFT_RUN_EAGERLY), traced and from the cache (the three bit for bit
 * equal), with input signatures holding unknown dims; the stability cases
 * (large inputs, all -inf); and bad inputs, whose messages name the op, in
 * both modes.
 *
 * Tolerance: f32 results within 2e-6 of the reference relative to
 * max(1, |reference|) (a few f32 roundings), f64 within 1e-13; infinities
 * and integers exactly. */
#include <math.h>
#include <string.h>

#include "test_util.h"

static weft_runtime *rt;
static void setup(void) { rt = test_runtime(2); }
static void teardown(void) { weft_runtime_destroy(&rt); }

TestSuite(ops_nn, .init = setup, .fini = teardown, .timeout = 30);

#define TOL_F32 2e-6
#define TOL_F64 1e-13

typedef enum nn_op {
    SOFTMAX, LOG_SOFTMAX, LOGSUMEXP, ONE_HOT, REVERSE, PAD, LEAKY_RELU, ELU, GELU,
    SOFTPLUS, LOG_SIGMOID, SILU, RELU6, GELU_EXACT
} nn_op;

/* One op with its arguments; sig, when set, is the function's input
 * signature (weft_spec_parse text). */
typedef struct nn_case {
    nn_op op;
    int axis;
    bool keepdims;
    int64_t depth;
    weft_dtype dtype;
    const int64_t (*pads)[2];
    weft_pad_mode mode;   /* PAD: weft_pad_ex unless WEFT_PAD_CONSTANT */
    double value;
    const char *sig;
} nn_case;

static int body_op(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    const nn_case *c = user;
    weft_value *a = args[0];
    switch (c->op) {
    case SOFTMAX: outs[0] = weft_softmax(cx, a, c->axis); break;
    case LOG_SOFTMAX: outs[0] = weft_log_softmax(cx, a, c->axis); break;
    case LOGSUMEXP: outs[0] = weft_logsumexp(cx, a, c->axis, c->keepdims); break;
    case ONE_HOT: outs[0] = weft_one_hot(cx, a, c->depth, c->dtype); break;
    case REVERSE: outs[0] = weft_reverse(cx, a, c->axis); break;
    case PAD:
        outs[0] = c->mode == WEFT_PAD_CONSTANT ? weft_pad(cx, a, c->pads, c->value)
                                               : weft_pad_ex(cx, a, c->pads, c->mode, c->value);
        break;
    case LEAKY_RELU: outs[0] = weft_leaky_relu(cx, a, c->value); break;
    case ELU: outs[0] = weft_elu(cx, a); break;
    case GELU: outs[0] = weft_gelu(cx, a); break;
    case SOFTPLUS: outs[0] = weft_softplus(cx, a); break;
    case LOG_SIGMOID: outs[0] = weft_log_sigmoid(cx, a); break;
    case SILU: outs[0] = weft_silu(cx, a); break;
    case RELU6: outs[0] = weft_relu6(cx, a); break;
    case GELU_EXACT: outs[0] = weft_gelu_exact(cx, a); break;
    }
    return weft_ctx_status(cx);
}

static weft_function *make(const nn_case *c, unsigned flags)
{
    weft_spec sig;
    if (c->sig)
        cr_assert_eq(weft_spec_parse(c->sig, &sig), 0, "%s", weft_errmsg());
    weft_function_desc d = { .name = "nn", .body = body_op, .user = (void *)c, .n_args = 1,
                             .n_outs = 1, .flags = flags, .input_signature = c->sig ? &sig : NULL };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
    return f;
}

static weft_tensor *tensor(weft_dtype dt, int rank, const int64_t *dims, const void *data)
{
    weft_tensor *t = NULL;
    cr_assert_eq(weft_tensor_create(dt, rank, dims, data, &t), 0, "%s", weft_errmsg());
    return t;
}

/* Runs c on in eagerly, then traced twice (the second call runs the cached
 * program); the traced results must equal the eager one bit for bit.
 * Returns the eager result (the caller releases it through check). */
static weft_tensor *run(const nn_case *c, weft_tensor *in)
{
    weft_arg arg = weft_arg_tensor(in);
    weft_function *fe = make(c, WEFT_RUN_EAGERLY), *ft = make(c, 0);
    weft_tensor *e = NULL;
    cr_assert_eq(weft_function_call(fe, &arg, 1, &e, 1), 0, "eager: %s", weft_errmsg());
    for (int call = 0; call < 2; call++) {
        weft_tensor *t = NULL;
        cr_assert_eq(weft_function_call(ft, &arg, 1, &t, 1), 0, "traced: %s", weft_errmsg());
        cr_assert_eq(weft_tensor_dtype(t), weft_tensor_dtype(e));
        cr_assert_eq(weft_tensor_rank(t), weft_tensor_rank(e));
        for (int d = 0; d < weft_tensor_rank(e); d++)
            cr_assert_eq(weft_tensor_dims(t)[d], weft_tensor_dims(e)[d], "call %d: dim %d", call, d);
        size_t bytes = (size_t)weft_tensor_numel(e) * weft_dtype_size(weft_tensor_dtype(e));
        cr_assert(memcmp(weft_tensor_data(t), weft_tensor_data(e), bytes) == 0,
                  "call %d: traced and eager differ", call);
        weft_tensor_release(t);
    }
    cr_assert_eq(weft_function_tracing_count(ft), 1);
    weft_function_destroy(&fe);
    weft_function_destroy(&ft);
    return e;
}

/* Runs c on in in both modes and expects code with `what` in the message. */
static void refused(const nn_case *c, weft_tensor *in, int code, const char *what)
{
    weft_arg arg = weft_arg_tensor(in);
    for (int mode = 0; mode < 2; mode++) {
        weft_function *f = make(c, mode ? 0 : WEFT_RUN_EAGERLY);
        weft_tensor *out = NULL;
        cr_assert_eq(weft_function_call(f, &arg, 1, &out, 1), code, "%s mode: %s",
                     mode ? "traced" : "eager", weft_errmsg());
        cr_assert(strstr(weft_errmsg(), what), "%s mode: \"%s\" lacks \"%s\"",
                  mode ? "traced" : "eager", weft_errmsg(), what);
        cr_assert_null(out);
        weft_function_destroy(&f);
    }
    weft_tensor_release(in);
}

/* t has dtype dt, shape dims[0..rank) and the values want (within the
 * dtype's tolerance); releases t. */
static void check(weft_tensor *t, weft_dtype dt, int rank, const int64_t *dims,
                  const double *want, const char *what)
{
    test_assert_shape(t, dt, rank, dims, what);
    double tol = dt == WEFT_F32 ? TOL_F32 : dt == WEFT_F64 ? TOL_F64 : 0;
    for (int64_t i = 0; i < weft_tensor_numel(t); i++) {
        double got = test_element(t, i), w = want[i];
        if (isinf(w) || tol == 0)
            cr_assert(got == w, "%s[%lld] = %.17g, expected %.17g", what, (long long)i, got, w);
        else
            cr_assert(fabs(got - w) <= tol * fmax(1, fabs(w)), "%s[%lld] = %.17g, expected %.17g",
                      what, (long long)i, got, w);
    }
    weft_tensor_release(t);
}

/* ---- References, in double precision ------------------------------------ */

/* softmax (log_sm false) or log_softmax of the rows x cols matrix x along
 * axis 1, or along axis 0 when by_col. */
static void ref_softmax(const double *x, int rows, int cols, bool by_col, bool log_sm, double *out)
{
    int outer = by_col ? cols : rows, inner = by_col ? rows : cols;
    for (int o = 0; o < outer; o++) {
        double m = -INFINITY, s = 0;
        for (int k = 0; k < inner; k++)
            m = fmax(m, x[by_col ? k * cols + o : o * cols + k]);
        for (int k = 0; k < inner; k++)
            s += exp(x[by_col ? k * cols + o : o * cols + k] - m);
        for (int k = 0; k < inner; k++) {
            int i = by_col ? k * cols + o : o * cols + k;
            out[i] = log_sm ? x[i] - m - log(s) : exp(x[i] - m) / s;
        }
    }
}

static double ref_lse(const double *x, int n)
{
    double m = -INFINITY, s = 0;
    for (int i = 0; i < n; i++)
        m = fmax(m, x[i]);
    if (isinf(m))
        return m;
    for (int i = 0; i < n; i++)
        s += exp(x[i] - m);
    return m + log(s);
}

static const double x23[6] = { 0.5, -1.25, 3.0, 2.0, 2.0, -0.75 };

static weft_tensor *f32_23(void)
{
    float v[6];
    for (int i = 0; i < 6; i++)
        v[i] = (float)x23[i];
    return tensor(WEFT_F32, 2, (int64_t[]){ 2, 3 }, v);
}

/* ---- softmax, log_softmax ------------------------------------------------ */

Test(ops_nn, softmax_each_axis_and_mode)
{
    for (int log_sm = 0; log_sm < 2; log_sm++) {
        for (int axis = -2; axis < 2; axis++) {
            double want[6];
            ref_softmax(x23, 2, 3, axis == 0 || axis == -2, log_sm, want);
            nn_case c = { .op = log_sm ? LOG_SOFTMAX : SOFTMAX, .axis = axis };
            weft_tensor *in = f32_23();
            check(run(&c, in), WEFT_F32, 2, (int64_t[]){ 2, 3 }, want, log_sm ? "log_softmax" : "softmax");
            weft_tensor_release(in);
        }
    }
}

Test(ops_nn, softmax_f64_with_unknown_dim)
{
    double x[12];
    for (int i = 0; i < 12; i++)
        x[i] = sin(i * 1.7) * 4;
    weft_tensor *in = tensor(WEFT_F64, 2, (int64_t[]){ 4, 3 }, x);
    for (int log_sm = 0; log_sm < 2; log_sm++) {
        double want[12];
        ref_softmax(x, 4, 3, false, log_sm, want);
        nn_case c = { .op = log_sm ? LOG_SOFTMAX : SOFTMAX, .axis = -1, .sig = "f64[?,3]" };
        check(run(&c, in), WEFT_F64, 2, (int64_t[]){ 4, 3 }, want, "softmax f64[?,3]");
    }
    weft_tensor_release(in);
}

/* Without the shift by the maximum, exp(1000) overflows to inf and the
 * result is NaN. */
Test(ops_nn, softmax_of_large_values_is_finite)
{
    const float x[2] = { 1000, 1001 };
    weft_tensor *in = tensor(WEFT_F32, 1, (int64_t[]){ 2 }, x);
    double e = exp(1.0);
    double sm[2] = { 1 / (1 + e), e / (1 + e) }, lsm[2] = { -log1p(e), -log1p(1 / e) };
    check(run(&(nn_case){ .op = SOFTMAX }, in), WEFT_F32, 1, (int64_t[]){ 2 }, sm, "softmax");
    check(run(&(nn_case){ .op = LOG_SOFTMAX }, in), WEFT_F32, 1, (int64_t[]){ 2 }, lsm,
          "log_softmax");
    weft_tensor_release(in);
}

Test(ops_nn, softmax_refuses_integers_and_bad_axes)
{
    const int32_t v[3] = { 1, 2, 3 };
    refused(&(nn_case){ .op = SOFTMAX }, tensor(WEFT_I32, 1, (int64_t[]){ 3 }, v), WEFT_EDTYPE,
            "weft_softmax: a is i32[3], not f32 or f64");
    refused(&(nn_case){ .op = LOG_SOFTMAX, .axis = 2 }, f32_23(), WEFT_EINVAL,
            "weft_log_softmax: axis 2 is not in [-2, 2)");
    refused(&(nn_case){ .op = SOFTMAX, .axis = -3 }, f32_23(), WEFT_EINVAL,
            "weft_softmax: axis -3 is not in [-2, 2)");
}

/* An axis needs the rank: traced for any rank, softmax is refused (an
 * eager call knows the rank and runs). */
Test(ops_nn, softmax_needs_the_rank_while_tracing)
{
    nn_case c = { .op = SOFTMAX, .sig = "f32[*]" };
    weft_function *f = make(&c, 0);
    weft_tensor *in = f32_23(), *out = NULL;
    weft_arg arg = weft_arg_tensor(in);
    cr_assert_eq(weft_function_call(f, &arg, 1, &out, 1), WEFT_ESHAPE);
    cr_assert(strstr(weft_errmsg(), "weft_softmax: the rank of a is unknown while tracing"), "%s",
              weft_errmsg());
    cr_assert_null(out);
    weft_function_destroy(&f);
    weft_tensor_release(in);
}

/* ---- logsumexp -------------------------------------------------------------- */

Test(ops_nn, logsumexp_axes_and_keepdims)
{
    weft_tensor *in = f32_23();
    double rows[2] = { ref_lse(x23, 3), ref_lse(x23 + 3, 3) };
    double cols[3];
    for (int j = 0; j < 3; j++)
        cols[j] = ref_lse((double[]){ x23[j], x23[3 + j] }, 2);
    double all = ref_lse(x23, 6);
    check(run(&(nn_case){ .op = LOGSUMEXP, .axis = 1 }, in), WEFT_F32, 1, (int64_t[]){ 2 }, rows,
          "axis 1");
    check(run(&(nn_case){ .op = LOGSUMEXP, .axis = 1, .keepdims = true }, in), WEFT_F32, 2,
          (int64_t[]){ 2, 1 }, rows, "axis 1 keepdims");
    check(run(&(nn_case){ .op = LOGSUMEXP, .axis = -2 }, in), WEFT_F32, 1, (int64_t[]){ 3 }, cols,
          "axis -2");
    check(run(&(nn_case){ .op = LOGSUMEXP, .axis = WEFT_ALL_AXES }, in), WEFT_F32, 0, NULL, &all,
          "all axes");
    check(run(&(nn_case){ .op = LOGSUMEXP, .axis = WEFT_ALL_AXES, .keepdims = true }, in),
          WEFT_F32, 2, (int64_t[]){ 1, 1 }, &all, "all axes keepdims");
    check(run(&(nn_case){ .op = LOGSUMEXP, .axis = 1, .sig = "f32[?,?]" }, in), WEFT_F32, 1,
          (int64_t[]){ 2 }, rows, "axis 1 of f32[?,?]");
    check(run(&(nn_case){ .op = LOGSUMEXP, .axis = WEFT_ALL_AXES, .sig = "f32[*]" }, in), WEFT_F32,
          0, NULL, &all, "all axes of f32[*]");
    weft_tensor_release(in);
}

/* A row of all -inf gives -inf (TensorFlow's answer), not -inf - -inf =
 * NaN; a row with +inf gives +inf; large values stay finite. */
Test(ops_nn, logsumexp_of_infinities_and_large_values)
{
    const double x[9] = { -INFINITY, -INFINITY, -INFINITY, 1, INFINITY, 2, 1000, 1001, 999 };
    weft_tensor *in = tensor(WEFT_F64, 2, (int64_t[]){ 3, 3 }, x);
    double want[3] = { -INFINITY, INFINITY, ref_lse(x + 6, 3) };
    cr_assert(isfinite(want[2]));
    nn_case c = { .op = LOGSUMEXP, .axis = 1, .sig = "f64[?,3]" };
    check(run(&c, in), WEFT_F64, 1, (int64_t[]){ 3 }, want, "logsumexp rows");
    weft_tensor_release(in);
}

Test(ops_nn, logsumexp_refuses_integers_and_bad_axes)
{
    const int64_t v[3] = { 1, 2, 3 };
    refused(&(nn_case){ .op = LOGSUMEXP }, tensor(WEFT_I64, 1, (int64_t[]){ 3 }, v), WEFT_EDTYPE,
            "weft_logsumexp: a is i64[3]");
    refused(&(nn_case){ .op = LOGSUMEXP, .axis = 5 }, f32_23(), WEFT_EINVAL,
            "weft_logsumexp: axis 5 is not in [-2, 2)");
}

/* ---- one_hot ----------------------------------------------------------------- */

Test(ops_nn, one_hot_rows_and_out_of_range)
{
    const int32_t idx[5] = { 0, 2, -1, 3, 1 };
    weft_tensor *in = tensor(WEFT_I32, 1, (int64_t[]){ 5 }, idx);
    const double want[15] = { 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0 };
    check(run(&(nn_case){ .op = ONE_HOT, .depth = 3, .dtype = WEFT_F32 }, in), WEFT_F32, 2,
          (int64_t[]){ 5, 3 }, want, "one_hot f32");
    check(run(&(nn_case){ .op = ONE_HOT, .depth = 3, .dtype = WEFT_BOOL, .sig = "i32[?]" }, in),
          WEFT_BOOL, 2, (int64_t[]){ 5, 3 }, want, "one_hot bool of i32[?]");
    check(run(&(nn_case){ .op = ONE_HOT, .depth = 0, .dtype = WEFT_I32 }, in), WEFT_I32, 2,
          (int64_t[]){ 5, 0 }, want, "one_hot depth 0");
    weft_tensor_release(in);

    const int64_t idx2[4] = { 3, 0, 4, 1 };
    weft_tensor *in2 = tensor(WEFT_I64, 2, (int64_t[]){ 2, 2 }, idx2);
    double want2[16] = { 0 };
    want2[0 * 4 + 3] = want2[1 * 4 + 0] = want2[3 * 4 + 1] = 1;  /* 4 is past depth 4 */
    check(run(&(nn_case){ .op = ONE_HOT, .depth = 4, .dtype = WEFT_I64, .sig = "i64[?,2]" }, in2),
          WEFT_I64, 3, (int64_t[]){ 2, 2, 4 }, want2, "one_hot of i64[2,2]");
    check(run(&(nn_case){ .op = ONE_HOT, .depth = 4, .dtype = WEFT_I64, .sig = "i64[*]" }, in2),
          WEFT_I64, 3, (int64_t[]){ 2, 2, 4 }, want2, "one_hot of i64[*]");
    weft_tensor_release(in2);
}

Test(ops_nn, one_hot_refuses_float_indices_and_negative_depth)
{
    const float v[2] = { 0, 1 };
    refused(&(nn_case){ .op = ONE_HOT, .depth = 2, .dtype = WEFT_F32 },
            tensor(WEFT_F32, 1, (int64_t[]){ 2 }, v), WEFT_EDTYPE,
            "weft_one_hot: indices are f32[2], not i32 or i64");
    const int32_t i[2] = { 0, 1 };
    refused(&(nn_case){ .op = ONE_HOT, .depth = -1, .dtype = WEFT_F32 },
            tensor(WEFT_I32, 1, (int64_t[]){ 2 }, i), WEFT_EINVAL,
            "weft_one_hot: depth -1 is negative");
}

/* ---- reverse -------------------------------------------------------------------- */

/* ---- eye and linspace (no inputs) ----------------------------------------- */

typedef struct leaf_case {
    bool linspace;
    int64_t n, m;          /* eye: rows, columns; linspace: num in n */
    double start, stop;
    weft_dtype dtype;
} leaf_case;

static int leaf_body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)args;
    const leaf_case *c = user;
    outs[0] = c->linspace ? weft_linspace(cx, c->start, c->stop, c->n, c->dtype)
                          : weft_eye(cx, c->n, c->m, c->dtype);
    return weft_ctx_status(cx);
}

/* c eagerly (eager true) or traced: the call's code and result. */
static int run_leaf(const leaf_case *c, bool eager, weft_tensor **out)
{
    weft_function_desc d = { .name = "leaf", .body = leaf_body, .user = (void *)c, .n_args = 0,
                             .n_outs = 1, .flags = eager ? WEFT_RUN_EAGERLY : 0 };
    weft_function *f = NULL;
    cr_assert_eq(weft_function_create(rt, &d, &f), 0, "%s", weft_errmsg());
    *out = NULL;
    int rc = weft_function_call(f, NULL, 0, out, 1);
    weft_function_destroy(&f);
    return rc;
}

Test(ops_nn, eye_shapes_and_values)
{
    const leaf_case cases[] = {
        { false, 3, 3, 0, 0, WEFT_F32 }, { false, 2, 4, 0, 0, WEFT_I64 },
        { false, 4, 2, 0, 0, WEFT_BOOL }, { false, 0, 3, 0, 0, WEFT_F64 },
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
        for (int eager = 0; eager < 2; eager++) {
            weft_tensor *t = NULL;
            cr_assert_eq(run_leaf(&cases[k], eager, &t), 0, "%s", weft_errmsg());
            int64_t n = cases[k].n, m = cases[k].m;
            test_assert_shape(t, cases[k].dtype, 2, (const int64_t[]){ n, m }, "eye");
            for (int64_t i = 0; i < n * m; i++)
                cr_assert_eq(test_element(t, i), i / m == i % m ? 1.0 : 0.0,
                             "case %zu element %lld", k, (long long)i);
            weft_tensor_release(t);
        }
}

Test(ops_nn, linspace_ends_exactly_at_stop)
{
    const leaf_case cases[] = {
        { true, 5, 0, 0, 1, WEFT_F64 }, { true, 7, 0, -1, 0.1, WEFT_F32 },
        { true, 1, 0, 2.5, 9, WEFT_F64 }, { true, 0, 0, 2.5, 9, WEFT_F32 },
        { true, 4, 0, 3, -3, WEFT_F64 },
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
        for (int eager = 0; eager < 2; eager++) {
            const leaf_case *c = &cases[k];
            weft_tensor *t = NULL;
            cr_assert_eq(run_leaf(c, eager, &t), 0, "%s", weft_errmsg());
            test_assert_shape(t, c->dtype, 1, (const int64_t[]){ c->n }, "linspace");
            for (int64_t i = 0; i < c->n; i++) {
                double want = i == c->n - 1 && c->n > 1
                                  ? c->stop
                                  : c->start + (double)i * (c->n > 1 ? (c->stop - c->start) /
                                                                           (double)(c->n - 1)
                                                                     : 0);
                if (c->dtype == WEFT_F32)
                    want = (float)want;
                cr_assert_eq(test_element(t, i), want, "case %zu element %lld: %.17g, not %.17g",
                             k, (long long)i, test_element(t, i), want);
            }
            weft_tensor_release(t);
        }
}

Test(ops_nn, eye_and_linspace_refuse_bad_input)
{
    const struct { leaf_case c; const char *says; } cases[] = {
        { { false, -1, 2, 0, 0, WEFT_F32 }, "weft_eye: -1 rows and 2 columns (negative)" },
        { { true, 3, 0, 0, 1, WEFT_I32 }, "weft_linspace: dtype i32 is not f32 or f64" },
        { { true, -2, 0, 0, 1, WEFT_F32 }, "weft_linspace: num -2 is negative" },
        { { true, 3, 0, 0, INFINITY, WEFT_F64 }, "weft_linspace: start 0 and stop inf are not finite" },
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
        for (int eager = 0; eager < 2; eager++) {
            weft_tensor *t = NULL;
            int rc = run_leaf(&cases[k].c, eager, &t);
            cr_assert_eq(rc, WEFT_EINVAL, "%s: %s", cases[k].says, weft_err_name(rc));
            cr_assert(strstr(weft_errmsg(), cases[k].says), "\"%s\"", weft_errmsg());
            cr_assert_null(t);
        }
}

Test(ops_nn, reverse_each_axis)
{
    const int32_t v[6] = { 1, 2, 3, 4, 5, 6 };
    weft_tensor *in = tensor(WEFT_I32, 2, (int64_t[]){ 2, 3 }, v);
    const double rows[6] = { 4, 5, 6, 1, 2, 3 }, cols[6] = { 3, 2, 1, 6, 5, 4 };
    const int64_t dims[2] = { 2, 3 };
    check(run(&(nn_case){ .op = REVERSE, .axis = 0 }, in), WEFT_I32, 2, dims, rows, "axis 0");
    check(run(&(nn_case){ .op = REVERSE, .axis = -2 }, in), WEFT_I32, 2, dims, rows, "axis -2");
    check(run(&(nn_case){ .op = REVERSE, .axis = 1 }, in), WEFT_I32, 2, dims, cols, "axis 1");
    check(run(&(nn_case){ .op = REVERSE, .axis = -1, .sig = "i32[?,?]" }, in), WEFT_I32, 2, dims,
          cols, "axis -1 of i32[?,?]");
    weft_tensor_release(in);
    refused(&(nn_case){ .op = REVERSE, .axis = 2 }, tensor(WEFT_I32, 1, (int64_t[]){ 6 }, v),
            WEFT_EINVAL, "weft_reverse: axis 2 is not in [-1, 1)");
}

/* ---- pad ------------------------------------------------------------------------ */

/* The reference: a rows x cols matrix padded by p with value. */
static void ref_pad(const double *x, int rows, int cols, const int64_t (*p)[2], double value,
                    double *out)
{
    int pc = cols + (int)(p[1][0] + p[1][1]);
    int pr = rows + (int)(p[0][0] + p[0][1]);
    for (int r = 0; r < pr; r++)
        for (int c = 0; c < pc; c++) {
            int sr = r - (int)p[0][0], sc = c - (int)p[1][0];
            out[r * pc + c] = sr >= 0 && sr < rows && sc >= 0 && sc < cols ? x[sr * cols + sc] : value;
        }
}

Test(ops_nn, pad_values_and_shapes)
{
    static const int64_t pads[][2][2] = {
        { { 1, 0 }, { 2, 1 } }, { { 0, 0 }, { 0, 3 } }, { { 2, 2 }, { 0, 0 } }, { { 0, 0 }, { 0, 0 } },
    };
    const char *sigs[] = { NULL, "f32[?,3]", "f32[?,?]" };
    weft_tensor *in = f32_23();
    for (size_t k = 0; k < sizeof pads / sizeof pads[0]; k++) {
        const int64_t(*p)[2] = pads[k];
        int64_t dims[2] = { 2 + p[0][0] + p[0][1], 3 + p[1][0] + p[1][1] };
        double want[64];
        ref_pad(x23, 2, 3, p, -2.5, want);
        for (size_t s = 0; s < 3; s++) {
            nn_case c = { .op = PAD, .pads = p, .value = -2.5, .sig = sigs[s] };
            check(run(&c, in), WEFT_F32, 2, dims, want, sigs[s] ? sigs[s] : "pad f32[2,3]");
        }
    }
    weft_tensor_release(in);
}

/* An axis of length 0 padded while its length is unknown: the padding
 * still has the padded length (its shape comes from a when it runs). */
Test(ops_nn, pad_of_an_empty_axis_with_unknown_dims)
{
    weft_tensor *in = tensor(WEFT_I32, 2, (int64_t[]){ 0, 2 }, NULL);
    const int64_t p[2][2] = { { 1, 2 }, { 1, 0 } };
    double want[9] = { 7, 7, 7, 7, 7, 7, 7, 7, 7 };
    nn_case c = { .op = PAD, .pads = p, .value = 7.9, .sig = "i32[?,?]" };
    check(run(&c, in), WEFT_I32, 2, (int64_t[]){ 3, 3 }, want, "pad i32[0,2]");
    weft_tensor_release(in);
}

Test(ops_nn, pad_refuses_negative_and_null_pads)
{
    const int64_t neg[2][2] = { { 0, 1 }, { -1, 0 } };
    refused(&(nn_case){ .op = PAD, .pads = neg }, f32_23(), WEFT_EINVAL,
            "weft_pad: the pads of dim 1 (-1, 0) are negative");
    refused(&(nn_case){ .op = PAD }, f32_23(), WEFT_EINVAL, "weft_pad: pads is NULL");
}

/* The source index of padded index i along a dim of n padded by lo
 * before, in a mirror mode. */
static int64_t mirror_src(int64_t i, int64_t n, int64_t lo, bool symmetric)
{
    int64_t s = i - lo;
    if (s < 0)
        return symmetric ? -s - 1 : -s;
    if (s >= n)
        return symmetric ? 2 * n - 1 - s : 2 * (n - 1) - s;
    return s;
}

Test(ops_nn, pad_mirror_modes)
{
    /* i64 [2, 3, 4] (exact), each dim padded up to TensorFlow's bound. */
    int64_t v[24];
    for (int i = 0; i < 24; i++)
        v[i] = 100 + i * 7 % 24;
    const int64_t n[3] = { 2, 3, 4 };
    static const int64_t reflect[3][2] = { { 1, 0 }, { 2, 1 }, { 3, 3 } };
    static const int64_t symmetric[3][2] = { { 2, 1 }, { 0, 3 }, { 4, 1 } };
    const char *sigs[] = { NULL, "i64[2,3,4]" };
    for (int m = 0; m < 2; m++) {
        const int64_t(*p)[2] = m ? symmetric : reflect;
        int64_t dims[3];
        for (int d = 0; d < 3; d++)
            dims[d] = n[d] + p[d][0] + p[d][1];
        double want[9 * 9 * 11];
        for (int64_t a = 0; a < dims[0]; a++)
            for (int64_t b = 0; b < dims[1]; b++)
                for (int64_t c = 0; c < dims[2]; c++) {
                    int64_t sa = mirror_src(a, n[0], p[0][0], m), sb = mirror_src(b, n[1], p[1][0], m);
                    int64_t sc = mirror_src(c, n[2], p[2][0], m);
                    want[(a * dims[1] + b) * dims[2] + c] = (double)v[(sa * 3 + sb) * 4 + sc];
                }
        for (size_t s = 0; s < 2; s++) {
            weft_tensor *in = tensor(WEFT_I64, 3, n, v);
            nn_case c = { .op = PAD, .pads = p, .mode = m ? WEFT_PAD_SYMMETRIC : WEFT_PAD_REFLECT,
                          .value = -1, .sig = sigs[s] };
            check(run(&c, in), WEFT_I64, 3, dims, want, m ? "symmetric" : "reflect");
            weft_tensor_release(in);
        }
    }
    /* The examples of the header. */
    const double row[3] = { 1, 2, 3 }, want_r[7] = { 3, 2, 1, 2, 3, 2, 1 },
                 want_s[7] = { 2, 1, 1, 2, 3, 3, 2 };
    static const int64_t two[1][2] = { { 2, 2 } };
    weft_tensor *in = tensor(WEFT_F64, 1, (int64_t[]){ 3 }, row);
    check(run(&(nn_case){ .op = PAD, .pads = two, .mode = WEFT_PAD_REFLECT }, in), WEFT_F64, 1,
          (int64_t[]){ 7 }, want_r, "reflect [1, 2, 3]");
    check(run(&(nn_case){ .op = PAD, .pads = two, .mode = WEFT_PAD_SYMMETRIC }, in), WEFT_F64, 1,
          (int64_t[]){ 7 }, want_s, "symmetric [1, 2, 3]");
    weft_tensor_release(in);
}

Test(ops_nn, pad_mirror_modes_refuse_what_tensorflow_refuses)
{
    static const int64_t whole[2][2] = { { 0, 0 }, { 3, 0 } }, past[2][2] = { { 0, 0 }, { 0, 4 } },
                         rows[2][2] = { { 1, 0 }, { 0, 0 } };
    refused(&(nn_case){ .op = PAD, .pads = whole, .mode = WEFT_PAD_REFLECT }, f32_23(),
            WEFT_EINVAL, "weft_pad_ex: the pads of dim 1 (3, 0) are not below its length 3 "
                         "(WEFT_PAD_REFLECT)");
    refused(&(nn_case){ .op = PAD, .pads = past, .mode = WEFT_PAD_SYMMETRIC }, f32_23(),
            WEFT_EINVAL, "weft_pad_ex: the pads of dim 1 (0, 4) are not at most its length 3");
    /* Traced with the rows unknown (eagerly they are known). */
    weft_function *f = make(&(nn_case){ .op = PAD, .pads = rows, .mode = WEFT_PAD_SYMMETRIC,
                                        .sig = "f32[?,3]" }, 0);
    weft_tensor *x = f32_23(), *out = NULL;
    weft_arg arg = weft_arg_tensor(x);
    cr_assert_eq(weft_function_call(f, &arg, 1, &out, 1), WEFT_ESHAPE);
    cr_assert(strstr(weft_errmsg(), "weft_pad_ex: dim 0 of f32[?,3] is padded by mirroring but "
                                    "not known while tracing"), "%s", weft_errmsg());
    weft_function_destroy(&f);
    weft_tensor_release(x);
    refused(&(nn_case){ .op = PAD, .pads = rows, .mode = (weft_pad_mode)9 }, f32_23(), WEFT_EINVAL,
            "weft_pad_ex: mode 9 is not WEFT_PAD_CONSTANT");
    /* A dim of unknown length that is not padded is fine. */
    static const int64_t cols[2][2] = { { 0, 0 }, { 1, 2 } };
    const double want[12] = { 1, 1, 2, 3, 3, 2, 4, 4, 5, 6, 6, 5 };
    weft_tensor *in = tensor(WEFT_F64, 2, (int64_t[]){ 2, 3 }, (const double[]){ 1, 2, 3, 4, 5, 6 });
    check(run(&(nn_case){ .op = PAD, .pads = cols, .mode = WEFT_PAD_SYMMETRIC, .sig = "f64[?,3]" },
              in), WEFT_F64, 2, (int64_t[]){ 2, 6 }, want, "symmetric with rows unknown");
    weft_tensor_release(in);
}

/* ---- activations ------------------------------------------------------------------ */

static const double act_x[8] = { -20, -3, -1, -0.5, 0, 0.25, 2, 10 };

static double ref_act(nn_op op, double x, double alpha)
{
    switch (op) {
    case LEAKY_RELU: return x > 0 ? x : alpha * x;
    case ELU: return x > 0 ? x : expm1(x);
    default: return 0.5 * x * (1 + tanh(0.7978845608028654 /* sqrt(2 / pi) */ * (x + 0.044715 * x * x * x)));
    }
}

Test(ops_nn, activations_against_reference)
{
    float xf[8];
    for (int i = 0; i < 8; i++)
        xf[i] = (float)act_x[i];
    weft_tensor *f32 = tensor(WEFT_F32, 1, (int64_t[]){ 8 }, xf);
    weft_tensor *f64 = tensor(WEFT_F64, 1, (int64_t[]){ 8 }, act_x);
    const nn_op ops[3] = { LEAKY_RELU, ELU, GELU };
    for (int k = 0; k < 3; k++) {
        double want[8];
        for (int i = 0; i < 8; i++)
            want[i] = ref_act(ops[k], act_x[i], 0.2);
        nn_case c = { .op = ops[k], .value = 0.2, .sig = "f32[?]" };
        check(run(&c, f32), WEFT_F32, 1, (int64_t[]){ 8 }, want, "activation f32");
        c.sig = NULL;
        check(run(&c, f64), WEFT_F64, 1, (int64_t[]){ 8 }, want, "activation f64");
    }
    weft_tensor_release(f32);
    weft_tensor_release(f64);
}

/* The tanh form is TensorFlow's approximate=True gelu, not erf's: at 1.0
 * the two differ in the fourth digit, which this tells apart. */
Test(ops_nn, gelu_is_the_tanh_approximation)
{
    const double x = 1.0;
    weft_tensor *in = tensor(WEFT_F64, 0, NULL, &x);
    double tanh_form = ref_act(GELU, 1.0, 0), erf_form = 0.5 * (1 + erf(1 / sqrt(2)));
    cr_assert(fabs(tanh_form - erf_form) > 1e-4);
    check(run(&(nn_case){ .op = GELU }, in), WEFT_F64, 0, NULL, &tanh_form, "gelu(1)");
    weft_tensor_release(in);
}

Test(ops_nn, activations_refuse_integers)
{
    const int32_t v[2] = { -1, 1 };
    refused(&(nn_case){ .op = LEAKY_RELU, .value = 0.1 }, tensor(WEFT_I32, 1, (int64_t[]){ 2 }, v),
            WEFT_EDTYPE, "weft_leaky_relu: a is i32[2]");
    refused(&(nn_case){ .op = ELU }, tensor(WEFT_I32, 1, (int64_t[]){ 2 }, v), WEFT_EDTYPE,
            "weft_elu: a is i32[2]");
    const uint8_t b[2] = { 0, 1 };
    refused(&(nn_case){ .op = GELU }, tensor(WEFT_BOOL, 1, (int64_t[]){ 2 }, b), WEFT_EDTYPE,
            "weft_gelu: a is bool[2]");
}

/* ---- softplus, log_sigmoid, silu, relu6, gelu_exact ---------------------- */

/* The mathematical definitions, in double precision. */
static double ref_act2(nn_op op, double x)
{
    switch (op) {
    case SOFTPLUS: return log1p(exp(x));
    case LOG_SIGMOID: return -log1p(exp(-x));
    case SILU: return x / (1 + exp(-x));
    case RELU6: return fmin(fmax(x, 0), 6);
    default: return 0.5 * x * (1 + erf(x / sqrt(2)));
    }
}

static const nn_op act2_ops[5] = { SOFTPLUS, LOG_SIGMOID, SILU, RELU6, GELU_EXACT };

Test(ops_nn, more_activations_against_reference)
{
    float xf[8];
    for (int i = 0; i < 8; i++)
        xf[i] = (float)act_x[i];
    weft_tensor *f32 = tensor(WEFT_F32, 1, (int64_t[]){ 8 }, xf);
    weft_tensor *f64 = tensor(WEFT_F64, 1, (int64_t[]){ 8 }, act_x);
    for (int k = 0; k < 5; k++) {
        double want[8];
        for (int i = 0; i < 8; i++)
            want[i] = ref_act2(act2_ops[k], act_x[i]);
        nn_case c = { .op = act2_ops[k], .sig = "f32[?]" };
        check(run(&c, f32), WEFT_F32, 1, (int64_t[]){ 8 }, want, "activation f32");
        c.sig = NULL;
        check(run(&c, f64), WEFT_F64, 1, (int64_t[]){ 8 }, want, "activation f64");
    }
    weft_tensor_release(f32);
    weft_tensor_release(f64);
}

/* The f64 results are the documented formulas computed step by step in C
 * with libm, bit for bit.  x goes through a volatile so that the libm
 * calls are made at run time (gcc folds calls on constants with its own
 * rounding). */
static double formula(nn_op op, double x_)
{
    volatile double v = x_;
    double x = v;
    double mx = (x != x || x > 0) ? x : 0, mn = (x != x || x < 0) ? x : 0;
    double tail = log1p(exp(-fabs(x)));
    switch (op) {
    case SOFTPLUS: return mx + tail;
    case LOG_SIGMOID: return mn - tail;
    case SILU: return x * (1 / (1 + exp(-x)));
    case RELU6: {
        double r = (x > 0 || x != x) ? x : 0;
        return (r != r || r < 6) ? r : 6;
    }
    default: return x * 0.5 * (1 + erf(x / 1.4142135623730951));
    }
}

static bool same_bits(double a, double b)
{
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

Test(ops_nn, more_activations_are_the_formulas_bit_for_bit)
{
    const double x[] = { 0, -0.0, 4.9406564584124654e-324, -1e-300, 1e-8, -0.3, 1.5, -5, 6, 7,
                         -30, 40, -800, 1000, INFINITY, -INFINITY, NAN };
    enum { NX = sizeof x / sizeof x[0] };
    weft_tensor *in = tensor(WEFT_F64, 1, (int64_t[]){ NX }, x);
    for (int k = 0; k < 5; k++) {
        weft_tensor *t = run(&(nn_case){ .op = act2_ops[k] }, in);
        const double *g = weft_tensor_data(t);
        for (int i = 0; i < NX; i++)
            cr_assert(same_bits(g[i], formula(act2_ops[k], x[i])), "op %d at %.17g: %.17g, want %.17g",
                      (int)act2_ops[k], x[i], g[i], formula(act2_ops[k], x[i]));
        weft_tensor_release(t);
    }
    weft_tensor_release(in);
}

/* The edges, f32 and f64: stable where the naive formulas overflow, NaN
 * kept, and TensorFlow's NaN for silu(-inf) and gelu_exact(-inf) (-inf
 * times 0). */
Test(ops_nn, more_activations_at_special_values)
{
    const double x[] = { 1000, -1000, INFINITY, -INFINITY, NAN, -0.0 };
    const double ln2 = 0.69314718055994531;
    const double want[5][6] = {
        { 1000, 0, INFINITY, 0, NAN, ln2 },             /* softplus */
        { 0, -1000, 0, -INFINITY, NAN, -ln2 },          /* log_sigmoid */
        { 1000, -0.0, INFINITY, NAN, NAN, -0.0 },        /* silu */
        { 6, 0, 6, 0, NAN, 0 },                          /* relu6 */
        { 1000, -0.0, INFINITY, NAN, NAN, -0.0 },        /* gelu_exact */
    };
    float xf[6];
    for (int i = 0; i < 6; i++)
        xf[i] = (float)x[i];
    weft_tensor *ins[2] = { tensor(WEFT_F64, 1, (int64_t[]){ 6 }, x),
                            tensor(WEFT_F32, 1, (int64_t[]){ 6 }, xf) };
    for (int k = 0; k < 5; k++) {
        for (int m = 0; m < 2; m++) {
            weft_tensor *t = run(&(nn_case){ .op = act2_ops[k] }, ins[m]);
            double tol = m ? TOL_F32 : TOL_F64;
            for (int i = 0; i < 6; i++) {
                double g = test_element(t, i), w = want[k][i];
                if (isnan(w))
                    cr_assert(isnan(g), "op %d at %g: %g, want NaN", (int)act2_ops[k], x[i], g);
                else if (w == 0 || isinf(w))
                    cr_assert(g == w && !!signbit(g) == !!signbit(w), "op %d at %g: %g, want %g",
                              (int)act2_ops[k], x[i], g, w);
                else
                    cr_assert(fabs(g - w) <= tol * fmax(1, fabs(w)), "op %d at %g: %.17g, want %.17g",
                              (int)act2_ops[k], x[i], g, w);
            }
            weft_tensor_release(t);
        }
    }
    weft_tensor_release(ins[0]);
    weft_tensor_release(ins[1]);
}

/* exact gelu and the tanh form differ in the fourth digit at 1.0. */
Test(ops_nn, gelu_exact_is_the_erf_form)
{
    const double x = 1.0;
    weft_tensor *in = tensor(WEFT_F64, 0, NULL, &x);
    double erf_form = 0.5 * (1 + erf(1 / sqrt(2)));
    cr_assert(fabs(ref_act(GELU, 1.0, 0) - erf_form) > 1e-4);
    check(run(&(nn_case){ .op = GELU_EXACT }, in), WEFT_F64, 0, NULL, &erf_form, "gelu_exact(1)");
    weft_tensor_release(in);
}

/* relu6 keeps integers integer, like relu; the others take floats only;
 * bool is refused by all. */
Test(ops_nn, more_activations_dtypes)
{
    const int32_t v[5] = { INT32_MIN, -1, 0, 5, 9 };
    const double w[5] = { 0, 0, 0, 5, 6 };
    weft_tensor *ti = tensor(WEFT_I32, 1, (int64_t[]){ 5 }, v);
    check(run(&(nn_case){ .op = RELU6 }, ti), WEFT_I32, 1, (int64_t[]){ 5 }, w, "relu6 i32");
    const int64_t vl[2] = { INT64_MAX, -7 };
    const double wl[2] = { 6, 0 };
    weft_tensor *tl = tensor(WEFT_I64, 1, (int64_t[]){ 2 }, vl);
    check(run(&(nn_case){ .op = RELU6 }, tl), WEFT_I64, 1, (int64_t[]){ 2 }, wl, "relu6 i64");
    weft_tensor_release(tl);
    const char *const names[5] = { "weft_softplus: a is i32[5]", "weft_log_sigmoid: a is i32[5]",
                                   "weft_silu: a is i32[5]", NULL, "weft_gelu_exact: a is i32[5]" };
    for (int k = 0; k < 5; k++) {
        if (!names[k])
            continue;
        weft_tensor_retain(ti);
        refused(&(nn_case){ .op = act2_ops[k] }, ti, WEFT_EDTYPE, names[k]);
    }
    weft_tensor_release(ti);
    const uint8_t b[2] = { 0, 1 };
    refused(&(nn_case){ .op = RELU6 }, tensor(WEFT_BOOL, 1, (int64_t[]){ 2 }, b), WEFT_EDTYPE,
            "weft_relu6: a is bool[2]");
    refused(&(nn_case){ .op = SOFTPLUS }, tensor(WEFT_BOOL, 1, (int64_t[]){ 2 }, b), WEFT_EDTYPE,
            "weft_softplus: a is bool[2]");
}

/* On weak scalars the activations give weak scalars (so f32 * relu6(7.5)
 * stays f32); relu6 of a weak integer is an integer. */
static int body_weak_act(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *user)
{
    (void)user;
    outs[0] = weft_mul(cx, args[0], weft_relu6(cx, weft_const_f64(cx, 7.5)));
    outs[1] = weft_add(cx, args[0], weft_softplus(cx, weft_const_f64(cx, 0.0)));
    outs[2] = weft_relu6(cx, weft_const_i64(cx, -3));
    outs[3] = weft_gelu_exact(cx, weft_mul(cx, args[0], weft_const_f64(cx, 2.0)));
    return weft_ctx_status(cx);
}

Test(ops_nn, more_activations_of_weak_scalars)
{
    const float xf[2] = { 1, -0.5f };
    weft_tensor *t = tensor(WEFT_F32, 1, (int64_t[]){ 2 }, xf);
    weft_arg arg = weft_arg_tensor(t);
    for (int mode = 0; mode < 2; mode++) {
        weft_function_desc d = { .name = "weakact", .body = body_weak_act, .n_args = 1,
                                 .n_outs = 4, .flags = mode ? 0 : WEFT_RUN_EAGERLY };
        weft_function *f = NULL;
        cr_assert_eq(weft_function_create(rt, &d, &f), 0);
        weft_tensor *o[4] = { NULL };
        cr_assert_eq(weft_function_call(f, &arg, 1, o, 4), 0, "%s", weft_errmsg());
        const double w0[2] = { 6, -3 }, w1[2] = { 1.6931471805599453, 0.1931471805599453 };
        const double w2 = 0;
        double w3[2];
        for (int i = 0; i < 2; i++)
            w3[i] = ref_act2(GELU_EXACT, 2 * xf[i]);
        check(o[0], WEFT_F32, 1, (int64_t[]){ 2 }, w0, "f32 * relu6(weak 7.5)");
        check(o[1], WEFT_F32, 1, (int64_t[]){ 2 }, w1, "f32 + softplus(weak 0)");
        check(o[2], WEFT_I64, 0, NULL, &w2, "relu6(weak -3)");
        check(o[3], WEFT_F32, 1, (int64_t[]){ 2 }, w3, "gelu_exact(f32 * weak 2)");
        weft_function_destroy(&f);
    }
    weft_tensor_release(t);
}
